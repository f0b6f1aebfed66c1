//! The fuzz targets' bodies on stable (issue 24, "Done when"): each
//! function of `okn_benchmark::fuzzing` (what `fuzz/fuzz_targets/*.rs`
//! call) on every file of its seed corpus, `fuzz/corpus/TARGET/`, and on
//! inputs generated here (arbitrary bytes, and text built from the pieces
//! each parser splits on). None may panic; an abort or a hang fails the
//! test binary. `cargo fuzz run TARGET` goes further (ARCHITECTURE.md,
//! "Fuzzing"). A crashing input a fuzzer finds is kept as a named test in
//! `regression` below.

use okn_benchmark::fuzzing;
use proptest::prelude::*;

use crate::support::repo;

/// Every seed of `target`, run through `body`; there must be some.
fn seeds(target: &str, body: fn(&[u8])) {
    let dir = repo().join("fuzz/corpus").join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        body(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n > 0, "no seed in {}", dir.display());
}

#[test]
fn every_seed_of_every_target_runs_without_a_panic() {
    seeds("csv", fuzzing::csv);
    seeds("rq", fuzzing::rq);
    seeds("toml", fuzzing::toml);
    seeds("json_records", fuzzing::json_records);
    seeds("markdown", fuzzing::markdown);
    seeds("svg", fuzzing::svg);
    seeds("jsonrpc_line", fuzzing::jsonrpc_line);
}

/// Text from the characters a parser of each kind splits on, with
/// non-ASCII (combining marks, emoji, a BOM) among them.
fn text(pieces: &'static str) -> impl Strategy<Value = Vec<u8>> {
    proptest::string::string_regex(pieces)
        .unwrap()
        .prop_map(String::into_bytes)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn csv_never_panics(data in prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..200),
        text("[a,\"\r\n\u{feff}é😀 ]{0,120}"),
    ]) {
        fuzzing::csv(&data);
    }

    #[test]
    fn rq_never_panics(data in prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..200),
        text("(#\\+ (summary|tags|x):? ?[a-z\",\t ]{0,10}\r?\n){0,4}[SELECTVALUS{}()\\[\\]<>?\"'# \n\\\\a-z.;,|/^!+*-]{0,120}"),
    ]) {
        fuzzing::rq(&data);
    }

    #[test]
    fn toml_never_panics(data in prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..120),
        text("([a-z\\[\\]{}=,.\"' \n0-9#]|name|upstream|transport|command|args|stdio|http|url|headers|env|conditions|key|root){0,60}"),
    ]) {
        fuzzing::toml(&data);
    }

    #[test]
    fn json_records_never_panic(which in 0u8..7, body in prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..120),
        text("[{}\\[\\]\",:0-9a-z.e+\\-\\\\ ]{0,100}"),
        text("\\{\"(format|questions|attempts|calls|summary|index|tool|ok|exact|f1)\": ?(1|2|99|-1|1e999|null|true|\"x\"|\\[\\]|\\{\\}|\\[\\{\\}\\])\\}"),
    ]) {
        let mut data = vec![which];
        data.extend(body);
        fuzzing::json_records(&data);
    }

    #[test]
    fn markdown_never_panics(data in text("([ a-z<>=\"'/#!\\[\\]()*_`|~\\\\:\n>-]|<svg>|</svg>|<img src=fig.svg>|<meta http-equiv=refresh>|<style>|javascript:|&amp;|&#x|中|😀|\u{301}){0,80}")) {
        fuzzing::markdown(&data);
    }

    #[test]
    fn svg_never_panics(data in text("(<svg( xmlns=\"http://www.w3.org/2000/svg\")?>|</svg>|<g>|</g>|<rect id=\"[a-z]{0,3}\"/>|<use href=\"#[a-z]{0,2}\"/>|<meta http-equiv=\"refresh\"/>|<style>|</style>|url\\(#[a-z]\\)|[ a-z<>=\"'/#:()中😀]){0,60}")) {
        fuzzing::svg(&data);
    }

    #[test]
    fn jsonrpc_lines_never_panic(data in prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..200),
        text("\\{\"jsonrpc\":\"2.0\",(\"id\":(1|\"a\"|null|\\[\\]|1e400|-0),)?\"method\":\"(tools/call|initialize|x)\"(,\"params\":[{}\\[\\]\",:0-9a-z]{0,40})?\\}"),
    ]) {
        fuzzing::jsonrpc_line(&data);
    }
}

/// Depths that used to abort (issue 24, item 19) and more, for every
/// parser: each answers or refuses, none overflows the stack.
#[test]
fn deep_nesting_in_every_parser_is_answered_not_an_abort() {
    let n = 20_000;
    fuzzing::rq(format!("SELECT * {{ FILTER({}1{}) }}", "(".repeat(n), ")".repeat(n)).as_bytes());
    fuzzing::csv("\"".repeat(n).as_bytes());
    fuzzing::toml(format!("a = {}1{}", "[".repeat(n), "]".repeat(n)).as_bytes());
    fuzzing::toml(format!("a = {}", "{ b = ".repeat(n)).as_bytes());
    let json = format!("{}1{}", "[".repeat(n), "]".repeat(n));
    for which in 0..7u8 {
        let mut data = vec![which];
        data.extend(json.as_bytes());
        fuzzing::json_records(&data);
    }
    fuzzing::jsonrpc_line(
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{}1{}}}",
            "[".repeat(n),
            "]".repeat(n)
        )
        .as_bytes(),
    );
    // Markdown nests in blocks and in raw HTML; the HTML5 parser's work
    // grows with depth times length, so a shallower text keeps the test
    // short (each is still far past any page's depth).
    let n = 2_000;
    for md in [
        ">".repeat(n),
        "- ".repeat(n),
        "[".repeat(n),
        "*".repeat(n),
        "<div>".repeat(n),
        format!("{}x{}", "<span>".repeat(n), "</span>".repeat(n)),
        format!("{}x", "1. ".repeat(n)),
    ] {
        fuzzing::markdown(md.as_bytes());
    }
}

/// Issue 24, item 19: a 20,000-deep SVG aborted `build` and `paper doc`.
#[test]
fn a_20000_deep_svg_is_refused_not_an_abort() {
    let n = 20_000;
    fuzzing::svg(format!("<svg>{}{}</svg>", "<g>".repeat(n), "</g>".repeat(n)).as_bytes());
    fuzzing::svg(format!("<svg>{}", "<g>".repeat(n)).as_bytes());
}

mod regression {
    //! One test per crashing input a fuzzer found, named after it; the
    //! input is kept in the test.

    #[allow(unused_imports)]
    use super::*;
}
