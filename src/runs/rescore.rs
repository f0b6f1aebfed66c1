//! `rescore` and `freeze` (`docs/FORMAT.md`, "Re-scoring" and
//! "`.frozen`").
//!
//! Re-scoring re-judges every attempt from its `answer.csv` and the
//! question's `ground_truth.csv` alone (no model, server or endpoint), and
//! rewrites `result.json`, `conditions/*.json`, both summary CSVs and
//! `README.md`. It reports every score that moved. It does not re-run
//! answer keys: a changed corpus calls for a new run.
//!
//! It reads everything before it writes anything: a recorded file it
//! cannot use (by the rules of [`super::recorded`]) stops it, naming the
//! file, with nothing rewritten, as `report` stops.

use std::collections::BTreeMap;
use std::path::Path;

use super::frozen::refuse_frozen;
use super::judge::judge_again;
use super::recorded::{
    AttemptFiles, AttemptPlan, check_attempt_folders, read_condition_named, read_ground_truth,
};
use super::records::{
    Aggregate, AttemptResult, ConditionFile, QuestionResult, RUNS_FORMAT, aggregate, summarize,
};
use crate::error::{Error, Result};
use crate::expectations::Expectation;
use crate::expectations::defaults::for_record;
use crate::fsutil::{read_recorded_json, write_json};
use crate::layout::{RESULT_FILE, RunsRoot};
use crate::reference::GroundTruth;
use crate::score::SCORING_VERSION;

/// One score that moved.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    /// Question id.
    pub question: String,
    /// Condition name.
    pub condition: String,
    /// Attempt number.
    pub attempt: u32,
    /// What moved: `exact`, `strict_exact`, `ordered`, `f1`, `blocked`.
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
    /// Trajectory expectation statuses that changed (`field`
    /// `expectation`, `old` as `ID: status` and `new` as the status; an
    /// expectation added or dropped since is none), never counted as scores: an
    /// edited expectation is applied without `--force` (issue 27).
    pub expectations_moved: Vec<Moved>,
    /// What was noticed and did not stop the re-score, named: a
    /// `result.json` that could not be read (it is rebuilt from its
    /// attempts, which alone it is derived from), an attempt folder the
    /// condition does not have (left out).
    pub problems: Vec<String>,
    /// Temporary files a killed write had left, removed before reading
    /// (issue 24, item 26).
    pub removed: Vec<std::path::PathBuf>,
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

/// The verdicts (`exact`, `strict_exact`, `ordered`, `f1` to four
/// decimals) that differ between `old` and `new`, attempt `new.attempt` of
/// `question` under `condition`.
pub fn differences(
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
    // Whether it is blocked takes an attempt out of every rate as surely
    // as a verdict moves one.
    push("blocked", old.blocked.to_string(), new.blocked.to_string());
    moved
}

/// Re-judges every attempt of `root`, and rewrites what depends on the
/// verdicts once every recorded file they rest on was read. `precision`
/// (`rescore --precision N`, significant figures) judges every condition at
/// N and records it in its `settings.significant_figures`; `None` keeps the
/// precision each condition records (issue 24, item 30).
///
/// Under the scoring version and precision an attempt was judged by, its
/// verdict is a function of its files: a verdict that moves is an edit of
/// the answer, the call log or the ground truth since it was judged, and
/// is refused unless `force` (`rescore --force`; docs/FORMAT.md,
/// "Re-scoring"; a red team's finding on issue 24, item 6).
///
/// Errors: a frozen root; not a runs root; a recorded file that is lost
/// ([`refuse_lost_files`]) or cannot be used (a condition file, a
/// question's ground truth, an attempt's files:
/// [`AttemptFiles::check_recorded`]), each named, with nothing rewritten;
/// without `force`, an attempt whose verdict moved under the contract and
/// precision it was judged by, named with what moved; a file that cannot
/// be written.
pub fn rescore(root: &RunsRoot, precision: Option<u32>, force: bool) -> Result<RescoreOutcome> {
    let started = std::time::SystemTime::now();
    refuse_frozen(root, "rescore")?;
    if !RunsRoot::is_runs_root(&root.root) {
        return Err(Error::file(
            &root.root,
            "not a runs root (it has no conditions/ folder)",
        ));
    }
    // What a killed merge or rescore left (issue 24, item 26), before
    // anything is read: this re-score writes the bytes an uninterrupted
    // one would.
    let removed = crate::fsutil::remove_leftover_temporaries(&root.root, started)?;
    // Links and files that are not regular files are damage (issue 24,
    // items 21 and 22), as every reader of a root takes them.
    let mut unusable = super::recorded::strays(&root.root);
    let mut conditions = Vec::new();
    for name in root.condition_names() {
        match read_condition_named(root, &name) {
            Ok(condition) => conditions.push((name, condition)),
            // Its identity and settings are recorded nowhere else.
            Err(e) => unusable.push(format!(
                "{e}; it holds the condition's identity and settings, which cannot be rebuilt \
                 from its attempts: restore it from version control"
            )),
        }
    }
    refuse_unusable(root, &unusable)?;
    refuse_lost_files(root, "nothing was re-scored")?;
    let mut outcome = RescoreOutcome {
        removed,
        ..RescoreOutcome::default()
    };
    let mut writes = Writes::default();
    for (name, mut condition) in conditions {
        // `rescore --precision N` judges every condition at N and records
        // it; without it, each keeps the precision it was judged at.
        // The precision it was judged at, before `--precision` replaces it:
        // under it and this scoring version, no verdict may move.
        let judged_at = condition.settings.significant_figures;
        if let Some(figures) = precision {
            condition.settings.significant_figures = figures;
        }
        let same_contract = (!force && judged_at == condition.settings.significant_figures)
            .then_some(condition.settings.significant_figures);
        rescore_condition(
            root,
            (&name, condition),
            (&mut outcome, same_contract),
            (&mut writes, &mut unusable),
        );
    }
    refuse_unusable(root, &unusable)?;
    // Episodes recovered from agent.json, recorded on disk with their
    // source (issue 24, item 15), before the results that rest on them.
    for (path, episode) in &writes.episodes {
        write_json(path, episode)?;
    }
    for (path, result) in &writes.results {
        write_json(path, result)?;
    }
    for (path, condition) in &writes.conditions {
        write_json(path, condition)?;
    }
    Ok(outcome)
}

/// What a re-score rewrites, held until every input was read.
#[derive(Default)]
struct Writes {
    /// `episode.json` files to write for attempts whose episode was
    /// recovered from `agent.json` ([`AttemptFiles::recovered_record`]).
    episodes: Vec<(std::path::PathBuf, super::records::Episode)>,
    results: Vec<(std::path::PathBuf, QuestionResult)>,
    conditions: Vec<(std::path::PathBuf, ConditionFile)>,
}

/// Refuses a re-score that met recorded files it cannot use.
///
/// Errors: [`Error::Other`] naming each (one a line), saying that nothing
/// was re-scored.
fn refuse_unusable(root: &RunsRoot, unusable: &[String]) -> Result<()> {
    if unusable.is_empty() {
        return Ok(());
    }
    // A question's ground truth is read once for each condition: named once.
    let mut seen = std::collections::BTreeSet::new();
    let unusable: Vec<&String> = unusable.iter().filter(|u| seen.insert(*u)).collect();
    Err(Error::Other(format!(
        "{}: {} recorded file{} could not be used, so nothing was re-scored (no file was \
         rewritten):\n  {}",
        root.root.display(),
        unusable.len(),
        crate::format::plural(unusable.len()),
        unusable
            .iter()
            .map(|u| u.as_str())
            .collect::<Vec<_>>()
            .join("\n  "),
    )))
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
        let Ok(condition) = read_condition_named(root, &name) else {
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
            let Ok(Some(result)) = read_recorded_json::<QuestionResult>(&result_path) else {
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

/// Re-judges every question of condition `name` and queues its file,
/// with the new summaries, aggregate and scoring version, in `writes`; a
/// recorded file that cannot be used is named in `unusable`.
/// `same_contract` holds the precision when no verdict may move (no
/// `--force`, the precision unchanged): an attempt judged under this
/// scoring version whose verdict moves is named in `unusable`.
fn rescore_condition(
    root: &RunsRoot,
    (name, mut condition): (&str, ConditionFile),
    (outcome, same_contract): (&mut RescoreOutcome, Option<u32>),
    (writes, unusable): (&mut Writes, &mut Vec<String>),
) {
    let ids: Vec<String> = condition.questions.keys().cloned().collect();
    let mut summaries = BTreeMap::new();
    // The corpus the condition was recorded from, when it is a folder here
    // (an answer key edited since is named, not judged against), and its
    // defaults of trajectory expectations (`okn-benchmark.toml`); one that
    // is here but does not read is named, as the loaders name it.
    let (corpus, defaults) =
        match crate::expectations::defaults::recorded_corpus(&condition.settings.corpus) {
            Ok(Some((corpus, defaults))) => (Some(corpus), Some(defaults)),
            Ok(None) => (None, None),
            Err(e) => {
                unusable.push(e.to_string());
                return;
            }
        };
    for id in ids {
        let record = corpus
            .as_ref()
            .and_then(|c| c.records.iter().find(|r| r.id == id));
        // The record's expectations as the corpus gives them now; without
        // the corpus here, the ones recorded.
        let expected = match (record, &defaults) {
            (Some(record), Some(defaults)) => match for_record(record, defaults) {
                Ok(e) => Some(e),
                Err(e) => {
                    unusable.push(e.to_string());
                    continue;
                }
            },
            _ => None,
        };
        let truth = match recorded_truth(root, &id, record) {
            Ok(truth) => truth,
            Err(e) => {
                unusable.push(e.to_string());
                continue;
            }
        };
        let scope = Scope {
            root,
            name,
            condition: &condition,
            same_contract,
        };
        match scope.rescore_question(&id, (&truth, expected), outcome) {
            Ok((path, result, episodes)) => {
                writes.episodes.extend(episodes);
                summaries.insert(id, result.summary.clone());
                writes.results.push((path, result));
            }
            Err(e) => unusable.push(e.to_string()),
        }
    }
    let new = aggregate(&summaries);
    let moves = aggregate_moves(name, &condition.aggregate, &new);
    // What the condition recorded of the same questions, summed the same
    // way (a question excluded by hand since is not among them).
    let recorded_rates = aggregate(&condition.questions);
    // Under the contract it was judged by, over the same questions, a
    // condition's rates are a function of its files too: a move that no
    // attempt's record showed (a result.json broken so that it is rebuilt)
    // is an edit (a red team's finding on issue 24, item 6).
    let recorded_moves = aggregate_moves(name, &recorded_rates, &new);
    if let Some(figures) = same_contract
        && !recorded_moves.is_empty()
        && condition.settings.scoring_version == SCORING_VERSION
        && condition.questions.keys().eq(summaries.keys())
    {
        unusable.push(
            Error::file(
                root.condition_file(name),
                format!(
                    "judged again under scoring version {SCORING_VERSION} at {figures} \
                     significant figures, the contract and precision it was judged by, over \
                     the same questions, its rates move ({}): the files its attempts rest on \
                     changed since they were judged; restore them from version control, or \
                     judge them as they are now with `okn-benchmark rescore --force`",
                    recorded_moves
                        .iter()
                        .map(|m| format!("{}: {} -> {}", m.field, m.old, m.new))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .to_string(),
        );
    }
    outcome.moved.extend(moves);
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
    writes
        .conditions
        .push((root.condition_file(name), condition));
}

/// The ground truth recorded beside question `id`'s attempts
/// ([`read_ground_truth`]).
///
/// Errors: as [`read_ground_truth`]; the corpus `record` (when found) whose
/// answer key was edited since the ground truth was recorded.
fn recorded_truth(
    root: &RunsRoot,
    id: &str,
    record: Option<&crate::corpus::Record>,
) -> Result<GroundTruth> {
    let truth = read_ground_truth(&root.question_dir(id))?;
    if let Some(record) = record
        && let Some(why) = crate::reference::key_drift(record, &truth.meta)
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
    Ok(truth)
}

/// One condition of a root being re-judged.
struct Scope<'a> {
    root: &'a RunsRoot,
    name: &'a str,
    condition: &'a ConditionFile,
    /// The precision, when no verdict may move ([`rescore`]).
    same_contract: Option<u32>,
}

/// An `episode.json` to write: its path and contents.
type RecoveredWrite = (std::path::PathBuf, super::records::Episode);

impl Scope<'_> {
    /// Re-judges the attempts of question `id` the condition records
    /// ([`AttemptPlan`]: `1..=repeat`, a shard root's slice of them; a
    /// merged sweep's that are there) against `truth`, names the moved
    /// scores, and returns its new `result.json` (path and contents) with
    /// the `episode.json` files to write for attempts whose episode was
    /// recovered from `agent.json` ([`AttemptFiles::recovered_record`]:
    /// attempts written before that file existed, issue 24, item 15).
    ///
    /// Errors: an attempt folder of the plan that is missing; a folder
    /// the condition does not have (`attempt-4` under `repeat` 3: the
    /// identity or the folders were changed, and leaving it out would drop
    /// an episode, issue 24, item 7; [`check_attempt_folders`]); an
    /// attempt's file that cannot be used ([`AttemptFiles::read`],
    /// [`AttemptFiles::check_recorded`]).
    fn rescore_question(
        &self,
        id: &str,
        (truth, expected): (&GroundTruth, Option<Vec<Expectation>>),
        outcome: &mut RescoreOutcome,
    ) -> Result<(std::path::PathBuf, QuestionResult, Vec<RecoveredWrite>)> {
        let Scope {
            root,
            name,
            condition,
            same_contract,
        } = *self;
        let ordered = truth.meta.ordered;
        let result_path = root.condition_dir(id, name).join(RESULT_FILE);
        let old: Option<QuestionResult> = match read_recorded_json(&result_path) {
            Ok(r) => r,
            Err(e) => {
                outcome.problems.push(e.to_string());
                None
            }
        };
        // The attempts the condition says it has (1..=repeat, a shard
        // root's slice of them). Any other folder is refused, never left
        // out.
        let plan = AttemptPlan::of(condition, id)
            .map_err(|why| Error::file(root.condition_file(name), why))?;
        let repeat = plan.repeat;
        let strays = check_attempt_folders(&root.condition_dir(id, name), &plan, None);
        if !strays.is_empty() {
            return Err(Error::Other(
                strays
                    .iter()
                    .map(Error::to_string)
                    .collect::<Vec<_>>()
                    .join("\n  "),
            ));
        }
        let expectations = expected
            .or_else(|| old.as_ref().map(|o| o.expectations.clone()))
            .unwrap_or_default();
        let mut attempts = Vec::new();
        let mut episodes = Vec::new();
        for n in plan.attempts() {
            let dir = root.attempt_dir(id, name, n);
            // A merged sweep may lack what a shard not merged played
            // (`run --resume` plays it); an attempt its result.json lists
            // and lost was refused before ([`refuse_lost_files`]).
            let listed = old
                .as_ref()
                .is_some_and(|o| o.attempts.iter().any(|a| a.attempt == n));
            if plan.merged && !listed && !dir.exists() {
                continue;
            }
            if !dir.is_dir() {
                return Err(Error::file(
                    &dir,
                    format!(
                        "missing, though the condition has {repeat} attempt{} a question: \
                         restore it from version control, or record the episode again \
                         (`okn-benchmark run ... --force`)",
                        crate::format::plural(repeat as usize)
                    ),
                ));
            }
            let previous = old
                .as_ref()
                .and_then(|o| o.attempts.iter().find(|a| a.attempt == n));
            let files = AttemptFiles::read_checked(&dir, n, previous)?;
            files.check_agent(condition)?;
            if let Some((path, episode)) = files.recovered_record() {
                episodes.push((path, episode.clone()));
            }
            let new = judge_again(
                &files,
                n,
                truth,
                condition.settings.significant_figures,
                &expectations,
            );
            if let Some(previous) = previous {
                let moved = differences(id, name, previous, &new);
                // Its verdicts and whether it is blocked ([`differences`]).
                let changed: Vec<String> = moved
                    .iter()
                    .map(|m| format!("{}: {} -> {}", m.field, m.old, m.new))
                    .collect();
                if let Some(figures) = same_contract
                    && !changed.is_empty()
                    && old
                        .as_ref()
                        .is_some_and(|o| o.scoring_version == SCORING_VERSION)
                {
                    return Err(Error::file(
                        &dir,
                        format!(
                            "judged again under scoring version {SCORING_VERSION} at {figures} \
                             significant figures, the contract and precision it was judged by, \
                             its verdict moves ({}): the files it rests on (answer.csv, \
                             calls.json, agent.json, the ground truth) changed since it was \
                             judged; restore \
                             them from version control, or judge them as they are now with \
                             `okn-benchmark rescore --force`",
                            changed.join(", ")
                        ),
                    ));
                }
                let status_moves = expectation_moves(id, name, previous, &new);
                if let Some(figures) = same_contract
                    && let Some(old) = old.as_ref()
                    && old.scoring_version == SCORING_VERSION
                {
                    refuse_unexplained_moves(&dir, figures, &status_moves, (old, &expectations))?;
                }
                outcome.moved.extend(moved);
                outcome
                    .expectations_moved
                    .extend(status_moves.into_iter().map(|(_, m)| m));
            }
            attempts.push(new);
            outcome.attempts += 1;
        }
        let summary = summarize(&attempts, ordered);
        let result = QuestionResult {
            format: RUNS_FORMAT,
            question: id.to_string(),
            condition: name.to_string(),
            // From the id, as `run` records it (its record's file name).
            tier: crate::corpus::tier_of(id),
            ordered_key: ordered,
            scoring_version: SCORING_VERSION.into(),
            expectations,
            attempts,
            summary,
        };
        Ok((result_path, result, episodes))
    }
}

/// Refuses the status moves of attempt folder `dir` (judged again at
/// `figures` significant figures under this scoring version) that moved
/// under the very expectation `old` (its question's `result.json`) judged
/// them by, `now` giving it alike: the corpus did not change it, so only
/// its evidence can have (issue 27, red team). As a verdict, it needs
/// `--force`.
///
/// Errors: [`Error::File`] naming `dir` and each such move.
fn refuse_unexplained_moves(
    dir: &Path,
    figures: u32,
    moves: &[(String, Moved)],
    (old, now): (&QuestionResult, &[Expectation]),
) -> Result<()> {
    let unexplained: Vec<String> = moves
        .iter()
        .filter(|(id, _)| {
            let was = old.expectations.iter().find(|e| &e.id == id);
            was.is_some() && was == now.iter().find(|e| &e.id == id)
        })
        .map(|(_, m)| format!("{} -> {}", m.old, m.new))
        .collect();
    if unexplained.is_empty() {
        return Ok(());
    }
    Err(Error::file(
        dir,
        format!(
            "judged again under scoring version {SCORING_VERSION} at {figures} significant \
             figures, by the trajectory expectations it was judged by, an expectation's status \
             moves ({}): the files it rests on (calls.json, answer.csv) changed since it was \
             judged; restore them from version control, or judge them as they are now with \
             `okn-benchmark rescore --force`",
            unexplained.join(", ")
        ),
    ))
}

/// The expectation statuses of one attempt that changed from `old` to
/// `new` (see [`RescoreOutcome::expectations_moved`]), each with its
/// expectation's id. An expectation added or dropped since is no move of
/// a status.
fn expectation_moves(
    question: &str,
    condition: &str,
    old: &AttemptResult,
    new: &AttemptResult,
) -> Vec<(String, Moved)> {
    old.expectations
        .iter()
        .filter_map(|(id, was)| {
            Some((
                id,
                was.status.name(),
                new.expectations.get(id)?.status.name(),
            ))
        })
        .filter(|(_, was, now)| was != now)
        .map(|(id, was, now)| {
            let moved = Moved {
                question: question.to_string(),
                condition: condition.to_string(),
                attempt: new.attempt,
                field: "expectation",
                old: format!("{id}: {was}"),
                new: now.to_string(),
            };
            (id.clone(), moved)
        })
        .collect()
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

pub use super::frozen::FrozenFile;

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
/// records ([`super::frozen::marker`]); `None` when it is open or its
/// marker is damaged (which [`refuse_frozen`] refuses by name).
pub fn frozen_reason(root: &RunsRoot) -> Option<String> {
    match super::frozen::marker(&root.root) {
        super::frozen::Marker::Frozen(file) => Some(file.reason),
        _ => None,
    }
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
