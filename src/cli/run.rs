//! `okn-benchmark run`: one condition over a corpus into a runs root.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::ValueEnum;

use super::CorpusArgs;
use super::agent_args::AgentArgs;
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
/// Before the first episode of a model's host (claude, codex, gemini,
/// openai), the tool census starts the host once with an episode's own
/// command and environment against a local stand-in of its API (no model is
/// called): a tool offered beyond the proxy's, or a marker planted in a
/// user's memory or instructions reaching the request, stops the run (exit
/// 2) naming each and how to block it (--block-tool). The census is
/// recorded in the condition file and a --resume whose census differs is
/// refused (docs/HOSTS.md, "The census").
///
/// One line per attempt shows its verdict and time, then where the run
/// stands: episodes done of all, exact so far, time elapsed and about how
/// long is left (the median episode of this run times those left).
#[derive(Debug, clap::Args)]
#[command(mut_arg("agent", |a| a.default_value(super::agent_args::DEFAULT_HOST)))]
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
    #[command(flatten)]
    agent: AgentArgs,
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
    /// The proxy's read timeout for one forwarded call, seconds (1 to 604800).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT_SECS,
          value_parser = crate::cli::seconds)]
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
    let agent = args.agent.agent_or_default()?;
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
        agent_timeout: Duration::from_secs(args.agent.agent_timeout),
        timeout: Duration::from_secs(args.timeout),
        strict: args.strict_upstream_errors,
        significant_figures: args.precision,
        agent_env: super::agent_args::episode_env(),
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
