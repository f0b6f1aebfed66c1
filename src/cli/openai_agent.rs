//! `okn-benchmark openai-agent`: the `openai` agent host's loop (issue 25,
//! "The hosts"; docs/HOSTS.md, "openai").

use std::io::Read;
use std::process::ExitCode;
use std::time::Duration;

use crate::agent::openai_loop::{Prices, Settings, play};
use crate::error::{Error, Result};

/// An agent host for any OpenAI Chat Completions endpoint (what `run --agent
/// openai:MODEL` starts): reads the prompt on stdin, connects to the proxy
/// named in --mcp-config, offers its tools as functions, runs every tool call
/// through it until submit_csv succeeds, --max-turns, a reply with no tool call,
/// an API failure or --timeout-s, and prints a JSON report on stdout
/// (docs/HOSTS.md, "openai"). Exit 0 when the loop ran, whatever the answer;
/// 1 on an API failure (the report still printed, with its error); 2 for bad
/// flags, a missing key or a proxy that cannot be started.
#[derive(Debug, clap::Args)]
pub(crate) struct OpenaiAgentArgs {
    /// The MCP config, as JSON text or a file holding it: {"mcpServers": {"okn":
    /// {"command": ..., "args": [...]}}} (one stdio server, the proxy).
    #[arg(long, value_name = "JSON|FILE")]
    mcp_config: String,
    /// The model to ask for (the request's `model`): never empty, no spaces.
    #[arg(long, value_parser = crate::cli::model_id)]
    model: String,
    /// The API root, e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1;
    /// requests go to URL/chat/completions. There is no default provider.
    #[arg(long, value_name = "URL")]
    base_url: String,
    /// The environment variable holding the API key (sent as a bearer token,
    /// never printed or written). Without this flag no key is sent: for local
    /// servers that need none (vLLM, Ollama).
    #[arg(long, value_name = "NAME")]
    api_key_env: Option<String>,
    /// The most API requests of the episode (the tool calls of the last one
    /// are still run, so a submission there counts).
    #[arg(long, value_name = "N", default_value_t = 50,
        value_parser = clap::value_parser!(u32).range(1..))]
    max_turns: u32,
    /// End the episode after this many seconds (connecting included), with the
    /// report printed (stop: timeout). Keep it below run's --agent-timeout.
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    timeout_s: Option<f64>,
    /// US dollars per million prompt tokens: with --price-output-per-mtok, the
    /// report states a cost (never otherwise).
    #[arg(long, value_name = "USD", requires = "price_output_per_mtok",
        value_parser = price)]
    price_input_per_mtok: Option<f64>,
    /// US dollars per million completion tokens.
    #[arg(long, value_name = "USD", requires = "price_input_per_mtok",
        value_parser = price)]
    price_output_per_mtok: Option<f64>,
    /// US dollars per million prompt tokens read from the provider's cache
    /// (else they cost the input price).
    #[arg(long, value_name = "USD", requires = "price_input_per_mtok",
        value_parser = price)]
    price_cached_input_per_mtok: Option<f64>,
}

/// A price: a finite number ≥ 0.
pub(crate) fn price(text: &str) -> std::result::Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!(
            "'{text}' is not a price in US dollars (a number ≥ 0)"
        )),
    }
}

/// A number of seconds > 0.
fn positive_seconds(text: &str) -> std::result::Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x < 1e9 => Ok(x),
        _ => Err(format!("'{text}' is not a number of seconds > 0")),
    }
}

/// The API key from the variable `name`.
///
/// Errors: [`Error::Usage`] when it is unset, empty or not UTF-8 (the
/// key is never quoted).
fn api_key(name: &str) -> Result<String> {
    match std::env::var(name) {
        Ok(key) if !key.trim().is_empty() => Ok(key.trim().to_string()),
        Ok(_) => Err(Error::Usage(format!(
            "--api-key-env {name}: the variable is empty; set it to the API key"
        ))),
        Err(std::env::VarError::NotPresent) => Err(Error::Usage(format!(
            "--api-key-env {name}: the variable is not set; export it with the API key \
             (or leave out --api-key-env for a server that needs no key)"
        ))),
        Err(std::env::VarError::NotUnicode(_)) => Err(Error::Usage(format!(
            "--api-key-env {name}: the variable is not UTF-8 text"
        ))),
    }
}

/// The MCP config's JSON text: the argument itself when it is JSON text
/// (it opens with `{`), else the file it names.
fn mcp_config(arg: &str) -> Result<String> {
    if arg.trim_start().starts_with('{') {
        return Ok(arg.to_string());
    }
    // Read only as a regular file (a named pipe is named, not waited on).
    crate::fsutil::read_text(std::path::Path::new(arg))
}

pub(crate) fn run(args: OpenaiAgentArgs) -> Result<ExitCode> {
    // The one rule `run --agent openai` checks too.
    let base_url = crate::agent::openai::check_base_url(&args.base_url).map_err(Error::Usage)?;
    let api_key = args.api_key_env.as_deref().map(api_key).transpose()?;
    let config = mcp_config(&args.mcp_config)?;
    let mut prompt = String::new();
    std::io::stdin()
        .read_to_string(&mut prompt)
        .map_err(|e| Error::Usage(format!("cannot read the prompt from stdin: {e}")))?;
    if prompt.trim().is_empty() {
        return Err(Error::Usage(
            "no prompt on stdin: give the episode's prompt on standard input".into(),
        ));
    }
    let settings = Settings {
        model: args.model,
        base_url,
        api_key,
        max_turns: args.max_turns,
        timeout: args.timeout_s.map(Duration::from_secs_f64),
        prices: args.price_input_per_mtok.map(|input| Prices {
            input,
            output: args.price_output_per_mtok.unwrap_or_default(),
            cached_input: args.price_cached_input_per_mtok,
        }),
    };
    let runtime = crate::mcp::runtime()?;
    let report = runtime.block_on(play(&settings, &config, &prompt))?;
    // A request still waiting past the timeout is not waited for.
    runtime.shutdown_timeout(Duration::from_millis(100));
    outln!("{report}");
    Ok(if report.get("error").is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
