//! Scoring throughput: a 100,000-row answer against a 100,000-row answer
//! key with IRIs and decimals, reported in rows per second (criterion
//! `Throughput::Elements` over the answer's rows).
//!
//! Run: `cargo bench --bench score`. Figures go in docs/PERFORMANCE.md.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use okn_benchmark::score::{ScoreOptions, score};
use okn_benchmark::table::Table;

const ROWS: usize = 100_000;

/// A deterministic key: place IRI, gene IRI from another namespace, a label,
/// a decimal with six significant figures, an integer count.
/// (Rows are generated from a fixed xorshift seed: same table every run.)
fn key() -> Table {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    Table {
        columns: ["place", "gene", "label", "prevalence", "count"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        rows: (0..ROWS)
            .map(|i| {
                let r = next();
                vec![
                    format!("https://purl.org/okn/frink/kg/spoke-okn/place/P{i:06}"),
                    format!("http://purl.obolibrary.org/obo/NCBIGene_{}", r % 50_000),
                    format!("Place {i}"),
                    // Decimals spaced 0.11% apart (more than the 5e-4 snapping
                    // tolerance, so the closeness guard keeps snapping on).
                    format!(
                        "{:.5e}",
                        0.001 * 1.0011f64.powi(((i * 7_919) % ROWS) as i32)
                    ),
                    (r % 10_000).to_string(),
                ]
            })
            .collect(),
    }
}

/// What a correct agent might submit: rows reversed, columns renamed and
/// reordered, IRIs as local names in one column, decimals at 5 figures.
fn answer(key: &Table) -> Table {
    Table {
        columns: ["n", "p", "name", "g", "place_iri"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        rows: key
            .rows
            .iter()
            .rev()
            .map(|r| {
                let value: f64 = r[3].parse().unwrap();
                vec![
                    r[4].clone(),
                    format!("{value:.5e}"),
                    r[2].clone(),
                    r[1].rsplit('/').next().unwrap().to_string(),
                    r[0].clone(),
                ]
            })
            .collect(),
    }
}

fn bench(c: &mut Criterion) {
    let key = key();
    let answer = answer(&key);
    let options = ScoreOptions::default();
    let check = score(&key, &answer, &options);
    assert!(
        check.exact,
        "benchmark answer must be exact: {:?}",
        check.notes
    );

    let mut group = c.benchmark_group("score");
    group.sample_size(10);
    group.throughput(Throughput::Elements(ROWS as u64));
    group.bench_function("100k rows, IRIs and decimals, sorted-tuple fallback", |b| {
        b.iter(|| score(&key, &answer, &options))
    });
    let same_names = Table {
        columns: key.columns.clone(),
        rows: key.rows.iter().rev().cloned().collect(),
    };
    group.bench_function("100k rows, IRIs and decimals, matched by name", |b| {
        b.iter(|| score(&key, &same_names, &options))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
