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

use std::fmt;

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

    /// Reads CSV text (RFC 4180, leniently: LF or CRLF, optional UTF-8 BOM).
    ///
    /// The first record is the header. An empty input is a table with no
    /// columns and no rows. Errors: invalid UTF-8, or a record whose field
    /// count differs from the header's, reported with the 1-based line where
    /// that record starts (quoted newlines counted).
    pub fn from_csv(text: &[u8]) -> Result<Table, CsvError> {
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
            let line = e.position().map(|p| p.line());
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
                line: record.position().map(|p| p.line()),
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
            b'\r' => at_field_start = true,
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

    #[test]
    fn header_only_and_empty_input() {
        assert_eq!(Table::from_csv(b"x,y\n").unwrap(), t(&["x", "y"], &[]));
        assert_eq!(Table::from_csv(b"").unwrap(), Table::default());
        assert_eq!(Table::default().to_csv(), "");
    }
}
