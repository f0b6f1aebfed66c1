//! The checks of `docs/CATALOG.md`, "Checks", on one tool reply, and the
//! status each expectation ends in ("Statuses"). Adding a check is a
//! variant of [`Check`] and its arm in [`evaluate`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::format::{Check, Expectation, Query, Scope};
use super::select::Path;

/// A tool's reply, as the checks read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The reply said it is an error (`isError`), or the call failed at
    /// the protocol level (an error response).
    pub is_error: bool,
    /// Its text content, the blocks joined by line ends.
    pub text: String,
    /// Its structured content, if any.
    pub structured: Option<Value>,
}

impl Reply {
    /// The result as JSON: the structured content, else the text read as
    /// JSON; `None` when neither is JSON.
    pub fn json(&self) -> Option<Value> {
        self.structured
            .clone()
            .or_else(|| serde_json::from_str(self.text.trim()).ok())
    }
}

/// What one check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It holds.
    Pass,
    /// It does not, and why.
    Fail(String),
    /// It could not be evaluated (the call failed, the result is not
    /// what the selector reads), and why.
    Error(String),
}

/// The status an evaluated expectation ends in (`docs/CATALOG.md`,
/// "Statuses"); its type decides what the status means for the run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It holds.
    Pass,
    /// It does not.
    Fail,
    /// It could not be evaluated.
    Error,
    /// A known gap, failing still: a standing finding, not news.
    KnownGapOpen,
    /// A known gap that now holds: news, in the good direction.
    KnownGapFixed,
}

impl Status {
    /// The status as `results.json` writes it (`known_gap_open`).
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Error => "error",
            Status::KnownGapOpen => "known_gap_open",
            Status::KnownGapFixed => "known_gap_fixed",
        }
    }
}

/// The status of `expectation` given what its check found: a known gap
/// that fails is still open, one that holds is fixed; an error is an error
/// either way.
pub fn status(expectation: &Expectation, outcome: &Outcome) -> Status {
    match (outcome, expectation.known_gap.is_some()) {
        (Outcome::Error(_), _) => Status::Error,
        (Outcome::Pass, false) => Status::Pass,
        (Outcome::Pass, true) => Status::KnownGapFixed,
        (Outcome::Fail(_), false) => Status::Fail,
        (Outcome::Fail(_), true) => Status::KnownGapOpen,
    }
}

/// The candidate ids of `reply` by the query's selector, in rank order:
/// each selected value, or its `id` member, as text (a number or a boolean
/// as JSON writes it).
///
/// Errors: the query has no selector, the result is not JSON, or a selected
/// element has a null id or lacks the `id` member (a selector that does not fit the reply,
/// such as `rows[*]` with `id: "label"` over an ASK query's `ask` column):
/// counting it as no candidate would pass for an empty answer.
pub fn candidates(query: &Query, reply: &Reply) -> Result<Vec<String>, String> {
    let selector = query
        .candidates
        .as_ref()
        .ok_or("the query has no 'candidates' selector")?;
    let path = Path::parse(&selector.path)?;
    let json = reply
        .json()
        .ok_or("the result is neither structured content nor JSON text")?;
    let mut ids = Vec::new();
    for (rank, v) in path.select(&json).into_iter().enumerate() {
        let id = match &selector.id {
            None => v,
            Some(member) => v.get(member.as_str()).ok_or_else(|| {
                let members = v
                    .as_object()
                    .map(|o| o.keys().map(String::as_str).collect::<Vec<_>>().join(", "))
                    .unwrap_or_default();
                let has = if members.is_empty() {
                    "it is not an object with members".to_string()
                } else {
                    format!("its members: {members}")
                };
                format!(
                    "candidate {} of '{}' has no member '{member}' ({has})",
                    rank + 1,
                    selector.path
                )
            })?,
        };
        match id {
            Value::String(s) => ids.push(s.clone()),
            // Dropping it would move every later candidate up a rank.
            Value::Null => {
                return Err(format!(
                    "candidate {} of '{}' has a null id",
                    rank + 1,
                    selector.path
                ));
            }
            other => ids.push(other.to_string()),
        }
    }
    Ok(ids)
}

/// Evaluates `check` for `query` on `reply` (`scope`: the header's).
pub fn evaluate(check: &Check, query: &Query, scope: &Scope, reply: &Reply) -> Outcome {
    match check {
        Check::CallSucceeds => {
            if reply.is_error {
                Outcome::Fail(format!("the call failed: {}", preview(&reply.text)))
            } else if let Some(kind) = crate::mcp::calllog::soft_error_in_reply(
                &[reply.text.as_str()],
                reply.structured.as_ref(),
            ) {
                // A successful reply that says it failed (README.md,
                // "Servers under test": soft errors) did not succeed.
                Outcome::Fail(format!(
                    "the reply reports a failure ({kind}): {}",
                    preview(&reply.text)
                ))
            } else {
                Outcome::Pass
            }
        }
        Check::IsError => {
            if reply.is_error {
                Outcome::Pass
            } else {
                Outcome::Fail(format!("the call succeeded: {}", preview(&reply.text)))
            }
        }
        _ if reply.is_error => Outcome::Error(format!(
            "the call failed, so there is nothing to check: {}",
            preview(&reply.text)
        )),
        Check::Contains { value } => {
            let haystack = match &reply.structured {
                Some(s) => format!("{}\n{s}", reply.text),
                None => reply.text.clone(),
            };
            if haystack.contains(value.as_str()) {
                Outcome::Pass
            } else {
                Outcome::Fail(format!("'{value}' is not in the result"))
            }
        }
        Check::FieldEquals { path, value } => {
            let Some(json) = reply.json() else {
                return Outcome::Error("the result is not JSON".into());
            };
            let found = match Path::parse(path) {
                Ok(p) => p.select(&json),
                Err(e) => return Outcome::Error(e),
            };
            match found.as_slice() {
                [one] if *one == value => Outcome::Pass,
                [one] => Outcome::Fail(format!("{path} is {one}, not {value}")),
                [] => Outcome::Fail(format!("{path} is not in the result")),
                many => Outcome::Fail(format!("{path} selects {} values", many.len())),
            }
        }
        _ => match candidates(query, reply) {
            Err(e) => Outcome::Error(e),
            Ok(ids) => ranked(check, query, scope, &ids),
        },
    }
}

/// The checks over the candidate list `ids` (in rank order).
fn ranked(check: &Check, query: &Query, scope: &Scope, ids: &[String]) -> Outcome {
    let v = &query.variables;
    let first_acceptable = ids.iter().position(|id| v.accepts(id));
    match check {
        Check::AllInScope => match ids.iter().find(|id| !scope.holds(id)) {
            None => Outcome::Pass,
            Some(id) => Outcome::Fail(format!("'{id}' is outside the scope")),
        },
        Check::AcceptableInTop { n } => match first_acceptable {
            Some(rank) if rank < *n => Outcome::Pass,
            Some(rank) => Outcome::Fail(format!(
                "the first acceptable candidate is at rank {}, below the top {n}",
                rank + 1
            )),
            None if ids.is_empty() => Outcome::Fail("no candidates".into()),
            None => Outcome::Fail(format!(
                "none of the {} candidates is acceptable",
                ids.len()
            )),
        },
        Check::NoRejectedAboveAcceptable => {
            let limit = first_acceptable.unwrap_or(ids.len());
            match ids[..limit]
                .iter()
                .enumerate()
                .find(|(_, id)| v.rejected.iter().any(|r| &r.id == *id))
            {
                None => Outcome::Pass,
                Some((rank, id)) => Outcome::Fail(format!(
                    "rejected '{id}' at rank {} outranks {}",
                    rank + 1,
                    match first_acceptable {
                        Some(a) => format!("the first acceptable candidate (rank {})", a + 1),
                        None => "every acceptable candidate (none was returned)".into(),
                    }
                )),
            }
        }
        Check::CountAtLeast { n } if ids.len() >= *n => Outcome::Pass,
        Check::CountAtLeast { n } => {
            Outcome::Fail(format!("{} candidates, fewer than {n}", ids.len()))
        }
        Check::CountAtMost { n } if ids.len() <= *n => Outcome::Pass,
        Check::CountAtMost { n } => {
            Outcome::Fail(format!("{} candidates, more than {n}", ids.len()))
        }
        _ => Outcome::Error("not a check over candidates".into()),
    }
}

/// The first 200 characters of `text`, on one line.
fn preview(text: &str) -> String {
    crate::format::one_line(text, 200)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::format::{Kind, KnownGap, Rejected, Run, Selector, Variables};
    use serde_json::json;

    fn query() -> Query {
        Query {
            id: "q".into(),
            category: "c".into(),
            user_query: "u".into(),
            why: "w".into(),
            run: Run::Tool {
                tool: "t".into(),
                arguments: Default::default(),
            },
            candidates: Some(Selector {
                path: "results[*]".into(),
                id: Some("iri".into()),
            }),
            rephrasings: vec![],
            variables: Variables {
                acceptable: vec!["http://in/A".into()],
                acceptable_metadata: Default::default(),
                acceptable_prefixes: Vec::new(),
                rejected: vec![Rejected {
                    id: "http://in/B".into(),
                    reason: "neighbour".into(),
                }],
            },
            expectations: vec![],
        }
    }

    fn reply(ids: &[&str]) -> Reply {
        let results: Vec<Value> = ids.iter().map(|i| json!({"iri": i})).collect();
        Reply {
            is_error: false,
            text: json!({"results": results}).to_string(),
            structured: None,
        }
    }

    fn scope() -> Scope {
        Scope {
            prefixes: vec!["http://in/".into()],
            ids: vec![],
        }
    }

    fn eval(check: Check, reply: &Reply) -> Outcome {
        evaluate(&check, &query(), &scope(), reply)
    }

    #[test]
    fn ranked_checks_read_the_candidates_in_order() {
        let good = reply(&["http://in/A", "http://in/B"]);
        let trap = reply(&["http://in/B", "http://in/C", "http://in/A"]);
        assert_eq!(eval(Check::AcceptableInTop { n: 1 }, &good), Outcome::Pass);
        assert_eq!(
            eval(Check::AcceptableInTop { n: 2 }, &trap),
            Outcome::Fail("the first acceptable candidate is at rank 3, below the top 2".into())
        );
        assert_eq!(
            eval(Check::AcceptableInTop { n: 1 }, &reply(&[])),
            Outcome::Fail("no candidates".into())
        );
        assert_eq!(eval(Check::NoRejectedAboveAcceptable, &good), Outcome::Pass);
        assert_eq!(
            eval(Check::NoRejectedAboveAcceptable, &trap),
            Outcome::Fail(
                "rejected 'http://in/B' at rank 1 outranks the first acceptable candidate (rank 3)"
                    .into()
            )
        );
        assert_eq!(eval(Check::AllInScope, &good), Outcome::Pass);
        assert_eq!(
            eval(Check::AllInScope, &reply(&["http://in/A", "http://out/X"])),
            Outcome::Fail("'http://out/X' is outside the scope".into())
        );
        assert_eq!(eval(Check::CountAtLeast { n: 3 }, &trap), Outcome::Pass);
        assert_eq!(
            eval(Check::CountAtMost { n: 2 }, &trap),
            Outcome::Fail("3 candidates, more than 2".into())
        );
    }

    /// An acceptable family by id prefix ranks like a listed candidate:
    /// the UNHCR one-variable-per-origin case of `catalogs/datacommons.json`.
    #[test]
    fn an_acceptable_prefix_makes_every_member_of_the_family_acceptable() {
        let mut q = query();
        q.variables.acceptable.clear();
        q.variables.acceptable_prefixes = vec!["http://in/fam/".into()];
        let trap = reply(&["http://in/B", "http://in/fam/UGA"]);
        assert_eq!(
            evaluate(&Check::AcceptableInTop { n: 2 }, &q, &scope(), &trap),
            Outcome::Pass
        );
        assert_eq!(
            evaluate(&Check::NoRejectedAboveAcceptable, &q, &scope(), &trap),
            Outcome::Fail(
                "rejected 'http://in/B' at rank 1 outranks the first acceptable candidate (rank 2)"
                    .into()
            )
        );
        let none = reply(&["http://in/famine", "http://in/B"]);
        assert_eq!(
            evaluate(&Check::AcceptableInTop { n: 2 }, &q, &scope(), &none),
            Outcome::Fail("none of the 2 candidates is acceptable".into())
        );
    }

    /// A red team found a null id dropped, so the acceptable candidate
    /// behind it moved up to rank 1 and acceptable_in_top passed.
    #[test]
    fn a_null_candidate_id_is_an_error_not_a_lost_rank() {
        let reply = Reply {
            is_error: false,
            text: json!({"results": [{"iri": null}, {"iri": "http://in/A"}]}).to_string(),
            structured: None,
        };
        assert_eq!(
            candidates(&query(), &reply),
            Err("candidate 1 of 'results[*]' has a null id".into())
        );
        assert_eq!(
            eval(Check::AcceptableInTop { n: 1 }, &reply),
            Outcome::Error("candidate 1 of 'results[*]' has a null id".into())
        );
    }

    #[test]
    fn a_failed_call_fails_call_succeeds_passes_is_error_and_leaves_the_rest_unevaluated() {
        let failed = Reply {
            is_error: true,
            text: "HTTP 500\n  boom".into(),
            structured: None,
        };
        assert_eq!(
            eval(Check::CallSucceeds, &failed),
            Outcome::Fail("the call failed: HTTP 500 boom".into())
        );
        assert_eq!(eval(Check::IsError, &failed), Outcome::Pass);
        assert!(matches!(
            eval(Check::AcceptableInTop { n: 1 }, &failed),
            Outcome::Error(_)
        ));
        assert!(matches!(
            eval(Check::IsError, &reply(&[])),
            Outcome::Fail(_)
        ));
        let not_json = Reply {
            is_error: false,
            text: "plain words".into(),
            structured: None,
        };
        assert!(matches!(
            eval(Check::AllInScope, &not_json),
            Outcome::Error(_)
        ));
        assert_eq!(
            eval(
                Check::Contains {
                    value: "words".into()
                },
                &not_json
            ),
            Outcome::Pass
        );
    }

    #[test]
    fn field_equals_reads_structured_content_first() {
        let r = Reply {
            is_error: false,
            text: "ignored".into(),
            structured: Some(json!({"a": {"b": [1, 2]}})),
        };
        let check = |path: &str, value: Value| {
            eval(
                Check::FieldEquals {
                    path: path.into(),
                    value,
                },
                &r,
            )
        };
        assert_eq!(check("a.b[1]", json!(2)), Outcome::Pass);
        assert_eq!(
            check("a.b[0]", json!(2)),
            Outcome::Fail("a.b[0] is 1, not 2".into())
        );
        assert_eq!(
            check("a.c", json!(2)),
            Outcome::Fail("a.c is not in the result".into())
        );
    }

    #[test]
    fn a_status_is_named_as_results_json_writes_it() {
        for s in [
            Status::Pass,
            Status::Fail,
            Status::Error,
            Status::KnownGapOpen,
            Status::KnownGapFixed,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), json!(s.name()));
        }
    }

    #[test]
    fn a_known_gap_is_open_while_it_fails_and_fixed_once_it_holds() {
        let plain = Expectation {
            kind: Kind::Quality,
            check: Check::CallSucceeds,
            known_gap: None,
        };
        let gap = Expectation {
            known_gap: Some(KnownGap {
                found: "2026-12-01".into(),
                note: None,
            }),
            ..plain.clone()
        };
        let fail = Outcome::Fail("x".into());
        assert_eq!(status(&plain, &Outcome::Pass), Status::Pass);
        assert_eq!(status(&plain, &fail), Status::Fail);
        assert_eq!(status(&gap, &fail), Status::KnownGapOpen);
        assert_eq!(status(&gap, &Outcome::Pass), Status::KnownGapFixed);
        assert_eq!(status(&gap, &Outcome::Error("e".into())), Status::Error);
    }
}
