//! Denotation scoring: is a submitted [`Table`] the answer key's result?
//!
//! Answers are compared by what they denote, not by how the SELECT clause
//! was spelled. The contract, with every choice made where the rules were
//! open, is `docs/SCORING.md`; its version is
//! [`SCORING_VERSION`] and every [`Score`] records it.
//!
//! In outline:
//!
//! 1. **Columns.** When the answer's column names are the key's (same set, no
//!    name repeated on either side) cells are matched column by column;
//!    otherwise each row becomes the sorted tuple of its values.
//! 2. **Cells.** Both tiers trim surrounding whitespace and read numbers
//!    exactly ([`number::Decimal`]): integral forms are one number, other
//!    numbers are rounded to `significant_figures`, and an answer decimal
//!    within relative [`NUMERIC_REL_TOL`] of a key decimal snaps onto it,
//!    unless two key decimals are themselves that close (then snapping is
//!    withdrawn for the question). The *normalized* tier also reads literal
//!    syntax (`"Paris"@en` → `Paris`), IRIs in angle brackets, and IRI-like
//!    text by local name, unless two distinct key IRIs share a local name
//!    (then that reduction is withdrawn for the question). The *strict* tier
//!    compares the cell text as written.
//! 3. **Rows.** Exact is multiset equality; ordered (only when the key has a
//!    total ORDER BY) is sequence equality; F1 is over the rows as multisets.

pub mod cell;
mod context;
mod guard;
pub mod number;
mod rows;
mod tolerance;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use serde::{Deserialize, Serialize};

use crate::format::plural;
use crate::table::{Rows, Table};
use context::{NORMALIZED, STRICT, Tally};
use rows::{Layout, TierCount};

/// Version of the comparison contract in `docs/SCORING.md`. Bump it whenever
/// a rule there changes, so a recorded score says which rules produced it.
pub const SCORING_VERSION: &str = "1.2";

/// Relative tolerance within which an answer decimal snaps onto a key
/// decimal (`docs/SCORING.md`, "Numbers (both tiers)": 5e-4).
pub const NUMERIC_REL_TOL: f64 = 5e-4;

/// Default number of significant figures non-integral numbers are rounded
/// to before comparison (`docs/SCORING.md`, "Numbers (both tiers)").
pub const DEFAULT_SIGNIFICANT_FIGURES: u32 = 6;

/// The significant figures a comparison may round to: `--precision` of
/// `score`, `run` and `rescore`, and a condition's recorded
/// `settings.significant_figures`, which loading a runs root holds to the
/// same range (issue 24, item 7; `docs/SCORING.md`, "Numbers (both
/// tiers)").
pub const SIGNIFICANT_FIGURES: std::ops::RangeInclusive<u32> = 1..=30;

/// How to score one answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreOptions {
    /// The answer key has a total ORDER BY: report the order-sensitive match.
    pub ordered: bool,
    /// Significant figures for non-integral numbers (at least 1).
    pub significant_figures: u32,
    /// Relative snapping tolerance (dimensionless).
    pub numeric_rel_tol: f64,
}

impl Default for ScoreOptions {
    fn default() -> Self {
        ScoreOptions {
            ordered: false,
            significant_figures: DEFAULT_SIGNIFICANT_FIGURES,
            numeric_rel_tol: NUMERIC_REL_TOL,
        }
    }
}

/// How answer columns were lined up with the key's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ColumnMatch {
    /// The answer uses the key's column names: matched column by column.
    ByName,
    /// Names differ (or repeat): each row compared as its sorted values.
    SortedTuple,
}

/// The verdict on one answer. Serialized as the JSON that `score` prints and
/// `result.json` records; F1 components are fractions in `[0, 1]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Score {
    /// [`SCORING_VERSION`] at the time of scoring.
    pub scoring_version: String,
    /// Normalized tier: same rows as the key, as multisets.
    pub exact: bool,
    /// Strict tier: same rows, cell text as written (numbers still read).
    pub strict_exact: bool,
    /// Normalized tier, order-sensitive; `None` when the key is unordered.
    pub ordered: Option<bool>,
    /// Strict tier, order-sensitive; `None` when the key is unordered.
    pub strict_ordered: Option<bool>,
    /// Normalized-tier F1 over rows as multisets (both empty = 1).
    pub f1: f64,
    /// Normalized-tier precision: matching rows ÷ answer rows.
    pub row_precision: f64,
    /// Normalized-tier recall: matching rows ÷ key rows.
    pub row_recall: f64,
    /// Strict-tier F1.
    pub strict_f1: f64,
    /// Rows in the answer key's result.
    pub key_rows: usize,
    /// Rows in the answer (0 when it could not be read).
    pub answer_rows: usize,
    /// Rows matched in the normalized tier (multiset intersection size).
    pub matched_rows: usize,
    /// How columns were lined up; `None` when the answer could not be read.
    pub columns: Option<ColumnMatch>,
    /// IRI local-name reduction was in force (not withdrawn).
    pub iri_normalization: bool,
    /// Decimal snapping was in force (not withdrawn).
    pub snapping: bool,
    /// Significant figures used for non-integral numbers.
    pub significant_figures: u32,
    /// Relative snapping tolerance used.
    pub numeric_rel_tol: f64,
    /// Human-readable notes: withdrawn guards, column mapping, unreadable
    /// answers (with the line), cells snapped or matched by local name.
    pub notes: Vec<String>,
}

/// Scores `answer` against the answer key's result `key`.
///
/// Never fails: every pair of tables has a score. See the module docs and
/// `docs/SCORING.md` for the rules.
pub fn score(key: &Table, answer: &Table, options: &ScoreOptions) -> Score {
    score_rows(key, answer, options)
}

/// [`score`] over any [`Rows`]: a [`Table`], or CSV read in place
/// ([`crate::table::CsvText`]), so a large answer is scored without a
/// `String` per cell. The score is the same whatever the rows are held in.
pub fn score_rows<K, A>(key: &K, answer: &A, options: &ScoreOptions) -> Score
where
    K: Rows + ?Sized + Sync,
    A: Rows + ?Sized + Sync,
{
    let key_names = key.column_names();
    let answer_names = answer.column_names();
    let mut column_notes = Vec::new();
    let columns = match_columns(
        (&key_names, key.row_count()),
        (&answer_names, answer.row_count()),
        &mut column_notes,
    );
    let by_name = matches!(columns, Columns::ByName(_));
    let layout = match &columns {
        Columns::ByName(permutation) => Layout::ByName(permutation),
        Columns::SortedTuple => Layout::SortedTuple {
            answer_width: answer_names.len(),
        },
    };
    let outcome = rows::compare(key, answer, by_name, layout, options);
    let (counts, tally) = (outcome.counts, outcome.tally);
    let mut notes = outcome.notes;
    notes.extend(column_notes);
    let (key_rows, answer_rows) = (key.row_count(), answer.row_count());
    let tier = |count: TierCount| {
        let exact = count.matched == key_rows && count.matched == answer_rows;
        let (precision, recall, f1) = f1_parts(count.matched, answer_rows, key_rows);
        (exact, exact && count.in_order, precision, recall, f1)
    };
    let (exact, ordered, row_precision, row_recall, f1) = tier(counts[NORMALIZED]);
    let (strict_exact, strict_ordered, _, _, strict_f1) = tier(counts[STRICT]);
    notes.extend(tally_notes(tally, options));

    Score {
        scoring_version: SCORING_VERSION.to_string(),
        exact,
        strict_exact,
        ordered: options.ordered.then_some(ordered),
        strict_ordered: options.ordered.then_some(strict_ordered),
        f1,
        row_precision,
        row_recall,
        strict_f1,
        key_rows,
        answer_rows,
        matched_rows: counts[NORMALIZED].matched,
        columns: Some(columns.kind()),
        iri_normalization: outcome.iri_normalization,
        snapping: outcome.snapping,
        significant_figures: options.significant_figures,
        numeric_rel_tol: options.numeric_rel_tol,
        notes,
    }
}

/// The notes saying how many answer cells were adjusted, and how.
fn tally_notes(tally: Tally, options: &ScoreOptions) -> Vec<String> {
    let mut notes = Vec::new();
    if tally.snapped > 0 {
        notes.push(format!(
            "{} answer decimal{} snapped onto the key (within relative {})",
            tally.snapped,
            plural(tally.snapped),
            options.numeric_rel_tol
        ));
    }
    if tally.by_local_name > 0 {
        notes.push(format!(
            "{} answer cell{} matched a key IRI by local name (normalized tier only)",
            tally.by_local_name,
            plural(tally.by_local_name)
        ));
    }
    if tally.unwrapped > 0 {
        notes.push(format!(
            "{} answer cell{} written in literal or IRI syntax read as {} value (normalized tier only)",
            tally.unwrapped,
            plural(tally.unwrapped),
            if tally.unwrapped == 1 { "its" } else { "their" }
        ));
    }
    notes
}

/// The score of an answer that could not be read (e.g. a ragged CSV): a miss
/// in both tiers with F1 0, carrying `reason` (which names the line) as a
/// note. The guards are still evaluated on the key so the record is complete.
pub fn score_unreadable(key: &Table, reason: &str, options: &ScoreOptions) -> Score {
    score_unreadable_rows(key, reason, options)
}

/// [`score_unreadable`] over any [`Rows`].
pub fn score_unreadable_rows<K: Rows + ?Sized + Sync>(
    key: &K,
    reason: &str,
    options: &ScoreOptions,
) -> Score {
    let (snapping, iri_normalization, guard_notes) = rows::key_guards(key, options);
    let mut notes = vec![format!("answer could not be read: {reason}")];
    notes.extend(guard_notes);
    Score {
        scoring_version: SCORING_VERSION.to_string(),
        exact: false,
        strict_exact: false,
        ordered: options.ordered.then_some(false),
        strict_ordered: options.ordered.then_some(false),
        f1: 0.0,
        row_precision: 0.0,
        row_recall: 0.0,
        strict_f1: 0.0,
        key_rows: key.row_count(),
        answer_rows: 0,
        matched_rows: 0,
        columns: None,
        iri_normalization,
        snapping,
        significant_figures: options.significant_figures,
        numeric_rel_tol: options.numeric_rel_tol,
        notes,
    }
}

/// A column name as compared: trimmed, without a leading `?` or `$`.
fn column_key(name: &str) -> &str {
    let name = name.trim();
    name.strip_prefix(['?', '$']).unwrap_or(name)
}

#[derive(Debug, Clone)]
enum Columns {
    /// `permutation[i]` is the answer column holding key column `i`.
    ByName(Vec<usize>),
    SortedTuple,
}

impl Columns {
    fn kind(&self) -> ColumnMatch {
        match self {
            Columns::ByName(_) => ColumnMatch::ByName,
            Columns::SortedTuple => ColumnMatch::SortedTuple,
        }
    }
}

/// Lines the answer's columns up with the key's (`docs/SCORING.md`,
/// "Columns"); each side is its column names and its number of rows.
fn match_columns(
    (key, key_rows): (&[&str], usize),
    (answer, answer_rows): (&[&str], usize),
    notes: &mut Vec<String>,
) -> Columns {
    let key_names: Vec<&str> = key.iter().map(|c| column_key(c)).collect();
    let answer_names: Vec<&str> = answer.iter().map(|c| column_key(c)).collect();
    if let Some(repeated) = first_repeated(&answer_names) {
        notes.push(format!(
            "the answer names column '{repeated}' more than once, so columns cannot be matched by name; rows compared as sorted tuples of values"
        ));
        return Columns::SortedTuple;
    }
    if answer.is_empty() {
        notes.push("the answer is empty: no header row and no rows".to_string());
        return Columns::SortedTuple;
    }
    if key.len() != answer.len() {
        if key_rows == 0 && answer_rows == 0 {
            return Columns::SortedTuple;
        }
        notes.push(format!(
            "the answer has {} column{}, the key {}: no row can match",
            answer.len(),
            plural(answer.len()),
            key.len()
        ));
        return Columns::SortedTuple;
    }
    if first_repeated(&key_names).is_none() {
        let position: HashMap<&str, usize> = answer_names
            .iter()
            .enumerate()
            .map(|(i, n)| (*n, i))
            .collect();
        let permutation: Option<Vec<usize>> =
            key_names.iter().map(|n| position.get(n).copied()).collect();
        if let Some(permutation) = permutation {
            return Columns::ByName(permutation);
        }
    }
    notes.push(
        "the answer's column names differ from the key's; rows compared as sorted tuples of values"
            .to_string(),
    );
    Columns::SortedTuple
}

fn first_repeated<'a>(names: &[&'a str]) -> Option<&'a str> {
    let mut seen = HashSet::default();
    names.iter().find(|n| !seen.insert(**n)).copied()
}

/// Precision, recall and F1 over multisets (`docs/SCORING.md`, "Rows"): both
/// empty is (1, 1, 1); no overlap is F1 0.
pub fn f1_parts(matched: usize, answer_rows: usize, key_rows: usize) -> (f64, f64, f64) {
    if answer_rows == 0 && key_rows == 0 {
        return (1.0, 1.0, 1.0);
    }
    let precision = if answer_rows == 0 {
        0.0
    } else {
        matched as f64 / answer_rows as f64
    };
    let recall = if key_rows == 0 {
        0.0
    } else {
        matched as f64 / key_rows as f64
    };
    let f1 = if matched == 0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    (precision, recall, f1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(csv: &str) -> Table {
        Table::from_csv(csv.as_bytes()).unwrap()
    }

    fn exact(key: &str, answer: &str) -> (bool, bool) {
        let s = score(&t(key), &t(answer), &ScoreOptions::default());
        (s.exact, s.strict_exact)
    }

    /// Found by `selfcheck` on the demo corpus: an area of 14290.37 printed
    /// at five figures reads `14290`, which looks integral but is the same
    /// decimal printed coarser, and must snap like `0.45356` does.
    #[test]
    fn a_decimal_rounded_to_an_integer_still_snaps() {
        assert_eq!(
            exact("name,area\nA,14290.37\n", "name,area\nA,14290\n"),
            (true, true)
        );
    }

    /// An answer number that is itself a key value is never moved onto a
    /// nearby key decimal (here a count equal to the rounded area).
    #[test]
    fn a_number_equal_to_a_key_value_is_not_snapped() {
        let key = "count,area\n14290,14290.37\n";
        assert_eq!(exact(key, "count,area\n14290,14290.37\n"), (true, true));
        assert_eq!(exact(key, "n,a\n14290,14290.37\n"), (true, true));
    }

    /// With names matched, a decimal only snaps onto its own column's values.
    #[test]
    fn snapping_is_per_column_when_matched_by_name() {
        let key = "a,b\n1.5,2.5003\n";
        // 2.5 is within 5e-4 of b's 2.5003, but sits in column a (key 1.5).
        assert_eq!(exact(key, "a,b\n2.5,2.5003\n"), (false, false));
        assert_eq!(exact(key, "a,b\n1.5,2.5\n"), (true, true));
    }

    /// With names matched, "already a key value" looks at
    /// the answer cell's own key column only, so a count of 14290 elsewhere
    /// does not stop an area printed as 14290 from snapping onto 14290.37.
    #[test]
    fn a_key_value_in_another_column_does_not_block_snapping() {
        assert_eq!(
            exact("n,area\n14290,14290.37\n", "n,area\n14290,14290\n"),
            (true, true)
        );
        assert_eq!(
            exact(
                "n,area\n5,14290.37\n14290,1.5\n",
                "n,area\n5,14290\n14290,1.5\n"
            ),
            (true, true)
        );
    }

    /// An IRI's local name equal to another key value makes
    /// the reduction ambiguous, so it is withdrawn (IRIs compared in full).
    #[test]
    fn a_local_name_equal_to_a_plain_key_value_withdraws_the_reduction() {
        let s = score(
            &t("a\nhttp://x/Paris\nParis\n"),
            &t("a\nhttp://x/Paris\nhttp://x/Paris\n"),
            &ScoreOptions::default(),
        );
        assert!(!s.exact && !s.iri_normalization, "{s:?}");
        assert!(
            s.notes[0].contains("is also the key value 'Paris'"),
            "{:?}",
            s.notes
        );
        assert_eq!(exact("a\nhttp://x/5\n5\n", "a\n5\n5\n"), (false, false));
        assert_eq!(
            exact("a\nhttp://x/5\n5\n", "a\n5\nhttp://x/5\n"),
            (true, true)
        );
    }

    /// The same guard for sorted tuples (columns renamed: all columns one
    /// group), where the key's plain values are looked up by the hashes
    /// its first reading took (issue 26, section 4): a plain value in
    /// another column, a prefixed name's local name and a value in another
    /// Unicode form each withdraw the reduction; a key with none keeps it.
    #[test]
    fn a_plain_value_of_another_column_that_is_a_local_name_withdraws_it_in_sorted_tuples() {
        let renamed =
            |key: &str, answer: &str| score(&t(key), &t(answer), &ScoreOptions::default());
        let s = renamed(
            "a,b\nhttp://x/Paris,Lyon\nhttp://x/Nice,Paris\n",
            "x,y\nhttp://x/Paris,Lyon\nhttp://x/Nice,Paris\n",
        );
        assert!(s.exact && !s.iri_normalization, "{s:?}");
        assert!(
            s.notes
                .iter()
                .any(|n| n.contains("is also the key value 'Paris'")),
            "{:?}",
            s.notes
        );
        for key in [
            "a,b\nhttp://x/Paris,Lyon\nhttp://x/Nice,ex:Paris\n",
            "a,b\nhttp://x/P\u{e9}rou,Lyon\nhttp://x/Nice,Pe\u{301}rou\n",
            "a,b\nhttp://x/Paris,Lyon\n\"<http://y/z>\",\"\"\"Paris\"\"\"\n",
        ] {
            let s = renamed(key, "x,y\nParis,Lyon\n");
            assert!(!s.iri_normalization, "{key}: {s:?}");
        }
        let s = renamed(
            "a,b\nhttp://x/Paris,Lyon\nhttp://x/Nice,Lille\n",
            "x,y\nParis,Lyon\nLille,Nice\n",
        );
        assert!(s.exact && s.iri_normalization, "{s:?}");
    }

    /// A bare numeric local name still counts as read by local name.
    #[test]
    fn numeric_local_names_are_noted() {
        let s = score(
            &t("p\nhttp://x/5\n"),
            &t("p\n5\n"),
            &ScoreOptions::default(),
        );
        assert!(s.exact && !s.strict_exact);
        assert_eq!(
            s.notes,
            ["1 answer cell matched a key IRI by local name (normalized tier only)"]
        );
    }

    #[test]
    fn unicode_composition_is_a_serialization_difference() {
        assert_eq!(
            exact("city\ncaf\u{e9}\n", "city\ncafe\u{301}\n"),
            (true, false)
        );
    }

    #[test]
    fn key_iris_with_numeric_local_names_beside_numbers() {
        let key = "place,n\nhttp://ex.org/p/3,4\nhttp://ex.org/p/4,3\n";
        assert_eq!(exact(key, "place,n\n3,4\n4,3\n"), (true, false));
        assert_eq!(exact(key, "place,n\n4,4\n3,3\n"), (false, false));
    }

    #[test]
    fn notes_say_what_was_adjusted() {
        let s = score(
            &t("d,share\nhttp://purl.obolibrary.org/obo/MONDO_1,0.453562\n"),
            &t("d,share\nobo/MONDO_1,\"0.45356\"\n"),
            &ScoreOptions::default(),
        );
        assert!(s.exact && !s.strict_exact);
        assert_eq!(
            s.notes,
            [
                "1 answer decimal snapped onto the key (within relative 0.0005)",
                "1 answer cell matched a key IRI by local name (normalized tier only)"
            ]
        );
        assert_eq!(s.columns, Some(ColumnMatch::ByName));
    }
}
