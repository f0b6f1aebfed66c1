//! What several modules' unit tests share.

use std::path::PathBuf;

/// The recorded demo runs roots shipped in the repository, sorted (found,
/// not named: tier names stay out of src/). For tests.
pub fn demo_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = std::fs::read_dir(env!("CARGO_MANIFEST_DIR"))
        .expect("the repository folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| crate::layout::RunsRoot::is_runs_root(p))
        .collect();
    roots.sort();
    assert!(!roots.is_empty(), "no recorded demo runs root");
    roots
}
