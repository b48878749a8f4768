//! Paper-style tables from the recomputed metric rows: paired correctness over all lengths and
//! per length, confidence calibration per arm, the independence reference. Rates print as
//! percentages with one decimal, calibration scores with three; an undefined value prints as
//! "–", never as 0.

use std::collections::{BTreeMap, BTreeSet};

use c2s_records::Trajectory;
use c2s_records::{AsMetric, Metric, ScoreStat};
use c2s_stats::{MetricRow, ScoreKind, CI_CLOPPER_PEARSON};

use super::doc::Table;

/// How an undefined value prints.
pub const UNDEFINED: &str = "–";

/// A (model, domain, comparison-or-arm) group of metric rows.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Group {
    /// The model label of the rows.
    pub model: String,
    /// The item domain (e.g. arithmetic, lexical).
    pub domain: String,
    /// A paired comparison (`Native vs Serial`) or, for per-arm metrics, the arm's name.
    pub comparison: String,
}

impl Group {
    /// The Native arm of a paired comparison (`A vs B` → `A`).
    pub fn native_arm(&self) -> &str {
        c2s_records::comparison_arms(&self.comparison).map_or(self.comparison.as_str(), |(a, _)| a)
    }
}

type Key<'a> = (&'a str, &'a str, &'a str, Option<u32>, Metric);

/// Metric rows by (model, domain, comparison, length, metric).
pub struct MetricIndex<'a> {
    rows: BTreeMap<Key<'a>, &'a MetricRow>,
}

impl<'a> MetricIndex<'a> {
    /// Indexes `rows`; a later row with the same key replaces an earlier one.
    pub fn new(rows: &'a [MetricRow]) -> MetricIndex<'a> {
        MetricIndex {
            rows: rows
                .iter()
                .map(|r| {
                    (
                        (
                            r.model.as_str(),
                            r.domain_str(),
                            r.comparison.as_str(),
                            r.length,
                            r.metric,
                        ),
                        r,
                    )
                })
                .collect(),
        }
    }

    /// The row of `metric` (a [`Metric`] or its name) for `g` at `length` (`None`: the
    /// all-lengths row), if any.
    pub fn get(
        &self,
        g: &Group,
        length: Option<u32>,
        metric: impl AsMetric,
    ) -> Option<&'a MetricRow> {
        let metric = metric.as_metric()?;
        self.rows
            .get(&(
                g.model.as_str(),
                g.domain.as_str(),
                g.comparison.as_str(),
                length,
                metric,
            ))
            .copied()
    }

    /// The point value of that row; `None` when the row is missing or its value undefined.
    pub fn value(&self, g: &Group, length: Option<u32>, metric: impl AsMetric) -> Option<f64> {
        self.get(g, length, metric).and_then(|r| r.value)
    }

    /// Groups that have `metric` (on any length).
    fn groups_with(&self, metric: Metric) -> Vec<Group> {
        let set: BTreeSet<Group> = self
            .rows
            .keys()
            .filter(|k| k.4 == metric)
            .map(|k| Group {
                model: k.0.to_string(),
                domain: k.1.to_string(),
                comparison: k.2.to_string(),
            })
            .collect();
        set.into_iter().collect()
    }

    /// Paired (Native vs Serial) groups.
    pub fn paired_groups(&self) -> Vec<Group> {
        self.groups_with(Metric::Both)
    }

    /// Arms with confidence metrics.
    pub fn calibration_groups(&self) -> Vec<Group> {
        self.groups_with(Metric::Prevalence)
    }

    /// Arms with an independence reference.
    pub fn independence_groups(&self) -> Vec<Group> {
        self.groups_with(Metric::IndependenceReference)
    }

    /// The lengths (ascending) at which `g` has `metric`.
    pub fn lengths(&self, g: &Group, metric: impl AsMetric) -> Vec<u32> {
        let Some(metric) = metric.as_metric() else {
            return Vec::new();
        };
        self.rows
            .keys()
            .filter(|k| k.0 == g.model && k.1 == g.domain && k.2 == g.comparison && k.4 == metric)
            .filter_map(|k| k.3)
            .collect::<BTreeSet<u32>>()
            .into_iter()
            .collect()
    }
}

/// A rate as a percentage with one decimal.
pub fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| UNDEFINED.to_string(), |x| format!("{:.1}", 100.0 * x))
}

/// A percentage-point difference with its sign.
fn pp(v: f64) -> String {
    let x = 100.0 * v;
    if x < 0.0 {
        format!("−{:.1}", -x)
    } else {
        format!("{x:.1}")
    }
}

/// A score with three decimals.
pub fn dec3(v: Option<f64>) -> String {
    v.map_or_else(|| UNDEFINED.to_string(), |x| format!("{x:.3}"))
}

/// A p-value.
pub fn p_value(v: Option<f64>) -> String {
    match v {
        None => UNDEFINED.to_string(),
        Some(p) if p >= 0.001 => format!("{p:.3}"),
        Some(p) => format!("{p:.1e}"),
    }
}

/// `value [low, high]` in percent; † marks an exact Clopper–Pearson interval, ‡ dropped
/// bootstrap draws (`dropped` > 0).
pub fn estimate(row: Option<&MetricRow>, dropped: Option<f64>) -> String {
    estimate_with(row, dropped, pct)
}

pub(crate) fn estimate_pp(row: Option<&MetricRow>) -> String {
    estimate_with(row, None, |v| v.map_or_else(|| UNDEFINED.to_string(), pp))
}

fn estimate_with(
    row: Option<&MetricRow>,
    dropped: Option<f64>,
    fmt: impl Fn(Option<f64>) -> String,
) -> String {
    let Some(r) = row else {
        return UNDEFINED.to_string();
    };
    let Some(v) = r.value else {
        return UNDEFINED.to_string();
    };
    let mut s = fmt(Some(v));
    if let (Some(lo), Some(hi)) = (r.ci_low, r.ci_high) {
        s.push_str(&format!(" [{}, {}]", fmt(Some(lo)), fmt(Some(hi))));
    }
    if r.ci_method.as_deref() == Some(CI_CLOPPER_PEARSON) {
        s.push('†');
    }
    if dropped.is_some_and(|d| d > 0.0) {
        s.push('‡');
    }
    s
}

/// A count (the row's numerator).
pub(crate) fn count(row: Option<&MetricRow>) -> String {
    row.and_then(|r| r.numerator)
        .map_or_else(|| UNDEFINED.to_string(), |n| n.to_string())
}

/// `numerator/denominator`.
pub(crate) fn ratio(row: Option<&MetricRow>) -> String {
    match row.map(|r| (r.numerator, r.denominator)) {
        Some((Some(n), Some(d))) => format!("{n}/{d}"),
        _ => UNDEFINED.to_string(),
    }
}

fn n_items(index: &MetricIndex<'_>, g: &Group, length: Option<u32>) -> String {
    index
        .get(g, length, Metric::Both)
        .and_then(|r| r.denominator)
        .map_or_else(|| UNDEFINED.to_string(), |n| n.to_string())
}

pub(crate) fn scr_cell(index: &MetricIndex<'_>, g: &Group, length: Option<u32>) -> String {
    estimate(
        index.get(g, length, Metric::Scr),
        index.value(g, length, Metric::ScrBootstrapDropped),
    )
}

fn interval_notes(level: f64) -> Vec<String> {
    let lvl = format!("{:.0}%", 100.0 * level);
    vec![format!(
        "Rates are percentages. Intervals are length-stratified whole-item bootstrap {lvl} \
         percentile intervals; † marks an exact two-sided Clopper–Pearson {lvl} interval \
         (zero-success SCR cell); ‡ marks an interval whose bootstrap had draws without a \
         Native-correct item (dropped, as undefined). “–” = undefined (empty denominator), \
         never 0."
    )]
}

/// The all-lengths paired table: one row per (model, domain, comparison).
pub fn paired_summary(index: &MetricIndex<'_>, groups: &[Group], level: f64) -> Table {
    let header = [
        "Model",
        "Domain",
        "Comparison",
        "n",
        "Both",
        "Native only",
        "Serial only",
        "Neither",
        "Native EM [CI]",
        "Serial EM [CI]",
        "SCR count",
        "SCR [CI]",
        "SCR bounds",
        "Gain rate [CI]",
        "Loss mass [CI]",
        "McNemar p",
        "p (Holm)",
    ];
    let rows = groups
        .iter()
        .map(|g| {
            let bounds = match (
                index.value(g, None, Metric::ScrLowerBound),
                index.value(g, None, Metric::ScrUpperBound),
            ) {
                (Some(lo), Some(hi)) => format!("[{}, {}]", pct(Some(lo)), pct(Some(hi))),
                _ => UNDEFINED.to_string(),
            };
            vec![
                g.model.clone(),
                g.domain.clone(),
                g.comparison.clone(),
                n_items(index, g, None),
                count(index.get(g, None, Metric::Both)),
                count(index.get(g, None, Metric::NativeOnly)),
                count(index.get(g, None, Metric::SerialOnly)),
                count(index.get(g, None, Metric::Neither)),
                estimate(index.get(g, None, Metric::NativeEm), None),
                estimate(index.get(g, None, Metric::SerialEm), None),
                ratio(index.get(g, None, Metric::Scr)),
                scr_cell(index, g, None),
                bounds,
                estimate(
                    index.get(g, None, Metric::GainRate),
                    index.value(g, None, Metric::GainRateBootstrapDropped),
                ),
                estimate(index.get(g, None, Metric::LossMass), None),
                p_value(index.value(g, None, Metric::McnemarP)),
                p_value(index.value(g, None, Metric::McnemarPHolm)),
            ]
        })
        .collect();
    let mut notes = interval_notes(level);
    notes.push(
        "SCR = both / Native correct (SCR count); gain rate = Serial only / Native wrong; loss \
         mass = Native only / n; SCR bounds are the marginal bounds max(0, a+b−1)/a ≤ SCR ≤ \
         min(1, b/a). McNemar: exact two-sided test on the discordant cells, Holm-adjusted \
         within its family."
            .to_string(),
    );
    Table {
        text_columns: 3,
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
        notes,
    }
}

/// The per-length table of one paired group, with the all-lengths and equal-length rows.
pub fn per_length(index: &MetricIndex<'_>, g: &Group, level: f64) -> Table {
    let header = [
        "L",
        "n",
        "Native EM [CI]",
        "Serial EM [CI]",
        "Both",
        "Native only",
        "Serial only",
        "Neither",
        "SCR count",
        "SCR [CI]",
    ];
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut lengths: Vec<Option<u32>> = index
        .lengths(g, Metric::Both)
        .into_iter()
        .map(Some)
        .collect();
    lengths.push(None);
    for l in lengths {
        rows.push(vec![
            l.map_or_else(|| "all".to_string(), |l| l.to_string()),
            n_items(index, g, l),
            estimate(index.get(g, l, Metric::NativeEm), None),
            estimate(index.get(g, l, Metric::SerialEm), None),
            count(index.get(g, l, Metric::Both)),
            count(index.get(g, l, Metric::NativeOnly)),
            count(index.get(g, l, Metric::SerialOnly)),
            count(index.get(g, l, Metric::Neither)),
            ratio(index.get(g, l, Metric::Scr)),
            scr_cell(index, g, l),
        ]);
    }
    if index.get(g, None, Metric::NativeEmEqualLength).is_some() {
        rows.push(vec![
            "equal-length".to_string(),
            UNDEFINED.to_string(),
            estimate(index.get(g, None, Metric::NativeEmEqualLength), None),
            estimate(index.get(g, None, Metric::SerialEmEqualLength), None),
            UNDEFINED.to_string(),
            UNDEFINED.to_string(),
            UNDEFINED.to_string(),
            UNDEFINED.to_string(),
            UNDEFINED.to_string(),
            estimate(
                index.get(g, None, Metric::ScrEqualLength),
                index.value(g, None, Metric::ScrEqualLengthBootstrapDropped),
            ),
        ]);
    }
    let mut notes = interval_notes(level);
    notes.push(
        "“all” pools every length; “equal-length” weighs each length equally (the \
         alternative mixture)."
            .to_string(),
    );
    Table {
        text_columns: 1,
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
        notes,
    }
}

/// The confidence table of one (model, domain): per arm the three scores, then the
/// prevalence and negative-length baselines.
pub fn calibration(index: &MetricIndex<'_>, arms: &[Group]) -> Table {
    let header = [
        "Arm", "Score", "n", "Correct", "Brier", "ECE", "AUROC", "AP",
    ];
    let mut rows = Vec::new();
    for g in arms {
        let prevalence = index.get(g, None, Metric::Prevalence);
        let n = prevalence
            .and_then(|r| r.denominator)
            .map_or_else(|| UNDEFINED.to_string(), |n| n.to_string());
        let correct = count(prevalence);
        for kind in ScoreKind::ALL {
            rows.push(vec![
                g.comparison.clone(),
                score_label(kind).to_string(),
                n.clone(),
                correct.clone(),
                dec3(index.value(g, None, Metric::Score(ScoreStat::Brier, kind))),
                dec3(index.value(g, None, Metric::Score(ScoreStat::Ece, kind))),
                dec3(index.value(g, None, Metric::Score(ScoreStat::Auroc, kind))),
                dec3(index.value(g, None, Metric::Score(ScoreStat::Ap, kind))),
            ]);
        }
        rows.push(vec![
            g.comparison.clone(),
            format!(
                "prevalence baseline (p = {})",
                dec3(prevalence.and_then(|r| r.value))
            ),
            n.clone(),
            correct.clone(),
            dec3(index.value(g, None, Metric::BrierPrevalence)),
            UNDEFINED.to_string(),
            UNDEFINED.to_string(),
            dec3(index.value(g, None, Metric::ApPrevalence)),
        ]);
        rows.push(vec![
            g.comparison.clone(),
            "−length ranking baseline".to_string(),
            n,
            correct,
            UNDEFINED.to_string(),
            UNDEFINED.to_string(),
            dec3(index.value(g, None, Metric::AurocNegativeLength)),
            dec3(index.value(g, None, Metric::ApNegativeLength)),
        ]);
    }
    Table {
        text_columns: 2,
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
        notes: vec![
            "Completed strings with a confidence composite (scored contracts). ECE uses ten \
             equal-width bins. AUROC and AP are undefined (–) when every string is correct or \
             every string is wrong. The prevalence baseline predicts the observed EM for every \
             string (Brier p(1−p), AP p); the −length baseline ranks shorter targets first."
                .to_string(),
        ],
    }
}

/// Display name of a confidence composite.
pub fn score_label(kind: ScoreKind) -> &'static str {
    match kind {
        ScoreKind::Product => "product",
        ScoreKind::GeometricMean => "geometric mean",
        ScoreKind::MinTop => "min top-choice",
    }
}

/// The independence-reference table of one (model, domain, arm).
pub fn independence(index: &MetricIndex<'_>, g: &Group, level: f64) -> Table {
    let header = [
        "L",
        "n",
        "String EM [CI]",
        "Reference Π c_t [CI]",
        "EM − reference, pp [CI]",
    ];
    let rows = index
        .lengths(g, Metric::IndependenceReference)
        .into_iter()
        .map(|l| {
            let l = Some(l);
            vec![
                l.map_or_else(String::new, |l| l.to_string()),
                count(index.get(g, l, Metric::Items)),
                estimate(index.get(g, l, Metric::StringEm), None),
                estimate(index.get(g, l, Metric::IndependenceReference), None),
                estimate_pp(index.get(g, l, Metric::EmMinusReference)),
            ]
        })
        .collect();
    Table {
        text_columns: 1,
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
        notes: vec![format!(
            "Π c_t is the product of the per-position accuracies c_t of the arm at that length; \
             intervals are {:.0}% paired bootstrap intervals within the length.",
            100.0 * level
        )],
    }
}

/// Per (model, domain, arm): trajectories, EM, validity, calls.
pub fn arms_summary(trajectories: &[Trajectory]) -> Table {
    #[derive(Default)]
    struct Acc {
        n: u64,
        correct: u64,
        valid: u64,
        confident: u64,
        calls: u64,
        fills: u64,
    }
    let mut groups: BTreeMap<(&str, &str, &str), Acc> = BTreeMap::new();
    for t in trajectories {
        let a = groups
            .entry((t.model.as_str(), t.domain.as_str(), t.arm.as_str()))
            .or_default();
        a.n += 1;
        a.correct += u64::from(t.correct);
        a.valid += u64::from(t.valid);
        a.confident += u64::from(t.confidence.is_some());
        a.calls += u64::from(t.calls);
        a.fills += u64::from(t.fills);
    }
    let rate = |k: u64, n: u64| {
        if n == 0 {
            UNDEFINED.to_string()
        } else {
            format!("{:.1} ({k}/{n})", 100.0 * k as f64 / n as f64)
        }
    };
    let mean = |k: u64, n: u64| {
        if n == 0 {
            UNDEFINED.to_string()
        } else {
            format!("{:.2}", k as f64 / n as f64)
        }
    };
    let rows = groups
        .into_iter()
        .map(|((model, domain, arm), a)| {
            vec![
                model.to_string(),
                domain.to_string(),
                arm.to_string(),
                a.n.to_string(),
                rate(a.correct, a.n),
                rate(a.valid, a.n),
                a.confident.to_string(),
                mean(a.calls, a.n),
                mean(a.fills, a.n),
            ]
        })
        .collect();
    Table {
        text_columns: 3,
        header: [
            "Model",
            "Domain",
            "Arm",
            "Trajectories",
            "EM % (k/n)",
            "Valid % (k/n)",
            "With confidence",
            "Calls / item",
            "Fills / item",
        ]
        .iter()
        .map(|h| h.to_string())
        .collect(),
        rows,
        notes: Vec::new(),
    }
}

fn opt4(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "–".into())
}

/// Declared cells: correct count and, with a Native arm, joint/Native and SCR (an exact upper
/// limit where no Native success was kept).
pub fn cells(rows: &[c2s_stats::CellRow], level: f64) -> Table {
    let mut t = Table {
        text_columns: 3,
        header: vec![
            "Model".into(),
            "Cell".into(),
            "Arm".into(),
            "Correct".into(),
            "Joint/Native".into(),
            "SCR".into(),
        ],
        rows: vec![],
        notes: vec![format!(
            "SCR cells with no retained Native success show the exact two-sided {:.0}% \
             Clopper–Pearson upper limit.",
            100.0 * level
        )],
    };
    for c in rows {
        t.rows.push(vec![
            c.model.clone(),
            c.cell.clone(),
            c.arm.clone(),
            format!("{}/{}", c.correct, c.n),
            match (c.both, c.native_correct) {
                (Some(b), Some(n)) => format!("{b}/{n}"),
                _ => "–".into(),
            },
            match (c.scr, c.scr_upper_zero) {
                (Some(_), Some(u)) => format!("0 (≤ {:.1}%)", 100.0 * u),
                (Some(v), None) => format!("{:.1}%", 100.0 * v),
                _ => "–".into(),
            },
        ]);
    }
    t
}

/// Declared contrasts with their unit intervals and sign-flip tests.
pub fn contrasts(rows: &[c2s_stats::ContrastRow]) -> Table {
    let mut t = Table {
        text_columns: 3,
        header: vec![
            "Model".into(),
            "Contrast".into(),
            "Family".into(),
            "Units".into(),
            "Compared".into(),
            "Reference".into(),
            "Difference [CI]".into(),
            "Sign-flip p".into(),
            "Holm p".into(),
        ],
        rows: vec![],
        notes: vec![],
    };
    for r in rows {
        let e = &r.estimate;
        t.rows.push(vec![
            r.model.clone(),
            r.contrast.clone(),
            r.family.clone().unwrap_or_else(|| "–".into()),
            e.units.to_string(),
            opt4(e.compared_mean),
            opt4(e.reference_mean),
            match (e.difference, e.ci_low, e.ci_high) {
                (Some(d), Some(l), Some(h)) => format!("{d:.4} [{l:.4}, {h:.4}]"),
                (Some(d), _, _) => format!("{d:.4}"),
                _ => "–".into(),
            },
            opt4(e.sign_p),
            opt4(r.sign_p_holm),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(metric: &str, length: Option<u32>, value: Option<f64>) -> MetricRow {
        MetricRow {
            snapshot: 0,
            model: "m".into(),
            domain: Some(c2s_records::Domain::Lexical),
            length,
            comparison: "Native/code vs Serial/Full/code".into(),
            metric: Metric::parse(metric).unwrap(),
            value,
            numerator: None,
            denominator: None,
            ci_low: None,
            ci_high: None,
            ci_method: None,
        }
    }

    #[test]
    fn undefined_prints_as_a_dash_not_zero() {
        assert_eq!(pct(None), "–");
        assert_eq!(dec3(None), "–");
        assert_eq!(p_value(None), "–");
        assert_eq!(estimate(None, None), "–");
        assert_eq!(estimate(Some(&row("scr", None, None)), None), "–");
        assert_eq!(pct(Some(0.0)), "0.0");
    }

    #[test]
    fn estimates_carry_interval_and_marks() {
        let mut r = row("scr", None, Some(0.0));
        r.ci_low = Some(0.0);
        r.ci_high = Some(0.7076);
        r.ci_method = Some(CI_CLOPPER_PEARSON.into());
        assert_eq!(estimate(Some(&r), None), "0.0 [0.0, 70.8]†");
        let mut r = row("scr", None, Some(0.5));
        r.ci_low = Some(0.25);
        r.ci_high = Some(0.75);
        assert_eq!(estimate(Some(&r), Some(3.0)), "50.0 [25.0, 75.0]‡");
        assert_eq!(pp(-0.012), "−1.2");
        assert_eq!(p_value(Some(0.00001)), "1.0e-5");
    }

    #[test]
    fn index_finds_groups_and_lengths() {
        let rows = vec![
            row("both", Some(3), Some(1.0)),
            row("both", Some(5), Some(1.0)),
            row("both", None, Some(2.0)),
        ];
        let index = MetricIndex::new(&rows);
        let groups = index.paired_groups();
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].native_arm(), "Native/code");
        assert_eq!(index.lengths(&groups[0], "both"), [3, 5]);
        let t = per_length(&index, &groups[0], 0.95);
        assert_eq!(t.rows.len(), 3);
        assert_eq!(t.rows[2][0], "all");
    }
}
