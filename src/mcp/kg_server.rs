//! The demo KG server: the server under test of the embedded default, an MCP
//! server over the embedded store, on stdio or streamable HTTP.
//!
//! Its tools are modeled on the real mcp-proto-okn server (README.md,
//! "Servers under test: profiles, the proxy, probe"): `list_graphs`, `get_schema(graph)`, `query(graph,
//! query_string)`, `lookup_uri(label, max_results)`,
//! `get_descendants(uri, max_depth)`, and it sends server instructions.
//! Results are JSON text with **typed cells** (IRI or literal with its
//! datatype and language), so the difference from a server that returns
//! plain strings is visible in scores.
//!
//! [`Faults`] degrade it on purpose, so the proxy's guards can be tested
//! against a real server process: every Nth call answered with a rate-limit
//! failure inside a successful reply, a hang after N calls, or the process
//! exiting after N calls.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use oxigraph::model::{GraphNameRef, NamedNodeRef, NamedOrBlankNode, Term};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::sparql::{EmbeddedStore, QueryError, QueryLimits, QueryOutput};

/// Prefix of every demo graph IRI; a graph's shortname is what follows it.
pub const GRAPH_PREFIX: &str = "https://purl.org/okn/frink/kg/";

/// The shortname that queries the union of every graph.
pub const FEDERATION: &str = "federation";

const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
const RDFS_LABEL: &str = "http://www.w3.org/2000/01/rdf-schema#label";
const RDFS_SUBCLASS_OF: &str = "http://www.w3.org/2000/01/rdf-schema#subClassOf";

/// The instructions the server sends at initialization.
pub const INSTRUCTIONS: &str = "\
This server answers questions over the OKN demo knowledge graphs (synthetic data shaped after the \
FRINK Proto-OKN graphs). Each graph has a shortname; its IRI is https://purl.org/okn/frink/kg/SHORTNAME.

Suggested workflow:
1. list_graphs to see the graphs and their sizes.
2. get_schema(graph) to see a graph's classes and predicates with counts.
3. lookup_uri(label) to turn a name into candidate IRIs.
4. get_descendants(uri) to expand a class hierarchy (rdfs:subClassOf).
5. query(graph, query_string) to run SPARQL 1.1. The graph's triples are the default graph; use \
graph = \"federation\" to query every graph at once (GRAPH <iri> { ... } then selects one).

Results are JSON. Every cell is typed: {\"type\": \"uri\", \"value\": ...} or {\"type\": \"literal\", \
\"value\": ..., \"datatype\": ..., \"lang\": ...}. Report IRIs in full.";

/// Ways to degrade the server on purpose (`--fault`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    /// Every Nth tool call succeeds on the wire but carries an HTTP 429 in
    /// its payload, as mcp-proto-okn's remote get_descendants did: the
    /// failure the proxy's soft-error detection must catch.
    pub rate_limit_every: Option<u64>,
    /// After N tool calls, every further call is accepted and never answered.
    pub hang_after: Option<u64>,
    /// After N tool calls, the process exits (code 3) on the next call.
    pub die_after: Option<u64>,
    /// Every Nth tool call is answered with a JSON-RPC error (-32602, as
    /// servers report invalid arguments) instead of a result.
    pub rpc_error_every: Option<u64>,
}

impl Faults {
    /// Parses one `--fault KIND=N` value into `self`.
    ///
    /// Errors: [`Error::Usage`] for an unknown kind or a count that is not a
    /// positive integer, listing the kinds.
    pub fn add(&mut self, spec: &str) -> Result<()> {
        let usage = || {
            Error::Usage(format!(
                "--fault '{spec}': expected rate-limit-every=N, rpc-error-every=N, hang-after=N or die-after=N (N a positive integer)"
            ))
        };
        let (kind, n) = spec.split_once('=').ok_or_else(usage)?;
        let n: u64 = n.trim().parse().map_err(|_| usage())?;
        if n == 0 {
            return Err(usage());
        }
        match kind.trim() {
            "rate-limit-every" => self.rate_limit_every = Some(n),
            "rpc-error-every" => self.rpc_error_every = Some(n),
            "hang-after" => self.hang_after = Some(n),
            "die-after" => self.die_after = Some(n),
            _ => return Err(usage()),
        }
        Ok(())
    }
}

/// How `lookup_uri` finds and ranks candidates (`kg-server --lookup`;
/// `docs/CATALOG.md`, "The published example": the two rankings are the
/// baseline and the candidate the repository's example compares).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Lookup {
    /// Labels equal to the name first, then labels starting with it, then
    /// labels containing it (case-insensitive); shorter labels first
    /// within each.
    #[default]
    ExactFirst,
    /// Every label sharing a word with the name, ranked by how many of the
    /// name's words it holds, then by how many triples mention the IRI
    /// (the better-connected first), with no exact-match tier: a name with
    /// extra words is still found, and a better-connected near neighbour
    /// can outrank the label that equals the name.
    Fuzzy,
}

impl Lookup {
    /// The `lookup_uri` description that says what this ranking does.
    fn description(self) -> &'static str {
        match self {
            Lookup::ExactFirst => {
                "Find IRIs whose rdfs:label matches a name: exact matches first, then labels starting with it, then labels containing it (case-insensitive)."
            }
            Lookup::Fuzzy => {
                "Find IRIs whose rdfs:label shares a word with a name (case-insensitive): those holding the most of the name's words first, then the best-connected."
            }
        }
    }
}

/// The words of `text`, lower-cased: runs of letters and digits.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The demo KG server's state: the store, the graph list, the faults.
#[derive(Clone)]
pub struct KgServer {
    store: Arc<EmbeddedStore>,
    graphs: Arc<Vec<GraphInfo>>,
    faults: Faults,
    lookup: Lookup,
    row_limit: Option<usize>,
    calls: Arc<AtomicU64>,
    tool_router: ToolRouter<Self>,
}

#[derive(Debug, Clone)]
struct GraphInfo {
    shortname: String,
    iri: String,
    triples: usize,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct GraphArgs {
    /// Graph shortname, e.g. "spoke-okn" (see list_graphs).
    graph: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct QueryArgs {
    /// Graph shortname whose triples are the default graph, or "federation" for all graphs.
    graph: String,
    /// A SPARQL 1.1 query (SELECT, ASK, CONSTRUCT or DESCRIBE).
    query_string: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct LookupArgs {
    /// A name or part of one, e.g. "rheumatoid arthritis".
    label: String,
    /// At most this many candidates (default 10, 1 to 100).
    max_results: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct DescendantsArgs {
    /// The full IRI of a class.
    uri: String,
    /// How many rdfs:subClassOf levels to descend (default 10, 1 to 100).
    max_depth: Option<usize>,
}

/// A successful reply: compact JSON text (agents pay for every token).
fn text_result(value: &Value) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(value.to_string())])
}

fn error_result(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

/// A term as a typed JSON cell.
fn typed_cell(term: &Term) -> Value {
    match term {
        Term::NamedNode(n) => json!({"type": "uri", "value": n.as_str()}),
        Term::BlankNode(b) => json!({"type": "bnode", "value": b.as_str()}),
        Term::Literal(l) => {
            let mut cell = json!({"type": "literal", "value": l.value()});
            if let Some(lang) = l.language() {
                cell["lang"] = json!(lang);
            } else {
                cell["datatype"] = json!(l.datatype().as_str());
            }
            cell
        }
        #[allow(unreachable_patterns)]
        other => json!({"type": "triple", "value": other.to_string()}),
    }
}

#[tool_router]
impl KgServer {
    /// A server over `store`, degraded by `faults`.
    pub fn new(store: EmbeddedStore, faults: Faults) -> KgServer {
        let mut graphs = Vec::new();
        for graph in store.store().named_graphs().flatten() {
            if let NamedOrBlankNode::NamedNode(node) = graph {
                let iri = node.as_str().to_string();
                let triples = store
                    .store()
                    .quads_for_pattern(
                        None,
                        None,
                        None,
                        Some(GraphNameRef::NamedNode(node.as_ref())),
                    )
                    .count();
                let shortname = iri.strip_prefix(GRAPH_PREFIX).unwrap_or(&iri).to_string();
                graphs.push(GraphInfo {
                    shortname,
                    iri,
                    triples,
                });
            }
        }
        graphs.sort_by(|a, b| a.shortname.cmp(&b.shortname));
        KgServer {
            store: Arc::new(store),
            graphs: Arc::new(graphs),
            faults,
            lookup: Lookup::default(),
            row_limit: None,
            calls: Arc::new(AtomicU64::new(0)),
            tool_router: Self::tool_router(),
        }
    }

    /// This server with `lookup_uri` ranking by `lookup` (its description
    /// says which).
    pub fn with_lookup(mut self, lookup: Lookup) -> KgServer {
        self.lookup = lookup;
        if let Some(route) = self.tool_router.map.get_mut("lookup_uri") {
            route.attr.description = Some(lookup.description().into());
        }
        self
    }

    /// This server with `query` answering at most `limit` rows (a
    /// deployment that caps its results, as many do): the rest are cut, and
    /// the reply says `"truncated": true`. The cut is the deliberate change
    /// of `docs/SCALING.md`'s published comparison.
    pub fn with_row_limit(mut self, limit: usize) -> KgServer {
        self.row_limit = Some(limit);
        if let Some(route) = self.tool_router.map.get_mut("query") {
            let description = route.attr.description.clone().unwrap_or_default();
            route.attr.description =
                Some(format!("{description} At most {limit} rows are returned.").into());
        }
        self
    }

    /// `rows` cut to the row limit, and whether anything was cut.
    fn limited(&self, mut rows: Vec<Value>) -> (Vec<Value>, bool) {
        match self.row_limit {
            Some(limit) if rows.len() > limit => {
                rows.truncate(limit);
                (rows, true)
            }
            _ => (rows, false),
        }
    }

    /// How many triples mention `iri`, as subject or object, in any graph.
    fn mentions(&self, iri: NamedNodeRef<'_>) -> usize {
        let store = self.store.store();
        store
            .quads_for_pattern(Some(iri.into()), None, None, None)
            .count()
            + store
                .quads_for_pattern(None, None, Some(iri.into()), None)
                .count()
    }

    fn graph_iri(&self, shortname: &str) -> std::result::Result<Option<String>, String> {
        let shortname = shortname.trim();
        if shortname == FEDERATION {
            return Ok(None);
        }
        self.graphs
            .iter()
            .find(|g| g.shortname == shortname || g.iri == shortname)
            .map(|g| Some(g.iri.clone()))
            .ok_or_else(|| {
                format!(
                    "unknown graph '{shortname}'; valid graphs: {}, or {FEDERATION} for all of them",
                    self.graphs.iter().map(|g| g.shortname.as_str()).collect::<Vec<_>>().join(", ")
                )
            })
    }

    #[tool(description = "List the knowledge graphs: shortname, graph IRI and number of triples.")]
    async fn list_graphs(&self) -> std::result::Result<CallToolResult, ErrorData> {
        let graphs: Vec<Value> = self
            .graphs
            .iter()
            .map(|g| json!({"shortname": g.shortname, "graph": g.iri, "triples": g.triples}))
            .collect();
        Ok(text_result(&json!({"graphs": graphs})))
    }

    #[tool(
        description = "The schema of one graph, computed from its data: classes (rdf:type objects) and predicates, each with its count, most frequent first."
    )]
    async fn get_schema(
        &self,
        Parameters(GraphArgs { graph }): Parameters<GraphArgs>,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        let iri = match self.graph_iri(&graph) {
            Ok(iri) => iri,
            Err(message) => return Ok(error_result(message)),
        };
        let graph_name = iri.as_deref().map(NamedNodeRef::new_unchecked);
        let mut classes: BTreeMap<String, usize> = BTreeMap::new();
        let mut predicates: BTreeMap<String, usize> = BTreeMap::new();
        let quads = self.store.store().quads_for_pattern(
            None,
            None,
            None,
            graph_name.map(GraphNameRef::NamedNode),
        );
        for quad in quads.flatten() {
            *predicates
                .entry(quad.predicate.as_str().to_string())
                .or_default() += 1;
            if quad.predicate.as_str() == RDF_TYPE
                && let Term::NamedNode(class) = &quad.object
            {
                *classes.entry(class.as_str().to_string()).or_default() += 1;
            }
        }
        let ranked = |map: BTreeMap<String, usize>, key: &str| -> Vec<Value> {
            let mut list: Vec<(String, usize)> = map.into_iter().collect();
            list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            list.into_iter()
                .map(|(iri, count)| json!({key: iri, "count": count}))
                .collect()
        };
        Ok(text_result(&json!({
            "graph": iri.unwrap_or_else(|| FEDERATION.to_string()),
            "classes": ranked(classes, "class"),
            "predicates": ranked(predicates, "predicate"),
        })))
    }

    #[tool(
        description = "Run a SPARQL 1.1 query against one graph (its triples are the default graph) or against all graphs with graph = \"federation\". Returns typed JSON cells."
    )]
    async fn query(
        &self,
        Parameters(QueryArgs {
            graph,
            query_string,
        }): Parameters<QueryArgs>,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        let iri = match self.graph_iri(&graph) {
            Ok(iri) => iri,
            Err(message) => return Ok(error_result(message)),
        };
        let store = self.store.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            store.evaluate_within(&query_string, iri.as_deref(), &QueryLimits::FOR_AGENTS)
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let output = match outcome {
            Ok(output) => output,
            Err(QueryError::Syntax { message, line }) => {
                let at = line.map(|l| format!(" (line {l})")).unwrap_or_default();
                return Ok(error_result(format!("{message}{at}")));
            }
            Err(other) => return Ok(error_result(other.to_string())),
        };
        let value = match output {
            QueryOutput::Solutions { variables, rows } => {
                let rows: Vec<Value> = rows
                    .iter()
                    .map(|row| {
                        Value::Array(
                            row.iter()
                                .map(|t| t.as_ref().map(typed_cell).unwrap_or(Value::Null))
                                .collect(),
                        )
                    })
                    .collect();
                let (rows, truncated) = self.limited(rows);
                let mut value =
                    json!({"columns": variables, "row_count": rows.len(), "rows": rows});
                if truncated {
                    value["truncated"] = Value::Bool(true);
                }
                value
            }
            QueryOutput::Boolean(b) => json!({"boolean": b}),
            QueryOutput::Graph(triples) => {
                let rows: Vec<Value> = triples
                    .iter()
                    .map(|t| {
                        json!([
                            typed_cell(&Term::from(t.subject.clone())),
                            {"type": "uri", "value": t.predicate.as_str()},
                            typed_cell(&t.object)
                        ])
                    })
                    .collect();
                json!({"columns": ["subject", "predicate", "object"], "row_count": rows.len(), "rows": rows})
            }
        };
        Ok(text_result(&value))
    }

    #[tool(
        description = "Find IRIs whose rdfs:label matches a name: exact matches first, then labels starting with it, then labels containing it (case-insensitive)."
    )]
    async fn lookup_uri(
        &self,
        Parameters(LookupArgs { label, max_results }): Parameters<LookupArgs>,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        let wanted = label.trim().to_lowercase();
        if wanted.is_empty() {
            return Ok(error_result("label must not be empty"));
        }
        let limit = max_results.unwrap_or(10).clamp(1, 100);
        let name_words = words(&wanted);
        let mut found: BTreeMap<(usize, usize, String, String), Value> = BTreeMap::new();
        let label_predicate = NamedNodeRef::new_unchecked(RDFS_LABEL);
        for quad in self
            .store
            .store()
            .quads_for_pattern(None, Some(label_predicate), None, None)
            .flatten()
        {
            let (NamedOrBlankNode::NamedNode(subject), Term::Literal(text)) =
                (&quad.subject, &quad.object)
            else {
                continue;
            };
            let lower = text.value().to_lowercase();
            let (rank, kind, second) = match self.lookup {
                Lookup::ExactFirst => {
                    let rank = if lower == wanted {
                        0
                    } else if lower.starts_with(&wanted) {
                        1
                    } else if lower.contains(&wanted) {
                        2
                    } else {
                        continue;
                    };
                    (
                        rank,
                        ["exact", "prefix", "substring"][rank],
                        text.value().len(),
                    )
                }
                Lookup::Fuzzy => {
                    let have = words(&lower);
                    let matched = name_words.iter().filter(|w| have.contains(w)).count();
                    if matched == 0 {
                        continue;
                    }
                    // More words first, then more mentions: both inverted.
                    let rank = name_words.len() - matched;
                    (rank, "words", usize::MAX - self.mentions(subject.as_ref()))
                }
            };
            let graph = quad.graph_name.to_string();
            let graph = graph.trim_matches(['<', '>']);
            let shortname = graph
                .strip_prefix(GRAPH_PREFIX)
                .unwrap_or(graph)
                .to_string();
            let key = (
                rank,
                second,
                subject.as_str().to_string(),
                shortname.clone(),
            );
            found.insert(
                key,
                json!({
                    "uri": subject.as_str(),
                    "label": text.value(),
                    "graph": shortname,
                    "match": kind,
                }),
            );
        }
        let results: Vec<Value> = found.into_values().take(limit).collect();
        Ok(text_result(&json!({"label": label, "results": results})))
    }

    #[tool(
        description = "Expand a class hierarchy: every class below the given class through rdfs:subClassOf, with its label and depth, up to max_depth levels."
    )]
    async fn get_descendants(
        &self,
        Parameters(DescendantsArgs { uri, max_depth }): Parameters<DescendantsArgs>,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        let uri = uri.trim();
        if !crate::score::cell::is_absolute_iri(uri) {
            return Ok(error_result(format!(
                "'{uri}' is not a full IRI (e.g. http://purl.obolibrary.org/obo/MONDO_0005275); lookup_uri turns a name into IRIs"
            )));
        }
        let Ok(root) = oxigraph::model::NamedNode::new(uri) else {
            return Ok(error_result(format!("not an IRI: '{uri}'")));
        };
        let max_depth = max_depth.unwrap_or(10).clamp(1, 100);
        let sub_class_of = NamedNodeRef::new_unchecked(RDFS_SUBCLASS_OF);
        let label_predicate = NamedNodeRef::new_unchecked(RDFS_LABEL);
        let mut seen: BTreeSet<String> = BTreeSet::from([root.as_str().to_string()]);
        let mut queue = VecDeque::from([(root.clone(), 0usize)]);
        let mut descendants: Vec<(usize, String, Option<String>)> = Vec::new();
        while let Some((node, depth)) = queue.pop_front() {
            if depth >= max_depth {
                continue;
            }
            let term = Term::NamedNode(node.clone());
            for quad in self
                .store
                .store()
                .quads_for_pattern(None, Some(sub_class_of), Some(term.as_ref()), None)
                .flatten()
            {
                let NamedOrBlankNode::NamedNode(child) = quad.subject else {
                    continue;
                };
                if seen.insert(child.as_str().to_string()) {
                    let label = self
                        .store
                        .store()
                        .quads_for_pattern(
                            Some(child.as_ref().into()),
                            Some(label_predicate),
                            None,
                            None,
                        )
                        .flatten()
                        .find_map(|q| match q.object {
                            Term::Literal(l) => Some(l.value().to_string()),
                            _ => None,
                        });
                    descendants.push((depth + 1, child.as_str().to_string(), label));
                    queue.push_back((child, depth + 1));
                }
            }
        }
        descendants.sort();
        let list: Vec<Value> = descendants
            .iter()
            .map(|(depth, iri, label)| json!({"uri": iri, "label": label, "depth": depth}))
            .collect();
        Ok(text_result(&json!({
            "uri": root.as_str(),
            "descendant_count": list.len(),
            "descendants": list,
        })))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for KgServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            // A deployment with its results capped says so in its version
            // (semver build metadata), as a changed deployment would.
            .with_server_info(Implementation::new(
                "okn-demo-kg",
                match self.row_limit {
                    Some(n) => format!("{}+row-limit.{n}", env!("CARGO_PKG_VERSION")),
                    None => env!("CARGO_PKG_VERSION").to_string(),
                },
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(after) = self.faults.die_after
            && n > after
        {
            errln!("kg-server: --fault die-after={after}: exiting on call {n}");
            std::process::exit(3);
        }
        if let Some(after) = self.faults.hang_after
            && n > after
        {
            std::future::pending::<()>().await;
        }
        if let Some(every) = self.faults.rpc_error_every
            && n % every == 0
        {
            return Err(ErrorData::invalid_params(
                "Invalid params (--fault rpc-error-every)",
                None,
            ));
        }
        if let Some(every) = self.faults.rate_limit_every
            && n % every == 0
        {
            // Success on the wire, failure in the payload.
            return Ok(text_result(&json!({
                "error": "HTTP Error 429: Too Many Requests",
                "descendant_count": 0,
                "results": [],
            }))
            .into());
        }
        let tcc = ToolCallContext::new(self, request, context);
        self.tool_router.call(tcc).await
    }
}
