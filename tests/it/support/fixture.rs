//! The work folder the `build` tests run in: a copy of a recorded demo
//! runs root, a study over it, prose, and the repository's templates and
//! stylesheet (used by the `build` and `browser` tests).

use std::path::Path;

use super::repo;

/// The demo runs root the fixture copies (three conditions, 12 questions).
pub const DEMO_ROOT: &str = "runs-expert-cross";

/// A question of that root (its exact rate differs between conditions,
/// so a sorted table of them moves).
pub const QUESTION: &str = "spoke-genelab-spoke-okn-spaceflight-disease-genes_cross";
/// The condition of [`QUESTION`] whose attempts the tests edit.
pub const CONDITION: &str = "demo-kg-all-tools__kg-named";

/// Copies the folder `from` to `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The study over the copied root: two of its conditions, every figure.
pub const STUDY_TOML: &str = r#"title = "Demo study"
roots = ["../runs-demo"]
figures = ["exact-rate", "heatmap", "f1", "wall-time", "tool-calls", "pass-k"]
baseline = "named"

[[conditions]]
key = "named"
name = "demo-kg-all-tools__kg-named"
label = "KG named"

[[conditions]]
key = "unnamed"
name = "demo-kg-all-tools__kg-not-named"
label = "KG not named"
"#;

/// The study's summary prose: a number, the rates table and a figure.
pub const SUMMARY: &str = "# Demo study\n\nNamed: <!-- okn:number condition=named metric=exact-rate -->?<!-- /okn:number -->.\n\n<!-- okn:rates -->\n<!-- /okn:rates -->\n\n<!-- okn:figure name=heatmap -->\n<!-- /okn:figure -->\n\nSee [the questions](QUESTIONS.md).\n";

/// The study's question prose: every question, and those that separate.
pub const QUESTIONS: &str = "# Questions\n\n<!-- okn:questions -->\n<!-- /okn:questions -->\n\n<!-- okn:separating -->\n<!-- /okn:separating -->\n";

/// A work folder laid out like a repository: a runs root, a study over
/// it, a prose README with a relative image, and the theme files.
pub fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_dir(&repo().join(DEMO_ROOT), &d.join("runs-demo"));
    // Generated pages of the original are not inputs.
    let _ = std::fs::remove_file(d.join("runs-demo/README.html"));
    copy_dir(&repo().join("templates"), &d.join("templates"));
    copy_dir(&repo().join("static"), &d.join("static"));
    std::fs::create_dir_all(d.join("results-demo")).unwrap();
    std::fs::write(d.join("results-demo/study.toml"), STUDY_TOML).unwrap();
    std::fs::write(d.join("results-demo/SUMMARY.md"), SUMMARY).unwrap();
    std::fs::write(d.join("results-demo/QUESTIONS.md"), QUESTIONS).unwrap();
    std::fs::create_dir_all(d.join("docs")).unwrap();
    std::fs::write(
        d.join("docs/dot.svg"),
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"><rect id=\"r\" width=\"4\" height=\"4\"/><use href=\"#r\"/></svg>",
    )
    .unwrap();
    std::fs::write(
        d.join("README.md"),
        "# Fixture\n\nSee [the study](results-demo/SUMMARY.md) and ![a dot](docs/dot.svg).\n",
    )
    .unwrap();
    dir
}
