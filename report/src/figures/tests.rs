//! Unit tests of the report figures: coverage–precision ties, by-length runs, slugs, and SVGs
//! (coverage, detection) drawn without font measurement.

use std::fs;
use std::path::PathBuf;

use super::by_length::defined_runs;
use super::candidate_coverage::series_color;
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
