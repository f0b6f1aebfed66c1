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

/// Keeps issue 24, item 10: after a one-word prose fix in a record,
/// `run --resume` deleted that question's recorded attempts and played
/// them again (exit 0, no word): with a real model, paid episodes lost.
/// Nothing recorded is deleted without `--force`: the resumed run is
/// refused, naming each question whose prompt changed and the two ways
/// on; a recorded attempt whose `episode.json` cannot be read is kept the
/// same way (never taken for an unfinished one).
#[test]
fn resume_refuses_to_delete_attempts_whose_prompt_changed() {
    let (_keep, corpus, out) = corpus_copy();
    let oracle = [
        "--agent",
        "scripted:oracle",
        "--limit",
        "2",
        "--repeat",
        "2",
    ];
    assert_status(&scripted(&corpus, &out, &oracle), 0);
    let id = "biobricks-ice-active-chemicals_single";
    let record = corpus.join(format!("{id}.rq"));
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(
        &record,
        text.replacen("that received an Active call", "that got an Active call", 1),
    )
    .unwrap();
    let before = snapshot(&out);
    let o = scripted(&corpus, &out, &[&oracle[..], &["--resume"]].concat());
    assert_status(&o, 2);
    assert_eq!(
        stderr(&o),
        format!(
            "error: --resume would delete 2 recorded attempts of '{NAMED}' to play them again, \
             and nothing recorded is deleted without --force:\n  {id} (attempts 1, 2): its \
             prompt changed (\"For each chemical that received an Active call in at least two \
             …\" is now \"For each chemical that got an Active call in at least two diffe…\")\n\
             Run again with --force to replace the condition (every attempt \
             of it is played again), or record this run into a new runs root with another \
             --out.\n"
        )
    );
    assert_eq!(snapshot(&out), before, "nothing deleted or rewritten");

    // A damaged episode.json of the other question is kept too.
    let other = "fiokg-chemical-manufacturers_single";
    let episode = out.join(format!("{other}_results/{NAMED}/attempt-2/episode.json"));
    std::fs::write(&episode, "{\"format\": 3,").unwrap();
    let before = snapshot(&out);
    let o = scripted(&corpus, &out, &[&oracle[..], &["--resume"]].concat());
    assert_status(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("would delete 3 recorded attempts"), "{err}");
    assert!(
        err.contains(&format!(
            "\n  {other} (attempt 2): its episode.json cannot be read ("
        )),
        "{err}"
    );
    assert_eq!(snapshot(&out), before, "nothing deleted or rewritten");

    // The two ways on: another root, or --force.
    let elsewhere = out.with_file_name("runs-fixed");
    let o = scripted(&corpus, &elsewhere, &oracle);
    assert_status(&o, 0);
    let o = scripted(&corpus, &out, &[&oracle[..], &["--force"]].concat());
    assert_status(&o, 0);
    assert!(
        stdout(&o).contains(&format!("{NAMED}: 2 questions, 4 ran, 0 resumed")),
        "{}",
        stdout(&o)
    );
    let prompt = out.join(format!("{id}_results/{NAMED}/attempt-1/prompt.txt"));
    assert!(
        std::fs::read_to_string(prompt)
            .unwrap()
            .contains("that got an Active call"),
    );
}

/// `demo-kg.toml` of the work folder pointed at another server of the
/// same name: the demo server with its results capped at 5 rows.
const OTHER_SERVER: &str = "name = \"demo-kg\"\n\n[upstream]\ntransport = \"stdio\"\ncommand = \"okn-benchmark\"\nargs = [\"kg-server\", \"--data\", \"demo/kg\", \"--row-limit\", \"5\"]\ncwd = \".\"\n";

/// Keeps issue 24, item 11: `command.txt` was compared with every path
/// masked and the identity held only the server's name, so a profile of
/// the same name pointing at another server reused every attempt and
/// recorded the new server. What the profile resolves to (transport;
/// command, arguments and working folder, or URL) is now part of the
/// condition's identity and of each `episode.json`, and a resumed run
/// against another server is refused by name, saying what differs: from
/// the condition file, from the episodes of an interrupted run (no
/// condition file yet), and, for a root of an older format, from the
/// profile its condition file recorded.
#[test]
fn resume_refuses_attempts_recorded_against_another_server_of_the_same_name() {
    let keep = work_folder();
    let d = keep.path();
    assert_status(&oracle_in(d, &[]), 0);
    let condition = d.join(format!("runs/conditions/{NAMED}.json"));
    let recorded = json(&condition);
    assert_eq!(
        recorded["identity"]["upstream"],
        serde_json::json!({"transport": "stdio", "command": "okn-benchmark", "args": ["kg-server", "--data", "demo/kg"], "cwd": "."})
    );
    let attempt = d.join(format!(
        "runs/biobricks-ice-active-chemicals_single_results/{NAMED}/attempt-1"
    ));
    assert_eq!(
        json(&attempt.join("episode.json"))["upstream"],
        recorded["identity"]["upstream"]
    );
    let original = std::fs::read_to_string(d.join("demo-kg.toml")).unwrap();
    std::fs::write(d.join("demo-kg.toml"), OTHER_SERVER).unwrap();
    let before = snapshot(&d.join("runs"));
    let o = oracle_in(d, &["--resume"]);
    assert_status(&o, 2);
    assert_eq!(
        stderr(&o),
        format!(
            "error: '{NAMED}' already holds a run with different settings:\n  upstream.args: \
             [\"kg-server\",\"--data\",\"demo/kg\"] -> \
             [\"kg-server\",\"--data\",\"demo/kg\",\"--row-limit\",\"5\"]\n\nUse --label NAME \
             to keep them apart, or --force to replace.\n"
        )
    );
    assert_eq!(snapshot(&d.join("runs")), before);

    // Interrupted before its condition file was written: the episodes say.
    std::fs::remove_file(&condition).unwrap();
    let before = snapshot(&d.join("runs"));
    let o = oracle_in(d, &["--resume"]);
    assert_status(&o, 2);
    assert!(
        stderr(&o).contains(
            "biobricks-ice-active-chemicals_single (attempt 1): it was played against another \
             server (upstream.args: [\"kg-server\",\"--data\",\"demo/kg\"] -> \
             [\"kg-server\",\"--data\",\"demo/kg\",\"--row-limit\",\"5\"])"
        ),
        "{}",
        stderr(&o)
    );
    assert_eq!(snapshot(&d.join("runs")), before);

    // Over streamable HTTP, under the same name: another transport.
    let (_server, port) = crate::support::kg_server_http(&[]);
    std::fs::write(
        d.join("demo-kg.toml"),
        format!(
            "name = \"demo-kg\"\n\n[upstream]\ntransport = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
        ),
    )
    .unwrap();
    let o = oracle_in(d, &["--resume"]);
    assert_status(&o, 2);
    assert!(
        stderr(&o).contains(
            "it was played against another server (upstream.transport: 'stdio' -> 'http')"
        ),
        "{}",
        stderr(&o)
    );

    // The same server again: every attempt reused.
    std::fs::write(d.join("demo-kg.toml"), &original).unwrap();
    let o = oracle_in(d, &["--resume"]);
    assert_status(&o, 0);
    assert!(stdout(&o).contains("0 ran, 1 resumed"), "{}", stdout(&o));

    // A root of format 2 holds no upstream: its condition file's profile
    // is what the server is checked against.
    let mut old = json(&condition);
    old["format"] = 2.into();
    old["identity"].as_object_mut().unwrap().remove("upstream");
    std::fs::write(&condition, serde_json::to_string_pretty(&old).unwrap()).unwrap();
    let mut episode = json(&attempt.join("episode.json"));
    episode["format"] = 2.into();
    episode.as_object_mut().unwrap().remove("upstream");
    std::fs::write(
        attempt.join("episode.json"),
        serde_json::to_string_pretty(&episode).unwrap(),
    )
    .unwrap();
    std::fs::write(d.join("demo-kg.toml"), OTHER_SERVER).unwrap();
    let o = oracle_in(d, &["--resume"]);
    assert_status(&o, 2);
    assert!(
        stderr(&o).contains(&format!(
            "'{NAMED}' was recorded against another server than demo-kg.toml resolves to:\n  \
             settings.profile: stdio 'okn-benchmark kg-server --data demo/kg' -> stdio \
             'okn-benchmark kg-server --data demo/kg --row-limit 5'"
        )),
        "{}",
        stderr(&o)
    );
    std::fs::write(d.join("demo-kg.toml"), &original).unwrap();
    let o = oracle_in(d, &["--resume"]);
    assert_status(&o, 0);
    assert!(stdout(&o).contains("0 ran, 1 resumed"), "{}", stdout(&o));
}

/// The preamble digest `probe` prints for the control (the same for every
/// profile).
fn probe_digest() -> String {
    let o = okn()
        .args(["probe", "--profile", "profiles/demo-kg.local.toml"])
        .output()
        .unwrap();
    assert_status(&o, 0);
    stdout(&o)
        .lines()
        .find_map(|l| l.trim().strip_prefix("preamble digest: "))
        .unwrap_or_else(|| panic!("{}", stdout(&o)))
        .to_string()
}

/// Keeps issue 24, item 31: only a sparql-only condition recorded the
/// control's preamble and its digest, and a server reached over HTTP was
/// recorded only as "name version". Every condition now records the
/// shared control's preamble digest (the one `probe` prints), and
/// `settings.server_info` holds what the server said of itself: its MCP
/// `serverInfo` and, over HTTP, the reply headers that name its software
/// or build (the npm reference server says `X-Powered-By: Express`; the
/// demo server sends none).
#[test]
fn every_condition_records_the_preamble_digest_and_what_the_server_reported() {
    let (_keep, corpus, out) = corpus_copy();
    let digest = probe_digest();
    let condition = |name: &str| json(&out.join(format!("conditions/{name}.json")));
    // All-tools over stdio.
    assert_status(
        &scripted(
            &corpus,
            &out,
            &["--agent", "scripted:oracle", "--limit", "1"],
        ),
        0,
    );
    let settings = &condition(NAMED)["settings"];
    assert_eq!(settings["preamble_sha256"], digest.as_str());
    assert!(
        settings["sparql_only_preamble"]
            .as_str()
            .is_some_and(|p| p.contains("biobricks-ice")),
        "{settings}"
    );
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        settings["server_info"],
        serde_json::json!({"name": "okn-demo-kg", "version": version})
    );
    assert_eq!(settings["server_build"], format!("okn-demo-kg {version}"));
    // The control: the same digest.
    let o = run(&[
        "--corpus",
        corpus.to_str().unwrap(),
        "--tools",
        "sparql-only",
        "--kg-hint",
        "tags",
        "--agent",
        "scripted:oracle",
        "--limit",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_status(&o, 0);
    let control = &condition("sparql-only__kg-named")["settings"];
    assert_eq!(control["preamble_sha256"], digest.as_str());
    assert_eq!(control["server_info"], Value::Null);

    // The demo server over streamable HTTP: its serverInfo, no headers.
    let (_server, port) = crate::support::kg_server_http(&["--row-limit", "5"]);
    let profile = out.with_file_name("demo-http.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"demo-http\"\n\n[upstream]\ntransport = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
        ),
    )
    .unwrap();
    let http = |profile: &Path, strategy: &str| {
        run(&[
            "--corpus",
            corpus.to_str().unwrap(),
            "--tools",
            "all-tools",
            "--profile",
            profile.to_str().unwrap(),
            "--kg-hint",
            "tags",
            "--agent",
            strategy,
            "--limit",
            "1",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    assert_status(&http(&profile, "scripted:oracle"), 0);
    let settings = &condition("demo-http-all-tools__kg-named")["settings"];
    assert_eq!(
        settings["server_info"],
        serde_json::json!({"name": "okn-demo-kg", "version": format!("{version}+row-limit.5")})
    );
    assert_eq!(settings["preamble_sha256"], digest.as_str());

    // The npm reference server over streamable HTTP: serverInfo with a
    // title, and the header that names its software.
    let (child, port) = crate::support::serve_on_free_port(|port| {
        let mut command = std::process::Command::new(crate::support::tool("mcp-server-everything"));
        command
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        command
    });
    let _everything = child;
    let profile = out.with_file_name("everything.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"everything\"\n\n[upstream]\ntransport = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ Authorization = \"Bearer s3cret\" }}\n"
        ),
    )
    .unwrap();
    assert_status(&http(&profile, "scripted:no-answer"), 0);
    let file = std::fs::read_to_string(out.join("conditions/everything-all-tools__kg-named.json"))
        .unwrap();
    assert!(!file.contains("s3cret"), "{file}");
    let info = &condition("everything-all-tools__kg-named")["settings"]["server_info"];
    assert_eq!(info["name"], "mcp-servers/everything", "{info}");
    assert_eq!(info["title"], "Everything Reference Server", "{info}");
    assert!(
        info["version"].as_str().is_some_and(|v| !v.is_empty()),
        "{info}"
    );
    assert_eq!(
        info["http_headers"],
        serde_json::json!({"x-powered-by": "Express"}),
        "{info}"
    );
}

/// Keeps issue 24, item 10 (the same fault on another path): with ground
/// truth rebuilt since the root recorded a question, `run --resume` of the
/// one condition there replaced the root's `ground_truth.json` and judged
/// the recorded episodes against a key they never answered (`rescore`
/// refuses exactly that). It is refused now, and only `--force` replaces
/// the attempts; a recorded ground truth that cannot be read is damage,
/// named, never overwritten.
#[test]
fn resume_refuses_to_rejudge_recorded_attempts_by_ground_truth_rebuilt_since() {
    let (_keep, corpus, out) = corpus_copy();
    let oracle = ["--agent", "scripted:oracle", "--limit", "1"];
    assert_status(&scripted(&corpus, &out, &oracle), 0);
    let id = "biobricks-ice-active-chemicals_single";
    let record = corpus.join(format!("{id}.rq"));
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(&record, format!("{}\nLIMIT 1\n", text.trim_end())).unwrap();
    let built = okn()
        .arg("reference")
        .arg("--corpus")
        .arg(&corpus)
        .args(["--limit", "1"])
        .output()
        .unwrap();
    assert_status(&built, 0);
    let before = snapshot(&out);
    let o = scripted(&corpus, &out, &[&oracle[..], &["--resume"]].concat());
    assert_status(&o, 2);
    assert_eq!(
        stderr(&o),
        format!(
            "error: the ground truth of {id} changed since {} recorded it (its answer key, \
             endpoint or rows changed), and the attempts of '{NAMED}' there answered the old \
             one: --force replaces them, or record this run into a new root\n",
            out.display()
        )
    );
    assert_eq!(snapshot(&out), before, "nothing replaced");
    // A recorded ground truth that cannot be read is named, not replaced.
    let recorded = out.join(format!("{id}_results/ground_truth.json"));
    std::fs::write(&recorded, "{").unwrap();
    let o = scripted(&corpus, &out, &[&oracle[..], &["--resume"]].concat());
    assert_status(&o, 2);
    assert!(
        stderr(&o).starts_with(&format!("error: {}", recorded.display())),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&recorded).unwrap(), "{");
    let o = scripted(&corpus, &out, &[&oracle[..], &["--force"]].concat());
    assert_status(&o, 2);
    std::fs::remove_file(&recorded).unwrap();
    let o = scripted(&corpus, &out, &[&oracle[..], &["--force"]].concat());
    assert_status(&o, 0);
    assert!(stdout(&o).contains("exact 1.00"), "{}", stdout(&o));
}

/// A profile whose server is configured by an environment value (here
/// its row limit, which it reports in its version).
fn row_limited(limit: &str) -> String {
    let program = env!("CARGO_BIN_EXE_okn-benchmark");
    format!(
        "name = \"demo-kg\"\n\n[upstream]\ntransport = \"stdio\"\ncommand = \"sh\"\nargs = [\"-c\", \
         \"exec '{program}' kg-server --data demo/kg --row-limit $ROWLIM\"]\ncwd = \".\"\nenv = \
         {{ ROWLIM = \"{limit}\" }}\n"
    )
}

/// A red team's finding on issue 24, item 11: environment values are no
/// part of a condition's identity (they may be credentials), so a server
/// configured by one (another row limit) resumed a condition with exit 0,
/// mixing two servers in it, and `settings.server_info` was overwritten
/// with the second's. What the server reports of itself is compared on
/// resume: another self-description is refused, naming both.
#[test]
fn resume_refuses_a_server_that_reports_itself_otherwise() {
    let keep = work_folder();
    let d = keep.path();
    std::fs::write(d.join("demo-kg.toml"), row_limited("1")).unwrap();
    assert_status(&oracle_in(d, &[]), 0);
    let condition = d.join(format!("runs/conditions/{NAMED}.json"));
    let recorded = json(&condition);
    let version = recorded["settings"]["server_info"]["version"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(version.ends_with("+row-limit.1"), "{version}");
    std::fs::write(d.join("demo-kg.toml"), row_limited("100000")).unwrap();
    let before = snapshot(&d.join("runs"));
    let o = oracle_in(d, &["--resume"]);
    assert_status(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "whose attempts were played against a server that reported itself as okn-demo-kg {version}"
        )),
        "{err}"
    );
    assert!(
        err.contains("; the server reports okn-demo-kg 0.1.0+row-limit."),
        "{err}"
    );
    assert_eq!(snapshot(&d.join("runs")), before);
    // The same server resumes.
    std::fs::write(d.join("demo-kg.toml"), row_limited("1")).unwrap();
    assert_status(&oracle_in(d, &["--resume"]), 0);
}

/// Issue 26, section 2: the README's `run` examples named a model, and
/// adding `--agent scripted:skill:85:101` to them was refused ("--model and
/// --effort are for ...") with no way on. A flag that does not apply to
/// the host is refused with the command that works: the same line without
/// it, which runs.
#[test]
fn a_flag_the_host_cannot_honour_is_refused_with_the_command_that_works() {
    let out = tempfile::tempdir().unwrap();
    let root = out.path().join("runs");
    let o = crate::support::okn()
        .args([
            "run",
            "--corpus",
            "demo/benchmarks-single",
            "--tools",
            "all-tools",
        ])
        .args([
            "--kg-hint",
            "tags",
            "--profile",
            "profiles/demo-kg.local.toml",
        ])
        .args(["--agent", "scripted:oracle", "--model", "claude-opus-5"])
        .args(["--effort=high", "--limit", "1", "--out"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = crate::support::stderr(&o);
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("  okn-benchmark "))
        .unwrap_or_else(|| panic!("no command given: {err}"));
    assert!(
        !line.contains("--model") && !line.contains("--effort"),
        "{line}"
    );
    assert!(line.contains("--agent scripted:oracle"), "{line}");
    // The command given runs as it is.
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_okn-benchmark"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("okn-benchmark {line}"))
        .env("PATH", path)
        .current_dir(crate::support::repo())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    assert!(
        root.join("conditions/demo-kg-all-tools__kg-named.json")
            .exists()
    );
}
