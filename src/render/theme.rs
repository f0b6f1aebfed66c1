//! The page theme: templates (`templates/`), stylesheet and script
//! (`static/`), loaded once; the repository's copies win, the built-in ones
//! serve anywhere else. Every page is wrapped by [`Theme::page`] or
//! [`Theme::render`] with its Content-Security-Policy: nothing on a page
//! may load or run anything but the page's own script, and on a site page
//! the site's own script files (the search index, [`super::search`]).

use std::path::Path;

use sha2::{Digest, Sha256};

use super::escape_into;
use crate::error::{Error, Result};

/// The built-in copies of the templates, by name (`templates/NAME`).
const TEMPLATES: [(&str, &str); 5] = [
    ("page.html", include_str!("../../templates/page.html")),
    (
        "site/index.html",
        include_str!("../../templates/site/index.html"),
    ),
    (
        "site/root.html",
        include_str!("../../templates/site/root.html"),
    ),
    (
        "site/question.html",
        include_str!("../../templates/site/question.html"),
    ),
    (
        "site/attempt.html",
        include_str!("../../templates/site/attempt.html"),
    ),
];

/// The built-in copies of the stylesheet and the script (`static/NAME`).
const STATIC: [(&str, &str); 3] = [
    ("style.css", include_str!("../../static/style.css")),
    ("sort.js", include_str!("../../static/sort.js")),
    ("search.js", include_str!("../../static/search.js")),
];

/// The initial size of a page's buffer, bytes.
const PAGE_CAPACITY: usize = 32 * 1024;

/// What [`Theme::page`] and [`Theme::site_page`] give the template as the
/// body, then replace with the body itself: the body is never copied into
/// the template's context, and the page is made in one buffer of its own
/// size (a runs root's README page is 7.7 MB at 50,000 attempts; issue
/// 26, section 4). No escaped value can hold it (its `<` would be
/// `&lt;`), and no template of this theme does.
const BODY_MARK: &str = "<okn-body-5f3a9c07/>";

/// Room left after a page for the file name `render::page::stamp` adds.
const STAMP_ROOM: usize = 512;

/// `framed` with every [`BODY_MARK`] replaced by `body`, in a buffer of
/// the page's size (and [`STAMP_ROOM`]). With one mark (every template of
/// this theme) the page is made in the body's own buffer, the frame put
/// around it, so a long page is never held twice (a runs root's README
/// page, 7.7 MB at 2,500 questions, was: issue 26, section 4).
fn with_body(framed: &str, body: String) -> String {
    let marks = framed.matches(BODY_MARK).count();
    if let (1, Some(at)) = (marks, framed.find(BODY_MARK)) {
        let (before, after) = (&framed[..at], &framed[at + BODY_MARK.len()..]);
        let mut out = body;
        out.reserve_exact(before.len() + after.len() + STAMP_ROOM);
        out.insert_str(0, before);
        out.push_str(after);
        return out;
    }
    let body = body.as_str();
    let mut out = String::with_capacity(
        framed.len() - marks * BODY_MARK.len() + marks * body.len() + STAMP_ROOM,
    );
    let mut rest = framed;
    while let Some(at) = rest.find(BODY_MARK) {
        out.push_str(&rest[..at]);
        out.push_str(body);
        rest = &rest[at + BODY_MARK.len()..];
    }
    out.push_str(rest);
    out
}

/// The page templates, stylesheet and script.
///
/// The stylesheet, script and policy are kept as template values, made
/// once: every page's context shares them instead of copying them.
#[derive(Debug, Clone)]
pub struct Theme {
    tera: tera::Tera,
    css: tera::Value,
    script: tera::Value,
    csp: tera::Value,
    site_csp: tera::Value,
    search: String,
    /// `page.html` is the built-in one and neither the stylesheet nor
    /// the script holds [`BODY_MARK`]: the body is put in after the
    /// template renders ([`with_body`]). A repository's own `page.html`
    /// may do more with the body than show it (filter it, test it), so
    /// it is given the body itself.
    body_mark: bool,
}

impl Theme {
    /// Loads the theme from `root`'s `templates/` and `static/` where those
    /// files exist, else the built-in copies (so `build` works in any
    /// folder, and a repository can restyle its pages).
    ///
    /// Errors: a template that does not parse (named, with tera's reason).
    pub fn load(root: &Path) -> Result<Theme> {
        let read = |path: std::path::PathBuf, builtin: &str| -> Result<String> {
            if path.is_file() {
                crate::fsutil::read_text(&path)
            } else {
                Ok(builtin.to_string())
            }
        };
        let mut tera = tera::Tera::default();
        tera.autoescape_on(vec![".html"]);
        tera.set_escape_fn(escape_into);
        let mut templates = Vec::new();
        for (name, builtin) in TEMPLATES {
            let path = root.join("templates").join(name);
            templates.push((name, read(path, builtin)?));
        }
        let css = read(root.join("static").join(STATIC[0].0), STATIC[0].1)?;
        let script = read(root.join("static").join(STATIC[1].0), STATIC[1].1)?;
        let search = read(root.join("static").join(STATIC[2].0), STATIC[2].1)?;
        tera.add_raw_templates(templates.iter().map(|(n, t)| (*n, t.as_str())))
            .map_err(|e| {
                Error::file(
                    root.join("templates"),
                    format!("template error: {e} {}", error_chain(&e))
                        .replace("error: error: ", "error: ")
                        .replace("  ", " "),
                )
            })?;
        let hash = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            Sha256::digest(script.as_bytes()),
        );
        // Nothing on a page may load or run anything but the page's own
        // script: untrusted text (answers, SPARQL, prompts) cannot act.
        let csp = |also: &str| {
            format!(
                "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{hash}'{also}; base-uri 'none'; form-action 'none'"
            )
        };
        // A site page may also load the site's own script files (the
        // search index): `'self'` on a server, `file:` where a reader
        // opens the site from disk (a file's origin is opaque to the CSP
        // specification; Chromium reads it as `'self'`, others may not).
        // No page holds a script element but its own, and recorded text
        // is escaped, so nothing else can name a file to load.
        let body_mark = templates
            .iter()
            .zip(TEMPLATES)
            .any(|((name, source), (_, builtin))| *name == "page.html" && source == builtin)
            && !css.contains(BODY_MARK)
            && !script.contains(BODY_MARK);
        let theme = Theme {
            body_mark,
            tera,
            css: tera::Value::from(css),
            script: tera::Value::from(script),
            csp: tera::Value::from(csp("")),
            site_csp: tera::Value::from(csp(" 'self' file:")),
            search,
        };
        theme.check(root, &templates)?;
        Ok(theme)
    }

    /// Refuses a repository's template that lacks what every page needs,
    /// before anything is written with it: the generator mark (by which
    /// build tells its own pages from a person's, `docs/PUBLISHING.md`),
    /// the Content-Security-Policy and the page's body (tera itself refuses
    /// a `page.html` without the `content` block the site's templates
    /// fill). `page.html` is rendered with probe values and its output
    /// checked; a site template that does not extend it must carry the
    /// mark and the policy itself.
    ///
    /// Errors: [`Error::File`] naming the template and the missing piece.
    fn check(&self, root: &Path, templates: &[(&str, String)]) -> Result<()> {
        const BODY: &str = "<p id=\"okn-probe-body\"></p>";
        let policy = format!(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
            super::escape_html(self.csp.as_str().unwrap_or_default())
        );
        let missing = |name: &str, what: String| {
            Err(Error::file(
                root.join("templates").join(name),
                format!("{what}; nothing was written (remove the file to use the built-in one)"),
            ))
        };
        let mark = |name: &str| {
            missing(
                name,
                format!(
                    "lacks the generator mark `{}` in its head: build tells the pages it wrote by \
                     it, so the next build would disown every page this template made",
                    super::GENERATOR_MARK
                ),
            )
        };
        let csp = |name: &str| {
            missing(
                name,
                "lacks the Content-Security-Policy `<meta http-equiv=\"Content-Security-Policy\" \
                 content=\"{{ csp }}\">`: without it the recorded text a page shows (answers, \
                 SPARQL, prompts) could load or run anything"
                    .to_string(),
            )
        };
        let page = self.page("okn-probe", BODY, None)?;
        // Judged as a browser reads the page: comments and the insides of
        // scripts and styles say nothing, and only the head's elements
        // count (a policy in the body, or after a script, guards nothing).
        let read = elements_only(&page);
        let lower = read.to_ascii_lowercase();
        let head = match (lower.find("<head"), lower.find("</head>")) {
            (Some(start), Some(end)) if start < end => &read[start..end],
            _ => {
                return missing(
                    "page.html",
                    "has no <head>…</head>: the generator mark and the Content-Security-Policy \
                     must be elements of the page's head"
                        .into(),
                );
            }
        };
        if !head.contains(super::GENERATOR_MARK) {
            return mark("page.html");
        }
        let Some(policy_at) = read.find(&policy).filter(|_| head.contains(&policy)) else {
            return csp("page.html");
        };
        if let Some(script_at) = ["<script", "<link", "<base", "<iframe", "<object", "<embed"]
            .iter()
            .filter_map(|t| lower.find(t))
            .min()
            && script_at < policy_at
        {
            return missing(
                "page.html",
                "loads or runs something before its Content-Security-Policy (a <script>, \
                 <link>, <base>, <iframe>, <object> or <embed> ahead of the policy's <meta>): the \
                 policy must come first in the head"
                    .into(),
            );
        }
        if !page.contains(BODY) {
            return missing(
                "page.html",
                "does not show the page's body: it needs `{{ body | safe }}` inside \
                 `{% block content %}`"
                    .into(),
            );
        }
        // The site's templates fill page.html's content block: one that
        // does not extend it would need every check above on its own, with
        // a context no probe can give.
        for (name, source) in templates {
            if *name == "page.html" || extends_page(source) {
                continue;
            }
            return missing(
                name,
                "does not extend page.html (its first tag must be `{% extends \"page.html\" %}`): \
                 a site page gets its head, generator mark and Content-Security-Policy from \
                 page.html"
                    .into(),
            );
        }
        Ok(())
    }

    /// A whole page: `body` (HTML) under `title` (text), with optional
    /// navigation HTML above it.
    ///
    /// Errors: a template that fails to render (named).
    pub fn page(&self, title: &str, body: impl Into<String>, nav: Option<&str>) -> Result<String> {
        self.framed(title, body.into(), nav, tera::Context::new())
    }

    /// `page.html` with `body` under `title` and `context`: the body put
    /// in after the template renders when the theme allows it
    /// ([`Theme::body_mark`]), else given to the template.
    fn framed(
        &self,
        title: &str,
        body: String,
        nav: Option<&str>,
        mut context: tera::Context,
    ) -> Result<String> {
        if !self.body_mark {
            context.insert("body", &body);
            return self.render("page.html", title, nav, context);
        }
        context.insert("body", BODY_MARK);
        Ok(with_body(
            &self.render("page.html", title, nav, context)?,
            body,
        ))
    }

    /// A site page: [`Theme::page`] with the search box, which loads the
    /// index at `search` (a link relative to the page), and the site's
    /// policy.
    ///
    /// Errors: a template that fails to render (named).
    pub fn site_page(
        &self,
        title: &str,
        body: impl Into<String>,
        nav: Option<&str>,
        search: &str,
    ) -> Result<String> {
        let mut context = tera::Context::new();
        context.insert("search", search);
        self.framed(title, body.into(), nav, context)
    }

    /// The search index's script (`static/search.js`), which the index
    /// file carries after its data ([`super::search`]).
    pub fn search_script(&self) -> &str {
        &self.search
    }

    /// Renders the template `name` with `context`, adding what every page
    /// needs (title, navigation HTML, stylesheet, script, policy). A
    /// context holding `search` (the link to the site's search index) is
    /// a site page's: its policy also allows the site's own script files.
    ///
    /// Errors: a template that fails to render (named, with tera's reason).
    pub fn render(
        &self,
        name: &str,
        title: &str,
        nav: Option<&str>,
        mut context: tera::Context,
    ) -> Result<String> {
        context.insert("title", title);
        context.insert("nav", &nav.unwrap_or(""));
        context.insert_value("css", self.css.clone());
        context.insert_value("script", self.script.clone());
        let csp = if context.contains_key("search") {
            &self.site_csp
        } else {
            &self.csp
        };
        context.insert_value("csp", csp.clone());
        if !context.contains_key("body") {
            context.insert("body", "");
        }
        // Room for the stylesheet, the script and a typical page, so the
        // buffer is rarely grown.
        let mut out = Vec::with_capacity(PAGE_CAPACITY);
        self.tera
            .render_to(name, &context, &mut out)
            .map_err(|e| Error::Other(format!("template {name}: {e} {}", error_chain(&e))))?;
        String::from_utf8(out).map_err(|e| Error::Other(format!("template {name}: not UTF-8: {e}")))
    }
}

/// `html` with comments dropped and the contents of `<script>` and
/// `<style>` elements emptied (their tags kept), so only real elements
/// remain to be looked for.
fn elements_only(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len());
    let mut at = 0;
    while at < html.len() {
        let rest = &lower[at..];
        let next_comment = rest.find("<!--");
        let next_raw = ["<script", "<style"]
            .iter()
            .filter_map(|t| rest.find(t).map(|i| (i, *t)))
            .min();
        match (next_comment, next_raw) {
            (Some(c), raw) if raw.is_none_or(|(r, _)| c < r) => {
                out.push_str(&html[at..at + c]);
                at = match lower[at + c + 4..].find("-->") {
                    Some(end) => at + c + 4 + end + 3,
                    None => html.len(),
                };
            }
            (_, Some((r, tag))) => {
                let open_end = lower[at + r..].find('>').map(|e| at + r + e + 1);
                let close = format!("</{}", &tag[1..]);
                match open_end {
                    Some(open_end) => {
                        out.push_str(&html[at..open_end]);
                        at = match lower[open_end..].find(&close) {
                            Some(end) => open_end + end,
                            None => html.len(),
                        };
                    }
                    None => {
                        out.push_str(&html[at..]);
                        at = html.len();
                    }
                }
            }
            _ => {
                out.push_str(&html[at..]);
                at = html.len();
            }
        }
    }
    out
}

/// Whether a template's first tag is `{% extends "page.html" %}` (either
/// quote, whitespace-trimming dashes allowed).
fn extends_page(source: &str) -> bool {
    let Some(rest) = source.trim_start().strip_prefix("{%") else {
        return false;
    };
    let rest = rest.trim_start_matches('-').trim_start();
    let Some(rest) = rest.strip_prefix("extends") else {
        return false;
    };
    let rest = rest.trim_start();
    (rest.starts_with("\"page.html\"") || rest.starts_with("'page.html'"))
        && rest[11..]
            .trim_start()
            .trim_start_matches('-')
            .starts_with("%}")
}

/// The causes under a tera error, joined (tera puts the useful part there).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = Vec::new();
    let mut source = e.source();
    while let Some(s) = source {
        parts.push(s.to_string());
        source = s.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body takes the mark's place wherever the template shows it,
    /// in a buffer of the page's size; escaped text can never hold the
    /// mark, so a title or a body that spells it stays as written.
    #[test]
    fn the_body_takes_the_marks_place_in_a_buffer_of_the_pages_size() {
        let framed = format!("<h1>t</h1>{BODY_MARK}<hr>{BODY_MARK}!");
        let page = with_body(&framed, "<p>é & body</p>".into());
        assert_eq!(page, "<h1>t</h1><p>é & body</p><hr><p>é & body</p>!");
        assert_eq!(page.capacity(), page.len() + STAMP_ROOM);
        assert_eq!(with_body("no mark", "<p>x</p>".into()), "no mark");
        // One mark: the frame goes around the body, in the body's buffer.
        let body = String::from("<p>é & body</p>");
        let page = with_body(&format!("<h1>t</h1>{BODY_MARK}<hr>"), body);
        assert_eq!(page, "<h1>t</h1><p>é & body</p><hr>");
        assert!(page.capacity() >= page.len() + STAMP_ROOM);
        let spelled = with_body(&format!("a{BODY_MARK}b"), BODY_MARK.to_string());
        assert_eq!(spelled, format!("a{BODY_MARK}b"));
        let theme = Theme::load(Path::new("/nonexistent")).unwrap();
        let page = theme.page(BODY_MARK, "<p>body</p>", None).unwrap();
        assert!(page.contains("&lt;okn-body-5f3a9c07/&gt;"), "{page}");
        assert_eq!(page.matches("<p>body</p>").count(), 1);
        let written = theme.page("t", BODY_MARK, None).unwrap();
        assert_eq!(written.matches(BODY_MARK).count(), 1);
        // A repository's own page.html that does more with the body than
        // show it is given the body itself (a review of 5e73b6f5).
        let wraps = TEMPLATES[0].1.replace(
            "{{ body | safe }}",
            "{{ body | replace(from=\"<table\", to=\"<div class=scroll><table\") | safe }}",
        );
        let theme = with_page(&wraps).unwrap();
        assert!(!theme.body_mark);
        let page = theme.page("t", "<table></table>", None).unwrap();
        assert!(page.contains("<div class=scroll><table></table>"), "{page}");
        // The built-in page.html, copied into a repository, keeps the mark.
        assert!(with_page(TEMPLATES[0].1).unwrap().body_mark);
    }
    use crate::render::GENERATOR_MARK;

    fn with_page(page: &str) -> Result<Theme> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("templates")).unwrap();
        std::fs::write(dir.path().join("templates/page.html"), page).unwrap();
        Theme::load(dir.path())
    }

    #[test]
    fn a_page_template_lacking_what_pages_need_is_refused_by_name() {
        let good = TEMPLATES[0].1;
        assert!(with_page(good).is_ok());
        for (page, piece) in [
            (good.replace(GENERATOR_MARK, ""), "lacks the generator mark"),
            (
                good.replace("content=\"{{ csp }}\"", "content=\"default-src *\""),
                "lacks the Content-Security-Policy",
            ),
            (
                good.replace("{{ body | safe }}", ""),
                "does not show the page's body",
            ),
            // What a browser would not honour, though the text is there.
            (
                good.replace(
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"{{ csp }}\">",
                    "<!-- <meta http-equiv=\"Content-Security-Policy\" content=\"{{ csp }}\"> -->",
                ),
                "lacks the Content-Security-Policy",
            ),
            (
                good.replace(
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"{{ csp }}\">",
                    "",
                )
                .replace(
                    "<main class=\"page\">",
                    "<main class=\"page\"><meta http-equiv=\"Content-Security-Policy\" content=\"{{ csp }}\">",
                ),
                "lacks the Content-Security-Policy",
            ),
            (
                good.replace(
                    "<meta http-equiv=\"Content-Security-Policy\"",
                    "<script src=\"https://x.example/a.js\"></script><meta http-equiv=\"Content-Security-Policy\"",
                ),
                "loads or runs something before its Content-Security-Policy",
            ),
            (
                good.replace(GENERATOR_MARK, "").replace(
                    "<main class=\"page\">",
                    &format!("<main class=\"page\">{GENERATOR_MARK}"),
                ),
                "lacks the generator mark",
            ),
            (
                good.replace(GENERATOR_MARK, "")
                    .replace("<style>", &format!("<style>/* {GENERATOR_MARK} */")),
                "lacks the generator mark",
            ),
            (
                good.replace(GENERATOR_MARK, &format!("<!-- {GENERATOR_MARK} -->")),
                "lacks the generator mark",
            ),
            (
                good.replace(
                    "{% block content %}{{ body | safe }}{% endblock content %}",
                    "{{ body | safe }}",
                ),
                "Block `content` is not defined in any parent template",
            ),
        ] {
            let e = with_page(&page).unwrap_err().to_string();
            assert!(e.contains("templates") && e.contains(piece), "{e}");
        }
    }

    #[test]
    fn a_site_template_must_extend_page_html() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("templates/site")).unwrap();
        std::fs::write(
            dir.path().join("templates/site/attempt.html"),
            TEMPLATES[0].1.replace(
                "{% block content %}{{ body | safe }}{% endblock content %}",
                "x",
            ),
        )
        .unwrap();
        let e = Theme::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("attempt.html: does not extend page.html"), "{e}");
        for first in [
            "{% extends \"page.html\" %}",
            "{%- extends 'page.html' -%}",
            "  {% extends \"page.html\"%}",
        ] {
            assert!(
                extends_page(&format!("{first}\n{{% block content %}}{{% endblock %}}")),
                "{first}"
            );
        }
        assert!(!extends_page("{% extends \"other.html\" %}"));
        assert!(!extends_page("<html>{% extends \"page.html\" %}"));
    }

    #[test]
    fn elements_only_drops_comments_scripts_and_styles() {
        assert_eq!(
            elements_only("<p>a<!-- b --></p><script x>c</script><STYLE>d</STYLE><!-- e"),
            "<p>a</p><script x></script><STYLE></STYLE>"
        );
        assert_eq!(elements_only("été<!--ü-->中"), "été中");
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
        // A page outside the site loads nothing: no search box, and its
        // policy allows no script file.
        assert!(!page.contains("data-search-index=\""), "{page}");
        assert!(!page.contains("&#39;self&#39;"), "{page}");
    }

    /// A site page has the search box, linked to the index, and a policy
    /// that allows the site's own script files and still no inline script
    /// but its own.
    #[test]
    fn site_pages_carry_the_search_box_and_allow_the_sites_scripts() {
        let theme = Theme::load(Path::new("/nonexistent")).unwrap();
        let page = theme
            .site_page("t", "<p>body</p>", None, "../../search-index.js")
            .unwrap();
        assert!(
            page.contains("data-search-index=\"../../search-index.js\""),
            "{page}"
        );
        let policy = page
            .split("Content-Security-Policy\" content=\"")
            .nth(1)
            .and_then(|p| p.split('"').next())
            .unwrap();
        assert!(
            policy.contains("script-src &#39;sha256-")
                && policy.contains("&#39;self&#39; file:;")
                && !policy.contains("unsafe-inline&#39; &#39;self")
                && !policy.contains("script-src &#39;unsafe-inline"),
            "{policy}"
        );
        assert!(theme.search_script().contains("window.oknSearchIndex"));
    }
}
