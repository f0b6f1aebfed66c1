//! SPARQL solutions → CSV cells, checked against the W3C SPARQL 1.1 CSV and
//! JSON results tests (`data/w3c-sparql-results/` of the shared folder, see
//! `support::shared`; skipped where it is absent), through the real
//! `reference` command on the embedded store.

use std::path::Path;

use crate::support::shared::{self, W3C_RESULTS};
use crate::support::{okn_in, work_dir};
use okn_benchmark::sparql::{canonical_blank_nodes, parse_json_results};
use okn_benchmark::table::Table;

/// Builds a one-record corpus around `query_file` with `data` as the
/// endpoint, runs `reference`, and returns the ground-truth table.
fn ground_truth(query_file: &Path, data: &Path) -> Table {
    let query = std::fs::read_to_string(query_file).unwrap();
    let record = format!("#+ summary: W3C test query.\n#+ tags:\n#+   - w3c\n\n{query}\n");
    let data_text = std::fs::read_to_string(data).unwrap();
    let dir = work_dir(&[
        ("corpus/w3c.rq", &record),
        ("data/data.ttl", &data_text),
        ("data/global.graph", "http://example.org/graph\n"),
    ]);
    let out = okn_in(dir.path())
        .args(["reference", "--corpus", "corpus", "--endpoint", "data"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::support::stderr(&out)
    );
    let csv = std::fs::read(dir.path().join("corpus/ground-truth/w3c.csv")).unwrap();
    Table::from_csv(&csv).unwrap()
}

fn expected_csv(path: &Path) -> Table {
    let mut table = Table::from_csv(&std::fs::read(path).unwrap()).unwrap();
    canonical_blank_nodes(&mut table);
    table
}

#[test]
fn csv_results_match_the_w3c_expected_files() {
    let Some(results) = shared::folder(&W3C_RESULTS) else {
        return;
    };
    let dir = results.join("csv-tsv-res");
    // csvtsv03 runs csvtsv01.rq against data2.ttl (per the manifest).
    for (query, data, expected) in [
        ("csvtsv01.rq", "data.ttl", "csvtsv01.csv"),
        ("csvtsv02.rq", "data.ttl", "csvtsv02.csv"),
        ("csvtsv01.rq", "data2.ttl", "csvtsv03.csv"),
    ] {
        let got = ground_truth(&dir.join(query), &dir.join(data));
        let mut want = expected_csv(&dir.join(expected));
        if expected == "csvtsv03.csv" {
            engine_canonical_double(&mut want);
        }
        assert_eq!(got, want, "{expected}");
    }
}

/// The one known deviation, and it is the engine's, not the CSV mapping's:
/// Oxigraph stores `"1.0E6"^^xsd:double` as a number and prints it back as
/// `1000000`, so the lexical form the W3C file shows is gone before any
/// cell is written. The scorer reads both as one number (checked below).
fn engine_canonical_double(table: &mut Table) {
    let row = table
        .rows
        .iter_mut()
        .find(|r| r[0] == "http://example.org/s6")
        .unwrap();
    assert_eq!(row[2], "1.0E6");
    row[2] = "1000000".into();
}

#[test]
fn written_ground_truth_is_byte_identical_to_the_w3c_csv_where_no_blank_node_occurs() {
    let Some(results) = shared::folder(&W3C_RESULTS) else {
        return;
    };
    let dir = results.join("csv-tsv-res");
    let got = ground_truth(&dir.join("csvtsv01.rq"), &dir.join("data2.ttl"));
    let want = std::fs::read_to_string(dir.join("csvtsv03.csv")).unwrap();
    assert_eq!(got.to_csv(), want.replace(",1.0E6\n", ",1000000\n"));
    // The W3C file, submitted as an answer, is exact against it in both tiers.
    let w3c = Table::from_csv(want.as_bytes()).unwrap();
    let options = okn_benchmark::score::ScoreOptions {
        ordered: true,
        ..Default::default()
    };
    let s = okn_benchmark::score::score(&got, &w3c, &options);
    assert!(
        s.exact && s.strict_exact && s.ordered == Some(true),
        "{s:?}"
    );
}

#[test]
fn json_results_parse_to_the_same_table_the_store_produces() {
    let Some(results) = shared::folder(&W3C_RESULTS) else {
        return;
    };
    let dir = results.join("json-res");
    for n in 1..=4 {
        let srj = std::fs::read(dir.join(format!("jsonres0{n}.srj"))).unwrap();
        let mut parsed = parse_json_results(&srj).unwrap();
        canonical_blank_nodes(&mut parsed);
        let got = ground_truth(&dir.join(format!("jsonres0{n}.rq")), &dir.join("data.ttl"));
        assert_eq!(got, parsed, "jsonres0{n}");
        if n >= 3 {
            assert_eq!(parsed.columns, ["ask"]);
            assert_eq!(parsed.rows, vec![vec![(n == 3).to_string()]]);
        }
    }
}
