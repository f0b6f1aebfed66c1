//! SVG figures of a study (plotters, SVG backend): deterministic bytes,
//! escaped text, legible on light and dark pages.
//!
//! Every figure is a standalone SVG document: a `<title>` and a `<desc>`
//! (the caption) for assistive technology, `width`, `height` and `viewBox`
//! in pixels, and an opaque white card with a light rounded border drawn
//! first, so dark text stays legible when the page around it is dark.
//! Colours are the Okabe–Ito palette and the viridis scale (both readable
//! with the common colour-vision deficiencies); pass@k and pass^k differ
//! in line style and marker as well as colour.
//!
//! Layout is computed here in whole pixels from fixed per-character width
//! estimates (no font file is read; the SVG names the generic families
//! `sans-serif` and `monospace`), so long labels wrap or widen the canvas
//! instead of being clipped. plotters' SVG backend escapes text and
//! attribute values; the only numbers it writes with long fractions are
//! font sizes, which are rounded after drawing. Same study, same bytes:
//! conditions in study order, questions and tools sorted, no randomness
//! (the F1 strip plot's jitter is derived from the attempt's index).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use plotters::backend::SVGBackend;
use plotters::coord::Shift;
use plotters::drawing::{DrawingArea, IntoDrawingArea};
use plotters::element::{Circle, DashedPathElement, PathElement, Rectangle, Text};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{
    Color, FontDesc, FontFamily, FontStyle, FontTransform, RGBColor, ShapeStyle, TextStyle,
};

use super::escape_html;
use crate::error::{Error, Result};
use crate::format::fraction;
use crate::report::study::{ConditionStats, StudyData};

pub use crate::report::study::FigureKind;

/// Renders one figure of `study` as a standalone SVG document (UTF-8
/// text, sizes in pixels).
///
/// A study with nothing to show for `kind` (no conditions, nothing
/// measured, no tool calls) gives a small figure that says "no data" and
/// why; odd data never panics.
///
/// Errors: a drawing failure from plotters (reported with the figure name).
pub fn render(kind: FigureKind, study: &StudyData) -> Result<String> {
    let drawn = if study.conditions.is_empty() {
        no_data(kind, "the study has no conditions")
    } else {
        let stats: Vec<ConditionStats> = study.conditions.iter().map(|c| c.stats()).collect();
        match kind {
            FigureKind::ExactRate => exact_rate(&stats),
            FigureKind::Heatmap => heatmap(study),
            FigureKind::F1 => f1(&stats),
            FigureKind::WallTime => wall_time(&stats),
            FigureKind::ToolCalls => tool_calls(&stats),
            FigureKind::PassK => pass_k(&stats),
            FigureKind::Cost => cost(study, &stats),
        }
    };
    drawn.map_err(|e| Error::Other(format!("figure {}: cannot draw: {e}", kind.name())))
}

/// What a figure file holds, for its title: the agent a per-agent file
/// shows and its conditions (`Expert (skill 85): 2 conditions`); for a
/// whole study, its agents by label, or its conditions and the agent host
/// that played them when every condition had the same one (issue 26, section
/// 3: every figure says in its title what it holds).
pub fn subject(study: &StudyData, file: &crate::report::study::FigureFile) -> String {
    let conditions = |n: usize| format!("{n} condition{}", crate::format::plural(n));
    if let Some(agent) = &file.agent {
        let n = study
            .conditions
            .iter()
            .filter(|c| c.agent.as_deref() == Some(agent.key.as_str()))
            .count();
        return format!("{}: {}", agent.label, conditions(n));
    }
    if !study.agents.is_empty() {
        let labels: Vec<&str> = study.agents.iter().map(|a| a.label.as_str()).collect();
        return format!(
            "{} × {}",
            labels.join(", "),
            conditions(study.base_keys().len())
        );
    }
    let agents: std::collections::BTreeSet<String> = study
        .conditions
        .iter()
        .map(|c| c.stats().identity.host_text())
        .collect();
    match agents.len() {
        1 => format!(
            "{}, played by {}",
            conditions(study.conditions.len()),
            agents.first().map(String::as_str).unwrap_or_default()
        ),
        _ => conditions(study.conditions.len()),
    }
}

/// Renders figure `kind` of `study` as [`render`] does, its title (the
/// drawn heading and the SVG `<title>`) followed by `subject`
/// ([`subject`]): `Exact rate per question and condition — Expert
/// (skill 85): 2 conditions`.
///
/// Errors: those of [`render`].
pub fn render_titled(kind: FigureKind, study: &StudyData, subject: &str) -> Result<String> {
    let svg = render(kind, study)?;
    let plain = escape_html(kind.title());
    let full = escape_html(&format!("{} — {subject}", kind.title()));
    Ok(svg
        .replacen(
            &format!("<title>{plain}</title>"),
            &format!("<title>{full}</title>"),
            1,
        )
        .replacen(&format!(">{plain}</text>"), &format!(">{full}</text>"), 1))
}

impl FigureKind {
    /// The heading drawn at the top of the figure (also its SVG `<title>`).
    pub fn title(self) -> &'static str {
        match self {
            FigureKind::ExactRate => "Exact rate per condition",
            FigureKind::Heatmap => "Exact rate per question and condition",
            FigureKind::F1 => "F1 per measured attempt",
            FigureKind::WallTime => "Mean wall time per measured attempt",
            FigureKind::ToolCalls => "Tool calls per tool and condition",
            FigureKind::PassK => "pass@k and pass^k per condition",
            FigureKind::Cost => "Mean cost per attempt and exact rate",
        }
    }
}

// ---------------------------------------------------------------------------
// Drawing primitives

/// What drawing returns: plotters' error, already worded.
type Drawn<T = ()> = std::result::Result<T, String>;

/// Default canvas width, pixels.
const WIDTH: i32 = 960;
/// Space between the card's edge and anything drawn, pixels.
const MARGIN: i32 = 20;
/// Height of one line of 12-pixel text, pixels.
const LINE_H: i32 = 15;

const TEXT: RGBColor = RGBColor(0x1A, 0x1A, 0x1A);
const MUTED: RGBColor = RGBColor(0x55, 0x55, 0x55);
const GRID: RGBColor = RGBColor(0xDA, 0xDC, 0xE0);
const AXIS: RGBColor = RGBColor(0x80, 0x80, 0x80);
const ZEBRA: RGBColor = RGBColor(0xF3, 0xF4, 0xF6);
const CARD: RGBColor = RGBColor(0xFF, 0xFF, 0xFF);
const HATCH_BG: RGBColor = RGBColor(0xF2, 0xF2, 0xF2);
const HATCH: RGBColor = RGBColor(0xB0, 0xB0, 0xB0);
// Okabe–Ito.
const BLUE: RGBColor = RGBColor(0x00, 0x72, 0xB2);
const ORANGE: RGBColor = RGBColor(0xE6, 0x9F, 0x00);
const VERMILLION: RGBColor = RGBColor(0xD5, 0x5E, 0x00);
const SKY: RGBColor = RGBColor(0x56, 0xB4, 0xE9);

fn worded<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// A text style: size in pixels as written to the SVG, anchor, colour.
#[derive(Clone, Copy)]
struct Font {
    px: f64,
    bold: bool,
    mono: bool,
    color: RGBColor,
    h: HPos,
    up: bool,
}

impl Font {
    fn new(px: f64) -> Font {
        Font {
            px,
            bold: false,
            mono: false,
            color: TEXT,
            h: HPos::Left,
            up: false,
        }
    }
    fn bold(self) -> Font {
        Font { bold: true, ..self }
    }
    fn mono(self) -> Font {
        Font { mono: true, ..self }
    }
    fn color(self, color: RGBColor) -> Font {
        Font { color, ..self }
    }
    fn center(self) -> Font {
        Font {
            h: HPos::Center,
            ..self
        }
    }
    fn right(self) -> Font {
        Font {
            h: HPos::Right,
            ..self
        }
    }
    /// Reads bottom to top.
    fn up(self) -> Font {
        Font { up: true, ..self }
    }
    /// Estimated width of `text`, pixels.
    fn width(&self, text: &str) -> f64 {
        text_width(text, self.px, self.mono) * if self.bold { 1.08 } else { 1.0 }
    }
    fn style(&self) -> TextStyle<'static> {
        let family = if self.mono {
            FontFamily::Monospace
        } else {
            FontFamily::SansSerif
        };
        let weight = if self.bold {
            FontStyle::Bold
        } else {
            FontStyle::Normal
        };
        // The SVG backend writes `font-size` as the size over 1.24.
        let mut font = FontDesc::new(family, self.px * 1.24, weight);
        if self.up {
            font = font.transform(FontTransform::Rotate270);
        }
        TextStyle {
            font,
            color: self.color.to_backend_color(),
            pos: Pos::new(self.h, VPos::Center),
        }
    }
}

/// Estimated width of `text` in a generic sans-serif (or monospace) face
/// at `px` pixels. Errs on the wide side: a label measured here fits.
fn text_width(text: &str, px: f64, mono: bool) -> f64 {
    if mono {
        return text.chars().count() as f64 * px * 0.62;
    }
    let ems: f64 = text
        .chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | 'I' | '·' => 0.32,
            'f' | 't' | 'r' | ' ' | '-' | '(' | ')' | '[' | ']' | '/' | '"' => 0.42,
            'm' | 'w' | 'M' | 'W' | '@' | '%' | '—' => 0.92,
            'A'..='Z' => 0.72,
            '0'..='9' => 0.64,
            // CJK and other full-width scripts.
            c if u32::from(c) >= 0x2E80 => 1.0,
            _ => 0.6,
        })
        .sum();
    ems * px
}

/// `text` broken at spaces into lines no wider than `max_w` pixels at
/// `px` (a word wider than that is broken between characters). Never
/// empty.
fn wrap(text: &str, px: f64, max_w: f64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        for piece in split_long(word, px, max_w) {
            let candidate = if line.is_empty() {
                piece.clone()
            } else {
                format!("{line} {piece}")
            };
            if !line.is_empty() && text_width(&candidate, px, false) > max_w {
                lines.push(std::mem::replace(&mut line, piece));
            } else {
                line = candidate;
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

fn split_long(word: &str, px: f64, max_w: f64) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut piece = String::new();
    for c in word.chars() {
        piece.push(c);
        if piece.chars().count() > 1 && text_width(&piece, px, false) > max_w {
            piece.pop();
            pieces.push(std::mem::take(&mut piece));
            piece.push(c);
        }
    }
    pieces.push(piece);
    pieces
}

/// A linear map from data values to pixels, clamped to `[lo, hi]`.
#[derive(Clone, Copy)]
struct Scale {
    lo: f64,
    hi: f64,
    p0: i32,
    p1: i32,
}

impl Scale {
    fn new(lo: f64, hi: f64, p0: i32, p1: i32) -> Scale {
        Scale { lo, hi, p0, p1 }
    }
    fn at(&self, v: f64) -> i32 {
        let t = if self.hi > self.lo {
            (v - self.lo) / (self.hi - self.lo)
        } else {
            0.0
        };
        let t = if t.is_finite() {
            t.clamp(0.0, 1.0)
        } else {
            0.0
        };
        (f64::from(self.p0) + t * f64::from(self.p1 - self.p0)).round() as i32
    }
}

/// Ticks of a `[0, 1]` axis, labelled with two decimals.
fn unit_ticks() -> Vec<(f64, String)> {
    [0.0, 0.25, 0.5, 0.75, 1.0]
        .into_iter()
        .map(|v| (v, format!("{v:.2}")))
        .collect()
}

/// A round axis end above `max` (> 0) and about five ticks up to it.
fn nice_ticks(max: f64) -> (f64, Vec<(f64, String)>) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    let steps = (max / step - 1e-9).ceil().max(1.0) as usize;
    let decimals = (0..=6)
        .find(|d| {
            let scaled = step * 10f64.powi(*d);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
        })
        .unwrap_or(6) as usize;
    let ticks = (0..=steps)
        .map(|i| {
            let v = step * i as f64;
            (v, format!("{v:.decimals$}"))
        })
        .collect();
    (step * steps as f64, ticks)
}

/// Seconds with a precision that suits their size.
/// A duration as the tables print it ([`crate::format::seconds`]),
/// with its unit: a figure and a table never show one time two ways.
fn seconds(v: f64) -> String {
    format!("{} s", crate::format::seconds(v))
}

/// The label readers see for a condition (its key when the label is blank).
fn label(s: &ConditionStats) -> String {
    if !s.label.trim().is_empty() {
        s.label.clone()
    } else if !s.key.trim().is_empty() {
        s.key.clone()
    } else {
        "(unnamed condition)".to_string()
    }
}

/// `notes`, then which agents played the conditions drawn, by their labels
/// ([`crate::report::agents_note`]): every figure names host, host version
/// and model under its title (issue 25, section 5).
fn with_agents(notes: &[String], stats: &[ConditionStats]) -> Vec<String> {
    let labels: Vec<String> = stats.iter().map(label).collect();
    let mut all = notes.to_vec();
    all.extend(crate::report::agents_note(
        labels
            .iter()
            .map(String::as_str)
            .zip(stats.iter().map(|s| &s.identity)),
    ));
    all
}

/// Which agents played `study`'s conditions, each by its label in
/// `labels` (in study order), for a figure drawn from the study itself
/// ([`with_agents`]).
fn labelled_agents(study: &StudyData, labels: &[String]) -> Option<String> {
    let agents: Vec<crate::report::AgentIdentity> = study
        .conditions
        .iter()
        .map(|c| crate::report::AgentIdentity::of(&c.condition))
        .collect();
    crate::report::agents_note(labels.iter().map(String::as_str).zip(&agents))
}

/// A plotters drawing area over the SVG buffer, with the few shapes the
/// figures use, in pixel coordinates.
struct Canvas<'a> {
    area: DrawingArea<SVGBackend<'a>, Shift>,
}

impl Canvas<'_> {
    fn text(&self, text: &str, at: (i32, i32), font: Font) -> Drawn {
        if text.is_empty() {
            return Ok(());
        }
        self.area
            .draw(&Text::new(text.to_string(), at, font.style()))
            .map_err(worded)
    }

    /// Lines of text centred vertically on `y`, `LINE_H` apart.
    fn lines(&self, lines: &[String], x: i32, y: i32, font: Font) -> Drawn {
        let first = y - (lines.len() as i32 - 1) * LINE_H / 2;
        for (i, line) in lines.iter().enumerate() {
            self.text(line, (x, first + i as i32 * LINE_H), font)?;
        }
        Ok(())
    }

    fn fill(&self, a: (i32, i32), b: (i32, i32), color: RGBColor, alpha: f64) -> Drawn {
        if b.0 <= a.0 || b.1 <= a.1 {
            return Ok(());
        }
        self.area
            .draw(&Rectangle::new([a, b], color.mix(alpha).filled()))
            .map_err(worded)
    }

    fn outline(&self, a: (i32, i32), b: (i32, i32), color: RGBColor) -> Drawn {
        let style = ShapeStyle {
            color: color.to_rgba(),
            filled: false,
            stroke_width: 1,
        };
        self.area
            .draw(&Rectangle::new([a, b], style))
            .map_err(worded)
    }

    fn line(&self, points: Vec<(i32, i32)>, color: RGBColor, width: u32) -> Drawn {
        let style = ShapeStyle {
            color: color.to_rgba(),
            filled: false,
            stroke_width: width,
        };
        self.area
            .draw(&PathElement::new(points, style))
            .map_err(worded)
    }

    fn dashed(&self, points: Vec<(i32, i32)>, color: RGBColor, width: u32) -> Drawn {
        let style = ShapeStyle {
            color: color.to_rgba(),
            filled: false,
            stroke_width: width,
        };
        self.area
            .draw(&DashedPathElement::new(points, 7, 5, style))
            .map_err(worded)
    }

    fn dot(&self, at: (i32, i32), r: i32, color: RGBColor, alpha: f64) -> Drawn {
        self.area
            .draw(&Circle::new(at, r.max(1), color.mix(alpha).filled()))
            .map_err(worded)
    }

    fn ring(&self, at: (i32, i32), r: i32, color: RGBColor) -> Drawn {
        self.dot(at, r, CARD, 1.0)?;
        let style = ShapeStyle {
            color: color.to_rgba(),
            filled: false,
            stroke_width: 2,
        };
        self.area
            .draw(&Circle::new(at, r.max(1), style))
            .map_err(worded)
    }

    /// A light grey box with diagonal hatching: "nothing to show here".
    fn hatch(&self, a: (i32, i32), b: (i32, i32)) -> Drawn {
        self.fill(a, b, HATCH_BG, 1.0)?;
        let (x0, y0, x1, y1) = (a.0, a.1, b.0, b.1);
        let mut c = x0 + y0 + 6;
        while c < x1 + y1 {
            // The line x + y = c inside the box.
            let xs = x0.max(c - y1);
            let xe = x1.min(c - y0);
            if xe > xs {
                self.line(vec![(xs, c - xs), (xe, c - xe)], HATCH, 1)?;
            }
            c += 6;
        }
        Ok(())
    }
}

/// One entry of a legend.
enum Swatch {
    /// A filled box.
    Fill(RGBColor),
    /// A dot, as in a strip plot.
    Dot(RGBColor, f64),
    /// A short upright bar, as marks a mean.
    Tick(RGBColor),
    /// A line with a marker: dashed or solid, hollow or filled marker.
    Line {
        color: RGBColor,
        dashed: bool,
        hollow: bool,
    },
}

/// Title, note lines and legend at the top of a figure, laid out for a
/// canvas `width` pixels wide.
struct Header {
    title: &'static str,
    notes: Vec<String>,
    legend: Vec<(Swatch, String, (i32, i32))>,
    bottom: i32,
}

impl Header {
    fn new(
        kind: FigureKind,
        width: i32,
        notes: &[String],
        legend: Vec<(Swatch, String)>,
    ) -> Header {
        let note_font = 12.0;
        let notes: Vec<String> = notes
            .iter()
            .flat_map(|n| wrap(n, note_font, f64::from(width - 2 * MARGIN)))
            .collect();
        let mut y = 48 + notes.len() as i32 * 16;
        let mut placed = Vec::new();
        if !legend.is_empty() {
            y += 4;
            let mut x = MARGIN;
            for (swatch, text) in legend {
                let w = 30 + Font::new(12.0).width(&text).ceil() as i32 + 20;
                if x > MARGIN && x + w > width - MARGIN {
                    x = MARGIN;
                    y += 20;
                }
                placed.push((swatch, text, (x, y)));
                x += w;
            }
            y += 18;
        }
        Header {
            title: kind.title(),
            notes,
            legend: placed,
            bottom: y,
        }
    }

    fn draw(&self, c: &Canvas) -> Drawn {
        c.text(self.title, (MARGIN, 24), Font::new(16.0).bold())?;
        for (i, note) in self.notes.iter().enumerate() {
            c.text(
                note,
                (MARGIN, 48 + i as i32 * 16),
                Font::new(12.0).color(MUTED),
            )?;
        }
        for (swatch, text, (x, y)) in &self.legend {
            match swatch {
                Swatch::Fill(color) => c.fill((*x, y - 6), (x + 22, y + 6), *color, 1.0)?,
                Swatch::Dot(color, alpha) => c.dot((x + 11, *y), 5, *color, *alpha)?,
                Swatch::Tick(color) => c.line(vec![(x + 11, y - 8), (x + 11, y + 8)], *color, 3)?,
                Swatch::Line {
                    color,
                    dashed,
                    hollow,
                } => {
                    let points = vec![(*x, *y), (x + 24, *y)];
                    if *dashed {
                        c.dashed(points, *color, 2)?;
                    } else {
                        c.line(points, *color, 2)?;
                    }
                    if *hollow {
                        c.ring((x + 12, *y), 4, *color)?;
                    } else {
                        c.dot((x + 12, *y), 4, *color, 1.0)?;
                    }
                }
            }
            c.text(text, (x + 30, *y), Font::new(12.0))?;
        }
        Ok(())
    }
}

/// Draws a figure `size` pixels big and finishes the SVG document.
fn svg(kind: FigureKind, size: (i32, i32), draw: impl FnOnce(&Canvas) -> Drawn) -> Drawn<String> {
    let (w, h) = (size.0.max(1) as u32, size.1.max(1) as u32);
    let mut raw = String::new();
    {
        let canvas = Canvas {
            area: SVGBackend::with_string(&mut raw, (w, h)).into_drawing_area(),
        };
        draw(&canvas)?;
        canvas.area.present().map_err(worded)?;
    }
    Ok(finish(&raw, kind, w, h))
}

/// The mark in every figure, by which `build` knows a file in `figures/`
/// that it made (and may remove when no figure is named so any more) from
/// one a person put there (never touched). It goes on to name the file:
/// `<!-- generated by okn-benchmark build: f1.svg -->`.
pub const SVG_MARK: &str = "<!-- generated by okn-benchmark build";

/// Adds the title, the description and the card behind everything, and
/// rounds font sizes.
fn finish(raw: &str, kind: FigureKind, w: u32, h: u32) -> String {
    let (head, body) = match raw.find(">\n") {
        Some(i) => raw.split_at(i + 2),
        None => ("", raw),
    };
    let mut out = String::with_capacity(raw.len() + 512);
    out.push_str(&head.replacen("<svg ", "<svg role=\"img\" ", 1));
    let _ = writeln!(out, "<title>{}</title>", escape_html(kind.title()));
    let _ = writeln!(out, "<desc>{}</desc>", escape_html(kind.caption()));
    // The mark names the file, so a person's copy is never taken for an
    // orphan.
    let _ = writeln!(out, "{SVG_MARK}: {}.svg -->", kind.name());
    let _ = writeln!(
        out,
        "<rect x=\"0.5\" y=\"0.5\" width=\"{}\" height=\"{}\" rx=\"8\" ry=\"8\" fill=\"#FFFFFF\" stroke=\"#C8CCD2\" stroke-width=\"1\"/>",
        w.saturating_sub(1),
        h.saturating_sub(1)
    );
    out.push_str(&round_font_sizes(body));
    out
}

/// `font-size="12.000000000000002"` becomes `font-size="12"`.
fn round_font_sizes(body: &str) -> String {
    const KEY: &str = "font-size=\"";
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(i) = rest.find(KEY) {
        let (before, after) = rest.split_at(i + KEY.len());
        out.push_str(before);
        let end = after.find('"').unwrap_or(after.len());
        let value = &after[..end];
        match value.parse::<f64>() {
            Ok(v) => {
                let s = format!("{v:.1}");
                out.push_str(s.strip_suffix(".0").unwrap_or(&s));
            }
            Err(_) => out.push_str(value),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// A small figure that says there is nothing to draw, and why.
fn no_data(kind: FigureKind, reason: &str) -> Drawn<String> {
    let width = 720;
    svg(kind, (width, 110), |c| {
        c.text(kind.title(), (MARGIN, 24), Font::new(16.0).bold())?;
        c.text(
            &format!("No data: {reason}."),
            (width / 2, 68),
            Font::new(14.0).color(MUTED).center(),
        )
    })
}

// ---------------------------------------------------------------------------
// Rows: one band per condition, labels on the left, a value column on the
// right, a horizontal axis at the bottom.

struct Rows {
    labels: Vec<Vec<String>>,
    top: i32,
    row_h: i32,
    x0: i32,
    x1: i32,
    value_x: i32,
    width: i32,
}

impl Rows {
    /// `value_w`: width of the value column, pixels.
    fn new(labels: &[String], top: i32, value_w: i32) -> Rows {
        let width = WIDTH;
        let px = 12.0;
        let widest = labels
            .iter()
            .map(|l| text_width(l, px, false))
            .fold(0.0, f64::max);
        let label_w = widest.clamp(40.0, 340.0);
        let labels: Vec<Vec<String>> = labels.iter().map(|l| wrap(l, px, label_w)).collect();
        let most = labels.iter().map(Vec::len).max().unwrap_or(1) as i32;
        let row_h = (most * LINE_H + 18).max(38);
        let x0 = MARGIN + label_w.ceil() as i32 + 24;
        let value_x = width - MARGIN - value_w;
        Rows {
            labels,
            top,
            row_h,
            x0,
            x1: value_x - 20,
            value_x,
            width,
        }
    }
    fn bottom(&self) -> i32 {
        self.top + self.row_h * self.labels.len() as i32
    }
    fn height(&self) -> i32 {
        self.bottom() + 56
    }
    fn center(&self, i: usize) -> i32 {
        self.top + self.row_h * i as i32 + self.row_h / 2
    }
    /// Zebra bands, grid, tick labels, axis title and the row labels.
    fn frame(&self, c: &Canvas, scale: &Scale, ticks: &[(f64, String)], axis: &str) -> Drawn {
        let bottom = self.bottom();
        for i in 0..self.labels.len() {
            if i % 2 == 0 {
                let y = self.top + self.row_h * i as i32;
                c.fill(
                    (MARGIN - 8, y),
                    (self.width - MARGIN + 8, y + self.row_h),
                    ZEBRA,
                    1.0,
                )?;
            }
        }
        for (v, text) in ticks {
            let x = scale.at(*v);
            c.line(vec![(x, self.top), (x, bottom)], GRID, 1)?;
            c.text(
                text,
                (x, bottom + 14),
                Font::new(11.0).color(MUTED).center(),
            )?;
        }
        c.line(vec![(self.x0, bottom), (self.x1, bottom)], AXIS, 1)?;
        c.text(
            axis,
            ((self.x0 + self.x1) / 2, bottom + 36),
            Font::new(12.0).center(),
        )?;
        for (i, lines) in self.labels.iter().enumerate() {
            c.lines(lines, MARGIN, self.center(i), Font::new(12.0))?;
        }
        Ok(())
    }
    /// Text in the value column of row `i`.
    fn value(&self, c: &Canvas, i: usize, lines: &[String]) -> Drawn {
        c.lines(lines, self.value_x, self.center(i), Font::new(12.0))
    }
    /// "nothing measured" in the plot of row `i`.
    fn nothing(&self, c: &Canvas, i: usize) -> Drawn {
        c.text(
            "nothing measured",
            (self.x0 + 8, self.center(i)),
            Font::new(12.0).color(MUTED),
        )
    }
}

// ---------------------------------------------------------------------------
// The figures

fn exact_rate(stats: &[ConditionStats]) -> Drawn<String> {
    let kind = FigureKind::ExactRate;
    if stats.iter().all(|s| s.exact_rate.is_none()) {
        return no_data(kind, "no condition has a measured attempt");
    }
    let labels: Vec<String> = stats.iter().map(label).collect();
    let notes = ["Dot: exact rate, the mean over questions of exact ÷ measured attempts (as in every table). Bar: 95% bootstrap interval over questions.".to_string()];
    let header = Header::new(kind, WIDTH, &with_agents(&notes, stats), Vec::new());
    let rows = Rows::new(&labels, header.bottom + 6, 130);
    svg(kind, (rows.width, rows.height()), |c| {
        header.draw(c)?;
        let scale = Scale::new(0.0, 1.0, rows.x0, rows.x1);
        rows.frame(c, &scale, &unit_ticks(), "exact rate (mean over questions)")?;
        for (i, s) in stats.iter().enumerate() {
            let y = rows.center(i);
            let Some(rate) = s.exact_rate.filter(|r| r.is_finite()) else {
                rows.nothing(c, i)?;
                continue;
            };
            let mut value = vec![format!(
                "{} ({}/{} attempts)",
                fraction(rate, 2),
                s.exact_attempts,
                s.measured_attempts
            )];
            if let Some(iv) = s.interval {
                let (a, b) = (scale.at(iv.low), scale.at(iv.high));
                c.line(vec![(a, y), (b, y)], BLUE, 2)?;
                c.line(vec![(a, y - 7), (a, y + 7)], BLUE, 2)?;
                c.line(vec![(b, y - 7), (b, y + 7)], BLUE, 2)?;
                value.push(format!(
                    "[{}, {}]",
                    fraction(iv.low, 2),
                    fraction(iv.high, 2)
                ));
            }
            c.dot((scale.at(rate), y), 6, BLUE, 1.0)?;
            rows.value(c, i, &value)?;
        }
        Ok(())
    })
}

/// The viridis colour scale at `t` in `[0, 1]`.
fn viridis(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 9] = [
        (0x44, 0x01, 0x54),
        (0x47, 0x2C, 0x7A),
        (0x3B, 0x52, 0x8B),
        (0x2C, 0x72, 0x8E),
        (0x21, 0x91, 0x8C),
        (0x28, 0xAE, 0x80),
        (0x5E, 0xC9, 0x62),
        (0xAD, 0xDC, 0x30),
        (0xFD, 0xE7, 0x25),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let pos = t * (STOPS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(STOPS.len() - 2);
    let f = pos - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + f * (f64::from(b) - f64::from(a))).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Dark text on light fills, white text on dark ones.
fn ink_on(fill: RGBColor) -> RGBColor {
    let RGBColor(r, g, b) = fill;
    let luma = 0.2126 * f64::from(r) + 0.7152 * f64::from(g) + 0.0722 * f64::from(b);
    if luma > 128.0 { TEXT } else { CARD }
}

fn heatmap(study: &StudyData) -> Drawn<String> {
    let kind = FigureKind::Heatmap;
    let questions = study.questions();
    if questions.is_empty() {
        return no_data(kind, "no condition has a question result");
    }
    let n = study.conditions.len() as i32;
    let id_font = Font::new(12.0).mono();
    let id_w = questions
        .iter()
        .map(|q| id_font.width(q))
        .fold(0.0, f64::max)
        .ceil() as i32;
    let grid_x0 = MARGIN + id_w + 12;
    let col_w = ((WIDTH - MARGIN - grid_x0) / n).clamp(64, 150);
    let width = (grid_x0 + n * col_w + MARGIN).max(720);
    let head_px = 11.0;
    let labels: Vec<String> = study
        .conditions
        .iter()
        .map(|c| {
            if c.label.trim().is_empty() {
                c.key.clone()
            } else {
                c.label.clone()
            }
        })
        .collect();
    let wrapped: Vec<Vec<String>> = labels
        .iter()
        .map(|l| wrap(l, head_px, f64::from(col_w - 10)))
        .collect();
    // Labels too long for their column are numbered, with a key below.
    let numbered = wrapped.iter().any(|w| w.len() > 5);
    let heads: Vec<Vec<String>> = if numbered {
        (1..=labels.len()).map(|i| vec![i.to_string()]).collect()
    } else {
        wrapped
    };
    let head_lines = heads.iter().map(Vec::len).max().unwrap_or(1) as i32;
    let key: Vec<String> = if numbered {
        labels
            .iter()
            .enumerate()
            .flat_map(|(i, l)| {
                wrap(
                    &format!("{}: {l}", i + 1),
                    12.0,
                    f64::from(width - 2 * MARGIN),
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut notes = vec![
        "Each cell: exact attempts / measured attempts; its colour is that exact rate.".to_string(),
    ];
    notes.extend(labelled_agents(study, &labels));
    let header = Header::new(kind, width, &notes, Vec::new());
    let row_h = 22;
    let grid_y0 = header.bottom + head_lines * 13 + 10;
    let grid_y1 = grid_y0 + questions.len() as i32 * row_h;
    let legend_y = grid_y1 + 22;
    let key_y = legend_y + 40;
    let height = key_y + key.len() as i32 * 16 + 8;
    svg(kind, (width, height), |c| {
        header.draw(c)?;
        for (j, head) in heads.iter().enumerate() {
            let cx = grid_x0 + j as i32 * col_w + col_w / 2;
            let last = grid_y0 - 10;
            for (k, line) in head.iter().rev().enumerate() {
                c.text(
                    line,
                    (cx, last - k as i32 * 13),
                    Font::new(head_px).center(),
                )?;
            }
        }
        for (i, q) in questions.iter().enumerate() {
            let y = grid_y0 + i as i32 * row_h;
            c.text(q, (MARGIN, y + row_h / 2), id_font)?;
            for (j, condition) in study.conditions.iter().enumerate() {
                let x = grid_x0 + j as i32 * col_w;
                let (a, b) = ((x + 1, y + 1), (x + col_w - 1, y + row_h - 1));
                let center = (x + col_w / 2, y + row_h / 2);
                match condition.cell(q) {
                    Some(cell) if cell.measured > 0 => {
                        let rate = cell
                            .rate
                            .filter(|r| r.is_finite())
                            .unwrap_or(f64::from(cell.exact) / f64::from(cell.measured));
                        let fill = viridis(rate);
                        c.fill(a, b, fill, 1.0)?;
                        c.text(
                            &format!("{}/{}", cell.exact, cell.measured),
                            center,
                            Font::new(11.0).color(ink_on(fill)).center(),
                        )?;
                    }
                    Some(cell) if cell.attempts > 0 => {
                        c.hatch(a, b)?;
                        c.text(
                            crate::format::BLOCKED,
                            center,
                            Font::new(10.0).color(MUTED).center(),
                        )?;
                    }
                    _ => c.hatch(a, b)?,
                }
            }
        }
        // Legend: the colour scale, then the hatching.
        c.text("exact rate", (MARGIN, legend_y + 6), Font::new(12.0))?;
        let gx = MARGIN + 80;
        let steps = 40;
        for k in 0..steps {
            let fill = viridis((f64::from(k) + 0.5) / f64::from(steps));
            c.fill(
                (gx + k * 5, legend_y),
                (gx + k * 5 + 5, legend_y + 12),
                fill,
                1.0,
            )?;
        }
        c.outline((gx, legend_y), (gx + steps * 5, legend_y + 12), AXIS)?;
        for (v, text) in [(0.0, "0.00"), (0.5, "0.50"), (1.0, "1.00")] {
            let x = gx + (v * f64::from(steps * 5)).round() as i32;
            c.line(vec![(x, legend_y + 12), (x, legend_y + 16)], AXIS, 1)?;
            c.text(
                text,
                (x, legend_y + 25),
                Font::new(11.0).color(MUTED).center(),
            )?;
        }
        let hx = gx + steps * 5 + 40;
        c.hatch((hx, legend_y - 1), (hx + 26, legend_y + 13))?;
        c.text(
            "not run (blank) or every attempt blocked",
            (hx + 34, legend_y + 6),
            Font::new(12.0),
        )?;
        for (i, line) in key.iter().enumerate() {
            c.text(line, (MARGIN, key_y + i as i32 * 16), Font::new(12.0))?;
        }
        Ok(())
    })
}

fn f1(stats: &[ConditionStats]) -> Drawn<String> {
    let kind = FigureKind::F1;
    let values: Vec<Vec<f64>> = stats
        .iter()
        .map(|s| {
            s.f1.iter()
                .copied()
                .filter(|v| v.is_finite())
                .map(|v| v.clamp(0.0, 1.0))
                .collect()
        })
        .collect();
    if values.iter().all(Vec::is_empty) {
        return no_data(kind, "no condition has a measured attempt");
    }
    let labels: Vec<String> = stats.iter().map(label).collect();
    let notes = with_agents(&["Dot: one measured attempt (spread vertically so equal values stay visible). Bar: the mean.".to_string()], stats);
    let legend = vec![
        (Swatch::Dot(BLUE, 0.5), "one attempt".to_string()),
        (Swatch::Tick(VERMILLION), "mean F1".to_string()),
    ];
    let header = Header::new(kind, WIDTH, &notes, legend);
    let rows = Rows::new(&labels, header.bottom + 6, 110);
    svg(kind, (rows.width, rows.height()), |c| {
        header.draw(c)?;
        let scale = Scale::new(0.0, 1.0, rows.x0, rows.x1);
        rows.frame(
            c,
            &scale,
            &unit_ticks(),
            "F1 of the submitted answer against the ground truth",
        )?;
        let band = f64::from(rows.row_h - 16);
        for (i, v) in values.iter().enumerate() {
            let y = rows.center(i);
            if v.is_empty() {
                rows.nothing(c, i)?;
                continue;
            }
            for (k, f) in v.iter().enumerate() {
                // Golden-ratio steps: well spread, and the same every time.
                let jitter = ((k as f64 * 0.618_033_988_75).fract() - 0.5) * band;
                c.dot((scale.at(*f), y + jitter.round() as i32), 4, BLUE, 0.35)?;
            }
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let x = scale.at(mean);
            let half = rows.row_h / 2 - 4;
            c.line(vec![(x, y - half), (x, y + half)], VERMILLION, 3)?;
            rows.value(
                c,
                i,
                &[
                    format!("mean {}", fraction(mean, 2)),
                    format!("n = {}", v.len()),
                ],
            )?;
        }
        Ok(())
    })
}

fn cost(study: &StudyData, stats: &[ConditionStats]) -> Drawn<String> {
    let kind = FigureKind::Cost;
    let costs: Vec<Option<f64>> = study
        .conditions
        .iter()
        .map(|c| c.mean_cost().filter(|v| v.is_finite() && *v >= 0.0))
        .collect();
    if costs.iter().all(Option::is_none) {
        return no_data(
            kind,
            "no condition's agent host reported a cost for every attempt",
        );
    }
    let max = costs.iter().flatten().copied().fold(0.0, f64::max);
    let (hi, ticks) = nice_ticks(max);
    let ticks: Vec<(f64, String)> = ticks
        .into_iter()
        .map(|(v, _)| (v, format!("${}", crate::format::fixed(v, 4))))
        .collect();
    let labels: Vec<String> = stats.iter().map(label).collect();
    let header = Header::new(kind, WIDTH, &with_agents(&[], stats), Vec::new());
    let rows = Rows::new(&labels, header.bottom + 6, 150);
    svg(kind, (rows.width, rows.height()), |c| {
        header.draw(c)?;
        let scale = Scale::new(0.0, hi, rows.x0, rows.x1);
        rows.frame(c, &scale, &ticks, "US dollars per attempt (mean)")?;
        for (i, (cost, s)) in costs.iter().zip(stats).enumerate() {
            let y = rows.center(i);
            let Some(cost) = cost else {
                c.text(
                    "cost not reported",
                    (rows.x0 + 8, y),
                    Font::new(12.0).color(MUTED),
                )?;
                continue;
            };
            c.fill((scale.at(0.0), y - 8), (scale.at(*cost), y + 8), BLUE, 1.0)?;
            rows.value(
                c,
                i,
                &[
                    format!("${} per attempt", crate::format::fixed(*cost, 4)),
                    format!("exact {}", crate::format::rate(s.exact_rate)),
                ],
            )?;
        }
        Ok(())
    })
}

fn wall_time(stats: &[ConditionStats]) -> Drawn<String> {
    let kind = FigureKind::WallTime;
    // (server, agent) seconds per condition.
    let parts: Vec<Option<(f64, f64)>> = stats
        .iter()
        .map(|s| {
            let wall = s.mean_wall_s.filter(|w| w.is_finite())?.max(0.0);
            let server = s
                .mean_server_s
                .filter(|v| v.is_finite())
                .unwrap_or(0.0)
                .max(0.0);
            Some((server, (wall - server).max(0.0)))
        })
        .collect();
    if parts.iter().all(Option::is_none) {
        return no_data(kind, "no condition has a measured attempt");
    }
    let max = parts
        .iter()
        .flatten()
        .map(|(s, a)| s + a)
        .fold(0.0, f64::max);
    let (hi, ticks) = nice_ticks(max);
    let labels: Vec<String> = stats.iter().map(label).collect();
    let legend = vec![
        (
            Swatch::Fill(BLUE),
            "server: waiting on MCP tool calls".to_string(),
        ),
        (
            Swatch::Fill(ORANGE),
            "agent: the rest of the wall time".to_string(),
        ),
    ];
    let header = Header::new(kind, WIDTH, &with_agents(&[], stats), legend);
    let rows = Rows::new(&labels, header.bottom + 6, 130);
    svg(kind, (rows.width, rows.height()), |c| {
        header.draw(c)?;
        let scale = Scale::new(0.0, hi, rows.x0, rows.x1);
        rows.frame(c, &scale, &ticks, "seconds per measured attempt (mean)")?;
        for (i, part) in parts.iter().enumerate() {
            let y = rows.center(i);
            let Some((server, agent)) = part else {
                rows.nothing(c, i)?;
                continue;
            };
            let (x0, xs, xa) = (scale.at(0.0), scale.at(*server), scale.at(server + agent));
            c.fill((x0, y - 8), (xs, y + 8), BLUE, 1.0)?;
            c.fill((xs, y - 8), (xa, y + 8), ORANGE, 1.0)?;
            rows.value(
                c,
                i,
                &[
                    seconds(server + agent),
                    format!("server {}", seconds(*server)),
                ],
            )?;
        }
        Ok(())
    })
}

fn tool_calls(stats: &[ConditionStats]) -> Drawn<String> {
    let kind = FigureKind::ToolCalls;
    let tools: Vec<&String> = stats
        .iter()
        .flat_map(|s| s.tool_calls.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if tools.is_empty() {
        return no_data(kind, "no tool calls were recorded");
    }
    let most = stats
        .iter()
        .flat_map(|s| s.tool_calls.values())
        .copied()
        .max()
        .unwrap_or(0)
        .max(1);
    let name_font = Font::new(11.0).mono();
    let widest_name = tools.iter().map(|t| name_font.width(t)).fold(0.0, f64::max);
    let upright = widest_name <= 110.0;
    let col_w = if upright {
        (widest_name.ceil() as i32 + 16).max(60)
    } else {
        40
    };
    let head_h = if upright {
        26
    } else {
        widest_name.ceil() as i32 + 16
    };
    let labels: Vec<String> = stats.iter().map(label).collect();
    let label_w = labels
        .iter()
        .map(|l| text_width(l, 12.0, false))
        .fold(0.0, f64::max)
        .clamp(40.0, 320.0);
    let lines: Vec<Vec<String>> = labels.iter().map(|l| wrap(l, 12.0, label_w)).collect();
    let row_h = (lines.iter().map(Vec::len).max().unwrap_or(1) as i32 * LINE_H + 16).max(40);
    let grid_x0 = MARGIN + label_w.ceil() as i32 + 24;
    let value_w = 70;
    let grid_x1 = grid_x0 + tools.len() as i32 * col_w;
    let width = (grid_x1 + 16 + value_w + MARGIN).max(720);
    let notes = with_agents(&["Number: calls over every attempt, blocked ones included; circle area grows with the count.".to_string()], stats);
    let header = Header::new(kind, width, &notes, Vec::new());
    let grid_y0 = header.bottom + head_h;
    let height = grid_y0 + stats.len() as i32 * row_h + 16;
    svg(kind, (width, height), |c| {
        header.draw(c)?;
        let value_x = grid_x1 + 16 + value_w / 2;
        for i in 0..stats.len() {
            if i % 2 == 0 {
                let y = grid_y0 + i as i32 * row_h;
                c.fill((MARGIN - 8, y), (width - MARGIN + 8, y + row_h), ZEBRA, 1.0)?;
            }
        }
        for (j, tool) in tools.iter().enumerate() {
            let cx = grid_x0 + j as i32 * col_w + col_w / 2;
            if upright {
                c.text(tool, (cx, grid_y0 - 12), name_font.center())?;
            } else {
                c.text(tool, (cx, grid_y0 - 8), name_font.up())?;
            }
        }
        c.text(
            "attempts",
            (value_x, grid_y0 - 12),
            Font::new(11.0).color(MUTED).center(),
        )?;
        let r_max = f64::from(col_w.min(row_h) / 2 - 4);
        for (i, s) in stats.iter().enumerate() {
            let y = grid_y0 + i as i32 * row_h + row_h / 2;
            c.lines(&lines[i], MARGIN, y, Font::new(12.0))?;
            for (j, tool) in tools.iter().enumerate() {
                let cx = grid_x0 + j as i32 * col_w + col_w / 2;
                let count = s.tool_calls.get(*tool).copied().unwrap_or(0);
                if count == 0 {
                    c.text("0", (cx, y), Font::new(11.0).color(MUTED).center())?;
                    continue;
                }
                let r = (r_max * (count as f64 / most as f64).sqrt())
                    .max(3.0)
                    .round() as i32;
                c.dot((cx, y), r, SKY, 0.55)?;
                c.text(&count.to_string(), (cx, y), Font::new(11.0).center())?;
            }
            c.text(
                &s.attempts.to_string(),
                (value_x, y),
                Font::new(11.0).color(MUTED).center(),
            )?;
        }
        Ok(())
    })
}

fn pass_k(stats: &[ConditionStats]) -> Drawn<String> {
    let kind = FigureKind::PassK;
    let k_max = stats.iter().map(|s| s.pass.len()).max().unwrap_or(0);
    if k_max == 0 {
        return no_data(kind, "no condition has a measured attempt");
    }
    let labels: Vec<String> = stats.iter().map(label).collect();
    if k_max == 1 {
        return pass_one(stats, &labels);
    }
    let notes = with_agents(
        &[format!(
            "k from 1 to {k_max}; a condition's k stops at the fewest measured attempts of any of its questions. Mean over measured questions."
        )],
        stats,
    );
    let legend = vec![
        (
            Swatch::Line {
                color: BLUE,
                dashed: false,
                hollow: false,
            },
            "pass@k: at least one of k attempts exact".to_string(),
        ),
        (
            Swatch::Line {
                color: VERMILLION,
                dashed: true,
                hollow: true,
            },
            "pass^k: all k attempts exact".to_string(),
        ),
    ];
    let header = Header::new(kind, WIDTH, &notes, legend);
    let cols = stats.len().min(3) as i32;
    let gap = 16;
    let panel_w = ((WIDTH - 2 * MARGIN - (cols - 1) * gap) / cols).min(460);
    let titles: Vec<Vec<String>> = labels
        .iter()
        .map(|l| wrap(l, 12.0, f64::from(panel_w - 12)))
        .collect();
    let title_lines = titles.iter().map(Vec::len).max().unwrap_or(1) as i32;
    let plot_h = 140;
    let panel_h = title_lines * LINE_H + 16 + plot_h + 40;
    let panel_rows = (stats.len() as i32 + cols - 1) / cols;
    let top = header.bottom + 8;
    let height = top + panel_rows * (panel_h + gap) + 4;
    let k_step = k_max.div_ceil(8).max(1);
    svg(kind, (WIDTH, height), |c| {
        header.draw(c)?;
        for (n, s) in stats.iter().enumerate() {
            let (col, row) = (n as i32 % cols, n as i32 / cols);
            let px = MARGIN + col * (panel_w + gap);
            let py = top + row * (panel_h + gap);
            c.outline((px, py), (px + panel_w, py + panel_h), GRID)?;
            c.lines(
                &titles[n],
                px + 8,
                py + 8 + title_lines * LINE_H / 2,
                Font::new(12.0),
            )?;
            let (x0, x1) = (px + 44, px + panel_w - 48);
            let y0 = py + title_lines * LINE_H + 18;
            let y1 = y0 + plot_h;
            c.fill((x0, y0), (x1, y1), ZEBRA, 1.0)?;
            let sy = Scale::new(0.0, 1.0, y1, y0);
            let sx = Scale::new(1.0, k_max as f64, x0 + 10, x1 - 10);
            for (v, text) in unit_ticks() {
                let y = sy.at(v);
                c.line(vec![(x0, y), (x1, y)], GRID, 1)?;
                c.text(&text, (x0 - 6, y), Font::new(10.0).color(MUTED).right())?;
            }
            for k in (1..=k_max).step_by(k_step) {
                let x = sx.at(k as f64);
                c.line(vec![(x, y1), (x, y1 + 4)], AXIS, 1)?;
                c.text(
                    &k.to_string(),
                    (x, y1 + 13),
                    Font::new(10.0).color(MUTED).center(),
                )?;
            }
            c.text("k", ((x0 + x1) / 2, y1 + 28), Font::new(11.0).center())?;
            if s.pass.is_empty() {
                c.text(
                    "nothing measured",
                    ((x0 + x1) / 2, (y0 + y1) / 2),
                    Font::new(12.0).color(MUTED).center(),
                )?;
                continue;
            }
            let unit = |v: f64| {
                if v.is_finite() {
                    v.clamp(0.0, 1.0)
                } else {
                    0.0
                }
            };
            let at: Vec<(i32, i32)> = s
                .pass
                .iter()
                .map(|p| (sx.at(f64::from(p.k)), sy.at(unit(p.pass_at_k))))
                .collect();
            let hat: Vec<(i32, i32)> = s
                .pass
                .iter()
                .map(|p| (sx.at(f64::from(p.k)), sy.at(unit(p.pass_hat_k))))
                .collect();
            c.line(at.clone(), BLUE, 2)?;
            c.dashed(hat.clone(), VERMILLION, 2)?;
            for p in &at {
                c.dot(*p, 4, BLUE, 1.0)?;
            }
            for p in &hat {
                c.ring(*p, 4, VERMILLION)?;
            }
            if let (Some(last), Some(&(xa, ya)), Some(&(_, yh))) =
                (s.pass.last(), at.last(), hat.last())
            {
                // pass@k ≥ pass^k: its label goes above, kept 12 px apart.
                let (mut la, mut lh) = (ya, yh);
                if lh - la < 12 {
                    let mid = (la + lh) / 2;
                    (la, lh) = (mid - 6, mid + 6);
                }
                let x = xa + 8;
                c.text(
                    &fraction(unit(last.pass_at_k), 2),
                    (x, la),
                    Font::new(11.0).bold().color(BLUE),
                )?;
                c.text(
                    &fraction(unit(last.pass_hat_k), 2),
                    (x, lh),
                    Font::new(11.0).bold().color(VERMILLION),
                )?;
            }
        }
        Ok(())
    })
}

/// pass@k when every condition has one measured attempt per question:
/// one point per condition (pass@1 and pass^1 are the same number).
fn pass_one(stats: &[ConditionStats], labels: &[String]) -> Drawn<String> {
    let kind = FigureKind::PassK;
    let notes = with_agents(&["Every condition has one measured attempt per question, so pass@1 = pass^1 and each condition is one point; record more attempts to see k > 1.".to_string()], stats);
    let header = Header::new(kind, WIDTH, &notes, Vec::new());
    let rows = Rows::new(labels, header.bottom + 6, 110);
    svg(kind, (rows.width, rows.height()), |c| {
        header.draw(c)?;
        let scale = Scale::new(0.0, 1.0, rows.x0, rows.x1);
        rows.frame(
            c,
            &scale,
            &unit_ticks(),
            "pass@1 = pass^1 (mean over measured questions)",
        )?;
        for (i, s) in stats.iter().enumerate() {
            let Some(p) = s.pass.first().filter(|p| p.pass_at_k.is_finite()) else {
                rows.nothing(c, i)?;
                continue;
            };
            let v = p.pass_at_k.clamp(0.0, 1.0);
            c.dot((scale.at(v), rows.center(i)), 6, BLUE, 1.0)?;
            rows.value(c, i, &[format!("pass@1 {}", fraction(v, 2))])?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::report::study::StudyCondition;
    use crate::runs::records::summarize;

    /// Every shipped demo root (found, not named: tier names stay out of
    /// src/), each as a study of its conditions.
    fn demos() -> Vec<StudyData> {
        let roots = crate::testing::demo_roots();
        roots
            .iter()
            .map(|p| {
                let view = crate::report::load::root(p);
                assert!(view.problems.is_empty(), "{:?}", view.problems);
                StudyData::from_root(&view)
            })
            .collect()
    }

    /// The demo root with the most conditions among those played by the
    /// scripted agent alone (no host states a cost or tokens: the tests
    /// below add them where they need them).
    fn demo() -> StudyData {
        demos()
            .into_iter()
            .filter(|s| {
                s.conditions
                    .iter()
                    .all(|c| c.condition.identity.agent.starts_with("scripted:"))
            })
            .max_by_key(|s| s.conditions.len())
            .unwrap()
    }

    /// Parses the SVG (panics with the document when it is not XML) and
    /// returns the trimmed text of every `<text>` element, in order.
    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect()
    }

    fn has(texts: &[String], wanted: &str) -> bool {
        texts.iter().any(|t| t == wanted)
    }

    /// Checks what every figure must have: XML, a title, a size, a card.
    fn check_document(kind: FigureKind, svg: &str) {
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        let root = doc.root_element();
        assert!(root.has_tag_name("svg"));
        let w: u32 = root.attribute("width").unwrap().parse().unwrap();
        let h: u32 = root.attribute("height").unwrap().parse().unwrap();
        assert_eq!(
            root.attribute("viewBox"),
            Some(format!("0 0 {w} {h}").as_str())
        );
        assert!((720..=1600).contains(&w), "{} is {w} px wide", kind.name());
        assert!(h >= 100);
        let mut children = root.children().filter(|n| n.is_element());
        let title = children.next().unwrap();
        assert!(title.has_tag_name("title"));
        assert_eq!(title.text(), Some(kind.title()));
        assert!(children.next().unwrap().has_tag_name("desc"));
        let card = children.next().unwrap();
        assert!(card.has_tag_name("rect"));
        assert_eq!(card.attribute("fill"), Some("#FFFFFF"));
        // Numbers in attributes: whole pixels, or at most two decimals.
        for node in doc.descendants() {
            for attr in node.attributes() {
                for token in attr
                    .value()
                    .split(|c: char| !(c.is_ascii_digit() || c == '.'))
                {
                    if let Some((_, frac)) = token.split_once('.') {
                        assert!(frac.len() <= 2, "{}={}", attr.name(), attr.value());
                    }
                }
            }
        }
    }

    fn render_ok(kind: FigureKind, study: &StudyData) -> String {
        let svg = render(kind, study).unwrap();
        check_document(kind, &svg);
        svg
    }

    /// `study` with every attempt reporting `usd` and a token each, as a
    /// claude host's report would (the demo's scripted agents report none).
    fn costed(mut study: StudyData, usd: f64) -> StudyData {
        for c in &mut study.conditions {
            for result in c.results.values_mut() {
                for a in &mut result.attempts {
                    a.usage = Some(crate::runs::records::Usage {
                        source: "agent.json".into(),
                        cost_usd: Some(usd),
                        input_tokens: Some(1),
                        output_tokens: Some(1),
                        cache_creation_input_tokens: None,
                        cache_read_input_tokens: None,
                        num_turns: None,
                        api_s: None,
                    });
                }
            }
        }
        study
    }

    #[test]
    fn every_figure_is_the_same_bytes_twice() {
        for study in demos().into_iter().map(|s| costed(s, 0.01)) {
            for kind in FigureKind::ALL {
                let a = render_ok(kind, &study);
                let b = render(kind, &study).unwrap();
                assert_eq!(a, b, "{}", kind.name());
                assert!(!a.contains("No data"), "{}", kind.name());
            }
        }
    }

    #[test]
    fn exact_rate_names_every_condition_with_its_rate_and_interval() {
        let study = demo();
        let t = texts(&render_ok(FigureKind::ExactRate, &study));
        for c in &study.conditions {
            let s = c.stats();
            let joined = t.join(" ");
            // The label may be wrapped over lines; its words are all there.
            assert!(
                joined.contains(&s.label)
                    || s.label.split(' ').all(|w| t.iter().any(|x| x.contains(w)))
            );
            let rate = s.exact_rate.unwrap();
            let i = s.interval.unwrap();
            assert!(has(
                &t,
                &format!(
                    "{} ({}/{} attempts)",
                    fraction(rate, 2),
                    s.exact_attempts,
                    s.measured_attempts
                )
            ));
            assert!(i.low <= rate && rate <= i.high, "{i:?} misses {rate}");
            assert!(has(
                &t,
                &format!("[{}, {}]", fraction(i.low, 2), fraction(i.high, 2))
            ));
        }
    }

    #[test]
    fn heatmap_shows_every_question_and_every_cell() {
        for study in demos() {
            let t = texts(&render_ok(FigureKind::Heatmap, &study));
            let mut expected: BTreeMap<String, usize> = BTreeMap::new();
            for q in study.questions() {
                assert!(has(&t, &q), "{q}");
                for c in &study.conditions {
                    let cell = c.cell(&q).unwrap();
                    assert!(cell.measured > 0);
                    *expected
                        .entry(format!("{}/{}", cell.exact, cell.measured))
                        .or_default() += 1;
                }
            }
            for (text, n) in expected {
                assert_eq!(t.iter().filter(|x| **x == text).count(), n, "{text}");
            }
        }
    }

    #[test]
    fn the_cost_figure_shows_each_conditions_mean_cost_beside_its_exact_rate() {
        let mut study = demo();
        // Scripted attempts report no cost: no bar, and why.
        let none = texts(&render(FigureKind::Cost, &study).unwrap());
        assert!(
            none.iter()
                .any(|t| t.contains("no condition's agent host reported a cost")),
            "{none:?}"
        );
        // The first condition's attempts cost $0.02 each; the others none.
        let first = costed(study.clone(), 0.02).conditions.remove(0);
        study.conditions[0] = first;
        let svg = render(FigureKind::Cost, &study).unwrap();
        check_document(FigureKind::Cost, &svg);
        let t = texts(&svg);
        assert!(has(&t, "$0.0200 per attempt"), "{t:?}");
        let stats = study.conditions[0].stats();
        assert!(
            has(
                &t,
                &format!("exact {}", crate::format::rate(stats.exact_rate))
            ),
            "{t:?}"
        );
        assert_eq!(
            t.iter().filter(|x| *x == "cost not reported").count(),
            study.conditions.len() - 1
        );
    }

    #[test]
    fn f1_marks_the_mean_of_every_condition() {
        let study = demo();
        let svg = render_ok(FigureKind::F1, &study);
        let t = texts(&svg);
        let mut dots = 0;
        for c in &study.conditions {
            let s = c.stats();
            let mean = s.f1.iter().sum::<f64>() / s.f1.len() as f64;
            assert!(has(&t, &format!("mean {}", fraction(mean, 2))));
            assert!(has(&t, &format!("n = {}", s.f1.len())));
            dots += s.f1.len();
        }
        assert_eq!(svg.matches("opacity=\"0.35\"").count(), dots);
    }

    #[test]
    fn wall_time_has_a_legend_and_a_value_per_condition() {
        let study = demo();
        let t = texts(&render_ok(FigureKind::WallTime, &study));
        assert!(t.iter().any(|x| x.starts_with("server:")));
        assert!(t.iter().any(|x| x.starts_with("agent:")));
        for c in &study.conditions {
            let s = c.stats();
            let wall = s.mean_wall_s.unwrap();
            let server = s.mean_server_s.unwrap();
            assert!(has(&t, &seconds(wall.max(server))));
        }
    }

    #[test]
    fn tool_calls_name_every_tool_with_its_count() {
        let study = demo();
        let t = texts(&render_ok(FigureKind::ToolCalls, &study));
        let mut tools = BTreeSet::new();
        for c in &study.conditions {
            for (tool, n) in &c.stats().tool_calls {
                tools.insert(tool.clone());
                assert!(has(&t, &n.to_string()));
            }
        }
        assert!(!tools.is_empty());
        for tool in tools {
            assert!(has(&t, &tool), "{tool}");
        }
    }

    #[test]
    fn pass_k_draws_both_curves_and_their_last_values() {
        let study = demo();
        let svg = render_ok(FigureKind::PassK, &study);
        let t = texts(&svg);
        assert!(t.iter().any(|x| x.starts_with("pass@k")));
        assert!(t.iter().any(|x| x.starts_with("pass^k")));
        for c in &study.conditions {
            let last = *c.stats().pass.last().unwrap();
            assert!(has(&t, &fraction(last.pass_at_k, 2)));
            assert!(has(&t, &fraction(last.pass_hat_k, 2)));
        }
        // A solid polyline per condition, and dashes for pass^k.
        assert!(svg.matches("<polyline").count() >= study.conditions.len());
    }

    #[test]
    fn pass_k_with_one_attempt_each_is_one_point_per_condition_and_says_so() {
        let mut study = demo();
        for c in &mut study.conditions {
            for r in c.results.values_mut() {
                r.attempts.truncate(1);
                r.summary = summarize(&r.attempts, r.ordered_key);
            }
        }
        let svg = render_ok(FigureKind::PassK, &study);
        let t = texts(&svg);
        assert!(t.join(" ").contains("pass@1 = pass^1"));
        assert_eq!(
            t.iter()
                .filter(|x| x.starts_with("pass@1 0.") || x.starts_with("pass@1 1."))
                .count(),
            study.conditions.len()
        );
        assert_eq!(svg.matches("<circle").count(), study.conditions.len());
    }

    #[test]
    fn text_from_data_is_escaped() {
        let mut study = costed(demo(), 0.01);
        let odd = "a <b> & \"c\"";
        study.conditions[0].label = odd.to_string();
        // A question id and a tool name with markup in them, too.
        let c = &mut study.conditions[1];
        let (q, mut r) = c.results.pop_first().unwrap();
        r.attempts[0].tools_called.push("<tool>&".to_string());
        c.results.insert(format!("{q}<i>&"), r);
        for kind in FigureKind::ALL {
            let svg = render_ok(kind, &study);
            assert!(!svg.contains("<b>") && !svg.contains("<i>") && !svg.contains("<tool>"));
            assert!(svg.contains("&amp;"), "{}", kind.name());
            let t = texts(&svg);
            match kind {
                FigureKind::Heatmap => assert!(has(&t, &format!("{q}<i>&"))),
                FigureKind::ToolCalls => assert!(has(&t, "<tool>&")),
                _ => {}
            }
            if kind != FigureKind::Heatmap {
                // Wrapped at spaces: every piece of the label is there.
                for word in ["a", "<b>", "&", "\"c\""] {
                    assert!(
                        t.iter().any(|x| x.split(' ').any(|w| w == word)),
                        "{} {word}",
                        kind.name()
                    );
                }
            }
        }
    }

    fn says_no_data(svg: &str) -> bool {
        texts(svg)
            .iter()
            .any(|t| t.to_lowercase().starts_with("no data"))
    }

    #[test]
    fn a_study_without_conditions_says_no_data() {
        let study = StudyData::default();
        for kind in FigureKind::ALL {
            let svg = render_ok(kind, &study);
            assert!(says_no_data(&svg), "{}", kind.name());
        }
    }

    /// The demo with every attempt of the first condition blocked.
    fn blocked_first() -> StudyData {
        let mut study = demo();
        let c = &mut study.conditions[0];
        for r in c.results.values_mut() {
            for a in &mut r.attempts {
                a.blocked = true;
                a.blocked_reason = Some("quota".to_string());
            }
            r.summary = summarize(&r.attempts, r.ordered_key);
        }
        let a = &mut c.condition.aggregate;
        a.measured_questions = 0;
        a.blocked_attempts = a.attempts;
        (a.exact_rate, a.strict_exact_rate, a.ordered_rate, a.mean_f1) = (None, None, None, None);
        (a.mean_wall_s, a.mean_server_s) = (None, None);
        study
    }

    #[test]
    fn a_condition_with_nothing_measured_is_drawn_as_such() {
        let study = blocked_first();
        // Scripted attempts report no cost: that figure says no data.
        for kind in FigureKind::ALL
            .into_iter()
            .filter(|k| *k != FigureKind::Cost)
        {
            let svg = render_ok(kind, &study);
            assert!(!says_no_data(&svg), "{}", kind.name());
            let t = texts(&svg);
            match kind {
                FigureKind::ExactRate
                | FigureKind::F1
                | FigureKind::WallTime
                | FigureKind::PassK => {
                    assert!(has(&t, "nothing measured"), "{}", kind.name())
                }
                FigureKind::Heatmap => {
                    assert_eq!(
                        t.iter().filter(|x| *x == "blocked").count(),
                        study.questions().len()
                    )
                }
                FigureKind::ToolCalls | FigureKind::Cost => {}
            }
        }
    }

    #[test]
    fn nothing_measured_anywhere_says_no_data() {
        let mut study = blocked_first();
        study.conditions.truncate(1);
        for kind in [
            FigureKind::ExactRate,
            FigureKind::F1,
            FigureKind::WallTime,
            FigureKind::PassK,
        ] {
            assert!(says_no_data(&render_ok(kind, &study)), "{}", kind.name());
        }
        // Blocked attempts still called tools; the heatmap still has rows.
        assert!(!says_no_data(&render_ok(FigureKind::ToolCalls, &study)));
        assert!(!says_no_data(&render_ok(FigureKind::Heatmap, &study)));
    }

    #[test]
    fn no_tool_calls_and_no_questions_say_no_data() {
        let mut study = demo();
        for c in &mut study.conditions {
            for r in c.results.values_mut() {
                for a in &mut r.attempts {
                    a.tools_called.clear();
                }
            }
        }
        assert!(says_no_data(&render_ok(FigureKind::ToolCalls, &study)));
        for c in &mut study.conditions {
            c.results.clear();
        }
        assert!(says_no_data(&render_ok(FigureKind::Heatmap, &study)));
        assert!(says_no_data(&render_ok(FigureKind::F1, &study)));
    }

    #[test]
    fn a_question_missing_from_a_condition_is_hatched_not_a_panic() {
        let mut study = demo();
        let q = study.questions()[0].clone();
        study.conditions[1].results.remove(&q);
        // Odd numbers, too: empty F1, a NaN time.
        study.conditions[2].condition.aggregate.mean_wall_s = Some(f64::NAN);
        let t = texts(&render_ok(FigureKind::Heatmap, &study));
        assert!(has(&t, &q));
        for kind in FigureKind::ALL {
            render_ok(kind, &study);
        }
    }

    #[test]
    fn long_labels_and_many_conditions_widen_or_wrap_without_panicking() {
        let base = demo();
        let mut study = StudyData::default();
        for i in 0..9 {
            let mut c: StudyCondition = base.conditions[i % base.conditions.len()].clone();
            c.key = format!("c{i}");
            c.label = format!(
                "{} {}",
                c.label,
                "very-long-label-without-any-spaces-at-all".repeat(i % 3)
            );
            study.conditions.push(c);
        }
        for kind in FigureKind::ALL {
            render_ok(kind, &study);
        }
        let t = texts(&render_ok(FigureKind::Heatmap, &study));
        // Nine long labels do not fit over their columns: numbered, with a key.
        assert!(has(&t, "9"));
        assert!(t.iter().any(|x| x.starts_with("9: ")));
    }

    #[test]
    fn helpers_hold_their_promises() {
        assert_eq!(
            round_font_sizes("a font-size=\"12.000000000000002\" b"),
            "a font-size=\"12\" b"
        );
        assert_eq!(
            round_font_sizes("font-size=\"9.677419354838708\""),
            "font-size=\"9.7\""
        );
        let (hi, ticks) = nice_ticks(0.0);
        assert_eq!(hi, 1.0);
        assert_eq!(ticks.last().unwrap().1, "1.0");
        let (hi, ticks) = nice_ticks(7.3);
        assert_eq!(hi, 8.0);
        assert_eq!(
            ticks.iter().map(|t| t.1.as_str()).collect::<Vec<_>>(),
            ["0", "2", "4", "6", "8"]
        );
        assert_eq!(nice_ticks(0.012).1[1].1, "0.0025");
        assert_eq!(wrap("", 12.0, 100.0), [""]);
        for line in wrap("x".repeat(200).as_str(), 12.0, 100.0) {
            assert!(text_width(&line, 12.0, false) <= 100.0);
        }
        assert_eq!(viridis(0.0), RGBColor(0x44, 0x01, 0x54));
        assert_eq!(viridis(1.0), RGBColor(0xFD, 0xE7, 0x25));
        assert_eq!(viridis(f64::NAN), viridis(0.0));
        assert_eq!(seconds(0.0042), "0.004 s");
        assert_eq!(seconds(12.34), "12.3 s");
    }
}
