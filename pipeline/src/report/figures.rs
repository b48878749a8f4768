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

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::CoordTranslate;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontDesc, FontFamily, FontStyle};

use c2s_records::Trajectory;
use c2s_stats::{Reliability, ScoreKind};

/// The result of drawing on a backend.
pub type PlotResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A figure that can be drawn on any backend.
pub trait Figure {
    /// Pixel size.
    fn size(&self) -> (u32, u32);
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
    Dashed,
    /// Filled box.
    Bar,
    Point,
    /// A point marker of the given shape (black in the legend when it keys a rule).
    Marker(MarkerShape),
}

/// Shapes of point markers: the filled circle, then hollow shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerShape {
    Circle,
    Square,
    Triangle,
    Diamond,
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

#[derive(Debug, Clone)]
pub struct LegendEntry {
    pub label: String,
    pub color: RGBColor,
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

// ---------------------------------------------------------------------------------------------
// Native EM and SCR by length.

/// One point of a by-length series: the value and its interval, `None` when undefined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LengthPoint {
    pub length: u32,
    pub value: Option<f64>,
    pub ci: Option<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct Series {
    pub label: String,
    pub points: Vec<LengthPoint>,
}

/// Native EM (left panel) and SCR (right panel) by length for one (model, domain).
pub struct ByLengthFigure {
    pub title: String,
    pub lengths: Vec<u32>,
    pub native: Vec<Series>,
    pub scr: Vec<Series>,
}

impl ByLengthFigure {
    fn colors(&self) -> (Vec<RGBColor>, Vec<RGBColor>) {
        let native = (0..self.native.len())
            .map(|i| {
                if i == 0 {
                    NATIVE_COLOR
                } else {
                    PALETTE[(PALETTE.len() - i) % PALETTE.len()]
                }
            })
            .collect();
        let scr = (0..self.scr.len())
            .map(|i| PALETTE[i % PALETTE.len()])
            .collect();
        (native, scr)
    }

    fn legend_rows(&self) -> usize {
        self.native.len().max(self.scr.len())
    }
}

/// Maximal runs of consecutive defined points as (x + dodge, value, low, high) in percent.
fn defined_runs(points: &[LengthPoint], dodge: f64) -> Vec<Vec<(f64, f64, f64, f64)>> {
    let mut runs = Vec::new();
    let mut cur: Vec<(f64, f64, f64, f64)> = Vec::new();
    for p in points {
        match p.value {
            Some(v) => {
                let (lo, hi) = p.ci.unwrap_or((v, v));
                cur.push((
                    f64::from(p.length) + dodge,
                    100.0 * v,
                    100.0 * lo,
                    100.0 * hi,
                ));
            }
            None => {
                if !cur.is_empty() {
                    runs.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    if !cur.is_empty() {
        runs.push(cur);
    }
    runs
}

fn length_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    y_desc: &str,
    lengths: &[u32],
    series: &[(&Series, RGBColor)],
) -> PlotResult<DB> {
    let body = titled(area, title, 19, 30)?;
    let lo = lengths.first().copied().unwrap_or(3);
    let hi = lengths.last().copied().unwrap_or(8).max(lo);
    let mut chart = ChartBuilder::on(&body)
        .margin(8)
        .margin_right(22)
        .x_label_area_size(46)
        .y_label_area_size(58)
        .build_cartesian_2d(f64::from(lo) - 0.4..f64::from(hi) + 0.4, 0.0..100.0)?;
    chart
        .configure_mesh()
        .x_desc("Target length L")
        .y_desc(y_desc)
        // At most one tick per length: plotters then steps by whole lengths.
        .x_labels((hi - lo + 2) as usize)
        .x_label_formatter(&|x| {
            if (x - x.round()).abs() < 1e-6 {
                format!("{x:.0}")
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|y| format!("{y:.0}"))
        .y_labels(6)
        .label_style(text_style(15))
        .axis_desc_style(text_style(16))
        .bold_line_style(BLACK.mix(0.10))
        .light_line_style(TRANSPARENT)
        .draw()?;
    // Several series are dodged sideways so that equal values stay visible.
    let k = series.len() as f64;
    let dodge = |i: usize| {
        if k > 1.0 {
            0.07 * (i as f64 - (k - 1.0) / 2.0)
        } else {
            0.0
        }
    };
    // Bands first, then lines and markers on top.
    for (i, (s, color)) in series.iter().enumerate() {
        for run in defined_runs(&s.points, dodge(i)) {
            if run.len() >= 2 {
                let upper: Vec<(f64, f64)> = run.iter().map(|p| (p.0, p.3)).collect();
                let lower: Vec<(f64, f64)> = run.iter().map(|p| (p.0, p.2)).collect();
                let mut band = upper.clone();
                band.extend(lower.iter().rev());
                // Overlapping bands stay readable: lighter fill, edges drawn.
                let alpha = if k > 1.0 { 0.10 } else { 0.18 };
                chart.draw_series(std::iter::once(Polygon::new(
                    band,
                    color.mix(alpha).filled(),
                )))?;
                if k > 1.0 {
                    for edge in [upper, lower] {
                        chart
                            .draw_series(LineSeries::new(edge, color.mix(0.45).stroke_width(1)))?;
                    }
                }
            }
        }
    }
    for (i, (s, color)) in series.iter().enumerate() {
        for run in defined_runs(&s.points, dodge(i)) {
            if run.len() == 1 {
                // An isolated point: an error bar instead of a band.
                let (x, _, lo, hi) = run[0];
                chart.draw_series([
                    PathElement::new(vec![(x, lo), (x, hi)], color.mix(0.6).stroke_width(2)),
                    PathElement::new(vec![(x - 0.08, lo), (x + 0.08, lo)], color.stroke_width(2)),
                    PathElement::new(vec![(x - 0.08, hi), (x + 0.08, hi)], color.stroke_width(2)),
                ])?;
            }
            chart.draw_series(LineSeries::new(
                run.iter().map(|p| (p.0, p.1)),
                color.stroke_width(2),
            ))?;
            chart.draw_series(
                run.iter()
                    .map(|p| Circle::new((p.0, p.1), 4, color.filled())),
            )?;
        }
    }
    Ok(())
}

impl Figure for ByLengthFigure {
    fn size(&self) -> (u32, u32) {
        (1200, 34 + 430 + legend_height(self.legend_rows()))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> PlotResult<DB> {
        let body = titled(root, &self.title, 22, 34)?;
        let (_, h) = body.dim_in_pixel();
        let (plots, legends) = body.split_vertically(h - legend_height(self.legend_rows()));
        let panels = plots.split_evenly((1, 2));
        let legend_areas = legends.split_evenly((1, 2));
        let (native_colors, scr_colors) = self.colors();
        let native: Vec<(&Series, RGBColor)> = self
            .native
            .iter()
            .zip(native_colors.iter().copied())
            .collect();
        let scr: Vec<(&Series, RGBColor)> =
            self.scr.iter().zip(scr_colors.iter().copied()).collect();
        length_panel(
            &panels[0],
            "(a) Native accuracy",
            "Native EM (%)",
            &self.lengths,
            &native,
        )?;
        length_panel(
            &panels[1],
            "(b) Sequence Composition Rate",
            "SCR (%)",
            &self.lengths,
            &scr,
        )?;
        let entries = |v: &[(&Series, RGBColor)]| -> Vec<LegendEntry> {
            v.iter()
                .map(|(s, c)| LegendEntry {
                    label: s.label.clone(),
                    color: *c,
                    mark: Mark::LineBand,
                })
                .collect()
        };
        legend(&legend_areas[0], &entries(&native), 1, 70)?;
        legend(&legend_areas[1], &entries(&scr), 1, 70)?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Reliability diagrams.

/// Reliability diagrams of one (model, domain, arm), one panel per score kind.
pub struct ReliabilityFigure {
    pub title: String,
    /// (score, reliability, n)
    pub panels: Vec<(ScoreKind, Reliability, u64)>,
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

fn reliability_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    r: &Reliability,
    color: RGBColor,
) -> PlotResult<DB> {
    let body = titled(area, title, 17, 30)?;
    let mut chart = ChartBuilder::on(&body)
        .margin(8)
        .margin_right(18)
        .x_label_area_size(46)
        .y_label_area_size(54)
        .build_cartesian_2d(0.0..1.0, 0.0..1.08)?;
    draw_unit_mesh(&mut chart, "Confidence", "Accuracy (EM)", 14)?;
    chart.draw_series(DashedLineSeries::new(
        [(0.0, 0.0), (1.0, 1.0)],
        6,
        4,
        RGBColor(110, 110, 110).stroke_width(1),
    ))?;
    for b in &r.bins {
        let Some(acc) = b.accuracy else {
            continue;
        };
        let (x0, x1) = (b.low + 0.006, b.high - 0.006);
        chart.draw_series([
            Rectangle::new([(x0, 0.0), (x1, acc)], color.mix(0.30).filled()),
            Rectangle::new([(x0, 0.0), (x1, acc)], color.stroke_width(1)),
        ])?;
        if let Some(m) = b.mean_score {
            chart.draw_series(std::iter::once(Circle::new((m, acc), 4, color.filled())))?;
        }
        chart.draw_series(std::iter::once(Text::new(
            b.count.to_string(),
            ((b.low + b.high) / 2.0, acc + 0.012),
            text_style(12).pos(Pos::new(HPos::Center, VPos::Bottom)),
        )))?;
    }
    Ok(())
}

impl Figure for ReliabilityFigure {
    fn size(&self) -> (u32, u32) {
        (
            400 * self.panels.len().max(1) as u32,
            34 + 420 + legend_height(1),
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> PlotResult<DB> {
        let body = titled(root, &self.title, 20, 34)?;
        let (_, h) = body.dim_in_pixel();
        let (plots, legend_area) = body.split_vertically(h - legend_height(1));
        let panels = plots.split_evenly((1, self.panels.len().max(1)));
        for (i, ((kind, r, n), area)) in self.panels.iter().zip(&panels).enumerate() {
            let ece = r.ece.map_or_else(|| "–".to_string(), |e| format!("{e:.3}"));
            let title = format!("{} (n = {n}, ECE {ece})", super::tables::score_label(*kind));
            reliability_panel(area, &title, r, PALETTE[i % PALETTE.len()])?;
        }
        legend(
            &legend_area,
            &[
                LegendEntry {
                    label: "accuracy per bin (count on top)".into(),
                    color: PALETTE[0],
                    mark: Mark::Bar,
                },
                LegendEntry {
                    label: "mean confidence in bin".into(),
                    color: PALETTE[0],
                    mark: Mark::Point,
                },
                LegendEntry {
                    label: "perfect calibration".into(),
                    color: RGBColor(110, 110, 110),
                    mark: Mark::Dashed,
                },
            ],
            3,
            60,
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Coverage–precision curves.

/// Coverage–precision points of a ranking: strings sorted by score descending, tied scores
/// entering together; at each distinct score, coverage = answered / n and precision = EM
/// among the answered.
pub fn coverage_precision(pairs: &[(f64, bool)]) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, bool)> = pairs.iter().copied().filter(|p| !p.0.is_nan()).collect();
    v.sort_by(|a, b| b.0.total_cmp(&a.0));
    let n = v.len() as f64;
    let mut out = Vec::new();
    let (mut answered, mut correct) = (0u64, 0u64);
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j < v.len() && v[j].0 == v[i].0 {
            answered += 1;
            correct += u64::from(v[j].1);
            j += 1;
        }
        out.push((answered as f64 / n, correct as f64 / answered as f64));
        i = j;
    }
    out
}

pub struct Curve {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
}

/// Coverage–precision of one (model, domain, arm).
pub struct CoverageFigure {
    pub title: String,
    pub curves: Vec<Curve>,
    /// Overall EM of the population (precision at full coverage).
    pub prevalence: Option<f64>,
}

impl CoverageFigure {
    fn legend_entries(&self) -> Vec<LegendEntry> {
        let mut v: Vec<LegendEntry> = self
            .curves
            .iter()
            .enumerate()
            .map(|(i, c)| LegendEntry {
                label: c.label.clone(),
                color: curve_color(i, c),
                mark: if c.dashed { Mark::Dashed } else { Mark::Line },
            })
            .collect();
        if let Some(p) = self.prevalence {
            v.push(LegendEntry {
                label: format!("overall EM ({:.1}%)", 100.0 * p),
                color: RGBColor(150, 150, 150),
                mark: Mark::Dashed,
            });
        }
        v
    }
}

fn curve_color(i: usize, c: &Curve) -> RGBColor {
    if c.dashed {
        NATIVE_COLOR
    } else {
        PALETTE[i % PALETTE.len()]
    }
}

impl Figure for CoverageFigure {
    fn size(&self) -> (u32, u32) {
        let rows = self.legend_entries().len().div_ceil(2);
        (820, 34 + 470 + legend_height(rows))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> PlotResult<DB> {
        let body = titled(root, &self.title, 20, 34)?;
        let entries = self.legend_entries();
        let (_, h) = body.dim_in_pixel();
        let (plot, legend_area) =
            body.split_vertically(h - legend_height(entries.len().div_ceil(2)));
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .margin_right(24)
            .x_label_area_size(46)
            .y_label_area_size(58)
            .build_cartesian_2d(0.0..1.0, 0.0..1.04)?;
        draw_unit_mesh(
            &mut chart,
            "Coverage (fraction answered, most confident first)",
            "Precision (EM among answered)",
            15,
        )?;
        if let Some(p) = self.prevalence {
            chart.draw_series(DashedLineSeries::new(
                [(0.0, p), (1.0, p)],
                4,
                4,
                RGBColor(150, 150, 150).stroke_width(1),
            ))?;
        }
        for (i, c) in self.curves.iter().enumerate() {
            let color = curve_color(i, c);
            if c.dashed {
                chart.draw_series(DashedLineSeries::new(
                    c.points.iter().copied(),
                    7,
                    4,
                    color.stroke_width(2),
                ))?;
            } else {
                // Earlier curves are wider, so that coinciding curves stay visible.
                let width = 5u32.saturating_sub(i as u32).max(2);
                chart.draw_series(LineSeries::new(
                    c.points.iter().copied(),
                    color.stroke_width(width),
                ))?;
            }
            if c.points.len() <= 60 {
                chart.draw_series(c.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
            }
        }
        legend(&legend_area, &entries, 2, 70)
    }
}

/// The coverage–precision figure of one population of trajectories.
pub fn coverage_figure(title: String, members: &[&Trajectory]) -> CoverageFigure {
    let mut curves: Vec<Curve> = ScoreKind::ALL
        .iter()
        .map(|&kind| Curve {
            label: format!("confidence: {}", super::tables::score_label(kind)),
            points: coverage_precision(
                &members
                    .iter()
                    .filter_map(|t| t.confidence.as_ref().map(|c| (kind.of(c), t.correct)))
                    .collect::<Vec<_>>(),
            ),
            dashed: false,
        })
        .collect();
    curves.push(Curve {
        label: "−length ranking baseline".into(),
        points: coverage_precision(
            &members
                .iter()
                .map(|t| (-(t.length as f64), t.correct))
                .collect::<Vec<_>>(),
        ),
        dashed: true,
    });
    let n = members.len();
    let prevalence =
        (n > 0).then(|| members.iter().filter(|t| t.correct).count() as f64 / n as f64);
    CoverageFigure {
        title,
        curves,
        prevalence,
    }
}

// ---------------------------------------------------------------------------------------------
// Candidate coverage: detection vs false rejection.

/// One rejection rule's tested operating point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RulePoint {
    pub shape: MarkerShape,
    /// P(reject | present) on test texts.
    pub false_rejection: f64,
    /// P(reject | absent) on test texts.
    pub detection: f64,
}

/// The operating points of one marker series (one colour), e.g. one k.
#[derive(Debug, Clone)]
pub struct PointSeries {
    /// Legend label; series with the same label share a colour across panels.
    pub label: String,
    pub points: Vec<RulePoint>,
}

/// One panel, e.g. one (model, names).
#[derive(Debug, Clone)]
pub struct DetectionPanel {
    pub title: String,
    pub series: Vec<PointSeries>,
}

/// Detection D against false rejection FR of one task: a grid of panels (`columns` wide),
/// the diagonal D = FR, one colour per series label and one marker shape per rule.
pub struct DetectionFigure {
    pub title: String,
    pub columns: usize,
    pub panels: Vec<DetectionPanel>,
    /// (legend label, shape) of each rule.
    pub rules: Vec<(String, MarkerShape)>,
}

const PANEL: u32 = 470;
const DIAGONAL_COLOR: RGBColor = RGBColor(110, 110, 110);

impl DetectionFigure {
    fn series_labels(&self) -> Vec<&str> {
        let mut labels: Vec<&str> = Vec::new();
        for s in self.panels.iter().flat_map(|p| &p.series) {
            if !labels.contains(&s.label.as_str()) {
                labels.push(&s.label);
            }
        }
        labels
    }

    fn color(&self, label: &str) -> RGBColor {
        let i = self
            .series_labels()
            .iter()
            .position(|l| *l == label)
            .unwrap_or(0);
        series_color(i)
    }

    fn grid(&self) -> (usize, usize) {
        let cols = self.columns.clamp(1, self.panels.len().max(1));
        (cols, self.panels.len().max(1).div_ceil(cols))
    }

    fn legend_columns(&self) -> usize {
        if self.grid().0 >= 2 {
            3
        } else {
            2
        }
    }

    fn legend_entries(&self) -> Vec<LegendEntry> {
        let mut v: Vec<LegendEntry> = self
            .series_labels()
            .into_iter()
            .map(|l| LegendEntry {
                label: l.to_string(),
                color: self.color(l),
                mark: Mark::Bar,
            })
            .collect();
        v.extend(self.rules.iter().map(|(label, shape)| LegendEntry {
            label: label.clone(),
            color: NATIVE_COLOR,
            mark: Mark::Marker(*shape),
        }));
        v.push(LegendEntry {
            label: "D = FR (rejection blind to coverage)".into(),
            color: DIAGONAL_COLOR,
            mark: Mark::Dashed,
        });
        v
    }
}

/// The i-th series colour: the palette, then evenly spread hues.
fn series_color(i: usize) -> RGBColor {
    if i < PALETTE.len() {
        return PALETTE[i];
    }
    let h = ((i - PALETTE.len()) as f64 * 0.618_034).fract();
    let hsl = HSLColor(h, 0.65, 0.42);
    let (r, g, b) = hsl.rgb();
    RGBColor(r, g, b)
}

fn detection_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &DetectionPanel,
    color: &dyn Fn(&str) -> RGBColor,
) -> PlotResult<DB> {
    let body = titled(area, &panel.title, 17, 30)?;
    let mut chart = ChartBuilder::on(&body)
        .margin(10)
        .margin_right(20)
        .x_label_area_size(46)
        .y_label_area_size(54)
        .build_cartesian_2d(0.0..1.0, 0.0..1.0)?;
    draw_unit_mesh(
        &mut chart,
        "False rejection FR (present sets)",
        "Detection D (absent sets)",
        14,
    )?;
    chart.draw_series(DashedLineSeries::new(
        [(0.0, 0.0), (1.0, 1.0)],
        6,
        4,
        DIAGONAL_COLOR.stroke_width(1),
    ))?;
    let plot = chart.plotting_area();
    for s in &panel.series {
        let c = color(&s.label);
        for p in &s.points {
            draw_marker(plot, p.shape, (p.false_rejection, p.detection), 5, c)?;
        }
    }
    Ok(())
}

impl Figure for DetectionFigure {
    fn size(&self) -> (u32, u32) {
        let (cols, rows) = self.grid();
        let rows_l = self.legend_entries().len().div_ceil(self.legend_columns());
        (
            (PANEL * cols as u32).max(600),
            34 + PANEL * rows as u32 + legend_height(rows_l),
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> PlotResult<DB> {
        let body = titled(root, &self.title, 20, 34)?;
        let entries = self.legend_entries();
        let columns = self.legend_columns();
        let (_, h) = body.dim_in_pixel();
        let (plots, legend_area) =
            body.split_vertically(h - legend_height(entries.len().div_ceil(columns)));
        let (cols, rows) = self.grid();
        let (pw, _) = plots.dim_in_pixel();
        let (plots, _) = plots.split_horizontally((PANEL * cols as u32).min(pw));
        let areas = plots.split_evenly((rows, cols));
        let color = |l: &str| self.color(l);
        for (panel, area) in self.panels.iter().zip(&areas) {
            detection_panel(area, panel, &color)?;
        }
        legend(&legend_area, &entries, columns, 60)
    }
}

// ---------------------------------------------------------------------------------------------
// Rendering.

/// Why PNGs cannot be drawn here (no usable system font), or `None` when they can.
pub fn png_font_problem() -> Option<String> {
    let probe = catch_unwind(|| -> Result<(), String> {
        let font = FontDesc::new(FontFamily::SansSerif, 14.0, FontStyle::Normal);
        font.layout_box("Ag0.5%").map_err(|e| e.to_string())?;
        let mut buf = vec![255u8; 3 * 64 * 24];
        let root = BitMapBackend::with_buffer(&mut buf, (64, 24)).into_drawing_area();
        root.draw_text("Ag0", &TextStyle::from(font), (1, 1))
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
        Ok(())
    });
    let advice = "PNG figures need a TrueType font found through fontconfig \
                  (on Debian/Ubuntu: apt-get install fonts-dejavu-core); \
                  the SVG figures were written";
    match probe {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(format!("{advice} (font error: {e})")),
        Err(_) => Some(format!("{advice} (the font library panicked)")),
    }
}

/// The files written for one figure.
#[derive(Debug, Clone)]
pub struct Written {
    pub svg: PathBuf,
    pub png: Option<PathBuf>,
    /// Why the PNG is missing although PNGs were requested.
    pub png_error: Option<String>,
}

fn plot_err<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow!("{e}")
}

/// `fig` as an SVG document (what the report writes and the live page shows).
pub fn svg_string<F: Figure>(fig: &F) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, fig.size()).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        fig.draw(&root).map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

/// Draws `fig` as `dir/stem.svg` and, when `png`, `dir/stem.png`. A failed PNG is reported
/// in [`Written::png_error`] (and its partial file removed); a failed SVG is an error.
pub fn render<F: Figure>(fig: &F, dir: &Path, stem: &str, png: bool) -> anyhow::Result<Written> {
    let size = fig.size();
    let svg_path = dir.join(format!("{stem}.svg"));
    let svg = svg_string(fig).with_context(|| format!("drawing {}", svg_path.display()))?;
    fs::write(&svg_path, svg).with_context(|| format!("writing {}", svg_path.display()))?;
    let mut written = Written {
        svg: svg_path,
        png: None,
        png_error: None,
    };
    if png {
        let png_path = dir.join(format!("{stem}.png"));
        let result = catch_unwind(AssertUnwindSafe(|| -> anyhow::Result<()> {
            let root = BitMapBackend::new(&png_path, size).into_drawing_area();
            root.fill(&WHITE).map_err(plot_err)?;
            fig.draw(&root).map_err(plot_err)?;
            root.present().map_err(plot_err)?;
            Ok(())
        }));
        match result {
            Ok(Ok(())) => written.png = Some(png_path),
            Ok(Err(e)) => {
                let _ = fs::remove_file(&png_path);
                written.png_error = Some(format!("{}: {e:#}", png_path.display()));
            }
            Err(_) => {
                let _ = fs::remove_file(&png_path);
                written.png_error =
                    Some(format!("{}: the PNG backend panicked", png_path.display()));
            }
        }
    }
    Ok(written)
}

/// A file-name-safe slug of the parts, joined by `_`.
pub fn slug(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| {
            let mut s = String::new();
            for c in p.chars() {
                if c.is_ascii_alphanumeric() {
                    s.push(c.to_ascii_lowercase());
                } else if !s.ends_with('-') {
                    s.push('-');
                }
            }
            let s = s.trim_matches('-').to_string();
            if s.is_empty() {
                "x".to_string()
            } else {
                s
            }
        })
        .collect::<Vec<_>>()
        .join("_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_precision_keeps_ties_together() {
        let pairs = [(0.9, true), (0.5, true), (0.5, false), (0.1, false)];
        let c = coverage_precision(&pairs);
        assert_eq!(c, vec![(0.25, 1.0), (0.75, 2.0 / 3.0), (1.0, 0.5)]);
        assert!(coverage_precision(&[]).is_empty());
    }

    #[test]
    fn runs_split_at_undefined_points() {
        let p = |length, value: Option<f64>| LengthPoint {
            length,
            value,
            ci: None,
        };
        let runs = defined_runs(
            &[
                p(3, Some(0.5)),
                p(4, None),
                p(5, Some(0.1)),
                p(6, Some(0.2)),
            ],
            0.0,
        );
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].len(), 1);
        assert_eq!(runs[1][1], (6.0, 20.0, 20.0, 20.0));
    }

    #[test]
    fn slugs_are_file_safe() {
        assert_eq!(
            slug(&["SmolLM2 135M", "lexical", "Serial/Full/code"]),
            "smollm2-135m_lexical_serial-full-code"
        );
        assert_eq!(slug(&["//"]), "x");
    }

    #[test]
    fn svg_needs_no_font_measurement() {
        let fig = CoverageFigure {
            title: "t".into(),
            curves: vec![Curve {
                label: "a".into(),
                points: vec![(0.5, 1.0), (1.0, 0.5)],
                dashed: false,
            }],
            prevalence: Some(0.5),
        };
        let dir = tempdir();
        let w = render(&fig, &dir, "cov", false).unwrap();
        let text = fs::read_to_string(&w.svg).unwrap();
        assert!(text.starts_with("<svg"));
        assert!(w.png.is_none());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn detection_figure_draws_every_point() {
        let point = |shape, fr, d| RulePoint {
            shape,
            false_rejection: fr,
            detection: d,
        };
        let fig = DetectionFigure {
            title: "t".into(),
            columns: 2,
            panels: vec![DetectionPanel {
                title: "m · natural".into(),
                series: (0..10)
                    .map(|i| PointSeries {
                        label: format!("k = {i}"),
                        points: [
                            MarkerShape::Circle,
                            MarkerShape::Square,
                            MarkerShape::Triangle,
                            MarkerShape::Diamond,
                            MarkerShape::Cross,
                        ]
                        .iter()
                        .map(|&s| point(s, 0.1, 0.9))
                        .collect(),
                    })
                    .collect(),
            }],
            rules: vec![("native".into(), MarkerShape::Circle)],
        };
        assert_eq!(fig.grid(), (1, 1));
        assert_ne!(series_color(8), series_color(9));
        let dir = std::env::temp_dir().join(format!("c2s-report-det-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let w = render(&fig, &dir, "det", false).unwrap();
        let text = fs::read_to_string(&w.svg).unwrap();
        assert!(text.contains("Detection D") && text.contains("k = 9"));
        let _ = fs::remove_dir_all(&dir);
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("c2s-report-test-{}", std::process::id()));
        fs::create_dir_all(&d).unwrap();
        d
    }
}
