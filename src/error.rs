//! The crate's error type. Every variant is bad input or an unusable
//! environment, reported as one line naming the file (and line) and exit
//! code [`EXIT_BAD_INPUT`] (ARCHITECTURE.md, "Conventions"); a check that
//! *ran* and found a problem is not an error but an exit code 1 chosen by
//! the command. Variants a caller decides on are typed and keep their
//! cause as a `source`: an I/O failure ([`Error::File`]), a frozen runs
//! root ([`Error::Frozen`]), an answer key that failed ([`Error::AnswerKey`]).

use std::path::{Path, PathBuf};

/// Result alias used across the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The exit code of every error: bad usage or unreadable input.
pub const EXIT_BAD_INPUT: u8 = 2;

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
        /// The I/O failure behind it, when there was one ([`Error::io`]).
        #[source]
        source: Option<std::io::Error>,
    },
    /// Flags or arguments that do not make sense together.
    #[error("{0}")]
    Usage(String),
    /// A runs root closed by `freeze` (or a path inside one) that a
    /// command would write into (`README.md`, "Episodes: run, report,
    /// rescore, freeze").
    #[error(
        "{} is frozen{}: {command} never writes into a frozen root (delete {} by hand to unfreeze)",
        root.display(),
        reason.as_ref().map_or_else(String::new, |r| format!(" ({r})")),
        marker.display()
    )]
    Frozen {
        /// The frozen root.
        root: PathBuf,
        /// Its `.frozen` marker, whose removal reopens it.
        marker: PathBuf,
        /// Why it was closed, as `freeze --reason` recorded it.
        reason: Option<String>,
        /// The command refused.
        command: &'static str,
    },
    /// An answer key that ran and failed on its endpoint (not a syntax
    /// error, which is [`Error::AtLine`] in the record's file).
    #[error("{}: answer key failed: {source}", path.display())]
    AnswerKey {
        /// The record's `.rq` file.
        path: PathBuf,
        /// What the endpoint said (a `sparql::QueryError`).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Ctrl-C or SIGTERM stopped the command ([`crate::interrupt`]): what
    /// was kept, worded for the user. Exit
    /// [`crate::interrupt::EXIT_INTERRUPTED`].
    #[error("{0}")]
    Interrupted(String),
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
            source: None,
        }
    }

    /// An I/O error on `path`, worded as "cannot read: ..." and the like.
    pub fn io(path: impl AsRef<Path>, action: &str, err: std::io::Error) -> Error {
        let reason = match err.kind() {
            std::io::ErrorKind::NotFound => "no such file or folder".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            // The system's words alone: tempfile adds ` at path "…"`, the
            // path of its temporary file (`.okn-tmp-…`), to an error's
            // text, and the file being written is already named.
            _ => {
                let text = err.to_string();
                match text.find(" at path \"") {
                    Some(at) => text[..at].to_string(),
                    None => text,
                }
            }
        };
        Error::File {
            path: path.as_ref().to_path_buf(),
            message: format!("cannot {action}: {reason}"),
            source: Some(err),
        }
    }
}

/// A serde_json error's message without the " at line L column C" it
/// ends with, for an error that gives the line apart
/// ([`Error::at_line`]).
pub fn json_message(e: &serde_json::Error) -> String {
    let mut message = e.to_string();
    if e.line() > 0
        && let Some(cut) = message.rfind(" at line ")
    {
        message.truncate(cut);
    }
    message
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A caller can tell an I/O failure by its source, and the message
    /// still names the file and says what failed.
    #[test]
    fn io_errors_name_the_file_and_keep_their_cause() {
        let err = Error::io(
            Path::new("/nonexistent/x.csv"),
            "read",
            std::fs::read("/nonexistent/x.csv").unwrap_err(),
        );
        assert_eq!(
            err.to_string(),
            "/nonexistent/x.csv: cannot read: no such file or folder"
        );
        let source = std::error::Error::source(&err).expect("the I/O error");
        let io = source.downcast_ref::<std::io::Error>().unwrap();
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn a_frozen_root_is_said_with_its_reason_and_how_to_reopen_it() {
        let err = Error::Frozen {
            root: "runs-x".into(),
            marker: "runs-x/.frozen".into(),
            reason: Some("Published.".into()),
            command: "run",
        };
        assert_eq!(
            err.to_string(),
            "runs-x is frozen (Published.): run never writes into a frozen root (delete runs-x/.frozen by hand to unfreeze)"
        );
    }

    #[test]
    fn lines_are_counted_to_an_offset() {
        assert_eq!(line_at("a\nb\nc", 0), 1);
        assert_eq!(line_at("a\nb\nc", 2), 2);
        assert_eq!(line_at("a\nb\nc", 99), 3);
        assert_eq!(line_at("é\n", 1), 1);
    }
}
