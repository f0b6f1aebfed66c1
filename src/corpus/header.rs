//! The `#+` header of a `.rq` record, read line by line as a YAML reader
//! would see it (README.md, "The corpus").
//!
//! The subset understood: `key: value` scalars (plain, `"double"` or
//! `'apostrophe'` quoted, continued on more-indented lines and folded with one
//! space), block scalars (`>` folded, `|` literal), block lists (`- item`)
//! and flow lists (`[a, b]`). CRLF, a BOM, trailing spaces, tabs and a
//! missing space after the colon (`summary:Within ...`, as in the real
//! registry) are ordinary input.

use std::collections::BTreeMap;

/// One header value: a string or a list of strings.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum HeaderValue {
    /// A scalar, folded as YAML folds it.
    Text(String),
    /// A block or flow list, each item trimmed and unquoted.
    List(Vec<String>),
}

/// A parsed header: each key with its value and the 1-based line it is on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header {
    /// Keys in file order are not needed; sorted keys keep output stable.
    pub entries: BTreeMap<String, (HeaderValue, u64)>,
    /// 1-based line of the first line after the header (where the answer key
    /// begins).
    pub body_line: u64,
}

/// A header problem at a 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderError {
    /// 1-based line in the file.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

struct Line<'a> {
    number: u64,
    indent: usize,
    text: &'a str,
}

/// Splits the leading `#+` lines off `text` and parses them.
///
/// `text` must already have a BOM removed. Blank lines and plain `#`
/// comment lines before and inside the header are allowed; the header ends
/// at the first line that is neither blank nor a comment. Returns the header and the remaining text (the answer key), which
/// starts at `Header::body_line`.
pub fn split_header(text: &str) -> Result<(Header, &str), HeaderError> {
    let mut lines = Vec::new();
    let mut offset = 0;
    let mut number = 0u64;
    let mut body_offset = text.len();
    let mut body_line = None;
    for raw in text.split_inclusive('\n') {
        number += 1;
        let line = raw.trim_end_matches(['\n', '\r']);
        if let Some(content) = line.strip_prefix("#+") {
            let content = content.trim_end();
            let indent = content.len() - content.trim_start().len();
            lines.push(Line {
                number,
                indent,
                text: content.trim_start(),
            });
        } else if !line.trim().is_empty() && !line.trim_start().starts_with('#') {
            body_offset = offset;
            body_line = Some(number);
            break;
        }
        offset += raw.len();
    }
    let body_line = body_line.unwrap_or(number + 1);
    let header = parse_lines(&lines, body_line)?;
    Ok((header, &text[body_offset..]))
}

fn parse_lines(lines: &[Line<'_>], body_line: u64) -> Result<Header, HeaderError> {
    let mut header = Header {
        body_line,
        ..Header::default()
    };
    let base = lines
        .iter()
        .filter(|l| !l.text.is_empty() && !l.text.starts_with('#'))
        .map(|l| l.indent)
        .min()
        .unwrap_or(0);
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        if line.text.is_empty() || line.text.starts_with('#') {
            i += 1;
            continue;
        }
        if line.indent > base {
            return Err(HeaderError {
                line: line.number,
                message: format!(
                    "unexpected indented line '{}' (not inside a key)",
                    line.text
                ),
            });
        }
        let Some((key, rest)) = split_key(line.text) else {
            return Err(HeaderError {
                line: line.number,
                message: format!("expected 'key: value', found '{}'", line.text),
            });
        };
        // The lines that belong to this key: more indented, or list items.
        let mut end = i + 1;
        while end < lines.len() {
            let next = &lines[end];
            if next.text.is_empty()
                || next.indent > base
                || (next.text.starts_with('-') && rest.is_empty())
            {
                end += 1;
            } else {
                break;
            }
        }
        let value = parse_value(rest, &lines[i + 1..end], line.number)?;
        if header.entries.contains_key(key) {
            return Err(HeaderError {
                line: line.number,
                message: format!("key '{key}' appears twice in the header"),
            });
        }
        header.entries.insert(key.to_string(), (value, line.number));
        i = end;
    }
    Ok(header)
}

/// `key: rest` (the space after the colon is optional).
fn split_key(text: &str) -> Option<(&str, &str)> {
    let (key, rest) = text.split_once(':')?;
    let key = key.trim();
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return None;
    }
    Some((key, rest.trim()))
}

fn parse_value(first: &str, more: &[Line<'_>], line: u64) -> Result<HeaderValue, HeaderError> {
    let continuation: Vec<&Line<'_>> = more.iter().filter(|l| !l.text.is_empty()).collect();
    let first = strip_comment(first).trim();
    if first == "~" || first == "null" {
        return Ok(HeaderValue::Text(String::new()));
    }
    if first.is_empty() {
        if continuation
            .first()
            .is_some_and(|l| l.text.starts_with('-'))
        {
            let mut items = Vec::new();
            for item in &continuation {
                let Some(value) = item.text.strip_prefix('-') else {
                    return Err(HeaderError {
                        line: item.number,
                        message: format!("expected a list item '- value', found '{}'", item.text),
                    });
                };
                let value = unquote(strip_comment(value).trim());
                if !value.is_empty() && value != "~" {
                    items.push(value);
                }
            }
            return Ok(HeaderValue::List(items));
        }
        return Ok(HeaderValue::Text(fold_plain(
            continuation.iter().map(|l| l.text),
        )));
    }
    if let Some(flow) = first.strip_prefix('[') {
        let mut text = flow.to_string();
        for l in &continuation {
            text.push(' ');
            text.push_str(l.text);
        }
        let Some(inner) = text.trim_end().strip_suffix(']') else {
            return Err(HeaderError {
                line,
                message: "flow list '[' is not closed by ']'".to_string(),
            });
        };
        let items = inner
            .split(',')
            .map(|s| unquote(s.trim()))
            .filter(|s| !s.is_empty())
            .collect();
        return Ok(HeaderValue::List(items));
    }
    if first.starts_with('>') || first.starts_with('|') {
        let literal = first.starts_with('|');
        let texts = continuation.iter().map(|l| l.text);
        let value = if literal {
            texts.collect::<Vec<_>>().join("\n")
        } else {
            fold_plain(texts)
        };
        return Ok(HeaderValue::Text(value));
    }
    if first.starts_with('"') || first.starts_with('\'') {
        let quote = first.chars().next().unwrap_or('"');
        let mut joined = first.to_string();
        for l in &continuation {
            joined.push(' ');
            joined.push_str(l.text);
        }
        return parse_quoted(&joined, quote).ok_or_else(|| HeaderError {
            line,
            message: format!("quoted value is not closed by {quote}"),
        });
    }
    let parts = std::iter::once(first).chain(continuation.iter().map(|l| strip_comment(l.text)));
    Ok(HeaderValue::Text(fold_plain(parts)))
}

/// A plain scalar without its trailing YAML comment: ` #` starts one.
fn strip_comment(text: &str) -> &str {
    if text.starts_with('"') || text.starts_with('\'') {
        return text;
    }
    match text.find(" #").or_else(|| text.find("\t#")) {
        Some(i) => &text[..i],
        None if text.starts_with('#') => "",
        None => text,
    }
}

/// Joins the lines of a plain scalar with one space each, as YAML folds
/// them; inner spacing within a line is kept.
fn fold_plain<'a>(parts: impl Iterator<Item = &'a str>) -> String {
    parts
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A quoted scalar: `"..."` with backslash escapes, `'...'` with `''`.
fn parse_quoted(text: &str, quote: char) -> Option<HeaderValue> {
    let mut out = String::new();
    let mut chars = text[1..].chars().peekable();
    while let Some(c) = chars.next() {
        if quote == '"' && c == '\\' {
            match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                other => out.push(other),
            }
        } else if c == quote {
            if quote == '\'' && chars.peek() == Some(&'\'') {
                chars.next();
                out.push('\'');
                continue;
            }
            let rest: String = chars.collect();
            let rest = rest.trim();
            if !rest.is_empty() && !rest.starts_with('#') {
                return None;
            }
            return Some(HeaderValue::Text(out));
        } else {
            out.push(c);
        }
    }
    None
}

/// A list item or flow item with surrounding quotes removed.
fn unquote(text: &str) -> String {
    for q in ['"', '\''] {
        if text.len() >= 2 && text.starts_with(q) && text.ends_with(q) {
            return text[1..text.len() - 1].to_string();
        }
    }
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(h: &Header, key: &str) -> String {
        match &h.entries[key].0 {
            HeaderValue::Text(t) => t.clone(),
            other => panic!("{other:?}"),
        }
    }

    fn list(h: &Header, key: &str) -> Vec<String> {
        match &h.entries[key].0 {
            HeaderValue::List(l) => l.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn continued_summary_and_block_tags() {
        let src = "#+ summary: Among places in New Mexico,\n#+          return  the 10 with.\n#+ tags:\n#+   - spoke-okn \n#+   - spatialkg\n\nPREFIX x: <y>\nSELECT * {}\n";
        let (h, body) = split_header(src).unwrap();
        assert_eq!(
            text(&h, "summary"),
            "Among places in New Mexico, return  the 10 with."
        );
        assert_eq!(list(&h, "tags"), ["spoke-okn", "spatialkg"]);
        assert_eq!(h.body_line, 7);
        assert!(body.starts_with("PREFIX"));
    }

    #[test]
    fn crlf_quotes_missing_space_and_flow_lists() {
        let src = "#+ summary:\"Count the datasets.\"  \r\n#+ tags: [ nde , 'ubergraph' ]\r\n#+ level: hard\r\nSELECT * {}";
        let (h, _) = split_header(src).unwrap();
        assert_eq!(text(&h, "summary"), "Count the datasets.");
        assert_eq!(list(&h, "tags"), ["nde", "ubergraph"]);
        assert_eq!(text(&h, "level"), "hard");
        let (h, _) = split_header("#+ summary:Within NASA\nASK {}").unwrap();
        assert_eq!(text(&h, "summary"), "Within NASA");
    }

    #[test]
    fn list_at_key_indentation_and_block_scalars() {
        let src = "#+ tags:\n#+ - a\n#+ - b\n#+ summary: >\n#+   folded\n#+   text\n#+ notes: |\n#+   line one\n#+   line two\nSELECT";
        let (h, _) = split_header(src).unwrap();
        assert_eq!(list(&h, "tags"), ["a", "b"]);
        assert_eq!(text(&h, "summary"), "folded text");
        assert_eq!(text(&h, "notes"), "line one\nline two");
    }

    #[test]
    fn yaml_comments_nulls_and_empty_items() {
        let src = "# A comment line before the header\n#+ summary: Count things. # not part of it\n#+ tags:\n#+   - a # why\n#+   -\n#+   - b\n#+ level: ~\nSELECT";
        let (h, _) = split_header(src).unwrap();
        assert_eq!(text(&h, "summary"), "Count things.");
        assert_eq!(list(&h, "tags"), ["a", "b"]);
        assert_eq!(text(&h, "level"), "");
        // A '#' inside a word is not a comment.
        let (h, _) = split_header("#+ summary: Issue#5 is C# code\nASK {}").unwrap();
        assert_eq!(text(&h, "summary"), "Issue#5 is C# code");
    }

    #[test]
    fn errors_name_the_line() {
        let err = split_header("#+ summary: \"open\n#+ tags:\nSELECT").unwrap_err();
        assert_eq!(err.line, 1);
        let err = split_header("#+ summary: a\n#+ summary: b\nSELECT").unwrap_err();
        assert_eq!(err.line, 2);
        let err = split_header("#+ summary: a\n#+ not a key\nSELECT").unwrap_err();
        assert_eq!(err.line, 2);
    }
}
