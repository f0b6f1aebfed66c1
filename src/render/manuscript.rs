//! `paper doc`: a Markdown manuscript as self-contained HTML (the same path
//! as `build`) and as RTF ([`super::rtf`]), optionally one RTF per table.

use std::path::{Path, PathBuf};

use crate::error::Result;

/// Converts `file` to `FILE.html` and `FILE.rtf` (and `FILE-tableN.rtf`
/// per table with `tables`), beside it or in `out`. Returns the paths
/// written, in order.
///
/// Errors: an unreadable manuscript; an unwritable output folder.
pub fn convert(file: &Path, tables: bool, out: Option<&Path>) -> Result<Vec<PathBuf>> {
    let _ = (file, tables, out);
    Err(crate::error::Error::Other(
        "paper doc is not written yet".into(),
    ))
}
