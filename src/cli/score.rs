//! `okn-benchmark score`: one answer against one ground truth, JSON out.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::error::{Error, Result};
use crate::fsutil::{FileBytes, map_file};
use crate::score::{
    DEFAULT_SIGNIFICANT_FIGURES, NUMERIC_REL_TOL, ScoreOptions, score_rows, score_unreadable_rows,
};
use crate::table::{CsvText, Rows};

/// Score an answer CSV against a ground-truth CSV by denotation.
///
/// Prints one JSON object: exact and strict_exact (normalized and strict
/// tiers), ordered (null unless --ordered), f1 with row_precision and
/// row_recall, and notes. The rules are in docs/SCORING.md.
///
/// Exit codes: 0 whenever it could score, a miss included (an answer that
/// is not well-formed CSV is a miss, with a note naming the line); 2 when a
/// file cannot be read at all, or the ground truth is malformed or empty.
#[derive(Debug, clap::Args)]
pub(crate) struct ScoreArgs {
    /// The ground truth (as 'reference' writes it).
    #[arg(long, value_name = "REF.csv")]
    reference: PathBuf,
    /// The submitted answer.
    #[arg(long, value_name = "ANS.csv")]
    answer: PathBuf,
    /// The answer key has a total ORDER BY: also report the order-sensitive match.
    #[arg(long)]
    ordered: bool,
    /// Significant figures non-integral numbers are rounded to before comparison (1 to 30).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SIGNIFICANT_FIGURES,
          value_parser = crate::cli::precision_parser())]
    precision: u32,
}

pub(crate) fn run(args: ScoreArgs) -> Result<ExitCode> {
    // Both files are read (and split into rows) at once; cells stay in
    // the files' bytes (table::CsvText), so memory is little more than
    // the two files.
    let (key_bytes, answer_bytes) =
        rayon::join(|| map_file(&args.reference), || map_file(&args.answer));
    // Errors in the order a reader meets them: the ground truth first.
    let key_bytes = key_bytes?;
    let (answer_bytes, answer_error) = match answer_bytes {
        Ok(bytes) => (bytes, None),
        Err(e) => (FileBytes::Read(Vec::new()), Some(e)),
    };
    let (key, answer) = rayon::join(
        || CsvText::read(&key_bytes),
        || CsvText::read(&answer_bytes),
    );
    let key = key.map_err(|e| match e.line {
        Some(line) => Error::at_line(&args.reference, line, e.message),
        None => Error::file(&args.reference, e.message),
    })?;
    if key.column_names().is_empty() {
        return Err(Error::file(
            &args.reference,
            "empty: ground truth needs at least a header row of column names",
        ));
    }
    if let Some(e) = answer_error {
        return Err(e);
    }
    let options = ScoreOptions {
        ordered: args.ordered,
        significant_figures: args.precision,
        numeric_rel_tol: NUMERIC_REL_TOL,
    };
    let result = match answer {
        Ok(answer) => score_rows(&key, &answer, &options),
        Err(e) => score_unreadable_rows(&key, &format!("{}: {e}", args.answer.display()), &options),
    };
    let mut text =
        serde_json::to_string_pretty(&result).map_err(|e| Error::Other(e.to_string()))?;
    text.push('\n');
    out!("{text}");
    Ok(ExitCode::SUCCESS)
}
