//! The gemini agent host: the Gemini CLI (npm `@google/gemini-cli`), run
//! non-interactively with `--output-format json`, driven as `docs/HOSTS.md`
//! says (issue 25, "gemini").
//!
//! Every episode runs with a fresh `GEMINI_CLI_HOME` (and `HOME`,
//! `TMPDIR`) holding the `.gemini/settings.json` written for it
//! ([`settings_json`]): our proxy the only MCP server (trusted, so its
//! calls run without confirmation), every built-in tool excluded, skills,
//! telemetry, folder trust and updates off, the login an API key
//! (`GEMINI_API_KEY`; `GOOGLE_GEMINI_BASE_URL` points the CLI at another
//! API). The prompt goes on stdin (the CLI runs non-interactively when
//! stdin is not a terminal).
//!
//! Its output is parsed into the host report by [`parse_report`], which
//! compiles without the `harness` feature: the JSON on stdout, or, on a
//! failure, the `{"error": ...}` object it prints on stderr
//! (`agent.stderr.log`).

use serde_json::Value;

use super::report::{
    FailureKind, HostFailure, HostOutput, HostReport, Usage, credible_tokens, exit_failure,
    seconds_of_ms,
};

/// Parses gemini's `--output-format json` output into the host report
/// (`docs/HOSTS.md`, "gemini"): over `stats.models` (the model is its
/// first key), input = `tokens.input` (uncached), cache read =
/// `tokens.cached`, output = `tokens.candidates` + `tokens.thoughts`,
/// turns = `api.totalRequests`, API time = `api.totalLatencyMs`; no cost.
/// The failure is the `error` object (stdout's, else the last one on
/// stderr), its `code` or message telling the kind; with neither a report
/// nor an error, the exit decides.
pub fn parse_report(out: &HostOutput<'_>) -> HostReport {
    let json: Option<Value> = serde_json::from_slice(out.stdout)
        .ok()
        .filter(Value::is_object);
    let error = json
        .as_ref()
        .and_then(|j| j.get("error").filter(|e| e.is_object()).cloned())
        .or_else(|| last_error_object(out.stderr));
    let failure = match &error {
        Some(error) => Some(failure_of(error)),
        None if json.is_none() => exit_failure(out),
        None => None,
    };
    let models = json.as_ref().and_then(|j| j["stats"]["models"].as_object());
    let model = models.and_then(|m| m.keys().next().cloned());
    let mut sums: [Option<u64>; 6] = [None; 6];
    let mut latency_ms: Option<f64> = None;
    for stats in models.into_iter().flat_map(|m| m.values()) {
        let tokens = &stats["tokens"];
        let figures = [
            tokens.get("input"),
            tokens.get("cached"),
            tokens.get("candidates"),
            tokens.get("thoughts"),
            stats["api"].get("totalRequests"),
            None,
        ];
        for (sum, figure) in sums.iter_mut().zip(figures) {
            if let Some(n) = figure.and_then(Value::as_u64) {
                *sum = Some(sum.unwrap_or(0).saturating_add(n));
            }
        }
        if let Some(ms) = stats["api"].get("totalLatencyMs").and_then(Value::as_f64) {
            latency_ms = Some(latency_ms.unwrap_or(0.0) + ms);
        }
    }
    let [input, cached, candidates, thoughts, requests, _] = sums;
    let output = match (candidates, thoughts) {
        (Some(c), t) => Some(c.saturating_add(t.unwrap_or(0))),
        (None, t) => t,
    };
    let usage = Usage {
        source: "agent.json".into(),
        cost_usd: None,
        input_tokens: input.filter(credible_tokens),
        output_tokens: output.filter(credible_tokens),
        cache_creation_input_tokens: None,
        cache_read_input_tokens: cached.filter(credible_tokens),
        num_turns: requests,
        api_s: seconds_of_ms(latency_ms),
    };
    HostReport {
        host: "gemini".to_string(),
        model,
        usage: usage.stated().then_some(usage),
        failure,
    }
}

/// The failure an `error` object of the CLI states: its `code` (an HTTP
/// status) or, inside its `message`, the API's own error JSON.
fn failure_of(error: &Value) -> HostFailure {
    let message = error["message"].as_str().unwrap_or("").trim().to_string();
    // The message often is the API's error body: {"error": {"code",
    // "message", "status", "details"}}.
    let inner: Option<Value> = serde_json::from_str(&message).ok();
    let said = inner
        .as_ref()
        .and_then(|v| v["error"]["message"].as_str())
        .map(str::to_string)
        .unwrap_or_else(|| message.clone());
    let reason_text = inner
        .as_ref()
        .and_then(|v| v["error"]["details"][0]["reason"].as_str())
        .map_or(said.clone(), |r| format!("{said} ({r})"));
    let code = error["code"]
        .as_i64()
        .or_else(|| inner.as_ref().and_then(|v| v["error"]["code"].as_i64()));
    let whole = format!("{reason_text} {message}");
    let kind = match code {
        Some(400) if whole.contains("API_KEY_INVALID") => FailureKind::Authentication,
        Some(code) => FailureKind::of_status(code, &whole),
        None => FailureKind::of_message(&whole),
    };
    let shown = if reason_text.is_empty() {
        "no reason given".to_string()
    } else {
        reason_text
    };
    HostFailure {
        kind,
        reason: format!("the agent host reported an error: {shown}"),
    }
}

/// The `error` member of the last JSON object on `stderr` that has one
/// (warnings come before it, one a line).
fn last_error_object(stderr: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(stderr);
    let mut found = None;
    for (at, _) in text.match_indices('{') {
        if at > 0 && !text[..at].ends_with('\n') {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        if let Some(Ok(value)) = stream.next()
            && let Some(error) = value.get("error").filter(|e| e.is_object())
        {
            found = Some(error.clone());
        }
    }
    found
}

#[cfg(feature = "harness")]
pub use self::harness::*;

#[cfg(feature = "harness")]
mod harness {
    use std::path::Path;

    use serde_json::json;

    use super::super::{AgentCommand, CliSettings, McpProxy};

    /// The environment variable holding the API key (never written).
    pub const KEY_VAR: &str = "GEMINI_API_KEY";

    /// The built-in tools of gemini-cli 0.61.0 an episode must not have
    /// (`docs/HOSTS.md`, "gemini"): with them excluded, the proxy's tools
    /// (`mcp_okn_*`) are all a model is offered.
    pub const EXCLUDED_TOOLS: &[&str] = &[
        "update_topic",
        "list_directory",
        "read_file",
        "read_many_files",
        "grep_search",
        "glob",
        "google_web_search",
        "web_fetch",
        "enter_plan_mode",
        "exit_plan_mode",
        "invoke_agent",
        "run_shell_command",
        "write_file",
        "replace",
        "save_memory",
        "write_todos",
        "activate_skill",
        "ask_user",
        "complete_task",
        "codebase_investigator",
        "cli_help",
    ];

    /// `gemini` for one episode: the model when given, JSON output; the
    /// prompt comes on stdin, the rest from the episode's settings
    /// ([`settings_json`]).
    pub fn command(settings: &CliSettings) -> AgentCommand {
        let mut args = Vec::new();
        if let Some(model) = &settings.model {
            args.push("--model".into());
            args.push(model.clone());
        }
        args.push("--output-format".into());
        args.push("json".into());
        AgentCommand {
            program: settings.program.clone(),
            args,
        }
    }

    /// The `settings.json` of one episode (`docs/HOSTS.md`, "gemini";
    /// `tests/fixtures/hosts/gemini-0.61.0-settings.json`), `--max-turns`
    /// as `model.maxSessionTurns`.
    pub fn settings_json(settings: &CliSettings, proxy: &McpProxy) -> String {
        let server = super::super::MCP_SERVER_NAME;
        let mut value = json!({
            "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "security": {"folderTrust": {"enabled": false}, "auth": {"selectedType": "gemini-api-key"}},
            "skills": {"enabled": false},
            // No GEMINI.md of a folder above the attempt's cwd (the runs
            // root's, a repository's): an empty list stops the upward
            // search (found by the tool census, issue 25).
            "context": {"memoryBoundaryMarkers": []},
            "tools": {"exclude": EXCLUDED_TOOLS.iter().copied()
                .chain(settings.block_tools.iter().map(String::as_str))
                .collect::<Vec<_>>()},
            "mcp": {"allowed": [server]},
            "mcpServers": {server: {
                "command": proxy.program.to_string_lossy(),
                "args": proxy.args,
                "trust": true,
            }},
        });
        if let Some(turns) = settings.max_turns {
            value["model"] = json!({"maxSessionTurns": turns});
        }
        serde_json::to_string_pretty(&value).unwrap_or_default()
    }

    /// Writes the episode's settings into `gemini_home/.gemini/`.
    ///
    /// Errors: it cannot be written.
    pub fn write_settings(
        gemini_home: &Path,
        settings: &CliSettings,
        proxy: &McpProxy,
    ) -> crate::error::Result<()> {
        let dir = gemini_home.join(".gemini");
        std::fs::create_dir_all(&dir).map_err(|e| crate::error::Error::io(&dir, "create", e))?;
        crate::fsutil::write_atomic(
            &dir.join("settings.json"),
            settings_json(settings, proxy).as_bytes(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::agent::report::host_fixture as fixture;

    /// Issue 25: gemini's stats give the model, tokens, turns and API time.
    #[test]
    fn the_oracle_episode_gives_model_usage_turns_and_api_time() {
        let stdout = fixture("gemini-0.61.0-output-json-oracle.json");
        let report = parse_report(&HostOutput {
            stdout: &stdout,
            exit_code: Some(0),
            measured: true,
            ..HostOutput::default()
        });
        assert_eq!(report.host, "gemini");
        assert_eq!(report.model.as_deref(), Some("gemini-standin-1"));
        assert_eq!(report.failure, None);
        let usage = report.usage.unwrap();
        assert_eq!(usage.input_tokens, Some(17328));
        assert_eq!(usage.cache_read_input_tokens, Some(5774));
        assert_eq!(usage.cache_creation_input_tokens, None);
        assert_eq!(usage.all_input_tokens(), Some(23102), "the prompt tokens");
        assert_eq!(usage.output_tokens, Some(472));
        assert_eq!(usage.num_turns, Some(3));
        assert_eq!(usage.api_s, Some(0.374));
        assert_eq!(usage.cost_usd, None);
    }

    /// Issue 25: the invalid key gemini reports on stderr, after its
    /// warnings, is the host's authentication failure.
    #[test]
    fn a_rejected_key_on_stderr_is_an_authentication_failure() {
        let mut stderr = b"Warning: tools.exclude in settings.json is deprecated\n".to_vec();
        stderr.extend(fixture("gemini-0.61.0-output-json-reject-key.stderr.json"));
        let report = parse_report(&HostOutput {
            stderr: &stderr,
            exit_code: Some(144),
            measured: true,
            ..HostOutput::default()
        });
        let failure = report.failure.unwrap();
        assert_eq!(failure.kind, FailureKind::Authentication);
        assert_eq!(
            failure.reason,
            "the agent host reported an error: API key not valid. Please pass a valid API key. \
             (API_KEY_INVALID)"
        );
        assert_eq!(report.usage, None);
        let silent = parse_report(&HostOutput {
            exit_code: Some(1),
            measured: true,
            ..HostOutput::default()
        });
        assert_eq!(silent.failure.unwrap().kind, FailureKind::Crash);
    }
}
