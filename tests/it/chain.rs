//! The whole chain through real third-party MCP servers (issue 25, "Real
//! servers"): `oxigraph serve` (PyPI `oxigraph`) loaded with `demo/kg`, each
//! graph under its IRI, and in front of it `mcp-server-sparql` (PyPI) or
//! `mcp-proto-okn` (PyPI), all installed by `scripts/test` and started on
//! 127.0.0.1 by the test. `probe`, `reference`, `run`, `report` and `build`
//! are the real CLI; the agent is the scripted one (our MCP client playing
//! the answer key through the proxy), or the real claude CLI with
//! `standin-model` playing it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support::{KillOnDrop, okn, okn_in, repo, stderr, stdout, tool};

/// The first question of `demo/benchmarks-single` and its condition.
const QUESTION: &str = "biobricks-ice-active-chemicals_single";

/// `oxigraph serve` over `demo/kg` (every `X.ttl` into the graph its
/// `X.ttl.graph` names, the default graph their union), killed on drop;
/// its query URL.
fn oxigraph_demo_kg(dir: &Path) -> (KillOnDrop, String) {
    let oxigraph = tool("oxigraph");
    let db = dir.join("db");
    let kg = repo().join("demo/kg");
    let mut loaded = 0;
    for entry in std::fs::read_dir(&kg).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "ttl") {
            continue;
        }
        let graph = std::fs::read_to_string(path.with_extension("ttl.graph")).unwrap();
        let status = Command::new(&oxigraph)
            .args(["load", "--location"])
            .arg(&db)
            .arg("--file")
            .arg(&path)
            .args(["--graph", graph.trim()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "oxigraph load {}", path.display());
        loaded += 1;
    }
    assert!(loaded >= 6, "{loaded} graphs in demo/kg");
    let (child, port) = crate::support::oxigraph_serve(&oxigraph, &db, true);
    (child, format!("http://127.0.0.1:{port}/query"))
}

/// A stdio profile named `name` starting `command` with `args`.
fn profile(dir: &Path, name: &str, command: &Path, args: &[&str]) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\n[upstream]\ntransport = \"stdio\"\ncommand = {:?}\nargs = [{}]\n",
            command.display().to_string(),
            args.join(", ")
        ),
    )
    .unwrap();
    path
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    okn_in(dir)
        // A proxy of the machine must not take requests to 127.0.0.1.
        .env("NO_PROXY", "127.0.0.1")
        .env("no_proxy", "127.0.0.1")
        .args(args)
        .output()
        .unwrap()
}

/// The ground truth `reference` built for QUESTION, as CSV.
fn key_csv(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(format!("gt/{QUESTION}.csv"))).unwrap()
}

/// Issue 25: no test ran the chain through a real third-party SPARQL
/// server. `probe` lists mcp-server-sparql's one tool, `reference` takes
/// the ground truth from the oxigraph server behind it, `run` plays each
/// question through the proxy and that server, and `report` and `build`
/// publish what was recorded: the rows the server returned, scored exact.
#[test]
fn the_whole_chain_runs_through_mcp_server_sparql_over_oxigraph() {
    let dir = tempfile::tempdir().unwrap();
    let (_oxigraph, url) = oxigraph_demo_kg(dir.path());
    let server = tool("mcp-server-sparql");
    let profile = profile(dir.path(), "sparql", &server, &["--endpoint", &url]);
    let profile = profile.to_str().unwrap();

    let o = run_in(dir.path(), &["probe", "--profile", profile]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("server: sparql (stdio "), "{text}");
    assert!(text.contains("tools: 1 (query)"), "{text}");
    assert!(
        text.contains("all-tools: 2 tools: query, submit_csv; the server sends no instructions"),
        "{text}"
    );

    let corpus = repo().join("demo/benchmarks-single");
    let corpus = corpus.to_str().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "reference",
            "--corpus",
            corpus,
            "--endpoint",
            &url,
            "--ground-truth",
            "gt",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("12 records: 12 built, 0 reused"),
        "{}",
        stdout(&o)
    );
    let key = key_csv(dir.path());
    assert!(
        key.starts_with("chemicalName,chemical,activeAssays,avgAC50\n")
            && key
                .contains("\nBisphenol A,https://ice.ntp.niehs.nih.gov/chemical/DTXSID7020182,3,"),
        "{key}"
    );

    let o = run_in(
        dir.path(),
        &[
            "run",
            "--corpus",
            corpus,
            "--kg-hint",
            "tags",
            "--agent",
            "scripted:oracle",
            "--limit",
            "4",
            "--tools",
            "all-tools",
            "--profile",
            profile,
            "--ground-truth",
            "gt",
            "--reference-endpoint",
            &url,
            "--out",
            "runs",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o)
            .trim_end()
            .ends_with("exact 1.00 · mean F1 1.00 over 4 questions"),
        "{}",
        stdout(&o)
    );
    let runs = dir.path().join("runs");
    let condition = json(&runs.join("conditions/sparql-all-tools__kg-named.json"));
    assert_eq!(condition["identity"]["server"], "sparql");
    assert_eq!(condition["identity"]["agent"], "scripted:oracle");
    assert_eq!(condition["aggregate"]["exact_rate"], 1.0);
    assert_eq!(condition["aggregate"]["questions"], 4);
    let results = runs.join(format!("{QUESTION}_results/sparql-all-tools__kg-named"));
    let result = json(&results.join("result.json"));
    let attempt = &result["attempts"][0];
    assert_eq!(attempt["exact"], true, "{attempt}");
    assert_eq!(attempt["score"]["key_rows"], 7, "{attempt}");
    assert_eq!(attempt["score"]["matched_rows"], 7, "{attempt}");
    assert_eq!(
        attempt["tools_called"],
        serde_json::json!(["query", "submit_csv"])
    );
    // What was submitted is the server's rows, as the key holds them.
    let answer = std::fs::read_to_string(results.join("attempt-1/answer.csv")).unwrap();
    assert_eq!(answer.replace("\r\n", "\n"), key);
    let calls = json(&results.join("attempt-1/calls.json"));
    let query = &calls["calls"][0];
    assert_eq!(query["tool"], "query");
    assert!(
        query["arguments"]["query_string"]
            .as_str()
            .is_some_and(|q| q.contains("SELECT")),
        "{query}"
    );

    let o = okn_in(dir.path())
        .args(["report", "runs"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        crate::support::flat(&stdout(&o)).contains(
            "sparql, all tools · KG named questions 4 · exact 1.00 · strict 1.00 · ordered 1.00 · \
             mean F1 1.00"
        ),
        "{}",
        stdout(&o)
    );

    let o = okn_in(dir.path()).arg("build").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let readme = std::fs::read_to_string(runs.join("README.md")).unwrap();
    assert!(readme.contains("sparql"), "{readme}");
    let page = std::fs::read_to_string(dir.path().join(format!(
        "site/roots/runs/a/{QUESTION}/sparql-all-tools__kg-named/attempt-1.html"
    )))
    .unwrap();
    assert!(page.contains("DTXSID7020182"), "the answer is on its page");
    let o = okn_in(dir.path())
        .args(["build", "--check"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

/// mcp-proto-okn, its SPARQL client pointed at the local oxigraph server
/// instead of FRINK's federation endpoint (which it hard-codes), started
/// by the okn-venv's Python.
const PROTO_OKN_LOCAL: &str = r#"import os, sys
import SPARQLWrapper as wrapper
import mcp_proto_okn.server as server
local = os.environ["OKN_TEST_ENDPOINT"]
real = wrapper.SPARQLWrapper
server.SPARQLWrapper = lambda url, *a, **k: real(local, *a, **k)
sys.argv = ["mcp-proto-okn", *sys.argv[1:]]
server.main()
"#;

/// Issue 25: mcp-proto-okn replies `{"columns", "data", "count"}`, a shape
/// the scripted agent and the stand-in did not read: every attempt through
/// it ended "no answer", though its rows score exact.
#[test]
fn an_agent_through_mcp_proto_okn_submits_the_rows_it_returned() {
    let dir = tempfile::tempdir().unwrap();
    let (_oxigraph, url) = oxigraph_demo_kg(dir.path());
    let python = tool("mcp-proto-okn").with_file_name("python");
    let script = dir.path().join("proto_okn_local.py");
    std::fs::write(&script, PROTO_OKN_LOCAL).unwrap();
    let profile = profile(
        dir.path(),
        "proto-okn",
        &python,
        &[script.to_str().unwrap(), "--endpoint", &url],
    );
    let corpus = repo().join("demo/benchmarks-single");
    let corpus = corpus.to_str().unwrap();
    let o = run_in(
        dir.path(),
        &[
            "reference",
            "--corpus",
            corpus,
            "--endpoint",
            &url,
            "--ground-truth",
            "gt",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = okn_in(dir.path())
        .env("NO_PROXY", "127.0.0.1")
        .env("no_proxy", "127.0.0.1")
        .env("OKN_TEST_ENDPOINT", &url)
        .args([
            "run",
            "--corpus",
            corpus,
            "--kg-hint",
            "tags",
            "--agent",
            "scripted:oracle",
            "--limit",
            "1",
            "--tools",
            "all-tools",
            "--profile",
            profile.to_str().unwrap(),
            "--ground-truth",
            "gt",
            "--reference-endpoint",
            &url,
            "--out",
            "runs",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let results = dir.path().join(format!(
        "runs/{QUESTION}_results/proto-okn-all-tools__kg-named"
    ));
    // The server's reply is the shape this test is about.
    let calls = json(&results.join("attempt-1/calls.json"));
    let reply = calls["calls"][0].to_string();
    assert!(
        reply.contains("columns") && reply.contains("data") && reply.contains("count"),
        "{reply}"
    );
    let result = json(&results.join("result.json"));
    let attempt = &result["attempts"][0];
    assert_eq!(attempt["submitted"], true, "{attempt}");
    assert_eq!(attempt["exact"], true, "{attempt}");
    assert_eq!(attempt["score"]["matched_rows"], 7, "{attempt}");
    let answer = std::fs::read_to_string(results.join("attempt-1/answer.csv")).unwrap();
    assert_eq!(answer.replace("\r\n", "\n"), key_csv(dir.path()));
    assert!(
        stdout(&o)
            .trim_end()
            .ends_with("exact 1.00 · mean F1 1.00 over 1 question"),
        "{}",
        stdout(&o)
    );
}

/// The real claude CLI (the version `scripts/test` pins), `standin-model`
/// playing the answer key, through the proxy in front of
/// mcp-server-sparql: the CLI defers the proxy's tools behind ToolSearch,
/// and the server replies with SPARQL JSON results (issue 25, "Real
/// servers"). The ground truth is the corpus's own, from `demo/kg`: the
/// data the oxigraph server holds.
#[test]
fn the_real_claude_cli_answers_through_mcp_server_sparql() {
    let dir = tempfile::tempdir().unwrap();
    let (_oxigraph, url) = oxigraph_demo_kg(dir.path());
    let server = tool("mcp-server-sparql");
    let profile = profile(dir.path(), "sparql", &server, &["--endpoint", &url]);
    let (_standin, standin_url) = crate::support::standin_single("oracle", None, &[]);
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = dir.path().join("runs");
    let o = okn()
        .env("HOME", &home)
        .env("NO_PROXY", "127.0.0.1")
        .env("no_proxy", "127.0.0.1")
        .env("ANTHROPIC_BASE_URL", &standin_url)
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .args([
            "run",
            "--corpus",
            "demo/benchmarks-single",
            "--kg-hint",
            "tags",
            "--tools",
            "all-tools",
            "--agent",
            "claude",
            "--model",
            "claude-standin-1",
            "--limit",
            "1",
            "--agent-timeout",
            "120",
        ])
        .arg("--profile")
        .arg(&profile)
        .arg("--claude")
        .arg(tool("claude"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let results = out.join(format!("{QUESTION}_results/sparql-all-tools__kg-named"));
    let result = json(&results.join("result.json"));
    let attempt = &result["attempts"][0];
    assert_eq!(attempt["exact"], true, "{attempt}");
    assert_eq!(attempt["score"]["matched_rows"], 7, "{attempt}");
    assert_eq!(
        attempt["tools_called"],
        serde_json::json!(["query", "submit_csv"])
    );
}
