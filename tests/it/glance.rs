//! Issue 26, section 3, "A site that reads at a glance", through the real
//! CLI: figures titled with what they hold, tables that fit a 1280 px
//! page, comparisons named by label, the site reachable from every
//! published page, "ordered" explained where it is shown, and terminal
//! output within 100 columns. (What a browser sees of the same pages is
//! checked in `browser.rs`.)

use std::path::Path;

use crate::support::fixture::{CONDITION, fixture};
use crate::support::{okn_in, repo, stderr, stdout};

/// The terminal's width the output must fit (issue 26, section 3).
const COLUMNS: usize = 100;

/// Every line of `text` wider than [`COLUMNS`] terminal columns.
fn too_wide(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| unicode_width::UnicodeWidthStr::width(*l) > COLUMNS)
        .map(str::to_string)
        .collect()
}

/// Runs the binary in `dir` and returns its stdout, asserting success.
fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = okn_in(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?} failed:\n{}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// The fixture, built.
fn built() -> tempfile::TempDir {
    let dir = fixture();
    run_ok(dir.path(), &["build"]);
    dir
}

/// Item "terminal output fits 100 columns" and "SUMMARY's comparison
/// shows labels": `compare` printed a 210-column summary row and named
/// conditions by their folder keys (`demo-kg-all-tools__kg-named`).
#[test]
fn compare_names_conditions_by_label_within_100_columns() {
    let text = run_ok(
        &repo(),
        &[
            "compare",
            "runs-expert-cross",
            "runs-expert-cross-row-limit",
        ],
    );
    assert_eq!(too_wide(&text), Vec::<String>::new(), "{text}");
    assert!(text.contains("demo-kg, all tools · KG named\n"), "{text}");
    assert!(
        text.contains("demo-kg, all tools without get_schema, lookup_uri · KG named"),
        "{text}"
    );
    assert!(!text.contains("__kg-named"), "{text}");
    let markdown = run_ok(
        &repo(),
        &[
            "compare",
            "runs-expert-cross",
            "runs-expert-cross-row-limit",
            "--markdown",
            "-",
        ],
    );
    assert!(
        markdown.contains("| demo-kg, all tools · KG not named | 12 |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("**demo-kg, all tools · KG named**: 2 questions regressed"),
        "{markdown}"
    );
    assert!(!markdown.contains("__kg"), "{markdown}");
}

/// Item "terminal output fits 100 columns": `report` printed the
/// trajectory, agent and ground-truth lines at up to 208 columns.
#[test]
fn report_fits_100_columns() {
    let dir = tempfile::tempdir().unwrap();
    crate::support::fixture::copy_dir(
        &repo().join("runs-expert-cross"),
        &dir.path().join("runs-expert-cross"),
    );
    // Its corpus, for the ground-truth line, and the corpus's defaults of
    // trajectory expectations its records are checked against.
    crate::support::fixture::copy_dir(&repo().join("demo"), &dir.path().join("demo"));
    std::fs::copy(
        repo().join("okn-benchmark.toml"),
        dir.path().join("okn-benchmark.toml"),
    )
    .unwrap();
    let text = run_ok(dir.path(), &["report", "runs-expert-cross"]);
    assert_eq!(too_wide(&text), Vec::<String>::new(), "{text}");
    // What was wrapped is all there: the verification hint, whole.
    let joined = crate::support::flat(&text);
    assert!(
        joined.contains(
            "('okn-benchmark reference --corpus demo/benchmarks-cross --verify' checks it)"
        ),
        "{text}"
    );
}

/// Item "the catalog comparison page in a server maintainer's words":
/// it read `known_gap_fixed → known_gap_open`, a bare "expectation 3" and
/// bare IRIs; and `catalog compare` ran past 100 columns.
#[test]
fn catalog_compare_speaks_a_maintainers_words_within_100_columns() {
    let text = run_ok(
        &repo(),
        &[
            "catalog",
            "compare",
            "catalogs/published/demo-kg-exact-first",
            "catalogs/published/demo-kg-fuzzy",
        ],
    );
    assert_eq!(too_wide(&text), Vec::<String>::new(), "{text}");
    let joined = crate::support::flat(&text);
    for internal in ["known_gap", "(expectation ", "→"] {
        assert!(!joined.contains(internal), "'{internal}' in:\n{text}");
    }
    assert!(
        joined.contains(
            "the top candidate changed: in the baseline diabetes mellitus \
             (http://purl.obolibrary.org/obo/DOID_9351); in the candidate type 2 diabetes \
             mellitus (http://purl.obolibrary.org/obo/DOID_9352)"
        ),
        "{text}"
    );
    assert!(
        joined.contains(
            "the quality check count_at_most (the query's expectation no. 5): in the baseline \
             it passes, fixing a known gap; in the candidate it fails, as a known gap"
        ),
        "{text}"
    );
}

/// Item "every figure says in its title what it holds": the index showed
/// three heatmaps per study, each titled "Exact rate per question and
/// condition".
#[test]
fn every_figure_title_names_what_it_holds() {
    let dir = built();
    let figures = dir.path().join("results-demo/figures");
    let mut titles = Vec::new();
    for entry in std::fs::read_dir(&figures).unwrap() {
        let svg = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let title = svg
            .split_once("<title>")
            .and_then(|(_, rest)| rest.split_once("</title>"))
            .map(|(t, _)| t.to_string())
            .unwrap();
        titles.push(title);
    }
    titles.sort();
    assert!(titles.len() >= 6, "{titles:?}");
    // The fixture's study: two conditions played by the scripted agent.
    let subject = " — 2 conditions, played by okn-benchmark 0.1.0 (scripted agent)";
    for title in &titles {
        assert!(title.ends_with(subject), "{title}");
    }
    assert!(
        titles.contains(&format!("Exact rate per question and condition{subject}")),
        "{titles:?}"
    );
    let index = std::fs::read_to_string(dir.path().join("site/index.html")).unwrap();
    assert!(
        index.contains("<title>Fixture: results</title>"),
        "the index names the project"
    );
    assert!(index.contains("<h1>Fixture: results</h1>"));
}

/// Items "SUMMARY.html and README.html get the site's search box and a
/// way back" and "say where ordered is that it counts ordered keys only".
#[test]
fn published_pages_reach_the_site_and_explain_ordered() {
    let dir = built();
    let d = dir.path();
    for (page, back) in [
        ("results-demo/SUMMARY.html", "../site/index.html"),
        ("README.html", "site/index.html"),
    ] {
        let html = std::fs::read_to_string(d.join(page)).unwrap();
        assert!(
            html.contains(&format!(
                "<nav class=\"crumbs\"><a href=\"{back}\">Results</a>"
            )),
            "{page}: no way back to the site"
        );
        assert!(
            html.contains("data-search-index=\"")
                && html.contains(&format!(
                    "data-search-index=\"{}\"",
                    back.replace("index.html", "search-index.js")
                )),
            "{page}: no search box"
        );
    }
    // A runs root's page stays the one `freeze` makes, without the site.
    let root_page = std::fs::read_to_string(d.join("runs-demo/README.html")).unwrap();
    assert!(!root_page.contains("<div class=\"search\""));
    let note = "Ordered is the exact rate over the questions whose answer key orders its rows";
    let summary = std::fs::read_to_string(d.join("results-demo/SUMMARY.md")).unwrap();
    assert!(summary.contains(note), "SUMMARY.md");
    let readme = std::fs::read_to_string(d.join("runs-demo/README.md")).unwrap();
    assert!(readme.contains(note), "the root's README.md");
    let site = std::fs::read_to_string(d.join("site/roots/runs-demo/index.html")).unwrap();
    assert!(site.contains(note), "the root's site page");
    let tables = run_ok(d, &["paper", "tables"]);
    assert!(tables.contains(note), "paper tables:\n{tables}");
}

/// Item "wide tables fit 1280 px": the root's conditions table ran past
/// the page after "mean F1". A wide table is split into tables that each
/// repeat the first column; every column is kept, in order.
#[test]
fn wide_tables_are_split_keeping_their_first_column() {
    let dir = built();
    let d = dir.path();
    let site = std::fs::read_to_string(d.join("site/roots/runs-demo/index.html")).unwrap();
    let conditions = site
        .split("<h2 id=\"conditions\">")
        .nth(1)
        .and_then(|s| s.split("<h2 id=\"questions\">").next())
        .unwrap();
    let heads: Vec<&str> = conditions
        .split("<thead><tr>")
        .skip(1)
        .map(|t| t.split("</tr></thead>").next().unwrap())
        .collect();
    assert!(heads.len() > 1, "not split:\n{conditions}");
    let mut columns = Vec::new();
    for head in &heads {
        assert!(head.starts_with("<th>condition</th>"), "{head}");
        columns.extend(
            head.split("</th>")
                .skip(1)
                .filter(|c| !c.is_empty())
                .map(|c| c.rsplit('>').next().unwrap().to_string()),
        );
    }
    // Every column once, in the order the table describes them.
    for pair in [
        ("agent", "exact"),
        ("exact", "mean F1"),
        ("mean F1", "blocked"),
    ] {
        let a = columns.iter().position(|c| c == pair.0).unwrap();
        let b = columns.iter().position(|c| c == pair.1).unwrap();
        assert!(a < b, "{columns:?}");
    }
    let unique: std::collections::BTreeSet<&String> = columns.iter().collect();
    assert_eq!(unique.len(), columns.len(), "{columns:?}");
    // The condition's label, not its key, names each row.
    assert!(!conditions.contains(CONDITION));
    // The root's README.md is split the same way.
    let readme = std::fs::read_to_string(d.join("runs-demo/README.md")).unwrap();
    let section = readme.split("## Conditions").nth(1).unwrap();
    let tables = section
        .split("\n\n")
        .take_while(|b| !b.starts_with("##"))
        .filter(|b| b.starts_with("| condition |"))
        .count();
    assert!(tables > 1, "{section}");
}
