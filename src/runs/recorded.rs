//! Reading what a runs root recorded, by one set of rules for `run`,
//! `rescore` and `report` (`docs/FORMAT.md`, "Re-scoring"): a recorded
//! file that is present is read whole or refused by name (and line), and a
//! file that is absent is absent only where the rest of the record allows
//! it. Nothing here guesses: a file that cannot be read never reads as a
//! file that was never written.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use super::records::{AttemptResult, ConditionFile, Episode, RUNS_FORMAT, RUNS_FORMATS_READ};
use crate::agent::host::{Host, HostOutput, HostReport};
use crate::error::{Error, Result};
use crate::fsutil::{Listing, parse_recorded_json, read_recorded, read_recorded_json};
use crate::layout::{
    AGENT_FILE, AGENT_STDERR_FILE, ANSWER_FILE, CALLS_FILE, CallRecord, CallsFile, EPISODE_FILE,
    GROUND_TRUTH_CSV, GROUND_TRUTH_JSON, IdKind, JOURNAL_FILE, LOG_FORMAT, METRICS_FILE, Metrics,
    PROMPT_FILE, RunsRoot, check_id,
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

/// The note [`super::judge::judge`] records for an attempt judged from an
/// episode recovered from `agent.json` (`source: "agent.json"`): its wall
/// time is the agent's clock, which excludes process startup, so it is
/// marked rather than passed off as measured (`docs/FORMAT.md`,
/// "`episode.json`"). In an attempt's entry of `result.json` it is the
/// evidence that lets an attempt without `episode.json` be judged again
/// ([`judged_from_recovered`]); its text never changes, so older roots
/// read.
pub const RECOVERED_NOTE: &str = "wall time recovered from agent.json (the agent's clock)";

/// Whether `recorded` (an attempt's entry in its question's `result.json`)
/// says the attempt was judged from an episode recovered from `agent.json`
/// (it carries [`RECOVERED_NOTE`]): the one evidence on disk that an
/// attempt without `episode.json` was recorded before that file existed,
/// not one that lost it (`docs/FORMAT.md`, "Re-scoring"; issue 24, item
/// 15).
pub fn judged_from_recovered(recorded: &AttemptResult) -> bool {
    recorded.notes.iter().any(|n| n == RECOVERED_NOTE)
}

/// Reads `conditions/NAME.json` at `path` in a format this version reads
/// ([`RUNS_FORMATS_READ`]), every id it names checked as an id
/// (`check_ids`).
///
/// Errors: a file that is absent, cannot be read (a link, a named pipe:
/// [`crate::fsutil::open_regular`]) or does not parse (naming its line);
/// one in another format (naming the formats read); one naming something
/// that is not an id.
pub fn read_condition(path: &Path) -> Result<ConditionFile> {
    let condition: ConditionFile = read_recorded_json(path)?.ok_or_else(|| {
        Error::io(
            path,
            "read",
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )
    })?;
    refuse_format(path, condition.format, RUNS_FORMATS_READ, "")?;
    check_ids(path, &condition)?;
    check_values(path, &condition)?;
    Ok(condition)
}

/// Checks the members of the condition file at `path` that a flag of
/// `run` or `rescore` sets by the rule that flag applies (issue 24, item
/// 7), so a hand edit cannot put into a record what the command line
/// refuses: `identity.effort` is a level of `--effort`
/// ([`super::identity::Effort`]), `identity.repeat` one `--repeat` takes
/// (1 to [`super::identity::MAX_REPEAT`]), `settings.significant_figures`
/// one `--precision` takes ([`crate::score::SIGNIFICANT_FIGURES`]); a
/// `settings.max_turns` of at least 1; a `settings.census` whose digest is that of its version and tools, and
/// whose version is the identity's (issue 25); a `settings.corpus` that
/// is `identity.corpus` (both `--corpus` as given); and no
/// question is both listed and excluded (`meta.excluded`): it would be
/// counted in the rates it is said to be kept out of.
///
/// Errors: [`Error::File`] naming `path`, the member and what it may be.
fn check_values(path: &Path, condition: &ConditionFile) -> Result<()> {
    let edited = |member: &str, why: String| {
        Error::file(
            path,
            format!("{member}: {why}; the file was edited by hand: {RESTORE_CONDITION}"),
        )
    };
    if let Some(effort) = &condition.identity.effort
        && super::identity::Effort::parse(effort).is_none()
    {
        let levels: Vec<&str> = super::identity::Effort::ALL
            .iter()
            .map(|e| e.as_str())
            .collect();
        return Err(edited(
            "identity.effort",
            format!(
                "'{}' is not a level of --effort ({})",
                effort.escape_debug(),
                levels.join(", ")
            ),
        ));
    }
    let repeat = condition.identity.repeat;
    if !(1..=super::identity::MAX_REPEAT).contains(&repeat) {
        return Err(edited(
            "identity.repeat",
            format!(
                "{repeat} is not a number of attempts --repeat takes (1 to {})",
                super::identity::MAX_REPEAT
            ),
        ));
    }
    // Both are `--corpus` as given: the corpus a root's expectations are
    // checked against is found by `settings.corpus` (issue 27, red team).
    if condition.settings.corpus != condition.identity.corpus {
        return Err(edited(
            "settings.corpus",
            format!(
                "'{}' is not identity.corpus '{}', and run writes both from --corpus",
                crate::text::printable(&condition.settings.corpus),
                crate::text::printable(&condition.identity.corpus)
            ),
        ));
    }
    if condition.settings.max_turns == Some(0) {
        return Err(edited(
            "settings.max_turns",
            "0 is not a limit --max-turns takes (at least 1)".into(),
        ));
    }
    let figures = condition.settings.significant_figures;
    let range = crate::score::SIGNIFICANT_FIGURES;
    if !range.contains(&figures) {
        return Err(edited(
            "settings.significant_figures",
            format!(
                "{figures} is not a precision --precision takes ({} to {})",
                range.start(),
                range.end()
            ),
        ));
    }
    let host = crate::agent::host::Host::of_agent(&condition.identity.agent);
    let plays_model = host.is_some_and(|h| h != crate::agent::host::Host::Scripted);
    match (&condition.settings.census, host) {
        (None, Some(_)) if plays_model && condition.format >= 5 => {
            return Err(edited(
                "settings.census",
                "absent, though every condition of a model's host recorded in runs-root format 5 \
                 or later has the census taken before its first episode"
                    .into(),
            ));
        }
        (Some(_), _) if !plays_model => {
            return Err(edited(
                "settings.census",
                format!(
                    "present for agent '{}', which calls no model and has no census",
                    condition.identity.agent.escape_debug()
                ),
            ));
        }
        (Some(census), Some(host)) => {
            if let Some(why) = crate::agent::census::impossible(host, census) {
                return Err(edited("settings.census", why));
            }
        }
        _ => {}
    }
    if let Some(census) = &condition.settings.census {
        if !census.digest_holds() {
            return Err(edited(
                "settings.census.digest",
                "it is not the SHA-256 of the census's host_version and tools, so one of them \
                 is not what the census found"
                    .into(),
            ));
        }
        if let Some(version) = &condition.identity.host_version
            && *version != census.host_version
        {
            return Err(edited(
                "settings.census.host_version",
                format!(
                    "'{}' is not the condition's identity.host_version '{}'",
                    census.host_version.escape_debug(),
                    version.escape_debug()
                ),
            ));
        }
    }
    if let Some(both) = condition
        .meta
        .excluded
        .iter()
        .find(|e| condition.questions.contains_key(&e.id))
    {
        return Err(edited(
            "meta.excluded",
            format!(
                "question '{}' is excluded, and listed in questions too: it would be counted \
                 in the rates it is kept out of",
                both.id.escape_debug()
            ),
        ));
    }
    Ok(())
}

/// Reads condition `name` of `root` ([`read_condition`]), the name (a
/// file stem found on disk) checked as a name first.
///
/// Errors: a name that is not one (`conditions/...json`); those of
/// [`read_condition`].
pub fn read_condition_named(root: &RunsRoot, name: &str) -> Result<ConditionFile> {
    if let Err(why) = check_id(name, IdKind::Name) {
        return Err(Error::file(
            root.root
                .join(crate::layout::CONDITIONS_DIR)
                .join(format!("{name}.json")),
            format!("its name is no condition name: {why}; rename or remove it"),
        ));
    }
    read_condition(&root.condition_file(name))
}

/// Checks every id the condition file at `path` names before any path is
/// built from one (issue 24, item 20): its `name` (which must be the
/// file's own), its question ids, the ids it excludes, and the selection a
/// shard records.
///
/// Errors: [`Error::File`] naming `path` and the first that is not an id.
fn check_ids(path: &Path, condition: &ConditionFile) -> Result<()> {
    let edited = |member: &str, why: String| {
        Error::file(
            path,
            format!("{member}: {why}; the file was edited by hand: {RESTORE_CONDITION}"),
        )
    };
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if condition.name != stem {
        return Err(edited(
            "name",
            format!(
                "'{}' is not this file's condition ('{stem}')",
                condition.name.escape_debug()
            ),
        ));
    }
    let ids = [
        ("questions", condition.questions.keys().collect::<Vec<_>>()),
        (
            "meta.excluded",
            condition.meta.excluded.iter().map(|e| &e.id).collect(),
        ),
        (
            "identity.excluded",
            condition.identity.excluded.iter().collect(),
        ),
        (
            "shard.questions",
            condition.shard.iter().flat_map(|s| &s.questions).collect(),
        ),
    ];
    for (member, ids) in ids {
        for id in ids {
            check_id(id, IdKind::Record).map_err(|why| edited(member, why))?;
        }
    }
    Ok(())
}

/// What to do about a condition file that cannot be used.
const RESTORE_CONDITION: &str = "restore it from version control";

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
    let meta: GroundTruthMeta = read_recorded_json(&json_path)
        .map_err(|e| {
            Error::Other(format!(
                "{e}; {GROUND_TRUTH_CSV} cannot be checked without it: {RESTORE_TRUTH}"
            ))
        })?
        .ok_or_else(|| {
            Error::file(
                &json_path,
                format!(
                    "missing: it records the ground truth's digest, without which \
                     {GROUND_TRUTH_CSV} cannot be checked against what the episodes were judged \
                     by; {RESTORE_TRUTH}"
                ),
            )
        })?;
    let csv_path = question_dir.join(GROUND_TRUTH_CSV);
    let bytes = read_recorded(&csv_path)
        .map_err(|e| Error::Other(format!("{e}; {RESTORE_TRUTH}")))?
        .ok_or_else(|| Error::file(&csv_path, format!("missing; {RESTORE_TRUTH}")))?;
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

/// Reads an attempt folder's `calls.json`, when it has one, or, in an
/// attempt not `finished` (no `episode.json`), the proxy's journal
/// (`calls.jsonl`) when that is newer: an attempt whose proxy and runner
/// were killed mid-episode has only the journal's record of its last
/// calls ([`crate::layout::newer_calls`]; `docs/FORMAT.md`,
/// "calls.jsonl"). A finished attempt holds no journal (the runner
/// settles it before it writes `episode.json`), so none is looked for.
///
/// Errors: one that cannot be read or does not parse (naming its line);
/// a complete journal line that is not a call.
pub fn read_calls_file(dir: &Path, finished: bool) -> Result<Option<CallsFile>> {
    calls_file_of(dir, finished, |name| read_recorded(&dir.join(name)))
}

/// [`read_calls_file`] of the folder `dir`, each file's bytes as
/// `read(name)` gives them (`None` when absent).
fn calls_file_of(
    dir: &Path,
    finished: bool,
    read: impl Fn(&str) -> Result<Option<Vec<u8>>>,
) -> Result<Option<CallsFile>> {
    let path = dir.join(CALLS_FILE);
    let calls = match read(CALLS_FILE)? {
        Some(bytes) => Some(parse_calls_file(&path, &bytes)?),
        None => None,
    };
    if finished {
        return Ok(calls);
    }
    let path = dir.join(JOURNAL_FILE);
    let journal = match read(JOURNAL_FILE)? {
        Some(bytes) => crate::layout::parse_journal(&bytes)
            .map_err(|(line, e)| Error::at_line(&path, line, e))?,
        None => None,
    };
    Ok(crate::layout::newer_calls(calls, journal))
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
        Ok(AgentReport::of(read_recorded(&path)?.as_deref()))
    }

    /// The report `bytes` (an `agent.json` as read; `None` when absent)
    /// hold.
    pub fn of(bytes: Option<&[u8]>) -> AgentReport {
        let Some(bytes) = bytes else {
            return AgentReport::Absent;
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return AgentReport::Empty;
        }
        match serde_json::from_slice(bytes) {
            Ok(v) => AgentReport::Json(v),
            Err(e) => AgentReport::NotJson {
                line: e.line() as u64,
                error: e.to_string(),
            },
        }
    }
}

/// Everything an attempt folder recorded that its judgment rests on.
#[derive(Debug, Clone)]
pub struct AttemptFiles {
    /// The attempt folder.
    pub dir: PathBuf,
    /// The attempt's number (its folder's `attempt-N`).
    pub attempt: u32,
    /// `metrics.json`; `None` when absent.
    pub metrics: Option<Metrics>,
    /// `calls.json`'s calls; `None` when absent.
    pub calls: Option<Vec<CallRecord>>,
    /// `episode.json`, else the episode recovered from `agent.json` for an
    /// attempt its record says was judged from one
    /// ([`AttemptFiles::recover`]); `None` when neither.
    pub episode: Option<Episode>,
    /// Whether [`AttemptFiles::episode`] was recovered from `agent.json`
    /// in memory, the attempt having no `episode.json` on disk: `rescore`
    /// and `run --resume` record it ([`AttemptFiles::recovered_record`]).
    pub recovered: bool,
    /// `agent.json`.
    pub agent: AgentReport,
    /// `agent.json`'s bytes and `agent.stderr.log`'s (empty when absent):
    /// the host's output its parser reads.
    pub output: (Vec<u8>, Vec<u8>),
    /// The host report its host's parser derives from [`Self::output`] and
    /// the episode ([`AttemptFiles::derive_host_report`]): what judging
    /// reads (issue 25). A recorded `host_report` is checked against it
    /// ([`AttemptFiles::check_recorded`]).
    pub host: HostReport,
    /// `answer.csv`'s bytes; `None` when nothing was submitted.
    pub answer: Option<Vec<u8>>,
    /// `prompt.txt`'s bytes; `None` when absent (which
    /// [`AttemptFiles::check_recorded`] refuses of a finished attempt).
    pub prompt: Option<Vec<u8>>,
}

impl AttemptFiles {
    /// The files of an attempt folder [`AttemptFiles::read`] reads (each
    /// once), among [`crate::layout::ATTEMPT_FILES`].
    pub const READ: [&'static str; 7] = [
        METRICS_FILE,
        CALLS_FILE,
        AGENT_FILE,
        EPISODE_FILE,
        ANSWER_FILE,
        AGENT_STDERR_FILE,
        PROMPT_FILE,
    ];

    /// Reads attempt `attempt`'s folder `dir`. The proxy's files
    /// (`metrics.json`, `calls.json`) and the runner's (`episode.json`) are
    /// written whole (atomically), so one that is present and does not
    /// parse, or lacks a member its format requires, is damage. An attempt
    /// without `episode.json` is read without an episode: one is recovered
    /// from `agent.json` only on the evidence of its record
    /// ([`AttemptFiles::recover`], which [`AttemptFiles::read_checked`]
    /// applies; issue 24, item 15), and [`AttemptFiles::check_recorded`]
    /// refuses a finished attempt left without one.
    ///
    /// Errors: such a file, named with its line and what to do; one in a
    /// format this version does not read (`docs/FORMAT.md`, "Format
    /// versions"); a file that exists and cannot be read.
    pub fn read(dir: &Path, attempt: u32) -> Result<AttemptFiles> {
        AttemptFiles::read_listed(&Listing::of(dir), attempt)
    }

    /// [`AttemptFiles::read`] of the folder `listing` lists: a file it
    /// lacks is absent without being asked after.
    ///
    /// Errors: as [`AttemptFiles::read`].
    pub fn read_listed(listing: &Listing, attempt: u32) -> Result<AttemptFiles> {
        let dir = listing.dir();
        let damaged = |e: Error| Error::Other(format!("{e}; {RESTORE}"));
        let json = |name: &str| -> Result<Option<Vec<u8>>> { listing.read(name).map_err(damaged) };
        let metrics = parse_recorded_json::<Metrics>(&dir.join(METRICS_FILE), json(METRICS_FILE)?)
            .map_err(damaged)?;
        let episode = parse_recorded_json::<Episode>(&dir.join(EPISODE_FILE), json(EPISODE_FILE)?)
            .map_err(damaged)?;
        let calls_file =
            calls_file_of(dir, episode.is_some(), |name| listing.read(name)).map_err(damaged)?;
        // agent.json is read once: the report and the host's output.
        let stdout = json(AGENT_FILE)?;
        let agent = AgentReport::of(stdout.as_deref());
        let stdout = stdout.unwrap_or_default();
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
                episode.as_ref().map(|e| e.format),
                RUNS_FORMATS_READ,
            ),
        ];
        for (file, format, read) in formats {
            if let Some(format) = format {
                refuse_format(&dir.join(file), format, read, &or_restore)?;
            }
        }
        let calls = calls_file.map(|f| f.calls);
        let answer = json(ANSWER_FILE)?;
        let stderr = json(AGENT_STDERR_FILE)?.unwrap_or_default();
        let prompt = json(PROMPT_FILE)?;
        let mut files = AttemptFiles {
            dir: dir.to_path_buf(),
            attempt,
            metrics,
            calls,
            episode,
            recovered: false,
            agent,
            output: (stdout, stderr),
            host: HostReport {
                host: String::new(),
                model: None,
                usage: None,
                failure: None,
            },
            answer,
            prompt,
        };
        files.host = files.derive_host_report()?;
        Ok(files)
    }

    /// The host the episode names (`episode.json`'s `agent`); claude when
    /// there is no episode (an attempt that did not finish: what is read
    /// of it is claude-shaped, as the scripted agent's report is).
    ///
    /// Errors: an agent no host of this version plays, naming the file.
    pub fn host_kind(&self) -> Result<Host> {
        let Some(episode) = &self.episode else {
            return Ok(Host::Claude);
        };
        Host::of_agent(&episode.agent).ok_or_else(|| {
            Error::file(
                self.dir.join(EPISODE_FILE),
                format!(
                    "agent '{}' is no agent host this version knows (claude, codex, gemini, \
                     openai:MODEL, scripted:STRATEGY); {RESTORE}",
                    episode.agent.escape_debug()
                ),
            )
        })
    }

    /// The host report the episode's host parses from its recorded output
    /// (`agent.json`, `agent.stderr.log`) and the episode's record of the
    /// process (issue 25, "The interface"; issue 24: every recorded field
    /// derived again from evidence).
    ///
    /// Errors: as [`AttemptFiles::host_kind`].
    pub fn derive_host_report(&self) -> Result<HostReport> {
        let host = self.host_kind()?;
        let episode = self.episode.as_ref();
        Ok(host.parse(&HostOutput {
            stdout: &self.output.0,
            stderr: &self.output.1,
            exit_code: episode.and_then(|e| e.exit_code),
            timed_out: episode.is_some_and(|e| e.timed_out),
            measured: episode.is_some_and(|e| e.source == "runner"),
        }))
    }

    /// Recovers the episode of an attempt without `episode.json` from the
    /// agent host's own report (`agent.json`), when `recorded` (its entry
    /// in `result.json`) says it was judged from such an episode
    /// ([`judged_from_recovered`]): an attempt written before
    /// `episode.json` existed is honoured, its wall time the host's
    /// `duration_ms`, marked `source: "agent.json"` (README/FORMAT:
    /// `docs/FORMAT.md`, "`episode.json`" and "Re-scoring"; issue 24, item
    /// 15). Without that evidence nothing is recovered: a finished attempt
    /// that lost its `episode.json` is damage
    /// ([`AttemptFiles::check_recorded`]), never papered over by a record
    /// made up from `agent.json`. Nothing is written here
    /// ([`AttemptFiles::recovered_record`] is what `rescore` and `run
    /// --resume` write).
    ///
    /// Errors: an attempt with that evidence whose `agent.json` cannot
    /// give its wall time (absent, empty, not JSON, not a JSON object, or
    /// without a `duration_ms` that is a number of milliseconds), naming
    /// the file (and line) and what to do: a wall time that could not be
    /// computed is never shown.
    pub fn recover(&mut self, recorded: Option<&AttemptResult>) -> Result<()> {
        if self.episode.is_some() || !recorded.is_some_and(judged_from_recovered) {
            return Ok(());
        }
        let path = self.dir.join(AGENT_FILE);
        let why = format!(
            "result.json records attempt {} as judged from an episode recovered from \
             agent.json (\"{RECOVERED_NOTE}\") and it has no {EPISODE_FILE}, so its wall time \
             can only be agent.json's duration_ms",
            self.attempt
        );
        let cannot = |what: &str| Error::file(&path, format!("{what}: {why}; {RESTORE}"));
        let report = match &self.agent {
            AgentReport::Json(report) => report,
            AgentReport::NotJson { line, error } => {
                return Err(Error::at_line(
                    &path,
                    *line,
                    format!("{error}: {why}; {RESTORE}"),
                ));
            }
            AgentReport::Empty => return Err(cannot("empty")),
            AgentReport::Absent => return Err(cannot("missing")),
        };
        let Some(episode) = recovered_episode(report, self.attempt) else {
            return Err(cannot(
                "holds no duration_ms that is a number of milliseconds (the agent host's JSON \
                 report states one)",
            ));
        };
        self.episode = Some(episode);
        self.recovered = true;
        self.host = self.derive_host_report()?;
        Ok(())
    }

    /// The `episode.json` to write for an attempt whose episode was
    /// recovered from `agent.json` ([`AttemptFiles::recover`]): its path
    /// and contents (`source: "agent.json"`), so what the judgment rests
    /// on is recorded on disk, as `docs/FORMAT.md` says of `source` (issue
    /// 24, item 15); `None` when the attempt has its own `episode.json`.
    /// Only `rescore` and `run --resume` write it; `report` and `build`
    /// never write into an attempt folder.
    pub fn recovered_record(&self) -> Option<(PathBuf, &Episode)> {
        let episode = self.episode.as_ref().filter(|_| self.recovered)?;
        Some((self.dir.join(EPISODE_FILE), episode))
    }

    /// Checks that the episode was played by the agent its condition
    /// names (`identity.agent`, as `episode.json`'s `agent` records it):
    /// attempts moved between two conditions of a root (and a `result.json`
    /// broken so that `rescore` rebuilds it) would otherwise be judged and
    /// published as the other condition's (a red team's finding on issue
    /// 24, item 6). An attempt with no episode is left to the other checks.
    ///
    /// Errors: `episode.json` naming another agent, named with both.
    pub fn check_agent(&self, condition: &ConditionFile) -> Result<()> {
        let Some(episode) = &self.episode else {
            return Ok(());
        };
        if episode.agent == condition.identity.agent {
            return Ok(());
        }
        Err(Error::file(
            self.dir.join(EPISODE_FILE),
            format!(
                "records the agent {}, but its condition's identity names {}: the attempt was \
                 played under another condition (folders moved or copied between conditions), \
                 or the condition file was edited; restore them from version control",
                crate::text::printable(&episode.agent),
                crate::text::printable(&condition.identity.agent),
            ),
        ))
    }

    /// [`AttemptFiles::read`], [`AttemptFiles::recover`] on the evidence
    /// of `recorded`, then [`AttemptFiles::check_recorded`] against it: the
    /// files of an attempt as `rescore`, the loader of a root
    /// (`report::load`) and `run --resume` take them, before judging it
    /// again or reusing it.
    ///
    /// Errors: as those three.
    pub fn read_checked(
        dir: &Path,
        attempt: u32,
        recorded: Option<&AttemptResult>,
    ) -> Result<AttemptFiles> {
        AttemptFiles::read_checked_listed(&Listing::of(dir), attempt, recorded)
    }

    /// [`AttemptFiles::read_checked`] of the folder `listing` lists
    /// ([`AttemptFiles::read_listed`]).
    ///
    /// Errors: as [`AttemptFiles::read_checked`].
    pub fn read_checked_listed(
        listing: &Listing,
        attempt: u32,
        recorded: Option<&AttemptResult>,
    ) -> Result<AttemptFiles> {
        let mut files = AttemptFiles::read_listed(listing, attempt)?;
        files.recover(recorded)?;
        files.check_recorded(recorded)?;
        Ok(files)
    }

    /// Checks that every file the record says the attempt wrote is there
    /// and usable, before it is judged again (`docs/FORMAT.md`,
    /// "Re-scoring"). `recorded` is the attempt as `result.json` recorded
    /// it, when that file could be read. The rules:
    ///
    /// - `prompt.txt` is written before the agent host starts, in every
    ///   runs-root format: a finished attempt without it lost it (issue
    ///   24, item 8).
    /// - `metrics.json` and `calls.json` are written together by the proxy:
    ///   both are absent only when no tool was called (the proxy never
    ///   started, or nothing reached it), so neither is when the other is
    ///   there, when an answer was submitted (through the proxy), or when
    ///   the record names tools called.
    /// - `episode.json` is written last by the runner: a finished attempt
    ///   without it lost it, and no episode is made up from `agent.json`
    ///   in its place (issue 24, item 4), unless its record says it was
    ///   judged from an episode recovered from `agent.json` (an attempt
    ///   written before `episode.json` existed, recovered by
    ///   [`AttemptFiles::recover`] before this check; issue 24, item 15).
    ///   An `episode.json` of `source: "agent.json"` is checked against
    ///   `agent.json` (`AttemptFiles::check_agreement`).
    /// - `agent.json` is the host's standard output: a host that exited 0
    ///   and was not stopped (`episode.json`) reported a JSON object with a
    ///   `type` member (`claude -p --output-format json`, the scripted
    ///   agent); a host that failed or was killed may have left anything,
    ///   or nothing.
    ///
    /// Then `AttemptFiles::check_agreement`.
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
        if self.prompt.is_none() {
            return lost(
                PROMPT_FILE,
                "the runner writes it before the agent host starts, in every runs-root format",
            );
        }
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
        if self.episode.is_none() {
            return lost(
                EPISODE_FILE,
                "the runner writes it when an attempt ends, the attempt was recorded as \
                 finished, and result.json does not say it was judged from an episode \
                 recovered from agent.json (an attempt written before episode.json existed)",
            );
        }
        let clean_exit = self
            .episode
            .as_ref()
            .is_some_and(|e| e.source == "runner" && e.exit_code == Some(0) && !e.timed_out);
        if clean_exit {
            let path = dir.join(AGENT_FILE);
            if let AgentReport::Absent = &self.agent {
                return lost(
                    AGENT_FILE,
                    "the agent host exited 0, and a host that does prints its report there",
                );
            }
            if let AgentReport::NotJson { line, error } = &self.agent
                && self.host_kind()? != Host::Codex
            {
                return Err(Error::at_line(
                    path,
                    *line,
                    format!(
                        "{error}: the agent host exited 0, and a host that does prints its \
                         JSON report there; {RESTORE}"
                    ),
                ));
            }
            if let Err(why) = self.host_kind()?.check_clean_exit(&self.output.0) {
                return Err(Error::file(
                    path,
                    format!("{why}, though the agent host exited 0; {RESTORE}"),
                ));
            }
        }
        self.check_agreement()?;
        self.check_answer()
    }

    /// Checks that the attempt's files agree with one another where one
    /// repeats what another records, since a judgment reads the copy
    /// (issue 24, item 6): `metrics.json`'s tallies are what `calls.json`'s
    /// calls give ([`crate::mcp::calllog::tally_differences`]); a startup
    /// error (the server never reached, which blocks an attempt) comes
    /// with no server tool offered and no call forwarded to the server; `episode.json` is this
    /// attempt's, and the usage and model it copied from `agent.json` are
    /// the ones `agent.json` states (an episode recovered from `agent.json`
    /// is what `agent.json` gives, [`recovered_episode`]).
    ///
    /// Errors: the first file that disagrees, naming the member, both
    /// values and what to do.
    fn check_agreement(&self) -> Result<()> {
        let dir = &self.dir;
        let disagree = |file: &str, member: &str, recorded: String, derived: String, from: &str| {
            Err(Error::file(
                dir.join(file),
                format!(
                    "{member} is {recorded}, but {from} gives {derived}: one of them was \
                     edited; {RESTORE}"
                ),
            ))
        };
        // A proxy that never reached its server offers the agent nothing
        // but the answer's submission.
        if let Some(metrics) = self.metrics.as_ref().filter(|m| m.startup_error.is_some())
            && metrics
                .tools_offered
                .iter()
                .any(|t| t != crate::layout::SUBMIT_CSV)
        {
            return disagree(
                METRICS_FILE,
                "startup_error",
                "set (the server was never reached)".into(),
                json_text(&metrics.tools_offered),
                "its tools_offered",
            );
        }
        if let (Some(metrics), Some(calls)) = (&self.metrics, &self.calls) {
            if !tallies_agree(metrics, calls)
                && let Some((member, recorded, derived)) =
                    crate::mcp::calllog::tally_differences(metrics, calls)
                        .into_iter()
                        .next()
            {
                return disagree(METRICS_FILE, member, recorded, derived, CALLS_FILE);
            }
            let forwarded = calls.iter().filter(|c| c.forwarded).count();
            if metrics.startup_error.is_some() && forwarded > 0 {
                return disagree(
                    METRICS_FILE,
                    "startup_error",
                    "set (the server was never reached)".into(),
                    format!("{forwarded} call(s) forwarded to the server"),
                    CALLS_FILE,
                );
            }
        }
        let Some(episode) = self.episode.as_ref() else {
            return Ok(());
        };
        if episode.attempt != self.attempt {
            return disagree(
                EPISODE_FILE,
                "attempt",
                episode.attempt.to_string(),
                self.attempt.to_string(),
                "its folder",
            );
        }
        let report = self.agent.json();
        if episode.source == AGENT_FILE {
            let recovered = report
                .and_then(|r| recovered_episode(r, self.attempt))
                .map(|e| Episode {
                    format: episode.format,
                    // Recorded from runs-root format 4 on (issue 25).
                    host_report: e.host_report.filter(|_| episode.format >= 4),
                    ..e
                });
            if recovered.as_ref() != Some(episode) {
                return disagree(
                    EPISODE_FILE,
                    "the episode recovered from agent.json",
                    json_text(&Some(episode)),
                    json_text(&recovered),
                    AGENT_FILE,
                );
            }
            return Ok(());
        }
        let derived = &self.host;
        if episode.format >= 4 && episode.host_report.as_ref() != Some(derived) {
            // Issue 25: the host report is what the host's parser gives.
            return disagree(
                EPISODE_FILE,
                "host_report",
                json_text(&episode.host_report),
                json_text(&Some(derived)),
                "agent.json, parsed by its host's parser,",
            );
        }
        // A format-1 episode predates `usage`; from format 4 on it is in
        // `host_report`.
        let usage_recorded = (2..4).contains(&episode.format) || episode.usage.is_some();
        if usage_recorded && episode.usage != derived.usage {
            return disagree(
                EPISODE_FILE,
                "usage",
                json_text(&episode.usage),
                json_text(&derived.usage),
                AGENT_FILE,
            );
        }
        if episode.model_resolved != derived.model {
            return disagree(
                EPISODE_FILE,
                "model_resolved",
                json_text(&episode.model_resolved),
                json_text(&derived.model),
                AGENT_FILE,
            );
        }
        Ok(())
    }

    /// Checks `answer.csv` against what `calls.json` recorded of the
    /// answers submitted (issue 24, item 1): `answer.csv` is the last
    /// `submit_csv` the proxy accepted, byte for byte (`docs/FORMAT.md`),
    /// so it is there exactly when `calls.json` records one
    /// ([`Submissions::of`]), and holds its `csv` argument (or the
    /// `submissions/N.csv` a large one was kept in); `metrics.json`'s
    /// `submissions` counts the accepted calls and its `submitted_rows` is
    /// the last one's rows. An `answer.csv` edited by hand, and re-judged
    /// by `rescore`, would otherwise publish a verdict no episode gave.
    ///
    /// Errors: the first file that disagrees, naming it, the call and what
    /// to do; a `submissions/N.csv` that cannot be read.
    fn check_answer(&self) -> Result<()> {
        let Some(calls) = &self.calls else {
            // No proxy log: nothing was submitted through it, and an
            // answer without one is refused by `check_recorded`.
            return Ok(());
        };
        let submitted = Submissions::of(&self.dir, calls)?;
        let answer_path = self.dir.join(ANSWER_FILE);
        match (&submitted.last, &self.answer) {
            (None, None) => {}
            (Some((index, _)), None) => {
                return Err(Error::file(
                    answer_path,
                    format!(
                        "missing, though calls.json records the answer submit_csv call \
                         {index} saved there; {RESTORE}"
                    ),
                ));
            }
            (None, Some(_)) => {
                return Err(Error::file(
                    answer_path,
                    format!(
                        "there, though calls.json records no submit_csv call that saved an \
                         answer: it was put there or edited by hand; {RESTORE}"
                    ),
                ));
            }
            (Some((index, expected)), Some(answer)) if expected != answer => {
                return Err(Error::file(
                    answer_path,
                    format!(
                        "differs from the answer submit_csv call {index} of calls.json saved \
                         there ({} bytes recorded, {} here): answer.csv was edited by hand, \
                         and is not judged as the episode's answer; {RESTORE}",
                        expected.len(),
                        answer.len()
                    ),
                ));
            }
            (Some(_), Some(_)) => {}
        }
        let Some(metrics) = &self.metrics else {
            return Ok(());
        };
        let rows = submitted
            .last
            .as_ref()
            .and_then(|(_, csv)| Table::from_csv(csv).ok())
            .map(|t| t.rows.len());
        let checks = [
            (
                "submissions",
                metrics.submissions.to_string(),
                submitted.accepted.to_string(),
            ),
            (
                "submitted_rows",
                json_text(&metrics.submitted_rows),
                json_text(&rows),
            ),
        ];
        for (member, recorded, derived) in checks {
            if recorded != derived {
                return Err(Error::file(
                    self.dir.join(METRICS_FILE),
                    format!(
                        "{member} is {recorded}, but calls.json's submit_csv calls give \
                         {derived}: one of them was edited; {RESTORE}"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// What `calls.json` records of the answers an episode submitted: the
/// `submit_csv` calls the proxy accepted (its reply was no error: it saved
/// the CSV as `answer.csv`), and the bytes the last one saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submissions {
    /// Accepted `submit_csv` calls (`metrics.json`'s `submissions`).
    pub accepted: usize,
    /// The last one's index in `calls.json` and the CSV it saved, as the
    /// proxy wrote it (redacted, `docs/FORMAT.md`, "Credentials").
    pub last: Option<(usize, Vec<u8>)>,
}

impl Submissions {
    /// The submissions `calls` (the `calls.json` of attempt folder `dir`)
    /// record. A call's `csv` argument is the CSV; a submission over 64 KiB
    /// is kept in `submissions/N.csv` (N its index) and recorded as
    /// `{"csv_file", "csv_bytes"}`, and that file is read.
    ///
    /// Errors: an accepted call whose arguments hold no CSV, or name
    /// another file than its own `submissions/N.csv`; such a file missing,
    /// not a regular file, or of another length than recorded.
    pub fn of(dir: &Path, calls: &[CallRecord]) -> Result<Submissions> {
        let calls_path = dir.join(CALLS_FILE);
        let accepted: Vec<&CallRecord> = calls
            .iter()
            .filter(|c| {
                c.tool == crate::layout::SUBMIT_CSV
                    && c.unreadable.is_none()
                    && c.ok
                    && c.error.is_none()
                    && !c.refused
            })
            .collect();
        let Some(last) = accepted.last() else {
            return Ok(Submissions {
                accepted: 0,
                last: None,
            });
        };
        let edited = |why: String| {
            Error::file(
                &calls_path,
                format!(
                    "submit_csv call {} {why}: it was edited; {RESTORE}",
                    last.index
                ),
            )
        };
        let csv = if let Some(csv) = last.arguments.get("csv").and_then(Value::as_str) {
            csv.as_bytes().to_vec()
        } else if let Some(file) = last.arguments.get("csv_file").and_then(Value::as_str) {
            let own = format!("{}/{}.csv", crate::layout::SUBMISSIONS_DIR, last.index);
            if file != own {
                return Err(edited(format!(
                    "names '{}' as its CSV, where the proxy keeps it in '{own}'",
                    file.escape_debug()
                )));
            }
            let path = dir.join(&own);
            let bytes = read_recorded(&path)
                .map_err(|e| Error::Other(format!("{e}; {RESTORE}")))?
                .ok_or_else(|| {
                    Error::file(
                        &path,
                        format!(
                            "missing, though calls.json records submit_csv call {} kept there; \
                             {RESTORE}",
                            last.index
                        ),
                    )
                })?;
            let recorded = last.arguments.get("csv_bytes").and_then(Value::as_u64);
            if recorded != Some(bytes.len() as u64) {
                return Err(Error::file(
                    &path,
                    format!(
                        "{} bytes, but calls.json records {} for submit_csv call {}: one of \
                         them was edited; {RESTORE}",
                        bytes.len(),
                        json_text(&recorded),
                        last.index
                    ),
                ));
            }
            bytes
        } else {
            return Err(edited(
                "was accepted, and its arguments hold no CSV (neither `csv` nor `csv_file`)"
                    .to_string(),
            ));
        };
        Ok(Submissions {
            accepted: accepted.len(),
            last: Some((last.index, csv)),
        })
    }
}

/// Whether every tally of `metrics` (a `metrics.json`) is what `calls`
/// give, compared as values: when they are, as in every attempt of a
/// sound root, [`crate::mcp::calllog::tally_differences`] (which compares
/// them as JSON, to name the one that differs) finds none, and is not
/// asked. A `reply_chars` not recorded (format 1) is not compared, as
/// there.
fn tallies_agree(metrics: &Metrics, calls: &[CallRecord]) -> bool {
    let fresh = crate::mcp::calllog::tallies(calls);
    metrics.calls == fresh.calls
        && metrics.unreadable_requests == fresh.unreadable_requests
        && metrics.tools_called == fresh.tools_called
        && metrics.refused == fresh.refused
        && metrics.server_s == fresh.server_s
        && (metrics.reply_chars.is_none() || metrics.reply_chars == fresh.reply_chars)
        && metrics.upstream_soft_errors == fresh.upstream_soft_errors
        && metrics.queries_ok == fresh.queries_ok
        && metrics.queries_errored == fresh.queries_errored
}

/// `value` as compact JSON, as a message quotes a recorded value.
pub(crate) fn json_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// An episode recovered from the agent host's report alone (stamped
/// `source: "agent.json"`: its `duration_ms` is the agent's own clock,
/// which excludes process startup; `docs/FORMAT.md`, "`episode.json`"):
/// what [`AttemptFiles::recover`] recovers for an attempt written before
/// `episode.json` existed, and what an `episode.json` of that source must
/// hold (issue 24, item 15). `attempt` is its folder's number; `agent` is
/// the one the report names (the scripted agent names itself), else
/// `claude`, whose report names none; `wall_s` is `duration_ms` / 1000.
///
/// `None` when `report` is not a JSON object holding a `duration_ms` that
/// is a number of milliseconds (not negative): no wall time can be
/// computed from it.
pub fn recovered_episode(report: &Value, attempt: u32) -> Option<Episode> {
    let duration_ms = report
        .as_object()?
        .get("duration_ms")
        .and_then(Value::as_f64)
        .filter(|ms| ms.is_finite() && *ms >= 0.0)?;
    let agent = report
        .get("agent")
        .and_then(Value::as_str)
        .unwrap_or("claude");
    Some(Episode {
        format: RUNS_FORMAT,
        attempt,
        agent: agent.into(),
        model_requested: None,
        model_resolved: model_from_report(report),
        wall_s: duration_ms / 1000.0,
        exit_code: None,
        timed_out: false,
        agent_timeout_s: None,
        source: AGENT_FILE.into(),
        usage: super::records::Usage::from_report(report),
        upstream: None,
        host_report: Host::of_agent(agent).map(|host| {
            let stdout = serde_json::to_vec(report).unwrap_or_default();
            host.parse(&HostOutput {
                stdout: &stdout,
                ..HostOutput::default()
            })
        }),
    })
}

pub use crate::agent::host::model_from_report;

/// Which attempts of one question a condition's records say it holds
/// ([`AttemptPlan::of`]): decided from the condition file alone, never
/// from the folders on disk (issue 24, items 5 and 7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptPlan {
    /// `identity.repeat`.
    pub repeat: u32,
    /// The slice a shard root holds (`run --shard K/N`): the position of
    /// the question in `shard.questions` and the shard; `None` for a
    /// serial or merged root, which holds every attempt `1..=repeat`.
    slice: Option<(usize, super::shard::Shard)>,
    /// A root `merge` joined (`identity.shards` and no `shard` of its
    /// own): one made without every shard lacks their attempts, which
    /// `merge` named and `run --resume` plays (`docs/SCALING.md`), so an
    /// attempt it lacks is an incomplete sweep, not damage.
    pub merged: bool,
}

impl AttemptPlan {
    /// The plan of question `id` under `condition`.
    ///
    /// Errors: a shard root whose `shard.questions` does not list `id`, or
    /// whose `shard.index` is outside `1..=shard.count` (the record was
    /// edited), worded for a message naming the file.
    pub fn of(condition: &ConditionFile, id: &str) -> std::result::Result<AttemptPlan, String> {
        let slice =
            match &condition.shard {
                Some(record) => {
                    let position = record.questions.iter().position(|q| q == id).ok_or_else(|| {
                    format!(
                        "question '{}' is listed, but shard.questions, the selection its shard \
                         was cut from, does not hold it: one of them was edited",
                        id.escape_debug()
                    )
                })?;
                    if record.index == 0 || record.index > record.count {
                        return Err(format!(
                            "shard.index {} is outside 1..={}: the record was edited",
                            record.index, record.count
                        ));
                    }
                    Some((position, record.shard()))
                }
                None => None,
            };
        Ok(AttemptPlan {
            repeat: condition.identity.repeat,
            slice,
            merged: condition.shard.is_none() && condition.identity.shards.is_some(),
        })
    }

    /// Whether the records say attempt `n` is one of the question's.
    pub fn holds(&self, n: u32) -> bool {
        (1..=self.repeat).contains(&n)
            && self
                .slice
                .is_none_or(|(position, shard)| shard.holds(position, self.repeat, n))
    }

    /// The attempts the records say the question holds, in order.
    pub fn attempts(&self) -> impl Iterator<Item = u32> + '_ {
        (1..=self.repeat).filter(|&n| self.holds(n))
    }

    /// The attempts of the plan that `listed` (the attempts a
    /// `result.json` records) lacks: the first `shown` of them, and how
    /// many there are in all.
    pub fn lacking(
        &self,
        listed: &std::collections::BTreeSet<u32>,
        shown: usize,
    ) -> (Vec<u32>, u64) {
        let held = listed.iter().filter(|&&n| self.holds(n)).count() as u64;
        let all = match self.slice {
            None => u64::from(self.repeat),
            Some(_) => self.attempts().count() as u64,
        };
        let first = self
            .attempts()
            .filter(|n| !listed.contains(n))
            .take(shown)
            .collect();
        (first, all - held)
    }
}

/// The prefix of an attempt folder's name (`attempt-N`).
const ATTEMPT_PREFIX: &str = "attempt-";

/// Checks the attempt folders of one question under one condition, the
/// folder `dir`, against what the records say it holds: the one rule of
/// `report`, `build`, `rescore` and `merge` (issue 24, items 5 and 7).
/// Every entry named `attempt-…` must be a folder named exactly
/// `attempt-N` with N one of the `plan`'s (in `1..=repeat`, the
/// condition's `identity.repeat`, and in a shard root its slice): one
/// beyond it was recorded under another identity, or the identity was
/// edited, and leaving it out would silently drop an episode; and, when
/// `listed` is given (the attempts `result.json` records), N must be one
/// of them: an attempt on disk that the record leaves out would move the
/// rates and lose its page. Each attempt `listed` must be one of the
/// plan's, and each of the plan's must be `listed`: `result.json` is
/// written once a question's attempts are played, so one it lacks is no
/// interrupted run but an edited record or identity (a `repeat` raised by
/// hand), unless the root is a merged sweep ([`AttemptPlan::merged`]),
/// where one missing is what a merge without every shard leaves
/// ([`AttemptPlan::lacking`]).
///
/// Errors: one per breach, each naming the folder (or `result.json`) and
/// what to do; empty when all is well.
pub fn check_attempt_folders(
    dir: &Path,
    plan: &AttemptPlan,
    listed: Option<&std::collections::BTreeSet<u32>>,
) -> Vec<Error> {
    let mut problems = Vec::new();
    let repeat = plan.repeat;
    let plural = crate::format::plural(repeat as usize);
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries.flatten().collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return vec![Error::io(dir, "read", e)],
    };
    let mut names: Vec<(std::ffi::OsString, bool)> = entries
        .into_iter()
        .map(|e| (e.file_name(), e.file_type().is_ok_and(|t| t.is_dir())))
        .collect();
    names.sort();
    let not_in_slice = |n: u32| {
        let shard = plan.slice.map(|(_, s)| s.to_string()).unwrap_or_default();
        format!(
            "attempt {n}, but this shard root holds shard {shard}'s slice of the attempts, and \
             attempt {n} of the question is not in it: the record or the folders were edited; \
             restore them from version control"
        )
    };
    for (name, folder) in names {
        let path = dir.join(&name);
        let Some(text) = name.to_str() else {
            continue;
        };
        let Some(number) = text.strip_prefix(ATTEMPT_PREFIX) else {
            continue;
        };
        let n = number
            .parse::<u32>()
            .ok()
            .filter(|n| format!("{ATTEMPT_PREFIX}{n}") == text);
        let why = match n {
            _ if !folder => format!(
                "not a folder: an attempt is a folder of recorded files; {}",
                "restore it from version control, or remove it"
            ),
            None => "not an attempt folder this tool writes (attempt-N, N from 1, no leading \
                     zero): rename or remove it"
                .to_string(),
            Some(n) if n == 0 || n > repeat => format!(
                "attempt {n}, but the condition has {repeat} attempt{plural} a question \
                 (identity.repeat in its condition file): one of them was changed, and leaving \
                 it out would drop a recorded episode; restore them from version control"
            ),
            Some(n) if !plan.holds(n) => not_in_slice(n),
            Some(n) if listed.is_some_and(|l| !l.contains(&n)) => format!(
                "recorded on disk, but result.json beside it does not list attempt {n}: the \
                 record was edited, or a run was interrupted (resume it: the same run command \
                 with --resume); else restore result.json from version control, or re-judge \
                 the root (okn-benchmark rescore)"
            ),
            Some(_) => continue,
        };
        problems.push(Error::file(path, why));
    }
    let result = dir.join(crate::layout::RESULT_FILE);
    for &n in listed.into_iter().flatten() {
        if n == 0 || n > repeat {
            problems.push(Error::file(
                &result,
                format!(
                    "lists attempt {n}, but the condition has {repeat} attempt{plural} a \
                     question (identity.repeat in its condition file): one of them was \
                     changed; restore them from version control"
                ),
            ));
        } else if !plan.holds(n) {
            problems.push(Error::file(&result, format!("lists {}", not_in_slice(n))));
        }
    }
    if let Some(listed) = listed
        && !plan.merged
    {
        let (first, missing) = plan.lacking(listed, 5);
        if missing > 0 {
            let numbers: Vec<String> = first.iter().map(u32::to_string).collect();
            let more = if missing > first.len() as u64 {
                ", ..."
            } else {
                ""
            };
            problems.push(Error::file(
                &result,
                format!(
                    "lacks {missing} of the question's attempts ({}{more}), though the \
                     condition has {repeat} attempt{plural} a question (identity.repeat in its \
                     condition file) and result.json is written once they are played: the \
                     record or the identity was changed, and no run was interrupted; restore \
                     them from version control",
                    numbers.join(", ")
                ),
            ));
        }
    }
    problems
}

/// Every symbolic link inside the runs root at `root`, and every entry
/// that is neither a folder nor a regular file (a named pipe, a socket, a
/// device), each named as damage: a link could publish a file from outside
/// the root (a `prompt.txt` linked to one), and reading a named pipe would
/// wait forever (issue 24, items 21 and 22). The root itself may be a link.
/// Its top-level entries are walked in parallel, links never followed.
/// Every reader of a root (`report`, `build`, `paper tables`, `merge`,
/// `rescore`) refuses a root with any.
pub fn strays(root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut top: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    top.sort();
    let found: Vec<Vec<String>> = top
        .par_iter()
        .map(|entry| {
            let mut found = Vec::new();
            let walk = walkdir::WalkDir::new(entry)
                .follow_links(false)
                .follow_root_links(false)
                .sort_by_file_name();
            for item in walk {
                let item = match item {
                    Ok(item) => item,
                    Err(e) => {
                        let path = e.path().unwrap_or(entry).display().to_string();
                        found.push(format!("{path}: cannot read: {e}"));
                        continue;
                    }
                };
                let kind = item.file_type();
                let why = if kind.is_symlink() {
                    crate::fsutil::LINK_REFUSED
                } else if kind.is_dir() || kind.is_file() {
                    continue;
                } else {
                    crate::fsutil::NOT_REGULAR
                };
                found.push(format!(
                    "{}: {why}; put the file itself there (restore it from version control), \
                     or remove it",
                    item.path().display()
                ));
            }
            found
        })
        .collect();
    found.into_iter().flatten().collect()
}
