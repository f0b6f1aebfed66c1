//! The allow-list every Markdown page's body passes before it is
//! published (issue 24, item 24; `docs/PUBLISHING.md`, "Raw HTML"): raw
//! HTML from prose, our own Markdown output and the SVG figures inlined
//! into it are parsed as a browser parses them (html5ever, the HTML5
//! parsing algorithm, through ammonia) and written out again holding only
//! the elements and attributes listed here.
//!
//! What this gives, whatever the text (tags split by quotes, an SVG
//! holding `<meta>`, which the HTML parser hoists out of the `<svg>`):
//!
//! - nothing that navigates or rebases the page (`<meta>`, `<base>`,
//!   `<iframe>`, `<form>`, `<object>`, `<embed>`, ...) and nothing that
//!   runs (`<script>`, `on*` attributes, SMIL animation, `foreignObject`);
//! - links only as [`super::links`] allows them (http, https, mailto,
//!   relative); a Markdown link becomes its page's HTML link
//!   ([`super::assets::rewrite_link`]);
//! - images only from `data:image/...` URIs (the build inlines every
//!   local image; nothing outside the project is ever loaded);
//! - inside an SVG, SVG elements only, and references (`href`) only to
//!   ids on the page.
//!
//! The Content-Security-Policy (`render::theme`) stays the second line.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::LazyLock;

/// HTML elements a page may hold: what our Markdown writes, and what
/// prose on GitHub may use.
const HTML_ELEMENTS: &[&str] = &[
    "a",
    "abbr",
    "b",
    "bdi",
    "bdo",
    "blockquote",
    "br",
    "caption",
    "center",
    "cite",
    "code",
    "col",
    "colgroup",
    "dd",
    "del",
    "details",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "figcaption",
    "figure",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "img",
    "input",
    "ins",
    "kbd",
    "li",
    "mark",
    "ol",
    "p",
    "pre",
    "q",
    "rp",
    "rt",
    "ruby",
    "s",
    "samp",
    "section",
    "small",
    "span",
    "strike",
    "strong",
    "style",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "time",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
    "wbr",
];

/// Attributes any allowed element may carry (names as the HTML parser
/// gives them: SVG's camel case restored, `xlink:href` as `href`).
const ATTRIBUTES: &[&str] = &[
    // HTML
    "align",
    "alt",
    "checked",
    "cite",
    "class",
    "colspan",
    "datetime",
    "dir",
    "disabled",
    "height",
    "hidden",
    "href",
    "id",
    "lang",
    "name",
    "open",
    "reversed",
    "role",
    "rowspan",
    "scope",
    "span",
    "src",
    "start",
    "style",
    "title",
    "type",
    "valign",
    "value",
    "width",
    // SVG
    "alignment-baseline",
    "amplitude",
    "azimuth",
    "baseFrequency",
    "baseProfile",
    "baseline-shift",
    "bias",
    "clip",
    "clip-path",
    "clip-rule",
    "clipPathUnits",
    "color",
    "color-interpolation",
    "color-interpolation-filters",
    "cx",
    "cy",
    "d",
    "diffuseConstant",
    "direction",
    "display",
    "divisor",
    "dominant-baseline",
    "dx",
    "dy",
    "edgeMode",
    "elevation",
    "exponent",
    "fill",
    "fill-opacity",
    "fill-rule",
    "filter",
    "filterUnits",
    "flood-color",
    "flood-opacity",
    "font-family",
    "font-size",
    "font-size-adjust",
    "font-stretch",
    "font-style",
    "font-variant",
    "font-weight",
    "fr",
    "fx",
    "fy",
    "gradientTransform",
    "gradientUnits",
    "image-rendering",
    "in",
    "in2",
    "intercept",
    "k1",
    "k2",
    "k3",
    "k4",
    "kernelMatrix",
    "kernelUnitLength",
    "lengthAdjust",
    "letter-spacing",
    "lighting-color",
    "limitingConeAngle",
    "marker-end",
    "marker-mid",
    "marker-start",
    "markerHeight",
    "markerUnits",
    "markerWidth",
    "mask",
    "maskContentUnits",
    "maskUnits",
    "method",
    "mode",
    "numOctaves",
    "offset",
    "opacity",
    "operator",
    "order",
    "orient",
    "overflow",
    "paint-order",
    "pathLength",
    "patternContentUnits",
    "patternTransform",
    "patternUnits",
    "points",
    "pointsAtX",
    "pointsAtY",
    "pointsAtZ",
    "preserveAlpha",
    "preserveAspectRatio",
    "primitiveUnits",
    "r",
    "radius",
    "refX",
    "refY",
    "result",
    "rotate",
    "rx",
    "ry",
    "scale",
    "seed",
    "shape-rendering",
    "side",
    "slope",
    "spacing",
    "specularConstant",
    "specularExponent",
    "spreadMethod",
    "startOffset",
    "stdDeviation",
    "stitchTiles",
    "stop-color",
    "stop-opacity",
    "stroke",
    "stroke-dasharray",
    "stroke-dashoffset",
    "stroke-linecap",
    "stroke-linejoin",
    "stroke-miterlimit",
    "stroke-opacity",
    "stroke-width",
    "surfaceScale",
    "tableValues",
    "targetX",
    "targetY",
    "text-anchor",
    "text-decoration",
    "text-rendering",
    "textLength",
    "transform",
    "transform-origin",
    "unicode-bidi",
    "values",
    "vector-effect",
    "version",
    "viewBox",
    "visibility",
    "word-spacing",
    "writing-mode",
    "x",
    "x1",
    "x2",
    "xChannelSelector",
    "xlink",
    "xmlns",
    "y",
    "y1",
    "y2",
    "yChannelSelector",
    "z",
];

/// The policy, built once.
static POLICY: LazyLock<ammonia::Builder<'static>> = LazyLock::new(policy);

fn policy() -> ammonia::Builder<'static> {
    let tags: HashSet<&str> = HTML_ELEMENTS
        .iter()
        .chain(super::assets::SVG_ELEMENTS)
        .copied()
        .collect();
    let mut builder = ammonia::Builder::empty();
    builder
        .tags(tags)
        // What the removed elements held is dropped with them (by
        // default a removed element's text stays).
        .clean_content_tags(
            [
                "script",
                "noscript",
                "template",
                "iframe",
                "object",
                "embed",
                "noembed",
                "noframes",
                "xmp",
                "plaintext",
                "textarea",
                "select",
                "option",
                "math",
                "foreignObject",
                "animate",
                "animateMotion",
                "animateTransform",
                "set",
            ]
            .into_iter()
            .collect(),
        )
        .generic_attributes(ATTRIBUTES.iter().copied().collect())
        .generic_attribute_prefixes(["aria-"].into_iter().collect())
        // Every URL attribute is judged by `attribute` below; these are
        // only what ammonia's own parse of a URL lets reach it.
        .url_schemes(["http", "https", "mailto", "data"].into_iter().collect())
        .url_relative(ammonia::UrlRelative::PassThrough)
        .link_rel(None)
        .strip_comments(true)
        .attribute_filter(attribute);
    builder
}

/// The value an allowed attribute keeps, if it keeps one: links by the
/// link policy (a Markdown link rewritten to its HTML), images from
/// `data:image/...` only, an SVG reference to an id on the page only.
fn attribute<'v>(element: &str, name: &str, value: &'v str) -> Option<Cow<'v, str>> {
    match (element, name) {
        ("a", "href") | (_, "cite") => {
            if !super::links::allowed(value) {
                return None;
            }
            let rewritten = super::assets::rewrite_link(value);
            Some(if rewritten == value {
                Cow::Borrowed(value)
            } else {
                Cow::Owned(rewritten)
            })
        }
        ("img" | "image", "src" | "href") => {
            let lower = value.trim_start().get(..11).map(str::to_ascii_lowercase);
            (lower.as_deref() == Some("data:image/")).then_some(Cow::Borrowed(value))
        }
        (_, "href" | "src") => value.starts_with('#').then_some(Cow::Borrowed(value)),
        _ => Some(Cow::Borrowed(value)),
    }
}

/// `html` (a page's body, raw HTML and inlined SVG included) held to the
/// allow-list: parsed as a browser parses a `<div>`'s content, written out
/// again with only what the list allows. Never panics; linear in the
/// text for all but pathological nesting, and never recursive (ammonia
/// and html5ever walk the tree with explicit stacks).
pub fn body(html: &str) -> String {
    POLICY.clean(html).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file under `dir`, loaded as a page's assets.
    fn disk(dir: &std::path::Path) -> super::super::assets::AssetMap {
        super::super::build::load_assets(
            walkdir::WalkDir::new(dir)
                .into_iter()
                .flatten()
                .filter(|e| e.file_type().is_file())
                .map(|e| e.path().to_path_buf()),
        )
    }

    /// Issue 24, item 24: an SVG's `<meta http-equiv="refresh">` is
    /// hoisted out of the `<svg>` by the HTML parser and redirected the
    /// page; a quote in an unquoted attribute value put our old tag
    /// scanner out of step and the `<meta>` after it survived.
    #[test]
    fn nothing_that_navigates_or_runs_survives() {
        for html in [
            "<svg><g><meta http-equiv=\"refresh\" content=\"0;url=https://x.example/\"></g></svg>",
            "<a title=x\"> <meta http-equiv=\"refresh\" content=\"0;url=https://x.example/\"> \">y</a>",
            "<p>a</p><base href=\"https://x.example/\"><META HTTP-EQUIV=Refresh CONTENT=0>",
            "<svg><style><meta http-equiv=refresh content=0></style></svg>",
            "<svg><desc><meta http-equiv=refresh content=0></desc></svg>",
            "<math><mi><meta http-equiv=refresh content=0></mi></math>",
            "<noscript><meta http-equiv=refresh content=0></noscript>",
            "<template><meta http-equiv=refresh content=0></template>",
            "<iframe srcdoc=\"<meta http-equiv=refresh content=0>\"></iframe>",
            "<svg><a href=\"javascript:alert(1)\"><text>x</text></a><animate attributeName=href values=javascript:alert(2) /><set attributeName=href to=javascript:alert(3)/></svg>",
            "<img src=x onerror=alert(1)><img src=\"https://x.example/p.png\"><img src=\"/etc/passwd\">",
            "<svg><image href=\"https://x.example/p.png\"/><use href=\"https://x.example/s.svg#a\"/></svg>",
            "<form action=https://x.example><button formaction=javascript:alert(1)>b</button></form>",
            "<script>alert(1)</script><object data=x></object><embed src=x>",
        ] {
            let out = body(html);
            for bad in [
                "<meta",
                "refresh",
                "<base",
                "javascript",
                "onerror",
                "x.example",
                "<script",
                "alert",
                "<iframe",
                "<form",
                "<object",
                "<embed",
                "passwd",
                "formaction",
                "srcdoc",
                "animate",
                "<set",
            ] {
                assert!(!out.contains(bad), "{bad} survived {html}: {out}");
            }
        }
    }

    /// What our Markdown and figures write passes unchanged in meaning:
    /// anchors, footnotes, task lists, table alignment, data images,
    /// inlined SVG with its ids, references and style.
    #[test]
    fn our_own_html_and_figures_pass() {
        let html = "<h2 id=\"setup\">Setup <a class=\"anchor\" href=\"#setup\" aria-label=\"link to this section\">#</a></h2>\
            <p><a href=\"docs/SCORING.md#tiers\">s</a> <a href=\"mailto:me@ex.org\">m</a></p>\
            <table><thead><tr><th style=\"text-align: right\">a</th></tr></thead></table>\
            <ul><li><input disabled=\"\" type=\"checkbox\" checked=\"\"> done</li></ul>\
            <span class=\"figure\"><svg role=\"img\" aria-label=\"F\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 9 9\"><defs><clipPath id=\"f1-c\"><rect width=\"9\" height=\"9\"/></clipPath><linearGradient id=\"f1-g\"><stop offset=\"0\" stop-color=\"#fff\"/></linearGradient></defs><g clip-path=\"url(#f1-c)\"><use href=\"#f1-c\"/><text x=\"1\" text-anchor=\"middle\">a &lt; b</text></g><style>.x { fill: red }</style></svg></span>\
            <img src=\"data:image/png;base64,iVBORw==\" alt=\"logo\" width=\"40%\">\
            <details open><summary>More</summary><p>x</p></details>";
        let out = body(html);
        for kept in [
            "<h2 id=\"setup\">",
            "href=\"#setup\"",
            "aria-label=\"link to this section\"",
            "href=\"docs/SCORING.html#tiers\"",
            "href=\"mailto:me@ex.org\"",
            "style=\"text-align: right\"",
            "type=\"checkbox\"",
            "viewBox=\"0 0 9 9\"",
            "<clipPath id=\"f1-c\">",
            "<linearGradient id=\"f1-g\">",
            "stop-color=\"#fff\"",
            "clip-path=\"url(#f1-c)\"",
            "<use href=\"#f1-c\">",
            "text-anchor=\"middle\"",
            "a &lt; b",
            "<style>.x { fill: red }</style>",
            "src=\"data:image/png;base64,iVBORw==\"",
            "width=\"40%\"",
            "<details open=\"\"><summary>More</summary>",
        ] {
            assert!(out.contains(kept), "{kept} lost: {out}");
        }
    }

    #[test]
    fn raw_links_are_rewritten_in_their_href() {
        let dir = tempfile::tempdir().unwrap();
        let mut n = 0;
        let super::super::assets::RawHtml { html, .. } = super::super::assets::rewrite_raw_html(
            r#"<a title="a.md" href="a.md?x=1&amp;y=2#s">A</a> <a href="javascript:alert(1)">B</a> <a href="https://x/a.md">C</a>"#,
            dir.path(),
            "p",
            &mut n,
            &disk(dir.path()),
        );
        let html = body(&html);
        assert!(
            html.contains(r#"<a title="a.md" href="a.html?x=1&amp;y=2#s">A</a>"#),
            "{html}"
        );
        assert!(html.contains(r##"<a>B</a>"##), "{html}");
        assert!(html.contains(r#"<a href="https://x/a.md">C</a>"#), "{html}");
    }

    #[test]
    fn raw_html_images_are_inlined() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("logo.png"), b"\x89PNG").unwrap();
        let mut n = 0;
        let super::super::assets::RawHtml { html, read, .. } =
            super::super::assets::rewrite_raw_html(
                "<p align=\"center\"><img src=\"logo.png\" width=\"40%\" alt=\"# logo\"><a href=\"README_zh.md\">中文</a></p>",
                dir.path(),
                "r",
                &mut n,
                &disk(dir.path()),
            );
        assert!(
            html.contains(
                "<img src=\"data:image/png;base64,iVBORw==\" alt=\"# logo\" width=\"40%\">"
            ),
            "{html}"
        );
        assert!(
            body(&html).contains("<a href=\"README_zh.html\">中文</a>"),
            "{html}"
        );
        assert_eq!(read.len(), 1);
    }
}
