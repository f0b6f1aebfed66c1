//! Reading what a runs root recorded, by one set of rules for `run`,
//! `rescore` and `report` (`docs/FORMAT.md`, "Re-scoring"): a recorded
//! file that is present is read whole or refused by name (and line), and a
//! file that is absent is absent only where the rest of the record allows
//! it. Nothing here guesses: a file that cannot be read never reads as a
//! file that was never written.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::records::{AttemptResult, ConditionFile, Episode, RUNS_FORMAT, RUNS_FORMATS_READ};
use crate::error::{Error, Result};
use crate::fsutil::read_json;
use crate::layout::{
    AGENT_FILE, ANSWER_FILE, CALLS_FILE, CallRecord, CallsFile, EPISODE_FILE, GROUND_TRUTH_CSV,
    GROUND_TRUTH_JSON, LOG_FORMAT, METRICS_FILE, Metrics,
};
use crate::reference::{GroundTruth, GroundTruthMeta};
use crate::table::Table;

/// What to do about a recorded file that cannot be used, said after its
/// name in every refusal of this module.
const RESTORE: &str = "restore it from version control, or record the episode again \
                       (`okn-benchmark run ... --force`)";

/// What to do about a question's ground truth that cannot be used.
const RESTORE_TRUTH: &str = "restore it from version control, or record the question again \
                             (`okn-benchmark run ... --force` copies it from the corpus)";

/// The note [`super::judge::judge`] records for an attempt whose wall time
/// came from `agent.json` because it had no `episode.json`: the one record
/// that lets such an attempt be re-judged without one.
pub const RECOVERED_NOTE: &str = "wall time recovered from agent.json (the agent's clock)";

/// Reads `conditions/NAME.json` at `path` in a format this version reads
/// ([`RUNS_FORMATS_READ`]).
///
/// Errors: a file that cannot be read or does not parse (naming its line),
/// or one in another format (naming the formats read).
pub fn read_condition(path: &Path) -> Result<ConditionFile> {
    let condition: ConditionFile = read_json(path)?;
    refuse_format(path, condition.format, RUNS_FORMATS_READ, "")?;
    Ok(condition)
}

/// Refuses the recorded file at `path` when its `format` is not in `read`
/// (`docs/FORMAT.md`, "Format versions"): its members cannot be trusted to
/// mean what this version reads them as. `then` is said after what to do.
///
/// Errors: [`Error::File`] naming `path`, the format and the formats read.
fn refuse_format(
    path: &Path,
    format: u32,
    read: std::ops::RangeInclusive<u32>,
    then: &str,
) -> Result<()> {
    if read.contains(&format) {
        return Ok(());
    }
    Err(Error::file(
        path,
        format!(
            "format {format} is not one this version reads ({} to {}): use the okn-benchmark \
             that recorded it{then}",
            read.start(),
            read.end()
        ),
    ))
}

/// Reads the ground truth recorded beside a question's attempts
/// (`ID_results/ground_truth.json` and `ground_truth.csv`), the CSV checked
/// against the digest the JSON recorded (`docs/FORMAT.md`, "Ground
/// truth"): an edited copy would move every score silently.
///
/// Errors: either file missing or unreadable (the JSON naming its line);
/// a CSV whose digest no longer matches; a CSV that does not parse; a
/// record whose answer key no longer matches its digest, whose columns or
/// row count do not describe the CSV, or whose id is not its folder's.
/// Each names the file and says what to do.
pub fn read_ground_truth(question_dir: &Path) -> Result<GroundTruth> {
    let json_path = question_dir.join(GROUND_TRUTH_JSON);
    if !json_path.is_file() {
        return Err(Error::file(
            &json_path,
            format!(
                "missing: it records the ground truth's digest, without which {GROUND_TRUTH_CSV} \
                 cannot be checked against what the episodes were judged by; {RESTORE_TRUTH}"
            ),
        ));
    }
    let meta: GroundTruthMeta = read_json(&json_path).map_err(|e| {
        Error::Other(format!(
            "{e}; {GROUND_TRUTH_CSV} cannot be checked without it: {RESTORE_TRUTH}"
        ))
    })?;
    let csv_path = question_dir.join(GROUND_TRUTH_CSV);
    let bytes = std::fs::read(&csv_path).map_err(|e| Error::io(&csv_path, "read", e))?;
    if crate::reference::sha256_tag(&bytes) != meta.csv_sha256 {
        return Err(Error::file(
            &csv_path,
            "changed since it was recorded (its digest no longer matches \
             ground_truth.json): restore it from version control; scores \
             were left as they were",
        ));
    }
    let table = Table::from_csv(&bytes).map_err(|e| Error::file(&csv_path, e.to_string()))?;
    // The record must describe the rows and the key it sits beside: the
    // question page shows its answer key as the SPARQL that produced them.
    let edited = |what: &str| {
        Error::file(
            &json_path,
            format!("{what} since it was recorded: {RESTORE_TRUTH}"),
        )
    };
    if crate::reference::sha256_tag(meta.answer_key.as_bytes()) != meta.answer_key_sha256 {
        return Err(edited(
            "its answer_key no longer matches answer_key_sha256: the key was edited",
        ));
    }
    if meta.columns != table.columns || meta.row_count != table.rows.len() {
        return Err(edited(&format!(
            "its columns ({}) and row_count ({}) no longer describe {GROUND_TRUTH_CSV} ({}; {} \
             rows): one was edited",
            meta.columns.join(", "),
            meta.row_count,
            table.columns.join(", "),
            table.rows.len()
        )));
    }
    // An id with a folder (`sub/q_x`) sits in `sub/q_x_results/`.
    let folder = question_dir.file_name().and_then(|n| n.to_str());
    if let Some(id) = folder.and_then(|n| n.strip_suffix(crate::layout::QUESTION_SUFFIX))
        && meta.id.rsplit('/').next() != Some(id)
    {
        return Err(edited(&format!(
            "it records question '{}', but sits in the folder of '{id}': it was copied or edited",
            meta.id
        )));
    }
    Ok(GroundTruth { meta, table })
}

/// Reads an attempt folder's `calls.json`, when it has one.
///
/// Errors: one that cannot be read or does not parse (naming its line).
pub fn read_calls_file(dir: &Path) -> Result<Option<CallsFile>> {
    let path = dir.join(CALLS_FILE);
    if !path.exists() {
        return Ok(None);
    }
    let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, "read", e))?;
    parse_calls_file(&path, &bytes).map(Some)
}

/// Parses the bytes of the `calls.json` at `path` (for a reader that
/// already holds them).
///
/// Errors: bytes that are not a call log, naming the line.
pub fn parse_calls_file(path: &Path, bytes: &[u8]) -> Result<CallsFile> {
    serde_json::from_slice(bytes).map_err(|e| Error::at_line(path, e.line() as u64, e.to_string()))
}

/// The agent host's own report (`agent.json`), as it came: it is the
/// host's standard output, kept whole, so what it holds is evidence, not a
/// file of ours.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentReport {
    /// No `agent.json`: the host wrote nothing to standard output.
    Absent,
    /// Only white space (a host killed before it reported, in roots
    /// recorded before such a file stopped being written).
    Empty,
    /// JSON.
    Json(Value),
    /// Not JSON: what the parser said, and at which line.
    NotJson {
        /// 1-based line of the error.
        line: u64,
        /// The parser's words.
        error: String,
    },
}

impl AgentReport {
    /// The report as JSON, when it is.
    pub fn json(&self) -> Option<&Value> {
        match self {
            AgentReport::Json(v) => Some(v),
            _ => None,
        }
    }

    /// Reads `dir/agent.json`.
    ///
    /// Errors: a file that exists and cannot be read.
    pub fn read(dir: &Path) -> Result<AgentReport> {
        let path = dir.join(AGENT_FILE);
        if !path.exists() {
            return Ok(AgentReport::Absent);
        }
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, "read", e))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(AgentReport::Empty);
        }
        Ok(match serde_json::from_slice(&bytes) {
            Ok(v) => AgentReport::Json(v),
            Err(e) => AgentReport::NotJson {
                line: e.line() as u64,
                error: e.to_string(),
            },
        })
    }
}

/// Everything an attempt folder recorded that its judgment rests on.
#[derive(Debug, Clone)]
pub struct AttemptFiles {
    /// The attempt folder.
    pub dir: PathBuf,
    /// `metrics.json`; `None` when absent.
    pub metrics: Option<Metrics>,
    /// `calls.json`'s calls; `None` when absent.
    pub calls: Option<Vec<CallRecord>>,
    /// `episode.json`, else the episode recovered from `agent.json`
    /// (`source: "agent.json"`); `None` when neither is there.
    pub episode: Option<Episode>,
    /// Whether `episode.json` itself was there.
    pub episode_file: bool,
    /// `agent.json`.
    pub agent: AgentReport,
    /// `answer.csv`'s bytes; `None` when nothing was submitted.
    pub answer: Option<Vec<u8>>,
}

impl AttemptFiles {
    /// Reads attempt `attempt`'s folder `dir`. The proxy's files
    /// (`metrics.json`, `calls.json`) and the runner's (`episode.json`) are
    /// written whole (atomically), so one that is present and does not
    /// parse, or lacks a member its format requires, is damage.
    ///
    /// Errors: such a file, named with its line and what to do; one in a
    /// format this version does not read (`docs/FORMAT.md`, "Format
    /// versions"); a file that exists and cannot be read.
    pub fn read(dir: &Path, attempt: u32) -> Result<AttemptFiles> {
        let damaged = |e: Error| Error::Other(format!("{e}; {RESTORE}"));
        let metrics_path = dir.join(METRICS_FILE);
        let metrics = if metrics_path.exists() {
            Some(read_json::<Metrics>(&metrics_path).map_err(damaged)?)
        } else {
            None
        };
        let calls_file = read_calls_file(dir).map_err(damaged)?;
        let agent = AgentReport::read(dir)?;
        let episode_path = dir.join(EPISODE_FILE);
        let episode_file = episode_path.exists();
        let recorded_episode = if episode_file {
            Some(read_json::<Episode>(&episode_path).map_err(damaged)?)
        } else {
            None
        };
        // A format no version wrote is damage too.
        let or_restore = format!(", or {RESTORE}");
        let formats = [
            (
                METRICS_FILE,
                metrics.as_ref().map(|m| m.format),
                1..=LOG_FORMAT,
            ),
            (
                CALLS_FILE,
                calls_file.as_ref().map(|c| c.format),
                1..=LOG_FORMAT,
            ),
            (
                EPISODE_FILE,
                recorded_episode.as_ref().map(|e| e.format),
                RUNS_FORMATS_READ,
            ),
        ];
        for (file, format, read) in formats {
            if let Some(format) = format {
                refuse_format(&dir.join(file), format, read, &or_restore)?;
            }
        }
        let calls = calls_file.map(|f| f.calls);
        let episode =
            recorded_episode.or_else(|| agent.json().and_then(|r| recovered_episode(r, attempt)));
        let answer_path = dir.join(ANSWER_FILE);
        let answer = if answer_path.exists() {
            Some(std::fs::read(&answer_path).map_err(|e| Error::io(&answer_path, "read", e))?)
        } else {
            None
        };
        Ok(AttemptFiles {
            dir: dir.to_path_buf(),
            metrics,
            calls,
            episode,
            episode_file,
            agent,
            answer,
        })
    }

    /// [`AttemptFiles::read`], then [`AttemptFiles::check_recorded`] against
    /// `recorded`: the files of an attempt as `rescore` and the loader of a
    /// root (`report::load`) take them, before judging it again.
    ///
    /// Errors: as those two.
    pub fn read_checked(
        dir: &Path,
        attempt: u32,
        recorded: Option<&AttemptResult>,
    ) -> Result<AttemptFiles> {
        let files = AttemptFiles::read(dir, attempt)?;
        files.check_recorded(recorded)?;
        Ok(files)
    }

    /// Checks that every file the record says the attempt wrote is there
    /// and usable, before it is judged again (`docs/FORMAT.md`,
    /// "Re-scoring"). `recorded` is the attempt as `result.json` recorded
    /// it, when that file could be read. The rules:
    ///
    /// - `metrics.json` and `calls.json` are written together by the proxy:
    ///   both are absent only when no tool was called (the proxy never
    ///   started, or nothing reached it), so neither is when the other is
    ///   there, when an answer was submitted (through the proxy), or when
    ///   the record names tools called.
    /// - `episode.json` is written last by the runner: absent only in an
    ///   attempt the record says was judged without it (its wall time
    ///   recovered from `agent.json`).
    /// - `agent.json` is the host's standard output: a host that exited 0
    ///   and was not stopped (`episode.json`) reported a JSON object with a
    ///   `type` member (`claude -p --output-format json`, the scripted
    ///   agent); a host that failed or was killed may have left anything,
    ///   or nothing.
    ///
    /// Errors: the first file that breaks a rule, named (with its line
    /// where there is one) with what to do.
    pub fn check_recorded(&self, recorded: Option<&AttemptResult>) -> Result<()> {
        let dir = &self.dir;
        let lost = |file: &str, why: &str| {
            Err(Error::file(
                dir.join(file),
                format!("missing, though {why}; {RESTORE}"),
            ))
        };
        let called = recorded.is_some_and(|r| !r.tools_called.is_empty());
        match (&self.metrics, &self.calls) {
            (Some(_), None) => return lost(CALLS_FILE, "the proxy wrote metrics.json beside it"),
            (None, Some(_)) => return lost(METRICS_FILE, "the proxy wrote calls.json beside it"),
            (None, None) if self.answer.is_some() => {
                return lost(METRICS_FILE, "an answer was submitted through the proxy");
            }
            (None, None) if called => {
                return lost(METRICS_FILE, "result.json records the tools called");
            }
            _ => {}
        }
        if !self.episode_file {
            let recovered = recorded.is_some_and(|r| r.notes.iter().any(|n| n == RECOVERED_NOTE));
            if !recovered || self.episode.is_none() {
                return lost(
                    EPISODE_FILE,
                    "the runner writes it when an attempt ends, and the attempt was judged \
                     with it",
                );
            }
        }
        let clean_exit = self
            .episode
            .as_ref()
            .is_some_and(|e| e.source == "runner" && e.exit_code == Some(0) && !e.timed_out);
        if clean_exit {
            let path = dir.join(AGENT_FILE);
            let why = "the agent host exited 0, and a host that does reports a JSON object \
                       with a `type` member there (`claude -p --output-format json`, the \
                       scripted agent)";
            match &self.agent {
                AgentReport::Json(v) if v.get("type").is_some() => {}
                AgentReport::Json(_) => {
                    return Err(Error::file(
                        path,
                        format!("lacks its `type` member: {why}; {RESTORE}"),
                    ));
                }
                AgentReport::NotJson { line, error } => {
                    return Err(Error::at_line(
                        path,
                        *line,
                        format!("{error}: {why}; {RESTORE}"),
                    ));
                }
                AgentReport::Empty => {
                    return Err(Error::file(path, format!("empty: {why}; {RESTORE}")));
                }
                AgentReport::Absent => return lost(AGENT_FILE, why),
            }
        }
        Ok(())
    }
}

/// An episode recovered from the agent host's report alone (stamped
/// `source: "agent.json"`: its `duration_ms` is the agent's own clock), for
/// an attempt that has no `episode.json`.
pub fn recovered_episode(report: &Value, attempt: u32) -> Option<Episode> {
    let duration_ms = report.get("duration_ms").and_then(Value::as_f64)?;
    Some(Episode {
        format: RUNS_FORMAT,
        attempt,
        agent: "claude".into(),
        model_requested: None,
        model_resolved: model_from_report(report),
        wall_s: duration_ms / 1000.0,
        exit_code: None,
        timed_out: false,
        agent_timeout_s: None,
        source: AGENT_FILE.into(),
        usage: super::records::Usage::from_report(report),
        upstream: None,
    })
}

/// The model an agent host's JSON report says it used: `model`, else the
/// first key of `modelUsage` (the claude CLI's report).
pub fn model_from_report(report: &Value) -> Option<String> {
    if let Some(model) = report.get("model").and_then(Value::as_str) {
        return Some(model.to_string());
    }
    report
        .get("modelUsage")
        .and_then(Value::as_object)
        .and_then(|usage| usage.keys().next().cloned())
}
