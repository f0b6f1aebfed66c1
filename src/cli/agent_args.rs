//! The agent flags `run` and `probe --agent` share (issue 25, "The
//! interface" and "Isolation verified, not assumed"): one clap struct
//! flattened into both, so both take the same flags and refuse the same
//! combinations with the same words.

use std::path::{Path, PathBuf};

use crate::agent::host::Host;
use crate::agent::strategy::Strategy;
use crate::agent::{Agent, CliSettings};
use crate::error::{Error, Result};

/// The agent host and the flags that go with it. `--agent` has no default
/// here: `run` gives it [`DEFAULT_HOST`] (`RunArgs`), and `probe` takes a
/// census only when it is given.
#[derive(Debug, clap::Args)]
pub(crate) struct AgentArgs {
    /// The agent host: claude (claude -p), codex (codex exec), gemini (the Gemini CLI),
    /// openai:MODEL (the built-in loop over any OpenAI-compatible Chat Completions API, with
    /// --base-url) or scripted:STRATEGY (a built-in agent with no model: oracle,
    /// rename-columns, reorder-columns, local-names, decimals-4, drop-row, swap-columns, empty,
    /// no-answer, hang, mixed:SEED, skill:PERCENT:SEED). README.md, "Agent hosts".
    #[arg(long, value_name = "HOST")]
    pub(crate) agent: Option<String>,
    /// The CLI host's program [default: the host's name on PATH: claude, codex, gemini];
    /// refused for openai and scripted, which are this program.
    #[arg(long, value_name = "PATH", alias = "claude", value_parser = crate::cli::non_empty_path)]
    pub(crate) agent_program: Option<PathBuf>,
    /// Model id for the host (an exact id is reproducible; an alias moves over time). For
    /// openai:MODEL the model is the MODEL there; --model beside it must name the same. Never
    /// empty, no spaces.
    #[arg(long, value_name = "MODEL", value_parser = crate::cli::model_id)]
    pub(crate) model: Option<String>,
    /// openai only, and required for it: the API root, e.g. http://127.0.0.1:8000/v1 (vLLM),
    /// http://127.0.0.1:11434/v1 (Ollama) or https://api.openai.com/v1; requests go to
    /// URL/chat/completions. No user, password or query in it (give the key with
    /// --api-key-env). Part of the condition's identity.
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// openai only: the environment variable holding the API key, sent as a bearer token.
    /// Its name is recorded (command.txt), the key never; run stops first when it is unset.
    /// Without it no key is sent (a local server that needs none).
    #[arg(long, value_name = "NAME")]
    pub(crate) api_key_env: Option<String>,
    /// openai only: US dollars per million prompt tokens; with --price-output-per-mtok the
    /// host report states a cost (never otherwise: the API states none).
    #[arg(long, value_name = "USD", requires = "price_output_per_mtok",
          value_parser = crate::cli::openai_agent::price)]
    pub(crate) price_input_per_mtok: Option<f64>,
    /// openai only: US dollars per million completion tokens (reasoning tokens included).
    #[arg(long, value_name = "USD", requires = "price_input_per_mtok",
          value_parser = crate::cli::openai_agent::price)]
    pub(crate) price_output_per_mtok: Option<f64>,
    /// openai only: US dollars per million prompt tokens read from the provider's cache
    /// [default: the input price].
    #[arg(long, value_name = "USD", requires = "price_input_per_mtok",
          value_parser = crate::cli::openai_agent::price)]
    pub(crate) price_cached_input_per_mtok: Option<f64>,
    /// Effort for claude and codex (codex: low to xhigh; refused for gemini and openai)
    /// [default: the host's own]. Part of the condition's identity.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub(crate) effort: Option<crate::runs::identity::Effort>,
    /// Kill an episode after this many seconds: 1 to 604800 (one week).
    #[arg(long, value_name = "SECONDS", default_value_t = 900, value_parser = crate::cli::seconds)]
    pub(crate) agent_timeout: u64,
    /// The most model turns an episode may take (claude --max-turns, gemini's
    /// model.maxSessionTurns, the openai loop's API requests [default: 50]; codex has no limit
    /// and is refused it). At least 1, for every host.
    #[arg(long, value_name = "N", value_parser = max_turns)]
    pub(crate) max_turns: Option<u32>,
    /// A built-in tool of the host to block by name (repeatable), beside those okn-benchmark
    /// blocks itself: what the tool census (docs/HOSTS.md, "The census") tells you to add
    /// when a new CLI version offers a tool beyond the proxy's. claude: added to
    /// --disallowed-tools; gemini: added to the settings' tools.exclude; codex and the
    /// openai loop are refused it (codex has no setting that removes one tool by name; the
    /// loop offers only the proxy's tools).
    #[arg(long, value_name = "NAME")]
    pub(crate) block_tool: Vec<String>,
}

/// The value parser of `--max-turns`: a whole number ≥ 1, for every host
/// (issue 25, item 2: `--max-turns 0` was recorded for claude, whose
/// episode took turns all the same, and failed late for gemini).
///
/// Errors: 0, or not a whole number that fits in 32 bits.
fn max_turns(text: &str) -> std::result::Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "'{text}' is not a number of turns: an episode takes at least 1 model turn \
             (give a whole number from 1 to {})",
            u32::MAX
        )),
    }
}

/// `run`'s host when `--agent` is not given (its `--help` shows it).
pub(crate) const DEFAULT_HOST: &str = "claude";

impl AgentArgs {
    /// The agent host `--agent` names with its flags ([`agent`]); `None`
    /// when `--agent` is not given (`probe` without it).
    ///
    /// Errors: those of [`agent`].
    pub(crate) fn agent(&self) -> Result<Option<Agent>> {
        match self.agent.as_deref() {
            Some(given) => agent(self, given).map(Some),
            None => Ok(None),
        }
    }

    /// [`AgentArgs::agent`], [`DEFAULT_HOST`] when `--agent` is not given
    /// (`run`).
    ///
    /// Errors: those of [`agent`].
    pub(crate) fn agent_or_default(&self) -> Result<Agent> {
        agent(self, self.agent.as_deref().unwrap_or(DEFAULT_HOST))
    }

    /// The first agent flag given, by name, when `--agent` is not (`probe`
    /// refuses it: it would be ignored). `--agent-timeout` always has a
    /// value and is not named.
    pub(crate) fn first_given(&self) -> Option<&'static str> {
        [
            ("--agent-program", self.agent_program.is_some()),
            ("--model", self.model.is_some()),
            ("--base-url", self.base_url.is_some()),
            ("--api-key-env", self.api_key_env.is_some()),
            (
                "--price-input-per-mtok",
                self.price_input_per_mtok.is_some(),
            ),
            (
                "--price-output-per-mtok",
                self.price_output_per_mtok.is_some(),
            ),
            (
                "--price-cached-input-per-mtok",
                self.price_cached_input_per_mtok.is_some(),
            ),
            ("--effort", self.effort.is_some()),
            ("--max-turns", self.max_turns.is_some()),
            ("--block-tool", !self.block_tool.is_empty()),
        ]
        .into_iter()
        .find_map(|(flag, given)| given.then_some(flag))
    }
}

/// What `run` and `probe --agent` add to every episode's environment
/// (`RunOptions::agent_env`): nothing; the host inherits this process's
/// environment (a test adds its stand-in's URL there).
pub(crate) fn episode_env() -> Vec<(String, String)> {
    Vec::new()
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
fn agent(args: &AgentArgs, given: &str) -> Result<Agent> {
    let refuse = |flag: &str, host: &str, why: &str| {
        Err(Error::Usage(format!(
            "{flag} cannot be honoured by --agent {host}: {why}{}",
            run_without(&[flag.split(' ').next().unwrap_or(flag)])
        )))
    };
    let host = Host::of_agent(given);
    if host != Some(Host::Openai) {
        refuse_openai_flags(args, given)?;
    }
    let settings = |name: &str| CliSettings {
        program: args
            .agent_program
            .as_deref()
            .map(program_path)
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
            return refuse("--block-tool", given, why);
        }
        if let Some(bad) = args.block_tool.iter().find(|t| !is_tool_name(t)) {
            return Err(Error::Usage(format!(
                "--block-tool {bad:?}: a tool name is letters, digits, '_', '-' and '.' \
                 (the name the tool census printed)"
            )));
        }
        // The proxy's own tools are withheld at the proxy, where the
        // condition's name and identity say so; blocked in the host they
        // would leave an "all tools" condition without them (a red team's
        // finding).
        if let Some(proxy) = args.block_tool.iter().find(|t| t.starts_with("mcp_")) {
            return Err(Error::Usage(format!(
                "--block-tool {proxy}: that is an MCP tool of the proxy's, not a built-in tool of \
                 the host; withhold a tool of the server under test with --without-tool NAME \
                 (its name as the server gives it), which the condition's name records"
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
        Some(Host::Openai) => openai_agent(args, given),
        Some(Host::Scripted) => {
            let strategy = given["scripted:".len()..]
                .parse::<Strategy>()
                .map_err(Error::Usage)?;
            if args.model.is_some() || args.effort.is_some() {
                return Err(Error::Usage(format!(
                    "--model and --effort are for a model's host (claude, codex, gemini); a \
                     scripted agent has no model{}",
                    run_without(&["--model", "--effort"])
                )));
            }
            if args.max_turns.is_some() {
                return Err(Error::Usage(format!(
                    "--max-turns is for a model's host (claude, codex, gemini); a scripted agent \
                     plays its strategy to the end{}",
                    run_without(&["--max-turns"])
                )));
            }
            if args.agent_program.is_some() {
                return Err(Error::Usage(format!(
                    "--agent-program (--claude) is for a CLI host; a scripted agent is this \
                     program{}",
                    run_without(&["--agent-program", "--claude"])
                )));
            }
            Ok(Agent::Scripted(strategy))
        }
        // (`scripted:ANYTHING` is the scripted host, its strategy parsed above.)
        None => Err(Error::Usage(format!(
            "--agent {given}: expected claude, codex, gemini, openai:MODEL or scripted:STRATEGY"
        ))),
    }
}

/// `--agent-program` as the host is started: a bare name as given (looked
/// up on PATH), a path with a folder in it made absolute, since the host
/// runs in the attempt's `cwd/`, where a relative path would name nothing.
fn program_path(given: &Path) -> PathBuf {
    if given.components().count() > 1 {
        crate::fsutil::absolute(given)
    } else {
        given.to_path_buf()
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

/// The command line this program was started with, without `flags`
/// (each with its value, given as `--flag VALUE` or `--flag=VALUE`), as
/// the end of a refusal: "; run it without them:" and the command, shell
/// quoted, the program named `okn-benchmark` (issue 26, section 2: a
/// refusal gives the command that works). Empty when nothing would be
/// left out (the flags were not on the command line: a caller that is not
/// the command line itself).
fn run_without(flags: &[&str]) -> String {
    let mut args = std::env::args().skip(1);
    let mut kept = vec!["okn-benchmark".to_string()];
    let mut dropped = false;
    while let Some(arg) = args.next() {
        if flags.contains(&arg.as_str()) {
            args.next();
            dropped = true;
        } else if flags.iter().any(|f| arg.starts_with(&format!("{f}="))) {
            dropped = true;
        } else {
            kept.push(arg);
        }
    }
    if !dropped {
        return String::new();
    }
    let line: Vec<String> = kept.iter().map(|a| crate::text::shell_quote(a)).collect();
    format!(
        "; run it without {}:\n  {}",
        if flags.len() == 1 { "it" } else { "them" },
        line.join(" ")
    )
}

/// The flags only the openai host takes, refused for any other by name.
///
/// Errors: the first of `--base-url`, `--api-key-env` and the price
/// flags given.
fn refuse_openai_flags(args: &AgentArgs, given: &str) -> Result<()> {
    let set = [
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
    match set.iter().find(|(_, set)| *set) {
        Some((flag, _)) => Err(Error::Usage(format!(
            "{flag} cannot be honoured by --agent {given}: it is for --agent openai:MODEL (the \
             built-in loop over an OpenAI-compatible API){}",
            run_without(&[flag])
        ))),
        None => Ok(()),
    }
}

/// `--agent openai:MODEL` with its flags (README.md, "Agent hosts";
/// `docs/HOSTS.md`, "openai").
///
/// Errors: no model after `openai:`, or one that is not a model id
/// ([`crate::cli::model_id`]); `--model` naming another model;
/// `--effort` or `--agent-program` (the loop has no effort setting and is
/// this program); no `--base-url`, or one that is not an http(s) API root
/// without credentials ([`crate::agent::openai::check_base_url`]); an
/// `--api-key-env` that is not a variable name.
fn openai_agent(args: &AgentArgs, given: &str) -> Result<Agent> {
    let refuse = |flag: &str, why: &str| {
        Err(Error::Usage(format!(
            "{flag} cannot be honoured by --agent {given}: {why}"
        )))
    };
    let model = given["openai:".len()..].trim();
    if model.is_empty() {
        return Err(Error::Usage(
            "--agent openai:MODEL: name the model after 'openai:' (e.g. openai:gpt-5-mini)".into(),
        ));
    }
    crate::cli::model_id(model).map_err(|e| Error::Usage(format!("--agent {given}: {e}")))?;
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
            "--agent {given} needs --base-url URL: the API root of the OpenAI-compatible server \
             (e.g. http://127.0.0.1:8000/v1, or https://api.openai.com/v1); there is no \
             default provider"
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
