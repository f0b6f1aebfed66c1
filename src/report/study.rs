//! The numbers of a study: conditions drawn from one or more runs roots,
//! side by side, with the statistics that tables, figures and prose quote
//! (`docs/PUBLISHING.md`, "The statistics": each study reads the same episodes as a
//! summary and record by record).
//!
//! This is aggregation only; `render` formats it. Every figure is computed
//! from `result.json` and `conditions/*.json` as recorded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Serialize;

use super::stats::{self, Interval, PairedDelta};
use crate::runs::records::{ConditionFile, QuestionResult};

/// One condition of a study: a recorded condition of a runs root, with the
/// key that prose uses to name it and the label readers see.
#[derive(Debug, Clone)]
pub struct StudyCondition {
    /// Short name used in generated regions (`condition=KEY`).
    pub key: String,
    /// Label in tables and figures.
    pub label: String,
    /// The runs root it was recorded in.
    pub root: PathBuf,
    /// The condition as recorded.
    pub condition: ConditionFile,
    /// Question id → its result under this condition.
    pub results: BTreeMap<String, QuestionResult>,
    /// Question id → attempt → the strategy the scripted agent recorded
    /// playing ([`super::view::QuestionView::played`]); empty for other
    /// agent hosts.
    pub played: BTreeMap<String, BTreeMap<u32, String>>,
    /// The agent it belongs to, in a study with `[[agents]]` (its
    /// [`StudyAgent::key`]); `None` otherwise.
    pub agent: Option<String>,
    /// The condition's key without the agent (`[[conditions]]`'s `key`):
    /// equal to [`StudyCondition::key`] without agents, else `key` is
    /// `AGENT/BASE`.
    pub base_key: String,
    /// The condition's label without the agent's.
    pub base_label: String,
    /// The bootstrap interval of the exact rate, drawn once: every figure,
    /// table and region asks for [`StudyCondition::stats`] (it depends on
    /// the results only, never on key or label).
    pub interval: std::sync::OnceLock<Option<Interval>>,
}

/// An agent of a study (`[[agents]]` in `study.toml`): one runs root
/// recorded by one agent host or model over the study's corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StudyAgent {
    /// How prose and condition keys name it (`AGENT/CONDITION`).
    pub key: String,
    /// How tables and figures show it.
    pub label: String,
}

/// The study's conditions, in the study's order.
#[derive(Debug, Clone, Default)]
pub struct StudyData {
    /// Conditions in the order tables and figures show them: with agents,
    /// agent by agent, each agent's conditions in `[[conditions]]` order.
    pub conditions: Vec<StudyCondition>,
    /// The agents, in `study.toml` order; empty for a study without
    /// `[[agents]]`.
    pub agents: Vec<StudyAgent>,
    /// Question id → the question as the agent read it, from the roots'
    /// views ([`super::view::QuestionView::text`]).
    pub texts: BTreeMap<String, String>,
}

/// One question under one condition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// Exact attempts.
    pub exact: u32,
    /// Measured (not blocked) attempts.
    pub measured: u32,
    /// Attempts recorded.
    pub attempts: u32,
    /// `exact ÷ measured`; `None` when nothing was measured.
    pub rate: Option<f64>,
    /// Mean F1 over measured attempts.
    pub mean_f1: Option<f64>,
}

/// What the measured attempts that played one strategy came to
/// ([`StudyData::strategies`]): how far each corruption of the scripted
/// agent gets through each scoring tier (`docs/SCORING.md`, "The two
/// tiers").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StrategyCount {
    /// The strategy (`oracle`, `decimals-4`, …), `None` for attempts that
    /// record none.
    pub strategy: Option<String>,
    /// Measured attempts.
    pub attempts: u32,
    /// Exact in the normalized tier.
    pub exact: u32,
    /// Exact in the strict tier (cell text as written).
    pub strict_exact: u32,
    /// Exact in the normalized tier and not in the strict one: the
    /// attempts the serialization adjustments alone made exact.
    pub normalized_only: u32,
}

/// pass@k and pass^k at one `k`, each the mean over measured questions.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PassK {
    /// Attempts drawn.
    pub k: u32,
    /// At least one of `k` exact.
    pub pass_at_k: f64,
    /// All `k` exact.
    pub pass_hat_k: f64,
}

/// Everything tables and figures show about one condition.
#[derive(Debug, Clone, PartialEq)]
pub struct ConditionStats {
    /// [`StudyCondition::key`].
    pub key: String,
    /// [`StudyCondition::label`].
    pub label: String,
    /// Agent host (`claude`, `scripted:…`).
    pub agent: String,
    /// The model as resolved, with the one asked for beside it where they
    /// differ (else as asked), `None` when neither was recorded (a
    /// scripted agent).
    pub model: Option<String>,
    /// The agent: host, host version and model, as every table, figure
    /// and page names it (issue 25, section 5).
    pub identity: super::AgentIdentity,
    /// Questions with a result.
    pub questions: u32,
    /// Questions with at least one measured attempt.
    pub measured_questions: u32,
    /// Attempts recorded.
    pub attempts: u32,
    /// Attempts measured (not blocked).
    pub measured_attempts: u32,
    /// Attempts blocked.
    pub blocked_attempts: u32,
    /// Exact measured attempts (normalized tier).
    pub exact_attempts: u32,
    /// Mean over measured questions of their exact rate (as the report).
    pub exact_rate: Option<f64>,
    /// The same in the strict tier.
    pub strict_exact_rate: Option<f64>,
    /// Mean order-exact rate over questions whose key is ordered.
    pub ordered_rate: Option<f64>,
    /// Mean over measured questions of their mean F1.
    pub mean_f1: Option<f64>,
    /// `exact_attempts ÷ measured_attempts`.
    pub attempt_rate: Option<f64>,
    /// 95% percentile bootstrap interval of [`ConditionStats::exact_rate`]
    /// over the measured questions ([`stats::bootstrap_mean`]): the
    /// interval of the very number the tables show (a Wilson interval
    /// over attempts was centred on the pooled rate, which differs from
    /// the mean over questions when questions have unequal measured
    /// attempts).
    pub interval: Option<Interval>,
    /// Questions always exact.
    pub always_exact: u32,
    /// Questions ever exact.
    pub ever_exact: u32,
    /// Questions exact sometimes but not always.
    pub flaky: u32,
    /// F1 of every measured attempt, question by question, attempt order.
    pub f1: Vec<f64>,
    /// Wall seconds of every measured attempt (same order as `f1`).
    pub wall_s: Vec<f64>,
    /// Of which waiting on the server, seconds (same order).
    pub server_s: Vec<f64>,
    /// Mean wall seconds per measured attempt.
    pub mean_wall_s: Option<f64>,
    /// Mean server seconds per measured attempt.
    pub mean_server_s: Option<f64>,
    /// Calls per tool over every attempt (`submit_csv` included).
    pub tool_calls: BTreeMap<String, usize>,
    /// The fewest measured attempts of any measured question: `k` of
    /// [`ConditionStats::pass`] runs from 1 to this.
    pub repeat: u32,
    /// pass@k and pass^k for `k` in `1..=repeat`.
    pub pass: Vec<PassK>,
}

/// How a question divides the conditions that measured it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Separation {
    /// The question id.
    pub question: String,
    /// Keys of the conditions that answered it exactly every time.
    pub always: Vec<String>,
    /// Keys of the conditions that never answered it exactly.
    pub never: Vec<String>,
}

impl StudyCondition {
    /// The mean cost per attempt in US dollars, when every attempt's host
    /// reported one (`None` otherwise: a partial mean is no condition's).
    pub fn mean_cost(&self) -> Option<f64> {
        let costs: Vec<f64> = self
            .results
            .values()
            .flat_map(|r| r.attempts.iter())
            .map(|a| a.usage.as_ref().and_then(crate::runs::records::Usage::cost))
            .collect::<Option<Vec<f64>>>()?;
        (!costs.is_empty()).then(|| costs.iter().sum::<f64>() / costs.len() as f64)
    }

    /// The question's figures under this condition.
    pub fn cell(&self, question: &str) -> Option<Cell> {
        let s = &self.results.get(question)?.summary;
        Some(Cell {
            exact: s.exact,
            measured: s.measured,
            attempts: s.attempts,
            rate: s.exact_rate,
            mean_f1: s.mean_f1,
        })
    }

    /// Everything tables and figures show about this condition.
    pub fn stats(&self) -> ConditionStats {
        let a = &self.condition.aggregate;
        let mut f1 = Vec::new();
        let mut wall_s = Vec::new();
        let mut server_s = Vec::new();
        let mut tool_calls: BTreeMap<String, usize> = BTreeMap::new();
        let mut exact_attempts = 0;
        let mut measured_attempts = 0;
        for result in self.results.values() {
            for attempt in &result.attempts {
                for tool in &attempt.tools_called {
                    *tool_calls.entry(tool.clone()).or_default() += 1;
                }
                if attempt.blocked {
                    continue;
                }
                measured_attempts += 1;
                exact_attempts += u32::from(attempt.exact);
                f1.push(attempt.f1);
                wall_s.push(attempt.wall_s);
                server_s.push(attempt.server_s);
            }
        }
        let measured: Vec<_> = self
            .results
            .values()
            .map(|r| &r.summary)
            .filter(|s| s.measured > 0)
            .collect();
        let repeat = measured.iter().map(|s| s.measured).min().unwrap_or(0);
        let pass = (1..=repeat)
            .map(|k| {
                let at: Vec<f64> = measured
                    .iter()
                    .filter_map(|s| stats::pass_at_k(s.measured, s.exact, k))
                    .collect();
                let hat: Vec<f64> = measured
                    .iter()
                    .filter_map(|s| stats::pass_hat_k(s.measured, s.exact, k))
                    .collect();
                PassK {
                    k,
                    pass_at_k: stats::mean(&at).unwrap_or(0.0),
                    pass_hat_k: stats::mean(&hat).unwrap_or(0.0),
                }
            })
            .collect();
        let identity = super::AgentIdentity::of(&self.condition);
        ConditionStats {
            key: self.key.clone(),
            label: self.label.clone(),
            agent: self.condition.identity.agent.clone(),
            model: identity.model(),
            identity,
            questions: a.questions,
            measured_questions: a.measured_questions,
            attempts: a.attempts,
            measured_attempts,
            blocked_attempts: a.blocked_attempts,
            exact_attempts,
            exact_rate: a.exact_rate,
            strict_exact_rate: a.strict_exact_rate,
            ordered_rate: a.ordered_rate,
            mean_f1: a.mean_f1,
            attempt_rate: (measured_attempts > 0)
                .then(|| f64::from(exact_attempts) / f64::from(measured_attempts)),
            interval: *self.interval.get_or_init(|| {
                stats::bootstrap_mean(
                    &measured
                        .iter()
                        .filter_map(|s| s.exact_rate)
                        .collect::<Vec<f64>>(),
                )
            }),
            always_exact: a.always_exact,
            ever_exact: a.ever_exact,
            flaky: a.flaky,
            f1,
            wall_s,
            server_s,
            mean_wall_s: a.mean_wall_s,
            mean_server_s: a.mean_server_s,
            tool_calls,
            repeat,
            pass,
        }
    }
}

impl StudyCondition {
    /// The basis of this condition's numbers when they rest on fewer
    /// questions than `corpus` (the study's, [`StudyData::corpus`]): `8 of
    /// 12 questions; 4 excluded` (excluded: `meta.excluded`, by `run
    /// --exclude` or by hand), with `, 1 not recorded` for a question of
    /// the corpus it neither recorded nor excluded; `None` when it covers
    /// the corpus. Every table and number that shows the condition says it
    /// (`docs/PUBLISHING.md`, "Exclusions and incomplete roots"; issue 24,
    /// item 14).
    pub fn basis(&self, corpus: &BTreeSet<String>) -> Option<String> {
        let lacking: Vec<&String> = corpus
            .iter()
            .filter(|id| !self.results.contains_key(*id))
            .collect();
        if lacking.is_empty() {
            return None;
        }
        let excluded = lacking
            .iter()
            .filter(|id| self.condition.excludes(id))
            .count();
        let mut parts = Vec::new();
        if excluded > 0 {
            parts.push(format!("{excluded} excluded"));
        }
        if lacking.len() > excluded {
            parts.push(format!("{} not recorded", lacking.len() - excluded));
        }
        Some(format!(
            "{} of {} question{}; {}",
            corpus.len() - lacking.len(),
            corpus.len(),
            crate::format::plural(corpus.len()),
            parts.join(", ")
        ))
    }
}

impl StudyData {
    /// Which agents played the study's conditions, by their labels, in
    /// sentences ([`super::agents_note`]): what a region or figure that
    /// names conditions by label alone says of host, host version and
    /// model (issue 25, section 5); `None` for a study with no condition.
    pub fn agents_note(&self) -> Option<String> {
        let agents: Vec<(&str, super::AgentIdentity)> = self
            .conditions
            .iter()
            .map(|c| (c.label.as_str(), super::AgentIdentity::of(&c.condition)))
            .collect();
        super::agents_note(agents.iter().map(|(label, a)| (*label, a)))
    }

    /// The study's corpus: every question some condition recorded or
    /// excluded (`meta.excluded`), sorted by id. A condition that lacks
    /// some of it says so beside its numbers ([`StudyCondition::basis`]).
    pub fn corpus(&self) -> BTreeSet<String> {
        self.conditions
            .iter()
            .flat_map(|c| {
                c.results
                    .keys()
                    .cloned()
                    .chain(c.condition.exclusions().into_iter().map(|e| e.id.clone()))
            })
            .collect()
    }

    /// One line per condition whose numbers rest on fewer questions than
    /// the corpus: `LABEL: 8 of 12 questions; 4 excluded: id (reason), …;
    /// not recorded: id, …`, ids through `code` and words through `text`
    /// (the syntax's escapes); empty when every condition covers the
    /// corpus. Tables of several conditions carry these lines as their
    /// footnote (issue 24, item 14).
    pub fn basis_lines(
        &self,
        code: &dyn Fn(&str) -> String,
        text: &dyn Fn(&str) -> String,
    ) -> Vec<String> {
        let corpus = self.corpus();
        self.conditions
            .iter()
            .filter_map(|c| {
                let basis = c.basis(&corpus)?;
                let mut line = format!("{}: {basis}", text(&c.label));
                if let Some(list) = c.condition.exclusions_text(code, text) {
                    line.push_str(&format!("; excluded: {list}"));
                }
                let unrecorded: Vec<String> = corpus
                    .iter()
                    .filter(|id| !c.results.contains_key(*id) && !c.condition.excludes(id))
                    .map(|id| code(id))
                    .collect();
                if !unrecorded.is_empty() {
                    line.push_str(&format!("; not recorded: {}", unrecorded.join(", ")));
                }
                Some(line)
            })
            .collect()
    }

    /// The text of question `id`, when a prompt of it was recorded.
    pub fn text(&self, id: &str) -> Option<String> {
        self.texts.get(id).cloned()
    }

    /// Every question any condition has a result for, sorted by id.
    pub fn questions(&self) -> Vec<String> {
        let set: BTreeSet<&String> = self
            .conditions
            .iter()
            .flat_map(|c| c.results.keys())
            .collect();
        set.into_iter().cloned().collect()
    }

    /// The condition keys, comma-separated (for errors that list them).
    pub fn keys(&self) -> String {
        self.conditions
            .iter()
            .map(|c| c.key.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The condition with `key`.
    pub fn condition(&self, key: &str) -> Option<&StudyCondition> {
        self.conditions.iter().find(|c| c.key == key)
    }

    /// The baseline `of` is compared with: the condition whose
    /// [`StudyCondition::base_key`] is `base` and whose agent is `of`'s
    /// (deltas are taken within an agent, never across: issue 12, "A study
    /// spans several roots"). Without `of`, the first such condition.
    pub fn baseline_of(&self, base: &str, of: Option<&StudyCondition>) -> Option<&StudyCondition> {
        self.conditions
            .iter()
            .filter(|c| c.base_key == base || c.key == base)
            .find(|c| of.is_none_or(|o| o.agent == c.agent))
    }

    /// Every (baseline, candidate) pair a deltas table shows: each
    /// condition against its own agent's condition `base`, agent by agent.
    pub fn delta_pairs(&self, base: &str) -> Vec<(&StudyCondition, &StudyCondition)> {
        self.conditions
            .iter()
            .filter_map(|c| {
                let b = self.baseline_of(base, Some(c))?;
                (b.key != c.key).then_some((b, c))
            })
            .collect()
    }

    /// The conditions of agent `key` alone, keyed and labelled without it
    /// (what a per-agent figure shows).
    pub fn of_agent(&self, key: &str) -> StudyData {
        StudyData {
            conditions: self
                .conditions
                .iter()
                .filter(|c| c.agent.as_deref() == Some(key))
                .map(|c| {
                    let mut c = c.clone();
                    c.key = c.base_key.clone();
                    c.label = c.base_label.clone();
                    c.agent = None;
                    c
                })
                .collect(),
            agents: Vec::new(),
            texts: self.texts.clone(),
        }
    }

    /// The conditions' base keys, each once, in study order.
    pub fn base_keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = Vec::new();
        for c in &self.conditions {
            if !keys.contains(&c.base_key.as_str()) {
                keys.push(&c.base_key);
            }
        }
        keys
    }

    /// The measured attempts of `only` (of every condition when `None`)
    /// by the strategy the scripted agent recorded playing, sorted by
    /// strategy, with the attempts that record none last (a model's, or a
    /// scripted attempt whose `agent.json` is gone); empty when nothing
    /// was measured. Blocked attempts measured nothing and are left out,
    /// as from every rate.
    pub fn strategies(&self, only: Option<&StudyCondition>) -> Vec<StrategyCount> {
        let mut counts: BTreeMap<Option<&str>, StrategyCount> = BTreeMap::new();
        let conditions: Vec<&StudyCondition> = match only {
            Some(c) => vec![c],
            None => self.conditions.iter().collect(),
        };
        for c in conditions {
            for (q, result) in &c.results {
                for a in result.attempts.iter().filter(|a| !a.blocked) {
                    let strategy = c
                        .played
                        .get(q)
                        .and_then(|p| p.get(&a.attempt))
                        .map(String::as_str);
                    let n = counts.entry(strategy).or_insert_with(|| StrategyCount {
                        strategy: strategy.map(str::to_string),
                        ..StrategyCount::default()
                    });
                    n.attempts += 1;
                    n.exact += u32::from(a.exact);
                    n.strict_exact += u32::from(a.strict_exact);
                    n.normalized_only += u32::from(a.exact && !a.strict_exact);
                }
            }
        }
        // `None` sorts first in a map; it goes last.
        let mut out: Vec<StrategyCount> = counts.into_values().collect();
        let unrecorded_first = out.first().is_some_and(|c| c.strategy.is_none());
        out.rotate_left(usize::from(unrecorded_first));
        out
    }

    /// The paired delta `candidate − baseline` of exact rates over the
    /// questions both measured.
    pub fn delta(
        &self,
        baseline: &StudyCondition,
        candidate: &StudyCondition,
    ) -> Option<PairedDelta> {
        let pairs: Vec<(f64, f64)> = self
            .questions()
            .iter()
            .filter_map(|q| {
                let b = baseline.cell(q)?.rate?;
                let c = candidate.cell(q)?.rate?;
                Some((b, c))
            })
            .collect();
        stats::paired_delta(&pairs)
    }

    /// Questions that defeat every condition: measured by at least one and
    /// never answered exactly by any that measured it.
    pub fn defeats_every_condition(&self) -> Vec<String> {
        self.questions()
            .into_iter()
            .filter(|q| {
                let cells: Vec<Cell> = self
                    .conditions
                    .iter()
                    .filter_map(|c| c.cell(q))
                    .filter(|c| c.measured > 0)
                    .collect();
                !cells.is_empty() && cells.iter().all(|c| c.exact == 0)
            })
            .collect()
    }

    /// Questions that separate conditions: some condition answered exactly
    /// on every measured attempt while another never did.
    pub fn separating(&self) -> Vec<Separation> {
        self.questions()
            .into_iter()
            .filter_map(|q| {
                let mut always = Vec::new();
                let mut never = Vec::new();
                for c in &self.conditions {
                    match c.cell(&q) {
                        Some(cell) if cell.measured > 0 && cell.exact == cell.measured => {
                            always.push(c.key.clone())
                        }
                        Some(cell) if cell.measured > 0 && cell.exact == 0 => {
                            never.push(c.key.clone())
                        }
                        _ => {}
                    }
                }
                (!always.is_empty() && !never.is_empty()).then_some(Separation {
                    question: q,
                    always,
                    never,
                })
            })
            .collect()
    }
}

impl StudyData {
    /// Every condition of one loaded runs root, in name order, each keyed
    /// by its condition name and labelled as the root's README labels it.
    pub fn from_root(view: &super::view::RootView) -> StudyData {
        let mut study = StudyData::default();
        for (name, condition) in &view.conditions {
            let results = view
                .questions
                .iter()
                .filter_map(|(q, question)| Some((q.clone(), question.results.get(name)?.clone())))
                .collect();
            let played = view
                .questions
                .iter()
                .filter_map(|(q, question)| Some((q.clone(), question.played.get(name)?.clone())))
                .collect();
            study.conditions.push(StudyCondition {
                key: name.clone(),
                label: condition.label.clone(),
                agent: None,
                base_key: name.clone(),
                base_label: condition.label.clone(),
                root: view.path.clone(),
                condition: condition.file.clone(),
                results,
                played,
                interval: std::sync::OnceLock::new(),
            });
        }
        study.texts = view
            .questions
            .iter()
            .filter_map(|(id, q)| Some((id.clone(), q.text.clone()?)))
            .collect();
        study
    }
}

/// Where a study's figures go, inside the study folder.
pub const FIGURES_DIR: &str = "figures";

/// A study: `study.toml` and the runs roots it names, loaded
/// ([`super::study_file::load`]).
#[derive(Debug, Clone)]
pub struct StudyView {
    /// The study folder.
    pub dir: PathBuf,
    /// Its title (`title` in `study.toml`).
    pub title: String,
    /// The runs roots it reads, resolved against the folder.
    pub roots: Vec<PathBuf>,
    /// The figures it publishes, in `study.toml` order.
    pub figures: Vec<FigureKind>,
    /// The condition deltas are computed against.
    pub baseline: String,
    /// The numbers.
    pub data: StudyData,
    /// Files that could not be read (named); the rest is published.
    pub problems: Vec<String>,
    /// The study's prose: every `*.md` directly in its folder, by path,
    /// with its text as read.
    pub prose: BTreeMap<PathBuf, String>,
    /// The study's name: its folder's own name without `results-`.
    pub name: String,
    /// Each of [`StudyView::roots`] by its folder's own name.
    pub root_names: Vec<String>,
    /// Each of [`StudyView::roots`] with every link resolved, when it
    /// could be.
    pub root_reals: Vec<Option<PathBuf>>,
    /// The comparisons of two runs roots it names (`[[comparisons]]`), in
    /// `study.toml` order.
    pub comparisons: Vec<StudyComparison>,
    /// Where it stands among studies (`order = N`; lowest first, then those
    /// without one, by folder): the site's index and `paper tables` list
    /// studies so, as a series is read (each the control for the next).
    pub order: Option<i64>,
}

/// Sorts `studies` as they are read ([`StudyView::order`]), stable.
pub fn sort_studies(studies: &mut [StudyView]) {
    studies.sort_by_key(|s| (s.order.is_none(), s.order));
}

/// A comparison of two runs roots a study names (`[[comparisons]]` in
/// `study.toml`): `build` gives it a site page and fills the
/// `okn:comparison key=KEY` region with it.
#[derive(Debug, Clone)]
pub struct StudyComparison {
    /// How prose names it (`key=`).
    pub key: String,
    /// Its title.
    pub title: String,
    /// The two roots compared, named as `study.toml` names them.
    pub comparison: super::compare::Comparison,
}

/// One file of a figure ([`StudyView::figure_files`]).
#[derive(Debug, Clone)]
pub struct FigureFile {
    /// Its path, `figures/STEM.svg` in the study folder.
    pub path: PathBuf,
    /// Its file stem: the figure's name, with `-AGENT` for a per-agent one.
    pub stem: String,
    /// The agent it shows alone, for a per-agent figure.
    pub agent: Option<StudyAgent>,
}

impl StudyView {
    /// The files of figure `kind`: `figures/NAME.svg`, or, for a figure
    /// drawn per agent ([`FigureKind::per_agent`]) in a study with agents,
    /// `figures/NAME-AGENT.svg` for each agent in order.
    pub fn figure_files(&self, kind: FigureKind) -> Vec<FigureFile> {
        let file = |stem: String, agent: Option<StudyAgent>| FigureFile {
            path: self.dir.join(FIGURES_DIR).join(format!("{stem}.svg")),
            stem,
            agent,
        };
        if kind.per_agent() && !self.data.agents.is_empty() {
            self.data
                .agents
                .iter()
                .map(|a| file(format!("{}-{}", kind.name(), a.key), Some(a.clone())))
                .collect()
        } else {
            vec![file(kind.name().to_string(), None)]
        }
    }

    /// The numbers figure file `file` draws: the agent's conditions alone
    /// for a per-agent file, else the whole study.
    pub fn figure_data(&self, file: &FigureFile) -> std::borrow::Cow<'_, StudyData> {
        match &file.agent {
            Some(agent) => std::borrow::Cow::Owned(self.data.of_agent(&agent.key)),
            None => std::borrow::Cow::Borrowed(&self.data),
        }
    }
}

/// The figures a study can ask for (`figures = [...]` in `study.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureKind {
    /// Exact rate per condition with a 95% interval.
    ExactRate,
    /// Question × condition heatmap of exact rates.
    Heatmap,
    /// F1 distribution per condition.
    F1,
    /// Wall time split into server and agent time.
    WallTime,
    /// Tool-call counts per tool per condition.
    ToolCalls,
    /// pass@k and pass^k per condition.
    PassK,
    /// Mean cost per attempt per condition, beside its exact rate.
    Cost,
}

impl FigureKind {
    /// Every kind, in the order a study shows them.
    pub const ALL: [FigureKind; 7] = [
        FigureKind::ExactRate,
        FigureKind::Heatmap,
        FigureKind::F1,
        FigureKind::WallTime,
        FigureKind::ToolCalls,
        FigureKind::PassK,
        FigureKind::Cost,
    ];

    /// The name in `study.toml` and the file stem (`figures/NAME.svg`).
    pub fn name(self) -> &'static str {
        match self {
            FigureKind::ExactRate => "exact-rate",
            FigureKind::Heatmap => "heatmap",
            FigureKind::F1 => "f1",
            FigureKind::WallTime => "wall-time",
            FigureKind::ToolCalls => "tool-calls",
            FigureKind::PassK => "pass-k",
            FigureKind::Cost => "cost",
        }
    }

    /// True for a figure a study with agents draws once per agent (the
    /// heatmap: one grid of questions × conditions per agent, so no cell
    /// sits beside another agent's).
    pub fn per_agent(self) -> bool {
        self == FigureKind::Heatmap
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<FigureKind> {
        FigureKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// A one-sentence caption, and what the reader must know to read it
    /// (which interval, what is averaged).
    pub fn caption(self) -> &'static str {
        match self {
            FigureKind::ExactRate => {
                "Exact rate per condition: the mean over questions of exact attempts over measured attempts, with 95% bootstrap intervals over questions."
            }
            FigureKind::Heatmap => {
                "Exact rate of every question under every condition (exact attempts over measured attempts)."
            }
            FigureKind::F1 => "Distribution of F1 over measured attempts, per condition.",
            FigureKind::WallTime => {
                "Mean wall time per measured attempt, split into time waiting on the server and the agent's own time."
            }
            FigureKind::ToolCalls => "Tool calls per tool and condition, over every attempt.",
            FigureKind::PassK => {
                "pass@k (at least one of k attempts exact) and pass^k (all k exact), mean over questions."
            }
            FigureKind::Cost => {
                "Mean cost per attempt in US dollars as the agent hosts reported it, beside each condition's exact rate; a condition some of whose attempts reported no cost shows none."
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo() -> StudyData {
        let view = super::super::load::root(&crate::testing::demo_root());
        assert!(view.problems.is_empty(), "{:?}", view.problems);
        StudyData::from_root(&view)
    }

    #[test]
    fn strategies_count_each_tier_and_put_the_unrecorded_last() {
        let mut study = demo();
        let c = &mut study.conditions[0];
        // Every attempt of the first question played "b-x", of the
        // second "a-y"; the rest record nothing.
        let questions: Vec<String> = c.results.keys().cloned().collect();
        c.played.clear();
        for (q, name) in questions.iter().zip(["b-x", "a-y"]) {
            let attempts = c.results[q]
                .attempts
                .iter()
                .map(|a| (a.attempt, name.to_string()));
            c.played.insert(q.clone(), attempts.collect());
        }
        // One attempt blocked: it measured nothing.
        let first = &questions[0];
        let result = c.results.get_mut(first).unwrap();
        result.attempts[0].blocked = true;
        let c = &study.conditions[0];
        let counts = study.strategies(Some(c));
        let names: Vec<Option<&str>> = counts.iter().map(|n| n.strategy.as_deref()).collect();
        assert_eq!(names, [Some("a-y"), Some("b-x"), None]);
        let tally = |q: &str| {
            let measured = c.results[q].attempts.iter().filter(|a| !a.blocked);
            measured.fold(StrategyCount::default(), |mut n, a| {
                n.attempts += 1;
                n.exact += u32::from(a.exact);
                n.strict_exact += u32::from(a.strict_exact);
                n.normalized_only += u32::from(a.exact && !a.strict_exact);
                n
            })
        };
        let b = tally(first);
        assert_eq!(
            (counts[1].attempts, counts[1].exact, counts[1].strict_exact),
            (b.attempts, b.exact, b.strict_exact)
        );
        assert_eq!(counts[1].attempts, 2, "the blocked attempt is left out");
        let total: u32 = counts.iter().map(|n| n.attempts).sum();
        assert_eq!(total + 1, c.stats().attempts);
        // Over every condition, the demo root's own record of what was played.
        let study = demo();
        let all = study.strategies(None);
        let get = |name: &str| {
            all.iter()
                .find(|n| n.strategy.as_deref() == Some(name))
                .unwrap()
        };
        // Local names are exact once normalized; strict-exact only where the
        // answer held no IRI to shorten.
        let local = get("local-names");
        assert_eq!(local.exact, local.attempts);
        assert_eq!(local.strict_exact + local.normalized_only, local.attempts);
        assert!(local.normalized_only > 0, "{local:?}");
        let decimals = get("decimals-4");
        assert_eq!(decimals.strict_exact, decimals.attempts);
        assert_eq!(decimals.normalized_only, 0);
        assert!(all.iter().all(|n| n.strategy.is_some()));
    }

    #[test]
    fn stats_agree_with_the_recorded_aggregate() {
        let study = demo();
        assert_eq!(study.conditions.len(), 3);
        assert_eq!(study.questions().len(), 12);
        for c in &study.conditions {
            let s = c.stats();
            assert_eq!(s.measured_attempts + s.blocked_attempts, s.attempts);
            assert_eq!(s.f1.len(), s.measured_attempts as usize);
            assert_eq!(s.repeat, 3);
            assert_eq!(s.pass.len(), 3);
            // pass@1 = pass^1 = the mean question rate when nothing is blocked.
            assert!((s.pass[0].pass_at_k - s.exact_rate.unwrap()).abs() < 1e-12);
            assert!((s.pass[0].pass_hat_k - s.exact_rate.unwrap()).abs() < 1e-12);
            // pass@3 counts questions ever exact; pass^3 those always exact.
            assert!((s.pass[2].pass_at_k - f64::from(s.ever_exact) / 12.0).abs() < 1e-12);
            assert!((s.pass[2].pass_hat_k - f64::from(s.always_exact) / 12.0).abs() < 1e-12);
            let i = s.interval.unwrap();
            assert!(i.low <= s.attempt_rate.unwrap() && s.attempt_rate.unwrap() <= i.high);
            let exact: u32 = c.results.values().map(|r| r.summary.exact).sum();
            assert_eq!(s.exact_attempts, exact);
        }
    }

    #[test]
    fn separating_and_defeating_questions_follow_the_cells() {
        let study = demo();
        for q in study.defeats_every_condition() {
            for c in &study.conditions {
                assert_eq!(c.cell(&q).unwrap().exact, 0, "{q}");
            }
        }
        for s in study.separating() {
            for key in &s.always {
                let cell = study.condition(key).unwrap().cell(&s.question).unwrap();
                assert_eq!(cell.exact, cell.measured);
            }
            for key in &s.never {
                assert_eq!(
                    study
                        .condition(key)
                        .unwrap()
                        .cell(&s.question)
                        .unwrap()
                        .exact,
                    0
                );
            }
        }
        let (a, b) = (&study.conditions[0], &study.conditions[1]);
        let d = study.delta(a, b).unwrap();
        assert_eq!(d.questions, 12);
        let expected =
            b.condition.aggregate.exact_rate.unwrap() - a.condition.aggregate.exact_rate.unwrap();
        assert!((d.estimate - expected).abs() < 1e-12);
    }
}
