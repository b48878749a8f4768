//! The Native-to-position projection (A.6, B.7; no printed numbers) from `independent-384`
//! (scored Native and Independent, 384 items per domain): per position, Native's candidate
//! probabilities summed by character against the Independent query's distribution
//! ([`c2s_stats::projection`]); each item scores its positions' mean, summarized over items with
//! a bootstrap within length ("bootstrap uses item-averaged position scores").

use std::collections::BTreeMap;

use c2s_records::{Arm, ArmSpec, StepRecord, Trajectory};
use c2s_stats::{
    mean_scores, position_scores, project, stratified_mean, PositionScores, StatsConfig,
};
use minijinja::Value;

use super::engine::Frame;
use super::{paper_domain, run_of, PanelRun};

/// The query arm compared with Native: `Independent/Full/code`.
pub fn query_arm() -> ArmSpec {
    ArmSpec::new(Arm::Independent)
}

/// The Native arm whose first step's candidate probabilities are projected: `Native/code`.
pub fn native_arm() -> ArmSpec {
    ArmSpec::new(Arm::Native)
}

/// Per (model, domain): each item's (length, mean position scores).
pub fn item_scores(
    trajectories: &[Trajectory],
) -> BTreeMap<(String, String), Vec<(u32, PositionScores)>> {
    let (native_arm, query_arm) = (native_arm(), query_arm());
    let mut native: BTreeMap<(&str, &str), &StepRecord> = BTreeMap::new();
    for t in trajectories.iter().filter(|t| *t.arm.spec() == native_arm) {
        if let Some(step) = t.steps.first() {
            native.insert((t.model.as_str(), t.item_id.as_str()), step);
        }
    }
    let mut out: BTreeMap<(String, String), Vec<(u32, PositionScores)>> = BTreeMap::new();
    for t in trajectories.iter().filter(|t| *t.arm.spec() == query_arm) {
        let Some(n) = native.get(&(t.model.as_str(), t.item_id.as_str())) else {
            continue;
        };
        let Some(np) = &n.probabilities else {
            continue;
        };
        let scores: Vec<PositionScores> = t
            .steps
            .iter()
            .filter(|s| s.position >= 1)
            .filter_map(|s| {
                let probs = s.probabilities.as_ref()?;
                let projection = project(&n.support, np, s.position as usize - 1);
                position_scores(&projection, &s.support, probs)
            })
            .collect();
        if let Some(m) = mean_scores(&scores) {
            out.entry((t.model.clone(), t.domain.as_str().to_string()))
                .or_default()
                .push((t.length as u32, m));
        }
    }
    out
}

/// One score of an item's mean position scores.
type Score = fn(&PositionScores) -> f64;

/// The scores of a row, each an item mean with its interval ([`c2s_stats::MeanEstimate`],
/// its `items` the row's item count): `tv`, the total variation distance between the
/// normalized projection and the query's distribution; `js`, the Jensen–Shannon divergence
/// between the two normalized distributions, in bits; `native_mass`, the projection's raw
/// total (Native's probability mass before normalizing); `unsupported`, the query's mass on
/// characters no candidate has at the position; `uniform_reference`, its uniform reference
/// 1 − |support| / |Σ|; `unsupported_minus_reference`, their difference per item.
const SCORES: [(&str, Score); 6] = [
    ("tv", |s| s.tv),
    ("js", |s| s.js),
    ("native_mass", |s| s.native_mass),
    ("unsupported", |s| s.unsupported_mass),
    ("uniform_reference", |s| s.uniform_reference),
    ("unsupported_minus_reference", |s| {
        s.unsupported_mass - s.uniform_reference
    }),
];

/// Our rows per (model, domain as the paper prints it): each of [`SCORES`]' item mean,
/// bootstrapped within length.
pub fn our_rows(
    items: &BTreeMap<(String, String), Vec<(u32, PositionScores)>>,
    stats: &StatsConfig,
) -> anyhow::Result<Vec<Value>> {
    let mut out = Vec::new();
    for ((model, domain), scores) in items {
        let mut row = vec![
            ("model", Value::from(model.as_str())),
            ("domain", Value::from(paper_domain(domain))),
        ];
        for (name, score) in SCORES {
            let values: Vec<(u32, f64)> = scores.iter().map(|(l, s)| (*l, score(s))).collect();
            let estimate =
                stratified_mean(&values, stats.bootstrap_draws, stats.seed, stats.level)?;
            row.push((name, Value::from_serialize(estimate)));
        }
        out.push(Value::from_iter(row));
    }
    Ok(out)
}

/// The projection from the `independent-384` panel's Native and Independent trajectories.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "independent-384")?.load()?;
    let ours = our_rows(&item_scores(&run.trajectories), &run.stats)?;
    Ok(Frame::new()
        .values("ours", ours)
        .var("level", run.stats.level))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::laid_out;

    #[test]
    fn the_layout_has_every_measure() {
        let s = PositionScores {
            tv: 0.25,
            js: 0.1,
            native_mass: 1.0,
            unsupported_mass: 0.3,
            uniform_reference: 0.6,
        };
        let mut items = BTreeMap::new();
        items.insert(
            ("m".to_string(), "arithmetic".to_string()),
            vec![(3, s), (4, s)],
        );
        let stats = StatsConfig {
            bootstrap_draws: 99,
            ..StatsConfig::default()
        };
        let ours = our_rows(&items, &stats).unwrap();
        let frame = Frame::new().rows("ours", &ours).var("level", 0.95);
        let md = laid_out("projection", frame, "Jev");
        for want in [
            "| Model | Domain | Items | TV [95% CI] | JS, bits [95% CI] | Native raw mass | Unsupported mass | Uniform reference | Unsupported − reference |",
            "| m | math | 2 | 0.250 [0.250, 0.250] | 0.100 [0.100, 0.100] | 1.000 [1.000, 1.000] | 0.300 [0.300, 0.300] | 0.600 [0.600, 0.600] | −0.300 [−0.300, −0.300] |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
