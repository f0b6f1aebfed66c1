//! Making a page self-contained: images become `data:` URIs or inline
//! `<svg>`, links to Markdown files become links to their HTML.
//!
//! - A raster image (`.png`, `.jpg`, `.jpeg`, `.gif`, `.webp`) becomes a
//!   standard base64 `data:` URI.
//! - An SVG is inlined. Its ids are made unique on the page (a prefix per
//!   figure), and every `url(#id)`, `href="#id"` and `xlink:href="#id"`
//!   reference is rewritten to match, so two figures that both define
//!   `#clip0` no longer fight. Scripts and event handlers in an SVG are
//!   dropped (a figure never needs them).
//! - A remote image cannot be inlined and the page's Content-Security-Policy
//!   would block it, so it becomes a link with its alt text.

use std::path::{Path, PathBuf};

use base64::Engine;

use super::escape_html;

/// What an image reference resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inlined {
    /// An `<img src="data:...">` element.
    Img(String),
    /// An inline `<svg>` element.
    Svg(String),
    /// A link to a remote image (`<a href="...">alt</a>`).
    Remote(String),
    /// The file is not there: the alt text, marked.
    Missing(String),
}

impl Inlined {
    /// The HTML to put in the page.
    pub fn html(&self) -> &str {
        match self {
            Inlined::Img(h) | Inlined::Svg(h) | Inlined::Remote(h) | Inlined::Missing(h) => h,
        }
    }
}

/// True for an absolute URL or a scheme (`https:`, `mailto:`, `data:`).
pub fn is_external(target: &str) -> bool {
    let scheme_end = target.find(':');
    let slash = target.find('/');
    match (scheme_end, slash) {
        (Some(c), Some(s)) => c < s,
        (Some(_), None) => true,
        _ => target.starts_with("//"),
    }
}

/// The MIME type of a raster image by its extension.
fn raster_type(path: &Path) -> Option<&'static str> {
    match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        "ico" => Some("image/x-icon"),
        _ => None,
    }
}

/// Files a build is about to write (figures), by lexically normalized
/// path: a page inlines these rather than what is on disk, so one build
/// (and one `--check`) sees a figure and the page that embeds it agree.
pub type Overlay = std::collections::BTreeMap<PathBuf, Vec<u8>>;

thread_local! {
    static OVERLAY: std::cell::RefCell<Option<std::sync::Arc<Overlay>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `f` with `overlay` consulted before the disk by every image read
/// on this thread (a page renders on one thread, so the pages a
/// build renders in parallel each see it).
pub fn with_overlay<T>(overlay: &std::sync::Arc<Overlay>, f: impl FnOnce() -> T) -> T {
    OVERLAY.with(|o| *o.borrow_mut() = Some(std::sync::Arc::clone(overlay)));
    let out = f();
    OVERLAY.with(|o| *o.borrow_mut() = None);
    out
}

/// `path` with `.` dropped and `a/..` folded, without touching the disk.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The bytes of an image: from the overlay in force, else from disk.
fn read_asset(path: &Path) -> Option<Vec<u8>> {
    let planned = OVERLAY.with(|o| {
        o.borrow()
            .as_ref()
            .and_then(|overlay| overlay.get(&normalize(path)).cloned())
    });
    planned.or_else(|| std::fs::read(path).ok())
}

/// Resolves `src` (relative to `base`) into HTML for the page. `prefix`
/// makes an SVG's ids unique on the page; `alt`, `title` and `extra`
/// (further attributes, already escaped) are kept on an `<img>`.
pub fn inline_image(
    base: &Path,
    src: &str,
    alt: &str,
    title: &str,
    prefix: &str,
    extra: &str,
) -> (Inlined, Option<PathBuf>) {
    let title_attr = if title.is_empty() {
        String::new()
    } else {
        format!(" title=\"{}\"", escape_html(title))
    };
    if is_external(src) {
        if src.starts_with("data:") {
            return (
                Inlined::Img(format!(
                    "<img src=\"{}\" alt=\"{}\"{title_attr}{extra}>",
                    escape_html(src),
                    escape_html(alt)
                )),
                None,
            );
        }
        let text = if alt.is_empty() { src } else { alt };
        return (
            Inlined::Remote(format!(
                "<a class=\"remote-image\" href=\"{}\">{}</a>",
                escape_html(src),
                escape_html(text)
            )),
            None,
        );
    }
    let path_part = src.split(['#', '?']).next().unwrap_or(src);
    let decoded = percent_decode(path_part);
    let path = base.join(&decoded);
    let Some(bytes) = read_asset(&path) else {
        return (
            Inlined::Missing(format!(
                "<span class=\"missing-image\" title=\"missing image: {}\">{}</span>",
                escape_html(src),
                escape_html(if alt.is_empty() { src } else { alt })
            )),
            Some(path),
        );
    };
    let is_svg = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    if is_svg {
        let text = String::from_utf8_lossy(&bytes);
        let svg = sized_svg(
            &unique_svg(&text, prefix),
            attribute(extra, "width").as_deref(),
            attribute(extra, "height").as_deref(),
        );
        let labelled = if alt.is_empty() {
            svg
        } else {
            label_svg(&svg, alt)
        };
        return (
            Inlined::Svg(format!("<span class=\"figure\">{labelled}</span>")),
            Some(path),
        );
    }
    let mime = raster_type(&path).unwrap_or("application/octet-stream");
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    (
        Inlined::Img(format!(
            "<img src=\"data:{mime};base64,{data}\" alt=\"{}\"{title_attr}{extra}>",
            escape_html(alt)
        )),
        Some(path),
    )
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(v) = u8::from_str_radix(hex, 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The size an `<img width height>` asked for, given to the root `<svg>`:
/// its own `width`/`height` replaced (an SVG without a `viewBox` gets one
/// from its own numeric size first, so it scales instead of being cropped;
/// with only a width asked for, the height is dropped and follows the
/// `viewBox`). Unchanged when nothing was asked for.
fn sized_svg(svg: &str, width: Option<&str>, height: Option<&str>) -> String {
    if width.is_none() && height.is_none() {
        return svg.to_string();
    }
    let Some(start) = svg.find("<svg") else {
        return svg.to_string();
    };
    let Some(len) = svg[start..].find('>') else {
        return svg.to_string();
    };
    let end = start + len;
    let root = &svg[start..end];
    let own_w = attribute(root, "width");
    let own_h = attribute(root, "height");
    let mut tag = remove_attribute(&remove_attribute(root, "width"), "height");
    let number = |v: &Option<String>| {
        v.as_deref()
            .map(|v| v.trim_end_matches("px"))
            .and_then(|v| v.parse::<f64>().ok())
    };
    let has_viewbox = attribute(root, "viewbox").is_some();
    if !has_viewbox && let (Some(w), Some(h)) = (number(&own_w), number(&own_h)) {
        tag.push_str(&format!(" viewBox=\"0 0 {w} {h}\""));
    }
    let keep_own_height = !has_viewbox && number(&own_h).is_none();
    if let Some(w) = width {
        tag.push_str(&format!(" width=\"{}\"", escape_html(w)));
    }
    match (height, &own_h) {
        (Some(h), _) => tag.push_str(&format!(" height=\"{}\"", escape_html(h))),
        (None, Some(h)) if keep_own_height => {
            tag.push_str(&format!(" height=\"{}\"", escape_html(h)));
        }
        _ => {}
    }
    format!("{}{tag}{}", &svg[..start], &svg[end..])
}

/// `tag` without attribute `name` (quoted either way).
fn remove_attribute(tag: &str, name: &str) -> String {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(name) {
        let at = from + i;
        from = at + name.len();
        let before = &lower[..at];
        let rest = lower[at + name.len()..].trim_start();
        if !before.ends_with(|c: char| c.is_ascii_whitespace()) || !rest.starts_with('=') {
            continue;
        }
        let value_at = lower.len() - rest.len() + 1;
        let value = &tag[value_at..];
        let trimmed = value.trim_start();
        let skip = value.len() - trimmed.len();
        let value_len = match trimmed.chars().next() {
            Some(q @ ('"' | '\'')) => trimmed[1..].find(q).map_or(trimmed.len(), |e| e + 2),
            _ => trimmed
                .find(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/')
                .unwrap_or(trimmed.len()),
        };
        let space_start = before.trim_end().len();
        return format!(
            "{}{}",
            &tag[..space_start],
            &tag[value_at + skip + value_len..]
        );
    }
    tag.to_string()
}

/// Adds `role="img"` and an `aria-label` to the root `<svg>` element,
/// replacing any it had (a repeated attribute is an HTML parse error; the
/// build's own figures already carry `role="img"`).
fn label_svg(svg: &str, alt: &str) -> String {
    let Some(i) = svg.find("<svg") else {
        return svg.to_string();
    };
    let end = svg[i..].find('>').map_or(svg.len(), |e| i + e);
    let mut tag = svg[i + 4..end].to_string();
    for name in ["role", "aria-label"] {
        loop {
            let without = remove_attribute(&tag, name);
            if without == tag {
                break;
            }
            tag = without;
        }
    }
    format!(
        "{}<svg role=\"img\" aria-label=\"{}\"{tag}{}",
        &svg[..i],
        escape_html(alt),
        &svg[end..]
    )
}

/// An SVG document as an inline element: the XML declaration, doctype and
/// comments dropped, scripts and `on*` handlers removed, ids prefixed with
/// `prefix-` and every reference to them rewritten.
pub fn unique_svg(text: &str, prefix: &str) -> String {
    let mut svg = text.to_string();
    // Everything before the root element (declaration, doctype, comments).
    if let Some(start) = svg.find("<svg") {
        svg = svg[start..].to_string();
    }
    svg = strip_between(&svg, "<!--", "-->");
    svg = strip_elements(&svg, "script");
    svg = strip_event_handlers(&svg);
    // Collect ids.
    let mut ids = Vec::new();
    let mut search = 0;
    while let Some(i) = svg[search..].find(" id=\"") {
        let start = search + i + 5;
        if let Some(end) = svg[start..].find('"') {
            ids.push(svg[start..start + end].to_string());
            search = start + end;
        } else {
            break;
        }
    }
    ids.sort();
    ids.dedup();
    // Longest first, so `a1` is not rewritten inside `a10`.
    ids.sort_by_key(|id| std::cmp::Reverse(id.len()));
    for id in &ids {
        let new = format!("{prefix}-{id}");
        svg = svg.replace(&format!(" id=\"{id}\""), &format!(" id=\"{new}\""));
        svg = svg.replace(&format!("url(#{id})"), &format!("url(#{new})"));
        svg = svg.replace(&format!("url('#{id}')"), &format!("url('#{new}')"));
        svg = svg.replace(&format!("url(\"#{id}\")"), &format!("url(\"#{new}\")"));
        svg = svg.replace(&format!("href=\"#{id}\""), &format!("href=\"#{new}\""));
    }
    distinct_ids(svg.trim())
}

/// Makes repeated ids inside one SVG distinct: the second `id="x"` becomes
/// `id="x-2"`, the third `x-3`, and so on (design tools export layer names
/// as ids and repeat them). References keep pointing at the first, which is
/// the element a browser resolves them to anyway.
fn distinct_ids(svg: &str) -> String {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut rest = svg;
    while let Some(i) = rest.find(" id=\"") {
        let start = i + 5;
        let Some(end) = rest[start..].find('"') else {
            break;
        };
        taken.insert(rest[start..start + end].to_string());
        rest = &rest[start + end..];
    }
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(i) = rest.find(" id=\"") {
        let start = i + 5;
        let Some(end) = rest[start..].find('"') else {
            break;
        };
        let id = &rest[start..start + end];
        out.push_str(&rest[..start]);
        let n = seen.entry(id.to_string()).or_insert(0);
        *n += 1;
        if *n == 1 {
            out.push_str(id);
        } else {
            let mut k = *n;
            while taken.contains(&format!("{id}-{k}")) {
                k += 1;
            }
            let new = format!("{id}-{k}");
            out.push_str(&new);
            taken.insert(new);
        }
        rest = &rest[start + end..];
    }
    out.push_str(rest);
    out
}

fn strip_between(text: &str, open: &str, close: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(open) {
        out.push_str(&rest[..i]);
        match rest[i..].find(close) {
            Some(j) => rest = &rest[i + j + close.len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

fn strip_elements(text: &str, name: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let open = format!("<{name}");
    let close = format!("</{name}>");
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(i) = lower[at..].find(&open) {
        let start = at + i;
        out.push_str(&text[at..start]);
        match lower[start..].find(&close) {
            Some(j) => at = start + j + close.len(),
            None => match lower[start..].find("/>") {
                Some(j) => at = start + j + 2,
                None => {
                    at = text.len();
                    break;
                }
            },
        }
    }
    out.push_str(&text[at..]);
    out
}

/// Removes ` onload="..."`-style attributes, quoted or not. Offsets are
/// bytes and every slice starts at a character boundary (a space followed
/// by a CJK character or an emoji once panicked; new-user review of
/// issue 5).
fn strip_event_handlers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_whitespace()
            && bytes.len() > i + 3
            && bytes[i + 1..i + 3].eq_ignore_ascii_case(b"on")
        {
            // The attribute name: ASCII letters, digits and '-'.
            let name_len = bytes[i + 1..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
                .count();
            let mut e = i + 1 + name_len;
            while e < bytes.len() && bytes[e].is_ascii_whitespace() {
                e += 1;
            }
            if e < bytes.len() && bytes[e] == b'=' {
                let mut v = e + 1;
                while v < bytes.len() && bytes[v].is_ascii_whitespace() {
                    v += 1;
                }
                match bytes.get(v) {
                    Some(&q @ (b'"' | b'\'')) => {
                        if let Some(close) = bytes[v + 1..].iter().position(|b| *b == q) {
                            i = v + 1 + close + 1;
                            continue;
                        }
                    }
                    Some(_) => {
                        let len = bytes[v..]
                            .iter()
                            .take_while(|b| !(b.is_ascii_whitespace() || **b == b'>'))
                            .count();
                        i = v + len;
                        continue;
                    }
                    None => {}
                }
            }
        }
        let c = text[i..].chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Rewrites a relative link to a Markdown file (`../README.md#setup`) into
/// a link to its HTML (`../README.html#setup`); anything else is unchanged.
pub fn rewrite_link(target: &str) -> String {
    if is_external(target) || target.starts_with('#') {
        return target.to_string();
    }
    let (path, fragment) = match target.find(['#', '?']) {
        Some(i) => (&target[..i], &target[i..]),
        None => (target, ""),
    };
    let lower = path.to_ascii_lowercase();
    if let Some(stem) = lower
        .strip_suffix(".md")
        .or_else(|| lower.strip_suffix(".markdown"))
    {
        let stem_len = stem.len();
        return format!("{}.html{fragment}", &path[..stem_len]);
    }
    target.to_string()
}

/// Rewrites `src="..."` of `<img>` tags and `href="..."` of `<a>` tags in
/// raw HTML (prose may hold `<img src="assets/logo.png">` or a `<p
/// align="center">` block): images inlined, Markdown links to HTML.
/// Returns the rewritten HTML and the local files it read.
pub fn rewrite_raw_html(
    html: &str,
    base: &Path,
    prefix: &str,
    counter: &mut usize,
) -> (String, Vec<PathBuf>) {
    let mut out = String::with_capacity(html.len());
    let mut read = Vec::new();
    let lower = html.to_ascii_lowercase();
    let mut at = 0;
    while let Some(i) = lower[at..].find('<') {
        let start = at + i;
        out.push_str(&html[at..start]);
        let Some(len) = lower[start..].find('>') else {
            out.push_str(&html[start..]);
            return (out, read);
        };
        let tag = &html[start..=start + len];
        let tag_lower = &lower[start..=start + len];
        if tag_lower.starts_with("<img") {
            if let Some(src) = attribute(tag, "src") {
                *counter += 1;
                let alt = attribute(tag, "alt").unwrap_or_default();
                let title = attribute(tag, "title").unwrap_or_default();
                let mut extra = String::new();
                for name in ["width", "height", "align", "class"] {
                    if let Some(v) = attribute(tag, name) {
                        extra.push_str(&format!(" {name}=\"{}\"", escape_html(&v)));
                    }
                }
                let (inlined, path) = inline_image(
                    base,
                    &src,
                    &alt,
                    &title,
                    &format!("{prefix}{counter}"),
                    &extra,
                );
                read.extend(path);
                out.push_str(inlined.html());
            } else {
                out.push_str(tag);
            }
        } else if tag_lower.starts_with("<a ")
            || tag_lower.starts_with("<a\t")
            || tag_lower.starts_with("<a\n")
        {
            match attribute(tag, "href") {
                Some(href) if rewrite_link(&href) != href => {
                    out.push_str(&tag.replacen(&href, &rewrite_link(&href), 1));
                }
                _ => out.push_str(tag),
            }
        } else {
            out.push_str(tag);
        }
        at = start + len + 1;
    }
    out.push_str(&html[at..]);
    (out, read)
}

/// The value of attribute `name` in one tag (quoted or bare), unescaped
/// of `&amp;` only.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(name) {
        let at = from + i;
        from = at + name.len();
        let before_ok = lower[..at].ends_with(|c: char| c.is_ascii_whitespace());
        let rest = lower[at + name.len()..].trim_start();
        if !before_ok || !rest.starts_with('=') {
            continue;
        }
        let offset = tag.len() - rest.len() + 1;
        let value = tag[offset..].trim_start();
        let value = match value.chars().next()? {
            q @ ('"' | '\'') => value[1..].split(q).next()?.to_string(),
            _ => value
                .split(|c: char| c.is_ascii_whitespace() || c == '>')
                .next()?
                .trim_end_matches('/')
                .to_string(),
        };
        return Some(value.replace("&amp;", "&"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_ids_are_unique_per_figure_and_references_follow() {
        let svg = "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<svg xmlns=\"http://www.w3.org/2000/svg\"><defs><clipPath id=\"c1\"><rect/></clipPath><linearGradient id=\"c10\"/></defs><g clip-path=\"url(#c1)\" fill=\"url(#c10)\"><use href=\"#c1\" xlink:href=\"#c10\"/></g><script>alert(1)</script><rect onload=\"alert(2)\" width=\"1\"/></svg>";
        let out = unique_svg(svg, "f2");
        assert!(out.starts_with("<svg"));
        assert!(out.contains("id=\"f2-c1\"") && out.contains("id=\"f2-c10\""));
        assert!(out.contains("url(#f2-c1)") && out.contains("url(#f2-c10)"));
        assert!(out.contains("href=\"#f2-c1\"") && out.contains("xlink:href=\"#f2-c10\""));
        assert!(!out.contains("script") && !out.contains("alert") && !out.contains("onload"));
        assert!(out.contains("<rect width=\"1\"/>"), "{out}");
    }

    /// Real document: hiyouga/LLaMA-Factory `assets/thirdparty/dsw.svg`
    /// repeats `id="形状"` and `id="路径"` (layer names); inlined, the page
    /// held duplicate ids.
    #[test]
    fn repeated_ids_inside_one_svg_become_distinct() {
        let svg = "<svg><g id=\"形状\"><path id=\"路径\"/><use href=\"#路径\"/></g><g id=\"形状\"><path id=\"路径\"/></g><g id=\"形状-2\"/></svg>";
        let out = unique_svg(svg, "f1");
        assert_eq!(
            out,
            "<svg><g id=\"f1-形状\"><path id=\"f1-路径\"/><use href=\"#f1-路径\"/></g><g id=\"f1-形状-3\"><path id=\"f1-路径-2\"/></g><g id=\"f1-形状-2\"/></svg>"
        );
    }

    /// Event handlers go, quoted or not; text around them, CJK and emoji
    /// included, stays whole.
    #[test]
    fn event_handlers_go_and_any_text_survives() {
        assert_eq!(
            strip_event_handlers(
                "<svg onload=\"x()\" ONCLICK = 'y' onmouseover=z()><text> 世界 😀 on</text></svg>"
            ),
            "<svg><text> 世界 😀 on</text></svg>"
        );
        assert_eq!(strip_event_handlers("a 中"), "a 中");
        assert_eq!(strip_event_handlers(" 😀x"), " 😀x");
    }

    proptest::proptest! {
        /// No text makes inlining an SVG panic (ids, handlers, scripts).
        #[test]
        fn inlining_any_svg_text_never_panics(body in "[ a-z<>=\"'/#:()中😀é\\-]{0,80}") {
            let svg = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"a b\">{body}</svg>");
            let _ = unique_svg(&svg, "p");
            let _ = label_svg(&svg, &body);
        }
    }

    /// The build's own figures carry `role="img"`: inlined, the root element
    /// had it twice (an HTML parse error; new-user review of issue 5).
    #[test]
    fn an_inlined_svg_has_one_role_and_one_label() {
        let out = label_svg(
            "<svg role=\"img\" width=\"9\" aria-label='old' ROLE=img><title>t</title></svg>",
            "New",
        );
        assert_eq!(
            out,
            "<svg role=\"img\" aria-label=\"New\" width=\"9\"><title>t</title></svg>"
        );
    }

    /// Real document: hiyouga/LLaMA-Factory README_zh.md sizes its sponsor
    /// logo with `<img width="250" src="assets/sponsors/serpapi.svg">`; the
    /// inlined SVG kept its own 1654-pixel width and filled the page.
    #[test]
    fn an_img_width_sizes_the_inlined_svg() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("logo.svg"),
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1654.367\" height=\"500\" viewBox=\"600 700 1654.367 500\"><rect stroke-width=\"2\" width=\"9\"/></svg>",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("bare.svg"),
            "<svg width='40px' height='20'><rect/></svg>",
        )
        .unwrap();
        let mut n = 0;
        let (html, _) = rewrite_raw_html(
            "<img alt=\"Logo\" width=\"250\" src=\"logo.svg\"><img src=\"bare.svg\" height=\"10\"><img src=\"logo.svg\">",
            dir.path(),
            "p",
            &mut n,
        );
        assert!(
            html.contains("<svg role=\"img\" aria-label=\"Logo\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"600 700 1654.367 500\" width=\"250\"><rect stroke-width=\"2\" width=\"9\"/></svg>"),
            "{html}"
        );
        assert!(
            html.contains("<svg viewBox=\"0 0 40 20\" height=\"10\"><rect/></svg>"),
            "{html}"
        );
        assert!(
            html.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1654.367\" height=\"500\" viewBox="),
            "no size asked, none changed: {html}"
        );
    }

    #[test]
    fn markdown_links_become_html_links() {
        assert_eq!(rewrite_link("../README.md"), "../README.html");
        assert_eq!(
            rewrite_link("docs/SCORING.md#tiers"),
            "docs/SCORING.html#tiers"
        );
        assert_eq!(rewrite_link("https://ex.org/a.md"), "https://ex.org/a.md");
        assert_eq!(rewrite_link("#notes"), "#notes");
        assert_eq!(rewrite_link("data.csv"), "data.csv");
    }

    #[test]
    fn raw_html_images_are_inlined() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("logo.png"), b"\x89PNG").unwrap();
        let mut n = 0;
        let (html, read) = rewrite_raw_html(
            "<p align=\"center\"><img src=\"logo.png\" width=\"40%\" alt=\"# logo\"><a href=\"README_zh.md\">中文</a></p>",
            dir.path(),
            "r",
            &mut n,
        );
        assert!(
            html.contains(
                "<img src=\"data:image/png;base64,iVBORw==\" alt=\"# logo\" width=\"40%\">"
            ),
            "{html}"
        );
        assert!(
            html.contains("<a href=\"README_zh.html\">中文</a>"),
            "{html}"
        );
        assert_eq!(read.len(), 1);
    }

    #[test]
    fn remote_and_missing_images_do_not_break_the_page() {
        let dir = tempfile::tempdir().unwrap();
        let (remote, _) = inline_image(
            dir.path(),
            "https://img.shields.io/x.svg",
            "build",
            "",
            "p1",
            "",
        );
        assert_eq!(
            remote.html(),
            "<a class=\"remote-image\" href=\"https://img.shields.io/x.svg\">build</a>"
        );
        let (missing, path) = inline_image(dir.path(), "nope.png", "a <b>", "", "p2", "");
        assert!(matches!(missing, Inlined::Missing(_)));
        assert!(missing.html().contains("a &lt;b&gt;"));
        assert!(path.is_some());
    }
}
