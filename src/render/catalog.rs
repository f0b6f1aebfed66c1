//! Catalog runs and comparisons on the site (`docs/CATALOG.md`,
//! "Publishing"): one page per run under `site/catalogs/NAME/`, with the
//! report (counts, attention required, known gaps, robustness) and every
//! call (its arguments, candidates, reply and expectations); one page per
//! comparison, linking the two runs when this build publishes them.
//!
//! Pages are written as Markdown and rendered like every other page, so
//! text a server sent reaches them only escaped (`catalog::report::md`)
//! or inside a code block.

use std::path::{Path, PathBuf};

use super::Theme;
use super::site::{IndexCatalog, SITE_DIR, relative_link};
use crate::catalog::published::{PublishedComparison, PublishedRun, REPORT_FILE, RESULTS_FILE};
use crate::catalog::report::md;
use crate::catalog::run::{PhrasingResult, Results};
use crate::error::Result;

/// `site/catalogs/NAME/index.html`.
pub fn catalog_page(name: &str) -> PathBuf {
    Path::new(SITE_DIR)
        .join("catalogs")
        .join(name)
        .join("index.html")
}

/// The index's line for a run named `name`.
pub fn index_run(name: &str, run: &PublishedRun) -> IndexCatalog {
    let index = Path::new(SITE_DIR).join("index.html");
    let counted = crate::catalog::run::counts(&run.results);
    let parts: Vec<String> = counted
        .iter()
        .map(|(kind, by)| {
            let statuses: Vec<String> = by
                .iter()
                .map(|(s, n)| format!("{n} {}", crate::catalog::compare::status_name(*s)))
                .collect();
            format!(
                "{} {}",
                crate::catalog::report::kind_name(*kind),
                statuses.join(", ")
            )
        })
        .collect();
    IndexCatalog {
        kind: "run",
        name: name.to_string(),
        href: relative_link(&index, &catalog_page(name)),
        what: format!(
            "{} · {} queries · {}",
            server(&run.results),
            run.results.queries.len(),
            parts.join("; ")
        ),
    }
}

/// The index's line for a comparison named `name`.
pub fn index_comparison(name: &str, comparison: &PublishedComparison) -> IndexCatalog {
    let index = Path::new(SITE_DIR).join("index.html");
    IndexCatalog {
        kind: "comparison",
        name: name.to_string(),
        href: relative_link(&index, &catalog_page(name)),
        what: classes(comparison),
    }
}

/// The classes of a comparison with their counts, those that occur.
fn classes(comparison: &PublishedComparison) -> String {
    use crate::catalog::compare::Class;
    let all = [
        Class::Regressed,
        Class::Mixed,
        Class::Improved,
        Class::Changed,
        Class::NotComparable,
        Class::Unchanged,
    ];
    let parts: Vec<String> = all
        .iter()
        .filter_map(|c| {
            let n = comparison.compared.iter().filter(|q| q.class == *c).count();
            (n > 0).then(|| format!("{n} {}", c.name()))
        })
        .collect();
    format!(
        "{} queries: {}",
        comparison.compared.len(),
        parts.join(", ")
    )
}

/// A server as a run names it.
fn server(results: &Results) -> String {
    results
        .server
        .as_ref()
        .map_or("a server that never started".to_string(), |s| {
            format!("{} {}", s.name, s.version)
        })
}

/// The page of the run named `name`; `base` is the build's base folder
/// (the run's folder is relative to it).
///
/// Errors: a template that fails to render.
pub fn run_page(theme: &Theme, base: &Path, name: &str, run: &PublishedRun) -> Result<Vec<u8>> {
    let page = catalog_page(name);
    let dir = run.dir.strip_prefix(base).unwrap_or(&run.dir);
    let mut text = crate::catalog::published::report(run);
    text.push_str(&format!(
        "\nRaw files: [{RESULTS_FILE}]({}), [the report]({}).\n",
        relative_link(&page, &dir.join(RESULTS_FILE)),
        relative_link(&page, &super::page::html_path(&dir.join(REPORT_FILE))),
    ));
    text.push_str("\n## Calls\n\nEvery call as recorded: its arguments, the candidates read from its reply, the reply, and what each expectation found.\n");
    for query in &run.results.queries {
        text.push_str(&format!(
            "\n### {} ({})\n",
            md(&query.id),
            md(&query.category)
        ));
        if let Some(q) = run.catalog.queries.iter().find(|q| q.id == query.id) {
            text.push_str(&format!("\n{}\n", md(&q.why)));
        }
        for (k, phrasing) in query.phrasings.iter().enumerate() {
            text.push_str(&call(k, phrasing));
        }
    }
    super::site::markdown_page(theme, (&page, "catalog"), &text, name)
}

/// One call on a run's page.
fn call(k: usize, p: &PhrasingResult) -> String {
    let label = if k == 0 {
        "Canonical".to_string()
    } else {
        format!("Rephrasing {k}")
    };
    let mut out = format!(
        "\n#### {label}: \"{}\"\n\n{} in {:.3} s, with:\n\n{}",
        md(&p.user_query),
        md(&p.tool),
        p.duration_s,
        fenced(
            "json",
            &serde_json::to_string_pretty(&p.arguments).unwrap_or_default()
        )
    );
    if let Some(why) = &p.execution_error {
        out.push_str(&format!("\nExecution error: {}\n", md(why)));
    }
    if let Some(candidates) = &p.candidates {
        let shown: Vec<String> = candidates
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{}. {}", i + 1, md(c)))
            .collect();
        out.push_str(&format!(
            "\nCandidates, in rank order ({}):\n\n{}\n",
            candidates.len(),
            if shown.is_empty() {
                "none".to_string()
            } else {
                shown.join("\n")
            }
        ));
    }
    if let Some(reply) = &p.reply {
        out.push_str(&format!(
            "\nThe reply{}{}:\n\n{}",
            if reply.is_error { ", an error" } else { "" },
            if reply.text_cut {
                " (cut when it was recorded)"
            } else {
                ""
            },
            fenced("text", &super::site::clip_from(&reply.text, RESULTS_FILE))
        ));
        if let Some(structured) = &reply.structured {
            out.push_str(&format!(
                "\nIts structured content:\n\n{}",
                fenced(
                    "json",
                    &super::site::clip_from(
                        &serde_json::to_string_pretty(structured).unwrap_or_default(),
                        RESULTS_FILE
                    )
                )
            ));
        }
    }
    out.push('\n');
    for e in &p.expectations {
        out.push_str(&format!(
            "- {} `{}`: {}\n",
            crate::catalog::report::kind_name(e.kind),
            e.check,
            crate::catalog::report::what(e)
        ));
    }
    out
}

/// The page of the comparison named `name`; `run_names` gives the site
/// name of each run this build publishes (by its folder), so the two runs
/// are linked.
///
/// Errors: a template that fails to render.
pub fn comparison_page(
    theme: &Theme,
    name: &str,
    comparison: &PublishedComparison,
    run_names: &[(PathBuf, String)],
) -> Result<Vec<u8>> {
    let page = catalog_page(name);
    let mut text = crate::catalog::published::comparison(comparison);
    let link = |path: &Path, role: &str| {
        let folder = comparison.dir.join(path);
        let folder = crate::fsutil::normalize(folder.parent().unwrap_or(Path::new("")));
        match run_names
            .iter()
            .find(|(dir, _)| crate::fsutil::normalize(dir) == folder)
        {
            Some((_, run)) => format!(
                "[the {role}'s page]({})",
                relative_link(&page, &catalog_page(run))
            ),
            None => format!("the {role} (not published by this build)"),
        }
    };
    text.push_str(&format!(
        "\nThe runs: {}, {}.\n",
        link(&comparison.baseline_path, "baseline"),
        link(&comparison.candidate_path, "candidate")
    ));
    super::site::markdown_page(theme, (&page, "catalog"), &text, name)
}

/// `text` as a fenced code block, the fence longer than any run of
/// backticks in it, each line's control characters and bidirectional
/// overrides made spaces (as `catalog::report::terminal` does).
fn fenced(lang: &str, text: &str) -> String {
    let lines: Vec<String> = text.lines().map(crate::catalog::report::terminal).collect();
    let text = lines.join("\n");
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{text}\n{fence}\n")
}

#[cfg(test)]
mod tests {
    use super::fenced;

    #[test]
    fn a_fence_outlasts_the_backticks_inside_it() {
        assert_eq!(fenced("text", "a"), "```text\na\n```\n");
        assert_eq!(fenced("text", "x ```` y\n"), "`````text\nx ```` y\n`````\n");
        assert_eq!(
            fenced("text", "a\u{1b}[31m\u{202e}b\r\nc"),
            "```text\na [31m b\nc\n```\n"
        );
    }
}
