//! The corpus: a folder of `.rq` records, each a prose question (the `#+`
//! header's `summary`) paired with a SPARQL answer key (README.md, "The
//! corpus").
//!
//! - A record's **id** is its path below the corpus root without `.rq`, with
//!   `/` separators (`spoke-okn/copd_hard`).
//! - Its **tier** is what follows the last underscore of the file name
//!   (`spoke-okn_hard.rq` → `hard`); no underscore, no tier. Tiers are
//!   discovered, never named in code: a new file name makes a new tier.
//! - Selection ([`Selection`]) applies `--tier`, then `--exclude` globs over
//!   ids, then `--limit`, the same way for every command.
//! - `--corpus` also takes a git URL ([`git`]), cloned into a cache.

pub mod git;
pub mod header;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobMatcher};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::sparql::{QueryForm, query_form};
use header::HeaderValue;

/// One record of a corpus: a question and its answer key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// Path below the corpus root, without `.rq`, `/`-separated.
    pub id: String,
    /// What follows the last underscore of the file name, if any.
    pub tier: Option<String>,
    /// The `#+ tags:` list (knowledge-graph shortnames), each trimmed.
    pub tags: Vec<String>,
    /// The `#+ summary:` text: the prose question the agent is given.
    pub summary: String,
    /// The query form of the answer key.
    pub form: QueryForm,
    /// The file, as found under the corpus root.
    pub path: PathBuf,
    /// Every other header key, kept as metadata (sorted by key).
    pub metadata: BTreeMap<String, HeaderValue>,
    /// The answer key: the file's text after the header, line ends as in the
    /// file. Its first line is line [`Record::query_line`] of the file.
    #[serde(skip)]
    pub query: String,
    /// 1-based line of the file where the answer key starts.
    #[serde(skip)]
    pub query_line: u64,
    /// The `#+ expect.ID: ...` lines of the header, as written (trajectory
    /// expectations, `docs/TRAJECTORY.md`): each id (what follows
    /// `expect.`), its text and its 1-based line. Read into types by
    /// `crate::expectations`, which refuses what does not fit, naming the
    /// line; the corpus itself only keeps them out of [`Record::metadata`].
    #[serde(skip)]
    pub expectations: Vec<RawExpectation>,
}

/// The key prefix of an expectation line in a record's header
/// (`#+ expect.graphs: contract key-graphs queries=first`).
pub const EXPECT_PREFIX: &str = "expect.";

/// A header key meant as an expectation but not written `expect.ID`
/// (issue 27, item 5): `expect` in any case alone or followed by a
/// character that is not a letter or digit (`Expect.x`, `expect:`,
/// `expect_x`), and `expects`, `expectation` or `expectations` so
/// followed (`expects.x`), other than the exact `expect.` prefix. Such a line would
/// otherwise be kept as metadata silently.
fn looks_like_expect(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("expect") else {
        return false;
    };
    // `expects.x`, `expectation.x`, `expectations.x` too (issue 27, red
    // team); `expected_rows` and the like stay metadata.
    let rest = ["ations", "ation", "s"]
        .iter()
        .find_map(|s| rest.strip_prefix(s))
        .unwrap_or(rest);
    let loose = rest.chars().next().is_none_or(|c| !c.is_alphanumeric());
    loose && !(key.starts_with(EXPECT_PREFIX) && key.len() > EXPECT_PREFIX.len())
}

/// One `#+ expect.ID: TEXT` line of a record's header, unparsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawExpectation {
    /// What follows `expect.` in the key.
    pub id: String,
    /// The value (a list value is kept as its items joined by spaces, and
    /// refused by the parser as not one line).
    pub text: Result<String, Vec<String>>,
    /// 1-based line of the key in the file.
    pub line: u64,
}

/// A loaded corpus: every record found under the root, sorted by id.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// The corpus folder (for a git corpus, the checked-out subfolder).
    pub root: PathBuf,
    /// All records, sorted by id.
    pub records: Vec<Record>,
    /// Where a git corpus came from, if it did.
    pub source: Option<git::GitSource>,
    /// Paths named like records that are not regular files (a named pipe,
    /// a socket, a device): never read (reading a pipe would wait
    /// forever), and said by the command.
    pub skipped: Vec<PathBuf>,
}

impl Corpus {
    /// Opens `--corpus SPEC`: a local folder, or a `git+...` URL resolved
    /// through the cache ([`git::resolve`]; `refresh` fetches it again).
    pub fn open(spec: &str, refresh: bool) -> Result<Corpus> {
        if git::is_git_spec(spec) {
            let source = git::resolve(spec, refresh)?;
            let mut corpus = Corpus::load(&source.checkout)?;
            corpus.source = Some(source);
            Ok(corpus)
        } else {
            Corpus::load(Path::new(spec))
        }
    }

    /// Reads every `.rq` file under `root` (recursively, following no
    /// symlinks out of it), in id order.
    ///
    /// Errors: the root is missing or not a folder; a file is unreadable or
    /// malformed (named with its line); two files share one id (both named).
    pub fn load(root: &Path) -> Result<Corpus> {
        let meta = std::fs::metadata(root).map_err(|e| Error::io(root, "open corpus", e))?;
        if !meta.is_dir() {
            return Err(Error::file(
                root,
                "a corpus must be a folder of .rq files (or a git+https:// URL)",
            ));
        }
        let mut by_id: BTreeMap<String, Record> = BTreeMap::new();
        let mut skipped = Vec::new();
        // Hidden folders and files (.git, .cache) are not part of a corpus;
        // a symlinked record is read through its link.
        let walker = walkdir::WalkDir::new(root)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
        for entry in walker {
            let entry = entry.map_err(|e| {
                let path = e.path().unwrap_or(root).to_path_buf();
                Error::file(path, format!("cannot read corpus: {e}"))
            })?;
            let path = entry.path();
            if !is_record_file(path) || entry.file_type().is_dir() {
                continue;
            }
            if entry.path_is_symlink() && !path.is_file() {
                return Err(Error::file(
                    path,
                    "a symlink to nothing (or to a folder): remove it or point it at a .rq file",
                ));
            }
            if !path.is_file() {
                skipped.push(path.to_path_buf());
                continue;
            }
            // An id is text every page and terminal shows as it is: a file
            // name that is not UTF-8 would read as another's (both lossy),
            // and one holding control or bidirectional characters shows as
            // another id (a red team's finding on issue 24, item 20).
            if path
                .strip_prefix(root)
                .ok()
                .and_then(Path::to_str)
                .is_none()
            {
                return Err(Error::file(
                    path,
                    "its name (or a folder's above it) is not UTF-8, so its id could not be shown as it is: rename \
                     it",
                ));
            }
            let record = parse_record(root, path)?;
            if let Err(why) = crate::layout::check_id(&record.id, crate::layout::IdKind::Record) {
                return Err(Error::file(path, format!("{why}: rename it")));
            }
            if let Some(existing) = by_id.get(&record.id) {
                return Err(Error::file(
                    path,
                    format!(
                        "id '{}' is also the id of {}: rename one of them",
                        record.id,
                        existing.path.display()
                    ),
                ));
            }
            by_id.insert(record.id.clone(), record);
        }
        Ok(Corpus {
            root: root.to_path_buf(),
            records: by_id.into_values().collect(),
            source: None,
            skipped,
        })
    }

    /// The distinct tiers present, sorted.
    pub fn tiers(&self) -> Vec<String> {
        let mut tiers: Vec<String> = self.records.iter().filter_map(|r| r.tier.clone()).collect();
        tiers.sort();
        tiers.dedup();
        tiers
    }

    /// The records chosen by `selection`, in id order.
    ///
    /// Errors: `--tier` names no tier present (the error lists those that
    /// are); an `--exclude` pattern matches no record (named).
    pub fn select(&self, selection: &Selection) -> Result<Vec<&Record>> {
        let mut records: Vec<&Record> = self.records.iter().collect();
        if let Some(tier) = &selection.tier {
            records.retain(|r| r.tier.as_deref() == Some(tier.as_str()));
            if records.is_empty() {
                let tiers = self.tiers();
                return Err(Error::Usage(format!(
                    "--tier {tier}: no record of {} has that tier (tiers present: {})",
                    self.root.display(),
                    if tiers.is_empty() {
                        "none".to_string()
                    } else {
                        tiers.join(", ")
                    }
                )));
            }
        }
        // Each pattern must match something the tier keeps (repeated or
        // overlapping patterns are fine), then all of them apply.
        for pattern in &selection.exclude {
            if !records.iter().any(|r| pattern.matcher.is_match(&r.id)) {
                return Err(Error::Usage(format!(
                    "--exclude '{}' matches no record id{}: check the pattern against 'corpus list'",
                    pattern.text,
                    selection
                        .tier
                        .as_ref()
                        .map(|t| format!(" in tier {t}"))
                        .unwrap_or_default()
                )));
            }
        }
        records.retain(|r| !selection.exclude.iter().any(|p| p.matcher.is_match(&r.id)));
        if let Some(limit) = selection.limit {
            records.truncate(limit);
        }
        Ok(records)
    }
}

/// Which records of a corpus a command works on: `--tier`, `--exclude`
/// (applied before `--limit`), `--limit`.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Keep only records of this tier.
    pub tier: Option<String>,
    /// Drop records whose id matches any of these globs.
    pub exclude: Vec<ExcludePattern>,
    /// Keep at most this many (after the rest).
    pub limit: Option<usize>,
}

/// One `--exclude` glob over record ids, with its text for messages.
#[derive(Debug, Clone)]
pub struct ExcludePattern {
    /// The pattern as given.
    pub text: String,
    matcher: GlobMatcher,
}

impl ExcludePattern {
    /// True when the pattern matches this record id.
    pub fn matches(&self, id: &str) -> bool {
        self.matcher.is_match(id)
    }

    /// Compiles a glob (`*`, `?`, `[..]`, `{a,b}`; `*` also crosses `/`).
    ///
    /// Errors: [`Error::Usage`] naming the pattern when it is not a glob.
    pub fn new(text: &str) -> Result<ExcludePattern> {
        let glob = Glob::new(text)
            .map_err(|e| Error::Usage(format!("--exclude '{text}' is not a valid glob: {e}")))?;
        Ok(ExcludePattern {
            text: text.to_string(),
            matcher: glob.compile_matcher(),
        })
    }
}

fn is_record_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("rq"))
}

/// The id of `path` below `root`: relative, `/`-separated, without `.rq`.
pub fn record_id(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.last_mut()
        && let Some(dot) = last.rfind('.')
    {
        last.truncate(dot);
    }
    parts.join("/")
}

/// The tier of a record id: what follows the last underscore of its file
/// name; `None` when there is none (or nothing follows it).
pub fn tier_of(id: &str) -> Option<String> {
    let name = id.rsplit('/').next().unwrap_or(id);
    let (_, tier) = name.rsplit_once('_')?;
    (!tier.is_empty()).then(|| tier.to_string())
}

/// Parses one `.rq` file.
///
/// Errors (each naming the file and line): not UTF-8; a malformed header; no
/// `summary`; no SELECT/ASK/CONSTRUCT/DESCRIBE in the answer key.
pub fn parse_record(root: &Path, path: &Path) -> Result<Record> {
    let text = crate::fsutil::read_text(path)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let (header, body) =
        header::split_header(text).map_err(|e| Error::at_line(path, e.line, e.message))?;
    let mut entries = header.entries;
    let summary = match entries.remove("summary") {
        Some((HeaderValue::Text(s), line)) => {
            if s.trim().is_empty() {
                return Err(Error::at_line(path, line, "the summary is empty"));
            }
            s
        }
        Some((HeaderValue::List(_), line)) => {
            return Err(Error::at_line(
                path,
                line,
                "summary must be text, not a list",
            ));
        }
        None => {
            return Err(Error::at_line(
                path,
                1,
                "no '#+ summary:' line: every record needs the question in its header",
            ));
        }
    };
    let tags = match entries.remove("tags") {
        Some((HeaderValue::List(items), _)) => items,
        Some((HeaderValue::Text(t), _)) if t.is_empty() => Vec::new(),
        Some((HeaderValue::Text(t), _)) => vec![t],
        None => Vec::new(),
    };
    let form = query_form(body).ok_or_else(|| {
        Error::at_line(
            path,
            header.body_line,
            "no SELECT, ASK, CONSTRUCT or DESCRIBE query after the header",
        )
    })?;
    if let Some((key, (_, line))) = entries.iter().find(|(k, _)| looks_like_expect(k)) {
        return Err(Error::at_line(
            path,
            *line,
            format!(
                "'#+ {key}:' is not an expectation: did you mean expect.ID (lower case, with an \
                 id: '#+ expect.graphs: contract key-graphs')?"
            ),
        ));
    }
    let expect_keys: Vec<String> = entries
        .keys()
        .filter(|k| k.starts_with(EXPECT_PREFIX))
        .cloned()
        .collect();
    let mut expectations = Vec::new();
    for key in expect_keys {
        if let Some((value, line)) = entries.remove(&key) {
            expectations.push(RawExpectation {
                id: key[EXPECT_PREFIX.len()..].to_string(),
                text: match value {
                    HeaderValue::Text(t) => Ok(t),
                    HeaderValue::List(items) => Err(items),
                },
                line,
            });
        }
    }
    expectations.sort_by_key(|e| e.line);
    let id = record_id(root, path);
    Ok(Record {
        tier: tier_of(&id),
        id,
        tags,
        summary,
        form,
        path: path.to_path_buf(),
        metadata: entries.into_iter().map(|(k, (v, _))| (k, v)).collect(),
        query: body.to_string(),
        query_line: header.body_line,
        expectations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_follow_the_last_underscore() {
        assert_eq!(tier_of("spoke-okn_hard").as_deref(), Some("hard"));
        assert_eq!(
            tier_of("sockg/average_soc_stock_0_30cm").as_deref(),
            Some("30cm")
        );
        assert_eq!(tier_of("a_b/plain"), None);
        assert_eq!(tier_of("trailing_"), None);
    }

    #[test]
    fn ids_are_relative_slash_paths_without_rq() {
        let root = Path::new("/c");
        assert_eq!(record_id(root, Path::new("/c/a/b_x.rq")), "a/b_x");
    }
}
