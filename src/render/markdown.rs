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

use super::assets::{Assets, inline_image, rewrite_link, rewrite_raw_html};
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
    /// Images not read: outside the project, or not images ([`super::assets::refusal`]).
    pub refused: Vec<String>,
    /// Raw HTML tags dropped because they would navigate the page or
    /// change its base (`<meta http-equiv>`, `<base>`), as written.
    pub dropped: Vec<String>,
    /// SVG images not inlined for nesting deeper than
    /// [`super::assets::MAX_SVG_DEPTH`], by path.
    pub too_deep: Vec<PathBuf>,
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

/// A footnote label as it stands in an id: ASCII letters, digits, `-` and
/// `_` kept, every other character percent-encoded (UTF-8), so an id has
/// no space, no quote and no `.` (ids: HTML Living Standard, "The id
/// attribute").
fn note_id(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for c in label.chars() {
        if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// Appends the footnotes, in number order, as a numbered list at the end
/// (`<section class="footnotes">`), each ending in a link back to its
/// first reference (`↩`) when the text refers to it: how GitHub shows
/// them. A definition that is never referred to is listed all the same.
fn footnotes_section<'e>(
    out: &mut Vec<Event<'e>>,
    mut notes: Vec<(usize, String, Vec<Event<'e>>)>,
    referenced: &HashMap<String, usize>,
) {
    if notes.is_empty() {
        return;
    }
    notes.sort_by_key(|(n, _, _)| *n);
    // A label defined twice: the first definition is the note (as GitHub
    // takes it).
    let mut defined = std::collections::HashSet::new();
    notes.retain(|(_, label, _)| defined.insert(label.clone()));
    out.push(Event::Html(CowStr::from(
        "<section class=\"footnotes\">\n<ol>\n",
    )));
    for (n, label, mut events) in notes {
        let id = note_id(&label);
        out.push(Event::Html(CowStr::from(format!(
            "<li id=\"fn-{id}\" value=\"{n}\">\n"
        ))));
        if referenced.contains_key(&label) {
            let back = Event::InlineHtml(CowStr::from(format!(
                " <a href=\"#fnref-{id}\" class=\"footnote-backref\" aria-label=\"Back to reference {n}\">↩</a>"
            )));
            // Inside the last paragraph, as GitHub puts it.
            match events
                .iter()
                .rposition(|e| matches!(e, Event::End(TagEnd::Paragraph)))
            {
                Some(at) if at + 1 == events.len() => events.insert(at, back),
                _ => events.push(back),
            }
        }
        out.extend(events);
        out.push(Event::Html(CowStr::from("</li>\n")));
    }
    out.push(Event::Html(CowStr::from("</ol>\n</section>\n")));
}

/// Renders `markdown`. Relative images are taken from `assets` under
/// their paths relative to `base` (the document's folder); `prefix` keeps
/// inline SVG ids unique on the page. Rendering with
/// [`super::assets::Wanted`] finds which files the page embeds without
/// reading any.
pub fn render(markdown: &str, base: &Path, prefix: &str, assets: &dyn Assets) -> Rendered {
    let events: Vec<Event<'_>> = Parser::new_ext(markdown, options()).collect();
    let mut page = Page {
        base,
        prefix,
        assets,
        figures: 0,
        read: Vec::new(),
        missing: Vec::new(),
        refused: Vec::new(),
        dropped: Vec::new(),
        too_deep: Vec::new(),
        used: HashMap::new(),
        taken: std::collections::HashSet::new(),
        notes: HashMap::new(),
        title: None,
        links: Vec::new(),
    };
    page.number_footnotes(&events);
    let mut body_events: Vec<Event<'_>> = Vec::with_capacity(events.len());
    // Footnote definitions are taken out of the text and listed at the
    // end, numbered, each with a link back to its first reference, as
    // GitHub shows them: (number, label, its events).
    let mut notes: Vec<(usize, String, Vec<Event<'_>>)> = Vec::new();
    let mut in_note = false;
    let mut referenced: HashMap<String, usize> = HashMap::new();
    let mut i = 0;
    while i < events.len() {
        let out = match (in_note, notes.last_mut()) {
            (true, Some(note)) => &mut note.2,
            _ => &mut body_events,
        };
        match &events[i] {
            Event::FootnoteReference(label) => {
                let seen = referenced.entry(label.to_string()).or_insert(0);
                *seen += 1;
                let id = note_id(label);
                // `.` never occurs in a label's id: `fnref-a.2` (the second
                // reference to `a`) is no other label's.
                let anchor = if *seen == 1 {
                    format!("fnref-{id}")
                } else {
                    format!("fnref-{id}.{seen}")
                };
                out.push(Event::InlineHtml(CowStr::from(format!(
                    "<sup class=\"footnote-reference\"><a href=\"#fn-{id}\" id=\"{anchor}\">{n}</a></sup>",
                    n = page.note(label)
                ))));
                i += 1;
            }
            Event::Start(Tag::FootnoteDefinition(label)) => {
                notes.push((page.note(label), label.to_string(), Vec::new()));
                in_note = true;
                i += 1;
            }
            Event::End(TagEnd::FootnoteDefinition) => {
                in_note = false;
                i += 1;
            }
            Event::Start(Tag::Heading { level, id, .. }) => {
                let end = end_of(&events, i, |e| matches!(e, TagEnd::Heading(_)));
                out.push(page.heading(*level, id.as_deref(), &events[i + 1..end]));
                i = end + 1;
            }
            Event::Start(Tag::Image {
                dest_url,
                title: image_title,
                ..
            }) => {
                let end = end_of(&events, i, |e| matches!(e, TagEnd::Image));
                let alt = plain_text(&events[i + 1..end]);
                out.push(page.image(dest_url, &alt, image_title));
                i = end + 1;
            }
            Event::Start(Tag::BlockQuote(Some(kind))) => {
                // A GitHub alert (`> [!NOTE]`): GitHub shows its label; so
                // do we (pulldown-cmark gives only the class).
                let label = alert_label(*kind);
                out.push(events[i].clone());
                out.push(Event::Html(CowStr::from(format!(
                    "<p class=\"markdown-alert-title\">{label}</p>\n"
                ))));
                i += 1;
            }
            Event::Html(_) => {
                // pulldown-cmark hands an HTML block over line by line: a
                // tag whose attributes follow on the next line (`<base\n
                // href=...>`) is whole only once the lines are joined.
                let mut block = String::new();
                while let Some(Event::Html(line)) = events.get(i) {
                    block.push_str(line);
                    i += 1;
                }
                out.push(page.rewrite_event(Event::Html(CowStr::from(block))));
            }
            other => {
                out.push(page.rewrite_event(other.clone()));
                i += 1;
            }
        }
    }
    let mut out = body_events;
    footnotes_section(&mut out, notes, &referenced);
    let mut body = String::with_capacity(markdown.len() * 2);
    html::push_html(&mut body, out.into_iter());
    // Raw HTML's images inlined, then the whole body held to the
    // allow-list, read as a browser reads it (issue 24, item 24).
    let raw = rewrite_raw_html(
        &body,
        base,
        &format!("{prefix}h"),
        &mut page.figures,
        assets,
    );
    page.read.extend(raw.read);
    page.dropped.extend(raw.dropped);
    page.too_deep.extend(raw.too_deep);
    let body = super::sanitize::body(&raw.html);
    page.read.sort();
    page.read.dedup();
    Rendered {
        title: page.title,
        body,
        read: page.read,
        missing: page.missing,
        refused: page.refused,
        dropped: page.dropped,
        too_deep: page.too_deep,
    }
}

/// The label GitHub shows over an alert (`> [!NOTE]` is "Note").
pub fn alert_label(kind: BlockQuoteKind) -> &'static str {
    match kind {
        BlockQuoteKind::Note => "Note",
        BlockQuoteKind::Tip => "Tip",
        BlockQuoteKind::Important => "Important",
        BlockQuoteKind::Warning => "Warning",
        BlockQuoteKind::Caution => "Caution",
    }
}

/// The index of the end of the element that starts at `start` (its
/// matching `End` event, found by depth), or the last index when it is not
/// closed.
fn end_of(events: &[Event<'_>], start: usize, is_end: impl Fn(&TagEnd) -> bool) -> usize {
    let mut j = start + 1;
    let mut depth = 0;
    while j < events.len() {
        match &events[j] {
            Event::Start(_) => depth += 1,
            Event::End(end) if depth == 0 && is_end(end) => break,
            Event::End(_) => depth -= 1,
            _ => {}
        }
        j += 1;
    }
    j.min(events.len())
}

/// What rendering one page keeps track of.
struct Page<'p> {
    base: &'p Path,
    prefix: &'p str,
    assets: &'p dyn Assets,
    /// Images met so far (each inlined SVG gets its own id prefix).
    figures: usize,
    read: Vec<PathBuf>,
    missing: Vec<String>,
    refused: Vec<String>,
    dropped: Vec<String>,
    too_deep: Vec<PathBuf>,
    /// Heading slugs and how often each was used.
    used: HashMap<String, usize>,
    /// Every id given out (headings and footnotes).
    taken: std::collections::HashSet<String>,
    /// Footnote label → its number.
    notes: HashMap<String, usize>,
    title: Option<String>,
    /// For each link open, whether it is written as a link.
    links: Vec<bool>,
}

impl Page<'_> {
    /// Footnotes get ids of their own (`fn-LABEL`), taken before any
    /// heading's, so `## Note` and `[^note]` do not share `id="note"`;
    /// numbered in order of first appearance, as pulldown-cmark numbers
    /// them.
    fn number_footnotes(&mut self, events: &[Event<'_>]) {
        for e in events {
            if let Event::FootnoteReference(label) | Event::Start(Tag::FootnoteDefinition(label)) =
                e
            {
                let next = self.notes.len() + 1;
                self.notes.entry(label.to_string()).or_insert(next);
                self.taken.insert(format!("fn-{}", note_id(label)));
                self.taken.insert(format!("fnref-{}", note_id(label)));
            }
        }
    }

    fn note(&self, label: &str) -> usize {
        self.notes.get(label).copied().unwrap_or(0)
    }

    /// A heading with a unique id and a `#` link to it; the first level-1
    /// heading is the page's title.
    fn heading<'e>(
        &mut self,
        level: HeadingLevel,
        id: Option<&str>,
        inner: &[Event<'e>],
    ) -> Event<'e> {
        let text = plain_text(inner);
        if level == HeadingLevel::H1 && self.title.is_none() {
            self.title = Some(text.clone());
        }
        let base_id = id.map_or_else(|| slug(&text), str::to_string);
        // GitHub numbers repeats (`setup`, `setup-1`); a number another
        // heading already took as its own slug is skipped, so "Setup",
        // "Setup", "Setup-1" stay distinct.
        let n = self.used.entry(base_id.clone()).or_insert(0);
        let mut anchor = if *n == 0 {
            base_id.clone()
        } else {
            format!("{base_id}-{n}")
        };
        *n += 1;
        while self.taken.contains(&anchor) {
            let n = self.used.entry(base_id.clone()).or_insert(0);
            anchor = format!("{base_id}-{n}");
            *n += 1;
        }
        self.taken.insert(anchor.clone());
        let mut inner_html = String::new();
        let rewritten: Vec<Event<'_>> = inner
            .iter()
            .cloned()
            .map(|e| self.rewrite_event(e))
            .collect();
        html::push_html(&mut inner_html, rewritten.into_iter());
        let tag = heading_tag(level);
        Event::Html(CowStr::from(format!(
            "<{tag} id=\"{id}\">{inner_html} <a class=\"anchor\" href=\"#{id}\" aria-label=\"link to this section\">#</a></{tag}>\n",
            id = escape_html(&anchor)
        )))
    }

    /// An image, inlined from the assets.
    fn image<'e>(&mut self, dest_url: &str, alt: &str, title: &str) -> Event<'e> {
        self.figures += 1;
        let image = super::assets::Image {
            src: dest_url,
            alt,
            title,
            extra: "",
        };
        let (inlined, path) = inline_image(
            self.assets,
            self.base,
            &image,
            &format!("{}{}", self.prefix, self.figures),
        );
        match inlined {
            super::assets::Inlined::Missing(_) => self.missing.push(dest_url.to_string()),
            super::assets::Inlined::Refused(_) => self.refused.push(dest_url.to_string()),
            super::assets::Inlined::TooDeep(_) => self.too_deep.extend(path.clone()),
            _ => {}
        }
        self.read.extend(path);
        Event::InlineHtml(CowStr::from(inlined.html().to_string()))
    }

    /// Links to Markdown become links to HTML; raw HTML gets its images
    /// inlined and its links rewritten.
    fn rewrite_event<'a>(&mut self, event: Event<'a>) -> Event<'a> {
        match event {
            // A link the policy refuses is its text alone (issue 24, item
            // 25; `render::links`): its start and end write nothing.
            Event::Start(Tag::Link { dest_url, .. }) if !super::links::allowed(&dest_url) => {
                self.links.push(false);
                Event::Text(CowStr::Borrowed(""))
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                self.links.push(true);
                Event::Start(Tag::Link {
                    link_type,
                    dest_url: CowStr::from(rewrite_link(&dest_url)),
                    title,
                    id,
                })
            }
            Event::End(TagEnd::Link) if self.links.pop() == Some(false) => {
                Event::Text(CowStr::Borrowed(""))
            }
            other => other,
        }
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
            let _ = render(&text, Path::new("."), "p", &crate::render::assets::AssetMap::new());
        }
    }

    fn body(md: &str) -> String {
        render(
            md,
            Path::new("."),
            "p",
            &crate::render::assets::AssetMap::new(),
        )
        .body
    }

    #[test]
    fn headings_get_unique_anchors_and_the_first_h1_is_the_title() {
        let r = render(
            "# Runs: demo\n\n## Setup\n\n## Setup\n\n## `code` & more!\n",
            Path::new("."),
            "p",
            &crate::render::assets::AssetMap::new(),
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
            "# T\n\n## Note\n\nSee[^note] and[^2].\n\n## 2\n\n## fn-note\n\n## fnref-note\n\n[^note]: Hi.\n\n[^2]: y\n\n[x](javascript:alert(1)) <javascript:alert(2)>\n",
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
            b.contains("<a href=\"#fn-note\" id=\"fnref-note\">1</a>")
                && b.contains("id=\"fn-note\""),
            "{b}"
        );
        assert!(
            b.contains("<a href=\"#fn-2\" id=\"fnref-2\">2</a>") && b.contains("id=\"fn-2\""),
            "{b}"
        );
        assert!(
            b.contains("id=\"note\"")
                && b.contains("id=\"fn-note-1\"")
                && b.contains("id=\"fnref-note-1\""),
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
        assert!(b.contains("<section class=\"footnotes\">"), "{b}");
        assert!(b.contains("<details><summary>More</summary>"), "{b}");
        assert!(
            b.contains("<pre><code class=\"language-sparql\">SELECT * { ?s ?p ?o }"),
            "{b}"
        );
    }

    /// paper.html showed a footnote as a bare "1" line above its text, where
    /// it was defined: now a numbered list at the end with back-links, as
    /// GitHub renders them (issue: publishing as the seed's studies do it,
    /// "The manuscript").
    #[test]
    fn footnotes_are_a_numbered_list_at_the_end_with_back_links() {
        let b = body(
            "A claim[^b] and another[^a], again[^b].\n\n[^a]: The *second* note.\n\n[^b]: The first.\n\n[^unused]: Never cited.\n\n## After\n\nText after.\n",
        );
        let section = b
            .find("<section class=\"footnotes\">")
            .expect("a footnote section");
        assert!(
            b.find("Text after.").unwrap() < section,
            "the notes come last: {b}"
        );
        assert!(b.contains("<a href=\"#fn-b\" id=\"fnref-b\">1</a>"), "{b}");
        assert!(b.contains("<a href=\"#fn-a\" id=\"fnref-a\">2</a>"), "{b}");
        assert!(
            b.contains("<a href=\"#fn-b\" id=\"fnref-b.2\">1</a>"),
            "{b}"
        );
        let notes = &b[section..];
        let (first, second) = (
            notes.find("id=\"fn-b\"").unwrap(),
            notes.find("id=\"fn-a\"").unwrap(),
        );
        assert!(first < second, "in number order: {notes}");
        assert!(
            notes.contains("<li id=\"fn-b\" value=\"1\">\n<p>The first. <a href=\"#fnref-b\" class=\"footnote-backref\" aria-label=\"Back to reference 1\">↩</a></p>\n</li>"),
            "{notes}"
        );
        assert!(notes.contains("<em>second</em>"), "{notes}");
        assert!(
            notes.contains("Never cited.</p>\n</li>"),
            "an unreferenced note has no back-link: {notes}"
        );
        assert!(!b.contains("footnote-definition-label"), "{b}");
    }

    /// Red team, 2026-12-02: the second reference to `l` took `fnref-l-2`,
    /// the id of the reference to a label `l-2`; a label with a space gave
    /// `id="fn-a b"`; a label defined twice was listed twice.
    #[test]
    fn footnote_ids_never_collide_and_hold_no_space() {
        let b = body(
            "x[^l] y[^l] z[^l-2] w[^a b].\n\n[^l]: L.\n\n[^l-2]: L2.\n\n[^a b]: AB.\n\n[^l]: again.\n",
        );
        let mut ids: Vec<&str> = b
            .split("id=\"")
            .skip(1)
            .map(|r| &r[..r.find('"').unwrap()])
            .collect();
        assert!(ids.iter().all(|id| !id.contains(' ')), "{ids:?}");
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n, "a repeated id: {b}");
        assert!(
            b.contains("id=\"fnref-l.2\"") && b.contains("id=\"fnref-l-2\""),
            "{b}"
        );
        assert!(
            b.contains("href=\"#fn-a%20b\"") && b.contains("id=\"fn-a%20b\""),
            "{b}"
        );
        assert_eq!(b.matches("<li id=\"fn-l\"").count(), 1, "{b}");
        assert!(
            !b.contains("again."),
            "the first definition is the note: {b}"
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
