//! Which link targets a published document may hold: one policy for the
//! HTML pages and the RTF of `paper doc` (issue 24, item 25;
//! `docs/PUBLISHING.md`, "Links").
//!
//! A link is kept when its target has no scheme (a relative link:
//! `docs/SCORING.md`, `#notes`, `?q=1`, `//host/path`) or one of
//! [`ALLOWED_SCHEMES`]. Anything else (`javascript:`, `vbscript:`,
//! `data:`, `file:`, an application's own scheme) is written as the link's
//! text alone. The scheme is read as a browser reads it (the WHATWG URL
//! Standard, "basic URL parser"): leading and trailing C0 controls and
//! spaces dropped, tabs and newlines removed anywhere, then ASCII letters
//! followed by letters, digits, `+`, `-` or `.` up to the first `:`.

/// The schemes a kept link may have, lowercase.
pub const ALLOWED_SCHEMES: [&str; 3] = ["http", "https", "mailto"];

/// The scheme of `target` as a browser reads it, lowercased; `None` for a
/// relative target (no scheme, or text before a `:` that cannot be one,
/// such as `a b:c` or `./x:y`).
pub fn scheme(target: &str) -> Option<String> {
    let trimmed = target.trim_matches(|c: char| c <= ' ');
    let mut scheme = String::new();
    for c in trimmed.chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')) {
        match c {
            ':' if !scheme.is_empty() => return Some(scheme),
            c if c.is_ascii_alphabetic() => scheme.push(c.to_ascii_lowercase()),
            c if !scheme.is_empty() && (c.is_ascii_digit() || matches!(c, '+' | '-' | '.')) => {
                scheme.push(c);
            }
            _ => return None,
        }
    }
    None
}

/// True when a link to `target` may be written as a link: relative, or
/// with a scheme of [`ALLOWED_SCHEMES`].
pub fn allowed(target: &str) -> bool {
    scheme(target).is_none_or(|s| ALLOWED_SCHEMES.contains(&s.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_https_mailto_and_relative_links_are_kept() {
        for kept in [
            "https://ex.org/a",
            "HTTP://ex.org",
            "mailto:me@ex.org",
            "docs/SCORING.md#tiers",
            "#notes",
            "?q=1",
            "//ex.org/x",
            "",
            "a b:c",
            "./x:y",
            "1abc:x",
            "javascript%3Aalert(1)",
        ] {
            assert!(allowed(kept), "{kept:?} should be kept");
        }
        for refused in [
            "javascript:alert(1)",
            " JavaScript:alert(1)",
            "java\tscript:alert(1)",
            "\u{1}javascript:alert(1)",
            "jav\nascript:x",
            "vbscript:x",
            "data:text/html,<b>",
            "data:image/png;base64,AA",
            "file:///etc/passwd",
            "ftp://ex.org",
            "x-app+1.2:run",
        ] {
            assert!(!allowed(refused), "{refused:?} should be refused");
        }
    }
}
