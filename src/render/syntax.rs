//! One table, many syntaxes: a [`Grid`] written as a GitHub-flavoured
//! Markdown pipe table, an HTML `<thead>`/`<tbody>`, aligned terminal text,
//! CSV, or RTF rows. Each syntax supplies only its cell, row and divider
//! syntax; what the table holds is decided once, where the grid is built
//! (`report::tables`).
//!
//! Also here: how recorded text is made inert in Markdown ([`md_text`],
//! [`md_code`]), which every Markdown writer of the render layer uses.

use std::fmt::Write as _;

use crate::report::grid::{Align, Cell, Grid};

/// Makes recorded text (question text, labels, tool names) inert in
/// Markdown: `<` can open raw HTML, which the render layer passes through,
/// and `&name;` is an entity, so both become entities that render as the
/// characters themselves; newlines become spaces. Markdown's inline
/// punctuation is backslash-escaped, so a label `*star* [x](y)` stays
/// those characters rather than emphasis and a link: `\\`, `` ` ``, `*`,
/// `[`, `]`, `~`, and `_` where it could open or close emphasis (not
/// inside a word: `assays_cross` stays).
pub fn md_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => {
                // Only where it could start an entity reference.
                let rest: String = chars[i + 1..].iter().take(33).collect();
                let entity = rest.split_once(';').is_some_and(|(name, _)| {
                    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '#')
                });
                out.push_str(if entity { "&amp;" } else { "&" });
            }
            '\r' => {}
            '\n' => out.push(' '),
            '\\' | '`' | '*' | '[' | ']' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '_' => {
                let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric());
                if !(word(i.checked_sub(1).and_then(|j| chars.get(j))) && word(chars.get(i + 1))) {
                    out.push('\\');
                }
                out.push('_');
            }
            c if crate::text::is_bidi_control(c) => {
                out.push_str(
                    &crate::text::bidi_shown(c)
                        .replace('[', "\\[")
                        .replace(']', "\\]"),
                );
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as a Markdown code span that holds it literally, whatever it
/// holds: the fence is one backtick longer than the longest run inside,
/// padded with a space where the text starts or ends with a backtick or a
/// space (CommonMark 0.31, "Code spans"); line breaks become spaces.
pub fn md_code(text: &str) -> String {
    let text = crate::text::show_bidi(&text.replace(['\r', '\n'], " ")).into_owned();
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with(['`', ' ']) || text.ends_with(['`', ' ']) {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// [`md_code`] for a table cell: `|` escaped too (GFM tables split cells at
/// a bare `|` even inside a code span).
pub fn md_code_cell(text: &str) -> String {
    md_code(text).replace('|', "\\|")
}

/// [`md_text`] for a table cell: `|` escaped too.
pub fn md_text_cell(text: &str) -> String {
    md_text(text).replace('|', "\\|")
}

/// A cell as Markdown table-cell content.
fn markdown_cell(cell: &Cell) -> String {
    match cell {
        Cell::Code(text) => md_code_cell(text),
        Cell::Toned(inner, _) => markdown_cell(inner),
        Cell::Link(inner, href) => format!(
            "[{}]({})",
            markdown_cell(inner),
            href.replace(' ', "%20")
                .replace('(', "%28")
                .replace(')', "%29")
        ),
        other => md_text_cell(&other.text()),
    }
}

/// The grid as a GitHub-flavoured Markdown pipe table, one line per row,
/// each ending in a line feed: `| a | b |`, then the divider (`---`,
/// `---:` right, `:---:` centred), then the rows.
pub fn markdown(grid: &Grid) -> String {
    let mut out = String::new();
    let row = |out: &mut String, cells: &mut dyn Iterator<Item = String>| {
        out.push('|');
        for cell in cells {
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    };
    row(
        &mut out,
        &mut grid.columns.iter().map(|c| markdown_cell(&c.header)),
    );
    out.push('|');
    for column in &grid.columns {
        out.push_str(match column.align {
            Align::Left => "---|",
            Align::Right => "---:|",
            Align::Center => ":---:|",
        });
    }
    out.push('\n');
    for cells in &grid.rows {
        row(&mut out, &mut cells.iter().map(markdown_cell));
    }
    out
}

/// How wide a page's table may be, in estimated characters, before it is
/// split ([`fitted`]): about 1,160 px of a 1,280 px window at the
/// stylesheet's table font (issue 26, section 3: tables fit 1280 px).
pub const TABLE_BUDGET: usize = 120;

/// The characters a column is estimated to need on a page: a header wraps
/// between words (its longest word, plus the sort mark), a number never
/// wraps, words and identifiers wrap at about 16 and 20 characters; plus
/// the cell's padding.
fn column_width(grid: &Grid, column: usize) -> usize {
    let longest_word = |text: &str| {
        text.split_whitespace()
            .map(crate::text::display_width)
            .max()
            .unwrap_or(0)
    };
    let header = longest_word(&grid.columns[column].header.text()) + 2;
    let cells = grid
        .rows
        .iter()
        .filter_map(|r| r.get(column))
        .map(|cell| {
            let text = cell.text();
            let whole = crate::text::display_width(&text);
            match cell {
                _ if !cell.is_words() => whole,
                Cell::Code(_) => whole.min(20),
                _ => whole.min(16).max(longest_word(&text)),
            }
        })
        .max()
        .unwrap_or(0);
    header.max(cells) + 3
}

/// The grid as tables that fit a page: the columns after the first packed,
/// in order, into as few tables as keep each within [`TABLE_BUDGET`]
/// (estimated by `column_width`), every table repeating the first
/// column, which names the rows. A grid that fits is returned whole.
pub fn fitted(grid: &Grid) -> Vec<Grid> {
    if grid.columns.len() < 3 {
        return vec![grid.clone()];
    }
    let widths: Vec<usize> = (0..grid.columns.len())
        .map(|c| column_width(grid, c))
        .collect();
    let first = widths[0].max(19);
    let mut chunks: Vec<Vec<usize>> = vec![Vec::new()];
    let mut used = first;
    for (c, &w) in widths.iter().enumerate().skip(1) {
        let current = chunks.last_mut().expect("one chunk");
        if !current.is_empty() && used + w > TABLE_BUDGET {
            chunks.push(vec![c]);
            used = first + w;
        } else {
            current.push(c);
            used += w;
        }
    }
    chunks
        .into_iter()
        .map(|chunk| {
            let take = std::iter::once(0).chain(chunk).collect::<Vec<_>>();
            Grid {
                columns: take.iter().map(|&c| grid.columns[c].clone()).collect(),
                rows: grid
                    .rows
                    .iter()
                    .map(|r| take.iter().filter_map(|&c| r.get(c).cloned()).collect())
                    .collect(),
            }
        })
        .collect()
}

/// The grid as Markdown tables that fit a page ([`fitted`]), a blank line
/// between them.
pub fn markdown_fitted(grid: &Grid) -> String {
    fitted(grid)
        .iter()
        .map(markdown)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The grid as whole HTML tables that fit a page ([`fitted`]), each
/// `<table>` holding [`html`]'s `<thead>` and `<tbody>`.
pub fn html_fitted(grid: &Grid) -> String {
    fitted(grid)
        .iter()
        .map(|g| format!("<table>\n{}\n</table>\n", html(g)))
        .collect()
}

/// A cell as HTML content, escaped.
fn html_cell(cell: &Cell) -> String {
    use super::escape_html;
    match cell {
        Cell::Code(text) => format!("<code>{}</code>", escape_html(text)),
        Cell::Toned(inner, _) => html_cell(inner),
        Cell::Link(inner, href) => {
            format!("<a href=\"{}\">{}</a>", escape_html(href), html_cell(inner))
        }
        other => escape_html(&other.text()),
    }
}

/// Headers longer than this many characters are clamped to two lines,
/// with the whole text as the cell's `title`.
const LONG_HEADER: usize = 16;

/// The grid as the inside of an HTML `<table>`: `<thead>` with the header
/// row, then `<tbody>` with a line per row; a number cell has the class
/// `num`, a toned cell its tone (`<td class="num ok">`), a long header the
/// class `long` and its text as `title`. Every piece of text is escaped.
pub fn html(grid: &Grid) -> String {
    let mut out = String::from("<thead><tr>");
    for column in &grid.columns {
        // A long header (a condition's label) is shown on at most two
        // lines, its whole text on hover (`static/style.css`, "Tables").
        let text = column.header.text();
        if text.chars().count() > LONG_HEADER {
            let _ = write!(
                out,
                "<th class=\"long\" title=\"{}\"><span>{}</span></th>",
                super::escape_html(&text),
                html_cell(&column.header)
            );
        } else {
            let _ = write!(out, "<th>{}</th>", html_cell(&column.header));
        }
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for cells in &grid.rows {
        out.push_str("<tr>");
        for cell in cells {
            // A number, a rate or an interval never wraps inside itself.
            let num = (!cell.is_words()).then_some("num");
            let classes: Vec<String> = num
                .into_iter()
                .map(str::to_string)
                .chain(cell.tone().map(super::escape_html))
                .collect();
            if classes.is_empty() {
                let _ = write!(out, "<td>{}</td>", html_cell(cell));
            } else {
                let _ = write!(
                    out,
                    "<td class=\"{}\">{}</td>",
                    classes.join(" "),
                    html_cell(cell)
                );
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>");
    out
}

/// How wide terminal output may be, in columns (issue 26, section 3).
pub const TERMINAL_WIDTH: usize = 100;

/// The grid as aligned terminal text: a line per row (header first), each
/// indented two spaces, columns two spaces apart and padded to their
/// widest cell (in terminal columns, [`crate::text::display_width`]),
/// left-aligned columns padded on the right
/// and the rest on the left; trailing spaces trimmed; control characters
/// escaped ([`crate::text::printable`]). A grid whose lines would be wider
/// than [`TERMINAL_WIDTH`] is written as records instead: per row, its
/// first cell on a line, then `header value` pairs joined by ` · `,
/// wrapped within the width.
pub fn terminal(grid: &Grid) -> String {
    let rows: Vec<Vec<String>> =
        std::iter::once(grid.columns.iter().map(|c| c.header.text()).collect())
            .chain(grid.rows.iter().map(|r| r.iter().map(Cell::text).collect()))
            .map(|r: Vec<String>| {
                r.into_iter()
                    .map(|t| crate::text::printable(&t).into_owned())
                    .collect()
            })
            .collect();
    let widths: Vec<usize> = (0..grid.columns.len())
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |t| crate::text::display_width(t)))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let total = 2 + widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
    if total > TERMINAL_WIDTH {
        return terminal_records(&rows);
    }
    let mut out = String::new();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .zip(&grid.columns)
            .map(|((text, &w), column)| match column.align {
                Align::Left => crate::text::pad_right(text, w),
                Align::Right | Align::Center => crate::text::pad_left(text, w),
            })
            .collect();
        let _ = writeln!(out, "  {}", line.join("  ").trim_end());
    }
    out
}

/// `text` with every line wider than [`TERMINAL_WIDTH`] wrapped between
/// words, its continuation lines indented two spaces past the line's own
/// indent (issue 26, section 3: terminal output fits 100 columns).
pub fn fit_terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        if crate::text::display_width(body) <= TERMINAL_WIDTH {
            out.push_str(line);
            continue;
        }
        let indent = &body[..body.len() - body.trim_start_matches(' ').len()];
        let wrapped = wrap_terminal(body.trim_start_matches(' '), &format!("{indent}  "));
        // The first line keeps the line's own indent.
        out.push_str(indent);
        out.push_str(wrapped.trim_start_matches(' '));
        if !line.ends_with('\n') && out.ends_with('\n') {
            out.pop();
        }
    }
    out
}

/// `rows` (the header first) as records: see [`terminal`].
fn terminal_records(rows: &[Vec<String>]) -> String {
    let Some((header, body)) = rows.split_first() else {
        return String::new();
    };
    let mut out = String::new();
    for row in body {
        let _ = writeln!(
            out,
            "  {}",
            row.first().map(String::as_str).unwrap_or_default()
        );
        let pairs: Vec<String> = header
            .iter()
            .zip(row)
            .skip(1)
            .map(|(h, v)| format!("{h} {v}"))
            .collect();
        out.push_str(&wrap_units(pairs.iter().map(String::as_str), " · ", "    "));
    }
    out
}

/// `text` wrapped between words to lines of at most [`TERMINAL_WIDTH`]
/// columns (a word longer than that alone on its line), each line
/// starting with `indent` and ending with a line feed.
pub fn wrap_terminal(text: &str, indent: &str) -> String {
    wrap_units(text.split(' ').filter(|w| !w.is_empty()), " ", indent)
}

/// `units` joined by `joiner`, wrapped between units as [`wrap_terminal`]
/// wraps words (a joiner that ends a line is dropped).
fn wrap_units<'a>(units: impl Iterator<Item = &'a str>, joiner: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::from(indent);
    let mut empty = true;
    for unit in units {
        // A unit that fits no line on its own (a record's long value) is
        // wrapped between its words, its own lines after the line so far,
        // the lines after its first indented two columns more.
        if unit.contains(' ')
            && crate::text::display_width(indent) + crate::text::display_width(unit)
                > TERMINAL_WIDTH
        {
            if !empty {
                out.push_str(line.trim_end());
                out.push('\n');
            }
            let deeper = format!("{indent}  ");
            let wrapped = wrap_terminal(unit, &deeper);
            out.push_str(indent);
            out.push_str(wrapped.strip_prefix(deeper.as_str()).unwrap_or(&wrapped));
            line = String::from(indent);
            empty = true;
            continue;
        }
        let wide = crate::text::display_width(&line)
            + crate::text::display_width(joiner)
            + crate::text::display_width(unit);
        if !empty && wide > TERMINAL_WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = String::from(indent);
            empty = true;
        }
        if !empty {
            line.push_str(joiner);
        }
        line.push_str(unit);
        empty = false;
    }
    if !empty {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The grid as CSV (RFC 4180, LF line ends, minimal quoting: the
/// repository's one CSV writer, [`crate::table::Table::to_csv`]), each
/// cell as its plain text.
pub fn csv(grid: &Grid) -> String {
    let mut table =
        crate::table::Table::new(grid.columns.iter().map(|c| c.header.text()).collect());
    table.rows = grid
        .rows
        .iter()
        .map(|r| r.iter().map(Cell::text).collect())
        .collect();
    table.to_csv()
}

/// The grid as RTF table rows at the left margin of a portrait page: the
/// rows `paper doc` writes for the same table in Markdown ([`markdown`]),
/// sized, aligned and bordered by the one RTF table layout
/// (`render::rtf`). Links show their text; a code cell is set in the
/// monospace font.
pub fn rtf(grid: &Grid) -> String {
    let header: Vec<(String, String)> = grid.columns.iter().map(|c| rtf_cell(&c.header)).collect();
    let rows: Vec<Vec<(String, String)>> = std::iter::once(header)
        .chain(grid.rows.iter().map(|r| r.iter().map(rtf_cell).collect()))
        .collect();
    let aligns = grid.columns.iter().map(|c| c.align).collect::<Vec<_>>();
    super::rtf::table_rows(&aligns, rows)
}

/// A cell as `(RTF, plain text)`.
fn rtf_cell(cell: &Cell) -> (String, String) {
    match cell {
        Cell::Code(text) => (
            format!("{{\\f2 {}}}", super::rtf::escape(text)),
            text.clone(),
        ),
        Cell::Toned(inner, _) | Cell::Link(inner, _) => rtf_cell(inner),
        other => {
            let text = other.text();
            (super::rtf::escape(&text), text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::grid::Column;

    #[test]
    fn a_record_value_wider_than_a_line_is_wrapped_between_its_words() {
        let value = "not comparable: defined otherwise (`one-query`: known_gap (none) in the \
                     baseline, {\"found\":\"2026-11-30\"} in the candidate)";
        let rows = vec![
            vec![
                "question".to_string(),
                "change".to_string(),
                "gate".to_string(),
            ],
            vec!["q1".to_string(), value.to_string(), "no".to_string()],
        ];
        let text = terminal_records(&rows);
        for line in text.lines() {
            assert!(crate::text::display_width(line) <= TERMINAL_WIDTH, "{text}");
        }
        let words: Vec<&str> = text.split_whitespace().collect();
        let wanted: Vec<&str> = "q1 change"
            .split(' ')
            .chain(value.split(' '))
            .chain(["gate", "no"])
            .collect();
        assert_eq!(words, wanted, "{text}");
        assert!(
            text.contains("\n      "),
            "continued lines indented deeper: {text}"
        );
    }

    fn grid() -> Grid {
        let mut g = Grid::new(vec![
            Column::new("question", Align::Left),
            Column::new("exact", Align::Right),
            Column::new("ordered", Align::Center),
        ]);
        g.push(vec![
            Cell::Code("q|1".into()).linked("q 1.html"),
            Cell::Rate(Some(0.5)).toned("soft"),
            Cell::Check(Some(true)),
        ]);
        g.push(vec![
            Cell::Text("<b>*x*</b>".into()),
            Cell::Rate(None),
            Cell::Fraction(2, 3),
        ]);
        g
    }

    /// A bidirectional control in recorded text is shown as its code point
    /// in Markdown text and code spans (see [`crate::text::is_bidi_control`]).
    #[test]
    fn bidirectional_controls_are_shown_in_markdown() {
        assert_eq!(md_text("a\u{202E}b"), "a\\[U+202E\\]b");
        assert_eq!(md_code("a\u{2067}b"), "`a[U+2067]b`");
    }

    #[test]
    fn markdown_escapes_words_and_aligns_by_divider() {
        assert_eq!(
            markdown(&grid()),
            "| question | exact | ordered |\n|---|---:|:---:|\n| [`q\\|1`](q%201.html) | 0.50 | ✓ |\n| &lt;b&gt;\\*x\\*&lt;/b&gt; | — | 2/3 |\n"
        );
    }

    #[test]
    fn html_escapes_and_carries_tones() {
        assert_eq!(
            html(&grid()),
            "<thead><tr><th>question</th><th>exact</th><th>ordered</th></tr></thead>\n<tbody>\n<tr><td><a href=\"q 1.html\"><code>q|1</code></a></td><td class=\"num soft\">0.50</td><td class=\"num\">✓</td></tr>\n<tr><td>&lt;b&gt;*x*&lt;/b&gt;</td><td class=\"num\">—</td><td class=\"num\">2/3</td></tr>\n</tbody>"
        );
    }

    #[test]
    fn terminal_pads_by_characters() {
        assert_eq!(
            terminal(&grid()),
            "  question    exact  ordered\n  q|1          0.50        ✓\n  <b>*x*</b>      —      2/3\n"
        );
    }

    #[test]
    fn csv_quotes_what_it_must() {
        assert_eq!(
            csv(&grid()),
            "question,exact,ordered\nq|1,0.50,✓\n<b>*x*</b>,—,2/3\n"
        );
    }

    /// The RTF syntax writes the rows `paper doc` makes of the same table
    /// written in Markdown: one layout, reached from either side.
    #[test]
    fn rtf_rows_are_those_paper_doc_makes_of_the_markdown() {
        let mut g = grid();
        // Links are text in RTF tables from either side; Markdown escapes
        // that the RTF writer would keep literally are left out.
        g.rows[0][0] = Cell::Code("q1".into());
        g.rows[1][0] = Cell::Text("x é 😀".into());
        let from_markdown = super::super::rtf::convert(
            &markdown(&g),
            std::path::Path::new("."),
            &super::super::assets::AssetMap::new(),
        );
        let table = &from_markdown.tables[0];
        let rows = rtf(&g);
        assert!(table.contains(&rows), "{table}\n---\n{rows}");
        assert!(
            rows.contains("\\trowd") && rows.contains("{\\f2 q1}"),
            "{rows}"
        );
    }

    /// Recorded text (question ids come from file names, which may hold
    /// `<`) never becomes markup on the page beside the README.
    #[test]
    fn recorded_text_is_inert_in_markdown() {
        assert_eq!(md_text("<b>x</b>"), "&lt;b&gt;x&lt;/b&gt;");
        assert_eq!(md_text("AT&T & co"), "AT&T & co");
        assert_eq!(md_text("&amp; &#60;"), "&amp;amp; &amp;#60;");
        assert_eq!(md_text("a\r\nb"), "a b");
        assert_eq!(md_code("q_1"), "`q_1`");
        assert_eq!(md_code("a`b"), "``a`b``");
        assert_eq!(md_code("`x``"), "``` `x`` ```");
        assert_eq!(md_code_cell("q|p"), "`q\\|p`");
        // A table row keeps its cells however the id is spelled.
        let id = "q|p*em*`tick`[c](javascript:alert(6))";
        let table = format!("| id | n |\n|---|---|\n| {} | 3 |\n", md_code_cell(id));
        let html = crate::render::markdown::render(
            &table,
            std::path::Path::new("."),
            "p",
            &crate::render::assets::AssetMap::new(),
        )
        .body;
        assert_eq!(
            html.matches("<td>").count() + html.matches("<td ").count(),
            2,
            "{html}"
        );
        assert!(!html.contains("<em>") && !html.contains("<a "), "{html}");
        assert_eq!(
            md_text("*star* [x](y) `c` _em_ assays_cross a\\b ~~s~~"),
            "\\*star\\* \\[x\\](y) \\`c\\` \\_em\\_ assays_cross a\\\\b \\~\\~s\\~\\~"
        );
        // ... and renders as those very characters.
        let html = crate::render::markdown::render(
            &md_text("*star* [x](y) `c` _em_ a\\b"),
            std::path::Path::new("."),
            "p",
            &crate::render::assets::AssetMap::new(),
        )
        .body;
        assert!(html.contains("*star* [x](y) `c` _em_ a\\b"), "{html}");
        assert_eq!(md_text_cell("a|b"), "a\\|b");
        let html = crate::render::markdown::render(
            &format!("### {}\n", md_text("q <img src=x onerror=alert(1)>")),
            std::path::Path::new("."),
            "p",
            &crate::render::assets::AssetMap::new(),
        )
        .body;
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("q &lt;img src=x onerror=alert(1)&gt;"),
            "{html}"
        );
    }
}
