//! `run`: one condition over a corpus, episode by episode, into a runs root
//! (`README.md`, "Episodes: run, report, rescore, freeze"; the files are
//! `docs/FORMAT.md`).
//!
//! Questions and attempts run strictly one at a time: timings mean nothing
//! under contention. Each attempt gets its folder with `prompt.txt` and
//! `command.txt` first and `episode.json` last, so a run killed at any
//! moment leaves every finished attempt intact and resumable. The
//! condition file is written when the run ends. A run is three steps:
//! [`prepare`] (every check that can refuse, before anything runs),
//! [`play`] (the episodes) and [`finish`] (the condition file).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::frozen::refuse_frozen;
use super::identity::{Arm, Identity, KgHint, ServerTarget, ToolLevel, condition_name};
use super::judge::judge;
use super::lock::ConditionLock;
use super::records::*;
use super::resume::{Expected, Kept, Reuse, judge_attempt, map_paths, refuse_replacing};
use crate::agent::host::HostOutput;
use crate::agent::machine_paths::MachinePaths;
use crate::agent::{Agent, AgentCommand, claude, launch, mcp_config};
use crate::corpus::{Corpus, Record, Selection};
use crate::error::{Error, Result};
use crate::fsutil::{absolute, read_json, write_atomic, write_json};
use crate::layout::*;
use crate::mcp::profile::Profile;
use crate::mcp::sparql_only::SparqlOnly;
use crate::reference::{GroundTruth, load as load_ground_truth};
use crate::score::{NUMERIC_REL_TOL, SCORING_VERSION, ScoreOptions};
use crate::sparql::EndpointSpec;

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

/// The tools a condition's agent has (`README.md`, "What gets measured").
#[derive(Debug, Clone)]
pub enum Tools {
    /// The server's tools and instructions, minus the withheld ones.
    AllTools {
        /// The server under test.
        profile: Profile,
        /// `--without-tool`, as given.
        withheld: Vec<String>,
    },
    /// The server-independent control: one neutral SPARQL tool.
    SparqlOnly {
        /// Its endpoint.
        control: ControlEndpoint,
    },
}

impl Tools {
    /// The tool level.
    pub fn level(&self) -> ToolLevel {
        match self {
            Tools::AllTools { .. } => ToolLevel::AllTools,
            Tools::SparqlOnly { .. } => ToolLevel::SparqlOnly,
        }
    }

    /// The server under test (all-tools).
    pub fn profile(&self) -> Option<&Profile> {
        match self {
            Tools::AllTools { profile, .. } => Some(profile),
            Tools::SparqlOnly { .. } => None,
        }
    }

    /// The tools withheld, as given (empty for sparql-only).
    pub fn withheld(&self) -> &[String] {
        match self {
            Tools::AllTools { withheld, .. } => withheld,
            Tools::SparqlOnly { .. } => &[],
        }
    }
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
    /// `--ground-truth` as given (`None`: the corpus's own folder).
    pub ground_truth_flag: Option<PathBuf>,
    /// The endpoint ground truth must come from: `--reference-endpoint`,
    /// else `[reference] endpoint` of `okn-benchmark.toml`; `None`: the one
    /// each ground truth records (issue 24, item 13).
    pub reference_endpoint: Option<EndpointSpec>,
    /// `--reference-endpoint` as given, for the `reference` command a
    /// refusal suggests (`None`: the configured endpoint, or none).
    pub reference_endpoint_flag: Option<String>,
    /// `--out`.
    pub out: PathBuf,
    /// `--tools` with what it needs.
    pub tools: Tools,
    /// For all-tools, the sparql-only control as configured (flags, then
    /// `okn-benchmark.toml`), whose preamble digest the condition records;
    /// `None` when none is configured (issue 24, item 31).
    pub preamble_control: Option<ControlEndpoint>,
    /// `--kg-hint`.
    pub kg_hint: KgHint,
    /// The agent host.
    pub agent: Agent,
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
    /// `--timeout` (the proxy's read timeout).
    pub timeout: Duration,
    /// `--strict-upstream-errors`.
    pub strict: bool,
    /// `--precision`: significant figures non-integral numbers are rounded
    /// to when judging (as `score --precision`; issue 24, item 30).
    pub significant_figures: u32,
    /// Extra environment for the agent host (e.g. `ANTHROPIC_BASE_URL`).
    pub agent_env: Vec<(String, String)>,
    /// `--shard K/N`: the slice of (question, attempt) pairs to play
    /// (`None`: all of them).
    pub shard: Option<super::shard::Shard>,
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
    /// Of the attempts run or reused now, those blocked.
    pub blocked: usize,
}

/// A condition checked and ready to play: everything [`prepare`] found.
pub struct Prepared {
    /// The runs root.
    pub root: RunsRoot,
    /// The condition's name.
    pub name: String,
    /// Its identity.
    pub identity: Identity,
    /// The records to play, in order.
    pub selected: Vec<Record>,
    /// Their ground truth, by record id.
    pub truths: BTreeMap<String, GroundTruth>,
    /// Their trajectory expectations (the record's and its corpus's
    /// defaults, `docs/TRAJECTORY.md`), by record id.
    pub expectations: BTreeMap<String, Vec<crate::expectations::Expectation>>,
    /// Records of the tier kept out by `--exclude`.
    pub excluded: Vec<Exclusion>,
    /// The condition as recorded before, when this run adds to it.
    pub recorded: Option<ConditionFile>,
    /// What the server under test reported of itself.
    pub server_info: Option<ServerInfo>,
    /// The sparql-only control, opened (sparql-only).
    pub control: Option<SparqlOnly>,
    /// The control's preamble, which every condition records (all-tools:
    /// from the control's configured endpoint, when it opens).
    pub preamble: Option<String>,
    /// The agent host's version.
    pub agent_version: Option<String>,
    /// The tool census taken before the first episode (none for the
    /// scripted agent).
    pub census: Option<crate::agent::census::CensusRecord>,
    /// This program (the proxy and the scripted agent are it).
    pub program: PathBuf,
    /// The condition's lock, held until the run ends.
    pub lock: ConditionLock,
}

/// What [`play`] recorded.
pub struct Played {
    /// Question id → its summary under the condition.
    pub summaries: BTreeMap<String, QuestionSummary>,
    /// Attempts reused by `--resume`.
    pub resumed: usize,
    /// Attempts run now.
    pub ran: usize,
    /// Of the attempts run or reused now, those blocked.
    pub blocked: usize,
    /// The model the first episode reported.
    pub model_resolved: Option<String>,
    /// Ctrl-C stopped the run before this attempt ended (record id,
    /// attempt): it was killed, and `--resume` runs it again.
    pub interrupted: Option<(String, u32)>,
    /// Questions whose every attempt was played (their `result.json`
    /// written).
    pub completed: usize,
}

/// Runs one condition. Progress lines go to `progress` as they happen.
///
/// Errors: those of [`prepare`] (before anything runs); an agent host that
/// cannot be started; a file that cannot be written.
pub fn run(options: &RunOptions, mut progress: impl FnMut(&str)) -> Result<RunOutcome> {
    let started = Instant::now();
    let mut prepared = prepare(options, &mut progress)?;
    prepared.lock.keep_folder();
    let played = play(options, &prepared, &mut progress)?;
    if let Some((id, attempt)) = &played.interrupted {
        return Err(Error::Interrupted(interrupted_message(
            &prepared, &played, id, *attempt,
        )));
    }
    finish(options, prepared, played, started, &mut progress)
}

/// What an interrupted run says it kept (README.md, "Episodes: run,
/// report, rescore, freeze").
fn interrupted_message(prepared: &Prepared, played: &Played, id: &str, attempt: u32) -> String {
    let plural = crate::format::plural;
    let recorded = prepared
        .root
        .condition_folders()
        .iter()
        .any(|(_, name)| *name == prepared.name);
    if !recorded && prepared.recorded.is_none() {
        return format!(
            "interrupted before any episode of {} was recorded: nothing of it is on disk; run the \
             same command again",
            prepared.name
        );
    }
    format!(
        "interrupted: {} attempt{} recorded now and {} reused, {} of {} question{} complete; \
         it stopped at {id} attempt {attempt}, which is not recorded (an episode in flight \
         was killed; --resume runs it again). The condition file of {} was not written: report and build list the \
         condition as unfinished until it is resumed",
        played.ran,
        plural(played.ran),
        played.resumed,
        played.completed,
        prepared.selected.len(),
        plural(prepared.selected.len()),
        prepared.name,
    )
}

/// Every check that can refuse the run, in order, before anything runs;
/// `--force` removes the condition's old folders last.
///
/// Errors: a frozen root; the control with the graph unnamed; missing
/// ground truth; withheld names the server does not have; an identity
/// that differs from the recorded condition (naming the first field, with
/// the `--label` / `--force` advice); recorded attempts without `--resume`
/// or `--force`; ground truth that changed under other conditions; an
/// agent host that does not run.
pub fn prepare(options: &RunOptions, progress: &mut impl FnMut(&str)) -> Result<Prepared> {
    let root = RunsRoot::new(&options.out);
    refuse_frozen(&root, "run")?;
    check_free_space(&options.out, min_free_bytes())?;
    if options.tools.level() == ToolLevel::SparqlOnly && !options.kg_hint.names_graph() {
        return Err(Error::Usage(
            "--tools sparql-only with --kg-hint none is refused: the control is handed the list of shortnames to address the endpoint, so withholding the graph's name measures name recognition, not graph selection".into(),
        ));
    }
    if options.repeat == 0 {
        return Err(Error::Usage("--repeat must be at least 1".into()));
    }
    let (selected, excluded) = select(options)?;
    // Expectations that do not read stop the run before anything is played.
    let defaults = crate::expectations::defaults::Defaults::find(&options.corpus.root)?;
    let mut expectations = BTreeMap::new();
    for record in &selected {
        expectations.insert(
            record.id.clone(),
            crate::expectations::defaults::for_record(record, &defaults)?,
        );
    }
    let (name, mut identity) = identity(options, &excluded);
    // Before anything is read of the condition or written into it.
    let lock = ConditionLock::acquire(&root, &name, progress)?;
    let truths = ground_truths(options, &selected)?;
    let server_info = check_server(options)?;
    // The control, opened once for its preamble.
    let control = match &options.tools {
        Tools::SparqlOnly { control: c } => {
            Some(SparqlOnly::new(&c.spec, &c.template, &c.shortnames)?)
        }
        Tools::AllTools { .. } => None,
    };
    let preamble = match &control {
        Some(control) => Some(control.preamble.clone()),
        None => control_preamble(options, progress),
    };
    let recorded = check_recorded(options, &root, &name, &mut identity, &truths)?;
    let program = std::env::current_exe()
        .map_err(|e| Error::Other(format!("cannot find this program: {e}")))?;
    if options.resume && !options.force {
        let launch = Launch {
            options,
            program: &program,
            upstream: identity.upstream.as_ref(),
        };
        refuse_replacing(&name, &kept_attempts(&launch, &root, &name, &selected))?;
    }
    let version = crate::agent::preflight(&options.agent, &options.agent_env, progress)?;
    // The host's version is part of the condition's identity (issue 25).
    // The openai loop is this program: its version is the loop's.
    identity.host_version = match &options.agent {
        Agent::Scripted(_) => None,
        Agent::Claude(_) | Agent::Codex(_) | Agent::Gemini(_) | Agent::Openai(_) => {
            Some(version.clone())
        }
    };
    if let Some(file) = recorded.as_ref().filter(|_| !options.force)
        && let Some((field, old, new)) = identity.first_difference(&file.identity)
    {
        return Err(Error::Usage(format!(
            "{} already holds condition {name} played with {field} = {old}; this run has {new}: \
             a condition is played by one version of its host; use --label to keep this run \
             beside it, or --force to replace it",
            root.root.display()
        )));
    }
    let census = take_census(options, &program, &selected, &version, progress)?;
    if let (Some(file), Some(new)) = (recorded.as_ref().filter(|_| !options.force), &census)
        && let Some(old) = &file.settings.census
        && let Some(difference) = new.difference(old)
    {
        return Err(Error::Usage(format!(
            "{} already holds condition {name}, whose episodes were played by a host that \
             offered other tools ({difference}): a condition is played with one tool surface; \
             use --label to keep this run beside it, or --force to replace it",
            root.root.display()
        )));
    }
    if options.force {
        // Every folder of the condition, not only the selected questions':
        // --force replaces the condition, and nothing of it may come back.
        for dir in condition_folders(&root, &name) {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, "remove", e))?;
        }
        let condition_path = root.condition_file(&name);
        if condition_path.exists() {
            std::fs::remove_file(&condition_path)
                .map_err(|e| Error::io(&condition_path, "remove", e))?;
        }
    }
    // A resumed condition is played against the server its attempts met:
    // one that reports itself otherwise now (another build, a version
    // configured by an environment value) would mix two servers in one
    // condition, and the record would describe only the second (a red
    // team's finding on issue 24, item 11).
    if let Some(file) = recorded.as_ref().filter(|_| !options.force)
        && let (Some(old), Some(new)) = (&file.settings.server_info, &server_info)
        && old != new
    {
        return Err(Error::Usage(format!(
            "{} already holds condition {name}, whose attempts were played against a server \
             that reported itself as {}; the server reports {} now: a condition is played \
             against one server; use --label to keep this run beside it, or --force to \
             replace it",
            root.root.display(),
            describe_server(old),
            describe_server(new),
        )));
    }
    let agent_version = Some(version);
    Ok(Prepared {
        root,
        name,
        identity,
        selected,
        truths,
        expectations,
        excluded,
        recorded,
        server_info,
        control,
        preamble,
        agent_version,
        census,
        program,
        lock,
    })
}

/// The tool census of the condition's host ([`HostLaunch::census`]),
/// taken with the first question's prompt; `None` for the scripted agent.
///
/// Errors: the census's.
fn take_census(
    options: &RunOptions,
    program: &Path,
    selected: &[Record],
    version: &str,
    progress: &mut impl FnMut(&str),
) -> Result<Option<crate::agent::census::CensusRecord>> {
    let prompt = selected
        .first()
        .map(|r| super::prompt::prompt(r, options.kg_hint.names_graph()))
        .unwrap_or_else(|| CENSUS_PROMPT.into());
    HostLaunch::of(options, program).census(version, &prompt, progress)
}

/// The prompt of a census taken with no question at hand (`probe
/// --agent`, a run with none selected): the census ends the session at
/// the first model request, so only the request's shape matters.
pub const CENSUS_PROMPT: &str = "What is in this knowledge graph?";

/// How an episode's proxy and agent host are started, apart from the
/// corpus and the attempt: `run` starts every episode and its tool census
/// so (`Launch`), and `probe --agent` its census, from the same flags
/// (issue 25, "Isolation verified, not assumed").
pub struct HostLaunch<'a> {
    /// The agent host.
    pub agent: &'a Agent,
    /// This program (the proxy, the openai loop and the scripted agent
    /// are it).
    pub program: &'a Path,
    /// `--tools` with what it needs.
    pub tools: &'a Tools,
    /// `--timeout`: the proxy's read timeout.
    pub timeout: Duration,
    /// `--strict-upstream-errors`.
    pub strict: bool,
    /// `--agent-timeout`.
    pub agent_timeout: Duration,
    /// What the run adds to every episode's environment
    /// ([`RunOptions::agent_env`]).
    pub env: &'a [(String, String)],
}

/// The command [`HostLaunch::command`] gives for an agent.
pub enum HostCommand<'a> {
    /// A model's host (claude, codex, gemini, the openai loop): this
    /// command.
    Model(AgentCommand),
    /// The scripted agent, which calls no model: its command names the
    /// corpus and the attempt, which only `run`'s own launch knows.
    Scripted(&'a crate::agent::strategy::Strategy),
}

impl<'a> HostLaunch<'a> {
    /// The launch of `options`' episodes, `program` being this program.
    pub fn of(options: &'a RunOptions, program: &'a Path) -> HostLaunch<'a> {
        HostLaunch {
            agent: &options.agent,
            program,
            tools: &options.tools,
            timeout: options.timeout,
            strict: options.strict,
            agent_timeout: options.agent_timeout,
            env: &options.agent_env,
        }
    }

    /// The proxy of one attempt logging into `dir_abs`: the agent host's
    /// only MCP server.
    pub fn proxy(&self, dir_abs: &Path) -> crate::agent::McpProxy {
        crate::agent::McpProxy {
            program: self.program.to_path_buf(),
            args: proxy_args(self, dir_abs),
        }
    }

    /// The command that starts `agent`'s host for one episode logging
    /// into `dir_abs` (`agent` is the launch's own, or the copy the census
    /// points at its stand-in).
    pub fn command<'s>(&self, agent: &'s Agent, dir_abs: &Path) -> HostCommand<'s> {
        let proxy = self.proxy(dir_abs);
        let config = mcp_config(&proxy.program, &proxy.args);
        HostCommand::Model(match agent {
            Agent::Claude(settings) => claude::command(settings, &config),
            Agent::Codex(settings) => crate::agent::codex::command(settings),
            Agent::Gemini(settings) => crate::agent::gemini::command(settings),
            // This program, as the scripted agent is (`docs/HOSTS.md`,
            // "openai"), stopping before `--agent-timeout` kills it.
            Agent::Openai(settings) => crate::agent::openai::command(
                settings,
                self.program,
                config,
                crate::agent::openai::loop_timeout_s(self.agent_timeout.as_secs()),
            ),
            Agent::Scripted(strategy) => return HostCommand::Scripted(strategy),
        })
    }

    /// The tool census of the host (`crate::agent::census`; issue 25,
    /// "Isolation verified, not assumed"): started once with `prompt` and
    /// this launch's own command and environment, said on `progress`;
    /// `None` for the scripted agent, which calls no model. `version` is
    /// the host's, as [`crate::agent::preflight`] found it.
    ///
    /// Errors: the census's ([`crate::agent::census::take`]): a tool
    /// beyond the proxy's, a planted marker that reached the model, no
    /// `submit_csv`, no request.
    pub fn census(
        &self,
        version: &str,
        prompt: &str,
        progress: &mut impl FnMut(&str),
    ) -> Result<Option<crate::agent::census::CensusRecord>> {
        if let Agent::Scripted(_) = self.agent {
            return Ok(None);
        }
        progress(&format!(
            "census: starting {} once against a local stand-in to see the tools it offers",
            self.agent.host().name()
        ));
        let proxy = |dir: &Path| self.proxy(dir);
        let command = |agent: &Agent, dir: &Path| match self.command(agent, dir) {
            HostCommand::Model(command) => command,
            // Not reached: the census points a model's host at its
            // stand-in, and the scripted agent has no census (above). This
            // program with no arguments makes no request, which the
            // census reports.
            HostCommand::Scripted(_) => AgentCommand {
                program: self.program.to_path_buf(),
                args: Vec::new(),
            },
        };
        let record = crate::agent::census::take(&crate::agent::census::CensusPlan {
            agent: self.agent,
            host_version: version,
            env: self.env,
            prompt,
            timeout: self.agent_timeout,
            proxy: &proxy,
            command: &command,
        })?;
        progress(&format!("census: {}", record.summary()));
        Ok(Some(record))
    }
}

/// A server's self-description for a message: its name and version,
/// then whatever else differs in its record (JSON).
fn describe_server(info: &ServerInfo) -> String {
    let json = serde_json::to_string(info).unwrap_or_default();
    crate::text::printable(&format!("{} {} ({json})", info.name, info.version)).into_owned()
}

/// The sparql-only control's preamble for a condition that does not play
/// it: every condition records its digest (the shared control's, the same
/// for every profile; issue 24, item 31). `None`, said on `progress`, when
/// no control endpoint is configured or it does not open.
fn control_preamble(options: &RunOptions, progress: &mut impl FnMut(&str)) -> Option<String> {
    let c = options.preamble_control.as_ref()?;
    match SparqlOnly::new(&c.spec, &c.template, &c.shortnames) {
        Ok(control) => Some(control.preamble),
        Err(e) => {
            progress(&format!(
                "note: the sparql-only control does not open here ({e}), so the condition \
                 records no preamble digest"
            ));
            None
        }
    }
}

/// The records the selection keeps, and those of its tier `--exclude`
/// kept out (each with the pattern that did).
fn select(options: &RunOptions) -> Result<(Vec<Record>, Vec<Exclusion>)> {
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
    Ok((selected.into_iter().cloned().collect(), excluded))
}

/// The cached ground truth of every selected record.
///
/// Errors: records without one, named (run `reference` first).
fn ground_truths(
    options: &RunOptions,
    selected: &[Record],
) -> Result<BTreeMap<String, GroundTruth>> {
    let mut truths = BTreeMap::new();
    let mut missing = Vec::new();
    for record in selected {
        match load_ground_truth(&options.ground_truth_dir, &record.id)? {
            Some(truth) => {
                truths.insert(record.id.clone(), truth);
            }
            None => missing.push(record.id.clone()),
        }
    }
    if missing.is_empty() {
        let checks = endpoint_checks(options, selected, &truths)?;
        crate::reference::refuse_stale(
            selected
                .iter()
                .map(|r| (r, &truths[&r.id].meta, checks.get(&r.id))),
            &rebuild_command(options),
        )?;
    } else {
        return Err(Error::Usage(format!(
            "no ground truth for {} of {} record{} ({}): run 'okn-benchmark reference --corpus {}' first",
            missing.len(),
            selected.len(),
            crate::format::plural(selected.len()),
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
    Ok(truths)
}

/// The endpoint each selected record's ground truth must come from, for
/// [`crate::reference::drift`] (issue 24, item 13): `--reference-endpoint`
/// or `[reference] endpoint` of the nearest `okn-benchmark.toml` (what
/// `reference` itself would use) for every record; without either, the
/// endpoint each ground truth records, as it resolves from the current
/// folder (a URL is its own identity; RDF data is read again).
///
/// Errors: recorded RDF data that cannot be found or read from here,
/// named, with the flag that names the endpoint.
fn endpoint_checks(
    options: &RunOptions,
    selected: &[Record],
    truths: &BTreeMap<String, GroundTruth>,
) -> Result<BTreeMap<String, crate::reference::EndpointCheck>> {
    use crate::reference::EndpointCheck;
    if let Some(spec) = &options.reference_endpoint {
        let check = EndpointCheck {
            location: endpoint_location(spec),
            identity: spec.identity(),
        };
        return Ok(selected
            .iter()
            .map(|r| (r.id.clone(), check.clone()))
            .collect());
    }
    let mut resolved: BTreeMap<(String, String), EndpointCheck> = BTreeMap::new();
    let mut checks = BTreeMap::new();
    for record in selected {
        let endpoint = &truths[&record.id].meta.endpoint;
        let key = (endpoint.kind.clone(), endpoint.location.clone());
        if !resolved.contains_key(&key) {
            let identity = if endpoint.kind == "http" {
                endpoint.location.clone()
            } else {
                EndpointSpec::resolve(&endpoint.location, Path::new(""))
                    .map_err(|e| {
                        Error::Usage(format!(
                            "cannot tell whether the ground truth of {} is current: it was built \
                             from the RDF data at {}, which cannot be read from here ({e}); name \
                             the endpoint it must come from with --reference-endpoint URL|PATH, \
                             or set it under [reference] in okn-benchmark.toml",
                            record.id, endpoint.location
                        ))
                    })?
                    .identity()
            };
            resolved.insert(
                key.clone(),
                EndpointCheck {
                    location: endpoint.location.clone(),
                    identity,
                },
            );
        }
        checks.insert(record.id.clone(), resolved[&key].clone());
    }
    Ok(checks)
}

/// An endpoint as it was named: the data path or the URL.
fn endpoint_location(spec: &EndpointSpec) -> String {
    match spec {
        EndpointSpec::Embedded { display, .. } => display.clone(),
        EndpointSpec::Http { url, .. } => url.clone(),
    }
}

/// The `reference` command that rebuilds the run's ground truth, for a
/// refusal to say.
fn rebuild_command(options: &RunOptions) -> String {
    let mut line = format!(
        "okn-benchmark reference --corpus {}",
        crate::agent::shell_quote(&options.corpus_spec)
    );
    if let Some(dir) = &options.ground_truth_flag {
        line.push_str(&format!(
            " --ground-truth {}",
            crate::agent::shell_quote(&dir.to_string_lossy())
        ));
    }
    if let Some(value) = &options.reference_endpoint_flag {
        line.push_str(&format!(" --endpoint {}", crate::agent::shell_quote(value)));
    }
    line
}

/// The server under test, asked once for its tools before anything runs:
/// a server that cannot be reached would block every episode, and the
/// withheld names are checked against its tools. Returns what it reported
/// of itself ([`server_info`]).
///
/// Errors: a server that cannot be reached; a withheld name it does not
/// have (with "did you mean").
fn check_server(options: &RunOptions) -> Result<Option<ServerInfo>> {
    let Tools::AllTools { profile, withheld } = &options.tools else {
        return Ok(None);
    };
    let runtime = crate::mcp::runtime()?;
    // A stdio server's stderr goes to a scratch log, not the terminal; its
    // last lines join the error when the server cannot be reached.
    let scratch = tempfile::tempdir()
        .map_err(|e| Error::Other(format!("cannot make a scratch folder: {e}")))?;
    let log = scratch.path().join(UPSTREAM_STDERR_FILE);
    let connected = runtime.block_on(crate::mcp::upstream::connect(
        profile,
        options.timeout,
        Some(&log),
    ));
    match connected {
        Ok(connection) => {
            crate::mcp::probe::check_withheld(&profile.name, &connection.tools, withheld)?;
            let redactor = profile.redactor();
            Ok(connection
                .server_info
                .as_ref()
                .map(|i| server_info(profile, i, options.timeout).redacted(&redactor)))
        }
        Err(reason) => Err(Error::Usage(format!(
            "the server under test, {}, cannot be reached ({reason}), so no episode was run: \
             start it, or fix {}, and run again (`okn-benchmark probe --profile {}` shows \
             what an agent would see){}",
            profile.name,
            profile.path.display(),
            profile.path.display(),
            stderr_tail(&log)
        ))),
    }
}

/// What the server under test reported of itself (issue 24, item 31): its
/// MCP `serverInfo`, and over HTTP the headers of its `initialize` reply
/// that name its software or build ([`crate::mcp::server_report`]; why
/// they could not be read, when they could not).
fn server_info(
    profile: &Profile,
    info: &rmcp::model::Implementation,
    timeout: Duration,
) -> ServerInfo {
    let mut report = ServerInfo {
        name: info.name.clone(),
        version: info.version.clone(),
        title: info.title.clone(),
        description: info.description.clone(),
        website_url: info.website_url.clone(),
        http_headers: BTreeMap::new(),
        http_headers_error: None,
    };
    if let crate::mcp::profile::Upstream::Http { url, headers } = &profile.upstream {
        match crate::mcp::server_report::build_headers(url, headers, timeout) {
            Ok(found) => report.http_headers = found,
            Err(why) => report.http_headers_error = Some(why),
        }
    }
    report
}

/// The last lines a server wrote on stderr (at most 20), as a block to
/// append to an error; empty when it wrote nothing.
fn stderr_tail(log: &Path) -> String {
    // Only a regular file is read: a named pipe would never end.
    let text = crate::fsutil::read_regular(log, crate::fsutil::Links::Refuse)
        .ok()
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let shown = &lines[lines.len().saturating_sub(20)..];
    format!(
        ". The server's stderr{}:\n  {}",
        if shown.len() < lines.len() {
            " (its last 20 lines)"
        } else {
            ""
        },
        shown.join("\n  ")
    )
}

/// The free space `run` wants on the disk of a runs root before each
/// episode, bytes: 64 MiB (an episode's records, a large submitted answer
/// included, must all be written, or a lost answer reads as a miss).
/// `OKN_MIN_FREE_BYTES` overrides it, for tests.
pub const MIN_FREE_BYTES: u64 = 64 * 1024 * 1024;

fn min_free_bytes() -> u64 {
    std::env::var("OKN_MIN_FREE_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MIN_FREE_BYTES)
}

/// Stops the run when the disk holding `path` has less than `wanted`
/// bytes free (a system that does not say is not stopped).
///
/// Errors: [`Error::File`] naming the folder, the space free and what to
/// do.
fn check_free_space(path: &Path, wanted: u64) -> Result<()> {
    match crate::fsutil::available_bytes(path) {
        Some(free) if free < wanted => Err(Error::file(
            path,
            format!(
                "only {} MiB free on its disk, less than the {} MiB an episode's records may \
                 need: an answer the proxy could not save would read as a miss, so the run \
                 stopped here; free some space, then run again with --resume",
                free / (1024 * 1024),
                wanted.div_ceil(1024 * 1024)
            ),
        )),
        _ => Ok(()),
    }
}

/// What the server under test resolves to: the profile's target, or the
/// control's endpoint (its URL, or the digest of its RDF data).
fn server_target(tools: &Tools) -> ServerTarget {
    match tools {
        Tools::AllTools { profile, .. } => profile.target(),
        Tools::SparqlOnly { control } => ServerTarget {
            transport: ToolLevel::SparqlOnly.as_str().into(),
            command: None,
            args: Vec::new(),
            cwd: None,
            url: match &control.spec {
                EndpointSpec::Http { url, .. } => Some(crate::mcp::profile::redact_url(url)),
                EndpointSpec::Embedded { .. } => None,
            },
            data: match &control.spec {
                EndpointSpec::Embedded { identity, .. } => Some(identity.clone()),
                EndpointSpec::Http { .. } => None,
            },
            public: Default::default(),
        },
    }
}

/// The condition's name and identity from the options.
fn identity(options: &RunOptions, excluded: &[Exclusion]) -> (String, Identity) {
    let level = options.tools.level();
    let server = options.tools.profile().map(|p| p.name.clone());
    let mut withheld = options.tools.withheld().to_vec();
    withheld.sort();
    withheld.dedup();
    let name = condition_name(
        &Arm {
            level,
            server: server.as_deref(),
            withheld: &withheld,
            strict: options.strict,
            kg_hint: options.kg_hint,
            host: options.agent.host().folder_tag(),
        },
        options.label.as_deref(),
    );
    let identity = Identity {
        level,
        kg_hint: options.kg_hint,
        server,
        upstream: Some(server_target(&options.tools)),
        agent: options.agent.name(),
        base_url: options.agent.base_url().map(str::to_string),
        // Set once the host states it (prepare).
        host_version: None,
        model: options.agent.model().map(str::to_string),
        effort: options.agent.effort().map(str::to_string),
        tier: options.selection.tier.clone(),
        corpus: options.corpus_spec.clone(),
        repeat: options.repeat,
        withheld,
        strict_upstream_errors: options.strict,
        excluded: excluded.iter().map(|e| e.id.clone()).collect(),
        shards: options.shard.map(|s| s.count),
    };
    (name, identity)
}

/// What the root already holds of this condition, checked against this
/// run: the same identity, attempts only with `--resume` or `--force`, and
/// the ground truth other conditions there were judged by. Returns the
/// recorded condition a run adds to.
///
/// A merged root (`merge`: `shards: N` and no slice of its own) resumed
/// by a serial `run --resume` keeps `shards: N`: that run plays the
/// attempts the merge found missing (`docs/SCALING.md`).
///
/// Errors: the first field of the identity that differs; recorded
/// attempts without `--resume` or `--force`; changed ground truth.
fn check_recorded(
    options: &RunOptions,
    root: &RunsRoot,
    name: &str,
    identity: &mut Identity,
    truths: &BTreeMap<String, GroundTruth>,
) -> Result<Option<ConditionFile>> {
    let condition_path = root.condition_file(name);
    let mut recorded = None;
    if condition_path.is_file() && !options.force {
        // Read as every reader of a root reads it: its ids and the values
        // its flags set checked (issue 24, items 7 and 20).
        let file: ConditionFile = super::recorded::read_condition(&condition_path)?;
        if options.resume && options.shard.is_none() && file.shard.is_none() {
            identity.shards = identity.shards.or(file.identity.shards);
        }
        // A shard plays into its own root: another slice (or a merged
        // sweep) there would be overwritten by this slice's condition file.
        if let Some(shard) = options.shard {
            let held = file.shard.as_ref().map(|r| r.shard());
            if held != Some(shard) {
                return Err(Error::Usage(format!(
                    "{} holds {} of '{name}', not shard {shard}: each shard writes its own \
                     root (--out), and 'okn-benchmark merge' joins them",
                    root.root.display(),
                    match held {
                        Some(other) => format!("shard {other}"),
                        None => "a whole (or merged) sweep".to_string(),
                    }
                )));
            }
        }
        if let Some((field, old, new)) = identity.first_difference(&file.identity) {
            return Err(Error::Usage(format!(
                "'{name}' already holds a run with different settings:\n  {field}: {old} -> {new}\n\nUse --label NAME to keep them apart, or --force to replace."
            )));
        }
        check_settings(options, name, &file)?;
        recorded = Some(file);
    }
    let recorded_attempts = truths
        .keys()
        .any(|id| root.condition_dir(id, name).is_dir());
    if recorded_attempts && !options.resume && !options.force {
        return Err(Error::Usage(format!(
            "{} already holds attempts of '{name}': --resume reuses the finished ones, --force replaces them",
            root.root.display()
        )));
    }
    // Ground truth that changed since this root recorded a question would
    // judge this condition by another key than the ones beside it, and
    // would replace the one its own recorded attempts were judged by (only
    // --force replaces those; issue 24, item 10). Its rows are compared
    // too: rebuilt against a URL whose data was updated (`reference
    // --verify`, then `--force`), it keeps its fingerprint. A recorded
    // ground truth that cannot be read is damage, never replaced unread.
    for (id, truth) in truths {
        let recorded_truth = root.question_dir(id).join(GROUND_TRUTH_JSON);
        if std::fs::symlink_metadata(&recorded_truth).is_err() {
            continue;
        }
        let old = read_json::<crate::reference::GroundTruthMeta>(&recorded_truth)?;
        let changed =
            old.fingerprint != truth.meta.fingerprint || old.csv_sha256 != truth.meta.csv_sha256;
        if !changed {
            continue;
        }
        let others = condition_dirs_of_question(root, id)
            .into_iter()
            .any(|c| c != name);
        if others {
            return Err(Error::Usage(format!(
                "the ground truth of {} changed since {} recorded it (its answer key, endpoint or rows changed), and other conditions there were judged by the old one: record this run into a new root",
                id,
                root.root.display()
            )));
        }
        if root.condition_dir(id, name).is_dir() && !options.force {
            return Err(Error::Usage(format!(
                "the ground truth of {id} changed since {} recorded it (its answer key, \
                 endpoint or rows changed), and the attempts of '{name}' there answered the \
                 old one: --force replaces them, or record this run into a new root",
                root.root.display()
            )));
        }
    }
    Ok(recorded)
}

/// What a run adding to condition `name` must share with its recorded
/// `file` beyond the identity: the precision it is judged at (issue 24,
/// item 30), and, for a file of an older format whose identity has no
/// `upstream`, the server its `settings.profile` recorded (item 11).
///
/// Errors: [`Error::Usage`] naming what differs and the ways on.
fn check_settings(options: &RunOptions, name: &str, file: &ConditionFile) -> Result<()> {
    // One condition, one rule for numbers: questions judged at another
    // precision would be averaged with these (issue 24, item 30).
    let figures = file.settings.significant_figures;
    if figures != options.significant_figures {
        return Err(Error::Usage(format!(
            "'{name}' was judged at {figures} significant figures \
             (settings.significant_figures), and this run asks for --precision {}: its \
             questions would be judged by two rules. Run with --precision {figures}, or \
             rescore the root with --precision {} first, or use --label NAME to keep them \
             apart",
            options.significant_figures, options.significant_figures
        )));
    }
    if file.identity.upstream.is_none()
        && let (Some(old), Some(profile)) = (&file.settings.profile, options.tools.profile())
    {
        let new = profile.record();
        // Compared word by word with `~` expanded: older records expanded it.
        let words = |t: &str| -> Vec<String> {
            t.split(' ').map(crate::mcp::profile::expand_home).collect()
        };
        if old.transport != new.transport || words(&old.target) != words(&new.target) {
            return Err(Error::Usage(format!(
                "'{name}' was recorded against another server than {} resolves to:\n  \
                 settings.profile: {} '{}' -> {} '{}'\n\nUse --label NAME to keep them apart, \
                 or --force to replace.",
                profile.path.display(),
                old.transport,
                old.target,
                new.transport,
                new.target
            )));
        }
    }
    Ok(())
}

/// Plays every attempt of every selected question, in order, writing each
/// question's `result.json` as it completes.
///
/// Errors: an agent host that cannot be started; a file that cannot be
/// written.
pub fn play(
    options: &RunOptions,
    prepared: &Prepared,
    progress: &mut impl FnMut(&str),
) -> Result<Played> {
    let root = &prepared.root;
    let name = &prepared.name;
    let total = prepared.selected.len();
    let mut played = Played {
        summaries: BTreeMap::new(),
        resumed: 0,
        ran: 0,
        blocked: 0,
        model_resolved: None,
        interrupted: None,
        completed: 0,
    };
    let slice = slices(options, total);
    let mut tally = Tally::new(slice.iter().map(Vec::len).sum());
    for (index, record) in prepared.selected.iter().enumerate() {
        if slice[index].is_empty() {
            continue;
        }
        let truth = &prepared.truths[&record.id];
        copy_ground_truth(root, &record.id, &options.ground_truth_dir)?;
        let prompt = super::prompt::prompt(record, options.kg_hint.names_graph());
        let score_options = ScoreOptions {
            ordered: truth.meta.ordered,
            significant_figures: options.significant_figures,
            ..ScoreOptions::default()
        };
        let mut attempts = Vec::new();
        for &attempt in &slice[index] {
            let clock = Instant::now();
            let dir = root.attempt_dir(&record.id, name, attempt);
            if crate::interrupt::requested() {
                played.interrupted = Some((record.id.clone(), attempt));
                return Ok(played);
            }
            check_free_space(&root.root, min_free_bytes())?;
            let reused = match play_attempt(options, prepared, &dir, attempt, &prompt) {
                Err(Error::Interrupted(_)) => {
                    played.interrupted = Some((record.id.clone(), attempt));
                    return Ok(played);
                }
                other => other?,
            };
            if reused {
                played.resumed += 1;
            } else {
                played.ran += 1;
            }
            let files = super::recorded::AttemptFiles::read(&dir, attempt)?;
            let expected = &prepared.expectations[&record.id];
            let result = judge(&files, attempt, (truth, expected), &score_options);
            played.blocked += usize::from(result.blocked);
            if played.model_resolved.is_none() {
                played.model_resolved = result.model_resolved.clone();
            }
            let seconds = (!reused).then(|| clock.elapsed().as_secs_f64());
            tally.record(result.exact && !result.blocked, seconds);
            progress(&format!(
                "{}  ({})",
                progress_line(
                    (index + 1, total),
                    &record.id,
                    (attempt, options.repeat),
                    &result,
                    seconds
                ),
                tally.line(tally.started.elapsed().as_secs_f64())
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
            expectations: prepared.expectations[&record.id].clone(),
            attempts,
            summary: summary.clone(),
        };
        write_json(
            &root.condition_dir(&record.id, name).join(RESULT_FILE),
            &question,
        )?;
        played.summaries.insert(record.id.clone(), summary);
        played.completed += 1;
    }
    Ok(played)
}

/// How this run starts an attempt's agent host: what an attempt's command
/// line and the resume check need of the run being prepared or played.
struct Launch<'a> {
    options: &'a RunOptions,
    /// This program (the proxy and the scripted agent are it).
    program: &'a Path,
    /// What the server under test resolves to.
    upstream: Option<&'a ServerTarget>,
}

/// One attempt's agent host command, as launched and as `command.txt`
/// records it.
struct AttemptCommand {
    command: AgentCommand,
    /// The line `command.txt` records: relative paths, programs on PATH by
    /// name.
    recorded_line: String,
    /// The file names of the programs it names ([`super::resume::without_paths`]).
    programs: Vec<String>,
}

impl<'a> Launch<'a> {
    /// The launch of a prepared run.
    fn of(options: &'a RunOptions, prepared: &'a Prepared) -> Launch<'a> {
        Launch {
            options,
            program: &prepared.program,
            upstream: prepared.identity.upstream.as_ref(),
        }
    }

    /// Its [`HostLaunch`]: everything an episode's proxy and host are
    /// started with but the corpus and the attempt.
    fn host(&self) -> HostLaunch<'a> {
        HostLaunch::of(self.options, self.program)
    }

    /// The proxy of one attempt logging into `dir_abs`: the agent host's
    /// only MCP server.
    fn proxy(&self, dir_abs: &Path) -> crate::agent::McpProxy {
        self.host().proxy(dir_abs)
    }

    /// The agent host command of one attempt logging into `dir_abs`.
    fn command(&self, dir_abs: &Path, attempt: u32) -> AgentCommand {
        let host = self.host();
        match host.command(&self.options.agent, dir_abs) {
            HostCommand::Model(command) => command,
            HostCommand::Scripted(strategy) => {
                let proxy = host.proxy(dir_abs);
                AgentCommand {
                    program: self.program.to_path_buf(),
                    args: vec![
                        "scripted-agent".into(),
                        "--strategy".into(),
                        strategy.to_string(),
                        "--attempt".into(),
                        attempt.to_string(),
                        "--corpus".into(),
                        absolute(&self.options.corpus.root)
                            .to_string_lossy()
                            .into_owned(),
                        "--mcp-config".into(),
                        mcp_config(&proxy.program, &proxy.args),
                    ],
                }
            }
        }
    }

    /// The command of attempt `attempt` in `dir`, with what `command.txt`
    /// records of it: the same line, run from the attempt folder, with no
    /// folder of this machine in it (a program found on PATH by its name
    /// is named so, an installed okn-benchmark or the claude CLI; any
    /// other path is relative).
    fn attempt(&self, dir: &Path, attempt: u32) -> AttemptCommand {
        let dir_abs = absolute(dir);
        let command = self.command(&dir_abs, attempt);
        let programs = [command.program.clone(), self.program.to_path_buf()];
        let on_path: Vec<(String, String)> = programs
            .iter()
            .filter_map(|p| Some((p.to_string_lossy().into_owned(), on_path_name(p)?)))
            .collect();
        let names: Vec<String> = programs
            .iter()
            .filter_map(|p| Some(p.file_name()?.to_string_lossy().into_owned()))
            .collect();
        // No header or environment value of the profile is recorded
        // (issue 24, item 27).
        let recorded_line = redactor_of(self.options)
            .text(&relative_to(&command.shell_line(), &dir_abs, &on_path))
            .into_owned();
        AttemptCommand {
            recorded_line,
            command,
            programs: names,
        }
    }

    /// Attempt `attempt` in `dir` with its prompt, and whether what is
    /// recorded there is reused, played or kept ([`judge_attempt`]).
    fn judge(&self, dir: &Path, attempt: u32, prompt: &str) -> (AttemptCommand, Reuse) {
        let command = self.attempt(dir, attempt);
        let reuse = judge_attempt(
            dir,
            attempt,
            &Expected {
                prompt,
                command: &command.recorded_line,
                programs: &command.programs,
                agent_timeout_s: self.options.agent_timeout.as_secs(),
                upstream: self.upstream,
            },
        );
        (command, reuse)
    }
}

/// What replaces the profile's header and environment values in
/// everything an attempt writes (none for the sparql-only control).
fn redactor_of(options: &RunOptions) -> crate::mcp::redact::Redactor {
    options
        .tools
        .profile()
        .map(Profile::redactor)
        .unwrap_or_default()
}

/// The attempts of each selected question this run plays, by position:
/// all of them, or the shard's slice (a question with none in the slice
/// is not touched).
fn slices(options: &RunOptions, total: usize) -> Vec<Vec<u32>> {
    (0..total)
        .map(|position| {
            (1..=options.repeat)
                .filter(|&a| {
                    options
                        .shard
                        .is_none_or(|s| s.holds(position, options.repeat, a))
                })
                .collect()
        })
        .collect()
}

/// The finished attempts of condition `name` this run would have to
/// delete to play (issue 24, item 10): each attempt it plays whose record
/// differs from what it would issue ([`judge_attempt`]).
fn kept_attempts(
    launch: &Launch<'_>,
    root: &RunsRoot,
    name: &str,
    selected: &[Record],
) -> Vec<Kept> {
    let slices = slices(launch.options, selected.len());
    let mut kept = Vec::new();
    for (record, attempts) in selected.iter().zip(&slices) {
        let prompt = super::prompt::prompt(record, launch.options.kg_hint.names_graph());
        for &attempt in attempts {
            let dir = root.attempt_dir(&record.id, name, attempt);
            if let (_, Reuse::Keep(why)) = launch.judge(&dir, attempt, &prompt) {
                kept.push(Kept {
                    question: record.id.clone(),
                    attempt,
                    why,
                });
            }
        }
    }
    kept
}

/// Plays one attempt into `dir`, or with `--resume` reuses the one there
/// when it finished with this very prompt, command and server (and, if it
/// timed out, under this timeout). Returns whether it was reused. A
/// finished attempt is never deleted here: [`prepare`] refused the run
/// that would have (only `--force` deletes, and it did before play).
///
/// Errors: a finished attempt this run would play otherwise; an agent host
/// that cannot be started; a file that cannot be written.
fn play_attempt(
    options: &RunOptions,
    prepared: &Prepared,
    dir: &Path,
    attempt: u32,
    prompt: &str,
) -> Result<bool> {
    let (attempt_command, reuse) = Launch::of(options, prepared).judge(dir, attempt, prompt);
    match reuse {
        Reuse::Play => {}
        Reuse::Reuse(recovered) if options.resume => {
            // An attempt written before episode.json existed: the episode
            // recovered from agent.json is recorded with its source (issue
            // 24, item 15), and judged from it below.
            if let Some(episode) = recovered {
                write_json(&dir.join(EPISODE_FILE), &episode)?;
            }
            return Ok(true);
        }
        Reuse::Reuse(_) => {
            return Err(Error::Usage(format!(
                "{} holds a finished attempt, and this run was not asked to --resume: nothing \
                 recorded is deleted without --force",
                dir.display()
            )));
        }
        Reuse::Keep(why) => {
            return Err(Error::Usage(format!(
                "{} holds a finished attempt this run would play otherwise ({why}): nothing \
                 recorded is deleted without --force",
                dir.display()
            )));
        }
    }
    let AttemptCommand {
        command,
        recorded_line,
        ..
    } = attempt_command;
    // A profile's header and environment values are written nowhere
    // (issue 24, item 27): not in what the agent host reported, should it
    // quote a server that echoed one (command.txt is redacted as made).
    let redactor = redactor_of(options);
    let dir_abs = absolute(dir);
    clear_dir(dir)?;
    std::fs::create_dir_all(dir.join(CWD_DIR)).map_err(|e| Error::io(dir, "create", e))?;
    write_atomic(&dir.join(PROMPT_FILE), prompt.as_bytes())?;
    write_atomic(&dir.join(COMMAND_FILE), recorded_line.as_bytes())?;
    // A CLI host's episode gets a home of its own, holding its
    // configuration, removed after it (issue 25).
    let proxy = Launch::of(options, prepared).proxy(&dir_abs);
    let env = crate::agent::EpisodeEnv::for_agent(&options.agent, &options.agent_env, &proxy)?;
    // No folder of this machine is recorded (issue 25, item 7): the fresh
    // home, the attempt, the host's program and the user's home become
    // placeholders, before the host's parser reads the bytes, as loading
    // reads them again.
    let machine = MachinePaths::of_episode(env.home(), &dir_abs, &command.program);
    let outcome = launch(
        &command,
        prompt,
        &dir_abs.join(CWD_DIR),
        &env.vars,
        options.agent_timeout,
    )?;
    drop(env);
    // A proxy killed with the host (a timeout, a signal) left its last
    // calls in its journal: calls.json is written from it, as the proxy
    // writes it at its end (docs/FORMAT.md, "calls.jsonl").
    crate::mcp::calllog::settle(dir)?;
    // A host killed before it reported leaves no agent.json (an empty one
    // would read as a JSON error on the attempt page); episode.json says
    // how it ended.
    let stdout = machine.bytes(&redactor.bytes(&outcome.stdout));
    if !stdout.is_empty() {
        write_atomic(&dir.join(AGENT_FILE), &stdout)?;
    }
    // A disk that filled during the episode may have cost the proxy its
    // records (an answer it could not save reads as no answer): the
    // attempt is left unfinished, so --resume runs it again.
    check_free_space(dir, min_free_bytes() / 64)?;
    let stderr = machine.bytes(&redactor.bytes(&outcome.stderr));
    if !stderr.is_empty() {
        write_atomic(&dir.join(AGENT_STDERR_FILE), &stderr)?;
    }
    // The host's output parsed by its own parser, from the bytes recorded
    // (issue 25): what loading derives again and compares.
    let host_report = options.agent.host().parse(&HostOutput {
        stdout: &stdout,
        stderr: &stderr,
        exit_code: outcome.exit_code,
        timed_out: outcome.timed_out,
        measured: true,
    });
    let episode = Episode {
        format: RUNS_FORMAT,
        attempt,
        agent: options.agent.name(),
        model_requested: options.agent.model().map(str::to_string),
        model_resolved: host_report.model.clone(),
        wall_s: crate::layout::round_seconds(outcome.wall_s),
        exit_code: outcome.exit_code,
        timed_out: outcome.timed_out,
        agent_timeout_s: Some(options.agent_timeout.as_secs()),
        source: "runner".into(),
        usage: None,
        upstream: prepared.identity.upstream.clone(),
        host_report: Some(host_report),
    };
    // episode.json is written last: its presence marks a finished attempt.
    write_json(&dir.join(EPISODE_FILE), &episode)?;
    Ok(false)
}

/// Writes the condition file: settings, exclusions, and the aggregate
/// over its questions (those recorded earlier and not selected now stay:
/// a run adds to a condition).
///
/// Errors: the condition file cannot be written.
pub fn finish(
    options: &RunOptions,
    prepared: Prepared,
    played: Played,
    started: Instant,
    progress: &mut impl FnMut(&str),
) -> Result<RunOutcome> {
    let Prepared {
        root,
        name,
        identity,
        selected,
        truths,
        excluded,
        recorded,
        server_info,
        preamble,
        agent_version,
        census,
        ..
    } = prepared;
    let Played {
        mut summaries,
        resumed,
        ran,
        blocked,
        model_resolved,
        ..
    } = played;
    let first_truth = truths.values().next();
    let settings = Settings {
        corpus: options.corpus_spec.clone(),
        corpus_commit: options.corpus.source.as_ref().map(|s| s.commit.clone()),
        profile: options.tools.profile().map(Profile::record),
        server_build: server_info
            .as_ref()
            .map(|i| format!("{} {}", i.name, i.version)),
        server_info,
        agent_version,
        model_resolved,
        reference_endpoint: first_truth.map(|t| t.meta.endpoint.clone()),
        preamble_sha256: preamble
            .as_deref()
            .map(crate::mcp::sparql_only::preamble_digest),
        sparql_only_preamble: preamble,
        scoring_version: SCORING_VERSION.into(),
        significant_figures: options.significant_figures,
        numeric_rel_tol: NUMERIC_REL_TOL,
        timeout_s: options.timeout.as_secs(),
        agent_timeout_s: options.agent_timeout.as_secs(),
        max_turns: options.agent.max_turns(),
        prompt_suffix: super::prompt::SUFFIX.into(),
        ground_truth: options
            .ground_truth_flag
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned()),
        census,
    };
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
        shard: options.shard.map(|s| super::shard::ShardRecord {
            index: s.index,
            count: s.count,
            questions: selected.iter().map(|r| r.id.clone()).collect(),
        }),
    };
    for reason in &blocked_reasons {
        progress(&format!("blocked: {reason}"));
    }
    write_json(&root.condition_file(&name), &condition)?;
    let total = selected.len();
    progress(&format!(
        "{name}: {total} question{}, {ran} ran, {resumed} resumed, {:.0} s",
        crate::format::plural(total),
        started.elapsed().as_secs_f64()
    ));
    Ok(RunOutcome {
        condition: name,
        aggregate: condition.aggregate,
        resumed,
        ran,
        blocked,
    })
}

/// The proxy's command line for one attempt of `launch` logging into
/// `log_dir`.
fn proxy_args(launch: &HostLaunch<'_>, log_dir: &Path) -> Vec<String> {
    let mut args = vec![
        "proxy".to_string(),
        "--tools".into(),
        launch.tools.level().as_str().into(),
        "--log-dir".into(),
        log_dir.to_string_lossy().into_owned(),
        "--timeout".into(),
        launch.timeout.as_secs().to_string(),
    ];
    if let Tools::AllTools { profile, withheld } = launch.tools {
        args.push("--profile".into());
        args.push(absolute(&profile.path).to_string_lossy().into_owned());
        for tool in withheld {
            args.push("--without-tool".into());
            args.push(tool.clone());
        }
    }
    if launch.strict {
        args.push("--strict-upstream-errors".into());
    }
    if let Tools::SparqlOnly { control: c } = launch.tools {
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

/// Where a run stands, for its progress lines: episodes done of all,
/// exact so far, time elapsed, and an estimate of the time left.
struct Tally {
    total: usize,
    done: usize,
    exact: usize,
    started: Instant,
    /// Seconds of each episode played now (reused ones say nothing of the
    /// time the next will take).
    durations: Vec<f64>,
}

impl Tally {
    fn new(total: usize) -> Tally {
        Tally {
            total,
            done: 0,
            exact: 0,
            started: Instant::now(),
            durations: Vec::new(),
        }
    }

    fn record(&mut self, exact: bool, seconds: Option<f64>) {
        self.done += 1;
        self.exact += usize::from(exact);
        self.durations.extend(seconds);
    }

    /// `5/36 episodes, 3 exact, 0:42 elapsed, about 2:10 left`. The time
    /// left is the median duration of the episodes played now times the
    /// episodes left (the median, so one slow episode does not swing it);
    /// it is left out until one has been played, and at the end.
    fn line(&self, elapsed: f64) -> String {
        let mut line = format!(
            "{}/{} episodes, {} exact, {} elapsed",
            self.done,
            self.total,
            self.exact,
            clock(elapsed)
        );
        let left = self.total.saturating_sub(self.done);
        if left > 0 && !self.durations.is_empty() {
            let mut sorted = self.durations.clone();
            sorted.sort_by(f64::total_cmp);
            let mid = sorted.len() / 2;
            let median = if sorted.len() % 2 == 0 {
                (sorted[mid - 1] + sorted[mid]) / 2.0
            } else {
                sorted[mid]
            };
            line.push_str(&format!(", about {} left", clock(median * left as f64)));
        }
        line
    }
}

/// Seconds as `M:SS`, or `H:MM:SS` from an hour on (rounded to the second).
fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// The progress line of one attempt: `[ 2/12] ID  attempt 1/3  4.2 s
/// exact (f1 1.00)`. `seconds` is how long it took, `None` when `--resume`
/// reused it.
fn progress_line(
    (index, total): (usize, usize),
    id: &str,
    (attempt, repeat): (u32, u32),
    result: &AttemptResult,
    seconds: Option<f64>,
) -> String {
    let verdict = result.verdict().line();
    // A verdict of an answer that redaction changed says so (issue 24,
    // item 27); the attempt's notes name the values.
    let redacted = result
        .notes
        .iter()
        .any(|n| n.starts_with(super::judge::REDACTED_ANSWER));
    format!(
        "[{index:>width$}/{total}] {id}  attempt {attempt:>repeat_width$}/{repeat}  {}  {verdict}{}{}",
        seconds.map_or_else(|| "-".to_string(), |s| format!("{s:.1} s")),
        if redacted {
            "  [answer judged after redaction]"
        } else {
            ""
        },
        if seconds.is_none() { "  [resumed]" } else { "" },
        // Padded to the totals' widths: the columns stay put from 9 to 10.
        width = total.to_string().len(),
        repeat_width = repeat.to_string().len(),
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
    root.condition_folders()
        .into_iter()
        .filter(|(_, condition)| condition == name)
        .map(|(id, condition)| root.condition_dir(&id, &condition))
        .collect()
}

fn copy_ground_truth(root: &RunsRoot, id: &str, dir: &Path) -> Result<()> {
    let (csv, json) = crate::reference::paths(dir, id);
    let target = root.question_dir(id);
    for (from, name) in [(csv, GROUND_TRUTH_CSV), (json, GROUND_TRUTH_JSON)] {
        let bytes = crate::fsutil::read_file(&from)?;
        let to = target.join(name);
        if !crate::fsutil::same_contents(&to, &bytes) {
            write_atomic(&to, &bytes)?;
        }
    }
    Ok(())
}

/// The file name of `program` when looking that name up on PATH finds
/// this very file: a command line may then name it alone.
fn on_path_name(program: &Path) -> Option<String> {
    let name = program.file_name()?.to_string_lossy().into_owned();
    let real = std::fs::canonicalize(program).ok()?;
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(&name))
        .find(|candidate| candidate.is_file())
        .and_then(|found| std::fs::canonicalize(found).ok())
        .filter(|found| *found == real)
        .map(|_| name)
}

/// `line` with every absolute path written relative to the folder `base`
/// (itself absolute): what `command.txt` records, so a published runs root
/// names no folder of the machine that recorded it, and the line still
/// runs from the attempt folder (`docs/FORMAT.md`, "A runs root").
fn relative_to(line: &str, base: &Path, on_path: &[(String, String)]) -> String {
    map_paths(line, &mut |token| {
        if let Some((_, name)) = on_path.iter().find(|(path, _)| path == token) {
            name.clone()
        } else if token.starts_with('/') {
            relative_path(base, Path::new(token))
        } else {
            token.to_string()
        }
    })
}

/// The path of `to` from the folder `from`, both absolute, lexically;
/// `.` when they are the same ([`crate::fsutil::relative`]).
fn relative_path(from: &Path, to: &Path) -> String {
    let parts = crate::fsutil::relative(from, to);
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::resume::without_paths;

    /// The progress tally: the estimate is the median of the episodes
    /// played now times those left, absent before the first and at the end;
    /// reused episodes count as done but not in the estimate.
    #[test]
    fn the_progress_tally_estimates_from_the_median_episode() {
        let mut t = Tally::new(6);
        t.record(true, None);
        assert_eq!(t.line(0.2), "1/6 episodes, 1 exact, 0:00 elapsed");
        t.record(false, Some(10.0));
        t.record(true, Some(30.0));
        t.record(true, Some(500.0));
        assert_eq!(
            t.line(541.0),
            "4/6 episodes, 3 exact, 9:01 elapsed, about 1:00 left"
        );
        t.record(true, Some(20.0));
        assert_eq!(
            t.line(561.0),
            "5/6 episodes, 4 exact, 9:21 elapsed, about 0:25 left"
        );
        t.record(false, Some(3600.0));
        assert_eq!(t.line(4161.4), "6/6 episodes, 4 exact, 1:09:21 elapsed");
    }

    /// A copied runs root or a moved checkout changes only paths: the
    /// recorded command still matches; another setting does not.
    #[test]
    fn commands_compare_without_their_paths() {
        let old = r#"/home/alice/okn/target/release/okn-benchmark scripted-agent --strategy mixed:12 --attempt 1 --corpus /home/alice/okn/demo/b --mcp-config '{"mcpServers":{"okn":{"command":"/home/alice/okn/target/release/okn-benchmark","args":["proxy","--log-dir","/home/alice/okn/runs-x/q_results/c/attempt-1","--url","http://127.0.0.1:8814/mcp"]}}}' < prompt.txt"#;
        let moved = old.replace("/home/alice/okn/", "/tmp/clone/");
        let names = ["okn-benchmark".to_string()];
        let without_paths = |line: &str| without_paths(line, &names);
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
        // Recorded relative to the attempt folder: the same line, the same
        // comparison, whether the old one was absolute or relative.
        let relative = relative_to(
            old,
            Path::new("/home/alice/okn/runs-x/q_results/c/attempt-1"),
            &[],
        );
        assert_eq!(
            relative,
            r#"../../../../target/release/okn-benchmark scripted-agent --strategy mixed:12 --attempt 1 --corpus ../../../../demo/b --mcp-config '{"mcpServers":{"okn":{"command":"../../../../target/release/okn-benchmark","args":["proxy","--log-dir",".","--url","http://127.0.0.1:8814/mcp"]}}}' < prompt.txt"#
        );
        assert_eq!(without_paths(&relative), without_paths(old));
        assert!(!relative.contains("/home/alice"));
        // Installed on PATH, the program is named alone, and an attempt
        // recorded with its path still matches.
        let installed = relative_to(
            old,
            Path::new("/home/alice/okn/runs-x/q_results/c/attempt-1"),
            &[(
                "/home/alice/okn/target/release/okn-benchmark".to_string(),
                "okn-benchmark".to_string(),
            )],
        );
        assert!(
            installed.starts_with("okn-benchmark scripted-agent"),
            "{installed}"
        );
        assert!(
            installed.contains(r#""command":"okn-benchmark""#),
            "{installed}"
        );
        assert_eq!(without_paths(&installed), without_paths(old));
    }

    #[test]
    fn relative_paths_are_lexical() {
        let p = |a: &str, b: &str| relative_path(Path::new(a), Path::new(b));
        assert_eq!(p("/a/b/c", "/a/b/c"), ".");
        assert_eq!(p("/a/b/c", "/a/x"), "../../x");
        assert_eq!(p("/a/b", "/a/b/c/d"), "c/d");
        assert_eq!(p("/a/./b/../b", "/a/b/é"), "é");
    }
}
