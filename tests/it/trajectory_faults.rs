//! Faults a red team found in the trajectory expectations (issue 27),
//! each kept by a test through the real binary: graph names read from
//! SPARQL tokens only, whole-IRI tracing, real and past known-gap dates,
//! every corpus default checked, header keys that look like expectations,
//! a recorded list of expectations checked against its corpus, and
//! `compare` over expectations the two roots define otherwise; over the
//! fixture and helpers of `trajectory.rs`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::fixture::QUESTION;
use crate::trajectory::{
    CORPUS, KEY_GRAPH, OTHER_GRAPH, call, candidate_querying_twice, craft, defaults, exact_answer,
    exits, query, read_json, result_path, setup, write_json,
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
    // A query that names no graph: the fact is not recorded at all.
    assert_eq!(first_query_hit(d, 3), Value::Null);
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

/// Issue 27, red team: the list of expectations a `result.json` records
/// was taken as written, so one edited by hand (a known gap added with its
/// statuses made to match, a contract made a quality, the list deleted
/// with its statuses) loaded, was published, and silenced `compare
/// --fail-on-regression`. It is checked against the corpus the condition
/// was recorded from: refused by name, with `rescore` as the way back.
#[test]
fn a_recorded_list_of_expectations_edited_by_hand_is_refused_against_the_corpus() {
    let dir = setup();
    let d = dir.path();
    defaults(d, &[("one-query", "contract max-queries n=1")]);
    exits(d, &["rescore", "runs-demo"], 0);
    let path = result_path(d);
    let pristine = std::fs::read(&path).unwrap();
    let known_gap = |r: &mut Value| {
        r["expectations"][0]["known_gap"] = json!({"found": "2020-01-01"});
        for a in r["attempts"].as_array_mut().unwrap() {
            a["expectations"]["one-query"]["status"] = "known_gap_fixed".into();
        }
    };
    let quality = |r: &mut Value| r["expectations"][0]["type"] = "quality".into();
    let deleted = |r: &mut Value| {
        r.as_object_mut().unwrap().remove("expectations");
        for a in r["attempts"].as_array_mut().unwrap() {
            a.as_object_mut().unwrap().remove("expectations");
        }
    };
    type Edit<'a> = (&'a str, &'a dyn Fn(&mut Value), &'a str);
    let edits: [Edit; 3] = [
        (
            "known gap",
            &known_gap,
            "`one-query`: known_gap {\"found\":\"2020-01-01\"} in result.json, (none) in the corpus",
        ),
        (
            "type",
            &quality,
            "`one-query`: type quality in result.json, contract in the corpus",
        ),
        ("deleted", &deleted, "`one-query` only in the corpus"),
    ];
    for (what, edit, said) in edits {
        std::fs::write(&path, &pristine).unwrap();
        let mut result = read_json(&path);
        edit(&mut result);
        write_json(&path, &result);
        for args in [&["report", "runs-demo"][..], &["build", "--check"][..]] {
            let text = exits(d, args, 2);
            assert!(text.contains(said), "{what}, {args:?}: {text}");
            assert!(
                text.contains("not the ones its corpus demo/benchmarks-cross gives now"),
                "{what}: {text}"
            );
            assert!(text.contains("okn-benchmark rescore"), "{what}: {text}");
        }
        // `rescore` applies the corpus's list again, no model called.
        exits(d, &["rescore", "runs-demo"], 0);
        assert_eq!(std::fs::read(&path).unwrap(), pristine, "{what}");
        exits(d, &["report", "runs-demo"], 0);
    }
}

/// Issue 27, red team: where the corpus cannot be read, the recorded list
/// cannot be checked, and the report says so beside the expectations
/// rather than publishing them as checked; in a frozen root, which nothing
/// may rewrite, a list its corpus no longer gives stands and is said to.
#[test]
fn expectations_that_cannot_be_checked_are_said_to_be_unchecked() {
    let dir = setup();
    let d = dir.path();
    defaults(d, &[("one-query", "contract max-queries n=1")]);
    exits(d, &["rescore", "runs-demo"], 0);
    let before = exits(d, &["report", "runs-demo"], 0);
    assert!(!before.contains("not checked"), "{before}");
    std::fs::rename(d.join(CORPUS), d.join("corpus-elsewhere")).unwrap();
    let text = exits(d, &["report", "runs-demo"], 0);
    assert!(
        text.contains(
            "Every condition: its trajectory expectations are as result.json records them, not \
             checked against a corpus: the corpus it was recorded from, demo/benchmarks-cross, \
             is not a folder from here."
        ),
        "{text}"
    );
    // `build` says so too, and writes nothing of it into a page: a page's
    // bytes must not depend on where the tool runs.
    let text = exits(d, &["build"], 0);
    assert!(
        crate::support::flat(&text).contains(
            "note: runs-demo: Every condition: its trajectory expectations are as result.json \
             records them, not checked against a corpus"
        ),
        "{text}"
    );
    let readme = std::fs::read_to_string(d.join("runs-demo/README.md")).unwrap();
    assert!(!readme.contains("not checked"), "{readme}");
    std::fs::rename(d.join("corpus-elsewhere"), d.join(CORPUS)).unwrap();
    exits(
        d,
        &[
            "freeze",
            "runs-demo",
            "--reason",
            "published with the paper",
        ],
        0,
    );
    defaults(
        d,
        &[("one-query", "contract max-queries n=1 known_gap=2026-11-30")],
    );
    let text = exits(d, &["report", "runs-demo"], 0);
    assert!(
        text.contains(
            "the root is frozen, so its trajectory expectations stay as they were judged"
        ),
        "{text}"
    );
    assert!(
        text.contains("`one-query`: known_gap (none) in result.json"),
        "{text}"
    );
}

/// Issue 27, red team: `compare` read an expectation the two roots define
/// otherwise as a flip of one measurement (`max-queries n=10` against
/// `n=1` "started to fail"), and a known gap added only in the candidate
/// turned a failing contract into "known gap reopened", which passed
/// `--fail-on-regression`. Defined otherwise, it is not comparable and
/// moves no class; a contract so redefined that the candidate does not
/// hold fails the gate, which cannot judge it.
#[test]
fn compare_does_not_compare_an_expectation_the_roots_define_otherwise() {
    let dir = setup();
    let d = dir.path();
    defaults(d, &[("one-query", "contract max-queries n=1")]);
    exits(d, &["rescore", "runs-demo"], 0);
    candidate_querying_twice(d);
    exits(d, &["freeze", "runs-demo", "--reason", "the baseline"], 0);
    // The candidate's corpus gives the contract a known gap: attempt 1
    // (two queries) leaves it open.
    defaults(
        d,
        &[("one-query", "contract max-queries n=1 known_gap=2026-11-30")],
    );
    exits(d, &["rescore", "runs-candidate", "--force"], 0);
    let candidate = read_json(&d.join(format!(
        "runs-candidate/{QUESTION}_results/{}/result.json",
        crate::support::fixture::CONDITION
    )));
    assert_eq!(
        candidate["attempts"][0]["expectations"]["one-query"]["status"],
        "known_gap_open"
    );
    let text = exits(d, &["compare", "runs-demo", "runs-candidate"], 0);
    assert!(text.contains("not comparable: defined otherwise"), "{text}");
    assert!(!text.contains("known gap reopened"), "{text}");
    let text = exits(
        d,
        &[
            "compare",
            "runs-demo",
            "runs-candidate",
            "--fail-on-regression",
        ],
        1,
    );
    let text = crate::support::flat(&text);
    assert!(text.contains("cannot be judged"), "{text}");
    assert!(text.contains(&format!("one-query of {QUESTION}")), "{text}");
    // Loosened in the candidate so that it holds: not comparable still,
    // never "started to fail", and nothing for the gate.
    defaults(d, &[("one-query", "contract max-queries n=10")]);
    exits(d, &["rescore", "runs-candidate"], 0);
    let text = exits(
        d,
        &[
            "compare",
            "runs-demo",
            "runs-candidate",
            "--fail-on-regression",
        ],
        0,
    );
    assert!(text.contains("not comparable: defined otherwise"), "{text}");
    assert!(
        text.contains("n 1 in the baseline, 10 in the candidate"),
        "{text}"
    );
    assert!(!text.contains("started to fail"), "{text}");
}

/// Issue 27, red team: a `tool-order` failure named no call, so the site's
/// timeline marked none, even where a call to the missing tool came too
/// early; that call is the failing one now, and where the tool was never
/// called, no call is blamed.
#[test]
fn a_tool_order_failure_names_the_call_that_came_too_early() {
    let dir = setup();
    let d = dir.path();
    defaults(
        d,
        &[("order", "quality tool-order tools=list_graphs,query")],
    );
    let answer = exact_answer(d);
    let listing = || call("list_graphs", json!({}), "spoke-okn");
    craft(d, 1, vec![query(KEY_GRAPH), listing()], &answer, &[]);
    craft(d, 2, vec![listing()], &answer, &[]);
    exits(d, &["rescore", "runs-demo", "--force"], 0);
    let early = expectation(d, 1, "order");
    assert_eq!(early["status"], "fail", "{early}");
    assert_eq!(early["call"], 1, "{early}");
    assert_eq!(
        early["detail"], "query was called (call 1) only before list_graphs",
        "{early}"
    );
    let never = expectation(d, 2, "order");
    assert_eq!(never["status"], "fail", "{never}");
    assert_eq!(never.get("call"), None, "{never}");
    assert_eq!(
        never["detail"], "no call to query after list_graphs",
        "{never}"
    );
}
