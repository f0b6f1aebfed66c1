//! The Anthropic Messages API (`POST /v1/messages`), as the claude CLI
//! speaks it: streaming server-sent events (`message_start`,
//! `content_block_start`, `content_block_delta` with `text_delta` or
//! `input_json_delta`, `content_block_stop`, `message_delta`,
//! `message_stop`), or one message object when `stream` is not `true`.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::play::{Conversation, ToolResult, Turn, result_text};
use super::{Reply, Wire, event, sse_response};

/// The Messages API.
pub struct Messages;

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
                results.push(ToolResult {
                    tool,
                    text: result_text(&b["content"]),
                    is_error: b["is_error"] == json!(true),
                });
            }
        }
    }
    results
}

/// The SSE body of one assistant message.
fn sse(reply: &Reply, turn: &Turn) -> String {
    let (id, tokens) = (reply.id, reply.tokens);
    let mut out = String::new();
    event(
        &mut out,
        Some("message_start"),
        &json!({"type": "message_start", "message": {
            "id": format!("msg_standin_{id}"), "type": "message", "role": "assistant",
            "model": reply.model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": tokens.input, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": tokens.cache_read, "output_tokens": 1}}}),
    );
    let block = |out: &mut String, start: Value, deltas: &[Value]| {
        event(
            out,
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": 0, "content_block": start}),
        );
        for delta in deltas {
            event(
                out,
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": 0, "delta": delta}),
            );
        }
        event(
            out,
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": 0}),
        );
    };
    let stop = match turn {
        Turn::Text(text) => {
            block(
                &mut out,
                json!({"type": "text", "text": ""}),
                &[json!({"type": "text_delta", "text": text})],
            );
            "end_turn"
        }
        Turn::ToolUse { name, input } => {
            // The input arrives in pieces, as a real stream sends it.
            let (a, b) = super::halves(&input.to_string());
            block(
                &mut out,
                json!({"type": "tool_use", "id": format!("toolu_standin_{id}"), "name": name, "input": {}}),
                &[
                    json!({"type": "input_json_delta", "partial_json": a}),
                    json!({"type": "input_json_delta", "partial_json": b}),
                ],
            );
            "tool_use"
        }
        Turn::Hang => "end_turn",
    };
    event(
        &mut out,
        Some("message_delta"),
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": tokens.output}}),
    );
    event(
        &mut out,
        Some("message_stop"),
        &json!({"type": "message_stop"}),
    );
    out
}

impl Wire for Messages {
    fn read(request: &Value) -> Conversation {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let mut context = texts(&request["system"]);
        for m in &messages {
            context.extend(texts(&m["content"]));
        }
        Conversation {
            prompts: messages
                .iter()
                .filter(|m| m["role"] == "user")
                .flat_map(|m| texts(&m["content"]))
                .collect(),
            context,
            tools: request["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| Some((t["name"].as_str()?.to_string(), t["input_schema"].clone())))
                .collect(),
            results: tool_results(&messages),
        }
    }

    fn rejected() -> Response {
        (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})),
        )
            .into_response()
    }

    /// `output_config.format` (structured outputs), or the beta's
    /// `output_format`.
    fn json_schema(request: &Value) -> Option<Value> {
        super::json_format(&request["output_config"]["format"])
            .or_else(|| super::json_format(&request["output_format"]))
    }

    fn reply(reply: &Reply, turn: &Turn) -> Response {
        if reply.stream {
            return sse_response(sse(reply, turn));
        }
        let (id, tokens) = (reply.id, reply.tokens);
        let (block, stop) = match turn {
            Turn::ToolUse { name, input } => (
                json!({"type": "tool_use", "id": format!("toolu_standin_{id}"), "name": name, "input": input}),
                "tool_use",
            ),
            Turn::Text(t) => (json!({"type": "text", "text": t}), "end_turn"),
            Turn::Hang => (json!({"type": "text", "text": ""}), "end_turn"),
        };
        axum::Json(
            json!({"id": format!("msg_standin_{id}"), "type": "message", "role": "assistant",
            "model": reply.model, "content": [block], "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": tokens.input, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": tokens.cache_read, "output_tokens": tokens.output}}),
        )
        .into_response()
    }
}
