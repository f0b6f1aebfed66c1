//! The codex, gemini and openai agent hosts end to end (issue 25, "The hosts"):
//! the real CLIs from npm (`@openai/codex`, `@google/gemini-cli`,
//! installed by `scripts/test`) and the built-in openai loop run whole
//! episodes through the real proxy in front of the demo KG server, with
//! `standin-model` answering their Responses, Gemini and Chat Completions
//! API calls on 127.0.0.1 (`docs/HOSTS.md`).

use std::path::Path;
use std::process::Output;
use std::time::Instant;

use serde_json::Value;

use crate::support::{KillOnDrop, free_port, okn, stderr, stdout, tool};

/// Starts `standin-model` playing the oracle (with `extra` flags); returns
/// it and its URL.
fn standin(log: &Path, extra: &[&str]) -> (KillOnDrop, String) {
    crate::support::standin_single("oracle", Some(log), extra)
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
    // The tool census (issue 25, section 3): the proxy's tools as the host
    // names them, and for codex its three MCP-resource tools, allowed by
    // name; nothing else.
    let census = &condition["settings"]["census"];
    assert_eq!(census["host_version"], version, "{census}");
    let mut offered: Vec<&str> = census["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let prefix = if host == "gemini" {
        "mcp_okn_"
    } else {
        "mcp__okn__"
    };
    let proxy: Vec<&str> = offered
        .iter()
        .copied()
        .filter(|t| t.starts_with(prefix))
        .collect();
    assert_eq!(
        proxy.iter().map(|t| &t[prefix.len()..]).collect::<Vec<_>>(),
        [
            "get_descendants",
            "get_schema",
            "list_graphs",
            "lookup_uri",
            "query",
            "submit_csv"
        ]
    );
    offered.retain(|t| !t.starts_with(prefix));
    let own: &[&str] = if host == "codex" {
        &[
            "list_mcp_resource_templates",
            "list_mcp_resources",
            "read_mcp_resource",
        ]
    } else {
        &[]
    };
    assert_eq!(offered, own, "{census}");
    let question = out.join(format!("{QUESTION}_results/{condition_name}"));
    let result = json(&question.join("result.json"));
    assert_eq!(result["attempts"][0]["exact"], true, "{result}");
    let episode = json(&question.join("attempt-1/episode.json"));
    assert_eq!(episode["format"], 5);
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

/// What an attempt left for a failure message: the host's stderr as
/// recorded, the proxy's calls, and how many requests the stand-in got.
fn evidence(attempt: &Path, requests: &Path) -> String {
    let read = |name: &str| {
        std::fs::read_to_string(attempt.join(name)).unwrap_or_else(|e| format!("({e})"))
    };
    let received = std::fs::read_dir(requests).map_or(0, |d| d.count());
    format!(
        "agent.stderr.log:\n{}\ncalls.json:\n{}\nthe stand-in received {received} requests",
        read("agent.stderr.log"),
        read("calls.json")
    )
}

/// A rejected key: the host's own authentication failure, recorded in its
/// host report, and the attempt blocked on that evidence, not a miss.
fn a_rejected_key_is_blocked(
    host: &str,
    model: &str,
    env: fn(&str) -> Vec<(&'static str, String)>,
) {
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("requests");
    let (_server, url) = standin(&requests, &["--reject-key"]);
    let out = dir.path().join("runs");
    let o = run_host(host, model, &out, &env(&url), &["--limit", "1"]);
    let text = stdout(&o);
    let question = out.join(format!(
        "{QUESTION}_results/demo-kg-all-tools-{host}__kg-named"
    ));
    assert!(
        text.contains("blocked (the agent host reported an error: "),
        "{text}{}\n{}",
        stderr(&o),
        evidence(&question.join("attempt-1"), &requests)
    );
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

/// The key a test gives the openai host: it must appear in no file.
const OPENAI_TEST_KEY: &str = "sk-okn-wire-Hq3v8Xr2";

/// `run --agent openai:gpt-standin-1 --base-url URL --api-key-env
/// OKN_TEST_OPENAI_KEY` over the single corpus's demo KG (the loop is this
/// program: no `--agent-program`), with `extra` flags.
fn run_openai(url: &str, out: &Path, extra: &[&str]) -> Output {
    okn()
        .env("OKN_TEST_OPENAI_KEY", OPENAI_TEST_KEY)
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
            "openai:gpt-standin-1",
            "--base-url",
            &format!("{url}/v1"),
            "--api-key-env",
            "OKN_TEST_OPENAI_KEY",
            "--agent-timeout",
            "120",
        ])
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

/// Every request the stand-in logged into `dir`, in order, as bytes.
fn logged_requests(dir: &Path) -> Vec<Vec<u8>> {
    let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

const OPENAI_CONDITION: &str = "demo-kg-all-tools-openai__kg-named";

/// Issue 25, "The hosts" (openai): `run --agent openai:MODEL --base-url
/// URL` starts the built-in loop (this program's `openai-agent`) per
/// episode with our proxy as its only MCP server: the exact answer lands
/// in `result.json`, the loop's report is parsed into the host report,
/// and `summary.csv` holds exactly the stand-in's token counts (per
/// request, a quarter of its bytes in; out, a quarter of each call's
/// arguments plus one). The API root and the model are in the condition's
/// identity, the key's variable name in `command.txt`, and `report` and
/// `build` read the root.
#[test]
fn openai_answers_exactly_through_the_proxy_with_the_standins_usage_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests");
    let (_server, url) = standin(&log, &[]);
    let out = dir.path().join("runs");
    let started = Instant::now();
    let o = run_openai(&url, &out, &["--limit", "1"]);
    let wall = started.elapsed().as_secs_f64();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    eprintln!("openai: {wall:.2} s for one episode through run against the stand-in");
    assert!(
        stdout(&o)
            .trim_end()
            .ends_with("exact 1.00 · mean F1 1.00 over 1 question"),
        "{}",
        stdout(&o)
    );
    let condition = json(&out.join(format!("conditions/{OPENAI_CONDITION}.json")));
    let identity = &condition["identity"];
    assert_eq!(identity["agent"], "openai:gpt-standin-1");
    assert_eq!(identity["model"], "gpt-standin-1");
    assert_eq!(identity["base_url"], format!("{url}/v1"));
    assert_eq!(identity["effort"], Value::Null);
    // The census (issue 25, section 3): the loop offered the proxy's tools
    // and nothing else, under the proxy's own names.
    assert_eq!(
        condition["settings"]["census"]["tools"],
        serde_json::json!([
            "get_descendants",
            "get_schema",
            "list_graphs",
            "lookup_uri",
            "query",
            "submit_csv"
        ])
    );
    assert!(
        identity["host_version"]
            .as_str()
            .unwrap()
            .ends_with("(openai loop)"),
        "{identity}"
    );
    let question = out.join(format!("{QUESTION}_results/{OPENAI_CONDITION}"));
    let result = json(&question.join("result.json"));
    assert_eq!(result["attempts"][0]["exact"], true, "{result}");
    let attempt = question.join("attempt-1");
    let command = std::fs::read_to_string(attempt.join("command.txt")).unwrap();
    assert!(
        command.contains(" openai-agent --model gpt-standin-1 --base-url ")
            && command.contains(" --api-key-env OKN_TEST_OPENAI_KEY --timeout-s 115 --mcp-config "),
        "{command}"
    );
    let episode = json(&attempt.join("episode.json"));
    let report = &episode["host_report"];
    assert_eq!(report["host"], "openai", "{episode}");
    assert_eq!(report["model"], "gpt-standin-1");
    assert_eq!(episode["model_resolved"], "gpt-standin-1");
    assert_eq!(report["failure"], Value::Null, "{episode}");
    assert_eq!(report["usage"]["num_turns"], 2, "{episode}");
    assert_eq!(report["usage"]["cost_usd"], Value::Null, "no prices given");
    assert_eq!(result["attempts"][0]["usage"], report["usage"]);

    // The stand-in's token rule, from the requests it logged.
    let sent = logged_requests(&log);
    assert_eq!(sent.len(), 2);
    let prompt: u64 = sent.iter().map(|b| (b.len() as u64 / 4).max(1)).sum();
    let cached: u64 = sent.iter().map(|b| (b.len() as u64 / 4).max(1) / 4).sum();
    let second: Value = serde_json::from_slice(&sent[1]).unwrap();
    let query_arguments = second["messages"][1]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap()
        .to_string();
    let calls = json(&attempt.join("calls.json"))["calls"].clone();
    let submit_arguments = serde_json::json!({"csv": calls[1]["arguments"]["csv"]}).to_string();
    let completion: u64 = [query_arguments, submit_arguments]
        .iter()
        .map(|a| a.chars().count() as u64 / 4 + 1)
        .sum();
    assert_eq!(report["usage"]["input_tokens"], prompt - cached);
    assert_eq!(report["usage"]["cache_read_input_tokens"], cached);
    assert_eq!(report["usage"]["output_tokens"], completion);
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(summary.as_bytes());
    let header = rows.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let row = rows.records().next().unwrap().unwrap();
    assert_eq!(&row[at("condition")], OPENAI_CONDITION);
    assert_eq!(&row[at("cost_usd")], "");
    assert_eq!(row[at("input_tokens")], prompt.to_string(), "{summary}");
    assert_eq!(
        row[at("output_tokens")],
        completion.to_string(),
        "{summary}"
    );

    // Loading derives the host report again and agrees; pages build.
    let o = okn().arg("report").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        crate::support::flat(&stdout(&o)).contains(&format!(
            "{OPENAI_CONDITION}: cost reported by 0 of 1 attempts (no honest total); {prompt} \
             input and {completion} output tokens"
        )),
        "{}",
        stdout(&o)
    );
    let o = crate::support::okn_in(dir.path())
        .arg("build")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(readme.contains("openai:gpt-standin-1"), "{readme}");
    let o = crate::support::okn_in(dir.path())
        .args(["build", "--check"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

/// Issue 25, "The hosts" (openai): a key the API refuses is the loop's
/// authentication failure, recorded in the host report; the attempt is
/// blocked on that evidence (not a miss), and the key, read from the
/// variable `--api-key-env` names, is in no file of the runs root.
#[test]
fn a_key_the_openai_api_refuses_blocks_the_attempt_and_is_written_nowhere() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = standin(&dir.path().join("requests"), &["--reject-key"]);
    let out = dir.path().join("runs");
    let o = run_openai(&url, &out, &["--limit", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains(
            "blocked (the agent host reported an error: HTTP 401 (authentication): Incorrect \
             API key provided."
        ),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    let question = out.join(format!("{QUESTION}_results/{OPENAI_CONDITION}"));
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
    let mut files = 0;
    for entry in walkdir::WalkDir::new(&out) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            files += 1;
            let bytes = std::fs::read(entry.path()).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(OPENAI_TEST_KEY),
                "{} holds the key",
                entry.path().display()
            );
        }
    }
    assert!(files > 5, "the attempt was recorded");
    assert!(!stdout(&o).contains(OPENAI_TEST_KEY) && !stderr(&o).contains(OPENAI_TEST_KEY));
}

/// Issue 25, "The hosts" (openai): the API root is part of the condition's
/// identity, so `--resume` against another endpoint is refused, naming
/// `base_url` and both roots, and nothing recorded is touched.
#[test]
fn a_resumed_openai_run_against_another_base_url_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = standin(&dir.path().join("requests"), &[]);
    let out = dir.path().join("runs");
    let o = run_openai(&url, &out, &["--limit", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let before = crate::support::snapshot(&out);
    let other = format!("http://127.0.0.1:{}", free_port());
    let o = run_openai(&other, &out, &["--limit", "1", "--resume"]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains(&format!("  base_url: '{url}/v1' -> '{other}/v1'")),
        "{}",
        stderr(&o)
    );
    assert_eq!(crate::support::snapshot(&out), before, "nothing touched");
    // The same endpoint resumes: the attempt is reused.
    let o = run_openai(&url, &out, &["--limit", "1", "--resume"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("0 ran, 1 resumed"), "{}", stdout(&o));
}

/// Issue 25, "The hosts" (openai): a cost only from prices the user
/// gives: `run`'s price flags reach the loop, whose cost the host report
/// takes (prompt tokens at the input price, the cached share at the
/// cached price, completion tokens at the output price).
#[test]
fn openai_prices_given_to_run_state_a_cost() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = standin(&dir.path().join("requests"), &[]);
    let out = dir.path().join("runs");
    let o = run_openai(
        &url,
        &out,
        &[
            "--limit",
            "1",
            "--price-input-per-mtok",
            "2",
            "--price-output-per-mtok",
            "8",
            "--price-cached-input-per-mtok",
            "0.5",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let attempt = out.join(format!("{QUESTION}_results/{OPENAI_CONDITION}/attempt-1"));
    let command = std::fs::read_to_string(attempt.join("command.txt")).unwrap();
    assert!(
        command.contains(
            " --price-input-per-mtok 2 --price-output-per-mtok 8 --price-cached-input-per-mtok 0.5 "
        ),
        "{command}"
    );
    let usage = json(&attempt.join("episode.json"))["host_report"]["usage"].clone();
    let n = |k: &str| usage[k].as_f64().unwrap();
    let expected =
        (n("input_tokens") * 2.0 + n("cache_read_input_tokens") * 0.5 + n("output_tokens") * 8.0)
            / 1e6;
    let cost = n("cost_usd");
    assert!(
        (cost - expected).abs() < 1e-12,
        "{cost} vs {expected}: {usage}"
    );
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(summary.contains(&format!(",{cost},")), "{summary}");
}

/// Issue 25, "The interface" (openai): the openai flags are checked before
/// anything runs, each refusal naming its flag (exit 2, nothing written):
/// no `--base-url`, one with credentials, `--effort` and `--agent-program`
/// for the loop, `--model` naming another model, the openai flags for
/// another host, and a key variable that is not set.
#[test]
fn openai_flags_are_checked_before_anything_runs() {
    let cases: [(&str, &[&str], &str); 7] = [
        (
            "openai:gpt-standin-1",
            &[],
            "--agent openai:gpt-standin-1 needs --base-url URL",
        ),
        (
            "openai:gpt-standin-1",
            &["--base-url", "https://me:sk-secret-1@api.example.org/v1"],
            "--base-url https://me:***@api.example.org/v1: it holds a user or password",
        ),
        (
            "openai:gpt-standin-1",
            &["--base-url", "http://127.0.0.1:9/v1", "--effort", "high"],
            "--effort cannot be honoured by --agent openai:gpt-standin-1",
        ),
        (
            "openai:gpt-standin-1",
            &[
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--agent-program",
                "x",
            ],
            "--agent-program cannot be honoured by --agent openai:gpt-standin-1",
        ),
        (
            "openai:gpt-standin-1",
            &["--base-url", "http://127.0.0.1:9/v1", "--model", "gpt-5"],
            "--model gpt-5 cannot be honoured by --agent openai:gpt-standin-1",
        ),
        (
            "scripted:oracle",
            &["--base-url", "http://127.0.0.1:9/v1"],
            "--base-url cannot be honoured by --agent scripted:oracle",
        ),
        (
            "openai:gpt-standin-1",
            &[
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--api-key-env",
                "OKN_TEST_UNSET_KEY_VARIABLE",
            ],
            "--api-key-env OKN_TEST_UNSET_KEY_VARIABLE: the variable is not set",
        ),
    ];
    for (agent, flags, says) in cases {
        let dir = tempfile::tempdir().unwrap();
        let o = okn()
            .env_remove("OKN_TEST_UNSET_KEY_VARIABLE")
            .args(["run", "--corpus", "demo/benchmarks-single"])
            .args(["--tools", "all-tools", "--kg-hint", "tags"])
            .args(["--profile", "profiles/demo-kg.local.toml", "--agent", agent])
            .args(flags)
            .arg("--out")
            .arg(dir.path().join("runs"))
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(2),
            "{agent} {flags:?}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains(says), "{says}: {}", stderr(&o));
        assert!(!stderr(&o).contains("sk-secret-1"), "{}", stderr(&o));
        assert!(
            !dir.path().join("runs").join("conditions").exists(),
            "nothing recorded"
        );
    }
}

/// `run` and `probe --agent HOST` over the demo KG with `flags`, for a
/// flag value that must be refused as it is parsed: exit 2, the flag and
/// `says` on stderr, nothing written to `--out`.
fn refused_as_parsed(host: &str, flags: &[&str], says: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("runs");
    let run = okn()
        .args(["run", "--corpus", "demo/benchmarks-single"])
        .args(["--tools", "all-tools", "--kg-hint", "tags"])
        .args(["--profile", "profiles/demo-kg.local.toml", "--agent", host])
        .args(flags)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let probe = okn()
        .args(["probe", "--profile", "profiles/demo-kg.local.toml"])
        .args(["--agent", host])
        .args(flags)
        .output()
        .unwrap();
    for (command, o) in [("run", &run), ("probe", &probe)] {
        assert_eq!(
            o.status.code(),
            Some(2),
            "{command} --agent {host} {flags:?}: {}{}",
            stdout(o),
            stderr(o)
        );
        assert!(
            stderr(o).contains(&format!("for '{} <", flags[0].split('=').next().unwrap()))
                && stderr(o).contains(says),
            "{command} --agent {host} {flags:?}: {}",
            stderr(o)
        );
        assert_eq!(stdout(o), "", "{command}: nothing ran");
    }
    assert!(!out.exists(), "nothing written");
}

/// Every host `--agent` takes, a CLI's, the loop's and the scripted one.
const EVERY_HOST: [&str; 5] = [
    "claude",
    "codex",
    "gemini",
    "openai:gpt-standin-1",
    "scripted:oracle",
];

/// Issue 25, red team: `--max-turns 0` was accepted for claude (the
/// condition recorded `max_turns` 0 while its episode took 4 turns) and
/// failed only once an episode ran for gemini. Now it is refused for
/// every host as it is parsed, exit 2.
#[test]
fn regression_max_turns_0_is_refused_for_every_host_as_it_is_parsed() {
    for host in EVERY_HOST {
        refused_as_parsed(
            host,
            &["--max-turns", "0"],
            "an episode takes at least 1 model turn",
        );
    }
    refused_as_parsed("claude", &["--max-turns=-3"], "at least 1 model turn");
}

/// Issue 25, red team: `--agent-timeout 100000000000` was accepted and
/// failed later with a wrong reason. A number of seconds is at most one
/// week (604800), on every flag that takes one; a week itself is taken.
#[test]
fn regression_an_agent_timeout_past_a_week_is_refused_as_it_is_parsed() {
    for host in EVERY_HOST {
        refused_as_parsed(
            host,
            &["--agent-timeout", "100000000000"],
            "is not a number of seconds from 1 to 604800 (one week)",
        );
    }
    refused_as_parsed("claude", &["--agent-timeout", "604801"], "from 1 to 604800");
    refused_as_parsed(
        "scripted:oracle",
        &["--timeout", "100000000000"],
        "from 1 to 604800",
    );
    let o = okn()
        .args(["proxy", "--profile", "profiles/demo-kg.local.toml"])
        .args(["--timeout", "604801"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("from 1 to 604800"), "{}", stderr(&o));
    // A week is a bound, not a refusal: the episode runs and the
    // condition records it.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("runs");
    let o = okn()
        .args(["run", "--corpus", "demo/benchmarks-single"])
        .args(["--tools", "all-tools", "--kg-hint", "tags"])
        .args(["--profile", "profiles/demo-kg.local.toml"])
        .args(["--agent", "scripted:oracle", "--limit", "1"])
        .args(["--agent-timeout", "604800", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let condition = json(&out.join("conditions/demo-kg-all-tools__kg-named.json"));
    assert_eq!(condition["settings"]["agent_timeout_s"], 604800);
}

/// Issue 25, red team: `--model ""` (or only spaces) was accepted for
/// claude and gemini, which then played their default model under a
/// condition that named none, and failed late for codex. An empty model,
/// or one with spaces, is refused for every host as it is parsed, as is
/// an empty `--agent-program`.
#[test]
fn regression_an_empty_model_is_refused_for_every_host_as_it_is_parsed() {
    for host in EVERY_HOST {
        for model in ["", "   ", "\t"] {
            refused_as_parsed(host, &["--model", model], "a model id cannot be empty");
        }
    }
    refused_as_parsed("gemini", &["--model", "gemini 2"], "is not a model id");
    refused_as_parsed("codex", &["--agent-program", ""], "the path is empty");
    let o = okn()
        .args(["run", "--corpus", "demo/benchmarks-single"])
        .args(["--tools", "all-tools", "--kg-hint", "tags"])
        .args(["--profile", "profiles/demo-kg.local.toml"])
        .args(["--agent", "openai:gpt standin", "--base-url"])
        .args(["http://127.0.0.1:9/v1", "--out", "/nonexistent/okn-runs"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--agent openai:gpt standin: \"gpt standin\" is not a model id"),
        "{}",
        stderr(&o)
    );
}

/// `run --agent gemini` over one question of the single corpus, its
/// program `program`, with no `--model`, `home` as HOME and `tmp` as
/// TMPDIR, against the stand-in at `url`.
fn run_gemini_without_a_model(
    program: &Path,
    url: &str,
    home: &Path,
    tmp: &Path,
    out: &Path,
) -> Output {
    okn()
        .envs(gemini_env(url))
        .env("HOME", home)
        .env("TMPDIR", tmp)
        .args(["run", "--corpus", "demo/benchmarks-single"])
        .args(["--tools", "all-tools", "--kg-hint", "tags"])
        .args(["--profile", "profiles/demo-kg.local.toml"])
        .args([
            "--agent",
            "gemini",
            "--agent-timeout",
            "120",
            "--limit",
            "1",
        ])
        .arg("--agent-program")
        .arg(program)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// Issue 25, red team: without `--model`, gemini 0.61 asks its model
/// router for JSON first; the stand-in answered text, gemini retried with
/// backoff, and every census and episode took ~87 s. Now the router's
/// request is answered once, with JSON, and the episode takes seconds;
/// and the run (its preflight's `gemini --version` included) leaves the
/// user's home byte for byte as it was.
#[test]
fn regression_gemini_without_a_model_is_not_held_up_by_its_routers_requests_for_json() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests");
    let (_server, url) = standin(&log, &[]);
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::write(home.join(".gemini/settings.json"), "{}\n").unwrap();
    let before = crate::support::snapshot(&home);
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = dir.path().join("runs");
    let started = Instant::now();
    let o = run_gemini_without_a_model(&tool("gemini"), &url, &home, &tmp, &out);
    let took = started.elapsed().as_secs_f64();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("exact 1.00"), "{}", stdout(&o));
    let asked_json: Vec<Vec<u8>> = logged_requests(&log)
        .into_iter()
        .filter(|r| {
            serde_json::from_slice::<Value>(r).unwrap()["generationConfig"]["responseMimeType"]
                == "application/json"
        })
        .collect();
    assert!(!asked_json.is_empty(), "gemini asked its router nothing");
    for (i, request) in asked_json.iter().enumerate() {
        assert!(
            !asked_json[..i].contains(request),
            "a request for JSON was sent again: the reply was not taken"
        );
    }
    assert!(took < 60.0, "one gemini episode took {took:.0} s");
    assert_eq!(
        crate::support::snapshot(&home),
        before,
        "the run wrote into the user's home"
    );
}

/// Issue 25, red team: gemini's `agent.stderr.log` recorded "Full report
/// available at: /tmp/okn-claude-home-XXXX/tmp/gemini-client-error-….json":
/// an absolute path of the machine (and a temporary one, so two
/// recordings differed). A host (the real gemini, wrapped to print where
/// it runs on stderr and to write its home into its JSON report) now has
/// its fresh home, its attempt folder, its program's folder and the
/// user's home recorded as placeholders, the fresh home's folder is named
/// `okn-episode-home-` and removed, and loading the root derives the same
/// host report from the rewritten bytes.
#[test]
fn regression_no_absolute_path_of_the_machine_is_recorded_in_a_gemini_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = standin(&dir.path().join("requests"), &[]);
    let home = dir.path().join("home");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let wrapper = dir.path().join("bin/gemini");
    std::fs::create_dir_all(wrapper.parent().unwrap()).unwrap();
    std::fs::write(
        &wrapper,
        format!(
            "#!/usr/bin/env bash\n\
             echo \"Full report available at: $TMPDIR/gemini-client-error-x.json\" >&2\n\
             echo \"home $HOME, cwd $PWD, user ${{OKN_USER_HOME:-none}}, program $0\" >&2\n\
             '{}' \"$@\" | sed \"s|\\\"session_id\\\": \\\"|\\\"session_id\\\": \\\"$HOME/|\"\n\
             exit ${{PIPESTATUS[0]}}\n",
            tool("gemini").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = dir.path().join("runs");
    let o = run_gemini_without_a_model(&wrapper, &url, &home, &tmp, &out);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("exact 1.00"), "{}", stdout(&o));
    let attempt = out.join(format!(
        "{QUESTION}_results/demo-kg-all-tools-gemini__kg-named/attempt-1"
    ));
    let stderr_log = std::fs::read_to_string(attempt.join("agent.stderr.log")).unwrap();
    assert!(
        stderr_log.contains(
            "Full report available at: $EPISODE_HOME/tmp/gemini-client-error-x.json\n\
             home $EPISODE_HOME, cwd $ATTEMPT/cwd, user ~, program $AGENT_PROGRAM_DIR/gemini\n"
        ),
        "{stderr_log}"
    );
    let report = std::fs::read_to_string(attempt.join("agent.json")).unwrap();
    assert!(
        report.contains("\"session_id\": \"$EPISODE_HOME/"),
        "{report}"
    );
    // No recorded file names a folder of this machine.
    let dir_text = dir.path().to_string_lossy().into_owned();
    let real_dir = std::fs::canonicalize(dir.path()).unwrap();
    for (path, bytes) in crate::support::snapshot(&out) {
        let text = String::from_utf8_lossy(&bytes);
        for folder in [dir_text.as_str(), &real_dir.to_string_lossy()] {
            assert!(!text.contains(folder), "{} names {folder}", path.display());
        }
        assert!(!text.contains("okn-episode-home-"), "{}", path.display());
        assert!(!text.contains("okn-claude-home-"), "{}", path.display());
    }
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    // Loading re-parses the rewritten bytes and agrees with episode.json.
    let o = okn().arg("report").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
