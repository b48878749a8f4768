//! Paired rankings (AUROC, AP) and the text bootstrap of [`super::coverage_summary`].

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::bootstrap::StatDraws;
use crate::calibration::{auroc_counts, average_precision_counts, ScoreCount};

use super::{CoverageStatsConfig, Obs, ScoreView, TextObs};

/// Distinct paired scores of one score, and each text's (present, absent) rank.
pub(super) struct Ranks {
    values: Vec<f64>,
    idx: Vec<Option<(usize, usize)>>,
}

impl Ranks {
    pub(super) fn new(texts: &[&TextObs], score: usize, view: ScoreView) -> Ranks {
        let pick = |o: &Obs| match view {
            ScoreView::Recorded => o.scores[score],
            ScoreView::Quantized => o.quantized[score],
            ScoreView::Renormalized => o.renormalized[score],
        };
        let pairs: Vec<Option<(f64, f64)>> = texts
            .iter()
            .map(|x| match x.side(score) {
                [Some(p), Some(a)] => Some((pick(p), pick(a))),
                _ => None,
            })
            .collect();
        let mut values: Vec<f64> = pairs.iter().flatten().flat_map(|&(p, a)| [p, a]).collect();
        values.sort_by(f64::total_cmp);
        values.dedup_by(|a, b| a.total_cmp(b).is_eq());
        let rank = |v: f64| values.partition_point(|x| x.total_cmp(&v).is_lt());
        let idx = pairs
            .iter()
            .map(|p| p.map(|(p, a)| (rank(p), rank(a))))
            .collect();
        Ranks { values, idx }
    }

    pub(super) fn pairs(&self) -> u64 {
        self.idx.iter().flatten().count() as u64
    }

    /// (AUROC with present positive, AP with absent positive on the negated score).
    pub(super) fn ranking(&self, w: &[u32]) -> (Option<f64>, Option<f64>) {
        let m = self.values.len();
        let (mut pres, mut abs) = (vec![0u64; m], vec![0u64; m]);
        for (ix, &wt) in self.idx.iter().zip(w) {
            if let Some((p, a)) = *ix {
                pres[p] += u64::from(wt);
                abs[a] += u64::from(wt);
            }
        }
        let up: Vec<ScoreCount> = (0..m)
            .filter(|&r| pres[r] + abs[r] > 0)
            .map(|r| ScoreCount {
                score: self.values[r],
                wrong: abs[r],
                correct: pres[r],
            })
            .collect();
        let down: Vec<ScoreCount> = up
            .iter()
            .rev()
            .map(|c| ScoreCount {
                score: -c.score,
                wrong: c.correct,
                correct: c.wrong,
            })
            .collect();
        (
            auroc_counts(&up).ok().flatten(),
            average_precision_counts(&down).ok().flatten(),
        )
    }
}

fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Uniform integer in `0..n` (n > 0): Lemire's multiply-and-reject, as in the bootstrap.
fn bounded(rng: &mut ChaCha8Rng, n: u32) -> u32 {
    let mut m = u64::from(rng.next_u32()) * u64::from(n);
    if (m as u32) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u32) < threshold {
            m = u64::from(rng.next_u32()) * u64::from(n);
        }
    }
    (m >> 32) as u32
}

/// Observed values (weights 1) and `draws` text resamples of `n_stats` statistics of `n` texts.
pub(super) fn resample<F>(
    n: usize,
    key: &str,
    cfg: &CoverageStatsConfig,
    n_stats: usize,
    stat: F,
) -> Vec<StatDraws>
where
    F: Fn(&[u32], &mut [Option<f64>]),
{
    let mut out = vec![None; n_stats];
    stat(&vec![1; n], &mut out);
    let mut draws: Vec<StatDraws> = out
        .iter()
        .map(|o| StatDraws {
            observed: o.filter(|v| v.is_finite()),
            values: Vec::with_capacity(cfg.draws as usize),
            dropped: 0,
        })
        .collect();
    let seed = ChaCha8Rng::seed_from_u64(cfg.seed ^ fnv1a(key)).get_seed();
    let mut w = vec![0u32; n];
    for d in 0..cfg.draws {
        out.fill(None);
        if n > 0 {
            let mut rng = ChaCha8Rng::from_seed(seed);
            rng.set_stream(u64::from(d));
            w.fill(0);
            for _ in 0..n {
                w[bounded(&mut rng, n as u32) as usize] += 1;
            }
            stat(&w, &mut out);
        }
        for (s, v) in draws.iter_mut().zip(&out) {
            match v {
                Some(x) if x.is_finite() => s.values.push(*x),
                _ => s.dropped += 1,
            }
        }
    }
    draws
}
