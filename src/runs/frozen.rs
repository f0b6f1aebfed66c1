//! Frozen runs roots (docs/FORMAT.md, "`.frozen`"): finding the one a path
//! is in, and the refusal every command that writes gives.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsutil::absolute;
use crate::layout::{FROZEN_FILE, RunsRoot};

/// The frozen runs root at or above `path`, if any (a path is made
/// absolute first, so `.` and `..` cannot hide one).
pub fn frozen_ancestor(path: &Path) -> Option<PathBuf> {
    let absolute = absolute(path);
    absolute
        .ancestors()
        .find(|dir| dir.join(FROZEN_FILE).is_file())
        .map(Path::to_path_buf)
}

/// The refusal for a frozen root (`docs/FORMAT.md`, "`.frozen`"): the
/// root itself, or any root it sits inside.
pub fn refuse_frozen(root: &RunsRoot, command: &'static str) -> Result<()> {
    refuse_frozen_at(&root.root, command)
}

/// [`refuse_frozen`] for any path: refused when it is, or is inside, a
/// frozen runs root.
///
/// Errors: [`Error::Frozen`] naming the frozen root.
pub fn refuse_frozen_at(path: &Path, command: &'static str) -> Result<()> {
    let Some(frozen) = frozen_ancestor(path).map(RunsRoot::new) else {
        return Ok(());
    };
    let reason = crate::fsutil::read_recorded(&frozen.frozen_file())
        .ok()
        .flatten()
        .and_then(|t| serde_json::from_slice::<serde_json::Value>(&t).ok())
        .and_then(|v| v["reason"].as_str().map(str::to_string))
        .filter(|r| !r.is_empty());
    // The root as the user named it when it is the path given.
    let root = if crate::fsutil::same_place(&frozen.root, path) {
        path.to_path_buf()
    } else {
        frozen.root
    };
    Err(Error::Frozen {
        marker: RunsRoot::new(&root).frozen_file(),
        root,
        reason,
        command,
    })
}
