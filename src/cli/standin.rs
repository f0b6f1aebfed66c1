//! `okn-benchmark standin-model`: a model's APIs (Anthropic Messages, OpenAI
//! Chat Completions and Responses, Gemini) with no model behind them.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::agent::strategy::Strategy;
use crate::corpus::Corpus;
use crate::error::{Error, Result};

/// Serve a stand-in model that plays a scripted strategy through a real agent
/// CLI's tool loop (no model is called), speaking every host's API on one
/// port: POST /v1/messages (Anthropic Messages: claude), /v1/chat/completions
/// (OpenAI Chat Completions), /v1/responses (OpenAI Responses: codex) and
/// /v1beta/models/MODEL:generateContent or :streamGenerateContent (Gemini).
///
/// Point a host at it (docs/HOSTS.md): claude with
/// ANTHROPIC_BASE_URL=http://BIND ANTHROPIC_API_KEY=dummy
/// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1; codex with a model provider
/// whose base_url is http://BIND/v1; gemini with
/// GOOGLE_GEMINI_BASE_URL=http://BIND. For tests and demonstrations of the
/// agent hosts only.
#[derive(Debug, clap::Args)]
pub(crate) struct StandinArgs {
    /// The corpus the prompts come from (for the answer keys).
    #[arg(long, value_name = "DIR")]
    corpus: PathBuf,
    /// oracle, rename-columns, reorder-columns, local-names, decimals-4, drop-row,
    /// swap-columns, empty, no-answer, hang, mixed:SEED, or skill:PERCENT:SEED
    /// (an agent of that skill: README.md, "The demo studies").
    #[arg(long, default_value = "oracle")]
    strategy: String,
    /// Address to listen on (127.0.0.1 only is advised; port 0 picks a free one).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8919")]
    bind: String,
    /// Write every request body here (request-NNNN.json).
    #[arg(long, value_name = "DIR")]
    log_dir: Option<PathBuf>,
    /// Answer every request as the API answers an invalid or expired key
    /// (HTTP 401, authentication_error): what an episode meets when a login
    /// lapses mid-study.
    #[arg(long)]
    reject_key: bool,
}

pub(crate) fn run(args: StandinArgs) -> Result<ExitCode> {
    let strategy: Strategy = args.strategy.parse().map_err(Error::Usage)?;
    let corpus = Corpus::load(&args.corpus)?;
    let runtime = crate::mcp::runtime()?;
    runtime.block_on(crate::agent::standin::serve(
        corpus,
        strategy,
        &args.bind,
        args.log_dir,
        args.reject_key,
    ))?;
    Ok(ExitCode::SUCCESS)
}
