//! The sufficient statistics of a snapshot: every metric of `metrics/` is a function
//! of counts, so the live stage and `choice2seq stats` keep counts, not items.
//!
//! - Paired metrics: the joint table (4 cells) per (model, domain, comparison, length). The
//!   stratified whole-item bootstrap of a group is a multinomial draw per length over these
//!   counts ([`crate::bootstrap`]).
//! - Independence reference: counts of (position pattern, string correctness) per
//!   model/domain/arm/length group; each distinct pattern is a bootstrap code.
//! - Calibration: counts of (three scores, length, correctness) per model/domain/arm. Scores
//!   are continuous, so this is the one family whose state grows with the number of distinct
//!   completed strings: AUROC and AP need every distinct score (the "exact per-item path" the
//!   issue allows, kept exact rather than binned).
//!
//! A [`StatsKey`] names one counted cell; [`StatsCounts::update`] adds a signed difference, so
//! retractions (a corrected or resumed item) are exact. Counts are kept in ordered maps, so a
//! snapshot does not depend on the order updates arrived in: live (any worker count, any
//! kill/resume sequence) and offline recomputation give bit-identical rows.
//!
//! What counts cannot check: that an item occurs once per group. Offline,
//! [`StatsCounts::from_records`] checks it (it sees item ids); live, the pipeline guarantees it
//! (item ids are de-duplicated at validation, and a resumed run skips the outcomes and
//! trajectories it seeded from disk).

use std::collections::{BTreeMap, BTreeSet};

use c2s_records::{Domain, PairedOutcome, Trajectory};
use serde::{Deserialize, Serialize};

use crate::calibration::ConfidenceKey;
use crate::error::StatsError;
use crate::independence::{is_reference_arm, LocalGroup, PatternCounts};
use crate::joint::{JointCell, JointTable};
use crate::metrics::{
    calibration_metrics_counts, comparison_label, independence_metrics_counts,
    paired_metrics_counts, sort_rows, ConfidenceCounts, MetricRow, PairedCounts, StatsConfig,
};

/// One counted cell.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum StatsKey {
    /// A paired outcome: its group, length, semantic gold pattern (its stratum, A.6) and
    /// joint cell ([`JointCell::code`]).
    Paired {
        /// The model the outcome was run with.
        model: String,
        /// The task domain of the item.
        domain: Domain,
        /// The comparison label `"<native arm> vs <serial arm>"` ([`comparison_label`]).
        comparison: String,
        /// The item's target length L in characters, its natural bootstrap stratum.
        length: u32,
        #[serde(default)]
        /// Semantic-bridge items: the gold Boolean pattern (`101`), which replaces length as the
        /// stratum; `None` otherwise.
        pattern: Option<String>,
        /// The joint cell's 2-bit code (0 both, 1 native_only, 2 serial_only, 3 neither).
        cell: u8,
    },
    /// A local trajectory of a reference arm (Independent, TeacherForced).
    Local {
        /// The trajectory's model/domain/arm/length group.
        group: LocalGroup,
        /// Per-position observed correctness, one entry per position t = 1..=L.
        positions: Vec<bool>,
        /// Whether the whole string was correct.
        correct: bool,
    },
    /// A completed string with a confidence composite.
    Confidence {
        /// The model the string was produced by.
        model: String,
        /// The task domain of the item.
        domain: Domain,
        /// The arm label (`ArmSpec::label`) that produced the string.
        arm: String,
        /// The string's three scores, length and correctness.
        key: ConfidenceKey,
    },
}

impl StatsKey {
    /// The key of a paired outcome.
    pub fn of_outcome(o: &PairedOutcome) -> Result<StatsKey, StatsError> {
        Ok(StatsKey::Paired {
            model: o.model.clone(),
            domain: o.domain,
            comparison: comparison_label(&o.native_arm, &o.serial_arm),
            length: u32::try_from(o.length).map_err(|_| StatsError::LengthOutOfRange(o.length))?,
            pattern: o.pattern.clone(),
            cell: JointCell::of(o.native_correct, o.serial_correct).code(),
        })
    }

    /// The keys of a trajectory: its local pattern (reference arms) and its confidence key
    /// (when it has a composite); none for other trajectories. Errors when the per-position
    /// outcomes of a reference arm do not match its length.
    pub fn of_trajectory(t: &Trajectory) -> Result<Vec<StatsKey>, StatsError> {
        let mut keys = Vec::new();
        if is_reference_arm(&t.arm) {
            if t.position_correct.len() != t.length {
                return Err(StatsError::PositionCount {
                    item_id: t.item_id.clone(),
                    expected: t.length,
                    found: t.position_correct.len(),
                });
            }
            keys.push(StatsKey::Local {
                group: LocalGroup::of(t),
                positions: t.position_correct.clone(),
                correct: t.correct,
            });
        }
        if let Some(key) = ConfidenceKey::of(t) {
            keys.push(StatsKey::Confidence {
                model: t.model.clone(),
                domain: t.domain,
                arm: t.arm.to_string(),
                key,
            });
        }
        Ok(keys)
    }

    /// Whether the key counts a paired outcome.
    pub fn is_outcome(&self) -> bool {
        matches!(self, StatsKey::Paired { .. })
    }
}

/// Every count a snapshot needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsCounts {
    paired: PairedCounts,
    local: BTreeMap<LocalGroup, PatternCounts>,
    confidence: ConfidenceCounts,
}

fn add(count: &mut u64, diff: i64, key: &StatsKey) -> Result<(), StatsError> {
    *count = count
        .checked_add_signed(diff)
        .ok_or_else(|| StatsError::NegativeCount(format!("{key:?}")))?;
    Ok(())
}

impl StatsCounts {
    /// Empty counts: a snapshot with no outcome and no trajectory.
    pub fn new() -> StatsCounts {
        StatsCounts::default()
    }

    /// Adds `diff` (negative: a retraction) to the cell of `key`. Cells, patterns and groups
    /// that reach zero are removed, so the state is the same whatever was added and retracted
    /// on the way. Errors, leaving the counts unchanged, when a count would become negative.
    pub fn update(&mut self, key: &StatsKey, diff: i64) -> Result<(), StatsError> {
        if diff == 0 {
            return Ok(());
        }
        match key {
            StatsKey::Paired {
                model,
                domain,
                comparison,
                length,
                pattern,
                cell,
            } => {
                let group = (model.clone(), *domain, comparison.clone());
                let tables = self.paired.entry(group.clone()).or_default();
                let stratum = (*length, pattern.clone());
                let table = tables.entry(stratum.clone()).or_default();
                let result = match table.get_mut(usize::from(*cell)) {
                    Some(slot) => add(slot, diff, key),
                    None => Err(StatsError::CodeOutOfRange { code: *cell, k: 4 }),
                };
                if table.iter().all(|&k| k == 0) {
                    tables.remove(&stratum);
                }
                if tables.is_empty() {
                    self.paired.remove(&group);
                }
                result?;
            }
            StatsKey::Local {
                group,
                positions,
                correct,
            } => {
                let patterns = self.local.entry(group.clone()).or_default();
                let pattern = (positions.clone(), *correct);
                let slot = patterns.entry(pattern.clone()).or_default();
                let result = add(slot, diff, key);
                if *slot == 0 {
                    patterns.remove(&pattern);
                }
                if patterns.is_empty() {
                    self.local.remove(group);
                }
                result?;
            }
            StatsKey::Confidence {
                model,
                domain,
                arm,
                key: ck,
            } => {
                let group = (model.clone(), *domain, arm.clone());
                let keys = self.confidence.entry(group.clone()).or_default();
                let slot = keys.entry(*ck).or_default();
                let result = add(slot, diff, key);
                if *slot == 0 {
                    keys.remove(ck);
                }
                if keys.is_empty() {
                    self.confidence.remove(&group);
                }
                result?;
            }
        }
        Ok(())
    }

    /// Counts of a run's records, with the checks counts alone cannot make: an item occurs at
    /// most once per paired group and per trajectory group.
    pub fn from_records(
        outcomes: &[PairedOutcome],
        trajectories: &[Trajectory],
    ) -> Result<StatsCounts, StatsError> {
        let mut counts = StatsCounts::new();
        let mut seen: BTreeSet<(&str, Domain, String, &str)> = BTreeSet::new();
        for o in outcomes {
            let comparison = comparison_label(&o.native_arm, &o.serial_arm);
            if !seen.insert((&o.model, o.domain, comparison.clone(), &o.item_id)) {
                return Err(StatsError::DuplicateItem {
                    group: format!("{}/{}/{comparison}", o.model, o.domain),
                    item_id: o.item_id.clone(),
                });
            }
            counts.update(&StatsKey::of_outcome(o)?, 1)?;
        }
        let mut seen: BTreeSet<(&str, Domain, &str, &str)> = BTreeSet::new();
        for t in trajectories {
            let keys = StatsKey::of_trajectory(t)?;
            if keys.is_empty() {
                continue;
            }
            if !seen.insert((&t.model, t.domain, &t.arm, &t.item_id)) {
                return Err(StatsError::DuplicateItem {
                    group: format!("{}/{}/{}", t.model, t.domain, t.arm),
                    item_id: t.item_id.clone(),
                });
            }
            for k in &keys {
                counts.update(k, 1)?;
            }
        }
        Ok(counts)
    }

    /// Adds every count of `other` (e.g. another run directory of other models).
    pub fn merge(&mut self, other: &StatsCounts) -> Result<(), StatsError> {
        for (key, n) in other.cells() {
            self.update(&key, n as i64)?;
        }
        Ok(())
    }

    /// Every nonzero cell with its count, in key order.
    pub fn cells(&self) -> impl Iterator<Item = (StatsKey, u64)> + '_ {
        let paired = self.paired.iter().flat_map(|((m, d, c), tables)| {
            tables.iter().flat_map(move |((length, pattern), t)| {
                t.iter()
                    .enumerate()
                    .filter(|(_, &n)| n > 0)
                    .map(move |(cell, &n)| {
                        (
                            StatsKey::Paired {
                                model: m.clone(),
                                domain: *d,
                                comparison: c.clone(),
                                length: *length,
                                pattern: pattern.clone(),
                                cell: cell as u8,
                            },
                            n,
                        )
                    })
            })
        });
        let local = self.local.iter().flat_map(|(group, patterns)| {
            patterns.iter().map(move |((positions, correct), &n)| {
                (
                    StatsKey::Local {
                        group: group.clone(),
                        positions: positions.clone(),
                        correct: *correct,
                    },
                    n,
                )
            })
        });
        let confidence = self.confidence.iter().flat_map(|((m, d, a), keys)| {
            keys.iter().map(move |(k, &n)| {
                (
                    StatsKey::Confidence {
                        model: m.clone(),
                        domain: *d,
                        arm: a.clone(),
                        key: *k,
                    },
                    n,
                )
            })
        });
        paired.chain(local).chain(confidence)
    }

    /// The joint tables per stratum (length, semantic pattern) of every paired group.
    pub fn paired(&self) -> &PairedCounts {
        &self.paired
    }

    /// Number of paired outcomes counted.
    pub fn outcomes(&self) -> u64 {
        self.paired
            .values()
            .flat_map(|t| t.values())
            .map(|c| c.iter().sum::<u64>())
            .sum()
    }

    /// Number of distinct counted cells (the size of the state).
    pub fn cell_count(&self) -> usize {
        self.paired.values().map(BTreeMap::len).sum::<usize>() * 4
            + self.local.values().map(BTreeMap::len).sum::<usize>()
            + self.confidence.values().map(BTreeMap::len).sum::<usize>()
    }

    /// Joint tables over all lengths per (model, domain, comparison): the console view.
    pub fn joint_tables(&self) -> BTreeMap<(String, Domain, String), JointTable> {
        self.paired
            .iter()
            .map(|(g, tables)| {
                let mut all = JointTable::default();
                for c in tables.values() {
                    all.merge(&JointTable::new(c[0], c[1], c[2], c[3]));
                }
                (g.clone(), all)
            })
            .collect()
    }

    /// Every metric row of a snapshot: paired metrics, the independence reference and
    /// calibration, in the documented order. The cost depends on the number of groups,
    /// lengths, patterns, distinct confidence keys and draws, not on the number of items.
    pub fn snapshot(&self, cfg: &StatsConfig, snapshot: u64) -> Result<Vec<MetricRow>, StatsError> {
        let mut rows = paired_metrics_counts(&self.paired, cfg, snapshot)?;
        rows.extend(independence_metrics_counts(&self.local, cfg, snapshot)?);
        if cfg.calibration {
            rows.extend(calibration_metrics_counts(&self.confidence, snapshot)?);
        }
        sort_rows(&mut rows);
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(id: &str, length: usize, native: bool, serial: bool) -> PairedOutcome {
        PairedOutcome {
            item_id: id.into(),
            domain: Domain::Arithmetic,
            length,
            model: "m".into(),
            native_arm: "Native/code".into(),
            serial_arm: "Serial/Full/code".into(),
            native_correct: native,
            serial_correct: serial,
            pattern: None,
        }
    }

    #[test]
    fn retraction_restores_the_state() {
        let a = outcome("a", 3, true, false);
        let b = outcome("b", 4, true, true);
        let mut counts = StatsCounts::from_records(std::slice::from_ref(&a), &[]).unwrap();
        let before = counts.clone();
        let kb = StatsKey::of_outcome(&b).unwrap();
        counts.update(&kb, 1).unwrap();
        assert_eq!(counts.outcomes(), 2);
        counts.update(&kb, -1).unwrap();
        assert_eq!(counts, before);
        // A retraction of something never counted is refused and changes nothing.
        assert!(matches!(
            counts.update(&kb, -1),
            Err(StatsError::NegativeCount(_))
        ));
        assert_eq!(counts, before);
    }

    #[test]
    fn duplicates_are_refused_offline() {
        let a = outcome("a", 3, true, false);
        assert!(matches!(
            StatsCounts::from_records(&[a.clone(), a], &[]),
            Err(StatsError::DuplicateItem { .. })
        ));
    }

    #[test]
    fn order_and_merging_do_not_change_the_snapshot() {
        let v: Vec<PairedOutcome> = (0..60)
            .map(|i| outcome(&format!("i{i}"), 3 + i % 4, i % 3 != 0, i % 5 < 2))
            .collect();
        let cfg = StatsConfig {
            bootstrap_draws: 200,
            ..Default::default()
        };
        let whole = StatsCounts::from_records(&v, &[]).unwrap();
        let mut rev = v.clone();
        rev.reverse();
        let mut merged = StatsCounts::from_records(&rev[..25], &[]).unwrap();
        merged
            .merge(&StatsCounts::from_records(&rev[25..], &[]).unwrap())
            .unwrap();
        assert_eq!(whole, merged);
        assert_eq!(
            whole.snapshot(&cfg, 1).unwrap(),
            merged.snapshot(&cfg, 1).unwrap()
        );
        // Rebuilding from the cells gives the same state.
        let mut rebuilt = StatsCounts::new();
        for (k, n) in whole.cells() {
            rebuilt.update(&k, n as i64).unwrap();
        }
        assert_eq!(rebuilt, whole);
        assert_eq!(whole.outcomes(), 60);
    }
}
