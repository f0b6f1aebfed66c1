//! The folders of this machine an agent host may print, and the fixed
//! placeholders that replace them in what an attempt records (issue 25,
//! item 7: gemini's `agent.stderr.log` said "Full report available at:
//! /tmp/okn-claude-home-XXXX/tmp/gemini-client-error-….json", and its stack
//! traces name the folder it is installed in). Nothing recorded may hold
//! an absolute path of the machine (`docs/FORMAT.md`, "A runs root"), and
//! a runs root recorded twice must not differ by a temporary folder's
//! name.
//!
//! The replacement is plain text, applied to the bytes of `agent.json` and
//! `agent.stderr.log` before they are written and before the host's
//! parser reads them, so loading a root parses the same bytes and derives
//! the same host report.

use std::path::{Path, PathBuf};

/// What replaces the episode's fresh home ([`super::claude::FreshHome`]).
pub const EPISODE_HOME: &str = "$EPISODE_HOME";
/// What replaces the attempt's folder (`attempt-N/`).
pub const ATTEMPT: &str = "$ATTEMPT";
/// What replaces the folder of the host's program (as named, and where it
/// really is: npm's `.bin/gemini` is a link into the package's bundle).
pub const AGENT_PROGRAM_DIR: &str = "$AGENT_PROGRAM_DIR";
/// What replaces the user's home folder.
pub const USER_HOME: &str = "~";

/// Folders to replace, each with its placeholder, the longest first (so
/// an attempt folder under the user's home is `$ATTEMPT`, not
/// `~/runs/...`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MachinePaths {
    folders: Vec<(Vec<u8>, &'static str)>,
}

impl MachinePaths {
    /// The folders of one episode: its fresh home (`None` for a host that
    /// has none), its attempt folder, its program (a bare name looked up
    /// on `PATH`) and the user's home (`HOME`). Each is taken as given and
    /// as the system resolves it (`/tmp` may be a link); `/` and relative
    /// paths are never replaced.
    pub fn of_episode(home: Option<&Path>, attempt: &Path, program: &Path) -> MachinePaths {
        let mut given: Vec<(PathBuf, &'static str)> = Vec::new();
        if let Some(home) = home {
            given.push((home.to_path_buf(), EPISODE_HOME));
        }
        given.push((attempt.to_path_buf(), ATTEMPT));
        if let Some(program) = located(program) {
            for path in [program.clone(), canonical(&program)] {
                if let Some(folder) = path.parent() {
                    given.push((folder.to_path_buf(), AGENT_PROGRAM_DIR));
                }
            }
        }
        if let Some(user) = std::env::var_os("HOME") {
            given.push((PathBuf::from(user), USER_HOME));
        }
        MachinePaths::new(&given)
    }

    /// Replaces each of `folders` (and its resolved form) by its
    /// placeholder.
    pub fn new(folders: &[(PathBuf, &'static str)]) -> MachinePaths {
        let mut out: Vec<(Vec<u8>, &'static str)> = Vec::new();
        for (folder, placeholder) in folders {
            for path in [folder.clone(), canonical(folder)] {
                let text = path.to_string_lossy().trim_end_matches('/').to_string();
                // `/` alone, or a relative path, names no one folder.
                if !path.is_absolute() || text.is_empty() {
                    continue;
                }
                if !out.iter().any(|(f, _)| f == text.as_bytes()) {
                    out.push((text.into_bytes(), placeholder));
                }
            }
        }
        out.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        MachinePaths { folders: out }
    }

    /// `bytes` with every folder replaced by its placeholder where it
    /// stands whole: not in the middle of a longer name
    /// (`…/attempt-1` is not in `…/attempt-10`).
    pub fn bytes(&self, bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        for (folder, placeholder) in &self.folders {
            out = replace_whole(&out, folder, placeholder.as_bytes());
        }
        out
    }
}

/// Whether `b` can continue a file name (so a match next to it is part of
/// a longer name).
fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_') || b >= 0x80
}

/// `haystack` with each whole occurrence of `needle` replaced by `with`.
fn replace_whole(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut at = 0;
    for found in memchr::memmem::find_iter(haystack, needle) {
        if found < at {
            continue;
        }
        let end = found + needle.len();
        let before = found.checked_sub(1).map(|i| haystack[i]);
        let after = haystack.get(end).copied();
        // `/a/b` in `/a/bc` or in `/x/a/b`'s `x/a/b` is another path.
        if before.is_some_and(|b| name_byte(b) || b == b'.') || after.is_some_and(name_byte) {
            continue;
        }
        out.extend_from_slice(&haystack[at..found]);
        out.extend_from_slice(with);
        at = end;
    }
    out.extend_from_slice(&haystack[at..]);
    out
}

/// `path` as the system resolves it, or as given when it cannot.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Where `program` is: itself when it names a folder, else the first file
/// of that name on `PATH`.
fn located(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return Some(program.to_path_buf());
    }
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_replaced_whole_longest_first() {
        let paths = MachinePaths::new(&[
            (PathBuf::from("/srv/u"), USER_HOME),
            (PathBuf::from("/srv/u/runs/q/attempt-1"), ATTEMPT),
            (PathBuf::from("/tmp/okn-episode-home-Ab1"), EPISODE_HOME),
        ]);
        let text = b"see /tmp/okn-episode-home-Ab1/tmp/e.json; cwd /srv/u/runs/q/attempt-1/cwd, \
            not /srv/u/runs/q/attempt-10 nor /x/srv/u nor /srv/uv; in ~ /srv/u.";
        assert_eq!(
            String::from_utf8(paths.bytes(text)).unwrap(),
            "see $EPISODE_HOME/tmp/e.json; cwd $ATTEMPT/cwd, not ~/runs/q/attempt-10 nor \
             /x/srv/u nor /srv/uv; in ~ ~."
        );
    }

    #[test]
    fn the_root_and_relative_paths_are_never_replaced() {
        let paths = MachinePaths::new(&[
            (PathBuf::from("/"), USER_HOME),
            (PathBuf::from("runs"), ATTEMPT),
        ]);
        assert_eq!(paths.bytes(b"/usr/bin runs"), b"/usr/bin runs");
    }
}
