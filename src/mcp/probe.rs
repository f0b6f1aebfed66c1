//! What an agent is offered through the proxy, worked out without calling
//! a model (README.md, "Servers under test: profiles, the proxy, probe"):
//! the injected answer tool, which of the server's tools are listed at
//! `all-tools`, which calls are refused, and the check that every
//! `--without-tool` name is a real tool. The proxy serves what these rules
//! decide and `okn-benchmark probe` prints it, so the two cannot disagree.

use std::collections::BTreeSet;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

use crate::error::{Error, Result};

/// The injected answer tool.
pub const SUBMIT_CSV: &str = crate::layout::SUBMIT_CSV;

/// A JSON object as an MCP input schema (anything else is the empty schema).
pub(crate) fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The proxy's answer tool: one `csv` argument holding the whole result
/// table, header row first.
pub fn submit_tool() -> Tool {
    Tool::new(
        SUBMIT_CSV,
        "Submit your answer: the complete result table as CSV text with a header row of column \
names. If nothing satisfies the question, submit the header row on its own. Calling it again \
replaces the previous answer.",
        schema(json!({
            "type": "object",
            "properties": {
                "csv": {"type": "string", "description": "The complete result table as CSV, header row first."}
            },
            "required": ["csv"]
        })),
    )
}

/// The tools an agent is offered at `all-tools`: the server's tools in the
/// server's order, minus each one named exactly in `withheld` and any of the
/// server's own called `submit_csv`, followed by the proxy's [`submit_tool`]
/// (injected after filtering, so the answer channel can never be withheld).
/// With no server tools (the server could not be reached) that is
/// `submit_csv` alone.
///
/// Names are matched exactly because [`check_withheld`] has made sure each
/// withheld name is one of the server's tools as spelled.
pub fn offered_tools(server_tools: &[Tool], withheld: &BTreeSet<String>) -> Vec<Tool> {
    server_tools
        .iter()
        .filter(|t| is_offered(t, withheld))
        .cloned()
        .chain(std::iter::once(submit_tool()))
        .collect()
}

/// True when the server tool `tool` is offered ([`offered_tools`]): not
/// withheld by its exact name, and not called `submit_csv`.
pub fn is_offered(tool: &Tool, withheld: &BTreeSet<String>) -> bool {
    !withheld.contains(tool.name.as_ref()) && tool.name != SUBMIT_CSV
}

/// True when a call to `name` must be refused: `name` is not one of the
/// `offered` tools ([`offered_tools`]: the same rule decides both), and it
/// is a withheld tool or a variant of its name (other case, surrounding
/// space) that an agent reaching for it from memory might send. A server
/// tool that only differs in case from a withheld one is offered, so it
/// is never refused.
pub fn refuses(withheld: &BTreeSet<String>, offered: &[Tool], name: &str) -> bool {
    if offered.iter().any(|t| t.name == name) {
        return false;
    }
    let wanted = name.trim().to_lowercase();
    withheld
        .iter()
        .any(|w| *w == name || w.to_lowercase() == wanted)
}

/// Checks `--without-tool` names against the server's tools, before
/// anything runs: a typo would withhold nothing and report with confidence
/// that the tool was worth zero.
///
/// Errors: [`Error::Usage`] naming each unknown name, with the closest
/// real tool name when one is close, and listing the server's tools.
pub fn check_withheld(server: &str, tools: &[Tool], withheld: &[String]) -> Result<()> {
    let names: BTreeSet<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let mut problems = Vec::new();
    for name in withheld {
        if name == SUBMIT_CSV {
            problems.push(format!(
                "'{name}' is injected by the proxy and can never be withheld"
            ));
        } else if !names.contains(name.as_str()) {
            problems.push(format!(
                "'{name}' is not a tool of {server}{}",
                crate::suggest::did_you_mean(name, names.iter().copied())
            ));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "--without-tool: {}. The server's tools: {}.",
        problems.join("; "),
        names.iter().copied().collect::<Vec<_>>().join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(names: &[&str]) -> Vec<Tool> {
        names
            .iter()
            .map(|n| Tool::new(n.to_string(), "", std::sync::Arc::new(Default::default())))
            .collect()
    }

    #[test]
    fn unknown_names_get_a_did_you_mean_and_the_list() {
        let t = tools(&["get_schema", "query", "route_query"]);
        assert!(check_withheld("s", &t, &["get_schema".into()]).is_ok());
        let err = check_withheld("s", &t, &["get_shema".into(), "zzz".into()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--without-tool: 'get_shema' is not a tool of s (did you mean 'get_schema'?); 'zzz' is not a tool of s. The server's tools: get_schema, query, route_query."
        );
        let err = check_withheld("s", &t, &["submit_csv".into()]).unwrap_err();
        assert!(err.to_string().contains("can never be withheld"));
    }

    #[test]
    fn withheld_tools_are_not_listed_and_submit_csv_comes_last() {
        let t = tools(&["query", "get_schema", "submit_csv", "Query"]);
        let withheld: BTreeSet<String> = ["query".to_string()].into();
        let names: Vec<String> = offered_tools(&t, &withheld)
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert_eq!(names, ["get_schema", "Query", "submit_csv"]);
        assert_eq!(offered_tools(&[], &withheld).len(), 1);
        let offered = offered_tools(&t, &withheld);
        assert!(refuses(&withheld, &offered, "query"));
        assert!(refuses(&withheld, &offered, " query "));
        assert!(refuses(&withheld, &offered, "QUERY"));
        // Offered is never refused: one rule for the list and the calls.
        assert!(!refuses(&withheld, &offered, "Query"));
        assert!(!refuses(&withheld, &offered, "get_schema"));
    }
}
