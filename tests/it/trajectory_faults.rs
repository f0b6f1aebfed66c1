//! Faults a red team found in the trajectory expectations (issue 27,
//! items 1-5), each kept by a test through the real binary: graph names
//! read from SPARQL tokens only, whole-IRI tracing, real and past
//! known-gap dates, every corpus default checked, and header keys that
//! look like expectations, over the fixture and helpers of `trajectory.rs`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::fixture::QUESTION;
use crate::trajectory::{
    CORPUS, KEY_GRAPH, OTHER_GRAPH, call, craft, defaults, exact_answer, exits, query, read_json,
    result_path, setup,
};

/// The expectation `id` of attempt `n` as `result.json` records it.
fn expectation(d: &Path, n: u32, id: &str) -> Value {
    let result = read_json(&result_path(d));
    result["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["attempt"] == n)
        .unwrap()["expectations"][id]
        .clone()
}

/// The recorded `trajectory.first_query_hit` of attempt `n`.
fn first_query_hit(d: &Path, n: u32) -> Value {
    let result = read_json(&result_path(d));
    result["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["attempt"] == n)
        .unwrap()["trajectory"]["first_query_hit"]
        .clone()
}

fn sparql(text: &str) -> Value {
    call("query", json!({ "query_string": text }), "{\"rows\": []}")
}

/// Issue 27, item 1: `key-graphs` and the recorded
/// `trajectory.first_query_hit` read graph names from SPARQL tokens: a
/// `GRAPH <iri>` in a comment or a `FROM <iri>` in a string literal names
/// no graph, and a prefixed name after `GRAPH` resolves with its `PREFIX`.
#[test]
fn key_graphs_ignores_graph_names_in_comments_and_strings_and_resolves_prefixed_names() {
    let dir = setup();
    let d = dir.path();
    defaults(d, &[("graphs", "contract key-graphs queries=all")]);
    let answer = exact_answer(d);
    // Attempt 1: only the key's graph, other graphs mentioned in a comment
    // and in string literals.
    let noisy = format!(
        "# GRAPH <{OTHER_GRAPH}>\nSELECT * WHERE {{ GRAPH <{KEY_GRAPH}> {{ ?s ?p ?o }} \
         FILTER(?o != \"FROM <{OTHER_GRAPH}>\" && ?o != 'GRAPH <{OTHER_GRAPH}>') }} # FROM <{OTHER_GRAPH}>"
    );
    craft(d, 1, vec![sparql(&noisy)], &answer, &[]);
    // Attempt 2: another graph through a prefixed name.
    let prefixed = "PREFIX kg: <https://purl.org/okn/frink/kg/>\n\
                    SELECT * WHERE { GRAPH kg:fiokg { ?s ?p ?o } }";
    craft(d, 2, vec![sparql(prefixed)], &answer, &[]);
    // Attempt 3: the key's graph only in a comment: its first query names
    // no graph at all.
    let commented = format!("SELECT * WHERE {{ ?s ?p ?o }} # GRAPH <{KEY_GRAPH}>");
    craft(d, 3, vec![sparql(&commented)], &answer, &[]);
    exits(d, &["rescore", "runs-demo", "--force"], 0);
    assert_eq!(expectation(d, 1, "graphs")["status"], "pass");
    assert_eq!(first_query_hit(d, 1), true);
    let graphs = expectation(d, 2, "graphs");
    assert_eq!(graphs["status"], "fail", "{graphs}");
    assert!(
        graphs["detail"].as_str().unwrap().contains(OTHER_GRAPH),
        "{graphs}"
    );
    assert_eq!(first_query_hit(d, 2), false);
    assert_ne!(first_query_hit(d, 3), true);
}

/// Issue 27, item 2: `traceable` matches whole IRIs: a reply showing only
/// `.../gene/35690` does not trace `.../gene/3569`, while a reply showing
/// it JSON-escaped (`https:\/\/...`) does.
#[test]
fn traceable_matches_whole_iris_not_the_start_of_a_longer_one() {
    let dir = setup();
    let d = dir.path();
    defaults(d, &[("traceable", "contract traceable")]);
    let answer = "gene\nhttps://www.ncbi.nlm.nih.gov/gene/3569\n";
    let escaped = r#"{"gene": "https:\/\/www.ncbi.nlm.nih.gov\/gene\/3569"}"#;
    craft(
        d,
        1,
        vec![call(
            "query",
            json!({"query_string": "SELECT * {}"}),
            escaped,
        )],
        answer,
        &[],
    );
    let longer = "{\"gene\": \"https://www.ncbi.nlm.nih.gov/gene/35690\"}";
    craft(
        d,
        2,
        vec![call(
            "query",
            json!({"query_string": "SELECT * {}"}),
            longer,
        )],
        answer,
        &[],
    );
    let longer_path = "https://www.ncbi.nlm.nih.gov/gene/3569/summary and https:\\/\\/www.ncbi.nlm.nih.gov\\/gene\\/3569\\/x";
    craft(
        d,
        3,
        vec![call(
            "query",
            json!({"query_string": "SELECT * {}"}),
            longer_path,
        )],
        answer,
        &[],
    );
    exits(d, &["rescore", "runs-demo", "--force"], 0);
    assert_eq!(expectation(d, 1, "traceable")["status"], "pass");
    assert_eq!(expectation(d, 2, "traceable")["status"], "fail");
    assert_eq!(expectation(d, 3, "traceable")["status"], "fail");
}

/// Issue 27, item 3: `known_gap` must be a real calendar day, not after
/// today (UTC): `2026-02-30`, `2025-02-29` and a date years ahead are
/// refused by `corpus list` (exit 2), naming the record and line.
#[test]
fn known_gap_refuses_impossible_and_future_dates_naming_the_line() {
    let dir = setup();
    let d = dir.path();
    let record = d.join(CORPUS).join(format!("{QUESTION}.rq"));
    let original = std::fs::read_to_string(&record).unwrap();
    for (date, says) in [
        ("2026-02-30", "not a date"),
        ("2025-02-29", "not a date"),
        ("2026-04-31", "not a date"),
        ("2999-01-01", "in the future"),
    ] {
        std::fs::write(
            &record,
            format!("#+ expect.e: quality traceable known_gap={date}\n{original}"),
        )
        .unwrap();
        let text = exits(d, &["corpus", "list", "--corpus", CORPUS], 2);
        assert!(text.contains(&format!("{QUESTION}.rq:1")), "{date}: {text}");
        assert!(text.contains(says), "{date}: {text}");
    }
    // A real past date, a leap day included, reads.
    std::fs::write(
        &record,
        format!("#+ expect.e: quality traceable known_gap=2024-02-29\n{original}"),
    )
    .unwrap();
    exits(d, &["corpus", "list", "--corpus", CORPUS], 0);
}

/// Issue 27, item 4: every `[expectations]` table of `okn-benchmark.toml`
/// is checked: a key naming no folder is refused at its line with the
/// corpus folders as a hint, and a bad line under another corpus's key is
/// refused at its line too.
#[test]
fn corpus_defaults_under_a_key_naming_no_folder_or_another_corpus_are_checked() {
    let dir = setup();
    let d = dir.path();
    let toml = d.join("okn-benchmark.toml");
    std::fs::write(
        &toml,
        format!(
            "[expectations.\"{CORPUS}\"]\ntrace = \"quality traceable\"\n\n\
             [expectations.\"demo/benchmarks-nope\"]\ngraphs = \"quality traceable\"\n"
        ),
    )
    .unwrap();
    let text = exits(d, &["corpus", "list", "--corpus", CORPUS], 2);
    assert!(text.contains("okn-benchmark.toml:4"), "{text}");
    assert!(text.contains("demo/benchmarks-nope"), "{text}");
    assert!(text.contains(CORPUS), "{text}");
    // A bad line under an existing folder that is not the corpus read.
    std::fs::create_dir_all(d.join("other")).unwrap();
    std::fs::write(
        &toml,
        format!(
            "[expectations.\"{CORPUS}\"]\ntrace = \"quality traceable\"\n\n\
             [expectations.\"other\"]\nbad = \"quality max-calls\"\n"
        ),
    )
    .unwrap();
    let text = exits(d, &["corpus", "list", "--corpus", CORPUS], 2);
    assert!(text.contains("okn-benchmark.toml:5"), "{text}");
    assert!(text.contains("needs n=N"), "{text}");
    // Both fixed: read.
    std::fs::write(
        &toml,
        format!(
            "[expectations.\"{CORPUS}\"]\ntrace = \"quality traceable\"\n\n\
             [expectations.\"other\"]\nbad = \"quality max-calls n=2\"\n"
        ),
    )
    .unwrap();
    exits(d, &["corpus", "list", "--corpus", CORPUS], 0);
}

/// Issue 27, item 5: the `max-calls` detail reads "N calls, more than M",
/// and header keys that look like expectations but are not `expect.ID`
/// (`Expect.x`, `expect`, `EXPECT_x`) are refused, not kept as metadata.
#[test]
fn max_calls_detail_reads_plainly_and_misspelt_expect_keys_are_refused() {
    let dir = setup();
    let d = dir.path();
    defaults(d, &[("calls", "quality max-calls n=1")]);
    let answer = exact_answer(d);
    craft(d, 1, vec![query(KEY_GRAPH), query(KEY_GRAPH)], &answer, &[]);
    exits(d, &["rescore", "runs-demo", "--force"], 0);
    let calls = expectation(d, 1, "calls");
    let detail = calls["detail"].as_str().unwrap();
    assert!(detail.starts_with("2 calls, more than 1"), "{calls}");
    assert!(!detail.contains("call calls"), "{calls}");
    let record = d.join(CORPUS).join(format!("{QUESTION}.rq"));
    let original = std::fs::read_to_string(&record).unwrap();
    for key in ["Expect.x", "expect", "EXPECT_x", "expect."] {
        std::fs::write(&record, format!("#+ {key}: quality traceable\n{original}")).unwrap();
        let text = exits(d, &["corpus", "list", "--corpus", CORPUS], 2);
        assert!(text.contains(&format!("{QUESTION}.rq:1")), "{key}: {text}");
        assert!(text.contains("expect.ID"), "{key}: {text}");
    }
}
