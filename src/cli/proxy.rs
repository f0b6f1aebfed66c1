//! `okn-benchmark proxy`: the MCP proxy an agent host starts.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::ValueEnum;

use crate::error::{Error, Result};
use crate::mcp::profile::Profile;
use crate::mcp::proxy::{DEFAULT_TIMEOUT_SECS, Proxy, ProxySettings, ToolLevel};
use crate::mcp::sparql_only::SparqlOnly;

/// Serve MCP on stdin/stdout between an agent host and the server under test.
///
/// At all-tools it lists the server's tools (minus any --without-tool, whose
/// calls it refuses), forwards its instructions, and adds submit_csv. At
/// sparql-only there is no server: one neutral SPARQL tool (run_sparql) over
/// the configured endpoint, a preamble naming the graph shortnames, and
/// submit_csv. Every call is logged to LOG-DIR/calls.json and metrics.json;
/// the answer goes to LOG-DIR/answer.csv. Agent hosts start it through their
/// MCP config; run it by hand only to debug.
#[derive(Debug, clap::Args)]
pub(crate) struct ProxyArgs {
    #[command(flatten)]
    pub(crate) common: ProxyCommon,
    /// Where answer.csv, calls.json and metrics.json are written.
    #[arg(long, value_name = "DIR")]
    log_dir: PathBuf,
}

/// Flags shared by `proxy` and `probe`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ProxyCommon {
    /// Tool level.
    #[arg(long, value_enum, default_value_t = Level::AllTools)]
    pub(crate) tools: Level,
    /// The server under test (required for all-tools, ignored for sparql-only).
    #[arg(long, value_name = "PROFILE.toml")]
    pub(crate) profile: Option<PathBuf>,
    /// Withhold this tool of the server (repeatable; calls to it are refused).
    #[arg(long, value_name = "NAME")]
    pub(crate) without_tool: Vec<String>,
    /// Read timeout of one forwarded call, seconds, 1 to 604800 (also bounds the connection at
    /// startup).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT_SECS,
          value_parser = crate::cli::seconds)]
    pub(crate) timeout: u64,
    /// Relabel failures hidden in successful replies (HTTP 429/5xx, "rate limit",
    /// tracebacks) as errors before the agent sees them; the payload is unchanged.
    #[arg(long)]
    pub(crate) strict_upstream_errors: bool,
    /// sparql-only: SPARQL URL or RDF data [default: [sparql_only] or [reference]
    /// endpoint in okn-benchmark.toml].
    #[arg(long, value_name = "URL|PATH")]
    pub(crate) endpoint: Option<String>,
    /// sparql-only: shortname → graph IRI template [default:
    /// https://purl.org/okn/frink/kg/{shortname}].
    #[arg(long, value_name = "TEMPLATE")]
    pub(crate) graph_template: Option<String>,
    /// sparql-only: a valid graph shortname (repeatable; needed for a SPARQL URL).
    #[arg(long, value_name = "NAME")]
    pub(crate) shortname: Vec<String>,
}

/// The tool level flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Level {
    /// The server's tools and instructions, plus submit_csv.
    AllTools,
    /// A neutral SPARQL tool and a preamble, plus submit_csv; no server.
    SparqlOnly,
}

impl Level {
    pub(crate) fn tool_level(self) -> ToolLevel {
        match self {
            Level::AllTools => ToolLevel::AllTools,
            Level::SparqlOnly => ToolLevel::SparqlOnly,
        }
    }
}

impl ProxyCommon {
    /// The profile, loaded, when the level needs one.
    pub(crate) fn profile(&self) -> Result<Option<Profile>> {
        match (self.tools, &self.profile) {
            (Level::AllTools, Some(path)) => Ok(Some(Profile::load(path)?)),
            (Level::AllTools, None) => Err(Error::Usage(
                "--tools all-tools needs --profile PROFILE.toml (the server under test)".into(),
            )),
            (Level::SparqlOnly, _) => Ok(None),
        }
    }

    /// The control, opened.
    pub(crate) fn sparql_only(&self) -> Result<SparqlOnly> {
        let (spec, template, shortnames) = crate::config::sparql_only_settings(
            self.endpoint.as_deref(),
            self.graph_template.as_deref(),
            &self.shortname,
        )?;
        SparqlOnly::new(&spec, &template, &shortnames)
    }
}

pub(crate) fn run(args: ProxyArgs) -> Result<ExitCode> {
    // Started by a claude episode, whose HOME is a fresh folder (issue 25):
    // the profile's `~` and the upstream's caches are in the user's own.
    crate::agent::claude::restore_user_home();
    let common = &args.common;
    let profile = common.profile()?;
    let sparql_only = match common.tools {
        Level::SparqlOnly => Some(common.sparql_only()?),
        Level::AllTools => None,
    };
    if common.tools == Level::SparqlOnly && !common.without_tool.is_empty() {
        return Err(Error::Usage(
            "--without-tool applies to all-tools only: sparql-only has no server tools".into(),
        ));
    }
    let settings = ProxySettings {
        level: common.tools.tool_level(),
        profile,
        without: common.without_tool.clone(),
        log_dir: args.log_dir.clone(),
        timeout: Duration::from_secs(common.timeout),
        strict_upstream_errors: common.strict_upstream_errors,
        sparql_only,
    };
    let runtime = crate::mcp::runtime()?;
    let served = runtime.block_on(async move {
        let proxy = Proxy::start(settings).await?;
        proxy.serve_stdio().await
    });
    // Should the session end while the agent host still holds stdin open,
    // a read of stdin is still pending on one of tokio's blocking threads,
    // and no task can cancel it: waiting for it would keep the proxy alive
    // until the host closed its end. The log is written by now, and
    // dropping the tasks kills a stdio upstream.
    runtime.shutdown_timeout(Duration::from_secs(1));
    served?;
    Ok(ExitCode::SUCCESS)
}
