//! When the ground truth a runs root was judged by was last verified
//! against its endpoint: what `report` and `rescore` say of it on the
//! terminal (`docs/FORMAT.md`, "Ground truth (inside a corpus)").
//!
//! A root holds a copy of each question's ground truth
//! (`ID_results/ground_truth.csv|json`); `reference --verify` logs its
//! checks beside the corpus's ground truth
//! ([`crate::reference::verify::VERIFIED_FILE`]). A question counts as
//! verified when the log has a check of the very rows the root holds (the
//! same CSV digest). The log is the one beside the ground truth the
//! condition read: its `--ground-truth DIR` as recorded (`settings.
//! ground_truth`), else the corpus's own `CORPUS/ground-truth`, its
//! `--corpus` found as `rescore` finds it (a folder from here). The date
//! is said on the terminal only: it is no input of any generated file.

use std::collections::BTreeMap;
use std::path::Path;

use crate::fsutil::read_recorded_json;
use crate::layout::{GROUND_TRUTH_JSON, RunsRoot};
use crate::reference::GroundTruthMeta;
use crate::reference::verify::{VerifiedFile, VerifiedRecord, read_log};

/// What the verification log says of one corpus's questions in a root.
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusCheck {
    /// The corpus as recorded (`--corpus`).
    pub corpus: String,
    /// `--ground-truth DIR` as recorded, when the condition read its
    /// ground truth from there.
    pub ground_truth_given: Option<String>,
    /// Its ground-truth folder, or why it cannot be known from here.
    pub ground_truth: std::result::Result<String, String>,
    /// The root's questions from this corpus.
    pub questions: usize,
    /// Of those, the ones whose recorded rows were verified, with their
    /// last check.
    pub verified: BTreeMap<String, VerifiedRecord>,
}

impl CorpusCheck {
    /// The terminal line: `ground truth (DIR): last verified DATE against
    /// URL (Engine/Version): N of M questions, all matched`, or `never
    /// verified ...`, or why it cannot be said.
    pub fn line(&self) -> String {
        let dir = match &self.ground_truth {
            Ok(dir) => dir,
            Err(why) => {
                return match &self.ground_truth_given {
                    Some(dir) => format!("ground truth ({dir}): verification not known: {why}"),
                    None => format!(
                        "ground truth of {}: verification not known: {why}",
                        self.corpus
                    ),
                };
            }
        };
        let total = self.questions;
        let Some(latest) = self
            .verified
            .values()
            .max_by(|a, b| a.verified_at.cmp(&b.verified_at))
        else {
            let given = self
                .ground_truth_given
                .as_ref()
                .map(|d| format!(" --ground-truth {}", crate::text::shell_quote(d)))
                .unwrap_or_default();
            return format!(
                "ground truth ({dir}): never verified against its endpoint \
                 ('okn-benchmark reference --corpus {}{given} --verify' checks it)",
                self.corpus
            );
        };
        let oldest = self
            .verified
            .values()
            .map(|v| v.verified_at.as_str())
            .min()
            .unwrap_or_default();
        let engine = match (&latest.endpoint.engine, &latest.endpoint.engine_version) {
            (Some(e), Some(v)) => format!(" ({e}/{v})"),
            (Some(e), None) => format!(" ({e})"),
            _ => String::new(),
        };
        let mut text = format!(
            "ground truth ({dir}): last verified {} against {}{engine}: {} of {total} question{}",
            latest.verified_at,
            latest.endpoint.location,
            self.verified.len(),
            crate::format::plural(total)
        );
        if oldest != latest.verified_at {
            text.push_str(&format!(" (the oldest of these checks {oldest})"));
        }
        let differed: Vec<&str> = self
            .verified
            .iter()
            .filter(|(_, v)| !v.matched)
            .map(|(id, _)| id.as_str())
            .collect();
        if differed.is_empty() {
            text.push_str(", all matched");
        } else {
            text.push_str(&format!(
                ", {} differed ({}): the endpoint no longer answers the rows they were judged by",
                differed.len(),
                differed.join(", ")
            ));
        }
        let never = total - self.verified.len();
        if never > 0 {
            text.push_str(&format!("; {never} never verified"));
        }
        text
    }
}

/// The root's questions by the corpus and the `--ground-truth` folder
/// their condition recorded, sorted.
fn questions_by_corpus(root: &RunsRoot) -> BTreeMap<(String, Option<String>), Vec<String>> {
    let mut by_corpus: BTreeMap<(String, Option<String>), Vec<String>> = BTreeMap::new();
    for name in root.condition_names() {
        let Ok(condition) = super::recorded::read_condition_named(root, &name) else {
            continue;
        };
        let settings = condition.settings;
        let ids = by_corpus
            .entry((settings.corpus, settings.ground_truth))
            .or_default();
        ids.extend(condition.questions.into_keys());
    }
    for ids in by_corpus.values_mut() {
        ids.sort();
        ids.dedup();
    }
    by_corpus
}

/// What the verification logs say of the ground truth of `root`'s
/// questions, per corpus its conditions recorded (sorted). A condition
/// file that cannot be read is left out (`report` and `rescore` name it).
pub fn checks(root: &RunsRoot) -> Vec<CorpusCheck> {
    questions_by_corpus(root)
        .into_iter()
        .map(|((corpus, given), ids)| check(root, (corpus, given), &ids))
        .collect()
}

/// The ground-truth folder a condition read (`given`, its recorded
/// `--ground-truth DIR`, else `CORPUS/ground-truth` of its recorded
/// `--corpus`) and its verification log, or why they cannot be known from
/// here.
fn log_of(
    corpus: &str,
    given: Option<&str>,
) -> std::result::Result<(String, VerifiedFile), String> {
    let dir = match given {
        Some(dir) if Path::new(dir).is_dir() => Path::new(dir).to_path_buf(),
        Some(_) => {
            return Err(
                "the folder the ground truth was read from (--ground-truth) is not a folder \
                 from here"
                    .into(),
            );
        }
        None if Path::new(corpus).is_dir() => {
            Path::new(corpus).join(crate::reference::GROUND_TRUTH_DIR)
        }
        None => return Err("the corpus is not a folder from here".into()),
    };
    let log = read_log(&dir).map_err(|e| e.to_string())?;
    Ok((dir.display().to_string(), log))
}

fn check(
    root: &RunsRoot,
    (corpus, given): (String, Option<String>),
    ids: &[String],
) -> CorpusCheck {
    let mut verified = BTreeMap::new();
    let ground_truth = log_of(&corpus, given.as_deref()).map(|(dir, log)| {
        for id in ids {
            let recorded: Option<GroundTruthMeta> =
                read_recorded_json(&root.question_dir(id).join(GROUND_TRUTH_JSON))
                    .ok()
                    .flatten();
            if let (Some(recorded), Some(entry)) = (recorded, log.records.get(id))
                && entry.csv_sha256 == recorded.csv_sha256
            {
                verified.insert(id.clone(), entry.clone());
            }
        }
        dir
    });
    CorpusCheck {
        corpus,
        ground_truth_given: given,
        ground_truth,
        questions: ids.len(),
        verified,
    }
}

/// [`CorpusCheck::line`] of each of [`checks`].
pub fn lines(root: &RunsRoot) -> Vec<String> {
    checks(root).iter().map(CorpusCheck::line).collect()
}
