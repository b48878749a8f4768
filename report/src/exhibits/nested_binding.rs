//! Table D10 (D.11) from `config/panels/nested-binding.toml`: per evidence level the pairing
//! opaque vs literal (readable aligned) names gives the counts and the exact McNemar p,
//! Holm-corrected in the family "D.11 binding"; the `literal - opaque` unit contrast gives the
//! difference with its item interval.

use c2s_stats::{ContrastRow, MetricRow};
use serde::Serialize;

use super::engine::Frame;
use super::padded::{contrast_difference, count_of};
use super::{paper_domain, run_of, PanelRun};
use crate::tables::MetricIndex;

/// One of our rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The evidence level of the pairing (`raw`, `indexed`), as the arm label spells it.
    pub evidence: String,
    /// Literal (readable aligned) names: (correct, parents); (0, 0) when missing.
    pub literal: (u64, u64),
    /// Opaque names: (correct, parents); (0, 0) when missing.
    pub opaque: (u64, u64),
    /// The `literal - opaque` contrast (a fraction) with its item interval.
    pub difference: Option<(f64, Option<f64>, Option<f64>)>,
    /// The pairing's exact McNemar p, Holm-corrected in the family "D.11 binding".
    pub holm_p: Option<f64>,
}

/// The evidence level of a pairing `GoldCopy/Full/code/T0/EVIDENCE vs …/names-readable_aligned`.
fn evidence_of(comparison: &str) -> Option<&str> {
    let (opaque, literal) = comparison.split_once(" vs ")?;
    literal
        .ends_with("/names-readable_aligned")
        .then(|| opaque.rsplit('/').next())
        .flatten()
}

/// Our rows: one per opaque-vs-literal pairing (model, domain, evidence), raw rows first.
pub fn our_rows(rows: &[MetricRow], contrasts: &[ContrastRow]) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    let mut out: Vec<OurRow> = index
        .paired_groups()
        .into_iter()
        .filter_map(|g| {
            let evidence = evidence_of(&g.comparison)?.to_string();
            let name = format!("literal - opaque, {evidence}, {}", g.domain);
            let contrast = contrasts
                .iter()
                .find(|c| c.model == g.model && c.contrast == name);
            Some(OurRow {
                model: g.model.clone(),
                domain: paper_domain(&g.domain).to_string(),
                literal: count_of(&index, &g, "serial_em"),
                opaque: count_of(&index, &g, "native_em"),
                difference: contrast.and_then(contrast_difference),
                holm_p: index.value(&g, None, "mcnemar_p_holm"),
                evidence,
            })
        })
        .collect();
    out.sort_by_key(|r| (r.model.clone(), r.evidence != "raw", r.domain.clone()));
    out
}

/// Table D10's rows from the `nested-binding` panel's run.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "nested-binding")?.load()?;
    let (contrasts, _) = run.contrast_tables()?;
    let ours = our_rows(&run.metric_rows()?, &contrasts);
    Ok(Frame::new().rows("ours", &ours))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{laid_out, paired_rows};

    #[test]
    fn the_evidence_is_the_opaque_arms_last_part() {
        assert_eq!(
            evidence_of(
                "GoldCopy/Full/code/T0/raw vs GoldCopy/Full/code/T0/raw/names-readable_aligned"
            ),
            Some("raw")
        );
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let rows: Vec<MetricRow> = paired_rows("m", "arithmetic", [10, 2, 20, 16], (0.0, 1.0))
            .into_iter()
            .map(|r| MetricRow {
                comparison:
                    "GoldCopy/Full/code/T0/raw vs GoldCopy/Full/code/T0/raw/names-readable_aligned"
                        .into(),
                ..r
            })
            .collect();
        let ours = our_rows(&rows, &[]);
        let md = laid_out("tableD10", Frame::new().rows("ours", &ours), "Qwen3.5-27B");
        for want in [
            "| Model | Domain | Evidence | Literal | Opaque | Difference [95% CI] | Holm p |",
            "| m | math | raw | 30/48 | 12/48 | – | – |",
            "| Qwen3.5-27B | math | raw | 41/48 | 14/48 | 56.2 [41.7, 68.8] | 1.80e-7 |",
            "| m | math | raw | Qwen3.5-27B math raw | −22.9 | −4.2 | – |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
