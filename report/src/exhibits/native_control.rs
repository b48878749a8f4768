//! The candidate-only Native control (A.4), from the `native-control` panel (Native and
//! NativeControl on Table 1's 384 items per domain). Per model and domain: each arm's EM with
//! its exact Clopper–Pearson interval at the run's level, and the exact one-sided binomial p of
//! the control's count under chance (one of eight candidates).

use std::collections::BTreeMap;

use c2s_records::Trajectory;
use c2s_stats::{clopper_pearson, Interval};
use serde::Serialize;

use super::engine::Frame;
use super::{run_of, Count, PanelRun};

/// Chance with eight candidates.
pub const CHANCE: f64 = 1.0 / 8.0;

/// One (model, domain)'s correct trajectories of both arms.
#[derive(Debug, Default)]
pub struct Counts {
    /// Native: the problem and its candidates.
    pub native: Count,
    /// NativeControl: the candidates only, the problem withheld.
    pub control: Count,
}

/// Counts per (model, domain) from the panel's trajectories.
pub fn counts(trajectories: &[Trajectory]) -> BTreeMap<(String, String), Counts> {
    let mut out: BTreeMap<(String, String), Counts> = BTreeMap::new();
    for t in trajectories {
        let c = out
            .entry((t.model.clone(), t.domain.as_str().to_string()))
            .or_default();
        match t.arm.split('/').next() {
            Some("Native") => c.native.add(t.correct),
            Some("NativeControl") => c.control.add(t.correct),
            _ => {}
        }
    }
    out
}

/// One arm's EM: correct of trajectories with its exact interval.
#[derive(Debug, Serialize)]
pub struct Em {
    /// Correct trajectories.
    pub correct: u64,
    /// Trajectories.
    pub n: u64,
    /// The Clopper–Pearson interval of correct / n at the run's level; none for n = 0.
    pub ci: Option<Interval>,
}

/// One (model, domain) row of the control's table.
#[derive(Debug, Serialize)]
pub struct Row<'a> {
    /// The model label of the run's records.
    pub model: &'a str,
    /// The domain (its bank's name).
    pub domain: &'a str,
    /// Native's EM.
    pub native: Em,
    /// The control's EM.
    pub control: Em,
    /// P(X ≥ the control's correct) for X ~ Binomial(its trajectories, 1/8).
    pub p: Option<f64>,
}

/// The control's rows (`ours`) at the interval level `level`, beside `chance` and the `level`.
pub fn frame(counts: &BTreeMap<(String, String), Counts>, level: f64) -> Frame {
    let em = |c: Count| Em {
        correct: c.k,
        n: c.n,
        ci: clopper_pearson(c.k, c.n, level).ok().flatten(),
    };
    let rows: Vec<Row> = (counts.iter())
        .map(|((model, domain), c)| Row {
            model,
            domain,
            native: em(c.native),
            control: em(c.control),
            p: c2s_stats::binomial_upper_tail(c.control.k, c.control.n, CHANCE),
        })
        .collect();
    (Frame::new().rows("ours", &rows))
        .var("level", level)
        .var("chance", CHANCE)
}

/// The control from the `native-control` panel's trajectories, at its statistics level.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "native-control")?.load()?;
    Ok(frame(&counts(&run.trajectories), run.stats.level))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::laid_out;

    #[test]
    fn the_layout_sets_each_arm_beside_chance() {
        let mut c = BTreeMap::new();
        c.insert(
            ("m".to_string(), "arithmetic".to_string()),
            Counts {
                native: Count { k: 300, n: 384 },
                control: Count { k: 48, n: 384 },
            },
        );
        let md = laid_out("native-control", frame(&c, 0.95), "Jev");
        assert!(
            md.contains("| Model | Domain | Native EM [95% CI] | NativeControl EM [95% CI] | Chance | p (control ≥ its count by chance) |"),
            "{md}"
        );
        assert!(md.contains("| m | math | 300/384 78.1 ["), "{md}");
        assert!(md.contains("48/384 12.5 ["), "{md}");
        assert!(md.contains("| 12.5 |"), "{md}");
    }
}
