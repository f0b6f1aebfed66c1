//! Catalog runs and comparisons as `build` publishes them
//! (`docs/CATALOG.md`, "Publishing"): a folder holding a catalog run's
//! `results.json` gets its `report.md` written again from that file, and a
//! folder holding a `comparison.toml` gets `comparison.md`, the comparison
//! of the two runs it names. Both get an HTML page beside them and a page
//! on the site. This module finds and loads them; `render::catalog` renders.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::compare::{self, QueryComparison};
use super::format::Catalog;
use super::run::Results;
use crate::error::{Error, Result};

/// The file a catalog run writes its results to.
pub const RESULTS_FILE: &str = "results.json";
/// The report a catalog run writes beside its results.
pub const REPORT_FILE: &str = "report.md";
/// The file that makes a folder a published comparison.
pub const COMPARISON_FILE: &str = "comparison.toml";
/// The comparison `build` writes beside [`COMPARISON_FILE`].
pub const COMPARISON_MARKDOWN: &str = "comparison.md";
pub use super::report::REPORT_MARK;

/// A catalog run, loaded for publishing.
#[derive(Debug, Clone)]
pub struct PublishedRun {
    /// The folder holding `results.json`.
    pub dir: PathBuf,
    /// The results, as read.
    pub results: Results,
    /// The catalog the run evaluated (from the results).
    pub catalog: Catalog,
}

/// A comparison of two catalog runs, loaded for publishing.
#[derive(Debug, Clone)]
pub struct PublishedComparison {
    /// The folder holding `comparison.toml`.
    pub dir: PathBuf,
    /// Its title, if `comparison.toml` gives one.
    pub title: Option<String>,
    /// The baseline's `results.json`, as `comparison.toml` names it
    /// (relative to [`PublishedComparison::dir`]), normalized.
    pub baseline_path: PathBuf,
    /// The candidate's, likewise.
    pub candidate_path: PathBuf,
    /// The baseline run.
    pub baseline: Results,
    /// The candidate run.
    pub candidate: Results,
    /// Every query compared ([`compare::compare`]).
    pub compared: Vec<QueryComparison>,
}

/// `comparison.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ComparisonFile {
    /// A title for the page.
    title: Option<String>,
    /// The baseline run: its folder or its `results.json`, relative to the
    /// file's folder.
    baseline: PathBuf,
    /// The candidate run, likewise.
    candidate: PathBuf,
}

/// True when `dir` holds a catalog run: a `results.json` that names a
/// catalog digest near its top, or that sits beside a `report.md` (a
/// damaged one is then still found, and refused by [`load_run`]).
pub fn is_run(dir: &Path) -> bool {
    let results = dir.join(RESULTS_FILE);
    results.is_file()
        && (dir.join(REPORT_FILE).is_file()
            || crate::fsutil::head(&results).is_some_and(|h| h.contains("\"catalog_sha256\"")))
}

/// True when `dir` holds a `comparison.toml`.
pub fn is_comparison(dir: &Path) -> bool {
    dir.join(COMPARISON_FILE).is_file()
}

/// Loads the catalog run in `dir`.
///
/// Errors (exit 2): `results.json` unreadable, malformed (file, line and
/// field), of a format this version does not read, or of format 1, which
/// does not keep the catalog the report needs; a `report.md` beside it that
/// a person wrote (it lacks [`REPORT_MARK`]), which publishing would replace.
pub fn load_run(dir: &Path) -> Result<PublishedRun> {
    let file = dir.join(RESULTS_FILE);
    let results = compare::load(&file)?;
    let Some(catalog) = results.catalog_document.clone() else {
        return Err(Error::file(
            &file,
            format!(
                "format {} keeps no catalog_document, which the report is written from: \
                 run the catalog again (`okn-benchmark catalog run ... --force`) to publish it",
                results.format
            ),
        ));
    };
    refuse_hand_written(&dir.join(REPORT_FILE), super::report::RUN_MARK_LINE)?;
    Ok(PublishedRun {
        dir: dir.to_path_buf(),
        results,
        catalog,
    })
}

/// Loads the comparison in `dir`: its `comparison.toml` and the two runs it
/// names.
///
/// Errors (exit 2): `comparison.toml` unreadable or wrong (file and line);
/// either run as [`compare::load`] refuses it; a `comparison.md` a person
/// wrote.
pub fn load_comparison(dir: &Path) -> Result<PublishedComparison> {
    let file = dir.join(COMPARISON_FILE);
    let spec: ComparisonFile = crate::toml_file::TomlFile::read(&file)?.parse()?;
    let resolve = |p: &Path| {
        let p = crate::fsutil::normalize(p);
        if p.extension().is_some_and(|e| e == "json") {
            p
        } else {
            p.join(RESULTS_FILE)
        }
    };
    let baseline_path = resolve(&spec.baseline);
    let candidate_path = resolve(&spec.candidate);
    let named = |p: &Path| -> Result<Results> {
        if p.is_absolute() {
            return Err(Error::file(
                &file,
                format!(
                    "{}: give the run relative to this folder, so the published page \
                     names no path of this machine",
                    p.display()
                ),
            ));
        }
        compare::load(&dir.join(p))
    };
    let baseline = named(&baseline_path)?;
    let candidate = named(&candidate_path)?;
    refuse_hand_written(
        &dir.join(COMPARISON_MARKDOWN),
        super::report::COMPARISON_MARK_LINE,
    )?;
    let compared = compare::compare(&baseline, &candidate);
    Ok(PublishedComparison {
        dir: dir.to_path_buf(),
        title: spec.title,
        baseline_path,
        candidate_path,
        baseline,
        candidate,
        compared,
    })
}

/// The report `build` writes for `run` (the one `catalog run` wrote).
pub fn report(run: &PublishedRun) -> String {
    super::report::markdown(&run.results, &run.catalog)
}

/// The comparison `build` writes for `comparison`.
pub fn comparison(comparison: &PublishedComparison) -> String {
    super::compare::markdown(
        comparison.title.as_deref(),
        (&comparison.baseline_path, &comparison.baseline),
        (&comparison.candidate_path, &comparison.candidate),
        &comparison.compared,
    )
}

/// True when `path` holds a file one of whose first lines starts with
/// `mark` (a generated line's opening, [`super::report::RUN_MARK_LINE`] or
/// [`super::report::COMPARISON_MARK_LINE`]; a note that merely mentions
/// [`REPORT_MARK`] is not taken for a generated file). False when it
/// cannot be read.
pub fn carries_mark_line(path: &Path, mark: &str) -> bool {
    crate::fsutil::head(path).is_some_and(|head| head.lines().take(8).any(|l| l.starts_with(mark)))
}

/// Fails when `path` exists and does not [`carries_mark_line`] `mark`,
/// unless `force`: a file a person wrote where a command would write its
/// own (`report --markdown`, `compare --markdown`, `catalog compare`).
/// `writer` names the command in the error (`okn-benchmark report`).
///
/// Errors: [`Error::File`] naming `path`, with what to do.
pub fn refuse_unmarked(path: &Path, mark: &str, writer: &str, force: bool) -> Result<()> {
    if force || !path.exists() || carries_mark_line(path, mark) {
        return Ok(());
    }
    Err(Error::file(
        path,
        format!(
            "exists and was not written by {writer}: give another file, or --force to replace \
             it"
        ),
    ))
}

/// Fails when `path` exists and does not [`carries_mark_line`] `mark`.
///
/// Errors: [`Error::File`] naming it, with what to do.
fn refuse_hand_written(path: &Path, mark: &str) -> Result<()> {
    if !path.exists() || carries_mark_line(path, mark) {
        return Ok(());
    }
    Err(Error::file(
        path,
        format!(
            "was not written by okn-benchmark (no line starts \"{mark}\") and build \
             would replace it: move what it says to another file, then build again"
        ),
    ))
}
