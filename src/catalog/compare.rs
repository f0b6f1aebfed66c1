//! `catalog compare`: two catalog runs (`results.json`), query by query,
//! with no call (`docs/CATALOG.md`, "Comparing two runs"). Direction is
//! stated only where it is unambiguous: a contract that flips, an
//! acceptable candidate crossing the top-N line (`acceptable_in_top`), a
//! trap that starts or stops outranking the acceptable candidate
//! (`no_rejected_above_acceptable`), a known gap that closes or reopens.
//! Everything else that differs is listed for a maintainer to judge. No
//! winner, no total.

use std::path::Path;

use super::checks::Status;
use super::format::Kind;
use super::run::{ExpectationResult, PhrasingResult, QueryResult, RESULTS_FORMATS_READ, Results};
use crate::error::{Error, Result};

/// A query's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// Only flips for the better.
    Improved,
    /// Only flips for the worse.
    Regressed,
    /// Flips both ways.
    Mixed,
    /// Something differs, with no direction to state.
    Changed,
    /// Nothing differs (durations aside).
    Unchanged,
    /// The two cannot be compared (named with the reason).
    NotComparable,
}

impl Class {
    /// The class as the report words it.
    pub fn name(self) -> &'static str {
        match self {
            Class::Improved => "improved",
            Class::Regressed => "regressed",
            Class::Mixed => "mixed",
            Class::Changed => "changed",
            Class::Unchanged => "unchanged",
            Class::NotComparable => "not comparable",
        }
    }
}

/// One query compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryComparison {
    /// The query's id.
    pub id: String,
    /// Its class.
    pub class: Class,
    /// What moved, one line each, the directional ones first.
    pub reasons: Vec<String>,
}

/// Reads a `results.json`, or the one inside a folder, and derives it
/// again from its own catalog and recorded replies
/// ([`super::verify::check`]; issue 24, item 8): every reader (`catalog
/// compare`, `build`'s reports, comparisons and pages) goes through here.
///
/// Errors: unreadable, malformed, or of another format, naming the file
/// and the field or line; a member that differs from what the run's
/// evidence gives, or evidence that is absent, naming the file and the
/// query (exit 2).
pub fn load(path: &Path) -> Result<Results> {
    let file = if path.is_dir() {
        path.join("results.json")
    } else {
        path.to_path_buf()
    };
    let text = crate::fsutil::read_text(&file)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let malformed = |line: usize, e: &dyn std::fmt::Display| {
        Error::at_line(
            &file,
            line as u64,
            format!("not a catalog run's results.json: {e}"),
        )
    };
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| malformed(e.line(), &e))?;
    // The format first: a newer run may not parse as this version's type.
    if let Some(format) = value.get("format").and_then(serde_json::Value::as_u64)
        && !RESULTS_FORMATS_READ.contains(&(format as u32))
    {
        return Err(Error::file(
            &file,
            format!(
                "format {} is not one this version reads ({} to {}): a newer okn-benchmark wrote it",
                format,
                RESULTS_FORMATS_READ.start(),
                RESULTS_FORMATS_READ.end()
            ),
        ));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let results: Results = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let message = crate::error::json_message(e.inner());
        malformed(e.inner().line(), &format_args!("{}: {message}", e.path()))
    })?;
    for (i, q) in results.queries.iter().enumerate() {
        if let Some(first) = results.queries[..i].iter().position(|p| p.id == q.id) {
            return Err(Error::file(
                &file,
                format!(
                    "queries[{i}]: id '{}' repeats queries[{first}]: a run holds each query once",
                    super::report::terminal(&q.id)
                ),
            ));
        }
    }
    super::verify::check(&file, &results)?;
    Ok(results)
}

/// Every query of either run, in the baseline's order and then the
/// candidate's new ones. A query whose id asks another question in the
/// two runs ([`asked_otherwise`]) is not comparable, with what differs,
/// and is in no other class.
pub fn compare(baseline: &Results, candidate: &Results) -> Vec<QueryComparison> {
    let mut out = Vec::new();
    for b in &baseline.queries {
        out.push(match candidate.queries.iter().find(|c| c.id == b.id) {
            Some(c) => {
                let differs = asked_otherwise((baseline, b), (candidate, c));
                if differs.is_empty() {
                    one(b, c)
                } else {
                    QueryComparison {
                        id: b.id.clone(),
                        class: Class::NotComparable,
                        reasons: differs,
                    }
                }
            }
            None => not_comparable(&b.id, "in the baseline's run only"),
        });
    }
    for c in &candidate.queries {
        if !baseline.queries.iter().any(|b| b.id == c.id) {
            out.push(not_comparable(&c.id, "in the candidate's run only"));
        }
    }
    out
}

/// What makes the query of one id ask another question in the candidate's
/// run than in the baseline's, one line each (empty when it asks the
/// same): the canonical wording, the tool, each argument, and from the
/// two runs' catalogs each expectation (type, check and its fields, known
/// gap), the candidates selector, the acceptable and rejected candidates,
/// and the scope when an expectation checks it. A status that moved
/// between two different questions says nothing about the server (issue
/// 24, item 8).
pub fn asked_otherwise(
    (baseline, b): (&Results, &QueryResult),
    (candidate, c): (&Results, &QueryResult),
) -> Vec<String> {
    let mut out = Vec::new();
    let (Some(pb), Some(pc)) = (canonical(b), canonical(c)) else {
        return out;
    };
    let text = |t: &str| super::verify::shown(&serde_json::Value::String(t.to_string()));
    if pb.user_query != pc.user_query {
        out.push(format!(
            "the canonical wording is {} in the baseline, but {} in the candidate",
            text(&pb.user_query),
            text(&pc.user_query)
        ));
    }
    if pb.tool != pc.tool {
        out.push(format!(
            "the tool is {} in the baseline, but {} in the candidate",
            text(&pb.tool),
            text(&pc.tool)
        ));
    }
    out.extend(super::verify::argument_differences(
        &pb.arguments,
        &pc.arguments,
        ("the baseline", "the candidate"),
    ));
    let query = |r: &'_ Results, id: &str| {
        r.catalog_document
            .as_ref()
            .and_then(|d| d.queries.iter().find(|q| q.id == id).cloned())
            .map(|q| {
                (
                    q,
                    r.catalog_document.as_ref().map(|d| d.header.scope.clone()),
                )
            })
    };
    if let (Some((qb, scope_b)), Some((qc, scope_c))) =
        (query(baseline, &b.id), query(candidate, &c.id))
    {
        out.extend(judged_otherwise(&qb, &qc));
        let scoped = |q: &super::format::Query| {
            q.expectations
                .iter()
                .any(|e| e.check == super::format::Check::AllInScope)
        };
        if (scoped(&qb) || scoped(&qc)) && scope_b != scope_c {
            out.push(
                "the catalogs' scopes differ, and an expectation checks that every candidate is in \
                 scope"
                    .to_string(),
            );
        }
    }
    out
}

/// What the catalogs' copies of one query judge otherwise: each
/// expectation (its known gap's note aside), the selector, the acceptable
/// and rejected candidates.
fn judged_otherwise(b: &super::format::Query, c: &super::format::Query) -> Vec<String> {
    use super::verify::shown;
    let mut out = Vec::new();
    let written = |e: &super::format::Expectation| {
        let mut e = e.clone();
        if let Some(gap) = &mut e.known_gap {
            gap.note = None;
        }
        serde_json::to_value(&e).unwrap_or_default()
    };
    for i in 0..b.expectations.len().max(c.expectations.len()) {
        match (
            b.expectations.get(i).map(written),
            c.expectations.get(i).map(written),
        ) {
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) => out.push(format!(
                "the query's expectation no. {} is {} in the baseline, but {} in the candidate",
                i + 1,
                shown(&x),
                shown(&y)
            )),
            (Some(x), None) => out.push(format!(
                "the query's expectation no. {} ({}) is in the baseline's catalog only",
                i + 1,
                shown(&x)
            )),
            (None, Some(y)) => out.push(format!(
                "the query's expectation no. {} ({}) is in the candidate's catalog only",
                i + 1,
                shown(&y)
            )),
            (None, None) => {}
        }
    }
    if b.candidates != c.candidates {
        let selector = |s: &Option<super::format::Selector>| {
            s.as_ref().map_or("none".to_string(), |s| {
                shown(&serde_json::to_value(s).unwrap_or_default())
            })
        };
        out.push(format!(
            "the candidates selector is {} in the baseline, but {} in the candidate",
            selector(&b.candidates),
            selector(&c.candidates)
        ));
    }
    let (vb, vc) = (&b.variables, &c.variables);
    let rejected = |v: &super::format::Variables| -> Vec<String> {
        v.rejected.iter().map(|r| r.id.clone()).collect()
    };
    for (what, x, y) in [
        (
            "acceptable candidate",
            vb.acceptable.clone(),
            vc.acceptable.clone(),
        ),
        (
            "acceptable prefix",
            vb.acceptable_prefixes.clone(),
            vc.acceptable_prefixes.clone(),
        ),
        ("rejected candidate", rejected(vb), rejected(vc)),
    ] {
        for id in x.iter().filter(|id| !y.contains(id)) {
            out.push(format!(
                "{what} {} is in the baseline's catalog only",
                super::verify::shown(&serde_json::Value::String(id.clone()))
            ));
        }
        for id in y.iter().filter(|id| !x.contains(id)) {
            out.push(format!(
                "{what} {} is in the candidate's catalog only",
                super::verify::shown(&serde_json::Value::String(id.clone()))
            ));
        }
    }
    out
}

fn not_comparable(id: &str, why: &str) -> QueryComparison {
    QueryComparison {
        id: id.to_string(),
        class: Class::NotComparable,
        reasons: vec![why.to_string()],
    }
}

/// Which way a status change goes for a directional expectation: `Some(true)`
/// better, `Some(false)` worse, `None` no direction to state.
fn direction(e: &ExpectationResult, before: Status, after: Status) -> Option<bool> {
    use Status::*;
    match (before, after) {
        (KnownGapOpen, KnownGapFixed) => return Some(true),
        (KnownGapFixed, KnownGapOpen) => return Some(false),
        _ => {}
    }
    let directional = e.kind == Kind::Contract
        || (e.kind == Kind::Quality
            && matches!(
                e.check.as_str(),
                "acceptable_in_top" | "no_rejected_above_acceptable"
            ));
    if !directional || e.known_gap.is_some() {
        return None;
    }
    match (before, after) {
        (Pass, Fail | Error) => Some(false),
        (Fail | Error, Pass) => Some(true),
        _ => None,
    }
}

/// The canonical phrasing of a query's run.
fn canonical(q: &QueryResult) -> Option<&PhrasingResult> {
    q.phrasings.first()
}

/// What moved in one query: its canonical phrasing's calls first, then
/// each rephrasing the two runs share (same place, same wording), its
/// lines prefixed with which.
fn one(b: &QueryResult, c: &QueryResult) -> QueryComparison {
    let (Some(pb), Some(pc)) = (canonical(b), canonical(c)) else {
        return not_comparable(&b.id, "a run has no phrasing of it");
    };
    for (p, side) in [(pb, "baseline"), (pc, "candidate")] {
        if let Some(why) = &p.execution_error {
            return not_comparable(&b.id, &format!("the {side}'s call did not complete: {why}"));
        }
    }
    let mut moved = Moved::default();
    moved.phrasing(pb, pc, "");
    for (k, pb) in b.phrasings.iter().enumerate().skip(1) {
        let label = format!("rephrasing {k} (\"{}\"): ", pb.user_query);
        match c.phrasings.get(k) {
            Some(pc) if pc.user_query == pb.user_query => {
                let mut differs = super::verify::argument_differences(
                    &pb.arguments,
                    &pc.arguments,
                    ("the baseline", "the candidate"),
                );
                if pb.tool != pc.tool {
                    differs.insert(0, "the tool differs".to_string());
                }
                match (&pb.execution_error, &pc.execution_error) {
                    _ if !differs.is_empty() => moved.other.push(format!(
                        "{label}not compared, it asks another question: {}",
                        differs.join("; ")
                    )),
                    (None, None) => moved.phrasing(pb, pc, &label),
                    (Some(_), _) | (_, Some(_)) => moved
                        .other
                        .push(format!("{label}not compared: a call did not complete")),
                }
            }
            _ => moved
                .other
                .push(format!("{label}not in the candidate's run in this place")),
        }
    }
    for (k, pc) in c.phrasings.iter().enumerate().skip(1) {
        if b.phrasings
            .get(k)
            .is_none_or(|pb| pb.user_query != pc.user_query)
        {
            moved.other.push(format!(
                "rephrasing {k} (\"{}\"): in the candidate's run only",
                pc.user_query
            ));
        }
    }
    let Moved {
        better,
        worse,
        other,
    } = moved;
    let class = match (better.is_empty(), worse.is_empty()) {
        (false, true) => Class::Improved,
        (true, false) => Class::Regressed,
        (false, false) => Class::Mixed,
        (true, true) if other.is_empty() => Class::Unchanged,
        (true, true) => Class::Changed,
    };
    let reasons = worse.into_iter().chain(better).chain(other).collect();
    QueryComparison {
        id: b.id.clone(),
        class,
        reasons,
    }
}

/// The lines of a query's comparison, by direction.
#[derive(Default)]
struct Moved {
    better: Vec<String>,
    worse: Vec<String>,
    other: Vec<String>,
}

impl Moved {
    /// What moved between one phrasing's two calls, each line opened by
    /// `label`.
    fn phrasing(&mut self, pb: &PhrasingResult, pc: &PhrasingResult, label: &str) {
        for e in &pb.expectations {
            let Some(after) = pc.expectations.iter().find(|x| x.index == e.index) else {
                self.other.push(format!(
                    "{label}the query's expectation no. {} ({}) was not evaluated in the candidate's run",
                    e.index + 1,
                    e.check
                ));
                continue;
            };
            if after.check != e.check || after.kind != e.kind {
                // Name both type and check: either may be what differs.
                self.other.push(format!(
                    "{label}the query's expectation no. {} is {} {} in one catalog and {} {} in the other",
                    e.index + 1,
                    super::report::kind_name(e.kind),
                    e.check,
                    super::report::kind_name(after.kind),
                    after.check
                ));
                continue;
            }
            if after.status == e.status {
                continue;
            }
            let line = format!(
                "{label}the {} check {} (the query's expectation no. {}): in the baseline it {}; in the candidate it {}",
                super::report::kind_name(e.kind),
                e.check,
                e.index + 1,
                status_words(e.status),
                status_words(after.status)
            );
            match direction(e, e.status, after.status) {
                Some(true) => self.better.push(line),
                Some(false) => self.worse.push(line),
                None => self.other.push(line),
            }
        }
        if pb.candidates != pc.candidates {
            let first = |p: &PhrasingResult| p.candidates.as_ref().and_then(|c| c.first().cloned());
            if first(pb) != first(pc) {
                let named = |p: &PhrasingResult| {
                    first(p).map_or_else(
                        || "none".to_string(),
                        |iri| match candidate_label(p, &iri) {
                            Some(name) => format!("{name} ({iri})"),
                            None => iri,
                        },
                    )
                };
                self.other.push(format!(
                    "{label}the top candidate changed: in the baseline {}; in the candidate {}",
                    named(pb),
                    named(pc)
                ));
            } else {
                self.other
                    .push(format!("{label}the candidate list changed below its top"));
            }
        }
    }
}

/// A status as a server's maintainer says it, to follow "the check ...":
/// `passes`, `fails`, `could not be evaluated`, `fails, as a known gap`,
/// `passes, fixing a known gap` (issue 26, section 3).
pub fn status_words(s: Status) -> &'static str {
    match s {
        Status::Pass => "passes",
        Status::Fail => "fails",
        Status::Error => "could not be evaluated",
        Status::KnownGapOpen => "fails, as a known gap",
        Status::KnownGapFixed => "passes, fixing a known gap",
    }
}

/// The label the reply of `p` gives candidate `iri`: the `label`, `name`
/// or `title` string beside a member whose value is `iri`, in the first
/// JSON object of the reply (structured content, else its text) that has
/// one; `None` when the reply names none.
pub fn candidate_label(p: &PhrasingResult, iri: &str) -> Option<String> {
    fn find(v: &serde_json::Value, iri: &str) -> Option<String> {
        match v {
            serde_json::Value::Object(map) => {
                if map.values().any(|x| x.as_str() == Some(iri)) {
                    for key in ["label", "name", "title"] {
                        if let Some(name) = map.get(key).and_then(|x| x.as_str())
                            && name != iri
                            && !name.trim().is_empty()
                        {
                            return Some(name.to_string());
                        }
                    }
                }
                map.values().find_map(|x| find(x, iri))
            }
            serde_json::Value::Array(items) => items.iter().find_map(|x| find(x, iri)),
            _ => None,
        }
    }
    let reply = p.reply.as_ref()?;
    if let Some(found) = reply.structured.as_ref().and_then(|v| find(v, iri)) {
        return Some(found);
    }
    let parsed: serde_json::Value = serde_json::from_str(&reply.text).ok()?;
    find(&parsed, iri)
}

/// A status as `results.json` writes it ([`Status::name`]).
pub fn status_name(s: Status) -> String {
    s.name().to_string()
}

/// What differs between the two runs as a whole, worded as sentences
/// without their final stop: the catalog (compared then on the ids both
/// ran) and the expectation types each evaluated (`--type`).
pub fn differences(baseline: &Results, candidate: &Results) -> Vec<String> {
    let mut out = Vec::new();
    if baseline.catalog_sha256 != candidate.catalog_sha256 {
        out.push("The catalogs differ: queries are compared on the ids both ran".to_string());
    }
    if baseline.types != candidate.types {
        let names = |r: &Results| {
            r.types
                .iter()
                .map(|k| super::report::kind_name(*k))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push(format!(
            "The runs evaluated different types (baseline: {}; candidate: {}): an expectation of a type one run left out reads as not evaluated",
            names(baseline),
            names(candidate)
        ));
    }
    out
}

/// The comparison in Markdown under `title` (else "Catalog comparison"):
/// the two runs, each named by the path given with it (a relative path
/// normalized, an absolute one by its last two parts, so no path of the
/// machine is written), counts per class, then each query that is not
/// unchanged, the regressed first.
pub fn markdown(
    title: Option<&str>,
    baseline: (&Path, &Results),
    candidate: (&Path, &Results),
    compared: &[QueryComparison],
) -> String {
    use super::report::md;
    let run = |(path, r): (&Path, &Results)| {
        let server = r
            .server
            .as_ref()
            .map_or("a server that never started".to_string(), |s| {
                format!("{} {}", s.name, s.version)
            });
        format!(
            "{} (profile {}, {}, catalog {})",
            md(&shown(path)),
            md(&r.profile),
            md(&server),
            md(&r.catalog_sha256)
        )
    };
    let mut out = format!("# {}\n\n", md(title.unwrap_or("Catalog comparison")));
    out.push_str(&format!(
        "{} from the two runs' results.json; do not edit by hand.\n\n",
        super::report::COMPARISON_MARK_LINE
    ));
    out.push_str(&format!(
        "Baseline: {}. Candidate: {}.",
        run(baseline),
        run(candidate)
    ));
    let (baseline, candidate) = (baseline.1, candidate.1);
    for note in differences(baseline, candidate) {
        out.push_str(&format!(" {}.", md(&note)));
    }
    out.push_str(" A regression-analysis aid, not a competition: no winner, no total.\n\n| class | queries |\n|---|---:|\n");
    let classes = [
        Class::Regressed,
        Class::Mixed,
        Class::Improved,
        Class::Changed,
        Class::NotComparable,
        Class::Unchanged,
    ];
    for class in classes {
        out.push_str(&format!(
            "| {} | {} |\n",
            class.name(),
            compared.iter().filter(|q| q.class == class).count()
        ));
    }
    for class in classes.iter().filter(|c| **c != Class::Unchanged) {
        for q in compared.iter().filter(|q| q.class == *class) {
            out.push_str(&format!(
                "\n## {}: {}\n\n",
                super::report::md(&q.id),
                class.name()
            ));
            for r in &q.reasons {
                out.push_str(&format!("- {}\n", super::report::md(r)));
            }
        }
    }
    out
}

/// `path` as a comparison names it: normalized with `/` when relative;
/// its last two parts when absolute.
fn shown(path: &Path) -> String {
    let path = crate::fsutil::normalize(path);
    let parts: Vec<String> = path
        .components()
        .filter(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::ParentDir
            )
        })
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if path.is_absolute() {
        parts[parts.len().saturating_sub(2)..].join("/")
    } else {
        parts.join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn phrasing(words: &str, label: &str) -> PhrasingResult {
        PhrasingResult {
            user_query: words.into(),
            tool: "lookup".into(),
            arguments: json!({"label": label}).as_object().unwrap().clone(),
            duration_s: 0.0,
            execution_error: None,
            reply: None,
            candidates: Some(vec!["http://in/A".into()]),
            expectations: vec![],
        }
    }

    /// A rephrasing with the wording of the other run's but other
    /// arguments asks another question: it is named, not compared, and
    /// states no direction.
    #[test]
    fn a_rephrasing_asked_with_other_arguments_is_not_compared() {
        let query = |label: &str| QueryResult {
            id: "q".into(),
            category: "c".into(),
            phrasings: vec![phrasing("Maine", "Maine"), phrasing("maine", label)],
        };
        let same = one(&query("maine"), &query("maine"));
        assert_eq!(same.class, Class::Unchanged);
        let other = one(&query("maine"), &query("Maine state"));
        assert_eq!(
            (other.class, other.reasons),
            (
                Class::Changed,
                vec![
                    "rephrasing 1 (\"maine\"): not compared, it asks another question: argument \
                     'label' is \"maine\" in the baseline, but \"Maine state\" in the candidate"
                        .to_string()
                ]
            )
        );
    }
}
