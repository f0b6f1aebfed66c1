//! The scorer as first written (scoring 1.1, before the rewrite for
//! speed): row by row, each cell canonicalized into an owned value, rows
//! compared as sorted vectors. It is the plain statement of the rules of
//! `docs/SCORING.md` that `score_oracle` holds the fast scorer
//! (`okn_benchmark::score`, hashing rows and borrowing the files' text) to:
//! the same score, field for field, on every generated pair.
//!
//! A change to the rules changes both, and bumps `SCORING_VERSION`.
#![allow(dead_code)]
use okn_benchmark::format::plural;
use okn_benchmark::score::{
    ColumnMatch, SCORING_VERSION, Score, ScoreOptions, cell, f1_parts, number, number::Decimal,
};
use okn_benchmark::table::Table;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::borrow::Cow;
/// Scores `answer` against the answer key's result `key`.
///
/// Never fails: every pair of tables has a score. See the module docs and
/// `docs/SCORING.md` for the rules.
pub fn score(key: &Table, answer: &Table, options: &ScoreOptions) -> Score {
    let mut column_notes = Vec::new();
    let columns = match_columns(key, answer, &mut column_notes);
    let context = KeyContext::new(key, matches!(columns, Columns::ByName(_)), options);
    let mut notes = context.notes.clone();
    notes.extend(column_notes);
    let comparison = Comparison {
        key,
        answer,
        context: &context,
        columns: &columns,
        options,
    };
    let normalized = comparison.tier(true);
    let strict = comparison.tier(false);

    if normalized.snapped > 0 {
        notes.push(format!(
            "{} answer decimal{} snapped onto the key (within relative {})",
            normalized.snapped,
            plural(normalized.snapped),
            options.numeric_rel_tol
        ));
    }
    if normalized.by_local_name > 0 {
        notes.push(format!(
            "{} answer cell{} matched a key IRI by local name (normalized tier only)",
            normalized.by_local_name,
            plural(normalized.by_local_name)
        ));
    }
    if normalized.unwrapped > 0 {
        notes.push(format!(
            "{} answer cell{} written in literal or IRI syntax read as {} value (normalized tier only)",
            normalized.unwrapped,
            plural(normalized.unwrapped),
            if normalized.unwrapped == 1 { "its" } else { "their" }
        ));
    }

    Score {
        scoring_version: SCORING_VERSION.to_string(),
        exact: normalized.exact,
        strict_exact: strict.exact,
        ordered: options.ordered.then_some(normalized.ordered),
        strict_ordered: options.ordered.then_some(strict.ordered),
        f1: normalized.f1,
        row_precision: normalized.precision,
        row_recall: normalized.recall,
        strict_f1: strict.f1,
        key_rows: key.rows.len(),
        answer_rows: answer.rows.len(),
        matched_rows: normalized.matched,
        columns: Some(columns.kind()),
        iri_normalization: context.iri_normalization,
        snapping: context.snapping,
        significant_figures: options.significant_figures,
        numeric_rel_tol: options.numeric_rel_tol,
        notes,
    }
}

/// The score of an answer that could not be read (e.g. a ragged CSV): a miss
/// in both tiers with F1 0, carrying `reason` (which names the line) as a
/// note. The guards are still evaluated on the key so the record is complete.
pub fn score_unreadable(key: &Table, reason: &str, options: &ScoreOptions) -> Score {
    let context = KeyContext::new(key, false, options);
    let mut notes = vec![format!("answer could not be read: {reason}")];
    notes.extend(context.notes);
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
        key_rows: key.rows.len(),
        answer_rows: 0,
        matched_rows: 0,
        columns: None,
        iri_normalization: context.iri_normalization,
        snapping: context.snapping,
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

fn match_columns(key: &Table, answer: &Table, notes: &mut Vec<String>) -> Columns {
    let key_names: Vec<&str> = key.columns.iter().map(|c| column_key(c)).collect();
    let answer_names: Vec<&str> = answer.columns.iter().map(|c| column_key(c)).collect();
    if let Some(repeated) = first_repeated(&answer_names) {
        notes.push(format!(
            "the answer names column '{repeated}' more than once, so columns cannot be matched by name; rows compared as sorted tuples of values"
        ));
        return Columns::SortedTuple;
    }
    if answer.columns.is_empty() {
        notes.push("the answer is empty: no header row and no rows".to_string());
        return Columns::SortedTuple;
    }
    if key.columns.len() != answer.columns.len() {
        if key.rows.is_empty() && answer.rows.is_empty() {
            return Columns::SortedTuple;
        }
        notes.push(format!(
            "the answer has {} column{}, the key {}: no row can match",
            answer.columns.len(),
            plural(answer.columns.len()),
            key.columns.len()
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

/// What the key alone decides: the guards, and per *group* of key columns
/// the values answer cells may snap or resolve onto. A group is one key
/// column when columns are matched by name (a cell is only compared with
/// its own column), and all columns together for sorted tuples.
struct KeyContext {
    groups: Vec<Group>,
    /// Snapping is in force (not withdrawn for the question).
    snapping: bool,
    /// IRI local-name reduction is in force (not withdrawn).
    iri_normalization: bool,
    notes: Vec<String>,
    /// The tolerance as the decimal it is written as.
    tol: Decimal,
}

#[derive(Default)]
struct Group {
    /// Key decimals a double can hold (non-integral numbers whose nearest
    /// `f64` is a normal one) as `(value, text first written)`, sorted by
    /// value, one per value: the snapping targets.
    decimals: Vec<(Decimal, String)>,
    /// Canonical text of every numeric key cell (an answer number equal to
    /// one of them is taken at its word and never snapped), with the text
    /// the first such cell is written as.
    numbers: HashMap<String, String>,
    /// Local name (in NFC) → key IRI.
    local_names: HashMap<String, String>,
}

/// True when a double holds `d` to its full precision (a normal `f64`):
/// only such a value snaps or is snapped onto (`docs/SCORING.md`).
fn a_double_holds(text: &str, d: &Decimal) -> bool {
    text.parse::<f64>()
        .unwrap_or_else(|_| d.to_f64())
        .is_normal()
}

/// True when a local name reads as a number: it is then matched only by
/// text naming it, never by a number of the same value.
fn numeric(local: &str) -> bool {
    Decimal::parse(local).is_some()
}

impl KeyContext {
    /// Builds the context; `by_name` says whether each key column is its
    /// own group.
    fn new(key: &Table, by_name: bool, options: &ScoreOptions) -> KeyContext {
        let count = if by_name { key.columns.len().max(1) } else { 1 };
        let mut context = KeyContext {
            groups: (0..count).map(|_| Group::default()).collect(),
            snapping: true,
            iri_normalization: true,
            notes: Vec::new(),
            tol: okn_benchmark::score::number::tolerance(options.numeric_rel_tol)
                .expect("a finite tolerance"),
        };
        let group_of = |column: usize| if by_name { column } else { 0 };
        context.read_numbers(key, &group_of, options);
        context.read_local_names(key, &group_of, options);
        context
    }

    /// Numbers: snapping targets, the numbers taken at their word, and the
    /// closeness guard over the whole question (`docs/SCORING.md`, "Numbers
    /// (both tiers)", "Snapping withdrawn"): two distinct key decimals
    /// within the tolerance of each other withdraw snapping for the
    /// question. Values are compared as decimals, never as doubles; a
    /// decimal a double cannot hold takes no part in snapping.
    fn read_numbers(
        &mut self,
        key: &Table,
        group_of: &dyn Fn(usize) -> usize,
        options: &ScoreOptions,
    ) {
        let figures = options.significant_figures;
        // Every distinct decimal value, with the text it first appears as.
        let mut all: Vec<(Decimal, String)> = Vec::new();
        let mut per_group: Vec<Vec<(Decimal, String)>> = vec![Vec::new(); self.groups.len()];
        for row in &key.rows {
            for (column, cell) in row.iter().enumerate() {
                let text = cell::unwrap_syntax(cell.trim());
                let Some(d) = Decimal::parse(&text) else {
                    continue;
                };
                let g = group_of(column);
                self.groups[g]
                    .numbers
                    .entry(d.canonical_at(figures))
                    .or_insert_with(|| text.to_string());
                if !d.is_integral() && a_double_holds(&text, &d) {
                    if !all.iter().any(|(v, _)| v.cmp_value(&d).is_eq()) {
                        all.push((d.clone(), text.to_string()));
                    }
                    per_group[g].push((d, text.to_string()));
                }
            }
        }
        all.sort_by(|a, b| a.0.cmp_value(&b.0));
        for pair in all.windows(2) {
            let (a, b) = (&pair[0].0, &pair[1].0);
            let larger = if a.cmp_abs(b).is_ge() { a } else { b };
            if number::within_tolerance(a, b, &self.tol, larger) {
                self.snapping = false;
                self.notes.push(format!(
                    "decimal snapping withdrawn: the key's own values {} and {} are within relative {} of each other",
                    pair[0].1, pair[1].1, options.numeric_rel_tol
                ));
                break;
            }
        }
        if self.snapping {
            for (group, mut decimals) in self.groups.iter_mut().zip(per_group) {
                // Stable: of equal values, the first written is kept.
                decimals.sort_by(|a, b| a.0.cmp_value(&b.0));
                decimals.dedup_by(|a, b| a.0.cmp_value(&b.0).is_eq());
                group.decimals = decimals;
            }
        }
    }

    /// IRI local names, and the injectivity guard over the whole key: an
    /// answer cell naming any key value must read as that value alone. So,
    /// within a group, the reduction is withdrawn for the question when
    /// two distinct key IRIs share a local name; when an IRI's local name,
    /// read as an answer cell would read it without the reduction (as
    /// text, or as a number, snapping included), is another key value; or
    /// when a key value that is not an IRI has a key IRI's local name as
    /// its own (`HGNC:5` beside `http://identifiers.org/hgnc/5`).
    fn read_local_names(
        &mut self,
        key: &Table,
        group_of: &dyn Fn(usize) -> usize,
        options: &ScoreOptions,
    ) {
        let mut plain: Vec<HashSet<String>> =
            (0..self.groups.len()).map(|_| HashSet::default()).collect();
        for row in &key.rows {
            for (column, cell) in row.iter().enumerate() {
                let value = cell::unwrap_syntax(cell.trim());
                if !cell::is_absolute_iri(&value) {
                    plain[group_of(column)].insert(cell::nfc(&value).into_owned());
                }
            }
        }
        // Every IRI under its local name first (the first in row order).
        for row in &key.rows {
            for (column, cell) in row.iter().enumerate() {
                let value = cell::unwrap_syntax(cell.trim()).into_owned();
                if !cell::is_absolute_iri(&value) {
                    continue;
                }
                if let Some(local) = cell::local_name(&value) {
                    self.groups[group_of(column)]
                        .local_names
                        .entry(cell::nfc(local).into_owned())
                        .or_insert_with(|| value.clone());
                }
            }
        }
        if let Some(why) = self.local_name_collision(key, group_of, &plain, options) {
            self.iri_normalization = false;
            self.notes.push(format!(
                "IRI normalization withdrawn: {why}, so IRIs are compared in full"
            ));
            for group in &mut self.groups {
                group.local_names.clear();
            }
        }
    }

    /// The first key cell, in row order, that breaks the guard, and why.
    /// Local names are compared in NFC, as text is in the normalized tier.
    fn local_name_collision(
        &self,
        key: &Table,
        group_of: &dyn Fn(usize) -> usize,
        plain: &[HashSet<String>],
        options: &ScoreOptions,
    ) -> Option<String> {
        for row in &key.rows {
            for (column, cell) in row.iter().enumerate() {
                let value = cell::unwrap_syntax(cell.trim()).into_owned();
                let g = group_of(column);
                let group = &self.groups[g];
                if !cell::is_absolute_iri(&value) {
                    // A plain value an answer would read as a key IRI.
                    if let Some(local) = cell::local_name(&value)
                        && let Some(iri) = group.local_names.get(&*cell::nfc(local))
                    {
                        return Some(if local == value {
                            format!(
                                "the local name of key IRI {iri} is also the key value '{local}'"
                            )
                        } else {
                            format!(
                                "the key value '{value}' has the local name '{local}' of key IRI {iri}"
                            )
                        });
                    }
                    continue;
                }
                let Some(local) = cell::local_name(&value) else {
                    continue;
                };
                let name = cell::nfc(local);
                if plain[g].contains(&*name) {
                    return Some(format!(
                        "the local name of key IRI {value} is also the key value '{local}'"
                    ));
                }
                if let Some(why) = self.reads_as_key_number(g, local, options) {
                    return Some(format!("the local name of key IRI {value} {why}"));
                }
                match group.local_names.get(&*name) {
                    Some(existing) if *existing != value => {
                        let (first, second) = if *existing < value {
                            (existing.clone(), value.clone())
                        } else {
                            (value.clone(), existing.clone())
                        };
                        return Some(format!(
                            "key IRIs {first} and {second} share the local name '{local}'"
                        ));
                    }
                    _ => {}
                }
                // The local name written bare, read as an answer cell, is
                // itself cut to another IRI's (`x:Paris` of `urn:x:Paris`
                // reads as `Paris`, beside `http://a.org/Paris`).
                if let Some(inner) = cell::local_name(&cell::unwrap_syntax(local))
                    && *cell::nfc(inner) != *name
                    && let Some(other) = group.local_names.get(&*cell::nfc(inner))
                {
                    return Some(format!(
                        "the local name '{local}' of key IRI {value}, written bare, reads as the local name '{inner}' of key IRI {other}"
                    ));
                }
            }
        }
        None
    }

    /// How a local name, read as an answer number of group `g`, is a key
    /// number of that group (equal to one, or snapping onto one), if it is.
    fn reads_as_key_number(&self, g: usize, local: &str, options: &ScoreOptions) -> Option<String> {
        let d = Decimal::parse(local)?;
        let own = d.canonical_at(options.significant_figures);
        let group = &self.groups[g];
        if let Some(written) = group.numbers.get(&own) {
            return Some(format!("reads as the key value '{written}'"));
        }
        let (_, written) = self.snap_target(group, local, &d)?;
        Some(format!(
            "reads as a number within relative {} of the key value '{written}'",
            options.numeric_rel_tol
        ))
    }

    /// The key decimal of `group` an answer number `d` (written `text`)
    /// snaps onto: the nearest within the tolerance, the lower of two as
    /// near; none while snapping is withdrawn, for a number a double
    /// cannot hold, or for one that is itself a key number of the group.
    fn snap_target<'g>(
        &self,
        group: &'g Group,
        text: &str,
        d: &Decimal,
    ) -> Option<&'g (Decimal, String)> {
        if !self.snapping || !a_double_holds(text, d) {
            return None;
        }
        let mut best: Option<(&(Decimal, String), Decimal)> = None;
        for target in &group.decimals {
            if !number::within_tolerance(d, &target.0, &self.tol, &target.0) {
                continue;
            }
            let distance = d.abs_diff(&target.0);
            if best
                .as_ref()
                .is_none_or(|(_, b)| distance.cmp_abs(b).is_lt())
            {
                best = Some((target, distance));
            }
        }
        best.map(|(t, _)| t)
    }

    /// Canonical value of a key cell of `group` in a tier: in the normalized
    /// tier a key IRI is its local name (while that is injective; the IRI
    /// itself when that name reads as a number), and text is in Unicode
    /// NFC.
    fn key_cell(
        &self,
        text: &str,
        group: usize,
        normalized: bool,
        options: &ScoreOptions,
    ) -> String {
        let text = text.trim();
        let value = if normalized {
            cell::unwrap_syntax(text)
        } else {
            Cow::Borrowed(text)
        };
        if normalized
            && cell::is_absolute_iri(&value)
            && let Some(local) = cell::local_name(&value)
            && self.groups[group]
                .local_names
                .contains_key(&*cell::nfc(local))
        {
            return if numeric(local) {
                value.into_owned()
            } else {
                cell::nfc(local).into_owned()
            };
        }
        match Decimal::parse(&value) {
            Some(d) => d.canonical_at(options.significant_figures),
            None if normalized => cell::nfc(&value).into_owned(),
            None => value.into_owned(),
        }
    }

    /// Canonical value of an answer cell compared against `group`, in a
    /// tier, with what adjusted it.
    fn answer_cell(
        &self,
        text: &str,
        group: usize,
        normalized: bool,
        options: &ScoreOptions,
        tally: &mut Tally,
    ) -> String {
        let text = text.trim();
        let g = &self.groups[group];
        let value = if normalized {
            let unwrapped = cell::unwrap_syntax(text);
            if unwrapped != text {
                tally.unwrapped += 1;
            }
            unwrapped
        } else {
            Cow::Borrowed(text)
        };
        // An answer cell naming a key IRI by its local name (in any of the
        // forms servers print) is that local name, like the key's IRI.
        if normalized
            && let Some(local) = cell::local_name(&value)
            && let Some(iri) = g.local_names.get(&*cell::nfc(local))
        {
            if **iri != *value {
                tally.by_local_name += 1;
            }
            return if numeric(local) {
                iri.clone()
            } else {
                cell::nfc(local).into_owned()
            };
        }
        match Decimal::parse(&value) {
            Some(d) => {
                let own = d.canonical_at(options.significant_figures);
                if !g.numbers.contains_key(&own)
                    && let Some((target, _)) = self.snap_target(g, &value, &d)
                {
                    tally.snapped += 1;
                    return target.canonical_at(options.significant_figures);
                }
                own
            }
            None if normalized => cell::nfc(&value).into_owned(),
            None => value.into_owned(),
        }
    }
}

#[derive(Default)]
struct Tally {
    snapped: usize,
    by_local_name: usize,
    unwrapped: usize,
}

struct TierResult {
    exact: bool,
    ordered: bool,
    f1: f64,
    precision: f64,
    recall: f64,
    matched: usize,
    snapped: usize,
    by_local_name: usize,
    unwrapped: usize,
}

/// One answer set against one key: what both tiers compare.
struct Comparison<'a> {
    key: &'a Table,
    answer: &'a Table,
    context: &'a KeyContext,
    columns: &'a Columns,
    options: &'a ScoreOptions,
}

impl Comparison<'_> {
    /// Compares the answer's rows with the key's in one tier (`normalized`
    /// or strict), as multisets and, for the ordered verdict, as sequences.
    fn tier(&self, normalized: bool) -> TierResult {
        let Comparison {
            key,
            answer,
            context,
            columns,
            options,
        } = *self;
        let mut tally = Tally::default();
        let permutation = match columns {
            Columns::ByName(permutation) => Some(permutation.as_slice()),
            Columns::SortedTuple => None,
        };
        // Key rows keep their own column order when matching by name.
        let identity: Vec<usize> = (0..key.columns.len()).collect();
        let key_order = permutation.map(|_| identity.as_slice());
        let by_name = permutation.is_some();
        let key_rows: Vec<Vec<String>> = key
            .rows
            .iter()
            .map(|row| {
                let cells = row
                    .iter()
                    .enumerate()
                    .map(|(k, c)| {
                        context.key_cell(c, if by_name { k } else { 0 }, normalized, options)
                    })
                    .collect();
                arrange(cells, key_order)
            })
            .collect();
        // The key column each answer column is matched against, by name.
        let mut key_column: Vec<Option<usize>> = vec![None; answer.columns.len()];
        if let Some(permutation) = permutation {
            for (k, &a) in permutation.iter().enumerate() {
                key_column[a] = Some(k);
            }
        }
        let answer_rows: Vec<Vec<String>> = answer
            .rows
            .iter()
            .map(|row| {
                let cells = row
                    .iter()
                    .zip(&key_column)
                    .map(|(c, &k)| {
                        context.answer_cell(c, k.unwrap_or(0), normalized, options, &mut tally)
                    })
                    .collect();
                arrange(cells, permutation)
            })
            .collect();

        let mut counts: HashMap<&[String], isize> = HashMap::default();
        for row in &key_rows {
            *counts.entry(row.as_slice()).or_default() += 1;
        }
        let mut matched = 0usize;
        for row in &answer_rows {
            if let Some(n) = counts.get_mut(row.as_slice())
                && *n > 0
            {
                *n -= 1;
                matched += 1;
            }
        }
        let exact = matched == key_rows.len() && matched == answer_rows.len();
        let ordered = exact && key_rows == answer_rows;
        let (precision, recall, f1) = f1_parts(matched, answer_rows.len(), key_rows.len());
        TierResult {
            exact,
            ordered,
            f1,
            precision,
            recall,
            matched,
            snapped: tally.snapped,
            by_local_name: tally.by_local_name,
            unwrapped: tally.unwrapped,
        }
    }
}

/// Puts a row's cells in comparison order: the key's column order through
/// `permutation`, or sorted when there is none.
fn arrange(mut cells: Vec<String>, permutation: Option<&[usize]>) -> Vec<String> {
    match permutation {
        Some(permutation) => permutation
            .iter()
            .map(|&i| std::mem::take(&mut cells[i]))
            .collect(),
        None => {
            cells.sort();
            cells
        }
    }
}
