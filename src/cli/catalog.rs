//! `okn-benchmark catalog`: deterministic tool calls with typed
//! expectations (`docs/CATALOG.md`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::catalog::{format, validate};
use crate::error::Result;

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
    Validate(ValidateArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct ValidateArgs {
    /// The catalog file (catalog.json).
    catalog: PathBuf,
}

pub(crate) fn run(command: CatalogCommand) -> Result<ExitCode> {
    match command {
        CatalogCommand::Validate(args) => {
            let catalog = format::load(&args.catalog)?;
            let problems = validate::validate(&catalog);
            let shown = crate::fsutil::normalize(&args.catalog);
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
