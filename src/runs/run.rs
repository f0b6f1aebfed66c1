//! `run`: one condition over a corpus, episode by episode, into a runs root
//! (seed 000, "Run the conditions", "Resuming an interrupted run",
//! "Repeating and comparing").
//!
//! Questions and attempts run strictly one at a time. Each attempt gets its
//! folder with `prompt.txt` and `command.txt` first and `episode.json` last,
//! so a run killed at any moment leaves every finished attempt intact and
//! resumable. The condition file is written when the run ends.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::identity::{Identity, condition_name};
use super::judge::{judge, model_from_report, read_episode};
use super::layout::*;
use super::records::*;
use crate::agent::strategy::Strategy;
use crate::agent::{AgentCommand, claude, launch, mcp_config};
use crate::corpus::{Corpus, Selection};
use crate::error::{Error, Result};
use crate::fsutil::{read_json, write_atomic, write_json};
use crate::mcp::profile::Profile;
use crate::mcp::proxy::ToolLevel;
use crate::mcp::sparql_only::SparqlOnly;
use crate::reference::{GroundTruth, load as load_ground_truth};
use crate::score::{NUMERIC_REL_TOL, SCORING_VERSION, ScoreOptions};
use crate::sparql::EndpointSpec;

/// Which agent host plays the episodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentChoice {
    /// `claude -p`, this program.
    Claude(PathBuf),
    /// The built-in scripted agent.
    Scripted(Strategy),
}

impl AgentChoice {
    /// `claude` or `scripted:STRATEGY`.
    pub fn name(&self) -> String {
        match self {
            AgentChoice::Claude(_) => "claude".into(),
            AgentChoice::Scripted(s) => format!("scripted:{s}"),
        }
    }
}

/// The sparql-only control's endpoint, as resolved for this run.
#[derive(Debug, Clone)]
pub struct ControlEndpoint {
    /// Where it is.
    pub spec: EndpointSpec,
    /// Shortname → graph IRI template.
    pub template: String,
    /// Shortnames (empty: from the data).
    pub shortnames: Vec<String>,
}

/// Everything `run` is started with (the CLI's flags, resolved).
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// `--corpus` as given.
    pub corpus_spec: String,
    /// The corpus, opened.
    pub corpus: Corpus,
    /// `--tier`, `--exclude`, `--limit`.
    pub selection: Selection,
    /// Where the corpus's ground truth is.
    pub ground_truth_dir: PathBuf,
    /// `--out`.
    pub out: PathBuf,
    /// Tool level.
    pub level: ToolLevel,
    /// `--kg-hint tags`.
    pub kg_hint: bool,
    /// `--profile`, loaded (all-tools).
    pub profile: Option<Profile>,
    /// `--without-tool`.
    pub without: Vec<String>,
    /// The agent host.
    pub agent: AgentChoice,
    /// `--model`.
    pub model: Option<String>,
    /// `--effort`.
    pub effort: Option<String>,
    /// `--repeat`.
    pub repeat: u32,
    /// `--label`.
    pub label: Option<String>,
    /// `--force`.
    pub force: bool,
    /// `--resume`.
    pub resume: bool,
    /// `--agent-timeout`.
    pub agent_timeout: Duration,
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// `--timeout` (the proxy's read timeout).
    pub timeout: Duration,
    /// `--strict-upstream-errors`.
    pub strict: bool,
    /// The control's endpoint (sparql-only).
    pub control: Option<ControlEndpoint>,
    /// Extra environment for the agent host (e.g. `ANTHROPIC_BASE_URL`).
    pub agent_env: Vec<(String, String)>,
}

/// What `run` did, for the caller's summary line.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// The condition name.
    pub condition: String,
    /// The condition file's aggregate.
    pub aggregate: Aggregate,
    /// Attempts reused by `--resume`.
    pub resumed: usize,
    /// Attempts run now.
    pub ran: usize,
}

/// `path` made absolute against the current folder (no symlinks resolved).
fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

/// The frozen runs root at or above `path`, if any (a path is made
/// absolute first, so `.` and `..` cannot hide one).
pub fn frozen_ancestor(path: &Path) -> Option<PathBuf> {
    let absolute = absolute(path);
    absolute
        .ancestors()
        .find(|dir| dir.join(FROZEN_FILE).is_file())
        .map(Path::to_path_buf)
}

/// The refusal for a frozen root (seed 000, "Closing a runs root"): the
/// root itself, or any root it sits inside.
pub fn refuse_frozen(root: &RunsRoot, command: &str) -> Result<()> {
    let frozen = frozen_ancestor(&root.root).map(RunsRoot::new);
    if let Some(root) = frozen.as_ref() {
        let reason = std::fs::read_to_string(root.frozen_file())
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["reason"].as_str().map(str::to_string))
            .unwrap_or_default();
        return Err(Error::Usage(format!(
            "{} is frozen{}: {command} never writes into a frozen root (delete {} by hand to unfreeze)",
            root.root.display(),
            if reason.is_empty() {
                String::new()
            } else {
                format!(" ({reason})")
            },
            root.frozen_file().display()
        )));
    }
    Ok(())
}

/// Runs one condition. Progress lines go to `progress` as they happen.
///
/// Errors (before anything runs): refused flag combinations, a frozen
/// root, missing ground truth, withheld names the server does not have, an
/// identity that differs from the recorded condition (naming the first
/// field, with the `--label` / `--force` advice), recorded attempts without
/// `--resume` or `--force`, an agent host that cannot be started.
pub fn run(options: &RunOptions, mut progress: impl FnMut(&str)) -> Result<RunOutcome> {
    let root = RunsRoot::new(&options.out);
    refuse_frozen(&root, "run")?;
    if options.level == ToolLevel::SparqlOnly && !options.kg_hint {
        return Err(Error::Usage(
            "--tools sparql-only with --kg-hint none is refused: the control is handed the list of shortnames to address the endpoint, so withholding the graph's name measures name recognition, not graph selection (seed 000, \"What gets measured\")".into(),
        ));
    }
    if options.level == ToolLevel::SparqlOnly && !options.without.is_empty() {
        return Err(Error::Usage(
            "--without-tool applies to all-tools only: sparql-only has no server tools".into(),
        ));
    }
    if options.repeat == 0 {
        return Err(Error::Usage("--repeat must be at least 1".into()));
    }

    // Records and exclusions.
    let corpus = &options.corpus;
    let mut tier_selection = options.selection.clone();
    tier_selection.exclude.clear();
    tier_selection.limit = None;
    let in_tier = corpus.select(&tier_selection)?;
    let selected = corpus.select(&options.selection)?;
    let mut excluded = Vec::new();
    for record in &in_tier {
        if let Some(pattern) = options
            .selection
            .exclude
            .iter()
            .find(|p| p.matches(&record.id))
        {
            excluded.push(Exclusion {
                id: record.id.clone(),
                reason: format!("excluded by --exclude {}", pattern.text),
            });
        }
    }

    // Ground truth must exist.
    let mut truths: BTreeMap<String, GroundTruth> = BTreeMap::new();
    let mut missing = Vec::new();
    for record in &selected {
        match load_ground_truth(&options.ground_truth_dir, &record.id)? {
            Some(truth) => {
                truths.insert(record.id.clone(), truth);
            }
            None => missing.push(record.id.clone()),
        }
    }
    if !missing.is_empty() {
        return Err(Error::Usage(format!(
            "no ground truth for {} of {} records ({}): run 'okn-benchmark reference --corpus {}' first",
            missing.len(),
            selected.len(),
            missing
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
                + if missing.len() > 5 { ", ..." } else { "" },
            options.corpus_spec
        )));
    }

    // The server under test: withheld names are checked before anything runs.
    let mut server_build = None;
    if let (ToolLevel::AllTools, Some(profile)) = (options.level, &options.profile) {
        let runtime = crate::mcp::runtime()?;
        match runtime.block_on(crate::mcp::upstream::connect(
            profile,
            options.timeout,
            None,
        )) {
            Ok(connection) => {
                crate::mcp::probe::check_withheld(
                    &profile.name,
                    &connection.tools,
                    &options.without,
                )?;
                server_build = connection
                    .server_info
                    .as_ref()
                    .map(|i| format!("{} {}", i.name, i.version));
            }
            Err(reason) if !options.without.is_empty() => {
                return Err(Error::Other(format!(
                    "cannot check --without-tool against {}: {reason}",
                    profile.name
                )));
            }
            Err(reason) => progress(&format!(
                "warning: {} is unreachable now ({reason}); episodes will record it",
                profile.name
            )),
        }
    } else if options.level == ToolLevel::AllTools {
        return Err(Error::Usage(
            "--tools all-tools needs --profile PROFILE.toml".into(),
        ));
    }

    // The control, opened once for its preamble.
    let control = match (options.level, &options.control) {
        (ToolLevel::SparqlOnly, Some(c)) => {
            Some(SparqlOnly::new(&c.spec, &c.template, &c.shortnames)?)
        }
        (ToolLevel::SparqlOnly, None) => {
            return Err(Error::Usage(
                "--tools sparql-only needs an endpoint (--endpoint, or okn-benchmark.toml)".into(),
            ));
        }
        _ => None,
    };

    // Identity and name.
    let server = match options.level {
        ToolLevel::AllTools => options.profile.as_ref().map(|p| p.name.clone()),
        ToolLevel::SparqlOnly => None,
    };
    let mut withheld = options.without.clone();
    withheld.sort();
    withheld.dedup();
    let name = condition_name(
        options.level.as_str(),
        server.as_deref(),
        &withheld,
        options.strict,
        if options.kg_hint { "tags" } else { "none" },
        options.label.as_deref(),
    );
    let identity = Identity {
        level: options.level.as_str().into(),
        kg_hint: if options.kg_hint { "tags" } else { "none" }.into(),
        server: server.clone(),
        agent: options.agent.name(),
        model: match options.agent {
            AgentChoice::Claude(_) => options.model.clone(),
            AgentChoice::Scripted(_) => None,
        },
        effort: match options.agent {
            AgentChoice::Claude(_) => options.effort.clone(),
            AgentChoice::Scripted(_) => None,
        },
        tier: options.selection.tier.clone(),
        corpus: options.corpus_spec.clone(),
        repeat: options.repeat,
        withheld: withheld.clone(),
        strict_upstream_errors: options.strict,
        excluded: excluded.iter().map(|e| e.id.clone()).collect(),
    };
    let condition_path = root.condition_file(&name);
    let mut recorded = None;
    if condition_path.is_file() && !options.force {
        let file: ConditionFile = read_json(&condition_path)?;
        if let Some((field, old, new)) = identity.first_difference(&file.identity) {
            return Err(Error::Usage(format!(
                "'{name}' already holds a run with different settings:\n  {field}: {old} -> {new}\n\nUse --label NAME to keep them apart, or --force to replace."
            )));
        }
        recorded = Some(file);
    }
    let recorded_attempts = selected
        .iter()
        .any(|r| root.condition_dir(&r.id, &name).is_dir());
    if recorded_attempts && !options.resume && !options.force {
        return Err(Error::Usage(format!(
            "{} already holds attempts of '{name}': --resume reuses the finished ones, --force replaces them",
            root.root.display()
        )));
    }
    // Ground truth that changed since this root recorded a question would
    // judge this condition by another key than the ones beside it.
    for record in &selected {
        let recorded_truth = root.question_dir(&record.id).join(GROUND_TRUTH_JSON);
        let Ok(old) = read_json::<crate::reference::GroundTruthMeta>(&recorded_truth) else {
            continue;
        };
        let others = condition_dirs_of_question(&root, &record.id)
            .into_iter()
            .any(|c| c != name);
        if others && old.fingerprint != truths[&record.id].meta.fingerprint {
            return Err(Error::Usage(format!(
                "the ground truth of {} changed since {} recorded it (its answer key or endpoint changed), and other conditions there were judged by the old one: record this run into a new root",
                record.id,
                root.root.display()
            )));
        }
    }
    if options.force {
        // Every folder of the condition, not only the selected questions':
        // --force replaces the condition, and nothing of it may come back.
        for dir in condition_folders(&root, &name) {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, "remove", e))?;
        }
        if condition_path.exists() {
            std::fs::remove_file(&condition_path)
                .map_err(|e| Error::io(&condition_path, "remove", e))?;
        }
    }

    // The agent host.
    let program = std::env::current_exe()
        .map_err(|e| Error::Other(format!("cannot find this program: {e}")))?;
    let agent_version = match &options.agent {
        AgentChoice::Claude(claude_program) => Some(claude::version(claude_program).ok_or_else(|| {
            Error::Other(format!(
                "cannot run '{} --version': install the claude CLI (npm package @anthropic-ai/claude-code) or pass --claude PATH",
                claude_program.display()
            ))
        })?),
        AgentChoice::Scripted(_) => Some(format!("okn-benchmark {} (scripted agent)", env!("CARGO_PKG_VERSION"))),
    };

    let options_score = |ordered: bool| ScoreOptions {
        ordered,
        ..ScoreOptions::default()
    };
    let total = selected.len();
    let mut resumed = 0;
    let mut ran = 0;
    let mut model_resolved = None;
    let mut summaries = BTreeMap::new();
    let started_all = Instant::now();
    for (index, record) in selected.iter().enumerate() {
        let truth = &truths[&record.id];
        copy_ground_truth(&root, &record.id, &options.ground_truth_dir)?;
        let prompt = super::prompt::prompt(record, options.kg_hint);
        let mut attempts = Vec::new();
        for attempt in 1..=options.repeat {
            let dir = root.attempt_dir(&record.id, &name, attempt);
            let dir_abs = absolute(&dir);
            let proxy_args = proxy_args(options, &dir_abs, control.is_some());
            let config = mcp_config(&program, &proxy_args);
            let command = match &options.agent {
                AgentChoice::Claude(claude_program) => claude::command(
                    &claude::ClaudeSettings {
                        program: claude_program.clone(),
                        model: options.model.clone(),
                        effort: options.effort.clone(),
                        max_turns: options.max_turns,
                    },
                    &config,
                ),
                AgentChoice::Scripted(strategy) => AgentCommand {
                    program: program.clone(),
                    args: vec![
                        "scripted-agent".into(),
                        "--strategy".into(),
                        strategy.to_string(),
                        "--attempt".into(),
                        attempt.to_string(),
                        "--corpus".into(),
                        absolute(&corpus.root).to_string_lossy().into_owned(),
                        "--mcp-config".into(),
                        config.clone(),
                    ],
                },
            };
            let command_line = command.shell_line();
            // A timeout is a recorded outcome, but only for the timeout it
            // had: under another --agent-timeout it is run again.
            let reuse = options.resume
                && read_episode(&dir, attempt).is_some_and(|e| {
                    !e.timed_out || e.agent_timeout_s == Some(options.agent_timeout.as_secs())
                })
                && std::fs::read_to_string(dir.join(COMMAND_FILE))
                    .is_ok_and(|c| without_paths(&c) == without_paths(&command_line))
                && std::fs::read_to_string(dir.join(PROMPT_FILE)).is_ok_and(|p| p == prompt);
            let clock = Instant::now();
            if reuse {
                resumed += 1;
            } else {
                clear_dir(&dir)?;
                std::fs::create_dir_all(dir.join(CWD_DIR))
                    .map_err(|e| Error::io(&dir, "create", e))?;
                write_atomic(&dir.join(PROMPT_FILE), prompt.as_bytes())?;
                write_atomic(&dir.join(COMMAND_FILE), command_line.as_bytes())?;
                let outcome = launch(
                    &command,
                    &prompt,
                    &dir_abs.join(CWD_DIR),
                    &options.agent_env,
                    options.agent_timeout,
                )?;
                write_atomic(&dir.join(AGENT_FILE), &outcome.stdout)?;
                if !outcome.stderr.is_empty() {
                    write_atomic(&dir.join("agent.stderr.log"), &outcome.stderr)?;
                }
                let report: Option<serde_json::Value> =
                    serde_json::from_slice(&outcome.stdout).ok();
                let episode = Episode {
                    format: RUNS_FORMAT,
                    attempt,
                    agent: options.agent.name(),
                    model_requested: identity.model.clone(),
                    model_resolved: report.as_ref().and_then(model_from_report),
                    wall_s: crate::runs::layout::round_seconds(outcome.wall_s),
                    exit_code: outcome.exit_code,
                    timed_out: outcome.timed_out,
                    agent_timeout_s: Some(options.agent_timeout.as_secs()),
                    source: "runner".into(),
                };
                let mut text = serde_json::to_string_pretty(&episode)
                    .map_err(|e| Error::Other(e.to_string()))?;
                text.push('\n');
                write_atomic(&dir.join(EPISODE_FILE), text.as_bytes())?;
                ran += 1;
            }
            let result = judge(
                &dir,
                attempt,
                &truth.table,
                &options_score(truth.meta.ordered),
            );
            if model_resolved.is_none() {
                model_resolved = result.model_resolved.clone();
            }
            progress(&progress_line(
                (index + 1, total),
                &record.id,
                (attempt, options.repeat),
                &result,
                reuse,
                clock.elapsed().as_secs_f64(),
            ));
            attempts.push(result);
        }
        let summary = summarize(&attempts, truth.meta.ordered);
        let question = QuestionResult {
            format: RUNS_FORMAT,
            question: record.id.clone(),
            condition: name.clone(),
            tier: record.tier.clone(),
            ordered_key: truth.meta.ordered,
            scoring_version: SCORING_VERSION.into(),
            attempts,
            summary: summary.clone(),
        };
        write_json(
            &root.condition_dir(&record.id, &name).join(RESULT_FILE),
            &question,
        )?;
        summaries.insert(record.id.clone(), summary);
    }

    let first_truth = truths.values().next();
    let settings = Settings {
        corpus: options.corpus_spec.clone(),
        corpus_commit: corpus.source.as_ref().map(|s| s.commit.clone()),
        profile: options
            .profile
            .as_ref()
            .filter(|_| options.level == ToolLevel::AllTools)
            .map(Profile::record),
        server_build,
        agent_version,
        model_resolved,
        reference_endpoint: first_truth.map(|t| t.meta.endpoint.clone()),
        sparql_only_preamble: control.as_ref().map(|c| c.preamble.clone()),
        preamble_sha256: control.as_ref().map(SparqlOnly::preamble_digest),
        scoring_version: SCORING_VERSION.into(),
        significant_figures: crate::score::DEFAULT_SIGNIFICANT_FIGURES,
        numeric_rel_tol: NUMERIC_REL_TOL,
        timeout_s: options.timeout.as_secs(),
        agent_timeout_s: options.agent_timeout.as_secs(),
        max_turns: options.max_turns,
        prompt_suffix: super::prompt::SUFFIX.into(),
    };
    // Questions recorded earlier under this condition and not selected now
    // (a smaller --limit) stay in it: a run adds to a condition.
    if let Some(recorded) = recorded {
        for (id, summary) in recorded.questions {
            summaries.entry(id).or_insert(summary);
        }
    }
    let blocked_reasons: std::collections::BTreeSet<String> = summaries
        .values()
        .flat_map(|q| q.blocked_reasons.iter().cloned())
        .collect();
    let condition = ConditionFile {
        format: RUNS_FORMAT,
        name: name.clone(),
        identity,
        settings,
        meta: Meta { excluded },
        aggregate: aggregate(&summaries),
        questions: summaries,
    };
    for reason in &blocked_reasons {
        progress(&format!("blocked: {reason}"));
    }
    write_json(&condition_path, &condition)?;
    progress(&format!(
        "{name}: {} question{}, {} ran, {} resumed, {:.0} s",
        total,
        if total == 1 { "" } else { "s" },
        ran,
        resumed,
        started_all.elapsed().as_secs_f64()
    ));
    Ok(RunOutcome {
        condition: name,
        aggregate: condition.aggregate,
        resumed,
        ran,
    })
}

fn proxy_args(options: &RunOptions, log_dir: &Path, control: bool) -> Vec<String> {
    let mut args = vec![
        "proxy".to_string(),
        "--tools".into(),
        options.level.as_str().into(),
        "--log-dir".into(),
        log_dir.to_string_lossy().into_owned(),
        "--timeout".into(),
        options.timeout.as_secs().to_string(),
    ];
    if let (ToolLevel::AllTools, Some(profile)) = (options.level, &options.profile) {
        args.push("--profile".into());
        args.push(absolute(&profile.path).to_string_lossy().into_owned());
        for tool in &options.without {
            args.push("--without-tool".into());
            args.push(tool.clone());
        }
    }
    if options.strict {
        args.push("--strict-upstream-errors".into());
    }
    if control && let Some(c) = &options.control {
        args.push("--endpoint".into());
        args.push(match &c.spec {
            EndpointSpec::Embedded { path, .. } => absolute(path).to_string_lossy().into_owned(),
            EndpointSpec::Http { url, .. } => url.clone(),
        });
        args.push("--graph-template".into());
        args.push(c.template.clone());
        for name in &c.shortnames {
            args.push("--shortname".into());
            args.push(name.clone());
        }
    }
    args
}

fn progress_line(
    (index, total): (usize, usize),
    id: &str,
    (attempt, repeat): (u32, u32),
    result: &AttemptResult,
    resumed: bool,
    seconds: f64,
) -> String {
    let verdict = result.verdict().line();
    format!(
        "[{index}/{total}] {id}  attempt {attempt}/{repeat}  {}  {verdict}{}",
        if resumed {
            "-".to_string()
        } else {
            format!("{seconds:.1} s")
        },
        if resumed { "  [resumed]" } else { "" }
    )
}

/// Removes an attempt folder left by an interrupted run. A process of that
/// run may still be writing its last file as it dies, so a folder that is
/// not empty on the first try is tried again briefly.
fn clear_dir(dir: &Path) -> Result<()> {
    let mut tries = 0;
    while dir.exists() {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => break,
            Err(_) if tries < 20 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(Error::io(dir, "clear", e)),
        }
    }
    Ok(())
}

/// The condition names recorded for one question (its sub-folders).
fn condition_dirs_of_question(root: &RunsRoot, id: &str) -> Vec<String> {
    std::fs::read_dir(root.question_dir(id))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect()
}

/// Every `*_results/NAME` folder of a condition in the root.
fn condition_folders(root: &RunsRoot, name: &str) -> Vec<PathBuf> {
    walkdir::WalkDir::new(&root.root)
        .min_depth(2)
        .into_iter()
        .flatten()
        .filter(|e| {
            e.file_type().is_dir()
                && e.file_name() == name
                && e.path()
                    .parent()
                    .and_then(|p| p.file_name())
                    .is_some_and(|p| p.to_string_lossy().ends_with(QUESTION_SUFFIX))
        })
        .map(|e| e.path().to_path_buf())
        .collect()
}

fn copy_ground_truth(root: &RunsRoot, id: &str, dir: &Path) -> Result<()> {
    let (csv, json) = crate::reference::paths(dir, id);
    let target = root.question_dir(id);
    for (from, name) in [(csv, GROUND_TRUTH_CSV), (json, GROUND_TRUTH_JSON)] {
        let bytes = crate::error::read_file(&from)?;
        let to = target.join(name);
        if !crate::fsutil::same_contents(&to, &bytes) {
            write_atomic(&to, &bytes)?;
        }
    }
    Ok(())
}

/// `line` (a recorded `command.txt`) with every absolute path written as
/// `<path>`: the binary, the corpus and the attempt folder move with a
/// checkout or a copied runs root, and a resumed attempt must still be
/// reused (fourth new-user review of issue 5: every attempt of a copied
/// root ran again). A path starts with `/` at the start, after a space, a
/// quote or `=`, and runs to the next space, quote, `,`, `]` or `}`; a URL's
/// `//` follows `:` and is kept. Settings that matter are compared on the
/// condition as a whole before any attempt is looked at.
fn without_paths(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let mut previous: Option<char> = None;
    while let Some(c) = chars.next() {
        let starts = c == '/' && previous.is_none_or(|p| matches!(p, ' ' | '\'' | '"' | '='));
        if starts {
            out.push_str("<path>");
            while let Some(&n) = chars.peek() {
                if matches!(n, ' ' | '\'' | '"' | ',' | ']' | '}' | '\n' | '\\') {
                    break;
                }
                chars.next();
            }
            previous = Some('/');
            continue;
        }
        out.push(c);
        previous = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copied runs root or a moved checkout changes only paths: the
    /// recorded command still matches; another setting does not.
    #[test]
    fn commands_compare_without_their_paths() {
        let old = r#"/work/main/target/release/okn-benchmark scripted-agent --strategy mixed:12 --attempt 1 --corpus /work/main/demo/b --mcp-config '{"mcpServers":{"okn":{"command":"/work/main/target/release/okn-benchmark","args":["proxy","--log-dir","/work/main/runs-x/q_results/c/attempt-1","--url","http://127.0.0.1:8814/mcp"]}}}' < prompt.txt"#;
        let moved = old.replace("/work/main/", "/tmp/clone/");
        assert_eq!(without_paths(old), without_paths(&moved));
        assert!(without_paths(old).contains("http://127.0.0.1:8814/mcp"));
        assert_ne!(
            without_paths(old),
            without_paths(&old.replace("mixed:12", "mixed:13"))
        );
        assert_ne!(
            without_paths(old),
            without_paths(&old.replace("8814", "8815"))
        );
    }
}
