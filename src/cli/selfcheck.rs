//! `okn-benchmark selfcheck`: the scorer against copies of the ground truth.

use std::path::PathBuf;
use std::process::ExitCode;

use super::CorpusArgs;
use crate::error::{Error, Result};
use crate::format::plural;
use crate::reference::{ground_truth_dir, load};
use crate::selfcheck::{checks, run as run_checks};

/// Score each cached ground truth against itself and against transformed
/// copies a correct agent might submit (columns renamed and reordered, rows
/// shuffled, IRIs shortened to local names, decimals reprinted within
/// tolerance) and one broken copy (a row dropped). Reports every verdict
/// that is not what it should be; exits 1 if there is any. Needs no model,
/// server or endpoint: run 'reference' first.
#[derive(Debug, clap::Args)]
pub(crate) struct SelfcheckArgs {
    #[command(flatten)]
    corpus: CorpusArgs,
    /// Where ground truth is cached [default: CORPUS/ground-truth].
    #[arg(long, value_name = "DIR")]
    ground_truth: Option<PathBuf>,
}

pub(crate) fn run(args: SelfcheckArgs) -> Result<ExitCode> {
    let (corpus, selection) = args.corpus.open()?;
    let selected = corpus.select(&selection)?;
    // A trajectory expectation that does not read is refused here too
    // (issue 27, section 1), before any ground truth is read.
    crate::expectations::defaults::for_corpus(&corpus)?;
    let dir = ground_truth_dir(&corpus, args.ground_truth.as_deref());
    // All ground truth first, so a missing one stops before any output.
    let mut truths = Vec::new();
    let mut missing = Vec::new();
    for record in &selected {
        match load(&dir, &record.id)? {
            Some(truth) => truths.push((record, truth)),
            None => missing.push(record.id.clone()),
        }
    }
    if !missing.is_empty() {
        let ground_truth_flag = args
            .ground_truth
            .as_ref()
            .map(|d| format!(" --ground-truth {}", d.display()))
            .unwrap_or_default();
        return Err(Error::Usage(format!(
            "no ground truth for {} record{} ({}) in {}: run 'okn-benchmark reference --corpus {}{ground_truth_flag}' first",
            missing.len(),
            plural(missing.len()),
            missing.join(", "),
            dir.display(),
            args.corpus.corpus
        )));
    }
    crate::reference::refuse_stale(
        truths.iter().map(|(r, t)| (**r, &t.meta, None)),
        &format!("okn-benchmark reference --corpus {}", args.corpus.corpus),
    )?;
    let mut findings_total = 0;
    let mut checks_total = 0;
    for (record, truth) in truths {
        let n = checks(&truth.table, truth.meta.ordered).len();
        checks_total += n;
        let findings = run_checks(&truth.table, truth.meta.ordered);
        if findings.is_empty() {
            outln!("ok    {}  ({n} checks)", record.id);
        } else {
            for f in &findings {
                outln!("FAIL  {}  {}: {}", record.id, f.check, f.message);
                for note in &f.notes {
                    outln!("        note: {note}");
                }
            }
            findings_total += findings.len();
        }
    }
    outln!(
        "{} record{}, {checks_total} checks, {findings_total} finding{}",
        selected.len(),
        plural(selected.len()),
        plural(findings_total)
    );
    Ok(if findings_total > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
