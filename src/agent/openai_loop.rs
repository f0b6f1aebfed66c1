//! The `openai` agent host's loop (issue 25, "The hosts"; docs/HOSTS.md,
//! "openai"): a built-in agent that speaks the OpenAI Chat Completions API
//! (`POST {base_url}/chat/completions`, not streamed) to any compatible
//! endpoint (OpenAI, vLLM, Ollama, LiteLLM, OpenRouter, the stand-in) and
//! reaches the server under test only through the proxy named in its MCP
//! config.
//!
//! One episode: connect to the proxy over MCP, list its tools and offer them
//! as functions (name, description and JSON Schema as the server gave them),
//! send the prompt as the one user message, run each `tool_call` of a reply
//! through the proxy (`tools/call`) and append its result as a `tool`
//! message, and stop at the first successful `submit_csv`, at `max_turns`
//! API requests, when a reply calls no tool, on an API failure, or at the
//! timeout. The report ([`Report::json`]) is what `okn-benchmark
//! openai-agent` prints.

use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Map, Value, json};

use super::scripted::{Session, connect};
use crate::error::{Error, Result};
use crate::mcp::probe::SUBMIT_CSV;

/// The host's name in its report.
pub const HOST: &str = "openai";

/// The longest API error message kept in a report, in characters.
const MAX_MESSAGE_CHARS: usize = 4000;

/// The largest reply body read, in bytes.
const MAX_REPLY_BYTES: u64 = 64 * 1024 * 1024;

/// Prices per million tokens, in US dollars, as the user gives them
/// (`--price-input-per-mtok` and the others): the only source of a cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    /// Per million prompt tokens (cached ones too, unless `cached_input`).
    pub input: f64,
    /// Per million completion tokens (reasoning tokens included).
    pub output: f64,
    /// Per million prompt tokens read from the provider's cache.
    pub cached_input: Option<f64>,
}

/// How one episode is played.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The model asked for (the request's `model`).
    pub model: String,
    /// The API root, e.g. `http://127.0.0.1:8919/v1`; requests go to
    /// `{base_url}/chat/completions`.
    pub base_url: String,
    /// The key sent as `Authorization: Bearer KEY`; none for a local
    /// server that needs none. Never printed or written.
    pub api_key: Option<String>,
    /// The most API requests made, at least 1.
    pub max_turns: u32,
    /// The whole episode's limit, connecting to the proxy included.
    pub timeout: Option<Duration>,
    /// Prices, when the user gave them.
    pub prices: Option<Prices>,
}

/// How an episode stopped (the report's `stop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A `submit_csv` call succeeded.
    Submitted,
    /// `max_turns` requests were made (their tool calls run) with no
    /// successful submission.
    MaxTurns,
    /// A reply called no tool: the model ended its turn.
    NoToolCall,
    /// A request failed ([`ApiFailure`]).
    ApiError,
    /// The timeout passed.
    Timeout,
}

impl Stop {
    /// Its name in the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::Submitted => "submitted",
            Stop::MaxTurns => "max_turns",
            Stop::NoToolCall => "no_tool_call",
            Stop::ApiError => "api_error",
            Stop::Timeout => "timeout",
        }
    }
}

/// The kind of an API failure (the report's `error.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// HTTP 401 or 403: the key is missing, wrong or lacks access.
    Authentication,
    /// HTTP 429.
    RateLimit,
    /// HTTP 503 or 529: the provider is overloaded.
    Overload,
    /// Another 5xx.
    Server,
    /// Another 4xx (also a redirect, which `--base-url` should not need).
    BadRequest,
    /// No HTTP reply: the connection failed or broke.
    Transport,
    /// A 2xx reply that is not a Chat Completions object (not JSON, no
    /// `choices`, or an `error` object without a status).
    InvalidReply,
}

impl FailureKind {
    /// The kind of an HTTP reply with `status` that is not a success.
    pub fn of_status(status: u16) -> FailureKind {
        match status {
            401 | 403 => FailureKind::Authentication,
            429 => FailureKind::RateLimit,
            503 | 529 => FailureKind::Overload,
            500..=599 => FailureKind::Server,
            _ => FailureKind::BadRequest,
        }
    }

    /// Its name in the report.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Authentication => "authentication",
            FailureKind::RateLimit => "rate_limit",
            FailureKind::Overload => "overload",
            FailureKind::Server => "server",
            FailureKind::BadRequest => "bad_request",
            FailureKind::Transport => "transport",
            FailureKind::InvalidReply => "invalid_reply",
        }
    }
}

/// A failed API request.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiFailure {
    /// What kind of failure.
    pub kind: FailureKind,
    /// The HTTP status, when there was a reply.
    pub status: Option<u16>,
    /// The API's own message (or the transport's), the key never in it.
    pub message: String,
}

/// One token count summed over replies: the total of those that stated
/// it, and how many did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Count {
    total: u64,
    stated: u32,
}

impl Count {
    fn add(&mut self, value: &Value) {
        if let Some(n) = value.as_u64() {
            self.total += n;
            self.stated += 1;
        }
    }
}

/// The `usage` of every successful reply, summed. A count is known only
/// when every reply stated it: a sum over some replies is not the
/// episode's, so it stays absent (never 0 for "not stated").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    replies: u32,
    prompt: Count,
    cached: Count,
    completion: Count,
    reasoning: Count,
}

impl Usage {
    /// Adds one reply's `usage` object (`Value::Null` when it had none):
    /// `prompt_tokens` (all input, cached included),
    /// `prompt_tokens_details.cached_tokens`, `completion_tokens`,
    /// `completion_tokens_details.reasoning_tokens` (part of it).
    pub fn add(&mut self, usage: &Value) {
        self.replies += 1;
        self.prompt.add(&usage["prompt_tokens"]);
        self.cached
            .add(&usage["prompt_tokens_details"]["cached_tokens"]);
        self.completion.add(&usage["completion_tokens"]);
        self.reasoning
            .add(&usage["completion_tokens_details"]["reasoning_tokens"]);
    }

    fn known(&self, count: Count) -> Option<u64> {
        (self.replies > 0 && count.stated == self.replies).then_some(count.total)
    }

    /// All prompt tokens, cached included, when every reply stated them.
    pub fn prompt_tokens(&self) -> Option<u64> {
        self.known(self.prompt)
    }

    /// The prompt tokens read from the cache, when every reply stated them.
    pub fn cached_tokens(&self) -> Option<u64> {
        self.known(self.cached)
    }

    /// Completion tokens, when every reply stated them.
    pub fn completion_tokens(&self) -> Option<u64> {
        self.known(self.completion)
    }

    /// Reasoning tokens (part of the completion), when every reply stated them.
    pub fn reasoning_tokens(&self) -> Option<u64> {
        self.known(self.reasoning)
    }

    /// The report's `usage` object: only the counts known.
    pub fn json(&self) -> Value {
        let mut out = Map::new();
        for (name, value) in [
            ("prompt_tokens", self.prompt_tokens()),
            ("cached_tokens", self.cached_tokens()),
            ("completion_tokens", self.completion_tokens()),
            ("reasoning_tokens", self.reasoning_tokens()),
        ] {
            if let Some(n) = value {
                out.insert(name.into(), n.into());
            }
        }
        Value::Object(out)
    }

    /// The cost in US dollars at `prices`: prompt tokens at the input
    /// price (the cached share at the cached price when one is given),
    /// completion tokens at the output price. `None` when a count it needs
    /// is unknown.
    pub fn cost_usd(&self, prices: &Prices) -> Option<f64> {
        let prompt = self.prompt_tokens()? as f64;
        let completion = self.completion_tokens()? as f64;
        let input = match prices.cached_input {
            None => prompt * prices.input,
            Some(cached_price) => {
                let cached = self.cached_tokens()? as f64;
                (prompt - cached) * prices.input + cached * cached_price
            }
        };
        Some((input + completion * prices.output) / 1e6)
    }
}

/// What an episode did: the report's contents.
#[derive(Debug, Clone, Default)]
pub struct Episode {
    /// API requests made.
    pub turns: u32,
    /// Tool calls run through the proxy (or answered for a call the model
    /// wrote badly).
    pub tool_calls: u32,
    /// The `model` of the first reply that named one.
    pub model_resolved: Option<String>,
    /// The last reply's `finish_reason`.
    pub finish_reason: Option<String>,
    /// The last reply's text, when it had any.
    pub result: Option<String>,
    /// The summed usage.
    pub usage: Usage,
    /// Seconds spent waiting for the API.
    pub api_s: f64,
    /// The failure that ended the episode, if one did.
    pub failure: Option<ApiFailure>,
}

/// The report of an episode, as printed on stdout (docs/HOSTS.md, "openai").
pub struct Report<'a> {
    /// How it was played.
    pub settings: &'a Settings,
    /// What happened.
    pub episode: &'a Episode,
    /// How it stopped.
    pub stop: Stop,
    /// Seconds from start to stop.
    pub wall_s: f64,
}

/// `x` rounded to milliseconds, as a JSON number.
fn seconds(x: f64) -> Value {
    json!(crate::layout::round_seconds(x))
}

impl Report<'_> {
    /// The report as one JSON object; members that are not known are left
    /// out (docs/HOSTS.md, "openai").
    pub fn json(&self) -> Value {
        let e = self.episode;
        let mut out = json!({
            "host": HOST,
            "model_requested": self.settings.model,
        });
        let map = out.as_object_mut().expect("an object");
        if let Some(model) = &e.model_resolved {
            map.insert("model_resolved".into(), json!(model));
        }
        map.insert("stop".into(), json!(self.stop.as_str()));
        map.insert("turns".into(), json!(e.turns));
        map.insert("max_turns".into(), json!(self.settings.max_turns));
        map.insert("tool_calls".into(), json!(e.tool_calls));
        map.insert("usage".into(), e.usage.json());
        if let Some(cost) = self.settings.prices.and_then(|p| e.usage.cost_usd(&p)) {
            map.insert("cost_usd".into(), json!(cost));
        }
        map.insert("wall_s".into(), seconds(self.wall_s));
        map.insert("api_s".into(), seconds(e.api_s));
        if let Some(reason) = &e.finish_reason {
            map.insert("finish_reason".into(), json!(reason));
        }
        if let Some(text) = &e.result {
            map.insert("result".into(), json!(text));
        }
        if let Some(f) = &e.failure {
            map.insert(
                "error".into(),
                json!({"kind": f.kind.as_str(), "status": f.status, "message": f.message}),
            );
        }
        out
    }
}

/// One tool call of a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's `id` (made up as `call_N` when the server gave none).
    pub id: String,
    /// The function's name, as offered.
    pub name: String,
    /// The arguments as the server sent them, as JSON text (what is sent
    /// back in the assistant message).
    pub arguments_text: String,
    /// The arguments as an object, or why they are not one.
    pub arguments: std::result::Result<Map<String, Value>, String>,
}

/// One reply, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The reply's `model`.
    pub model: Option<String>,
    /// The message's text, when not empty.
    pub text: Option<String>,
    /// Its tool calls, in order.
    pub calls: Vec<ToolCall>,
    /// The choice's `finish_reason`.
    pub finish_reason: Option<String>,
}

/// The text of a message's `content`: a string, or the `text` of each part
/// of a list; `None` when empty or absent.
fn content_text(content: &Value) -> Option<String> {
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    (!text.trim().is_empty()).then_some(text)
}

/// A tool call's arguments as real servers send them: a JSON string
/// (OpenAI, vLLM, LiteLLM), an empty string for a call with no arguments,
/// or an object (some Ollama versions). Returns the text to send back and
/// the object.
fn read_arguments(value: &Value) -> (String, std::result::Result<Map<String, Value>, String>) {
    match value {
        Value::Object(map) => (value.to_string(), Ok(map.clone())),
        Value::Null => ("{}".into(), Ok(Map::new())),
        Value::String(s) if s.trim().is_empty() => ("{}".into(), Ok(Map::new())),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(map)) => (s.clone(), Ok(map)),
            Ok(other) => (
                s.clone(),
                Err(format!("the arguments are JSON but not an object: {other}")),
            ),
            Err(e) => (s.clone(), Err(format!("the arguments are not JSON: {e}"))),
        },
        other => (
            other.to_string(),
            Err(format!("the arguments are not an object: {other}")),
        ),
    }
}

/// Reads a Chat Completions reply: its first choice's message, tool calls
/// and finish reason, whatever the `finish_reason` says (Ollama answers
/// tool calls with `stop`). `turn` numbers made-up call ids.
///
/// Errors: no `choices[0].message` (the message, for the report).
pub fn read_reply(body: &Value, turn: u32) -> std::result::Result<Reply, String> {
    let choice = &body["choices"][0];
    let message = &choice["message"];
    if !message.is_object() {
        return Err(format!(
            "the reply has no choices[0].message: {}",
            truncate(&body.to_string())
        ));
    }
    let calls = message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, call)| {
            let function = &call["function"];
            let name = function["name"].as_str()?.to_string();
            let (arguments_text, arguments) = read_arguments(&function["arguments"]);
            let id = match call["id"].as_str() {
                Some(id) if !id.is_empty() => id.to_string(),
                _ => format!("call_{turn}_{i}"),
            };
            Some(ToolCall {
                id,
                name,
                arguments_text,
                arguments,
            })
        })
        .collect();
    Ok(Reply {
        model: body["model"]
            .as_str()
            .filter(|m| !m.is_empty())
            .map(str::to_string),
        text: content_text(&message["content"]),
        calls,
        finish_reason: choice["finish_reason"].as_str().map(str::to_string),
    })
}

impl Reply {
    /// The assistant message that goes back into the conversation: its
    /// text (null when none) and its tool calls as they came (reasoning
    /// fields are not sent back).
    fn message(&self) -> Value {
        let calls: Vec<Value> = self
            .calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments_text}})
            })
            .collect();
        json!({"role": "assistant", "content": self.text, "tool_calls": calls})
    }
}

/// `text` cut to [`MAX_MESSAGE_CHARS`] characters.
fn truncate(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The API's message in an error body: `error.message` (OpenAI, vLLM,
/// LiteLLM, OpenRouter), `error` as a string (Ollama), `message`, or
/// `detail` (FastAPI servers); else the body itself. Cut to
/// `MAX_MESSAGE_CHARS` characters.
pub fn error_message(body: &str) -> String {
    let text = match serde_json::from_str::<Value>(body) {
        Ok(v) => [
            &v["error"]["message"],
            &v["error"],
            &v["message"],
            &v["detail"],
        ]
        .into_iter()
        .find_map(|m| match m {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            Value::Object(_) => None,
            other => Some(other.to_string()),
        })
        .unwrap_or_else(|| body.trim().to_string()),
        Err(_) => body.trim().to_string(),
    };
    truncate(&text)
}

/// A function name the API accepts (`^[a-zA-Z0-9_-]{1,64}$`) for an MCP
/// tool name: every other character replaced by `_`, cut to 64.
fn function_name(tool: &str) -> String {
    let name: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() { "_".into() } else { name }
}

/// The proxy's tools as offered to the API: each function's name and the
/// MCP tool it stands for (the same name unless the API forbids it), and
/// the `tools` array of the request.
struct Tools {
    names: Vec<(String, String)>,
    offered: Vec<Value>,
}

impl Tools {
    fn new(tools: &[rmcp::model::Tool]) -> Tools {
        let mut names: Vec<(String, String)> = Vec::new();
        let mut offered = Vec::new();
        for tool in tools {
            let mut name = function_name(&tool.name);
            let mut n = 2;
            while names.iter().any(|(f, _)| *f == name) {
                let suffix = format!("_{n}");
                let keep: String = name.chars().take(64 - suffix.len()).collect();
                name = format!("{keep}{suffix}");
                n += 1;
            }
            let mut function = json!({"name": name,
                "parameters": Value::Object((*tool.input_schema).clone())});
            if let Some(description) = &tool.description {
                function["description"] = json!(description);
            }
            offered.push(json!({"type": "function", "function": function}));
            names.push((name, tool.name.to_string()));
        }
        Tools { names, offered }
    }

    /// The MCP tool a function name stands for (the name itself when it
    /// was not offered: the proxy answers an unknown tool).
    fn tool<'a>(&'a self, function: &'a str) -> &'a str {
        self.names
            .iter()
            .find(|(f, _)| f == function)
            .map_or(function, |(_, t)| t.as_str())
    }
}

/// A tool result as the `tool` message's text: the texts of its content
/// (any other block as its JSON), or its structured content; an error
/// result says so on its first line.
fn result_text(result: &CallToolResult) -> String {
    let mut parts: Vec<String> = result
        .content
        .iter()
        .map(|c| match c.as_text() {
            Some(t) => t.text.clone(),
            None => serde_json::to_string(c).unwrap_or_default(),
        })
        .collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let text = parts.join("\n");
    if result.is_error == Some(true) {
        format!("The tool reported an error (isError: true):\n{text}")
    } else {
        text
    }
}

/// Where an episode's HTTP requests go, and how.
struct Api {
    agent: ureq::Agent,
    url: String,
    key: Option<String>,
    deadline: Option<Instant>,
}

/// How a request ended when it did not give a reply.
enum Failed {
    Api(ApiFailure),
    Timeout,
}

impl Api {
    fn new(settings: &Settings, deadline: Option<Instant>) -> Api {
        crate::mcp::upstream::install_crypto_provider();
        Api {
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .max_redirects(0)
                .max_redirects_will_error(false)
                .user_agent(concat!("okn-benchmark/", env!("CARGO_PKG_VERSION")))
                .build()
                .new_agent(),
            url: format!("{}/chat/completions", settings.base_url),
            key: settings.api_key.clone(),
            deadline,
        }
    }

    /// The message of a failure, the key replaced wherever it appears.
    fn failure(&self, kind: FailureKind, status: Option<u16>, message: String) -> Failed {
        let message = match &self.key {
            Some(key) if !key.is_empty() => message.replace(key.as_str(), "[the API key]"),
            _ => message,
        };
        Failed::Api(ApiFailure {
            kind,
            status,
            message,
        })
    }

    /// POSTs `body`; the reply's JSON, or why there is none.
    async fn post(&self, body: Vec<u8>) -> std::result::Result<Value, Failed> {
        let remaining = match self.deadline {
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => Some(left),
                _ => return Err(Failed::Timeout),
            },
            None => None,
        };
        let mut request = self
            .agent
            .post(&self.url)
            .config()
            .timeout_global(remaining)
            .build()
            .header("content-type", "application/json");
        if let Some(key) = &self.key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        let sent = tokio::task::spawn_blocking(move || {
            let mut response = request.send(&body[..])?;
            let status = response.status().as_u16();
            if (300..400).contains(&status) {
                let to = response
                    .headers()
                    .get("location")
                    .and_then(|l| l.to_str().ok())
                    .unwrap_or("nowhere named")
                    .to_string();
                return Ok((
                    status,
                    format!("the API redirected to {to}: give that API root as --base-url"),
                ));
            }
            let text = response
                .body_mut()
                .with_config()
                .limit(MAX_REPLY_BYTES)
                .read_to_string()?;
            Ok::<_, ureq::Error>((status, text))
        })
        .await;
        let (status, text) = match sent {
            Ok(Ok(reply)) => reply,
            Ok(Err(ureq::Error::Timeout(_))) if self.deadline.is_some() => {
                return Err(Failed::Timeout);
            }
            Ok(Err(e)) => return Err(self.failure(FailureKind::Transport, None, e.to_string())),
            Err(e) => return Err(self.failure(FailureKind::Transport, None, e.to_string())),
        };
        if !(200..300).contains(&status) {
            let message = error_message(&text);
            return Err(self.failure(FailureKind::of_status(status), Some(status), message));
        }
        let invalid =
            |message: String| self.failure(FailureKind::InvalidReply, Some(status), message);
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| invalid(format!("the reply is not JSON ({e}): {}", truncate(&text))))?;
        // Some gateways (OpenRouter) answer 200 with an error object.
        if value["error"].is_object() || value["error"].is_string() {
            let code = value["error"]["code"]
                .as_u64()
                .and_then(|c| u16::try_from(c).ok());
            let kind = code.map_or(FailureKind::InvalidReply, FailureKind::of_status);
            return Err(self.failure(kind, code.or(Some(status)), error_message(&text)));
        }
        Ok(value)
    }
}

/// Plays one episode: `prompt` to the API described by `settings`, the
/// tools and their calls through the proxy `mcp_config` names (JSON text:
/// `{"mcpServers": {"okn": {"command": .., "args": [..]}}}`).
///
/// Errors: an MCP config without the proxy ([`Error::Usage`]), a proxy
/// that cannot be started or does not list its tools ([`Error::Other`]).
/// What happens after (API failures included) is in the report.
pub async fn play(settings: &Settings, mcp_config: &str, prompt: &str) -> Result<Value> {
    let started = Instant::now();
    let deadline = settings.timeout.map(|t| started + t);
    let client = connect(mcp_config).await?;
    let tools = client
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| Error::Other(format!("the proxy did not list its tools: {e}")))?;
    let tools = Tools::new(&tools);
    let api = Api::new(settings, deadline);
    let mut episode = Episode::default();
    let turns = run_turns(settings, &api, (&client, &tools), prompt, &mut episode);
    let stop = match deadline {
        Some(d) => tokio::time::timeout_at(tokio::time::Instant::from_std(d), turns)
            .await
            .unwrap_or(Stop::Timeout),
        None => turns.await,
    };
    let _ = client.cancel().await;
    let report = Report {
        settings,
        episode: &episode,
        stop,
        wall_s: started.elapsed().as_secs_f64(),
    };
    Ok(report.json())
}

/// The request body: the model, the conversation, the tools (left out
/// when there are none), not streamed. No `tool_choice`: `auto` is the
/// default where tools are given, and vLLM refuses it unless started with
/// `--enable-auto-tool-choice`.
fn request_body(settings: &Settings, messages: &[Value], tools: &Tools) -> Vec<u8> {
    let mut body = json!({"model": settings.model, "messages": messages, "stream": false});
    if !tools.offered.is_empty() {
        body["tools"] = json!(tools.offered);
    }
    serde_json::to_vec(&body).expect("JSON")
}

/// The turns of an episode, until it stops (the timeout aside, which the
/// caller keeps).
async fn run_turns(
    settings: &Settings,
    api: &Api,
    (client, tools): (&Session, &Tools),
    prompt: &str,
    episode: &mut Episode,
) -> Stop {
    let mut messages = vec![json!({"role": "user", "content": prompt})];
    loop {
        if episode.turns >= settings.max_turns {
            return Stop::MaxTurns;
        }
        episode.turns += 1;
        let asked = Instant::now();
        let sent = api.post(request_body(settings, &messages, tools)).await;
        episode.api_s += asked.elapsed().as_secs_f64();
        let value = match sent {
            Ok(value) => value,
            Err(Failed::Timeout) => return Stop::Timeout,
            Err(Failed::Api(failure)) => {
                episode.failure = Some(failure);
                return Stop::ApiError;
            }
        };
        episode.usage.add(&value["usage"]);
        let reply = match read_reply(&value, episode.turns) {
            Ok(reply) => reply,
            Err(message) => {
                episode.failure = Some(ApiFailure {
                    kind: FailureKind::InvalidReply,
                    status: None,
                    message,
                });
                return Stop::ApiError;
            }
        };
        if episode.model_resolved.is_none() {
            episode.model_resolved = reply.model.clone();
        }
        episode.finish_reason = reply.finish_reason.clone();
        episode.result = reply.text.clone();
        if reply.calls.is_empty() {
            return Stop::NoToolCall;
        }
        messages.push(reply.message());
        for call in &reply.calls {
            let (text, submitted) = run_call(client, tools, call).await;
            episode.tool_calls += 1;
            messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": text}));
            if submitted {
                return Stop::Submitted;
            }
        }
    }
}

/// Runs one tool call through the proxy: the `tool` message's text, and
/// whether it was a `submit_csv` that succeeded. Arguments that are not a
/// JSON object are answered without calling the proxy.
async fn run_call(client: &Session, tools: &Tools, call: &ToolCall) -> (String, bool) {
    let arguments = match &call.arguments {
        Ok(arguments) => arguments.clone(),
        Err(why) => return (format!("The tool was not called: {why}"), false),
    };
    let tool = tools.tool(&call.name).to_string();
    let submit = tool == SUBMIT_CSV;
    let called = client
        .peer()
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await;
    match called {
        Ok(result) => {
            let ok = result.is_error != Some(true);
            (result_text(&result), submit && ok)
        }
        Err(e) => (format!("The tool call failed: {e}"), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_sums_only_the_counts_every_reply_stated() {
        let mut usage = Usage::default();
        assert_eq!(usage.json(), json!({}), "no reply: nothing known");
        usage.add(&json!({"prompt_tokens": 100, "completion_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 25}}));
        usage.add(&json!({"prompt_tokens": 150, "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 0}}));
        assert_eq!(
            usage.json(),
            json!({"prompt_tokens": 250, "cached_tokens": 25, "completion_tokens": 10})
        );
        // vLLM states no cached tokens (`prompt_tokens_details: null`): the
        // sum over two of three replies is not the episode's.
        usage.add(&json!({"prompt_tokens": 10, "completion_tokens": 1,
            "prompt_tokens_details": null}));
        assert_eq!(usage.cached_tokens(), None);
        assert_eq!(usage.prompt_tokens(), Some(260));
        // A reply with no usage at all makes every count unknown.
        usage.add(&Value::Null);
        assert_eq!(usage.json(), json!({}));
    }

    #[test]
    fn cost_is_computed_only_from_given_prices_and_known_counts() {
        let mut usage = Usage::default();
        usage.add(
            &json!({"prompt_tokens": 1_000_000, "completion_tokens": 500_000,
            "prompt_tokens_details": {"cached_tokens": 400_000}}),
        );
        let prices = Prices {
            input: 2.0,
            output: 8.0,
            cached_input: None,
        };
        assert_eq!(usage.cost_usd(&prices), Some(2.0 + 4.0));
        let cached = Prices {
            cached_input: Some(0.5),
            ..prices
        };
        assert_eq!(usage.cost_usd(&cached), Some(1.2 + 0.2 + 4.0));
        let mut unknown = Usage::default();
        unknown.add(&json!({"prompt_tokens": 10}));
        assert_eq!(unknown.cost_usd(&prices), None);
    }

    #[test]
    fn the_report_leaves_out_what_is_not_known() {
        let settings = Settings {
            model: "m".into(),
            base_url: "http://127.0.0.1:1/v1".into(),
            api_key: Some("sk-secret".into()),
            max_turns: 5,
            timeout: None,
            prices: None,
        };
        let episode = Episode {
            turns: 1,
            failure: Some(ApiFailure {
                kind: FailureKind::of_status(401),
                status: Some(401),
                message: "Incorrect API key provided.".into(),
            }),
            ..Episode::default()
        };
        let report = Report {
            settings: &settings,
            episode: &episode,
            stop: Stop::ApiError,
            wall_s: 0.12345,
        }
        .json();
        assert_eq!(
            report,
            json!({"host": "openai", "model_requested": "m", "stop": "api_error", "turns": 1,
                "max_turns": 5, "tool_calls": 0, "usage": {}, "wall_s": 0.123, "api_s": 0.0,
                "error": {"kind": "authentication", "status": 401,
                    "message": "Incorrect API key provided."}})
        );
        assert!(!report.to_string().contains("sk-secret"));
    }

    #[test]
    fn failures_are_typed_by_status() {
        let kinds: Vec<&str> = [401, 403, 429, 503, 529, 500, 502, 400, 404, 422, 307]
            .into_iter()
            .map(|s| FailureKind::of_status(s).as_str())
            .collect();
        assert_eq!(
            kinds,
            [
                "authentication",
                "authentication",
                "rate_limit",
                "overload",
                "overload",
                "server",
                "server",
                "bad_request",
                "bad_request",
                "bad_request",
                "bad_request"
            ]
        );
    }

    #[test]
    fn error_messages_are_read_from_each_servers_shape() {
        let openai =
            r#"{"error": {"message": "Incorrect API key provided.", "code": "invalid_api_key"}}"#;
        assert_eq!(error_message(openai), "Incorrect API key provided.");
        assert_eq!(
            error_message(r#"{"error": "model 'x' not found"}"#),
            "model 'x' not found"
        );
        assert_eq!(error_message(r#"{"detail": "Not Found"}"#), "Not Found");
        assert_eq!(error_message("Bad Gateway\n"), "Bad Gateway");
        let long = "é".repeat(MAX_MESSAGE_CHARS + 10);
        assert_eq!(error_message(&long).chars().count(), MAX_MESSAGE_CHARS + 1);
    }

    #[test]
    fn replies_of_real_servers_are_read_whatever_their_quirks() {
        // OpenAI / vLLM / LiteLLM: arguments as a JSON string, content null.
        let openai = json!({"model": "gpt-x-2025", "choices": [{"message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "query", "arguments": "{\"query\": \"ASK {}\"}"}}]},
            "finish_reason": "tool_calls"}]});
        let reply = read_reply(&openai, 1).unwrap();
        assert_eq!(reply.model.as_deref(), Some("gpt-x-2025"));
        assert_eq!(reply.text, None);
        assert_eq!(
            reply.calls[0].arguments.as_ref().unwrap()["query"],
            "ASK {}"
        );
        assert_eq!(reply.calls[0].arguments_text, "{\"query\": \"ASK {}\"}");
        // Ollama: arguments as an object, no id, finish_reason `stop`,
        // empty content; two calls in one message.
        let ollama = json!({"model": "qwen3", "choices": [{"message": {"role": "assistant",
            "content": "", "tool_calls": [
                {"function": {"name": "query", "arguments": {"query": "ASK {}"}}},
                {"function": {"name": "list_graphs", "arguments": ""}}]},
            "finish_reason": "stop"}]});
        let reply = read_reply(&ollama, 3).unwrap();
        assert_eq!(reply.calls.len(), 2);
        assert_eq!(reply.calls[0].id, "call_3_0");
        assert_eq!(reply.calls[0].arguments_text, "{\"query\":\"ASK {}\"}");
        assert_eq!(reply.calls[1].arguments, Ok(Map::new()));
        assert_eq!(reply.calls[1].arguments_text, "{}");
        assert_eq!(reply.text, None);
        assert_eq!(
            reply.message()["tool_calls"][1]["id"],
            "call_3_1",
            "the made-up id is the one the tool message answers"
        );
        // Arguments a model wrote badly are reported, not sent.
        let bad = json!({"choices": [{"message": {"tool_calls": [
            {"id": "c", "function": {"name": "query", "arguments": "{\"query\": "}}]}}]});
        let reply = read_reply(&bad, 1).unwrap();
        assert!(reply.calls[0].arguments.is_err());
        assert_eq!(reply.model, None);
        // Text as a list of parts.
        let parts = json!({"choices": [{"message": {"content": [{"type": "text", "text": "done"}]},
            "finish_reason": "stop"}]});
        assert_eq!(read_reply(&parts, 1).unwrap().text.as_deref(), Some("done"));
        assert!(read_reply(&json!({"object": "list"}), 1).is_err());
    }

    #[test]
    fn function_names_are_made_acceptable_to_the_api() {
        assert_eq!(function_name("query"), "query");
        assert_eq!(function_name("kg.query/v2"), "kg_query_v2");
        assert_eq!(function_name(&"x".repeat(80)).len(), 64);
    }
}
