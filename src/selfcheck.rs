//! `selfcheck`: is the scorer wired correctly for *this* corpus?
//!
//! Each cached ground truth is scored against itself and against copies a
//! correct agent might submit (columns renamed and reordered, rows shuffled,
//! IRIs shortened to local names, decimals reprinted within tolerance) and
//! one broken copy (a row dropped). Each copy has an expected verdict,
//! derived from the rules in `docs/SCORING.md`; a verdict that differs is a
//! finding. A finding on a clean corpus means the scorer and the ground
//! truth disagree about what a right answer is, before any model is paid.

use crate::score::{self, Score, ScoreOptions, cell, number::Decimal};
use crate::table::Table;

/// One transformed copy and the verdict it should get.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// Short name, e.g. `rows shuffled`.
    pub name: &'static str,
    /// Expected normalized-tier exact verdict.
    pub expect_exact: bool,
    /// Expected strict-tier exact verdict, when the rules fix it.
    pub expect_strict: Option<bool>,
    /// Expected order-sensitive verdict (`None` when the key is unordered).
    pub expect_ordered: Option<bool>,
    /// The copy.
    pub answer: Table,
}

/// A verdict that was not what it should have been.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Which check.
    pub check: &'static str,
    /// What differed, e.g. "exact: expected true, got false".
    pub message: String,
    /// The score's notes, for diagnosis.
    pub notes: Vec<String>,
}

/// Builds the checks for one ground truth: the key itself, its columns
/// renamed or reordered, its rows shuffled, its IRIs shortened, its decimals
/// reprinted, and one broken copy; a copy that would equal the key (one
/// column, one row, no IRI, no decimal) is left out.
pub fn checks(key: &Table, ordered: bool) -> Vec<Check> {
    let ord = |same_order: bool| ordered.then_some(same_order);
    [
        Some(identical(key, ord(true))),
        Some(columns_renamed_and_reordered(key, ord(true))),
        columns_reordered(key, ord(true)),
        rows_shuffled(key, ordered),
        iris_shortened(key, ordered),
        decimals_reprinted(key, ordered),
        row_dropped(key, ord(false)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A copy every tier must accept as exact.
fn accepted(name: &'static str, expect_ordered: Option<bool>, answer: Table) -> Check {
    Check {
        name,
        expect_exact: true,
        expect_strict: Some(true),
        expect_ordered,
        answer,
    }
}

/// The key itself.
fn identical(key: &Table, ordered: Option<bool>) -> Check {
    accepted("identical", ordered, key.clone())
}

/// Each row's cells reversed.
fn reversed_rows(key: &Table) -> Vec<Vec<String>> {
    key.rows
        .iter()
        .map(|r| r.iter().rev().cloned().collect())
        .collect()
}

/// Columns renamed (so matching falls back to sorted tuples) and reversed.
fn columns_renamed_and_reordered(key: &Table, ordered: Option<bool>) -> Check {
    let renamed = Table {
        columns: (0..key.columns.len())
            .rev()
            .map(|i| format!("col{i}"))
            .collect(),
        rows: reversed_rows(key),
    };
    accepted("columns renamed and reordered", ordered, renamed)
}

/// Same names, columns reversed (when there are two or more).
fn columns_reordered(key: &Table, ordered: Option<bool>) -> Option<Check> {
    (key.columns.len() > 1).then(|| {
        let answer = Table {
            columns: key.columns.iter().rev().cloned().collect(),
            rows: reversed_rows(key),
        };
        accepted("columns reordered", ordered, answer)
    })
}

/// Rows shuffled deterministically (reversed, then rotated by one), when
/// there are two or more; still in order only if that left them as they were.
fn rows_shuffled(key: &Table, ordered: bool) -> Option<Check> {
    if key.rows.len() < 2 {
        return None;
    }
    let mut rows: Vec<Vec<String>> = key.rows.iter().rev().cloned().collect();
    rows.rotate_left(1);
    let same = rows == key.rows;
    let answer = Table {
        columns: key.columns.clone(),
        rows,
    };
    Some(accepted("rows shuffled", ordered.then_some(same), answer))
}

/// IRIs shortened to local names (when the key has any): exact only while
/// the key's local names are unambiguous, never strict.
fn iris_shortened(key: &Table, ordered: bool) -> Option<Check> {
    let mut changed = false;
    let shortened = Table {
        columns: key.columns.clone(),
        rows: key
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|c| {
                        if cell::is_absolute_iri(c)
                            && let Some(local) = cell::local_name(c)
                        {
                            changed = true;
                            local.to_string()
                        } else {
                            c.clone()
                        }
                    })
                    .collect()
            })
            .collect(),
    };
    if !changed {
        return None;
    }
    let injective = score::score(key, key, &ScoreOptions::default()).iri_normalization;
    Some(Check {
        name: "IRIs shortened to local names",
        expect_exact: injective,
        expect_strict: Some(false),
        expect_ordered: ordered.then_some(injective),
        answer: shortened,
    })
}

/// Decimals reprinted at 5 significant figures, within 5e-4 of the key
/// (when that changes any): they pass while snapping is in force, and
/// otherwise only if they round alike at the scorer's figures.
fn decimals_reprinted(key: &Table, ordered: bool) -> Option<Check> {
    let mut reprinted_any = false;
    let reprinted = Table {
        columns: key.columns.clone(),
        rows: key
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|c| match Decimal::parse(c.trim()) {
                        Some(d) if !d.is_integral() => {
                            let shorter = d.round_to(5);
                            if shorter != d {
                                reprinted_any = true;
                            }
                            shorter.plain()
                        }
                        _ => c.clone(),
                    })
                    .collect()
            })
            .collect(),
    };
    if !reprinted_any {
        return None;
    }
    let snapping = score::score(key, key, &ScoreOptions::default()).snapping;
    let passes = snapping || {
        let figures = crate::score::DEFAULT_SIGNIFICANT_FIGURES;
        key.rows
            .iter()
            .flatten()
            .all(|c| match Decimal::parse(c.trim()) {
                Some(d) if !d.is_integral() => {
                    d.canonical_at(figures) == d.round_to(5).canonical_at(figures)
                }
                _ => true,
            })
    };
    Some(Check {
        name: "decimals reprinted within tolerance",
        expect_exact: passes,
        expect_strict: Some(passes),
        expect_ordered: ordered.then_some(passes),
        answer: reprinted,
    })
}

/// Broken: the last row dropped (when there is one).
fn row_dropped(key: &Table, ordered: Option<bool>) -> Option<Check> {
    let (_, kept) = key.rows.split_last()?;
    Some(Check {
        name: "a row dropped",
        expect_exact: false,
        expect_strict: Some(false),
        expect_ordered: ordered,
        answer: Table {
            columns: key.columns.clone(),
            rows: kept.to_vec(),
        },
    })
}

/// Runs every check for one ground truth and returns the findings.
pub fn run(key: &Table, ordered: bool) -> Vec<Finding> {
    evaluate(key, ordered, checks(key, ordered))
}

/// Scores each check's copy against `key` and reports every verdict that
/// differs from the check's expectation.
pub fn evaluate(key: &Table, ordered: bool, checks: Vec<Check>) -> Vec<Finding> {
    let options = ScoreOptions {
        ordered,
        ..ScoreOptions::default()
    };
    let mut findings = Vec::new();
    for check in checks {
        let s: Score = score::score(key, &check.answer, &options);
        let mut problems = Vec::new();
        if s.exact != check.expect_exact {
            problems.push(format!(
                "exact: expected {}, got {}",
                check.expect_exact, s.exact
            ));
        }
        if let Some(strict) = check.expect_strict
            && s.strict_exact != strict
        {
            problems.push(format!(
                "strict_exact: expected {strict}, got {}",
                s.strict_exact
            ));
        }
        if s.ordered != check.expect_ordered {
            problems.push(format!(
                "ordered: expected {:?}, got {:?}",
                check.expect_ordered, s.ordered
            ));
        }
        if check.expect_exact && (s.f1 - 1.0).abs() > 1e-12 {
            problems.push(format!("f1: expected 1, got {}", s.f1));
        }
        if !check.expect_exact && check.name == "a row dropped" && s.f1 >= 1.0 {
            problems.push(format!("f1: expected below 1, got {}", s.f1));
        }
        if !problems.is_empty() {
            findings.push(Finding {
                check: check.name,
                message: problems.join("; "),
                notes: s.notes,
            });
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_decimals() {
        for (text, want) in [
            ("0.45356", "0.45356"),
            ("-12.5", "-12.5"),
            ("1e-7", "0.0000001"),
            ("1234.5", "1234.5"),
        ] {
            assert_eq!(Decimal::parse(text).unwrap().plain(), want);
        }
    }

    #[test]
    fn a_clean_key_has_no_findings() {
        let key = Table::from_csv(
            b"place,share,n\nhttp://ex.org/p/1,0.453562,3\nhttp://ex.org/p/2,0.25,4\nhttp://ex.org/p/3,1.5,4\n",
        )
        .unwrap();
        assert_eq!(run(&key, true), vec![]);
        assert_eq!(run(&key, false), vec![]);
    }

    #[test]
    fn a_wrong_verdict_is_a_finding_with_notes() {
        let key = Table::from_csv(b"item\nhttp://a.org/x/1\nhttp://b.org/y/1\n").unwrap();
        let mut all = checks(&key, false);
        let iri = all.iter_mut().find(|c| c.name.starts_with("IRIs")).unwrap();
        iri.expect_exact = true; // what a scorer without the injectivity guard would say
        let findings = evaluate(&key, false, all);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].check, "IRIs shortened to local names");
        assert_eq!(
            findings[0].message,
            "exact: expected true, got false; f1: expected 1, got 0"
        );
        assert!(findings[0].notes[0].starts_with("IRI normalization withdrawn"));
    }

    #[test]
    fn colliding_iris_expect_the_fallback() {
        let key = Table::from_csv(b"item\nhttp://a.org/x/1\nhttp://b.org/y/1\n").unwrap();
        let iri_check = checks(&key, false)
            .into_iter()
            .find(|c| c.name.starts_with("IRIs"))
            .unwrap();
        assert!(!iri_check.expect_exact);
        assert_eq!(run(&key, false), vec![]);
    }
}
