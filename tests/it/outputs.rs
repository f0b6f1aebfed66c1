//! Snapshot tests (insta) of one output of each kind, made by the real
//! command line over the `build` fixture (a copy of the demo runs root
//! `runs-expert-cross`, a study over it, prose): a page beside a Markdown
//! file, the site's index, a runs root's page, a question page, an attempt
//! page, an RTF (`paper doc`) and an SVG figure.
//!
//! The snapshots are in `tests/it/snapshots/`. A change to an output shows
//! as a failing test with the diff; when the change is meant, rewrite them
//! with `INSTA_UPDATE=always scripts/test outputs` and review the diff of
//! the `.snap` files before committing (README.md, "Development"). CI never
//! rewrites them (`INSTA_UPDATE=no` in `.ci/run`).
//!
//! What every page holds alike is masked so that a page's snapshot shows
//! what is its own: the inlined stylesheet and sort script (and the
//! script's hash in the Content-Security-Policy), and the body of each
//! inlined SVG figure (one figure has a snapshot of its own). The work
//! folder's temporary path is masked too, should an output ever name it.
//! Durations on the pages are recorded data, not timings of this run, so
//! they stay.

use std::path::Path;

use crate::support::Test;
use crate::support::fixture::{CONDITION, QUESTION, fixture};

/// Settings with the filters every snapshot here uses: `dir` (the work
/// folder) and any temporary folder's name masked.
fn settings(dir: &Path) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_omit_expression(true);
    settings.add_filter(&escape(&dir.display().to_string()), "[work folder]");
    settings.add_filter(r"\.tmp[A-Za-z0-9]{6}", "[temporary folder]");
    settings
}

/// [`settings`] and the masks for what every page holds alike.
fn page_settings(dir: &Path) -> insta::Settings {
    let mut settings = settings(dir);
    settings.add_filter(
        r"(?s)<style>.*?</style>",
        "<style>[static/style.css]</style>",
    );
    settings.add_filter(
        r"(?s)<script>.*?</script>",
        "<script>[static/sort.js]</script>",
    );
    settings.add_filter(r"sha256-[A-Za-z0-9+/]+=*", "sha256-[hash of sort.js]");
    settings.add_filter(r"(?s)(<svg\b[^>]*>).*?</svg>", "$1[figure]</svg>");
    settings
}

/// `text` as a regular expression matching itself.
fn escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = !(c.is_alphanumeric() || c == '/' || c == '_' || c == '-');
            special.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

/// The fixture after one `build`.
fn built() -> tempfile::TempDir {
    let dir = fixture();
    Test::new().current_dir(dir.path()).arg("build").run();
    dir
}

/// The file at `path` under `dir`, as text.
fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn a_page_beside_a_markdown_file() {
    let dir = built();
    let page = read(dir.path(), "README.html");
    page_settings(dir.path()).bind(|| insta::assert_snapshot!("readme_page", page));
}

#[test]
fn the_site_index() {
    let dir = built();
    let page = read(dir.path(), "site/index.html");
    page_settings(dir.path()).bind(|| insta::assert_snapshot!("site_index", page));
}

#[test]
fn a_runs_root_page() {
    let dir = built();
    let page = read(dir.path(), "site/roots/runs-demo/index.html");
    page_settings(dir.path()).bind(|| insta::assert_snapshot!("runs_root_page", page));
}

#[test]
fn a_question_page() {
    let dir = built();
    let page = read(
        dir.path(),
        &format!("site/roots/runs-demo/q/{QUESTION}.html"),
    );
    page_settings(dir.path()).bind(|| insta::assert_snapshot!("question_page", page));
}

#[test]
fn an_attempt_page() {
    let dir = built();
    let page = read(
        dir.path(),
        &format!("site/roots/runs-demo/a/{QUESTION}/{CONDITION}/attempt-1.html"),
    );
    page_settings(dir.path()).bind(|| insta::assert_snapshot!("attempt_page", page));
}

#[test]
fn the_rtf_of_a_study_summary() {
    let dir = built();
    Test::new()
        .current_dir(dir.path())
        .args(["paper", "doc", "results-demo/SUMMARY.md"])
        .stdout("wrote results-demo/SUMMARY.html\nwrote results-demo/SUMMARY.rtf\n")
        .run();
    let rtf = read(dir.path(), "results-demo/SUMMARY.rtf");
    // The figures' PNG data (thousands of hex lines) stand as one line (its
    // bytes may differ with the CPU's floating point): the picture's
    // header, its \\picw/\\pich and goals, stays exact, and
    // tests/it/paper_doc.rs looks at a rendered figure.
    let mut shown = String::new();
    let mut hex = 0usize;
    for line in rtf.lines() {
        let is_hex =
            !line.is_empty() && line.len() % 2 == 0 && line.bytes().all(|b| b.is_ascii_hexdigit());
        if is_hex {
            hex += line.len() / 2;
            continue;
        }
        if hex > 0 {
            shown.push_str("[PNG data]\n");
            hex = 0;
        }
        shown.push_str(line);
        shown.push('\n');
    }
    let rtf = shown;
    settings(dir.path()).bind(|| insta::assert_snapshot!("summary_rtf", rtf));
}

#[test]
fn an_svg_figure() {
    let dir = built();
    let svg = read(dir.path(), "results-demo/figures/exact-rate.svg");
    settings(dir.path()).bind(|| insta::assert_snapshot!("exact_rate_svg", svg));
}
