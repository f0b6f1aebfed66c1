//! Loaders: the only code of the reporting side that reads a runs root.
//! Each reads recorded files (`docs/FORMAT.md`) into the view model
//! ([`super::view`]); everything downstream is a function of the view.
//!
//! A recorded file that cannot be used is never silently left out: a
//! root's unreadable files are collected in [`RootView::problems`] (build
//! refuses a root with any), and what a page must show but cannot
//! ([`question`]) is an error naming the file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rayon::prelude::*;

use super::view::{
    AttemptView, ConditionAttempts, ConditionView, CostView, HostView, QuestionDetail,
    QuestionView, RootView, TrajectoryView, Unfinished, VIEW_VERSION,
};
use crate::error::{Error, Result};
use crate::fsutil::{Listing, read_recorded};
use crate::layout::ANSWER_FILE;
use crate::layout::{
    AGENT_FILE, GROUND_TRUTH_CSV, GROUND_TRUTH_JSON, PROMPT_FILE, RESULT_FILE, RunsRoot,
};
use crate::runs::judge::{Disagreement, record_differences};
use crate::runs::recorded::{
    AgentReport, AttemptFiles, AttemptPlan, check_attempt_folders, read_ground_truth,
};
use crate::runs::records::{AttemptResult, QuestionResult, RUNS_FORMATS_READ, Usage, formats_read};
use crate::table::Table;

/// The kind given to soft errors judged before `soft_error_kinds` was
/// recorded (`rescore` records it).
pub const UNKNOWN_SOFT_ERROR: &str = "kind not recorded (rescore the root)";

/// Reads every condition and result of the runs root at `path`, with the
/// question texts and what the pages link to. An unreadable or
/// inconsistent file is named in [`RootView::problems`] and left out.
pub fn root(path: &Path) -> RootView {
    root_with(path, Records::Checked)
}

/// When the files each attempt recorded are checked against its record
/// (`check_records`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Records {
    /// As the root is loaded: every caller but the site's build.
    Checked,
    /// Question by question, as [`question`] reads the files for the
    /// site's pages (called with `check`), so each file is read once for
    /// both: the build that makes those pages refuses the root before it
    /// writes anything when one breaks a rule (`render::build`; issue 26,
    /// section 4). [`RootView::records_deferred`] says so.
    Deferred,
}

/// [`root`], with the attempts' files checked as `records` says: with
/// [`Records::Deferred`], [`RootView::problems`] holds none of the
/// problems `check_records` finds, and whoever loads the root must call
/// [`question`] with `check` for every question before publishing
/// anything of it.
pub fn root_with(path: &Path, records: Records) -> RootView {
    let runs_root = RunsRoot::new(path);
    let mut problems = Vec::new();
    let mut conditions = BTreeMap::new();
    // Links and files that are not regular files, anywhere in the root,
    // are named before anything is read through them.
    problems.extend(crate::runs::recorded::strays(path));
    for name in runs_root.condition_names() {
        match crate::runs::recorded::read_condition_named(&runs_root, &name) {
            Ok(condition) => {
                let running = crate::runs::lock::held(&runs_root, &name);
                conditions.insert(
                    name,
                    ConditionView {
                        label: super::label(&condition),
                        file: condition,
                        soft_errors: BTreeMap::new(),
                        reply_chars: BTreeMap::new(),
                        reply_recorded: (0, 0),
                        cost: CostView::default(),
                        trajectory: TrajectoryView::default(),
                        expectations: BTreeMap::new(),
                        expectations_note: None,
                        running,
                    },
                );
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    let mut unfinished = unfinished(&runs_root, &conditions);
    // Known before the results are read: a site's build lets each
    // question's attempts go as soon as they are counted (its question
    // jobs read them again: `question_results`), so memory stays flat
    // however many attempts the root holds (issue 26, section 4).
    let mut frozen_problems = Vec::new();
    let (frozen, readme_page) = frozen_state(path, &mut frozen_problems);
    let attempts_held = records == Records::Checked || frozen;
    let (results, mut digests, mut counted) =
        results(&runs_root, &conditions, attempts_held, &mut problems);
    check_expectations(&runs_root, &mut conditions, &results, &mut problems);
    incomplete(&conditions, &counted, &mut unfinished);
    for by_condition in counted.values() {
        for (name, counted) in by_condition {
            if let Some(condition) = conditions.get_mut(name) {
                counted.add_to(condition);
            }
        }
    }
    check_conditions(&runs_root, &conditions, &results, &mut problems);
    if records == Records::Checked {
        check_records(&runs_root, &conditions, &results, &mut problems);
    }
    // Each question's text is read from a prompt file: in parallel.
    let texts: Vec<Option<String>> = results
        .par_iter()
        .map(|(_, by_condition)| question_texts(&runs_root, by_condition))
        .collect::<Vec<_>>()
        .into_iter()
        .map(|found| match found {
            Ok(text) => text,
            Err(e) => {
                problems.push(e.to_string());
                None
            }
        })
        .collect();
    let mut played = played(&runs_root, &conditions, &counted);
    problems.extend(frozen_problems);
    let questions = results
        .into_iter()
        .zip(texts)
        .map(|((id, results), text)| {
            let played = played.remove(&id).unwrap_or_default();
            let redacted = counted
                .remove(&id)
                .unwrap_or_default()
                .into_iter()
                .flat_map(|(name, c)| {
                    c.redacted
                        .into_iter()
                        .map(move |(attempt, note)| (name.clone(), attempt, note))
                })
                .collect();
            (
                id.clone(),
                QuestionView {
                    text,
                    results,
                    played,
                    redacted,
                    digests: digests.remove(&id).unwrap_or_default(),
                },
            )
        })
        .collect();
    RootView {
        version: VIEW_VERSION,
        title: std::fs::canonicalize(path)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "runs".into()),
        frozen,
        readme_page,
        path: path.to_path_buf(),
        real: std::fs::canonicalize(path).ok(),
        conditions,
        questions,
        problems,
        unfinished,
        records_deferred: records == Records::Deferred,
        attempts_held,
    }
}

/// Something by question id, then by condition name.
type ByQuestion<T> = BTreeMap<String, crate::runs::records::ByName<T>>;

/// What loading keeps of the `result.json` files ([`results`]), each by
/// question and condition: the results (their attempts let go unless
/// held), a digest of each file's bytes, and what was counted of each
/// result's attempts.
type ResultsRead = (
    ByQuestion<QuestionResult>,
    ByQuestion<u64>,
    ByQuestion<Counted>,
);

/// What a condition's figures take from one result's attempts, counted as
/// the result is read, before the attempts may be let go
/// ([`RootView::attempts_held`]).
#[derive(Debug, Default)]
struct Counted {
    /// The attempt numbers, in order.
    numbers: Vec<u32>,
    /// Each trajectory expectation over the attempts
    /// ([`super::view::tally_expectations`]).
    expectations: BTreeMap<String, super::view::ExpectationTally>,
    /// Soft errors by kind ([`ConditionView::soft_errors`]).
    soft_errors: BTreeMap<String, usize>,
    /// The measured attempts' trajectories.
    trajectory: TrajectoryView,
    /// Each attempt's cost as its host reported it, in order (`None` when
    /// it did not): summed in the order the attempts come, as one pass
    /// over them would.
    costs: Vec<Option<f64>>,
    /// Input and output tokens, and the attempts that reported / did not
    /// report them.
    tokens: (u64, u64, (usize, usize)),
    /// Reply characters by tool, and the attempts that recorded / did not
    /// record them.
    reply_chars: (BTreeMap<String, usize>, (usize, usize)),
    /// Notes of attempts whose answer redaction changed before judging:
    /// attempt, note ([`super::view::QuestionView::redacted`]).
    redacted: Vec<(u32, String)>,
}

impl Counted {
    /// Counts the attempts of `result`.
    fn of(result: &QuestionResult) -> Counted {
        let mut c = Counted::default();
        super::view::tally_expectations(result, &mut c.expectations);
        for attempt in &result.attempts {
            c.numbers.push(attempt.attempt);
            for (label, n) in &attempt.soft_error_kinds {
                *c.soft_errors.entry(label.clone()).or_insert(0) += n;
            }
            // Judged before kinds were recorded: counted, never dropped,
            // and said to be of no known kind.
            if attempt.soft_error_kinds.is_empty() && !attempt.soft_errors.is_empty() {
                *c.soft_errors
                    .entry(UNKNOWN_SOFT_ERROR.to_string())
                    .or_insert(0) += attempt.soft_errors.values().sum::<usize>();
            }
            if !attempt.blocked {
                let t = &mut c.trajectory;
                match &attempt.trajectory {
                    Some(facts) => {
                        t.recorded.0 += 1;
                        t.exploratory_calls += facts.exploratory_calls;
                        if let Some(hit) = facts.first_query_hit {
                            t.first_query_judged += 1;
                            t.first_query_hits += usize::from(hit);
                        }
                    }
                    None => t.recorded.1 += 1,
                }
            }
            let usage = attempt.usage.as_ref();
            c.costs.push(usage.and_then(Usage::cost));
            match usage.and_then(|u| Some((u.all_input_tokens()?, u.output()?))) {
                Some((i, o)) => {
                    c.tokens.0 += i;
                    c.tokens.1 += o;
                    c.tokens.2.0 += 1;
                }
                None => c.tokens.2.1 += 1,
            }
            match &attempt.reply_chars {
                Some(by_tool) => {
                    c.reply_chars.1.0 += 1;
                    for (tool, n) in by_tool {
                        *c.reply_chars.0.entry(tool.clone()).or_insert(0) += n;
                    }
                }
                None => c.reply_chars.1.1 += 1,
            }
            for note in &attempt.notes {
                if note.starts_with(crate::runs::judge::REDACTED_ANSWER) {
                    c.redacted.push((attempt.attempt, note.clone()));
                }
            }
        }
        c
    }

    /// Adds what was counted to `condition`'s figures.
    fn add_to(&self, condition: &mut ConditionView) {
        for (id, tally) in &self.expectations {
            condition
                .expectations
                .entry(id.clone())
                .or_insert_with(|| super::view::ExpectationTally {
                    kind: tally.kind.clone(),
                    check: tally.check.clone(),
                    ..super::view::ExpectationTally::default()
                })
                .add(tally);
        }
        for (label, n) in &self.soft_errors {
            *condition.soft_errors.entry(label.clone()).or_insert(0) += n;
        }
        let (t, mine) = (&mut condition.trajectory, &self.trajectory);
        t.recorded.0 += mine.recorded.0;
        t.recorded.1 += mine.recorded.1;
        t.exploratory_calls += mine.exploratory_calls;
        t.first_query_judged += mine.first_query_judged;
        t.first_query_hits += mine.first_query_hits;
        let cost = &mut condition.cost;
        for c in &self.costs {
            match c {
                Some(c) => {
                    cost.cost_usd += c;
                    cost.costed.0 += 1;
                }
                None => cost.costed.1 += 1,
            }
        }
        cost.input_tokens += self.tokens.0;
        cost.output_tokens += self.tokens.1;
        cost.tokened.0 += self.tokens.2.0;
        cost.tokened.1 += self.tokens.2.1;
        for (tool, n) in &self.reply_chars.0 {
            *condition.reply_chars.entry(tool.clone()).or_insert(0) += n;
        }
        condition.reply_recorded.0 += self.reply_chars.1.0;
        condition.reply_recorded.1 += self.reply_chars.1.1;
    }
}

/// Checks each recorded list of trajectory expectations against the one
/// its corpus gives now (`docs/TRAJECTORY.md`, "Checked against the
/// corpus"; issue 27): the list in `result.json` is what its statuses are
/// judged by again, so a hand-added `known_gap`, a contract made a
/// quality or a deleted list would otherwise be published and silence
/// `compare --fail-on-regression`. The corpus is the condition's
/// `settings.corpus`, found as `rescore` finds it (relative to where the
/// tool runs). In an open root a list that differs is named in
/// `problems` (`rescore` applies the corpus's, no model called); in a
/// frozen root, which nothing may rewrite, it stands and is said in the
/// condition's [`ConditionView::expectations_note`], as is a corpus that
/// is not here or does not load, or a question it no longer has.
fn check_expectations(
    root: &RunsRoot,
    conditions: &mut BTreeMap<String, ConditionView>,
    results: &BTreeMap<String, crate::report::view::Results>,
    problems: &mut Vec<String>,
) {
    use crate::expectations::defaults::for_record;
    let frozen = !matches!(
        crate::runs::frozen::marker(&root.root),
        crate::runs::frozen::Marker::Open
    );
    let mut corpora = BTreeMap::new();
    for (name, condition) in conditions.iter_mut() {
        let given = condition.file.settings.corpus.clone();
        let here = corpora
            .entry(given.clone())
            .or_insert_with(|| crate::expectations::defaults::recorded_corpus(&given));
        let here = match here {
            Ok(Some(here)) => Ok(&*here),
            Ok(None) => Err(format!(
                "the corpus it was recorded from, {}, is not a folder from here",
                crate::text::printable(&given)
            )),
            // Here, but its expectations do not read: bad input, never a
            // reason to take the recorded ones unchecked.
            Err(e) => {
                problems.push(format!(
                    "{}: the trajectory expectations of its corpus {} do not read, so its \
                     result.json files cannot be checked against them: {e}",
                    root.condition_file(name).display(),
                    crate::text::printable(&given)
                ));
                continue;
            }
        };
        let mut unchecked: Option<String> = None;
        let (mut absent, mut stale) = (Vec::new(), Vec::new());
        for (id, by_condition) in results {
            let Some(result) = by_condition.get(name) else {
                continue;
            };
            let current = match &here {
                Err(why) => {
                    if !result.expectations.is_empty() {
                        unchecked.get_or_insert_with(|| why.clone());
                    }
                    continue;
                }
                Ok((corpus, defaults)) => match corpus.records.iter().find(|r| &r.id == id) {
                    None => {
                        if !result.expectations.is_empty() {
                            absent.push(id.clone());
                        }
                        continue;
                    }
                    Some(record) => match for_record(record, defaults) {
                        Ok(list) => list,
                        Err(e) => {
                            problems.push(format!(
                                "{}: its record's trajectory expectations do not read, so it \
                                 cannot be checked against them: {e}",
                                root.condition_dir(id, name).join(RESULT_FILE).display()
                            ));
                            continue;
                        }
                    },
                },
            };
            let moved = crate::expectations::differences(
                &result.expectations,
                &current,
                ("result.json", "the corpus"),
            );
            if moved.is_empty() {
                continue;
            }
            if frozen {
                stale.push(format!("{id}: {}", moved.join("; ")));
            } else {
                problems.push(format!(
                    "{}: its trajectory expectations are not the ones its corpus {} gives \
                     now: {}: apply the corpus's with `okn-benchmark rescore {}` (no model is \
                     called), or restore result.json from version control",
                    root.condition_dir(id, name).join(RESULT_FILE).display(),
                    crate::text::printable(&given),
                    moved.join("; "),
                    root.root.display()
                ));
            }
        }
        let mut notes = Vec::new();
        if let Some(why) = unchecked {
            notes.push(format!(
                "its trajectory expectations are as result.json records them, not checked \
                 against a corpus: {why}"
            ));
        }
        if !absent.is_empty() {
            notes.push(format!(
                "its corpus {} no longer has {} of its questions ({}): their trajectory \
                 expectations are as result.json records them",
                crate::text::printable(&given),
                absent.len(),
                absent.join(", ")
            ));
        }
        if let Some(first) = stale.first() {
            notes.push(format!(
                "the root is frozen, so its trajectory expectations stay as they were judged; \
                 its corpus {} now gives others for {} question{} (first, {first})",
                crate::text::printable(&given),
                stale.len(),
                crate::format::plural(stale.len())
            ));
        }
        condition.expectations_note = (!notes.is_empty()).then(|| notes.join(". "));
    }
}

/// Whether the root at `path` is frozen, by its `.frozen`
/// ([`crate::runs::frozen::marker`]: one that is damaged is named in
/// `problems`, and the root is never written), and whether it has, or
/// must have, its `README.html`: a root frozen by a `freeze` that wrote it
/// ([`crate::runs::frozen::FROZEN_WITH_PAGE`]) must, and its absence is
/// reported as a frozen file that is missing (issue 24, item 6).
fn frozen_state(path: &Path, problems: &mut Vec<String>) -> (bool, bool) {
    use crate::runs::frozen::{FROZEN_WITH_PAGE, Marker, marker};
    let page = path
        .join(crate::layout::README_FILE)
        .with_extension("html")
        .is_file();
    match marker(path) {
        Marker::Open => (false, page),
        Marker::Frozen(file) => (true, page || file.format >= FROZEN_WITH_PAGE),
        Marker::Damaged(why) => {
            problems.push(why);
            (true, page)
        }
    }
}

/// The conditions with attempt folders on disk that no condition file
/// lists ([`RootView::unfinished`]).
fn unfinished(
    root: &RunsRoot,
    conditions: &BTreeMap<String, ConditionView>,
) -> BTreeMap<String, Unfinished> {
    let mut found: BTreeMap<String, Unfinished> = BTreeMap::new();
    for (id, name) in root.condition_folders() {
        let condition = conditions.get(&name);
        // A question listed, or excluded by hand from recorded results
        // (`meta.excluded`, `docs/FORMAT.md`): no run left it unfinished.
        if condition.is_some_and(|c| c.file.questions.contains_key(&id) || c.file.excludes(&id)) {
            continue;
        }
        let attempts = root.finished_attempts(&id, &name).len();
        let entry = found.entry(name.clone()).or_insert_with(|| Unfinished {
            questions: 0,
            attempts: 0,
            missing: 0,
            has_file: condition.is_some() || root.condition_file(&name).exists(),
            running: crate::runs::lock::held(root, &name),
        });
        entry.questions += 1;
        entry.attempts += attempts;
    }
    // A run going on that has recorded nothing yet (a stale lock alone,
    // left by a run killed before it recorded anything, is no condition).
    for name in root.locked_conditions() {
        if crate::runs::lock::held(root, &name) {
            found.entry(name.clone()).or_insert_with(|| Unfinished {
                questions: 0,
                attempts: 0,
                missing: 0,
                has_file: conditions.contains_key(&name) || root.condition_file(&name).exists(),
                running: true,
            });
        }
    }
    // Only `run` makes `ID_results/NAME/`: a folder that no condition
    // file lists is a run's, even with no attempt finished in it.
    found
}

/// Counts in `unfinished` the attempts a merged sweep lacks
/// ([`AttemptPlan::merged`]): a root `merge` made without every shard
/// holds fewer attempts than its `repeat`, which `run --resume` plays; it
/// is said to be incomplete, and `freeze` refuses it (issue 24, item 5).
/// Anywhere else an attempt `result.json` lacks is damage
/// ([`check_attempt_folders`]).
fn incomplete(
    conditions: &BTreeMap<String, ConditionView>,
    counted: &ByQuestion<Counted>,
    unfinished: &mut BTreeMap<String, Unfinished>,
) {
    for (id, by_condition) in counted {
        for (name, counted) in by_condition {
            let Some(condition) = conditions.get(name) else {
                continue;
            };
            let Ok(plan) = AttemptPlan::of(&condition.file, id) else {
                continue;
            };
            if !plan.merged || condition.running {
                continue;
            }
            let listed: BTreeSet<u32> = counted.numbers.iter().copied().collect();
            let (_, missing) = plan.lacking(&listed, 0);
            if missing > 0 {
                unfinished
                    .entry(name.clone())
                    .or_insert_with(|| Unfinished {
                        questions: 0,
                        attempts: 0,
                        missing: 0,
                        has_file: true,
                        running: false,
                    })
                    .missing += missing;
            }
        }
    }
}

/// Question id → condition name → result, for every question each
/// condition file lists. Result files are read in parallel (a large root
/// holds tens of thousands), then gathered in the order a sequential read
/// would meet them, so the problems keep their order.
fn results(
    root: &RunsRoot,
    conditions: &BTreeMap<String, ConditionView>,
    hold: bool,
    problems: &mut Vec<String>,
) -> ResultsRead {
    let wanted: Vec<(&String, &String)> = conditions
        .iter()
        .flat_map(|(name, c)| c.file.questions.keys().map(move |id| (name, id)))
        .collect();
    let read: Vec<Result<(QuestionResult, u64, Counted)>> = wanted
        .par_iter()
        .map(|(name, id)| {
            let (mut result, digest) = read_result(root, id, name)?;
            let counted = Counted::of(&result);
            if !hold {
                result.attempts = Vec::new();
            }
            Ok((result, digest, counted))
        })
        .collect();
    let (mut results, mut digests, mut counts) = ResultsRead::default();
    for ((name, id), read) in wanted.into_iter().zip(read) {
        match read {
            Ok((result, digest, counted)) => {
                let (id, name) = (id.clone(), name.clone());
                results
                    .entry(id.clone())
                    .or_default()
                    .insert(name.clone(), result);
                digests
                    .entry(id.clone())
                    .or_default()
                    .insert(name.clone(), digest);
                counts.entry(id).or_default().insert(name, counted);
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    (results, digests, counts)
}

/// Condition `name`'s `result.json` of question `id`, read and checked
/// ([`check_result`]), with a digest of its bytes (FxHash: a second read
/// is told apart from the first by it, not guarded against forgery).
///
/// Errors: the file is absent ([`LOST_RESULT`]), cannot be read, does not
/// parse or breaks a rule of [`check_result`], named by its path.
fn read_result(root: &RunsRoot, id: &str, name: &str) -> Result<(QuestionResult, u64)> {
    let path = root.condition_dir(id, name).join(RESULT_FILE);
    let bytes = read_recorded(&path)?;
    // (No bytes, no result: the digest of nothing is never returned.)
    let digest = bytes.as_deref().map_or(0, digest_of);
    let result = crate::fsutil::parse_recorded_json::<QuestionResult>(&path, bytes)?
        .ok_or_else(|| Error::file(&path, LOST_RESULT))?;
    check_result(&result, id, name).map_err(|m| Error::file(&path, m))?;
    Ok((result, digest))
}

/// A digest of a recorded file's bytes ([`read_result`]).
fn digest_of(bytes: &[u8]) -> u64 {
    use std::hash::Hasher as _;
    let mut hasher = rustc_hash::FxHasher::default();
    hasher.write(bytes);
    hasher.finish()
}

/// Question `id`'s results under each condition of `view`, attempts and
/// all: the view's own when it holds them ([`RootView::attempts_held`]),
/// else each condition's `result.json` read again, which must be the
/// bytes the view was loaded from. Empty for a question the view does not
/// have.
///
/// Errors: a `result.json` that changed (or went) since the root was
/// loaded, named with what to do; one that can no longer be read.
pub fn question_results<'v>(
    view: &'v RootView,
    id: &str,
) -> Result<std::borrow::Cow<'v, crate::report::view::Results>> {
    let Some(question) = view.questions.get(id) else {
        return Ok(std::borrow::Cow::Owned(crate::report::view::Results::new()));
    };
    if view.attempts_held {
        return Ok(std::borrow::Cow::Borrowed(&question.results));
    }
    let root = RunsRoot::new(&view.path);
    let mut results = crate::report::view::Results::new();
    for name in question.results.keys() {
        // Gone or unreadable now: said as it is (`read_result`).
        let (result, digest) = read_result(&root, id, name)?;
        if question.digests.get(name) != Some(&digest) {
            return Err(Error::file(
                root.condition_dir(id, name).join(RESULT_FILE),
                "changed while this command was reading the runs root (a run or rescore \
                 writing it?): run it again once nothing writes the root",
            ));
        }
        results.insert(name.clone(), result);
    }
    Ok(std::borrow::Cow::Owned(results))
}

/// Checks every file the records say a question and its attempts hold, by
/// the rules `rescore` keeps (`docs/FORMAT.md`, "Re-scoring";
/// [`crate::runs::recorded`]), and names each that breaks one in
/// `problems`: the question's ground truth, against the digests recorded
/// beside it ([`read_ground_truth`]); the attempt folders on disk against
/// the attempts `result.json` lists and the condition's `repeat`
/// ([`check_attempt_folders`]: issue 24, items 5 and 7); for each attempt
/// listed, its folder, its `answer.csv` when it submitted one, and its
/// `metrics.json`, `calls.json`, `episode.json` and `agent.json`
/// ([`AttemptFiles::check_recorded`]); and the record itself: each
/// attempt judged again from those files and the ground truth, as
/// `rescore` judges, whatever scoring version `result.json` claims, must
/// give every member `result.json` records ([`record_differences`]:
/// issue 24, items 4 and 6), and the question's `ordered_key` and `tier`
/// must be what its ground truth and id give. An edited `result.json` or
/// `answer.csv` would otherwise publish a score its episode does not give.
///
/// Checked when the root is loaded, before anything is written from it: a
/// page built over a lost or damaged file would contradict the score beside
/// it ("Exact" over "nothing was submitted"), and a build that met one only
/// while writing pages would have written others first. Questions are
/// checked in parallel; the problems come in the order a sequential read
/// would meet them (question, condition, attempt).
fn check_records(
    root: &RunsRoot,
    conditions: &BTreeMap<String, ConditionView>,
    results: &BTreeMap<String, crate::report::view::Results>,
    problems: &mut Vec<String>,
) {
    let questions: Vec<(&String, &crate::report::view::Results)> = results.iter().collect();
    let found: Vec<Vec<String>> = questions
        .par_iter()
        .map(|(id, by_condition)| check_question(root, conditions, id, by_condition))
        .collect();
    problems.extend(found.into_iter().flatten());
}

/// The problems of question `id` of `view` (a root loaded with
/// [`Records::Deferred`]): its files read and checked as [`question`] with
/// `check` reads and checks them, in the same order, without making the
/// detail its pages show. A build's first pass uses it for a question
/// whose pages it leaves to the second (issue 26, section 4).
pub fn question_problems(view: &RootView, id: &str) -> Vec<String> {
    let root = RunsRoot::new(&view.path);
    match view.questions.get(id) {
        Some(_) => match question_results(view, id) {
            Ok(results) => check_question(&root, &view.conditions, id, &results),
            Err(e) => vec![e.to_string()],
        },
        // No results: only the ground truth is read.
        None => QuestionCheck::new(&root, &view.conditions, id).problems,
    }
}

/// [`check_records`] for question `id`: its problems, in order.
fn check_question(
    root: &RunsRoot,
    conditions: &BTreeMap<String, ConditionView>,
    id: &str,
    by_condition: &crate::report::view::Results,
) -> Vec<String> {
    let mut check = QuestionCheck::new(root, conditions, id);
    for (name, result) in by_condition {
        check.result(name, result);
        for a in &result.attempts {
            check.attempt(name, result, a);
        }
    }
    check.problems
}

/// The checks [`check_records`] makes of one question, made as its files
/// are read: by [`check_question`] as a root is loaded, or by
/// [`question`] as the site's pages are made (each file read once for
/// both).
struct QuestionCheck<'a> {
    root: &'a RunsRoot,
    conditions: &'a BTreeMap<String, ConditionView>,
    id: &'a str,
    /// The question's ground truth, when it passed its checks.
    truth: Option<crate::reference::GroundTruth>,
    /// What broke a rule, in the order met.
    problems: Vec<String>,
}

impl<'a> QuestionCheck<'a> {
    /// Reads and checks the question's ground truth ([`read_ground_truth`]).
    fn new(
        root: &'a RunsRoot,
        conditions: &'a BTreeMap<String, ConditionView>,
        id: &'a str,
    ) -> QuestionCheck<'a> {
        let mut problems = Vec::new();
        let truth = match read_ground_truth(&root.question_dir(id)) {
            Ok(truth) => Some(truth),
            Err(e) => {
                problems.push(e.to_string());
                None
            }
        };
        QuestionCheck {
            root,
            conditions,
            id,
            truth,
            problems,
        }
    }

    /// Checks condition `name`'s `result` of the question: the members
    /// its ground truth and id give, and its attempt folders.
    fn result(&mut self, name: &str, result: &QuestionResult) {
        let (root, id) = (self.root, self.id);
        let path = root.condition_dir(id, name).join(RESULT_FILE);
        let derived = [
            (
                "ordered_key",
                result.ordered_key.to_string(),
                self.truth.as_ref().map(|t| t.meta.ordered.to_string()),
                "ground_truth.json gives",
            ),
            (
                "tier",
                json_text(&result.tier),
                Some(json_text(&crate::corpus::tier_of(id))),
                "the question's id gives",
            ),
        ];
        for (member, recorded, derived, from) in derived {
            if let Some(derived) = derived.filter(|d| *d != recorded) {
                self.problems.push(format!(
                    "{}: {member} is {recorded}, but {from} {derived}: the record was edited; \
                     restore it from version control",
                    path.display()
                ));
            }
        }
        // The expectations recorded are what the statuses are judged by
        // again: one that no header line could give is damage (issue 27).
        if let Some(why) = crate::expectations::misfit_of(&result.expectations) {
            self.problems.push(format!(
                "{}: {why}: the record was edited; restore it from version control, or \
                 re-judge it from the corpus with `okn-benchmark rescore`",
                path.display()
            ));
        }
        if let Some(condition) = self.conditions.get(name) {
            let listed: BTreeSet<u32> = result.attempts.iter().map(|a| a.attempt).collect();
            // A run recording the condition now writes result.json once
            // the question's attempts are played.
            let running = condition.running;
            match AttemptPlan::of(&condition.file, id) {
                Ok(plan) => {
                    let folders = check_attempt_folders(
                        &root.condition_dir(id, name),
                        &plan,
                        (!running).then_some(&listed),
                    );
                    self.problems.extend(folders.iter().map(Error::to_string));
                }
                Err(why) => self.problems.push(format!(
                    "{}: {why}; restore it from version control",
                    root.condition_file(name).display()
                )),
            }
        }
    }

    /// Checks attempt `a` of condition `name`'s `result` ([`check_attempt`],
    /// the agent its condition names, and the attempt judged again against
    /// the ground truth); returns its files (and the listing they were
    /// read through) when they could be read, whatever the later checks
    /// found.
    fn attempt(&mut self, name: &str, result: &QuestionResult, a: &AttemptResult) -> Option<Read> {
        let read = match check_attempt(self.root, self.id, name, a) {
            Ok(read) => read,
            Err(e) => {
                self.problems.push(e.to_string());
                return None;
            }
        };
        let files = &read.files;
        let condition = self.conditions.get(name);
        if let Some(condition) = condition
            && let Err(e) = files.check_agent(&condition.file)
        {
            self.problems.push(e.to_string());
            return Some(read);
        }
        if let Some(truth) = self.truth.as_ref() {
            // Judged again at the precision the condition records
            // (`run`/`rescore --precision`).
            let figures = condition.map_or(crate::score::DEFAULT_SIGNIFICANT_FIGURES, |c| {
                c.file.settings.significant_figures
            });
            let again = crate::runs::judge::judge_again(
                files,
                a.attempt,
                truth,
                figures,
                &result.expectations,
            );
            let moved = record_differences(a, &again, result.format);
            if !moved.is_empty() {
                self.problems
                    .push(disagreement_problem(self.root, result, a.attempt, &moved));
            }
        }
        Some(read)
    }
}

/// The problem of attempt `attempt` of `result`, whose files judged again
/// give other values than it records (`moved`): damage when this scoring
/// version judged it (the record or the files were changed), else a root
/// to re-judge under this version before it is published (issue 24, item
/// 4).
fn disagreement_problem(
    root: &RunsRoot,
    result: &QuestionResult,
    attempt: u32,
    moved: &[Disagreement],
) -> String {
    let path = root
        .condition_dir(&result.question, &result.condition)
        .join(RESULT_FILE);
    let list = |value: &dyn Fn(&Disagreement) -> &str| {
        moved
            .iter()
            .map(|m| format!("{} {}", m.member, value(m)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (recorded, derived) = (list(&|m| &m.recorded), list(&|m| &m.derived));
    if result.scoring_version == crate::score::SCORING_VERSION {
        format!(
            "{}: attempt {attempt} records {recorded}, but its files judged against the ground \
             truth give {derived}: the record or the files were changed since it was judged; \
             restore them from version control (`okn-benchmark rescore --force` would judge by \
             the files as they are now, and the edit would be yours to answer for)",
            path.display(),
        )
    } else {
        format!(
            "{}: attempt {attempt} was judged under scoring version {} and records {recorded}, \
             but this okn-benchmark judges by scoring version {} and its files give {derived}: \
             re-judge the root under this version (`okn-benchmark rescore {}`), or publish it \
             with the okn-benchmark that judged it",
            path.display(),
            crate::text::printable(&result.scoring_version),
            crate::score::SCORING_VERSION,
            root.root.display(),
        )
    }
}

use crate::runs::recorded::json_text;

/// Checks attempt `a` of question `id` under condition `name`
/// ([`check_records`]) and returns its files.
///
/// Errors: the attempt folder missing (or a link); `answer.csv` missing
/// where `result.json` records a submitted answer; a file
/// [`AttemptFiles::read`] or [`AttemptFiles::check_recorded`] refuses; a
/// file of [`crate::layout::ATTEMPT_FILES`] that is there and cannot be
/// opened as a regular file. Each names the file and says what to do.
fn check_attempt(root: &RunsRoot, id: &str, name: &str, a: &AttemptResult) -> Result<Read> {
    let dir = root.attempt_dir(id, name, a.attempt);
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(Error::file(&dir, crate::fsutil::LINK_REFUSED));
        }
        Ok(m) if m.is_dir() => {}
        _ => return Err(Error::file(&dir, LOST_ATTEMPT)),
    }
    // One listing of the folder serves the checks, the reads and the page.
    let listing = listed_attempt(&dir, a)?;
    let files = AttemptFiles::read_checked_listed(&listing, a.attempt, Some(a))?;
    // What the attempt's page shows or links (its prompt above all) must
    // be a file that can be read: one that cannot is damage, never a file
    // that was not recorded (issue 24, item 23). Those `read_listed` read
    // are not opened again.
    for name in crate::layout::ATTEMPT_FILES {
        if !AttemptFiles::READ.contains(&name) {
            listing.open(name).map_err(damaged)?;
        }
    }
    Ok(Read { files, listing })
}

/// An attempt folder as [`check_attempt`] read it: its files, and the
/// listing they were read through (which its page reads again).
struct Read {
    files: AttemptFiles,
    listing: Listing,
}

/// Said of a `result.json` a condition file lists that is gone.
const LOST_RESULT: &str = "missing, though its condition file lists the question: restore it \
                           from version control, or re-judge the root (okn-benchmark rescore), \
                           which rebuilds it from the attempts";

/// Said of an attempt folder `result.json` lists that is gone.
const LOST_ATTEMPT: &str = "this attempt folder, recorded in result.json, is missing: restore it \
                            from version control, or record the episode again";

/// Said of the `answer.csv` of an attempt recorded as submitted that is
/// gone.
const LOST_ANSWER: &str = "missing, though result.json records a submitted answer: restore it \
                           from version control, or record the episode again";

/// The strategy each attempt of a scripted condition recorded playing:
/// `played` in its `agent.json`, which the scripted agent writes
/// (`agent::scripted`; `docs/FORMAT.md`, "A runs root"), by question,
/// condition and attempt. Other agent hosts record none, so their attempts
/// are not read. An attempt whose `agent.json` is missing, is not JSON or
/// names no strategy has no entry: the reports count it as not recorded.
fn played(
    root: &RunsRoot,
    conditions: &BTreeMap<String, ConditionView>,
    counted: &ByQuestion<Counted>,
) -> BTreeMap<String, BTreeMap<String, BTreeMap<u32, String>>> {
    let scripted = |name: &str| {
        conditions
            .get(name)
            .is_some_and(|c| c.file.identity.agent.starts_with(SCRIPTED_AGENT))
    };
    let wanted: Vec<(&String, &String, u32)> = counted
        .iter()
        .flat_map(|(q, by_condition)| {
            by_condition
                .iter()
                .filter(|(name, _)| scripted(name))
                .flat_map(move |(name, c)| c.numbers.iter().map(move |&a| (q, name, a)))
        })
        .collect();
    let read: Vec<Option<String>> = wanted
        .par_iter()
        .map(|(q, name, attempt)| {
            let path = root.attempt_dir(q, name, *attempt).join(AGENT_FILE);
            let bytes = read_recorded(&path).ok().flatten()?;
            let report: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
            report.get("played")?.as_str().map(str::to_string)
        })
        .collect();
    let mut played: BTreeMap<String, BTreeMap<String, BTreeMap<u32, String>>> = BTreeMap::new();
    for ((q, name, attempt), strategy) in wanted.into_iter().zip(read) {
        if let Some(strategy) = strategy {
            played
                .entry(q.clone())
                .or_default()
                .entry(name.clone())
                .or_default()
                .insert(attempt, strategy);
        }
    }
    played
}

/// How a condition names the scripted agent: `scripted:STRATEGY`
/// (`agent::Agent::name`).
const SCRIPTED_AGENT: &str = "scripted:";

/// The condition file repeats each question's summary and their
/// aggregate: both must agree with the result files, or a table built
/// from one would contradict a page built from the other.
fn check_conditions(
    root: &RunsRoot,
    conditions: &BTreeMap<String, ConditionView>,
    results: &BTreeMap<String, crate::report::view::Results>,
    problems: &mut Vec<String>,
) {
    for (name, condition) in conditions {
        let condition = &condition.file;
        let path = root.condition_file(name);
        for (id, summary) in &condition.questions {
            if let Some(result) = results.get(id).and_then(|r| r.get(name))
                && let Some(fields) = disagreement(summary, &result.summary, "result.json has")
            {
                problems.push(format!(
                    "{}: question '{id}' disagrees with its result.json ({fields}): run \
                     `okn-benchmark rescore` on the runs root to recompute it",
                    path.display(),
                ));
            }
        }
        let fresh = crate::runs::records::aggregate(&condition.questions);
        if let Some(fields) = disagreement(&condition.aggregate, &fresh, "recomputed") {
            problems.push(format!(
                "{}: its aggregate disagrees with its questions ({fields}): run `okn-benchmark \
                 rescore` on the runs root",
                path.display(),
            ));
        }
    }
}

/// What a recorded `result.json` must hold to be reported: the format
/// this version writes, the question and condition of the folder it sits
/// in, attempts numbered once each, the scoring version each attempt's
/// score was judged by (issue 24, item 7), fractions in [0, 1] and
/// durations that are durations: each, taken as it came, was misreported.
/// (A member no format has is refused as it is read: the record types
/// deny unknown fields.)
///
/// Errors: what is wrong, worded for the user.
fn check_result(
    result: &QuestionResult,
    question: &str,
    condition: &str,
) -> std::result::Result<(), String> {
    if !RUNS_FORMATS_READ.contains(&result.format) {
        return Err(format!(
            "format {} is not one this version reads ({}): use the okn-benchmark \
             that recorded it",
            result.format,
            formats_read()
        ));
    }
    if result.question != question || result.condition != condition {
        return Err(format!(
            "records question '{}' under condition '{}', but sits in the folder of '{question}' \
             under '{condition}': was it copied from another folder?",
            result.question, result.condition
        ));
    }
    let mut seen = BTreeSet::new();
    for a in &result.attempts {
        if !seen.insert(a.attempt) {
            return Err(format!("attempt {} is recorded twice", a.attempt));
        }
        // The version it claims is the one its scores were judged by
        // (issue 24, item 7): `rescore` writes both.
        if let Some(score) = a.score.as_ref()
            && score.scoring_version != result.scoring_version
        {
            return Err(format!(
                "scoring_version is '{}', but attempt {} was scored under '{}' (its \
                 score.scoring_version): the record was edited; restore it from version \
                 control, or re-judge the root (okn-benchmark rescore), which writes both",
                crate::text::printable(&result.scoring_version),
                a.attempt,
                crate::text::printable(&score.scoring_version)
            ));
        }
        let fractions = [("f1", Some(a.f1))]
            .into_iter()
            .chain(a.score.iter().flat_map(|s| {
                [
                    ("f1", Some(s.f1)),
                    ("strict_f1", Some(s.strict_f1)),
                    ("row_precision", Some(s.row_precision)),
                    ("row_recall", Some(s.row_recall)),
                ]
            }));
        for (name, value) in fractions {
            if let Some(v) = value
                && !(0.0..=1.0).contains(&v)
            {
                return Err(format!(
                    "attempt {}: {name} is {v}, not a fraction between 0 and 1",
                    a.attempt
                ));
            }
        }
        for (name, v) in [("wall_s", a.wall_s), ("server_s", a.server_s)] {
            if !v.is_finite() || v < 0.0 {
                return Err(format!(
                    "attempt {}: {name} is {v}, not a duration in seconds",
                    a.attempt
                ));
            }
        }
    }
    let fresh = crate::runs::records::summarize(&result.attempts, result.ordered_key);
    if let Some(fields) = disagreement(&result.summary, &fresh, "recomputed") {
        return Err(format!(
            "its summary disagrees with its attempts ({fields}): run `okn-benchmark rescore` \
             on the runs root to recompute it from the attempts"
        ));
    }
    Ok(())
}

/// The fields of `recorded` whose values differ from `other` (both as
/// JSON, as they are written), each as `NAME recorded R, OTHER_IS O`
/// (`recomputed`, or `result.json has` for the copy a condition file
/// repeats), joined by `; `; `None` when they agree. Every field counts: a summary
/// or aggregate is what the tables and figures print, so one edited rate
/// would be published (the red-team pass of issue 12 set a condition's
/// `exact_rate` to 0.25 under an interval of 1.00–1.00).
fn disagreement<T: serde::Serialize + PartialEq>(
    recorded: &T,
    other: &T,
    other_is: &str,
) -> Option<String> {
    // Equal values write equal JSON.
    if recorded == other {
        return None;
    }
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) =
        (serde_json::to_value(recorded), serde_json::to_value(other))
    else {
        return None;
    };
    let fields: Vec<String> = a
        .iter()
        .filter(|(k, v)| b.get(*k) != Some(*v))
        .map(|(k, v)| {
            let f = b
                .get(k)
                .map_or_else(|| "none".to_string(), |f| f.to_string());
            format!("{k} recorded {v}, {other_is} {f}")
        })
        .collect();
    (!fields.is_empty()).then(|| fields.join("; "))
}

/// The question text of a result: the first paragraph of its first
/// attempt's `prompt.txt` (the prompt opens with the record's summary,
/// `README.md`, "Episodes: run, report, rescore, freeze"); `Ok(None)` when
/// it recorded none.
///
/// Errors: a `prompt.txt` that is there and cannot be read (a link, a
/// named pipe, permission denied, bytes that are not UTF-8): damage, never
/// "no prompt recorded" (issue 24, item 23).
pub fn question_text(root: &RunsRoot, result: &QuestionResult) -> Result<Option<String>> {
    let path = root
        .attempt_dir(&result.question, &result.condition, 1)
        .join(PROMPT_FILE);
    let Some(bytes) = read_recorded(&path).map_err(damaged)? else {
        return Ok(None);
    };
    let prompt =
        String::from_utf8(bytes).map_err(|_| damaged(Error::file(&path, "not valid UTF-8")))?;
    Ok(prompt.split("\n\n").next().map(|s| s.trim().to_string()))
}

/// The question text of the first of `by_condition` that recorded one
/// ([`question_text`]).
///
/// Errors: the first `prompt.txt` met that cannot be read.
fn question_texts(
    root: &RunsRoot,
    by_condition: &crate::report::view::Results,
) -> Result<Option<String>> {
    for result in by_condition.values() {
        if let Some(text) = question_text(root, result)? {
            return Ok(Some(text));
        }
    }
    Ok(None)
}

/// What to do about a recorded file that cannot be read.
const RESTORE: &str = "restore it from version control, or record the episode again \
                       (`okn-benchmark run ... --force`)";

/// `e`, an error of a recorded file that cannot be used, with what to do
/// ([`RESTORE`]).
fn damaged(e: Error) -> Error {
    Error::Other(format!("{e}; {RESTORE}"))
}

/// The bytes of `listing`'s file `name` ([`Listing::read`]), an error
/// saying what to do.
fn read_listed(listing: &Listing, name: &str) -> Result<Option<Vec<u8>>> {
    listing.read(name).map_err(damaged)
}

/// One listing of the attempt folder `dir` of `a`, once the answer its
/// record says was submitted is known to be there: a page that said
/// "nothing was submitted" beside "Exact" would contradict itself.
/// Missing means nothing is there: a link or a named pipe in its place is
/// refused as what it is when it is read.
///
/// Errors: [`LOST_ANSWER`], naming `answer.csv`.
fn listed_attempt(dir: &Path, a: &AttemptResult) -> Result<Listing> {
    let listing = Listing::of(dir);
    if a.submitted && !listing.may_hold(ANSWER_FILE) {
        return Err(Error::file(dir.join(ANSWER_FILE), LOST_ANSWER));
    }
    Ok(listing)
}

/// Reads what the site shows of question `id` of `view` (a root loaded by
/// [`root`]): its ground truth and every attempt folder its results name.
///
/// With `check` (a root loaded with [`Records::Deferred`]), the files are
/// checked as they are read, as `check_records` checks them when a root
/// is loaded, and what breaks a rule is in [`QuestionDetail::problems`]
/// (the detail is then not to be published): each file is read once for
/// the check and the pages.
///
/// Errors: an attempt folder `result.json` names that is missing; a
/// submitted answer whose `answer.csv` is missing; a `calls.json` that does
/// not parse (a page would otherwise say no tool was called). Each names
/// the file and says what to do.
pub fn question(view: &RootView, id: &str, check: bool) -> Result<QuestionDetail> {
    let root = RunsRoot::new(&view.path);
    let qdir = root.question_dir(id);
    let listing = Listing::of(&qdir);
    let mut checking = check.then(|| QuestionCheck::new(&root, &view.conditions, id));
    let mut conditions = BTreeMap::new();
    let results = question_results(view, id)?.into_owned();
    for (name, result) in &results {
        let mut attempts = Vec::with_capacity(result.attempts.len());
        if let Some(checking) = checking.as_mut() {
            checking.result(name, result);
        }
        for a in &result.attempts {
            let read = match checking.as_mut() {
                Some(checking) => match checking.attempt(name, result, a) {
                    Some(read) => Some(read),
                    // Named in the problems: the pages are not made.
                    None => continue,
                },
                None => None,
            };
            attempts.push(attempt(&root, result, a, read)?);
        }
        conditions.insert(
            name.clone(),
            ConditionAttempts {
                result_file: root.condition_dir(id, name).join(RESULT_FILE).is_file(),
                attempts,
            },
        );
    }
    let (truth, problems) = match checking {
        Some(checking) => (checking.truth, checking.problems),
        None => (None, Vec::new()),
    };
    // The ground truth as checked, else as it reads.
    let (ground_truth, answer_key) = match truth {
        Some(truth) => (Some(truth.table), Some(truth.meta.answer_key)),
        None => (
            read_listed(&listing, GROUND_TRUTH_CSV)?.and_then(|b| Table::from_csv(&b).ok()),
            read_listed(&listing, GROUND_TRUTH_JSON)?
                .and_then(|b| serde_json::from_slice::<crate::reference::GroundTruthMeta>(&b).ok())
                .map(|meta| meta.answer_key),
        ),
    };
    Ok(QuestionDetail {
        id: id.to_string(),
        ground_truth,
        answer_key,
        files: listing.files(&[GROUND_TRUTH_CSV, GROUND_TRUTH_JSON]),
        conditions,
        results,
        problems,
    })
}

/// Reads one attempt folder; `read` holds its files when
/// [`QuestionCheck::attempt`] has read them.
fn attempt(
    root: &RunsRoot,
    result: &QuestionResult,
    a: &crate::runs::records::AttemptResult,
    read: Option<Read>,
) -> Result<AttemptView> {
    let dir = root.attempt_dir(&result.question, &result.condition, a.attempt);
    // The files judging reads, read as it reads them: the host report is
    // the one its host's parser derives from the recorded output (and the
    // episode recovered from agent.json, where the record says it was
    // judged from one), so the page shows what the verdict rests on
    // (issue 25, section 5).
    let Read { mut files, listing } = match read {
        Some(read) => read,
        None => {
            // What result.json records must be there.
            if !dir.is_dir() {
                return Err(Error::file(&dir, LOST_ATTEMPT));
            }
            let listing = listed_attempt(&dir, a)?;
            let mut files = AttemptFiles::read_listed(&listing, a.attempt)?;
            files.recover(Some(a))?;
            Read { files, listing }
        }
    };
    let prompt = files.prompt.take();
    let answer = files
        .answer
        .as_deref()
        .map(|bytes| Table::from_csv(bytes).map_err(|e| e.to_string()));
    // agent.json is the agent host's own output, kept as it came: one
    // that does not parse is said so, not silently left out.
    let final_message = listing
        .is_file(AGENT_FILE)
        .then(|| final_message(&files.agent, &files.output.0))
        .flatten();
    let prompt = prompt.map(|b| match String::from_utf8(b) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    });
    let host = HostView {
        wall_s: files.episode.as_ref().map(|e| e.wall_s),
        measured_by: files.episode.as_ref().map(|e| e.source.clone()),
        report: files.host,
    };
    Ok(AttemptView {
        verdict: a.verdict(),
        result: a.clone(),
        files: listing.files(&crate::layout::ATTEMPT_FILES),
        dir,
        answer,
        calls: files.calls,
        final_message,
        prompt,
        host,
    })
}

/// The agent host's final message from its `agent.json`: the `result` of
/// a JSON object (claude, the scripted agent); nothing for output that is
/// a stream of JSON lines (codex's events) or another object; a sentence
/// saying why for output that is empty or not JSON at all.
fn final_message(report: &AgentReport, bytes: &[u8]) -> Option<String> {
    // The report as the files were read (parsed once).
    match report {
        AgentReport::Absent | AgentReport::Empty => {
            Some("(agent.json is empty: the agent host reported nothing)".to_string())
        }
        AgentReport::Json(v) => v.get("result").and_then(|r| r.as_str()).map(str::to_string),
        // A host that prints one JSON event a line (codex exec --json).
        AgentReport::NotJson { .. }
            if String::from_utf8_lossy(bytes)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()) =>
        {
            None
        }
        AgentReport::NotJson { error, .. } => Some(format!(
            "(agent.json is not JSON, so no final message could be read from it: {error})"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 26, section 4: a root loaded for the site's build holds no
    /// attempts, yet its conditions' figures, its questions' summaries
    /// and redaction notes are what a full load gives, and each
    /// question's results read again are the attempts a full load holds;
    /// a `result.json` that changed after the root was loaded is refused,
    /// not published.
    #[test]
    fn a_root_loaded_for_the_site_holds_no_attempts_and_reads_the_same_ones_again() {
        let demo = crate::testing::demo_root();
        let tmp = tempfile::tempdir().unwrap();
        let copy = tmp.path().join("runs");
        for entry in walkdir::WalkDir::new(&demo).into_iter().flatten() {
            let to = copy.join(entry.path().strip_prefix(&demo).unwrap());
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&to).unwrap();
            } else {
                std::fs::copy(entry.path(), &to).unwrap();
            }
        }
        let full = root_with(&copy, Records::Checked);
        let site = root_with(&copy, Records::Deferred);
        assert!(full.problems.is_empty(), "{:?}", full.problems);
        assert!(full.attempts_held && !site.attempts_held);
        assert_eq!(json(&site.conditions), json(&full.conditions));
        assert!(full.attempts() > 0);
        let mut compared = 0;
        for (id, question) in &full.questions {
            let held = &site.questions[id];
            assert!(held.results.values().all(|r| r.attempts.is_empty()));
            assert_eq!(held.redacted, question.redacted);
            assert_eq!(held.played, question.played);
            let again = question_results(&site, id).unwrap();
            assert_eq!(json(&*again), json(&question.results), "{id}");
            compared += again.values().map(|r| r.attempts.len()).sum::<usize>();
        }
        assert_eq!(compared, full.attempts() as usize);
        // One byte more in a result.json after the load.
        let (id, first) = site.questions.iter().next().unwrap();
        let name = first.results.keys().next().unwrap();
        let path = RunsRoot::new(&copy)
            .condition_dir(id, name)
            .join(RESULT_FILE);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.push(b'\n');
        std::fs::write(&path, bytes).unwrap();
        let e = question_results(&site, id).unwrap_err().to_string();
        assert!(
            e.contains("changed while") && e.contains(RESULT_FILE),
            "{e}"
        );
        assert!(super::question(&site, id, true).is_err());
        assert!(question_problems(&site, id)[0].contains("changed while"));
        // A full load holds its own: nothing is read again.
        assert!(matches!(
            question_results(&full, id).unwrap(),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    /// A part of a view as JSON, to compare two views' parts.
    fn json<T: serde::Serialize + ?Sized>(part: &T) -> serde_json::Value {
        serde_json::to_value(part).unwrap()
    }

    /// Issue 25: codex's `agent.json` is a stream of JSON events, valid
    /// output of its host: the attempt page said it was not JSON.
    #[test]
    fn a_final_message_is_read_only_where_the_host_states_one() {
        let message = |bytes: &[u8]| final_message(&AgentReport::of(Some(bytes)), bytes);
        assert_eq!(
            message(br#"{"type":"result","result":"done"}"#).as_deref(),
            Some("done")
        );
        assert_eq!(
            message(b"{\"type\":\"thread.started\"}\n{\"type\":\"turn.completed\"}\n"),
            None
        );
        assert!(message(b"  \n").unwrap().contains("is empty"));
        assert!(message(b"{ cut").unwrap().contains("is not JSON"));
    }
}
