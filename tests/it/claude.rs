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
use std::process::{Command, Output};

use crate::support::{KillOnDrop, okn, processes_mentioning, repo, stderr, stdout, tool};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_okn-benchmark");

/// Starts `standin-model` playing `strategy`; returns it and its URL.
fn standin(strategy: &str, log: &Path) -> (KillOnDrop, String) {
    standin_with(strategy, log, &[])
}

/// [`standin`] with further flags.
fn standin_with(strategy: &str, log: &Path, extra: &[&str]) -> (KillOnDrop, String) {
    crate::support::standin_single(strategy, Some(log), extra)
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

/// The CLI's own tool discovery, which loads the proxy's deferred tools:
/// `ToolSearch`, and the placeholder newer CLIs declare (`defer_loading`,
/// "never call this tool") to keep deferred loading on.
fn is_discovery_machinery(name: &str) -> bool {
    matches!(name, "ToolSearch" | "DeferredToolPlaceholder")
}

/// Every request the stand-in logged, in order.
fn requests(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut all: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    all.sort();
    all
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
        .filter(|n| !n.starts_with("mcp__okn__") && !is_discovery_machinery(n))
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
    // Issue 25: the claude parser's host report, recorded in episode.json.
    assert_eq!(episode["host_report"]["host"], "claude");
    assert_eq!(episode["host_report"]["model"], "claude-standin-1");
    assert_eq!(episode["host_report"]["failure"], Value::Null);
    let usage = &episode["host_report"]["usage"];
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
    // The page's host report (issue 25, section 5): each figure as the
    // host stated it.
    for (figure, value) in [
        ("host", "claude".to_string()),
        ("model resolved", "claude-standin-1".to_string()),
        (
            "cost",
            format!("${:.6}", usage["cost_usd"].as_f64().unwrap()),
        ),
        (
            "input tokens, not cached",
            usage["input_tokens"].to_string(),
        ),
        (
            "input tokens read from the cache",
            usage["cache_read_input_tokens"].to_string(),
        ),
        ("output tokens", usage["output_tokens"].to_string()),
        ("turns", turns.to_string()),
    ] {
        assert!(
            page.contains(&format!("<tr><td>{figure}</td><td>{value}</td></tr>")),
            "{figure}: {page}"
        );
    }
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
                && stderr(&o).contains(
                    "set ANTHROPIC_API_KEY, or CLAUDE_CODE_OAUTH_TOKEN to the token 'claude \
                     setup-token' prints, then run again"
                ),
            "{}",
            stderr(&o)
        );
        assert!(!out.join("conditions").exists(), "nothing was recorded");
    }

    /// Issue 25: the fresh home is the CLI's alone. Our proxy, which the
    /// CLI starts, gets the user's `HOME` back, so a profile's `~` (and an
    /// upstream's caches) are the user's; else every episode against such
    /// a profile would start no server.
    #[test]
    fn a_profiles_home_folder_is_the_users_own_inside_a_claude_episode() {
        let dir = tempfile::tempdir().unwrap();
        let (_server, url) = standin("oracle", &dir.path().join("requests"));
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join("bin")).unwrap();
        std::os::unix::fs::symlink(BIN, home.join("bin/okn-kg")).unwrap();
        let profile = dir.path().join("home-kg.toml");
        std::fs::write(
            &profile,
            format!(
                "name = \"home-kg\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"~/bin/okn-kg\"\n\
                 args = [\"kg-server\", \"--data\", {:?}]\n",
                repo().join("demo/kg").display().to_string()
            ),
        )
        .unwrap();
        let out = dir.path().join("runs");
        let o = okn()
            .env("HOME", &home)
            .env("ANTHROPIC_BASE_URL", &url)
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
                "--agent",
                "claude",
                "--model",
                "claude-standin-1",
                "--limit",
                "1",
                "--agent-timeout",
                "120",
            ])
            .arg("--profile")
            .arg(&profile)
            .arg("--claude")
            .arg(tool("claude"))
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let result = json(&out.join(
            "biobricks-ice-active-chemicals_single_results/home-kg-all-tools__kg-named/result.json",
        ));
        assert_eq!(result["attempts"][0]["exact"], true, "{result}");
        let condition = json(&out.join("conditions/home-kg-all-tools__kg-named.json"));
        assert_eq!(
            condition["identity"]["upstream"]["command"], "~/bin/okn-kg",
            "{condition}"
        );
    }

    /// Issue 25: an episode runs in a fresh home, so a subscription's login
    /// stored under `~/.claude` (by `claude` and `/login`) is not what it
    /// sees; the login check must say so before the first episode rather
    /// than pass on the stored login and let every episode fail.
    #[test]
    fn a_login_stored_in_the_users_home_is_refused_since_no_episode_sees_it() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::write(
            home.join(".claude/.credentials.json"),
            r#"{"claudeAiOauth":{"accessToken":"sk-ant-oat01-test","refreshToken":"sk-ant-ort01-test","expiresAt":4102444800000,"scopes":["user:inference"],"subscriptionType":"max"}}"#,
        )
        .unwrap();
        // The CLI itself, in that home, reads the stored login.
        let status = Command::new(tool("claude"))
            .args(["auth", "status", "--json"])
            .env("HOME", &home)
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("CLAUDE_CODE_OAUTH_TOKEN")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .output()
            .unwrap();
        assert!(
            stdout(&status).contains("\"loggedIn\": true"),
            "{}",
            stdout(&status)
        );
        let out = dir.path().join("runs");
        let o = okn()
            .env("HOME", &home)
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("CLAUDE_CODE_OAUTH_TOKEN")
            .env_remove("CLAUDE_CONFIG_DIR")
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
            stderr(&o).contains("a login stored by /login is not read")
                && stderr(&o).contains("CLAUDE_CODE_OAUTH_TOKEN"),
            "{}",
            stderr(&o)
        );
        assert!(!out.join("conditions").exists(), "nothing was recorded");
        let credentials = std::fs::read_to_string(home.join(".claude/.credentials.json")).unwrap();
        assert!(credentials.contains("sk-ant-oat01-test"), "left as it was");
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

    /// Issue 25: every episode read the user's claude home (auto-memory's
    /// `MEMORY.md` under `~/.claude/projects/<cwd slug>/memory/` was
    /// injected, and every system prompt asked the model to write
    /// memories), so a root re-recorded at the same path could carry
    /// context from one recording into the next. Now each episode has an
    /// empty home and config folder of its own, removed after it, and
    /// auto-memory off.
    #[test]
    fn an_episode_reads_nothing_of_the_users_claude_home_and_writes_no_memory() {
        let dir = tempfile::tempdir().unwrap();
        let (_server, url) = standin("oracle", &dir.path().join("requests"));
        let home = dir.path().join("home");
        let out = dir.path().join("runs");
        let cwd = out.join(
            "biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named/attempt-1/cwd",
        );
        let slug: String = cwd
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let planted = [
            (".claude/CLAUDE.md", "MARKER-USER-INSTRUCTIONS"),
            (
                &format!(".claude/projects/{slug}/memory/MEMORY.md") as &str,
                "MARKER-AUTO-MEMORY",
            ),
            (
                ".claude/skills/marker/SKILL.md",
                "---\nname: marker-skill\ndescription: MARKER-SKILL\n---\nMARKER-SKILL",
            ),
            (
                ".claude/agents/marker.md",
                "---\nname: marker-agent\ndescription: MARKER-AGENT\n---\nMARKER-AGENT",
            ),
            (
                ".claude/settings.json",
                r#"{"env": {"MARKER_SETTING": "MARKER-SETTINGS"}, "permissions": {"allow": ["Bash"]}}"#,
            ),
        ];
        for (path, text) in planted {
            let path = home.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::fs::write(dir.path().join("CLAUDE.md"), "MARKER-ABOVE-CWD").unwrap();
        let before = crate::support::snapshot(&home);
        let tmp = dir.path().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let tmp_text = tmp.to_string_lossy().into_owned();
        let o = run_claude_env(
            &url,
            &home,
            &out,
            &["--limit", "1", "--agent-timeout", "120"],
            &[("TMPDIR", tmp_text.as_str())],
        );
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        assert!(stdout(&o).contains("exact 1.00"), "{}", stdout(&o));
        let logged = requests(&dir.path().join("requests"));
        assert!(logged.len() >= 2, "{logged:?}");
        for (path, text) in &logged {
            for marker in [
                "MARKER-ABOVE-CWD",
                "MARKER-USER-INSTRUCTIONS",
                "MARKER-AUTO-MEMORY",
                "MARKER-SKILL",
                "MARKER-AGENT",
                "MARKER-SETTINGS",
            ] {
                assert!(
                    !text.contains(marker),
                    "{marker} reached {}",
                    path.display()
                );
            }
            // The auto-memory section of the system prompt is gone.
            assert!(!text.contains("# auto memory"), "{}", path.display());
            assert!(
                !text.contains(&home.to_string_lossy().into_owned()),
                "{}",
                path.display()
            );
        }
        // The CLI wrote nothing into the user's home (no .claude.json, no
        // transcript, no memory), and its own folder is gone.
        assert_eq!(crate::support::snapshot(&home), before);
        let left: Vec<_> = std::fs::read_dir(&tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with("okn-episode-home-"))
            .collect();
        assert!(left.is_empty(), "a fresh home was left behind: {left:?}");
        // Nothing of the fresh home lands in the attempt.
        let attempt = cwd.parent().unwrap();
        let mut names: Vec<String> = std::fs::read_dir(attempt)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert!(
            std::fs::read_dir(&cwd).unwrap().next().is_none(),
            "the scratch cwd stays empty"
        );
        for name in &names {
            let text = std::fs::read_to_string(attempt.join(name)).unwrap_or_default();
            assert!(
                !text.contains("okn-episode-home-"),
                "{name} names the fresh home"
            );
        }
    }

    /// Issue 25: with claude-code 2.1.332 every episode was offered the
    /// built-in `ListAgents` (the other Claude sessions on the machine,
    /// parallel shards included), called with no permission asked and never
    /// in `calls.json`; and the stand-in, whose MCP tools the CLI now
    /// defers behind `ToolSearch`, took ToolSearch's `query` for the SPARQL
    /// tool's, so every episode ended "no answer". Now ListAgents is
    /// blocked, and the stand-in loads the deferred tools as a model does.
    #[test]
    fn the_current_cli_offers_no_list_agents_and_its_deferred_tools_are_loaded_then_queried() {
        let dir = tempfile::tempdir().unwrap();
        let (_server, url) = standin("oracle", &dir.path().join("requests"));
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let out = dir.path().join("runs");
        let o = run_claude(
            &url,
            &home,
            &out,
            &["--limit", "1", "--agent-timeout", "120"],
        );
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let logged = requests(&dir.path().join("requests"));
        let mut searched = Vec::new();
        let mut deferred = false;
        for (_, text) in &logged {
            let request: Value = serde_json::from_str(text).unwrap();
            for tool in request["tools"].as_array().into_iter().flatten() {
                let name = tool["name"].as_str().unwrap();
                assert_ne!(name, "ListAgents");
                assert!(
                    name.starts_with("mcp__okn__") || is_discovery_machinery(name),
                    "{name} offered"
                );
                deferred |= name == "ToolSearch";
            }
            for message in request["messages"].as_array().into_iter().flatten() {
                for block in message["content"].as_array().into_iter().flatten() {
                    if block["type"] == "tool_use" && block["name"] == "ToolSearch" {
                        searched.push(block["input"]["query"].as_str().unwrap().to_string());
                    }
                }
            }
        }
        assert!(deferred, "this CLI defers MCP tools behind ToolSearch");
        assert!(
            searched
                .iter()
                .any(|q| q.starts_with("select:") && q.contains("mcp__okn__query")),
            "{searched:?}"
        );
        let attempt = out.join(
            "biobricks-ice-active-chemicals_single_results/demo-kg-all-tools__kg-named/attempt-1",
        );
        let calls = json(&attempt.join("calls.json"))["calls"].clone();
        let tools: Vec<&str> = calls
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["tool"].as_str().unwrap())
            .collect();
        assert_eq!(tools, ["query", "submit_csv"]);
        let result = json(&attempt.parent().unwrap().join("result.json"));
        assert_eq!(result["attempts"][0]["exact"], true, "{result}");
    }
}
