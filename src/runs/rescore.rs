//! `rescore` and `freeze` (`docs/FORMAT.md`, "Re-scoring" and
//! "`.frozen`").
//!
//! Re-scoring re-judges every attempt from its `answer.csv` and the
//! question's `ground_truth.csv` alone (no model, server or endpoint), and
//! rewrites `result.json`, `conditions/*.json`, both summary CSVs and
//! `README.md`. It reports every score that moved. It does not re-run
//! answer keys: a changed corpus calls for a new run.

use std::collections::BTreeMap;
use std::path::Path;

use super::judge::judge;
use super::records::{
    Aggregate, AttemptResult, ConditionFile, QuestionResult, RUNS_FORMAT, aggregate, summarize,
};
use super::run::refuse_frozen;
use crate::error::{Error, Result};
use crate::fsutil::{read_json, write_json};
use crate::layout::{GROUND_TRUTH_CSV, GROUND_TRUTH_JSON, RESULT_FILE, RunsRoot};
use crate::reference::GroundTruthMeta;
use crate::score::{SCORING_VERSION, ScoreOptions};
use crate::table::Table;

/// One score that moved.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    /// Question id.
    pub question: String,
    /// Condition name.
    pub condition: String,
    /// Attempt number.
    pub attempt: u32,
    /// What moved: `exact`, `strict_exact`, `ordered`, `f1`.
    pub field: &'static str,
    /// Before.
    pub old: String,
    /// After.
    pub new: String,
}

/// What `rescore` found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RescoreOutcome {
    /// Attempts judged.
    pub attempts: usize,
    /// Scores that moved.
    pub moved: Vec<Moved>,
    /// Questions that could not be re-scored (their ground truth missing,
    /// unreadable or changed since it was recorded), named with why: they
    /// keep their recorded scores, and `rescore` exits 2.
    pub failed: Vec<String>,
    /// Files that could not be read (named); the rest was re-scored.
    pub problems: Vec<String>,
}

/// The attempt numbers recorded in a condition folder, sorted: folders
/// named exactly `attempt-N` (`attempt-01` is not attempt 1).
pub fn attempt_numbers(dir: &Path) -> Vec<u32> {
    let mut numbers: Vec<u32> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let n: u32 = name.strip_prefix("attempt-")?.parse().ok()?;
            (name == format!("attempt-{n}")).then_some(n)
        })
        .collect();
    numbers.sort();
    numbers
}

fn differences(
    question: &str,
    condition: &str,
    old: &AttemptResult,
    new: &AttemptResult,
) -> Vec<Moved> {
    let mut moved = Vec::new();
    let mut push = |field: &'static str, a: String, b: String| {
        if a != b {
            moved.push(Moved {
                question: question.to_string(),
                condition: condition.to_string(),
                attempt: new.attempt,
                field,
                old: a,
                new: b,
            });
        }
    };
    push("exact", old.exact.to_string(), new.exact.to_string());
    push(
        "strict_exact",
        old.strict_exact.to_string(),
        new.strict_exact.to_string(),
    );
    // `ordered` is empty for an unordered key (as in summary.csv).
    let ordered =
        |o: Option<bool>| o.map_or_else(|| crate::format::NONE.to_string(), |b| b.to_string());
    push("ordered", ordered(old.ordered), ordered(new.ordered));
    // Four decimals, more where four would round a value below 1 to 1 (or
    // above 0 to 0): a move from 0.99996 to 1 is a move.
    let f1 = |v: f64| crate::format::fraction(v, 4);
    push("f1", f1(old.f1), f1(new.f1));
    moved
}

/// Re-judges every attempt of `root`.
///
/// Errors: a frozen root; a file that cannot be written. Unreadable inputs
/// are named in [`RescoreOutcome::problems`] and skipped.
pub fn rescore(root: &RunsRoot) -> Result<RescoreOutcome> {
    refuse_frozen(root, "rescore")?;
    if !RunsRoot::is_runs_root(&root.root) {
        return Err(Error::file(
            &root.root,
            "not a runs root (it has no conditions/ folder)",
        ));
    }
    refuse_lost_files(root, "nothing was re-scored")?;
    let mut outcome = RescoreOutcome::default();
    for name in root.condition_names() {
        let path = root.condition_file(&name);
        match read_json::<ConditionFile>(&path) {
            Ok(condition) => rescore_condition(root, &name, condition, &mut outcome)?,
            Err(e) => outcome.problems.push(e.to_string()),
        }
    }
    Ok(outcome)
}

/// Refuses to re-judge a root that lost files its records say it holds: a
/// question folder or `result.json` a condition lists, an attempt folder a
/// `result.json` lists, or the `answer.csv` of an attempt it records as
/// submitted. Re-judged, they would turn into misses (or vanish) in place
/// of what was recorded.
///
/// Errors: [`Error::Other`] naming every lost file, with what to do, and
/// `consequence` (what was not done: "nothing was re-scored"); nothing is
/// rewritten.
pub fn refuse_lost_files(root: &RunsRoot, consequence: &str) -> Result<()> {
    let mut lost = Vec::new();
    for name in root.condition_names() {
        let Ok(condition) = read_json::<ConditionFile>(&root.condition_file(&name)) else {
            continue;
        };
        for id in condition.questions.keys() {
            let result_path = root.condition_dir(id, &name).join(RESULT_FILE);
            if !result_path.is_file() {
                lost.push(format!(
                    "{}: listed in {}, missing",
                    result_path.display(),
                    root.condition_file(&name).display()
                ));
                continue;
            }
            let Ok(result) = read_json::<QuestionResult>(&result_path) else {
                continue;
            };
            for a in &result.attempts {
                let dir = root.attempt_dir(id, &name, a.attempt);
                if !dir.is_dir() {
                    lost.push(format!("{}: listed in result.json, missing", dir.display()));
                } else if a.submitted && !dir.join(crate::layout::ANSWER_FILE).is_file() {
                    lost.push(format!(
                        "{}: result.json records a submitted answer, and it is missing",
                        dir.join(crate::layout::ANSWER_FILE).display()
                    ));
                }
            }
        }
    }
    if lost.is_empty() {
        return Ok(());
    }
    Err(Error::Other(format!(
        "{}: {} recorded file{} that the records name {} gone, so {consequence}:\n  {}\n\
         Restore {} from version control, or record the episodes again (`okn-benchmark run ... --force`).",
        root.root.display(),
        lost.len(),
        crate::format::plural(lost.len()),
        if lost.len() == 1 { "is" } else { "are" },
        lost.join("\n  "),
        if lost.len() == 1 { "it" } else { "them" },
    )))
}

/// Re-judges every question of condition `name` and rewrites its file
/// with the new summaries, aggregate and scoring version.
///
/// Errors: a file that cannot be written.
fn rescore_condition(
    root: &RunsRoot,
    name: &str,
    mut condition: ConditionFile,
    outcome: &mut RescoreOutcome,
) -> Result<()> {
    let ids: Vec<String> = condition.questions.keys().cloned().collect();
    let mut summaries = BTreeMap::new();
    // The corpus the condition was recorded from, when it is a folder here:
    // an answer key edited since is named, not judged against.
    let corpus = Path::new(&condition.settings.corpus)
        .is_dir()
        .then(|| crate::corpus::Corpus::load(Path::new(&condition.settings.corpus)).ok())
        .flatten();
    for id in ids {
        let record = corpus
            .as_ref()
            .and_then(|c| c.records.iter().find(|r| r.id == id));
        let (key, ordered) = match recorded_key(root, &id, record) {
            Ok(key) => key,
            Err(e) => {
                // A question whose ground truth cannot be used keeps its
                // recorded scores.
                outcome.failed.push(e.to_string());
                if let Some(kept) = condition.questions.get(&id) {
                    summaries.insert(id.clone(), kept.clone());
                }
                continue;
            }
        };
        let scope = Scope {
            root,
            name,
            condition: &condition,
        };
        let summary = scope.rescore_question(&id, &key, ordered, outcome)?;
        summaries.insert(id, summary);
    }
    let new = aggregate(&summaries);
    outcome
        .moved
        .extend(aggregate_moves(name, &condition.aggregate, &new));
    condition.aggregate = new;
    condition.questions = summaries;
    condition.settings.scoring_version = SCORING_VERSION.into();
    // Exclusions written by hand into meta.excluded count like --exclude
    // ones: only the ids take part in the identity.
    let mut excluded: Vec<String> = condition
        .meta
        .excluded
        .iter()
        .map(|e| e.id.clone())
        .collect();
    excluded.sort();
    excluded.dedup();
    condition.identity.excluded = excluded;
    write_json(&root.condition_file(name), &condition)
}

/// The ground truth recorded beside question `id`'s attempts, and whether
/// its key is ordered.
///
/// Errors: a `ground_truth.csv` that is missing, unreadable, or changed
/// since it was recorded (its digest no longer matches `ground_truth.json`:
/// an edited copy would move every score silently); the corpus `record`
/// (when found) whose answer key was edited since.
fn recorded_key(
    root: &RunsRoot,
    id: &str,
    record: Option<&crate::corpus::Record>,
) -> Result<(Table, bool)> {
    let question_dir = root.question_dir(id);
    let csv_path = question_dir.join(GROUND_TRUTH_CSV);
    let recorded: Option<GroundTruthMeta> = read_json(&question_dir.join(GROUND_TRUTH_JSON)).ok();
    if let (Some(record), Some(meta)) = (record, &recorded)
        && let Some(why) = crate::reference::key_drift(record, meta)
    {
        return Err(Error::file(
            &record.path,
            format!(
                "{why}: the episodes of '{id}' here answered the key as it was, so they are \
                 not judged against the new one (their scores were left as they were). Restore \
                 the key, or run 'okn-benchmark reference' and record a new run"
            ),
        ));
    }
    let bytes = std::fs::read(&csv_path).map_err(|e| Error::io(&csv_path, "read", e))?;
    if let Some(meta) = &recorded
        && crate::reference::sha256_tag(&bytes) != meta.csv_sha256
    {
        return Err(Error::file(
            &csv_path,
            "changed since it was recorded (its digest no longer matches \
             ground_truth.json): restore it from version control; scores \
             were left as they were",
        ));
    }
    let key = Table::from_csv(&bytes).map_err(|e| Error::file(&csv_path, e.to_string()))?;
    Ok((key, recorded.as_ref().is_some_and(|m| m.ordered)))
}

/// One condition of a root being re-judged.
struct Scope<'a> {
    root: &'a RunsRoot,
    name: &'a str,
    condition: &'a ConditionFile,
}

impl Scope<'_> {
    /// Re-judges attempts `1..=repeat` of question `id` against `key`, names
    /// the moved scores and the folders that are missing, extra or
    /// unfinished, and rewrites its `result.json`. Returns the question's new
    /// summary.
    ///
    /// Errors: `result.json` cannot be written.
    fn rescore_question(
        &self,
        id: &str,
        key: &Table,
        ordered: bool,
        outcome: &mut RescoreOutcome,
    ) -> Result<super::records::QuestionSummary> {
        let Scope {
            root,
            name,
            condition,
        } = *self;
        let result_path = root.condition_dir(id, name).join(RESULT_FILE);
        let old: Option<QuestionResult> = match read_json(&result_path) {
            Ok(r) => Some(r),
            Err(e) if result_path.exists() => {
                outcome.problems.push(e.to_string());
                None
            }
            Err(_) => None,
        };
        let options = ScoreOptions {
            ordered,
            ..ScoreOptions::default()
        };
        // The attempts the condition says it has: 1..=repeat. A missing one is
        // named, and so is any other folder, which is left out.
        let repeat = condition.identity.repeat;
        for n in attempt_numbers(&root.condition_dir(id, name)) {
            if n == 0 || n > repeat {
                outcome.problems.push(format!(
                    "{}: left out (the condition has {repeat} attempt{} a question)",
                    root.attempt_dir(id, name, n).display(),
                    crate::format::plural(repeat as usize)
                ));
            }
        }
        let mut attempts = Vec::new();
        for n in 1..=repeat {
            let dir = root.attempt_dir(id, name, n);
            if !dir.is_dir() {
                outcome.problems.push(format!("{}: missing", dir.display()));
                continue;
            }
            let new = judge(&dir, n, key, &options);
            if new.notes.iter().any(|n| n.starts_with("no episode.json")) {
                outcome.problems.push(format!(
                    "{}: did not finish (run --resume re-runs it); judged as it is",
                    dir.display()
                ));
            }
            if let Some(previous) = old
                .as_ref()
                .and_then(|o| o.attempts.iter().find(|a| a.attempt == n))
            {
                outcome.moved.extend(differences(id, name, previous, &new));
            }
            attempts.push(new);
            outcome.attempts += 1;
        }
        let summary = summarize(&attempts, ordered);
        let result = QuestionResult {
            format: RUNS_FORMAT,
            question: id.to_string(),
            condition: name.to_string(),
            tier: old
                .as_ref()
                .and_then(|o| o.tier.clone())
                .or_else(|| crate::corpus::tier_of(id)),
            ordered_key: ordered,
            scoring_version: SCORING_VERSION.into(),
            attempts,
            summary: summary.clone(),
        };
        write_json(&result_path, &result)?;
        Ok(summary)
    }
}

/// The condition-wide rates that moved from `old` to `new`.
fn aggregate_moves(name: &str, old: &Aggregate, new: &Aggregate) -> Vec<Moved> {
    let show = |v: Option<f64>| {
        v.map_or_else(
            || crate::format::NONE.to_string(),
            |v| crate::format::fraction(v, 4),
        )
    };
    [
        ("exact_rate", old.exact_rate, new.exact_rate),
        (
            "strict_exact_rate",
            old.strict_exact_rate,
            new.strict_exact_rate,
        ),
        ("ordered_rate", old.ordered_rate, new.ordered_rate),
        ("mean_f1", old.mean_f1, new.mean_f1),
    ]
    .into_iter()
    .filter(|(_, was, now)| show(*was) != show(*now))
    .map(|(field, was, now)| Moved {
        question: "(aggregate)".into(),
        condition: name.to_string(),
        attempt: 0,
        field,
        old: show(was),
        new: show(now),
    })
    .collect()
}

/// `.frozen`: the marker that closes a runs root.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct FrozenFile {
    /// [`RUNS_FORMAT`].
    pub format: u32,
    /// Why the root is closed.
    pub reason: String,
}

/// A reason `freeze` accepts: not blank (a frozen root says why it is
/// closed).
///
/// Errors: [`Error::Usage`] for a blank one.
pub fn check_reason(reason: &str) -> Result<()> {
    if reason.trim().is_empty() {
        return Err(Error::Usage(
            "--reason must say why the root is closed".into(),
        ));
    }
    Ok(())
}

/// Why `root` itself is frozen, when it is: the reason its `.frozen`
/// records (`no reason recorded` when it cannot be read).
pub fn frozen_reason(root: &RunsRoot) -> Option<String> {
    if !root.is_frozen() {
        return None;
    }
    Some(
        crate::fsutil::read_json::<FrozenFile>(&root.frozen_file())
            .map(|f| f.reason)
            .unwrap_or_else(|_| "no reason recorded".into()),
    )
}

/// Closes a root: writes `.frozen` with the reason. `run` and `rescore`
/// then refuse it by name and `report` regenerates nothing.
///
/// Errors: not a runs root; already frozen; the marker cannot be written.
pub fn freeze(root: &RunsRoot, reason: &str) -> Result<()> {
    check_reason(reason)?;
    if !RunsRoot::is_runs_root(&root.root) {
        return Err(Error::file(
            &root.root,
            "not a runs root (it has no conditions/ folder)",
        ));
    }
    refuse_frozen(root, "freeze")?;
    write_json(
        &root.frozen_file(),
        &FrozenFile {
            format: RUNS_FORMAT,
            reason: reason.to_string(),
        },
    )
}
