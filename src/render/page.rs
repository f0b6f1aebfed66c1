//! One Markdown file as a whole, self-contained page: its text as a page
//! reads it ([`page_text`]), rendered with its images from loaded assets
//! ([`page_with`]), and stamped with the name it is written under
//! ([`stamp`]). `build` and `paper doc` make the same bytes for a file.

use std::path::{Path, PathBuf};

use sha2::Digest as _;

use super::assets::Assets;
use super::{GENERATOR_MARK, Theme, markdown, study};
use crate::error::Result;

/// The `.html` path beside a Markdown file.
pub fn html_path(markdown: &Path) -> PathBuf {
    markdown.with_extension("html")
}

/// A page id prefix for inline SVG ids: stable, from the page's file name
/// alone, so the page is the same bytes whatever folder `build` (or
/// `paper doc`) runs from. Ids need only be unique within the page.
pub(crate) fn page_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let digest = sha2::Digest::finalize(sha2::Sha256::new_with_prefix(name.as_bytes()));
    format!("f{:02x}{:02x}", digest[0], digest[1])
}

/// The meta element that names the file a generated page was written as:
/// `build` removes a marked page as orphaned only under that name, so a
/// person's copy (`archive/SUMMARY-2026-11-01.html`) is never removed.
pub(crate) const FILE_META: &str = "<meta name=\"okn-file\" content=\"";

/// `bytes` (a page carrying [`GENERATOR_MARK`]) with the name it is
/// written as recorded after the mark; `bytes` as they are without one.
/// The mark is found and the name put in as bytes: the page is not read
/// as text again (validating and copying every page was 3% of `build
/// --check`, docs/PERFORMANCE.md), and ASCII put after an ASCII mark
/// leaves UTF-8 as valid as it was.
pub fn stamp(path: &Path, mut bytes: Vec<u8>) -> Vec<u8> {
    let Some(at) = memchr::memmem::find(&bytes, GENERATOR_MARK.as_bytes()) else {
        return bytes;
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let meta = format!("\n{FILE_META}{}\">", super::escape_html(&name));
    let end = at + GENERATOR_MARK.len();
    bytes.splice(end..end, meta.bytes());
    bytes
}

/// The text a page (or `paper doc`'s RTF) is made from: a leading UTF-8
/// byte-order mark dropped, CRLF line ends read as LF, so a Windows checkout makes the same page, and generated
/// region markers removed with their content kept (a marker is a comment,
/// but one opening a line would split a paragraph). Markers that do not
/// parse are left as they are: outside a study they are plain comments.
/// The text is borrowed when none of that changes it (a runs root's
/// README of 2,500 questions is 3.4 MB).
pub fn page_text<'t>(path: &Path, text: &'t str) -> std::borrow::Cow<'t, str> {
    use std::borrow::Cow;
    // A byte-order mark is not text: kept, it turned the first heading
    // into a paragraph.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    };
    // Borrowed from `text` when nothing was stripped: then `text` itself.
    let stripped = match study::strip_markers(path, &text) {
        Ok(Cow::Owned(stripped)) => Some(stripped),
        _ => None,
    };
    stripped.map_or(text, Cow::Owned)
}

/// Renders one Markdown text (the contents of `path`) into a whole page,
/// its images taken from `assets` (the build's figures and what
/// [`super::build::page_assets`] read).
///
/// Errors: a template that fails to render.
pub fn page_with(
    theme: &Theme,
    path: &Path,
    text: &str,
    warnings: &mut Vec<String>,
    assets: &dyn Assets,
) -> Result<Vec<u8>> {
    page_framed(theme, (path, text), warnings, assets, None)
}

/// Renders one Markdown text as [`page_with`] does; with `site` (the
/// build's base folder, which holds a `site/`), the page is one of the
/// site's: the search box, which loads the site's search index, and a
/// trail back to the site's index above its text (issue 26, section 3:
/// a study's SUMMARY.html and the project's README.html reach the site).
///
/// Errors: a template that fails to render.
pub fn page_framed(
    theme: &Theme,
    (path, text): (&Path, &str),
    warnings: &mut Vec<String>,
    assets: &dyn Assets,
    site: Option<&Path>,
) -> Result<Vec<u8>> {
    let base = path.parent().unwrap_or(Path::new(""));
    let text = page_text(path, text);
    let rendered = markdown::render(&text, base, &page_prefix(path), assets);
    if let Some(svg) = rendered.too_deep.first() {
        return Err(crate::error::Error::file(
            svg,
            format!(
                "an SVG nested more than {} elements deep (embedded by {}): it cannot be \
                 inlined or drawn safely; flatten its groups",
                super::assets::MAX_SVG_DEPTH,
                path.display()
            ),
        ));
    }
    for image in &rendered.missing {
        warnings.push(format!("{}: image '{image}' not found", path.display()));
    }
    for image in &rendered.refused {
        warnings.push(format!(
            "{}: image '{image}' not inlined: it is outside the project (an absolute path, or one \
             that climbs out with ..) or not an image; the page shows its alt text",
            path.display()
        ));
    }
    for tag in &rendered.dropped {
        warnings.push(format!(
            "{}: {} dropped: raw HTML may not send the page elsewhere or change its base",
            path.display(),
            tag.split_whitespace().collect::<Vec<_>>().join(" ")
        ));
    }
    let title = rendered.title.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let html = match site {
        Some(base) => {
            let page = html_path(path.strip_prefix(base).unwrap_or(path));
            let index = Path::new(super::site::SITE_DIR).join("index.html");
            let nav = super::site::crumbs(&page, &[("Results", Some(index)), (&title, None)]);
            let search = super::site::search_link(&page);
            theme.site_page(&title, rendered.body, Some(&nav), &search)?
        }
        None => theme.page(&title, rendered.body, None)?,
    };
    Ok(stamp(&html_path(path), html.into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The name goes right after the mark, escaped, and nothing else of
    /// the page moves; a page without the mark is left as it is.
    #[test]
    fn a_stamp_names_the_file_after_the_mark_and_nothing_else() {
        let page = format!("<head>{GENERATOR_MARK}<title>é & ü</title></head>");
        let stamped = stamp(Path::new("site/q&a é.html"), page.clone().into_bytes());
        assert_eq!(
            String::from_utf8(stamped).unwrap(),
            format!(
                "<head>{GENERATOR_MARK}\n{FILE_META}q&amp;a é.html\"><title>é & ü</title></head>"
            )
        );
        let plain = b"<head><title>x</title></head>".to_vec();
        assert_eq!(stamp(Path::new("a.html"), plain.clone()), plain);
    }
}
