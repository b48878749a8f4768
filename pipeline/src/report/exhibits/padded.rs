//! Table D9 from `config/panels/padded.toml` (byte match) and `padded-tokens.toml` (token
//! match): per panel the pairing Padded vs Indexed gives the counts and the exact McNemar p,
//! Holm-corrected within the panel's family; the panel's Indexed − Padded unit contrast of the
//! domain gives the difference with its item-bootstrap interval.

use c2s_stats::{ContrastRow, MetricRow};
use serde::Serialize;

use super::engine::Frame;
use super::{paper_domain, PanelRun};
use crate::report::tables::{Group, MetricIndex};

/// The match of each panel.
pub const PANELS: [(&str, &str); 2] = [("padded", "bytes"), ("padded-tokens", "tokens")];

/// One of our rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The panel's length match, `bytes` or `tokens` ([`PANELS`]).
    pub matched: &'static str,
    /// Correct of n: Indexed, Padded.
    pub indexed: (u64, u64),
    /// PaddedCopy's (correct, n); (0, 0) when missing.
    pub padded: (u64, u64),
    /// The Indexed − Padded unit contrast (a fraction) with its item interval.
    pub difference: Option<(f64, Option<f64>, Option<f64>)>,
    /// The pairing's exact McNemar p, Holm-corrected within its panel's family.
    pub holm_p: Option<f64>,
}

/// A paired group's `metric` as (correct, n); (0, 0) when missing.
pub fn count_of(index: &MetricIndex, g: &Group, metric: &str) -> (u64, u64) {
    (index.get(g, None, metric))
        .and_then(|r| Some((r.numerator?, r.denominator?)))
        .unwrap_or((0, 0))
}

/// A unit contrast's difference (a fraction) with its item interval; `None` without one.
pub fn contrast_difference(c: &ContrastRow) -> Option<(f64, Option<f64>, Option<f64>)> {
    let e = &c.estimate;
    e.difference.map(|d| (d, e.ci_low, e.ci_high))
}

/// Our rows of one panel: its paired groups (Padded vs Indexed) and contrasts.
pub fn our_rows(
    matched: &'static str,
    rows: &[MetricRow],
    contrasts: &[ContrastRow],
) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    index
        .paired_groups()
        .into_iter()
        .map(|g| {
            let contrast = contrasts
                .iter()
                .find(|c| c.model == g.model && c.contrast.ends_with(&format!(", {}", g.domain)));
            OurRow {
                model: g.model.clone(),
                domain: paper_domain(&g.domain).to_string(),
                matched,
                indexed: count_of(&index, &g, "serial_em"),
                padded: count_of(&index, &g, "native_em"),
                difference: contrast.and_then(contrast_difference),
                holm_p: index.value(&g, None, "mcnemar_p_holm"),
            }
        })
        .collect()
}

/// Table D9 from the `padded` and `padded-tokens` panels' runs (either may be absent).
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let mut ours = Vec::new();
    for (panel, matched) in PANELS {
        if let Some(run) = runs.iter().find(|r| r.panel == panel) {
            let run = run.load()?;
            let (contrasts, _) = run.contrast_tables()?;
            ours.extend(our_rows(matched, &run.metric_rows()?, &contrasts));
        }
    }
    Ok(Frame::new().rows("ours", &ours))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::engine::sig3;
    use crate::report::exhibits::testing::{laid_out, paired_rows};

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
        let ours = our_rows("bytes", &rows, &[contrast]);
        let md = laid_out("tableD9", Frame::new().rows("ours", &ours), "Jev");
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
