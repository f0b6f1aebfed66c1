//! `okn-benchmark probe`: check a profile before spending model time.

use std::process::ExitCode;
use std::time::Duration;

use super::proxy::{Level, ProxyCommon};
use crate::error::{Error, Result};
use crate::mcp::probe::{SUBMIT_CSV, check_withheld, offered_tools};
use crate::mcp::sparql_only::TOOL as SPARQL_TOOL;

/// Connect to the server under test and show what an agent would see at each
/// tool level: the tool count, the instructions' length, the tools offered
/// (minus any --without-tool, which are checked against the server), and the
/// sparql-only preamble with its SHA-256 digest (the same for every profile).
/// Calls no model and no tool.
#[derive(Debug, clap::Args)]
pub(crate) struct ProbeArgs {
    #[command(flatten)]
    common: ProxyCommon,
}

pub(crate) fn run(args: ProbeArgs) -> Result<ExitCode> {
    let mut common = args.common;
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
        return Ok(ExitCode::SUCCESS);
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
    Ok(ExitCode::SUCCESS)
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
