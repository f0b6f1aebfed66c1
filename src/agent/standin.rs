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
//!
//! A CLI that defers MCP tools (claude 2.1.332 does: their names are listed
//! in the system prompt, their schemas withheld until `ToolSearch` loads
//! them) is played the way a model plays it (issue 25, "Real servers"):
//! the stand-in first calls the discovery tool with
//! `select:mcp__okn__query,...` (every deferred MCP tool announced), reads
//! the schemas it returns (`<function>{..}</function>` lines, or the
//! tools the next request declares), and only then runs the query. Only
//! an MCP tool (`mcp__SERVER__TOOL`) is ever taken for the SPARQL tool, and
//! never a discovery tool.

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

use super::strategy::{Strategy, find_record, is_discovery_tool, query_tool, reply_table};
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

/// The tools a request offers, as `(name, input schema)`: those declared
/// with a schema, and those a discovery tool's result spelled out (each
/// `<function>{"name": .., "parameters": ..}</function>`, as claude's
/// `ToolSearch` answers).
fn offered_tools(request: &Value, results: &[ToolResult]) -> Vec<(String, Value)> {
    let mut tools: Vec<(String, Value)> = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| Some((t["name"].as_str()?.to_string(), t["input_schema"].clone())))
        .filter(|(_, schema)| schema.is_object())
        .collect();
    for result in results.iter().filter(|r| is_discovery_tool(&r.tool)) {
        for block in result.text.split("<function>").skip(1) {
            let Some((body, _)) = block.split_once("</function>") else {
                continue;
            };
            let Ok(function) = serde_json::from_str::<Value>(body) else {
                continue;
            };
            if let Some(name) = function["name"].as_str()
                && !tools.iter().any(|(n, _)| n == name)
            {
                tools.push((name.to_string(), function["parameters"].clone()));
            }
        }
    }
    tools
}

/// The MCP tools (`mcp__...`) a request names in its system prompt or its
/// messages' text without declaring them: the deferred tools a discovery
/// tool loads. In order of first mention, each once.
fn deferred_mcp_tools(request: &Value, known: &[(String, Value)]) -> Vec<String> {
    let mut text = texts(&request["system"]);
    for m in request["messages"].as_array().into_iter().flatten() {
        text.extend(texts(&m["content"]));
    }
    let mut names: Vec<String> = Vec::new();
    for piece in text {
        for (at, _) in piece.match_indices("mcp__") {
            let name: String = piece[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                .collect();
            let has_tool = name["mcp__".len()..].contains("__");
            if has_tool && !names.contains(&name) && !known.iter().any(|(n, _)| *n == name) {
                names.push(name);
            }
        }
    }
    names
}

/// What the stand-in does when the SPARQL tool's schema is not known yet:
/// load the deferred MCP tools through the discovery tool, once.
fn load_deferred(
    request: &Value,
    tools: &[(String, Value)],
    results: &[ToolResult],
) -> Option<Turn> {
    let (search, schema) = tools.iter().find(|(n, _)| is_discovery_tool(n))?;
    if results.iter().any(|r| r.tool == *search) {
        return None;
    }
    let param = schema["properties"]
        .as_object()
        .and_then(|p| p.keys().find(|k| k.as_str() == "query").cloned())?;
    let deferred = deferred_mcp_tools(request, tools);
    if deferred.is_empty() {
        return None;
    }
    Some(Turn::ToolUse {
        name: search.clone(),
        input: json!({ param: format!("select:{}", deferred.join(",")) }),
    })
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
        let tools = offered_tools(request, &results);
        // A built-in of the host is never the server's SPARQL tool.
        let mcp = tools.iter().any(|(n, _)| n.starts_with("mcp__"));
        let candidates = tools
            .iter()
            .filter(|(n, _)| !mcp || n.starts_with("mcp__"))
            .map(|(n, s)| (n.as_str(), s));
        let Some(tool) = query_tool(candidates) else {
            if let Some(turn) = load_deferred(request, &tools, &results) {
                return turn;
            }
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

    fn standin() -> Standin {
        // The first shipped corpus with records, by folder name (tiers are
        // never named in code: scripts/tier-guard).
        let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
        let mut folders: Vec<_> = std::fs::read_dir(demo)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        folders.sort();
        let corpus = folders
            .iter()
            .filter_map(|f| Corpus::load(f).ok())
            .find(|c| !c.records.is_empty())
            .unwrap();
        Standin {
            corpus,
            strategy: Strategy::Oracle,
            log_dir: None,
            reject_key: false,
            conversations: Mutex::new(BTreeMap::new()),
            requests: Mutex::new(0),
        }
    }

    /// Issue 25: claude 2.1.332 offers MCP tools deferred (named in the
    /// system prompt, loaded by ToolSearch), and the stand-in took
    /// ToolSearch's `query` for the SPARQL tool's.
    #[test]
    fn deferred_mcp_tools_are_loaded_through_tool_search_then_queried() {
        let standin = standin();
        let record = standin.corpus.records[0].clone();
        let search = json!({"name": "ToolSearch", "input_schema": {"type": "object",
            "properties": {"query": {"type": "string"}, "max_results": {"type": "number"}}}});
        let system = "The following deferred tools are now available via ToolSearch. Use ToolSearch \
            with query \"select:<name>[,<name>...]\" to load tool schemas before calling them:\n\
            mcp__okn__query\nmcp__okn__submit_csv\n\nToday's date is 2026-12-06.";
        let mut messages =
            vec![json!({"role": "user", "content": [{"type": "text", "text": record.summary}]})];
        let request = |messages: &[Value]| {
            json!({"system": [{"type": "text", "text": system}],
                "tools": [{"name": "ListAgents", "input_schema": {"properties": {"q": {}}}},
                    {"name": "DeferredToolPlaceholder", "input_schema": {"properties": {}}, "defer_loading": true},
                    search.clone()],
                "messages": messages})
        };
        let Turn::ToolUse { name, input } = standin.next_turn(&request(&messages)) else {
            panic!("no tool use first");
        };
        assert_eq!(name, "ToolSearch");
        assert_eq!(
            input,
            json!({"query": "select:mcp__okn__query,mcp__okn__submit_csv"})
        );
        // ToolSearch answers with the schemas, one <function> line each.
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ToolSearch", "input": input}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content":
            "<functions>\n<function>{\"description\": \"Run SPARQL\", \"name\": \"mcp__okn__query\", \"parameters\": {\"properties\": {\"graph\": {}, \"query_string\": {}}}}</function>\n\
             <function>{\"description\": \"Answer\", \"name\": \"mcp__okn__submit_csv\", \"parameters\": {\"properties\": {\"csv\": {}}}}</function>\n</functions>"}]}));
        let Turn::ToolUse { name, input } = standin.next_turn(&request(&messages)) else {
            panic!("no query after the schemas came");
        };
        assert_eq!(name, "mcp__okn__query");
        assert_eq!(input["query_string"], json!(record.query));
        assert_eq!(input["graph"], "federation");
        // mcp-proto-okn's reply shape is read, and the rows submitted.
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "mcp__okn__query", "input": input}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content":
            [{"type": "text", "text": "{\"columns\": [\"x\"], \"data\": [[\"http://a\"]], \"count\": 1}"}]}]}));
        let Turn::ToolUse { name, input } = standin.next_turn(&request(&messages)) else {
            panic!("no answer submitted");
        };
        assert_eq!(name, "mcp__okn__submit_csv");
        assert_eq!(input, json!({"csv": "x\nhttp://a\n"}));
    }

    #[test]
    fn with_no_deferred_tool_announced_there_is_no_sparql_tool() {
        let standin = standin();
        let summary = standin.corpus.records[0].summary.clone();
        let request = json!({"tools": [{"name": "ToolSearch", "input_schema": {"properties": {"query": {}}}}],
            "messages": [{"role": "user", "content": summary}]});
        assert_eq!(
            standin.next_turn(&request),
            Turn::Text("There is no SPARQL tool among my tools.".into())
        );
    }

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
