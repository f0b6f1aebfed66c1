//! `paper tables`: the manuscript's tables as Markdown, from recorded
//! episodes only.

use std::path::PathBuf;

use crate::error::Result;

/// The tables of every study in `studies` (or of every `results-*/` study
/// under the current folder when empty), as Markdown.
///
/// Errors: a study that cannot be read.
pub fn tables_command(studies: &[PathBuf]) -> Result<String> {
    let _ = studies;
    Err(crate::error::Error::Other(
        "paper tables is not written yet".into(),
    ))
}
