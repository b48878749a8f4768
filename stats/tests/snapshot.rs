//! Snapshot metric rows: grouping, interval choice, Holm families, order and errors.

use c2s_records::{Confidence, Domain, Membership, PairedOutcome, Trajectory};
use c2s_stats::{
    calibration_metrics, clopper_pearson, comparison_label, holm, independence_metrics,
    mcnemar_exact, paired_metrics, FamilyScope, HolmFamily, MetricRow, StatsConfig, StatsError,
    CI_BOOTSTRAP, CI_CLOPPER_PEARSON,
};

const NATIVE: &str = "Native/code";
const FULL: &str = "Serial/Full/code";
const UNION: &str = "Serial/UnionCall/code";

fn outcome(
    model: &str,
    domain: Domain,
    serial_arm: &str,
    i: usize,
    length: usize,
    native: bool,
    serial: bool,
) -> PairedOutcome {
    PairedOutcome {
        item_id: format!("{}-{length}-{i:03}", domain.as_str()),
        domain,
        length,
        model: model.to_string(),
        native_arm: NATIVE.to_string(),
        serial_arm: serial_arm.to_string(),
        native_correct: native,
        serial_correct: serial,
        pattern: None,
    }
}

/// 2 domains × 2 comparisons × lengths 3..=8 × 10 items. Arithmetic/Full: Native correct on
/// items 0..8, Serial on 0..(11 − L) (fewer at longer lengths) plus item 9 (a gain).
/// Lexical/Full: Serial never correct (zero-success SCR). Union: Serial correct on 0..8.
fn outcomes() -> Vec<PairedOutcome> {
    let mut v = Vec::new();
    for domain in Domain::NATURAL {
        for length in 3..=8usize {
            for i in 0..10 {
                let native = i < 8;
                let full = match domain {
                    Domain::Arithmetic => i < 11 - length || i == 9,
                    _ => false,
                };
                v.push(outcome("m", domain, FULL, i, length, native, full));
                v.push(outcome("m", domain, UNION, i, length, native, i < 8));
            }
        }
    }
    v
}

fn cfg() -> StatsConfig {
    StatsConfig {
        bootstrap_draws: 499,
        ..StatsConfig::default()
    }
}

fn find<'a>(
    rows: &'a [MetricRow],
    domain: &str,
    comparison: &str,
    length: Option<u32>,
    metric: &str,
) -> &'a MetricRow {
    let found: Vec<&MetricRow> = rows
        .iter()
        .filter(|r| {
            r.domain_str() == domain
                && r.comparison == comparison
                && r.length == length
                && r.metric == metric
        })
        .collect();
    assert_eq!(found.len(), 1, "{domain} {comparison} {length:?} {metric}");
    found[0]
}

#[test]
fn defaults_match_the_paper() {
    let c = StatsConfig::default();
    assert_eq!(c.bootstrap_draws, 9_999);
    assert_eq!(c.seed, 20_261_005);
    assert_eq!(c.level, 0.95);
    assert!(c.families.is_empty());
}

#[test]
fn rows_cover_counts_rates_and_tests() {
    let rows = paired_metrics(&outcomes(), &cfg(), 7).unwrap();
    let full = comparison_label(NATIVE, FULL);
    assert_eq!(full, "Native/code vs Serial/Full/code");
    assert!(rows.iter().all(|r| r.snapshot == 7 && r.model == "m"));

    // Arithmetic, L = 3: Serial correct on items 0..8 and 9 → 8/0/1/1.
    let l3 = |m| find(&rows, "arithmetic", &full, Some(3), m);
    assert_eq!(l3("both").value, Some(8.0));
    assert_eq!(l3("native_only").numerator, Some(0));
    assert_eq!(l3("serial_only").numerator, Some(1));
    assert_eq!(l3("neither").denominator, Some(10));
    let scr = l3("scr");
    assert_eq!(
        (scr.numerator, scr.denominator, scr.value),
        (Some(8), Some(8), Some(1.0))
    );
    assert_eq!(scr.ci_method.as_deref(), Some(CI_BOOTSTRAP));
    assert_eq!((scr.ci_low, scr.ci_high), (Some(1.0), Some(1.0)));
    assert_eq!(l3("scr_bootstrap_dropped").denominator, Some(499));
    let gain = l3("gain_rate");
    assert_eq!(
        (gain.numerator, gain.denominator, gain.value),
        (Some(1), Some(2), Some(0.5))
    );

    // Arithmetic, L = 8: Serial correct on items 0..3 and 9 → 3/5/1/1.
    let l8 = |m| find(&rows, "arithmetic", &full, Some(8), m);
    assert_eq!(l8("both").value, Some(3.0));
    assert_eq!(l8("native_only").value, Some(5.0));
    assert_eq!(l8("scr_lower_bound").value, Some(2.0 / 8.0)); // max(0, 8 + 4 − 10)/8
    assert_eq!(l8("scr_upper_bound").value, Some(4.0 / 8.0)); // min(8, 4)/8
    assert_eq!(l8("loss_mass").value, Some(0.5));

    // All lengths: both = 8+7+6+5+4+3 = 33, native_only = 15, serial_only = 6, neither = 6.
    let all = |m| find(&rows, "arithmetic", &full, None, m);
    assert_eq!(all("both").value, Some(33.0));
    assert_eq!(all("native_only").value, Some(15.0));
    assert_eq!(all("serial_only").value, Some(6.0));
    assert_eq!(all("neither").value, Some(6.0));
    assert_eq!(all("native_em").numerator, Some(48));
    assert_eq!(all("native_em").denominator, Some(60));
    let scr = all("scr");
    assert_eq!(scr.value, Some(33.0 / 48.0));
    let (lo, hi) = (scr.ci_low.unwrap(), scr.ci_high.unwrap());
    assert!(lo < 33.0 / 48.0 && 33.0 / 48.0 < hi && hi <= 1.0);
    // Equal lengths of equal size: the equal-length mixture equals the pooled value.
    let eq = all("scr_equal_length");
    assert!((eq.value.unwrap() - 33.0 / 48.0).abs() < 1e-12);
    assert_eq!(eq.numerator, None);
    let mc = all("mcnemar_p");
    assert_eq!(mc.value, Some(mcnemar_exact(15, 6)));
    assert_eq!((mc.numerator, mc.denominator), (Some(15), Some(21)));
    // No McNemar on per-length rows; no equal-length rows per length.
    assert!(!rows.iter().any(|r| r.length.is_some()
        && (r.metric.to_string().starts_with("mcnemar")
            || r.metric.to_string().ends_with("equal_length"))));
}

#[test]
fn zero_success_scr_uses_clopper_pearson() {
    let rows = paired_metrics(&outcomes(), &cfg(), 0).unwrap();
    let full = comparison_label(NATIVE, FULL);
    // Lexical/Full: 0 of 48 Native successes kept; of 8 per length.
    let all = find(&rows, "lexical", &full, None, "scr");
    assert_eq!(
        (all.value, all.numerator, all.denominator),
        (Some(0.0), Some(0), Some(48))
    );
    assert_eq!(all.ci_method.as_deref(), Some(CI_CLOPPER_PEARSON));
    assert_eq!(all.ci_low, Some(0.0));
    let exact = clopper_pearson(0, 48, 0.95).unwrap().unwrap();
    assert_eq!(all.ci_high, Some(exact.high));
    // scipy.stats.beta.ppf(0.975, 1, 48) = 0.07396...: 1 − 0.025^(1/48).
    assert!((exact.high - (1.0 - 0.025f64.powf(1.0 / 48.0))).abs() < 1e-12);
    let l5 = find(&rows, "lexical", &full, Some(5), "scr");
    assert_eq!(l5.ci_method.as_deref(), Some(CI_CLOPPER_PEARSON));
    assert!(!rows.iter().any(|r| r.domain_str() == "lexical"
        && r.comparison == full
        && r.metric == "scr_bootstrap_dropped"));
}

#[test]
fn undefined_scr_has_no_value_and_no_interval() {
    let v: Vec<PairedOutcome> = (0..6)
        .map(|i| outcome("m", Domain::Arithmetic, FULL, i, 4, false, i % 2 == 0))
        .collect();
    let rows = paired_metrics(&v, &cfg(), 0).unwrap();
    let full = comparison_label(NATIVE, FULL);
    for length in [Some(4), None] {
        let scr = find(&rows, "arithmetic", &full, length, "scr");
        assert_eq!(
            (scr.value, scr.numerator, scr.denominator),
            (None, Some(0), Some(0))
        );
        assert_eq!(
            (scr.ci_low, scr.ci_high, scr.ci_method.as_deref()),
            (None, None, None)
        );
        assert_eq!(
            find(&rows, "arithmetic", &full, length, "scr_lower_bound").value,
            None
        );
    }
    assert_eq!(
        find(&rows, "arithmetic", &full, None, "scr_equal_length").value,
        None
    );
}

/// Paper A.6: "The primary six Native/Serial exact McNemar tests share a Holm correction at
/// 0.05. Later panels state their own seeds, draw counts and correction families." With no
/// declared family, Native/code vs Serial/Full/code forms one family across models and
/// domains; a supplementary comparison (here Union) gets no Holm row.
#[test]
fn default_holm_family_is_the_papers_primary_family() {
    assert_eq!(
        HolmFamily::primary(),
        HolmFamily {
            name: "primary".into(),
            comparisons: vec![comparison_label(NATIVE, FULL)],
            scope: FamilyScope::Global,
        }
    );
    let rows = paired_metrics(&outcomes(), &cfg(), 0).unwrap();
    let full = comparison_label(NATIVE, FULL);
    let raw: Vec<f64> = ["arithmetic", "lexical"]
        .iter()
        .map(|d| find(&rows, d, &full, None, "mcnemar_p").value.unwrap())
        .collect();
    let expected = holm(&raw).unwrap();
    for (domain, e) in ["arithmetic", "lexical"].iter().zip(expected) {
        let r = find(&rows, domain, &full, None, "mcnemar_p_holm");
        assert_eq!(r.value, Some(e));
        assert_eq!(r.denominator, Some(2));
    }
    let union = comparison_label(NATIVE, UNION);
    assert!(!rows
        .iter()
        .any(|r| r.comparison == union && r.metric == "mcnemar_p_holm"));
    for s in FamilyScope::ALL {
        assert_eq!(FamilyScope::parse(s.as_str()), Some(s));
    }
    assert_eq!(FamilyScope::parse("per_modell"), None);
}

#[test]
fn declared_families_and_scopes() {
    let full = comparison_label(NATIVE, FULL);
    let union = comparison_label(NATIVE, UNION);
    let cfg = StatsConfig {
        families: vec![HolmFamily {
            name: "primary".into(),
            comparisons: vec![full.clone()],
            scope: FamilyScope::Global,
        }],
        ..cfg()
    };
    let rows = paired_metrics(&outcomes(), &cfg, 0).unwrap();
    // Full spans both domains in one family of two tests; Union is in no family.
    let raw: Vec<f64> = ["arithmetic", "lexical"]
        .iter()
        .map(|d| find(&rows, d, &full, None, "mcnemar_p").value.unwrap())
        .collect();
    let expected = holm(&raw).unwrap();
    for (d, e) in ["arithmetic", "lexical"].iter().zip(expected) {
        assert_eq!(find(&rows, d, &full, None, "mcnemar_p_holm").value, Some(e));
    }
    assert!(!rows
        .iter()
        .any(|r| r.comparison == union && r.metric == "mcnemar_p_holm"));

    let overlap = StatsConfig {
        families: vec![
            HolmFamily {
                name: "a".into(),
                comparisons: vec![full.clone()],
                scope: FamilyScope::PerModelDomain,
            },
            HolmFamily {
                name: "b".into(),
                comparisons: vec![full.clone()],
                scope: FamilyScope::PerModel,
            },
        ],
        ..StatsConfig::default()
    };
    assert_eq!(
        paired_metrics(&outcomes(), &overlap, 0),
        Err(StatsError::FamilyOverlap(full))
    );
}

#[test]
fn output_is_sorted_and_independent_of_input_order() {
    let v = outcomes();
    let a = paired_metrics(&v, &cfg(), 3).unwrap();
    let mut rev = v.clone();
    rev.reverse();
    rev.rotate_left(17);
    let b = paired_metrics(&rev, &cfg(), 3).unwrap();
    assert_eq!(a, b);
    let mut sorted = a.clone();
    c2s_stats::sort_rows(&mut sorted);
    assert_eq!(a, sorted);
    // Per-length rows come before the all-lengths rows of the same comparison.
    let first = &a[0];
    assert_eq!(first.length, Some(3));
    assert_eq!(first.metric, "both");
}

#[test]
fn bad_input_is_an_error() {
    let mut v = outcomes();
    v.push(v[0].clone());
    assert!(matches!(
        paired_metrics(&v, &cfg(), 0),
        Err(StatsError::DuplicateItem { .. })
    ));
    let bad_level = StatsConfig {
        level: 1.5,
        ..cfg()
    };
    assert_eq!(
        paired_metrics(&outcomes(), &bad_level, 0),
        Err(StatsError::InvalidLevel(1.5))
    );
    let no_draws = StatsConfig {
        bootstrap_draws: 0,
        ..cfg()
    };
    assert_eq!(
        paired_metrics(&outcomes(), &no_draws, 0),
        Err(StatsError::ZeroDraws)
    );
    assert_eq!(paired_metrics(&[], &cfg(), 0), Ok(vec![]));
}

#[test]
fn config_round_trips_through_json() {
    let c = StatsConfig {
        families: vec![HolmFamily {
            name: "primary".into(),
            comparisons: vec!["Native/code vs Serial/Full/code".into()],
            scope: FamilyScope::Global,
        }],
        ..StatsConfig::default()
    };
    let json = serde_json::to_string(&c).unwrap();
    assert!(json.contains("\"global\""));
    let back: StatsConfig = serde_json::from_str(&json).unwrap();
    assert_eq!(back, c);
    let minimal: StatsConfig =
        serde_json::from_str(r#"{"bootstrap_draws": 99, "seed": 1, "level": 0.9}"#).unwrap();
    assert!(minimal.families.is_empty());
}

fn trajectory(
    item: usize,
    arm: &str,
    length: usize,
    positions: Vec<bool>,
    score: Option<f64>,
) -> Trajectory {
    let correct = positions.iter().all(|&p| p);
    Trajectory {
        item_id: format!("it{item:03}"),
        domain: Domain::Lexical,
        length,
        model: "m".into(),
        arm: c2s_records::LabeledArm::parse(arm).unwrap_or_else(|e| panic!("{e}")),
        support: Some(c2s_records::Support::FULL),
        output: String::new(),
        correct,
        valid: true,
        fidelity: None,
        plan: None,
        plan_origin: None,
        plan_differences: None,
        base_id: None,
        operation: None,
        placement: None,
        repeated: None,
        pattern: None,
        membership: if correct {
            Membership::Gold
        } else {
            Membership::Outside
        },
        recombination: false,
        stop: None,
        aborted: false,
        calls: length as u32,
        fills: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        latency_ms: 0.0,
        confidence: score.map(|s| Confidence {
            product: s,
            geometric_mean: s.sqrt(),
            min_top: s,
            steps: length as u32,
        }),
        position_correct: positions,
        steps: Vec::new(),
    }
}

#[test]
fn independence_rows() {
    // Eight items of length 2 under Independent: positions (✓✓)×3, (✓✗)×3, (✗✓)×2.
    // c = (6/8, 5/8), R = 30/64, EM = 3/8, EM − R = −6/64.
    let patterns = [
        [true, true],
        [true, true],
        [true, true],
        [true, false],
        [true, false],
        [true, false],
        [false, true],
        [false, true],
    ];
    let mut ts: Vec<Trajectory> = patterns
        .iter()
        .enumerate()
        .map(|(i, p)| trajectory(i, "Independent/Full/code", 2, p.to_vec(), None))
        .collect();
    // Serial trajectories are not part of the reference.
    ts.push(trajectory(
        50,
        "Serial/Full/code",
        2,
        vec![true, true],
        None,
    ));
    let rows = independence_metrics(&ts, &cfg(), 1).unwrap();
    let get = |m: &str| rows.iter().find(|r| r.metric == m).unwrap();
    assert!(rows.iter().all(|r| r.comparison == "Independent/Full/code"));
    assert_eq!(get("items").value, Some(8.0));
    assert_eq!(get("position_accuracy_1").value, Some(0.75));
    assert_eq!(get("position_accuracy_2").numerator, Some(5));
    assert_eq!(get("independence_reference").value, Some(30.0 / 64.0));
    assert_eq!(get("string_em").value, Some(3.0 / 8.0));
    assert_eq!(get("string_em").numerator, Some(3));
    let d = get("em_minus_reference");
    assert!((d.value.unwrap() + 6.0 / 64.0).abs() < 1e-15);
    assert!(d.ci_low.unwrap() <= d.ci_high.unwrap());
    assert_eq!(d.ci_method.as_deref(), Some(CI_BOOTSTRAP));

    let bad = vec![trajectory(1, "Independent/Full/code", 3, vec![true], None)];
    assert!(matches!(
        independence_metrics(&bad, &cfg(), 0),
        Err(StatsError::PositionCount { .. })
    ));
}

#[test]
fn calibration_rows() {
    // Scores 0.9 ✓, 0.8 ✓, 0.6 ✗, 0.2 ✗ (+ one without confidence, skipped).
    let ts = vec![
        trajectory(0, "Serial/Full/code", 3, vec![true; 3], Some(0.9)),
        trajectory(1, "Serial/Full/code", 4, vec![true; 4], Some(0.8)),
        trajectory(2, "Serial/Full/code", 5, vec![false; 5], Some(0.6)),
        trajectory(3, "Serial/Full/code", 6, vec![false; 6], Some(0.2)),
        trajectory(4, "Serial/Full/code", 6, vec![false; 6], None),
    ];
    let rows = calibration_metrics(&ts, 2).unwrap();
    let get = |m: &str| rows.iter().find(|r| r.metric == m).unwrap();
    assert_eq!(get("auroc_product").value, Some(1.0));
    assert_eq!(get("ap_product").value, Some(1.0));
    // (0.01 + 0.04 + 0.36 + 0.04) / 4
    assert!((get("brier_product").value.unwrap() - 0.1125).abs() < 1e-15);
    assert_eq!(get("auroc_negative_length").value, Some(1.0));
    assert_eq!(get("prevalence").value, Some(0.5));
    assert_eq!(get("prevalence").denominator, Some(4));
    assert_eq!(get("brier_prevalence").value, Some(0.25));
    assert_eq!(get("ap_prevalence").value, Some(0.5));
    assert!(rows.iter().all(|r| r.length.is_none()));
}

/// A.6: "Natural strata are domain/length. … Semantic bases use gold pattern." Semantic
/// records all have three decisions, so a length stratum would resample them as one pool; the
/// gold-pattern strata keep every pattern's count of records in each draw. Here Native is right
/// on every record of four patterns and wrong on the other four: within patterns nothing
/// varies, so the pattern-stratified interval is the point itself, while one pooled length
/// stratum gives a wide one. The length-3 row is the pooled row, and the equal-length mixture
/// of one length is the pooled estimate.
#[test]
fn semantic_outcomes_are_stratified_by_gold_pattern() {
    let comparison = comparison_label(NATIVE, FULL);
    let records = |with_pattern: bool| -> Vec<PairedOutcome> {
        (0..128)
            .map(|i| {
                let pattern = format!("{:03b}", i % 8);
                let native = i % 8 < 4;
                let serial = (i / 8) % 2 == 0;
                let mut o = outcome("m", Domain::SemanticBinary, FULL, i, 3, native, serial);
                o.pattern = with_pattern.then_some(pattern);
                o
            })
            .collect()
    };
    let stratified = paired_metrics(&records(true), &cfg(), 0).unwrap();
    let pooled = paired_metrics(&records(false), &cfg(), 0).unwrap();
    let em = |rows: &[MetricRow], length| {
        find(rows, "semantic_binary", &comparison, length, "native_em").clone()
    };
    let (s, p) = (em(&stratified, None), em(&pooled, None));
    assert_eq!(s.value, Some(0.5));
    assert_eq!(p.value, Some(0.5));
    assert_eq!(
        (s.ci_low, s.ci_high),
        (Some(0.5), Some(0.5)),
        "no variation within patterns"
    );
    assert!(p.ci_high.unwrap() - p.ci_low.unwrap() > 0.1, "{p:?}");
    let l3 = em(&stratified, Some(3));
    assert_eq!(
        (l3.value, l3.ci_low, l3.ci_high),
        (s.value, s.ci_low, s.ci_high)
    );
    let eq = find(
        &stratified,
        "semantic_binary",
        &comparison,
        None,
        "native_em_equal_length",
    );
    assert_eq!((eq.ci_low, eq.ci_high), (s.ci_low, s.ci_high));
    // Serial varies within every pattern, so its interval is not degenerate either way.
    let serial = find(
        &stratified,
        "semantic_binary",
        &comparison,
        None,
        "serial_em",
    );
    assert!(serial.ci_high.unwrap() > serial.ci_low.unwrap());
}
