//! A catalog run's `results.json` derived again whenever it is read
//! (`catalog compare`, `build`'s reports and pages; issue 24, item 8;
//! `docs/CATALOG.md`, "What is derived again on reading").
//!
//! The file holds two kinds of members. The *evidence* is what the run
//! observed and nothing else can give: each reply (or why none came), its
//! duration, the server's name and version, the profile's name, the
//! catalog's path as given, and the catalog itself (bound to its SHA-256
//! by its text, `catalog_source`, from format 3 on). Everything else
//! follows from the evidence: which queries ran and in which order, each
//! query's category, each phrasing's wording, tool and arguments, the
//! candidates, and every expectation's index, type, check, known gap,
//! status and detail. Each is derived again here by the functions
//! `catalog run` judged with ([`run::verdicts`], [`run::phrasings`]); a
//! member that differs is damage, named by query, phrasing and
//! expectation, and the file is refused (exit 2) rather than published.
//! Where the evidence a status needs is absent (format 1 kept no
//! catalog; a phrasing with neither reply nor execution error), the file
//! is refused too: it is never trusted as written.

use std::path::Path;

use serde_json::Value;

use super::format::{Catalog, Kind, Query};
use super::report::terminal;
use super::run::{self, ExpectationResult, KEPT_TEXT_CHARS, PhrasingResult, QueryResult, Results};
use crate::error::{Error, Result};

/// How many damages the error names before counting the rest.
const NAMED: usize = 3;

/// Fails when `results`, read from `file`, is not what its own catalog and
/// recorded replies give ([`damage`]).
///
/// Errors: [`Error::File`] naming `file`, the first damages (query,
/// phrasing, expectation, what differs) and what to do: run the catalog
/// again. A format-1 file, which keeps no catalog, is refused as such.
pub fn check(file: &Path, results: &Results) -> Result<()> {
    if results.catalog_document.is_none() {
        return Err(Error::file(
            file,
            format!(
                "format {} keeps no catalog_document, the catalog its statuses were judged by, \
                 so they cannot be derived again and are not trusted: run the catalog again \
                 (`okn-benchmark catalog run CATALOG --profile PROFILE --out DIR --force`)",
                results.format
            ),
        ));
    }
    let found = damage(results);
    if found.is_empty() {
        return Ok(());
    }
    let mut named: Vec<String> = found.iter().take(NAMED).map(Damage::to_string).collect();
    if found.len() > NAMED {
        named.push(format!("and {} more", found.len() - NAMED));
    }
    Err(Error::file(
        file,
        format!(
            "does not follow from the run's own catalog and recorded replies (edited by \
             hand, or recorded by a version that judged otherwise), so it is not used: {}; \
             run the catalog again (`okn-benchmark catalog run CATALOG --profile PROFILE \
             --out DIR --force`)",
            named.join("; ")
        ),
    ))
}

/// One way a `results.json` differs from what its evidence gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// Where: `query 'ID', rephrasing 2, expectation 3 (check)`, a member
    /// of the file (`types`, `catalog_source`), or empty for the file.
    pub place: String,
    /// What differs: what the file says and what the evidence gives.
    pub what: String,
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.place.is_empty() {
            f.write_str(&self.what)
        } else {
            write!(f, "{}: {}", self.place, self.what)
        }
    }
}

/// Every member of `results` that differs from what its catalog
/// (`catalog_document`, itself checked against `catalog_source` and
/// `catalog_sha256` where the file keeps them) and its recorded replies
/// give, in file order. Empty for a run as `catalog run` wrote it, and
/// for a file without `catalog_document` (see [`check`]).
pub fn damage(results: &Results) -> Vec<Damage> {
    let mut out = Vec::new();
    let Some(catalog) = &results.catalog_document else {
        return out;
    };
    bound_catalog(results, catalog, &mut out);
    let types = &results.types;
    if types.is_empty() || types.windows(2).any(|w| w[0] >= w[1]) {
        out.push(at(
            "types",
            "must name each type the run evaluated once, in the order contract, quality, \
             current_state",
        ));
    }
    let chosen: Vec<&Query> = catalog
        .queries
        .iter()
        .filter(|q| q.expectations.iter().any(|e| types.contains(&e.kind)))
        .collect();
    for recorded in &results.queries {
        match chosen.iter().find(|q| q.id == recorded.id) {
            Some(query) => query_damage(Judged { catalog, types }, query, recorded, &mut out),
            None => out.push(at(
                &query_place(&recorded.id),
                "in results.json, but the run's catalog has no such query with an expectation \
                 of the types the run evaluated",
            )),
        }
    }
    for query in &chosen {
        if !results.queries.iter().any(|q| q.id == query.id) {
            out.push(at(
                &query_place(&query.id),
                "absent from results.json, though the run's catalog has it with an expectation \
                 of the types the run evaluated, and a run runs every such query",
            ));
        }
    }
    let order: Vec<&str> = results
        .queries
        .iter()
        .map(|q| q.id.as_str())
        .filter(|id| chosen.iter().any(|q| q.id == *id))
        .collect();
    let wanted: Vec<&str> = chosen
        .iter()
        .map(|q| q.id.as_str())
        .filter(|id| order.contains(id))
        .collect();
    if order != wanted {
        out.push(at("queries", "not in the catalog's order"));
    }
    out
}

/// The catalog document against the text it was parsed from and that
/// text against its digest (format 3 on: `catalog_source`).
fn bound_catalog(results: &Results, catalog: &Catalog, out: &mut Vec<Damage>) {
    let Some(source) = &results.catalog_source else {
        if results.format >= 3 {
            out.push(at(
                "catalog_source",
                &format!(
                    "absent, though format {} records the catalog's text",
                    results.format
                ),
            ));
        }
        return;
    };
    let digest = crate::reference::sha256_tag(source.as_bytes());
    if digest != results.catalog_sha256 {
        out.push(at(
            "catalog_source",
            &format!(
                "its SHA-256 is {digest}, but catalog_sha256 says {}",
                shown_text(&results.catalog_sha256)
            ),
        ));
    }
    match super::format::parse(Path::new("catalog_source"), source) {
        Err(e) => out.push(at("catalog_source", &format!("not a catalog: {e}"))),
        Ok(parsed) if parsed == *catalog => {}
        Ok(parsed) => {
            let place = if parsed.header != catalog.header || parsed.format != catalog.format {
                "catalog_document.header".to_string()
            } else {
                parsed
                    .queries
                    .iter()
                    .zip(&catalog.queries)
                    .find(|(a, b)| a != b)
                    .map_or("catalog_document.queries".to_string(), |(a, _)| {
                        format!("catalog_document, {}", query_place(&a.id))
                    })
            };
            out.push(at(
                &place,
                "differs from the catalog catalog_source holds (the text catalog_sha256 is \
                 the digest of)",
            ));
        }
    }
}

/// What a run was judged by: its catalog and the types it evaluated.
#[derive(Clone, Copy)]
struct Judged<'a> {
    catalog: &'a Catalog,
    types: &'a [Kind],
}

/// One recorded query against the catalog's `query`.
fn query_damage(judged: Judged, query: &Query, recorded: &QueryResult, out: &mut Vec<Damage>) {
    let place = query_place(&query.id);
    if recorded.category != query.category {
        out.push(at(
            &place,
            &format!(
                "category is {} in results.json, but the catalog's is {}",
                shown_text(&recorded.category),
                shown_text(&query.category)
            ),
        ));
    }
    let expected = run::phrasings(query);
    if expected.len() != recorded.phrasings.len() {
        out.push(at(
            &place,
            &format!(
                "{} phrasings in results.json, but the catalog has {}",
                recorded.phrasings.len(),
                expected.len()
            ),
        ));
    }
    for (k, (p, e)) in recorded.phrasings.iter().zip(&expected).enumerate() {
        let place = format!("{place}, {}", phrasing_name(k));
        let mut asked = Vec::new();
        if p.user_query != e.user_query {
            asked.push(format!(
                "the wording is {} in results.json, but the catalog's is {}",
                shown_text(&p.user_query),
                shown_text(&e.user_query)
            ));
        }
        if p.tool != e.tool {
            asked.push(format!(
                "the tool is {} in results.json, but the catalog calls {}",
                shown_text(&p.tool),
                shown_text(&e.tool)
            ));
        }
        for d in argument_differences(&p.arguments, &e.arguments, ("results.json", "the catalog")) {
            asked.push(d);
        }
        out.extend(asked.into_iter().map(|what| at(&place, &what)));
        phrasing_damage(judged, (query, p), &place, out);
    }
}

/// One recorded phrasing's reply against what it records of it.
fn phrasing_damage(
    judged: Judged,
    (query, p): (&Query, &PhrasingResult),
    place: &str,
    out: &mut Vec<Damage>,
) {
    if !(p.duration_s.is_finite() && p.duration_s >= 0.0) {
        out.push(at(
            place,
            &format!("duration_s is {}, not a duration", p.duration_s),
        ));
    }
    let (reply, source) = match (&p.execution_error, &p.reply) {
        (Some(why), None) => (Err(why.clone()), "the recorded execution error"),
        (None, Some(r)) => {
            if r.text_cut && r.text.chars().count() != KEPT_TEXT_CHARS {
                out.push(at(
                    place,
                    &format!(
                        "text_cut says the reply's text was cut at {KEPT_TEXT_CHARS} \
                         characters, but it holds {}",
                        r.text.chars().count()
                    ),
                ));
            }
            let source = if r.text_cut {
                "the recorded reply (its text cut when recorded, so the evidence may be \
                 incomplete)"
            } else {
                "the recorded reply"
            };
            (Ok(r.reply()), source)
        }
        (Some(_), Some(_)) => {
            out.push(at(
                place,
                "holds both a reply and an execution error: a call ends in one",
            ));
            return;
        }
        (None, None) => {
            out.push(at(
                place,
                "holds neither a reply nor an execution error, the evidence its statuses \
                 follow from",
            ));
            return;
        }
    };
    let (expectations, candidates) = run::verdicts(judged.catalog, query, judged.types, &reply);
    if p.candidates != candidates {
        out.push(at(
            place,
            &candidates_difference(p.candidates.as_deref(), candidates.as_deref(), source),
        ));
    }
    let before = out.len();
    for derived in &expectations {
        let which = format!(
            "{place}, expectation {} ({})",
            derived.index + 1,
            terminal(&derived.check)
        );
        match p.expectations.iter().find(|r| r.index == derived.index) {
            None => out.push(at(
                &which,
                "absent from results.json, though the run evaluated its type",
            )),
            Some(r) => out.extend(
                expectation_differences(r, derived, source)
                    .into_iter()
                    .map(|what| at(&which, &what)),
            ),
        }
    }
    for r in &p.expectations {
        if !expectations.iter().any(|d| d.index == r.index) {
            out.push(at(
                &format!("{place}, expectation {}", r.index + 1),
                "in results.json, but the catalog has no such expectation of a type the run \
                 evaluated",
            ));
        }
    }
    if out.len() == before && p.expectations != expectations {
        out.push(at(
            place,
            "the expectations are not recorded once each, in the catalog's order",
        ));
    }
}

/// What differs between an expectation as recorded and as derived from
/// `source` (the recorded reply or execution error).
fn expectation_differences(
    recorded: &ExpectationResult,
    derived: &ExpectationResult,
    source: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    let gap = |g: &Option<String>| g.as_deref().map_or("none".to_string(), shown_text);
    if recorded.kind != derived.kind {
        out.push(format!(
            "its type is {} in results.json, but the catalog's is {}",
            super::report::kind_name(recorded.kind),
            super::report::kind_name(derived.kind)
        ));
    }
    if recorded.check != derived.check {
        out.push(format!(
            "its check is {} in results.json, but the catalog's is {}",
            shown_text(&recorded.check),
            shown_text(&derived.check)
        ));
    }
    if recorded.known_gap != derived.known_gap {
        out.push(format!(
            "its known gap (found) is {} in results.json, but the catalog's is {}",
            gap(&recorded.known_gap),
            gap(&derived.known_gap)
        ));
    }
    if recorded.status != derived.status {
        out.push(format!(
            "status {} in results.json, but {source} gives {}",
            recorded.status.name(),
            derived.status.name()
        ));
    } else if recorded.detail != derived.detail {
        out.push(format!(
            "its detail is {} in results.json, but {source} gives {}",
            gap(&recorded.detail),
            gap(&derived.detail)
        ));
    }
    out
}

/// Each argument that differs between two calls' `a` and `b`, named, in
/// `a`'s order then `b`'s own; `sides` names the two (`("the baseline",
/// "the candidate")`).
pub(crate) fn argument_differences(
    a: &serde_json::Map<String, Value>,
    b: &serde_json::Map<String, Value>,
    (side_a, side_b): (&str, &str),
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, x) in a {
        let shown_name = terminal(name);
        match b.get(name) {
            Some(y) if y == x => {}
            Some(y) => out.push(format!(
                "argument '{shown_name}' is {} in {side_a}, but {} in {side_b}",
                shown(x),
                shown(y)
            )),
            None => out.push(format!(
                "argument '{shown_name}' is given in {side_a} ({}), not in {side_b}",
                shown(x)
            )),
        }
    }
    for (name, y) in b {
        if !a.contains_key(name) {
            out.push(format!(
                "argument '{}' is given in {side_b} ({}), not in {side_a}",
                terminal(name),
                shown(y)
            ));
        }
    }
    out
}

/// A JSON value as an error shows it: compact, on one line, clipped.
pub(crate) fn shown(value: &Value) -> String {
    terminal(&crate::format::one_line(&value.to_string(), 120))
}

/// Text from the file as an error shows it: quoted, on one line, clipped.
fn shown_text(text: &str) -> String {
    shown(&Value::String(text.to_string()))
}

/// How a recorded candidate list differs from the derived one: their
/// lengths, or the first rank where they part.
fn candidates_difference(
    recorded: Option<&[String]>,
    derived: Option<&[String]>,
    source: &str,
) -> String {
    let count = |c: Option<&[String]>| match c {
        None => "no candidate list".to_string(),
        Some(list) => format!(
            "{} candidate{}",
            list.len(),
            crate::format::plural(list.len())
        ),
    };
    match (recorded, derived) {
        (Some(r), Some(d)) if r.len() == d.len() => {
            let rank = r.iter().zip(d).position(|(a, b)| a != b).unwrap_or(0);
            format!(
                "candidate {} is {} in results.json, but {source} gives {}",
                rank + 1,
                shown_text(&r[rank]),
                shown_text(&d[rank])
            )
        }
        _ => format!(
            "{} in results.json, but {source} gives {}",
            count(recorded),
            count(derived)
        ),
    }
}

/// `query 'ID'`, the id made safe for a terminal.
fn query_place(id: &str) -> String {
    format!("query '{}'", terminal(id))
}

/// `canonical phrasing`, `rephrasing K`.
fn phrasing_name(k: usize) -> String {
    if k == 0 {
        "canonical phrasing".to_string()
    } else {
        format!("rephrasing {k}")
    }
}

fn at(place: &str, what: &str) -> Damage {
    Damage {
        place: place.to_string(),
        what: what.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::checks::Reply;
    use crate::catalog::run::{QueryResult, judge, phrasings};
    use serde_json::json;

    /// A catalog of one query over `results[*].iri`, with a ranked check,
    /// and a check on the reply's text.
    fn catalog() -> Catalog {
        serde_json::from_value(json!({
            "format": 1,
            "header": {
                "server": "s", "server_version": "1", "confirmed": "2026-12-02",
                "scope": {"prefixes": ["http://in/"]}, "categories": ["c"]
            },
            "queries": [{
                "id": "q", "category": "c", "user_query": "u", "why": "w",
                "run": {"tool": "t", "arguments": {"label": "A"}},
                "candidates": {"path": "results[*]", "id": "iri"},
                "variables": {"acceptable": ["http://in/A"]},
                "expectations": [
                    {"type": "contract", "check": "call_succeeds"},
                    {"type": "quality", "check": "acceptable_in_top", "n": 1},
                    {"type": "quality", "check": "contains", "value": "http://in/A"}
                ]
            }]
        }))
        .unwrap()
    }

    /// The run of `catalog` whose one call got `reply`, as `catalog run`
    /// records it.
    fn recorded(catalog: &Catalog, reply: Reply) -> Results {
        let types = vec![Kind::Contract, Kind::Quality];
        let query = &catalog.queries[0];
        let phrasing = &phrasings(query)[0];
        let judged = judge(catalog, query, &types, phrasing, (Ok(reply), 0.5));
        let source = serde_json::to_string_pretty(catalog).unwrap();
        Results {
            format: run::RESULTS_FORMAT,
            catalog: "c.json".into(),
            catalog_sha256: crate::reference::sha256_tag(source.as_bytes()),
            profile: "p".into(),
            server: None,
            types,
            queries: vec![QueryResult {
                id: "q".into(),
                category: "c".into(),
                phrasings: vec![judged],
            }],
            catalog_document: Some(catalog.clone()),
            catalog_source: Some(source),
        }
    }

    /// A JSON text longer than what is kept no longer parses once cut, so
    /// its candidates could not be read again: it is kept whole. A long
    /// text whose cut judges the same is cut. Either reads back clean.
    #[test]
    fn a_reply_is_kept_whole_when_its_cut_text_would_judge_otherwise() {
        let catalog = catalog();
        let rows: Vec<Value> = (0..2_000)
            .map(|i| json!({"iri": format!("http://in/N{i}")}))
            .chain([json!({"iri": "http://in/A"})])
            .collect();
        let long_json = json!({"results": rows}).to_string();
        assert!(long_json.chars().count() > KEPT_TEXT_CHARS);
        let mut results = recorded(
            &catalog,
            Reply {
                is_error: false,
                text: long_json.clone(),
                structured: None,
            },
        );
        let p = &results.queries[0].phrasings[0];
        let reply = p.reply.as_ref().unwrap();
        assert_eq!((reply.text_cut, reply.text.len()), (false, long_json.len()));
        assert_eq!(p.candidates.as_ref().map(Vec::len), Some(2_001));
        assert_eq!(damage(&results), vec![]);

        // As a version that always cut would have recorded it: the cut
        // text gives no candidates, and the file is refused, saying so.
        let reply = results.queries[0].phrasings[0].reply.as_mut().unwrap();
        reply.text = long_json.chars().take(KEPT_TEXT_CHARS).collect();
        reply.text_cut = true;
        let found: Vec<String> = damage(&results).iter().map(Damage::to_string).collect();
        assert_eq!(
            found[0],
            "query 'q', canonical phrasing: 2001 candidates in results.json, but the recorded \
             reply (its text cut when recorded, so the evidence may be incomplete) gives no \
             candidate list"
        );

        let long_text = format!("http://in/A {}", "x".repeat(KEPT_TEXT_CHARS));
        let cut = recorded(
            &catalog,
            Reply {
                is_error: false,
                text: long_text,
                structured: Some(json!({"results": [{"iri": "http://in/A"}]})),
            },
        );
        let reply = cut.queries[0].phrasings[0].reply.as_ref().unwrap();
        assert_eq!(
            (reply.text_cut, reply.text.chars().count()),
            (true, KEPT_TEXT_CHARS)
        );
        assert_eq!(damage(&cut), vec![]);
    }

    /// Arguments are named one by one, those only one call gives too.
    #[test]
    fn argument_differences_name_each_argument() {
        let a = json!({"label": "Maine", "limit": 5});
        let b = json!({"label": "Maine counties", "graph": "g"});
        assert_eq!(
            argument_differences(
                a.as_object().unwrap(),
                b.as_object().unwrap(),
                ("the baseline", "the candidate")
            ),
            vec![
                "argument 'label' is \"Maine\" in the baseline, but \"Maine counties\" in the \
                 candidate",
                "argument 'limit' is given in the baseline (5), not in the candidate",
                "argument 'graph' is given in the candidate (\"g\"), not in the baseline",
            ]
        );
    }
}
