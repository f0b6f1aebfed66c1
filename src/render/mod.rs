//! The render layer: everything `build` publishes, from files on disk only
//! (no model, server or endpoint). Loaders read what it needs into views
//! first (`report::load`, `report::study_file`, [`build::load`],
//! [`theme`]); every renderer and exporter is then a function of those
//! views, and [`build`] (and [`manuscript`], for `paper doc`) alone write.
//!
//! - [`export`]: one exporter per kind of output; `build`'s plan loops
//!   over them.
//! - [`build`]: discovery, loading the build's view, the output plan,
//!   `--check` and writing (the IO side).
//! - [`readme`]: a runs root's README, summary CSVs and terminal report.
//! - [`study`]: a study's generated regions; [`figures`]: its SVG figures.
//! - [`site`]: the static site's pages; [`search`]: its search index.
//! - [`streamed`]: outputs made as they are written (the files that grow
//!   with a root's attempts).
//! - [`paper`]: the paper's tables; [`manuscript`]: `paper doc`, a
//!   Markdown manuscript as HTML and RTF ([`rtf`], the RTF writer).
//! - [`syntax`]: one table in Markdown, HTML, terminal, CSV or RTF.
//! - [`page`]: one Markdown file as a whole self-contained page;
//!   [`markdown`]: Markdown to an HTML body; [`assets`]: self-contained
//!   pages (images inlined from loaded assets, SVG ids unique).
//! - [`sanitize`]: the allow-list a page's body passes (raw HTML, inlined SVG).
//! - [`links`]: which link targets a page or an RTF document may hold.
//! - [`theme`]: the page template, stylesheet and script, and the page
//!   wrapper with its Content-Security-Policy.

pub mod assets;
pub mod build;
pub mod catalog;
pub mod comparison;
pub mod export;
pub mod figures;
pub mod links;
pub mod manuscript;
pub mod markdown;
pub mod page;
pub mod paper;
pub mod raster;
pub mod readme;
pub mod rtf;
pub mod sanitize;
pub mod search;
pub mod site;
pub mod streamed;
pub mod study;
pub mod syntax;
pub mod theme;

pub use theme::Theme;

/// One file an exporter produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Where it goes.
    pub path: std::path::PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Escapes text for HTML content and attribute values: `& < > " '`, and
/// shows each bidirectional control as its code point
/// ([`crate::text::is_bidi_control`]).
pub fn escape_html(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len() + 8);
    // Writing into a Vec cannot fail.
    let _ = escape_into(text, &mut out);
    // Whole characters were replaced, by ASCII: still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// [`escape_html`] into `out`: the runs between special characters are
/// written whole. The pages' templates escape through this too (tera's
/// own escaper writes byte by byte, which was a tenth of a site build);
/// the five replacements are tera's.
pub(crate) fn escape_into(text: &str, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, b) in bytes.iter().enumerate() {
        let shown;
        let (replacement, len): (&[u8], usize) = match b {
            b'&' => (b"&amp;", 1),
            b'<' => (b"&lt;", 1),
            b'>' => (b"&gt;", 1),
            b'"' => (b"&quot;", 1),
            b'\'' => (b"&#39;", 1),
            // A bidirectional control (three bytes from 0xE2, at a
            // character boundary since `text` is UTF-8), shown as its code
            // point ([`crate::text::is_bidi_control`]).
            0xE2 => match text.get(i..).and_then(|rest| rest.chars().next()) {
                Some(c) if crate::text::is_bidi_control(c) => {
                    shown = crate::text::bidi_shown(c);
                    (shown.as_bytes(), c.len_utf8())
                }
                _ => continue,
            },
            _ => continue,
        };
        out.write_all(&bytes[start..i])?;
        out.write_all(replacement)?;
        start = i + len;
    }
    out.write_all(&bytes[start..])
}

/// The marker every generated HTML page carries (how `--check` tells a
/// generated page from a hand-written one).
pub const GENERATOR_MARK: &str = "<meta name=\"generator\" content=\"okn-benchmark build\">";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidirectional_controls_are_shown_not_obeyed() {
        assert_eq!(
            escape_html("a\u{202E}<b>\u{2066}é"),
            "a[U+202E]&lt;b&gt;[U+2066]é"
        );
        // Other characters from 0xE2 (… ‘ ’ “) are kept.
        assert_eq!(escape_html("…‘x’ “y”"), "…‘x’ “y”");
    }

    #[test]
    fn escaping_covers_attributes() {
        assert_eq!(
            escape_html("<a href=\"x\" title='y'>&</a>"),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;"
        );
    }
}
