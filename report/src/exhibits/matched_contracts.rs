//! Figure 7's numbers (B.6) from `config/panels/matched-contracts.toml`: per model, domain and
//! evidence (Raw, Indexed, Direct) the accuracy and validity of the code and the character
//! contract's arms, and the panel's `character - code` unit contrast (no Holm family). The
//! paper's (a, b) labels are read as three code bars then three character bars, evidence from
//! Raw to Direct: of the six groupings that satisfy the caption's claims, the only one with
//! every code cell 100% valid, accuracy rising Raw < Indexed < Direct and the legend's order.
//! The counts are declared in exhibits/figure7.toml (`[[sources]]`: sums over the six arms'
//! trajectories); the code gives the panel's contrasts, which the spec joins with them.

use super::engine::Frame;
use super::{run_of, PanelRun};

/// Figure 7's contrasts (`contrasts`): the `matched-contracts` panel's unit contrasts, each
/// named `character - code, EVIDENCE, DOMAIN`.
pub fn document(runs: &[PanelRun]) -> anyhow::Result<Frame> {
    let run = run_of(runs, "matched-contracts")?.load()?;
    let (contrasts, _) = run.contrast_tables()?;
    Ok(Frame::new().rows("contrasts", &contrasts))
}

#[cfg(test)]
mod tests {
    use c2s_records::Trajectory;
    use c2s_stats::ContrastRow;

    use super::*;
    use crate::exhibits::sources::PanelRecords;
    use crate::exhibits::testing::{declared, trajectory};

    /// `n` trajectories of `arm` on lexical items, the first `correct` correct and the first
    /// `valid` valid.
    fn arm(arm: &str, correct: usize, valid: usize, n: usize) -> Vec<Trajectory> {
        (0..n)
            .map(|i| Trajectory {
                valid: i < valid,
                ..trajectory(&format!("i{i}"), "lexical", 3, arm, i < correct)
            })
            .collect()
    }

    #[test]
    fn the_layout_has_the_figures_numbers_and_differences() {
        let trajectories = [
            arm("GoldCopy/Full/gencode/T0/indexed", 30, 60, 60),
            arm("GoldCopy/Full/char/T0/indexed", 45, 57, 60),
        ]
        .concat();
        let panel = PanelRecords {
            panel: "matched-contracts".into(),
            metric_rows: vec![],
            trajectories,
        };
        let frame = Frame::new().rows::<ContrastRow>("contrasts", &[]);
        let md = declared("figure7", &[panel], frame, "Jev");
        for want in [
            "| Model | Domain | Evidence | Code | Character | Character − code, pp [95% CI] | sign p |",
            "| m | lexical | indexed | 50.0 / 100.0 | 75.0 / 95.0 | – | – |",
            "| lexical | direct | 98.3 / 100.0 | 85.0 / 96.7 |",
            "| m | lexical | indexed | +8.3 | −5.0 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
