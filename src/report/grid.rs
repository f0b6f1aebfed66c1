//! A table described once: its columns (header, alignment) and rows of
//! typed cells. Each output syntax (Markdown, HTML, terminal, CSV, RTF:
//! `render::syntax`) writes the same [`Grid`] in its own row and divider
//! syntax, so a README table, a site table and a terminal table of the
//! same numbers cannot drift apart (the shape of hyperfine's
//! `MarkupExporter`).
//!
//! Cells keep their values typed; [`Cell::text`] words them through
//! [`crate::format`], the one place numbers are formatted.

use serde::Serialize;

use crate::format::{self, Verdict};

/// How a column's cells are aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
    /// Marks and short fractions.
    Center,
}

/// One column: its header and alignment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    /// The header cell (usually [`Cell::Text`]).
    pub header: Cell,
    /// How its cells are aligned.
    pub align: Align,
}

impl Column {
    /// A column headed by the words `header`.
    pub fn new(header: impl Into<String>, align: Align) -> Column {
        Column {
            header: Cell::Text(header.into()),
            align,
        }
    }
}

/// One cell, typed: numbers stay numbers until a syntax writes them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum Cell {
    /// Words, recorded or written: escaped by every syntax (Markdown
    /// punctuation, HTML's `& < > " '`).
    Text(String),
    /// An identifier shown literally (a question id): a code span in
    /// Markdown, `<code>` in HTML.
    Code(String),
    /// A whole number.
    Count(u64),
    /// `part/whole`; `—` when `whole` is 0 ([`format::count`]).
    Fraction(u32, u32),
    /// A rate or F1 ([`format::rate`]).
    Rate(Option<f64>),
    /// A rate difference ([`format::signed`]).
    Signed(Option<f64>),
    /// An interval of rates, `(low, high)` ([`format::interval`]).
    Interval(Option<(f64, f64)>),
    /// An interval of differences ([`format::signed_interval`]).
    SignedInterval(Option<(f64, f64)>),
    /// A duration ([`format::maybe_seconds`]).
    Seconds(Option<f64>),
    /// `✓`, `✗` or `—` ([`format::check`]).
    Check(Option<bool>),
    /// An attempt's verdict, as a cell ([`Verdict::cell`]).
    Verdict(Verdict),
    /// A cell with a tone: `ok`, `soft`, `bad` or `muted` (a class of
    /// `static/style.css`; only HTML shows it).
    Toned(Box<Cell>, String),
    /// A cell that links to `href` (relative); only Markdown and HTML
    /// show the link.
    Link(Box<Cell>, String),
}

impl Cell {
    /// The cell as plain text, numbers worded by [`crate::format`]: what a
    /// terminal or a CSV shows, and what other syntaxes escape.
    pub fn text(&self) -> String {
        match self {
            Cell::Text(t) | Cell::Code(t) => t.clone(),
            Cell::Count(n) => n.to_string(),
            Cell::Fraction(part, whole) => format::count(*part, *whole),
            Cell::Rate(v) => format::rate(*v),
            Cell::Signed(v) => v.map_or_else(|| format::NONE.to_string(), format::signed),
            Cell::Interval(b) => format::interval(*b),
            Cell::SignedInterval(b) => format::signed_interval(*b),
            Cell::Seconds(v) => format::maybe_seconds(*v),
            Cell::Check(v) => format::check(*v),
            Cell::Verdict(v) => v.cell(),
            Cell::Toned(inner, _) | Cell::Link(inner, _) => inner.text(),
        }
    }

    /// True when the cell's text is words or an identifier that a syntax
    /// must escape (numbers and marks never need it).
    pub fn is_words(&self) -> bool {
        match self {
            Cell::Text(_) | Cell::Code(_) => true,
            Cell::Toned(inner, _) | Cell::Link(inner, _) => inner.is_words(),
            _ => false,
        }
    }

    /// The tone, for syntaxes that colour cells.
    pub fn tone(&self) -> Option<&str> {
        match self {
            Cell::Toned(_, tone) => Some(tone),
            Cell::Verdict(v) => Some(v.tone()),
            Cell::Link(inner, _) => inner.tone(),
            _ => None,
        }
    }

    /// This cell with a tone.
    pub fn toned(self, tone: &str) -> Cell {
        Cell::Toned(Box::new(self), tone.to_string())
    }

    /// This cell linking to `href`.
    pub fn linked(self, href: impl Into<String>) -> Cell {
        Cell::Link(Box::new(self), href.into())
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::Text(text.to_string())
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell::Text(text)
    }
}

impl From<u32> for Cell {
    fn from(n: u32) -> Cell {
        Cell::Count(u64::from(n))
    }
}

impl From<usize> for Cell {
    fn from(n: usize) -> Cell {
        Cell::Count(n as u64)
    }
}

/// A table: columns, and rows of as many cells as there are columns.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Grid {
    /// The columns, left to right.
    pub columns: Vec<Column>,
    /// The rows, top to bottom.
    pub rows: Vec<Vec<Cell>>,
}

impl Grid {
    /// A grid with these columns and no rows.
    pub fn new(columns: Vec<Column>) -> Grid {
        Grid {
            columns,
            rows: Vec::new(),
        }
    }

    /// Adds a row.
    pub fn push(&mut self, row: Vec<Cell>) {
        self.rows.push(row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_word_their_values_through_format() {
        assert_eq!(Cell::Rate(Some(0.5)).text(), "0.50");
        assert_eq!(Cell::Fraction(0, 0).text(), "—");
        assert_eq!(Cell::Interval(Some((0.1, 0.9))).text(), "0.10–0.90");
        assert_eq!(Cell::Signed(Some(-0.25)).text(), "\u{2212}0.25");
        assert_eq!(Cell::Seconds(Some(0.0421)).text(), "0.042");
        let v = Cell::Verdict(Verdict::NoAnswer { timed_out: false });
        assert_eq!((v.text(), v.tone()), ("✗ no answer".into(), Some("bad")));
        let linked = Cell::Code("q".into()).linked("q.html").toned("ok");
        assert_eq!((linked.text(), linked.tone()), ("q".into(), Some("ok")));
        assert!(linked.is_words() && !Cell::Count(3).is_words());
    }
}
