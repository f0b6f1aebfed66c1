//! `paper tables`: the manuscript's tables as Markdown, from recorded
//! episodes only (seed 000, "Results so far": `build_paper_tables.py`), so
//! a number in the manuscript cannot drift from the study it came from.
//!
//! Each table is preceded by its caption, a paragraph starting `Table N.`
//! — the form `paper doc` recognizes as a caption when it writes one RTF
//! file per table. Tables are numbered across all studies printed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::study::{self, Study};
use crate::error::{Error, Result};

/// The main results table: one row per condition, with agent and model
/// (the model column only when some condition had one), questions (n),
/// attempts, exact and strict exact rates, ordered rate, mean F1 and
/// blocked attempts.
pub fn main_table(study: &Study) -> String {
    super::syntax::markdown(&crate::report::tables::main_results(&study.data))
}

/// The tables of one study, numbered from `first`; returns the text and
/// the next free number.
pub fn study_tables(study: &Study, first: usize) -> (String, usize) {
    let mut out = String::new();
    let mut n = first;
    let _ = writeln!(out, "## {}\n", study.title);
    let _ = writeln!(
        out,
        "Table {n}. Main results: exact rate (mean over questions of exact attempts over measured attempts) with a 95% bootstrap interval over questions, strict exact, ordered and mean F1; n is the number of measured questions.\n"
    );
    out.push_str(&main_table(study));
    out.push('\n');
    n += 1;
    if study.data.conditions.len() > 1 {
        let baseline = study
            .data
            .condition(&study.baseline)
            .map_or(study.baseline.clone(), |c| c.label.clone());
        let _ = writeln!(
            out,
            "Table {n}. Condition deltas against {}: difference in exact rate, paired over the questions both measured, with a 95% percentile bootstrap interval over questions (2000 resamples, fixed seed).\n",
            super::syntax::md_text(&baseline)
        );
        if let Some(b) = study.data.condition(&study.baseline) {
            out.push_str(&study::deltas_table(&study.data, b));
        }
        out.push('\n');
        n += 1;
    }
    let _ = writeln!(
        out,
        "Table {n}. Per question: exact attempts over measured attempts under each condition.\n"
    );
    out.push_str(&study::questions_table_of(&study.data, false));
    out.push('\n');
    n += 1;
    (out, n)
}

/// The tables of every study in `studies` (or of every study folder under
/// the current folder when empty), as Markdown.
///
/// Errors: no study found; a study that cannot be read (file and line).
pub fn tables_command(studies: &[PathBuf]) -> Result<String> {
    let dirs: Vec<PathBuf> = if studies.is_empty() {
        super::build::discover(&[PathBuf::from(".")]).studies
    } else {
        studies.to_vec()
    };
    if dirs.is_empty() {
        return Err(Error::Usage(
            "no study found: a study is a folder (results-NAME/) with a study.toml; pass --study DIR"
                .into(),
        ));
    }
    let mut out = String::new();
    let mut n = 1;
    for dir in &dirs {
        if !study::is_study(dir) {
            return Err(Error::file(
                dir.join(study::STUDY_FILE),
                "not found: --study takes a folder that holds a study.toml",
            ));
        }
        let study = Study::load(Path::new(dir))?;
        let (text, next) = study_tables(&study, n);
        out.push_str(&text);
        n = next;
    }
    Ok(out)
}
