//! The codex agent host: the Codex CLI (npm `@openai/codex`), `codex exec
//! --json`, driven as `docs/HOSTS.md` says (issue 25, "codex").
//!
//! Every episode runs with a fresh `CODEX_HOME` (and `HOME`, `TMPDIR`)
//! holding the `config.toml` written for it ([`config_toml`]): our proxy is
//! the only MCP server (its tools approved, else every call is refused
//! under `approval_policy = "never"`), the shell, goal, image, sub-agent,
//! user-input and web-search tools are off, and the sandbox is read-only;
//! `--ephemeral` keeps no session file. The model provider is
//! `okn`: the Responses API at `OPENAI_BASE_URL` (default
//! `https://api.openai.com/v1`) with the key in `OPENAI_API_KEY`, so a key
//! is the only login an episode can use (a `codex login` stored under the
//! user's `~/.codex` is never read).
//!
//! Its JSONL events (`agent.json`) are parsed into the host report by
//! [`parse_report`], which compiles without the `harness` feature.

use serde_json::Value;

use super::report::{
    FailureKind, HostFailure, HostOutput, HostReport, Usage, credible_tokens, exit_failure,
};

/// Parses `codex exec --json`'s events (one JSON object a line) into the
/// host report (`docs/HOSTS.md`, "codex"): usage summed over the
/// `turn.completed` events (`input_tokens` counts the cached ones too, so
/// the uncached input is their difference); the model only as the CLI's
/// "Model metadata for `MODEL` not found" warning names it (no event names
/// the model otherwise); no cost, turns or API time (codex states none);
/// the failure from `turn.failed`'s message, else from the exit when no
/// turn ended.
pub fn parse_report(out: &HostOutput<'_>) -> HostReport {
    let text = String::from_utf8_lossy(out.stdout);
    let events: Vec<Value> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line.trim()).ok())
        .filter(Value::is_object)
        .collect();
    let mut model = None;
    let mut sums: [Option<u64>; 4] = [None; 4];
    let mut ended = false;
    let mut failure = None;
    for event in &events {
        match event["type"].as_str() {
            Some("item.completed") if event["item"]["type"] == "error" => {
                if let Some(name) = metadata_warning_model(event["item"]["message"].as_str()) {
                    model = Some(name);
                }
            }
            Some("turn.completed") => {
                ended = true;
                let usage = &event["usage"];
                let keys = [
                    "input_tokens",
                    "cached_input_tokens",
                    "cache_write_input_tokens",
                    "output_tokens",
                ];
                for (sum, key) in sums.iter_mut().zip(keys) {
                    if let Some(n) = usage.get(key).and_then(Value::as_u64) {
                        *sum = Some(sum.unwrap_or(0).saturating_add(n));
                    }
                }
            }
            Some("turn.failed") => {
                ended = true;
                let said = event["error"]["message"].as_str().unwrap_or("").trim();
                let said = if said.is_empty() {
                    "no reason given"
                } else {
                    said
                };
                failure = Some(HostFailure {
                    kind: FailureKind::of_message(said),
                    reason: format!("the agent host reported an error: {said}"),
                });
            }
            _ => {}
        }
    }
    if !ended {
        failure = exit_failure(out);
    }
    let [input, cached, cache_write, output] = sums;
    let usage = Usage {
        source: "agent.json".into(),
        cost_usd: None,
        input_tokens: input
            .map(|all| all.saturating_sub(cached.unwrap_or(0)))
            .filter(credible_tokens),
        output_tokens: output.filter(credible_tokens),
        cache_creation_input_tokens: cache_write.filter(credible_tokens),
        cache_read_input_tokens: cached.filter(credible_tokens),
        num_turns: None,
        api_s: None,
    };
    HostReport {
        host: "codex".to_string(),
        model,
        usage: usage.stated().then_some(usage),
        failure,
    }
}

/// The model named by codex's warning "Model metadata for `MODEL` not
/// found", the only place its events name the model.
fn metadata_warning_model(message: Option<&str>) -> Option<String> {
    let rest = message?.strip_prefix("Model metadata for `")?;
    let (name, _) = rest.split_once('`')?;
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(feature = "harness")]
pub use self::harness::*;

#[cfg(feature = "harness")]
mod harness {
    use std::path::Path;

    use super::super::{AgentCommand, CliSettings, McpProxy};

    /// The environment variable holding the base URL of the Responses API
    /// the codex host is pointed at (default [`DEFAULT_BASE_URL`]).
    pub const BASE_URL_VAR: &str = "OPENAI_BASE_URL";

    /// The environment variable holding the API key (never written).
    pub const KEY_VAR: &str = "OPENAI_API_KEY";

    /// OpenAI's own API.
    pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

    /// The `--effort` levels codex's `model_reasoning_effort` takes
    /// (`max` is claude's only).
    pub const EFFORTS: &[&str] = &["low", "medium", "high", "xhigh"];

    /// `codex exec` for one episode: JSON events on stdout, outside any
    /// git repository, writing no session file; everything else is in the
    /// episode's `config.toml` ([`config_toml`]).
    pub fn command(settings: &CliSettings) -> AgentCommand {
        AgentCommand {
            program: settings.program.clone(),
            args: vec![
                "exec".into(),
                "--json".into(),
                "--skip-git-repo-check".into(),
                "--ephemeral".into(),
            ],
        }
    }

    /// A TOML string (basic, escaped).
    fn toml_string(text: &str) -> String {
        toml::Value::String(text.to_string()).to_string()
    }

    /// The `config.toml` of one episode (`docs/HOSTS.md`, "codex";
    /// `tests/fixtures/hosts/codex-0.171.0-config.toml`): `base_url` the
    /// Responses API the run is pointed at, `proxy` the only MCP server.
    pub fn config_toml(settings: &CliSettings, base_url: &str, proxy: &McpProxy) -> String {
        let mut text = String::from(
            "web_search = \"disabled\"\nmodel_provider = \"okn\"\napproval_policy = \"never\"\n\
             sandbox_mode = \"read-only\"\nproject_doc_max_bytes = 0\n",
        );
        if let Some(model) = &settings.model {
            text.push_str(&format!("model = {}\n", toml_string(model)));
        }
        if let Some(effort) = &settings.effort {
            text.push_str(&format!(
                "model_reasoning_effort = {}\n",
                toml_string(effort)
            ));
        }
        let args: Vec<String> = proxy.args.iter().map(|a| toml_string(a)).collect();
        text.push_str(&format!(
            "\n[model_providers.okn]\nname = \"okn\"\nbase_url = {}\nwire_api = \"responses\"\n\
             env_key = \"{KEY_VAR}\"\n\n[mcp_servers.{server}]\n\
             default_tools_approval_mode = \"approve\"\ncommand = {}\nargs = [{}]\n\n\
             [features]\nshell_tool = false\ngoals = false\nview_image = false\n\n\
             [agents]\nenabled = false\n\n[tools]\n\
             experimental_request_user_input = {{ enabled = false }}\n\n\
             [skills]\ninclude_instructions = false\n",
            toml_string(base_url),
            toml_string(&proxy.program.to_string_lossy()),
            args.join(", "),
            server = super::super::MCP_SERVER_NAME,
        ));
        text
    }

    /// Writes the episode's `config.toml` into `codex_home`.
    ///
    /// Errors: it cannot be written.
    pub fn write_config(
        codex_home: &Path,
        settings: &CliSettings,
        env: &[(String, String)],
        proxy: &McpProxy,
    ) -> crate::error::Result<()> {
        let base_url = super::super::env_value(env, BASE_URL_VAR)
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
        std::fs::create_dir_all(codex_home)
            .map_err(|e| crate::error::Error::io(codex_home, "create", e))?;
        let path = codex_home.join("config.toml");
        crate::fsutil::write_atomic(&path, config_toml(settings, &base_url, proxy).as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::agent::report::host_fixture as fixture;

    /// Issue 25: codex's events give tokens by kind, and nothing it does
    /// not state.
    #[test]
    fn the_oracle_episode_gives_usage_and_no_failure() {
        let stdout = fixture("codex-0.171.0-exec-json-oracle.jsonl");
        let report = parse_report(&HostOutput {
            stdout: &stdout,
            exit_code: Some(0),
            measured: true,
            ..HostOutput::default()
        });
        assert_eq!(report.host, "codex");
        assert_eq!(report.model.as_deref(), Some("gpt-standin-1"));
        assert_eq!(report.failure, None);
        let usage = report.usage.unwrap();
        assert_eq!(usage.input_tokens, Some(22714 - 5678));
        assert_eq!(usage.cache_read_input_tokens, Some(5678));
        assert_eq!(usage.cache_creation_input_tokens, Some(0));
        assert_eq!(usage.output_tokens, Some(472));
        assert_eq!(usage.all_input_tokens(), Some(22714));
        assert_eq!(
            (usage.cost_usd, usage.num_turns, usage.api_s),
            (None, None, None)
        );
    }

    /// Issue 25: a refused key is the host's authentication failure.
    #[test]
    fn a_rejected_key_is_an_authentication_failure() {
        let stdout = fixture("codex-0.171.0-exec-json-reject-key.jsonl");
        let report = parse_report(&HostOutput {
            stdout: &stdout,
            exit_code: Some(1),
            measured: true,
            ..HostOutput::default()
        });
        let failure = report.failure.unwrap();
        assert_eq!(failure.kind, FailureKind::Authentication);
        assert!(
            failure
                .reason
                .starts_with("the agent host reported an error: unexpected status 401"),
            "{}",
            failure.reason
        );
        assert_eq!(report.usage, None, "no turn completed: no usage, not 0");
        let crashed = parse_report(&HostOutput {
            stdout: b"{\"type\":\"thread.started\"}\n",
            exit_code: Some(101),
            measured: true,
            ..HostOutput::default()
        });
        assert_eq!(crashed.failure.unwrap().kind, FailureKind::Crash);
    }

    #[cfg(feature = "harness")]
    #[test]
    fn the_config_names_the_proxy_only_and_turns_the_tools_off() {
        let settings = crate::agent::CliSettings {
            program: "codex".into(),
            model: Some("gpt-\"x".into()),
            effort: Some("high".into()),
            max_turns: None,
            block_tools: Vec::new(),
        };
        let proxy = crate::agent::McpProxy {
            program: "/bin/okn-benchmark".into(),
            args: vec!["proxy".into(), "--log-dir".into(), "/a b".into()],
        };
        let text = config_toml(&settings, "http://127.0.0.1:1/v1", &proxy);
        let parsed: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(parsed["model"].as_str(), Some("gpt-\"x"));
        assert_eq!(parsed["model_reasoning_effort"].as_str(), Some("high"));
        assert_eq!(parsed["features"]["shell_tool"].as_bool(), Some(false));
        let servers = parsed["mcp_servers"].as_table().unwrap();
        assert_eq!(servers.keys().collect::<Vec<_>>(), ["okn"]);
        assert_eq!(
            servers["okn"]["args"].as_array().unwrap()[2].as_str(),
            Some("/a b")
        );
        assert_eq!(
            parsed["model_providers"]["okn"]["base_url"].as_str(),
            Some("http://127.0.0.1:1/v1")
        );
    }
}
