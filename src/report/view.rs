//! The view model: everything a report, page, table or figure shows,
//! loaded once from disk ([`super::load`]) into plain serializable values.
//! Renderers and exporters are functions of these values and nothing else
//! (they never touch the disk), so a view can be snapshot-tested and an
//! output is reproducible from its view alone (the shape of mdBook's
//! versioned `RenderContext`).
//!
//! - [`RootView`]: one runs root: its conditions, questions and results.
//! - [`QuestionDetail`] and [`AttemptView`]: what the site's question and
//!   attempt pages show of one question, loaded question by question so a
//!   root of any size is rendered in flat memory.
//! - `report::study::StudyView`: a study, loaded by `report::study_file`.
//!
//! Runs-root files and their fields are `docs/FORMAT.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Serialize;

use crate::format::Verdict;
use crate::layout::CallRecord;
use crate::runs::records::{AttemptResult, ConditionFile, HostReport, QuestionResult};
use crate::table::Table;

/// The version of the view model's shape: raised when a field changes
/// meaning, so a snapshot of a view says which shape it holds.
pub const VIEW_VERSION: u32 = 1;

/// One runs root, as every report of it shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RootView {
    /// [`VIEW_VERSION`].
    pub version: u32,
    /// The root folder, as given (relative to where the tool runs).
    pub path: PathBuf,
    /// The folder with every link resolved, when it could be (how two
    /// spellings of one folder are told to be the same); never written
    /// into anything generated.
    #[serde(skip)]
    pub real: Option<PathBuf>,
    /// The folder's own name, however it was spelled (`.`, `../x`): the
    /// title of its README.
    pub title: String,
    /// Closed by `freeze`: read, never written.
    pub frozen: bool,
    /// Its `README.html` exists (a frozen root's site page links it only
    /// then, else its `README.md`).
    pub readme_page: bool,
    /// Conditions by name.
    pub conditions: BTreeMap<String, ConditionView>,
    /// Questions by record id: every question some condition recorded.
    pub questions: BTreeMap<String, QuestionView>,
    /// Recorded files that could not be read, each named with why and what
    /// to do. `build` refuses a root with any; `report --lenient` shows
    /// what it can.
    pub problems: Vec<String>,
    /// Conditions by name with attempts on disk that their condition file
    /// does not list (or that have no condition file): an interrupted run,
    /// or one still going on. Named by `report` and `build`; their numbers
    /// are in no table.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub unfinished: BTreeMap<String, Unfinished>,
    /// Loaded with [`crate::report::load::Records::Deferred`]: the files
    /// of its attempts are checked question by question, as the site's
    /// pages read them ([`crate::report::load::question`] with `check`),
    /// so [`RootView::problems`] does not hold what they break.
    #[serde(skip)]
    pub records_deferred: bool,
    /// Each question's results hold their attempts (`attempts` of every
    /// [`QuestionResult`] in [`RootView::questions`]). False for a root
    /// the site's build loaded ([`crate::report::load::Records::Deferred`],
    /// not frozen): its attempts' records were read, checked and counted
    /// into the conditions, then let go, so memory stays flat however many
    /// attempts it holds (issue 26, section 4). Whatever needs them reads a
    /// question's results again ([`crate::report::load::question_results`]),
    /// which must be the bytes that were loaded.
    #[serde(skip)]
    pub attempts_held: bool,
}

/// What an unfinished condition holds ([`RootView::unfinished`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unfinished {
    /// Questions with recorded attempts no condition file lists.
    pub questions: usize,
    /// Those attempts that finished (`episode.json` present).
    pub attempts: usize,
    /// Attempts a merged sweep lacks (a merge without every shard,
    /// `runs::recorded::AttemptPlan::merged`): its questions' results hold
    /// fewer than `repeat`, and `run --resume` plays them.
    #[serde(skip_serializing_if = "is_zero")]
    pub missing: u64,
    /// The condition has a file: a run added to it and did not finish.
    pub has_file: bool,
    /// A run holds the condition's lock now (`conditions/NAME.lock`).
    pub running: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Unfinished {
    /// One line for people: `condition c: 35 attempts of 12 questions on
    /// disk, no condition file (an interrupted run: resume it with run
    /// ... --resume)`.
    pub fn line(&self, name: &str) -> String {
        let incomplete = (self.missing > 0).then(|| {
            format!(
                "condition {name} is incomplete: its merged sweep lacks {} attempt{} (a merge \
                 without every shard): play them with the sweep's run command, without \
                 --shard, and --resume",
                self.missing,
                crate::format::plural(self.missing as usize)
            )
        });
        match incomplete {
            Some(line) if self.questions == 0 && !self.running => line,
            Some(line) => format!("{}; {line}", self.unfinished_line(name)),
            None => self.unfinished_line(name),
        }
    }

    /// [`Unfinished::line`] of attempts no condition file lists.
    fn unfinished_line(&self, name: &str) -> String {
        let plural = crate::format::plural;
        let what = format!(
            "{} finished attempt{} of {} question{} on disk",
            self.attempts,
            plural(self.attempts),
            self.questions,
            plural(self.questions)
        );
        let listed = if self.has_file {
            "not in its condition file"
        } else {
            "and no condition file"
        };
        let why = if self.running {
            "a run is recording it now"
        } else {
            "a run was interrupted: run it again with --resume to finish it"
        };
        format!("condition {name} is unfinished: {what}, {listed} ({why}); no table counts them")
    }
}

/// One recorded condition.
#[derive(Debug, Clone, Serialize)]
pub struct ConditionView {
    /// Its name for people: `demo-kg, all tools · KG named`
    /// ([`super::label`]).
    pub label: String,
    /// `conditions/NAME.json` as recorded.
    pub file: ConditionFile,
    /// Soft errors over its attempts, by what they were (label → calls,
    /// from each attempt's `soft_error_kinds`); empty when none.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub soft_errors: BTreeMap<String, usize>,
    /// Characters the server's replies put into the agent's context over
    /// its attempts, per tool (each attempt's `reply_chars`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub reply_chars: BTreeMap<String, usize>,
    /// Attempts that recorded `reply_chars` / that did not (judged before
    /// it was recorded).
    pub reply_recorded: (usize, usize),
    /// What its attempts cost, as their agent hosts reported it.
    pub cost: CostView,
    /// How its attempts went about the questions.
    pub trajectory: TrajectoryView,
    /// Each trajectory expectation (by id) over its attempts
    /// (`docs/TRAJECTORY.md`; issue 27): reported beside the rates, never
    /// in them. Empty when its questions carry none.
    pub expectations: BTreeMap<String, ExpectationTally>,
    /// Why its recorded expectations were not checked against the corpus
    /// it was recorded from, or why they stand though that corpus now
    /// gives others (a frozen root); said by `report` and `build` on the
    /// terminal (`docs/TRAJECTORY.md`, "Checked against the corpus"),
    /// never written into a generated file. `None` when
    /// every recorded list is the one its corpus gives now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectations_note: Option<String>,
    /// Whether a run recording the condition was going on as the root was
    /// loaded (its lock held: [`crate::runs::lock::held`]), asked once
    /// for the root, not once a question. Not part of the view's data.
    #[serde(skip)]
    pub running: bool,
}

/// One trajectory expectation over a condition's attempts (or a
/// question's): how many held where it applied (`docs/TRAJECTORY.md`,
/// "Statuses"). An id names one expectation across the questions that
/// carry it; their attempts are counted together.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExpectationTally {
    /// `contract` or `quality` (the first question's, in id order).
    pub kind: String,
    /// The check's name (`key-graphs`).
    pub check: String,
    /// Attempts where it held (`pass`, `known_gap_fixed`).
    pub held: usize,
    /// Attempts where it applied (held or not).
    pub applicable: usize,
    /// Attempts where it did not apply.
    pub not_applicable: usize,
    /// Attempts whose status is a known gap still open.
    pub gap_open: usize,
    /// Attempts whose status is a known gap fixed.
    pub gap_fixed: usize,
}

impl ExpectationTally {
    /// Counts one attempt's status of it.
    pub fn count(&mut self, status: crate::expectations::Status) {
        use crate::expectations::Status;
        match status.held() {
            Some(held) => {
                self.applicable += 1;
                self.held += usize::from(held);
            }
            None => self.not_applicable += 1,
        }
        match status {
            Status::KnownGapOpen => self.gap_open += 1,
            Status::KnownGapFixed => self.gap_fixed += 1,
            _ => {}
        }
    }

    /// Adds `other`'s counts (its kind and check are not looked at).
    pub fn add(&mut self, other: &ExpectationTally) {
        self.held += other.held;
        self.applicable += other.applicable;
        self.not_applicable += other.not_applicable;
        self.gap_open += other.gap_open;
        self.gap_fixed += other.gap_fixed;
    }

    /// Held over applicable; `None` when it applied nowhere.
    pub fn rate(&self) -> Option<f64> {
        (self.applicable > 0).then(|| self.held as f64 / self.applicable as f64)
    }

    /// In words: `2 of 3 attempts (1 not applicable; known gap fixed in
    /// 2, open in 1)`.
    pub fn text(&self) -> String {
        let mut notes = Vec::new();
        if self.not_applicable > 0 {
            notes.push(format!("{} not applicable", self.not_applicable));
        }
        if self.gap_open + self.gap_fixed > 0 {
            notes.push(format!(
                "known gap fixed in {}, open in {}",
                self.gap_fixed, self.gap_open
            ));
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        };
        format!(
            "{} of {} attempt{}{notes}",
            self.held,
            self.applicable,
            crate::format::plural(self.applicable)
        )
    }
}

/// Conditions' notes on their trajectory expectations
/// ([`ConditionView::expectations_note`]), given as `(label, note)` in
/// the order shown: one line per distinct note, `LABEL, LABEL: NOTE.`,
/// or `Every condition: NOTE.` when all share it. Empty when none has
/// one.
pub fn expectation_notes<'a>(conditions: &[(&'a str, Option<&'a String>)]) -> Vec<String> {
    let mut grouped: Vec<(&String, Vec<&str>)> = Vec::new();
    for (label, note) in conditions {
        let Some(note) = note else { continue };
        match grouped.iter_mut().find(|(n, _)| n == note) {
            Some((_, labels)) => labels.push(label),
            None => grouped.push((note, vec![label])),
        }
    }
    grouped
        .into_iter()
        .map(|(note, labels)| {
            if labels.len() == conditions.len() && labels.len() > 1 {
                format!("Every condition: {note}.")
            } else {
                format!("{}: {note}.", labels.join(", "))
            }
        })
        .collect()
}

/// Tallies the expectation statuses of `result`'s attempts into `into`,
/// by id, typed by the expectations `result` records.
pub fn tally_expectations(
    result: &crate::runs::records::QuestionResult,
    into: &mut BTreeMap<String, ExpectationTally>,
) {
    for attempt in &result.attempts {
        for (id, judged) in &attempt.expectations {
            let tally = into.entry(id.clone()).or_insert_with(|| {
                let e = result.expectations.iter().find(|e| &e.id == id);
                ExpectationTally {
                    kind: e.map_or_else(String::new, |e| kind_name(e.kind).into()),
                    check: e.map_or_else(String::new, |e| e.check.name().into()),
                    ..ExpectationTally::default()
                }
            });
            tally.count(judged.status);
        }
    }
}

/// A type's name as written (`contract`).
pub fn kind_name(kind: crate::expectations::Kind) -> &'static str {
    match kind {
        crate::expectations::Kind::Contract => "contract",
        crate::expectations::Kind::Quality => "quality",
        crate::expectations::Kind::CurrentState => "current_state",
    }
}

/// A condition's trajectory facts over its measured attempts
/// ([`crate::runs::trajectory`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TrajectoryView {
    /// Attempts whose first query named only the answer key's graphs.
    pub first_query_hits: usize,
    /// Attempts whose first query could be judged (it named a graph).
    pub first_query_judged: usize,
    /// Exploratory calls before the first query, over the attempts.
    pub exploratory_calls: usize,
    /// Measured attempts with trajectory facts / without (judged before
    /// they were recorded: `rescore` records them).
    pub recorded: (usize, usize),
}

impl TrajectoryView {
    /// In words: `first query hit the key's graphs in 59 of 72 attempts;
    /// 0 exploratory calls before the first query (all calls, where none
    /// was made) over 72 attempts`, or what is missing.
    pub fn text(&self) -> String {
        if self.recorded.0 == 0 {
            return "trajectory not recorded (rescore the root)".into();
        }
        let partial = if self.recorded.1 > 0 {
            format!(" ({} attempts not recorded)", self.recorded.1)
        } else {
            String::new()
        };
        format!(
            "first query hit the key's graphs in {} of {} attempts; {} exploratory call{} before \
             the first query (all calls, where none was made) over {} attempts{partial}",
            self.first_query_hits,
            self.first_query_judged,
            self.exploratory_calls,
            crate::format::plural(self.exploratory_calls),
            self.recorded.0
        )
    }
}

/// A condition's cost over its attempts ([`ConditionView::cost`]): sums
/// over the attempts whose host reported each figure, and how many did not.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CostView {
    /// US dollars, over the attempts that reported a cost.
    pub cost_usd: f64,
    /// Attempts that reported a cost / that did not.
    pub costed: (usize, usize),
    /// Input tokens (uncached, cache writes and reads) over the attempts
    /// that reported them.
    pub input_tokens: u64,
    /// Output tokens, likewise.
    pub output_tokens: u64,
    /// Attempts that reported tokens / that did not.
    pub tokened: (usize, usize),
}

impl CostView {
    /// The mean cost per attempt, when every attempt reported one.
    pub fn mean_cost(&self) -> Option<f64> {
        (self.costed.1 == 0 && self.costed.0 > 0).then(|| self.cost_usd / self.costed.0 as f64)
    }

    /// The cost in words, or what is missing.
    pub fn text(&self) -> String {
        if self.costed.0 == 0 && self.tokened.0 == 0 {
            return "cost and tokens not reported by the agent host".into();
        }
        let cost = match self.mean_cost() {
            Some(mean) => format!(
                "cost ${} over {} attempts (${} per attempt)",
                crate::format::fixed(self.cost_usd, 4),
                self.costed.0,
                crate::format::fixed(mean, 4)
            ),
            None => format!(
                "cost reported by {} of {} attempts (no honest total)",
                self.costed.0,
                self.costed.0 + self.costed.1
            ),
        };
        let tokens = if self.tokened.1 == 0 {
            format!(
                "{} input and {} output tokens",
                self.input_tokens, self.output_tokens
            )
        } else {
            format!(
                "tokens reported by {} of {} attempts",
                self.tokened.0,
                self.tokened.0 + self.tokened.1
            )
        };
        format!("{cost}; {tokens}")
    }
}

impl ConditionView {
    /// The mean characters the server's replies put into the context per
    /// attempt, when every attempt recorded them (`None`: some did not, so
    /// no honest mean exists).
    pub fn mean_reply_chars(&self) -> Option<f64> {
        let (recorded, missing) = self.reply_recorded;
        (missing == 0 && recorded > 0)
            .then(|| self.reply_chars.values().sum::<usize>() as f64 / recorded as f64)
    }

    /// The replies' characters in words: `N characters (M per attempt)`,
    /// or why there is no figure.
    pub fn reply_chars_text(&self) -> String {
        match self.mean_reply_chars() {
            Some(mean) => format!(
                "{} characters ({:.0} per attempt)",
                self.reply_chars.values().sum::<usize>(),
                mean
            ),
            None => format!(
                "an unknown number of characters ({} of {} attempts were recorded before reply \
                 sizes were)",
                self.reply_recorded.1,
                self.reply_recorded.0 + self.reply_recorded.1
            ),
        }
    }

    /// Its soft errors in words: `none`, or `N: LABEL ×n, LABEL ×m` (the
    /// three most frequent kinds, then how many more).
    pub fn soft_errors_text(&self) -> String {
        if self.soft_errors.is_empty() {
            return "none".into();
        }
        let total: usize = self.soft_errors.values().sum();
        let mut kinds: Vec<(&String, &usize)> = self.soft_errors.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let mut shown: Vec<String> = kinds
            .iter()
            .take(3)
            .map(|(label, n)| format!("{label} ×{n}"))
            .collect();
        if kinds.len() > 3 {
            shown.push(format!("{} more kinds", kinds.len() - 3));
        }
        format!("{total}: {}", shown.join(", "))
    }

    /// The sentence every report that shows this condition's times carries
    /// when its episodes ran in N shards at once (`shards: N`,
    /// `docs/SCALING.md`); `None` for a serial run.
    pub fn shards_note(&self) -> Option<String> {
        let n = self.file.identity.shards.filter(|&n| n > 1)?;
        Some(format!(
            "The timings of {} were taken with {n} shards in parallel against one server \
             (run --shard K/{n}): compare them only with timings taken with {n} shards.",
            self.label
        ))
    }

    /// Its agent as every report names it: host, host version and model
    /// ([`super::AgentIdentity`]; issue 25, section 5).
    pub fn agent(&self) -> super::AgentIdentity {
        super::AgentIdentity::of(&self.file)
    }
}

/// A question's results by condition name, in name order: a sorted
/// vector (`litemap`), not a `BTreeMap`, whose first node has room for
/// eleven results where a question has a few (4 KB a question, 10 MB of a
/// root of 2,500 questions that `build` held; issue 26, section 4). It
/// reads as a map (`get`, `iter`, `keys`, `values`), and is written as a
/// JSON object ([`crate::runs::records::name_map`]).
pub type Results = crate::runs::records::ByName<QuestionResult>;

/// One question of a runs root.
#[derive(Debug, Clone, Default, Serialize)]
pub struct QuestionView {
    /// The question as the agent read it: the first paragraph of a
    /// recorded `prompt.txt` (`None` when no prompt was recorded).
    pub text: Option<String>,
    /// Its result under each condition that recorded it, by condition name
    /// ([`Results`]).
    #[serde(with = "crate::runs::records::name_map")]
    pub results: Results,
    /// The strategy the scripted agent recorded playing (`played` in an
    /// attempt's `agent.json`), by condition name and attempt number:
    /// empty for other agent hosts, which record none.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub played: BTreeMap<String, BTreeMap<u32, String>>,
    /// The notes of attempts whose answer redaction changed before they
    /// were judged (`crate::runs::judge::REDACTED_ANSWER`): condition name,
    /// attempt, note, in that order. Named by the README (issue 24, item
    /// 27).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<(String, u32, String)>,
    /// A digest of each condition's `result.json` as loaded (by condition
    /// name): what a second read of it must match
    /// ([`crate::report::load::question_results`]). Not part of the view's
    /// data.
    #[serde(skip)]
    pub digests: crate::runs::records::ByName<u64>,
}

impl RootView {
    /// The label of condition `name` (its name when it is not recorded).
    pub fn label(&self, name: &str) -> String {
        self.conditions
            .get(name)
            .map_or_else(|| name.to_string(), |c| c.label.clone())
    }

    /// Attempts recorded over every condition.
    pub fn attempts(&self) -> u32 {
        self.conditions
            .values()
            .map(|c| c.file.aggregate.attempts)
            .sum()
    }
}

/// What the site shows of one question: its ground truth and every
/// attempt of every condition.
#[derive(Debug, Clone, Serialize)]
pub struct QuestionDetail {
    /// The record id.
    pub id: String,
    /// `ground_truth.csv` beside the attempts, when recorded and readable.
    pub ground_truth: Option<Table>,
    /// The answer key that produced it (`answer_key` of
    /// `ground_truth.json`: the SPARQL as run), when recorded and readable.
    pub answer_key: Option<String>,
    /// Which of the question folder's own files exist
    /// (`ground_truth.csv`, `ground_truth.json`).
    pub files: BTreeSet<String>,
    /// Per condition name, in name order.
    pub conditions: BTreeMap<String, ConditionAttempts>,
    /// The question's result under each condition, attempts and all, as
    /// loaded ([`crate::report::load::question_results`]): what its pages
    /// and its `summary.csv` show.
    #[serde(skip)]
    pub results: Results,
    /// What the files broke of the rules [`crate::report::load::question`]
    /// checked them by (with `check`), each named with what to do, in the
    /// order met: a detail with any is never published.
    #[serde(skip)]
    pub problems: Vec<String>,
}

/// One condition's attempts of one question.
#[derive(Debug, Clone, Serialize)]
pub struct ConditionAttempts {
    /// Its `result.json` exists.
    pub result_file: bool,
    /// Every attempt, in order.
    pub attempts: Vec<AttemptView>,
}

/// One attempt, with what its folder holds.
#[derive(Debug, Clone, Serialize)]
pub struct AttemptView {
    /// What it came to.
    pub verdict: Verdict,
    /// As judged in `result.json`.
    pub result: AttemptResult,
    /// The attempt folder.
    pub dir: PathBuf,
    /// The names of the files in it.
    pub files: BTreeSet<String>,
    /// `answer.csv`: the table, or why it could not be read; `None` when
    /// nothing was submitted.
    pub answer: Option<Result<Table, String>>,
    /// `calls.json`'s calls, when recorded.
    pub calls: Option<Vec<CallRecord>>,
    /// The agent host's final message (`result` of `agent.json`), or a
    /// sentence saying why none could be read.
    pub final_message: Option<String>,
    /// `prompt.txt` as recorded.
    pub prompt: Option<String>,
    /// What the agent host reported of the episode, and its wall time.
    pub host: HostView,
}

/// What an attempt page shows of the agent host's report (issue 25,
/// section 5; `docs/FORMAT.md`, "`episode.json`").
#[derive(Debug, Clone, Serialize)]
pub struct HostView {
    /// The host report its host's parser derives from the recorded output
    /// (`agent.json`, `agent.stderr.log`) and the episode: what judging
    /// read (`episode.json`'s `host_report` holds the same, from runs-root
    /// format 4 on). A figure the host did not state is absent.
    pub report: HostReport,
    /// The episode's wall time, seconds (`episode.json`'s `wall_s`);
    /// `None` when the attempt has no episode.
    pub wall_s: Option<f64>,
    /// Who measured it (`episode.json`'s `source`): `runner`, or
    /// `agent.json` (the host's own clock, for an episode recovered from
    /// its report).
    pub measured_by: Option<String>,
}
