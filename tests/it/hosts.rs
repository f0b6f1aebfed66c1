//! The codex and gemini agent hosts end to end (issue 25, "The hosts"):
//! the real CLIs from npm (`@openai/codex`, `@google/gemini-cli`,
//! installed by `scripts/test`) run whole episodes through the real proxy
//! in front of the demo KG server, with `standin-model` answering their
//! Responses and Gemini API calls on 127.0.0.1 (`docs/HOSTS.md`).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use serde_json::Value;

use crate::support::{KillOnDrop, free_port, okn, repo, stderr, stdout, tool, wait_for_port};

const BIN: &str = env!("CARGO_BIN_EXE_okn-benchmark");

/// Starts `standin-model` playing the oracle (with `extra` flags); returns
/// it and its URL.
fn standin(log: &Path, extra: &[&str]) -> (KillOnDrop, String) {
    let port = free_port();
    let mut child = Command::new(BIN)
        .args([
            "standin-model",
            "--corpus",
            "demo/benchmarks-single",
            "--strategy",
            "oracle",
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--log-dir",
        ])
        .arg(log)
        .args(extra)
        .current_dir(repo())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port, &mut child);
    (KillOnDrop(child), format!("http://127.0.0.1:{port}"))
}

/// `run --agent HOST` over the single corpus's demo KG, its program the
/// one `scripts/test` installed, `env` pointing it at the stand-in.
fn run_host(host: &str, model: &str, out: &Path, env: &[(&str, String)], extra: &[&str]) -> Output {
    okn()
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .args([
            "run",
            "--corpus",
            "demo/benchmarks-single",
            "--tools",
            "all-tools",
            "--kg-hint",
            "tags",
            "--profile",
            "profiles/demo-kg.local.toml",
            "--agent",
            host,
            "--model",
            model,
            "--agent-timeout",
            "120",
        ])
        .arg("--agent-program")
        .arg(tool(host))
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn codex_env(url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("OPENAI_BASE_URL", format!("{url}/v1")),
        ("OPENAI_API_KEY", "dummy".into()),
    ]
}

fn gemini_env(url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("GOOGLE_GEMINI_BASE_URL", url.to_string()),
        ("GEMINI_API_KEY", "dummy".into()),
    ]
}

const QUESTION: &str = "biobricks-ice-active-chemicals_single";

/// One host's oracle episodes over two questions: exact answers in
/// `result.json`, the host report in `episode.json`, the host's tokens in
/// `summary.csv`, the host named in the condition's folder and identity.
/// Returns the wall time per episode.
fn answers_exactly(host: &str, model: &str, env: fn(&str) -> Vec<(&'static str, String)>) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = standin(&dir.path().join("requests"), &[]);
    let out = dir.path().join("runs");
    let started = Instant::now();
    let o = run_host(host, model, &out, &env(&url), &["--limit", "2"]);
    let per_episode = started.elapsed().as_secs_f64() / 2.0;
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o)
            .trim_end()
            .ends_with("exact 1.00 · mean F1 1.00 over 2 questions"),
        "{}",
        stdout(&o)
    );
    let condition_name = format!("demo-kg-all-tools-{host}__kg-named");
    let condition = json(&out.join(format!("conditions/{condition_name}.json")));
    assert_eq!(condition["identity"]["agent"], host);
    assert_eq!(condition["identity"]["model"], model);
    let version = condition["identity"]["host_version"].as_str().unwrap();
    assert!(version.starts_with(&format!("{host}-cli ")), "{version}");
    let question = out.join(format!("{QUESTION}_results/{condition_name}"));
    let result = json(&question.join("result.json"));
    assert_eq!(result["attempts"][0]["exact"], true, "{result}");
    let episode = json(&question.join("attempt-1/episode.json"));
    assert_eq!(episode["format"], 4);
    let report = &episode["host_report"];
    assert_eq!(report["host"], host, "{episode}");
    assert_eq!(report["model"], model, "{episode}");
    assert_eq!(report["failure"], Value::Null, "{episode}");
    assert!(
        report["usage"]["input_tokens"].as_u64().unwrap() > 0,
        "{episode}"
    );
    assert!(
        report["usage"]["output_tokens"].as_u64().unwrap() > 0,
        "{episode}"
    );
    assert_eq!(
        report["usage"]["cost_usd"],
        Value::Null,
        "{host} states no cost"
    );
    assert_eq!(
        result["attempts"][0]["usage"], report["usage"],
        "judging reads the host report"
    );
    let calls = json(&question.join("attempt-1/calls.json"))["calls"].clone();
    let tools: Vec<&str> = calls
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["query", "submit_csv"]);
    // The host's tokens reach summary.csv (cost empty: not stated).
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(summary.as_bytes());
    let header = rows.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let row = rows.records().next().unwrap().unwrap();
    assert_eq!(&row[at("condition")], condition_name);
    assert_eq!(&row[at("cost_usd")], "");
    assert!(
        row[at("input_tokens")].parse::<u64>().unwrap() > 0,
        "{summary}"
    );
    assert!(
        row[at("output_tokens")].parse::<u64>().unwrap() > 0,
        "{summary}"
    );
    // Loading re-derives the host report and agrees.
    let o = okn().arg("report").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    per_episode
}

/// A rejected key: the host's own authentication failure, recorded in its
/// host report, and the attempt blocked on that evidence, not a miss.
fn a_rejected_key_is_blocked(
    host: &str,
    model: &str,
    env: fn(&str) -> Vec<(&'static str, String)>,
) {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = standin(&dir.path().join("requests"), &["--reject-key"]);
    let out = dir.path().join("runs");
    let o = run_host(host, model, &out, &env(&url), &["--limit", "1"]);
    let text = stdout(&o);
    assert!(
        text.contains("blocked (the agent host reported an error: "),
        "{text}{}",
        stderr(&o)
    );
    let question = out.join(format!(
        "{QUESTION}_results/demo-kg-all-tools-{host}__kg-named"
    ));
    let episode = json(&question.join("attempt-1/episode.json"));
    assert_eq!(
        episode["host_report"]["failure"]["kind"], "authentication",
        "{episode}"
    );
    assert_eq!(
        episode["host_report"]["usage"],
        Value::Null,
        "absent, not 0"
    );
    let result = json(&question.join("result.json"));
    assert_eq!(result["attempts"][0]["blocked"], true, "{result}");
    assert_eq!(
        result["attempts"][0]["blocked_reason"],
        episode["host_report"]["failure"]["reason"]
    );
}

/// Issue 25: `run --agent codex` drives `codex exec --json` with a fresh
/// `CODEX_HOME` holding its config, our proxy its only MCP server.
#[test]
fn codex_answers_exactly_through_the_proxy_with_its_usage_recorded() {
    let per_episode = answers_exactly("codex", "gpt-standin-1", codex_env);
    eprintln!("codex: {per_episode:.1} s per episode against the stand-in");
}

/// Issue 25: `run --agent gemini` drives the Gemini CLI with a fresh
/// `GEMINI_CLI_HOME` holding its settings, every built-in tool excluded.
#[test]
fn gemini_answers_exactly_through_the_proxy_with_its_usage_recorded() {
    let per_episode = answers_exactly("gemini", "gemini-standin-1", gemini_env);
    eprintln!("gemini: {per_episode:.1} s per episode against the stand-in");
}

/// Issue 25: codex's `turn.failed` on a 401 is its authentication failure.
#[test]
fn a_key_codex_is_refused_blocks_the_attempt_as_an_authentication_failure() {
    a_rejected_key_is_blocked("codex", "gpt-standin-1", codex_env);
}

/// Issue 25: gemini's `API_KEY_INVALID` (on stderr) is its authentication
/// failure.
#[test]
fn a_key_gemini_is_refused_blocks_the_attempt_as_an_authentication_failure() {
    a_rejected_key_is_blocked("gemini", "gemini-standin-1", gemini_env);
}

/// Issue 25: a flag a host cannot honour is refused for that host by
/// name, before anything runs.
#[test]
fn a_flag_a_host_cannot_honour_is_refused_by_name() {
    for (host, flags, says) in [
        (
            "codex",
            &["--max-turns", "3"][..],
            "--max-turns cannot be honoured by --agent codex",
        ),
        (
            "codex",
            &["--effort", "max"][..],
            "--effort max cannot be honoured by --agent codex",
        ),
        (
            "gemini",
            &["--effort", "high"][..],
            "--effort cannot be honoured by --agent gemini",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let o = run_host(host, "m", &dir.path().join("runs"), &[], flags);
        assert_eq!(o.status.code(), Some(2), "{host} {flags:?}");
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
        assert!(!dir.path().join("runs").exists(), "nothing written");
    }
    let dir = tempfile::tempdir().unwrap();
    let o = okn()
        .env_remove("OPENAI_API_KEY")
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
        .args(["--agent", "codex", "--agent-program"])
        .arg(tool("codex"))
        .arg("--out")
        .arg(dir.path().join("runs"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("OPENAI_API_KEY is not set, so every codex episode would fail"),
        "{}",
        stderr(&o)
    );
}

/// Issue 25 (with issue 24's rule): the host report `episode.json` records
/// is what the host's parser gives from `agent.json`; an edited one is
/// refused by name when the root is loaded.
#[test]
fn an_edited_host_report_is_refused_on_load() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("runs");
    let o = okn()
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
        .args(["--agent", "scripted:oracle", "--limit", "1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let episode_path = out.join(format!(
        "{QUESTION}_results/demo-kg-all-tools__kg-named/attempt-1/episode.json"
    ));
    let mut episode = json(&episode_path);
    assert_eq!(episode["host_report"]["host"], "scripted");
    episode["host_report"]["model"] = "claude-opus-5".into();
    std::fs::write(&episode_path, episode.to_string()).unwrap();
    let o = okn().arg("report").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("attempt-1/episode.json: host_report is {\"host\":\"scripted\",\"model\":\"claude-opus-5\""),
        "{}",
        stderr(&o)
    );
}
