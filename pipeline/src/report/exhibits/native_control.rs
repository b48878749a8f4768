//! The candidate-only Native control (A.4: "Native makes one request with eight choices. Its
//! control uses only the candidates and withholds the problem"; §4: "Candidates alone yield
//! near-chance selection, supporting a role for problem evidence"). The paper prints no numbers
//! for it; ours set each arm's EM with its exact 95% interval beside chance (one of eight), and
//! the exact one-sided binomial p of the control at or above its count under chance.
//!
//! Panel: `config/panels/native-control.toml` (Native and NativeControl on Table 1's 384 items
//! per domain).

use std::collections::BTreeMap;

use c2s_records::Trajectory;
use c2s_stats::clopper_pearson;

use super::{run_of, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{p_value, UNDEFINED};

/// Chance with eight candidates.
pub const CHANCE: f64 = 1.0 / 8.0;

/// One (model, domain) row: correct/items of Native and of the control.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Native (problem and candidates): (correct, trajectories).
    pub native: (u64, u64),
    /// NativeControl (candidates only, problem withheld): (correct, trajectories).
    pub control: (u64, u64),
}

/// Counts per (model, domain) from the panel's trajectories.
pub fn counts(trajectories: &[Trajectory]) -> BTreeMap<(String, String), Counts> {
    let mut out: BTreeMap<(String, String), Counts> = BTreeMap::new();
    for t in trajectories {
        let kind = t.arm.split('/').next().unwrap_or(&t.arm);
        let c = out
            .entry((t.model.clone(), t.domain.as_str().to_string()))
            .or_default();
        let cell = match kind {
            "Native" => &mut c.native,
            "NativeControl" => &mut c.control,
            _ => continue,
        };
        cell.0 += u64::from(t.correct);
        cell.1 += 1;
    }
    out
}

fn em_cell((k, n): (u64, u64), level: f64) -> String {
    if n == 0 {
        return UNDEFINED.to_string();
    }
    let ci = clopper_pearson(k, n, level).ok().flatten();
    let v = 100.0 * k as f64 / n as f64;
    match ci {
        Some(ci) => format!(
            "{k}/{n} {v:.1} [{:.1}, {:.1}]",
            100.0 * ci.low,
            100.0 * ci.high
        ),
        None => format!("{k}/{n} {v:.1}"),
    }
}

/// P(X ≥ k) for X ~ Binomial(n, 1/8): how surprising the control's count is under chance.
pub fn above_chance_p(k: u64, n: u64) -> Option<f64> {
    c2s_stats::binomial_upper_tail(k, n, CHANCE)
}

/// The control's document: per (model, domain) both arms' EM with exact `level` intervals,
/// chance (12.5%) and the control's one-sided binomial p.
pub fn layout(counts: &BTreeMap<(String, String), Counts>, level: f64) -> Doc {
    let mut doc = Doc::new("Native control: candidates alone");
    doc.p(
        "Native sees the problem and eight candidates; NativeControl sees only the candidates \
         (A.4). The paper reports near-chance selection for the control and prints no numbers.",
    );
    let lvl = format!("{:.0}%", 100.0 * level);
    doc.table(Table {
        text_columns: 2,
        header: vec![
            "Model".into(),
            "Domain".into(),
            format!("Native EM [{lvl} CI]"),
            format!("NativeControl EM [{lvl} CI]"),
            "Chance".into(),
            "p (control ≥ its count by chance)".into(),
        ],
        rows: counts
            .iter()
            .map(|((model, domain), c)| {
                vec![
                    model.clone(),
                    super::paper_domain(domain).to_string(),
                    em_cell(c.native, level),
                    em_cell(c.control, level),
                    format!("{:.1}", 100.0 * CHANCE),
                    p_value(above_chance_p(c.control.0, c.control.1)),
                ]
            })
            .collect(),
        notes: vec![format!(
            "Intervals are exact Clopper–Pearson {lvl} intervals; p is the exact one-sided \
             binomial tail of the control's count with success probability 1/8."
        )],
    });
    doc
}

/// The control from the `native-control` panel's trajectories, at its statistics level.
pub fn document(runs: &[PanelRun]) -> anyhow::Result<Doc> {
    let run = run_of(runs, "native-control")?.load()?;
    Ok(layout(&counts(&run.trajectories), run.stats.level))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_sets_each_arm_beside_chance() {
        let mut c = BTreeMap::new();
        c.insert(
            ("m".to_string(), "arithmetic".to_string()),
            Counts {
                native: (300, 384),
                control: (48, 384),
            },
        );
        let md = layout(&c, 0.95).markdown();
        assert!(
            md.contains("| Model | Domain | Native EM [95% CI] | NativeControl EM [95% CI] | Chance | p (control ≥ its count by chance) |"),
            "{md}"
        );
        assert!(md.contains("| m | math | 300/384 78.1 ["), "{md}");
        assert!(md.contains("48/384 12.5 ["), "{md}");
        assert!(md.contains("| 12.5 |"), "{md}");
    }
}
