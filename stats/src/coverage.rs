//! Statistics of the candidate-coverage protocol
//! (`shared/paper/candidate-coverage-typed-decisions.txt`): ordinary accuracy, the native
//! none rule's detection / false rejection / acceptance / error among accepted, present/absent
//! discrimination of coverage scores, calibration-selected thresholds, competence-conditioned
//! subsets, text bootstrap intervals and the precision audits.
//!
//! The paper's display equations (after "For text x, ordinary candidate set C, and reference
//! class Y, define" and "Let R(x,C) denote rejection, and ĉ ∈ C an ordinary model choice.
//! Report") are not in the text; the definitions below follow the surrounding prose, quoted.
//!
//! # Definitions
//!
//! - **Cell** = (model, task, k, names) over the test split's present/absent decisions of
//!   ordinary size k. "Present/absent candidate sets have the same ordinary count. Natural and
//!   neutral names retain the same option descriptions and order." A cell's *texts* are the
//!   test case ids with at least one non-missing present/absent decision in it. Full-set
//!   decisions (`SetKind::Full`) are used only for full-set accuracy and the full-set-correct
//!   subset, per (model, task, names), test split only.
//! - **Coverage target** G = 1 when the reference is offered (`SetKind::Present`), 0 for
//!   `Absent`: "Candidate coverage is this reference-label membership target, distinct from
//!   classification correctness and the fraction of requests accepted by a selective policy."
//! - **Accuracy**: present decisions without the none option, `choice() == reference`
//!   ("alongside ordinary accuracy"). Also reported for present decisions with the none
//!   option, where a rejection counts as not correct (the paper is silent on this variant).
//! - **Native rule** on decisions with the none option: R = the none option is chosen.
//!   Detection D = P(R | absent), false rejection FR = P(R | present) ("Matching
//!   present/absent candidate counts exposes both missed absence and false rejection"),
//!   acceptance = P(not R) over present and absent together, error among accepted =
//!   P(choice ≠ reference | not R) over the accepted present and absent decisions; an accepted
//!   absent decision is always an error ("A high D can accompany rejecting nearly every
//!   input. Even when G=1, the selected candidate can be wrong"). The paper does not say
//!   whether acceptance pools present and absent requests; we pool them. Error among
//!   accepted is also reported apart on present sets (G = 1: "Even when G=1, the selected
//!   candidate can be wrong") and on absent sets (G = 0, where every acceptance is an
//!   error, so it is 1 whenever defined).
//! - **Coverage scores** (higher = more likely covered, [`CoverageScore`]): max probability,
//!   negative entropy and margin of the renormalized ordinary distribution
//!   (`Decision::ordinary_scores`) of decisions without the none option, and 1 − p(none) of
//!   decisions with it. The paper names no list; nearest: "A large maximum score therefore
//!   does not, by itself, establish candidate coverage" and "The largest AUROC change is
//!   0.0688 for DBpedia k=13 natural-name entropy".
//! - **Discrimination** ("score-based present/absent discrimination"): AUROC of the coverage
//!   score with present as the positive class, and average precision with *absent* as the
//!   positive class ranked by the negated score (the detection view), both with sklearn's tie
//!   handling ([`crate::calibration::auroc_counts`], [`crate::calibration::average_precision_counts`]).
//!   Only paired texts enter: a text contributes its present and its absent decision of the
//!   same k, names and none variant, and only when both are non-missing ("10,188 pairs").
//!   Rates use every non-missing decision.
//! - **Calibrated thresholds**: a score rule rejects iff score < t. From the *calibration*
//!   split's present decisions of the cell, t is the largest distinct calibration present
//!   score with #{s < t}/n ≤ `max_false_rejection` (the smallest always qualifies). "Independent
//!   calibration texts choose thresholds; test texts measure the resulting detection and false
//!   rejection." The paper does not state the constraint's value (nearest: "no probabilistic or
//!   population risk guarantee follows from a normalized output or a calibration-sample
//!   constraint"); the default 5% is ours. A native-rule row reports the same quantities for R.
//!   Tested intervals condition on t (thresholds are not re-chosen in the bootstrap). The
//!   thresholds of all calibration texts are also tested on the full-set-correct and
//!   shared-correct subsets of the test texts ("We supplement overall rates with full-set
//!   correctness subsets, a shared correctly classified intersection"; calibration texts have
//!   no full-set decision, so the threshold itself is not conditioned).
//! - **Subsets** per (model, task, names): full-set-correct texts = test texts whose full-set
//!   decision without none chooses the reference; shared-correct = texts full-set-correct for
//!   every model that has decisions of the task (a model without a full-set decision of a text
//!   does not count it as correct). "We supplement overall rates with full-set correctness
//!   subsets, a shared correctly classified intersection"; "Complete-set correctness is a
//!   model-selected condition; even the common-correct intersection is a descriptive selected
//!   subset."
//! - **Bootstrap**: percentile intervals (type 7) over texts: each draw resamples a cell's
//!   (or subset's) texts with replacement, a text's present and absent decisions of every
//!   variant moving together. The paper is silent on the unit; nearest: "Bootstrap intervals
//!   condition on the observed tasks, prompts, member/order samples, and runtime. They are not
//!   adjusted for simultaneous comparisons" — neither are ours. Draw d of a group uses
//!   `ChaCha8Rng::seed_from_u64(seed ^ fnv1a(group key))` moved to stream d, indices by
//!   Lemire's multiply-and-reject (as [`mod@crate::bootstrap`]), so a group's interval depends only
//!   on its own texts and the seed.
//! - **Precision audits**: (a) per model, decisions whose probability sum deviates from 1 by
//!   more than 0.001 and the largest deviation ("123 distributions have a sum deviating from
//!   one by more than 0.001, with maximum deviation 0.01"); nothing is repaired ("Neither
//!   observation is silently repaired"), except that the ordinary scores renormalize the
//!   ordinary options as `Decision::ordinary` does. (b) Quantization: every probability
//!   rounded to `quantize_decimals` decimals (half to even, as `numpy.round`), every coverage
//!   score and point AUROC recomputed, choices kept as recorded ("quantizes Laya scores to two
//!   decimals while retaining native choices. The largest AUROC change is 0.0688 …"). (c)
//!   Renormalization: every distribution divided by its sum and every point AUROC recomputed
//!   ("Renormalizing Jev distributions changes any tested AUROC by at most 0.00042"). (d)
//!   Choices against raw scores: decisions whose choice (the largest probability) is not the
//!   option with the largest raw score under the decision's rule ("One native choice is 0.01
//!   below another reported probability"). (e) Scoring rules: how often the choice (and the
//!   native rejection) changes when the stored token log-probabilities are read under
//!   another rule ([`c2s_records::ScoringRule`]). (f) Missing decisions by error message.
//! - **Missing**: a decision with an `error`, empty probabilities, probabilities not aligned
//!   with its labels, or (with the none option) no none label is missing: counted, never a
//!   rejection or an error. A repeated (model, task, case, spec) is an error ("Validation
//!   rejects incomplete collections and duplicate predictions").

use std::collections::{BTreeMap, BTreeSet};

use c2s_records::coverage::{
    CoverageSplit, Decision, NameVariant, ScoringRule, SetKind, NONE_LABEL,
};
use serde::{Deserialize, Serialize};

use crate::bootstrap::{Estimate, StatDraws, DEFAULT_SEED};
use crate::error::StatsError;
use crate::intervals::{check_level, DEFAULT_LEVEL};

mod audit;
mod ranking;
mod rows;

use audit::{raw_argmax_label, RuleTally};
pub use audit::{PairClosingRow, PrecisionAudit, ProbSumRow, QuantizationRow, RuleChangeRow};
use ranking::{resample, Ranks};
pub use rows::{
    CellSummary, CoverageSummary, Discrimination, FullSetRow, MissingRow, Rate, ThresholdRow,
};

/// A probability sum deviating from 1 by more than this is reported by the audit.
pub const SUM_TOLERANCE: f64 = 0.001;

/// Settings of [`coverage_summary`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CoverageStatsConfig {
    /// Bootstrap draws of every interval (default 2,000).
    pub draws: u32,
    /// Base seed; a group's draws use `seed ^ fnv1a(group key)` (see the module docs).
    pub seed: u64,
    /// Two-sided confidence level of every interval, in (0, 1).
    pub level: f64,
    /// Calibration false-rejection constraint of the score thresholds.
    pub max_false_rejection: f64,
    /// Decimals of the quantization audit.
    pub quantize_decimals: u32,
}

impl Default for CoverageStatsConfig {
    fn default() -> Self {
        CoverageStatsConfig {
            draws: 2000,
            seed: DEFAULT_SEED,
            level: DEFAULT_LEVEL,
            max_false_rejection: 0.05,
            quantize_decimals: 2,
        }
    }
}

/// A coverage score; higher means more likely covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoverageScore {
    /// Largest ordinary probability (decisions without none).
    MaxProb,
    /// Minus the entropy (nats) of the ordinary distribution (decisions without none).
    NegEntropy,
    /// Largest minus second ordinary probability (decisions without none).
    Margin,
    /// 1 − p(none) (decisions with none).
    NotNone,
}

impl CoverageScore {
    /// The four scores, in the order of the statistics' layout and of
    /// `CellSummary::discrimination`.
    pub const ALL: [CoverageScore; 4] = [
        CoverageScore::MaxProb,
        CoverageScore::NegEntropy,
        CoverageScore::Margin,
        CoverageScore::NotNone,
    ];

    /// snake_case name of the score (`max_prob`, `neg_entropy`, `margin`, `not_none`), as reported
    /// in rows.
    pub fn as_str(self) -> &'static str {
        match self {
            CoverageScore::MaxProb => "max_prob",
            CoverageScore::NegEntropy => "neg_entropy",
            CoverageScore::Margin => "margin",
            CoverageScore::NotNone => "not_none",
        }
    }

    /// Whether the score is read from decisions with the none option.
    pub fn with_none(self) -> bool {
        self == CoverageScore::NotNone
    }

    /// The score of a decision (`None` when it failed, or for `NotNone` without none).
    pub fn of(self, d: &Decision) -> Option<f64> {
        match self {
            CoverageScore::NotNone => d.none_prob().map(|p| 1.0 - p),
            _ => {
                if d.probabilities.is_empty() {
                    return None;
                }
                let s = d.ordinary_scores()?;
                Some(match self {
                    CoverageScore::MaxProb => s.max_prob,
                    CoverageScore::NegEntropy => -s.entropy,
                    _ => s.margin,
                })
            }
        }
    }
}

/// Which texts of a cell a summary covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Subset {
    /// Every test text of the cell.
    All,
    /// Test texts whose full-set decision without none chooses the reference for this model.
    FullSetCorrect,
    /// Test texts full-set-correct for every model with decisions of the task (the shared correctly
    /// classified intersection).
    SharedCorrect,
}

impl Subset {
    /// The three subsets, in report order.
    pub const ALL: [Subset; 3] = [Subset::All, Subset::FullSetCorrect, Subset::SharedCorrect];

    /// snake_case name of the subset (`all`, `full_set_correct`, `shared_correct`), as reported in
    /// rows.
    pub fn as_str(self) -> &'static str {
        match self {
            Subset::All => "all",
            Subset::FullSetCorrect => "full_set_correct",
            Subset::SharedCorrect => "shared_correct",
        }
    }
}

/// The largest distinct value t of `present` with #{s < t}/n ≤ `max_false_rejection`
/// (`None` for no scores).
pub fn calibrated_threshold(present: &[f64], max_false_rejection: f64) -> Option<f64> {
    let mut s = present.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len() as f64;
    let mut best = None;
    let mut i = 0;
    while i < s.len() && i as f64 / n <= max_false_rejection {
        // #{s < s[i]} = i: s[i] is the first occurrence of its value.
        let c = s[i];
        best = Some(c);
        while i < s.len() && s[i].total_cmp(&c).is_eq() {
            i += 1;
        }
    }
    best
}

/// Why a decision is missing, if it is.
pub fn missing_reason(d: &Decision) -> Option<String> {
    if let Some(e) = &d.error {
        return Some(e.clone());
    }
    if d.probabilities.is_empty() {
        return Some("empty probabilities".into());
    }
    if d.probabilities.len() != d.labels.len() {
        return Some("probabilities do not match labels".into());
    }
    if d.spec.with_none && !d.labels.iter().any(|l| l == NONE_LABEL) {
        return Some("none option not offered".into());
    }
    None
}

/// One non-missing decision, reduced.
#[derive(Debug, Clone, Copy)]
struct Obs {
    correct: bool,
    rejected: bool,
    scores: [f64; 4],
    quantized: [f64; 4],
    renormalized: [f64; 4],
}

/// Which scores a ranking reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScoreView {
    Recorded,
    Quantized,
    Renormalized,
}

/// A text of a cell: `[present, absent]` without and with none.
#[derive(Debug, Clone, Default)]
struct TextObs {
    plain: [Option<Obs>; 2],
    none: [Option<Obs>; 2],
}

impl TextObs {
    fn side(&self, score: usize) -> &[Option<Obs>; 2] {
        if CoverageScore::ALL[score].with_none() {
            &self.none
        } else {
            &self.plain
        }
    }
}

fn scores_of(d: &Decision) -> [f64; 4] {
    CoverageScore::ALL.map(|s| {
        if s.with_none() == d.spec.with_none {
            s.of(d).unwrap_or(f64::NAN)
        } else {
            f64::NAN
        }
    })
}

fn observe(d: &Decision, scale: Option<f64>) -> Obs {
    let scores = scores_of(d);
    let quantized = match scale {
        Some(m) => {
            let mut q = d.clone();
            for p in &mut q.probabilities {
                *p = (*p * m).round_ties_even() / m;
            }
            scores_of(&q)
        }
        None => scores,
    };
    let sum = d.prob_sum();
    let renormalized = if sum > 0.0 && sum.is_finite() {
        let mut r = d.clone();
        for p in &mut r.probabilities {
            *p /= sum;
        }
        scores_of(&r)
    } else {
        scores
    };
    Obs {
        correct: d.choice() == Some(d.reference.as_str()),
        rejected: d.rejected() == Some(true),
        scores,
        quantized,
        renormalized,
    }
}

// Layout of a cell's statistics.
const R_ACC: usize = 0;
const R_ACC_NONE: usize = 1;
const R_DET: usize = 2;
const R_FR: usize = 3;
const R_ACCEPT: usize = 4;
const R_ERR: usize = 5;
const R_ERR_PRESENT: usize = 6;
const R_ERR_ABSENT: usize = 7;
/// Tested detection of score i at 8 + 2i, false rejection at 9 + 2i.
const R_THR: usize = 8;
const N_RATES: usize = R_THR + 8;
/// AUROC of score i at N_RATES + 2i, AP at N_RATES + 2i + 1.
const N_STATS: usize = N_RATES + 8;

type Tally = [(u64, u64); N_RATES];

fn tally(texts: &[&TextObs], w: &[u32], thr: &[Option<f64>; 4]) -> Tally {
    let mut t: Tally = [(0, 0); N_RATES];
    for (x, &wt) in texts.iter().zip(w) {
        if wt == 0 {
            continue;
        }
        let wt = u64::from(wt);
        let mut add = |i: usize, hit: bool| {
            t[i].1 += wt;
            t[i].0 += wt * u64::from(hit);
        };
        if let Some(o) = x.plain[0] {
            add(R_ACC, o.correct);
        }
        if let Some(o) = x.none[0] {
            add(R_ACC_NONE, o.correct);
            add(R_FR, o.rejected);
        }
        if let Some(o) = x.none[1] {
            add(R_DET, o.rejected);
        }
        for (side, o) in x.none.iter().enumerate() {
            let Some(o) = o else { continue };
            add(R_ACCEPT, !o.rejected);
            if !o.rejected {
                add(R_ERR, !o.correct);
                add(
                    if side == 0 {
                        R_ERR_PRESENT
                    } else {
                        R_ERR_ABSENT
                    },
                    !o.correct,
                );
            }
        }
        for (i, t_i) in thr.iter().enumerate() {
            if let Some(t_i) = *t_i {
                let side = x.side(i);
                if let Some(o) = side[1] {
                    add(R_THR + 2 * i, o.scores[i] < t_i);
                }
                if let Some(o) = side[0] {
                    add(R_THR + 2 * i + 1, o.scores[i] < t_i);
                }
            }
        }
    }
    t
}

fn ratio((s, n): (u64, u64)) -> Option<f64> {
    (n > 0).then(|| s as f64 / n as f64)
}

fn rate(counts: (u64, u64), draws: &StatDraws, level: f64) -> Rate {
    Rate {
        successes: counts.0,
        n: counts.1,
        estimate: draws.estimate(level),
    }
}

fn point_rate(counts: (u64, u64)) -> Rate {
    Rate {
        successes: counts.0,
        n: counts.1,
        estimate: Estimate {
            value: ratio(counts),
            interval: None,
            defined_draws: 0,
            dropped_draws: 0,
        },
    }
}

type CellKey = (String, String, usize, NameVariant);
type GroupKey = (String, String, NameVariant);
type Texts = BTreeMap<String, TextObs>;

fn check_config(cfg: &CoverageStatsConfig) -> Result<(), StatsError> {
    check_level(cfg.level)?;
    if cfg.draws == 0 {
        return Err(StatsError::ZeroDraws);
    }
    if !(0.0..=1.0).contains(&cfg.max_false_rejection) {
        return Err(StatsError::InvalidScore(cfg.max_false_rejection));
    }
    Ok(())
}

/// The coverage statistics of `decisions` (any number of models, tasks, splits).
pub fn coverage_summary(
    decisions: &[Decision],
    cfg: &CoverageStatsConfig,
) -> Result<CoverageSummary, StatsError> {
    check_config(cfg)?;
    let scale = (cfg.quantize_decimals <= 300).then(|| 10f64.powi(cfg.quantize_decimals as i32));
    let mut seen = BTreeSet::new();
    let mut test: BTreeMap<CellKey, Texts> = BTreeMap::new();
    let mut calib: BTreeMap<CellKey, Texts> = BTreeMap::new();
    let mut full: BTreeMap<GroupKey, BTreeMap<String, bool>> = BTreeMap::new();
    let mut cell_missing: BTreeMap<CellKey, BTreeMap<String, u64>> = BTreeMap::new();
    let mut full_missing: BTreeMap<GroupKey, u64> = BTreeMap::new();
    let mut missing: BTreeMap<(String, String, CoverageSplit, String), u64> = BTreeMap::new();
    let mut sums: BTreeMap<String, (u64, u64, f64, u64, u64)> = BTreeMap::new();
    let mut models: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut all_but_reference: BTreeSet<CellKey> = BTreeSet::new();
    let mut rule_changes: BTreeMap<(String, String, ScoringRule, ScoringRule), RuleTally> =
        BTreeMap::new();
    type PairKey<'a> = (&'a str, &'a str, &'a str, usize, NameVariant, bool);
    let mut token_counts: BTreeMap<PairKey<'_>, [Option<BTreeMap<&str, usize>>; 2]> =
        BTreeMap::new();
    for d in decisions {
        models
            .entry(d.task.as_str())
            .or_default()
            .insert(d.model.as_str());
        if !seen.insert((&d.model, &d.task, &d.case_id, d.spec)) {
            return Err(StatsError::DuplicateItem {
                group: format!("{}/{}/{}", d.model, d.task, d.spec),
                item_id: d.case_id.clone(),
            });
        }
        let is_test = d.split == CoverageSplit::Test;
        let cell: CellKey = (d.model.clone(), d.task.clone(), d.spec.k, d.spec.names);
        let group: GroupKey = (d.model.clone(), d.task.clone(), d.spec.names);
        let full_plain = d.spec.set == SetKind::Full && !d.spec.with_none;
        if d.all_but_reference() {
            all_but_reference.insert(cell.clone());
        }
        if let Some(why) = missing_reason(d) {
            *missing
                .entry((d.model.clone(), d.task.clone(), d.split, why))
                .or_default() += 1;
            if is_test && d.spec.set != SetKind::Full {
                *cell_missing
                    .entry(cell)
                    .or_default()
                    .entry(d.case_id.clone())
                    .or_default() += 1;
            } else if is_test && full_plain {
                *full_missing.entry(group).or_default() += 1;
            }
            continue;
        }
        if let Some(&p) = d.probabilities.iter().find(|p| !(0.0..=1.0).contains(*p)) {
            return Err(StatsError::InvalidScore(p));
        }
        let s = sums.entry(d.model.clone()).or_default();
        let dev = (d.prob_sum() - 1.0).abs();
        s.0 += 1;
        s.1 += u64::from(dev > SUM_TOLERANCE);
        s.2 = s.2.max(dev);
        if let (Some(raw), true) = (&d.raw, d.spec.set != SetKind::Full) {
            if raw.aligned(d.labels.len()) {
                let key = (
                    d.model.as_str(),
                    d.task.as_str(),
                    d.case_id.as_str(),
                    d.spec.k,
                    d.spec.names,
                    d.spec.with_none,
                );
                let side = usize::from(d.spec.set == SetKind::Absent);
                token_counts.entry(key).or_default()[side] = Some(
                    d.labels
                        .iter()
                        .map(String::as_str)
                        .zip(raw.token_logprobs.iter().map(Vec::len))
                        .collect(),
                );
            }
        }
        if let Some(raw_choice) = raw_argmax_label(d) {
            s.3 += 1;
            s.4 += u64::from(d.choice() != Some(raw_choice));
        }
        for other in ScoringRule::ALL {
            if other == d.scoring {
                continue;
            }
            if let Some(o) = d.rescored(other) {
                rule_changes
                    .entry((d.model.clone(), d.task.clone(), d.scoring, other))
                    .or_default()
                    .add(d, &o);
            }
        }
        let obs = observe(d, scale);
        if d.spec.set == SetKind::Full {
            if is_test && full_plain {
                full.entry(group)
                    .or_default()
                    .insert(d.case_id.clone(), obs.correct);
            }
            continue;
        }
        let map = if is_test { &mut test } else { &mut calib };
        let t = map
            .entry(cell)
            .or_default()
            .entry(d.case_id.clone())
            .or_default();
        let side = usize::from(d.spec.set == SetKind::Absent);
        if d.spec.with_none {
            t.none[side] = Some(obs);
        } else {
            t.plain[side] = Some(obs);
        }
    }

    let full_correct: BTreeMap<&GroupKey, BTreeSet<&str>> = full
        .iter()
        .map(|(g, m)| (g, m.iter().filter(|e| *e.1).map(|e| e.0.as_str()).collect()))
        .collect();
    let empty = BTreeSet::new();
    let correct_of = |model: &str, task: &str, names: NameVariant| {
        full_correct
            .get(&(model.to_string(), task.to_string(), names))
            .unwrap_or(&empty)
    };
    let shared_of = |task: &str, names: NameVariant| -> BTreeSet<&str> {
        let mut it = models.get(task).into_iter().flatten();
        let Some(first) = it.next() else {
            return BTreeSet::new();
        };
        let mut s = correct_of(first, task, names).clone();
        for m in it {
            let c = correct_of(m, task, names);
            s.retain(|x| c.contains(x));
        }
        s
    };

    let mut cells = Vec::new();
    let mut thresholds = Vec::new();
    let mut quantization = Vec::new();
    let keys: BTreeSet<&CellKey> = test.keys().chain(calib.keys()).collect();
    for key in keys {
        let (model, task, k, names) = key;
        let no_texts = Texts::new();
        let cal: Vec<&TextObs> = calib.get(key).unwrap_or(&no_texts).values().collect();
        // Thresholds and calibration rates of every score, then of the native rule.
        let mut thr = [None; 4];
        for (i, t_i) in thr.iter_mut().enumerate() {
            let present: Vec<f64> = cal
                .iter()
                .filter_map(|x| x.side(i)[0])
                .map(|o| o.scores[i])
                .collect();
            *t_i = calibrated_threshold(&present, cfg.max_false_rejection);
        }
        let c = tally(&cal, &vec![1; cal.len()], &thr);
        // (false rejection, detection) of each score's threshold, then of the native rule.
        let cal_rates: Vec<((u64, u64), (u64, u64))> = (0..4)
            .map(|i| (c[R_THR + 2 * i + 1], c[R_THR + 2 * i]))
            .chain(std::iter::once((c[R_FR], c[R_DET])))
            .collect();

        // Tested (detection, false rejection) of each score's threshold and of the native
        // rule, on each subset of the test texts.
        let mut tested: BTreeMap<Subset, [Option<(Rate, Rate)>; 5]> = BTreeMap::new();
        let abr = all_but_reference.contains(key);
        if let Some(texts) = test.get(key) {
            let cm = cell_missing.get(key);
            let fc = correct_of(model, task, *names);
            let sh = shared_of(task, *names);
            for subset in Subset::ALL {
                let keep = |id: &str| match subset {
                    Subset::All => true,
                    Subset::FullSetCorrect => fc.contains(id),
                    Subset::SharedCorrect => sh.contains(id),
                };
                let xs: Vec<&TextObs> = texts.iter().filter(|e| keep(e.0)).map(|e| e.1).collect();
                let miss: u64 = cm
                    .into_iter()
                    .flatten()
                    .filter(|e| keep(e.0))
                    .map(|e| *e.1)
                    .sum();
                let th = thr;
                let ranks: Vec<Ranks> = (0..4)
                    .map(|i| Ranks::new(&xs, i, ScoreView::Recorded))
                    .collect();
                let group = format!(
                    "{model}\u{1f}{task}\u{1f}{k}\u{1f}{}\u{1f}{}",
                    names.as_str(),
                    subset.as_str()
                );
                let draws = resample(xs.len(), &group, cfg, N_STATS, |w, out| {
                    let t = tally(&xs, w, &th);
                    for (o, c) in out.iter_mut().zip(t) {
                        *o = ratio(c);
                    }
                    for (i, r) in ranks.iter().enumerate() {
                        let (a, p) = r.ranking(w);
                        out[N_RATES + 2 * i] = a;
                        out[N_RATES + 2 * i + 1] = p;
                    }
                });
                let t = tally(&xs, &vec![1; xs.len()], &th);
                let r = |i: usize| rate(t[i], &draws[i], cfg.level);
                let discrimination = CoverageScore::ALL
                    .iter()
                    .enumerate()
                    .map(|(i, &score)| Discrimination {
                        score,
                        pairs: ranks[i].pairs(),
                        auroc: draws[N_RATES + 2 * i].estimate(cfg.level),
                        average_precision: draws[N_RATES + 2 * i + 1].estimate(cfg.level),
                    })
                    .collect::<Vec<_>>();
                let mut rows: [Option<(Rate, Rate)>; 5] = [None, None, None, None, None];
                for (i, row) in rows.iter_mut().take(4).enumerate() {
                    let (d, f) = (R_THR + 2 * i, R_THR + 2 * i + 1);
                    *row = Some((
                        rate(t[d], &draws[d], cfg.level),
                        rate(t[f], &draws[f], cfg.level),
                    ));
                }
                rows[4] = Some((r(R_DET), r(R_FR)));
                tested.insert(subset, rows);
                if subset == Subset::All {
                    let ones = vec![1; xs.len()];
                    for (i, disc) in discrimination.iter().enumerate() {
                        let q = Ranks::new(&xs, i, ScoreView::Quantized).ranking(&ones).0;
                        let n = Ranks::new(&xs, i, ScoreView::Renormalized).ranking(&ones).0;
                        let a = disc.auroc.value;
                        quantization.push(QuantizationRow {
                            model: model.clone(),
                            task: task.clone(),
                            k: *k,
                            names: *names,
                            score: CoverageScore::ALL[i],
                            auroc: a,
                            quantized_auroc: q,
                            change: a.zip(q).map(|(a, q)| q - a),
                            renormalized_auroc: n,
                            renormalization_change: a.zip(n).map(|(a, n)| n - a),
                        });
                    }
                }
                cells.push(CellSummary {
                    model: model.clone(),
                    task: task.clone(),
                    k: *k,
                    all_but_reference: abr,
                    names: *names,
                    subset,
                    texts: xs.len() as u64,
                    missing: miss,
                    accuracy: r(R_ACC),
                    accuracy_with_none: r(R_ACC_NONE),
                    detection: r(R_DET),
                    false_rejection: r(R_FR),
                    acceptance: r(R_ACCEPT),
                    error_among_accepted: r(R_ERR),
                    error_among_accepted_present: r(R_ERR_PRESENT),
                    error_among_accepted_absent: r(R_ERR_ABSENT),
                    discrimination,
                });
            }
        }
        if tested.is_empty() {
            tested.insert(Subset::All, [None, None, None, None, None]);
        }
        for (subset, rows) in tested {
            for (i, row) in rows.into_iter().enumerate() {
                let score = CoverageScore::ALL.get(i).copied();
                let (test_detection, test_false_rejection) =
                    row.unwrap_or((point_rate((0, 0)), point_rate((0, 0))));
                thresholds.push(ThresholdRow {
                    model: model.clone(),
                    task: task.clone(),
                    k: *k,
                    all_but_reference: abr,
                    names: *names,
                    subset,
                    rule: score.map_or("native", CoverageScore::as_str).to_string(),
                    score,
                    threshold: if i < 4 { thr[i] } else { None },
                    calibration_false_rejection: point_rate(cal_rates[i].0),
                    calibration_detection: point_rate(cal_rates[i].1),
                    test_detection,
                    test_false_rejection,
                });
            }
        }
    }

    let groups: BTreeSet<&GroupKey> = full.keys().chain(full_missing.keys()).collect();
    let no_full = BTreeMap::new();
    let full_set = groups
        .into_iter()
        .map(|g| {
            let (model, task, names) = g;
            let m = full.get(g).unwrap_or(&no_full);
            let xs: Vec<bool> = m.values().copied().collect();
            let key = format!("{model}\u{1f}{task}\u{1f}full\u{1f}{}", names.as_str());
            let draws = resample(xs.len(), &key, cfg, 1, |w, out| {
                let c = xs.iter().zip(w).fold((0u64, 0u64), |(s, n), (&y, &w)| {
                    (s + u64::from(y) * u64::from(w), n + u64::from(w))
                });
                out[0] = ratio(c);
            });
            let correct = xs.iter().filter(|&&y| y).count() as u64;
            FullSetRow {
                model: model.clone(),
                task: task.clone(),
                names: *names,
                accuracy: rate((correct, xs.len() as u64), &draws[0], cfg.level),
                full_set_correct: correct,
                shared_correct: shared_of(task, *names).len() as u64,
                missing: full_missing.get(g).copied().unwrap_or(0),
            }
        })
        .collect();

    let mut pair_closing: BTreeMap<&str, PairClosingRow> = BTreeMap::new();
    for ((model, _, case, k, names, with_none), sides) in &token_counts {
        let [Some(p), Some(a)] = sides else { continue };
        let row = pair_closing.entry(model).or_insert_with(|| PairClosingRow {
            model: model.to_string(),
            pairs: 0,
            mismatched: 0,
            examples: Vec::new(),
        });
        row.pairs += 1;
        if p.iter().any(|(l, n)| a.get(l).is_some_and(|m| m != n)) {
            row.mismatched += 1;
            if row.examples.len() < 10 {
                row.examples.push(format!(
                    "{case} k{k}/{}/{}",
                    names.as_str(),
                    if *with_none { "none" } else { "plain" }
                ));
            }
        }
    }
    let largest = |of: fn(&QuantizationRow) -> Option<f64>| {
        quantization
            .iter()
            .filter(|q| of(q).is_some())
            .fold(None::<&QuantizationRow>, |best, q| match best {
                Some(b) if of(b).map(f64::abs) >= of(q).map(f64::abs) => Some(b),
                _ => Some(q),
            })
            .cloned()
    };
    let largest_change = largest(|q| q.change);
    let largest_renormalization_change = largest(|q| q.renormalization_change);
    Ok(CoverageSummary {
        config: *cfg,
        cells,
        thresholds,
        full_set,
        audit: PrecisionAudit {
            prob_sums: sums
                .into_iter()
                .map(
                    |(model, (decisions, deviating, max_deviation, with_raw, not_argmax))| {
                        ProbSumRow {
                            model,
                            decisions,
                            deviating,
                            max_deviation,
                            with_raw_scores: with_raw,
                            choice_not_raw_argmax: not_argmax,
                        }
                    },
                )
                .collect(),
            quantize_decimals: cfg.quantize_decimals,
            quantization,
            largest_change,
            largest_renormalization_change,
            rule_changes: rule_changes
                .into_iter()
                .map(|((model, task, recorded, other), t)| RuleChangeRow {
                    model,
                    task,
                    recorded,
                    other,
                    decisions: t.decisions,
                    choice_changed: t.choice_changed,
                    rejection_changed: t.rejection_changed,
                    accuracy_recorded: point_rate(t.accuracy[0]),
                    accuracy_other: point_rate(t.accuracy[1]),
                })
                .collect(),
            pair_closing: pair_closing.into_values().collect(),
        },
        missing: missing
            .into_iter()
            .map(|((model, task, split, error), count)| MissingRow {
                model,
                task,
                split,
                error,
                count,
            })
            .collect(),
    })
}
