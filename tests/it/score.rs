//! `okn-benchmark score` through the real binary: settings, bad input, and
//! the JSON shape recorded with every scored result.

use crate::support::Test;
use crate::support::test::Output;
use serde_json::{Value, json};

/// `score --reference ref.csv --answer ans.csv` over the two files.
fn score(reference: &str, answer: &str) -> Test {
    Test::new()
        .write("ref.csv", reference)
        .write("ans.csv", answer)
        .args(["score", "--reference", "ref.csv", "--answer", "ans.csv"])
}

/// The first note of a scored result.
fn first_note(out: &Output) -> String {
    out.json()["notes"][0]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn precision_sets_the_significant_figures() {
    // 0.4538 is 0.6% from 0.4512: too far to snap, equal at 2 figures.
    let (key, answer) = ("v\n0.4512\n", "v\n0.4538\n");
    let json = score(key, answer).run().json();
    assert_eq!(
        (&json["exact"], &json["significant_figures"]),
        (&json!(false), &json!(6))
    );
    let json = score(key, answer).args(["--precision", "2"]).run().json();
    assert_eq!(
        (&json["exact"], &json["significant_figures"]),
        (&json!(true), &json!(2))
    );
    score(key, answer)
        .args(["--precision", "0"])
        .stderr_contains("--precision")
        .status(2)
        .run();
}

#[test]
fn the_result_carries_every_documented_key() {
    let json = score("a,b\nx,1\ny,2\n", "a,b\nx,1\n")
        .arg("--ordered")
        .run()
        .json();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "scoring_version",
            "exact",
            "strict_exact",
            "ordered",
            "strict_ordered",
            "f1",
            "row_precision",
            "row_recall",
            "strict_f1",
            "key_rows",
            "answer_rows",
            "matched_rows",
            "columns",
            "iri_normalization",
            "snapping",
            "significant_figures",
            "numeric_rel_tol",
            "notes"
        ]
    );
    assert_eq!(json["ordered"], false);
    assert_eq!(json["row_precision"], 1.0);
    assert_eq!(json["row_recall"], 0.5);
    assert_eq!(json["matched_rows"], 1);
    assert_eq!(json["columns"], "by-name");
    assert_eq!(json["numeric_rel_tol"], 0.0005);
}

#[test]
fn an_unreadable_reference_is_an_error_naming_the_line() {
    score("a,b\n1,2\n3\n", "a,b\n")
        .stdout("")
        .stderr("error: ref.csv:3: expected 2 fields (as in the header), found 1\n")
        .status(2)
        .run();
}

#[test]
fn an_empty_reference_is_an_error() {
    score("", "a\n1\n")
        .stderr("error: ref.csv: empty: ground truth needs at least a header row of column names\n")
        .status(2)
        .run();
}

#[test]
fn an_empty_answer_is_a_miss() {
    let out = score("a\n1\n", "").run();
    assert_eq!(out.json()["exact"], false);
    assert_eq!(
        first_note(&out),
        "the answer is empty: no header row and no rows"
    );
}

#[test]
fn a_missing_answer_file_is_an_error() {
    Test::new()
        .write("ref.csv", "a\n1\n")
        .args(["score", "--reference", "ref.csv", "--answer", "ans.csv"])
        .stderr("error: ans.csv: cannot read: no such file or folder\n")
        .status(2)
        .run();
}

#[test]
fn an_unterminated_quote_in_an_answer_is_a_miss_naming_the_line() {
    let out = score("a\n1\n2\n", "a\n1\n\"unterminated\n2\n").run();
    assert_eq!(out.json()["exact"], false);
    let note = first_note(&out);
    assert!(
        note.ends_with("line 3: a quoted field opened here is never closed"),
        "{note}"
    );
}

#[test]
fn an_answer_that_is_not_utf8_is_a_miss_not_a_crash() {
    let out = Test::new()
        .write("ref.csv", "a\n1\n")
        .write("ans.csv", b"a\n\xff\xfe\n")
        .args(["score", "--reference", "ref.csv", "--answer", "ans.csv"])
        .run();
    let json = out.json();
    assert_eq!(json["exact"], false);
    assert_eq!(json["columns"], Value::Null);
    let note = first_note(&out);
    assert!(note.contains("line 2: not valid UTF-8"), "{note}");
}

#[test]
fn unknown_flags_exit_2_with_did_you_mean() {
    score("a\n", "a\n")
        .arg("--orderd")
        .stderr_contains("unexpected argument '--orderd'")
        .stderr_contains("tip: a similar argument exists: '--ordered'")
        .status(2)
        .run();
}

mod regression {
    use super::*;

    // An empty answer to an empty key was a miss, with a note contradicting it.
    #[test]
    fn an_empty_answer_to_an_empty_key_is_exact_with_no_note() {
        let json = score("a,b\n", "x\n").run().json();
        assert_eq!(json["exact"], true);
        assert_eq!(json["notes"], json!([]));
    }

    // An empty line (W3C SPARQL CSV's unbound one-column value) was dropped.
    #[test]
    fn an_empty_line_in_a_one_column_answer_is_an_unbound_value() {
        let json = score("x\n\"\"\nhttp://a/b\n", "x\n\nhttp://a/b\n")
            .arg("--ordered")
            .run()
            .json();
        assert_eq!(
            (&json["exact"], &json["ordered"], &json["answer_rows"]),
            (&json!(true), &json!(true), &json!(2)),
            "{json}"
        );
    }

    // With CRLF line ends the bad record was named one line too early, and
    // with CR-only line ends always as line 1.
    #[test]
    fn a_bad_row_is_named_by_its_line_whatever_the_line_ends() {
        for end in ["\r\n", "\r"] {
            let reference = ["a,b", "1,x", "2,y", "3,z,w", ""].join(end);
            score(&reference, "a,b\n")
                .stdout("")
                .stderr("error: ref.csv:4: expected 2 fields (as in the header), found 3\n")
                .status(2)
                .run();
        }
    }
}

/// The verdict fields of a scored result: `(exact, strict_exact, f1,
/// strict_f1)`.
fn verdict(out: &Output) -> (bool, bool, f64, f64) {
    let json = out.json();
    (
        json["exact"].as_bool().unwrap(),
        json["strict_exact"].as_bool().unwrap(),
        json["f1"].as_f64().unwrap(),
        json["strict_f1"].as_f64().unwrap(),
    )
}

/// Issue 24, item 1: an answer byte for byte the key, whose key holds an
/// identifiers.org IRI and a CURIE of the same id (one column or two),
/// scored `exact: false`, F1 0.5 (0.0 with the columns renamed), because
/// the answer's CURIE was read by its local name and the key's was not.
#[test]
fn an_answer_identical_to_a_key_with_an_iri_and_a_curie_of_one_id_is_exact() {
    for key in [
        "id\nhttp://identifiers.org/hgnc/5\nHGNC:5\n",
        "gene,curie\nhttp://identifiers.org/hgnc/5,hgnc:5\nhttp://identifiers.org/hgnc/7,hgnc:7\n",
    ] {
        let renamed = key.replacen(|c: char| c.is_ascii_lowercase(), "X", 1);
        for answer in [key, renamed.as_str()] {
            let out = score(key, answer).run();
            assert_eq!(verdict(&out), (true, true, 1.0, 1.0), "{answer}");
        }
        // The key cannot tell the CURIE from the IRI by local name (in
        // the two-column key, only once its columns are one group).
        let note = first_note(&score(key, &renamed).run());
        assert!(
            note.contains("has the local name '5' of key IRI http://identifiers.org/hgnc/5"),
            "{note}"
        );
    }
}

/// Issue 24, item 2: a key holding `http://ex.org/item/5` and `5.0`
/// cannot tell them apart by local name, yet an answer naming the IRI
/// twice was exact.
#[test]
fn a_key_iri_whose_local_name_is_a_key_number_withdraws_the_reduction() {
    let key = "a\nhttp://ex.org/item/5\n5.0\n";
    let out = score(key, "a\nhttp://ex.org/item/5\nhttp://ex.org/item/5\n").run();
    assert_eq!(verdict(&out), (false, false, 0.5, 0.5));
    assert_eq!(
        first_note(&out),
        "IRI normalization withdrawn: the local name of key IRI http://ex.org/item/5 reads as the key value '5.0', so IRIs are compared in full"
    );
    assert_eq!(verdict(&score(key, key).run()), (true, true, 1.0, 1.0));
    // A local name that snaps onto a key decimal is as ambiguous.
    let out = score(
        "a\nhttp://ex.org/v/0.45356\n0.453562\n",
        "a\n0.45356\n0.45356\n",
    )
    .run();
    assert!(
        first_note(&out)
            .contains("reads as a number within relative 0.0005 of the key value '0.453562'")
    );
}

/// Issue 24, item 2: a number in the answer (`1e3`, `1000.0`) matched a
/// key IRI by local name (`.../fips/1000`), with no note. Only text naming
/// the local name does.
#[test]
fn a_number_never_matches_a_key_iri_by_local_name() {
    let key = "county\nhttp://ex.org/fips/1000\n";
    for answer in ["county\n1e3\n", "county\n1000.0\n", "county\n+1000\n"] {
        let out = score(key, answer).run();
        assert_eq!(verdict(&out), (false, false, 0.0, 0.0), "{answer}");
        assert_eq!(out.json()["notes"], json!([]), "{answer}");
    }
    for answer in ["county\n1000\n", "county\nfips/1000\n"] {
        let out = score(key, answer).run();
        assert_eq!(verdict(&out), (true, false, 1.0, 0.0), "{answer}");
        assert_eq!(
            first_note(&out),
            "1 answer cell matched a key IRI by local name (normalized tier only)"
        );
    }
}

/// Issue 24, item 3: `1.5e-400`, `-7e-500` and `0` are all `0.0` as
/// doubles, and `-7e-500` snapped onto `1.5e-400` in both tiers. A value
/// a double cannot hold never snaps and is never snapped onto; the
/// boundary of the tolerance is decided on the decimal digits.
#[test]
fn numbers_are_compared_as_decimals_not_as_doubles() {
    for answer in ["v\n-7e-500\n", "v\n0\n", "v\n2e-400\n"] {
        let out = score("v\n1.5e-400\n", answer).run();
        assert_eq!(verdict(&out), (false, false, 0.0, 0.0), "{answer}");
    }
    assert_eq!(
        verdict(&score("v\n1.5e-400\n", "v\n15e-401\n").run()),
        (true, true, 1.0, 1.0)
    );
    // Two key values doubles read as one are not "too close to snap".
    let out = score(
        "v\n1.5e-400\n2e-400\n0.453562\n",
        "v\n1.5e-400\n2e-400\n0.45356\n",
    )
    .run();
    assert_eq!(verdict(&out), (true, true, 1.0, 1.0));
    assert_eq!(out.json()["snapping"], json!(true));
    // |0.5 - 0.49975| is 0.00025, exactly 5e-4 of 0.5: within, though the
    // doubles put it a hair outside.
    assert_eq!(
        verdict(&score("v\n0.5\n", "v\n0.49975\n").run()),
        (true, true, 1.0, 1.0)
    );
    assert_eq!(
        verdict(&score("v\n0.5\n", "v\n0.4997499\n").run()),
        (false, false, 0.0, 0.0)
    );
}

/// The scorer's red team (issue 24): the local name of `urn:x:Paris` is
/// `x:Paris`, which an answer writing it bare reads as the prefixed name
/// `x:` + `Paris`, the local name of `http://a.org/Paris`; so an answer
/// naming the urn twice was exact. The key cannot tell them apart.
#[test]
fn a_bare_local_name_that_reads_as_another_key_iri_withdraws_the_reduction() {
    let key = "x\nurn:x:Paris\nhttp://a.org/Paris\n";
    let out = score(key, "x\nurn:x:Paris\nx:Paris\n").run();
    assert_eq!(verdict(&out), (false, false, 0.5, 0.5));
    assert_eq!(
        first_note(&out),
        "IRI normalization withdrawn: the local name 'x:Paris' of key IRI urn:x:Paris, written bare, reads as the local name 'Paris' of key IRI http://a.org/Paris, so IRIs are compared in full"
    );
    assert_eq!(verdict(&score(key, key).run()), (true, true, 1.0, 1.0));
}

/// The scorer's red team (issue 24): a key IRI's local name not in NFC
/// (`Cafe` + U+0301) beside the key value `Café` (composed) was not seen
/// as one value, though the normalized tier compares text in NFC; and an
/// answer naming the IRI by the composed name missed.
#[test]
fn local_names_are_compared_in_nfc() {
    let key = "x\nhttp://x/Cafe\u{301}\nCaf\u{e9}\n";
    let out = score(key, "x\nCafe\u{301}\nCaf\u{e9}\n").run();
    assert_eq!(out.json()["iri_normalization"], json!(false));
    assert_eq!(verdict(&out), (false, false, 0.5, 0.5));
    for answer in [
        "x\nCaf\u{e9}\n",
        "x\nhttp://x/Caf\u{e9}\n",
        "x\nCafe\u{301}\n",
    ] {
        let out = score("x\nhttp://x/Cafe\u{301}\n", answer).run();
        assert!(verdict(&out).0, "{answer}");
    }
}

/// The scorer's red team (issue 24): whether a cell is a number went by
/// the position of its last digit, not by its decimal exponent, so
/// `1.5e-10000` and `1.50e-10000` were two texts, and a long decimal a
/// value in range.
#[test]
fn the_exponent_limit_is_on_the_decimal_exponent() {
    assert_eq!(
        verdict(&score("x\n1.5e-10000\n", "x\n1.50e-10000\n").run()),
        (true, true, 1.0, 1.0)
    );
    let long = format!("x\n1.{}\n", "1".repeat(10_001));
    assert_eq!(
        verdict(&score(&long, "x\n1.11111\n").run()),
        (true, true, 1.0, 1.0)
    );
    let near = format!("x\n0.5{}1\n", "0".repeat(10_000));
    assert_eq!(
        verdict(&score("x\n0.5\n", &near).run()),
        (true, true, 1.0, 1.0)
    );
    // Beyond the limit the text stays text.
    assert_eq!(
        verdict(&score("x\n1e10001\n", "x\n10e10000\n").run()),
        (false, false, 0.0, 0.0)
    );
}

/// The scorer's red team (issue 24): a key whose rows repeat one text
/// took time quadratic in its rows when columns were matched by name
/// (100,000 rows of `a`: 25 s). Each repeat is one entry now; the counts
/// stay right (its speed is in `scripts/bench-score`'s territory, not a
/// timed test).
#[test]
fn a_key_whose_rows_repeat_one_text_is_counted_row_for_row() {
    let rows = |n: usize, cell: &str| format!("x,y\n{}", format!("{cell}\n").repeat(n));
    let out = score(&rows(20_000, "a,1"), &rows(19_999, "a,1")).run();
    let json = out.json();
    assert_eq!(
        (json["matched_rows"].as_u64(), json["exact"].as_bool()),
        (Some(19_999), Some(false))
    );
    let out = score(&rows(20_000, "a,1"), &rows(20_000, "a,1")).run();
    assert_eq!(verdict(&out), (true, true, 1.0, 1.0));
}

/// Issue 26, section 4 (the scorer at the floor): with renamed columns,
/// an answer row holding a key row's texts in any order (trimmed) is
/// matched by their multiset, without canonicalizing either row; rows
/// that hold other texts of equal values (`4.250`), or a quoted cell with
/// an escaped quote, are compared by their canonical values as before.
/// The verdict is the one the same answer gets with the key's column
/// names in another order (where every row is canonicalized), a repeated
/// key row is counted row for row, and the cells in IRI syntax are
/// counted alike.
#[test]
fn sorted_tuples_matched_by_their_texts_score_as_canonical_values_do() {
    let key = "place,val,label\n\
               <http://ex.org/p/one>,1.50,\"a, b\"\n\
               http://ex.org/p/two, 2.5 ,x\n\
               http://ex.org/p/two, 2.5 ,x\n\
               http://ex.org/p/three,3,\"say \"\"hi\"\"\"\n\
               http://ex.org/p/four,4.25,y\n";
    let rows = "\"a, b\",1.50,<http://ex.org/p/one>\n\
                x,2.5,http://ex.org/p/two\n\
                \"say \"\"hi\"\"\",3,http://ex.org/p/three\n\
                y,4.250,http://ex.org/p/four\n\
                z,9,http://ex.org/p/nine\n";
    let renamed = score(key, &format!("L,V,P\n{rows}")).run().json();
    let by_name = score(key, &format!("label,val,place\n{rows}")).run().json();
    assert_eq!(renamed["columns"], "sorted-tuple");
    assert_eq!(by_name["columns"], "by-name");
    assert_eq!(renamed["matched_rows"], 4, "{renamed}");
    assert_eq!(renamed["row_precision"], 0.8);
    assert_eq!(renamed["row_recall"], 0.8);
    for member in [
        "exact",
        "strict_exact",
        "f1",
        "strict_f1",
        "matched_rows",
        "key_rows",
        "answer_rows",
    ] {
        assert_eq!(renamed[member], by_name[member], "{member}");
    }
    // The notes too, but the one saying how columns were matched.
    let notes = |json: &Value| -> Vec<String> {
        json["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .filter(|n| !n.starts_with("the answer's column names differ"))
            .collect()
    };
    assert_eq!(notes(&renamed), notes(&by_name));
    assert_eq!(
        notes(&renamed),
        ["1 answer cell written in literal or IRI syntax read as its value (normalized tier only)"]
    );
    // The same texts, every row as the key wrote it: exact in both tiers.
    let same = key.replacen("place,val,label", "P,V,L", 1);
    let out = score(key, &same).run();
    assert_eq!(verdict(&out), (true, true, 1.0, 1.0));
}

/// Issue 26, section 4: a renamed answer row is matched by its texts
/// trimmed and sorted on the stack, up to 16 cells, and anything else
/// (a key row with a quoted field, a row of 17 cells) the way it was
/// before. Every such row scores as it does with the key's column names.
#[test]
fn sorted_tuples_of_every_width_and_quoting_score_as_by_name() {
    let names: Vec<String> = (0..17).map(|c| format!("c{c}")).collect();
    let renamed: Vec<String> = (0..17).rev().map(|c| format!("r{c}")).collect();
    let row = |r: usize| -> Vec<String> { (0..17).map(|c| format!("v{r}_{c}")).collect() };
    for width in [1, 16, 17] {
        let key: String = std::iter::once(names[..width].join(","))
            .chain((0..3).map(|r| row(r)[..width].join(",")))
            .map(|l| l + "\n")
            .collect();
        // The answer: rows 0 and 1 reversed and padded with spaces (row 1
        // twice, so one copy matches nothing), row 2 changed in its last cell.
        let body: Vec<String> = [0, 1, 1, 2]
            .iter()
            .map(|&r| {
                let mut cells: Vec<String> = row(r)[..width]
                    .iter()
                    .rev()
                    .map(|c| format!(" {c}\t"))
                    .collect();
                if r == 2 {
                    cells[0] = "other".to_string();
                }
                cells.join(",") + "\n"
            })
            .collect();
        let renamed_header: Vec<&str> = renamed[17 - width..].iter().map(String::as_str).collect();
        let by_name_header: Vec<&str> = names[..width].iter().rev().map(String::as_str).collect();
        let out = score(
            &key,
            &format!("{}\n{}", renamed_header.join(","), body.concat()),
        )
        .run()
        .json();
        let by_name = score(
            &key,
            &format!("{}\n{}", by_name_header.join(","), body.concat()),
        )
        .run()
        .json();
        assert_eq!(out["columns"], "sorted-tuple", "{width}: {out}");
        assert_eq!(out["matched_rows"], 2, "{width}: {out}");
        assert_eq!(out["matched_rows"], by_name["matched_rows"], "{width}");
        assert_eq!(out["f1"], by_name["f1"], "{width}");
    }
    // A key row with a quoted field, the answer's the same text unquoted.
    let key = "a,b\n\"x y\",2\n3,4\n";
    let out = score(key, "p,q\n2,x y\n4,3\n").run().json();
    assert_eq!(out["columns"], "sorted-tuple", "{out}");
    assert_eq!(out["matched_rows"], 2, "{out}");
    assert_eq!(out["exact"], true, "{out}");
}
