//! `okn-benchmark reference`: ground truth for every selected record.

use std::path::PathBuf;
use std::process::ExitCode;

use super::CorpusArgs;
use crate::error::{Error, Result};
use crate::format::plural;
use crate::reference::{Outcome, build, ground_truth_dir, orphans};

/// Run every selected answer key against the SPARQL endpoint and cache the
/// expected rows (ID.csv) with a record of how they were made (ID.json).
///
/// A record whose answer key and endpoint are unchanged since the last run
/// is reused without querying; one whose key or endpoint changed is rebuilt.
/// Subset runs (--tier, --exclude, --limit) touch nothing else. The endpoint
/// is --endpoint, or [reference] endpoint in the nearest okn-benchmark.toml.
#[derive(Debug, clap::Args)]
pub(crate) struct ReferenceArgs {
    #[command(flatten)]
    corpus: CorpusArgs,
    /// SPARQL endpoint: a SPARQL 1.1 Protocol URL, or RDF data (a .nq/.trig/.ttl file
    /// or a folder of them) to load into the embedded store [default: `endpoint` under
    /// `[reference]` in the nearest okn-benchmark.toml, from the current folder up].
    #[arg(long, value_name = "URL|PATH")]
    endpoint: Option<String>,
    /// Where ground truth is cached [default: CORPUS/ground-truth].
    #[arg(long, value_name = "DIR")]
    ground_truth: Option<PathBuf>,
    /// Rebuild every selected record even when its fingerprint matches.
    #[arg(long)]
    force: bool,
    /// Timeout for one query to an HTTP endpoint, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::sparql::DEFAULT_HTTP_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
}

pub(crate) fn run(args: ReferenceArgs) -> Result<ExitCode> {
    let (corpus, selection) = args.corpus.open()?;
    let selected = corpus.select(&selection)?;
    let mut spec = crate::config::endpoint_spec(args.endpoint.as_deref())?;
    if let crate::sparql::EndpointSpec::Http { timeout, .. } = &mut spec {
        *timeout = std::time::Duration::from_secs(args.timeout);
    }
    let dir = ground_truth_dir(&corpus, args.ground_truth.as_deref());
    let id_width = selected.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let total = selected.len();
    let mut index = 0;
    let outcomes = build(&dir, &selected, &spec, args.force, |record, outcome| {
        index += 1;
        let line = match outcome {
            Outcome::Built { rows, seconds } => {
                format!(
                    "built    {:id_width$}  {rows} row{} in {seconds:.2} s",
                    record.id,
                    plural(*rows)
                )
            }
            Outcome::Reused => format!("reused   {}", record.id),
            Outcome::Rebuilt {
                reason,
                rows,
                seconds,
            } => format!(
                "rebuilt  {:id_width$}  {rows} row{} in {seconds:.2} s ({reason})",
                record.id,
                plural(*rows)
            ),
            Outcome::Failed(message) => format!("FAILED   {:id_width$}  {message}", record.id),
        };
        // The index padded to the total's width, so the columns stay put
        // from [9/12] to [10/12].
        outln!(
            "[{index:>width$}/{total}] {line}",
            width = total.to_string().len()
        );
    })?;
    let count = |f: fn(&Outcome) -> bool| outcomes.iter().filter(|o| f(o)).count();
    let built = count(|o| matches!(o, Outcome::Built { .. }));
    let reused = count(|o| matches!(o, Outcome::Reused));
    let forced = count(|o| matches!(o, Outcome::Rebuilt { reason, .. } if reason == "--force"));
    let stale = count(|o| matches!(o, Outcome::Rebuilt { .. })) - forced;
    let failed = count(|o| matches!(o, Outcome::Failed(_)));
    outln!(
        "{total} record{}: {built} built, {reused} reused, {stale} stale (rebuilt), {forced} forced, {failed} failed; ground truth in {}",
        plural(total),
        dir.display()
    );
    let orphaned = orphans(&dir, &corpus);
    if !orphaned.is_empty() {
        outln!(
            "note: {} ground truth file{} no longer match any record: {}",
            orphaned.len(),
            plural(orphaned.len()),
            orphaned.join(", ")
        );
    }
    if failed > 0 {
        return Err(Error::Other(format!(
            "{failed} answer key{} failed; nothing was written for {}",
            plural(failed),
            if failed == 1 { "it" } else { "them" }
        )));
    }
    Ok(ExitCode::SUCCESS)
}
