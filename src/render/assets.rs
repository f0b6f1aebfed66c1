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
    /// The file is outside the folder the page is built in (an absolute
    /// path, or one that climbs out with `..`), or not an image: never
    /// read, never inlined; the alt text, marked.
    Refused(String),
    /// An SVG nested deeper than [`MAX_SVG_DEPTH`]: not inlined (issue 24,
    /// item 19); the alt text, marked. `build` and `paper doc` refuse the
    /// page, naming the file.
    TooDeep(String),
}

/// The deepest an SVG's elements may nest to be inlined or rasterized:
/// the parse is iterative, but what writes an SVG out again (ours) or
/// draws it (resvg) walks it recursively, and a 20,000-deep one
/// exhausted the stack. Figures nest a few dozen deep at most.
pub const MAX_SVG_DEPTH: usize = 256;

/// How deep the elements of `doc` nest (the root element is 1), walked
/// without recursion.
pub fn svg_depth(doc: &roxmltree::Document<'_>) -> usize {
    // Document order puts a parent before its children: each element's
    // depth is its parent's plus one.
    let mut depths: std::collections::HashMap<roxmltree::NodeId, usize> =
        std::collections::HashMap::new();
    let mut deepest = 0;
    for node in doc.root().descendants().filter(|n| n.is_element()) {
        let depth = 1 + node
            .parent()
            .and_then(|p| depths.get(&p.id()).copied())
            .unwrap_or(0);
        deepest = deepest.max(depth);
        depths.insert(node.id(), depth);
    }
    deepest
}

/// True when `bytes` are an SVG (XML) document nested deeper than
/// [`MAX_SVG_DEPTH`]; false for one within it or not XML at all.
pub fn svg_too_deep(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(&text, options)
        .is_ok_and(|doc| svg_depth(&doc) > MAX_SVG_DEPTH)
}

impl Inlined {
    /// The HTML to put in the page.
    pub fn html(&self) -> &str {
        match self {
            Inlined::Img(h)
            | Inlined::Svg(h)
            | Inlined::Remote(h)
            | Inlined::Missing(h)
            | Inlined::Refused(h)
            | Inlined::TooDeep(h) => h,
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

/// Where a renderer gets the bytes of the files a page embeds (images):
/// loaded before rendering (`render::build::load_assets`), so no renderer touches the disk.
/// Paths are looked up lexically normalized ([`normalize`]).
pub trait Assets: Send + Sync {
    /// The bytes of the file at `path`, if there is one.
    fn get(&self, path: &Path) -> Option<Vec<u8>>;
}

/// Files by lexically normalized path: what a loader read, or the figures
/// a build is about to write.
pub type AssetMap = std::collections::BTreeMap<PathBuf, Vec<u8>>;

impl Assets for AssetMap {
    fn get(&self, path: &Path) -> Option<Vec<u8>> {
        std::collections::BTreeMap::get(self, &normalize(path)).cloned()
    }
}

/// Records every path asked for and gives nothing: rendering with it
/// finds which files an output embeds without reading any (what it asks
/// for depends on the text alone, never on the bytes it is given).
#[derive(Debug, Default)]
pub struct Wanted(std::sync::Mutex<std::collections::BTreeSet<PathBuf>>);

impl Wanted {
    /// The paths asked for, normalized, sorted.
    pub fn paths(self) -> std::collections::BTreeSet<PathBuf> {
        self.0.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl Assets for Wanted {
    fn get(&self, path: &Path) -> Option<Vec<u8>> {
        let mut paths = self.0.lock().unwrap_or_else(|e| e.into_inner());
        paths.insert(normalize(path));
        None
    }
}

/// `first`, then `then`: the figures a build makes before what is on disk,
/// so one build (and one `--check`) sees a figure and the page that embeds
/// it agree.
pub struct Layered<'a> {
    /// Asked first.
    pub first: &'a dyn Assets,
    /// Asked where `first` has nothing.
    pub then: &'a dyn Assets,
}

impl Assets for Layered<'_> {
    fn get(&self, path: &Path) -> Option<Vec<u8>> {
        self.first.get(path).or_else(|| self.then.get(path))
    }
}

/// `path` with `.` dropped and `a/..` folded, without touching the disk.
pub use crate::fsutil::normalize;

/// An image reference as a page writes it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Image<'a> {
    /// Where it is: a path relative to the page, or a URL.
    pub src: &'a str,
    /// Its alternative text.
    pub alt: &'a str,
    /// Its title (may be empty).
    pub title: &'a str,
    /// Further attributes for an `<img>`, already escaped (` width="40"`).
    pub extra: &'a str,
}

/// Resolves `image` (its `src` relative to `base`) into HTML for the page,
/// its bytes from `assets`. `prefix` makes an SVG's ids unique on the
/// page; `alt`, `title` and `extra` are kept on an `<img>`. Returns the
/// HTML and the local file it needed (found or not).
pub fn inline_image(
    assets: &dyn Assets,
    base: &Path,
    image: &Image<'_>,
    prefix: &str,
) -> (Inlined, Option<PathBuf>) {
    let Image {
        src,
        alt,
        title,
        extra,
    } = *image;
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
    let refused = |why: &str| {
        Inlined::Refused(format!(
            "<span class=\"missing-image\" title=\"{}\">{}</span>",
            escape_html(&format!("not inlined: {why}")),
            escape_html(if alt.is_empty() { src } else { alt })
        ))
    };
    if let Some(why) = refusal(base, Path::new(&decoded)) {
        return (refused(why), None);
    }
    let Some(bytes) = assets.get(&path) else {
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
    if is_svg && svg_too_deep(&bytes) {
        return (
            Inlined::TooDeep(format!(
                "<span class=\"missing-image\" title=\"not inlined: nested more than {MAX_SVG_DEPTH} deep\">{}</span>",
                escape_html(if alt.is_empty() { src } else { alt })
            )),
            Some(path),
        );
    }
    let inline = if is_svg {
        unique_svg(&String::from_utf8_lossy(&bytes), prefix)
    } else {
        None
    };
    if let Some(inline) = inline {
        let svg = sized_svg(
            &inline,
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
    // A raster, or an SVG that is not well-formed XML: an `<img>` (where a
    // browser runs no script an SVG holds).
    let mime = if is_svg {
        "image/svg+xml"
    } else {
        match raster_type(&path) {
            Some(mime) => mime,
            None => return (refused("not an image (by its file name)"), Some(path)),
        }
    };
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    (
        Inlined::Img(format!(
            "<img src=\"data:{mime};base64,{data}\" alt=\"{}\"{title_attr}{extra}>",
            escape_html(alt)
        )),
        Some(path),
    )
}

/// Why the image `source` of a document in folder `base` may not be read
/// into a page, if it may not: an absolute source, or one that climbs out
/// of the folder the build runs in (out of the document's own folder, when
/// that lies outside the current one). A page is published; a file from
/// elsewhere on the disk (`/etc/passwd`, `../secret.png`) must never be
/// carried into it.
pub fn refusal(base: &Path, source: &Path) -> Option<&'static str> {
    if source.is_absolute() || source.has_root() {
        return Some("an absolute path: images are read from inside the project only");
    }
    let within = if base.is_absolute() {
        match std::env::current_dir()
            .ok()
            .and_then(|cwd| base.strip_prefix(cwd).ok().map(Path::to_path_buf))
        {
            Some(relative) => relative.join(source),
            None => source.to_path_buf(),
        }
    } else {
        base.join(source)
    };
    match normalize(&within).components().next() {
        Some(std::path::Component::ParentDir) => {
            Some("outside the project: images are read from inside it only")
        }
        _ => None,
    }
}

/// `text` with `%XX` escapes decoded (invalid UTF-8 replaced).
pub fn percent_decode(text: &str) -> String {
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

/// An SVG document as an inline element, or `None` when it is not
/// well-formed XML with an `<svg>` root (the caller then shows it as an
/// `<img>`, where a browser runs nothing in it).
///
/// The document is parsed (roxmltree) and written out again, so nothing
/// but the root element and what it holds reaches the page: no
/// declaration, doctype, comment or processing instruction, and no markup
/// after `</svg>` (a `<meta http-equiv>` after
/// the root redirected the page). Removed on the way: the elements that
/// run or embed other documents (`script`, `foreignObject`, `iframe`,
/// `object`, `embed`, `handler`, `listener`), every `on*` attribute, and
/// every attribute whose value, spaces and control characters dropped,
/// holds `javascript:`, `vbscript:` or `data:text/html`. Ids, whether
/// quoted with `"` or `'` and however spaced, become `prefix-ID` (a
/// repeated one `prefix-ID-2`, ...), and every `href="#ID"` and
/// `url(#ID)` follows the first element of that id.
pub fn unique_svg(text: &str, prefix: &str) -> Option<String> {
    let options = || roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let parsed;
    let with_xlink;
    // `xlink:` used without its declaration is common in hand-made files.
    let doc = match roxmltree::Document::parse_with_options(text, options()) {
        Ok(doc) => doc,
        Err(_) if text.contains("xlink:") && !text.contains("xmlns:xlink") => {
            with_xlink = text.replacen(
                "<svg",
                "<svg xmlns:xlink=\"http://www.w3.org/1999/xlink\"",
                1,
            );
            parsed = roxmltree::Document::parse_with_options(&with_xlink, options()).ok()?;
            parsed
        }
        Err(_) => return None,
    };
    let root = doc.root_element();
    if !root.tag_name().name().eq_ignore_ascii_case("svg") || svg_depth(&doc) > MAX_SVG_DEPTH {
        return None;
    }
    // Every id in document order: the first keeps it, repeats get `-N`.
    let mut taken: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for node in root.descendants().filter(|n| n.is_element()) {
        if let Some(id) = node.attribute("id") {
            taken.insert(id);
        }
    }
    let mut assigned: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut first: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut renamed: std::collections::HashMap<roxmltree::NodeId, String> =
        std::collections::HashMap::new();
    for node in root.descendants().filter(|n| n.is_element()) {
        let Some(id) = node.attribute("id") else {
            continue;
        };
        let mut new = id.to_string();
        let mut n = 2;
        while assigned.contains(&new) || (new != id && taken.contains(new.as_str())) {
            new = format!("{id}-{n}");
            n += 1;
        }
        assigned.insert(new.clone());
        let new = format!("{prefix}-{new}");
        first.entry(id.to_string()).or_insert_with(|| new.clone());
        renamed.insert(node.id(), new);
    }
    let mut out = String::with_capacity(text.len());
    write_svg_node(root, true, &renamed, &first, &mut out);
    Some(out)
}

/// SVG elements an inlined figure may hold (SVG 1.1 and 2, "Element
/// index"): shapes, text, paint servers, clipping, masking and filter
/// primitives. Not: `script`, `foreignObject`, the animation elements
/// (`animate`, `set`, ... can rewrite an `href`), `feImage` and `mpath`
/// (they fetch), `view`, `cursor`, `font`.
pub const SVG_ELEMENTS: &[&str] = &[
    "svg",
    "a",
    "circle",
    "clipPath",
    "defs",
    "desc",
    "ellipse",
    "feBlend",
    "feColorMatrix",
    "feComponentTransfer",
    "feComposite",
    "feConvolveMatrix",
    "feDiffuseLighting",
    "feDisplacementMap",
    "feDistantLight",
    "feDropShadow",
    "feFlood",
    "feFuncA",
    "feFuncB",
    "feFuncG",
    "feFuncR",
    "feGaussianBlur",
    "feMerge",
    "feMergeNode",
    "feMorphology",
    "feOffset",
    "fePointLight",
    "feSpecularLighting",
    "feSpotLight",
    "feTile",
    "feTurbulence",
    "filter",
    "g",
    "image",
    "line",
    "linearGradient",
    "marker",
    "mask",
    "metadata",
    "path",
    "pattern",
    "polygon",
    "polyline",
    "radialGradient",
    "rect",
    "stop",
    "style",
    "switch",
    "symbol",
    "text",
    "textPath",
    "title",
    "tspan",
    "use",
];

/// True for an attribute value or link target that could run code when
/// followed: `javascript:`, `vbscript:` or `data:text/html` anywhere once
/// spaces and control characters are dropped.
pub fn dangerous_value(value: &str) -> bool {
    let squeezed: String = value
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    ["javascript:", "vbscript:", "data:text/html"]
        .iter()
        .any(|bad| squeezed.contains(bad))
}

/// `name` with the prefix its namespace has at `node`, if any.
fn qualified(node: roxmltree::Node<'_, '_>, namespace: Option<&str>, name: &str) -> String {
    match namespace.and_then(|ns| node.lookup_prefix(ns)) {
        Some(prefix) if !prefix.is_empty() => format!("{prefix}:{name}"),
        _ => name.to_string(),
    }
}

/// `value` with every `url(#ID)` (quoted or not) pointing at the renamed id.
fn rewrite_urls(value: &str, first: &std::collections::HashMap<String, String>) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(i) = rest.find("url(") {
        out.push_str(&rest[..i + 4]);
        rest = &rest[i + 4..];
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'');
        let inner = quote.map_or(rest, |q| &rest[q.len_utf8()..]);
        if let Some(target) = inner.strip_prefix('#') {
            let end = target
                .find(|c: char| Some(c) == quote || c == ')')
                .unwrap_or(target.len());
            if let Some(new) = first.get(&target[..end]) {
                if let Some(q) = quote {
                    out.push(q);
                }
                out.push('#');
                out.push_str(new);
                rest = &target[end..];
                continue;
            }
        }
    }
    out.push_str(rest);
    out
}

fn write_svg_node(
    node: roxmltree::Node<'_, '_>,
    is_root: bool,
    renamed: &std::collections::HashMap<roxmltree::NodeId, String>,
    first: &std::collections::HashMap<String, String>,
    out: &mut String,
) {
    use std::fmt::Write as _;
    let tag = node.tag_name();
    // SVG elements only (issue 24, item 24): a `<meta>` written inside an
    // `<svg>` is hoisted out of it by the HTML parser and redirected the
    // page.
    let svg_namespace = tag
        .namespace()
        .is_none_or(|ns| ns == "http://www.w3.org/2000/svg");
    if !svg_namespace || !SVG_ELEMENTS.contains(&tag.name()) {
        return;
    }
    let name = qualified(node, tag.namespace(), tag.name());
    let _ = write!(out, "<{name}");
    if is_root {
        for ns in node.namespaces() {
            match ns.name() {
                Some(p) => {
                    let _ = write!(out, " xmlns:{p}=\"{}\"", escape_html(ns.uri()));
                }
                None => {
                    let _ = write!(out, " xmlns=\"{}\"", escape_html(ns.uri()));
                }
            }
        }
    }
    for attr in node.attributes() {
        let local = attr.name();
        if crate::text::starts_with_ignore_ascii_case(local, "on") || dangerous_value(attr.value())
        {
            continue;
        }
        let attr_name = qualified(node, attr.namespace(), local);
        let value = if local == "id" && attr.namespace().is_none() {
            renamed
                .get(&node.id())
                .cloned()
                .unwrap_or_else(|| attr.value().to_string())
        } else if local == "href" {
            match attr.value().strip_prefix('#').and_then(|id| first.get(id)) {
                Some(new) => format!("#{new}"),
                None => attr.value().to_string(),
            }
        } else {
            rewrite_urls(attr.value(), first)
        };
        let _ = write!(out, " {attr_name}=\"{}\"", escape_html(&value));
    }
    let children: Vec<roxmltree::Node<'_, '_>> = node
        .children()
        .filter(|c| c.is_element() || c.is_text())
        .collect();
    if children.is_empty() {
        out.push_str("/>");
        return;
    }
    out.push('>');
    for child in children {
        if child.is_text() {
            let text = child.text().unwrap_or_default();
            // Style text may name ids in url(#...) too.
            let text = if tag.name().eq_ignore_ascii_case("style") {
                rewrite_urls(text, first)
            } else {
                text.to_string()
            };
            out.push_str(&escape_html(&text));
        } else {
            write_svg_node(child, false, renamed, first, out);
        }
    }
    let _ = write!(out, "</{name}>");
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
    // Only `.md`: `build` makes a page for nothing else (a `.markdown`
    // link would point at a page never written).
    if let Some(stem) = lower.strip_suffix(".md") {
        let stem_len = stem.len();
        return format!("{}.html{fragment}", &path[..stem_len]);
    }
    target.to_string()
}

/// Raw HTML as a page shows it ([`rewrite_raw_html`]).
#[derive(Debug, Default)]
pub struct RawHtml {
    /// The rewritten HTML.
    pub html: String,
    /// The local files it read (images).
    pub read: Vec<PathBuf>,
    /// The tags dropped because they would navigate the page or change
    /// its base, as written.
    pub dropped: Vec<String>,
    /// SVG files not inlined for nesting deeper than [`MAX_SVG_DEPTH`].
    pub too_deep: Vec<PathBuf>,
}

/// Rewrites the HTML of a page's body (raw HTML from prose among it) as
/// the HTML5 tokenizer reads it (html5ever's, the one browsers' parsing
/// algorithm describes): every `<img>` with a local `src` has its image
/// inlined ([`inline_image`]: an SVG as an inline `<svg>`, a raster as a
/// `data:` URI), its `width`, `height`, `align` and `class` kept; `<meta
/// http-equiv>` and `<base>` are dropped and named; comments and doctypes
/// are dropped. Everything else is written again token by token (raw text
/// inside `<style>`, `<script>` and their like as it stood). What a page
/// finally holds is decided after this by the allow-list
/// (`render/sanitize.rs`); this only makes the images whole
/// (`docs/PUBLISHING.md`, "Raw HTML"; issue 24, item 24: our own tag
/// scanner was put out of step by a quote in an unquoted value).
pub fn rewrite_raw_html(
    html: &str,
    base: &Path,
    prefix: &str,
    counter: &mut usize,
    assets: &dyn Assets,
) -> RawHtml {
    use html5ever::tokenizer::{BufferQueue, Tokenizer, TokenizerOpts};
    let sink = Rewriter {
        base,
        prefix,
        assets,
        counter: std::cell::Cell::new(*counter),
        out: std::cell::RefCell::new(String::with_capacity(html.len())),
        read: std::cell::RefCell::new(Vec::new()),
        dropped: std::cell::RefCell::new(Vec::new()),
        too_deep: std::cell::RefCell::new(Vec::new()),
        raw: std::cell::Cell::new(false),
    };
    let input = BufferQueue::default();
    input.push_back(html5ever::tendril::StrTendril::from_slice(html));
    let tokenizer = Tokenizer::new(sink, TokenizerOpts::default());
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    let sink = tokenizer.sink;
    *counter = sink.counter.get();
    RawHtml {
        html: sink.out.into_inner(),
        read: sink.read.into_inner(),
        dropped: sink.dropped.into_inner(),
        too_deep: sink.too_deep.into_inner(),
    }
}

/// The token sink of [`rewrite_raw_html`].
struct Rewriter<'a> {
    base: &'a Path,
    prefix: &'a str,
    assets: &'a dyn Assets,
    counter: std::cell::Cell<usize>,
    out: std::cell::RefCell<String>,
    read: std::cell::RefCell<Vec<PathBuf>>,
    dropped: std::cell::RefCell<Vec<String>>,
    too_deep: std::cell::RefCell<Vec<PathBuf>>,
    /// Inside an element whose text the tokenizer reads raw.
    raw: std::cell::Cell<bool>,
}

/// A tag as HTML again: `<name a="v">`, values escaped.
fn write_tag(tag: &html5ever::tokenizer::Tag) -> String {
    use html5ever::tokenizer::TagKind;
    let mut out = String::from(if tag.kind == TagKind::EndTag {
        "</"
    } else {
        "<"
    });
    out.push_str(&tag.name);
    if tag.kind == TagKind::StartTag {
        for attr in &tag.attrs {
            out.push(' ');
            out.push_str(&attr.name.local);
            out.push_str("=\"");
            out.push_str(&escape_html(&attr.value));
            out.push('"');
        }
        if tag.self_closing {
            out.push_str(" /");
        }
    }
    out.push('>');
    out
}

impl Rewriter<'_> {
    fn attr(tag: &html5ever::tokenizer::Tag, name: &str) -> Option<String> {
        tag.attrs
            .iter()
            .find(|a| &*a.name.local == name)
            .map(|a| a.value.to_string())
    }

    /// An `<img>` with its image inlined, or `None` for one with no `src`.
    fn image(&self, tag: &html5ever::tokenizer::Tag) -> Option<String> {
        let src = Self::attr(tag, "src")?;
        let n = self.counter.get() + 1;
        self.counter.set(n);
        let alt = Self::attr(tag, "alt").unwrap_or_default();
        let title = Self::attr(tag, "title").unwrap_or_default();
        let mut extra = String::new();
        for name in ["width", "height", "align", "class"] {
            if let Some(v) = Self::attr(tag, name) {
                extra.push_str(&format!(" {name}=\"{}\"", escape_html(&v)));
            }
        }
        let image = Image {
            src: &src,
            alt: &alt,
            title: &title,
            extra: &extra,
        };
        let (inlined, path) = inline_image(
            self.assets,
            self.base,
            &image,
            &format!("{}{n}", self.prefix),
        );
        if let (Inlined::TooDeep(_), Some(path)) = (&inlined, &path) {
            self.too_deep.borrow_mut().push(path.clone());
        }
        self.read.borrow_mut().extend(path);
        Some(inlined.html().to_string())
    }
}

impl html5ever::tokenizer::TokenSink for Rewriter<'_> {
    type Handle = ();

    fn process_token(
        &self,
        token: html5ever::tokenizer::Token,
        _line: u64,
    ) -> html5ever::tokenizer::TokenSinkResult<()> {
        use html5ever::tokenizer::states::RawKind;
        use html5ever::tokenizer::{TagKind, Token, TokenSinkResult};
        let mut out = self.out.borrow_mut();
        match token {
            Token::CharacterTokens(text) if self.raw.get() => out.push_str(&text),
            Token::CharacterTokens(text) => out.push_str(&escape_text(&text)),
            Token::NullCharacterToken => out.push('\u{FFFD}'),
            Token::TagToken(tag) if tag.kind == TagKind::EndTag => {
                self.raw.set(false);
                out.push_str(&write_tag(&tag));
            }
            Token::TagToken(tag) => {
                let name: &str = &tag.name;
                let navigates = name == "base"
                    || (name == "meta" && tag.attrs.iter().any(|a| &*a.name.local == "http-equiv"));
                if navigates {
                    self.dropped.borrow_mut().push(write_tag(&tag));
                    return TokenSinkResult::Continue;
                }
                let local_image = Self::attr(&tag, "src").is_some_and(|s| !s.starts_with("data:"));
                if name == "img"
                    && local_image
                    && let Some(inlined) = self.image(&tag)
                {
                    out.push_str(&inlined);
                    return TokenSinkResult::Continue;
                }
                out.push_str(&write_tag(&tag));
                let kind = match name {
                    _ if tag.self_closing => None,
                    "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => {
                        Some(RawKind::Rawtext)
                    }
                    "script" => Some(RawKind::ScriptData),
                    "textarea" | "title" => Some(RawKind::Rcdata),
                    "plaintext" => {
                        self.raw.set(true);
                        return TokenSinkResult::Plaintext;
                    }
                    _ => None,
                };
                if let Some(kind) = kind {
                    self.raw.set(kind != RawKind::Rcdata);
                    return TokenSinkResult::RawData(kind);
                }
            }
            Token::DoctypeToken(_)
            | Token::CommentToken(_)
            | Token::EOFToken
            | Token::ParseError(_) => {}
        }
        TokenSinkResult::Continue
    }
}

/// Text as HTML: `&`, `<` and `>` escaped (quotes need no escaping
/// outside an attribute).
fn escape_text(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(['&', '<', '>']) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;"),
    )
}

/// The length in bytes of the HTML tag `text` starts with (up to and
/// including its `>`), quotes respected: a `>` inside a quoted value does
/// not end it. `None` when unclosed.
pub fn tag_end(text: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in text.char_indices().skip(1) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// The attributes of one HTML tag (`<img src="a" alt='b' hidden>`), in
/// order, names lowercased, values with character references decoded.
/// Read one after another, so `alt="x src=y"` holds no `src`.
pub fn attributes(tag: &str) -> Vec<(String, String)> {
    let body = tag
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim_end_matches('/');
    // Past the tag name.
    let mut rest = body.trim_start_matches('/');
    rest = &rest[rest
        .find(|c: char| c.is_whitespace() || c == '/')
        .unwrap_or(rest.len())..];
    let mut found = Vec::new();
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        if rest.is_empty() {
            break;
        }
        let name_len = rest
            .find(|c: char| c.is_whitespace() || c == '=' || c == '/')
            .unwrap_or(rest.len())
            .max(1);
        let name = rest[..name_len].to_ascii_lowercase();
        rest = rest[name_len..].trim_start();
        let value = if let Some(after) = rest.strip_prefix('=') {
            let after = after.trim_start();
            match after.chars().next() {
                Some(q @ ('"' | '\'')) => {
                    let end = after[1..].find(q).map_or(after.len(), |e| e + 1);
                    let value = &after[1..end];
                    rest = after.get(end + 1..).unwrap_or("");
                    value
                }
                _ => {
                    let end = after.find(char::is_whitespace).unwrap_or(after.len());
                    let value = &after[..end];
                    rest = &after[end..];
                    value
                }
            }
        } else {
            ""
        };
        found.push((name, decode_entities(value)));
    }
    found
}

/// The value of attribute `name` (lowercase) in one HTML tag, decoded.
pub fn attribute(tag: &str, name: &str) -> Option<String> {
    attributes(tag)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

/// Decodes the HTML character references a README uses: the five XML ones,
/// `&nbsp;` and a few typographic names, and numeric `&#N;` / `&#xH;`.
/// Anything else stays as written.
pub fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let end = tail[1..].find(';').filter(|&e| e <= 32).map(|e| e + 1);
        let decoded = end.and_then(|e| {
            let name = &tail[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some('\u{a0}'),
                "copy" => Some('©'),
                "reg" => Some('®'),
                "trade" => Some('™'),
                "mdash" => Some('—'),
                "ndash" => Some('–'),
                "hellip" => Some('…'),
                "middot" => Some('·'),
                "bull" => Some('•'),
                "times" => Some('×'),
                "rarr" => Some('→'),
                "larr" => Some('←'),
                "laquo" => Some('«'),
                "raquo" => Some('»'),
                _ => {
                    let num = name.strip_prefix('#')?;
                    let value = match num.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => num.parse().ok()?,
                    };
                    char::from_u32(value)
                }
            }?;
            Some((c, e + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &tail[len..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file under `dir`, loaded as a page's assets.
    fn disk(dir: &Path) -> AssetMap {
        super::super::build::load_assets(
            walkdir::WalkDir::new(dir)
                .into_iter()
                .flatten()
                .filter(|e| e.file_type().is_file())
                .map(|e| e.path().to_path_buf()),
        )
    }

    #[test]
    fn svg_ids_are_unique_per_figure_and_references_follow() {
        let svg = "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<svg xmlns=\"http://www.w3.org/2000/svg\"><defs><clipPath id=\"c1\"><rect/></clipPath><linearGradient id=\"c10\"/></defs><g clip-path=\"url(#c1)\" fill=\"url(#c10)\"><use href=\"#c1\" xlink:href=\"#c10\"/></g><script>alert(1)</script><rect onload=\"alert(2)\" width=\"1\"/></svg>";
        let out = unique_svg(svg, "f2").unwrap();
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
        let out = unique_svg(svg, "f1").unwrap();
        assert_eq!(
            out,
            "<svg><g id=\"f1-形状\"><path id=\"f1-路径\"/><use href=\"#f1-路径\"/></g><g id=\"f1-形状-3\"><path id=\"f1-路径-2\"/></g><g id=\"f1-形状-2\"/></svg>"
        );
    }

    /// Nothing that runs survives inlining, however it is spelled, and
    /// nothing after the root element reaches the page.
    #[test]
    fn nothing_that_runs_survives_inlining() {
        let svg = r#"<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" onload="a()">
<script >alert(1)</script >
<rect/><rect x="1" onmouseover="b()" ONCLICK='c()'/>
<a href="javascript:alert(2)"><text>世界 😀 on</text></a>
<a xlink:href=" java&#x09;script:alert(3)">x</a>
<animate attributeName="href" values="javascript:alert(4)"/>
<foreignObject><iframe src="x.html"/></foreignObject>
<style>rect { fill: url(#g) } &lt;/style&gt;</style>
</svg>"#;
        let out = unique_svg(svg, "p").unwrap();
        for bad in [
            "alert",
            "script",
            "onload",
            "onmouseover",
            "ONCLICK",
            "iframe",
            "foreignObject",
            "meta",
            "refresh",
            "body{}",
        ] {
            assert!(!out.contains(bad), "{bad} survived: {out}");
        }
        assert!(out.contains("<text>世界 😀 on</text>"), "{out}");
        assert!(out.contains("<rect x=\"1\"/>"), "{out}");
        assert!(out.ends_with("</svg>"), "{out}");
        // Not XML (markup after the root, a tag split by a comment): no
        // inline element at all; the page shows it as an <img>.
        let trailing = format!("{svg}\n<meta http-equiv=\"refresh\" content=\"0;url=x.html\">");
        assert_eq!(unique_svg(&trailing, "p"), None);
        assert_eq!(
            unique_svg("<svg><scr<!-- x -->ipt>a()</script></svg>", "p"),
            None
        );
        assert_eq!(unique_svg("<svg><rect></svg>", "p"), None);
        assert_eq!(unique_svg("<html/>", "p"), None);
    }

    /// Ids quoted either way and attributes on their own lines (as
    /// Inkscape writes them) are renamed, and their references follow.
    #[test]
    fn ids_however_written_are_made_unique() {
        let svg = "<svg xmlns='http://www.w3.org/2000/svg' xmlns:xlink='http://www.w3.org/1999/xlink'><linearGradient id='g'/><rect\n   id=\"r\" fill='url(#g)' style=\"fill:url('#g')\"/><use xlink:href='#r'/></svg>";
        let out = unique_svg(svg, "f9").unwrap();
        assert!(
            out.contains("id=\"f9-g\"") && out.contains("id=\"f9-r\""),
            "{out}"
        );
        assert!(out.contains("fill=\"url(#f9-g)\""), "{out}");
        assert!(out.contains("url(&#39;#f9-g&#39;)"), "{out}");
        assert!(out.contains("xlink:href=\"#f9-r\""), "{out}");
        assert!(!out.contains("'g'") && !out.contains("\"r\""), "{out}");
    }

    proptest::proptest! {
        /// No text makes inlining an SVG panic (ids, handlers, scripts).
        #[test]
        fn inlining_any_svg_text_never_panics(body in "[ a-z<>=\"'/#:()中😀é\\-]{0,80}") {
            let svg = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"a b\">{body}</svg>");
            let _ = unique_svg(&svg, "p");
            let _ = label_svg(&svg, &body);
        }

        /// Any attribute name or value, in any script, combining marks
        /// included (a non-ASCII attribute name once panicked the handler
        /// check), inlined or rejected without a panic.
        #[test]
        fn any_attribute_inlines_without_a_panic(
            name in "[a-zA-Zéé中😀\u{301}_-]{1,8}",
            value in "\\PC{0,12}",
            tag in "(\\PC|<|>|=|\"| ){0,40}",
        ) {
            let svg = format!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" {name}=\"{}\">{tag}</svg>",
                value.replace('"', "&quot;")
            );
            let _ = unique_svg(&svg, "p");
            let mut n = 0;
            let _ = rewrite_raw_html(&tag, Path::new("."), "p", &mut n, &AssetMap::new());
        }
    }

    /// Tags are read as a browser reads them: a `>` inside a quoted value
    /// does not end the tag, an attribute name inside another's value is
    /// not an attribute, and references are decoded once.
    #[test]
    fn raw_html_tags_are_read_whole() {
        let tag = r#"<img alt="a src=evil.png" src="p.png" class='"><script>x()</script>' width="20&quot;" hidden>"#;
        assert_eq!(tag_end(tag), Some(tag.len()));
        let attrs = attributes(tag);
        let names: Vec<&str> = attrs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["alt", "src", "class", "width", "hidden"]);
        assert_eq!(attribute(tag, "src").as_deref(), Some("p.png"));
        assert_eq!(attribute(tag, "width").as_deref(), Some("20\""));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.png"), b"\x89PNG").unwrap();
        let mut n = 0;
        let RawHtml { html, .. } = rewrite_raw_html(
            &format!("{tag} after"),
            dir.path(),
            "p",
            &mut n,
            &disk(dir.path()),
        );
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.ends_with(" after"), "{html}");
        assert!(html.contains("width=\"20&quot;\""), "{html}");
    }

    /// `<meta http-equiv>` and `<base>`, however spelled, are dropped
    /// and named as the HTML5 tokenizer reads them.
    #[test]
    fn tags_that_navigate_or_rebase_the_page_are_dropped_and_named() {
        let html = "<p>a</p><meta http-equiv=\"refresh\" content=\"0; url=https://x.example/\">\
                    <META HTTP-EQUIV='Refresh' CONTENT='1'><base href=\"https://x.example/\">\
                    <BASE\nhref=/><meta name=\"description\" content=\"kept\"><metadata>m</metadata>\
                    <basefont>b";
        let mut n = 0;
        let raw = rewrite_raw_html(html, Path::new("."), "p", &mut n, &AssetMap::new());
        assert_eq!(
            raw.html,
            "<p>a</p><meta name=\"description\" content=\"kept\"><metadata>m</metadata><basefont>b"
        );
        assert_eq!(raw.dropped.len(), 4, "{:?}", raw.dropped);
        assert!(raw.dropped[0].starts_with("<meta http-equiv=\"refresh\""));
        assert_eq!(raw.dropped[3], "<base href=\"/\">");
    }

    /// The build's own figures carry `role="img"`: inlined, the root element
    /// had it twice (an HTML parse error).
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
        let RawHtml { html, .. } = rewrite_raw_html(
            "<img alt=\"Logo\" width=\"250\" src=\"logo.svg\"><img src=\"bare.svg\" height=\"10\"><img src=\"logo.svg\">",
            dir.path(),
            "p",
            &mut n,
            &disk(dir.path()),
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
    fn remote_and_missing_images_do_not_break_the_page() {
        let dir = tempfile::tempdir().unwrap();
        let (remote, _) = inline_image(
            &disk(dir.path()),
            dir.path(),
            &Image {
                src: "https://img.shields.io/x.svg",
                alt: "build",
                ..Image::default()
            },
            "p1",
        );
        assert_eq!(
            remote.html(),
            "<a class=\"remote-image\" href=\"https://img.shields.io/x.svg\">build</a>"
        );
        let (missing, path) = inline_image(
            &disk(dir.path()),
            dir.path(),
            &Image {
                src: "nope.png",
                alt: "a <b>",
                ..Image::default()
            },
            "p2",
        );
        assert!(matches!(missing, Inlined::Missing(_)));
        assert!(missing.html().contains("a &lt;b&gt;"));
        assert!(path.is_some());
    }
}
