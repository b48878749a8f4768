//! Candidate coverage: the second protocol (`../shared/paper/candidate-coverage-typed-decisions.txt`).
//!
//! A *case* is one classification text with its reference label and, for every ordinary size
//! k, a paired *present* and *absent* candidate set: "Present/absent candidate sets have the
//! same ordinary count" and differ only by the reference label (the absent set holds another
//! label in the reference's display slot). A *catalogue* is a task's label set: every label
//! with its natural name, its neutral name and one description ("Natural and neutral names
//! retain the same option descriptions and order"), plus the none option ("None is always
//! last").
//!
//! A *decision* is one scored request of a case: a candidate set (the full label set, or a
//! present/absent set of size k), a name variant, with or without the none option.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::request::OptionLogprobs;

/// The label id of the none option (never an ordinary label).
pub const NONE_LABEL: &str = "none";

/// One label of a task: its id in the source data, the two names a request may show for it,
/// and the description shown under either name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverageLabel {
    /// The label as the source dataset spells it (the reference of a case).
    pub label: String,
    /// The natural option name (derived from the label).
    pub natural: String,
    /// The neutral option name (carries no meaning: `class_07`, zero-padded to the digits of
    /// the label count).
    pub neutral: String,
    /// The option description (identical under both names).
    pub description: String,
}

/// A task's label set, the order of its full set, and the none option.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverageCatalogue {
    /// Task id (`banking77`, `clinc150`, …): the `task` of its cases.
    pub task: String,
    /// What the texts are ("customer-service messages to a bank"): bookkeeping only, never
    /// in a request (`protocol/src/coverage_audit.rs` checks it).
    pub text_kind: String,
    /// Ordinary labels in the order of the full set.
    pub labels: Vec<CoverageLabel>,
    /// The none option, shown last when present (label [`NONE_LABEL`]).
    pub none: CoverageLabel,
    /// Where the data came from (dataset, package, license).
    #[serde(default)]
    pub source: String,
}

/// Which split of the task a case belongs to. Calibration texts choose thresholds; test texts
/// measure them ("Independent calibration texts choose thresholds; test texts measure the
/// resulting detection and false rejection").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoverageSplit {
    /// Texts that choose the rejection thresholds.
    Calibration,
    /// Texts that measure detection and false rejection at those thresholds.
    Test,
}

impl CoverageSplit {
    /// The serialized name: `calibration` or `test`.
    pub fn as_str(self) -> &'static str {
        match self {
            CoverageSplit::Calibration => "calibration",
            CoverageSplit::Test => "test",
        }
    }
    /// The split named `s` ([`CoverageSplit::as_str`]).
    pub fn parse(s: &str) -> Option<CoverageSplit> {
        match s {
            "calibration" => Some(CoverageSplit::Calibration),
            "test" => Some(CoverageSplit::Test),
            _ => None,
        }
    }
}

/// The paired candidate sets of one ordinary size, in display order (label ids).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateSets {
    /// Ordinary labels in each of the two sets (2 ≤ k < the task's label count).
    pub k: usize,
    /// Holds the reference label.
    pub present: Vec<String>,
    /// The present set with the reference replaced by one other label, in the same slot.
    pub absent: Vec<String>,
}

/// One text of a task with its reference label and paired candidate sets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverageCase {
    /// Id of the case (non-empty), carried by each of its decisions.
    pub case_id: String,
    /// Task id: the catalogue's `task`.
    pub task: String,
    /// Whether the text chooses thresholds or measures them.
    pub split: CoverageSplit,
    /// The text to classify (non-empty).
    pub text: String,
    /// The reference label (a catalogue label id).
    pub reference: String,
    /// One pair of sets per ordinary size k, ascending k.
    pub sets: Vec<CandidateSets>,
    /// Where the text came from in the source data (`test.tsv:123`).
    #[serde(default)]
    pub origin: String,
}

/// Which candidate set a decision offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SetKind {
    /// Every label of the task (full-set classification).
    Full,
    /// A size-k set that holds the reference.
    Present,
    /// The paired size-k set, another label in the reference's slot.
    Absent,
}

impl SetKind {
    /// The serialized name, the first part of a decision label: `full`, `present` or `absent`.
    pub fn as_str(self) -> &'static str {
        match self {
            SetKind::Full => "full",
            SetKind::Present => "present",
            SetKind::Absent => "absent",
        }
    }
    /// The set kind named `s` ([`SetKind::as_str`]).
    pub fn parse(s: &str) -> Option<SetKind> {
        match s {
            "full" => Some(SetKind::Full),
            "present" => Some(SetKind::Present),
            "absent" => Some(SetKind::Absent),
            _ => None,
        }
    }
    /// Whether the reference label is offered.
    pub fn covered(self) -> bool {
        !matches!(self, SetKind::Absent)
    }
}

/// Which names the options carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NameVariant {
    /// Each option under its natural name ([`CoverageLabel::natural`]).
    Natural,
    /// Each option under its meaningless neutral name ([`CoverageLabel::neutral`]).
    Neutral,
}

impl NameVariant {
    /// The serialized name, part of a decision label: `natural` or `neutral`.
    pub fn as_str(self) -> &'static str {
        match self {
            NameVariant::Natural => "natural",
            NameVariant::Neutral => "neutral",
        }
    }
    /// The variant named `s` ([`NameVariant::as_str`]).
    pub fn parse(s: &str) -> Option<NameVariant> {
        match s {
            "natural" => Some(NameVariant::Natural),
            "neutral" => Some(NameVariant::Neutral),
            _ => None,
        }
    }
    /// The name `label` carries under this variant.
    pub fn name_of(self, label: &CoverageLabel) -> &str {
        match self {
            NameVariant::Natural => &label.natural,
            NameVariant::Neutral => &label.neutral,
        }
    }
}

/// An ordinary set size of `[coverage] ks`: a number, or every label but the reference
/// (`"all_but_reference"`, L − 1 for a task of L labels: "DBpedia $k=13$" is DBpedia-14's
/// classes but the reference), resolved per task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CoverageSize {
    /// This many ordinary labels.
    Fixed(usize),
    /// Every label but the reference: L − 1 for a task of L labels.
    AllButReference,
}

impl CoverageSize {
    /// How [`CoverageSize::AllButReference`] is spelled in a config.
    pub const ALL_BUT_REFERENCE: &'static str = "all_but_reference";

    /// The size for a task of `labels` ordinary labels.
    pub fn resolve(self, labels: usize) -> usize {
        match self {
            CoverageSize::Fixed(k) => k,
            CoverageSize::AllButReference => labels.saturating_sub(1),
        }
    }
}

impl fmt::Display for CoverageSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoverageSize::Fixed(k) => write!(f, "{k}"),
            CoverageSize::AllButReference => f.write_str(Self::ALL_BUT_REFERENCE),
        }
    }
}

impl Serialize for CoverageSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            CoverageSize::Fixed(k) => s.serialize_u64(*k as u64),
            CoverageSize::AllButReference => s.serialize_str(Self::ALL_BUT_REFERENCE),
        }
    }
}

impl<'de> Deserialize<'de> for CoverageSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u64),
            Name(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(k) => Ok(CoverageSize::Fixed(k as usize)),
            Raw::Name(n) if n == Self::ALL_BUT_REFERENCE => Ok(CoverageSize::AllButReference),
            Raw::Name(n) => Err(serde::de::Error::custom(format!(
                "unknown size `{n}` (a number, or `{}`)",
                Self::ALL_BUT_REFERENCE
            ))),
        }
    }
}

/// How an option's score is read from its tokens' log-probabilities before the options are
/// normalized. The document's interface returns "option scores" over "caller-defined answer
/// options" and states no aggregation; the default is the probability of the whole name
/// (its tokens' log-probabilities summed), the others are named alternatives.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ScoringRule {
    /// Log-probability of the whole name: its tokens' log-probabilities summed.
    #[default]
    Summed,
    /// Mean log-probability per token (the closing end token counts as a token).
    MeanPerToken,
    /// Log-probability of the first token only (names sharing it tie).
    FirstToken,
}

impl ScoringRule {
    /// Every rule, the default first.
    pub const ALL: [ScoringRule; 3] = [
        ScoringRule::Summed,
        ScoringRule::MeanPerToken,
        ScoringRule::FirstToken,
    ];

    /// Config name: `summed`, `mean_per_token` or `first_token`.
    pub fn as_str(self) -> &'static str {
        match self {
            ScoringRule::Summed => "summed",
            ScoringRule::MeanPerToken => "mean_per_token",
            ScoringRule::FirstToken => "first_token",
        }
    }

    /// The rule whose config name ([`ScoringRule::as_str`]) is `s`.
    pub fn parse(s: &str) -> Option<ScoringRule> {
        ScoringRule::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Each option's score under the rule (`None` when an option has no token).
    pub fn scores(self, token_logprobs: &[Vec<f64>]) -> Option<Vec<f64>> {
        token_logprobs
            .iter()
            .map(|t| match self {
                ScoringRule::Summed => (!t.is_empty()).then(|| t.iter().sum()),
                ScoringRule::MeanPerToken => {
                    (!t.is_empty()).then(|| t.iter().sum::<f64>() / t.len() as f64)
                }
                ScoringRule::FirstToken => t.first().copied(),
            })
            .collect()
    }

    /// The options' distribution under the rule: softmax of [`ScoringRule::scores`].
    pub fn probabilities(self, token_logprobs: &[Vec<f64>]) -> Option<Vec<f64>> {
        self.scores(token_logprobs).map(|s| softmax(&s))
    }
}

/// `exp(x_i − max) / Σ exp(x_j − max)`; all −∞ gives a uniform distribution.
pub fn softmax(x: &[f64]) -> Vec<f64> {
    let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        return vec![1.0 / x.len().max(1) as f64; x.len()];
    }
    let e: Vec<f64> = x.iter().map(|v| (v - max).exp()).collect();
    let s: f64 = e.iter().sum();
    e.into_iter().map(|v| v / s).collect()
}

/// What one request of a case offers: `present/k4/natural/none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DecisionSpec {
    /// Which candidate set is offered.
    pub set: SetKind,
    /// Ordinary options offered (the task's label count for the full set).
    pub k: usize,
    /// Which names the options carry.
    pub names: NameVariant,
    /// The none option is offered (last).
    pub with_none: bool,
}

impl DecisionSpec {
    /// `set/kK/names/none|plain`: the `arm` of the request.
    pub fn label(&self) -> String {
        format!(
            "{}/k{}/{}/{}",
            self.set.as_str(),
            self.k,
            self.names.as_str(),
            if self.with_none { "none" } else { "plain" }
        )
    }
}

impl fmt::Display for DecisionSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// One answered (or failed) coverage request: the `decisions` dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Id of the case decided.
    pub case_id: String,
    /// The case's task id.
    pub task: String,
    /// The case's split (calibration decisions choose the thresholds).
    pub split: CoverageSplit,
    /// The case's reference label (a catalogue label id).
    pub reference: String,
    /// What the request offered.
    pub spec: DecisionSpec,
    /// Offered label ids in display order ([`NONE_LABEL`] last when offered).
    pub labels: Vec<String>,
    /// Probabilities aligned with `labels` (empty when the request failed).
    pub probabilities: Vec<f64>,
    /// Id of the scored request.
    pub request_id: String,
    /// The model that was asked: its name and the first twelve hex digits of its file's
    /// SHA-256 (`name@0123456789ab`).
    pub model: String,
    /// Prompt tokens of the request (0 when the engine returned no response).
    pub prompt_tokens: u32,
    /// Request time in milliseconds (when the engine returned no response, the time waited).
    pub latency_ms: f64,
    /// Why the request failed (the decision then counts as missing, never as a rejection).
    pub error: Option<String>,
    /// Ordinary labels of the task (L; `None` in decisions written before it was kept): a
    /// present/absent decision with k = L − 1 offers every label but the reference or one
    /// other ("all_but_reference").
    pub task_labels: Option<u32>,
    /// The rule that turned the engine's log-likelihoods into `probabilities`.
    pub scoring: ScoringRule,
    /// The engine's raw log-likelihoods, aligned with `labels` (`None` when the request
    /// failed, or in decisions written before they were kept).
    pub raw: Option<OptionLogprobs>,
}

/// Scores of a decision's ordinary options (the none option excluded, the rest renormalized).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrdinaryScores {
    /// Largest ordinary probability.
    pub max_prob: f64,
    /// Shannon entropy (nats) of the ordinary distribution.
    pub entropy: f64,
    /// Largest minus second largest ordinary probability.
    pub margin: f64,
}

impl Decision {
    /// Whether the decision offers every label but the reference (absent) or one other
    /// (present): k = L − 1.
    pub fn all_but_reference(&self) -> bool {
        self.spec.set != SetKind::Full
            && self
                .task_labels
                .is_some_and(|l| self.spec.k + 1 == l as usize)
    }

    /// The decision with its probabilities recomputed from the raw token log-likelihoods
    /// under `rule` (`None` when it has none, or they do not align with its labels).
    pub fn rescored(&self, rule: ScoringRule) -> Option<Decision> {
        let raw = self.raw.as_ref()?;
        if self.error.is_some() || !raw.aligned(self.labels.len()) {
            return None;
        }
        let mut d = self.clone();
        d.probabilities = rule.probabilities(&raw.token_logprobs)?;
        d.scoring = rule;
        Some(d)
    }

    /// The offered label with the largest probability (first in display order on ties), or
    /// `None` when the request failed.
    pub fn choice(&self) -> Option<&str> {
        argmax(&self.probabilities).and_then(|i| self.labels.get(i).map(String::as_str))
    }

    /// The ordinary label with the largest probability (the none option ignored).
    pub fn ordinary_choice(&self) -> Option<&str> {
        let (labels, probs) = self.ordinary();
        argmax(&probs).map(|i| labels[i])
    }

    /// The native rule rejects: the none option is offered and chosen.
    pub fn rejected(&self) -> Option<bool> {
        self.choice().map(|c| c == NONE_LABEL)
    }

    /// Probability of the none option (`None` when not offered or failed).
    pub fn none_prob(&self) -> Option<f64> {
        if !self.spec.with_none || self.probabilities.is_empty() {
            return None;
        }
        self.labels
            .iter()
            .position(|l| l == NONE_LABEL)
            .and_then(|i| self.probabilities.get(i).copied())
    }

    /// Sum of the returned probabilities (the precision audit's "distributions whose sum
    /// deviates from 1").
    pub fn prob_sum(&self) -> f64 {
        self.probabilities.iter().sum()
    }

    /// Ordinary labels and their renormalized probabilities.
    pub fn ordinary(&self) -> (Vec<&str>, Vec<f64>) {
        let mut labels = Vec::new();
        let mut probs = Vec::new();
        for (l, p) in self.labels.iter().zip(&self.probabilities) {
            if l != NONE_LABEL {
                labels.push(l.as_str());
                probs.push(*p);
            }
        }
        let s: f64 = probs.iter().sum();
        if s > 0.0 {
            for p in &mut probs {
                *p /= s;
            }
        }
        (labels, probs)
    }

    /// Max probability, entropy and margin of the ordinary distribution.
    pub fn ordinary_scores(&self) -> Option<OrdinaryScores> {
        let (_, probs) = self.ordinary();
        ordinary_scores(&probs)
    }
}

/// Max probability, entropy and margin of a distribution (`None` when empty).
pub fn ordinary_scores(probs: &[f64]) -> Option<OrdinaryScores> {
    if probs.is_empty() {
        return None;
    }
    let mut sorted: Vec<f64> = probs.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let max_prob = sorted[0];
    let second = sorted.get(1).copied().unwrap_or(0.0);
    let entropy = probs
        .iter()
        .filter(|&&p| p > 0.0)
        .map(|&p| -p * p.ln())
        .sum::<f64>()
        .max(0.0);
    Some(OrdinaryScores {
        max_prob,
        entropy,
        margin: max_prob - second,
    })
}

fn argmax(p: &[f64]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, &x) in p.iter().enumerate() {
        match best {
            Some(b) if p[b] >= x => {}
            _ => best = Some(i),
        }
    }
    best
}

/// Why a case cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("case `{case_id}`: field `{field}`: {message}")]
pub struct CaseError {
    /// The case at fault.
    pub case_id: String,
    /// The case field at fault (`reference`, `sets[0].absent`, …).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

/// Why a catalogue is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("catalogue `{task}`: {message}")]
pub struct CatalogueError {
    /// The catalogue's task.
    pub task: String,
    /// What is wrong with it.
    pub message: String,
}

impl CoverageCatalogue {
    /// Every label id, natural name and neutral name distinct; none last and never ordinary.
    pub fn validate(&self) -> Result<(), CatalogueError> {
        let err = |m: String| CatalogueError {
            task: self.task.clone(),
            message: m,
        };
        if self.labels.len() < 2 {
            return Err(err("fewer than two labels".into()));
        }
        if self.none.label != NONE_LABEL {
            return Err(err(format!(
                "the none option's label must be `{NONE_LABEL}`"
            )));
        }
        for (what, f) in [
            (
                "label",
                (|l: &CoverageLabel| l.label.clone()) as fn(&CoverageLabel) -> String,
            ),
            ("natural name", |l| l.natural.clone()),
            ("neutral name", |l| l.neutral.clone()),
        ] {
            let mut seen = BTreeSet::new();
            for l in self.labels.iter().chain(std::iter::once(&self.none)) {
                let v = f(l);
                if v.trim().is_empty() {
                    return Err(err(format!("empty {what} for `{}`", l.label)));
                }
                if !seen.insert(v.clone()) {
                    return Err(err(format!("{what} `{v}` appears twice")));
                }
            }
        }
        Ok(())
    }

    /// Label by id.
    pub fn index(&self) -> HashMap<&str, &CoverageLabel> {
        self.labels
            .iter()
            .map(|l| (l.label.as_str(), l))
            .chain(std::iter::once((NONE_LABEL, &self.none)))
            .collect()
    }
}

impl CoverageCase {
    /// Check a case against its catalogue: the pairing rules of the protocol.
    pub fn validate(&self, catalogue: &CoverageCatalogue) -> Result<(), CaseError> {
        let err = |field: &str, message: String| CaseError {
            case_id: self.case_id.clone(),
            field: field.into(),
            message,
        };
        if self.case_id.trim().is_empty() {
            return Err(err("case_id", "empty".into()));
        }
        if self.task != catalogue.task {
            return Err(err(
                "task",
                format!("`{}` is not the catalogue's task", self.task),
            ));
        }
        if self.text.trim().is_empty() {
            return Err(err("text", "empty".into()));
        }
        let labels: BTreeSet<&str> = catalogue.labels.iter().map(|l| l.label.as_str()).collect();
        if !labels.contains(self.reference.as_str()) {
            return Err(err(
                "reference",
                format!("`{}` is not a label of `{}`", self.reference, self.task),
            ));
        }
        if self.sets.is_empty() {
            return Err(err("sets", "no candidate sets".into()));
        }
        let mut ks = BTreeSet::new();
        for (i, s) in self.sets.iter().enumerate() {
            let field = format!("sets[{i}]");
            if s.k < 2 || s.k >= catalogue.labels.len() {
                return Err(err(
                    &field,
                    format!(
                        "k = {} must be in 2..{} (an absent set needs k labels besides the reference)",
                        s.k,
                        catalogue.labels.len() - 1
                    ),
                ));
            }
            if !ks.insert(s.k) {
                return Err(err(&field, format!("k = {} appears twice", s.k)));
            }
            for (name, set) in [("present", &s.present), ("absent", &s.absent)] {
                if set.len() != s.k {
                    return Err(err(
                        &format!("{field}.{name}"),
                        format!("{} labels, k = {}", set.len(), s.k),
                    ));
                }
                let distinct: BTreeSet<&str> = set.iter().map(String::as_str).collect();
                if distinct.len() != set.len() {
                    return Err(err(&format!("{field}.{name}"), "a label repeats".into()));
                }
                if let Some(bad) = set.iter().find(|l| !labels.contains(l.as_str())) {
                    return Err(err(
                        &format!("{field}.{name}"),
                        format!("`{bad}` is not an ordinary label of `{}`", self.task),
                    ));
                }
            }
            if !s.present.contains(&self.reference) {
                return Err(err(
                    &format!("{field}.present"),
                    "does not hold the reference".into(),
                ));
            }
            if s.absent.contains(&self.reference) {
                return Err(err(
                    &format!("{field}.absent"),
                    "holds the reference".into(),
                ));
            }
            let differing: Vec<usize> = (0..s.k).filter(|&j| s.present[j] != s.absent[j]).collect();
            if differing.len() != 1 || s.present[differing[0]] != self.reference {
                return Err(err(
                    &field,
                    "present and absent must differ only in the reference's slot".into(),
                ));
            }
        }
        if self.sets.windows(2).any(|w| w[0].k >= w[1].k) {
            return Err(err("sets", "sizes must ascend".into()));
        }
        Ok(())
    }

    /// The offered labels of a spec, in display order (none last when offered).
    pub fn offered(
        &self,
        catalogue: &CoverageCatalogue,
        spec: &DecisionSpec,
    ) -> Option<Vec<String>> {
        let mut labels: Vec<String> = match spec.set {
            SetKind::Full => catalogue.labels.iter().map(|l| l.label.clone()).collect(),
            SetKind::Present | SetKind::Absent => {
                let s = self.sets.iter().find(|s| s.k == spec.k)?;
                if spec.set == SetKind::Present {
                    s.present.clone()
                } else {
                    s.absent.clone()
                }
            }
        };
        if spec.with_none {
            labels.push(NONE_LABEL.to_string());
        }
        Some(labels)
    }
}

/// A case line that is not the JSON of a [`CoverageCase`].
#[derive(Debug, thiserror::Error)]
#[error("not a coverage case: {source}")]
pub struct CaseParseError {
    /// serde's reason, with the line's column.
    #[from]
    pub source: serde_json::Error,
}

/// Parse one case line.
pub fn parse_case(line: &str) -> Result<CoverageCase, CaseParseError> {
    Ok(serde_json::from_str(line)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(l: &str, n: usize) -> CoverageLabel {
        CoverageLabel {
            label: l.into(),
            natural: l.into(),
            neutral: format!("class_{n:02}"),
            description: format!("about {l}"),
        }
    }

    fn catalogue() -> CoverageCatalogue {
        CoverageCatalogue {
            task: "t".into(),
            text_kind: "texts".into(),
            labels: ["a", "b", "c", "d", "e"]
                .iter()
                .enumerate()
                .map(|(i, l)| label(l, i + 1))
                .collect(),
            none: CoverageLabel {
                label: NONE_LABEL.into(),
                natural: "none".into(),
                neutral: "none".into(),
                description: "no other option".into(),
            },
            source: String::new(),
        }
    }

    #[test]
    fn a_line_that_is_no_case_says_so() {
        let err = parse_case("{").unwrap_err();
        let serde = serde_json::from_str::<CoverageCase>("{").unwrap_err();
        assert_eq!(err.to_string(), format!("not a coverage case: {serde}"));
        assert!(std::error::Error::source(&err).is_some());
        assert_eq!(
            parse_case(&serde_json::to_string(&case()).unwrap()).unwrap(),
            case()
        );
    }

    fn case() -> CoverageCase {
        CoverageCase {
            case_id: "t:1".into(),
            task: "t".into(),
            split: CoverageSplit::Test,
            text: "hello".into(),
            reference: "b".into(),
            sets: vec![CandidateSets {
                k: 3,
                present: vec!["c".into(), "b".into(), "a".into()],
                absent: vec!["c".into(), "e".into(), "a".into()],
            }],
            origin: String::new(),
        }
    }

    #[test]
    fn a_paired_case_validates_and_offers_none_last() {
        let (cat, c) = (catalogue(), case());
        cat.validate().unwrap();
        c.validate(&cat).unwrap();
        let spec = DecisionSpec {
            set: SetKind::Absent,
            k: 3,
            names: NameVariant::Neutral,
            with_none: true,
        };
        assert_eq!(c.offered(&cat, &spec).unwrap(), ["c", "e", "a", "none"]);
        assert_eq!(spec.label(), "absent/k3/neutral/none");
    }

    #[test]
    fn pairing_violations_name_the_field() {
        let cat = catalogue();
        let mut c = case();
        c.sets[0].absent = vec!["e".into(), "c".into(), "a".into()];
        let e = c.validate(&cat).unwrap_err();
        assert_eq!(e.field, "sets[0]");
        let mut c = case();
        c.sets[0].absent[1] = "b".into();
        assert_eq!(c.validate(&cat).unwrap_err().field, "sets[0].absent");
        let mut c = case();
        c.sets[0].present = vec!["c".into(), "d".into(), "a".into()];
        assert_eq!(c.validate(&cat).unwrap_err().field, "sets[0].present");
        let mut c = case();
        c.reference = "zz".into();
        assert_eq!(c.validate(&cat).unwrap_err().field, "reference");
        let mut c = case();
        c.sets[0].k = 5;
        assert!(c.validate(&cat).is_err());
    }

    #[test]
    fn scores_exclude_the_none_option() {
        let d = Decision {
            case_id: "x".into(),
            task: "t".into(),
            split: CoverageSplit::Test,
            reference: "a".into(),
            spec: DecisionSpec {
                set: SetKind::Present,
                k: 2,
                names: NameVariant::Natural,
                with_none: true,
            },
            labels: vec!["a".into(), "b".into(), NONE_LABEL.into()],
            probabilities: vec![0.3, 0.1, 0.6],
            request_id: "r".into(),
            model: "m".into(),
            prompt_tokens: 0,
            latency_ms: 0.0,
            error: None,
            task_labels: Some(5),
            scoring: ScoringRule::Summed,
            raw: None,
        };
        assert_eq!(d.choice(), Some(NONE_LABEL));
        assert_eq!(d.rejected(), Some(true));
        assert_eq!(d.ordinary_choice(), Some("a"));
        assert_eq!(d.none_prob(), Some(0.6));
        let s = d.ordinary_scores().unwrap();
        assert!((s.max_prob - 0.75).abs() < 1e-12);
        assert!((s.margin - 0.5).abs() < 1e-12);
        let h = -(0.75f64 * 0.75f64.ln() + 0.25 * 0.25f64.ln());
        assert!((s.entropy - h).abs() < 1e-12);
        assert!(!d.all_but_reference());
        assert!(
            d.rescored(ScoringRule::FirstToken).is_none(),
            "no raw scores"
        );
    }

    /// The rules read the same tokens differently: a long name loses under the sum and can
    /// win per token; first-token scoring ties names that share their first token.
    #[test]
    fn scoring_rules_read_the_token_log_probabilities() {
        let tokens = vec![vec![-1.0], vec![-0.5, -0.3, -0.3, -0.3], vec![-0.5, -3.0]];
        let summed = ScoringRule::Summed.scores(&tokens).unwrap();
        assert!((summed[1] + 1.4).abs() < 1e-12 && summed[0] == -1.0 && summed[2] == -3.5);
        let mean = ScoringRule::MeanPerToken.scores(&tokens).unwrap();
        assert!((mean[1] + 0.35).abs() < 1e-12);
        assert_eq!(
            ScoringRule::FirstToken.scores(&tokens).unwrap(),
            [-1.0, -0.5, -0.5]
        );
        let p = ScoringRule::Summed.probabilities(&tokens).unwrap();
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(ScoringRule::Summed.scores(&[vec![]]).is_none());
        assert_eq!(
            ScoringRule::parse("mean_per_token"),
            Some(ScoringRule::MeanPerToken)
        );
        let d = Decision {
            case_id: "x".into(),
            task: "t".into(),
            split: CoverageSplit::Test,
            reference: "a".into(),
            spec: DecisionSpec {
                set: SetKind::Absent,
                k: 3,
                names: NameVariant::Natural,
                with_none: false,
            },
            labels: vec!["b".into(), "c".into(), "d".into()],
            probabilities: vec![0.2, 0.5, 0.3],
            request_id: "r".into(),
            model: "m".into(),
            prompt_tokens: 0,
            latency_ms: 0.0,
            error: None,
            task_labels: Some(4),
            scoring: ScoringRule::Summed,
            raw: Some(OptionLogprobs {
                logprobs: summed.clone(),
                token_logprobs: tokens.clone(),
            }),
        };
        assert!(d.all_but_reference());
        let m = d.rescored(ScoringRule::MeanPerToken).unwrap();
        assert_eq!(m.scoring, ScoringRule::MeanPerToken);
        assert_eq!(m.choice(), Some("c"));
        assert_eq!(d.rescored(ScoringRule::Summed).unwrap().choice(), Some("b"));
    }

    #[test]
    fn sizes_read_numbers_and_all_but_reference() {
        let v: Vec<CoverageSize> = serde_json::from_str(r#"[4, "all_but_reference"]"#).unwrap();
        assert_eq!(v, [CoverageSize::Fixed(4), CoverageSize::AllButReference]);
        assert_eq!(v[1].resolve(14), 13);
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"[4,"all_but_reference"]"#
        );
        let e = serde_json::from_str::<CoverageSize>(r#""all""#).unwrap_err();
        assert!(e.to_string().contains("all_but_reference"), "{e}");
    }
}
