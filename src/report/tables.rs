//! Every table the reports show, each described once as a [`Grid`] from
//! the view model: a runs root's conditions and questions (its README, the
//! terminal report, the site's root page), its summary CSV rows, and a
//! study's rates, deltas, questions and separating questions (its regions,
//! the paper's tables). The syntax a table is written in is the render
//! layer's (`render::syntax`).
//!
//! Rates, counts and durations are as `docs/FORMAT.md` defines them; a
//! condition's rate and mean F1 average its questions, each weighing the
//! same.

use std::collections::BTreeMap;

use super::grid::{Align, Cell, Column, Grid};
use super::study::{ConditionStats, StudyCondition, StudyData};
use super::view::{ConditionView, HostView, QuestionView, RootView};
use crate::agent::host::FailureKind;
use crate::runs::identity::Identity;
use crate::runs::records::{
    AttemptResult, MAX_EPISODE_TOKENS, QuestionResult, QuestionSummary, Usage,
};

use Align::{Center, Left, Right};

/// Tools called, with how many times: `run_sparql ×2, submit_csv ×1`, or
/// `—`.
fn tools_text(tools: &crate::runs::records::ByName<usize>) -> String {
    if tools.is_empty() {
        return crate::format::NONE.to_string();
    }
    tools
        .iter()
        .map(|(t, n)| format!("{t} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A question's blocked attempts in words: `—`, `measured nothing`, or
/// `1 of 3 never reached the tools`, with the recorded reasons.
pub fn blocked_text(q: &QuestionSummary) -> String {
    if q.blocked == 0 {
        return crate::format::NONE.to_string();
    }
    let what = if q.measured_nothing {
        "measured nothing".to_string()
    } else {
        format!("{} of {} never reached the tools", q.blocked, q.attempts)
    };
    if q.blocked_reasons.is_empty() {
        what
    } else {
        format!("{what} ({})", q.blocked_reasons.join("; "))
    }
}

/// One question of a runs root under every condition that recorded it,
/// as its README shows it.
pub fn root_question(view: &RootView, question: &QuestionView) -> Grid {
    let mut grid = Grid::new(vec![
        Column::new("condition", Left),
        Column::new("exact", Right),
        Column::new("strict exact", Right),
        Column::new("ordered", Right),
        Column::new("always exact", Center),
        Column::new("mean F1", Right),
        Column::new("queries", Right),
        Column::new("tools called", Left),
        Column::new("wall s", Right),
        Column::new("server s", Right),
        Column::new("blocked", Left),
    ]);
    for (name, result) in &question.results {
        let q = &result.summary;
        grid.push(vec![
            view.label(name).into(),
            Cell::Fraction(q.exact, q.measured),
            Cell::Fraction(q.strict_exact, q.measured),
            q.ordered.map_or_else(
                || crate::format::NONE.into(),
                |o| Cell::Fraction(o, q.measured),
            ),
            Cell::Check((q.measured > 0).then_some(q.always_exact)),
            Cell::Rate(q.mean_f1),
            Cell::Rate(q.mean_queries),
            tools_text(&q.tools_called).into(),
            Cell::Seconds(q.mean_wall_s),
            Cell::Seconds(q.mean_server_s),
            blocked_text(q).into(),
        ]);
    }
    grid
}

/// A figure of a recorded condition that a runs root's condition tables
/// show ([`root_conditions`], [`root_summary`], [`site_conditions`]: one
/// description, three column sets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionFigure {
    /// Its label.
    Label,
    /// The agent as `--agent` named it.
    Agent,
    /// The host's version as it stated it, else its name with `(version
    /// not recorded)` ([`super::AgentIdentity::host_text`]; issue 25,
    /// section 5).
    Host,
    /// The model resolved, with the one asked for beside it where they
    /// differ; `—` for the scripted agent, `not recorded` for a host that
    /// did not say ([`super::AgentIdentity::model_text`]).
    Model,
    /// The effort asked for (`default`: the CLI's own).
    Effort,
    /// Questions.
    Questions,
    /// Attempts.
    Attempts,
    /// The exact rate.
    Exact,
    /// The strict-tier exact rate.
    StrictExact,
    /// The order-sensitive rate.
    Ordered,
    /// Mean F1.
    MeanF1,
    /// Questions always exact.
    AlwaysExact,
    /// Questions ever exact.
    EverExact,
    /// Questions exact sometimes.
    Flaky,
    /// Blocked attempts, counted.
    Blocked,
    /// Blocked attempts and the questions that measured nothing, in words.
    BlockedInWords,
    /// Mean queries per measured attempt.
    Queries,
    /// Soft errors, by kind ([`ConditionView::soft_errors_text`]).
    SoftErrors,
    /// Soft errors, counted.
    SoftErrorCount,
    /// Mean characters the server's replies put into the context per
    /// attempt ([`ConditionView::mean_reply_chars`]).
    ReplyChars,
    /// Mean cost per attempt in US dollars, as the hosts reported it.
    Cost,
    /// First queries that hit the key's graphs, over those judged.
    FirstQueryHit,
    /// Mean exploratory calls before the first query per attempt.
    Exploratory,
    /// Mean wall seconds.
    WallS,
    /// Mean server seconds.
    ServerS,
}

impl ConditionFigure {
    /// The figure's cell for condition `c`.
    fn cell(self, c: &ConditionView) -> Cell {
        let a = &c.file.aggregate;
        let none = || Cell::from(crate::format::NONE);
        match self {
            // A row over fewer questions than the condition's corpus says
            // so where its numbers are shown (issue 24, item 14).
            ConditionFigure::Label => match c.file.excluded_basis() {
                Some(basis) => format!("{} ({basis})", c.label).into(),
                None => c.label.clone().into(),
            },
            ConditionFigure::Agent => c.file.identity.agent.clone().into(),
            ConditionFigure::Host => c.agent().host_text().into(),
            ConditionFigure::Model => c.agent().model_text().into(),
            ConditionFigure::Effort => c
                .file
                .identity
                .effort
                .clone()
                .unwrap_or_else(|| "default".into())
                .into(),
            ConditionFigure::Questions => a.questions.into(),
            ConditionFigure::Attempts => a.attempts.into(),
            ConditionFigure::Exact => Cell::Rate(a.exact_rate),
            ConditionFigure::StrictExact => Cell::Rate(a.strict_exact_rate),
            ConditionFigure::Ordered => Cell::Rate(a.ordered_rate),
            ConditionFigure::MeanF1 => Cell::Rate(a.mean_f1),
            ConditionFigure::AlwaysExact => a.always_exact.into(),
            ConditionFigure::EverExact => a.ever_exact.into(),
            ConditionFigure::Flaky => a.flaky.into(),
            ConditionFigure::Blocked => a.blocked_attempts.into(),
            ConditionFigure::BlockedInWords if a.blocked_attempts == 0 => none(),
            ConditionFigure::BlockedInWords => format!(
                "{} attempt{}, {} question{} measured nothing",
                a.blocked_attempts,
                crate::format::plural(a.blocked_attempts as usize),
                a.measured_nothing,
                crate::format::plural(a.measured_nothing as usize)
            )
            .into(),
            ConditionFigure::Queries => Cell::Rate(a.mean_queries),
            ConditionFigure::SoftErrors => c.soft_errors_text().into(),
            ConditionFigure::SoftErrorCount => c.soft_errors.values().sum::<usize>().into(),
            ConditionFigure::FirstQueryHit => {
                let t = &c.trajectory;
                if t.recorded.0 == 0 || t.recorded.1 > 0 {
                    "not recorded".into()
                } else {
                    format!("{}/{}", t.first_query_hits, t.first_query_judged).into()
                }
            }
            ConditionFigure::Exploratory => {
                let t = &c.trajectory;
                if t.recorded.0 == 0 || t.recorded.1 > 0 {
                    "not recorded".into()
                } else {
                    crate::format::fixed(t.exploratory_calls as f64 / t.recorded.0 as f64, 2).into()
                }
            }
            ConditionFigure::Cost => match (c.cost.mean_cost(), c.cost.costed) {
                (Some(m), _) => crate::format::fixed(m, 4).into(),
                // Some attempts reported a cost: a mean over those alone
                // would be no condition's, so say how many did.
                (None, (some, missing)) if some > 0 => {
                    format!("{some} of {} reported", some + missing).into()
                }
                _ => Cell::from("not reported"),
            },
            ConditionFigure::ReplyChars => c
                .mean_reply_chars()
                .map_or_else(|| Cell::from("not recorded"), |m| format!("{m:.0}").into()),
            ConditionFigure::WallS => Cell::Seconds(a.mean_wall_s),
            ConditionFigure::ServerS => Cell::Seconds(a.mean_server_s),
        }
    }
}

/// A column of a condition table: its header, alignment and figure.
type ConditionColumn = (&'static str, Align, ConditionFigure);

/// One row per recorded condition of `view`, in these columns.
fn conditions_grid(view: &RootView, columns: &[ConditionColumn]) -> Grid {
    let mut grid = Grid::new(
        columns
            .iter()
            .map(|(header, align, _)| Column::new(*header, *align))
            .collect(),
    );
    for (name, c) in &view.conditions {
        // A merged sweep that lacks attempts says so beside its numbers
        // (docs/PUBLISHING.md, "Exclusions and incomplete roots").
        let missing = view.unfinished.get(name).map_or(0, |u| u.missing);
        grid.push(
            columns
                .iter()
                .map(|(_, _, figure)| match figure {
                    ConditionFigure::Label if missing > 0 => {
                        let present = u64::from(c.file.aggregate.attempts);
                        match figure.cell(c) {
                            Cell::Text(label) => format!(
                                "{label} (incomplete: {present} of {} attempts)",
                                present + missing
                            )
                            .into(),
                            other => other,
                        }
                    }
                    _ => figure.cell(c),
                })
                .collect(),
        );
    }
    grid
}

/// A runs root's conditions as its README shows them: label, agent, host
/// (its version), model, effort, counts, the rates of both tiers, always/ever exact,
/// flaky, blocked, and mean queries and seconds.
pub fn root_conditions(view: &RootView) -> Grid {
    use ConditionFigure as F;
    conditions_grid(
        view,
        &[
            ("condition", Left, F::Label),
            ("agent", Left, F::Agent),
            ("host", Left, F::Host),
            ("model", Left, F::Model),
            ("effort", Left, F::Effort),
            ("questions", Right, F::Questions),
            ("attempts", Right, F::Attempts),
            ("exact", Right, F::Exact),
            ("strict exact", Right, F::StrictExact),
            ("ordered", Right, F::Ordered),
            ("mean F1", Right, F::MeanF1),
            ("always exact", Right, F::AlwaysExact),
            ("ever exact", Right, F::EverExact),
            ("flaky", Right, F::Flaky),
            ("blocked", Right, F::BlockedInWords),
            ("soft errors", Left, F::SoftErrors),
            ("reply chars", Right, F::ReplyChars),
            ("$/attempt", Right, F::Cost),
            ("first query hit", Right, F::FirstQueryHit),
            ("exploratory calls", Right, F::Exploratory),
            ("queries", Right, F::Queries),
            ("wall s", Right, F::WallS),
            ("server s", Right, F::ServerS),
        ],
    )
}

/// A runs root's conditions as the terminal report shows them: the
/// README's condition table, narrowed to what fits a terminal.
pub fn root_summary(view: &RootView) -> Grid {
    use ConditionFigure as F;
    conditions_grid(
        view,
        &[
            ("condition", Left, F::Label),
            ("questions", Right, F::Questions),
            ("exact", Right, F::Exact),
            ("strict", Right, F::StrictExact),
            ("ordered", Right, F::Ordered),
            ("mean F1", Right, F::MeanF1),
            ("always", Right, F::AlwaysExact),
            ("ever", Right, F::EverExact),
            ("flaky", Right, F::Flaky),
            ("blocked", Right, F::Blocked),
            ("soft errors", Right, F::SoftErrorCount),
        ],
    )
}

/// A runs root's conditions as its site page shows them.
pub fn site_conditions(view: &RootView) -> Grid {
    use ConditionFigure as F;
    conditions_grid(
        view,
        &[
            ("condition", Left, F::Label),
            ("agent", Left, F::Agent),
            ("host", Left, F::Host),
            ("model", Left, F::Model),
            ("questions", Right, F::Questions),
            ("attempts", Right, F::Attempts),
            ("exact", Right, F::Exact),
            ("strict exact", Right, F::StrictExact),
            ("ordered", Right, F::Ordered),
            ("mean F1", Right, F::MeanF1),
            ("always", Right, F::AlwaysExact),
            ("ever", Right, F::EverExact),
            ("flaky", Right, F::Flaky),
            ("blocked", Right, F::Blocked),
            ("soft errors", Left, F::SoftErrors),
            ("reply chars", Right, F::ReplyChars),
            ("$/attempt", Right, F::Cost),
            ("first query hit", Right, F::FirstQueryHit),
            ("exploratory calls", Right, F::Exploratory),
        ],
    )
}

/// A runs root's questions as its site page lists them: the id (linked
/// to `link(id)`), the text, and under each condition the question's
/// exact attempts over measured attempts ([`question_cell`]).
pub fn site_questions(view: &RootView, link: &dyn Fn(&str) -> String) -> Grid {
    let mut grid = Grid::new(vec![
        Column::new("question", Left),
        Column::new("text", Left),
    ]);
    for c in view.conditions.values() {
        grid.columns.push(Column::new(c.label.clone(), Left));
    }
    for (id, q) in &view.questions {
        let mut row = vec![
            Cell::Code(id.clone()).linked(link(id)),
            q.text.clone().unwrap_or_default().into(),
        ];
        row.extend(
            view.conditions
                .keys()
                .map(|c| question_cell(q.results.get(c))),
        );
        grid.push(row);
    }
    grid
}

/// An attempt's host report as its page shows it (issue 25, section 5;
/// `docs/PUBLISHING.md`, "The site"): one row per figure, each as the
/// agent host stated it, or `not stated` where it did not (never 0): the
/// host and its version (`version`, the condition's,
/// [`super::AgentIdentity::host_text`]), the model it resolved, tokens
/// (input not cached, cache reads, cache writes, output), the cost in US
/// dollars, turns, time waiting on the API, the episode's wall time and
/// who measured it, and the host's own failure (its kind and reason).
pub fn host_report(host: &HostView, version: &str) -> Grid {
    use crate::format::{NOT_STATED, fixed, seconds};
    let r = &host.report;
    let usage = r.usage.as_ref();
    let stated = |text: Option<String>| Cell::from(text.unwrap_or_else(|| NOT_STATED.into()));
    let tokens = |n: Option<u64>| {
        stated(
            n.filter(|n| *n <= MAX_EPISODE_TOKENS)
                .map(|n| n.to_string()),
        )
    };
    let wall = match (host.wall_s, host.measured_by.as_deref()) {
        (Some(s), Some("runner")) => format!("{} s, measured by the runner", seconds(s)),
        (Some(s), Some(by)) => format!("{} s, the agent host's own clock ({by})", seconds(s)),
        (Some(s), None) => format!("{} s", seconds(s)),
        (None, _) => "not recorded (the attempt has no episode.json)".into(),
    };
    let failure = r.failure.as_ref().map_or_else(
        || "none reported".to_string(),
        |f| {
            let kind = match f.kind {
                FailureKind::Authentication => "authentication",
                FailureKind::RateLimit => "rate limit",
                FailureKind::Overload => "overload",
                FailureKind::Crash => "crash",
                FailureKind::Other => "other",
            };
            format!("{kind}: {}", f.reason)
        },
    );
    let mut grid = Grid::new(vec![
        Column::new("figure", Left),
        Column::new("value", Left),
    ]);
    let rows: [(&str, Cell); 12] = [
        ("host", r.host.clone().into()),
        ("host version", version.to_string().into()),
        ("model resolved", stated(r.model.clone())),
        (
            "input tokens, not cached",
            tokens(usage.and_then(|u| u.input_tokens)),
        ),
        (
            "input tokens read from the cache",
            tokens(usage.and_then(|u| u.cache_read_input_tokens)),
        ),
        (
            "input tokens written to the cache",
            tokens(usage.and_then(|u| u.cache_creation_input_tokens)),
        ),
        ("output tokens", tokens(usage.and_then(|u| u.output_tokens))),
        (
            "cost",
            stated(
                usage
                    .and_then(Usage::cost)
                    .map(|c| format!("${}", fixed(c, 6))),
            ),
        ),
        (
            "turns",
            stated(usage.and_then(|u| u.num_turns).map(|n| n.to_string())),
        ),
        (
            "time waiting on the API",
            stated(
                usage
                    .and_then(|u| u.api_s)
                    .map(|s| format!("{} s", seconds(s))),
            ),
        ),
        ("wall time", wall.into()),
        ("failure of the host", failure.into()),
    ];
    for (figure, value) in rows {
        grid.push(vec![figure.to_string().into(), value]);
    }
    grid
}

/// The columns of a question page's attempts table: condition, exact,
/// mean F1, then one per attempt up to `most`; rows come from
/// [`attempts_row`].
pub fn attempts_header(most: usize) -> Grid {
    let mut grid = Grid::new(vec![
        Column::new("condition", Left),
        Column::new("exact", Left),
        Column::new("mean F1", Left),
    ]);
    for n in 1..=most {
        grid.columns.push(Column::new(format!("attempt {n}"), Left));
    }
    grid
}

/// One condition's row of a question page's attempts table: its
/// figures, then each attempt's verdict linked to `link(attempt)`, padded
/// to `most` attempts.
pub fn attempts_row(
    label: &str,
    result: &QuestionResult,
    attempts: &[super::view::AttemptView],
    most: usize,
    link: &dyn Fn(u32) -> String,
) -> Vec<Cell> {
    let mut row = vec![
        label.into(),
        Cell::Fraction(result.summary.exact, result.summary.measured),
        Cell::Rate(result.summary.mean_f1),
    ];
    for a in attempts {
        row.push(Cell::Verdict(a.verdict.clone()).linked(link(a.result.attempt)));
    }
    while row.len() < 3 + most {
        row.push(Cell::from(crate::format::NONE).toned("muted"));
    }
    row
}

/// The first `shown` rows of a table (ground truth) as a grid of text.
pub fn rows(table: &crate::table::Table, shown: usize) -> Grid {
    let mut grid = Grid::new(
        table
            .columns
            .iter()
            .map(|c| Column::new(c.clone(), Left))
            .collect(),
    );
    for row in table.rows.iter().take(shown) {
        grid.push(row.iter().map(|v| Cell::Text(v.clone())).collect());
    }
    grid
}

/// A question's exact attempts over its measured attempts, toned as the
/// site colours it: `ok` always exact, `bad` never, `soft` sometimes,
/// `muted` blocked throughout or not recorded.
pub fn question_cell(result: Option<&QuestionResult>) -> Cell {
    match result {
        Some(r) if r.summary.measured > 0 => {
            let s = &r.summary;
            let tone = if s.always_exact {
                "ok"
            } else if s.exact == 0 {
                "bad"
            } else {
                "soft"
            };
            Cell::Fraction(s.exact, s.measured).toned(tone)
        }
        Some(_) => Cell::from(crate::format::BLOCKED).toned("muted"),
        None => Cell::from(crate::format::NONE).toned("muted"),
    }
}

/// The columns of `summary.csv`, in order (`docs/FORMAT.md`,
/// "`summary.csv`"): the seventeen the format names, `question` to
/// `notes`, then the agent host's cost and tokens (runs-root format 3,
/// issue 24 item 29; format 2 put those three before `notes`).
pub const SUMMARY_COLUMNS: [&str; 20] = [
    "question",
    "tier",
    "condition",
    "server",
    "tools",
    "kg_hint",
    "attempt",
    "attempts_total",
    "blocked",
    "exact",
    "ordered",
    "f1",
    "queries",
    "tools_called",
    "wall_s",
    "server_s",
    "notes",
    "cost_usd",
    "input_tokens",
    "output_tokens",
];

/// One `summary.csv` row for an attempt: values as recorded, F1 to four
/// decimals (more where four would round a value below 1 to `1.0000` or
/// above 0 to `0.0000`: [`crate::format::fraction`]) and seconds to the
/// millisecond; a blocked attempt has no verdict (empty `exact`,
/// `ordered`, `f1`).
pub fn summary_row(
    result: &QuestionResult,
    identity: &Identity,
    attempt: &AttemptResult,
) -> Vec<Cell> {
    use crate::format::{fixed, fraction};
    let blank = |blocked: bool, text: String| if blocked { String::new() } else { text };
    let usage = attempt.usage.as_ref();
    vec![
        result.question.clone(),
        result.tier.clone().unwrap_or_default(),
        result.condition.clone(),
        identity.server.clone().unwrap_or_default(),
        identity.level.as_str().to_string(),
        identity.kg_hint.as_str().to_string(),
        attempt.attempt.to_string(),
        result.attempts.len().to_string(),
        attempt.blocked.to_string(),
        blank(attempt.blocked, attempt.exact.to_string()),
        match (attempt.blocked, attempt.ordered) {
            (false, Some(o)) => o.to_string(),
            _ => String::new(),
        },
        blank(attempt.blocked, fraction(attempt.f1, 4)),
        attempt.queries.to_string(),
        attempt.tools_called.join(" "),
        fixed(attempt.wall_s, 3),
        fixed(attempt.server_s, 3),
        attempt.notes.join("; "),
        // Empty when the host reported none (a scripted agent): never 0.
        usage
            .and_then(crate::runs::records::Usage::cost)
            .map_or_else(String::new, |c| fixed(c, 6)),
        usage
            .and_then(crate::runs::records::Usage::all_input_tokens)
            .map_or_else(String::new, |n| n.to_string()),
        usage
            .and_then(crate::runs::records::Usage::output)
            .map_or_else(String::new, |n| n.to_string()),
    ]
    .into_iter()
    .map(Cell::Text)
    .collect()
}

/// `summary.csv` for these results: one row per attempt, in the order
/// given (results of conditions that are not recorded are left out).
pub fn summary<'a>(
    conditions: &BTreeMap<String, ConditionView>,
    results: impl Iterator<Item = &'a QuestionResult>,
) -> Grid {
    let mut grid = Grid::new(
        SUMMARY_COLUMNS
            .iter()
            .map(|c| Column::new(*c, Left))
            .collect(),
    );
    for result in results {
        let Some(condition) = conditions.get(&result.condition) else {
            continue;
        };
        for attempt in &result.attempts {
            grid.push(summary_row(result, &condition.file.identity, attempt));
        }
    }
    grid
}

/// A column of a study's rates table: which figure of a condition it
/// shows, under which header ([`rates`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateColumn {
    /// The condition's label.
    Condition,
    /// The agent as `--agent` named it.
    Agent,
    /// The host's version ([`super::AgentIdentity::host_text`]; issue 25,
    /// section 5).
    Host,
    /// The model ([`super::AgentIdentity::model_text`]: `—` for the
    /// scripted agent, `not recorded` for a host that did not say).
    Model,
    /// Questions with a result.
    Questions,
    /// Questions with a measured attempt, headed `n`.
    MeasuredQuestions,
    /// Attempts recorded.
    Attempts,
    /// The exact rate.
    Exact,
    /// Its 95% bootstrap interval over questions.
    Interval,
    /// The strict-tier exact rate.
    StrictExact,
    /// The order-sensitive rate.
    Ordered,
    /// Mean F1.
    MeanF1,
    /// Questions always exact.
    AlwaysExact,
    /// Questions ever exact.
    EverExact,
    /// Questions exact sometimes.
    Flaky,
    /// Blocked attempts.
    Blocked,
}

impl RateColumn {
    /// The column's header and alignment.
    fn column(self) -> Column {
        let (header, align) = match self {
            RateColumn::Condition => ("condition", Left),
            RateColumn::Agent => ("agent", Left),
            RateColumn::Host => ("host", Left),
            RateColumn::Model => ("model", Left),
            RateColumn::Questions => ("questions", Right),
            RateColumn::MeasuredQuestions => ("n", Right),
            RateColumn::Attempts => ("attempts", Right),
            RateColumn::Exact => ("exact", Right),
            RateColumn::Interval => ("95% CI", Right),
            RateColumn::StrictExact => ("strict exact", Right),
            RateColumn::Ordered => ("ordered", Right),
            RateColumn::MeanF1 => ("mean F1", Right),
            RateColumn::AlwaysExact => ("always exact", Right),
            RateColumn::EverExact => ("ever exact", Right),
            RateColumn::Flaky => ("flaky", Right),
            RateColumn::Blocked => ("blocked", Right),
        };
        Column::new(header, align)
    }

    /// The column's cell for one condition.
    fn cell(self, s: &ConditionStats) -> Cell {
        match self {
            RateColumn::Condition => s.label.clone().into(),
            RateColumn::Agent => s.agent.clone().into(),
            RateColumn::Host => s.identity.host_text().into(),
            RateColumn::Model => s.identity.model_text().into(),
            RateColumn::Questions => s.questions.into(),
            RateColumn::MeasuredQuestions => s.measured_questions.into(),
            RateColumn::Attempts => s.attempts.into(),
            RateColumn::Exact => Cell::Rate(s.exact_rate),
            RateColumn::Interval => Cell::Interval(s.interval.map(Into::into)),
            RateColumn::StrictExact => Cell::Rate(s.strict_exact_rate),
            RateColumn::Ordered => Cell::Rate(s.ordered_rate),
            RateColumn::MeanF1 => Cell::Rate(s.mean_f1),
            RateColumn::AlwaysExact => s.always_exact.into(),
            RateColumn::EverExact => s.ever_exact.into(),
            RateColumn::Flaky => s.flaky.into(),
            RateColumn::Blocked => s.blocked_attempts.into(),
        }
    }
}

/// The columns of a study's `rates` region.
pub const STUDY_RATES: [RateColumn; 15] = [
    RateColumn::Condition,
    RateColumn::Agent,
    RateColumn::Host,
    RateColumn::Model,
    RateColumn::Questions,
    RateColumn::Attempts,
    RateColumn::Exact,
    RateColumn::Interval,
    RateColumn::StrictExact,
    RateColumn::Ordered,
    RateColumn::MeanF1,
    RateColumn::AlwaysExact,
    RateColumn::EverExact,
    RateColumn::Flaky,
    RateColumn::Blocked,
];

/// A study's `rates` region: [`STUDY_RATES`], without the model column
/// when no condition's host plays a model (scripted agents only: an
/// all-`—` column would only crowd the page; the host column says
/// `(scripted agent)`), as the paper's [`main_results`] does.
pub fn study_rates(data: &StudyData) -> Grid {
    let models = data
        .conditions
        .iter()
        .any(|c| c.stats().identity.plays_model);
    let columns: Vec<RateColumn> = STUDY_RATES
        .into_iter()
        .filter(|c| models || *c != RateColumn::Model)
        .collect();
    rates(data, &columns)
}

/// What each host spent per attempt (issue 25, "Publishing across
/// hosts"; the `overhead` region of a study, `docs/PUBLISHING.md`): one
/// row per condition with its host (and version), model, attempts, exact
/// rate, and the means per attempt of wall time (measured by the runner),
/// the model turns, the input tokens (cache reads and writes included),
/// the output tokens and the cost, each as the host's report stated it.
/// A mean is shown only when every attempt of the condition stated the
/// figure (a mean over those that did would not be the condition's):
/// otherwise `not stated` when none did, `stated by K of N` when some did.
pub fn overhead(data: &StudyData) -> Grid {
    use crate::runs::records::AttemptResult;
    let mut grid = Grid::new(vec![
        Column::new("condition", Align::Left),
        Column::new("host", Align::Left),
        Column::new("model", Align::Left),
        Column::new("attempts", Align::Right),
        Column::new("exact", Align::Right),
        Column::new("wall s / attempt", Align::Right),
        Column::new("turns / attempt", Align::Right),
        Column::new("input tokens / attempt", Align::Right),
        Column::new("output tokens / attempt", Align::Right),
        Column::new("cost / attempt", Align::Right),
    ]);
    for c in &data.conditions {
        let s = c.stats();
        let attempts: Vec<&AttemptResult> =
            c.results.values().flat_map(|r| r.attempts.iter()).collect();
        let mean = |figure: &dyn Fn(&AttemptResult) -> Option<f64>| -> Option<Result<f64, usize>> {
            let values: Vec<f64> = attempts.iter().filter_map(|a| figure(a)).collect();
            if attempts.is_empty() || values.is_empty() {
                return None;
            }
            if values.len() < attempts.len() {
                return Some(Err(values.len()));
            }
            Some(Ok(values.iter().sum::<f64>() / values.len() as f64))
        };
        let cell = |value: Option<Result<f64, usize>>, shown: &dyn Fn(f64) -> Cell| match value {
            None => Cell::Text(crate::format::NOT_STATED.into()),
            Some(Err(k)) => Cell::Text(format!("stated by {k} of {}", attempts.len())),
            Some(Ok(v)) => shown(v),
        };
        let usage = |a: &AttemptResult| a.usage.clone();
        let whole = |v: f64| Cell::Text(format!("{v:.0}"));
        grid.push(vec![
            s.label.clone().into(),
            s.identity.host_text().into(),
            s.identity.model_text().into(),
            s.attempts.into(),
            Cell::Rate(s.exact_rate),
            cell(mean(&|a| Some(a.wall_s)), &|v| Cell::Seconds(Some(v))),
            cell(mean(&|a| usage(a)?.num_turns.map(|n| n as f64)), &|v| {
                Cell::Text(crate::format::fixed(v, 1))
            }),
            cell(
                mean(&|a| usage(a)?.all_input_tokens().map(|n| n as f64)),
                &whole,
            ),
            cell(mean(&|a| usage(a)?.output().map(|n| n as f64)), &whole),
            cell(mean(&|a| usage(a)?.cost()), &|v| {
                Cell::Text(format!("${}", crate::format::fixed(v, 4)))
            }),
        ]);
    }
    grid
}

/// The per-condition rates of a study, one row per condition, in these
/// columns.
pub fn rates(data: &StudyData, columns: &[RateColumn]) -> Grid {
    let mut grid = Grid::new(columns.iter().map(|c| c.column()).collect());
    let corpus = data.corpus();
    for c in &data.conditions {
        let mut s = c.stats();
        // A row over fewer questions than the study's says so where its
        // rates are shown (issue 24, item 14).
        if let Some(basis) = c.basis(&corpus) {
            s.label = format!("{} ({basis})", s.label);
        }
        grid.push(columns.iter().map(|column| column.cell(&s)).collect());
    }
    grid
}

/// The paper's main results table: the rates with agent, host (its
/// version), the model only when some condition's host plays one (a
/// scripted agent has none: an all-blank column would only crowd the
/// page), and `n` measured questions.
pub fn main_results(data: &StudyData) -> Grid {
    let models = data
        .conditions
        .iter()
        .any(|c| c.stats().identity.plays_model);
    let mut columns = vec![RateColumn::Condition, RateColumn::Agent, RateColumn::Host];
    if models {
        columns.push(RateColumn::Model);
    }
    columns.extend([
        RateColumn::MeasuredQuestions,
        RateColumn::Attempts,
        RateColumn::Exact,
        RateColumn::Interval,
        RateColumn::StrictExact,
        RateColumn::Ordered,
        RateColumn::MeanF1,
        RateColumn::Blocked,
    ]);
    rates(data, &columns)
}

/// The paper's main table across studies (issue 12, "`paper tables`
/// prints the seed's main table"): one row per condition of each study in
/// the order given, condition × agent (the study's agent label, else the
/// agent host), the host's version, and the model where some condition's
/// host plays one, with `n`
/// measured questions, the exact rate and its interval, ordered, mean F1
/// and blocked attempts. `studies` pairs each study's title with its
/// numbers.
pub fn across_studies(studies: &[(&str, &StudyData)]) -> Grid {
    let models = studies
        .iter()
        .flat_map(|(_, d)| &d.conditions)
        .any(|c| c.stats().identity.plays_model);
    let mut columns = vec![
        Column::new("study", Left),
        Column::new("condition", Left),
        Column::new("agent", Left),
        Column::new("host", Left),
    ];
    if models {
        columns.push(Column::new("model", Left));
    }
    columns.extend([
        Column::new("n", Right),
        Column::new("exact", Right),
        Column::new("95% CI", Right),
        Column::new("ordered", Right),
        Column::new("mean F1", Right),
        Column::new("blocked", Right),
    ]);
    let mut grid = Grid::new(columns);
    for (title, data) in studies {
        let corpus = data.corpus();
        for c in &data.conditions {
            let s = c.stats();
            let label = match c.basis(&corpus) {
                Some(basis) => format!("{} ({basis})", c.base_label),
                None => c.base_label.clone(),
            };
            let agent = c
                .agent
                .as_ref()
                .and_then(|key| data.agents.iter().find(|a| a.key == *key))
                .map_or_else(|| s.agent.clone(), |a| a.label.clone());
            let mut row: Vec<Cell> = vec![
                title.to_string().into(),
                label.into(),
                agent.into(),
                s.identity.host_text().into(),
            ];
            if models {
                row.push(s.identity.model_text().into());
            }
            row.extend([
                s.measured_questions.into(),
                Cell::Rate(s.exact_rate),
                Cell::Interval(s.interval.map(Into::into)),
                Cell::Rate(s.ordered_rate),
                Cell::Rate(s.mean_f1),
                s.blocked_attempts.into(),
            ]);
            grid.push(row);
        }
    }
    grid
}

/// Every other condition against the one keyed `base` (with agents, its
/// own agent's: [`StudyData::delta_pairs`]): the difference of exact rates
/// paired over questions both measured, with its 95% bootstrap interval
/// over questions.
pub fn deltas(data: &StudyData, base: &str) -> Grid {
    let mut grid = Grid::new(vec![
        Column::new("condition", Left),
        Column::new("against", Left),
        Column::new("questions", Right),
        Column::new("Δ exact rate", Right),
        Column::new("95% CI (bootstrap over questions)", Right),
    ]);
    for (baseline, c) in data.delta_pairs(base) {
        let d = data.delta(baseline, c);
        grid.push(vec![
            c.label.clone().into(),
            baseline.label.clone().into(),
            d.map_or(0, |d| d.questions).into(),
            Cell::Signed(d.map(|d| d.estimate)),
            Cell::SignedInterval(d.and_then(|d| d.interval).map(Into::into)),
        ]);
    }
    grid
}

/// Agent × condition: one row per condition (its label without the
/// agent's), and for each agent its exact rate and the 95% bootstrap
/// interval over questions; `—` where the agent did not record it.
pub fn agents(data: &StudyData) -> Grid {
    let mut columns = vec![Column::new("condition", Left)];
    for a in &data.agents {
        columns.push(Column {
            header: a.label.clone().into(),
            align: Right,
        });
        columns.push(Column::new("95% CI", Right));
    }
    let mut grid = Grid::new(columns);
    let corpus = data.corpus();
    for base in data.base_keys() {
        let label = data
            .conditions
            .iter()
            .find(|c| c.base_key == base)
            .map_or_else(|| base.to_string(), |c| c.base_label.clone());
        let mut row = vec![label.into()];
        for a in &data.agents {
            let found = data
                .conditions
                .iter()
                .find(|c| c.base_key == base && c.agent.as_deref() == Some(&a.key));
            let s = found.map(StudyCondition::stats);
            let rate = s.as_ref().and_then(|s| s.exact_rate);
            // A rate over fewer questions than the study's says so in its
            // own cell (issue 24, item 14).
            match found.and_then(|c| c.basis(&corpus)) {
                Some(basis) => row.push(format!("{} ({basis})", crate::format::rate(rate)).into()),
                None => row.push(Cell::Rate(rate)),
            }
            row.push(Cell::Interval(s.and_then(|s| s.interval).map(Into::into)));
        }
        grid.push(row);
    }
    grid
}

/// One row per question of a study: the exact attempts over measured
/// attempts under each condition (`blocked` where every attempt was), and
/// with `text` the question itself.
pub fn study_questions(data: &StudyData, text: bool) -> Grid {
    let mut columns = vec![Column::new("question", Left)];
    if text {
        columns.push(Column::new("text", Left));
    }
    for c in &data.conditions {
        columns.push(Column {
            header: c.label.clone().into(),
            align: Center,
        });
    }
    let mut grid = Grid::new(columns);
    for q in data.questions() {
        let mut row = vec![Cell::Code(q.clone())];
        if text {
            row.push(data.text(&q).unwrap_or_default().into());
        }
        for c in &data.conditions {
            row.push(match c.cell(&q) {
                Some(cell) if cell.measured > 0 => Cell::Fraction(cell.exact, cell.measured),
                Some(_) => crate::format::BLOCKED.into(),
                None => crate::format::NONE.into(),
            });
        }
        grid.push(row);
    }
    grid
}

/// The measured attempts by the strategy the scripted agent recorded
/// playing ([`StudyData::strategies`]): attempts, exact in each tier, and
/// exact only once normalized. Attempts that record no strategy are the
/// last row, `not recorded`.
pub fn strategies(counts: &[crate::report::study::StrategyCount]) -> Grid {
    let mut grid = Grid::new(vec![
        Column::new("strategy played", Left),
        Column::new("attempts", Right),
        Column::new("exact", Right),
        Column::new("strict exact", Right),
        Column::new("exact only once normalized", Right),
    ]);
    for c in counts {
        grid.push(vec![
            c.strategy
                .as_ref()
                .map_or_else(|| Cell::from("not recorded"), |s| Cell::Code(s.clone())),
            c.attempts.into(),
            c.exact.into(),
            c.strict_exact.into(),
            c.normalized_only.into(),
        ]);
    }
    grid
}

/// The questions that separate a study's conditions, with the labels of
/// those always and never exact on it; `None` when no question does.
pub fn separating(data: &StudyData) -> Option<Grid> {
    let rows = data.separating();
    if rows.is_empty() {
        return None;
    }
    let label = |key: &String| data.condition(key).map_or(key.clone(), |c| c.label.clone());
    let mut grid = Grid::new(vec![
        Column::new("question", Left),
        Column::new("always exact under", Left),
        Column::new("never exact under", Left),
    ]);
    for s in rows {
        grid.push(vec![
            Cell::Code(s.question.clone()),
            s.always
                .iter()
                .map(label)
                .collect::<Vec<_>>()
                .join("; ")
                .into(),
            s.never
                .iter()
                .map(label)
                .collect::<Vec<_>>()
                .join("; ")
                .into(),
        ]);
    }
    Some(grid)
}

/// Trajectory expectations per condition (`docs/TRAJECTORY.md`; issue
/// 27): one row per condition (its label, in the order given) and
/// expectation id, with its type, check, pass rate (held over applicable)
/// and the counts in words. Beside the rate tables, never in them;
/// `None` when no condition has any.
pub fn expectations(
    conditions: &[(String, &BTreeMap<String, super::view::ExpectationTally>)],
) -> Option<Grid> {
    if conditions.iter().all(|(_, e)| e.is_empty()) {
        return None;
    }
    let mut grid = Grid::new(vec![
        Column::new("condition", Left),
        Column::new("expectation", Left),
        Column::new("type", Left),
        Column::new("check", Left),
        Column::new("pass rate", Right),
        Column::new("held", Left),
    ]);
    for (label, tallies) in conditions {
        for (id, t) in tallies.iter() {
            grid.push(vec![
                label.clone().into(),
                Cell::Code(id.clone()),
                t.kind.clone().into(),
                Cell::Code(t.check.clone()),
                Cell::Rate(t.rate()),
                t.text().into(),
            ]);
        }
    }
    Some(grid)
}

/// [`expectations`] of a runs root's conditions.
pub fn root_expectations(view: &RootView) -> Option<Grid> {
    let rows: Vec<(String, &BTreeMap<String, super::view::ExpectationTally>)> = view
        .conditions
        .values()
        .map(|c| (c.label.clone(), &c.expectations))
        .collect();
    expectations(&rows)
}

/// [`expectations`] of a study's conditions, by label, in study order.
pub fn study_expectations(data: &StudyData) -> Option<Grid> {
    let tallies: Vec<(String, BTreeMap<String, super::view::ExpectationTally>)> = data
        .conditions
        .iter()
        .map(|c| {
            let mut t = BTreeMap::new();
            for result in c.results.values() {
                super::view::tally_expectations(result, &mut t);
            }
            (c.label.clone(), t)
        })
        .collect();
    let rows: Vec<(String, &BTreeMap<String, super::view::ExpectationTally>)> =
        tallies.iter().map(|(l, t)| (l.clone(), t)).collect();
    expectations(&rows)
}
