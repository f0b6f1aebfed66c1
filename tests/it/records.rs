//! Records that lie with exit 0 (issue 24, "Records that lie with exit 0"
//! and "Files and pages"), through the real binary: loading a runs root
//! derives every member of its records again from the attempts' own files
//! and refuses what disagrees, checks every id read from a record before a
//! path is built from it, opens only regular files, and takes a symbolic
//! link inside a root for damage. Each test plants one kind of damage in a
//! copy of a recorded demo root (the `build` fixture, `runs-demo`) and
//! checks that every command that loads the root refuses it by name (exit
//! 2) and writes nothing, or that the documented repair works end to end.
//!
//! The forgeries cover their tracks ([`forge`]): the summary, the
//! condition file's copy of it and the aggregate are recomputed, so the
//! checks of derived figures that existed before cannot be what catches
//! them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use okn_benchmark::runs::records::{AttemptResult, ConditionFile, QuestionResult};
use okn_benchmark::runs::records::{aggregate, summarize};
use serde_json::Value;

use crate::support::fixture::{CONDITION, QUESTION, fixture};
use crate::support::{okn, okn_in, snapshot, stderr, stdout};

/// A question of the fixture whose first attempt under [`CONDITION`]
/// submitted an answer that misses one row (F1 0.91).
const MISSED: &str = "spatialkg-spoke-okn-place-density_cross";

/// A question of the fixture whose attempts 1 (nothing submitted) and 3
/// (a wrong answer) under [`CONDITION`] failed.
const FAILED: &str = "fiokg-spatialkg-spoke-okn-chemical-county-obesity_cross";

/// The fixture's condition that names no graph.
const NOT_NAMED: &str = "demo-kg-all-tools__kg-not-named";

/// `ROOT/QUESTION_results/CONDITION/result.json` of the fixture in `d`.
fn result_path(d: &Path, question: &str, condition: &str) -> PathBuf {
    d.join(format!(
        "runs-demo/{question}_results/{condition}/result.json"
    ))
}

/// `ROOT/conditions/CONDITION.json` of the fixture in `d`.
fn condition_path(d: &Path, condition: &str) -> PathBuf {
    d.join(format!("runs-demo/conditions/{condition}.json"))
}

/// The folder of attempt `n` of `question` under `condition`.
fn attempt_dir(d: &Path, question: &str, condition: &str, n: u32) -> PathBuf {
    d.join(format!(
        "runs-demo/{question}_results/{condition}/attempt-{n}"
    ))
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> T {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) {
    let mut text = serde_json::to_string_pretty(value).unwrap();
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

/// Edits a JSON file in place.
fn edit(path: &Path, change: impl FnOnce(&mut Value)) {
    let mut value: Value = read_json(path);
    change(&mut value);
    write_json(path, &value);
}

/// The calls an attempt's `calls.json` records, in order.
fn calls(attempt: &Path) -> Vec<Value> {
    let log: Value = read_json(&attempt.join("calls.json"));
    log["calls"].as_array().cloned().unwrap_or_default()
}

/// Edits the `result.json` of `question` under `condition` as a forger
/// would who covers their tracks: `change`, then the summary recomputed
/// from the attempts, the condition file's copy of it and the condition's
/// aggregate recomputed from the questions (`runs::records::summarize`,
/// `aggregate`).
fn forge(d: &Path, question: &str, condition: &str, change: impl FnOnce(&mut QuestionResult)) {
    let path = result_path(d, question, condition);
    let mut result: QuestionResult = read_json(&path);
    change(&mut result);
    result.summary = summarize(&result.attempts, result.ordered_key);
    write_json(&path, &result);
    let path = condition_path(d, condition);
    let mut file: ConditionFile = read_json(&path);
    file.questions
        .insert(question.to_string(), result.summary.clone());
    file.aggregate = aggregate(&file.questions);
    write_json(&path, &file);
}

/// [`forge`] of attempt `n` alone.
fn forge_attempt(
    d: &Path,
    question: &str,
    condition: &str,
    n: u32,
    change: impl FnOnce(&mut AttemptResult),
) {
    forge(d, question, condition, |r| {
        let attempt = r.attempts.iter_mut().find(|a| a.attempt == n).unwrap();
        change(attempt);
    });
}

/// `okn-benchmark ARGS` in `d`, stopped after a minute: a command that
/// read a named pipe would otherwise wait forever.
fn okn_timed(d: &Path, args: &[&str]) -> std::process::Output {
    okn_in(d)
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

/// Every command that loads the root in `d` refuses it, exit 2, naming
/// `named` (on stderr, or among the unreadable files `report --lenient`
/// lists), and writes nothing: `build`, `build --check`, `report`,
/// `report --lenient`, `paper tables`, and `merge` of the root.
#[track_caller]
fn refused_everywhere(d: &Path, named: &str) {
    let before = snapshot(d);
    let commands: [&[&str]; 6] = [
        &["build", "--check"],
        &["build"],
        &["report", "runs-demo"],
        &["report", "runs-demo", "--lenient"],
        &["paper", "tables"],
        &["merge", "--out", "merged", "runs-demo"],
    ];
    for args in commands {
        let o = okn_timed(d, args);
        let text = format!("{}{}", stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(2), "{args:?}:\n{text}");
        assert!(
            text.contains(named),
            "{args:?} did not name '{named}':\n{text}"
        );
        assert!(!text.contains("panicked"), "{args:?}:\n{text}");
        assert_eq!(snapshot(d), before, "{args:?} wrote files");
        assert!(!d.join("merged").exists(), "merge wrote a root");
    }
}

/// `okn-benchmark ARGS` in `d`, which must exit `code`; its stdout and
/// stderr together.
#[track_caller]
fn exits(d: &Path, args: &[&str], code: i32) -> String {
    let o = okn_timed(d, args);
    let text = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(code), "{args:?}:\n{text}");
    text
}

/// Issue 24, item 4: a `result.json` claiming an older `scoring_version`
/// was never judged again, so a verdict flipped by hand was published
/// (and `build --check` said current). Every attempt is judged again,
/// whatever version it claims; `rescore` is the way on.

#[test]
fn a_verdict_flipped_by_hand_is_refused_whatever_scoring_version_it_claims() {
    let dir = fixture();
    let d = dir.path();
    // The forgery alone (every figure recomputed) changes nothing a
    // loader minds.
    forge(d, MISSED, CONDITION, |_| {});
    exits(d, &["report", "runs-demo"], 0);
    let flip = |a: &mut AttemptResult| {
        a.exact = true;
        a.strict_exact = true;
        a.ordered = Some(true);
        a.f1 = 1.0;
    };
    let pristine = std::fs::read(result_path(d, MISSED, CONDITION)).unwrap();
    let pristine_condition = std::fs::read(condition_path(d, CONDITION)).unwrap();
    forge(d, MISSED, CONDITION, |r| flip(&mut r.attempts[0]));
    refused_everywhere(
        d,
        "result.json: attempt 1 records exact true, strict_exact true, ordered true, f1 1.0, \
         but its files judged against the ground truth give exact false, strict_exact false, \
         ordered false, f1 0.9090909090909091",
    );
    std::fs::write(result_path(d, MISSED, CONDITION), &pristine).unwrap();
    std::fs::write(condition_path(d, CONDITION), &pristine_condition).unwrap();
    // The forger claims the older version everywhere it is written (a
    // `result.json` whose version is not its scores' is refused first).
    forge(d, MISSED, CONDITION, |r| {
        r.scoring_version = "1.0".into();
        for a in &mut r.attempts {
            if let Some(score) = a.score.as_mut() {
                score.scoring_version = "1.0".into();
            }
        }
        flip(&mut r.attempts[0]);
    });
    refused_everywhere(
        d,
        "result.json: attempt 1 was judged under scoring version 1.0 and records exact true",
    );
    // The condition file still records the flipped rates under this
    // version: rescore cannot tell the forged record from forged files,
    // and refuses to choose; --force judges the files as they are.
    let text = exits(d, &["rescore", "runs-demo"], 2);
    assert!(text.contains("its rates move (exact_rate: "), "{text}");
    // Re-judged under this version, the verdict its files give is back.
    let text = exits(d, &["rescore", "runs-demo", "--force"], 0);
    assert!(
        text.contains(&format!(
            "moved  {MISSED}  {CONDITION}  attempt 1  exact: true -> false"
        )),
        "{text}"
    );
    let result: QuestionResult = read_json(&result_path(d, MISSED, CONDITION));
    assert_eq!(
        result.scoring_version,
        okn_benchmark::score::SCORING_VERSION
    );
    assert!(!result.attempts[0].exact);
    exits(d, &["build"], 0);
    exits(d, &["build", "--check"], 0);
}

/// Issue 24, item 5: a `result.json` that left out an attempt whose folder
/// is there (repeat 3) was published: the rates moved and the attempt's
/// page vanished. Refused as `merge` refuses it; `rescore` rebuilds the
/// record from the attempts.
#[test]
fn a_result_that_leaves_out_a_recorded_attempt_is_refused() {
    let dir = fixture();
    let d = dir.path();
    forge(d, FAILED, CONDITION, |r| {
        r.attempts.retain(|a| a.attempt != 1)
    });
    refused_everywhere(
        d,
        &format!(
            "{CONDITION}/attempt-1: recorded on disk, but result.json beside it does not list \
             attempt 1"
        ),
    );
    // The condition's record of the question was forged with it: rescore
    // refuses to choose between record and files without --force.
    let text = exits(d, &["rescore", "runs-demo"], 2);
    assert!(text.contains("its rates move ("), "{text}");
    exits(d, &["rescore", "runs-demo", "--force"], 0);
    let result: QuestionResult = read_json(&result_path(d, FAILED, CONDITION));
    let listed: Vec<u32> = result.attempts.iter().map(|a| a.attempt).collect();
    assert_eq!(listed, [1, 2, 3]);
    exits(d, &["build"], 0);
    exits(d, &["build", "--check"], 0);
}

/// Issue 24, item 6: `blocked` was taken as written, so marking three
/// failed attempts blocked, with no evidence on disk, lifted the exact
/// rate and mean F1. `blocked` stands only on its evidence.
#[test]
fn failed_attempts_marked_blocked_by_hand_are_refused() {
    let dir = fixture();
    let d = dir.path();
    let reason = "the agent host reported an error: overloaded";
    let block = |a: &mut AttemptResult| {
        a.blocked = true;
        a.blocked_reason = Some(reason.to_string());
    };
    let rate = |name: &str| -> f64 {
        let file: ConditionFile = read_json(&condition_path(d, name));
        file.aggregate.mean_f1.unwrap()
    };
    let recorded = rate(CONDITION);
    forge_attempt(d, FAILED, CONDITION, 1, block);
    forge_attempt(d, FAILED, CONDITION, 3, block);
    forge_attempt(d, FAILED, NOT_NAMED, 1, block);
    // What a loader that took the record as written would publish.
    assert!(
        rate(CONDITION) > recorded,
        "{recorded} -> {}",
        rate(CONDITION)
    );
    refused_everywhere(
        d,
        &format!(
            "result.json: attempt 1 records blocked true, blocked_reason \"{reason}\", but its \
             files judged against the ground truth give blocked false, blocked_reason null"
        ),
    );
}

/// Issue 24, item 6: the query counts, the tools, the trajectory, the
/// usage, the times, the notes, the model and the full score of an
/// attempt were taken as written. Each member is derived again from the
/// attempt's files, and a hand edit of any one is refused, named.
#[test]
fn every_member_of_a_recorded_attempt_is_derived_again_from_its_files() {
    let dir = fixture();
    let d = dir.path();
    type Change = fn(&mut AttemptResult);
    let cases: [(Change, &str); 11] = [
        (|a| a.queries = 3, "records queries 3"),
        (|a| a.queries_errored = 1, "records queries_errored 1"),
        (|a| a.refused = 1, "records refused 1"),
        (
            |a| a.tools_called.insert(0, "get_schema".into()),
            "records tools_called [\"get_schema\",",
        ),
        (|a| a.wall_s = 0.5, "records wall_s 0.5"),
        (|a| a.server_s = 0.25, "records server_s 0.25"),
        (|a| a.notes.push("checked by hand".into()), "records notes"),
        (
            |a| a.model_resolved = Some("a-better-model".into()),
            "records model_resolved \"a-better-model\"",
        ),
        (
            |a| a.trajectory = None,
            "records trajectory absent, but its files judged against the ground truth give \
             trajectory {\"first_query_hit\":",
        ),
        (
            |a| {
                a.usage = Some(
                    serde_json::from_value(serde_json::json!({
                        "source": "agent.json", "cost_usd": 0.01, "input_tokens": 10,
                        "output_tokens": 5, "cache_creation_input_tokens": null,
                        "cache_read_input_tokens": null, "num_turns": 3, "api_s": 1.0
                    }))
                    .unwrap(),
                )
            },
            "records usage {",
        ),
        (
            |a| a.score.as_mut().unwrap().row_precision = 0.5,
            "records score.row_precision 0.5",
        ),
    ];
    let result = result_path(d, QUESTION, CONDITION);
    let condition = condition_path(d, CONDITION);
    let pristine = (
        std::fs::read(&result).unwrap(),
        std::fs::read(&condition).unwrap(),
    );
    for (change, named) in cases {
        forge_attempt(d, QUESTION, CONDITION, 1, change);
        for args in [&["report", "runs-demo"][..], &["build", "--check"]] {
            let text = exits(d, args, 2);
            assert!(
                text.contains(&format!("result.json: attempt 1 {named}")),
                "{args:?}: '{named}' not named:\n{text}"
            );
        }
        std::fs::write(&result, &pristine.0).unwrap();
        std::fs::write(&condition, &pristine.1).unwrap();
    }
    exits(d, &["report", "runs-demo"], 0);
}

/// Issue 24, item 6: where one file of an attempt repeats what another
/// records, the copy a judgment reads is checked against its source: the
/// query counts of `metrics.json` against `calls.json`, a startup error
/// (which blocks an attempt) against calls forwarded to the server, and
/// the usage `episode.json` copied against `agent.json`.
#[test]
fn an_attempt_file_that_disagrees_with_the_one_it_copies_is_refused() {
    let dir = fixture();
    let d = dir.path();
    let metrics = attempt_dir(d, QUESTION, CONDITION, 1).join("metrics.json");
    edit(&metrics, |m| m["queries_ok"] = 2.into());
    forge_attempt(d, QUESTION, CONDITION, 1, |a| a.queries = 2);
    refused_everywhere(
        d,
        "attempt-1/metrics.json: queries_ok is 2, but calls.json gives 1: one of them was edited",
    );
    let dir = fixture();
    let d = dir.path();
    // Evidence of a block planted where the server answered a query.
    let metrics = attempt_dir(d, FAILED, CONDITION, 1).join("metrics.json");
    edit(&metrics, |m| {
        m["startup_error"] = "connection refused".into()
    });
    forge_attempt(d, FAILED, CONDITION, 1, |a| {
        a.blocked = true;
        a.blocked_reason = Some("connection refused".into());
        a.notes
            .push("the server was unreachable at startup: connection refused".into());
    });
    refused_everywhere(
        d,
        "attempt-1/metrics.json: startup_error is set (the server was never reached), but its \
         tools_offered gives [\"get_descendants\",",
    );
    // ... and with the tools offered cut down to the submission, by the
    // call the server answered.
    edit(&metrics, |m| {
        m["tools_offered"] = serde_json::json!(["submit_csv"])
    });
    let forwarded = calls(&attempt_dir(d, FAILED, CONDITION, 1))
        .iter()
        .filter(|c| c["forwarded"] == true)
        .count();
    refused_everywhere(
        d,
        &format!(
            "attempt-1/metrics.json: startup_error is set (the server was never reached), but \
             calls.json gives {forwarded} call(s) forwarded to the server"
        ),
    );
    let dir = fixture();
    let d = dir.path();
    let episode = attempt_dir(d, QUESTION, CONDITION, 1).join("episode.json");
    let usage = serde_json::json!({
        "source": "agent.json", "cost_usd": 0.5, "input_tokens": 10, "output_tokens": 5,
        "cache_creation_input_tokens": null, "cache_read_input_tokens": null,
        "num_turns": 3, "api_s": 1.0
    });
    edit(&episode, |e| e["usage"] = usage.clone());
    forge_attempt(d, QUESTION, CONDITION, 1, |a| {
        a.usage = Some(serde_json::from_value(usage.clone()).unwrap())
    });
    refused_everywhere(
        d,
        "attempt-1/episode.json: usage is {\"source\":\"agent.json\",\"cost_usd\":0.5",
    );
}

/// Issue 24, item 7: `identity.repeat` edited from 3 to 2 made `rescore`
/// drop attempt 3 of every question, exit 0. Refused, with nothing
/// rewritten, as every loader refuses it.
#[test]
fn rescore_refuses_attempts_beyond_an_edited_repeat() {
    let dir = fixture();
    let d = dir.path();
    edit(&condition_path(d, CONDITION), |c| {
        c["identity"]["repeat"] = 2.into()
    });
    let before = snapshot(d);
    let text = exits(d, &["rescore", "runs-demo"], 2);
    assert!(
        text.contains(&format!(
            "{QUESTION}_results/{CONDITION}/attempt-3: attempt 3, but the condition has 2 \
             attempts a question (identity.repeat in its condition file)"
        )),
        "{text}"
    );
    assert!(text.contains("nothing was re-scored"), "{text}");
    assert_eq!(snapshot(d), before, "rescore wrote files");
    refused_everywhere(
        d,
        &format!(
            "{QUESTION}_results/{CONDITION}/result.json: lists attempt 3, but the condition has \
             2 attempts a question"
        ),
    );
}

/// `freeze --reason published runs-demo` in `d`, which must succeed.
fn freeze(d: &Path) {
    exits(d, &["freeze", "--reason", "published", "runs-demo"], 0);
}

/// Issue 24, item 9: a frozen root's README edited by hand, and `build
/// --check` said all current. A frozen root's generated files are
/// compared with what its records give, never rewritten: the difference
/// is named by `build --check` and `build` (exit 1).
#[test]
fn a_hand_edit_of_a_frozen_roots_generated_files_is_stale_and_kept() {
    let dir = fixture();
    let d = dir.path();
    exits(d, &["build"], 0);
    freeze(d);
    // The site says the root is frozen.
    exits(d, &["build"], 0);
    exits(d, &["build", "--check"], 0);
    let question_summary = format!("runs-demo/{QUESTION}_results/summary.csv");
    for file in [
        "runs-demo/README.md",
        "runs-demo/summary.csv",
        question_summary.as_str(),
        "runs-demo/README.html",
    ] {
        let path = d.join(file);
        let old = std::fs::read(&path).unwrap();
        let mut edited = old.clone();
        edited.extend_from_slice(b"a hand edit\n");
        std::fs::write(&path, &edited).unwrap();
        let line = format!("stale     {file} (in a frozen root)\n");
        let text = exits(d, &["build", "--check"], 1);
        assert!(text.contains(&line), "{file}:\n{text}");
        assert!(
            text.contains("build never rewrites a frozen root"),
            "{text}"
        );
        let text = exits(d, &["build"], 1);
        assert!(text.contains(&line), "{file}:\n{text}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            edited,
            "build rewrote {file}"
        );
        std::fs::write(&path, &old).unwrap();
        exits(d, &["build", "--check"], 0);
    }
}

/// Issue 24, item 14: the hand exclusion `docs/FORMAT.md` documents
/// (remove the question from `conditions/NAME.json`, add it to
/// `meta.excluded`, `rescore`) left `report` and the README saying the
/// condition was unfinished ("a run was interrupted"), and `freeze`
/// refused the root. The recipe, end to end, `freeze` included.
#[test]
fn the_hand_exclusion_recipe_leaves_a_finished_root_that_freezes() {
    let dir = fixture();
    let d = dir.path();
    edit(&condition_path(d, CONDITION), |c| {
        c["questions"].as_object_mut().unwrap().remove(QUESTION);
        c["meta"]["excluded"] = serde_json::json!([
            {"id": QUESTION, "reason": "its answer key is under review"}
        ]);
    });
    let text = exits(d, &["rescore", "runs-demo"], 0);
    assert!(!text.contains("unfinished"), "{text}");
    let condition: ConditionFile = read_json(&condition_path(d, CONDITION));
    assert!(!condition.questions.contains_key(QUESTION));
    assert_eq!(condition.identity.excluded, [QUESTION]);
    let text = exits(d, &["report", "runs-demo"], 0);
    for word in ["unfinished", "interrupted"] {
        assert!(!text.contains(word), "report says '{word}':\n{text}");
    }
    // Read whole: a line is wrapped within 100 columns (issue 26, section 3).
    let joined = crate::support::flat(&text);
    assert!(
        joined.contains(&format!(
            "{CONDITION}: excluded {QUESTION} (its answer key is under review)"
        )),
        "{text}"
    );
    let readme = std::fs::read_to_string(d.join("runs-demo/README.md")).unwrap();
    assert!(!readme.contains("Unfinished"), "{readme}");
    assert!(!readme.contains("interrupted"), "{readme}");
    exits(d, &["build"], 0);
    let text = exits(d, &["freeze", "--reason", "published", "runs-demo"], 0);
    assert!(text.contains("runs-demo is frozen: published"), "{text}");
    exits(d, &["build"], 0);
    exits(d, &["build", "--check"], 0);
    // The question's folders under the condition are kept, as recorded.
    assert!(attempt_dir(d, QUESTION, CONDITION, 1).is_dir());
}

/// `okn-benchmark run` of the first question of `demo/benchmarks-single`
/// into `out` by the scripted oracle, with `extra` flags; it must exit
/// `code`. Its stdout and stderr together.
#[track_caller]
fn run_single(out: &Path, extra: &[&str], code: i32) -> String {
    let o = okn()
        .args([
            "run",
            "--corpus",
            "demo/benchmarks-single",
            "--kg-hint",
            "tags",
            "--profile",
            "profiles/demo-kg.local.toml",
            "--tools",
            "all-tools",
            "--agent",
            "scripted:oracle",
            "--limit",
            "1",
            "--out",
            out.to_str().unwrap(),
        ])
        .args(extra)
        .output()
        .unwrap();
    let text = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(code), "{text}");
    text
}

/// The condition folder [`run_single`] records its one question in.
const SINGLE: &str = "biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named";

/// Issue 24, item 15: an attempt recorded before `episode.json` existed,
/// judged from the episode recovered from `agent.json` (its entry in
/// `result.json` carries the note `RECOVERED_NOTE`), was honoured only in
/// memory. Such an attempt is judged from that episode (its wall time the
/// host's `duration_ms`, its attempt its folder's), read-only by `report`
/// and `build`, and `rescore`, and `run --resume` reusing it, record it on
/// disk as `episode.json` with `"source": "agent.json"`, as
/// `docs/FORMAT.md` says.
#[test]
fn an_episode_recovered_from_agent_json_is_recorded_with_its_source() {
    let note = okn_benchmark::runs::recorded::RECOVERED_NOTE;
    let dir = fixture();
    let d = dir.path();
    let attempt = attempt_dir(d, QUESTION, CONDITION, 2);
    let episode = attempt.join("episode.json");
    std::fs::remove_file(&episode).unwrap();
    let report: Value = read_json(&attempt.join("agent.json"));
    let wall_s = report["duration_ms"].as_f64().unwrap() / 1000.0;
    // As the judge of that time recorded it: the note, and the agent's
    // clock for its wall time.
    forge_attempt(d, QUESTION, CONDITION, 2, |a| {
        a.notes.insert(0, note.into());
        a.wall_s = wall_s;
    });
    // `report` and `build` judge it so, and never write into the attempt.
    let before = snapshot(&attempt);
    exits(d, &["report", "runs-demo"], 0);
    exits(d, &["build"], 0);
    exits(d, &["build", "--check"], 0);
    assert_eq!(
        snapshot(&attempt),
        before,
        "a reader wrote into the attempt"
    );
    assert!(!episode.exists(), "a reader wrote episode.json");

    exits(d, &["rescore", "runs-demo"], 0);
    let recorded: Value = read_json(&episode);
    assert_eq!(recorded["source"], "agent.json", "{recorded}");
    assert_eq!(recorded["attempt"], 2, "{recorded}");
    assert_eq!(recorded["wall_s"], wall_s, "agent.json's duration_ms");
    assert_eq!(recorded["agent"], report["agent"], "{recorded}");
    assert_eq!(recorded["exit_code"], Value::Null, "{recorded}");
    let result: QuestionResult = read_json(&result_path(d, QUESTION, CONDITION));
    assert_eq!(result.attempts[1].attempt, 2);
    assert_eq!(result.attempts[1].notes[0], note);
    assert_eq!(result.attempts[1].wall_s, wall_s);
    exits(d, &["build"], 0);
    exits(d, &["build", "--check"], 0);
    // What was recorded must be what agent.json gives.
    edit(&episode, |e| e["wall_s"] = (wall_s * 2.0).into());
    refused_everywhere(
        d,
        "attempt-2/episode.json: the episode recovered from agent.json is",
    );

    // `run --resume` reusing one records it too.
    let keep = tempfile::tempdir().unwrap();
    let out = keep.path().join("runs");
    run_single(&out, &[], 0);
    let attempt = out.join(format!("{SINGLE}/attempt-1"));
    std::fs::remove_file(attempt.join("episode.json")).unwrap();
    let report: Value = read_json(&attempt.join("agent.json"));
    let wall_s = report["duration_ms"].as_f64().unwrap() / 1000.0;
    edit(&out.join(format!("{SINGLE}/result.json")), |r| {
        r["attempts"][0]["notes"]
            .as_array_mut()
            .unwrap()
            .insert(0, note.into());
    });
    let text = run_single(&out, &["--resume"], 0);
    assert!(text.contains(", 0 ran, 1 resumed,"), "{text}");
    let recorded: Value = read_json(&attempt.join("episode.json"));
    assert_eq!(recorded["source"], "agent.json", "{recorded}");
    assert_eq!(recorded["attempt"], 1, "{recorded}");
    assert_eq!(recorded["wall_s"], wall_s, "{recorded}");
    let result: QuestionResult = read_json(&out.join(format!("{SINGLE}/result.json")));
    assert_eq!(result.attempts[0].notes[0], note);
    assert_eq!(result.attempts[0].wall_s, wall_s);
    let o = okn()
        .args(["report", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A second resume reuses it as recorded.
    let text = run_single(&out, &["--resume"], 0);
    assert!(text.contains(", 0 ran, 1 resumed,"), "{text}");
}

/// Issue 24, item 15 (with "Never print a number you could not honestly
/// compute"): an attempt its record says was judged from an episode
/// recovered from `agent.json`, without `episode.json`, whose `agent.json`
/// cannot give a wall time (no `duration_ms`, one that is no number of
/// milliseconds, not the host's JSON, empty, gone) is damage: refused by
/// name by every loader and `rescore`, which writes nothing, and kept by
/// `run --resume`, which neither makes one up nor plays it again.
#[test]
fn a_recovered_attempt_whose_agent_json_gives_no_wall_time_is_damage() {
    let note = okn_benchmark::runs::recorded::RECOVERED_NOTE;
    let dir = fixture();
    let d = dir.path();
    let attempt = attempt_dir(d, QUESTION, CONDITION, 2);
    std::fs::remove_file(attempt.join("episode.json")).unwrap();
    forge_attempt(d, QUESTION, CONDITION, 2, |a| {
        a.notes.insert(0, note.into())
    });
    let agent = attempt.join("agent.json");
    let pristine = std::fs::read(&agent).unwrap();
    let mut report: Value = serde_json::from_slice(&pristine).unwrap();
    report.as_object_mut().unwrap().remove("duration_ms");
    let without = serde_json::to_vec(&report).unwrap();
    report["duration_ms"] = "61".into();
    let text_ms = serde_json::to_vec(&report).unwrap();
    report["duration_ms"] = (-61.0).into();
    let negative = serde_json::to_vec(&report).unwrap();
    let cases: [(Option<&[u8]>, &str); 6] = [
        (Some(&without), "attempt-2/agent.json: holds no duration_ms"),
        (Some(&text_ms), "attempt-2/agent.json: holds no duration_ms"),
        (
            Some(&negative),
            "attempt-2/agent.json: holds no duration_ms",
        ),
        (
            Some(b"[61.0]\n"),
            "attempt-2/agent.json: holds no duration_ms",
        ),
        (
            Some(b"{\"type\": \"result\", \"dura"),
            "attempt-2/agent.json:1:",
        ),
        (None, "attempt-2/agent.json: missing"),
    ];
    for (i, (bytes, named)) in cases.into_iter().enumerate() {
        match bytes {
            Some(bytes) => std::fs::write(&agent, bytes).unwrap(),
            None => std::fs::remove_file(&agent).unwrap(),
        }
        let before = snapshot(d);
        let text = exits(d, &["rescore", "runs-demo"], 2);
        assert!(text.contains(named), "{named}:\n{text}");
        assert!(
            text.contains("its wall time can only be agent.json's duration_ms"),
            "{text}"
        );
        assert_eq!(snapshot(d), before, "rescore wrote files");
        if i == 0 {
            refused_everywhere(d, named);
        }
    }
    std::fs::write(&agent, &pristine).unwrap();
    exits(d, &["rescore", "runs-demo"], 0);
    assert!(attempt.join("episode.json").is_file());

    // `run --resume` keeps it, naming why.
    let keep = tempfile::tempdir().unwrap();
    let out = keep.path().join("runs");
    run_single(&out, &[], 0);
    let attempt = out.join(format!("{SINGLE}/attempt-1"));
    std::fs::remove_file(attempt.join("episode.json")).unwrap();
    edit(&out.join(format!("{SINGLE}/result.json")), |r| {
        r["attempts"][0]["notes"]
            .as_array_mut()
            .unwrap()
            .insert(0, note.into());
    });
    edit(&attempt.join("agent.json"), |r| {
        r.as_object_mut().unwrap().remove("duration_ms");
    });
    let before = snapshot(keep.path());
    let text = run_single(&out, &["--resume"], 2);
    assert!(text.contains("its episode cannot be recovered"), "{text}");
    assert!(text.contains("agent.json: holds no duration_ms"), "{text}");
    assert!(
        text.contains("nothing recorded is deleted without --force"),
        "{text}"
    );
    assert_eq!(snapshot(keep.path()), before, "--resume wrote files");
}

/// Issue 24, item 15 (hardened, with item 10): an attempt without its
/// `episode.json` was given one made up from `agent.json` by `rescore` and
/// `run --resume`, a record no episode wrote. Without evidence on disk
/// that it was judged from an episode recovered from `agent.json` (its
/// record's note), a finished attempt missing `episode.json` lost it: it is
/// damage, refused by name, and nothing is written; `run --resume` neither
/// makes one up nor plays it again, and also refuses an `episode.json`
/// that records another attempt than its folder's.
#[test]
fn a_lost_episode_json_without_a_recorded_recovery_is_damage_never_made_up_from_agent_json() {
    let dir = fixture();
    let d = dir.path();
    let episode = attempt_dir(d, QUESTION, CONDITION, 2).join("episode.json");
    std::fs::remove_file(&episode).unwrap();
    let before = snapshot(d);
    let text = exits(d, &["rescore", "runs-demo"], 2);
    let named = format!("{CONDITION}/attempt-2/episode.json: missing");
    assert!(text.contains(&named), "{text}");
    assert!(
        text.contains("does not say it was judged from an episode recovered from agent.json"),
        "{text}"
    );
    assert_eq!(snapshot(d), before, "rescore wrote files");
    assert!(!episode.exists(), "rescore made up an episode.json");
    refused_everywhere(d, &named);

    // `run --resume` neither makes one up nor plays the attempt again.
    let keep = tempfile::tempdir().unwrap();
    let out = keep.path().join("runs");
    run_single(&out, &[], 0);
    let attempt = out.join(format!("{SINGLE}/attempt-1"));
    let path = attempt.join("episode.json");
    let recorded = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let before = snapshot(keep.path());
    let text = run_single(&out, &["--resume"], 2);
    assert!(
        text.contains(
            "its episode.json is missing, though result.json records the attempt as finished"
        ),
        "{text}"
    );
    assert!(
        text.contains("nothing recorded is deleted without --force"),
        "{text}"
    );
    assert_eq!(snapshot(keep.path()), before, "--resume wrote files");
    // An episode.json of another attempt, in this one's folder.
    let mut moved: Value = serde_json::from_slice(&recorded).unwrap();
    moved["attempt"] = 2.into();
    write_json(&path, &moved);
    let text = run_single(&out, &["--resume"], 2);
    assert!(
        text.contains("its episode.json records attempt 2, but sits in attempt-1"),
        "{text}"
    );
    std::fs::write(&path, &recorded).unwrap();
    let text = run_single(&out, &["--resume"], 0);
    assert!(text.contains(", 0 ran, 1 resumed,"), "{text}");
}

/// Issue 24, item 20: a question id `../../../../../outside/q` in
/// `conditions/NAME.json` made `report` read and write outside the root
/// and `build` write pages outside the project. Every id read from a
/// record is checked as an id before a path is built from it: the
/// condition file is refused by name, and nothing is read or written
/// outside (nor inside).
#[test]
fn an_id_that_leads_out_of_the_root_is_refused_before_any_path_is_built() {
    let dir = fixture();
    let d = dir.path();
    exits(d, &["build"], 0);
    let pristine = std::fs::read(condition_path(d, CONDITION)).unwrap();
    // What `report` would read, and write a summary.csv beside, from
    // `runs-demo/../outside/q_results/`.
    crate::support::fixture::copy_dir(
        &d.join(format!("runs-demo/{QUESTION}_results")),
        &d.join("outside/q_results"),
    );
    std::fs::remove_file(d.join("outside/q_results/summary.csv")).unwrap();
    for bad in [
        "../outside/q",
        "../../../../outside/q",
        "sub/../../outside/q",
        "/tmp/outside/q",
        "sub//q",
        "./q",
        "sub\\..\\q",
        "q\u{0}",
    ] {
        edit(&condition_path(d, CONDITION), |c| {
            let questions = c["questions"].as_object_mut().unwrap();
            let summary = questions.remove(QUESTION).unwrap();
            questions.insert(bad.to_string(), summary);
        });
        let named = format!(
            "{CONDITION}.json: questions: '{}' is not an id",
            bad.escape_debug()
        );
        refused_everywhere(d, &named);
        let text = exits(d, &["rescore", "runs-demo"], 2);
        assert!(text.contains(&named), "{text}");
        assert!(!d.join("outside/q_results/summary.csv").exists(), "{bad}");
        assert!(!d.join("outside/q.html").exists(), "{bad}");
        std::fs::write(condition_path(d, CONDITION), &pristine).unwrap();
    }
    // A condition name is a name: a file `conditions/...json` names `..`.
    std::fs::copy(
        condition_path(d, CONDITION),
        d.join("runs-demo/conditions/...json"),
    )
    .unwrap();
    refused_everywhere(
        d,
        "conditions/...json: its name is no condition name: '..' is not a name",
    );
}

/// Makes a named pipe at `path`, in place of what is there.
#[cfg(unix)]
fn fifo(path: &Path) {
    if path.is_dir() {
        std::fs::remove_dir_all(path).unwrap();
    } else if path.exists() {
        std::fs::remove_file(path).unwrap();
    }
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

/// Issue 24, item 21: a `prompt.txt` linked to a file outside the root
/// published that file's first paragraph on the README, the site and the
/// search index, and `merge` dropped symlinked files without a word. A
/// symbolic link inside a runs root is damage, named, wherever it is.
#[cfg(unix)]
#[test]
fn a_symbolic_link_inside_a_runs_root_is_damage() {
    let dir = fixture();
    let d = dir.path();
    exits(d, &["build"], 0);
    let secret = d.join("secret.txt");
    std::fs::write(&secret, "SECRET-PARAGRAPH from outside the root\n\nmore\n").unwrap();
    let attempt = attempt_dir(d, QUESTION, CONDITION, 1);
    for (file, target) in [
        ("prompt.txt", secret.clone()),
        (
            "calls.json",
            attempt_dir(d, QUESTION, CONDITION, 2).join("calls.json"),
        ),
        ("notes.txt", secret.clone()),
    ] {
        let path = attempt.join(file);
        let old = std::fs::read(&path).ok();
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(&target, &path).unwrap();
        refused_everywhere(
            d,
            &format!("attempt-1/{file}: a symbolic link, not the file itself"),
        );
        assert!(path.is_symlink(), "{file} was replaced");
        std::fs::remove_file(&path).unwrap();
        if let Some(old) = old {
            std::fs::write(&path, old).unwrap();
        }
    }
    for entry in walkdir::WalkDir::new(d) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() && entry.path() != secret {
            let bytes = std::fs::read(entry.path()).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains("SECRET-PARAGRAPH"),
                "{} holds the linked file's text",
                entry.path().display()
            );
        }
    }
    exits(d, &["build", "--check"], 0);
}

/// Issue 24, item 22: a named pipe as `calls.json` or `prompt.txt` hung
/// `report --lenient`, `build --check`, `rescore` and `merge`, and a named
/// pipe as an image hung `build --check`. Only regular files are opened:
/// each command ends, naming the file.
#[cfg(unix)]
#[test]
fn a_named_pipe_where_a_recorded_file_belongs_never_hangs() {
    let dir = fixture();
    let d = dir.path();
    exits(d, &["build"], 0);
    let attempt = format!("runs-demo/{QUESTION}_results/{CONDITION}/attempt-1");
    let result = format!("runs-demo/{QUESTION}_results/{CONDITION}/result.json");
    let truth = format!("runs-demo/{QUESTION}_results/ground_truth.csv");
    let condition = format!("runs-demo/conditions/{CONDITION}.json");
    for file in [
        format!("{attempt}/calls.json"),
        format!("{attempt}/prompt.txt"),
        format!("{attempt}/agent.json"),
        format!("{attempt}/answer.csv"),
        result,
        truth,
        condition,
    ] {
        let path = d.join(&file);
        let old = std::fs::read(&path).unwrap();
        fifo(&path);
        let named = format!("{file}: not a regular file (a named pipe, socket or device)");
        refused_everywhere(d, &named);
        let text = exits(d, &["rescore", "runs-demo"], 2);
        assert!(text.contains(&named), "{text}");
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, old).unwrap();
    }
    exits(d, &["build", "--check"], 0);
    // An image a page inlines.
    fifo(&d.join("docs/dot.svg"));
    let text = exits(d, &["build", "--check"], 1);
    assert!(
        text.contains("README.md: image 'docs/dot.svg' not found"),
        "{text}"
    );
    assert!(text.contains("stale     README.html"), "{text}");
}

/// Runs `okn-benchmark ARGS` in `d` as an unprivileged user when this
/// test runs as root (who reads any file), through `setpriv`; `None` when
/// it cannot (no `setpriv`).
#[cfg(unix)]
fn unprivileged(d: &Path, args: &[&str]) -> Option<std::process::Output> {
    let bin = assert_cmd::cargo::cargo_bin("okn-benchmark");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some(
            std::process::Command::new(bin)
                .args(args)
                .current_dir(d)
                .output()
                .unwrap(),
        );
    }
    let status = std::process::Command::new("setpriv").arg("--help").output();
    if status.is_err() {
        return None;
    }
    // The unprivileged user must reach the fixture.
    use std::os::unix::fs::PermissionsExt;
    for entry in walkdir::WalkDir::new(d) {
        let entry = entry.unwrap();
        if entry.file_type().is_dir() {
            std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        }
    }
    Some(
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin)
            .args(args)
            .current_dir(d)
            .output()
            .unwrap(),
    )
}

/// Issue 24, item 23: an unreadable `prompt.txt` read as "no prompt.txt
/// recorded", exit 0. Unreadable is damage, exit 2, the file named.
#[cfg(unix)]
#[test]
fn an_unreadable_prompt_is_damage_not_a_prompt_never_recorded() {
    use std::os::unix::fs::PermissionsExt;
    let dir = fixture();
    let d = dir.path();
    let prompt = attempt_dir(d, QUESTION, CONDITION, 1).join("prompt.txt");
    let text = std::fs::read(&prompt).unwrap();
    std::fs::remove_file(&prompt).unwrap();
    std::fs::create_dir(&prompt).unwrap();
    refused_everywhere(
        d,
        "attempt-1/prompt.txt: a folder, where a file was expected",
    );
    std::fs::remove_dir(&prompt).unwrap();
    std::fs::write(&prompt, text).unwrap();
    std::fs::set_permissions(&prompt, std::fs::Permissions::from_mode(0o000)).unwrap();
    match unprivileged(d, &["report", "runs-demo"]) {
        Some(o) => {
            assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
            assert!(
                stderr(&o).contains("attempt-1/prompt.txt: cannot read: permission denied"),
                "{}",
                stderr(&o)
            );
        }
        // The suite must not pass by skipping (support::tool's rule).
        None => panic!(
            "running as root without setpriv (util-linux), a file cannot be made unreadable: \
             install util-linux"
        ),
    }
}

/// Issue 24, item 32: a root recorded with `--ground-truth DIR` read
/// another folder's verification log (the corpus's own), where
/// `docs/FORMAT.md` promised none. The condition records the folder, and
/// `report` says what that folder's log says.
#[test]
fn a_root_recorded_with_ground_truth_dir_reports_that_folders_verification() {
    let keep = tempfile::tempdir().unwrap();
    let gt = keep.path().join("gt");
    crate::support::fixture::copy_dir(
        &crate::support::repo().join("demo/benchmarks-single/ground-truth"),
        &gt,
    );
    let _ = std::fs::remove_file(gt.join(".verified.json"));
    let out = keep.path().join("runs");
    let o = okn()
        .args([
            "run",
            "--corpus",
            "demo/benchmarks-single",
            "--ground-truth",
            gt.to_str().unwrap(),
            "--kg-hint",
            "tags",
            "--profile",
            "profiles/demo-kg.local.toml",
            "--tools",
            "all-tools",
            "--agent",
            "scripted:oracle",
            "--limit",
            "2",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let condition: ConditionFile =
        read_json(&out.join("conditions/demo-kg-all-tools__kg-named.json"));
    assert_eq!(condition.settings.ground_truth.as_deref(), gt.to_str());
    let report = || {
        let o = okn()
            .args(["report", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        // The ground-truth line, last, wrapped within 100 columns
        // (issue 26, section 3): read back as one line.
        let text = stdout(&o);
        let at = text.rfind("ground truth (").unwrap();
        text[at..].split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let line = report();
    assert!(
        line.starts_with(&format!(
            "ground truth ({}): never verified against its endpoint",
            gt.display()
        )),
        "{line}"
    );
    assert!(line.contains(" --ground-truth "), "{line}");
    let o = okn()
        .args([
            "reference",
            "--corpus",
            "demo/benchmarks-single",
            "--ground-truth",
            gt.to_str().unwrap(),
            "--verify",
            "--limit",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let line = report();
    assert!(
        line.starts_with(&format!("ground truth ({}): last verified ", gt.display())),
        "{line}"
    );
    assert!(line.ends_with(": 2 of 2 questions, all matched"), "{line}");
    // A folder gone from here is said not to be known.
    std::fs::remove_dir_all(&gt).unwrap();
    let line = report();
    assert_eq!(
        line,
        format!(
            "ground truth ({}): verification not known: the folder the ground truth was read \
             from (--ground-truth) is not a folder from here",
            gt.display()
        )
    );
}

/// Issue 24, item 6 (hardened): `answer.csv` edited by hand, then
/// `rescore`, published a verdict no episode gave (the missing row added:
/// exact). The answer judged is tied to the one the episode submitted, the
/// last `submit_csv` call `calls.json` records: an `answer.csv` that
/// differs, or that no call saved, is damage, refused by name, and
/// `rescore` writes nothing.
#[test]
fn an_answer_edited_by_hand_is_refused_never_judged_again() {
    let dir = fixture();
    let d = dir.path();
    let key = d.join(format!("runs-demo/{MISSED}_results/ground_truth.csv"));
    let answer = attempt_dir(d, MISSED, CONDITION, 1).join("answer.csv");
    let recorded = std::fs::read(&answer).unwrap();
    std::fs::copy(&key, &answer).unwrap();
    let before = snapshot(d);
    let text = exits(d, &["rescore", "runs-demo"], 2);
    let submitted = calls(&attempt_dir(d, MISSED, CONDITION, 1))
        .iter()
        .rfind(|c| c["tool"] == "submit_csv")
        .map(|c| c["index"].clone())
        .unwrap();
    let named = format!(
        "{MISSED}_results/{CONDITION}/attempt-1/answer.csv: differs from the answer submit_csv \
         call {submitted} of calls.json saved there"
    );
    assert!(text.contains(&named), "{text}");
    assert!(!text.contains("moved"), "{text}");
    assert_eq!(snapshot(d), before, "rescore wrote files");
    refused_everywhere(d, &named);
    std::fs::write(&answer, &recorded).unwrap();
    exits(d, &["report", "runs-demo"], 0);

    // An answer where the episode submitted none (attempt 1 of FAILED).
    let planted = attempt_dir(d, FAILED, CONDITION, 1).join("answer.csv");
    std::fs::copy(
        d.join(format!("runs-demo/{FAILED}_results/ground_truth.csv")),
        &planted,
    )
    .unwrap();
    let text = exits(d, &["rescore", "runs-demo"], 2);
    let named = format!(
        "{FAILED}_results/{CONDITION}/attempt-1/answer.csv: there, though calls.json records \
         no submit_csv call that saved an answer"
    );
    assert!(text.contains(&named), "{text}");
    refused_everywhere(d, &named);
}

/// Issue 24, item 7 (hardened, with item 5): `identity.repeat` raised by
/// hand (3 to 4, no attempt 4 recorded) was accepted by `build`, `report`
/// and `freeze`: a finished root said it held attempts it never played.
/// A `result.json` lacking attempts its identity promises is refused by
/// name (no run was interrupted: the file is written once they are
/// played), and `freeze` refuses the root.
#[test]
fn a_repeat_raised_by_hand_without_its_attempts_is_refused() {
    let dir = fixture();
    let d = dir.path();
    edit(&condition_path(d, CONDITION), |c| {
        c["identity"]["repeat"] = 4.into()
    });
    let named = format!(
        "{QUESTION}_results/{CONDITION}/result.json: lacks 1 of the question's attempts (4), \
         though the condition has 4 attempts a question"
    );
    refused_everywhere(d, &named);
    let before = snapshot(d);
    let text = exits(d, &["freeze", "--reason", "published", "runs-demo"], 2);
    assert!(text.contains(&named), "{text}");
    let text = exits(d, &["rescore", "runs-demo"], 2);
    assert!(
        text.contains(&format!("{QUESTION}_results/{CONDITION}/attempt-4")),
        "{text}"
    );
    assert_eq!(snapshot(d), before, "freeze or rescore wrote files");
    assert!(!d.join("runs-demo/.frozen").exists());
}

/// Issue 24, item 9 (hardened): a generated file deleted from a frozen
/// root (its `README.html`, a question's `summary.csv`) was not reported
/// by `build --check`. It is named missing, by `build --check` and `build`
/// (exit 1), and never written again into the frozen root.
#[test]
fn a_generated_file_deleted_from_a_frozen_root_is_reported_missing() {
    let dir = fixture();
    let d = dir.path();
    exits(d, &["build"], 0);
    freeze(d);
    // The site says the root is frozen.
    exits(d, &["build"], 0);
    exits(d, &["build", "--check"], 0);
    let question_summary = format!("runs-demo/{QUESTION}_results/summary.csv");
    for file in ["runs-demo/README.html", question_summary.as_str()] {
        let path = d.join(file);
        let old = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let line = format!("missing   {file} (in a frozen root)\n");
        let text = exits(d, &["build", "--check"], 1);
        assert!(text.contains(&line), "{file}:\n{text}");
        assert!(
            text.contains("build never rewrites a frozen root"),
            "{text}"
        );
        let text = exits(d, &["build"], 1);
        assert!(text.contains(&line), "{file}:\n{text}");
        assert!(!path.exists(), "build wrote {file} into a frozen root");
        std::fs::write(&path, &old).unwrap();
        exits(d, &["build", "--check"], 0);
    }
}

/// Issue 24, item 7 (hardened, with item 30): members of a record that a
/// flag sets, or that the record's shape fixes, were taken as written: an
/// effort no `--effort` takes, a precision out of `--precision`'s range, a
/// question both listed and excluded, a `result.json` whose
/// `scoring_version` is not its attempts', a member no format has. Each is
/// refused by name (the file and the member) by every command that loads
/// the root, and `rescore` writes nothing.
#[test]
fn record_members_taken_as_written_are_refused_by_name() {
    let dir = fixture();
    let d = dir.path();
    let condition = condition_path(d, CONDITION);
    let result = result_path(d, QUESTION, CONDITION);
    let episode = attempt_dir(d, QUESTION, CONDITION, 1).join("episode.json");
    type Change = fn(&mut Value);
    let cases: [(&Path, Change, &str); 8] = [
        (
            &condition,
            |c| c["identity"]["effort"] = "ultra".into(),
            "identity.effort: 'ultra' is not a level of --effort (low, medium, high, xhigh, max)",
        ),
        (
            &condition,
            |c| c["settings"]["significant_figures"] = 0.into(),
            "settings.significant_figures: 0 is not a precision --precision takes (1 to 30)",
        ),
        (
            &condition,
            |c| c["settings"]["significant_figures"] = 31.into(),
            "settings.significant_figures: 31 is not a precision --precision takes (1 to 30)",
        ),
        (
            &condition,
            |c| {
                c["meta"]["excluded"] =
                    serde_json::json!([{"id": QUESTION, "reason": "under review"}])
            },
            "meta.excluded: question 'spoke-genelab-spoke-okn-spaceflight-disease-genes_cross' \
             is excluded, and listed in questions too",
        ),
        (
            &condition,
            |c| c["verified_by"] = "hand".into(),
            "unknown field `verified_by`",
        ),
        (
            &result,
            |r| r["scoring_version"] = "0.1".into(),
            "result.json: scoring_version is '0.1', but attempt 1 was scored under",
        ),
        (
            &result,
            |r| r["attempts"][0]["checked"] = true.into(),
            "unknown field `checked`",
        ),
        (
            &episode,
            |e| e["reviewed"] = true.into(),
            "unknown field `reviewed`",
        ),
    ];
    for (path, change, named) in cases {
        let old = std::fs::read(path).unwrap();
        edit(path, change);
        let before = snapshot(d);
        // `rescore` derives a `result.json` again from the attempts' files
        // (`docs/FORMAT.md`, "Re-scoring"): the way on for one refused.
        let derived = path == result.as_path();
        let loaders: &[&[&str]] = if derived {
            &[&["report", "runs-demo"], &["build", "--check"]]
        } else {
            &[
                &["report", "runs-demo"],
                &["build", "--check"],
                &["rescore", "runs-demo"],
            ]
        };
        for args in loaders {
            let text = exits(d, args, 2);
            assert!(
                text.contains(named),
                "{args:?} did not name '{named}':\n{text}"
            );
            let file = path.file_name().unwrap().to_str().unwrap();
            assert!(text.contains(file), "{args:?} did not name {file}:\n{text}");
        }
        assert_eq!(snapshot(d), before, "{named}: a command wrote files");
        if derived {
            exits(d, &["rescore", "runs-demo"], 0);
            exits(d, &["report", "runs-demo"], 0);
        }
        std::fs::write(path, old).unwrap();
    }
    exits(d, &["report", "runs-demo"], 0);
}

/// Issue 24, item 23 (hardened): a `prompt.txt` deleted from a finished
/// attempt was accepted silently (the page said no prompt was recorded).
/// The runner writes it before the agent host starts, so its absence is
/// damage, refused by name.
#[test]
fn a_deleted_prompt_is_damage() {
    let dir = fixture();
    let d = dir.path();
    std::fs::remove_file(attempt_dir(d, QUESTION, CONDITION, 1).join("prompt.txt")).unwrap();
    let named = format!("{CONDITION}/attempt-1/prompt.txt: missing");
    refused_everywhere(d, &named);
    let text = exits(d, &["rescore", "runs-demo"], 2);
    assert!(text.contains(&named), "{text}");
}

/// Issue 24, item 9 (hardened, with item 22): a `.frozen` that is not the
/// marker `freeze` writes (a folder, a named pipe, an empty file, one
/// with a blank reason) was taken for an open root by some commands and a
/// frozen one by others, and a named pipe hung them. One rule: it is
/// refused by name by `rescore`, `report` and `build`, nothing hangs and
/// nothing is written.
#[cfg(unix)]
#[test]
fn a_frozen_marker_freeze_never_writes_is_refused_by_name() {
    let dir = fixture();
    let d = dir.path();
    let marker = d.join("runs-demo/.frozen");
    type Plant = fn(&Path);
    let cases: [(Plant, &str); 4] = [
        (|p| std::fs::create_dir(p).unwrap(), "a folder"),
        (fifo, "not a regular file"),
        (
            |p| std::fs::write(p, "").unwrap(),
            "does not read as a freeze marker",
        ),
        (
            |p| std::fs::write(p, "{\"format\": 3, \"reason\": \" \"}\n").unwrap(),
            "its reason is blank",
        ),
    ];
    for (plant, why) in cases {
        plant(&marker);
        let before = snapshot(d);
        for args in [
            &["rescore", "runs-demo"][..],
            &["report", "runs-demo"],
            &["build", "--check"],
        ] {
            let text = exits(d, args, 2);
            assert!(text.contains("runs-demo/.frozen"), "{args:?}:\n{text}");
            assert!(text.contains(why), "{args:?} did not say '{why}':\n{text}");
            assert!(
                text.contains("whether the root is closed cannot be told"),
                "{args:?}:\n{text}"
            );
        }
        assert_eq!(snapshot(d), before, "{why}: a command wrote files");
        if marker.is_dir() {
            std::fs::remove_dir(&marker).unwrap();
        } else {
            std::fs::remove_file(&marker).unwrap();
        }
    }
    exits(d, &["report", "runs-demo"], 0);
}

/// Issue 24, item 21 (hardened): `merge --out` inside one of the shards
/// (or any runs root) wrote a root that its shard then read as part of
/// itself. Refused, naming the root it is inside; nothing is written.
#[test]
fn merge_refuses_an_out_inside_a_runs_root() {
    let dir = fixture();
    let d = dir.path();
    let before = snapshot(d);
    let text = exits(d, &["merge", "--out", "runs-demo/merged", "runs-demo"], 2);
    assert!(
        text.contains("--out runs-demo/merged is inside the runs root"),
        "{text}"
    );
    assert!(!d.join("runs-demo/merged").exists());
    assert_eq!(snapshot(d), before, "merge wrote files");
}

/// Issue 24, item 20 (hardened): text quoted from a record or a flag in
/// an error was written raw to the terminal, so a bidirectional control
/// reordered the line and an escape sequence coloured it. Every error
/// shows them escaped.
#[test]
fn an_error_quoting_a_record_shows_its_control_characters() {
    let dir = fixture();
    let d = dir.path();
    edit(&condition_path(d, CONDITION), |c| {
        let questions = c["questions"].as_object_mut().unwrap();
        let summary = questions.remove(QUESTION).unwrap();
        questions.insert("q\u{202E}x\u{1b}[31m/..".into(), summary);
    });
    let raw = |text: &str| text.contains('\u{202E}') || text.contains('\u{1b}');
    for args in [&["report", "runs-demo"][..], &["rescore", "runs-demo"]] {
        let o = okn_timed(d, args);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let text = stderr(&o);
        assert!(
            text.contains("questions: 'q\\u{202e}x\\u{1b}[31m/..' is not an id"),
            "{args:?}:\n{text}"
        );
        assert!(!raw(&text), "{args:?} wrote a control raw:\n{text:?}");
    }
    // A flag's value, as the command line parser quotes it.
    let o = okn_timed(d, &["run", "--effort", "hi\u{202E}gh\u{1b}[31m"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let text = stderr(&o);
    // (The parser drops an escape sequence itself.)
    assert!(
        text.contains("invalid value 'hi[U+202E]gh' for '--effort <LEVEL>'"),
        "{text}"
    );
    assert!(!raw(&text), "a control written raw:\n{text:?}");
}

/// A red team's finding on issue 24, item 6: an answer replaced in
/// `answer.csv`, `calls.json` and `metrics.json` together (each file
/// agreeing with the others) was judged again by `rescore` with exit 0,
/// and `build` published the new verdict. Under the scoring version and
/// precision an attempt was judged by, its verdict is a function of its
/// files: one that moves is an edit, refused by name with nothing
/// written; `rescore --force` judges the files as they are now.
#[test]
fn a_verdict_that_moves_under_the_contract_it_was_judged_by_is_refused_unless_forced() {
    let dir = fixture();
    let d = dir.path();
    let attempt = attempt_dir(d, QUESTION, CONDITION, 1);
    crate::support::submitted_instead(&attempt, "assay,geneSymbol\nnot,the answer\n");
    let before = snapshot(d);
    let text = exits(d, &["rescore", "runs-demo"], 2);
    assert!(text.contains(&format!("{CONDITION}/attempt-1")), "{text}");
    assert!(
        text.contains("its verdict moves (exact: true -> false"),
        "{text}"
    );
    assert!(text.contains("rescore --force"), "{text}");
    assert_eq!(snapshot(d), before, "a refused rescore wrote files");
    // `report` names the edit and points at restoring, then at --force.
    let text = exits(d, &["report", "runs-demo"], 2);
    assert!(text.contains("rescore --force"), "{text}");
    let text = exits(d, &["rescore", "runs-demo", "--force"], 0);
    assert!(
        text.contains(&format!("{CONDITION}  attempt 1  exact: true -> false")),
        "{text}"
    );
    exits(d, &["build"], 0);
}

/// A red team's finding on issue 24, item 6: attempt folders swapped
/// between two conditions of a root, with each `result.json` broken so
/// that `rescore` rebuilds it, were judged and published as the other
/// condition's. An episode must have been played by the agent its
/// condition names.
#[test]
fn an_attempt_played_under_another_condition_is_refused() {
    let dir = fixture();
    let d = dir.path();
    let attempt = attempt_dir(d, QUESTION, CONDITION, 2);
    let path = attempt.join("episode.json");
    let mut episode: Value = read_json(&path);
    let agent = episode["agent"].as_str().unwrap().to_string();
    assert!(agent.starts_with("scripted:"), "{agent}");
    episode["agent"] = "scripted:oracle".into();
    std::fs::write(&path, serde_json::to_vec_pretty(&episode).unwrap()).unwrap();
    std::fs::write(result_path(d, QUESTION, CONDITION), "{ broken").unwrap();
    let before = snapshot(d);
    let text = exits(d, &["rescore", "runs-demo"], 2);
    assert!(
        text.contains(&format!(
            "{CONDITION}/attempt-2/episode.json: records the agent scripted:oracle, but its \
             condition's identity names {agent}"
        )),
        "{text}"
    );
    assert_eq!(snapshot(d), before, "a refused rescore wrote files");
}

/// A red team's finding on issue 24, item 6: one member of `agent.json`
/// edited (`"is_error": true`) turned attempts that submitted nothing into
/// blocked ones, which leave every rate, and `rescore` took it with exit
/// 0. Whether an attempt is blocked is derived from its files like its
/// verdict: under the contract it was judged by, it may not move.
#[test]
fn a_host_failure_written_into_agent_json_by_hand_is_refused_unless_forced() {
    let dir = fixture();
    let d = dir.path();
    let attempt = attempt_dir(d, QUESTION, NOT_NAMED, 1);
    let path = attempt.join("agent.json");
    let mut report: Value = read_json(&path);
    assert_eq!(report["played"], "no-answer", "{report}");
    report["is_error"] = true.into();
    report["result"] = "API Error: 401 authentication_error".into();
    std::fs::write(&path, serde_json::to_vec(&report).unwrap()).unwrap();
    // With the host report episode.json copies from agent.json forged to
    // agree (runs-root format 4 on), so only the verdict can tell.
    edit(&attempt.join("episode.json"), |e| {
        e["host_report"]["failure"] = serde_json::json!({
            "kind": "authentication",
            "reason": "the agent host reported an error: API Error: 401 authentication_error"
        })
    });
    let before = snapshot(d);
    let text = exits(d, &["rescore", "runs-demo"], 2);
    assert!(text.contains(&format!("{NOT_NAMED}/attempt-1")), "{text}");
    assert!(text.contains("blocked: false -> true"), "{text}");
    assert_eq!(snapshot(d), before, "a refused rescore wrote files");
    // report and build refuse the record it no longer matches.
    exits(d, &["report", "runs-demo"], 2);
    exits(d, &["rescore", "runs-demo", "--force"], 0);
    let result: QuestionResult = read_json(&result_path(d, QUESTION, NOT_NAMED));
    assert!(result.attempts[0].blocked);
}

/// A red team's finding on issue 24, item 6: a consistent forgery of an
/// answer with its `result.json` broken (so that `rescore` rebuilds it and
/// has no verdict of its own to compare) moved the condition's rates with
/// exit 0. Under the contract it was judged by, over the same questions, a
/// condition's rates may not move either.
#[test]
fn rates_that_move_under_the_contract_they_were_judged_by_are_refused_unless_forced() {
    let dir = fixture();
    let d = dir.path();
    let attempt = attempt_dir(d, QUESTION, CONDITION, 1);
    crate::support::submitted_instead(&attempt, "assay,geneSymbol\nnot,the answer\n");
    std::fs::write(result_path(d, QUESTION, CONDITION), "{ broken").unwrap();
    let before = snapshot(d);
    let text = exits(d, &["rescore", "runs-demo"], 2);
    assert!(
        text.contains(&format!("conditions/{CONDITION}.json")),
        "{text}"
    );
    assert!(text.contains("its rates move (exact_rate: "), "{text}");
    assert_eq!(snapshot(d), before, "a refused rescore wrote files");
    exits(d, &["rescore", "runs-demo", "--force"], 0);
}
