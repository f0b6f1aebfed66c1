//! The fast scorer against the plain model of its rules (`score_model`):
//! generated pairs of tables mixing IRIs in every spelling, local names,
//! prefixed names, quoted and tagged literals, integers, decimals near one
//! another and near a snap, repeated rows and renamed columns; each scored
//! by both, in every tier and order, from tables and from CSV text, must
//! give the same `Score`.
use crate::score_model;
use okn_benchmark::score::{ScoreOptions, score, score_rows};
use okn_benchmark::table::{CsvText, Table};
use proptest::prelude::*;

fn cell() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u8..3, 0u8..4).prop_map(|(ns, n)| format!("http://ex.org/ns{ns}/item{n}")),
        (0u8..3, 0u8..4).prop_map(|(ns, n)| format!("<http://ex.org/ns{ns}/item{n}>")),
        (0u8..4).prop_map(|n| format!("item{n}")),
        (0u8..4).prop_map(|n| format!("ns0/item{n}")),
        (0u8..4).prop_map(|n| format!("ex:item{n}")),
        (0u8..4).prop_map(|n| format!("\"item{n}\"@en")),
        (0u8..4).prop_map(|n| format!("\"it\\\"em{n}\"")),
        (0u8..4).prop_map(|n| format!("\"http://ex.org/ns0/item{n}\"")),
        (-20i64..20).prop_map(|n| n.to_string()),
        (-20i64..20).prop_map(|n| format!("{n}.0")),
        (-2000i64..2000, 1u32..5)
            .prop_map(|(n, scale)| format!("{}", n as f64 / 10f64.powi(scale as i32))),
        (0u32..6).prop_map(|k| format!("{}", 1.0 + k as f64 * 0.0003)),
        (0u32..6).prop_map(|k| format!("\"{}\"^^xsd:decimal", 1.0 + k as f64 * 0.0003)),
        (0u32..6).prop_map(|k| format!("{:.4}", 2.5 + k as f64 * 0.01)),
        Just("0.45356".to_string()),
        Just("0.453562".to_string()),
        Just("14290".to_string()),
        Just("14290.37".to_string()),
        Just("1e-7".to_string()),
        Just("0.0000001".to_string()),
        Just("9007199254740993".to_string()),
        Just("12345678901234567890.123456789012345678".to_string()),
        Just("12345678901234567890.123456789012345679".to_string()),
        Just("007".to_string()),
        Just("caf\u{e9}".to_string()),
        Just("cafe\u{301}".to_string()),
        Just(" x ".to_string()),
        Just("a,b".to_string()),
        Just("say \"hi\"".to_string()),
        Just("two\nlines".to_string()),
        Just("urn:isbn:1".to_string()),
        Just("\"http://ex.org/ns1/it\\em1\"".to_string()),
        Just("http://ex.org/ns2/\"q\"".to_string()),
        Just("\"q\"".to_string()),
        Just("ns2/\"q\"".to_string()),
        Just("isbn:1".to_string()),
        Just("http://x/5".to_string()),
        Just("5".to_string()),
        // Issue 24, items 1-3: an IRI and a CURIE of one id, numeric local
        // names beside numbers in other notations, numbers a double
        // cannot hold, and values at the snapping boundary.
        Just("http://identifiers.org/hgnc/5".to_string()),
        Just("hgnc:5".to_string()),
        Just("HGNC:5".to_string()),
        Just("https://identifiers.org/hgnc:5".to_string()),
        Just("\"hgnc/5\"".to_string()),
        Just("http://x/fips/1000".to_string()),
        Just("1e3".to_string()),
        Just("1000.0".to_string()),
        Just("5.0".to_string()),
        Just("5e0".to_string()),
        Just("http://x/0.45356".to_string()),
        Just("1.5e-400".to_string()),
        Just("-7e-500".to_string()),
        Just("2e-400".to_string()),
        Just("0".to_string()),
        Just("1e400".to_string()),
        Just("0.9995".to_string()),
        Just("1.0005".to_string()),
        Just("0.49975".to_string()),
        Just("0.5".to_string()),
        Just("1.0".to_string()),
        // The scorer's red team: a local name with a prefix of its own, a
        // local name not in NFC, numbers at the exponent limit, repeats.
        Just("urn:x:Paris".to_string()),
        Just("http://a.org/Paris".to_string()),
        Just("x:Paris".to_string()),
        Just("Paris".to_string()),
        Just("http://x/Cafe\u{301}".to_string()),
        Just("http://x/Caf\u{e9}".to_string()),
        Just("Cafe\u{301}".to_string()),
        Just("Caf\u{e9}".to_string()),
        Just("1.5e-10000".to_string()),
        Just("1.50e-10000".to_string()),
        Just("15e-10001".to_string()),
        Just("\"Paris\"@fr".to_string()),
        "[a-c]{0,2}",
        Just(String::new()),
    ]
}

fn table(width: usize, names: Vec<String>) -> impl Strategy<Value = Table> {
    prop::collection::vec(prop::collection::vec(cell(), width), 0..8).prop_map(move |rows| Table {
        columns: names.clone(),
        rows,
    })
}

fn pair() -> impl Strategy<Value = (Table, Table)> {
    (1usize..4).prop_flat_map(|width| {
        let names: Vec<String> = (0..width).map(|i| format!("c{i}")).collect();
        (table(width, names.clone()), 0u8..4, any::<u64>()).prop_flat_map(
            move |(key, mode, seed)| {
                let width = key.columns.len();
                let n = key.rows.len();
                (
                    Just(key),
                    Just(mode),
                    Just(seed),
                    prop::collection::vec(
                        (0..n.max(1), any::<bool>(), cell(), 0..width),
                        0..(n + 3),
                    ),
                )
                    .prop_map(move |(key, mode, seed, picks)| {
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
                        let mut columns = key.columns.clone();
                        match mode {
                            1 => columns = (0..width).map(|i| format!("x{i}")).collect(),
                            2 => {
                                // Same names, rotated columns.
                                let k = (seed as usize) % width;
                                columns.rotate_left(k);
                                for r in &mut rows {
                                    r.rotate_left(k);
                                }
                            }
                            3 if width > 1 => columns[1] = columns[0].clone(),
                            _ => {}
                        }
                        (key, Table { columns, rows })
                    })
            },
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_scorer_is_its_model((key, answer) in pair(), ordered in any::<bool>(), figures in prop_oneof![Just(6u32), 1u32..8]) {
        let options = ScoreOptions { ordered, significant_figures: figures, ..ScoreOptions::default() };
        let want = score_model::score(&key, &answer, &options);
        let got = score(&key, &answer, &options);
        prop_assert_eq!(&got, &want);
        let (k, a) = (key.to_csv(), answer.to_csv());
        let (kt, at) = (CsvText::read(k.as_bytes()).unwrap(), CsvText::read(a.as_bytes()).unwrap());
        let via_csv = score_rows(&kt, &at, &options);
        let tables = score(&Table::from_csv(k.as_bytes()).unwrap(), &Table::from_csv(a.as_bytes()).unwrap(), &options);
        prop_assert_eq!(&via_csv, &tables);
        prop_assert_eq!(score_model::score(&Table::from_csv(k.as_bytes()).unwrap(), &Table::from_csv(a.as_bytes()).unwrap(), &options), tables);
    }
}

fn big_pair() -> impl Strategy<Value = (Table, Table)> {
    (
        1usize..60,
        any::<u64>(),
        0u8..3,
        prop::collection::vec(any::<u16>(), 0..20),
    )
        .prop_map(|(n, seed, mode, edits)| {
            let mut state = seed | 1;
            let mut next = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            };
            let key = Table {
                columns: vec![
                    "place".into(),
                    "gene".into(),
                    "label".into(),
                    "v".into(),
                    "n".into(),
                ],
                rows: (0..n)
                    .map(|i| {
                        let r = next();
                        vec![
                            format!("https://ex.org/place/P{i}"),
                            format!("http://purl.obolibrary.org/obo/G_{}", r % 7),
                            format!("Place {}", r % 5),
                            format!("{:.5e}", 0.001 * 1.0011f64.powi((i * 7919 % 1000) as i32)),
                            (r % 9).to_string(),
                        ]
                    })
                    .collect(),
            };
            let mut rows: Vec<Vec<String>> = key
                .rows
                .iter()
                .rev()
                .map(|r| {
                    let v: f64 = r[3].parse().unwrap();
                    vec![
                        r[4].clone(),
                        format!("{v:.4e}"),
                        r[2].clone(),
                        r[1].rsplit('/').next().unwrap().to_string(),
                        format!("<{}>", r[0]),
                    ]
                })
                .collect();
            for e in edits {
                let i = e as usize % rows.len();
                match e % 4 {
                    0 => {
                        let r = rows[i].clone();
                        rows.push(r)
                    }
                    1 => {
                        rows.remove(i);
                        if rows.is_empty() {
                            break;
                        }
                    }
                    2 => rows[i][0] = "5".into(),
                    _ => rows[i][1] = "0.00100".into(),
                }
            }
            let columns = match mode {
                0 => vec!["n", "v", "label", "gene", "place"],
                1 => vec!["a", "b", "c", "d", "e"],
                _ => vec!["n", "v", "label", "gene", "gene"],
            };
            (
                key,
                Table {
                    columns: columns.into_iter().map(String::from).collect(),
                    rows,
                },
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_scorer_is_its_model_on_larger_tables((key, answer) in big_pair(), ordered in any::<bool>()) {
        let options = ScoreOptions { ordered, ..ScoreOptions::default() };
        let want = score_model::score(&key, &answer, &options);
        prop_assert_eq!(&score(&key, &answer, &options), &want);
        prop_assert_eq!(&score(&key, &key, &options), &score_model::score(&key, &key, &options));
    }
}
