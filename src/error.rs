//! The crate's error type. Every variant is bad input or an unusable
//! environment, reported as one line and exit code 2 (ARCHITECTURE.md, "Exit
//! codes"); a check that *ran* and found a problem is not an error but an
//! exit code 1 chosen by the command.

use std::path::{Path, PathBuf};

/// Result alias used across the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, with where: a file (and line) whenever there is one.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad content at a known line of a file.
    #[error("{}:{line}: {message}", path.display())]
    AtLine {
        /// The file, as the user named it (relative paths stay relative).
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What was expected and what was found.
        message: String,
    },
    /// A file that cannot be read or has unusable content as a whole.
    #[error("{}: {message}", path.display())]
    File {
        /// The file or folder.
        path: PathBuf,
        /// What is wrong, and where possible what to do.
        message: String,
    },
    /// Flags or arguments that do not make sense together.
    #[error("{0}")]
    Usage(String),
    /// A SPARQL endpoint that failed (unreachable, HTTP status, bad results).
    #[error("{0}")]
    Endpoint(String),
    /// Anything else, already worded for the user.
    #[error("{0}")]
    Other(String),
}

impl Error {
    /// An error at `line` of `path`.
    pub fn at_line(path: impl AsRef<Path>, line: u64, message: impl Into<String>) -> Error {
        Error::AtLine {
            path: path.as_ref().to_path_buf(),
            line,
            message: message.into(),
        }
    }

    /// An error about the file `path` as a whole.
    pub fn file(path: impl AsRef<Path>, message: impl Into<String>) -> Error {
        Error::File {
            path: path.as_ref().to_path_buf(),
            message: message.into(),
        }
    }

    /// An I/O error on `path`, worded as "cannot read: ..." and the like.
    pub fn io(path: impl AsRef<Path>, action: &str, err: std::io::Error) -> Error {
        let reason = match err.kind() {
            std::io::ErrorKind::NotFound => "no such file or folder".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            _ => err.to_string(),
        };
        Error::file(path, format!("cannot {action}: {reason}"))
    }

    /// The process exit code for this error: always 2 (bad input or usage).
    pub fn exit_code(&self) -> u8 {
        2
    }
}

/// Reads a whole file, mapping failure to [`Error::File`].
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(path, "read", e))
}

/// Reads a whole UTF-8 text file, naming the file (and line) on failure.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = read_file(path)?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + valid.iter().filter(|&&b| b == b'\n').count() as u64;
        Error::at_line(path, line, "not valid UTF-8")
    })
}

/// The 1-based line of byte `offset` in `text` (an offset past the end
/// counts as the end; one inside a character, as that character's line).
pub fn line_at(text: &str, offset: usize) -> u64 {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64
        + 1
}
