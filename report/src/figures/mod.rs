//! Report figures drawn with plotters, each written as SVG and PNG:
//!
//! - Native EM and SCR by target length with interval bands, per (model, domain);
//! - reliability diagrams (ten equal-width bins) for the three confidence composites, per
//!   (model, domain, arm);
//! - coverage–precision curves with the negative-length ranking baseline, per
//!   (model, domain, arm);
//! - candidate coverage: detection against false rejection of the native and calibrated
//!   rejection rules, per task (one panel per model and name variant).
//!
//! Text: the PNG backend rasterizes text with a system font (plotters' `ttf` feature through
//! font-kit/fontconfig). Without a usable font it cannot draw text, so [`png_font_problem`]
//! probes once and the PNGs are skipped with a message naming the Debian package. The SVG
//! backend writes `<text>` elements and needs no font: the figures avoid the plotters calls
//! that measure text (chart captions, built-in legends), so SVGs are written either way.
//! Every PNG is drawn inside `catch_unwind` as a last guard against a panic in a font
//! library.
//!
//! One file per figure: `by_length.rs` (Native EM and SCR by length), `reliability.rs`
//! (reliability diagrams), `coverage_precision.rs` (coverage–precision curves) and
//! `candidate_coverage.rs` (detection against false rejection); `render.rs` writes them as SVG
//! and PNG. This file holds what they share: the [`Figure`] trait, colours, text, markers,
//! legends and the unit-square mesh.

mod by_length;
mod candidate_coverage;
mod coverage_precision;
mod reliability;
mod render;
#[cfg(test)]
mod tests;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::CoordTranslate;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub use by_length::{ByLengthFigure, LengthPoint, Series};
pub use candidate_coverage::{DetectionFigure, DetectionPanel, PointSeries, RulePoint};
pub use coverage_precision::{coverage_figure, coverage_precision, CoverageFigure, Curve};
pub use reliability::ReliabilityFigure;
pub use render::{png_font_problem, render, slug, svg_string, Written};

/// The result of drawing on a backend.
pub type PlotResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A figure that can be drawn on any backend.
pub trait Figure {
    /// Pixel size.
    fn size(&self) -> (u32, u32);
    /// Draws the whole figure on `root`, which is [`Figure::size`] pixels large.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> PlotResult<DB>;
}

const FONT: &str = "sans-serif";

/// Colour-blind-friendly categorical colours (Okabe–Ito, then greys).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(120, 94, 60),
    RGBColor(90, 90, 90),
];

const NATIVE_COLOR: RGBColor = RGBColor(40, 40, 40);

fn text_style(size: u32) -> TextStyle<'static> {
    TextStyle::from((FONT, size).into_font())
}

/// Text anchored at `pos`; uses no text measurement.
fn label<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    size: u32,
    at: (i32, i32),
    anchor: (HPos, VPos),
) -> PlotResult<DB> {
    area.draw_text(
        text,
        &text_style(size).pos(Pos::new(anchor.0, anchor.1)),
        at,
    )
}

/// A centred title in a strip of the given height at the top of `area`; returns the rest.
fn titled<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    size: u32,
    height: u32,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    let (head, body) = area.split_vertically(height);
    let (w, h) = head.dim_in_pixel();
    label(
        &head,
        title,
        size,
        (w as i32 / 2, h as i32 / 2),
        (HPos::Center, VPos::Center),
    )?;
    Ok(body)
}

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Line with a point marker and a shaded band.
    LineBand,
    /// Line with point markers.
    Line,
    /// Dashed line (three short strokes in the legend).
    Dashed,
    /// Filled box.
    Bar,
    /// Filled circle, without a line.
    Point,
    /// A point marker of the given shape (black in the legend when it keys a rule).
    Marker(MarkerShape),
}

/// Shapes of point markers: the filled circle, then hollow shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerShape {
    /// Filled circle.
    Circle,
    /// Hollow square.
    Square,
    /// Hollow upward triangle.
    Triangle,
    /// Hollow diamond.
    Diamond,
    /// Diagonal cross (×).
    Cross,
}

/// A marker of `shape` at `at` (in the area's coordinates), `size` pixels from its centre to
/// its edge; the circle is filled, the other shapes hollow.
fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    shape: MarkerShape,
    at: CT::From,
    size: i32,
    color: RGBColor,
) -> PlotResult<DB>
where
    CT::From: Clone,
{
    let s = size;
    let h = s + 1;
    let stroke = color.stroke_width(2);
    match shape {
        MarkerShape::Circle => {
            area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), s, color.filled())))
        }
        MarkerShape::Square => {
            area.draw(&(EmptyElement::at(at) + Rectangle::new([(-s, -s), (s, s)], stroke)))
        }
        MarkerShape::Triangle => area.draw(
            &(EmptyElement::at(at)
                + PathElement::new(vec![(0, -h), (h, h), (-h, h), (0, -h)], stroke)),
        ),
        MarkerShape::Diamond => area.draw(
            &(EmptyElement::at(at)
                + PathElement::new(vec![(0, -h), (h, 0), (0, h), (-h, 0), (0, -h)], stroke)),
        ),
        MarkerShape::Cross => area.draw(
            &(EmptyElement::at(at)
                + PathElement::new(vec![(-s, -s), (s, s)], stroke)
                + PathElement::new(vec![(-s, s), (s, -s)], stroke)),
        ),
    }
}

/// One legend item: its mark drawn in its colour, then its label.
#[derive(Debug, Clone)]
pub struct LegendEntry {
    /// Text to the right of the mark.
    pub label: String,
    /// Colour of the mark.
    pub color: RGBColor,
    /// How the mark is drawn.
    pub mark: Mark,
}

const LEGEND_ROW: u32 = 22;

fn legend_height(rows: usize) -> u32 {
    if rows == 0 {
        0
    } else {
        LEGEND_ROW * rows as u32 + 10
    }
}

/// A legend in `columns` columns of fixed width (no text measurement).
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
    columns: usize,
    left: i32,
) -> PlotResult<DB> {
    let columns = columns.max(1);
    let (w, _) = area.dim_in_pixel();
    let col_w = (w as i32 - left) / columns as i32;
    for (i, e) in entries.iter().enumerate() {
        let x = left + (i % columns) as i32 * col_w;
        let y = 5 + (i / columns) as i32 * LEGEND_ROW as i32 + LEGEND_ROW as i32 / 2;
        let c = e.color;
        match e.mark {
            Mark::LineBand => {
                area.draw(&Rectangle::new(
                    [(x, y - 6), (x + 28, y + 6)],
                    c.mix(0.2).filled(),
                ))?;
                area.draw(&PathElement::new(
                    vec![(x, y), (x + 28, y)],
                    c.stroke_width(2),
                ))?;
                area.draw(&Circle::new((x + 14, y), 4, c.filled()))?;
            }
            Mark::Line => {
                area.draw(&PathElement::new(
                    vec![(x, y), (x + 28, y)],
                    c.stroke_width(2),
                ))?;
                area.draw(&Circle::new((x + 14, y), 3, c.filled()))?;
            }
            Mark::Dashed => {
                for k in 0..3 {
                    let x0 = x + k * 11;
                    area.draw(&PathElement::new(
                        vec![(x0, y), (x0 + 6, y)],
                        c.stroke_width(2),
                    ))?;
                }
            }
            Mark::Bar => {
                area.draw(&Rectangle::new(
                    [(x + 4, y - 7), (x + 24, y + 7)],
                    c.mix(0.35).filled(),
                ))?;
                area.draw(&Rectangle::new([(x + 4, y - 7), (x + 24, y + 7)], c))?;
            }
            Mark::Point => {
                area.draw(&Circle::new((x + 14, y), 4, c.filled()))?;
            }
            Mark::Marker(shape) => {
                draw_marker(area, shape, (x + 14, y), 5, c)?;
            }
        }
        label(area, &e.label, 15, (x + 36, y), (HPos::Left, VPos::Center))?;
    }
    Ok(())
}

/// Axes, labels and grid of a chart whose both axes are proportions: six ticks each, one
/// decimal, labels at `font` points and axis descriptions one point larger.
fn draw_unit_mesh<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    x_desc: &str,
    y_desc: &str,
    font: u32,
) -> PlotResult<DB> {
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(&|x| format!("{x:.1}"))
        .y_label_formatter(&|y| format!("{y:.1}"))
        .label_style(text_style(font))
        .axis_desc_style(text_style(font + 1))
        .bold_line_style(BLACK.mix(0.10))
        .light_line_style(TRANSPARENT)
        .draw()
}
