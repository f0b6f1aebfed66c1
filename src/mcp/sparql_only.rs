//! The `sparql-only` control (README.md, "Servers under test: profiles, the
//! proxy, probe"): no server under test at all, one neutral SPARQL tool over the configured endpoint,
//! and a preamble listing the valid graph shortnames.
//!
//! The tool is `run_sparql(graph, query)`. A shortname maps to a named graph
//! through a template (default `https://purl.org/okn/frink/kg/{shortname}`),
//! whose triples become the query's default graph; the shortname
//! `federation` queries every graph at once. The result comes back as W3C
//! SPARQL CSV text: neutral, with no typing or hints a server might add.
//!
//! The preamble depends only on the shortnames, never on a profile, so
//! `sparql-only` is one shared control for every server; its SHA-256 digest
//! is printed by `probe` and recorded with every episode.

use std::collections::BTreeMap;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::sparql::{Endpoint, EndpointSpec, QueryError, QueryLimits, hex};

/// The control's SPARQL tool name.
pub const TOOL: &str = "run_sparql";

/// Default shortname → graph IRI template.
pub const DEFAULT_GRAPH_TEMPLATE: &str = "https://purl.org/okn/frink/kg/{shortname}";

/// The shortname that queries the union of every graph.
pub const FEDERATION: &str = "federation";

/// `sha256:` + the lowercase hex SHA-256 of `preamble`: the digest `probe`
/// prints and every condition records (`settings.preamble_sha256`).
pub fn preamble_digest(preamble: &str) -> String {
    format!("sha256:{}", hex(&Sha256::digest(preamble.as_bytes())))
}

/// The control's endpoint, shortnames and preamble.
#[derive(Clone)]
pub struct SparqlOnly {
    endpoint: Arc<dyn Endpoint>,
    /// Shortname → default graph IRI (`None`: the union, for `federation`).
    graphs: BTreeMap<String, Option<String>>,
    /// The text the agent receives as instructions.
    pub preamble: String,
}

impl SparqlOnly {
    /// Opens the endpoint and works out the shortnames: for RDF data, the
    /// named graphs that fit `template`; for a SPARQL URL, `shortnames`
    /// (which must then be given). `federation` is always offered.
    ///
    /// Errors: the endpoint does not open; a template without
    /// `{shortname}`; no shortname at all (with what to pass).
    pub fn new(spec: &EndpointSpec, template: &str, shortnames: &[String]) -> Result<SparqlOnly> {
        let Some((prefix, suffix)) = template.split_once("{shortname}") else {
            return Err(Error::Usage(format!(
                "graph template '{template}' must contain {{shortname}}"
            )));
        };
        let mut names: Vec<String> = shortnames.to_vec();
        let endpoint: Arc<dyn Endpoint> = match spec {
            EndpointSpec::Embedded {
                display,
                files,
                identity,
                ..
            } => {
                let store = crate::sparql::EmbeddedStore::load(display, files, identity)?;
                if names.is_empty() {
                    for graph in store.store().named_graphs().flatten() {
                        let iri = graph.to_string();
                        let iri = iri.trim_matches(['<', '>']);
                        if let Some(name) = iri
                            .strip_prefix(prefix)
                            .and_then(|r| r.strip_suffix(suffix))
                            && !name.is_empty()
                        {
                            names.push(name.to_string());
                        }
                    }
                }
                Arc::new(store)
            }
            EndpointSpec::Http { url, timeout } => {
                Arc::new(crate::sparql::HttpEndpoint::new(url, *timeout))
            }
        };
        names.sort();
        names.dedup();
        names.retain(|n| n != FEDERATION);
        if names.is_empty() {
            return Err(Error::Usage(
                "sparql-only: no graph shortnames (name them with --shortname, or serve RDF data whose named graphs fit the graph template)".into(),
            ));
        }
        let mut graphs: BTreeMap<String, Option<String>> = names
            .iter()
            .map(|n| (n.clone(), Some(format!("{prefix}{n}{suffix}"))))
            .collect();
        graphs.insert(FEDERATION.to_string(), None);
        let preamble = preamble(&names, template);
        Ok(SparqlOnly {
            endpoint,
            graphs,
            preamble,
        })
    }

    /// `sha256:` + hex digest of the preamble ([`preamble_digest`]).
    pub fn preamble_digest(&self) -> String {
        preamble_digest(&self.preamble)
    }

    /// The valid shortnames, `federation` included, sorted.
    pub fn shortnames(&self) -> Vec<&str> {
        self.graphs.keys().map(String::as_str).collect()
    }

    /// Asks the endpoint one `ASK {}` (the whole federation, bounded by
    /// `timeout`): whether the control could answer anything at all.
    ///
    /// Errors: why it cannot, as the endpoint said it.
    pub fn check(&self, timeout: std::time::Duration) -> std::result::Result<(), String> {
        let limits = QueryLimits {
            timeout: Some(timeout),
            ..QueryLimits::FOR_AGENTS
        };
        self.endpoint
            .query_in("ASK {}", None, &limits)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Runs `query` against the graph named `graph` within `limits`; the
    /// result as CSV.
    ///
    /// Errors are worded for the agent: an unknown shortname (listing the
    /// valid ones), a syntax error with its line, an evaluation failure.
    pub fn run(
        &self,
        graph: &str,
        query: &str,
        limits: &QueryLimits,
    ) -> std::result::Result<String, String> {
        let Some(default_graph) = self.graphs.get(graph.trim()) else {
            return Err(format!(
                "unknown graph '{graph}'; valid graphs: {}",
                self.shortnames().join(", ")
            ));
        };
        match self
            .endpoint
            .query_in(query, default_graph.as_deref(), limits)
        {
            Ok(table) => Ok(table.to_csv()),
            Err(QueryError::Syntax { line, message }) => Err(match line {
                Some(l) => format!("{message} (line {l} of the query)"),
                None => message,
            }),
            Err(other) => Err(other.to_string()),
        }
    }
}

/// The preamble for these shortnames: the same text for every profile.
pub fn preamble(shortnames: &[String], template: &str) -> String {
    let example = template.replace("{shortname}", "SHORTNAME");
    format!(
        "You can query knowledge graphs with one tool, {TOOL}(graph, query): it runs a SPARQL 1.1 \
query against the graph with that shortname (its triples are the default graph) and returns the \
result as CSV.\n\nValid graph shortnames: {}.\n\nThe shortname {FEDERATION} queries all of them \
at once; inside it, GRAPH <{example}> {{ ... }} addresses one graph.\n",
        shortnames.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preamble_lists_shortnames_and_nothing_about_a_server() {
        let p = preamble(&["a".into(), "b-kg".into()], DEFAULT_GRAPH_TEMPLATE);
        assert!(p.contains("Valid graph shortnames: a, b-kg."), "{p}");
        assert!(
            p.contains("GRAPH <https://purl.org/okn/frink/kg/SHORTNAME>"),
            "{p}"
        );
    }
}
