//! Facts of an episode's trajectory read off its `calls.json`
//! (`docs/FORMAT.md`, "result.json", `trajectory`): whether the first
//! query addressed the graphs the answer key addresses, and how many
//! exploratory calls (schema, lookup, listing: any call that is not a
//! query and not `submit_csv`) came before it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::expectations::graphs::graphs_named;
use crate::expectations::graphs::{graphs_of_call, matches_target};
use crate::layout::CallRecord;

/// An attempt's trajectory facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trajectory {
    /// The first query named only graphs the answer key names, and at
    /// least one of them (`GRAPH <IRI>`, `FROM <IRI>`, or a `graph`
    /// argument matching the last segment of a key graph's IRI). `None`:
    /// no query was made, the key names no graph, or the first query names
    /// none (it ran against the default graph), so there is nothing to
    /// judge.
    pub first_query_hit: Option<bool>,
    /// Calls before the first query that were not `submit_csv` and not an
    /// unreadable request: the exploration the agent did first (all calls
    /// but `submit_csv` when no query was made).
    pub exploratory_calls: usize,
}

/// The trajectory of `calls`, against the answer key `key` (its SPARQL).
/// `is_query` tells a call that carried a SPARQL query.
pub fn trajectory(
    calls: &[CallRecord],
    key: &str,
    is_query: impl Fn(&Value) -> bool,
) -> Trajectory {
    let target = graphs_named(key);
    let mut exploratory_calls = 0;
    let mut first_query_hit = None;
    for call in calls {
        if call.unreadable.is_some() || call.tool == crate::layout::SUBMIT_CSV {
            continue;
        }
        if is_query(&call.arguments) {
            let named = graphs_of_call(&call.arguments);
            first_query_hit = (!target.is_empty() && !named.is_empty()).then(|| {
                named.iter().all(|g| matches_target(g, &target))
                    && named.iter().any(|g| matches_target(g, &target))
            });
            return Trajectory {
                first_query_hit,
                exploratory_calls,
            };
        }
        exploratory_calls += 1;
    }
    Trajectory {
        first_query_hit,
        exploratory_calls,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, arguments: Value) -> CallRecord {
        CallRecord {
            index: 1,
            tool: tool.into(),
            arguments,
            start_s: 0.0,
            duration_s: 0.0,
            ok: true,
            soft_error: None,
            refused: false,
            forwarded: true,
            error: None,
            result_chars: 0,
            result_preview: String::new(),
            unreadable: None,
        }
    }

    fn is_query(v: &Value) -> bool {
        crate::mcp::calllog::carries_query(v)
    }

    const KEY: &str = "SELECT ?s WHERE { GRAPH <https://x/kg/spoke-okn> { ?s ?p ?o } }";

    #[test]
    fn the_first_query_hits_when_it_names_the_keys_graphs_only() {
        let hit = [
            call("get_schema", serde_json::json!({"graph": "spoke-okn"})),
            call(
                "query",
                serde_json::json!({"query": "select * { graph <https://x/kg/spoke-okn> { ?s ?p ?o } }"}),
            ),
            call(
                "query",
                serde_json::json!({"query": "SELECT * { GRAPH <https://x/kg/other> { ?s ?p ?o } }"}),
            ),
        ];
        assert_eq!(
            trajectory(&hit, KEY, is_query),
            Trajectory {
                first_query_hit: Some(true),
                exploratory_calls: 1
            }
        );
        // The query's own graphs win over a coarser graph argument.
        let federated = [call(
            "query",
            serde_json::json!({"graph": "federation", "query_string": KEY}),
        )];
        assert_eq!(
            trajectory(&federated, KEY, is_query).first_query_hit,
            Some(true)
        );
        let miss = [call(
            "run_sparql",
            serde_json::json!({"graph": "other", "query": "SELECT * { ?s ?p ?o }"}),
        )];
        assert_eq!(
            trajectory(&miss, KEY, is_query).first_query_hit,
            Some(false)
        );
        let by_shortname = [call(
            "run_sparql",
            serde_json::json!({"graph": "spoke-okn", "query": "SELECT * { ?s ?p ?o }"}),
        )];
        assert_eq!(
            trajectory(&by_shortname, KEY, is_query).first_query_hit,
            Some(true)
        );
        // The default graph: nothing to judge.
        let default = [call(
            "query",
            serde_json::json!({"query": "SELECT * { ?s ?p ?o }"}),
        )];
        assert_eq!(trajectory(&default, KEY, is_query).first_query_hit, None);
        // No query at all: every call but submit_csv explored.
        let none = [
            call("list_graphs", serde_json::json!({})),
            call("submit_csv", serde_json::json!({"csv": "a\n"})),
        ];
        assert_eq!(
            trajectory(&none, KEY, is_query),
            Trajectory {
                first_query_hit: None,
                exploratory_calls: 1
            }
        );
    }

    #[test]
    fn graphs_are_read_after_graph_and_from_in_any_case() {
        let named = graphs_named(
            "PREFIX g: <http://p/>\nselect * FROM <http://a> from named <http://b> { Graph <http://c> { ?graph ?p ?o } } # ?fromage",
        );
        assert_eq!(
            named.into_iter().collect::<Vec<_>>(),
            ["http://a", "http://b", "http://c"]
        );
        assert!(graphs_named("é GRAPH <中> {}").contains("中"));
    }
}
