//! `catalog run`: every query of a catalog as one direct tool call, in a
//! fresh session each, strictly one at a time, each bounded by a timeout;
//! each expectation evaluated and given its status; `results.json` and
//! `report.md` written (`docs/CATALOG.md`, "Running").

use std::collections::BTreeMap;
use std::time::Duration;

#[cfg(feature = "harness")]
use rmcp::model::CallToolRequestParams;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::checks::{self, Outcome, Reply, Status};
use super::format::{Catalog, Kind, Query, Run};
// Running a catalog against a server: the `harness` feature (Cargo.toml).
#[cfg(feature = "harness")]
use {crate::mcp::profile::Profile, std::time::Instant};

/// Version of `results.json` this version writes. Format 2 added
/// [`Results::catalog_document`]; format 3 [`Results::catalog_source`],
/// the catalog's text, which binds the document to
/// [`Results::catalog_sha256`] (`docs/CATALOG.md`, "Running").
pub const RESULTS_FORMAT: u32 = 3;

/// Versions of `results.json` this version recognizes. Format 1 lacks the
/// catalog its statuses were judged by, so it is refused by name
/// (`catalog::verify`); format 2 lacks only the catalog's text.
pub const RESULTS_FORMATS_READ: std::ops::RangeInclusive<u32> = 1..=3;

/// Characters of a reply's text kept in `results.json`.
pub const KEPT_TEXT_CHARS: usize = 20_000;

/// `results.json`: one catalog run against one server. Every member but
/// the recorded evidence (the catalog, bound to its digest; the replies
/// or execution errors, the durations, the server and profile names, the
/// catalog's path) follows from the catalog and the replies, and is
/// derived again whenever the file is read (`catalog::verify`; issue 24,
/// item 8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Results {
    /// [`RESULTS_FORMAT`].
    pub format: u32,
    /// The catalog's path as given on the command line, normalized (its
    /// file name alone when the path was absolute: no path of the machine
    /// is recorded).
    pub catalog: String,
    /// `sha256:` and the hex SHA-256 of the catalog file's bytes.
    pub catalog_sha256: String,
    /// The profile's name.
    pub profile: String,
    /// The server's name and version as it reported them at the first
    /// session that started, if any did.
    pub server: Option<ServerInfo>,
    /// The types evaluated (all three unless `--type` chose).
    pub types: Vec<Kind>,
    /// Every query run, in catalog order.
    pub queries: Vec<QueryResult>,
    /// The catalog the run evaluated, as read (format 2 on; absent in
    /// format 1): what `build` needs to write the report again from this
    /// file alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_document: Option<Catalog>,
    /// The catalog file's text as the run read it (format 3 on): its
    /// SHA-256 is [`Results::catalog_sha256`], and parsed it gives
    /// [`Results::catalog_document`], so neither can be edited alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_source: Option<String>,
}

/// What a server says it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerInfo {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// One query's calls: the canonical phrasing first, then each rephrasing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryResult {
    /// The query's id.
    pub id: String,
    /// Its category.
    pub category: String,
    /// One entry per phrasing, the canonical one first.
    pub phrasings: Vec<PhrasingResult>,
}

/// One call and what its expectations found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhrasingResult {
    /// The wording.
    pub user_query: String,
    /// The tool called.
    pub tool: String,
    /// Its arguments.
    pub arguments: serde_json::Map<String, Value>,
    /// Seconds from the call to its reply (the session's start excluded).
    pub duration_s: f64,
    /// Why no reply came (the server could not be started, the call timed
    /// out or the transport closed): every expectation is then an error.
    pub execution_error: Option<String>,
    /// The reply, when one came.
    pub reply: Option<RecordedReply>,
    /// The candidate ids in rank order, when the query has a selector and
    /// the reply holds them.
    pub candidates: Option<Vec<String>>,
    /// Every evaluated expectation, in catalog order.
    pub expectations: Vec<ExpectationResult>,
}

/// A reply as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordedReply {
    /// `isError`, or a JSON-RPC error response.
    pub is_error: bool,
    /// The text blocks joined by line ends (at most [`KEPT_TEXT_CHARS`]).
    pub text: String,
    /// The text was cut at [`KEPT_TEXT_CHARS`].
    pub text_cut: bool,
    /// Structured content, if any.
    pub structured: Option<Value>,
}

impl RecordedReply {
    /// The reply as the checks read it: what was recorded, its text as
    /// kept.
    pub fn reply(&self) -> Reply {
        Reply {
            is_error: self.is_error,
            text: self.text.clone(),
            structured: self.structured.clone(),
        }
    }
}

/// One expectation's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectationResult {
    /// Its index among the query's expectations.
    pub index: usize,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// The check's name.
    pub check: String,
    /// The status.
    pub status: Status,
    /// Why it failed or could not be evaluated.
    pub detail: Option<String>,
    /// It carried a known gap (with the date it was found).
    pub known_gap: Option<String>,
}

/// How a run goes.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The catalog as given (recorded in `results.json`).
    pub catalog_name: String,
    /// `sha256:` of the catalog file.
    pub catalog_sha256: String,
    /// The catalog file's text, as read (recorded as
    /// [`Results::catalog_source`]).
    pub catalog_source: String,
    /// The types to evaluate.
    pub types: Vec<Kind>,
    /// Bound on each session's start and on each call.
    pub timeout: Duration,
    /// The catalog's folder: a `run.endpoint` path is relative to it.
    pub catalog_dir: std::path::PathBuf,
}

#[cfg(feature = "harness")]
/// Runs every query of `catalog` with an expectation of a chosen type,
/// one fresh session per phrasing, against `profile`'s server, reporting
/// progress through `progress` (`query 2 of 5: ID, phrasing 1 of 3`).
/// Never fails: a session that cannot start, a timeout or a closed
/// transport is that phrasing's execution error, and the run goes on.
pub async fn run(
    catalog: &Catalog,
    profile: &Profile,
    settings: &RunSettings,
    mut progress: impl FnMut(&str),
) -> Results {
    let chosen: Vec<&Query> = catalog
        .queries
        .iter()
        .filter(|q| {
            q.expectations
                .iter()
                .any(|e| settings.types.contains(&e.kind))
        })
        .collect();
    let mut results = Results {
        format: RESULTS_FORMAT,
        catalog: settings.catalog_name.clone(),
        catalog_sha256: settings.catalog_sha256.clone(),
        profile: profile.name.clone(),
        server: None,
        catalog_document: Some(catalog.clone()),
        catalog_source: Some(settings.catalog_source.clone()),
        types: settings.types.clone(),
        queries: Vec::new(),
    };
    for (n, query) in chosen.iter().enumerate() {
        let phrasings = phrasings(query);
        let mut done = Vec::new();
        for (k, phrasing) in phrasings.iter().enumerate() {
            progress(&format!(
                "query {} of {}: {}, phrasing {} of {}",
                n + 1,
                chosen.len(),
                query.id,
                k + 1,
                phrasings.len()
            ));
            let (reply, duration_s, server) = match &query.run {
                Run::Sparql { sparql, endpoint } => {
                    let (reply, seconds) = sparql_call(sparql, endpoint.as_deref(), settings);
                    (reply, seconds, None)
                }
                Run::Tool { .. } => {
                    call(
                        profile,
                        &phrasing.tool,
                        &phrasing.arguments,
                        settings.timeout,
                    )
                    .await
                }
            };
            if results.server.is_none() {
                results.server = server;
            }
            done.push(judge(
                catalog,
                query,
                &settings.types,
                phrasing,
                (reply, duration_s),
            ));
        }
        results.queries.push(QueryResult {
            id: query.id.clone(),
            category: query.category.clone(),
            phrasings: done,
        });
    }
    results
}

/// One wording of a query and the call it makes.
#[derive(Debug, Clone, PartialEq)]
pub struct Phrasing {
    /// The wording.
    pub user_query: String,
    /// The tool called (`SPARQL` for a SPARQL recipe).
    pub tool: String,
    /// Its arguments (a SPARQL recipe's: `sparql`, and `endpoint` when
    /// given).
    pub arguments: serde_json::Map<String, Value>,
}

/// The query's phrasings, the canonical first, as `catalog run` calls
/// them and `results.json` records them. A SPARQL query has one, its
/// "tool" `SPARQL` and its arguments the query and the endpoint.
pub fn phrasings(query: &Query) -> Vec<Phrasing> {
    let (tool, arguments) = match &query.run {
        Run::Tool { tool, arguments } => (tool, arguments),
        Run::Sparql { sparql, endpoint } => {
            let mut arguments = serde_json::Map::new();
            arguments.insert("sparql".into(), Value::String(sparql.clone()));
            if let Some(e) = endpoint {
                arguments.insert("endpoint".into(), Value::String(e.clone()));
            }
            return vec![Phrasing {
                user_query: query.user_query.clone(),
                tool: "SPARQL".into(),
                arguments,
            }];
        }
    };
    let phrasing = |user_query: &str, arguments: &serde_json::Map<String, Value>| Phrasing {
        user_query: user_query.to_string(),
        tool: tool.clone(),
        arguments: arguments.clone(),
    };
    std::iter::once(phrasing(&query.user_query, arguments))
        .chain(
            query
                .rephrasings
                .iter()
                .map(|r| phrasing(&r.user_query, &r.arguments)),
        )
        .collect()
}

#[cfg(feature = "harness")]
/// One call in a fresh session: the reply (or why none came), the call's
/// seconds, and what the server said it is.
async fn call(
    profile: &Profile,
    tool: &str,
    arguments: &serde_json::Map<String, Value>,
    timeout: Duration,
) -> (Result<Reply, String>, f64, Option<ServerInfo>) {
    let connection = match crate::mcp::upstream::connect(profile, timeout, None).await {
        Ok(c) => c,
        Err(reason) => {
            return (
                Err(format!("the session did not start: {reason}")),
                0.0,
                None,
            );
        }
    };
    let server = connection.server_info.as_ref().map(|i| ServerInfo {
        name: i.name.clone(),
        version: i.version.clone(),
    });
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments.clone());
    let started = Instant::now();
    let outcome = tokio::time::timeout(timeout, connection.service.peer().call_tool(params)).await;
    let seconds = crate::layout::round_seconds(started.elapsed().as_secs_f64());
    let reply = match outcome {
        Ok(Ok(result)) => Ok(Reply {
            is_error: result.is_error == Some(true),
            text: result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                .collect::<Vec<_>>()
                .join("\n"),
            structured: result.structured_content.clone(),
        }),
        Ok(Err(rmcp::service::ServiceError::McpError(e))) => Ok(Reply {
            is_error: true,
            text: format!("JSON-RPC error {}: {}", e.code.0, e.message),
            structured: None,
        }),
        Ok(Err(e)) => Err(format!("the call failed: {e}")),
        Err(_) => Err(format!("no reply within {} s", timeout.as_secs())),
    };
    let _ = connection.service.cancel().await;
    // A server may echo a header or environment value of the profile: the
    // reply is recorded in results.json, so it is redacted before it is
    // judged and kept (issue 24, item 27).
    let redactor = profile.redactor();
    let reply = reply
        .map(|mut r| {
            redactor.string(&mut r.text);
            if let Some(structured) = &mut r.structured {
                redactor.value(structured);
            }
            r
        })
        .map_err(|why| redactor.text(&why).into_owned());
    let server = server.map(|mut s| {
        redactor.string(&mut s.name);
        redactor.string(&mut s.version);
        s
    });
    (reply, seconds, server)
}

#[cfg(feature = "harness")]
/// A SPARQL query against `endpoint` (relative to the catalog's folder), or
/// the repository's configured endpoint (`okn-benchmark.toml`,
/// `[reference] endpoint`): the reply is the result table, as CSV text and
/// as structured content `{"columns": [...], "rows": [{COLUMN: CELL}]}`
/// (W3C CSV cells), which selectors read (`rows[*]`, `id` a column). A
/// query the endpoint refuses is an error reply; an endpoint that cannot be
/// opened is an execution error.
fn sparql_call(
    sparql: &str,
    endpoint: Option<&str>,
    settings: &RunSettings,
) -> (Result<Reply, String>, f64) {
    let spec = match endpoint {
        Some(e) => crate::sparql::EndpointSpec::resolve(e, &settings.catalog_dir),
        None => crate::config::configured_endpoint().and_then(|spec| {
            spec.ok_or_else(|| {
                crate::error::Error::Usage(format!(
                    "no SPARQL endpoint: give the query a run.endpoint, or set [reference] \
                     endpoint in {} (found in the current folder or above)",
                    crate::config::CONFIG_FILE
                ))
            })
        }),
    };
    let opened = spec
        .and_then(|s| s.open())
        .map_err(|e| format!("the endpoint could not be opened: {e}"));
    let endpoint = match opened {
        Ok(e) => e,
        Err(why) => return (Err(why), 0.0),
    };
    let started = Instant::now();
    let answer = endpoint.query(sparql);
    let seconds = crate::layout::round_seconds(started.elapsed().as_secs_f64());
    let reply = match answer {
        Ok(table) => {
            let rows: Vec<Value> = table
                .rows
                .iter()
                .map(|row| {
                    Value::Object(
                        table
                            .columns
                            .iter()
                            .zip(row)
                            .map(|(c, v)| (c.clone(), Value::String(v.clone())))
                            .collect(),
                    )
                })
                .collect();
            Reply {
                is_error: false,
                text: table.to_csv(),
                structured: Some(serde_json::json!({"columns": table.columns, "rows": rows})),
            }
        }
        Err(e) => Reply {
            is_error: true,
            text: e.to_string(),
            structured: None,
        },
    };
    (Ok(reply), seconds)
}

/// What one phrasing's expectations of the chosen `types` find on
/// `reply` (or, when no reply came, the reason why as every one's error),
/// and the candidates the query's selector reads in it: what
/// `results.json` records of a phrasing beside the call itself, and what
/// `catalog::verify` derives again from the recorded reply.
pub fn verdicts(
    catalog: &Catalog,
    query: &Query,
    types: &[Kind],
    reply: &std::result::Result<Reply, String>,
) -> (Vec<ExpectationResult>, Option<Vec<String>>) {
    let mut expectations = Vec::new();
    for (index, e) in query.expectations.iter().enumerate() {
        if !types.contains(&e.kind) {
            continue;
        }
        let outcome = match reply {
            Ok(r) => checks::evaluate(&e.check, query, &catalog.header.scope, r),
            Err(why) => Outcome::Error(why.clone()),
        };
        let detail = match &outcome {
            Outcome::Pass => None,
            Outcome::Fail(d) | Outcome::Error(d) => Some(d.clone()),
        };
        expectations.push(ExpectationResult {
            index,
            kind: e.kind,
            check: check_name(&e.check),
            status: checks::status(e, &outcome),
            detail,
            known_gap: e.known_gap.as_ref().map(|g| g.found.clone()),
        });
    }
    let candidates = match reply {
        Ok(r) => query
            .candidates
            .as_ref()
            .and_then(|_| checks::candidates(query, r).ok()),
        Err(_) => None,
    };
    (expectations, candidates)
}

/// One phrasing's record: its expectations of the chosen `types` judged
/// on the reply ([`verdicts`]). The reply's text is kept cut at
/// [`KEPT_TEXT_CHARS`] unless the cut text would judge otherwise (a long
/// JSON text that no longer parses, a `contains` value past the cut):
/// then it is kept whole, so the record always holds the evidence its
/// statuses follow from (issue 24, item 8).
pub fn judge(
    catalog: &Catalog,
    query: &Query,
    types: &[Kind],
    phrasing: &Phrasing,
    (reply, duration_s): (std::result::Result<Reply, String>, f64),
) -> PhrasingResult {
    let (expectations, candidates) = verdicts(catalog, query, types, &reply);
    let (execution_error, recorded) = match &reply {
        Err(why) => (Some(why.clone()), None),
        Ok(r) => {
            let whole = RecordedReply {
                is_error: r.is_error,
                text: r.text.clone(),
                text_cut: false,
                structured: r.structured.clone(),
            };
            let kept = if r.text.chars().count() > KEPT_TEXT_CHARS {
                let cut = RecordedReply {
                    text: r.text.chars().take(KEPT_TEXT_CHARS).collect(),
                    text_cut: true,
                    ..whole.clone()
                };
                let again = verdicts(catalog, query, types, &Ok(cut.reply()));
                if again == (expectations.clone(), candidates.clone()) {
                    cut
                } else {
                    whole
                }
            } else {
                whole
            };
            (None, Some(kept))
        }
    };
    PhrasingResult {
        user_query: phrasing.user_query.clone(),
        tool: phrasing.tool.clone(),
        arguments: phrasing.arguments.clone(),
        duration_s,
        execution_error,
        reply: recorded,
        candidates,
        expectations,
    }
}

/// The `check` name of `check`, as the catalog writes it.
pub fn check_name(check: &super::format::Check) -> String {
    serde_json::to_value(check)
        .ok()
        .and_then(|v| v.get("check").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default()
}

/// Counts of the canonical phrasings' statuses, by type then status.
pub fn counts(results: &Results) -> BTreeMap<Kind, BTreeMap<Status, usize>> {
    let mut out: BTreeMap<Kind, BTreeMap<Status, usize>> = BTreeMap::new();
    for q in &results.queries {
        for e in q
            .phrasings
            .first()
            .map(|p| p.expectations.as_slice())
            .unwrap_or_default()
        {
            *out.entry(e.kind).or_default().entry(e.status).or_default() += 1;
        }
    }
    out
}

/// True when a contract expectation of a canonical phrasing failed or
/// could not be evaluated: the run gates (exit 1).
pub fn contract_broken(results: &Results) -> bool {
    results.queries.iter().any(|q| {
        q.phrasings.first().is_some_and(|p| {
            p.expectations.iter().any(|e| {
                e.kind == Kind::Contract && matches!(e.status, Status::Fail | Status::Error)
            })
        })
    })
}
