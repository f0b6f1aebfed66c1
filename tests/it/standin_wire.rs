//! `standin-model` through each wire format it speaks (issue 25, "The
//! hosts"): a real HTTP client plays a host's tool loop against the running
//! command, for a demo record, until `submit_csv`. What the stand-in says
//! must be what the host would act on: the SPARQL tool called with the
//! record's answer key, then `submit_csv` with the rows the "tool" gave
//! back, then the end, and usage that adds up to the deterministic counts
//! (a quarter of each request's bytes in, a quarter of that cached).

use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::{KillOnDrop, repo};

const BIN: &str = env!("CARGO_BIN_EXE_okn-benchmark");

/// What the fake SPARQL tool answers, and the CSV `oracle` must submit.
const ROWS: &str = r#"{"columns": ["county", "areaKm2"], "rows": [[{"type": "uri", "value": "http://ex.org/c/1"}, {"type": "literal", "value": "14290.37"}], [{"type": "uri", "value": "http://ex.org/c/2"}, {"type": "literal", "value": "9860.21"}]]}"#;
const CSV: &str = "county,areaKm2\nhttp://ex.org/c/1,14290.37\nhttp://ex.org/c/2,9860.21\n";

/// Starts `standin-model` (oracle) on a free port; returns it and its URL.
fn standin() -> (KillOnDrop, String) {
    crate::support::standin_single("oracle", None, &[])
}

/// The demo record the loops play: its prompt and its answer key.
fn record() -> (String, String) {
    let corpus =
        okn_benchmark::corpus::Corpus::load(&repo().join("demo/benchmarks-single")).unwrap();
    let record = corpus.records[0].clone();
    (
        okn_benchmark::runs::prompt::prompt(&record, true),
        record.query,
    )
}

/// POSTs `body`; returns the reply's text and the bytes sent.
fn post(url: &str, body: &Value) -> (String, usize) {
    let bytes = serde_json::to_vec(body).unwrap();
    let mut reply = ureq::post(url)
        .header("content-type", "application/json")
        .send(&bytes[..])
        .unwrap();
    (reply.body_mut().read_to_string().unwrap(), bytes.len())
}

/// The JSON of every `data:` line of a stream ( `[DONE]` left out).
fn events(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

/// The input tokens the stand-in states for a request of `bytes` bytes:
/// (all, cached).
fn input_tokens(bytes: usize) -> (u64, u64) {
    let all = (bytes as u64 / 4).max(1);
    (all, all / 4)
}

/// One tool call the stand-in asked for: its name and arguments.
type Call = (String, Value);

/// Plays the loop to its end: `step` sends the conversation so far and
/// returns the call asked for (none: the model ended its turn) and the
/// request's bytes with the usage stated (prompt, cached, output);
/// `answer` appends the call and its result. Returns the calls in order.
fn play(
    mut step: impl FnMut() -> (Option<Call>, usize, [u64; 3]),
    mut answer: impl FnMut(&Call, &str),
) -> Vec<Call> {
    let mut calls = Vec::new();
    for _ in 0..6 {
        let (call, bytes, usage) = step();
        let (all, cached) = input_tokens(bytes);
        assert_eq!([usage[0], usage[1]], [all, cached], "usage of {call:?}");
        if let Some((_, arguments)) = &call {
            assert_eq!(
                usage[2],
                arguments.to_string().chars().count() as u64 / 4 + 1
            );
        }
        let Some(call) = call else {
            return calls;
        };
        let result = if call.0.ends_with("submit_csv") {
            "Answer saved."
        } else {
            ROWS
        };
        answer(&call, result);
        calls.push(call);
    }
    panic!("the stand-in never ended its turn: {calls:?}");
}

/// The calls every loop must see: the answer key, then the rows as CSV.
fn assert_played(calls: &[Call], query_tool: &str, submit_tool: &str, key: &str) {
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].0, query_tool);
    assert_eq!(calls[0].1["query"], key);
    assert_eq!(calls[1], (submit_tool.to_string(), json!({"csv": CSV})));
}

/// Issue 25, "The hosts": the OpenAI Chat Completions format (the `openai`
/// host's), streamed with `include_usage` and whole, to `submit_csv`.
#[test]
fn standin_model_plays_a_chat_completions_loop_to_submit_csv() {
    let (_server, url) = standin();
    let (prompt, key) = record();
    let tools = json!([
        {"type": "function", "function": {"name": "query", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "submit_csv", "parameters": {"type": "object", "properties": {"csv": {"type": "string"}}}}}]);
    for stream in [true, false] {
        let messages = std::cell::RefCell::new(vec![json!({"role": "user", "content": prompt})]);
        let calls = play(
            || {
                let request = json!({"model": "gpt-standin-1", "messages": *messages.borrow(),
                    "tools": tools, "stream": stream, "stream_options": {"include_usage": true}});
                let (text, bytes) = post(&format!("{url}/v1/chat/completions"), &request);
                let (message, usage) = if stream {
                    let chunks = events(&text);
                    let mut arguments = String::new();
                    let mut name = None;
                    for c in &chunks {
                        let call = &c["choices"][0]["delta"]["tool_calls"][0]["function"];
                        name = name.or(call["name"].as_str().map(str::to_string));
                        arguments.push_str(call["arguments"].as_str().unwrap_or(""));
                    }
                    let usage = chunks.last().unwrap()["usage"].clone();
                    (
                        name.map(|n| (n, serde_json::from_str(&arguments).unwrap())),
                        usage,
                    )
                } else {
                    let whole: Value = serde_json::from_str(&text).unwrap();
                    assert_eq!(whole["model"], "gpt-standin-1");
                    let call = &whole["choices"][0]["message"]["tool_calls"][0]["function"];
                    let message = call["name"].as_str().map(|n| {
                        (
                            n.to_string(),
                            serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap(),
                        )
                    });
                    (message, whole["usage"].clone())
                };
                let stated = [
                    usage["prompt_tokens"].as_u64().unwrap(),
                    usage["prompt_tokens_details"]["cached_tokens"]
                        .as_u64()
                        .unwrap(),
                    usage["completion_tokens"].as_u64().unwrap(),
                ];
                (message, bytes, stated)
            },
            |(name, arguments), result| {
                let id = format!("call_{}", messages.borrow().len());
                let mut m = messages.borrow_mut();
                m.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
                    "function": {"name": name, "arguments": arguments.to_string()}}]}));
                m.push(json!({"role": "tool", "tool_call_id": id, "content": result}));
            },
        );
        assert_played(&calls, "query", "submit_csv", &key);
    }
}

/// Issue 25, "The hosts": the OpenAI Responses format (codex's), streamed,
/// with the server's tools in a namespace as codex 0.171 sends them.
#[test]
fn standin_model_plays_a_responses_loop_to_submit_csv() {
    let (_server, url) = standin();
    let (prompt, key) = record();
    let tools = json!([{"type": "function", "name": "list_mcp_resources", "parameters": {"type": "object", "properties": {}}},
        {"type": "namespace", "name": "mcp__okn", "tools": [
            {"type": "function", "name": "query", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}},
            {"type": "function", "name": "submit_csv", "parameters": {"type": "object", "properties": {"csv": {"type": "string"}}}}]}]);
    let input = std::cell::RefCell::new(vec![
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}),
    ]);
    let calls = play(
        || {
            let request = json!({"model": "gpt-standin-1", "instructions": "You are Codex.",
                "input": *input.borrow(), "tools": tools, "stream": true});
            let (text, bytes) = post(&format!("{url}/v1/responses"), &request);
            let stream = events(&text);
            assert_eq!(stream[0]["type"], "response.created");
            let done = stream.last().unwrap();
            assert_eq!(done["type"], "response.completed");
            let item = &done["response"]["output"][0];
            let call = (item["type"] == "function_call").then(|| {
                let full = format!(
                    "{}__{}",
                    item["namespace"].as_str().unwrap(),
                    item["name"].as_str().unwrap()
                );
                (
                    full,
                    serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap(),
                )
            });
            let usage = &done["response"]["usage"];
            let stated = [
                usage["input_tokens"].as_u64().unwrap(),
                usage["input_tokens_details"]["cached_tokens"]
                    .as_u64()
                    .unwrap(),
                usage["output_tokens"].as_u64().unwrap(),
            ];
            (call, bytes, stated)
        },
        |(name, arguments), result| {
            let id = format!("call_{}", input.borrow().len());
            let (namespace, name) = name.rsplit_once("__").unwrap();
            let mut i = input.borrow_mut();
            i.push(
                json!({"type": "function_call", "call_id": id, "namespace": namespace, "name": name,
                "arguments": arguments.to_string()}),
            );
            // As codex 0.171 sends an MCP result: its note, then the reply.
            i.push(
                json!({"type": "function_call_output", "call_id": id, "output": [
                {"type": "input_text", "text": "Wall time: 0.01 seconds\nOutput:"},
                {"type": "input_text", "text": result}]}),
            );
        },
    );
    assert_played(&calls, "mcp__okn__query", "mcp__okn__submit_csv", &key);
}

/// Issue 25, "The hosts": Gemini's format (the Gemini CLI's), through
/// `:streamGenerateContent?alt=sse` and `:generateContent`, with gemini
/// 0.61's `google_web_search` offered beside the MCP tools.
#[test]
fn standin_model_plays_a_gemini_loop_to_submit_csv() {
    let (_server, url) = standin();
    let (prompt, key) = record();
    let tools = json!([{"functionDeclarations": [
        {"name": "google_web_search", "parametersJsonSchema": {"type": "object", "properties": {"query": {"type": "string"}}}},
        {"name": "mcp_okn_query", "parametersJsonSchema": {"type": "object", "properties": {"query": {"type": "string"}}}},
        {"name": "mcp_okn_submit_csv", "parametersJsonSchema": {"type": "object", "properties": {"csv": {"type": "string"}}}}]}]);
    for stream in [true, false] {
        let contents =
            std::cell::RefCell::new(vec![json!({"role": "user", "parts": [{"text": prompt}]})]);
        let calls = play(
            || {
                let request = json!({"contents": *contents.borrow(), "tools": tools,
                    "systemInstruction": {"parts": [{"text": "You are an agent."}]}});
                let method = if stream {
                    "streamGenerateContent?alt=sse"
                } else {
                    "generateContent"
                };
                let (text, bytes) = post(
                    &format!("{url}/v1beta/models/gemini-standin-1:{method}"),
                    &request,
                );
                let chunks = if stream {
                    events(&text)
                } else {
                    vec![serde_json::from_str(&text).unwrap()]
                };
                let last = chunks.last().unwrap();
                assert_eq!(last["candidates"][0]["finishReason"], "STOP");
                assert_eq!(last["modelVersion"], "gemini-standin-1");
                let call = chunks
                    .iter()
                    .flat_map(|c| {
                        c["candidates"][0]["content"]["parts"]
                            .as_array()
                            .cloned()
                            .unwrap_or_default()
                    })
                    .find_map(|p| {
                        let f = &p["functionCall"];
                        Some((f["name"].as_str()?.to_string(), f["args"].clone()))
                    });
                let usage = &last["usageMetadata"];
                let stated = [
                    usage["promptTokenCount"].as_u64().unwrap(),
                    usage["cachedContentTokenCount"].as_u64().unwrap(),
                    usage["candidatesTokenCount"].as_u64().unwrap(),
                ];
                (call, bytes, stated)
            },
            |(name, arguments), result| {
                let mut c = contents.borrow_mut();
                c.push(json!({"role": "model", "parts": [{"functionCall": {"name": name, "args": arguments}}]}));
                // As gemini 0.61 sends an MCP result: in its envelope.
                c.push(json!({"role": "user", "parts": [{"functionResponse": {"name": name,
                    "response": {"output": format!("<untrusted_context>\n{result}\n</untrusted_context>")}}}]}));
            },
        );
        assert_played(&calls, "mcp_okn_query", "mcp_okn_submit_csv", &key);
    }
}

/// Issue 25: the Messages API (claude's) still answers on the same port,
/// whole when `stream` is not asked for.
#[test]
fn standin_model_plays_a_messages_loop_to_submit_csv() {
    let (_server, url) = standin();
    let (prompt, key) = record();
    let tools = json!([
        {"name": "mcp__okn__query", "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}},
        {"name": "mcp__okn__submit_csv", "input_schema": {"type": "object", "properties": {"csv": {"type": "string"}}}}]);
    let messages = std::cell::RefCell::new(vec![json!({"role": "user", "content": prompt})]);
    let calls = play(
        || {
            let request = json!({"model": "claude-standin-1", "messages": *messages.borrow(), "tools": tools});
            let (text, bytes) = post(&format!("{url}/v1/messages"), &request);
            let whole: Value = serde_json::from_str(&text).unwrap();
            let block = &whole["content"][0];
            let call = (block["type"] == "tool_use").then(|| {
                (
                    block["name"].as_str().unwrap().to_string(),
                    block["input"].clone(),
                )
            });
            let usage = &whole["usage"];
            let (input, cached) = (
                usage["input_tokens"].as_u64().unwrap(),
                usage["cache_read_input_tokens"].as_u64().unwrap(),
            );
            (
                call,
                bytes,
                [
                    input + cached,
                    cached,
                    usage["output_tokens"].as_u64().unwrap(),
                ],
            )
        },
        |(name, arguments), result| {
            let id = format!("toolu_{}", messages.borrow().len());
            let mut m = messages.borrow_mut();
            m.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": arguments}]}));
            m.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": result}]}));
        },
    );
    assert_played(&calls, "mcp__okn__query", "mcp__okn__submit_csv", &key);
}

/// The text of a reply in any of the four wire formats, streamed or whole.
fn reply_text(path: &str, text: &str) -> String {
    let whole: Option<Value> = serde_json::from_str(text).ok();
    let chunks = whole.map_or_else(|| events(text), |v| vec![v]);
    chunks
        .iter()
        .map(|c| {
            let piece = match path {
                "/v1/messages" => c["content"][0]["text"]
                    .as_str()
                    .or_else(|| c["delta"]["text"].as_str()),
                "/v1/chat/completions" => c["choices"][0]["message"]["content"]
                    .as_str()
                    .or_else(|| c["choices"][0]["delta"]["content"].as_str()),
                "/v1/responses" => c["output"][0]["content"][0]["text"].as_str().or_else(|| {
                    (c["type"] == "response.output_text.delta")
                        .then(|| c["delta"].as_str())
                        .flatten()
                }),
                _ => c["candidates"][0]["content"]["parts"][0]["text"].as_str(),
            };
            piece.unwrap_or("").to_string()
        })
        .collect()
}

/// Issue 25, red team: gemini 0.61 without `--model` routes each turn by
/// a classifier request asking for JSON (`responseMimeType`
/// `application/json` with a `responseJsonSchema`), which the stand-in
/// answered with text, so gemini retried with backoff for ~87 s per
/// census and per episode. A request for JSON, in any wire format, is now
/// answered with JSON that fits its schema: each property, the first enum
/// value, a bound a minimum sets, nested objects and arrays.
#[test]
fn regression_a_request_for_json_is_answered_with_json_that_fits_its_schema() {
    let (_server, url) = standin();
    let (prompt, _) = record();
    // gemini 0.61's classifier, in Gemini's own Schema (upper-case types).
    let router = json!({"type": "OBJECT", "properties": {
            "complexity_reasoning": {"type": "STRING"},
            "complexity_score": {"type": "INTEGER"}},
        "required": ["complexity_reasoning", "complexity_score"]});
    let schema = json!({"type": "object", "properties": {
            "next_speaker": {"type": "string", "enum": ["user", "model"]},
            "confidence": {"type": ["number", "null"], "minimum": 0.5},
            "count": {"type": "integer", "exclusiveMinimum": 2},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "inner": {"properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}},
        "required": ["next_speaker", "confidence", "count", "tags", "inner"]});
    let wanted = json!({"next_speaker": "user", "confidence": 0.5, "count": 3, "tags": [""],
        "inner": {"ok": false}});
    let user = json!([{"role": "user", "parts": [{"text": prompt}]}]);
    let cases = [
        (
            "/v1beta/models/gemini-standin-1:generateContent",
            json!({"contents": user, "generationConfig": {"responseMimeType": "application/json",
                "responseJsonSchema": router}}),
            json!({"complexity_reasoning": "", "complexity_score": 0}),
        ),
        (
            "/v1beta/models/gemini-standin-1:streamGenerateContent?alt=sse",
            json!({"contents": user, "generationConfig": {"responseMimeType": "application/json",
                "responseSchema": schema}}),
            wanted.clone(),
        ),
        (
            "/v1/chat/completions",
            json!({"model": "m", "messages": [{"role": "user", "content": prompt}],
                "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}}),
            wanted.clone(),
        ),
        (
            "/v1/responses",
            json!({"model": "m", "input": prompt, "stream": true,
                "text": {"format": {"type": "json_schema", "name": "x", "schema": schema}}}),
            wanted.clone(),
        ),
        (
            "/v1/messages",
            json!({"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": prompt}],
                "output_config": {"format": {"type": "json_schema", "schema": schema}}}),
            wanted.clone(),
        ),
        (
            "/v1/chat/completions",
            json!({"model": "m", "messages": [{"role": "user", "content": prompt}],
                "response_format": {"type": "json_object"}}),
            json!({}),
        ),
    ];
    for (path, request, want) in cases {
        let (text, _) = post(&format!("{url}{path}"), &request);
        let said = reply_text(path.split(':').next().unwrap(), &text);
        let parsed: Value = serde_json::from_str(&said)
            .unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {said:?}\n{text}"));
        assert_eq!(parsed, want, "{path}");
    }
    // A request that asks for text is answered as before.
    let (text, _) = post(
        &format!("{url}/v1/chat/completions"),
        &json!({"model": "m", "messages": [{"role": "user", "content": "hello"}]}),
    );
    assert_eq!(
        reply_text("/v1/chat/completions", &text),
        "I have no question to answer here."
    );
}

/// Regression (CI, a gemini episode timed out at 120 s against a stand-in
/// that never saw a request): a port picked free was another server's by
/// the time ours bound it, and a wait that only tried to connect found the
/// other one. A server is ready only when its own process listens; one
/// that could not bind is started again on another port.
#[test]
fn regression_a_server_whose_port_another_holds_is_started_again_elsewhere() {
    let stranger = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = stranger.local_addr().unwrap().port();
    let mut asked = Vec::new();
    let (_standin, port) = crate::support::serve_on_free_port(|free| {
        let port = if asked.is_empty() { taken } else { free };
        asked.push(port);
        let mut command = Command::new(BIN);
        command
            .args(["standin-model", "--corpus", "demo/benchmarks-single"])
            .args(["--bind", &format!("127.0.0.1:{port}")])
            .current_dir(repo())
            .stderr(Stdio::null());
        command
    });
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0], taken);
    assert_eq!(port, asked[1]);
    assert_ne!(port, taken);
    // The stand-in is what answers there.
    let (text, _) = post(
        &format!("http://127.0.0.1:{port}/v1/chat/completions"),
        &json!({"model": "m", "messages": [{"role": "user", "content": "hello"}]}),
    );
    assert_eq!(
        reply_text("/v1/chat/completions", &text),
        "I have no question to answer here."
    );
}
