//! The one tabular shape every part of the harness exchanges: [`Table`].
//!
//! Ground truth, submitted answers and SPARQL solutions all become a
//! `Table { columns, rows }` of plain strings. Reading CSV is forgiving in the
//! ways real agents and spreadsheet tools are (a UTF-8 byte-order mark, CRLF
//! or LF line ends, quoted newlines and commas) and strict where leniency
//! would hide a fault (a row with the wrong number of fields is an error that
//! names its line). Writing follows RFC 4180 with LF line ends and quotes only
//! where needed, so output diffs cleanly.
//!
//! SPARQL solutions map to cells by the W3C *SPARQL 1.1 Query Results CSV and
//! TSV Formats* rules (section 2, "CSV"): IRIs bare, literals as their lexical
//! form (no language tag or datatype), blank nodes as `_:label`, unbound
//! variables as an empty field.

use std::borrow::Cow;
use std::fmt;

#[cfg(feature = "harness")]
use oxigraph::model::Term;

/// A table of string cells: a header of column names and rows of equal width.
///
/// Invariant (kept by every constructor here): every row has exactly
/// `columns.len()` cells.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Table {
    /// Column names, in order. A byte-order mark is never part of a name.
    pub columns: Vec<String>,
    /// Rows of cells, in order; an unbound SPARQL value is the empty string.
    pub rows: Vec<Vec<String>>,
}

/// Why a CSV text could not be read as a [`Table`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvError {
    /// 1-based physical line where the offending record starts, if known.
    pub line: Option<u64>,
    /// What was wrong, e.g. "expected 2 fields, found 3".
    pub message: String,
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for CsvError {}

impl Table {
    /// A table with the given column names and no rows.
    pub fn new(columns: Vec<String>) -> Self {
        Table {
            columns,
            rows: Vec::new(),
        }
    }

    /// Reads CSV text (RFC 4180, leniently: LF, CRLF or a lone CR, optional UTF-8 BOM).
    ///
    /// The first record is the header. An empty input is a table with no
    /// columns and no rows. Errors: invalid UTF-8, or a record whose field
    /// count differs from the header's, reported with the 1-based line where
    /// that record starts (quoted newlines counted).
    ///
    /// Text in the plain subset [`CsvText`] reads in place (what this tool
    /// and most others write) is split here without the `csv` crate, whose
    /// reader is built anew for every text (a parser table and a buffer:
    /// a tenth of the CPU of a build's load, which reads a CSV per
    /// attempt; docs/PERFORMANCE.md, "build and build --check"); the rest
    /// goes through that reader. Both give the same rows
    /// (`csv_text_is_from_csv`).
    pub fn from_csv(text: &[u8]) -> Result<Table, CsvError> {
        let plain = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        if let Some(inner) = read_in_place(plain) {
            return Ok(CsvText { inner }.to_table());
        }
        Table::from_csv_by_reader(text)
    }

    /// [`Table::from_csv`] through the `csv` crate's reader, whatever the
    /// text.
    ///
    /// Errors: as [`Table::from_csv`].
    fn from_csv_by_reader(text: &[u8]) -> Result<Table, CsvError> {
        let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        if let Some(line) = unterminated_quote(text) {
            return Err(CsvError {
                line: Some(line),
                message: "a quoted field opened here is never closed".to_string(),
            });
        }
        let table = parse_records(text)?;
        // The CSV reader skips blank lines; in a one-column table a blank
        // line is a row whose one value is unbound (W3C SPARQL 1.1 CSV
        // writes exactly that), so it is read again with each blank line
        // made an explicit empty field. Line numbers do not move.
        if table.columns.len() == 1
            && let Some(filled) = fill_blank_lines(text)
        {
            return parse_records(&filled);
        }
        Ok(table)
    }

    /// Writes the table as CSV: RFC 4180 quoting (only where a cell holds a
    /// comma, quote, CR, LF, or leading/trailing space), LF line ends, a
    /// trailing newline after every record. A table with no columns writes an
    /// empty string.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        if self.columns.is_empty() {
            return out;
        }
        write_record(&mut out, &self.columns);
        for row in &self.rows {
            write_record(&mut out, row);
        }
        out
    }

    #[cfg(feature = "harness")]
    /// Builds a table from SPARQL solutions, one column per variable in the
    /// given order; each cell per [`term_to_cell`], unbound as empty.
    pub fn from_solutions<'a, I>(variables: Vec<String>, solutions: I) -> Table
    where
        I: IntoIterator<Item = Vec<Option<&'a Term>>>,
    {
        let rows = solutions
            .into_iter()
            .map(|values| {
                values
                    .into_iter()
                    .map(|t| t.map(term_to_cell).unwrap_or_default())
                    .collect()
            })
            .collect();
        Table {
            columns: variables,
            rows,
        }
    }
}

/// Rows of text cells, as the scorer reads them: a [`Table`], or CSV text
/// read in place ([`CsvText`]). Cells are borrowed wherever the source
/// holds them as written.
pub trait Rows {
    /// Column names, in order.
    fn column_names(&self) -> Vec<&str>;
    /// Number of rows.
    fn row_count(&self) -> usize;
    /// Replaces the contents of `out` with the cells of row `index`
    /// (`index < row_count()`; nothing is written otherwise).
    fn row_into<'s>(&'s self, index: usize, out: &mut Vec<Cow<'s, str>>);
    /// Loads row `index` into the processor's caches ahead of its being
    /// read (a hint; it changes nothing).
    fn touch(&self, _index: usize) {}
    /// The text row `index` was read from (line end excluded), when the
    /// rows are read in place: two rows of the same text have the same
    /// cells.
    fn row_text(&self, _index: usize) -> Option<&str> {
        None
    }
}

impl Rows for Table {
    fn column_names(&self) -> Vec<&str> {
        self.columns.iter().map(String::as_str).collect()
    }

    fn row_count(&self) -> usize {
        self.rows.len()
    }

    fn row_into<'s>(&'s self, index: usize, out: &mut Vec<Cow<'s, str>>) {
        out.clear();
        if let Some(row) = self.rows.get(index) {
            out.extend(row.iter().map(|c| Cow::Borrowed(c.as_str())));
        }
    }
}

/// CSV text read as [`Table::from_csv`] reads it, without a `String` per
/// cell: each row is kept as the range of the text it spans and split again
/// when it is visited, so a large answer costs little more memory than its
/// bytes.
///
/// The text is read in place when it keeps to plain RFC 4180 (UTF-8; LF or
/// CRLF line ends; a quote only around a whole field, doubled inside it;
/// every record as wide as the header; no blank line in a one-column
/// table). Anything else (including every malformed text) is read by
/// [`Table::from_csv`] itself, so the rows, and the errors with their
/// lines, are always exactly that function's.
pub struct CsvText<'a> {
    inner: CsvInner<'a>,
}

enum CsvInner<'a> {
    InPlace {
        text: &'a str,
        columns: Vec<String>,
        /// Byte ranges of the rows (line end excluded); the top bit of the
        /// end marks a row with a quoted field.
        rows: Vec<(u32, u32)>,
    },
    Table(Table),
}

/// Marks a row range holding a quoted field (the top bit of its end).
const QUOTED: u32 = 1 << 31;

impl<'a> CsvText<'a> {
    /// Reads `bytes` as CSV; the same rows and errors as
    /// [`Table::from_csv`].
    pub fn read(bytes: &'a [u8]) -> Result<CsvText<'a>, CsvError> {
        let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        if let Some(inner) = read_in_place(text) {
            return Ok(CsvText { inner });
        }
        Ok(CsvText {
            inner: CsvInner::Table(Table::from_csv_by_reader(bytes)?),
        })
    }

    /// True when the text was read in place (not through the `csv` crate's reader).
    pub fn in_place(&self) -> bool {
        matches!(self.inner, CsvInner::InPlace { .. })
    }

    /// The rows as a [`Table`] (a copy of every cell).
    pub fn to_table(&self) -> Table {
        let mut table = Table::new(self.column_names().iter().map(|c| c.to_string()).collect());
        let mut cells = Vec::new();
        for i in 0..self.row_count() {
            self.row_into(i, &mut cells);
            table
                .rows
                .push(cells.drain(..).map(Cow::into_owned).collect());
        }
        table
    }
}

impl Rows for CsvText<'_> {
    fn column_names(&self) -> Vec<&str> {
        match &self.inner {
            CsvInner::InPlace { columns, .. } => columns.iter().map(String::as_str).collect(),
            CsvInner::Table(table) => table.column_names(),
        }
    }

    fn row_count(&self) -> usize {
        match &self.inner {
            CsvInner::InPlace { rows, .. } => rows.len(),
            CsvInner::Table(table) => table.rows.len(),
        }
    }

    fn row_into<'s>(&'s self, index: usize, out: &mut Vec<Cow<'s, str>>) {
        match &self.inner {
            CsvInner::InPlace { text, rows, .. } => {
                out.clear();
                let Some(&(start, end)) = rows.get(index) else {
                    return;
                };
                let quoted = end & QUOTED != 0;
                let Some(line) = text.get(start as usize..(end & !QUOTED) as usize) else {
                    return;
                };
                if quoted {
                    split_quoted(line, out);
                } else {
                    split_plain(line, out);
                }
            }
            CsvInner::Table(table) => table.row_into(index, out),
        }
    }

    fn row_text(&self, index: usize) -> Option<&str> {
        match &self.inner {
            CsvInner::InPlace { text, rows, .. } => {
                let &(start, end) = rows.get(index)?;
                text.get(start as usize..(end & !QUOTED) as usize)
            }
            CsvInner::Table(_) => None,
        }
    }

    fn touch(&self, index: usize) {
        if let CsvInner::InPlace { text, rows, .. } = &self.inner
            && let Some(&(start, end)) = rows.get(index)
        {
            let bytes = text.as_bytes();
            let end = (end & !QUOTED) as usize;
            std::hint::black_box((
                bytes.get(start as usize).copied(),
                bytes.get(end.saturating_sub(1)).copied(),
            ));
        }
    }
}

/// Reads `text` (byte-order mark removed) in place, or `None` when it
/// leaves the plain subset [`CsvText`] describes.
fn read_in_place(bytes: &[u8]) -> Option<CsvInner<'_>> {
    let text = std::str::from_utf8(bytes).ok()?;
    if bytes.is_empty() || bytes.len() >= QUOTED as usize {
        return None;
    }
    let mut columns: Option<Vec<String>> = None;
    let mut rows = Vec::new();
    let mut blank_line = false;
    let mut pos = 0;
    while pos < bytes.len() {
        match bytes[pos] {
            b'\n' => {
                blank_line = true;
                pos += 1;
                continue;
            }
            b'\r' if bytes.get(pos + 1) == Some(&b'\n') => {
                blank_line = true;
                pos += 2;
                continue;
            }
            b'\r' => return None,
            _ => {}
        }
        let record = record_at(bytes, pos)?;
        match &columns {
            None => {
                let mut cells = Vec::new();
                let line = &text[pos..record.end];
                if record.quoted {
                    split_quoted(line, &mut cells);
                } else {
                    split_plain(line, &mut cells);
                }
                columns = Some(cells.into_iter().map(Cow::into_owned).collect());
            }
            Some(names) if names.len() != record.fields => return None,
            Some(_) => {
                if rows.is_empty() {
                    // Room for as many rows as long as the first one, and
                    // a tenth more: one allocation for most tables.
                    let guess = (bytes.len() - pos) / (record.next - pos).max(1);
                    rows.reserve(guess + guess / 10 + 1);
                }
                rows.push((
                    pos as u32,
                    record.end as u32 | if record.quoted { QUOTED } else { 0 },
                ));
            }
        }
        pos = record.next;
    }
    let columns = columns?;
    if columns.len() == 1 && blank_line {
        return None;
    }
    Some(CsvInner::InPlace {
        text,
        columns,
        rows,
    })
}

/// One record found by [`record_at`].
struct Record {
    /// Fields in the record.
    fields: usize,
    /// End of its text (line end excluded).
    end: usize,
    /// Where the next record (or blank line) starts.
    next: usize,
    /// It holds a quoted field.
    quoted: bool,
}

/// The record starting at `start` (not at a line end), or `None` when it
/// leaves the plain subset: a quote inside an unquoted field, text after a
/// closing quote, a quote never closed, a carriage return not before a
/// line feed.
fn record_at(bytes: &[u8], start: usize) -> Option<Record> {
    let line_end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
    let (content_end, next) = match line_end {
        n if n < bytes.len() && n > start && bytes[n - 1] == b'\r' => (n - 1, n + 1),
        n if n < bytes.len() => (n, n + 1),
        n if n > start && bytes[n - 1] == b'\r' => (n - 1, n),
        n => (n, n),
    };
    let line = &bytes[start..content_end];
    if memchr::memchr(b'"', line).is_none() {
        if memchr::memchr(b'\r', line).is_some() {
            return None;
        }
        return Some(Record {
            fields: memchr::memchr_iter(b',', line).count() + 1,
            end: content_end,
            next,
            quoted: false,
        });
    }
    quoted_record_at(bytes, start)
}

/// [`record_at`] for a record holding a quote: field by field, a quoted
/// field possibly spanning lines.
fn quoted_record_at(bytes: &[u8], start: usize) -> Option<Record> {
    let mut fields = 1;
    let mut i = start;
    loop {
        if bytes.get(i) == Some(&b'"') {
            i += 1;
            loop {
                i += memchr::memchr(b'"', &bytes[i..])?;
                if bytes.get(i + 1) == Some(&b'"') {
                    i += 2;
                } else {
                    i += 1;
                    break;
                }
            }
        } else {
            let rest = &bytes[i..];
            let at = memchr::memchr3(b',', b'\n', b'"', rest).unwrap_or(rest.len());
            let field = &rest[..at];
            let cr = memchr::memchr(b'\r', field);
            match cr {
                None => i += at,
                // A carriage return only as the first half of a line end.
                Some(c) if c + 1 == at && rest.get(at) == Some(&b'\n') => i += c,
                Some(c) if c + 1 == field.len() && at == rest.len() => i += c,
                Some(_) => return None,
            }
        }
        match bytes.get(i) {
            None => {
                return Some(Record {
                    fields,
                    end: i,
                    next: i,
                    quoted: true,
                });
            }
            Some(b',') => {
                fields += 1;
                i += 1;
            }
            Some(b'\n') => {
                return Some(Record {
                    fields,
                    end: i,
                    next: i + 1,
                    quoted: true,
                });
            }
            Some(b'\r') if bytes.get(i + 1) == Some(&b'\n') => {
                return Some(Record {
                    fields,
                    end: i,
                    next: i + 2,
                    quoted: true,
                });
            }
            Some(b'\r') if i + 1 == bytes.len() => {
                return Some(Record {
                    fields,
                    end: i,
                    next: i + 1,
                    quoted: true,
                });
            }
            Some(_) => return None,
        }
    }
}

/// Splits one record of the plain subset that holds no quote into its
/// fields, appended to `out`: what `line.split(',')` gives, read byte by
/// byte (a comma is one byte in UTF-8, so every boundary is a character
/// boundary), which is several times faster on short records than the
/// character searcher `split` uses (issue 26, section 4).
pub(crate) fn split_plain<'s>(line: &'s str, out: &mut Vec<Cow<'s, str>>) {
    out.extend(plain_fields(line).map(Cow::Borrowed));
}

/// The fields of one record that holds no quote, in order: the same as
/// `line.split(',')`.
pub(crate) fn plain_fields(line: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    // Each end is a comma's own position in `line`, or its length: a
    // character boundary.
    memchr::memchr_iter(b',', line.as_bytes())
        .chain(std::iter::once(line.len()))
        .map(move |end| {
            let field = line.get(start..end).unwrap_or_default();
            start = end + 1;
            field
        })
}

/// Splits one record of the plain subset that holds a quoted field into
/// `out` (cleared first): a quoted field's text without its quotes, a
/// doubled quote read as one.
fn split_quoted<'s>(line: &'s str, out: &mut Vec<Cow<'s, str>>) {
    out.clear();
    let bytes = line.as_bytes();
    let mut i = 0;
    loop {
        if bytes.get(i) == Some(&b'"') {
            let open = i + 1;
            let mut j = open;
            let mut doubled = false;
            while j < bytes.len() {
                match memchr::memchr(b'"', &bytes[j..]) {
                    Some(k) if bytes.get(j + k + 1) == Some(&b'"') => {
                        doubled = true;
                        j += k + 2;
                    }
                    Some(k) => {
                        j += k;
                        break;
                    }
                    None => j = bytes.len(),
                }
            }
            let inner = line.get(open..j).unwrap_or_default();
            out.push(if doubled {
                Cow::Owned(inner.replace("\"\"", "\""))
            } else {
                Cow::Borrowed(inner)
            });
            i = j + 1;
        } else {
            let at = memchr::memchr(b',', &bytes[i..]).map_or(bytes.len(), |k| i + k);
            out.push(Cow::Borrowed(line.get(i..at).unwrap_or_default()));
            i = at;
        }
        if i >= bytes.len() {
            return;
        }
        // At a comma: the next field starts after it (an empty last field
        // when the comma ends the line).
        i += 1;
        if i == bytes.len() {
            out.push(Cow::Borrowed(""));
            return;
        }
    }
}

/// Reads records with the `csv` crate: the first is the header; every
/// other must have as many fields.
fn parse_records(text: &[u8]) -> Result<Table, CsvError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text);
    let mut table = Table::default();
    let mut record = csv::StringRecord::new();
    let mut first = true;
    loop {
        let more = reader.read_record(&mut record).map_err(|e| {
            let line = e.position().map(|p| line_at_byte(text, p.byte()));
            let message = match e.kind() {
                csv::ErrorKind::Utf8 { .. } => "not valid UTF-8".to_string(),
                _ => e.to_string(),
            };
            CsvError { line, message }
        })?;
        if !more {
            break;
        }
        let cells: Vec<String> = record.iter().map(str::to_owned).collect();
        if first {
            table.columns = cells;
            first = false;
            continue;
        }
        if cells.len() != table.columns.len() {
            return Err(CsvError {
                line: record.position().map(|p| line_at_byte(text, p.byte())),
                message: format!(
                    "expected {} field{} (as in the header), found {}",
                    table.columns.len(),
                    crate::format::plural(table.columns.len()),
                    cells.len()
                ),
            });
        }
        table.rows.push(cells);
    }
    Ok(table)
}

/// The 1-based line of byte `offset` of `text`, a line ending at LF, CRLF
/// or a lone CR (the line ends the CSV reader accepts). The `csv` crate's
/// own line count is one short after a CRLF, and counts no CR-only line.
/// Line ends at `offset` itself belong to the line before.
fn line_at_byte(text: &[u8], offset: u64) -> u64 {
    // The reader may place a record after a CR at the LF that follows it;
    // no record starts with a line end (blank lines are skipped), so the
    // record starts after them.
    let mut start = (offset as usize).min(text.len());
    while matches!(text.get(start), Some(b'\r' | b'\n')) {
        start += 1;
    }
    let head = &text[..start];
    let lf = memchr::memchr_iter(b'\n', head).count();
    let lone_cr = memchr::memchr_iter(b'\r', head)
        .filter(|&i| text.get(i + 1) != Some(&b'\n'))
        .count();
    1 + (lf + lone_cr) as u64
}

/// `text` with `""` written into every blank line after the header that is
/// outside a quoted field, or `None` when there is none.
fn fill_blank_lines(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() + 16);
    let mut in_quotes = false;
    let mut line_start = false; // at the start of a line after the header
    let mut changed = false;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if !in_quotes && line_start && (b == b'\n' || b == b'\r') {
            out.extend_from_slice(b"\"\"");
            changed = true;
        }
        line_start = false;
        match b {
            b'"' => in_quotes = !in_quotes,
            b'\n' if !in_quotes => line_start = true,
            b'\r' if !in_quotes => {
                if text.get(i + 1) == Some(&b'\n') {
                    out.push(b);
                    i += 1;
                    out.push(text[i]);
                    i += 1;
                    line_start = true;
                    continue;
                }
                line_start = true;
            }
            _ => {}
        }
        out.push(b);
        i += 1;
    }
    changed.then_some(out)
}

/// The 1-based line of a quoted field that is never closed, if any. A quote
/// only opens a quoted field at the start of a field (RFC 4180); a stray
/// quote inside an unquoted field is left to the lenient reader.
fn unterminated_quote(text: &[u8]) -> Option<u64> {
    let mut line = 1u64;
    let mut at_field_start = true;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if at_field_start && b == b'"' {
            let opened = line;
            i += 1;
            loop {
                match text.get(i) {
                    None => return Some(opened),
                    Some(b'"') if text.get(i + 1) == Some(&b'"') => i += 2,
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(b'\n') => {
                        line += 1;
                        i += 1;
                    }
                    Some(b'\r') if text.get(i + 1) != Some(&b'\n') => {
                        line += 1;
                        i += 1;
                    }
                    Some(_) => i += 1,
                }
            }
            at_field_start = false;
            continue;
        }
        match b {
            b',' => at_field_start = true,
            b'\n' => {
                line += 1;
                at_field_start = true;
            }
            b'\r' => {
                // A lone CR ends a line (a CR-only file); CRLF counts once.
                if text.get(i + 1) != Some(&b'\n') {
                    line += 1;
                }
                at_field_start = true;
            }
            _ => at_field_start = false,
        }
        i += 1;
    }
    None
}

fn write_record(out: &mut String, cells: &[String]) {
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let needs_quotes = cell.contains([',', '"', '\n', '\r'])
            || cell.starts_with([' ', '\t'])
            || cell.ends_with([' ', '\t'])
            // A lone empty cell would be a blank line, which readers skip.
            || (cells.len() == 1 && cell.is_empty());
        if needs_quotes {
            out.push('"');
            out.push_str(&cell.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(cell);
        }
    }
    out.push('\n');
}

#[cfg(feature = "harness")]
/// One RDF term as a CSV cell, by the W3C SPARQL 1.1 CSV results rules:
/// an IRI bare (`http://ex.org/a`), a literal as its lexical form only
/// (`"chat"@fr` → `chat`, `"5.5"^^xsd:decimal` → `5.5`), a blank node as
/// `_:label`. A quoted triple (RDF 1.2) is written `<< s p o >>` with its
/// parts in the same cell form.
pub fn term_to_cell(term: &Term) -> String {
    match term {
        Term::NamedNode(n) => n.as_str().to_owned(),
        Term::BlankNode(b) => format!("_:{}", b.as_str()),
        Term::Literal(l) => l.value().to_owned(),
        #[allow(unreachable_patterns)]
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_record_splits_as_split_on_commas_does() {
        for line in [
            "",
            ",",
            "a",
            "a,b",
            ",a,",
            "a,,b",
            "é,ü,𝄞",
            "x ,  y,\tz",
            ",,,",
        ] {
            let fields: Vec<&str> = plain_fields(line).collect();
            assert_eq!(fields, line.split(',').collect::<Vec<_>>(), "{line:?}");
        }
    }

    fn t(cols: &[&str], rows: &[&[&str]]) -> Table {
        Table {
            columns: cols.iter().map(|s| s.to_string()).collect(),
            rows: rows
                .iter()
                .map(|r| r.iter().map(|s| s.to_string()).collect())
                .collect(),
        }
    }

    #[test]
    fn bom_is_never_part_of_a_name() {
        let table = Table::from_csv("\u{feff}source,target\na,b\n".as_bytes()).unwrap();
        assert_eq!(table, t(&["source", "target"], &[&["a", "b"]]));
    }

    #[test]
    fn crlf_and_quoted_newlines_and_commas() {
        let table = Table::from_csv(b"name,note\r\nA,\"line one\nline two, still\"\r\nB,plain\r\n")
            .unwrap();
        assert_eq!(
            table,
            t(
                &["name", "note"],
                &[&["A", "line one\nline two, still"], &["B", "plain"]]
            )
        );
    }

    #[test]
    fn ragged_row_names_its_line() {
        let err = Table::from_csv(b"name,v\nA,1\nB,2,extra\n").unwrap_err();
        assert_eq!(err.line, Some(3));
        assert_eq!(
            err.to_string(),
            "line 3: expected 2 fields (as in the header), found 3"
        );
        // A quoted newline in an earlier record moves the reported line on.
        let err = Table::from_csv(b"a,b\n\"x\ny\",1\nz\n").unwrap_err();
        assert_eq!(err.line, Some(4));
    }

    /// The line of a bad record is the same whatever the line ends: LF,
    /// CRLF (the `csv` crate's count was one short there) or a lone CR
    /// (where it said line 1 for every record).
    #[test]
    fn a_bad_record_is_named_by_its_line_with_any_line_end() {
        for end in ["\n", "\r\n", "\r"] {
            let text = ["a,b", "1,x", "2,y", "3,z,w", ""].join(end);
            assert_eq!(
                Table::from_csv(text.as_bytes()).unwrap_err().line,
                Some(4),
                "{end:?}"
            );
            let bytes = [
                format!("a,b{end}1,x{end}").as_bytes(),
                b"\xff,y",
                end.as_bytes(),
            ]
            .concat();
            let err = Table::from_csv(&bytes).unwrap_err();
            assert_eq!(
                (err.line, err.message.contains("UTF-8")),
                (Some(3), true),
                "{end:?}"
            );
            let text = ["a,b", "1,x", "\"open,y", ""].join(end);
            assert_eq!(
                Table::from_csv(text.as_bytes()).unwrap_err().line,
                Some(3),
                "{end:?}"
            );
        }
    }

    #[test]
    fn invalid_utf8_is_an_error_with_a_line() {
        let err = Table::from_csv(b"a\n\xff\n").unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(err.message.contains("UTF-8"), "{err}");
    }

    #[test]
    fn writes_rfc4180_with_lf_and_minimal_quotes() {
        let table = t(
            &["a", "b"],
            &[
                &["plain", "with, comma"],
                &["say \"hi\"", "two\nlines"],
                &["", " pad"],
            ],
        );
        let csv = table.to_csv();
        assert_eq!(
            csv,
            "a,b\nplain,\"with, comma\"\n\"say \"\"hi\"\"\",\"two\nlines\"\n,\" pad\"\n"
        );
        assert_eq!(Table::from_csv(csv.as_bytes()).unwrap(), table);
    }

    #[test]
    fn lone_empty_cell_survives_a_round_trip() {
        let table = t(&["alias"], &[&[""], &["x"]]);
        assert_eq!(table.to_csv(), "alias\n\"\"\nx\n");
        assert_eq!(Table::from_csv(table.to_csv().as_bytes()).unwrap(), table);
    }

    /// W3C SPARQL CSV writes an unbound value in a
    /// one-column result as an empty line; it is a row, not a blank line.
    #[test]
    fn blank_lines_in_a_one_column_table_are_unbound_rows() {
        let want = t(&["x"], &[&[""], &["http://a/b"]]);
        assert_eq!(Table::from_csv(b"x\n\nhttp://a/b\n").unwrap(), want);
        assert_eq!(Table::from_csv(b"x\r\n\r\nhttp://a/b\r\n").unwrap(), want);
        assert_eq!(Table::from_csv(b"x\n\"\"\nhttp://a/b\n").unwrap(), want);
        assert_eq!(Table::from_csv(b"x\n\n").unwrap(), t(&["x"], &[&[""]]));
        assert_eq!(
            Table::from_csv(b"x\n1\n\n\n").unwrap(),
            t(&["x"], &[&["1"], &[""], &[""]])
        );
        assert_eq!(Table::from_csv(b"x\n1").unwrap(), t(&["x"], &[&["1"]]));
        // Wider tables keep skipping blank lines.
        assert_eq!(
            Table::from_csv(b"a,b\n\n1,2\n\n").unwrap(),
            t(&["a", "b"], &[&["1", "2"]])
        );
    }

    #[test]
    fn an_unterminated_quote_is_an_error_at_its_line() {
        let err = Table::from_csv(b"a\n1\n\"unterminated\n2\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 3: a quoted field opened here is never closed"
        );
        // A quote inside an unquoted field is not an opening quote.
        assert_eq!(
            Table::from_csv(b"a,b\n5\" tall,x\n").unwrap(),
            t(&["a", "b"], &[&["5\" tall", "x"]])
        );
    }

    /// Text [`CsvText`] reads in place and text it leaves to
    /// [`Table::from_csv`]: either way, the same rows.
    #[test]
    fn csv_text_reads_as_from_csv_reads() {
        for (text, in_place) in [
            (&b"a,b\n1,2\n"[..], true),
            (b"\xEF\xBB\xBFa,b\r\n1,2\r\n\r\n3,\r\n", true),
            (b"a,b\n\"x,\"\"y\"\"\nz\",\"\"\n,\n", true),
            (b"a,b\n\"x\",\"y\"", true),
            (b"a,b\n1,2\r", true),
            (b"x\n\"\"\nv\n", true),
            (b"a,b\n\n\n1,2", true),
            (b"x\n\nv\n", false),
            (b"a,b\n5\" tall,x\n", false),
            (b"a,b\n\"x\"y,1\n", false),
            (b"a,b\n1,2\r3,4\n", false),
            (b"", false),
        ] {
            let read = CsvText::read(text).unwrap();
            assert_eq!(read.in_place(), in_place, "{text:?}");
            assert_eq!(
                read.to_table(),
                Table::from_csv_by_reader(text).unwrap(),
                "{text:?}"
            );
            assert_eq!(
                Table::from_csv(text).unwrap(),
                Table::from_csv_by_reader(text).unwrap()
            );
        }
        for text in [&b"a,b\n1\n"[..], b"a\n\"open\n", b"a\n\xff\n"] {
            assert_eq!(
                CsvText::read(text).err(),
                Table::from_csv_by_reader(text).err(),
                "{text:?}"
            );
            assert_eq!(
                Table::from_csv(text).err(),
                Table::from_csv_by_reader(text).err()
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Any text over the bytes CSV gives meaning to reads the same both
        /// ways: same rows, or the same error.
        #[test]
        fn csv_text_is_from_csv(text in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(b'a'), proptest::strategy::Just(b','),
                proptest::strategy::Just(b'"'), proptest::strategy::Just(b'\n'),
                proptest::strategy::Just(b'\r'), proptest::strategy::Just(b' '),
                proptest::strategy::Just(0xC3), proptest::strategy::Just(0xA9),
            ],
            0..40,
        )) {
            let want = Table::from_csv_by_reader(&text);
            let got = CsvText::read(&text).map(|t| t.to_table());
            proptest::prop_assert_eq!(got, want.clone());
            proptest::prop_assert_eq!(Table::from_csv(&text), want);
        }

        /// Tables as `to_csv` writes them (quotes, commas and line ends
        /// in cells; LF or CRLF between records) read in place, as
        /// `from_csv` reads them.
        #[test]
        fn written_tables_read_in_place(
            width in 1usize..4,
            cells in proptest::collection::vec("[a,\"\n\r é]{0,4}", 0..24),
            crlf in proptest::bool::ANY,
        ) {
            let table = t(
                &(0..width).map(|i| ["a", "b", "c"][i]).collect::<Vec<_>>(),
                &cells.chunks_exact(width)
                    .map(|r| r.iter().map(String::as_str).collect::<Vec<_>>())
                    .collect::<Vec<_>>()
                    .iter().map(Vec::as_slice).collect::<Vec<_>>(),
            );
            let mut text = table.to_csv();
            if crlf {
                text = text.replace('\n', "\r\n");
            }
            let read = CsvText::read(text.as_bytes()).unwrap();
            // A one-column table with an empty cell has a blank line.
            proptest::prop_assert!(read.in_place() || width == 1 || table.rows.is_empty());
            proptest::prop_assert_eq!(read.to_table(), Table::from_csv_by_reader(text.as_bytes()).unwrap());
        }
    }

    #[test]
    fn header_only_and_empty_input() {
        assert_eq!(Table::from_csv(b"x,y\n").unwrap(), t(&["x", "y"], &[]));
        assert_eq!(Table::from_csv(b"").unwrap(), Table::default());
        assert_eq!(Table::default().to_csv(), "");
    }
}
