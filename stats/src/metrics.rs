//! Metric rows of a snapshot, in the schema of the `metrics/` Parquet dataset.
//!
//! [`paired_metrics`] groups paired outcomes by (model, domain, native arm, serial arm) and
//! emits, per length and for all lengths (`length = None`): the joint counts, Native EM,
//! Serial EM, SCR, gain rate, loss mass (bootstrap intervals), the marginal SCR bounds, and,
//! on the all-lengths rows, the equal-length mixture and the exact McNemar test with its Holm
//! adjustment.
//!
//! Choices where the paper is silent (also in docs/protocol-choices.md):
//! - SCR cells with a zero numerator use the exact Clopper–Pearson interval (as the paper's
//!   zero-success cells), every other interval is the stratified bootstrap percentile
//!   interval. EM, gain rate and loss mass keep the bootstrap even at 0 or 1.
//! - McNemar tests are run on the all-lengths table only (the primary paired test); per-length
//!   tables get no test, so no family grows with the number of lengths.
//! - Holm families: by default one family per (model, domain) holding all its comparisons.
//!   Declared families replace the default; a comparison outside every declared family gets
//!   `mcnemar_p` but no `mcnemar_p_holm`. A family's size is the number of its tests present
//!   in the snapshot.
//! - Each group is bootstrapped with the same configured seed, so a group's intervals do not
//!   depend on which other groups are in the snapshot.

use std::collections::{BTreeMap, BTreeSet};

use c2s_records::{Domain, Metric, PairedOutcome, ScoreStat, Trajectory};
use serde::{Deserialize, Serialize};

use crate::bootstrap::{
    bootstrap_joint_counts, BootstrapConfig, EqualLengthEstimates, Estimate, JointEstimates,
    StratifiedSample, DEFAULT_DRAWS, DEFAULT_SEED,
};
use crate::calibration::{calibration_report_counts, ConfidenceKey, ScoreKind};
use crate::counts::StatsCounts;
use crate::error::StatsError;
use crate::hypothesis::{holm, McNemar};
use crate::independence::{
    independence_estimates, independence_estimates_counts, independence_estimates_within,
    IndependenceEstimate, LocalGroup, PatternCounts, PopulationCounts,
};
use crate::intervals::{check_level, clopper_pearson, DEFAULT_LEVEL};
use crate::joint::{JointCell, Ratio};

// The metric row, the Holm scope and the comparison label are record vocabulary (the sinks
// write them, the config names them); statistics computes them.
pub use c2s_records::{comparison_label, FamilyScope, MetricRow};

/// `ci_method` of bootstrap intervals.
pub const CI_BOOTSTRAP: &str = "bootstrap_percentile";
/// `ci_method` of exact binomial intervals.
pub const CI_CLOPPER_PEARSON: &str = "clopper_pearson";

/// A declared Holm family: the McNemar tests of the listed comparisons, within `scope`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HolmFamily {
    /// The family's name, as the config declares it ("primary" for the default family).
    pub name: String,
    /// Comparison labels (`"<native arm> vs <serial arm>"`, see [`comparison_label`]) whose McNemar
    /// tests the family corrects together.
    pub comparisons: Vec<String>,
    #[serde(default)]
    /// Which models and domains share one Holm correction; by default one per (model, domain).
    pub scope: FamilyScope,
}

impl HolmFamily {
    /// The paper's primary family: "The primary six Native/Serial exact McNemar tests share a
    /// Holm correction at 0.05" (A.6) — Native against Serial under the code contract, over
    /// every model and domain. Used when no family is declared.
    pub fn primary() -> HolmFamily {
        HolmFamily {
            name: "primary".into(),
            comparisons: vec![format!(
                "{} vs {}",
                c2s_records::ArmSpec::new(c2s_records::Arm::Native).label(),
                c2s_records::ArmSpec::new(c2s_records::Arm::Serial).label()
            )],
            scope: FamilyScope::Global,
        }
    }
}

/// The Holm families in force: the declared ones, or [`HolmFamily::primary`] when none is.
pub fn families_in_force(declared: &[HolmFamily]) -> Vec<HolmFamily> {
    if declared.is_empty() {
        vec![HolmFamily::primary()]
    } else {
        declared.to_vec()
    }
}

/// The Holm correction a McNemar test of `comparison` (of `model`, `domain`) belongs to:
/// the index of the first family in `families` that lists the comparison, and the scope cell
/// within it (`None` where the scope spans models or domains). `None`: no family, no Holm.
pub fn holm_cell<D: Copy>(
    families: &[HolmFamily],
    comparison: &str,
    model: &str,
    domain: D,
) -> Option<(usize, Option<String>, Option<D>)> {
    let fi = families
        .iter()
        .position(|f| f.comparisons.iter().any(|c| c == comparison))?;
    let model = Some(model.to_string());
    Some(match families[fi].scope {
        FamilyScope::PerModelDomain => (fi, model, Some(domain)),
        FamilyScope::PerModel => (fi, model, None),
        FamilyScope::PerDomain => (fi, None, Some(domain)),
        FamilyScope::Global => (fi, None, None),
    })
}

/// Snapshot statistics settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatsConfig {
    /// Bootstrap draws (9,999; 99,999 for final tables).
    pub bootstrap_draws: u32,
    /// Base seed of every group's bootstrap (paper A.6: 20261005).
    pub seed: u64,
    /// Two-sided confidence level of every interval.
    pub level: f64,
    /// Declared Holm families; empty = [`HolmFamily::primary`] (comparisons outside every
    /// family get no Holm adjustment: "supplementary panels specify their own families").
    #[serde(default)]
    pub families: Vec<HolmFamily>,
    /// Bootstrap threads (0 = available cores); results do not depend on it.
    #[serde(default)]
    pub threads: usize,
    /// Confidence-calibration rows (the default). Off: none, and a live run keeps no
    /// confidence keys — the one statistic whose state grows with the number of completed
    /// strings (for endless streams).
    #[serde(default = "yes")]
    pub calibration: bool,
}

fn yes() -> bool {
    true
}

impl Default for StatsConfig {
    fn default() -> StatsConfig {
        StatsConfig {
            bootstrap_draws: DEFAULT_DRAWS,
            seed: DEFAULT_SEED,
            level: DEFAULT_LEVEL,
            families: Vec::new(),
            threads: 0,
            calibration: true,
        }
    }
}

impl StatsConfig {
    /// Checks the level, the draw count and that no comparison is in two families.
    pub fn validate(&self) -> Result<(), StatsError> {
        check_level(self.level)?;
        if self.bootstrap_draws == 0 {
            return Err(StatsError::ZeroDraws);
        }
        let mut seen = std::collections::BTreeSet::new();
        for f in &self.families {
            if f.comparisons.is_empty() {
                return Err(StatsError::EmptyFamily(f.name.clone()));
            }
            for c in &f.comparisons {
                if !seen.insert(c.as_str()) {
                    return Err(StatsError::FamilyOverlap(c.clone()));
                }
            }
        }
        Ok(())
    }

    /// The bootstrap settings these statistics settings imply (draws, seed, threads).
    pub fn bootstrap(&self) -> BootstrapConfig {
        BootstrapConfig {
            draws: self.bootstrap_draws,
            seed: self.seed,
            threads: self.threads,
        }
    }
}

/// Metric names in output order; rows are sorted by (model, domain, comparison, length with
/// all-lengths last, this order).
pub const METRIC_ORDER: &[Metric] = Metric::ORDER;

/// Sorts rows into the documented deterministic order.
pub fn sort_rows(rows: &mut [MetricRow]) {
    rows.sort_by(|a, b| {
        // The domain by its name (the order of the string column).
        (
            &a.model,
            a.domain.map_or("", Domain::as_str),
            &a.comparison,
            a.length.is_none(),
            a.length,
            a.metric.rank(),
        )
            .cmp(&(
                &b.model,
                b.domain.map_or("", Domain::as_str),
                &b.comparison,
                b.length.is_none(),
                b.length,
                b.metric.rank(),
            ))
    });
}

/// Row builder for one (model, domain, comparison, length) cell.
struct Cell<'a> {
    snapshot: u64,
    model: &'a str,
    domain: Domain,
    comparison: &'a str,
    length: Option<u32>,
}

impl Cell<'_> {
    fn row(&self, metric: Metric) -> MetricRow {
        MetricRow::empty(
            self.snapshot,
            self.model,
            Some(self.domain),
            self.length,
            self.comparison,
            metric,
        )
    }

    fn count(&self, metric: Metric, k: u64, n: u64) -> MetricRow {
        MetricRow {
            value: Some(k as f64),
            numerator: Some(k),
            denominator: Some(n),
            ..self.row(metric)
        }
    }

    fn point(&self, metric: Metric, value: Option<f64>) -> MetricRow {
        MetricRow {
            value,
            ..self.row(metric)
        }
    }

    /// A bootstrapped estimate; the interval is kept only when the point is defined.
    fn estimate(&self, metric: Metric, ratio: Option<Ratio>, e: &Estimate) -> MetricRow {
        let interval = e.value.and(e.interval);
        MetricRow {
            value: e.value,
            numerator: ratio.map(|r| r.numerator),
            denominator: ratio.map(|r| r.denominator),
            ci_low: interval.map(|i| i.low),
            ci_high: interval.map(|i| i.high),
            ci_method: interval.map(|_| CI_BOOTSTRAP.to_string()),
            ..self.row(metric)
        }
    }

    fn dropped(&self, metric: Metric, e: &Estimate) -> MetricRow {
        let draws = u64::from(e.defined_draws) + u64::from(e.dropped_draws);
        self.count(metric, u64::from(e.dropped_draws), draws)
    }

    /// A conditional rate whose draws may be dropped: the estimate, plus the dropped-draw row
    /// when the point is defined.
    fn conditional(&self, rows: &mut Vec<MetricRow>, metric: Metric, r: Ratio, e: &Estimate) {
        rows.push(self.estimate(metric, Some(r), e));
        if e.value.is_some() {
            if let Some(dropped) = metric.bootstrap_dropped() {
                rows.push(self.dropped(dropped, e));
            }
        }
    }
}

fn joint_rows(
    cell: &Cell<'_>,
    est: &JointEstimates,
    level: f64,
    rows: &mut Vec<MetricRow>,
) -> Result<(), StatsError> {
    let t = &est.table;
    let n = t.n();
    for c in JointCell::ALL {
        let name = match c {
            JointCell::Both => Metric::Both,
            JointCell::NativeOnly => Metric::NativeOnly,
            JointCell::SerialOnly => Metric::SerialOnly,
            JointCell::Neither => Metric::Neither,
        };
        rows.push(cell.count(name, t.count(c), n));
    }
    rows.push(cell.estimate(Metric::NativeEm, Some(t.native_em()), &est.native_em));
    rows.push(cell.estimate(Metric::SerialEm, Some(t.serial_em()), &est.serial_em));
    let scr = t.scr();
    if scr.denominator > 0 && scr.numerator == 0 {
        // Zero-success cell: exact two-sided binomial interval instead of the degenerate
        // bootstrap interval.
        let ci = clopper_pearson(0, scr.denominator, level)?;
        rows.push(MetricRow {
            value: scr.value(),
            numerator: Some(0),
            denominator: Some(scr.denominator),
            ci_low: ci.map(|i| i.low),
            ci_high: ci.map(|i| i.high),
            ci_method: ci.map(|_| CI_CLOPPER_PEARSON.to_string()),
            ..cell.row(Metric::Scr)
        });
    } else {
        cell.conditional(rows, Metric::Scr, scr, &est.scr);
    }
    cell.conditional(rows, Metric::GainRate, t.gain_rate(), &est.gain_rate);
    rows.push(cell.estimate(Metric::LossMass, Some(t.loss_mass()), &est.loss_mass));
    let bounds = t.scr_bounds();
    rows.push(cell.point(Metric::ScrLowerBound, bounds.map(|b| b.lower)));
    rows.push(cell.point(Metric::ScrUpperBound, bounds.map(|b| b.upper)));
    Ok(())
}

/// A McNemar test waiting for its Holm family.
struct Test {
    model: String,
    domain: Domain,
    comparison: String,
    p: f64,
    row: usize,
}

/// The bootstrap stratum of a paired outcome: its length and, for semantic-bridge items, their
/// gold pattern (A.6: "Natural strata are domain/length. … Semantic bases use gold pattern").
pub type PairedStratum = (u32, Option<String>);

/// Joint tables per stratum of every (model, domain, comparison) group: the sufficient
/// statistics of every paired metric.
pub type PairedCounts = BTreeMap<(String, Domain, String), BTreeMap<PairedStratum, [u64; 4]>>;

/// The stratified sample of one group's joint tables, and whether its strata are patterns.
/// Without patterns the strata are the lengths, keyed by length, so the bootstrap's
/// per-length estimates are the length rows. With patterns (semantic-bridge outcomes) the
/// strata are the (length, pattern) cells, numbered in order: A.6's "Semantic bases use gold
/// pattern" — a draw keeps every pattern's count of records, not only the length's.
pub fn paired_sample(
    tables: &BTreeMap<PairedStratum, [u64; 4]>,
) -> Result<(StratifiedSample, bool), StatsError> {
    let by_pattern = tables.keys().any(|(_, p)| p.is_some());
    let sample = if by_pattern {
        StratifiedSample::from_counts(
            4,
            tables
                .values()
                .enumerate()
                .map(|(i, c)| (i as u32, c.to_vec())),
        )?
    } else {
        StratifiedSample::from_counts(4, tables.iter().map(|((l, _), c)| (*l, c.to_vec())))?
    };
    Ok((sample, by_pattern))
}

/// Paired metrics of one snapshot. See the module documentation for the rows and choices.
/// Errors on an invalid config, a repeated item within a group, or a length beyond `u32`.
pub fn paired_metrics(
    outcomes: &[PairedOutcome],
    cfg: &StatsConfig,
    snapshot: u64,
) -> Result<Vec<MetricRow>, StatsError> {
    cfg.validate()?;
    let counts = StatsCounts::from_records(outcomes, &[])?;
    paired_metrics_counts(counts.paired(), cfg, snapshot)
}

/// [`paired_metrics`] from the joint tables per length: the cost depends on the number of
/// groups, lengths and draws, not on the number of items.
pub fn paired_metrics_counts(
    counts: &PairedCounts,
    cfg: &StatsConfig,
    snapshot: u64,
) -> Result<Vec<MetricRow>, StatsError> {
    cfg.validate()?;
    let boot = cfg.bootstrap();
    let mut rows = Vec::new();
    let mut tests = Vec::new();
    for ((model, domain, comparison), tables) in counts {
        let domain = *domain;
        let (sample, by_pattern) = paired_sample(tables)?;
        if sample.is_empty() {
            continue;
        }
        let mut b = bootstrap_joint_counts(&sample, &boot, cfg.level)?;
        let mut equal_length = true;
        if by_pattern {
            // The strata are patterns, not lengths. With one length (the semantic bridge's
            // three decisions) its row and the equal-length mixture are the pooled estimates;
            // with several, only the pooled rows are reported.
            let lengths: BTreeSet<u32> = tables.keys().map(|(l, _)| *l).collect();
            equal_length = lengths.len() == 1;
            b.per_length = match lengths.first() {
                Some(&l) if equal_length => vec![(l, b.all)],
                _ => vec![],
            };
            b.equal_length = EqualLengthEstimates {
                native_em: b.all.native_em,
                serial_em: b.all.serial_em,
                scr: b.all.scr,
            };
        }
        let mut cell = Cell {
            snapshot,
            model,
            domain,
            comparison,
            length: None,
        };
        for (length, est) in &b.per_length {
            cell.length = Some(*length);
            joint_rows(&cell, est, cfg.level, &mut rows)?;
        }
        cell.length = None;
        joint_rows(&cell, &b.all, cfg.level, &mut rows)?;
        let eq = &b.equal_length;
        if equal_length {
            rows.push(cell.estimate(Metric::NativeEmEqualLength, None, &eq.native_em));
            rows.push(cell.estimate(Metric::SerialEmEqualLength, None, &eq.serial_em));
            rows.push(cell.estimate(Metric::ScrEqualLength, None, &eq.scr));
            if eq.scr.value.is_some() {
                rows.push(cell.dropped(Metric::ScrEqualLengthBootstrapDropped, &eq.scr));
            }
        }
        let m = McNemar::of(&b.all.table);
        rows.push(MetricRow {
            value: Some(m.p_value),
            numerator: Some(m.native_only),
            denominator: Some(m.discordant()),
            ..cell.row(Metric::McnemarP)
        });
        tests.push(Test {
            model: model.to_string(),
            domain,
            comparison: comparison.clone(),
            p: m.p_value,
            row: rows.len() - 1,
        });
    }

    // Holm families.
    let declared = families_in_force(&cfg.families);
    type HolmKey = (usize, Option<String>, Option<Domain>);
    let mut families: BTreeMap<HolmKey, Vec<usize>> = BTreeMap::new();
    for (i, t) in tests.iter().enumerate() {
        if let Some(key) = holm_cell(&declared, &t.comparison, &t.model, t.domain) {
            families.entry(key).or_default().push(i);
        }
    }
    for members in families.values() {
        let p: Vec<f64> = members.iter().map(|&i| tests[i].p).collect();
        for (&i, adjusted) in members.iter().zip(holm(&p)?) {
            let base = &rows[tests[i].row];
            rows.push(MetricRow {
                metric: Metric::McnemarPHolm,
                value: Some(adjusted),
                numerator: None,
                denominator: Some(members.len() as u64),
                ..base.clone()
            });
        }
    }
    sort_rows(&mut rows);
    Ok(rows)
}

/// Independence-reference rows (`length` = the group's length, `comparison` = the arm label)
/// for Independent and TeacherForced trajectories: `items`, `position_accuracy_<t>`,
/// `string_em`, `independence_reference` and `em_minus_reference` (paired bootstrap within
/// the length).
pub fn independence_metrics(
    trajectories: &[Trajectory],
    cfg: &StatsConfig,
    snapshot: u64,
) -> Result<Vec<MetricRow>, StatsError> {
    cfg.validate()?;
    independence_rows(
        independence_estimates(trajectories, &cfg.bootstrap(), cfg.level)?,
        snapshot,
    )
}

/// [`independence_metrics`] from pattern counts per group.
pub fn independence_metrics_counts(
    groups: &BTreeMap<LocalGroup, PatternCounts>,
    cfg: &StatsConfig,
    snapshot: u64,
) -> Result<Vec<MetricRow>, StatsError> {
    cfg.validate()?;
    independence_rows(
        independence_estimates_counts(groups, &cfg.bootstrap(), cfg.level)?,
        snapshot,
    )
}

/// [`independence_metrics`] on a conditional population per group (D.10's Native-correct
/// items; [`independence_estimates_within`]): the same rows, over the population's items.
pub fn independence_metrics_within(
    groups: &BTreeMap<LocalGroup, PopulationCounts>,
    cfg: &StatsConfig,
    snapshot: u64,
) -> Result<Vec<MetricRow>, StatsError> {
    cfg.validate()?;
    independence_rows(
        independence_estimates_within(groups, &cfg.bootstrap(), cfg.level)?,
        snapshot,
    )
}

fn independence_rows(
    estimates: Vec<(LocalGroup, IndependenceEstimate)>,
    snapshot: u64,
) -> Result<Vec<MetricRow>, StatsError> {
    let mut rows = Vec::new();
    for (g, e) in estimates {
        let length = u32::try_from(g.length).map_err(|_| StatsError::LengthOutOfRange(g.length))?;
        let cell = Cell {
            snapshot,
            model: &g.model,
            domain: g.domain,
            comparison: &g.arm,
            length: Some(length),
        };
        let n = e.point.items;
        rows.push(cell.count(Metric::Items, n, n));
        for (t, (&k, &c)) in e
            .point
            .position_correct
            .iter()
            .zip(&e.point.position_accuracy)
            .enumerate()
        {
            rows.push(MetricRow {
                value: Some(c),
                numerator: Some(k),
                denominator: Some(n),
                ..cell.row(Metric::PositionAccuracy(t as u32 + 1))
            });
        }
        rows.push(cell.estimate(
            Metric::StringEm,
            Some(Ratio::new(e.point.string_correct, n)),
            &e.string_em,
        ));
        rows.push(cell.estimate(Metric::IndependenceReference, None, &e.reference));
        rows.push(cell.estimate(Metric::EmMinusReference, None, &e.difference));
    }
    sort_rows(&mut rows);
    Ok(rows)
}

/// Confidence rows of completed strings (point values; `length = None`, `comparison` = the
/// arm label) per (model, domain, arm) for trajectories that carry a confidence composite:
/// `brier_<score>`, `ece_<score>`, `auroc_<score>`, `ap_<score>` for the three scores, and the
/// baselines `auroc_negative_length`, `ap_negative_length`, `prevalence`, `brier_prevalence`,
/// `ap_prevalence`.
pub fn calibration_metrics(
    trajectories: &[Trajectory],
    snapshot: u64,
) -> Result<Vec<MetricRow>, StatsError> {
    let mut groups = ConfidenceCounts::new();
    for t in trajectories {
        if let Some(k) = ConfidenceKey::of(t) {
            *groups
                .entry((t.model.clone(), t.domain, t.arm.to_string()))
                .or_default()
                .entry(k)
                .or_default() += 1;
        }
    }
    calibration_metrics_counts(&groups, snapshot)
}

/// Confidence keys counted per (model, domain, arm).
pub type ConfidenceCounts = BTreeMap<(String, Domain, String), BTreeMap<ConfidenceKey, u64>>;

/// [`calibration_metrics`] from confidence-key counts. Its cost grows with the number of
/// distinct confidence keys, which for continuous scores is close to the number of strings:
/// AUROC and AP need the whole distribution of distinct scores (the one statistic family that
/// counts cannot shrink).
pub fn calibration_metrics_counts(
    groups: &ConfidenceCounts,
    snapshot: u64,
) -> Result<Vec<MetricRow>, StatsError> {
    let mut rows = Vec::new();
    for ((model, domain, arm), counts) in groups {
        if counts.values().all(|&k| k == 0) {
            continue;
        }
        let cell = Cell {
            snapshot,
            model,
            domain: *domain,
            comparison: arm,
            length: None,
        };
        let mut baselines_done = false;
        for kind in ScoreKind::ALL {
            let r = calibration_report_counts(counts, kind)?;
            rows.push(cell.point(Metric::Score(ScoreStat::Brier, kind), r.brier));
            rows.push(cell.point(Metric::Score(ScoreStat::Ece, kind), r.reliability.ece));
            rows.push(cell.point(Metric::Score(ScoreStat::Auroc, kind), r.ranking.auroc));
            rows.push(cell.point(
                Metric::Score(ScoreStat::Ap, kind),
                r.ranking.average_precision,
            ));
            if !baselines_done {
                baselines_done = true;
                rows.push(cell.point(Metric::AurocNegativeLength, r.negative_length.auroc));
                rows.push(cell.point(
                    Metric::ApNegativeLength,
                    r.negative_length.average_precision,
                ));
                rows.push(MetricRow {
                    value: r.prevalence.map(|p| p.prevalence),
                    numerator: Some(r.positives),
                    denominator: Some(r.n),
                    ..cell.row(Metric::Prevalence)
                });
                rows.push(cell.point(Metric::BrierPrevalence, r.prevalence.map(|p| p.brier)));
                rows.push(cell.point(
                    Metric::ApPrevalence,
                    r.prevalence.map(|p| p.average_precision),
                ));
            }
        }
    }
    sort_rows(&mut rows);
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sort_by_key_then_metric_order() {
        let cell = |length: Option<u32>| Cell {
            snapshot: 0,
            model: "m",
            domain: Domain::Lexical,
            comparison: "Independent/Full/code",
            length,
        };
        let mut rows = vec![
            cell(None).row(Metric::Scr),
            cell(Some(12)).row(Metric::PositionAccuracy(10)),
            cell(Some(12)).row(Metric::StringEm),
            cell(Some(12)).row(Metric::PositionAccuracy(2)),
            cell(Some(3)).row(Metric::NativeEm),
            cell(Some(3)).row(Metric::Both),
        ];
        sort_rows(&mut rows);
        let order: Vec<(Option<u32>, Metric)> = rows.iter().map(|r| (r.length, r.metric)).collect();
        assert_eq!(
            order,
            [
                (Some(3), Metric::Both),
                (Some(3), Metric::NativeEm),
                (Some(12), Metric::StringEm),
                (Some(12), Metric::PositionAccuracy(2)),
                (Some(12), Metric::PositionAccuracy(10)),
                (None, Metric::Scr),
            ]
        );
    }
}
