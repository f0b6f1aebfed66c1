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

use std::borrow::Cow;
use std::hash::{BuildHasherDefault, Hasher};

use rayon::prelude::*;
use rustc_hash::FxHasher;

use super::context::{KeyContext, NORMALIZED, STRICT, Tally, Val};
use crate::table::Rows;

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

/// One row's canonical values in both tiers.
#[derive(Default)]
struct Canon<'v> {
    cells: Vec<Cow<'v, str>>,
    scratch: String,
    values: [Vec<Val<'v>>; 2],
    hashes: [Vec<u64>; 2],
    /// Cell indices by (hash, text): the order sorted tuples compare in.
    order: [Vec<u32>; 2],
    /// The key row held, when it is one.
    key_row: Option<usize>,
}

impl<'v> Canon<'v> {
    fn clear(&mut self) {
        self.scratch.clear();
        for tier in [STRICT, NORMALIZED] {
            self.values[tier].clear();
            self.hashes[tier].clear();
            self.order[tier].clear();
        }
        self.key_row = None;
    }

    fn push(&mut self, pair: [Val<'v>; 2]) {
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
    }

    /// Reads key row `index`.
    fn read_key<K: Rows + ?Sized>(
        &mut self,
        key: &'v K,
        index: usize,
        context: &KeyContext<'v>,
        layout: Layout<'_>,
    ) {
        self.clear();
        let mut cells = std::mem::take(&mut self.cells);
        key.row_into(index, &mut cells);
        let width = match layout {
            Layout::ByName(permutation) => permutation.len(),
            Layout::SortedTuple { .. } => cells.len(),
        };
        let by_name = matches!(layout, Layout::ByName(_));
        for (column, text) in cells.iter().take(width).enumerate() {
            let group = if by_name { column } else { 0 };
            let pair = context.key_cell(text, group, &mut self.scratch);
            self.push(pair);
        }
        self.cells = cells;
        self.key_row = Some(index);
    }

    /// Reads answer row `index`, in the key's column order when columns
    /// are matched by name.
    fn read_answer<A: Rows + ?Sized>(
        &mut self,
        answer: &'v A,
        index: usize,
        context: &KeyContext<'v>,
        layout: Layout<'_>,
        tally: &mut Tally,
    ) {
        self.clear();
        let mut cells = std::mem::take(&mut self.cells);
        answer.row_into(index, &mut cells);
        match layout {
            Layout::ByName(permutation) => {
                for (k, &a) in permutation.iter().enumerate() {
                    if let Some(text) = cells.get(a) {
                        let pair = context.answer_cell(text, k, &mut self.scratch, tally);
                        self.push(pair);
                    }
                }
            }
            Layout::SortedTuple { answer_width } => {
                for text in cells.iter().take(answer_width) {
                    let pair = context.answer_cell(text, 0, &mut self.scratch, tally);
                    self.push(pair);
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

/// A hash of one canonical value.
fn hash(text: &str) -> u64 {
    let mut h = FxHasher::default();
    h.write(text.as_bytes());
    h.write_usize(text.len());
    h.finish()
}

/// A bijective mixing of 64 bits (the finalizer of MurmurHash3).
fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// A hasher for keys that are hashes already.
#[derive(Default)]
struct Passthrough(u64);

impl Hasher for Passthrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix(self.0 ^ u64::from(b));
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

const NONE: u32 = u32::MAX;

/// Key rows of one tier grouped into classes of equal rows.
struct Classes {
    /// Row hash → first class with it (others chained through `next`).
    index: std::collections::HashMap<u64, u32, BuildHasherDefault<Passthrough>>,
    /// `(representative key row, rows left to match, next class with the hash)`.
    classes: Vec<(u32, u32, u32)>,
    /// The class of each key row (kept only for the ordered verdict).
    of_key: Vec<u32>,
}

/// What the comparison reads: both tables and how their cells line up.
pub(super) struct Sides<'v, 'p, K: ?Sized, A: ?Sized> {
    pub(super) key: &'v K,
    pub(super) answer: &'v A,
    pub(super) context: &'p KeyContext<'v>,
    pub(super) layout: Layout<'p>,
    /// Keep what the ordered verdict needs.
    pub(super) ordered: bool,
}

impl<'v, K: Rows + ?Sized + Sync, A: Rows + ?Sized + Sync> Sides<'v, '_, K, A> {
    /// Compares the answer's rows with the key's in both tiers; the counts
    /// are `[strict, normalized]`, the tally the normalized tier's.
    pub(super) fn compare(&self) -> ([TierCount; 2], Tally) {
        let sorted = matches!(self.layout, Layout::SortedTuple { .. });
        let mut classes = self.classes(sorted);
        let (classed, tally) = self.class_answers(&classes, sorted);
        let mut counts = [TierCount {
            matched: 0,
            in_order: true,
        }; 2];
        for (i, pair) in classed.iter().enumerate() {
            for tier in [STRICT, NORMALIZED] {
                let class = pair[tier];
                let table = &mut classes[tier];
                if class != NONE {
                    let left = &mut table.classes[class as usize].1;
                    if *left > 0 {
                        *left -= 1;
                        counts[tier].matched += 1;
                    }
                }
                if self.ordered {
                    counts[tier].in_order &= class != NONE && table.of_key.get(i) == Some(&class);
                }
            }
        }
        (counts, tally)
    }

    /// The key's rows in classes, both tiers.
    fn classes(&self, sorted: bool) -> [Classes; 2] {
        let rows = self.key.row_count();
        let hashes: Vec<[u64; 2]> = self.map_rows(rows, |canon, i| {
            canon.read_key(self.key, i, self.context, self.layout);
            [canon.hash(STRICT, sorted), canon.hash(NORMALIZED, sorted)]
        });
        let mut classes = [STRICT, NORMALIZED].map(|_| Classes {
            index: std::collections::HashMap::with_capacity_and_hasher(rows, Default::default()),
            classes: Vec::with_capacity(rows),
            of_key: Vec::with_capacity(if self.ordered { rows } else { 0 }),
        });
        let mut row = Canon::default();
        let mut rep = Canon::default();
        for (j, pair) in hashes.iter().enumerate() {
            for tier in [STRICT, NORMALIZED] {
                let table = &mut classes[tier];
                let found = table.index.get(&pair[tier]).copied().and_then(|first| {
                    if row.key_row != Some(j) {
                        row.read_key(self.key, j, self.context, self.layout);
                    }
                    self.find(table, first, &mut row, &mut rep, tier, sorted)
                });
                let class = match found {
                    Some(c) => {
                        table.classes[c as usize].1 += 1;
                        c
                    }
                    None => {
                        let c = table.classes.len() as u32;
                        let next = table.index.insert(pair[tier], c).unwrap_or(NONE);
                        table.classes.push((j as u32, 1, next));
                        c
                    }
                };
                if self.ordered {
                    table.of_key.push(class);
                }
            }
        }
        classes
    }

    /// The class each answer row belongs to in each tier (`NONE`: no key
    /// row equals it), and the normalized tier's tally.
    fn class_answers(&self, classes: &[Classes; 2], sorted: bool) -> (Vec<[u32; 2]>, Tally) {
        let rows = self.answer.row_count();
        let chunks: Vec<(Vec<[u32; 2]>, Tally)> = (0..rows.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let mut row = Canon::default();
                let mut rep = Canon::default();
                let mut tally = Tally::default();
                let out = (c * CHUNK..((c + 1) * CHUNK).min(rows))
                    .map(|i| {
                        row.read_answer(self.answer, i, self.context, self.layout, &mut tally);
                        [STRICT, NORMALIZED].map(|tier| {
                            let table = &classes[tier];
                            table
                                .index
                                .get(&row.hash(tier, sorted))
                                .and_then(|&first| {
                                    self.find(table, first, &mut row, &mut rep, tier, sorted)
                                })
                                .unwrap_or(NONE)
                        })
                    })
                    .collect();
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

    /// The class, among those chained from `first`, whose representative
    /// equals `row` in `tier`.
    fn find(
        &self,
        table: &Classes,
        first: u32,
        row: &mut Canon<'v>,
        rep: &mut Canon<'v>,
        tier: usize,
        sorted: bool,
    ) -> Option<u32> {
        let mut c = first;
        loop {
            let (representative, _, next) = table.classes[c as usize];
            if rep.key_row != Some(representative as usize) {
                rep.read_key(self.key, representative as usize, self.context, self.layout);
            }
            if same_row(row, rep, tier, sorted) {
                return Some(c);
            }
            if next == NONE {
                return None;
            }
            c = next;
        }
    }

    /// `f` over rows `0..rows` in chunks (in parallel), results in order.
    fn map_rows<T: Send>(
        &self,
        rows: usize,
        f: impl Fn(&mut Canon<'v>, usize) -> T + Sync,
    ) -> Vec<T> {
        let chunks: Vec<Vec<T>> = (0..rows.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let mut canon = Canon::default();
                (c * CHUNK..((c + 1) * CHUNK).min(rows))
                    .map(|i| f(&mut canon, i))
                    .collect()
            })
            .collect();
        chunks.into_iter().flatten().collect()
    }
}

/// Rows per unit of parallel work.
const CHUNK: usize = 4096;
