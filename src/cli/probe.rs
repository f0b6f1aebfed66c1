//! `okn-benchmark probe`: check a profile before spending model time.

use std::process::ExitCode;
use std::time::Duration;

use super::agent_args::AgentArgs;
use super::proxy::{Level, ProxyCommon};
use crate::agent::Agent;
use crate::error::{Error, Result};
use crate::mcp::probe::{SUBMIT_CSV, check_withheld, offered_tools};
use crate::mcp::sparql_only::TOOL as SPARQL_TOOL;

/// Connect to the server under test and show what an agent would see at each
/// tool level: the tool count, the instructions' length, the tools offered
/// (minus any --without-tool, which are checked against the server), and the
/// sparql-only preamble with its SHA-256 digest (the same for every profile).
/// Calls no model and no tool; with --agent HOST, the host's tool census
/// follows (`Command::Probe`'s help; `docs/HOSTS.md`, "probe --agent").
#[derive(Debug, clap::Args)]
pub(crate) struct ProbeArgs {
    #[command(flatten)]
    common: ProxyCommon,
    #[command(flatten)]
    agent: AgentArgs,
}

pub(crate) fn run(args: ProbeArgs) -> Result<ExitCode> {
    // The agent flags are checked before anything is connected, as run
    // checks them.
    let agent = args.agent.agent()?;
    if agent.is_none()
        && let Some(flag) = args.agent.first_given()
    {
        return Err(Error::Usage(format!(
            "{flag} is for 'probe --agent HOST' (the tool census); without --agent probe \
             starts no agent host"
        )));
    }
    show(args.common.clone())?;
    match agent {
        Some(agent) => census(&args.common, &agent, args.agent.agent_timeout),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// What an agent would see at each tool level (the command's doc), printed.
///
/// Errors: no profile at all-tools, one that does not load or connect; a
/// `--without-tool` the server does not have; for the control alone, an
/// endpoint that does not answer.
fn show(mut common: ProxyCommon) -> Result<()> {
    common.without_tool.sort();
    common.without_tool.dedup();
    if common.profile.is_none() && common.tools == Level::SparqlOnly {
        // The control alone: its endpoint is what must answer.
        let control = common.sparql_only()?;
        control
            .check(Duration::from_secs(common.timeout))
            .map_err(|why| {
                Error::Usage(format!(
                    "sparql-only: the control's endpoint did not answer ASK {{}} ({why}): \
                     an agent would have nothing to query; fix --endpoint (or \
                     okn-benchmark.toml) and probe again"
                ))
            })?;
        print_control(&common);
        outln!("  endpoint: answers (ASK {{}})");
        return Ok(());
    }
    common.tools = Level::AllTools;
    let profile = common.profile()?.ok_or_else(|| {
        Error::Usage(
            "probe needs --profile PROFILE.toml (the server to connect to), or --tools sparql-only for the control alone".into(),
        )
    })?;
    let timeout = Duration::from_secs(common.timeout);
    let runtime = crate::mcp::runtime()?;
    // What the server says of itself (its name, its tools, why it failed,
    // its stderr) is shown with every value of the profile replaced, as
    // everything recorded is (issue 24, item 27).
    let redactor = profile.redactor();
    let shown = |text: &str| redactor.text(text).into_owned();
    let connection = runtime
        .block_on(crate::mcp::upstream::connect(&profile, timeout, None))
        .map_err(|reason| {
            Error::Other(format!("{}: {}", profile.path.display(), shown(&reason)))
        })?;
    let record = profile.record();
    check_withheld(&profile.name, &connection.tools, &common.without_tool)?;

    outln!(
        "server: {} ({} {})",
        profile.name,
        record.transport,
        record.target
    );
    if let Some(info) = &connection.server_info {
        outln!(
            "reports itself as: {} {}",
            shown(&info.name),
            shown(&info.version)
        );
    }
    let names: Vec<&str> = connection.tools.iter().map(|t| t.name.as_ref()).collect();
    outln!("tools: {} ({})", names.len(), shown(&names.join(", ")));
    if names.contains(&SUBMIT_CSV) {
        outln!(
            "warning: the server has its own {SUBMIT_CSV}; the proxy's answer channel takes its place"
        );
    }
    let instructions = connection.instructions.as_deref().unwrap_or("");
    outln!("instructions: {} characters", instructions.chars().count());
    outln!();

    let withheld = common.without_tool.iter().cloned().collect();
    let offered: Vec<String> = offered_tools(&connection.tools, &withheld)
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    outln!(
        "all-tools: {} tool{}: {}; {}",
        offered.len(),
        crate::format::plural(offered.len()),
        shown(&offered.join(", ")),
        if instructions.is_empty() {
            "the server sends no instructions"
        } else {
            "the server's instructions are forwarded"
        }
    );
    if !common.without_tool.is_empty() {
        outln!(
            "  withheld: {} (hidden from tools/list, refused if called)",
            common.without_tool.join(", ")
        );
    }
    print_control(&common);
    drop(connection);
    Ok(())
}

/// The tool census of `agent` (`docs/HOSTS.md`, "probe --agent"): the
/// preflight for the host's version, then the census with the episode's
/// own launch at the `--tools` level given ([`HostLaunch::census`]),
/// printed as `census: ...` lines. Exit 0 when it passes, and for a
/// scripted agent, which has none.
///
/// Errors: the preflight's ([`crate::agent::preflight`]) and the census's
/// (a tool beyond the proxy's, a planted marker that reached the model, no
/// `submit_csv`, no request), exit 2; what [`tools`] refuses.
///
/// [`HostLaunch::census`]: crate::runs::run::HostLaunch::census
fn census(common: &ProxyCommon, agent: &Agent, agent_timeout: u64) -> Result<ExitCode> {
    outln!();
    if let Agent::Scripted(_) = agent {
        outln!("census: none: a scripted agent calls no model");
        return Ok(ExitCode::SUCCESS);
    }
    let tools = tools(common)?;
    let program = std::env::current_exe()
        .map_err(|e| Error::Other(format!("cannot find this program: {e}")))?;
    let env = super::agent_args::episode_env();
    let mut progress = |line: &str| outln!("{line}");
    let version = crate::agent::preflight(agent, &env, &mut progress)?;
    let launch = crate::runs::run::HostLaunch {
        agent,
        program: &program,
        tools: &tools,
        timeout: Duration::from_secs(common.timeout),
        strict: common.strict_upstream_errors,
        agent_timeout: Duration::from_secs(agent_timeout),
        env: &env,
    };
    launch.census(&version, crate::runs::run::CENSUS_PROMPT, &mut progress)?;
    Ok(ExitCode::SUCCESS)
}

/// The tools of an episode at the `--tools` level given, as `run` gives
/// them: the profile with `--without-tool` at all-tools, the control's
/// endpoint at sparql-only (which has no server, so nothing to withhold).
///
/// Errors: all-tools without a profile, or one that does not load; no
/// control endpoint at sparql-only.
fn tools(common: &ProxyCommon) -> Result<crate::runs::run::Tools> {
    use crate::runs::run::{ControlEndpoint, Tools};
    match common.tools {
        Level::AllTools => Ok(Tools::AllTools {
            profile: common.profile()?.ok_or_else(|| {
                Error::Usage(
                    "--tools all-tools needs --profile PROFILE.toml (the server under test)".into(),
                )
            })?,
            withheld: common.without_tool.clone(),
        }),
        Level::SparqlOnly => {
            let (spec, template, shortnames) = crate::config::sparql_only_settings(
                common.endpoint.as_deref(),
                common.graph_template.as_deref(),
                &common.shortname,
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

/// The sparql-only lines: tools, graphs, preamble digest.
fn print_control(common: &ProxyCommon) {
    match common.sparql_only() {
        Ok(control) => {
            outln!(
                "sparql-only: 2 tools: {SPARQL_TOOL}, {SUBMIT_CSV}; no server, a preamble of {} characters",
                control.preamble.chars().count()
            );
            outln!("  graphs: {}", control.shortnames().join(", "));
            outln!("  preamble digest: {}", control.preamble_digest());
        }
        Err(e) => outln!(
            "sparql-only: not available here ({})",
            e.to_string()
                .lines()
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}
