//! Where everything lives in a runs root (seed 000, "Where the results go"):
//!
//! ```text
//! ROOT/
//!   README.md                 generated summary (report)
//!   summary.csv               one row per question × condition × attempt
//!   .frozen                   present when the root is closed (freeze)
//!   conditions/NAME.json      settings + aggregate, written when a run ends
//!   ID_results/
//!     ground_truth.csv|json   copied from the corpus's ground truth
//!     summary.csv             this question across conditions and attempts
//!     NAME/
//!       result.json           this question under this condition
//!       attempt-N/
//!         prompt.txt answer.csv calls.json metrics.json agent.json
//!         command.txt episode.json cwd/
//! ```
//!
//! A record id with `/` (a corpus with sub-folders) gives nested folders:
//! `sub/q_x` → `sub/q_x_results/`.

use std::path::{Path, PathBuf};

/// The folder of condition files.
pub const CONDITIONS_DIR: &str = "conditions";
/// The generated summary.
pub const README_FILE: &str = "README.md";
/// One row per attempt (root and per question).
pub const SUMMARY_FILE: &str = "summary.csv";
/// The freeze marker.
pub const FROZEN_FILE: &str = ".frozen";
/// Suffix of a question's folder.
pub const QUESTION_SUFFIX: &str = "_results";
/// Per question and condition.
pub const RESULT_FILE: &str = "result.json";
/// The ground truth copied beside the attempts.
pub const GROUND_TRUTH_CSV: &str = "ground_truth.csv";
/// Its JSON record.
pub const GROUND_TRUTH_JSON: &str = "ground_truth.json";
/// The assembled prompt.
pub const PROMPT_FILE: &str = "prompt.txt";
/// The agent host command line.
pub const COMMAND_FILE: &str = "command.txt";
/// The agent host's own JSON report (stdout).
pub const AGENT_FILE: &str = "agent.json";
/// What the runner observed; written last.
pub const EPISODE_FILE: &str = "episode.json";
/// The agent's empty working folder.
pub const CWD_DIR: &str = "cwd";

/// Paths inside one runs root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunsRoot {
    /// The root folder.
    pub root: PathBuf,
}

impl RunsRoot {
    /// A root at `root` (nothing is created).
    pub fn new(root: impl Into<PathBuf>) -> RunsRoot {
        RunsRoot { root: root.into() }
    }

    /// `conditions/NAME.json`.
    pub fn condition_file(&self, name: &str) -> PathBuf {
        self.root.join(CONDITIONS_DIR).join(format!("{name}.json"))
    }

    /// `ID_results/`.
    pub fn question_dir(&self, id: &str) -> PathBuf {
        self.root.join(format!("{id}{QUESTION_SUFFIX}"))
    }

    /// `ID_results/NAME/`.
    pub fn condition_dir(&self, id: &str, condition: &str) -> PathBuf {
        self.question_dir(id).join(condition)
    }

    /// `ID_results/NAME/attempt-N/`.
    pub fn attempt_dir(&self, id: &str, condition: &str, attempt: u32) -> PathBuf {
        self.condition_dir(id, condition)
            .join(format!("attempt-{attempt}"))
    }

    /// `.frozen`.
    pub fn frozen_file(&self) -> PathBuf {
        self.root.join(FROZEN_FILE)
    }

    /// True when the root is frozen.
    pub fn is_frozen(&self) -> bool {
        self.frozen_file().is_file()
    }

    /// The names of the recorded conditions (from `conditions/*.json`), sorted.
    pub fn condition_names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.root.join(CONDITIONS_DIR))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let path = e.path();
                (path.extension().is_some_and(|x| x == "json"))
                    .then(|| path.file_stem()?.to_str().map(str::to_string))
                    .flatten()
            })
            .collect();
        names.sort();
        names
    }

    /// True when `dir` looks like a runs root (it has `conditions/`).
    pub fn is_runs_root(dir: &Path) -> bool {
        dir.join(CONDITIONS_DIR).is_dir()
    }

    /// True when `dir` is a runs root with at least one condition recorded
    /// (a `.json` file in `conditions/`): what `build` takes for a runs
    /// root, so that a folder that merely has a `conditions/` subfolder
    /// (notes, a paper's appendix) is built as plain Markdown and its
    /// README.md never replaced.
    pub fn has_conditions(dir: &Path) -> bool {
        std::fs::read_dir(dir.join(CONDITIONS_DIR)).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                Path::new(&e.file_name())
                    .extension()
                    .is_some_and(|x| x == "json")
                    && e.file_type().is_ok_and(|t| t.is_file())
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_seed_layout() {
        let root = RunsRoot::new("runs-x");
        assert_eq!(
            root.attempt_dir("spoke-okn_cross", "mcp-proto-okn-all-tools__kg-named", 2),
            Path::new("runs-x/spoke-okn_cross_results/mcp-proto-okn-all-tools__kg-named/attempt-2")
        );
        assert_eq!(
            root.condition_file("c"),
            Path::new("runs-x/conditions/c.json")
        );
        assert_eq!(
            root.question_dir("sub/q_x"),
            Path::new("runs-x/sub/q_x_results")
        );
    }
}
