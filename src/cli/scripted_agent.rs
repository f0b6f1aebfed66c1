//! `okn-benchmark scripted-agent`: the built-in agent host with no model.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::agent::strategy::Strategy;
use crate::corpus::Corpus;
use crate::error::{Error, Result};

/// A deterministic agent host (what `run --agent scripted:STRATEGY` starts):
/// reads the prompt on stdin, connects to the MCP server named in
/// --mcp-config as claude would, plays the strategy for the record the prompt
/// came from, and prints a JSON report on stdout.
#[derive(Debug, clap::Args)]
pub(crate) struct ScriptedAgentArgs {
    /// oracle, rename-columns, reorder-columns, local-names, decimals-4, drop-row,
    /// swap-columns, empty, no-answer, hang, mixed:SEED, or skill:PERCENT:SEED
    /// (an agent of that skill: README.md, "The demo studies").
    #[arg(long)]
    strategy: String,
    /// The corpus the prompts come from (for the answer keys).
    #[arg(long, value_name = "DIR")]
    corpus: PathBuf,
    /// The MCP config, as JSON text: {"mcpServers": {"okn": {"command": ..., "args": [...]}}}.
    #[arg(long, value_name = "JSON")]
    mcp_config: String,
    /// The attempt number (mixed strategies vary by it).
    #[arg(long, default_value_t = 1)]
    attempt: u32,
}

pub(crate) fn run(args: ScriptedAgentArgs) -> Result<ExitCode> {
    let strategy: Strategy = args.strategy.parse().map_err(Error::Usage)?;
    let corpus = Corpus::load(&args.corpus)?;
    let mut prompt = String::new();
    std::io::stdin()
        .read_to_string(&mut prompt)
        .map_err(|e| Error::Other(format!("cannot read the prompt from stdin: {e}")))?;
    let runtime = crate::mcp::runtime()?;
    let report = runtime.block_on(crate::agent::scripted::play(
        &args.mcp_config,
        &prompt,
        &corpus,
        &strategy,
        args.attempt,
    ))?;
    outln!("{report}");
    Ok(ExitCode::SUCCESS)
}
