//! `okn-benchmark merge`: shard roots joined into one runs root.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::error::Result;

/// Join the runs roots of a sharded sweep (run --shard K/N) into one.
///
/// Every shard's conditions must agree on their identity (shards: N
/// included), the corpus commit, the scoring contract (scoring version,
/// significant figures, numeric tolerance) and every other setting, and
/// each question's ground truth (fingerprint and rows): a mismatch is
/// refused with exit 2, naming the file and the field, and nothing is
/// written. So is an attempt two shards hold with different contents, a
/// shard that did not finish, a shard (or --out) with a recorded file that
/// cannot be used, as report names them, and a frozen --out.
///
/// Attempts are copied as recorded; each question's result.json, each
/// condition file, README.md and the summary CSVs are written from them, so
/// the merged root is what a serial run of the same episodes writes, apart
/// from the times measured and shards: N. An existing --out is read as one
/// more input: merging again changes nothing.
///
/// Exit 0 when every attempt of every condition's selection is there; exit
/// 1 when some are missing (a shard that failed or was not given): they are
/// named, the merged root is written all the same, and
///
///   okn-benchmark run <the run's flags, without --shard> --out ROOT --resume
///
/// plays exactly those. Reference: docs/SCALING.md.
#[derive(Debug, clap::Args)]
pub(crate) struct MergeArgs {
    /// The merged runs root (created; an existing one is read as an input).
    #[arg(long, value_name = "ROOT")]
    out: PathBuf,
    /// The shard roots (the --out of each run --shard K/N).
    #[arg(value_name = "SHARD", required = true)]
    shards: Vec<PathBuf>,
}

/// At most this many missing attempts are listed per condition.
const MISSING_SHOWN: usize = 20;

pub(crate) fn run(args: MergeArgs) -> Result<ExitCode> {
    let started = std::time::SystemTime::now();
    for path in crate::runs::merge::remove_leftovers(&args.out, started)? {
        errln!(
            "removed {}: a temporary file a killed write left",
            path.display()
        );
    }
    // Every input is checked as report and build check a root (each
    // attempt's recorded files, ground truth, verdicts), before anything is
    // copied: a damaged shard copied in would be found only afterwards, in
    // the merged root (the red-team pass of issue 12).
    for input in args.shards.iter().chain([&args.out]) {
        if crate::layout::RunsRoot::is_runs_root(input) {
            let view = crate::report::load::root(input);
            crate::render::build::refuse_unreadable(input, &view.problems, "merged")?;
        }
    }
    let outcome = crate::runs::merge::merge(&args.out, &args.shards)?;
    crate::render::build::write_root_files(&crate::report::load::root(&args.out))?;
    let plural = crate::format::plural;
    outln!(
        "merged {} root{} into {}: {} attempt folder{} copied, {} already there",
        args.shards.len(),
        plural(args.shards.len()),
        args.out.display(),
        outcome.copied,
        plural(outcome.copied),
        outcome.kept
    );
    let mut incomplete = false;
    for c in &outcome.conditions {
        outln!(
            "  {}: {} of {} attempt{}",
            c.name,
            c.attempts,
            c.expected,
            plural(c.expected)
        );
        if c.missing.is_empty() {
            continue;
        }
        incomplete = true;
        if !c.missing_shards.is_empty() {
            let shards: Vec<String> = c.missing_shards.iter().map(u32::to_string).collect();
            errln!(
                "  {}: no input is shard {} of its sweep",
                c.name,
                shards.join(", ")
            );
        }
        let shown: Vec<String> = c
            .missing
            .iter()
            .take(MISSING_SHOWN)
            .map(|(id, n)| format!("{id} attempt {n}"))
            .collect();
        errln!(
            "  {}: {} attempt{} missing: {}{}",
            c.name,
            c.missing.len(),
            plural(c.missing.len()),
            shown.join(", "),
            if c.missing.len() > MISSING_SHOWN {
                ", ..."
            } else {
                ""
            }
        );
    }
    if incomplete {
        errln!(
            "merge: attempts are missing; play exactly those with the run command of the sweep, \
             without --shard, into the merged root:\n  okn-benchmark run ... --out {} --resume",
            crate::text::shell_quote(&args.out.to_string_lossy())
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
