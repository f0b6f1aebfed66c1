//! `paper tables`: the manuscript's tables as Markdown, from recorded
//! episodes only (`docs/PUBLISHING.md`, "Paper tables"), so
//! a number in the manuscript cannot drift from the study it came from.
//!
//! Each table is preceded by its caption, a paragraph starting `Table N.`
//! — the form `paper doc` recognizes as a caption when it writes one RTF
//! file per table. Tables are numbered across all studies printed.

use std::fmt::Write as _;

use super::study::{self, StudyView};

/// The main results table: one row per condition, with agent, host (its
/// version) and model (the model column only when some condition's host
/// plays one; issue 25, section 5), questions (n),
/// attempts, exact and strict exact rates, ordered rate, mean F1 and
/// blocked attempts.
pub fn main_table(study: &StudyView) -> String {
    super::syntax::markdown(&crate::report::tables::main_results(&study.data))
}

/// The main table across `studies` (more than one), numbered `n`: every
/// condition of each, condition × agent ([`crate::report::tables::across_studies`]).
pub fn across_table(studies: &[StudyView], n: usize) -> String {
    let rows: Vec<(&str, &crate::report::study::StudyData)> = studies
        .iter()
        .map(|s| (s.title.as_str(), &s.data))
        .collect();
    format!(
        "## Main results across studies\n\nTable {n}. Main results of every study, in order: exact rate (mean over questions of exact attempts over measured attempts) with a 95% bootstrap interval over questions, ordered and mean F1 per condition and agent, with the agent host's version and the model; n is the number of measured questions, blocked the attempts that measured nothing. Rates are compared within a study, never across corpora. {}\n\n{}\n",
        crate::format::ORDERED_NOTE,
        super::syntax::markdown(&crate::report::tables::across_studies(&rows))
    )
}

/// The tables of one study, numbered from `first`; returns the text and
/// the next free number.
pub fn study_tables(study: &StudyView, first: usize) -> (String, usize) {
    let mut out = String::new();
    let mut n = first;
    // Tables that name conditions by label alone say which agent played
    // each in their caption (issue 25, section 5).
    let agents = study.data.agents_note().map_or_else(String::new, |note| {
        format!(" {}", super::syntax::md_text(&note))
    });
    let _ = writeln!(out, "## {}\n", study.title);
    let _ = writeln!(
        out,
        "Table {n}. Main results: exact rate (mean over questions of exact attempts over measured attempts) with a 95% bootstrap interval over questions, strict exact, ordered and mean F1, with each condition's agent, its host's version and the model; n is the number of measured questions. {}\n",
        crate::format::ORDERED_NOTE
    );
    out.push_str(&main_table(study));
    out.push('\n');
    n += 1;
    if study.data.conditions.len() > 1 {
        let baseline =
            study
                .data
                .baseline_of(&study.baseline, None)
                .map_or(study.baseline.clone(), |c| {
                    if study.data.agents.is_empty() {
                        c.label.clone()
                    } else {
                        format!("each agent's own {}", c.base_label)
                    }
                });
        let _ = writeln!(
            out,
            "Table {n}. Condition deltas against {}: difference in exact rate, paired over the questions both measured, with a 95% percentile bootstrap interval over questions (2000 resamples, fixed seed).{agents}\n",
            super::syntax::md_text(&baseline)
        );
        if let Some(b) = study.data.baseline_of(&study.baseline, None) {
            out.push_str(&study::deltas_table(&study.data, b));
        }
        out.push('\n');
        n += 1;
    }
    let _ = writeln!(
        out,
        "Table {n}. Per question: exact attempts over measured attempts under each condition.{agents}\n"
    );
    out.push_str(&study::questions_table_of(&study.data, false));
    out.push('\n');
    n += 1;
    if let Some(grid) = crate::report::tables::study_expectations(&study.data) {
        // Issue 27: beside the rates, never in them.
        let _ = writeln!(
            out,
            "Table {n}. Trajectory expectations: per condition, the attempts where each expectation held (pass, or a known gap fixed) over those where it applied, judged deterministically from the recorded tool calls; not part of any exact rate.{agents}\n"
        );
        out.push_str(&super::syntax::markdown(&grid));
        out.push('\n');
        n += 1;
    }
    (out, n)
}
