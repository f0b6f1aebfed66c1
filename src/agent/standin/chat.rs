//! The OpenAI Chat Completions API (`POST /v1/chat/completions`), as the
//! built-in `openai` host, vLLM, Ollama, LiteLLM and OpenRouter speak it:
//! `tools` declared as functions, the reply's `tool_calls`, `usage`; one
//! `chat.completion` object, or `chat.completion.chunk` server-sent events
//! ending in `data: [DONE]` when `stream` is `true` (the usage in a last
//! chunk with no choices when `stream_options.include_usage` is `true`).

use std::collections::BTreeMap;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::play::{Conversation, ToolResult, Turn, result_text};
use super::{Reply, Wire, event, halves, sse_response};

/// The Chat Completions API.
pub struct ChatCompletions;

/// The texts of a message's `content`: a string, or a list of parts
/// (`{"type": "text", "text": ..}`).
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

/// The `usage` object of a reply.
fn usage(reply: &Reply) -> Value {
    let t = reply.tokens;
    json!({"prompt_tokens": t.prompt(), "completion_tokens": t.output,
        "total_tokens": t.prompt() + t.output,
        "prompt_tokens_details": {"cached_tokens": t.cache_read}})
}

/// The chunk envelope of a streamed reply.
fn chunk(reply: &Reply, choices: Value) -> Value {
    json!({"id": format!("chatcmpl-standin-{}", reply.id), "object": "chat.completion.chunk",
        "created": 0, "model": reply.model, "choices": choices})
}

impl Wire for ChatCompletions {
    fn read(request: &Value) -> Conversation {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let mut names = BTreeMap::new();
        let mut conversation = Conversation::default();
        for m in &messages {
            let text = texts(&m["content"]);
            conversation.context.extend(text.iter().cloned());
            match m["role"].as_str() {
                Some("user") => conversation.prompts.extend(text),
                Some("assistant") => {
                    for call in m["tool_calls"].as_array().into_iter().flatten() {
                        names.insert(
                            call["id"].as_str().unwrap_or("").to_string(),
                            call["function"]["name"].as_str().unwrap_or("").to_string(),
                        );
                    }
                }
                Some("tool") => conversation.results.push(ToolResult {
                    tool: names
                        .get(m["tool_call_id"].as_str().unwrap_or(""))
                        .cloned()
                        .unwrap_or_default(),
                    text: result_text(&m["content"]),
                    is_error: false,
                }),
                _ => {}
            }
        }
        conversation.tools = request["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| {
                let f = &t["function"];
                Some((f["name"].as_str()?.to_string(), f["parameters"].clone()))
            })
            .collect();
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

    /// `response_format` (`json_schema` or `json_object`).
    fn json_schema(request: &Value) -> Option<Value> {
        super::json_format(&request["response_format"])
    }

    fn reply(reply: &Reply, turn: &Turn) -> Response {
        let call_id = format!("call_standin_{}", reply.id);
        let (content, calls, finish) = match turn {
            Turn::ToolUse { name, input } => (
                Value::Null,
                Some((name.as_str(), input.to_string())),
                "tool_calls",
            ),
            Turn::Text(t) => (json!(t), None, "stop"),
            Turn::Hang => (json!(""), None, "stop"),
        };
        if !reply.stream {
            let mut message = json!({"role": "assistant", "content": content});
            if let Some((name, arguments)) = &calls {
                message["tool_calls"] = json!([{"id": call_id, "type": "function",
                    "function": {"name": name, "arguments": arguments}}]);
            }
            return axum::Json(json!({"id": format!("chatcmpl-standin-{}", reply.id),
                "object": "chat.completion", "created": 0, "model": reply.model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage(reply)}))
            .into_response();
        }
        let mut out = String::new();
        let delta = |delta: Value| json!([{"index": 0, "delta": delta, "finish_reason": null}]);
        match &calls {
            Some((name, arguments)) => {
                let first = json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
                    "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}]});
                event(&mut out, None, &chunk(reply, delta(first)));
                // The arguments arrive in pieces, as a real stream sends them.
                let (a, b) = halves(arguments);
                for piece in [a, b] {
                    let more =
                        json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]});
                    event(&mut out, None, &chunk(reply, delta(more)));
                }
            }
            None => {
                let first = json!({"role": "assistant", "content": content});
                event(&mut out, None, &chunk(reply, delta(first)));
            }
        }
        let last = json!([{"index": 0, "delta": {}, "finish_reason": finish}]);
        event(&mut out, None, &chunk(reply, last));
        if reply.request["stream_options"]["include_usage"] == json!(true) {
            let mut usage_chunk = chunk(reply, json!([]));
            usage_chunk["usage"] = usage(reply);
            event(&mut out, None, &usage_chunk);
        }
        out.push_str("data: [DONE]\n\n");
        sse_response(out)
    }
}
