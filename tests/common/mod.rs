//! Shared harness for the integration tests: the real binary, the shared
//! data folder, and scratch work folders.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The `okn-benchmark` binary under test, run in `dir`.
pub fn okn_in(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("okn-benchmark").expect("binary built");
    cmd.current_dir(dir);
    cmd.env_remove("XDG_CACHE_HOME");
    cmd
}

/// The binary run from the repository root.
pub fn okn() -> Command {
    okn_in(&repo())
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared` from the repository root: seeds, cases and real data.
pub fn shared() -> PathBuf {
    repo().join("../shared")
}

/// Writes `files` (relative path, contents) under a new temporary folder.
pub fn work_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, contents) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    dir
}

/// Stdout of a finished command as UTF-8.
pub fn stdout(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 stdout")
}

/// Stderr of a finished command as UTF-8.
pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("UTF-8 stderr")
}
