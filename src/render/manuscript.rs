//! `paper doc`: a Markdown manuscript as self-contained HTML (the same path
//! as `build`: [`Theme::load`] and [`super::page::page_with`]) and as RTF
//! ([`super::rtf`]), optionally one RTF per table.
//!
//! For `FILE.md` it writes, in this order, `FILE.html`, `FILE.rtf` and with
//! `tables` `FILE-table1.rtf`, `FILE-table2.rtf`, … (tables numbered in
//! document order), beside `FILE.md` or in the `out` folder (created when
//! missing). Every write is atomic. With `tables`, a `FILE-tableN.rtf` left
//! from an earlier run with more tables is removed when it carries our
//! generator mark (so a table that was deleted from the manuscript does not
//! linger); a file without the mark is never touched.
//!
//! The page is `build`'s page for the same Markdown. Written beside
//! `FILE.md` it keeps `build`'s generator mark (it is the page `build`
//! makes there); written elsewhere it is marked as `paper doc`'s, so that
//! `build` does not take it for an orphaned page of its own and remove it.

use std::path::{Path, PathBuf};

use super::{GENERATOR_MARK, Theme, build, rtf};
use crate::error::{Error, Result};

/// Converts `file` to `FILE.html` and `FILE.rtf` (and `FILE-tableN.rtf`
/// per table with `tables`), beside it or in `out`. Returns the paths
/// written, in order. Images are read relative to `file`'s folder; missing
/// ones and removed stale table files are reported on stderr. The theme is
/// `templates/` and `static/` of the current folder where present, else the
/// built-in one, as for `build`.
///
/// Errors (exit 2, the file named): an unreadable or non-UTF-8 manuscript;
/// an output path that would overwrite the manuscript; an output folder
/// that cannot be created or written; unless `force`, an output that exists
/// and lacks the generator mark (a file a person wrote; `refuse_foreign`),
/// with nothing written.
pub fn convert(file: &Path, tables: bool, out: Option<&Path>, force: bool) -> Result<Vec<PathBuf>> {
    let text = crate::fsutil::read_text(file)?;
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Error::file(file, "not a file name"))?;
    let source_dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
    let dir = out.map(Path::to_path_buf).unwrap_or(source_dir.clone());
    let html_path = dir.join(format!("{stem}.html"));
    let rtf_path = dir.join(format!("{stem}.rtf"));
    for path in [&html_path, &rtf_path] {
        if crate::fsutil::same_place(path, file) {
            return Err(Error::file(
                file,
                format!(
                    "the output {} would overwrite the manuscript; give it a .md name or use --out",
                    path.display()
                ),
            ));
        }
    }
    // The folder first, so an unwritable target fails before the work.
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "create folder", e))?;

    let theme = Theme::load(Path::new("."))?;
    let mut warnings = Vec::new();
    // What the page and the RTF embed is read first; both are then
    // rendered from it alone.
    let page = as_build_sees(file);
    let page_text = super::page::page_text(file, &text);
    let wanted = super::assets::Wanted::default();
    rtf::convert(&page_text, &source_dir, &wanted);
    let mut assets = super::build::load_assets(wanted.paths());
    assets.extend(build::page_assets(&page, &text));
    // A project with a site gets the page `build` makes there: with the
    // site's search box and a trail back (issue 26, section 3).
    let site = Path::new(super::site::SITE_DIR)
        .is_dir()
        .then_some(Path::new("."));
    let mut html = super::page::page_framed(&theme, (&page, &text), &mut warnings, &assets, site)?;
    if !html_path.with_extension("md").is_file() {
        // A page with no Markdown beside it is not `build`'s: with build's
        // mark, `build` would remove it as orphaned.
        html = String::from_utf8_lossy(&html)
            .replacen(GENERATOR_MARK, PAPER_DOC_MARK, 1)
            .into_bytes();
    }
    let converted = rtf::convert(&page_text, &source_dir, &assets);

    let mut outputs: Vec<(PathBuf, Vec<u8>)> = vec![
        (html_path, html),
        (rtf_path, converted.document.into_bytes()),
    ];
    if tables {
        for (i, table) in converted.tables.into_iter().enumerate() {
            let path = table_path(&dir, &stem, i + 1);
            if crate::fsutil::same_place(&path, file) {
                return Err(Error::file(
                    file,
                    format!(
                        "the output {} would overwrite the manuscript",
                        path.display()
                    ),
                ));
            }
            outputs.push((path, table.into_bytes()));
        }
    }
    if !force {
        for (path, _) in &outputs {
            refuse_foreign(path)?;
        }
    }
    let mut written = Vec::with_capacity(outputs.len());
    for (path, bytes) in outputs {
        crate::fsutil::write_atomic(&path, &bytes)?;
        written.push(path);
    }
    if tables {
        let count = written.len() - 2;
        for path in stale_tables(&dir, &stem, count) {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, "remove", e))?;
            errln!("removed {} (no such table any more)", path.display());
        }
    }
    for warning in warnings {
        errln!("warning: {warning}");
    }
    Ok(written)
}

/// Refuses to replace `path` when it exists and none of its first 40
/// lines (within 4 KiB) starts with a mark this command or `build` writes
/// on a line of its own in a page or an RTF document: a `paper.html` or `paper.rtf` a person wrote, which replacing
/// would lose (as `build` refuses, [`super::build`]).
///
/// Errors: [`Error::File`] naming it, with what to do.
fn refuse_foreign(path: &Path) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    let rtf_mark = format!("{{\\*\\generator {};}}", rtf::GENERATOR);
    let marks = [GENERATOR_MARK, PAPER_DOC_MARK, rtf_mark.as_str()];
    // A line that starts with the mark, as the generator writes it (its
    // own line in the page's head or the document's header), not a mark a
    // person quoted inside a line.
    let marked = |h: String| {
        h.lines()
            .take(40)
            .any(|l| marks.iter().any(|m| l.trim_start().starts_with(m)))
    };
    if crate::fsutil::head(path).is_some_and(marked) {
        return Ok(());
    }
    Err(Error::file(
        path,
        "exists and was not written by okn-benchmark (it lacks the generator mark), and paper \
         doc would replace it: rename it, write elsewhere with --out DIR, or give --force to \
         replace it",
    ))
}

/// The generator mark of a page written away from its Markdown (`--out`).
pub const PAPER_DOC_MARK: &str = "<meta name=\"generator\" content=\"okn-benchmark paper doc\">";

/// The path as `build` names it when it scans the current folder (`./x.md`
/// for `x.md`): the page's inline SVG ids derive from it, so the two
/// commands make the same bytes for the same manuscript.
fn as_build_sees(file: &Path) -> PathBuf {
    match file.components().next() {
        Some(std::path::Component::Normal(_)) => Path::new(".").join(file),
        _ => file.to_path_buf(),
    }
}

/// `DIR/STEM-tableN.rtf`.
fn table_path(dir: &Path, stem: &str, n: usize) -> PathBuf {
    dir.join(format!("{stem}-table{n}.rtf"))
}

/// `STEM-tableN.rtf` files in `dir` with N above `count` that we wrote.
fn stale_tables(dir: &Path, stem: &str, count: usize) -> Vec<PathBuf> {
    let mark = format!("{{\\*\\generator {};}}", rtf::GENERATOR);
    let mut stale = Vec::new();
    // A bare file name has an empty folder: that is the current one (else
    // leftovers were kept for `paper doc x.md`).
    let listing = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(entries) = std::fs::read_dir(listing) else {
        return stale;
    };
    let prefix = format!("{stem}-table");
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(n) = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".rtf"))
            .filter(|n| !n.starts_with('0'))
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        let path = dir.join(&name);
        if n > count && crate::fsutil::head(&path).is_some_and(|h| h.contains(&mark)) {
            stale.push(path);
        }
    }
    stale.sort();
    stale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_html_rtf_and_tables_and_removes_only_our_stale_tables() {
        let dir = tempfile::tempdir().unwrap();
        let md = dir.path().join("paper.md");
        std::fs::write(
            &md,
            "# Paper\n\nTable 1: A.\n\n| a |\n|---|\n| 1 |\n\n| b |\n|---|\n| 2 |\n",
        )
        .unwrap();
        let out = dir.path().join("out/deeper");
        let written = convert(&md, true, Some(&out), false).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.strip_prefix(&out).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "paper.html",
                "paper.rtf",
                "paper-table1.rtf",
                "paper-table2.rtf"
            ]
        );
        let html = std::fs::read_to_string(out.join("paper.html")).unwrap();
        assert!(html.contains("<title>Paper</title>") && !html.contains('\r'));
        assert!(html.contains(PAPER_DOC_MARK) && !html.contains(GENERATOR_MARK));
        // Beside the manuscript it is build's own page, mark included.
        convert(&md, false, None, false).unwrap();
        let beside = std::fs::read_to_string(dir.path().join("paper.html")).unwrap();
        assert!(beside.contains(GENERATOR_MARK) && !beside.contains(PAPER_DOC_MARK));
        let first = std::fs::read(out.join("paper.rtf")).unwrap();

        // One table fewer: table2 was ours and goes; a hand-made table3 stays.
        std::fs::write(out.join("paper-table3.rtf"), "{\\rtf1 mine}").unwrap();
        std::fs::write(&md, "# Paper\n\n| a |\n|---|\n| 1 |\n").unwrap();
        let written = convert(&md, true, Some(&out), false).unwrap();
        assert_eq!(written.len(), 3);
        assert!(!out.join("paper-table2.rtf").exists());
        assert!(out.join("paper-table3.rtf").exists());
        assert_ne!(std::fs::read(out.join("paper.rtf")).unwrap(), first);
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.md");
        let err = convert(&missing, false, None, false).unwrap_err();
        assert!(err.to_string().contains("nope.md"), "{err}");
        assert!(err.to_string().contains("cannot read"), "{err}");
        let rtf_input = dir.path().join("paper.rtf");
        std::fs::write(&rtf_input, "# x\n").unwrap();
        let err = convert(&rtf_input, false, None, false).unwrap_err();
        assert!(err.to_string().contains("would overwrite"), "{err}");
    }
}
