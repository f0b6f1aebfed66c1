//! Publishing across agent hosts (issue 25, section 5): a runs root and a
//! study that hold conditions of two hosts, recorded through the real
//! `run` (the scripted agent, and the built-in openai loop against
//! `standin-model`), then published by the real `build` and `paper
//! tables`. Every table, figure and page must name each condition's host,
//! the host's version and the model, and an attempt page must show the
//! host report, "not stated" where the host stated nothing.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{KillOnDrop, Test};

/// The version every host of this program states (the scripted agent and
/// the openai loop are this program).
const VERSION: &str = env!("CARGO_PKG_VERSION");

const SCRIPTED: &str = "demo-kg-all-tools__kg-named";
const OPENAI: &str = "demo-kg-all-tools-openai__kg-named";

/// Starts `standin-model` playing the oracle over the single corpus;
/// returns it and its API root (`http://../v1`).
fn standin() -> (KillOnDrop, String) {
    let (child, url) = crate::support::standin_single("oracle", None, &[]);
    (child, format!("{url}/v1"))
}

/// `run` over the first question of the single corpus into `out`, with
/// the agent flags `agent`.
fn record(out: &Path, agent: &[&str]) {
    Test::in_repo()
        .args([
            "run",
            "--corpus",
            "demo/benchmarks-single",
            "--tools",
            "all-tools",
            "--kg-hint",
            "tags",
            "--profile",
            "profiles/demo-kg.local.toml",
            "--limit",
            "1",
            "--agent-timeout",
            "120",
        ])
        .args(agent)
        .arg("--out")
        .arg(out)
        .env("OKN_TEST_OPENAI_KEY", "sk-okn-publishing-test")
        .run();
}

/// A work folder with a runs root `runs-hosts` of two conditions, the
/// scripted oracle and the openai loop against the stand-in, each over
/// the corpus's first question, and a study over both.
fn two_host_study() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("runs-hosts");
    record(&root, &["--agent", "scripted:oracle"]);
    let (_server, url) = standin();
    record(
        &root,
        &[
            "--agent",
            "openai:gpt-standin-1",
            "--base-url",
            &url,
            "--api-key-env",
            "OKN_TEST_OPENAI_KEY",
        ],
    );
    let study = dir.path().join("results-hosts");
    std::fs::create_dir_all(&study).unwrap();
    std::fs::write(
        study.join("study.toml"),
        format!(
            "title = \"One question, two hosts\"\nroots = [\"../runs-hosts\"]\nfigures = \
             [\"exact-rate\", \"wall-time\"]\nbaseline = \"scripted\"\n\n[[conditions]]\nkey = \
             \"scripted\"\nname = \"{SCRIPTED}\"\n\n[[conditions]]\nkey = \"openai\"\nname = \
             \"{OPENAI}\"\n"
        ),
    )
    .unwrap();
    std::fs::write(
        study.join("SUMMARY.md"),
        "# Two hosts\n\n<!-- okn:rates -->\n<!-- /okn:rates -->\n\n<!-- okn:questions -->\n\
         <!-- /okn:questions -->\n\n<!-- okn:figure name=exact-rate -->\n<!-- /okn:figure -->\n",
    )
    .unwrap();
    Test::new().current_dir(dir.path()).arg("build").run();
    dir
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The cells of the Markdown table row whose first cell is `first`.
fn row(markdown: &str, first: &str) -> Vec<String> {
    markdown
        .lines()
        .find(|l| l.starts_with(&format!("| {first} |")))
        .unwrap_or_else(|| panic!("no row {first:?} in\n{markdown}"))
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

/// The one attempt page of condition `name` under the site.
fn attempt_page(dir: &Path, name: &str) -> String {
    let pages: Vec<PathBuf> = walkdir::WalkDir::new(dir.join("site/roots"))
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| {
            p.file_name().is_some_and(|n| n == "attempt-1.html")
                && p.parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == name)
        })
        .collect();
    assert_eq!(pages.len(), 1, "{pages:?}");
    read(&pages[0])
}

/// The `episode.json` of condition `name`'s one attempt.
fn episode(dir: &Path, name: &str) -> Value {
    let found: Vec<PathBuf> = walkdir::WalkDir::new(dir.join("runs-hosts"))
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| {
            p.file_name().is_some_and(|n| n == "episode.json")
                && p.ancestors()
                    .nth(2)
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == name)
        })
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    serde_json::from_str(&read(&found[0])).unwrap()
}

/// The text an SVG figure draws, its `<text>` elements' contents joined
/// by spaces (a long note is wrapped over several).
fn svg_text(svg: &str) -> String {
    svg.split("<text ")
        .skip(1)
        .filter_map(|t| {
            t.split_once('>')?
                .1
                .split_once("</text>")
                .map(|(x, _)| x.trim())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The row of the host-report table on an attempt page whose first cell
/// is `figure`, as its value cell's text.
fn reported(page: &str, figure: &str) -> String {
    let start = format!("<tr><td>{figure}</td><td>");
    let at = page
        .find(&start)
        .unwrap_or_else(|| panic!("no host report row {figure:?} in\n{page}"))
        + start.len();
    page[at..].split("</td>").next().unwrap().to_string()
}

/// Issue 25, section 5: a root and a study holding conditions of two
/// agent hosts name each condition's host, the host's version and the
/// model in the root's README (and its HTML page), the site's root page
/// and index, the study's regions and figures, and the paper's tables;
/// the condition played by a host other than claude and the scripted
/// agent carries its host in its label, so the two read apart.
#[test]
fn conditions_of_two_hosts_are_published_with_host_version_and_model() {
    let dir = two_host_study();
    let d = dir.path();
    let scripted_host = format!("okn-benchmark {VERSION} (scripted agent)");
    let openai_host = format!("okn-benchmark {VERSION} (openai loop)");
    let openai_label = "demo-kg, all tools · KG named · openai";

    // The root's README: agent, host and model columns.
    let readme = read(&d.join("runs-hosts/README.md"));
    let scripted = row(&readme, "demo-kg, all tools · KG named");
    assert_eq!(
        scripted[1..4],
        ["scripted:oracle", &scripted_host, "—"],
        "{readme}"
    );
    let openai = row(&readme, openai_label);
    assert_eq!(
        openai[1..4],
        ["openai:gpt-standin-1", &openai_host, "gpt-standin-1"],
        "{readme}"
    );
    let head = row(&readme, "condition");
    assert_eq!(head[1..4], ["agent", "host", "model"]);
    let columns: String = readme
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| ---"))
        .take(3)
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            format!("| {} |\n", cells[..5].join(" | "))
        })
        .collect();
    insta::assert_snapshot!("two_hosts_readme_conditions", columns);

    // Its HTML page and the site's root page.
    let readme_page = read(&d.join("runs-hosts/README.html"));
    let root_page = read(&d.join("site/roots/runs-hosts/index.html"));
    for page in [&readme_page, &root_page] {
        for text in [openai_host.as_str(), scripted_host.as_str(), openai_label] {
            assert!(page.contains(text), "{text} missing:\n{page}");
        }
        assert!(page.contains("<td>gpt-standin-1</td>"), "{page}");
    }

    // The study: the rates region's columns, the agents named under the
    // questions region and in the figure.
    let summary = read(&d.join("results-hosts/SUMMARY.md"));
    let rates = row(&summary, openai_label);
    assert_eq!(
        rates[1..4],
        ["openai:gpt-standin-1", &openai_host, "gpt-standin-1"],
        "{summary}"
    );
    let played = format!(
        "Played by {scripted_host}, no model: demo-kg, all tools · KG named. Played by \
         {openai_host}, model gpt-standin-1: {openai_label}."
    );
    assert!(summary.contains(&played), "{played}\n{summary}");
    let figure = svg_text(&read(&d.join("results-hosts/figures/exact-rate.svg")));
    assert!(figure.contains(&played), "{played}\n{figure}");
    let index = read(&d.join("site/index.html"));
    assert!(
        index.contains(&format!(
            "<td>{openai_label}</td><td>openai:gpt-standin-1</td><td>{openai_host}</td><td>gpt-standin-1</td>"
        )),
        "{index}"
    );

    // The paper's main table: agent, host and model columns; the
    // per-question table's caption names the agents.
    let paper = Test::new()
        .current_dir(d)
        .args(["paper", "tables", "--study", "results-hosts"])
        .run()
        .stdout;
    let main = row(&paper, openai_label);
    assert_eq!(
        main[1..4],
        ["openai:gpt-standin-1", &openai_host, "gpt-standin-1"],
        "{paper}"
    );
    assert!(
        paper
            .lines()
            .any(|l| l.starts_with("Table 3. Per question") && l.contains("Played by")),
        "{paper}"
    );
}

/// Issue 25, section 5: an attempt page shows the agent host's report as
/// its `episode.json` records it (tokens, turns, API and wall time, no
/// failure), and a figure the host did not state reads "not stated",
/// never 0: the openai loop states no cache writes and no cost, the
/// scripted agent no usage at all.
#[test]
fn an_attempt_page_shows_the_host_report_and_not_stated_for_what_it_left_out() {
    let dir = two_host_study();
    let d = dir.path();
    let page = attempt_page(d, OPENAI);
    let report = &episode(d, OPENAI)["host_report"];
    let usage = &report["usage"];
    assert_eq!(report["host"], "openai", "{report}");
    assert_eq!(reported(&page, "host"), "openai");
    assert_eq!(
        reported(&page, "host version"),
        format!("okn-benchmark {VERSION} (openai loop)")
    );
    assert_eq!(reported(&page, "model resolved"), "gpt-standin-1");
    for (figure, member) in [
        ("input tokens, not cached", "input_tokens"),
        (
            "input tokens read from the cache",
            "cache_read_input_tokens",
        ),
        ("output tokens", "output_tokens"),
        ("turns", "num_turns"),
    ] {
        let n = usage[member]
            .as_u64()
            .unwrap_or_else(|| panic!("{member}: {usage}"));
        assert!(n > 0, "{member}: {usage}");
        assert_eq!(reported(&page, figure), n.to_string(), "{figure}");
    }
    assert!(usage["cache_creation_input_tokens"].is_null(), "{usage}");
    assert_eq!(
        reported(&page, "input tokens written to the cache"),
        "not stated"
    );
    assert_eq!(reported(&page, "cost"), "not stated");
    assert!(reported(&page, "time waiting on the API").ends_with(" s"));
    assert!(reported(&page, "wall time").ends_with(" s, measured by the runner"));
    assert_eq!(reported(&page, "failure of the host"), "none reported");
    assert!(
        page.contains("agent <code>openai:gpt-standin-1</code> · host okn-benchmark"),
        "{page}"
    );

    // The scripted agent states no usage: every count is "not stated".
    let page = attempt_page(d, SCRIPTED);
    assert_eq!(reported(&page, "host"), "scripted");
    for figure in [
        "model resolved",
        "input tokens, not cached",
        "input tokens read from the cache",
        "input tokens written to the cache",
        "output tokens",
        "cost",
        "turns",
        "time waiting on the API",
    ] {
        assert_eq!(reported(&page, figure), "not stated", "{figure}");
    }
    assert!(!page.contains("<td>0</td>"), "{page}");
}
