//! Our RTF writer: Markdown (pulldown-cmark events, parsed with
//! [`markdown::options`](super::markdown::options)) to an RTF 1.x document,
//! plus each table as a standalone RTF document. No RTF crate is involved;
//! the rules below cite the sections of the RTF 1.9.1 specification
//! (Microsoft, 2008) they follow.
//!
//! What is written, and how:
//!
//! - **Header** ("Header", "Font Table", "Color Table", "Style Sheet",
//!   "Information Group"): `{\rtf1\ansi\ansicpg1252\deff0\uc1`, a font table
//!   with a serif body font (`\f0`), a sans heading font (`\f1`) and a
//!   monospace code font (`\f2`), a color table (link blue is `\cf2`), a
//!   style sheet naming the heading, code and caption styles (so a word
//!   processor's outline sees the headings), a `{\*\generator}` mark, and
//!   `\info` holding only the title (the first level-1 heading): no
//!   timestamps, so the same Markdown always gives the same bytes. The page
//!   is US Letter with 1-inch margins: [`TEXT_WIDTH`] twips of text.
//! - **Text** ("Unicode RTF", "Special Characters"): `\`, `{`, `}` are
//!   escaped; every non-ASCII character is `\uN?` with N the signed 16-bit
//!   value of its UTF-16 code unit (a character above U+FFFF is a surrogate
//!   pair, two `\uN?`), `?` being the one fallback byte `\uc1` announces;
//!   a tab is `\tab`. See [`escape`].
//! - **Paragraphs** ("Paragraph Formatting Properties"): each is `\pard\plain`
//!   with its style, indents (`\li`, `\fi`, twips), spacing (`\sb`, `\sa`)
//!   and font size (`\fs`, half-points), ended by `\par`. Headings are bold,
//!   sans and sized by level ([`HEADING_SIZES`]), with `\outlinelevel`.
//!   Soft breaks are spaces, hard breaks `\line`.
//! - **Character formatting** ("Character Formatting Properties"): emphasis
//!   `\i`, strong `\b`, strikethrough `\strike`, inline code `\f2`, each in
//!   its own group.
//! - **Code blocks**: one paragraph in `\f2` at [`CODE_SIZE`], each source
//!   line kept by `\line`, leading spaces intact.
//! - **Lists**: the bullet (`•`, `◦`, `▪` by depth) or number (`N.`) is
//!   text, hung in the left indent: `\li` is the item's indent, `\fi` minus
//!   the marker width, a `\tx` tab stop at `\li` and `\tab` after the marker.
//!   Each nesting level indents by the marker width (360 twips for bullets,
//!   480 for numbers). Task list items get `☐` / `☒` before their text.
//! - **Block quotes** are indented 720 twips per level; a GitHub alert
//!   (`> [!NOTE]`) gets a bold label paragraph ("Note", "Warning", …).
//! - **Links** ("Fields"): `{\field{\*\fldinst HYPERLINK "url"}{\fldrslt
//!   text}}`, the URL percent-encoded where it holds a space, `"`, `\`, a
//!   brace or a non-ASCII character; e-mail autolinks get `mailto:`. A link to
//!   a fragment of the page only (`#setup`) is plain text: RTF has no anchors
//!   for it to reach.
//! - **Footnotes**: the reference is a superscript number, numbered in order
//!   of first appearance (reference or definition, as the HTML renderer does);
//!   the definitions are collected and written after a rule at the end of the
//!   document as a numbered list, in number order.
//! - **Raw HTML**: tags are dropped and their text kept. An HTML block becomes
//!   paragraphs (block tags such as `<p>`, `<div>`, `<details>`, `<summary>`,
//!   `<tr>` break paragraphs, `<br>` breaks lines, `<td>` separates by a
//!   space), entities are decoded, comments, `<script>` and `<style>` are
//!   dropped, and an `<img>` becomes its alt text in brackets. Inline HTML
//!   keeps `<br>` as `\line` and `<img alt>` as `[alt]`; other tags vanish.
//! - **Images** ("Pictures"): a local PNG or JPEG (found relative to the
//!   document's folder, dimensions read from its header) is embedded as
//!   `{\pict\pngblip …}` / `{\pict\jpegblip …}` in hex, at 96 pixels per
//!   inch (15 twips a pixel), scaled down to the text width. An SVG (the
//!   study figures), which RTF cannot show, is rasterized to a PNG at 300
//!   dots per inch ([`super::raster`], resvg with a built-in font) and
//!   embedded the same way, `\picwgoal`/`\pichgoal` from the SVG's own
//!   size. Everything else (GIF; remote, missing or unreadable files; an
//!   SVG that does not parse; any image inside a table cell) is its alt
//!   text in brackets, `[alt]`, or the file name when the alt text is empty.
//! - **Tables** ("Table Definitions"): one `\trowd … \row` per row,
//!   `\trgaph108`, `\trleft` at the current indent, one `\cellx` per column at
//!   its right boundary (from [`column_widths_at`]), `\intbl … \cell` per cell
//!   in [`TABLE_SIZE`], the header row bold and marked `\trhdr`, alignment
//!   from the Markdown delimiter row (`\ql`, `\qc`, `\qr`), a rule above and
//!   below the header and below the last row. A short empty paragraph
//!   follows every table so two tables never merge.
//! - **Captions**: a paragraph immediately followed by a table (nothing in
//!   between, at the same nesting) whose text satisfies [`is_caption`]
//!   (`Table 1: …`, `Table 2. …`, `Table S3 …`, `Table: …`) is that table's
//!   caption: it is written in the caption style with `\keepn` (kept with
//!   the table) and is copied, with the table, into the table's standalone
//!   document.
//!
//! A table's standalone document (`--tables`) carries its caption and,
//! after the same rule, the footnotes its caption and cells refer to.
//!
//! Not supported: links to fragments of the page, GIF pictures (SVG is
//! rasterized), Markdown inside HTML blocks beyond its text, math (written as
//! code text).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use pulldown_cmark::{
    Alignment, BlockQuoteKind, Event, HeadingLevel, LinkType, Parser, Tag, TagEnd,
};

use super::assets::{attribute, decode_entities, is_external, percent_decode, tag_end};
use super::markdown::options;

/// Paper width, twips (US Letter, 8.5 in).
pub const PAGE_WIDTH: i32 = 12240;
/// Paper height, twips (US Letter, 11 in).
pub const PAGE_HEIGHT: i32 = 15840;
/// Each page margin, twips (1 in).
pub const MARGIN: i32 = 1440;
/// The width of the text column, twips: [`PAGE_WIDTH`] minus two margins.
pub const TEXT_WIDTH: i32 = PAGE_WIDTH - 2 * MARGIN;

/// The text width of a landscape page (US Letter turned, same margins),
/// twips: where a standalone table too wide for portrait is set.
pub const LANDSCAPE_TEXT_WIDTH: i32 = PAGE_HEIGHT - 2 * MARGIN;
/// Body text size, half-points (12 pt).
pub const BODY_SIZE: u32 = 24;
/// Heading sizes by level 1..=6, half-points (20, 18, 16, 15, 14, 13 pt).
pub const HEADING_SIZES: [u32; 6] = [40, 36, 32, 30, 28, 26];
/// Code block size, half-points (10 pt).
pub const CODE_SIZE: u32 = 20;
/// Table cell text size, half-points (10 pt).
pub const TABLE_SIZE: u32 = 20;
/// Half the space between table cells (`\trgaph`), twips.
pub const CELL_GAP: i32 = 108;
/// Width one character of table text is assumed to take, twips: 7 pt, a
/// generous average for 10 pt text (bold header cells and the wide fonts a
/// word processor may substitute for Times New Roman need it).
pub const CHAR_TWIPS: i32 = 140;
/// Width one character of a word is assumed to take when a column is at
/// its narrowest, twips: 6 pt, the widest digits and letters of 10 pt text
/// (bold included), so a word fits on one line without the slack that
/// [`CHAR_TWIPS`] gives whole cells.
pub const WORD_TWIPS: i32 = 120;
/// A column is sized as if its longest cell had at least this many characters.
pub const MIN_COLUMN_CHARS: usize = 4;
/// … and at most this many (longer cells wrap).
pub const MAX_COLUMN_CHARS: usize = 50;

/// The mark in every document's header (`{\*\generator …}`), by which `paper
/// doc` knows a file it wrote.
pub const GENERATOR: &str = "okn-benchmark paper doc";

const INDENT_QUOTE: i32 = 720;
const HANG_BULLET: i32 = 360;
const HANG_NUMBER: i32 = 480;
const STYLE_CODE: u32 = 7;
const STYLE_CAPTION: u32 = 8;
/// Twips per image pixel (96 pixels an inch, 1440 twips an inch).
const TWIPS_PER_PIXEL: i32 = 15;
/// The height of the text block, twips.
const TEXT_HEIGHT: i32 = PAGE_HEIGHT - 2 * MARGIN;

/// The result of [`convert`]: RTF documents as text (ASCII only, LF line
/// ends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    /// The whole document.
    pub document: String,
    /// One standalone document per table, in document order, each holding
    /// the table's caption (when it has one) and the table.
    pub tables: Vec<String>,
}

/// Converts Markdown to RTF. Local images are taken from `assets` under
/// their paths relative to `base` (the document's folder); converting with
/// [`super::assets::Wanted`] finds which files it embeds. Never fails:
/// what cannot be rendered becomes text. Deterministic: the same
/// `markdown` and image bytes give the same bytes.
pub fn convert(markdown: &str, base: &Path, assets: &dyn super::assets::Assets) -> Converted {
    let events: Vec<Event<'_>> = Parser::new_ext(markdown, options()).collect();
    let captions = caption_paragraphs(&events);
    let mut writer = Writer::new(base, assets);
    for (i, event) in events.iter().enumerate() {
        writer.event(event, captions.contains(&i));
    }
    writer.finish()
}

/// Escapes text for RTF (RTF 1.9.1, "Special Characters" and "Unicode RTF"):
/// `\` → `\\`, `{` → `\{`, `}` → `\}`, tab → `\tab `, line feed → `\line `,
/// other control characters dropped, printable ASCII as is, and every other
/// character as `\uN?` per UTF-16 code unit, N signed (`é` → `\u233?`,
/// `😀` → `\u-10179?\u-8704?`). The `?` is the fallback byte that `\uc1`
/// tells a reader to skip.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    push_escaped(&mut out, text);
    out
}

/// [`escape`], appending to `out`.
pub fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '{' => out.push_str("\\{"),
            '}' => out.push_str("\\}"),
            '\t' => out.push_str("\\tab "),
            '\n' => out.push_str("\\line "),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {}
            c if c.is_ascii() => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{}?", *unit as i16);
                }
            }
        }
    }
}

/// The smallest table text size a table is set in, half-points (7 pt).
pub const MIN_TABLE_SIZE: u32 = 14;

/// The text size, in half-points, for a table whose words (see
/// [`column_widths_at`]) need more than `available` twips at [`TABLE_SIZE`]:
/// the largest size down to [`MIN_TABLE_SIZE`] at which every column's
/// longest word fits, so numbers and words are not broken mid-value (a
/// twelve-column results table once printed `0.7`/`7` on two lines).
/// A table that fits keeps [`TABLE_SIZE`].
pub fn table_size(word: &[usize], available: i32) -> u32 {
    let least = |size: u32| -> i64 { word.iter().map(|&n| char_twips(n, WORD_TWIPS, size)).sum() };
    let mut size = TABLE_SIZE;
    while size > MIN_TABLE_SIZE && least(size) > available as i64 {
        size -= 1;
    }
    size
}

/// `n` characters (clamped to [`MIN_COLUMN_CHARS`]..=[`MAX_COLUMN_CHARS`])
/// at `per` twips each at [`TABLE_SIZE`], and the cell gaps, all scaled to
/// `size`.
fn char_twips(n: usize, per: i32, size: u32) -> i64 {
    (n.clamp(MIN_COLUMN_CHARS, MAX_COLUMN_CHARS) as i64 * per as i64 + 2 * CELL_GAP as i64)
        * size as i64
        / TABLE_SIZE as i64
}

/// Half the space between cells (`\trgaph`) of table text of `size`
/// half-points: [`CELL_GAP`] at [`TABLE_SIZE`], scaled.
fn cell_gap(size: u32) -> i32 {
    CELL_GAP * size as i32 / TABLE_SIZE as i32
}

/// Column widths in twips for a table whose longest cell text per column is
/// `longest` characters and whose longest word (text that cannot wrap) is
/// `word` characters (see [`display_width`]; a bold header cell counts 1.2
/// times, rounded up), within `available` twips, for table text of `size` half-points
/// (widths scale with it; see [`table_size`]). The automatic table
/// layout of HTML (CSS 2.1 §17.5.2.2), in character cells:
///
/// - a column's natural width is `clamp(longest, MIN_COLUMN_CHARS,
///   MAX_COLUMN_CHARS) × CHAR_TWIPS + 2 × CELL_GAP`, its minimum the same
///   for its longest word at [`WORD_TWIPS`] (never more than its natural
///   width);
/// - when the natural widths fit, they are used (a narrow table stays
///   narrow);
/// - otherwise every column gets its minimum, so no word or number breaks
///   (`0.72` never reads `0. 7 2`), and the room left is shared in
///   proportion to how much wider each column would like to be;
/// - only when even the minimums do not fit are they scaled down
///   together.
///
/// The sum never exceeds `available`.
pub fn column_widths_at(longest: &[usize], word: &[usize], available: i32, size: u32) -> Vec<i32> {
    let twips = |n: usize, per: i32| char_twips(n, per, size);
    let natural: Vec<i64> = longest.iter().map(|&n| twips(n, CHAR_TWIPS)).collect();
    let minimum: Vec<i64> = natural
        .iter()
        .enumerate()
        .map(|(i, &n)| twips(word.get(i).copied().unwrap_or(0), WORD_TWIPS).min(n))
        .collect();
    let total: i64 = natural.iter().sum();
    let least: i64 = minimum.iter().sum();
    let available = available.max(1) as i64;
    if total <= available {
        return natural.iter().map(|&w| w as i32).collect();
    }
    if least >= available {
        return minimum
            .iter()
            .map(|&w| (available * w / least) as i32)
            .collect();
    }
    let room = available - least;
    let want: i64 = total - least;
    natural
        .iter()
        .zip(&minimum)
        .map(|(&n, &m)| (m + room * (n - m) / want.max(1)) as i32)
        .collect()
}

/// Per column of `table`: the display width of its longest cell and of its
/// longest word, header cells (bold) counted 1.2 times.
fn measure(table: &TableState, columns: usize) -> (Vec<usize>, Vec<usize>) {
    let mut longest = vec![0usize; columns];
    let mut word = vec![0usize; columns];
    for (r, row) in table.rows.iter().enumerate() {
        for (i, cell) in row.iter().enumerate().take(columns) {
            let bold = |w: usize| if r == 0 { (w * 6).div_ceil(5) } else { w };
            longest[i] = longest[i].max(bold(display_width(&cell.text)));
            word[i] = word[i].max(bold(longest_word(&cell.text)));
        }
    }
    (longest, word)
}

/// True when `table`'s words alone need more than the portrait text width:
/// its standalone document is then set landscape ([`LANDSCAPE_TEXT_WIDTH`]).
fn needs_landscape(table: &TableState) -> bool {
    let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
    let (_, word) = measure(table, columns);
    let least: i64 = word
        .iter()
        .map(|&n| char_twips(n, WORD_TWIPS, TABLE_SIZE))
        .sum();
    least > TEXT_WIDTH as i64
}

/// The width of the longest whitespace-separated word of `text`, in
/// character cells ([`display_width`]).
pub fn longest_word(text: &str) -> usize {
    text.split_whitespace()
        .map(display_width)
        .max()
        .unwrap_or(0)
}

/// The width of `text` in character cells, as a terminal would count it:
/// East Asian wide characters and emoji count 2, combining marks and
/// variation selectors 0, everything else 1. An estimate for table widths.
pub fn display_width(text: &str) -> usize {
    text.chars()
        .map(|c| match c as u32 {
            0x0300..=0x036F | 0x200B..=0x200F | 0xFE00..=0xFE0F => 0,
            0x1100..=0x115F
            | 0x2E80..=0xA4CF
            | 0xAC00..=0xD7A3
            | 0xF900..=0xFAFF
            | 0xFE30..=0xFE4F
            | 0xFF00..=0xFF60
            | 0xFFE0..=0xFFE6
            | 0x1F300..=0x1F64F
            | 0x1F900..=0x1F9FF
            | 0x20000..=0x3FFFD => 2,
            _ => 1,
        })
        .sum()
}

/// True when a paragraph's text makes it a table caption (if a table follows
/// it directly): it starts, after leading spaces, with `Table` or `TABLE`,
/// then either `:` (`Table: Main results`) or at least one space and a
/// number, optionally after one capital letter (`Table 2. …`, `Table S1: …`).
/// `Tables 1–3 show …` and `Table of contents` are not captions.
pub fn is_caption(text: &str) -> bool {
    let text = text.trim_start();
    let Some(rest) = text
        .strip_prefix("Table")
        .or_else(|| text.strip_prefix("TABLE"))
    else {
        return false;
    };
    if rest.starts_with(':') {
        return true;
    }
    let after = rest.trim_start_matches([' ', '\u{a0}']);
    if after.len() == rest.len() {
        return false;
    }
    let mut chars = after.chars();
    match chars.next() {
        Some(c) if c.is_ascii_digit() => true,
        Some(c) if c.is_ascii_uppercase() => chars.next().is_some_and(|d| d.is_ascii_digit()),
        _ => false,
    }
}

/// Indexes of the `Start(Paragraph)` events that are table captions.
fn caption_paragraphs(events: &[Event<'_>]) -> BTreeSet<usize> {
    let mut found = BTreeSet::new();
    let mut i = 0;
    while i < events.len() {
        if let Event::Start(Tag::Paragraph) = events[i] {
            let mut j = i + 1;
            let mut text = String::new();
            while j < events.len() && !matches!(events[j], Event::End(TagEnd::Paragraph)) {
                if let Event::Text(t) | Event::Code(t) = &events[j] {
                    text.push_str(t);
                }
                j += 1;
            }
            if matches!(events.get(j + 1), Some(Event::Start(Tag::Table(_)))) && is_caption(&text) {
                found.insert(i);
            }
            i = j;
        }
        i += 1;
    }
    found
}

/// The document header up to the first paragraph.
fn header(title: Option<&str>) -> String {
    let mut h = String::from(
        "{\\rtf1\\ansi\\ansicpg1252\\deff0\\deflang1033\\uc1\n\
         {\\fonttbl{\\f0\\froman\\fcharset0 Times New Roman;}{\\f1\\fswiss\\fcharset0 Arial;}{\\f2\\fmodern\\fcharset0 Courier New;}}\n\
         {\\colortbl;\\red0\\green0\\blue0;\\red5\\green99\\blue193;}\n\
         {\\stylesheet{\\ql\\sa120\\f0\\fs24 Normal;}\n",
    );
    for (n, size) in HEADING_SIZES.iter().enumerate() {
        let _ = writeln!(
            h,
            "{{\\s{}\\ql\\keepn\\sb240\\sa120\\outlinelevel{n}\\b\\f1\\fs{size}\\sbasedon0\\snext0 heading {};}}",
            n + 1,
            n + 1
        );
    }
    let _ = writeln!(
        h,
        "{{\\s{STYLE_CODE}\\ql\\sa120\\f2\\fs{CODE_SIZE}\\sbasedon0\\snext0 Code;}}\n\
         {{\\s{STYLE_CAPTION}\\ql\\keepn\\sb120\\sa120\\b\\f0\\fs{size}\\sbasedon0\\snext0 caption;}}}}",
        size = BODY_SIZE - 2
    );
    let _ = writeln!(h, "{{\\*\\generator {GENERATOR};}}");
    if let Some(title) = title {
        let _ = writeln!(h, "{{\\info{{\\title {}}}}}", escape(title));
    }
    let _ = writeln!(
        h,
        "\\paperw{PAGE_WIDTH}\\paperh{PAGE_HEIGHT}\\margl{MARGIN}\\margr{MARGIN}\\margt{MARGIN}\\margb{MARGIN}\\widowctrl"
    );
    h
}

/// A block around the current position.
#[derive(Debug, Clone, Copy)]
enum Ctx {
    Quote,
    List { next: Option<u64>, hang: i32 },
    Note,
    Definition,
}

impl Ctx {
    fn indent(self) -> i32 {
        match self {
            Ctx::Quote | Ctx::Definition => INDENT_QUOTE,
            Ctx::List { hang, .. } => hang,
            Ctx::Note => HANG_NUMBER,
        }
    }
}

/// The kind of paragraph being opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Para {
    Body,
    Tight,
    Heading(usize),
    Code,
    Caption,
}

#[derive(Debug, Default)]
struct Cell {
    rtf: String,
    text: String,
}

#[derive(Debug, Default)]
struct TableState {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Cell>>,
    row: Vec<Cell>,
    cell: Option<Cell>,
    caption: Option<String>,
    /// Footnote numbers its caption and cells refer to.
    refs: Vec<usize>,
}

struct Saved {
    out: String,
    stack: Vec<Ctx>,
    marker: Option<(String, i32)>,
}

struct Writer<'b> {
    base: &'b Path,
    assets: &'b dyn super::assets::Assets,
    out: String,
    stack: Vec<Ctx>,
    saved: Vec<Saved>,
    para_open: bool,
    /// The marker of the list item (or note) whose first paragraph is next,
    /// and its hanging width.
    marker: Option<(String, i32)>,
    code: Option<String>,
    html: Option<String>,
    /// Alt text of the image being read, its destination, and nesting.
    image: Option<(String, String, usize)>,
    /// Whether each open link opened a field.
    links: Vec<bool>,
    table: Option<TableState>,
    heading_text: Option<String>,
    title: Option<String>,
    caption_start: Option<usize>,
    last_caption: Option<String>,
    note_numbers: BTreeMap<String, usize>,
    notes: Vec<(usize, String)>,
    /// Each table's standalone document, still open, and the footnotes
    /// it refers to: closed in [`Writer::finish`], when every note's text
    /// is known.
    tables: Vec<(String, Vec<usize>)>,
    /// Footnotes the caption being written refers to, then those of the
    /// last caption, which the table after it takes.
    caption_refs: Vec<usize>,
    meta: bool,
    /// Inside an inline `<script>` or `<style>` (its name): text up to the
    /// closing tag is dropped.
    skipping: Option<&'static str>,
}

impl<'b> Writer<'b> {
    fn new(base: &'b Path, assets: &'b dyn super::assets::Assets) -> Writer<'b> {
        Writer {
            base,
            assets,
            out: String::new(),
            stack: Vec::new(),
            saved: Vec::new(),
            para_open: false,
            marker: None,
            code: None,
            html: None,
            image: None,
            links: Vec::new(),
            table: None,
            heading_text: None,
            title: None,
            caption_start: None,
            last_caption: None,
            note_numbers: BTreeMap::new(),
            notes: Vec::new(),
            tables: Vec::new(),
            caption_refs: Vec::new(),
            meta: false,
            skipping: None,
        }
    }

    fn indent(&self) -> i32 {
        self.stack.iter().map(|c| c.indent()).sum()
    }

    fn in_cell(&self) -> bool {
        self.table.as_ref().is_some_and(|t| t.cell.is_some())
    }

    /// Where inline RTF goes: the open table cell, else the document.
    fn sink(&mut self) -> &mut String {
        match self.table.as_mut().and_then(|t| t.cell.as_mut()) {
            Some(cell) => &mut cell.rtf,
            None => &mut self.out,
        }
    }

    fn note_number(&mut self, label: &str) -> usize {
        let next = self.note_numbers.len() + 1;
        *self.note_numbers.entry(label.to_string()).or_insert(next)
    }

    fn open_para(&mut self, kind: Para) {
        self.close_para();
        let li = self.indent();
        let marker = self.marker.take();
        let (fi, tab) = match &marker {
            Some((_, hang)) => (-hang, format!("\\tx{li}")),
            None => (0, String::new()),
        };
        let (style, spacing, chars) = match kind {
            Para::Body => (
                String::new(),
                "\\sb0\\sa120",
                format!("\\f0\\fs{BODY_SIZE}"),
            ),
            Para::Tight => (String::new(), "\\sb0\\sa60", format!("\\f0\\fs{BODY_SIZE}")),
            Para::Heading(level) => (
                format!("\\s{level}\\outlinelevel{}\\keepn", level - 1),
                "\\sb240\\sa120",
                format!("\\b\\f1\\fs{}", HEADING_SIZES[level - 1]),
            ),
            Para::Code => (
                format!("\\s{STYLE_CODE}"),
                "\\sb0\\sa120",
                format!("\\f2\\fs{CODE_SIZE}"),
            ),
            Para::Caption => (
                format!("\\s{STYLE_CAPTION}\\keepn"),
                "\\sb120\\sa120",
                format!("\\b\\f0\\fs{}", BODY_SIZE - 2),
            ),
        };
        let _ = write!(
            self.out,
            "\\pard\\plain{style}\\ql\\li{li}\\fi{fi}{tab}{spacing}{chars} "
        );
        if let Some((text, _)) = marker {
            push_escaped(&mut self.out, &text);
            self.out.push_str("\\tab ");
        }
        self.para_open = true;
    }

    fn close_para(&mut self) {
        if self.para_open {
            self.out.push_str("\\par\n");
            self.para_open = false;
        }
    }

    /// Opens a body paragraph for inline content, unless one is open or the
    /// content goes into a table cell.
    fn ensure_para(&mut self) {
        if !self.para_open && !self.in_cell() {
            let tight = self.marker.is_some()
                || matches!(self.stack.last(), Some(Ctx::List { .. } | Ctx::Note));
            self.open_para(if tight { Para::Tight } else { Para::Body });
        }
    }

    /// Writes a pending list marker on a paragraph of its own (an item that
    /// starts with a table or a rule).
    fn flush_marker(&mut self) {
        if self.marker.is_some() {
            self.open_para(Para::Tight);
            self.close_para();
        }
    }

    /// Text as it reads: into the alt text of an image being read, the code
    /// block being collected, or the current paragraph or cell.
    fn text(&mut self, text: &str) {
        if self.meta {
            return;
        }
        if let Some((alt, _, _)) = self.image.as_mut() {
            alt.push_str(text);
            return;
        }
        if let Some(code) = self.code.as_mut() {
            code.push_str(text);
            return;
        }
        if let Some(h) = self.heading_text.as_mut() {
            h.push_str(text);
        }
        self.ensure_para();
        if let Some(cell) = self.table.as_mut().and_then(|t| t.cell.as_mut()) {
            cell.text.push_str(text);
        }
        push_escaped(self.sink(), text);
    }

    /// Raw RTF inside the current paragraph or cell (not inside an image's
    /// alt text).
    fn raw(&mut self, rtf: &str) {
        if self.image.is_some() || self.meta {
            return;
        }
        self.ensure_para();
        self.sink().push_str(rtf);
    }

    fn event(&mut self, event: &Event<'_>, caption: bool) {
        // An inline `<script>` or `<style>` has its content as text events
        // between two inline HTML events: dropped, as in an HTML block
        // (`var a=1;` reached the document).
        if let Some(name) = self.skipping {
            if let Event::InlineHtml(t) = event
                && t.trim_start()
                    .to_ascii_lowercase()
                    .starts_with(&format!("</{name}"))
            {
                self.skipping = None;
            }
            if let Event::End(TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::TableCell) = event {
                // Never closed: what follows the block is text again.
                self.skipping = None;
            } else if !matches!(event, Event::End(_) | Event::Start(_)) {
                return;
            }
        }
        match event {
            Event::Start(tag) => self.start(tag, caption),
            Event::End(tag) => self.end(*tag),
            Event::Text(t) => self.text(t),
            Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                if self.image.is_some() || self.meta {
                    self.text(t);
                    return;
                }
                self.raw("{\\f2 ");
                self.text(t);
                self.sink().push('}');
            }
            Event::Html(t) => match self.html.as_mut() {
                Some(html) => html.push_str(t),
                None => self.inline_html(t),
            },
            Event::InlineHtml(t) => self.inline_html(t),
            Event::FootnoteReference(label) => {
                let n = self.note_number(label);
                if let Some(t) = self.table.as_mut() {
                    t.refs.push(n);
                } else if self.caption_start.is_some() {
                    self.caption_refs.push(n);
                }
                if self.image.is_none() {
                    self.raw(&format!("{{\\super {n}}}"));
                    if let Some(cell) = self.table.as_mut().and_then(|t| t.cell.as_mut()) {
                        cell.text.push_str(&n.to_string());
                    }
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => {
                if self.image.is_some() {
                    self.text(" ");
                } else {
                    self.raw("\\line ");
                }
            }
            Event::Rule => {
                self.close_para();
                self.flush_marker();
                let _ = writeln!(
                    self.out,
                    "\\pard\\plain\\li{}\\sb120\\sa120\\brdrb\\brdrs\\brdrw10\\brsp20\\fs8 \\par",
                    self.indent()
                );
            }
            Event::TaskListMarker(checked) => {
                self.text(if *checked { "\u{2612} " } else { "\u{2610} " });
            }
        }
    }

    fn start(&mut self, tag: &Tag<'_>, caption: bool) {
        match tag {
            Tag::Paragraph => {
                if self.in_cell() {
                    return;
                }
                if caption {
                    self.close_para();
                    self.caption_start = Some(self.out.len());
                    self.open_para(Para::Caption);
                } else {
                    self.open_para(Para::Body);
                }
            }
            Tag::Heading { level, .. } => {
                let level = heading_number(*level);
                self.open_para(Para::Heading(level));
                if level == 1 && self.title.is_none() {
                    self.heading_text = Some(String::new());
                }
            }
            Tag::BlockQuote(kind) => self.start_quote(*kind),
            Tag::CodeBlock(_) => {
                self.close_para();
                self.code = Some(String::new());
            }
            Tag::HtmlBlock => {
                self.close_para();
                self.html = Some(String::new());
            }
            Tag::List(start) => {
                self.close_para();
                self.flush_marker();
                let hang = if start.is_some() {
                    HANG_NUMBER
                } else {
                    HANG_BULLET
                };
                self.stack.push(Ctx::List { next: *start, hang });
            }
            Tag::Item => self.start_item(),
            Tag::FootnoteDefinition(label) => {
                self.close_para();
                let n = self.note_number(label);
                self.saved.push(Saved {
                    out: std::mem::take(&mut self.out),
                    stack: std::mem::replace(&mut self.stack, vec![Ctx::Note]),
                    marker: self.marker.take(),
                });
                self.marker = Some((format!("{n}."), HANG_NUMBER));
                self.notes.push((n, String::new()));
            }
            Tag::DefinitionList => self.close_para(),
            Tag::DefinitionListTitle => {
                self.open_para(Para::Body);
                self.out.push_str("{\\b ");
            }
            Tag::DefinitionListDefinition => {
                self.close_para();
                self.stack.push(Ctx::Definition);
            }
            Tag::Table(aligns) => {
                self.close_para();
                self.flush_marker();
                self.table = Some(TableState {
                    aligns: aligns.clone(),
                    caption: self.last_caption.take(),
                    refs: std::mem::take(&mut self.caption_refs),
                    ..TableState::default()
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = self.table.as_mut() {
                    t.row.clear();
                }
            }
            Tag::TableCell => {
                if let Some(t) = self.table.as_mut() {
                    t.cell = Some(Cell::default());
                }
            }
            Tag::Emphasis => self.raw("{\\i "),
            Tag::Strong => self.raw("{\\b "),
            Tag::Strikethrough => self.raw("{\\strike "),
            Tag::Superscript => self.raw("{\\super "),
            Tag::Subscript => self.raw("{\\sub "),
            Tag::Link {
                link_type,
                dest_url,
                ..
            } => self.start_link(*link_type, dest_url),
            Tag::Image { dest_url, .. } => match self.image.as_mut() {
                Some((_, _, depth)) => *depth += 1,
                None => self.image = Some((String::new(), dest_url.to_string(), 0)),
            },
            Tag::MetadataBlock(_) => self.meta = true,
        }
    }

    /// A block quote, with a GitHub alert's label (`> [!NOTE]`) in bold.
    fn start_quote(&mut self, kind: Option<BlockQuoteKind>) {
        self.close_para();
        self.flush_marker();
        self.stack.push(Ctx::Quote);
        if let Some(kind) = kind {
            let label = super::markdown::alert_label(kind);
            self.open_para(Para::Body);
            self.out.push_str("{\\b ");
            push_escaped(&mut self.out, label);
            self.out.push('}');
            self.close_para();
        }
    }

    /// A list item: its marker (the next number, or a bullet by depth)
    /// waits for the item's first paragraph.
    fn start_item(&mut self) {
        self.close_para();
        self.flush_marker();
        let depth = self
            .stack
            .iter()
            .filter(|c| matches!(c, Ctx::List { .. }))
            .count();
        if let Some(Ctx::List { next, hang }) = self.stack.last_mut() {
            let text = match next {
                Some(n) => {
                    let text = format!("{n}.");
                    *n = n.saturating_add(1);
                    text
                }
                None => ["\u{2022}", "\u{25e6}", "\u{25aa}"][(depth.max(1) - 1) % 3].to_string(),
            };
            self.marker = Some((text, *hang));
        }
    }

    /// A link as a `HYPERLINK` field; one inside an image or metadata, to
    /// this page (`#…`), or with a scheme the link policy refuses
    /// ([`super::links::allowed`]: a `javascript:` link was a live field,
    /// issue 24, item 25) is its text alone.
    fn start_link(&mut self, link_type: LinkType, dest_url: &str) {
        if self.image.is_some() || self.meta {
            self.links.push(false);
            return;
        }
        let url = if link_type == LinkType::Email && !dest_url.starts_with("mailto:") {
            format!("mailto:{dest_url}")
        } else {
            dest_url.to_string()
        };
        if url.is_empty() || url.starts_with('#') || !super::links::allowed(&url) {
            self.links.push(false);
            return;
        }
        self.raw(&format!(
            "{{\\field{{\\*\\fldinst HYPERLINK \"{}\"}}{{\\fldrslt{{\\ul\\cf2 ",
            encode_url(&url)
        ));
        self.links.push(true);
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                if self.in_cell() {
                    return;
                }
                self.close_para();
                if let Some(start) = self.caption_start.take() {
                    self.last_caption = Some(self.out[start..].to_string());
                }
            }
            TagEnd::Heading(_) => {
                self.close_para();
                if let Some(text) = self.heading_text.take() {
                    self.title = Some(text);
                }
            }
            TagEnd::BlockQuote(_) | TagEnd::DefinitionListDefinition => {
                self.close_para();
                self.stack.pop();
            }
            TagEnd::CodeBlock => self.code_block(),
            TagEnd::HtmlBlock => {
                let html = self.html.take().unwrap_or_default();
                for paragraph in html_text(&html) {
                    self.open_para(Para::Body);
                    for (i, line) in paragraph.iter().enumerate() {
                        if i > 0 {
                            self.out.push_str("\\line ");
                        }
                        push_escaped(&mut self.out, line);
                    }
                    self.close_para();
                }
            }
            TagEnd::List(_) => {
                self.close_para();
                self.stack.pop();
            }
            TagEnd::Item => {
                self.flush_marker();
                self.close_para();
            }
            TagEnd::FootnoteDefinition => {
                self.flush_marker();
                self.close_para();
                if let Some(saved) = self.saved.pop() {
                    let text = std::mem::replace(&mut self.out, saved.out);
                    self.stack = saved.stack;
                    self.marker = saved.marker;
                    if let Some(note) = self.notes.last_mut() {
                        note.1 = text;
                    }
                }
            }
            TagEnd::DefinitionList => self.close_para(),
            TagEnd::DefinitionListTitle => {
                self.out.push('}');
                self.close_para();
            }
            TagEnd::Table => self.finish_table(),
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(t) = self.table.as_mut()
                    && !t.row.is_empty()
                {
                    let row = std::mem::take(&mut t.row);
                    t.rows.push(row);
                }
            }
            TagEnd::TableCell => {
                if let Some(t) = self.table.as_mut()
                    && let Some(cell) = t.cell.take()
                {
                    t.row.push(cell);
                }
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => {
                if self.image.is_none() && !self.meta {
                    self.sink().push('}');
                }
            }
            TagEnd::Link => {
                if self.links.pop() == Some(true) {
                    self.sink().push_str("}}}");
                }
            }
            TagEnd::Image => {
                let Some((alt, dest, depth)) = self.image.take() else {
                    return;
                };
                if depth > 0 {
                    self.image = Some((alt, dest, depth - 1));
                    return;
                }
                self.image_out(&alt, &dest);
            }
            TagEnd::MetadataBlock(_) => self.meta = false,
        }
    }

    fn code_block(&mut self) {
        let code = self.code.take().unwrap_or_default();
        let code = code.strip_suffix('\n').unwrap_or(&code);
        self.open_para(Para::Code);
        for (i, line) in code.split('\n').enumerate() {
            if i > 0 {
                self.out.push_str("\\line ");
            }
            push_escaped(&mut self.out, line.strip_suffix('\r').unwrap_or(line));
        }
        self.close_para();
    }

    fn inline_html(&mut self, html: &str) {
        if self.image.is_some() || self.meta {
            return;
        }
        let lower = html.trim_start().to_ascii_lowercase();
        for name in ["script", "style"] {
            if lower.starts_with(&format!("<{name}"))
                && !lower[1 + name.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
                && !lower.contains(&format!("</{name}"))
                && !lower.trim_end().ends_with("/>")
            {
                self.skipping = Some(name);
                return;
            }
        }
        if lower.starts_with("<br") && !lower[3..].starts_with(|c: char| c.is_ascii_alphanumeric())
        {
            if self.in_cell()
                && let Some(cell) = self.table.as_mut().and_then(|t| t.cell.as_mut())
            {
                cell.text.push(' ');
            }
            self.raw("\\line ");
        } else if lower.starts_with("<img") {
            let alt = attribute(html, "alt").unwrap_or_default();
            if !alt.is_empty() {
                // `attribute` has decoded it already.
                self.text(&format!("[{alt}]"));
            }
        }
    }

    fn image_out(&mut self, alt: &str, dest: &str) {
        if !self.in_cell()
            && let Some(pict) = self.picture(dest)
        {
            self.raw(&pict);
            return;
        }
        let label = if alt.trim().is_empty() {
            let name = dest
                .split(['#', '?'])
                .next()
                .unwrap_or(dest)
                .rsplit('/')
                .next()
                .unwrap_or(dest);
            if name.is_empty() { "image" } else { name }.to_string()
        } else {
            alt.to_string()
        };
        self.text(&format!("[{label}]"));
    }

    /// A local PNG or JPEG as a `\pict` group, or `None`.
    fn picture(&self, dest: &str) -> Option<String> {
        if dest.is_empty() || is_external(dest) {
            return None;
        }
        let path_part = dest.split(['#', '?']).next().unwrap_or(dest);
        let source = percent_decode(path_part);
        // Never a file from outside the project (as the HTML page).
        if super::assets::refusal(self.base, Path::new(&source)).is_some() {
            return None;
        }
        let bytes = self.assets.get(&self.base.join(source))?;
        // An SVG figure is rasterized at print resolution and shown at the
        // SVG's own size; a PNG or JPEG at 96 pixels per inch.
        let (kind, (width, height), (css_w, css_h), bytes) = match image_size(&bytes) {
            Some((kind, w, h)) => (kind, (w, h), (w, h), bytes),
            None if super::raster::is_svg(&bytes) => {
                let raster = super::raster::svg_to_png(&bytes).ok()?;
                ("pngblip", raster.pixels, raster.css, raster.png)
            }
            None => return None,
        };
        let available = (TEXT_WIDTH - self.indent()).max(1440) as i64;
        let mut goal_w = css_w as i64 * TWIPS_PER_PIXEL as i64;
        let mut goal_h = css_h as i64 * TWIPS_PER_PIXEL as i64;
        if goal_w > available {
            goal_h = goal_h * available / goal_w;
            goal_w = available;
        }
        if goal_h > TEXT_HEIGHT as i64 {
            goal_w = goal_w * TEXT_HEIGHT as i64 / goal_h;
            goal_h = TEXT_HEIGHT as i64;
        }
        let mut pict = format!(
            "{{\\pict\\{kind}\\picw{width}\\pich{height}\\picwgoal{}\\pichgoal{}\n",
            goal_w.max(1),
            goal_h.max(1)
        );
        for chunk in bytes.chunks(64) {
            for b in chunk {
                let _ = write!(pict, "{b:02x}");
            }
            pict.push('\n');
        }
        pict.push('}');
        Some(pict)
    }

    fn finish_table(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        let indent = self.indent();
        let main = table_rtf(&table, indent, TEXT_WIDTH - indent);
        self.out.push_str(&main);
        let landscape = needs_landscape(&table);
        let alone = if landscape {
            table_rtf(&table, 0, LANDSCAPE_TEXT_WIDTH)
        } else if indent == 0 {
            main
        } else {
            table_rtf(&table, 0, TEXT_WIDTH)
        };
        let mut doc = header(None);
        if landscape {
            // RTF 1.9.1, "Document Formatting Properties": \landscape with
            // the page size given turned.
            let _ = writeln!(doc, "\\landscape\\paperw{PAGE_HEIGHT}\\paperh{PAGE_WIDTH}");
        }
        if let Some(caption) = &table.caption {
            doc.push_str(caption);
        }
        doc.push_str(&alone);
        self.tables.push((doc, table.refs));
    }

    fn finish(mut self) -> Converted {
        self.close_para();
        let mut document = header(self.title.as_deref());
        document.push_str(&self.out);
        let mut notes = std::mem::take(&mut self.notes);
        notes.sort_by_key(|(n, _)| *n);
        // A label defined twice: the first definition is the note.
        notes.dedup_by_key(|(n, _)| *n);
        if !notes.is_empty() {
            document.push_str(NOTES_RULE);
            for (_, text) in &notes {
                document.push_str(text);
            }
        }
        document.push_str("}\n");
        // Each table's document ends with the notes its caption and cells
        // refer to, in number order, after the same rule.
        let tables = std::mem::take(&mut self.tables)
            .into_iter()
            .map(|(mut doc, mut refs)| {
                refs.sort_unstable();
                refs.dedup();
                let texts: Vec<&str> = refs
                    .iter()
                    .filter_map(|n| notes.iter().find(|(m, _)| m == n).map(|(_, t)| t.as_str()))
                    .collect();
                if !texts.is_empty() {
                    doc.push_str(NOTES_RULE);
                    for text in texts {
                        doc.push_str(text);
                    }
                }
                doc.push_str("}\n");
                doc
            })
            .collect();
        Converted { document, tables }
    }
}

/// The rule above a document's footnotes.
const NOTES_RULE: &str = "\\pard\\plain\\sb240\\sa120\\brdrb\\brdrs\\brdrw10\\brsp20\\fs8 \\par\n";

fn heading_number(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Table rows from cells given as `(RTF, plain text)`, header row first,
/// laid out at the left margin of a portrait page exactly as a Markdown
/// table of the same cells is (`render::syntax::rtf`).
pub fn table_rows(
    aligns: &[crate::report::grid::Align],
    rows: Vec<Vec<(String, String)>>,
) -> String {
    use crate::report::grid::Align;
    let table = TableState {
        aligns: aligns
            .iter()
            .map(|a| match a {
                Align::Left => Alignment::Left,
                Align::Right => Alignment::Right,
                Align::Center => Alignment::Center,
            })
            .collect(),
        rows: rows
            .into_iter()
            .map(|r| {
                r.into_iter()
                    .map(|(rtf, text)| Cell { rtf, text })
                    .collect()
            })
            .collect(),
        ..TableState::default()
    };
    table_rtf(&table, 0, TEXT_WIDTH)
}

/// A collected table as RTF rows, at `indent` twips, within `available`.
fn table_rtf(table: &TableState, indent: i32, available: i32) -> String {
    let columns = table
        .rows
        .iter()
        .map(Vec::len)
        .max()
        .unwrap_or(0)
        .max(table.aligns.len());
    let mut out = String::new();
    if columns == 0 {
        return out;
    }
    let (longest, word) = measure(table, columns);
    let available = available.max(1440);
    let size = table_size(&word, available);
    let widths = column_widths_at(&longest, &word, available, size);
    let empty = Cell::default();
    let last = table.rows.len().saturating_sub(1);
    for (r, row) in table.rows.iter().enumerate() {
        let header = r == 0;
        let _ = write!(
            out,
            "\\trowd\\trgaph{}\\trleft{indent}{}",
            cell_gap(size),
            if header { "\\trhdr" } else { "" }
        );
        let mut right = indent;
        for width in &widths {
            right += width;
            if header {
                out.push_str("\\clbrdrt\\brdrs\\brdrw15\\clbrdrb\\brdrs\\brdrw10");
            }
            if r == last {
                out.push_str("\\clbrdrb\\brdrs\\brdrw15");
            }
            let _ = write!(out, "\\cellx{right}");
        }
        out.push('\n');
        for c in 0..columns {
            let cell = row.get(c).unwrap_or(&empty);
            let align = match table.aligns.get(c) {
                Some(Alignment::Center) => "\\qc",
                Some(Alignment::Right) => "\\qr",
                _ => "\\ql",
            };
            let _ = write!(
                out,
                "\\pard\\plain\\intbl{align}\\sb40\\sa40\\f0\\fs{size} "
            );
            if header {
                let _ = write!(out, "{{\\b {}}}", cell.rtf);
            } else {
                out.push_str(&cell.rtf);
            }
            out.push_str("\\cell\n");
        }
        out.push_str("\\row\n");
    }
    out.push_str("\\pard\\plain\\sa120\\fs12 \\par\n");
    out
}

/// A URL safe inside a `HYPERLINK "…"` field instruction: space, `"`, `\`,
/// braces, control and non-ASCII characters percent-encoded (UTF-8).
fn encode_url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for b in url.bytes() {
        match b {
            b' ' | b'"' | b'\\' | b'{' | b'}' | 0..=0x1f | 0x7f..=0xff => {
                let _ = write!(out, "%{b:02X}");
            }
            _ => out.push(b as char),
        }
    }
    out
}

/// The blip kind and pixel size of a PNG or baseline/progressive JPEG.
fn image_size(bytes: &[u8]) -> Option<(&'static str, u32, u32)> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.get(12..16) == Some(b"IHDR") {
        let w = u32::from_be_bytes(bytes.get(16..20)?.try_into().ok()?);
        let h = u32::from_be_bytes(bytes.get(20..24)?.try_into().ok()?);
        return (w > 0 && h > 0).then_some(("pngblip", w, h));
    }
    if bytes.starts_with(&[0xFF, 0xD8]) {
        let mut i = 2;
        while i + 4 <= bytes.len() {
            if bytes[i] != 0xFF {
                return None;
            }
            let marker = bytes[i + 1];
            if marker == 0xFF {
                i += 1;
                continue;
            }
            if marker == 0xD8 || (0xD0..=0xD7).contains(&marker) || marker == 0x01 {
                i += 2;
                continue;
            }
            let len = u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]) as usize;
            let is_frame = matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
            if is_frame {
                let h = u16::from_be_bytes([*bytes.get(i + 5)?, *bytes.get(i + 6)?]) as u32;
                let w = u16::from_be_bytes([*bytes.get(i + 7)?, *bytes.get(i + 8)?]) as u32;
                return (w > 0 && h > 0).then_some(("jpegblip", w, h));
            }
            if marker == 0xD9 || marker == 0xDA || len < 2 {
                return None;
            }
            i += 2 + len;
        }
    }
    None
}

/// Tags that start or end a paragraph of an HTML block's text.
const BLOCK_TAGS: [&str; 31] = [
    "p",
    "div",
    "details",
    "summary",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "li",
    "ul",
    "ol",
    "tr",
    "table",
    "thead",
    "tbody",
    "blockquote",
    "pre",
    "hr",
    "section",
    "article",
    "header",
    "footer",
    "center",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "picture",
];

/// The readable text of an HTML block as paragraphs of lines: tags dropped,
/// entities decoded, white space collapsed (kept inside `<pre>`), comments,
/// `<script>` and `<style>` dropped, `<img>` as `[alt]`.
fn html_text(html: &str) -> Vec<Vec<String>> {
    let mut paragraphs: Vec<Vec<String>> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut pre = 0usize;
    let lower = html.to_ascii_lowercase();
    let mut i = 0;
    // Inside <pre> a line keeps its leading spaces.
    let flush_line = |line: &mut String, lines: &mut Vec<String>, pre: bool| {
        let text = decode_entities(if pre { line.trim_end() } else { line.trim() });
        if !text.is_empty() {
            lines.push(text);
        }
        line.clear();
    };
    let flush_para = |line: &mut String,
                      lines: &mut Vec<String>,
                      paragraphs: &mut Vec<Vec<String>>,
                      pre: bool| {
        flush_line(line, lines, pre);
        if !lines.is_empty() {
            paragraphs.push(std::mem::take(lines));
        }
    };
    while i < html.len() {
        let rest = &html[i..];
        if rest.starts_with("<!--") {
            i += rest.find("-->").map_or(rest.len(), |e| e + 3);
            continue;
        }
        let next = rest.strip_prefix('<').and_then(|r| r.chars().next());
        if next.is_some_and(|c| c.is_ascii_alphabetic() || "/!?".contains(c)) {
            let Some(end) = tag_end(rest) else {
                break;
            };
            let tag = &rest[..end];
            let name: String = tag[1..]
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase();
            let closing = tag[1..].starts_with('/');
            i += end;
            match name.as_str() {
                "script" | "style" if !closing => {
                    let close = format!("</{name}");
                    i += lower[i..].find(&close).unwrap_or(html.len() - i);
                }
                "br" => flush_line(&mut line, &mut lines, pre > 0),
                "img" => {
                    if let Some(alt) = attribute(tag, "alt").filter(|a| !a.trim().is_empty()) {
                        // Decoded already: its `&` must survive the line's
                        // own decoding.
                        if pre == 0 && !line.is_empty() && !line.ends_with(' ') {
                            line.push(' ');
                        }
                        line.push_str(&format!("[{}]", alt.replace('&', "&amp;")));
                        if pre == 0 {
                            line.push(' ');
                        }
                    }
                }
                "td" | "th" if closing => line.push(' '),
                "pre" => {
                    flush_para(&mut line, &mut lines, &mut paragraphs, pre > 0);
                    pre = if closing {
                        pre.saturating_sub(1)
                    } else {
                        pre + 1
                    };
                }
                n if BLOCK_TAGS.contains(&n) => {
                    flush_para(&mut line, &mut lines, &mut paragraphs, false);
                }
                _ => {}
            }
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        i += c.len_utf8();
        if pre > 0 {
            if c == '\n' {
                flush_line(&mut line, &mut lines, true);
            } else {
                line.push(c);
            }
        } else if c.is_whitespace() && c != '\u{a0}' {
            if !line.ends_with(' ') && !line.is_empty() {
                line.push(' ');
            }
        } else {
            line.push(c);
        }
    }
    flush_para(&mut line, &mut lines, &mut paragraphs, false);
    paragraphs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file under `dir`, for assets.
    fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect()
    }

    fn rtf(md: &str) -> Converted {
        convert(
            md,
            Path::new("/nonexistent"),
            &crate::render::assets::AssetMap::new(),
        )
    }

    /// The body of a document: what follows the header.
    fn body(doc: &str) -> &str {
        let at = doc.find("\\widowctrl\n").expect("header end") + "\\widowctrl\n".len();
        &doc[at..]
    }

    /// References are decoded once (an alt of `&amp;lt;` is `&lt;`, not
    /// `<`), and a `<pre>` block keeps its spaces.
    #[test]
    fn html_blocks_decode_once_and_keep_preformatted_spaces() {
        let paragraphs =
            html_text("<p>x <img alt=\"&amp;lt;\" src=\"a.png\"> y</p>\n<pre>a    b\n  c</pre>");
        assert_eq!(paragraphs[0], ["x [&lt;] y"]);
        assert_eq!(paragraphs[1], ["a    b", "  c"]);
    }

    /// Inline `<script>` and `<style>` vanish with their content, as block
    /// ones do.
    #[test]
    fn inline_script_and_style_content_is_dropped() {
        let doc = convert(
            "# T\n\nBefore <script>var a=1;</script> after <style>p{color:red}</style> end.\n\nNext <script>never closed\n\nLast paragraph.\n",
            Path::new("."),
            &crate::render::assets::AssetMap::new(),
        )
        .document;
        assert!(
            !doc.contains("var a") && !doc.contains("color:red"),
            "{doc}"
        );
        assert!(
            doc.contains("Before ") && doc.contains(" after ") && doc.contains(" end."),
            "{doc}"
        );
        assert!(
            !doc.contains("never closed") && doc.contains("Last paragraph."),
            "{doc}"
        );
    }

    #[test]
    fn escaping_follows_the_unicode_rtf_rules() {
        let cases = [
            ("{", "\\{"),
            ("}", "\\}"),
            ("\\", "\\\\"),
            ("a\tb", "a\\tab b"),
            ("é", "\\u233?"),
            ("€", "\\u8364?"),
            ("中", "\\u20013?"),
            ("😀", "\\u-10179?\\u-8704?"),
            ("\u{FF21}", "\\u-223?"),
            ("\u{8000}", "\\u-32768?"),
            ("\u{7FFF}", "\\u32767?"),
            ("α1", "\\u945?1"),
            ("x\u{1}y\u{7f}", "xy"),
            (
                "SELECT ?s WHERE { ?s ?p \"x\" }",
                "SELECT ?s WHERE \\{ ?s ?p \"x\" \\}",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(escape(input), expected, "escaping {input:?}");
        }
    }

    #[test]
    fn the_header_declares_what_the_body_uses_and_nothing_varies() {
        let doc = rtf("# Title é\n\nText.\n").document;
        assert!(
            doc.starts_with(
                "{\\rtf1\\ansi\\ansicpg1252\\deff0\\deflang1033\\uc1\n{\\fonttbl{\\f0\\froman"
            ),
            "{doc}"
        );
        assert!(doc.contains("{\\f2\\fmodern\\fcharset0 Courier New;}"));
        assert!(doc.contains("{\\info{\\title Title \\u233?}}"), "{doc}");
        assert!(doc.contains("{\\*\\generator okn-benchmark paper doc;}"));
        assert!(!doc.contains("\\creatim") && !doc.contains("\\revtim"));
        assert!(doc.ends_with("}\n"));
        assert!(doc.is_ascii());
        assert_eq!(doc, rtf("# Title é\n\nText.\n").document);
    }

    #[test]
    fn headings_are_bold_and_sized_by_level() {
        let doc = rtf("# One\n\n## Two\n\n###### Six\n").document;
        let b = body(&doc);
        assert!(
            b.contains("\\pard\\plain\\s1\\outlinelevel0\\keepn\\ql\\li0\\fi0\\sb240\\sa120\\b\\f1\\fs40 One\\par\n"),
            "{b}"
        );
        assert!(
            b.contains(
                "\\s2\\outlinelevel1\\keepn\\ql\\li0\\fi0\\sb240\\sa120\\b\\f1\\fs36 Two\\par"
            ),
            "{b}"
        );
        assert!(
            b.contains(
                "\\s6\\outlinelevel5\\keepn\\ql\\li0\\fi0\\sb240\\sa120\\b\\f1\\fs26 Six\\par"
            ),
            "{b}"
        );
    }

    #[test]
    fn inline_formatting_links_and_breaks() {
        let doc = rtf("Some *em* **strong** ~~gone~~ `a{b}`\n").document;
        assert_eq!(
            body(&doc),
            "\\pard\\plain\\ql\\li0\\fi0\\sb0\\sa120\\f0\\fs24 Some {\\i em} {\\b strong} {\\strike gone} {\\f2 a\\{b\\}}\\par\n}\n"
        );
        let doc = rtf("[site](<https://ex.org/a b\"c>) [here](#top) <me@ex.org>  \nnext\nline\n")
            .document;
        let b = body(&doc);
        assert!(
            b.contains("{\\field{\\*\\fldinst HYPERLINK \"https://ex.org/a%20b%22c\"}{\\fldrslt{\\ul\\cf2 site}}}"),
            "{b}"
        );
        assert!(
            b.contains("}}} here "),
            "fragment links are plain text: {b}"
        );
        assert!(
            b.contains("HYPERLINK \"mailto:me@ex.org\"}{\\fldrslt{\\ul\\cf2 me@ex.org}}}\\line next line\\par"),
            "{b}"
        );
    }

    #[test]
    fn code_blocks_keep_lines_and_leading_spaces() {
        let doc = rtf("```sparql\nSELECT ?s WHERE {\n  ?s ?p \"x\\y\"\n}\n```\n").document;
        let b = body(&doc);
        assert_eq!(
            b,
            "\\pard\\plain\\s7\\ql\\li0\\fi0\\sb0\\sa120\\f2\\fs20 SELECT ?s WHERE \\{\\line   ?s ?p \"x\\\\y\"\\line \\}\\par\n}\n"
        );
    }

    #[test]
    fn nested_lists_hang_their_markers_and_indent_per_level() {
        let doc = rtf("- a\n  - b\n    1. c\n    2. d\n- [x] e\n").document;
        let b = body(&doc);
        let expected = "\\pard\\plain\\ql\\li360\\fi-360\\tx360\\sb0\\sa60\\f0\\fs24 \\u8226?\\tab a\\par\n\
             \\pard\\plain\\ql\\li720\\fi-360\\tx720\\sb0\\sa60\\f0\\fs24 \\u9702?\\tab b\\par\n\
             \\pard\\plain\\ql\\li1200\\fi-480\\tx1200\\sb0\\sa60\\f0\\fs24 1.\\tab c\\par\n\
             \\pard\\plain\\ql\\li1200\\fi-480\\tx1200\\sb0\\sa60\\f0\\fs24 2.\\tab d\\par\n\
             \\pard\\plain\\ql\\li360\\fi-360\\tx360\\sb0\\sa60\\f0\\fs24 \\u8226?\\tab \\u9746? e\\par\n}\n";
        assert_eq!(b, expected);
    }

    #[test]
    fn loose_items_mark_only_their_first_paragraph_and_quotes_indent() {
        let doc = rtf("3. one\n\n   more\n\n> quoted\n>\n> > deeper\n").document;
        let b = body(&doc);
        assert!(b.contains("\\li480\\fi-480\\tx480\\sb0\\sa120\\f0\\fs24 3.\\tab one\\par\n\\pard\\plain\\ql\\li480\\fi0\\sb0\\sa120\\f0\\fs24 more\\par"), "{b}");
        assert!(
            b.contains("\\li720\\fi0\\sb0\\sa120\\f0\\fs24 quoted\\par"),
            "{b}"
        );
        assert!(
            b.contains("\\li1440\\fi0\\sb0\\sa120\\f0\\fs24 deeper\\par"),
            "{b}"
        );
    }

    /// A wide table's text shrinks until its words fit, down to 7 pt;
    /// one that fits keeps 10 pt.
    #[test]
    fn a_wide_table_is_set_smaller_so_no_word_breaks() {
        assert_eq!(table_size(&[5, 10, 2], TEXT_WIDTH), TABLE_SIZE);
        let words = [20, 8, 8, 8, 8, 8, 5, 5];
        let size = table_size(&words, TEXT_WIDTH);
        assert!((MIN_TABLE_SIZE..TABLE_SIZE).contains(&size), "{size}");
        let widths = column_widths_at(&words, &words, TEXT_WIDTH, size);
        for (w, n) in widths.iter().zip(words) {
            assert!(*w as i64 >= char_twips(n, WORD_TWIPS, size), "{widths:?}");
        }
        assert!(widths.iter().sum::<i32>() <= TEXT_WIDTH);
        assert_eq!(table_size(&[50; 20], TEXT_WIDTH), MIN_TABLE_SIZE);
    }

    #[test]
    fn column_widths_follow_the_longest_cell_and_fit_the_page() {
        // 5, 10 and 2 (clamped to 4) characters, at 140 twips each plus 216.
        assert_eq!(
            column_widths_at(&[5, 10, 2], &[5, 10, 2], TEXT_WIDTH, TABLE_SIZE),
            vec![916, 1616, 776]
        );
        // Too wide: each column keeps its longest word (10, 6, 10 characters
        // at 120 twips: 1416, 936, 1416 twips), and the rest of the page is
        // shared by how much wider each would like to be.
        let wide = column_widths_at(&[80, 50, 10], &[10, 6, 10], TEXT_WIDTH, TABLE_SIZE);
        assert_eq!(wide, vec![4057, 3795, 1507]);
        assert!(wide.iter().sum::<i32>() <= TEXT_WIDTH);
        // A number column is never squeezed below its number.
        let many = column_widths_at(&[40; 6], &[9; 6], TEXT_WIDTH, TABLE_SIZE);
        assert!(
            many.iter().all(|&w| w >= 9 * WORD_TWIPS + 2 * CELL_GAP),
            "{many:?}"
        );
        // Only when the words alone do not fit are they scaled together.
        let crowded = column_widths_at(&[30; 12], &[30; 12], TEXT_WIDTH, TABLE_SIZE);
        assert!(crowded.iter().sum::<i32>() <= TEXT_WIDTH);
        assert_eq!(longest_word("0.56–0.84 and more"), 9);
        assert_eq!(display_width("中文ab😀é\u{301}"), 2 + 2 + 1 + 1 + 2 + 1);
    }

    #[test]
    fn tables_get_cellx_boundaries_alignment_and_a_bold_header() {
        let out = rtf(
            "| Name | Score | Note |\n|:-----|------:|:---:|\n| alpha | 0.91 | ok |\n| é | 1 | `{x}` |\n",
        );
        let b = body(&out.document);
        // Longest: alpha 5; bold Score 5 × 1.2 = 6; bold Note 4 × 1.2 → 5:
        // 916, 1056 and 916 twips.
        let header_row = "\\trowd\\trgaph108\\trleft0\\trhdr\
            \\clbrdrt\\brdrs\\brdrw15\\clbrdrb\\brdrs\\brdrw10\\cellx916\
            \\clbrdrt\\brdrs\\brdrw15\\clbrdrb\\brdrs\\brdrw10\\cellx1972\
            \\clbrdrt\\brdrs\\brdrw15\\clbrdrb\\brdrs\\brdrw10\\cellx2888\n\
            \\pard\\plain\\intbl\\ql\\sb40\\sa40\\f0\\fs20 {\\b Name}\\cell\n\
            \\pard\\plain\\intbl\\qr\\sb40\\sa40\\f0\\fs20 {\\b Score}\\cell\n\
            \\pard\\plain\\intbl\\qc\\sb40\\sa40\\f0\\fs20 {\\b Note}\\cell\n\\row\n";
        assert!(b.starts_with(header_row), "{b}");
        assert!(b.contains("\\trowd\\trgaph108\\trleft0\\cellx916\\cellx1972\\cellx2888\n\\pard\\plain\\intbl\\ql\\sb40\\sa40\\f0\\fs20 alpha\\cell"), "{b}");
        assert!(
            b.contains("\\clbrdrb\\brdrs\\brdrw15\\cellx916"),
            "last row ruled: {b}"
        );
        assert!(b.contains("\\u233?\\cell\n"), "{b}");
        assert!(
            b.contains("{\\f2 \\{x\\}}\\cell\n\\row\n\\pard\\plain\\sa120\\fs12 \\par\n"),
            "{b}"
        );
        assert_eq!(out.tables.len(), 1);
        assert!(out.tables[0].contains(header_row));
        assert!(out.tables[0].starts_with("{\\rtf1") && out.tables[0].ends_with("}\n"));
    }

    #[test]
    fn a_caption_paragraph_goes_with_its_table() {
        let md = "Table 1: Main *results*.\n\n| a |\n|---|\n| 1 |\n\nTable 2 follows.\n\nTable 2. Second.\n\n| b |\n|---|\n| 2 |\n\n| c |\n|---|\n| 3 |\n\nTable: after a table, not a caption.\n";
        let out = rtf(md);
        assert_eq!(out.tables.len(), 3);
        let caption1 = "\\pard\\plain\\s8\\keepn\\ql\\li0\\fi0\\sb120\\sa120\\b\\f0\\fs22 Table 1: Main {\\i results}.\\par\n";
        assert!(out.document.contains(caption1), "{}", out.document);
        assert!(
            body(&out.tables[0]).starts_with(caption1),
            "{}",
            out.tables[0]
        );
        // "Table 2 follows." is a caption by its words but no table follows it.
        assert!(out.document.contains("\\f0\\fs24 Table 2 follows.\\par"));
        assert!(body(&out.tables[1]).starts_with("\\pard\\plain\\s8\\keepn\\ql\\li0\\fi0\\sb120\\sa120\\b\\f0\\fs22 Table 2. Second.\\par\n"));
        assert!(
            body(&out.tables[2]).starts_with("\\trowd"),
            "no caption: {}",
            out.tables[2]
        );
        assert!(!out.tables.iter().any(|t| t.contains("after a table")));
    }

    #[test]
    fn caption_rule() {
        for yes in [
            "Table 1: x",
            "Table 12. x",
            "Table S1 x",
            "Table: x",
            "  TABLE 3",
            "Table\u{a0}4",
        ] {
            assert!(is_caption(yes), "{yes}");
        }
        for no in [
            "Tables 1-3 show",
            "Table of contents",
            "Table shows",
            "table 1",
            "Table1",
            "The Table 1",
        ] {
            assert!(!is_caption(no), "{no}");
        }
    }

    #[test]
    fn footnotes_are_numbered_marks_with_their_text_at_the_end() {
        let doc = rtf("First[^b] and second[^a].\n\n[^a]: Note A.\n\n[^b]: Note B\n    with more.\n\nAfter.\n").document;
        let b = body(&doc);
        assert!(
            b.contains("First{\\super 1} and second{\\super 2}.\\par"),
            "{b}"
        );
        let after = b.find("After.").unwrap();
        let note_a = b.find("2.\\tab Note A.").unwrap();
        let note_b = b.find("1.\\tab Note B with more.").unwrap();
        assert!(after < note_b && note_b < note_a, "{b}");
        assert!(b.contains("\\li480\\fi-480\\tx480"), "{b}");
    }

    /// `--tables` dropped the footnotes a table's cells refer to (issue:
    /// publishing as the seed's studies do it, "The manuscript").
    #[test]
    fn a_table_document_carries_the_notes_its_caption_and_cells_refer_to() {
        let c = rtf(
            "Intro[^intro].\n\nTable 1: Rates[^cap].\n\n| a | b |\n|---|---|\n| x[^cell] | 2 |\n\nTable 2: No notes.\n\n| c |\n|---|\n| y |\n\n[^intro]: Not the table's.\n\n[^cap]: On the caption.\n\n[^cell]: On a cell.\n",
        );
        let one = body(&c.tables[0]);
        assert!(one.contains("Table 1: Rates{\\super 2}."), "{one}");
        let (cap, cell) = (
            one.find("2.\\tab On the caption.").unwrap(),
            one.find("3.\\tab On a cell.").unwrap(),
        );
        assert!(cap < cell, "{one}");
        assert!(!one.contains("Not the table's"), "{one}");
        let two = body(&c.tables[1]);
        assert!(
            !two.contains("\\tab "),
            "a table without notes has none: {two}"
        );
        assert!(c.tables.iter().all(|t| t.ends_with("}\n")));
        // The document itself keeps every note.
        let doc = body(&c.document);
        assert!(
            doc.contains("1.\\tab Not the table's.") && doc.contains("3.\\tab On a cell."),
            "{doc}"
        );
    }

    #[test]
    fn html_is_reduced_to_its_text() {
        let md = "<details><summary>More <b>uv</b> &amp; co</summary>\n\n<!-- hidden -->\n\nInside.\n\n</details>\n\n<p align=\"center\"><img src=\"x.png\" alt=\"Logo\"><br>\nline two</p>\n\nInline <kbd>Ctrl</kbd><br>x <img alt=\"pic\" src=\"y.svg\">.\n";
        let doc = rtf(md).document;
        let b = body(&doc);
        assert!(!b.contains('<'), "{b}");
        assert!(b.contains(" More uv & co\\par"), "{b}");
        assert!(!b.contains("hidden"), "{b}");
        assert!(b.contains(" Inside.\\par"), "{b}");
        assert!(b.contains(" [Logo]\\line line two\\par"), "{b}");
        assert!(b.contains("Inline Ctrl\\line x [pic].\\par"), "{b}");
    }

    #[test]
    fn images_embed_png_and_fall_back_to_alt_text() {
        let dir = tempfile::tempdir().unwrap();
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&2000u32.to_be_bytes());
        png.extend_from_slice(&100u32.to_be_bytes());
        std::fs::write(dir.path().join("wide figure.png"), &png).unwrap();
        // An SVG cut short does not parse: its alt text stands for it.
        std::fs::write(dir.path().join("f.svg"), "<svg width=\"10\" height=").unwrap();
        let md = "![Wide](wide%20figure.png) ![A chart](f.svg) ![](https://ex.org/b.png) ![gone](no.png)\n";
        let doc = convert(
            md,
            dir.path(),
            &crate::render::build::load_assets(walk(dir.path())),
        )
        .document;
        // 2000 px is 30000 twips, scaled to the text width; height follows.
        assert!(
            doc.contains(
                "{\\pict\\pngblip\\picw2000\\pich100\\picwgoal9360\\pichgoal468\n89504e470d0a1a0a"
            ),
            "{doc}"
        );
        assert!(doc.contains("} [A chart] [b.png] [gone]\\par"), "{doc}");
        assert_eq!(
            image_size(&[0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0, 50, 0, 80, 3]),
            Some(("jpegblip", 80, 50))
        );
        assert_eq!(image_size(b"GIF89a"), None);
    }

    #[test]
    fn a_table_inside_a_list_is_indented_but_its_own_file_is_not() {
        let out = rtf("- item\n\n  | a | b |\n  |---|---|\n  | 1 | 2 |\n");
        assert!(
            out.document
                .contains("\\trowd\\trgaph108\\trleft360\\trhdr"),
            "{}",
            out.document
        );
        assert!(out.tables[0].contains("\\trowd\\trgaph108\\trleft0\\trhdr"));
    }

    /// Real document: hiyouga/LLaMA-Factory README_zh.md,
    /// `<details><summary>全部博客</summary>`: any non-ASCII text inside an
    /// HTML block made the tag scanner slice inside a character (a panic).
    #[test]
    fn html_block_text_in_chinese_does_not_split_a_character() {
        let doc = rtf("<details><summary>全部博客</summary>\n\n- a\n\n</details>\n").document;
        assert!(body(&doc).starts_with("\\pard\\plain\\ql\\li0\\fi0\\sb0\\sa120\\f0\\fs24 \\u20840?\\u-28440?\\u21338?\\u23458?\\par\n"), "{doc}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// Never a panic, always balanced ASCII RTF: arbitrary text, and
        /// text made of HTML-ish, entity-ish, table-ish and non-ASCII bits.
        #[test]
        fn any_input_gives_balanced_ascii_rtf(
            text in "(\\PC|\n){0,80}",
            bits in proptest::collection::vec(
                "<[a-zA-Z/!?]{0,4}[^>\n]{0,8}>?|&#?[a-zA-Z0-9]{0,5};?|[|*_`~\\[\\]()!#>-]{1,3}|\n\n?|[ \t]{1,3}|[a-z]{1,4}|[é中😀\u{a0}\u{301}]|\\||\\{|\\}",
                0..40,
            ),
        ) {
            for input in [text.clone(), bits.concat()] {
                let out = convert(&input, Path::new("/nonexistent"), &crate::render::assets::AssetMap::new());
                for doc in std::iter::once(&out.document).chain(out.tables.iter()) {
                    proptest::prop_assert!(doc.is_ascii());
                    proptest::prop_assert_eq!(depth_after(doc), Some(0), "{}", doc);
                }
            }
        }
    }

    /// Group depth at the end of `rtf` (escapes skipped), `None` if it ever
    /// closes more than it opened.
    fn depth_after(rtf: &str) -> Option<i64> {
        let mut depth = 0i64;
        let mut chars = rtf.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                }
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth < 0 {
                        return None;
                    }
                }
                _ => {}
            }
        }
        Some(depth)
    }

    #[test]
    fn entities_decode() {
        assert_eq!(
            decode_entities("a &amp; b &lt;c&gt; &#233;&#x1F600; &bogus; & x"),
            "a & b <c> é😀 &bogus; & x"
        );
    }
}
