//! `merge`: shard roots (`run --shard K/N`) joined into one runs root
//! (`docs/SCALING.md`, "Merging").
//!
//! Everything is read and checked before anything is written. Shards of
//! one condition must agree on its identity (`shards: N` included), on
//! every setting it was run with (the corpus commit and the scoring
//! contract above all; only the model a shard's first episode reported may
//! be missing from one), on the ground truth of every question (its
//! fingerprint and rows), and on the prompt each question was asked in
//! (its `prompt.txt`, under one KG hint). An attempt held by two inputs is an overlap
//! unless both folders hold the same bytes, which is how merging into a
//! root that already holds the merge is idempotent: the target, when it
//! exists, is read as one more input.
//!
//! Attempts are copied as recorded, `episode.json` last (its presence
//! marks a finished attempt); each question's `result.json` and each
//! condition file are written from the attempts' recorded judgments, so a
//! merged root is the root a serial run of the same episodes writes, apart
//! from the times measured and `shards: N`. Attempts no input holds are
//! named: `run --resume` on the merged root, with the run's flags and no
//! `--shard`, plays exactly those.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::frozen::refuse_frozen_at;
use super::identity::{Identity, KgHint};
use super::recorded::read_condition_named;
use super::records::{
    AttemptResult, ConditionFile, QuestionResult, RUNS_FORMAT, aggregate, summarize,
};
use crate::error::{Error, Result};
use crate::fsutil::{read_recorded, read_recorded_json, write_atomic, write_json};
use crate::layout::{EPISODE_FILE, GROUND_TRUTH_CSV, GROUND_TRUTH_JSON, RESULT_FILE, RunsRoot};
use crate::reference::GroundTruthMeta;

/// What one merged condition holds, and what it lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedCondition {
    /// The condition's name.
    pub name: String,
    /// Attempts in the merged root.
    pub attempts: usize,
    /// Attempts its selection calls for (questions × repeat): from the
    /// shards' records of the selection, or from the questions held when
    /// no input is a shard.
    pub expected: usize,
    /// `(question id, attempt)` no input holds, in play order.
    pub missing: Vec<(String, u32)>,
    /// Shard indexes (of `shards: N`) no input is, sorted.
    pub missing_shards: Vec<u32>,
}

/// What `merge` did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MergeOutcome {
    /// Per condition, by name.
    pub conditions: Vec<MergedCondition>,
    /// Attempt folders copied now.
    pub copied: usize,
    /// Attempt folders the target already held, byte for byte.
    pub kept: usize,
}

/// One input root, read.
struct Input {
    root: RunsRoot,
    conditions: Vec<ConditionFile>,
}

/// One attempt of the merge: where it comes from and what was judged.
struct Planned {
    from: PathBuf,
    result: AttemptResult,
}

/// One (question, condition) of the merge.
#[derive(Default)]
struct PlannedQuestion {
    tier: Option<String>,
    ordered_key: bool,
    scoring_version: String,
    /// The trajectory expectations the shards judged by (issue 27).
    expectations: Vec<crate::expectations::Expectation>,
    attempts: BTreeMap<u32, Planned>,
}

/// Everything read from the inputs, checked, ready to write.
#[derive(Default)]
struct Plan {
    /// Condition name → (its file as the first input recorded it, the path
    /// it came from).
    conditions: BTreeMap<String, (ConditionFile, PathBuf)>,
    /// Condition name → shard records seen (index → the file).
    shards: BTreeMap<String, BTreeMap<u32, PathBuf>>,
    /// Condition name → the selection the shards were cut from.
    selections: BTreeMap<String, Vec<String>>,
    /// (question id, condition name) → its attempts.
    questions: BTreeMap<(String, String), PlannedQuestion>,
    /// Question id → (its ground truth, the root it was read from).
    truths: BTreeMap<String, (GroundTruthMeta, PathBuf)>,
    /// (question id, KG hint) → the prompt its first attempt recorded, and
    /// that `prompt.txt`.
    prompts: BTreeMap<(String, KgHint), (String, PathBuf)>,
}

/// Joins `inputs` into `out`.
///
/// Errors (nothing is written): a frozen `out`; `out` that is an input,
/// inside a runs root (an input's, or any other), or a folder that is not a
/// runs root; an input that is not a runs root, is
/// given twice, or holds an unfinished condition (a `.lock`, or attempts
/// no condition file records); a condition file or `result.json` that
/// cannot be read; shards whose identity, settings, shard count or
/// selection differ, or whose ground truth of a question differs (each
/// naming both files and the field), or whose prompts of a question
/// differ (naming it); an attempt two inputs hold with
/// different contents (naming both folders). Then a file that cannot be
/// written. The root's README and summary CSVs are the caller's to write
/// (the render layer sits above this module).
pub fn merge(out: &Path, inputs: &[PathBuf]) -> Result<MergeOutcome> {
    refuse_frozen_at(out, "merge")?;
    let inputs = open_inputs(out, inputs)?;
    let mut plan = Plan::default();
    for input in &inputs {
        plan.add(input)?;
    }
    plan.write(out)
}

/// Removes from `out` the temporary files a killed `merge` or `rescore`
/// left there (`fsutil::remove_leftover_temporaries`), before anything
/// reads it, so this merge writes the bytes one never interrupted would
/// (issue 24, item 26). A frozen `out` is refused, untouched. Returns the
/// files removed.
///
/// Errors: a frozen `out`; a leftover that cannot be removed.
pub fn remove_leftovers(out: &Path, started: std::time::SystemTime) -> Result<Vec<PathBuf>> {
    refuse_frozen_at(out, "merge")?;
    if !out.is_dir() {
        return Ok(Vec::new());
    }
    crate::fsutil::remove_leftover_temporaries(out, started)
}

/// The inputs, checked and read, the target first when it already holds
/// a runs root.
fn open_inputs(out: &Path, given: &[PathBuf]) -> Result<Vec<Input>> {
    if given.is_empty() {
        return Err(Error::Usage(
            "merge needs at least one shard root: okn-benchmark merge --out ROOT SHARD...".into(),
        ));
    }
    // A root inside another would be read as part of it (an input
    // shard's folders, an attempt's cwd/): issue 24, item 8.
    let absolute = crate::fsutil::normalize(&crate::fsutil::absolute(out));
    if let Some(outer) = absolute
        .ancestors()
        .skip(1)
        .find(|a| RunsRoot::is_runs_root(a))
    {
        return Err(Error::Usage(format!(
            "--out {} is inside the runs root {}: merge writes a runs root of its own, and one \
             inside another (an input shard, an attempt's cwd/) would be read as part of it; \
             merge into a folder outside every runs root",
            out.display(),
            outer.display()
        )));
    }
    let mut paths: Vec<PathBuf> = Vec::new();
    if out.exists() {
        // An empty folder, or what a merge killed before it wrote
        // conditions/ left (question folders only): this merge writes them.
        let partial = std::fs::read_dir(out).is_ok_and(|entries| {
            entries.flatten().all(|e| {
                e.file_type().is_ok_and(|t| t.is_dir())
                    && e.file_name()
                        .to_str()
                        .is_some_and(|n| n.ends_with(crate::layout::QUESTION_SUFFIX))
            })
        });
        if RunsRoot::is_runs_root(out) {
            paths.push(out.to_path_buf());
        } else if !partial {
            return Err(Error::file(
                out,
                "exists and is not a runs root (it has no conditions/ folder): merge writes a \
                 runs root; name a new folder or an earlier merge's root",
            ));
        }
    }
    for (i, path) in given.iter().enumerate() {
        if crate::fsutil::same_place(path, out) {
            return Err(Error::Usage(format!(
                "{} is both --out and a shard: merge into a new folder (an existing --out is \
                 read as an input already)",
                path.display()
            )));
        }
        if given[..i]
            .iter()
            .any(|p| crate::fsutil::same_place(p, path))
        {
            return Err(Error::Usage(format!("{} is given twice", path.display())));
        }
        if !RunsRoot::is_runs_root(path) {
            return Err(Error::file(
                path,
                "not a runs root (it has no conditions/ folder): give the --out folders of the \
                 shard runs",
            ));
        }
        paths.push(path.clone());
    }
    paths.into_iter().map(|p| read_input(&p)).collect()
}

/// One input's condition files, refusing a root with an unfinished
/// condition.
fn read_input(path: &Path) -> Result<Input> {
    let root = RunsRoot::new(path);
    if let Some(name) = root.locked_conditions().first() {
        return Err(Error::file(
            root.lock_file(name),
            format!(
                "a run of {name} is recording into {} or was killed: let it finish, or resume it \
                 (the same run command with --resume), then merge",
                path.display()
            ),
        ));
    }
    let names = root.condition_names();
    let mut conditions = Vec::new();
    for name in &names {
        conditions.push(read_condition_named(&root, name)?);
    }
    let listed: BTreeSet<(String, String)> = conditions
        .iter()
        .flat_map(|c| c.questions.keys().map(|id| (id.clone(), c.name.clone())))
        .collect();
    // A question excluded by hand (`meta.excluded`) may keep its folders:
    // they are no unfinished run's, and are not merged (issue 24, item 14).
    let excluded =
        |id: &str, name: &str| conditions.iter().any(|c| c.name == name && c.excludes(id));
    if let Some((id, name)) = root
        .condition_folders()
        .into_iter()
        .find(|(id, name)| !listed.contains(&(id.clone(), name.clone())) && !excluded(id, name))
    {
        return Err(Error::file(
            root.condition_dir(&id, &name),
            format!(
                "holds attempts that conditions/{name}.json does not list (that run did not \
                 finish): resume it (the same run command with --resume), then merge"
            ),
        ));
    }
    Ok(Input { root, conditions })
}

/// The first member of two JSON objects that differs, as `(member,
/// first value, second value)`.
fn first_member_difference(
    a: &serde_json::Value,
    b: &serde_json::Value,
    skip: &[&str],
) -> Option<(String, String, String)> {
    let show =
        |v: Option<&serde_json::Value>| v.map_or_else(|| "(absent)".to_string(), |v| v.to_string());
    crate::fsutil::member_differences(a, b)
        .into_iter()
        .find(|(k, _, _)| !skip.contains(k))
        .map(|(k, x, y)| (k.to_string(), show(x), show(y)))
}

/// How two selections differ, as (first's, second's): their sizes, or the
/// first position where they part.
fn selection_difference(a: &[String], b: &[String]) -> (String, String) {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => (
            format!("'{}' at position {}", a[i], i + 1),
            format!("'{}' at position {}", b[i], i + 1),
        ),
        None => (
            format!("{} questions", a.len()),
            format!("{} questions", b.len()),
        ),
    }
}

/// The refusal for two inputs that disagree on `field`.
fn disagree(first: &Path, second: &Path, field: &str, values: (String, String)) -> Error {
    Error::file(
        second,
        format!(
            "{field} is {}, but {} has {}: these are not shards of one sweep, so nothing was \
             merged",
            values.1,
            first.display(),
            values.0
        ),
    )
}

impl Plan {
    /// Adds one input, checking it against what is planned.
    fn add(&mut self, input: &Input) -> Result<()> {
        for condition in &input.conditions {
            let path = input.root.condition_file(&condition.name);
            self.add_condition(condition, &path)?;
            for id in condition.questions.keys() {
                self.add_truth(&input.root, id)?;
                self.add_question(&input.root, condition, id)?;
            }
        }
        Ok(())
    }

    /// Checks a condition file against the first one of its name.
    fn add_condition(&mut self, condition: &ConditionFile, path: &Path) -> Result<()> {
        let name = &condition.name;
        if let Some(shard) = &condition.shard {
            if shard.index == 0 || shard.index > shard.count {
                return Err(Error::file(
                    path,
                    format!(
                        "shard.index is {}, outside 1..={}: the file was edited by hand",
                        shard.index, shard.count
                    ),
                ));
            }
            if let Some(other) = self.shards.get(name).and_then(|s| s.get(&shard.index)) {
                return Err(Error::file(
                    path,
                    format!(
                        "shard.index {} of {name} is claimed by {} too: give each shard once",
                        shard.index,
                        other.display()
                    ),
                ));
            }
            if condition.identity.shards != Some(shard.count) {
                return Err(Error::file(
                    path,
                    format!(
                        "shard.count is {}, but identity.shards is {}: the file was edited by \
                         hand",
                        shard.count,
                        condition
                            .identity
                            .shards
                            .map_or_else(|| "absent".into(), |n| n.to_string())
                    ),
                ));
            }
            match self.selections.get(name) {
                Some(first) if *first != shard.questions => {
                    let first_path = &self.conditions[name].1;
                    return Err(disagree(
                        first_path,
                        path,
                        "shard.questions (the selection the slices were cut from)",
                        selection_difference(first, &shard.questions),
                    ));
                }
                _ => {
                    self.selections
                        .insert(name.clone(), shard.questions.clone());
                }
            }
            self.shards
                .entry(name.clone())
                .or_default()
                .insert(shard.index, path.to_path_buf());
        }
        let Some((first, first_path)) = self.conditions.get(name) else {
            self.conditions
                .insert(name.clone(), (condition.clone(), path.to_path_buf()));
            return Ok(());
        };
        if let Some((field, old, new)) = condition.identity.first_difference(&first.identity) {
            return Err(disagree(
                first_path,
                path,
                &format!("identity.{field}"),
                (old, new),
            ));
        }
        let settings = |c: &ConditionFile| serde_json::to_value(&c.settings).unwrap_or_default();
        if let Some((field, old, new)) =
            first_member_difference(&settings(first), &settings(condition), &["model_resolved"])
        {
            return Err(disagree(
                first_path,
                path,
                &format!("settings.{field}"),
                (old, new),
            ));
        }
        let meta = |c: &ConditionFile| serde_json::to_value(&c.meta).unwrap_or_default();
        if let Some((field, old, new)) =
            first_member_difference(&meta(first), &meta(condition), &[])
        {
            return Err(disagree(
                first_path,
                path,
                &format!("meta.{field}"),
                (old, new),
            ));
        }
        // The model the first episode reported, in play order, is the
        // serial run's: filled in when the first file lacks it.
        if first.settings.model_resolved.is_none() && condition.settings.model_resolved.is_some() {
            let model = condition.settings.model_resolved.clone();
            if let Some((first, _)) = self.conditions.get_mut(name) {
                first.settings.model_resolved = model;
            }
        }
        Ok(())
    }

    /// Checks a question's recorded ground truth against the one planned.
    fn add_truth(&mut self, root: &RunsRoot, id: &str) -> Result<()> {
        let path = root.question_dir(id).join(GROUND_TRUTH_JSON);
        // Its rows checked against the digest the JSON recorded: a CSV
        // edited since is refused by name.
        let meta: GroundTruthMeta =
            super::recorded::read_ground_truth(&root.question_dir(id))?.meta;
        match self.truths.get(id) {
            None => {
                self.truths
                    .insert(id.to_string(), (meta, root.root.clone()));
            }
            Some((first, first_root)) => {
                let first_path = RunsRoot::new(first_root)
                    .question_dir(id)
                    .join(GROUND_TRUTH_JSON);
                for (field, a, b) in [
                    ("fingerprint", &first.fingerprint, &meta.fingerprint),
                    ("csv_sha256", &first.csv_sha256, &meta.csv_sha256),
                ] {
                    if a != b {
                        return Err(disagree(
                            &first_path,
                            &path,
                            &format!("{field} (the ground truth of {id})"),
                            (a.clone(), b.clone()),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Plans a question's recorded attempts, refusing overlaps.
    fn add_question(&mut self, root: &RunsRoot, condition: &ConditionFile, id: &str) -> Result<()> {
        let name = &condition.name;
        let result_path = root.condition_dir(id, name).join(RESULT_FILE);
        let result: QuestionResult = read_recorded_json(&result_path)?.ok_or_else(|| {
            Error::file(
                &result_path,
                "missing, though its condition file lists the question: restore it from the \
                 shard's copy, or leave that root out of the merge; nothing was merged",
            )
        })?;
        let recorded: BTreeSet<u32> = result.attempts.iter().map(|a| a.attempt).collect();
        // The rule `report` and `build` keep (issue 24, items 5 and 7).
        let plan = super::recorded::AttemptPlan::of(condition, id).map_err(|why| {
            Error::file(
                root.condition_file(name),
                format!("{why}; nothing was merged"),
            )
        })?;
        let strays = super::recorded::check_attempt_folders(
            &root.condition_dir(id, name),
            &plan,
            Some(&recorded),
        );
        if let Some(stray) = strays.into_iter().next() {
            return Err(Error::Other(format!("{stray}; nothing was merged")));
        }
        if let Some(a) = result.attempts.iter().find(|a| {
            !root
                .attempt_dir(id, name, a.attempt)
                .join(EPISODE_FILE)
                .is_file()
        }) {
            return Err(Error::file(
                root.attempt_dir(id, name, a.attempt),
                format!(
                    "listed in {} and missing (or without its episode.json): restore it from \
                     the shard's copy, or leave that root out of the merge; nothing was merged",
                    result_path.display()
                ),
            ));
        }
        self.add_prompts(root, condition, id, &result)?;
        let question = self
            .questions
            .entry((id.to_string(), name.clone()))
            .or_insert_with(|| PlannedQuestion {
                tier: result.tier.clone(),
                ordered_key: result.ordered_key,
                scoring_version: result.scoring_version.clone(),
                expectations: result.expectations.clone(),
                attempts: BTreeMap::new(),
            });
        if question.expectations != result.expectations {
            return Err(Error::file(
                &result_path,
                format!(
                    "its trajectory expectations of {id} differ from an earlier shard's:                      re-score both roots against one corpus (okn-benchmark rescore ROOT), then                      merge"
                ),
            ));
        }
        if question.scoring_version != result.scoring_version {
            return Err(Error::file(
                &result_path,
                format!(
                    "scoring_version is {}, but an earlier shard's result.json of {id} has {}: \
                     re-score both roots with one okn-benchmark (okn-benchmark rescore ROOT), \
                     then merge",
                    result.scoring_version, question.scoring_version
                ),
            ));
        }
        for attempt in result.attempts {
            let from = root.attempt_dir(id, name, attempt.attempt);
            if let Some(planned) = question.attempts.get(&attempt.attempt) {
                if same_tree(&planned.from, &from)? {
                    continue;
                }
                return Err(Error::file(
                    &from,
                    format!(
                        "{} holds attempt {} of {id} under {name} too, with other contents: \
                         two shards played the same attempt (were they given the same K/N?); \
                         remove one root from the merge",
                        planned.from.display(),
                        attempt.attempt
                    ),
                ));
            }
            question.attempts.insert(
                attempt.attempt,
                Planned {
                    from,
                    result: attempt,
                },
            );
        }
        Ok(())
    }

    /// Checks the prompts question `id`'s attempts recorded under
    /// `condition` against the first one planned for the question under
    /// the same KG hint (issue 24, item 12): shards asked another question
    /// (a record edited between them) are not one sweep.
    ///
    /// Errors: a prompt that differs, naming the question and both files;
    /// a `prompt.txt` that cannot be read.
    fn add_prompts(
        &mut self,
        root: &RunsRoot,
        condition: &ConditionFile,
        id: &str,
        result: &QuestionResult,
    ) -> Result<()> {
        let name = &condition.name;
        let numbers = result.attempts.iter().map(|a| a.attempt);
        for (n, prompt) in super::prompt::recorded(root, id, name, numbers)? {
            let path = root
                .attempt_dir(id, name, n)
                .join(crate::layout::PROMPT_FILE);
            let key = (id.to_string(), condition.identity.kg_hint);
            match self.prompts.get(&key) {
                None => {
                    self.prompts.insert(key, (prompt, path));
                }
                Some((first, first_path)) if *first != prompt => {
                    let (was, is) = super::prompt::excerpts(first, &prompt);
                    return Err(Error::file(
                        &path,
                        format!(
                            "the prompt of question {id} differs from {}'s (\"{was}\" there, \
                             \"{is}\" here): the record was edited between these runs, so \
                             they are not shards of one sweep, and nothing was merged; play \
                             them again from one corpus",
                            first_path.display()
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Writes the merged root.
    fn write(self, out: &Path) -> Result<MergeOutcome> {
        let target = RunsRoot::new(out);
        let mut outcome = MergeOutcome::default();
        for (id, (_, from_root)) in &self.truths {
            let from = RunsRoot::new(from_root).question_dir(id);
            for file in [GROUND_TRUTH_CSV, GROUND_TRUTH_JSON] {
                copy_file(&from.join(file), &target.question_dir(id).join(file))?;
            }
        }
        // The attempt folders to copy, copied in parallel (each is its own
        // folder; its episode.json is written last).
        let copies: Vec<(&Path, PathBuf)> = self
            .questions
            .iter()
            .flat_map(|((id, name), q)| {
                let target = &target;
                q.attempts
                    .iter()
                    .map(move |(n, p)| (p.from.as_path(), target.attempt_dir(id, name, *n)))
            })
            .filter(|(from, to)| !crate::fsutil::same_place(from, to))
            .collect();
        outcome.copied = copies.len();
        outcome.kept = self
            .questions
            .values()
            .map(|q| q.attempts.len())
            .sum::<usize>()
            - copies.len();
        {
            use rayon::prelude::*;
            copies
                .par_iter()
                .map(|(from, to)| copy_attempt(from, to))
                .collect::<Result<Vec<()>>>()?;
        }
        let mut summaries: BTreeMap<String, BTreeMap<String, super::records::QuestionSummary>> =
            BTreeMap::new();
        let mut models: BTreeMap<String, BTreeMap<(usize, String, u32), String>> = BTreeMap::new();
        for ((id, name), question) in &self.questions {
            let mut attempts = Vec::new();
            for (n, planned) in &question.attempts {
                if let Some(model) = &planned.result.model_resolved {
                    let position = self.position(name, id);
                    models
                        .entry(name.clone())
                        .or_default()
                        .insert((position, id.clone(), *n), model.clone());
                }
                attempts.push(planned.result.clone());
            }
            let summary = summarize(&attempts, question.ordered_key);
            let result = QuestionResult {
                format: RUNS_FORMAT,
                question: id.clone(),
                condition: name.clone(),
                tier: question.tier.clone(),
                ordered_key: question.ordered_key,
                scoring_version: question.scoring_version.clone(),
                expectations: question.expectations.clone(),
                attempts,
                summary: summary.clone(),
            };
            write_json(&target.condition_dir(id, name).join(RESULT_FILE), &result)?;
            summaries
                .entry(name.clone())
                .or_default()
                .insert(id.clone(), summary);
        }
        for (name, (first, _)) in &self.conditions {
            let questions = summaries.remove(name).unwrap_or_default();
            let mut condition = first.clone();
            condition.settings.model_resolved = models
                .get(name)
                .and_then(|m| m.values().next().cloned())
                .or(condition.settings.model_resolved);
            condition.aggregate = aggregate(&questions);
            condition.questions = questions;
            condition.shard = None;
            write_json(&target.condition_file(name), &condition)?;
            outcome.conditions.push(self.accounting(name, &condition));
        }
        Ok(outcome)
    }

    /// Where question `id` stands in condition `name`'s selection (its
    /// place in play order; questions of no recorded selection after, in
    /// id order).
    fn position(&self, name: &str, id: &str) -> usize {
        self.selections
            .get(name)
            .and_then(|s| s.iter().position(|q| q == id))
            .unwrap_or(usize::MAX)
    }

    /// What condition `name` holds and lacks.
    fn accounting(&self, name: &str, condition: &ConditionFile) -> MergedCondition {
        let identity: &Identity = &condition.identity;
        let repeat = identity.repeat;
        let held: Vec<String> = condition.questions.keys().cloned().collect();
        let selection = self.selections.get(name).unwrap_or(&held);
        let mut missing = Vec::new();
        for id in selection {
            let attempts = self.questions.get(&(id.clone(), name.to_string()));
            for n in 1..=repeat {
                if !attempts.is_some_and(|q| q.attempts.contains_key(&n)) {
                    missing.push((id.clone(), n));
                }
            }
        }
        // The shards that would have played the missing attempts and are
        // not among the inputs (bounded by the attempts, not by N).
        let seen = self.shards.get(name);
        let missing_shards: Vec<u32> = match (identity.shards, seen) {
            (Some(count), Some(seen)) => {
                let shards: BTreeSet<u32> = missing
                    .iter()
                    .filter_map(|(id, n)| {
                        let position = selection.iter().position(|q| q == id)?;
                        let pair = position as u64 * u64::from(repeat) + u64::from(n - 1);
                        Some((pair % u64::from(count)) as u32 + 1)
                    })
                    .filter(|k| !seen.contains_key(k))
                    .collect();
                shards.into_iter().collect()
            }
            _ => Vec::new(),
        };
        let expected = selection.len() * repeat as usize;
        MergedCondition {
            name: name.to_string(),
            attempts: expected - missing.len(),
            expected,
            missing,
            missing_shards,
        }
    }
}

/// Every folder and every file under `dir` (`dir` itself left out), by
/// their paths relative to it, sorted: one walk.
///
/// Errors: a folder that cannot be read; a symbolic link or an entry that
/// is neither a folder nor a regular file (a named pipe), which a merge
/// would otherwise drop without a word (issue 24, items 21 and 22).
fn tree(dir: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let (mut folders, mut files) = (Vec::new(), Vec::new());
    for entry in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        let entry = entry.map_err(|e| Error::file(dir, format!("cannot read: {e}")))?;
        let Ok(relative) = entry.path().strip_prefix(dir) else {
            continue;
        };
        let kind = entry.file_type();
        if kind.is_dir() {
            folders.push(relative.to_path_buf());
        } else if kind.is_file() && crate::fsutil::is_our_temporary(entry.file_name()) {
            // A killed writer's temporary file (issue 24, item 26) is no
            // part of an attempt: never compared, never copied.
        } else if kind.is_file() {
            files.push(relative.to_path_buf());
        } else {
            let why = if kind.is_symlink() {
                crate::fsutil::LINK_REFUSED
            } else {
                crate::fsutil::NOT_REGULAR
            };
            return Err(Error::file(
                entry.path(),
                format!("{why}; put the file itself there, or remove it; nothing was merged"),
            ));
        }
    }
    Ok((folders, files))
}

/// The bytes of the recorded file at `path` ([`read_recorded`]).
///
/// Errors: one that is absent, a link, not a regular file, or unreadable.
fn recorded_bytes(path: &Path) -> Result<Vec<u8>> {
    read_recorded(path)?.ok_or_else(|| {
        Error::io(
            path,
            "read",
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )
    })
}

/// True when folders `a` and `b` hold the same files with the same bytes.
fn same_tree(a: &Path, b: &Path) -> Result<bool> {
    let files = tree(a)?.1;
    if files != tree(b)?.1 {
        return Ok(false);
    }
    for file in files {
        let bytes = recorded_bytes(&a.join(&file))?;
        if !crate::fsutil::same_contents(&b.join(&file), &bytes) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Copies one file (atomically), unless `to` holds its bytes already.
fn copy_file(from: &Path, to: &Path) -> Result<()> {
    if crate::fsutil::same_place(from, to) {
        return Ok(());
    }
    let bytes = recorded_bytes(from)?;
    if !crate::fsutil::same_contents(to, &bytes) {
        write_atomic(to, &bytes)?;
    }
    Ok(())
}

/// Copies an attempt folder, its folders first (the empty one the agent
/// was started in, its cwd, included) and `episode.json` last: a merge
/// killed part-way leaves no attempt that reads as finished and is not (a
/// file cut short sits in a folder without one, which every reader takes
/// for an attempt still to play).
fn copy_attempt(from: &Path, to: &Path) -> Result<()> {
    let (folders, files) = tree(from)?;
    for folder in std::iter::once(PathBuf::new()).chain(folders) {
        let dir = to.join(folder);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "create", e))?;
    }
    let (last, rest): (Vec<&PathBuf>, Vec<&PathBuf>) =
        files.iter().partition(|f| f.as_os_str() == EPISODE_FILE);
    for file in rest.into_iter().chain(last) {
        let dest = to.join(file);
        let bytes = recorded_bytes(&from.join(file))?;
        // Atomic: a merge killed mid-copy leaves no half file, above all
        // no half episode.json (its presence marks a finished attempt).
        crate::fsutil::write_atomic(&dest, &bytes)?;
    }
    Ok(())
}
