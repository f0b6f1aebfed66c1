//! Ground truth: running each record's answer key and caching the result.
//!
//! Per record, two files in the ground-truth folder (by default
//! `CORPUS/ground-truth/`), at the record's id:
//!
//! - `ID.csv`: the expected rows in the answer key's SELECT order, in the
//!   shape an agent submits (W3C CSV cells; blank nodes relabelled `_:b0`,
//!   `_:b1`, ... in order of appearance);
//! - `ID.json`: a [`GroundTruthMeta`]: endpoint, engine and version, the
//!   answer key, whether it is ordered, columns, row count, fingerprint.
//!   It is written after the CSV, so its presence marks a complete pair.
//!
//! A hidden `.verified.json` beside them logs what `reference --verify`
//! last found ([`verify`]); it is no record's ground truth.
//!
//! The **fingerprint** is SHA-256 over the format version, the endpoint's
//! identity ([`crate::sparql::EndpointInfo::identity`]) and the answer key
//! text (line ends normalized, trailing whitespace trimmed). It changes when
//! that record's answer key or the endpoint's identity changes, and only
//! then (`docs/FORMAT.md`, "Ground truth (inside a corpus)"): editing one
//! key rebuilds that record alone, and a subset run never calls the others
//! stale. For a file store the identity covers the data's bytes; for a URL
//! it is the URL alone, so data changed behind a URL is noticed only by
//! [`verify`].

pub mod verify;

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::corpus::{Corpus, Record};
use crate::error::{Error, Result};
use crate::fsutil::write_atomic;
#[cfg(feature = "harness")]
use crate::sparql::EndpointSpec;
use crate::sparql::{Endpoint, EndpointInfo, QueryError, canonical_blank_nodes, hex};
use crate::table::Table;

/// Version of the ground-truth file format; part of every fingerprint.
pub const GROUND_TRUTH_FORMAT: u32 = 1;

/// Default name of the ground-truth folder inside a corpus.
pub const GROUND_TRUTH_DIR: &str = "ground-truth";

/// The JSON record written beside each ground-truth CSV.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroundTruthMeta {
    /// [`GROUND_TRUTH_FORMAT`] when written.
    pub format: u32,
    /// The record id.
    pub id: String,
    /// Who answered.
    pub endpoint: EndpointInfo,
    /// The answer key text as run (line ends normalized to LF).
    pub answer_key: String,
    /// SHA-256 of `answer_key`, `sha256:` + 64 hex digits.
    pub answer_key_sha256: String,
    /// `SELECT`, `ASK`, `CONSTRUCT` or `DESCRIBE`.
    pub form: String,
    /// The answer key is a SELECT with a top-level ORDER BY: row order is
    /// part of the answer.
    pub ordered: bool,
    /// Column names of the CSV, in SELECT order.
    pub columns: Vec<String>,
    /// Rows in the CSV.
    pub row_count: usize,
    /// SHA-256 of the CSV bytes, to notice a hand-edited file.
    pub csv_sha256: String,
    /// See the module docs.
    pub fingerprint: String,
}

/// One ground truth read back: its record and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct GroundTruth {
    /// The JSON record.
    pub meta: GroundTruthMeta,
    /// The expected rows.
    pub table: Table,
}

/// The ground-truth folder for `corpus`: `explicit` if given, else
/// `CORPUS/ground-truth`.
pub fn ground_truth_dir(corpus: &Corpus, explicit: Option<&Path>) -> PathBuf {
    explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(|| corpus.root.join(GROUND_TRUTH_DIR))
}

/// The `(csv, json)` paths of a record's ground truth in `dir`.
pub fn paths(dir: &Path, id: &str) -> (PathBuf, PathBuf) {
    let base = dir.join(id);
    let mut csv = base.clone().into_os_string();
    csv.push(".csv");
    let mut json = base.into_os_string();
    json.push(".json");
    (PathBuf::from(csv), PathBuf::from(json))
}

/// The answer key as fingerprinted and recorded: LF line ends, no trailing
/// whitespace at the end.
pub fn normalized_answer_key(record: &Record) -> String {
    record.query.replace("\r\n", "\n").trim_end().to_string()
}

/// `sha256:` and the lowercase hex SHA-256 of `bytes`: the digest a
/// ground-truth JSON records for its CSV.
pub fn sha256_tag(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

/// The fingerprint of `record` answered by an endpoint of `identity`.
pub fn fingerprint(record: &Record, identity: &str) -> String {
    let mut h = Sha256::new();
    h.update(format!("okn-benchmark ground truth {GROUND_TRUTH_FORMAT}\0").as_bytes());
    h.update(identity.as_bytes());
    h.update(b"\0");
    h.update(normalized_answer_key(record).as_bytes());
    format!("sha256:{}", hex(&h.finalize()))
}

/// Reads a record's ground truth from `dir`, if both files are there.
/// Each file is read only when it is a regular file
/// ([`crate::fsutil::read_file`]): a named pipe planted in a ground-truth
/// folder is named, never waited on (issue 24, item 3).
///
/// Errors: a file that exists but cannot be read or parsed (named, with the
/// line for CSV; a named pipe, socket or folder among them), or a CSV whose
/// bytes no longer match the JSON's digest.
pub fn load(dir: &Path, id: &str) -> Result<Option<GroundTruth>> {
    let (csv_path, json_path) = paths(dir, id);
    let Some(meta) = read_meta(&json_path)? else {
        return Ok(None);
    };
    let bytes = crate::fsutil::read_file(&csv_path)?;
    let table = Table::from_csv(&bytes).map_err(|e| match e.line {
        Some(line) => Error::at_line(&csv_path, line, e.message),
        None => Error::file(&csv_path, e.message),
    })?;
    if sha256_tag(&bytes) != meta.csv_sha256 {
        return Err(Error::file(
            &csv_path,
            "changed since 'reference' wrote it: run 'okn-benchmark reference' again to rebuild it",
        ));
    }
    Ok(Some(GroundTruth { meta, table }))
}

/// The ground-truth record at `json_path`; `Ok(None)` when there is none.
///
/// Errors: one that is not a regular file or cannot be read (named), or
/// does not parse (naming the line).
fn read_meta(json_path: &Path) -> Result<Option<GroundTruthMeta>> {
    let Some(bytes) = crate::fsutil::read_regular(json_path, crate::fsutil::Links::Follow)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::at_line(json_path, e.line() as u64, e.to_string()))
}

/// What `build` did with one record.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// No ground truth existed; it was built.
    Built {
        /// Rows in the result.
        rows: usize,
        /// Query time, seconds.
        seconds: f64,
    },
    /// Existing ground truth matched the fingerprint.
    Reused,
    /// Existing ground truth was stale (the reason says why), or `--force`
    /// asked for it, and it was rebuilt.
    Rebuilt {
        /// "answer key changed", "endpoint changed", "--force", ...
        reason: String,
        /// Rows in the new result.
        rows: usize,
        /// Query time, seconds.
        seconds: f64,
    },
    /// The answer key could not be run; nothing was written for it.
    Failed(String),
}

/// Why `meta` (cached ground truth) is not the ground truth of `record`'s
/// answer key as it is now, or `None` when it is: judging answers against
/// the ground truth of an edited key would misstate every score.
pub fn key_drift(record: &Record, meta: &GroundTruthMeta) -> Option<&'static str> {
    (meta.answer_key_sha256 != sha256_tag(normalized_answer_key(record).as_bytes()))
        .then_some("its answer key was edited after its ground truth was built")
}

/// The endpoint ground truth must have come from, as a staleness check
/// needs it: where it is, as named, and its identity
/// ([`crate::sparql::EndpointSpec::identity`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointCheck {
    /// The endpoint as named (a data path or a URL).
    pub location: String,
    /// Its identity in fingerprints (for RDF data, a digest of its files).
    pub identity: String,
}

/// Why `meta`, the cached ground truth of `record`, is not what
/// `reference` would build now, or `None` when it is: a format this
/// version does not write, an answer key edited since ([`key_drift`]),
/// and, given the `endpoint` it must come from, another endpoint or other
/// data behind it; then any other fingerprint mismatch. Every kind the
/// fingerprint covers (`docs/FORMAT.md`, "Ground truth (inside a corpus)";
/// issue 24, item 13). The rows against the CSV's digest are [`load`]'s.
pub fn drift(
    record: &Record,
    meta: &GroundTruthMeta,
    endpoint: Option<&EndpointCheck>,
) -> Option<String> {
    let mut why = Vec::new();
    if meta.format != GROUND_TRUTH_FORMAT {
        why.push(format!(
            "it was written in ground-truth format {}, and this version writes {GROUND_TRUTH_FORMAT}",
            meta.format
        ));
    }
    if let Some(edited) = key_drift(record, meta) {
        why.push(edited.to_string());
    }
    if let Some(endpoint) = endpoint {
        if meta.endpoint.identity != endpoint.identity {
            why.push(if meta.endpoint.location == endpoint.location {
                format!(
                    "the RDF data of {} changed after its ground truth was built (or the \
                     Oxigraph version reading it did)",
                    endpoint.location
                )
            } else {
                format!(
                    "it was built from {} ({}), and the reference endpoint, {}, is another \
                     endpoint or holds other data",
                    meta.endpoint.location, meta.endpoint.kind, endpoint.location
                )
            });
        } else if why.is_empty() && meta.fingerprint != fingerprint(record, &endpoint.identity) {
            why.push(
                "its fingerprint is not that of its answer key and endpoint (the record was \
                 edited by hand)"
                    .to_string(),
            );
        }
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// Refuses ground truth that is not what `reference` would build now
/// ([`drift`]: each record's cached ground truth, checked against the
/// endpoint it must come from when one is given), naming every stale one.
/// `rebuild` is the `reference` command that rebuilds it.
///
/// Errors: [`Error::Usage`] naming the stale records, why each is stale,
/// and the command.
pub fn refuse_stale<'a>(
    checks: impl IntoIterator<Item = (&'a Record, &'a GroundTruthMeta, Option<&'a EndpointCheck>)>,
    rebuild: &str,
) -> Result<()> {
    let stale: Vec<String> = checks
        .into_iter()
        .filter_map(|(record, meta, endpoint)| {
            drift(record, meta, endpoint).map(|why| format!("{} ({why})", record.id))
        })
        .collect();
    if stale.is_empty() {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "the cached ground truth of {} record{} is stale: {}. Run '{rebuild}' to rebuild it, \
         then run again",
        stale.len(),
        crate::format::plural(stale.len()),
        stale.join("; ")
    )))
}

/// Why existing ground truth no longer matches, or `None` if it does.
/// Its files are read only when they are regular files: a named pipe in
/// their place is refused by name, never waited on, and never replaced
/// unread (issue 24, item 3).
///
/// Errors: a ground-truth file there that is not a regular file or cannot
/// be opened (a named pipe, a folder, permission denied), naming it.
pub fn staleness(dir: &Path, record: &Record, identity: &str) -> Result<Option<String>> {
    let (csv_path, json_path) = paths(dir, &record.id);
    let not_regular = |e: Error| {
        Error::Other(format!(
            "{e}; remove it, then run 'okn-benchmark reference' again, which writes the \
             ground truth there"
        ))
    };
    let json = crate::fsutil::read_regular(&json_path, crate::fsutil::Links::Follow)
        .map_err(not_regular)?;
    let csv = crate::fsutil::read_regular(&csv_path, crate::fsutil::Links::Follow)
        .map_err(not_regular)?;
    let Some(json) = json else {
        return Ok(Some("missing".into()));
    };
    let Ok(meta) = serde_json::from_slice::<GroundTruthMeta>(&json) else {
        return Ok(Some(format!("{} is unreadable", json_path.display())));
    };
    if meta.format != GROUND_TRUTH_FORMAT {
        return Ok(Some(format!(
            "written in format {}, now {GROUND_TRUTH_FORMAT}",
            meta.format
        )));
    }
    if meta.fingerprint == fingerprint(record, identity) {
        return Ok(match csv {
            Some(bytes) if sha256_tag(&bytes) == meta.csv_sha256 => None,
            Some(_) => Some("the CSV was edited by hand".into()),
            None => Some("the CSV is missing".into()),
        });
    }
    let key_changed =
        meta.answer_key_sha256 != sha256_tag(normalized_answer_key(record).as_bytes());
    let endpoint_changed = meta.endpoint.identity != identity;
    Ok(Some(
        match (key_changed, endpoint_changed) {
            (true, true) => "answer key and endpoint changed",
            (true, false) => "answer key changed",
            (false, true) => "endpoint changed",
            (false, false) => "fingerprint changed",
        }
        .into(),
    ))
}

/// Runs one answer key: its rows as ground truth holds them (blank nodes
/// relabelled, [`canonical_blank_nodes`]).
///
/// Errors: [`Error::AtLine`] naming the record's file and the line of a
/// syntax error; [`Error::AnswerKey`] for an evaluation failure.
pub fn run_answer_key(record: &Record, endpoint: &dyn Endpoint) -> Result<Table> {
    let mut table = endpoint.query(&record.query).map_err(|e| match e {
        QueryError::Syntax {
            line: Some(line),
            message,
        } => Error::at_line(&record.path, record.query_line + line - 1, message),
        QueryError::Syntax {
            line: None,
            message,
        } => Error::at_line(&record.path, record.query_line, message),
        source @ (QueryError::Failed(_) | QueryError::TooLarge { .. }) => Error::AnswerKey {
            path: record.path.clone(),
            source: Box::new(source),
        },
    })?;
    canonical_blank_nodes(&mut table);
    Ok(table)
}

/// Runs one answer key and writes its ground truth (CSV, then JSON).
///
/// Errors: those of [`run_answer_key`]; a file that cannot be written.
pub fn build_one(dir: &Path, record: &Record, endpoint: &dyn Endpoint) -> Result<(usize, f64)> {
    let started = Instant::now();
    let table = run_answer_key(record, endpoint)?;
    let seconds = started.elapsed().as_secs_f64();
    let csv = table.to_csv();
    let answer_key = normalized_answer_key(record);
    let meta = GroundTruthMeta {
        format: GROUND_TRUTH_FORMAT,
        id: record.id.clone(),
        endpoint: endpoint.info().clone(),
        answer_key_sha256: sha256_tag(answer_key.as_bytes()),
        answer_key,
        form: record.form.as_str().to_string(),
        // Only a SELECT result has an order that is part of the answer.
        ordered: record.form == crate::sparql::QueryForm::Select
            && crate::sparql::has_top_level_order_by(&record.query),
        columns: table.columns.clone(),
        row_count: table.rows.len(),
        csv_sha256: sha256_tag(csv.as_bytes()),
        fingerprint: fingerprint(record, &endpoint.info().identity),
    };
    let (csv_path, json_path) = paths(dir, &record.id);
    write_atomic(&csv_path, csv.as_bytes())?;
    let mut json = serde_json::to_string_pretty(&meta).map_err(|e| Error::Other(e.to_string()))?;
    json.push('\n');
    write_atomic(&json_path, json.as_bytes())?;
    Ok((table.rows.len(), seconds))
}

#[cfg(feature = "harness")]
/// Builds ground truth for `records`: reuses what matches its fingerprint
/// (unless `force`), opens the endpoint only if something must run, and
/// reports each record's [`Outcome`] through `progress` as it goes.
///
/// Errors: only an endpoint that cannot be opened; a failing answer key is
/// an [`Outcome::Failed`] and the rest go on.
pub fn build(
    dir: &Path,
    records: &[&Record],
    spec: &EndpointSpec,
    force: bool,
    mut progress: impl FnMut(&Record, &Outcome),
) -> Result<Vec<Outcome>> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::file(
            dir,
            "is a file, not a folder: --ground-truth names the folder ground truth is kept in",
        ));
    }
    let identity = spec.identity();
    let mut endpoint: Option<Box<dyn Endpoint>> = None;
    let mut outcomes = Vec::with_capacity(records.len());
    for record in records {
        let stale = if force {
            Ok(Some("--force".to_string()))
        } else {
            staleness(dir, record, &identity)
        };
        let outcome = match stale {
            // A file in the way that cannot be read is named, not replaced.
            Err(e) => Outcome::Failed(e.to_string()),
            Ok(None) => Outcome::Reused,
            Ok(Some(reason)) => {
                if endpoint.is_none() {
                    endpoint = Some(spec.open()?);
                }
                let endpoint = endpoint.as_deref().expect("opened above");
                match build_one(dir, record, endpoint) {
                    Ok((rows, seconds)) if reason == "missing" => Outcome::Built { rows, seconds },
                    Ok((rows, seconds)) => Outcome::Rebuilt {
                        reason,
                        rows,
                        seconds,
                    },
                    Err(e) => Outcome::Failed(e.to_string()),
                }
            }
        };
        progress(record, &outcome);
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

/// Ground-truth files in `dir` whose record is not in the corpus at all
/// (the corpus moved on), as ids, sorted.
pub fn orphans(dir: &Path, corpus: &Corpus) -> Vec<String> {
    let known: std::collections::HashSet<&str> =
        corpus.records.iter().map(|r| r.id.as_str()).collect();
    let mut found = Vec::new();
    if !dir.is_dir() {
        return found;
    }
    for entry in walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .flatten()
    {
        let path = entry.path();
        // A hidden file (the verification log, `verify::VERIFIED_FILE`) is
        // no record's: a corpus has no hidden records.
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if entry.file_type().is_file() && !hidden && path.extension().is_some_and(|e| e == "json") {
            let id = crate::corpus::record_id(dir, path);
            if !known.contains(id.as_str()) {
                found.push(id);
            }
        }
    }
    found
}
