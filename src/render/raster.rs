//! SVG figures rasterized to PNG, for documents that cannot show SVG (the
//! RTF manuscript `paper doc` writes: `docs/PUBLISHING.md`, "The
//! manuscript").
//!
//! Rendering is resvg's, with one font built in (DejaVu Sans,
//! `static/fonts/`, under its own licence beside it) standing for every
//! family the figures name, so the same SVG gives the same PNG bytes on
//! every machine, whatever fonts it has installed.

use resvg::{tiny_skia, usvg};

/// The font every figure's text is drawn with.
const FONT: &[u8] = include_bytes!("../../static/fonts/DejaVuSans.ttf");

/// Print resolution of a rasterized figure, dots per inch.
pub const PRINT_DPI: f32 = 300.0;

/// CSS pixels per inch: the unit an SVG's `width` and `height` are in.
const CSS_DPI: f32 = 96.0;

/// An SVG figure as a PNG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raster {
    /// The PNG file's bytes.
    pub png: Vec<u8>,
    /// Its size in pixels, at [`PRINT_DPI`].
    pub pixels: (u32, u32),
    /// The SVG's own size, CSS pixels (1/96 inch): the size to show it at.
    pub css: (u32, u32),
}

/// True when `bytes` look like an SVG document (an `<svg` root, after an
/// optional XML declaration, comments and whitespace).
pub fn is_svg(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(1024)];
    let text = String::from_utf8_lossy(head);
    text.contains("<svg")
}

/// `svg` rasterized at [`PRINT_DPI`] on a white ground (RTF readers show
/// a transparent pixel as black or white at will).
///
/// Errors: an SVG that does not parse or has no size, as its parser's
/// message; a size too large to rasterize (over 20,000 pixels a side).
pub fn svg_to_png(svg: &[u8]) -> Result<Raster, String> {
    // resvg walks the document recursively (issue 24, item 19).
    if super::assets::svg_too_deep(svg) {
        return Err(format!(
            "an SVG nested more than {} elements deep cannot be drawn",
            super::assets::MAX_SVG_DEPTH
        ));
    }
    let mut options = usvg::Options {
        font_family: "DejaVu Sans".to_string(),
        ..usvg::Options::default()
    };
    let fonts = options.fontdb_mut();
    fonts.load_font_data(FONT.to_vec());
    let family = "DejaVu Sans";
    fonts.set_sans_serif_family(family);
    fonts.set_serif_family(family);
    fonts.set_monospace_family(family);
    fonts.set_cursive_family(family);
    fonts.set_fantasy_family(family);
    let tree = usvg::Tree::from_data(svg, &options).map_err(|e| e.to_string())?;
    let size = tree.size();
    let scale = PRINT_DPI / CSS_DPI;
    let (w, h) = (
        (size.width() * scale).ceil(),
        (size.height() * scale).ceil(),
    );
    if !(1.0..=20_000.0).contains(&w) || !(1.0..=20_000.0).contains(&h) {
        return Err(format!(
            "a figure of {}×{} px is too large to rasterize",
            size.width(),
            size.height()
        ));
    }
    let mut pixmap =
        tiny_skia::Pixmap::new(w as u32, h as u32).ok_or("cannot allocate the figure")?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    let png = pixmap.encode_png().map_err(|e| e.to_string())?;
    Ok(Raster {
        png,
        pixels: (w as u32, h as u32),
        css: (
            size.width().round().max(1.0) as u32,
            size.height().round().max(1.0) as u32,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVG: &str = r##"<svg width="200" height="100" viewBox="0 0 200 100" xmlns="http://www.w3.org/2000/svg"><rect x="10" y="10" width="50" height="50" fill="#0000ff"/><text x="80" y="50" font-family="sans-serif" font-size="20">Exact</text></svg>"##;

    #[test]
    fn a_figure_is_drawn_at_print_resolution_with_its_text() {
        let r = svg_to_png(SVG.as_bytes()).unwrap();
        assert_eq!(r.css, (200, 100));
        assert_eq!(r.pixels, (625, 313));
        assert!(r.png.starts_with(b"\x89PNG\r\n\x1a\n"));
        // The same SVG gives the same bytes.
        assert_eq!(svg_to_png(SVG.as_bytes()).unwrap(), r);
        // The text was drawn: the figure without it differs.
        let bare = SVG.replace("Exact", "");
        assert_ne!(svg_to_png(bare.as_bytes()).unwrap().png, r.png);
        assert!(is_svg(SVG.as_bytes()));
        assert!(!is_svg(b"\x89PNG"));
    }

    #[test]
    fn what_is_not_an_svg_is_an_error() {
        assert!(svg_to_png(b"<html></html>").is_err());
        assert!(svg_to_png(b"").is_err());
        assert!(
            svg_to_png(
                "<svg width=\"100000\" height=\"10\" xmlns=\"http://www.w3.org/2000/svg\"/>"
                    .as_bytes()
            )
            .is_err()
        );
    }
}
