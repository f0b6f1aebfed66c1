//! Frozen runs roots (docs/FORMAT.md, "`.frozen`"): what a root's marker
//! says, one rule for every command ([`marker`]), finding the one a path
//! is in, and the refusal every command that writes gives.

use std::path::{Path, PathBuf};

use super::records::RUNS_FORMATS_READ;
use crate::error::{Error, Result};
use crate::fsutil::absolute;
use crate::layout::{FROZEN_FILE, RunsRoot};

/// `.frozen`: the marker that closes a runs root.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FrozenFile {
    /// The runs-root format (`RUNS_FORMAT`) of the `freeze` that wrote it.
    pub format: u32,
    /// Why the root is closed.
    pub reason: String,
}

/// The first `.frozen` format whose `freeze` wrote the root's
/// `README.html` before it closed the root (runs-root format 2 came after
/// that change): in a root frozen by one, a `README.html` that is missing
/// was lost, and is reported, never rewritten (issue 24, item 6). A root
/// of format 1 may have been frozen before, and is warned about instead.
pub const FROZEN_WITH_PAGE: u32 = 2;

/// What a root's `.frozen` says ([`marker`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Marker {
    /// No `.frozen`: the root is open.
    Open,
    /// A `.frozen` as `freeze` writes it: the root is closed.
    Frozen(FrozenFile),
    /// Something else by that name: a link, a folder, a named pipe, a file
    /// that is empty, does not parse, is of a format no version wrote, or
    /// gives no reason. Whether the root is closed cannot be told, so every
    /// command refuses it by name (the message says why).
    Damaged(String),
}

/// What the `.frozen` of the root at `root` says: the one rule `run`,
/// `rescore`, `freeze`, `merge`, `report` and `build` all keep (issue 24,
/// item 8). Only a regular file (not a link) that parses as a
/// [`FrozenFile`] of a format this version reads, with a reason that is
/// not blank, freezes a root; anything else there is [`Marker::Damaged`].
pub fn marker(root: &Path) -> Marker {
    let path = root.join(FROZEN_FILE);
    let why = match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Marker::Open,
        Err(e) => Error::io(&path, "read", e).to_string(),
        Ok(_) => match crate::fsutil::read_recorded(&path) {
            Ok(None) => return Marker::Open,
            Err(e) => e.to_string(),
            Ok(Some(bytes)) => match serde_json::from_slice::<FrozenFile>(&bytes) {
                Err(e) => format!("{}: does not read as a freeze marker ({e})", path.display()),
                Ok(file) if !RUNS_FORMATS_READ.contains(&file.format) => format!(
                    "{}: format {} is not one this version reads ({})",
                    path.display(),
                    file.format,
                    super::records::formats_read()
                ),
                Ok(file) if file.reason.trim().is_empty() => format!(
                    "{}: its reason is blank, which freeze never writes",
                    path.display()
                ),
                Ok(file) => return Marker::Frozen(file),
            },
        },
    };
    Marker::Damaged(format!(
        "{why}; it is not a `.frozen` freeze writes, so whether the root is closed cannot be \
         told: restore it from version control, or remove it if the root was never frozen \
         (okn-benchmark freeze writes it again)"
    ))
}

/// The runs root at or above `path` holding a `.frozen` of any kind, if
/// any (a path is made absolute first, so `.` and `..` cannot hide one).
pub fn frozen_ancestor(path: &Path) -> Option<PathBuf> {
    let absolute = absolute(path);
    absolute
        .ancestors()
        .find(|dir| std::fs::symlink_metadata(dir.join(FROZEN_FILE)).is_ok())
        .map(Path::to_path_buf)
}

/// The refusal for a frozen root (`docs/FORMAT.md`, "`.frozen`"): the
/// root itself, or any root it sits inside.
pub fn refuse_frozen(root: &RunsRoot, command: &'static str) -> Result<()> {
    refuse_frozen_at(&root.root, command)
}

/// [`refuse_frozen`] for any path: refused when it is, or is inside, a
/// frozen runs root, or one whose `.frozen` is damaged ([`marker`]).
///
/// Errors: [`Error::Frozen`] naming the frozen root; [`Error::Other`]
/// naming a damaged `.frozen` and what to do.
pub fn refuse_frozen_at(path: &Path, command: &'static str) -> Result<()> {
    let Some(frozen) = frozen_ancestor(path).map(RunsRoot::new) else {
        return Ok(());
    };
    let reason = match marker(&frozen.root) {
        Marker::Open => return Ok(()),
        Marker::Damaged(why) => return Err(Error::Other(why)),
        Marker::Frozen(file) => file.reason,
    };
    // The root as the user named it when it is the path given.
    let root = if crate::fsutil::same_place(&frozen.root, path) {
        path.to_path_buf()
    } else {
        frozen.root
    };
    Err(Error::Frozen {
        marker: RunsRoot::new(&root).frozen_file(),
        root,
        reason: Some(reason),
        command,
    })
}
