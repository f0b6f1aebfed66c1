//! Text helpers that never slice at a byte index the text did not give:
//! prefixes compared without regard to ASCII case, where the text may hold
//! any character; quoting for a POSIX shell; and text made safe and
//! aligned for a terminal or a page (widths, control and bidirectional
//! characters).

/// `text` without `prefix`, compared ignoring ASCII case, or `None` when
/// `text` does not start with it (a multi-byte character where the prefix
/// would end is simply not a match).
pub fn strip_prefix_ignore_ascii_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// True when `text` starts with `prefix`, ignoring ASCII case.
pub fn starts_with_ignore_ascii_case(text: &str, prefix: &str) -> bool {
    strip_prefix_ignore_ascii_case(text, prefix).is_some()
}

/// Quotes `text` for a POSIX shell (in apostrophes, `'\''` for one inside).
pub fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '-' | '_' | '.' | '/' | ':' | '=' | ',' | '@' | '+')
        })
    {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The columns `text` takes in a terminal (Unicode Standard Annex #11,
/// through the `unicode-width` crate): 2 for a CJK character or an emoji,
/// 0 for a combining mark, 1 for most others. Aligning by `chars().count()`
/// or byte length put a column of ids out of line as soon as one held
/// such a character (red-team pass of issue 12, `corpus list`).
pub fn display_width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// `text` padded with spaces on the right to `width` columns
/// ([`display_width`]); as it is when already as wide.
pub fn pad_right(text: &str, width: usize) -> String {
    let pad = width.saturating_sub(display_width(text));
    format!("{text}{}", " ".repeat(pad))
}

/// `text` padded with spaces on the left to `width` columns.
pub fn pad_left(text: &str, width: usize) -> String {
    let pad = width.saturating_sub(display_width(text));
    format!("{}{text}", " ".repeat(pad))
}

/// `text` with every control character (C0, DEL, C1: an escape that
/// would colour the terminal, a newline that would break a one-line row)
/// written as its Rust escape (`\u{1b}`), and every bidirectional control
/// as [`bidi_shown`], for a line of terminal output; borrowed when there is
/// none.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return show_bidi(text);
    }
    let escaped: String = text
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    std::borrow::Cow::Owned(show_bidi(&escaped).into_owned())
}

/// `text` as a message on the terminal shows it (every line of an error,
/// a warning, a progress line): each control character but the line feed
/// and the tab written as its Rust escape (`\u{1b}`), and every
/// bidirectional control as [`bidi_shown`] (`[U+202E]`), so an id, a label
/// or a value quoted from a record can neither colour the terminal nor
/// reorder the line it is in (`docs/PUBLISHING.md`; issue 24, item 8);
/// borrowed when there is nothing to show otherwise. What every `errln!`
/// writes passes through it.
pub fn for_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    let shown_as_is = |c: char| c == '\n' || c == '\t';
    if !text
        .chars()
        .any(|c| (c.is_control() && !shown_as_is(c)) || is_bidi_control(c))
    {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.split('\n')
            .map(|line| {
                line.split('\t')
                    .map(|part| printable(part).into_owned())
                    .collect::<Vec<_>>()
                    .join("\t")
            })
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// True for the Unicode bidirectional embedding, override and isolate
/// controls (U+202A–U+202E, U+2066–U+2069): in recorded text (a question,
/// an answer, a query) one would reorder what follows it on the line or in
/// the cell, so a reader saw other text than was recorded (CVE-2021-42574,
/// "Trojan Source"). Pages and terminal output show each as its code point
/// ([`bidi_shown`]).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// How a page or the terminal shows bidirectional control `c`:
/// `[U+202E]`.
pub fn bidi_shown(c: char) -> String {
    format!("[U+{:04X}]", c as u32)
}

/// `text` with every bidirectional control as [`bidi_shown`]; borrowed
/// when there is none.
pub fn show_bidi(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_bidi_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars()
            .map(|c| {
                if is_bidi_control(c) {
                    bidi_shown(c)
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 24, item 8: a message quoting a record shows its controls,
    /// keeping its own line feeds and tabs.
    #[test]
    fn terminal_text_shows_controls_and_keeps_lines() {
        assert_eq!(for_terminal("a\n\tb"), "a\n\tb");
        assert_eq!(
            for_terminal("id 'x\u{202E}y'\n  \u{1b}[31mred\r"),
            "id 'x[U+202E]y'\n  \\u{1b}[31mred\\u{d}"
        );
        assert!(matches!(
            for_terminal("plain"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn prefixes_ignore_case_and_never_split_a_character() {
        assert_eq!(
            strip_prefix_ignore_ascii_case("OKN:rates", "okn:"),
            Some("rates")
        );
        assert_eq!(strip_prefix_ignore_ascii_case("été", "okn:"), None);
        assert_eq!(strip_prefix_ignore_ascii_case("中文注释", "okn:"), None);
        assert_eq!(strip_prefix_ignore_ascii_case("ok", "okn:"), None);
        assert!(!starts_with_ignore_ascii_case("dé", "on"));
        assert!(starts_with_ignore_ascii_case("onClick", "on"));
        assert!(!starts_with_ignore_ascii_case("é", "on"));
    }

    proptest::proptest! {
        /// No text makes either helper panic, and a match is a real prefix.
        #[test]
        fn any_text_and_prefix(text in "\\PC{0,12}", prefix in "\\PC{0,4}") {
            if let Some(rest) = strip_prefix_ignore_ascii_case(&text, &prefix) {
                proptest::prop_assert!(text.ends_with(rest));
                proptest::prop_assert_eq!(text.len(), prefix.len() + rest.len());
            }
        }
    }

    /// Wide and combining characters take their columns, so padded texts
    /// line up.
    #[test]
    fn pads_by_columns_not_bytes_or_characters() {
        assert_eq!(display_width("abc"), 3);
        assert_eq!(display_width("東京"), 4);
        assert_eq!(display_width("e\u{301}"), 1);
        assert_eq!(pad_right("東京", 6), "東京  ");
        assert_eq!(pad_right("ab", 6), "ab    ");
        assert_eq!(pad_left("é", 3), "  é");
        assert_eq!(pad_right("toolong", 3), "toolong");
        assert_eq!(printable("esc\u{1b}[31mRED"), "esc\\u{1b}[31mRED");
        assert_eq!(printable("new\nline"), "new\\u{a}line");
        assert!(matches!(
            printable("東京"),
            std::borrow::Cow::Borrowed("東京")
        ));
    }
}
