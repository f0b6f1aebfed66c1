//! The `openai` agent host's loop end to end (issue 25, "The hosts"): the
//! real `okn-benchmark openai-agent` speaks OpenAI Chat Completions to
//! `standin-model` (which plays the answer key, then `submit_csv`) and runs
//! every tool call through the real proxy in front of the demo KG server.
//! What is checked is what the host report and the proxy's log say: the
//! answer landed exactly, usage adds up to the stand-in's deterministic
//! counts, and each way of stopping is named.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::{KillOnDrop, okn, repo, stderr, stdout};

const BIN: &str = env!("CARGO_BIN_EXE_okn-benchmark");

/// Starts `standin-model` playing `strategy`, logging requests into `log`,
/// with `extra` flags; returns it and its API root (`http://../v1`).
fn standin(strategy: &str, log: &Path, extra: &[&str]) -> (KillOnDrop, String) {
    let (child, url) = crate::support::standin_single(strategy, Some(log), extra);
    (child, format!("{url}/v1"))
}

/// The first demo record: its id and prompt.
fn record() -> (String, String) {
    let corpus =
        okn_benchmark::corpus::Corpus::load(&repo().join("demo/benchmarks-single")).unwrap();
    let record = corpus.records[0].clone();
    let prompt = okn_benchmark::runs::prompt::prompt(&record, true);
    (record.id, prompt)
}

/// The MCP config of an episode: the proxy over the demo KG server, all
/// tools, logging into `attempt`.
fn mcp_config(attempt: &Path) -> String {
    json!({"mcpServers": {"okn": {"type": "stdio", "command": BIN, "args": [
        "proxy", "--tools", "all-tools",
        "--profile", repo().join("profiles/demo-kg.local.toml"),
        "--log-dir", attempt, "--timeout", "60"]}}})
    .to_string()
}

/// Runs `openai-agent` against `url` with the proxy logging into
/// `attempt`, the prompt on stdin, `extra` flags and `env`.
fn agent(url: &str, attempt: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let (_, prompt) = record();
    okn()
        .envs(env.iter().copied())
        .args([
            "openai-agent",
            "--model",
            "gpt-standin-1",
            "--base-url",
            url,
        ])
        .arg("--mcp-config")
        .arg(mcp_config(attempt))
        .args(extra)
        .write_stdin(prompt)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap()
}

/// The report the agent printed.
fn report(o: &Output) -> Value {
    serde_json::from_str(stdout(o).trim()).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}): {}{}",
            stdout(o),
            stderr(o)
        )
    })
}

/// Every request the stand-in logged, in order, as bytes.
fn requests(dir: &Path) -> Vec<Vec<u8>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

fn json_file(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Issue 25, "The hosts" (openai): the loop lists the proxy's tools, offers
/// them as functions, runs the stand-in's calls through the proxy and stops
/// at `submit_csv`; the submitted answer is the ground truth, and the
/// report's usage is the sum of what the stand-in stated for each request.
#[test]
fn the_openai_loop_submits_the_exact_answer_through_the_proxy_with_the_usage_stated() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests");
    let attempt = dir.path().join("attempt-1");
    let (_server, url) = standin("oracle", &log, &[]);
    let o = agent(&url, &attempt, &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let r = report(&o);
    assert_eq!(r["host"], "openai");
    assert_eq!(r["model_requested"], "gpt-standin-1");
    assert_eq!(r["model_resolved"], "gpt-standin-1");
    assert_eq!(r["stop"], "submitted", "{r}");
    assert_eq!(r["turns"], 2, "{r}");
    assert_eq!(r["tool_calls"], 2, "{r}");
    assert_eq!(r["finish_reason"], "tool_calls");
    assert!(
        r.get("error").is_none() && r.get("cost_usd").is_none(),
        "{r}"
    );
    assert!(r["wall_s"].as_f64().unwrap() >= r["api_s"].as_f64().unwrap());

    // The answer the proxy recorded is the ground truth's rows.
    let (id, _) = record();
    let truth = repo().join(format!("demo/benchmarks-single/ground-truth/{id}.csv"));
    let answer = std::fs::read_to_string(attempt.join("answer.csv")).unwrap();
    assert_eq!(
        answer.replace("\r\n", "\n"),
        std::fs::read_to_string(&truth)
            .unwrap()
            .replace("\r\n", "\n")
    );
    let scored = okn()
        .args(["score", "--answer"])
        .arg(attempt.join("answer.csv"))
        .arg("--reference")
        .arg(&truth)
        .output()
        .unwrap();
    assert_eq!(report(&scored)["exact"], true, "{}", stdout(&scored));

    // What the model was offered: the proxy's tools, by their own names.
    let sent = requests(&log);
    assert_eq!(sent.len(), 2);
    let first: Value = serde_json::from_slice(&sent[0]).unwrap();
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(offered.contains(&"submit_csv"), "{offered:?}");
    assert!(first["tools"][0]["function"]["parameters"].is_object());
    assert_eq!(
        first["messages"],
        json!([{"role": "user", "content": record().1}])
    );

    // Usage: per request, a quarter of its bytes in (a quarter of that
    // cached); out, a quarter of the call's arguments' characters plus one.
    let calls = json_file(&attempt.join("calls.json"));
    let calls = calls["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{calls:?}");
    let second: Value = serde_json::from_slice(&sent[1]).unwrap();
    let query_arguments = second["messages"][1]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap()
        .to_string();
    let submit_arguments = json!({"csv": calls[1]["arguments"]["csv"]}).to_string();
    let prompt: u64 = sent.iter().map(|b| (b.len() as u64 / 4).max(1)).sum();
    let cached: u64 = sent.iter().map(|b| (b.len() as u64 / 4).max(1) / 4).sum();
    let completion: u64 = [query_arguments, submit_arguments]
        .iter()
        .map(|a| a.chars().count() as u64 / 4 + 1)
        .sum();
    assert_eq!(
        r["usage"],
        json!({"prompt_tokens": prompt, "cached_tokens": cached, "completion_tokens": completion})
    );
}

/// Issue 25, "The hosts" (openai): `--max-turns 1` makes one request, runs
/// its tool call, and stops with `max_turns`: nothing submitted.
#[test]
fn the_openai_loop_stops_at_max_turns_without_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests");
    let attempt = dir.path().join("attempt-1");
    let (_server, url) = standin("oracle", &log, &[]);
    let o = agent(&url, &attempt, &["--max-turns", "1"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let r = report(&o);
    assert_eq!(r["stop"], "max_turns", "{r}");
    assert_eq!(
        (r["turns"].as_u64(), r["max_turns"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(r["tool_calls"], 1);
    assert_eq!(requests(&log).len(), 1);
    assert!(!attempt.join("answer.csv").exists());
    let calls = json_file(&attempt.join("calls.json"));
    assert_eq!(calls["calls"].as_array().unwrap().len(), 1, "{calls}");
}

/// Issue 25, "The hosts" (openai): prices given, a cost stated from the
/// usage; a model that answers without a tool call stops `no_tool_call`
/// (here: the stand-in, asked about no record of the corpus).
#[test]
fn the_openai_loop_states_a_cost_only_from_given_prices_and_stops_on_a_plain_answer() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests");
    let attempt = dir.path().join("attempt-1");
    let (_server, url) = standin("oracle", &log, &[]);
    let o = okn()
        .args([
            "openai-agent",
            "--model",
            "gpt-standin-1",
            "--base-url",
            &url,
        ])
        .arg("--mcp-config")
        .arg(mcp_config(&attempt))
        .args([
            "--price-input-per-mtok",
            "2",
            "--price-output-per-mtok",
            "8",
        ])
        .write_stdin("What is the tallest mountain?")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let r = report(&o);
    assert_eq!(r["stop"], "no_tool_call", "{r}");
    assert_eq!(r["result"], "I have no question to answer here.");
    assert_eq!(r["finish_reason"], "stop");
    let prompt = r["usage"]["prompt_tokens"].as_f64().unwrap();
    let completion = r["usage"]["completion_tokens"].as_f64().unwrap();
    let cost = r["cost_usd"].as_f64().unwrap();
    assert!(
        (cost - (prompt * 2.0 + completion * 8.0) / 1e6).abs() < 1e-12,
        "{r}"
    );
}

/// Issue 25, "The hosts" (openai): a key the API rejects ends the episode
/// with a typed failure (authentication, 401, the API's message), exit 1
/// and the report printed; the key is in no output and no file.
#[test]
fn a_rejected_key_is_an_authentication_failure_and_the_key_is_written_nowhere() {
    const KEY: &str = "sk-okn-test-Zq7tK4e9b1c";
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests");
    let attempt = dir.path().join("attempt-1");
    let (_server, url) = standin("oracle", &log, &["--reject-key"]);
    let o = agent(
        &url,
        &attempt,
        &["--api-key-env", "OKN_TEST_OPENAI_KEY"],
        &[("OKN_TEST_OPENAI_KEY", KEY)],
    );
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let r = report(&o);
    assert_eq!(r["stop"], "api_error", "{r}");
    assert_eq!(
        r["error"],
        json!({"kind": "authentication", "status": 401, "message": "Incorrect API key provided."})
    );
    assert_eq!(r["turns"], 1);
    assert_eq!(r["usage"], json!({}), "no usage stated is none reported");
    assert!(!stdout(&o).contains(KEY) && !stderr(&o).contains(KEY));
    let mut files = 0;
    for entry in walkdir::WalkDir::new(dir.path()) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            files += 1;
            let bytes = std::fs::read(entry.path()).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(KEY),
                "{} holds the key",
                entry.path().display()
            );
        }
    }
    assert!(files > 0, "the stand-in and the proxy logged something");
}

/// Issue 25, "The hosts" (openai): `--api-key-env` naming a variable that
/// is not set is a one-line usage error (exit 2), before anything runs.
#[test]
fn a_missing_key_variable_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let attempt = dir.path().join("attempt-1");
    let o = agent(
        "http://127.0.0.1:9/v1",
        &attempt,
        &["--api-key-env", "OKN_TEST_UNSET_KEY_VARIABLE"],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(stdout(&o), "");
    assert_eq!(
        stderr(&o),
        "error: --api-key-env OKN_TEST_UNSET_KEY_VARIABLE: the variable is not set; export it \
         with the API key (or leave out --api-key-env for a server that needs no key)\n"
    );
    assert!(!attempt.exists(), "no proxy was started");
}

/// Issue 25, "The hosts" (openai): no HTTP reply at all is a `transport`
/// failure; a model that never answers is cut at `--timeout-s` with the
/// report printed (stop `timeout`, exit 0).
#[test]
fn an_unreachable_api_is_a_transport_failure_and_a_hung_one_a_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let held = crate::support::closed_port();
    let closed = format!("http://127.0.0.1:{}/v1", held.port);
    let o = agent(&closed, &dir.path().join("attempt-1"), &[], &[]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let r = report(&o);
    assert_eq!(r["error"]["kind"], "transport", "{r}");
    assert_eq!(r["error"]["status"], Value::Null);

    let log = dir.path().join("requests");
    let (_server, url) = standin("hang", &log, &[]);
    let started = std::time::Instant::now();
    let o = agent(
        &url,
        &dir.path().join("attempt-2"),
        &["--timeout-s", "3"],
        &[],
    );
    assert!(started.elapsed().as_secs_f64() < 20.0);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let r = report(&o);
    assert_eq!(r["stop"], "timeout", "{r}");
    assert_eq!(r["turns"], 2, "the query ran, then the model hung: {r}");
    assert!(r["wall_s"].as_f64().unwrap() >= 3.0, "{r}");
}

/// A server on 127.0.0.1 that answers every request with `reply` (a whole
/// HTTP/1.1 response) once it has read the request; its API root.
fn fixed_reply(reply: String) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    format!("http://127.0.0.1:{port}/v1")
}

/// An HTTP/1.1 response with `status` (code and reason), `headers` and a
/// JSON or text `body`.
fn response(status: &str, headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
        body.len()
    )
}

/// Issue 25, "The hosts" (openai): each failure a real API answers with is
/// typed in the report (kind, status, the API's own message), with exit 1:
/// a rate limit, an overload, a redirect (a wrong --base-url), a 200 that
/// is not JSON, and a 200 holding an error object (OpenRouter's way).
#[test]
fn each_api_failure_is_typed_by_what_the_api_answered() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            response(
                "429 Too Many Requests",
                "Content-Type: application/json\r\n",
                r#"{"error": {"message": "Rate limit reached for requests", "type": "requests"}}"#,
            ),
            json!({"kind": "rate_limit", "status": 429, "message": "Rate limit reached for requests"}),
        ),
        (
            response(
                "529 Overloaded",
                "",
                r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
            ),
            json!({"kind": "overload", "status": 529, "message": "Overloaded"}),
        ),
        (
            response(
                "307 Temporary Redirect",
                "Location: https://example.org/api/v1/chat/completions\r\n",
                "",
            ),
            json!({"kind": "bad_request", "status": 307, "message":
                "the API redirected to https://example.org/api/v1/chat/completions: give that API root as --base-url"}),
        ),
        (
            response(
                "200 OK",
                "Content-Type: text/html\r\n",
                "<html>login</html>",
            ),
            json!({"kind": "invalid_reply", "status": 200, "message":
                "the reply is not JSON (expected value at line 1 column 1): <html>login</html>"}),
        ),
        (
            response(
                "200 OK",
                "Content-Type: application/json\r\n",
                r#"{"error": {"code": 502, "message": "Provider returned error"}}"#,
            ),
            json!({"kind": "server", "status": 502, "message": "Provider returned error"}),
        ),
    ];
    for (i, (reply, error)) in cases.into_iter().enumerate() {
        let url = fixed_reply(reply);
        let o = agent(&url, &dir.path().join(format!("attempt-{i}")), &[], &[]);
        assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
        let r = report(&o);
        assert_eq!(r["stop"], "api_error", "{r}");
        assert_eq!(r["error"], error);
        assert_eq!(
            (r["turns"].as_u64(), r.get("model_resolved")),
            (Some(1), None)
        );
    }
}

/// Issue 25, "The hosts" (openai): a reply in Ollama's shape (a tool call
/// with no id, its arguments an object, `finish_reason` `stop`, empty
/// content, no usage) is acted on: the call reaches the proxy, the answer
/// is saved, and no token count is made up.
#[test]
fn a_tool_call_in_ollamas_shape_reaches_the_proxy_and_no_usage_is_made_up() {
    let dir = tempfile::tempdir().unwrap();
    let attempt = dir.path().join("attempt-1");
    let body = json!({"model": "qwen3:8b", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": "", "tool_calls": [{"function":
            {"name": "submit_csv", "arguments": {"csv": "n\n1\n"}}}]},
        "finish_reason": "stop"}]})
    .to_string();
    let url = fixed_reply(response(
        "200 OK",
        "Content-Type: application/json\r\n",
        &body,
    ));
    let o = agent(&url, &attempt, &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let r = report(&o);
    assert_eq!(r["stop"], "submitted", "{r}");
    assert_eq!(r["model_resolved"], "qwen3:8b");
    assert_eq!(r["finish_reason"], "stop");
    assert_eq!(r["usage"], json!({}));
    assert!(r.get("result").is_none(), "empty content is no text: {r}");
    assert_eq!(
        std::fs::read_to_string(attempt.join("answer.csv")).unwrap(),
        "n\n1\n"
    );
}
