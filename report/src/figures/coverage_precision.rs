//! Coverage–precision curves of the confidence composites beside the negative-length ranking
//! baseline, for one (model, domain, arm).

use plotters::coord::Shift;
use plotters::prelude::*;

use c2s_records::Trajectory;
use c2s_stats::ScoreKind;

use crate::tables::score_label;

use super::{
    draw_unit_mesh, legend, legend_height, titled, Figure, LegendEntry, Mark, PlotResult,
    NATIVE_COLOR, PALETTE,
};

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

/// One ranking's coverage–precision curve.
pub struct Curve {
    /// Legend label (a confidence composite or the −length baseline).
    pub label: String,
    /// (coverage, precision) points as fractions, from [`coverage_precision`].
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (the −length ranking baseline) rather than solid.
    pub dashed: bool,
}

/// Coverage–precision of one (model, domain, arm).
pub struct CoverageFigure {
    /// Figure title.
    pub title: String,
    /// One curve per confidence composite, then the −length baseline.
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
            label: format!("confidence: {}", score_label(kind)),
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
