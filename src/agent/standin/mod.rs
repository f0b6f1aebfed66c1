//! A stand-in model, so the real agent CLIs can run whole episodes with no
//! model: this is the only place a model is imitated (README.md,
//! "Episodes: run, report, rescore, freeze"; `tests/it/claude.rs` runs the
//! real claude CLI against it, `tests/it/standin.rs` a client of each wire
//! format; docs/HOSTS.md says how each host is pointed at it).
//!
//! One server speaks every wire format a host needs, each at its own path
//! (issue 25, "The hosts"):
//!
//! | path | API | module |
//! |---|---|---|
//! | `POST /v1/messages` | Anthropic Messages (claude) | [`anthropic`] |
//! | `POST /v1/chat/completions` | OpenAI Chat Completions (the `openai` host) | [`chat`] |
//! | `POST /v1/responses` | OpenAI Responses (codex) | [`responses`] |
//! | `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent` | Gemini (gemini) | [`gemini`] |
//!
//! Each reads its request into a [`play::Conversation`]; [`play::Player`]
//! chooses the turn the same way for all (the answer key through the SPARQL
//! tool, then `submit_csv` with the strategy's answer, then the end), and
//! the format writes it back, streamed or whole as the request asks, with
//! deterministic usage ([`play::Tokens`]). Requests it does not recognize
//! get a short text reply.
//!
//! A CLI that defers MCP tools (claude 2.1.332 does: their names are listed
//! in the system prompt, their schemas withheld until `ToolSearch` loads
//! them) is played the way a model plays it (issue 25, "Real servers"):
//! the stand-in first calls the discovery tool with
//! `select:mcp__okn__query,...` (every deferred MCP tool announced), reads
//! the schemas it returns (`<function>{..}</function>` lines, or the
//! tools the next request declares), and only then runs the query.

pub mod anthropic;
pub mod chat;
pub mod gemini;
pub mod play;
pub mod responses;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, post};
use serde_json::{Value, json};

use self::play::{Conversation, Player, Tokens, Turn};
use crate::agent::strategy::Strategy;
use crate::corpus::Corpus;
use crate::error::Result;

/// The stand-in's state: the player (none for a census, which answers
/// every request by ending the session), and how requests are logged and
/// answered.
struct Standin {
    player: Option<Player>,
    log_dir: Option<PathBuf>,
    /// Every request `(path, body)` in the order received, kept for a
    /// census ([`start_census`]).
    kept: Option<Mutex<Vec<Received>>>,
    /// Answer every request as the real API answers an expired or invalid
    /// key (HTTP 401, or Gemini's 400 `API_KEY_INVALID`).
    reject_key: bool,
    requests: Mutex<u64>,
}

/// What a wire format needs to write one reply.
pub struct Reply<'a> {
    /// The model named by the request (or its path), `standin` when none.
    pub model: String,
    /// Whether the reply is streamed as server-sent events.
    pub stream: bool,
    /// Whether a streamed reply is a JSON array of chunks instead (Gemini's
    /// `:streamGenerateContent` without `alt=sse`).
    pub array: bool,
    /// The request's number since the stand-in started, from 1 (ids in
    /// the reply are made of it).
    pub id: u64,
    /// The usage the reply states.
    pub tokens: Tokens,
    /// The request body.
    pub request: &'a Value,
}

/// One wire format: how its requests are read and its replies written.
pub trait Wire {
    /// The conversation a request body holds.
    fn read(request: &Value) -> Conversation;
    /// The API's answer to an invalid or expired key.
    fn rejected() -> Response;
    /// The reply holding `turn`.
    fn reply(reply: &Reply, turn: &Turn) -> Response;
    /// The JSON Schema a request asks its reply's text to be an instance
    /// of, when it asks for JSON (`{}` when it names no schema); `None`
    /// when it asks for text. Each format says so in its own field
    /// (issue 25, item 1).
    fn json_schema(request: &Value) -> Option<Value>;
}

/// What a request for JSON names, in the fields every OpenAI-shaped and
/// Anthropic format uses: `{"type": "json_schema", "schema": ..}` (or the
/// schema under `json_schema.schema`, as Chat Completions nests it) is
/// that schema, `{"type": "json_object"}` any object; anything else asks
/// for text.
pub(crate) fn json_format(format: &Value) -> Option<Value> {
    match format["type"].as_str()? {
        "json_schema" => Some(
            [&format["schema"], &format["json_schema"]["schema"]]
                .into_iter()
                .find(|s| s.is_object())
                .cloned()
                .unwrap_or_else(|| json!({})),
        ),
        "json_object" => Some(json!({})),
        _ => None,
    }
}

/// One server-sent event: an `event:` line when `kind` is given, then the
/// `data:` line.
pub(crate) fn event(out: &mut String, kind: Option<&str>, data: &Value) {
    if let Some(kind) = kind {
        out.push_str("event: ");
        out.push_str(kind);
        out.push('\n');
    }
    out.push_str("data: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
}

/// A body of server-sent events.
pub(crate) fn sse_response(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
}

/// `text` cut in two at a character boundary near its middle, as a stream
/// sends a string in pieces.
pub(crate) fn halves(text: &str) -> (String, String) {
    let mut cut = text.len() / 2;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    (text[..cut].to_string(), text[cut..].to_string())
}

/// How a route was asked: the model and streaming when the path says them
/// (Gemini), else read from the body.
#[derive(Default)]
struct Route {
    /// The path asked (kept with a census's requests).
    path: String,
    model: Option<String>,
    stream: Option<bool>,
    array: bool,
}

impl Standin {
    /// The turn that answers `request`: the player's (a census's
    /// [`CENSUS_REPLY`]), a text reply being JSON an instance of the schema
    /// when the request asks for JSON ([`play::json_instance`]; issue 25,
    /// item 1). A request for JSON that declares no tool is the host's own
    /// (gemini's model router, its next-speaker and loop checks), not the
    /// episode's conversation: the player is not asked, so it does not
    /// count it as one.
    fn turn<W: Wire>(&self, request: &Value) -> Turn {
        let conversation = W::read(request);
        let Some(schema) = W::json_schema(request) else {
            return match &self.player {
                Some(player) => player.next_turn(&conversation),
                None => Turn::Text(CENSUS_REPLY.into()),
            };
        };
        let turn = match &self.player {
            Some(player) if !conversation.tools.is_empty() => player.next_turn(&conversation),
            _ => Turn::Text(String::new()),
        };
        match turn {
            Turn::Text(_) => Turn::Text(play::json_instance(&schema).to_string()),
            other => other,
        }
    }

    /// Answers one request in the wire format `W`.
    async fn answer<W: Wire>(&self, body: &[u8], route: Route) -> Response {
        if let Some(kept) = &self.kept {
            kept.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Received {
                    path: route.path.clone(),
                    body: body.to_vec(),
                });
        }
        let request: Value = match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => return (StatusCode::BAD_REQUEST, format!("not JSON: {e}")).into_response(),
        };
        let id = {
            let mut n = self.requests.lock().unwrap_or_else(|e| e.into_inner());
            *n += 1;
            *n
        };
        if let Some(dir) = &self.log_dir {
            // Whole or absent, as every file the tool writes: a test reading
            // the log while the CLI still talks never sees half a request.
            let _ = crate::fsutil::write_atomic(&dir.join(format!("request-{id:04}.json")), body);
        }
        if self.reject_key {
            return W::rejected();
        }
        let turn = self.turn::<W>(&request);
        if turn == Turn::Hang {
            std::future::pending::<()>().await;
        }
        let reply = Reply {
            model: route
                .model
                .unwrap_or_else(|| request["model"].as_str().unwrap_or("standin").to_string()),
            stream: route.stream.unwrap_or(request["stream"] == json!(true)),
            array: route.array,
            id,
            tokens: Tokens::of(body.len(), &turn),
            request: &request,
        };
        W::reply(&reply, &turn)
    }
}

async fn messages(State(state): State<Arc<Standin>>, body: Bytes) -> Response {
    state
        .answer::<anthropic::Messages>(&body, Route::at("/v1/messages"))
        .await
}

async fn chat_completions(State(state): State<Arc<Standin>>, body: Bytes) -> Response {
    state
        .answer::<chat::ChatCompletions>(&body, Route::at("/v1/chat/completions"))
        .await
}

async fn responses(State(state): State<Arc<Standin>>, body: Bytes) -> Response {
    state
        .answer::<responses::Responses>(&body, Route::at("/v1/responses"))
        .await
}

/// `models/{model}:{method}`: the method names what is asked.
async fn gemini_models(
    State(state): State<Arc<Standin>>,
    Path(call): Path<String>,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Response {
    let (model, method) = call.rsplit_once(':').unwrap_or((&call, ""));
    let sse = query
        .unwrap_or_default()
        .split('&')
        .any(|pair| pair == "alt=sse");
    let route = |stream: bool| Route {
        path: format!("/v1beta/models/{call}"),
        model: Some(model.to_string()),
        stream: Some(stream && sse),
        array: stream && !sse,
    };
    match method {
        "generateContent" => {
            state
                .answer::<gemini::GenerateContent>(&body, route(false))
                .await
        }
        "streamGenerateContent" => {
            state
                .answer::<gemini::GenerateContent>(&body, route(true))
                .await
        }
        "countTokens" => {
            let tokens = (body.len() as u64 / 4).max(1);
            axum::Json(json!({"totalTokens": tokens})).into_response()
        }
        _ => (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"error": {"code": 404, "status": "NOT_FOUND",
                "message": format!("the stand-in does not serve models/{call}")}})),
        )
            .into_response(),
    }
}

async fn anything_else() -> Response {
    axum::Json(json!({})).into_response()
}

/// Serves the stand-in on `bind` until interrupted, every wire format at
/// its own path (the module's table). Requests are written to `log_dir` as
/// `request-NNNN.json` when given (the tool list a host sends shows which
/// tools an agent would have).
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
        player: Some(Player::new(corpus, strategy)),
        log_dir,
        kept: None,
        reject_key,
        requests: Mutex::new(0),
    });
    crate::http::serve(
        router(state),
        bind,
        "standin-model",
        "the Messages, Chat Completions, Responses and Gemini APIs",
        "",
    )
    .await
}

/// Every wire format at its own path (the module's table).
fn router(state: Arc<Standin>) -> Router {
    Router::new()
        .route("/v1/messages", post(messages))
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/responses", post(responses))
        .route("/v1beta/models/{*call}", post(gemini_models))
        .route("/v1/models/{*call}", post(gemini_models))
        .fallback(any(anything_else))
        .with_state(state)
}

impl Route {
    /// A route whose model and streaming the body says.
    fn at(path: &str) -> Route {
        Route {
            path: path.into(),
            ..Route::default()
        }
    }
}

/// What a census's stand-in answers every request with: a text that ends
/// the model's turn, and so a non-interactive session.
pub const CENSUS_REPLY: &str =
    "okn-benchmark tool census: no question is asked; this session ends here.";

/// One request a census's stand-in received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The path asked (`/v1/messages`, `/v1/responses`,
    /// `/v1/chat/completions`, `/v1beta/models/MODEL:METHOD`).
    pub path: String,
    /// The request body as sent.
    pub body: Vec<u8>,
}

/// A stand-in serving every wire format on 127.0.0.1 (a port the system
/// picks) in a thread of its own, answering every request with
/// [`CENSUS_REPLY`] and keeping each (the tool census, `agent::census`;
/// issue 25, "Isolation verified, not assumed"). Stopped, with what it
/// received, by [`CensusStandin::stop`].
pub struct CensusStandin {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    state: Arc<Standin>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Starts a [`CensusStandin`].
///
/// Errors: no runtime or no port on 127.0.0.1.
pub fn start_census() -> Result<CensusStandin> {
    let state = Arc::new(Standin {
        player: None,
        log_dir: None,
        kept: Some(Mutex::new(Vec::new())),
        reject_key: false,
        requests: Mutex::new(0),
    });
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| {
            crate::error::Error::Other(format!("the census cannot listen on 127.0.0.1: {e}"))
        })?;
    let address = listener
        .local_addr()
        .map_err(|e| crate::error::Error::Other(e.to_string()))?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let app = router(state.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| crate::error::Error::Other(format!("the census cannot start: {e}")))?;
    let thread = std::thread::spawn(move || {
        runtime.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                return;
            };
            // Not a graceful shutdown: a connection the host left open
            // must not hold the census up; the runtime's end drops it.
            tokio::select! {
                _ = axum::serve(listener, app) => {}
                _ = stopped => {}
            }
        });
    });
    Ok(CensusStandin {
        url: format!("http://{address}"),
        state,
        stop: Some(stop),
        thread: Some(thread),
    })
}

impl CensusStandin {
    /// Stops serving; every request received, in order.
    pub fn stop(mut self) -> Vec<Received> {
        self.shut();
        let kept = self
            .state
            .kept
            .as_ref()
            .map(|k| std::mem::take(&mut *k.lock().unwrap_or_else(|e| e.into_inner())));
        kept.unwrap_or_default()
    }

    fn shut(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for CensusStandin {
    fn drop(&mut self) {
        self.shut();
    }
}

#[cfg(test)]
mod tests {
    use super::anthropic::Messages;
    use super::chat::ChatCompletions;
    use super::gemini::GenerateContent;
    use super::responses::Responses;
    use super::*;

    fn player() -> Player {
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
        Player::new(corpus, Strategy::Oracle)
    }

    /// The body of a reply, as text.
    fn body(response: Response) -> String {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let bytes = runtime
            .block_on(axum::body::to_bytes(response.into_body(), usize::MAX))
            .unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    /// The JSON of every `data:` line of a body of server-sent events.
    fn data(body: &str) -> Vec<Value> {
        body.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    fn reply(request: &Value, stream: bool, tokens: Tokens) -> Reply<'_> {
        Reply {
            model: "standin-1".into(),
            stream,
            array: false,
            id: 7,
            tokens,
            request,
        }
    }

    const TOKENS: Tokens = Tokens {
        input: 30,
        cache_read: 10,
        output: 5,
    };

    fn query_call() -> Turn {
        Turn::ToolUse {
            name: "mcp__okn__query".into(),
            input: json!({"query": "SELECT * { ?s ?p ?o }"}),
        }
    }

    /// Issue 25: claude 2.1.332 offers MCP tools deferred (named in the
    /// system prompt, loaded by ToolSearch), and the stand-in took
    /// ToolSearch's `query` for the SPARQL tool's.
    #[test]
    fn deferred_mcp_tools_are_loaded_through_tool_search_then_queried() {
        let player = player();
        let record = player.corpus().records[0].clone();
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
        let next = |messages: &[Value]| player.next_turn(&Messages::read(&request(messages)));
        let Turn::ToolUse { name, input } = next(&messages) else {
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
        let Turn::ToolUse { name, input } = next(&messages) else {
            panic!("no query after the schemas came");
        };
        assert_eq!(name, "mcp__okn__query");
        assert_eq!(input["query_string"], json!(record.query));
        assert_eq!(input["graph"], "federation");
        // mcp-proto-okn's reply shape is read, and the rows submitted.
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "mcp__okn__query", "input": input}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content":
            [{"type": "text", "text": "{\"columns\": [\"x\"], \"data\": [[\"http://a\"]], \"count\": 1}"}]}]}));
        let Turn::ToolUse { name, input } = next(&messages) else {
            panic!("no answer submitted");
        };
        assert_eq!(name, "mcp__okn__submit_csv");
        assert_eq!(input, json!({"csv": "x\nhttp://a\n"}));
    }

    #[test]
    fn with_no_deferred_tool_announced_there_is_no_sparql_tool() {
        let player = player();
        let summary = player.corpus().records[0].summary.clone();
        let request = json!({"tools": [{"name": "ToolSearch", "input_schema": {"properties": {"query": {}}}}],
            "messages": [{"role": "user", "content": summary}]});
        assert_eq!(
            player.next_turn(&Messages::read(&request)),
            Turn::Text("There is no SPARQL tool among my tools.".into())
        );
    }

    #[test]
    fn a_messages_tool_use_streams_its_input_in_pieces_that_join_to_json() {
        let request = json!({});
        let text = body(Messages::reply(
            &reply(&request, true, TOKENS),
            &query_call(),
        ));
        let kinds: Vec<&str> = text
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
        let events = data(&text);
        let pieces: String = events
            .iter()
            .filter_map(|v| v["delta"]["partial_json"].as_str())
            .collect();
        assert_eq!(
            serde_json::from_str::<Value>(&pieces).unwrap(),
            json!({"query": "SELECT * { ?s ?p ?o }"})
        );
        assert_eq!(events[5]["delta"]["stop_reason"], "tool_use");
        assert_eq!(events[0]["message"]["usage"]["input_tokens"], 30);
        assert_eq!(events[0]["message"]["usage"]["cache_read_input_tokens"], 10);
        assert_eq!(events[5]["usage"]["output_tokens"], 5);
    }

    /// Chat Completions: tool calls matched to `tool` messages by id, the
    /// MCP content list a host may pass through read as its text.
    #[test]
    fn chat_completions_are_read_and_played_to_submit_csv() {
        let player = player();
        let record = player.corpus().records[0].clone();
        let tools = json!([
            {"type": "function", "function": {"name": "query", "parameters": {"properties": {"query": {"type": "string"}}}}},
            {"type": "function", "function": {"name": "submit_csv", "parameters": {"properties": {"csv": {"type": "string"}}}}}]);
        let mut messages = vec![
            json!({"role": "system", "content": "You answer questions."}),
            json!({"role": "user", "content": [{"type": "text", "text": crate::runs::prompt::prompt(&record, true)}]}),
        ];
        let request = |m: &[Value]| json!({"model": "m", "messages": m, "tools": tools});
        let Turn::ToolUse { name, input } =
            player.next_turn(&ChatCompletions::read(&request(&messages)))
        else {
            panic!("no query first");
        };
        assert_eq!(
            (name.as_str(), &input["query"]),
            ("query", &json!(record.query))
        );
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "query", "arguments": input.to_string()}}]}));
        messages.push(json!({"role": "tool", "tool_call_id": "c1",
            "content": "[{\"type\":\"text\",\"text\":\"{\\\"columns\\\": [\\\"n\\\"], \\\"rows\\\": [[3]]}\"}]"}));
        let turn = player.next_turn(&ChatCompletions::read(&request(&messages)));
        assert_eq!(
            turn,
            Turn::ToolUse {
                name: "submit_csv".into(),
                input: json!({"csv": "n\n3\n"})
            }
        );
    }

    #[test]
    fn chat_completions_stream_tool_calls_in_chunks_and_usage_only_when_asked() {
        let asked = json!({"stream_options": {"include_usage": true}});
        let chunks = data(&body(ChatCompletions::reply(
            &reply(&asked, true, TOKENS),
            &query_call(),
        )));
        let arguments: String = chunks
            .iter()
            .filter_map(|c| {
                c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str()
            })
            .collect();
        assert_eq!(arguments, r#"{"query":"SELECT * { ?s ?p ?o }"}"#);
        assert_eq!(
            chunks[0]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"],
            "mcp__okn__query"
        );
        assert_eq!(chunks[3]["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(chunks[4]["choices"], json!([]));
        assert_eq!(
            chunks[4]["usage"],
            json!({"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45,
                "prompt_tokens_details": {"cached_tokens": 10}})
        );
        let text = body(ChatCompletions::reply(
            &reply(&json!({}), true, TOKENS),
            &query_call(),
        ));
        assert!(text.ends_with("data: [DONE]\n\n"));
        assert!(data(&text).iter().all(|c| c.get("usage").is_none()));
        let whole: Value = serde_json::from_str(&body(ChatCompletions::reply(
            &reply(&json!({}), false, TOKENS),
            &Turn::Text("Submitted.".into()),
        )))
        .unwrap();
        assert_eq!(whole["choices"][0]["message"]["content"], "Submitted.");
        assert_eq!(whole["choices"][0]["finish_reason"], "stop");
        assert_eq!(whole["usage"]["total_tokens"], 45);
    }

    /// Responses: codex's input items (a developer message, the user's,
    /// `function_call` and `function_call_output`) read and played.
    #[test]
    fn responses_are_read_and_played_to_submit_csv() {
        let player = player();
        let record = player.corpus().records[0].clone();
        let mut input = vec![
            json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions>"}]}),
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": crate::runs::prompt::prompt(&record, true)}]}),
        ];
        let request = |input: &[Value]| {
            json!({"model": "m", "instructions": "You are Codex.", "input": input,
            "tools": [{"type": "function", "name": "mcp__okn__query", "parameters": {"properties": {"query": {}}}},
                {"type": "function", "name": "mcp__okn__submit_csv", "parameters": {"properties": {"csv": {}}}},
                {"type": "web_search"}]})
        };
        let Turn::ToolUse {
            name,
            input: arguments,
        } = player.next_turn(&Responses::read(&request(&input)))
        else {
            panic!("no query first");
        };
        assert_eq!(name, "mcp__okn__query");
        input.push(json!({"type": "function_call", "call_id": "c1", "name": name, "arguments": arguments.to_string()}));
        input.push(
            json!({"type": "function_call_output", "call_id": "c1", "output": "x\nhttp://a\n"}),
        );
        assert_eq!(
            player.next_turn(&Responses::read(&request(&input))),
            Turn::ToolUse {
                name: "mcp__okn__submit_csv".into(),
                input: json!({"csv": "x\nhttp://a\n"})
            }
        );
    }

    #[test]
    fn a_responses_stream_ends_in_response_completed_with_usage() {
        let request = json!({});
        let text = body(Responses::reply(
            &reply(&request, true, TOKENS),
            &query_call(),
        ));
        let events = data(&text);
        let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "response.created",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed"
            ]
        );
        let numbers: Vec<u64> = events
            .iter()
            .map(|e| e["sequence_number"].as_u64().unwrap())
            .collect();
        assert_eq!(numbers, (0..7).collect::<Vec<u64>>());
        let item = &events[5]["item"];
        assert_eq!(item["type"], "function_call");
        assert_eq!(item["name"], "mcp__okn__query");
        assert_eq!(item["arguments"], r#"{"query":"SELECT * { ?s ?p ?o }"}"#);
        let done = &events[6]["response"];
        assert_eq!(done["status"], "completed");
        assert_eq!(done["output"][0], *item);
        assert_eq!(
            done["usage"],
            json!({"input_tokens": 40, "input_tokens_details": {"cached_tokens": 10},
                "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 45})
        );
        let text = body(Responses::reply(
            &reply(&request, true, TOKENS),
            &Turn::Text("Submitted.".into()),
        ));
        let events = data(&text);
        assert_eq!(events[3]["type"], "response.output_text.delta");
        assert_eq!(events[3]["delta"], "Submitted.");
        assert_eq!(events[6]["item"]["content"][0]["text"], "Submitted.");
        let whole: Value = serde_json::from_str(&body(Responses::reply(
            &reply(&request, false, TOKENS),
            &query_call(),
        )))
        .unwrap();
        assert_eq!(whole["output"][0]["type"], "function_call");
        assert_eq!(whole["usage"]["input_tokens"], 40);
    }

    /// Gemini: `functionDeclarations` (with `parametersJsonSchema`, as the
    /// Gemini CLI declares MCP tools) and `functionResponse` read and played.
    /// gemini 0.61 names MCP tools `mcp_okn_TOOL` and offers its built-in
    /// `google_web_search` first, whose `query` the stand-in took for the
    /// SPARQL tool's (issue 25: a built-in is never the SPARQL tool).
    #[test]
    fn gemini_contents_are_read_and_played_to_submit_csv() {
        let player = player();
        let record = player.corpus().records[0].clone();
        let mut contents = vec![
            json!({"role": "user", "parts": [{"text": crate::runs::prompt::prompt(&record, true)}]}),
        ];
        let request = |contents: &[Value]| {
            json!({"contents": contents,
            "systemInstruction": {"role": "user", "parts": [{"text": "You are an agent."}]},
            "tools": [{"functionDeclarations": [
                {"name": "google_web_search", "parametersJsonSchema": {"type": "object", "properties": {"query": {"type": "string"}}}},
                {"name": "mcp_okn_query", "parametersJsonSchema": {"type": "object", "properties": {"query": {"type": "string"}}}},
                {"name": "mcp_okn_submit_csv", "parametersJsonSchema": {"type": "object", "properties": {"csv": {"type": "string"}}}}]}]})
        };
        let Turn::ToolUse { name, input } =
            player.next_turn(&GenerateContent::read(&request(&contents)))
        else {
            panic!("no query first");
        };
        assert_eq!(
            (name.as_str(), &input["query"]),
            ("mcp_okn_query", &json!(record.query))
        );
        contents.push(
            json!({"role": "model", "parts": [{"functionCall": {"name": "mcp_okn_query", "args": input}}]}),
        );
        contents.push(json!({"role": "user", "parts": [{"functionResponse": {"name": "mcp_okn_query",
            "response": {"content": [{"type": "text", "text": "{\"columns\": [\"n\"], \"rows\": [[3]]}"}]}}}]}));
        assert_eq!(
            player.next_turn(&GenerateContent::read(&request(&contents))),
            Turn::ToolUse {
                name: "mcp_okn_submit_csv".into(),
                input: json!({"csv": "n\n3\n"})
            }
        );
        // An error response is a failed query, with no answer.
        contents.pop();
        contents.push(
            json!({"role": "user", "parts": [{"functionResponse": {"name": "mcp_okn_query",
            "response": {"error": "the endpoint is down"}}}]}),
        );
        assert_eq!(
            player.next_turn(&GenerateContent::read(&request(&contents))),
            Turn::Text("The query failed, so I have no answer: the endpoint is down".into())
        );
    }

    #[test]
    fn a_gemini_stream_ends_in_a_chunk_with_finish_reason_and_usage_metadata() {
        let request = json!({});
        let chunks = data(&body(GenerateContent::reply(
            &reply(&request, true, TOKENS),
            &Turn::Text("Submitted.".into()),
        )));
        assert_eq!(chunks.len(), 2);
        let text: String = chunks
            .iter()
            .map(|c| {
                c["candidates"][0]["content"]["parts"][0]["text"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(text, "Submitted.");
        assert!(chunks[0]["candidates"][0].get("finishReason").is_none());
        assert_eq!(chunks[1]["candidates"][0]["finishReason"], "STOP");
        assert_eq!(
            chunks[1]["usageMetadata"],
            json!({"promptTokenCount": 40, "cachedContentTokenCount": 10,
                "candidatesTokenCount": 5, "totalTokenCount": 45})
        );
        assert_eq!(chunks[1]["modelVersion"], "standin-1");
        let whole: Value = serde_json::from_str(&body(GenerateContent::reply(
            &reply(&request, false, TOKENS),
            &query_call(),
        )))
        .unwrap();
        assert_eq!(
            whole["candidates"][0]["content"]["parts"][0]["functionCall"],
            json!({"name": "mcp__okn__query", "args": {"query": "SELECT * { ?s ?p ?o }"}})
        );
        let whole: Value = serde_json::from_str(&body(GenerateContent::reply(
            &reply(&request, false, TOKENS),
            &Turn::Text("Submitted.".into()),
        )))
        .unwrap();
        assert_eq!(
            whole["candidates"][0]["content"]["parts"],
            json!([{"text": "Submitted."}])
        );
    }
}
