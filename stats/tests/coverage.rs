//! The candidate-coverage statistics against independently computed references.
//!
//! References: Python 3 with scikit-learn 1.9.1, numpy 2.4.6, scipy 1.17.1 (a scratch venv);
//! the snippet behind every literal is quoted next to it.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use c2s_records::coverage::{
    CoverageSplit, Decision, DecisionSpec, NameVariant, ScoringRule, SetKind, NONE_LABEL,
};
use c2s_records::OptionLogprobs;
use c2s_stats::coverage::missing_reason;
use c2s_stats::{
    calibrated_threshold, coverage_summary, CellSummary, CoverageScore, CoverageStatsConfig,
    CoverageSummary, Rate, StatsError, Subset,
};

const TEST: CoverageSplit = CoverageSplit::Test;
const CAL: CoverageSplit = CoverageSplit::Calibration;

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-12, "{a} vs {b}");
}

fn value(r: &Rate) -> f64 {
    r.estimate.value.expect("defined")
}

/// A decision of task `t`, natural names, reference `a`. Present sets are `a b c …`, absent
/// sets put `x` in the reference's slot; the none option is appended when `with_none`.
fn dec(
    model: &str,
    case: &str,
    split: CoverageSplit,
    set: SetKind,
    with_none: bool,
    probs: &[f64],
) -> Decision {
    let k = probs.len() - usize::from(with_none);
    let mut labels: Vec<String> = ["a", "b", "c", "d", "e", "f"][..k]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if set == SetKind::Absent {
        labels[0] = "x".into();
    }
    if with_none {
        labels.push(NONE_LABEL.into());
    }
    Decision {
        case_id: case.into(),
        task: "t".into(),
        split,
        reference: "a".into(),
        spec: DecisionSpec {
            set,
            k: if set == SetKind::Full { 6 } else { k },
            names: NameVariant::Natural,
            with_none,
        },
        labels,
        probabilities: probs.to_vec(),
        request_id: format!("{model}/{case}/{set:?}/{with_none}"),
        model: model.into(),
        prompt_tokens: 0,
        latency_ms: 0.0,
        error: None,
        task_labels: None,
        scoring: ScoringRule::Summed,
        raw: None,
    }
}

fn failed(mut d: Decision, error: Option<&str>) -> Decision {
    d.error = error.map(str::to_string);
    if error.is_none() {
        d.probabilities.clear();
    }
    d
}

fn cfg(draws: u32) -> CoverageStatsConfig {
    CoverageStatsConfig {
        draws,
        ..CoverageStatsConfig::default()
    }
}

fn cell<'a>(s: &'a CoverageSummary, model: &str, k: usize, subset: Subset) -> &'a CellSummary {
    s.cells
        .iter()
        .find(|c| c.model == model && c.k == k && c.subset == subset)
        .expect("cell")
}

/// Five test texts, k = 2; c5's plain present decision timed out and its with-none present
/// decision came back empty.
fn native_set() -> Vec<Decision> {
    let plain_present: [(&str, &[f64]); 4] = [
        ("c1", &[0.7, 0.3]),
        ("c2", &[0.4, 0.6]),
        ("c3", &[0.9, 0.1]),
        ("c4", &[0.5, 0.5]),
    ];
    let none_present: [(&str, &[f64]); 4] = [
        ("c1", &[0.6, 0.1, 0.3]),
        ("c2", &[0.2, 0.3, 0.5]),
        ("c3", &[0.5, 0.4, 0.1]),
        ("c4", &[0.3, 0.5, 0.2]),
    ];
    let none_absent: [(&str, &[f64]); 5] = [
        ("c1", &[0.2, 0.2, 0.6]),
        ("c2", &[0.5, 0.3, 0.2]),
        ("c3", &[0.1, 0.1, 0.8]),
        ("c4", &[0.3, 0.3, 0.4]),
        ("c5", &[0.4, 0.35, 0.25]),
    ];
    let mut v: Vec<Decision> = Vec::new();
    v.extend(
        plain_present
            .iter()
            .map(|(c, p)| dec("m", c, TEST, SetKind::Present, false, p)),
    );
    v.extend(
        none_present
            .iter()
            .map(|(c, p)| dec("m", c, TEST, SetKind::Present, true, p)),
    );
    v.extend(
        none_absent
            .iter()
            .map(|(c, p)| dec("m", c, TEST, SetKind::Absent, true, p)),
    );
    v.push(failed(
        dec("m", "c5", TEST, SetKind::Present, false, &[0.5, 0.5]),
        Some("timeout"),
    ));
    v.push(failed(
        dec("m", "c5", TEST, SetKind::Present, true, &[0.5, 0.3, 0.2]),
        None,
    ));
    v
}

#[test]
fn coverage_native_rule_rates_match_numpy() {
    // numpy 2.4.6 (np.argmax: first index on ties, as Decision::choice), with PP/NP/NA the
    // probabilities of native_set() (c5's missing decisions left out):
    //   acc = np.mean([np.argmax(p) == 0 for p in PP.values()])               # 0.75
    //   acc_none = np.mean([np.argmax(p) == 0 for p in NP.values()])          # 0.5
    //   fr = np.mean([np.argmax(p) == 2 for p in NP.values()])                # 0.25
    //   det = np.mean([np.argmax(p) == 2 for p in NA.values()])               # 0.6
    //   rej = np.r_[[np.argmax(p) == 2 for p in NP.values()], [... NA ...]]
    //   cor = np.r_[[np.argmax(p) == 0 for p in NP.values()], np.zeros(len(NA), bool)]
    //   np.mean(~rej)                                                         # 0.5555555555555556
    //   np.mean(~cor[~rej])                                                   # 0.6
    let s = coverage_summary(&native_set(), &cfg(200)).unwrap();
    let c = cell(&s, "m", 2, Subset::All);
    assert_eq!((c.texts, c.missing), (5, 2));
    assert_eq!((c.accuracy.successes, c.accuracy.n), (3, 4));
    close(value(&c.accuracy), 0.75);
    close(value(&c.accuracy_with_none), 0.5);
    close(value(&c.false_rejection), 0.25);
    assert_eq!((c.detection.successes, c.detection.n), (3, 5));
    close(value(&c.detection), 0.6);
    assert_eq!((c.acceptance.successes, c.acceptance.n), (5, 9));
    close(value(&c.acceptance), 0.5555555555555556);
    assert_eq!(
        (c.error_among_accepted.successes, c.error_among_accepted.n),
        (3, 5)
    );
    close(value(&c.error_among_accepted), 0.6);
    // No plain absent decisions: the plain scores have no pairs and no AUROC.
    let mp = &c.discrimination[0];
    assert_eq!(
        (mp.score, mp.pairs, mp.auroc.value),
        (CoverageScore::MaxProb, 0, None)
    );
    assert_eq!(c.discrimination[3].pairs, 4);
    // Missing decisions are counted by reason, never as rejections or errors.
    let why: Vec<(&str, u64)> = s
        .missing
        .iter()
        .map(|m| (m.error.as_str(), m.count))
        .collect();
    assert_eq!(why, [("empty probabilities", 1), ("timeout", 1)]);
    let mut only_missing = native_set();
    only_missing.push(failed(
        dec("m", "c6", TEST, SetKind::Absent, true, &[0.1, 0.1, 0.8]),
        Some("HTTP 500"),
    ));
    let s2 = coverage_summary(&only_missing, &cfg(200)).unwrap();
    let c2 = cell(&s2, "m", 2, Subset::All);
    assert_eq!((c2.texts, c2.missing), (5, 3));
    assert_eq!(c2.detection.n, 5);
    assert_eq!(c2.acceptance, c.acceptance);
}

#[test]
fn coverage_entropy_and_margin_match_scipy() {
    // scipy 1.17.1: scipy.stats.entropy([.5, .25, .25]) = 1.0397207708399179;
    // p = np.array([.5,.25,.25]); s = np.sort(p / p.sum())[::-1]; s[0] - s[1] = 0.25.
    let d = dec("m", "c", TEST, SetKind::Present, false, &[0.5, 0.25, 0.25]);
    close(
        CoverageScore::NegEntropy.of(&d).unwrap(),
        -1.0397207708399179,
    );
    close(CoverageScore::Margin.of(&d).unwrap(), 0.25);
    close(CoverageScore::MaxProb.of(&d).unwrap(), 0.5);
    assert_eq!(CoverageScore::NotNone.of(&d), None);
    // With none, the ordinary options are renormalized: (0.3, 0.1) → (0.75, 0.25).
    let d = dec("m", "c", TEST, SetKind::Present, true, &[0.3, 0.1, 0.6]);
    close(CoverageScore::NotNone.of(&d).unwrap(), 0.4);
    close(CoverageScore::Margin.of(&d).unwrap(), 0.5);
    assert_eq!(CoverageScore::NegEntropy.as_str(), "neg_entropy");
}

#[test]
fn coverage_discrimination_with_ties_matches_sklearn() {
    // scikit-learn 1.9.1, numpy 2.4.6, scipy 1.17.1 (P, A: the plain present/absent rows
    // below; NP, NA: p(none) of the with-none rows):
    //   def scores(p):
    //       p = np.asarray(p) / np.sum(p); s = np.sort(p)[::-1]
    //       return s[0], -scipy.stats.entropy(p), s[0] - s[1]
    //   y = np.r_[np.ones(8), np.zeros(8)]; S = np.array([scores(p) for p in P + A])
    //   roc_auc_score(y, S[:, j]), average_precision_score(1 - y, -S[:, j])
    //   nn = 1 - np.r_[NP, NA]; roc_auc_score(y, nn), average_precision_score(1 - y, -nn)
    let p: [[f64; 3]; 8] = [
        [0.6, 0.3, 0.1],
        [0.5, 0.3, 0.2],
        [0.4, 0.4, 0.2],
        [0.7, 0.2, 0.1],
        [0.5, 0.25, 0.25],
        [0.34, 0.33, 0.33],
        [0.8, 0.1, 0.1],
        [0.5, 0.3, 0.2],
    ];
    let a: [[f64; 3]; 8] = [
        [0.5, 0.3, 0.2],
        [0.4, 0.4, 0.2],
        [0.6, 0.3, 0.1],
        [0.34, 0.33, 0.33],
        [0.45, 0.45, 0.1],
        [0.5, 0.25, 0.25],
        [0.7, 0.2, 0.1],
        [0.35, 0.35, 0.3],
    ];
    let np_: [f64; 8] = [0.2, 0.1, 0.5, 0.2, 0.3, 0.1, 0.2, 0.4];
    let na: [f64; 8] = [0.2, 0.6, 0.3, 0.5, 0.2, 0.7, 0.1, 0.4];
    let mut v = Vec::new();
    for i in 0..8 {
        let c = format!("c{i}");
        v.push(dec("m", &c, TEST, SetKind::Present, false, &p[i]));
        v.push(dec("m", &c, TEST, SetKind::Absent, false, &a[i]));
        // Ordinary mass split 0.5 / 0.3 / 0.2 of 1 − p(none).
        let with = |q: f64| [(1.0 - q) * 0.5, (1.0 - q) * 0.3, (1.0 - q) * 0.2, q];
        v.push(dec("m", &c, TEST, SetKind::Present, true, &with(np_[i])));
        v.push(dec("m", &c, TEST, SetKind::Absent, true, &with(na[i])));
    }
    let s = coverage_summary(&v, &cfg(300)).unwrap();
    let c = cell(&s, "m", 3, Subset::All);
    let expected = [
        (CoverageScore::MaxProb, 0.625, 0.5745046620046619),
        (CoverageScore::NegEntropy, 0.5859375, 0.5569180819180819),
        (CoverageScore::Margin, 0.6484375, 0.636183954933955),
        (CoverageScore::NotNone, 0.6796875, 0.7023237179487178),
    ];
    for (d, (score, auroc, ap)) in c.discrimination.iter().zip(expected) {
        assert_eq!((d.score, d.pairs), (score, 8));
        close(d.auroc.value.unwrap(), auroc);
        close(d.average_precision.value.unwrap(), ap);
    }
}

#[test]
fn coverage_thresholds_respect_the_calibration_constraint() {
    // numpy 2.4.6, max_prob = s/16 of the k = 2 distribution [s, 16 − s]/16:
    //   cp = np.array([9,10,10,11,11,12,12,12,13,13,13,14,14,14,14,15,15,15,15,16]) / 16
    //   ca = np.array([8,8,9,9,9,10,10,11,12,8,9,13,14,8,10,9,12,11,8,15]) / 16
    //   tp = np.array([9,10,12,13,14,15,16,11,9,12]) / 16
    //   ta = np.array([8,9,10,11,8,9,12,8,13,9]) / 16
    //   t = max(c for c in np.unique(cp) if np.mean(cp < c) <= 0.05)    # 0.625
    //   np.mean(cp < t), np.mean(ca < t), np.mean(tp < t), np.mean(ta < t)
    //                                                      # 0.05, 0.5, 0.2, 0.6
    let cp = [
        9, 10, 10, 11, 11, 12, 12, 12, 13, 13, 13, 14, 14, 14, 14, 15, 15, 15, 15, 16,
    ];
    let ca = [
        8, 8, 9, 9, 9, 10, 10, 11, 12, 8, 9, 13, 14, 8, 10, 9, 12, 11, 8, 15,
    ];
    let tp = [9, 10, 12, 13, 14, 15, 16, 11, 9, 12];
    let ta = [8, 9, 10, 11, 8, 9, 12, 8, 13, 9];
    let d = |case: String, split, set, s: i32| {
        let x = f64::from(s) / 16.0;
        dec("m", &case, split, set, false, &[x, 1.0 - x])
    };
    let mut v = Vec::new();
    for (i, (&p, &a)) in cp.iter().zip(&ca).enumerate() {
        v.push(d(format!("k{i}"), CAL, SetKind::Present, p));
        v.push(d(format!("k{i}"), CAL, SetKind::Absent, a));
    }
    for (i, (&p, &a)) in tp.iter().zip(&ta).enumerate() {
        v.push(d(format!("t{i}"), TEST, SetKind::Present, p));
        v.push(d(format!("t{i}"), TEST, SetKind::Absent, a));
    }
    let s = coverage_summary(&v, &cfg(300)).unwrap();
    // Thresholds are also tested on the full-set-correct and shared-correct subsets; these
    // checks are on every text.
    let all: Vec<_> = s
        .thresholds
        .iter()
        .filter(|r| r.subset == Subset::All)
        .collect();
    let rows: Vec<&str> = all.iter().map(|r| r.rule.as_str()).collect();
    assert_eq!(
        rows,
        ["max_prob", "neg_entropy", "margin", "not_none", "native"]
    );
    let r = all[0];
    assert_eq!(r.threshold, Some(0.625));
    assert_eq!(
        (
            r.calibration_false_rejection.successes,
            r.calibration_false_rejection.n
        ),
        (1, 20)
    );
    close(value(&r.calibration_false_rejection), 0.05);
    close(value(&r.calibration_detection), 0.5);
    close(value(&r.test_false_rejection), 0.2);
    close(value(&r.test_detection), 0.6);
    assert!(r.calibration_detection.estimate.interval.is_none());
    assert!(r.test_detection.estimate.interval.is_some());
    // No with-none decisions: no threshold, nothing measured.
    assert_eq!(all[3].threshold, None);
    assert_eq!(all[4].test_detection.n, 0);

    // By hand: 1 of 20 below 0.45 is allowed, 3 of 20 below 0.5 are not.
    let mut x = vec![0.4, 0.45, 0.45, 0.5];
    x.extend([0.9; 16]);
    assert_eq!(calibrated_threshold(&x, 0.05), Some(0.45));
    // Two tied lowest scores: only the lowest value rejects nothing.
    x[1] = 0.4;
    assert_eq!(calibrated_threshold(&x, 0.05), Some(0.4));
    assert_eq!(calibrated_threshold(&x, 0.10), Some(0.45));
    assert_eq!(calibrated_threshold(&x, 1.0), Some(0.9));
    assert_eq!(calibrated_threshold(&[], 0.05), None);
}

#[test]
fn coverage_full_set_subsets_with_two_models() {
    // numpy 2.4.6: rej_m1 = np.array([1,1,0,0], bool)   # m1's rejected present decisions
    //   full_m1 = np.array([1,1,1,0], bool); full_m2 = np.array([0,1,1,1], bool)
    //   rej_m1.mean(), rej_m1[full_m1].mean(), rej_m1[full_m1 & full_m2].mean()
    //                                                    # 0.5, 0.6666666666666666, 0.5
    let full = |m: &str, c: &str, ok: bool| {
        let p = if ok {
            [0.5, 0.1, 0.1, 0.1, 0.1, 0.1]
        } else {
            [0.1, 0.5, 0.1, 0.1, 0.1, 0.1]
        };
        dec(m, c, TEST, SetKind::Full, false, &p)
    };
    let mut v = vec![
        full("m1", "c1", true),
        full("m1", "c2", true),
        full("m1", "c3", true),
        full("m1", "c4", false),
        failed(full("m2", "c1", true), Some("timeout")),
        full("m2", "c2", true),
        full("m2", "c3", true),
        full("m2", "c4", true),
        // A with-none full-set decision is not used for the subsets.
        dec(
            "m1",
            "c4",
            TEST,
            SetKind::Full,
            true,
            &[0.5, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05],
        ),
    ];
    for (i, c) in ["c1", "c2", "c3", "c4"].iter().enumerate() {
        for m in ["m1", "m2"] {
            let rejected = m == "m1" && i < 2;
            let p: &[f64] = if rejected {
                &[0.2, 0.2, 0.6]
            } else {
                &[0.6, 0.2, 0.2]
            };
            v.push(dec(m, c, TEST, SetKind::Present, true, p));
            v.push(dec(m, c, TEST, SetKind::Absent, true, &[0.2, 0.2, 0.6]));
        }
    }
    let s = coverage_summary(&v, &cfg(200)).unwrap();
    let texts = |m, sub| cell(&s, m, 2, sub).texts;
    assert_eq!(
        (
            texts("m1", Subset::All),
            texts("m1", Subset::FullSetCorrect),
            texts("m1", Subset::SharedCorrect)
        ),
        (4, 3, 2)
    );
    assert_eq!(texts("m2", Subset::FullSetCorrect), 3);
    close(value(&cell(&s, "m1", 2, Subset::All).false_rejection), 0.5);
    close(
        value(&cell(&s, "m1", 2, Subset::FullSetCorrect).false_rejection),
        0.6666666666666666,
    );
    close(
        value(&cell(&s, "m1", 2, Subset::SharedCorrect).false_rejection),
        0.5,
    );
    close(
        value(&cell(&s, "m2", 2, Subset::SharedCorrect).false_rejection),
        0.0,
    );
    let order: Vec<(&str, Subset)> = s
        .cells
        .iter()
        .map(|c| (c.model.as_str(), c.subset))
        .collect();
    assert_eq!(
        order[..3],
        [
            ("m1", Subset::All),
            ("m1", Subset::FullSetCorrect),
            ("m1", Subset::SharedCorrect)
        ]
    );
    assert_eq!(order[3].0, "m2");
    let f: Vec<(&str, u64, u64, u64, u64, u64)> = s
        .full_set
        .iter()
        .map(|r| {
            (
                r.model.as_str(),
                r.accuracy.successes,
                r.accuracy.n,
                r.full_set_correct,
                r.shared_correct,
                r.missing,
            )
        })
        .collect();
    assert_eq!(f, [("m1", 3, 4, 3, 2, 0), ("m2", 3, 3, 3, 2, 1)]);
    close(value(&s.full_set[0].accuracy), 0.75);
}

#[test]
fn coverage_quantization_and_sum_audits_match_numpy() {
    // scikit-learn 1.9.1, numpy 2.4.6 (np.round: half to even):
    //   def mp(p, q=None):
    //       p = np.asarray(p, float); p = np.round(p, q) if q is not None else p
    //       return np.max(p / p.sum())
    //   y = np.r_[np.ones(len(P)), np.zeros(len(A))]
    //   a0 = roc_auc_score(y, [mp(p) for p in P + A]); a1 = roc_auc_score(y, [mp(p, 2) for p in P + A])
    //   k2: 0.625 → 0.59375 (−0.03125); k3: 0.4444444444444445 → 0.33333333333333337
    //   (−0.1111111111111111)
    //   sums: dev = [abs(np.sum(p) - 1) for p in S]; sum(d > 0.001 for d in dev) = 2,
    //   max(dev) = 0.010000000000000009
    let q2p: [&[f64]; 4] = [&[0.504, 0.496], &[0.61, 0.39], &[0.7, 0.3], &[0.8, 0.2]];
    let q2a: [&[f64]; 4] = [&[0.502, 0.498], &[0.6, 0.4], &[0.55, 0.45], &[0.9, 0.1]];
    let q3p: [&[f64]; 3] = [&[0.604, 0.3, 0.096], &[0.5, 0.3, 0.2], &[0.452, 0.3, 0.248]];
    let q3a: [&[f64]; 3] = [&[0.598, 0.3, 0.102], &[0.45, 0.35, 0.2], &[0.7, 0.2, 0.1]];
    let mut v = Vec::new();
    for (i, (p, a)) in q2p.iter().zip(&q2a).chain(q3p.iter().zip(&q3a)).enumerate() {
        v.push(dec("m", &format!("c{i}"), TEST, SetKind::Present, false, p));
        v.push(dec("m", &format!("c{i}"), TEST, SetKind::Absent, false, a));
    }
    let sums: [&[f64]; 4] = [
        &[0.33, 0.33, 0.33],
        &[0.5, 0.5005],
        &[0.34, 0.33, 0.33],
        &[0.6, 0.402],
    ];
    for (i, p) in sums.iter().enumerate() {
        v.push(dec(
            "jev",
            &format!("s{i}"),
            TEST,
            SetKind::Present,
            false,
            p,
        ));
    }
    let s = coverage_summary(&v, &cfg(100)).unwrap();
    let q = |k: usize| {
        s.audit
            .quantization
            .iter()
            .find(|r| r.model == "m" && r.k == k && r.score == CoverageScore::MaxProb)
            .unwrap()
    };
    close(q(2).auroc.unwrap(), 0.625);
    close(q(2).quantized_auroc.unwrap(), 0.59375);
    close(q(2).change.unwrap(), -0.03125);
    close(q(3).auroc.unwrap(), 0.4444444444444445);
    close(q(3).quantized_auroc.unwrap(), 0.33333333333333337);
    let big = s.audit.largest_change.as_ref().unwrap();
    assert_eq!((big.model.as_str(), big.k), ("m", 3));
    close(big.change.unwrap().abs(), 0.1111111111111111);
    assert_eq!(s.audit.quantize_decimals, 2);
    // No quantization at 3 decimals changes nothing here.
    let s3 = coverage_summary(
        &v,
        &CoverageStatsConfig {
            quantize_decimals: 3,
            ..cfg(100)
        },
    )
    .unwrap();
    assert!(s3
        .audit
        .quantization
        .iter()
        .all(|r| r.change.is_none_or(|c| c == 0.0)));

    let jev = s.audit.prob_sums.iter().find(|r| r.model == "jev").unwrap();
    assert_eq!((jev.decisions, jev.deviating), (4, 2));
    close(jev.max_deviation, 0.010000000000000009);
    let m = s.audit.prob_sums.iter().find(|r| r.model == "m").unwrap();
    assert_eq!((m.decisions, m.deviating), (14, 0));
}

/// Thirty paired texts with varied scores, all variants.
fn varied() -> Vec<Decision> {
    let mut v = Vec::new();
    for i in 0..30u32 {
        let c = format!("c{i:02}");
        let u = f64::from((i * 37) % 30) / 30.0;
        let w = f64::from((i * 11) % 30) / 30.0;
        let p = 0.4 + 0.5 * u;
        let a = 0.35 + 0.4 * w;
        v.push(dec(
            "m",
            &c,
            TEST,
            SetKind::Present,
            false,
            &[p, (1.0 - p) * 0.7, (1.0 - p) * 0.3],
        ));
        v.push(dec(
            "m",
            &c,
            TEST,
            SetKind::Absent,
            false,
            &[(1.0 - a) * 0.6, a, (1.0 - a) * 0.4],
        ));
        let (qn, qa) = (0.5 * w, 0.3 + 0.6 * u);
        let none = |q: f64| [(1.0 - q) * 0.6, (1.0 - q) * 0.4, 0.0, q];
        v.push(dec("m", &c, TEST, SetKind::Present, true, &none(qn)));
        v.push(dec("m", &c, TEST, SetKind::Absent, true, &none(qa)));
    }
    v
}

#[test]
fn coverage_bootstrap_is_seeded_and_covers_the_point() {
    let v = varied();
    let a = coverage_summary(&v, &cfg(500)).unwrap();
    let b = coverage_summary(&v, &cfg(500)).unwrap();
    assert_eq!(a, b);
    let other = coverage_summary(
        &v,
        &CoverageStatsConfig {
            seed: 7,
            ..cfg(500)
        },
    )
    .unwrap();
    let c = cell(&a, "m", 3, Subset::All);
    let o = cell(&other, "m", 3, Subset::All);
    assert_eq!(c.detection.estimate.value, o.detection.estimate.value);
    assert_ne!(
        c.discrimination[0].auroc.interval,
        o.discrimination[0].auroc.interval
    );
    let rates = [
        &c.accuracy,
        &c.accuracy_with_none,
        &c.detection,
        &c.false_rejection,
        &c.acceptance,
        &c.error_among_accepted,
    ];
    let mut estimates: Vec<_> = rates.iter().map(|r| r.estimate).collect();
    estimates.extend(
        c.discrimination
            .iter()
            .flat_map(|d| [d.auroc, d.average_precision]),
    );
    for e in estimates {
        let (x, i) = (e.value.unwrap(), e.interval.unwrap());
        assert!(i.contains(x), "{x} outside {i:?}");
        assert!(i.width() > 0.0);
        assert_eq!(e.defined_draws + e.dropped_draws, 500);
    }
    // Adding another model leaves this cell's intervals unchanged.
    let mut more = v.clone();
    more.extend(v.iter().map(|d| Decision {
        model: "z".into(),
        ..d.clone()
    }));
    let m = coverage_summary(&more, &cfg(500)).unwrap();
    assert_eq!(cell(&m, "m", 3, Subset::All), c);
    // Serializes.
    let json = serde_json::to_string(&a).unwrap();
    assert!(json.contains("\"subset\":\"full_set_correct\""));
}

#[test]
fn coverage_bad_input_is_reported() {
    let mut v = varied();
    assert!(matches!(
        coverage_summary(&v, &cfg(0)),
        Err(StatsError::ZeroDraws)
    ));
    assert!(coverage_summary(
        &v,
        &CoverageStatsConfig {
            level: 1.0,
            ..cfg(10)
        }
    )
    .is_err());
    assert!(coverage_summary(
        &v,
        &CoverageStatsConfig {
            max_false_rejection: 1.5,
            ..cfg(10)
        }
    )
    .is_err());
    let mut bad = v[0].clone();
    bad.probabilities[0] = f64::NAN;
    assert!(coverage_summary(&[bad], &cfg(10)).is_err());
    let mut short = v[0].clone();
    short.probabilities.pop();
    assert_eq!(
        missing_reason(&short).as_deref(),
        Some("probabilities do not match labels")
    );
    v.push(v[3].clone());
    assert!(matches!(
        coverage_summary(&v, &cfg(10)),
        Err(StatsError::DuplicateItem { .. })
    ));
}

/// Raw scores of a decision whose options have the given token log-probabilities.
fn with_tokens(mut d: Decision, tokens: Vec<Vec<f64>>) -> Decision {
    d.raw = Some(OptionLogprobs {
        logprobs: tokens.iter().map(|t| t.iter().sum()).collect(),
        token_logprobs: tokens,
    });
    d
}

/// Error among accepted is reported pooled and apart on present sets (G = 1) and absent
/// sets (G = 0).
#[test]
fn error_among_accepted_is_named_apart_on_present_and_absent_sets() {
    let v = vec![
        // c1: present accepted wrong (b), absent accepted (x, always wrong).
        dec("m", "c1", TEST, SetKind::Present, true, &[0.1, 0.6, 0.3]),
        dec("m", "c1", TEST, SetKind::Absent, true, &[0.7, 0.1, 0.2]),
        // c2: present accepted right, absent rejected.
        dec("m", "c2", TEST, SetKind::Present, true, &[0.8, 0.1, 0.1]),
        dec("m", "c2", TEST, SetKind::Absent, true, &[0.1, 0.1, 0.8]),
    ];
    let s = coverage_summary(&v, &cfg(50)).unwrap();
    let c = cell(&s, "m", 2, Subset::All);
    assert_eq!(
        (c.error_among_accepted.successes, c.error_among_accepted.n),
        (2, 3)
    );
    let p = &c.error_among_accepted_present;
    assert_eq!((p.successes, p.n), (1, 2));
    let a = &c.error_among_accepted_absent;
    assert_eq!((a.successes, a.n), (1, 1));
    close(value(a), 1.0);
    assert!(!c.all_but_reference);
}

/// A cell of k = L − 1 is marked; calibrated thresholds are tested on every subset.
#[test]
fn all_but_reference_cells_are_marked_and_thresholds_are_tested_on_every_subset() {
    let mut v = Vec::new();
    for (case, split) in [("c1", CAL), ("c2", TEST), ("c3", TEST)] {
        for set in [SetKind::Present, SetKind::Absent] {
            for none in [false, true] {
                let probs: &[f64] = if none { &[0.5, 0.3, 0.2] } else { &[0.6, 0.4] };
                let mut d = dec("m", case, split, set, none, probs);
                d.task_labels = Some(3);
                v.push(d);
            }
        }
    }
    v.push(dec(
        "m",
        "c2",
        TEST,
        SetKind::Full,
        false,
        &[0.5, 0.1, 0.1, 0.1, 0.1, 0.1],
    ));
    let s = coverage_summary(&v, &cfg(50)).unwrap();
    assert!(cell(&s, "m", 2, Subset::All).all_but_reference);
    for subset in Subset::ALL {
        let rows: Vec<_> = s.thresholds.iter().filter(|t| t.subset == subset).collect();
        assert_eq!(rows.len(), 5, "{subset:?}");
        assert!(rows.iter().all(|t| t.all_but_reference));
    }
    // The threshold is the same on every subset; only the tested texts differ.
    let t = |subset| {
        s.thresholds
            .iter()
            .find(|t| t.subset == subset && t.rule == "max_prob")
            .unwrap()
            .clone()
    };
    assert_eq!(
        t(Subset::All).threshold,
        t(Subset::FullSetCorrect).threshold
    );
    assert_eq!(t(Subset::All).test_false_rejection.n, 2);
    assert_eq!(t(Subset::FullSetCorrect).test_false_rejection.n, 1);
}

/// A pair whose shared option has different token counts was scored under two closing rules:
/// the audit counts it (the check that would have caught the pair-rule asymmetry).
#[test]
fn the_pair_audit_counts_pairs_tokenized_differently() {
    let present = |case: &str, b_tokens: usize| {
        with_tokens(
            dec("m", case, TEST, SetKind::Present, false, &[0.6, 0.4]),
            vec![vec![-0.3; 2], vec![-0.5; b_tokens]],
        )
    };
    let absent = |case: &str| {
        with_tokens(
            dec("m", case, TEST, SetKind::Absent, false, &[0.6, 0.4]),
            vec![vec![-0.3], vec![-0.5]],
        )
    };
    // c1: b is closed in the present set only (2 tokens against 1); c2: alike.
    let v = vec![
        present("c1", 2),
        absent("c1"),
        present("c2", 1),
        absent("c2"),
    ];
    let s = coverage_summary(&v, &cfg(20)).unwrap();
    let p = &s.audit.pair_closing[0];
    assert_eq!((p.pairs, p.mismatched), (2, 1));
    assert!(
        p.examples[0].starts_with("c1 k2/natural/plain"),
        "{:?}",
        p.examples
    );
}

/// The stored token log-probabilities read under another rule: a long name that loses under
/// the sum wins per token, and the audit counts the changed choice.
#[test]
fn rule_changes_are_counted_from_the_token_log_probabilities() {
    let d = with_tokens(
        dec("m", "c1", TEST, SetKind::Present, false, &[0.55, 0.45]),
        vec![vec![-1.0], vec![-0.5, -0.3, -0.3, -0.3]],
    );
    let e = with_tokens(
        dec("m", "c1", TEST, SetKind::Absent, false, &[0.6, 0.4]),
        vec![vec![-0.5], vec![-1.0]],
    );
    let s = coverage_summary(&[d, e], &cfg(20)).unwrap();
    let row = |other| {
        s.audit
            .rule_changes
            .iter()
            .find(|r| r.other == other)
            .unwrap()
    };
    let mean = row(ScoringRule::MeanPerToken);
    assert_eq!(mean.recorded, ScoringRule::Summed);
    assert_eq!((mean.decisions, mean.choice_changed), (2, 1));
    assert_eq!(mean.accuracy_recorded.successes, 1);
    assert_eq!(mean.accuracy_other.successes, 0);
    let first = row(ScoringRule::FirstToken);
    assert_eq!(first.choice_changed, 1);
    // Every choice agrees with the raw scores under the recorded rule.
    assert_eq!(s.audit.prob_sums[0].with_raw_scores, 2);
    assert_eq!(s.audit.prob_sums[0].choice_not_raw_argmax, 0);
}

/// Renormalizing leaves the ordinary scores' AUROC and moves 1 − p(none) when the sums are
/// not 1 ("Renormalizing Jev distributions changes any tested AUROC by at most 0.00042").
#[test]
fn renormalization_is_audited() {
    let v = vec![
        dec("m", "c1", TEST, SetKind::Present, true, &[0.5, 0.1, 0.2]),
        dec("m", "c1", TEST, SetKind::Absent, true, &[0.4, 0.3, 0.45]),
        dec("m", "c2", TEST, SetKind::Present, true, &[0.3, 0.3, 0.3]),
        dec("m", "c2", TEST, SetKind::Absent, true, &[0.2, 0.2, 0.3]),
    ];
    let s = coverage_summary(&v, &cfg(20)).unwrap();
    let q = s
        .audit
        .quantization
        .iter()
        .find(|q| q.score == CoverageScore::NotNone)
        .unwrap();
    // Recorded 1 − p(none): present 0.8, 0.7; absent 0.55, 0.7 → AUROC (1 + 0.5 + 1 + 1)/4.
    close(q.auroc.unwrap(), 0.875);
    // Renormalized: present 0.75, 0.6667; absent 0.6087, 0.5714 → 1.
    close(q.renormalized_auroc.unwrap(), 1.0);
    close(q.renormalization_change.unwrap(), 0.125);
    assert!(s.audit.largest_renormalization_change.is_some());
}
