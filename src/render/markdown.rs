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
///
/// The text is parsed a piece at a time where it can be cut
/// (`segments`) and read top-level block by block, and the HTML of a
/// page with no raw HTML and no image is held to the allow-list about
/// [`CHUNK_BYTES`] at a time, so what it holds besides the page's own
/// HTML stays flat however long the page is (a runs root's README lists
/// every question: 3.4 MB of Markdown at 50,000 attempts, whose
/// whole-page tree, 20 MB, was the largest thing `build` held; issue 26,
/// section 4). The bytes are the same as one pass over the whole page
/// would give (its unit tests render every Markdown file of this
/// repository, and generated pages, both ways).
pub fn render(markdown: &str, base: &Path, prefix: &str, assets: &dyn Assets) -> Rendered {
    render_in(markdown, base, prefix, assets, Some(CHUNK_BYTES))
}

/// About how much HTML [`render`] holds before it passes it through the
/// allow-list: bytes.
pub const CHUNK_BYTES: usize = 64 * 1024;

/// What rendering carries from one top-level block to the next.
#[derive(Default)]
struct Blocks<'e> {
    /// Footnote definitions, taken out of the text and listed at the end,
    /// numbered, each with a link back to its first reference, as GitHub
    /// shows them: (number, label, its events).
    notes: Vec<(usize, String, Vec<Event<'e>>)>,
    /// Inside a footnote definition.
    in_note: bool,
    /// Footnote label → references to it so far.
    referenced: HashMap<String, usize>,
}

/// [`render`], writing each top-level block's HTML as it is read and
/// passing the HTML through the allow-list whenever at least `chunk`
/// bytes of it are held at the end of a block (and only once, at the end,
/// for a page with raw HTML or an image: raw HTML may open an element one
/// block and close it in another, and an image may inline any SVG, so
/// only whole pages of them are parsed as one). With `chunk` `None`, the
/// whole page's events are written at once, then held to the allow-list
/// at once: one pass, the reference its unit tests compare with.
fn render_in(
    markdown: &str,
    base: &Path,
    prefix: &str,
    assets: &dyn Assets,
    chunk: Option<usize>,
) -> Rendered {
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
    // A first reading: footnotes are numbered (and their ids taken) before
    // any heading's id is given, and raw HTML or an image is looked for.
    let segments = segments(markdown, chunk.unwrap_or(usize::MAX));
    let mut whole = false;
    for event in segments.iter().flat_map(|s| Parser::new_ext(s, options())) {
        page.number_footnote(&event);
        whole |= matches!(
            event,
            Event::Html(_) | Event::InlineHtml(_) | Event::Start(Tag::Image { .. })
        );
    }
    let chunk = if whole { Some(usize::MAX) } else { chunk };
    let mut state = Blocks::default();
    let mut block: Vec<Event<'_>> = Vec::new();
    let mut out: Vec<Event<'_>> = Vec::new();
    let mut html = String::new();
    let mut body = String::with_capacity(markdown.len().min(1 << 20) * 2);
    let mut depth = 0usize;
    for event in segments.iter().flat_map(|s| Parser::new_ext(s, options())) {
        match event {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        block.push(event);
        if depth > 0 {
            continue;
        }
        page.block(&block, &mut state, &mut out);
        block.clear();
        let Some(chunk) = chunk else {
            continue;
        };
        html::push_html(&mut html, out.drain(..));
        // Only where one pass would be at the start of a line, so the
        // HTML writer starts the next block as it would have.
        if html.len() >= chunk && html.ends_with('\n') {
            page.flush(&mut html, &mut body);
        }
    }
    page.block(&block, &mut state, &mut out);
    footnotes_section(&mut out, state.notes, &state.referenced);
    html::push_html(&mut html, out.into_iter());
    page.flush(&mut html, &mut body);
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

/// `markdown` cut into pieces that parse apart exactly as they parse
/// together, each at least `at_least` bytes long (but the last), so a
/// long page is parsed a piece at a time: pulldown-cmark builds the tree
/// of all the text it is given before it yields the first event, and a
/// runs root's README of 2,500 questions made a tree of 20 MB, the most
/// `build` held at once (issue 26, section 4).
///
/// A piece starts only at a line that begins with `#` in its first
/// column after a blank line, outside a fenced code block: such a line
/// always starts a new top-level block (an ATX heading, or a paragraph
/// that a blank line already separated). It cannot continue a list item,
/// a block quote or an indented code block, which need the line indented
/// or marked, nor a paragraph (CommonMark 0.31, "Container blocks" and
/// "ATX headings"). The text is given back whole, one piece, where a
/// piece could not be told apart from the rest:
/// - it may define a link reference or a footnote (it holds `]:`): a
///   reference is matched to its definition across the whole page (a
///   reference with no definition is text wherever it is);
/// - a line begins with `<` (an HTML block, some of which run across
///   blank lines until their end marker);
/// - a fenced code block's fence is indented (it may sit in a list item,
///   which a first-column line closes; only first-column fences are
///   followed);
/// - a line ends in a carriage return alone (a line ending to CommonMark,
///   not to this reading of lines);
/// - a closing fence is followed by a tab (CommonMark closes the block
///   there; pulldown-cmark 0.13 reads the line as code).
///
/// An independent review fuzzed it against pulldown-cmark 0.13.6 (about
/// 2.1 million generated pages, 135 written by hand, every CommonMark
/// block kind): the closing fence with a tab was the one family of pages
/// it cut wrongly, now kept whole and among the tests.
fn segments(markdown: &str, at_least: usize) -> Vec<&str> {
    let lone_cr = markdown
        .split('\r')
        .skip(1)
        .any(|after| !after.starts_with('\n'));
    if markdown.len() <= at_least || markdown.contains("]:") || lone_cr {
        return vec![markdown];
    }
    let mut starts = vec![0];
    // The open fence's character and length.
    let mut fence: Option<(u8, usize)> = None;
    let mut after_blank = false;
    let mut at = 0;
    for line in markdown.split_inclusive('\n') {
        let here = at;
        at += line.len();
        let text = line.trim_end_matches(['\n', '\r']);
        let rest = text.trim_start_matches([' ', '\t']);
        let indent = text.len() - rest.len();
        if let Some((mark, length)) = fence {
            // A closing fence: up to three spaces, at least as many of the
            // same character, then only spaces or tabs.
            let run = rest.bytes().take_while(|&b| b == mark).count();
            if indent <= 3
                && !text[..indent].contains('\t')
                && run >= length
                && rest[run..].trim_matches([' ', '\t']).is_empty()
            {
                // CommonMark closes the fence with tabs after it too;
                // pulldown-cmark 0.13 does not (a helper's fuzzing found
                // "```\n```\t\n\n# h" cut inside the code block). Where
                // the two readings part, the page is not cut.
                if rest[run..].contains('\t') {
                    return vec![markdown];
                }
                fence = None;
            }
            after_blank = false;
            continue;
        }
        if rest.starts_with("```") || rest.starts_with("~~~") {
            let mark = rest.as_bytes()[0];
            let run = rest.bytes().take_while(|&b| b == mark).count();
            // A backtick fence's info string holds no backtick; otherwise
            // the line is a paragraph with a code span.
            if mark == b'~' || !rest[run..].contains('`') {
                if indent > 0 {
                    return vec![markdown];
                }
                fence = Some((mark, run));
                after_blank = false;
                continue;
            }
        }
        if rest.starts_with('<') {
            return vec![markdown];
        }
        let last = *starts.last().unwrap_or(&0);
        if after_blank && indent == 0 && rest.starts_with('#') && here - last >= at_least {
            starts.push(here);
        }
        after_blank = rest.trim_end_matches([' ', '\t', '\r']).is_empty();
    }
    starts.push(markdown.len());
    starts
        .windows(2)
        .filter_map(|w| markdown.get(w[0]..w[1]))
        .collect()
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
    fn number_footnote(&mut self, event: &Event<'_>) {
        if let Event::FootnoteReference(label) | Event::Start(Tag::FootnoteDefinition(label)) =
            event
        {
            let next = self.notes.len() + 1;
            self.notes.entry(label.to_string()).or_insert(next);
            self.taken.insert(format!("fn-{}", note_id(label)));
            self.taken.insert(format!("fnref-{}", note_id(label)));
        }
    }

    /// The events of one top-level block as the page shows them, pushed
    /// onto `body` (a footnote definition's onto its note in `state`).
    fn block<'e>(
        &mut self,
        events: &[Event<'e>],
        state: &mut Blocks<'e>,
        body: &mut Vec<Event<'e>>,
    ) {
        let mut i = 0;
        while i < events.len() {
            let out = match (state.in_note, state.notes.last_mut()) {
                (true, Some(note)) => &mut note.2,
                _ => &mut *body,
            };
            match &events[i] {
                Event::FootnoteReference(label) => {
                    let seen = state.referenced.entry(label.to_string()).or_insert(0);
                    *seen += 1;
                    let id = note_id(label);
                    // `.` never occurs in a label's id: `fnref-a.2` (the
                    // second reference to `a`) is no other label's.
                    let anchor = if *seen == 1 {
                        format!("fnref-{id}")
                    } else {
                        format!("fnref-{id}.{seen}")
                    };
                    out.push(Event::InlineHtml(CowStr::from(format!(
                        "<sup class=\"footnote-reference\"><a href=\"#fn-{id}\" id=\"{anchor}\">{n}</a></sup>",
                        n = self.note(label)
                    ))));
                    i += 1;
                }
                Event::Start(Tag::FootnoteDefinition(label)) => {
                    state
                        .notes
                        .push((self.note(label), label.to_string(), Vec::new()));
                    state.in_note = true;
                    i += 1;
                }
                Event::End(TagEnd::FootnoteDefinition) => {
                    state.in_note = false;
                    i += 1;
                }
                Event::Start(Tag::Heading { level, id, .. }) => {
                    let end = end_of(events, i, |e| matches!(e, TagEnd::Heading(_)));
                    out.push(self.heading(*level, id.as_deref(), &events[i + 1..end]));
                    i = end + 1;
                }
                Event::Start(Tag::Image {
                    dest_url,
                    title: image_title,
                    ..
                }) => {
                    let end = end_of(events, i, |e| matches!(e, TagEnd::Image));
                    let alt = plain_text(&events[i + 1..end]);
                    out.push(self.image(dest_url, &alt, image_title));
                    i = end + 1;
                }
                Event::Start(Tag::BlockQuote(Some(kind))) => {
                    // A GitHub alert (`> [!NOTE]`): GitHub shows its label;
                    // so do we (pulldown-cmark gives only the class).
                    let label = alert_label(*kind);
                    out.push(events[i].clone());
                    out.push(Event::Html(CowStr::from(format!(
                        "<p class=\"markdown-alert-title\">{label}</p>\n"
                    ))));
                    i += 1;
                }
                Event::Html(_) => {
                    // pulldown-cmark hands an HTML block over line by line:
                    // a tag whose attributes follow on the next line
                    // (`<base\n href=...>`) is whole only once the lines
                    // are joined.
                    let mut block = String::new();
                    while let Some(Event::Html(line)) = events.get(i) {
                        block.push_str(line);
                        i += 1;
                    }
                    out.push(self.rewrite_event(Event::Html(CowStr::from(block))));
                }
                other => {
                    out.push(self.rewrite_event(other.clone()));
                    i += 1;
                }
            }
        }
    }

    /// Passes `html` through the allow-list onto `body`, and empties it:
    /// raw HTML's images inlined, then the HTML held to the allow-list,
    /// read as a browser reads it (issue 24, item 24).
    fn flush(&mut self, html: &mut String, body: &mut String) {
        if html.is_empty() {
            return;
        }
        let raw = rewrite_raw_html(
            html,
            self.base,
            &format!("{}h", self.prefix),
            &mut self.figures,
            self.assets,
        );
        self.read.extend(raw.read);
        self.dropped.extend(raw.dropped);
        self.too_deep.extend(raw.too_deep);
        body.push_str(&super::sanitize::body(&raw.html));
        html.clear();
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

    /// `text` rendered in pieces as small as they may be, and whole.
    fn pieces_and_whole(text: &str) -> (Rendered, Rendered) {
        let none = crate::render::assets::AssetMap::new();
        (
            render_in(text, Path::new("."), "p", &none, Some(1)),
            render_in(text, Path::new("."), "p", &none, None),
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// A page parsed in pieces ([`segments`], each as small as it may
        /// be) renders to the same bytes as the page parsed whole: pages
        /// made of lines that open, continue and close every kind of
        /// block, fences and HTML blocks running over blank lines and
        /// headings, lists loosened by a blank line, references and
        /// footnotes defined after their use, a carriage return alone.
        #[test]
        fn a_page_parsed_in_pieces_is_the_page_parsed_whole(lines in proptest::collection::vec(
            proptest::sample::select(vec![
                "# Head", "# Head", "# Head", "## Head", "#not a heading", "", "", "", "",
                "   ", "text", "- item",
                "  - nested", "1. one", "> quote", ">", "```", "```sparql", "``` a`b",
                "~~~", "    code", "  ```", "| a | b |", "|---|---|", "| 1 | 2 |",
                "<!--", "-->", "<div>", "[^a]: note", "x[^a]", "[r]: /u", "[r]", "***",
                "text\r", "a\rb", "  # indented", "\t# tab", "Setext", "===", "# é 中",
            ]),
            0..40,
        )) {
            let (pieces, whole) = pieces_and_whole(&lines.join("\n"));
            proptest::prop_assert_eq!(pieces, whole);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// [`a_page_parsed_in_pieces_is_the_page_parsed_whole`] over fewer
        /// kinds of line, so the lines that make a cut wrong meet often:
        /// what looks like a fence and is not, fences indented into a list
        /// item or past a closing fence's three spaces, a carriage return
        /// alone before a fence, a closing fence followed by a tab.
        #[test]
        fn fences_are_followed_as_the_parser_reads_them(lines in proptest::collection::vec(
            proptest::sample::select(vec![
                "# H", "", "", "```", "````", "``` a`b", "  ```", "    ```", "- i", "x\r```",
                "~~~", "```\t", "~~~ \t",
            ]),
            0..24,
        )) {
            let (pieces, whole) = pieces_and_whole(&lines.join("\n"));
            proptest::prop_assert_eq!(pieces, whole);
        }
    }

    /// A README of many questions is parsed a question at a time, and a
    /// page that a cut could change is parsed whole ([`segments`]).
    #[test]
    fn only_pages_that_parse_apart_as_together_are_cut() {
        let readme: String = (0..4)
            .map(|i| format!("### q{i}\n\n> The question.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"))
            .collect();
        let cut = segments(&readme, 1);
        assert_eq!(cut.len(), 4, "{cut:?}");
        assert_eq!(cut.concat(), readme);
        assert!(cut.iter().all(|s| s.starts_with("### q")));
        // At least 80 bytes a piece: two questions each.
        assert_eq!(segments(&readme, 80).len(), 2);
        for (why, tail) in [
            ("a reference definition", "[r]: /u\n"),
            ("a footnote", "x[^a]\n\n[^a]: The note.\n"),
            ("an HTML block", "<!--\n"),
            ("an indented fence", "  ```\n"),
            ("a carriage return alone", "a\rb\n"),
        ] {
            let page = format!("{readme}{tail}");
            assert_eq!(segments(&page, 1), vec![page.as_str()], "{why}");
        }
        // The pages a review found cut wrongly: a closing fence followed
        // by a tab closes nothing to pulldown-cmark, so the heading after
        // it is code.
        for page in [
            "```\n```\t\n\n# h\n",
            "~~~\n~~~\t\n\n# h\n",
            "```\n   ```\t\n\n# h\n",
            "````\n`````  \t\n\n# h\n",
            "```\n``` \t\n\n# h",
        ] {
            assert_eq!(segments(page, 1), vec![page], "{page:?}");
            let (pieces, whole) = pieces_and_whole(page);
            assert!(!whole.body.contains("<h1"), "{}", whole.body);
            assert_eq!(pieces, whole);
        }
        // A heading inside a fence is not a cut.
        let fenced = "# a\n\n```\n\n# not\n```\n\n# b\n";
        assert_eq!(
            segments(fenced, 1),
            vec!["# a\n\n```\n\n# not\n```\n\n", "# b\n"]
        );
    }

    /// A page rendered a block at a time (each block's HTML written as it
    /// is read, the allow-list applied after every block) is the same
    /// bytes as the page rendered in one pass (every event written at
    /// once, the allow-list applied once): every
    /// Markdown file of this repository, and a page with what carries
    /// state from one block to the next (footnotes referred to before and
    /// after their definitions, repeated headings, tables, code, lists,
    /// alerts). A page with raw HTML or an image is always read whole, so
    /// one is among them to show that too gives the same bytes.
    #[test]
    fn a_page_rendered_a_block_at_a_time_is_the_page_rendered_whole() {
        let none = crate::render::assets::AssetMap::new();
        let mut pages: Vec<(String, String)> = vec![(
            "made".into(),
            "# Title\n\nText[^a] and more.[^b]\n\n## Setup\n\n| a | b |\n|---|--:|\n| 1 | <x> |\n\n\
             ## Setup\n\n```sparql\nSELECT * { ?s ?p ?o }\n```\n\n- one\n- two\n  - deep\n\n\
             > [!NOTE]\n> Careful[^a].\n\n[^a]: The note.\n\n1. x\n2. y\n\n---\n\n[^b]: B.\n\n\
             Ends[^b] with *é* 中 `code`.\n"
                .into(),
        )];
        pages.push((
            "raw".into(),
            "# R\n\n<div>\n\nopen\n\n</div>\n\n![x](y.png)\n".into(),
        ));
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        for dir in [repo.to_path_buf(), repo.join("docs")] {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "md") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    pages.push((path.display().to_string(), text));
                }
            }
        }
        assert!(pages.len() > 10, "the repository's Markdown was found");
        for (name, text) in &pages {
            let whole = render_in(text, Path::new("."), "p", &none, None);
            let blocks = render_in(text, Path::new("."), "p", &none, Some(1));
            assert_eq!(blocks, whole, "{name}");
        }
        let made = render_in(&pages[0].1, Path::new("."), "p", &none, Some(1)).body;
        assert!(made.contains("href=\"#fn-a\""), "{made}");
        assert!(made.contains("id=\"setup-1\""), "{made}");
        assert!(made.contains("markdown-alert-title"), "{made}");
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
