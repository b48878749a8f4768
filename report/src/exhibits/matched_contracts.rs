//! Figure 7's numbers (B.6) from `config/panels/matched-contracts.toml`: per model, domain and
//! evidence (Raw, Indexed, Direct) the accuracy and validity of the code and the character
//! contract's arms, and the panel's `character - code` unit contrast (no Holm family). The
//! paper's (a, b) labels are read as three code bars then three character bars, evidence from
//! Raw to Direct: of the six groupings that satisfy the caption's claims, the only one with
//! every code cell 100% valid, accuracy rising Raw < Indexed < Direct and the legend's order.

use std::collections::BTreeMap;

use c2s_records::Trajectory;
use c2s_stats::ContrastRow;
use serde::Serialize;

use super::engine::Frame;
use super::padded::contrast_difference;
use super::{paper_domain, run_of, PanelRun};

/// The evidence presentations in the figure's order, as arm labels spell them.
pub const EVIDENCE: [&str; 3] = ["raw", "indexed", "direct"];

/// The arm of an evidence level and contract.
pub fn arm(evidence: &str, character: bool) -> String {
    let contract = if character { "char" } else { "gencode" };
    format!("GoldCopy/Full/{contract}/T0/{evidence}")
}

/// Correct, valid and all trajectories of one arm.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Trajectories whose generated code or character is correct.
    pub correct: u64,
    /// Trajectories whose response meets the contract's format (malformed ones fail).
    pub valid: u64,
    /// Trajectories of the arm.
    pub n: u64,
}

/// Per (model, domain, evidence): code and character counts.
pub type Cells = BTreeMap<(String, String, usize), [Counts; 2]>;

/// The code (`gencode`) and character (`char`) counts of every evidence level.
pub fn cells(trajectories: &[Trajectory]) -> Cells {
    let mut out = Cells::new();
    for t in trajectories {
        for (e, evidence) in EVIDENCE.iter().enumerate() {
            for (c, character) in [false, true].into_iter().enumerate() {
                if t.arm != arm(evidence, character) {
                    continue;
                }
                let counts = &mut out
                    .entry((t.model.clone(), t.domain.as_str().to_string(), e))
                    .or_default()[c];
                counts.n += 1;
                counts.correct += u64::from(t.correct);
                counts.valid += u64::from(t.valid);
            }
        }
    }
    out
}

/// One of our rows: a (model, domain, evidence)'s counts and `character - code` contrast.
#[derive(Debug, Clone, Serialize)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The evidence presentation ([`EVIDENCE`]).
    pub evidence: &'static str,
    /// The code contract's counts.
    pub code: Counts,
    /// The character contract's counts.
    pub character: Counts,
    /// Character − code accuracy (a fraction) with its 95% interval; `None` without one.
    pub difference: Option<(f64, Option<f64>, Option<f64>)>,
    /// The contrast's exact sign-flip p.
    pub sign_p: Option<f64>,
}

/// Our rows: each cell with its `character - code, EVIDENCE, DOMAIN` contrast.
pub fn our_rows(cells: &Cells, contrasts: &[ContrastRow]) -> Vec<OurRow> {
    (cells.iter())
        .map(|((model, domain, e), [code, character])| {
            let evidence = EVIDENCE[*e];
            let name = format!("character - code, {evidence}, {domain}");
            let c = contrasts
                .iter()
                .find(|c| c.model == *model && c.contrast == name);
            OurRow {
                model: model.clone(),
                domain: paper_domain(domain).to_string(),
                evidence,
                code: *code,
                character: *character,
                difference: c.and_then(contrast_difference),
                sign_p: c.and_then(|c| c.estimate.sign_p),
            }
        })
        .collect()
}

/// Figure 7's numbers from the `matched-contracts` panel's run.
pub fn document(runs: &[PanelRun]) -> anyhow::Result<Frame> {
    let run = run_of(runs, "matched-contracts")?.load()?;
    let (contrasts, _) = run.contrast_tables()?;
    let ours = our_rows(&cells(&run.trajectories), &contrasts);
    Ok(Frame::new().rows("ours", &ours))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::laid_out;

    #[test]
    fn the_layout_has_the_figures_numbers_and_differences() {
        let counts = |correct, valid| Counts {
            correct,
            valid,
            n: 60,
        };
        let mut c = Cells::new();
        c.insert(
            ("m".into(), "lexical".into(), 1),
            [counts(30, 60), counts(45, 57)],
        );
        let md = laid_out(
            "figure7",
            Frame::new().rows("ours", &our_rows(&c, &[])),
            "Jev",
        );
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
