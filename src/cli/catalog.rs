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
    /// Run every query of a catalog against a server, one fresh session per query and phrasing (docs/CATALOG.md, "Running").
    ///
    /// Validates first: an invalid catalog never reaches a server (exit 2).
    /// Queries run strictly one at a time, each session's start and each
    /// call bounded by --timeout, with progress on stderr. A server that
    /// errors, hangs or dies on one query is an execution error for that
    /// query's expectations, and the run goes on. Writes DIR/results.json and
    /// DIR/report.md (refusing to replace either without --force). Exit 1
    /// when a contract expectation fails or cannot be evaluated, else 0, so
    /// the run can gate a release while --type current_state runs apart.
    Run(RunArgs),
    /// Compare two catalog runs query by query, with no call (docs/CATALOG.md, "Comparing two runs").
    ///
    /// Each query is improved, regressed, mixed, changed, unchanged or not
    /// comparable, with the reason. Direction is stated only for a contract
    /// that flips, an acceptable candidate crossing the top-N line, a trap
    /// starting or stopping to outrank the acceptable candidate, and a known
    /// gap closing or reopening; anything else that differs is "changed", for
    /// a maintainer to judge. No winner, no total: exit 0 whatever the classes;
    /// 2 when a results.json is unreadable or malformed (named with the field).
    Compare(CompareArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// The baseline run: its results.json, or the folder holding it.
    baseline: PathBuf,
    /// The candidate run, likewise.
    candidate: PathBuf,
    /// Write the comparison as Markdown to FILE ('-' for stdout) instead of the terminal summary.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The catalog file (catalog.json).
    catalog: PathBuf,
    /// The server profile (TOML, as for proxy and run).
    #[arg(long, value_name = "PROFILE.toml")]
    profile: PathBuf,
    /// The folder results.json and report.md are written into.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Evaluate only expectations of this type (repeatable; default all three).
    #[arg(long = "type", value_enum, value_name = "TYPE")]
    types: Vec<KindArg>,
    /// Seconds each session may take to start, and each call to answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Replace results.json and report.md in --out.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum KindArg {
    Contract,
    Quality,
    #[value(name = "current_state")]
    CurrentState,
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
        CatalogCommand::Run(args) => run_catalog(args),
        CatalogCommand::Compare(args) => compare_runs(args),
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

fn run_catalog(args: RunArgs) -> Result<ExitCode> {
    use crate::catalog::format::Kind;
    use crate::catalog::{report, run};
    let catalog = format::load(&args.catalog)?;
    let problems = validate::validate(&catalog);
    if !problems.is_empty() {
        let listed: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
        return Err(Error::Usage(format!(
            "{}: not a valid catalog, so no query was run ('okn-benchmark catalog validate {}' lists the same):\n{}",
            args.catalog.display(),
            args.catalog.display(),
            listed.join("\n")
        )));
    }
    if args.out.exists() && !args.out.is_dir() {
        return Err(Error::Usage(format!(
            "--out {}: not a folder; no query was run",
            args.out.display()
        )));
    }
    let results_path = args.out.join("results.json");
    let report_path = args.out.join("report.md");
    for path in [&results_path, &report_path] {
        if path.exists() && !args.force {
            return Err(Error::Usage(format!(
                "{} exists: a catalog run does not replace one without --force",
                path.display()
            )));
        }
    }
    let profile = crate::mcp::profile::Profile::load(&args.profile)?;
    let mut types: Vec<Kind> = args
        .types
        .iter()
        .map(|t| match t {
            KindArg::Contract => Kind::Contract,
            KindArg::Quality => Kind::Quality,
            KindArg::CurrentState => Kind::CurrentState,
        })
        .collect();
    if types.is_empty() {
        types = vec![Kind::Contract, Kind::Quality, Kind::CurrentState];
    }
    types.sort();
    types.dedup();
    let bytes = crate::error::read_file(&args.catalog)?;
    let settings = run::RunSettings {
        // No path of the machine is recorded: an absolute path keeps its
        // file name alone.
        catalog_name: if args.catalog.is_absolute() {
            args.catalog
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            crate::fsutil::normalize(&args.catalog)
                .display()
                .to_string()
        },
        catalog_sha256: crate::reference::sha256_tag(&bytes),
        types,
        timeout: std::time::Duration::from_secs(args.timeout),
        catalog_dir: args
            .catalog
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default(),
    };
    let results =
        crate::mcp::runtime()?.block_on(run::run(&catalog, &profile, &settings, |line| {
            errln!("catalog run: {}", report::terminal(line));
        }));
    let mut json =
        serde_json::to_string_pretty(&results).map_err(|e| Error::Other(e.to_string()))?;
    json.push('\n');
    crate::fsutil::write_atomic(&results_path, json.as_bytes())?;
    crate::fsutil::write_atomic(
        &report_path,
        report::markdown(&results, &catalog).as_bytes(),
    )?;
    let counted = run::counts(&results);
    for (kind, by_status) in &counted {
        let parts: Vec<String> = by_status
            .iter()
            .map(|(s, n)| {
                format!(
                    "{n} {}",
                    serde_json::to_value(s)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                )
            })
            .collect();
        outln!("{}: {}", report::kind_name(*kind), parts.join(", "));
    }
    outln!(
        "wrote {} and {}",
        results_path.display(),
        report_path.display()
    );
    Ok(if run::contract_broken(&results) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn compare_runs(args: CompareArgs) -> Result<ExitCode> {
    use crate::catalog::compare;
    let baseline = compare::load(&args.baseline)?;
    let candidate = compare::load(&args.candidate)?;
    let compared = compare::compare(&baseline, &candidate);
    let text = compare::markdown(
        None,
        (&args.baseline, &baseline),
        (&args.candidate, &candidate),
        &compared,
    );
    match args.markdown.as_deref() {
        Some(path) if path == std::path::Path::new("-") => out!("{text}"),
        Some(path) => {
            crate::fsutil::write_atomic(path, text.as_bytes())?;
            outln!("wrote {}", path.display());
        }
        None => {
            for q in &compared {
                if q.class == compare::Class::Unchanged {
                    continue;
                }
                outln!(
                    "{}: {}",
                    crate::catalog::report::terminal(&q.id),
                    q.class.name()
                );
                for r in &q.reasons {
                    outln!("  {}", crate::catalog::report::terminal(r));
                }
            }
            let unchanged = compared
                .iter()
                .filter(|q| q.class == compare::Class::Unchanged)
                .count();
            outln!("{} of {} queries unchanged", unchanged, compared.len());
        }
    }
    Ok(ExitCode::SUCCESS)
}
