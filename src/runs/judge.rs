//! Judging one recorded attempt from its files alone (`answer.csv`,
//! `metrics.json`, `calls.json`, `episode.json`, `agent.json`, read by
//! [`super::recorded`]) against the question's recorded ground truth. `run`
//! and `rescore` both come here, so a re-score is exactly the judgment a
//! run made, with today's rules.

use serde_json::Value;

pub use super::recorded::model_from_report;
use super::recorded::{AttemptFiles, RECOVERED_NOTE};
use super::records::{AttemptResult, Episode, HostReport};
use crate::expectations::Expectation;
use crate::expectations::checks::Evidence;
use crate::layout::{AGENT_FILE, ANSWER_FILE};
use crate::reference::GroundTruth;
use crate::score::{ScoreOptions, score, score_unreadable};
use crate::table::Table;

/// The agent host's own report of a failure, when nothing was submitted:
/// positive evidence that the episode never measured the agent (an
/// expired login, a rate limit, an overloaded API, a crash), so it is
/// blocked, not a miss (`docs/FORMAT.md`, `result.json`). Read from the
/// host report alone ([`AttemptFiles::host`], issue 25), which each
/// host's parser derives from its output: the host said it failed, or it
/// exited with an error code, or was killed by a signal not this runner's,
/// and reported nothing usable. A timeout is the agent's own outcome,
/// never this.
pub fn host_failure(host: &HostReport, episode: Option<&Episode>) -> Option<String> {
    if episode.is_some_and(|e| e.timed_out) {
        return None;
    }
    host.failure.as_ref().map(|f| f.reason.clone())
}

/// Judges attempt `attempt` again from its `files` against the ground truth
/// recorded beside it, in the order that ground truth records
/// (`ordered`), at the condition's recorded `significant_figures`
/// (`settings.significant_figures`, `run --precision`; issue 24, item 30):
/// how `rescore` re-judges, and how loading a root checks that a recorded
/// verdict is the one its files give.
///
/// `expectations` are the question's trajectory expectations
/// ([`QuestionResult::expectations`](super::records::QuestionResult)),
/// judged from the same files.
pub fn judge_again(
    files: &AttemptFiles,
    attempt: u32,
    truth: &GroundTruth,
    significant_figures: u32,
    expectations: &[Expectation],
) -> AttemptResult {
    let options = ScoreOptions {
        ordered: truth.meta.ordered,
        significant_figures,
        ..ScoreOptions::default()
    };
    judge(files, attempt, (truth, expectations), &options)
}

/// How the note of an attempt whose answer redaction changed begins
/// ([`redacted_answer_note`]).
pub const REDACTED_ANSWER: &str = "judged as saved, after redaction";

/// The note of an attempt whose submitted answer held a value of the
/// profile (`metrics.json`'s `answer_redacted`, the values' `names`): the
/// verdict is of the answer as saved, with `[redacted: NAME]` in its place
/// (issue 24, item 27), so no score moves without a word.
pub fn redacted_answer_note(names: &[String]) -> String {
    format!(
        "{REDACTED_ANSWER}: the agent's answer held the profile's value of {}, replaced by \
         [redacted: NAME] before it was judged; a value that is no credential belongs in \
         the profile's public_env (or public_headers)",
        names.join(", ")
    )
}

/// Judges attempt `attempt`, whose folder's files are `files`
/// ([`AttemptFiles::read`]), against the ground truth `truth`: its rows,
/// and its answer key (for the trajectory facts); and the question's
/// trajectory `expectations` (`docs/TRAJECTORY.md`), each given a status,
/// never mixed into the score.
///
/// Never fails: what the files lack becomes a note and the attempt a
/// miss; only positive evidence (a startup error recorded by the proxy, or
/// the host's own failure, and nothing submitted) makes it blocked.
pub fn judge(
    files: &AttemptFiles,
    attempt: u32,
    (truth, expectations): (&GroundTruth, &[Expectation]),
    options: &ScoreOptions,
) -> AttemptResult {
    let mut notes = Vec::new();
    let key = &truth.table;
    let metrics = files.metrics.as_ref();
    if metrics.is_none() {
        notes.push("no metrics.json: the proxy never started".to_string());
    }
    let episode = files.episode.clone();
    match &episode {
        None => notes.push("no episode.json: the attempt did not finish".to_string()),
        Some(e) if e.source == AGENT_FILE => notes.push(RECOVERED_NOTE.to_string()),
        Some(_) => {}
    }
    let timed_out = episode.as_ref().is_some_and(|e| e.timed_out);
    if timed_out {
        notes.push(format!(
            "the agent timed out after {:.0} s",
            episode.as_ref().map_or(0.0, |e| e.wall_s)
        ));
    }

    let submitted = files.answer.is_some();
    let score = files
        .answer
        .as_ref()
        .map(|bytes| match Table::from_csv(bytes) {
            Ok(table) => score(key, &table, options),
            Err(e) => score_unreadable(key, &format!("{}: {e}", ANSWER_FILE), options),
        });
    if !submitted {
        notes.push("no answer submitted".to_string());
    }
    if let Some(m) = metrics.filter(|m| submitted && !m.answer_redacted.is_empty()) {
        notes.push(redacted_answer_note(&m.answer_redacted));
    }
    let startup_error = metrics.and_then(|m| m.startup_error.clone());
    let host_error = (!submitted)
        .then(|| host_failure(&files.host, episode.as_ref()))
        .flatten();
    let blocked = (startup_error.is_some() || host_error.is_some()) && !submitted;
    if let Some(reason) = &startup_error {
        notes.push(format!("the server was unreachable at startup: {reason}"));
    }
    if let Some(reason) = &host_error {
        notes.push(reason.clone());
    }
    if let Some(reason) = metrics.and_then(|m| m.lost_upstream.clone()) {
        notes.push(format!("lost the server part-way: {reason}"));
    }
    let (refused, soft_errors, tools_called, queries, queries_errored, server_s) = match metrics {
        Some(m) => (
            m.refused,
            m.upstream_soft_errors.clone(),
            m.tools_called.clone(),
            m.queries_ok + m.queries_errored,
            m.queries_errored,
            m.server_s,
        ),
        None => Default::default(),
    };
    if refused > 0 {
        notes.push(format!("{refused} call(s) to withheld tools refused"));
    }
    for (tool, n) in &soft_errors {
        notes.push(format!("{n} soft error(s) from {tool}"));
    }
    let mut soft_error_kinds = std::collections::BTreeMap::new();
    for call in files.calls.iter().flatten() {
        if let Some(label) = &call.soft_error {
            *soft_error_kinds.entry(label.clone()).or_insert(0) += 1;
        }
    }
    let trajectory = files.calls.as_ref().map(|calls| {
        super::trajectory::trajectory(
            calls,
            &truth.meta.answer_key,
            crate::mcp::calllog::carries_query,
        )
    });
    if let Some(s) = &score {
        notes.extend(s.notes.iter().cloned());
    }
    let evidence = Evidence {
        calls: files.calls.as_deref(),
        answer: files.answer.as_deref(),
        withheld: metrics.map_or(&[][..], |m| &m.withheld[..]),
        answer_key: &truth.meta.answer_key,
        measured: !blocked,
    };
    let expectations = crate::expectations::checks::judge(expectations, &evidence);
    AttemptResult {
        attempt,
        submitted,
        blocked,
        blocked_reason: blocked.then(|| {
            startup_error
                .clone()
                .or_else(|| host_error.clone())
                .unwrap_or_default()
        }),
        timed_out,
        exact: score.as_ref().is_some_and(|s| s.exact),
        strict_exact: score.as_ref().is_some_and(|s| s.strict_exact),
        ordered: options
            .ordered
            .then(|| score.as_ref().is_some_and(|s| s.ordered == Some(true))),
        f1: score.as_ref().map_or(0.0, |s| s.f1),
        score,
        queries,
        queries_errored,
        tools_called,
        refused,
        soft_errors,
        soft_error_kinds,
        reply_chars: metrics.and_then(|m| m.reply_chars.clone()),
        trajectory,
        expectations,
        // The host report (issue 25): for an older root, derived from
        // agent.json as its episode's usage was (and checked equal to it).
        usage: files.host.usage.clone(),
        wall_s: crate::layout::round_seconds(episode.as_ref().map_or(0.0, |e| e.wall_s)),
        server_s,
        model_resolved: episode.and_then(|e| e.model_resolved),
        notes,
    }
}

/// One member of a recorded attempt that its files, judged again, do not
/// give ([`record_differences`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Disagreement {
    /// The member, dotted into nested ones (`blocked`, `score.f1`).
    pub member: String,
    /// Its value as recorded, as JSON (long values shortened).
    pub recorded: String,
    /// Its value as the files give it, likewise.
    pub derived: String,
}

/// The members of `recorded` (an attempt as `result.json` holds it, in
/// runs-root format `format`) that differ from `again` (the same attempt
/// judged again from its files, [`judge_again`]): every member counts,
/// `blocked` and its reason, the query counts, the tools, the trajectory,
/// the usage, the times, the notes, the full score (issue 24, item 6), so
/// no member a report prints is taken as written. The verdicts come first
/// (`exact`, `strict_exact`, `ordered`, `f1`), then the rest in the order
/// `result.json` writes them. Not differences: a member format 2 added
/// (`usage`, `trajectory`, `reply_chars`) absent from a format-1 record,
/// and `soft_error_kinds` absent from a record judged before it was kept
/// (both read as "not recorded", `docs/FORMAT.md`).
pub fn record_differences(
    recorded: &AttemptResult,
    again: &AttemptResult,
    format: u32,
) -> Vec<Disagreement> {
    // Equal records write equal JSON: nothing to look for (the case of
    // every attempt of a sound root, judged again as it is loaded).
    if recorded == again {
        return Vec::new();
    }
    let (Ok(Value::Object(a)), Ok(Value::Object(b))) =
        (serde_json::to_value(recorded), serde_json::to_value(again))
    else {
        return Vec::new();
    };
    const VERDICTS: [&str; 4] = ["exact", "strict_exact", "ordered", "f1"];
    const ADDED_IN_2: [&str; 3] = ["usage", "trajectory", "reply_chars"];
    let rank = |m: &str| {
        VERDICTS
            .iter()
            .position(|v| *v == m)
            .unwrap_or(VERDICTS.len())
    };
    let mut order: Vec<&String> = a.keys().collect();
    order.extend(b.keys().filter(|k| !a.contains_key(*k)));
    order.sort_by_key(|m| rank(m));
    let mut out = Vec::new();
    for member in order {
        let (x, y) = (a.get(member), b.get(member));
        let absent = x.is_none_or(Value::is_null);
        if absent && format < 2 && ADDED_IN_2.contains(&member.as_str()) {
            continue;
        }
        if x.is_none() && member == "soft_error_kinds" {
            continue;
        }
        differences_at(member, x, y, &mut out);
    }
    out
}

/// Pushes onto `out` where `x` and `y` (member `path`'s two values)
/// differ: for two objects, each member that differs, dotted; else the
/// values whole.
fn differences_at(path: &str, x: Option<&Value>, y: Option<&Value>, out: &mut Vec<Disagreement>) {
    if x == y {
        return;
    }
    if let (Some(Value::Object(a)), Some(Value::Object(b))) = (x, y) {
        let mut keys: Vec<&String> = a.keys().collect();
        keys.extend(b.keys().filter(|k| !a.contains_key(*k)));
        for key in keys {
            differences_at(&format!("{path}.{key}"), a.get(key), b.get(key), out);
        }
        return;
    }
    let show = |v: Option<&Value>| {
        let text = v.map_or_else(|| "absent".to_string(), Value::to_string);
        match text.char_indices().nth(SHOWN_CHARS) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text,
        }
    };
    out.push(Disagreement {
        member: path.to_string(),
        recorded: show(x),
        derived: show(y),
    });
}

/// The most characters of a value a disagreement quotes.
const SHOWN_CHARS: usize = 120;
