//! `okn-benchmark report`, `rescore`, `freeze`: reading and closing a runs root.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::error::{Error, Result};
use crate::layout::RunsRoot;

/// Print a runs root's tables, and regenerate its README.md and summary CSVs
/// from the recorded episodes (a frozen root is read, never written).
#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// The runs root.
    root: PathBuf,
    /// Also write the Markdown report to FILE, or to stdout with '-'.
    #[arg(long, value_name = "FILE|-")]
    markdown: Option<PathBuf>,
    /// Replace FILE of --markdown even when okn-benchmark report did not
    /// write it (it lacks the report's generator line).
    #[arg(long, requires = "markdown")]
    force: bool,
    /// When some recorded file cannot be read, print what can be read and
    /// write nothing (without it, report exits 2 and writes nothing).
    #[arg(long)]
    lenient: bool,
}

/// Re-judge every attempt from its answer.csv and the ground truth alone, and
/// rewrite result.json, conditions/*.json, both summary CSVs and README.md.
/// Prints every score that moved. Needs no model, server or endpoint.
#[derive(Debug, clap::Args)]
pub(crate) struct RescoreArgs {
    /// The runs root.
    root: PathBuf,
    /// Significant figures non-integral numbers are rounded to before comparison (1 to
    /// 30), as 'score --precision'; recorded in each condition [default: the precision
    /// each condition was judged at].
    #[arg(long, value_name = "N", value_parser = crate::cli::precision_parser())]
    precision: Option<u32>,
    /// Judge attempts whose files changed since they were judged. Under the scoring
    /// version and precision an attempt was judged by, its verdict, whether it is blocked,
    /// and its condition's rates are functions of its files: a move means an answer, a
    /// call log, the host's report, the ground truth or the record itself was edited, and
    /// without --force rescore refuses it by name and writes nothing.
    #[arg(long)]
    force: bool,
}

/// Close a runs root: its README.md, summary CSVs and README.html are brought up
/// to date (build writes nothing into a frozen root), then run and rescore refuse
/// it by name, and report and build regenerate nothing in it. A root with an
/// unfinished condition or an unreadable file is refused. Unfreezing means
/// deleting ROOT/.frozen by hand.
#[derive(Debug, clap::Args)]
pub(crate) struct FreezeArgs {
    /// The runs root.
    root: PathBuf,
    /// Why it is closed (recorded in ROOT/.frozen).
    #[arg(long, value_name = "TEXT")]
    reason: String,
}

fn open(root: &PathBuf) -> Result<RunsRoot> {
    if !RunsRoot::is_runs_root(root) {
        return Err(Error::file(
            root,
            "not a runs root (it has no conditions/ folder)",
        ));
    }
    Ok(RunsRoot::new(root))
}

pub(crate) fn report(args: ReportArgs) -> Result<ExitCode> {
    let root = open(&args.root)?;
    let view = crate::report::load::root(&root.root);
    // A report that silently left out what it could not read would
    // misstate the root: refuse it, or with --lenient show it and write
    // nothing.
    if !view.problems.is_empty() {
        if !args.lenient {
            crate::render::build::refuse_unreadable(&root.root, &view.problems, "written")?;
        }
        out!("{}", crate::render::readme::terminal(&view));
        errln!(
            "report: {} recorded file{} could not be read (listed above): nothing was written",
            view.problems.len(),
            crate::format::plural(view.problems.len())
        );
        return Ok(ExitCode::from(crate::error::EXIT_BAD_INPUT));
    }
    // A file given to --markdown is checked before anything is written.
    if let Some(path) = args.markdown.as_deref().filter(|p| p.as_os_str() != "-") {
        crate::runs::frozen::refuse_frozen_at(path, "report")?;
        crate::catalog::published::refuse_unmarked(
            path,
            crate::render::readme::README_MARK,
            "okn-benchmark report",
            args.force,
        )?;
    }
    if view.frozen {
        errln!(
            "report: {} is frozen: README.md and the summary CSVs are left as they were \
             (delete {}/.frozen to reopen it)",
            args.root.display(),
            args.root.display()
        );
    } else {
        crate::render::build::write_root_files(&view)?;
    }
    match args.markdown.as_deref() {
        Some(path) if path.as_os_str() == "-" => {
            out!("{}", crate::render::readme::markdown(&view))
        }
        Some(path) => {
            crate::fsutil::write_atomic(path, crate::render::readme::markdown(&view).as_bytes())?;
            out!("{}", crate::render::readme::terminal(&view));
        }
        None => out!("{}", crate::render::readme::terminal(&view)),
    }
    // Not with the Markdown on stdout: the date is no part of the report.
    if args
        .markdown
        .as_deref()
        .is_none_or(|p| p.as_os_str() != "-")
    {
        for line in crate::runs::verified::lines(&root) {
            // Within the terminal's 100 columns (issue 26, section 3).
            out!(
                "{}",
                crate::render::syntax::fit_terminal(&format!("{line}\n"))
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn rescore(args: RescoreArgs) -> Result<ExitCode> {
    let root = open(&args.root)?;
    let outcome = crate::runs::rescore::rescore(&root, args.precision, args.force)?;
    for path in &outcome.removed {
        errln!(
            "removed {}: a temporary file a killed write left",
            path.display()
        );
    }
    // The root's README and summary CSVs, as build writes them, from the
    // files just rewritten; refused, as report refuses, if any of them
    // still cannot be used.
    let view = crate::report::load::root(&root.root);
    crate::render::build::refuse_unreadable(&root.root, &view.problems, "written")?;
    crate::render::build::write_root_files(&view)?;
    for m in &outcome.moved {
        if m.attempt == 0 {
            outln!(
                "moved  {}  aggregate  {}: {} -> {}",
                m.condition,
                m.field,
                m.old,
                m.new
            );
        } else {
            outln!(
                "moved  {}  {}  attempt {}  {}: {} -> {}",
                m.question,
                m.condition,
                m.attempt,
                m.field,
                m.old,
                m.new
            );
        }
    }
    for m in &outcome.expectations_moved {
        outln!(
            "expectation  {}  {}  attempt {}  {} -> {}",
            m.question,
            m.condition,
            m.attempt,
            m.old,
            m.new
        );
    }
    for problem in &outcome.problems {
        outln!("unreadable  {problem}");
    }
    outln!(
        "{} attempt{} re-scored, {} score{} moved{}",
        outcome.attempts,
        crate::format::plural(outcome.attempts as usize),
        outcome.moved.len(),
        crate::format::plural(outcome.moved.len()),
        match outcome.expectations_moved.len() {
            0 => String::new(),
            n => format!(
                ", {n} expectation status{} changed",
                if n == 1 { "" } else { "es" }
            ),
        }
    );
    // Re-scoring judges by the recorded rows; whether the endpoint still
    // answers them is what a verification says.
    for line in crate::runs::verified::lines(&root) {
        outln!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn freeze(args: FreezeArgs) -> Result<ExitCode> {
    crate::runs::rescore::check_reason(&args.reason)?;
    let root = open(&args.root)?;
    if let Some(frozen) = crate::runs::rescore::frozen_reason(&root) {
        outln!(
            "{} is already frozen ({frozen}): nothing changed",
            root.root.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    // Inside a frozen root: refused before anything is written.
    crate::runs::frozen::refuse_frozen(&root, "freeze")?;
    let view = crate::report::load::root(&root.root);
    // A root that lost or damaged files its records name would be closed
    // broken (rescore then refuses it as frozen, and build as unreadable):
    // loading it checked every one.
    crate::render::build::refuse_unreadable(&root.root, &view.problems, "frozen")?;
    if !view.unfinished.is_empty() {
        let lines: Vec<String> = view
            .unfinished
            .iter()
            .map(|(name, u)| u.line(name))
            .collect();
        return Err(Error::file(
            &root.root,
            format!(
                "not frozen: a frozen root is closed for good, and {}; finish or remove it \
                 first",
                lines.join("; ")
            ),
        ));
    }
    // No build writes into a frozen root: its files and page are made now.
    let base = crate::cli::build::project_above(&root.root).unwrap_or_else(|| PathBuf::from("."));
    for path in crate::render::build::write_frozen_files(&base, &view)? {
        outln!("wrote     {}", path.display());
    }
    crate::runs::rescore::freeze(&root, &args.reason)?;
    outln!("{} is frozen: {}", root.root.display(), args.reason);
    Ok(ExitCode::SUCCESS)
}
