//! Reading one cell's text as the value it names: literal syntax, IRI forms
//! and local names. These are the *serialization* adjustments of the
//! normalized tier (`docs/SCORING.md`, "The two tiers").

use std::borrow::Cow;

/// Strips SPARQL/Turtle literal and IRI syntax around a value:
///
/// - `"Paris"@en`, `"0.5"^^<http://www.w3.org/2001/XMLSchema#decimal>`,
///   `"0.5"^^xsd:decimal`, `'x'`, `"x"` → the lexical form, with `\"`, `\\`,
///   `\n`, `\t` unescaped;
/// - `<http://ex.org/a>` → `http://ex.org/a`.
///
/// Anything else is returned unchanged.
pub fn unwrap_syntax(text: &str) -> Cow<'_, str> {
    if let Some(inner) = text.strip_prefix('<').and_then(|t| t.strip_suffix('>'))
        && !inner.is_empty()
        && !inner.contains(['<', '>', ' ', '"'])
    {
        return Cow::Borrowed(inner);
    }
    literal_lexical_form(text).unwrap_or(Cow::Borrowed(text))
}

/// The lexical form of a literal written in SPARQL syntax, or `None`;
/// borrowed from `text` when it holds no escape.
fn literal_lexical_form(text: &str) -> Option<Cow<'_, str>> {
    let quote = text.chars().next()?;
    if quote != '"' && quote != '\'' {
        return None;
    }
    let body = &text[1..];
    match body.find([quote, '\\']) {
        Some(close) if body[close..].starts_with(quote) => {
            let rest = &body[close + 1..];
            return (rest.is_empty() || is_language_tag(rest) || is_datatype_suffix(rest))
                .then_some(Cow::Borrowed(&body[..close]));
        }
        None => return None,
        Some(_) => {}
    }
    // Find the closing quote, honouring backslash escapes.
    let mut lexical = String::new();
    let mut chars = text[1..].char_indices();
    let mut end = None;
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                let (_, escaped) = chars.next()?;
                lexical.push(match escaped {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    other => other,
                });
            }
            c if c == quote => {
                end = Some(1 + i + c.len_utf8());
                break;
            }
            c => lexical.push(c),
        }
    }
    let rest = &text[end?..];
    if rest.is_empty() || is_language_tag(rest) || is_datatype_suffix(rest) {
        Some(Cow::Owned(lexical))
    } else {
        None
    }
}

fn is_language_tag(rest: &str) -> bool {
    let Some(tag) = rest.strip_prefix('@') else {
        return false;
    };
    !tag.is_empty()
        && tag.starts_with(|c: char| c.is_ascii_alphabetic())
        && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

fn is_datatype_suffix(rest: &str) -> bool {
    let Some(datatype) = rest.strip_prefix("^^") else {
        return false;
    };
    if let Some(iri) = datatype.strip_prefix('<').and_then(|d| d.strip_suffix('>')) {
        return !iri.is_empty() && !iri.contains(['<', '>', ' ']);
    }
    match datatype.split_once(':') {
        Some((prefix, local)) => {
            prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
                && !local.is_empty()
                && local
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
        }
        None => false,
    }
}

/// `text.trim()`, without looking further when the first and last bytes
/// are printable ASCII (no byte from `!` to `~` is, or begins, Unicode
/// white space): most cells are, and `trim` decodes characters at both
/// ends.
pub fn trim(text: &str) -> &str {
    let bytes = text.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) if first.is_ascii_graphic() && last.is_ascii_graphic() => text,
        _ => text.trim(),
    }
}

/// Text in Unicode Normalization Form C, so a composed `é` and `e` + a
/// combining accent are one value (normalized tier only).
pub fn nfc(text: &str) -> Cow<'_, str> {
    use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};
    if text.is_ascii() || is_nfc_quick(text.chars()) == IsNormalized::Yes {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.nfc().collect())
    }
}

/// True for an absolute IRI as a SPARQL CSV result writes it: a scheme then
/// `://` (or the `urn:` scheme), and no whitespace.
pub fn is_absolute_iri(text: &str) -> bool {
    if text.starts_with("urn:") {
        return !has_whitespace(text);
    }
    // The scheme is the text before the first "://": every character of
    // it a scheme character, so "://" must follow the longest run of them.
    let bytes = text.as_bytes();
    let scheme = bytes
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        .count();
    scheme > 0
        && bytes[0].is_ascii_alphabetic()
        && bytes[scheme..].starts_with(b"://")
        && bytes.len() > scheme + 3
        && !has_whitespace(text)
}

/// The local name of an IRI-like text: what follows the last `#` or `/`
/// (`http://purl.obolibrary.org/obo/MONDO_0000745` and `obo/MONDO_0000745`
/// → `MONDO_0000745`), else what follows the first `:` of a prefixed name
/// (`obo:MONDO_0000745` → `MONDO_0000745`, `urn:isbn:1` → `isbn:1`), else
/// the text itself. `None` for text with whitespace, or when the local name
/// would be empty (`http://ex.org/`). It is always a suffix of `text`.
pub fn local_name(text: &str) -> Option<&str> {
    if text.is_empty() || has_whitespace(text) {
        return None;
    }
    local_name_of_iri(text)
}

/// [`local_name`] of a text known to hold no whitespace (such as an
/// absolute IRI, [`is_absolute_iri`]).
pub fn local_name_of_iri(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let local = if let Some(i) = bytes.iter().rposition(|&b| b == b'#' || b == b'/') {
        &text[i + 1..]
    } else if let Some((prefix, rest)) = text.split_once(':') {
        if prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        {
            rest
        } else {
            text
        }
    } else {
        text
    };
    (!local.is_empty()).then_some(local)
}

/// `text.contains(char::is_whitespace)`, a byte at a time while the text
/// is ASCII.
fn has_whitespace(text: &str) -> bool {
    // Without an early exit, so that the loop is vectorized: cells are
    // short, and most hold no whitespace.
    let (white, wide) = text
        .as_bytes()
        .iter()
        .fold((false, false), |(white, wide), &b| {
            (
                white | (b == b' ') | (b.wrapping_sub(b'\t') < 5),
                wide | (b >= 0x80),
            )
        });
    if wide {
        return text.contains(char::is_whitespace);
    }
    white
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_is_str_trim() {
        for text in [
            "",
            "a",
            " ",
            "ab",
            " a",
            "a ",
            "\ta\n",
            "\u{a0}x",
            "x\u{2003}",
            "\u{85}",
            "é",
            "é ",
            "a b",
            "\u{3000}",
            "~",
            "!x!",
        ] {
            assert_eq!(trim(text), text.trim(), "{text:?}");
        }
    }

    #[test]
    fn literal_syntax_becomes_the_lexical_form() {
        assert_eq!(unwrap_syntax("\"Paris\"@en"), "Paris");
        assert_eq!(unwrap_syntax("\"Paris\"@en-GB"), "Paris");
        assert_eq!(
            unwrap_syntax("\"0.5\"^^<http://www.w3.org/2001/XMLSchema#decimal>"),
            "0.5"
        );
        assert_eq!(unwrap_syntax("\"0.5\"^^xsd:decimal"), "0.5");
        assert_eq!(unwrap_syntax("'x'"), "x");
        assert_eq!(unwrap_syntax("\"say \\\"hi\\\"\""), "say \"hi\"");
        assert_eq!(unwrap_syntax("\"\""), "");
    }

    /// The lexical form as an escape-aware scan over every character
    /// finds it: what `unwrap_syntax` must agree with, borrowed or not.
    fn scanned(text: &str) -> Option<String> {
        let quote = text.chars().next()?;
        if quote != '"' && quote != '\'' {
            return None;
        }
        let mut lexical = String::new();
        let mut chars = text[1..].char_indices();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    let (_, escaped) = chars.next()?;
                    lexical.push(match escaped {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        other => other,
                    });
                }
                c if c == quote => {
                    end = Some(1 + i + c.len_utf8());
                    break;
                }
                c => lexical.push(c),
            }
        }
        let rest = &text[end?..];
        (rest.is_empty() || is_language_tag(rest) || is_datatype_suffix(rest)).then_some(lexical)
    }

    proptest::proptest! {
        #[test]
        fn literal_forms_agree_with_a_full_scan(text in "[\"'\\\\a@^<>:n é-]{0,10}") {
            if !text.starts_with('<') {
                let want = scanned(&text).unwrap_or_else(|| text.clone());
                proptest::prop_assert_eq!(unwrap_syntax(&text).into_owned(), want);
            }
        }
    }

    #[test]
    fn iri_in_angle_brackets_is_the_iri() {
        assert_eq!(
            unwrap_syntax("<http://purl.obolibrary.org/obo/MONDO_0000745>"),
            "http://purl.obolibrary.org/obo/MONDO_0000745"
        );
    }

    #[test]
    fn other_text_is_unchanged() {
        for text in [
            "Paris",
            "\"Paris\" and more",
            "\"unterminated",
            "<a> <b>",
            "<>",
            "\"x\"@",
            "\"x\"^^",
            "\"x\"^^bad prefix:y",
        ] {
            assert_eq!(unwrap_syntax(text), text, "{text:?}");
        }
    }

    #[test]
    fn absolute_iris() {
        assert!(is_absolute_iri("http://ex.org/a"));
        assert!(is_absolute_iri("https://purl.org/okn/frink/kg/spoke-okn"));
        assert!(is_absolute_iri("urn:isbn:0451450523"));
        assert!(!is_absolute_iri("obo/MONDO_1"));
        assert!(!is_absolute_iri("Time: 10"));
        assert!(!is_absolute_iri("ratio:1"));
        assert!(!is_absolute_iri("http://"));
    }

    proptest::proptest! {
        /// The byte-wise checks are the character-wise ones they replace.
        #[test]
        fn iri_checks_agree_with_their_definitions(text in "[a-z0-9+.:/# \t\u{b}\u{85}\u{a0}é_-]{0,12}") {
            let white = text.contains(char::is_whitespace);
            proptest::prop_assert_eq!(has_whitespace(&text), white);
            let absolute = !text.is_empty() && !white && (text.starts_with("urn:") || match text.split_once("://") {
                Some((scheme, rest)) => !rest.is_empty()
                    && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                    && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')),
                None => false,
            });
            proptest::prop_assert_eq!(is_absolute_iri(&text), absolute);
            let local = if text.is_empty() || white { None } else {
                let l = if let Some(i) = text.rfind(['#', '/']) { &text[i + 1..] }
                    else if let Some((p, r)) = text.split_once(':') {
                        if p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')) { r } else { &text[..] }
                    } else { &text[..] };
                (!l.is_empty()).then_some(l)
            };
            proptest::prop_assert_eq!(local_name(&text), local);
        }
    }

    #[test]
    fn local_names() {
        assert_eq!(
            local_name("http://purl.obolibrary.org/obo/MONDO_0000745"),
            Some("MONDO_0000745")
        );
        assert_eq!(local_name("obo/MONDO_0000745"), Some("MONDO_0000745"));
        assert_eq!(local_name("http://ex.org/ns#Thing"), Some("Thing"));
        assert_eq!(local_name("obo:MONDO_0000745"), Some("MONDO_0000745"));
        assert_eq!(local_name("MONDO_0000745"), Some("MONDO_0000745"));
        assert_eq!(local_name("http://ex.org/"), None);
        assert_eq!(local_name("two words"), None);
    }
}
