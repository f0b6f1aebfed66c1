//! The floor of scoring, for `scripts/bench-score` (docs/PERFORMANCE.md,
//! "Scoring a large answer"): the peer's sorted-tuple rule written plainly
//! in Rust, one thread. Each data row of both CSV files (split on commas
//! and line ends, no quoting, no canonicalization, no IRI or decimal rule)
//! becomes the hash of its sorted cell hashes; the key's hashes are
//! counted and the answer's matched against the counts.
//!
//! ```sh
//! cargo build --release --example sorted_tuple_floor
//! target/release/examples/sorted_tuple_floor REFERENCE.csv ANSWER.csv
//! ```
//!
//! Prints the matched row count and the seconds spent reading and
//! hashing. Not a scorer (it would call `a,b` and `"a",b` different): it
//! shows what reading the pair and hashing every row costs, so that the
//! `score` figures can be read against it.

use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};
use std::process::ExitCode;

/// One hash per data row (the header skipped): the hash of the row's
/// cell hashes, sorted.
fn rows(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        let mut cells: Vec<u64> = line
            .split(',')
            .map(|cell| {
                let mut h = FxHasher::default();
                cell.hash(&mut h);
                h.finish()
            })
            .collect();
        cells.sort_unstable();
        let mut h = FxHasher::default();
        cells.hash(&mut h);
        out.push(h.finish());
    }
    out
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let [_, key, answer] = args.as_slice() else {
        eprintln!("usage: sorted_tuple_floor REFERENCE.csv ANSWER.csv");
        return ExitCode::from(2);
    };
    let start = std::time::Instant::now();
    let (key, answer) = match (
        std::fs::read_to_string(key),
        std::fs::read_to_string(answer),
    ) {
        (Ok(k), Ok(a)) => (k, a),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("sorted_tuple_floor: {e}");
            return ExitCode::from(2);
        }
    };
    let read = start.elapsed();
    let (key, answer) = (rows(&key), rows(&answer));
    let mut counts: FxHashMap<u64, u32> = FxHashMap::default();
    for h in &key {
        *counts.entry(*h).or_default() += 1;
    }
    let mut matched = 0usize;
    for h in &answer {
        if let Some(n) = counts.get_mut(h).filter(|n| **n > 0) {
            *n -= 1;
            matched += 1;
        }
    }
    println!(
        "{{\"matched_rows\": {matched}, \"key_rows\": {}, \"answer_rows\": {}, \"read_s\": {:.4}, \"total_s\": {:.4}}}",
        key.len(),
        answer.len(),
        read.as_secs_f64(),
        start.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}
