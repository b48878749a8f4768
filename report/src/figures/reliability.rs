//! Reliability diagrams (ten equal-width bins) of the confidence composites, one panel per
//! score kind, for one (model, domain, arm).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use c2s_stats::{Reliability, ScoreKind};

use crate::tables::score_label;

use super::{
    draw_unit_mesh, legend, legend_height, text_style, titled, Figure, LegendEntry, Mark,
    PlotResult, PALETTE,
};

/// Reliability diagrams of one (model, domain, arm), one panel per score kind.
pub struct ReliabilityFigure {
    /// Figure title above the panels.
    pub title: String,
    /// (score, reliability, n)
    pub panels: Vec<(ScoreKind, Reliability, u64)>,
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
            let title = format!("{} (n = {n}, ECE {ece})", score_label(*kind));
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
