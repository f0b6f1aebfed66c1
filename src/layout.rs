//! Where everything lives in a runs root (`docs/FORMAT.md`, "A runs root"),
//! and the types of the files the proxy writes into an attempt folder:
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
//!         command.txt episode.json cwd/ submissions/
//!         upstream.stderr.log agent.stderr.log
//! ```
//!
//! A record id with `/` (a corpus with sub-folders) gives nested folders:
//! `sub/q_x` → `sub/q_x_results/`.
//!
//! This module is a leaf (serde and std only), so the proxy that writes an
//! attempt's files and the runs and render layers that read them share one
//! definition without depending on each other.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
/// Every tool call of the episode, from the proxy ([`CallsFile`]).
pub const CALLS_FILE: &str = "calls.json";
/// The proxy's tallies ([`Metrics`]).
pub const METRICS_FILE: &str = "metrics.json";
/// The proxy's journal of calls while an episode runs: JSON Lines, the
/// first line `{"format":N}` ([`LOG_FORMAT`]), then one [`CallRecord`] a
/// line, appended and flushed as each call ends. It is removed once
/// `calls.json` holds every call (the proxy's end, or the runner's after
/// a proxy that was killed); one left beside a `calls.json` with fewer
/// calls, or with none, is the newer record ([`newer_calls`];
/// `docs/FORMAT.md`, "calls.jsonl"; issue 26, section 4).
pub const JOURNAL_FILE: &str = "calls.jsonl";
/// The last submitted answer, byte for byte.
pub const ANSWER_FILE: &str = "answer.csv";
/// Submissions too large to log inline, as `submissions/N.csv`.
pub const SUBMISSIONS_DIR: &str = "submissions";
/// A stdio upstream's stderr.
pub const UPSTREAM_STDERR_FILE: &str = "upstream.stderr.log";
/// The agent host's stderr, when there was any.
pub const AGENT_STDERR_FILE: &str = "agent.stderr.log";

/// The tool the proxy adds to every server's, through which the agent
/// submits its answer (`answer.csv`).
pub const SUBMIT_CSV: &str = "submit_csv";

/// Version of `calls.json` and `metrics.json` that the proxy writes
/// (`docs/FORMAT.md`, "Format versions"). In format 1 a call's
/// `result_chars` counted a reply's structured content on top of its text
/// (a FastMCP reply twice), and `metrics.json` had no `reply_chars`; every
/// format is read.
pub const LOG_FORMAT: u32 = 2;

/// `calls.json`: every tool call of an episode, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CallsFile {
    /// [`LOG_FORMAT`].
    pub format: u32,
    /// The calls.
    pub calls: Vec<CallRecord>,
}

/// Characters of a reply kept in [`CallRecord::result_preview`].
pub const PREVIEW_CHARS: usize = 2000;

/// One tool call as the proxy saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CallRecord {
    /// 1-based position in the episode.
    pub index: usize,
    /// The tool name the agent called.
    pub tool: String,
    /// Its arguments, as sent (a submitted CSV included).
    pub arguments: Value,
    /// When the call arrived, seconds after the proxy started.
    pub start_s: f64,
    /// How long it took to answer, seconds.
    pub duration_s: f64,
    /// The reply was not an error, as the protocol said (before any
    /// `--strict-upstream-errors` relabelling).
    pub ok: bool,
    /// A failure hidden in a successful reply (HTTP 429 or 5xx, "rate
    /// limit", a traceback), with what gave it away.
    pub soft_error: Option<String>,
    /// The call named a withheld tool and was refused at the proxy.
    pub refused: bool,
    /// Whether the call went to the server under test.
    pub forwarded: bool,
    /// Error text: the tool's error reply, a timeout, a lost connection.
    pub error: Option<String>,
    /// Characters of reply text.
    pub result_chars: usize,
    /// The reply text's first [`PREVIEW_CHARS`] characters.
    pub result_preview: String,
    /// Present only when the agent host sent a line the proxy could not
    /// read as a JSON-RPC message (README.md, "Servers under test"): the
    /// call was answered with a JSON-RPC error and never reached a tool;
    /// `tool` is the tool name when it could be recovered (else empty),
    /// `arguments` is null, and `error` says what was wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<UnreadableRequest>,
}

/// Characters of an unreadable line kept in
/// [`UnreadableRequest::line_preview`].
pub const LINE_PREVIEW_CHARS: usize = 200;

/// A line from the agent host that the proxy could not read: not JSON
/// (a trailing comma, a truncated line), JSON text that is not Unicode (a
/// string holding a lone UTF-16 surrogate escape such as `\ud800`, or
/// bytes that are not UTF-8), longer or nested deeper than the proxy
/// reads; or a request under an id still in flight (`docs/FORMAT.md`,
/// "calls.json").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UnreadableRequest {
    /// The JSON-RPC error code the proxy answered with: -32700 (parse
    /// error), -32602 (invalid params: the method and id were recovered,
    /// the damage or the depth is in the params) or -32600 (invalid
    /// request: not a request rmcp reads, or an id in flight); null when no
    /// reply was due (the line was recognisably a notification or a
    /// response).
    pub code: Option<i64>,
    /// The request id answered, when it could be recovered unchanged (a
    /// string or a number); null otherwise, and then the reply's id is
    /// null too, as JSON-RPC 2.0 requires.
    pub id: Option<Value>,
    /// The JSON-RPC method, when it could be recovered unchanged.
    pub method: Option<String>,
    /// Bytes of the line as received, its final line feed excluded.
    pub line_bytes: usize,
    /// The line's first [`LINE_PREVIEW_CHARS`] characters, bytes that are
    /// not UTF-8 shown as U+FFFD.
    pub line_preview: String,
}

/// The episode's metrics record (`metrics.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Metrics {
    /// [`LOG_FORMAT`].
    pub format: u32,
    /// `all-tools` or `sparql-only`.
    pub level: String,
    /// The profile's server name (absent for sparql-only).
    pub server: Option<String>,
    /// Tool names offered to the agent, in order (submit_csv last).
    pub tools_offered: Vec<String>,
    /// Tool names withheld by `--without-tool`.
    pub withheld: Vec<String>,
    /// Whether the server's instructions reached the agent.
    pub instructions_forwarded: bool,
    /// Length of the instructions the agent received, characters.
    pub instructions_chars: usize,
    /// SHA-256 of the sparql-only preamble (`sha256:` + hex), when that level.
    pub preamble_sha256: Option<String>,
    /// Every tool called, in order (refused ones included, unreadable
    /// requests not: no tool was called).
    pub tools_called: Vec<String>,
    /// Entries of `calls.json` in all (unreadable requests included).
    pub calls: usize,
    /// Calls carrying a SPARQL query that succeeded.
    pub queries_ok: usize,
    /// Calls carrying a SPARQL query that failed (error reply, soft error,
    /// timeout, lost connection).
    pub queries_errored: usize,
    /// Seconds spent waiting on the server under test (forwarded calls and
    /// local SPARQL).
    pub server_s: f64,
    /// Soft errors per tool (see [`CallRecord::soft_error`]).
    pub upstream_soft_errors: BTreeMap<String, usize>,
    /// Characters the server's replies put into the agent's context, per
    /// tool (forwarded calls, and the sparql-only control's query replies;
    /// [`CallRecord::result_chars`]). Absent in
    /// logs written before it was recorded, which is not the same as none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_chars: Option<BTreeMap<String, usize>>,
    /// Calls refused because they named a withheld tool.
    pub refused: usize,
    /// How many times submit_csv was called.
    pub submissions: usize,
    /// Rows in the last submission (header excluded), if it parsed.
    pub submitted_rows: Option<usize>,
    /// The names of the profile's values that redaction replaced
    /// (`[redacted: NAME]`) in the answer as saved (`answer.csv`, the last
    /// submission), when it changed what the agent submitted (issue 24,
    /// item 27): the answer is judged as saved, and the attempt says so.
    /// Absent when redaction changed nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answer_redacted: Vec<String>,
    /// The proxy could not reach the server at startup: why.
    pub startup_error: Option<String>,
    /// The connection was lost part-way: why.
    pub lost_upstream: Option<String>,
    /// Lines from the agent host the proxy could not read (see
    /// [`CallRecord::unreadable`]); absent when there were none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreadable_requests: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Metrics {
    /// True when at least one answer was submitted.
    pub fn submitted(&self) -> bool {
        self.submissions > 0
    }
}

/// Reads a log folder's `metrics.json`, if present and well formed.
pub fn read_metrics(dir: &Path) -> Option<Metrics> {
    let text = std::fs::read_to_string(dir.join(METRICS_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Reads a log folder's `calls.json`, if present and well formed.
/// A journal left by a killed proxy is read when it is newer
/// ([`newer_calls`]).
pub fn read_calls(dir: &Path) -> Option<Vec<CallRecord>> {
    let calls = std::fs::read_to_string(dir.join(CALLS_FILE))
        .ok()
        .and_then(|text| serde_json::from_str::<CallsFile>(&text).ok());
    let journal = std::fs::read(dir.join(JOURNAL_FILE))
        .ok()
        .and_then(|bytes| parse_journal(&bytes).ok().flatten());
    newer_calls(calls, journal).map(|f| f.calls)
}

/// The first line of a journal ([`JOURNAL_FILE`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JournalHead {
    format: u32,
}

/// The first line of a journal of [`LOG_FORMAT`], with its line end.
pub fn journal_head() -> String {
    format!("{{\"format\":{LOG_FORMAT}}}\n")
}

/// The calls a journal's bytes hold ([`JOURNAL_FILE`]), as a
/// [`CallsFile`] of the journal's format. A last line without its line
/// end is a write the proxy did not finish (it was killed): it is not
/// read. An empty journal (killed before its first line was written) is
/// `None`.
///
/// Errors: `(line, what is wrong)`, the line 1-based, for a complete
/// line that is not what the journal holds.
pub fn parse_journal(bytes: &[u8]) -> std::result::Result<Option<CallsFile>, (u64, String)> {
    let complete = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(end) => &bytes[..=end],
        None => return Ok(None),
    };
    let mut lines = complete.split(|&b| b == b'\n').filter(|l| !l.is_empty());
    let Some(head) = lines.next() else {
        return Ok(None);
    };
    let head: JournalHead = serde_json::from_slice(head).map_err(|e| {
        (
            1,
            format!("{e}: the first line of a journal is {{\"format\":N}}"),
        )
    })?;
    let mut calls = Vec::new();
    for (i, line) in lines.enumerate() {
        let call: CallRecord =
            serde_json::from_slice(line).map_err(|e| (i as u64 + 2, e.to_string()))?;
        calls.push(call);
    }
    Ok(Some(CallsFile {
        format: head.format,
        calls,
    }))
}

/// Which record of an episode's calls is the newer: the journal when
/// `calls.json` is missing or holds fewer calls (a proxy killed
/// mid-episode appends to the journal and writes `calls.json` only at its
/// start and end), else `calls.json` ([`JOURNAL_FILE`]).
pub fn newer_calls(calls: Option<CallsFile>, journal: Option<CallsFile>) -> Option<CallsFile> {
    match (calls, journal) {
        (Some(c), Some(j)) if j.calls.len() > c.calls.len() => Some(j),
        (None, j) => j,
        (c, _) => c,
    }
}

/// Rounds seconds to milliseconds, the resolution every time in an
/// attempt's files is recorded at (`docs/FORMAT.md`).
pub fn round_seconds(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// The files of an attempt folder its page links, in the order it lists
/// them (the two stderr logs only when present: that is where a server's
/// or a host's traceback is).
pub const ATTEMPT_FILES: [&str; 9] = [
    PROMPT_FILE,
    COMMAND_FILE,
    ANSWER_FILE,
    CALLS_FILE,
    METRICS_FILE,
    AGENT_FILE,
    EPISODE_FILE,
    UPSTREAM_STDERR_FILE,
    AGENT_STDERR_FILE,
];

/// What an id read from a record names, for [`check_id`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// A record id: names joined by `/` (a corpus with sub-folders,
    /// `sub/q_x`), each one folder or file name.
    Record,
    /// A condition name (or any other one-segment name): one folder or
    /// file name, no `/`.
    Name,
}

/// Checks that `id`, read from a record (a question id in
/// `conditions/NAME.json`, a condition name, an id a study or a shard
/// names), is an id and nothing else before a path is built from it
/// (issue 24, item 20): not empty; no NUL, no backslash, no control
/// character; not absolute; under [`IdKind::Record`] names joined by `/`,
/// none empty, `.` or `..`; under [`IdKind::Name`] one such name. Every
/// path of a runs root built from an id ([`RunsRoot`], the site's pages)
/// goes through it, so no record can make `report` or `build` read or
/// write outside the root or the project.
///
/// Errors: why it is not an id, worded for a message that names the file
/// it came from.
pub fn check_id(id: &str, kind: IdKind) -> std::result::Result<(), String> {
    let what = match kind {
        IdKind::Record => "an id (names joined by '/')",
        IdKind::Name => "a name (one folder name)",
    };
    let why = if id.is_empty() {
        Some("it is empty")
    } else if id.chars().any(char::is_control) {
        Some("it holds a control character")
    } else if id.chars().any(crate::text::is_bidi_control) {
        Some(
            "it holds a bidirectional control character (such as U+202E), which shows it as \
             another id",
        )
    } else if id.contains('\\') {
        Some("it holds a backslash")
    } else if id.starts_with('/') {
        Some("it is an absolute path")
    } else if kind == IdKind::Name && id.contains('/') {
        Some("it holds '/'")
    } else if id.split('/').any(|part| part.is_empty()) {
        Some("it has an empty part ('//' or a '/' at an end)")
    } else if id.split('/').any(|part| part == "." || part == "..") {
        Some("it has a '.' or '..' part, which would lead out of its folder")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(format!("'{}' is not {what}: {why}", id.escape_debug())),
    }
}

/// `id` as a path segment, once [`check_id`] accepts it; else a name no
/// file system call accepts (it holds NUL), so that a path built from an
/// id no loader checked can neither be read nor written: every caller
/// checks first, and this is the last guard (issue 24, item 20).
pub fn id_segment(id: &str, kind: IdKind) -> std::borrow::Cow<'_, str> {
    match check_id(id, kind) {
        Ok(()) => std::borrow::Cow::Borrowed(id),
        Err(_) => std::borrow::Cow::Owned("\0not an id".to_string()),
    }
}

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

    /// `conditions/NAME.json` (NAME checked, [`id_segment`]).
    pub fn condition_file(&self, name: &str) -> PathBuf {
        let name = id_segment(name, IdKind::Name);
        self.root.join(CONDITIONS_DIR).join(format!("{name}.json"))
    }

    /// `conditions/NAME.lock`: held while a run records the condition
    /// ([`crate::runs::lock`]).
    pub fn lock_file(&self, name: &str) -> PathBuf {
        let name = id_segment(name, IdKind::Name);
        self.root.join(CONDITIONS_DIR).join(format!("{name}.lock"))
    }

    /// `ID_results/` (ID checked, [`id_segment`]).
    pub fn question_dir(&self, id: &str) -> PathBuf {
        let id = id_segment(id, IdKind::Record);
        self.root.join(format!("{id}{QUESTION_SUFFIX}"))
    }

    /// `ID_results/NAME/`.
    pub fn condition_dir(&self, id: &str, condition: &str) -> PathBuf {
        self.question_dir(id)
            .join(id_segment(condition, IdKind::Name).as_ref())
    }

    /// `ID_results/NAME/attempt-N/`.
    pub fn attempt_dir(&self, id: &str, condition: &str, attempt: u32) -> PathBuf {
        self.condition_dir(id, condition)
            .join(format!("attempt-{attempt}"))
    }

    /// Every `ID_results/NAME/` folder on disk, as (record id, condition
    /// name), sorted: what was recorded, whether or not a condition file
    /// lists it (an interrupted run leaves folders that none lists).
    pub fn condition_folders(&self) -> Vec<(String, String)> {
        let mut found = Vec::new();
        for question in std::fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
        {
            let file_name = question.file_name();
            let Some(id) = file_name
                .to_str()
                .and_then(|n| n.strip_suffix(QUESTION_SUFFIX))
            else {
                continue;
            };
            if !question.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            for condition in std::fs::read_dir(question.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if condition.file_type().is_ok_and(|t| t.is_dir())
                    && let Some(name) = condition.file_name().to_str()
                {
                    found.push((id.to_string(), name.to_string()));
                }
            }
        }
        found.sort();
        found
    }

    /// The conditions whose `conditions/NAME.lock` exists (a run is
    /// recording them, or one was killed), sorted.
    pub fn locked_conditions(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.root.join(CONDITIONS_DIR))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_suffix(".lock")
                    .map(str::to_string)
            })
            .collect();
        names.sort();
        names
    }

    /// The attempts recorded in `ID_results/NAME/`: the numbers of its
    /// `attempt-N/` folders holding an `episode.json` (written last, so
    /// its presence marks a finished attempt), sorted.
    pub fn finished_attempts(&self, id: &str, condition: &str) -> Vec<u32> {
        let mut numbers: Vec<u32> = std::fs::read_dir(self.condition_dir(id, condition))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let n = e
                    .file_name()
                    .to_str()?
                    .strip_prefix("attempt-")?
                    .parse()
                    .ok()?;
                e.path().join(EPISODE_FILE).is_file().then_some(n)
            })
            .collect();
        numbers.sort_unstable();
        numbers
    }

    /// `.frozen`.
    pub fn frozen_file(&self) -> PathBuf {
        self.root.join(FROZEN_FILE)
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

    /// Issue 24, item 20: only ids that stay in their folder become paths.
    #[test]
    fn ids_are_names_joined_by_slashes_and_nothing_else() {
        for id in ["q_x", "sub/q_x", "a.b-c", "x..y", ".hidden", "é/ü"] {
            assert_eq!(check_id(id, IdKind::Record), Ok(()), "{id}");
        }
        for id in [
            "",
            "..",
            ".",
            "../x",
            "a/../../x",
            "a/./b",
            "/abs",
            "a//b",
            "a/",
            "a\\b",
            "a\0b",
            "a\nb",
        ] {
            assert!(check_id(id, IdKind::Record).is_err(), "{id:?}");
        }
        assert!(check_id("sub/q", IdKind::Name).is_err());
        assert_eq!(
            check_id("demo-kg-all-tools__kg-named", IdKind::Name),
            Ok(())
        );
        let root = RunsRoot::new("r");
        assert_eq!(root.question_dir("sub/q"), Path::new("r/sub/q_results"));
        // An id no loader checked leads nowhere a file can be.
        let bad = root.attempt_dir("../../etc", "..", 1);
        assert!(bad.to_string_lossy().contains('\0'), "{}", bad.display());
        assert!(std::fs::metadata(&bad).is_err());
    }

    #[test]
    fn paths_follow_the_documented_layout() {
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
