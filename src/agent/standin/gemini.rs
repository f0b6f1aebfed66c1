//! Gemini's API (`POST /v1beta/models/{model}:generateContent`, and
//! `:streamGenerateContent?alt=sse`), as the Gemini CLI speaks it:
//! `contents` of `parts` (`text`, `functionCall`, `functionResponse`),
//! `systemInstruction`, tools declared as `functionDeclarations`; one
//! `GenerateContentResponse` (`candidates`, `usageMetadata`,
//! `modelVersion`), or a stream of them as server-sent events (`data:`
//! lines only; the last carries `finishReason` and `usageMetadata`).
//! `:countTokens` answers with the stand-in's input count.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::play::{Conversation, ToolResult, Turn, result_text};
use super::{Reply, Wire, event, halves, sse_response};

/// Gemini's `generateContent`.
pub struct GenerateContent;

/// The texts of a `Content` (`{"parts": [{"text": ..}, ..]}`) or a plain
/// string.
fn texts(content: &Value) -> Vec<String> {
    match content {
        Value::String(s) => vec![s.clone()],
        _ => content["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["text"].as_str().map(str::to_string))
            .collect(),
    }
}

/// The `usageMetadata` of a reply.
fn usage(reply: &Reply) -> Value {
    let t = reply.tokens;
    json!({"promptTokenCount": t.prompt(), "cachedContentTokenCount": t.cache_read,
        "candidatesTokenCount": t.output, "totalTokenCount": t.prompt() + t.output})
}

/// One `GenerateContentResponse` holding `parts`, finished or not.
fn chunk(reply: &Reply, parts: Value, last: bool) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    let mut out = json!({"candidates": [], "modelVersion": reply.model,
        "responseId": format!("standin-{}", reply.id)});
    if last {
        candidate["finishReason"] = json!("STOP");
        out["usageMetadata"] = usage(reply);
    }
    out["candidates"] = json!([candidate]);
    out
}

/// The responses of one reply: a function call whole, text in two pieces
/// (one when it is one character or none).
fn chunks(reply: &Reply, turn: &Turn) -> Vec<Value> {
    match turn {
        Turn::ToolUse { name, input } => {
            let call = json!({"functionCall": {"name": name, "args": input}});
            vec![chunk(reply, json!([call]), true)]
        }
        Turn::Text(text) => {
            let (a, b) = halves(text);
            if a.is_empty() {
                return vec![chunk(reply, json!([{"text": b}]), true)];
            }
            vec![
                chunk(reply, json!([{"text": a}]), false),
                chunk(reply, json!([{"text": b}]), true),
            ]
        }
        Turn::Hang => vec![chunk(reply, json!([{"text": ""}]), true)],
    }
}

impl Wire for GenerateContent {
    fn read(request: &Value) -> Conversation {
        let mut conversation = Conversation::default();
        conversation
            .context
            .extend(texts(&request["systemInstruction"]));
        for content in request["contents"].as_array().into_iter().flatten() {
            let text = texts(content);
            conversation.context.extend(text.iter().cloned());
            if content["role"] == "user" || content["role"].is_null() {
                conversation.prompts.extend(text);
            }
            for part in content["parts"].as_array().into_iter().flatten() {
                let response = &part["functionResponse"];
                if response.is_object() {
                    let body = &response["response"];
                    let error = body.get("error").filter(|e| !e.is_null());
                    let text = match (error, body.get("output")) {
                        (Some(e), _) => result_text(e),
                        (None, Some(output)) => result_text(output),
                        (None, None) => result_text(body),
                    };
                    conversation.results.push(ToolResult {
                        tool: response["name"].as_str().unwrap_or("").to_string(),
                        text,
                        is_error: error.is_some(),
                    });
                }
            }
        }
        conversation.tools = request["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|t| {
                t["functionDeclarations"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|f| {
                let schema = match &f["parametersJsonSchema"] {
                    Value::Null => f["parameters"].clone(),
                    s => s.clone(),
                };
                Some((f["name"].as_str()?.to_string(), schema))
            })
            .collect();
        conversation
    }

    fn rejected() -> Response {
        (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": {"code": 400,
                "message": "API key not valid. Please pass a valid API key.",
                "status": "INVALID_ARGUMENT",
                "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}})),
        )
            .into_response()
    }

    /// `generationConfig.responseMimeType` `application/json`, its schema
    /// `responseJsonSchema` (JSON Schema) or `responseSchema` (Gemini's
    /// `Schema`).
    fn json_schema(request: &Value) -> Option<Value> {
        let config = &request["generationConfig"];
        let mime = config["responseMimeType"].as_str()?;
        if !mime.trim().eq_ignore_ascii_case("application/json") {
            return None;
        }
        Some(
            [&config["responseJsonSchema"], &config["responseSchema"]]
                .into_iter()
                .find(|s| s.is_object())
                .cloned()
                .unwrap_or_else(|| json!({})),
        )
    }

    fn reply(reply: &Reply, turn: &Turn) -> Response {
        let chunks = chunks(reply, turn);
        if reply.stream {
            let mut out = String::new();
            for c in &chunks {
                event(&mut out, None, c);
            }
            return sse_response(out);
        }
        if reply.array {
            return axum::Json(Value::Array(chunks)).into_response();
        }
        // One response: the pieces' parts joined.
        let text: String = chunks
            .iter()
            .filter_map(|c| c["candidates"][0]["content"]["parts"][0]["text"].as_str())
            .collect();
        let whole = match turn {
            Turn::ToolUse { .. } => chunks[0].clone(),
            _ => chunk(reply, json!([{ "text": text }]), true),
        };
        axum::Json(whole).into_response()
    }
}
