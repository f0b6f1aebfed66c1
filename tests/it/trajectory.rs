//! Trajectory expectations (issue 27), through the real binary: typed
//! checks on how an agent reached its answer, read from a record's
//! `#+ expect.ID:` lines and a corpus's defaults in `okn-benchmark.toml`,
//! judged from `calls.json` into `result.json`, derived again on load,
//! applied by `rescore`, refused by `corpus list` and `selfcheck` when
//! they do not fit, and compared by `compare`.
//!
//! The attempts judged are crafted: a copy of a recorded demo root (the
//! `build` fixture) whose attempts' `calls.json`, `metrics.json` and
//! `answer.csv` are rewritten together, so each file agrees with the
//! others as a proxy would have written them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::fixture::{CONDITION, QUESTION, fixture};
use crate::support::{okn_in, repo, stderr, stdout};

/// The corpus the fixture's root was recorded from, as its settings name
/// it (relative to the work folder).
pub(crate) const CORPUS: &str = "demo/benchmarks-cross";

/// The graphs [`QUESTION`]'s answer key names.
pub(crate) const KEY_GRAPH: &str = "https://purl.org/okn/frink/kg/spoke-okn";
pub(crate) const OTHER_GRAPH: &str = "https://purl.org/okn/frink/kg/fiokg";

/// The fixture, with the corpus its root was recorded from beside it (its
/// records only: `rescore` reads their expectations), made independent of
/// how the recorded agent happened to work: the statuses the repository's
/// own expectations gave are taken out of every `result.json` (a root
/// recorded before any expectation), and each attempt of [`QUESTION`]
/// under [`CONDITION`] is left with the oracle's trajectory, the answer
/// key's one query (the last the agent made) and its recorded answer, so
/// the tests below craft every other call they judge.
pub(crate) fn setup() -> tempfile::TempDir {
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
pub(crate) fn defaults(d: &Path, lines: &[(&str, &str)]) {
    let mut text = format!("[expectations.\"{CORPUS}\"]\n");
    for (id, line) in lines {
        text.push_str(&format!("{id} = \"{line}\"\n"));
    }
    std::fs::write(d.join("okn-benchmark.toml"), text).unwrap();
}

/// `okn-benchmark ARGS` in `d`: its exit code must be `code`; stdout and
/// stderr together.
pub(crate) fn exits(d: &Path, args: &[&str], code: i32) -> String {
    let o = okn_in(d).args(args).output().unwrap();
    let text = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(code), "{args:?}:\n{text}");
    text
}

pub(crate) fn attempt_dir(d: &Path, n: u32) -> PathBuf {
    d.join(format!(
        "runs-demo/{QUESTION}_results/{CONDITION}/attempt-{n}"
    ))
}

pub(crate) fn result_path(d: &Path) -> PathBuf {
    d.join(format!(
        "runs-demo/{QUESTION}_results/{CONDITION}/result.json"
    ))
}

pub(crate) fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

pub(crate) fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
}

/// One call as the proxy logs it: ok, forwarded, with `reply` as its
/// whole reply.
pub(crate) fn call(tool: &str, arguments: Value, reply: &str) -> Value {
    json!({
        "index": 0, "tool": tool, "arguments": arguments, "start_s": 0.0,
        "duration_s": 0.001, "ok": true, "soft_error": null, "refused": false,
        "forwarded": tool != "submit_csv", "error": null,
        "result_chars": reply.chars().count(), "result_preview": reply,
    })
}

pub(crate) fn query(graph: &str) -> Value {
    call(
        "query",
        json!({"query_string": format!("SELECT * WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}")}),
        "{\"rows\": []}",
    )
}

/// The fixture's recorded answer of attempt 1 (exact).
pub(crate) fn exact_answer(d: &Path) -> String {
    std::fs::read_to_string(attempt_dir(d, 1).join("answer.csv")).unwrap()
}

/// Rewrites attempt `n` as one whose calls were `calls` (indexed here)
/// ending in a `submit_csv` of `answer`, under a condition that withheld
/// `withheld`: `calls.json`, `metrics.json`'s tallies and `answer.csv`
/// together.
pub(crate) fn craft(d: &Path, n: u32, mut calls: Vec<Value>, answer: &str, withheld: &[&str]) {
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

/// Each expectation's status for attempt `n`, as `result.json` records it.
fn statuses(d: &Path, n: u32) -> BTreeMap<String, String> {
    let result = read_json(&result_path(d));
    let attempt = result["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["attempt"] == n)
        .unwrap()
        .clone();
    attempt["expectations"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v["status"].as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// The terminal's tables as `report` and `compare` print them within 100
/// columns (issue 26, section 3): a table too wide is printed as records,
/// a line indented two spaces naming the row and its cells on lines
/// indented further. Each record joined into one line; lines of a table
/// that fits come out as they are.
fn printed_records(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with("    ")
            && let Some(last) = out.last_mut()
        {
            last.push(' ');
            last.push_str(line.trim());
        } else {
            out.push(line.to_string());
        }
    }
    out
}

/// Over every question's attempts under [`CONDITION`], as `result.json`
/// records them: how many held expectation `id` (pass or known gap fixed)
/// and how many it applied to.
fn tally(d: &Path, id: &str) -> (usize, usize) {
    let (mut held, mut applied) = (0, 0);
    for question in std::fs::read_dir(d.join("runs-demo")).unwrap() {
        let path = question.unwrap().path().join(CONDITION).join("result.json");
        if !path.is_file() {
            continue;
        }
        for attempt in read_json(&path)["attempts"].as_array().unwrap() {
            match attempt["expectations"][id]["status"].as_str() {
                Some("pass" | "known_gap_fixed") => (held, applied) = (held + 1, applied + 1),
                Some("fail" | "known_gap_open") => applied += 1,
                _ => {}
            }
        }
    }
    (held, applied)
}

/// One expectation per check, each of which attempt 1 below passes and
/// attempt 2 fails.
const EVERY_CHECK: [(&str, &str); 9] = [
    ("graphs", "contract key-graphs queries=all"),
    ("schema", "quality tool-used tool=get_schema"),
    ("no-lookup", "quality tool-unused tool=lookup_uri"),
    ("discovery", "quality discovery-first"),
    (
        "order",
        "quality tool-order tools=list_graphs,get_schema,query",
    ),
    ("calls", "quality max-calls n=3"),
    ("queries", "quality max-queries n=1"),
    ("traceable", "contract traceable"),
    ("withheld", "contract withheld-unattempted"),
];

/// Issue 27, section 1 ("Done when": each check passing and failing on a
/// crafted `calls.json`): every check is judged from the calls alone,
/// pass on a trajectory that keeps it and fail on one that does not, with
/// the failing call named; and `absence-after-query` on empty answers.
#[test]
fn each_check_passes_and_fails_on_a_crafted_calls_json() {
    let dir = setup();
    let d = dir.path();
    defaults(d, &EVERY_CHECK);
    let answer = exact_answer(d);
    // Attempt 1: lists, reads the schema, queries the key's graph once
    // (its reply holds every IRI it submits), submits.
    let mut answering = query(KEY_GRAPH);
    answering["result_preview"] = answer.clone().into();
    answering["result_chars"] = answer.chars().count().into();
    craft(
        d,
        1,
        vec![
            call("list_graphs", json!({}), "spoke-okn spoke-genelab"),
            call("get_schema", json!({"graph": "spoke-okn"}), "classes"),
            answering,
        ],
        &answer,
        &["lookup_uri"],
    );
    // Attempt 2: queries another graph first, then the key's, tries the
    // withheld lookup_uri (refused), submits IRIs no reply showed.
    let mut refused = call("lookup_uri", json!({"uri": "x"}), "");
    refused["refused"] = true.into();
    refused["forwarded"] = false.into();
    refused["ok"] = false.into();
    refused["error"] = "withheld".into();
    craft(
        d,
        2,
        vec![
            query(OTHER_GRAPH),
            query(KEY_GRAPH),
            refused,
            query(KEY_GRAPH),
        ],
        &answer,
        &["lookup_uri"],
    );
    // Expectations added since are judged, not listed as moved.
    let text = exits(d, &["rescore", "runs-demo", "--force"], 0);
    assert!(!text.contains("expectation  "), "{text}");
    let pass: BTreeMap<String, String> = EVERY_CHECK
        .iter()
        .map(|(id, _)| (id.to_string(), "pass".to_string()))
        .collect();
    assert_eq!(statuses(d, 1), pass);
    let fail: BTreeMap<String, String> = EVERY_CHECK
        .iter()
        .map(|(id, _)| (id.to_string(), "fail".to_string()))
        .collect();
    assert_eq!(statuses(d, 2), fail);
    // The failing call is named: the first query, on another graph.
    let result = read_json(&result_path(d));
    let graphs = &result["attempts"][1]["expectations"]["graphs"];
    assert_eq!(graphs["call"], 1, "{graphs}");
    assert!(
        graphs["detail"].as_str().unwrap().contains(OTHER_GRAPH),
        "{graphs}"
    );
    assert_eq!(result["attempts"][1]["expectations"]["withheld"]["call"], 3);
    // Attempt 3, untouched (an oracle's single query, nothing withheld):
    // the withheld check does not apply.
    assert_eq!(statuses(d, 3)["withheld"], "not_applicable");
    // The answers were exact throughout: the score never moved.
    assert_eq!(result["attempts"][1]["exact"], true);

    // An empty answer: after a query that ran clean, it passes; with only
    // a query that failed, it fails.
    defaults(d, &[("absence", "contract absence-after-query")]);
    let header = format!("{}\n", answer.lines().next().unwrap());
    craft(d, 1, vec![query(KEY_GRAPH)], &header, &[]);
    let mut failed = query(KEY_GRAPH);
    failed["ok"] = false.into();
    failed["error"] = "syntax error".into();
    craft(d, 2, vec![failed], &header, &[]);
    exits(d, &["rescore", "runs-demo", "--force"], 0);
    assert_eq!(statuses(d, 1)["absence"], "pass");
    assert_eq!(statuses(d, 2)["absence"], "fail");
    // A non-empty answer gives it nothing to judge.
    assert_eq!(statuses(d, 3)["absence"], "not_applicable");
    // Published beside the rates, never mixed into them.
    exits(d, &["build"], 0);
}

/// Issue 27, section 2 ("Done when": an expectation edited and applied by
/// `rescore`; a known gap reported fixed): editing a record's
/// `#+ expect.` line and re-scoring applies it without a model, the
/// verdicts untouched; a known gap that holds is reported fixed.
#[test]
fn an_expectation_edited_in_the_record_is_applied_by_rescore_and_a_known_gap_is_reported_fixed() {
    let dir = setup();
    let d = dir.path();
    let record = d.join(CORPUS).join(format!("{QUESTION}.rq"));
    let original = std::fs::read_to_string(&record).unwrap();
    let with = |line: &str| format!("#+ expect.calls: {line}\n{original}");
    std::fs::write(&record, with("quality max-calls n=0")).unwrap();
    // A check that could never pass is refused, naming the record and line.
    let text = exits(d, &["corpus", "list", "--corpus", CORPUS], 2);
    assert!(text.contains(&format!("{QUESTION}.rq:1")), "{text}");
    assert!(text.contains("n=0"), "{text}");
    std::fs::write(&record, with("quality max-calls n=1 known_gap=2026-11-30")).unwrap();
    let before = read_json(&result_path(d));
    exits(d, &["rescore", "runs-demo"], 0);
    // The oracle's one query: within one call, so the gap is fixed.
    for n in 1..=3 {
        assert_eq!(statuses(d, n)["calls"], "known_gap_fixed", "attempt {n}");
    }
    let after = read_json(&result_path(d));
    assert_eq!(after["expectations"][0]["known_gap"]["found"], "2026-11-30");
    // Reported as fixed where it is shown: every attempt of the root ran
    // one query.
    let text = exits(d, &["report", "runs-demo"], 0);
    let row = printed_records(&text)
        .into_iter()
        .find(|l| l.contains("KG named") && l.contains("max-calls") && !l.contains("without"))
        .unwrap_or_else(|| panic!("no row for the expectation:\n{text}"));
    assert!(
        row.contains("3 of 3 attempts (known gap fixed in 3, open in 0)"),
        "{row}"
    );
    for (a, b) in before["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .zip(after["attempts"].as_array().unwrap())
    {
        assert_eq!(a["exact"], b["exact"]);
        assert_eq!(a["f1"], b["f1"]);
    }
    // Edited to a stricter line and applied again, without --force.
    std::fs::write(&record, with("contract max-calls n=1")).unwrap();
    craft(
        d,
        1,
        vec![query(KEY_GRAPH), query(KEY_GRAPH)],
        &exact_answer(d),
        &[],
    );
    let text = exits(d, &["rescore", "runs-demo", "--force"], 0);
    assert!(
        text.contains(&format!(
            "expectation  {QUESTION}  {CONDITION}  attempt 1  calls: known_gap_fixed -> fail"
        )),
        "{text}"
    );
    assert_eq!(statuses(d, 1)["calls"], "fail");
    assert_eq!(statuses(d, 2)["calls"], "pass");
    // The report shows the pass rate beside the exact rate.
    let text = exits(d, &["report", "runs-demo"], 0);
    let row = printed_records(&text)
        .into_iter()
        .find(|l| l.contains("KG named") && l.contains("max-calls") && !l.contains("without"))
        .unwrap_or_else(|| panic!("no row for the expectation:\n{text}"));
    assert!(row.contains("contract"), "{row}");
    assert!(row.contains("pass rate 0.67"), "{row}");
    assert!(row.contains("2 of 3 attempts"), "{row}");
}

/// Issue 27, section 2: a status is derived again on load like every
/// other member of `result.json`; one flipped by hand is refused by name
/// by every command that loads the root, and so is a recorded expectation
/// that no header line could give.
#[test]
fn an_expectation_status_flipped_by_hand_is_refused() {
    let dir = setup();
    let d = dir.path();
    defaults(d, &[("calls", "contract max-calls n=5")]);
    exits(d, &["rescore", "runs-demo"], 0);
    assert_eq!(statuses(d, 1)["calls"], "pass");
    let path = result_path(d);
    let pristine = std::fs::read(&path).unwrap();
    let mut result = read_json(&path);
    result["attempts"][0]["expectations"]["calls"]["status"] = "fail".into();
    write_json(&path, &result);
    for args in [&["report", "runs-demo"][..], &["build", "--check"][..]] {
        let text = exits(d, args, 2);
        assert!(
            text.contains("expectations.calls.status"),
            "{args:?}: {text}"
        );
    }
    std::fs::write(&path, &pristine).unwrap();
    let mut result = read_json(&path);
    result["expectations"][0]["n"] = 0.into();
    write_json(&path, &result);
    let text = exits(d, &["report", "runs-demo"], 2);
    assert!(text.contains("expectation 'calls'"), "{text}");
    std::fs::write(&path, &pristine).unwrap();
    exits(d, &["report", "runs-demo"], 0);
}

/// Issue 27, section 1: unknown check names, fields that do not fit, a
/// check that cannot fail, a default that does not read: refused by
/// `corpus list` and `selfcheck` (exit 2), naming the file and line.
#[test]
fn expectations_that_do_not_fit_are_refused_naming_record_and_line() {
    let dir = setup();
    let d = dir.path();
    let record = d.join(CORPUS).join(format!("{QUESTION}.rq"));
    let original = std::fs::read_to_string(&record).unwrap();
    let name = format!("{QUESTION}.rq");
    for (line, says) in [
        (
            "contract key-graph queries=all",
            "did you mean 'key-graphs'",
        ),
        ("quality tool-used tool=query n=2", "takes no field 'n'"),
        ("quality tool-order tools=query", "two or more"),
        ("quality max-queries n=0", "n=0"),
        ("quality traceable known_gap=last-week", "not a date"),
    ] {
        std::fs::write(&record, format!("#+ expect.e: {line}\n{original}")).unwrap();
        for args in [
            &["corpus", "list", "--corpus", CORPUS][..],
            &["selfcheck", "--corpus", CORPUS][..],
        ] {
            let text = exits(d, args, 2);
            assert!(
                text.contains(&format!("{name}:1")),
                "{args:?} {line}: {text}"
            );
            assert!(text.contains(says), "{args:?} {line}: {text}");
        }
    }
    // A key that names no graph: key-graphs could never fail.
    let plain = d.join(CORPUS).join("plain_cross.rq");
    std::fs::write(
        &plain,
        "#+ summary: Count.\n#+ expect.g: contract key-graphs queries=first\nSELECT (COUNT(*) AS ?n) { ?s ?p ?o }\n",
    )
    .unwrap();
    std::fs::write(&record, &original).unwrap();
    let text = exits(d, &["corpus", "list", "--corpus", CORPUS], 2);
    assert!(text.contains("plain_cross.rq:2"), "{text}");
    assert!(text.contains("cannot fail"), "{text}");
    std::fs::remove_file(&plain).unwrap();
    // A default that does not read names okn-benchmark.toml and its line.
    defaults(
        d,
        &[("ok", "quality traceable"), ("bad", "quality max-calls")],
    );
    let text = exits(d, &["corpus", "list", "--corpus", CORPUS], 2);
    assert!(text.contains("okn-benchmark.toml:"), "{text}");
    assert!(text.contains("needs n=N"), "{text}");
    // And one that does is listed with every record.
    defaults(d, &[("trace", "quality traceable")]);
    let text = exits(
        d,
        &["corpus", "list", "--corpus", CORPUS, "--format", "json"],
        0,
    );
    assert!(text.contains("\"check\": \"traceable\""), "{text}");
    // A record turns a default off by its id; an id no default has is named.
    std::fs::write(&record, format!("#+ expect.trace: off\n{original}")).unwrap();
    exits(d, &["corpus", "list", "--corpus", CORPUS], 0);
    std::fs::write(&record, format!("#+ expect.trac: off\n{original}")).unwrap();
    let text = exits(d, &["corpus", "list", "--corpus", CORPUS], 2);
    assert!(text.contains("did you mean 'trace'"), "{text}");
}

/// Issue 27, section 2 ("Done when": `compare` catching a contract flip
/// on an exact answer): a contract that held in the baseline and fails in
/// the candidate regresses the question though every answer stayed
/// exact, is listed among the flips, and fails `--fail-on-regression`;
/// a quality flip alone moves nothing.
#[test]
fn compare_catches_a_contract_flip_on_an_exact_answer() {
    let dir = setup();
    let d = dir.path();
    defaults(
        d,
        &[
            ("one-query", "contract max-queries n=1"),
            ("budget", "quality max-calls n=1"),
        ],
    );
    exits(d, &["rescore", "runs-demo"], 0);
    assert_eq!(statuses(d, 1)["one-query"], "pass");
    candidate_querying_twice(d);
    exits(d, &["rescore", "runs-candidate", "--force"], 0);
    let result = read_json(&d.join(format!(
        "runs-candidate/{QUESTION}_results/{CONDITION}/result.json"
    )));
    assert_eq!(result["attempts"][0]["exact"], true);
    assert_eq!(
        result["attempts"][0]["expectations"]["one-query"]["status"],
        "fail"
    );
    let text = exits(d, &["compare", "runs-demo", "runs-candidate"], 0);
    assert!(
        text.contains(&format!("one-query of {QUESTION}")),
        "the gate line names the contract:\n{text}"
    );
    assert!(text.contains("started to fail"), "{text}");
    let question_row = printed_records(&text)
        .into_iter()
        .find(|l| l.contains(QUESTION) && l.contains("class") && l.contains("✓✓✓ → ✓✓✓"))
        .unwrap_or_else(|| panic!("{QUESTION}'s row is not listed:\n{text}"));
    assert!(question_row.contains("regressed"), "{question_row}");
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
    assert!(
        text.contains("contract trajectory expectation started to fail"),
        "{text}"
    );
    // The quality budget flipped too (listed), but alone it fails nothing:
    // with the contract turned off in the record, and both roots judged
    // by it again, the gate passes.
    assert!(text.contains("budget"), "{text}");
    let record = d.join(CORPUS).join(format!("{QUESTION}.rq"));
    let original = std::fs::read_to_string(&record).unwrap();
    std::fs::write(&record, format!("#+ expect.one-query: off\n{original}")).unwrap();
    // A root judged by other expectations than its corpus gives now is
    // refused until it is judged again.
    let text = exits(d, &["compare", "runs-demo", "runs-candidate"], 2);
    assert!(text.contains("`one-query` only in result.json"), "{text}");
    exits(d, &["rescore", "runs-candidate"], 0);
    exits(d, &["rescore", "runs-demo"], 0);
    exits(
        d,
        &[
            "compare",
            "runs-demo",
            "runs-candidate",
            "--fail-on-regression",
        ],
        0,
    );
}

/// Copies `runs-demo` to `runs-candidate`, whose attempt 1 of
/// [`QUESTION`] under [`CONDITION`] then queries twice and submits the same
/// exact answer (its `calls.json` and `metrics.json` made to agree); the
/// caller re-judges it (`rescore runs-candidate --force`).
pub(crate) fn candidate_querying_twice(d: &Path) {
    crate::support::fixture::copy_dir(&d.join("runs-demo"), &d.join("runs-candidate"));
    // The candidate's attempt 1 queries twice and submits the same exact
    // answer.
    let attempt = d.join(format!(
        "runs-candidate/{QUESTION}_results/{CONDITION}/attempt-1"
    ));
    let answer = exact_answer(d);
    let mut calls = vec![query(KEY_GRAPH), query(KEY_GRAPH)];
    calls.push(call("submit_csv", json!({"csv": answer}), "saved"));
    for (i, c) in calls.iter_mut().enumerate() {
        c["index"] = (i + 1).into();
    }
    write_json(
        &attempt.join("calls.json"),
        &json!({"format": 2, "calls": calls}),
    );
    let records: Vec<okn_benchmark::layout::CallRecord> =
        serde_json::from_value(Value::Array(calls)).unwrap();
    let tallies = serde_json::to_value(okn_benchmark::mcp::calllog::tallies(&records)).unwrap();
    let mut metrics = read_json(&attempt.join("metrics.json"));
    for member in [
        "calls",
        "tools_called",
        "server_s",
        "reply_chars",
        "queries_ok",
    ] {
        metrics[member] = tallies[member].clone();
    }
    write_json(&attempt.join("metrics.json"), &metrics);
}

/// Issue 27, section 2: the pass rates are published beside exact and F1,
/// never in them: the root's README, the site's question page and attempt
/// page (the failing call marked on the timeline), a study's regions
/// (`metric=expectation-pass expectation=ID`, `okn:expectations`) and
/// `paper tables`; and the exact rate does not move.
#[test]
fn expectations_are_published_beside_the_rates_never_in_them() {
    let dir = setup();
    let d = dir.path();
    defaults(d, &[("graphs", "contract key-graphs queries=first")]);
    exits(d, &["rescore", "runs-demo"], 0);
    // What the recorded agent did elsewhere in the condition, counted from
    // the statuses recorded: attempt 2 of the question held, and fails below.
    let (held, applied) = tally(d, "graphs");
    // Pinned as well, so a wrong judgment published consistently fails:
    // every attempt of the condition queried a graph, 34 the key's first.
    assert_eq!((held, applied), (34, 36));
    assert_eq!(statuses(d, 2)["graphs"], "pass");
    let held = held - 1;
    let rate = format!("{:.2}", held as f64 / applied as f64);
    let counts = format!("{held} of {applied} attempts");
    let condition_file = d.join(format!("runs-demo/conditions/{CONDITION}.json"));
    let rate_before = read_json(&condition_file)["aggregate"]["exact_rate"].clone();
    // Attempt 2 queries another graph first, and answers exactly.
    craft(
        d,
        2,
        vec![query(OTHER_GRAPH), query(KEY_GRAPH)],
        &exact_answer(d),
        &[],
    );
    exits(d, &["rescore", "runs-demo", "--force"], 0);
    assert_eq!(
        read_json(&condition_file)["aggregate"]["exact_rate"],
        rate_before
    );
    let summary = d.join("results-demo/SUMMARY.md");
    let prose = std::fs::read_to_string(&summary).unwrap();
    std::fs::write(
        &summary,
        format!(
            "{prose}\nGraphs: <!-- okn:number condition=named metric=expectation-pass expectation=graphs -->?<!-- /okn:number -->.\n\n<!-- okn:expectations -->\n<!-- /okn:expectations -->\n"
        ),
    )
    .unwrap();
    exits(d, &["build"], 0);
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.contains(&format!("Graphs: <!-- okn:number condition=named metric=expectation-pass expectation=graphs -->{rate}<!-- /okn:number -->.")), "{text}");
    assert!(
        text.contains(&format!(
            "| KG named | `graphs` | contract | `key-graphs` | {rate} | {counts} |"
        )),
        "{text}"
    );
    let readme = std::fs::read_to_string(d.join("runs-demo/README.md")).unwrap();
    assert!(readme.contains("## Trajectory expectations"), "{readme}");
    assert!(
        readme.contains(&format!(
            "`graphs` | contract | `key-graphs` | {rate} | {counts} |"
        )),
        "{readme}"
    );
    let attempt = std::fs::read_to_string(d.join(format!(
        "site/roots/runs-demo/a/{QUESTION}/{CONDITION}/attempt-2.html"
    )))
    .unwrap();
    assert!(
        attempt.contains("id=\"call-1\""),
        "the failing call is anchored"
    );
    assert!(
        attempt.contains("✗ fails graphs"),
        "the failing call is marked"
    );
    assert!(
        attempt.contains("href=\"#call-1\""),
        "the status links to it"
    );
    let question =
        std::fs::read_to_string(d.join(format!("site/roots/runs-demo/q/{QUESTION}.html"))).unwrap();
    assert!(question.contains("id=\"expectations\""), "{question}");
    let text = exits(d, &["paper", "tables", "--study", "results-demo"], 0);
    assert!(text.contains("Trajectory expectations"), "{text}");
    assert!(text.contains(&counts), "{text}");
    // A region naming an id no question carries is refused by name.
    std::fs::write(
        &summary,
        format!("{prose}\nGraphs: <!-- okn:number condition=named metric=expectation-pass expectation=graph -->?<!-- /okn:number -->\n"),
    )
    .unwrap();
    let text = exits(d, &["build"], 2);
    assert!(text.contains("did you mean 'graphs'"), "{text}");
}

/// Issue 27, section 1: `run` reads each record's expectations with its
/// corpus's defaults before it plays anything (one that does not read
/// stops it, exit 2, nothing recorded), records them in `result.json`
/// and judges every attempt it plays, from the real proxy's `calls.json`.
#[test]
fn run_judges_the_expectations_of_the_records_it_plays() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let corpus = d.join("benchmarks-single");
    crate::support::fixture::copy_dir(&repo().join("demo/benchmarks-single"), &corpus);
    let defaults = |line: &str| {
        std::fs::write(
            d.join("okn-benchmark.toml"),
            format!("[expectations.\"benchmarks-single\"]\n{line}\n"),
        )
        .unwrap()
    };
    let out = d.join("runs");
    let run = || {
        okn_in(&repo())
            .args([
                "run",
                "--corpus",
                corpus.to_str().unwrap(),
                "--agent",
                "scripted:oracle",
                "--limit",
                "1",
                "--out",
                out.to_str().unwrap(),
                "--profile",
                "profiles/demo-kg.local.toml",
                "--tools",
                "all-tools",
                "--kg-hint",
                "tags",
            ])
            .output()
            .unwrap()
    };
    defaults("discovery = \"quality discovery-first\"\ncalls = \"quality max-call n=3\"");
    let o = run();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("okn-benchmark.toml:3"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("did you mean 'max-calls'"),
        "{}",
        stderr(&o)
    );
    assert!(
        !out.join("conditions").exists(),
        "a refused run recorded something"
    );
    defaults("discovery = \"quality discovery-first\"\ncalls = \"quality max-calls n=3\"");
    let o = run();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let result = read_json(&out.join(
        "biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named/result.json",
    ));
    let ids: Vec<&str> = result["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["calls", "discovery"]);
    // The oracle runs the answer key at once: one query, no discovery.
    let judged = &result["attempts"][0]["expectations"];
    assert_eq!(judged["calls"]["status"], "pass", "{judged}");
    assert_eq!(judged["discovery"]["status"], "fail", "{judged}");
    assert_eq!(judged["discovery"]["call"], 1, "{judged}");
    assert_eq!(result["attempts"][0]["exact"], true);
}
