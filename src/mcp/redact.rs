//! Redaction of the values a profile sets (issue 24, item 27): every
//! header value (HTTP) and environment value (stdio) of the server under
//! test may be a credential, and a server may echo one (an `Authorization`
//! header repeated in a reply, an API key printed on stderr). Each is
//! replaced by `[redacted: NAME]` in everything written: `calls.json`,
//! `metrics.json`, `answer.csv` and `submissions/`, `upstream.stderr.log`
//! (by the proxy), `agent.json`, `agent.stderr.log`, `episode.json` and
//! `command.txt` (by `run`), the profile in `conditions/NAME.json`, and a
//! catalog's recorded replies (`docs/FORMAT.md`, "Credentials").
//!
//! A value is found as it is, as JSON writes it inside a string (quotes,
//! backslashes and control characters escaped; and with every character
//! outside ASCII as `\uXXXX`, as Python's `json.dumps` writes it), again
//! inside a JSON string (a reply quoted in a JSON report), and, for
//! a value of the form `SCHEME CREDENTIALS` (`Bearer abc...`), its
//! credentials alone. A value shorter than [`MIN_SECRET_CHARS`] characters
//! (`1`, `true`, `info`, a port) is left alone: redacting it would rewrite
//! ordinary text, a submitted answer's numbers included.

use std::borrow::Cow;

use serde_json::Value;

use crate::layout::CallRecord;

/// The fewest characters a value must have to be redacted.
pub const MIN_SECRET_CHARS: usize = 6;

/// The forms of each secret to find, and what replaces them.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// (bytes to find, replacement), longest first.
    patterns: Vec<(Vec<u8>, String)>,
}

/// `name` as it may be written in a replacement: characters other than
/// letters, digits, `_`, `-` and `.` become `_`, so the replacement is as
/// safe inside JSON or a command line as the text it replaces.
fn label(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("[redacted: {name}]")
}

/// `text` as JSON writes it inside a string: quotes, backslashes and
/// control characters escaped.
fn json_escaped(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or(text)
        .to_string()
}

/// `text` with every character outside ASCII written `\uXXXX` (UTF-16
/// code units), as Python's `json.dumps` writes it.
fn ascii_escaped(text: &str) -> String {
    let mut ascii = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            ascii.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                ascii.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    ascii
}

/// How many times a value may have been written into JSON strings: a
/// reply that is JSON (1), quoted in an agent host's JSON report (2),
/// and once more for a report quoted in turn.
const JSON_LAYERS: usize = 3;

/// The forms of `value` a written file may hold ([`Redactor`]): as it is
/// and with every character outside ASCII escaped, each written into JSON
/// strings up to [`JSON_LAYERS`] times.
fn forms(value: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for base in [value.to_string(), ascii_escaped(&json_escaped(value))] {
        let mut form = base;
        for _ in 0..=JSON_LAYERS {
            if !found.contains(&form) {
                found.push(form.clone());
            }
            form = json_escaped(&form);
        }
    }
    found
}

impl Redactor {
    /// A redactor of `secrets` (name, value), as a profile's `secrets`
    /// gives them; values shorter than [`MIN_SECRET_CHARS`] characters are
    /// left out.
    pub fn new(secrets: &[(String, String)]) -> Redactor {
        let mut patterns: Vec<(Vec<u8>, String)> = Vec::new();
        for (name, value) in secrets {
            let mut values = vec![value.as_str()];
            // `Bearer TOKEN`: the token alone is the credential.
            if let Some((scheme, rest)) = value.trim().split_once(' ')
                && scheme.chars().all(|c| c.is_ascii_alphabetic())
            {
                values.push(rest.trim());
            }
            for v in values {
                if v.trim().chars().count() < MIN_SECRET_CHARS {
                    continue;
                }
                for form in forms(v) {
                    if !patterns.iter().any(|(p, _)| p == form.as_bytes()) {
                        patterns.push((form.into_bytes(), label(name)));
                    }
                }
            }
        }
        patterns.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        Redactor { patterns }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The longest form of a secret, bytes (0 when there is none).
    fn longest(&self) -> usize {
        self.patterns.first().map_or(0, |(p, _)| p.len())
    }

    /// The matches in `hay`: (start, end, pattern), leftmost first, the
    /// longest at a start, none overlapping.
    fn matches(&self, hay: &[u8]) -> Vec<(usize, usize, usize)> {
        let mut all: Vec<(usize, usize, usize)> = Vec::new();
        for (i, (pattern, _)) in self.patterns.iter().enumerate() {
            for start in memchr::memmem::find_iter(hay, pattern) {
                all.push((start, start + pattern.len(), i));
            }
        }
        all.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut kept = Vec::new();
        let mut end = 0;
        for m in all {
            if m.0 >= end {
                end = m.1;
                kept.push(m);
            }
        }
        kept
    }

    /// `hay` with `matches` replaced.
    fn replaced(&self, hay: &[u8], matches: &[(usize, usize, usize)]) -> Vec<u8> {
        let mut out = Vec::with_capacity(hay.len());
        let mut at = 0;
        for &(start, end, i) in matches {
            out.extend_from_slice(&hay[at..start]);
            out.extend_from_slice(self.patterns[i].1.as_bytes());
            at = end;
        }
        out.extend_from_slice(&hay[at..]);
        out
    }

    /// `bytes` with every secret replaced.
    pub fn bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        if self.is_empty() {
            return Cow::Borrowed(bytes);
        }
        let matches = self.matches(bytes);
        if matches.is_empty() {
            Cow::Borrowed(bytes)
        } else {
            Cow::Owned(self.replaced(bytes, &matches))
        }
    }

    /// `text` with every secret replaced. A secret is valid UTF-8, so it
    /// is found only at character boundaries, and the result is text.
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.bytes(text.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            Cow::Owned(bytes) => Cow::Owned(
                String::from_utf8(bytes)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            ),
        }
    }

    /// Redacts every string and object key in `value`, in place.
    pub fn value(&self, value: &mut Value) {
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(s) => {
                if let Cow::Owned(redacted) = self.text(s) {
                    *s = redacted;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(map) => {
                if map.keys().any(|k| matches!(self.text(k), Cow::Owned(_))) {
                    let taken = std::mem::take(map);
                    *map = taken
                        .into_iter()
                        .map(|(k, v)| (self.text(&k).into_owned(), v))
                        .collect();
                }
                map.values_mut().for_each(|v| self.value(v));
            }
            _ => {}
        }
    }

    /// Redacts an optional string in place.
    pub fn option(&self, text: &mut Option<String>) {
        if let Some(t) = text
            && let Cow::Owned(redacted) = self.text(t)
        {
            *t = redacted;
        }
    }

    /// Redacts a string in place.
    pub fn string(&self, text: &mut String) {
        if let Cow::Owned(redacted) = self.text(text) {
            *text = redacted;
        }
    }

    /// Redacts every text of a `calls.json` entry in place: the tool name,
    /// the arguments, the soft error's label, the error, the preview, and
    /// an unreadable line's preview.
    pub fn call(&self, call: &mut CallRecord) {
        if self.is_empty() {
            return;
        }
        self.string(&mut call.tool);
        self.value(&mut call.arguments);
        self.option(&mut call.soft_error);
        self.option(&mut call.error);
        self.string(&mut call.result_preview);
        if let Some(unreadable) = &mut call.unreadable {
            self.string(&mut unreadable.line_preview);
            self.option(&mut unreadable.method);
            if let Some(id) = &mut unreadable.id {
                self.value(id);
            }
        }
    }

    /// A redactor of a stream read in chunks ([`Stream`]).
    pub fn stream(&self) -> Stream<'_> {
        Stream {
            redactor: self,
            pending: Vec::new(),
        }
    }
}

/// Redacts a stream chunk by chunk (a stdio server's stderr): a secret
/// cut between two chunks is still found. It holds back no more than a
/// secret's length, and nothing after a line end when no secret spans
/// lines, so a line is written as soon as it ends.
pub struct Stream<'r> {
    redactor: &'r Redactor,
    pending: Vec<u8>,
}

impl Stream<'_> {
    /// The next `chunk`: what can be written now, redacted.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(chunk);
        let keep = self.redactor.longest().saturating_sub(1);
        let mut cut = self.pending.len().saturating_sub(keep);
        let spans_lines = self
            .redactor
            .patterns
            .iter()
            .any(|(p, _)| p.contains(&b'\n'));
        if !spans_lines && let Some(newline) = memchr::memrchr(b'\n', &self.pending) {
            cut = cut.max(newline + 1);
        }
        let matches = self.redactor.matches(&self.pending);
        // A secret across the cut is whole in what is held: it goes out.
        for &(start, end, _) in &matches {
            if start < cut && end > cut {
                cut = end;
            }
        }
        let before: Vec<(usize, usize, usize)> =
            matches.into_iter().filter(|m| m.1 <= cut).collect();
        let out = self.redactor.replaced(&self.pending[..cut], &before);
        self.pending.drain(..cut);
        out
    }

    /// The end of the stream: what is left, redacted.
    pub fn finish(self) -> Vec<u8> {
        self.redactor.bytes(&self.pending).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> Redactor {
        Redactor::new(&[
            ("Authorization".into(), "Bearer s3cret-token".into()),
            ("API_KEY".into(), "k\"ey-été".into()),
            ("DEBUG".into(), "1".into()),
            ("LEVEL".into(), "info".into()),
        ])
    }

    #[test]
    fn every_form_of_a_value_is_redacted_and_short_values_are_not() {
        let r = redactor();
        assert_eq!(
            r.text("header: Bearer s3cret-token; token s3cret-token; level info, debug 1"),
            "header: [redacted: Authorization]; token [redacted: Authorization]; level info, debug 1"
        );
        assert_eq!(
            r.text(r#"{"echo": "k\"ey-été", "py": "k\"ey-\u00e9t\u00e9"} k"ey-été"#),
            r#"{"echo": "[redacted: API_KEY]", "py": "[redacted: API_KEY]"} [redacted: API_KEY]"#
        );
        let mut value = serde_json::json!({"s3cret-token": ["x Bearer s3cret-token y", 1]});
        r.value(&mut value);
        assert_eq!(
            value,
            serde_json::json!({"[redacted: Authorization]": ["x [redacted: Authorization] y", 1]})
        );
        assert!(Redactor::new(&[("X".into(), "short".into())]).is_empty());
    }

    /// A secret cut across chunks anywhere is found, and whole lines go
    /// out at once.
    #[test]
    fn a_stream_finds_a_secret_across_chunks() {
        let r = redactor();
        let text = b"start\nthe key is Bearer s3cret-token, and again s3cret-token\nend";
        for size in 1..text.len() {
            let mut stream = r.stream();
            let mut out = Vec::new();
            for chunk in text.chunks(size) {
                out.extend(stream.push(chunk));
            }
            out.extend(stream.finish());
            assert_eq!(
                String::from_utf8(out).unwrap(),
                "start\nthe key is [redacted: Authorization], and again [redacted: Authorization]\nend",
                "chunks of {size}"
            );
        }
        let mut stream = r.stream();
        assert_eq!(stream.push(b"one line\nand a part"), b"one line\n");
    }
}
