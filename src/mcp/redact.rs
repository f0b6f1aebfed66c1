//! Redaction of the values a profile sets (issue 24, item 27): every
//! header value (HTTP), environment value (stdio) and credential in the
//! URL of the server under test may be a credential
//! ([`crate::mcp::profile::Profile::secrets`] lists them; those the
//! profile declares public are not), and a server may echo one (an
//! `Authorization` header repeated in a reply, an API key printed on
//! stderr, a tool named after it). Each is replaced by `[redacted: NAME]`
//! in everything written: `calls.json`, `metrics.json` (every member),
//! `answer.csv` and `submissions/`, `upstream.stderr.log` (by the proxy),
//! `agent.json`, `agent.stderr.log`, `episode.json` and `command.txt` (by
//! `run`), the profile and the server's report of itself in
//! `conditions/NAME.json`, what `probe` prints, and a catalog's recorded
//! replies (`docs/FORMAT.md`, "Credentials").
//!
//! A value is found however JSON wrote it ([`Redactor`]): each of its
//! characters as it is or as any JSON escape of it (`\u00e9`, `\u00E9`,
//! Go's `\u0026`, PHP's `\/`, a surrogate pair, every character escaped),
//! through up to [`JSON_LAYERS`] layers of JSON strings (a reply quoted in
//! an agent host's report, quoted once more), and in any case (a server
//! that upper-cases a header it echoes): matching ignores case, so text
//! that equals a value but for case is redacted too. A value shorter than
//! [`MIN_SECRET_CHARS`] characters (`1`, `true`, `info`, a port) is left
//! alone: redacting it would rewrite ordinary text, a submitted answer's
//! numbers included. White space around a value is no part of it.
//!
//! Known limits (docs/FORMAT.md, "Credentials"): a value cut in two (one
//! half per text block or line, as a server may split it) and a value
//! encoded otherwise than JSON (base64, percent-encoding, HTML entities)
//! are not found; only the derived credentials the profile names (the
//! `Basic` value a URL's user and password give) are.

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde_json::Value;

/// The fewest characters a value must have to be redacted.
pub const MIN_SECRET_CHARS: usize = 6;

/// How many layers of JSON strings a value is looked for through: a reply
/// that is JSON (1), quoted in an agent host's JSON report (2), and once
/// more for a report quoted in turn.
pub const JSON_LAYERS: usize = 3;

/// The values to find, and what replaces them.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Each value, longest first.
    secrets: Vec<Secret>,
    /// Whether a byte may start a match: the first byte of a value's first
    /// character in either case, and `\`.
    starts: Vec<bool>,
}

/// One value to find.
#[derive(Debug, Clone)]
struct Secret {
    /// What the profile calls it.
    name: String,
    /// `[redacted: NAME]`.
    label: String,
    /// Its characters, case folded ([`fold`]).
    chars: Vec<char>,
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

/// `c` in lower case, when that is one character (else `c`).
fn fold(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

/// The character whose UTF-8 encoding starts at `at` in `hay`, and its
/// width; `None` for bytes that are not UTF-8 there.
fn literal(hay: &[u8], at: usize) -> Option<(char, usize)> {
    let width = match *hay.get(at)? {
        b if b < 0x80 => return Some((b as char, 1)),
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let text = std::str::from_utf8(hay.get(at..at + width)?).ok()?;
    text.chars().next().map(|c| (c, width))
}

/// Every character the text at `at` may stand for, read through up to
/// `layers` JSON string escapes, with where each reading ends: the
/// character as it is, or an escape (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`,
/// `\r`, `\t`, `\uXXXX` in either case, a surrogate pair) whose own
/// characters are written through one layer fewer.
fn decodings(hay: &[u8], at: usize, layers: usize) -> Vec<(char, usize)> {
    let mut found: Vec<(char, usize)> = literal(hay, at)
        .map(|(c, width)| (c, at + width))
        .into_iter()
        .collect();
    if layers == 0 || hay.get(at) != Some(&b'\\') {
        return found;
    }
    let below = |at: usize| decodings(hay, at, layers - 1);
    for (backslash, after) in below(at) {
        if backslash != '\\' {
            continue;
        }
        for (letter, end) in below(after) {
            let short = match letter {
                '"' | '\\' | '/' => Some(letter),
                'b' => Some('\u{8}'),
                'f' => Some('\u{c}'),
                'n' => Some('\n'),
                'r' => Some('\r'),
                't' => Some('\t'),
                _ => None,
            };
            if let Some(c) = short {
                found.push((c, end));
            } else if letter == 'u'
                && let Some((unit, end)) = hex_unit(hay, end, layers - 1)
            {
                match unit {
                    0xD800..=0xDBFF => {
                        // A high surrogate: the low one follows, escaped.
                        for (low, end) in low_surrogate(hay, end, layers - 1) {
                            let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                            if let Some(c) = char::from_u32(code) {
                                found.push((c, end));
                            }
                        }
                    }
                    0xDC00..=0xDFFF => {}
                    _ => found.extend(char::from_u32(unit).map(|c| (c, end))),
                }
            }
        }
    }
    found
}

/// The four hex digits at `at` (each written through `layers`), as a
/// UTF-16 code unit, and where they end.
fn hex_unit(hay: &[u8], mut at: usize, layers: usize) -> Option<(u32, usize)> {
    let mut unit = 0u32;
    for _ in 0..4 {
        let (digit, end) = decodings(hay, at, layers)
            .into_iter()
            .find_map(|(c, end)| Some((c.to_digit(16)?, end)))?;
        unit = unit * 16 + digit;
        at = end;
    }
    Some((unit, at))
}

/// The low surrogates `\uDC00`-`\uDFFF` an escape at `at` (written
/// through `layers`) may stand for, with where each ends.
fn low_surrogate(hay: &[u8], at: usize, layers: usize) -> Vec<(u32, usize)> {
    let mut found = Vec::new();
    for (backslash, after) in decodings(hay, at, layers) {
        if backslash != '\\' {
            continue;
        }
        for (letter, end) in decodings(hay, after, layers) {
            if letter == 'u'
                && let Some((unit, end)) = hex_unit(hay, end, layers)
                && (0xDC00..=0xDFFF).contains(&unit)
            {
                found.push((unit, end));
            }
        }
    }
    found
}

/// The most bytes one character may take once written through
/// [`JSON_LAYERS`] layers of escapes: a `\uXXXX` escape (a surrogate pair
/// outside the Basic Multilingual Plane) each of whose characters is
/// escaped again.
fn widest(c: char) -> usize {
    let units = c.len_utf16();
    (units * 6usize.pow(JSON_LAYERS as u32)).max(c.len_utf8())
}

impl Redactor {
    /// A redactor of `secrets` (name, value), as
    /// [`crate::mcp::profile::Profile::secrets`] gives them; white space
    /// around a value is dropped, and values shorter than
    /// [`MIN_SECRET_CHARS`] characters are left out.
    pub fn new(secrets: &[(String, String)]) -> Redactor {
        let mut kept: Vec<Secret> = Vec::new();
        for (name, value) in secrets {
            let value = value.trim();
            if value.chars().count() < MIN_SECRET_CHARS {
                continue;
            }
            let chars: Vec<char> = value.chars().map(fold).collect();
            if !kept.iter().any(|s| s.chars == chars) {
                kept.push(Secret {
                    name: name.clone(),
                    label: label(name),
                    chars,
                });
            }
        }
        kept.sort_by(|a, b| b.chars.len().cmp(&a.chars.len()).then(a.name.cmp(&b.name)));
        let mut starts = vec![false; 256];
        if !kept.is_empty() {
            starts[usize::from(b'\\')] = true;
        }
        for secret in &kept {
            let first = secret.chars[0];
            let forms = std::iter::once(first)
                .chain(first.to_uppercase())
                .chain(first.to_lowercase());
            for c in forms {
                let mut bytes = [0u8; 4];
                starts[usize::from(c.encode_utf8(&mut bytes).as_bytes()[0])] = true;
            }
        }
        Redactor {
            secrets: kept,
            starts,
        }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// The most bytes a match may take (0 when there is nothing to find).
    fn longest(&self) -> usize {
        self.secrets
            .iter()
            .map(|s| s.chars.iter().map(|c| widest(*c)).sum::<usize>())
            .max()
            .unwrap_or(0)
    }

    /// Where `secret` written from `at` on, from its character `i`, ends;
    /// `None` when it is not there. With `to_the_end`, reaching the end of
    /// `hay` part-way is a match too (a text cut there).
    fn ends_at(
        &self,
        secret: &Secret,
        mut i: usize,
        hay: &[u8],
        mut at: usize,
        to_the_end: bool,
    ) -> Option<usize> {
        loop {
            if i == secret.chars.len() {
                return Some(at);
            }
            if at == hay.len() {
                return to_the_end.then_some(at);
            }
            if hay[at] != b'\\' {
                // No escape starts here: the character as it is, alone.
                let (c, width) = literal(hay, at)?;
                if fold(c) != secret.chars[i] {
                    return None;
                }
                i += 1;
                at += width;
                continue;
            }
            return decodings(hay, at, JSON_LAYERS)
                .into_iter()
                .filter(|(c, _)| fold(*c) == secret.chars[i])
                .find_map(|(_, end)| self.ends_at(secret, i + 1, hay, end, to_the_end));
        }
    }

    /// The matches in `hay`: (start, end, secret), leftmost first, the
    /// longest at a start, none overlapping; with `to_the_end`, a value
    /// cut by the end of `hay` too.
    fn matches(&self, hay: &[u8], to_the_end: bool) -> Vec<(usize, usize, usize)> {
        let mut found = Vec::new();
        if self.is_empty() {
            return found;
        }
        let mut at = 0;
        while at < hay.len() {
            if !self.starts[usize::from(hay[at])] {
                at += 1;
                continue;
            }
            let best = self
                .secrets
                .iter()
                .enumerate()
                .filter_map(|(k, s)| Some((self.ends_at(s, 0, hay, at, to_the_end)?, k)))
                .filter(|(end, _)| *end > at)
                .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            match best {
                Some((end, k)) => {
                    found.push((at, end, k));
                    at = end;
                }
                None => at += 1,
            }
        }
        found
    }

    /// `hay` with `matches` replaced.
    fn replaced(&self, hay: &[u8], matches: &[(usize, usize, usize)]) -> Vec<u8> {
        let mut out = Vec::with_capacity(hay.len());
        let mut at = 0;
        for &(start, end, k) in matches {
            out.extend_from_slice(&hay[at..start]);
            out.extend_from_slice(self.secrets[k].label.as_bytes());
            at = end;
        }
        out.extend_from_slice(&hay[at..]);
        out
    }

    /// `bytes` with every value replaced.
    pub fn bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let matches = self.matches(bytes, false);
        if matches.is_empty() {
            Cow::Borrowed(bytes)
        } else {
            Cow::Owned(self.replaced(bytes, &matches))
        }
    }

    /// `text` with every value replaced. A value is found only whole
    /// characters at a time, so the result is text.
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.text_cut(text, false)
    }

    /// [`Redactor::text`], and, with `cut`, a value that `text`'s end cuts
    /// part-way replaced too (`text` is the start of something longer).
    fn text_cut<'a>(&self, text: &'a str, cut: bool) -> Cow<'a, str> {
        let matches = self.matches(text.as_bytes(), cut);
        if matches.is_empty() {
            return Cow::Borrowed(text);
        }
        let bytes = self.replaced(text.as_bytes(), &matches);
        Cow::Owned(
            String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        )
    }

    /// `text` with every value replaced, and the names of the values that
    /// were (in name order; empty when nothing was replaced).
    pub fn text_and_names<'a>(&self, text: &'a str) -> (Cow<'a, str>, BTreeSet<String>) {
        let matches = self.matches(text.as_bytes(), false);
        let names = matches
            .iter()
            .map(|&(_, _, k)| self.secrets[k].name.clone())
            .collect();
        (self.text(text), names)
    }

    /// The first `max_chars` characters of `text` once every value in it is
    /// replaced: redacted first, then cut, so a cut never leaves the start
    /// of a value (issue 24, item 27). With `truncated`, `text` is itself
    /// the start of something longer, and a value its end cuts part-way is
    /// replaced too. Only the characters that can reach the preview are
    /// read.
    pub fn preview(&self, text: &str, max_chars: usize, truncated: bool) -> String {
        let window_chars = max_chars.saturating_add(self.longest());
        let window_end = text
            .char_indices()
            .nth(window_chars)
            .map_or(text.len(), |(at, _)| at);
        let window = &text[..window_end];
        let cut = truncated && window_end == text.len();
        self.text_cut(window, cut).chars().take(max_chars).collect()
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

    /// `item` with every string in it and every key of its JSON form
    /// redacted: each member of a record, whatever it is called, so a
    /// member added later is not missed. `item` itself when it does not go
    /// through JSON and back (never for the records written here).
    pub fn record<T>(&self, item: T) -> T
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        if self.is_empty() {
            return item;
        }
        let Ok(mut value) = serde_json::to_value(&item) else {
            return item;
        };
        self.value(&mut value);
        serde_json::from_value(value).unwrap_or(item)
    }

    /// Redacts a string in place.
    pub fn string(&self, text: &mut String) {
        if let Cow::Owned(redacted) = self.text(text) {
            *text = redacted;
        }
    }

    /// A redactor of a stream read in chunks ([`Stream`]).
    pub fn stream(&self) -> Stream<'_> {
        Stream {
            redactor: self,
            pending: Vec::new(),
            keep: self.longest().saturating_sub(1),
            spans_lines: self
                .secrets
                .iter()
                .any(|s| s.chars.iter().any(|c| matches!(c, '\n' | '\r'))),
        }
    }
}

/// Redacts a stream chunk by chunk (a stdio server's stderr): a value
/// cut between two chunks is still found. It holds back no more than a
/// match's length, and nothing after a line end when no value spans
/// lines (a match holds a line end only where the value does), so a line
/// is written as soon as it ends.
pub struct Stream<'r> {
    redactor: &'r Redactor,
    pending: Vec<u8>,
    /// Bytes held back at most: a match's length, less one.
    keep: usize,
    /// Whether a value holds a line end.
    spans_lines: bool,
}

impl Stream<'_> {
    /// The next `chunk`: what can be written now, redacted.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(chunk);
        let mut cut = self.pending.len().saturating_sub(self.keep);
        if !self.spans_lines
            && let Some(newline) = memchr::memrchr(b'\n', &self.pending)
        {
            cut = cut.max(newline + 1);
        }
        let matches = self.redactor.matches(&self.pending, false);
        // A value across the cut is whole in what is held: it goes out.
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
            ("Authorization".into(), "s3cret-token".into()),
            ("API_KEY".into(), "k\"ey-été".into()),
            ("SPECIAL".into(), r#"p@ss.w*rd(1)+[x]$^&<>/"\é"#.into()),
            ("DEBUG".into(), "1".into()),
            ("LEVEL".into(), "info".into()),
        ])
    }

    /// JSON `text` as a string, with each character escaped by `escape`
    /// when it gives an escape.
    fn escaped(text: &str, escape: impl Fn(char) -> Option<String>) -> String {
        text.chars()
            .map(|c| escape(c).unwrap_or_else(|| c.to_string()))
            .collect()
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
        assert!(Redactor::new(&[("X".into(), "  short  ".into())]).is_empty());
    }

    /// Issue 24, item 27: a value was found only as it is and in two fixed
    /// escapings; JSON writers escape otherwise. Each of these is found:
    /// upper-case hex (`\u00E9`), Go's `\u0026 \u003c \u003e`, PHP's `\/`,
    /// every character escaped, a character outside the BMP as a surrogate
    /// pair, each through one to three layers of JSON strings, and the
    /// value upper-cased.
    #[test]
    fn a_value_is_found_in_any_json_escaping_and_any_case() {
        let special = r#"p@ss.w*rd(1)+[x]$^&<>/"\é"#;
        let r = Redactor::new(&[
            ("SPECIAL".into(), special.into()),
            ("EMOJI".into(), "key-😀-value".into()),
        ]);
        let json = |c: char| match c {
            '"' => Some("\\\"".to_string()),
            '\\' => Some("\\\\".to_string()),
            _ => None,
        };
        let forms = [
            escaped(special, |c| {
                json(c).or_else(|| (!c.is_ascii()).then(|| format!("\\u{:04X}", c as u32)))
            }),
            escaped(special, |c| {
                json(c).or_else(|| {
                    matches!(c, '&' | '<' | '>').then(|| format!("\\u{:04x}", c as u32))
                })
            }),
            escaped(special, |c| {
                json(c).or_else(|| (c == '/').then(|| "\\/".to_string()))
            }),
            escaped(special, |c| Some(format!("\\u{:04x}", c as u32))),
            escaped(special, |c| {
                json(c).or_else(|| Some(c.to_uppercase().to_string()))
            }),
            "key-\\ud83d\\ude00-value".to_string(),
            "KEY-\\uD83D\\uDE00-VALUE".to_string(),
        ];
        for form in forms {
            let once = serde_json::to_string(&form).unwrap();
            let twice = serde_json::to_string(&once).unwrap();
            for text in [form.clone(), once, twice] {
                let hay = format!("before {text} after");
                let got = r.text(&hay);
                // Only the quotes around the value are left of it.
                let inner = got
                    .strip_prefix("before ")
                    .and_then(|g| g.strip_suffix(" after"))
                    .unwrap_or_default()
                    .trim_matches(['"', '\\']);
                assert!(
                    inner.starts_with("[redacted: ") && inner.ends_with(']'),
                    "{hay}\n{got}"
                );
            }
        }
        // Text that only looks like a value is left alone.
        assert_eq!(
            r.text("p@ss.w*rd(1)+[x]$^&<>/ no"),
            "p@ss.w*rd(1)+[x]$^&<>/ no"
        );
    }

    /// Issue 24, item 27: a 2,000-character preview cut a value in half and
    /// kept its start. The value is replaced first, then the text is cut;
    /// and the start of a text that is itself cut hides a value its end
    /// cuts.
    #[test]
    fn a_preview_is_redacted_before_it_is_cut() {
        let r = Redactor::new(&[("TOKEN".into(), "sk-live-ABCDEF123456xyz".into())]);
        for before in 1985..2000 {
            let text = format!("{}sk-live-ABCDEF123456xyz and more", "A".repeat(before));
            let preview = r.preview(&text, 2000, false);
            assert_eq!(preview.chars().count(), 2000);
            assert!(!preview.contains("sk-li"), "{before}: {}", &preview[1980..]);
            assert!(
                "[redacted: TOKEN]".starts_with(&preview[before..]),
                "{before}"
            );
        }
        let head = "{\"csv\": \"sk-live-ABC";
        assert_eq!(r.preview(head, 200, true), "{\"csv\": \"[redacted: TOKEN]");
        assert_eq!(r.preview(head, 200, false), head);
    }

    /// A value cut across chunks anywhere is found, and whole lines go
    /// out at once.
    #[test]
    fn a_stream_finds_a_value_across_chunks() {
        let r = redactor();
        let text = b"start\nthe key is Bearer s3cret-token, and again s3cret-token \\u0073\\u0033cret-token\nend";
        for size in 1..text.len() {
            let mut stream = r.stream();
            let mut out = Vec::new();
            for chunk in text.chunks(size) {
                out.extend(stream.push(chunk));
            }
            out.extend(stream.finish());
            assert_eq!(
                String::from_utf8(out).unwrap(),
                "start\nthe key is [redacted: Authorization], and again [redacted: Authorization] [redacted: Authorization]\nend",
                "chunks of {size}"
            );
        }
        let mut stream = r.stream();
        assert_eq!(stream.push(b"one line\nand a part"), b"one line\n");
    }

    /// Every member of a record is redacted: a tool named after a value
    /// in `metrics.json`'s `tools_offered` too (issue 24, item 27).
    #[test]
    fn every_member_of_a_record_is_redacted() {
        let r = redactor();
        let metrics = crate::layout::Metrics {
            tools_offered: vec!["tool_s3cret-token".into(), "submit_csv".into()],
            server: Some("x".into()),
            ..Default::default()
        };
        let redacted = r.record(metrics);
        assert_eq!(
            redacted.tools_offered,
            ["tool_[redacted: Authorization]", "submit_csv"]
        );
        let (text, names) = r.text_and_names("a,b\ns3cret-token,k\"ey-été\n");
        assert_eq!(text, "a,b\n[redacted: Authorization],[redacted: API_KEY]\n");
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            ["API_KEY", "Authorization"]
        );
    }
}
