//! The command-line interface: the definition of every subcommand's flags
//! (clap derive) and the glue that calls the library. One file per
//! subcommand; no logic here that a library test cannot reach.
//!
//! Exit codes (ARCHITECTURE.md, "Conventions"): 0 success; 1 a check that ran and found a
//! problem; 2 bad usage or unreadable input.

#[cfg(feature = "harness")]
mod agent_args;
mod build;
mod catalog;
mod compare;
mod corpus;
#[cfg(feature = "harness")]
mod kg_server;
mod merge;
#[cfg(feature = "harness")]
mod openai_agent;
mod paper;
#[cfg(feature = "harness")]
mod probe;
#[cfg(feature = "harness")]
mod proxy;
#[cfg(feature = "harness")]
mod reference;
mod report;
#[cfg(feature = "harness")]
mod run;
mod score;
#[cfg(feature = "harness")]
mod scripted_agent;
mod selfcheck;
#[cfg(feature = "harness")]
mod standin;

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::corpus::{Corpus, ExcludePattern, Selection};
use crate::error::{Error, Result};

/// Benchmark MCP servers over SPARQL knowledge graphs: read a corpus of
/// questions with SPARQL answer keys, build ground truth, and score answers
/// by denotation.
#[derive(Debug, Parser)]
#[command(name = "okn-benchmark", version, about, long_about = None)]
#[cfg_attr(
    not(feature = "harness"),
    command(
        after_help = "This okn-benchmark is the publishing half (built without the `harness` \
feature): read runs roots with 'okn-benchmark report ROOT', and publish them with \
'okn-benchmark build' (studies, HTML pages, the site) and 'okn-benchmark paper'. Recording \
episodes and everything that talks to a server (reference, run, probe, proxy, kg-server, \
scripted-agent, openai-agent, standin-model, catalog run, catalog validate --profile) needs a build with the \
default features; hints that name them are for that build. Every subcommand takes --help."
    )
)]
#[cfg_attr(
    feature = "harness",
    command(
        after_help = "Start with 'okn-benchmark corpus list --corpus DIR', then \
'okn-benchmark reference --corpus DIR' and 'okn-benchmark selfcheck --corpus DIR'; check a \
server with 'okn-benchmark probe --profile P', record episodes with 'okn-benchmark run', read \
them with 'okn-benchmark report ROOT', and publish them with 'okn-benchmark build' (studies, HTML \
pages, the site) and 'okn-benchmark paper'. Every subcommand takes --help."
    )
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Regenerate everything published (reports, study figures and numbers, HTML pages, site/), or --check it.
    ///
    /// Reads runs roots (folders whose conditions/ holds a condition file),
    /// studies (folders with a study.toml) and every Markdown file under the
    /// current folder, and nothing else: no model, server or endpoint.
    /// Writes each runs root's README.md and summary CSVs, each study's
    /// figures/ and the generated regions of its prose, a self-contained
    /// HTML page beside every Markdown file, and site/ (when there is a root
    /// or study to show). Only files whose bytes change are written; a
    /// second build writes nothing. Frozen runs roots are read, never
    /// written. A file build would write that a person wrote (no generator
    /// mark) is never replaced, and only files carrying the mark are removed.
    ///
    /// With --check nothing is written: every output is computed and
    /// compared with the disk (line ends normalized), every stale, missing
    /// or orphaned file is listed, and the exit code is 1 if there is any.
    /// Errors in a study.toml or a generated region name the file and line
    /// (exit 2). Reference: docs/PUBLISHING.md.
    Build(build::BuildArgs),
    /// Paper tables from the episodes, and a Markdown manuscript as HTML and RTF.
    #[command(subcommand)]
    Paper(paper::PaperCommand),
    /// Inspect a corpus of .rq records.
    #[command(subcommand)]
    Corpus(corpus::CorpusCommand),
    /// Deterministic tool calls against a server, checked against typed expectations (docs/CATALOG.md).
    #[command(subcommand)]
    Catalog(catalog::CatalogCommand),
    #[cfg(feature = "harness")]
    /// Build ground truth: run every answer key against the endpoint.
    Reference(reference::ReferenceArgs),
    /// Score one answer CSV against one ground-truth CSV (JSON on stdout).
    ///
    /// An answer that cannot be read as CSV (not UTF-8, a quote never
    /// closed, a ragged row) is what an agent submitted: it is scored as a
    /// miss (F1 0, exit 0) with a note naming its line, as `run` judges it.
    /// A ground truth that cannot be read is exit 2, naming the file and
    /// line.
    Score(score::ScoreArgs),
    /// Check the scorer against transformed copies of the cached ground truth.
    Selfcheck(selfcheck::SelfcheckArgs),
    #[cfg(feature = "harness")]
    /// Serve the demo knowledge graph as an MCP server (stdio or streamable HTTP).
    KgServer(kg_server::KgServerArgs),
    #[cfg(feature = "harness")]
    /// The MCP proxy between an agent host and the server under test (stdio).
    Proxy(proxy::ProxyArgs),
    #[cfg(feature = "harness")]
    /// Show what an agent would see through the proxy, without calling a model (with --agent, the host's tool census).
    ///
    /// Connects to the server under test and prints, per tool level, the
    /// tools offered (minus any --without-tool, checked against the server),
    /// the instructions' length and the sparql-only preamble's digest.
    ///
    /// With --agent HOST (and any agent flag 'run' takes) it then takes the
    /// host's tool census, as 'run' does before its first episode: the host
    /// is started once with an episode's own command, proxy (at the --tools
    /// level given) and environment, against a local stand-in of its model
    /// API, and the tools it offered are printed. A tool beyond the proxy's,
    /// or a marker planted in a user's memory or instructions that reached
    /// the model, is exit 2, naming each and how to block it. A scripted
    /// agent calls no model: no census. Reference: docs/HOSTS.md, "probe
    /// --agent".
    Probe(probe::ProbeArgs),
    #[cfg(feature = "harness")]
    Run(Box<run::RunArgs>),
    Merge(merge::MergeArgs),
    Compare(compare::CompareArgs),
    /// Print a runs root's tables and regenerate its README.md and summary CSVs.
    Report(report::ReportArgs),
    /// Re-judge every recorded attempt with today's scoring rules.
    Rescore(report::RescoreArgs),
    /// Close a runs root so that nothing rewrites it.
    Freeze(report::FreezeArgs),
    #[cfg(feature = "harness")]
    /// The built-in agent host with no model (started by run --agent scripted:...).
    #[command(hide = true)]
    ScriptedAgent(scripted_agent::ScriptedAgentArgs),
    #[cfg(feature = "harness")]
    /// The built-in agent host for any OpenAI Chat Completions endpoint (started by run --agent openai:MODEL).
    ///
    /// Prompt on stdin; a JSON report on stdout (docs/HOSTS.md, "openai"). It
    /// stops when submit_csv succeeds, at --max-turns, at a reply with no tool
    /// call, on an API failure or at --timeout-s. Exit 0 when the loop ran,
    /// whatever the answer; 1 on an API failure (the report printed, with its
    /// error); 2 for bad flags, a missing key, no prompt, or a proxy that
    /// cannot be started.
    #[command(hide = true)]
    OpenaiAgent(openai_agent::OpenaiAgentArgs),
    #[cfg(feature = "harness")]
    /// Serve a stand-in model speaking the Anthropic, OpenAI and Gemini APIs (tests the agent hosts with no model).
    StandinModel(standin::StandinArgs),
}

/// `--corpus` and the selection flags shared by every command that reads a
/// corpus: `--tier`, then `--exclude` (repeatable), then `--limit`.
#[derive(Debug, Clone, Args)]
pub(crate) struct CorpusArgs {
    /// The corpus: a folder of .rq files, or git+https://HOST/OWNER/REPO[@REF][#SUBDIR]
    /// (also git+http://, git+ssh://, git+file://), fetched once into a cache.
    #[arg(long, value_name = "DIR|GIT-URL")]
    corpus: String,
    /// For a git corpus: fetch the ref again (a branch is otherwise pinned to the
    /// commit first fetched).
    #[arg(long)]
    refresh: bool,
    /// Keep only records of this tier (what follows the last underscore of a file name).
    #[arg(long, value_name = "TIER")]
    tier: Option<String>,
    /// Leave out records whose id matches this glob (repeatable; applied before --limit;
    /// `*` also matches across `/`). A pattern that matches nothing is an error.
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Keep at most N records, N ≥ 1 (after --tier and --exclude).
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    limit: Option<usize>,
}

impl CorpusArgs {
    /// Opens the corpus (reporting a git corpus's commit on stderr) and
    /// compiles the selection.
    fn open(&self) -> Result<(Corpus, Selection)> {
        let corpus = Corpus::open(&self.corpus, self.refresh)?;
        for path in &corpus.skipped {
            errln!(
                "warning: {}: not a regular file (a named pipe, socket or device): skipped",
                path.display()
            );
        }
        if let Some(source) = &corpus.source {
            errln!(
                "corpus {} at commit {} ({} {})",
                source.spec,
                source.commit,
                if source.reused {
                    "cached in"
                } else {
                    "fetched into"
                },
                source.checkout.display()
            );
        }
        let exclude = self
            .exclude
            .iter()
            .map(|p| ExcludePattern::new(p))
            .collect::<Result<Vec<_>>>()?;
        Ok((
            corpus,
            Selection {
                tier: self.tier.clone(),
                exclude,
                limit: self.limit,
            },
        ))
    }
}

/// `error` (clap's message for missing arguments) with its usage line
/// replaced by the command's own, which names the required arguments and
/// `[OPTIONS]`: clap's lists the optional flags that were given as if they
/// were required too. `args` is the command line, program first.
fn plain_usage(error: &str, args: impl Iterator<Item = String>) -> String {
    use clap::CommandFactory;
    let mut command = Cli::command();
    command.build();
    let mut at = &mut command;
    for arg in args.skip(1) {
        if arg.starts_with('-') {
            continue;
        }
        if at.has_subcommands() && at.find_subcommand(&arg).is_some() {
            at = at.find_subcommand_mut(&arg).expect("found above");
        } else {
            break;
        }
    }
    let usage = at.render_usage().to_string();
    let mut out = String::with_capacity(error.len());
    for line in error.lines() {
        if line.starts_with("Usage: ") {
            out.push_str(usage.trim_end());
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out.trim_end().to_string()
}

/// The commands that record episodes or speak MCP or SPARQL: compiled only
/// with the `harness` feature (Cargo.toml; on by default).
pub const HARNESS_COMMANDS: &[&str] = &[
    "reference",
    "kg-server",
    "proxy",
    "probe",
    "run",
    "scripted-agent",
    "openai-agent",
    "standin-model",
];

/// The harness command `args` (program first) names, if any: the first
/// argument that is not a flag, when it is one of [`HARNESS_COMMANDS`]
/// (also after `help`, as in `okn-benchmark help run`), or `catalog run`
/// (also `catalog help run`).
/// (Called only without the `harness` feature; compiled always so that the
/// default build's tests hold it to the command table.)
#[cfg_attr(feature = "harness", allow(dead_code))]
fn harness_command(args: impl Iterator<Item = String>) -> Option<&'static str> {
    let words: Vec<String> = args
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .take(4)
        .collect();
    let after_help = |w: &[String]| -> Vec<String> {
        match w.first().map(String::as_str) {
            Some("help") => w[1..].to_vec(),
            _ => w.to_vec(),
        }
    };
    let words = after_help(&words);
    let first = words.first()?;
    if first == "catalog" {
        // `catalog run`, `catalog help run`, `help catalog run`.
        let rest = after_help(&words[1..]);
        return (rest.first().map(String::as_str) == Some("run")).then_some("catalog run");
    }
    HARNESS_COMMANDS.iter().copied().find(|c| c == first)
}

/// The error for a command this binary was built without: the `harness`
/// feature (Cargo.toml) was left out. Exit 2, with how to build it in.
#[cfg(not(feature = "harness"))]
pub(crate) fn without_harness(command: &str) -> Error {
    Error::Usage(format!(
        "'{command}' is not in this okn-benchmark: it was built without the `harness` feature \
         (--no-default-features), which holds the MCP, HTTP and SPARQL stacks; build it with the \
         default features (`cargo build --release` or `cargo install --locked --path .`) to use it"
    ))
}

/// The parser of `--precision` (`score`, `run`, `rescore`): the range of
/// [`crate::score::SIGNIFICANT_FIGURES`], the one a recorded condition is
/// held to.
pub(crate) fn precision_parser() -> clap::builder::RangedI64ValueParser<u32> {
    let range = crate::score::SIGNIFICANT_FIGURES;
    clap::value_parser!(u32).range(i64::from(*range.start())..=i64::from(*range.end()))
}

/// The longest any `--timeout`/`--agent-timeout` may be, in seconds: one
/// week (issue 25, item 3). A longer one is a slip of the keyboard (a
/// count of milliseconds, an extra zero), and past it a deadline can
/// overflow the clock and fail later with a wrong reason.
pub(crate) const MAX_SECONDS: u64 = 604_800;

/// The value parser of every flag that is a number of seconds: a whole
/// number from 1 to [`MAX_SECONDS`] (one week).
///
/// Errors: anything else, in words that give the range.
pub(crate) fn seconds(text: &str) -> std::result::Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(s) if (1..=MAX_SECONDS).contains(&s) => Ok(s),
        _ => Err(format!(
            "'{text}' is not a number of seconds from 1 to {MAX_SECONDS} (one week)"
        )),
    }
}

/// The value parser of `--model`: a model id, given as text with no
/// whitespace (issue 25, item 4: an empty `--model ""` was accepted for
/// claude and gemini, which then ran their default model, and failed
/// late for codex).
///
/// Errors: an empty id, or one holding whitespace or a control character.
#[cfg(feature = "harness")]
pub(crate) fn model_id(text: &str) -> std::result::Result<String, String> {
    if text.trim().is_empty() {
        return Err(
            "a model id cannot be empty: name the model, or leave out --model for the host's default"
                .into(),
        );
    }
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{text:?} is not a model id: a model id has no spaces or control characters"
        ));
    }
    Ok(text.to_string())
}

/// The value parser of a flag naming a program or file: a path that is
/// not empty (issue 25, item 4's kind: `--agent-program ""` ran nothing
/// and failed later).
///
/// Errors: an empty or all-whitespace value.
#[cfg(feature = "harness")]
pub(crate) fn non_empty_path(text: &str) -> std::result::Result<std::path::PathBuf, String> {
    if text.trim().is_empty() {
        return Err("the path is empty: give the program's path or its name on PATH".into());
    }
    Ok(std::path::PathBuf::from(text))
}

/// Parses the command line, runs the command, and maps the outcome to an
/// exit code. Errors print as one `error:` line on stderr.
pub fn main() -> ExitCode {
    #[cfg(not(feature = "harness"))]
    if let Some(command) = harness_command(std::env::args()) {
        errln!("error: {}", without_harness(command));
        return ExitCode::from(crate::error::EXIT_BAD_INPUT);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::MissingRequiredArgument => {
            let text = e.render().to_string();
            errln!("{}", plain_usage(&text, std::env::args()));
            return ExitCode::from(crate::error::EXIT_BAD_INPUT);
        }
        // An error quotes what was given (`--effort` of a bidirectional
        // control): written as every error is (`errln!`).
        Err(e) if e.use_stderr() => {
            errln!("{}", e.render().to_string().trim_end());
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
        Err(e) => e.exit(),
    };
    let outcome = match cli.command {
        Command::Build(a) => build::run(a),
        Command::Corpus(c) => corpus::run(c),
        Command::Catalog(c) => catalog::run(c),
        Command::Paper(c) => paper::run(c),
        #[cfg(feature = "harness")]
        Command::Reference(a) => reference::run(a),
        Command::Score(a) => score::run(a),
        Command::Selfcheck(a) => selfcheck::run(a),
        #[cfg(feature = "harness")]
        Command::KgServer(a) => kg_server::run(a),
        #[cfg(feature = "harness")]
        Command::Proxy(a) => proxy::run(a),
        #[cfg(feature = "harness")]
        Command::Probe(a) => probe::run(a),
        #[cfg(feature = "harness")]
        Command::Run(a) => run::run_command(*a),
        Command::Merge(a) => merge::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Report(a) => report::report(a),
        Command::Rescore(a) => report::rescore(a),
        Command::Freeze(a) => report::freeze(a),
        #[cfg(feature = "harness")]
        Command::ScriptedAgent(a) => scripted_agent::run(a),
        #[cfg(feature = "harness")]
        Command::OpenaiAgent(a) => openai_agent::run(a),
        #[cfg(feature = "harness")]
        Command::StandinModel(a) => standin::run(a),
    };
    match outcome {
        Ok(code) => code,
        Err(e @ Error::Interrupted(_)) => {
            let _ = std::io::stdout().flush();
            errln!("{e}");
            ExitCode::from(crate::interrupt::EXIT_INTERRUPTED)
        }
        Err(e) => {
            let _ = std::io::stdout().flush();
            errln!("error: {e}");
            ExitCode::from(crate::error::EXIT_BAD_INPUT)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> impl Iterator<Item = String> {
        line.split(' ')
            .map(str::to_string)
            .collect::<Vec<_>>()
            .into_iter()
    }

    /// Every name in HARNESS_COMMANDS is a subcommand of the default build
    /// (a renamed command would otherwise slip past the publishing half's
    /// refusal), and build, paper and report are not in it.
    #[test]
    fn harness_commands_are_subcommands_and_publishing_is_not() {
        use clap::CommandFactory;
        let command = Cli::command();
        for name in HARNESS_COMMANDS {
            assert!(
                command.find_subcommand(name).is_some(),
                "{name} is not a subcommand"
            );
        }
        for name in ["build", "paper", "report", "score", "rescore", "freeze"] {
            assert!(!HARNESS_COMMANDS.contains(&name), "{name}");
        }
        assert_eq!(
            harness_command(args("okn-benchmark run --corpus x")),
            Some("run")
        );
        assert_eq!(
            harness_command(args("okn-benchmark --verbose probe")),
            Some("probe")
        );
        assert_eq!(harness_command(args("okn-benchmark help run")), Some("run"));
        assert_eq!(
            harness_command(args("okn-benchmark catalog run --help")),
            Some("catalog run")
        );
        assert_eq!(
            harness_command(args("okn-benchmark catalog help run")),
            Some("catalog run")
        );
        assert_eq!(
            harness_command(args("okn-benchmark help catalog run")),
            Some("catalog run")
        );
        assert_eq!(harness_command(args("okn-benchmark catalog help")), None);
        assert_eq!(
            harness_command(args("okn-benchmark catalog validate c.json")),
            None
        );
        assert_eq!(harness_command(args("okn-benchmark help build")), None);
        assert_eq!(harness_command(args("okn-benchmark build --check")), None);
        assert_eq!(harness_command(args("okn-benchmark")), None);
    }
}
