//! `run`, `report`, `rescore` and `freeze` through the real binary, with the
//! scripted agent (a built-in MCP client, no model) driving the real proxy
//! in front of the real demo KG server, over stdio and streamable HTTP.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{okn, okn_in, processes_mentioning, repo, snapshot, stderr, stdout};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_okn-benchmark");

fn run(args: &[&str]) -> Output {
    okn().arg("run").args(args).output().unwrap()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

fn out_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("runs");
    (dir, out)
}

const DEMO: &[&str] = &[
    "--profile",
    "profiles/demo-kg.local.toml",
    "--tools",
    "all-tools",
];

#[test]
fn an_oracle_over_stdio_is_exact_and_lays_out_the_root_as_documented() {
    let (_keep, out) = out_dir();
    let o = run(&[
        &[
            "--corpus",
            "demo/benchmarks-single",
            "--kg-hint",
            "tags",
            "--agent",
            "scripted:oracle",
            "--limit",
            "3",
            "--out",
            out.to_str().unwrap(),
        ],
        DEMO,
    ]
    .concat());
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("[1/3] biobricks-ice-active-chemicals_single  attempt 1/1"),
        "{text}"
    );
    assert!(text.contains("exact (f1 1.00)"), "{text}");
    assert!(
        text.trim_end()
            .ends_with("exact 1.00 · mean F1 1.00 over 3 questions"),
        "{text}"
    );

    let name = "demo-kg-all-tools__kg-named";
    let condition = json(&out.join(format!("conditions/{name}.json")));
    assert_eq!(condition["format"], 5);
    assert_eq!(condition["identity"]["agent"], "scripted:oracle");
    assert_eq!(condition["identity"]["model"], Value::Null);
    assert_eq!(condition["identity"]["server"], "demo-kg");
    assert_eq!(condition["settings"]["profile"]["transport"], "stdio");
    assert_eq!(
        condition["settings"]["server_build"],
        format!("okn-demo-kg {}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(
        condition["settings"]["reference_endpoint"]["engine"],
        "oxigraph"
    );
    assert_eq!(
        condition["settings"]["scoring_version"],
        okn_benchmark::score::SCORING_VERSION
    );
    assert_eq!(condition["aggregate"]["exact_rate"], 1.0);
    assert_eq!(condition["aggregate"]["questions"], 3);

    let q = out.join("biobricks-ice-active-chemicals_single_results");
    for file in ["ground_truth.csv", "ground_truth.json", "summary.csv"] {
        assert!(q.join(file).is_file(), "{file}");
    }
    let attempt = q.join(name).join("attempt-1");
    for file in [
        "prompt.txt",
        "answer.csv",
        "calls.json",
        "metrics.json",
        "agent.json",
        "command.txt",
        "episode.json",
    ] {
        assert!(attempt.join(file).is_file(), "{file}");
    }
    assert!(attempt.join("cwd").is_dir());
    assert_eq!(
        std::fs::read_dir(attempt.join("cwd")).unwrap().count(),
        0,
        "cwd/ stays empty"
    );
    let prompt = std::fs::read_to_string(attempt.join("prompt.txt")).unwrap();
    assert!(prompt.contains("\n\nUse this knowledge graph: biobricks-ice.\n\nSave the results as a csv file, no prose!\n"), "{prompt}");
    let result = json(&q.join(name).join("result.json"));
    assert_eq!(result["attempts"][0]["exact"], true);
    assert_eq!(
        result["attempts"][0]["tools_called"],
        serde_json::json!(["query", "submit_csv"])
    );

    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(summary.starts_with(
        "question,tier,condition,server,tools,kg_hint,attempt,attempts_total,blocked,exact,ordered,f1,queries,tools_called,wall_s,server_s,notes,cost_usd,input_tokens,output_tokens\n"
    ));
    assert_eq!(summary.lines().count(), 4);
    // report regenerates exactly what run wrote.
    let readme = std::fs::read(out.join("README.md")).unwrap();
    let o = okn()
        .args(["report", out.to_str().unwrap(), "--markdown", "-"])
        .output()
        .unwrap();
    assert_eq!(o.stdout, readme);
}

#[test]
fn the_identity_guard_names_the_first_difference() {
    let (_keep, out) = out_dir();
    let base = |repeat: &str, extra: &[&str]| {
        run(&[
            &[
                "--corpus",
                "demo/benchmarks-single",
                "--kg-hint",
                "tags",
                "--agent",
                "scripted:oracle",
                "--limit",
                "1",
                "--repeat",
                repeat,
                "--out",
                out.to_str().unwrap(),
            ],
            DEMO,
            extra,
        ]
        .concat())
    };
    assert_eq!(base("1", &[]).status.code(), Some(0));
    let o = base("2", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: 'demo-kg-all-tools__kg-named' already holds a run with different settings:\n  repeat: 1 -> 2\n\nUse --label NAME to keep them apart, or --force to replace.\n"
    );
    // The same settings again: recorded attempts are never overwritten silently.
    let o = base("1", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--resume reuses the finished ones, --force replaces them"),
        "{}",
        stderr(&o)
    );
    let o = base("2", &["--label", "twice"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        out.join("conditions/demo-kg-all-tools__kg-named__twice.json")
            .is_file()
    );
    let o = base("2", &["--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        json(&out.join("conditions/demo-kg-all-tools__kg-named.json"))["identity"]["repeat"],
        2
    );
}

#[test]
fn two_tiers_in_one_root_are_caught() {
    let (_keep, out) = out_dir();
    // One corpus holding two tiers, with their ground truth.
    let corpus = out.parent().unwrap().join("mixed");
    std::fs::create_dir_all(corpus.join("ground-truth")).unwrap();
    for (from, id) in [
        ("demo/benchmarks-single", "spoke-okn-ra-treatments_single"),
        (
            "demo/benchmarks-cross",
            "fiokg-spoke-okn-landfill-counties_cross",
        ),
    ] {
        std::fs::copy(
            repo().join(from).join(format!("{id}.rq")),
            corpus.join(format!("{id}.rq")),
        )
        .unwrap();
        for ext in ["csv", "json"] {
            std::fs::copy(
                repo().join(from).join(format!("ground-truth/{id}.{ext}")),
                corpus.join(format!("ground-truth/{id}.{ext}")),
            )
            .unwrap();
        }
    }
    let go = |tier: &str| {
        run(&[
            &[
                "--corpus",
                corpus.to_str().unwrap(),
                "--tier",
                tier,
                "--kg-hint",
                "tags",
                "--agent",
                "scripted:oracle",
                "--out",
                out.to_str().unwrap(),
            ],
            DEMO,
        ]
        .concat())
    };
    assert_eq!(go("single").status.code(), Some(0));
    let o = go("cross");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("  tier: 'single' -> 'cross'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn refused_combinations_stop_before_anything_runs() {
    let (_keep, out) = out_dir();
    let o = run(&[
        "--corpus",
        "demo/benchmarks-single",
        "--tools",
        "sparql-only",
        "--kg-hint",
        "none",
        "--agent",
        "scripted:oracle",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--tools sparql-only with --kg-hint none is refused"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        "--corpus",
        "demo/benchmarks-single",
        "--tools",
        "all-tools",
        "--kg-hint",
        "tags",
        "--agent",
        "scripted:oracle",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        stderr(&o).contains("--tools all-tools needs --profile"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        &[
            "--corpus",
            "demo/benchmarks-single",
            "--kg-hint",
            "tags",
            "--agent",
            "scripted:oracle",
            "--without-tool",
            "get_shema",
            "--out",
            out.to_str().unwrap(),
        ],
        DEMO,
    ]
    .concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("(did you mean 'get_schema'?)"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        &[
            "--corpus",
            "demo/benchmarks-single",
            "--kg-hint",
            "tags",
            "--agent",
            "claude",
            "--model",
            "x",
            "--claude",
            "/nonexistent/claude",
            "--out",
            out.to_str().unwrap(),
        ],
        DEMO,
    ]
    .concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("install the claude CLI"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists(), "nothing was written");

    // Ground truth must exist.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("demo/benchmarks-single/ubergraph-doid-xref_single.rq"),
        dir.path().join("ubergraph-doid-xref_single.rq"),
    )
    .unwrap();
    let o = run(&[
        &[
            "--corpus",
            dir.path().to_str().unwrap(),
            "--kg-hint",
            "tags",
            "--agent",
            "scripted:oracle",
            "--out",
            out.to_str().unwrap(),
        ],
        DEMO,
    ]
    .concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no ground truth for 1 of 1 record (ubergraph-doid-xref_single): run 'okn-benchmark reference"), "{}", stderr(&o));
}

#[test]
fn resume_reuses_finished_attempts_only() {
    let (_keep, out) = out_dir();
    let args = [
        &[
            "--corpus",
            "demo/benchmarks-ontology",
            "--kg-hint",
            "tags",
            "--agent",
            "scripted:oracle",
            "--limit",
            "2",
            "--repeat",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
        DEMO,
    ]
    .concat();
    assert_eq!(run(&args).status.code(), Some(0));
    let name = "demo-kg-all-tools__kg-named";
    let victim = out.join(format!(
        "ubergraph-lung-disease-descendants_ontology_results/{name}/attempt-2"
    ));
    // As a run killed in attempt 2 leaves it: the episode unfinished, and
    // the question's result.json not yet written.
    std::fs::remove_file(victim.join("episode.json")).unwrap();
    std::fs::remove_file(victim.join("agent.json")).unwrap();
    std::fs::remove_file(victim.parent().unwrap().join("result.json")).unwrap();
    let o = run(&[args.clone(), vec!["--resume"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(text.matches("[resumed]").count(), 3, "{text}");
    assert!(
        text.contains(&format!("{name}: 2 questions, 1 ran, 3 resumed")),
        "{text}"
    );
    assert!(victim.join("episode.json").is_file());
}

#[test]
fn a_killed_run_leaves_finished_attempts_intact_and_resumable() {
    let (_keep, out) = out_dir();
    let args = [
        &[
            "run",
            "--corpus",
            "demo/benchmarks-single",
            "--kg-hint",
            "tags",
            "--agent",
            "scripted:oracle",
            "--repeat",
            "3",
            "--out",
            out.to_str().unwrap(),
        ],
        DEMO,
    ]
    .concat();
    let mut child = Command::new(BIN)
        .args(&args)
        .current_dir(repo())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it part-way: after a few attempts have finished.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let finished = walkdir::WalkDir::new(&out)
            .into_iter()
            .flatten()
            .filter(|e| e.file_name() == "episode.json")
            .count();
        if finished >= 5 || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run finished before it could be killed"
    );
    let _ = child.kill();
    let _ = child.wait();
    // The agent host it had started dies with it (no orphan keeps working).
    let marker = out.to_string_lossy().into_owned();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && processes_mentioning(&marker) > 0 {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        processes_mentioning(&marker),
        0,
        "an agent host outlived the killed run"
    );
    assert!(
        !out.join("conditions/demo-kg-all-tools__kg-named.json")
            .exists(),
        "the run was killed before the end"
    );
    // Every attempt with episode.json is whole.
    for entry in walkdir::WalkDir::new(&out)
        .into_iter()
        .flatten()
        .filter(|e| e.file_name() == "episode.json")
    {
        let dir = entry.path().parent().unwrap();
        for file in ["prompt.txt", "command.txt", "agent.json", "metrics.json"] {
            assert!(dir.join(file).is_file(), "{} lacks {file}", dir.display());
        }
        let _: Value = json(entry.path());
    }
    let o = okn().args(&args).arg("--resume").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.matches("[resumed]").count() >= 5, "{text}");
    assert!(
        text.trim_end()
            .ends_with("exact 1.00 · mean F1 1.00 over 12 questions"),
        "{text}"
    );
}

#[test]
fn timeouts_are_recorded_outcomes_and_are_reused() {
    let (_keep, out) = out_dir();
    let args = [
        &[
            "--corpus",
            "demo/benchmarks-single",
            "--kg-hint",
            "tags",
            "--agent",
            "scripted:hang",
            "--limit",
            "1",
            "--agent-timeout",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
        DEMO,
    ]
    .concat();
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("timed out, no answer"),
        "{}",
        stdout(&o)
    );
    let result = json(&out.join(
        "biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named/result.json",
    ));
    assert_eq!(result["attempts"][0]["timed_out"], true);
    assert_eq!(result["attempts"][0]["submitted"], false);
    let started = Instant::now();
    let o = run(&[args.clone(), vec!["--resume"]].concat());
    assert!(stdout(&o).contains("[resumed]"), "{}", stdout(&o));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "not paid for twice"
    );
}

/// A stdio profile whose server starts the first time (`run`'s check
/// before the first episode) and fails every time after: each episode's
/// proxy then meets a server it cannot start.
#[cfg(unix)]
fn a_server_that_starts_once(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("once.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nif [ -e '{flag}' ]; then echo 'the server is gone' >&2; exit 1; fi\ntouch '{flag}'\nexec '{BIN}' kg-server --data '{data}'\n",
            flag = dir.join("started").display(),
            data = repo().join("demo/kg").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let profile = dir.join("once.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"once\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"{}\"\n",
            script.display()
        ),
    )
    .unwrap();
    profile
}

#[cfg(unix)]
#[test]
fn episodes_that_never_reach_the_server_are_blocked_and_a_run_of_nothing_else_exits_1() {
    let (keep, out) = out_dir();
    let profile = a_server_that_starts_once(keep.path());
    let o = run(&[
        "--corpus",
        "demo/benchmarks-single",
        "--kg-hint",
        "tags",
        "--agent",
        "scripted:oracle",
        "--limit",
        "1",
        "--repeat",
        "2",
        "--tools",
        "all-tools",
        "--profile",
        profile.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("attempt 1/2"), "{}", stdout(&o));
    assert!(stdout(&o).contains("  blocked ("), "{}", stdout(&o));
    // The closing line counts the questions the rates average.
    assert!(
        stdout(&o).contains(
            "exact — · mean F1 — over 0 measured questions of 1 (2 blocked attempts left out)"
        ),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("every attempt of once-all-tools__kg-named was blocked"),
        "{}",
        stderr(&o)
    );
    let condition = json(&out.join("conditions/once-all-tools__kg-named.json"));
    assert_eq!(condition["aggregate"]["blocked_attempts"], 2);
    assert_eq!(condition["aggregate"]["measured_nothing"], 1);
    assert_eq!(condition["aggregate"]["exact_rate"], Value::Null);
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(readme.contains("measured nothing ("), "{readme}");
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(
        summary.lines().nth(1).unwrap().contains(",1,2,true,,,,0,"),
        "{summary}"
    );
}

#[test]
fn the_control_and_a_streamable_http_server_side_by_side() {
    let (_keep, out) = out_dir();
    let (_server, port) = crate::support::kg_server_http(&[]);
    let profile = out.parent().unwrap().join("remote.toml");
    std::fs::write(&profile, format!("name = \"demo-kg\"\n[upstream]\ntransport = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n")).unwrap();
    let common = [
        "--corpus",
        "demo/benchmarks-cross",
        "--agent",
        "scripted:oracle",
        "--limit",
        "3",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = run(&[
        &common[..],
        &[
            "--tools",
            "all-tools",
            "--kg-hint",
            "none",
            "--profile",
            profile.to_str().unwrap(),
        ],
    ]
    .concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&[
        &common[..],
        &["--tools", "sparql-only", "--kg-hint", "tags"],
    ]
    .concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let remote = json(&out.join("conditions/demo-kg-all-tools__kg-not-named.json"));
    assert_eq!(remote["settings"]["profile"]["transport"], "http");
    assert_eq!(remote["aggregate"]["exact_rate"], 1.0);
    let control = json(&out.join("conditions/sparql-only__kg-named.json"));
    assert_eq!(control["aggregate"]["exact_rate"], 1.0);
    assert_eq!(control["identity"]["server"], Value::Null);
    assert!(
        control["settings"]["sparql_only_preamble"]
            .as_str()
            .unwrap()
            .contains("Valid graph shortnames")
    );
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        readme.contains("| demo-kg, all tools · KG not named |")
            && readme.contains("| sparql-only · KG named |"),
        "{readme}"
    );
}

/// An oracle run of two demo questions into `out`, which must succeed.
fn two_oracle_questions(out: &Path) {
    let o = scripted(
        out,
        "demo/benchmarks-single",
        &["--agent", "scripted:oracle", "--limit", "2"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn rescore_reports_every_moved_score_and_rewrites_what_depends_on_it() {
    let (_keep, out) = out_dir();
    two_oracle_questions(&out);
    let name = "demo-kg-all-tools__kg-named";
    let first = out.join(format!(
        "biobricks-ice-active-chemicals_single_results/{name}"
    ));
    let second = out.join(format!(
        "fiokg-chemical-manufacturers_single_results/{name}"
    ));
    let readme_before = std::fs::read_to_string(out.join("README.md")).unwrap();
    // The attempt as an episode that submitted another answer records it
    // (answer.csv is the last submit_csv of calls.json: an answer.csv
    // edited alone is refused, issue 24 item 6).
    crate::support::submitted_instead(&first.join("attempt-1"), "wrong\n1\n");
    std::fs::write(second.join("result.json"), "{ not json").unwrap();
    // --force: the verdict moves under the contract it was judged by.
    let o = okn()
        .args(["rescore", out.to_str().unwrap(), "--force"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let q = "biobricks-ice-active-chemicals_single";
    let want = format!(
        "moved  {q}  {name}  attempt 1  exact: true -> false
moved  {q}  {name}  attempt 1  strict_exact: true -> false
moved  {q}  {name}  attempt 1  ordered: true -> false
moved  {q}  {name}  attempt 1  f1: 1.0000 -> 0.0000
moved  {name}  aggregate  exact_rate: 1.0000 -> 0.5000
moved  {name}  aggregate  strict_exact_rate: 1.0000 -> 0.5000
moved  {name}  aggregate  ordered_rate: 1.0000 -> 0.5000
moved  {name}  aggregate  mean_f1: 1.0000 -> 0.5000
unreadable  {}:1: key must be a string at line 1 column 3
2 attempts re-scored, 8 scores moved
",
        second.join("result.json").display()
    );
    // Last, what is known of the ground truth's verification (that line
    // depends on the repository's corpus, not on this root).
    let (text, verified) = split_verified(&stdout(&o));
    assert!(
        verified.starts_with("ground truth (demo/benchmarks-single/ground-truth): "),
        "{verified}"
    );
    assert_eq!(
        text,
        want,
        "{}",
        crate::support::test::diff(&want, &stdout(&o))
    );

    // What it rewrote: the attempt's verdict, the corrupt result.json
    // (rebuilt from the attempt's files), the condition's aggregate, the
    // summary CSV and the README.
    let result = json(&first.join("result.json"));
    assert_eq!(
        (
            &result["attempts"][0]["exact"],
            &result["attempts"][0]["f1"]
        ),
        (&Value::Bool(false), &serde_json::json!(0.0))
    );
    assert_eq!(
        json(&second.join("result.json"))["attempts"][0]["exact"],
        true
    );
    let aggregate = &json(&out.join(format!("conditions/{name}.json")))["aggregate"];
    for key in ["exact_rate", "strict_exact_rate", "ordered_rate", "mean_f1"] {
        assert_eq!(aggregate[key], 0.5, "{key}");
    }
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(
        summary.contains(&format!("\n{q},single,{name},demo-kg,all-tools,tags,1,1,false,false,false,0.0000,1,query submit_csv,")),
        "{summary}"
    );
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert_ne!(readme, readme_before, "the README was not rewritten");
    // The conditions table may be split to fit the page, each part
    // repeating the first column: the condition's cells, parts joined.
    let first = "| demo-kg, all tools · KG named |";
    let cells: String = readme
        .lines()
        .filter_map(|l| l.strip_prefix(first))
        .collect();
    assert!(
        cells.starts_with(&format!(
            " scripted:oracle | okn-benchmark {} (scripted agent) | — | default | 2 | 2 | 0.50 |",
            env!("CARGO_PKG_VERSION")
        )) && cells.contains(" 0.50 | 0.50 | 0.50 | 1 | 1 |"),
        "{readme}"
    );
    // ... as report writes it from the rescored files.
    let o = okn()
        .args(["report", out.to_str().unwrap(), "--markdown", "-"])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), readme);
}

/// A ground truth edited after it was recorded is refused, not used: exit
/// 2, the file named, the scores left as recorded.
#[test]
fn rescore_refuses_a_ground_truth_edited_after_it_was_recorded() {
    let (_keep, out) = out_dir();
    two_oracle_questions(&out);
    let question = out.join("biobricks-ice-active-chemicals_single_results");
    let truth = question.join("ground_truth.csv");
    let mut edited = std::fs::read(&truth).unwrap();
    edited.extend_from_slice(b"an extra row\n");
    std::fs::write(&truth, &edited).unwrap();
    let result = question.join("demo-kg-all-tools__kg-named/result.json");
    let before = std::fs::read(&result).unwrap();
    let o = okn()
        .args(["rescore", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("ground_truth.csv: changed since it was recorded"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&result).unwrap(), before);
}

/// After `freeze`, `rescore`, `run` and `report` write nothing into the
/// root: the first two refuse (exit 2), `report` leaves a hand edit alone.
#[test]
fn freeze_closes_the_root_to_rescore_run_and_report() {
    let (_keep, out) = out_dir();
    two_oracle_questions(&out);
    let o = okn()
        .args(["freeze", out.to_str().unwrap(), "--reason", "Published."])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(out.join("README.md"), b"hand edit").unwrap();
    let before = snapshot(&out);
    let o = okn()
        .args(["rescore", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is frozen (Published.): rescore never writes into a frozen root"),
        "{}",
        stderr(&o)
    );
    let o = scripted(
        &out,
        "demo/benchmarks-single",
        &["--agent", "scripted:oracle", "--limit", "2", "--resume"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("run never writes into a frozen root"),
        "{}",
        stderr(&o)
    );
    let o = okn()
        .args(["report", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(snapshot(&out), before, "a frozen root was written");
    assert_eq!(
        std::fs::read(out.join("README.md")).unwrap(),
        b"hand edit",
        "report regenerates nothing"
    );
}

/// `rescore`'s or `report`'s output split before its last line, which
/// says when the ground truth was last verified (`ground truth (...): ...`).
fn split_verified(text: &str) -> (String, String) {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let (head, last) = body.rsplit_once('\n').unwrap_or(("", body));
    assert!(last.starts_with("ground truth ("), "{text}");
    (format!("{head}\n"), last.to_string())
}

fn scripted(out: &Path, corpus: &str, extra: &[&str]) -> Output {
    run(&[
        &[
            "--corpus",
            corpus,
            "--kg-hint",
            "tags",
            "--out",
            out.to_str().unwrap(),
        ],
        DEMO,
        extra,
    ]
    .concat())
}

/// A blank reason is refused: a frozen root says why it is closed.
#[test]
fn freeze_refuses_a_blank_reason() {
    let (_keep, out) = out_dir();
    two_oracle_questions(&out);
    let o = okn()
        .args(["freeze", out.to_str().unwrap(), "--reason", " "])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: --reason must say why the root is closed\n"
    );
    assert!(!out.join(".frozen").exists());
}

mod regression {
    //! One test per fixed defect, named after what it guards; the comment
    //! says what broke.

    use super::*;

    // Format 2 of the runs root added optional members; a root recorded in
    // format 1 must still be reported as it is, and a format this version
    // does not know must be refused by name, saying which it reads.
    #[test]
    fn a_format_1_root_is_read_and_an_unknown_format_is_refused() {
        let (_keep, out) = out_dir();
        two_oracle_questions(&out);
        let before = okn()
            .args(["report", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(before.status.code(), Some(0), "{}", stderr(&before));
        let set_format = |format: u64| {
            for entry in walkdir::WalkDir::new(&out) {
                let path = entry.unwrap().into_path();
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                let owned = name == "result.json" || path.parent().unwrap().ends_with("conditions");
                if owned && name.ends_with(".json") {
                    let mut value: Value = json(&path);
                    value["format"] = Value::from(format);
                    std::fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
                }
            }
        };
        set_format(1);
        let old = okn()
            .args(["report", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(old.status.code(), Some(0), "{}", stderr(&old));
        assert_eq!(stdout(&old), stdout(&before));
        set_format(6);
        let new = okn()
            .args(["report", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(new.status.code(), Some(2), "{}", stdout(&new));
        assert!(
            stderr(&new).contains("format 6 is not one this version reads (1 to 5)"),
            "{}",
            stderr(&new)
        );
    }

    /// Keeps issue 24, item 29: `summary.csv` put `cost_usd`,
    /// `input_tokens` and `output_tokens` before `notes`, so the
    /// seventeen columns docs/FORMAT.md names were not the first
    /// seventeen, and a reader taking them by position read a cost as the
    /// notes. Both summaries (the root's and a question's) now open with
    /// the seventeen in order; a root of format 2 is still read, and its
    /// summaries are written again in the new order.
    #[test]
    fn summary_csv_opens_with_the_seventeen_documented_columns_in_order() {
        const SEVENTEEN: [&str; 17] = [
            "question",
            "tier",
            "condition",
            "server",
            "tools",
            "kg_hint",
            "attempt",
            "attempts_total",
            "blocked",
            "exact",
            "ordered",
            "f1",
            "queries",
            "tools_called",
            "wall_s",
            "server_s",
            "notes",
        ];
        let (_keep, out) = out_dir();
        // rename-columns: every attempt carries a note.
        let o = scripted(
            &out,
            "demo/benchmarks-single",
            &["--agent", "scripted:rename-columns", "--limit", "2"],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let id = "biobricks-ice-active-chemicals_single";
        let check = |path: &Path| {
            let text = std::fs::read_to_string(path).unwrap();
            let mut reader = csv::Reader::from_reader(text.as_bytes());
            let header: Vec<String> = reader
                .headers()
                .unwrap()
                .iter()
                .map(str::to_string)
                .collect();
            assert_eq!(header[..17], SEVENTEEN, "{}", path.display());
            assert_eq!(
                header[17..],
                ["cost_usd", "input_tokens", "output_tokens"],
                "{}",
                path.display()
            );
            let row = reader.records().next().unwrap().unwrap();
            assert_eq!(&row[0], id);
            assert_eq!(
                &row[16],
                "the answer's column names differ from the key's; rows compared as sorted tuples of values",
                "{}",
                path.display()
            );
            // A scripted agent reports no cost: empty, never 0.
            assert_eq!((&row[17], &row[18], &row[19]), ("", "", ""));
        };
        check(&out.join("summary.csv"));
        check(&out.join(format!("{id}_results/summary.csv")));

        // An older root (format 2, summaries in the old order) is read,
        // and report writes its summaries in the current order.
        for entry in walkdir::WalkDir::new(&out) {
            let path = entry.unwrap().into_path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let owned = name == "result.json" || path.parent().unwrap().ends_with("conditions");
            if owned && name.ends_with(".json") {
                let mut value: Value = json(&path);
                value["format"] = Value::from(2);
                std::fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
            }
        }
        std::fs::write(
            out.join("summary.csv"),
            "question,tier,condition,server,tools,kg_hint,attempt,attempts_total,blocked,exact,ordered,f1,queries,tools_called,wall_s,server_s,cost_usd,input_tokens,output_tokens,notes\n",
        )
        .unwrap();
        let o = okn()
            .args(["report", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        check(&out.join("summary.csv"));
    }

    // command.txt held absolute paths of the recording machine (the
    // binary, the corpus, the log folder): a published root exposed its
    // home folder.
    #[test]
    fn command_txt_names_no_folder_of_the_machine_and_still_resumes() {
        let (keep, out) = out_dir();
        two_oracle_questions(&out);
        let attempt = out.join(
            "biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named/attempt-1",
        );
        let line = std::fs::read_to_string(attempt.join("command.txt")).unwrap();
        // No absolute path: every path is from the attempt folder (one
        // that leaves the root's tree names only what it does not share).
        assert!(!line.contains(&keep.path().display().to_string()), "{line}");
        for token in line.split([' ', '"', '\'']) {
            assert!(!token.starts_with('/'), "{token} in {line}");
        }
        assert!(line.contains(r#""--log-dir",".""#), "{line}");
        assert!(line.ends_with(" < prompt.txt\n"), "{line}");
        // The line names the binary as a path from the attempt folder.
        let program = line.split(' ').next().unwrap();
        assert!(
            attempt.join(program).is_file(),
            "{program} from {}",
            attempt.display()
        );
        let again = scripted(
            &out,
            "demo/benchmarks-single",
            &["--agent", "scripted:oracle", "--limit", "2", "--resume"],
        );
        assert!(
            stdout(&again).contains(", 0 ran, 2 resumed,"),
            "{}",
            stdout(&again)
        );
    }

    // The committed demo roots held the recording machine's folders.
    #[test]
    fn no_committed_file_holds_the_repositorys_absolute_path() {
        let listed = std::process::Command::new("git")
            .current_dir(repo())
            .args(["ls-files", "-z"])
            .output()
            .unwrap();
        if !listed.status.success() {
            return; // not a git checkout (an exported tree): nothing is committed
        }
        let repo_path = repo().display().to_string();
        let holding: Vec<String> = listed
            .stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .filter(|p| {
                std::fs::read(repo().join(p))
                    .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(&repo_path))
            })
            .collect();
        assert!(
            holding.is_empty(),
            "files naming {repo_path}:\n{}",
            holding.join("\n")
        );
    }

    /// Every file under `dir` with its bytes.
    fn files(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
        walkdir::WalkDir::new(dir)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
            .collect()
    }

    // A truncated result.json or condition file made report print
    // "unreadable" and rewrite README.md without that question, exit 0.
    #[test]
    fn report_refuses_a_root_with_an_unreadable_file_and_writes_nothing() {
        for truncate in ["result", "condition"] {
            let (_keep, out) = out_dir();
            two_oracle_questions(&out);
            let victim = if truncate == "result" {
                out.join("biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named/result.json")
            } else {
                out.join("conditions/demo-kg-all-tools__kg-named.json")
            };
            let bytes = std::fs::read(&victim).unwrap();
            std::fs::write(&victim, &bytes[..bytes.len() / 2]).unwrap();
            let before = files(&out);
            let o = okn().arg("report").arg(&out).output().unwrap();
            assert_eq!(o.status.code(), Some(2), "{truncate}: {}", stdout(&o));
            assert!(
                stderr(&o).contains("could not be used, so nothing was written"),
                "{truncate}: {}",
                stderr(&o)
            );
            assert_eq!(files(&out), before, "{truncate}: nothing written");
            let lenient = okn()
                .args(["report", "--lenient"])
                .arg(&out)
                .output()
                .unwrap();
            assert_eq!(lenient.status.code(), Some(2), "{truncate}");
            assert!(
                stdout(&lenient).contains("unreadable: "),
                "{truncate}: {}",
                stdout(&lenient)
            );
            assert!(
                stderr(&lenient).contains("could not be read (listed above): nothing was written"),
                "{truncate}: {}",
                stderr(&lenient)
            );
            assert_eq!(files(&out), before, "{truncate}: --lenient writes nothing");
            // The row over an unreadable result file is the condition
            // file's record, and says so (it showed "questions 2 ...
            // always 2" beside counts of the one question read).
            if truncate == "result" {
                assert!(
                    stdout(&lenient).contains(
                        "demo-kg-all-tools__kg-named: its row is what \
                         conditions/demo-kg-all-tools__kg-named.json records of 2 questions; \
                         1 of their result files could not be read"
                    ),
                    "{}",
                    stdout(&lenient)
                );
            }
        }
    }

    // With an answer.csv (or a question folder) deleted, rescore judged the
    // attempt a miss, or rewrote the condition with no attempts, exit 0.
    #[test]
    fn rescore_refuses_files_the_records_say_exist_and_rewrites_nothing() {
        for lose in ["answer", "question"] {
            let (_keep, out) = out_dir();
            two_oracle_questions(&out);
            let question = out.join("biobricks-ice-active-chemicals_single_results");
            if lose == "answer" {
                std::fs::remove_file(
                    question.join("demo-kg-all-tools__kg-named/attempt-1/answer.csv"),
                )
                .unwrap();
            } else {
                std::fs::remove_dir_all(&question).unwrap();
            }
            let before = files(&out);
            let o = okn().arg("rescore").arg(&out).output().unwrap();
            assert_eq!(o.status.code(), Some(2), "{lose}: {}", stdout(&o));
            let err = stderr(&o);
            assert!(
                err.contains("that the records name is gone, so nothing was re-scored"),
                "{lose}: {err}"
            );
            assert!(
                err.contains(if lose == "answer" {
                    "answer.csv: result.json records a submitted answer, and it is missing"
                } else {
                    "result.json: listed in "
                }),
                "{lose}: {err}"
            );
            assert_eq!(files(&out), before, "{lose}: nothing rewritten");
        }
    }

    /// Runs `rescore` on `out` and asserts that it stopped as `report`
    /// does: exit 2, `file` named in its error (with `at`, the line
    /// suffix, when there is one), and no file of the root changed.
    fn assert_rescore_refuses(out: &Path, file: &Path, at: &str, case: &str) {
        let before = files(out);
        let o = okn().arg("rescore").arg(out).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{case}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(
            err.contains("could not be used, so nothing was re-scored"),
            "{case}: {err}"
        );
        assert!(
            err.contains(&format!("{}{at}", file.display())),
            "{case}: {err}"
        );
        assert_eq!(files(out), before, "{case}: nothing rewritten");
    }

    // A missing, truncated or empty ground_truth.json let rescore judge
    // against an edited ground_truth.csv unchecked (scores moved, exit 0),
    // and dropped the trajectory of every attempt of the question.
    #[test]
    fn rescore_refuses_a_ground_truth_record_it_cannot_read_and_rewrites_nothing() {
        let (_keep, out) = out_dir();
        two_oracle_questions(&out);
        let question = out.join("biobricks-ice-active-chemicals_single_results");
        let json = question.join("ground_truth.json");
        let csv = question.join("ground_truth.csv");
        let (json_bytes, csv_bytes) = (std::fs::read(&json).unwrap(), std::fs::read(&csv).unwrap());
        // The CSV loses its last row, as a hand edit would.
        let text = String::from_utf8(csv_bytes.clone()).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.pop();
        let edited = format!("{}\n", lines.join("\n"));
        for case in ["truncated", "removed", "empty object"] {
            std::fs::write(&csv, &edited).unwrap();
            let at = match case {
                "truncated" => {
                    std::fs::write(&json, &json_bytes[..json_bytes.len() / 2]).unwrap();
                    ":"
                }
                "removed" => {
                    std::fs::remove_file(&json).unwrap();
                    ": missing"
                }
                _ => {
                    std::fs::write(&json, b"{}").unwrap();
                    ":1: missing field"
                }
            };
            assert_rescore_refuses(&out, &json, at, case);
            std::fs::write(&json, &json_bytes).unwrap();
            std::fs::write(&csv, &csv_bytes).unwrap();
        }
    }

    // A truncated, deleted or emptied metrics.json, calls.json,
    // episode.json or agent.json was judged as a file never written:
    // queries and tools zeroed, the trajectory dropped, the wall time taken
    // from agent.json, the usage lost, "0 scores moved", exit 0.
    #[test]
    fn rescore_refuses_an_attempt_file_it_cannot_read_and_rewrites_nothing() {
        let (_keep, out) = out_dir();
        two_oracle_questions(&out);
        let attempt = out.join(
            "biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named/attempt-1",
        );
        for name in ["metrics.json", "calls.json", "episode.json", "agent.json"] {
            let path = attempt.join(name);
            let bytes = std::fs::read(&path).unwrap();
            for case in ["truncated", "removed", "empty object"] {
                let at = match case {
                    "truncated" => {
                        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
                        ":"
                    }
                    "removed" => {
                        std::fs::remove_file(&path).unwrap();
                        ": missing"
                    }
                    _ => {
                        std::fs::write(&path, b"{}").unwrap();
                        ""
                    }
                };
                assert_rescore_refuses(&out, &path, at, &format!("{name} {case}"));
                std::fs::write(&path, &bytes).unwrap();
            }
        }
        // What a root may lack stays readable: a host killed from outside
        // (episode.json says so) left no agent.json.
        let episode = attempt.join("episode.json");
        let mut value = json(&episode);
        value["exit_code"] = Value::Null;
        // As the runner records such a host's report (issue 25): a crash.
        value["host_report"]["failure"] = serde_json::json!({
            "kind": "crash",
            "reason": "the agent host was killed by a signal and reported nothing"
        });
        std::fs::write(&episode, serde_json::to_string_pretty(&value).unwrap()).unwrap();
        std::fs::remove_file(attempt.join("agent.json")).unwrap();
        let o = okn().arg("rescore").arg(&out).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }

    // A truncated condition file was named "unreadable", the rest
    // re-scored, exit 0, and the README then called the condition
    // unfinished ("run it again with --resume"), which it was not; report
    // refused the same root.
    #[test]
    fn rescore_refuses_a_condition_file_it_cannot_read_and_rewrites_nothing() {
        let (_keep, out) = out_dir();
        two_oracle_questions(&out);
        let path = out.join("conditions/demo-kg-all-tools__kg-named.json");
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let line = serde_json::from_slice::<Value>(&bytes[..bytes.len() / 2])
            .unwrap_err()
            .line();
        assert_rescore_refuses(
            &out,
            &path,
            &format!(":{line}: EOF while parsing"),
            "condition",
        );
        let report = okn().arg("report").arg(&out).output().unwrap();
        assert_eq!(report.status.code(), Some(2), "{}", stdout(&report));
    }

    // An answer key edited without rerunning `reference` went unnoticed:
    // run scored against the stale ground truth (the oracle became "miss
    // (f1 0.46)"), selfcheck said ok, and rescore judged the old episodes
    // against it.
    #[test]
    fn an_answer_key_edited_after_its_ground_truth_is_refused_by_name() {
        let keep = tempfile::tempdir().unwrap();
        let corpus = keep.path().join("corpus");
        crate::support::fixture::copy_dir(&repo().join("demo/benchmarks-single"), &corpus);
        let out = keep.path().join("runs");
        let args = |extra: &[&str]| -> Vec<String> {
            let mut v: Vec<String> = [
                "--corpus",
                corpus.to_str().unwrap(),
                "--kg-hint",
                "tags",
                "--agent",
                "scripted:oracle",
                "--limit",
                "1",
                "--out",
                out.to_str().unwrap(),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            v.extend(DEMO.iter().map(|s| s.to_string()));
            v.extend(extra.iter().map(|s| s.to_string()));
            v
        };
        fn as_str(v: &[String]) -> Vec<&str> {
            v.iter().map(String::as_str).collect()
        }
        let first = run(&as_str(&args(&[])));
        assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
        let record = corpus.join("biobricks-ice-active-chemicals_single.rq");
        let text = std::fs::read_to_string(&record).unwrap();
        std::fs::write(&record, text.replacen("SELECT", "SELECT DISTINCT", 1)).unwrap();
        let stale = "the cached ground truth of 1 record is stale: biobricks-ice-active-chemicals_single (its answer key was edited after its ground truth was built)";
        let again = run(&as_str(&args(&["--resume"])));
        assert_eq!(again.status.code(), Some(2), "{}", stdout(&again));
        assert!(stderr(&again).contains(stale), "{}", stderr(&again));
        let check = okn()
            .args([
                "selfcheck",
                "--corpus",
                corpus.to_str().unwrap(),
                "--limit",
                "1",
            ])
            .output()
            .unwrap();
        assert_eq!(check.status.code(), Some(2), "{}", stdout(&check));
        assert!(stderr(&check).contains(stale), "{}", stderr(&check));
        let result = out.join(
            "biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named/result.json",
        );
        let before = std::fs::read(&result).unwrap();
        let rescore = okn().arg("rescore").arg(&out).output().unwrap();
        assert_eq!(rescore.status.code(), Some(2), "{}", stdout(&rescore));
        assert!(
            stderr(&rescore).contains("its answer key was edited after its ground truth was built: the episodes of 'biobricks-ice-active-chemicals_single' here answered the key as it was"),
            "{}",
            stderr(&rescore)
        );
        assert_eq!(std::fs::read(&result).unwrap(), before, "scores kept");
    }

    // A server unreachable from the start blocked every episode and the
    // run ended "over 0 measured questions" with exit 0.
    #[test]
    fn a_server_unreachable_before_the_first_episode_stops_the_run() {
        let (keep, out) = out_dir();
        let profile = keep.path().join("gone.toml");
        std::fs::write(
            &profile,
            "name = \"gone\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"/nonexistent/server\"\n",
        )
        .unwrap();
        let o = run(&[
            "--corpus",
            "demo/benchmarks-single",
            "--kg-hint",
            "tags",
            "--agent",
            "scripted:oracle",
            "--limit",
            "1",
            "--tools",
            "all-tools",
            "--profile",
            profile.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("the server under test, gone, cannot be reached (")
                && err.contains("so no episode was run"),
            "{err}"
        );
        assert!(
            !err.contains("Error {") && !err.contains("Os {"),
            "a sentence: {err}"
        );
        assert!(!out.exists(), "nothing recorded");
    }

    /// Runs the binary in the repository with `args`, its stdout a pipe
    /// closed before it writes anything; returns the exit status and
    /// stderr.
    fn with_stdout_closed(args: &[&str]) -> (Option<i32>, String) {
        let mut child = std::process::Command::new(BIN)
            .current_dir(repo())
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    // `corpus list | head -1`, `reference | head -1` and `run | head -1`
    // panicked ("failed printing to stdout: Broken pipe", exit 101), and
    // run gave up after its first episode with no condition file.
    #[test]
    fn a_closed_stdout_neither_panics_nor_stops_a_run() {
        for args in [
            &["corpus", "list", "--corpus", "demo/benchmarks-cross"][..],
            &["reference", "--corpus", "demo/benchmarks-cross"][..],
        ] {
            let (code, err) = with_stdout_closed(args);
            assert_eq!(code, Some(0), "{args:?}: {err}");
            assert!(!err.contains("panicked"), "{args:?}: {err}");
        }
        let (_keep, out) = out_dir();
        let (code, err) = with_stdout_closed(
            &[
                &[
                    "run",
                    "--corpus",
                    "demo/benchmarks-single",
                    "--kg-hint",
                    "tags",
                    "--agent",
                    "scripted:oracle",
                    "--limit",
                    "3",
                    "--out",
                    out.to_str().unwrap(),
                ][..],
                DEMO,
            ]
            .concat(),
        );
        assert_eq!(code, Some(0), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        let condition = json(&out.join("conditions/demo-kg-all-tools__kg-named.json"));
        assert_eq!(condition["aggregate"]["questions"], 3);
        assert_eq!(condition["aggregate"]["exact_rate"], 1.0);
    }

    // A runs root copied elsewhere ran every attempt again: its commands differ by paths.
    #[test]
    fn a_copied_runs_root_resumes_every_finished_attempt() {
        let (_keep, out) = out_dir();
        let args = |root: &Path| -> Vec<String> {
            [
                "--corpus",
                "demo/benchmarks-ontology",
                "--kg-hint",
                "tags",
                "--agent",
                "scripted:oracle",
                "--limit",
                "1",
                "--repeat",
                "2",
                "--out",
                root.to_str().unwrap(),
            ]
            .iter()
            .chain(DEMO.iter())
            .map(|s| s.to_string())
            .collect()
        };
        let first = args(&out);
        let first: Vec<&str> = first.iter().map(String::as_str).collect();
        assert_eq!(run(&first).status.code(), Some(0));
        let copy = out.with_file_name(format!(
            "{}-copy",
            out.file_name().unwrap().to_string_lossy()
        ));
        crate::support::fixture::copy_dir(&out, &copy);
        let again = args(&copy);
        let mut again: Vec<&str> = again.iter().map(String::as_str).collect();
        again.push("--resume");
        let o = run(&again);
        let _ = std::fs::remove_dir_all(&copy);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let text = stdout(&o);
        assert!(
            text.contains(" questions, 0 ran, 2 resumed,")
                || text.contains(" question, 0 ran, 2 resumed,"),
            "{text}"
        );
    }

    // A smaller --limit dropped the questions recorded before from the condition.
    #[test]
    fn a_smaller_limit_keeps_the_questions_recorded_before() {
        let (_keep, out) = out_dir();
        let o = scripted(
            &out,
            "demo/benchmarks-single",
            &["--agent", "scripted:oracle", "--limit", "3"],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let o = scripted(
            &out,
            "demo/benchmarks-single",
            &["--agent", "scripted:oracle", "--limit", "1", "--resume"],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let condition = json(&out.join("conditions/demo-kg-all-tools__kg-named.json"));
        assert_eq!(
            condition["questions"].as_object().unwrap().len(),
            3,
            "kept the questions not selected now"
        );
    }

    // A second corpus run into one condition dropped the first corpus's questions.
    #[test]
    fn a_second_corpus_in_one_condition_is_refused() {
        let (_keep, out) = out_dir();
        let o = scripted(
            &out,
            "demo/benchmarks-single",
            &["--agent", "scripted:oracle", "--limit", "1"],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let o = scripted(
            &out,
            "demo/benchmarks-cross",
            &["--agent", "scripted:oracle", "--limit", "1", "--resume"],
        );
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("  corpus: 'demo/benchmarks-single' -> 'demo/benchmarks-cross'"),
            "{}",
            stderr(&o)
        );
    }

    // --force left the attempts of questions it did not run to come back.
    #[test]
    fn force_replaces_every_folder_of_the_condition() {
        let (_keep, out) = out_dir();
        assert_eq!(
            scripted(
                &out,
                "demo/benchmarks-single",
                &["--agent", "scripted:oracle", "--limit", "3"]
            )
            .status
            .code(),
            Some(0)
        );
        let o = scripted(
            &out,
            "demo/benchmarks-single",
            &[
                "--agent",
                "scripted:oracle",
                "--limit",
                "1",
                "--repeat",
                "2",
                "--force",
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let name = "demo-kg-all-tools__kg-named";
        assert!(
            !out.join(format!(
                "fiokg-chemical-manufacturers_single_results/{name}"
            ))
            .exists()
        );
        assert_eq!(
            json(&out.join(format!("conditions/{name}.json")))["questions"]
                .as_object()
                .unwrap()
                .len(),
            1
        );
    }

    // rescore judged whatever attempt folders it found, not the recorded
    // ones; then it left the others out, exit 0, dropping a recorded
    // episode (issue 24, item 7): it refuses them by name.
    #[test]
    fn rescore_judges_the_recorded_attempts_and_refuses_the_rest() {
        let (_keep, out) = out_dir();
        assert_eq!(
            scripted(
                &out,
                "demo/benchmarks-single",
                &[
                    "--agent",
                    "scripted:oracle",
                    "--limit",
                    "1",
                    "--repeat",
                    "2"
                ]
            )
            .status
            .code(),
            Some(0)
        );
        let dir =
            out.join("biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named");
        crate::support::fixture::copy_dir(&dir.join("attempt-1"), &dir.join("attempt-01"));
        crate::support::fixture::copy_dir(&dir.join("attempt-1"), &dir.join("attempt-3"));
        let result = std::fs::read(dir.join("result.json")).unwrap();
        let o = okn()
            .args(["rescore", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
        let text = stderr(&o);
        assert!(
            text.contains(
                "attempt-3: attempt 3, but the condition has 2 attempts a question \
                 (identity.repeat in its condition file)"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "attempt-01: not an attempt folder this tool writes (attempt-N, N from 1, no \
                 leading zero)"
            ),
            "{text}"
        );
        assert_eq!(std::fs::read(dir.join("result.json")).unwrap(), result);
        std::fs::remove_dir_all(dir.join("attempt-01")).unwrap();
        std::fs::remove_dir_all(dir.join("attempt-3")).unwrap();
        let o = okn()
            .args(["rescore", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let (text, _) = split_verified(&stdout(&o));
        assert_eq!(text, "2 attempts re-scored, 0 scores moved\n");
        assert_eq!(
            json(&dir.join("result.json"))["attempts"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }

    // An exclusion written by hand into the condition file did not count like --exclude.
    #[test]
    fn a_hand_written_exclusion_is_the_same_run_as_exclude() {
        let (_keep, out) = out_dir();
        assert_eq!(
            scripted(
                &out,
                "demo/benchmarks-single",
                &["--agent", "scripted:oracle", "--limit", "2"]
            )
            .status
            .code(),
            Some(0)
        );
        let path = out.join("conditions/demo-kg-all-tools__kg-named.json");
        let mut condition = json(&path);
        let id = "fiokg-chemical-manufacturers_single";
        condition["questions"].as_object_mut().unwrap().remove(id);
        condition["meta"]["excluded"] =
            serde_json::json!([{"id": id, "reason": "dropped by hand: the key was wrong"}]);
        std::fs::write(&path, serde_json::to_string_pretty(&condition).unwrap()).unwrap();
        let o = okn()
            .args(["rescore", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(json(&path)["identity"]["excluded"], serde_json::json!([id]));
        let o = scripted(
            &out,
            "demo/benchmarks-single",
            &[
                "--agent",
                "scripted:oracle",
                "--limit",
                "1",
                "--exclude",
                id,
                "--resume",
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let o = scripted(
            &out,
            "demo/benchmarks-single",
            &["--agent", "scripted:oracle", "--limit", "2", "--resume"],
        );
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("  excluded: [\"fiokg-chemical-manufacturers_single\"] -> []"),
            "{}",
            stderr(&o)
        );
    }

    /// An oracle run of one demo question into `out`, then `freeze` with the
    /// reason "Done.".
    fn frozen_root(out: &Path) {
        let o = scripted(
            out,
            "demo/benchmarks-single",
            &["--agent", "scripted:oracle", "--limit", "1"],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let o = okn()
            .args(["freeze", out.to_str().unwrap(), "--reason", "Done."])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }

    // `report .` run inside a frozen root rewrote its README.md.
    #[test]
    fn report_from_inside_a_frozen_root_is_refused() {
        let (_keep, out) = out_dir();
        frozen_root(&out);
        let before = std::fs::read(out.join("README.md")).unwrap();
        let o = okn_in(&out)
            .args(["report", ".", "--markdown", "README.md"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains(" is frozen")
                && stderr(&o).contains("report never writes into a frozen root"),
            "{}",
            stderr(&o)
        );
        assert_eq!(std::fs::read(out.join("README.md")).unwrap(), before);
    }

    // A run with --out nested inside a frozen root wrote into it.
    #[test]
    fn a_run_nested_in_a_frozen_root_is_refused() {
        let (_keep, out) = out_dir();
        frozen_root(&out);
        let nested = out.join("nested");
        let o = scripted(
            &nested,
            "demo/benchmarks-single",
            &["--agent", "scripted:oracle", "--limit", "1"],
        );
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("is frozen (Done.)"), "{}", stderr(&o));
        assert!(!nested.exists());
    }

    // A changed answer key judged one condition by the new key, the others by the old.
    #[test]
    fn changed_ground_truth_under_recorded_conditions_is_refused() {
        let (keep, out) = out_dir();
        let corpus = keep.path().join("corpus");
        crate::support::fixture::copy_dir(&repo().join("demo/benchmarks-single"), &corpus);
        let corpus_arg = corpus.to_str().unwrap();
        assert_eq!(
            scripted(
                &out,
                corpus_arg,
                &["--agent", "scripted:oracle", "--limit", "1"]
            )
            .status
            .code(),
            Some(0)
        );
        let o = run(&[
            "--corpus",
            corpus_arg,
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
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let rq = corpus.join("biobricks-ice-active-chemicals_single.rq");
        let text = std::fs::read_to_string(&rq).unwrap();
        std::fs::write(&rq, format!("{}\nLIMIT 1\n", text.trim_end())).unwrap();
        let o = okn()
            .args(["reference", "--corpus", corpus_arg])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let o = scripted(
            &out,
            corpus_arg,
            &["--agent", "scripted:oracle", "--limit", "1", "--resume"],
        );
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains(
                "the ground truth of biobricks-ice-active-chemicals_single changed since"
            ),
            "{}",
            stderr(&o)
        );
    }

    // Ground truth rebuilt with other rows under the same fingerprint (what
    // `reference --force` does after an update behind a SPARQL URL) judged
    // one condition by the new rows, the others by the old.
    #[test]
    fn ground_truth_with_other_rows_under_the_same_fingerprint_is_refused() {
        let (keep, out) = out_dir();
        let corpus = keep.path().join("corpus");
        crate::support::fixture::copy_dir(&repo().join("demo/benchmarks-single"), &corpus);
        let corpus_arg = corpus.to_str().unwrap();
        let limit = ["--agent", "scripted:oracle", "--limit", "1"];
        assert_eq!(scripted(&out, corpus_arg, &limit).status.code(), Some(0));
        let o = scripted(
            &out,
            corpus_arg,
            &[&limit[..], &["--label", "again"]].concat(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        // The rows change, the answer key and endpoint (so the fingerprint)
        // do not.
        let id = "biobricks-ice-active-chemicals_single";
        let csv = corpus.join(format!("ground-truth/{id}.csv"));
        let text = std::fs::read_to_string(&csv).unwrap();
        let fewer: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
        std::fs::write(&csv, &fewer).unwrap();
        let json_path = corpus.join(format!("ground-truth/{id}.json"));
        let mut meta = json(&json_path);
        meta["csv_sha256"] = okn_benchmark::reference::sha256_tag(fewer.as_bytes()).into();
        meta["row_count"] = 1.into();
        std::fs::write(&json_path, serde_json::to_string_pretty(&meta).unwrap()).unwrap();
        let o = scripted(&out, corpus_arg, &[&limit[..], &["--resume"]].concat());
        assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
        assert!(
            stderr(&o).contains(&format!(
                "the ground truth of {id} changed since {} recorded it (its answer key, endpoint or rows changed)",
                out.display()
            )),
            "{}",
            stderr(&o)
        );
    }

    // A timed-out attempt was reused under a longer --agent-timeout. It
    // is reused only under the same one; under another, the resumed run is
    // refused rather than deleting the recorded episode (issue 24, item
    // 10), and --force plays it again.
    #[test]
    fn a_timeout_is_reused_only_under_the_same_agent_timeout() {
        let (_keep, out) = out_dir();
        let args = |t: &'static str| {
            vec![
                "--agent",
                "scripted:hang",
                "--limit",
                "1",
                "--agent-timeout",
                t,
            ]
        };
        assert_eq!(
            scripted(&out, "demo/benchmarks-single", &args("1"))
                .status
                .code(),
            Some(0)
        );
        let before = snapshot(&out);
        let o = scripted(
            &out,
            "demo/benchmarks-single",
            &[args("2"), vec!["--resume"]].concat(),
        );
        assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
        assert!(
            stderr(&o).contains(
                "biobricks-ice-active-chemicals_single (attempt 1): it timed out under \
                 --agent-timeout 1, and this run has 2 (--agent-timeout 1 reuses it)"
            ),
            "{}",
            stderr(&o)
        );
        assert_eq!(snapshot(&out), before, "nothing deleted");
        let o = scripted(
            &out,
            "demo/benchmarks-single",
            &[args("1"), vec!["--resume"]].concat(),
        );
        assert!(stdout(&o).contains("[resumed]"), "{}", stdout(&o));
        let o = scripted(
            &out,
            "demo/benchmarks-single",
            &[args("2"), vec!["--force"]].concat(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(!stdout(&o).contains("[resumed]"), "{}", stdout(&o));
        assert_eq!(
            json(&out.join("conditions/demo-kg-all-tools__kg-named.json"))["settings"]["agent_timeout_s"],
            2
        );
    }

    // `run --limit 0` recorded an empty condition.
    #[test]
    fn a_limit_of_zero_is_refused_before_anything_runs() {
        let o = run(&["--corpus", "demo/benchmarks-single", "--limit", "0"]);
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("invalid value '0' for '--limit <N>'"),
            "{}",
            stderr(&o)
        );
    }

    /// The process ids of `okn-benchmark proxy` whose log folder is
    /// `log_dir` (Linux /proc).
    fn proxies_of(log_dir: &Path) -> Vec<u32> {
        let log_dir = log_dir.to_string_lossy().into_owned();
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let pid: u32 = e.file_name().to_str()?.parse().ok()?;
                let line = std::fs::read(e.path().join("cmdline")).ok()?;
                let args: Vec<String> = line
                    .split(|&b| b == 0)
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect();
                let logs_there = args
                    .windows(2)
                    .any(|w| w[0] == "--log-dir" && w[1] == log_dir);
                (args.get(1).map(String::as_str) == Some("proxy") && logs_there).then_some(pid)
            })
            .collect()
    }

    /// Issue 26, section 4 (the proxy's journal): the proxy appends each
    /// call to `calls.jsonl` instead of rewriting `calls.json` after every
    /// call. A proxy killed with `kill -9` mid-episode leaves its calls in
    /// that journal alone, and the attempt's record keeps them: the runner
    /// writes `calls.json` from the journal (the bytes the proxy writes at
    /// its end) and removes it, so the finished attempt's files are what
    /// they were before the journal, and `rescore` agrees.
    #[test]
    fn a_proxy_killed_mid_episode_leaves_a_journal_whose_calls_the_attempt_keeps() {
        let (_keep, out) = out_dir();
        // The hang strategy runs its query, then waits until the timeout.
        let child = hanging_run(&out, "6", "1");
        let attempt = out.join(CONDITION_DIR).join("attempt-1");
        let journal = attempt.join("calls.jsonl");
        let lines = || {
            std::fs::read_to_string(&journal)
                .map(|t| t.lines().map(String::from).collect::<Vec<_>>())
                .unwrap_or_default()
        };
        wait_until("the query call in the journal", || lines().len() >= 2);
        let journaled = lines();
        assert_eq!(journaled[0], r#"{"format":2}"#);
        let call: Value = serde_json::from_str(&journaled[1]).unwrap();
        assert_eq!(call["index"], 1);
        assert_eq!(call["forwarded"], true);
        // calls.json is written at the proxy's start and end only.
        let before = json(&attempt.join("calls.json"));
        assert_eq!(before["calls"], serde_json::json!([]));
        let proxies = proxies_of(&attempt);
        assert_eq!(proxies.len(), 1, "one proxy for the attempt: {proxies:?}");
        let status = Command::new("kill")
            .args(["-s", "KILL", &proxies[0].to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        // The attempt is recorded with the journal's call.
        assert!(attempt.join("episode.json").is_file());
        assert!(!journal.exists(), "a finished attempt keeps no journal");
        let calls = json(&attempt.join("calls.json"));
        assert_eq!(calls["calls"].as_array().unwrap().len(), 1, "{calls}");
        assert_eq!(calls["calls"][0], call);
        let text = std::fs::read_to_string(attempt.join("calls.json")).unwrap();
        assert_eq!(text, serde_json::to_string_pretty(&calls).unwrap() + "\n");
        let metrics = json(&attempt.join("metrics.json"));
        assert_eq!(metrics["calls"], 1);
        let result = json(&out.join(CONDITION_DIR).join("result.json"));
        assert_eq!(
            result["attempts"][0]["tools_called"],
            serde_json::json!([call["tool"]]),
            "{result}"
        );
        // Loading the root again reads the same calls, and finds it whole.
        let o = okn()
            .args(["rescore", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }

    /// `run` over `demo/benchmarks-single`'s first question with the
    /// `hang` strategy (each attempt times out after `timeout` s and is
    /// recorded so), started in the background.
    fn hanging_run(out: &Path, timeout: &str, repeat: &str) -> std::process::Child {
        Command::new(BIN)
            .current_dir(repo())
            .env_remove("XDG_CACHE_HOME")
            .arg("run")
            .args([
                "--corpus",
                "demo/benchmarks-single",
                "--kg-hint",
                "tags",
                "--out",
                out.to_str().unwrap(),
            ])
            .args(DEMO)
            .args([
                "--agent",
                "scripted:hang",
                "--limit",
                "1",
                "--repeat",
                repeat,
                "--agent-timeout",
                timeout,
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
        let started = Instant::now();
        while !done() {
            assert!(started.elapsed() < Duration::from_secs(60), "never: {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn interrupt(child: &std::process::Child) {
        let status = Command::new("kill")
            .args(["-s", "INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    const CONDITION_DIR: &str =
        "biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named";

    // After Ctrl-C, `run` exited 130 saying nothing, and `report` said
    // "not a runs root" though attempts were there (or, beside other
    // conditions, left the partly recorded one out without a word).
    #[test]
    fn an_interrupted_run_says_what_it_kept_and_how_to_resume_and_report_names_it() {
        let (_keep, out) = out_dir();
        let child = hanging_run(&out, "2", "2");
        // The first attempt timed out and was recorded; the second hangs.
        wait_until("attempt 2 in flight", || {
            out.join(CONDITION_DIR)
                .join("attempt-1/episode.json")
                .is_file()
                && out
                    .join(CONDITION_DIR)
                    .join("attempt-2/prompt.txt")
                    .is_file()
        });
        interrupt(&child);
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(130), "{err}");
        assert!(
            err.contains(
                "interrupted: 1 attempt recorded now and 0 reused, 0 of 1 question complete; \
                 it stopped at biobricks-ice-active-chemicals_single attempt 2, which is not \
                 recorded"
            ),
            "{err}"
        );
        assert!(
            !out.join("conditions/demo-kg-all-tools__kg-named.json")
                .exists(),
            "an unfinished condition has no condition file"
        );
        assert!(
            !out.join("conditions/demo-kg-all-tools__kg-named.lock")
                .exists()
        );
        let resume = err
            .lines()
            .skip_while(|l| !l.starts_with("Resume with:") && !l.ends_with("Resume with:"))
            .nth(1)
            .unwrap_or_else(|| panic!("no resume command in {err}"))
            .trim()
            .to_string();
        assert!(resume.ends_with(" --resume"), "{resume}");
        let unfinished = "condition demo-kg-all-tools__kg-named is unfinished: 1 finished \
                          attempt of 1 question on disk, and no condition file (a run was \
                          interrupted: run it again with --resume to finish it)";
        let report = okn()
            .args(["report", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
        assert!(
            crate::support::flat(&stdout(&report)).contains(&crate::support::flat(unfinished)),
            "{}",
            stdout(&report)
        );
        let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
        assert!(readme.contains("## Unfinished conditions"), "{readme}");
        // The printed command, run as printed, finishes the condition: the
        // recorded attempt is reused, the cut one runs again.
        let o = Command::new("sh")
            .args(["-c", &resume])
            .current_dir(repo())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains("[resumed]"), "{}", stdout(&o));
        let result = json(&out.join(CONDITION_DIR).join("result.json"));
        assert_eq!(result["attempts"].as_array().unwrap().len(), 2);
        let report = okn()
            .args(["report", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            !stdout(&report).contains("unfinished"),
            "{}",
            stdout(&report)
        );
    }

    // Two runs of one condition into one root wrote the same attempt
    // folders, and the second failed with a misleading "cannot start the
    // agent host ... No such file or directory".
    #[test]
    fn a_second_run_of_a_condition_is_refused_naming_the_first_and_a_stale_lock_is_taken_over() {
        let (_keep, out) = out_dir();
        let first = hanging_run(&out, "30", "1");
        let lock = out.join("conditions/demo-kg-all-tools__kg-named.lock");
        wait_until("the first attempt", || {
            out.join(CONDITION_DIR)
                .join("attempt-1/prompt.txt")
                .is_file()
        });
        assert!(lock.is_file());
        let second = hanging_run(&out, "30", "1").wait_with_output().unwrap();
        let err = stderr(&second);
        assert_eq!(second.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!(
                "demo-kg-all-tools__kg-named.lock: another run of condition \
                 demo-kg-all-tools__kg-named is recording into this root (process {} on",
                first.id()
            )),
            "{err}"
        );
        // The first is untouched by the second, and report says a run is
        // going on.
        let report = okn()
            .args(["report", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            stdout(&report).contains("(a run is recording it now)"),
            "{}",
            stdout(&report)
        );
        interrupt(&first);
        assert_eq!(first.wait_with_output().unwrap().status.code(), Some(130));
        assert!(!lock.exists());
        // A lock left by a killed run (its process is gone) is stale.
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        let holder = serde_json::json!({
            "pid": 4_194_305, "host": host, "boot_id": null, "start_ticks": null,
            "started_unix_s": 0
        });
        std::fs::write(&lock, holder.to_string()).unwrap();
        let o = scripted(
            &out,
            "demo/benchmarks-single",
            &["--agent", "scripted:oracle", "--limit", "1", "--force"],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(
            stdout(&o).contains(
                "removed a stale lock of condition demo-kg-all-tools__kg-named: process 4194305"
            ),
            "{}",
            stdout(&o)
        );
        assert!(!lock.exists());
    }

    // `scripted:mixed:abc` was accepted as a seed.
    #[test]
    fn a_mixed_seed_that_is_not_a_number_is_refused() {
        let (_keep, out) = out_dir();
        let o = scripted(
            &out,
            "demo/benchmarks-single",
            &["--agent", "scripted:mixed:abc", "--limit", "1"],
        );
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("'mixed:abc': the seed must be a whole number, as in mixed:7"),
            "{}",
            stderr(&o)
        );
        assert!(!out.exists());
    }

    // A host killed from outside left a 0-byte agent.json, which the
    // attempt page showed as a JSON parse error, and the attempt read as
    // the agent's own failure.
    #[test]
    fn a_host_killed_from_outside_is_blocked_as_such_and_leaves_no_empty_report() {
        let (_keep, out) = out_dir();
        let child = hanging_run(&out, "60", "1");
        let attempt = out.join(CONDITION_DIR).join("attempt-1");
        wait_until("the agent host", || attempt.join("calls.json").is_file());
        // The scripted agent host: the one process whose command line
        // names this attempt's folder and is not the proxy.
        let hosts = String::from_utf8(
            Command::new("pgrep")
                .args(["-f", &format!("scripted-agent.*{}", out.display())])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        let host = hosts
            .lines()
            .next()
            .unwrap_or_else(|| panic!("no host found"));
        assert!(
            Command::new("kill")
                .args(["-9", host])
                .status()
                .unwrap()
                .success()
        );
        let o = child.wait_with_output().unwrap();
        // The only attempt was blocked: the run measured nothing.
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(!attempt.join("agent.json").exists(), "no empty agent.json");
        let result = json(&out.join(CONDITION_DIR).join("result.json"));
        assert_eq!(result["attempts"][0]["blocked"], true, "{result}");
        assert_eq!(
            result["attempts"][0]["blocked_reason"],
            "the agent host was killed by a signal and reported nothing"
        );
    }

    // run's startup check spilled the server's stderr onto the terminal.
    #[test]
    fn the_startup_check_keeps_the_servers_stderr_off_the_terminal() {
        let (keep, out) = out_dir();
        let chatty = keep.path().join("chatty.toml");
        std::fs::write(
            &chatty,
            format!(
                "name = \"chatty\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"sh\"\n\
                 args = [\"-c\", \"echo 'banner: starting' >&2; exec {BIN} kg-server --data demo/kg\"]\n\
                 cwd = \"{}\"\n",
                repo().display()
            ),
        )
        .unwrap();
        let o = run(&[
            "--corpus",
            "demo/benchmarks-single",
            "--kg-hint",
            "tags",
            "--agent",
            "scripted:oracle",
            "--limit",
            "1",
            "--tools",
            "all-tools",
            "--profile",
            chatty.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(!stderr(&o).contains("banner"), "{}", stderr(&o));
        assert!(!stdout(&o).contains("banner"), "{}", stdout(&o));
        let log = out.join("biobricks-ice-active-chemicals_single_results/chatty-all-tools__kg-named/attempt-1/upstream.stderr.log");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "banner: starting\n");
        // A server that dies at startup: its last words join the error.
        let dying = keep.path().join("dying.toml");
        std::fs::write(
            &dying,
            "name = \"dying\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"sh\"\n\
             args = [\"-c\", \"echo 'Traceback: boom' >&2; exit 3\"]\n",
        )
        .unwrap();
        let o = run(&[
            "--corpus",
            "demo/benchmarks-single",
            "--kg-hint",
            "tags",
            "--agent",
            "scripted:oracle",
            "--limit",
            "1",
            "--tools",
            "all-tools",
            "--profile",
            dying.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o)
                .contains("what an agent would see). The server's stderr:\n  Traceback: boom\n"),
            "{}",
            stderr(&o)
        );
    }

    // Two conditions, one against a dead backend and one against a 404,
    // read identically: soft errors were only in per-attempt notes.
    #[test]
    fn soft_errors_of_two_conditions_read_apart_in_report_and_readme() {
        let (keep, out) = out_dir();
        // An endpoint that answers 404: any HTTP server on 127.0.0.1 that
        // has no such path (the demo KG server over HTTP).
        let (_server, port) = crate::support::kg_server_http(&[]);
        let held = crate::support::closed_port();
        let closed = held.port;
        for (name, endpoint) in [
            ("sparql-dead", format!("http://127.0.0.1:{closed}/sparql")),
            (
                "sparql-404",
                format!("http://127.0.0.1:{port}/no-such-endpoint"),
            ),
        ] {
            let profile = keep.path().join(format!("{name}.toml"));
            std::fs::write(
                &profile,
                format!(
                    "name = \"{name}\"\n[upstream]\ntransport = \"stdio\"\ncommand = {:?}\n\
                     args = [\"--endpoint\", \"{endpoint}\"]\n\
                     env = {{ NO_PROXY = \"127.0.0.1\", no_proxy = \"127.0.0.1\" }}\n",
                    crate::support::tool("mcp-server-sparql")
                        .display()
                        .to_string()
                ),
            )
            .unwrap();
            let o = run(&[
                "--corpus",
                "demo/benchmarks-single",
                "--kg-hint",
                "tags",
                "--agent",
                "scripted:oracle",
                "--limit",
                "1",
                "--tools",
                "all-tools",
                "--profile",
                profile.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ]);
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        }
        let report = okn()
            .args(["report", out.to_str().unwrap()])
            .output()
            .unwrap();
        let text = stdout(&report);
        assert!(
            text.contains("sparql-dead-all-tools__kg-named: soft errors 1: backend unreachable (connection refused) ×1"),
            "{text}"
        );
        assert!(
            text.contains(
                "sparql-404-all-tools__kg-named: soft errors 1: HTTP 404 (endpoint not found) ×1"
            ),
            "{text}"
        );
        let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
        assert!(readme.contains("| soft errors |"), "{readme}");
        assert!(
            readme.contains("| 1: HTTP 404 (endpoint not found) ×1 |"),
            "{readme}"
        );
        assert!(
            readme.contains("| 1: backend unreachable (connection refused) ×1 |"),
            "{readme}"
        );
    }

    // What the server's replies put into the agent's context was in no
    // table (issue: a FastMCP reply's structured content was counted
    // twice, too).
    #[test]
    fn the_replies_characters_are_tallied_per_condition_from_the_calls() {
        let (_keep, out) = out_dir();
        two_oracle_questions(&out);
        let mut total = 0;
        let mut attempts = 0;
        for entry in walkdir::WalkDir::new(&out) {
            let entry = entry.unwrap();
            if entry.file_name() == "calls.json" {
                attempts += 1;
                for call in json(entry.path())["calls"].as_array().unwrap() {
                    if call["forwarded"] == true {
                        total += call["result_chars"].as_u64().unwrap();
                    }
                }
            }
        }
        assert_eq!(attempts, 2);
        assert!(total > 0);
        let report = okn()
            .args(["report", out.to_str().unwrap()])
            .output()
            .unwrap();
        let expected = format!(
            "demo-kg-all-tools__kg-named: the server's replies put {total} characters ({:.0} per \
             attempt) into the context",
            total as f64 / 2.0
        );
        assert!(
            crate::support::flat(&stdout(&report)).contains(&expected),
            "{expected}\n{}",
            stdout(&report)
        );
        let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
        assert!(readme.contains("| reply chars |"), "{readme}");
    }

    // With the binary installed outside the project (~/.cargo/bin, on
    // PATH), command.txt recorded the way there from the attempt folder:
    // a folder of the machine.
    #[test]
    fn an_installed_binary_is_recorded_by_its_name_and_still_resumes() {
        let (keep, out) = out_dir();
        let bin = keep.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::copy(BIN, bin.join("okn-benchmark")).unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let run_installed = |extra: &[&str]| {
            Command::new(bin.join("okn-benchmark"))
                .current_dir(repo())
                .env("PATH", &path)
                .env_remove("XDG_CACHE_HOME")
                .args([
                    "run",
                    "--corpus",
                    "demo/benchmarks-single",
                    "--kg-hint",
                    "tags",
                ])
                .args(DEMO)
                .args(["--agent", "scripted:oracle", "--limit", "1", "--out"])
                .arg(&out)
                .args(extra)
                .output()
                .unwrap()
        };
        let o = run_installed(&[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let line =
            std::fs::read_to_string(out.join(CONDITION_DIR).join("attempt-1/command.txt")).unwrap();
        assert!(line.starts_with("okn-benchmark scripted-agent "), "{line}");
        assert!(line.contains(r#""command":"okn-benchmark""#), "{line}");
        assert!(!line.contains("bin/okn-benchmark"), "{line}");
        let o = run_installed(&["--resume"]);
        assert!(stdout(&o).contains("[resumed]"), "{}", stdout(&o));
    }

    // A frozen root named by a relative path was shown by its absolute
    // path, a folder of the machine, in the refusal.
    #[test]
    fn a_frozen_root_is_named_as_the_user_named_it() {
        let (keep, out) = out_dir();
        two_oracle_questions(&out);
        let freeze = okn()
            .args(["freeze", out.to_str().unwrap(), "--reason", "Done."])
            .output()
            .unwrap();
        assert_eq!(freeze.status.code(), Some(0));
        let o = okn_in(keep.path())
            .args(["rescore", "runs"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).starts_with("error: runs is frozen (Done.): rescore never writes into a frozen root (delete runs/.frozen by hand to unfreeze)"),
            "{}",
            stderr(&o)
        );
    }

    // A disk that filled up cost the proxy the answer it could not save,
    // and the attempt was recorded as the agent's miss (exit 0). The run
    // now stops while there is too little space for an episode's records;
    // OKN_MIN_FREE_BYTES stands for a full disk here (no disk is filled).
    #[test]
    fn a_run_stops_before_an_episode_when_the_disk_is_nearly_full() {
        let (_keep, out) = out_dir();
        let o = okn()
            .env("OKN_MIN_FREE_BYTES", u64::MAX.to_string())
            .args([
                "run",
                "--corpus",
                "demo/benchmarks-single",
                "--kg-hint",
                "tags",
            ])
            .args(DEMO)
            .args(["--agent", "scripted:oracle", "--limit", "1", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("MiB free on its disk, less than the")
                && stderr(&o).contains("free some space, then run again with --resume"),
            "{}",
            stderr(&o)
        );
        assert!(!out.exists(), "nothing recorded");
    }

    // After kill -9 (or a second Ctrl-C), report, the README and build
    // said a run was recording the condition, though its process was gone.
    #[test]
    fn a_stale_lock_reads_as_an_interrupted_run_not_a_running_one() {
        let (_keep, out) = out_dir();
        let child = hanging_run(&out, "60", "1");
        wait_until("the first attempt", || {
            out.join(CONDITION_DIR)
                .join("attempt-1/prompt.txt")
                .is_file()
        });
        let lock = out.join("conditions/demo-kg-all-tools__kg-named.lock");
        Command::new("kill")
            .args(["-9", &child.id().to_string()])
            .status()
            .unwrap();
        let _ = child.wait_with_output();
        assert!(lock.is_file(), "kill -9 leaves the lock");
        let report = okn()
            .args(["report", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            stdout(&report)
                .contains("(a run was interrupted: run it again with --resume to finish it)"),
            "{}",
            stdout(&report)
        );
        assert!(
            !stdout(&report).contains("recording it now"),
            "{}",
            stdout(&report)
        );
    }

    // "The first query hit the target graph 59 times, with no exploratory
    // calls": a fact read off the call logs that no table could state.
    #[test]
    fn the_first_query_and_the_exploration_before_it_are_read_off_the_calls() {
        let (_keep, out) = out_dir();
        two_oracle_questions(&out);
        let result = json(&out.join(CONDITION_DIR).join("result.json"));
        assert_eq!(
            result["attempts"][0]["trajectory"],
            serde_json::json!({"first_query_hit": true, "exploratory_calls": 0})
        );
        let report = okn()
            .args(["report", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            crate::support::flat(&stdout(&report)).contains(
                "demo-kg-all-tools__kg-named: first query hit the key's graphs in 2 of 2 \
                 attempts; 0 exploratory calls before the first query (all calls, where none \
                 was made) over 2 attempts"
            ),
            "{}",
            stdout(&report)
        );
        let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
        assert!(
            readme.contains("| first query hit | exploratory calls |"),
            "{readme}"
        );
        assert!(readme.contains("| 2/2 | 0.00 |"), "{readme}");
    }
}
