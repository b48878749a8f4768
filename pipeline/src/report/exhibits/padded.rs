//! Table D9: "Indexed copying improves fidelity over nonindexed length controls. Byte matching
//! fixes serialized-state length; token matching uses Qwen's rendered prompt at a common prefix.
//! Each model/domain has 48 parents. Paired differences have 95% item intervals, with separate
//! Holm correction for byte and token comparisons."
//!
//! Columns as printed: Model, Domain, Match, Indexed, Padded, Difference [95% CI], Holm p.
//! Ours come from `config/panels/padded.toml` (bytes) and `padded-tokens.toml` (tokens): the
//! counts and the Holm-adjusted exact McNemar p of each panel's pairing Padded vs Indexed
//! (the paper's p-values are McNemar's: Jev math's 8.94e-08 is 3 × 2 × 2⁻²⁶ for 26 discordant
//! items, the Holm step of four tests), and the difference with its item-bootstrap interval
//! from the panel's Indexed − Padded unit contrast of that domain.

use c2s_stats::{ContrastRow, MetricRow};
use serde::Serialize;

use super::engine::Frame;
use super::{paper_domain, PanelRun};
use crate::report::tables::MetricIndex;

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
    /// The Indexed − Padded unit contrast as a fraction with its item interval; `None`
    /// without the contrast.
    pub difference: Option<(f64, Option<f64>, Option<f64>)>,
    /// The pairing's exact McNemar p, Holm-corrected within its panel's family.
    pub holm_p: Option<f64>,
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
            let count = |m: &str| {
                index
                    .get(&g, None, m)
                    .and_then(|r| Some((r.numerator?, r.denominator?)))
                    .unwrap_or((0, 0))
            };
            let contrast = contrasts
                .iter()
                .find(|c| c.model == g.model && c.contrast.ends_with(&format!(", {}", g.domain)));
            OurRow {
                model: g.model.clone(),
                domain: paper_domain(&g.domain).to_string(),
                matched,
                indexed: count("serial_em"),
                padded: count("native_em"),
                difference: contrast.and_then(|c| {
                    c.estimate
                        .difference
                        .map(|d| (d, c.estimate.ci_low, c.estimate.ci_high))
                }),
                holm_p: index.value(&g, None, "mcnemar_p_holm"),
            }
        })
        .collect()
}

/// Table D9 from the `padded` and `padded-tokens` panels' runs (either may be absent).
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let mut ours = Vec::new();
    for (panel, matched) in PANELS {
        let Some(run) = runs.iter().find(|r| r.panel == panel) else {
            continue;
        };
        let run = run.load()?;
        let (contrasts, _) = run.contrast_tables()?;
        ours.extend(our_rows(matched, &run.metric_rows()?, &contrasts));
    }
    Ok(Frame::new().rows("ours", &ours))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::engine::sig3;
    use crate::report::exhibits::testing::{laid_out, paired_rows};

    /// The printed Holm p-values are exact McNemar p-values with every discordant item on one
    /// side, Holm-stepped over the byte family's four tests: Jev lexical's 39 discordant items
    /// rank first (4 × 2 × 2⁻³⁹ = 1.46e-11), Jev math's 26 second (3 × 2 × 2⁻²⁶ = 8.94e-08).
    #[test]
    fn the_papers_p_values_are_holm_stepped_mcnemar() {
        let mcnemar = |b: i32| 2.0 * 0.5f64.powi(b);
        assert!((4.0 * mcnemar(39) / 1.46e-11 - 1.0).abs() < 0.01);
        assert!((3.0 * mcnemar(26) / 8.94e-08 - 1.0).abs() < 0.01);
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
                    "lexical",
                    None,
                    "Native/code vs Serial/Full/code",
                    "mcnemar_p_holm",
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
