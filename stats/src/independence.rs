//! The empirical independence reference R = Π_t c_t (paper §3.4, D.10): within one
//! model/domain/arm/length group of local trajectories (Independent or TeacherForced), c_t is
//! the mean observed correctness at position t over items, and R is what string EM would be
//! if position errors were independent and items homogeneous. Observed string EM − R reflects
//! error dependence and item heterogeneity. Outcomes are binary observed correctness, never
//! reported model probabilities.

use std::collections::BTreeMap;

use c2s_records::{Arm, Domain, LabeledArm, Trajectory};
use serde::{Deserialize, Serialize};

use crate::bootstrap::{bootstrap, BootstrapConfig, Estimate, StratifiedSample};
use crate::error::StatsError;
use crate::intervals::check_level;

/// Point values of the reference for one group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndependenceReference {
    /// Number of items n in the group (the denominator of every c_t and of string EM).
    pub items: u64,
    /// Items correct at each position t = 1..=L (numerators of c_t).
    pub position_correct: Vec<u64>,
    /// c_t = position_correct[t] / items.
    pub position_accuracy: Vec<f64>,
    /// R = Π_t c_t.
    pub reference: f64,
    /// Items whose whole string is correct.
    pub string_correct: u64,
    /// Observed string EM.
    pub string_em: f64,
}

impl IndependenceReference {
    /// Observed string EM − R.
    pub fn difference(&self) -> f64 {
        self.string_em - self.reference
    }

    /// From per-item position correctness (all of the same length) and string correctness.
    /// `None` for no items. Errors when an item's position count differs from the first's.
    pub fn from_items<'a, I>(items: I) -> Result<Option<IndependenceReference>, StatsError>
    where
        I: IntoIterator<Item = (&'a str, &'a [bool], bool)>,
    {
        let mut length: Option<usize> = None;
        let mut patterns = PatternCounts::new();
        for (id, positions, correct) in items {
            let expected = *length.get_or_insert(positions.len());
            if positions.len() != expected {
                return Err(StatsError::PositionCount {
                    item_id: id.to_string(),
                    expected,
                    found: positions.len(),
                });
            }
            *patterns.entry((positions.to_vec(), correct)).or_default() += 1;
        }
        match length {
            Some(length) => IndependenceReference::from_counts(length, &patterns),
            None => Ok(None),
        }
    }
}

/// Whether the reference is defined for a trajectory's arm (Independent, TeacherForced).
pub fn is_reference_arm(arm: &LabeledArm) -> bool {
    matches!(arm.kind(), Arm::Independent | Arm::TeacherForced)
}

/// One model/domain/arm/length group.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LocalGroup {
    /// The model the trajectories were run with.
    pub model: String,
    /// The task domain (arithmetic, lexical, …).
    pub domain: Domain,
    /// The arm label (`ArmSpec::label`), Independent or TeacherForced.
    pub arm: String,
    /// The target length L in characters, the number of positions per trajectory.
    pub length: usize,
}

impl LocalGroup {
    /// The group of a trajectory, read from its model, domain, arm and length.
    pub fn of(t: &Trajectory) -> LocalGroup {
        LocalGroup {
            model: t.model.clone(),
            domain: t.domain,
            arm: t.arm.to_string(),
            length: t.length,
        }
    }

    /// The group as `model/domain/arm/L<length>`, used in error messages.
    pub fn label(&self) -> String {
        format!(
            "{}/{}/{}/L{}",
            self.model, self.domain, self.arm, self.length
        )
    }
}

/// Checks one group of trajectories: same model/domain/arm/length, one position outcome per
/// position, unique item ids.
fn check_group(trajectories: &[&Trajectory]) -> Result<(), StatsError> {
    let Some(first) = trajectories.first() else {
        return Ok(());
    };
    let group = LocalGroup::of(first);
    let mut ids: Vec<&str> = Vec::with_capacity(trajectories.len());
    for t in trajectories {
        if t.model != group.model
            || t.domain != group.domain
            || t.arm != group.arm
            || t.length != group.length
        {
            return Err(StatsError::MixedGroup {
                group: group.label(),
                item_id: t.item_id.clone(),
            });
        }
        if t.position_correct.len() != t.length {
            return Err(StatsError::PositionCount {
                item_id: t.item_id.clone(),
                expected: t.length,
                found: t.position_correct.len(),
            });
        }
        ids.push(&t.item_id);
    }
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(StatsError::DuplicateItem {
            group: group.label(),
            item_id: w[0].to_string(),
        });
    }
    Ok(())
}

/// The reference of one group of local trajectories (one model, domain, arm and length).
pub fn independence_reference(
    trajectories: &[Trajectory],
) -> Result<Option<IndependenceReference>, StatsError> {
    let refs: Vec<&Trajectory> = trajectories.iter().collect();
    check_group(&refs)?;
    IndependenceReference::from_items(
        refs.iter()
            .map(|t| (t.item_id.as_str(), t.position_correct.as_slice(), t.correct)),
    )
}

/// The reference with paired bootstrap intervals: every draw resamples items (one length, so
/// one stratum) and recomputes all c_t, R, string EM and EM − R together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndependenceEstimate {
    /// Point values on the observed items.
    pub point: IndependenceReference,
    /// R = Π_t c_t with its bootstrap interval.
    pub reference: Estimate,
    /// Observed string EM with its bootstrap interval.
    pub string_em: Estimate,
    /// String EM − R, paired within each draw, with its bootstrap interval.
    pub difference: Estimate,
}

/// Counts of one group's items by (position pattern, string correctness): the sufficient
/// statistics of its reference and of its bootstrap.
pub type PatternCounts = BTreeMap<(Vec<bool>, bool), u64>;

impl IndependenceReference {
    /// From pattern counts (every pattern of `length` positions). `None` for no items.
    pub fn from_counts(
        length: usize,
        patterns: &PatternCounts,
    ) -> Result<Option<IndependenceReference>, StatsError> {
        let mut position_correct = vec![0u64; length];
        let (mut n, mut string_correct) = (0u64, 0u64);
        for ((positions, correct), &k) in patterns {
            if positions.len() != length {
                return Err(StatsError::PositionCount {
                    item_id: format!("(a pattern of {k} items)"),
                    expected: length,
                    found: positions.len(),
                });
            }
            for (c, &p) in position_correct.iter_mut().zip(positions) {
                *c += k * u64::from(p);
            }
            n += k;
            string_correct += k * u64::from(*correct);
        }
        if n == 0 {
            return Ok(None);
        }
        let nf = n as f64;
        let position_accuracy: Vec<f64> = position_correct.iter().map(|&c| c as f64 / nf).collect();
        Ok(Some(IndependenceReference {
            items: n,
            reference: position_accuracy.iter().product(),
            position_accuracy,
            position_correct,
            string_correct,
            string_em: string_correct as f64 / nf,
        }))
    }
}

/// Groups local trajectories of reference arms (Independent, TeacherForced) by
/// model/domain/arm/length and estimates each group's reference with bootstrap intervals.
/// Other arms are ignored. Errors on a mixed group, a wrong position count or a repeated item.
pub fn independence_estimates(
    trajectories: &[Trajectory],
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<Vec<(LocalGroup, IndependenceEstimate)>, StatsError> {
    check_level(level)?;
    let mut groups: BTreeMap<LocalGroup, Vec<&Trajectory>> = BTreeMap::new();
    for t in trajectories.iter().filter(|t| is_reference_arm(&t.arm)) {
        groups.entry(LocalGroup::of(t)).or_default().push(t);
    }
    let mut counts: BTreeMap<LocalGroup, PatternCounts> = BTreeMap::new();
    for (group, members) in groups {
        check_group(&members)?;
        let patterns = counts.entry(group).or_default();
        for t in members {
            *patterns
                .entry((t.position_correct.clone(), t.correct))
                .or_default() += 1;
        }
    }
    independence_estimates_counts(&counts, cfg, level)
}

/// [`independence_estimates`] from pattern counts per group. Each distinct pattern is one
/// bootstrap code (one stratum per group: a group has one length), so a draw costs
/// O(patterns × length), whatever the number of items.
pub fn independence_estimates_counts(
    groups: &BTreeMap<LocalGroup, PatternCounts>,
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<Vec<(LocalGroup, IndependenceEstimate)>, StatsError> {
    let everyone: BTreeMap<LocalGroup, PopulationCounts> = groups
        .iter()
        .map(|(g, patterns)| {
            let counts = patterns
                .iter()
                .map(|((p, c), &k)| ((p.clone(), *c, true), k))
                .collect();
            (g.clone(), counts)
        })
        .collect();
    independence_estimates_within(&everyone, cfg, level)
}

/// Counts of one group's items by (position pattern, string correctness, whether the item is
/// in the population): D.10's populations ("with all-items and Native-correct populations").
pub type PopulationCounts = BTreeMap<(Vec<bool>, bool, bool), u64>;

/// The reference of each group on a conditional population (D.10's Native-correct items):
/// every draw resamples all of the group's items and recomputes the population with c_t, R,
/// EM and EM − R together (D.10: "all position means, products, EM and conditional
/// denominators are recomputed together"); a draw whose population is empty is dropped. Groups
/// with no item in the population are left out.
pub fn independence_estimates_within(
    groups: &BTreeMap<LocalGroup, PopulationCounts>,
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<Vec<(LocalGroup, IndependenceEstimate)>, StatsError> {
    check_level(level)?;
    let mut out = Vec::with_capacity(groups.len());
    for (group, patterns) in groups {
        let length = group.length;
        let mut inside = PatternCounts::new();
        for ((p, c, member), &k) in patterns {
            if *member {
                *inside.entry((p.clone(), *c)).or_default() += k;
            }
        }
        let Some(point) = IndependenceReference::from_counts(length, &inside)? else {
            continue;
        };
        let codes: Vec<(&[bool], bool, bool)> = patterns
            .keys()
            .map(|(p, c, member)| (p.as_slice(), *c, *member))
            .collect();
        let sample = StratifiedSample::from_counts(
            codes.len(),
            [(0u32, patterns.values().copied().collect())],
        )?;
        let draws = bootstrap(&sample, cfg, 3, |counts, out| {
            let members = || {
                codes
                    .iter()
                    .zip(counts.stratum(0))
                    .filter(|((_, _, member), _)| *member)
            };
            let n: u32 = members().map(|(_, &k)| k).sum();
            if n == 0 {
                return;
            }
            let n = f64::from(n);
            let mut reference = 1.0;
            for t in 0..length {
                let correct_t: u32 = members()
                    .filter(|((p, _, _), _)| p[t])
                    .map(|(_, &k)| k)
                    .sum();
                reference *= f64::from(correct_t) / n;
            }
            let em: u32 = members()
                .filter(|((_, correct, _), _)| *correct)
                .map(|(_, &k)| k)
                .sum();
            let em = f64::from(em) / n;
            out[0] = Some(reference);
            out[1] = Some(em);
            out[2] = Some(em - reference);
        })?;
        out.push((
            group.clone(),
            IndependenceEstimate {
                point,
                reference: draws[0].estimate(level),
                string_em: draws[1].estimate(level),
                difference: draws[2].estimate(level),
            },
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_by_hand() {
        // Four items of length 3. Positions: c = (3/4, 2/4, 4/4); R = 0.375; EM = 1/4.
        let rows: [(&str, [bool; 3], bool); 4] = [
            ("a", [true, true, true], true),
            ("b", [true, false, true], false),
            ("c", [false, true, true], false),
            ("d", [true, false, true], false),
        ];
        let r = IndependenceReference::from_items(
            rows.iter().map(|(id, p, c)| (*id, p.as_slice(), *c)),
        )
        .unwrap()
        .unwrap();
        assert_eq!(r.position_correct, vec![3, 2, 4]);
        assert_eq!(r.position_accuracy, vec![0.75, 0.5, 1.0]);
        assert_eq!(r.reference, 0.375);
        assert_eq!(r.string_em, 0.25);
        assert_eq!(r.difference(), -0.125);
        let none = IndependenceReference::from_items(std::iter::empty()).unwrap();
        assert_eq!(none, None);
        let bad = IndependenceReference::from_items([
            ("a", [true].as_slice(), true),
            ("b", [true, false].as_slice(), false),
        ]);
        assert!(matches!(bad, Err(StatsError::PositionCount { .. })));
    }

    #[test]
    fn reference_arms() {
        let arm = |l: &str| LabeledArm::parse(l).unwrap();
        assert!(is_reference_arm(&arm("Independent/Full/code")));
        assert!(is_reference_arm(&arm("TeacherForced/UnionFill/code")));
        assert!(!is_reference_arm(&arm("Serial/Full/code")));
        assert!(!is_reference_arm(&arm("Native/code")));
    }

    /// D.10's Native-correct population: only members enter the point values, and every draw
    /// recomputes the population (its denominator varies between draws); with every item a
    /// member the estimates are the all-items ones.
    #[test]
    fn a_conditional_population_recomputes_its_denominator() {
        let group = LocalGroup {
            model: "m".into(),
            domain: Domain::Lexical,
            arm: "Independent/Full/code".into(),
            length: 2,
        };
        let all: PatternCounts = BTreeMap::from([
            ((vec![true, true], true), 6),
            ((vec![true, false], false), 4),
            ((vec![false, false], false), 10),
        ]);
        // Members: the 6 correct strings and the 4 half-right ones; non-members: the rest.
        let within: PopulationCounts = all
            .iter()
            .map(|((p, c), &k)| ((p.clone(), *c, p[0]), k))
            .collect();
        let cfg = BootstrapConfig {
            draws: 2000,
            seed: 3,
            threads: 0,
        };
        let e =
            independence_estimates_within(&BTreeMap::from([(group.clone(), within)]), &cfg, 0.95)
                .unwrap();
        let (_, e) = &e[0];
        assert_eq!(e.point.items, 10);
        assert_eq!(e.point.position_accuracy, vec![1.0, 0.6]);
        assert!((e.point.reference - 0.6).abs() < 1e-12);
        assert_eq!(e.point.string_em, 0.6);
        assert_eq!(e.string_em.defined_draws, 2000);
        // The population's string EM equals its second position's accuracy in every draw, so
        // EM − R is exactly zero, draw by draw.
        let d = e.difference.interval.unwrap();
        assert!(d.low.abs() < 1e-12 && d.high.abs() < 1e-12, "{d:?}");
        assert!(e.string_em.interval.unwrap().low < 0.6);

        let everyone =
            independence_estimates_counts(&BTreeMap::from([(group, all)]), &cfg, 0.95).unwrap();
        assert_eq!(everyone[0].1.point.items, 20);
        assert_eq!(everyone[0].1.point.string_em, 0.3);
    }
}
