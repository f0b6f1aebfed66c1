//! An answer against its ground truth, row by row: the model of the diff
//! an attempt page shows (`docs/PUBLISHING.md`, "The site").
//!
//! Rows are compared as the text of their CSV lines. Where the answer key
//! is unordered, rows are a multiset (`docs/SCORING.md`, "Rows"): both
//! sides are sorted and merged, so a row is either in both, missing from
//! the answer or extra in it. Where the key is ordered, the sides are
//! compared in their own order (Myers, `similar`), and a row both sides
//! hold at different places is told apart from a missing or an extra one.
//!
//! The diff shows every differing row before any identical one: each run
//! of differing rows comes with up to [`CONTEXT`] identical rows on either
//! side, and the identical rows between are counted, not shown. Only when
//! more rows differ than a page may show are differing rows left out, and
//! then the diff says how many.

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::table::Table;

/// Identical rows shown on either side of a run of differing rows, when
/// the page has room for them.
pub const CONTEXT: usize = 3;

/// How one row of the diff stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowKind {
    /// In both sides, here.
    Same,
    /// A ground-truth row the answer lacks.
    Missing,
    /// An answer row the ground truth lacks.
    Extra,
    /// A row both sides hold, shown where the ground truth has it; the
    /// answer has it elsewhere (an ordered key only).
    MovedFromHere,
    /// A row both sides hold, shown where the answer has it; the ground
    /// truth has it elsewhere (an ordered key only).
    MovedHere,
}

impl RowKind {
    /// True unless the row is the same on both sides.
    pub fn differs(self) -> bool {
        self != RowKind::Same
    }
}

/// One line of the diff as shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "line", rename_all = "kebab-case")]
pub enum DiffLine {
    /// A row, as its CSV line (no line end).
    Row {
        /// How it stands.
        kind: RowKind,
        /// The CSV line.
        text: String,
    },
    /// This many identical rows, not shown.
    Skipped {
        /// How many.
        rows: usize,
    },
}

/// The answer against the ground truth, as an attempt page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnswerDiff {
    /// The answer's rows.
    pub answer_rows: usize,
    /// The ground truth's rows.
    pub truth_rows: usize,
    /// Whether the rows were compared in order (an ordered key).
    pub ordered: bool,
    /// Ground-truth rows the answer lacks (as a multiset).
    pub missing: usize,
    /// Answer rows the ground truth lacks (as a multiset).
    pub extra: usize,
    /// Rows both sides hold that stand at different places (an ordered
    /// key only; each is shown twice, once on either side).
    pub moved: usize,
    /// Rows identical on both sides, at the same place.
    pub identical: usize,
    /// Of those, how many are not shown.
    pub identical_hidden: usize,
    /// Differing rows not shown (only when more differ than the limit).
    pub differing_hidden: usize,
    /// Identical rows shown around each run of differing rows.
    pub context: usize,
    /// What is shown, in order.
    pub lines: Vec<DiffLine>,
}

/// Each row of `table` as its CSV line (no line end), as the table's CSV
/// writes it.
pub fn csv_lines(table: &Table) -> Vec<String> {
    let line = |row: &Vec<String>| {
        let mut t = Table::new(vec![String::new(); row.len()]);
        t.rows.push(row.clone());
        let csv = t.to_csv();
        csv.split_once('\n')
            .map_or(String::new(), |(_, r)| r.trim_end_matches('\n').to_string())
    };
    // Where no cell holds a line end, each row is one line of the whole
    // table's CSV: one table written instead of one per row.
    let width = table.rows.first().map_or(0, Vec::len);
    if width == 0
        || table.rows.iter().any(|r| r.len() != width)
        || table.rows.iter().flatten().any(|c| c.contains('\n'))
    {
        return table.rows.iter().map(line).collect();
    }
    let whole = Table {
        columns: vec![String::new(); width],
        rows: table.rows.clone(),
    };
    let csv = whole.to_csv();
    let mut lines = csv.split('\n');
    lines.next(); // the header
    lines.take(table.rows.len()).map(str::to_string).collect()
}

/// Every row of both sides in diff order, each with how it stands.
fn changes<'a>(
    truth: &'a [String],
    answer: &'a [String],
    ordered: bool,
) -> Vec<(RowKind, &'a str)> {
    let mut out = Vec::with_capacity(truth.len().max(answer.len()));
    if !ordered {
        // Sorted multisets: a merge is the whole diff.
        let mut t: Vec<&str> = truth.iter().map(String::as_str).collect();
        let mut a: Vec<&str> = answer.iter().map(String::as_str).collect();
        t.sort_unstable();
        a.sort_unstable();
        let (mut i, mut j) = (0, 0);
        while i < t.len() || j < a.len() {
            match (t.get(i), a.get(j)) {
                (Some(x), Some(y)) if x == y => {
                    out.push((RowKind::Same, *x));
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x < y => {
                    out.push((RowKind::Missing, *x));
                    i += 1;
                }
                (Some(x), None) => {
                    out.push((RowKind::Missing, *x));
                    i += 1;
                }
                (_, Some(y)) => {
                    out.push((RowKind::Extra, *y));
                    j += 1;
                }
                (None, None) => break,
            }
        }
        return out;
    }
    // In order: which rows either side holds more often than the other
    // is a question of counts, whatever the edit script says.
    let mut surplus: FxHashMap<&'a str, i64> = FxHashMap::default();
    for row in truth {
        *surplus.entry(row).or_default() += 1;
    }
    for row in answer {
        *surplus.entry(row).or_default() -= 1;
    }
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, truth, answer);
    for op in ops {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == similar::DiffTag::Equal {
            out.extend(truth[old].iter().map(|r| (RowKind::Same, r.as_str())));
            continue;
        }
        for row in &truth[old] {
            let s = surplus.entry(row).or_default();
            let kind = if *s > 0 {
                *s -= 1;
                RowKind::Missing
            } else {
                RowKind::MovedFromHere
            };
            out.push((kind, row.as_str()));
        }
        for row in &answer[new] {
            let s = surplus.entry(row).or_default();
            let kind = if *s < 0 {
                *s += 1;
                RowKind::Extra
            } else {
                RowKind::MovedHere
            };
            out.push((kind, row.as_str()));
        }
    }
    out
}

/// For each change, whether it is within `context` rows of a differing one.
fn near_a_difference(changes: &[(RowKind, &str)], context: usize) -> Vec<bool> {
    let mut near = vec![false; changes.len()];
    let mut last: Option<usize> = None;
    for (i, (kind, _)) in changes.iter().enumerate() {
        if kind.differs() {
            last = Some(i);
        }
        near[i] = last.is_some_and(|l| i - l <= context);
    }
    let mut next: Option<usize> = None;
    for i in (0..changes.len()).rev() {
        if changes[i].0.differs() {
            next = Some(i);
        }
        near[i] |= next.is_some_and(|n| n - i <= context);
    }
    near
}

/// `answer` against `truth`, rows compared in order when `ordered` (the
/// key has a top-level `ORDER BY`) and as multisets otherwise; at most
/// `limit` rows shown (skipped runs aside).
///
/// Which rows show: with no differing row, the first `limit` rows. With
/// up to `limit` differing rows, all of them, each run with [`CONTEXT`]
/// identical rows on either side, or fewer (down to none) where that is
/// what keeps the total within `limit`. With more, the first `limit`
/// differing rows and no context, and `differing_hidden` says how many
/// are left out.
pub fn answer_diff(answer: &Table, truth: &Table, ordered: bool, limit: usize) -> AnswerDiff {
    let t = csv_lines(truth);
    let a = csv_lines(answer);
    let all = changes(&t, &a, ordered);
    let count = |k: RowKind| all.iter().filter(|(kind, _)| *kind == k).count();
    let identical = count(RowKind::Same);
    let differing = all.len() - identical;
    let mut diff = AnswerDiff {
        answer_rows: answer.rows.len(),
        truth_rows: truth.rows.len(),
        ordered,
        missing: count(RowKind::Missing),
        extra: count(RowKind::Extra),
        moved: count(RowKind::MovedHere),
        identical,
        identical_hidden: 0,
        differing_hidden: 0,
        context: 0,
        lines: Vec::new(),
    };
    // What is shown: a flag per change.
    let shown: Vec<bool> = if differing == 0 {
        (0..all.len()).map(|i| i < limit).collect()
    } else if differing > limit {
        let mut left = limit;
        all.iter()
            .map(|(kind, _)| {
                let show = kind.differs() && left > 0;
                if show {
                    left -= 1;
                }
                show
            })
            .collect()
    } else {
        let mut pick = None;
        for context in (0..=CONTEXT).rev() {
            let near = near_a_difference(&all, context);
            if near.iter().filter(|n| **n).count() <= limit || context == 0 {
                diff.context = context;
                pick = Some(near);
                break;
            }
        }
        pick.unwrap_or_default()
    };
    // A lone identical row is shown rather than a line saying it is not,
    // where there is room.
    let mut shown = shown;
    let mut room = limit.saturating_sub(shown.iter().filter(|s| **s).count());
    for i in 0..all.len() {
        let alone = !shown[i]
            && !all[i].0.differs()
            && (i == 0 || shown[i - 1])
            && shown.get(i + 1).copied().unwrap_or(i > 0);
        if alone && room > 0 {
            shown[i] = true;
            room -= 1;
        }
    }
    let mut skipped = 0;
    // From the first differing row left out on, nothing more is shown:
    // what follows is counted once, below the diff.
    let mut tail = false;
    for ((kind, text), show) in all.iter().zip(&shown) {
        if *show {
            if skipped > 0 {
                diff.lines.push(DiffLine::Skipped { rows: skipped });
                skipped = 0;
            }
            diff.lines.push(DiffLine::Row {
                kind: *kind,
                text: (*text).to_string(),
            });
        } else if kind.differs() {
            if !tail && skipped > 0 {
                diff.lines.push(DiffLine::Skipped { rows: skipped });
                skipped = 0;
            }
            tail = true;
            diff.differing_hidden += 1;
        } else {
            diff.identical_hidden += 1;
            if !tail {
                skipped += 1;
            }
        }
    }
    if skipped > 0 {
        diff.lines.push(DiffLine::Skipped { rows: skipped });
    }
    diff
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[&str]) -> Table {
        let mut t = Table::new(vec!["a".into(), "b".into()]);
        for r in rows {
            let (x, y) = r.split_once(',').unwrap();
            t.rows.push(vec![x.into(), y.into()]);
        }
        t
    }

    fn shown(d: &AnswerDiff) -> Vec<String> {
        d.lines
            .iter()
            .map(|l| match l {
                DiffLine::Row { kind, text } => format!("{kind:?} {text}"),
                DiffLine::Skipped { rows } => format!("… {rows}"),
            })
            .collect()
    }

    #[test]
    fn one_dropped_row_of_thousands_shows_with_its_context_first() {
        let rows: Vec<String> = (0..3965).map(|i| format!("r{i:05},{i}")).collect();
        let refs: Vec<&str> = rows.iter().map(String::as_str).collect();
        let truth = table(&refs);
        let mut dropped = refs.clone();
        dropped.remove(2000);
        let answer = table(&dropped);
        let d = answer_diff(&answer, &truth, false, 500);
        assert_eq!((d.missing, d.extra, d.moved), (1, 0, 0));
        assert_eq!(d.identical, 3964);
        assert_eq!(d.identical_hidden, 3964 - 6);
        assert_eq!(d.differing_hidden, 0);
        assert_eq!(d.context, CONTEXT);
        assert_eq!(
            shown(&d),
            [
                "… 1997",
                "Same r01997,1997",
                "Same r01998,1998",
                "Same r01999,1999",
                "Missing r02000,2000",
                "Same r02001,2001",
                "Same r02002,2002",
                "Same r02003,2003",
                "… 1961",
            ]
        );
    }

    #[test]
    fn a_single_identical_row_is_shown_rather_than_counted() {
        let truth = table(&["1,a", "2,b", "3,c", "4,d", "5,e"]);
        let answer = table(&["1,a", "2,b", "3,c", "4,d"]);
        let d = answer_diff(&answer, &truth, true, 500);
        assert_eq!(d.identical_hidden, 0);
        assert!(d.lines.iter().all(|l| matches!(l, DiffLine::Row { .. })));
        // Two are counted: one line instead of two.
        let truth = table(&["0,z", "1,a", "2,b", "3,c", "4,d", "5,e"]);
        let answer = table(&["0,z", "1,a", "2,b", "3,c", "4,d"]);
        let d = answer_diff(&answer, &truth, true, 500);
        assert_eq!(shown(&d)[0], "… 2");
    }

    #[test]
    fn unordered_rows_are_sorted_multisets() {
        let truth = table(&["1,x", "2,y", "3,z", "3,z"]);
        let answer = table(&["3,z", "1,x", "4,w"]);
        let d = answer_diff(&answer, &truth, false, 500);
        assert_eq!((d.missing, d.extra, d.moved, d.identical), (2, 1, 0, 2));
        assert_eq!(
            shown(&d),
            [
                "Same 1,x",
                "Missing 2,y",
                "Same 3,z",
                "Missing 3,z",
                "Extra 4,w"
            ]
        );
    }

    #[test]
    fn an_ordered_key_tells_moved_rows_from_missing_and_extra_ones() {
        let truth = table(&["1,x", "2,y", "3,z"]);
        let answer = table(&["2,y", "1,x", "4,w"]);
        let d = answer_diff(&answer, &truth, true, 500);
        assert_eq!((d.missing, d.extra, d.moved), (1, 1, 1));
        let lines = shown(&d);
        assert!(lines.contains(&"Missing 3,z".to_string()), "{lines:?}");
        assert!(lines.contains(&"Extra 4,w".to_string()), "{lines:?}");
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("Moved")).count(),
            2,
            "{lines:?}"
        );
        // The same rows unordered: only membership.
        let d = answer_diff(&answer, &truth, false, 500);
        assert_eq!((d.missing, d.extra, d.moved), (1, 1, 0));
    }

    #[test]
    fn context_shrinks_before_any_differing_row_is_hidden() {
        // Every other row differs: 10 differing rows, 10 identical ones.
        let truth_rows: Vec<String> = (0..20).map(|i| format!("{i:02},t")).collect();
        let answer_rows: Vec<String> = (0..20)
            .map(|i| {
                if i % 2 == 0 {
                    format!("{i:02},t")
                } else {
                    format!("{i:02},a")
                }
            })
            .collect();
        let t: Vec<&str> = truth_rows.iter().map(String::as_str).collect();
        let a: Vec<&str> = answer_rows.iter().map(String::as_str).collect();
        let d = answer_diff(&table(&a), &table(&t), false, 20);
        assert_eq!(d.differing_hidden, 0);
        assert_eq!(d.missing + d.extra, 20);
        assert_eq!(d.context, 0);
        assert_eq!(d.identical_hidden, 10);
        // Fewer rows allowed than differ: the first differing ones, counted.
        let d = answer_diff(&table(&a), &table(&t), false, 5);
        assert_eq!(d.differing_hidden, 15);
        let rows = d
            .lines
            .iter()
            .filter(|l| matches!(l, DiffLine::Row { .. }))
            .count();
        assert_eq!(rows, 5);
        assert!(
            d.lines.iter().all(|l| match l {
                DiffLine::Row { kind, .. } => kind.differs(),
                DiffLine::Skipped { .. } => true,
            }),
            "{:?}",
            shown(&d)
        );
    }

    #[test]
    fn an_identical_answer_shows_its_first_rows() {
        let rows: Vec<String> = (0..8).map(|i| format!("{i},v")).collect();
        let r: Vec<&str> = rows.iter().map(String::as_str).collect();
        let d = answer_diff(&table(&r), &table(&r), false, 5);
        assert_eq!((d.identical, d.identical_hidden), (8, 3));
        assert_eq!(shown(&d).last().map(String::as_str), Some("… 3"));
    }

    #[test]
    fn csv_lines_are_the_rows_written_one_by_one() {
        let one_by_one = |t: &Table| -> Vec<String> {
            t.rows
                .iter()
                .map(|row| {
                    let mut one = Table::new(vec![String::new(); row.len()]);
                    one.rows.push(row.clone());
                    let csv = one.to_csv();
                    csv.split_once('\n')
                        .map_or(String::new(), |(_, r)| r.trim_end_matches('\n').to_string())
                })
                .collect()
        };
        for csv in [
            &b"a,b\n1,x\n\" q\",\"c,d\"\n,\n"[..],
            b"a\n\"\"\nx\n",
            b"a,b\n\"two\nlines\",y\n3,z\n",
            b"a,b\n\"cr\rhere\",y\n",
            b"a\n",
        ] {
            let t = Table::from_csv(csv).unwrap();
            assert_eq!(
                csv_lines(&t),
                one_by_one(&t),
                "{}",
                String::from_utf8_lossy(csv)
            );
        }
        let ragged = Table {
            columns: vec![],
            rows: vec![vec![], vec![]],
        };
        assert_eq!(csv_lines(&ragged), one_by_one(&ragged));
    }

    #[test]
    fn csv_lines_quote_as_the_csv_writer_does() {
        let mut t = Table::new(vec!["a".into(), "b".into()]);
        t.rows.push(vec!["x,y".into(), "line\nbreak".into()]);
        t.rows.push(vec!["plain".into(), "\"q\"".into()]);
        assert_eq!(
            csv_lines(&t),
            ["\"x,y\",\"line\nbreak\"", "plain,\"\"\"q\"\"\""]
        );
    }
}
