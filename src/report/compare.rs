//! `compare`: two runs roots of one corpus, question by question
//! (`docs/SCALING.md`, "Did it get better or worse: compare").
//!
//! Conditions pair by name (or as `--condition BASE=CAND` maps them),
//! questions by id. Within a question, attempt k of the baseline pairs with
//! attempt k of the candidate; a pair flips up (inexact → exact) or down.
//! A question is **improved** (flips up only), **regressed** (down only),
//! **mixed** (both), **unchanged** (none; when attempts pair with none, as
//! under another `--repeat` or with one side blocked, a lower or higher
//! exact rate reads as regressed or improved), or **not comparable**: its ground
//! truth moved between the roots (another fingerprint or other rows), its
//! prompt differs between them (a record edited between the runs; under
//! another `--kg-hint` the hint paragraph aside), or one side measured
//! none of its attempts. Flips under repeats are shown,
//! never averaged away.
//!
//! Per condition: the change in exact rate, with a 95% paired bootstrap
//! interval over the comparable questions ([`stats::paired_delta`]); an
//! exact McNemar test over the paired per-question outcomes ([`McNemar`]);
//! and the change in mean F1, calls, queries, server and agent time, and
//! cost and tokens where both roots report them.
//!
//! The gate (`--fail-on-regression`): a question **regresses beyond what
//! its repeats can explain** when the baseline was exact in every measured
//! attempt and the candidate is not exact in at least one. A baseline that
//! never failed leaves no flakiness to explain a failure by; a question the
//! baseline answered only sometimes is shown as regressed or mixed, and
//! never fails the gate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::grid::{Align, Cell, Column, Grid};
use super::stats::{self, PairedDelta};
use super::view::RootView;
use crate::error::{Error, Result};
use crate::layout::RunsRoot;
use crate::runs::records::{AttemptResult, QuestionResult};

/// What happened to one question between the roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Some paired attempt went from exact to inexact, none the other way.
    Regressed,
    /// Attempts flipped both ways.
    Mixed,
    /// Some paired attempt went from inexact to exact, none the other way.
    Improved,
    /// No paired attempt flipped.
    Unchanged,
    /// Its ground truth or its prompt moved, or one side measured nothing.
    NotComparable,
}

impl Class {
    /// The class as the reports word it.
    pub fn word(self) -> &'static str {
        match self {
            Class::Regressed => "regressed",
            Class::Mixed => "mixed",
            Class::Improved => "improved",
            Class::Unchanged => "unchanged",
            Class::NotComparable => "not comparable",
        }
    }

    /// Every class, in the order reports list them (regressions first).
    pub const ALL: [Class; 5] = [
        Class::Regressed,
        Class::Mixed,
        Class::Improved,
        Class::Unchanged,
        Class::NotComparable,
    ];

    fn tone(self) -> &'static str {
        match self {
            Class::Regressed => "bad",
            Class::Mixed => "soft",
            Class::Improved => "ok",
            Class::Unchanged | Class::NotComparable => "muted",
        }
    }
}

/// One question under one paired condition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuestionChange {
    /// The question id.
    pub id: String,
    /// Its class.
    pub class: Class,
    /// Why it is not comparable (`None` otherwise).
    pub reason: Option<String>,
    /// The baseline's attempts, by number: exact, or `None` when blocked.
    pub before: BTreeMap<u32, Option<bool>>,
    /// The candidate's.
    pub after: BTreeMap<u32, Option<bool>>,
    /// Paired attempts that went inexact → exact.
    pub up: u32,
    /// Paired attempts that went exact → inexact.
    pub down: u32,
    /// Exact rate over measured attempts, baseline and candidate.
    pub rates: (Option<f64>, Option<f64>),
    /// Regressed beyond what its repeats can explain (the module's rule).
    pub beyond_repeats: bool,
    /// Its trajectory expectations that flipped between the roots, by id
    /// (issue 27; `docs/TRAJECTORY.md`): empty when none did.
    pub expectations: Vec<ExpectationFlip>,
}

/// One trajectory expectation of a question whose status flipped in some
/// paired attempt (held in one root, failed in the other).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExpectationFlip {
    /// The expectation id.
    pub id: String,
    /// `contract` or `quality` (the candidate's, else the baseline's).
    pub kind: String,
    /// It carries a known gap (in either root): a flip is a gap closing
    /// or reopening, never a new regression.
    pub known_gap: bool,
    /// Paired attempts where it went from failing to holding.
    pub up: u32,
    /// Paired attempts where it went from holding to failing.
    pub down: u32,
    /// Held per attempt, baseline and candidate (`None`: not applicable or
    /// absent).
    pub before: BTreeMap<u32, Option<bool>>,
    /// The candidate's.
    pub after: BTreeMap<u32, Option<bool>>,
    /// A contract, without a known gap, that held in every attempt of the
    /// baseline where it applied and fails in some attempt of the
    /// candidate: it fails `--fail-on-regression` even when every answer
    /// stayed exact.
    pub contract_regressed: bool,
    /// How the two roots define it, when they define it otherwise (a
    /// type, check, field or known gap changed, or it is in one root
    /// only: [`crate::expectations::differences`]): its statuses are not
    /// the same measurement, so none of its flips is counted, and it moves
    /// no class. `None` when both define it alike.
    pub redefined: Option<String>,
    /// Redefined, a contract in the candidate or the baseline, and not
    /// held in every attempt of the candidate where it applied, or not
    /// defined in the candidate at all (turned off there): whether
    /// it regressed cannot be judged, so `--fail-on-regression` fails
    /// until both roots are judged by one definition (`okn-benchmark
    /// rescore` against one corpus). A known gap added only in the
    /// candidate is caught here (issue 27).
    pub unjudgeable: bool,
    /// It applied to no attempt of the baseline (not applicable
    /// throughout) and fails in some attempt of the candidate: listed, as
    /// no paired flip shows it, but not a regression the gate counts (the
    /// baseline gives no evidence it held, as an answer's gate needs a
    /// measured baseline).
    pub unjudged_before: bool,
}

impl ExpectationFlip {
    /// Its flips move the question's class: a contract, or a known gap
    /// closing or reopening. A quality expectation's flip is listed for a
    /// maintainer to judge and moves nothing.
    pub fn directional(&self) -> bool {
        self.redefined.is_none() && (self.kind == "contract" || self.known_gap)
    }

    /// In words: `started to fail`.
    pub fn direction(&self) -> &'static str {
        if self.redefined.is_some() {
            return "not comparable: defined otherwise";
        }
        if self.unjudged_before && self.up == 0 && self.down == 0 {
            return "fails, judged in no attempt of the baseline";
        }
        match (self.known_gap, self.up > 0, self.down > 0) {
            (true, true, false) => "known gap closed",
            (true, false, true) => "known gap reopened",
            (false, true, false) => "started to hold",
            (false, false, true) => "started to fail",
            _ => "flipped both ways",
        }
    }
}

/// The expectations of `b` and `c` (one question in two roots) whose
/// status flipped in some paired attempt.
fn expectation_flips(b: &QuestionResult, c: &QuestionResult) -> Vec<ExpectationFlip> {
    let held = |r: &QuestionResult, id: &str| -> BTreeMap<u32, Option<bool>> {
        r.attempts
            .iter()
            .map(|a| {
                (
                    a.attempt,
                    a.expectations.get(id).and_then(|j| j.status.held()),
                )
            })
            .collect()
    };
    let ids: BTreeSet<&String> = b
        .expectations
        .iter()
        .chain(&c.expectations)
        .map(|e| &e.id)
        .collect();
    let mut out = Vec::new();
    for id in ids {
        let (before, after) = (held(b, id), held(c, id));
        let (mut up, mut down) = (0, 0);
        for (n, x) in &before {
            if let (Some(x), Some(Some(y))) = (x, after.get(n)) {
                up += u32::from(!x && *y);
                down += u32::from(*x && !y);
            }
        }
        let find = |r: &'_ QuestionResult| r.expectations.iter().find(|e| &e.id == id).cloned();
        let (b_def, c_def) = (find(b), find(c));
        // Defined otherwise in the two roots: not the same measurement.
        let redefined = (b_def != c_def).then(|| {
            crate::expectations::differences(
                b_def.as_slice(),
                c_def.as_slice(),
                ("the baseline", "the candidate"),
            )
            .join("; ")
        });
        let applied =
            |m: &BTreeMap<u32, Option<bool>>| m.values().flatten().copied().collect::<Vec<bool>>();
        let (was, now) = (applied(&before), applied(&after));
        // Judged in no attempt of the baseline and failing in the
        // candidate: no flip to count, but not to be left unsaid.
        let unjudged_before = was.is_empty() && now.iter().any(|h| !h);
        if redefined.is_none() && up == 0 && down == 0 && !unjudged_before {
            continue;
        }
        let defined = c_def.as_ref().or(b_def.as_ref());
        let known_gap = [b, c].iter().any(|r| {
            r.expectations
                .iter()
                .any(|e| &e.id == id && e.known_gap.is_some())
        });
        let kind = defined.map_or("", |e| super::view::kind_name(e.kind));
        let contract_regressed = redefined.is_none()
            && kind == "contract"
            && !known_gap
            && !was.is_empty()
            && was.iter().all(|h| *h)
            && now.iter().any(|h| !h);
        let contract_somewhere = [&b_def, &c_def].iter().any(|d| {
            d.as_ref()
                .is_some_and(|e| e.kind == crate::expectations::Kind::Contract)
        });
        // Not held: failing, or an open known gap (which `held` reads as
        // not held too), in some attempt of the candidate.
        let unheld = now.iter().any(|h| !h);
        // Not defined in the candidate at all (a contract turned off
        // there) is no evidence that it holds either.
        let unjudgeable = redefined.is_some() && contract_somewhere && (unheld || c_def.is_none());
        let (up, down) = if redefined.is_some() {
            (0, 0)
        } else {
            (up, down)
        };
        out.push(ExpectationFlip {
            id: id.clone(),
            kind: kind.to_string(),
            known_gap,
            up,
            down,
            before,
            after,
            contract_regressed,
            redefined,
            unjudgeable,
            unjudged_before,
        });
    }
    out
}

/// The exact McNemar test over the paired per-question outcomes: a
/// question's outcome is exact when more than half its measured attempts
/// were. `b` questions were exact before and not after, `c` the reverse;
/// under no change each discordant question is a fair coin, so the
/// two-sided p-value is `min(1, 2·P(X ≤ min(b, c)))` for `X ~ Bin(b + c,
/// 1/2)`. Exact rather than the chi-square approximation, which fails for
/// the few discordant questions a corpus of tens gives (McNemar 1947;
/// Fagerland, Lydersen and Laake 2013).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct McNemar {
    /// Questions paired.
    pub questions: usize,
    /// Exact before, not after.
    pub b: u32,
    /// Exact after, not before.
    pub c: u32,
    /// Two-sided p-value; 1 with no discordant question.
    pub p: f64,
}

impl McNemar {
    /// The test over `(before, after)` outcomes.
    pub fn test(outcomes: &[(bool, bool)]) -> McNemar {
        let b = outcomes.iter().filter(|(x, y)| *x && !*y).count() as u32;
        let c = outcomes.iter().filter(|(x, y)| !*x && *y).count() as u32;
        let n = b + c;
        let tail: f64 =
            (0..=b.min(c)).map(|i| stats::choose(n, i)).sum::<f64>() * 0.5f64.powi(n as i32);
        McNemar {
            questions: outcomes.len(),
            b,
            c,
            p: if n == 0 { 1.0 } else { (2.0 * tail).min(1.0) },
        }
    }
}

/// A mean before and after.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Change {
    /// The baseline's.
    pub before: f64,
    /// The candidate's.
    pub after: f64,
}

impl Change {
    /// `after − before`.
    pub fn delta(&self) -> f64 {
        self.after - self.before
    }
}

/// One pair of conditions compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConditionChange {
    /// The baseline's condition name.
    pub baseline: String,
    /// The candidate's.
    pub candidate: String,
    /// The baseline condition's label ([`crate::report::label`]), as the
    /// rest of a study names it.
    pub baseline_label: String,
    /// The candidate condition's label.
    pub candidate_label: String,
    /// Every question both hold, by id.
    pub questions: Vec<QuestionChange>,
    /// Question ids only the baseline holds.
    pub baseline_only: Vec<String>,
    /// Question ids only the candidate holds.
    pub candidate_only: Vec<String>,
    /// What the two conditions were recorded with that differs, as
    /// `member: before → after` (identity members, then the server's build,
    /// the agent host's version and the model that answered): what the
    /// comparison compares.
    pub differences: Vec<String>,
    /// Δ exact rate over comparable questions, with its interval.
    pub exact: Option<PairedDelta>,
    /// The McNemar test over comparable questions (`None` when there is
    /// none: no test was possible).
    pub mcnemar: Option<McNemar>,
    /// Mean F1, calls, queries, agent (wall) seconds, server seconds, cost
    /// (USD) and tokens (input + output) per measured attempt, averaged per
    /// question first, over comparable questions; `None` where either root
    /// does not report it for every such attempt.
    pub means: BTreeMap<Measure, Option<Change>>,
}

impl ConditionChange {
    /// The pair as people name it: the label, or `baseline → candidate`
    /// labels where they differ (issue 26, section 3: labels, not
    /// condition keys).
    pub fn label(&self) -> String {
        if self.baseline_label == self.candidate_label {
            self.baseline_label.clone()
        } else {
            format!("{} → {}", self.baseline_label, self.candidate_label)
        }
    }

    /// Questions of `class`.
    pub fn count(&self, class: Class) -> usize {
        self.questions.iter().filter(|q| q.class == class).count()
    }

    /// Questions that regressed beyond what their repeats can explain.
    pub fn beyond_repeats(&self) -> impl Iterator<Item = &QuestionChange> {
        self.questions.iter().filter(|q| q.beyond_repeats)
    }

    /// `(question, expectation)` of every contract that started to fail
    /// on a comparable question.
    pub fn contract_regressions(
        &self,
    ) -> impl Iterator<Item = (&QuestionChange, &ExpectationFlip)> {
        self.questions
            .iter()
            .filter(|q| q.class != Class::NotComparable)
            .flat_map(|q| q.expectations.iter().map(move |e| (q, e)))
            .filter(|(_, e)| e.contract_regressed)
    }
}

/// Two runs roots compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The baseline root, as given.
    pub baseline: PathBuf,
    /// The candidate root, as given.
    pub candidate: PathBuf,
    /// The paired conditions, in baseline name order.
    pub conditions: Vec<ConditionChange>,
    /// Conditions of the baseline no pair takes.
    pub baseline_only: Vec<String>,
    /// Conditions of the candidate no pair takes.
    pub candidate_only: Vec<String>,
}

impl Comparison {
    /// True when some question regressed beyond what its repeats explain.
    pub fn regressed_beyond_repeats(&self) -> bool {
        self.conditions
            .iter()
            .any(|c| c.beyond_repeats().next().is_some())
    }

    /// True when some contract expectation started to fail
    /// ([`ExpectationFlip::contract_regressed`]; issue 27): what
    /// `--fail-on-regression` counts beside the answers.
    pub fn contract_regressed(&self) -> bool {
        self.conditions
            .iter()
            .any(|c| c.contract_regressions().next().is_some())
    }

    /// True when some contract expectation is defined otherwise in the
    /// two roots and does not hold in the candidate
    /// ([`ExpectationFlip::unjudgeable`]): `--fail-on-regression` cannot
    /// judge it, and fails.
    pub fn contract_unjudgeable(&self) -> bool {
        self.conditions
            .iter()
            .flat_map(|c| &c.questions)
            .filter(|q| q.class != Class::NotComparable)
            .flat_map(|q| &q.expectations)
            .any(|e| e.unjudgeable)
    }

    /// True when some question of a comparable pair carries a trajectory
    /// expectation that flipped.
    pub fn has_expectation_flips(&self) -> bool {
        self.conditions
            .iter()
            .flat_map(|c| &c.questions)
            .any(|q| !q.expectations.is_empty())
    }
}

/// What [`ConditionChange::means`] compares, per measured attempt, in the
/// order shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Measure {
    /// F1 against the ground truth (0 for no answer).
    MeanF1,
    /// Tool calls.
    Calls,
    /// SPARQL queries.
    Queries,
    /// The agent host's wall seconds.
    AgentSeconds,
    /// Seconds spent in the server.
    ServerSeconds,
    /// Cost, USD, as the agent host reported it.
    CostUsd,
    /// Input and output tokens, as the agent host reported them.
    Tokens,
}

impl Measure {
    /// Every measure, in the order shown.
    pub const ALL: [Measure; 7] = [
        Measure::MeanF1,
        Measure::Calls,
        Measure::Queries,
        Measure::AgentSeconds,
        Measure::ServerSeconds,
        Measure::CostUsd,
        Measure::Tokens,
    ];

    /// Its name in the tables.
    pub fn name(self) -> &'static str {
        match self {
            Measure::MeanF1 => "mean F1",
            Measure::Calls => "calls",
            Measure::Queries => "queries",
            Measure::AgentSeconds => "agent s",
            Measure::ServerSeconds => "server s",
            Measure::CostUsd => "cost USD",
            Measure::Tokens => "tokens",
        }
    }

    /// Its value for one attempt (`None`: not reported).
    fn of(self, a: &AttemptResult) -> Option<f64> {
        match self {
            Measure::MeanF1 => Some(a.score.as_ref().map_or(0.0, |s| s.f1)),
            Measure::Calls => Some(a.tools_called.len() as f64),
            Measure::Queries => Some(a.queries as f64),
            Measure::AgentSeconds => Some(a.wall_s),
            Measure::ServerSeconds => Some(a.server_s),
            Measure::CostUsd => a.usage.as_ref().and_then(|u| u.cost()),
            Measure::Tokens => {
                let u = a.usage.as_ref()?;
                Some((u.all_input_tokens()? + u.output()?) as f64)
            }
        }
    }

    /// Decimals shown.
    fn digits(self) -> usize {
        if self == Measure::CostUsd { 4 } else { 3 }
    }
}

/// `baseline` and `candidate` compared, conditions paired by name and by
/// `mapping` (`(baseline name, candidate name)`; when given, only those
/// pairs are compared).
///
/// Errors: a root that is not a runs root or has files it cannot read
/// (no number is computed over part of a root); a mapped name a root
/// lacks; no condition in common; a question's recorded ground truth that
/// cannot be read.
pub fn compare(
    baseline: &RootView,
    candidate: &RootView,
    mapping: &[(String, String)],
) -> Result<Comparison> {
    for view in [baseline, candidate] {
        if !RunsRoot::is_runs_root(&view.path) {
            return Err(Error::file(
                &view.path,
                "not a runs root (it has no conditions/ folder)",
            ));
        }
        if let Some(problem) = view.problems.first() {
            return Err(Error::Other(format!(
                "{}: {problem}; nothing was compared (okn-benchmark report {} names every \
                 file it cannot read)",
                view.path.display(),
                view.path.display()
            )));
        }
    }
    let pairs = pair_conditions(baseline, candidate, mapping)?;
    let taken_b: BTreeSet<&String> = pairs.iter().map(|(b, _)| b).collect();
    let taken_c: BTreeSet<&String> = pairs.iter().map(|(_, c)| c).collect();
    let mut conditions = Vec::new();
    for (b, c) in &pairs {
        conditions.push(compare_condition(baseline, candidate, (b, c))?);
    }
    if conditions.iter().all(|c| c.questions.is_empty()) {
        return Err(Error::Usage(format!(
            "{} and {} hold no question in common under the paired conditions ({}), so there \
             is nothing to compare: are they runs roots of one corpus?",
            baseline.path.display(),
            candidate.path.display(),
            pairs
                .iter()
                .map(|(b, c)| if b == c {
                    b.clone()
                } else {
                    format!("{b}={c}")
                })
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(Comparison {
        baseline: baseline.path.clone(),
        candidate: candidate.path.clone(),
        baseline_only: baseline
            .conditions
            .keys()
            .filter(|n| !taken_b.contains(n))
            .cloned()
            .collect(),
        candidate_only: candidate
            .conditions
            .keys()
            .filter(|n| !taken_c.contains(n))
            .cloned()
            .collect(),
        conditions,
    })
}

/// The condition pairs: `mapping` when given, else every name both hold.
fn pair_conditions(
    baseline: &RootView,
    candidate: &RootView,
    mapping: &[(String, String)],
) -> Result<Vec<(String, String)>> {
    let missing = |view: &RootView, name: &str| {
        let known: Vec<&str> = view.conditions.keys().map(String::as_str).collect();
        Error::Usage(format!(
            "--condition: {} has no condition '{name}'{}; it has: {}",
            view.path.display(),
            crate::suggest::did_you_mean(name, known.iter().copied()),
            known.join(", ")
        ))
    };
    if !mapping.is_empty() {
        for (b, c) in mapping {
            if !baseline.conditions.contains_key(b) {
                return Err(missing(baseline, b));
            }
            if !candidate.conditions.contains_key(c) {
                return Err(missing(candidate, c));
            }
        }
        return Ok(mapping.to_vec());
    }
    let pairs: Vec<(String, String)> = baseline
        .conditions
        .keys()
        .filter(|n| candidate.conditions.contains_key(*n))
        .map(|n| (n.clone(), n.clone()))
        .collect();
    if pairs.is_empty() {
        return Err(Error::Usage(format!(
            "{} and {} have no condition of the same name ({} against {}): pair them with \
             --condition BASELINE_NAME=CANDIDATE_NAME",
            baseline.path.display(),
            candidate.path.display(),
            baseline
                .conditions
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            candidate
                .conditions
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
        )));
    }
    Ok(pairs)
}

/// A question's recorded ground-truth identity: fingerprint and rows.
fn truth_of(root: &Path, id: &str) -> Result<(String, String)> {
    // The rows checked against the digest the JSON recorded: a CSV edited
    // since is refused by name.
    let meta =
        crate::runs::recorded::read_ground_truth(&RunsRoot::new(root).question_dir(id))?.meta;
    Ok((meta.fingerprint, meta.csv_sha256))
}

/// Why the question of `b` and `c` was asked otherwise in the two roots,
/// or `None` when every attempt of both recorded one prompt (issue 24,
/// item 12): a record edited between the runs asks another question. When
/// the paired conditions differ in `--kg-hint`, the prompts are compared
/// without the hint paragraph ([`crate::runs::prompt::without_hint`]).
///
/// Errors: a `prompt.txt` that cannot be read.
fn prompt_moved(
    (baseline, b): (&RootView, &QuestionResult),
    (candidate, c): (&RootView, &QuestionResult),
    hints: (crate::runs::identity::KgHint, crate::runs::identity::KgHint),
) -> Result<Option<String>> {
    let prompts = |view: &RootView, r: &QuestionResult| -> Result<BTreeSet<String>> {
        let recorded = crate::runs::prompt::recorded(
            &RunsRoot::new(&view.path),
            &r.question,
            &r.condition,
            r.attempts.iter().map(|a| a.attempt),
        )?;
        Ok(recorded
            .into_values()
            .map(|p| {
                if hints.0 == hints.1 {
                    p
                } else {
                    crate::runs::prompt::without_hint(&p)
                }
            })
            .collect())
    };
    let (before, after) = (prompts(baseline, b)?, prompts(candidate, c)?);
    Ok(
        if before.is_empty() || after.is_empty() || before == after && before.len() == 1 {
            None
        } else if before.len() > 1 || after.len() > 1 {
            Some("its attempts in one root were asked different prompts".to_string())
        } else {
            Some("its prompt differs between the roots".to_string())
        },
    )
}

/// The results of condition `name` in `view`, by question id.
fn results_of<'a>(view: &'a RootView, name: &str) -> BTreeMap<&'a str, &'a QuestionResult> {
    view.questions
        .iter()
        .filter_map(|(id, q)| Some((id.as_str(), q.results.get(name)?)))
        .collect()
}

/// One pair of conditions compared.
fn compare_condition(
    baseline: &RootView,
    candidate: &RootView,
    (b_name, c_name): (&str, &str),
) -> Result<ConditionChange> {
    let before = results_of(baseline, b_name);
    let after = results_of(candidate, c_name);
    let differences = differences(
        &baseline.conditions[b_name].file,
        &candidate.conditions[c_name].file,
    );
    let mut questions = Vec::new();
    let mut rates = Vec::new();
    let mut outcomes = Vec::new();
    let mut measured: Vec<(&QuestionResult, &QuestionResult)> = Vec::new();
    let hints = (
        baseline.conditions[b_name].file.identity.kg_hint,
        candidate.conditions[c_name].file.identity.kg_hint,
    );
    for (id, b) in &before {
        let Some(c) = after.get(id) else { continue };
        let reason = if truth_of(&baseline.path, id)? != truth_of(&candidate.path, id)? {
            Some("the ground truth moved".to_string())
        } else {
            prompt_moved((baseline, b), (candidate, c), hints)?
        };
        let change = question_change(id, (b, c), reason);
        if change.class != Class::NotComparable
            && let (Some(x), Some(y)) = change.rates
        {
            rates.push((x, y));
            outcomes.push((x > 0.5, y > 0.5));
            measured.push((b, c));
        }
        questions.push(change);
    }
    Ok(ConditionChange {
        baseline: b_name.to_string(),
        candidate: c_name.to_string(),
        baseline_label: crate::report::label(&baseline.conditions[b_name].file),
        candidate_label: crate::report::label(&candidate.conditions[c_name].file),
        baseline_only: before
            .keys()
            .filter(|id| !after.contains_key(*id))
            .map(|s| s.to_string())
            .collect(),
        candidate_only: after
            .keys()
            .filter(|id| !before.contains_key(*id))
            .map(|s| s.to_string())
            .collect(),
        differences,
        exact: stats::paired_delta(&rates),
        mcnemar: (!outcomes.is_empty()).then(|| McNemar::test(&outcomes)),
        means: Measure::ALL
            .iter()
            .map(|&m| (m, mean_change(&measured, m)))
            .collect(),
        questions,
    })
}

/// Every identity member that differs between two condition files, then
/// the server build, agent version and resolved model.
fn differences(
    a: &crate::runs::records::ConditionFile,
    b: &crate::runs::records::ConditionFile,
) -> Vec<String> {
    let show = |v: Option<&serde_json::Value>| match v {
        None | Some(serde_json::Value::Null) => "(none)".to_string(),
        Some(serde_json::Value::String(s)) => format!("'{s}'"),
        Some(other) => other.to_string(),
    };
    let mut out = Vec::new();
    let (x, y) = (
        serde_json::to_value(&a.identity).unwrap_or_default(),
        serde_json::to_value(&b.identity).unwrap_or_default(),
    );
    for (k, p, q) in crate::fsutil::member_differences(&x, &y) {
        out.push(format!("identity.{k}: {} → {}", show(p), show(q)));
    }
    for (field, p, q) in [
        (
            "server_build",
            &a.settings.server_build,
            &b.settings.server_build,
        ),
        (
            "agent_version",
            &a.settings.agent_version,
            &b.settings.agent_version,
        ),
        (
            "model_resolved",
            &a.settings.model_resolved,
            &b.settings.model_resolved,
        ),
    ] {
        if p != q {
            let show = |v: &Option<String>| {
                v.as_ref()
                    .map_or("(none)".to_string(), |s| format!("'{s}'"))
            };
            out.push(format!("settings.{field}: {} → {}", show(p), show(q)));
        }
    }
    // The rule numbers were judged by (`--precision`): verdicts at other
    // precisions are not the same measurement.
    let (p, q) = (
        a.settings.significant_figures,
        b.settings.significant_figures,
    );
    if p != q {
        out.push(format!("settings.significant_figures: {p} → {q}"));
    }
    out
}

/// One question's class, flips and rates.
fn question_change(
    id: &str,
    (b, c): (&QuestionResult, &QuestionResult),
    not_comparable: Option<String>,
) -> QuestionChange {
    let outcomes = |r: &QuestionResult| -> BTreeMap<u32, Option<bool>> {
        r.attempts
            .iter()
            .map(|a| (a.attempt, (!a.blocked).then_some(a.exact)))
            .collect()
    };
    let (before, after) = (outcomes(b), outcomes(c));
    let mut up = 0;
    let mut down = 0;
    for (n, x) in &before {
        if let (Some(x), Some(Some(y))) = (x, after.get(n)) {
            up += u32::from(!x && *y);
            down += u32::from(*x && !y);
        }
    }
    let rates = (b.summary.exact_rate, c.summary.exact_rate);
    let reason = if not_comparable.is_some() {
        not_comparable
    } else if rates.0.is_none() {
        Some("the baseline measured none of its attempts".to_string())
    } else if rates.1.is_none() {
        Some("the candidate measured none of its attempts".to_string())
    } else {
        None
    };
    // With no paired flip, attempts that pair with none (other repeats, or
    // blocked on one side) can still move the rate: its direction decides.
    let by_rate = match rates {
        (Some(x), Some(y)) if y < x => Class::Regressed,
        (Some(x), Some(y)) if y > x => Class::Improved,
        _ => Class::Unchanged,
    };
    // Issue 27: a contract (or a known gap) that flips moves the class
    // like an answer that flips; a contract starting to fail is a
    // regression even when every answer stayed exact.
    let expectations = expectation_flips(b, c);
    let (e_up, e_down) = expectations
        .iter()
        .filter(|f| f.directional())
        .fold((0, 0), |(u, d), f| (u + f.up, d + f.down));
    let (up_any, down_any) = (up + e_up > 0, down + e_down > 0);
    let class = match (&reason, up_any, down_any) {
        (Some(_), _, _) => Class::NotComparable,
        (None, true, true) => Class::Mixed,
        (None, true, false) => Class::Improved,
        (None, false, true) => Class::Regressed,
        (None, false, false) => by_rate,
    };
    let beyond_repeats = class != Class::NotComparable
        && b.summary.measured > 0
        && b.summary.exact == b.summary.measured
        && c.summary.measured > 0
        && c.summary.exact < c.summary.measured;
    QuestionChange {
        id: id.to_string(),
        class,
        reason,
        before,
        after,
        up,
        down,
        rates,
        beyond_repeats,
        expectations,
    }
}

/// The mean of `what` per measured attempt, per question first, over the
/// question pairs, before and after; `None` when an attempt does not
/// report it.
fn mean_change(pairs: &[(&QuestionResult, &QuestionResult)], what: Measure) -> Option<Change> {
    let per_question = |r: &QuestionResult| -> Option<f64> {
        let values: Option<Vec<f64>> = r
            .attempts
            .iter()
            .filter(|a| !a.blocked)
            .map(|a| what.of(a))
            .collect();
        stats::mean(&values?)
    };
    let mut before = Vec::new();
    let mut after = Vec::new();
    for (b, c) in pairs {
        before.push(per_question(b)?);
        after.push(per_question(c)?);
    }
    Some(Change {
        before: stats::mean(&before)?,
        after: stats::mean(&after)?,
    })
}

/// The expectations that flipped, one row per question and expectation
/// (issue 27): type, the held marks before → after, and the direction;
/// `None` when none flipped.
pub fn expectation_flips_grid(c: &ConditionChange) -> Option<Grid> {
    let rows: Vec<(&QuestionChange, &ExpectationFlip)> = c
        .questions
        .iter()
        .flat_map(|q| q.expectations.iter().map(move |e| (q, e)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut grid = Grid::new(vec![
        Column::new("question", Align::Left),
        Column::new("expectation", Align::Left),
        Column::new("type", Align::Left),
        Column::new("held before → after", Align::Center),
        Column::new("change", Align::Left),
        Column::new("fails the gate", Align::Center),
    ]);
    for (q, e) in rows {
        let tone = match (
            e.contract_regressed || e.unjudgeable,
            e.down > 0,
            e.directional(),
        ) {
            (true, _, _) => "bad",
            _ if e.unjudged_before && e.up == 0 => "soft",
            (_, true, true) => "soft",
            (_, false, true) => "ok",
            _ => "muted",
        };
        grid.rows.push(vec![
            Cell::Code(q.id.clone()),
            Cell::Code(e.id.clone()),
            Cell::Text(e.kind.clone()),
            Cell::Text(format!("{} → {}", marks(&e.before), marks(&e.after))),
            Cell::Text(match &e.redefined {
                Some(how) => format!("{} ({how})", e.direction()),
                None => e.direction().into(),
            })
            .toned(tone),
            Cell::Text(if e.contract_regressed || e.unjudgeable {
                "yes".into()
            } else {
                "no".into()
            }),
        ]);
    }
    Some(grid)
}

/// A question's attempts as marks, `✓✗—` by attempt number.
pub fn marks(attempts: &BTreeMap<u32, Option<bool>>) -> String {
    attempts
        .values()
        .map(|a| match a {
            Some(true) => '✓',
            Some(false) => '✗',
            None => '—',
        })
        .collect()
}

/// The per-condition table: counts per class, Δ exact with its interval,
/// McNemar, and the mean changes.
pub fn conditions_grid(comparison: &Comparison) -> Grid {
    let mut columns = vec![
        Column::new("condition", Align::Left),
        Column::new("questions", Align::Right),
    ];
    for class in Class::ALL {
        columns.push(Column::new(class.word(), Align::Right));
    }
    columns.push(Column::new("exact before → after", Align::Center));
    columns.push(Column::new("Δ exact", Align::Right));
    columns.push(Column::new("95% paired bootstrap", Align::Center));
    columns.push(Column::new("McNemar p (b/c)", Align::Right));
    columns.push(Column::new("Δ mean F1", Align::Right));
    let mut grid = Grid::new(columns);
    for c in &comparison.conditions {
        let mut row = vec![Cell::Text(c.label()), Cell::Count(c.questions.len() as u64)];
        for class in Class::ALL {
            let n = c.count(class);
            let cell = Cell::Count(n as u64);
            row.push(if n > 0 && class != Class::Unchanged {
                cell.toned(class.tone())
            } else {
                cell
            });
        }
        let rates = comparison_rates(c);
        row.push(Cell::Text(format!(
            "{} → {}",
            crate::format::rate(rates.0),
            crate::format::rate(rates.1)
        )));
        row.push(Cell::Signed(c.exact.map(|d| d.estimate)));
        row.push(Cell::SignedInterval(
            c.exact.and_then(|d| d.interval).map(Into::into),
        ));
        row.push(Cell::Text(c.mcnemar.map_or_else(
            || crate::format::NONE.to_string(),
            |t| format!("{} ({}/{})", crate::format::fixed(t.p, 3), t.b, t.c),
        )));
        row.push(Cell::Signed(c.means[&Measure::MeanF1].map(|m| m.delta())));
        grid.rows.push(row);
    }
    grid
}

/// Mean exact rate over comparable questions, before and after.
fn comparison_rates(c: &ConditionChange) -> (Option<f64>, Option<f64>) {
    let pairs: Vec<(f64, f64)> = c
        .questions
        .iter()
        .filter(|q| q.class != Class::NotComparable)
        .filter_map(|q| Some((q.rates.0?, q.rates.1?)))
        .collect();
    (
        stats::mean(&pairs.iter().map(|p| p.0).collect::<Vec<_>>()),
        stats::mean(&pairs.iter().map(|p| p.1).collect::<Vec<_>>()),
    )
}

/// The mean changes of one condition: one row per measure.
pub fn means_grid(c: &ConditionChange) -> Grid {
    let mut grid = Grid::new(vec![
        Column::new("per measured attempt", Align::Left),
        Column::new("baseline", Align::Right),
        Column::new("candidate", Align::Right),
        Column::new("Δ", Align::Right),
    ]);
    for what in Measure::ALL {
        let digits = what.digits();
        let show = |v: Option<f64>| {
            Cell::Text(v.map_or_else(
                || "not reported".to_string(),
                |v| crate::format::fixed(v, digits),
            ))
        };
        let change = c.means[&what];
        grid.rows.push(vec![
            Cell::Text(what.name().to_string()),
            show(change.map(|m| m.before)),
            show(change.map(|m| m.after)),
            Cell::Text(change.map_or_else(
                || crate::format::NONE.to_string(),
                |m| crate::format::signed_fixed(m.delta(), digits),
            )),
        ]);
    }
    grid
}

/// The questions that changed (every class but unchanged), regressions
/// first, then by id.
pub fn questions_grid(c: &ConditionChange) -> Grid {
    let mut grid = Grid::new(vec![
        Column::new("question", Align::Left),
        Column::new("class", Align::Left),
        Column::new("attempts before → after", Align::Center),
        Column::new("exact before", Align::Right),
        Column::new("exact after", Align::Right),
        Column::new("beyond repeats", Align::Center),
    ]);
    let mut changed: Vec<&QuestionChange> = c
        .questions
        .iter()
        .filter(|q| q.class != Class::Unchanged)
        .collect();
    changed.sort_by(|a, b| (a.class, &a.id).cmp(&(b.class, &b.id)));
    for q in changed {
        let class = match &q.reason {
            Some(why) => format!("{}: {why}", q.class.word()),
            None => q.class.word().to_string(),
        };
        grid.rows.push(vec![
            Cell::Code(q.id.clone()),
            Cell::Text(class).toned(q.class.tone()),
            Cell::Text(format!("{} → {}", marks(&q.before), marks(&q.after))),
            Cell::Rate(q.rates.0),
            Cell::Rate(q.rates.1),
            Cell::Text(if q.beyond_repeats {
                "yes".into()
            } else {
                "no".into()
            }),
        ]);
    }
    grid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_is_the_exact_binomial_on_discordant_questions() {
        // b = 4, c = 0: p = 2 · (1/2)^4 = 0.125.
        let mut outcomes = vec![(true, false); 4];
        outcomes.extend(vec![(true, true); 6]);
        let t = McNemar::test(&outcomes);
        assert_eq!((t.questions, t.b, t.c), (10, 4, 0));
        assert!((t.p - 0.125).abs() < 1e-12, "{}", t.p);
        // b = 5, c = 1: p = 2 · (1 + 6) / 64 = 0.21875.
        let mut outcomes = vec![(true, false); 5];
        outcomes.push((false, true));
        assert!((McNemar::test(&outcomes).p - 0.21875).abs() < 1e-12);
        // Balanced: p is capped at 1; none discordant: 1.
        assert_eq!(McNemar::test(&[(true, false), (false, true)]).p, 1.0);
        assert_eq!(McNemar::test(&[(true, true)]).p, 1.0);
        assert_eq!(McNemar::test(&[]).p, 1.0);
        // b = 10, c = 0: 2 / 1024.
        assert!((McNemar::test(&[(true, false); 10]).p - 2.0 / 1024.0).abs() < 1e-12);
    }

    #[test]
    fn marks_show_each_attempt() {
        let attempts: BTreeMap<u32, Option<bool>> = [(1, Some(true)), (2, None), (3, Some(false))]
            .into_iter()
            .collect();
        assert_eq!(marks(&attempts), "✓—✗");
    }
}
