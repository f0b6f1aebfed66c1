//! Trajectory expectations (`docs/TRAJECTORY.md`; issue 27): typed,
//! deterministic checks on how an agent reached its answer, judged from an
//! attempt's `calls.json` (and what it submitted), beside whether the
//! answer was right and never mixed into it.
//!
//! - A record names its expectations in its `#+` header, one line each:
//!   `#+ expect.ID: TYPE CHECK [FIELD=VALUE ...]`
//!   (`#+ expect.graphs: contract key-graphs queries=first`); a corpus
//!   gives defaults in `okn-benchmark.toml` ([`defaults`]), which a record
//!   replaces by id or turns off (`#+ expect.ID: off`).
//! - Each is typed as the catalog types its expectations
//!   (`docs/CATALOG.md`, "Types"): `contract` (a failure means the server
//!   or the prompt is broken) or `quality` (descriptive), with an optional
//!   dated `known_gap` ([`crate::catalog::format::KnownGap`]).
//! - [`checks`] judges them, one [`Status`] per expectation per attempt.
//!
//! This module reads no file but through [`defaults::Defaults::find`].

pub mod checks;
pub mod defaults;
pub mod graphs;
mod parse;

use serde::{Deserialize, Serialize};

pub use crate::catalog::format::{Kind, KnownGap};
pub use parse::{cannot_fail, parse_line};

/// The checks an expectation can name (`docs/TRAJECTORY.md`, one section
/// each). Adding one is a variant here, its fields in [`CheckName::fields`]
/// and its function in [`checks`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum CheckName {
    /// The queries address the answer key's graphs: every query that
    /// names a graph (`queries=all`), or the first query (`queries=first`).
    KeyGraphs,
    /// A named tool is called (`tool=NAME`).
    ToolUsed,
    /// A named tool is never called, not even refused (`tool=NAME`).
    ToolUnused,
    /// A discovery call (a schema, lookup or listing call: any call that
    /// carries no query) comes before the first query.
    DiscoveryFirst,
    /// These tools are called in this order, other calls between them
    /// allowed (a subsequence; `tools=a,b,...`).
    ToolOrder,
    /// At most `n` calls (every call but `submit_csv`).
    MaxCalls,
    /// At most `n` queries (calls carrying a SPARQL query).
    MaxQueries,
    /// Every IRI the agent submitted appeared in a tool's reply before it
    /// was submitted: traceable, not recalled.
    Traceable,
    /// An empty answer is submitted only after at least one query that ran
    /// without error: discovery before concluding absence.
    AbsenceAfterQuery,
    /// No call to a withheld tool was attempted.
    WithheldUnattempted,
}

/// Every check, in the order `docs/TRAJECTORY.md` documents them.
pub const CHECKS: [CheckName; 10] = [
    CheckName::KeyGraphs,
    CheckName::ToolUsed,
    CheckName::ToolUnused,
    CheckName::DiscoveryFirst,
    CheckName::ToolOrder,
    CheckName::MaxCalls,
    CheckName::MaxQueries,
    CheckName::Traceable,
    CheckName::AbsenceAfterQuery,
    CheckName::WithheldUnattempted,
];

impl CheckName {
    /// The name as written in a header line and in `result.json`
    /// (`key-graphs`).
    pub fn name(self) -> &'static str {
        match self {
            CheckName::KeyGraphs => "key-graphs",
            CheckName::ToolUsed => "tool-used",
            CheckName::ToolUnused => "tool-unused",
            CheckName::DiscoveryFirst => "discovery-first",
            CheckName::ToolOrder => "tool-order",
            CheckName::MaxCalls => "max-calls",
            CheckName::MaxQueries => "max-queries",
            CheckName::Traceable => "traceable",
            CheckName::AbsenceAfterQuery => "absence-after-query",
            CheckName::WithheldUnattempted => "withheld-unattempted",
        }
    }

    /// The check of that name.
    pub fn of(name: &str) -> Option<CheckName> {
        CHECKS.into_iter().find(|c| c.name() == name)
    }

    /// The fields the check requires (each exactly once; none other but
    /// `known_gap` and `note`).
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            CheckName::KeyGraphs => &["queries"],
            CheckName::ToolUsed | CheckName::ToolUnused => &["tool"],
            CheckName::ToolOrder => &["tools"],
            CheckName::MaxCalls | CheckName::MaxQueries => &["n"],
            _ => &[],
        }
    }
}

/// Which queries `key-graphs` looks at.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Queries {
    /// Every query that names a graph.
    All,
    /// The first query.
    First,
}

/// One expectation as applied to a question: as `result.json` records it
/// (`docs/FORMAT.md`, "result.json", `expectations`), so that loading a
/// root judges its attempts again without the corpus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// Its id: lowercase letters, digits, `-` and `_`, at most 40
    /// characters (what study regions name: `expectation=ID`).
    pub id: String,
    /// What a failure means: `contract` or `quality`.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// What is checked.
    pub check: CheckName,
    /// `key-graphs`: which queries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries: Option<Queries>,
    /// `tool-used`, `tool-unused`: the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// `tool-order`: the tools, in order (two or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// `max-calls`, `max-queries`: the most allowed (1 or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<usize>,
    /// Failing already when the expectation was written: a later failure
    /// is an open gap, a pass a fixed one, never a new regression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_gap: Option<KnownGap>,
}

impl Expectation {
    /// Why this expectation is not one a header line could have given
    /// (a field its check does not take, a field it needs missing, an
    /// id, type or value out of range); `None` when it fits. The rule
    /// [`parse_line`] applies, applied again to what `result.json`
    /// records.
    pub fn misfit(&self) -> Option<String> {
        parse::misfit(self)
    }
}

/// Why a question's recorded `expectations` are not a list a corpus
/// could have given: one that does not fit its check
/// ([`Expectation::misfit`]), or two of one id, or not sorted by id.
pub fn misfit_of(expectations: &[Expectation]) -> Option<String> {
    for e in expectations {
        if let Some(why) = e.misfit() {
            return Some(format!("expectation '{}': {why}", e.id));
        }
    }
    expectations
        .windows(2)
        .any(|w| w[0].id >= w[1].id)
        .then(|| "its expectations are not sorted by id, each once".to_string())
}

/// How two lists of one question's expectations differ, one phrase per
/// expectation id that differs, in id order: `` `x` only in `a_name` ``,
/// or `` `x`: known_gap (none) in a_name, {"found":"2020-01-01"} in
/// b_name `` for each member that differs (as `result.json` writes it).
/// Empty when they are the same. What `build` says of a `result.json`
/// whose expectations are not its corpus's, and `compare` of an
/// expectation defined otherwise in the two roots (issue 27).
pub fn differences(a: &[Expectation], b: &[Expectation], names: (&str, &str)) -> Vec<String> {
    let by_id = |list: &[Expectation]| -> std::collections::BTreeMap<String, serde_json::Value> {
        list.iter()
            .map(|e| (e.id.clone(), serde_json::to_value(e).unwrap_or_default()))
            .collect()
    };
    let (x, y) = (by_id(a), by_id(b));
    let ids: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
    let show = |v: Option<&serde_json::Value>| match v {
        None => "(none)".to_string(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let mut out = Vec::new();
    for id in ids {
        let id_shown = crate::text::printable(id);
        match (x.get(id), y.get(id)) {
            (Some(p), Some(q)) if p != q => {
                let members: Vec<String> = crate::fsutil::member_differences(p, q)
                    .into_iter()
                    .map(|(k, p, q)| {
                        format!(
                            "{k} {} in {}, {} in {}",
                            crate::text::printable(&show(p)),
                            names.0,
                            crate::text::printable(&show(q)),
                            names.1
                        )
                    })
                    .collect();
                out.push(format!("`{id_shown}`: {}", members.join("; ")));
            }
            (Some(_), None) => out.push(format!("`{id_shown}` only in {}", names.0)),
            (None, Some(_)) => out.push(format!("`{id_shown}` only in {}", names.1)),
            _ => {}
        }
    }
    out
}

/// The status one expectation ends in for one attempt
/// (`docs/TRAJECTORY.md`, "Statuses"); its type decides what it means.
/// The catalog's statuses (`crate::catalog::checks::Status`) bear the
/// same names but one: a catalog check runs a tool call, which can fail to
/// run (`error`); an expectation reads calls already recorded, which
/// never fails to run but may give it nothing to judge
/// (`not_applicable`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It holds.
    Pass,
    /// It does not.
    Fail,
    /// The attempt gives the check nothing to judge (no query made, no
    /// empty answer, nothing withheld, the episode never measured).
    NotApplicable,
    /// A known gap, failing still: a standing finding, not news.
    KnownGapOpen,
    /// A known gap that now holds: news, in the good direction.
    KnownGapFixed,
}

impl Status {
    /// The status as `result.json` writes it (`known_gap_open`).
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::NotApplicable => "not_applicable",
            Status::KnownGapOpen => "known_gap_open",
            Status::KnownGapFixed => "known_gap_fixed",
        }
    }

    /// The check held (a pass, or a known gap fixed); `None` when it was
    /// not applicable.
    pub fn held(self) -> Option<bool> {
        match self {
            Status::Pass | Status::KnownGapFixed => Some(true),
            Status::Fail | Status::KnownGapOpen => Some(false),
            Status::NotApplicable => None,
        }
    }
}

/// One expectation judged on one attempt: what `result.json` records per
/// attempt under `expectations`, keyed by the expectation's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Judged {
    /// The status.
    pub status: Status,
    /// Why, in a sentence (what failed, or why it does not apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The 1-based index in `calls.json` of the call that made it fail
    /// (the one a timeline highlights), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<usize>,
}
