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
