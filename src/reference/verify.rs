//! `reference --verify`: cached ground truth checked against what its
//! endpoint answers now.
//!
//! A fingerprint can only say what `reference` knows without querying
//! (`docs/FORMAT.md`, "Ground truth (inside a corpus)"): for a SPARQL URL
//! that is the URL, so an update made at the endpoint leaves every cached
//! record reused. Verifying re-runs each selected answer key and compares
//! its rows with the cached ones: as a multiset, or in order where the key
//! is ordered, cell text for cell text (both sides come from the same
//! pipeline, so no denotation rule is needed), columns by name and order.
//!
//! It writes no ground truth. What it found is logged per record in the
//! ground-truth folder's [`VERIFIED_FILE`] ([`VerifiedFile`]), so that
//! `rescore` and `report` can say when the ground truth a runs root was
//! judged by was last verified.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::corpus::Record;
use crate::error::{Error, Result};
use crate::sparql::EndpointInfo;
use crate::table::Table;
// Running the answer keys again: the `harness` feature (Cargo.toml).
#[cfg(feature = "harness")]
use {
    super::{GROUND_TRUTH_FORMAT, GroundTruth, key_drift, load, run_answer_key},
    crate::sparql::{Endpoint, EndpointSpec},
};

/// The verification log's name in a ground-truth folder. Hidden: a corpus
/// has no hidden records, so it is never any record's ground truth.
pub const VERIFIED_FILE: &str = ".verified.json";

/// Version of the verification log's format.
pub const VERIFIED_FORMAT: u32 = 1;

/// The verification log: the last check of each record verified.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifiedFile {
    /// [`VERIFIED_FORMAT`] when written.
    pub format: u32,
    /// By record id (sorted): the last time its cached ground truth was
    /// checked. A record never checked has no entry.
    pub records: BTreeMap<String, VerifiedRecord>,
}

/// One record's last check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifiedRecord {
    /// When the `reference --verify` run that checked it began: RFC 3339
    /// UTC, to the second (one moment for every record of a run).
    pub verified_at: String,
    /// Who answered the check (for HTTP, with the engine its `Server`
    /// header named then).
    pub endpoint: EndpointInfo,
    /// The cached ground truth's fingerprint, as checked.
    pub fingerprint: String,
    /// The cached CSV's digest, as checked: a runs root holding a copy with
    /// this digest was judged by the rows this check was about.
    pub csv_sha256: String,
    /// The endpoint's rows matched the cached ones.
    pub matched: bool,
}

/// What the check found for one record.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The endpoint answers the cached rows.
    Same {
        /// Rows in both.
        rows: usize,
    },
    /// The endpoint answers other rows (or the same rows in another order,
    /// for an ordered key, or other columns).
    Differs {
        /// The cached ground truth.
        cached: Table,
        /// What the endpoint answers now (blank nodes relabelled as
        /// ground truth has them).
        now: Table,
        /// Whether row order is part of the answer.
        ordered: bool,
    },
    /// Nothing was compared: no cached ground truth, ground truth of an
    /// answer key edited since, or cached files that cannot be used. The
    /// text says which, and what to do.
    Unchecked(String),
    /// The answer key could not be run.
    Failed(String),
}

/// One record's verification.
#[derive(Debug, Clone, PartialEq)]
pub struct Verification {
    /// What was found.
    pub verdict: Verdict,
    /// Something worth saying beside it: the endpoint is not the one the
    /// ground truth was built from (its identity differs: another URL, or
    /// RDF files whose bytes changed), so `reference` would rebuild it.
    pub note: Option<String>,
    /// The log entry, when rows were compared.
    pub logged: Option<VerifiedRecord>,
}

/// Whether `now` is `cached`: the same columns in the same order, and the
/// same rows as a multiset, or in the same order when `ordered`.
pub fn same_rows(cached: &Table, now: &Table, ordered: bool) -> bool {
    if cached.columns != now.columns || cached.rows.len() != now.rows.len() {
        return false;
    }
    if ordered {
        return cached.rows == now.rows;
    }
    sorted_rows(cached) == sorted_rows(now)
}

fn sorted_rows(table: &Table) -> Vec<&Vec<String>> {
    let mut rows: Vec<&Vec<String>> = table.rows.iter().collect();
    rows.sort_unstable();
    rows
}

#[cfg(feature = "harness")]
/// The cached ground truth of `record` in `dir` if it can be checked, or
/// why not.
fn checkable(dir: &Path, record: &Record) -> std::result::Result<GroundTruth, String> {
    let truth = match load(dir, &record.id) {
        Ok(Some(truth)) => truth,
        Ok(None) => {
            return Err("no cached ground truth: run 'okn-benchmark reference' to build it".into());
        }
        Err(e) => return Err(e.to_string()),
    };
    if truth.meta.format != GROUND_TRUTH_FORMAT {
        return Err(format!(
            "its ground truth was written in format {}, now {GROUND_TRUTH_FORMAT}: run \
             'okn-benchmark reference' to rebuild it",
            truth.meta.format
        ));
    }
    if let Some(why) = key_drift(record, &truth.meta) {
        return Err(format!(
            "{why}: run 'okn-benchmark reference' to rebuild it"
        ));
    }
    Ok(truth)
}

#[cfg(feature = "harness")]
/// Checks one record's cached `truth` against `endpoint`.
fn check(
    record: &Record,
    truth: GroundTruth,
    endpoint: &dyn Endpoint,
    verified_at: &str,
) -> Verification {
    let note = (truth.meta.endpoint.identity != endpoint.info().identity).then(|| {
        format!(
            "its ground truth was built from another endpoint ({}), or other data: \
             'reference' would rebuild it",
            truth.meta.endpoint.location
        )
    });
    let now = match run_answer_key(record, endpoint) {
        Ok(table) => table,
        Err(e) => {
            return Verification {
                verdict: Verdict::Failed(e.to_string()),
                note,
                logged: None,
            };
        }
    };
    let ordered = truth.meta.ordered;
    let matched = same_rows(&truth.table, &now, ordered);
    let logged = VerifiedRecord {
        verified_at: verified_at.to_string(),
        endpoint: endpoint.info().clone(),
        fingerprint: truth.meta.fingerprint.clone(),
        csv_sha256: truth.meta.csv_sha256.clone(),
        matched,
    };
    let verdict = if matched {
        Verdict::Same {
            rows: now.rows.len(),
        }
    } else {
        Verdict::Differs {
            cached: truth.table,
            now,
            ordered,
        }
    };
    Verification {
        verdict,
        note,
        logged: Some(logged),
    }
}

#[cfg(feature = "harness")]
/// Checks the cached ground truth in `dir` of each of `records` against
/// `spec`, reporting each [`Verification`] through `progress` as it goes.
/// The endpoint is opened only if some record can be checked. Writes
/// nothing: [`record`] logs the outcome.
///
/// Errors: only an endpoint that cannot be opened; a failing answer key is
/// a [`Verdict::Failed`] and the rest go on.
pub fn verify(
    dir: &Path,
    records: &[&Record],
    spec: &EndpointSpec,
    mut progress: impl FnMut(&Record, &Verification),
) -> Result<Vec<Verification>> {
    let started = crate::format::utc_now();
    let mut endpoint: Option<Box<dyn Endpoint>> = None;
    let mut out = Vec::with_capacity(records.len());
    for record in records {
        let verification = match checkable(dir, record) {
            Err(why) => Verification {
                verdict: Verdict::Unchecked(why),
                note: None,
                logged: None,
            },
            Ok(truth) => {
                if endpoint.is_none() {
                    endpoint = Some(spec.open()?);
                }
                let endpoint = endpoint.as_deref().expect("opened above");
                check(record, truth, endpoint, &started)
            }
        };
        progress(record, &verification);
        out.push(verification);
    }
    Ok(out)
}

/// The verification log's path in ground-truth folder `dir`.
pub fn log_path(dir: &Path) -> PathBuf {
    dir.join(VERIFIED_FILE)
}

/// Reads the verification log of `dir`; an absent log is an empty one.
///
/// Errors: a log that exists but cannot be read or parsed (named, with the
/// line).
pub fn read_log(dir: &Path) -> Result<VerifiedFile> {
    let path = log_path(dir);
    if !path.is_file() {
        return Ok(VerifiedFile {
            format: VERIFIED_FORMAT,
            records: BTreeMap::new(),
        });
    }
    crate::fsutil::read_json(&path)
}

/// Logs what `verifications` (of `records`, in order) found into `dir`'s
/// verification log, keeping the entries of records not checked now.
/// Returns the log's path, or `None` when nothing was compared (and nothing
/// written). An unreadable log is replaced: it holds no ground truth.
///
/// Errors: the log cannot be written.
pub fn record(
    dir: &Path,
    records: &[&Record],
    verifications: &[Verification],
) -> Result<Option<PathBuf>> {
    let entries: Vec<(&str, &VerifiedRecord)> = records
        .iter()
        .zip(verifications)
        .filter_map(|(r, v)| v.logged.as_ref().map(|l| (r.id.as_str(), l)))
        .collect();
    if entries.is_empty() {
        return Ok(None);
    }
    if !dir.is_dir() {
        return Err(Error::file(dir, "the ground-truth folder is gone"));
    }
    let mut log = read_log(dir).unwrap_or_default();
    log.format = VERIFIED_FORMAT;
    for (id, entry) in entries {
        log.records.insert(id.to_string(), entry.clone());
    }
    let path = log_path(dir);
    crate::fsutil::write_json(&path, &log)?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(columns: &[&str], rows: &[&[&str]]) -> Table {
        Table {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: rows
                .iter()
                .map(|r| r.iter().map(|c| c.to_string()).collect())
                .collect(),
        }
    }

    #[test]
    fn rows_compare_as_a_multiset_unless_ordered() {
        let a = table(&["x", "y"], &[&["1", "a"], &["2", "b"], &["2", "b"]]);
        let shuffled = table(&["x", "y"], &[&["2", "b"], &["1", "a"], &["2", "b"]]);
        assert!(same_rows(&a, &a, true));
        assert!(same_rows(&a, &shuffled, false));
        assert!(!same_rows(&a, &shuffled, true));
        // A duplicate counts.
        let once = table(&["x", "y"], &[&["1", "a"], &["2", "b"], &["1", "a"]]);
        assert!(!same_rows(&a, &once, false));
        // Columns by name and order.
        let renamed = table(&["x", "z"], &[&["1", "a"], &["2", "b"], &["2", "b"]]);
        assert!(!same_rows(&a, &renamed, false));
        let swapped = table(&["y", "x"], &[&["a", "1"], &["b", "2"], &["b", "2"]]);
        assert!(!same_rows(&a, &swapped, false));
    }
}
