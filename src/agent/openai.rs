//! The openai agent host: the built-in loop over an OpenAI-compatible Chat
//! Completions API ([`super::openai_loop`], `okn-benchmark openai-agent`),
//! driven by `run --agent openai:MODEL --base-url URL` as `docs/HOSTS.md`
//! ("openai") says (issue 25, "openai").
//!
//! An episode is this program started again with `openai-agent`, the
//! prompt on stdin and our proxy in `--mcp-config` (as the scripted agent
//! is started); its one JSON report (`agent.json`) is parsed into the host
//! report by [`parse_report`], which compiles without the `harness`
//! feature.

use serde_json::Value;

use super::report::{
    FailureKind, HostFailure, HostOutput, HostReport, Usage, credible_cost, credible_tokens,
    exit_failure, seconds_of_ms,
};

/// The loop's report is a JSON object naming this host in `host`.
pub const HOST: &str = "openai";

/// The host report's failure kind of the loop's `error.kind`
/// (`docs/HOSTS.md`, "openai"): `authentication`, `rate_limit` and
/// `overload` as named; `server` (another 5xx) is an overload, as every
/// host's 5xx is ([`FailureKind::of_status`]); `bad_request`, `transport`,
/// `invalid_reply` and any kind this version does not know are
/// [`FailureKind::Other`].
pub fn failure_kind(kind: &str) -> FailureKind {
    match kind {
        "authentication" => FailureKind::Authentication,
        "rate_limit" => FailureKind::RateLimit,
        "overload" | "server" => FailureKind::Overload,
        _ => FailureKind::Other,
    }
}

/// The failure the loop's `error` object states (`{"kind", "status",
/// "message"}`), its reason quoting the HTTP status and the API's message.
fn reported_failure(error: &Value) -> HostFailure {
    let message = error["message"].as_str().unwrap_or("").trim();
    let message = if message.is_empty() {
        "no reason given"
    } else {
        message
    };
    let kind = error["kind"].as_str().unwrap_or("");
    let said = match error["status"].as_u64() {
        Some(status) => format!("HTTP {status} ({kind}): {message}"),
        None if kind.is_empty() => message.to_string(),
        None => format!("{kind}: {message}"),
    };
    HostFailure {
        kind: failure_kind(kind),
        reason: format!("the agent host reported an error: {said}"),
    }
}

/// Parses the loop's report (`okn-benchmark openai-agent`'s stdout, one
/// JSON object; `docs/HOSTS.md`, "openai") into the host report:
/// model = `model_resolved`; input = `usage.prompt_tokens −
/// usage.cached_tokens` (the prompt count holds the cached share, as
/// codex's `input_tokens` does), cache read = `cached_tokens`, output =
/// `completion_tokens` (reasoning tokens are part of it, as in codex's
/// `output_tokens`); no cache writes (Chat Completions states none); cost
/// = `cost_usd`, stated only from prices the user gave; turns = `turns`
/// (API requests); API time = `api_s`; the failure from `error`
/// ([`failure_kind`]). With no report at all the exit decides
/// ([`exit_failure`]): the loop exits 2 without one for bad flags, a
/// missing key or a proxy that does not start. A count the loop did not
/// state is absent, never 0.
pub fn parse_report(out: &HostOutput<'_>) -> HostReport {
    let json = serde_json::from_slice::<Value>(out.stdout)
        .ok()
        .filter(Value::is_object);
    let Some(report) = json else {
        return HostReport {
            host: HOST.to_string(),
            model: None,
            usage: None,
            failure: exit_failure(out),
        };
    };
    let counts = &report["usage"];
    let count = |key: &str| counts.get(key).and_then(Value::as_u64);
    let (prompt, cached) = (count("prompt_tokens"), count("cached_tokens"));
    let usage = Usage {
        source: "agent.json".into(),
        cost_usd: report
            .get("cost_usd")
            .and_then(Value::as_f64)
            .filter(credible_cost),
        input_tokens: prompt
            .map(|all| all.saturating_sub(cached.unwrap_or(0)))
            .filter(credible_tokens),
        output_tokens: count("completion_tokens").filter(credible_tokens),
        cache_creation_input_tokens: None,
        cache_read_input_tokens: cached.filter(credible_tokens),
        num_turns: report.get("turns").and_then(Value::as_u64),
        api_s: seconds_of_ms(
            report
                .get("api_s")
                .and_then(Value::as_f64)
                .map(|s| s * 1000.0),
        ),
    };
    let failure = match report.get("error") {
        Some(error) if error.is_object() => Some(reported_failure(error)),
        _ => None,
    };
    HostReport {
        host: HOST.to_string(),
        model: report
            .get("model_resolved")
            .and_then(Value::as_str)
            .map(str::to_string),
        usage: usage.stated().then_some(usage),
        failure,
    }
}

#[cfg(feature = "harness")]
pub use self::harness::*;

#[cfg(feature = "harness")]
mod harness {
    use super::super::AgentCommand;
    use super::super::openai_loop::Prices;
    use std::path::Path;

    /// What the openai host's episodes are played with (`run --agent
    /// openai:MODEL`; README.md, "Agent hosts"; `docs/HOSTS.md`, "openai").
    #[derive(Debug, Clone, PartialEq)]
    pub struct OpenaiSettings {
        /// The model asked for: the `MODEL` of `openai:MODEL`.
        pub model: String,
        /// The API root (`--base-url`), checked by [`check_base_url`]:
        /// http or https, no credentials, no query, no trailing `/`.
        pub base_url: String,
        /// The variable holding the API key (`--api-key-env`); its name is
        /// recorded (in `command.txt`), the key never.
        pub api_key_env: Option<String>,
        /// `--max-turns`: the most API requests (the loop's default, 50,
        /// when not given).
        pub max_turns: Option<u32>,
        /// `--price-*-per-mtok`, when given: the only source of a cost.
        pub prices: Option<Prices>,
    }

    /// The API root as the loop and the condition's identity take it
    /// (issue 25, "openai"): `url` trimmed, without a trailing `/`.
    ///
    /// Errors: not an `http://` or `https://` URL with a host; a user or
    /// password in it (a credential would be written into `command.txt`
    /// and the condition: the key goes in the variable `--api-key-env`
    /// names); a query or fragment (requests go to
    /// `URL/chat/completions`). Each names the flag and what to give.
    pub fn check_base_url(url: &str) -> Result<String, String> {
        let url = url.trim().trim_end_matches('/');
        let rest = ["http://", "https://"]
            .iter()
            .find_map(|scheme| {
                url.get(..scheme.len())
                    .filter(|head| head.eq_ignore_ascii_case(scheme))
                    .and_then(|_| url.get(scheme.len()..))
            })
            .ok_or_else(|| {
                format!(
                    "--base-url {url}: not an http:// or https:// URL (the API root, e.g. \
                     http://127.0.0.1:8000/v1 or https://api.openai.com/v1)"
                )
            })?;
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if authority.contains('@') {
            return Err(format!(
                "--base-url {}: it holds a user or password, which would be recorded; give the \
                 URL without it and the key in a variable named by --api-key-env",
                crate::mcp::profile::redact_url(url)
            ));
        }
        let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h);
        if host.is_empty() || host.contains(char::is_whitespace) {
            return Err(format!(
                "--base-url {url}: it names no host (the API root, e.g. http://127.0.0.1:8000/v1)"
            ));
        }
        if rest.contains(['?', '#']) {
            return Err(format!(
                "--base-url {}: the API root takes no query or fragment (requests go to \
                 URL/chat/completions); a key goes in a variable named by --api-key-env",
                crate::mcp::profile::redact_url(url)
            ));
        }
        Ok(url.to_string())
    }

    /// This program's `openai-agent` for one episode (`docs/HOSTS.md`,
    /// "openai"): `program` is this program, `mcp_config` the proxy's MCP
    /// config, and `timeout_s` the loop's own limit (kept below
    /// `--agent-timeout`, [`loop_timeout_s`], so it prints its report
    /// before it would be killed).
    pub fn command(
        settings: &OpenaiSettings,
        program: &Path,
        mcp_config: String,
        timeout_s: f64,
    ) -> AgentCommand {
        let mut args: Vec<String> = vec![
            "openai-agent".into(),
            "--model".into(),
            settings.model.clone(),
            "--base-url".into(),
            settings.base_url.clone(),
        ];
        if let Some(name) = &settings.api_key_env {
            args.extend(["--api-key-env".into(), name.clone()]);
        }
        if let Some(n) = settings.max_turns {
            args.extend(["--max-turns".into(), n.to_string()]);
        }
        args.extend(["--timeout-s".into(), timeout_s.to_string()]);
        if let Some(p) = &settings.prices {
            args.extend([
                "--price-input-per-mtok".into(),
                p.input.to_string(),
                "--price-output-per-mtok".into(),
                p.output.to_string(),
            ]);
            if let Some(cached) = p.cached_input {
                args.extend(["--price-cached-input-per-mtok".into(), cached.to_string()]);
            }
        }
        args.extend(["--mcp-config".into(), mcp_config]);
        AgentCommand {
            program: program.to_path_buf(),
            args,
        }
    }

    /// The loop's `--timeout-s` under `run --agent-timeout S`: S less a
    /// tenth of it, the margin at least 0.5 s and at most 5 s (900 →
    /// 895, 20 → 18, 1 → 0.5), time for the loop to print its report and
    /// stop its proxy before `run` would kill it.
    pub fn loop_timeout_s(agent_timeout_s: u64) -> f64 {
        let s = agent_timeout_s as f64;
        let margin = (s / 10.0).clamp(0.5, 5.0);
        (s - margin).max(s / 2.0)
    }

    /// Whether the key variable `name` holds a key, as the loop will read
    /// it: set in `env` or this process's environment, and not blank.
    ///
    /// Errors: a one-line message naming the variable and what to do.
    pub fn check_key(env: &[(String, String)], name: &str) -> Result<(), String> {
        match super::super::env_value(env, name) {
            Some(key) if !key.trim().is_empty() => Ok(()),
            _ => Err(format!(
                "--api-key-env {name}: the variable is not set (or is empty), so every openai \
                 episode would fail before the first question: export {name} with the API key, \
                 or leave out --api-key-env for a server that needs no key"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::agent::report::host_fixture as fixture;

    fn parsed(name: &str, exit_code: i32) -> HostReport {
        let stdout = fixture(name);
        parse_report(&HostOutput {
            stdout: &stdout,
            exit_code: Some(exit_code),
            measured: true,
            ..HostOutput::default()
        })
    }

    /// Issue 25 (openai): the loop's report of an oracle episode against
    /// the stand-in gives the model, tokens by kind, turns and API time,
    /// and no cost (no prices were given).
    #[test]
    fn the_oracle_report_gives_model_tokens_turns_and_no_cost() {
        let report = parsed("openai-loop-report-oracle.json", 0);
        assert_eq!(report.host, "openai");
        assert_eq!(report.model.as_deref(), Some("gpt-standin-1"));
        assert_eq!(report.failure, None);
        let usage = report.usage.unwrap();
        assert_eq!(usage.input_tokens, Some(2819 - 704));
        assert_eq!(usage.cache_read_input_tokens, Some(704));
        assert_eq!(usage.cache_creation_input_tokens, None);
        assert_eq!(usage.output_tokens, Some(388));
        assert_eq!(usage.all_input_tokens(), Some(2819));
        assert_eq!(
            (usage.cost_usd, usage.num_turns, usage.api_s),
            (None, Some(2), Some(0.01))
        );
    }

    /// Issue 25 (openai): a cost is taken only as the loop stated it, from
    /// the prices given.
    #[test]
    fn a_priced_report_states_its_cost() {
        let report = parsed("openai-loop-report-max-turns-priced.json", 0);
        let usage = report.usage.unwrap();
        assert_eq!(usage.cost(), Some(0.0032765));
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            (Some(903 - 225), Some(226))
        );
        assert_eq!(report.failure, None, "max_turns is the agent's outcome");
    }

    /// Issue 25 (openai): a key the API refused is the host's
    /// authentication failure, naming the status and the API's message;
    /// no reply, no usage (absent, not 0).
    #[test]
    fn a_rejected_key_is_an_authentication_failure() {
        let report = parsed("openai-loop-report-reject-key.json", 1);
        let failure = report.failure.unwrap();
        assert_eq!(failure.kind, FailureKind::Authentication);
        assert_eq!(
            failure.reason,
            "the agent host reported an error: HTTP 401 (authentication): Incorrect API key \
             provided."
        );
        assert_eq!(report.model, None);
        assert_eq!(report.usage, None, "no tokens stated: no usage, not 0");
    }

    /// Issue 25 (openai): every kind the loop names maps to a kind of the
    /// host report; no HTTP reply is named as such.
    #[test]
    fn each_failure_kind_of_the_loop_maps_to_one_of_the_host_report() {
        use FailureKind::*;
        for (kind, mapped) in [
            ("authentication", Authentication),
            ("rate_limit", RateLimit),
            ("overload", Overload),
            ("server", Overload),
            ("bad_request", Other),
            ("transport", Other),
            ("invalid_reply", Other),
            ("something-new", Other),
        ] {
            assert_eq!(failure_kind(kind), mapped, "{kind}");
        }
        let report = parsed("openai-loop-report-transport.json", 1);
        let failure = report.failure.unwrap();
        assert_eq!(failure.kind, Other);
        assert_eq!(
            failure.reason,
            "the agent host reported an error: transport: io: Connection refused (os error 111)"
        );
        let crashed = parse_report(&HostOutput {
            exit_code: Some(2),
            measured: true,
            ..HostOutput::default()
        });
        assert_eq!(crashed.failure.unwrap().kind, Crash);
        assert_eq!(crashed.usage, None);
    }

    #[cfg(feature = "harness")]
    #[test]
    fn base_urls_carry_no_credentials_and_lose_their_trailing_slash() {
        assert_eq!(
            check_base_url(" http://127.0.0.1:8000/v1/ ").unwrap(),
            "http://127.0.0.1:8000/v1"
        );
        assert_eq!(
            check_base_url("HTTPS://api.openai.com/v1").unwrap(),
            "HTTPS://api.openai.com/v1"
        );
        for (bad, says) in [
            ("ftp://h/v1", "not an http:// or https:// URL"),
            ("127.0.0.1:8000/v1", "not an http:// or https:// URL"),
            ("http:///v1", "names no host"),
            ("http://:80/v1", "names no host"),
            ("https://user:sk-secret@h/v1", "holds a user or password"),
            ("https://h/v1?api-key=sk-secret", "no query or fragment"),
        ] {
            let e = check_base_url(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains("sk-secret"), "{e}");
        }
    }

    #[cfg(feature = "harness")]
    #[test]
    fn the_loop_stops_before_the_runner_kills_it() {
        assert_eq!(loop_timeout_s(900), 895.0);
        assert_eq!(loop_timeout_s(20), 18.0);
        assert_eq!(loop_timeout_s(1), 0.5);
        assert_eq!(loop_timeout_s(120).to_string(), "115");
    }
}
