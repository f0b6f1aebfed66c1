//! `okn-benchmark corpus list`: what a corpus holds and what a selection keeps.

use std::process::ExitCode;

use clap::{Subcommand, ValueEnum};
use serde::Serialize;

use super::CorpusArgs;
use crate::error::{Error, Result};

#[derive(Debug, Subcommand)]
pub(crate) enum CorpusCommand {
    /// List the records a selection keeps (the same selection 'reference' and 'selfcheck' apply).
    ///
    /// Text output is one line per record (id, tier, query form, tags) and ends
    /// with "N of M records". JSON output is an array of objects with id, tier,
    /// tags, summary, form, path and metadata, and expectations (the trajectory
    /// expectations, defaults applied, when the record has any; docs/TRAJECTORY.md).
    List(ListArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    corpus: CorpusArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Serialize)]
struct JsonRecord<'a> {
    id: &'a str,
    tier: &'a Option<String>,
    tags: &'a [String],
    summary: &'a str,
    form: &'a str,
    path: String,
    metadata: &'a std::collections::BTreeMap<String, crate::corpus::header::HeaderValue>,
    /// Its trajectory expectations, defaults applied (`docs/TRAJECTORY.md`).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    expectations: &'a [crate::expectations::Expectation],
}

pub(crate) fn run(command: CorpusCommand) -> Result<ExitCode> {
    let CorpusCommand::List(args) = command;
    let (corpus, selection) = args.corpus.open()?;
    let selected = corpus.select(&selection)?;
    // Every record's expectations read, or the first that does not is
    // refused, named with its line (issue 27, section 1).
    let expectations = crate::expectations::defaults::for_corpus(&corpus)?;
    match args.format {
        Format::Json => {
            let records: Vec<JsonRecord<'_>> = selected
                .iter()
                .map(|r| JsonRecord {
                    id: &r.id,
                    tier: &r.tier,
                    tags: &r.tags,
                    summary: &r.summary,
                    form: r.form.as_str(),
                    path: r.path.to_string_lossy().replace('\\', "/"),
                    metadata: &r.metadata,
                    expectations: &expectations[&r.id],
                })
                .collect();
            let mut text =
                serde_json::to_string_pretty(&records).map_err(|e| Error::Other(e.to_string()))?;
            text.push('\n');
            out!("{text}");
        }
        Format::Text => {
            // Padded by terminal columns: an id in CJK or with an emoji
            // keeps the columns in line; a control character in a file
            // name is shown escaped, never sent to the terminal.
            let shown = |s: &str| crate::text::printable(s).into_owned();
            let rows: Vec<[String; 3]> = selected
                .iter()
                .map(|r| {
                    [
                        shown(&r.id),
                        shown(r.tier.as_deref().unwrap_or("-")),
                        shown(&r.tags.join(", ")),
                    ]
                })
                .collect();
            let width = |i: usize| {
                rows.iter()
                    .map(|r| crate::text::display_width(&r[i]))
                    .max()
                    .unwrap_or(0)
            };
            let (id_width, tier_width) = (width(0), width(1));
            for (r, [id, tier, tags]) in selected.iter().zip(&rows) {
                let line = format!(
                    "{}  {}  {:9}  {tags}",
                    crate::text::pad_right(id, id_width),
                    crate::text::pad_right(tier, tier_width),
                    r.form.as_str(),
                );
                outln!("{}", line.trim_end());
            }
            outln!(
                "{} of {} record{}",
                selected.len(),
                corpus.records.len(),
                crate::format::plural(corpus.records.len())
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
