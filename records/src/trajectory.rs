//! Per-step records, trajectories and paired outcomes.

use serde::{Deserialize, Serialize};

use crate::arm::{LabeledArm, Support};
use crate::item::{Domain, Operation, Placement};
use crate::plan::PlanSource;

/// Marks a position whose answer was outside the support, or an aborted position.
/// `#` is in no alphabet of the protocol (digits, lowercase letters, the 11 punctuation
/// symbols, whitespace).
pub const INVALID_MARKER: char = '#';

/// The END option of the stopping track.
pub const END: &str = "END";

/// Classification of one response against the value it should have produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ResponseClass {
    /// Exactly the required value.
    StrictCorrect,
    /// A listed value, but not the required one.
    FormatValidWrong,
    /// Generation hit its token budget.
    Truncated,
    /// Nothing but whitespace.
    Empty,
    /// Character contract answered with the code bound to the required value.
    CorrectBoundCode,
    /// Character contract answered with another listed code.
    OtherListedCode,
    /// A listed value followed or preceded by other text.
    ExtraText,
    /// Anything else.
    OtherInvalid,
}

impl ResponseClass {
    /// Whether the response is a listed value (strict format).
    pub fn is_valid(self) -> bool {
        matches!(
            self,
            ResponseClass::StrictCorrect | ResponseClass::FormatValidWrong
        )
    }
}

/// One position of a local trajectory (or the single step of a whole-answer arm).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// One-based position (0 for whole-answer arms).
    pub position: u32,
    /// Legal values at this step, in display order.
    pub support: Vec<String>,
    /// Filled without a request (singleton under a Fill rule).
    pub filled: bool,
    /// Not executed because the trajectory aborted earlier (logged with zero calls).
    pub aborted: bool,
    /// The step's request; `None` for filled and aborted steps and for a batch answer's later
    /// positions (its request is recorded on the first).
    pub request_id: Option<String>,
    /// The value appended (a character, a candidate, `END`), or the INVALID marker.
    pub emitted: String,
    /// The value the step should produce (gold character, plan character, candidate).
    pub required: String,
    /// Strict classification of the step's answer; `None` for filled and aborted steps.
    pub class: Option<ResponseClass>,
    /// Scored contracts: probabilities aligned with `support`.
    pub probabilities: Option<Vec<f64>>,
    /// Probability of the emitted value (scored contracts).
    pub chosen_probability: Option<f64>,
    /// Largest probability at this step (scored contracts).
    pub top_probability: Option<f64>,
    /// Prompt tokens of the step's request (0 without `request_id`).
    pub prompt_tokens: u32,
    /// Tokens generated for the step (0 for scored answers and without `request_id`).
    pub completion_tokens: u32,
    /// Wall time of the step's model call, ms (0 without `request_id` or from a cache).
    pub latency_ms: f64,
    /// D.9's token control: the token count of the Indexed request at this step's prefix that
    /// the padding matched; `prompt_tokens` (the engine's own count) was verified equal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched_prompt_tokens: Option<u32>,
}

impl StepRecord {
    /// Whether the step carries a model request (`request_id` is set).
    pub fn is_call(&self) -> bool {
        self.request_id.is_some()
    }
}

/// Where a completed string falls: the output audit of D.17, whose classes are exclusive and
/// taken in this order — "gold, another candidate, malformed (wrong length or outside
/// lowercase ASCII), another gold-synset lemma, another indexed noun, another indexed word, and
/// unindexed string". Recombination is recorded separately ([`Trajectory::recombination`]):
/// "Recombinations are noncandidate strings compatible with every position-wise union; they can
/// overlap the resource categories" (Table D16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Membership {
    /// The target.
    Gold,
    /// One of the other seven candidates.
    OtherCandidate,
    /// Wrong length, a character outside the domain alphabet (the INVALID marker included), or
    /// an aborted trajectory.
    Malformed,
    /// Lexical: another lemma of the gold synset.
    GoldSynsetLemma,
    /// Lexical: a noun in WordNet's index.
    IndexedNoun,
    /// Lexical: a word of another part of speech in WordNet's index.
    IndexedWord,
    /// Lexical: in no WordNet index.
    Unindexed,
    /// A well-formed non-candidate string that no lexical class applies to: every arithmetic
    /// one, and a lexical one when the run had no WordNet index to consult.
    Outside,
}

/// Exclusive stopping category of the 51-option track, by priority (paper A.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StopCategory {
    /// END right after content equal to the gold.
    ExactCompletion,
    /// END after fewer than L content characters.
    PrematureEnd,
    /// The first L content characters are the gold, but END did not follow them at once.
    CorrectContentWithoutEnd,
    /// The L+3 cap was reached without END and the first L characters are not the gold.
    CapExhaustion,
    /// Anything else, e.g. END after at least L characters whose first L are not the gold.
    WrongContent,
}

/// Stopping-track outcome with its auxiliary indicators.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopOutcome {
    /// The first category, in [`StopCategory`]'s order, that applies.
    pub category: StopCategory,
    /// Gold immediately followed by END.
    pub exact_completion: bool,
    /// The emitted content (before END, or everything at the cap) equals the gold string.
    pub content_em: bool,
    /// The first L emitted characters equal the gold string.
    pub first_l_correct: bool,
    /// The L+3 cap was reached without END.
    pub cap_exhausted: bool,
    /// Some emitted content character differs from gold at its position.
    pub content_error: bool,
    /// Steps taken (requests and fills), END included.
    pub steps: u32,
}

/// Confidence composites over the model-chosen (called, scored) steps (paper A.6).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Confidence {
    /// Product of the chosen probabilities.
    pub product: f64,
    /// exp(mean log chosen probability).
    pub geometric_mean: f64,
    /// Smallest per-step top-choice probability.
    pub min_top: f64,
    /// Steps that entered the composites.
    pub steps: u32,
}

/// What a trajectory is scored on in a unit contrast: the original task (gold EM) or, for a
/// copy arm, whether it copied its supplied plan (fidelity). A.5: "Fidelity across all items,
/// gold accuracy, SCR conditioned on fresh Native correctness … use these plans"; B.1:
/// "Fidelity scores that string; gold EM scores the original task".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Endpoint {
    /// The output equals the gold answer.
    #[default]
    Correct,
    /// The output equals the supplied plan (copy arms only).
    Fidelity,
}

impl Endpoint {
    /// The trajectory's value on this endpoint; `None` for fidelity on an arm without a plan.
    pub fn of(self, t: &Trajectory) -> Option<bool> {
        match self {
            Endpoint::Correct => Some(t.correct),
            Endpoint::Fidelity => t.fidelity,
        }
    }

    /// Whether this is the gold endpoint ([`Endpoint::Correct`]).
    pub fn is_correct(&self) -> bool {
        *self == Endpoint::Correct
    }
}

/// A completed (item, arm) trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    /// The item answered.
    pub item_id: String,
    /// The item's domain.
    pub domain: Domain,
    /// The item's target length L (characters).
    pub length: usize,
    /// Model name (its full identity is in the run's manifest).
    pub model: String,
    /// The arm: its canonical spec and label (`ArmSpec::label`); the serde form is the label.
    pub arm: LabeledArm,
    /// Local support (Full, UnionFill, …); `None` for whole-answer arms (serde form: the
    /// support's name, `-` for `None`).
    #[serde(with = "support_or_dash")]
    pub support: Option<Support>,
    /// The completed string (INVALID markers included; without END).
    pub output: String,
    /// Strict closed-set exact match with the target.
    pub correct: bool,
    /// Every step answered with a listed value and nothing aborted.
    pub valid: bool,
    /// Copy arms: the output equals the supplied plan.
    pub fidelity: Option<bool>,
    /// Copy arms: the supplied plan (`copy_target`).
    pub plan: Option<String>,
    /// Copy arms: where the plan came from: `gold` (GoldCopy), `self` (SelfPlanSpell, the
    /// model's own Native choice), or the origin a supplied plan declares (`observed`,
    /// `constructed`; D.12: "Records retain difference counts and distinguish observed from
    /// constructed plans").
    #[serde(default)]
    pub plan_origin: Option<PlanSource>,
    /// Copy arms: positions at which the plan differs from the gold target (0 for a correct
    /// plan).
    #[serde(default)]
    pub plan_differences: Option<u32>,
    /// Symbolic items: the shared base or source (the independent unit, A.1), the operation,
    /// the placement (early/late uniqueness or branches) and whether the target repeats a
    /// symbol — what unit contrasts select and stratify by.
    #[serde(default)]
    pub base_id: Option<String>,
    /// Symbolic items: `copy` or `reverse` ([`crate::Operation::as_str`]).
    #[serde(default)]
    pub operation: Option<Operation>,
    /// Symbolic items: `early` or `late` ([`crate::Placement::as_str`]).
    #[serde(default)]
    pub placement: Option<Placement>,
    /// Symbolic items: the target repeats a symbol.
    #[serde(default)]
    pub repeated: Option<bool>,
    /// Semantic-bridge items: the gold Boolean pattern (`101`), the record's bootstrap stratum
    /// ("Semantic bases use gold pattern", A.6).
    #[serde(default)]
    pub pattern: Option<String>,
    /// D.17's exclusive output class of `output`.
    pub membership: Membership,
    /// A non-candidate output whose every character is in the candidates' union at its
    /// position (may overlap any non-candidate membership class).
    #[serde(default)]
    pub recombination: bool,
    /// SerialStop: the stopping-track outcome; `None` for other arms.
    pub stop: Option<StopOutcome>,
    /// A Trie prefix left the candidate set (or an empty support) and the rest was skipped.
    pub aborted: bool,
    /// Model requests: steps with a `request_id`.
    pub calls: u32,
    /// Steps filled without a request.
    pub fills: u32,
    /// Prompt tokens summed over the steps' requests.
    pub prompt_tokens: u64,
    /// Generated tokens summed over the steps' requests.
    pub completion_tokens: u64,
    /// Model-call wall time summed over the steps, ms.
    pub latency_ms: f64,
    /// Confidence composites; `None` when no called step was scored.
    pub confidence: Option<Confidence>,
    /// Per position: the emitted character equals the gold character (local arms).
    pub position_correct: Vec<bool>,
    /// Every step taken (calls, fills and aborted positions), for audit.
    pub steps: Vec<StepRecord>,
}

/// A paired Native/Serial outcome of one item.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PairedOutcome {
    /// The item both trajectories answered.
    pub item_id: String,
    /// The item's domain.
    pub domain: Domain,
    /// The item's target length L (characters): the natural bootstrap stratum.
    pub length: usize,
    /// Model name, as in the paired trajectories.
    pub model: String,
    /// Label of the reference (selecting, left) arm.
    pub native_arm: String,
    /// Label of the compared (constructing, right) arm.
    pub serial_arm: String,
    /// The reference arm succeeded: gold exact match, or fidelity to the plan when the
    /// comparison pairs copy arms by fidelity.
    pub native_correct: bool,
    /// The compared arm succeeded, by the same endpoint as `native_correct`.
    pub serial_correct: bool,
    /// Semantic-bridge items: the gold pattern, which replaces length as the bootstrap stratum
    /// ("Natural strata are domain/length. … Semantic bases use gold pattern", A.6).
    #[serde(default)]
    pub pattern: Option<String>,
}

/// The serde form of a trajectory's support: its name, or `-` where there is none.
mod support_or_dash {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::arm::Support;

    pub fn serialize<S: Serializer>(support: &Option<Support>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(support.map_or("-", Support::name))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Support>, D::Error> {
        let name = String::deserialize(d)?;
        if name == "-" {
            return Ok(None);
        }
        Support::parse(&name)
            .filter(|s| s.name() == name)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("`{name}` is not a support")))
    }
}
