//! `okn-benchmark build`: regenerate everything published, or check it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::error::{Error, Result};
use crate::render::build::{check, plan, write};

/// Regenerate every generated file: each runs root's README.md and summary
/// CSVs, and a self-contained HTML page beside every Markdown file.
///
/// With --check nothing is written: every output is computed and compared
/// with the disk (line ends normalized), every stale, missing or orphaned
/// file is listed, and the exit code is 1 if there is any. CI runs it.
///
/// A frozen runs root is read and never written: its README.md, summary
/// CSVs and README.html are compared with what its records give, and a
/// difference is listed (exit 1) by build and build --check alike.
#[derive(Debug, clap::Args)]
pub(crate) struct BuildArgs {
    /// Compare instead of writing; exit 1 when anything is out of date.
    #[arg(long)]
    check: bool,
    /// Build only under this folder (repeatable) [default: the current folder].
    #[arg(long, value_name = "DIR")]
    root: Vec<PathBuf>,
}

/// The project folder above `dir`: the nearest ancestor holding `.git` or
/// an `okn-benchmark.toml`, if it is not `dir` itself.
pub(crate) fn project_above(dir: &Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().ok()?;
    let found = dir
        .ancestors()
        .find(|a| a.join(".git").exists() || a.join("okn-benchmark.toml").is_file())?;
    (found != dir).then(|| found.to_path_buf())
}

/// A `--root` must be a folder under the current one, and not one `build`
/// never scans (`site/`, `target/`, hidden folders...): under `site/`
/// every page would look orphaned and be removed.
fn check_root(root: &Path) -> Result<()> {
    if root.exists() && !root.is_dir() {
        return Err(Error::Usage(format!(
            "--root {}: a file, not a folder (build reads every Markdown file under a folder; \
             give the folder that holds it)",
            root.display()
        )));
    }
    if !root.is_dir() {
        return Err(Error::Usage(format!(
            "--root {}: no such folder (give a folder under the current one)",
            root.display()
        )));
    }
    let here = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|e| Error::io(Path::new("."), "read", e))?;
    let full = root
        .canonicalize()
        .map_err(|e| Error::io(root, "read", e))?;
    let Ok(inside) = full.strip_prefix(&here) else {
        return Err(Error::Usage(format!(
            "--root {}: not under the current folder; run build from a folder that holds it",
            root.display()
        )));
    };
    if let Some(name) = inside
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .find(|n| crate::render::build::skipped(n))
    {
        return Err(Error::Usage(format!(
            "--root {}: build never reads or writes under '{name}' (generated or tool folders \
             are skipped); give a folder of runs roots, studies or prose",
            root.display()
        )));
    }
    Ok(())
}

pub(crate) fn run(mut args: BuildArgs) -> Result<ExitCode> {
    for root in &args.root {
        check_root(root)?;
    }
    // Run from inside a project (a runs root, a study), build what is under
    // here, from the project's folder: one site/, at the project's root.
    if args.root.is_empty()
        && let Some(project) = project_above(Path::new("."))
    {
        let here = std::env::current_dir().map_err(|e| Error::io(Path::new("."), "read", e))?;
        let here = here.canonicalize().unwrap_or(here);
        let relative = here.strip_prefix(&project).unwrap_or(&here).to_path_buf();
        std::env::set_current_dir(&project).map_err(|e| Error::io(&project, "enter", e))?;
        errln!(
            "build: building {} from the project folder {}; site/ is rebuilt only from there",
            relative.display(),
            project.display()
        );
        args.root = vec![PathBuf::from(".").join(relative)];
    }
    let scan = if args.root.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.root.clone()
    };
    let base = PathBuf::from(".");
    let plan = plan(&base, &scan, args.root.is_empty())?;
    for warning in &plan.warnings {
        errln!("warning: {warning}");
    }
    for note in &plan.notes {
        errln!("note: {note}");
    }
    let shown = |p: &PathBuf| p.strip_prefix("./").unwrap_or(p).display().to_string();
    if args.check {
        let drift = check(&plan)?;
        for p in &drift.stale {
            outln!("stale     {}", shown(p));
        }
        for p in &drift.missing {
            outln!("missing   {}", shown(p));
        }
        for p in &drift.orphaned {
            outln!("orphaned  {}", shown(p));
        }
        for p in &drift.frozen {
            outln!("stale     {} (in a frozen root)", shown(p));
        }
        for p in &drift.frozen_missing {
            outln!("missing   {} (in a frozen root)", shown(p));
        }
        if drift.is_clean() {
            outln!(
                "build --check: all {} generated files are current",
                drift.outputs
            );
            return Ok(ExitCode::SUCCESS);
        }
        let roots: String = args
            .root
            .iter()
            .map(|r| format!(" --root {}", r.display()))
            .collect();
        outln!(
            "build --check: {} stale, {} missing, {} orphaned; run 'okn-benchmark build{roots}' to regenerate them",
            drift.stale.len() + drift.frozen.len(),
            drift.missing.len() + drift.frozen_missing.len(),
            drift.orphaned.len()
        );
        if !drift.frozen.is_empty() || !drift.frozen_missing.is_empty() {
            outln!("{}", frozen_advice(&plan));
        }
        return Ok(ExitCode::from(1));
    }
    let (written, unchanged, removed) = write(&plan)?;
    for p in &removed {
        outln!("removed   {}", shown(p));
    }
    outln!(
        "build: {written} written, {unchanged} unchanged, {} orphaned removed",
        removed.len()
    );
    // A frozen root is never rewritten: what differs there is named, and
    // the build fails as --check does (issue 24, item 9).
    let (stale, missing) = crate::render::build::frozen_drift(&plan);
    if !stale.is_empty() || !missing.is_empty() {
        for p in &stale {
            outln!("stale     {} (in a frozen root)", shown(p));
        }
        for p in &missing {
            outln!("missing   {} (in a frozen root)", shown(p));
        }
        outln!("{}", frozen_advice(&plan));
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// What to do about generated files of a frozen root that are not what its
/// records give: no build rewrites them.
fn frozen_advice(plan: &crate::render::build::Plan) -> String {
    let roots: Vec<String> = plan
        .frozen
        .iter()
        .map(|r| r.strip_prefix("./").unwrap_or(r).display().to_string())
        .collect();
    format!(
        "build: generated files of a frozen runs root ({}) are missing or differ from what its \
         records give, and build never rewrites a frozen root: restore them from version \
         control, or delete ROOT/.frozen and run 'okn-benchmark freeze ROOT --reason ...' \
         again, which rewrites them from the records",
        roots.join(", ")
    )
}
