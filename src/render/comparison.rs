//! Two runs roots compared ([`crate::report::compare`]), as the terminal
//! shows it and as Markdown sized for a pull-request comment (also the
//! body of a study's comparison page and region).

use crate::format::published_name;
use std::fmt::Write as _;

use super::syntax::{
    markdown_fitted as md_table, md_code, md_text, terminal as term_table, wrap_terminal,
};
use crate::report::compare::{
    Class, Comparison, ConditionChange, conditions_grid, expectation_flips_grid, means_grid,
    questions_grid,
};

/// How expectation flips are read (issue 27), said only where some
/// expectation flipped.
pub const EXPECTATIONS_METHOD: &str = "A trajectory expectation (docs/TRAJECTORY.md) flips \
when a paired attempt held it in one root and failed it in the other. A contract that flips, or \
a known gap that closes or reopens, moves the question's class as an answer that flips does: a \
contract that starts to fail is a regression even when the answer stayed exact, and one that \
held in every attempt of the baseline where it applied and fails in the candidate fails \
--fail-on-regression. A quality expectation's flip is listed for a maintainer to judge and moves \
nothing. An expectation the two roots define otherwise (another type, check, field or known gap, \
or in one root only) is not the same measurement: it is listed as not comparable and moves \
nothing, and when it is a contract that does not hold in the candidate, --fail-on-regression \
fails until both roots are judged by one corpus's expectations (okn-benchmark rescore).";

/// How the numbers are made, for the reader of a comparison.
pub const METHOD: &str = "Attempt k of the baseline is paired with attempt k of the candidate (for \
a model these are two independent samples, so one flip is one draw; a scripted agent plays the same \
script in both); a question is regressed when a paired attempt went from exact to inexact and none the other way, \
improved for the reverse, mixed when both happened, and not comparable when its ground truth moved \
between the roots or one side measured none of its attempts. Δ exact is the mean over comparable \
questions of the candidate's exact rate minus the baseline's, with a 95% percentile bootstrap \
interval over questions (2000 resamples, fixed seed): questions are the unit sampled. McNemar's \
test is exact (a two-sided binomial on the b questions exact before only and the c exact after \
only, a question counting as exact when more than half its attempts were), because the few \
discordant questions of a corpus make the chi-square approximation unreliable. A question \
regresses beyond what its repeats can explain when the baseline was exact in every measured \
attempt and the candidate is not exact in at least one; only those fail --fail-on-regression.";

/// What the two conditions were recorded with that differs.
fn differs_line(c: &ConditionChange) -> String {
    if c.differences.is_empty() {
        "Recorded with the same identity, server build, agent version and model.".to_string()
    } else {
        format!("Recorded differently: {}.", c.differences.join("; "))
    }
}

/// One sentence per condition naming what fails the gate, or saying
/// nothing does.
fn gate_line(c: &ConditionChange) -> String {
    let ids: Vec<String> = c.beyond_repeats().map(|q| q.id.clone()).collect();
    let answers = if ids.is_empty() {
        "no question regressed beyond what its repeats can explain.".to_string()
    } else {
        format!(
            "{} question{} regressed beyond what {} repeats can explain: {}.",
            ids.len(),
            crate::format::plural(ids.len()),
            if ids.len() == 1 { "its" } else { "their" },
            ids.join(", ")
        )
    };
    // Issue 27: contracts that started to fail, said only when some did.
    let contracts: Vec<String> = c
        .contract_regressions()
        .map(|(q, e)| format!("{} of {}", e.id, q.id))
        .collect();
    let mut line = if contracts.is_empty() {
        answers
    } else {
        format!(
            "{answers} {} contract expectation{} started to fail: {}.",
            contracts.len(),
            crate::format::plural(contracts.len()),
            contracts.join(", ")
        )
    };
    // Contracts the roots define otherwise and the candidate does not
    // hold: the gate cannot judge them.
    let unjudgeable: Vec<String> = c
        .questions
        .iter()
        .filter(|q| q.class != Class::NotComparable)
        .flat_map(|q| q.expectations.iter().map(move |e| (q, e)))
        .filter(|(_, e)| e.unjudgeable)
        .map(|(q, e)| format!("{} of {}", e.id, q.id))
        .collect();
    if !unjudgeable.is_empty() {
        line = format!(
            "{line} {} contract expectation{} defined otherwise in the two roots, not held or \
             not judged in the candidate, cannot be judged: {}.",
            unjudgeable.len(),
            crate::format::plural(unjudgeable.len()),
            unjudgeable.join(", ")
        );
    }
    line
}

/// The heading over [`expectation_flips_grid`]: it names the
/// expectations the roots define otherwise only where there are some.
fn flips_heading(c: &ConditionChange, first: &str) -> String {
    let redefined = c
        .questions
        .iter()
        .flat_map(|q| &q.expectations)
        .any(|e| e.redefined.is_some());
    if redefined {
        format!("{first} expectations that flipped, or that the two roots define otherwise")
    } else {
        format!("{first} expectations that flipped")
    }
}

/// The comparison as Markdown: the headline table, then per condition the
/// questions that changed (regressions first) and the mean changes.
pub fn markdown(comparison: &Comparison, heading: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(heading) = heading {
        let _ = writeln!(out, "{heading}\n");
    }
    let _ = writeln!(
        out,
        "Baseline {} · candidate {}.\n",
        md_code(&published_name(&comparison.baseline)),
        md_code(&published_name(&comparison.candidate))
    );
    out.push_str(&md_table(&conditions_grid(comparison)));
    for c in &comparison.conditions {
        let _ = writeln!(
            out,
            "\n**{}**: {}\n",
            md_text(&c.label()),
            md_text(&gate_line(c))
        );
        let _ = writeln!(out, "{}\n", md_text(&differs_line(c)));
        if c.questions.iter().any(|q| q.class != Class::Unchanged) {
            out.push_str(&md_table(&questions_grid(c)));
            out.push('\n');
        }
        if let Some(grid) = expectation_flips_grid(c) {
            let _ = writeln!(out, "{}:\n", flips_heading(c, "Trajectory"));
            out.push_str(&md_table(&grid));
            out.push('\n');
        }
        for (side, ids) in [
            ("baseline", &c.baseline_only),
            ("candidate", &c.candidate_only),
        ] {
            if !ids.is_empty() {
                let shown: Vec<String> = ids.iter().map(|i| md_code(i)).collect();
                let _ = writeln!(out, "Only in the {side}: {}.\n", shown.join(", "));
            }
        }
        let _ = writeln!(out, "Per measured attempt, averaged per question first:\n");
        out.push_str(&md_table(&means_grid(c)));
    }
    for (side, names) in [
        ("baseline", &comparison.baseline_only),
        ("candidate", &comparison.candidate_only),
    ] {
        if !names.is_empty() {
            let shown: Vec<String> = names.iter().map(|i| md_code(i)).collect();
            let _ = writeln!(
                out,
                "\nConditions only in the {side} (not compared): {}.",
                shown.join(", ")
            );
        }
    }
    let _ = writeln!(out, "\n{}", md_text(METHOD));
    if comparison.has_expectation_flips() {
        let _ = writeln!(out, "\n{}", md_text(EXPECTATIONS_METHOD));
    }
    out
}

/// The comparison for the terminal.
pub fn terminal(comparison: &Comparison) -> String {
    let mut out = String::new();
    out.push_str(&wrap_terminal(
        &format!(
            "baseline {} · candidate {}",
            comparison.baseline.display(),
            comparison.candidate.display()
        ),
        "",
    ));
    out.push_str(&term_table(&conditions_grid(comparison)));
    for c in &comparison.conditions {
        out.push('\n');
        out.push_str(&wrap_terminal(
            &format!("{}: {}", c.label(), gate_line(c)),
            "",
        ));
        out.push_str(&wrap_terminal(&differs_line(c), ""));
        if c.questions.iter().any(|q| q.class != Class::Unchanged) {
            out.push_str(&term_table(&questions_grid(c)));
        }
        if let Some(grid) = expectation_flips_grid(c) {
            let _ = writeln!(out, "{}:", flips_heading(c, "trajectory"));
            out.push_str(&term_table(&grid));
        }
        for (side, ids) in [
            ("baseline", &c.baseline_only),
            ("candidate", &c.candidate_only),
        ] {
            if !ids.is_empty() {
                out.push_str(&wrap_terminal(
                    &format!("only in the {side}: {}", ids.join(", ")),
                    "",
                ));
            }
        }
        out.push_str(&term_table(&means_grid(c)));
    }
    for (side, names) in [
        ("baseline", &comparison.baseline_only),
        ("candidate", &comparison.candidate_only),
    ] {
        if !names.is_empty() {
            out.push_str(&wrap_terminal(
                &format!(
                    "conditions only in the {side} (not compared): {}",
                    names.join(", ")
                ),
                "",
            ));
        }
    }
    out.push('\n');
    out.push_str(&wrap_terminal(
        "Δ exact: paired bootstrap over questions (95%, 2000 resamples); McNemar: exact \
         two-sided binomial on the questions whose majority outcome changed (b exact before \
         only, c after only), exact because the counts are small.",
        "",
    ));
    out
}
