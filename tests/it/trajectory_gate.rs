//! Faults a second red team found in the trajectory expectations (issue
//! 27), each kept by a test through the real binary: the corpus check
//! switched off by a broken `okn-benchmark.toml` or an edited
//! `settings.corpus`, `rescore` taking edited calls without `--force`,
//! `compare`'s gate passed by a contract turned off in the candidate or
//! run from another folder, a contract failing where the baseline judged
//! nothing left unsaid, and defaults ignored silently.

use std::path::Path;

use crate::support::fixture::{CONDITION, QUESTION};
use crate::support::flat;
use crate::trajectory::{
    CORPUS, KEY_GRAPH, OTHER_GRAPH, attempt_dir, candidate_querying_twice, craft, defaults,
    exact_answer, exits, query, read_json, result_path, setup, write_json,
};

/// The fixture with one contract, `one-query` (at most one query), judged.
fn judged() -> tempfile::TempDir {
    let dir = setup();
    defaults(dir.path(), &[("one-query", "contract max-queries n=1")]);
    exits(dir.path(), &["rescore", "runs-demo"], 0);
    dir
}

/// `result.json` of [`QUESTION`] under [`CONDITION`] with its contract
/// `one-query` left out, as a forger would leave it.
fn forge(d: &Path) {
    let path = result_path(d);
    let mut result = read_json(&path);
    result.as_object_mut().unwrap().remove("expectations");
    for a in result["attempts"].as_array_mut().unwrap() {
        a.as_object_mut().unwrap().remove("expectations");
    }
    write_json(&path, &result);
}

/// Red team, fault 1: a broken `okn-benchmark.toml` took the corpus check
/// off (a note, exit 0), while `corpus list` refused the same file: a
/// corpus that is here but whose expectations do not read is bad input.
/// Fault 2: `settings.corpus` pointed elsewhere took it off too; it must
/// be `identity.corpus` (`run` writes both from `--corpus`).
#[test]
fn the_corpus_check_cannot_be_switched_off_by_a_broken_file_or_an_edited_setting() {
    let dir = judged();
    let d = dir.path();
    forge(d);
    let toml = d.join("okn-benchmark.toml");
    let good = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        format!("{good}[expectations.\"nope\"]\nx = \"quality discovery-first\"\n"),
    )
    .unwrap();
    for args in [&["report", "runs-demo"][..], &["build", "--check"][..]] {
        let text = flat(&exits(d, args, 2));
        assert!(text.contains("do not read"), "{args:?}: {text}");
        assert!(text.contains("names no folder"), "{args:?}: {text}");
    }
    std::fs::write(&toml, &good).unwrap();
    let condition = d.join(format!("runs-demo/conditions/{CONDITION}.json"));
    let mut file = read_json(&condition);
    file["settings"]["corpus"] = "nowhere/x".into();
    write_json(&condition, &file);
    let text = flat(&exits(d, &["report", "runs-demo"], 2));
    assert!(
        text.contains(&format!(
            "settings.corpus: 'nowhere/x' is not identity.corpus '{CORPUS}'"
        )),
        "{text}"
    );
}

/// Red team, fault 3: `rescore` without `--force` re-judged an attempt
/// whose `calls.json` was edited when only an expectation's status moved
/// (a verdict moving was refused); under the same expectation, a status
/// moves only because its evidence did.
#[test]
fn rescore_refuses_a_status_that_moves_under_the_same_expectation_without_force() {
    let dir = judged();
    let d = dir.path();
    // Attempt 1 gains a second query before its recorded ones.
    let dir1 = attempt_dir(d, 1);
    let recorded = read_json(&dir1.join("calls.json"));
    let mut calls = vec![query(KEY_GRAPH)];
    calls.extend(
        recorded["calls"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["tool"] != "submit_csv")
            .cloned(),
    );
    let answer = std::fs::read_to_string(dir1.join("answer.csv")).unwrap();
    craft(d, 1, calls, &answer, &[]);
    let pristine = std::fs::read(result_path(d)).unwrap();
    let text = flat(&exits(d, &["rescore", "runs-demo"], 2));
    assert!(
        text.contains("an expectation's status moves (one-query: pass -> fail)"),
        "{text}"
    );
    assert!(text.contains("rescore --force"), "{text}");
    assert_eq!(std::fs::read(result_path(d)).unwrap(), pristine);
    exits(d, &["rescore", "runs-demo", "--force"], 0);
    let result = read_json(&result_path(d));
    assert_eq!(
        result["attempts"][0]["expectations"]["one-query"]["status"],
        "fail"
    );
}

/// Red team, fault 4: a contract turned off in the candidate's corpus
/// passed `--fail-on-regression` though the candidate's calls still broke
/// it; not judged in the candidate, it cannot be judged by the gate.
/// Fault 5: `compare` run where the corpus is not a folder said nothing of
/// the lists it could not check.
#[test]
fn a_contract_turned_off_in_the_candidate_fails_the_gate_and_unchecked_lists_are_said() {
    let dir = judged();
    let d = dir.path();
    candidate_querying_twice(d);
    exits(d, &["rescore", "runs-candidate", "--force"], 0);
    exits(d, &["freeze", "runs-demo", "--reason", "the baseline"], 0);
    let record = d.join(CORPUS).join(format!("{QUESTION}.rq"));
    let original = std::fs::read_to_string(&record).unwrap();
    std::fs::write(&record, format!("#+ expect.one-query: off\n{original}")).unwrap();
    exits(d, &["rescore", "runs-candidate"], 0);
    let text = flat(&exits(
        d,
        &[
            "compare",
            "runs-demo",
            "runs-candidate",
            "--fail-on-regression",
        ],
        1,
    ));
    assert!(text.contains("`one-query` only in the baseline"), "{text}");
    assert!(
        text.contains("not held, or not judged, in the candidate"),
        "{text}"
    );
    // From a folder where the corpus is not: the gate still judges what
    // it can, and says the lists went unchecked.
    let elsewhere = d.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let text = flat(&exits(
        &elsewhere,
        &["compare", "../runs-demo", "../runs-candidate"],
        0,
    ));
    assert!(
        text.contains("note: ../runs-candidate: Every condition: its trajectory expectations are as result.json records them, not checked against a corpus"),
        "{text}"
    );
}

/// Red team, fault 6: a contract that applied to no attempt of the
/// baseline and fails in the candidate was neither listed nor counted;
/// it is listed, and (the baseline giving no evidence it held, as for an
/// answer) not counted by the gate.
#[test]
fn a_contract_failing_where_the_baseline_judged_nothing_is_listed() {
    let dir = setup();
    let d = dir.path();
    defaults(d, &[("graphs", "contract key-graphs queries=all")]);
    let answer = exact_answer(d);
    // The candidate's attempt 1 queries another graph; no other attempt
    // of either root makes a query, so the contract applies to none.
    craft(d, 1, vec![query(OTHER_GRAPH)], &answer, &[]);
    for n in 2..=3 {
        craft(d, n, vec![], &answer, &[]);
    }
    crate::support::fixture::copy_dir(&d.join("runs-demo"), &d.join("runs-candidate"));
    craft(d, 1, vec![], &answer, &[]);
    exits(d, &["rescore", "runs-demo", "--force"], 0);
    exits(d, &["rescore", "runs-candidate", "--force"], 0);
    let baseline = read_json(&result_path(d));
    for a in baseline["attempts"].as_array().unwrap() {
        assert_eq!(
            a["expectations"]["graphs"]["status"], "not_applicable",
            "{a}"
        );
    }
    let text = flat(&exits(
        d,
        &[
            "compare",
            "runs-demo",
            "runs-candidate",
            "--fail-on-regression",
        ],
        0,
    ));
    assert!(
        text.contains("fails, judged in no attempt of the baseline"),
        "{text}"
    );
}

/// Red team, fault 7: defaults ignored silently. A misspelt table, two
/// keys naming one folder, an empty key, `off` as a default, a tool name
/// with a space, an empty note, and a record's `expects.x` key: each is
/// refused by `corpus list`, naming the file and line.
#[test]
fn defaults_and_header_keys_that_would_be_ignored_are_refused() {
    let dir = setup();
    let d = dir.path();
    let toml = d.join("okn-benchmark.toml");
    let cases: [(&str, &str); 6] = [
        (
            "[expectation.\"demo/benchmarks-cross\"]\nx = \"quality discovery-first\"\n",
            "unknown table or key 'expectation' (did you mean 'expectations'?)",
        ),
        (
            "[expectations.\"demo/benchmarks-cross\"]\nx = \"quality discovery-first\"\n\
             [expectations.\"./demo/benchmarks-cross\"]\nx = \"contract traceable\"\n",
            "names the same folder as",
        ),
        (
            "[expectations.\"\"]\nx = \"quality discovery-first\"\n",
            "names no corpus folder",
        ),
        (
            "[expectations.\"*\"]\nx = \"off\"\n",
            "a default gives an expectation",
        ),
        (
            "[expectations.\"*\"]\nx = 'quality tool-used tool=\"get schema\"'\n",
            "holds a space",
        ),
        (
            "[expectations.\"*\"]\nx = 'quality discovery-first known_gap=2026-11-02 note=\"\"'\n",
            "note= is empty",
        ),
    ];
    for (text, said) in cases {
        std::fs::write(&toml, text).unwrap();
        let out = flat(&exits(d, &["corpus", "list", "--corpus", CORPUS], 2));
        assert!(out.contains("okn-benchmark.toml:"), "{text}: {out}");
        assert!(out.contains(said), "{text}: {out}");
    }
    std::fs::remove_file(&toml).unwrap();
    let record = d.join(CORPUS).join(format!("{QUESTION}.rq"));
    let original = std::fs::read_to_string(&record).unwrap();
    std::fs::write(
        &record,
        format!("#+ expects.x: contract traceable\n{original}"),
    )
    .unwrap();
    let out = flat(&exits(d, &["corpus", "list", "--corpus", CORPUS], 2));
    assert!(out.contains(&format!("{QUESTION}.rq:1")), "{out}");
    assert!(out.contains("expects.x"), "{out}");
}
