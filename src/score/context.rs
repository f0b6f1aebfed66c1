//! What the answer key alone decides (the guards, and per group of key
//! columns the values answer cells may snap or resolve onto), and the
//! canonical value of one cell in each tier (`docs/SCORING.md`, "Cells").
//!
//! Nothing here holds a `String` per cell: key texts are borrowed from the
//! table they are in, canonical numbers are written into one text, and a
//! cell's canonical values are [`Val`]s, borrowed or in a row's scratch
//! text.

use std::borrow::Cow;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::number::{self, Decimal};
use super::{ScoreOptions, cell};
use crate::table::Rows;

/// Index of the strict tier in a pair of canonical values.
pub(super) const STRICT: usize = 0;
/// Index of the normalized tier in a pair of canonical values.
pub(super) const NORMALIZED: usize = 1;

/// A canonical value: text borrowed from a table or from the key's
/// context, or a byte range of the scratch text of the row it belongs to.
#[derive(Debug, Clone, Copy)]
pub(super) enum Val<'v> {
    Text(&'v str),
    Scratch(u32, u32),
}

impl<'v> Val<'v> {
    /// The value's text, given its row's scratch text.
    pub(super) fn resolve<'s>(self, scratch: &'s str) -> &'s str
    where
        'v: 's,
    {
        match self {
            Val::Text(text) => text,
            Val::Scratch(start, end) => scratch
                .get(start as usize..end as usize)
                .unwrap_or_default(),
        }
    }

    /// True when both are the very same text (not merely equal).
    pub(super) fn is(self, other: Val<'_>) -> bool {
        match (self, other) {
            (Val::Text(a), Val::Text(b)) => std::ptr::eq(a, b),
            (Val::Scratch(a, b), Val::Scratch(c, d)) => (a, b) == (c, d),
            _ => false,
        }
    }
}

/// Appends `text` to `scratch`, as a value.
fn push<'x>(scratch: &mut String, text: &str) -> Val<'x> {
    let start = scratch.len() as u32;
    scratch.push_str(text);
    Val::Scratch(start, scratch.len() as u32)
}

/// `text` as a value: borrowed when it is.
fn whole<'x>(text: &Cow<'x, str>, scratch: &mut String) -> Val<'x> {
    match text {
        Cow::Borrowed(t) => Val::Text(t),
        Cow::Owned(t) => push(scratch, t),
    }
}

/// The last `len` bytes of `text` (a suffix found in it), as a value.
fn suffix<'x>(text: &Cow<'x, str>, len: usize, scratch: &mut String) -> Val<'x> {
    let at = text.len().saturating_sub(len);
    match text {
        Cow::Borrowed(t) => Val::Text(t.get(at..).unwrap_or_default()),
        Cow::Owned(t) => push(scratch, t.get(at..).unwrap_or_default()),
    }
}

/// A copy in `scratch` of a value that borrows what is about to go.
fn detach<'v>(value: Val<'_>, scratch: &mut String) -> Val<'v> {
    match value {
        Val::Text(text) => push(scratch, text),
        Val::Scratch(start, end) => Val::Scratch(start, end),
    }
}

/// A key cell trimmed and without literal or IRI syntax, borrowed from the
/// table wherever the cell is.
fn unwrapped<'v>(cell: &Cow<'v, str>) -> Cow<'v, str> {
    match cell {
        Cow::Borrowed(text) => cell::unwrap_syntax(text.trim()),
        Cow::Owned(text) => Cow::Owned(cell::unwrap_syntax(text.trim()).into_owned()),
    }
}

/// A number's value as the nearest `f64`, for tolerance comparisons.
fn approx(text: &str) -> f64 {
    text.parse::<f64>()
        .unwrap_or_else(|_| Decimal::parse(text).map_or(f64::NAN, |d| d.to_f64()))
}

/// Key IRIs by local name, within one group: the first IRI seen under each.
#[derive(Default)]
pub(super) struct LocalNames<'v> {
    borrowed: HashMap<&'v str, &'v str>,
    /// Names of IRIs that are not text of the table as written (a literal
    /// with escapes, a quoted CSV field with a doubled quote): rare.
    owned: HashMap<String, String>,
    /// Bit `b` is set when some local name starts with byte `b`: most
    /// cells that are not a local name are told so without hashing.
    first_bytes: [u64; 4],
}

impl<'v> LocalNames<'v> {
    pub(super) fn is_empty(&self) -> bool {
        self.borrowed.is_empty() && self.owned.is_empty()
    }

    fn might_hold(&self, local: &str) -> bool {
        local
            .as_bytes()
            .first()
            .is_some_and(|&b| self.first_bytes[usize::from(b >> 6)] & (1 << (b & 63)) != 0)
    }

    /// The key IRI recorded under `local`.
    pub(super) fn get(&self, local: &str) -> Option<&str> {
        if !self.might_hold(local) {
            return None;
        }
        self.borrowed
            .get(local)
            .copied()
            .or_else(|| self.owned.get(local).map(String::as_str))
    }

    /// Records `iri` under `local` unless an IRI is recorded already;
    /// true when that IRI differs (two key IRIs share the local name).
    /// `rows` sizes the table at its first entry.
    fn insert_first(&mut self, local: Cow<'v, str>, iri: Cow<'v, str>, rows: usize) -> bool {
        if !self.owned.is_empty()
            && let Some(existing) = self.owned.get(&*local)
        {
            return *existing != iri;
        }
        if let Some(&b) = local.as_bytes().first() {
            self.first_bytes[usize::from(b >> 6)] |= 1 << (b & 63);
        }
        match (local, iri) {
            (Cow::Borrowed(local), Cow::Borrowed(iri)) => {
                if self.borrowed.is_empty() {
                    self.borrowed.reserve(rows);
                }
                let existing = *self.borrowed.entry(local).or_insert(iri);
                existing != iri
            }
            (local, iri) => match self.borrowed.get(&*local) {
                Some(existing) => **existing != *iri,
                None => {
                    self.owned
                        .entry(local.into_owned())
                        .or_insert_with(|| iri.into_owned());
                    false
                }
            },
        }
    }

    fn clear(&mut self) {
        *self = LocalNames::default();
    }
}

/// What one group of key columns offers answer cells.
#[derive(Default)]
pub(super) struct Group<'v> {
    /// Key decimals (non-integral numbers) as `(value, canonical)`, sorted
    /// by value, one per distinct value; empty while snapping is withdrawn.
    decimals: Vec<(f64, &'v str)>,
    /// Canonical text of every numeric key cell: an answer number equal to
    /// one of them is taken at its word and never snapped.
    numbers: HashSet<&'v str>,
    /// Local name → key IRI.
    pub(super) local_names: LocalNames<'v>,
}

/// A key decimal where it was found, for the closeness guard.
struct KeyDecimal {
    value: f64,
    row: u32,
    column: u32,
    /// Its `f64` tells it from every other decimal
    /// ([`number::Reading::f64_is_exact_key`]).
    exact: bool,
}

/// What the key alone decides. A group is one key column when columns are
/// matched by name (a cell is only compared with its own column), and all
/// columns together for sorted tuples.
pub(super) struct KeyContext<'v> {
    pub(super) groups: Vec<Group<'v>>,
    /// Snapping is in force (not withdrawn for the question).
    pub(super) snapping: bool,
    /// IRI local-name reduction is in force (not withdrawn).
    pub(super) iri_normalization: bool,
    pub(super) notes: Vec<String>,
    by_name: bool,
    figures: u32,
    tol: f64,
}

/// The canonical numbers of the key's cells, in one text, for
/// [`KeyContext::with_numbers`] (only read while snapping is in force).
#[derive(Default)]
pub(super) struct KeyNumbers {
    text: String,
    /// `(group, start, end, value)`; the value is `None` for integers.
    entries: Vec<(u32, u32, u32, Option<f64>)>,
}

impl<'v> KeyContext<'v> {
    /// The guards over the key's cells: the closeness of its decimals
    /// (`docs/SCORING.md`, "Snapping withdrawn") and the injectivity of
    /// its IRIs' local names ("Injectivity guard"), with the local names.
    /// `by_name` says whether each key column is its own group.
    pub(super) fn read<K: Rows + ?Sized>(
        key: &'v K,
        by_name: bool,
        options: &ScoreOptions,
    ) -> KeyContext<'v> {
        let width = key.column_names().len();
        let count = if by_name { width.max(1) } else { 1 };
        let mut context = KeyContext {
            groups: (0..count).map(|_| Group::default()).collect(),
            snapping: true,
            iri_normalization: true,
            notes: Vec::new(),
            by_name,
            figures: options.significant_figures,
            tol: options.numeric_rel_tol,
        };
        let mut decimals = Vec::new();
        let mut conflict = false;
        // Groups holding both IRIs and other values: only there can a
        // local name also be a plain key value.
        let mut kinds = vec![(false, false); count];
        let mut cells = Vec::new();
        let rows = key.row_count();
        for row in 0..rows {
            key.row_into(row, &mut cells);
            for (column, text) in cells.iter().enumerate() {
                let g = context.group_of(column);
                let value = unwrapped(text);
                if let Some(reading) = number::read(&value) {
                    kinds[g].1 = true;
                    if !reading.is_integral() {
                        let value = approx(&value);
                        decimals.push(KeyDecimal {
                            value,
                            row: row as u32,
                            column: column as u32,
                            exact: reading.f64_is_exact_key(value),
                        });
                    }
                    continue;
                }
                if !cell::is_absolute_iri(&value) {
                    kinds[g].1 = true;
                    continue;
                }
                kinds[g].0 = true;
                let Some(local) = cell::local_name(&value) else {
                    continue;
                };
                let local = match &value {
                    Cow::Borrowed(v) => {
                        Cow::Borrowed(v.get(v.len() - local.len()..).unwrap_or_default())
                    }
                    Cow::Owned(_) => Cow::Owned(local.to_string()),
                };
                conflict |= context.groups[g]
                    .local_names
                    .insert_first(local, value, rows);
            }
        }
        context.check_closeness(key, decimals);
        let mixed: Vec<bool> = kinds.iter().map(|&(iri, plain)| iri && plain).collect();
        context.check_local_names(key, &mixed, conflict);
        context
    }

    /// The group key column `column` belongs to.
    fn group_of(&self, column: usize) -> usize {
        if self.by_name {
            column.min(self.groups.len() - 1)
        } else {
            0
        }
    }

    /// The closeness guard: two distinct key decimals within the tolerance
    /// of each other, adjacent in the order of their values (ties by
    /// text), withdraw snapping for the question; the note names the text
    /// each value first appears as.
    fn check_closeness<K: Rows + ?Sized>(&mut self, key: &K, mut decimals: Vec<KeyDecimal>) {
        decimals.sort_unstable_by(|a, b| {
            a.value
                .total_cmp(&b.value)
                .then(a.row.cmp(&b.row))
                .then(a.column.cmp(&b.column))
        });
        let mut previous: Option<(f64, Spot)> = None;
        let mut start = 0;
        while start < decimals.len() {
            let value = decimals[start].value;
            let end = start
                + decimals[start..]
                    .iter()
                    .take_while(|d| d.value.total_cmp(&value).is_eq())
                    .count();
            let run = &decimals[start..end];
            start = end;
            let distinct: Vec<Spot> = if run.iter().all(|d| d.exact) {
                vec![Spot::At(run[0].row, run[0].column)]
            } else {
                distinct_texts(key, run)
            };
            for spot in distinct {
                if let Some((before, first)) = &previous
                    && (value - before).abs() <= self.tol * before.abs().max(value.abs())
                {
                    self.snapping = false;
                    self.notes.push(format!(
                        "decimal snapping withdrawn: the key's own values {} and {} are within relative {} of each other",
                        first.text(key),
                        spot.text(key),
                        self.tol
                    ));
                    return;
                }
                previous = Some((value, spot));
            }
        }
    }

    /// IRI local names, and the injectivity guard: within a group, two
    /// distinct key IRIs may not share a local name, and no IRI's local
    /// name may equal another key value of the group (else a bare name
    /// could stand for either). Either withdraws it for the question.
    /// `mixed` marks the groups holding both IRIs and other values;
    /// `conflict` says two key IRIs share a local name.
    fn check_local_names<K: Rows + ?Sized>(&mut self, key: &K, mixed: &[bool], conflict: bool) {
        let mut plain: Vec<HashSet<String>> =
            (0..self.groups.len()).map(|_| HashSet::default()).collect();
        let mut any = false;
        if mixed.iter().any(|&m| m) {
            let mut cells = Vec::new();
            for row in 0..key.row_count() {
                key.row_into(row, &mut cells);
                for (column, text) in cells.iter().enumerate() {
                    let g = self.group_of(column);
                    if !mixed[g] {
                        continue;
                    }
                    let value = unwrapped(text);
                    if cell::is_absolute_iri(&value) {
                        continue;
                    }
                    let value = cell::nfc(&value);
                    if self.groups[g].local_names.get(&value).is_some() {
                        plain[g].insert(value.into_owned());
                        any = true;
                    }
                }
            }
        }
        if !conflict && !any {
            return;
        }
        if let Some(why) = self.first_collision(key, &plain) {
            self.iri_normalization = false;
            self.notes.push(format!(
                "IRI normalization withdrawn: {why}, so IRIs are compared in full"
            ));
            for group in &mut self.groups {
                group.local_names.clear();
            }
        }
    }

    /// The first key IRI, in row order, whose local name is a plain key
    /// value of its group (`plain`: those that are) or is shared with an
    /// earlier key IRI, and why.
    fn first_collision<K: Rows + ?Sized>(
        &self,
        key: &K,
        plain: &[HashSet<String>],
    ) -> Option<String> {
        let mut cells = Vec::new();
        for row in 0..key.row_count() {
            key.row_into(row, &mut cells);
            for (column, text) in cells.iter().enumerate() {
                let value = unwrapped(text);
                if !cell::is_absolute_iri(&value) {
                    continue;
                }
                let Some(local) = cell::local_name(&value) else {
                    continue;
                };
                let g = self.group_of(column);
                if plain[g].contains(local) {
                    return Some(format!(
                        "the local name of key IRI {value} is also the key value '{local}'"
                    ));
                }
                match self.groups[g].local_names.get(local) {
                    Some(existing) if *existing != *value => {
                        let (first, second) = if *existing < *value {
                            (existing, &*value)
                        } else {
                            (&*value, existing)
                        };
                        return Some(format!(
                            "key IRIs {first} and {second} share the local name '{local}'"
                        ));
                    }
                    _ => {}
                }
            }
        }
        None
    }

    /// With the key's numbers: what snapping needs (targets and the values
    /// taken at their word), per group.
    pub(super) fn with_numbers(mut self, numbers: &'v KeyNumbers) -> KeyContext<'v> {
        for &(g, start, end, value) in &numbers.entries {
            let Some(text) = numbers.text.get(start as usize..end as usize) else {
                continue;
            };
            let group = &mut self.groups[g as usize];
            group.numbers.insert(text);
            if let Some(value) = value {
                group.decimals.push((value, text));
            }
        }
        for group in &mut self.groups {
            group
                .decimals
                .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)));
            // While snapping is in force, equal values are one decimal.
            group.decimals.dedup_by(|a, b| a.0.total_cmp(&b.0).is_eq());
        }
        self
    }

    /// Canonical values of a key cell of `group` as `[strict, normalized]`:
    /// in the normalized tier a key IRI is its local name (while that is
    /// injective), and text is in Unicode NFC.
    pub(super) fn key_cell(
        &self,
        text: &Cow<'v, str>,
        group: usize,
        scratch: &mut String,
    ) -> [Val<'v>; 2] {
        match text {
            Cow::Borrowed(text) => self.key_cell_in(text, group, scratch),
            Cow::Owned(text) => self
                .key_cell_in(text, group, scratch)
                .map(|v| detach(v, scratch)),
        }
    }

    fn key_cell_in<'x>(&self, text: &'x str, group: usize, scratch: &mut String) -> [Val<'x>; 2]
    where
        'v: 'x,
    {
        let t = text.trim();
        let start = scratch.len() as u32;
        let strict = match number::push_canonical_at(t, self.figures, scratch) {
            Some(_) => Val::Scratch(start, scratch.len() as u32),
            None => Val::Text(t),
        };
        let value = cell::unwrap_syntax(t);
        // Every absolute key IRI with a local name is recorded under it in
        // its group (`read`), unless the reduction is withdrawn: then no
        // group holds any.
        if !self.groups[group].local_names.is_empty()
            && cell::is_absolute_iri(&value)
            && let Some(local) = cell::local_name(&value)
        {
            let len = local.len();
            return [strict, suffix(&value, len, scratch)];
        }
        if matches!(value, Cow::Borrowed(v) if v.len() == t.len()) {
            // As written: the strict tier's number, or the text in NFC.
            if let Val::Scratch(..) = strict {
                return [strict, strict];
            }
            return match cell::nfc(t) {
                Cow::Borrowed(_) => [strict, strict],
                Cow::Owned(n) => [strict, push(scratch, &n)],
            };
        }
        let start = scratch.len() as u32;
        if number::push_canonical_at(&value, self.figures, scratch).is_some() {
            return [strict, Val::Scratch(start, scratch.len() as u32)];
        }
        let normalized = match cell::nfc(&value) {
            Cow::Borrowed(_) => whole(&value, scratch),
            Cow::Owned(n) => push(scratch, &n),
        };
        [strict, normalized]
    }

    /// Canonical values of an answer cell compared against `group`, as
    /// `[strict, normalized]`, with what adjusted it (normalized tier)
    /// counted in `tally`.
    pub(super) fn answer_cell(
        &self,
        text: &Cow<'v, str>,
        group: usize,
        scratch: &mut String,
        tally: &mut Tally,
    ) -> [Val<'v>; 2] {
        match text {
            Cow::Borrowed(text) => self.answer_cell_in(text, group, scratch, tally),
            Cow::Owned(text) => self
                .answer_cell_in(text, group, scratch, tally)
                .map(|v| detach(v, scratch)),
        }
    }

    fn answer_cell_in<'x>(
        &self,
        text: &'x str,
        group: usize,
        scratch: &mut String,
        tally: &mut Tally,
    ) -> [Val<'x>; 2]
    where
        'v: 'x,
    {
        let t = text.trim();
        let g = &self.groups[group];
        let number = self.answer_number(t, g, scratch);
        let strict = number.map_or(Val::Text(t), |(v, _)| v);
        let value = cell::unwrap_syntax(t);
        let unchanged = *value == *t;
        if !unchanged {
            tally.unwrapped += 1;
        }
        // An answer cell naming a key IRI by its local name (in any of the
        // forms servers print) is that local name, like the key's IRI.
        if !g.local_names.is_empty()
            && let Some(local) = cell::local_name(&value)
            && let Some(iri) = g.local_names.get(local)
        {
            if *iri != *value {
                tally.by_local_name += 1;
            }
            let len = local.len();
            return [strict, suffix(&value, len, scratch)];
        }
        if unchanged {
            if let Some((v, snapped)) = number {
                tally.snapped += usize::from(snapped);
                return [strict, v];
            }
            return match cell::nfc(t) {
                Cow::Borrowed(_) => [strict, strict],
                Cow::Owned(n) => [strict, push(scratch, &n)],
            };
        }
        if let Some((v, snapped)) = self.answer_number(&value, g, scratch) {
            tally.snapped += usize::from(snapped);
            return [strict, v];
        }
        let normalized = match cell::nfc(&value) {
            Cow::Borrowed(_) => whole(&value, scratch),
            Cow::Owned(n) => push(scratch, &n),
        };
        [strict, normalized]
    }

    /// `text` read as an answer number of group `g`: its canonical value,
    /// or the key decimal it snaps onto (then `true`); `None` for text
    /// that is not a number.
    fn answer_number<'x>(
        &self,
        text: &str,
        g: &Group<'v>,
        scratch: &mut String,
    ) -> Option<(Val<'x>, bool)>
    where
        'v: 'x,
    {
        let start = scratch.len();
        number::push_canonical_at(text, self.figures, scratch)?;
        if self.snapping
            && !g.numbers.contains(&scratch[start..])
            && let Some(target) = snap_target(&g.decimals, approx(text), self.tol)
        {
            scratch.truncate(start);
            return Some((Val::Text(target), true));
        }
        Some((Val::Scratch(start as u32, scratch.len() as u32), false))
    }
}

impl KeyNumbers {
    /// The canonical text of every numeric key cell, with its group and,
    /// for a decimal, its value.
    pub(super) fn read<K: Rows + ?Sized>(key: &K, context: &KeyContext<'_>) -> KeyNumbers {
        let mut numbers = KeyNumbers::default();
        let mut cells = Vec::new();
        for row in 0..key.row_count() {
            key.row_into(row, &mut cells);
            for (column, text) in cells.iter().enumerate() {
                let value = unwrapped(text);
                let Some(reading) = number::read(&value) else {
                    continue;
                };
                let decimal = (!reading.is_integral()).then(|| approx(&value));
                let start = numbers.text.len() as u32;
                reading.push_canonical_at(context.figures, &mut numbers.text);
                numbers.entries.push((
                    context.group_of(column) as u32,
                    start,
                    numbers.text.len() as u32,
                    decimal,
                ));
            }
        }
        numbers
    }
}

/// Where a key decimal's text is: a cell, or (for values told apart by
/// their exact digits) the text itself.
enum Spot {
    At(u32, u32),
    Text(String),
}

impl Spot {
    fn text<K: Rows + ?Sized>(&self, key: &K) -> String {
        match self {
            Spot::At(row, column) => {
                let mut cells = Vec::new();
                key.row_into(*row as usize, &mut cells);
                cells
                    .get(*column as usize)
                    .map(|c| unwrapped(c).into_owned())
                    .unwrap_or_default()
            }
            Spot::Text(text) => text.clone(),
        }
    }
}

/// The distinct values among key decimals of one `f64` (a run of the
/// sorted decimals), each as the text it first appears as (the run is in
/// row order), ordered by that text.
fn distinct_texts<K: Rows + ?Sized>(key: &K, run: &[KeyDecimal]) -> Vec<Spot> {
    let mut seen: Vec<(String, String)> = Vec::new();
    for d in run {
        let text = Spot::At(d.row, d.column).text(key);
        let exact = Decimal::parse(&text)
            .map(|d| d.canonical())
            .unwrap_or_default();
        if !seen.iter().any(|(e, _)| *e == exact) {
            seen.push((exact, text));
        }
    }
    seen.sort_by(|a, b| a.1.cmp(&b.1));
    seen.into_iter().map(|(_, text)| Spot::Text(text)).collect()
}

/// The nearest key decimal within relative `tol` of `value`, if any (binary
/// search over the sorted decimals; the nearest is one of the two
/// neighbours of `value`'s insertion point).
fn snap_target<'v>(decimals: &[(f64, &'v str)], value: f64, tol: f64) -> Option<&'v str> {
    let at = decimals.partition_point(|(t, _)| *t < value);
    let mut best: Option<(f64, &'v str)> = None;
    for &(target, canonical) in decimals[at.saturating_sub(1)..].iter().take(2) {
        let distance = (value - target).abs();
        if distance <= tol * target.abs() && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, canonical));
        }
    }
    best.map(|(_, c)| c)
}

/// What adjusted answer cells in the normalized tier.
#[derive(Default, Debug, Clone, Copy)]
pub(super) struct Tally {
    pub(super) snapped: usize,
    pub(super) by_local_name: usize,
    pub(super) unwrapped: usize,
}

impl Tally {
    pub(super) fn add(&mut self, other: Tally) {
        self.snapped += other.snapped;
        self.by_local_name += other.by_local_name;
        self.unwrapped += other.unwrapped;
    }
}
