//! The checks (`docs/TRAJECTORY.md`, one section each): functions of an
//! attempt's calls (`calls.json`), what it submitted (`answer.csv`), the
//! tools its condition withheld (`metrics.json`) and the answer key's
//! text. No model judges anything; the same files give the same statuses.

use std::collections::BTreeMap;

use super::graphs::{graphs_named, graphs_of_call, matches_target};
use super::{CheckName, Expectation, Judged, Queries, Status};
use crate::layout::{CallRecord, SUBMIT_CSV};

/// What an attempt gives its expectations to judge.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// `calls.json`'s calls; `None` when the attempt has none (it never
    /// started, or was blocked): every expectation is then not applicable.
    pub calls: Option<&'a [CallRecord]>,
    /// `answer.csv`'s bytes, when an answer was submitted.
    pub answer: Option<&'a [u8]>,
    /// The tools the condition withheld (`metrics.json`'s `withheld`).
    pub withheld: &'a [String],
    /// The answer key's SPARQL text (its graphs are what `key-graphs`
    /// looks for).
    pub answer_key: &'a str,
    /// The attempt measured the agent (it was not blocked).
    pub measured: bool,
}

/// What one check found, before its type and known gap make a status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It holds.
    Pass,
    /// It does not: why, and the call that made it fail (1-based index).
    Fail(String, Option<usize>),
    /// Nothing to judge, and why.
    NotApplicable(String),
}

/// Judges every expectation on one attempt: its id with its status.
pub fn judge(expectations: &[Expectation], evidence: &Evidence<'_>) -> BTreeMap<String, Judged> {
    expectations
        .iter()
        .map(|e| (e.id.clone(), judged(e, outcome(e, evidence))))
        .collect()
}

/// The status of `expectation` given what its check found: a known gap
/// that fails is still open, one that holds is fixed (the catalog's rule,
/// `crate::catalog::checks::status`).
pub fn judged(expectation: &Expectation, outcome: Outcome) -> Judged {
    let gap = expectation.known_gap.is_some();
    let (status, detail, call) = match outcome {
        Outcome::Pass if gap => (Status::KnownGapFixed, None, None),
        Outcome::Pass => (Status::Pass, None, None),
        Outcome::Fail(why, call) if gap => (Status::KnownGapOpen, Some(why), call),
        Outcome::Fail(why, call) => (Status::Fail, Some(why), call),
        Outcome::NotApplicable(why) => (Status::NotApplicable, Some(why), None),
    };
    Judged {
        status,
        detail,
        call,
    }
}

/// What `expectation`'s check finds in `evidence`.
pub fn outcome(expectation: &Expectation, evidence: &Evidence<'_>) -> Outcome {
    let Some(all) = evidence.calls.filter(|_| evidence.measured) else {
        return Outcome::NotApplicable("the attempt never measured the agent".into());
    };
    // Lines the proxy could not read never reached a tool.
    let calls: Vec<&CallRecord> = all.iter().filter(|c| c.unreadable.is_none()).collect();
    let tools: Vec<&CallRecord> = calls
        .iter()
        .copied()
        .filter(|c| c.tool != SUBMIT_CSV)
        .collect();
    let queries: Vec<&CallRecord> = tools
        .iter()
        .copied()
        .filter(|c| crate::mcp::calllog::carries_query(&c.arguments))
        .collect();
    match expectation.check {
        CheckName::KeyGraphs => key_graphs(
            &queries,
            evidence.answer_key,
            expectation.queries.unwrap_or(Queries::All),
        ),
        CheckName::ToolUsed => {
            let tool = expectation.tool.as_deref().unwrap_or_default();
            if tools.iter().any(|c| c.tool == tool && !c.refused) {
                Outcome::Pass
            } else {
                Outcome::Fail(format!("no call to {tool}"), None)
            }
        }
        CheckName::ToolUnused => {
            let tool = expectation.tool.as_deref().unwrap_or_default();
            match tools.iter().find(|c| c.tool == tool) {
                Some(c) => Outcome::Fail(format!("call {} is to {tool}", c.index), Some(c.index)),
                None => Outcome::Pass,
            }
        }
        CheckName::DiscoveryFirst => discovery_first(&tools),
        CheckName::ToolOrder => {
            tool_order(&tools, expectation.tools.as_deref().unwrap_or_default())
        }
        CheckName::MaxCalls => at_most(&tools, expectation.n.unwrap_or(0), "calls"),
        CheckName::MaxQueries => at_most(&queries, expectation.n.unwrap_or(0), "queries"),
        CheckName::Traceable => traceable(&calls, evidence.answer),
        CheckName::AbsenceAfterQuery => absence_after_query(&calls, &queries, evidence.answer),
        CheckName::WithheldUnattempted => {
            if evidence.withheld.is_empty() {
                return Outcome::NotApplicable("the condition withheld no tool".into());
            }
            match tools.iter().find(|c| c.refused) {
                Some(c) => Outcome::Fail(
                    format!("call {} tried the withheld tool {}", c.index, c.tool),
                    Some(c.index),
                ),
                None => Outcome::Pass,
            }
        }
    }
}

/// `key-graphs`: each query considered names only the key's graphs, and at
/// least one (the rule of `runs::trajectory`'s `first_query_hit`). A query
/// that names no graph ran against the default graph: nothing to judge.
fn key_graphs(queries: &[&CallRecord], key: &str, which: Queries) -> Outcome {
    let target = graphs_named(key);
    if target.is_empty() {
        return Outcome::NotApplicable("the answer key names no graph".into());
    }
    let Some(first) = queries.first() else {
        return Outcome::NotApplicable("no query was made".into());
    };
    let considered: Vec<&CallRecord> = match which {
        Queries::First => vec![*first],
        Queries::All => queries.to_vec(),
    };
    let mut judged = 0;
    for call in considered {
        let named = graphs_of_call(&call.arguments);
        if named.is_empty() {
            continue;
        }
        judged += 1;
        let outside: Vec<&String> = named
            .iter()
            .filter(|g| !matches_target(g, &target))
            .collect();
        if let Some(graph) = outside.first() {
            return Outcome::Fail(
                format!(
                    "query call {} addresses {graph}, not a graph of the answer key",
                    call.index
                ),
                Some(call.index),
            );
        }
    }
    if judged == 0 {
        return Outcome::NotApplicable(
            match which {
                Queries::First => {
                    "the first query names no graph (it ran against the default graph)"
                }
                Queries::All => "no query names a graph (each ran against the default graph)",
            }
            .into(),
        );
    }
    Outcome::Pass
}

/// `discovery-first`: a call that carries no query, and was not refused,
/// before the first query.
fn discovery_first(tools: &[&CallRecord]) -> Outcome {
    let Some(at) = tools
        .iter()
        .position(|c| crate::mcp::calllog::carries_query(&c.arguments))
    else {
        return Outcome::NotApplicable("no query was made".into());
    };
    if tools[..at].iter().any(|c| !c.refused) {
        Outcome::Pass
    } else {
        let first = tools[at].index;
        Outcome::Fail(
            format!("call {first} queried before any schema, lookup or listing call"),
            Some(first),
        )
    }
}

/// `tool-order`: `wanted` is a subsequence of the calls' tools (refused
/// calls left out: they never ran).
fn tool_order(tools: &[&CallRecord], wanted: &[String]) -> Outcome {
    let mut next = 0;
    for call in tools.iter().filter(|c| !c.refused) {
        if next < wanted.len() && call.tool == wanted[next] {
            next += 1;
        }
    }
    if next == wanted.len() {
        return Outcome::Pass;
    }
    if next == 0 {
        return Outcome::Fail(format!("no call to {}", wanted[0]), None);
    }
    // A call to the missing tool that came too early is the failing call;
    // with none, no call is to blame, and none is marked.
    match tools.iter().find(|c| !c.refused && c.tool == wanted[next]) {
        Some(early) => Outcome::Fail(
            format!(
                "{} was called (call {}) only before {}",
                wanted[next],
                early.index,
                wanted[next - 1]
            ),
            Some(early.index),
        ),
        None => Outcome::Fail(
            format!("no call to {} after {}", wanted[next], wanted[next - 1]),
            None,
        ),
    }
}

/// `max-calls`, `max-queries`: at most `n` of `calls` (`what`, plural:
/// "calls", "queries"); the one past `n`
/// is the failing call.
fn at_most(calls: &[&CallRecord], n: usize, what: &str) -> Outcome {
    match calls.get(n) {
        None => Outcome::Pass,
        Some(c) => Outcome::Fail(
            format!(
                "{} {what}, more than {n} (call {} was one too many)",
                calls.len(),
                c.index
            ),
            Some(c.index),
        ),
    }
}

/// The last `submit_csv` call the proxy accepted (it saved the answer):
/// the rule of `runs::recorded::Submissions`.
fn last_submission(calls: &[&CallRecord]) -> Option<usize> {
    calls
        .iter()
        .rposition(|c| c.tool == SUBMIT_CSV && c.ok && c.error.is_none() && !c.refused)
}

/// The IRIs among a CSV's cells: `http://`, `https://` or `urn:` values,
/// with or without angle brackets, in row order, each once.
fn submitted_iris(answer: &[u8]) -> Vec<String> {
    let Ok(table) = crate::table::Table::from_csv(answer) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for row in &table.rows {
        for cell in row {
            let cell = cell.trim();
            let cell = cell
                .strip_prefix('<')
                .and_then(|c| c.strip_suffix('>'))
                .unwrap_or(cell);
            let lower = cell.to_ascii_lowercase();
            let iri = ["http://", "https://", "urn:"]
                .iter()
                .any(|p| lower.starts_with(p));
            if iri && !out.iter().any(|o| o == cell) {
                out.push(cell.to_string());
            }
        }
    }
    out
}

/// `traceable`: every IRI submitted appears in the reply of a call before
/// the submission. A reply is recorded only to its first
/// `layout::PREVIEW_CHARS` characters: an IRI found in none of them when a
/// reply before was cut cannot be told recalled, so the check does not
/// apply rather than fail.
fn traceable(calls: &[&CallRecord], answer: Option<&[u8]>) -> Outcome {
    let (Some(answer), Some(at)) = (answer, last_submission(calls)) else {
        return Outcome::NotApplicable("no answer was submitted".into());
    };
    let iris = submitted_iris(answer);
    if iris.is_empty() {
        return Outcome::NotApplicable("the answer holds no IRI".into());
    }
    let before = &calls[..at];
    let cut = before
        .iter()
        .any(|c| c.result_chars > c.result_preview.chars().count());
    for iri in &iris {
        if before
            .iter()
            .any(|c| c.tool != SUBMIT_CSV && reply_shows_iri(&c.result_preview, iri))
        {
            continue;
        }
        if cut {
            return Outcome::NotApplicable(format!(
                "{iri} is in no recorded reply, and a reply before the answer was recorded only in \
                 part"
            ));
        }
        return Outcome::Fail(
            format!("{iri} was submitted but appeared in no tool reply before"),
            Some(calls[at].index),
        );
    }
    Outcome::Pass
}

/// `reply` shows `iri` whole (issue 27, item 2): as written, or in its
/// JSON-escaped form (`/` as `\/`), and not as the start of a longer IRI
/// (the character after it, if any, is not one an IRI can continue with:
/// `…/gene/3569` is not shown by `…/gene/35690`).
fn reply_shows_iri(reply: &str, iri: &str) -> bool {
    let escaped = iri.replace('/', "\\/");
    [iri, escaped.as_str()].iter().any(|form| {
        reply
            .match_indices(form)
            .any(|(at, m)| !continues_iri(&reply[at + m.len()..]))
    })
}

/// `rest` (the text after a match) begins with a character that would
/// continue the IRI: a letter or digit (any script), one of
/// `-._~/?#%:@&=+$*!`, or a JSON-escaped `\/`. Quotes, brackets,
/// whitespace, `,` and `;` end an IRI as replies write it.
fn continues_iri(rest: &str) -> bool {
    let mut chars = rest.chars();
    match chars.next() {
        None => false,
        Some('\\') => chars.next() == Some('/'),
        Some(c) => c.is_alphanumeric() || "-._~/?#%:@&=+$*!".contains(c),
    }
}

/// A call that ran without error: the protocol said so, the proxy saw no
/// error and no soft error, and it was not refused.
fn ran_clean(call: &CallRecord) -> bool {
    call.ok && call.error.is_none() && call.soft_error.is_none() && !call.refused
}

/// `absence-after-query`: an empty answer (no rows, or an ASK's false
/// counts as an answer) comes after at least one query that ran clean.
fn absence_after_query(
    calls: &[&CallRecord],
    queries: &[&CallRecord],
    answer: Option<&[u8]>,
) -> Outcome {
    let (Some(answer), Some(at)) = (answer, last_submission(calls)) else {
        return Outcome::NotApplicable("no answer was submitted".into());
    };
    let empty = crate::table::Table::from_csv(answer).is_ok_and(|t| t.rows.is_empty());
    if !empty {
        return Outcome::NotApplicable("the answer is not empty".into());
    }
    let submitted = calls[at].index;
    if queries.iter().any(|q| q.index < submitted && ran_clean(q)) {
        Outcome::Pass
    } else {
        Outcome::Fail(
            "an empty answer was submitted without a query that ran without error".into(),
            Some(submitted),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expectations::parse_line;
    use serde_json::Value;

    fn call(index: usize, tool: &str, arguments: Value, reply: &str) -> CallRecord {
        CallRecord {
            index,
            tool: tool.into(),
            arguments,
            start_s: 0.0,
            duration_s: 0.0,
            ok: true,
            soft_error: None,
            refused: false,
            forwarded: true,
            error: None,
            result_chars: reply.chars().count(),
            result_preview: reply.into(),
            unreadable: None,
        }
    }

    #[test]
    fn a_known_gap_is_open_while_it_fails_and_fixed_once_it_holds() {
        let e = parse_line("n", "quality max-calls n=1 known_gap=2026-12-01")
            .unwrap()
            .unwrap();
        let calls = [
            call(1, "a", serde_json::json!({}), ""),
            call(2, "b", serde_json::json!({}), ""),
        ];
        let evidence = Evidence {
            calls: Some(&calls),
            answer: None,
            withheld: &[],
            answer_key: "",
            measured: true,
        };
        assert_eq!(
            judge(std::slice::from_ref(&e), &evidence)["n"].status,
            Status::KnownGapOpen
        );
        let one = Evidence {
            calls: Some(&calls[..1]),
            ..evidence
        };
        assert_eq!(judge(&[e], &one)["n"].status, Status::KnownGapFixed);
    }
}
