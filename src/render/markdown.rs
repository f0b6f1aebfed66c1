//! Markdown to an HTML body, through pulldown-cmark: tables, footnotes,
//! strikethrough, task lists, GitHub alerts; smart punctuation **off**, so
//! SPARQL and data stay literal; raw HTML blocks passed through intact (with
//! their images inlined and Markdown links rewritten).
//!
//! Headings get anchors: an id from the heading text (lowercase, spaces to
//! `-`, other punctuation dropped, as GitHub does), made unique on the page
//! (`setup`, `setup-1`, `setup-2`), and a `#` link to it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pulldown_cmark::{
    BlockQuoteKind, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd, html,
};

use super::assets::{inline_image, rewrite_link, rewrite_raw_html};
use super::escape_html;

/// A rendered Markdown document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The first level-1 heading's text, if any.
    pub title: Option<String>,
    /// The HTML body.
    pub body: String,
    /// Local files the page read (images), to know what it depends on.
    pub read: Vec<PathBuf>,
    /// Images that were referenced but not found, as written.
    pub missing: Vec<String>,
}

/// The parser options every page uses.
pub fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_GFM
}

/// The GitHub-style anchor of a heading's text.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.trim().chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if c == ' ' || c == '-' {
            out.push('-');
        } else if c == '_' {
            out.push('_');
        }
    }
    if out.is_empty() {
        "section".to_string()
    } else {
        out
    }
}

/// Renders `markdown`. Relative images are read from `base` (the
/// document's folder); `prefix` keeps inline SVG ids unique on the page.
pub fn render(markdown: &str, base: &Path, prefix: &str) -> Rendered {
    let events: Vec<Event<'_>> = Parser::new_ext(markdown, options()).collect();
    let mut out: Vec<Event<'_>> = Vec::with_capacity(events.len());
    let mut used: HashMap<String, usize> = HashMap::new();
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut title = None;
    let mut read = Vec::new();
    let mut missing = Vec::new();
    let mut figures = 0usize;
    // Footnotes get ids of their own (`fn-LABEL`), taken before any
    // heading's, so `## Note` and `[^note]` no longer share `id="note"`
    // (third new-user review of issue 5); numbered in order of first
    // appearance, as pulldown-cmark numbers them.
    let mut notes: HashMap<String, usize> = HashMap::new();
    for e in &events {
        if let Event::FootnoteReference(label) | Event::Start(Tag::FootnoteDefinition(label)) = e {
            let next = notes.len() + 1;
            notes.entry(label.to_string()).or_insert(next);
            taken.insert(format!("fn-{label}"));
        }
    }
    let mut i = 0;
    while i < events.len() {
        match &events[i] {
            Event::FootnoteReference(label) => {
                out.push(Event::InlineHtml(CowStr::from(format!(
                    "<sup class=\"footnote-reference\"><a href=\"#fn-{id}\">{n}</a></sup>",
                    id = escape_html(label),
                    n = notes.get(label.as_ref()).copied().unwrap_or(0)
                ))));
                i += 1;
            }
            Event::Start(Tag::FootnoteDefinition(label)) => {
                out.push(Event::Html(CowStr::from(format!(
                    "<div class=\"footnote-definition\" id=\"fn-{id}\"><sup class=\"footnote-definition-label\">{n}</sup>",
                    id = escape_html(label),
                    n = notes.get(label.as_ref()).copied().unwrap_or(0)
                ))));
                i += 1;
            }
            Event::End(TagEnd::FootnoteDefinition) => {
                out.push(Event::Html(CowStr::from("</div>\n")));
                i += 1;
            }
            Event::Start(Tag::Heading { level, id, .. }) => {
                // Gather the heading's inline events up to its end.
                let mut j = i + 1;
                let mut depth = 0;
                while j < events.len() {
                    match &events[j] {
                        Event::Start(_) => depth += 1,
                        Event::End(TagEnd::Heading(_)) if depth == 0 => break,
                        Event::End(_) => depth -= 1,
                        _ => {}
                    }
                    j += 1;
                }
                let inner = &events[i + 1..j.min(events.len())];
                let text = plain_text(inner);
                if *level == HeadingLevel::H1 && title.is_none() {
                    title = Some(text.clone());
                }
                let base_id = id
                    .as_ref()
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| slug(&text));
                // GitHub numbers repeats (`setup`, `setup-1`); a number
                // another heading already took as its own slug is skipped,
                // so "Setup", "Setup", "Setup-1" stay distinct.
                let n = used.entry(base_id.clone()).or_insert(0);
                let mut anchor = if *n == 0 {
                    base_id.clone()
                } else {
                    format!("{base_id}-{n}")
                };
                *n += 1;
                while taken.contains(&anchor) {
                    let n = used.entry(base_id.clone()).or_insert(0);
                    anchor = format!("{base_id}-{n}");
                    *n += 1;
                }
                taken.insert(anchor.clone());
                let mut inner_html = String::new();
                let rewritten: Vec<Event<'_>> = inner
                    .iter()
                    .cloned()
                    .map(|e| rewrite_event(e, base, prefix, &mut figures, &mut read))
                    .collect();
                html::push_html(&mut inner_html, rewritten.into_iter());
                let tag = heading_tag(*level);
                out.push(Event::Html(CowStr::from(format!(
                    "<{tag} id=\"{id}\">{inner_html} <a class=\"anchor\" href=\"#{id}\" aria-label=\"link to this section\">#</a></{tag}>\n",
                    id = escape_html(&anchor)
                ))));
                i = j + 1;
            }
            Event::Start(Tag::Image {
                dest_url,
                title: image_title,
                ..
            }) => {
                let mut j = i + 1;
                let mut depth = 0;
                while j < events.len() {
                    match &events[j] {
                        Event::Start(_) => depth += 1,
                        Event::End(TagEnd::Image) if depth == 0 => break,
                        Event::End(_) => depth -= 1,
                        _ => {}
                    }
                    j += 1;
                }
                let alt = plain_text(&events[i + 1..j.min(events.len())]);
                figures += 1;
                let (inlined, path) = inline_image(
                    base,
                    dest_url,
                    &alt,
                    image_title,
                    &format!("{prefix}{figures}"),
                    "",
                );
                if let super::assets::Inlined::Missing(_) = inlined {
                    missing.push(dest_url.to_string());
                }
                read.extend(path);
                out.push(Event::InlineHtml(CowStr::from(inlined.html().to_string())));
                i = j + 1;
            }
            Event::Start(Tag::BlockQuote(Some(kind))) => {
                // A GitHub alert (`> [!NOTE]`): GitHub shows its label; so
                // do we (pulldown-cmark gives only the class).
                let label = match kind {
                    BlockQuoteKind::Note => "Note",
                    BlockQuoteKind::Tip => "Tip",
                    BlockQuoteKind::Important => "Important",
                    BlockQuoteKind::Warning => "Warning",
                    BlockQuoteKind::Caution => "Caution",
                };
                out.push(events[i].clone());
                out.push(Event::Html(CowStr::from(format!(
                    "<p class=\"markdown-alert-title\">{label}</p>\n"
                ))));
                i += 1;
            }
            other => {
                out.push(rewrite_event(
                    other.clone(),
                    base,
                    prefix,
                    &mut figures,
                    &mut read,
                ));
                i += 1;
            }
        }
    }
    let mut body = String::with_capacity(markdown.len() * 2);
    html::push_html(&mut body, out.into_iter());
    read.sort();
    read.dedup();
    Rendered {
        title,
        body,
        read,
        missing,
    }
}

fn heading_tag(level: HeadingLevel) -> &'static str {
    match level {
        HeadingLevel::H1 => "h1",
        HeadingLevel::H2 => "h2",
        HeadingLevel::H3 => "h3",
        HeadingLevel::H4 => "h4",
        HeadingLevel::H5 => "h5",
        HeadingLevel::H6 => "h6",
    }
}

/// Links to Markdown become links to HTML; raw HTML gets its images
/// inlined and its links rewritten.
fn rewrite_event<'a>(
    event: Event<'a>,
    base: &Path,
    prefix: &str,
    figures: &mut usize,
    read: &mut Vec<PathBuf>,
) -> Event<'a> {
    match event {
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            // A link that would run code goes nowhere (the CSP would block
            // it anyway; third new-user review of issue 5).
            dest_url: CowStr::from(if super::assets::dangerous_value(&dest_url) {
                "#".to_string()
            } else {
                rewrite_link(&dest_url)
            }),
            title,
            id,
        }),
        Event::Html(text) if text.contains('<') => {
            let (html, files) = rewrite_raw_html(&text, base, &format!("{prefix}h"), figures);
            read.extend(files);
            Event::Html(CowStr::from(html))
        }
        Event::InlineHtml(text) if text.contains('<') => {
            let (html, files) = rewrite_raw_html(&text, base, &format!("{prefix}h"), figures);
            read.extend(files);
            Event::InlineHtml(CowStr::from(html))
        }
        other => other,
    }
}

/// The text of inline events (for ids, titles and alt text).
fn plain_text(events: &[Event<'_>]) -> String {
    let mut text = String::new();
    for e in events {
        match e {
            Event::Text(t) | Event::Code(t) => text.push_str(t),
            Event::SoftBreak | Event::HardBreak => text.push(' '),
            _ => {}
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// No Markdown text makes a page panic: raw HTML, images, SVG
        /// attributes and handlers, next to CJK and emoji (a space before
        /// a multi-byte character once did, in an inlined SVG).
        #[test]
        fn rendering_any_text_never_panics(text in "[ a-z<>=\"'/#!\\[\\]()*_`|\n中😀é-]{0,120}") {
            let _ = render(&text, Path::new("."), "p");
        }
    }

    fn body(md: &str) -> String {
        render(md, Path::new("."), "p").body
    }

    #[test]
    fn headings_get_unique_anchors_and_the_first_h1_is_the_title() {
        let r = render(
            "# Runs: demo\n\n## Setup\n\n## Setup\n\n## `code` & more!\n",
            Path::new("."),
            "p",
        );
        assert_eq!(r.title.as_deref(), Some("Runs: demo"));
        assert!(
            r.body
                .contains("<h2 id=\"setup\">Setup <a class=\"anchor\" href=\"#setup\""),
            "{}",
            r.body
        );
        assert!(r.body.contains("<h2 id=\"setup-1\">"), "{}", r.body);
        assert!(
            r.body
                .contains("<h2 id=\"code--more\"><code>code</code> &amp; more!"),
            "{}",
            r.body
        );
    }

    #[test]
    fn sparql_and_quotes_stay_literal() {
        let b = body(
            "Run `SELECT ?s WHERE { ?s ?p \"x\" } -- done` and \"quotes\" -- 'apostrophes'.\n",
        );
        assert!(
            b.contains("<code>SELECT ?s WHERE { ?s ?p \"x\" } -- done</code>"),
            "{b}"
        );
        assert!(b.contains("\"quotes\" -- 'apostrophes'"), "{b}");
    }

    #[test]
    fn footnotes_and_headings_never_share_an_id() {
        let b = body(
            "# T\n\n## Note\n\nSee[^note] and[^2].\n\n## 2\n\n## fn-note\n\n[^note]: Hi.\n\n[^2]: y\n\n[x](javascript:alert(1)) <javascript:alert(2)>\n",
        );
        let mut ids: Vec<&str> = b
            .split("id=\"")
            .skip(1)
            .map(|r| &r[..r.find('"').unwrap()])
            .collect();
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n, "a repeated id: {b}");
        assert!(
            b.contains("<a href=\"#fn-note\">1</a>") && b.contains("id=\"fn-note\""),
            "{b}"
        );
        assert!(
            b.contains("<a href=\"#fn-2\">2</a>") && b.contains("id=\"fn-2\""),
            "{b}"
        );
        assert!(
            b.contains("id=\"note\"") && b.contains("id=\"fn-note-1\""),
            "{b}"
        );
        assert!(!b.contains("href=\"javascript:"), "{b}");
    }

    #[test]
    fn tables_code_footnotes_and_raw_html() {
        let b = body(
            "| a | b |\n|---|---|\n| `<x>` | 2 |\n\nText[^1].\n\n[^1]: Note.\n\n<details><summary>More</summary>\n\nHidden.\n\n</details>\n\n```sparql\nSELECT * { ?s ?p ?o }\n```\n",
        );
        assert!(
            b.contains("<table>") && b.contains("<td><code>&lt;x&gt;</code></td>"),
            "{b}"
        );
        assert!(b.contains("footnote-definition"), "{b}");
        assert!(b.contains("<details><summary>More</summary>"), "{b}");
        assert!(
            b.contains("<pre><code class=\"language-sparql\">SELECT * { ?s ?p ?o }"),
            "{b}"
        );
    }

    #[test]
    fn links_to_markdown_become_html() {
        let b = body("See [the summary](SUMMARY.md#rates) and [site](https://ex.org/x.md).\n");
        assert!(b.contains("href=\"SUMMARY.html#rates\""), "{b}");
        assert!(b.contains("href=\"https://ex.org/x.md\""), "{b}");
    }

    #[test]
    fn a_heading_named_like_a_numbered_repeat_keeps_ids_distinct() {
        let b = body("# Setup\n\n## Setup\n\n## Setup-1\n\n## Setup\n");
        for id in [
            "id=\"setup\"",
            "id=\"setup-1\"",
            "id=\"setup-1-1\"",
            "id=\"setup-2\"",
        ] {
            assert_eq!(b.matches(id).count(), 1, "{id} in {b}");
        }
    }

    #[test]
    fn alerts_show_their_label() {
        let b = body("> [!WARNING]\n> Mind the gap.\n");
        assert!(
            b.contains("<blockquote class=\"markdown-alert-warning\">\n<p class=\"markdown-alert-title\">Warning</p>"),
            "{b}"
        );
    }

    #[test]
    fn slugs_follow_github() {
        assert_eq!(slug("Quick start"), "quick-start");
        assert_eq!(slug("What's new? (2026)"), "whats-new-2026");
        assert_eq!(slug("数据 集"), "数据-集");
        assert_eq!(slug("!!!"), "section");
    }
}
