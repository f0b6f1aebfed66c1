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

/// The demo root unit tests read numbers from: the expert agent's root
/// with the most conditions, the first by name on a tie (the root before
/// its changed-deployment candidate). The expert plays every kind of
/// answer the scripted agent has (README.md, "The demo studies"), so each
/// scoring tier and strategy shows in it.
pub fn demo_root() -> PathBuf {
    demo_roots()
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("runs-expert-"))
        })
        .rev()
        .max_by_key(|p| crate::layout::RunsRoot::new(p).condition_names().len())
        .expect("the expert's demo roots")
}
