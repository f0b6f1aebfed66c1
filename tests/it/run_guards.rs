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

/// A work folder laid out as the repository is for ground truth: the demo
/// graphs at `demo/kg` (where the committed ground truth says it was
/// built from), the single-graph corpus with that ground truth at
/// `corpus`, `okn-benchmark.toml` naming `demo/kg`, and a profile of the
/// demo server over that data at `demo-kg.toml`.
fn work_folder() -> tempfile::TempDir {
    let keep = tempfile::tempdir().unwrap();
    let d = keep.path();
    copy_dir(&repo().join("demo/kg"), &d.join("demo/kg"));
    copy_dir(&repo().join("demo/benchmarks-single"), &d.join("corpus"));
    std::fs::write(
        d.join("okn-benchmark.toml"),
        "[reference]\nendpoint = \"demo/kg\"\n",
    )
    .unwrap();
    std::fs::write(
        d.join("demo-kg.toml"),
        "name = \"demo-kg\"\n\n[upstream]\ntransport = \"stdio\"\ncommand = \"okn-benchmark\"\nargs = [\"kg-server\", \"--data\", \"demo/kg\"]\ncwd = \".\"\n",
    )
    .unwrap();
    keep
}

/// `run` of the oracle over the first question of the work folder's
/// corpus into `runs` (or the `--out` in `extra`), from the work folder,
/// with `extra` flags.
fn oracle_in(d: &Path, extra: &[&str]) -> Output {
    let out: &[&str] = if extra.contains(&"--out") {
        &[]
    } else {
        &["--out", "runs"]
    };
    crate::support::okn_in(d)
        .args([
            "run",
            "--corpus",
            "corpus",
            "--kg-hint",
            "tags",
            "--tools",
            "all-tools",
            "--profile",
            "demo-kg.toml",
            "--agent",
            "scripted:oracle",
            "--limit",
            "1",
        ])
        .args(out)
        .args(extra)
        .output()
        .unwrap()
}

/// Keeps issue 24, item 13: with one label edited in `demo/kg`, `run`
/// judged the oracle's right answer a miss against ground truth built from
/// the old data (exit 0), while `reference` called every record stale.
/// `run` now refuses stale ground truth of every kind the fingerprint
/// covers, by name: other RDF data behind the endpoint, another endpoint,
/// and RDF data it cannot read to tell.
#[test]
fn run_refuses_ground_truth_built_from_other_rdf_data_or_another_endpoint() {
    let keep = work_folder();
    let d = keep.path();
    let id = "biobricks-ice-active-chemicals_single";
    let first = oracle_in(d, &[]);
    assert_status(&first, 0);
    assert!(stdout(&first).contains("exact 1.00"), "{}", stdout(&first));
    let before = snapshot(&d.join("runs"));

    // One label edited in the data the ground truth was built from.
    let ttl = d.join("demo/kg/biobricks-ice.ttl");
    let data = std::fs::read_to_string(&ttl).unwrap();
    std::fs::write(&ttl, data.replace("\"Bisphenol A\"", "\"Bisphenol AF\"")).unwrap();
    for extra in [&[][..], &["--resume"][..], &["--force"][..]] {
        let o = oracle_in(d, extra);
        assert_status(&o, 2);
        assert_eq!(
            stderr(&o),
            format!(
                "error: the cached ground truth of 1 record is stale: {id} (the RDF data of \
                 demo/kg changed after its ground truth was built (or the Oxigraph version \
                 reading it did)). Run 'okn-benchmark reference --corpus corpus' to rebuild it, \
                 then run again\n"
            ),
            "{extra:?}"
        );
        assert_eq!(snapshot(&d.join("runs")), before, "nothing written");
    }
    // reference says the same of it.
    let verify = crate::support::okn_in(d)
        .args([
            "reference",
            "--corpus",
            "corpus",
            "--limit",
            "1",
            "--verify",
        ])
        .output()
        .unwrap();
    assert_status(&verify, 1);

    // The data restored: the same ground truth is current again.
    std::fs::write(&ttl, &data).unwrap();
    let o = oracle_in(d, &["--resume"]);
    assert_status(&o, 0);
    assert!(stdout(&o).contains("0 ran, 1 resumed"), "{}", stdout(&o));

    // Another endpoint named than the one it was built from.
    let url = "http://127.0.0.1:9/sparql";
    let o = oracle_in(d, &["--resume", "--reference-endpoint", url]);
    assert_status(&o, 2);
    assert!(
        stderr(&o).contains(&format!(
            "{id} (it was built from demo/kg (embedded), and the reference endpoint, {url}, is \
             another endpoint or holds other data). Run 'okn-benchmark reference --corpus \
             corpus --endpoint {url}'"
        )),
        "{}",
        stderr(&o)
    );
    // And other RDF data named (a copy with the label edited).
    copy_dir(&d.join("demo/kg"), &d.join("kg-edited"));
    std::fs::write(
        d.join("kg-edited/biobricks-ice.ttl"),
        data.replace("\"Bisphenol A\"", "\"Bisphenol AF\""),
    )
    .unwrap();
    let o = oracle_in(d, &["--resume", "--reference-endpoint", "kg-edited"]);
    assert_status(&o, 2);
    assert!(
        stderr(&o).contains("(it was built from demo/kg (embedded), and the reference endpoint, kg-edited, is another endpoint or holds other data)"),
        "{}",
        stderr(&o)
    );

    // No endpoint configured: the recorded one is checked where it is,
    // and recorded RDF data that is not there cannot be vouched for.
    std::fs::remove_file(d.join("okn-benchmark.toml")).unwrap();
    let o = oracle_in(d, &["--resume"]);
    assert_status(&o, 0);
    std::fs::rename(d.join("demo/kg"), d.join("kg")).unwrap();
    std::fs::write(
        d.join("demo-kg.toml"),
        "name = \"demo-kg\"\n\n[upstream]\ntransport = \"stdio\"\ncommand = \"okn-benchmark\"\nargs = [\"kg-server\", \"--data\", \"kg\"]\ncwd = \".\"\n",
    )
    .unwrap();
    let o = oracle_in(d, &["--out", "runs-moved"]);
    assert_status(&o, 2);
    assert!(
        stderr(&o).contains(&format!(
            "cannot tell whether the ground truth of {id} is current: it was built from the \
             RDF data at demo/kg, which cannot be read from here"
        )),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("name the endpoint it must come from with --reference-endpoint"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("runs-moved").exists(), "nothing recorded");
    let o = oracle_in(d, &["--out", "runs-moved", "--reference-endpoint", "kg"]);
    assert_status(&o, 0);
}
