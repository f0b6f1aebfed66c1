//! `build`: find every input, compute every output in memory, then either
//! write what changed or (`--check`) compare and report what is stale,
//! missing or orphaned (seed 000, "Results so far"; the shape of
//! rust-analyzer's `ensure_file_contents`).
//!
//! Inputs, found under the scanned folders (the repository root by
//! default; `target/`, `site/`, `node_modules/` and hidden folders are
//! skipped): runs roots (a folder with `conditions/`), and every Markdown
//! file outside a runs root (a runs root contributes its generated
//! README.md). Outputs: each runs root's README.md and summary CSVs, and
//! an `.html` page beside every Markdown file. Everything is a pure
//! function of the inputs, so a second build changes nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{GENERATOR_MARK, Theme, markdown};
use crate::error::{Error, Result};
use crate::runs::layout::RunsRoot;

/// Folder names never scanned.
const SKIPPED: [&str; 6] = [
    "target",
    "site",
    "node_modules",
    "ground-truth",
    "templates",
    "static",
];

/// One file `build` produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Where it goes.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Everything a build would write.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The files, sorted by path.
    pub outputs: Vec<Output>,
    /// Folders wholly owned by the build (every file in them is generated).
    pub owned_dirs: Vec<PathBuf>,
    /// Folders scanned for orphaned generated pages.
    pub scanned: Vec<PathBuf>,
    /// Non-fatal problems (missing images, unreadable episodes), named.
    pub warnings: Vec<String>,
}

/// What was found to build from.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// Runs roots.
    pub roots: Vec<PathBuf>,
    /// Markdown files outside runs roots.
    pub markdown: Vec<PathBuf>,
}

fn skipped(name: &str) -> bool {
    name.starts_with('.') || SKIPPED.contains(&name)
}

/// Finds the inputs under `scan` (each a folder, or a runs root).
pub fn discover(scan: &[PathBuf]) -> Inputs {
    let mut inputs = Inputs::default();
    for dir in scan {
        let mut walker = walkdir::WalkDir::new(dir).sort_by_file_name().into_iter();
        while let Some(Ok(entry)) = walker.next() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy();
            if entry.depth() > 0 && skipped(&name) {
                if entry.file_type().is_dir() {
                    walker.skip_current_dir();
                }
                continue;
            }
            if entry.file_type().is_dir() {
                if RunsRoot::is_runs_root(path) {
                    inputs.roots.push(path.to_path_buf());
                    walker.skip_current_dir();
                }
                continue;
            }
            if path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("md"))
            {
                inputs.markdown.push(path.to_path_buf());
            }
        }
    }
    inputs.roots.sort();
    inputs.roots.dedup();
    inputs.markdown.sort();
    inputs.markdown.dedup();
    inputs
}

/// The `.html` path beside a Markdown file.
pub fn html_path(markdown: &Path) -> PathBuf {
    markdown.with_extension("html")
}

/// A page id prefix for inline SVG ids: stable, from the page's path.
fn page_prefix(path: &Path) -> String {
    let digest = sha2::Digest::finalize(sha2::Sha256::new_with_prefix(
        path.to_string_lossy().as_bytes(),
    ));
    format!("f{:02x}{:02x}", digest[0], digest[1])
}

use sha2::Digest as _;

/// Renders one Markdown text (the contents of `path`) into a whole page.
pub fn page_for(
    theme: &Theme,
    path: &Path,
    text: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<u8>> {
    let base = path.parent().unwrap_or(Path::new(""));
    let rendered = markdown::render(text, base, &page_prefix(path));
    for image in &rendered.missing {
        warnings.push(format!("{}: image '{image}' not found", path.display()));
    }
    let title = rendered.title.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    Ok(theme.page(&title, &rendered.body, None)?.into_bytes())
}

/// Computes every output under `scan`, with the theme from `base`.
///
/// Errors: a theme that does not load; an unreadable Markdown file.
pub fn plan(base: &Path, scan: &[PathBuf]) -> Result<Plan> {
    let theme = Theme::load(base)?;
    let inputs = discover(scan);
    let mut plan = Plan {
        scanned: scan.to_vec(),
        ..Plan::default()
    };
    // Runs roots: their generated README.md and CSVs.
    let mut markdown_texts: BTreeMap<PathBuf, String> = BTreeMap::new();
    for root in &inputs.roots {
        let runs_root = RunsRoot::new(root);
        if runs_root.is_frozen() {
            // A frozen root is read, never written (seed 000, "Closing a
            // runs root"): nothing of it is planned.
            continue;
        }
        let (files, problems) = crate::report::render_outputs(&runs_root);
        plan.warnings.extend(problems);
        for (path, bytes) in files {
            if path.extension().is_some_and(|e| e == "md") {
                markdown_texts.insert(path.clone(), String::from_utf8_lossy(&bytes).into_owned());
            }
            plan.outputs.push(Output { path, bytes });
        }
    }
    for path in &inputs.markdown {
        let text = crate::error::read_text(path)?;
        markdown_texts.insert(path.clone(), text);
    }
    // A page beside every Markdown file, in parallel.
    let pages: Vec<Result<(Output, Vec<String>)>> = markdown_texts
        .par_iter()
        .map(|(path, text)| {
            let mut warnings = Vec::new();
            let bytes = page_for(&theme, path, text, &mut warnings)?;
            Ok((
                Output {
                    path: html_path(path),
                    bytes,
                },
                warnings,
            ))
        })
        .collect();
    for page in pages {
        let (output, warnings) = page?;
        plan.outputs.push(output);
        plan.warnings.extend(warnings);
    }
    plan.outputs.sort_by(|a, b| a.path.cmp(&b.path));
    plan.outputs.dedup_by(|a, b| a.path == b.path);
    Ok(plan)
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
}

impl Drift {
    /// True when nothing differs.
    pub fn is_clean(&self) -> bool {
        self.stale.is_empty() && self.missing.is_empty() && self.orphaned.is_empty()
    }
}

/// Line ends normalized, so a CRLF checkout is not stale.
fn normalized(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// Compares the plan with the disk; writes nothing.
pub fn check(plan: &Plan) -> Drift {
    let mut drift = Drift::default();
    let results: Vec<(PathBuf, Option<bool>)> = plan
        .outputs
        .par_iter()
        .map(|o| match std::fs::read(&o.path) {
            Ok(existing) => (
                o.path.clone(),
                Some(normalized(&existing) == normalized(&o.bytes)),
            ),
            Err(_) => (o.path.clone(), None),
        })
        .collect();
    for (path, state) in results {
        match state {
            Some(true) => {}
            Some(false) => drift.stale.push(path),
            None => drift.missing.push(path),
        }
    }
    drift.orphaned = orphans(plan);
    drift
}

/// Generated files nothing produces any more: pages carrying the generator
/// mark, and any file in an owned folder, that no output names.
fn orphans(plan: &Plan) -> Vec<PathBuf> {
    let produced: BTreeSet<&Path> = plan.outputs.iter().map(|o| o.path.as_path()).collect();
    let mut found = BTreeSet::new();
    for dir in &plan.owned_dirs {
        for entry in walkdir::WalkDir::new(dir).into_iter().flatten() {
            if entry.file_type().is_file() && !produced.contains(entry.path()) {
                found.insert(entry.path().to_path_buf());
            }
        }
    }
    for dir in &plan.scanned {
        let mut walker = walkdir::WalkDir::new(dir).into_iter();
        while let Some(Ok(entry)) = walker.next() {
            let name = entry.file_name().to_string_lossy();
            if entry.depth() > 0 && skipped(&name) {
                if entry.file_type().is_dir() {
                    walker.skip_current_dir();
                }
                continue;
            }
            let path = entry.path();
            // A generated page is an orphan only when the Markdown it was
            // made from is gone.
            if entry.file_type().is_file()
                && path.extension().is_some_and(|e| e == "html")
                && !produced.contains(path)
                && !path.with_extension("md").exists()
                && std::fs::read(path).is_ok_and(|b| {
                    String::from_utf8_lossy(&b[..b.len().min(4096)]).contains(GENERATOR_MARK)
                })
            {
                found.insert(path.to_path_buf());
            }
        }
    }
    found.into_iter().collect()
}

/// Writes every output whose bytes differ from the disk (atomically) and
/// removes orphaned generated files. Returns `(written, unchanged,
/// removed)`.
///
/// Errors: a file that cannot be written or removed.
pub fn write(plan: &Plan) -> Result<(usize, usize, usize)> {
    let mut written = 0;
    let mut unchanged = 0;
    for output in &plan.outputs {
        if crate::fsutil::same_contents(&output.path, &output.bytes) {
            unchanged += 1;
        } else {
            crate::fsutil::write_atomic(&output.path, &output.bytes)?;
            written += 1;
        }
    }
    let orphaned = orphans(plan);
    for path in &orphaned {
        std::fs::remove_file(path).map_err(|e| Error::io(path, "remove", e))?;
    }
    Ok((written, unchanged, orphaned.len()))
}
