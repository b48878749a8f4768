//! Native-to-position projection (A.6, B.7): "Native to position projection sums complete
//! candidate probabilities by character and compares them with independent queries. Raw mass
//! and separately normalized TV/JS are labelled. Unsupported mass covers characters absent
//! from every candidate at that position. Its uniform reference is one minus support size
//! divided by alphabet size. Bootstrap uses item-averaged position scores."
//!
//! At position t, Native's distribution over the eight candidates projects to
//! P_t(c) = Σ_{k : candidate k has c at t} p_k. The independent query at t gives Q_t over its
//! support (the alphabet Σ under Full support). With P̂, Q̂ each normalized to sum 1:
//! TV = ½ Σ_c |P̂(c) − Q̂(c)|, and JS = ½ KL(P̂ ‖ M) + ½ KL(Q̂ ‖ M), M = ½ (P̂ + Q̂), in bits
//! (so 0 ≤ JS ≤ 1). The unsupported mass is Q_t's raw mass on characters of Σ that no candidate
//! has at t; under a uniform Q it would be 1 − |U_t| / |Σ|, U_t the candidates' characters at t.
//! An item's scores are the means over its positions; the summary is the mean over items with
//! a percentile interval from resampling items within their stratum (length).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::contrasts::stratified_mean_draws;
use crate::error::StatsError;
use crate::intervals::{check_level, percentile_interval};

/// Native's candidate mass at `position` (zero-based character index), per character.
pub fn project(
    candidates: &[String],
    probabilities: &[f64],
    position: usize,
) -> BTreeMap<char, f64> {
    let mut mass = BTreeMap::new();
    for (candidate, p) in candidates.iter().zip(probabilities) {
        if let Some(c) = candidate.chars().nth(position) {
            *mass.entry(c).or_insert(0.0) += p;
        }
    }
    mass
}

/// The scores of one position.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PositionScores {
    /// Total variation between the normalized projection and the normalized query.
    pub tv: f64,
    /// Jensen–Shannon divergence in bits between the same two.
    pub js: f64,
    /// Raw Native mass projected onto the position (1 when Native's mass is all on the eight).
    pub native_mass: f64,
    /// The query's raw mass on characters no candidate has at this position.
    pub unsupported_mass: f64,
    /// 1 − |U_t| / |Σ|.
    pub uniform_reference: f64,
}

/// Scores of one position: Native's projection against the query's distribution over
/// `support` (its characters, the alphabet under Full support). `None` when either side has no
/// mass or the support is empty.
pub fn position_scores(
    projection: &BTreeMap<char, f64>,
    support: &[String],
    probabilities: &[f64],
) -> Option<PositionScores> {
    let query: BTreeMap<char, f64> = support
        .iter()
        .zip(probabilities)
        .filter_map(|(s, p)| {
            let mut cs = s.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) => Some((c, *p)),
                _ => None,
            }
        })
        .collect();
    let native_mass: f64 = projection.values().sum();
    let query_mass: f64 = query.values().sum();
    if query.is_empty() || native_mass <= 0.0 || query_mass <= 0.0 {
        return None;
    }
    let mut chars: Vec<char> = projection.keys().chain(query.keys()).copied().collect();
    chars.sort_unstable();
    chars.dedup();
    let (mut tv, mut js) = (0.0, 0.0);
    for c in &chars {
        let p = projection.get(c).copied().unwrap_or(0.0) / native_mass;
        let q = query.get(c).copied().unwrap_or(0.0) / query_mass;
        tv += (p - q).abs();
        let m = 0.5 * (p + q);
        if p > 0.0 {
            js += 0.5 * p * (p / m).log2();
        }
        if q > 0.0 {
            js += 0.5 * q * (q / m).log2();
        }
    }
    let unsupported_mass = query
        .iter()
        .filter(|(c, _)| !projection.contains_key(c))
        .map(|(_, p)| p)
        .sum();
    let supported = query.keys().filter(|c| projection.contains_key(c)).count();
    Some(PositionScores {
        tv: 0.5 * tv,
        js: js.max(0.0),
        native_mass,
        unsupported_mass,
        uniform_reference: 1.0 - supported as f64 / query.len() as f64,
    })
}

/// The mean of position scores (an item's score).
pub fn mean_scores(scores: &[PositionScores]) -> Option<PositionScores> {
    if scores.is_empty() {
        return None;
    }
    let n = scores.len() as f64;
    let mean = |f: fn(&PositionScores) -> f64| scores.iter().map(f).sum::<f64>() / n;
    Some(PositionScores {
        tv: mean(|s| s.tv),
        js: mean(|s| s.js),
        native_mass: mean(|s| s.native_mass),
        unsupported_mass: mean(|s| s.unsupported_mass),
        uniform_reference: mean(|s| s.uniform_reference),
    })
}

/// A mean over items with its stratified bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeanEstimate {
    /// Number of items averaged.
    pub items: u64,
    /// The mean of the item values; `None` with no items.
    pub mean: Option<f64>,
    /// Lower end of the stratified bootstrap percentile interval; `None` with no items.
    pub ci_low: Option<f64>,
    /// Upper end of the same interval; `None` with no items.
    pub ci_high: Option<f64>,
}

/// The mean of `(stratum, value)` items with a percentile interval: each of `draws` draws
/// resamples every stratum's items with replacement (strata in ascending order, one
/// `ChaCha8Rng::seed_from_u64(seed)` stream), as [`crate::contrasts::unit_contrast`] does.
pub fn stratified_mean(
    values: &[(u32, f64)],
    draws: u32,
    seed: u64,
    level: f64,
) -> Result<MeanEstimate, StatsError> {
    check_level(level)?;
    if draws == 0 {
        return Err(StatsError::ZeroDraws);
    }
    let n = values.len();
    if n == 0 {
        return Ok(MeanEstimate {
            items: 0,
            mean: None,
            ci_low: None,
            ci_high: None,
        });
    }
    let mut strata: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (s, v) in values {
        strata.entry(*s).or_default().push(*v);
    }
    let strata: Vec<&[f64]> = strata.values().map(Vec::as_slice).collect();
    let mut draws_values = stratified_mean_draws(&strata, draws, seed);
    let ci = percentile_interval(&mut draws_values, level);
    Ok(MeanEstimate {
        items: n as u64,
        mean: Some(values.iter().map(|(_, v)| v).sum::<f64>() / n as f64),
        ci_low: ci.map(|i| i.low),
        ci_high: ci.map(|i| i.high),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    /// Candidates 12, 13, 42 with mass ½, ¼, ¼ project to {1: ¾, 4: ¼} at the first position
    /// and {2: ¾, 3: ¼} at the second.
    #[test]
    fn the_projection_sums_candidate_mass_by_character() {
        let c = strings(&["12", "13", "42"]);
        let p = [0.5, 0.25, 0.25];
        assert_eq!(
            project(&c, &p, 0),
            BTreeMap::from([('1', 0.75), ('4', 0.25)])
        );
        assert_eq!(
            project(&c, &p, 1),
            BTreeMap::from([('2', 0.75), ('3', 0.25)])
        );
    }

    /// Identical distributions: TV = JS = 0. Disjoint ones: TV = JS = 1. The unsupported mass
    /// is the query's mass off the candidates' characters; its uniform reference counts them.
    #[test]
    fn tv_js_and_unsupported_mass() {
        let proj = BTreeMap::from([('1', 0.75), ('4', 0.25)]);
        let support = strings(&["0", "1", "2", "3", "4"]);
        let same = position_scores(&proj, &support, &[0.0, 0.75, 0.0, 0.0, 0.25]).unwrap();
        assert!(same.tv.abs() < 1e-12 && same.js.abs() < 1e-12, "{same:?}");
        assert_eq!(same.unsupported_mass, 0.0);
        assert!((same.uniform_reference - 3.0 / 5.0).abs() < 1e-12);
        let disjoint = position_scores(&proj, &support, &[0.5, 0.0, 0.5, 0.0, 0.0]).unwrap();
        assert!((disjoint.tv - 1.0).abs() < 1e-12);
        assert!((disjoint.js - 1.0).abs() < 1e-12);
        assert!((disjoint.unsupported_mass - 1.0).abs() < 1e-12);
        // Half the query's mass on '1': TV = ½(|¾ − ½| + |¼ − 0| + ½) = ½.
        let half = position_scores(&proj, &support, &[0.5, 0.5, 0.0, 0.0, 0.0]).unwrap();
        assert!((half.tv - 0.5).abs() < 1e-12, "{half:?}");
        // ½ KL(P ‖ M) + ½ KL(Q ‖ M) in bits for P = (¾, 0, ¼), Q = (½, ½, 0), M = (⅝, ¼, ⅛)
        // (by the definition; scipy's jensenshannon(P, Q, base=2) is its square root).
        assert!((half.js - 0.3931558784658321).abs() < 1e-12, "{}", half.js);
    }

    #[test]
    fn item_means_and_their_interval() {
        let values: Vec<(u32, f64)> = (0..20).map(|i| (3 + i % 2, f64::from(i % 4))).collect();
        let e = stratified_mean(&values, 999, 1, 0.95).unwrap();
        assert_eq!(e.mean, Some(1.5));
        assert!(e.ci_low.unwrap() < 1.5 && 1.5 < e.ci_high.unwrap(), "{e:?}");
        assert_eq!(stratified_mean(&[], 9, 1, 0.95).unwrap().mean, None);
    }
}
