//! `report.md` of a catalog run (`docs/CATALOG.md`, "The report"): the
//! counts by type and status, then what needs attention, then the open
//! known gaps as standing findings, then every query.

use super::checks::Status;
use super::format::{Catalog, Kind};
use super::robustness::{self, Ending, GapAcross};
use super::run::{ExpectationResult, QueryResult, Results, counts};

/// The Markdown report of `results` (a run of `catalog`). Deterministic:
/// the same results give the same bytes (durations are not in it; they
/// are in `results.json`).
pub fn markdown(results: &Results, catalog: &Catalog) -> String {
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
    out.push_str(&robustness_section(results, catalog));
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

/// Text from a server or a catalog, safe in Markdown and on a terminal: no
/// line end, control character or bidirectional override, and the
/// characters that would start markup escaped.
pub(crate) fn md(text: &str) -> String {
    let plain = terminal(text);
    let mut out = String::with_capacity(plain.len());
    for c in plain.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `## Rephrasing robustness`: per query run in several wordings, the
/// facts of `catalog::robustness`, described, never judged.
fn robustness_section(results: &Results, catalog: &Catalog) -> String {
    let mut out = String::from(
        "\n## Rephrasing robustness\n\nDescriptive evidence (quality, never a contract): whether the intended candidate stays discoverable and the traps stay controlled when the wording changes.\n",
    );
    let mut any = false;
    for result in &results.queries {
        let Some(query) = catalog.queries.iter().find(|q| q.id == result.id) else {
            continue;
        };
        let Some(r) = robustness::of(query, result) else {
            continue;
        };
        any = true;
        let m = r.phrasings.len();
        out.push_str(&format!("\n### {}\n\n", md(&r.id)));
        out.push_str("| phrasing | first acceptable at | ended | trap above it | top-5 overlap with canonical |\n|---|---:|---|---|---:|\n");
        for p in &r.phrasings {
            let ended = match p.ending {
                Ending::Acceptable => "acceptable found",
                Ending::NoneAcceptable => "candidates, none acceptable",
                Ending::Empty => "no candidates",
                Ending::Unreadable => "no readable candidates",
            };
            out.push_str(&format!(
                "| {} | {} | {ended} | {} | {} of {} |\n",
                md(&p.user_query),
                p.first_acceptable
                    .map_or("none".to_string(), |r| format!("rank {r}")),
                if p.trap_above { "yes" } else { "no" },
                p.overlap_top5,
                r.canonical_top5
            ));
        }
        let mut facts = Vec::new();
        if let (Some(n), Some(k)) = (r.top_n, r.within_top_n()) {
            facts.push(format!(
                "acceptable within the top {n} in {k} of {m} phrasings"
            ));
        }
        facts.push(format!(
            "ended with an acceptable candidate {}, with candidates but none acceptable {}, with none {}",
            r.ended(Ending::Acceptable),
            r.ended(Ending::NoneAcceptable),
            r.ended(Ending::Empty)
        ));
        facts.push(format!(
            "the top candidate {} across phrasings",
            if r.top_agrees { "agrees" } else { "differs" }
        ));
        facts.push(format!(
            "a rejected candidate outranked the acceptable one in {} of {m}",
            r.traps()
        ));
        for (index, across) in &r.gaps {
            let word = match across {
                GapAcross::Stable => "stable across phrasings",
                GapAcross::FixedInAll => "fixed in all phrasings",
                GapAcross::PhrasingSensitive => "phrasing-sensitive",
                GapAcross::Unknown => "not evaluable in every phrasing",
            };
            facts.push(format!("known gap of expectation {}: {word}", index + 1));
        }
        out.push_str(&format!("\n{}.\n", capitalized(&facts.join("; "))));
    }
    if !any {
        out.push_str("\nNo query was run in more than one wording.\n");
    }
    out
}

/// `text` with its first letter in upper case.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Text from a server or a catalog, safe on a terminal: every control
/// character (ESC, line ends) and bidirectional override a space.
pub(crate) fn terminal(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}') {
                ' '
            } else {
                c
            }
        })
        .collect()
}
