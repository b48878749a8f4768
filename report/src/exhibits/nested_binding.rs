//! Table D10 (D.11) from `config/panels/nested-binding.toml`: per evidence level the pairing
//! opaque vs literal (readable aligned) names gives the counts and the exact McNemar p,
//! Holm-corrected in the family "D.11 binding" (the rows declared in exhibits/tableD10.toml,
//! `[[sources]]`); the `literal - opaque` unit contrast gives the difference with its item
//! interval, which this module reads.

use std::collections::BTreeMap;

use c2s_stats::ContrastRow;

use super::engine::Frame;
use super::item_intervals::Interval;
use super::padded::contrast_difference;
use super::{run_of, PanelRun};

/// The contrasts' differences by `MODEL CONTRAST` (each pair's first).
pub fn differences(contrasts: &[ContrastRow]) -> BTreeMap<String, Option<Interval>> {
    let mut out = BTreeMap::new();
    for c in contrasts {
        (out.entry(format!("{} {}", c.model, c.contrast)))
            .or_insert_with(|| contrast_difference(c));
    }
    out
}

/// Table D10's differences (`differences`) from the `nested-binding` panel's run.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let (contrasts, _) = run_of(runs, "nested-binding")?.load()?.contrast_tables()?;
    Ok(Frame::new().var("differences", differences(&contrasts)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_stats::MetricRow;

    use crate::exhibits::testing::{declared, paired_rows, panel_metrics};

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        // The evidence is the opaque arm's last part; a pairing without literal names is no row.
        let mut rows: Vec<MetricRow> = paired_rows("m", "arithmetic", [10, 2, 20, 16], (0.0, 1.0))
            .into_iter()
            .map(|r| MetricRow {
                comparison:
                    "GoldCopy/Full/code/T0/raw vs GoldCopy/Full/code/T0/raw/names-readable_aligned"
                        .into(),
                ..r
            })
            .collect();
        rows.extend(paired_rows("m", "lexical", [1, 1, 1, 1], (0.0, 1.0)));
        let frame = Frame::new().var("differences", differences(&[]));
        let panel = panel_metrics("nested-binding", rows);
        let md = declared("tableD10", &[panel], frame, "Qwen3.5-27B");
        for want in [
            "| Model | Domain | Evidence | Literal | Opaque | Difference [95% CI] | Holm p |",
            "| m | math | raw | 30/48 | 12/48 | – | – |",
            "| Qwen3.5-27B | math | raw | 41/48 | 14/48 | 56.2 [41.7, 68.8] | 1.80e-7 |",
            "| m | math | raw | Qwen3.5-27B math raw | −22.9 | −4.2 | – |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert!(!md.contains("| m | lexical |"), "{md}");
    }
}
