//! The proxy's record of an episode: `calls.json` (every tool call in
//! order), `metrics.json` (what the report needs) and, while the episode
//! runs, the journal `calls.jsonl` (`docs/FORMAT.md`, "calls.jsonl").
//!
//! As each call ends, its line is appended to the journal and flushed,
//! and `metrics.json` is replaced atomically; `calls.json` is written
//! whole at the proxy's start (no calls) and at its end (every call), and
//! the journal then removed. So a call costs the same at the thousandth
//! as at the first: rewriting `calls.json` whole after every call had made
//! the proxy's added latency grow with the episode (1.1 ms over the first
//! 100 calls of a burst to 2.4 ms over the last 100; docs/PERFORMANCE.md,
//! "The proxy's cost per call"; issue 26, section 4). A proxy killed
//! mid-episode leaves its calls in the journal, one complete line each:
//! [`settle`] (the runner, once the agent host has ended) and every reader
//! of an attempt ([`crate::layout::newer_calls`]) take them from there.
//! `calls.json` is byte for byte what `serde_json`'s pretty printer writes
//! for the whole file.
//!
//! Times are seconds (`f64`, millisecond resolution) from the proxy's start.

use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::fsutil::write_atomic;
use crate::layout::{
    CALLS_FILE, CallRecord, CallsFile, JOURNAL_FILE, LOG_FORMAT, METRICS_FILE, Metrics,
    journal_head, newer_calls, parse_journal, round_seconds,
};
use crate::mcp::redact::Redactor;
pub use crate::mcp::soft_error::{soft_error, soft_error_in_reply, soft_error_in_value};

/// The journal open for appending, and how many calls it holds.
#[derive(Debug)]
struct Journal {
    file: File,
    written: usize,
}

/// The in-memory log and where it is written.
#[derive(Debug)]
pub struct CallLog {
    dir: PathBuf,
    started: Instant,
    /// Calls so far, appended only ([`CallLog::record`]).
    calls: Vec<CallRecord>,
    /// Metrics so far.
    pub metrics: Metrics,
    /// The journal, once the first [`CallLog::flush`] created it.
    journal: RefCell<Option<Journal>>,
    /// The profile's values, replaced in every member of every call
    /// recorded and of the metrics written (issue 24, item 27).
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
            journal: RefCell::new(None),
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
    pub fn record(&mut self, call: CallRecord, is_query: bool) {
        let mut call = self.redactor.record(call);
        call.index = self.calls.len() + 1;
        call.start_s = round_seconds(call.start_s);
        call.duration_s = round_seconds(call.duration_s);
        tally(&mut self.metrics, &call, is_query);
        self.calls.push(call);
    }

    /// Appends the calls recorded since the last flush to the journal,
    /// one line each, in one write, then replaces `metrics.json`
    /// atomically ([`write_atomic`]). The first flush writes `calls.json`
    /// with the calls so far (none, at the proxy's start) and starts the
    /// journal afresh.
    ///
    /// Errors: a file cannot be written (naming it).
    pub fn flush(&self) -> Result<()> {
        self.append()?;
        self.write_metrics()
    }

    /// Writes `calls.json` whole and `metrics.json`, then removes the
    /// journal: the episode's end (a log written so is what the journal
    /// and the flushes before held).
    ///
    /// Errors: a file cannot be written or the journal removed (naming it).
    pub fn finish(&self) -> Result<()> {
        self.append()?;
        write_atomic(
            &self.dir.join(CALLS_FILE),
            calls_json(&self.calls).as_bytes(),
        )?;
        self.write_metrics()?;
        self.journal.borrow_mut().take();
        remove_journal(&self.dir)
    }

    fn append(&self) -> Result<()> {
        let path = self.dir.join(JOURNAL_FILE);
        let fail = |e: std::io::Error| Error::io(&path, "write", e);
        let mut journal = self.journal.borrow_mut();
        if journal.is_none() {
            write_atomic(
                &self.dir.join(CALLS_FILE),
                calls_json(&self.calls).as_bytes(),
            )?;
            let mut file = File::create(&path).map_err(fail)?;
            file.write_all(journal_head().as_bytes()).map_err(fail)?;
            *journal = Some(Journal {
                file,
                written: self.calls.len(),
            });
        }
        let Some(journal) = journal.as_mut() else {
            return Ok(());
        };
        let mut lines = String::new();
        for call in &self.calls[journal.written..] {
            lines.push_str(&serde_json::to_string(call).unwrap_or_default());
            lines.push('\n');
        }
        if !lines.is_empty() {
            // One write of whole lines, straight to the file (no buffer
            // to lose): a kill can cut only the last line short.
            journal.file.write_all(lines.as_bytes()).map_err(fail)?;
            journal.written = self.calls.len();
        }
        Ok(())
    }

    fn write_metrics(&self) -> Result<()> {
        // Every member, the tools offered and the server's name included
        // (a tool may be named after a value; issue 24, item 27).
        let mut value = serde_json::to_value(&self.metrics).unwrap_or_default();
        self.redactor.value(&mut value);
        let mut metrics = serde_json::to_string_pretty(&value).unwrap_or_default();
        metrics.push('\n');
        write_atomic(&self.dir.join(METRICS_FILE), metrics.as_bytes())
    }
}

/// Removes `dir`'s journal, if any.
fn remove_journal(dir: &Path) -> Result<()> {
    let path = dir.join(JOURNAL_FILE);
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&path, "remove", e)),
        _ => Ok(()),
    }
}

/// After an episode whose proxy may have been killed (the agent host has
/// ended): when log folder `dir` holds a journal newer than its
/// `calls.json` ([`newer_calls`]), writes `calls.json` from it, the bytes
/// the proxy writes at its end for those calls; then removes the journal.
/// So a finished attempt's files are the same whether or not its proxy
/// was killed (`docs/FORMAT.md`, "calls.jsonl").
///
/// Errors: a journal or `calls.json` that cannot be read, or a complete
/// journal line that is not a call (naming the file and line; the journal
/// is kept); a file that cannot be written.
pub fn settle(dir: &Path) -> Result<()> {
    let path = dir.join(JOURNAL_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(&path, "read", e)),
    };
    let journal = parse_journal(&bytes).map_err(|(line, e)| {
        Error::at_line(
            &path,
            line,
            format!(
                "{e}: the proxy's journal of calls is damaged; restore it or run the attempt again"
            ),
        )
    })?;
    let calls_path = dir.join(CALLS_FILE);
    let calls = match std::fs::read(&calls_path) {
        Ok(bytes) => Some(
            serde_json::from_slice::<CallsFile>(&bytes)
                .map_err(|e| Error::at_line(&calls_path, e.line() as u64, e.to_string()))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(&calls_path, "read", e)),
    };
    let had = calls.as_ref().map(|c| c.calls.len());
    if let Some(newer) = newer_calls(calls, journal)
        && had != Some(newer.calls.len())
    {
        let text = calls_json_of(newer.format, &newer.calls);
        write_atomic(&calls_path, text.as_bytes())?;
    }
    remove_journal(dir)
}

/// The text of `calls.json` for `calls`: what `serde_json::to_string_pretty`
/// writes for a [`CallsFile`] of [`LOG_FORMAT`], and a line end.
pub fn calls_json(calls: &[CallRecord]) -> String {
    calls_json_of(LOG_FORMAT, calls)
}

fn calls_json_of(format: u32, calls: &[CallRecord]) -> String {
    let elements: Vec<String> = calls.iter().map(array_element).collect();
    let mut text = String::with_capacity(64 + elements.iter().map(|e| e.len() + 2).sum::<usize>());
    text.push_str(&format!("{{\n  \"format\": {format},\n  \"calls\": ["));
    for (i, element) in elements.iter().enumerate() {
        text.push_str(if i == 0 { "\n" } else { ",\n" });
        text.push_str(element);
    }
    text.push_str(if elements.is_empty() {
        "]\n}\n"
    } else {
        "\n  ]\n}\n"
    });
    text
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
    use crate::layout::{read_calls, read_metrics};

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

    /// `calls.json` is the whole file serde_json writes, byte for byte,
    /// at the start (an empty log) and at the end, with arguments holding
    /// empty arrays and objects, line ends and quotes; between, the
    /// journal holds every call flushed (issue 26, section 4), and a
    /// journal settled after a kill gives the same bytes.
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
        let empty = on_disk();
        let mut flushed = 0;
        for i in 0..12 {
            let call = CallRecord {
                index: 0,
                tool: format!("tool {i}"),
                arguments: serde_json::json!({"query": "SELECT * {\n ?s ?p ?o }", "n": [], "m": {}, "deep": {"a": [1, {"b": []}]}, "f": 0.1, "u": "\u{e9}\u{1F600}"}),
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
                flushed = log.calls().len();
            }
            // calls.json is not rewritten; the journal holds what was flushed.
            assert_eq!(on_disk(), empty, "after call {i}");
            assert_eq!(read_calls(dir.path()).unwrap(), log.calls()[..flushed]);
        }
        // A proxy killed now: the runner settles the journal.
        let killed = tempfile::tempdir().unwrap();
        for file in [CALLS_FILE, JOURNAL_FILE] {
            std::fs::copy(dir.path().join(file), killed.path().join(file)).unwrap();
        }
        settle(killed.path()).unwrap();
        assert!(!killed.path().join(JOURNAL_FILE).exists());
        log.finish().unwrap();
        assert_eq!(on_disk(), whole(&log));
        assert!(!dir.path().join(JOURNAL_FILE).exists());
        assert_eq!(read_calls(dir.path()).unwrap().len(), 12);
        // Settled, the killed proxy's calls.json is what the proxy writes
        // for the calls it had flushed.
        let mut upto = log.calls().to_vec();
        upto.truncate(flushed);
        assert_eq!(
            std::fs::read_to_string(killed.path().join(CALLS_FILE)).unwrap(),
            calls_json(&upto)
        );
        // A journal cut mid-line keeps its complete lines; a complete
        // line that is not a call is named.
        let mut bytes = journal_head().into_bytes();
        bytes.extend(serde_json::to_string(&upto[0]).unwrap().as_bytes());
        bytes.extend(b"\n{\"index\": 2, \"to");
        assert_eq!(parse_journal(&bytes).unwrap().unwrap().calls, upto[..1]);
        bytes.extend(b"\n");
        assert_eq!(parse_journal(&bytes).unwrap_err().0, 3);
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
