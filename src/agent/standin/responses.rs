//! The OpenAI Responses API (`POST /v1/responses`), as the Codex CLI
//! speaks it: `instructions` and `input` items (messages, `function_call`,
//! `function_call_output`), tools declared as `{"type": "function", "name",
//! "parameters"}`; one `response` object, or, when `stream` is `true`,
//! server-sent events `response.created`, `response.output_item.added`,
//! the text or argument deltas, `response.output_item.done` and
//! `response.completed` (which carries `usage`).
//!
//! Tools may come grouped in namespaces (`{"type": "namespace", "name":
//! "mcp__okn", "tools": [..]}`: codex 0.171 offers each MCP server's tools
//! so). The player sees such a tool as `NAMESPACE__NAME` (`mcp__okn__query`,
//! the name claude gives it too), and a call of it is written back as
//! `{"namespace": "mcp__okn", "name": "query"}`.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::play::{Conversation, ToolResult, Turn, result_text};
use super::{Reply, Wire, event, halves, sse_response};

/// The Responses API.
pub struct Responses;

/// The texts of an input message's `content`: a string, or a list of
/// parts (`input_text`, `output_text`).
fn texts(content: &Value) -> Vec<String> {
    match content {
        Value::String(s) => vec![s.clone()],
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// The function tools a request declares, as `(name, JSON Schema)`, a
/// namespaced one named `NAMESPACE__NAME`.
fn declared_tools(tools: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for tool in tools.as_array().into_iter().flatten() {
        let Some(name) = tool["name"].as_str() else {
            continue;
        };
        match tool["type"].as_str() {
            Some("function") => out.push((name.to_string(), tool["parameters"].clone())),
            Some("namespace") => {
                for (inner, schema) in declared_tools(&tool["tools"]) {
                    out.push((format!("{name}__{inner}"), schema));
                }
            }
            _ => {}
        }
    }
    out
}

/// `(namespace, name)` of the tool the player calls `full`: split where a
/// namespace the request declares holds it, else no namespace.
fn split_name(request: &Value, full: &str) -> (Option<String>, String) {
    for tool in request["tools"].as_array().into_iter().flatten() {
        if tool["type"] != "namespace" {
            continue;
        }
        let Some(namespace) = tool["name"].as_str() else {
            continue;
        };
        if let Some(inner) = full
            .strip_prefix(namespace)
            .and_then(|rest| rest.strip_prefix("__"))
            && tool["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|t| t["name"] == inner)
        {
            return (Some(namespace.to_string()), inner.to_string());
        }
    }
    (None, full.to_string())
}

/// The one output item of a reply, complete.
fn output_item(reply: &Reply, turn: &Turn) -> Value {
    match turn {
        Turn::ToolUse { name, input } => {
            let (namespace, name) = split_name(reply.request, name);
            let mut item = json!({"id": format!("fc_standin_{}", reply.id),
                "type": "function_call", "status": "completed",
                "call_id": format!("call_standin_{}", reply.id), "name": name,
                "arguments": input.to_string()});
            if let Some(namespace) = namespace {
                item["namespace"] = json!(namespace);
            }
            item
        }
        Turn::Text(text) => message_item(reply, text, "completed"),
        Turn::Hang => message_item(reply, "", "completed"),
    }
}

/// An assistant message item holding `text`.
fn message_item(reply: &Reply, text: &str, status: &str) -> Value {
    let content = if text.is_empty() && status == "in_progress" {
        json!([])
    } else {
        json!([{"type": "output_text", "text": text, "annotations": []}])
    };
    json!({"id": format!("msg_standin_{}", reply.id), "type": "message", "status": status,
        "role": "assistant", "content": content})
}

/// The `response` object, `completed` with its output and usage, or
/// `in_progress` with neither.
fn response(reply: &Reply, output: Option<Value>) -> Value {
    let t = reply.tokens;
    let mut response = json!({"id": format!("resp_standin_{}", reply.id), "object": "response",
        "created_at": 0, "status": "in_progress", "model": reply.model, "output": [],
        "usage": null});
    if let Some(item) = output {
        response["status"] = json!("completed");
        response["output"] = json!([item]);
        response["usage"] = json!({"input_tokens": t.prompt(),
            "input_tokens_details": {"cached_tokens": t.cache_read},
            "output_tokens": t.output, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": t.prompt() + t.output});
    }
    response
}

/// The SSE body of one reply: every event numbered in order.
fn sse(reply: &Reply, turn: &Turn) -> String {
    let mut events: Vec<Value> = vec![json!({"type": "response.created",
        "response": response(reply, None)})];
    let item = output_item(reply, turn);
    let item_id = item["id"].clone();
    let added = match turn {
        Turn::ToolUse { .. } => {
            let mut started = item.clone();
            started["status"] = json!("in_progress");
            started["arguments"] = json!("");
            started
        }
        _ => message_item(reply, "", "in_progress"),
    };
    events.push(json!({"type": "response.output_item.added", "output_index": 0, "item": added}));
    match turn {
        Turn::ToolUse { .. } => {
            let arguments = item["arguments"].as_str().unwrap_or("{}");
            let (a, b) = halves(arguments);
            for piece in [a, b] {
                events.push(json!({"type": "response.function_call_arguments.delta",
                    "item_id": item_id, "output_index": 0, "delta": piece}));
            }
            events.push(json!({"type": "response.function_call_arguments.done",
                "item_id": item_id, "output_index": 0, "arguments": arguments}));
        }
        _ => {
            let text = item["content"][0]["text"].as_str().unwrap_or("");
            let part = json!({"type": "output_text", "text": text, "annotations": []});
            let at = json!({"item_id": item_id, "output_index": 0, "content_index": 0});
            let with = |kind: &str, key: &str, value: Value| {
                let mut e = at.clone();
                e["type"] = json!(kind);
                e[key] = value;
                e
            };
            events.push(with(
                "response.content_part.added",
                "part",
                json!({"type": "output_text", "text": "", "annotations": []}),
            ));
            events.push(with("response.output_text.delta", "delta", json!(text)));
            events.push(with("response.output_text.done", "text", json!(text)));
            events.push(with("response.content_part.done", "part", part));
        }
    }
    events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
    events.push(json!({"type": "response.completed", "response": response(reply, Some(item))}));
    let mut out = String::new();
    for (n, mut e) in events.into_iter().enumerate() {
        e["sequence_number"] = json!(n);
        let kind = e["type"].as_str().unwrap_or("").to_string();
        event(&mut out, Some(&kind), &e);
    }
    out
}

impl Wire for Responses {
    fn read(request: &Value) -> Conversation {
        let mut conversation = Conversation::default();
        conversation.context.extend(texts(&request["instructions"]));
        let items = match &request["input"] {
            Value::String(s) => vec![json!({"role": "user", "content": s})],
            Value::Array(items) => items.clone(),
            _ => Vec::new(),
        };
        let mut names = BTreeMap::new();
        for item in &items {
            match item["type"].as_str().unwrap_or("message") {
                "message" => {
                    let text = texts(&item["content"]);
                    conversation.context.extend(text.iter().cloned());
                    if item["role"] == "user" {
                        conversation.prompts.extend(text);
                    }
                }
                "function_call" => {
                    let name = item["name"].as_str().unwrap_or("");
                    let full = match item["namespace"].as_str() {
                        Some(namespace) => format!("{namespace}__{name}"),
                        None => name.to_string(),
                    };
                    names.insert(item["call_id"].as_str().unwrap_or("").to_string(), full);
                }
                "function_call_output" => conversation.results.push(ToolResult {
                    tool: names
                        .get(item["call_id"].as_str().unwrap_or(""))
                        .cloned()
                        .unwrap_or_default(),
                    text: result_text(&item["output"]),
                    is_error: false,
                }),
                _ => {}
            }
        }
        conversation.tools = declared_tools(&request["tools"]);
        conversation
    }

    fn rejected() -> Response {
        (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": {"message": "Incorrect API key provided.",
                "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}})),
        )
            .into_response()
    }

    /// `text.format` (`json_schema` or `json_object`).
    fn json_schema(request: &Value) -> Option<Value> {
        super::json_format(&request["text"]["format"])
    }

    fn reply(reply: &Reply, turn: &Turn) -> Response {
        if reply.stream {
            return sse_response(sse(reply, turn));
        }
        axum::Json(response(reply, Some(output_item(reply, turn)))).into_response()
    }
}
