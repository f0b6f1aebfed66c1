//! Studies' prose: a folder `results-NAME/` with a `study.toml` (loaded by
//! `report::study_file`) and hand-written prose (`SUMMARY.md`,
//! `QUESTIONS.md`, any `*.md` at its top level) whose generated regions
//! `build` fills from the recorded episodes, so that no number in the
//! prose can drift from them (`docs/PUBLISHING.md`, "Studies").
//!
//! A region is `<!-- okn:KIND key=value key="two words" -->` … `<!-- /okn:KIND -->`;
//! everything between the markers is replaced on every build. Kinds and
//! their keys are in [`KINDS`]; an unknown kind or key, a missing closing
//! marker or a condition key the study does not have is an error naming
//! the file and line. Markers inside code spans and code blocks are text.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::figures::FigureKind;
use super::syntax::{markdown_fitted as md_table, md_code, md_text};
use crate::error::{Error, Result, line_at};
use crate::format::{
    interval, maybe_seconds, percent, rate, signed, signed_interval as delta_interval,
};
use crate::report::study::{StrategyCount, StudyCondition, StudyData};
use crate::report::tables;

pub use crate::report::study::{FIGURES_DIR, StudyView};
pub use crate::report::study_file::{STUDY_FILE, is_study, root_label};

/// Every region kind with the keys it takes (`docs/PUBLISHING.md`,
/// "Generated regions":
/// tables, a number inside a sentence, figure embeds, and the
/// questions that defeat every condition or separate them).
pub const KINDS: [(&str, &[&str]); 13] = [
    ("rates", &[]),
    ("agents", &[]),
    ("overhead", &[]),
    ("question", &["which"]),
    ("questions", &["text"]),
    ("deltas", &["baseline"]),
    (
        "number",
        &[
            "metric",
            "condition",
            "baseline",
            "question",
            "k",
            "format",
            "strategy",
            "expectation",
        ],
    ),
    ("figure", &["name"]),
    ("defeats-every-condition", &[]),
    ("separating", &[]),
    ("strategies", &["condition"]),
    ("comparison", &["key"]),
    ("expectations", &[]),
];

/// What a `number` region can show. Per condition (`condition=KEY`):
/// rates, counts, seconds, `pass-at-k`/`pass-hat-k` (with `k=N`), `delta`
/// and `delta-interval` (with optional `baseline=KEY`), and with
/// `question=ID` the question's `exact` count (`2/3`), rate or F1.
/// Study-wide (no condition): `conditions`, `questions`, `attempts`,
/// `defeats-every-condition`, `separating`, and the attempt counts
/// (`measured-attempts`, `exact-attempts`, `strict-exact-attempts`,
/// `normalized-only-attempts`) over every condition. Those four also take
/// `strategy=NAME`: only the attempts the scripted agent recorded playing
/// that strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// `exact-rate`.
    ExactRate,
    /// `strict-exact-rate`.
    StrictExactRate,
    /// `ordered-rate`.
    OrderedRate,
    /// `mean-f1`.
    MeanF1,
    /// `exact-interval`: the exact rate's 95% bootstrap interval.
    ExactInterval,
    /// `questions`: per condition, or the study's with no condition.
    Questions,
    /// `measured-questions`.
    MeasuredQuestions,
    /// `attempts`: per condition, or the study's with no condition.
    Attempts,
    /// `measured-attempts`.
    MeasuredAttempts,
    /// `blocked-attempts`.
    BlockedAttempts,
    /// `exact-attempts`.
    ExactAttempts,
    /// `strict-exact-attempts`: exact in the strict tier.
    StrictExactAttempts,
    /// `normalized-only-attempts`: exact in the normalized tier and not
    /// in the strict one.
    NormalizedOnlyAttempts,
    /// `always-exact`.
    AlwaysExact,
    /// `ever-exact`.
    EverExact,
    /// `never-exact`.
    NeverExact,
    /// `flaky`.
    Flaky,
    /// `mean-wall-s`.
    MeanWallS,
    /// `mean-server-s`.
    MeanServerS,
    /// `pass-at-k`, with `k=N`.
    PassAtK,
    /// `pass-hat-k`, with `k=N`.
    PassHatK,
    /// `delta`: the exact rate against a baseline.
    Delta,
    /// `delta-interval`: its 95% paired bootstrap interval.
    DeltaInterval,
    /// `exact`: a question's exact attempts over measured (`question=ID`).
    Exact,
    /// `conditions` (study-wide).
    Conditions,
    /// `defeats-every-condition` (study-wide).
    DefeatsEveryCondition,
    /// `separating` (study-wide).
    Separating,
    /// `f1`: a question's mean F1 (`question=ID`), or the condition's.
    F1,
    /// `cost`: mean US dollars per attempt, as the agent hosts reported.
    Cost,
    /// `cost-per-exact`: US dollars over all attempts per exact attempt.
    CostPerExact,
    /// `tokens`: mean input and output tokens per attempt.
    Tokens,
    /// `first-query-hit`: measured attempts whose first query named only
    /// the answer key's graphs.
    FirstQueryHit,
    /// `exploratory-calls`: calls before the first query, over the
    /// measured attempts.
    ExploratoryCalls,
    /// `expectation-pass`, with `expectation=ID`: the pass rate of a
    /// trajectory expectation over the condition's attempts where it
    /// applied (`docs/TRAJECTORY.md`; issue 27).
    ExpectationPass,
}

impl Metric {
    /// Every metric, in the order errors list them.
    pub const ALL: [Metric; 34] = [
        Metric::ExactRate,
        Metric::StrictExactRate,
        Metric::OrderedRate,
        Metric::MeanF1,
        Metric::ExactInterval,
        Metric::Questions,
        Metric::MeasuredQuestions,
        Metric::Attempts,
        Metric::MeasuredAttempts,
        Metric::BlockedAttempts,
        Metric::ExactAttempts,
        Metric::StrictExactAttempts,
        Metric::NormalizedOnlyAttempts,
        Metric::AlwaysExact,
        Metric::EverExact,
        Metric::NeverExact,
        Metric::Flaky,
        Metric::MeanWallS,
        Metric::MeanServerS,
        Metric::PassAtK,
        Metric::PassHatK,
        Metric::Delta,
        Metric::DeltaInterval,
        Metric::Exact,
        Metric::Conditions,
        Metric::DefeatsEveryCondition,
        Metric::Separating,
        Metric::F1,
        Metric::Cost,
        Metric::CostPerExact,
        Metric::Tokens,
        Metric::FirstQueryHit,
        Metric::ExploratoryCalls,
        Metric::ExpectationPass,
    ];

    /// Its name in a region (`metric=NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Metric::ExactRate => "exact-rate",
            Metric::StrictExactRate => "strict-exact-rate",
            Metric::OrderedRate => "ordered-rate",
            Metric::MeanF1 => "mean-f1",
            Metric::ExactInterval => "exact-interval",
            Metric::Questions => "questions",
            Metric::MeasuredQuestions => "measured-questions",
            Metric::Attempts => "attempts",
            Metric::MeasuredAttempts => "measured-attempts",
            Metric::BlockedAttempts => "blocked-attempts",
            Metric::ExactAttempts => "exact-attempts",
            Metric::StrictExactAttempts => "strict-exact-attempts",
            Metric::NormalizedOnlyAttempts => "normalized-only-attempts",
            Metric::AlwaysExact => "always-exact",
            Metric::EverExact => "ever-exact",
            Metric::NeverExact => "never-exact",
            Metric::Flaky => "flaky",
            Metric::MeanWallS => "mean-wall-s",
            Metric::MeanServerS => "mean-server-s",
            Metric::PassAtK => "pass-at-k",
            Metric::PassHatK => "pass-hat-k",
            Metric::Delta => "delta",
            Metric::DeltaInterval => "delta-interval",
            Metric::Exact => "exact",
            Metric::Conditions => "conditions",
            Metric::DefeatsEveryCondition => "defeats-every-condition",
            Metric::Separating => "separating",
            Metric::F1 => "f1",
            Metric::Cost => "cost",
            Metric::CostPerExact => "cost-per-exact",
            Metric::Tokens => "tokens",
            Metric::FirstQueryHit => "first-query-hit",
            Metric::ExploratoryCalls => "exploratory-calls",
            Metric::ExpectationPass => "expectation-pass",
        }
    }

    /// The metric named `name`.
    pub fn parse(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }

    /// A rate (or F1), which `format=percent` may show as a percentage.
    fn is_rate(self) -> bool {
        matches!(
            self,
            Metric::ExactRate
                | Metric::StrictExactRate
                | Metric::OrderedRate
                | Metric::MeanF1
                | Metric::F1
                | Metric::PassAtK
                | Metric::PassHatK
                | Metric::ExpectationPass
        )
    }

    /// Shown for the whole study: always for some, and for `questions`,
    /// `attempts` and the attempt counts when no condition is named.
    fn study_wide(self, with_condition: bool) -> bool {
        matches!(
            self,
            Metric::Conditions | Metric::DefeatsEveryCondition | Metric::Separating
        ) || (!with_condition
            && (matches!(self, Metric::Questions | Metric::Attempts) || self.by_strategy()))
    }

    /// An attempt count that `strategy=NAME` may narrow to the attempts
    /// that played it.
    fn by_strategy(self) -> bool {
        matches!(
            self,
            Metric::MeasuredAttempts
                | Metric::ExactAttempts
                | Metric::StrictExactAttempts
                | Metric::NormalizedOnlyAttempts
        )
    }

    /// The keys a region with this metric takes: any other is an error,
    /// so a key that would be ignored cannot look as if it mattered.
    fn takes(self, with_condition: bool) -> Vec<&'static str> {
        let mut takes = vec!["metric"];
        if !self.study_wide(with_condition) || self.by_strategy() {
            takes.push("condition");
        }
        if self.by_strategy() {
            takes.push("strategy");
        }
        if self.is_rate() {
            takes.push("format");
        }
        if matches!(self, Metric::PassAtK | Metric::PassHatK) {
            takes.push("k");
        }
        if self == Metric::ExpectationPass {
            takes.push("expectation");
        }
        if matches!(self, Metric::Delta | Metric::DeltaInterval) {
            takes.push("baseline");
        }
        if matches!(
            self,
            Metric::Exact | Metric::ExactRate | Metric::MeanF1 | Metric::F1
        ) {
            takes.push("question");
        }
        takes
    }
}

/// One generated region found in a Markdown file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The kind (`rates`, `number`, …).
    pub kind: String,
    /// Its `key=value` parameters.
    pub params: BTreeMap<String, String>,
    /// 1-based line of the opening marker.
    pub line: u64,
    /// Byte range of the generated content (between the markers).
    pub content: std::ops::Range<usize>,
    /// Byte range of the whole region, markers included.
    pub whole: std::ops::Range<usize>,
}

/// Byte ranges of code spans and code blocks, where markers are text.
fn code_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    use pulldown_cmark::{Event, Parser, Tag};
    let mut ranges = Vec::new();
    for (event, range) in Parser::new_ext(text, super::markdown::options()).into_offset_iter() {
        match event {
            Event::Code(_) | Event::Start(Tag::CodeBlock(_)) => ranges.push(range),
            _ => {}
        }
    }
    ranges
}

/// Splits `key=value key="two words" key='it said "no"'` parameters;
/// inside double quotes, `\"` is a quote and `\\` a backslash.
fn parse_params(text: &str) -> std::result::Result<BTreeMap<String, String>, String> {
    let mut params = BTreeMap::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            return Err(format!("expected key=value, found '{rest}'"));
        };
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(format!("expected key=value, found '{rest}'"));
        }
        let (value, next) = match after.chars().next() {
            // "…" with \" and \\ escapes; '…' taken as written: so an id
            // holding a quote can be named.
            Some(q @ ('"' | '\'')) => {
                let mut value = String::new();
                let mut chars = after[1..].char_indices();
                let mut end = None;
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' if q == '"' => match chars.next() {
                            Some((_, e @ ('"' | '\\'))) => value.push(e),
                            Some((_, other)) => {
                                value.push('\\');
                                value.push(other);
                            }
                            None => break,
                        },
                        c if c == q => {
                            end = Some(1 + i + 1);
                            break;
                        }
                        c => value.push(c),
                    }
                }
                let Some(end) = end else {
                    return Err(format!("unclosed quote in {key}="));
                };
                (value, &after[end..])
            }
            _ => {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                (after[..end].to_string(), &after[end..])
            }
        };
        if params.insert(key.to_string(), value).is_some() {
            return Err(format!("key '{key}' given twice"));
        }
        rest = next.trim_start();
    }
    Ok(params)
}

/// One `<!-- okn:KIND … -->` or `<!-- /okn:KIND -->` comment.
struct Marker<'a> {
    /// Byte range of the whole comment.
    range: std::ops::Range<usize>,
    /// True for a closing marker.
    closing: bool,
    /// What follows `okn:` inside the comment, trimmed.
    inner: &'a str,
}

/// Every region marker of `text` outside code, in order. Spacing inside the
/// comment and the case of `okn:` are free (`<!--okn:rates-->`,
/// `<!-- OKN:rates -->`), so a marker written a little differently is
/// never silently left alone.
/// The markers of `text`, and the offset of a marker comment never closed
/// with `-->` if there is one (the rest of the file would be a comment).
fn markers<'a>(text: &'a str, in_code: &dyn Fn(usize) -> bool) -> (Vec<Marker<'a>>, Option<usize>) {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find("<!--") {
        let start = at + i;
        let Some(len) = text[start + 4..].find("-->") else {
            let rest = text[start + 4..]
                .trim_start()
                .trim_start_matches('/')
                .trim_start();
            let okn = crate::text::starts_with_ignore_ascii_case(rest, "okn:");
            return (found, (okn && !in_code(start)).then_some(start));
        };
        let end = start + 4 + len + 3;
        at = end;
        if in_code(start) {
            continue;
        }
        let inner = text[start + 4..end - 3].trim();
        let (closing, rest) = match inner.strip_prefix('/') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, inner),
        };
        if let Some(inner) = crate::text::strip_prefix_ignore_ascii_case(rest, "okn:") {
            found.push(Marker {
                range: start..end,
                closing,
                inner: inner.trim(),
            });
        }
    }
    (found, None)
}

/// A region whose closing marker is still to come: its kind, parameters,
/// line, and the opening marker's byte range.
type OpenRegion = (
    String,
    BTreeMap<String, String>,
    u64,
    std::ops::Range<usize>,
);

/// Finds every region of `text` (the contents of `path`).
///
/// Errors (naming `path` and the line): an unknown kind or key, a
/// malformed parameter, a closing marker with no opening or of another
/// kind, an opening marker never closed, nested regions, an `okn:number`
/// that begins a line.
pub fn regions(path: &Path, text: &str) -> Result<Vec<Region>> {
    // Every marker is a comment: a page with none is not parsed.
    if !text.contains("<!--") {
        return Ok(Vec::new());
    }
    let code = code_ranges(text);
    let in_code = |at: usize| code.iter().any(|r| r.contains(&at));
    let mut found = Vec::new();
    let mut open: Option<OpenRegion> = None;
    let (markers, unclosed) = markers(text, &in_code);
    if let Some(at) = unclosed {
        return Err(Error::at_line(
            path,
            line_at(text, at),
            "this <!-- okn:... marker is never closed with -->: everything after it would \
             vanish from the page",
        ));
    }
    for marker in markers {
        let line = line_at(text, marker.range.start);
        if marker.closing {
            let kind = marker.inner;
            let Some((open_kind, params, open_line, open_range)) = open.take() else {
                return Err(Error::at_line(
                    path,
                    line,
                    format!(
                        "closing <!-- /okn:{kind} --> with no opening <!-- okn:{kind} --> before it"
                    ),
                ));
            };
            if kind != open_kind {
                return Err(Error::at_line(
                    path,
                    line,
                    format!(
                        "<!-- /okn:{kind} --> closes okn:{open_kind}, opened at line {open_line}"
                    ),
                ));
            }
            found.push(Region {
                kind: open_kind,
                params,
                line: open_line,
                content: open_range.end..marker.range.start,
                whole: open_range.start..marker.range.end,
            });
            continue;
        }
        if let Some((open_kind, _, open_line, _)) = &open {
            return Err(Error::at_line(
                path,
                line,
                format!(
                    "a region inside okn:{open_kind} (opened at line {open_line}); regions do not nest"
                ),
            ));
        }
        let (kind, params_text) = marker
            .inner
            .split_once(char::is_whitespace)
            .unwrap_or((marker.inner, ""));
        let Some((_, allowed)) = KINDS.iter().find(|(k, _)| *k == kind) else {
            let known: Vec<&str> = KINDS.iter().map(|(k, _)| *k).collect();
            return Err(Error::at_line(
                path,
                line,
                format!("unknown region kind '{kind}'; known: {}", known.join(", ")),
            ));
        };
        let params = parse_params(params_text).map_err(|e| Error::at_line(path, line, e))?;
        let line_start = text[..marker.range.start].rfind('\n').map_or(0, |i| i + 1);
        if matches!(kind, "number" | "question")
            && text[line_start..marker.range.start].trim().is_empty()
        {
            return Err(Error::at_line(
                path,
                line,
                format!(
                    "okn:{kind} begins a line, and Markdown reads a line that begins with <!-- as \
                     an HTML block, which splits the paragraph; put the words before it on the \
                     same line"
                ),
            ));
        }
        for key in params.keys() {
            if !allowed.contains(&key.as_str()) && key != STUDY_KEY {
                return Err(Error::at_line(
                    path,
                    line,
                    format!(
                        "unknown key '{key}' for okn:{kind}; it takes {}",
                        if allowed.is_empty() {
                            STUDY_KEY.to_string()
                        } else {
                            format!("{}, {STUDY_KEY}", allowed.join(", "))
                        }
                    ),
                ));
            }
        }
        open = Some((kind.to_string(), params, line, marker.range.clone()));
    }
    if let Some((kind, _, line, _)) = open {
        return Err(Error::at_line(
            path,
            line,
            format!("okn:{kind} has no closing <!-- /okn:{kind} -->"),
        ));
    }
    Ok(found)
}

/// The block-quote prefix or indentation (`> `, `>> `, `  ` in a list
/// item) a marker at `at` sits behind, so that generated lines stay inside
/// the quote or the list item (a table filled
/// into a list item started at column 0 and split the list).
fn quote_prefix(text: &str, at: usize) -> Option<&str> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..at];
    (!before.is_empty() && before.chars().all(|c| c == '>' || c == ' ' || c == '\t'))
        .then_some(before)
}

/// The key every region kind takes: `study=DIR` fills the region from the
/// study in folder `DIR` (relative to the Markdown file), so a file outside
/// any study (the repository's README) can quote one (`docs/PUBLISHING.md`,
/// "Generated regions").
pub const STUDY_KEY: &str = "study";

/// `text` (the contents of `path`) with every region regenerated: from the
/// study its `study=DIR` names among `studies`, else from `own`, the study
/// `path` belongs to.
///
/// Errors: see [`regions`]; also a region whose `study=` names no study of
/// `studies`, one without `study=` outside a study, a figure from another
/// study, and a region naming a condition, question, metric or figure the
/// study does not have.
pub fn fill(
    own: Option<&StudyView>,
    studies: &[StudyView],
    path: &Path,
    text: &str,
) -> Result<String> {
    let crlf = text.contains("\r\n");
    let mut out = String::with_capacity(text.len() + 1024);
    let mut at = 0;
    for region in regions(path, text)? {
        out.push_str(&text[at..region.content.start]);
        let mut generated = region_study(own, studies, path, &region)
            .and_then(|(study, region)| generate(study, &region))
            .map_err(|e| Error::at_line(path, region.line, e))?;
        if let Some(prefix) = quote_prefix(text, region.whole.start) {
            generated = generated.replace('\n', &format!("\n{prefix}"));
        }
        // A file with CRLF line ends keeps them.
        if crlf {
            generated = generated.replace('\n', "\r\n");
        }
        out.push_str(&generated);
        at = region.content.end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// The study a region is filled from, and the region without its
/// `study=` (see [`fill`]).
fn region_study<'a>(
    own: Option<&'a StudyView>,
    studies: &'a [StudyView],
    path: &Path,
    region: &Region,
) -> std::result::Result<(&'a StudyView, Region), String> {
    let mut region = region.clone();
    let Some(dir) = region.params.remove(STUDY_KEY) else {
        return own.map(|s| (s, region)).ok_or_else(|| {
            "this file is in no study folder: name the study the region reads with study=DIR \
             (its folder, relative to this file)"
                .to_string()
        });
    };
    let wanted = crate::fsutil::normalize(&path.parent().unwrap_or(Path::new("")).join(&dir));
    let study = studies
        .iter()
        .find(|s| crate::fsutil::normalize(&s.dir) == wanted)
        .ok_or_else(|| {
            let known: Vec<String> = studies
                .iter()
                .map(|s| {
                    crate::fsutil::relative(path.parent().unwrap_or(Path::new("")), &s.dir)
                        .join("/")
                })
                .collect();
            format!(
                "study={dir}: no study this build reads is there (a folder with study.toml); \
                 studies: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )
        })?;
    if region.kind == "figure" && own.is_none_or(|o| !std::ptr::eq(o, study)) {
        return Err(format!(
            "okn:figure with study={dir}: a figure is shown in its own study's pages; link to \
             them instead"
        ));
    }
    Ok((study, region))
}

/// `text` with every region marker removed and the generated content kept:
/// what the HTML page of a study's prose is rendered from (markers are
/// comments, but a comment opening a line would split a paragraph).
///
/// Errors: see [`regions`].
/// The text is borrowed when it has no region.
pub fn strip_markers<'t>(path: &Path, text: &'t str) -> Result<std::borrow::Cow<'t, str>> {
    let regions = regions(path, text)?;
    if regions.is_empty() {
        return Ok(std::borrow::Cow::Borrowed(text));
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for region in regions {
        out.push_str(&text[at..region.whole.start]);
        out.push_str(&text[region.content.clone()]);
        at = region.whole.end;
    }
    out.push_str(&text[at..]);
    Ok(std::borrow::Cow::Owned(out))
}

fn block(text: String) -> String {
    format!("\n\n{}\n\n", text.trim_end())
}

fn condition<'a>(
    study: &'a StudyView,
    params: &BTreeMap<String, String>,
    key: &str,
) -> std::result::Result<Option<&'a StudyCondition>, String> {
    match params.get(key) {
        None => Ok(None),
        Some(k) => study.data.condition(k).map(Some).ok_or_else(|| {
            format!(
                "{key}={k} is not a condition of this study; keys: {}",
                study.data.keys()
            )
        }),
    }
}

/// The baseline `baseline=KEY` names, else the study's; `of` the
/// condition it is compared with, whose agent's own baseline the study's
/// is (deltas are taken within an agent).
///
/// Errors: an unknown key; a baseline of another agent than `of`'s.
fn baseline<'a>(
    study: &'a StudyView,
    params: &BTreeMap<String, String>,
    of: Option<&StudyCondition>,
) -> std::result::Result<&'a StudyCondition, String> {
    let named = condition(study, params, "baseline")?;
    if let (Some(b), Some(c)) = (named, of)
        && b.agent != c.agent
    {
        return Err(format!(
            "baseline={} is another agent's condition than {}: deltas are taken within an agent",
            b.key, c.key
        ));
    }
    named
        .or_else(|| study.data.baseline_of(&study.baseline, of))
        .ok_or_else(|| "this study has no conditions".to_string())
}

fn generate(study: &StudyView, region: &Region) -> std::result::Result<String, String> {
    let p = &region.params;
    Ok(match region.kind.as_str() {
        "rates" => block(rates_table(&study.data) + &basis_footnote(&study.data)),
        "questions" => {
            let text = match p.get("text").map(String::as_str) {
                None | Some("yes") => true,
                Some("no") => false,
                Some(other) => return Err(format!("text={other}: expected yes or no")),
            };
            block(with_agents(questions_table(study, text), &study.data))
        }
        "deltas" => block(with_agents(
            deltas_table(&study.data, baseline(study, p, None)?),
            &study.data,
        )),
        "agents" => block(with_agents(agents_table(&study.data), &study.data)),
        "overhead" => {
            block(md_table(&tables::overhead(&study.data)) + &basis_footnote(&study.data))
        }
        "question" => named_question(study, p)?,
        "figure" => {
            let name = p.get("name").ok_or("okn:figure needs name=FIGURE")?;
            let kind = FigureKind::parse(name).ok_or_else(|| {
                let known: Vec<&str> = FigureKind::ALL.iter().map(|k| k.name()).collect();
                format!("unknown figure '{name}'; known: {}", known.join(", "))
            })?;
            if !study.figures.contains(&kind) {
                return Err(format!(
                    "figure '{name}' is not in study.toml's figures; add it there"
                ));
            }
            // Times taken under N shards say so (docs/SCALING.md).
            let sharded: Vec<String> = study
                .data
                .conditions
                .iter()
                .filter_map(|c| {
                    let n = c.condition.identity.shards.filter(|&n| n > 1)?;
                    Some(format!("{} with {n} shards in parallel", c.label))
                })
                .collect();
            let note = if kind == FigureKind::WallTime && !sharded.is_empty() {
                format!(
                    " Timings taken against one server: {}.",
                    md_text(&sharded.join("; "))
                )
            } else {
                String::new()
            };
            let images: Vec<String> = study
                .figure_files(kind)
                .iter()
                .map(|file| {
                    let alt = kind.caption().trim_end_matches('.');
                    match &file.agent {
                        Some(a) => format!(
                            "![{}: {alt}]({FIGURES_DIR}/{}.svg)\n\n*{}: {}*",
                            md_text(&a.label),
                            file.stem,
                            md_text(&a.label),
                            kind.caption()
                        ),
                        None => format!(
                            "![{alt}]({FIGURES_DIR}/{}.svg)\n\n*{}*{note}",
                            file.stem,
                            kind.caption()
                        ),
                    }
                })
                .collect();
            block(images.join("\n\n") + &basis_footnote(&study.data))
        }
        "defeats-every-condition" => block(defeats_list(study) + &basis_footnote(&study.data)),
        "separating" => block(with_agents(separating_table(study), &study.data)),
        "strategies" => block(
            strategies_table(&study.data, condition(study, p, "condition")?)
                + &basis_footnote(&study.data),
        ),
        "number" => number(study, p)?,
        // Issue 27: the trajectory expectations' pass rates per condition.
        "expectations" => match tables::study_expectations(&study.data) {
            Some(grid) => block(with_agents(md_table(&grid), &study.data)),
            None => {
                return Err(
                    "no question of this study's conditions carries a trajectory \
                            expectation (docs/TRAJECTORY.md): give its records #+ expect.ID: \
                            lines, rescore the roots, or remove the region"
                        .into(),
                );
            }
        },
        "comparison" => {
            let key = p.get("key").ok_or("okn:comparison needs key=KEY")?;
            let compared = study
                .comparisons
                .iter()
                .find(|c| c.key == *key)
                .ok_or_else(|| {
                    let known: Vec<&str> =
                        study.comparisons.iter().map(|c| c.key.as_str()).collect();
                    format!(
                        "no comparison '{key}' in study.toml's [[comparisons]]{}",
                        if known.is_empty() {
                            String::new()
                        } else {
                            format!("; known: {}", known.join(", "))
                        }
                    )
                })?;
            block(super::comparison::markdown(&compared.comparison, None))
        }
        other => return Err(format!("unknown region kind '{other}'")),
    })
}

/// The text of a `question` region: the id (as code) of the question
/// `which=` picks, for prose that names it (issue 12: a study names "the
/// question that defeats every agent and the one that separates them").
/// `defeats-every-condition` is the first such question by id;
/// `separating` the question that divides the most conditions (always
/// exact under some, never under others: the most at either extreme, ties
/// to the first by id).
///
/// Errors: an unknown `which`, or no question of that kind (the prose
/// would name nothing: say so in it, or drop the region).
fn named_question(
    study: &StudyView,
    p: &BTreeMap<String, String>,
) -> std::result::Result<String, String> {
    let which = p
        .get("which")
        .ok_or("okn:question needs which=defeats-every-condition or which=separating")?;
    let id = match which.as_str() {
        "defeats-every-condition" => study.data.defeats_every_condition().into_iter().next(),
        "separating" => study
            .data
            .separating()
            .into_iter()
            .enumerate()
            .max_by_key(|(i, s)| (s.always.len() + s.never.len(), std::cmp::Reverse(*i)))
            .map(|(_, s)| s.question),
        other => {
            return Err(format!(
                "which={other}: expected defeats-every-condition or separating"
            ));
        }
    };
    id.map(|id| md_code(&id))
        .ok_or_else(|| format!("no question of this study is {which}: the prose would name none"))
}

/// The text of a `number` region with parameters `p`.
///
/// Errors: an unknown metric or format; a key the metric does not take;
/// a condition, question, baseline or `k` the study does not have.
fn number(study: &StudyView, p: &BTreeMap<String, String>) -> std::result::Result<String, String> {
    let name = p
        .get("metric")
        .ok_or("okn:number needs metric=NAME")?
        .as_str();
    let metric = Metric::parse(name).ok_or_else(|| {
        let known: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
        format!("unknown metric '{name}'; known: {}", known.join(", "))
    })?;
    let as_percent = match p.get("format").map(String::as_str) {
        None | Some("decimal") => false,
        Some("percent") => true,
        Some(other) => return Err(format!("format={other}: expected decimal or percent")),
    };
    let show = |v: Option<f64>| if as_percent { percent(v) } else { rate(v) };
    let takes = metric.takes(p.contains_key("condition"));
    if let Some(extra) = p.keys().find(|k| !takes.contains(&k.as_str())) {
        return Err(format!(
            "metric={name} does not take {extra}= (it takes {})",
            takes.join(", ")
        ));
    }
    if metric.by_strategy() && (p.contains_key("strategy") || !p.contains_key("condition")) {
        let value = attempts_by_strategy(study, metric, p)?;
        return Ok(match condition(study, p, "condition")? {
            Some(c) => with_basis(study, c, value),
            None => with_study_basis(&study.data, value),
        });
    }
    if metric.study_wide(p.contains_key("condition")) {
        let value = study_number(study, metric);
        return Ok(match metric {
            Metric::DefeatsEveryCondition | Metric::Separating => {
                with_study_basis(&study.data, value)
            }
            _ => value,
        });
    }
    let c = condition(study, p, "condition")?.ok_or_else(|| {
        format!(
            "metric {name} needs condition=KEY (keys: {})",
            study.data.keys()
        )
    })?;
    if let Some(question) = p.get("question") {
        let cell = c
            .cell(question)
            .ok_or_else(|| format!("question '{question}' has no result under {}", c.key))?;
        return match metric {
            Metric::Exact => Ok(format!("{}/{}", cell.exact, cell.measured)),
            Metric::ExactRate => Ok(show(cell.rate)),
            Metric::F1 | Metric::MeanF1 => Ok(show(cell.mean_f1)),
            _ => Err(format!(
                "with question= the metric is exact, exact-rate or mean-f1, not {name}"
            )),
        };
    }
    let value = condition_number(study, c, metric, p, &show)?;
    Ok(with_basis(study, c, value))
}

/// `value`, a number of condition `c`, with its basis when it rests on
/// fewer questions than the study's ([`StudyCondition::basis`]): `0.75
/// (8 of 12 questions; 4 excluded)` (issue 24, item 14).
fn with_basis(study: &StudyView, c: &StudyCondition, value: String) -> String {
    match c.basis(&study.data.corpus()) {
        Some(basis) => format!("{value} ({basis})"),
        None => value,
    }
}

/// How many questions of the corpus some condition lacks, and how many
/// conditions lack some: `None` when every condition covers the corpus.
fn study_lacking(data: &StudyData) -> Option<(usize, usize)> {
    let corpus = data.corpus();
    let lacking = corpus
        .iter()
        .filter(|id| data.conditions.iter().any(|c| !c.results.contains_key(*id)))
        .count();
    let cells = data
        .conditions
        .iter()
        .filter(|c| c.basis(&corpus).is_some())
        .count();
    (lacking > 0).then_some((lacking, cells))
}

/// `value`, a study-wide number over every condition, with how many
/// questions some condition leaves out when any does (issue 24, item 14).
fn with_study_basis(data: &StudyData, value: String) -> String {
    match study_lacking(data) {
        Some((lacking, cells)) => format!(
            "{value} (over different question sets: {lacking} of the {} questions left out of \
             {cells} condition{})",
            data.corpus().len(),
            crate::format::plural(cells)
        ),
        None => value,
    }
}

/// The footnote of a table or figure of several conditions when some rest
/// on fewer questions than the study's corpus (`meta.excluded`, or a
/// question a condition never recorded): one line per such condition
/// naming the questions it lacks and each exclusion's recorded reason
/// ([`StudyData::basis_lines`]); empty when every condition covers the
/// corpus. Rates over different question sets are never side by side
/// without it (`docs/PUBLISHING.md`, "Exclusions and incomplete roots";
/// issue 24, item 14).
pub fn basis_footnote(data: &StudyData) -> String {
    let lines = data.basis_lines(&md_code, &md_text);
    if lines.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n\nNot every condition rests on the study's {} questions, so these rates are over \
         different question sets:\n",
        data.corpus().len()
    );
    for line in lines {
        let _ = write!(out, "\n- {line}");
    }
    out
}

/// The paragraph after a table that names conditions by label alone (the
/// `questions`, `deltas`, `agents` and `separating` regions): which agent
/// played each, its host, host version and model
/// ([`StudyData::agents_note`]; issue 25, section 5, "Publishing across
/// hosts"); empty for a study with no condition. The `rates` table has
/// columns of its own for them, and every figure says it under its title.
pub fn agents_footnote(data: &StudyData) -> String {
    data.agents_note()
        .map_or_else(String::new, |note| format!("\n\n{}", md_text(&note)))
}

/// A region's table (or the sentence in its place), then
/// [`agents_footnote`] and [`basis_footnote`].
fn with_agents(table: String, data: &StudyData) -> String {
    format!(
        "{}{}{}",
        table.trim_end(),
        agents_footnote(data),
        basis_footnote(data)
    )
}

/// `expectation-pass` of condition `c`: the share of its attempts where
/// expectation `expectation=ID` held, over those where it applied
/// (`docs/TRAJECTORY.md`, "Statuses"), shown as `show` shows a rate.
///
/// Errors: no `expectation=`; no question of the condition carries that
/// id (the ids it has named); it applied to none of its attempts.
fn expectation_pass(
    c: &StudyCondition,
    p: &BTreeMap<String, String>,
    show: &dyn Fn(Option<f64>) -> String,
) -> std::result::Result<String, String> {
    let id = p
        .get("expectation")
        .ok_or("metric=expectation-pass needs expectation=ID")?;
    let mut tallies = BTreeMap::new();
    for result in c.results.values() {
        crate::report::view::tally_expectations(result, &mut tallies);
    }
    let Some(tally) = tallies.get(id) else {
        let ids: Vec<&str> = tallies.keys().map(String::as_str).collect();
        return Err(format!(
            "expectation={id}: no question of condition={} carries it (it has {}){}",
            c.key,
            if ids.is_empty() {
                "none".to_string()
            } else {
                ids.join(", ")
            },
            crate::suggest::did_you_mean(id, ids.iter().copied())
        ));
    };
    match tally.rate() {
        Some(rate) => Ok(show(Some(rate))),
        None => Err(format!(
            "expectation={id} applied to none of the attempts of condition={}: there is no pass \
             rate to show",
            c.key
        )),
    }
}

/// `first-query-hit` or `exploratory-calls` of condition `c`, a count
/// over its measured attempts, read off their calls
/// ([`crate::runs::trajectory`]).
///
/// Errors: an attempt judged before trajectories were recorded (`rescore`
/// records them), named with the count.
fn trajectory_value(c: &StudyCondition, metric: Metric) -> std::result::Result<String, String> {
    let measured: Vec<&crate::runs::records::AttemptResult> = c
        .results
        .values()
        .flat_map(|r| r.attempts.iter())
        .filter(|a| !a.blocked)
        .collect();
    let facts: Vec<&crate::runs::trajectory::Trajectory> = measured
        .iter()
        .filter_map(|a| a.trajectory.as_ref())
        .collect();
    if facts.len() < measured.len() {
        return Err(format!(
            "metric={}: {} of the {} measured attempts of condition={} have no trajectory \
             recorded: run `okn-benchmark rescore` on the runs root",
            metric.name(),
            measured.len() - facts.len(),
            measured.len(),
            c.key
        ));
    }
    Ok(match metric {
        Metric::FirstQueryHit => facts
            .iter()
            .filter(|t| t.first_query_hit == Some(true))
            .count()
            .to_string(),
        _ => facts
            .iter()
            .map(|t| t.exploratory_calls)
            .sum::<usize>()
            .to_string(),
    })
}

/// `cost`, `cost-per-exact` or `tokens` of condition `c`, from what each
/// attempt's agent host reported (`result.json`'s `usage`). Every attempt
/// must have reported the figure: a mean over the ones that did would
/// not be the condition's.
///
/// Errors: a condition some of whose attempts reported no such figure
/// (a scripted agent reports none), named with the count; `cost-per-exact`
/// of a condition with no exact attempt.
fn usage_value(c: &StudyCondition, metric: Metric) -> std::result::Result<String, String> {
    let attempts: Vec<&crate::runs::records::AttemptResult> =
        c.results.values().flat_map(|r| r.attempts.iter()).collect();
    let figure = |a: &crate::runs::records::AttemptResult| {
        let u = a.usage.as_ref()?;
        match metric {
            Metric::Tokens => Some((u.all_input_tokens()? + u.output()?) as f64),
            _ => u.cost(),
        }
    };
    let values: Vec<f64> = attempts.iter().filter_map(|a| figure(a)).collect();
    let what = if metric == Metric::Tokens {
        "tokens"
    } else {
        "cost"
    };
    if attempts.is_empty() || values.len() < attempts.len() {
        return Err(format!(
            "metric={}: {} of the {} attempts of condition={} reported no {what} (a scripted \
             agent reports none): there is no honest figure to show",
            metric.name(),
            attempts.len() - values.len(),
            attempts.len(),
            c.key
        ));
    }
    let total: f64 = values.iter().sum();
    Ok(match metric {
        Metric::Tokens => format!("{:.0}", total / values.len() as f64),
        Metric::Cost => format!("${}", crate::format::fixed(total / values.len() as f64, 4)),
        _ => {
            let exact = attempts.iter().filter(|a| a.exact && !a.blocked).count();
            if exact == 0 {
                return Err(format!(
                    "metric=cost-per-exact: condition={} has no exact attempt",
                    c.key
                ));
            }
            format!("${}", crate::format::fixed(total / exact as f64, 4))
        }
    })
}

/// An attempt count of `metric` over the attempts of `condition=KEY` (of
/// every condition without it) that played `strategy=NAME` (every
/// strategy without it).
///
/// Errors: a condition the study does not have; a strategy no measured
/// attempt played (naming those that were).
fn attempts_by_strategy(
    study: &StudyView,
    metric: Metric,
    p: &BTreeMap<String, String>,
) -> std::result::Result<String, String> {
    let counts = study.data.strategies(condition(study, p, "condition")?);
    let counts: Vec<&StrategyCount> = match p.get("strategy") {
        None => counts.iter().collect(),
        Some(name) => {
            let found: Vec<&StrategyCount> = counts
                .iter()
                .filter(|c| c.strategy.as_deref() == Some(name.as_str()))
                .collect();
            if found.is_empty() {
                let played: Vec<&str> = counts
                    .iter()
                    .filter_map(|c| c.strategy.as_deref())
                    .collect();
                return Err(format!(
                    "strategy={name}: no measured attempt recorded playing it; played: {}",
                    if played.is_empty() {
                        "none (only the scripted agent records a strategy)".to_string()
                    } else {
                        played.join(", ")
                    }
                ));
            }
            found
        }
    };
    let count = |f: fn(&StrategyCount) -> u32| counts.iter().map(|c| f(c)).sum::<u32>();
    Ok(match metric {
        Metric::MeasuredAttempts => count(|c| c.attempts),
        Metric::ExactAttempts => count(|c| c.exact),
        Metric::StrictExactAttempts => count(|c| c.strict_exact),
        _ => count(|c| c.normalized_only),
    }
    .to_string())
}

/// A study-wide number.
fn study_number(study: &StudyView, metric: Metric) -> String {
    let data = &study.data;
    match metric {
        Metric::Conditions => data.conditions.len(),
        Metric::DefeatsEveryCondition => data.defeats_every_condition().len(),
        Metric::Separating => data.separating().len(),
        Metric::Questions => {
            // The study's questions, and how many of them some condition
            // lacks (issue 24, item 14).
            let all = data.corpus().len();
            return match study_lacking(data) {
                None => all.to_string(),
                Some((lacking, cells)) => format!(
                    "{all} ({lacking} of them left out of {cells} condition{}: see the footnotes \
                     of the tables)",
                    crate::format::plural(cells)
                ),
            };
        }
        _ => data
            .conditions
            .iter()
            .map(|c| c.condition.aggregate.attempts as usize)
            .sum::<usize>(),
    }
    .to_string()
}

/// A number of one condition `c`.
fn condition_number(
    study: &StudyView,
    c: &StudyCondition,
    metric: Metric,
    p: &BTreeMap<String, String>,
    show: &dyn Fn(Option<f64>) -> String,
) -> std::result::Result<String, String> {
    let s = c.stats();
    let name = metric.name();
    let k = || -> std::result::Result<usize, String> {
        let k: u32 = p
            .get("k")
            .ok_or(format!("{name} needs k=N"))?
            .parse()
            .ok()
            .filter(|k| *k >= 1)
            .ok_or_else(|| "k must be a whole number of at least 1".to_string())?;
        s.pass.iter().position(|x| x.k == k).ok_or_else(|| {
            format!(
                "k={k}: {} has {} attempt{} per question",
                c.key,
                s.repeat,
                crate::format::plural(s.repeat as usize)
            )
        })
    };
    Ok(match metric {
        Metric::ExactRate => show(s.exact_rate),
        Metric::StrictExactRate => show(s.strict_exact_rate),
        Metric::OrderedRate => show(s.ordered_rate),
        Metric::MeanF1 => show(s.mean_f1),
        Metric::ExactInterval => interval(s.interval),
        Metric::Questions => s.questions.to_string(),
        Metric::MeasuredQuestions => s.measured_questions.to_string(),
        Metric::Attempts => s.attempts.to_string(),
        Metric::MeasuredAttempts => s.measured_attempts.to_string(),
        Metric::BlockedAttempts => s.blocked_attempts.to_string(),
        Metric::ExactAttempts => s.exact_attempts.to_string(),
        Metric::StrictExactAttempts | Metric::NormalizedOnlyAttempts => {
            return attempts_by_strategy(study, metric, p);
        }
        Metric::AlwaysExact => s.always_exact.to_string(),
        Metric::EverExact => s.ever_exact.to_string(),
        Metric::NeverExact => {
            (s.measured_questions - s.ever_exact.min(s.measured_questions)).to_string()
        }
        Metric::Flaky => s.flaky.to_string(),
        Metric::Cost | Metric::CostPerExact | Metric::Tokens => return usage_value(c, metric),
        Metric::FirstQueryHit | Metric::ExploratoryCalls => return trajectory_value(c, metric),
        Metric::ExpectationPass => return expectation_pass(c, p, show),
        Metric::MeanWallS => maybe_seconds(s.mean_wall_s),
        Metric::MeanServerS => maybe_seconds(s.mean_server_s),
        Metric::PassAtK => show(Some(s.pass[k()?].pass_at_k)),
        Metric::PassHatK => show(Some(s.pass[k()?].pass_hat_k)),
        Metric::Delta | Metric::DeltaInterval => {
            let b = baseline(study, p, Some(c))?;
            if b.key == c.key {
                return Err(format!(
                    "metric={name} compares condition={} with itself: name another condition \
                     as baseline= (the study's baseline is {})",
                    c.key, study.baseline
                ));
            }
            let d = study
                .data
                .delta(b, c)
                .ok_or_else(|| format!("{} and {} share no measured question", b.key, c.key))?;
            if metric == Metric::Delta {
                signed(d.estimate)
            } else {
                delta_interval(d.interval)
            }
        }
        other => return Err(format!("metric {} needs question=ID", other.name())),
    })
}

/// The per-condition rates table (Markdown): one row per condition, with
/// the exact rate, its bootstrap interval over questions, strict and ordered
/// rates, mean F1, question and attempt counts, and blocked attempts.
pub fn rates_table(data: &StudyData) -> String {
    format!(
        "{}\n{}\n",
        md_table(&tables::study_rates(data)),
        md_text(crate::format::ORDERED_NOTE)
    )
}

/// The pairwise deltas table (Markdown): every other condition against
/// `baseline` (with agents, against its own agent's condition of
/// `baseline`'s key), paired over questions both measured, with a 95%
/// bootstrap interval over questions.
pub fn deltas_table(data: &StudyData, baseline: &StudyCondition) -> String {
    md_table(&tables::deltas(data, &baseline.base_key))
}

/// The agents table (Markdown): one row per condition, the exact rate and
/// its interval under each agent ([`tables::agents`]).
pub fn agents_table(data: &StudyData) -> String {
    if data.agents.is_empty() {
        return "This study has no agents ([[agents]] in study.toml).".to_string();
    }
    md_table(&tables::agents(data))
}

/// The per-question table (Markdown): one row per question, the exact
/// attempts over measured attempts under each condition, and with `text`
/// the question itself.
pub fn questions_table_of(data: &StudyData, text: bool) -> String {
    md_table(&tables::study_questions(data, text))
}

fn questions_table(study: &StudyView, text: bool) -> String {
    questions_table_of(&study.data, text)
}

fn defeats_list(study: &StudyView) -> String {
    let questions = study.data.defeats_every_condition();
    if questions.is_empty() {
        return "No question defeats every condition.".to_string();
    }
    let mut out = String::new();
    for q in questions {
        let cells: Vec<String> = study
            .data
            .conditions
            .iter()
            .filter_map(|c| {
                let cell = c.cell(&q)?;
                Some(format!("0/{}", cell.measured))
            })
            .collect();
        let text = study
            .data
            .text(&q)
            .map(|t| format!(" — {}", md_text(&t)))
            .unwrap_or_default();
        let _ = writeln!(out, "- {} ({}){text}", md_code(&q), cells.join(", "));
    }
    out
}

/// The measured attempts by the strategy the scripted agent recorded
/// playing (Markdown), of `only` or of every condition: how far each
/// corruption gets through each scoring tier.
pub fn strategies_table(data: &StudyData, only: Option<&StudyCondition>) -> String {
    let counts = data.strategies(only);
    if counts.is_empty() {
        return "No attempt was measured.".to_string();
    }
    if counts.iter().all(|c| c.strategy.is_none()) {
        return "No attempt records a strategy played: only the scripted agent plays one."
            .to_string();
    }
    md_table(&tables::strategies(&counts))
}

fn separating_table(study: &StudyView) -> String {
    match tables::separating(&study.data) {
        Some(grid) => md_table(&grid),
        None => "No question separates the conditions: none is always exact under one and never under another.".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::fixed;
    use crate::layout::RunsRoot;
    use std::path::PathBuf;

    fn demo_root() -> PathBuf {
        crate::testing::demo_root()
    }

    fn study_with(toml: &str) -> (tempfile::TempDir, Result<StudyView>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(STUDY_FILE), toml).unwrap();
        let study = crate::report::study_file::load(dir.path());
        (dir, study)
    }

    fn demo_study() -> (tempfile::TempDir, StudyView) {
        let root = demo_root();
        let names = RunsRoot::new(&root).condition_names();
        let toml = format!(
            "title = \"T\"\nroots = [{root:?}]\nfigures = [\"heatmap\"]\nbaseline = \"b\"\n\n[[conditions]]\nkey = \"b\"\nname = {:?}\nlabel = \"Base <line>\"\n\n[[conditions]]\nkey = \"c\"\nname = {:?}\n",
            names[1], names[0]
        );
        let (dir, study) = study_with(&toml);
        (dir, study.unwrap())
    }

    #[test]
    fn trajectory_counts_are_what_the_demo_roots_calls_say() {
        let (_dir, mut study) = demo_study();
        let c = &study.data.conditions[0];
        let measured = c
            .results
            .values()
            .flat_map(|r| r.attempts.iter())
            .filter(|a| !a.blocked)
            .count();
        // The scripted agents' habits (README, "The demo studies"): some
        // attempts list the graphs and read a schema first, and some first
        // query every graph; the figures are the attempts' own, summed.
        let measured_attempts = || {
            c.results
                .values()
                .flat_map(|r| r.attempts.iter())
                .filter(|a| !a.blocked)
        };
        let hits = measured_attempts()
            .filter(|a| {
                a.trajectory
                    .as_ref()
                    .is_some_and(|t| t.first_query_hit == Some(true))
            })
            .count();
        let exploratory: u64 = measured_attempts()
            .map(|a| {
                a.trajectory
                    .as_ref()
                    .map_or(0, |t| t.exploratory_calls as u64)
            })
            .sum();
        assert!(
            hits < measured && hits > measured / 2,
            "{hits} of {measured}"
        );
        assert!(exploratory > 0);
        assert_eq!(
            trajectory_value(c, Metric::FirstQueryHit).unwrap(),
            hits.to_string()
        );
        assert_eq!(
            trajectory_value(c, Metric::ExploratoryCalls).unwrap(),
            exploratory.to_string()
        );
        // An attempt judged before trajectories were recorded: no figure.
        let first = study.data.conditions[0]
            .results
            .values_mut()
            .next()
            .unwrap();
        first.attempts[0].trajectory = None;
        let e = trajectory_value(&study.data.conditions[0], Metric::FirstQueryHit).unwrap_err();
        assert!(
            e.contains("have no trajectory recorded: run `okn-benchmark rescore`"),
            "{e}"
        );
    }

    #[test]
    fn cost_and_tokens_are_means_of_what_every_attempt_reported_or_refused() {
        let (_dir, mut study) = demo_study();
        let value =
            |study: &StudyView, metric: Metric| usage_value(&study.data.conditions[0], metric);
        // A scripted agent reports nothing: no figure, and why.
        let e = value(&study, Metric::Cost).unwrap_err();
        assert!(
            e.contains("reported no cost (a scripted agent reports none)"),
            "{e}"
        );
        // Every attempt reporting $0.01 and 100 + 20 tokens.
        let mut exact = 0;
        let mut n = 0;
        for result in study.data.conditions[0].results.values_mut() {
            for a in &mut result.attempts {
                n += 1;
                exact += usize::from(a.exact && !a.blocked);
                a.usage = Some(crate::runs::records::Usage {
                    source: "agent.json".into(),
                    cost_usd: Some(0.01),
                    input_tokens: Some(80),
                    output_tokens: Some(20),
                    cache_creation_input_tokens: None,
                    cache_read_input_tokens: Some(20),
                    num_turns: Some(3),
                    api_s: None,
                });
            }
        }
        assert!(n > 0 && exact > 0);
        assert_eq!(value(&study, Metric::Cost).unwrap(), "$0.0100");
        assert_eq!(value(&study, Metric::Tokens).unwrap(), "120");
        assert_eq!(
            value(&study, Metric::CostPerExact).unwrap(),
            format!(
                "${}",
                crate::format::fixed(0.01 * n as f64 / exact as f64, 4)
            )
        );
    }

    #[test]
    fn strategy_counts_are_what_the_demo_root_recorded() {
        let root = demo_root();
        let (_dir, study) = study_with(&format!(
            "title = \"T\"\nroots = [{root:?}]\nfigures = []\n"
        ));
        let study = study.unwrap();
        let fill_one = |region: &str| {
            let text = format!("x {region}");
            fill(Some(&study), &[], Path::new("S.md"), &text)
                .map(|t| t.trim_start_matches("x ").to_string())
                .map_err(|e| e.to_string())
        };
        let n = |params: &str| {
            fill_one(&format!(
                "<!-- okn:number {params} -->?<!-- /okn:number -->"
            ))
            .map(|t| {
                t.split("-->")
                    .nth(1)
                    .and_then(|r| r.split("<!--").next())
                    .unwrap_or_default()
                    .to_string()
            })
        };
        // Only the local-name corruption is exact once normalized and not
        // before (where the answer held an IRI to shorten: 10 of its 12);
        // the four-significant-figure one is exact in both tiers.
        assert_eq!(n("metric=normalized-only-attempts").unwrap(), "10");
        assert_eq!(
            n("metric=normalized-only-attempts strategy=local-names").unwrap(),
            "10"
        );
        assert_eq!(
            n("metric=measured-attempts strategy=local-names").unwrap(),
            "12"
        );
        assert_eq!(
            n("metric=measured-attempts strategy=decimals-4").unwrap(),
            "5"
        );
        assert_eq!(
            n("metric=strict-exact-attempts strategy=decimals-4").unwrap(),
            "5"
        );
        assert_eq!(
            n("metric=normalized-only-attempts strategy=decimals-4").unwrap(),
            "0"
        );
        assert_eq!(n("metric=measured-attempts").unwrap(), "108");
        let key = &study.data.conditions[0].key;
        assert_eq!(
            n(&format!("metric=measured-attempts condition={key}")).unwrap(),
            "36"
        );
        // The same count with and without strategy= agrees with the stats.
        let named = &study.data.conditions[0];
        assert_eq!(
            n(&format!("metric=exact-attempts condition={key}")).unwrap(),
            named.stats().exact_attempts.to_string()
        );
        let e = n("metric=exact-attempts strategy=nope").unwrap_err();
        assert!(e.contains("strategy=nope: no measured attempt recorded playing it; played: decimals-4, drop-row"), "{e}");
        let e = n(&format!(
            "metric=exact-rate condition={key} strategy=oracle"
        ))
        .unwrap_err();
        assert!(e.contains("does not take strategy="), "{e}");
        let table = fill_one("<!-- okn:strategies -->\n<!-- /okn:strategies -->").unwrap();
        for row in [
            "| `decimals-4` | 5 | 5 | 5 | 0 |",
            "| `local-names` | 12 | 12 | 2 | 10 |",
            "| `oracle` | 58 | 58 | 58 | 0 |",
        ] {
            assert!(table.contains(row), "{table}");
        }
        assert!(!table.contains("not recorded"), "{table}");
        let one = fill_one(&format!(
            "<!-- okn:strategies condition={key} -->\n<!-- /okn:strategies -->"
        ))
        .unwrap();
        let rows: u32 = one
            .lines()
            .filter(|l| l.starts_with("| `"))
            .map(|l| l.split('|').nth(2).unwrap().trim().parse::<u32>().unwrap())
            .sum();
        assert_eq!(rows, 36, "{one}");
    }

    #[test]
    fn regions_are_found_with_their_parameters_and_lines() {
        let text = "# T\n\nRate <!-- okn:number metric=exact-rate condition=\"a b\" -->0.5<!-- /okn:number -->.\n\n<!-- okn:rates -->\nold\n<!-- /okn:rates -->\n";
        let found = regions(Path::new("S.md"), text).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].kind, "number");
        assert_eq!(found[0].line, 3);
        assert_eq!(found[0].params["condition"], "a b");
        assert_eq!(&text[found[0].content.clone()], "0.5");
        assert_eq!(found[1].kind, "rates");
        assert_eq!(found[1].line, 5);
        assert_eq!(&text[found[1].content.clone()], "\nold\n");
    }

    #[test]
    fn bad_regions_name_the_file_and_line() {
        let cases = [
            (
                "a\n<!-- okn:chart -->x<!-- /okn:chart -->",
                2,
                "unknown region kind 'chart'",
            ),
            (
                "a\n\nb <!-- okn:rates color=red -->x<!-- /okn:rates -->",
                3,
                "unknown key 'color'",
            ),
            (
                "<!-- okn:rates -->\nx\n",
                1,
                "no closing <!-- /okn:rates -->",
            ),
            ("x\n<!-- /okn:rates -->", 2, "no opening"),
            ("a <!-- okn:number metric=\"x -->", 1, "unclosed quote"),
            (
                "Rate:\n  <!-- okn:number metric=questions --><!-- /okn:number -->",
                2,
                "begins a line",
            ),
            (
                "<!-- okn:rates -->\n<!-- okn:rates -->\n<!-- /okn:rates -->",
                2,
                "do not nest",
            ),
        ];
        for (text, line, message) in cases {
            let e = regions(Path::new("dir/S.md"), text)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(&format!("dir/S.md:{line}: ")), "{e}");
            assert!(e.contains(message), "{e}");
        }
    }

    #[test]
    fn markers_in_code_are_text() {
        let text = "Write `<!-- okn:rates -->` to embed.\n\n```\n<!-- okn:nothing -->\n<!-- /okn:x -->\n```\n";
        assert_eq!(regions(Path::new("S.md"), text).unwrap(), vec![]);
    }

    #[test]
    fn regions_are_filled_from_the_episodes_and_refilling_changes_nothing() {
        let (dir, study) = demo_study();
        let b = study.data.condition("b").unwrap().stats();
        let c = study.data.condition("c").unwrap().stats();
        let text = "Base answers <!-- okn:number condition=b metric=exact-rate -->?<!-- /okn:number --> \
(<!-- okn:number condition=b metric=exact-rate format=percent -->?<!-- /okn:number -->), \
always <!-- okn:number condition=b metric=always-exact -->?<!-- /okn:number --> of \
<!-- okn:number metric=questions -->?<!-- /okn:number -->; delta \
<!-- okn:number condition=c metric=delta -->?<!-- /okn:number -->.\n\n\
<!-- okn:rates -->\n<!-- /okn:rates -->\n\n<!-- okn:figure name=heatmap -->\n<!-- /okn:figure -->\n";
        let path = dir.path().join("SUMMARY.md");
        let filled = fill(Some(&study), &[], &path, text).unwrap();
        let expected_rate = fixed(b.exact_rate.unwrap(), 2);
        assert!(
            filled.contains(&format!("Base answers <!-- okn:number condition=b metric=exact-rate -->{expected_rate}<!-- /okn:number -->")),
            "{filled}"
        );
        let pct = format!("{}%", fixed(b.exact_rate.unwrap() * 100.0, 0));
        assert!(filled.contains(&pct), "{filled}");
        assert!(filled.contains(&format!(
            "always <!-- okn:number condition=b metric=always-exact -->{}<",
            b.always_exact
        )));
        assert!(
            filled.contains("-->12<!-- /okn:number -->; delta"),
            "{filled}"
        );
        let delta = signed(c.exact_rate.unwrap() - b.exact_rate.unwrap());
        assert!(
            filled.contains(&format!("-->{delta}<!-- /okn:number -->.")),
            "{filled}"
        );
        // The label is made inert, the table has one row per condition.
        assert!(filled.contains("| Base &lt;line&gt; |"), "{filled}");
        let caption = FigureKind::Heatmap.caption();
        assert!(
            filled.contains(&format!(
                "![{}](figures/heatmap.svg)",
                caption.trim_end_matches('.')
            )),
            "{filled}"
        );
        assert_eq!(fill(Some(&study), &[], &path, &filled).unwrap(), filled);
    }

    #[test]
    fn regions_that_name_what_the_study_lacks_are_errors() {
        let (_dir, study) = demo_study();
        let cases = [
            (
                "<!-- okn:number metric=exact-rate condition=zz --><!-- /okn:number -->",
                "condition=zz is not a condition",
            ),
            (
                "<!-- okn:number metric=speed condition=b --><!-- /okn:number -->",
                "unknown metric 'speed'",
            ),
            (
                "<!-- okn:number metric=exact-rate --><!-- /okn:number -->",
                "needs condition=KEY",
            ),
            (
                "<!-- okn:figure name=f1 --><!-- /okn:figure -->",
                "not in study.toml's figures",
            ),
            (
                "<!-- okn:number metric=pass-at-k condition=b k=9 --><!-- /okn:number -->",
                "k=9",
            ),
        ];
        for (text, message) in cases {
            let e = fill(
                Some(&study),
                &[],
                Path::new("Q.md"),
                &format!("x\nSee {text}"),
            )
            .unwrap_err()
            .to_string();
            assert!(e.starts_with("Q.md:2: "), "{e}");
            assert!(e.contains(message), "{e}");
        }
    }

    #[test]
    fn bad_study_files_name_the_line() {
        let root = demo_root();
        let cases = [
            (
                format!("title = \"T\"\nroots = [{root:?}]\ncolour = 1\n"),
                3,
                "unknown field `colour`",
            ),
            (
                "title = \"T\"\nroots = [\"nowhere\"]\n".to_string(),
                2,
                "runs root 'nowhere' not found",
            ),
            (
                format!("title = \"T\"\nroots = [{root:?}]\nfigures = [\"pie\"]\n"),
                3,
                "unknown figure 'pie'",
            ),
            (
                format!(
                    "title = \"T\"\nroots = [{root:?}]\n\n[[conditions]]\nkey = \"a\"\nname = \"nope\"\n"
                ),
                6,
                "is not recorded in",
            ),
            (
                format!("title = \"T\"\nroots = [{root:?}]\nbaseline = \"q\"\n"),
                3,
                "baseline 'q'",
            ),
        ];
        for (toml, line, message) in cases {
            let (dir, study) = study_with(&toml);
            let e = study.unwrap_err().to_string();
            let file = dir.path().join(STUDY_FILE);
            assert!(
                e.starts_with(&format!("{}:{line}: ", file.display())),
                "{e}"
            );
            assert!(e.contains(message), "{e}");
        }
    }

    /// Markers written without spaces or in capitals
    /// were silently left alone, and a number could drift.
    #[test]
    fn parameters_may_be_quoted_either_way_with_escapes() {
        let p = parse_params(r#"a=plain b="two words" c="say \"hi\" \\ \n" d='it said "no"' e="""#)
            .unwrap();
        assert_eq!(p["a"], "plain");
        assert_eq!(p["b"], "two words");
        assert_eq!(p["c"], r#"say "hi" \ \n"#);
        assert_eq!(p["d"], r#"it said "no""#);
        assert_eq!(p["e"], "");
        assert!(
            parse_params(r#"a="open"#)
                .unwrap_err()
                .contains("unclosed quote in a=")
        );
        assert!(
            parse_params(r#"a='open"#)
                .unwrap_err()
                .contains("unclosed quote in a=")
        );
    }

    #[test]
    fn a_marker_never_closed_is_an_error() {
        let e = regions(
            Path::new("S.md"),
            "# S\n\nX <!-- okn:number metric=questions\n\nThe rest.\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("S.md:3: this <!-- okn:... marker is never closed"),
            "{e}"
        );
        // An ordinary unclosed comment is the author's business.
        assert_eq!(regions(Path::new("S.md"), "a <!-- note\n").unwrap(), vec![]);
    }

    #[test]
    fn markers_written_differently_are_still_regions() {
        let text = "a <!--okn:number metric=questions-->9<!--/okn:number--> b <!-- OKN:number metric=questions -->9<!-- / okn:number -->\n";
        let found = regions(Path::new("S.md"), text).unwrap();
        assert_eq!(found.len(), 2);
        let e = regions(
            Path::new("S.md"),
            "<!-- okn:rates -->\nx\n<!-- /okn:deltas -->\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("S.md:3: <!-- /okn:deltas --> closes okn:rates, opened at line 1"),
            "{e}"
        );
    }

    #[test]
    fn regions_in_block_quotes_and_crlf_files_keep_their_form() {
        let (dir, study) = demo_study();
        let path = dir.path().join("S.md");
        let quoted = "> Note:\n> <!-- okn:separating -->\n> <!-- /okn:separating -->\n";
        let filled = fill(Some(&study), &[], &path, quoted).unwrap();
        for line in filled.lines() {
            assert!(line.starts_with('>'), "{line:?} left the quote:\n{filled}");
        }
        assert_eq!(fill(Some(&study), &[], &path, &filled).unwrap(), filled);
        // In a list item, the filled table keeps the item's indentation.
        let listed = "- Rates:\n\n  <!-- okn:rates -->\n  <!-- /okn:rates -->\n\nAfter.\n";
        let filled = fill(Some(&study), &[], &path, listed).unwrap();
        let inside: Vec<&str> = filled
            .lines()
            .skip_while(|l| !l.contains("<!-- okn:rates"))
            .take_while(|l| !l.contains("<!-- /okn:rates"))
            .collect();
        assert!(inside.iter().any(|l| l.contains("| ")), "{filled}");
        for line in &inside {
            assert!(
                line.starts_with("  "),
                "{line:?} left the list item:\n{filled}"
            );
        }
        assert!(
            filled.ends_with("  <!-- /okn:rates -->\n\nAfter.\n"),
            "{filled}"
        );
        assert_eq!(fill(Some(&study), &[], &path, &filled).unwrap(), filled);
        let html = crate::render::markdown::render(
            &strip_markers(&path, &filled).unwrap(),
            dir.path(),
            "p",
            &crate::render::assets::AssetMap::new(),
        )
        .body;
        let table = html.find("<table").unwrap();
        assert!(
            html[..table].contains("<li>") && !html[..table].contains("</li>"),
            "{html}"
        );
        let crlf = "# S\r\n\r\n<!-- okn:rates -->\r\n<!-- /okn:rates -->\r\n";
        let filled = fill(Some(&study), &[], &path, crlf).unwrap();
        assert!(
            !filled.replace("\r\n", "").contains('\n'),
            "mixed line ends"
        );
        assert_eq!(fill(Some(&study), &[], &path, &filled).unwrap(), filled);
    }

    #[test]
    fn a_key_a_metric_would_ignore_is_an_error() {
        let (_dir, study) = demo_study();
        for (text, message) in [
            (
                "<!-- okn:number metric=conditions condition=b --><!-- /okn:number -->",
                "metric=conditions does not take condition=",
            ),
            (
                "<!-- okn:number metric=attempts condition=b format=percent --><!-- /okn:number -->",
                "does not take format=",
            ),
            (
                "<!-- okn:number metric=exact-rate condition=b k=2 --><!-- /okn:number -->",
                "does not take k=",
            ),
        ] {
            let e = fill(Some(&study), &[], Path::new("Q.md"), &format!("See {text}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(message), "{e}");
        }
    }

    #[test]
    fn duplicated_or_empty_lists_in_study_files_are_errors() {
        let root = demo_root();
        for (toml, message) in [
            (
                format!("title = \"T\"\nroots = [{root:?}, {root:?}]\n"),
                "named twice",
            ),
            (
                format!("title = \"T\"\nroots = [{root:?}]\nfigures = [\"f1\", \"f1\"]\n"),
                "listed twice",
            ),
            (
                format!("title = \"T\"\nroots = [{root:?}]\nconditions = []\n"),
                "conditions is empty",
            ),
        ] {
            let (_dir, study) = study_with(&toml);
            let e = study.unwrap_err().to_string();
            assert!(e.contains(message), "{e}");
        }
    }

    #[test]
    fn conditions_of_several_roots_are_keyed_by_folder_name() {
        let roots = crate::testing::demo_roots();
        let list: Vec<String> = roots.iter().map(|r| format!("{r:?}")).collect();
        let (_dir, study) = study_with(&format!("title = \"T\"\nroots = [{}]\n", list.join(", ")));
        let study = study.unwrap();
        let first = root_label(&roots[0]);
        let key = &study.data.conditions[0].key;
        assert!(
            key.starts_with(&format!("{first}/")) && !key.contains(".."),
            "{key}"
        );
        assert!(
            study.data.conditions[0]
                .label
                .ends_with(&format!("({first})"))
        );
    }

    proptest::proptest! {
        /// Any prose, comments and markers in any script (accents, CJK,
        /// emoji, combining marks) is scanned for regions without a panic:
        /// a non-English HTML comment once blocked every build.
        #[test]
        fn scanning_any_prose_for_regions_never_panics(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    "\\PC{0,6}",
                    proptest::strategy::Just("<!--".to_string()),
                    proptest::strategy::Just("-->".to_string()),
                    proptest::strategy::Just("okn:".to_string()),
                    proptest::strategy::Just("/".to_string()),
                    proptest::strategy::Just("`".to_string()),
                    proptest::strategy::Just("\n".to_string()),
                    "[été中文😀\u{301}]{1,3}",
                ],
                0..24,
            )
        ) {
            let text: String = parts.concat();
            let _ = regions(Path::new("S.md"), &text);
            let _ = strip_markers(Path::new("S.md"), &text);
        }
    }
}
