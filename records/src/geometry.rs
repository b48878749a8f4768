//! Candidate geometry along the gold path (paper A.2).

use serde::{Deserialize, Serialize};

/// Geometry of a candidate set along the gold path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Geometry {
    /// K(k) for k = 0..=L.
    pub k_vector: Vec<u32>,
    /// log2 K(k) for k = 0..=L: entropy of a uniform distribution over consistent candidates.
    pub entropy: Vec<f64>,
    /// Smallest k with K(k) = 1 (the gold prefix that identifies the target).
    pub first_unique_prefix: usize,
    /// Mean of log2 K(k) over k = 0..L-1.
    pub mean_entropy: f64,
    /// For k = 0..L-1: entropy (bits) of the next character after the gold prefix of length k,
    /// with the consistent candidates weighted uniformly.
    pub branch_entropy: Vec<f64>,
}

/// K(k): how many candidates agree with `target` on its first `k` characters, k = 0..=L.
pub fn k_vector(target: &[char], candidates: &[Vec<char>]) -> Vec<u32> {
    (0..=target.len())
        .map(|k| {
            candidates
                .iter()
                .filter(|c| c.len() >= k && c[..k] == target[..k])
                .count() as u32
        })
        .collect()
}

/// Full geometry of `candidates` along `target`'s path.
pub fn geometry(target: &[char], candidates: &[Vec<char>]) -> Geometry {
    let k_vector = k_vector(target, candidates);
    let entropy: Vec<f64> = k_vector
        .iter()
        .map(|&k| if k == 0 { 0.0 } else { f64::from(k).log2() })
        .collect();
    let len = target.len();
    let first_unique_prefix = k_vector.iter().position(|&k| k <= 1).unwrap_or(len);
    let mean_entropy = if len == 0 {
        0.0
    } else {
        entropy[..len].iter().sum::<f64>() / len as f64
    };
    let branch_entropy = (0..len)
        .map(|k| {
            let consistent: Vec<&Vec<char>> = candidates
                .iter()
                .filter(|c| c.len() > k && c[..k] == target[..k])
                .collect();
            let n = consistent.len() as f64;
            let mut counts: std::collections::BTreeMap<char, usize> = Default::default();
            for c in &consistent {
                *counts.entry(c[k]).or_default() += 1;
            }
            counts
                .values()
                .map(|&m| {
                    let p = m as f64 / n;
                    -p * p.log2()
                })
                .sum::<f64>()
                // A certain next character has entropy −1·log2(1) = −0.0; `max` may keep either
                // zero (it differs between build profiles), so add 0.0, which makes it +0.0.
                .max(0.0)
                + 0.0
        })
        .collect();
    Geometry {
        k_vector,
        entropy,
        first_unique_prefix,
        mean_entropy,
        branch_entropy,
    }
}

/// Characters that occur at 0-based position `pos` in any candidate, in first-seen order.
pub fn position_union(candidates: &[Vec<char>], pos: usize) -> Vec<char> {
    let mut out = Vec::new();
    for c in candidates {
        if let Some(&ch) = c.get(pos) {
            if !out.contains(&ch) {
                out.push(ch);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(v: &[&str]) -> Vec<Vec<char>> {
        v.iter().map(|s| s.chars().collect()).collect()
    }

    #[test]
    fn figure_one_geometry() {
        let cands = chars(&["585", "589", "385", "389", "485", "489", "685", "689"]);
        let target: Vec<char> = "589".chars().collect();
        let g = geometry(&target, &cands);
        assert_eq!(g.k_vector, vec![8, 2, 2, 1]);
        assert_eq!(g.first_unique_prefix, 3);
        assert!((g.entropy[0] - 3.0).abs() < 1e-12);
        assert!((g.entropy[1] - 1.0).abs() < 1e-12);
        assert!((g.mean_entropy - (3.0 + 1.0 + 1.0) / 3.0).abs() < 1e-12);
        // Next character after "": 4 first digits, two candidates each → 2 bits.
        assert!((g.branch_entropy[0] - 2.0).abs() < 1e-12);
        // After "5": both continue with 8 → 0 bits. After "58": 5 or 9 → 1 bit.
        assert!(g.branch_entropy[1].abs() < 1e-12);
        assert!((g.branch_entropy[2] - 1.0).abs() < 1e-12);
        assert_eq!(position_union(&cands, 0), vec!['5', '3', '4', '6']);
        assert_eq!(position_union(&cands, 1), vec!['8']);
        assert_eq!(position_union(&cands, 2), vec!['5', '9']);
    }

    #[test]
    fn lexical_geometry_unique_after_first_letter() {
        let cands = chars(&[
            "apple", "angle", "chair", "crown", "river", "ratio", "table", "token",
        ]);
        let target: Vec<char> = "apple".chars().collect();
        let g = geometry(&target, &cands);
        assert_eq!(g.k_vector, vec![8, 2, 1, 1, 1, 1]);
        assert_eq!(g.first_unique_prefix, 2);
    }
}
