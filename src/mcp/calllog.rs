//! The proxy's record of an episode: `calls.json` (every tool call in order)
//! and `metrics.json` (what the report needs), rewritten atomically after
//! every call so that an episode killed mid-way still has its log.
//!
//! Calls are only ever appended, so each is serialized once, when first
//! written, and kept as text: a rewrite after the thousandth call copies
//! the text of the 999 before it rather than serializing them again (the
//! whole rewrite had made the proxy's added latency grow from about 1 ms
//! at the first call of a burst to 4 ms at the thousandth;
//! docs/PERFORMANCE.md, "The proxy's cost per call"). The text is byte for
//! byte what `serde_json`'s pretty printer writes for the whole file.
//!
//! Times are seconds (`f64`, millisecond resolution) from the proxy's start.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use crate::error::Result;
use crate::fsutil::write_atomic;
use crate::layout::{CALLS_FILE, CallRecord, LOG_FORMAT, METRICS_FILE, Metrics, round_seconds};
use crate::mcp::redact::Redactor;

/// The in-memory log and where it is written.
#[derive(Debug)]
pub struct CallLog {
    dir: PathBuf,
    started: Instant,
    /// Calls so far, appended only ([`CallLog::record`]).
    calls: Vec<CallRecord>,
    /// Metrics so far.
    pub metrics: Metrics,
    /// The first calls of `calls`, as `calls.json` holds them: one string
    /// per call, pretty-printed and indented as an element of the array.
    written: RefCell<Vec<String>>,
    /// The profile's header and environment values, replaced in every
    /// call recorded and in the metrics written (issue 24, item 27).
    redactor: Redactor,
}

impl CallLog {
    /// A log writing into `dir` (created if missing).
    pub fn new(dir: &Path, metrics: Metrics) -> CallLog {
        CallLog {
            dir: dir.to_path_buf(),
            started: Instant::now(),
            calls: Vec::new(),
            metrics,
            written: RefCell::new(Vec::new()),
            redactor: Redactor::default(),
        }
    }

    /// This log, with every call it records and the metrics it writes
    /// redacted by `redactor` ([`crate::mcp::redact`]).
    pub fn redacting(mut self, redactor: Redactor) -> CallLog {
        self.redactor = redactor;
        self
    }

    /// The calls recorded so far, in order.
    pub fn calls(&self) -> &[CallRecord] {
        &self.calls
    }

    /// Seconds since the proxy started.
    pub fn now(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// The log folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends a call, its texts redacted ([`CallLog::redacting`]), and
    /// updates the tallies derived from it ([`tally`]).
    pub fn record(&mut self, mut call: CallRecord, is_query: bool) {
        self.redactor.call(&mut call);
        call.index = self.calls.len() + 1;
        call.start_s = round_seconds(call.start_s);
        call.duration_s = round_seconds(call.duration_s);
        tally(&mut self.metrics, &call, is_query);
        self.calls.push(call);
    }

    /// Writes `calls.json` and `metrics.json` atomically
    /// ([`write_atomic`]).
    ///
    /// Errors: a file cannot be written (naming it).
    pub fn flush(&self) -> Result<()> {
        let calls = self.calls_text();
        write_atomic(&self.dir.join(CALLS_FILE), calls.as_bytes())?;
        let mut redacted;
        let mut metrics = &self.metrics;
        if !self.redactor.is_empty() {
            redacted = self.metrics.clone();
            self.redactor.option(&mut redacted.startup_error);
            self.redactor.option(&mut redacted.lost_upstream);
            self.redactor.option(&mut redacted.server);
            metrics = &redacted;
        }
        let mut metrics = serde_json::to_string_pretty(metrics).unwrap_or_default();
        metrics.push('\n');
        write_atomic(&self.dir.join(METRICS_FILE), metrics.as_bytes())
    }

    /// The text of `calls.json`: what `serde_json::to_string_pretty` writes
    /// for a [`CallsFile`] of these calls, and a line end; the calls not
    /// serialized before are serialized now and kept.
    fn calls_text(&self) -> String {
        let mut written = self.written.borrow_mut();
        for call in self.calls.iter().skip(written.len()) {
            written.push(array_element(call));
        }
        let mut text =
            String::with_capacity(64 + written.iter().map(|e| e.len() + 2).sum::<usize>());
        text.push_str(&format!("{{\n  \"format\": {LOG_FORMAT},\n  \"calls\": ["));
        for (i, element) in written.iter().enumerate() {
            text.push_str(if i == 0 { "\n" } else { ",\n" });
            text.push_str(element);
        }
        text.push_str(if written.is_empty() {
            "]\n}\n"
        } else {
            "\n  ]\n}\n"
        });
        text
    }
}

/// `call` pretty-printed as an element of the `calls` array of
/// `calls.json`: every line indented by four spaces, as `serde_json`'s
/// pretty printer indents the second level (JSON strings hold no line
/// ends, so a line end is always the printer's).
fn array_element(call: &CallRecord) -> String {
    let pretty = serde_json::to_string_pretty(call).unwrap_or_default();
    let mut out = String::with_capacity(pretty.len() + 64);
    for (i, line) in pretty.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("    ");
        out.push_str(line);
    }
    out
}

/// A failure hidden in the text of a successful reply, or `None` (README.md,
/// "Servers under test"; `soft_error` in `docs/FORMAT.md`): an HTTP 429 or "too
/// many requests", a rate limit, an HTTP status of 400 or more reported by
/// the server, a Python traceback, or the server failing to reach its own
/// backend ("connection refused", "urlopen error", a timeout, ...).
///
/// Only the reply's own words are evidence; the values of a result table
/// are data, whatever their column is called or their cells say (issue 24,
/// item 16). A JSON reply is judged by [`soft_error_in_value`]. Other text
/// is judged whole, but for a result table in it: text that is a CSV or
/// TSV table (a header row of column names, then rows of as many fields:
/// what SPARQL engines write) is data throughout, and the lines of a
/// Markdown table (`| a | b |`) are left out.
pub fn soft_error(text: &str) -> Option<String> {
    match json_reply(text) {
        Some(value) => soft_error_in_value(&value),
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

/// [`soft_error`] for a reply that is not JSON: a CSV or TSV result
/// table is data; any other text is judged without its Markdown table
/// lines.
fn soft_error_in_plain_text(text: &str) -> Option<String> {
    if is_csv_table(text) {
        return None;
    }
    if !text.contains('|') {
        return soft_error_in_text(text);
    }
    let words: Vec<&str> = text
        .lines()
        .filter(|line| {
            let line = line.trim();
            !(line.len() > 1 && line.starts_with('|') && line.ends_with('|'))
        })
        .collect();
    soft_error_in_text(&words.join("\n"))
}

/// Whether `text` is a result table as CSV or TSV: a header row whose
/// fields are all column names (a letter or `_` first, then letters,
/// digits, `_`, `-` or `.`, and spaces too when there are two columns or
/// more; a SPARQL variable's `?` or `$` before them allowed, as the W3C
/// TSV results write it), then at least one row with as many fields. Tabs
/// in the first line make it TSV. A message such as "HTTP Error 503:
/// Service Unavailable" or "Query failed" over one more line has no such
/// header row.
fn is_csv_table(text: &str) -> bool {
    let first = text.lines().next().unwrap_or("");
    let delimiter = if first.contains('\t') { b'\t' } else { b',' };
    let column_name = |field: &str, spaced: bool| {
        let name = field.strip_prefix(['?', '$']).unwrap_or(field);
        let mut chars = name.chars();
        chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && chars.all(|c| {
                c.is_alphanumeric() || matches!(c, '_' | '-' | '.') || (spaced && c == ' ')
            })
    };
    // A cheap look at the first line before the whole text is parsed.
    let header_line = first.trim_end_matches('\r');
    let spaced = header_line.contains(delimiter as char);
    if !header_line
        .split(delimiter as char)
        .all(|f| column_name(f.trim_matches('"'), spaced))
    {
        return false;
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .from_reader(text.as_bytes());
    let mut records = reader.records();
    let Some(Ok(header)) = records.next() else {
        return false;
    };
    if !header.iter().all(|f| column_name(f, header.len() > 1)) {
        return false;
    }
    let mut rows = 0usize;
    for record in records {
        match record {
            Ok(r) if r.len() == header.len() => rows += 1,
            Ok(r) if r.len() == 1 && r.get(0) == Some("") => {}
            _ => return false,
        }
    }
    rows > 0
}

/// A JSON reply that is an error report by its shape: a top-level object
/// with a non-empty `error` or `errors` member (observed: mcp-server-sparql
/// answers a malformed query and an endpoint's 404 with `isError: false`
/// and `{"error": "..."}`; GraphQL-style servers use `errors`). Its label
/// is what [`soft_error`] finds in that member, else `error reply` with the
/// member's first line. A result whose cells merely hold the word "error"
/// has no such member and is not one.
fn error_member(map: &serde_json::Map<String, Value>) -> Option<String> {
    let member = map
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("error") || k.eq_ignore_ascii_case("errors"))
        .map(|(_, v)| v)?;
    let empty = match member {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(true) | Value::Number(_) => false,
    };
    if empty {
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
/// text as JSON): an error report by its shape at the top level
/// ([`error_member`]), else the text under the reply's own error-like
/// members ([`own_soft_error`]). A JSON array at the top is a list of
/// items (a result's rows) and is data.
pub fn soft_error_in_value(value: &Value) -> Option<String> {
    match value {
        Value::Object(map) => error_member(map).or_else(|| own_soft_error(map)),
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
/// item 16): the text under an error-like key ([`error_like`]) is judged;
/// a member that is an object is the reply's too and is searched the same
/// way; a member that is an array is data (the rows of a result table:
/// SPARQL JSON `results.bindings`, `{"columns", "rows"}`, mcp-proto-okn's
/// `{"columns", "data", "count"}`, a list of records), and so is an RDF
/// term (`{"type": "literal", "value": ...}`), whatever key holds it.
fn own_soft_error(map: &serde_json::Map<String, Value>) -> Option<String> {
    for (key, v) in map {
        if is_rdf_term(v) || (v.is_array() && !error_like(key)) {
            continue;
        }
        if error_like(key) {
            let mut text = String::new();
            own_text(v, &mut text);
            if let Some(found) = soft_error_in_text(&text) {
                return Some(found);
            }
        } else if let Value::Object(inner) = v
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
/// `data` or `bindings`.
fn is_table_value(value: &Value) -> bool {
    let Value::Object(map) = value else {
        return false;
    };
    let sparql = map.get("head").is_some_and(Value::is_object)
        && (map.contains_key("results") || map.contains_key("boolean"));
    let columns = ["columns", "vars"].iter().any(|k| map.contains_key(*k))
        && ["rows", "data", "bindings"]
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
    let parsed: Vec<Option<Value>> = texts.iter().map(|t| json_reply(t)).collect();
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
                None => soft_error_in_plain_text(text),
            })
    };
    in_texts.or_else(|| structured.and_then(soft_error_in_value))
}

fn soft_error_in_text(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    if lower.contains("too many requests") || status_code(&lower).is_some_and(|c| c == 429) {
        return Some("HTTP 429 (rate limited)".into());
    }
    if has_rate_limit(&lower) {
        return Some("rate limit".into());
    }
    if let Some(code) = status_code(&lower) {
        return Some(format!("HTTP {code}"));
    }
    // What SPARQL clients say of a request the endpoint refused (observed:
    // SPARQLWrapper's QueryBadFormed, behind mcp-server-sparql).
    if lower.contains("querybadformed") || lower.contains("badly formed") {
        return Some("malformed query".into());
    }
    if lower.contains("bad request") {
        return Some("HTTP 400 (bad request)".into());
    }
    if lower.contains("endpoint not found") {
        return Some("HTTP 404 (endpoint not found)".into());
    }
    for phrase in [
        "internal server error",
        "bad gateway",
        "service unavailable",
        "gateway timeout",
        "endpointinternalerror",
    ] {
        if lower.contains(phrase) {
            return Some(format!("HTTP 5xx ({phrase})"));
        }
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

/// "rate limit" as words: `rate limit`, `rate-limit`, `ratelimit`,
/// `rate limited`, `rate limit exceeded`, but not `rate-limiting`.
fn has_rate_limit(lower: &str) -> bool {
    for form in ["rate limit", "rate-limit", "ratelimit"] {
        let mut from = 0;
        while let Some(i) = lower[from..].find(form) {
            let at = from + i;
            let before_ok = at == 0
                || !lower[..at]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric);
            let rest = &lower[at + form.len()..];
            let after_ok = !rest.starts_with(char::is_alphabetic)
                || rest.starts_with("ed") && !rest[2..].starts_with(char::is_alphabetic);
            if before_ok && after_ok {
                return true;
            }
            from = at + form.len();
        }
    }
    false
}

/// An HTTP status of 400 or more that the text reports: a code after
/// `http error`, `http status`, `http/1.1`, `status code`, `status:`,
/// `returned` or `http`, starting a word and ending before a non-digit
/// (`HTTP Error 429`, `status code 500.`, `Endpoint returned 504`). A code
/// inside a path (`/status/500`) is not one.
fn status_code(lower: &str) -> Option<u16> {
    const PREFIXES: [&str; 9] = [
        "http error",
        "http status code",
        "http status",
        "http/1.1",
        "http/1.0",
        "http/2",
        "status code",
        "status:",
        "returned",
    ];
    let mut found = None;
    for prefix in PREFIXES.iter().chain(std::iter::once(&"http")) {
        let mut from = 0;
        while let Some(i) = lower[from..].find(prefix) {
            let at = from + i;
            from = at + prefix.len();
            let starts_word = at == 0
                || !lower[..at]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric);
            if !starts_word {
                continue;
            }
            let after = &lower[at + prefix.len()..];
            if !prefix.ends_with(':') && !after.starts_with([' ', ':']) {
                continue;
            }
            let digits: String = after
                .trim_start_matches([' ', ':'])
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if digits.len() != 3 {
                continue;
            }
            if let Ok(code) = digits.parse::<u16>()
                && (400..600).contains(&code)
            {
                found = Some(found.map_or(code, |c: u16| c.min(code)));
            }
        }
        if found.is_some() {
            return found;
        }
    }
    found
}

/// Whether a call of `tool` with `arguments` counts as a SPARQL query
/// (`queries_ok`, `queries_errored`, and waiting on the server): it
/// carries one ([`carries_query`]) and is not the answer's submission.
/// The proxy decides by it as it records a call, and a reader of the log
/// by it again.
pub fn is_query(tool: &str, arguments: &Value) -> bool {
    tool != crate::layout::SUBMIT_CSV && carries_query(arguments)
}

/// Adds one call, as the proxy records it in `calls.json`, to the tallies
/// of `metrics.json` that are derived from the calls alone: `calls`,
/// `unreadable_requests`, `tools_called`, `refused`, `server_s`,
/// `reply_chars`, `upstream_soft_errors`, `queries_ok` and
/// `queries_errored` (`docs/FORMAT.md`, "`metrics.json`"). The one rule,
/// for the proxy writing them and for a reader checking them
/// ([`tallies`]).
pub fn tally(m: &mut Metrics, call: &CallRecord, is_query: bool) {
    m.calls += 1;
    if call.unreadable.is_some() {
        // The proxy could not read the request: no tool was called.
        m.unreadable_requests += 1;
        return;
    }
    m.tools_called.push(call.tool.clone());
    if call.refused {
        m.refused += 1;
    }
    if call.forwarded || is_query {
        m.server_s = round_seconds(m.server_s + call.duration_s);
    }
    // The server's replies, or the control's answers to its queries.
    if call.forwarded || is_query {
        *m.reply_chars
            .get_or_insert_with(Default::default)
            .entry(call.tool.clone())
            .or_default() += call.result_chars;
    }
    if call.soft_error.is_some() {
        *m.upstream_soft_errors.entry(call.tool.clone()).or_default() += 1;
    }
    if is_query {
        if call.ok && call.soft_error.is_none() && call.error.is_none() {
            m.queries_ok += 1;
        } else {
            m.queries_errored += 1;
        }
    }
}

/// The tallies of `metrics.json` as `calls` give them ([`tally`]), the
/// other members left at their defaults; `reply_chars` starts empty, as
/// the proxy starts it.
pub fn tallies(calls: &[CallRecord]) -> Metrics {
    let mut m = Metrics {
        reply_chars: Some(std::collections::BTreeMap::new()),
        ..Metrics::default()
    };
    for call in calls {
        tally(&mut m, call, is_query(&call.tool, &call.arguments));
    }
    m
}

/// The members of `recorded` (a `metrics.json`) that the `calls` of the
/// `calls.json` beside it do not give ([`tallies`]), each as `(member,
/// recorded, from the calls)`, as JSON. A `reply_chars` absent from a log
/// written before it was recorded (format 1) is not one.
pub fn tally_differences(
    recorded: &Metrics,
    calls: &[CallRecord],
) -> Vec<(&'static str, String, String)> {
    let (Ok(a), Ok(b)) = (
        serde_json::to_value(recorded),
        serde_json::to_value(tallies(calls)),
    ) else {
        return Vec::new();
    };
    TALLIES
        .into_iter()
        .filter(|m| *m != "reply_chars" || recorded.reply_chars.is_some())
        .filter_map(|m| {
            let show = |v: &Value| v.get(m).unwrap_or(&Value::Null).to_string();
            let (x, y) = (show(&a), show(&b));
            (x != y).then_some((m, x, y))
        })
        .collect()
}

/// The members of `metrics.json` [`tally`] derives from the calls.
const TALLIES: [&str; 9] = [
    "calls",
    "unreadable_requests",
    "tools_called",
    "refused",
    "server_s",
    "reply_chars",
    "upstream_soft_errors",
    "queries_ok",
    "queries_errored",
];

/// True when any string in `arguments` looks like a SPARQL query.
pub fn carries_query(arguments: &Value) -> bool {
    match arguments {
        Value::String(s) => crate::sparql::query_form(s).is_some() && s.contains('{'),
        Value::Array(items) => items.iter().any(carries_query),
        Value::Object(map) => map.values().any(carries_query),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{CallsFile, read_calls, read_metrics};
    use serde_json::json;

    /// Issue 24, item 6: the tallies a reader derives from `calls.json`
    /// are the ones the proxy wrote, and an edited one is named.
    #[test]
    fn tallies_from_the_calls_are_the_ones_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = CallLog::new(
            dir.path(),
            Metrics {
                reply_chars: Some(Default::default()),
                ..Metrics::default()
            },
        );
        let query = serde_json::json!({"query": "SELECT ?s WHERE { ?s ?p ?o }"});
        for (tool, arguments, forwarded, soft) in [
            ("query", query.clone(), true, None),
            ("query", query.clone(), true, Some("HTTP 503".to_string())),
            ("get_schema", Value::Null, true, None),
            (
                "submit_csv",
                serde_json::json!({"csv": "a\n1\n"}),
                false,
                None,
            ),
        ] {
            let call = CallRecord {
                index: 0,
                tool: tool.into(),
                arguments,
                start_s: 0.0,
                duration_s: 0.0123,
                ok: true,
                soft_error: soft,
                refused: false,
                forwarded,
                error: None,
                result_chars: 10,
                result_preview: String::new(),
                unreadable: None,
            };
            let q = is_query(&call.tool, &call.arguments);
            log.record(call, q);
        }
        let calls = log.calls().to_vec();
        assert!(tally_differences(&log.metrics, &calls).is_empty());
        let mut edited = log.metrics.clone();
        edited.queries_ok += 1;
        edited.tools_called.pop();
        assert_eq!(
            tally_differences(&edited, &calls),
            [
                (
                    "tools_called",
                    "[\"query\",\"query\",\"get_schema\"]".to_string(),
                    "[\"query\",\"query\",\"get_schema\",\"submit_csv\"]".to_string()
                ),
                ("queries_ok", "2".to_string(), "1".to_string()),
            ]
        );
    }

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
            ("502 Bad Gateway", "HTTP 5xx (bad gateway)"),
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

    /// The kept text of the calls is the whole file serde_json writes,
    /// byte for byte, after every call (an empty log too), with arguments
    /// holding empty arrays and objects, line ends and quotes.
    #[test]
    fn calls_json_is_what_a_whole_serialization_writes() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = CallLog::new(dir.path(), Metrics::default());
        let whole = |log: &CallLog| {
            let file = CallsFile {
                format: LOG_FORMAT,
                calls: log.calls().to_vec(),
            };
            serde_json::to_string_pretty(&file).unwrap() + "\n"
        };
        log.flush().unwrap();
        let on_disk = || std::fs::read_to_string(dir.path().join(CALLS_FILE)).unwrap();
        assert_eq!(on_disk(), whole(&log));
        for i in 0..12 {
            let call = CallRecord {
                index: 0,
                tool: format!("tool {i}"),
                arguments: serde_json::json!({"query": "SELECT * {\n ?s ?p ?o }", "n": [], "m": {}, "deep": {"a": [1, {"b": []}]}}),
                start_s: i as f64 / 7.0,
                duration_s: if i % 3 == 0 { 0.25 } else { 0.125 },
                ok: i % 4 != 0,
                soft_error: (i == 5).then(|| "HTTP 429".to_string()),
                refused: false,
                forwarded: true,
                error: None,
                result_chars: i,
                result_preview: "a \"quoted\" line\nand another".into(),
                unreadable: None,
            };
            log.record(call, i % 2 == 0);
            if i % 5 != 4 {
                log.flush().unwrap();
                assert_eq!(on_disk(), whole(&log), "after call {i}");
            }
        }
        log.flush().unwrap();
        assert_eq!(on_disk(), whole(&log));
        assert_eq!(read_calls(dir.path()).unwrap().len(), 12);
    }

    #[test]
    fn tallies_follow_the_calls() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = CallLog::new(dir.path(), Metrics::default());
        let call = |tool: &str, ok: bool, soft: Option<&str>| CallRecord {
            index: 0,
            tool: tool.into(),
            arguments: serde_json::json!({}),
            start_s: 0.1234,
            duration_s: 0.5,
            ok,
            soft_error: soft.map(String::from),
            refused: false,
            forwarded: true,
            error: None,
            result_chars: 0,
            result_preview: String::new(),
            unreadable: None,
        };
        log.record(call("query", true, None), true);
        log.record(call("query", true, Some("HTTP 429 (rate limited)")), true);
        log.record(call("get_schema", false, None), false);
        log.flush().unwrap();
        let m = read_metrics(dir.path()).unwrap();
        assert_eq!((m.calls, m.queries_ok, m.queries_errored), (3, 1, 1));
        assert_eq!(m.upstream_soft_errors.get("query"), Some(&1));
        assert_eq!(m.server_s, 1.5);
        assert_eq!(m.tools_called, ["query", "query", "get_schema"]);
        let calls = read_calls(dir.path()).unwrap();
        assert_eq!(calls[2].index, 3);
        assert_eq!(calls[0].start_s, 0.123);
    }
}
