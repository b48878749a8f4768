//! Per-step records, trajectories and paired outcomes.

use serde::{Deserialize, Serialize};

use crate::item::Domain;

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
    pub request_id: Option<String>,
    /// The value appended (a character, a candidate, `END`), or the INVALID marker.
    pub emitted: String,
    /// The value the step should produce (gold character, plan character, candidate).
    pub required: String,
    pub class: Option<ResponseClass>,
    /// Scored contracts: probabilities aligned with `support`.
    pub probabilities: Option<Vec<f64>>,
    /// Probability of the emitted value (scored contracts).
    pub chosen_probability: Option<f64>,
    /// Largest probability at this step (scored contracts).
    pub top_probability: Option<f64>,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub latency_ms: f64,
    /// D.9's token control: the token count of the Indexed request at this step's prefix that
    /// the padding matched; `prompt_tokens` (the engine's own count) was verified equal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched_prompt_tokens: Option<u32>,
}

impl StepRecord {
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
    Gold,
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
    ExactCompletion,
    PrematureEnd,
    CorrectContentWithoutEnd,
    CapExhaustion,
    WrongContent,
}

/// Stopping-track outcome with its auxiliary indicators.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopOutcome {
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

    pub fn is_correct(&self) -> bool {
        *self == Endpoint::Correct
    }
}

/// A completed (item, arm) trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    pub item_id: String,
    pub domain: Domain,
    pub length: usize,
    pub model: String,
    /// Arm label (`ArmSpec::label`).
    pub arm: String,
    /// Support name (Full, UnionFill, …); `-` for whole-answer arms.
    pub support: String,
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
    pub plan_origin: Option<String>,
    /// Copy arms: positions at which the plan differs from the gold target (0 for a correct
    /// plan).
    #[serde(default)]
    pub plan_differences: Option<u32>,
    /// Symbolic items: the shared base or source (the independent unit, A.1), the operation,
    /// the placement (early/late uniqueness or branches) and whether the target repeats a
    /// symbol — what unit contrasts select and stratify by.
    #[serde(default)]
    pub base_id: Option<String>,
    #[serde(default)]
    pub operation: Option<String>,
    #[serde(default)]
    pub placement: Option<String>,
    #[serde(default)]
    pub repeated: Option<bool>,
    /// Semantic-bridge items: the gold Boolean pattern (`101`), the record's bootstrap stratum
    /// ("Semantic bases use gold pattern", A.6).
    #[serde(default)]
    pub pattern: Option<String>,
    pub membership: Membership,
    /// A non-candidate output whose every character is in the candidates' union at its
    /// position (may overlap any non-candidate membership class).
    #[serde(default)]
    pub recombination: bool,
    pub stop: Option<StopOutcome>,
    /// A Trie prefix left the candidate set (or an empty support) and the rest was skipped.
    pub aborted: bool,
    pub calls: u32,
    pub fills: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub latency_ms: f64,
    pub confidence: Option<Confidence>,
    /// Per position: the emitted character equals the gold character (local arms).
    pub position_correct: Vec<bool>,
    pub steps: Vec<StepRecord>,
}

/// A paired Native/Serial outcome of one item.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PairedOutcome {
    pub item_id: String,
    pub domain: Domain,
    pub length: usize,
    pub model: String,
    pub native_arm: String,
    pub serial_arm: String,
    pub native_correct: bool,
    pub serial_correct: bool,
    /// Semantic-bridge items: the gold pattern, which replaces length as the bootstrap stratum
    /// ("Natural strata are domain/length. … Semantic bases use gold pattern", A.6).
    #[serde(default)]
    pub pattern: Option<String>,
}
