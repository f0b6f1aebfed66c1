//! SPARQL endpoints: where answer keys run.
//!
//! [`Endpoint`] has two implementations:
//!
//! - [`EmbeddedStore`]: an in-memory Oxigraph store loaded from RDF files
//!   (N-Quads, TriG, Turtle, N-Triples), queried with the union of its named
//!   graphs as the default graph. A Turtle or N-Triples file's triples go
//!   into the named graph given by a sidecar `FILE.graph` file, or by a
//!   `global.graph` file in its folder (the Virtuoso bulk-loader
//!   convention); a file with neither is an error.
//! - [`HttpEndpoint`]: the SPARQL 1.1 Protocol over HTTP (POST, form
//!   encoded; JSON results for SELECT and ASK, N-Triples for CONSTRUCT and
//!   DESCRIBE), with a timeout and errors that say which of status,
//!   reachability or result syntax failed.
//!
//! Results come back as a [`Table`] (W3C SPARQL 1.1 CSV cell rules): ASK as
//! one column `ask` holding `true` or `false`; CONSTRUCT and DESCRIBE as
//! columns `subject`, `predicate`, `object`, one row per triple.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub mod lex;
use crate::table::Table;
// What opens and queries endpoints: the embedded store (Oxigraph) and the
// HTTP client (ureq), compiled with the `harness` feature (Cargo.toml).
pub use lex::{QueryForm, has_top_level_order_by, query_form};
#[cfg(feature = "harness")]
use {
    crate::error::{Error, Result},
    crate::table::term_to_cell,
    oxigraph::io::{RdfFormat, RdfParser},
    oxigraph::model::{NamedNode, Term, Triple},
    oxigraph::sparql::results::{
        QueryResultsFormat, QueryResultsParser, SliceQueryResultsParserOutput,
    },
    oxigraph::sparql::{QueryResults, SparqlEvaluator},
    oxigraph::store::Store,
    sha2::{Digest, Sha256},
    std::path::Path,
};

/// The version of the embedded SPARQL engine (the `oxigraph` crate), read
/// from `Cargo.lock` at build time.
pub const OXIGRAPH_VERSION: &str = env!("OKN_OXIGRAPH_VERSION");

/// Default timeout for one HTTP SPARQL request, in seconds.
pub const DEFAULT_HTTP_TIMEOUT_SECS: u64 = 300;

/// Why a query failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// The query text is not SPARQL 1.1; `line` is 1-based within the query.
    #[error("SPARQL syntax error{}: {message}", line.map(|l| format!(" at line {l}")).unwrap_or_default())]
    Syntax {
        /// 1-based line in the query text, when the parser reported one.
        line: Option<u64>,
        /// The parser's message.
        message: String,
    },
    /// The engine or the endpoint could not evaluate it.
    #[error("{0}")]
    Failed(String),
    /// The result has more rows than the limit allows.
    #[error(
        "the result has more than {limit} rows; narrow the query (a LIMIT, a FILTER, fewer variables)"
    )]
    TooLarge {
        /// The row limit.
        limit: usize,
    },
}

/// Who answered, as recorded with ground truth.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct EndpointInfo {
    /// `embedded` or `http`.
    pub kind: String,
    /// The endpoint as the user named it (a data path or a URL).
    pub location: String,
    /// Engine name: `oxigraph` for the embedded store; for HTTP, the
    /// product name of the `Server` header of the first successful reply
    /// (`Oxigraph` from `Oxigraph/0.5.13`; the whole header when it has no
    /// `/`), or `None` when the server sent none. It names what answered
    /// the HTTP request, which may be a proxy in front of the engine.
    pub engine: Option<String>,
    /// Engine version, when known: the `oxigraph` crate's for the embedded
    /// store; for HTTP, the product version of that `Server` header
    /// (`0.5.13`). Recorded, never fingerprinted (`docs/FORMAT.md`, "Ground
    /// truth (inside a corpus)").
    pub engine_version: Option<String>,
    /// What identifies the endpoint's answers for fingerprints: for the
    /// embedded store a SHA-256 over its data files and graph mappings and
    /// the engine version; for HTTP the URL alone (what a SPARQL endpoint
    /// serves cannot be known without querying it: `reference --verify`
    /// is what notices data changed behind a URL).
    pub identity: String,
}

/// Something that answers SPARQL queries.
pub trait Endpoint: Send + Sync {
    /// Runs `sparql` and returns its result as a table (see the module docs
    /// for ASK and CONSTRUCT). The query's own FROM/FROM NAMED, if any, are
    /// honoured; otherwise the default graph is the union of named graphs
    /// (embedded) or the endpoint's default (HTTP).
    fn query(&self, sparql: &str) -> std::result::Result<Table, QueryError> {
        self.query_in(sparql, None, &QueryLimits::default())
    }

    /// Like [`Endpoint::query`], with the default graph set to the named
    /// graph `default_graph` when given (for HTTP, the protocol's
    /// `default-graph-uri` parameter; a query's own FROM still wins), and
    /// within `limits`.
    fn query_in(
        &self,
        sparql: &str,
        default_graph: Option<&str>,
        limits: &QueryLimits,
    ) -> std::result::Result<Table, QueryError>;

    /// What to record about this endpoint.
    fn info(&self) -> &EndpointInfo;
}

/// Where an endpoint is, before it is opened: enough to fingerprint ground
/// truth without loading any data.
#[derive(Debug, Clone)]
pub enum EndpointSpec {
    /// RDF files to load into an embedded store.
    Embedded {
        /// As the user named it.
        display: String,
        /// The resolved file or folder.
        path: PathBuf,
        /// The files to load with their target named graph (None for quad
        /// formats), in a stable order.
        files: Vec<(PathBuf, Option<String>)>,
        /// See [`EndpointInfo::identity`].
        identity: String,
    },
    /// A SPARQL 1.1 Protocol URL.
    Http {
        /// The query URL.
        url: String,
        /// Timeout for one request.
        timeout: Duration,
    },
}

impl EndpointSpec {
    #[cfg(feature = "harness")]
    /// Resolves `--endpoint URL|PATH`. `display` is how it is recorded;
    /// `path_base` resolves a relative path (the folder of the config file
    /// that named it, or the current folder).
    ///
    /// Errors: a path that does not exist, holds no RDF files, or has a
    /// Turtle file without a graph mapping (named, with the fix).
    pub fn resolve(value: &str, path_base: &Path) -> Result<EndpointSpec> {
        if value.trim().is_empty() {
            return Err(Error::Usage(
                "the endpoint is empty: give a SPARQL URL or a path to RDF data".into(),
            ));
        }
        if value.starts_with("http://") || value.starts_with("https://") {
            check_url(value)?;
            return Ok(EndpointSpec::Http {
                url: value.to_string(),
                timeout: Duration::from_secs(DEFAULT_HTTP_TIMEOUT_SECS),
            });
        }
        let path = path_base.join(value);
        let files = data_files(&path)?;
        if files.is_empty() {
            return Err(Error::file(
                &path,
                "no RDF data here: expected .nq, .trig, .ttl or .nt files (a Turtle file needs a FILE.ttl.graph sidecar or a global.graph naming its graph)",
            ));
        }
        let mut hasher = Sha256::new();
        hasher.update(b"oxigraph ");
        hasher.update(OXIGRAPH_VERSION.as_bytes());
        for (file, graph) in &files {
            let relative = file.strip_prefix(&path).unwrap_or(file);
            hasher.update(b"\0file\0");
            hasher.update(relative.to_string_lossy().replace('\\', "/").as_bytes());
            hasher.update(b"\0graph\0");
            hasher.update(graph.as_deref().unwrap_or("").as_bytes());
            hasher.update(b"\0data\0");
            let bytes = crate::fsutil::read_file(file)?;
            hasher.update(Sha256::digest(&bytes));
        }
        Ok(EndpointSpec::Embedded {
            display: value.to_string(),
            path,
            files,
            identity: format!("sha256:{}", hex(&hasher.finalize())),
        })
    }

    /// The identity used in fingerprints (see [`EndpointInfo::identity`]).
    pub fn identity(&self) -> String {
        match self {
            EndpointSpec::Embedded { identity, .. } => identity.clone(),
            EndpointSpec::Http { url, .. } => url.clone(),
        }
    }

    #[cfg(feature = "harness")]
    /// Opens the endpoint: loads the store, or prepares the HTTP client.
    pub fn open(&self) -> Result<Box<dyn Endpoint>> {
        match self {
            EndpointSpec::Embedded {
                display,
                files,
                identity,
                ..
            } => Ok(Box::new(EmbeddedStore::load(display, files, identity)?)),
            EndpointSpec::Http { url, timeout } => Ok(Box::new(HttpEndpoint::new(url, *timeout))),
        }
    }
}

#[cfg(feature = "harness")]
/// Checks an endpoint URL before any record runs, so a typo fails once.
fn check_url(url: &str) -> Result<()> {
    let bad = |why: &str| Error::Usage(format!("endpoint '{url}' is not a usable URL: {why}"));
    let uri: http::Uri = url
        .parse()
        .map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
    let Some(authority) = uri.authority() else {
        return Err(bad("it has no host"));
    };
    if authority.host().is_empty() {
        return Err(bad("it has no host"));
    }
    if let Some(port) = authority.as_str().rsplit_once(':').map(|(_, p)| p)
        && !authority.as_str().ends_with(']')
        && port.parse::<u16>().is_err()
    {
        return Err(bad(&format!(
            "port '{port}' is not a number from 0 to 65535"
        )));
    }
    Ok(())
}

/// Lowercase hexadecimal of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(feature = "harness")]
/// The RDF files under `path` (a file or a folder), each with the named
/// graph its triples go into (`None` for quad formats), sorted by path.
fn data_files(path: &Path) -> Result<Vec<(PathBuf, Option<String>)>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "open SPARQL data", e))?;
    let mut candidates = Vec::new();
    if meta.is_dir() {
        for entry in walkdir::WalkDir::new(path).sort_by_file_name() {
            let entry = entry.map_err(|e| Error::file(path, format!("cannot read: {e}")))?;
            if entry.file_type().is_file() && rdf_format(entry.path()).is_some() {
                candidates.push(entry.path().to_path_buf());
            }
        }
    } else if rdf_format(path).is_some() {
        candidates.push(path.to_path_buf());
    } else {
        return Err(Error::file(
            path,
            "not an RDF file: expected .nq, .trig, .ttl or .nt",
        ));
    }
    let mut files = Vec::new();
    for file in candidates {
        let format = rdf_format(&file).unwrap_or(RdfFormat::Turtle);
        let graph = if format.supports_datasets() {
            None
        } else {
            Some(graph_for(&file)?)
        };
        files.push((file, graph));
    }
    Ok(files)
}

#[cfg(feature = "harness")]
fn rdf_format(path: &Path) -> Option<RdfFormat> {
    match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "nq" => Some(RdfFormat::NQuads),
        "trig" => Some(RdfFormat::TriG),
        "ttl" => Some(RdfFormat::Turtle),
        "nt" => Some(RdfFormat::NTriples),
        _ => None,
    }
}

#[cfg(feature = "harness")]
/// The named graph of a triples file: its `FILE.graph` sidecar, else the
/// folder's `global.graph`.
fn graph_for(file: &Path) -> Result<String> {
    let mut sidecar = file.as_os_str().to_owned();
    sidecar.push(".graph");
    let sidecar = PathBuf::from(sidecar);
    let global = file.with_file_name("global.graph");
    for candidate in [&sidecar, &global] {
        if candidate.is_file() {
            let text = crate::fsutil::read_text(candidate)?;
            let iri = text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("");
            // Virtuoso's files hold the bare IRI; <...> is accepted too.
            let iri = iri
                .strip_prefix('<')
                .and_then(|l| l.strip_suffix('>'))
                .unwrap_or(iri);
            NamedNode::new(iri).map_err(|e| {
                Error::at_line(candidate, 1, format!("not a graph IRI '{iri}': {e}"))
            })?;
            return Ok(iri.to_string());
        }
    }
    Err(Error::file(
        file,
        format!(
            "no named graph for these triples: write the graph IRI into {} (or a global.graph in the folder)",
            sidecar
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
    ))
}

#[cfg(feature = "harness")]
/// An in-memory Oxigraph store (no RocksDB).
pub struct EmbeddedStore {
    store: Store,
    info: EndpointInfo,
}

#[cfg(feature = "harness")]
impl EmbeddedStore {
    /// Loads `files` (from [`EndpointSpec::resolve`]).
    ///
    /// Errors: a file that does not parse, named with the line.
    pub fn load(
        display: &str,
        files: &[(PathBuf, Option<String>)],
        identity: &str,
    ) -> Result<EmbeddedStore> {
        let store = Store::new().map_err(|e| Error::Other(format!("cannot create store: {e}")))?;
        for (file, graph) in files {
            let format = rdf_format(file).unwrap_or(RdfFormat::Turtle);
            let bytes = crate::fsutil::read_file(file)?;
            let mut parser = RdfParser::from_format(format);
            if let Some(graph) = graph {
                let graph = NamedNode::new(graph.as_str())
                    .map_err(|e| Error::file(file, format!("bad graph IRI: {e}")))?;
                parser = parser.without_named_graphs().with_default_graph(graph);
            }
            store.load_from_slice(parser, &bytes).map_err(|e| {
                let message = e.to_string();
                match line_of(&message) {
                    Some(line) => Error::at_line(file, line, message),
                    None => Error::file(file, message),
                }
            })?;
        }
        Ok(EmbeddedStore {
            store,
            info: EndpointInfo {
                kind: "embedded".into(),
                location: display.to_string(),
                engine: Some("oxigraph".into()),
                engine_version: Some(OXIGRAPH_VERSION.into()),
                identity: identity.to_string(),
            },
        })
    }

    /// A store over RDF given in memory (tests and the demo server).
    pub fn from_quads_text(
        format: RdfFormat,
        text: &str,
        graph: Option<&str>,
    ) -> Result<EmbeddedStore> {
        let store = Store::new().map_err(|e| Error::Other(format!("cannot create store: {e}")))?;
        let mut parser = RdfParser::from_format(format);
        if let Some(graph) = graph {
            let graph = NamedNode::new(graph).map_err(|e| Error::Other(e.to_string()))?;
            parser = parser.without_named_graphs().with_default_graph(graph);
        }
        store
            .load_from_slice(parser, text)
            .map_err(|e| Error::Other(e.to_string()))?;
        Ok(EmbeddedStore {
            store,
            info: EndpointInfo {
                kind: "embedded".into(),
                location: "(memory)".into(),
                engine: Some("oxigraph".into()),
                engine_version: Some(OXIGRAPH_VERSION.into()),
                identity: "memory".into(),
            },
        })
    }

    /// The underlying store.
    pub fn store(&self) -> &Store {
        &self.store
    }
}

/// A SPARQL parser message as one readable line: `error at 3:5: expected
/// one of "$", "'", ...` becomes `SPARQL syntax error at column 5: expected
/// one of "$", "'", ... (and 40 more)` with the line kept apart (1-based,
/// within the query text).
pub fn syntax_error(raw: &str) -> QueryError {
    let mut line = None;
    let mut rest = raw.trim();
    let mut position = String::new();
    if let Some(after) = rest.strip_prefix("error at ")
        && let Some((pos, tail)) = after.split_once(": ")
        && let Some((l, c)) = pos.split_once(':')
        && let (Ok(l), Ok(c)) = (l.parse::<u64>(), c.parse::<u64>())
    {
        line = Some(l);
        position = format!(" at column {c}");
        rest = tail;
    } else {
        line = line.or_else(|| line_of(rest));
    }
    let mut text = one_line(rest, usize::MAX);
    if let Some(list) = text.strip_prefix("expected one of ") {
        let items = split_alternatives(list);
        if items.len() > 8 {
            text = format!(
                "expected one of {} (and {} more)",
                items[..8].join(", "),
                items.len() - 8
            );
        }
    }
    QueryError::Syntax {
        line,
        message: format!("SPARQL syntax error{position}: {}", one_line(&text, 300)),
    }
}

/// Splits a peg "expected one of" list on its top-level commas.
fn split_alternatives(list: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut depth = 0i32;
    let mut quoted = false;
    let mut previous = ' ';
    for c in list.chars() {
        match c {
            '"' if previous != '\\' => quoted = !quoted,
            '[' if !quoted => depth += 1,
            ']' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                items.push(current.trim().to_string());
                current.clear();
                previous = c;
                continue;
            }
            _ => {}
        }
        current.push(c);
        previous = c;
    }
    if !current.trim().is_empty() {
        items.push(current.trim().to_string());
    }
    items
}

/// Collapses whitespace (newlines included) to one space each and cuts the
/// text at `max` characters with an ellipsis.
pub fn one_line(text: &str, max: usize) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= max {
        return collapsed;
    }
    let mut cut: String = collapsed.chars().take(max).collect();
    cut.push('…');
    cut
}

/// The first `line N` or `N:M` position mentioned in a parser message.
fn line_of(message: &str) -> Option<u64> {
    // Oxigraph reports "... on line 3 at column 5" or "error at 3:5: ...".
    if let Some(i) = message.find("line ") {
        let digits: String = message[i + 5..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if let Ok(n) = digits.parse::<u64>() {
            return Some(n);
        }
    }
    if let Some(i) = message.find("at ") {
        let rest = &message[i + 3..];
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        if !digits.is_empty() && rest[digits.len()..].starts_with(':') {
            return digits.parse().ok();
        }
    }
    None
}

#[cfg(feature = "harness")]
/// A query result with typed RDF terms (for servers that show term types).
#[derive(Debug, Clone, PartialEq)]
pub enum QueryOutput {
    /// SELECT: variables in column order, rows of optional terms.
    Solutions {
        /// Column names.
        variables: Vec<String>,
        /// One entry per solution; `None` where unbound.
        rows: Vec<Vec<Option<Term>>>,
    },
    /// ASK.
    Boolean(bool),
    /// CONSTRUCT or DESCRIBE.
    Graph(Vec<Triple>),
}

#[cfg(feature = "harness")]
impl QueryOutput {
    /// The result as a [`Table`] of W3C CSV cells.
    pub fn into_table(self) -> Table {
        match self {
            QueryOutput::Solutions { variables, rows } => Table {
                columns: variables,
                rows: rows
                    .into_iter()
                    .map(|r| {
                        r.iter()
                            .map(|t| t.as_ref().map(term_to_cell).unwrap_or_default())
                            .collect()
                    })
                    .collect(),
            },
            QueryOutput::Boolean(b) => ask_table(b),
            QueryOutput::Graph(triples) => triples_table(triples),
        }
    }
}

#[cfg(feature = "harness")]
impl EmbeddedStore {
    /// Evaluates `sparql` with typed terms. The default graph is
    /// `default_graph` when given, else the union of all named graphs,
    /// unless the query names its own dataset (FROM / FROM NAMED).
    ///
    /// Errors: [`QueryError::Syntax`] with the line within `sparql`;
    /// [`QueryError::Failed`] for evaluation errors (an unknown graph is
    /// simply empty, as in any SPARQL store) and for SPARQL Update.
    pub fn evaluate(
        &self,
        sparql: &str,
        default_graph: Option<&str>,
    ) -> std::result::Result<QueryOutput, QueryError> {
        self.evaluate_within(sparql, default_graph, &QueryLimits::default())
    }

    /// [`EmbeddedStore::evaluate`] within `limits`: evaluation is cancelled
    /// past the time limit, and a result with more rows than the row limit
    /// is refused rather than collected.
    ///
    /// Errors: as `evaluate`, plus [`QueryError::Failed`] naming the time
    /// limit and [`QueryError::TooLarge`]; a query nested or chained past
    /// what [`lex::check_shape`] allows is a [`QueryError::Syntax`] naming
    /// the bound, and is never parsed (issue 24, item 19).
    pub fn evaluate_within(
        &self,
        sparql: &str,
        default_graph: Option<&str>,
        limits: &QueryLimits,
    ) -> std::result::Result<QueryOutput, QueryError> {
        refuse_update(sparql)?;
        lex::check_shape(sparql).map_err(shape_error)?;
        // The parser and the engine recurse over the query: they run on a
        // thread of their own with a stack sized for the largest query
        // `check_shape` lets through (issue 24, item 19), never on the
        // caller's (a tokio worker's is 2 MiB). With a time limit, the
        // caller gets its answer at the limit, and the token stops the
        // worker as soon as the engine looks at it (a large join can run on
        // for many seconds between looks).
        let token = oxigraph::sparql::CancellationToken::new();
        let (send, receive) = std::sync::mpsc::channel();
        let store = self.store.clone();
        let query = sparql.to_string();
        let graph = default_graph.map(str::to_string);
        let max_rows = limits.max_rows;
        let worker_token = limits.timeout.map(|_| token.clone());
        std::thread::Builder::new()
            .name("sparql".into())
            .stack_size(QUERY_STACK_BYTES)
            .spawn(move || {
                let _ = send.send(evaluate_on(
                    &store,
                    &query,
                    graph.as_deref(),
                    max_rows,
                    worker_token,
                ));
            })
            .map_err(|e| QueryError::Failed(format!("cannot start the query's thread: {e}")))?;
        let Some(limit) = limits.timeout else {
            return receive.recv().unwrap_or_else(|_| {
                Err(QueryError::Failed(
                    "the query's thread ended without an answer".into(),
                ))
            });
        };
        match receive.recv_timeout(limit) {
            Ok(outcome) => outcome,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(QueryError::Failed(
                "the query's thread ended without an answer".into(),
            )),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                token.cancel();
                Err(QueryError::Failed(format!(
                    "the query did not finish within {} s and was cancelled",
                    limit.as_secs_f64()
                )))
            }
        }
    }
}

/// The stack of the thread a query is parsed and evaluated on: room for
/// the deepest query [`lex::check_shape`] lets through, in a debug build
/// too (where a chain of 2,000 `+` took about 100 MiB). Reserved, not
/// committed: the pages a query does not reach are never touched.
#[cfg(feature = "harness")]
const QUERY_STACK_BYTES: usize = 512 << 20;

/// A shape [`lex::check_shape`] refuses, as the syntax error it is to the
/// one who wrote the query (with the line, where there is one).
pub fn shape_error(e: lex::ShapeError) -> QueryError {
    QueryError::Syntax {
        line: match e {
            lex::ShapeError::TooDeep { line } => Some(line),
            lex::ShapeError::TooLong => None,
        },
        message: e.to_string(),
    }
}

#[cfg(feature = "harness")]
/// Evaluates on `store` (see [`EmbeddedStore::evaluate_within`]).
fn evaluate_on(
    store: &Store,
    sparql: &str,
    default_graph: Option<&str>,
    max_rows: Option<usize>,
    token: Option<oxigraph::sparql::CancellationToken>,
) -> std::result::Result<QueryOutput, QueryError> {
    let mut evaluator = SparqlEvaluator::new();
    if let Some(token) = token {
        evaluator = evaluator.with_cancellation_token(token);
    }
    let mut prepared = evaluator
        .parse_query(sparql)
        .map_err(|e| syntax_error(&e.to_string()))?;
    if prepared.dataset().is_default_dataset() {
        match default_graph {
            Some(graph) => {
                let graph = NamedNode::new(graph)
                    .map_err(|e| QueryError::Failed(format!("not a graph IRI '{graph}': {e}")))?;
                prepared.dataset_mut().set_default_graph(vec![graph.into()]);
            }
            None => prepared.dataset_mut().set_default_graph_as_union(),
        }
    }
    let failed = |e: &dyn std::fmt::Display| QueryError::Failed(e.to_string());
    let results = prepared.on_store(store).execute().map_err(|e| failed(&e))?;
    let too_many = |n: usize| max_rows.is_some_and(|m| n > m);
    let too_large = || QueryError::TooLarge {
        limit: max_rows.unwrap_or_default(),
    };
    match results {
        QueryResults::Solutions(solutions) => {
            let mut variables: Vec<String> = solutions
                .variables()
                .iter()
                .map(|v| v.as_str().to_string())
                .collect();
            let mut rows = Vec::new();
            for solution in solutions {
                let solution = solution.map_err(|e| failed(&e))?;
                rows.push(solution.values().to_vec());
                if too_many(rows.len()) {
                    return Err(too_large());
                }
            }
            if let Some(order) = star_order(sparql, &variables) {
                variables = order.iter().map(|&i| variables[i].clone()).collect();
                for row in &mut rows {
                    *row = order.iter().map(|&i| row[i].take()).collect();
                }
            }
            Ok(QueryOutput::Solutions { variables, rows })
        }
        QueryResults::Boolean(b) => Ok(QueryOutput::Boolean(b)),
        QueryResults::Graph(triples) => {
            let mut collected = Vec::new();
            for t in triples {
                collected.push(t.map_err(|e| failed(&e))?);
                if too_many(collected.len()) {
                    return Err(too_large());
                }
            }
            Ok(QueryOutput::Graph(collected))
        }
    }
}

/// Bounds on one query: wall time and result rows. `None` is unbounded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueryLimits {
    /// Cancel evaluation past this.
    pub timeout: Option<std::time::Duration>,
    /// Refuse results with more rows than this.
    pub max_rows: Option<usize>,
}

impl QueryLimits {
    /// The limits a tool answering an agent uses: 60 s and 10,000 rows, so
    /// one runaway query cannot hang an episode or flood its context.
    pub const FOR_AGENTS: QueryLimits = QueryLimits {
        timeout: Some(std::time::Duration::from_secs(60)),
        max_rows: Some(10_000),
    };
}

/// Refuses SPARQL Update (INSERT, DELETE, LOAD, CLEAR, CREATE, DROP, COPY,
/// MOVE, ADD) with a message that says so, before the parser reports it
/// as a confusing syntax error.
pub fn refuse_update(sparql: &str) -> std::result::Result<(), QueryError> {
    let first = lex::tokens(sparql).into_iter().find_map(|t| match t {
        lex::Token::Word(w)
            if !w.eq_ignore_ascii_case("PREFIX")
                && !w.eq_ignore_ascii_case("BASE")
                && !w.contains(':') =>
        {
            Some(w.to_ascii_uppercase())
        }
        _ => None,
    });
    match first.as_deref() {
        Some("INSERT" | "DELETE" | "LOAD" | "CLEAR" | "CREATE" | "DROP" | "COPY" | "MOVE" | "ADD" | "WITH") => {
            Err(QueryError::Failed(
                "SPARQL Update is not allowed: this endpoint answers queries only (SELECT, ASK, CONSTRUCT, DESCRIBE)".into(),
            ))
        }
        _ => Ok(()),
    }
}

#[cfg(feature = "harness")]
impl Endpoint for EmbeddedStore {
    fn query_in(
        &self,
        sparql: &str,
        default_graph: Option<&str>,
        limits: &QueryLimits,
    ) -> std::result::Result<Table, QueryError> {
        Ok(self
            .evaluate_within(sparql, default_graph, limits)?
            .into_table())
    }

    fn info(&self) -> &EndpointInfo {
        &self.info
    }
}

#[cfg(feature = "harness")]
fn ask_table(value: bool) -> Table {
    Table {
        columns: vec!["ask".into()],
        rows: vec![vec![value.to_string()]],
    }
}

#[cfg(feature = "harness")]
fn triples_table(triples: Vec<Triple>) -> Table {
    Table {
        columns: vec!["subject".into(), "predicate".into(), "object".into()],
        rows: triples
            .into_iter()
            .map(|t| {
                vec![
                    term_to_cell(&Term::from(t.subject)),
                    t.predicate.as_str().to_string(),
                    term_to_cell(&t.object),
                ]
            })
            .collect(),
    }
}

#[cfg(feature = "harness")]
/// A SPARQL 1.1 Protocol endpoint over HTTP.
pub struct HttpEndpoint {
    agent: ureq::Agent,
    url: String,
    /// What is known before any reply: kind, location, identity.
    info: EndpointInfo,
    /// `info` with the engine the first successful reply's `Server` header
    /// named; set once, so every ground truth of one run records the same.
    identified: std::sync::OnceLock<EndpointInfo>,
    /// The whole-request timeout a query has unless its limits set one.
    timeout: Duration,
}

#[cfg(feature = "harness")]
impl HttpEndpoint {
    /// A client for `url` with a whole-request `timeout`.
    pub fn new(url: &str, timeout: Duration) -> HttpEndpoint {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(concat!("okn-benchmark/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        HttpEndpoint {
            agent,
            url: url.to_string(),
            info: EndpointInfo {
                kind: "http".into(),
                location: url.to_string(),
                engine: None,
                engine_version: None,
                identity: url.to_string(),
            },
            identified: std::sync::OnceLock::new(),
            timeout,
        }
    }

    /// Records the engine a successful reply's `Server` header names, the
    /// first time there is one.
    fn identify(&self, server: Option<&http::HeaderValue>) {
        if self.identified.get().is_some() {
            return;
        }
        let Some((engine, version)) = server
            .and_then(|v| v.to_str().ok())
            .and_then(server_product)
        else {
            return;
        };
        let _ = self.identified.set(EndpointInfo {
            engine: Some(engine),
            engine_version: version,
            ..self.info.clone()
        });
    }
}

/// The engine name and version a `Server` header gives: its first product
/// (RFC 9110, section 10.2.4: `product *( RWS ( product / comment ) )`),
/// split at the `/` (`Oxigraph/0.5.13` is `Oxigraph` and `0.5.13`). When
/// the first product has no version, the whole header is the name, with
/// none (`Virtuoso (Linux)` gives `Virtuoso (Linux)`). `None` for an empty
/// header. At most 200 characters of each are kept.
pub fn server_product(header: &str) -> Option<(String, Option<String>)> {
    let header = header.trim();
    let first = header.split_whitespace().next()?;
    let clip = |s: &str| s.chars().take(200).collect::<String>();
    match first.split_once('/') {
        Some((name, version)) if !name.is_empty() && !version.is_empty() => {
            Some((clip(name), Some(clip(version))))
        }
        _ => Some((clip(header), None)),
    }
}

#[cfg(feature = "harness")]
impl Endpoint for HttpEndpoint {
    fn query_in(
        &self,
        sparql: &str,
        default_graph: Option<&str>,
        limits: &QueryLimits,
    ) -> std::result::Result<Table, QueryError> {
        let table = self.query_unbounded(sparql, default_graph, limits.timeout)?;
        if limits.max_rows.is_some_and(|m| table.rows.len() > m) {
            return Err(QueryError::TooLarge {
                limit: limits.max_rows.unwrap_or_default(),
            });
        }
        Ok(table)
    }

    fn info(&self) -> &EndpointInfo {
        self.identified.get().unwrap_or(&self.info)
    }
}

#[cfg(feature = "harness")]
impl HttpEndpoint {
    fn query_unbounded(
        &self,
        sparql: &str,
        default_graph: Option<&str>,
        timeout: Option<Duration>,
    ) -> std::result::Result<Table, QueryError> {
        let graph_form = matches!(
            query_form(sparql),
            Some(QueryForm::Construct | QueryForm::Describe)
        );
        let accept = if graph_form {
            "application/n-triples"
        } else {
            "application/sparql-results+json"
        };
        let mut request = self.agent.post(&self.url).header("Accept", accept);
        if let Some(timeout) = timeout {
            request = request.config().timeout_global(Some(timeout)).build();
        }
        let waited = timeout.unwrap_or(self.timeout);
        let response = request
            .send_form(
                std::iter::once(("query", sparql))
                    .chain(default_graph.map(|g| ("default-graph-uri", g))),
            )
            .map_err(|e| QueryError::Failed(describe_transport_error(&self.url, &e, waited)))?;
        let status = response.status();
        if status.is_success() {
            self.identify(response.headers().get("server"));
        }
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut body = response.into_body();
        let bytes = body
            .with_config()
            .limit(1 << 30)
            .read_to_vec()
            .map_err(|e| QueryError::Failed(describe_transport_error(&self.url, &e, waited)))?;
        if status.is_redirection() {
            return Err(QueryError::Failed(format!(
                "HTTP {} from {}: it redirects to {}; use that URL as the endpoint",
                status.as_u16(),
                self.url,
                location.as_deref().unwrap_or("(no Location header)")
            )));
        }
        if !status.is_success() {
            let text = String::from_utf8_lossy(&bytes);
            let first = text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("");
            let first: String = first.chars().take(300).collect();
            let message = format!(
                "HTTP {} from {}{}",
                status.as_u16(),
                self.url,
                if first.is_empty() {
                    String::new()
                } else {
                    format!(": {first}")
                }
            );
            return Err(if status.as_u16() == 400 {
                QueryError::Syntax {
                    line: None,
                    message,
                }
            } else {
                QueryError::Failed(message)
            });
        }
        if graph_form {
            let mut triples = Vec::new();
            for quad in RdfParser::from_format(RdfFormat::NTriples).for_slice(&bytes) {
                let quad = quad.map_err(|e| {
                    QueryError::Failed(format!("malformed N-Triples from {}: {e}", self.url))
                })?;
                triples.push(Triple::from(quad));
            }
            return Ok(triples_table(triples));
        }
        let mut table = parse_json_results(&bytes).map_err(|e| {
            QueryError::Failed(format!("malformed SPARQL results from {}: {e}", self.url))
        })?;
        order_select_star_columns(sparql, &mut table);
        Ok(table)
    }
}

#[cfg(feature = "harness")]
fn describe_transport_error(url: &str, error: &ureq::Error, timeout: Duration) -> String {
    match error {
        ureq::Error::Timeout(_) => format!(
            "{url} did not answer within the timeout of {} s",
            if timeout.subsec_millis() == 0 {
                timeout.as_secs().to_string()
            } else {
                format!("{:.1}", timeout.as_secs_f64())
            }
        ),
        ureq::Error::ConnectionFailed | ureq::Error::Io(_) => {
            format!("cannot reach {url}: {error} (is the endpoint running, and the URL right?)")
        }
        ureq::Error::HostNotFound => format!("cannot reach {url}: host not found"),
        other => format!("request to {url} failed: {other}"),
    }
}

#[cfg(feature = "harness")]
/// Parses SPARQL 1.1 Query Results JSON into a table.
pub fn parse_json_results(bytes: &[u8]) -> std::result::Result<Table, String> {
    let parsed = QueryResultsParser::from_format(QueryResultsFormat::Json)
        .for_slice(bytes)
        .map_err(|e| e.to_string())?;
    match parsed {
        SliceQueryResultsParserOutput::Boolean(b) => Ok(ask_table(b)),
        SliceQueryResultsParserOutput::Solutions(solutions) => {
            let columns: Vec<String> = solutions
                .variables()
                .iter()
                .map(|v| v.as_str().to_string())
                .collect();
            let mut rows = Vec::new();
            for solution in solutions {
                let solution = solution.map_err(|e| e.to_string())?;
                rows.push(
                    solution
                        .values()
                        .iter()
                        .map(|v| v.as_ref().map(term_to_cell).unwrap_or_default())
                        .collect(),
                );
            }
            Ok(Table { columns, rows })
        }
    }
}

/// For a `SELECT *` query, the permutation that puts `columns` in order of
/// the variables' first appearance in the query (engines differ: Oxigraph
/// sorts them); `None` when the query is not `SELECT *` or the order is
/// already right.
fn star_order(sparql: &str, columns: &[String]) -> Option<Vec<usize>> {
    let order = lex::select_star_variables(sparql)?;
    let mut index: Vec<usize> = (0..columns.len()).collect();
    index.sort_by_key(|&i| {
        order
            .iter()
            .position(|v| *v == columns[i])
            .unwrap_or(usize::MAX)
    });
    (!index.iter().enumerate().all(|(a, b)| a == *b)).then_some(index)
}

/// Puts the columns of a `SELECT *` result in order of the variables'
/// first appearance in the query, so ground truth reads as the query is
/// written. Other projections keep the engine's column order, which is the
/// SELECT clause's.
pub fn order_select_star_columns(sparql: &str, table: &mut Table) {
    let Some(index) = star_order(sparql, &table.columns) else {
        return;
    };
    table.columns = index.iter().map(|&i| table.columns[i].clone()).collect();
    for row in &mut table.rows {
        *row = index.iter().map(|&i| std::mem::take(&mut row[i])).collect();
    }
}

/// Relabels blank nodes (`_:x` cells) in order of first appearance, row by
/// row: `_:b0`, `_:b1`, ... Engines choose labels freely, so this is what
/// makes ground truth with blank nodes deterministic.
pub fn canonical_blank_nodes(table: &mut Table) {
    let mut labels: BTreeMap<String, String> = BTreeMap::new();
    for cell in table.rows.iter_mut().flatten() {
        if cell.starts_with("_:") {
            let next = format!("_:b{}", labels.len());
            let label = labels.entry(cell.clone()).or_insert(next).clone();
            *cell = label;
        }
    }
}

#[cfg(feature = "harness")]
#[cfg(test)]
mod tests {
    use super::*;

    /// One runaway query must not hang the control for good.
    #[test]
    fn a_runaway_query_is_cancelled_at_the_time_limit_and_big_results_refused() {
        let mut nquads = String::new();
        for i in 0..300 {
            nquads.push_str(&format!(
                "<http://ex.org/s{i}> <http://ex.org/p> \"{i}\" <http://ex.org/g> .\n"
            ));
        }
        let store = EmbeddedStore::from_quads_text(RdfFormat::NQuads, &nquads, None).unwrap();
        let limits = QueryLimits {
            timeout: Some(std::time::Duration::from_millis(300)),
            max_rows: None,
        };
        let err = store
            .evaluate_within(
                "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }",
                None,
                &limits,
            )
            .unwrap_err();
        assert_eq!(
            err,
            QueryError::Failed("the query did not finish within 0.3 s and was cancelled".into())
        );
        let limits = QueryLimits {
            timeout: None,
            max_rows: Some(100),
        };
        let err = store
            .evaluate_within("SELECT * WHERE { ?s ?p ?o }", None, &limits)
            .unwrap_err();
        assert_eq!(err, QueryError::TooLarge { limit: 100 });
        assert!(
            store
                .evaluate_within("SELECT * WHERE { ?s ?p ?o } LIMIT 100", None, &limits)
                .is_ok()
        );
    }

    #[test]
    fn updates_are_refused_by_name() {
        let store = EmbeddedStore::from_quads_text(RdfFormat::NQuads, "", None).unwrap();
        for update in [
            "INSERT DATA { <a:b> <a:c> <a:d> }",
            "PREFIX x: <http://x/> DELETE WHERE { ?s ?p ?o }",
            "CLEAR ALL",
            "load <http://x/y>",
        ] {
            let err = store.evaluate(update, None).unwrap_err();
            assert!(
                err.to_string().starts_with("SPARQL Update is not allowed"),
                "{update}: {err}"
            );
        }
        assert!(
            store
                .evaluate("SELECT ?insert WHERE { ?insert ?p ?o }", None)
                .is_ok()
        );
    }

    #[test]
    fn the_server_header_gives_engine_and_version() {
        let product = |h: &str| server_product(h);
        assert_eq!(
            product("Oxigraph/0.5.13"),
            Some(("Oxigraph".into(), Some("0.5.13".into())))
        );
        assert_eq!(
            product("Virtuoso/08.03.3330 (Linux) x86_64-generic-linux-glibc25  VDB"),
            Some(("Virtuoso".into(), Some("08.03.3330".into())))
        );
        assert_eq!(product("GraphDB"), Some(("GraphDB".into(), None)));
        assert_eq!(
            product("Virtuoso (Linux)"),
            Some(("Virtuoso (Linux)".into(), None))
        );
        assert_eq!(product("/1.0"), Some(("/1.0".into(), None)));
        assert_eq!(product("  "), None);
        let long = format!("É{}/1", "x".repeat(300));
        let (name, version) = product(&long).unwrap();
        assert_eq!(name.chars().count(), 200);
        assert_eq!(version, Some("1".into()));
    }

    #[test]
    fn blank_nodes_are_relabelled_in_order() {
        let mut t = Table {
            columns: vec!["a".into(), "b".into()],
            rows: vec![
                vec!["_:zz".into(), "x".into()],
                vec!["_:aa".into(), "_:zz".into()],
            ],
        };
        canonical_blank_nodes(&mut t);
        assert_eq!(t.rows[0][0], "_:b0");
        assert_eq!(t.rows[1], vec!["_:b1".to_string(), "_:b0".to_string()]);
    }

    #[test]
    fn embedded_store_queries_union_of_named_graphs() {
        let store = EmbeddedStore::from_quads_text(
            RdfFormat::NQuads,
            "<http://ex.org/a> <http://ex.org/p> \"1\" <http://ex.org/g1> .\n<http://ex.org/b> <http://ex.org/p> \"2.50\"^^<http://www.w3.org/2001/XMLSchema#decimal> <http://ex.org/g2> .\n",
            None,
        )
        .unwrap();
        let t = store
            .query("SELECT ?s ?o WHERE { ?s <http://ex.org/p> ?o } ORDER BY ?s")
            .unwrap();
        assert_eq!(t.columns, ["s", "o"]);
        assert_eq!(
            t.rows,
            vec![
                vec!["http://ex.org/a".to_string(), "1".to_string()],
                vec!["http://ex.org/b".to_string(), "2.5".to_string()],
            ]
        );
        let t = store.query("ASK { ?s ?p ?o }").unwrap();
        assert_eq!(t.rows, vec![vec!["true".to_string()]]);
        let err = store.query("SELECT * WHERE {\n ?s ?p \n").unwrap_err();
        let QueryError::Syntax { line, message } = err else {
            panic!("{err:?}")
        };
        assert_eq!(line, Some(3));
        assert!(
            message.starts_with("SPARQL syntax error at column 1: expected one of"),
            "{message}"
        );
        assert!(message.ends_with("more)"), "{message}");
        assert!(!message.contains('\n'));
    }
}
