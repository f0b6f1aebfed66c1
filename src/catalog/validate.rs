//! `catalog validate`, offline: the rules of `docs/CATALOG.md`,
//! "Validation", that a catalog must keep before any query reaches a
//! server. Each problem names the query (or the header) and the field.

use std::collections::BTreeSet;

use super::format::{CATALOG_FORMAT, Catalog, Check, Query, Run};

/// One rule broken: where (`header`, or `query 'ID'`), the field, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// `header` or `query 'ID'`.
    pub place: String,
    /// The field, as a path (`expectations[2].n`).
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.place, self.field, self.message)
    }
}

/// True for a calendar date written `YYYY-MM-DD` (the Gregorian calendar,
/// leap years included).
pub fn is_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return false;
    };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(y, 4) && digits(m, 2) && digits(d, 2)) {
        return false;
    }
    let (y, m, d): (u32, u32, u32) = (
        y.parse().unwrap_or(0),
        m.parse().unwrap_or(0),
        d.parse().unwrap_or(0),
    );
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// Every problem of `catalog`, header first, then the queries in order.
/// An empty list is a valid catalog.
pub fn validate(catalog: &Catalog) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut header = |field: &str, message: String| {
        problems.push(Problem {
            place: "header".into(),
            field: field.into(),
            message,
        })
    };
    if catalog.format != CATALOG_FORMAT {
        header(
            "format",
            format!(
                "{} is not a catalog format this version reads ({CATALOG_FORMAT})",
                catalog.format
            ),
        );
    }
    let h = &catalog.header;
    if h.server.trim().is_empty() {
        header(
            "server",
            "empty: name the server the expectations are about".into(),
        );
    }
    if h.server_version.trim().is_empty() {
        header(
            "server_version",
            "empty: name the version the expectations were confirmed against".into(),
        );
    }
    if !is_date(&h.confirmed) {
        header(
            "confirmed",
            format!("'{}' is not a date YYYY-MM-DD", h.confirmed),
        );
    }
    if h.scope.prefixes.is_empty() && h.scope.ids.is_empty() {
        header(
            "scope",
            "empty: give the prefixes or ids that count as in scope".into(),
        );
    }
    if h.scope.prefixes.iter().any(|p| p.is_empty()) {
        header(
            "scope.prefixes",
            "an empty prefix puts every id in scope: remove it".into(),
        );
    }
    if h.categories.is_empty() {
        header("categories", "empty: every query names one".into());
    }
    let mut seen = BTreeSet::new();
    for c in &h.categories {
        if !seen.insert(c.as_str()) {
            header("categories", format!("'{c}' is listed twice"));
        }
        if c.trim().is_empty() {
            header("categories", "an empty category: name it".into());
        }
    }
    if let Some(c) = &h.out_of_scope_category
        && !h.categories.contains(c)
    {
        header(
            "out_of_scope_category",
            format!("'{c}' is not one of the categories"),
        );
    }
    for (i, finding) in h.findings.iter().enumerate() {
        if !is_date(&finding.date) {
            header(
                &format!("findings[{i}].date"),
                format!("'{}' is not a date YYYY-MM-DD", finding.date),
            );
        }
    }
    if catalog.queries.is_empty() {
        problems.push(Problem {
            place: "catalog".into(),
            field: "queries".into(),
            message: "none: a catalog that checks nothing would pass every gate".into(),
        });
    }
    let mut ids = BTreeSet::new();
    for query in &catalog.queries {
        let place = format!("query '{}'", query.id);
        if query.id.trim().is_empty() {
            problems.push(Problem {
                place: place.clone(),
                field: "id".into(),
                message: "empty".into(),
            });
        } else if !ids.insert(query.id.as_str()) {
            problems.push(Problem {
                place: place.clone(),
                field: "id".into(),
                message: "used by an earlier query too: ids are unique".into(),
            });
        }
        for (field, message) in query_problems(catalog, query) {
            problems.push(Problem {
                place: place.clone(),
                field,
                message,
            });
        }
    }
    problems
}

/// The problems of one query, as (field, message).
fn query_problems(catalog: &Catalog, query: &Query) -> Vec<(String, String)> {
    let h = &catalog.header;
    let mut out = Vec::new();
    if !h.categories.contains(&query.category) {
        let known = h.categories.join(", ");
        out.push((
            "category".into(),
            format!(
                "'{}' is not one of the categories ({known})",
                query.category
            ),
        ));
    }
    for field in [("user_query", &query.user_query), ("why", &query.why)] {
        if field.1.trim().is_empty() {
            out.push((field.0.into(), "empty".into()));
        }
    }
    match &query.run {
        Run::Tool { tool, .. } if tool.trim().is_empty() => {
            out.push(("run.tool".into(), "empty".into()))
        }
        Run::Sparql { sparql, .. } if sparql.trim().is_empty() => {
            out.push(("run.sparql".into(), "empty".into()))
        }
        Run::Sparql {
            endpoint: Some(e), ..
        } if e.trim().is_empty() => out.push((
            "run.endpoint".into(),
            "empty: give an endpoint, or leave it out for the configured one".into(),
        )),
        Run::Sparql { .. } if !query.rephrasings.is_empty() => out.push((
            "rephrasings".into(),
            "a SPARQL query has no wording to vary: rephrasings need a tool call".into(),
        )),
        _ => {}
    }
    if let Some(selector) = &query.candidates {
        if let Err(e) = super::select::Path::parse(&selector.path) {
            out.push(("candidates.path".into(), e));
        }
        if selector.id.as_deref().is_some_and(|id| id.is_empty()) {
            out.push((
                "candidates.id".into(),
                "empty: name the member holding each id, or leave it out".into(),
            ));
        }
    }
    let v = &query.variables;
    for (i, id) in v.acceptable.iter().enumerate() {
        if !h.scope.holds(id) {
            out.push((
                format!("variables.acceptable[{i}]"),
                format!("'{id}' is outside the header's scope"),
            ));
        }
    }
    for (i, prefix) in v.acceptable_prefixes.iter().enumerate() {
        let field = format!("variables.acceptable_prefixes[{i}]");
        if prefix.is_empty() {
            out.push((
                field,
                "empty: it would make every candidate acceptable".into(),
            ));
        } else if !h
            .scope
            .prefixes
            .iter()
            .any(|p| prefix.starts_with(p.as_str()))
        {
            out.push((
                field,
                format!("'{prefix}' does not lie inside a scope prefix of the header"),
            ));
        }
    }
    let may_be_outside = h.out_of_scope_category.as_deref() == Some(query.category.as_str());
    for (i, r) in v.rejected.iter().enumerate() {
        if !h.scope.holds(&r.id) && !may_be_outside {
            let rule = match &h.out_of_scope_category {
                Some(c) => format!("only queries of category '{c}' may name one"),
                None => "the header names no category that may".into(),
            };
            out.push((
                format!("variables.rejected[{i}]"),
                format!("'{}' is outside the scope: {rule}", r.id),
            ));
        }
        if v.accepts(&r.id) {
            out.push((
                format!("variables.rejected[{i}]"),
                format!("'{}' is also acceptable", r.id),
            ));
        }
        if r.reason.trim().is_empty() {
            out.push((
                format!("variables.rejected[{i}].reason"),
                "empty: say why it would be wrong".into(),
            ));
        }
    }
    if query.expectations.is_empty() {
        out.push((
            "expectations".into(),
            "none: a query checks at least one thing".into(),
        ));
    }
    out.extend(expectation_problems(query));
    out
}

/// The problems of each of `query`'s expectations: fields of the check,
/// the candidates and variables it needs, a dated known gap.
fn expectation_problems(query: &Query) -> Vec<(String, String)> {
    let v = &query.variables;
    let mut out = Vec::new();
    for (i, e) in query.expectations.iter().enumerate() {
        let field = |name: &str| format!("expectations[{i}]{name}");
        let ranks = matches!(
            e.check,
            Check::AllInScope | Check::AcceptableInTop { .. } | Check::NoRejectedAboveAcceptable
        );
        if ranks && query.candidates.is_none() {
            out.push((
                field(".check"),
                "ranks candidates: the query needs 'candidates' (where they are in the result)"
                    .into(),
            ));
        }
        match &e.check {
            Check::AcceptableInTop { n } if *n == 0 => {
                out.push((field(".n"), "0: give 1 or more".into()))
            }
            Check::AcceptableInTop { .. } | Check::NoRejectedAboveAcceptable
                if !v.names_acceptable() =>
            {
                out.push((
                    field(".check"),
                    "needs acceptable candidates: variables.acceptable or acceptable_prefixes"
                        .into(),
                ))
            }
            Check::CountAtLeast { n: 0 } => out.push((
                field(".n"),
                "0: every reply has at least 0 candidates, so it always passes".into(),
            )),
            Check::Contains { value } if value.is_empty() => out.push((
                field(".value"),
                "empty: every reply contains it, so it always passes".into(),
            )),
            Check::NoRejectedAboveAcceptable if v.rejected.is_empty() => out.push((
                field(".check"),
                "needs rejected candidates in variables.rejected".into(),
            )),
            Check::FieldEquals { path, .. } => {
                if let Err(e) = super::select::Path::parse(path) {
                    out.push((field(".path"), e));
                }
            }
            _ => {}
        }
        if let Some(gap) = &e.known_gap
            && !is_date(&gap.found)
        {
            out.push((
                field(".known_gap.found"),
                format!("'{}' is not a date YYYY-MM-DD", gap.found),
            ));
        }
    }
    out
}

#[cfg(feature = "harness")]
/// The problems of `catalog` against the server's `tools` (as it lists
/// them; no tool is called): every `run.tool` is one of them, and every
/// argument of a query and of its rephrasings is a property of the tool's
/// `inputSchema` (when the schema lists properties) and every property it
/// requires is given. Names that are close get a did-you-mean.
pub fn tool_problems(catalog: &Catalog, tools: &[rmcp::model::Tool]) -> Vec<Problem> {
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let mut problems = Vec::new();
    for query in &catalog.queries {
        let Run::Tool { tool, arguments } = &query.run else {
            continue;
        };
        let place = format!("query '{}'", query.id);
        let mut problem = |field: String, message: String| {
            problems.push(Problem {
                place: place.clone(),
                field,
                message,
            })
        };
        let Some(found) = tools.iter().find(|t| t.name == tool.as_str()) else {
            problem(
                "run.tool".into(),
                format!(
                    "'{tool}' is not a tool of the server{} (it has {})",
                    crate::suggest::did_you_mean(tool, names.iter().copied()),
                    names.join(", ")
                ),
            );
            continue;
        };
        let schema = &found.input_schema;
        let properties = schema
            .get("properties")
            .and_then(serde_json::Value::as_object);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(serde_json::Value::as_array)
            .map(|r| r.iter().filter_map(serde_json::Value::as_str).collect())
            .unwrap_or_default();
        let sets = std::iter::once(("run.arguments".to_string(), arguments)).chain(
            query
                .rephrasings
                .iter()
                .enumerate()
                .map(|(i, r)| (format!("rephrasings[{i}].arguments"), &r.arguments)),
        );
        for (field, given) in sets {
            if let Some(properties) = properties {
                for name in given.keys() {
                    if !properties.contains_key(name) {
                        let known: Vec<&str> = properties.keys().map(String::as_str).collect();
                        problem(
                            format!("{field}.{name}"),
                            format!(
                                "'{tool}' takes no argument '{name}'{} (it takes {})",
                                crate::suggest::did_you_mean(name, known.iter().copied()),
                                if known.is_empty() {
                                    "none".to_string()
                                } else {
                                    known.join(", ")
                                }
                            ),
                        );
                    }
                }
            }
            for name in &required {
                if !given.contains_key(*name) {
                    problem(
                        field.clone(),
                        format!("'{tool}' requires the argument '{name}'"),
                    );
                }
            }
        }
    }
    problems
}
