//! Faults a red team found in the trajectory expectations (issue 27,
//! items 1-5), each kept by a test through the real binary: graph names
//! read from SPARQL tokens only, whole-IRI tracing, real and past
//! known-gap dates, every corpus default checked, and header keys that
//! look like expectations. Helpers are copied from `trajectory.rs`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::fixture::{CONDITION, QUESTION, fixture};
use crate::support::{okn_in, repo, stderr, stdout};

/// The corpus the fixture's root was recorded from, as its settings name
/// it (relative to the work folder).
const CORPUS: &str = "demo/benchmarks-cross";

/// The graphs [`QUESTION`]'s answer key names.
const KEY_GRAPH: &str = "https://purl.org/okn/frink/kg/spoke-okn";
const OTHER_GRAPH: &str = "https://purl.org/okn/frink/kg/fiokg";

/// The fixture, with the corpus its root was recorded from beside it (its
/// records only: `rescore` reads their expectations), made independent of
/// how the recorded agent happened to work: the statuses the repository's
/// own expectations gave are taken out of every `result.json` (a root
/// recorded before any expectation), and each attempt of [`QUESTION`]
/// under [`CONDITION`] is left with the oracle's trajectory, the answer
/// key's one query (the last the agent made) and its recorded answer, so
/// the tests below craft every other call they judge.
fn setup() -> tempfile::TempDir {
    let dir = fixture();
    let d = dir.path();
    let to = d.join(CORPUS);
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(repo().join(CORPUS)).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rq") {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
    for question in std::fs::read_dir(d.join("runs-demo")).unwrap() {
        let question = question.unwrap().path();
        let Ok(conditions) = std::fs::read_dir(&question) else {
            continue;
        };
        for condition in conditions {
            let path = condition.unwrap().path().join("result.json");
            if !path.is_file() || question.ends_with("conditions") {
                continue;
            }
            let mut result = read_json(&path);
            result.as_object_mut().unwrap().remove("expectations");
            for attempt in result["attempts"].as_array_mut().unwrap() {
                attempt.as_object_mut().unwrap().remove("expectations");
            }
            write_json(&path, &result);
        }
    }
    for n in 1..=3 {
        let dir = attempt_dir(d, n);
        let recorded = read_json(&dir.join("calls.json"));
        let key_query = recorded["calls"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|c| c["tool"] == "query")
            .unwrap()
            .clone();
        let answer = std::fs::read_to_string(dir.join("answer.csv")).unwrap();
        craft(d, n, vec![key_query], &answer, &[]);
    }
    exits(d, &["rescore", "runs-demo", "--force"], 0);
    dir
}

/// Writes `okn-benchmark.toml` in `d` giving the corpus these defaults.
fn defaults(d: &Path, lines: &[(&str, &str)]) {
    let mut text = format!("[expectations.\"{CORPUS}\"]\n");
    for (id, line) in lines {
        text.push_str(&format!("{id} = \"{line}\"\n"));
    }
    std::fs::write(d.join("okn-benchmark.toml"), text).unwrap();
}

/// `okn-benchmark ARGS` in `d`: its exit code must be `code`; stdout and
/// stderr together.
fn exits(d: &Path, args: &[&str], code: i32) -> String {
    let o = okn_in(d).args(args).output().unwrap();
    let text = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(code), "{args:?}:\n{text}");
    text
}

fn attempt_dir(d: &Path, n: u32) -> PathBuf {
    d.join(format!(
        "runs-demo/{QUESTION}_results/{CONDITION}/attempt-{n}"
    ))
}

fn result_path(d: &Path) -> PathBuf {
    d.join(format!(
        "runs-demo/{QUESTION}_results/{CONDITION}/result.json"
    ))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
}

/// One call as the proxy logs it: ok, forwarded, with `reply` as its
/// whole reply.
fn call(tool: &str, arguments: Value, reply: &str) -> Value {
    json!({
        "index": 0, "tool": tool, "arguments": arguments, "start_s": 0.0,
        "duration_s": 0.001, "ok": true, "soft_error": null, "refused": false,
        "forwarded": tool != "submit_csv", "error": null,
        "result_chars": reply.chars().count(), "result_preview": reply,
    })
}

fn query(graph: &str) -> Value {
    call(
        "query",
        json!({"query_string": format!("SELECT * WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}")}),
        "{\"rows\": []}",
    )
}

/// The fixture's recorded answer of attempt 1 (exact).
fn exact_answer(d: &Path) -> String {
    std::fs::read_to_string(attempt_dir(d, 1).join("answer.csv")).unwrap()
}

/// Rewrites attempt `n` as one whose calls were `calls` (indexed here)
/// ending in a `submit_csv` of `answer`, under a condition that withheld
/// `withheld`: `calls.json`, `metrics.json`'s tallies and `answer.csv`
/// together.
fn craft(d: &Path, n: u32, mut calls: Vec<Value>, answer: &str, withheld: &[&str]) {
    calls.push(call("submit_csv", json!({"csv": answer}), "saved"));
    for (i, c) in calls.iter_mut().enumerate() {
        c["index"] = (i + 1).into();
    }
    let dir = attempt_dir(d, n);
    write_json(
        &dir.join("calls.json"),
        &json!({"format": 2, "calls": calls}),
    );
    let records: Vec<okn_benchmark::layout::CallRecord> =
        serde_json::from_value(Value::Array(calls)).unwrap();
    let tallies = serde_json::to_value(okn_benchmark::mcp::calllog::tallies(&records)).unwrap();
    let path = dir.join("metrics.json");
    let mut metrics = read_json(&path);
    for member in [
        "calls",
        "unreadable_requests",
        "tools_called",
        "refused",
        "server_s",
        "reply_chars",
        "upstream_soft_errors",
        "queries_ok",
        "queries_errored",
    ] {
        match &tallies[member] {
            Value::Null => {
                metrics.as_object_mut().unwrap().remove(member);
            }
            value => metrics[member] = value.clone(),
        }
    }
    metrics["withheld"] = json!(withheld);
    metrics["submissions"] = 1.into();
    metrics["submitted_rows"] = (answer.lines().count() - 1).into();
    write_json(&path, &metrics);
    std::fs::write(dir.join("answer.csv"), answer).unwrap();
}

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
