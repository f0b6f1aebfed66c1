//! Deterministic strategies for agents with no model: what the scripted
//! agent and the Messages-API stand-in play (README.md, "Episodes: run,
//! report, rescore, freeze").
//!
//! `oracle` runs the record's answer key through the server's query tool
//! and submits the rows. The perturbations change that answer the way real
//! agents do, to exercise the scorer and the reports; `mixed:SEED` picks
//! one per (question, attempt) by a seeded hash, so repeated attempts
//! differ and flaky questions appear.

use std::fmt;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::corpus::{Corpus, Record};
use crate::score::cell::{is_absolute_iri, local_name};
use crate::score::number::Decimal;
use crate::table::Table;

/// One way to play a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strategy {
    /// The answer key's rows, as the server returned them.
    Oracle,
    /// Columns named `column_1`, `column_2`, ...
    RenameColumns,
    /// Columns in reverse order (names kept).
    ReorderColumns,
    /// IRIs written as their local names.
    LocalNames,
    /// Non-integral numbers at 4 significant figures.
    Decimals4,
    /// The last row left out.
    DropRow,
    /// The first two columns' values swapped, names kept.
    SwapColumns,
    /// The header row alone.
    Empty,
    /// Queries, then never calls submit_csv.
    NoAnswer,
    /// Waits until the agent host is killed.
    Hang,
    /// One of the above per (question, attempt), by a seeded hash.
    Mixed(String),
}

/// The strategies `mixed` draws from, oracle weighted three to one.
const MIXED_POOL: &[Strategy] = &[
    Strategy::Oracle,
    Strategy::Oracle,
    Strategy::Oracle,
    Strategy::RenameColumns,
    Strategy::ReorderColumns,
    Strategy::LocalNames,
    Strategy::Decimals4,
    Strategy::DropRow,
    Strategy::SwapColumns,
    Strategy::Empty,
    Strategy::NoAnswer,
];

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Strategy::Oracle => "oracle",
            Strategy::RenameColumns => "rename-columns",
            Strategy::ReorderColumns => "reorder-columns",
            Strategy::LocalNames => "local-names",
            Strategy::Decimals4 => "decimals-4",
            Strategy::DropRow => "drop-row",
            Strategy::SwapColumns => "swap-columns",
            Strategy::Empty => "empty",
            Strategy::NoAnswer => "no-answer",
            Strategy::Hang => "hang",
            Strategy::Mixed(seed) => return write!(f, "mixed:{seed}"),
        };
        f.write_str(name)
    }
}

impl std::str::FromStr for Strategy {
    type Err = String;

    fn from_str(text: &str) -> Result<Strategy, String> {
        Ok(match text {
            "oracle" => Strategy::Oracle,
            "rename-columns" => Strategy::RenameColumns,
            "reorder-columns" => Strategy::ReorderColumns,
            "local-names" => Strategy::LocalNames,
            "decimals-4" => Strategy::Decimals4,
            "drop-row" => Strategy::DropRow,
            "swap-columns" => Strategy::SwapColumns,
            "empty" => Strategy::Empty,
            "no-answer" => Strategy::NoAnswer,
            "hang" => Strategy::Hang,
            other => match other.strip_prefix("mixed:") {
                Some(seed) if !seed.is_empty() && seed.bytes().all(|b| b.is_ascii_digit()) => {
                    Strategy::Mixed(seed.to_string())
                }
                Some(seed) => {
                    return Err(format!(
                        "'mixed:{seed}': the seed must be a whole number, as in mixed:7"
                    ));
                }
                _ => {
                    return Err(format!(
                        "unknown strategy '{other}': expected oracle, rename-columns, reorder-columns, local-names, decimals-4, drop-row, swap-columns, empty, no-answer, hang or mixed:SEED"
                    ));
                }
            },
        })
    }
}

impl Strategy {
    /// The concrete strategy for this question and attempt (`mixed` picks
    /// one by SHA-256 of `seed/id/attempt`; the others are themselves).
    pub fn resolve(&self, id: &str, attempt: u32) -> Strategy {
        match self {
            Strategy::Mixed(seed) => {
                let digest = Sha256::digest(format!("{seed}/{id}/{attempt}").as_bytes());
                let n = u64::from_be_bytes(digest[..8].try_into().unwrap_or_default());
                MIXED_POOL[(n % MIXED_POOL.len() as u64) as usize].clone()
            }
            other => other.clone(),
        }
    }

    /// The answer this strategy submits given the oracle's `rows`, or
    /// `None` when it submits nothing.
    pub fn answer(&self, rows: &Table) -> Option<Table> {
        let mut t = rows.clone();
        match self {
            Strategy::Oracle | Strategy::Mixed(_) => {}
            Strategy::RenameColumns => {
                t.columns = (1..=t.columns.len())
                    .map(|i| format!("column_{i}"))
                    .collect();
            }
            Strategy::ReorderColumns => {
                t.columns.reverse();
                t.rows.iter_mut().for_each(|r| r.reverse());
            }
            Strategy::LocalNames => {
                for cell in t.rows.iter_mut().flatten() {
                    if is_absolute_iri(cell)
                        && let Some(local) = local_name(cell)
                    {
                        *cell = local.to_string();
                    }
                }
            }
            Strategy::Decimals4 => {
                for cell in t.rows.iter_mut().flatten() {
                    if let Some(d) = Decimal::parse(cell)
                        && !d.is_integral()
                    {
                        *cell = d.round_to(4).plain();
                    }
                }
            }
            Strategy::DropRow => {
                t.rows.pop();
            }
            Strategy::SwapColumns => {
                if t.columns.len() >= 2 {
                    t.rows.iter_mut().for_each(|r| r.swap(0, 1));
                }
            }
            Strategy::Empty => t.rows.clear(),
            Strategy::NoAnswer | Strategy::Hang => return None,
        }
        Some(t)
    }
}

/// The record whose summary opens `prompt` (the prompt is the summary, a
/// blank line, then the hint and the fixed suffix).
pub fn find_record<'a>(corpus: &'a Corpus, prompt: &str) -> Option<&'a Record> {
    let prompt = prompt.replace("\r\n", "\n");
    let first = prompt.split("\n\n").next().unwrap_or("").trim();
    corpus.records.iter().find(|r| r.summary.trim() == first)
}

/// A tool that runs SPARQL: its name and the names of its query and graph
/// parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTool {
    /// The tool name (as the server lists it).
    pub name: String,
    /// The string parameter that takes the query.
    pub query_param: String,
    /// A `graph` parameter, if the tool has one (given `federation`).
    pub graph_param: Option<String>,
}

impl QueryTool {
    /// The arguments that run `query` with this tool: the query, and
    /// `federation` for the graph parameter when there is one.
    pub fn arguments(&self, query: &str) -> serde_json::Map<String, Value> {
        let mut arguments = serde_json::Map::new();
        arguments.insert(self.query_param.clone(), Value::String(query.to_string()));
        if let Some(graph) = &self.graph_param {
            arguments.insert(graph.clone(), Value::String("federation".into()));
        }
        arguments
    }
}

/// Picks the SPARQL tool among `(name, input schema)` pairs: a tool with a
/// string parameter named `query`, `query_string` or `sparql`, preferring
/// tool names that say `sparql` or `query`.
pub fn query_tool<'a>(tools: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Option<QueryTool> {
    let mut best: Option<(u8, QueryTool)> = None;
    for (name, schema) in tools {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            continue;
        };
        let Some(query_param) = ["query", "query_string", "sparql", "sparql_query"]
            .into_iter()
            .find(|p| properties.contains_key(*p))
        else {
            continue;
        };
        let rank = if name.contains("sparql") {
            0
        } else if name == "query" || name.ends_with("__query") {
            1
        } else {
            2
        };
        let graph_param = ["graph", "kg", "graph_name"]
            .into_iter()
            .find(|p| properties.contains_key(*p))
            .map(str::to_string);
        let candidate = QueryTool {
            name: name.to_string(),
            query_param: query_param.to_string(),
            graph_param,
        };
        if best.as_ref().is_none_or(|(r, _)| rank < *r) {
            best = Some((rank, candidate));
        }
    }
    best.map(|(_, t)| t)
}

/// Reads a query tool's reply as a table: JSON with `columns` and `rows`
/// (typed cells with a `value`, or plain values), SPARQL 1.1 JSON results,
/// `{"boolean": ..}`, or CSV text.
pub fn reply_table(text: &str) -> Option<Table> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        if let (Some(columns), Some(rows)) = (
            value.get("columns").and_then(Value::as_array),
            value.get("rows").and_then(Value::as_array),
        ) {
            let columns: Vec<String> = columns.iter().map(cell_text).collect();
            let rows = rows
                .iter()
                .filter_map(Value::as_array)
                .map(|r| r.iter().map(cell_text).collect())
                .collect();
            return Some(Table { columns, rows });
        }
        if value.get("head").is_some() || value.get("boolean").is_some() {
            return crate::sparql::parse_json_results(text.as_bytes()).ok();
        }
        return None;
    }
    Table::from_csv(text.as_bytes()).ok()
}

fn cell_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Object(map) => map.get("value").map(cell_text).unwrap_or_default(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(csv: &str) -> Table {
        Table::from_csv(csv.as_bytes()).unwrap()
    }

    #[test]
    fn strategies_round_trip_their_names() {
        for name in [
            "oracle",
            "rename-columns",
            "reorder-columns",
            "local-names",
            "decimals-4",
            "drop-row",
            "swap-columns",
            "empty",
            "no-answer",
            "hang",
            "mixed:7",
        ] {
            assert_eq!(name.parse::<Strategy>().unwrap().to_string(), name);
        }
        assert!("mixed:".parse::<Strategy>().is_err());
        assert_eq!(
            "mixed:abc".parse::<Strategy>().unwrap_err(),
            "'mixed:abc': the seed must be a whole number, as in mixed:7"
        );
        assert!(
            "guess"
                .parse::<Strategy>()
                .unwrap_err()
                .contains("expected oracle")
        );
    }

    #[test]
    fn mixed_is_deterministic_and_varies_by_attempt() {
        let mixed = Strategy::Mixed("42".into());
        let picks: Vec<Strategy> = (1..=12).map(|a| mixed.resolve("q_x", a)).collect();
        assert_eq!(
            picks,
            (1..=12)
                .map(|a| mixed.resolve("q_x", a))
                .collect::<Vec<_>>()
        );
        assert!(picks.contains(&Strategy::Oracle));
        assert!(picks.iter().any(|s| *s != Strategy::Oracle));
    }

    #[test]
    fn perturbations_change_what_they_say() {
        let rows = t("place,share,n\nhttp://ex.org/p/A,0.453562,3\nhttp://ex.org/p/B,1.5,4\n");
        assert_eq!(
            Strategy::RenameColumns.answer(&rows).unwrap().columns,
            ["column_1", "column_2", "column_3"]
        );
        assert_eq!(
            Strategy::ReorderColumns.answer(&rows).unwrap().rows[0],
            ["3", "0.453562", "http://ex.org/p/A"]
        );
        assert_eq!(Strategy::LocalNames.answer(&rows).unwrap().rows[1][0], "B");
        assert_eq!(
            Strategy::Decimals4.answer(&rows).unwrap().rows[0][1],
            "0.4536"
        );
        assert_eq!(Strategy::DropRow.answer(&rows).unwrap().rows.len(), 1);
        assert_eq!(
            Strategy::SwapColumns.answer(&rows).unwrap().rows[0][..2],
            ["0.453562", "http://ex.org/p/A"]
        );
        assert!(Strategy::Empty.answer(&rows).unwrap().rows.is_empty());
        assert_eq!(Strategy::NoAnswer.answer(&rows), None);
    }

    #[test]
    fn replies_become_tables() {
        let typed = r#"{"columns":["s","n"],"rows":[[{"type":"uri","value":"http://a"},{"type":"literal","value":"5"}],[null,{"value":"6"}]]}"#;
        assert_eq!(reply_table(typed).unwrap(), t("s,n\nhttp://a,5\n,6\n"));
        let sparql = r#"{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"literal","value":"1"}}]}}"#;
        assert_eq!(reply_table(sparql).unwrap(), t("x\n1\n"));
        assert_eq!(reply_table("a,b\n1,2\n").unwrap(), t("a,b\n1,2\n"));
        assert_eq!(reply_table("{\"error\": \"x\"}"), None);
    }

    #[test]
    fn the_query_tool_is_found_by_its_parameters() {
        let demo = serde_json::json!({"properties": {"graph": {}, "query_string": {}}});
        let other = serde_json::json!({"properties": {"uri": {}}});
        let control = serde_json::json!({"properties": {"graph": {}, "query": {}}});
        let tool = query_tool([("lookup_uri", &other), ("query", &demo)]).unwrap();
        assert_eq!(
            (
                tool.name.as_str(),
                tool.query_param.as_str(),
                tool.graph_param.as_deref()
            ),
            ("query", "query_string", Some("graph"))
        );
        let tool = query_tool([
            ("mcp__okn__run_sparql", &control),
            ("mcp__okn__query", &demo),
        ])
        .unwrap();
        assert_eq!(tool.name, "mcp__okn__run_sparql");
    }
}
