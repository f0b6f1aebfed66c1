//! The typed **host report** (issue 25, "The interface"): what an agent
//! host printed in one episode, in one shape for every host, and what the
//! parsers share (`docs/FORMAT.md`, "`episode.json`"). Each host's parser
//! lives in its own file ([`super::codex`], [`super::gemini`]; the
//! claude-shaped report here); [`super::host::Host::parse`] picks it.
//! Compiled without the `harness` feature too.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What one episode of a host left, as the parsers read it: the runner's
/// record of the process (`episode.json`) and the host's output
/// (`agent.json`, `agent.stderr.log`).
#[derive(Debug, Clone, Copy, Default)]
pub struct HostOutput<'a> {
    /// Its standard output (`agent.json`), empty when it printed nothing.
    pub stdout: &'a [u8],
    /// Its standard error (`agent.stderr.log`), empty when none.
    pub stderr: &'a [u8],
    /// Its exit code; `None` when killed, or not known.
    pub exit_code: Option<i32>,
    /// Killed at `--agent-timeout`.
    pub timed_out: bool,
    /// The process was watched by this runner (`episode.json`'s `source:
    /// "runner"`), so a missing exit code means a signal killed it.
    pub measured: bool,
}

/// What an agent host reported of one episode, in one shape for every
/// host (issue 25, "The interface"; `docs/FORMAT.md`, "`episode.json`").
/// A figure the host did not state is absent, never 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostReport {
    /// The host whose parser read it: `claude`, `codex`, `gemini`,
    /// `openai` or `scripted` ([`Host::name`](crate::agent::host::Host::name)).
    pub host: String,
    /// The model the host said it used.
    pub model: Option<String>,
    /// Tokens, cost, turns and API time, as the host stated them; absent
    /// when it stated none of cost and tokens.
    pub usage: Option<Usage>,
    /// The host's own failure (it could not reach or use its model, or it
    /// crashed): positive evidence that the episode never measured the
    /// agent, so an attempt with nothing submitted is blocked.
    pub failure: Option<HostFailure>,
}

/// A failure of the agent host itself, not of the agent
/// ([`HostReport::failure`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostFailure {
    /// What kind of failure.
    pub kind: FailureKind,
    /// The reason as a result's note and `blocked_reason` word it (what
    /// the host said, quoted).
    pub reason: String,
}

/// The kinds of [`HostFailure`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The key or login was refused (HTTP 401/403, an invalid key, not
    /// logged in).
    Authentication,
    /// The API's rate limit or quota (HTTP 429).
    RateLimit,
    /// The API was overloaded or unavailable (HTTP 5xx, 529).
    Overload,
    /// The host exited with an error code, or was killed by a signal not
    /// this runner's, and reported nothing.
    Crash,
    /// The host reported an error of another kind.
    Other,
}

impl FailureKind {
    /// The kind of the failure a host's message `text` describes: by the
    /// HTTP status it names (a whole word: `401`, not a port `18401`), else
    /// by its words.
    pub fn of_message(text: &str) -> FailureKind {
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .filter(|w| !w.is_empty())
            .collect();
        let has = |w: &str| words.contains(&w);
        let says = |p: &str| lower.contains(p);
        if has("401")
            || has("403")
            || has("unauthorized")
            || has("forbidden")
            || has("api_key_invalid")
            || says("api key")
            || says("authentication")
            || says("not logged in")
        {
            FailureKind::Authentication
        } else if has("429") || says("rate limit") || has("rate_limit_error") || says("quota") {
            FailureKind::RateLimit
        } else if has("529")
            || has("500")
            || has("502")
            || has("503")
            || has("504")
            || says("overloaded")
            || says("unavailable")
        {
            FailureKind::Overload
        } else {
            FailureKind::Other
        }
    }

    /// The kind of an HTTP status a host stated as a number.
    pub fn of_status(code: i64, message: &str) -> FailureKind {
        match code {
            401 | 403 => FailureKind::Authentication,
            429 => FailureKind::RateLimit,
            500..=599 => FailureKind::Overload,
            _ => FailureKind::of_message(message),
        }
    }
}

/// The failure of a host that reported an error in so many words.
pub fn reported_error(said: &str) -> HostFailure {
    let said = said.trim();
    let said = if said.is_empty() {
        "no reason given"
    } else {
        said
    };
    HostFailure {
        kind: FailureKind::of_message(said),
        reason: format!("the agent host reported an error: {said}"),
    }
}

/// How a process ended, in words for a message: `exited with status N`,
/// or `was killed by a signal` when it left no exit code (issue 25, item
/// 5: messages printed Rust's debug text, "the host exited Some(0)").
pub fn exit_words(code: Option<i32>) -> String {
    match code {
        Some(code) => format!("exited with status {code}"),
        None => "was killed by a signal".to_string(),
    }
}

/// The failure of a host that reported nothing usable: it exited with an
/// error code, or a signal this runner did not send killed it; `None` when
/// it exited 0, or its exit is not known.
pub fn exit_failure(out: &HostOutput<'_>) -> Option<HostFailure> {
    let reason = match out.exit_code {
        Some(0) => return None,
        Some(code) => format!("the agent host exited with code {code} and reported nothing"),
        None if out.measured && !out.timed_out => {
            "the agent host was killed by a signal and reported nothing".to_string()
        }
        None => return None,
    };
    Some(HostFailure {
        kind: FailureKind::Crash,
        reason,
    })
}

/// What an episode cost, as the agent host reported it (`docs/FORMAT.md`,
/// "episode.json"): tokens in four kinds, the cost the host computed, its
/// turns and its time waiting on the API. A figure the host did not report
/// is absent, never 0: a scripted agent reports none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Where the figures come from: `agent.json` (the host's own report).
    pub source: String,
    /// The cost in US dollars the host computed (claude's
    /// `total_cost_usd`).
    pub cost_usd: Option<f64>,
    /// Input tokens not read from or written to the cache.
    pub input_tokens: Option<u64>,
    /// Output tokens.
    pub output_tokens: Option<u64>,
    /// Input tokens written to the prompt cache.
    pub cache_creation_input_tokens: Option<u64>,
    /// Input tokens read from the prompt cache.
    pub cache_read_input_tokens: Option<u64>,
    /// Model turns the host counted.
    pub num_turns: Option<u64>,
    /// Seconds spent waiting on the model's API.
    pub api_s: Option<f64>,
}

/// The most an episode is taken to have cost, US dollars: a report above
/// it (as a negative or non-finite one) is no cost an episode could have,
/// and is not taken (`docs/FORMAT.md`, "episode.json").
pub const MAX_EPISODE_COST_USD: f64 = 1_000_000.0;

/// The most tokens of one kind an episode is taken to have used, likewise.
pub const MAX_EPISODE_TOKENS: u64 = 1_000_000_000_000;

pub(crate) fn credible_cost(usd: &f64) -> bool {
    usd.is_finite() && (0.0..=MAX_EPISODE_COST_USD).contains(usd)
}

pub(crate) fn credible_tokens(n: &u64) -> bool {
    *n <= MAX_EPISODE_TOKENS
}

/// Milliseconds a host stated, as seconds (rounded as every time is),
/// when they are a number of milliseconds.
pub(crate) fn seconds_of_ms(ms: Option<f64>) -> Option<f64> {
    ms.filter(|ms| ms.is_finite() && *ms >= 0.0)
        .map(|ms| crate::layout::round_seconds(ms / 1000.0))
}

impl Usage {
    /// The cost in US dollars, when reported and credible (0 to
    /// [`MAX_EPISODE_COST_USD`]): what every table and sum reads, so a
    /// hand-edited record cannot put an infinite or negative cost in one.
    pub fn cost(&self) -> Option<f64> {
        self.cost_usd.filter(credible_cost)
    }

    /// The output tokens, when reported and credible
    /// ([`MAX_EPISODE_TOKENS`]).
    pub fn output(&self) -> Option<u64> {
        self.output_tokens.filter(credible_tokens)
    }

    /// The usage a claude-shaped JSON report states (`claude -p
    /// --output-format json`: `total_cost_usd`, `usage`, `num_turns`,
    /// `duration_api_ms`), or `None` when it states no cost and no tokens
    /// (a scripted agent's report).
    pub fn from_report(report: &Value) -> Option<Usage> {
        let usage = &report["usage"];
        let tokens = |key: &str| {
            usage
                .get(key)
                .and_then(Value::as_u64)
                .filter(credible_tokens)
        };
        let found = Usage {
            source: "agent.json".into(),
            cost_usd: report
                .get("total_cost_usd")
                .and_then(Value::as_f64)
                .filter(credible_cost),
            input_tokens: tokens("input_tokens"),
            output_tokens: tokens("output_tokens"),
            cache_creation_input_tokens: tokens("cache_creation_input_tokens"),
            cache_read_input_tokens: tokens("cache_read_input_tokens"),
            num_turns: report.get("num_turns").and_then(Value::as_u64),
            api_s: seconds_of_ms(report.get("duration_api_ms").and_then(Value::as_f64)),
        };
        found.stated().then_some(found)
    }

    /// True when it states a cost or tokens (else the host stated no usage
    /// at all).
    pub fn stated(&self) -> bool {
        self.cost_usd.is_some() || self.input_tokens.is_some() || self.output_tokens.is_some()
    }

    /// Every input token: uncached, cache writes and cache reads, when the
    /// host reported the uncached count (and every count is credible,
    /// [`MAX_EPISODE_TOKENS`]).
    pub fn all_input_tokens(&self) -> Option<u64> {
        let part = |n: Option<u64>| n.unwrap_or(0);
        let counts = [
            self.input_tokens?,
            part(self.cache_creation_input_tokens),
            part(self.cache_read_input_tokens),
        ];
        counts
            .iter()
            .all(credible_tokens)
            .then(|| counts.iter().sum())
    }
}

/// The model a claude-shaped JSON report says it used: `model`, else the
/// first key of `modelUsage` (the claude CLI's report).
pub fn model_from_report(report: &Value) -> Option<String> {
    if let Some(model) = report.get("model").and_then(Value::as_str) {
        return Some(model.to_string());
    }
    report
        .get("modelUsage")
        .and_then(Value::as_object)
        .and_then(|usage| usage.keys().next().cloned())
}

/// The claude CLI's report (`claude -p --output-format json`: one JSON
/// object), which the scripted agent imitates: `is_error` with its
/// `result` is the host's failure; with no JSON at all, the exit decides
/// ([`exit_failure`]).
pub fn parse_claude_shaped(host: &str, out: &HostOutput<'_>) -> HostReport {
    let json: Option<Value> = serde_json::from_slice(out.stdout).ok();
    let failure = match &json {
        Some(report) if report["is_error"] == Value::Bool(true) => {
            Some(reported_error(report["result"].as_str().unwrap_or("")))
        }
        Some(_) => None,
        None => exit_failure(out),
    };
    HostReport {
        host: host.to_string(),
        model: json.as_ref().and_then(model_from_report),
        usage: json.as_ref().and_then(Usage::from_report),
        failure,
    }
}

/// A host's real output kept in `tests/fixtures/hosts/` (its CLI version
/// in the file name), for the parsers' unit tests.
#[cfg(test)]
pub(crate) fn host_fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hosts")
            .join(name),
    )
    .unwrap_or_else(|e| panic!("tests/fixtures/hosts/{name}: {e}"))
}
