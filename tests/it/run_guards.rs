//! What `run` refuses so that nothing recorded is lost and nothing is
//! judged by the wrong rule (issue 24, "Resume, merge, run" and "As the
//! format says"): a `--resume` that would delete a recorded attempt, a
//! profile of the same name pointing at another server, ground truth that
//! is stale against its answer key or endpoint, an effort level no CLI
//! takes; and the precision a condition is judged at. Through the real
//! binary, with the scripted agent driving the real proxy in front of the
//! real demo KG server.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::fixture::copy_dir;
use crate::support::{okn, repo, snapshot, stderr, stdout};
use serde_json::Value;

/// `okn-benchmark run ARGS` from the repository folder.
fn run(args: &[&str]) -> Output {
    okn().arg("run").args(args).output().unwrap()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

/// The condition the demo profile and `--kg-hint tags` make.
const NAMED: &str = "demo-kg-all-tools__kg-named";

/// A scratch folder holding a copy of the single-graph demo corpus (its
/// ground truth included) and the path of the runs root to record into.
fn corpus_copy() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let keep = tempfile::tempdir().unwrap();
    let corpus = keep.path().join("corpus");
    copy_dir(&repo().join("demo/benchmarks-single"), &corpus);
    let out = keep.path().join("runs");
    (keep, corpus, out)
}

/// `run` of the demo server over `corpus` into `out`, the graph named,
/// with `extra` flags.
fn scripted(corpus: &Path, out: &Path, extra: &[&str]) -> Output {
    run(&[
        &[
            "--corpus",
            corpus.to_str().unwrap(),
            "--kg-hint",
            "tags",
            "--tools",
            "all-tools",
            "--profile",
            "profiles/demo-kg.local.toml",
            "--out",
            out.to_str().unwrap(),
        ],
        extra,
    ]
    .concat())
}

#[track_caller]
fn assert_status(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
}

/// A question whose two key values sit closer than the snapping tolerance
/// (so no answer value snaps onto either) and that four significant
/// figures cannot tell apart: `decimals-4` answers `1.234` twice.
const PRECISION_RECORD: &str = "#+ summary: Two close values.\n#+ tags:\n#+   - spoke-okn\n\nSELECT ?x WHERE { VALUES ?x { 1.23441 1.23449 } }\n";

/// Keeps issue 24, item 30: `--effort` took any text, and a typo
/// (`hihg`) became part of the condition's identity, so a run with the
/// right word later was refused as "different settings".
#[test]
fn a_mistyped_effort_is_refused_before_it_joins_a_conditions_identity() {
    let (_keep, corpus, out) = corpus_copy();
    let o = scripted(
        &corpus,
        &out,
        &["--agent", "claude", "--effort", "hihg", "--limit", "1"],
    );
    assert_status(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("invalid value 'hihg' for '--effort <LEVEL>'"),
        "{err}"
    );
    assert!(
        err.contains("[possible values: low, medium, high, xhigh, max]"),
        "{err}"
    );
    assert!(!out.exists(), "nothing recorded");
    // Every level the CLI takes is one the flag takes.
    let help = okn().args(["run", "--help"]).output().unwrap();
    assert!(
        stdout(&help).contains("[possible values: low, medium, high, xhigh, max]"),
        "{}",
        stdout(&help)
    );
}

/// Keeps issue 24, item 30: `run` and `rescore` judged at 6 significant
/// figures whatever was wanted (only `score` took `--precision`). Now both
/// take it, the condition records it, a later run at another precision is
/// refused, and loading the root judges at the recorded one.
#[test]
fn run_and_rescore_judge_at_the_precision_they_are_given() {
    let keep = tempfile::tempdir().unwrap();
    let corpus = keep.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("close_t.rq"), PRECISION_RECORD).unwrap();
    let built = okn()
        .arg("reference")
        .arg("--corpus")
        .arg(&corpus)
        .output()
        .unwrap();
    assert_status(&built, 0);
    let out = keep.path().join("runs");
    let at = |precision: &str, extra: &[&str]| {
        scripted(
            &corpus,
            &out,
            &[
                &["--agent", "scripted:decimals-4", "--precision", precision],
                extra,
            ]
            .concat(),
        )
    };
    // At 4 figures 1.234 is each key value; a precision outside 1..=30 is
    // refused as `score` refuses it.
    assert_status(&at("0", &[]), 2);
    assert_status(&at("31", &[]), 2);
    let o = at("4", &[]);
    assert_status(&o, 0);
    assert!(stdout(&o).contains("exact 1.00"), "{}", stdout(&o));
    let condition = out.join(format!("conditions/{NAMED}.json"));
    assert_eq!(json(&condition)["settings"]["significant_figures"], 4);
    let result = out.join(format!("close_t_results/{NAMED}/result.json"));
    assert_eq!(json(&result)["attempts"][0]["exact"], true);
    // report loads it judging again at 4: nothing moved, exit 0.
    let report = okn().arg("report").arg(&out).output().unwrap();
    assert_status(&report, 0);

    // Resumed at the default (6) it would judge one condition by two rules.
    let before = snapshot(&out);
    let o = at("6", &["--resume"]);
    assert_status(&o, 2);
    assert!(
        stderr(&o).contains(&format!(
            "'{NAMED}' was judged at 4 significant figures (settings.significant_figures), and \
             this run asks for --precision 6"
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(snapshot(&out), before, "nothing rewritten");

    // rescore --precision 6 judges again at 6 and records it.
    let o = okn()
        .arg("rescore")
        .arg(&out)
        .args(["--precision", "6"])
        .output()
        .unwrap();
    assert_status(&o, 0);
    assert!(
        stdout(&o).contains(&format!(
            "moved  close_t  {NAMED}  attempt 1  exact: true -> false"
        )),
        "{}",
        stdout(&o)
    );
    assert_eq!(json(&condition)["settings"]["significant_figures"], 6);
    assert_eq!(json(&result)["attempts"][0]["exact"], false);
    // Without the flag, rescore keeps what the condition records.
    let o = okn().arg("rescore").arg(&out).output().unwrap();
    assert_status(&o, 0);
    assert!(
        stdout(&o).contains("1 attempt re-scored, 0 scores moved"),
        "{}",
        stdout(&o)
    );
    assert_eq!(json(&condition)["settings"]["significant_figures"], 6);
    let o = okn()
        .arg("rescore")
        .arg(&out)
        .args(["--precision", "31"])
        .output()
        .unwrap();
    assert_status(&o, 2);
}
