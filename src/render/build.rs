//! `build`: find every input, compute every output, then either write
//! what changed or (`--check`) compare and report what is stale, missing
//! or orphaned (`docs/PUBLISHING.md`; the shape of rust-analyzer's
//! `ensure_file_contents`).
//!
//! Inputs, found under the scanned folders (the base folder by default;
//! `target/`, `site/`, `node_modules/` and hidden folders are skipped):
//! runs roots (a folder with `conditions/*.json`), studies (a folder with a
//! `study.toml`), and every Markdown file. Outputs: each runs root's
//! README.md and summary CSVs; each study's figures and the generated
//! regions of its prose; an `.html` page beside every Markdown file; and,
//! when the whole base is built, `site/`. Everything is a pure function of
//! the inputs, so a second build changes nothing.
//!
//! Small outputs are computed up front; the site's question and attempt
//! pages (a job per question) and each runs root's README, its page and
//! its site page (a job per root) are produced by jobs, run in parallel,
//! each output compared or written as it comes and let go, so memory
//! stays flat however many attempts a root holds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use super::assets;
use super::export::{BuildView, EXPORTERS};
use super::figures;
use super::site::{self, SiteRoot};
use super::study;
use super::{GENERATOR_MARK, Theme, markdown};
use crate::error::{Error, Result};
use crate::layout::RunsRoot;
use crate::report::load::Records;
use crate::report::view::RootView;

/// Folder names never scanned.
const SKIPPED: [&str; 6] = [
    "target",
    "site",
    "node_modules",
    "ground-truth",
    "templates",
    "static",
];

pub use super::Output;
pub use super::export::Job;
use super::page::{FILE_META, page_prefix};
pub use super::page::{html_path, page_text, page_with, stamp};
pub use super::streamed::{StreamJob, Streamed};

/// Everything a build would write.
pub struct Plan {
    /// Outputs computed up front.
    pub outputs: Vec<Output>,
    /// Outputs computed on demand.
    pub jobs: Vec<Job>,
    /// Outputs made as they are written, after every one of `jobs` has
    /// run ([`super::streamed`]).
    pub last: Vec<StreamJob>,
    /// Folders the build writes into (`figures/`, `site/`): a file there
    /// that carries a generator mark and that no output names is removed.
    pub owned_dirs: Vec<PathBuf>,
    /// Folders scanned for orphaned generated pages.
    pub scanned: Vec<PathBuf>,
    /// Non-fatal problems (missing images, regions outside a study), named.
    pub warnings: Vec<String>,
    /// Runs roots found and not published, because nobody chose to
    /// publish them: at most one line ([`Inputs::not_published_note`]).
    pub notes: Vec<String>,
    /// When planning began: a temporary file older than this is a killed
    /// build's leftover.
    pub started: std::time::SystemTime,
    /// Frozen runs roots: read, never written, nothing in them removed.
    pub frozen: Vec<PathBuf>,
    /// The generated files of frozen runs roots (README.md, the summary
    /// CSVs, README.html) as their records give them: compared with the
    /// disk, never written (issue 24, item 9).
    pub frozen_outputs: Vec<Output>,
    /// Generated files of a runs root that nothing produces any more (a
    /// question's `summary.csv` after its episodes went): orphans by name.
    pub stale: Vec<PathBuf>,
    /// The checks of recorded files the jobs make
    /// ([`super::export::RecordChecks`]): [`check`] and [`write()`] refuse
    /// a root whose files break a rule before writing anything.
    pub record_checks: Arc<super::export::RecordChecks>,
}

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            outputs: Vec::new(),
            jobs: Vec::new(),
            last: Vec::new(),
            owned_dirs: Vec::new(),
            scanned: Vec::new(),
            warnings: Vec::new(),
            notes: Vec::new(),
            started: std::time::SystemTime::now(),
            frozen: Vec::new(),
            frozen_outputs: Vec::new(),
            stale: Vec::new(),
            record_checks: Arc::default(),
        }
    }
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("outputs", &self.outputs.len())
            .field("jobs", &self.jobs.len())
            .field("owned_dirs", &self.owned_dirs)
            .finish()
    }
}

/// What was found to build from.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// Runs roots.
    pub roots: Vec<PathBuf>,
    /// StudyView folders.
    pub studies: Vec<PathBuf>,
    /// Markdown files outside runs roots.
    pub markdown: Vec<PathBuf>,
    /// Links to folders, not followed (a linked runs root would be
    /// published from outside the project).
    pub links: Vec<PathBuf>,
    /// Markdown names that are not regular files (a named pipe, socket,
    /// device): never read.
    pub special: Vec<PathBuf>,
    /// Runs roots with attempts recorded and no condition file yet (an
    /// interrupted first run): named, not published.
    pub unfinished: Vec<PathBuf>,
    /// Shard roots (`run --shard K/N`; a condition file records its
    /// `shard`, `docs/FORMAT.md`): a slice of a sweep, published only once
    /// `merge` joined it (issue 26, section 2). Named, not published.
    pub shards: Vec<PathBuf>,
    /// Runs roots under a folder the project's `.gitignore` or `.ignore`
    /// excludes (the README's examples write under `scratch/`): named,
    /// not published (issue 26, section 2).
    pub ignored: Vec<PathBuf>,
    /// Catalog runs: folders holding a catalog run's `results.json`.
    pub catalog_runs: Vec<PathBuf>,
    /// Catalog comparisons: folders holding a `comparison.toml`.
    pub comparisons: Vec<PathBuf>,
    /// What could not be walked, each named with why: a folder that
    /// cannot be read, an ignore file that is not a regular file (issue
    /// 24, items 2 and 8). Every caller refuses a build with any
    /// ([`Inputs::refuse_unreadable`]).
    pub unreadable: Vec<String>,
}

impl Inputs {
    /// The one line naming the runs roots found and not published
    /// ([`Inputs::shards`], [`Inputs::ignored`]), or `None` when there
    /// are none. Names at most five of each kind, then how many more.
    pub fn not_published_note(&self) -> Option<String> {
        let list = |roots: &[PathBuf], what: &str| -> Option<String> {
            if roots.is_empty() {
                return None;
            }
            let mut names: Vec<String> = roots.iter().take(5).map(|r| shown(r)).collect();
            if roots.len() > 5 {
                names.push(format!("{} more", roots.len() - 5));
            }
            Some(format!("{what} ({})", names.join(", ")))
        };
        let kinds: Vec<String> = [
            list(
                &self.ignored,
                "under a folder .gitignore or .ignore excludes",
            ),
            list(
                &self.shards,
                "shards of a sweep: merge them (okn-benchmark merge --out ROOT SHARD...) and the \
                 merged root is published",
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        if kinds.is_empty() {
            return None;
        }
        let count = self.ignored.len() + self.shards.len();
        Some(format!(
            "{count} runs root{} not published, as nobody chose to publish {}: {}",
            crate::format::plural(count),
            if count == 1 { "it" } else { "them" },
            kinds.join("; ")
        ))
    }

    /// Refuses what [`discover`] could not walk.
    ///
    /// Errors: [`Error::Other`] naming each ([`Inputs::unreadable`]),
    /// saying nothing was written.
    pub fn refuse_unreadable(&self) -> Result<()> {
        if self.unreadable.is_empty() {
            return Ok(());
        }
        Err(Error::Other(format!(
            "{} place{} in the project could not be read, so nothing was built (what is there \
             would be silently left out):\n  {}",
            self.unreadable.len(),
            crate::format::plural(self.unreadable.len()),
            self.unreadable.join("\n  ")
        )))
    }
}

/// True for a folder or file name `build` never scans: hidden names and
/// `target`, `site`, `node_modules`, `ground-truth`, `templates`, `static`.
pub fn skipped(name: &str) -> bool {
    name.starts_with('.') || SKIPPED.contains(&name)
}

/// True for a folder `build` takes whole and does not look inside: a runs
/// root (finished or not) or a catalog run.
fn is_leaf(dir: &Path) -> bool {
    RunsRoot::has_conditions(dir)
        || (RunsRoot::is_runs_root(dir) && !RunsRoot::new(dir).condition_folders().is_empty())
        || crate::catalog::published::is_run(dir)
}

/// The ignore files the walk reads in every folder it enters, as the
/// `ignore` crate names them.
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// Each of `folder`'s ignore files ([`IGNORE_FILES`]) that is there and
/// is not a regular file (a named pipe, a socket, a folder; a link is
/// followed) or cannot be looked at, named: the `ignore` crate opens them
/// blocking, so a named pipe called `.gitignore` would hang `build`
/// forever (issue 24, item 2). Checked before the walk enters a folder.
fn unreadable_ignore_files(folder: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for name in IGNORE_FILES {
        let path = folder.join(name);
        let why = match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() => continue,
            Ok(meta) if meta.is_dir() => "a folder, where a file was expected".to_string(),
            Ok(_) => crate::fsutil::NOT_REGULAR.to_string(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => format!("cannot read: {e}"),
        };
        found.push(format!(
            "{}: {why}; build reads a folder's ignore files before it looks inside: put a \
             file there, or remove it",
            path.display()
        ));
    }
    found
}

/// The walk of one scanned folder: sorted by name, links not followed,
/// [`skipped`] names and the insides of [`is_leaf`] folders left out, and
/// what the project's `.gitignore` and `.ignore` files exclude left out
/// too, as ripgrep does (the `ignore` crate; `docs/PUBLISHING.md`, "What
/// build reads"). Only the project's own files count: those inside the
/// folder scanned, and, when it is a subfolder (`--root`), those of the
/// folders between the project (the current folder) and it. Not a
/// `.gitignore` above the project (a home folder's), a user's global
/// excludes or `.git/info/exclude`, which differ between machines and would
/// make two builds of one commit differ.
///
/// An ignore file that is not a regular file ([`unreadable_ignore_files`])
/// is pushed onto `refused` and its folder is not entered (nor walked at
/// all, when it is `dir` or above it): the caller refuses the build.
fn walk(dir: &Path, refused: &Arc<std::sync::Mutex<Vec<String>>>) -> Option<ignore::Walk> {
    let mut builder = ignore::WalkBuilder::new(dir);
    let mut above = unreadable_ignore_files(dir);
    if dir.is_relative() {
        for ancestor in dir.ancestors().skip(1) {
            let folder = if ancestor.as_os_str().is_empty() {
                Path::new(".")
            } else {
                ancestor
            };
            above.extend(unreadable_ignore_files(folder));
            for name in IGNORE_FILES {
                let file = folder.join(name);
                if file.is_file() {
                    let _ = builder.add_ignore(file);
                }
            }
        }
    }
    if !above.is_empty() {
        lock(refused).extend(above);
        return None;
    }
    let refused = Arc::clone(refused);
    builder
        .hidden(false)
        .follow_links(false)
        .git_global(false)
        .git_exclude(false)
        .git_ignore(true)
        .ignore(true)
        .parents(false)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| {
            let wanted = entry.depth() == 0
                || (!skipped(&entry.file_name().to_string_lossy())
                    && !entry.path().parent().is_some_and(is_leaf));
            // A folder's ignore files are read as the walk enters it.
            if wanted && entry.depth() > 0 && entry.file_type().is_some_and(|t| t.is_dir()) {
                let found = unreadable_ignore_files(entry.path());
                if !found.is_empty() {
                    lock(&refused).extend(found);
                    return false;
                }
            }
            wanted
        });
    Some(builder.build())
}

/// The list behind `list`, even if a thread panicked holding it.
fn lock(list: &std::sync::Mutex<Vec<String>>) -> std::sync::MutexGuard<'_, Vec<String>> {
    list.lock().unwrap_or_else(|e| e.into_inner())
}

/// Finds the inputs under `scan` (each a folder, or a runs root).
pub fn discover(scan: &[PathBuf]) -> Inputs {
    let mut inputs = Inputs::default();
    let refused = Arc::new(std::sync::Mutex::new(Vec::new()));
    for dir in scan {
        for entry in walk(dir, &refused).into_iter().flatten() {
            // A folder that cannot be read is named, never silently left
            // out of the site (issue 24, item 8).
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    inputs.unreadable.push(e.to_string());
                    continue;
                }
            };
            let path = entry.path();
            let Some(file_type) = entry.file_type() else {
                continue;
            };
            if entry.path_is_symlink() && path.is_dir() {
                inputs.links.push(path.to_path_buf());
                continue;
            }
            if file_type.is_dir() {
                if RunsRoot::has_conditions(path) {
                    if is_shard_root(path) {
                        inputs.shards.push(path.to_path_buf());
                    } else {
                        inputs.roots.push(path.to_path_buf());
                    }
                } else if RunsRoot::is_runs_root(path)
                    && !RunsRoot::new(path).condition_folders().is_empty()
                {
                    // A run's root with no condition finished yet.
                    inputs.unfinished.push(path.to_path_buf());
                } else if study::is_study(path) {
                    inputs.studies.push(path.to_path_buf());
                } else if crate::catalog::published::is_run(path) {
                    // Its report.md is made from results.json, not read.
                    inputs.catalog_runs.push(path.to_path_buf());
                    continue;
                }
                if crate::catalog::published::is_comparison(path) {
                    inputs.comparisons.push(path.to_path_buf());
                }
                continue;
            }
            if path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("md"))
            {
                // Reading a named pipe would wait forever: only regular
                // files (or links to them) are read.
                if path.is_file() {
                    inputs.markdown.push(path.to_path_buf());
                } else {
                    inputs.special.push(path.to_path_buf());
                }
            }
        }
    }
    inputs.ignored = ignored_roots(scan, &inputs);
    for list in [
        &mut inputs.roots,
        &mut inputs.shards,
        &mut inputs.studies,
        &mut inputs.markdown,
        &mut inputs.catalog_runs,
        &mut inputs.comparisons,
    ] {
        list.sort();
        list.dedup();
    }
    // The ignore files refused, after the walks' own errors.
    inputs
        .unreadable
        .extend(std::mem::take(&mut *lock(&refused)));
    inputs
}

/// A path as the terminal shows it: without a leading `./`.
fn shown(path: &Path) -> String {
    path.strip_prefix(".").unwrap_or(path).display().to_string()
}

/// True when a condition file of the runs root `dir` records a `shard`
/// (`run --shard K/N`, `docs/FORMAT.md`): the root is one slice of a
/// sweep. A condition file that cannot be read or parsed counts as none
/// here; loading the root names it.
fn is_shard_root(dir: &Path) -> bool {
    #[derive(serde::Deserialize)]
    struct Slice {
        #[serde(default)]
        shard: Option<serde::de::IgnoredAny>,
    }
    let Ok(entries) = std::fs::read_dir(dir.join(crate::layout::CONDITIONS_DIR)) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        path.extension().is_some_and(|x| x == "json")
            && crate::fsutil::read_regular(&path, crate::fsutil::Links::Follow)
                .ok()
                .flatten()
                .and_then(|bytes| serde_json::from_slice::<Slice>(&bytes).ok())
                .is_some_and(|slice| slice.shard.is_some())
    })
}

/// The runs roots under `scan` that the walk left out because an ignore
/// file excludes them (or a folder above them): every finished runs root a
/// walk without ignore files finds (hidden and [`skipped`] names and links
/// still left out, and nothing inside a runs root or catalog run looked
/// at) that `found` holds neither as a root nor as a shard. Sorted.
fn ignored_roots(scan: &[PathBuf], found: &Inputs) -> Vec<PathBuf> {
    let known: std::collections::HashSet<&Path> = found
        .roots
        .iter()
        .chain(&found.shards)
        .map(PathBuf::as_path)
        .collect();
    let mut ignored = Vec::new();
    for dir in scan {
        let mut walk = walkdir::WalkDir::new(dir).follow_links(false).into_iter();
        while let Some(entry) = walk.next() {
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_dir() {
                continue;
            }
            let path = entry.path();
            if entry.depth() > 0 && skipped(&entry.file_name().to_string_lossy()) {
                walk.skip_current_dir();
                continue;
            }
            if entry.depth() > 0 && RunsRoot::has_conditions(path) && !known.contains(path) {
                ignored.push(path.to_path_buf());
            }
            // A runs root or catalog run is taken whole: never looked inside.
            if is_leaf(path) {
                walk.skip_current_dir();
            }
        }
    }
    ignored.sort();
    ignored
}

/// The loader of assets: reads each of `paths` that is a readable file,
/// by normalized path.
pub fn load_assets(paths: impl IntoIterator<Item = PathBuf>) -> assets::AssetMap {
    // Only regular files are read: a named pipe would hang the build
    // (issue 24, item 22); it reads as not found.
    paths
        .into_iter()
        .filter_map(|p| {
            let bytes = crate::fsutil::read_regular(&p, crate::fsutil::Links::Follow).ok()??;
            Some((assets::normalize(&p), bytes))
        })
        .collect()
}

/// The files the page of one Markdown text (the contents of `path`)
/// embeds, read: the loader of [`page_with`]'s assets.
pub fn page_assets(path: &Path, text: &str) -> assets::AssetMap {
    // Only an image reads a file: a Markdown image (`![`) or raw HTML
    // (`<img`, `<svg`). A page with neither, such as a runs root's
    // README, is not rendered to find none.
    if !text.contains("![") && !text.contains('<') {
        return assets::AssetMap::new();
    }
    let base = path.parent().unwrap_or(Path::new(""));
    let wanted = assets::Wanted::default();
    markdown::render(&page_text(path, text), base, &page_prefix(path), &wanted);
    load_assets(wanted.paths())
}

/// The `ID_results/summary.csv` files of `root` whose question has no
/// recorded result any more (a `run --force` with a smaller `--limit`
/// replaced the condition that held it): `report` made them, nothing will
/// again, and `--check` must not call them current.
fn stale_question_summaries(root: &RunsRoot, view: &RootView) -> Vec<PathBuf> {
    let suffix = crate::layout::QUESTION_SUFFIX;
    let mut stale = Vec::new();
    let mut walker = walkdir::WalkDir::new(&root.root)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter();
    while let Some(Ok(entry)) = walker.next() {
        if !entry.file_type().is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy();
        if skipped(&name) || name == crate::layout::CONDITIONS_DIR {
            walker.skip_current_dir();
            continue;
        }
        if !name.ends_with(suffix) {
            continue;
        }
        walker.skip_current_dir();
        let Ok(relative) = entry.path().strip_prefix(&root.root) else {
            continue;
        };
        let id = relative.to_string_lossy();
        let id = id.strip_suffix(suffix).unwrap_or(&id);
        let summary = entry.path().join(crate::layout::SUMMARY_FILE);
        if !view.questions.contains_key(id) && summary.is_file() {
            stale.push(summary);
        }
    }
    stale
}

/// Fails when recorded files of `root` (a runs root, or a study reading
/// runs roots) could not be read: a page or figure that silently left an
/// episode out would misstate the study.
///
/// Errors: [`Error::Other`] naming every unreadable file, with what to do.
fn unreadable(root: &Path, problems: &[String]) -> Result<()> {
    refuse_unreadable(root, problems, "built")
}

/// `unreadable` for any command: "so nothing was `done`".
///
/// Errors: [`Error::Other`] naming every unreadable file, with what to do.
pub fn refuse_unreadable(root: &Path, problems: &[String], done: &str) -> Result<()> {
    if problems.is_empty() {
        return Ok(());
    }
    Err(Error::Other(format!(
        "{}: {} recorded file{} could not be used, so nothing was {done}:\n  {}\n\
         Do what each says; else restore {} from version control, or record the episode \
         again (`okn-benchmark run ... --force`).",
        root.display(),
        problems.len(),
        crate::format::plural(problems.len()),
        problems.join("\n  "),
        if problems.len() == 1 { "it" } else { "them" },
    )))
}

/// Fails when `path` exists but does not carry `mark` in its first 4 KiB:
/// a file a person wrote where `build` would write (an `X.html` beside
/// `X.md`, a `figures/NAME.svg`), which replacing would lose.
///
/// Errors: [`Error::File`] naming it, with what to do.
fn refuse_hand_written(path: &Path, mark: &str) -> Result<()> {
    if !path.exists() || crate::fsutil::head(path).is_some_and(|h| h.contains(mark)) {
        return Ok(());
    }
    Err(Error::file(
        path,
        "was not written by okn-benchmark build (it lacks the build's generator mark), \
         and build would replace it: rename it (or delete it, if it is an old copy), then build again",
    ))
}

/// Loads everything a build reads under `scan` into the [`BuildView`]
/// the exporters render, with the plan's bookkeeping: what was scanned,
/// which roots are frozen, which generated files nothing makes any more,
/// and the warnings met while loading.
///
/// Errors: a theme that does not load; an unreadable Markdown file; a
/// runs root or study with a recorded file that cannot be used; a README a
/// person wrote in a runs root; a `study.toml` that is wrong (file and line).
pub fn load(base: &Path, scan: &[PathBuf], with_site: bool) -> Result<(BuildView, Plan)> {
    let theme = Arc::new(Theme::load(base)?);
    let inputs = discover(scan);
    inputs.refuse_unreadable()?;
    let mut plan = Plan {
        scanned: scan.to_vec(),
        notes: inputs.not_published_note().into_iter().collect(),
        ..Plan::default()
    };
    // Only what is unfinished is wanted of these: their attempts' files
    // are not checked (nothing of them is published).
    for root in &inputs.unfinished {
        let view = crate::report::load::root_with(root, Records::Deferred);
        for (name, unfinished) in view.unfinished {
            plan.warnings.push(format!(
                "{}: not published, no condition of it has finished: {}",
                root.display(),
                unfinished.line(&name)
            ));
        }
    }
    for path in &inputs.special {
        plan.warnings.push(format!(
            "{}: not a regular file (a named pipe, socket or device): skipped",
            path.display()
        ));
    }
    for link in &inputs.links {
        plan.warnings.push(format!(
            "{}: a link to a folder, not followed: move or copy what it holds into the \
             project to build it",
            link.display()
        ));
    }
    // Runs roots: read once, for their generated files and for the site.
    let own: Vec<String> = inputs.roots.iter().map(|r| study::root_label(r)).collect();
    let names = site::site_names(&inputs.roots, &own);
    let mut roots = Vec::new();
    // With the site, each question's files are checked as its pages read
    // them (one read of each file for both: issue 26, section 4); the
    // plan's passes refuse a root with a problem before writing anything.
    let records = if with_site {
        Records::Deferred
    } else {
        Records::Checked
    };
    for (root, name) in inputs.roots.iter().zip(names) {
        let view = crate::report::load::root_with(root, records);
        unreadable(root, &view.problems)?;
        // Expectations that could not be checked against a corpus from
        // here: said, not written into the pages (issue 27).
        for note in super::readme::expectation_notes(&view) {
            plan.notes.push(format!("{}: {note}", shown(root)));
        }
        for (name, unfinished) in &view.unfinished {
            // An incomplete merged sweep: its README marks the condition's
            // row, and a study that names it is refused (docs/PUBLISHING.md,
            // "Exclusions and incomplete roots").
            let published = if unfinished.missing > 0 {
                "; its README marks its row incomplete and no study may show it"
            } else {
                ""
            };
            plan.warnings.push(format!(
                "{}: {}{published}",
                root.display(),
                unfinished.line(name)
            ));
        }
        // A frozen root is read, never written (README.md, "Closing a
        // runs root"): its own files are not planned.
        if view.frozen {
            plan.frozen.push(root.clone());
            // A root an earlier version froze without its page keeps none
            // (warned about below); every other generated file is checked.
            let page = html_path(&root.join(crate::layout::README_FILE));
            plan.frozen_outputs.extend(
                root_files(&theme, &view)?
                    .into_iter()
                    .filter(|o| view.readme_page || o.path != page),
            );
            if !view.readme_page {
                plan.warnings.push(format!(
                    "{}: frozen without README.html, so the site links its README.md, which \
                     a web host shows as plain text: delete {} and run `okn-benchmark freeze` \
                     again, which writes the page before it closes the root",
                    root.display(),
                    RunsRoot::new(root).frozen_file().display()
                ));
            }
        } else {
            check_readme(root)?;
            plan.stale
                .extend(stale_question_summaries(&RunsRoot::new(root), &view));
        }
        roots.push(Arc::new(SiteRoot { name, view }));
    }
    let mut texts: BTreeMap<PathBuf, String> = BTreeMap::new();
    for path in &inputs.markdown {
        texts.insert(path.clone(), crate::fsutil::read_text(path)?);
    }
    let mut studies = Vec::new();
    for dir in &inputs.studies {
        let study = crate::report::study_file::load(dir)?;
        unreadable(dir, &study.problems)?;
        // A root outside what this build reads has no pages on the site:
        // its numbers could not be traced to an episode there.
        if with_site {
            for root in &study.roots {
                if !inputs
                    .roots
                    .iter()
                    .any(|r| crate::fsutil::same_place(r, root))
                {
                    plan.warnings.push(format!(
                        "{}: study.toml reads the runs root {}, which this build does not \
                         publish: the site will have no page to trace its numbers to",
                        dir.display(),
                        root.display()
                    ));
                }
            }
        }
        studies.push(study);
    }
    crate::report::study::sort_studies(&mut studies);
    // The images pages embed: every Markdown text's (a study's prose as
    // read; its regions add only figures, which the build makes).
    let pages: Vec<(&PathBuf, &String)> = texts
        .iter()
        .chain(studies.iter().flat_map(|s| s.prose.iter()))
        .collect();
    let images: assets::AssetMap = pages
        .par_iter()
        .map(|(path, text)| page_assets(path, text))
        .reduce(assets::AssetMap::new, |mut a, b| {
            a.extend(b);
            a
        });
    let catalogs = load_catalogs(&inputs)?;
    // A folder with nothing to publish gets no site/ (one made earlier is
    // kept current, so its pages can go).
    let roots_empty = inputs.roots.is_empty();
    let site = with_site
        && (!inputs.roots.is_empty()
            || !inputs.studies.is_empty()
            || !catalogs.is_empty()
            || base.join(site::SITE_DIR).is_dir());
    let view = BuildView {
        base: base.to_path_buf(),
        theme,
        roots,
        studies,
        markdown: texts,
        images: Arc::new(images),
        site,
        readme: base.join(crate::layout::README_FILE).is_file(),
        load_question: crate::report::load::question,
        check_question: crate::report::load::question_problems,
        catalogs,
        record_checks: Arc::new(super::export::RecordChecks::new(
            records == Records::Deferred && !roots_empty,
            |page| page.is_file(),
        )),
    };
    plan.record_checks = Arc::clone(&view.record_checks);
    Ok((view, plan))
}

/// The catalog runs and comparisons among `inputs`, loaded, with their
/// names on the site (a folder's own name, or its path where two share
/// one).
///
/// Errors: a `results.json` or `comparison.toml` that cannot be used
/// (file and field), as `catalog::published` says.
fn load_catalogs(inputs: &Inputs) -> Result<crate::render::export::Catalogs> {
    use crate::catalog::published;
    let folders: Vec<PathBuf> = inputs
        .catalog_runs
        .iter()
        .chain(&inputs.comparisons)
        .cloned()
        .collect();
    let own: Vec<String> = folders.iter().map(|f| study::root_label(f)).collect();
    let mut names = site::site_names(&folders, &own).into_iter();
    let mut catalogs = crate::render::export::Catalogs::default();
    for dir in &inputs.catalog_runs {
        let run = published::load_run(dir)?;
        catalogs
            .runs
            .push((names.next().unwrap_or_default(), Arc::new(run)));
    }
    for dir in &inputs.comparisons {
        let comparison = published::load_comparison(dir)?;
        catalogs
            .comparisons
            .push((names.next().unwrap_or_default(), Arc::new(comparison)));
    }
    Ok(catalogs)
}

/// Computes every output under `scan`, with the theme from `base`; `site`
/// adds `base/site/` (which needs every root and study, so `--root`
/// builds leave it alone) when there is a runs root or a study to show,
/// or a `site/` already. The outputs are what [`EXPORTERS`] make of what
/// [`load`] read, in order.
///
/// Errors: those of [`load`]; a generated region that is wrong (file and
/// line); a figure that cannot be drawn; a file a person wrote where the
/// build would write; two different outputs for one path.
pub fn plan(base: &Path, scan: &[PathBuf], with_site: bool) -> Result<Plan> {
    let (view, mut plan) = load(base, scan, with_site)?;
    let mut made = Vec::new();
    let mut claimed = Vec::new();
    for exporter in EXPORTERS {
        let mut exported = exporter.export(&view, &made)?;
        // Held until every job has run: each at its own size, not the
        // room its buffer grew to (issue 26, section 4).
        for output in &mut exported.outputs {
            output.bytes.shrink_to_fit();
        }
        made.extend(exported.outputs);
        plan.jobs.extend(exported.jobs);
        plan.last.extend(exported.last);
        plan.owned_dirs.extend(exported.owned_dirs);
        plan.warnings.extend(exported.warnings);
        claimed.extend(exported.claimed);
    }
    // A figure or page a person wrote where this build would write is
    // never replaced.
    let site_dir = base.join(site::SITE_DIR);
    for path in made.iter().map(|o| &o.path).chain(&claimed) {
        match path.extension().and_then(|e| e.to_str()) {
            Some("svg") => refuse_hand_written(path, figures::SVG_MARK)?,
            Some("html") if !path.starts_with(&site_dir) => {
                refuse_hand_written(path, GENERATOR_MARK)?
            }
            _ => {}
        }
    }
    plan.outputs = made;
    plan.outputs.sort_by(|a, b| a.path.cmp(&b.path));
    // Two outputs for one path would silently lose one of them: two
    // different ones made now, or any other beside a file a job makes.
    let two_outputs = |path: &Path| {
        Error::file(
            path,
            "two different outputs would be written here (two inputs make the same file): \
             rename one of them",
        )
    };
    if let Some(pair) = plan
        .outputs
        .windows(2)
        .find(|w| w[0].path == w[1].path && w[0].bytes != w[1].bytes)
    {
        return Err(two_outputs(&pair[0].path));
    }
    claimed.sort();
    if let Some(path) = claimed.windows(2).find(|w| w[0] == w[1]).map(|w| &w[0]) {
        return Err(two_outputs(path));
    }
    if let Some(path) = claimed.iter().find(|p| {
        plan.outputs
            .binary_search_by(|o| o.path.as_path().cmp(p))
            .is_ok()
    }) {
        return Err(two_outputs(path));
    }
    plan.outputs.dedup_by(|a, b| a.path == b.path);
    Ok(plan)
}

/// Every output a plan produced, as the key of its path ([`path_key`]),
/// sorted and without repeats: what the search for orphans asks of each
/// file it finds. A key is 16 bytes where a path is a hundred or more, so
/// the set stays small at 55,000 outputs (issue 26, section 4: memory).
#[derive(Debug, Default)]
struct PathKeys(Vec<u128>);

impl PathKeys {
    /// True when `path` is one of them.
    fn contains(&self, path: &Path) -> bool {
        self.0.binary_search(&path_key(path)).is_ok()
    }

    /// How many outputs, each path counted once.
    fn len(&self) -> usize {
        self.0.len()
    }
}

/// The key of `path`: the first 128 bits of the SHA-256 of its components
/// (a separator byte between them), so two spellings `Path` holds equal
/// (`a//b`, `a/./b`, `a/b`) have one key, as they are one entry of a
/// set of paths. Two different paths share a key with a chance of about
/// n²/2¹²⁹ (below 10⁻²⁸ for a million outputs): the orphan such a pair
/// would hide is not worth a path kept in memory per output.
fn path_key(path: &Path) -> u128 {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    for component in path.components() {
        hasher.update(component.as_os_str().as_encoded_bytes());
        hasher.update([0u8]);
    }
    let digest = hasher.finalize();
    let mut first = [0u8; 16];
    first.copy_from_slice(&digest[..16]);
    u128::from_be_bytes(first)
}

/// What [`for_each_output`] gives: every output's path key, and the
/// outputs whose outcome was noted, with their paths, sorted by path.
struct Outcomes<T> {
    /// Every output.
    keys: PathKeys,
    /// The noted ones (a stale or missing file), sorted by path.
    noted: Vec<(PathBuf, T)>,
    /// Outputs run, a path produced twice counted twice.
    total: usize,
}

/// Outputs done: each one's path key, and the path and outcome of those
/// noted.
type Done<T> = (Vec<u128>, Vec<(PathBuf, T)>);

/// Runs `each` on every output of `plan` (up-front ones, those jobs
/// produce), in parallel, then `each_streamed` on those the last jobs
/// make, one at a time, with the job (which makes the output again).
/// Keeps every output's path key and, with its path, each outcome
/// `noted` says to keep: an output's bytes and path are let go as soon as
/// it is done, so memory does not grow with the outputs a build only
/// compares (16 bytes an output: issue 26, section 4).
fn for_each_output<T: Send>(
    plan: &Plan,
    each: impl Fn(&Output) -> Result<T> + Sync + Send,
    each_streamed: impl Fn(Streamed, &StreamJob) -> Result<T>,
    noted: impl Fn(&T) -> bool + Sync + Send,
) -> Result<Outcomes<T>> {
    let one = |done: &mut Done<T>, path: &Path, outcome: T| {
        done.0.push(path_key(path));
        if noted(&outcome) {
            done.1.push((path.to_path_buf(), outcome));
        }
    };
    let whole = |mut done: Done<T>, o: &Output| -> Result<Done<T>> {
        let outcome = each(o)?;
        one(&mut done, &o.path, outcome);
        Ok(done)
    };
    let join = |mut a: Done<T>, b: Done<T>| -> Done<T> {
        a.0.extend(b.0);
        a.1.extend(b.1);
        a
    };
    let up_front = plan
        .outputs
        .par_iter()
        .try_fold(Done::default, whole)
        .try_reduce(Done::default, |a, b| Ok(join(a, b)))?;
    // Each output a job makes is done and let go before the job makes
    // the next.
    let produced = plan
        .jobs
        .par_iter()
        .try_fold(Done::default, |mut done, job| {
            job(&mut |o: Output| {
                done = whole(std::mem::take(&mut done), &o)?;
                Ok(())
            })?;
            Ok(done)
        })
        .try_reduce(Done::default, |a, b| Ok(join(a, b)))?;
    let mut done = join(up_front, produced);
    for job in &plan.last {
        if let Some(streamed) = job()? {
            let path = streamed.path.clone();
            let outcome = each_streamed(streamed, job)?;
            one(&mut done, &path, outcome);
        }
    }
    let (mut keys, mut kept) = done;
    let total = keys.len();
    keys.sort_unstable();
    keys.dedup();
    keys.shrink_to_fit();
    kept.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Outcomes {
        keys: PathKeys(keys),
        noted: kept,
        total,
    })
}

/// What differs between a plan and the disk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Drift {
    /// Outputs whose file differs.
    pub stale: Vec<PathBuf>,
    /// Outputs with no file.
    pub missing: Vec<PathBuf>,
    /// Generated files that no output accounts for.
    pub orphaned: Vec<PathBuf>,
    /// Generated files of frozen roots that differ from what their
    /// records give ([`Plan::frozen_outputs`]): no build rewrites them.
    pub frozen: Vec<PathBuf>,
    /// Generated files of frozen roots that are missing (a `README.html`
    /// deleted: issue 24, item 9): reported, never written again.
    pub frozen_missing: Vec<PathBuf>,
    /// Outputs compared.
    pub outputs: usize,
}

impl Drift {
    /// True when nothing differs.
    pub fn is_clean(&self) -> bool {
        self.stale.is_empty()
            && self.missing.is_empty()
            && self.orphaned.is_empty()
            && self.frozen.is_empty()
            && self.frozen_missing.is_empty()
    }
}

/// How the file at `path` compares with `bytes`: only a regular file is
/// read (a named pipe would wait forever), and one that is not is stale.
/// An output longer than [`COMPARED_AS_READ`] is compared with the file
/// as the file is read, so the file is never held whole beside it (a
/// runs root's page of 2,500 questions is 7.7 MB; issue 26, section 4).
fn state_of(path: &Path, bytes: &[u8]) -> State {
    if bytes.len() > COMPARED_AS_READ {
        // Comparing never fails.
        return compared_as_read(path, |compare| {
            let _ = compare.write_all(bytes);
            Ok(())
        })
        .unwrap_or(State::Stale);
    }
    match crate::fsutil::read_regular(path, crate::fsutil::Links::Follow) {
        Ok(Some(existing)) if same_text(&existing, bytes) => State::Current,
        Ok(None) => State::Missing,
        _ => State::Stale,
    }
}

/// How the file at `streamed`'s path compares with the bytes it writes,
/// compared as they come ([`super::streamed::Compare`]), as [`state_of`]
/// compares a whole output. With no file to compare with (or one that
/// cannot be read), the bytes are not made: a build from scratch makes
/// them once, as it writes them.
///
/// Errors: what making the bytes meets.
fn streamed_state(streamed: Streamed) -> Result<State> {
    use std::io::Write as _;
    compared_as_read(&streamed.path, |compare| {
        // Buffered: a writer of JSON writes a token at a time.
        let mut buffered = std::io::BufWriter::with_capacity(1 << 16, compare);
        (streamed.write)(&mut buffered)?;
        // Comparing never fails.
        let _ = buffered.flush();
        Ok(())
    })
}

/// How the file at `path` compares with what `write` writes, compared as
/// the file is read ([`super::streamed::Compare`], 64 KiB at a time): the
/// one way [`state_of`] (a long output) and [`streamed_state`] compare.
/// Only a regular file is read; with none there, `write` is not called
/// (missing: a build makes it once, into the file), and one that cannot
/// be opened is stale.
///
/// Errors: what `write` returns.
fn compared_as_read(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<()>,
) -> Result<State> {
    match crate::fsutil::open_regular(path, crate::fsutil::Links::Follow) {
        Ok(Some(file)) => {
            let mut compare = super::streamed::Compare::new(file);
            write(&mut compare)?;
            Ok(if compare.finish() {
                State::Current
            } else {
                State::Stale
            })
        }
        Ok(None) => Ok(State::Missing),
        Err(_) => Ok(State::Stale),
    }
}

/// Writes `streamed` into a temporary file beside its path, which then
/// replaces the file ([`crate::fsutil::AtomicFile`]). Called only for an
/// output [`streamed_state`] found stale or missing, so a build that
/// changes nothing writes nothing, not even a temporary file.
///
/// Errors: the file cannot be written; what making the bytes meets (the
/// file is then left as it was).
fn write_streamed(streamed: Streamed) -> Result<()> {
    let mut file = crate::fsutil::AtomicFile::create(&streamed.path)?;
    // The file buffers what it is given (a writer of JSON writes a token
    // at a time), and its commit flushes it, naming the path on failure.
    (streamed.write)(&mut file)?;
    file.commit()
}

/// The generated files of frozen roots in `plan` that are not what their
/// records give: those that differ and those that are missing, each
/// sorted. Never rewritten, named (issue 24, item 9).
pub fn frozen_drift(plan: &Plan) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let states: Vec<(PathBuf, State)> = plan
        .frozen_outputs
        .par_iter()
        .map(|o| (o.path.clone(), state_of(&o.path, &o.bytes)))
        .filter(|(_, state)| *state != State::Current)
        .collect();
    let (missing, stale): (Vec<_>, Vec<_>) = states
        .into_iter()
        .partition(|(_, state)| *state == State::Missing);
    let paths = |v: Vec<(PathBuf, State)>| {
        let mut paths: Vec<PathBuf> = v.into_iter().map(|(p, _)| p).collect();
        paths.sort();
        paths
    };
    (paths(stale), paths(missing))
}

/// The bytes with each CRLF read as LF.
fn lf_bytes(bytes: &[u8]) -> impl Iterator<Item = u8> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter(|&(i, &b)| !(b == b'\r' && bytes.get(i + 1) == Some(&b'\n')))
        .map(|(_, &b)| b)
}

/// True when `existing` holds `new`, line ends normalized, so a CRLF
/// checkout is not stale. Equal bytes are the common case and are
/// compared whole; only a difference is looked at line end by line end.
fn same_text(existing: &[u8], new: &[u8]) -> bool {
    existing == new || lf_bytes(existing).eq(lf_bytes(new))
}

/// Bytes of an output above which [`state_of`] compares it with its file
/// as the file is read, not read whole first: 1 MiB.
const COMPARED_AS_READ: usize = 1 << 20;

/// How one output compares with the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Current,
    Stale,
    Missing,
}

/// Compares the plan with the disk; writes nothing.
///
/// Errors: an output that cannot be computed (a job's failure).
pub fn check(plan: &Plan) -> Result<Drift> {
    let mut drift = Drift::default();
    // Nothing is written, so pages are looked for while the outputs are
    // computed and compared; owned folders once every output's key is
    // known, each file asked as it is found.
    let (outcomes, pages) = rayon::join(
        || {
            for_each_output(
                plan,
                |o| Ok(state_of(&o.path, &o.bytes)),
                |streamed, _| streamed_state(streamed),
                |state| *state != State::Current,
            )
        },
        || html_files(plan),
    );
    let outcomes = outcomes?;
    refuse_records(plan)?;
    // Only stale and missing outputs are noted.
    for (path, state) in outcomes.noted {
        if state == State::Stale {
            drift.stale.push(path);
        } else {
            drift.missing.push(path);
        }
    }
    drift.orphaned = orphans(plan, pages, &outcomes.keys);
    drift.orphaned.extend(plan.stale.iter().cloned());
    drift.orphaned.sort();
    (drift.frozen, drift.frozen_missing) = frozen_drift(plan);
    drift.outputs = outcomes.keys.len() + plan.frozen_outputs.len();
    Ok(drift)
}

/// The generated files under the owned folders that no output produced
/// (`produced`), and the temporary files a killed build left there
/// (made before the plan started): each file is asked as the walk finds
/// it, so only orphans are kept, not every file of a site of 55,000
/// pages.
fn owned_orphans(plan: &Plan, produced: &PathKeys) -> Vec<PathBuf> {
    let orphan = |p: &Path| {
        if p.file_name().is_some_and(crate::fsutil::is_temporary) {
            leftover(p, plan.started)
        } else {
            !produced.contains(p) && generated_file(p)
        }
    };
    plan.owned_dirs
        .par_iter()
        .flat_map_iter(|dir| files_under(dir, false, &|_| true, &orphan))
        .collect()
}

/// True when the temporary file at `p` was made before `started`: a
/// killed build left it (this build's own are being renamed as it runs).
fn leftover(p: &Path, started: std::time::SystemTime) -> bool {
    std::fs::metadata(p)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t < started)
}

/// Every `.html` file under the scanned folders, skipped folders left out.
/// Frozen runs roots are left out: nothing in them is ever removed
/// (`docs/FORMAT.md`, "`.frozen`").
fn html_files(plan: &Plan) -> Vec<PathBuf> {
    plan.scanned
        .par_iter()
        .flat_map_iter(|dir| {
            files_under(
                dir,
                true,
                &|name: &std::ffi::OsStr| Path::new(name).extension().is_some_and(|e| e == "html"),
                &|_| true,
            )
        })
        .filter(|p| !plan.frozen.iter().any(|f| p.starts_with(f)))
        .collect()
}

/// Decides by a file's name whether it is wanted.
type Keep = dyn Fn(&std::ffi::OsStr) -> bool + Sync;

/// Decides by a file's path, once its name was kept, whether it is
/// gathered.
type Wanted<'a> = dyn Fn(&Path) -> bool + Sync + 'a;

/// The files under `root` (itself, when it is a file) whose names `keep`
/// keeps; links are not followed below the root; with `skip`, entries
/// named as [`skipped`] are left out, and of a folder `build` takes whole
/// ([`is_leaf`]: a runs root, a catalog run) only the files at its top
/// are looked at: `build` writes a page only beside Markdown it found,
/// never looks inside such a folder for Markdown ([`walk`]), and writes
/// its only page, the README's, at its top, so nothing below can be a
/// page of its own; reading every attempt folder of every runs root a
/// third time for pages was a tenth of the system calls of `build
/// --check` (docs/PERFORMANCE.md, "build and build --check"). Subfolders
/// are read in parallel; an unreadable folder is passed over.
fn files_under(root: &Path, skip: bool, keep: &Keep, wanted: &Wanted<'_>) -> Vec<PathBuf> {
    match std::fs::metadata(root) {
        Ok(m) if m.is_dir() => files_in(root, skip, keep, wanted),
        Ok(m) if m.is_file() && root.file_name().is_none_or(keep) && wanted(root) => {
            vec![root.to_path_buf()]
        }
        _ => Vec::new(),
    }
}

fn files_in(dir: &Path, skip: bool, keep: &Keep, wanted: &Wanted<'_>) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    let mut folders = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let leftover = crate::fsutil::is_temporary(&name);
        if skip && !leftover && skipped(&name.to_string_lossy()) {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            folders.push(entry.path());
        } else if kind.is_file() && (leftover || keep(&name)) {
            let path = entry.path();
            if wanted(&path) {
                files.push(path);
            }
        }
    }
    if skip && is_leaf(dir) {
        return files;
    }
    let below: Vec<PathBuf> = folders
        .par_iter()
        .flat_map_iter(|d| files_in(d, skip, keep, wanted))
        .collect();
    files.extend(below);
    files
}

/// True when the file at `path` was generated by this build under the
/// name it has now: within its first 4 KiB it carries [`GENERATOR_MARK`]
/// with a [`FILE_META`] naming this very file (a page), or a
/// [`figures::SVG_MARK`] naming it (a figure), or starts with
/// [`super::search::MARK`] naming it (the search index). A file without a mark was
/// put there by a person, one naming another file is a person's copy:
/// neither is ever removed. (A mark naming no file, from before names were
/// recorded, counts as naming this one.)
fn generated_file(path: &Path) -> bool {
    let Some(head) = crate::fsutil::head(path) else {
        return false;
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let named = |after: &str, end: &str| -> Option<bool> {
        let at = head.find(after)? + after.len();
        let len = head[at..].find(end)?;
        Some(head[at..at + len] == *super::escape_html(&name))
    };
    if head.contains(GENERATOR_MARK) {
        return named(FILE_META, "\"").unwrap_or(true);
    }
    if head.contains(figures::SVG_MARK) {
        return named(&format!("{}: ", figures::SVG_MARK), " -->").unwrap_or(true);
    }
    if head.starts_with(super::search::MARK) {
        return named(&format!("{}: ", super::search::MARK), "\n").unwrap_or(true);
    }
    false
}

/// Generated files nothing produces any more: files carrying a generator
/// mark (pages beside Markdown among `pages`, files in an owned folder)
/// that no output names (`produced`), and temporary files a killed build
/// left. Hand-put files (a `CNAME` in `site/`, a drawing in `figures/`)
/// carry no mark and are left alone.
fn orphans(plan: &Plan, pages: Vec<PathBuf>, produced: &PathKeys) -> Vec<PathBuf> {
    let mut found: BTreeSet<PathBuf> = owned_orphans(plan, produced).into_iter().collect();
    let (temporary, pages): (Vec<PathBuf>, Vec<PathBuf>) = pages
        .into_iter()
        .partition(|p| p.file_name().is_some_and(crate::fsutil::is_temporary));
    found.extend(temporary.into_iter().filter(|p| leftover(p, plan.started)));
    // A generated page is an orphan only when the Markdown it was made
    // from is gone.
    let pages: Vec<PathBuf> = pages
        .into_par_iter()
        .filter(|p| !produced.contains(p) && !p.with_extension("md").exists() && generated_file(p))
        .collect();
    found.extend(pages);
    found.into_iter().collect()
}

/// Writes every output whose bytes differ from the disk (atomically) and
/// removes orphaned generated files. Returns `(written, unchanged,
/// removed)`: two counts and the paths removed.
///
/// Errors: an output that cannot be computed; a file that cannot be
/// written or removed.
pub fn write(plan: &Plan) -> Result<(usize, usize, Vec<PathBuf>)> {
    let checks = &plan.record_checks;
    if checks.deferred() {
        // First pass: every question's files checked, nothing written
        // (a root with a problem is refused whole); a build with nothing
        // to write ends here, having read each file once.
        checks.skip_missing();
        if let Some(unchanged) = first_pass(plan)? {
            return Ok((0, unchanged, Vec::new()));
        }
        checks.start_second_pass();
    }
    // Pages are looked for while the outputs are written (a page being
    // written is one this build produces, so it is never taken for an
    // orphan); owned folders only once the writing is done, since a file
    // written there passes through a temporary name.
    let written = std::sync::atomic::AtomicUsize::new(0);
    let (outcomes, pages) = rayon::join(
        || {
            for_each_output(
                plan,
                |o| {
                    // A file that differs only by CRLF line ends (a Windows
                    // checkout) is current, as `check` says.
                    if state_of(&o.path, &o.bytes) != State::Current {
                        crate::fsutil::write_atomic(&o.path, &o.bytes)?;
                        written.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    Ok(())
                },
                |streamed, again| {
                    // Compared first, then made again to be written only
                    // when it differs (a streamed output is never held).
                    if streamed_state(streamed)? != State::Current
                        && let Some(streamed) = again()?
                    {
                        write_streamed(streamed)?;
                        written.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    Ok(())
                },
                |_| false,
            )
        },
        || html_files(plan),
    );
    let outcomes = outcomes?;
    let written = written.into_inner();
    let unchanged = outcomes.total - written;
    let mut orphaned = orphans(plan, pages, &outcomes.keys);
    orphaned.extend(plan.stale.iter().cloned());
    orphaned.sort();
    for path in &orphaned {
        std::fs::remove_file(path).map_err(|e| Error::io(path, "remove", e))?;
        // Folders of the site (or of figures) the removal left empty go
        // too, up to the owned folder itself.
        if let Some(owner) = plan.owned_dirs.iter().find(|d| path.starts_with(d)) {
            let mut dir = path.parent();
            while let Some(d) = dir {
                if d == owner.as_path() || std::fs::remove_dir(d).is_err() {
                    break;
                }
                dir = d.parent();
            }
        }
    }
    Ok((written, unchanged, orphaned))
}

/// The first pass of [`write`] for roots whose records the site's jobs
/// check ([`super::export::RecordChecks`]): every output computed and
/// compared with the disk, nothing written. Returns the number of outputs
/// when every one is current and no generated file is orphaned (the build
/// has nothing to do), else `None`. Once an output differs, or a question
/// was left to the second pass (its page is missing: it was only
/// checked), the folders are not walked for orphans: the second pass
/// does that (issue 26, section 4).
///
/// Errors: an output that cannot be computed; the first root whose files
/// break a rule ([`refuse_records`]).
fn first_pass(plan: &Plan) -> Result<Option<usize>> {
    let outcomes = for_each_output(
        plan,
        |o| Ok(state_of(&o.path, &o.bytes)),
        |streamed, _| streamed_state(streamed),
        |state| *state != State::Current,
    )?;
    refuse_records(plan)?;
    let current = outcomes.noted.is_empty();
    if !current || plan.record_checks.skipped() || !plan.stale.is_empty() {
        return Ok(None);
    }
    let orphaned = orphans(plan, html_files(plan), &outcomes.keys);
    Ok(orphaned.is_empty().then_some(outcomes.total))
}

/// Refuses the first runs root whose files the plan's jobs found breaking
/// a rule ([`super::export::RecordChecks`]), as loading it would have
/// ([`refuse_unreadable`]).
///
/// Errors: that root, with every problem of it.
fn refuse_records(plan: &Plan) -> Result<()> {
    match plan.record_checks.first_problems() {
        Some((root, problems)) => unreadable(&root, &problems),
        None => Ok(()),
    }
}

/// Fails when `root` holds a README.md that was not generated (it lacks
/// [`super::readme::README_MARK`] near its top): regenerating would lose what a person
/// wrote there.
///
/// Errors: [`crate::error::Error::File`] naming the README, with what to do;
/// one that is there and cannot be read (permission denied, a named pipe).
pub fn check_readme(root: &Path) -> Result<()> {
    let path = root.join(crate::layout::README_FILE);
    // One that is there and cannot be read (permission denied, a named
    // pipe) is never replaced unread: it may be a person's (issue 24,
    // item 8), and a report that went on would say nothing of it.
    let head = crate::fsutil::open_regular(&path, crate::fsutil::Links::Follow)
        .map_err(|e| {
            crate::error::Error::Other(format!(
                "{e}; the runs root's README.md is not replaced unread: make it readable \
                 (or remove it), then run again"
            ))
        })?
        .and_then(|_| crate::fsutil::head(&path));
    match head {
        // The mark opens a line near the top, as `report` writes it: a
        // hand-written README that merely quotes it is still refused.
        Some(head)
            if !head
                .lines()
                .take(5)
                .any(|l| l.starts_with(super::readme::README_MARK)) =>
        {
            Err(crate::error::Error::file(
                &path,
                format!(
                    "this runs root's README.md was not generated (it lacks \"{}\") \
                     and would be replaced: move what it says to another file, then run again",
                    super::readme::README_MARK
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// Brings a runs root's generated files up to date before `freeze` closes
/// it: README.md and the summary CSVs ([`write_root_files`]), and the
/// README.html page beside README.md, with the theme of `base` (the folder
/// `build` runs from), since no build writes into a frozen root afterwards
/// (`docs/PUBLISHING.md`). Returns the files written.
///
/// Errors: those of [`write_root_files`]; a theme that does not load; a
/// README.html a person wrote; a file that cannot be written.
pub fn write_frozen_files(base: &Path, view: &RootView) -> Result<Vec<PathBuf>> {
    check_readme(&view.path)?;
    let theme = Theme::load(base)?;
    let outputs = root_files(&theme, view)?;
    let page = html_path(&view.path.join(crate::layout::README_FILE));
    refuse_hand_written(&page, GENERATOR_MARK)?;
    let mut written = Vec::new();
    for output in outputs {
        if !crate::fsutil::same_contents(&output.path, &output.bytes) {
            crate::fsutil::write_atomic(&output.path, &output.bytes)?;
            written.push(output.path);
        }
    }
    Ok(written)
}

/// Every generated file of the root `view` shows, as `freeze` leaves a
/// root and `build --check` expects a frozen one: README.md and the
/// summary CSVs ([`super::readme::outputs`]), then README.html, made from
/// that README with `theme`, as `build` makes a page beside a Markdown
/// file.
///
/// Errors: a README page that cannot be rendered.
pub fn root_files(theme: &Theme, view: &RootView) -> Result<Vec<Output>> {
    let mut outputs = Vec::new();
    super::export::root_files_each(theme, view, &mut |o| {
        outputs.push(o);
        Ok(())
    })?;
    Ok(outputs)
}

/// Writes the generated files of the root `view` shows (a file whose
/// bytes are already right is not touched), as `run`, `rescore` and
/// `report` leave a root. Returns the files written.
///
/// Errors: a README.md a person wrote ([`check_readme`]); a file that
/// cannot be written.
pub fn write_root_files(view: &RootView) -> Result<Vec<PathBuf>> {
    check_readme(&view.path)?;
    let mut written = Vec::new();
    for output in super::readme::outputs(view) {
        if !crate::fsutil::same_contents(&output.path, &output.bytes) {
            crate::fsutil::write_atomic(&output.path, &output.bytes)?;
            written.push(output.path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An output longer than [`COMPARED_AS_READ`], compared with its file
    /// as the file is read, comes to what comparing the whole file gives:
    /// current when the same (also with CRLF line ends, also with a CR
    /// and its LF in two pieces of the comparison), stale when one byte
    /// differs, at the end or the start, or the file is longer or shorter,
    /// missing when there is none, stale when it is a folder.
    #[test]
    fn a_long_output_is_compared_as_its_file_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("README.html");
        // Lines of 16 bytes, 17 with CRLF: the file's 16th piece of 64 KiB
        // (65,536 = 17 × 3,855 + 1) ends between a CR and its LF.
        let line = "<p>sixteen!</p>\n";
        assert_eq!(line.len(), 16);
        let new: Vec<u8> = line.repeat(COMPARED_AS_READ / 16 + 100).into_bytes();
        assert!(new.len() > COMPARED_AS_READ);
        let whole = |file: &[u8]| {
            if same_text(file, &new) {
                State::Current
            } else {
                State::Stale
            }
        };
        let crlf = String::from_utf8(new.clone())
            .unwrap()
            .replace('\n', "\r\n");
        let mut changed_end = new.clone();
        *changed_end.last_mut().unwrap() = b'x';
        let mut changed_start = new.clone();
        changed_start[0] = b'x';
        let longer = [new.as_slice(), b"\n"].concat();
        let shorter = new[..new.len() - 1].to_vec();
        for (what, file, expected) in [
            ("the same", new.clone(), State::Current),
            ("CRLF", crlf.into_bytes(), State::Current),
            ("last byte", changed_end, State::Stale),
            ("first byte", changed_start, State::Stale),
            ("longer", longer, State::Stale),
            ("shorter", shorter, State::Stale),
        ] {
            std::fs::write(&path, &file).unwrap();
            assert_eq!(whole(&file), expected, "{what}");
            assert_eq!(state_of(&path, &new), expected, "{what}");
        }
        std::fs::remove_file(&path).unwrap();
        assert_eq!(state_of(&path, &new), State::Missing);
        std::fs::create_dir(&path).unwrap();
        assert_eq!(state_of(&path, &new), State::Stale);
    }

    /// A path's key is the key of every spelling a set of paths holds
    /// equal, and of no other path: the search for orphans asks by key
    /// what it asked of a set of paths (issue 26, section 4).
    #[test]
    fn a_path_key_is_one_for_one_path_however_spelled() {
        let key = path_key(Path::new("site/roots/r/q/index.html"));
        for spelling in [
            "site//roots/r/q/index.html",
            "site/./roots/r/q/index.html",
            "site/roots/r/q/index.html/",
        ] {
            assert_eq!(Path::new(spelling), Path::new("site/roots/r/q/index.html"));
            assert_eq!(path_key(Path::new(spelling)), key, "{spelling}");
        }
        for other in [
            "site/roots/r/q/index.htm",
            "site/roots/rq/index.html",
            "/site/roots/r/q/index.html",
            "site/roots/r/q/index.html/x",
            "site/roots/r/q/ïndex.html",
        ] {
            assert_ne!(path_key(Path::new(other)), key, "{other}");
        }
        let keys = PathKeys(vec![key]);
        assert!(keys.contains(Path::new("site//roots/r/q/index.html")));
        assert!(!keys.contains(Path::new("site/roots/r/q/other.html")));
    }
}
