//! The answer's rows against the key's, in both tiers at once, as
//! multisets and (for the ordered verdict) as sequences (`docs/SCORING.md`,
//! "Rows").
//!
//! Each row's canonical values are hashed; key rows with equal hashes that
//! are equal (compared value by value, so a collision of hashes never
//! joins two rows) form one class with a count, and an answer row takes
//! one from the count of the class it equals. Nothing is kept per cell:
//! a row's values are computed when it is visited, and a class's
//! representative again when a row is compared with it.
//!
//! Memory is touched in batches: the table slots of a batch of rows, then
//! the representatives those slots name, are loaded before any is
//! compared, so the waits for memory overlap instead of adding up.

use std::borrow::Cow;

use rayon::prelude::*;

use super::ScoreOptions;
use super::context::{
    self, CHUNK, KeyContext, KeyNumbers, KeyScan, NORMALIZED, Place, STRICT, Tally, Val, hash, mix,
};
use crate::table::Rows;

/// Rows whose memory is loaded together.
const BATCH: usize = 16;

/// How answer cells line up with the key's.
#[derive(Clone, Copy)]
pub(super) enum Layout<'p> {
    /// `permutation[i]` is the answer column holding key column `i`.
    ByName(&'p [usize]),
    /// Each row is the multiset of its values; the answer's rows are read
    /// up to `answer_width` cells.
    SortedTuple { answer_width: usize },
}

/// What one tier found.
#[derive(Debug, Clone, Copy)]
pub(super) struct TierCount {
    /// Rows matched (the multiset intersection's size).
    pub(super) matched: usize,
    /// Every answer row equals the key row at its place (meaningful only
    /// when the rows are also equal as multisets, and when asked for).
    pub(super) in_order: bool,
}

/// What comparing found, with what the key decided.
pub(super) struct Outcome {
    /// `[strict, normalized]`.
    pub(super) counts: [TierCount; 2],
    /// What adjusted answer cells (normalized tier).
    pub(super) tally: Tally,
    pub(super) snapping: bool,
    pub(super) iri_normalization: bool,
    /// The guards' notes.
    pub(super) notes: Vec<String>,
}

/// One row's canonical values in both tiers.
#[derive(Default)]
struct Canon<'v> {
    cells: Vec<Cow<'v, str>>,
    scratch: String,
    values: [Vec<Val<'v>>; 2],
    hashes: [Vec<u64>; 2],
    /// Cell indices by (hash, text): the order sorted tuples compare in.
    order: [Vec<u32>; 2],
    /// Per cell, for a key row: the IRI its normalized value is the local
    /// name of. For an answer row: the cell's text when its normalized
    /// value is a local name taken without looking it up.
    named: Vec<Option<Val<'v>>>,
    /// The key row held, when it is one.
    key_row: Option<usize>,
    /// Key cells written in literal or IRI syntax.
    unwrapped: u16,
}

impl<'v> Canon<'v> {
    fn clear(&mut self) {
        self.unwrapped = 0;
        self.scratch.clear();
        for tier in [STRICT, NORMALIZED] {
            self.values[tier].clear();
            self.hashes[tier].clear();
            self.order[tier].clear();
        }
        self.named.clear();
        self.key_row = None;
    }

    fn push(&mut self, pair: [Val<'v>; 2], named: Option<Val<'v>>) {
        let strict = hash(pair[STRICT].resolve(&self.scratch));
        let normalized = if pair[NORMALIZED].is(pair[STRICT]) {
            strict
        } else {
            hash(pair[NORMALIZED].resolve(&self.scratch))
        };
        self.values[STRICT].push(pair[STRICT]);
        self.values[NORMALIZED].push(pair[NORMALIZED]);
        self.hashes[STRICT].push(strict);
        self.hashes[NORMALIZED].push(normalized);
        self.named.push(named);
    }

    /// Reads key row `index`; `reduce`: IRIs are read by local name; with
    /// a `scan`, what the guards need is gathered there.
    fn read_key<K: Rows + ?Sized>(
        &mut self,
        (key, index): (&'v K, usize),
        layout: Layout<'_>,
        (reduce, figures): (bool, u32),
        mut scan: Option<&mut KeyScan<'v>>,
    ) {
        self.clear();
        let mut cells = std::mem::take(&mut self.cells);
        key.row_into(index, &mut cells);
        let width = match layout {
            Layout::ByName(permutation) => permutation.len().min(cells.len()),
            Layout::SortedTuple { .. } => cells.len(),
        };
        let by_name = matches!(layout, Layout::ByName(_));
        for (column, text) in cells.iter().take(width).enumerate() {
            let group = if by_name { column } else { 0 };
            let place = scan.as_deref_mut().map(|scan| Place {
                scan,
                row: index as u32,
                column: column as u32,
            });
            let read = context::key_cell(text, group, (reduce, figures), &mut self.scratch, place);
            self.unwrapped = self.unwrapped.saturating_add(u16::from(read.unwrapped));
            self.push(read.values, read.iri);
        }
        self.cells = cells;
        self.key_row = Some(index);
    }

    /// Reads answer row `index`, in the key's column order when columns
    /// are matched by name; `speculate` as in [`KeyContext::answer_cell`].
    fn read_answer<A: Rows + ?Sized>(
        &mut self,
        (answer, index): (&'v A, usize),
        context: &KeyContext<'v>,
        layout: Layout<'_>,
        speculate: bool,
        tally: &mut Tally,
    ) {
        self.clear();
        let mut cells = std::mem::take(&mut self.cells);
        answer.row_into(index, &mut cells);
        match layout {
            Layout::ByName(permutation) => {
                for (k, &a) in permutation.iter().enumerate() {
                    if let Some(text) = cells.get(a) {
                        let (pair, named) =
                            context.answer_cell(text, k, speculate, &mut self.scratch, tally);
                        self.push(pair, named);
                    }
                }
            }
            Layout::SortedTuple { answer_width } => {
                for text in cells.iter().take(answer_width) {
                    let (pair, named) =
                        context.answer_cell(text, 0, speculate, &mut self.scratch, tally);
                    self.push(pair, named);
                }
            }
        }
        self.cells = cells;
    }

    /// The row's hash in `tier`: of its values in order, or of their
    /// multiset for sorted tuples.
    fn hash(&self, tier: usize, sorted: bool) -> u64 {
        let hashes = &self.hashes[tier];
        if sorted {
            hashes
                .iter()
                .fold(mix(hashes.len() as u64 ^ 0x5157), |acc, &h| {
                    acc.wrapping_add(mix(h))
                })
        } else {
            hashes
                .iter()
                .fold(mix(hashes.len() as u64), |acc, &h| mix(acc ^ h))
        }
    }

    fn text(&self, tier: usize, i: usize) -> &str {
        self.values[tier][i].resolve(&self.scratch)
    }

    /// Sorts the cell order of `tier` by (hash, text), once.
    fn sort(&mut self, tier: usize) {
        if self.order[tier].len() == self.values[tier].len() {
            return;
        }
        let mut order: Vec<u32> = (0..self.values[tier].len() as u32).collect();
        order.sort_unstable_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            self.hashes[tier][a]
                .cmp(&self.hashes[tier][b])
                .then_with(|| self.text(tier, a).cmp(self.text(tier, b)))
        });
        self.order[tier] = order;
    }

    /// The cell of `other` that cell `i` of this row was compared with in
    /// the last [`same_row`] of `tier` that found them equal.
    fn partner(&self, other: &Canon<'_>, tier: usize, i: usize, sorted: bool) -> Option<usize> {
        if !sorted {
            return Some(i);
        }
        let k = self.order[tier].iter().position(|&o| o as usize == i)?;
        other.order[tier].get(k).map(|&o| o as usize)
    }
}

/// A key row's cells as written.
#[derive(Default)]
struct Raw<'v> {
    cells: Vec<Cow<'v, str>>,
    row: Option<usize>,
}

/// True when rows `a` and `b` are equal in `tier`: value by value, or as
/// multisets of values for sorted tuples.
fn same_row(a: &mut Canon<'_>, b: &mut Canon<'_>, tier: usize, sorted: bool) -> bool {
    let n = a.values[tier].len();
    if n != b.values[tier].len() {
        return false;
    }
    if !sorted {
        return (0..n)
            .all(|i| a.hashes[tier][i] == b.hashes[tier][i] && a.text(tier, i) == b.text(tier, i));
    }
    a.sort(tier);
    b.sort(tier);
    (0..n).all(|k| {
        let (i, j) = (a.order[tier][k] as usize, b.order[tier][k] as usize);
        a.hashes[tier][i] == b.hashes[tier][j] && a.text(tier, i) == b.text(tier, j)
    })
}

/// What the key's reading keeps of each row.
#[derive(Clone, Copy, Default)]
struct KeyRow {
    /// The row's hashes, `[strict, normalized]`.
    hashes: [u64; 2],
    /// The hash of its text as written (0 when it was not read in place);
    /// for sorted tuples, of the multiset of its cells trimmed
    /// ([`texts_hash`]).
    line: u64,
}

impl KeyRow {
    fn of<K: Rows + ?Sized>(key: &K, index: usize, canon: &Canon<'_>, sorted: bool) -> KeyRow {
        KeyRow {
            hashes: [canon.hash(STRICT, sorted), canon.hash(NORMALIZED, sorted)],
            line: if sorted {
                if canon.cells.iter().any(|c| matches!(c, Cow::Owned(_))) {
                    0
                } else {
                    // A cell whose strict value is its text trimmed (not a
                    // number written otherwise) was hashed as that text.
                    let hashes = canon.cells.iter().enumerate().map(|(i, cell)| {
                        let text = super::cell::trim(cell);
                        match canon.values[STRICT].get(i) {
                            Some(Val::Text(v)) if std::ptr::eq(*v, text) => canon.hashes[STRICT][i],
                            _ => hash(text),
                        }
                    });
                    multiset_of(hashes)
                }
            } else {
                key.row_text(index).map_or(0, hash)
            },
        }
    }
}

/// The hash of the multiset of `cells`' texts, trimmed: equal for two
/// rows holding the same texts in any order (a sorted tuple's row as
/// written, before any cell is canonicalized). The one rule both
/// [`texts_hash`] and [`Fields::hash`] apply, so they always agree;
/// [`KeyRow::of`] applies it through [`multiset_of`], reusing a cell's
/// strict hash where that is the hash of the same text.
fn multiset_hash<'a>(cells: impl Iterator<Item = &'a str>) -> u64 {
    multiset_of(cells.map(|cell| hash(super::cell::trim(cell))))
}

/// [`multiset_hash`] from the hashes of the cells' texts, trimmed.
fn multiset_of(hashes: impl Iterator<Item = u64>) -> u64 {
    let (n, sum) = hashes.fold((0u64, 0u64), |(n, sum), h| {
        (n + 1, sum.wrapping_add(mix(h)))
    });
    mix(n ^ 0x7e57).wrapping_add(sum)
}

/// [`multiset_hash`] of a row split into cells.
fn texts_hash(cells: &[Cow<'_, str>]) -> u64 {
    multiset_hash(cells.iter().map(|c| c.as_ref()))
}

/// A row's cells, trimmed, on the stack: what [`texts_hash`] hashes and
/// [`same_texts`] compares. For a row read in place it is taken once and
/// kept for the confirmation of the key row its hash finds (issue 26,
/// section 4: such a row is split once, never into a vector).
struct Fields<'a> {
    cells: [&'a str; FIELDS],
    len: usize,
}

/// The same texts in any order: a multiset comparison of the cells in use
/// (neither row is sorted: for a row this short, matching each cell with
/// an unmatched equal one of the other is fewer comparisons than sorting
/// both, and most pairs of texts differ in length; `scripts/bench-score`).
impl PartialEq for Fields<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.holds_all(other.cells[..other.len].iter().copied())
    }
}

/// The widest row [`Fields`] holds; a wider one is compared in vectors.
const FIELDS: usize = 16;

impl<'a> Fields<'a> {
    /// `cells`, trimmed; `None` when there are more than [`FIELDS`].
    fn collect(cells: impl Iterator<Item = &'a str>) -> Option<Fields<'a>> {
        let mut fields = Fields {
            cells: [""; FIELDS],
            len: 0,
        };
        for cell in cells {
            *fields.cells.get_mut(fields.len)? = super::cell::trim(cell);
            fields.len += 1;
        }
        Some(fields)
    }

    /// The first `width` cells of `line` (a row's text as written);
    /// `None` when it holds a quote (it is then split as
    /// [`Rows::row_into`] does) or more than [`FIELDS`] cells are wanted.
    fn of(line: &'a str, width: usize) -> Option<Fields<'a>> {
        if line.as_bytes().contains(&b'"') {
            return None;
        }
        Fields::collect(crate::table::plain_fields(line).take(width))
    }

    /// [`texts_hash`] of the row.
    fn hash(&self) -> u64 {
        multiset_hash(self.cells[..self.len].iter().copied())
    }

    /// True when `cells`, trimmed, are this row's cells in some order
    /// (as many, each matched with its own equal cell).
    fn holds_all<'b>(&self, cells: impl Iterator<Item = &'b str>) -> bool {
        let mine = &self.cells[..self.len];
        let mut matched = 0u32;
        let mut n = 0;
        for cell in cells {
            let cell = super::cell::trim(cell);
            let free = mine
                .iter()
                .enumerate()
                .position(|(j, c)| matched & (1 << j) == 0 && *c == cell);
            let Some(j) = free else {
                return false;
            };
            matched |= 1 << j;
            n += 1;
        }
        n == self.len
    }

    /// [`same_texts`] of the row and a key row's text as written; `None`
    /// when that holds a quote.
    fn same_as(&self, key_line: &str) -> Option<bool> {
        if key_line.as_bytes().contains(&b'"') {
            return None;
        }
        Some(self.holds_all(crate::table::plain_fields(key_line)))
    }
}

/// True when `a` and `b` hold the same texts, trimmed, in any order. A
/// cell unescaped from a quoted field (owned) is not compared: the rows
/// are then left to the comparison of their canonical values.
fn same_texts(a: &[Cow<'_, str>], b: &[Cow<'_, str>]) -> bool {
    if a.len() != b.len() || a.iter().chain(b).any(|c| matches!(c, Cow::Owned(_))) {
        return false;
    }
    if a.len() <= FIELDS {
        return Fields::collect(a.iter().map(|c| c.as_ref()))
            == Fields::collect(b.iter().map(|c| c.as_ref()));
    }
    fn sorted<'a>(cells: &'a [Cow<'_, str>]) -> Vec<&'a str> {
        let mut texts: Vec<&str> = cells.iter().map(|c| super::cell::trim(c)).collect();
        texts.sort_unstable();
        texts
    }
    sorted(a) == sorted(b)
}

/// What reading the key keeps: per row its [`KeyRow`] and its cells
/// written in literal or IRI syntax.
struct KeyRows {
    rows: Vec<KeyRow>,
    unwrapped: Vec<u16>,
}

/// The size of an open-addressing table for `n` entries: a power of two,
/// never more than seven eighths full.
fn table_size(n: usize) -> usize {
    (n + n / 7 + 1).next_power_of_two().max(8)
}

/// The part of a hash a table slot keeps to tell entries apart (the
/// bits the slot's position is not taken from); an equal part is only a
/// candidate, always compared.
fn tag(hash: u64) -> u32 {
    (hash >> 32) as u32
}

/// The key's rows by their text as written: an open-addressing table of
/// `(tag, row)`.
struct Lines {
    slots: Vec<(u32, u32)>,
}

impl Lines {
    /// The table of the key's rows (`rows`, as read; `same` says whether
    /// two are of one text). Rows of one text are one entry, the first:
    /// they are in the same classes, and a table holding each would make
    /// every insertion walk past all the others (quadratic in a key whose
    /// rows repeat; issue 24 red team). A row of `line` 0 (not read in
    /// place, or a sorted tuple with an unescaped cell) is left out.
    fn new(rows: &[KeyRow], mut same: impl FnMut(usize, usize) -> bool) -> Lines {
        let size = table_size(rows.len());
        let mut lines = Lines {
            slots: vec![(0, EMPTY); size],
        };
        let mask = size - 1;
        for (j, row) in rows.iter().enumerate() {
            let hash = row.line;
            if hash == 0 {
                continue;
            }
            let mut i = hash as usize & mask;
            let mut seen = false;
            while lines.slots[i].1 != EMPTY {
                let (t, other) = lines.slots[i];
                if t == tag(hash) && same(other as usize, j) {
                    seen = true;
                    break;
                }
                i = (i + 1) & mask;
            }
            if !seen {
                lines.slots[i] = (tag(hash), j as u32);
            }
        }
        lines
    }

    fn start(&self, hash: u64) -> usize {
        hash as usize & (self.slots.len() - 1)
    }

    /// A key row of hash `hash` that `is` the text looked for, if any.
    fn find(&self, hash: u64, mut is: impl FnMut(usize) -> bool) -> Option<usize> {
        let mut i = self.start(hash);
        loop {
            let (t, row) = self.slots[i];
            if row == EMPTY {
                return None;
            }
            if t == tag(hash) && is(row as usize) {
                return Some(row as usize);
            }
            i = (i + 1) & (self.slots.len() - 1);
        }
    }
}

/// A slot of [`Classes`]: a class of equal key rows.
#[derive(Clone, Copy)]
struct Slot {
    /// The class's row hash ([`tag`]).
    tag: u32,
    /// The representative key row, or [`EMPTY`].
    rep: u32,
    /// Rows of the class not yet matched.
    left: u32,
}

const EMPTY: u32 = u32::MAX;

/// No class: the answer row equals no key row.
const NONE: u32 = u32::MAX;

/// Key rows of one tier in classes of equal rows: an open-addressing
/// table of slots (a class is its slot's index).
struct Classes {
    slots: Vec<Slot>,
    /// The class of each key row.
    of_key: Vec<u32>,
}

impl Classes {
    fn new(rows: usize) -> Classes {
        Classes {
            slots: vec![
                Slot {
                    tag: 0,
                    rep: EMPTY,
                    left: 0,
                };
                table_size(rows)
            ],
            of_key: Vec::new(),
        }
    }

    fn start(&self, hash: u64) -> usize {
        hash as usize & (self.slots.len() - 1)
    }

    /// The first class with `hash` and its representative, if any.
    fn candidate(&self, hash: u64) -> Option<(u32, u32)> {
        let mut i = self.start(hash);
        loop {
            let slot = self.slots[i];
            if slot.rep == EMPTY {
                return None;
            }
            if slot.tag == tag(hash) {
                return Some((i as u32, slot.rep));
            }
            i = (i + 1) & (self.slots.len() - 1);
        }
    }
}

/// What the comparison reads: both tables and how their cells line up.
struct Sides<'v, 'p, K: ?Sized, A: ?Sized> {
    key: &'v K,
    answer: &'v A,
    context: &'p KeyContext<'v>,
    layout: Layout<'p>,
    sorted: bool,
}

/// Compares `answer`'s rows with `key`'s in both tiers. `by_name` says
/// whether each key column is its own group (columns matched by name).
pub(super) fn compare<K, A>(
    key: &K,
    answer: &A,
    by_name: bool,
    layout: Layout<'_>,
    options: &ScoreOptions,
) -> Outcome
where
    K: Rows + ?Sized + Sync,
    A: Rows + ?Sized + Sync,
{
    let sorted = matches!(layout, Layout::SortedTuple { .. });
    let (context, mut key_rows, reduced) = read_key(key, by_name, layout, options);
    let numbers = if context.snapping {
        KeyNumbers::read(key, &context)
    } else {
        KeyNumbers::default()
    };
    let context = context.with_numbers(&numbers);
    if reduced && !context.iri_normalization {
        // The key's IRIs were read by local name before the guard
        // withdrew that: their rows are hashed again.
        key_rows.rows = map_rows(key.row_count(), |canon: &mut Canon, i| {
            canon.read_key((key, i), layout, (false, context.figures), None);
            KeyRow::of(key, i, canon, sorted)
        });
    }
    let sides = Sides {
        key,
        answer,
        context: &context,
        layout,
        sorted,
    };
    let mut classes = sides.classes(&key_rows.rows);
    let verbatim = sides.verbatim(key_rows);
    let (classed, tally) = sides.class_answers(&classes, verbatim.as_ref());
    let mut counts = [TierCount {
        matched: 0,
        in_order: true,
    }; 2];
    for (i, pair) in classed.iter().enumerate() {
        for tier in [STRICT, NORMALIZED] {
            let class = pair[tier];
            let table = &mut classes[tier];
            if class != NONE {
                let left = &mut table.slots[class as usize].left;
                if *left > 0 {
                    *left -= 1;
                    counts[tier].matched += 1;
                }
            }
            counts[tier].in_order &= class != NONE && table.of_key.get(i) == Some(&class);
        }
    }
    Outcome {
        counts,
        tally,
        snapping: context.snapping,
        iri_normalization: context.iri_normalization,
        notes: context.notes.clone(),
    }
}

/// The key's guards and notes alone (for an answer that could not be read).
pub(super) fn key_guards<K: Rows + ?Sized + Sync>(
    key: &K,
    options: &ScoreOptions,
) -> (bool, bool, Vec<String>) {
    let (context, _, _) = read_key(key, false, Layout::SortedTuple { answer_width: 0 }, options);
    (context.snapping, context.iri_normalization, context.notes)
}

/// Reads the key once: each row's hashes in both tiers (with IRIs read by
/// local name, as they are unless the guard withdraws it), and the guards
/// from what its cells showed. Also says whether any IRI was read by
/// local name.
fn read_key<'v, K: Rows + ?Sized + Sync>(
    key: &'v K,
    by_name: bool,
    layout: Layout<'_>,
    options: &ScoreOptions,
) -> (KeyContext<'v>, KeyRows, bool) {
    let sorted = matches!(layout, Layout::SortedTuple { .. });
    let groups = context::groups_of(key, by_name);
    let rows = key.row_count();
    let width = key.column_names().len();
    let figures = options.significant_figures;
    let mut read = KeyRows {
        rows: vec![KeyRow::default(); rows],
        unwrapped: vec![0; rows],
    };
    let scans: Vec<KeyScan<'v>> = read
        .rows
        .par_chunks_mut(CHUNK)
        .zip(read.unwrapped.par_chunks_mut(CHUNK))
        .enumerate()
        .map(|(c, (out, unwrapped))| {
            let mut scan = KeyScan::new(groups);
            scan.reserve(out.len() * width);
            let mut canon = Canon::default();
            for (k, (row, unwrapped)) in out.iter_mut().zip(unwrapped).enumerate() {
                let i = c * CHUNK + k;
                canon.read_key((key, i), layout, (true, figures), Some(&mut scan));
                *row = KeyRow::of(key, i, &canon, sorted);
                *unwrapped = canon.unwrapped;
            }
            scan
        })
        .collect();
    let reduced = scans.iter().any(|s| s.reduced_any);
    let context = KeyContext::finish(key, scans, by_name, options);
    (context, read, reduced)
}

/// `f` over rows `0..rows` in chunks (in parallel), results in order.
fn map_rows<'v, T: Send>(rows: usize, f: impl Fn(&mut Canon<'v>, usize) -> T + Sync) -> Vec<T> {
    let chunks: Vec<Vec<T>> = (0..rows.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut canon = Canon::default();
            (c * CHUNK..((c + 1) * CHUNK).min(rows))
                .map(|i| f(&mut canon, i))
                .collect()
        })
        .collect();
    let mut out = Vec::with_capacity(rows);
    for chunk in chunks {
        out.extend(chunk);
    }
    out
}

impl<'v, K: Rows + ?Sized + Sync, A: Rows + ?Sized + Sync> Sides<'v, '_, K, A> {
    fn read_key(&self, canon: &mut Canon<'v>, index: usize) {
        let reading = (self.context.iri_normalization, self.context.figures);
        canon.read_key((self.key, index), self.layout, reading, None);
    }

    /// The key's rows in classes, both tiers, from their hashes.
    fn classes(&self, rows: &[KeyRow]) -> [Classes; 2] {
        let mut tables = [Classes::new(rows.len()), Classes::new(rows.len())];
        let mut row = Canon::default();
        let mut rep = Canon::default();
        for (b, batch) in rows.chunks(BATCH).enumerate() {
            let mut loaded = 0u32;
            for key_row in batch {
                for tier in [STRICT, NORMALIZED] {
                    let table = &tables[tier];
                    loaded ^= table.slots[table.start(key_row.hashes[tier])].tag;
                }
            }
            std::hint::black_box(loaded);
            for (k, key_row) in batch.iter().enumerate() {
                let j = b * BATCH + k;
                for tier in [STRICT, NORMALIZED] {
                    let hash = key_row.hashes[tier];
                    let class = self.insert(&mut tables[tier], (hash, j), &mut row, &mut rep, tier);
                    tables[tier].of_key.push(class);
                }
            }
        }
        tables
    }

    /// The key's rows by their text as written, with the count of cells
    /// written in literal or IRI syntax of each, when an answer row of the
    /// same text is known to be that row in both tiers: columns matched by
    /// name and in the key's order, every row read in place, and
    /// [`KeyContext::same_text_is_same`].
    ///
    /// For sorted tuples, the same with the multiset of a row's cells,
    /// trimmed, for its text: an answer row holding a key row's texts in
    /// any order is that row's in both tiers, as every cell is read in the
    /// one group of all columns (issue 26, section 4: such a row is
    /// neither canonicalized nor sorted by value, nor is the key's).
    fn verbatim(&self, rows: KeyRows) -> Option<(Lines, Vec<u16>)> {
        if !self.context.same_text_is_same {
            return None;
        }
        let lines = match self.layout {
            Layout::ByName(permutation) => {
                let in_order = permutation.iter().enumerate().all(|(i, &a)| i == a);
                let in_place = self.key.row_count() == 0 || self.key.row_text(0).is_some();
                if !in_order || !in_place {
                    return None;
                }
                let key = self.key;
                Lines::new(&rows.rows, |a, b| key.row_text(a) == key.row_text(b))
            }
            Layout::SortedTuple { .. } => {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                Lines::new(&rows.rows, |i, j| {
                    self.key.row_into(i, &mut a);
                    self.key.row_into(j, &mut b);
                    same_texts(&a, &b)
                })
            }
        };
        drop(rows.rows);
        Some((lines, rows.unwrapped))
    }

    /// Puts key row `j` (with `hash`) in its class of `tier`, and returns
    /// the class.
    fn insert(
        &self,
        table: &mut Classes,
        (hash, j): (u64, usize),
        row: &mut Canon<'v>,
        rep: &mut Canon<'v>,
        tier: usize,
    ) -> u32 {
        let mask = table.slots.len() - 1;
        let mut i = table.start(hash);
        loop {
            let slot = table.slots[i];
            if slot.rep == EMPTY {
                table.slots[i] = Slot {
                    tag: tag(hash),
                    rep: j as u32,
                    left: 1,
                };
                return i as u32;
            }
            if slot.tag == tag(hash) {
                if row.key_row != Some(j) {
                    self.read_key(row, j);
                }
                if rep.key_row != Some(slot.rep as usize) {
                    self.read_key(rep, slot.rep as usize);
                }
                if same_row(row, rep, tier, self.sorted) {
                    table.slots[i].left += 1;
                    return i as u32;
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// The class `row` (hash `hash`) equals in `tier`, if any; `rep` holds
    /// its representative after.
    fn find(
        &self,
        table: &Classes,
        hash: u64,
        row: &mut Canon<'v>,
        rep: &mut Canon<'v>,
        tier: usize,
    ) -> Option<u32> {
        let mask = table.slots.len() - 1;
        let mut i = table.start(hash);
        loop {
            let slot = table.slots[i];
            if slot.rep == EMPTY {
                return None;
            }
            if slot.tag == tag(hash) {
                if rep.key_row != Some(slot.rep as usize) {
                    self.read_key(rep, slot.rep as usize);
                }
                if same_row(row, rep, tier, self.sorted) {
                    return Some(i as u32);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// The class each answer row belongs to in each tier (`NONE`: no key
    /// row equals it), and the normalized tier's tally. An answer row
    /// whose text is a key row's (`verbatim`) is in that row's classes.
    fn class_answers(
        &self,
        tables: &[Classes; 2],
        verbatim: Option<&(Lines, Vec<u16>)>,
    ) -> (Vec<[u32; 2]>, Tally) {
        let rows = self.answer.row_count();
        let chunks: Vec<(Vec<[u32; 2]>, Tally)> = (0..rows.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let mut batch: Vec<Canon<'v>> = (0..BATCH).map(|_| Canon::default()).collect();
                let mut reps = (Canon::default(), Raw::default());
                let mut tally = Tally::default();
                let end = ((c + 1) * CHUNK).min(rows);
                let mut out = Vec::with_capacity(end - c * CHUNK);
                for start in (c * CHUNK..end).step_by(BATCH) {
                    let range = start..(start + BATCH).min(end);
                    let same = self.same_rows(tables, verbatim, range.clone(), &mut tally);
                    self.classify_batch(
                        tables,
                        (range, &same),
                        (&mut batch, &mut reps),
                        &mut out,
                        &mut tally,
                    );
                }
                (out, tally)
            })
            .collect();
        let mut tally = Tally::default();
        let mut classed = Vec::with_capacity(rows);
        for (out, t) in chunks {
            classed.extend(out);
            tally.add(t);
        }
        (classed, tally)
    }

    /// Classifies answer rows `range` into `out`: those `same` names by
    /// the key row of their text, the others read (into `batch`) and
    /// compared, with their memory loaded together first.
    fn classify_batch(
        &self,
        tables: &[Classes; 2],
        (range, same): (std::ops::Range<usize>, &[Option<[u32; 2]>; BATCH]),
        (batch, (rep, raw)): (&mut [Canon<'v>], &mut (Canon<'v>, Raw<'v>)),
        out: &mut Vec<[u32; 2]>,
        tally: &mut Tally,
    ) {
        let mut tallies = [Tally::default(); BATCH];
        let mut rest = 0;
        for (b, i) in range.clone().enumerate() {
            if same[b].is_none() {
                let row = &mut batch[rest];
                row.read_answer(
                    (self.answer, i),
                    self.context,
                    self.layout,
                    true,
                    &mut tallies[rest],
                );
                rest += 1;
            }
        }
        self.load(tables, &batch[..rest]);
        let mut next = 0;
        for (b, i) in range.enumerate() {
            if let Some(classes) = same[b] {
                out.push(classes);
                continue;
            }
            let row = (&mut batch[next], i);
            out.push(self.classify(tables, row, (&mut *rep, &mut *raw), &mut tallies[next]));
            tally.add(tallies[next]);
            next += 1;
        }
    }

    /// For each answer row of `range` whose text is a key row's, that
    /// row's classes (and its cells in literal or IRI syntax counted in
    /// `tally`); the texts are hashed, then their table slots and key rows
    /// loaded, before any is compared.
    fn same_rows(
        &self,
        tables: &[Classes; 2],
        verbatim: Option<&(Lines, Vec<u16>)>,
        range: std::ops::Range<usize>,
        tally: &mut Tally,
    ) -> [Option<[u32; 2]>; BATCH] {
        let mut same = [None; BATCH];
        let Some((lines, unwrapped)) = verbatim else {
            return same;
        };
        if let Layout::SortedTuple { answer_width } = self.layout {
            let found = self.same_tuples(lines, range, answer_width);
            for (b, j) in found.into_iter().enumerate() {
                if let Some(j) = j {
                    same[b] = Some([tables[STRICT].of_key[j], tables[NORMALIZED].of_key[j]]);
                    tally.unwrapped += usize::from(unwrapped[j]);
                }
            }
            return same;
        }
        let mut hashes = [0u64; BATCH];
        let mut loaded = 0u32;
        for (b, i) in range.clone().enumerate() {
            hashes[b] = self.answer.row_text(i).map_or(0, hash);
            loaded ^= lines.slots[lines.start(hashes[b])].0;
        }
        std::hint::black_box(loaded);
        for hash in &hashes[..range.len()] {
            let (t, row) = lines.slots[lines.start(*hash)];
            if t == tag(*hash) && row != EMPTY {
                self.key.touch(row as usize);
            }
        }
        for (b, i) in range.enumerate() {
            let Some(text) = self.answer.row_text(i) else {
                continue;
            };
            if let Some(j) = lines.find(hashes[b], |j| self.key.row_text(j) == Some(text)) {
                same[b] = Some([tables[STRICT].of_key[j], tables[NORMALIZED].of_key[j]]);
                tally.unwrapped += usize::from(unwrapped[j]);
            }
        }
        same
    }

    /// For each answer row of `range` (read up to `answer_width` cells)
    /// holding a key row's texts in some order, that key row. The rows'
    /// texts are hashed first, then their table slots and the key rows
    /// they name loaded, before any is compared, so that the waits for
    /// memory overlap (as [`Self::same_rows`] does for rows matched by
    /// name).
    fn same_tuples(
        &self,
        lines: &Lines,
        range: std::ops::Range<usize>,
        answer_width: usize,
    ) -> [Option<usize>; BATCH] {
        let mut found = [None; BATCH];
        let mut hashes = [0u64; BATCH];
        let mut loaded = 0u32;
        let (mut cells, mut key_cells) = (Vec::new(), Vec::new());
        let mut fields: [Option<Fields<'_>>; BATCH] = Default::default();
        for (b, i) in range.clone().enumerate() {
            fields[b] = self
                .answer
                .row_text(i)
                .and_then(|t| Fields::of(t, answer_width));
            let hash = match &fields[b] {
                Some(fields) => fields.hash(),
                None => {
                    self.answer.row_into(i, &mut cells);
                    cells.truncate(answer_width);
                    if cells.iter().any(|c| matches!(c, Cow::Owned(_))) {
                        continue;
                    }
                    texts_hash(&cells)
                }
            };
            hashes[b] = hash;
            loaded ^= lines.slots[lines.start(hash)].0;
        }
        std::hint::black_box(loaded);
        for &hash in &hashes[..range.len()] {
            if hash == 0 {
                continue;
            }
            let (t, row) = lines.slots[lines.start(hash)];
            if t == tag(hash) && row != EMPTY {
                self.key.touch(row as usize);
            }
        }
        for (b, i) in range.enumerate() {
            if hashes[b] == 0 {
                continue;
            }
            let mut split = false;
            found[b] = lines.find(hashes[b], |j| {
                if let Some(fields) = &fields[b]
                    && let Some(key_line) = self.key.row_text(j)
                    && let Some(same) = fields.same_as(key_line)
                {
                    return same;
                }
                if !split {
                    self.answer.row_into(i, &mut cells);
                    cells.truncate(answer_width);
                    split = true;
                }
                self.key.row_into(j, &mut key_cells);
                same_texts(&cells, &key_cells)
            });
        }
        found
    }

    /// Loads what classifying `batch` will read: the table slots its
    /// hashes start at, then the key rows those slots name.
    fn load(&self, tables: &[Classes; 2], batch: &[Canon<'v>]) {
        let mut loaded = 0u32;
        for row in batch {
            for tier in [STRICT, NORMALIZED] {
                let table = &tables[tier];
                loaded ^= table.slots[table.start(row.hash(tier, self.sorted))].tag;
            }
        }
        std::hint::black_box(loaded);
        for row in batch {
            for tier in [STRICT, NORMALIZED] {
                if let Some((_, rep)) = tables[tier].candidate(row.hash(tier, self.sorted)) {
                    self.key.touch(rep as usize);
                }
            }
        }
    }

    /// The classes of answer row `index` (read into `row`, speculatively)
    /// in both tiers; the local names it took without a lookup are
    /// confirmed, or the row is read again with lookups.
    ///
    /// A row whose cells are, trimmed, the very texts of a class's
    /// representative is in that class, in either tier, when
    /// [`KeyContext::same_text_is_same`]; its local names are then right
    /// and name the key IRIs as written. Otherwise rows are compared by
    /// their canonical values.
    fn classify(
        &self,
        tables: &[Classes; 2],
        (row, index): (&mut Canon<'v>, usize),
        (rep, raw): (&mut Canon<'v>, &mut Raw<'v>),
        tally: &mut Tally,
    ) -> [u32; 2] {
        let sorted = self.sorted;
        let hashes = [row.hash(STRICT, sorted), row.hash(NORMALIZED, sorted)];
        let [strict_text, normalized_text] = [STRICT, NORMALIZED].map(|tier| {
            let (class, representative) = tables[tier].candidate(hashes[tier])?;
            self.same_text(row, representative as usize, raw)
                .then_some(class)
        });
        let strict = match strict_text {
            Some(class) => class,
            None => self
                .find(&tables[STRICT], hashes[STRICT], row, rep, STRICT)
                .unwrap_or(NONE),
        };
        if let Some(class) = normalized_text {
            return [strict, class];
        }
        let normalized = self.find(
            &tables[NORMALIZED],
            hashes[NORMALIZED],
            row,
            rep,
            NORMALIZED,
        );
        if row.named.iter().all(Option::is_none) {
            return [strict, normalized.unwrap_or(NONE)];
        }
        let partner = normalized.map(|_| &*rep);
        if self.confirm(row, partner, tally) {
            return [strict, normalized.unwrap_or(NONE)];
        }
        // A name taken without a lookup is no key IRI's: read again.
        *tally = Tally::default();
        row.read_answer(
            (self.answer, index),
            self.context,
            self.layout,
            false,
            tally,
        );
        let normalized = self.find(
            &tables[NORMALIZED],
            row.hash(NORMALIZED, sorted),
            row,
            rep,
            NORMALIZED,
        );
        [strict, normalized.unwrap_or(NONE)]
    }

    /// True when answer `row`'s cells, trimmed, are key row `index`'s, in
    /// the key's column order, and that makes them equal
    /// ([`KeyContext::same_text_is_same`]; columns matched by name).
    fn same_text(&self, row: &Canon<'v>, index: usize, raw: &mut Raw<'v>) -> bool {
        let Layout::ByName(permutation) = self.layout else {
            return false;
        };
        if !self.context.same_text_is_same {
            return false;
        }
        if raw.row != Some(index) {
            self.key.row_into(index, &mut raw.cells);
            raw.row = Some(index);
        }
        raw.cells.len() == permutation.len()
            && permutation
                .iter()
                .zip(&raw.cells)
                .all(|(&a, k)| row.cells.get(a).is_some_and(|c| c.trim() == k.trim()))
    }

    /// Confirms each local name `row` took without a lookup: the key cell
    /// it was found equal to in `partner` (its normalized class's
    /// representative) is an IRI with that local name, or a lookup finds
    /// one. Counts those that name a key IRI in another form in `tally`.
    /// False when one names no key IRI and its text is not that name.
    fn confirm(&self, row: &Canon<'v>, partner: Option<&Canon<'v>>, tally: &mut Tally) -> bool {
        for (i, named) in row.named.iter().enumerate() {
            let Some(value) = named else {
                continue;
            };
            let value = value.resolve(&row.scratch);
            let local = row.text(NORMALIZED, i);
            let iri = partner
                .and_then(|p| {
                    let j = row.partner(p, NORMALIZED, i, self.sorted)?;
                    p.named
                        .get(j)
                        .copied()
                        .flatten()
                        .map(|v| v.resolve(&p.scratch))
                })
                .or_else(|| {
                    let group = if self.sorted { 0 } else { i };
                    self.context.local_iri(group, local)
                });
            match iri {
                Some(iri) => tally.by_local_name += usize::from(iri != value),
                None if *super::cell::nfc(value) == *local => {}
                None => return false,
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::CsvText;

    /// A key row's text hash, which reuses a cell's strict hash where that
    /// is the hash of the cell's trimmed text, is the hash of its texts an
    /// answer row of the same texts gets ([`Fields::hash`], or
    /// [`texts_hash`] for a row with a quoted field): else the row would
    /// silently miss the match by text and be canonicalized. A row with an
    /// escaped quote (an owned cell) has none.
    #[test]
    fn a_key_rows_text_hash_is_its_texts_hash_whatever_its_cells_are() {
        let text = "a,b,c,d\n\
            http://x/Paris, 4.250 ,<http://y/z>,Lyon\n\
            05,1e3,\"P, Q\", P\u{e9}rou \n\
            5,5,5,\n\
            x,\"\"\"Paris\"\"@en\",y,z\n";
        let key = CsvText::read(text.as_bytes()).unwrap();
        let layout = Layout::SortedTuple { answer_width: 4 };
        let mut canon = Canon::default();
        for (reduce, i) in [(true, 0), (true, 1), (false, 2), (true, 3)] {
            canon.read_key((&key, i), layout, (reduce, 6), None);
            let row = KeyRow::of(&key, i, &canon, true);
            let line = key.row_text(i).unwrap_or_default();
            let expected = match Fields::of(line, 4) {
                Some(fields) => fields.hash(),
                None if i == 3 => 0,
                None => texts_hash(&canon.cells),
            };
            assert_eq!(row.line, expected, "row {i}");
            assert_eq!(row.line == 0, i == 3, "row {i}");
        }
    }
}
