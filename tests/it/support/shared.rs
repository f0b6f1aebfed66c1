//! Data the tests read that the repository does not hold: third-party
//! files (the OKN registry corpus, the W3C SPARQL 1.1 results tests, real
//! Markdown documents) and the original of the cases copied into
//! `tests/cases/`. They live in a shared folder: `$OKN_SHARED_DIR`, or else
//! `../shared` beside the repository, laid out as
//!
//! ```text
//! cases/                     (tests/cases/ is a copy of it)
//! corpus/okn-registry/       89 .rq files of the OKN registry
//! data/w3c-sparql-results/   csv-tsv-res/, json-res/
//! data/markdown/             READMEs, reports, the CommonMark and GFM specs
//! ```
//!
//! A fresh clone has no such folder: the tests of each missing group return
//! early, and the first of them prints one line (straight to the process's
//! stderr, which the test harness does not capture) naming every group
//! skipped, why, and how to run them. With `OKN_REQUIRE_SHARED=1` (set by
//! `.ci/run`) a missing folder fails the tests that need it instead, so CI
//! cannot skip them silently.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Once;

use super::repo;

/// Names the shared folder (absolute, or relative to the repository root).
pub const DIR_VAR: &str = "OKN_SHARED_DIR";

/// Set (to anything but `0` or nothing), a missing shared folder is a test
/// failure rather than a skip.
pub const REQUIRE_VAR: &str = "OKN_REQUIRE_SHARED";

/// Tests that read one folder of the shared folder.
pub struct Group {
    /// What the tests check, as the skip line names them.
    pub name: &'static str,
    /// The folder they read, relative to the shared folder.
    pub folder: &'static str,
}

/// `tests/cases/` against the original it was copied from.
pub const CASES: Group = Group {
    name: "the copy in tests/cases/",
    folder: "cases",
};

/// `corpus list` over the 89 registry files (`cases/corpus/okn-registry.json`).
pub const REGISTRY_CORPUS: Group = Group {
    name: "the registry corpus",
    folder: "corpus/okn-registry",
};

/// Ground truth against the W3C SPARQL 1.1 CSV and JSON results tests.
pub const W3C_RESULTS: Group = Group {
    name: "the W3C SPARQL results",
    folder: "data/w3c-sparql-results",
};

/// `paper doc` over Markdown written by others.
pub const MARKDOWN: Group = Group {
    name: "the real Markdown documents",
    folder: "data/markdown",
};

const GROUPS: [&Group; 4] = [&CASES, &REGISTRY_CORPUS, &W3C_RESULTS, &MARKDOWN];

/// The shared folder: `$OKN_SHARED_DIR` if set, else `../shared` beside
/// the repository. It may not exist.
pub fn root() -> PathBuf {
    match std::env::var_os(DIR_VAR) {
        Some(dir) if !dir.is_empty() => repo().join(dir),
        _ => repo().join("../shared"),
    }
}

fn required() -> bool {
    std::env::var_os(REQUIRE_VAR).is_some_and(|v| !v.is_empty() && v != "0")
}

/// How the skip line and the failure name where the folder was looked for.
fn described_root() -> String {
    match std::env::var_os(DIR_VAR) {
        Some(dir) if !dir.is_empty() => format!("{DIR_VAR}={}", dir.to_string_lossy()),
        _ => "../shared".to_string(),
    }
}

/// `group`'s folder when it is there. When it is not: `None` (the caller
/// returns, skipped) after the skip line, or a panic naming the missing
/// folder when [`REQUIRE_VAR`] is set.
#[track_caller]
pub fn folder(group: &Group) -> Option<PathBuf> {
    let path = root().join(group.folder);
    if path.is_dir() {
        return Some(path);
    }
    if required() {
        panic!(
            "{} is missing, and {REQUIRE_VAR} is set: the tests over {} must run; put the shared folder at ../shared or set {DIR_VAR}",
            path.display(),
            group.name,
        );
    }
    announce_skips();
    None
}

/// Prints the one skip line, once per test process.
fn announce_skips() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let missing: Vec<String> = GROUPS
            .iter()
            .filter(|g| !root().join(g.folder).is_dir())
            .map(|g| format!("{} ({}/)", g.name, g.folder))
            .collect();
        // Straight to the process's stderr: `eprintln!` in a test is
        // captured and shown only when the test fails.
        let _ = writeln!(
            std::io::stderr(),
            "note: skipped the tests over data kept outside the repository, not found in {}: {}; to run them, set {DIR_VAR} to a folder laid out as ../shared (see tests/it/support/shared.rs)",
            described_root(),
            missing.join(", "),
        );
    });
}
