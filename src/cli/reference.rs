//! `okn-benchmark reference`: ground truth for every selected record.

use std::path::PathBuf;
use std::process::ExitCode;

use super::CorpusArgs;
use crate::error::{Error, Result};
use crate::format::plural;
use crate::reference::verify::{Verdict, Verification};
use crate::reference::{Outcome, build, ground_truth_dir, orphans};
use crate::report::diff::{AnswerDiff, DiffLine, RowKind, answer_diff};

/// Differing rows a `--verify` diff shows per record.
const VERIFY_ROWS_SHOWN: usize = 10;

/// Run every selected answer key against the SPARQL endpoint and cache the
/// expected rows (ID.csv) with a record of how they were made (ID.json).
///
/// A record whose answer key and endpoint are unchanged since the last run
/// is reused without querying; one whose key or endpoint changed is rebuilt.
/// For RDF files the endpoint changes with their bytes; for a URL only with
/// the URL: data updated behind a URL is noticed by --verify alone.
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
    /// Re-run the selected answer keys and compare their rows with the cached ground
    /// truth, writing none: list every record whose rows differ, with a row diff (exit
    /// 1 if any differs or has no usable ground truth). What was found is logged in
    /// GROUND-TRUTH/.verified.json, which rescore and report read.
    #[arg(long, conflicts_with = "force")]
    verify: bool,
    /// Timeout for one query to an HTTP endpoint, in seconds (1 to 604800).
    #[arg(long, value_name = "SECONDS", default_value_t = crate::sparql::DEFAULT_HTTP_TIMEOUT_SECS,
          value_parser = crate::cli::seconds)]
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
    if args.verify {
        return verify(&dir, &selected, &spec);
    }
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

/// `reference --verify`: one line per record (with a row diff under each
/// that differs), a summary, the log written; exit 1 when a record differs
/// or could not be checked, 2 (an error) when an answer key failed.
fn verify(
    dir: &std::path::Path,
    selected: &[&crate::corpus::Record],
    spec: &crate::sparql::EndpointSpec,
) -> Result<ExitCode> {
    let id_width = selected.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let total = selected.len();
    let mut index = 0;
    let verifications = crate::reference::verify::verify(dir, selected, spec, |record, v| {
        index += 1;
        let counter = format!("[{index:>width$}/{total}]", width = total.to_string().len());
        // The counter on the record's line; its diff indented under it.
        let mut lines = verification_lines(&record.id, id_width, v).into_iter();
        if let Some(first) = lines.next() {
            outln!("{counter} {first}");
        }
        for line in lines {
            outln!("{line}");
        }
    })?;
    let count = |f: fn(&Verdict) -> bool| verifications.iter().filter(|v| f(&v.verdict)).count();
    let same = count(|v| matches!(v, Verdict::Same { .. }));
    let differ = count(|v| matches!(v, Verdict::Differs { .. }));
    let unchecked = count(|v| matches!(v, Verdict::Unchecked(_)));
    let failed = count(|v| matches!(v, Verdict::Failed(_)));
    let logged = match crate::reference::verify::record(dir, selected, &verifications) {
        Ok(Some(path)) => format!("; logged in {}", path.display()),
        Ok(None) => String::new(),
        Err(e) => {
            errln!("warning: the verification was not logged: {e}");
            String::new()
        }
    };
    outln!(
        "{total} record{} verified: {same} same, {differ} differ, {unchecked} unchecked, {failed} failed; \
         ground truth in {} left as it was{logged}",
        plural(total),
        dir.display()
    );
    let elsewhere = verifications.iter().filter(|v| v.note.is_some()).count();
    if elsewhere > 0 {
        outln!(
            "note: the ground truth of {elsewhere} of these records was built from another endpoint, \
             or other data, than this one: 'okn-benchmark reference' would rebuild {}",
            if elsewhere == 1 { "it" } else { "them" }
        );
    }
    if failed > 0 {
        return Err(Error::Other(format!(
            "{failed} answer key{} failed, so {} not verified",
            plural(failed),
            if failed == 1 { "it was" } else { "they were" }
        )));
    }
    if differ + unchecked > 0 {
        if differ > 0 {
            errln!(
                "reference --verify: the endpoint no longer answers the cached ground truth of {differ} record{}: \
                 'okn-benchmark reference --force' rebuilds it (runs roots judged by the old rows keep them; \
                 record new runs into a new root)",
                plural(differ)
            );
        }
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The lines `--verify` prints for one record: its verdict, then (when its
/// rows differ) the diff, indented.
fn verification_lines(id: &str, id_width: usize, v: &Verification) -> Vec<String> {
    match &v.verdict {
        Verdict::Same { rows } => vec![format!(
            "same       {id:id_width$}  {rows} row{}",
            plural(*rows)
        )],
        Verdict::Unchecked(why) => vec![format!("UNCHECKED  {id:id_width$}  {why}")],
        Verdict::Failed(message) => vec![format!("FAILED     {id:id_width$}  {message}")],
        Verdict::Differs {
            cached,
            now,
            ordered,
        } => {
            let diff = answer_diff(now, cached, *ordered, VERIFY_ROWS_SHOWN);
            let mut lines = vec![format!(
                "DIFFERS    {id:id_width$}  {} ({} cached, {} now)",
                diff_counts(&diff),
                cached.rows.len(),
                now.rows.len()
            )];
            if cached.columns != now.columns {
                lines.push(format!(
                    "    columns were {}, now {}",
                    cached.columns.join(","),
                    now.columns.join(",")
                ));
            }
            lines.extend(diff_lines(&diff));
            lines
        }
    }
}

/// `+N -M rows`, with the rows at another place for an ordered key.
fn diff_counts(diff: &AnswerDiff) -> String {
    let mut text = format!("+{} -{} rows", diff.extra, diff.missing);
    if diff.moved > 0 {
        text.push_str(&format!(", {} at another place", diff.moved));
    }
    text
}

/// The diff's rows, indented: `-` a cached row the endpoint no longer
/// returns, `+` one it returns that the cache lacks, `<` and `>` a row both
/// hold at another place (where the cache has it, where it is now), and
/// identical rows as context (`docs/FORMAT.md`, "Ground truth (inside a
/// corpus)").
fn diff_lines(diff: &AnswerDiff) -> Vec<String> {
    let mut lines: Vec<String> = diff
        .lines
        .iter()
        .map(|line| match line {
            DiffLine::Row { kind, text } => {
                let mark = match kind {
                    RowKind::Same => ' ',
                    RowKind::Missing => '-',
                    RowKind::Extra => '+',
                    RowKind::MovedFromHere => '<',
                    RowKind::MovedHere => '>',
                };
                format!("    {mark} {text}")
            }
            DiffLine::Skipped { rows } => {
                format!("      ({rows} identical row{})", plural(*rows))
            }
        })
        .collect();
    if diff.differing_hidden > 0 {
        lines.push(format!(
            "      ... and {} more differing row{}",
            diff.differing_hidden,
            plural(diff.differing_hidden)
        ));
    }
    lines
}
