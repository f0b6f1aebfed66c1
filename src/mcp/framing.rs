//! The proxy's stdio with the agent host, read and written here rather
//! than by rmcp directly: MCP over stdio is one JSON-RPC message per line
//! (newline-delimited JSON), and rmcp ignores a line that is not JSON
//! (rust-sdk issue 938, as the other MCP SDKs do). A request the proxy
//! cannot read would then get no reply, nothing would be recorded, and the
//! agent's call would hang until its host gave up.
//!
//! So every line from the agent host is judged first ([`judge`]):
//!
//! - a line that is JSON goes to rmcp unchanged (a JSON value that is not a
//!   message rmcp knows is rmcp's to answer, with "Invalid Request");
//! - a blank line is skipped, as rmcp skips it;
//! - any other line is answered here with a JSON-RPC 2.0 error and recorded
//!   in `calls.json` (`docs/FORMAT.md`, "calls.json", `unreadable`).
//!
//! A line is unreadable when it is not JSON at all (a trailing comma, a
//! truncated line: -32700 Parse error, under the id when the members read
//! whole before the damage hold one, else id null), when it is JSON text that
//! is not Unicode (a string holding a lone UTF-16 surrogate escape such as
//! `"\ud800"`, which the JSON grammar allows and Node's `JSON.stringify`
//! writes for a broken string, but which is no Unicode text and so no
//! string serde_json or rmcp can hold; or bytes that are not UTF-8), or
//! when it is longer than the proxy reads (-32700). For text that is not
//! Unicode, the request is re-read leniently, each bad escape or byte
//! replaced: when its id and method come out the same whichever
//! replacement is used, they are the agent's own, and the reply answers
//! that id, with -32602 Invalid params when the damage is in the params
//! (a `tools/call` then ends with an error instead of hanging). An id that
//! cannot be recovered that way is answered as null, as JSON-RPC 2.0 says;
//! a line recognisably a notification or a response gets no reply (JSON-RPC
//! answers neither) and is still recorded.
//!
//! Every request that carries an id is answered under that id, as the agent
//! wrote it (issue 24, item 18). Any JSON number is an id: one rmcp would
//! refuse or write back otherwise (`1e400`, `1.5`, past 2^63, `2.0`, `1e3`,
//! `-0`) goes to rmcp as an alias, and [`write_lines`] gives it back
//! ([`Aliases`]). A batch is answered element by element under each id
//! (`batch`), a damaged one too. A message nested deeper than
//! [`MAX_MESSAGE_DEPTH`] levels of arrays and objects, which serde_json
//! and rmcp would not read (or whose arguments `calls.json` could not hold
//! readably), is read shallowly for its id and answered with -32602 (the depth is in the params) or -32600;
//! and a request under an id still in flight ([`InFlight`], kept with the
//! [`Tracked`] transport) is answered at once with -32600, since rmcp keeps
//! one entry per id and one of the two would never be answered.
//!
//! The proxy's own replies and rmcp's share stdout through one writer
//! ([`write_lines`]), which puts a reply only between rmcp's lines, never
//! inside one.

use std::collections::VecDeque;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::layout::{LINE_PREVIEW_CHARS, UnreadableRequest};

/// JSON-RPC 2.0: invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0: invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;

/// JSON-RPC 2.0's code for JSON that is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;

/// The UTF-8 byte order mark, which rmcp skips at the start of a line (RFC
/// 8259, section 8.1, lets a parser ignore it).
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Bytes of a line kept for its preview ([`Rejected::line_head`]): many
/// more than the preview shows, so that a value of the profile is redacted
/// whole before the preview is cut (issue 24, item 27).
const HEAD_BYTES: usize = 64 * 1024;

/// A line the proxy could not read: what to answer and what to record.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The reply, one JSON-RPC error object and a line feed; `None` when no
    /// reply is due (a notification or a response).
    pub reply: Option<Vec<u8>>,
    /// What went wrong, as the reply's error message says it.
    pub message: String,
    /// The tool name of a `tools/call`, when it could be recovered unchanged.
    pub tool: Option<String>,
    /// The record kept in `calls.json`.
    pub record: UnreadableRequest,
    /// The line's first `HEAD_BYTES` bytes as text (bytes that are not
    /// UTF-8 as U+FFFD), from which the recorded preview is made once
    /// redacted.
    pub line_head: String,
    /// The line is longer than [`Rejected::line_head`].
    pub head_cut: bool,
}

/// What to do with one line from the agent host.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// JSON: rmcp reads it.
    Pass,
    /// Empty or white space only: skipped.
    Blank,
    /// Answered and recorded here.
    Reject(Box<Rejected>),
}

/// Judges one line (with or without its line end) from the agent host.
/// Never panics, whatever the bytes.
pub fn judge(line: &[u8]) -> Verdict {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let line_bytes = body.len();
    let body = body.strip_suffix(b"\r").unwrap_or(body);
    let body = body.strip_prefix(BOM).unwrap_or(body);
    if body
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    {
        return Verdict::Blank;
    }
    if body.trim_ascii_start().starts_with(b"[") {
        return Verdict::Reject(Box::new(batch(body, line_bytes)));
    }
    if let Some(depth) = too_deep(body)
        && let Some(found) = Recovered::from(body)
    {
        return Verdict::Reject(Box::new(deep_message(body, depth, &found, line_bytes)));
    }
    let error = match serde_json::from_slice::<Value>(body) {
        Ok(value) => {
            return match invalid_message(body, &value, line_bytes) {
                Some(rejected) => Verdict::Reject(Box::new(rejected)),
                None => Verdict::Pass,
            };
        }
        Err(error) => error,
    };
    Verdict::Reject(Box::new(match Recovered::from(body) {
        None => rejected(
            format!("Parse error: the message is not JSON ({error})"),
            PARSE_ERROR,
            &Recovered::from_prefix(body),
            line_bytes,
            body,
        ),
        Some(found) => {
            let what = if std::str::from_utf8(body).is_err() {
                "the message is not UTF-8 text"
            } else {
                "a string holds a lone UTF-16 surrogate escape (such as \\ud800), which is not Unicode text"
            };
            let (code, label) = if found.method.is_some() && found.params_damaged {
                (INVALID_PARAMS, "Invalid params")
            } else {
                (PARSE_ERROR, "Parse error")
            };
            rejected(
                format!(
                    "{label}: {what} ({error}); send strings as UTF-8, with any \\u escapes in valid surrogate pairs"
                ),
                code,
                &found,
                line_bytes,
                body,
            )
        }
    }))
}

/// The `id` member of the JSON object `body`, as written.
fn raw_id_of(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct IdOnly<'a> {
        #[serde(borrow)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let found: IdOnly = serde_json::from_slice(body).ok()?;
    Some(found.id?.get().to_string())
}

/// JSON that rmcp would not read as a message, or a `tools/call` whose
/// params are not `{"name": string, "arguments"?: object}`: rmcp answers
/// such a request without its id (or as an unknown method), and the
/// agent's call waits forever. Answered here instead: -32600 Invalid
/// Request (-32602 Invalid params for a call whose params are wrong), its
/// id echoed when it is a string or a number, else null (JSON-RPC 2.0,
/// section 5).
fn invalid_message(body: &[u8], value: &Value, line_bytes: usize) -> Option<Rejected> {
    let object = value.as_object();
    let method = object
        .and_then(|o| o.get("method"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let raw_id = object
        .and_then(|o| o.get("id"))
        .filter(|id| id.is_string() || id.is_number())
        .and_then(|_| raw_id_of(body));
    let found = || Recovered {
        id: raw_id.as_deref().map(recorded_id),
        raw_id: raw_id.clone(),
        method: method.clone(),
        tool: object
            .and_then(|o| o.get("params"))
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string),
        params_damaged: false,
        // A notification (a method, no id) is never answered.
        no_reply: object.is_some_and(|o| o.contains_key("method") && !o.contains_key("id")),
    };
    if method.as_deref() == Some("tools/call") {
        let params = object.and_then(|o| o.get("params"));
        let fault = match params {
            Some(Value::Object(p)) => match (p.get("name"), p.get("arguments")) {
                (Some(Value::String(_)), None | Some(Value::Null | Value::Object(_))) => None,
                (Some(Value::String(_)), Some(_)) => Some("params.arguments must be an object"),
                _ => Some("params.name must be the tool's name, a string"),
            },
            _ => Some("params must be an object with the tool's name and its arguments"),
        };
        if let Some(fault) = fault {
            return Some(rejected(
                format!("Invalid params: {fault}"),
                INVALID_PARAMS,
                &found(),
                line_bytes,
                body,
            ));
        }
    }
    if serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(body).is_err() {
        return Some(rejected(
            "Invalid Request: not a JSON-RPC 2.0 message (an object with \"jsonrpc\": \"2.0\", \
             a method, and an id that is a string or an integer)"
                .to_string(),
            INVALID_REQUEST,
            &found(),
            line_bytes,
            body,
        ));
    }
    None
}

/// A batch (a JSON array), which the proxy does not run (rmcp reads one
/// message per line; MCP 2025-06-18 has no batches). Every request in it
/// that carries an id is answered under that id as written, in one batch
/// reply as JSON-RPC 2.0 answers a batch (issue 24, item 18):
///
/// - in a batch that is JSON, with -32600 Invalid Request (send each
///   request on its own line), or, for one nested deeper than the proxy
///   reads, with the error that request would get on its own line
///   ([`deep_error`]); an element that is no request with an id (an invalid
///   one, or an empty batch) gets an answer under id null, a notification
///   none;
/// - in a batch that is not JSON (a trailing comma, a line cut short), the
///   requests whole before the damage, and the one it cuts when its id came
///   before the damage ([`Recovered::from_prefix`]), with -32700 Parse error,
///   as one message is; when no id can be read, one answer under id
///   null.
///
/// A batch of notifications alone gets no reply.
fn batch(body: &[u8], line_bytes: usize) -> Rejected {
    let whole = serde_json::from_slice::<Vec<Box<serde_json::value::RawValue>>>(body)
        .ok()
        .filter(|_| std::str::from_utf8(body).is_ok());
    let (code, message, replies) = match &whole {
        Some(items) => {
            let message = "Invalid Request: a batch (a JSON array): the proxy reads one message \
                           per line; send each request on its own line"
                .to_string();
            let mut replies = Vec::new();
            for item in items {
                let text = item.get();
                let found = members(text)
                    .map(|m| Recovered::agreed(&m, &m))
                    .unwrap_or_default();
                let depth = nesting(text.as_bytes());
                let (code, said) = if depth > MAX_MESSAGE_DEPTH {
                    deep_error(text.as_bytes(), depth, &found)
                } else {
                    (INVALID_REQUEST, message.clone())
                };
                if !found.no_reply {
                    replies.push(error_reply(found.raw_id.as_deref(), code, &said));
                }
            }
            if items.is_empty() {
                replies.push(error_reply(None, INVALID_REQUEST, &message));
            }
            (INVALID_REQUEST, message, replies)
        }
        None => {
            let why = serde_json::from_slice::<serde::de::IgnoredAny>(body)
                .err()
                .map_or_else(|| "it is not Unicode text".to_string(), |e| e.to_string());
            let message = format!(
                "Parse error: the batch (a JSON array) is not JSON ({why}); the proxy reads one \
                 message per line: send each request on its own line"
            );
            let mut replies: Vec<Vec<u8>> = damaged_batch(body)
                .iter()
                .filter(|found| !found.no_reply && found.raw_id.is_some())
                .map(|found| error_reply(found.raw_id.as_deref(), PARSE_ERROR, &message))
                .collect();
            if replies.is_empty() {
                replies.push(error_reply(None, PARSE_ERROR, &message));
                // Nothing could be read: one answer, not a batch of one.
                let mut rejected = rejected(
                    message,
                    PARSE_ERROR,
                    &Recovered::default(),
                    line_bytes,
                    body,
                );
                rejected.record.code = Some(PARSE_ERROR);
                return rejected;
            }
            (PARSE_ERROR, message, replies)
        }
    };
    let reply = (!replies.is_empty()).then(|| {
        let mut line = b"[".to_vec();
        line.extend(replies.join(&b","[..]));
        line.extend_from_slice(b"]\n");
        line
    });
    let mut rejected = rejected(message, code, &Recovered::default(), line_bytes, body);
    rejected.record.code = reply.is_some().then_some(code);
    rejected.reply = reply;
    rejected
}

/// One JSON-RPC error object under `raw_id` (JSON text, as the request
/// wrote it; null when `None`), without a line end.
fn error_reply(raw_id: Option<&str>, code: i64, message: &str) -> Vec<u8> {
    let error = json!({"code": code, "message": message});
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{error}}}",
        raw_id.unwrap_or("null")
    )
    .into_bytes()
}

/// What can be read of each request of a batch that is not JSON: the
/// elements whole before the damage (read leniently twice, as
/// [`Recovered::from`] reads a message), then the one the damage cuts
/// ([`Recovered::from_prefix`]).
fn damaged_batch(body: &[u8]) -> Vec<Recovered> {
    let (first, second) = (lenient(body, '\u{FFFD}'), lenient(body, '\u{FFFE}'));
    let (a, rest) = array_prefix(&first);
    let (b, _) = array_prefix(&second);
    let mut found: Vec<Recovered> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| match (members(x.get()), members(y.get())) {
            (Some(x), Some(y)) => Recovered::agreed(&x, &y),
            _ => Recovered {
                no_reply: true,
                ..Recovered::default()
            },
        })
        .collect();
    found.push(Recovered::from_prefix(&first.as_bytes()[rest..]));
    found
}

/// The elements of the JSON array `text` opens that are whole before
/// anything that is not JSON, and where the rest begins (after the comma
/// that follows the last of them).
fn array_prefix(text: &str) -> (Vec<Box<serde_json::value::RawValue>>, usize) {
    let skip_blank = |at: usize| {
        let rest = text.get(at..).unwrap_or("");
        at + (rest.len() - rest.trim_start_matches([' ', '\t', '\r', '\n']).len())
    };
    let mut items = Vec::new();
    let mut at = skip_blank(0);
    if !text.get(at..).is_some_and(|t| t.starts_with('[')) {
        return (items, at);
    }
    at += 1;
    loop {
        let start = skip_blank(at);
        let mut values = serde_json::Deserializer::from_str(text.get(start..).unwrap_or(""))
            .into_iter::<Box<serde_json::value::RawValue>>();
        let Some(Ok(item)) = values.next() else {
            return (items, start);
        };
        let end = skip_blank(start + values.byte_offset());
        if !text.get(end..).is_some_and(|t| t.starts_with(',')) {
            // Whole, but what follows is neither a comma nor (the array
            // being no JSON) its end: the damage is here.
            return (items, start);
        }
        items.push(item);
        at = end + 1;
    }
}

/// A line longer than `max_bytes`, of which `head` is the start: answered
/// with a parse error, under the id `head` holds when its members up to
/// the id were read whole (`Recovered::from_prefix`), else id null.
pub fn oversized(line_bytes: usize, head: &[u8], max_bytes: usize) -> Rejected {
    rejected(
        format!(
            "Parse error: the message is {line_bytes} bytes, more than the {max_bytes} bytes the proxy reads in one message; it was not read"
        ),
        PARSE_ERROR,
        &Recovered::from_prefix(head),
        line_bytes,
        head,
    )
}

/// What could be read from a line that does not parse as it stands.
#[derive(Debug, Default)]
struct Recovered {
    /// The id, when it is a string or a number and the same in both
    /// lenient readings.
    id: Option<Value>,
    /// That id as the agent wrote it (JSON text), which the reply echoes:
    /// a number past what a double holds exactly stays the agent's own.
    raw_id: Option<String>,
    /// The method, the same in both readings.
    method: Option<String>,
    /// `params.name` of a `tools/call`, the same in both readings.
    tool: Option<String>,
    /// The params differ between the readings: the damage is in them.
    params_damaged: bool,
    /// No reply is due: a notification (a method and no id) or a
    /// response (no method, an id, and a result or an error).
    no_reply: bool,
}

/// The members of a JSON object, each kept as its text: read without
/// building the values, so a member nested however deep is read (serde_json
/// skips a value without recursing) and only the small ones (the id, the
/// method, a tool's name) are parsed.
type Members = std::collections::BTreeMap<String, Box<serde_json::value::RawValue>>;

/// `text` as a JSON object's members ([`Members`]), if it is one.
fn members(text: &str) -> Option<Members> {
    serde_json::from_str::<Members>(text).ok()
}

/// A member's value, parsed, when it is a string or a number (a method, a
/// tool's name; never nested).
fn small_value(raw: &serde_json::value::RawValue) -> Option<Value> {
    let text = raw.get();
    if text.starts_with(['{', '[']) {
        return None;
    }
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(|v| v.is_string() || v.is_number())
}

/// Whether `text` is a JSON number as the grammar writes one, whatever its
/// size or precision (`1e400`, a 39-digit integer, `-0`, `2.0`): JSON-RPC
/// 2.0 allows any number as an id.
fn is_json_number(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

/// Whether the JSON text `raw` is an id a request may carry: a string or
/// any number.
fn is_id(raw: &str) -> bool {
    is_json_number(raw) || (raw.starts_with('"') && serde_json::from_str::<String>(raw).is_ok())
}

/// The id written `raw` ([`is_id`]) as `calls.json` records it: the
/// string, or the number when JSON writes it back as it was written; a
/// number written otherwise, or beyond what a double holds (`1e400`,
/// `2.0`, a 39-digit integer), as its text, so the record never states a
/// number the agent did not send.
fn recorded_id(raw: &str) -> Value {
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::String(s)) => Value::String(s),
        Ok(number) if serde_json::to_string(&number).is_ok_and(|text| text == raw) => number,
        _ => Value::String(raw.to_string()),
    }
}

impl Recovered {
    /// Reads `body` twice, each time with its lone surrogate escapes and
    /// bytes that are not UTF-8 replaced by a different character, and
    /// keeps what both readings agree on. `None` when the line is not JSON
    /// even so. Only the top-level members are read ([`Members`]), so a
    /// message nested too deep to parse whole is read all the same.
    fn from(body: &[u8]) -> Option<Recovered> {
        let first_text = lenient(body, '\u{FFFD}');
        let second_text = lenient(body, '\u{FFFE}');
        let (Some(first), Some(second)) = (members(&first_text), members(&second_text)) else {
            let is_json = |text: &str| serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
            return (is_json(&first_text) && is_json(&second_text)).then(Recovered::default);
        };
        Some(Recovered::agreed(&first, &second))
    }

    /// What two lenient readings of one message's members ([`Members`])
    /// agree on ([`Recovered::from`]).
    fn agreed(first: &Members, second: &Members) -> Recovered {
        let same = |key: &str| {
            let value = first.get(key)?;
            (second.get(key).map(|v| v.get()) == Some(value.get())).then_some(value)
        };
        let raw_id = same("id")
            .map(|raw| raw.get().to_string())
            .filter(|raw| is_id(raw));
        let id = raw_id.as_deref().map(recorded_id);
        let method = same("method")
            .and_then(|raw| small_value(raw))
            .and_then(|v| v.as_str().map(str::to_string));
        let name = |message: &Members| {
            let params = members(message.get("params")?.get())?;
            small_value(params.get("name")?)?
                .as_str()
                .map(str::to_string)
        };
        let tool = match (method.as_deref(), name(first)) {
            (Some("tools/call"), Some(tool)) if name(second).as_ref() == Some(&tool) => Some(tool),
            _ => None,
        };
        // Whether an id is there is known only where no member name was
        // damaged; otherwise the line is answered, in case it was a request.
        let keys_intact = first.keys().eq(second.keys());
        let has_id = first.contains_key("id");
        let is_notification = keys_intact && method.is_some() && !has_id;
        let is_response = keys_intact
            && !first.contains_key("method")
            && has_id
            && (first.contains_key("result") || first.contains_key("error"));
        Recovered {
            params_damaged: first.get("params").map(|v| v.get())
                != second.get("params").map(|v| v.get()),
            id,
            raw_id,
            method,
            tool,
            no_reply: is_notification || is_response,
        }
    }
}

/// The members of the JSON object `text` opens that are whole before
/// anything that is not JSON (a trailing comma, the end of a truncated or
/// cut line), in order; empty when `text` opens no object.
fn prefix_members(text: &str) -> Vec<(String, Box<serde_json::value::RawValue>)> {
    fn skip_blank(text: &str, at: usize) -> usize {
        let rest = text.get(at..).unwrap_or("");
        at + (rest.len() - rest.trim_start_matches([' ', '\t', '\r', '\n']).len())
    }
    /// One JSON value at `at`, and where it ends.
    fn value_at<T: serde::de::DeserializeOwned>(text: &str, at: usize) -> Option<(T, usize)> {
        let mut values = serde_json::Deserializer::from_str(text.get(at..)?).into_iter::<T>();
        let value = values.next()?.ok()?;
        Some((value, at + values.byte_offset()))
    }
    let mut members = Vec::new();
    let mut at = skip_blank(text, 0);
    if !text.get(at..).is_some_and(|t| t.starts_with('{')) {
        return members;
    }
    at += 1;
    loop {
        at = skip_blank(text, at);
        let Some((key, after)) = value_at::<String>(text, at) else {
            break;
        };
        at = skip_blank(text, after);
        if !text.get(at..).is_some_and(|t| t.starts_with(':')) {
            break;
        }
        let Some((value, after)) = value_at::<Box<serde_json::value::RawValue>>(text, at + 1)
        else {
            break;
        };
        members.push((key, value));
        at = skip_blank(text, after);
        if !text.get(at..).is_some_and(|t| t.starts_with(',')) {
            break;
        }
        at += 1;
    }
    members
}

impl Recovered {
    /// What the whole members at the start of `body` say, when `body` is
    /// not JSON even read leniently: a trailing comma, a line cut short.
    /// The id, method and tool are taken when both lenient readings agree
    /// on them ([`Recovered::from`]), so a request whose id came before
    /// the damage is answered under it (issue 24, item 18). A response
    /// (an id with a `result` or an `error`, no method) gets no reply; any
    /// other line is answered, under null when no id was read.
    fn from_prefix(body: &[u8]) -> Recovered {
        let read = |replacement| -> Members {
            prefix_members(&lenient(body, replacement))
                .into_iter()
                .collect()
        };
        let (first, second) = (read('\u{FFFD}'), read('\u{FFFE}'));
        let same = |key: &str| {
            let value = first.get(key)?;
            (second.get(key).map(|v| v.get()) == Some(value.get())).then_some(value)
        };
        let method = same("method")
            .and_then(|raw| small_value(raw))
            .and_then(|v| v.as_str().map(str::to_string));
        let tool = same("params")
            .and_then(|raw| members(raw.get()))
            .and_then(|params| small_value(params.get("name")?))
            .and_then(|v| v.as_str().map(str::to_string))
            .filter(|_| method.as_deref() == Some("tools/call"));
        let is_response = first.contains_key("id")
            && !first.contains_key("method")
            && (first.contains_key("result") || first.contains_key("error"));
        let raw_id = same("id")
            .map(|raw| raw.get().to_string())
            .filter(|raw| is_id(raw));
        Recovered {
            id: raw_id.as_deref().map(recorded_id),
            raw_id,
            method,
            tool,
            params_damaged: false,
            no_reply: is_response,
        }
    }
}

/// The id of the reply `body` (a response from a server: an id and no
/// method), as written (JSON text), when it can be read though the reply
/// cannot: its top-level members read shallowly, however deep the rest
/// nests (`Recovered::from`), else those whole before the damage
/// (`Recovered::from_prefix`). `None` when no id can be read, or the line
/// is a request or a notification.
pub fn reply_id(body: &[u8]) -> Option<String> {
    let found = Recovered::from(body)
        .filter(|f| f.raw_id.is_some() || f.method.is_some())
        .unwrap_or_else(|| Recovered::from_prefix(body));
    found.raw_id.filter(|_| found.method.is_none())
}

/// The most arrays and objects one message may nest (the message itself
/// counts as one): 126. serde_json, and so rmcp, reads no more than 127
/// levels, and a tool call's arguments are recorded in `calls.json` one
/// level deeper than they arrive, where they must still be read back
/// (issue 24, item 18).
pub const MAX_MESSAGE_DEPTH: usize = 126;

/// The nesting of `body` when it is deeper than [`MAX_MESSAGE_DEPTH`]
/// ([`nesting`]). A line with no more brackets and braces in all than
/// the limit is passed at once.
fn too_deep(body: &[u8]) -> Option<usize> {
    let opening = memchr::memchr2_iter(b'[', b'{', body).take(MAX_MESSAGE_DEPTH + 1);
    if opening.count() <= MAX_MESSAGE_DEPTH {
        return None;
    }
    let depth = nesting(body);
    (depth > MAX_MESSAGE_DEPTH).then_some(depth)
}

/// How deep arrays and objects nest in the JSON text `body`: brackets and
/// braces outside strings, counted in one pass without recursion, however
/// deep.
pub fn nesting(body: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in body {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A message nested `depth` levels, deeper than [`MAX_MESSAGE_DEPTH`]
/// (issue 24, item 18): answered under its own id, never as id null, so
/// the agent's call ends ([`deep_error`]); a notification or a response
/// gets no reply.
fn deep_message(body: &[u8], depth: usize, found: &Recovered, line_bytes: usize) -> Rejected {
    let (code, message) = deep_error(body, depth, found);
    rejected(message, code, found, line_bytes, body)
}

/// The error a message nested `depth` levels deep gets: -32602 Invalid
/// params when the depth is in the params of a request whose method was
/// read, else -32600 Invalid Request.
fn deep_error(body: &[u8], depth: usize, found: &Recovered) -> (i64, String) {
    let params_deep = members(&lenient(body, '\u{FFFD}'))
        .and_then(|m| m.get("params").map(|p| nesting(p.get().as_bytes())))
        .is_some_and(|d| d + 1 > MAX_MESSAGE_DEPTH);
    let (code, label, what) = if found.method.is_some() && params_deep {
        (
            INVALID_PARAMS,
            "Invalid params",
            "its params (a tool call's arguments)",
        )
    } else {
        (INVALID_REQUEST, "Invalid Request", "it")
    };
    (
        code,
        format!(
            "{label}: the message nests arrays and objects {depth} levels deep, and the proxy reads at most {MAX_MESSAGE_DEPTH}; send {what} less deeply nested"
        ),
    )
}

/// `body` as text a JSON parser accepts where the only fault is that it is
/// not Unicode: bytes that are not UTF-8 and lone surrogate escapes
/// (`\ud800` without a low surrogate after it, or `\udc00` without a high
/// one before it) become `replacement`.
fn lenient(body: &[u8], replacement: char) -> String {
    let mut text = String::with_capacity(body.len());
    for chunk in body.utf8_chunks() {
        text.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            text.push(replacement);
        }
    }
    let bytes = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut replacement_utf8 = [0; 4];
    let replacement_utf8 = replacement.encode_utf8(&mut replacement_utf8).as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        match unicode_escape(bytes, i) {
            Some(0xD800..=0xDBFF) => {
                if unicode_escape(bytes, i + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low))
                {
                    // A surrogate pair: one character, as it is.
                    out.extend_from_slice(&bytes[i..i + 12]);
                    i += 12;
                } else {
                    out.extend_from_slice(replacement_utf8);
                    i += 6;
                }
            }
            Some(0xDC00..=0xDFFF) => {
                out.extend_from_slice(replacement_utf8);
                i += 6;
            }
            Some(_) => {
                out.extend_from_slice(&bytes[i..i + 6]);
                i += 6;
            }
            None => {
                // Another escape (`\\`, `\"`, ...): both bytes as they are, so
                // the backslash of `\\u` is not read as starting `\u`.
                out.extend_from_slice(&bytes[i..(i + 2).min(bytes.len())]);
                i += 2;
            }
        }
    }
    // Only ASCII escapes were replaced by whole characters, so this is
    // UTF-8; the lossy conversion is never needed and cannot panic.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The code unit of a `\uXXXX` escape starting at byte `at`, if there is one.
fn unicode_escape(bytes: &[u8], at: usize) -> Option<u32> {
    let escape = bytes.get(at..at.checked_add(6)?)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(hex, 16).ok()
}

/// The first [`LINE_PREVIEW_CHARS`] characters of `bytes`, bytes that are
/// not UTF-8 as U+FFFD.
fn preview(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(4 * LINE_PREVIEW_CHARS)];
    String::from_utf8_lossy(head)
        .chars()
        .take(LINE_PREVIEW_CHARS)
        .collect()
}

fn rejected(
    message: String,
    code: i64,
    found: &Recovered,
    line_bytes: usize,
    line: &[u8],
) -> Rejected {
    let reply = (!found.no_reply).then(|| {
        let id = found
            .raw_id
            .clone()
            .or_else(|| found.id.as_ref().map(Value::to_string))
            .unwrap_or_else(|| "null".to_string());
        let error = json!({"code": code, "message": message});
        // serde_json escapes every control character inside strings, and a
        // JSON number or string holds no line end, so the reply is one line.
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}\n").into_bytes()
    });
    Rejected {
        record: UnreadableRequest {
            code: reply.is_some().then_some(code),
            id: found.id.clone(),
            method: found.method.clone(),
            line_bytes,
            line_preview: preview(line),
        },
        reply,
        message,
        tool: found.tool.clone(),
        line_head: head(line),
        head_cut: line.len() > HEAD_BYTES || line_bytes > line.len() + 3,
    }
}

/// The first [`HEAD_BYTES`] of `bytes` as text, bytes that are not UTF-8
/// as U+FFFD ([`Rejected::line_head`]).
fn head(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(HEAD_BYTES)]).into_owned()
}

/// One line read from the agent host.
enum Line {
    /// A whole line, its line feed included when it had one (the last
    /// line before the end of input may lack it).
    Whole(Vec<u8>),
    /// A line longer than the limit: its length (final line feed excluded)
    /// and its first bytes.
    Oversized { line_bytes: usize, head: Vec<u8> },
    /// The end of input (or a read error, which ends it as well).
    End,
}

/// Reads lines of at most `max_bytes` bytes (line feed included) without
/// ever holding more: a longer line is counted and dropped as it streams.
async fn next_line<R: AsyncRead + Unpin>(input: &mut BufReader<R>, max_bytes: usize) -> Line {
    let mut line = Vec::new();
    let mut over: Option<(usize, Vec<u8>)> = None;
    loop {
        let (taken, ended) = {
            let available = match input.fill_buf().await {
                Ok(available) => available,
                Err(_) => &[],
            };
            if available.is_empty() {
                return match over {
                    Some((line_bytes, head)) => Line::Oversized { line_bytes, head },
                    None if line.is_empty() => Line::End,
                    None => Line::Whole(line),
                };
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..take];
            match &mut over {
                Some((seen, head)) => {
                    *seen += take;
                    let room = HEAD_BYTES.saturating_sub(head.len()).min(take);
                    head.extend_from_slice(&chunk[..room]);
                }
                None if line.len().saturating_add(take) > max_bytes => {
                    let mut head = std::mem::take(&mut line);
                    let seen = head.len() + take;
                    head.truncate(HEAD_BYTES);
                    let room = HEAD_BYTES.saturating_sub(head.len()).min(take);
                    head.extend_from_slice(&chunk[..room]);
                    over = Some((seen, head));
                }
                None => line.extend_from_slice(chunk),
            }
            (take, newline.is_some())
        };
        input.consume(taken);
        if ended {
            return match over {
                Some((seen, head)) => Line::Oversized {
                    line_bytes: seen.saturating_sub(1),
                    head,
                },
                None => Line::Whole(line),
            };
        }
    }
}

/// What [`read_lines`] answers itself, beside the lines it cannot read.
#[derive(Debug)]
pub struct Answers {
    /// Where its replies go, for [`write_lines`] (whole lines).
    pub replies: UnboundedSender<Vec<u8>>,
    /// The longest line read, line feed included, bytes.
    pub max_bytes: usize,
    /// The `result` of a `tools/list` reply (`{"tools": [...]}`, JSON
    /// text), when the proxy answers `tools/list` itself: each server tool
    /// there is the object the server wrote, byte for byte (rmcp's `Tool`
    /// would drop members it has no field for;
    /// `upstream::Connection::raw_tools`).
    pub tools_list: Option<String>,
    /// The ids of the requests passed to rmcp and not answered yet, shared
    /// with the [`Tracked`] transport that sees rmcp's replies.
    pub in_flight: InFlight,
    /// The ids rmcp could not echo as written, and the ids standing for
    /// them, shared with [`write_lines`], which writes them back.
    pub aliases: Aliases,
}

/// What starts the ids the proxy gives rmcp in place of ids it could not
/// echo as written ([`Aliases`]).
const ALIAS_PREFIX: &str = "okn-benchmark-proxy-id:";

/// What rmcp writes before a reply's id, when the id is an alias
/// ([`Aliases`]): its reply objects start with `jsonrpc`, then `id`.
const ALIASED_REPLY: &str = "{\"jsonrpc\":\"2.0\",\"id\":\"okn-benchmark-proxy-id:";

/// Request ids that rmcp could not echo as the agent wrote them, each
/// passed to rmcp as an alias that it can (issue 24, item 18). JSON-RPC 2.0
/// allows any number as an id, and a reply must carry the request's id;
/// rmcp holds a number id as an i64, so it refuses `1e400`, `1.5` and
/// integers past 2^63, and writes `2.0`, `1e3` and `-0` back as `2`, `1000`
/// and `0`. Such an id (and a string id that starts like an alias, so that
/// no agent id is ever taken for one) is replaced in the request by a
/// string `okn-benchmark-proxy-id:N`; [`write_lines`] writes the id as the
/// agent wrote it back into the reply, and a cancellation naming the id is
/// given the alias too. One id, as written, always has one alias, so two
/// requests in flight under it are still one id ([`InFlight`]).
#[derive(Debug, Clone, Default)]
pub struct Aliases(std::sync::Arc<std::sync::Mutex<AliasTable>>);

/// The aliases given so far, both ways.
#[derive(Debug, Default)]
struct AliasTable {
    /// An id as written (JSON text) → its alias (the string, unquoted).
    by_written: std::collections::HashMap<String, String>,
    /// An alias → the id as written.
    written: std::collections::HashMap<String, String>,
}

/// Whether rmcp would not echo the id written `raw` (JSON text) as written
/// ([`Aliases`]).
fn needs_alias(raw: &str) -> bool {
    if let Some(text) = raw.strip_prefix('"') {
        return text.starts_with(ALIAS_PREFIX);
    }
    is_json_number(raw) && !raw.parse::<i64>().is_ok_and(|n| n.to_string() == raw)
}

/// The members of a request [`Aliases::rewrite`] looks at, each where the
/// line holds it.
#[derive(serde::Deserialize)]
struct IdAndParams<'a> {
    #[serde(borrow)]
    id: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a serde_json::value::RawValue>,
}

/// The `requestId` of a cancellation's params, where the line holds it.
#[derive(serde::Deserialize)]
struct Cancelled<'a> {
    #[serde(rename = "requestId", borrow)]
    request_id: Option<&'a serde_json::value::RawValue>,
}

impl Aliases {
    /// The alias of the id written `raw`, made when there is none yet.
    fn alias(&self, raw: &str) -> String {
        let mut table = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(alias) = table.by_written.get(raw) {
            return alias.clone();
        }
        let alias = format!("{ALIAS_PREFIX}{}", table.written.len());
        table.by_written.insert(raw.to_string(), alias.clone());
        table.written.insert(alias.clone(), raw.to_string());
        alias
    }

    /// The id as written that `alias` stands for.
    fn written(&self, alias: &str) -> Option<String> {
        let table = self.0.lock().unwrap_or_else(|e| e.into_inner());
        table.written.get(alias).cloned()
    }

    /// The alias the id written `raw` has, if it has one.
    fn existing(&self, raw: &str) -> Option<String> {
        let table = self.0.lock().unwrap_or_else(|e| e.into_inner());
        table.by_written.get(raw).cloned()
    }

    /// `line` (a JSON object) with its id replaced by its alias when rmcp
    /// would not echo it as written, and a cancellation's `requestId` when
    /// that id has one; with the alias and the id as written. `None` when
    /// nothing is replaced (any other line, one that is not JSON included).
    pub fn rewrite(&self, line: &[u8]) -> Option<(Vec<u8>, String, String)> {
        let text = std::str::from_utf8(line).ok()?;
        let message: IdAndParams = serde_json::from_str(text).ok()?;
        let at = |raw: &serde_json::value::RawValue| {
            let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
            start..start + raw.get().len()
        };
        let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
        let mut aliased = None;
        if let Some(id) = message.id.filter(|id| needs_alias(id.get())) {
            let alias = self.alias(id.get());
            edits.push((at(id), format!("\"{alias}\"")));
            aliased = Some((alias, id.get().to_string()));
        }
        if message.method.as_deref() == Some("notifications/cancelled")
            && let Some(params) = message.params
            && let Ok(Cancelled {
                request_id: Some(id),
            }) = serde_json::from_str::<Cancelled>(params.get())
            && let Some(alias) = self.existing(id.get())
        {
            edits.push((at(id), format!("\"{alias}\"")));
            aliased.get_or_insert((alias, id.get().to_string()));
        }
        let (alias, raw) = aliased?;
        edits.sort_by_key(|(range, _)| range.start);
        let mut out = Vec::with_capacity(line.len() + 32);
        let mut from = 0;
        for (range, text) in edits {
            out.extend_from_slice(&line[from..range.start]);
            out.extend_from_slice(text.as_bytes());
            from = range.end;
        }
        out.extend_from_slice(&line[from..]);
        Some((out, alias, raw))
    }

    /// `head`, the start of a line written to the agent host, with the
    /// alias it opens with ([`ALIASED_REPLY`]) given back as the id the
    /// agent wrote; `None` when `head` opens with no alias whole.
    fn restore(&self, head: &[u8]) -> Option<Vec<u8>> {
        let rest = head.strip_prefix(ALIASED_REPLY.as_bytes())?;
        let close = memchr::memchr(b'"', rest)?;
        let alias = format!(
            "{ALIAS_PREFIX}{}",
            std::str::from_utf8(&rest[..close]).ok()?
        );
        let raw = self.written(&alias)?;
        let mut out = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
        out.extend_from_slice(raw.as_bytes());
        out.extend_from_slice(&rest[close + 1..]);
        Some(out)
    }
}

impl Rejected {
    /// This rejection of the aliased form of `line` ([`Aliases::rewrite`]),
    /// given back the id as the agent wrote it (`raw`, whose alias is
    /// `alias`): in the reply, the record and the preview.
    fn unaliased(mut self, alias: &str, raw: &str, line: &[u8]) -> Rejected {
        if let Some(reply) = &self.reply {
            let quoted = format!("\"id\":\"{alias}\"");
            if let Some(at) = memchr::memmem::find(reply, quoted.as_bytes()) {
                let mut fixed = reply[..at].to_vec();
                fixed.extend_from_slice(format!("\"id\":{raw}").as_bytes());
                fixed.extend_from_slice(&reply[at + quoted.len()..]);
                self.reply = Some(fixed);
            }
        }
        if self.record.id == Some(Value::String(alias.to_string())) {
            self.record.id = Some(recorded_id(raw));
        }
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        self.record.line_preview = preview(body);
        self.line_head = head(body);
        self
    }
}

/// The ids of the agent host's requests in flight: passed to rmcp and not
/// yet answered (issue 24, item 18). rmcp keeps one entry per id, so a
/// second request under an id in flight would take the first one's place
/// and one of the two would never be answered; [`read_lines`] answers it
/// instead, under that id, with -32600 Invalid Request.
#[derive(Debug, Clone, Default)]
pub struct InFlight(
    std::sync::Arc<std::sync::Mutex<std::collections::HashSet<rmcp::model::RequestId>>>,
);

impl InFlight {
    /// Marks `id` in flight.
    fn begin(&self, id: rmcp::model::RequestId) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(id);
    }

    /// Whether `id` is in flight.
    fn holds(&self, id: &rmcp::model::RequestId) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(id)
    }

    /// `id` was answered (or cancelled, and rmcp will not answer it).
    fn end(&self, id: &rmcp::model::RequestId) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
    }
}

/// rmcp's transport to the agent host, watched: each reply rmcp sends ends
/// its id's time in flight ([`InFlight`]), and so does the agent's
/// `notifications/cancelled` for it (rmcp then drops the reply).
pub struct Tracked<T> {
    inner: T,
    in_flight: InFlight,
}

impl<T> Tracked<T> {
    /// `inner`, its replies ending the ids of `in_flight`.
    pub fn new(inner: T, in_flight: InFlight) -> Tracked<T> {
        Tracked { inner, in_flight }
    }
}

impl<T> rmcp::transport::Transport<rmcp::RoleServer> for Tracked<T>
where
    T: rmcp::transport::Transport<rmcp::RoleServer>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<rmcp::RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        use rmcp::model::JsonRpcMessage;
        match &item {
            JsonRpcMessage::Response(response) => self.in_flight.end(&response.id),
            JsonRpcMessage::Error(error) => {
                if let Some(id) = &error.id {
                    self.in_flight.end(id);
                }
            }
            _ => {}
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<rmcp::RoleServer>> {
        use rmcp::model::{ClientNotification, JsonRpcMessage};
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(n) = &message
            && let ClientNotification::CancelledNotification(cancelled) = &n.notification
            && let Some(id) = &cancelled.params.request_id
        {
            self.in_flight.end(id);
        }
        Some(message)
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The method and id of a JSON-RPC message, the rest skipped.
#[derive(serde::Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<&'a serde_json::value::RawValue>,
}

/// A request whose id is in flight already ([`InFlight`]): answered under
/// that id with -32600 Invalid Request, and recorded.
fn duplicate_id(line: &[u8], raw_id: &str, method: String) -> Rejected {
    let id = serde_json::from_str::<Value>(raw_id).unwrap_or(Value::Null);
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let tool = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("params")?.get("name")?.as_str().map(str::to_string));
    let found = Recovered {
        id: Some(id.clone()),
        raw_id: Some(raw_id.to_string()),
        method: Some(method),
        tool,
        params_damaged: false,
        no_reply: false,
    };
    rejected(
        format!(
            "Invalid Request: id {id} is already in use by a request still in flight; give each request an id of its own (JSON-RPC 2.0; MCP request ids are unique within a session)"
        ),
        INVALID_REQUEST,
        &found,
        body.len(),
        body.strip_suffix(b"\r").unwrap_or(body),
    )
}

/// Reads the agent host's lines from `input` until it ends: passes each
/// line that is JSON to rmcp through `to_rmcp`, except a `tools/list`
/// request when `answers.tools_list` is set, which is answered here with
/// it; for each line that is not JSON calls `on_reject` (which records it)
/// and then queues its reply on `answers.replies` for [`write_lines`]. A
/// line longer than `answers.max_bytes` is rejected without being held.
/// Stops when `input` ends or fails, or rmcp stops reading; dropping
/// `to_rmcp` then tells rmcp the input has ended.
pub async fn read_lines<R, W, F>(input: R, mut to_rmcp: W, answers: Answers, mut on_reject: F)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
    F: FnMut(&Rejected),
{
    let mut input = BufReader::new(input);
    loop {
        let rejected = match next_line(&mut input, answers.max_bytes).await {
            Line::End => break,
            Line::Oversized { line_bytes, head } => oversized(line_bytes, &head, answers.max_bytes),
            Line::Whole(line) => {
                // An id rmcp would not echo as written goes to it as an
                // alias ([`Aliases`]); what is answered here names the id
                // as written.
                let aliased = answers.aliases.rewrite(&line);
                let (mut passed, restore) = match aliased {
                    Some((aliased, alias, raw)) => (aliased, Some((alias, raw))),
                    None => (line.clone(), None),
                };
                let unalias = |r: Rejected| match &restore {
                    Some((alias, raw)) => r.unaliased(alias, raw, &line),
                    None => r,
                };
                match judge(&passed) {
                    Verdict::Blank => continue,
                    Verdict::Reject(rejected) => unalias(*rejected),
                    Verdict::Pass => {
                        if let Some(rejected) =
                            begin_request(&passed, &answers.in_flight, answers.tools_list.is_some())
                        {
                            let rejected = unalias(rejected);
                            on_reject(&rejected);
                            if let Some(reply) = rejected.reply {
                                let _ = answers.replies.send(reply);
                            }
                            continue;
                        }
                        if let Some(reply) = tools_list_reply(&line, answers.tools_list.as_deref())
                        {
                            let _ = answers.replies.send(reply);
                            continue;
                        }
                        if !passed.ends_with(b"\n") {
                            passed.push(b'\n');
                        }
                        if to_rmcp.write_all(&passed).await.is_err()
                            || to_rmcp.flush().await.is_err()
                        {
                            break;
                        }
                        continue;
                    }
                }
            }
        };
        on_reject(&rejected);
        if let Some(reply) = rejected.reply {
            let _ = answers.replies.send(reply);
        }
    }
    let _ = to_rmcp.shutdown().await;
}

/// Marks the request `line` (JSON that [`judge`] passed) in flight, or,
/// when its id is in flight already, the rejection to answer and record
/// instead ([`InFlight`]). A `tools/list` answered by [`read_lines`]
/// itself is never in flight: it is answered at once.
fn begin_request(line: &[u8], in_flight: &InFlight, lists_tools: bool) -> Option<Rejected> {
    let head: Head = serde_json::from_slice(line).ok()?;
    let (method, raw) = (head.method?, head.id?);
    let id: rmcp::model::RequestId = serde_json::from_str(raw.get()).ok()?;
    let answered_here = lists_tools && method == "tools/list";
    if !in_flight.holds(&id) {
        if !answered_here {
            in_flight.begin(id);
        }
        return None;
    }
    Some(duplicate_id(line, raw.get(), method.into_owned()))
}

/// The reply to `line` when it is a `tools/list` request (a JSON object
/// with that `method` and an `id`) and `result` is set: one JSON-RPC
/// response line carrying `result` whole, every page at once (as rmcp's
/// `ListToolsResult::with_all_items` answers a cursor), under the id as
/// the agent wrote it (a 30-digit number stays as written). `None` for any
/// other line, which then goes to rmcp.
fn tools_list_reply(line: &[u8], result: Option<&str>) -> Option<Vec<u8>> {
    #[derive(serde::Deserialize)]
    struct Request<'a> {
        method: Option<&'a str>,
        #[serde(borrow)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let result = result?;
    memchr::memmem::find(line, b"tools/list")?;
    let request: Request = serde_json::from_slice(line).ok()?;
    if request.method != Some("tools/list") {
        return None;
    }
    let id = request.id?.get();
    Some(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}\n").into_bytes())
}

/// rmcp's output, line by line, with each alias id given back as the id
/// the agent wrote ([`Aliases`]): the start of a line is held until it is
/// known whether it opens with an alias.
struct Restorer {
    aliases: Aliases,
    /// The start of the current line, held.
    head: Vec<u8>,
    /// The current line's start is still being read.
    at_line_start: bool,
}

impl Restorer {
    /// What can be written of `bytes`, the next of rmcp's output.
    fn feed(&mut self, mut bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len() + 64);
        while !bytes.is_empty() {
            let take = memchr::memchr(b'\n', bytes).map_or(bytes.len(), |i| i + 1);
            let (part, rest) = bytes.split_at(take);
            bytes = rest;
            let ends_line = part.last() == Some(&b'\n');
            if !self.at_line_start {
                out.extend_from_slice(part);
                self.at_line_start = ends_line;
                continue;
            }
            self.head.extend_from_slice(part);
            let prefix = ALIASED_REPLY.as_bytes();
            let undecided = !ends_line
                && if self.head.len() < prefix.len() {
                    prefix.starts_with(&self.head)
                } else {
                    self.head.starts_with(prefix)
                        && self.head.len() < prefix.len() + 32
                        && memchr::memchr(b'"', &self.head[prefix.len()..]).is_none()
                };
            if undecided {
                continue;
            }
            let head = std::mem::take(&mut self.head);
            match self.aliases.restore(&head) {
                Some(restored) => out.extend(restored),
                None => out.extend(head),
            }
            self.at_line_start = ends_line;
        }
        out
    }

    /// Whether what was written so far ends inside a line.
    fn mid_line(&self) -> bool {
        !self.at_line_start || !self.head.is_empty()
    }
}

/// Copies rmcp's output (`from_rmcp`) to `out` as it comes, and writes each
/// reply from `replies` (whole lines) only where rmcp's output is between
/// lines, so no line is ever cut by another. Returns when rmcp's output has
/// ended and no reply can come any more (every sender dropped), having
/// written everything.
///
/// Errors: writing to `out` failed (the agent host closed its input).
pub async fn write_lines<R, W>(
    mut from_rmcp: R,
    mut replies: UnboundedReceiver<Vec<u8>>,
    mut out: W,
    aliases: Aliases,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut chunk = vec![0u8; 64 * 1024];
    let mut queued: VecDeque<Vec<u8>> = VecDeque::new();
    let mut mid_line = false;
    let mut restorer = Restorer {
        aliases,
        head: Vec::new(),
        at_line_start: true,
    };
    let (mut rmcp_open, mut replies_open) = (true, true);
    loop {
        if !mid_line && !queued.is_empty() {
            while let Some(line) = queued.pop_front() {
                out.write_all(&line).await?;
            }
            out.flush().await?;
        }
        if !rmcp_open && !replies_open {
            break;
        }
        tokio::select! {
            read = from_rmcp.read(&mut chunk), if rmcp_open => match read {
                Ok(n) if n > 0 => {
                    let bytes = restorer.feed(&chunk[..n]);
                    out.write_all(&bytes).await?;
                    out.flush().await?;
                    mid_line = restorer.mid_line();
                }
                _ => {
                    rmcp_open = false;
                    let held = std::mem::take(&mut restorer.head);
                    out.write_all(&held).await?;
                    mid_line = !(restorer.at_line_start && held.is_empty())
                        && held.last() != Some(&b'\n');
                    if mid_line {
                        // rmcp stopped inside a line: end it, so a reply
                        // after it is still a line of its own.
                        out.write_all(b"\n").await?;
                        mid_line = false;
                    }
                }
            },
            reply = replies.recv(), if replies_open => match reply {
                Some(line) => queued.push_back(line),
                None => replies_open = false,
            },
        }
    }
    out.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rejected(line: impl AsRef<[u8]>) -> Rejected {
        let line = line.as_ref();
        match judge(line) {
            Verdict::Reject(r) => *r,
            other => panic!("{}: {other:?}", String::from_utf8_lossy(line)),
        }
    }

    fn reply(r: &Rejected) -> Value {
        let bytes = r.reply.as_deref().expect("a reply");
        assert!(bytes.ends_with(b"\n"));
        assert_eq!(bytes.iter().filter(|b| **b == b'\n').count(), 1);
        serde_json::from_slice(bytes).unwrap()
    }

    /// A `tools/call` whose arguments nest `depth` levels (the arguments
    /// object counting as one), with id 7.
    fn nested_call(depth: usize) -> String {
        let inner = format!("{}1{}", "[".repeat(depth - 1), "]".repeat(depth - 1));
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"submit_csv","arguments":{{"csv":"a\n","deep":{inner}}}}}}}"#
        )
    }

    /// Issue 24, item 18: arguments nested deeper than the proxy reads were
    /// answered -32700 with id null, and the call waited for ever. Each
    /// depth past [`MAX_MESSAGE_DEPTH`] is answered under its id; a message
    /// at the limit passes, and so does one whose brackets are in strings.
    #[test]
    fn a_deeply_nested_request_is_answered_under_its_id() {
        assert_eq!(judge(nested_call(124).as_bytes()), Verdict::Pass);
        for depth in [125, 126, 127, 128, 10_000, 1_000_000] {
            let r = rejected(nested_call(depth));
            let reply = reply(&r);
            assert_eq!(reply["id"], 7, "{depth}");
            assert_eq!(reply["error"]["code"], INVALID_PARAMS, "{depth}");
            let message = reply["error"]["message"].as_str().unwrap();
            assert!(
                message.starts_with(&format!(
                    "Invalid params: the message nests arrays and objects {} levels deep",
                    depth + 2
                )),
                "{message}"
            );
            assert_eq!(r.tool.as_deref(), Some("submit_csv"));
            assert_eq!(r.record.method.as_deref(), Some("tools/call"));
        }
        let brackets_in_a_string = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"q","arguments":{{"s":"{}"}}}}}}"#,
            "[{".repeat(5000)
        );
        assert_eq!(judge(brackets_in_a_string.as_bytes()), Verdict::Pass);
        // Deep outside the params: an invalid request, under its id.
        let deep_member = format!(
            r#"{{"jsonrpc":"2.0","id":"x","method":"ping","extra":{}{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let r = rejected(deep_member);
        assert_eq!(reply(&r)["id"], "x");
        assert_eq!(reply(&r)["error"]["code"], INVALID_REQUEST);
        // A deep notification is recorded, never answered; a deep line that
        // is not JSON is a parse error.
        let notification = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/x","params":{{"a":{}{}}}}}"#,
            "[".repeat(300),
            "]".repeat(300)
        );
        assert_eq!(rejected(notification).reply, None);
        let truncated = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"x","params":{}"#,
            "[".repeat(300)
        );
        assert_eq!(reply_code(&rejected(truncated)), PARSE_ERROR);
        // Not UTF-8 as well as deep: still answered under its id.
        let mut bytes = nested_call(300).into_bytes();
        let at = bytes.iter().position(|b| *b == b'a').unwrap();
        bytes[at] = 0xff;
        let r = rejected(&bytes);
        assert_eq!(reply(&r)["id"], 7);
    }

    #[test]
    fn requests_rmcp_would_answer_without_their_id_are_answered_here_with_it() {
        for (line, code, id) in [
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[1,2]}"#,
                INVALID_PARAMS,
                json!(9),
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":"x"}"#,
                INVALID_PARAMS,
                json!(9),
            ),
            (
                r#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"q","arguments":"x"}}"#,
                INVALID_PARAMS,
                json!(20),
            ),
            (
                r#"{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":5}}"#,
                INVALID_PARAMS,
                json!(21),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                INVALID_REQUEST,
                json!(1.5),
            ),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                INVALID_REQUEST,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
                INVALID_REQUEST,
                Value::Null,
            ),
            (r#"{"id":3,"method":"ping"}"#, INVALID_REQUEST, json!(3)),
            (
                r#"{"jsonrpc":"1.0","id":4,"method":"ping"}"#,
                INVALID_REQUEST,
                json!(4),
            ),
        ] {
            let Verdict::Reject(r) = judge(line.as_bytes()) else {
                panic!("{line} passed");
            };
            assert_eq!(r.record.code, Some(code), "{line}");
            let reply = reply(&r);
            assert_eq!(reply["id"], id, "{line}");
            assert_eq!(reply["error"]["code"], code, "{line}");
        }
        // A notification that is not a valid message is recorded, never
        // answered.
        let Verdict::Reject(r) = judge(br#"{"jsonrpc":"1.0","method":"notifications/x"}"#) else {
            panic!("passed");
        };
        assert!(r.reply.is_none());
    }

    /// Issue 24, item 18: an id is answered as the agent wrote it, so an
    /// integer past what a double holds exactly is still its own.
    #[test]
    fn an_id_is_echoed_as_written() {
        for line in [
            r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/call","params":{"name":"q","arguments":{"a":"\ud800"}}}"#,
            r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/call","params":{},}"#,
        ] {
            let r = rejected(line);
            let text = String::from_utf8(r.reply.unwrap()).unwrap();
            assert!(
                text.starts_with(
                    r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"error":{"code":"#
                ),
                "{text}"
            );
        }
    }

    /// Issue 24, item 18: a batch was answered once, under id null, so
    /// none of its requests got a reply under its id. Each request in it
    /// is answered under its own id, in one batch reply; notifications are
    /// not answered, and an empty batch gets one error under null.
    #[test]
    fn each_request_in_a_batch_is_answered_under_its_id() {
        let r = rejected(
            r#"[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"b","method":"tools/list"},7]"#,
        );
        let bytes = r.reply.as_deref().unwrap();
        assert_eq!(bytes.iter().filter(|b| **b == b'\n').count(), 1);
        let replies: Value = serde_json::from_slice(bytes).unwrap();
        let ids: Vec<&Value> = replies
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["id"])
            .collect();
        assert_eq!(ids, [&json!(5), &json!("b"), &Value::Null]);
        assert!(
            replies
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["error"]["code"] == INVALID_REQUEST)
        );
        assert_eq!(r.record.code, Some(INVALID_REQUEST));
        let empty: Value =
            serde_json::from_slice(rejected("[]").reply.as_deref().unwrap()).unwrap();
        assert_eq!(empty[0]["id"], Value::Null);
        assert_eq!(
            rejected(r#"[{"jsonrpc":"2.0","method":"notifications/x"}]"#).reply,
            None
        );
    }

    /// Issue 24, item 18: a batch holding one request nested too deep was
    /// answered once, under id null; a batch with a trailing comma or cut
    /// short was answered -32700 under id null though its first requests
    /// were whole. Each request is answered under its own id, as written.
    #[test]
    fn each_request_of_a_deep_or_damaged_batch_is_answered_under_its_id() {
        let call = |id: &str, arguments: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"ok","arguments":{arguments}}}}}"#
            )
        };
        let deep = format!(r#"{{"q":{}{}}}"#, "[".repeat(300), "]".repeat(300));
        let r = rejected(format!("[{},{}]", call("163", "{}"), call("1e400", &deep)));
        let replies = reply_array(&r);
        assert_eq!(replies.len(), 2, "{replies:?}");
        assert!(replies[0].starts_with(r#"{"jsonrpc":"2.0","id":163,"error":{"code":-32600,"#));
        assert!(
            replies[1].starts_with(r#"{"jsonrpc":"2.0","id":1e400,"error":{"code":-32602,"#),
            "{}",
            replies[1]
        );
        assert!(replies[1].contains("nests arrays and objects 303 levels deep"));
        for (line, ids) in [
            (
                format!("[{},{},]", call("168", "{}"), call("169", "{}")),
                vec!["168", "169"],
            ),
            (
                format!("[{},{}", call("170", "{}"), &call("171", "{}")[..30]),
                vec!["170", "171"],
            ),
            (
                format!("[{}, {}", call("\"a\"", "{}"), &call("172", "{}")[..12]),
                vec!["\"a\""],
            ),
        ] {
            let r = rejected(&line);
            let replies = reply_array(&r);
            let got: Vec<String> = replies
                .iter()
                .map(|reply| {
                    let (_, rest) = reply.split_once(r#""id":"#).unwrap();
                    rest.split_once(r#","error""#).unwrap().0.to_string()
                })
                .collect();
            assert_eq!(got, ids, "{line}");
            assert!(
                replies.iter().all(|r| r.contains("\"code\":-32700")),
                "{line}"
            );
            assert_eq!(r.record.code, Some(PARSE_ERROR));
        }
        // Nothing whole: one answer under null, as before.
        let r = rejected("[1, 2,");
        assert_eq!(reply(&r)["id"], Value::Null);
        assert_eq!(reply_code(&r), PARSE_ERROR);
    }

    /// The replies of a batch reply, as the text of each.
    fn reply_array(r: &Rejected) -> Vec<String> {
        let bytes = r.reply.as_deref().expect("a reply");
        let items: Vec<Box<serde_json::value::RawValue>> = serde_json::from_slice(bytes).unwrap();
        items.iter().map(|i| i.get().to_string()).collect()
    }

    /// Issue 24, item 18: an id of `1e400` was answered under null, and
    /// integers past 2^63 refused, though JSON-RPC allows any number; `2.0`,
    /// `1e3` and `-0` came back as `2`, `1000` and `0`. Each such id goes to
    /// rmcp as an alias, which the writer gives back as written; an id
    /// rmcp echoes as written is left alone, and so is a line that is not
    /// a request.
    #[test]
    fn an_id_rmcp_cannot_echo_travels_as_an_alias_and_comes_back_as_written() {
        let aliases = Aliases::default();
        for raw in [
            "1e400",
            "9223372036854775808",
            "18446744073709551616",
            "123456789012345678901234567890123456789",
            "-123456789012345678901234567890123456789",
            "1.5",
            "2.0",
            "1e3",
            "-0",
            r#""okn-benchmark-proxy-id:0""#,
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#);
            let (aliased, alias, written) = aliases.rewrite(line.as_bytes()).unwrap();
            assert_eq!(written, raw);
            assert!(alias.starts_with(ALIAS_PREFIX));
            assert_eq!(judge(&aliased), Verdict::Pass, "{raw}");
            // The same id has the same alias.
            assert_eq!(aliases.rewrite(line.as_bytes()).unwrap().1, alias);
            // rmcp's reply, cut anywhere, comes back under the id as written.
            let reply = format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{alias}\",\"result\":{{}}}}\n");
            for size in 1..reply.len() {
                let mut restorer = Restorer {
                    aliases: aliases.clone(),
                    head: Vec::new(),
                    at_line_start: true,
                };
                let mut out = Vec::new();
                for chunk in reply.as_bytes().chunks(size) {
                    out.extend(restorer.feed(chunk));
                }
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    format!("{{\"jsonrpc\":\"2.0\",\"id\":{raw},\"result\":{{}}}}\n"),
                    "{raw}, chunks of {size}"
                );
                assert!(!restorer.mid_line());
            }
            // A cancellation of it names the alias.
            let cancel = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{raw}}}}}"#
            );
            let (cancelled, ..) = aliases.rewrite(cancel.as_bytes()).unwrap();
            assert!(
                String::from_utf8(cancelled)
                    .unwrap()
                    .contains(&format!("\"requestId\":\"{alias}\""))
            );
        }
        for line in [
            r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"ping"}"#,
            r#"[{"jsonrpc":"2.0","id":1e400,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":1e400,"method":"ping""#,
        ] {
            assert!(aliases.rewrite(line.as_bytes()).is_none(), "{line}");
        }
        // A line another alias opens is written as it is.
        let mut restorer = Restorer {
            aliases: aliases.clone(),
            head: Vec::new(),
            at_line_start: true,
        };
        let other = "{\"jsonrpc\":\"2.0\",\"id\":\"okn-benchmark-proxy-id:999\",\"result\":{}}\n";
        assert_eq!(restorer.feed(other.as_bytes()), other.as_bytes());
    }

    /// A damaged request under an id rmcp cannot hold is answered under
    /// that id as written, and the record keeps its text.
    #[test]
    fn a_damaged_request_keeps_an_id_past_a_double() {
        let r = rejected(r#"{"jsonrpc":"2.0","id":1e400,"method":"tools/list","params":{},}"#);
        let text = String::from_utf8(r.reply.clone().unwrap()).unwrap();
        assert!(
            text.starts_with(r#"{"jsonrpc":"2.0","id":1e400,"error":{"code":-32700"#),
            "{text}"
        );
        assert_eq!(r.record.id, Some(json!("1e400")));
        let r = rejected(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{},}"#);
        assert_eq!(r.record.id, Some(json!(7)));
    }

    #[test]
    fn json_passes_and_blank_lines_are_skipped() {
        assert_eq!(
            judge(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"),
            Verdict::Pass
        );
        assert_eq!(
            judge(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":{\"a\": \"\\ud83d\\ude00\"}}\r\n"),
            Verdict::Pass
        );
        assert_eq!(judge(b"\n"), Verdict::Blank);
        assert_eq!(judge(b" \t\r\n"), Verdict::Blank);
    }

    #[test]
    fn a_trailing_comma_is_a_parse_error_under_the_requests_id() {
        let line = r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{},}"#;
        let r = rejected(line);
        let reply = reply(&r);
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["error"]["code"], PARSE_ERROR);
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("Parse error: the message is not JSON (trailing comma"),
            "{message}"
        );
        assert_eq!(r.record.code, Some(PARSE_ERROR));
        assert_eq!(
            (r.record.id.clone(), r.record.method.as_deref()),
            (Some(json!(7)), Some("tools/list"))
        );
        assert_eq!(r.record.line_bytes, line.len());
        assert_eq!(r.record.line_preview, line);
    }

    /// Issue 24, item 18: a request that is not JSON was answered with id
    /// null even when its id was read whole before the damage; it is
    /// answered under that id, and with null only when no id came first.
    #[test]
    fn a_damaged_request_is_answered_under_the_id_read_before_the_damage() {
        for (line, id, tool) in [
            (
                r#"{"jsonrpc":"2.0","id":"c-9","method":"tools/call","params":{"name":"submit_csv","arguments":{"csv":"a"#,
                json!("c-9"),
                None,
            ),
            (
                r#" { "id" : 12 , "jsonrpc":"2.0","method":"tools/call","params":{"name":"q"}, ]"#,
                json!(12),
                Some("q"),
            ),
            (r#"{"jsonrpc":"2.0","method":"ping","id":5"#, json!(5), None),
            (
                r#"{"jsonrpc":"2.0","method":"tools/call","params":{"#,
                Value::Null,
                None,
            ),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x","#,
                Value::Null,
                None,
            ),
            ("[1, 2,", Value::Null, None),
        ] {
            let r = rejected(line);
            assert_eq!(reply(&r)["id"], id, "{line}");
            assert_eq!(reply_code(&r), PARSE_ERROR, "{line}");
            assert_eq!(r.tool.as_deref(), tool, "{line}");
        }
        // A damaged response gets no reply.
        assert_eq!(
            rejected(r#"{"jsonrpc":"2.0","id":4,"result":{},"#).reply,
            None
        );
        // A line too long to read is answered under the id at its start.
        let r = oversized(10_000, br#"{"jsonrpc":"2.0","id":88,"method":"tools/call","params":{"name":"submit_csv","arguments":{"csv":"a,b"#, 100);
        assert_eq!(reply(&r)["id"], 88);
        assert_eq!(r.tool, None);
    }

    #[test]
    fn a_lone_surrogate_in_a_call_answers_its_id_with_invalid_params() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"submit_csv","arguments":{"csv":"a\n\ud800\n"}}}"#[..],
            br#"{"jsonrpc":"2.0","id":"x-3","method":"tools/call","params":{"name":"submit_csv","arguments":{"csv":"a\n\udc00b"}}}"#,
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"submit_csv\",\"arguments\":{\"csv\":\"a\xff\"}}}",
        ] {
            let r = rejected(line);
            let reply = reply(&r);
            assert_eq!(reply["error"]["code"], INVALID_PARAMS, "{reply}");
            assert!(reply["id"] == json!(3) || reply["id"] == json!("x-3"), "{reply}");
            assert_eq!(r.record.id, Some(reply["id"].clone()));
            assert_eq!(r.record.method.as_deref(), Some("tools/call"));
            assert_eq!(r.tool.as_deref(), Some("submit_csv"));
        }
        let message = rejected(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"submit_csv","arguments":{"csv":"\ud800"}}}"#,
        )
        .message;
        assert!(
            message.starts_with("Invalid params: a string holds a lone UTF-16 surrogate escape (such as \\ud800), which is not Unicode text ("),
            "{message}"
        );
    }

    #[test]
    fn a_valid_surrogate_pair_and_an_escaped_backslash_are_left_alone() {
        assert_eq!(lenient(br#""\ud83d\ude00""#, '?'), r#""\ud83d\ude00""#);
        assert_eq!(lenient(br#""\\ud800""#, '?'), r#""\\ud800""#);
        assert_eq!(lenient(br#""\ud800\ud800x""#, '?'), r#""??x""#);
        assert_eq!(lenient(b"\"\\", '?'), "\"\\");
        assert_eq!(lenient(b"\"\\u12", '?'), "\"\\u12");
    }

    #[test]
    fn an_id_that_is_itself_damaged_is_not_recovered() {
        let r = rejected(r#"{"jsonrpc":"2.0","id":"\ud800","method":"tools/call","params":{}}"#);
        let reply = reply(&r);
        assert_eq!(reply["id"], Value::Null);
        assert_eq!(reply["error"]["code"], PARSE_ERROR);
        assert_eq!(r.record.method.as_deref(), Some("tools/call"));
        // Damage outside the params is no params error.
        let r = rejected(r#"{"jsonrpc":"2.0\ud800","id":4,"method":"ping"}"#);
        assert_eq!(reply_code(&r), PARSE_ERROR);
        assert_eq!(r.record.id, Some(json!(4)));
    }

    fn reply_code(r: &Rejected) -> i64 {
        reply(r)["error"]["code"].as_i64().unwrap()
    }

    #[test]
    fn notifications_and_responses_get_no_reply_but_are_recorded() {
        let r = rejected(
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"\ud800"}}"#,
        );
        assert_eq!(r.reply, None);
        assert_eq!(r.record.code, None);
        assert_eq!(r.record.method.as_deref(), Some("notifications/message"));
        let r = rejected(r#"{"jsonrpc":"2.0","id":1,"result":{"x":"\ud800"}}"#);
        assert_eq!(r.reply, None);
        // A damaged member name may have been the id's: answered, id null.
        let r = rejected(r#"{"jsonrpc":"2.0","i\ud800d":5,"method":"ping"}"#);
        assert_eq!(reply(&r)["id"], Value::Null);
    }

    #[test]
    fn an_oversized_line_is_answered_without_being_held() {
        let r = oversized(1000, b"{\"jsonrpc\"", 100);
        assert_eq!(reply_code(&r), PARSE_ERROR);
        assert_eq!(r.record.line_bytes, 1000);
        assert_eq!(r.record.line_preview, "{\"jsonrpc\"");
        assert!(
            r.message.contains("1000 bytes, more than the 100 bytes"),
            "{}",
            r.message
        );
    }

    /// Runs `read_lines` over `input` with a limit of `max` bytes: what rmcp
    /// received, the replies, and the rejections recorded.
    async fn filter(input: &[u8], max: usize) -> (Vec<u8>, Vec<Vec<u8>>, Vec<Rejected>) {
        let (to_rmcp, mut rmcp_in) = tokio::io::duplex(1 << 16);
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
        let mut recorded = Vec::new();
        let answers = Answers {
            replies: sender,
            max_bytes: max,
            tools_list: None,
            in_flight: InFlight::default(),
            aliases: Aliases::default(),
        };
        let reading = read_lines(input, to_rmcp, answers, |r| recorded.push(r.clone()));
        let mut passed = Vec::new();
        let (_, read) = tokio::join!(reading, rmcp_in.read_to_end(&mut passed));
        read.unwrap();
        let mut replies = Vec::new();
        while let Ok(reply) = receiver.try_recv() {
            replies.push(reply);
        }
        (passed, replies, recorded)
    }

    /// A `tools/list` request is answered with the listed tools under its
    /// own id; anything else naming `tools/list` (a call's arguments, a
    /// message without an id) goes to rmcp, as every line does when no
    /// list is set.
    #[test]
    fn tools_list_is_answered_with_the_list_under_its_id() {
        let list = r#"{"tools":[{"name":"a","n":1e2,"big":123456789012345678901234567890,"execution":{"taskSupport":"forbidden"}}]}"#;
        let reply = tools_list_reply(
            br#"{"jsonrpc":"2.0","id":"x7","method":"tools/list","params":{"cursor":"c"}}"#,
            Some(list),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(reply).unwrap(),
            format!("{{\"jsonrpc\":\"2.0\",\"id\":\"x7\",\"result\":{list}}}\n")
        );
        // The id as the agent wrote it, digits and all.
        let reply = tools_list_reply(
            br#"{"jsonrpc":"2.0","id": 123456789012345678901234567890 ,"method":"tools/list"}"#,
            Some(list),
        )
        .unwrap();
        assert!(
            String::from_utf8(reply)
                .unwrap()
                .starts_with(r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"#)
        );
        for other in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","arguments":{"m":"tools/list"}}}"#[..],
            br#"{"jsonrpc":"2.0","method":"tools/list"}"#,
            br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
        ] {
            assert_eq!(tools_list_reply(other, Some(list)), None);
        }
        assert_eq!(
            tools_list_reply(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, None),
            None
        );
    }

    #[tokio::test]
    async fn good_lines_reach_rmcp_unchanged_and_bad_ones_are_answered() {
        let long = format!("{{\"long\":\"{}\"}}", "x".repeat(200));
        let a = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let b = r#"{"jsonrpc":"2.0","method":"x","params":{"b":"\ud83d\ude00"}}"#;
        let c = r#"{"jsonrpc":"2.0","id":"c","method":"ping"}"#;
        let input = format!("{a}\n{{\"a\":,}}\n\n{b}\r\n{long}\n{c}");
        let (passed, replies, recorded) = filter(input.as_bytes(), 100).await;
        assert_eq!(
            String::from_utf8(passed).unwrap(),
            format!("{a}\n{b}\r\n{c}\n")
        );
        assert_eq!(replies.len(), 2);
        assert_eq!(recorded.len(), 2);
        assert_eq!(recorded[1].record.line_bytes, long.len());
        assert!(recorded[1].message.contains("more than the 100 bytes"));
    }

    #[tokio::test]
    async fn replies_never_land_inside_an_rmcp_line() {
        let (mut rmcp_out, from_rmcp) = tokio::io::duplex(8);
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        let mut out = Vec::new();
        let writing = write_lines(from_rmcp, receiver, &mut out, Aliases::default());
        let feeding = async move {
            rmcp_out
                .write_all(b"{\"rmcp\":\"first line, long")
                .await
                .unwrap();
            sender.send(b"{\"reply\":1}\n".to_vec()).unwrap();
            tokio::task::yield_now().await;
            rmcp_out
                .write_all(b" enough to be split\"}\n{\"rmcp\":2}\n")
                .await
                .unwrap();
            sender.send(b"{\"reply\":2}\n".to_vec()).unwrap();
            drop(sender);
            drop(rmcp_out);
        };
        let (written, ()) = tokio::join!(writing, feeding);
        written.unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort();
        assert_eq!(
            lines,
            [
                "{\"reply\":1}",
                "{\"reply\":2}",
                "{\"rmcp\":\"first line, long enough to be split\"}",
                "{\"rmcp\":2}",
            ]
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Whatever the bytes, judging them does not panic, and a reply is
        /// one JSON-RPC error line.
        #[test]
        fn judging_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            check_verdict(&bytes);
        }

        /// The same over text shaped like JSON-RPC with escapes, surrogates
        /// and stray bytes, where the lenient reading does most of its work.
        #[test]
        fn judging_json_like_text_never_panics(
            parts in proptest::collection::vec(prop_oneof![
                Just(&b"{\"jsonrpc\":\"2.0\",\"id\":"[..]),
                Just(&b"\"method\":\"tools/call\",\"params\":{\"name\":\"submit_csv\",\"arguments\":{\"csv\":\""[..]),
                Just(&b"\\ud800"[..]), Just(&b"\\udc00"[..]), Just(&b"\\ud83d\\ude00"[..]),
                Just(&b"\\\\"[..]), Just(&b"\\u"[..]), Just(&b"\\"[..]), Just(&b"\""[..]),
                Just(&b"}"[..]), Just(&b"{"[..]), Just(&b","[..]), Just(&b":"[..]), Just(&b"1"[..]),
                Just(&b"\xff"[..]), Just(&b"\xe2\x82"[..]), Just("été 中文 😀\u{301}".as_bytes()),
                Just(&b"\n"[..]), Just(&b"\r"[..]), Just(&b"\xEF\xBB\xBF"[..]),
            ], 0..40)
        ) {
            check_verdict(&parts.concat());
        }

    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Every JSON-RPC request rmcp reads goes to it, whatever text
        /// its arguments hold; other JSON is an invalid request.
        #[test]
        fn requests_always_pass_and_other_json_is_invalid(
            text in any::<String>(),
            number in any::<i64>(),
            list in proptest::collection::vec(any::<String>(), 0..4),
        ) {
            let call = json!({"jsonrpc": "2.0", "id": number, "method": "tools/call",
                "params": {"name": text, "arguments": {"a": text, "d": list}}});
            prop_assert_eq!(judge(&serde_json::to_vec(&call).unwrap()), Verdict::Pass);
            let other = serde_json::to_vec(&json!({"a": text, "b": number, "d": list})).unwrap();
            match judge(&other) {
                Verdict::Reject(r) => prop_assert_eq!(r.record.code, Some(INVALID_REQUEST)),
                v => prop_assert!(false, "{:?}", v),
            }
        }
    }

    fn check_verdict(bytes: &[u8]) {
        if let Verdict::Reject(r) = judge(bytes) {
            assert!(r.record.line_preview.chars().count() <= LINE_PREVIEW_CHARS);
            assert_eq!(
                r.record.line_bytes,
                bytes.strip_suffix(b"\n").unwrap_or(bytes).len()
            );
            if r.reply.is_some() {
                let reply = reply(&r);
                // A batch is answered with a batch.
                let replies = match reply {
                    Value::Array(items) => items,
                    one => vec![one],
                };
                for reply in replies {
                    assert_eq!(reply["jsonrpc"], "2.0");
                    let code = reply["error"]["code"].as_i64().unwrap();
                    assert!([PARSE_ERROR, INVALID_PARAMS, INVALID_REQUEST].contains(&code));
                }
            }
        }
    }
}
