//! Soft errors: a failure hidden in a successful tool reply (README.md,
//! "Servers under test"; `soft_error` in `docs/FORMAT.md`). The proxy
//! records one per call in `calls.json`, and a catalog's `call-succeeds`
//! check fails on one.
//!
//! Only the reply's own words are evidence (issue 24, item 16). What a
//! result holds is data, whatever its columns are called or its cells say:
//!
//! - a JSON reply is judged by its own members ([`soft_error_in_value`]):
//!   an `error` member that holds an error (not `0`, `false`, `null`, `""`,
//!   `"none"`, `"ok"`, ...), else the text under its error-like members;
//!   arrays (rows, records, bindings) and RDF terms are data, and an object
//!   whose status says success (`"status": "ok"`, `200`, `"success": true`)
//!   is no error at all;
//! - a JSON string whose text is a reply (a reply encoded twice) is judged
//!   as that reply; JSON lines (two or more lines that are each a JSON
//!   object or array) are records, as a list is;
//! - a Python literal (`[{'status': 'HTTP 500'}]`, what `str()` of a list
//!   of rows writes) is judged as the JSON it stands for;
//! - a SPARQL XML results document, RDF/XML, Turtle or N-Triples is data;
//! - any other text is judged without its tables: a CSV, TSV or
//!   semicolon-separated table (a header row of column names, then rows of
//!   as many fields; a UTF-8 byte order mark before it, or a line of prose)
//!   and a Markdown table (with or without its outer pipes) are left out,
//!   and what is left is read for what servers say of a failure
//!   (`soft_error_in_text`): an HTTP status only in a phrase that reports
//!   one (`HTTP 500`, `500 Internal Server Error`, `status code 500`,
//!   `returned status 429`; never `500 rows`), a rate limit said to be hit
//!   (not `100 requests left before the rate limit`), a reason phrase said
//!   as a status (`Bad Request`, not `bad request logs`), a Python
//!   traceback, a backend that cannot be reached.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// How many times a reply encoded as a JSON string is decoded and judged
/// again (a reply quoted in a reply, quoted once more).
const MAX_ENCODINGS: usize = 3;

/// A failure hidden in the text of a successful reply, as a short label
/// (`HTTP 429 (rate limited)`, `HTTP 503`, `malformed query`, `error reply:
/// ...`), or `None` (module docs; issue 24, item 16).
pub fn soft_error(text: &str) -> Option<String> {
    soft_error_at(text, 0)
}

/// [`soft_error`] of a text that was a JSON string `layer` times already.
fn soft_error_at(text: &str, layer: usize) -> Option<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Some(value) = json_reply(text) {
        return soft_error_in_value(&value);
    }
    match json_string(text) {
        Some(inner) if layer < MAX_ENCODINGS => soft_error_at(&inner, layer + 1),
        Some(_) => None,
        None => soft_error_in_plain_text(text),
    }
}

/// `text` as JSON when it is a JSON object or array (white space around
/// it allowed); `None` for any other text.
fn json_reply(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    serde_json::from_str::<Value>(trimmed)
        .ok()
        .filter(|v| v.is_object() || v.is_array())
}

/// The text of `text` when it is one JSON string (a reply encoded again).
fn json_string(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if !trimmed.starts_with('"') {
        return None;
    }
    serde_json::from_str::<String>(trimmed).ok()
}

/// [`soft_error`] for a reply that is not JSON: records, RDF documents
/// and tables are data; a Python literal is judged as JSON; what else the
/// text says is judged without its tables ([`prose`]).
fn soft_error_in_plain_text(text: &str) -> Option<String> {
    if is_json_lines(text) || is_rdf_document(text) {
        return None;
    }
    if let Some(value) = python_literal(text) {
        return soft_error_in_value(&value);
    }
    soft_error_in_text(&prose(text))
}

/// Two or more lines that are each a JSON object or array (blank lines
/// aside): JSON lines, one record per line, which are data as the items
/// of a list are.
fn is_json_lines(text: &str) -> bool {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut count = 0;
    let first_is_json = lines
        .clone()
        .next()
        .is_some_and(|l| l.starts_with(['{', '[']));
    if !first_is_json {
        return false;
    }
    for line in &mut lines {
        if json_reply(line).is_none() {
            return false;
        }
        count += 1;
    }
    count >= 2
}

/// A document of results or triples: SPARQL XML results (a `<sparql>`
/// root) or RDF/XML (`<rdf:RDF>`), after an XML declaration and comments;
/// or Turtle, TriG, N-Triples or N-Quads ([`is_turtle`]).
fn is_rdf_document(text: &str) -> bool {
    let mut rest = text.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix("<?") {
            rest = after.split_once("?>").map_or("", |(_, r)| r).trim_start();
        } else if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.split_once("-->").map_or("", |(_, r)| r).trim_start();
        } else {
            break;
        }
    }
    let root = |name: &str| {
        rest.strip_prefix('<')
            .and_then(|r| r.strip_prefix(name))
            .is_some_and(|r| r.starts_with(|c: char| c.is_whitespace() || c == '>' || c == '/'))
    };
    root("sparql") || root("rdf:RDF") || is_turtle(text)
}

/// Turtle, TriG, N-Triples or N-Quads: every line that starts a statement
/// starts with a directive (`@prefix`, `@base`, `PREFIX`, `BASE`), an IRI
/// (`<...>`), a blank node (`_:`) or a prefixed name whose prefix a
/// directive declared (one of these at least), a blank node's `[`, a
/// collection or a graph's braces; continuation
/// lines are indented; comments are `#` lines; and the last line ends the
/// last statement (`.` or `}`). A message that quotes a query
/// (`PREFIX ...` then `Error: ...`) is none: `Error:` was never declared.
fn is_turtle(text: &str) -> bool {
    let mut prefixes: Vec<String> = Vec::new();
    let mut last = "";
    let mut statements = 0usize;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        last = trimmed;
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let lower = trimmed.to_ascii_lowercase();
        if lower.starts_with("@prefix") || lower.starts_with("prefix ") {
            let name = trimmed
                .split_whitespace()
                .nth(1)
                .and_then(|w| w.strip_suffix(':'))
                .unwrap_or("");
            prefixes.push(name.to_string());
            continue;
        }
        if lower.starts_with("@base") || lower.starts_with("base ") {
            continue;
        }
        let declared = trimmed
            .split_once(':')
            .is_some_and(|(p, _)| prefixes.iter().any(|d| d == p) && !p.contains(' '));
        // An IRI has a scheme and no white space (`<urlopen error ...>` and
        // `<html>` are none).
        let iri = trimmed
            .strip_prefix('<')
            .and_then(|r| r.split_once('>'))
            .is_some_and(|(inner, _)| inner.contains(':') && !inner.contains(char::is_whitespace));
        if iri || trimmed.starts_with("_:") || declared {
            statements += 1;
        } else if !trimmed.starts_with(['[', '(', '{', '}']) {
            return false;
        }
    }
    statements > 0 && (last.ends_with('.') || last.ends_with('}'))
}

/// `text` as the JSON value a Python literal of lists, tuples and dicts
/// stands for (`str()` of rows: `[{'status': 'HTTP 500'}]`, `None`, `True`,
/// `False`, strings in apostrophes, tuples, trailing commas); `None` when it
/// is not one.
fn python_literal(text: &str) -> Option<Value> {
    let text = text.trim();
    let closed = |open: char, close: char| text.starts_with(open) && text.ends_with(close);
    if !(closed('[', ']') || closed('{', '}') || closed('(', ')')) {
        return None;
    }
    let mut json = String::with_capacity(text.len() + 16);
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '\'' | '"' => {
                let mut value = String::new();
                loop {
                    let (_, d) = chars.next()?;
                    match d {
                        _ if d == c => break,
                        '\\' => {
                            let (_, e) = chars.next()?;
                            match e {
                                'n' => value.push('\n'),
                                't' => value.push('\t'),
                                'r' => value.push('\r'),
                                '0' => value.push('\0'),
                                '\\' | '\'' | '"' => value.push(e),
                                'x' | 'u' | 'U' => {
                                    let width = match e {
                                        'x' => 2,
                                        'u' => 4,
                                        _ => 8,
                                    };
                                    let hex: String = (0..width)
                                        .filter_map(|_| chars.next().map(|p| p.1))
                                        .collect();
                                    let code = u32::from_str_radix(&hex, 16).ok()?;
                                    value.push(char::from_u32(code)?);
                                }
                                other => {
                                    value.push('\\');
                                    value.push(other);
                                }
                            }
                        }
                        _ => value.push(d),
                    }
                }
                json.push_str(&serde_json::to_string(&value).ok()?);
            }
            '(' => json.push('['),
            ')' | ']' | '}' => {
                // A trailing comma, which Python allows and JSON does not.
                let kept = json.trim_end().len();
                if json[..kept].ends_with(',') {
                    json.truncate(kept - 1);
                }
                json.push(if c == '}' { '}' } else { ']' });
            }
            '[' | '{' | ':' | ',' => json.push(c),
            _ if c.is_whitespace() => json.push(' '),
            _ if c.is_ascii_digit() || matches!(c, '-' | '+' | '.') => {
                let mut end = at + c.len_utf8();
                while let Some(&(i, d)) = chars.peek() {
                    if d.is_ascii_alphanumeric() || matches!(d, '.' | '+' | '-') {
                        end = i + d.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                json.push_str(text[at..end].trim_start_matches('+'));
            }
            _ if c.is_alphabetic() || c == '_' => {
                let mut end = at + c.len_utf8();
                while let Some(&(i, d)) = chars.peek() {
                    if d.is_alphanumeric() || d == '_' {
                        end = i + d.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                json.push_str(match &text[at..end] {
                    "None" => "null",
                    "True" => "true",
                    "False" => "false",
                    _ => return None,
                });
            }
            _ => return None,
        }
    }
    serde_json::from_str::<Value>(&json)
        .ok()
        .filter(|v| v.is_object() || v.is_array())
}

/// `text` without its tables: the lines of a Markdown table (`| a | b |`,
/// or a GFM table without outer pipes: a header row, a delimiter row of
/// dashes, then rows with pipes) and of a CSV, TSV or semicolon-separated
/// table ([`csv_table_at`]) are left out; the rest is what the reply
/// says in words.
fn prose(text: &str) -> Cow<'_, str> {
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        lines.push((at, line.trim_end_matches(['\n', '\r'])));
        at += line.len();
    }
    let mut keep = vec![true; lines.len()];
    for (i, (_, line)) in lines.iter().enumerate() {
        let trimmed = line.trim();
        if trimmed.len() > 1 && trimmed.starts_with('|') && trimmed.ends_with('|') {
            keep[i] = false;
        }
        if i > 0 && is_delimiter_row(trimmed) && lines[i - 1].1.contains('|') {
            keep[i - 1] = false;
            keep[i] = false;
            for (j, (_, row)) in lines.iter().enumerate().skip(i + 1) {
                if row.trim().is_empty() || !row.contains('|') {
                    break;
                }
                keep[j] = false;
            }
        }
    }
    let mut i = 0;
    while i < lines.len() {
        let after_a_break = i == 0 || {
            let before = lines[i - 1].1.trim_end();
            before.is_empty() || before.ends_with(':')
        };
        match keep[i]
            .then(|| csv_table_at(text, &lines, i, after_a_break))
            .flatten()
        {
            Some(end) => {
                keep[i..end].iter_mut().for_each(|k| *k = false);
                i = end;
            }
            None => i += 1,
        }
    }
    if keep.iter().all(|k| *k) {
        return Cow::Borrowed(text);
    }
    let words: Vec<&str> = lines
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|((_, l), _)| *l)
        .collect();
    Cow::Owned(words.join("\n"))
}

/// A GFM table's delimiter row: cells of dashes (`---`, `:--`, `--:`)
/// between pipes, at least one pipe (a line of dashes alone is a rule).
fn is_delimiter_row(line: &str) -> bool {
    if !line.contains('|') || !line.contains('-') {
        return false;
    }
    let inner = line.trim_matches('|');
    inner.split('|').all(|cell| {
        let cell = cell.trim().trim_start_matches(':').trim_end_matches(':');
        !cell.is_empty() && cell.chars().all(|c| c == '-')
    })
}

/// A column name of a CSV header: a letter or `_` first, then letters,
/// digits, `_`, `-` or `.`, and spaces too when `spaced` (two columns or
/// more); a SPARQL variable's `?` or `$` before it allowed, as the W3C
/// TSV results write it.
fn column_name(field: &str, spaced: bool) -> bool {
    let name = field.strip_prefix(['?', '$']).unwrap_or(field);
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.') || (spaced && c == ' '))
}

/// The end (a line index, exclusive) of a result table as CSV, TSV or
/// semicolon-separated text starting at line `i` of `text` (`lines`: each
/// line's byte offset and text): a header row whose fields are all column
/// names ([`column_name`]), then at least one row with as many fields, up
/// to a row with another count or a blank line. One column is a table only
/// at the start of the text or after a blank line or a line ending in `:`
/// (`after_a_break`): elsewhere a word on a line of its own is prose. A
/// message such as "HTTP Error 503: Service Unavailable" or "Query failed"
/// over one more line has no such header row.
fn csv_table_at(
    text: &str,
    lines: &[(usize, &str)],
    i: usize,
    after_a_break: bool,
) -> Option<usize> {
    let header = lines[i].1;
    let delimiter = if header.contains('\t') {
        b'\t'
    } else if header.contains(';') && !header.contains(',') {
        b';'
    } else {
        b','
    };
    // A cheap look at the raw line before the text is parsed.
    let spaced = header.contains(delimiter as char);
    if !(spaced || after_a_break)
        || !header
            .split(delimiter as char)
            .all(|f| column_name(f.trim_matches('"'), spaced))
    {
        return None;
    }
    let start = lines[i].0;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .from_reader(&text.as_bytes()[start..]);
    let mut records = reader.records();
    let Some(Ok(names)) = records.next() else {
        return None;
    };
    if !names.iter().all(|f| column_name(f, names.len() > 1)) {
        return None;
    }
    let mut end = names.position().map_or(0, |p| p.byte()) as usize;
    end += text[start + end..]
        .find('\n')
        .map_or(text.len() - start - end, |n| n + 1);
    let mut rows = 0usize;
    for record in records {
        let Ok(record) = record else { break };
        let Some(position) = record.position() else {
            break;
        };
        // The csv crate may place a record's start on the line end before
        // it; its first field starts at the first byte after line ends.
        let from = position.byte() as usize;
        let record_start = from
            + text[start + from..]
                .find(|c: char| c != '\r' && c != '\n')
                .unwrap_or(text.len() - start - from);
        // A blank line ends the table: what follows is the reply's words.
        if text[start + end.min(record_start)..start + record_start].contains('\n') {
            break;
        }
        if record.len() != names.len() {
            break;
        }
        rows += 1;
        end = reader_end(text, start, record_start, &record);
    }
    (rows > 0).then(|| lines.partition_point(|(at, _)| *at < start + end))
}

/// The byte offset (from `start`) just past the row `record` of the table
/// at `start`, which begins at `record_start`: past the line end of its
/// last line (a quoted field may hold line ends).
fn reader_end(text: &str, start: usize, record_start: usize, record: &csv::StringRecord) -> usize {
    let newlines = record
        .iter()
        .map(|f| f.matches('\n').count())
        .sum::<usize>();
    let mut end = record_start;
    for _ in 0..=newlines {
        match text[start + end..].find('\n') {
            Some(n) => end += n + 1,
            None => return text.len() - start,
        }
    }
    end
}

/// What an error member or a status holds when it says there is no error:
/// compared with the member's text trimmed and lower-cased.
const NO_ERROR: [&str; 16] = [
    "",
    "none",
    "null",
    "nil",
    "no",
    "false",
    "0",
    "ok",
    "okay",
    "success",
    "successful",
    "n/a",
    "na",
    "no error",
    "no errors",
    "undefined",
];

/// Whether `value`, held by an `error` or `errors` member, says there is
/// no error: `null`, `false`, `0`, an empty or "none"-like string
/// ([`NO_ERROR`]), or an array or object of nothing else (`[]`, `{}`,
/// `{"code": 0, "message": ""}`).
fn says_no_error(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::Bool(true) => false,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => NO_ERROR.contains(&s.trim().to_lowercase().as_str()),
        Value::Array(items) => items.iter().all(says_no_error),
        Value::Object(map) => map.values().all(says_no_error),
    }
}

/// `key` folded for comparing member names: lower case, without `_`, `-`
/// and spaces (`status_code`, `statusCode` and `Status-Code` are one).
fn folded(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Members that give a reply's status (`status`, `state`, `outcome`,
/// `statusCode`, `httpStatus`), folded ([`folded`]).
const STATUS_KEYS: [&str; 6] = [
    "status",
    "state",
    "outcome",
    "statuscode",
    "httpstatus",
    "httpstatuscode",
];

/// Whether the object `map` says it succeeded: a status member
/// ([`STATUS_KEYS`]) of `ok`, `success`, `succeeded`, `completed`, `done`
/// or an HTTP status of 200 to 299, or `success`/`ok`/`succeeded` true.
/// Such an object is no error report, whatever its message says (`{"status":
/// "success", "message": "Query returned 500 rows"}`).
fn says_success(map: &Map<String, Value>) -> bool {
    map.iter().any(|(key, value)| {
        let key = folded(key);
        if STATUS_KEYS.contains(&key.as_str()) {
            match value {
                Value::String(s) => {
                    let s = s.trim().to_lowercase();
                    [
                        "ok",
                        "okay",
                        "success",
                        "successful",
                        "succeeded",
                        "complete",
                        "completed",
                        "done",
                        "finished",
                    ]
                    .contains(&s.as_str())
                        || s.parse::<u16>().is_ok_and(|c| (200..300).contains(&c))
                }
                Value::Number(n) => n.as_u64().is_some_and(|c| (200..300).contains(&c)),
                _ => false,
            }
        } else if ["success", "ok", "succeeded"].contains(&key.as_str()) {
            value == &Value::Bool(true) || value.as_str().is_some_and(|s| s.trim() == "true")
        } else {
            false
        }
    })
}

/// An HTTP status of 400 or more given by a status member of `map`
/// ([`STATUS_KEYS`]) as a number or a string of digits (`{"status": 503}`).
fn failing_status(map: &Map<String, Value>) -> Option<String> {
    map.iter()
        .filter(|(key, _)| STATUS_KEYS.contains(&folded(key).as_str()))
        .find_map(|(_, value)| {
            let code = match value {
                Value::Number(n) => n.as_u64(),
                Value::String(s) => s.trim().parse::<u64>().ok(),
                _ => None,
            }?;
            (400..600).contains(&code).then(|| {
                if code == 429 {
                    "HTTP 429 (rate limited)".to_string()
                } else {
                    format!("HTTP {code}")
                }
            })
        })
}

/// A JSON reply that is an error report by its shape: a top-level object
/// with an `error` or `errors` member that holds an error ([`says_no_error`]
/// says which do not; observed: mcp-server-sparql answers a malformed
/// query and an endpoint's 404 with `isError: false` and `{"error":
/// "..."}`; GraphQL-style servers use `errors`). Its label is what
/// [`soft_error_in_text`] finds in that member, else `error reply` with
/// the member's first line. A result whose cells merely hold the word
/// "error" has no such member and is not one.
fn error_member(map: &Map<String, Value>) -> Option<String> {
    let member = map
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("error") || k.eq_ignore_ascii_case("errors"))
        .map(|(_, v)| v)?;
    if says_no_error(member) {
        return None;
    }
    let text = match member {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Some(soft_error_in_text(&text).unwrap_or_else(|| {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let clipped: String = first.trim().chars().take(120).collect();
        format!("error reply: {clipped}")
    }))
}

/// [`soft_error`] for a JSON value (a reply's structured content, or its
/// text as JSON): nothing when its status says it succeeded
/// (`says_success`); else an error report by its shape at the top level
/// (`error_member`), a failing HTTP status member (`failing_status`),
/// or the text under the reply's own error-like members
/// (`own_soft_error`). A JSON array at the top is a list of items (a
/// result's rows) and is data.
pub fn soft_error_in_value(value: &Value) -> Option<String> {
    match value {
        Value::Object(map) if says_success(map) => None,
        Value::Object(map) => error_member(map)
            .or_else(|| failing_status(map))
            .or_else(|| own_soft_error(map)),
        _ => None,
    }
}

/// Keys whose text is the reply speaking about itself: `error`,
/// `message`, `detail`, `status`, `warning`, `exception`, `reason`,
/// `fault`, in any case and inside longer keys (`errorMessage`,
/// `status_text`, `warnings`).
fn error_like(key: &str) -> bool {
    let key = key.to_lowercase();
    [
        "error",
        "message",
        "detail",
        "status",
        "warning",
        "exception",
        "reason",
        "fault",
    ]
    .iter()
    .any(|k| key.contains(k))
}

/// The reply's own members of `map`, searched for a failure (issue 24,
/// item 16): the text under an error-like key ([`error_like`]) is judged,
/// but for an error member that says there is none ([`says_no_error`]); a
/// member that is an object is the reply's too and is searched the same
/// way, unless it says it succeeded ([`says_success`]); a member that is an
/// array is data (the rows of a result table: SPARQL JSON
/// `results.bindings`, `{"columns", "rows"}`, mcp-proto-okn's `{"columns",
/// "data", "count"}`, a list of records), and so is an RDF term (`{"type":
/// "literal", "value": ...}`), whatever key holds it.
fn own_soft_error(map: &Map<String, Value>) -> Option<String> {
    for (key, v) in map {
        if is_rdf_term(v) || (v.is_array() && !error_like(key)) {
            continue;
        }
        if error_like(key) {
            if folded(key).starts_with("error") && says_no_error(v) {
                continue;
            }
            let mut text = String::new();
            own_text(v, &mut text);
            if let Some(found) = soft_error_in_text(&text) {
                return Some(found);
            }
        } else if let Value::Object(inner) = v
            && !says_success(inner)
            && let Some(found) = own_soft_error(inner)
        {
            return Some(found);
        }
    }
    None
}

/// A SPARQL 1.1 JSON results term: an object with a `value` and a `type`
/// of `uri`, `literal`, `typed-literal`, `bnode` or `triple`.
fn is_rdf_term(value: &Value) -> bool {
    value.get("value").is_some()
        && value
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| matches!(t, "uri" | "literal" | "typed-literal" | "bnode" | "triple"))
}

/// The text under an error-like member, one string per line, tables
/// ([`is_table_value`]) and RDF terms left out: `{"warnings": ["rate limit
/// reached"]}` is the reply speaking, `{"status": {"rows": [...]}}` holds
/// data.
fn own_text(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        _ if is_rdf_term(value) || is_table_value(value) => {}
        Value::Array(items) => items.iter().for_each(|v| own_text(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                if !v.is_array() || error_like(key) {
                    own_text(v, out);
                }
            }
        }
        other => {
            out.push_str(&other.to_string());
            out.push('\n');
        }
    }
}

/// A result table as JSON: SPARQL 1.1 JSON results (`head` and `results`
/// or `boolean`), or an object with `columns` (or `vars`) beside `rows`,
/// `data`, `values` or `bindings`.
fn is_table_value(value: &Value) -> bool {
    let Value::Object(map) = value else {
        return false;
    };
    let sparql = map.get("head").is_some_and(Value::is_object)
        && (map.contains_key("results") || map.contains_key("boolean"));
    let columns = ["columns", "vars"].iter().any(|k| map.contains_key(*k))
        && ["rows", "data", "values", "bindings"]
            .iter()
            .any(|k| map.contains_key(*k));
    sparql || columns
}

/// [`soft_error`] for a whole reply: its text blocks and its structured
/// content (`structuredContent`). A text block that renders the
/// structured content (the same JSON, or one item of the list a FastMCP
/// server wraps as `{"result": [...]}`) is judged once, as the structured
/// content; two or more text blocks that are all JSON are the items of a
/// list (FastMCP sends a returned list one item per block) and are data.
pub fn soft_error_in_reply(texts: &[&str], structured: Option<&Value>) -> Option<String> {
    let parsed: Vec<Option<Value>> = texts
        .iter()
        .map(|t| json_reply(t.strip_prefix('\u{feff}').unwrap_or(t)))
        .collect();
    let list = texts.len() > 1 && parsed.iter().all(Option::is_some);
    let wrapped = structured.and_then(|s| s.get("result"));
    let renders = |v: &Value| {
        structured == Some(v)
            || wrapped == Some(v)
            || wrapped
                .and_then(Value::as_array)
                .is_some_and(|items| items.contains(v))
    };
    let in_texts = if list {
        None
    } else {
        texts
            .iter()
            .zip(&parsed)
            .find_map(|(text, value)| match value {
                Some(v) if renders(v) => None,
                Some(v) => soft_error_in_value(v),
                None => soft_error(text),
            })
    };
    in_texts.or_else(|| structured.and_then(soft_error_in_value))
}

/// What a server says of a failure, found in `text` (the reply's own words,
/// its tables left out): an HTTP status reported as one ([`status_code`]),
/// "too many requests" or a rate limit said to be hit
/// ([`rate_limit_hit`]), a reason phrase said as a status
/// ([`said_as_status`]), a malformed query, a Python traceback, or the
/// server failing to reach its own backend.
fn soft_error_in_text(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let code = status_code(&lower);
    if code == Some(429) || said_as_status(&lower, "too many requests") {
        return Some("HTTP 429 (rate limited)".into());
    }
    if rate_limit_hit(&lower) {
        return Some("rate limit".into());
    }
    if let Some(code) = code {
        return Some(format!("HTTP {code}"));
    }
    // What SPARQL clients say of a request the endpoint refused (observed:
    // SPARQLWrapper's QueryBadFormed, behind mcp-server-sparql).
    if lower.contains("querybadformed") || lower.contains("badly formed") {
        return Some("malformed query".into());
    }
    if said_as_status(&lower, "bad request") {
        return Some("HTTP 400 (bad request)".into());
    }
    if said_as_status(&lower, "endpoint not found") {
        return Some("HTTP 404 (endpoint not found)".into());
    }
    for phrase in [
        "internal server error",
        "bad gateway",
        "service unavailable",
        "gateway timeout",
    ] {
        if said_as_status(&lower, phrase) {
            return Some(format!("HTTP 5xx ({phrase})"));
        }
    }
    if lower.contains("endpointinternalerror") {
        return Some("HTTP 5xx (endpointinternalerror)".into());
    }
    if lower.contains("traceback (most recent call last)") {
        return Some("Python traceback".into());
    }
    // The server could not reach its own backend (observed: mcp-proto-okn
    // answers isError=false with "Query execution failed: <urlopen error
    // [Errno 111] Connection refused>").
    for phrase in [
        "connection refused",
        "connection reset",
        "urlopen error",
        "failed to establish a new connection",
        "max retries exceeded",
        "temporary failure in name resolution",
        "name or service not known",
        "network is unreachable",
        "remote end closed connection",
        "endpointnotfound",
        "timed out",
    ] {
        if lower.contains(phrase) {
            return Some(format!("backend unreachable ({phrase})"));
        }
    }
    None
}

/// Whether `lower` holds `word` starting at byte `at` as a word of its
/// own: no letter or digit just before it.
fn starts_word(lower: &str, at: usize) -> bool {
    at == 0
        || !lower[..at]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
}

/// The word (letters only) at the start of `rest` after spaces, empty
/// when something else comes first (punctuation, a digit, the end).
fn next_word(rest: &str) -> &str {
    let rest = rest.trim_start_matches([' ', '\t']);
    let end = rest
        .find(|c: char| !c.is_alphabetic())
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Words that may follow a reason phrase or a status code said as a
/// status (`Service Unavailable for 5 minutes`, `returned 504 from the
/// endpoint`); any other word makes the phrase a noun's modifier (`bad
/// request logs`, `500 rows`).
const AFTER_A_STATUS: [&str; 40] = [
    "error",
    "errors",
    "exception",
    "response",
    "reply",
    "status",
    "code",
    "from",
    "for",
    "when",
    "while",
    "at",
    "on",
    "in",
    "to",
    "was",
    "is",
    "has",
    "had",
    "after",
    "returned",
    "received",
    "and",
    "or",
    "but",
    "please",
    "try",
    "retry",
    "occurred",
    "happened",
    "the",
    "with",
    "by",
    "because",
    "due",
    "server",
    "upstream",
    "http",
    "internal",
    "not",
];

/// Whether `phrase` (lower case) is said in `lower` as a status: at the
/// start of a word, whole, and followed by punctuation, the end, or a word
/// a status is followed by ([`AFTER_A_STATUS`]); `Bad Request: the query`
/// and `503 Service Unavailable` are, `Count of bad request logs` is not.
fn said_as_status(lower: &str, phrase: &str) -> bool {
    lower.match_indices(phrase).any(|(at, _)| {
        let rest = &lower[at + phrase.len()..];
        starts_word(lower, at) && !rest.starts_with(char::is_alphanumeric) && {
            let word = next_word(rest);
            word.is_empty() || AFTER_A_STATUS.contains(&word)
        }
    })
}

/// Whether `lower` says a rate limit was hit: `rate limited`, or `rate
/// limit` (also `rate-limit`, `ratelimit`; not `rate-limiting`) with a word
/// of being hit in the same sentence (`exceeded`, `reached`, `hit`,
/// `retry`, `too many`, `throttled`, ...). `You have 100 requests left
/// before the rate limit` and `rate limit: 100/min` are not.
fn rate_limit_hit(lower: &str) -> bool {
    for form in ["rate limit", "rate-limit", "ratelimit"] {
        for (at, _) in lower.match_indices(form) {
            let rest = &lower[at + form.len()..];
            if !starts_word(lower, at) {
                continue;
            }
            if rest.starts_with("ed") && !rest[2..].starts_with(char::is_alphabetic) {
                return true;
            }
            if rest.starts_with(char::is_alphabetic) {
                continue;
            }
            let boundary = |c: char| matches!(c, '.' | '!' | '?' | ';' | '\n');
            let from = lower[..at].rfind(boundary).map_or(0, |i| i + 1);
            let to = rest
                .find(boundary)
                .map_or(lower.len(), |i| at + form.len() + i);
            if says_hit(&lower[from..to]) {
                return true;
            }
        }
    }
    false
}

/// Whether a sentence says a limit was hit ([`rate_limit_hit`]).
fn says_hit(sentence: &str) -> bool {
    let words: Vec<&str> = sentence
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .collect();
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1).copied().unwrap_or("");
        w.starts_with("exceed")
            || w.starts_with("throttl")
            || w.starts_with("exhaust")
            || w.starts_with("breach")
            || w.starts_with("violat")
            || w.starts_with("retry")
            || ["reached", "hit", "blocked", "wait"].contains(w)
            || (*w == "too" && next == "many")
            || (*w == "try" && next == "again")
            || (*w == "over" && next == "the")
    })
}

/// The standard reason phrases of HTTP statuses from 400 on, as servers
/// write them after the code (`404 Not Found`).
const REASONS: [(u16, &str); 16] = [
    (400, "bad request"),
    (401, "unauthorized"),
    (403, "forbidden"),
    (404, "not found"),
    (405, "method not allowed"),
    (406, "not acceptable"),
    (408, "request timeout"),
    (409, "conflict"),
    (413, "payload too large"),
    (414, "uri too long"),
    (415, "unsupported media type"),
    (429, "too many requests"),
    (500, "internal server error"),
    (502, "bad gateway"),
    (503, "service unavailable"),
    (504, "gateway timeout"),
];

/// An HTTP status of 400 or more that the text reports, the lowest if
/// several: a code after `http error`, `http status`, `http/1.1`, `status
/// code`, `error code` or `http` (`HTTP Error 429`, `status code 500.`),
/// after `status` or `returned` when nothing but punctuation, a reason
/// phrase or a word a status is followed by comes next (`returned status
/// 429`, `Endpoint returned 504`, but not `returned 500 rows`), or before
/// its own reason phrase (`500 Internal Server Error`). A code inside a
/// path (`/status/500`) or a count (`Found 429 results`) is none.
fn status_code(lower: &str) -> Option<u16> {
    const STRONG: [&str; 9] = [
        "http error",
        "http status code",
        "http status",
        "http/1.1",
        "http/1.0",
        "http/2",
        "status code",
        "error code",
        "http",
    ];
    const WEAK: [&str; 3] = ["status:", "status", "returned"];
    let mut found: Option<u16> = None;
    let mut keep = |code: u16| found = Some(found.map_or(code, |c| c.min(code)));
    for (prefixes, strong) in [(&STRONG[..], true), (&WEAK[..], false)] {
        for prefix in prefixes {
            for (at, _) in lower.match_indices(prefix) {
                if !starts_word(lower, at) {
                    continue;
                }
                let after = &lower[at + prefix.len()..];
                if !prefix.ends_with(':') && !after.starts_with([' ', ':']) {
                    continue;
                }
                let number = after.trim_start_matches([' ', ':']);
                let digits = number.len()
                    - number
                        .trim_start_matches(|c: char| c.is_ascii_digit())
                        .len();
                let Ok(code) = number[..digits].parse::<u16>() else {
                    continue;
                };
                if digits != 3 || !(400..600).contains(&code) {
                    continue;
                }
                if strong || said_as_code(code, &number[digits..]) {
                    keep(code);
                }
            }
        }
    }
    // A code before its own reason phrase.
    for (code, reason) in REASONS {
        let text = format!("{code} {reason}");
        if said_as_status(lower, &text) {
            keep(code);
        }
    }
    found
}

/// Whether what follows a status code (`rest`) leaves it a status:
/// punctuation or the end, its reason phrase, or a word a status is
/// followed by ([`AFTER_A_STATUS`]); a noun (`rows`, `results`, `ms`)
/// makes it a count.
fn said_as_code(code: u16, rest: &str) -> bool {
    if rest.starts_with(|c: char| c.is_alphanumeric()) {
        return false;
    }
    let word = next_word(rest);
    let trimmed = rest.trim_start_matches([' ', '\t']);
    word.is_empty()
        || AFTER_A_STATUS.contains(&word)
        || REASONS
            .iter()
            .any(|(c, reason)| *c == code && trimmed.starts_with(reason))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn soft_errors_in_successful_replies() {
        for (text, want) in [
            (
                "{\"error\": \"HTTP Error 429: Too Many Requests\", \"descendant_count\": 0}",
                "HTTP 429 (rate limited)",
            ),
            ("upstream said: status code: 429", "HTTP 429 (rate limited)"),
            ("You have hit the rate limit, retry later", "rate limit"),
            ("{\"message\": \"rate limited by upstream\"}", "rate limit"),
            ("HTTP Error 503: Service Unavailable", "HTTP 503"),
            ("received HTTP/1.1 502 from the endpoint", "HTTP 502"),
            ("502 Bad Gateway", "HTTP 502"),
            (
                "Traceback (most recent call last):\n  File \"x.py\"",
                "Python traceback",
            ),
            (
                "{\"error\": \"Query execution failed: <urlopen error [Errno 111] Connection refused>\"}",
                "backend unreachable (connection refused)",
            ),
            // mcp-proto-okn's real failure messages.
            (
                "{\"error\": \"Query execution failed: EndPointInternalError: The endpoint returned the HTTP status code 500.\"}",
                "HTTP 500",
            ),
            (
                "The read operation timed out",
                "backend unreachable (timed out)",
            ),
            (
                "[Errno 101] Network is unreachable",
                "backend unreachable (network is unreachable)",
            ),
            (
                "EndPointNotFound: it does not exist",
                "backend unreachable (endpointnotfound)",
            ),
            ("HTTP Error 403: Forbidden", "HTTP 403"),
            ("Endpoint returned 504", "HTTP 504"),
            (
                "Remote end closed connection without response",
                "backend unreachable (remote end closed connection)",
            ),
        ] {
            assert_eq!(soft_error(text).as_deref(), Some(want), "{text}");
        }
    }

    #[test]
    fn an_error_member_at_the_top_is_a_soft_error_and_one_below_is_data() {
        for (text, want) in [
            // mcp-server-sparql's real replies.
            (
                "{\"error\": \"SPARQL endpoint not found: http://127.0.0.1:1/x\"}",
                "HTTP 404 (endpoint not found)",
            ),
            (
                "{\"error\": \"Query error: QueryBadFormed: A bad request has been sent to the endpoint: probably the SPARQL query is badly formed. \\n\\nResponse:\\nb'Parser error'\"}",
                "malformed query",
            ),
            (
                "{\"errors\": [{\"message\": \"Cannot query field\"}], \"data\": null}",
                "error reply: [{\"message\":\"Cannot query field\"}]",
            ),
            ("{\"Error\": true}", "error reply: true"),
        ] {
            assert_eq!(soft_error(text).as_deref(), Some(want), "{text}");
        }
        for text in [
            "{\"error\": null, \"rows\": [[1]]}",
            "{\"error\": \"\", \"rows\": []}",
            "{\"errors\": [], \"data\": {\"x\": 1}}",
            "{\"error\": false}",
            // A SPARQL result whose variable is named error, with a cell
            // that says error.
            "{\"head\": {\"vars\": [\"error\"]}, \"results\": {\"bindings\": [{\"error\": {\"type\": \"literal\", \"value\": \"error\"}}]}}",
            "{\"rows\": [{\"error\": \"E-101\"}]}",
        ] {
            assert_eq!(soft_error(text), None, "{text}");
        }
    }

    #[test]
    fn ordinary_results_are_not_soft_errors() {
        for text in [
            "{\"columns\": [\"s\"], \"rows\": [[\"http://ex.org/500\"]]}",
            "population 5023, area 429.5 km2",
            "status: ok, 503 rows",
            "",
            // Data that mentions failure words.
            "{\"label\": \"rate-limiting enzyme\", \"results\": [{\"uri\": \"http://x/1\", \"label\": \"rate-limiting enzyme\"}]}",
            "{\"rows\": [[{\"type\": \"uri\", \"value\": \"http://example.org/status/500\"}], [{\"value\": \"HTTP 500 internal server error\"}]]}",
            "s\nhttp://example.org/status/500\n",
            "the rate-limiting step of glycolysis",
        ] {
            assert_eq!(soft_error(text), None, "{text}");
        }
    }

    /// The cells that read as failures when their column is named like
    /// an error member.
    const FAILURE_WORDS: [(&str, &str); 6] = [
        ("status", "Service Unavailable"),
        ("message", "rate limit exceeded"),
        ("reason", "HTTP Error 503"),
        ("warning", "Traceback (most recent call last):"),
        ("error", "connection refused"),
        ("errorMessage", "Too Many Requests"),
    ];

    /// Issue 24, item 16: a correct result table whose columns are named
    /// `status`, `message`, `reason`, `warning` or `error`, and whose cells
    /// hold failure words, is data in every table shape: SPARQL 1.1 JSON
    /// results, `{columns, rows}` (rows as lists or as records),
    /// mcp-proto-okn's `{columns, data, count}`, a list of records, CSV and
    /// TSV text, a Markdown table; and the same words said by the reply
    /// itself still are a soft error.
    #[test]
    fn values_in_a_result_table_are_data_whatever_their_column_is_called() {
        let vars: Vec<&str> = FAILURE_WORDS.iter().map(|(v, _)| *v).collect();
        let cells: Vec<&str> = FAILURE_WORDS.iter().map(|(_, c)| *c).collect();
        let binding: serde_json::Map<String, Value> = FAILURE_WORDS
            .iter()
            .map(|(v, c)| (v.to_string(), json!({"type": "literal", "value": c})))
            .collect();
        let record: serde_json::Map<String, Value> = FAILURE_WORDS
            .iter()
            .map(|(v, c)| (v.to_string(), json!(c)))
            .collect();
        let csv = |sep: &str, prefix: &str| {
            let header: Vec<String> = vars.iter().map(|v| format!("{prefix}{v}")).collect();
            let row: Vec<String> = cells.iter().map(|c| format!("\"{c}\"")).collect();
            format!("{}\r\n{}\r\n", header.join(sep), row.join(sep))
        };
        let tables = [
            json!({"head": {"vars": vars}, "results": {"bindings": [binding.clone(), binding.clone()]}})
                .to_string(),
            json!({"columns": vars, "rows": [cells.clone()]}).to_string(),
            json!({"columns": vars, "rows": [record.clone()]}).to_string(),
            json!({"columns": vars, "data": [cells.clone()], "count": 1}).to_string(),
            json!([record.clone(), record.clone()]).to_string(),
            json!({"results": [record.clone()], "status": "ok"}).to_string(),
            json!({"query": "SELECT ...", "result": {"head": {"vars": vars}, "results": {"bindings": [binding.clone()]}}})
                .to_string(),
            csv(",", ""),
            csv("\t", "?"),
            "place name,status\nAlbuquerque,Service Unavailable\n".to_string(),
            "status\nService Unavailable\n".to_string(),
            format!(
                "Found 1 row:\n\n| {} |\n|---|\n| {} |\n",
                vars.join(" | "),
                cells.join(" | ")
            ),
        ];
        for table in &tables {
            assert_eq!(soft_error(table), None, "{table}");
            let value = serde_json::from_str::<Value>(table).ok();
            assert_eq!(
                soft_error_in_reply(&[table], value.as_ref()),
                None,
                "{table}"
            );
        }
        // FastMCP: a list sent one item per text block, and wrapped as
        // {"result": [...]} in the structured content.
        let item = Value::Object(record.clone()).to_string();
        assert_eq!(soft_error_in_reply(&[&item, &item], None), None);
        let wrapped = json!({"result": [record.clone()]});
        assert_eq!(soft_error_in_reply(&[&item], Some(&wrapped)), None);
        // The reply's own words are evidence, beside a table too.
        for (text, want) in [
            (
                json!({"status": "error", "message": "Service Unavailable"}).to_string(),
                "HTTP 5xx (service unavailable)",
            ),
            (
                json!({"columns": vars, "rows": [], "warning": "rate limit reached, results cut"})
                    .to_string(),
                "rate limit",
            ),
            (
                json!({"result": {"status": 503, "reason": "HTTP Error 503: Service Unavailable"}})
                    .to_string(),
                "HTTP 503",
            ),
            (
                json!({"warnings": ["rate limit exceeded"], "data": []}).to_string(),
                "rate limit",
            ),
            (
                "HTTP Error 503: Service Unavailable\n".to_string(),
                "HTTP 503",
            ),
            (
                "Query failed\nService Unavailable\n".to_string(),
                "HTTP 5xx (service unavailable)",
            ),
            (
                "Query failed: Service Unavailable\n| a |\n|---|\n| 1 |\n".to_string(),
                "HTTP 5xx (service unavailable)",
            ),
        ] {
            assert_eq!(soft_error(&text).as_deref(), Some(want), "{text}");
        }
    }

    /// Issue 24, item 16: every reply of `tests/fixtures/soft-errors/replies.json`
    /// (the red team's tables and correct replies that were read as soft
    /// errors, and the true positives the tests hold) gets its label.
    #[test]
    fn the_cases_of_replies_get_their_labels() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/soft-errors/replies.json"
        );
        let cases: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut wrong = Vec::new();
        for case in cases["cases"].as_array().unwrap() {
            let text = case["text"].as_str().unwrap();
            let want = case["expect"].as_str();
            let got = soft_error(text);
            if got.as_deref() != want {
                wrong.push(format!("{}: {got:?} (want {want:?})", case["why"]));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
