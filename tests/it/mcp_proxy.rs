//! The proxy through the real binary, with real MCP servers behind it:
//! the demo KG server (this crate's `kg-server`, over stdio and over
//! streamable HTTP on 127.0.0.1, degraded on purpose with `--fault`),
//! `@modelcontextprotocol/server-everything` and `server-memory` from npm,
//! and `mcp-proto-okn` from PyPI (all installed by `scripts/test`). The test is the agent: an
//! rmcp client that starts the proxy as an agent host would. No model.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::{KillOnDrop, repo, tool};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_okn-benchmark");

type Client = RunningService<RoleClient, ClientConfig>;

/// A profile file for the demo KG server over stdio, with extra kg-server flags.
fn demo_profile(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec![
        "kg-server".to_string(),
        "--data".into(),
        repo().join("demo/kg").display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\n[upstream]\ntransport = \"stdio\"\ncommand = {:?}\nargs = {:?}\n",
            BIN, args
        ),
    )
    .unwrap();
    path
}

/// A profile for `tests/servers/reply_mcp.py`, the raw stdio server whose
/// tools reply with what the test asks for, with `env` set.
fn reply_profile(dir: &Path, name: &str, env: &[(&str, &str)]) -> PathBuf {
    let env: Vec<String> = env.iter().map(|(k, v)| format!("{k} = {v:?}")).collect();
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"python3\"\nargs = [{:?}]\nenv = {{ {} }}\n",
            repo().join("tests/servers/reply_mcp.py").display().to_string(),
            env.join(", ")
        ),
    )
    .unwrap();
    path
}

/// Starts the proxy with `args` (log dir = `log`) as an agent host would,
/// and connects to it.
async fn proxy(log: &Path, args: &[&str]) -> Client {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.arg("proxy")
        .arg("--log-dir")
        .arg(log)
        .args(args)
        .current_dir(repo());
    let transport = TokioChildProcess::new(cmd).expect("start proxy");
    ClientConfig::default()
        .serve(transport)
        .await
        .expect("MCP initialize with the proxy")
}

async fn call(client: &Client, name: &str, arguments: Value) -> CallToolResult {
    let Value::Object(map) = arguments else {
        panic!("arguments must be an object")
    };
    client
        .peer()
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(map))
        .await
        .expect("tools/call")
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn json_file(path: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

async fn tool_names(client: &Client) -> Vec<String> {
    client
        .peer()
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn all_tools_lists_forwards_logs_and_takes_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo_profile(dir.path(), "demo-kg", &[]);
    let log = dir.path().join("log");
    let client = proxy(
        &log,
        &[
            "--tools",
            "all-tools",
            "--profile",
            profile.to_str().unwrap(),
        ],
    )
    .await;

    assert_eq!(
        tool_names(&client).await,
        [
            "get_descendants",
            "get_schema",
            "list_graphs",
            "lookup_uri",
            "query",
            "submit_csv"
        ]
    );
    let instructions = client
        .peer()
        .peer_info()
        .unwrap()
        .instructions
        .clone()
        .unwrap_or_default();
    assert!(
        instructions.contains("list_graphs to see the graphs"),
        "{instructions}"
    );

    let result = call(
        &client,
        "query",
        json!({"graph": "spoke-okn", "query_string": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"}),
    )
    .await;
    assert_ne!(result.is_error, Some(true));
    let reply: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(reply["rows"][0][0]["value"], "1482", "{reply}");
    assert_eq!(
        reply["rows"][0][0]["datatype"],
        "http://www.w3.org/2001/XMLSchema#integer"
    );

    let bad = call(
        &client,
        "query",
        json!({"graph": "spoke-okn", "query_string": "SELECT WHERE {"}),
    )
    .await;
    assert_eq!(bad.is_error, Some(true));
    assert!(
        text(&bad).starts_with("SPARQL syntax error"),
        "{}",
        text(&bad)
    );

    let first = call(&client, "submit_csv", json!({"csv": "n\n1482\n"})).await;
    assert_eq!(
        text(&first),
        "Answer saved: 1 row with columns n. Calling submit_csv again replaces it."
    );
    let second = call(&client, "submit_csv", json!({"csv": "n\n"})).await;
    assert!(
        text(&second).starts_with("Answer saved: 0 rows"),
        "{}",
        text(&second)
    );
    assert_eq!(
        std::fs::read_to_string(log.join("answer.csv")).unwrap(),
        "n\n"
    );
    client.cancel().await.unwrap();

    let calls = json_file(&log.join("calls.json"));
    assert_eq!(calls["format"], 2);
    let calls = calls["calls"].as_array().unwrap();
    let tools: Vec<&str> = calls.iter().map(|c| c["tool"].as_str().unwrap()).collect();
    assert_eq!(tools, ["query", "query", "submit_csv", "submit_csv"]);
    assert_eq!(calls[0]["ok"], true);
    assert_eq!(calls[0]["forwarded"], true);
    assert_eq!(calls[1]["ok"], false);
    assert_eq!(
        calls[2]["arguments"]["csv"], "n\n1482\n",
        "both submissions are logged"
    );
    assert_eq!(calls[3]["index"], 4);
    assert!(calls[0]["duration_s"].as_f64().unwrap() >= 0.0);
    let metrics = json_file(&log.join("metrics.json"));
    assert_eq!(metrics["level"], "all-tools");
    assert_eq!(metrics["server"], "demo-kg");
    assert_eq!(
        (
            metrics["queries_ok"].as_u64(),
            metrics["queries_errored"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(metrics["submissions"], 2);
    assert_eq!(metrics["submitted_rows"], 0);
    assert_eq!(metrics["instructions_forwarded"], true);
    assert_eq!(metrics["startup_error"], Value::Null);
    assert_eq!(metrics["lost_upstream"], Value::Null);
    assert!(metrics["server_s"].as_f64().unwrap() > 0.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_withheld_tool_is_hidden_and_a_remembered_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo_profile(dir.path(), "demo-kg", &[]);
    let log = dir.path().join("log");
    let client = proxy(
        &log,
        &[
            "--profile",
            profile.to_str().unwrap(),
            "--without-tool",
            "get_schema",
            "--without-tool",
            "lookup_uri",
        ],
    )
    .await;
    assert_eq!(
        tool_names(&client).await,
        ["get_descendants", "list_graphs", "query", "submit_csv"]
    );
    let refused = call(&client, "get_schema", json!({"graph": "spoke-okn"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        text(&refused),
        "The tool 'get_schema' is not available in this session."
    );
    let unknown = call(&client, "no_such_tool", json!({})).await;
    assert!(
        text(&unknown).starts_with("Unknown tool 'no_such_tool'. Available tools: get_descendants")
    );
    client.cancel().await.unwrap();
    let calls = json_file(&log.join("calls.json"))["calls"].clone();
    assert_eq!(calls[0]["refused"], true);
    assert_eq!(calls[0]["forwarded"], false);
    assert_eq!(calls[1]["refused"], false);
    let metrics = json_file(&log.join("metrics.json"));
    assert_eq!(metrics["refused"], 1);
    assert_eq!(metrics["withheld"], json!(["get_schema", "lookup_uri"]));
    assert_eq!(
        metrics["tools_called"],
        json!(["get_schema", "no_such_tool"])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamable_http_upstream_on_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, port) = crate::support::kg_server_http(&[]);
    let profile = dir.path().join("remote.toml");
    std::fs::write(
        &profile,
        format!("name = \"demo-kg\"\n[upstream]\ntransport = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ Authorization = \"Bearer s3cret-token\" }}\n"),
    )
    .unwrap();
    let log = dir.path().join("log");
    let client = proxy(&log, &["--profile", profile.to_str().unwrap()]).await;
    assert_eq!(tool_names(&client).await.len(), 6);
    let result = call(&client, "list_graphs", json!({})).await;
    let reply: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(reply["graphs"].as_array().unwrap().len(), 6);
    client.cancel().await.unwrap();
    // The credential is used, never written.
    for entry in std::fs::read_dir(&log).unwrap() {
        let content = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        assert!(
            !content.contains("s3cret-token"),
            "a log holds the header value"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn failures_hidden_in_successful_replies_are_soft_errors() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo_profile(dir.path(), "demo-kg", &["--fault", "rate-limit-every=2"]);
    for strict in [false, true] {
        let log = dir.path().join(format!("log-{strict}"));
        let mut args = vec!["--profile", profile.to_str().unwrap()];
        if strict {
            args.push("--strict-upstream-errors");
        }
        let client = proxy(&log, &args).await;
        let first = call(
            &client,
            "get_descendants",
            json!({"uri": "http://purl.obolibrary.org/obo/MONDO_0005275"}),
        )
        .await;
        assert_ne!(first.is_error, Some(true));
        let second = call(
            &client,
            "get_descendants",
            json!({"uri": "http://purl.obolibrary.org/obo/MONDO_0005275"}),
        )
        .await;
        assert!(
            text(&second).contains("HTTP Error 429"),
            "payload forwarded verbatim"
        );
        assert_eq!(
            second.is_error == Some(true),
            strict,
            "relabelled only when strict"
        );
        client.cancel().await.unwrap();
        let calls = json_file(&log.join("calls.json"))["calls"].clone();
        assert_eq!(calls[0]["soft_error"], Value::Null);
        assert_eq!(calls[1]["soft_error"], "HTTP 429 (rate limited)");
        assert_eq!(calls[1]["ok"], true, "ok stays what the protocol said");
        let metrics = json_file(&log.join("metrics.json"));
        assert_eq!(
            metrics["upstream_soft_errors"],
            json!({"get_descendants": 1})
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hanging_server_trips_the_breaker_and_the_answer_channel_stays_open() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo_profile(dir.path(), "demo-kg", &["--fault", "hang-after=1"]);
    let log = dir.path().join("log");
    let client = proxy(
        &log,
        &["--profile", profile.to_str().unwrap(), "--timeout", "1"],
    )
    .await;
    let ok = call(&client, "list_graphs", json!({})).await;
    assert_ne!(ok.is_error, Some(true));
    for attempt in 1..=3 {
        let started = Instant::now();
        let result = call(&client, "list_graphs", json!({})).await;
        assert_eq!(result.is_error, Some(true));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "bounded by --timeout"
        );
        if attempt < 3 {
            assert!(
                text(&result).contains("no reply within 1 s"),
                "{}",
                text(&result)
            );
        } else {
            assert!(
                text(&result).contains("will not come back"),
                "{}",
                text(&result)
            );
        }
    }
    // Dead now: answered at once, without waiting on the server.
    let started = Instant::now();
    let dead = call(
        &client,
        "query",
        json!({"graph": "spoke-okn", "query_string": "ASK {}"}),
    )
    .await;
    assert!(started.elapsed() < Duration::from_millis(900));
    assert!(
        text(&dead).contains("The answer channel is still open: call submit_csv"),
        "{}",
        text(&dead)
    );
    let submitted = call(&client, "submit_csv", json!({"csv": "a\n1\n"})).await;
    assert_ne!(submitted.is_error, Some(true));
    client.cancel().await.unwrap();
    let metrics = json_file(&log.join("metrics.json"));
    let lost = metrics["lost_upstream"].as_str().unwrap();
    assert!(
        lost.starts_with("3 consecutive forwarded calls failed"),
        "{lost}"
    );
    assert_eq!(metrics["startup_error"], Value::Null);
    assert_eq!(metrics["submissions"], 1);
    assert_eq!(
        std::fs::read_to_string(log.join("answer.csv")).unwrap(),
        "a\n1\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_exits_is_a_lost_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo_profile(dir.path(), "demo-kg", &["--fault", "die-after=1"]);
    let log = dir.path().join("log");
    let client = proxy(
        &log,
        &["--profile", profile.to_str().unwrap(), "--timeout", "5"],
    )
    .await;
    call(&client, "list_graphs", json!({})).await;
    let died = call(&client, "list_graphs", json!({})).await;
    assert_eq!(died.is_error, Some(true));
    // Give the holder a moment to see the closed transport.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = call(&client, "list_graphs", json!({})).await;
    assert!(
        text(&after).contains("will not come back"),
        "{}",
        text(&after)
    );
    let submitted = call(&client, "submit_csv", json!({"csv": "x\n"})).await;
    assert_ne!(submitted.is_error, Some(true));
    client.cancel().await.unwrap();
    let metrics = json_file(&log.join("metrics.json"));
    assert!(metrics["lost_upstream"].is_string(), "{metrics}");
    assert_eq!(metrics["startup_error"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_server_is_a_startup_error_with_submit_csv_still_served() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("missing.toml");
    std::fs::write(&profile, "name = \"missing\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"/nonexistent/server\"\n").unwrap();
    let log = dir.path().join("log");
    let client = proxy(&log, &["--profile", profile.to_str().unwrap()]).await;
    assert_eq!(tool_names(&client).await, ["submit_csv"]);
    let submitted = call(&client, "submit_csv", json!({"csv": "a\n"})).await;
    assert_ne!(submitted.is_error, Some(true));
    client.cancel().await.unwrap();
    let metrics = json_file(&log.join("metrics.json"));
    // The command is recorded relative to the profile's folder (no
    // absolute path of the machine), however deep the temporary folder is.
    let up = "../".repeat(dir.path().components().count() - 1);
    assert!(
        metrics["startup_error"]
            .as_str()
            .unwrap()
            .starts_with(&format!("cannot start '{up}nonexistent/server'")),
        "{metrics}"
    );
    assert_eq!(metrics["lost_upstream"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn sparql_only_is_one_neutral_tool_with_a_profile_independent_preamble() {
    let dir = tempfile::tempdir().unwrap();
    let mut digests = Vec::new();
    for (i, profile) in [
        "profiles/demo-kg.local.toml",
        "profiles/mcp-proto-okn.remote.toml",
    ]
    .iter()
    .enumerate()
    {
        let log = dir.path().join(format!("log{i}"));
        let client = proxy(&log, &["--tools", "sparql-only", "--profile", profile]).await;
        assert_eq!(tool_names(&client).await, ["run_sparql", "submit_csv"]);
        let preamble = client
            .peer()
            .peer_info()
            .unwrap()
            .instructions
            .clone()
            .unwrap();
        assert!(preamble.contains("Valid graph shortnames: biobricks-ice, fiokg, spatialkg, spoke-genelab, spoke-okn, ubergraph."), "{preamble}");
        assert!(!preamble.contains("demo-kg") && !preamble.contains("mcp-proto-okn"));
        let result = call(
            &client,
            "run_sparql",
            json!({"graph": "spoke-okn", "query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"}),
        )
        .await;
        assert_eq!(text(&result), "n\n1482\n");
        let federated = call(
            &client,
            "run_sparql",
            json!({"graph": "federation", "query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"}),
        )
        .await;
        assert_eq!(text(&federated), "n\n3965\n");
        let unknown = call(
            &client,
            "run_sparql",
            json!({"graph": "spoke", "query": "ASK {}"}),
        )
        .await;
        assert_eq!(unknown.is_error, Some(true));
        assert!(
            text(&unknown)
                .starts_with("unknown graph 'spoke'; valid graphs: biobricks-ice, federation")
        );
        client.cancel().await.unwrap();
        let metrics = json_file(&log.join("metrics.json"));
        assert_eq!(metrics["level"], "sparql-only");
        assert_eq!(metrics["server"], Value::Null);
        assert_eq!(metrics["queries_ok"], 2);
        assert_eq!(metrics["queries_errored"], 1);
        digests.push(metrics["preamble_sha256"].as_str().unwrap().to_string());
    }
    assert_eq!(digests[0], digests[1]);
    assert!(digests[0].starts_with("sha256:") && digests[0].len() == 71);
}

/// `tools/list` over stdio as raw JSON, no MCP library between: starts
/// `program` with `args` (and `env`) in `cwd`, sends `initialize`, the
/// `initialized` notification and `tools/list`, and returns the `tools`
/// array of the reply exactly as written (rmcp's types would drop members
/// they have no field for, which is what the test looks for).
fn raw_tools_list(program: &Path, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Vec<Value> {
    let line = raw_tools_list_line(program, args, cwd, env);
    let listed: Value = serde_json::from_str(&line).unwrap();
    listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {listed}"))
        .clone()
}

/// The line of the reply to `tools/list`, as [`raw_tools_list`] gets it.
fn raw_tools_list_line(program: &Path, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> String {
    use std::io::{BufRead, BufReader, Write};
    let mut child = std::process::Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "1"}}}),
    );
    let reply = |lines: &mut dyn Iterator<Item = std::io::Result<String>>, id: i64| loop {
        let line = lines.next().expect("the server closed its output").unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == id {
            break line;
        }
    };
    reply(&mut lines, 1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let listed = reply(&mut lines, 2);
    let _ = child.kill();
    let _ = child.wait();
    listed
}

/// The proxy lists each server tool exactly as the server wrote it, field
/// for field, then `submit_csv` (README.md, "Servers under test"): for the
/// demo KG server and for two npm servers, `server-everything` and
/// `server-memory`, whose tools carry `execution` (`{"taskSupport":
/// "forbidden"}`, or `"required"`), a member rmcp's `Tool` has no field for
/// and once dropped.
/// A withheld tool is the only one missing.
#[test]
fn the_proxy_lists_each_server_tool_as_the_server_wrote_it() {
    let dir = tempfile::tempdir().unwrap();
    let memory_file = dir.path().join("memory.json");
    let memory_file = memory_file.to_str().unwrap();
    let everything = tool("mcp-server-everything").display().to_string();
    let memory = tool("mcp-server-memory").display().to_string();
    /// A server: its name, program, arguments and environment.
    type Server<'a> = (&'a str, &'a str, Vec<&'a str>, Vec<(&'a str, &'a str)>);
    let servers: [Server; 3] = [
        (
            "demo-kg",
            BIN,
            vec!["kg-server", "--data", "demo/kg"],
            vec![],
        ),
        ("everything", &everything, vec![], vec![]),
        (
            "memory",
            &memory,
            vec![],
            vec![("MEMORY_FILE_PATH", memory_file)],
        ),
    ];
    for (name, program, args, env) in servers {
        let direct = raw_tools_list(Path::new(program), &args, &repo(), &env);
        let profile = dir.path().join(format!("{name}.toml"));
        let mut text = format!(
            "name = {name:?}\n[upstream]\ntransport = \"stdio\"\ncommand = {program:?}\nargs = {args:?}\ncwd = {:?}\n",
            repo().display().to_string()
        );
        if !env.is_empty() {
            text.push_str("[upstream.env]\n");
            for (k, v) in &env {
                text.push_str(&format!("{k} = {v:?}\n"));
            }
        }
        std::fs::write(&profile, text).unwrap();
        let withheld = direct[0]["name"].as_str().unwrap().to_string();
        let log = dir.path().join(format!("log-{name}"));
        let proxied = raw_tools_list(
            Path::new(BIN),
            &[
                "proxy",
                "--profile",
                profile.to_str().unwrap(),
                "--log-dir",
                log.to_str().unwrap(),
                "--without-tool",
                &withheld,
            ],
            &repo(),
            &[],
        );
        let (submit, proxied) = proxied.split_last().expect("no tools through the proxy");
        assert_eq!(submit["name"], "submit_csv", "{name}");
        assert_eq!(
            proxied,
            &direct[1..],
            "{name}: the proxy's tools/list is not the server's"
        );
        if name != "demo-kg" {
            assert!(
                proxied
                    .iter()
                    .all(|t| t["execution"]["taskSupport"].is_string()),
                "{name}: {proxied:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn server_everything_from_npm_is_listed_filtered_and_forwarded() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("everything.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"everything\"\n[upstream]\ntransport = \"stdio\"\ncommand = {:?}\n",
            tool("mcp-server-everything").display().to_string()
        ),
    )
    .unwrap();
    let log = dir.path().join("log");
    let client = proxy(
        &log,
        &[
            "--profile",
            profile.to_str().unwrap(),
            "--without-tool",
            "get-env",
        ],
    )
    .await;
    let names = tool_names(&client).await;
    assert!(
        names.contains(&"echo".to_string()) && names.contains(&"get-sum".to_string()),
        "{names:?}"
    );
    assert!(!names.contains(&"get-env".to_string()));
    assert_eq!(names.last().unwrap(), "submit_csv");
    let echoed = call(
        &client,
        "echo",
        json!({"message": "hello through the proxy"}),
    )
    .await;
    assert!(
        text(&echoed).contains("hello through the proxy"),
        "{}",
        text(&echoed)
    );
    let sum = call(&client, "get-sum", json!({"a": 2, "b": 40})).await;
    assert!(
        text(&sum)
            .split(|c: char| !c.is_ascii_digit())
            .any(|n| n == "42"),
        "{}",
        text(&sum)
    );
    let refused = call(&client, "get-env", json!({})).await;
    assert_eq!(refused.is_error, Some(true));
    client.cancel().await.unwrap();
    let metrics = json_file(&log.join("metrics.json"));
    assert_eq!(
        metrics["tools_called"],
        json!(["echo", "get-sum", "get-env"])
    );
    assert_eq!(metrics["refused"], 1);
    assert!(metrics["instructions_chars"].as_u64().unwrap() > 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_proto_okn_from_pypi_fails_offline_and_the_failure_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    // Its query tool always targets the remote federation endpoint; the
    // proxy variables point every request at a closed port on 127.0.0.1, so
    // nothing leaves the machine and the failure is immediate.
    let profile = dir.path().join("okn.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"mcp-proto-okn\"\n[upstream]\ntransport = \"stdio\"\ncommand = {:?}\nargs = [\"--endpoint\", \"http://127.0.0.1:9/sparql\", \"--description\", \"offline\"]\nenv = {{ HTTPS_PROXY = \"http://127.0.0.1:9\", HTTP_PROXY = \"http://127.0.0.1:9\", https_proxy = \"http://127.0.0.1:9\", http_proxy = \"http://127.0.0.1:9\" }}\n",
            tool("mcp-proto-okn").display().to_string()
        ),
    )
    .unwrap();
    let log = dir.path().join("log");
    let client = proxy(
        &log,
        &["--profile", profile.to_str().unwrap(), "--timeout", "60"],
    )
    .await;
    let names = tool_names(&client).await;
    assert!(
        names.contains(&"query".to_string()) && names.contains(&"get_schema".to_string()),
        "{names:?}"
    );
    let started = Instant::now();
    let result = call(
        &client,
        "query",
        json!({"query_string": "SELECT * WHERE { ?s ?p ?o } LIMIT 1"}),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "it must not hang"
    );
    client.cancel().await.unwrap();
    assert!(
        text(&result).contains("Connection refused"),
        "{}",
        text(&result)
    );
    let calls = json_file(&log.join("calls.json"))["calls"].clone();
    let call = &calls[0];
    // It fails softly: isError=false with the failure in the payload.
    assert_eq!(call["ok"], true);
    assert_eq!(
        call["soft_error"], "backend unreachable (connection refused)",
        "{call}"
    );
    let metrics = json_file(&log.join("metrics.json"));
    assert_eq!(metrics["queries_errored"], 1, "{metrics}");
    assert_eq!(metrics["upstream_soft_errors"], json!({"query": 1}));
}

/// The demo KG server's own tools, straight from an MCP client.
#[tokio::test(flavor = "multi_thread")]
async fn demo_kg_server_tools_answer_from_the_data() {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.args(["kg-server", "--data"])
        .arg(repo().join("demo/kg"));
    let client = ClientConfig::default()
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap();
    let info = client.peer().peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "okn-demo-kg");

    let schema: Value = serde_json::from_str(&text(
        &call(&client, "get_schema", json!({"graph": "ubergraph"})).await,
    ))
    .unwrap();
    let classes = schema["classes"].as_array().unwrap();
    assert_eq!(
        classes[0]["class"], "http://www.w3.org/2002/07/owl#Class",
        "{schema}"
    );
    let total: u64 = schema["predicates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["count"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 572, "predicate counts add up to the graph's triples");

    let found: Value = serde_json::from_str(&text(
        &call(
            &client,
            "lookup_uri",
            json!({"label": "Rheumatoid Arthritis", "max_results": 3}),
        )
        .await,
    ))
    .unwrap();
    let results = found["results"].as_array().unwrap();
    assert!(!results.is_empty() && results.len() <= 3);
    assert_eq!(results[0]["match"], "exact", "{found}");
    assert_eq!(
        results[0]["label"].as_str().unwrap().to_lowercase(),
        "rheumatoid arthritis"
    );

    let shallow: Value = serde_json::from_str(&text(
        &call(
            &client,
            "get_descendants",
            json!({"uri": "http://purl.obolibrary.org/obo/MONDO_0005275", "max_depth": 1}),
        )
        .await,
    ))
    .unwrap();
    let deep: Value = serde_json::from_str(&text(
        &call(
            &client,
            "get_descendants",
            json!({"uri": "http://purl.obolibrary.org/obo/MONDO_0005275"}),
        )
        .await,
    ))
    .unwrap();
    let n_shallow = shallow["descendant_count"].as_u64().unwrap();
    let n_deep = deep["descendant_count"].as_u64().unwrap();
    assert!(
        n_shallow >= 1 && n_deep > n_shallow,
        "{n_shallow} vs {n_deep}"
    );
    assert!(
        deep["descendants"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["depth"].as_u64().unwrap() >= 1)
    );

    // The federation shortname sees every graph; GRAPH picks one.
    let q = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <https://purl.org/okn/frink/kg/spatialkg> { ?s ?p ?o } }";
    let fed: Value = serde_json::from_str(&text(
        &call(
            &client,
            "query",
            json!({"graph": "federation", "query_string": q}),
        )
        .await,
    ))
    .unwrap();
    assert_eq!(fed["rows"][0][0]["value"], "348");
    let unknown = call(&client, "get_schema", json!({"graph": "nope"})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(text(&unknown).starts_with("unknown graph 'nope'; valid graphs: biobricks-ice"));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn empty_submissions_are_refused_and_large_ones_logged_as_files() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let client = proxy(&log, &["--tools", "sparql-only"]).await;
    let empty = call(&client, "submit_csv", json!({"csv": "  \n"})).await;
    assert_eq!(empty.is_error, Some(true));
    assert!(!log.join("answer.csv").exists());
    let mut big = String::from("n\n");
    for i in 0..20_000 {
        big.push_str(&format!("{i}\n"));
    }
    let saved = call(&client, "submit_csv", json!({"csv": big})).await;
    assert!(
        text(&saved).starts_with("Answer saved: 20000 rows"),
        "{}",
        text(&saved)
    );
    client.cancel().await.unwrap();
    assert_eq!(
        std::fs::read_to_string(log.join("answer.csv")).unwrap(),
        big
    );
    let calls = json_file(&log.join("calls.json"))["calls"].clone();
    assert_eq!(
        calls[1]["arguments"],
        json!({"csv_file": "submissions/2.csv", "csv_bytes": big.len()})
    );
    assert_eq!(
        std::fs::read_to_string(log.join("submissions/2.csv")).unwrap(),
        big
    );
}

mod regression {
    //! One test per fixed defect, named after what it guards; the comment
    //! says what broke.

    use super::*;

    /// Issue 24, item 19: one `run_sparql` call with 1,000 nested
    /// parentheses (2 KB) overflowed the parser's stack and aborted the
    /// sparql-only proxy (SIGABRT, nothing in calls.json); the demo KG
    /// server aborted the same way. Now the call is answered with an error
    /// naming the bound, recorded in calls.json, and the next call is
    /// answered from the data; a chain of operators past the bound too.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_deeply_nested_query_is_an_error_reply_not_an_abort() {
        let deep = format!(
            "SELECT * WHERE {{ FILTER({}1{}) }}",
            "(".repeat(1000),
            ")".repeat(1000)
        );
        let long = format!("SELECT ?x WHERE {{ BIND(1{} AS ?x) }}", "+1".repeat(5000));
        let count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }";
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let client = proxy(
            &log,
            &[
                "--tools",
                "sparql-only",
                "--profile",
                "profiles/demo-kg.local.toml",
            ],
        )
        .await;
        for query in [&deep, &long] {
            let refused = call(
                &client,
                "run_sparql",
                json!({"graph": "spoke-okn", "query": query}),
            )
            .await;
            assert_eq!(refused.is_error, Some(true), "{}", text(&refused));
            assert!(
                text(&refused).contains("it was not parsed"),
                "{}",
                text(&refused)
            );
        }
        let ok = call(
            &client,
            "run_sparql",
            json!({"graph": "spoke-okn", "query": count}),
        )
        .await;
        assert_eq!(text(&ok), "n\n1482\n");
        client.cancel().await.unwrap();
        let calls = json_file(&log.join("calls.json"))["calls"].clone();
        assert_eq!(calls.as_array().unwrap().len(), 3, "{calls}");
        assert_eq!(calls[0]["ok"], false);
        assert!(
            calls[0]
                .to_string()
                .contains("nests brackets ( [ { more than 64 deep"),
            "{}",
            calls[0]
        );
        assert_eq!(calls[2]["ok"], true);

        // The demo KG server, spoken to directly.
        let mut cmd = tokio::process::Command::new(BIN);
        cmd.args(["kg-server", "--data"])
            .arg(repo().join("demo/kg"));
        let server = ClientConfig::default()
            .serve(TokioChildProcess::new(cmd).unwrap())
            .await
            .unwrap();
        for query in [&deep, &long] {
            let refused = call(
                &server,
                "query",
                json!({"graph": "spoke-okn", "query_string": query}),
            )
            .await;
            assert_eq!(refused.is_error, Some(true), "{}", text(&refused));
            assert!(
                text(&refused).contains("it was not parsed"),
                "{}",
                text(&refused)
            );
        }
        let ok = call(
            &server,
            "query",
            json!({"graph": "spoke-okn", "query_string": count}),
        )
        .await;
        assert!(text(&ok).contains("1482"), "{}", text(&ok));
        server.cancel().await.unwrap();
    }

    // The proxy's tools/list held the server's tools as parsed JSON: a
    // number came out rewritten (`1e2` as `100.0`, a 30-digit integer
    // rounded to a float), and of two tools with one name the first
    // object was listed twice.
    #[test]
    fn tools_are_listed_byte_for_byte_and_two_of_one_name_keep_their_own() {
        let dir = tempfile::tempdir().unwrap();
        let server = dir.path().join("server.py");
        let tools = r#"[{"name":"a","inputSchema":{"type":"object","maximum":1e2,"minimum":-0,"default":123456789012345678901234567890},"x-note":"caf\u00e9"},{"name":"a","description":"dup","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}}]"#;
        std::fs::write(
            &server,
            format!(
                r#"import sys, json
TOOLS = r'{tools}'
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = '{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"fake","version":"1"}}}}'
    elif m["method"] == "tools/list":
        r = '{{"tools":' + TOOLS + '}}'
    else:
        r = '{{"content":[{{"type":"text","text":"ok"}}]}}'
    sys.stdout.write('{{"jsonrpc":"2.0","id":' + json.dumps(m["id"]) + ',"result":' + r + '}}\n')
    sys.stdout.flush()
"#
            ),
        )
        .unwrap();
        let profile = dir.path().join("fake.toml");
        std::fs::write(
            &profile,
            format!(
                "name = \"fake\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"python3\"\nargs = [{:?}]\n",
                server.display().to_string()
            ),
        )
        .unwrap();
        let log = dir.path().join("log");
        let line = raw_tools_list_line(
            Path::new(BIN),
            &[
                "proxy",
                "--profile",
                profile.to_str().unwrap(),
                "--log-dir",
                log.to_str().unwrap(),
            ],
            &repo(),
            &[],
        );
        let tools_text = line
            .split_once(r#""result":{"tools":["#)
            .map(|(_, rest)| rest)
            .unwrap_or_else(|| panic!("{line}"));
        let server_tools = &tools[1..tools.len() - 1];
        assert!(
            tools_text.starts_with(&format!("{server_tools},{{\"name\":\"submit_csv\"")),
            "{line}"
        );
    }

    /// Issue 24, item 17: the breaker ignored JSON-RPC error replies, so a
    /// session answering every call with one (as a session the server has
    /// terminated does in the Python SDK) was never declared dead. Three in
    /// a row trip it; the answer channel stays open.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_session_answering_every_call_with_a_json_rpc_error_trips_the_breaker() {
        let dir = tempfile::tempdir().unwrap();
        let profile = demo_profile(dir.path(), "demo-kg", &["--fault", "rpc-error-every=1"]);
        let log = dir.path().join("log");
        let client = proxy(&log, &["--profile", profile.to_str().unwrap()]).await;
        for attempt in 1..=3 {
            let result = call(&client, "list_graphs", json!({})).await;
            assert_eq!(result.is_error, Some(true));
            let said = text(&result);
            if attempt < 3 {
                assert!(
                    said.starts_with("The server rejected the call: Invalid params"),
                    "{said}"
                );
            } else {
                assert!(said.contains("will not come back"), "{said}");
            }
        }
        // Dead now: answered by the proxy, the server never asked.
        let dead = call(&client, "list_graphs", json!({})).await;
        assert!(
            text(&dead).contains("The answer channel is still open"),
            "{}",
            text(&dead)
        );
        let submitted = call(&client, "submit_csv", json!({"csv": "a\n1\n"})).await;
        assert_ne!(submitted.is_error, Some(true));
        client.cancel().await.unwrap();
        let metrics = json_file(&log.join("metrics.json"));
        let lost = metrics["lost_upstream"].as_str().unwrap_or_default();
        assert!(
            lost.starts_with(
                "3 consecutive forwarded calls failed; the last: the server rejected the call: Invalid params"
            ),
            "{metrics}"
        );
        let calls = json_file(&log.join("calls.json"))["calls"].clone();
        assert_eq!(calls.as_array().unwrap().len(), 5);
        assert_eq!(calls[3]["forwarded"], false, "{}", calls[3]);
    }

    /// Issue 24, item 17: any tool result resets the count, an `isError`
    /// result included (a malformed query is the agent's to fix, not a dead
    /// server), so JSON-RPC errors between results never trip the breaker.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_tool_result_between_json_rpc_errors_resets_the_breaker() {
        let dir = tempfile::tempdir().unwrap();
        let profile = demo_profile(dir.path(), "demo-kg", &["--fault", "rpc-error-every=2"]);
        let log = dir.path().join("log");
        let client = proxy(&log, &["--profile", profile.to_str().unwrap()]).await;
        for n in 1..=8 {
            let result = call(
                &client,
                "query",
                json!({"graph": "spoke-okn", "query_string": "SELECT WHERE {"}),
            )
            .await;
            assert_eq!(result.is_error, Some(true));
            let said = text(&result);
            let want = if n % 2 == 0 {
                "The server rejected the call"
            } else {
                "SPARQL syntax error"
            };
            assert!(said.starts_with(want), "call {n}: {said}");
        }
        client.cancel().await.unwrap();
        let metrics = json_file(&log.join("metrics.json"));
        assert_eq!(metrics["lost_upstream"], Value::Null, "{metrics}");
    }

    /// A proxy started with `--without-tool get_shema`, a name demo-kg lacks:
    /// the client and the folder its log is in.
    async fn proxy_withholding_a_misspelt_tool() -> (Client, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let profile = demo_profile(dir.path(), "demo-kg", &[]);
        let log = dir.path().join("log");
        let client = proxy(
            &log,
            &[
                "--profile",
                profile.to_str().unwrap(),
                "--without-tool",
                "get_shema",
            ],
        )
        .await;
        (client, dir)
    }

    // The proxy took a misspelt --without-tool at its word.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_withheld_name_the_server_lacks_is_a_startup_error() {
        let (client, dir) = proxy_withholding_a_misspelt_tool().await;
        assert_eq!(tool_names(&client).await, ["submit_csv"]);
        client.cancel().await.unwrap();
        let metrics = json_file(&dir.path().join("log/metrics.json"));
        assert!(
            metrics["startup_error"]
                .as_str()
                .unwrap()
                .contains("did you mean 'get_schema'"),
            "{metrics}"
        );
    }

    // After a startup error, a call to a server tool got "Unknown tool", not the reason.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_server_tool_called_after_a_startup_error_gets_the_reason() {
        let (client, _dir) = proxy_withholding_a_misspelt_tool().await;
        let result = call(&client, "list_graphs", json!({})).await;
        assert!(text(&result).starts_with("The server under test could not be reached when this session started (--without-tool: 'get_shema' is not a tool of demo-kg (did you mean 'get_schema'?)"), "{}", text(&result));
        client.cancel().await.unwrap();
    }

    // One runaway query hung the control for good.
    #[tokio::test(flavor = "multi_thread")]
    async fn the_controls_queries_are_bounded_by_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let client = proxy(&log, &["--tools", "sparql-only", "--timeout", "2"]).await;
        let started = Instant::now();
        let result = call(
            &client,
            "run_sparql",
            json!({"graph": "federation", "query": "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"}),
        )
        .await;
        assert!(started.elapsed() < Duration::from_secs(15));
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            text(&result),
            "the query did not finish within 2 s and was cancelled"
        );
        let big = call(&client, "run_sparql", json!({"graph": "federation", "query": "SELECT * WHERE { ?s ?p ?o . ?x ?y ?z } LIMIT 20000"})).await;
        assert!(
            text(&big).starts_with("the result has more than 10000 rows"),
            "{}",
            text(&big)
        );
        let update = call(
            &client,
            "run_sparql",
            json!({"graph": "spoke-okn", "query": "CLEAR ALL"}),
        )
        .await;
        assert!(
            text(&update).starts_with("SPARQL Update is not allowed"),
            "{}",
            text(&update)
        );
        let typed = call(
            &client,
            "run_sparql",
            json!({"graph": 1, "query": "ASK {}"}),
        )
        .await;
        assert_eq!(text(&typed), "the 'graph' argument must be a string, not 1");
        client.cancel().await.unwrap();
    }

    /// The proxy started by hand as an agent host would, its stdin and
    /// stdout as pipes: the child, its stdin, and its stdout's lines as they
    /// come.
    fn proxy_by_hand(
        log: &Path,
        profile: &Path,
        extra: &[&str],
    ) -> (
        KillOnDrop,
        std::process::ChildStdin,
        std::sync::mpsc::Receiver<String>,
    ) {
        use std::io::BufRead;
        let mut child = std::process::Command::new(BIN)
            .arg("proxy")
            .arg("--log-dir")
            .arg(log)
            .arg("--profile")
            .arg(profile)
            .args(extra)
            .current_dir(repo())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start proxy");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (lines, received) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        (KillOnDrop(child), stdin, received)
    }

    /// Writes one line to the proxy.
    fn send(stdin: &mut std::process::ChildStdin, line: &str) {
        use std::io::Write;
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next reply (a message with an id) within 5 s; other messages
    /// (notifications) are skipped.
    fn reply(received: &std::sync::mpsc::Receiver<String>, waiting_for: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = received
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no reply to {waiting_for} within 5 s ({e})"));
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("a line that is not JSON ({e}): {line}"));
            if message.get("id").is_some() {
                return message;
            }
        }
    }

    // A request the proxy could not parse (a trailing comma; a submit_csv whose CSV holds the lone
    // surrogate \ud800, valid JSON that Node's JSON.stringify writes) got no reply and left no trace:
    // the agent's call hung.
    #[test]
    fn an_unreadable_request_is_answered_and_recorded_not_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let profile = demo_profile(dir.path(), "demo-kg", &[]);
        let log = dir.path().join("log");
        let (mut child, mut stdin, received) = proxy_by_hand(&log, &profile, &[]);
        send(
            &mut stdin,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"by-hand","version":"0"}}}"#,
        );
        let initialized = reply(&received, "initialize");
        assert_eq!(initialized["id"], 1, "{initialized}");
        assert!(
            initialized["result"]["serverInfo"].is_object(),
            "{initialized}"
        );
        send(
            &mut stdin,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );

        let trailing_comma = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{},}"#;
        send(&mut stdin, trailing_comma);
        let parse_error = reply(&received, "the line with a trailing comma");
        assert_eq!(parse_error["id"], 2, "{parse_error}");
        assert_eq!(parse_error["error"]["code"], -32700, "{parse_error}");

        let lone_surrogate = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"submit_csv","arguments":{"csv":"name\n\ud800\n"}}}"#;
        send(&mut stdin, lone_surrogate);
        let invalid_params = reply(&received, "the submit_csv holding \\ud800");
        assert_eq!(invalid_params["id"], 3, "{invalid_params}");
        assert_eq!(invalid_params["error"]["code"], -32602, "{invalid_params}");
        assert!(
            invalid_params["error"]["message"]
                .as_str()
                .unwrap()
                .contains("lone UTF-16 surrogate"),
            "{invalid_params}"
        );

        // JSON that rmcp answered without its id (the call then hung).
        let bad_params = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[1,2]}"#;
        send(&mut stdin, bad_params);
        let answered = reply(&received, "a tools/call whose params are an array");
        assert_eq!(answered["id"], 9, "{answered}");
        assert_eq!(answered["error"]["code"], -32602, "{answered}");
        // JSON-RPC allows any number as an id (issue 24, item 18).
        let fractional_id = r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#;
        send(&mut stdin, fractional_id);
        let answered = reply(&received, "a request whose id is 1.5");
        assert_eq!(answered["id"], 1.5, "{answered}");
        assert!(answered["result"]["tools"].is_array(), "{answered}");

        send(
            &mut stdin,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"submit_csv","arguments":{"csv":"name\nAlice\n"}}}"#,
        );
        let saved = reply(&received, "the valid submit_csv after them");
        assert_eq!(saved["id"], 4, "{saved}");
        assert_ne!(saved["result"]["isError"], true, "{saved}");
        assert!(
            saved["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("Answer saved: 1 row"),
            "{saved}"
        );

        drop(stdin);
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.0.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "the proxy did not exit at the end of its input"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(
            std::fs::read_to_string(log.join("answer.csv")).unwrap(),
            "name\nAlice\n"
        );
        let calls = json_file(&log.join("calls.json"))["calls"].clone();
        assert_eq!(calls.as_array().unwrap().len(), 4, "{calls:#}");
        assert_eq!(calls[2]["unreadable"]["code"], -32602, "{}", calls[2]);
        let calls = json!([calls[0], calls[1], calls[3]]);
        let (first, second) = (&calls[0], &calls[1]);
        assert_eq!(first["tool"], "");
        assert_eq!(first["ok"], false);
        assert_eq!(first["unreadable"]["code"], -32700);
        assert_eq!(first["unreadable"]["id"], 2);
        assert_eq!(first["unreadable"]["method"], "tools/list");
        assert_eq!(first["unreadable"]["line_bytes"], trailing_comma.len());
        assert!(
            first["error"].as_str().unwrap().contains("trailing comma"),
            "{first}"
        );
        assert_eq!(second["tool"], "submit_csv");
        assert_eq!(second["arguments"], Value::Null);
        assert_eq!(second["unreadable"]["code"], -32602);
        assert_eq!(second["unreadable"]["id"], 3);
        assert_eq!(second["unreadable"]["method"], "tools/call");
        assert_eq!(second["unreadable"]["line_bytes"], lone_surrogate.len());
        assert_eq!(second["unreadable"]["line_preview"], lone_surrogate);
        assert_eq!(calls[2]["tool"], "submit_csv");
        assert_eq!(calls[2]["ok"], true);
        assert!(calls[2].get("unreadable").is_none(), "{}", calls[2]);
        let metrics = json_file(&log.join("metrics.json"));
        assert_eq!(metrics["calls"], 4, "{metrics}");
        assert_eq!(metrics["unreadable_requests"], 3, "{metrics}");
        assert_eq!(metrics["tools_called"], json!(["submit_csv"]), "{metrics}");
        assert_eq!(metrics["submissions"], 1, "{metrics}");
    }

    /// The proxy started by hand with `extra` flags, and its session
    /// initialized.
    fn initialized(
        log: &Path,
        profile: &Path,
        extra: &[&str],
    ) -> (
        KillOnDrop,
        std::process::ChildStdin,
        std::sync::mpsc::Receiver<String>,
    ) {
        let (child, mut stdin, received) = proxy_by_hand(log, profile, extra);
        send(
            &mut stdin,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"by-hand","version":"0"}}}"#,
        );
        assert_eq!(reply(&received, "initialize")["id"], 1);
        send(
            &mut stdin,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        (child, stdin, received)
    }

    /// Closes the proxy's input and waits for it to exit.
    fn close(mut child: KillOnDrop, stdin: std::process::ChildStdin) {
        drop(stdin);
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.0.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "the proxy did not exit at the end of its input"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A `submit_csv` call with id `id` whose arguments nest `depth` levels
    /// (the arguments object counts as one).
    fn nested_submission(id: u64, depth: usize) -> String {
        let deep = format!("{}1{}", "[".repeat(depth - 1), "]".repeat(depth - 1));
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"submit_csv","arguments":{{"csv":"a\n1\n","deep":{deep}}}}}}}"#
        )
    }

    /// Issue 24, item 18: a call whose arguments nested 126 levels or more
    /// was answered -32700 with id null, so the agent's call waited for
    /// ever. Every depth past what the proxy reads is answered under the
    /// call's own id (-32602), the session goes on, and a call at the
    /// limit is taken and recorded in a calls.json that still reads.
    #[test]
    fn a_deeply_nested_call_is_answered_under_its_own_id() {
        let dir = tempfile::tempdir().unwrap();
        let profile = demo_profile(dir.path(), "demo-kg", &[]);
        let log = dir.path().join("log");
        let (child, mut stdin, received) = initialized(&log, &profile, &[]);
        send(&mut stdin, &nested_submission(10, 124));
        let saved = reply(&received, "arguments 124 deep");
        assert_eq!(saved["id"], 10, "{saved}");
        assert!(
            saved["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .starts_with("Answer saved: 1 row"),
            "{saved}"
        );
        for (id, depth) in [(11, 125), (12, 126), (13, 127), (14, 10_000)] {
            send(&mut stdin, &nested_submission(id, depth));
            let answered = reply(&received, &format!("arguments {depth} deep"));
            assert_eq!(answered["id"], id, "{depth}: {answered}");
            assert_eq!(answered["error"]["code"], -32602, "{depth}: {answered}");
            let message = answered["error"]["message"].as_str().unwrap();
            assert!(
                message.contains(&format!(
                    "nests arrays and objects {} levels deep, and the proxy reads at most 126",
                    depth + 2
                )),
                "{message}"
            );
        }
        send(&mut stdin, r#"{"jsonrpc":"2.0","id":15,"method":"ping"}"#);
        let pong = reply(&received, "a ping after them");
        assert_eq!(pong["id"], 15, "{pong}");
        assert!(pong["result"].is_object(), "{pong}");
        close(child, stdin);
        let calls = json_file(&log.join("calls.json"))["calls"].clone();
        let calls = calls.as_array().unwrap();
        assert_eq!(calls.len(), 5, "{calls:?}");
        let mut deep = &calls[0]["arguments"]["deep"];
        let mut levels = 0;
        while let Some(inner) = deep.get(0) {
            levels += 1;
            deep = inner;
        }
        assert_eq!((levels, deep.clone()), (123, json!(1)));
        for (entry, id) in calls[1..].iter().zip(11..) {
            assert_eq!(entry["unreadable"]["code"], -32602, "{entry}");
            assert_eq!(entry["unreadable"]["id"], id, "{entry}");
            assert_eq!(entry["tool"], "submit_csv", "{entry}");
        }
    }

    /// Issue 24, item 18: a batch was answered once under id null, so none
    /// of the requests in it was answered under its id. The proxy answers a
    /// batch with a batch, each request under its own id.
    #[test]
    fn each_request_in_a_batch_is_answered_under_its_own_id() {
        let dir = tempfile::tempdir().unwrap();
        let profile = demo_profile(dir.path(), "demo-kg", &[]);
        let log = dir.path().join("log");
        let (child, mut stdin, received) = initialized(&log, &profile, &[]);
        send(
            &mut stdin,
            r#"[{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"submit_csv","arguments":{"csv":"a\n"}}},{"jsonrpc":"2.0","method":"notifications/progress"},{"jsonrpc":"2.0","id":"x31","method":"ping"}]"#,
        );
        let line = received
            .recv_timeout(Duration::from_secs(5))
            .expect("a reply to the batch");
        let replies: Value = serde_json::from_str(&line).unwrap();
        let ids: Vec<Value> = replies
            .as_array()
            .unwrap_or_else(|| panic!("not a batch: {line}"))
            .iter()
            .map(|r| r["id"].clone())
            .collect();
        assert_eq!(ids, [json!(30), json!("x31")], "{line}");
        assert_eq!(replies[0]["error"]["code"], -32600, "{line}");
        close(child, stdin);
        let calls = json_file(&log.join("calls.json"))["calls"].clone();
        assert_eq!(calls[0]["unreadable"]["code"], -32600, "{calls}");
        assert!(!log.join("answer.csv").exists(), "the batch was not run");
    }

    /// Issue 24, item 18: two calls in flight under one id got one reply
    /// between them (rmcp keeps one entry per id), so one of them waited
    /// for ever. The second is answered at once under that id (-32600), the
    /// first when it ends, and the id is free again after.
    #[test]
    fn two_calls_in_flight_with_one_id_are_each_answered() {
        let dir = tempfile::tempdir().unwrap();
        let profile = demo_profile(dir.path(), "demo-kg", &["--fault", "hang-after=1"]);
        let log = dir.path().join("log");
        let (child, mut stdin, received) = initialized(&log, &profile, &["--timeout", "3"]);
        let list = |id: u64| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"list_graphs","arguments":{{}}}}}}"#
            )
        };
        let submit = |id: u64, csv: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"submit_csv","arguments":{{"csv":"{csv}"}}}}}}"#
            )
        };
        send(&mut stdin, &list(20));
        assert_eq!(reply(&received, "the first list_graphs")["id"], 20);
        // The server hangs from now on: this one stays in flight.
        send(&mut stdin, &list(21));
        std::thread::sleep(Duration::from_millis(300));
        send(&mut stdin, &submit(21, "a\\n1\\n"));
        let refused = reply(&received, "the second call under id 21");
        assert_eq!(refused["id"], 21, "{refused}");
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("id 21 is already in use by a request still in flight"),
            "{refused}"
        );
        let hung = reply(&received, "the call in flight, at its timeout");
        assert_eq!(hung["id"], 21, "{hung}");
        assert_eq!(hung["result"]["isError"], true, "{hung}");
        // Its reply sent, the id may be used again.
        send(&mut stdin, &submit(21, "b\\n2\\n"));
        let saved = reply(&received, "a call under id 21 once it is free");
        assert_eq!(saved["id"], 21, "{saved}");
        assert_ne!(saved["result"]["isError"], true, "{saved}");
        close(child, stdin);
        assert_eq!(
            std::fs::read_to_string(log.join("answer.csv")).unwrap(),
            "b\n2\n"
        );
        let calls = json_file(&log.join("calls.json"))["calls"].clone();
        assert_eq!(calls.as_array().unwrap().len(), 4, "{calls:#}");
        assert_eq!(calls[1]["unreadable"]["code"], -32600, "{}", calls[1]);
        assert_eq!(calls[1]["unreadable"]["id"], 21, "{}", calls[1]);
        assert_eq!(calls[1]["tool"], "submit_csv", "{}", calls[1]);
        assert_eq!(calls[2]["tool"], "list_graphs", "{}", calls[2]);
        assert_eq!(calls[2]["ok"], false, "{}", calls[2]);
    }

    /// Issue 24, item 16: a correct SPARQL result whose variables are named
    /// `status`, `message`, `reason`, `warning` and `error`, with cells
    /// holding failure words, was recorded as a soft error, counted in
    /// queries_errored, and under --strict-upstream-errors the agent was
    /// told its rows failed. Through mcp-server-sparql (SPARQL 1.1 JSON
    /// results) and the demo KG server (`{columns, rows}` of typed cells),
    /// the table is data; a malformed query is still a soft error.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_correct_table_whose_columns_are_named_like_errors_is_not_a_soft_error() {
        let dir = tempfile::tempdir().unwrap();
        let (_server, port) = tiny_oxigraph(dir.path());
        let query = r#"SELECT ?status ?message ?reason ?warning ?error WHERE { VALUES (?status ?message ?reason ?warning ?error) { ("Service Unavailable" "rate limit exceeded" "HTTP Error 503" "Traceback (most recent call last):" "connection refused") ("Bad Gateway" "Too Many Requests" "status code 500" "timed out" "urlopen error") } }"#;
        let sparql = dir.path().join("sparql.toml");
        std::fs::write(
            &sparql,
            format!(
                "name = \"sparql\"\n[upstream]\ntransport = \"stdio\"\ncommand = {:?}\nargs = [\"--endpoint\", \"http://127.0.0.1:{port}/query\"]\n\
                 env = {{ NO_PROXY = \"127.0.0.1\", no_proxy = \"127.0.0.1\" }}\n",
                tool("mcp-server-sparql").display().to_string()
            ),
        )
        .unwrap();
        let kg = demo_profile(dir.path(), "demo-kg", &[]);
        for (profile, arguments, bad) in [
            (
                &sparql,
                json!({"query_string": query}),
                json!({"query_string": "SELECT ?s WHERE { ?s ?p }"}),
            ),
            (
                &kg,
                json!({"graph": "spoke-okn", "query_string": query}),
                json!({"graph": "spoke-okn", "query_string": "SELECT ?s WHERE { ?s ?p }"}),
            ),
        ] {
            let log = dir.path().join(format!(
                "log-{}",
                profile.file_stem().unwrap().to_string_lossy()
            ));
            let client = proxy(
                &log,
                &[
                    "--profile",
                    profile.to_str().unwrap(),
                    "--timeout",
                    "60",
                    "--strict-upstream-errors",
                ],
            )
            .await;
            let table = call(&client, "query", arguments).await;
            assert!(
                text(&table).contains("Service Unavailable"),
                "{}",
                text(&table)
            );
            assert_ne!(table.is_error, Some(true), "{}", text(&table));
            let failed = call(&client, "query", bad).await;
            assert_eq!(failed.is_error, Some(true), "{}", text(&failed));
            client.cancel().await.unwrap();
            let calls = json_file(&log.join("calls.json"))["calls"].clone();
            assert_eq!(calls[0]["soft_error"], Value::Null, "{}", calls[0]);
            let metrics = json_file(&log.join("metrics.json"));
            assert_eq!(metrics["queries_ok"], 1, "{metrics}");
            assert_eq!(metrics["queries_errored"], 1, "{metrics}");
        }
        let calls = json_file(&dir.path().join("log-sparql/calls.json"))["calls"].clone();
        assert_eq!(calls[1]["soft_error"], "malformed query", "{}", calls[1]);
    }

    // Data echoing a failure word ("rate-limiting enzyme") was taken for a soft error.
    #[tokio::test(flavor = "multi_thread")]
    async fn data_that_mentions_failure_words_is_not_a_soft_error() {
        let dir = tempfile::tempdir().unwrap();
        let profile = demo_profile(dir.path(), "demo-kg", &[]);
        let log = dir.path().join("log");
        let client = proxy(
            &log,
            &[
                "--profile",
                profile.to_str().unwrap(),
                "--strict-upstream-errors",
            ],
        )
        .await;
        let result = call(
            &client,
            "lookup_uri",
            json!({"label": "rate-limiting enzyme"}),
        )
        .await;
        assert_ne!(result.is_error, Some(true));
        client.cancel().await.unwrap();
        let calls = json_file(&log.join("calls.json"))["calls"].clone();
        assert_eq!(calls[0]["soft_error"], Value::Null);
    }

    // A server that died mid-episode left the call in flight waiting for
    // --timeout instead of failing when the transport closed.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_call_in_flight_fails_as_soon_as_the_server_dies() {
        let dir = tempfile::tempdir().unwrap();
        let profile = demo_profile(dir.path(), "demo-kg", &["--fault", "die-after=1"]);
        let log = dir.path().join("log");
        let client = proxy(
            &log,
            &["--profile", profile.to_str().unwrap(), "--timeout", "60"],
        )
        .await;
        call(&client, "list_graphs", json!({})).await;
        let started = std::time::Instant::now();
        let died = call(&client, "list_graphs", json!({})).await;
        let waited = started.elapsed();
        assert_eq!(died.is_error, Some(true));
        assert!(
            waited < Duration::from_secs(10),
            "waited {waited:?} for a dead server"
        );
        client.cancel().await.unwrap();
        // The same over streamable HTTP.
        let (_server, port) = crate::support::kg_server_http(&["--fault", "die-after=1"]);
        let remote = dir.path().join("remote.toml");
        std::fs::write(
            &remote,
            format!("name = \"demo-kg\"\n[upstream]\ntransport = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
        )
        .unwrap();
        let client = proxy(
            &dir.path().join("log-http"),
            &["--profile", remote.to_str().unwrap(), "--timeout", "60"],
        )
        .await;
        call(&client, "list_graphs", json!({})).await;
        let started = std::time::Instant::now();
        let died = call(&client, "list_graphs", json!({})).await;
        let waited = started.elapsed();
        assert_eq!(died.is_error, Some(true), "{}", text(&died));
        assert!(
            waited < Duration::from_secs(10),
            "waited {waited:?} for a dead HTTP server"
        );
        client.cancel().await.unwrap();
    }

    /// `oxigraph serve` on 127.0.0.1 over two triples; killed on drop.
    fn tiny_oxigraph(dir: &Path) -> (KillOnDrop, u16) {
        let oxigraph = tool("oxigraph");
        let data = dir.join("data.nt");
        std::fs::write(
            &data,
            "<http://ex.org/a> <http://www.w3.org/2000/01/rdf-schema#label> \"Alpha\" .\n\
             <http://ex.org/b> <http://www.w3.org/2000/01/rdf-schema#label> \"error\" .\n",
        )
        .unwrap();
        let db = dir.join("db");
        let status = std::process::Command::new(&oxigraph)
            .args(["load", "--location"])
            .arg(&db)
            .arg("--file")
            .arg(&data)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "oxigraph load failed");
        crate::support::oxigraph_serve(&oxigraph, &db, false)
    }

    // mcp-server-sparql answers an endpoint's 404 and a malformed query
    // with isError=false and {"error": ...}: both were recorded ok, with no
    // soft error, and counted among the queries that worked.
    #[tokio::test(flavor = "multi_thread")]
    async fn mcp_server_sparql_error_replies_are_soft_errors_and_its_results_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let (_server, port) = tiny_oxigraph(dir.path());
        let profile = |name: &str, endpoint: &str| {
            let path = dir.path().join(format!("{name}.toml"));
            std::fs::write(
                &path,
                format!(
                    "name = \"{name}\"\n[upstream]\ntransport = \"stdio\"\ncommand = {:?}\nargs = [\"--endpoint\", \"{endpoint}\"]\n\
                     env = {{ NO_PROXY = \"127.0.0.1\", no_proxy = \"127.0.0.1\" }}\n",
                    tool("mcp-server-sparql").display().to_string()
                ),
            )
            .unwrap();
            path
        };
        let good = profile("sparql", &format!("http://127.0.0.1:{port}/query"));
        let log = dir.path().join("log");
        let client = proxy(
            &log,
            &["--profile", good.to_str().unwrap(), "--timeout", "60"],
        )
        .await;
        assert_eq!(tool_names(&client).await, ["query", "submit_csv"]);
        // A good query whose result holds the word "error" in a cell.
        let result = call(
            &client,
            "query",
            json!({"query_string": "SELECT ?l WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l } ORDER BY ?l"}),
        )
        .await;
        assert!(text(&result).contains("\"error\""), "{}", text(&result));
        // FastMCP sends the same JSON as text and as structured content:
        // what the agent received is counted once.
        assert!(result.structured_content.is_some());
        let received = text(&result).chars().count();
        let malformed = call(
            &client,
            "query",
            json!({"query_string": "SELECT ?s WHERE { ?s ?p }"}),
        )
        .await;
        assert_ne!(malformed.is_error, Some(true), "it fails softly");
        assert!(
            text(&malformed).contains("QueryBadFormed"),
            "{}",
            text(&malformed)
        );
        client.cancel().await.unwrap();
        let calls = json_file(&log.join("calls.json"))["calls"].clone();
        assert_eq!(calls[0]["soft_error"], Value::Null, "{}", calls[0]);
        assert_eq!(calls[0]["result_chars"], received, "{}", calls[0]);
        assert_eq!(calls[1]["soft_error"], "malformed query", "{}", calls[1]);
        let metrics = json_file(&log.join("metrics.json"));
        assert_eq!(
            (
                metrics["queries_ok"].clone(),
                metrics["queries_errored"].clone()
            ),
            (json!(1), json!(1)),
            "{metrics}"
        );
        let both = received + calls[1]["result_chars"].as_u64().unwrap() as usize;
        assert_eq!(metrics["reply_chars"], json!({"query": both}), "{metrics}");
        // An endpoint that answers 404.
        let missing = profile(
            "sparql404",
            &format!("http://127.0.0.1:{port}/no-such-endpoint"),
        );
        let log = dir.path().join("log404");
        let client = proxy(
            &log,
            &["--profile", missing.to_str().unwrap(), "--timeout", "60"],
        )
        .await;
        let gone = call(
            &client,
            "query",
            json!({"query_string": "SELECT * WHERE { ?s ?p ?o }"}),
        )
        .await;
        assert_ne!(gone.is_error, Some(true), "it fails softly");
        client.cancel().await.unwrap();
        let calls = json_file(&log.join("calls.json"))["calls"].clone();
        assert_eq!(
            calls[0]["soft_error"], "HTTP 404 (endpoint not found)",
            "{}",
            calls[0]
        );
        let metrics = json_file(&log.join("metrics.json"));
        assert_eq!(metrics["queries_errored"], 1, "{metrics}");
        assert_eq!(metrics["upstream_soft_errors"], json!({"query": 1}));
    }

    /// Issue 24, item 16: correct replies were recorded as soft errors
    /// (and, under --strict-upstream-errors, the agent told its rows
    /// failed): a CSV table with a byte order mark or after a line of
    /// prose, a GFM table without outer pipes, SPARQL XML results, SPARQL
    /// JSON results encoded twice, JSON lines, a Python repr of rows, and
    /// replies whose own members merely name errors (`"errors": 0`,
    /// `"error": "none"`, `"status": "success"` beside "Query returned 500
    /// rows", "Count of bad request logs", "100 requests left before the
    /// rate limit"). Every reply of `tests/fixtures/soft-errors/replies.json`,
    /// through the real proxy, gets the label the case gives, and the agent
    /// is told of a failure only where there is one.
    #[tokio::test(flavor = "multi_thread")]
    async fn values_in_a_table_are_data_and_only_the_replys_own_words_are_evidence() {
        let dir = tempfile::tempdir().unwrap();
        let profile = reply_profile(dir.path(), "reply", &[]);
        let cases = json_file(&repo().join("tests/fixtures/soft-errors/replies.json"));
        let cases = cases["cases"].as_array().unwrap();
        let log = dir.path().join("log");
        let client = proxy(
            &log,
            &[
                "--profile",
                profile.to_str().unwrap(),
                "--strict-upstream-errors",
            ],
        )
        .await;
        for case in cases {
            let result = call(&client, "echo", json!({"text": case["text"]})).await;
            assert_eq!(
                result.is_error == Some(true),
                case["expect"].is_string(),
                "{}: {}",
                case["why"],
                text(&result)
            );
            assert_eq!(
                text(&result),
                case["text"].as_str().unwrap(),
                "payload unchanged"
            );
        }
        client.cancel().await.unwrap();
        let calls = json_file(&log.join("calls.json"))["calls"].clone();
        let calls = calls.as_array().unwrap();
        assert_eq!(calls.len(), cases.len());
        for (call, case) in calls.iter().zip(cases) {
            assert_eq!(call["soft_error"], case["expect"], "{}", case["why"]);
        }
        let metrics = json_file(&log.join("metrics.json"));
        let errors = cases.iter().filter(|c| c["expect"].is_string()).count();
        assert_eq!(metrics["upstream_soft_errors"], json!({"echo": errors}));
    }

    /// The next line from the proxy within `seconds`, as it was written.
    fn raw_line(received: &std::sync::mpsc::Receiver<String>, seconds: u64, what: &str) -> String {
        received
            .recv_timeout(Duration::from_secs(seconds))
            .unwrap_or_else(|e| panic!("no line for {what} within {seconds} s ({e})"))
    }

    /// Issue 24, item 18: a request with id `1e400` was answered under id
    /// null with a false message ("not JSON"), and integer ids past 2^63
    /// were refused with -32600, though JSON-RPC allows any number; `2.0`,
    /// `1e3` and `-0` were echoed as `2`, `1000` and `0`. Each is served,
    /// and its reply carries the id as the agent wrote it, byte for byte.
    #[test]
    fn any_number_is_an_id_and_is_echoed_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let profile = demo_profile(dir.path(), "demo-kg", &[]);
        let log = dir.path().join("log");
        let (child, mut stdin, received) = initialized(&log, &profile, &[]);
        let ids = [
            "1e400",
            "9223372036854775808",
            "18446744073709551616",
            "123456789012345678901234567890123456789",
            "-123456789012345678901234567890123456789",
            "1.5",
            "2.0",
            "1e3",
            "-0",
            "1E+2",
        ];
        for (n, id) in ids.iter().enumerate() {
            send(
                &mut stdin,
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"submit_csv","arguments":{{"csv":"n\n{n}\n"}}}}}}"#
                ),
            );
            let line = raw_line(&received, 5, id);
            assert!(
                line.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"#)),
                "{id}: {line}"
            );
            assert!(line.contains("Answer saved: 1 row"), "{id}: {line}");
        }
        // A ping under such an id goes through too.
        send(
            &mut stdin,
            r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#,
        );
        assert_eq!(
            raw_line(&received, 5, "a ping"),
            r#"{"jsonrpc":"2.0","id":1e400,"result":{}}"#
        );
        close(child, stdin);
        assert_eq!(
            std::fs::read_to_string(log.join("answer.csv")).unwrap(),
            format!("n\n{}\n", ids.len() - 1)
        );
        let metrics = json_file(&log.join("metrics.json"));
        assert_eq!(metrics["submissions"], ids.len(), "{metrics}");
        assert_eq!(
            metrics["calls"],
            ids.len(),
            "none was unreadable: {metrics}"
        );
    }

    /// Issue 24, item 18: a batch holding one request nested too deep got
    /// one reply, not a batch, under id null; a batch with a trailing comma
    /// or cut short got -32700 under id null though the requests before the
    /// damage were whole. Each request is answered under its own id: the
    /// deep one with the depth error, the others as a batch is.
    #[test]
    fn each_request_of_a_deep_or_damaged_batch_is_answered_under_its_own_id() {
        let dir = tempfile::tempdir().unwrap();
        let profile = demo_profile(dir.path(), "demo-kg", &[]);
        let log = dir.path().join("log");
        let (child, mut stdin, received) = initialized(&log, &profile, &[]);
        let call = |id: &str, arguments: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"list_graphs","arguments":{arguments}}}}}"#
            )
        };
        let deep = format!(r#"{{"q":{}{}}}"#, "[".repeat(300), "]".repeat(300));
        for (line, want) in [
            (
                format!("[{},{}]", call("163", "{}"), call("164", &deep)),
                vec![("163", -32600), ("164", -32602)],
            ),
            (
                format!("[{},{},]", call("168", "{}"), call("169", "{}")),
                vec![("168", -32700), ("169", -32700)],
            ),
            (
                format!("[{},{}", call("170", "{}"), &call("171", "{}")[..30]),
                vec![("170", -32700), ("171", -32700)],
            ),
        ] {
            send(&mut stdin, &line);
            let reply = raw_line(&received, 5, "the batch");
            let replies: Vec<Value> = serde_json::from_str(&reply)
                .unwrap_or_else(|e| panic!("not a batch ({e}): {reply}"));
            let got: Vec<(String, i64)> = replies
                .iter()
                .map(|r| (r["id"].to_string(), r["error"]["code"].as_i64().unwrap()))
                .collect();
            let want: Vec<(String, i64)> = want
                .iter()
                .map(|(id, code)| (id.to_string(), *code))
                .collect();
            assert_eq!(got, want, "{reply}");
        }
        close(child, stdin);
        let calls = json_file(&log.join("calls.json"))["calls"].clone();
        let codes: Vec<Value> = calls
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["unreadable"]["code"].clone())
            .collect();
        assert_eq!(codes, [json!(-32600), json!(-32700), json!(-32700)]);
    }

    /// Issue 24, item 18: an upstream reply nested 125 levels or more (in
    /// `structuredContent`, `_meta` or `error.data`), or cut short, was
    /// dropped without a word: the call waited the whole --timeout, was
    /// recorded as "no reply within N s" and counted toward the breaker. It
    /// ends at once with an error reply that says the reply could not be
    /// read, recorded in calls.json, and the session goes on.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_reply_the_proxy_cannot_read_ends_its_call_at_once_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let profile = reply_profile(dir.path(), "reply", &[]);
        let log = dir.path().join("log");
        let client = proxy(
            &log,
            &["--profile", profile.to_str().unwrap(), "--timeout", "60"],
        )
        .await;
        let shapes = [
            ("structured", 125),
            ("meta", 200),
            ("error", 100_000),
            ("truncated", 1),
        ];
        for (place, depth) in shapes {
            let started = Instant::now();
            let result = call(&client, "deep", json!({"where": place, "depth": depth})).await;
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{place} waited"
            );
            assert_eq!(result.is_error, Some(true), "{place}");
            assert!(
                text(&result).starts_with(
                    "The server under test replied, but its reply could not be read: "
                ),
                "{place}: {}",
                text(&result)
            );
        }
        // Not a dead session: the next call is answered.
        let echoed = call(&client, "echo", json!({"text": "still here"})).await;
        assert_eq!(text(&echoed), "still here");
        client.cancel().await.unwrap();
        let calls = json_file(&log.join("calls.json"))["calls"].clone();
        for (i, (place, _)) in shapes.iter().enumerate() {
            let error = calls[i]["error"].as_str().unwrap_or_default();
            assert!(
                error.starts_with("the server's reply could not be read: "),
                "{place}: {error}"
            );
            assert_eq!(calls[i]["forwarded"], true);
        }
        assert!(
            calls[0]["error"].as_str().unwrap().contains(
                "nests arrays and objects 128 levels deep, more than the 127 levels the proxy reads"
            ),
            "{}",
            calls[0]
        );
        let metrics = json_file(&log.join("metrics.json"));
        assert_eq!(metrics["lost_upstream"], Value::Null, "{metrics}");
    }
}
