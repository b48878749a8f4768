//! Tables D12 and D14 and Figures 19 and 21 (D.14, D.15): confidence of completed strings on
//! the original population, the Serial/Full/code trajectories of Table 1's code panel
//! (`config/panels/table1-code.toml`) with their three confidence scores, per model and
//! domain. Every interval resamples items within length (the panel's draws and seed):
//! [`c2s_stats::calibration_intervals`] (Brier, ECE, AUROC, AP and Product's AUROC/AP minus
//! the negative-length ranking's), [`c2s_stats::reliability_intervals`] (Figure 19's ten bins)
//! and [`c2s_stats::screening_intervals`] (Figure 21 (a, b): precision at selected coverage).
//! Our rows weigh items as sampled; on a population balanced over lengths that is also the
//! paper's equal-length mixture. The paper's "New" rows (D.15's independent cohort) have no
//! row of ours: that bank is not built.

use std::collections::BTreeMap;

use c2s_records::{Arm, ArmSpec, Trajectory};
use c2s_stats::{
    calibration_intervals, BinInterval, BootstrapConfig, CalibrationIntervals, ScoreIntervals,
    ScoredItem,
};
use serde::Serialize;

use super::engine::Frame;
use super::item_intervals::{triple, Interval};
use super::{run_of, PanelRun};

/// The arm whose completed strings the original population holds (`Serial/Full/code`).
pub fn serial_arm() -> ArmSpec {
    ArmSpec::new(Arm::Serial)
}

/// The paper's score labels, in [`c2s_stats::ScoreKind::ALL`]'s order.
pub const SCORE_LABELS: [&str; 3] = ["Product", "Geom.", "Minimum"];

/// One (model, domain) population of ours.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Population {
    /// The model label of the run's records.
    pub model: String,
    /// The bank's domain name (`arithmetic`, `lexical`).
    pub domain: String,
    /// Table D12's population label: `Arithmetic` or `Original lexical`.
    pub population: String,
    /// Every length present holds the same number of items (source = equal-length mixture).
    pub balanced: bool,
    /// Items, correct items, and each score's estimates with their intervals.
    pub estimates: CalibrationIntervals,
}

/// One score of a lexical population of ours (Table D14).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreRow<'a> {
    /// The model label of the run's records.
    pub model: &'a str,
    /// The population is balanced over lengths (source = equal-length mixture).
    pub balanced: bool,
    /// The paper's population compared: `Original`.
    pub population: &'static str,
    /// The paper's mixture compared: `Equal` (ours weighs items as sampled).
    pub mixture: &'static str,
    /// The score's label ([`SCORE_LABELS`]).
    pub score: &'static str,
    /// Its Brier, ECE, AUROC and AP with their intervals.
    pub estimates: &'a ScoreIntervals,
}

/// Each (model, domain)'s Serial/Full/code strings with a confidence composite.
fn scored_items(
    trajectories: &[Trajectory],
) -> anyhow::Result<BTreeMap<(String, String), Vec<ScoredItem>>> {
    let mut groups: BTreeMap<(String, String), Vec<ScoredItem>> = BTreeMap::new();
    let serial_arm = serial_arm();
    for t in trajectories.iter().filter(|t| *t.arm.spec() == serial_arm) {
        let Some(c) = &t.confidence else { continue };
        groups
            .entry((t.model.clone(), t.domain.as_str().to_string()))
            .or_default()
            .push(ScoredItem {
                item_id: t.item_id.clone(),
                length: u32::try_from(t.length)?,
                scores: [c.product, c.geometric_mean, c.min_top],
                correct: t.correct,
            });
    }
    Ok(groups)
}

/// The run's original populations, per model and domain.
pub fn populations(
    trajectories: &[Trajectory],
    cfg: &BootstrapConfig,
    level: f64,
) -> anyhow::Result<Vec<Population>> {
    let mut out = Vec::new();
    for ((model, domain), items) in scored_items(trajectories)? {
        let mut per_length: BTreeMap<u32, usize> = BTreeMap::new();
        for i in &items {
            *per_length.entry(i.length).or_default() += 1;
        }
        let balanced = per_length.values().min() == per_length.values().max();
        let Some(estimates) = calibration_intervals(&items, cfg, level)? else {
            continue;
        };
        let population = match domain.as_str() {
            "arithmetic" => "Arithmetic".to_string(),
            "lexical" => "Original lexical".to_string(),
            d => d.to_string(),
        };
        out.push(Population {
            model,
            domain,
            population,
            balanced,
            estimates,
        });
    }
    Ok(out)
}

/// Tables D12 and D14's rows: every population (`ours`), each lexical one's scores (`scores`).
pub fn tables(ours: &[Population], level: f64) -> Frame {
    let scores: Vec<ScoreRow> = (ours.iter().filter(|p| p.domain == "lexical"))
        .flat_map(|p| {
            (p.estimates.scores.iter().zip(SCORE_LABELS)).map(|(estimates, score)| ScoreRow {
                model: &p.model,
                balanced: p.balanced,
                population: "Original",
                mixture: "Equal",
                score,
                estimates,
            })
        })
        .collect();
    (Frame::new().rows("ours", ours).rows("scores", &scores)).var("level", level)
}

/// One reliability bin of a (model, domain) population's score (Figure 19).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bin {
    /// The population and score: `{model, domain, score}`.
    pub panel: BTreeMap<&'static str, String>,
    /// The bin's items, correct strings, mean score and accuracy with its interval.
    #[serde(flatten)]
    pub bin: BinInterval,
}

/// Figure 19's numbers: each (model, domain) and score's ten reliability bins.
pub fn figure19_rows(
    trajectories: &[Trajectory],
    cfg: &BootstrapConfig,
    level: f64,
) -> anyhow::Result<Frame> {
    let mut bins = Vec::new();
    for ((model, domain), items) in scored_items(trajectories)? {
        for (label, kind) in SCORE_LABELS.iter().zip(c2s_stats::ScoreKind::ALL) {
            let panel = BTreeMap::from([
                ("model", model.clone()),
                ("domain", domain.clone()),
                ("score", label.to_string()),
            ]);
            for bin in c2s_stats::reliability_intervals(&items, kind, cfg, level)? {
                let panel = panel.clone();
                bins.push(Bin { panel, bin });
            }
        }
    }
    Ok(Frame::new().rows("bins", &bins).var("level", level))
}

/// Figure 19's numbers from the `table1-code` panel's trajectories.
pub fn figure19(runs: &[PanelRun]) -> anyhow::Result<Frame> {
    from_code_panel(runs, figure19_rows)
}

/// `rows` of the `table1-code` panel's trajectories, with its bootstrap and level.
fn from_code_panel(
    runs: &[PanelRun],
    rows: fn(&[Trajectory], &BootstrapConfig, f64) -> anyhow::Result<Frame>,
) -> anyhow::Result<Frame> {
    let run = run_of(runs, "table1-code")?.load()?;
    rows(&run.trajectories, &run.stats.bootstrap(), run.stats.level)
}

/// The coverages Figure 21's numbers are read at.
pub const COVERAGES: [f64; 5] = [0.10, 0.25, 0.50, 0.75, 1.00];

/// Figure 21's rankers, in [`c2s_stats::screening_intervals`]'s order.
pub const RANKERS: [&str; c2s_stats::SCREENING_RANKERS] =
    ["Product", "Geometric mean", "Minimum top choice", "Length"];

/// One ranker of a (model, domain) population (Figure 21).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Screening {
    /// The population: `{model, domain, items}`.
    pub panel: BTreeMap<&'static str, String>,
    /// The ranker ([`RANKERS`]).
    pub ranker: &'static str,
    /// Precision (a fraction) at each of [`COVERAGES`], with its interval.
    pub precision: Vec<Option<Interval>>,
}

/// Figure 21's numbers: precision at each coverage per (model, domain) and ranker.
pub fn figure21_rows(
    trajectories: &[Trajectory],
    cfg: &BootstrapConfig,
    level: f64,
) -> anyhow::Result<Frame> {
    let mut rows = Vec::new();
    for ((model, domain), items) in scored_items(trajectories)? {
        let precision = c2s_stats::screening_intervals(&items, &COVERAGES, cfg, level)?;
        let panel = BTreeMap::from([
            ("model", model),
            ("domain", domain),
            ("items", items.len().to_string()),
        ]);
        for (ranker, estimates) in RANKERS.iter().zip(precision) {
            let precision = estimates.iter().map(triple).collect();
            let panel = panel.clone();
            rows.push(Screening {
                panel,
                ranker,
                precision,
            });
        }
    }
    Ok(Frame::new().rows("rankers", &rows).var("level", level))
}

/// Figure 21's numbers (panels a, b) from the `table1-code` panel's trajectories.
pub fn figure21(runs: &[PanelRun]) -> anyhow::Result<Frame> {
    from_code_panel(runs, figure21_rows)
}

/// Tables D12 and D14's rows from the `table1-code` panel's Serial/Full/code populations.
pub fn document(runs: &[PanelRun]) -> anyhow::Result<Frame> {
    from_code_panel(runs, |trajectories, cfg, level| {
        Ok(tables(&populations(trajectories, cfg, level)?, level))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{self, laid_out};

    fn trajectory(
        item: usize,
        domain: &str,
        length: usize,
        score: f64,
        correct: bool,
    ) -> Trajectory {
        let id = format!("{domain}-{item}");
        let mut t = testing::trajectory(&id, domain, length, &serial_arm().label(), correct);
        t.confidence = Some(c2s_records::Confidence {
            product: score,
            geometric_mean: score.sqrt(),
            min_top: score,
            steps: length as u32,
        });
        t
    }

    fn sample() -> Vec<Trajectory> {
        let mut ts = Vec::new();
        for (i, (length, score, correct)) in [
            (3, 0.9, true),
            (3, 0.2, false),
            (4, 0.7, true),
            (4, 0.4, false),
        ]
        .into_iter()
        .enumerate()
        {
            ts.push(trajectory(i, "lexical", length, score, correct));
            ts.push(trajectory(i, "arithmetic", length, score, correct));
        }
        // Another arm, or no confidence: not in the population.
        let mut native = trajectory(9, "lexical", 3, 0.5, true);
        native.arm = c2s_records::LabeledArm::parse("Native/code").unwrap();
        ts.push(native);
        let mut blind = trajectory(8, "lexical", 3, 0.5, true);
        blind.confidence = None;
        ts.push(blind);
        ts
    }

    fn cfg() -> BootstrapConfig {
        BootstrapConfig {
            draws: 199,
            seed: 3,
            threads: 1,
        }
    }

    #[test]
    fn the_populations_are_the_serial_strings_with_a_confidence() {
        let p = populations(&sample(), &cfg(), 0.95).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[1].domain, "lexical");
        assert_eq!(p[1].estimates.items, 4);
        assert!(p[1].balanced);
        // Perfect separation by Product: AUROC 1.
        assert_eq!(p[1].estimates.scores[0].auroc.value, Some(1.0));
    }

    #[test]
    fn the_layouts_have_the_papers_columns_rows_and_differences() {
        let p = populations(&sample(), &cfg(), 0.95).unwrap();
        let d12 = laid_out("tableD12", tables(&p, 0.95), "Jev");
        for want in [
            "| Model | Population / mixture | AUROC difference | AP difference |",
            "| m | Original lexical / equal (= source) |",
            "| Jev | Arithmetic | 0.068 [0.051, 0.086] | 0.175 [0.135, 0.216] |",
            "| Jev | New lexical / source | 0.011 [-0.043, 0.064] | 0.055 [-0.012, 0.249] |",
            "| m | Arithmetic | Arithmetic |",
        ] {
            assert!(d12.contains(want), "missing {want:?} in\n{d12}");
        }
        let d14 = laid_out("tableD14", tables(&p, 0.95), "Jev");
        for want in [
            "| Model | Population | Mixture | Score | Brier | ECE | AUROC | AP |",
            "| m | Original | Equal (= source) | Product |",
            "| Jev | New | Equal | Minimum | 0.056 [0.051, 0.063] | 0.181 [0.168, 0.194] | 0.859 [0.763, 0.933] | 0.161 [0.043, 0.437] |",
            "| m | Product |",
        ] {
            assert!(d14.contains(want), "missing {want:?} in\n{d14}");
        }
        // Differences: AUROC 1.000 − 0.936.
        assert!(d14.contains("+0.064 |"), "{d14}");
    }

    #[test]
    fn figure21_has_every_ranker_at_every_coverage() {
        let md = laid_out(
            "figure21",
            figure21_rows(&sample(), &cfg(), 0.95).unwrap(),
            "Jev",
        );
        for want in [
            "## m · lexical",
            "| Ranker | 10% coverage | 25% coverage | 50% coverage | 75% coverage | 100% coverage |",
            // Product ranks both correct strings first: 100% precision at half coverage, the
            // prevalence (50%) at full coverage.
            "| Product | 100.0 [",
            "| 50.0 [",
            "| Length |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    #[test]
    fn figure19_has_ten_bins_per_domain_and_score() {
        let md = laid_out(
            "figure19",
            figure19_rows(&sample(), &cfg(), 0.95).unwrap(),
            "Jev",
        );
        for want in [
            "## m · lexical · Product",
            "## m · arithmetic · Minimum",
            "| Composed score | Items | Correct | Mean score | Observed correctness [CI] |",
            "| [0.9, 1.0) | 1 | 1 | 0.900 | 1.000 [1.000, 1.000] |",
            "| [0.0, 0.1) | 0 | 0 | – | – |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
