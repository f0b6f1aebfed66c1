//! The key's numbers as the injectivity guard reads them: whether a key
//! IRI's local name that reads as a number (`http://ex.org/item/5`) would
//! name another key value (`5.0`) when an answer writes it bare
//! (`docs/SCORING.md`, "Injectivity guard"; issue 24, item 2).
//!
//! Read only when some key IRI has such a local name in a group that also
//! holds values that are not IRIs, so it may allocate per number.

use rustc_hash::FxHashMap as HashMap;

use super::number::Decimal;
use super::tolerance::{self, Reading, Tolerance};
use crate::table::Rows;

/// The numbers of one group of key columns.
#[derive(Default)]
struct GroupNumbers {
    /// Canonical text → the first key cell's text of that value.
    first: HashMap<String, String>,
    /// Snapping targets (decimals a double holds), sorted by value, one
    /// per value with the first text it is written as:
    /// `(value, canonical, written)`.
    targets: Vec<(f64, String, String)>,
}

/// The key's numbers, per group, for the groups that need them.
pub(super) struct KeyNumberIndex {
    groups: Vec<GroupNumbers>,
    figures: u32,
}

/// How the guard reads the key: which groups, and what snaps.
pub(super) struct Reach<'a> {
    /// The groups whose numbers are wanted.
    pub(super) wanted: &'a [bool],
    /// The group of each key column.
    pub(super) group_of: &'a dyn Fn(usize) -> usize,
    /// Significant figures of canonical numbers.
    pub(super) figures: u32,
    /// Snapping is in force: targets are wanted.
    pub(super) snapping: bool,
}

impl KeyNumberIndex {
    /// Reads every numeric key cell of a wanted group (trimmed, literal
    /// syntax removed: `unwrap`), in row order.
    pub(super) fn read<K: Rows + ?Sized>(
        key: &K,
        reach: Reach<'_>,
        unwrap: impl Fn(&str) -> String,
    ) -> KeyNumberIndex {
        let mut groups: Vec<GroupNumbers> = (0..reach.wanted.len())
            .map(|_| GroupNumbers::default())
            .collect();
        let mut cells = Vec::new();
        for row in 0..key.row_count() {
            key.row_into(row, &mut cells);
            for (column, text) in cells.iter().enumerate() {
                let g = (reach.group_of)(column);
                if !reach.wanted.get(g).copied().unwrap_or(false) {
                    continue;
                }
                let value = unwrap(text);
                let Some(d) = Decimal::parse(&value) else {
                    continue;
                };
                let canonical = d.canonical_at(reach.figures);
                let group = &mut groups[g];
                if reach.snapping && !d.is_integral() {
                    let approx = value.parse::<f64>().unwrap_or_else(|_| d.to_f64());
                    if tolerance::a_double_holds(approx) {
                        group
                            .targets
                            .push((approx, canonical.clone(), value.clone()));
                    }
                }
                group.first.entry(canonical).or_insert(value);
            }
        }
        for group in &mut groups {
            // Stable: of equal values, the first written is kept.
            group.targets.sort_by(|a, b| a.0.total_cmp(&b.0));
            group.targets.dedup_by(|a, b| a.0.total_cmp(&b.0).is_eq());
        }
        KeyNumberIndex {
            groups,
            figures: reach.figures,
        }
    }

    /// How `local`, read as an answer number of group `g`, names a key
    /// number of that group (equal to one, or snapping onto one), worded
    /// to follow "the local name of key IRI X"; `None` when it does not.
    pub(super) fn reads_as_key_number(
        &self,
        g: usize,
        local: &str,
        tol: &Tolerance,
    ) -> Option<String> {
        let group = self.groups.get(g)?;
        let d = Decimal::parse(local)?;
        if let Some(written) = group.first.get(&d.canonical_at(self.figures)) {
            return Some(format!("reads as the key value '{written}'"));
        }
        let targets: Vec<tolerance::Target<'_>> = group
            .targets
            .iter()
            .map(|(v, c, w)| (*v, c.as_str(), w.as_str()))
            .collect();
        let reading = Reading {
            value: local.parse::<f64>().unwrap_or_else(|_| d.to_f64()),
            text: local,
        };
        let canonical = tolerance::snap_target(&targets, reading, tol)?;
        let (_, _, written) = group
            .targets
            .iter()
            .find(|(_, c, _)| std::ptr::eq(c.as_str(), canonical))?;
        Some(format!(
            "reads as a number within relative {} of the key value '{written}'",
            tol.value
        ))
    }
}

/// True when a local name reads as a number (`5`, `1e3`): it is then
/// matched only by text naming it, never by a number of the same value.
pub(super) fn numeric(local: &str) -> bool {
    matches!(
        local.as_bytes().first(),
        Some(b'0'..=b'9' | b'+' | b'-' | b'.')
    ) && super::number::read(local).is_some()
}
