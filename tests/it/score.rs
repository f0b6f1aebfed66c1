//! `okn-benchmark score` through the real binary: settings, bad input, and
//! the JSON shape recorded with every scored result.

use crate::support::{okn_in, stderr, stdout, work_dir};
use serde_json::Value;

fn score(files: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let dir = work_dir(files);
    let out = okn_in(dir.path())
        .args(["score", "--reference", "ref.csv", "--answer", "ans.csv"])
        .args(args)
        .output()
        .unwrap();
    (out.status.code().unwrap(), stdout(&out), stderr(&out))
}

#[test]
fn precision_sets_the_significant_figures() {
    // 0.4538 is 0.6% from 0.4512: too far to snap, equal at 2 figures.
    let files = [("ref.csv", "v\n0.4512\n"), ("ans.csv", "v\n0.4538\n")];
    let (code, out, _) = score(&files, &[]);
    assert_eq!(code, 0);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["exact"], false);
    assert_eq!(json["significant_figures"], 6);
    let (_, out, _) = score(&files, &["--precision", "2"]);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["exact"], true);
    assert_eq!(json["significant_figures"], 2);
    let (code, _, err) = score(&files, &["--precision", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("--precision"), "{err}");
}

#[test]
fn the_result_carries_every_documented_key() {
    let (code, out, _) = score(
        &[("ref.csv", "a,b\nx,1\ny,2\n"), ("ans.csv", "a,b\nx,1\n")],
        &["--ordered"],
    );
    assert_eq!(code, 0);
    let json: Value = serde_json::from_str(&out).unwrap();
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
    let (code, out, err) = score(&[("ref.csv", "a,b\n1,2\n3\n"), ("ans.csv", "a,b\n")], &[]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert_eq!(
        err,
        "error: ref.csv:3: expected 2 fields (as in the header), found 1\n"
    );
}

#[test]
fn an_empty_reference_is_an_error_and_an_empty_answer_is_a_miss() {
    let (code, _, err) = score(&[("ref.csv", ""), ("ans.csv", "a\n1\n")], &[]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "error: ref.csv: empty: ground truth needs at least a header row of column names\n"
    );
    let (code, out, _) = score(&[("ref.csv", "a\n1\n"), ("ans.csv", "")], &[]);
    assert_eq!(code, 0);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["exact"], false);
    assert_eq!(
        json["notes"][0],
        "the answer is empty: no header row and no rows"
    );
    // Against an empty key, an empty answer is the empty answer: exact, no
    // contradictory note (review finding).
    let (_, out, _) = score(&[("ref.csv", "a,b\n"), ("ans.csv", "x\n")], &[]);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["exact"], true);
    assert_eq!(json["notes"], serde_json::json!([]));
}

/// Review finding: W3C SPARQL CSV writes an unbound value of a one-column
/// result as an empty line.
#[test]
fn an_empty_line_in_a_one_column_answer_is_an_unbound_value() {
    let (code, out, _) = score(
        &[
            ("ref.csv", "x\n\"\"\nhttp://a/b\n"),
            ("ans.csv", "x\n\nhttp://a/b\n"),
        ],
        &["--ordered"],
    );
    assert_eq!(code, 0);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (json["exact"].as_bool(), json["ordered"].as_bool()),
        (Some(true), Some(true)),
        "{json}"
    );
    assert_eq!(json["answer_rows"], 2);
}

#[test]
fn an_unterminated_quote_in_an_answer_is_a_miss_naming_the_line() {
    let (code, out, _) = score(
        &[
            ("ref.csv", "a\n1\n2\n"),
            ("ans.csv", "a\n1\n\"unterminated\n2\n"),
        ],
        &[],
    );
    assert_eq!(code, 0);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["exact"], false);
    assert!(
        json["notes"][0]
            .as_str()
            .unwrap()
            .ends_with("line 3: a quoted field opened here is never closed"),
        "{json}"
    );
}

#[test]
fn a_missing_answer_file_is_an_error() {
    let (code, _, err) = score(&[("ref.csv", "a\n1\n")], &[]);
    assert_eq!(code, 2);
    assert_eq!(err, "error: ans.csv: cannot read: no such file or folder\n");
}

#[test]
fn an_answer_that_is_not_utf8_is_a_miss_not_a_crash() {
    let dir = work_dir(&[("ref.csv", "a\n1\n")]);
    std::fs::write(dir.path().join("ans.csv"), b"a\n\xff\xfe\n").unwrap();
    let out = okn_in(dir.path())
        .args(["score", "--reference", "ref.csv", "--answer", "ans.csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["exact"], false);
    assert_eq!(json["columns"], Value::Null);
    assert!(
        json["notes"][0]
            .as_str()
            .unwrap()
            .contains("line 2: not valid UTF-8"),
        "{json}"
    );
}

#[test]
fn unknown_flags_exit_2_with_usage() {
    let (code, _, err) = score(&[("ref.csv", "a\n"), ("ans.csv", "a\n")], &["--orderd"]);
    assert_eq!(code, 2);
    assert!(err.contains("unexpected argument '--orderd'"), "{err}");
    assert!(err.contains("--ordered"), "did-you-mean: {err}");
}
