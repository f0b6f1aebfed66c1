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
