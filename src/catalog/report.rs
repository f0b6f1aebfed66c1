//! `report.md` of a catalog run (`docs/CATALOG.md`, "The report"): the
//! counts by type and status, then what needs attention, then the open
//! known gaps as standing findings, then every query.

use super::checks::Status;
use super::format::Kind;
use super::run::{ExpectationResult, QueryResult, Results, counts};

/// The Markdown report of `results`. Deterministic: the same results give
/// the same bytes (durations are not in it; they are in `results.json`).
pub fn markdown(results: &Results) -> String {
    let mut out = String::new();
    let server = results
        .server
        .as_ref()
        .map_or("a server that never started".to_string(), |s| {
            format!("{} {}", s.name, s.version)
        });
    out.push_str(&format!("# Catalog run: {}\n\n", md(&results.catalog)));
    out.push_str(&format!(
        "Against {} (profile `{}`), catalog {}. Only canonical phrasings are counted; \
         rephrasings are listed with their query.\n\n",
        md(&server),
        md(&results.profile),
        results.catalog_sha256
    ));
    out.push_str("| type | pass | fail | error | known gap open | known gap fixed |\n|---|---:|---:|---:|---:|---:|\n");
    let counted = counts(results);
    for kind in &results.types {
        let c = counted.get(kind).cloned().unwrap_or_default();
        let n = |s: Status| c.get(&s).copied().unwrap_or(0);
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            kind_name(*kind),
            n(Status::Pass),
            n(Status::Fail),
            n(Status::Error),
            n(Status::KnownGapOpen),
            n(Status::KnownGapFixed)
        ));
    }
    let canonical = |q: &QueryResult| -> Vec<ExpectationResult> {
        q.phrasings
            .first()
            .map(|p| p.expectations.clone())
            .unwrap_or_default()
    };
    let mut attention = Vec::new();
    let mut gaps = Vec::new();
    for q in &results.queries {
        for e in canonical(q) {
            let line = format!(
                "- {} expectation {} ({} `{}`): {}",
                md(&q.id),
                e.index + 1,
                kind_name(e.kind),
                e.check,
                what(&e)
            );
            match (e.kind, e.status) {
                (_, Status::KnownGapOpen) => gaps.push(line),
                (_, Status::Error) | (_, Status::KnownGapFixed) => attention.push(line),
                (Kind::Contract | Kind::Quality | Kind::CurrentState, Status::Fail) => {
                    attention.push(line)
                }
                _ => {}
            }
        }
    }
    out.push_str("\n## Attention required\n\n");
    if attention.is_empty() {
        out.push_str("Nothing: no contract or quality failure, no execution error, no known gap fixed, no current-state failure.\n");
    } else {
        out.push_str(&attention.join("\n"));
        out.push('\n');
    }
    out.push_str("\n## Known gaps still open\n\n");
    if gaps.is_empty() {
        out.push_str("None.\n");
    } else {
        out.push_str(&gaps.join("\n"));
        out.push('\n');
    }
    out.push_str("\n## Queries\n");
    for q in &results.queries {
        out.push_str(&format!("\n### {} ({})\n\n", md(&q.id), md(&q.category)));
        for (k, p) in q.phrasings.iter().enumerate() {
            let label = if k == 0 {
                "canonical".to_string()
            } else {
                format!("rephrasing {k}")
            };
            out.push_str(&format!(
                "- {label}: \"{}\" → {}",
                md(&p.user_query),
                md(&p.tool)
            ));
            if let Some(why) = &p.execution_error {
                out.push_str(&format!(": execution error: {}", md(why)));
            } else if let Some(c) = &p.candidates {
                let top: Vec<String> = c.iter().take(5).map(|id| md(id)).collect();
                out.push_str(&format!(
                    ", {} candidates{}",
                    c.len(),
                    if top.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", top.join(", "))
                    }
                ));
            }
            out.push('\n');
            for e in &p.expectations {
                out.push_str(&format!(
                    "  - {} `{}`: {}\n",
                    kind_name(e.kind),
                    e.check,
                    what(e)
                ));
            }
        }
    }
    out
}

/// A status in words, with its detail.
fn what(e: &ExpectationResult) -> String {
    let status = match e.status {
        Status::Pass => "pass".to_string(),
        Status::Fail => "fail".to_string(),
        Status::Error => "error".to_string(),
        Status::KnownGapOpen => format!(
            "known gap (found {}), still failing",
            e.known_gap.as_deref().unwrap_or("?")
        ),
        Status::KnownGapFixed => format!(
            "known gap (found {}), fixed",
            e.known_gap.as_deref().unwrap_or("?")
        ),
    };
    match &e.detail {
        Some(d) => format!("{status}: {}", md(d)),
        None => status,
    }
}

/// A type's name as the catalog writes it.
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Contract => "contract",
        Kind::Quality => "quality",
        Kind::CurrentState => "current_state",
    }
}

/// Text from a server or a catalog, safe in Markdown: no line ends, and
/// the characters that would start markup escaped.
fn md(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}
