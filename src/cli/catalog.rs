//! `okn-benchmark catalog`: deterministic tool calls with typed
//! expectations (`docs/CATALOG.md`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::catalog::{format, validate};
use crate::error::{Error, Result};

#[derive(Debug, Subcommand)]
pub(crate) enum CatalogCommand {
    /// Check a catalog offline, calling no server (docs/CATALOG.md, "Validation").
    ///
    /// Checks that ids are unique; categories and checks are known; each check's
    /// fields are present and typed; acceptable candidates are inside the
    /// header's scope; a rejected candidate outside the scope appears only in
    /// the category the header names for it; known gaps and findings are dated;
    /// and the header names the server, its version and the date the
    /// expectations were confirmed. Prints one line per problem, naming the
    /// query and the field, then a count. Exit 0 when valid, 1 when any rule
    /// is broken, 2 when the file cannot be read as a catalog (malformed JSON,
    /// an unknown or mistyped member: named with its line or query).
    ///
    /// With --profile it also connects to the server, lists its tools (no tool
    /// is called), and checks that every run.tool is one of them and that every
    /// argument, of the query and of its rephrasings, is in the tool's
    /// inputSchema, and every required one given, with a did-you-mean. A
    /// server that cannot be reached is exit 2.
    Validate(ValidateArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct ValidateArgs {
    /// The catalog file (catalog.json).
    catalog: PathBuf,
    /// A server profile (TOML, as for proxy and run): check the catalog's
    /// tools and arguments against the tools the server lists.
    #[arg(long, value_name = "PROFILE.toml")]
    profile: Option<PathBuf>,
    /// Seconds to wait for the server to start and list its tools.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    timeout: u64,
}

pub(crate) fn run(command: CatalogCommand) -> Result<ExitCode> {
    match command {
        CatalogCommand::Validate(args) => {
            let catalog = format::load(&args.catalog)?;
            let mut problems = validate::validate(&catalog);
            let shown = crate::fsutil::normalize(&args.catalog);
            if let Some(path) = &args.profile {
                let profile = crate::mcp::profile::Profile::load(path)?;
                let timeout = std::time::Duration::from_secs(args.timeout);
                let connection = crate::mcp::runtime()?
                    .block_on(crate::mcp::upstream::connect(&profile, timeout, None))
                    .map_err(|reason| {
                        Error::Usage(format!(
                            "{}: {reason}: the catalog's tools cannot be checked (validate \
                             without --profile checks the rest)",
                            path.display()
                        ))
                    })?;
                problems.extend(validate::tool_problems(&catalog, &connection.tools));
                outln!(
                    "{}: checked against the {} tools of {}",
                    shown.display(),
                    connection.tools.len(),
                    profile.name
                );
            }
            for problem in &problems {
                outln!("{}: {problem}", shown.display());
            }
            if problems.is_empty() {
                outln!(
                    "{}: valid: {} quer{}, {} expectation{}",
                    shown.display(),
                    catalog.queries.len(),
                    if catalog.queries.len() == 1 {
                        "y"
                    } else {
                        "ies"
                    },
                    catalog
                        .queries
                        .iter()
                        .map(|q| q.expectations.len())
                        .sum::<usize>(),
                    crate::format::plural(
                        catalog
                            .queries
                            .iter()
                            .map(|q| q.expectations.len())
                            .sum::<usize>()
                    )
                );
                Ok(ExitCode::SUCCESS)
            } else {
                outln!(
                    "{}: {} problem{}",
                    shown.display(),
                    problems.len(),
                    crate::format::plural(problems.len())
                );
                Ok(ExitCode::from(1))
            }
        }
    }
}
