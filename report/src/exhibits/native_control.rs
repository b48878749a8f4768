//! The candidate-only Native control (A.4), from the `native-control` panel (Native and
//! NativeControl on Table 1's 384 items per domain). Per model and domain: each arm's EM with
//! its exact Clopper–Pearson interval at the run's level, and the exact one-sided binomial p of
//! the control's count under chance (one of eight candidates). The counts are declared in
//! exhibits/native-control.toml (`[[sources]]`), the interval and p are its filters; the code
//! gives the run's level and chance.

use super::engine::Frame;
use super::{run_of, PanelRun};

/// Chance with eight candidates.
pub const CHANCE: f64 = 1.0 / 8.0;

/// The `native-control` panel's statistics level (`level`) and [`CHANCE`] (`chance`).
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "native-control")?;
    let stats = c2s_rundir::runs_stats_config(&run.run_dirs)?;
    Ok(Frame::new().var("level", stats.level).var("chance", CHANCE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::sources::PanelRecords;
    use crate::exhibits::testing::{declared, trajectory};

    #[test]
    fn the_layout_sets_each_arm_beside_chance() {
        // 384 items: Native correct on 300, the control on 48.
        let mut trajectories = Vec::new();
        for i in 0..384 {
            let item = format!("i{i}");
            trajectories.push(trajectory(&item, "arithmetic", 3, "Native/code", i < 300));
            trajectories.push(trajectory(
                &item,
                "arithmetic",
                3,
                "NativeControl/code",
                i < 48,
            ));
        }
        let panel = PanelRecords {
            panel: "native-control".into(),
            metric_rows: vec![],
            trajectories,
        };
        let frame = Frame::new().var("level", 0.95).var("chance", CHANCE);
        let md = declared("native-control", &[panel], frame, "Jev");
        assert!(
            md.contains("| Model | Domain | Native EM [95% CI] | NativeControl EM [95% CI] | Chance | p (control ≥ its count by chance) |"),
            "{md}"
        );
        assert!(md.contains("| m | math | 300/384 78.1 ["), "{md}");
        assert!(md.contains("48/384 12.5 ["), "{md}");
        assert!(md.contains("| 12.5 |"), "{md}");
    }
}
