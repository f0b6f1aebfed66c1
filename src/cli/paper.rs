//! `okn-benchmark paper`: what a manuscript needs from the recorded
//! episodes (`docs/PUBLISHING.md`, "Paper tables"; `docs/RENDERING.md`).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::error::{Error, Result};

/// Tables for the manuscript, and the manuscript as HTML and RTF.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum PaperCommand {
    /// Print the paper's tables as Markdown, from the recorded episodes only.
    ///
    /// With several studies, first the main table across them (condition ×
    /// agent: n, exact with its interval, ordered, mean F1, blocked), in the
    /// order given (by default, study folders by name). Then for each study:
    /// the main results table (condition × agent, and model
    /// when one was recorded: n, attempts, exact with its 95% bootstrap
    /// interval over questions, strict exact, ordered, mean F1, blocked), the pairwise
    /// condition deltas with 95% paired bootstrap intervals, and the
    /// per-question table. Paste them into the manuscript; rerun after any
    /// run or rescore, and a number cannot drift from the study.
    Tables(TablesArgs),
    /// Convert a Markdown manuscript to self-contained HTML and to RTF.
    ///
    /// Writes FILE.html and FILE.rtf beside FILE.md (or into --out), and with
    /// --tables one FILE-tableN.rtf per table, for submission systems and
    /// word processors that will not take Markdown.
    Doc(DocArgs),
}

/// `paper tables`.
#[derive(Debug, clap::Args)]
pub(crate) struct TablesArgs {
    /// A study folder (results-NAME/ with a study.toml); repeatable
    /// [default: every study folder (one holding a study.toml) under the current folder].
    #[arg(long, value_name = "DIR")]
    study: Vec<PathBuf>,
}

/// `paper doc`.
#[derive(Debug, clap::Args)]
pub(crate) struct DocArgs {
    /// The manuscript, Markdown.
    #[arg(value_name = "FILE.md")]
    file: PathBuf,
    /// Also write one FILE-tableN.rtf per table.
    #[arg(long)]
    tables: bool,
    /// Write into this folder instead of beside FILE.md.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Replace an output file (FILE.html, FILE.rtf, FILE-tableN.rtf) even
    /// when it lacks okn-benchmark's generator mark (a file a person wrote).
    #[arg(long)]
    force: bool,
}

pub(crate) fn run(command: PaperCommand) -> Result<ExitCode> {
    match command {
        PaperCommand::Tables(args) => {
            let text = tables_command(&args.study)?;
            out!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        PaperCommand::Doc(args) => {
            let written = crate::render::manuscript::convert(
                &args.file,
                args.tables,
                args.out.as_deref(),
                args.force,
            )?;
            for path in written {
                outln!("wrote {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The tables of every study in `studies` (or of every study folder under
/// the current folder when empty), as Markdown.
///
/// Errors: no study found; a study that cannot be read (file and line);
/// a study over a runs root with a recorded file that cannot be used
/// ([`crate::render::build::refuse_unreadable`]).
fn tables_command(studies: &[PathBuf]) -> Result<String> {
    let dirs_discovered = studies.is_empty();
    let dirs: Vec<PathBuf> = if dirs_discovered {
        let inputs = crate::render::build::discover(&[PathBuf::from(".")]);
        inputs.refuse_unreadable()?;
        inputs.studies
    } else {
        studies.to_vec()
    };
    if dirs.is_empty() {
        return Err(Error::Usage(
            "no study found: a study is a folder (results-NAME/) with a study.toml; pass --study DIR"
                .into(),
        ));
    }
    let mut studies = Vec::new();
    for dir in &dirs {
        if !crate::report::study_file::is_study(dir) {
            return Err(Error::file(
                dir.join(crate::report::study_file::STUDY_FILE),
                "not found: --study takes a folder that holds a study.toml",
            ));
        }
        let study = crate::report::study_file::load(dir)?;
        // A table over a root that lost or damaged a recorded file would
        // misstate it, as a page would: refused as `build` refuses.
        crate::render::build::refuse_unreadable(dir, &study.problems, "printed")?;
        studies.push(study);
    }
    if dirs_discovered {
        crate::report::study::sort_studies(&mut studies);
    }
    let mut out = String::new();
    let mut n = 1;
    if studies.len() > 1 {
        out.push_str(&crate::render::paper::across_table(&studies, n));
        out.push('\n');
        n += 1;
    }
    for study in &studies {
        let (text, next) = crate::render::paper::study_tables(study, n);
        out.push_str(&text);
        n = next;
    }
    Ok(out)
}
