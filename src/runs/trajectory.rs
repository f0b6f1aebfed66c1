//! Facts of an episode's trajectory read off its `calls.json`
//! (`docs/FORMAT.md`, "result.json", `trajectory`): whether the first
//! query addressed the graphs the answer key addresses, and how many
//! exploratory calls (schema, lookup, listing: any call that is not a
//! query and not `submit_csv`) came before it.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// A graph named by a call (an IRI, or a shortname from a `graph`
/// argument) is one of the key's graphs: the same IRI, or a shortname that
/// is the last path segment of one.
fn matches_target(named: &str, target: &BTreeSet<String>) -> bool {
    target.contains(named)
        || target
            .iter()
            .any(|iri| iri.trim_end_matches('/').rsplit('/').next() == Some(named))
}

/// The graphs a call names: every `GRAPH`/`FROM` IRI of the SPARQL strings
/// in its arguments; when they name none, the value of a `graph` argument
/// (a server's or the control's coarser choice of dataset: the demo
/// server's `federation` holds every graph, so the query's own graphs are
/// the finer answer when it names any).
fn graphs_of_call(arguments: &Value) -> BTreeSet<String> {
    fn walk(
        value: &Value,
        key: Option<&str>,
        in_query: &mut BTreeSet<String>,
        argument: &mut BTreeSet<String>,
    ) {
        match value {
            Value::String(s) if key == Some("graph") && !s.trim().is_empty() => {
                argument.insert(s.trim().to_string());
            }
            Value::String(_) if key == Some("graph") => {}
            Value::String(s) => in_query.extend(graphs_named(s)),
            Value::Array(items) => items.iter().for_each(|v| walk(v, key, in_query, argument)),
            Value::Object(map) => map
                .iter()
                .for_each(|(k, v)| walk(v, Some(k), in_query, argument)),
            _ => {}
        }
    }
    let (mut in_query, mut argument) = (BTreeSet::new(), BTreeSet::new());
    walk(arguments, None, &mut in_query, &mut argument);
    if in_query.is_empty() {
        argument
    } else {
        in_query
    }
}

/// The IRIs a SPARQL text names after `GRAPH`, `FROM` or `FROM NAMED`
/// (keywords in any case; comments and strings are not told apart, which
/// at worst names a graph a comment mentions).
pub fn graphs_named(sparql: &str) -> BTreeSet<String> {
    let lower = sparql.to_ascii_lowercase();
    let mut found = BTreeSet::new();
    for keyword in ["graph", "from named", "from"] {
        let mut at = 0;
        while let Some(i) = lower[at..].find(keyword) {
            let start = at + i;
            at = start + keyword.len();
            let before = lower[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '?' || c == '$') {
                continue;
            }
            let rest = sparql[at..].trim_start();
            if let Some(iri) = rest.strip_prefix('<')
                && let Some(end) = iri.find('>')
            {
                found.insert(iri[..end].to_string());
            }
        }
    }
    found
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
