//! The graphs a SPARQL text or a tool call names, and whether a named
//! graph is one of an answer key's (`docs/FORMAT.md`, "result.json",
//! `trajectory`; `docs/TRAJECTORY.md`, `key-graphs`). Shared by the
//! trajectory facts (`runs::trajectory`) and the expectation checks.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::sparql::lex::{Token, tokens};

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
/// (keywords in any case), read from its tokens (`sparql::lex`), so a
/// comment or a string literal never names a graph (issue 27, item 1). A
/// prefixed name after the keyword (`GRAPH kg:fiokg`) is resolved with the
/// text's `PREFIX` declarations; one whose prefix is not declared names
/// nothing. Relative IRIs are kept as written (`BASE` is not applied).
pub fn graphs_named(sparql: &str) -> BTreeSet<String> {
    let tokens = tokens(sparql);
    let mut prefixes: BTreeMap<&str, &str> = BTreeMap::new();
    for w in tokens.windows(3) {
        if let [Token::Word(k), Token::Word(p), Token::Iri(iri)] = w
            && k.eq_ignore_ascii_case("prefix")
            && p.ends_with(':')
        {
            prefixes.insert(p, iri);
        }
    }
    let mut found = BTreeSet::new();
    for (i, token) in tokens.iter().enumerate() {
        let Token::Word(k) = token else { continue };
        if !(k.eq_ignore_ascii_case("graph") || k.eq_ignore_ascii_case("from")) {
            continue;
        }
        let mut next = tokens.get(i + 1);
        if k.eq_ignore_ascii_case("from")
            && matches!(next, Some(Token::Word(n)) if n.eq_ignore_ascii_case("named"))
        {
            next = tokens.get(i + 2);
        }
        match next {
            Some(Token::Iri(iri)) => {
                found.insert(iri.to_string());
            }
            Some(Token::Word(name)) => {
                if let Some(colon) = name.find(':')
                    && let Some(base) = prefixes.get(&name[..=colon])
                {
                    found.insert(format!("{base}{}", &name[colon + 1..]));
                }
            }
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_strings_name_no_graph_and_prefixed_names_resolve() {
        let text = "PREFIX kg: <https://purl.org/okn/frink/kg/>\n\
                    # GRAPH <urn:comment>\n\
                    SELECT * FROM <urn:from> WHERE { GRAPH kg:fiokg { ?s ?p ?o } \
                    FILTER(?o != \"FROM <urn:string>\" && ?o != 'GRAPH <urn:quoted>') \
                    GRAPH nope:x { } }";
        let named: Vec<String> = graphs_named(text).into_iter().collect();
        assert_eq!(named, ["https://purl.org/okn/frink/kg/fiokg", "urn:from"]);
    }
}
