//! The render layer: everything `build` publishes, from files on disk only
//! (no model, server or endpoint). It asks `report` for the numbers.
//!
//! - [`theme`] (this file): the page template, stylesheet and script, from
//!   `templates/` and `static/` (the repository's copies win; the built-in
//!   ones serve anywhere else), and the page wrapper with its
//!   Content-Security-Policy.
//! - [`markdown`]: Markdown to an HTML body.
//! - [`assets`]: self-contained pages (images inlined, SVG ids unique).
//! - [`build`]: discovery, the output plan, writing and `--check`.

pub mod assets;
pub mod build;
pub mod figures;
pub mod manuscript;
pub mod markdown;
pub mod paper;
pub mod rtf;
pub mod study;

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Escapes text for HTML content and attribute values: `& < > " '`.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The built-in copies of the theme files (`templates/`, `static/`).
const BUILTIN: [(&str, &str); 3] = [
    (
        "templates/page.html",
        include_str!("../../templates/page.html"),
    ),
    ("static/style.css", include_str!("../../static/style.css")),
    ("static/sort.js", include_str!("../../static/sort.js")),
];

/// The page template, stylesheet and script.
#[derive(Debug, Clone)]
pub struct Theme {
    tera: tera::Tera,
    css: String,
    script: String,
    csp: String,
    /// The theme files read from disk (inputs of every page).
    pub files: Vec<std::path::PathBuf>,
}

impl Theme {
    /// Loads the theme from `root`'s `templates/` and `static/` where those
    /// files exist, else the built-in copies.
    ///
    /// Errors: a template that does not parse (named).
    pub fn load(root: &Path) -> Result<Theme> {
        let mut files = Vec::new();
        let mut read = |name: &str, builtin: &str| -> Result<String> {
            let path = root.join(name);
            if path.is_file() {
                files.push(path.clone());
                crate::error::read_text(&path)
            } else {
                Ok(builtin.to_string())
            }
        };
        let template = read(BUILTIN[0].0, BUILTIN[0].1)?;
        let css = read(BUILTIN[1].0, BUILTIN[1].1)?;
        let script = read(BUILTIN[2].0, BUILTIN[2].1)?;
        let mut tera = tera::Tera::default();
        tera.add_raw_template("page.html", &template)
            .map_err(|e| Error::file(root.join(BUILTIN[0].0), format!("template error: {e}")))?;
        let hash = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            Sha256::digest(script.as_bytes()),
        );
        // Nothing on a page may load or run anything but the page's own
        // script: untrusted text (answers, SPARQL, prompts) cannot act.
        let csp = format!(
            "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{hash}'; base-uri 'none'; form-action 'none'"
        );
        Ok(Theme {
            tera,
            css,
            script,
            csp,
            files,
        })
    }

    /// A whole page: `body` (HTML) under `title` (text), with optional
    /// navigation HTML above it.
    pub fn page(&self, title: &str, body: &str, nav: Option<&str>) -> Result<String> {
        let mut context = tera::Context::new();
        context.insert("title", title);
        context.insert("body", body);
        context.insert("nav", &nav.unwrap_or(""));
        context.insert("css", &self.css);
        context.insert("script", &self.script);
        context.insert("csp", &self.csp);
        self.tera
            .render("page.html", &context)
            .map_err(|e| Error::Other(format!("template page.html: {e}")))
    }
}

/// The marker every generated HTML page carries (how `--check` tells a
/// generated page from a hand-written one).
pub const GENERATOR_MARK: &str = "<meta name=\"generator\" content=\"okn-benchmark build\">";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_attributes() {
        assert_eq!(
            escape_html("<a href=\"x\" title='y'>&</a>"),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn pages_carry_the_csp_and_the_marker_and_escape_the_title() {
        let theme = Theme::load(Path::new("/nonexistent")).unwrap();
        let page = theme.page("a <b> & \"c\"", "<p>body</p>", None).unwrap();
        assert!(page.contains(GENERATOR_MARK));
        assert!(
            page.contains("<title>a &lt;b&gt; &amp; &quot;c&quot;</title>"),
            "{page}"
        );
        assert!(page.contains("script-src &#39;sha256-"), "{page}");
        assert!(page.contains("<p>body</p>"));
        assert!(!page.contains("\r"));
    }
}
