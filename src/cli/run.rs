//! `okn-benchmark run`: one condition over a corpus into a runs root.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::ValueEnum;

use super::CorpusArgs;
use crate::agent::host::Host;
use crate::agent::strategy::Strategy;
use crate::agent::{Agent, CliSettings};
use crate::error::{Error, Result};
use crate::mcp::profile::Profile;
use crate::mcp::proxy::DEFAULT_TIMEOUT_SECS;
use crate::runs::identity::KgHint;
use crate::runs::run::{ControlEndpoint, RunOptions, Tools, run};

/// Run one condition (a tool level crossed with a KG-hint mode) over a
/// corpus, one episode at a time, into a runs root.
///
/// Each question is asked --repeat times; each attempt is recorded under
/// OUT/ID_results/CONDITION/attempt-N/ and scored by denotation against the
/// ground truth ('reference' must have built it). The condition's folder
/// name comes from the flags; if OUT already holds that condition with
/// different settings, run stops and names the first difference. A run
/// killed part-way is picked up with --resume.
///
/// One line per attempt shows its verdict and time, then where the run
/// stands: episodes done of all, exact so far, time elapsed and about how
/// long is left (the median episode of this run times those left).
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    corpus: CorpusArgs,
    /// The runs root (one per corpus and tier).
    #[arg(long, value_name = "ROOT")]
    out: PathBuf,
    /// Tool level: the server's tools, or the server-independent SPARQL control.
    #[arg(long, value_enum)]
    tools: Level,
    /// Name the target knowledge graph(s) in the prompt (tags) or not (none).
    #[arg(long, value_enum)]
    kg_hint: Hint,
    /// The server under test (required for all-tools, ignored for sparql-only).
    #[arg(long, value_name = "PROFILE.toml")]
    profile: Option<PathBuf>,
    /// Withhold a tool of the server (repeatable; checked against the server first).
    #[arg(long, value_name = "NAME")]
    without_tool: Vec<String>,
    /// The agent host: claude (claude -p), codex (codex exec), gemini (the Gemini CLI),
    /// openai:MODEL (the built-in loop over any OpenAI-compatible Chat Completions API, with
    /// --base-url) or scripted:STRATEGY (a built-in agent with no model: oracle,
    /// rename-columns, reorder-columns, local-names, decimals-4, drop-row, swap-columns, empty,
    /// no-answer, hang, mixed:SEED, skill:PERCENT:SEED). README.md, "Agent hosts".
    #[arg(long, value_name = "HOST", default_value = "claude")]
    agent: String,
    /// The CLI host's program [default: the host's name on PATH: claude, codex, gemini];
    /// refused for openai and scripted, which are this program.
    #[arg(long, value_name = "PATH", alias = "claude")]
    agent_program: Option<PathBuf>,
    /// Model id for the host (an exact id is reproducible; an alias moves over time). For
    /// openai:MODEL the model is the MODEL there; --model beside it must name the same.
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// openai only, and required for it: the API root, e.g. http://127.0.0.1:8000/v1 (vLLM),
    /// http://127.0.0.1:11434/v1 (Ollama) or https://api.openai.com/v1; requests go to
    /// URL/chat/completions. No user, password or query in it (give the key with
    /// --api-key-env). Part of the condition's identity.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// openai only: the environment variable holding the API key, sent as a bearer token.
    /// Its name is recorded (command.txt), the key never; run stops first when it is unset.
    /// Without it no key is sent (a local server that needs none).
    #[arg(long, value_name = "NAME")]
    api_key_env: Option<String>,
    /// openai only: US dollars per million prompt tokens; with --price-output-per-mtok the
    /// host report states a cost (never otherwise: the API states none).
    #[arg(long, value_name = "USD", requires = "price_output_per_mtok",
          value_parser = crate::cli::openai_agent::price)]
    price_input_per_mtok: Option<f64>,
    /// openai only: US dollars per million completion tokens (reasoning tokens included).
    #[arg(long, value_name = "USD", requires = "price_input_per_mtok",
          value_parser = crate::cli::openai_agent::price)]
    price_output_per_mtok: Option<f64>,
    /// openai only: US dollars per million prompt tokens read from the provider's cache
    /// [default: the input price].
    #[arg(long, value_name = "USD", requires = "price_input_per_mtok",
          value_parser = crate::cli::openai_agent::price)]
    price_cached_input_per_mtok: Option<f64>,
    /// Effort for claude and codex (codex: low to xhigh; refused for gemini and openai)
    /// [default: the host's own]. Part of the condition's identity.
    #[arg(long, value_enum, value_name = "LEVEL")]
    effort: Option<crate::runs::identity::Effort>,
    /// Attempts per question (1 to 10000).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::runs::identity::MAX_REPEAT)))]
    repeat: u32,
    /// Keep this run beside an existing condition of the same name.
    #[arg(long, value_name = "NAME")]
    label: Option<String>,
    /// Replace the existing condition (its attempts are deleted first).
    #[arg(long)]
    force: bool,
    /// Reuse finished attempts whose command.txt and prompt.txt match byte for byte and
    /// whose server is the one the profile resolves to; one that differs is never
    /// deleted: run stops first, naming it (--force replaces the condition).
    #[arg(long)]
    resume: bool,
    /// Kill an episode after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..))]
    agent_timeout: u64,
    /// The most model turns an episode may take (claude --max-turns, gemini's
    /// model.maxSessionTurns, the openai loop's API requests [default: 50]; codex has no limit
    /// and is refused it).
    #[arg(long, value_name = "N")]
    max_turns: Option<u32>,
    /// A built-in tool of the host to block by name (repeatable), beside those okn-benchmark
    /// blocks itself: what the tool census (docs/HOSTS.md, "The census") tells you to add
    /// when a new CLI version offers a tool beyond the proxy's. claude: added to
    /// --disallowed-tools; gemini: added to the settings' tools.exclude; codex and the
    /// openai loop are refused it (codex has no setting that removes one tool by name; the
    /// loop offers only the proxy's tools).
    #[arg(long, value_name = "NAME")]
    block_tool: Vec<String>,
    /// The proxy's read timeout for one forwarded call, seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Relabel failures hidden in successful replies as errors.
    #[arg(long)]
    strict_upstream_errors: bool,
    /// Significant figures non-integral numbers are rounded to before comparison (1 to 30),
    /// as 'score --precision'; recorded in the condition (settings.significant_figures).
    #[arg(long, value_name = "N", default_value_t = crate::score::DEFAULT_SIGNIFICANT_FIGURES,
          value_parser = crate::cli::precision_parser())]
    precision: u32,
    /// Where the corpus's ground truth is [default: CORPUS/ground-truth].
    #[arg(long, value_name = "DIR")]
    ground_truth: Option<PathBuf>,
    /// The SPARQL endpoint ground truth must come from: run refuses ground truth that
    /// 'reference' would call stale against it (an edited answer key, other RDF data,
    /// another endpoint) [default: `endpoint` under [reference] in the nearest
    /// okn-benchmark.toml; without one, the endpoint each ground truth records].
    #[arg(long, value_name = "URL|PATH")]
    reference_endpoint: Option<String>,
    /// The sparql-only control's SPARQL URL or RDF data (all-tools records only its
    /// preamble digest) [default: okn-benchmark.toml].
    #[arg(long, value_name = "URL|PATH")]
    endpoint: Option<String>,
    /// The sparql-only control's shortname → graph IRI template.
    #[arg(long, value_name = "TEMPLATE")]
    graph_template: Option<String>,
    /// A valid graph shortname of the sparql-only control (repeatable).
    #[arg(long, value_name = "NAME")]
    shortname: Vec<String>,
    /// Play only the K-th of N disjoint slices of the (question, attempt) pairs, one at a
    /// time, into this root; run the N shards at once (a CI matrix, a Slurm array, a
    /// Kubernetes indexed Job) and join their roots with 'okn-benchmark merge'. Pair p =
    /// question position × repeat + attempt − 1 goes to shard p mod N + 1, the same slice on
    /// every machine while the corpus does not change. The condition records shards: N, and
    /// reports say its timings were taken with N episodes in parallel (docs/SCALING.md).
    #[arg(long, value_name = "K/N")]
    shard: Option<crate::runs::shard::ShardArg>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Level {
    AllTools,
    SparqlOnly,
}

/// `--kg-hint` (its help lists the values without a sentence each).
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Hint {
    None,
    Tags,
}

/// The agent host `--agent` names, with the flags that go with it: they
/// mean the same on every host, and one a host cannot honour is refused
/// for it by name (issue 25, "The interface").
///
/// Errors: an unknown host or strategy; `--model`, `--effort`,
/// `--max-turns` or `--agent-program` for a scripted agent (it has no
/// model); `--effort` for gemini, or `max` for codex; `--max-turns` for
/// codex; the openai flags for another host, and those of
/// [`openai_agent`].
fn agent(args: &RunArgs) -> Result<Agent> {
    let refuse = |flag: &str, host: &str, why: &str| {
        Err(Error::Usage(format!(
            "{flag} cannot be honoured by --agent {host}: {why}"
        )))
    };
    let host = Host::of_agent(&args.agent);
    if host != Some(Host::Openai) {
        refuse_openai_flags(args)?;
    }
    let settings = |name: &str| CliSettings {
        program: args
            .agent_program
            .clone()
            .unwrap_or_else(|| PathBuf::from(name)),
        model: args.model.clone(),
        effort: args.effort.map(|e| e.as_str().to_string()),
        max_turns: args.max_turns,
        block_tools: block_tools(&args.block_tool),
    };
    if !args.block_tool.is_empty() {
        let why = match host {
            Some(Host::Codex) => Some("codex has no setting that removes one tool by name"),
            Some(Host::Openai) => Some("the openai loop offers only the proxy's tools"),
            Some(Host::Scripted) => Some("a scripted agent calls no model"),
            Some(Host::Claude | Host::Gemini) | None => None,
        };
        if let Some(why) = why {
            return refuse("--block-tool", &args.agent, why);
        }
        if let Some(bad) = args.block_tool.iter().find(|t| !is_tool_name(t)) {
            return Err(Error::Usage(format!(
                "--block-tool {bad:?}: a tool name is letters, digits, '_', '-' and '.' \
                 (the name the tool census printed)"
            )));
        }
    }
    match host {
        Some(Host::Claude) => Ok(Agent::Claude(settings("claude"))),
        Some(Host::Codex) => {
            if let Some(effort) = args.effort
                && !crate::agent::codex::EFFORTS.contains(&effort.as_str())
            {
                return refuse(
                    &format!("--effort {}", effort.as_str()),
                    "codex",
                    "its model_reasoning_effort takes low, medium, high or xhigh",
                );
            }
            if args.max_turns.is_some() {
                return refuse("--max-turns", "codex", "codex exec has no turn limit");
            }
            Ok(Agent::Codex(settings("codex")))
        }
        Some(Host::Gemini) => {
            if args.effort.is_some() {
                return refuse("--effort", "gemini", "the Gemini CLI has no effort setting");
            }
            Ok(Agent::Gemini(settings("gemini")))
        }
        Some(Host::Openai) => openai_agent(args),
        Some(Host::Scripted) => {
            let strategy = args.agent["scripted:".len()..]
                .parse::<Strategy>()
                .map_err(Error::Usage)?;
            if args.model.is_some() || args.effort.is_some() {
                return Err(Error::Usage(
                    "--model and --effort are for a model's host (claude, codex, gemini); a \
                     scripted agent has no model"
                        .into(),
                ));
            }
            if args.max_turns.is_some() {
                return Err(Error::Usage(
                    "--max-turns is for a model's host (claude, codex, gemini); a scripted agent \
                     plays its strategy to the end"
                        .into(),
                ));
            }
            if args.agent_program.is_some() {
                return Err(Error::Usage(
                    "--agent-program (--claude) is for a CLI host; a scripted agent is this program"
                        .into(),
                ));
            }
            Ok(Agent::Scripted(strategy))
        }
        // (`scripted:ANYTHING` is the scripted host, its strategy parsed above.)
        None => Err(Error::Usage(format!(
            "--agent {}: expected claude, codex, gemini, openai:MODEL or scripted:STRATEGY",
            args.agent
        ))),
    }
}

/// `--block-tool` names, sorted and each once (so the command line, which
/// a resume compares, does not depend on their order).
fn block_tools(names: &[String]) -> Vec<String> {
    let mut names = names.to_vec();
    names.sort();
    names.dedup();
    names
}

/// Whether `name` can be a tool's name on a host's command line or in
/// its settings: letters, digits, `_`, `-`, `.` (no `,` or space, which
/// would split claude's list).
fn is_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The flags only the openai host takes, refused for any other by name.
///
/// Errors: the first of `--base-url`, `--api-key-env` and the price
/// flags given.
fn refuse_openai_flags(args: &RunArgs) -> Result<()> {
    let given = [
        ("--base-url", args.base_url.is_some()),
        ("--api-key-env", args.api_key_env.is_some()),
        (
            "--price-input-per-mtok",
            args.price_input_per_mtok.is_some(),
        ),
        (
            "--price-output-per-mtok",
            args.price_output_per_mtok.is_some(),
        ),
        (
            "--price-cached-input-per-mtok",
            args.price_cached_input_per_mtok.is_some(),
        ),
    ];
    match given.iter().find(|(_, set)| *set) {
        Some((flag, _)) => Err(Error::Usage(format!(
            "{flag} cannot be honoured by --agent {}: it is for --agent openai:MODEL (the \
             built-in loop over an OpenAI-compatible API)",
            args.agent
        ))),
        None => Ok(()),
    }
}

/// `--agent openai:MODEL` with its flags (README.md, "Agent hosts";
/// `docs/HOSTS.md`, "openai").
///
/// Errors: no model after `openai:`; `--model` naming another model;
/// `--effort` or `--agent-program` (the loop has no effort setting and is
/// this program); no `--base-url`, or one that is not an http(s) API root
/// without credentials ([`crate::agent::openai::check_base_url`]); an
/// `--api-key-env` that is not a variable name.
fn openai_agent(args: &RunArgs) -> Result<Agent> {
    let refuse = |flag: &str, why: &str| {
        Err(Error::Usage(format!(
            "{flag} cannot be honoured by --agent {}: {why}",
            args.agent
        )))
    };
    let model = args.agent["openai:".len()..].trim();
    if model.is_empty() {
        return Err(Error::Usage(
            "--agent openai:MODEL: name the model after 'openai:' (e.g. openai:gpt-5-mini)".into(),
        ));
    }
    if let Some(other) = args.model.as_deref().filter(|m| *m != model) {
        return refuse(
            &format!("--model {other}"),
            "the model is the one after 'openai:'; leave out --model or give the same one",
        );
    }
    if args.effort.is_some() {
        return refuse("--effort", "the openai loop sends no reasoning effort");
    }
    if args.agent_program.is_some() {
        return refuse(
            "--agent-program",
            "the openai loop is this program (okn-benchmark openai-agent)",
        );
    }
    let base_url = args.base_url.as_deref().ok_or_else(|| {
        Error::Usage(format!(
            "--agent {} needs --base-url URL: the API root of the OpenAI-compatible server \
             (e.g. http://127.0.0.1:8000/v1, or https://api.openai.com/v1); there is no \
             default provider",
            args.agent
        ))
    })?;
    let base_url = crate::agent::openai::check_base_url(base_url).map_err(Error::Usage)?;
    if let Some(name) = &args.api_key_env
        && (name.is_empty()
            || name.starts_with(|c: char| c.is_ascii_digit())
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        // Not quoted: it may be the key itself, given by mistake.
        return Err(Error::Usage(
            "--api-key-env takes an environment variable's name (letters, digits and '_', not \
             starting with a digit): give the name of the variable holding the key, not the key"
                .into(),
        ));
    }
    if args.max_turns == Some(0) {
        return refuse("--max-turns 0", "the loop makes at least one API request");
    }
    Ok(Agent::Openai(crate::agent::openai::OpenaiSettings {
        model: model.to_string(),
        base_url,
        api_key_env: args.api_key_env.clone(),
        max_turns: args.max_turns,
        prices: args
            .price_input_per_mtok
            .map(|input| crate::agent::openai_loop::Prices {
                input,
                output: args.price_output_per_mtok.unwrap_or_default(),
                cached_input: args.price_cached_input_per_mtok,
            }),
    }))
}

/// The tools `--tools` names, with what each needs.
///
/// Errors: all-tools without `--profile`, or a profile that does not
/// load; `--without-tool` for sparql-only; sparql-only without an endpoint.
fn tools(args: &RunArgs) -> Result<Tools> {
    match args.tools {
        Level::AllTools => Ok(Tools::AllTools {
            profile: Profile::load(args.profile.as_ref().ok_or_else(|| {
                Error::Usage(
                    "--tools all-tools needs --profile PROFILE.toml (the server under test)".into(),
                )
            })?)?,
            withheld: args.without_tool.clone(),
        }),
        Level::SparqlOnly => {
            if !args.without_tool.is_empty() {
                return Err(Error::Usage(
                    "--without-tool applies to all-tools only: sparql-only has no server tools"
                        .into(),
                ));
            }
            let (spec, template, shortnames) = crate::config::sparql_only_settings(
                args.endpoint.as_deref(),
                args.graph_template.as_deref(),
                &args.shortname,
            )?;
            Ok(Tools::SparqlOnly {
                control: ControlEndpoint {
                    spec,
                    template,
                    shortnames,
                },
            })
        }
    }
}

pub(crate) fn run_command(args: RunArgs) -> Result<ExitCode> {
    if let Some(label) = &args.label
        && !crate::runs::identity::valid_label(label)
    {
        return Err(Error::Usage(format!(
            "--label '{label}': use letters, digits, '-', '_' and '.' (it names a folder)"
        )));
    }
    let agent = agent(&args)?;
    let tools = tools(&args)?;
    // The control's preamble digest is recorded with every condition: for
    // all-tools, from the control as configured, when it is.
    let preamble_control = match &tools {
        Tools::SparqlOnly { .. } => None,
        Tools::AllTools { .. } => crate::config::sparql_only_settings(
            args.endpoint.as_deref(),
            args.graph_template.as_deref(),
            &args.shortname,
        )
        .ok()
        .map(|(spec, template, shortnames)| ControlEndpoint {
            spec,
            template,
            shortnames,
        }),
    };
    let (corpus, selection) = args.corpus.open()?;
    let ground_truth_dir =
        crate::reference::ground_truth_dir(&corpus, args.ground_truth.as_deref());
    let reference_endpoint = match args.reference_endpoint.as_deref() {
        Some(value) => Some(crate::sparql::EndpointSpec::resolve(
            value,
            std::path::Path::new(""),
        )?),
        None => crate::config::configured_endpoint()?,
    };
    let options = RunOptions {
        corpus_spec: corpus_spec(&args.corpus.corpus),
        corpus,
        selection,
        ground_truth_dir,
        ground_truth_flag: args.ground_truth.clone(),
        reference_endpoint,
        reference_endpoint_flag: args.reference_endpoint.clone(),
        out: args.out,
        tools,
        preamble_control,
        kg_hint: match args.kg_hint {
            Hint::None => KgHint::None,
            Hint::Tags => KgHint::Tags,
        },
        agent,
        repeat: args.repeat,
        label: args.label,
        force: args.force,
        resume: args.resume,
        agent_timeout: Duration::from_secs(args.agent_timeout),
        timeout: Duration::from_secs(args.timeout),
        strict: args.strict_upstream_errors,
        significant_figures: args.precision,
        agent_env: Vec::new(),
        shard: args.shard.and_then(|s| s.0),
    };
    let out = options.out.clone();
    crate::interrupt::install();
    let outcome = match run(&options, |line| outln!("{line}")) {
        Err(Error::Interrupted(kept)) => {
            return Err(Error::Interrupted(format!(
                "{kept}. Resume with:\n  {}",
                resume_command(std::env::args())
            )));
        }
        other => other?,
    };
    // The root's README and summary CSVs, as build writes them.
    crate::render::build::write_root_files(&crate::report::load::root(&out))?;
    let a = &outcome.aggregate;
    // The rates average the measured questions: say how many those are
    // when some measured nothing.
    let over = if a.measured_questions == a.questions {
        format!(
            "{} question{}",
            a.questions,
            crate::format::plural(a.questions as usize)
        )
    } else {
        format!(
            "{} measured question{} of {}",
            a.measured_questions,
            crate::format::plural(a.measured_questions as usize),
            a.questions
        )
    };
    outln!(
        "exact {} · mean F1 {} over {over}{}",
        crate::format::rate(a.exact_rate),
        crate::format::rate(a.mean_f1),
        if a.blocked_attempts > 0 {
            format!(
                " ({} blocked attempt{} left out)",
                a.blocked_attempts,
                crate::format::plural(a.blocked_attempts as usize)
            )
        } else {
            String::new()
        }
    );
    // A run that measured nothing is not a result: every attempt never
    // reached the tools. Recorded, and said with exit 1.
    let played = outcome.ran + outcome.resumed;
    if played > 0 && outcome.blocked == played {
        errln!(
            "run: every attempt of {} was blocked (the reasons are above): nothing was \
             measured; fix what blocked them and run again with --force",
            outcome.condition
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The command line that resumes an interrupted run: the same arguments,
/// shell-quoted, without `--force` (which would discard what was kept) and
/// with `--resume`.
fn resume_command(args: impl Iterator<Item = String>) -> String {
    let mut words: Vec<String> = args.filter(|a| a != "--force").collect();
    if !words.iter().any(|a| a == "--resume") {
        words.push("--resume".into());
    }
    words
        .iter()
        .map(|w| crate::agent::shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The corpus as recorded in a condition's settings: a local path without
/// a leading `./` or trailing `/`, so `./demo/x/` and `demo/x` are the same
/// corpus to `--resume`; a git URL as given.
fn corpus_spec(given: &str) -> String {
    if given.contains("://") || given.starts_with("git@") {
        return given.to_string();
    }
    let mut spec = given;
    while let Some(rest) = spec.strip_prefix("./") {
        spec = rest;
    }
    let spec = spec.trim_end_matches('/');
    if spec.is_empty() {
        ".".to_string()
    } else {
        spec.to_string()
    }
}

#[cfg(test)]
mod corpus_spec_tests {
    use super::corpus_spec;

    #[test]
    fn the_resume_command_drops_force_and_adds_resume_once() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            super::resume_command(
                args(&["okn-benchmark", "run", "c d", "--force", "--out", "r"]).into_iter()
            ),
            "okn-benchmark run 'c d' --out r --resume"
        );
        assert_eq!(
            super::resume_command(args(&["x", "run", "--resume"]).into_iter()),
            "x run --resume"
        );
    }

    #[test]
    fn local_corpus_paths_are_recorded_one_way() {
        assert_eq!(corpus_spec("./demo/benchmarks-x/"), "demo/benchmarks-x");
        assert_eq!(corpus_spec("demo/benchmarks-x"), "demo/benchmarks-x");
        assert_eq!(corpus_spec("/abs/c/"), "/abs/c");
        assert_eq!(corpus_spec("./"), ".");
        assert_eq!(corpus_spec("https://h/x.git"), "https://h/x.git");
    }
}
