//! A corpus's default expectations, from the `[expectations]` table of the
//! nearest `okn-benchmark.toml` at or above the corpus folder
//! (`docs/TRAJECTORY.md`, "Corpus defaults"):
//!
//! ```toml
//! [expectations."corpus/questions"]   # a corpus folder, relative to this file
//! graphs = "contract key-graphs queries=first"
//!
//! [expectations."*"]                         # every corpus under this file
//! discovery = "quality discovery-first"
//! ```
//!
//! A record replaces a default by giving the same id, or turns it off
//! (`#+ expect.ID: off`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Expectation, parse_line};
use crate::corpus::Record;
use crate::error::{Error, Result};
use crate::toml_file::{Spanned, TomlFile};

/// The file's name (`crate::config::CONFIG_FILE` in the harness).
pub const CONFIG_FILE: &str = "okn-benchmark.toml";

/// The tables `okn-benchmark.toml` may hold: the harness's
/// (`crate::config::Config`: `reference`, `sparql_only`) and
/// `expectations`. Anything else is refused, so a misspelt table is never
/// ignored (issue 27, red team).
pub const TABLES: [&str; 3] = ["reference", "sparql_only", "expectations"];

/// The key of the table whose defaults apply to every corpus.
pub const EVERY_CORPUS: &str = "*";

/// One default line: its id, its text and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultLine {
    /// The expectation id (the key).
    pub id: String,
    /// The line (the value).
    pub text: String,
    /// 1-based line in `okn-benchmark.toml`.
    pub line: u64,
}

/// The defaults that apply to one corpus: the lines of `[expectations."*"]`
/// and of the table naming the corpus folder (which win by id).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Defaults {
    /// The `okn-benchmark.toml` they come from, when one was found.
    pub file: Option<PathBuf>,
    /// By id.
    pub lines: BTreeMap<String, DefaultLine>,
}

#[derive(serde::Deserialize)]
struct File {
    #[serde(default)]
    expectations: BTreeMap<String, BTreeMap<String, Spanned<String>>>,
}

impl Defaults {
    /// The defaults of the corpus folder `corpus_root`: read from the
    /// nearest `okn-benchmark.toml` at or above it. None found, or one
    /// without `[expectations]`: no defaults.
    ///
    /// Errors: the file cannot be read or is not TOML; `[expectations]`
    /// holds anything but tables of strings (named at its line).
    pub fn find(corpus_root: &Path) -> Result<Defaults> {
        let Ok(root) = std::fs::canonicalize(corpus_root) else {
            return Ok(Defaults::default());
        };
        let Some(path) = root
            .ancestors()
            .map(|d| d.join(CONFIG_FILE))
            .find(|p| p.is_file())
        else {
            return Ok(Defaults::default());
        };
        let file = TomlFile::read(&path)?;
        let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        let parsed: File = lenient(&file)?;
        let mut lines = BTreeMap::new();
        let mut own = BTreeMap::new();
        check_every_table(&file, &dir, &parsed)?;
        for (corpus, table) in &parsed.expectations {
            let target = if corpus == EVERY_CORPUS {
                &mut lines
            } else if std::fs::canonicalize(dir.join(corpus)).ok().as_deref() == Some(&root) {
                &mut own
            } else {
                continue;
            };
            for (id, text) in table {
                target.insert(
                    id.clone(),
                    DefaultLine {
                        id: id.clone(),
                        text: text.get_ref().clone(),
                        line: file.line(text),
                    },
                );
            }
        }
        lines.extend(own);
        Ok(Defaults {
            file: Some(file.path.clone()),
            lines,
        })
    }
}

/// The corpus a runs root's condition was recorded from (`--corpus` as
/// its condition file records it, `settings.corpus`), found as `rescore`
/// and the loaders find it: relative to where the tool runs. `Ok(None)`
/// when it is not a folder from here (a git corpus, a root copied
/// elsewhere): its recorded expectations cannot be checked.
///
/// Errors: a folder that is here but does not load as a corpus
/// ([`crate::corpus::Corpus::load`]), or whose `okn-benchmark.toml` does
/// not read ([`Defaults::find`]): bad input, never a reason to take the
/// recorded expectations unchecked (issue 27).
pub fn recorded_corpus(given: &str) -> Result<Option<(crate::corpus::Corpus, Defaults)>> {
    let path = Path::new(given);
    if !path.is_dir() {
        return Ok(None);
    }
    let corpus = crate::corpus::Corpus::load(path)?;
    let defaults = Defaults::find(&corpus.root)?;
    Ok(Some((corpus, defaults)))
}

/// Every table of `[expectations]` is checked, whichever corpus is being
/// read (issue 27, item 4): each line must read ([`parse_line`]), and a
/// key other than `"*"` must name an existing folder relative to the
/// file's folder `dir`, so no default is ignored silently.
///
/// Errors (exit 2), naming the file and the line: the first line that
/// does not read; a key naming no folder, with the corpus folders that do
/// exist (folders holding `.rq` records) as a hint.
fn check_every_table(file: &TomlFile, dir: &Path, parsed: &File) -> Result<()> {
    // The line of a table's header, for the refusals that name a key.
    let line_of = |corpus: &str| {
        file.text
            .lines()
            .position(|l| l.trim_start().starts_with("[expectations") && l.contains(corpus))
            .map_or(1, |i| i as u64 + 1)
    };
    // Canonical folder → the key that named it first.
    let mut named: BTreeMap<PathBuf, &String> = BTreeMap::new();
    for (corpus, table) in &parsed.expectations {
        for (id, text) in table {
            let refused = match parse_line(id, text.get_ref()) {
                Err(why) => Some(why),
                // `off` turns a default off in a record; as a default it
                // would mean nothing (issue 27, red team).
                Ok(None) => Some(
                    "is 'off', which a record writes to turn a default off; a default gives an \
                     expectation: remove the line"
                        .to_string(),
                ),
                Ok(Some(_)) => None,
            };
            if let Some(why) = refused {
                return Err(Error::at_line(
                    &file.path,
                    file.line(text),
                    format!("default expectation '{id}' of [expectations.\"{corpus}\"]: {why}"),
                ));
            }
        }
        if corpus.trim().is_empty() {
            return Err(Error::at_line(
                &file.path,
                line_of("\"\""),
                "[expectations.\"\"] names no corpus folder: give a folder relative to this \
                 file, or \"*\" for every corpus"
                    .to_string(),
            ));
        }
        if corpus == EVERY_CORPUS {
            continue;
        }
        if let Ok(real) = std::fs::canonicalize(dir.join(corpus))
            && real.is_dir()
        {
            // Two spellings of one folder: one table would win silently.
            if let Some(first) = named.insert(real, corpus) {
                return Err(Error::at_line(
                    &file.path,
                    line_of(corpus),
                    format!(
                        "[expectations.\"{corpus}\"] names the same folder as \
                         [expectations.\"{first}\"]: give each corpus one table"
                    ),
                ));
            }
            continue;
        }
        let line = line_of(corpus);
        let folders = corpus_folders(dir);
        let hint = if folders.is_empty() {
            "no folder here holds .rq records".to_string()
        } else {
            format!("corpus folders here: {}", folders.join(", "))
        };
        return Err(Error::at_line(
            &file.path,
            line,
            format!(
                "[expectations.\"{corpus}\"] names no folder relative to this file{}: give a \
                 corpus folder or \"*\" ({hint})",
                crate::suggest::did_you_mean(corpus, folders.iter().map(String::as_str))
            ),
        ));
    }
    Ok(())
}

/// The folders under `dir` (at most 4 levels down, hidden ones and
/// `target` skipped) that hold a `.rq` record, relative to `dir` with `/`
/// separators, sorted: the hint of a corpus key that names none.
fn corpus_folders(dir: &Path) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    let walk = walkdir::WalkDir::new(dir)
        .max_depth(5)
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !(e.file_name().to_string_lossy().starts_with('.') || e.file_name() == "target")
        });
    for entry in walk.flatten() {
        if entry.file_type().is_file() && entry.path().extension().is_some_and(|x| x == "rq") {
            let Some(parent) = entry.path().parent() else {
                continue;
            };
            if let Ok(rel) = parent.strip_prefix(dir)
                && !rel.as_os_str().is_empty()
            {
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.insert(parts.join("/"));
            }
        }
    }
    out.into_iter().collect()
}

/// The `[expectations]` table of `file`, every other table ignored (they
/// are the harness's, `crate::config`, which refuses unknown keys itself).
fn lenient(file: &TomlFile) -> Result<File> {
    #[derive(serde::Deserialize)]
    struct Any {
        #[serde(default)]
        expectations: Option<toml::Value>,
    }
    // A misspelt table (`[expectation."..."]`) would leave every default
    // of it unread: the file's tables are the harness's (`crate::config`)
    // and this one, and no other is taken.
    let top: toml::Table = file.parse()?;
    if let Some(key) = top.keys().find(|k| !TABLES.contains(&k.as_str())) {
        let line = file
            .text
            .lines()
            .position(|l| {
                let l = l.trim_start();
                l.starts_with(&format!("[{key}")) || l.starts_with(key.as_str())
            })
            .map_or(1, |i| i as u64 + 1);
        return Err(Error::at_line(
            &file.path,
            line,
            format!(
                "unknown table or key '{key}'{}: {} holds {}",
                crate::suggest::did_you_mean(key, TABLES.iter().copied()),
                CONFIG_FILE,
                TABLES.join(", ")
            ),
        ));
    }
    let any: Any = file.parse()?;
    if any.expectations.is_none() {
        return Ok(File {
            expectations: BTreeMap::new(),
        });
    }
    file.parse::<File>().map_err(|e| match e {
        Error::AtLine {
            path,
            line,
            message,
        } => Error::at_line(
            path,
            line,
            format!(
                "{message}: [expectations.\"CORPUS\"] maps ids to lines, as in \
                 graphs = \"contract key-graphs queries=first\" (docs/TRAJECTORY.md)"
            ),
        ),
        other => other,
    })
}

/// The expectations that apply to `record`: `defaults`, then the
/// record's own `#+ expect.ID:` lines (replacing a default of the same id,
/// or turning it off), sorted by id.
///
/// Errors (exit 2), each naming the file and line: a line that does not
/// read ([`parse_line`]); `off` with no default of that id; a record's
/// line that could never fail on its answer key ([`super::cannot_fail`]);
/// a list where one line belongs.
pub fn for_record(record: &Record, defaults: &Defaults) -> Result<Vec<Expectation>> {
    let mut out: BTreeMap<String, Expectation> = BTreeMap::new();
    for line in defaults.lines.values() {
        let path = defaults.file.as_deref().unwrap_or(Path::new(CONFIG_FILE));
        match parse_line(&line.id, &line.text) {
            Ok(Some(e)) => {
                out.insert(e.id.clone(), e);
            }
            Ok(None) => {}
            Err(why) => {
                return Err(Error::at_line(
                    path,
                    line.line,
                    format!("default expectation '{}': {why}", line.id),
                ));
            }
        }
    }
    for raw in &record.expectations {
        let at = |why: String| {
            Error::at_line(
                &record.path,
                raw.line,
                format!("expectation '{}': {why}", raw.id),
            )
        };
        let text = raw.text.as_ref().map_err(|_| {
            at("is a list: an expectation is one line, 'TYPE CHECK [FIELD=VALUE ...]'".into())
        })?;
        match parse_line(&raw.id, text).map_err(at)? {
            Some(e) => {
                if let Some(why) = super::cannot_fail(&e, &record.query) {
                    return Err(at(why));
                }
                out.insert(e.id.clone(), e);
            }
            None => {
                if out.remove(&raw.id).is_none() {
                    return Err(at(format!(
                        "is 'off', but no corpus default has that id{}",
                        crate::suggest::did_you_mean(
                            &raw.id,
                            defaults.lines.keys().map(String::as_str)
                        )
                    )));
                }
            }
        }
    }
    Ok(out.into_values().collect())
}

/// The expectations of every record of `corpus`, by record id: how
/// `corpus list` and `selfcheck` refuse a line that does not read before
/// anything is run (issue 27, section 1).
///
/// Errors: as [`Defaults::find`] and [`for_record`], the first record's
/// in id order.
pub fn for_corpus(corpus: &crate::corpus::Corpus) -> Result<BTreeMap<String, Vec<Expectation>>> {
    let defaults = Defaults::find(&corpus.root)?;
    corpus
        .records
        .iter()
        .map(|r| Ok((r.id.clone(), for_record(r, &defaults)?)))
        .collect()
}
