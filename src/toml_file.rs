//! The one way the crate reads TOML (`okn-benchmark.toml`, profiles,
//! `study.toml`): serde does the parsing, and every error, toml's own or one
//! a check finds afterwards at a [`Spanned`] key or value, names the file
//! and the line.
//!
//! A leaf module (std, serde, toml and the error type), so any reader can
//! use it without depending on another.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
pub use toml::Spanned;

use crate::error::{Error, Result};

/// A TOML file's text and the path it was read from, so that every error
/// about it can name the file and line.
#[derive(Debug, Clone)]
pub struct TomlFile {
    /// The file, as the user named it (relative paths stay relative).
    pub path: PathBuf,
    /// Its whole text.
    pub text: String,
}

/// A TOML table whose keys and values remember where they were written,
/// for a file whose keys are checked by hand so that the messages can say
/// what the file may hold. Iteration is in key order.
pub type SpannedTable = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

impl TomlFile {
    /// Reads `path` as UTF-8 text.
    ///
    /// Errors: as [`crate::fsutil::read_text`] (unreadable file, not UTF-8).
    pub fn read(path: &Path) -> Result<TomlFile> {
        Ok(TomlFile {
            path: path.to_path_buf(),
            text: crate::fsutil::read_text(path)?,
        })
    }

    /// Deserializes the text into `T`. Put `#[serde(deny_unknown_fields)]`
    /// on `T` to make an unknown key an error, and `Spanned<_>` on a field
    /// whose line a later check needs.
    ///
    /// Errors: [`Error::AtLine`] at the line toml places the problem (TOML
    /// syntax, an unknown key, a missing field, a wrong type), with toml's
    /// message; [`Error::File`] when toml names no place.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T> {
        toml::from_str(&self.text).map_err(|e| {
            let message = e.message().to_string();
            match e.span() {
                Some(span) => Error::at_line(&self.path, self.line_at(span.start), message),
                None => Error::file(&self.path, message),
            }
        })
    }

    /// The 1-based line holding byte `offset` of the text (the last line
    /// when `offset` is past the end).
    pub fn line_at(&self, offset: usize) -> u64 {
        crate::error::line_at(&self.text, offset)
    }

    /// The 1-based line where a spanned key or value starts.
    pub fn line<T>(&self, spanned: &Spanned<T>) -> u64 {
        self.line_at(spanned.span().start)
    }

    /// An error at the line where `spanned` starts.
    pub fn error_at<T>(&self, spanned: &Spanned<T>, message: impl Into<String>) -> Error {
        Error::at_line(&self.path, self.line(spanned), message)
    }

    /// An error about the file as a whole (something missing has no line).
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::file(&self.path, message)
    }
}
