//! Native EM (left panel) and SCR (right panel) by target length, with interval bands, for
//! one (model, domain).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    legend, legend_height, text_style, titled, Figure, LegendEntry, Mark, PlotResult, NATIVE_COLOR,
    PALETTE,
};

/// One point of a by-length series: the value and its interval, `None` when undefined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LengthPoint {
    /// Target length L (the x position).
    pub length: u32,
    /// The rate as a fraction in [0, 1] (plotted in percent); `None` leaves a gap.
    pub value: Option<f64>,
    /// Interval (low, high) as fractions; `None` collapses the band to the value.
    pub ci: Option<(f64, f64)>,
}

/// One line of a by-length panel: a Native arm's EM or one comparison's SCR.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend label (e.g. `Native EM`, `SCR Native vs Serial`).
    pub label: String,
    /// One point per length, in the figure's length order.
    pub points: Vec<LengthPoint>,
}

/// Native EM (left panel) and SCR (right panel) by length for one (model, domain).
pub struct ByLengthFigure {
    /// Figure title, `model · domain` in the run report.
    pub title: String,
    /// Target lengths on the x axis, ascending.
    pub lengths: Vec<u32>,
    /// Left panel: Native EM, one series per Native arm.
    pub native: Vec<Series>,
    /// Right panel: SCR, one series per paired comparison.
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
pub(super) fn defined_runs(points: &[LengthPoint], dodge: f64) -> Vec<Vec<(f64, f64, f64, f64)>> {
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
