//! Candidate coverage: detection against false rejection of the native and calibrated
//! rejection rules for one task, one panel per model and name variant.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    draw_marker, draw_unit_mesh, legend, legend_height, titled, Figure, LegendEntry, Mark,
    MarkerShape, PlotResult, NATIVE_COLOR, PALETTE,
};

/// One rejection rule's tested operating point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RulePoint {
    /// The marker of the rule this point tests (keyed in the legend by `rules`).
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
    /// One point per rule tested for this series.
    pub points: Vec<RulePoint>,
}

/// One panel, e.g. one (model, names).
#[derive(Debug, Clone)]
pub struct DetectionPanel {
    /// Panel title above the plot.
    pub title: String,
    /// The marker series drawn in this panel.
    pub series: Vec<PointSeries>,
}

/// Detection D against false rejection FR of one task: a grid of panels (`columns` wide),
/// the diagonal D = FR, one colour per series label and one marker shape per rule.
pub struct DetectionFigure {
    /// Figure title above the panel grid.
    pub title: String,
    /// Panels per row of the grid (at least 1, at most the number of panels).
    pub columns: usize,
    /// The panels, filled row by row.
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

    pub(super) fn grid(&self) -> (usize, usize) {
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
pub(super) fn series_color(i: usize) -> RGBColor {
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
