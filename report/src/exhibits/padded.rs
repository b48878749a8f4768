//! Table D9 from `config/panels/padded.toml` (byte match) and `padded-tokens.toml` (token
//! match): per panel the pairing Padded vs Indexed gives the counts and the exact McNemar p,
//! Holm-corrected within the panel's family (the rows declared in exhibits/tableD9.toml,
//! `[[sources]]`); the panel's Indexed − Padded unit contrast of the domain gives the
//! difference with its item-bootstrap interval, which this module reads.

use std::collections::BTreeMap;

use c2s_stats::ContrastRow;

use super::engine::Frame;
use super::item_intervals::Interval;
use super::PanelRun;

/// A unit contrast's difference (a fraction) with its item interval; `None` without one.
pub fn contrast_difference(c: &ContrastRow) -> Option<Interval> {
    let e = &c.estimate;
    e.difference.map(|d| (d, e.ci_low, e.ci_high))
}

/// The differences of one panel's contrasts by `PANEL MODEL DOMAIN` (the bank's domain): each
/// model's first contrast whose name ends with `, DOMAIN`.
pub fn differences(panel: &str, contrasts: &[ContrastRow]) -> BTreeMap<String, Option<Interval>> {
    let mut out = BTreeMap::new();
    for c in contrasts {
        if let Some((_, domain)) = c.contrast.rsplit_once(", ") {
            (out.entry(format!("{panel} {} {domain}", c.model)))
                .or_insert_with(|| contrast_difference(c));
        }
    }
    out
}

/// Table D9's differences (`differences`) from the `padded` and `padded-tokens` panels' runs
/// (either may be absent).
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let mut all = BTreeMap::new();
    for run in runs {
        let (contrasts, _) = run.load()?.contrast_tables()?;
        all.extend(differences(run.panel, &contrasts));
    }
    Ok(Frame::new().var("differences", all))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::engine::sig3;
    use c2s_stats::MetricRow;

    use crate::exhibits::testing::{declared, paired_rows, panel_metrics};

    /// Holm p-values print with three significant digits, as Table D9 prints them.
    #[test]
    fn holm_p_prints_with_three_significant_digits() {
        assert_eq!(sig3(Some(8.94e-08)), "8.94e-8");
        assert_eq!(sig3(Some(0.00146)), "0.00146");
        assert_eq!(sig3(Some(0.105)), "0.105");
        assert_eq!(sig3(Some(1.0)), "1.00");
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let rows: Vec<MetricRow> = paired_rows("m", "lexical", [10, 2, 30, 6], (0.0, 1.0))
            .into_iter()
            .chain([MetricRow {
                value: Some(1e-7),
                ..MetricRow::empty(
                    0,
                    "m",
                    Some(c2s_records::Domain::Lexical),
                    None,
                    "Native/code vs Serial/Full/code",
                    c2s_records::Metric::McnemarPHolm,
                )
            }])
            .collect();
        let contrast = ContrastRow {
            model: "m".into(),
            contrast: "indexed - padded, lexical".into(),
            family: None,
            estimate: c2s_stats::ContrastEstimate {
                units: 48,
                incomplete_units: 0,
                compared_mean: Some(40.0 / 48.0),
                reference_mean: Some(12.0 / 48.0),
                difference: Some(28.0 / 48.0),
                ci_low: Some(0.45),
                ci_high: Some(0.7),
                sign_p: Some(1e-8),
            },
            sign_p_holm: Some(1e-8),
        };
        let frame = Frame::new().var("differences", differences("padded", &[contrast]));
        let md = declared("tableD9", &[panel_metrics("padded", rows)], frame, "Jev");
        for want in [
            "| Model | Domain | Match | Indexed | Padded | Difference [95% CI] | Holm p |",
            "| m | lexical | bytes | 40/48 | 12/48 | 58.3 [45.0, 70.0] | 1.00e-7 |",
            "| Qwen3.5-27B | lexical | tokens | 47/48 | 34/48 | 27.1 [16.7, 37.5] | 4.88e-4 |",
            "| m | lexical | bytes | Jev lexical bytes | −14.6 | +8.3 | −22.9 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
