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
    if let Some(lexical) = literal_lexical_form(text) {
        return Cow::Owned(lexical);
    }
    Cow::Borrowed(text)
}

/// The lexical form of a literal written in SPARQL syntax, or `None`.
fn literal_lexical_form(text: &str) -> Option<String> {
    let quote = text.chars().next()?;
    if quote != '"' && quote != '\'' {
        return None;
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
        Some(lexical)
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
    if text.is_empty() || text.contains(char::is_whitespace) {
        return false;
    }
    if text.starts_with("urn:") {
        return true;
    }
    match text.split_once("://") {
        Some((scheme, rest)) => {
            !rest.is_empty()
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// The local name of an IRI-like text: what follows the last `#` or `/`
/// (`http://purl.obolibrary.org/obo/MONDO_0000745` and `obo/MONDO_0000745`
/// → `MONDO_0000745`), else what follows the first `:` of a prefixed name
/// (`obo:MONDO_0000745` → `MONDO_0000745`, `urn:isbn:1` → `isbn:1`), else
/// the text itself. `None` for text with whitespace, or when the local name
/// would be empty (`http://ex.org/`).
pub fn local_name(text: &str) -> Option<&str> {
    if text.is_empty() || text.contains(char::is_whitespace) {
        return None;
    }
    let local = if let Some(i) = text.rfind(['#', '/']) {
        &text[i + 1..]
    } else if let Some((prefix, rest)) = text.split_once(':') {
        if prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
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

#[cfg(test)]
mod tests {
    use super::*;

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
