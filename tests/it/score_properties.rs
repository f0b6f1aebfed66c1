//! Scorer invariants over generated tables (proptest): row order and
//! same-name column order never change a score; exact implies F1 = 1; F1
//! lies within [0, 1]; an answer equal to the key is exact in every tier.

use okn_benchmark::score::{ScoreOptions, score};
use okn_benchmark::table::Table;
use proptest::prelude::*;

fn cell() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u8..3, 0u8..6).prop_map(|(ns, n)| format!("http://ex.org/ns{ns}/item{n}")),
        (0u8..6).prop_map(|n| format!("item{n}")),
        (-50i64..50).prop_map(|n| n.to_string()),
        (-1000i64..1000, 1u32..7).prop_map(|(n, scale)| {
            let v = n as f64 / 10f64.powi(scale as i32);
            format!("{v}")
        }),
        "[a-z]{0,3}",
        Just(String::new()),
    ]
}

fn table() -> impl Strategy<Value = Table> {
    (1usize..4).prop_flat_map(|width| {
        let columns = (0..width).map(|i| format!("c{i}")).collect::<Vec<_>>();
        prop::collection::vec(prop::collection::vec(cell(), width), 0..7).prop_map(move |rows| {
            Table {
                columns: columns.clone(),
                rows,
            }
        })
    })
}

/// A key and an answer derived from it: some rows kept, some duplicated,
/// some cells altered, maybe renamed columns.
fn key_and_answer() -> impl Strategy<Value = (Table, Table)> {
    table().prop_flat_map(|key| {
        let n = key.rows.len();
        let width = key.columns.len();
        (
            Just(key),
            prop::collection::vec((0..n.max(1), any::<bool>(), cell(), 0..width), 0..(n + 3)),
            any::<bool>(),
        )
            .prop_map(move |(key, picks, rename)| {
                let mut rows = Vec::new();
                for (i, alter, value, col) in picks {
                    if key.rows.is_empty() {
                        rows.push(vec![value; width]);
                        continue;
                    }
                    let mut row = key.rows[i % key.rows.len()].clone();
                    if alter {
                        row[col] = value;
                    }
                    rows.push(row);
                }
                let columns = if rename {
                    (0..width).map(|i| format!("x{i}")).collect()
                } else {
                    key.columns.clone()
                };
                (key, Table { columns, rows })
            })
    })
}

fn verdict(key: &Table, answer: &Table) -> (bool, bool, f64, f64) {
    let s = score(key, answer, &ScoreOptions::default());
    (s.exact, s.strict_exact, s.f1, s.strict_f1)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn row_order_never_changes_a_score((key, answer) in key_and_answer(), seed in any::<u64>()) {
        let mut shuffled = answer.clone();
        let n = shuffled.rows.len();
        if n > 1 {
            let k = (seed as usize) % n;
            shuffled.rows.rotate_left(k);
            shuffled.rows.reverse();
        }
        prop_assert_eq!(verdict(&key, &answer), verdict(&key, &shuffled));
    }

    #[test]
    fn same_name_column_order_never_changes_a_score((key, answer) in key_and_answer(), seed in any::<u64>()) {
        let width = answer.columns.len();
        let k = (seed as usize) % width.max(1);
        let permute = |cells: &Vec<String>| {
            let mut cells = cells.clone();
            cells.rotate_left(k);
            cells.reverse();
            cells
        };
        let permuted = Table {
            columns: permute(&answer.columns),
            rows: answer.rows.iter().map(permute).collect(),
        };
        prop_assert_eq!(verdict(&key, &answer), verdict(&key, &permuted));
    }

    #[test]
    fn exact_implies_f1_one_and_f1_is_a_fraction((key, answer) in key_and_answer(), ordered in any::<bool>()) {
        let s = score(&key, &answer, &ScoreOptions { ordered, ..ScoreOptions::default() });
        prop_assert!((0.0..=1.0).contains(&s.f1), "f1 {}", s.f1);
        prop_assert!((0.0..=1.0).contains(&s.strict_f1), "strict f1 {}", s.strict_f1);
        if s.exact { prop_assert!((s.f1 - 1.0).abs() < 1e-12); }
        if s.strict_exact { prop_assert!((s.strict_f1 - 1.0).abs() < 1e-12); prop_assert!(s.exact); }
        if s.ordered == Some(true) { prop_assert!(s.exact); }
        prop_assert_eq!(s.ordered.is_some(), ordered);
    }

    #[test]
    fn the_key_itself_is_exact_in_every_tier(key in table()) {
        let s = score(&key, &key, &ScoreOptions { ordered: true, ..ScoreOptions::default() });
        prop_assert!(s.exact && s.strict_exact);
        prop_assert_eq!(s.ordered, Some(true));
        prop_assert_eq!(s.f1, 1.0);
    }
}

/// Keys mixing what real answer keys mix (issue 24, items 1-3): full IRIs
/// with local names that are words or numbers, CURIEs and bare local
/// names of the same ids, numbers in every notation (plain, signed,
/// scientific, trailing zeros, beyond what a double holds), literals in
/// SPARQL syntax, literals with slashes.
fn mixed_cell() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u8..3, 0u8..6).prop_map(|(ns, n)| format!("http://identifiers.org/ns{ns}/{n}")),
        (0u8..3, 0u8..4).prop_map(|(ns, n)| format!("https://identifiers.org/ns{ns}:{n}")),
        (0u8..3, 0u8..6).prop_map(|(ns, n)| format!("ns{ns}:{n}")),
        (0u8..3, 0u8..6).prop_map(|(ns, n)| format!("NS{ns}:{n}")),
        (0u8..3, 0u8..4).prop_map(|(ns, n)| format!("http://ex.org/ns{ns}/item{n}")),
        (0u8..4).prop_map(|n| format!("item{n}")),
        (0u8..4).prop_map(|n| format!("ns1/item{n}")),
        (0u8..6).prop_map(|n| n.to_string()),
        (0u8..6).prop_map(|n| format!("{n}.0")),
        (0u8..6).prop_map(|n| format!("{n}e0")),
        (0u8..6).prop_map(|n| format!("+{n}")),
        (-20i64..20, 0u32..4).prop_map(|(n, e)| format!("{n}e-{e}")),
        (1u32..9, 0u32..4).prop_map(|(m, k)| format!("0.{m}{}", "5".repeat(k as usize))),
        Just("1000".to_string()),
        Just("1e3".to_string()),
        Just("http://x/fips/1000".to_string()),
        Just("1.5e-400".to_string()),
        Just("-7e-500".to_string()),
        Just("2e-400".to_string()),
        Just("1e400".to_string()),
        Just("0.9995".to_string()),
        Just("1.0005".to_string()),
        Just("0.5".to_string()),
        Just("0.49975".to_string()),
        (0u8..4).prop_map(|n| format!("\"a/{n}\"")),
        (0u8..4).prop_map(|n| format!("\"{n}\"^^xsd:integer")),
        (0u8..4).prop_map(|n| format!("AC/DC {n}")),
        (0u8..4).prop_map(|n| format!("\"item{n}\"@en")),
        (0u8..3).prop_map(|n| format!("urn:x:item{n}")),
        (0u8..3).prop_map(|n| format!("x:item{n}")),
        (0u8..3).prop_map(|n| format!("http://x/Cafe\u{301}{n}")),
        (0u8..3).prop_map(|n| format!("Caf\u{e9}{n}")),
        Just("1.5e-10000".to_string()),
        Just("1.50e-10000".to_string()),
        Just(String::new()),
    ]
}

fn mixed_table() -> impl Strategy<Value = Table> {
    (1usize..4).prop_flat_map(|width| {
        let columns = (0..width).map(|i| format!("c{i}")).collect::<Vec<_>>();
        prop::collection::vec(prop::collection::vec(mixed_cell(), width), 0..7).prop_map(
            move |rows| Table {
                columns: columns.clone(),
                rows,
            },
        )
    })
}

/// A mixed key and an answer made from it: rows kept, repeated, dropped
/// or with a cell replaced by another mixed cell.
fn mixed_pair() -> impl Strategy<Value = (Table, Table)> {
    mixed_table().prop_flat_map(|key| {
        let n = key.rows.len();
        let width = key.columns.len();
        (
            Just(key),
            prop::collection::vec(
                (0..n.max(1), any::<bool>(), mixed_cell(), 0..width),
                0..(n + 3),
            ),
        )
            .prop_map(move |(key, picks)| {
                let rows = picks
                    .into_iter()
                    .map(|(i, alter, value, col)| {
                        if key.rows.is_empty() {
                            return vec![value; width];
                        }
                        let mut row = key.rows[i % key.rows.len()].clone();
                        if alter {
                            row[col] = value;
                        }
                        row
                    })
                    .collect();
                let columns = key.columns.clone();
                (key, Table { columns, rows })
            })
    })
}

/// The answer's columns under names the key does not use.
fn renamed(answer: &Table, prefix: &str) -> Table {
    Table {
        columns: (0..answer.columns.len())
            .map(|i| format!("{prefix}{i}"))
            .collect(),
        rows: answer.rows.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// Issue 24, item 1: an answer identical to the key is exact, ordered
    /// and F1 1 in both tiers, under the key's column names or others.
    #[test]
    fn an_identical_answer_is_exact_in_both_tiers_whatever_its_column_names(key in mixed_table()) {
        let options = ScoreOptions { ordered: true, ..ScoreOptions::default() };
        for answer in [key.clone(), renamed(&key, "x")] {
            let s = score(&key, &answer, &options);
            prop_assert!(s.exact && s.strict_exact, "{s:?}");
            prop_assert_eq!((s.f1, s.strict_f1), (1.0, 1.0));
            prop_assert_eq!((s.ordered, s.strict_ordered), (Some(true), Some(true)));
        }
    }

    /// The normalized tier only adds adjustments: its F1 is never below the
    /// strict tier's, and strict exactness implies normalized exactness.
    #[test]
    fn the_normalized_f1_is_never_below_the_strict_f1((key, answer) in mixed_pair(), rename in any::<bool>()) {
        let answer = if rename { renamed(&answer, "x") } else { answer };
        let s = score(&key, &answer, &ScoreOptions::default());
        prop_assert!(s.f1 >= s.strict_f1, "f1 {} < strict f1 {}: {s:?}", s.f1, s.strict_f1);
        if s.strict_exact { prop_assert!(s.exact, "{s:?}"); }
    }

    /// Shuffling the answer's rows, or renaming its columns to other names
    /// the key does not use either, never changes an unordered verdict.
    #[test]
    fn shuffling_rows_or_renaming_columns_never_changes_an_unordered_verdict((key, answer) in mixed_pair(), seed in any::<u64>()) {
        let options = ScoreOptions::default();
        let mut shuffled = answer.clone();
        let n = shuffled.rows.len();
        if n > 1 {
            shuffled.rows.rotate_left((seed as usize) % n);
            shuffled.rows.reverse();
        }
        let verdict = |a: &Table| {
            let s = score(&key, a, &options);
            (s.exact, s.strict_exact, s.f1, s.strict_f1, s.matched_rows)
        };
        prop_assert_eq!(verdict(&answer), verdict(&shuffled));
        let (x, y) = (renamed(&answer, "x"), renamed(&shuffled, "y"));
        prop_assert_eq!(verdict(&x), verdict(&y));
    }
}
