//! `catalog.json` as types (`docs/CATALOG.md`; the JSON Schema
//! `schemas/catalog.schema.json` is generated from them): a header about
//! the server and what counts as in scope, and the queries, each a direct
//! tool call (or a SPARQL query) with typed expectations about its result.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// Version of the catalog format this version reads and writes.
pub const CATALOG_FORMAT: u32 = 1;

/// A whole catalog file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    /// [`CATALOG_FORMAT`].
    pub format: u32,
    /// What the catalog is about and what counts as in scope.
    pub header: Header,
    /// The research questions, each run as one call.
    pub queries: Vec<Query>,
}

/// The catalog's header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// The server the expectations are about (its name as it reports it).
    pub server: String,
    /// The server version the expectations were last confirmed against.
    pub server_version: String,
    /// The date they were last confirmed, `YYYY-MM-DD`.
    pub confirmed: String,
    /// What a candidate must be to count as in scope.
    pub scope: Scope,
    /// The query categories, each query naming one.
    pub categories: Vec<String>,
    /// The one category whose queries may name a rejected candidate
    /// outside the scope (the near neighbour from elsewhere that a scoped
    /// search must not return), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_scope_category: Option<String>,
    /// Dated search-quality observations: kept with the catalog, not rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
}

/// What counts as in scope: a candidate id starting with one of
/// `prefixes`, or equal to one of `ids`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scope {
    /// Id prefixes in scope (an IRI namespace, say).
    #[serde(default)]
    pub prefixes: Vec<String>,
    /// Ids in scope one by one.
    #[serde(default)]
    pub ids: Vec<String>,
}

impl Scope {
    /// True when `id` is in scope.
    pub fn holds(&self, id: &str) -> bool {
        self.prefixes.iter().any(|p| id.starts_with(p.as_str())) || self.ids.iter().any(|i| i == id)
    }
}

/// A dated observation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// When it was observed, `YYYY-MM-DD`.
    pub date: String,
    /// What was observed.
    pub text: String,
}

/// One research question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Query {
    /// Unique within the catalog.
    pub id: String,
    /// One of the header's categories.
    pub category: String,
    /// The question as a person would ask it.
    pub user_query: String,
    /// What the query is meant to catch.
    pub why: String,
    /// The call a client would derive from the question.
    pub run: Run,
    /// Where the candidates are in the call's result, for the checks that
    /// rank them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates: Option<Selector>,
    /// Other wordings of the same question, each run as a fresh call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rephrasings: Vec<Rephrasing>,
    /// The candidates that are right, and the near neighbours that are not.
    #[serde(default)]
    pub variables: Variables,
    /// What a correct outcome looks like.
    pub expectations: Vec<Expectation>,
}

/// How a query is run: a tool call, or a SPARQL query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
pub enum Run {
    /// `tools/call` of `tool` with `arguments`.
    Tool {
        /// The tool's name.
        tool: String,
        /// Its arguments (a JSON object).
        #[serde(default)]
        arguments: serde_json::Map<String, Value>,
    },
    /// A SPARQL query against `endpoint`, or the configured endpoint.
    Sparql {
        /// The query text.
        sparql: String,
        /// The endpoint URL; the profile's or the repository's when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        endpoint: Option<String>,
    },
}

/// Another wording, with the arguments a client would derive from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rephrasing {
    /// The wording.
    pub user_query: String,
    /// The call's arguments for it (the query's tool).
    pub arguments: serde_json::Map<String, Value>,
}

/// Where candidates are in a result: `path` into the reply's structured
/// content (or its text parsed as JSON), `[*]` for every element of an
/// array; `id` the member of each element that is its id (the element
/// itself when absent). `results[*]` with `id: "iri"` reads
/// `{"results": [{"iri": ...}, ...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Selector {
    /// Dotted path, `[*]` and `[N]` for array elements.
    pub path: String,
    /// The member holding each candidate's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// Which candidates are acceptable and which are semantic errors.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Variables {
    /// Acceptable candidate ids, listed.
    #[serde(default)]
    pub acceptable: Vec<String>,
    /// Acceptable candidates described by metadata instead of listed: a
    /// member name and the values it may have (free, for a maintainer).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub acceptable_metadata: BTreeMap<String, Value>,
    /// Acceptable candidates described as a family: every id starting with
    /// one of these (a publisher's one-variable-per-country series, say,
    /// where listing each member would be a maintenance burden). Each must
    /// lie inside a scope prefix of the header (`docs/CATALOG.md`, "Validation").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acceptable_prefixes: Vec<String>,
    /// Near neighbours that would be wrong, each with why.
    #[serde(default)]
    pub rejected: Vec<Rejected>,
}

impl Variables {
    /// True when `id` is acceptable: listed in `acceptable` or starting
    /// with one of `acceptable_prefixes`.
    pub fn accepts(&self, id: &str) -> bool {
        self.acceptable.iter().any(|a| a == id)
            || self
                .acceptable_prefixes
                .iter()
                .any(|p| id.starts_with(p.as_str()))
    }

    /// True when some candidate could be acceptable (a list or a family).
    pub fn names_acceptable(&self) -> bool {
        !self.acceptable.is_empty() || !self.acceptable_prefixes.is_empty()
    }
}

/// A candidate that must not be taken for the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rejected {
    /// Its id.
    pub id: String,
    /// Why it would be a semantic error.
    pub reason: String,
}

/// What an expectation's failure means (`docs/CATALOG.md`, "Types").
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Behaviour promised: a failure gates a release.
    Contract,
    /// Search quality: a failure is a finding, not a breakage.
    Quality,
    /// How the server behaves today, defects included: a change is news,
    /// in either direction.
    CurrentState,
}

/// One expectation: its type, its check, and a known gap if it already
/// failed when the catalog was confirmed. (Members it does not know are
/// refused by [`load`]: serde cannot refuse them beside a flattened
/// check.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Expectation {
    /// What a failure means.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// What is checked.
    #[serde(flatten)]
    pub check: Check,
    /// Failing already when the catalog was confirmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_gap: Option<KnownGap>,
}

/// A dated known gap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KnownGap {
    /// When it was found, `YYYY-MM-DD`.
    pub found: String,
    /// What is wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The checks (`docs/CATALOG.md`, "Checks"). Adding one is a variant here
/// and its function in `catalog::checks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "check", rename_all = "snake_case")]
pub enum Check {
    /// The call succeeds: not an error reply, and not a successful reply
    /// that reports a failure (a soft error, as the proxy records them).
    CallSucceeds,
    /// Every candidate is in the header's scope.
    AllInScope,
    /// An acceptable candidate is among the first `n`.
    AcceptableInTop {
        /// How many candidates from the top (1 or more).
        n: usize,
    },
    /// No rejected candidate ranks above the first acceptable one.
    NoRejectedAboveAcceptable,
    /// At least `n` candidates (or result rows).
    CountAtLeast {
        /// The least count.
        n: usize,
    },
    /// At most `n` candidates (or result rows).
    CountAtMost {
        /// The greatest count.
        n: usize,
    },
    /// The result's text contains `value`.
    Contains {
        /// The text looked for.
        value: String,
    },
    /// The value at `path` in the result equals `value`.
    FieldEquals {
        /// Dotted path into the result ([`Selector`]'s syntax, no `[*]`).
        path: String,
        /// The value it must equal.
        value: Value,
    },
    /// The reply is an error reply (`isError`, or a JSON-RPC error): a bad
    /// request must fail, in the protocol, not only in its text.
    IsError,
}

/// Reads and parses a catalog.
///
/// Errors: the file cannot be read (naming it), or it is not a catalog:
/// the JSON is malformed, or a member is missing, unknown or of the
/// wrong type, named with its line and, inside `queries`, the query's id
/// ([`Error::Usage`] naming the file; exit 2).
pub fn load(path: &Path) -> Result<Catalog> {
    parse(path, &crate::fsutil::read_text(path)?)
}

/// Parses `text`, the catalog file `path` holds (or held: `results.json`
/// keeps the text a run read, `catalog_source`), as [`load`] does.
///
/// Errors: as [`load`]'s, naming `path`.
pub fn parse(path: &Path, text: &str) -> Result<Catalog> {
    // RFC 8259 §8.1 lets a parser ignore a byte order mark: editors on
    // Windows write one.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Error::at_line(path, e.line() as u64, e.to_string()))?;
    if !value.is_object() {
        return Err(Error::at_line(
            path,
            1,
            "not a catalog: the top level must be an object with \"format\", \"header\" and \"queries\"",
        ));
    }
    // A flattened check hides unknown members from serde: look for them.
    let queries = value.get("queries").and_then(Value::as_array);
    for (i, query) in queries.into_iter().flatten().enumerate() {
        let expectations = query.get("expectations").and_then(Value::as_array);
        for (k, raw) in expectations.into_iter().flatten().enumerate() {
            if let Some(unknown) = unknown_member(raw) {
                let which = query_name(&value, i);
                return Err(Error::file(
                    path,
                    format!("{which}: expectations[{k}]: unknown member '{unknown}'"),
                ));
            }
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let line = e.inner().line() as u64;
        let mut message = crate::error::json_message(e.inner());
        let mut at = e.path().to_string();
        // An unknown member ends the path: the message names it already.
        if message.starts_with("unknown field")
            && let Some(cut) = at.rfind('.')
        {
            at.truncate(cut);
        }
        let place = place_of(&at, &value);
        if message.contains("untagged enum Run") {
            message = "give either \"tool\" with \"arguments\", or \"sparql\" with an optional \"endpoint\"".into();
        }
        Error::at_line(path, line, format!("{place}: {message}"))
    })
}

/// `query 'ID'` for the query at index `i` of `catalog`, or `queries[I]`
/// when it has no id.
fn query_name(catalog: &Value, i: usize) -> String {
    let id = catalog["queries"][i].get("id").and_then(Value::as_str);
    id.map_or(format!("queries[{i}]"), |id| format!("query '{id}'"))
}

/// Where a serde path (`queries[2].variables.rejected[0].reason`) is, in
/// validate's words: `query 'ID': variables.rejected[0].reason`.
fn place_of(path: &str, catalog: &Value) -> String {
    let query = path
        .strip_prefix("queries[")
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(index, rest)| Some((index.parse::<usize>().ok()?, rest)));
    match query {
        Some((i, rest)) => {
            let rest = rest.strip_prefix('.').unwrap_or(rest);
            let which = query_name(catalog, i);
            if rest.is_empty() {
                which
            } else {
                format!("{which}: {rest}")
            }
        }
        None if path == "." || path.is_empty() => "catalog".into(),
        None => path.to_string(),
    }
}

/// A member of the expectation `raw` that its check does not have: the
/// first one that reading and writing it again drops.
fn unknown_member(raw: &Value) -> Option<String> {
    let read = Expectation::deserialize(raw).ok()?;
    let written = serde_json::to_value(&read).ok()?;
    raw.as_object()?
        .keys()
        .find(|k| written.get(k.as_str()).is_none())
        .cloned()
}
