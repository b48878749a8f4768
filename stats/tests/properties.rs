//! Property tests of the statistics library.

use c2s_stats::{
    auroc, average_precision, bootstrap_joint, clopper_pearson, equal_length_weighted, holm,
    mcnemar_exact, BootstrapConfig, JointCell, JointTable,
};
use proptest::prelude::*;

fn table() -> impl Strategy<Value = JointTable> {
    (0u64..60, 0u64..60, 0u64..60, 0u64..60).prop_map(|(a, b, c, d)| JointTable::new(a, b, c, d))
}

fn cell() -> impl Strategy<Value = JointCell> {
    (0u8..4).prop_map(|c| JointCell::from_code(c).unwrap_or(JointCell::Neither))
}

/// Items `(length, item_id, cell)` with unique ids over lengths 3..=8.
fn items() -> impl Strategy<Value = Vec<(u32, String, JointCell)>> {
    prop::collection::vec((3u32..=8, cell()), 1..60).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (l, c))| (l, format!("item-{i:03}"), c))
            .collect()
    })
}

fn cfg(seed: u64, threads: usize) -> BootstrapConfig {
    BootstrapConfig {
        draws: 199,
        seed,
        threads,
    }
}

const EPS: f64 = 1e-12;

proptest! {
    #[test]
    fn marginal_bounds_contain_scr(t in table()) {
        if let (Some(scr), Some(b)) = (t.scr().value(), t.scr_bounds()) {
            prop_assert!(b.lower <= scr + EPS && scr <= b.upper + EPS, "{b:?} {scr}");
            prop_assert!(0.0 <= b.lower && b.upper <= 1.0);
            // |SCR − b| ≤ 1 − a (paper A.1).
            let a = t.native_em().value().unwrap_or(0.0);
            let se = t.serial_em().value().unwrap_or(0.0);
            prop_assert!((scr - se).abs() <= 1.0 - a + EPS);
        } else {
            prop_assert_eq!(t.native_correct(), 0);
        }
    }

    #[test]
    fn scr_is_serial_em_when_native_is_perfect(both in 0u64..100, native_only in 0u64..100) {
        prop_assume!(both + native_only > 0);
        let t = JointTable::new(both, native_only, 0, 0);
        prop_assert_eq!(t.scr().value(), t.serial_em().value());
        let b = t.scr_bounds().unwrap();
        prop_assert_eq!(b.lower, b.upper);
    }

    #[test]
    fn equal_length_equals_pooled_for_equal_strata(
        cells in prop::collection::vec((0u64..10, 0u64..10, 0u64..10), 1..6),
        n in 30u64..40,
    ) {
        // Every length has n items; the mixture then equals the pooled table.
        let tables: Vec<JointTable> = cells
            .iter()
            .map(|&(a, b, c)| JointTable::new(a, b, c, n - a - b - c))
            .collect();
        let pooled = tables.iter().fold(JointTable::default(), |acc, t| acc + *t);
        let m = equal_length_weighted(&tables);
        let close = |x: Option<f64>, y: Option<f64>| match (x, y) {
            (Some(x), Some(y)) => (x - y).abs() < EPS,
            (None, None) => true,
            _ => false,
        };
        prop_assert!(close(m.native_em, pooled.native_em().value()));
        prop_assert!(close(m.serial_em, pooled.serial_em().value()));
        prop_assert!(close(m.scr, pooled.scr().value()));
    }

    #[test]
    fn holm_never_lowers_and_is_monotone(p in prop::collection::vec(0.0f64..=1.0, 0..20)) {
        let adj = holm(&p).unwrap();
        prop_assert_eq!(adj.len(), p.len());
        for (a, raw) in adj.iter().zip(&p) {
            prop_assert!(*a >= *raw && *a <= 1.0);
        }
        // Monotone: a smaller raw p never gets a larger adjusted p.
        for i in 0..p.len() {
            for j in 0..p.len() {
                if p[i] < p[j] {
                    prop_assert!(adj[i] <= adj[j]);
                }
            }
        }
        // Input order does not matter.
        let mut rev = p.clone();
        rev.reverse();
        let mut adj_rev = holm(&rev).unwrap();
        adj_rev.reverse();
        prop_assert_eq!(adj, adj_rev);
    }

    #[test]
    fn mcnemar_is_symmetric_probability(b in 0u64..300, c in 0u64..300) {
        let p = mcnemar_exact(b, c);
        prop_assert!(p > 0.0 && p <= 1.0);
        prop_assert_eq!(p, mcnemar_exact(c, b));
        if b == c {
            prop_assert_eq!(p, 1.0);
        }
    }

    #[test]
    fn clopper_pearson_contains_estimate_and_nests(k in 0u64..200, extra in 0u64..200) {
        let n = k + extra;
        prop_assume!(n > 0);
        let i95 = clopper_pearson(k, n, 0.95).unwrap().unwrap();
        let i80 = clopper_pearson(k, n, 0.80).unwrap().unwrap();
        let p = k as f64 / n as f64;
        prop_assert!(i95.low <= p && p <= i95.high);
        prop_assert!(0.0 <= i95.low && i95.high <= 1.0);
        prop_assert!(i95.low <= i80.low + EPS && i80.high <= i95.high + EPS);
    }

}

proptest! {
    // The bootstrap properties run fewer cases: each case runs several bootstraps.
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn bootstrap_is_reproducible_and_order_free(
        items in items(),
        seed in any::<u64>(),
        rotate in 0usize..60,
    ) {
        let a = bootstrap_joint(items.clone(), &cfg(seed, 1), 0.95).unwrap();
        let mut shuffled = items.clone();
        shuffled.reverse();
        let r = rotate % shuffled.len();
        shuffled.rotate_left(r);
        let b = bootstrap_joint(shuffled, &cfg(seed, 3), 0.95).unwrap();
        prop_assert_eq!(&a, &b);
        let c = bootstrap_joint(items, &cfg(seed, 1), 0.95).unwrap();
        prop_assert_eq!(a, c);
    }

    #[test]
    fn bootstrap_intervals_are_sane(items in items(), seed in any::<u64>()) {
        let b = bootstrap_joint(items, &cfg(seed, 1), 0.95).unwrap();
        let mut all = vec![b.all];
        all.extend(b.per_length.iter().map(|(_, e)| *e));
        for e in all {
            for est in [e.native_em, e.serial_em, e.scr, e.gain_rate, e.loss_mass] {
                prop_assert_eq!(est.defined_draws + est.dropped_draws, 199);
                match (est.value, est.interval) {
                    (None, _) => {
                        // An undefined point means an empty denominator in the sample, and
                        // therefore in every resample.
                        prop_assert_eq!(est.interval, None);
                        prop_assert_eq!(est.dropped_draws, 199);
                    }
                    (Some(v), Some(i)) => {
                        prop_assert!(0.0 <= i.low && i.low <= i.high && i.high <= 1.0);
                        prop_assert!((0.0..=1.0).contains(&v));
                    }
                    (Some(_), None) => prop_assert!(est.defined_draws == 0),
                }
            }
            // EM and loss mass are never dropped: strata are never empty.
            prop_assert_eq!(e.native_em.dropped_draws, 0);
            prop_assert_eq!(e.loss_mass.dropped_draws, 0);
        }
    }

}

proptest! {
    #[test]
    fn auroc_reverses_and_ap_is_bounded(
        pairs in prop::collection::vec((0u8..20, any::<bool>()), 2..40)
    ) {
        let pairs: Vec<(f64, bool)> = pairs.iter().map(|&(s, y)| (f64::from(s) / 20.0, y)).collect();
        let flipped: Vec<(f64, bool)> = pairs.iter().map(|&(s, y)| (-s, y)).collect();
        match (auroc(&pairs).unwrap(), auroc(&flipped).unwrap()) {
            (Some(a), Some(b)) => prop_assert!((a + b - 1.0).abs() < EPS),
            (None, None) => {
                let pos = pairs.iter().filter(|p| p.1).count();
                prop_assert!(pos == 0 || pos == pairs.len());
            }
            _ => prop_assert!(false, "one-class status must not depend on the scores"),
        }
        // A monotone transform of the scores changes nothing.
        let squashed: Vec<(f64, bool)> = pairs.iter().map(|&(s, y)| (s * s * 0.5, y)).collect();
        prop_assert_eq!(auroc(&pairs).unwrap(), auroc(&squashed).unwrap());
        prop_assert_eq!(
            average_precision(&pairs).unwrap(),
            average_precision(&squashed).unwrap()
        );
        if let Some(ap) = average_precision(&pairs).unwrap() {
            prop_assert!(ap > 0.0 && ap <= 1.0 + EPS);
        }
    }
}
