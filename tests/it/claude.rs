//! The claude agent host end to end: the real `claude` CLI (npm package
//! `@anthropic-ai/claude-code`, installed by `scripts/test`) runs whole
//! episodes through the real proxy in front of the demo KG server, with
//! `standin-model` answering its Messages API calls on 127.0.0.1.
//!
//! This is the only place a model is imitated: `standin-model` plays a
//! scripted strategy (the answer key, then `submit_csv`) through the CLI's
//! own tool loop. Everything else (the CLI's flags and permissions, MCP
//! config, the proxy, the server, the scoring) is the real thing.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::{
    KillOnDrop, free_port, okn, processes_mentioning, repo, stderr, stdout, tool, wait_for_port,
};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_okn-benchmark");

/// Starts `standin-model` playing `strategy`; returns it and its URL.
fn standin(strategy: &str, log: &Path) -> (KillOnDrop, String) {
    standin_with(strategy, log, &[])
}

/// [`standin`] with further flags.
fn standin_with(strategy: &str, log: &Path, extra: &[&str]) -> (KillOnDrop, String) {
    let port = free_port();
    let mut child = Command::new(BIN)
        .args([
            "standin-model",
            "--corpus",
            "demo/benchmarks-single",
            "--strategy",
            strategy,
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

fn run_claude(url: &str, home: &Path, out: &Path, extra: &[&str]) -> Output {
    run_claude_env(url, home, out, extra, &[])
}

/// [`run_claude`] with more environment for the run (and so its hosts).
fn run_claude_env(
    url: &str,
    home: &Path,
    out: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Output {
    okn()
        .envs(env.iter().copied())
        .env("HOME", home)
        .env("ANTHROPIC_BASE_URL", url)
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .args([
            "run",
            "--corpus",
            "demo/benchmarks-single",
            "--tools",
            "all-tools",
            "--kg-hint",
            "tags",
        ])
        .args([
            "--profile",
            "profiles/demo-kg.local.toml",
            "--agent",
            "claude",
            "--model",
            "claude-standin-1",
        ])
        .arg("--claude")
        .arg(tool("claude"))
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_real_cli_answers_through_the_proxy_and_only_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = standin("oracle", &dir.path().join("requests"));
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = dir.path().join("runs");
    let o = run_claude(
        &url,
        &home,
        &out,
        &["--limit", "2", "--agent-timeout", "120"],
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o)
            .trim_end()
            .ends_with("exact 1.00 · mean F1 1.00 over 2 questions"),
        "{}",
        stdout(&o)
    );

    let condition = json(&out.join("conditions/demo-kg-all-tools__kg-named.json"));
    assert_eq!(condition["identity"]["agent"], "claude");
    assert_eq!(condition["identity"]["model"], "claude-standin-1");
    assert_eq!(
        condition["settings"]["model_resolved"], "claude-standin-1",
        "read from the CLI's own report"
    );
    assert!(
        condition["settings"]["agent_version"]
            .as_str()
            .unwrap()
            .contains("Claude Code")
    );

    let attempt = out.join(
        "biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named/attempt-1",
    );
    let report = json(&attempt.join("agent.json"));
    assert_eq!(report["type"], "result");
    assert_eq!(
        report["permission_denials"],
        serde_json::json!([]),
        "the proxy's tools are allowed"
    );
    // Every name in the disallowed list is a tool this CLI knows (it warns
    // about the others: the list has gone stale).
    let warnings = std::fs::read_to_string(attempt.join("agent.stderr.log")).unwrap_or_default();
    assert!(!warnings.contains("matches no known tool"), "{warnings}");
    let command = std::fs::read_to_string(attempt.join("command.txt")).unwrap();
    for flag in [
        "-p --mcp-config",
        "--strict-mcp-config",
        "--setting-sources ''",
        "--disable-slash-commands",
        "--disallowed-tools Agent,",
        "--allowed-tools mcp__okn",
        "--output-format json",
        "--model claude-standin-1",
    ] {
        assert!(command.contains(flag), "{flag}: {command}");
    }
    let calls = json(&attempt.join("calls.json"))["calls"].clone();
    let tools: Vec<&str> = calls
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["query", "submit_csv"]);

    // What the model was offered: the proxy's tools and nothing else, so the
    // disallowed list covers every built-in tool of this CLI.
    let mut offered = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(dir.path().join("requests")).unwrap() {
        let request = json(&entry.unwrap().path());
        for tool in request["tools"].as_array().into_iter().flatten() {
            offered.insert(tool["name"].as_str().unwrap().to_string());
        }
    }
    let stray: Vec<&String> = offered
        .iter()
        .filter(|n| !n.starts_with("mcp__okn__") && *n != "ToolSearch")
        .collect();
    assert!(
        stray.is_empty(),
        "tools a model would have beside the proxy's: {stray:?}"
    );
    assert!(offered.contains("mcp__okn__submit_csv"));

    // Usage and cost flow from the stand-in's stream, through the CLI's
    // report, into episode.json, result.json, summary.csv and the page.
    // The stand-in says a request of B bytes took B/4 input tokens (a
    // quarter of them read from the cache): attempt 1 made the first
    // num_turns requests.
    let turns = report["num_turns"].as_u64().unwrap();
    let mut expected_input = 0;
    for n in 1..=turns {
        let bytes = std::fs::metadata(dir.path().join(format!("requests/request-{n:04}.json")))
            .unwrap()
            .len();
        expected_input += (bytes / 4).max(1);
    }
    let episode = json(&attempt.join("episode.json"));
    let usage = &episode["usage"];
    assert_eq!(usage["source"], "agent.json");
    assert_eq!(
        usage["input_tokens"].as_u64().unwrap()
            + usage["cache_read_input_tokens"].as_u64().unwrap(),
        expected_input,
        "{usage}"
    );
    assert_eq!(usage["cost_usd"], report["total_cost_usd"]);
    assert!(usage["cost_usd"].as_f64().unwrap() > 0.0, "{usage}");
    assert_eq!(usage["output_tokens"], report["usage"]["output_tokens"]);
    let result = json(&attempt.parent().unwrap().join("result.json"));
    assert_eq!(&result["attempts"][0]["usage"], usage);
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let header: Vec<&str> = summary.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = summary.lines().nth(1).unwrap().split(',').collect();
    let cell = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(
        cell("input_tokens"),
        expected_input.to_string(),
        "{summary}"
    );
    assert_eq!(cell("output_tokens"), usage["output_tokens"].to_string());
    assert_eq!(
        cell("cost_usd"),
        format!("{:.6}", usage["cost_usd"].as_f64().unwrap())
    );
    // Per condition: the total and the mean, in the terminal report and
    // the README table.
    let second = json(&out.join(
        "fiokg-chemical-manufacturers_single_results/demo-kg-all-tools__kg-named/result.json",
    ));
    let total = usage["cost_usd"].as_f64().unwrap()
        + second["attempts"][0]["usage"]["cost_usd"].as_f64().unwrap();
    let report = crate::support::okn()
        .args(["report"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        stdout(&report).contains(&format!(
            "demo-kg-all-tools__kg-named: cost ${total:.4} over 2 attempts (${:.4} per attempt)",
            total / 2.0
        )),
        "{}",
        stdout(&report)
    );
    let build = crate::support::okn_in(dir.path())
        .arg("build")
        .output()
        .unwrap();
    assert!(build.status.success(), "{}", stderr(&build));
    let page = std::fs::read_to_string(dir.path().join(
        "site/roots/runs/a/biobricks-ice-active-chemicals_single/demo-kg-all-tools__kg-named/attempt-1.html",
    ))
    .unwrap();
    assert!(
        page.contains(&format!(
            "cost ${:.6} · {expected_input} input tokens (",
            usage["cost_usd"].as_f64().unwrap()
        )),
        "{page}"
    );
}

#[test]
fn a_cli_that_hangs_is_killed_at_the_agent_timeout_with_its_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = standin("hang", &dir.path().join("requests"));
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = dir.path().join("runs");
    let started = std::time::Instant::now();
    let o = run_claude(&url, &home, &out, &["--limit", "1", "--agent-timeout", "8"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(started.elapsed().as_secs() < 60);
    assert!(
        stdout(&o).contains("timed out, no answer"),
        "{}",
        stdout(&o)
    );
    let result = json(&out.join(
        "biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named/result.json",
    ));
    assert_eq!(result["attempts"][0]["timed_out"], true);
    // The proxy it started went with it.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let marker = out.to_string_lossy().into_owned();
    let alive = processes_mentioning(&marker);
    assert_eq!(
        alive, 0,
        "a process of the timed-out episode is still running"
    );
}

mod regression {
    //! One test per fixed defect, named after what it guards; the comment
    //! says what broke.

    use super::*;

    // With a claude CLI that was not logged in, every attempt was recorded
    // as a measured "no answer" and the run ended "exact 0.00", exit 0: an
    // expired login made a 0% study.
    #[test]
    fn a_claude_that_is_not_logged_in_is_refused_before_any_episode() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let out = dir.path().join("runs");
        let o = okn()
            .env("HOME", &home)
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
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
                "claude",
                "--limit",
                "1",
            ])
            .arg("--claude")
            .arg(tool("claude"))
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
        assert!(
            stderr(&o).contains("is not logged in ('")
                && stderr(&o).contains("set ANTHROPIC_API_KEY, then run again"),
            "{}",
            stderr(&o)
        );
        assert!(!out.join("conditions").exists(), "nothing was recorded");
    }

    // An API that rejected the key part-way (401: an expired login) gave
    // "no answer submitted" misses; the host's own error report is
    // evidence that the agent was never measured.
    #[test]
    fn an_episode_whose_host_reports_an_error_is_blocked_not_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let (_server, url) =
            standin_with("oracle", &dir.path().join("requests"), &["--reject-key"]);
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let out = dir.path().join("runs");
        // The real CLI retries a rejected key with backoff for minutes
        // before it reports the error; no retries here, same report.
        let o = run_claude_env(
            &url,
            &home,
            &out,
            &["--limit", "1", "--agent-timeout", "120"],
            &[("CLAUDE_CODE_MAX_RETRIES", "0")],
        );
        let text = stdout(&o);
        assert!(
            text.contains("attempt 1/1")
                && text.contains("blocked (the agent host reported an error: "),
            "{text}{}",
            stderr(&o)
        );
        let result = json(&out.join(
            "biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named/result.json",
        ));
        let attempt = &result["attempts"][0];
        assert_eq!(attempt["blocked"], true, "{attempt}");
        assert!(
            attempt["blocked_reason"]
                .as_str()
                .unwrap()
                .starts_with("the agent host reported an error: "),
            "{attempt}"
        );
        let condition = json(&out.join("conditions/demo-kg-all-tools__kg-named.json"));
        assert_eq!(condition["aggregate"]["blocked_attempts"], 1);
        assert_eq!(
            condition["aggregate"]["exact_rate"],
            Value::Null,
            "no rate from nothing measured"
        );
    }
}
