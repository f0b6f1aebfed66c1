//! Every GitHub workflow in `.github/workflows/` against GitHub's workflow
//! schema, with the real `check-jsonschema` from PyPI (installed by
//! `scripts/test`; its built-in schema works offline).

use crate::support::{repo, tool};

/// Runs check-jsonschema over `files`: its success and its output.
fn check(files: &[std::path::PathBuf]) -> (bool, String) {
    let out = std::process::Command::new(tool("check-jsonschema"))
        .args(["--builtin-schema", "vendor.github-workflows"])
        .args(files)
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn every_workflow_matches_the_github_workflow_schema() {
    let mut files: Vec<_> = std::fs::read_dir(repo().join(".github/workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    let (ok, output) = check(&files);
    assert!(ok, "{output}");
    // The check can fail: a job without runs-on or steps is refused.
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.yml");
    std::fs::write(&broken, "name: x\non: push\njobs:\n  a:\n    steps: 3\n").unwrap();
    let (ok, output) = check(&[broken]);
    assert!(!ok, "{output}");
}
