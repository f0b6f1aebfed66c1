//! The scripted agent: a deterministic MCP client that connects to the
//! proxy through the same MCP config an agent host gets, finds the record
//! its prompt came from, and plays a [`Strategy`]. It is what tests and the
//! recorded demo roots use instead of a model; its condition records
//! `agent = scripted:STRATEGY`, never a model name.
//!
//! It runs as its own process (`okn-benchmark scripted-agent`), started the
//! same way as `claude -p`: prompt on stdin, a JSON report on stdout.

use std::time::Instant;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientConfig};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use super::MCP_SERVER_NAME;
use super::strategy::{Habits, QueryTool, Strategy, find_record, query_tool, reply_table};
use crate::corpus::{Corpus, Record};
use crate::error::{Error, Result};
use crate::mcp::probe::SUBMIT_CSV;

/// The proxy session the scripted agent plays through.
pub(crate) type Session = RunningService<RoleClient, ClientConfig>;

/// Plays `strategy` for `prompt` through the proxy named in `mcp_config`,
/// and returns the JSON report the agent host prints.
///
/// Errors: an MCP config without the proxy, or a proxy that cannot be
/// started. Everything after connecting (no record matches the prompt, no
/// query tool, a failing query) is reported in the JSON, as a real agent
/// would end its turn, not as an error.
pub async fn play(
    mcp_config: &str,
    prompt: &str,
    corpus: &Corpus,
    strategy: &Strategy,
    attempt: u32,
) -> Result<Value> {
    let report = Report {
        strategy,
        started: Instant::now(),
    };
    let client = connect(mcp_config).await?;
    let (result, played, turns) = match find_record(corpus, prompt) {
        None => ("no record of the corpus matches the prompt".into(), None, 0),
        Some(record) => {
            let played = strategy.resolve(record, attempt);
            let habits = strategy.habits(record, attempt);
            let (result, turns) = answer(&client, record, &played, habits).await;
            (result, Some(played), turns)
        }
    };
    let _ = client.cancel().await;
    Ok(report.json(result, played.as_ref(), turns))
}

/// The JSON report, shaped like `claude -p --output-format json`'s.
struct Report<'a> {
    strategy: &'a Strategy,
    started: Instant,
}

impl Report<'_> {
    /// The report of a turn that ended with `result` after `turns` MCP
    /// requests, having played `played` (none when no record matched).
    fn json(&self, result: String, played: Option<&Strategy>, turns: u32) -> Value {
        json!({
            "type": "result",
            "subtype": "success",
            "is_error": false,
            "agent": format!("scripted:{}", self.strategy),
            "played": played.map(|s| s.to_string()),
            "num_turns": turns,
            "duration_ms": (self.started.elapsed().as_secs_f64() * 1000.0).round(),
            "result": result,
        })
    }
}

/// Starts the proxy the MCP config names and opens a session with it.
///
/// Errors: [`Error::Usage`] for a config that is not JSON or names no
/// proxy command; [`Error::Other`] when the proxy cannot be started or the
/// MCP handshake fails.
pub(crate) async fn connect(mcp_config: &str) -> Result<Session> {
    let config: Value = serde_json::from_str(mcp_config)
        .map_err(|e| Error::Usage(format!("--mcp-config is not JSON: {e}")))?;
    let server = &config["mcpServers"][MCP_SERVER_NAME];
    let program = server["command"].as_str().ok_or_else(|| {
        Error::Usage(format!(
            "--mcp-config has no mcpServers.{MCP_SERVER_NAME}.command"
        ))
    })?;
    let args: Vec<String> = server["args"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(&args);
    let transport = TokioChildProcess::new(cmd)
        .map_err(|e| Error::Other(format!("cannot start the MCP server '{program}': {e}")))?;
    ClientConfig::default()
        .serve(transport)
        .await
        .map_err(|e| Error::Other(format!("MCP initialization with the proxy failed: {e}")))
}

/// A query over every graph, with no `GRAPH`: what an agent that has not
/// found the question's graph tries first ([`Habits::explore`]).
const EXPLORATORY_QUERY: &str = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 5";

/// The calls `habits` makes before the answer key, given the tools the
/// server lists (`names`): `list_graphs` and `get_schema` of the record's
/// first tag when it discovers, `get_schema` although it is not listed when
/// it reaches for a withheld tool (`list_graphs` listed, `get_schema` not),
/// and [`EXPLORATORY_QUERY`] when it explores. Replies are not read: the
/// answer is the key's, whatever these calls return. Returns the number of
/// MCP requests made.
async fn before_the_key(
    client: &Session,
    record: &Record,
    tool: &QueryTool,
    names: &[&str],
    habits: Habits,
) -> u32 {
    let listed = |name: &str| names.contains(&name);
    let graph = record.tags.first().cloned().unwrap_or_default();
    let mut calls: Vec<(&str, serde_json::Map<String, Value>)> = Vec::new();
    if habits.discover && listed("list_graphs") {
        calls.push(("list_graphs", serde_json::Map::new()));
        if listed("get_schema") {
            calls.push(("get_schema", graph_argument(&graph)));
        }
    }
    if habits.reach_for_withheld && listed("list_graphs") && !listed("get_schema") {
        calls.push(("get_schema", graph_argument(&graph)));
    }
    if habits.explore {
        calls.push((tool.name.as_str(), tool.arguments(EXPLORATORY_QUERY)));
    }
    let made = calls.len() as u32;
    for (name, arguments) in calls {
        let request = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        let _ = client.peer().call_tool(request).await;
    }
    made
}

/// `{"graph": GRAPH}`: the arguments of the demo KG server's `get_schema`.
fn graph_argument(graph: &str) -> serde_json::Map<String, Value> {
    let mut arguments = serde_json::Map::new();
    arguments.insert("graph".into(), Value::String(graph.to_string()));
    arguments
}

/// The episode proper: list the tools, make the calls `habits` asks for
/// ([`before_the_key`]), run the record's answer key with the SPARQL tool,
/// and submit what `played` makes of the rows. Returns the closing words
/// and the MCP requests made. A `hang` strategy never returns once the
/// query has run.
async fn answer(
    client: &Session,
    record: &Record,
    played: &Strategy,
    habits: Habits,
) -> (String, u32) {
    let tools = client.peer().list_all_tools().await.unwrap_or_default();
    let mut turns = 1;
    let schemas: Vec<(String, Value)> = tools
        .iter()
        .map(|t| (t.name.to_string(), Value::Object((*t.input_schema).clone())))
        .collect();
    let Some(tool) = query_tool(schemas.iter().map(|(n, s)| (n.as_str(), s))) else {
        return ("the server has no SPARQL query tool".into(), turns);
    };
    let names: Vec<&str> = schemas.iter().map(|(n, _)| n.as_str()).collect();
    turns += before_the_key(client, record, &tool, &names, habits).await;
    let reply = client
        .peer()
        .call_tool(
            CallToolRequestParams::new(tool.name.clone())
                .with_arguments(tool.arguments(&record.query)),
        )
        .await;
    turns += 1;
    let text = match &reply {
        Ok(result) => result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => format!("the query tool failed: {e}"),
    };
    let failed = reply.as_ref().map_or(true, |r| r.is_error == Some(true));
    let rows = if failed { None } else { reply_table(&text) };
    if *played == Strategy::Hang {
        std::future::pending::<()>().await;
    }
    let Some(rows) = rows else {
        let first: String = text.chars().take(200).collect();
        return (format!("the answer key could not be run: {first}"), turns);
    };
    let outcome = match played.answer(&rows) {
        Some(answer) => {
            let mut submit = serde_json::Map::new();
            submit.insert("csv".into(), Value::String(answer.to_csv()));
            let _ = client
                .peer()
                .call_tool(CallToolRequestParams::new(SUBMIT_CSV).with_arguments(submit))
                .await;
            turns += 1;
            format!(
                "submitted {} row{} ({played})",
                answer.rows.len(),
                crate::format::plural(answer.rows.len())
            )
        }
        None => format!("ran the query and submitted nothing ({played})"),
    };
    (outcome, turns)
}
