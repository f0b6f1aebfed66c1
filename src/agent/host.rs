//! The agent host table and the typed **host report** (issue 25, "The
//! interface"): what an agent host printed, parsed by that host's own
//! parser into one shape that judging, the evidence for `blocked`,
//! records, reports and pages read (`docs/FORMAT.md`, "`episode.json`").
//! The host's raw output stays in `agent.json` (and `agent.stderr.log`)
//! as evidence, and loading a root parses it again and refuses a
//! recorded report it does not give (issue 24's rule).
//!
//! Adding a host is its own file (its command, its environment and its
//! parser) plus one variant of [`Host`]: every `match` on it is in full,
//! so the compiler names each place that must learn of it.
//!
//! Compiled without the `harness` feature too: the publishing half parses
//! recorded output when it loads a root.

use serde_json::Value;

pub use super::report::*;

/// Every agent host this version drives (the host table; README.md,
/// "Agent hosts"). Matched in full everywhere, with no catch-all arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Host {
    /// `claude -p --output-format json` (npm `@anthropic-ai/claude-code`).
    Claude,
    /// `codex exec --json` (npm `@openai/codex`; `docs/HOSTS.md`).
    Codex,
    /// `gemini --output-format json` (npm `@google/gemini-cli`;
    /// `docs/HOSTS.md`).
    Gemini,
    /// The built-in loop over an OpenAI-compatible Chat Completions API
    /// (`okn-benchmark openai-agent`; `docs/HOSTS.md`, "openai").
    Openai,
    /// The built-in scripted agent (no model), whose report is shaped like
    /// claude's.
    Scripted,
}

impl Host {
    /// Every host, in the order the host table lists them.
    pub const ALL: [Host; 5] = [
        Host::Claude,
        Host::Codex,
        Host::Gemini,
        Host::Openai,
        Host::Scripted,
    ];

    /// The host's name as `--agent` takes it (before any `:`), and as a
    /// condition records it: `claude`, `codex`, `gemini`, `openai`,
    /// `scripted`.
    pub fn name(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Openai => "openai",
            Host::Scripted => "scripted",
        }
    }

    /// The host of an agent as a condition or `episode.json` records it
    /// (`claude`, `codex`, `gemini`, `openai:MODEL`, `scripted:STRATEGY`),
    /// or `None` for a name no host of this version has.
    pub fn of_agent(agent: &str) -> Option<Host> {
        let (head, rest) = match agent.split_once(':') {
            Some((head, rest)) => (head, Some(rest)),
            None => (agent, None),
        };
        let host = Host::ALL.into_iter().find(|h| h.name() == head)?;
        let takes_argument = matches!(host, Host::Openai | Host::Scripted);
        (takes_argument == rest.is_some()).then_some(host)
    }

    /// What a condition folder's name says of the host (`docs/FORMAT.md`,
    /// "Condition names"): nothing for claude and the scripted agent, so
    /// every root recorded before hosts were named keeps its names; the
    /// host's name for the others.
    pub fn folder_tag(self) -> Option<&'static str> {
        match self {
            Host::Claude | Host::Scripted => None,
            Host::Codex | Host::Gemini | Host::Openai => Some(self.name()),
        }
    }

    /// Parses what the host printed in one episode into its host report.
    /// Never fails: what cannot be read is absent from the report. A
    /// timed-out episode reports no failure of the host (a timeout is the
    /// agent's own outcome, `docs/FORMAT.md`, `result.json`).
    pub fn parse(self, out: &HostOutput<'_>) -> HostReport {
        let mut report = match self {
            Host::Claude | Host::Scripted => parse_claude_shaped(self.name(), out),
            Host::Codex => super::codex::parse_report(out),
            Host::Openai => super::openai::parse_report(out),
            Host::Gemini => super::gemini::parse_report(out),
        };
        if out.timed_out {
            report.failure = None;
        }
        report
    }
}

impl Host {
    /// Checks what a host that exited 0, and was not stopped, printed on
    /// standard output (`agent.json`): the report such a host always
    /// prints, so an `agent.json` lost or cut short is damage, not an
    /// episode that reported nothing (`docs/FORMAT.md`, "`agent.json`").
    /// claude (and the scripted agent): a JSON object with a `type`
    /// member; codex: a `turn.completed` or `turn.failed` event; gemini: a
    /// JSON object with `stats` or `error`; openai: a JSON object whose
    /// `host` is `"openai"`, with a `stop` member (the loop's report).
    ///
    /// Errors: what is wrong, worded for a message naming the file.
    pub fn check_clean_exit(self, stdout: &[u8]) -> std::result::Result<(), String> {
        if stdout.iter().all(u8::is_ascii_whitespace) {
            return Err("empty".into());
        }
        let object = || serde_json::from_slice::<Value>(stdout).map_err(|e| e.to_string());
        let (member, shape) = match self {
            Host::Openai => {
                return match object()? {
                    Value::Object(map)
                        if map.get("host").and_then(Value::as_str) == Some("openai")
                            && map.contains_key("stop") =>
                    {
                        Ok(())
                    }
                    _ => Err(
                        "is not the openai loop's report: a host that exits 0 prints a JSON \
                         object with `host`: \"openai\" and a `stop` member (`okn-benchmark \
                         openai-agent`)"
                            .into(),
                    ),
                };
            }
            Host::Claude | Host::Scripted => (
                "type",
                "a JSON object with a `type` member (`claude -p --output-format json`, the \
                 scripted agent)",
            ),
            Host::Gemini => (
                "stats",
                "a JSON object with a `stats` member (`gemini --output-format json`)",
            ),
            Host::Codex => {
                let ended = String::from_utf8_lossy(stdout).lines().any(|line| {
                    serde_json::from_str::<Value>(line.trim()).is_ok_and(|event| {
                        matches!(
                            event["type"].as_str(),
                            Some("turn.completed" | "turn.failed")
                        )
                    })
                });
                return if ended {
                    Ok(())
                } else {
                    Err(
                        "holds no turn.completed or turn.failed event, which `codex exec \
                         --json` prints when it exits 0"
                            .into(),
                    )
                };
            }
        };
        match object()? {
            Value::Object(map) if map.contains_key(member) => Ok(()),
            _ => Err(format!(
                "lacks its `{member}` member: a host that exits 0 prints {shape}"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_name_their_hosts_and_nothing_else_does() {
        for (agent, host) in [
            ("claude", Some(Host::Claude)),
            ("codex", Some(Host::Codex)),
            ("gemini", Some(Host::Gemini)),
            ("openai:gpt-5", Some(Host::Openai)),
            ("scripted:oracle", Some(Host::Scripted)),
            ("scripted", None),
            ("openai", None),
            ("codex:x", None),
            ("claud", None),
        ] {
            assert_eq!(Host::of_agent(agent), host, "{agent}");
        }
    }

    #[test]
    fn failures_are_told_apart_by_status_and_words() {
        use FailureKind::*;
        for (text, kind) in [
            (
                "unexpected status 401 Unauthorized: Incorrect API key provided., url: http://127.0.0.1:18401/v1",
                Authentication,
            ),
            ("Invalid API key · Please run /login", Authentication),
            ("API Error: 429 rate_limit_error", RateLimit),
            ("API Error: 529 Overloaded", Overload),
            ("listening on 127.0.0.1:18500", Other),
        ] {
            assert_eq!(FailureKind::of_message(text), kind, "{text}");
        }
        assert_eq!(FailureKind::of_status(503, ""), Overload);
    }

    #[test]
    fn a_claude_report_gives_model_usage_and_failure() {
        let stdout = br#"{"type":"result","is_error":true,"result":"Invalid API key","modelUsage":{"claude-x":{}},"total_cost_usd":0.5,"usage":{"input_tokens":3,"output_tokens":2},"num_turns":4,"duration_api_ms":1500}"#;
        let report = Host::Claude.parse(&HostOutput {
            stdout,
            exit_code: Some(1),
            measured: true,
            ..HostOutput::default()
        });
        assert_eq!(report.model.as_deref(), Some("claude-x"));
        let usage = report.usage.unwrap();
        assert_eq!(
            (usage.cost(), usage.num_turns, usage.api_s),
            (Some(0.5), Some(4), Some(1.5))
        );
        let failure = report.failure.unwrap();
        assert_eq!(failure.kind, FailureKind::Authentication);
        assert_eq!(
            failure.reason,
            "the agent host reported an error: Invalid API key"
        );
        let silent = Host::Scripted.parse(&HostOutput {
            exit_code: None,
            measured: true,
            ..HostOutput::default()
        });
        assert_eq!(silent.failure.unwrap().kind, FailureKind::Crash);
        let timed_out = Host::Claude.parse(&HostOutput {
            stdout,
            timed_out: true,
            measured: true,
            ..HostOutput::default()
        });
        assert_eq!(timed_out.failure, None, "a timeout is the agent's outcome");
    }

    /// Issue 25 (openai): a clean exit of the loop is its report: a JSON
    /// object naming the host, with `stop`; claude's shape is not it.
    #[test]
    fn the_openai_loop_exits_clean_only_with_its_report() {
        let check = |text: &str| Host::Openai.check_clean_exit(text.as_bytes());
        assert_eq!(
            check(r#"{"host":"openai","stop":"submitted","turns":2}"#),
            Ok(())
        );
        for bad in [
            r#"{"type":"result","result":"x"}"#,
            r#"{"host":"claude","stop":"submitted"}"#,
            r#"{"host":"openai","turns":2}"#,
            "[1]",
        ] {
            let e = check(bad).unwrap_err();
            assert!(e.contains("openai loop's report"), "{bad}: {e}");
        }
        assert!(check(r#"{"host":"openai","stop""#).is_err(), "cut short");
        assert_eq!(check("  \n"), Err("empty".into()));
    }
}
