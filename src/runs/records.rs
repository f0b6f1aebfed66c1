//! The files of a runs root as types: `episode.json`, `result.json`,
//! `conditions/NAME.json` and the `summary.csv` rows. Their format is
//! `docs/FORMAT.md`; each JSON file carries `format` =
//! [`RUNS_FORMAT`]. Numbers are seconds (`_s`), counts, and fractions in
//! [0, 1].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::identity::Identity;
use crate::mcp::profile::ProfileRecord;
use crate::score::Score;
use crate::sparql::EndpointInfo;

/// Version of the runs-root file formats that this version writes
/// (`docs/FORMAT.md`, "Format versions"): 2 added `usage` (cost and
/// tokens), `trajectory` and `reply_chars`, members a format-1 file may
/// lack, and which read as "not reported" when absent; 3 put the
/// seventeen columns of `summary.csv` first, in the order the format
/// names them, and the cost and token columns after `notes` (issue 24,
/// item 29), and added the members a resume compares (`upstream` in a
/// condition's identity and in `episode.json`); 4 records the agent
/// host's report in `episode.json` (`host_report`, issue 25) in place of
/// its `usage`; 5 records the tool census in a condition file
/// (`settings.census`, issue 25).
pub const RUNS_FORMAT: u32 = 5;

/// The runs-root formats this version reads: every one so far, so an
/// older root is reported, rescored and published as it is.
pub const RUNS_FORMATS_READ: std::ops::RangeInclusive<u32> = 1..=RUNS_FORMAT;

/// The formats read, as a message words them (`1 to 2`).
pub fn formats_read() -> String {
    format!(
        "{} to {}",
        RUNS_FORMATS_READ.start(),
        RUNS_FORMATS_READ.end()
    )
}

/// `episode.json`: what the runner itself observed. Written last, so its
/// presence marks a finished attempt (`--resume` reuses only those).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Episode {
    /// [`RUNS_FORMAT`].
    pub format: u32,
    /// 1-based attempt number.
    pub attempt: u32,
    /// `claude`, `codex`, `gemini`, `openai:MODEL` or `scripted:STRATEGY`.
    pub agent: String,
    /// The model asked for, if any.
    pub model_requested: Option<String>,
    /// The model the agent host reported using, if it said.
    pub model_resolved: Option<String>,
    /// Wall time of the agent host process, seconds.
    pub wall_s: f64,
    /// The agent host's exit code (`None` when killed).
    pub exit_code: Option<i32>,
    /// Killed at `--agent-timeout`.
    pub timed_out: bool,
    /// The `--agent-timeout` it ran under, seconds (absent in episodes
    /// recovered from `agent.json`).
    #[serde(default)]
    pub agent_timeout_s: Option<u64>,
    /// `runner` when measured here; `agent.json` when recovered from the
    /// agent host's own report (its clock, which excludes process start).
    pub source: String,
    /// What the episode cost, as the host reported it; absent when it
    /// reported nothing of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// What the server under test resolved to when it was played
    /// ([`super::identity::ServerTarget`]): `--resume` reuses the attempt
    /// only against the same one (issue 24, item 11). Absent in episodes
    /// of runs-root format 2 and older, and in those recovered from
    /// `agent.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<super::identity::ServerTarget>,
    /// What the agent host reported, parsed by its host's parser from
    /// `agent.json` (and `agent.stderr.log`): model, usage, its own
    /// failure (issue 25; `docs/FORMAT.md`, "`episode.json`"). Written
    /// from runs-root format 4 on, where `usage` is no longer written
    /// beside it; loading parses the output again and refuses a report it
    /// does not give. Absent in older episodes, whose report is derived
    /// from `agent.json` when they are read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_report: Option<HostReport>,
}

pub use crate::agent::host::{HostReport, MAX_EPISODE_COST_USD, MAX_EPISODE_TOKENS, Usage};

/// One attempt as judged (an entry of `result.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttemptResult {
    /// 1-based attempt number.
    pub attempt: u32,
    /// An answer was submitted (a header-only one included).
    pub submitted: bool,
    /// Excluded from every rate: the proxy recorded a startup error and
    /// nothing was submitted: a plumbing failure, not the agent's.
    pub blocked: bool,
    /// Why it is blocked.
    pub blocked_reason: Option<String>,
    /// The agent host was killed at its timeout.
    pub timed_out: bool,
    /// Normalized-tier exact (false when nothing was submitted).
    pub exact: bool,
    /// Strict-tier exact.
    pub strict_exact: bool,
    /// Order-sensitive exact; `None` when the key is unordered.
    pub ordered: Option<bool>,
    /// Normalized-tier F1 (0 when nothing was submitted).
    pub f1: f64,
    /// The full score, when an answer was submitted.
    pub score: Option<Score>,
    /// Calls that carried a SPARQL query.
    pub queries: usize,
    /// Of those, the ones that failed.
    pub queries_errored: usize,
    /// Tools called, in order.
    pub tools_called: Vec<String>,
    /// Calls refused because the tool was withheld.
    pub refused: usize,
    /// Soft errors per tool.
    pub soft_errors: BTreeMap<String, usize>,
    /// Soft errors by what they were (`calls.json`'s `soft_error` label →
    /// calls), so a dead backend and a 404 read apart; absent when none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub soft_error_kinds: BTreeMap<String, usize>,
    /// Characters the server's replies put into the agent's context, per
    /// tool (`metrics.json`'s `reply_chars`); absent when the proxy's log
    /// predates it (not recorded, which is not zero).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_chars: Option<BTreeMap<String, usize>>,
    /// What the episode cost, as the agent host reported it (`episode.json`,
    /// else `agent.json`); absent when not reported, never 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// How it went about the question, from `calls.json` against the
    /// answer key ([`super::trajectory`]); absent when either is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<super::trajectory::Trajectory>,
    /// Each trajectory expectation of the question (by id) judged on this
    /// attempt (`docs/TRAJECTORY.md`; issue 27): absent when the question
    /// has none (and in every root written before them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub expectations: BTreeMap<String, crate::expectations::Judged>,
    /// Wall time, seconds.
    pub wall_s: f64,
    /// Of which waiting on the server, seconds.
    pub server_s: f64,
    /// The model the agent host reported.
    pub model_resolved: Option<String>,
    /// Human-readable notes: timeouts, lost connections, unreadable files.
    pub notes: Vec<String>,
}

impl AttemptResult {
    /// What this attempt came to: blocked first (it measured nothing),
    /// then no answer, then exact or a miss by the normalized tier.
    pub fn verdict(&self) -> crate::format::Verdict {
        use crate::format::Verdict;
        if self.blocked {
            Verdict::Blocked {
                reason: self.blocked_reason.clone(),
            }
        } else if !self.submitted {
            Verdict::NoAnswer {
                timed_out: self.timed_out,
            }
        } else if self.exact {
            Verdict::Exact { f1: self.f1 }
        } else {
            Verdict::Miss { f1: self.f1 }
        }
    }
}

/// A map by name (a condition's, a tool's) held as a sorted vector: a few
/// entries take their own size, where a `BTreeMap`'s first node has room
/// for eleven (issue 26, section 4). Serialized through [`name_map`].
pub type ByName<V> = litemap::LiteMap<String, V>;

/// A map by name held as a sorted vector ([`ByName`]),
/// read and written as the JSON object a `BTreeMap<String, V>` is: always
/// an object, `{}` when empty (litemap's own serde writes an empty map as
/// `[]`, and reads a list of pairs too), names in order, the last of a
/// repeated name kept. For `#[serde(with = "name_map")]`.
pub mod name_map {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Writes `map` as a JSON object.
    ///
    /// Errors: those of the serializer.
    pub fn serialize<S: Serializer, V: Serialize>(
        map: &super::ByName<V>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_map(map.iter())
    }

    /// Reads a JSON object (and nothing else) into a map.
    ///
    /// Errors: a value that is not an object of `V`s.
    pub fn deserialize<'de, D: Deserializer<'de>, V: Deserialize<'de>>(
        deserializer: D,
    ) -> Result<super::ByName<V>, D::Error> {
        Ok(BTreeMap::<String, V>::deserialize(deserializer)?
            .into_iter()
            .collect())
    }
}

/// Per question under one condition: the figures every report shows. Under
/// repeats every figure is a per-attempt average over measured attempts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionSummary {
    /// Attempts recorded.
    pub attempts: u32,
    /// Attempts not blocked.
    pub measured: u32,
    /// Attempts blocked.
    pub blocked: u32,
    /// The reasons attempts were blocked, distinct, sorted.
    pub blocked_reasons: Vec<String>,
    /// Exact attempts (normalized tier).
    pub exact: u32,
    /// Strict-exact attempts.
    pub strict_exact: u32,
    /// Order-exact attempts; `None` when the key is unordered.
    pub ordered: Option<u32>,
    /// Exact attempts ÷ measured attempts (`None` when none was measured).
    pub exact_rate: Option<f64>,
    /// Strict-exact attempts ÷ measured attempts.
    pub strict_exact_rate: Option<f64>,
    /// Order-exact attempts ÷ measured attempts (ordered keys only).
    pub ordered_rate: Option<f64>,
    /// Mean F1 over measured attempts.
    pub mean_f1: Option<f64>,
    /// Every measured attempt was exact.
    pub always_exact: bool,
    /// At least one was.
    pub ever_exact: bool,
    /// Some but not all were.
    pub flaky: bool,
    /// Blocked throughout: this question measured nothing.
    pub measured_nothing: bool,
    /// Mean queries per measured attempt.
    pub mean_queries: Option<f64>,
    /// Mean wall seconds per measured attempt.
    pub mean_wall_s: Option<f64>,
    /// Mean server seconds per measured attempt.
    pub mean_server_s: Option<f64>,
    /// Tools called, with how many times, over all attempts.
    // A sorted vector (`litemap`), read and written as the JSON object a
    // `BTreeMap` was ([`name_map`]): a `BTreeMap` took 368 bytes for a few
    // names, in every question's summary of every condition `build` loads
    // (issue 26, section 4). The schema is a `BTreeMap`'s.
    #[schemars(with = "BTreeMap<String, usize>")]
    #[serde(with = "name_map")]
    pub tools_called: ByName<usize>,
}

/// `ID_results/NAME/result.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionResult {
    /// [`RUNS_FORMAT`].
    pub format: u32,
    /// The record id.
    pub question: String,
    /// The condition name.
    pub condition: String,
    /// The record's tier.
    pub tier: Option<String>,
    /// The answer key is ordered.
    pub ordered_key: bool,
    /// The scoring contract that judged it (`docs/SCORING.md`).
    pub scoring_version: String,
    /// The trajectory expectations the question's attempts were judged
    /// by, sorted by id (`docs/TRAJECTORY.md`; issue 27): the record's and
    /// its corpus's defaults when it was run or last re-scored, so loading
    /// the root judges them again without the corpus. Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<crate::expectations::Expectation>,
    /// Every attempt, in order.
    pub attempts: Vec<AttemptResult>,
    /// The figures derived from them.
    pub summary: QuestionSummary,
}

/// What a condition was run with: what a number must be attributable to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The corpus as given (`--corpus`).
    pub corpus: String,
    /// For a git corpus, the commit its questions came from.
    pub corpus_commit: Option<String>,
    /// The server under test (no header or environment values).
    pub profile: Option<ProfileRecord>,
    /// The server's name and version as it reported them at startup (for a
    /// remote server, the build it was serving).
    pub server_build: Option<String>,
    /// Everything the server said of itself at startup ([`ServerInfo`]):
    /// its MCP `serverInfo` and, over HTTP, the reply headers that name a
    /// build (issue 24, item 31). Absent for the control and in files
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<ServerInfo>,
    /// The agent host's version (`claude --version`), once per condition.
    pub agent_version: Option<String>,
    /// The model the first episode reported using.
    pub model_resolved: Option<String>,
    /// Where ground truth came from.
    pub reference_endpoint: Option<EndpointInfo>,
    /// The sparql-only preamble, verbatim.
    pub sparql_only_preamble: Option<String>,
    /// Its SHA-256.
    pub preamble_sha256: Option<String>,
    /// The scoring contract version.
    pub scoring_version: String,
    /// Significant figures.
    pub significant_figures: u32,
    /// Snapping tolerance.
    pub numeric_rel_tol: f64,
    /// `--timeout`, seconds.
    pub timeout_s: u64,
    /// `--agent-timeout`, seconds.
    pub agent_timeout_s: u64,
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// The fixed prompt suffix, verbatim.
    pub prompt_suffix: String,
    /// `--ground-truth DIR` as given, when the ground truth was read from
    /// a folder other than the corpus's own (`CORPUS/ground-truth`):
    /// where its verification log is (`docs/FORMAT.md`, "`reference
    /// --verify` and `.verified.json`"); absent otherwise, and in roots
    /// recorded before it was kept (issue 24, item 32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ground_truth: Option<String>,
    /// The tool census taken before the condition's first episode
    /// (`crate::agent::census`; issue 25, "Isolation verified, not
    /// assumed"): the host's version, every tool it offered a model, the
    /// places a marker was planted in, a digest. Absent for the scripted
    /// agent (it calls no model) and in files of runs-root format 4 and
    /// older.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub census: Option<crate::agent::census::CensusRecord>,
}

/// What the server under test said of itself when `run` first connected
/// (`docs/FORMAT.md`, "`conditions/NAME.json`"): the MCP `serverInfo` of
/// its `initialize` reply (`name`, `version`, and `title`, `description`,
/// `websiteUrl` when it sent them) and, for a server reached over HTTP,
/// the headers of that reply that name its software or build
/// (`crate::mcp::server_report`). Strings, as the server wrote them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerInfo {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// `serverInfo.title`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `serverInfo.description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `serverInfo.websiteUrl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Over HTTP: the reply headers that name a build, by lowercase name
    /// (empty over stdio, or when the server sent none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub http_headers: BTreeMap<String, String>,
    /// Over HTTP: why the headers could not be read, when they could not
    /// (the server answered rmcp, and not our own request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_headers_error: Option<String>,
}

impl ServerInfo {
    /// This report with every value of a profile redacted (issue 24, item
    /// 27): a server may put what it was sent into its name, a header's
    /// name or value (upper-cased, or the `Basic` credential its URL
    /// gives). Every member is redacted ([`Redactor::record`]), and each
    /// header's value is cut to [`HEADER_CHARS`] only after.
    ///
    /// [`Redactor::record`]: crate::mcp::redact::Redactor::record
    pub fn redacted(self, redactor: &crate::mcp::redact::Redactor) -> ServerInfo {
        let headers = self.http_headers.clone();
        let mut info = redactor.record(self);
        info.http_headers = headers
            .into_iter()
            .map(|(k, v)| {
                (
                    redactor.text(&k).into_owned(),
                    redactor.preview(v.trim(), HEADER_CHARS, false),
                )
            })
            .collect();
        info
    }
}

/// The most characters of a reply header's value a condition records.
pub const HEADER_CHARS: usize = 200;

/// One excluded record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Exclusion {
    /// The record id.
    pub id: String,
    /// Why, e.g. `excluded by --exclude oard-kg_*`.
    pub reason: String,
}

/// Provenance: what was kept out of the run. Every published page names
/// the exclusions (`docs/PUBLISHING.md`, "Exclusions and incomplete
/// roots").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// Records kept out of the run.
    pub excluded: Vec<Exclusion>,
}

/// The aggregate of a condition: questions weigh the same (a question's
/// attempts are averaged first).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Aggregate {
    /// Questions in the condition.
    pub questions: u32,
    /// Questions with at least one measured attempt.
    pub measured_questions: u32,
    /// Attempts in all.
    pub attempts: u32,
    /// Attempts blocked.
    pub blocked_attempts: u32,
    /// Mean over measured questions of their exact rate.
    pub exact_rate: Option<f64>,
    /// The same, strict tier.
    pub strict_exact_rate: Option<f64>,
    /// The same, order-sensitive, over questions with ordered keys.
    pub ordered_rate: Option<f64>,
    /// Mean over measured questions of their mean F1.
    pub mean_f1: Option<f64>,
    /// Questions always exact.
    pub always_exact: u32,
    /// Questions ever exact.
    pub ever_exact: u32,
    /// Questions exact sometimes but not always.
    pub flaky: u32,
    /// Questions blocked throughout.
    pub measured_nothing: u32,
    /// Mean queries per measured attempt, averaged per question first.
    pub mean_queries: Option<f64>,
    /// Mean wall seconds, the same way.
    pub mean_wall_s: Option<f64>,
    /// Mean server seconds, the same way.
    pub mean_server_s: Option<f64>,
}

/// `conditions/NAME.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConditionFile {
    /// [`RUNS_FORMAT`].
    pub format: u32,
    /// The condition name (the file's stem).
    pub name: String,
    /// What makes runs comparable.
    pub identity: Identity,
    /// Everything else it was run with.
    pub settings: Settings,
    /// Exclusions (kept out of the Markdown).
    pub meta: Meta,
    /// Per question id, in id order.
    pub questions: BTreeMap<String, QuestionSummary>,
    /// Over the questions.
    pub aggregate: Aggregate,
    /// The slice a shard root holds (`run --shard K/N`); absent in a
    /// serial or merged root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<super::shard::ShardRecord>,
}

impl ConditionFile {
    /// Whether question `id` was excluded from this condition's recorded
    /// results (`meta.excluded`): by `run --exclude`, or by hand
    /// (`docs/FORMAT.md`, "`conditions/NAME.json`"), so folders of it
    /// that remain are no unfinished run's (issue 24, item 14).
    pub fn excludes(&self, id: &str) -> bool {
        self.meta.excluded.iter().any(|e| e.id == id)
    }

    /// The exclusions its numbers lack (`meta.excluded`, by `run
    /// --exclude` or by hand), each id once, in the order recorded, and
    /// only those it does not list in `questions`.
    pub fn exclusions(&self) -> Vec<&Exclusion> {
        let mut seen = std::collections::BTreeSet::new();
        self.meta
            .excluded
            .iter()
            .filter(|e| !self.questions.contains_key(&e.id) && seen.insert(e.id.as_str()))
            .collect()
    }

    /// The basis of its numbers when it excluded questions, in words:
    /// `8 of 12 questions; 4 excluded` (its questions over them and its
    /// exclusions); `None` when it excluded none. Every published number
    /// of the condition carries it (`docs/PUBLISHING.md`, "Exclusions and
    /// incomplete roots"; issue 24, item 14).
    pub fn excluded_basis(&self) -> Option<String> {
        let excluded = self.exclusions().len();
        (excluded > 0).then(|| {
            let n = self.questions.len();
            format!(
                "{n} of {} question{}; {excluded} excluded",
                n + excluded,
                crate::format::plural(n + excluded)
            )
        })
    }

    /// One line naming every exclusion with its recorded reason, each id
    /// through `code` and each reason through `text` (the syntax's
    /// escapes): `id (reason), id2 (reason)`; `None` when there is none.
    pub fn exclusions_text(
        &self,
        code: &dyn Fn(&str) -> String,
        text: &dyn Fn(&str) -> String,
    ) -> Option<String> {
        let all = self.exclusions();
        (!all.is_empty()).then(|| {
            all.iter()
                .map(|e| format!("{} ({})", code(&e.id), text(&e.reason)))
                .collect::<Vec<_>>()
                .join(", ")
        })
    }
}

/// Summarizes attempts. `ordered_key` decides whether `ordered` figures
/// exist.
pub fn summarize(attempts: &[AttemptResult], ordered_key: bool) -> QuestionSummary {
    let measured: Vec<&AttemptResult> = attempts.iter().filter(|a| !a.blocked).collect();
    let n = measured.len();
    let mean = |f: &dyn Fn(&AttemptResult) -> f64| -> Option<f64> {
        (n > 0).then(|| measured.iter().map(|a| f(a)).sum::<f64>() / n as f64)
    };
    let exact = measured.iter().filter(|a| a.exact).count() as u32;
    let strict = measured.iter().filter(|a| a.strict_exact).count() as u32;
    let ordered =
        ordered_key.then(|| measured.iter().filter(|a| a.ordered == Some(true)).count() as u32);
    let mut blocked_reasons: Vec<String> = attempts
        .iter()
        .filter_map(|a| a.blocked_reason.clone())
        .collect();
    blocked_reasons.sort();
    blocked_reasons.dedup();
    let mut tools_called = ByName::new();
    for a in attempts {
        for t in &a.tools_called {
            *tools_called.entry(t.clone()).or_insert(0) += 1;
        }
    }
    QuestionSummary {
        attempts: attempts.len() as u32,
        measured: n as u32,
        blocked: (attempts.len() - n) as u32,
        blocked_reasons,
        exact,
        strict_exact: strict,
        ordered,
        exact_rate: (n > 0).then(|| exact as f64 / n as f64),
        strict_exact_rate: (n > 0).then(|| strict as f64 / n as f64),
        ordered_rate: ordered.filter(|_| n > 0).map(|o| o as f64 / n as f64),
        mean_f1: mean(&|a| a.f1),
        always_exact: n > 0 && exact as usize == n,
        ever_exact: exact > 0,
        flaky: exact > 0 && (exact as usize) < n,
        measured_nothing: n == 0 && !attempts.is_empty(),
        mean_queries: mean(&|a| a.queries as f64),
        mean_wall_s: mean(&|a| a.wall_s).map(crate::layout::round_seconds),
        mean_server_s: mean(&|a| a.server_s).map(crate::layout::round_seconds),
        tools_called,
    }
}

/// Aggregates question summaries: a question's attempts are averaged first,
/// then the questions (`docs/FORMAT.md`, `conditions/NAME.json`).
pub fn aggregate(questions: &BTreeMap<String, QuestionSummary>) -> Aggregate {
    let measured: Vec<&QuestionSummary> = questions.values().filter(|q| q.measured > 0).collect();
    let mean = |values: Vec<f64>| -> Option<f64> {
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    Aggregate {
        questions: questions.len() as u32,
        measured_questions: measured.len() as u32,
        attempts: questions.values().map(|q| q.attempts).sum(),
        blocked_attempts: questions.values().map(|q| q.blocked).sum(),
        exact_rate: mean(measured.iter().filter_map(|q| q.exact_rate).collect()),
        strict_exact_rate: mean(
            measured
                .iter()
                .filter_map(|q| q.strict_exact_rate)
                .collect(),
        ),
        ordered_rate: mean(measured.iter().filter_map(|q| q.ordered_rate).collect()),
        mean_f1: mean(measured.iter().filter_map(|q| q.mean_f1).collect()),
        always_exact: measured.iter().filter(|q| q.always_exact).count() as u32,
        ever_exact: measured.iter().filter(|q| q.ever_exact).count() as u32,
        flaky: measured.iter().filter(|q| q.flaky).count() as u32,
        measured_nothing: questions.values().filter(|q| q.measured_nothing).count() as u32,
        mean_queries: mean(measured.iter().filter_map(|q| q.mean_queries).collect()),
        mean_wall_s: mean(measured.iter().filter_map(|q| q.mean_wall_s).collect())
            .map(crate::layout::round_seconds),
        mean_server_s: mean(measured.iter().filter_map(|q| q.mean_server_s).collect())
            .map(crate::layout::round_seconds),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cost or a count no episode could have (infinite, negative, a
    /// string, a fraction, more than a trillion) is not taken as reported,
    /// on reading the host's report and again on reading a record, and
    /// sums over credible ones stay finite.
    #[test]
    fn only_credible_usage_is_taken() {
        let report = |cost: serde_json::Value, tokens: serde_json::Value| serde_json::json!({"total_cost_usd": cost, "usage": {"input_tokens": tokens, "output_tokens": 7}});
        for bad in [
            serde_json::json!(1e308),
            serde_json::json!(-1.0),
            serde_json::json!("0.5"),
        ] {
            let usage = Usage::from_report(&report(bad.clone(), serde_json::json!(5))).unwrap();
            assert_eq!(usage.cost(), None, "{bad}");
            assert_eq!(usage.cost_usd, None, "{bad}");
        }
        for bad in [
            serde_json::json!(-5),
            serde_json::json!(1.5),
            serde_json::json!(2_000_000_000_000u64),
        ] {
            let usage = Usage::from_report(&report(serde_json::json!(0.25), bad.clone())).unwrap();
            assert_eq!(
                (usage.all_input_tokens(), usage.cost()),
                (None, Some(0.25)),
                "{bad}"
            );
        }
        let mut edited =
            Usage::from_report(&report(serde_json::json!(0.5), serde_json::json!(3))).unwrap();
        assert_eq!(
            (edited.cost(), edited.all_input_tokens(), edited.output()),
            (Some(0.5), Some(3), Some(7))
        );
        edited.cost_usd = Some(f64::INFINITY);
        edited.cache_read_input_tokens = Some(u64::MAX);
        edited.output_tokens = Some(u64::MAX);
        assert_eq!(
            (edited.cost(), edited.all_input_tokens(), edited.output()),
            (None, None, None)
        );
    }

    fn attempt(n: u32, exact: bool, f1: f64, blocked: bool) -> AttemptResult {
        AttemptResult {
            attempt: n,
            submitted: !blocked,
            blocked,
            blocked_reason: blocked.then(|| "cannot start server".to_string()),
            timed_out: false,
            exact,
            strict_exact: exact,
            ordered: Some(exact),
            f1,
            score: None,
            queries: 2,
            queries_errored: 0,
            tools_called: vec!["query".into(), "submit_csv".into()],
            refused: 0,
            soft_errors: BTreeMap::new(),
            soft_error_kinds: BTreeMap::new(),
            reply_chars: None,
            usage: None,
            trajectory: None,
            expectations: BTreeMap::new(),
            wall_s: 10.0,
            server_s: 2.0,
            model_resolved: None,
            notes: vec![],
        }
    }

    #[test]
    fn blocked_attempts_leave_every_rate() {
        let s = summarize(
            &[
                attempt(1, true, 1.0, false),
                attempt(2, false, 0.5, false),
                attempt(3, false, 0.0, true),
            ],
            true,
        );
        assert_eq!((s.attempts, s.measured, s.blocked, s.exact), (3, 2, 1, 1));
        assert_eq!(s.exact_rate, Some(0.5));
        assert_eq!(s.mean_f1, Some(0.75));
        assert!(s.flaky && s.ever_exact && !s.always_exact && !s.measured_nothing);
        assert_eq!(s.blocked_reasons, ["cannot start server"]);
        assert_eq!(s.tools_called.get("query"), Some(&3));
        let nothing = summarize(&[attempt(1, false, 0.0, true)], false);
        assert!(nothing.measured_nothing);
        assert_eq!(nothing.exact_rate, None);
        assert_eq!(nothing.ordered, None);
    }

    /// A summary's tool counts are written and read as the JSON object a
    /// `BTreeMap` was, names in order (`result.json` and
    /// `conditions/NAME.json` keep their bytes): `{}` when empty, and a
    /// list of pairs is not read as one ([`name_map`]).
    #[test]
    fn tool_counts_are_a_json_object() {
        let s = summarize(
            &[
                attempt(1, true, 1.0, false),
                attempt(2, false, 0.5, false),
                attempt(3, false, 0.0, true),
            ],
            true,
        );
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(
            json["tools_called"],
            serde_json::json!({"query": 3, "submit_csv": 3})
        );
        let back: QuestionSummary = serde_json::from_value(json).unwrap();
        assert_eq!(back, s);
        // Empty: an object still, and a list of pairs is not read as one.
        let none = QuestionSummary::default();
        assert!(none.tools_called.is_empty());
        let mut json = serde_json::to_value(&none).unwrap();
        assert_eq!(json["tools_called"], serde_json::json!({}));
        json["tools_called"] = serde_json::json!([["query", 3]]);
        let err = serde_json::from_value::<QuestionSummary>(json)
            .unwrap_err()
            .to_string();
        assert!(err.contains("expected a map"), "{err}");
        let unsorted: QuestionSummary = serde_json::from_value({
            let mut v = serde_json::to_value(&s).unwrap();
            v["tools_called"] = serde_json::from_str(r#"{"z": 1, "a": 2}"#).unwrap();
            v
        })
        .unwrap();
        assert_eq!(unsorted.tools_called.keys().collect::<Vec<_>>(), ["a", "z"]);
    }

    #[test]
    fn questions_weigh_the_same() {
        let mut questions = BTreeMap::new();
        questions.insert(
            "a".to_string(),
            summarize(&[attempt(1, true, 1.0, false)], false),
        );
        questions.insert(
            "b".to_string(),
            summarize(
                &[
                    attempt(1, false, 0.0, false),
                    attempt(2, false, 0.5, false),
                    attempt(3, false, 0.0, false),
                ],
                false,
            ),
        );
        questions.insert(
            "c".to_string(),
            summarize(&[attempt(1, false, 0.0, true)], false),
        );
        let a = aggregate(&questions);
        assert_eq!(
            (a.questions, a.measured_questions, a.measured_nothing),
            (3, 2, 1)
        );
        assert_eq!(a.exact_rate, Some(0.5));
        assert!((a.mean_f1.unwrap() - (1.0 + 0.5 / 3.0) / 2.0).abs() < 1e-12);
        assert_eq!(a.blocked_attempts, 1);
    }
}
