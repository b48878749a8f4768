//! Unit contrasts: paired differences between two conditions averaged within an independent
//! unit (a shared symbolic base or source, A.1), with a unit bootstrap and an exact
//! sign-permutation test.
//!
//! The symbolic panels report effects this way. B.4: "both operations are averaged within
//! base for inference" (the letter-minus-digit Serial contrast of Figure 5a). D.7: "All eight
//! configurations remain grouped by source in 9,999 bootstrap draws. Three average factor
//! contrasts per model share six-test Holm correction; exact sign-permutation distributions use
//! source-level differences."
//!
//! A unit's value on a side is the mean correctness of its trajectories on that side, so a
//! unit difference is `c/n_c − r/n_r`. The estimate is the mean unit difference; the interval
//! resamples units with replacement within strata (A.6: "Symbolic bases use length,
//! repetition and profile") and takes type-7 percentiles; the p-value is the exact two-sided
//! sign-flip test of the sum of unit differences: under the null each unit's difference keeps
//! or flips its sign with probability ½, and p = P(|Σ s_i d_i| ≥ |Σ d_i|). The differences are
//! rationals with a common denominator, so the null distribution is enumerated exactly over
//! integers (a convolution over units, not 2^n sign vectors).
//!
//! These statistics need the per-unit values (a unit's cells are not interchangeable between
//! units), so they are computed from trajectories, not from the snapshot counts: the one place
//! the statistics keep a per-item path, and the reason contrasts are computed offline
//! (`choice2seq contrasts`, the report), not in live snapshots.

use std::collections::{BTreeMap, BTreeSet};

use c2s_records::{Endpoint, Trajectory};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::StatsError;
use crate::hypothesis::holm;
use crate::intervals::{check_level, clopper_pearson, percentile_interval};

/// One unit's correct counts on the two sides of a contrast.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitCounts {
    /// The unit's id: the symbolic base or source (`base_id`), else the item id.
    pub unit: String,
    /// Bootstrap stratum of the unit.
    pub stratum: String,
    /// Trajectories of the unit on the compared side with a positive endpoint (correct or
    /// faithful).
    pub compared_correct: u64,
    /// Trajectories of the unit on the compared side with a value on the endpoint.
    pub compared_n: u64,
    /// Trajectories of the unit on the reference side with a positive endpoint.
    pub reference_correct: u64,
    /// Trajectories of the unit on the reference side with a value on the endpoint.
    pub reference_n: u64,
}

impl UnitCounts {
    /// `c/n_c − r/n_r`; `None` when a side is empty.
    pub fn difference(&self) -> Option<f64> {
        if self.compared_n == 0 || self.reference_n == 0 {
            return None;
        }
        Some(
            self.compared_correct as f64 / self.compared_n as f64
                - self.reference_correct as f64 / self.reference_n as f64,
        )
    }
}

/// A contrast's estimate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContrastEstimate {
    /// Units with both sides observed.
    pub units: u64,
    /// Units dropped because one side had no trajectory.
    pub incomplete_units: u64,
    /// Mean of the compared side's unit means.
    pub compared_mean: Option<f64>,
    /// Mean of the reference side's unit means.
    pub reference_mean: Option<f64>,
    /// Mean unit difference (compared − reference).
    pub difference: Option<f64>,
    /// Lower end of the stratified unit-bootstrap percentile interval of `difference`; `None` with
    /// no complete unit.
    pub ci_low: Option<f64>,
    /// Upper end of the same interval; `None` with no complete unit.
    pub ci_high: Option<f64>,
    /// Exact two-sided sign-permutation p-value.
    pub sign_p: Option<f64>,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Exact two-sided sign-flip p-value of integer unit differences `v`: the probability, over
/// independent fair signs, that |Σ s_i v_i| ≥ |Σ v_i|. 1 when every difference is 0.
pub fn sign_flip_p_integer(v: &[i64]) -> f64 {
    let observed: i64 = v.iter().sum::<i64>().abs();
    let total: i64 = v.iter().map(|x| x.abs()).sum();
    if total == 0 {
        return 1.0;
    }
    // dist[s + total] = P(Σ = s), by convolving one unit at a time.
    let width = (2 * total + 1) as usize;
    let mut dist = vec![0.0f64; width];
    dist[total as usize] = 1.0;
    let mut reach: i64 = 0;
    for &x in v {
        let a = x.abs();
        if a == 0 {
            continue;
        }
        let mut next = vec![0.0f64; width];
        let lo = (total - reach) as usize;
        let hi = (total + reach) as usize;
        for (i, &p) in dist.iter().enumerate().take(hi + 1).skip(lo) {
            if p == 0.0 {
                continue;
            }
            next[i + a as usize] += 0.5 * p;
            next[i - a as usize] += 0.5 * p;
        }
        dist = next;
        reach += a;
    }
    let p: f64 = dist
        .iter()
        .enumerate()
        .filter(|(i, _)| (*i as i64 - total).abs() >= observed)
        .map(|(_, p)| p)
        .sum();
    p.min(1.0)
}

/// The exact sign-flip p-value of the units' differences, scaled to integers over their
/// common denominator.
pub fn sign_flip_p(units: &[&UnitCounts]) -> Option<f64> {
    if units.is_empty() {
        return None;
    }
    // Each difference is (c·n_r − r·n_c) / (n_c·n_r); bring all to the lcm of denominators.
    let mut lcm: u64 = 1;
    for u in units {
        let d = u.compared_n * u.reference_n;
        lcm = lcm / gcd(lcm, d) * d;
        if lcm > 1 << 40 {
            return None;
        }
    }
    let v: Vec<i64> = units
        .iter()
        .map(|u| {
            let num = u.compared_correct as i64 * u.reference_n as i64
                - u.reference_correct as i64 * u.compared_n as i64;
            num * (lcm / (u.compared_n * u.reference_n)) as i64
        })
        .collect();
    // Keep the convolution small: divide by the gcd of the values.
    let g = v.iter().fold(0u64, |g, x| gcd(g, x.unsigned_abs()));
    let v: Vec<i64> = if g > 1 {
        v.iter().map(|x| x / g as i64).collect()
    } else {
        v
    };
    let total: i64 = v.iter().map(|x| x.abs()).sum();
    if total > 50_000_000 {
        return None;
    }
    Some(sign_flip_p_integer(&v))
}

/// `draws` bootstrap means of the values in `strata`: each draw resamples every stratum (in
/// the given order) with replacement, as many values as it holds, from one
/// `ChaCha8Rng::seed_from_u64(seed)` stream, and averages over all values.
pub(crate) fn stratified_mean_draws(strata: &[&[f64]], draws: u32, seed: u64) -> Vec<f64> {
    let n: usize = strata.iter().map(|s| s.len()).sum();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut values = Vec::with_capacity(draws as usize);
    for _ in 0..draws {
        let mut sum = 0.0;
        for ds in strata {
            for _ in 0..ds.len() {
                sum += ds[rng.random_range(0..ds.len())];
            }
        }
        values.push(sum / n as f64);
    }
    values
}

/// Estimate a contrast over `units`: mean difference, stratified unit-bootstrap percentile
/// interval (`draws` draws, `seed`, `level`) and the exact sign-flip p-value.
///
/// The bootstrap resamples, within each stratum (in sorted order), as many units as it holds,
/// uniformly with replacement, from one `ChaCha8Rng::seed_from_u64(seed)` stream.
pub fn unit_contrast(
    units: &[UnitCounts],
    draws: u32,
    seed: u64,
    level: f64,
) -> Result<ContrastEstimate, StatsError> {
    check_level(level)?;
    if draws == 0 {
        return Err(StatsError::ZeroDraws);
    }
    let complete: Vec<&UnitCounts> = units.iter().filter(|u| u.difference().is_some()).collect();
    let incomplete = (units.len() - complete.len()) as u64;
    let n = complete.len();
    if n == 0 {
        return Ok(ContrastEstimate {
            units: 0,
            incomplete_units: incomplete,
            compared_mean: None,
            reference_mean: None,
            difference: None,
            ci_low: None,
            ci_high: None,
            sign_p: None,
        });
    }
    let mean =
        |f: &dyn Fn(&UnitCounts) -> f64| complete.iter().map(|u| f(u)).sum::<f64>() / n as f64;
    let compared_mean = mean(&|u| u.compared_correct as f64 / u.compared_n as f64);
    let reference_mean = mean(&|u| u.reference_correct as f64 / u.reference_n as f64);
    let diffs: Vec<f64> = complete.iter().filter_map(|u| u.difference()).collect();
    let difference = diffs.iter().sum::<f64>() / n as f64;
    let mut strata: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (u, d) in complete.iter().zip(&diffs) {
        strata.entry(u.stratum.as_str()).or_default().push(*d);
    }
    let strata: Vec<&[f64]> = strata.values().map(Vec::as_slice).collect();
    let mut values = stratified_mean_draws(&strata, draws, seed);
    let ci = percentile_interval(&mut values, level);
    Ok(ContrastEstimate {
        units: n as u64,
        incomplete_units: incomplete,
        compared_mean: Some(compared_mean),
        reference_mean: Some(reference_mean),
        difference: Some(difference),
        ci_low: ci.map(|i| i.low),
        ci_high: ci.map(|i| i.high),
        sign_p: sign_flip_p(&complete),
    })
}

/// Which trajectories a side of a contrast or a cell holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selector {
    /// The arm label (`ArmSpec::label`) a trajectory must have.
    pub arm: String,
    /// The domain name (`Domain::as_str`) a trajectory must have; `None` accepts every domain.
    pub domain: Option<String>,
    /// The placement (`early` or `late`) a trajectory must have; `None` accepts any, including
    /// none.
    pub placement: Option<String>,
    /// The operation (`copy` or `reverse`) a trajectory must have; `None` accepts any, including
    /// none.
    pub operation: Option<String>,
}

impl Selector {
    /// Whether `t` is on this side: same arm, and same domain, placement and operation where given.
    pub fn matches(&self, t: &Trajectory) -> bool {
        t.arm == self.arm
            && self
                .domain
                .as_deref()
                .is_none_or(|d| t.domain.as_str() == d)
            && self
                .placement
                .as_deref()
                .is_none_or(|p| t.placement.map(|x| x.as_str()) == Some(p))
            && self
                .operation
                .as_deref()
                .is_none_or(|o| t.operation.map(|x| x.as_str()) == Some(o))
    }
}

/// A declared contrast: compared − reference, averaged within units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContrastSpec {
    /// The contrast's name, as the config declares it and rows report it.
    pub name: String,
    /// Selectors of the compared side (the minuend); a trajectory matching any of them counts.
    pub compared: Vec<Selector>,
    /// Selectors of the reference side (the subtrahend); a trajectory matching any of them counts.
    pub reference: Vec<Selector>,
    /// Holm family over every model; `None`: corrected alone.
    pub family: Option<String>,
    /// `(a − b) − (c − d)` given as compared `[a, d]`, reference `[b, c]`: the sides' mean
    /// difference is half of it, so the estimate and its interval are doubled; the sign-flip
    /// test of the unit differences is the same.
    #[serde(default)]
    pub difference_of_differences: bool,
    /// Gold EM or fidelity to the supplied plan; a trajectory without a value on the endpoint
    /// (fidelity on an arm without a plan) is not counted.
    #[serde(default)]
    pub endpoint: Endpoint,
}

/// A declared cell (D.8-style count).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellSpec {
    /// The cell's name, as the config declares it and rows report it.
    pub name: String,
    /// The trajectories counted in the cell.
    pub select: Selector,
    /// The whole-answer arm whose correct items are SCR's denominator.
    pub native: Option<String>,
}

/// One contrast of one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContrastRow {
    /// The model the contrast is estimated for.
    pub model: String,
    /// The contrast's declared name.
    pub contrast: String,
    /// The contrast's Holm family, corrected over every model; `None`: corrected alone.
    pub family: Option<String>,
    #[serde(flatten)]
    /// Mean unit difference with its interval (both doubled for a difference of differences)
    /// and the exact sign-flip p-value.
    pub estimate: ContrastEstimate,
    /// Holm-adjusted sign-flip p-value within the family (over every model).
    pub sign_p_holm: Option<f64>,
}

/// The Holm correction a contrast row belongs to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum HolmGroup {
    /// Its declared family, over every model.
    Family(String),
    /// No family: the contrast of one model, corrected alone.
    Alone {
        /// The model of the row.
        model: String,
        /// The contrast's declared name.
        contrast: String,
    },
}

impl ContrastRow {
    /// The Holm correction this row shares (its family over every model, or itself alone).
    pub fn holm_group(&self) -> HolmGroup {
        match &self.family {
            Some(f) => HolmGroup::Family(f.clone()),
            None => HolmGroup::Alone {
                model: self.model.clone(),
                contrast: self.contrast.clone(),
            },
        }
    }
}

/// One cell of one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRow {
    /// The model the cell is counted for.
    pub model: String,
    /// The cell's declared name.
    pub cell: String,
    /// The arm label of the cell's selector.
    pub arm: String,
    /// Trajectories selected.
    pub n: u64,
    /// Selected trajectories that are correct (gold exact match).
    pub correct: u64,
    /// With `native`: items the Native arm got right, and of those the ones the arm got right
    /// too (SCR = both / native_correct).
    pub native_correct: Option<u64>,
    /// Of the `native_correct` items, the ones the selected arm got right too; `None` without
    /// `native`.
    pub both: Option<u64>,
    /// SCR = both / native_correct; `None` without `native` or with no Native success.
    pub scr: Option<f64>,
    /// Exact two-sided Clopper–Pearson upper limit of SCR when no Native success was kept
    /// (D.7: "Exact 95% upper SCR limits for zero cells are 13.2% (0/26) …").
    pub scr_upper_zero: Option<f64>,
}

/// The unit of a trajectory: its symbolic base or source, or its semantic fact record, else the
/// item itself.
fn unit_of(t: &Trajectory) -> &str {
    t.base_id.as_deref().unwrap_or(&t.item_id)
}

/// A unit's bootstrap stratum: length, repetition and placement (A.6: "Symbolic bases use
/// length, repetition and profile"), and a semantic record's gold pattern ("Semantic bases use
/// gold pattern"), each kept only where every trajectory of the unit agrees (the
/// twelve-character sources hold both placements, so they form one stratum).
fn strata(trajectories: &[&Trajectory]) -> BTreeMap<String, String> {
    let mut parts: BTreeMap<&str, [BTreeSet<String>; 4]> = BTreeMap::new();
    for t in trajectories {
        let e = parts.entry(unit_of(t)).or_default();
        e[0].insert(format!("L{}", t.length));
        e[1].insert(match t.repeated {
            Some(true) => "repeated".into(),
            Some(false) => "distinct".into(),
            None => "-".into(),
        });
        e[2].insert(t.placement.map_or("-", |p| p.as_str()).to_string());
        e[3].insert(t.pattern.clone().unwrap_or_else(|| "-".into()));
    }
    parts
        .into_iter()
        .map(|(u, sets)| {
            let key: Vec<String> = sets
                .iter()
                .map(|s| match s.len() {
                    1 => s.iter().next().cloned().unwrap_or_default(),
                    _ => "*".into(),
                })
                .collect();
            (u.to_string(), key.join("/"))
        })
        .collect()
}

/// Every declared contrast and cell, per model, from trajectories. Contrasts of one family
/// share a Holm correction over all models.
pub fn contrast_tables(
    trajectories: &[Trajectory],
    contrasts: &[ContrastSpec],
    cells: &[CellSpec],
    draws: u32,
    seed: u64,
    level: f64,
) -> Result<(Vec<ContrastRow>, Vec<CellRow>), StatsError> {
    check_level(level)?;
    let mut by_model: BTreeMap<&str, Vec<&Trajectory>> = BTreeMap::new();
    for t in trajectories {
        by_model.entry(t.model.as_str()).or_default().push(t);
    }
    let mut rows = Vec::new();
    for (model, ts) in &by_model {
        let strata = strata(ts);
        for c in contrasts {
            let mut units: BTreeMap<&str, UnitCounts> = BTreeMap::new();
            for t in ts {
                let compared = c.compared.iter().any(|s| s.matches(t));
                let reference = c.reference.iter().any(|s| s.matches(t));
                if !compared && !reference {
                    continue;
                }
                let Some(value) = c.endpoint.of(t) else {
                    continue;
                };
                let unit = unit_of(t);
                let u = units.entry(unit).or_insert_with(|| UnitCounts {
                    unit: unit.to_string(),
                    stratum: strata.get(unit).cloned().unwrap_or_default(),
                    compared_correct: 0,
                    compared_n: 0,
                    reference_correct: 0,
                    reference_n: 0,
                });
                if compared {
                    u.compared_n += 1;
                    u.compared_correct += u64::from(value);
                }
                if reference {
                    u.reference_n += 1;
                    u.reference_correct += u64::from(value);
                }
            }
            let units: Vec<UnitCounts> = units.into_values().collect();
            let mut estimate = unit_contrast(&units, draws, seed, level)?;
            if c.difference_of_differences {
                for v in [
                    &mut estimate.difference,
                    &mut estimate.ci_low,
                    &mut estimate.ci_high,
                ] {
                    *v = v.map(|x| 2.0 * x);
                }
            }
            rows.push(ContrastRow {
                model: model.to_string(),
                contrast: c.name.clone(),
                family: c.family.clone(),
                estimate,
                sign_p_holm: None,
            });
        }
    }
    // Holm within each family (over every model); a contrast without a family alone.
    let mut families: BTreeMap<HolmGroup, Vec<usize>> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        if r.estimate.sign_p.is_some() {
            families.entry(r.holm_group()).or_default().push(i);
        }
    }
    for members in families.values() {
        let ps: Vec<f64> = members
            .iter()
            .filter_map(|&i| rows[i].estimate.sign_p)
            .collect();
        for (&i, adj) in members.iter().zip(holm(&ps)?) {
            rows[i].sign_p_holm = Some(adj);
        }
    }
    let mut cell_rows = Vec::new();
    for (model, ts) in &by_model {
        let native_correct: BTreeMap<(&str, &str), bool> = ts
            .iter()
            .map(|t| ((t.item_id.as_str(), t.arm.as_str()), t.correct))
            .collect();
        for c in cells {
            let selected: Vec<&&Trajectory> = ts.iter().filter(|t| c.select.matches(t)).collect();
            let correct = selected.iter().filter(|t| t.correct).count() as u64;
            let (native, both) = match &c.native {
                None => (None, None),
                Some(n) => {
                    let mut native = 0u64;
                    let mut both = 0u64;
                    for t in &selected {
                        if native_correct.get(&(t.item_id.as_str(), n.as_str())) == Some(&true) {
                            native += 1;
                            both += u64::from(t.correct);
                        }
                    }
                    (Some(native), Some(both))
                }
            };
            let scr = match (both, native) {
                (Some(b), Some(n)) if n > 0 => Some(b as f64 / n as f64),
                _ => None,
            };
            let scr_upper_zero = match (both, native) {
                (Some(0), Some(n)) if n > 0 => clopper_pearson(0, n, level)?.map(|i| i.high),
                _ => None,
            };
            cell_rows.push(CellRow {
                model: model.to_string(),
                cell: c.name.clone(),
                arm: c.select.arm.clone(),
                n: selected.len() as u64,
                correct,
                native_correct: native,
                both,
                scr,
                scr_upper_zero,
            });
        }
    }
    Ok((rows, cell_rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_records::Domain;
    use c2s_records::{LabeledArm, Support};

    fn unit(name: &str, c: u64, nc: u64, r: u64, nr: u64) -> UnitCounts {
        UnitCounts {
            unit: name.into(),
            stratum: "s".into(),
            compared_correct: c,
            compared_n: nc,
            reference_correct: r,
            reference_n: nr,
        }
    }

    /// Brute force over all 2^n sign vectors.
    fn brute(v: &[f64]) -> f64 {
        let obs: f64 = v.iter().sum::<f64>().abs();
        let n = v.len();
        let mut hits = 0u64;
        for mask in 0..(1u64 << n) {
            let s: f64 = v
                .iter()
                .enumerate()
                .map(|(i, x)| if mask >> i & 1 == 1 { -x } else { *x })
                .sum();
            if s.abs() >= obs - 1e-9 {
                hits += 1;
            }
        }
        hits as f64 / (1u64 << n) as f64
    }

    fn semantic(fact: &str, domain: Domain, pattern: &str) -> Trajectory {
        Trajectory {
            item_id: format!("{fact}-{}", domain.as_str()),
            domain,
            length: 3,
            model: "m".into(),
            arm: LabeledArm::parse("Serial/Full/code").unwrap(),
            support: Some(Support::FULL),
            output: String::new(),
            correct: false,
            valid: true,
            fidelity: None,
            plan: None,
            plan_origin: None,
            plan_differences: None,
            base_id: Some(fact.into()),
            operation: None,
            placement: None,
            repeated: None,
            pattern: Some(pattern.into()),
            membership: c2s_records::Membership::Outside,
            recombination: false,
            stop: None,
            aborted: false,
            calls: 3,
            fills: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            latency_ms: 0.0,
            confidence: None,
            position_correct: vec![false; 3],
            steps: Vec::new(),
        }
    }

    /// A.6: "Semantic bases use gold pattern": a fact record (both encodings) is its own unit
    /// and its gold pattern is its stratum, so records of different patterns are never
    /// resampled in place of each other.
    #[test]
    fn semantic_records_are_stratified_by_their_gold_pattern() {
        let ts = [
            semantic("fact-001", Domain::SemanticBinary, "101"),
            semantic("fact-001", Domain::SemanticNamed, "101"),
            semantic("fact-002", Domain::SemanticBinary, "010"),
        ];
        let refs: Vec<&Trajectory> = ts.iter().collect();
        let s = strata(&refs);
        assert_eq!(s.len(), 2, "one unit per record");
        assert_eq!(s["fact-001"], "L3/-/-/101");
        assert_eq!(s["fact-002"], "L3/-/-/010");
    }

    /// B.5: "Extra conflict loss is (aligned − conflicting) − (opaque − remapped)": as
    /// compared `[aligned, remapped]` against reference `[conflicting, opaque]`, the sides'
    /// mean difference is half of it; `difference_of_differences` reports the whole.
    #[test]
    fn a_difference_of_differences_is_reported_whole() {
        let arm = |t: &Trajectory, arm: &str, correct: bool| Trajectory {
            arm: LabeledArm::parse(arm).unwrap(),
            correct,
            ..t.clone()
        };
        let mut ts = Vec::new();
        for i in 0..6 {
            let base = Trajectory {
                base_id: None,
                pattern: None,
                item_id: format!("item-{i}"),
                ..semantic("f", Domain::Lexical, "000")
            };
            // aligned right, the others wrong: a DiD of 1 in every unit.
            ts.push(arm(&base, "Serial/Full/code/names-readable_aligned", true));
            ts.push(arm(
                &base,
                "Serial/Full/code/names-readable_conflicting",
                false,
            ));
            ts.push(arm(&base, "Serial/Full/code", false));
            ts.push(arm(&base, "Serial/Full/code/names-opaque_remapped", false));
        }
        let sel = |a: &str| Selector {
            arm: a.into(),
            domain: None,
            placement: None,
            operation: None,
        };
        let spec = |did: bool| ContrastSpec {
            name: "extra conflict loss".into(),
            compared: vec![
                sel("Serial/Full/code/names-readable_aligned"),
                sel("Serial/Full/code/names-opaque_remapped"),
            ],
            reference: vec![
                sel("Serial/Full/code/names-readable_conflicting"),
                sel("Serial/Full/code"),
            ],
            family: None,
            difference_of_differences: did,
            endpoint: Endpoint::Correct,
        };
        let (half, _) = contrast_tables(&ts, &[spec(false)], &[], 99, 1, 0.95).unwrap();
        let (whole, _) = contrast_tables(&ts, &[spec(true)], &[], 99, 1, 0.95).unwrap();
        assert_eq!(half[0].estimate.difference, Some(0.5));
        assert_eq!(whole[0].estimate.difference, Some(1.0));
        assert_eq!(whole[0].estimate.ci_high, Some(1.0));
        assert_eq!(whole[0].estimate.sign_p, half[0].estimate.sign_p);
    }

    /// A.5/B.1: "Fidelity scores that string; gold EM scores the original task." A copy of
    /// a wrong plan is faithful and incorrect: the fidelity endpoint counts it, the gold one
    /// does not, and a trajectory without a plan has no fidelity to count.
    #[test]
    fn a_fidelity_contrast_scores_the_copy_against_its_plan() {
        let mut ts = Vec::new();
        for i in 0..4 {
            let base = Trajectory {
                base_id: None,
                pattern: None,
                item_id: format!("item-{i}"),
                ..semantic("f", Domain::Lexical, "000")
            };
            // Indexed copies its (wrong) plan faithfully; raw neither copies nor solves.
            ts.push(Trajectory {
                arm: LabeledArm::parse("GoldCopy/Full/code/indexed/serial").unwrap(),
                correct: false,
                fidelity: Some(true),
                ..base.clone()
            });
            ts.push(Trajectory {
                arm: LabeledArm::parse("GoldCopy/Full/code/raw/serial").unwrap(),
                correct: false,
                fidelity: Some(false),
                ..base.clone()
            });
            ts.push(Trajectory {
                arm: LabeledArm::parse("Native/code").unwrap(),
                correct: true,
                fidelity: None,
                ..base
            });
        }
        let sel = |a: &str| Selector {
            arm: a.into(),
            domain: None,
            placement: None,
            operation: None,
        };
        let spec = |endpoint: Endpoint, reference: &str| ContrastSpec {
            name: "indexed - raw".into(),
            compared: vec![sel("GoldCopy/Full/code/indexed/serial")],
            reference: vec![sel(reference)],
            family: None,
            difference_of_differences: false,
            endpoint,
        };
        let (rows, _) = contrast_tables(
            &ts,
            &[
                spec(Endpoint::Fidelity, "GoldCopy/Full/code/raw/serial"),
                spec(Endpoint::Correct, "GoldCopy/Full/code/raw/serial"),
                spec(Endpoint::Fidelity, "Native/code"),
            ],
            &[],
            99,
            1,
            0.95,
        )
        .unwrap();
        assert_eq!(rows[0].estimate.difference, Some(1.0));
        assert_eq!(rows[1].estimate.difference, Some(0.0));
        assert_eq!(
            rows[2].estimate.units, 0,
            "Native has no plan to be faithful to"
        );
    }

    #[test]
    fn sign_flip_equals_enumeration() {
        let units = [
            unit("a", 2, 2, 0, 2),
            unit("b", 1, 2, 0, 2),
            unit("c", 2, 2, 1, 2),
            unit("d", 0, 2, 1, 2),
            unit("e", 1, 1, 0, 1),
            unit("f", 1, 2, 1, 2),
            unit("g", 3, 4, 1, 4),
            unit("h", 1, 4, 0, 4),
        ];
        let refs: Vec<&UnitCounts> = units.iter().collect();
        let diffs: Vec<f64> = units.iter().map(|u| u.difference().unwrap()).collect();
        let p = sign_flip_p(&refs).unwrap();
        assert!(
            (p - brute(&diffs)).abs() < 1e-12,
            "{p} vs {}",
            brute(&diffs)
        );
    }

    /// scipy.stats.wilcoxon is rank-based; the reference for the sign-flip test on
    /// all-equal differences is the two-sided exact binomial sign test:
    /// `scipy.stats.binomtest(8, 8, 0.5).pvalue` = 0.0078125 (scipy 1.17.1).
    #[test]
    fn equal_differences_give_the_sign_test() {
        let units: Vec<UnitCounts> = (0..8).map(|i| unit(&i.to_string(), 1, 1, 0, 1)).collect();
        let refs: Vec<&UnitCounts> = units.iter().collect();
        assert!((sign_flip_p(&refs).unwrap() - 0.0078125).abs() < 1e-15);
        let est = unit_contrast(&units, 999, 1, 0.95).unwrap();
        assert_eq!(est.difference, Some(1.0));
        assert_eq!((est.ci_low, est.ci_high), (Some(1.0), Some(1.0)));
    }

    #[test]
    fn no_difference_is_p_one_and_empty_sides_are_dropped() {
        let units = vec![unit("a", 1, 2, 1, 2), unit("b", 0, 0, 1, 2)];
        let est = unit_contrast(&units, 99, 1, 0.95).unwrap();
        assert_eq!(est.units, 1);
        assert_eq!(est.incomplete_units, 1);
        assert_eq!(est.sign_p, Some(1.0));
        assert_eq!(est.difference, Some(0.0));
        let none = unit_contrast(&units[1..], 99, 1, 0.95).unwrap();
        assert_eq!(none.difference, None);
        assert!(unit_contrast(&units, 0, 1, 0.95).is_err());
    }

    /// The bootstrap resamples within strata: a stratum of constant differences contributes
    /// its value to every draw, so the interval is that of the other stratum shifted.
    #[test]
    fn bootstrap_is_seeded_and_stratified() {
        let mut units = Vec::new();
        for i in 0..20 {
            let mut u = unit(&format!("x{i}"), (i % 2) as u64, 1, 0, 1);
            u.stratum = "mixed".into();
            units.push(u);
            let mut c = unit(&format!("y{i}"), 1, 1, 0, 1);
            c.stratum = "constant".into();
            units.push(c);
        }
        let a = unit_contrast(&units, 2000, 7, 0.95).unwrap();
        let b = unit_contrast(&units, 2000, 7, 0.95).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.difference, Some(0.75));
        let (lo, hi) = (a.ci_low.unwrap(), a.ci_high.unwrap());
        // Stratified: never below 0.5 (the constant stratum is always half the units).
        assert!(
            (0.5..0.75).contains(&lo) && (0.75..=1.0).contains(&hi),
            "{lo} {hi}"
        );
    }
}
