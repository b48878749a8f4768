//! Dialogue-state statistics (paper §3.3, Appendix C; Tables C1–C5, Figures 8–9) from
//! `dialogue_turns/` rows ([`FieldTurn`]: one per field × user turn × dialogue × spec × model).
//!
//! # Populations
//!
//! Rows are grouped by (model, [`DialogueSpec`]). The *primary population* of a group is its
//! test-split, unperturbed dialogues (`split == Test`, `perturbation == None`): every endpoint,
//! contrast, retention and sign test uses it. Development rows enter nothing ("Twelve
//! development prefixes are disjoint by split, identifier and content", C.1) and are only
//! counted ([`DialogueSummary::excluded_dev_rows`]). Perturbed test copies are compared with
//! their base dialogue separately ([`PerturbationRow`], [`PerturbationSummary`]) and enter the
//! model's request totals ([`ModelResponses`], C.1's "Each model has 1,924 logical requests
//! including perturbations and 1,800 physical responses"; ours pool every arm and mode a run
//! holds, so they are not comparable with that count).
//!
//! # Endpoints (per model and spec)
//!
//! A *turn* is correct when every field row of that turn is correct (joint state EM). Per
//! dialogue: mean-turn EM = correct turns / turns; final EM = the last turn is correct;
//! trajectory EM = every turn is correct; mean field EM = correct field turns / field turns.
//! Each endpoint is then averaged across dialogues, so every dialogue weighs the same
//! whatever its length: "The primary end-point averages joint state turn EM within dialogue,
//! then across dialogues" (C.2); "Mean-turn EM weights dialogues equally. Trajectory and
//! final EM score complete prefixes and terminal states" (C.1). A row's recorded `correct` is
//! used as is: a failed field ("invalid JSON, extra keys, illegal values and truncation
//! fail", C.2) is wrong in EM. A dialogue run is *scored* only when it is complete (every
//! turn 1..=turns, each with the same fields) and no request of it failed in the engine: an
//! engine failure is a missing answer, never a model answer, and a run read while it goes on
//! has no terminal state yet. Left-out runs are counted
//! ([`SpecCounts::incomplete_dialogues`], [`SpecCounts::engine_error_dialogues`]) and enter
//! no endpoint, contrast, retention or test; their requests still count in calls, tokens and
//! format validity.
//!
//! Counts ([`SpecCounts`], Table C5): calls = distinct `request_id`; input tokens = Σ
//! `prompt_tokens` over rows (Joint records them on a turn's first field only); physical
//! responses = distinct `prompt_key`. A logical request is *missing* when one of its rows
//! has [`FieldFailure::EngineError`] (the engine failed; never a model answer), *invalid*
//! when otherwise some row has a failure, else *valid*; valid format = valid / (valid +
//! invalid), missing requests left out of the denominator and counted separately.
//!
//! Recoveries ([`Recoveries`], Table C3): a failed trajectory has a wrong turn; it shows *any
//! recovery* when a turn after its first wrong turn is correct, and a *final recovery* when
//! its final turn is correct.
//!
//! # State retention (C.2, Table C5)
//!
//! "State retention is dialogue-weighted local/Joint jointly-correct mass divided by
//! Joint-correct mass, distinct from character SCR. Conditional denominators are redrawn."
//! For a local arm (Independent, Serial) against Joint of the same mode and contract, on the
//! dialogues both ran, turns paired by turn number: with n_d paired turns, a_d turns correct
//! in both and b_d turns Joint-correct, retention = Σ_d a_d/n_d ÷ Σ_d b_d/n_d, with the raw
//! turn counts Σa_d / Σb_d ("Retained turns 423/429"). Every bootstrap draw recomputes both
//! sums on its resample; a draw with no Joint-correct mass is dropped and counted.
//!
//! # Bootstrap (dialogues and response components)
//!
//! "Identical wire inputs share 124 rows. Six rows connect separate dialogues into 94
//! response-sharing components. Bootstrap either resamples complete dialogues or these
//! components, retaining the scores for receiving dialogues" (C.1). Every [`Stat`] carries
//! both percentile intervals:
//! - *dialogue*: n dialogues drawn with replacement;
//! - *component*: the model's test rows are joined by union–find on `prompt_key` over base
//!   dialogue ids (a perturbed copy belongs to its base: "Comparisons preserve dialogue
//!   clusters and shared responses across arms", C.2), across every spec of the model; the
//!   components holding the statistic's dialogues are drawn with replacement, each drawn
//!   component contributing every one of its dialogues with its own scores.
//!
//! A statistic is a ratio of dialogue sums, Σ w_d x_d ÷ Σ w_d y_d (y_d = 1 for endpoints and
//! contrasts), recomputed per draw with the drawn multiplicities w_d. Draws come from the
//! crate's seeded engine, [`crate::bootstrap::bootstrap_per_item`], with one stratum whose
//! codes are the units (one item each, in id order): each draw picks n unit indices uniformly
//! with replacement (Lemire's multiply-and-reject), draw `d` from the generator
//! `ChaCha8Rng::seed_from_u64(seed)` on stream `d`. Results do not depend on threads, and two
//! groups with the same number of units see the same resamples. (The per-item path costs n
//! 32-bit draws per resample; the multinomial path would cost n binomials for n one-item
//! codes.)
//! Intervals are type-7 percentiles. The paper gives no dialogue draw count; the default is
//! the crate's [`DEFAULT_DRAWS`] (9,999). The seed defaults to [`DIALOGUE_SEED`] = 20261008
//! (`choice2seq dialogue` passes the run's `[stats]` seed instead),
//! the seed the paper states for its 99,999-draw bootstrap next to these tables ("boot-
//! strap draws with seed 20261008", D.1); C gives no dialogue seed of its own. "Final-state
//! and trajectory intervals are descriptive" (C.2): they carry no test.
//!
//! # Paired contrasts
//!
//! Over the dialogues both specs ran (paired by `dialogue_id`), the per-dialogue difference
//! compared − reference of each endpoint, averaged across dialogues, with paired-dialogue and
//! response-component intervals (each draw resamples dialogues or components once and takes
//! both sides from that resample): Oracle − Rollout per arm and contract (Table C2: "Oracle
//! minus Rollout (percentage points), with paired-dialogue and response-component 95%
//! intervals"), and Serial − Joint, Independent − Joint per mode and contract (Figure 9).
//! Values are fractions in [0, 1] (differences in [−1, 1]) as everywhere in this crate;
//! printing multiplies by 100 (percent, percentage points).
//!
//! # Sign tests
//!
//! "Two Serial-minus-Joint sign tests share Holm correction (99,999 draws, plus-one
//! correction)" (C.2). Reading: a paired sign-flip randomization test of the per-dialogue
//! differences of mean-turn EM (the primary endpoint), statistic T = mean difference: each
//! draw flips the sign of every difference independently with probability ½; a draw is
//! extreme when |T*| ≥ |T_obs| − ε (ε = [`TIE_TOLERANCE`] · (1 + Σ|d_i|/n), for float ties);
//! p = (1 + #extreme)/(1 + B) with B = 99,999 by default. One test per model and contract for
//! each [`SignTestSpec`] of the options (default: Serial − Joint under HistoryRecompute, the
//! matched construction of C.2 with "the same visible history and schema"); Holm corrects
//! across all tests generated, over every model (two models → two tests, as in the paper).
//! The exact sign-flip p-value ([`crate::contrasts::sign_flip_p`]) is reported beside it.
//!
//! # Layout
//!
//! This file holds the record and count types, the dialogue scoring, the response
//! components and the sign-flip test; `bootstrap.rs` holds the bootstrap of ratios of
//! dialogue sums, `summary.rs` assembles [`summarize_dialogues`] from both.

use std::collections::{BTreeMap, BTreeSet};

use c2s_records::dialogue::{
    DialogueArm, DialogueSpec, DialogueSplit, FieldFailure, FieldTurn, Perturbation, PriorMode,
};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::bootstrap::DEFAULT_DRAWS;
use crate::error::StatsError;
use crate::intervals::{Interval, DEFAULT_LEVEL};

mod bootstrap;
mod summary;
#[cfg(test)]
mod tests;

pub use summary::summarize_dialogues;

/// Default bootstrap seed of the dialogue statistics (see the module docs).
pub const DIALOGUE_SEED: u64 = 20_261_008;
/// Draws of the sign tests: "99,999 draws, plus-one correction" (C.2).
pub const SIGN_TEST_DRAWS: u32 = 99_999;
/// Relative tolerance for ties of the sign-flip statistic.
pub const TIE_TOLERANCE: f64 = 1e-9;

/// One family member of the sign tests: `compared − reference` arms under `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SignTestSpec {
    /// The arm on the minuend side of the per-dialogue difference.
    pub compared: DialogueArm,
    /// The arm on the subtrahend side (Joint in the paper's test).
    pub reference: DialogueArm,
    /// The prior-state mode both arms run under.
    pub mode: PriorMode,
}

impl SignTestSpec {
    /// The paper's test: Serial − Joint under HistoryRecompute.
    pub const SERIAL_MINUS_JOINT: SignTestSpec = SignTestSpec {
        compared: DialogueArm::Serial,
        reference: DialogueArm::Joint,
        mode: PriorMode::HistoryRecompute,
    };
}

/// Settings of [`summarize_dialogues`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DialogueStatsOptions {
    /// Bootstrap draws (default [`DEFAULT_DRAWS`] = 9,999).
    pub draws: u32,
    /// Seed of the bootstraps and the sign tests (default [`DIALOGUE_SEED`]).
    pub seed: u64,
    /// Two-sided interval level (default 0.95).
    pub level: f64,
    /// Bootstrap threads; 0 = one per core. Never changes a result.
    pub threads: usize,
    /// Sign-flip draws (default [`SIGN_TEST_DRAWS`] = 99,999).
    pub sign_draws: u32,
    /// The tests of the Holm family, each run per model and contract.
    pub sign_tests: Vec<SignTestSpec>,
}

impl Default for DialogueStatsOptions {
    fn default() -> Self {
        DialogueStatsOptions {
            draws: DEFAULT_DRAWS,
            seed: DIALOGUE_SEED,
            level: DEFAULT_LEVEL,
            threads: 0,
            sign_draws: SIGN_TEST_DRAWS,
            sign_tests: vec![SignTestSpec::SERIAL_MINUS_JOINT],
        }
    }
}

/// One user turn of a dialogue run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnScore {
    /// One-based user turn.
    pub turn: u32,
    /// Field rows recorded for the turn.
    pub fields: u32,
    /// Of those, the fields answered correctly.
    pub correct_fields: u32,
    /// Every field of the turn is correct.
    pub correct: bool,
}

/// One dialogue run of one model and spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DialogueScore {
    /// The model that produced the run.
    pub model: String,
    /// The run's arm × prior-state mode × contract.
    pub spec: DialogueSpec,
    /// Id of the dialogue (a perturbed copy's own id).
    pub dialogue_id: String,
    /// Id of the unperturbed dialogue (equal to `dialogue_id` unless perturbed).
    pub base_dialogue_id: String,
    /// How the dialogue differs from its base; `None` unless perturbed.
    pub perturbation: Option<Perturbation>,
    /// Development or test split of the dialogue.
    pub split: DialogueSplit,
    /// Name of the dialogue's service (schema).
    pub service: String,
    /// User turns the rows declare (`FieldTurn::turns`).
    pub declared_turns: u32,
    /// Observed turns, ascending.
    pub turns: Vec<TurnScore>,
    /// Rows whose request failed in the engine ([`FieldFailure::EngineError`]).
    #[serde(default)]
    pub engine_errors: u32,
}

impl DialogueScore {
    /// Test split and unperturbed.
    pub fn is_primary(&self) -> bool {
        self.split == DialogueSplit::Test && self.perturbation.is_none()
    }

    /// The observed turns are exactly 1..=declared_turns, each with the same fields.
    pub fn is_complete(&self) -> bool {
        self.turns.len() == self.declared_turns as usize
            && self
                .turns
                .iter()
                .enumerate()
                .all(|(i, t)| t.turn as usize == i + 1 && t.fields == self.turns[0].fields)
    }

    /// Complete and without engine failures: the runs every endpoint uses.
    pub fn is_scored(&self) -> bool {
        self.is_complete() && self.engine_errors == 0
    }

    /// Number of observed turns whose fields are all correct.
    pub fn correct_turns(&self) -> u32 {
        self.turns.iter().filter(|t| t.correct).count() as u32
    }

    /// Correct turns / turns.
    pub fn mean_turn(&self) -> f64 {
        f64::from(self.correct_turns()) / self.turns.len().max(1) as f64
    }

    /// The last observed turn is correct.
    pub fn final_correct(&self) -> bool {
        self.turns.last().is_some_and(|t| t.correct)
    }

    /// Every turn is correct.
    pub fn trajectory_correct(&self) -> bool {
        !self.turns.is_empty() && self.turns.iter().all(|t| t.correct)
    }

    /// Correct field turns / field turns.
    pub fn mean_field(&self) -> f64 {
        let (c, n) = self.turns.iter().fold((0u64, 0u64), |(c, n), t| {
            (c + u64::from(t.correct_fields), n + u64::from(t.fields))
        });
        c as f64 / n.max(1) as f64
    }

    /// Number of field turns: fields summed over the observed turns (the denominator of mean field
    /// EM).
    pub fn field_turns(&self) -> u64 {
        self.turns.iter().map(|t| u64::from(t.fields)).sum()
    }

    /// Some turn is wrong.
    pub fn failed(&self) -> bool {
        self.turns.iter().any(|t| !t.correct)
    }

    /// A turn after the first wrong turn is correct.
    pub fn any_recovery(&self) -> bool {
        match self.turns.iter().position(|t| !t.correct) {
            Some(first) => self.turns[first + 1..].iter().any(|t| t.correct),
            None => false,
        }
    }

    /// The trajectory failed but its final turn is correct.
    pub fn final_recovery(&self) -> bool {
        self.failed() && self.final_correct()
    }
}

/// Scores every dialogue run of `rows`, sorted by (model, spec, dialogue id). A repeated
/// (model, spec, dialogue, turn, field) is an error.
pub fn score_dialogues(rows: &[FieldTurn]) -> Result<Vec<DialogueScore>, StatsError> {
    type Key<'a> = (&'a str, DialogueSpec, &'a str);
    let mut runs: BTreeMap<Key<'_>, (&FieldTurn, BTreeMap<u32, TurnScore>, u32)> = BTreeMap::new();
    let mut seen: BTreeSet<(Key<'_>, u32, &str)> = BTreeSet::new();
    for r in rows {
        let key = (r.model.as_str(), r.spec, r.dialogue_id.as_str());
        if !seen.insert((key, r.turn, r.field.as_str())) {
            return Err(StatsError::DuplicateItem {
                group: format!("{} {}", r.model, r.spec.label()),
                item_id: format!("{} turn {} field {}", r.dialogue_id, r.turn, r.field),
            });
        }
        let (_, turns, errors) = runs.entry(key).or_insert_with(|| (r, BTreeMap::new(), 0));
        *errors += u32::from(r.failure == Some(FieldFailure::EngineError));
        let t = turns.entry(r.turn).or_insert(TurnScore {
            turn: r.turn,
            fields: 0,
            correct_fields: 0,
            correct: true,
        });
        t.fields += 1;
        t.correct_fields += u32::from(r.correct);
        t.correct &= r.correct;
    }
    Ok(runs
        .into_iter()
        .map(
            |((model, spec, id), (first, turns, errors))| DialogueScore {
                model: model.to_string(),
                spec,
                dialogue_id: id.to_string(),
                base_dialogue_id: first.base_dialogue_id.clone(),
                perturbation: first.perturbation,
                split: first.split,
                service: first.service.clone(),
                declared_turns: first.turns,
                turns: turns.into_values().collect(),
                engine_errors: errors,
            },
        )
        .collect())
}

/// Response-sharing components of one model's rows: base dialogues joined when their rows
/// share a `prompt_key`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseComponents {
    /// Base dialogue id → component index; components are numbered in the order of their
    /// smallest base dialogue id.
    pub component_of: BTreeMap<String, usize>,
    /// Number of components (the resampling units of the component bootstrap).
    pub components: usize,
    /// Logical requests whose `prompt_key` is also used by a request of another base
    /// dialogue, not counting the requests of the first (smallest id) base dialogue using
    /// it: the "rows \[that\] connect separate dialogues" (C.1), the receiving side.
    pub receiving_requests: u64,
}

/// Union–find over the base dialogue ids of `rows` (pass one model's rows), joining two base
/// dialogues when any of their rows share a `prompt_key`.
pub fn response_components<'a, I>(rows: I) -> ResponseComponents
where
    I: IntoIterator<Item = &'a FieldTurn>,
{
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_key: BTreeMap<&str, BTreeMap<&str, BTreeSet<&str>>> = BTreeMap::new();
    for r in rows {
        index.insert(r.base_dialogue_id.as_str(), 0);
        by_key
            .entry(r.prompt_key.as_str())
            .or_default()
            .entry(r.base_dialogue_id.as_str())
            .or_default()
            .insert(r.request_id.as_str());
    }
    // Nodes in id order.
    for (i, v) in index.values_mut().enumerate() {
        *v = i;
    }
    let mut parent: Vec<usize> = (0..index.len()).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut receiving = 0u64;
    for bases in by_key.values() {
        let mut it = bases.iter();
        let Some((first, _)) = it.next() else {
            continue;
        };
        let a = index[first];
        for (base, requests) in it {
            receiving += requests.len() as u64;
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, index[base]));
            if ra != rb {
                // The smaller root stays the root: components keep their smallest id.
                let (lo, hi) = (ra.min(rb), ra.max(rb));
                parent[hi] = lo;
            }
        }
    }
    let mut numbering: BTreeMap<usize, usize> = BTreeMap::new();
    let mut component_of = BTreeMap::new();
    for (id, &i) in &index {
        let root = find(&mut parent, i);
        let next = numbering.len();
        let c = *numbering.entry(root).or_insert(next);
        component_of.insert(id.to_string(), c);
    }
    ResponseComponents {
        components: numbering.len(),
        component_of,
        receiving_requests: receiving,
    }
}

/// A statistic with its dialogue and response-component bootstrap percentile intervals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// On the observed dialogues; `None` when undefined (no dialogue, no denominator).
    pub value: Option<f64>,
    /// Percentile interval from resampling dialogues; `None` when every draw was dropped or there
    /// is no dialogue.
    pub dialogue_ci: Option<Interval>,
    /// Percentile interval from resampling response-sharing components; `None` like `dialogue_ci`.
    pub component_ci: Option<Interval>,
    /// Draws dropped because the statistic was undefined in them.
    pub dialogue_dropped: u32,
    /// Component-bootstrap draws dropped because the statistic was undefined in them.
    pub component_dropped: u32,
}

/// Request counts of one model and spec over its primary population (Table C5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecCounts {
    /// Scored dialogue runs (complete, without engine failure) of the primary population.
    pub dialogues: u64,
    /// Observed user turns summed over those runs.
    pub user_turns: u64,
    /// Field turns (fields × turns) summed over those runs.
    pub field_turns: u64,
    /// Dialogues whose observed turns are not exactly 1..=declared turns.
    pub incomplete_dialogues: u64,
    /// Runs left out because a request failed in the engine (asked again on resume).
    #[serde(default)]
    pub engine_error_dialogues: u64,
    /// Logical requests: distinct `request_id`.
    pub calls: u64,
    /// Σ `prompt_tokens`.
    pub input_tokens: u64,
    /// Distinct `prompt_key`.
    pub physical_responses: u64,
    /// Logical requests with no failed row: valid format.
    pub valid_requests: u64,
    /// Logical requests with a failed row that is not an engine error (invalid JSON, extra keys,
    /// illegal values, truncation).
    pub invalid_requests: u64,
    /// Requests with an engine error: neither valid nor invalid.
    pub missing_requests: u64,
    /// valid / (valid + invalid); `None` without such a request.
    pub valid_format: Option<f64>,
    /// Requests with at least one row of each failure kind (engine errors included).
    pub failures: BTreeMap<String, u64>,
}

/// Table C3's counts over the primary dialogues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recoveries {
    /// Scored primary dialogues counted.
    pub dialogues: u64,
    /// Trajectories with a wrong turn.
    pub failed: u64,
    /// Failed trajectories with a correct turn after their first wrong turn.
    pub any_recovery: u64,
    /// Failed trajectories whose final turn is correct.
    pub final_recovery: u64,
}

/// The endpoints of one model and spec (Tables C1, C3, C4, C5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecSummary {
    /// The model that produced the runs.
    pub model: String,
    /// The run's arm × prior-state mode × contract.
    pub spec: DialogueSpec,
    /// `spec.label()`.
    pub label: String,
    /// Request, token and format counts (Table C5).
    pub counts: SpecCounts,
    /// Response-sharing components holding the spec's dialogues.
    pub components: u64,
    /// Mean-turn EM (correct turns / turns within dialogue, then across dialogues), the primary
    /// endpoint.
    pub mean_turn: Stat,
    /// Final EM: the share of dialogues whose last turn is correct (descriptive).
    pub final_state: Stat,
    /// Trajectory EM: the share of dialogues with every turn correct (descriptive).
    pub trajectory: Stat,
    /// Mean field EM: correct field turns / field turns within dialogue, then across dialogues.
    pub mean_field: Stat,
    /// Failed trajectories and their recoveries (Table C3).
    pub recoveries: Recoveries,
}

/// One endpoint of a paired contrast: side means and the difference.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedEndpoint {
    /// The compared spec's endpoint averaged across the paired dialogues; `None` with no pair.
    pub compared: Option<f64>,
    /// The reference spec's endpoint averaged across the paired dialogues; `None` with no pair.
    pub reference: Option<f64>,
    /// Mean per-dialogue difference compared − reference.
    pub difference: Stat,
}

/// Which contrast.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContrastKind {
    /// Per arm and contract (Table C2, Figure 8).
    OracleMinusRollout,
    /// Per mode and contract (Figure 9).
    SerialMinusJoint,
    /// Per mode and contract (Figure 9).
    IndependentMinusJoint,
}

impl ContrastKind {
    /// Kebab-case name of the contrast (`oracle-rollout`, `serial-joint`, `independent-joint`).
    pub fn as_str(self) -> &'static str {
        match self {
            ContrastKind::OracleMinusRollout => "oracle-rollout",
            ContrastKind::SerialMinusJoint => "serial-joint",
            ContrastKind::IndependentMinusJoint => "independent-joint",
        }
    }
}

/// A paired contrast over the dialogues both specs ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DialogueContrast {
    /// The model that produced both runs.
    pub model: String,
    /// Which of the three contrasts this is.
    pub kind: ContrastKind,
    /// The spec on the minuend side (Oracle, Serial or Independent).
    pub compared: DialogueSpec,
    /// The spec on the subtrahend side (Rollout or Joint).
    pub reference: DialogueSpec,
    /// Dialogues in both specs.
    pub dialogues: u64,
    /// Dialogues in only one of them (left out).
    pub unpaired_dialogues: u64,
    /// Response-sharing components holding the paired dialogues.
    pub components: u64,
    /// Paired difference of trajectory EM.
    pub trajectory: PairedEndpoint,
    /// Paired difference of mean-turn EM.
    pub mean_turn: PairedEndpoint,
    /// Paired difference of final EM.
    pub final_state: PairedEndpoint,
    /// Paired difference of mean field EM.
    pub mean_field: PairedEndpoint,
}

/// State retention of a local arm against Joint (Table C5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetentionRow {
    /// The model that produced both runs.
    pub model: String,
    /// The local arm's spec (Independent or Serial).
    pub local: DialogueSpec,
    /// The Joint spec of the same mode and contract.
    pub joint: DialogueSpec,
    /// Dialogues both specs ran (paired by `dialogue_id`).
    pub dialogues: u64,
    /// Response-sharing components holding those dialogues.
    pub components: u64,
    /// Σ a_d: turns correct in both arms.
    pub retained_turns: u64,
    /// Σ b_d: Joint-correct turns.
    pub joint_correct_turns: u64,
    /// Σ a_d/n_d ÷ Σ b_d/n_d, denominators redrawn in every draw.
    pub retention: Stat,
}

/// A sign-flip randomization test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SignFlip {
    /// Differences tested.
    pub n: u64,
    /// Nonzero differences.
    pub nonzero: u64,
    /// Mean difference (the statistic); `None` for no difference.
    pub mean_difference: Option<f64>,
    /// Randomization draws B (the p-value's plus-one denominator is 1 + B).
    pub draws: u32,
    /// Draws with |T*| ≥ |T_obs| − ε.
    pub extreme: u64,
    /// (1 + extreme) / (1 + draws).
    pub p_value: f64,
}

/// One sign test of the family, with its Holm-adjusted p-value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignTestRow {
    /// The model tested.
    pub model: String,
    /// The spec on the minuend side of the differences.
    pub compared: DialogueSpec,
    /// The spec on the subtrahend side.
    pub reference: DialogueSpec,
    /// Paired dialogues (the differences tested are their mean-turn EM differences).
    pub dialogues: u64,
    /// The randomization test of the per-dialogue mean-turn EM differences.
    pub test: SignFlip,
    /// The exact two-sided sign-flip p-value, where the enumeration is small enough.
    pub p_exact: Option<f64>,
    /// Holm over every row of [`DialogueSummary::sign_tests`].
    pub p_holm: f64,
    /// Number of tests in the Holm family (every test generated, over every model).
    pub family_size: u64,
}

/// One perturbed dialogue run against its base dialogue under the same model and spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerturbationRow {
    /// The model that produced both runs.
    pub model: String,
    /// The run's arm × prior-state mode × contract.
    pub spec: DialogueSpec,
    /// Id of the perturbed copy.
    pub dialogue_id: String,
    /// Id of the unperturbed dialogue it is compared with.
    pub base_dialogue_id: String,
    /// How the copy differs from its base (paraphrase or value permutation).
    pub kind: Perturbation,
    /// Turns observed in both (paired by turn number).
    pub turns: u64,
    /// Paired turns whose correctness equals the base's.
    pub agreeing_turns: u64,
    /// agreeing_turns / turns; `None` with no paired turn.
    pub agreement: Option<f64>,
    /// Mean-turn EM of the base dialogue.
    pub base_mean_turn: f64,
    /// Mean-turn EM of the perturbed copy.
    pub perturbed_mean_turn: f64,
}

/// Perturbed runs per model, spec and kind; means weigh dialogues equally.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerturbationSummary {
    /// The model that produced the runs.
    pub model: String,
    /// The run's arm × prior-state mode × contract.
    pub spec: DialogueSpec,
    /// The perturbation kind summarized.
    pub kind: Perturbation,
    /// Scored perturbed copies whose base dialogue is scored too.
    pub dialogues: u64,
    /// Paired turns summed over the copies.
    pub turns: u64,
    /// Paired turns whose correctness equals the base's, summed over the copies.
    pub agreeing_turns: u64,
    /// Mean of the per-dialogue agreement.
    pub agreement: Option<f64>,
    /// Mean over copies of the base dialogues' mean-turn EM (0 with no copy).
    pub base_mean_turn: f64,
    /// Mean over copies of the perturbed copies' mean-turn EM (0 with no copy).
    pub perturbed_mean_turn: f64,
}

/// Request totals of one model over its test rows (every spec, perturbations included; C.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelResponses {
    /// The model whose requests are counted.
    pub model: String,
    /// Distinct `request_id`.
    pub logical_requests: u64,
    /// Distinct `prompt_key`.
    pub physical_responses: u64,
    /// Requests sent (distinct `(request_id, prompt_key)`: a scored Joint request sends one
    /// per field) minus distinct `prompt_key`: requests answered by a response another
    /// request also has ("identical wire inputs share 124 rows").
    pub shared_requests: u64,
    /// See [`ResponseComponents::receiving_requests`].
    pub receiving_requests: u64,
    /// Unperturbed test dialogues of the model (over every spec).
    pub primary_dialogues: u64,
    /// Response-sharing components of those dialogues.
    pub components: u64,
    /// Perturbed test dialogue copies.
    pub perturbed_dialogues: u64,
}

/// Everything of Appendix C's tables, deterministic for the options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DialogueSummary {
    /// The options the summary was computed with.
    pub options: DialogueStatsOptions,
    /// Development-split rows, counted and otherwise ignored.
    pub excluded_dev_rows: u64,
    /// Request totals per model (C.1).
    pub models: Vec<ModelResponses>,
    /// Sorted by model, then spec.
    pub specs: Vec<SpecSummary>,
    /// Paired contrasts (Oracle − Rollout, Serial − Joint, Independent − Joint) per model.
    pub contrasts: Vec<DialogueContrast>,
    /// State retention of each local arm against Joint, sorted by model and local spec.
    pub retention: Vec<RetentionRow>,
    /// The Holm-corrected sign tests, one per model, contract and sign-test spec.
    pub sign_tests: Vec<SignTestRow>,
    /// One row per perturbed copy compared with its base.
    pub perturbations: Vec<PerturbationRow>,
    /// Perturbed runs aggregated per model, spec and kind.
    pub perturbation_summary: Vec<PerturbationSummary>,
    /// Unperturbed test runs left out of every endpoint, per model and spec (also those of a
    /// spec with no scored run at all).
    pub left_out: Vec<LeftOutRuns>,
}

/// Runs of one model and spec that no endpoint uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftOutRuns {
    /// The model that produced the runs.
    pub model: String,
    /// The run's arm × prior-state mode × contract.
    pub spec: DialogueSpec,
    /// Not every turn (and field) is recorded: an interrupted or running run.
    pub incomplete: u64,
    /// A request failed in the engine.
    pub engine_errors: u64,
}

/// A paired sign-flip randomization test of `differences` (two-sided, statistic = mean):
/// `draws` draws from `ChaCha8Rng::seed_from_u64(seed)`, each flipping every nonzero
/// difference's sign by one bit of `next_u64` (64 differences per word, in order); a draw is
/// extreme when |T*| ≥ |T_obs| − ε with ε = [`TIE_TOLERANCE`]·(1 + Σ|d_i|/n); p = (1 +
/// extreme)/(1 + draws). All differences zero gives p = 1.
pub fn sign_flip_test(differences: &[f64], draws: u32, seed: u64) -> Result<SignFlip, StatsError> {
    if draws == 0 {
        return Err(StatsError::ZeroDraws);
    }
    if let Some(&bad) = differences.iter().find(|d| !d.is_finite()) {
        return Err(StatsError::NonFiniteScore(bad));
    }
    let n = differences.len();
    let d: Vec<f64> = differences.iter().copied().filter(|&x| x != 0.0).collect();
    let scale = n.max(1) as f64;
    let observed = d.iter().sum::<f64>().abs() / scale;
    let eps = TIE_TOLERANCE * (1.0 + d.iter().map(|x| x.abs()).sum::<f64>() / scale);
    let threshold = observed - eps;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut extreme = 0u64;
    for _ in 0..draws {
        let mut t = 0.0;
        let mut bits = 0u64;
        for (i, &x) in d.iter().enumerate() {
            if i % 64 == 0 {
                bits = rng.next_u64();
            }
            t += if (bits >> (i % 64)) & 1 == 1 { x } else { -x };
        }
        if (t / scale).abs() >= threshold {
            extreme += 1;
        }
    }
    Ok(SignFlip {
        n: n as u64,
        nonzero: d.len() as u64,
        mean_difference: (n > 0).then(|| differences.iter().sum::<f64>() / scale),
        draws,
        extreme,
        p_value: (1 + extreme) as f64 / (1.0 + f64::from(draws)),
    })
}
