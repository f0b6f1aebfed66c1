//! A stand-in for the Anthropic Messages API, so the real `claude` CLI can
//! run whole episodes with no model: this is the only place a model is
//! imitated (README.md, "Episodes: run, report, rescore, freeze";
//! `tests/it/claude.rs` runs the real CLI against it).
//!
//! It serves `POST /v1/messages` as streaming server-sent events
//! (`message_start`, `content_block_start`, `content_block_delta` with
//! `text_delta` or `input_json_delta`, `content_block_stop`,
//! `message_delta`, `message_stop`) and plays a [`Strategy`] through the
//! CLI's own tool loop: it recognizes the record from the prompt, calls the
//! server's SPARQL tool with the answer key, then `submit_csv` with the
//! strategy's answer, then ends its turn. Requests it does not recognize
//! get a short text reply. Point the CLI at it with `ANTHROPIC_BASE_URL`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, post};
use serde_json::{Value, json};

use super::strategy::{Strategy, find_record, query_tool, reply_table};
use crate::corpus::Corpus;
use crate::error::Result;
use crate::mcp::probe::SUBMIT_CSV;

/// The stand-in's state: the corpus, the strategy, and per record how many
/// conversations have started (the attempt number `mixed` varies by).
struct Standin {
    corpus: Corpus,
    strategy: Strategy,
    log_dir: Option<PathBuf>,
    /// Answer every request as the real API answers an expired or invalid
    /// key (HTTP 401, `authentication_error`).
    reject_key: bool,
    conversations: Mutex<BTreeMap<String, u32>>,
    requests: Mutex<u64>,
}

/// One server-sent event.
fn event(out: &mut String, kind: &str, data: Value) {
    out.push_str("event: ");
    out.push_str(kind);
    out.push_str("\ndata: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
}

/// What the stand-in answers with.
#[derive(Debug, Clone, PartialEq)]
enum Turn {
    Text(String),
    ToolUse { name: String, input: Value },
    Hang,
}

/// The tokens the stand-in says a message took, as the Messages API
/// reports them: input counted from the request (a quarter of its bytes),
/// a fixed share of it read from the prompt cache, output from the reply.
/// Deterministic, so a test can add up what the CLI should report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tokens {
    /// Uncached input tokens.
    pub input: u64,
    /// Input tokens read from the cache.
    pub cache_read: u64,
    /// Output tokens.
    pub output: u64,
}

impl Tokens {
    /// The tokens of a reply `turn` to a request of `request_bytes` bytes.
    fn of(request_bytes: usize, turn: &Turn) -> Tokens {
        let all = (request_bytes as u64 / 4).max(1);
        let reply_chars = match turn {
            Turn::Text(t) => t.chars().count(),
            Turn::ToolUse { input, .. } => input.to_string().chars().count(),
            Turn::Hang => 0,
        } as u64;
        Tokens {
            input: all - all / 4,
            cache_read: all / 4,
            output: reply_chars / 4 + 1,
        }
    }
}

/// The SSE body of one assistant message.
fn sse(model: &str, turn: &Turn, id: u64, tokens: Tokens) -> String {
    let mut out = String::new();
    event(
        &mut out,
        "message_start",
        json!({"type": "message_start", "message": {
            "id": format!("msg_standin_{id}"), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": tokens.input, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": tokens.cache_read, "output_tokens": 1}}}),
    );
    let stop = match turn {
        Turn::Text(text) => {
            event(
                &mut out,
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            );
            event(
                &mut out,
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
            );
            event(
                &mut out,
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            );
            "end_turn".to_string()
        }
        Turn::ToolUse { name, input } => {
            event(
                &mut out,
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {
                    "type": "tool_use", "id": format!("toolu_standin_{id}"), "name": name, "input": {}}}),
            );
            // The input arrives in pieces, as a real stream sends it.
            let text = input.to_string();
            let mut cut = text.len() / 2;
            while !text.is_char_boundary(cut) {
                cut += 1;
            }
            for piece in [&text[..cut], &text[cut..]] {
                event(
                    &mut out,
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                );
            }
            event(
                &mut out,
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            );
            "tool_use".to_string()
        }
        Turn::Hang => "end_turn".to_string(),
    };
    event(
        &mut out,
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": tokens.output}}),
    );
    event(&mut out, "message_stop", json!({"type": "message_stop"}));
    out
}

/// The text blocks of a message's content (a string or a list of blocks).
fn texts(content: &Value) -> Vec<String> {
    match content {
        Value::String(s) => vec![s.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| {
                (b["type"] == "text")
                    .then(|| b["text"].as_str().map(str::to_string))
                    .flatten()
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A tool result the CLI sent back: the tool it answers, its text, and
/// whether it was an error.
struct ToolResult {
    tool: String,
    text: String,
    is_error: bool,
}

/// The tool results in a conversation, in order, each matched to the name
/// of the tool use it answers.
fn tool_results(messages: &[Value]) -> Vec<ToolResult> {
    let mut names = BTreeMap::new();
    let mut results = Vec::new();
    for m in messages {
        let Some(blocks) = m["content"].as_array() else {
            continue;
        };
        for b in blocks {
            if b["type"] == "tool_use" {
                names.insert(
                    b["id"].as_str().unwrap_or("").to_string(),
                    b["name"].as_str().unwrap_or("").to_string(),
                );
            }
            if b["type"] == "tool_result" {
                let tool = names
                    .get(b["tool_use_id"].as_str().unwrap_or(""))
                    .cloned()
                    .unwrap_or_default();
                let text = match &b["content"] {
                    Value::String(s) => s.clone(),
                    other => texts(other).join("\n"),
                };
                results.push(ToolResult {
                    tool,
                    text,
                    is_error: b["is_error"] == json!(true),
                });
            }
        }
    }
    results
}

/// The tools a request offers, as `(name, input schema)`.
fn offered_tools(request: &Value) -> Vec<(String, Value)> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| Some((t["name"].as_str()?.to_string(), t["input_schema"].clone())))
        .collect()
}

/// The CLI names an MCP tool `mcp__SERVER__TOOL`: the answer tool is the
/// one whose name ends in `submit_csv`.
fn is_submit(name: &str) -> bool {
    name.ends_with(SUBMIT_CSV)
}

impl Standin {
    /// Decides the next assistant turn for this request body: run the
    /// record's answer key, then submit what the strategy makes of the
    /// rows, then end the turn.
    fn next_turn(&self, request: &Value) -> Turn {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let Some(record) = messages
            .iter()
            .filter(|m| m["role"] == "user")
            .flat_map(|m| texts(&m["content"]))
            .find_map(|text| find_record(&self.corpus, &text))
        else {
            return Turn::Text("I have no question to answer here.".into());
        };
        let results = tool_results(&messages);
        let played = self
            .strategy
            .resolve(record, self.attempt(&record.id, results.is_empty()));
        if results.iter().any(|r| is_submit(&r.tool)) {
            return Turn::Text("Submitted.".into());
        }
        let tools = offered_tools(request);
        let Some(tool) = query_tool(tools.iter().map(|(n, s)| (n.as_str(), s))) else {
            return Turn::Text("There is no SPARQL tool among my tools.".into());
        };
        let submit = tools
            .iter()
            .map(|(n, _)| n.clone())
            .find(|n| is_submit(n))
            .unwrap_or_else(|| SUBMIT_CSV.into());
        match results.iter().rev().find(|r| r.tool == tool.name) {
            None => Turn::ToolUse {
                input: Value::Object(tool.arguments(&record.query)),
                name: tool.name,
            },
            Some(ToolResult {
                is_error: true,
                text,
                ..
            }) => {
                let first: String = text.chars().take(200).collect();
                Turn::Text(format!("The query failed, so I have no answer: {first}"))
            }
            Some(ToolResult { text, .. }) => {
                if played == Strategy::Hang {
                    return Turn::Hang;
                }
                match reply_table(text).and_then(|rows| played.answer(&rows)) {
                    Some(answer) => Turn::ToolUse {
                        name: submit,
                        input: json!({"csv": answer.to_csv()}),
                    },
                    None => Turn::Text(format!(
                        "I ran the query and have no table to submit ({played})."
                    )),
                }
            }
        }
    }

    /// The attempt number of a conversation about `record`: a conversation
    /// with no tool results yet is a new one, so it counts one more.
    fn attempt(&self, record: &str, new_conversation: bool) -> u32 {
        let mut conversations = self.conversations.lock().unwrap_or_else(|e| e.into_inner());
        let n = conversations.entry(record.to_string()).or_insert(0);
        if new_conversation {
            *n += 1;
        }
        (*n).max(1)
    }
}

async fn messages(State(state): State<Arc<Standin>>, body: Bytes) -> Response {
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("not JSON: {e}")).into_response(),
    };
    let id = {
        let mut n = state.requests.lock().unwrap_or_else(|e| e.into_inner());
        *n += 1;
        *n
    };
    if let Some(dir) = &state.log_dir {
        // Whole or absent, as every file the tool writes: a test reading
        // the log while the CLI still talks never sees half a request.
        let _ = crate::fsutil::write_atomic(&dir.join(format!("request-{id:04}.json")), &body);
    }
    if state.reject_key {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})),
        )
            .into_response();
    }
    let model = request["model"].as_str().unwrap_or("standin").to_string();
    let turn = state.next_turn(&request);
    if turn == Turn::Hang {
        std::future::pending::<()>().await;
    }
    let tokens = Tokens::of(body.len(), &turn);
    let text = sse(&model, &turn, id, tokens);
    if request["stream"] == json!(true) {
        ([(header::CONTENT_TYPE, "text/event-stream")], text).into_response()
    } else {
        // A non-streaming client gets the same message as one JSON object.
        let message = match turn {
            Turn::Text(t) => json!({"type": "text", "text": t}),
            Turn::ToolUse { name, input } => {
                json!({"type": "tool_use", "id": format!("toolu_standin_{id}"), "name": name, "input": input})
            }
            Turn::Hang => json!({"type": "text", "text": ""}),
        };
        let stop = if message["type"] == "tool_use" {
            "tool_use"
        } else {
            "end_turn"
        };
        axum::Json(json!({"id": format!("msg_standin_{id}"), "type": "message", "role": "assistant", "model": model,
            "content": [message], "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": tokens.input, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": tokens.cache_read, "output_tokens": tokens.output}}))
        .into_response()
    }
}

async fn anything_else() -> Response {
    axum::Json(json!({})).into_response()
}

/// Serves the stand-in on `bind` until interrupted. Requests are written to
/// `log_dir` as `request-NNNN.json` when given (the tool list the CLI sends
/// shows which tools an agent would have).
///
/// Errors: the address cannot be bound.
pub async fn serve(
    corpus: Corpus,
    strategy: Strategy,
    bind: &str,
    log_dir: Option<PathBuf>,
    reject_key: bool,
) -> Result<()> {
    let state = Arc::new(Standin {
        corpus,
        strategy,
        log_dir,
        reject_key,
        conversations: Mutex::new(BTreeMap::new()),
        requests: Mutex::new(0),
    });
    let app = Router::new()
        .route("/v1/messages", post(messages))
        .fallback(any(anything_else))
        .with_state(state);
    crate::http::serve(app, bind, "standin-model", "the Messages API", "").await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_use_streams_its_input_in_pieces_that_join_to_json() {
        let body = sse(
            "m",
            &Turn::ToolUse {
                name: "mcp__okn__query".into(),
                input: json!({"query": "SELECT * { ?s ?p ?o }"}),
            },
            7,
            Tokens {
                input: 3,
                cache_read: 1,
                output: 2,
            },
        );
        let kinds: Vec<&str> = body
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(
            kinds,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        let pieces: String = body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .filter_map(|v| v["delta"]["partial_json"].as_str().map(str::to_string))
            .collect();
        assert_eq!(
            serde_json::from_str::<Value>(&pieces).unwrap(),
            json!({"query": "SELECT * { ?s ?p ?o }"})
        );
        assert!(body.contains("\"stop_reason\":\"tool_use\""));
    }
}
