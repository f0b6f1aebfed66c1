//! The graphs a SPARQL text or a tool call names, and whether a named
//! graph is one of an answer key's (`docs/FORMAT.md`, "result.json",
//! `trajectory`; `docs/TRAJECTORY.md`, `key-graphs`). Shared by the
//! trajectory facts (`runs::trajectory`) and the expectation checks.

use std::collections::BTreeSet;

use serde_json::Value;

/// A graph named by a call (an IRI, or a shortname from a `graph`
/// argument) is one of the key's graphs: the same IRI, or a shortname that
/// is the last path segment of one.
pub fn matches_target(named: &str, target: &BTreeSet<String>) -> bool {
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
pub fn graphs_of_call(arguments: &Value) -> BTreeSet<String> {
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
