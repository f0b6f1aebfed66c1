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
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use super::MCP_SERVER_NAME;
use super::strategy::{Strategy, find_record, query_tool, reply_table};
use crate::corpus::Corpus;
use crate::error::{Error, Result};

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
    let started = Instant::now();
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
    let client = ClientConfig::default()
        .serve(transport)
        .await
        .map_err(|e| Error::Other(format!("MCP initialization with the proxy failed: {e}")))?;

    let mut turns = 0u32;
    let report = |result: String, played: Option<&Strategy>, turns: u32| {
        json!({
            "type": "result",
            "subtype": "success",
            "is_error": false,
            "agent": format!("scripted:{strategy}"),
            "played": played.map(|s| s.to_string()),
            "num_turns": turns,
            "duration_ms": (started.elapsed().as_secs_f64() * 1000.0).round(),
            "result": result,
        })
    };

    let Some(record) = find_record(corpus, prompt) else {
        let _ = client.cancel().await;
        return Ok(report(
            "no record of the corpus matches the prompt".into(),
            None,
            0,
        ));
    };
    let played = strategy.resolve(&record.id, attempt);
    let tools = client.peer().list_all_tools().await.unwrap_or_default();
    turns += 1;
    let schemas: Vec<(String, Value)> = tools
        .iter()
        .map(|t| (t.name.to_string(), Value::Object((*t.input_schema).clone())))
        .collect();
    let Some(tool) = query_tool(schemas.iter().map(|(n, s)| (n.as_str(), s))) else {
        let _ = client.cancel().await;
        return Ok(report(
            "the server has no SPARQL query tool".into(),
            Some(&played),
            turns,
        ));
    };
    let mut arguments = serde_json::Map::new();
    arguments.insert(
        tool.query_param.clone(),
        Value::String(record.query.clone()),
    );
    if let Some(graph) = &tool.graph_param {
        arguments.insert(graph.clone(), Value::String("federation".into()));
    }
    let reply = client
        .peer()
        .call_tool(CallToolRequestParams::new(tool.name.clone()).with_arguments(arguments))
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
    if played == Strategy::Hang {
        std::future::pending::<()>().await;
    }
    let Some(rows) = rows else {
        let _ = client.cancel().await;
        let first: String = text.chars().take(200).collect();
        return Ok(report(
            format!("the answer key could not be run: {first}"),
            Some(&played),
            turns,
        ));
    };
    let outcome = match played.answer(&rows) {
        Some(answer) => {
            let mut submit = serde_json::Map::new();
            submit.insert("csv".into(), Value::String(answer.to_csv()));
            let _ = client
                .peer()
                .call_tool(CallToolRequestParams::new("submit_csv").with_arguments(submit))
                .await;
            turns += 1;
            format!("submitted {} rows ({played})", answer.rows.len())
        }
        None => format!("ran the query and submitted nothing ({played})"),
    };
    let _ = client.cancel().await;
    Ok(report(outcome, Some(&played), turns))
}
