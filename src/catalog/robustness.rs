//! Rephrasing robustness (`docs/CATALOG.md`, "Rephrasing robustness"):
//! for a query run in several wordings, whether the intended candidate
//! stays discoverable and the traps stay controlled. Descriptive evidence,
//! read off `results.json`; never a contract, no threshold.

use super::checks::Status;
use super::format::{Check, Query};
use super::run::{PhrasingResult, QueryResult};

/// How one phrasing ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// An acceptable candidate was among the candidates.
    Acceptable,
    /// Candidates, none acceptable.
    NoneAcceptable,
    /// No candidates at all.
    Empty,
    /// No reply, or none the selector could read.
    Unreadable,
}

/// One phrasing's facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhrasingFacts {
    /// The wording.
    pub user_query: String,
    /// 1-based rank of the first acceptable candidate.
    pub first_acceptable: Option<usize>,
    /// How it ended.
    pub ending: Ending,
    /// A rejected candidate ranked above the first acceptable one (above
    /// all, when none was acceptable).
    pub trap_above: bool,
    /// Of the canonical phrasing's first five candidates, how many are
    /// among this phrasing's first five.
    pub overlap_top5: usize,
}

/// A known gap across phrasings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GapAcross {
    /// Failing in every phrasing.
    Stable,
    /// Holding in every phrasing.
    FixedInAll,
    /// Failing in some, holding in others.
    PhrasingSensitive,
    /// Not evaluable in some phrasing (an execution error).
    Unknown,
}

/// A query's robustness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Robustness {
    /// The query's id.
    pub id: String,
    /// Each phrasing, the canonical first.
    pub phrasings: Vec<PhrasingFacts>,
    /// N of the query's first `acceptable_in_top` expectation, if any.
    pub top_n: Option<usize>,
    /// The canonical phrasing's first five candidates (for the overlap).
    pub canonical_top5: usize,
    /// Every phrasing had the same first candidate (and had one).
    pub top_agrees: bool,
    /// Each known-gap expectation (its 0-based index) across phrasings.
    pub gaps: Vec<(usize, GapAcross)>,
}

impl Robustness {
    /// Phrasings with an acceptable candidate within the top N.
    pub fn within_top_n(&self) -> Option<usize> {
        let n = self.top_n?;
        Some(
            self.phrasings
                .iter()
                .filter(|p| p.first_acceptable.is_some_and(|r| r <= n))
                .count(),
        )
    }

    /// Phrasings that ended `ending`.
    pub fn ended(&self, ending: Ending) -> usize {
        self.phrasings.iter().filter(|p| p.ending == ending).count()
    }

    /// Phrasings where a trap outranked the acceptable candidate.
    pub fn traps(&self) -> usize {
        self.phrasings.iter().filter(|p| p.trap_above).count()
    }
}

/// The robustness of `result` (the run of `query`), or `None` when it ran
/// in one wording only.
pub fn of(query: &Query, result: &QueryResult) -> Option<Robustness> {
    if result.phrasings.len() < 2 {
        return None;
    }
    let v = &query.variables;
    let top5 = |p: &PhrasingResult| -> Vec<String> {
        p.candidates.iter().flatten().take(5).cloned().collect()
    };
    let canonical = top5(&result.phrasings[0]);
    let phrasings: Vec<PhrasingFacts> = result
        .phrasings
        .iter()
        .map(|p| {
            let ids = p.candidates.as_deref();
            let first_acceptable = ids.and_then(|c| c.iter().position(|id| v.accepts(id)));
            let ending = match ids {
                None => Ending::Unreadable,
                Some([]) => Ending::Empty,
                Some(_) if first_acceptable.is_some() => Ending::Acceptable,
                Some(_) => Ending::NoneAcceptable,
            };
            let limit = first_acceptable.unwrap_or(ids.map_or(0, <[String]>::len));
            let trap_above = ids.is_some_and(|c| {
                c[..limit]
                    .iter()
                    .any(|id| v.rejected.iter().any(|r| &r.id == id))
            });
            let mine = top5(p);
            PhrasingFacts {
                user_query: p.user_query.clone(),
                first_acceptable: first_acceptable.map(|r| r + 1),
                ending,
                trap_above,
                overlap_top5: canonical.iter().filter(|id| mine.contains(id)).count(),
            }
        })
        .collect();
    let firsts: Vec<Option<&String>> = result
        .phrasings
        .iter()
        .map(|p| p.candidates.as_ref().and_then(|c| c.first()))
        .collect();
    let top_agrees = firsts.iter().all(|f| f.is_some() && *f == firsts[0]);
    let top_n = query.expectations.iter().find_map(|e| match e.check {
        Check::AcceptableInTop { n } => Some(n),
        _ => None,
    });
    let gaps = query
        .expectations
        .iter()
        .enumerate()
        .filter(|(_, e)| e.known_gap.is_some())
        .map(|(index, _)| {
            let statuses: Vec<Option<Status>> = result
                .phrasings
                .iter()
                .map(|p| {
                    p.expectations
                        .iter()
                        .find(|e| e.index == index)
                        .map(|e| e.status)
                })
                .collect();
            let all = |s: Status| statuses.iter().all(|x| *x == Some(s));
            let across = if all(Status::KnownGapOpen) {
                GapAcross::Stable
            } else if all(Status::KnownGapFixed) {
                GapAcross::FixedInAll
            } else if statuses
                .iter()
                .all(|x| matches!(x, Some(Status::KnownGapOpen | Status::KnownGapFixed)))
            {
                GapAcross::PhrasingSensitive
            } else {
                GapAcross::Unknown
            };
            (index, across)
        })
        .collect();
    Some(Robustness {
        id: result.id.clone(),
        phrasings,
        top_n,
        canonical_top5: canonical.len(),
        top_agrees,
        gaps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::format::{Expectation, Kind, KnownGap, Rejected, Run, Selector, Variables};
    use crate::catalog::run::ExpectationResult;

    fn phrasing(words: &str, ids: Option<&[&str]>, gap: Status) -> PhrasingResult {
        PhrasingResult {
            user_query: words.into(),
            tool: "t".into(),
            arguments: Default::default(),
            duration_s: 0.0,
            execution_error: None,
            reply: None,
            candidates: ids.map(|ids| ids.iter().map(|s| s.to_string()).collect()),
            expectations: vec![ExpectationResult {
                index: 1,
                kind: Kind::Quality,
                check: "no_rejected_above_acceptable".into(),
                status: gap,
                detail: None,
                known_gap: Some("2026-12-01".into()),
            }],
        }
    }

    /// A trap above the acceptable candidate, a phrasing with candidates
    /// but none acceptable, and a known gap that holds in one wording only.
    #[test]
    fn traps_endings_overlap_and_gaps_are_read_per_phrasing() {
        let query = Query {
            id: "q".into(),
            category: "c".into(),
            user_query: "u".into(),
            why: "w".into(),
            run: Run::Tool {
                tool: "t".into(),
                arguments: Default::default(),
            },
            candidates: Some(Selector {
                path: "[*]".into(),
                id: None,
            }),
            rephrasings: vec![],
            variables: Variables {
                acceptable: vec!["A".into()],
                acceptable_metadata: Default::default(),
                acceptable_prefixes: Vec::new(),
                rejected: vec![Rejected {
                    id: "B".into(),
                    reason: "r".into(),
                }],
            },
            expectations: vec![
                Expectation {
                    kind: Kind::Quality,
                    check: Check::AcceptableInTop { n: 1 },
                    known_gap: None,
                },
                Expectation {
                    kind: Kind::Quality,
                    check: Check::NoRejectedAboveAcceptable,
                    known_gap: Some(KnownGap {
                        found: "2026-12-01".into(),
                        note: None,
                    }),
                },
            ],
        };
        let result = QueryResult {
            id: "q".into(),
            category: "c".into(),
            phrasings: vec![
                phrasing("one", Some(&["A", "B", "C"]), Status::KnownGapFixed),
                phrasing("two", Some(&["B", "A"]), Status::KnownGapOpen),
                phrasing("three", Some(&["C", "D"]), Status::KnownGapOpen),
            ],
        };
        let r = of(&query, &result).unwrap();
        let facts: Vec<(Option<usize>, Ending, bool, usize)> = r
            .phrasings
            .iter()
            .map(|p| (p.first_acceptable, p.ending, p.trap_above, p.overlap_top5))
            .collect();
        assert_eq!(
            facts,
            vec![
                (Some(1), Ending::Acceptable, false, 3),
                (Some(2), Ending::Acceptable, true, 2),
                (None, Ending::NoneAcceptable, false, 1),
            ]
        );
        assert_eq!(
            (r.within_top_n(), r.traps(), r.top_agrees),
            (Some(1), 1, false)
        );
        assert_eq!(r.gaps, vec![(1, GapAcross::PhrasingSensitive)]);
        let one = QueryResult {
            phrasings: result.phrasings[..1].to_vec(),
            ..result
        };
        assert_eq!(of(&query, &one), None);
    }
}
