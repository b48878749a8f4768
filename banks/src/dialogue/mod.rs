//! A seeded generator of synthetic schema-guided dialogues: the stand-in for the
//! Schema-Guided Dialogue dataset (SGD; Rastogi et al., 2020, CC BY-SA 4.0) of the paper's
//! dialogue evaluation (Appendix C, E.4). No SGD text is used: the services, schemas,
//! templates and dialogues are written here and drawn from a seed, and the bank is frozen as
//! `data/banks/dialogue-synthetic.jsonl` with `data/banks/dialogue-provenance.json`.
//!
//! What it follows (C.1): "The 96 test prefixes contain four, six or eight user turns (32
//! each), cover ten services (at most twelve dialogues per service), and have one to three
//! categorical slots plus active intent. A service persists throughout each prefix; selection
//! requires state changes and a nonempty categorical value. Twelve development prefixes are
//! disjoint by split, identifier and content." "Initial intent is NONE, absent slots UNSET and
//! explicit indifference DONTCARE." C.2: "Field order uses seed 20261009." "Perturbation
//! schedule. Twelve test dialogues receive one task-preserving paraphrase; six of these also
//! receive one permutation of displayed semantic values."
//!
//! * **Services.** Ten services modelled on SGD domains ([`service_catalogue`]): two or three
//!   intents and three or four categorical slots of two to five values each, every intent and
//!   value with a stable id (`intent:FindRestaurants`, `price_range:very_expensive`) and a
//!   one-sentence description. A dialogue keeps one service throughout and one to three of its
//!   slots (in schema order, drawn from the seed); its `service` holds only those slots, so its
//!   fields are `active_intent` plus those slots. The slot counts are fixed per length so that
//!   the test bank has C.2's "96 dialogues, 576 user turns and 1,716 field turns": 64, 62 and
//!   64 slots over the 32 dialogues of four, six and eight turns.
//! * **Dynamics.** Each user turn is one act, drawn by weight among those the current state
//!   allows, after a SYSTEM utterance (empty before the first user turn); its gold state
//!   follows E.4's instruction, "Preserve earlier user-provided slot values unless the user
//!   changes or cancels them. Ignore SYSTEM suggestions unless accepted by the user. UNSET
//!   means no value is held; DONTCARE means the user explicitly has no preference. Select the
//!   current active intent, or NONE if no intent is active." (`gold_after`): the
//!   user greets (no change), states an intent, informs a slot value (possibly answering a
//!   SYSTEM request), changes a held value, cancels a value (→ UNSET), says it has no
//!   preference (→ DONTCARE), accepts a SYSTEM suggestion (→ the suggested value), rejects or
//!   ignores one (→ unchanged; ignoring is deferring or acting on another field), confirms a
//!   SYSTEM confirmation or chats (no change), switches to another intent of the service
//!   (slots kept), or makes two changes on two fields in one turn. The initial state is intent
//!   NONE and every slot UNSET; while no intent is active the user states one. A draw is kept
//!   only if the state changes after the first turn and some turn holds a slot value other
//!   than UNSET and DONTCARE ("selection requires state changes and a nonempty categorical
//!   value"), and if its user-utterance sequence is new to the bank (so development prefixes
//!   are disjoint from test ones by content); otherwise it is redrawn from the same stream.
//! * **Texts.** Natural English from templates with two to four paraphrase alternatives per
//!   act; values appear verbatim as the schema spells them. `origin` records the generator
//!   version, the seed, the draw and, per turn, the act and template ids (`inform#2`).
//! * **Field order.** Every dialogue's `field_order` is its fields (`active_intent`, then its
//!   slots in schema order) shuffled by ONE `ChaCha8Rng` seeded with [`FIELD_ORDER_SEED`]
//!   (20261009), one shuffle per dialogue in bank order — the 96 test dialogues, then the 12
//!   development ones — so it is fixed before any outcome ("The field order is fixed before
//!   outcomes", E.4). A perturbed copy keeps its base's order and draws none.
//! * **Perturbations.** Four test dialogues per length (12) drawn from the seed receive a
//!   `Paraphrase` copy: every user utterance is re-rendered with another alternative of each
//!   of its templates (system utterances, schema and gold states unchanged). Two of those four
//!   per length (6) also receive a `ValuePermutation` copy: the original texts, with the
//!   intents and each slot's values shown in a seeded order that differs from the original
//!   for every field (gold states unchanged).
//! * **Bank order** (the JSONL's lines): the 96 test dialogues (by length 4, 6, 8, 32 each),
//!   then the perturbed copies (by base in bank order, the paraphrase before the value
//!   permutation), then the 12 development dialogues (4 per length). Ids:
//!   `sgdsyn:<split>:<service>:<nnn>` numbered per split and service in bank order, a copy
//!   adding `:paraphrase` or `:value_permutation`.
//!
//! The seed is [`DEFAULT_DIALOGUE_SEED`] (the paper gives none for the bank: SGD is a fixed
//! dataset); the random streams of the seed are fixed per purpose (layout, each dialogue,
//! perturbation choice, each paraphrase and permutation), so changing one dialogue's draws
//! changes no other dialogue.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use c2s_records::{
    Dialogue, DialogueError, DialogueService, DialogueSplit, DialogueTurn, Perturbation,
    FIELD_ORDER_SEED,
};

mod acts;
mod catalogue;
mod plan;
mod render;
mod schemas;
mod templates;

pub use schemas::service_catalogue;

use acts::Ctx;
use catalogue::{SlotSpec, SERVICES};
use plan::{plan_dialogue, selection_rules_hold, PlannedTurn};
use render::{compose, Piece};
use schemas::service_schema;

/// Version of the dialogue generator; bump when any output byte changes.
pub const DIALOGUE_GENERATOR_VERSION: &str = "choice2seq-dialogue-synthetic/1";
/// The bank seed (the paper states none for the dialogue bank).
pub const DEFAULT_DIALOGUE_SEED: u64 = 20_261_201;
/// The bank file under the bank directory.
pub const DIALOGUE_FILE: &str = "dialogue-synthetic.jsonl";
/// Its provenance file.
pub const DIALOGUE_PROVENANCE: &str = "dialogue-provenance.json";
/// The id prefix of every dialogue.
pub const DIALOGUE_ID_PREFIX: &str = "sgdsyn";
/// C.1: "four, six or eight user turns".
pub const DIALOGUE_LENGTHS: [usize; 3] = [4, 6, 8];
/// C.1: "(32 each)".
pub const TEST_PER_LENGTH: usize = 32;
/// C.1: "Twelve development prefixes", four per length here.
pub const DEV_PER_LENGTH: usize = 4;
/// C.1: "at most twelve dialogues per service".
pub const MAX_PER_SERVICE: usize = 12;
/// C.2: "Twelve test dialogues receive one task-preserving paraphrase".
pub const PARAPHRASED: usize = 12;
/// C.2: "six of these also receive one permutation of displayed semantic values".
pub const PERMUTED: usize = 6;
/// Slots per test dialogue, per length: how many of the 32 dialogues have 1, 2, 3 slots.
/// Totals 64, 62, 64 slots, so 4·64 + 6·62 + 8·64 = 1,140 slot turns plus 576 intent turns
/// make C.2's 1,716 field turns.
pub const TEST_SLOT_COUNTS: [[usize; 3]; 3] = [[8, 16, 8], [10, 14, 8], [8, 16, 8]];
/// Slots of the four development dialogues of each length.
pub const DEV_SLOT_COUNTS: [usize; 4] = [1, 2, 2, 3];

/// What the provenance says the bank is.
pub const DIALOGUE_STATEMENT: &str = "synthetic stand-in for the Schema-Guided Dialogue dataset (Rastogi et al., 2020, CC BY-SA 4.0), not SGD: no SGD text is used. Services, schemas, templates and dialogues are written and drawn by banks/src/dialogue.rs; the service and intent names are modelled on SGD's domains.";
/// What was found when looking for a shipped copy of SGD (no network at run time or in CI).
pub const DIALOGUE_SOURCE_CHECK: &str = "PyPI was checked for a package shipping the SGD data itself: sgd-dstc8-data-model 0.2.0 (wheel: dataclasses for the DSTC8 format, no data), convlab 3.0.1 (sdist: SGD model configs and descriptions only; its unified datasets are downloaded at run time), no distribution named dstc8 or schema-guided-dialogue, and nothing else in the PyPI name list matching dstc/schema-guided dialogue; no reachable package ships the dialogues, so this bank is generated.";

// Random streams of the bank seed.
const STREAM_LAYOUT: u64 = 1;
const STREAM_PERTURBATION_CHOICE: u64 = 2;
const STREAM_TEST: u64 = 100;
const STREAM_DEV: u64 = 1_000;
const STREAM_PARAPHRASE: u64 = 3_000;
const STREAM_PERMUTATION: u64 = 4_000;
/// Draws of one dialogue before giving up (the rules hold for almost every draw).
const MAX_ATTEMPTS: usize = 1_000;

/// Why the bank could not be built, written or read.
#[derive(Debug, thiserror::Error)]
pub enum DialogueBankError {
    /// A bank file or directory could not be read, written or created.
    #[error("{path}: {message}")]
    Io {
        /// The file or directory, as displayed.
        path: String,
        /// The underlying I/O error.
        message: String,
    },
    /// A line of a bank file is not a dialogue record.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The bank file, as displayed.
        path: String,
        /// The 1-based line.
        line: usize,
        /// Why the line does not parse.
        message: String,
    },
    /// A dialogue, built or read, fails [`Dialogue::validate`].
    #[error(transparent)]
    Invalid(#[from] DialogueError),
    /// A dialogue could not be drawn: no draw within the attempt limit met the selection rules.
    #[error("{0}")]
    Build(String),
}
// ---------------------------------------------------------------------------------------------
// The bank
// ---------------------------------------------------------------------------------------------

/// One perturbed copy of the provenance's list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerturbationRecord {
    /// Id of the copy: its base's id plus `:paraphrase` or `:value_permutation`.
    pub dialogue_id: String,
    /// What was changed in the copy.
    pub perturbation: Perturbation,
    /// Id of the test dialogue the copy was made from.
    pub perturbation_of: String,
}

/// Provenance of the dialogue bank. Holds no timestamps, so rebuilding is byte-identical.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DialogueProvenance {
    /// Which code wrote the bank: crate module and source path.
    pub generator: String,
    /// [`DIALOGUE_GENERATOR_VERSION`] of the generator that wrote the bank.
    pub generator_version: String,
    /// The bank seed the dialogues were drawn from ([`DEFAULT_DIALOGUE_SEED`] for the
    /// committed bank).
    pub seed: u64,
    /// Seed of the one field-order stream ([`FIELD_ORDER_SEED`], C.2's 20261009), independent
    /// of `seed`.
    pub field_order_seed: u64,
    /// What the bank is: a synthetic stand-in, not SGD.
    pub statement: String,
    /// What the search for a shipped copy of SGD found.
    pub source_check: String,
    /// The order of the JSONL's lines.
    pub bank_order: String,
    /// The construction rules, each with the passage it follows.
    pub rules: BTreeMap<String, String>,
    /// Dialogues, turns and fields per split, length, service, slot count and act.
    pub counts: BTreeMap<String, usize>,
    /// Every perturbed copy, in bank order.
    pub perturbations: Vec<PerturbationRecord>,
    /// SHA-256 of the bank file.
    pub files: BTreeMap<String, String>,
}

/// The dialogue bank: test dialogues, their perturbed copies and the development dialogues,
/// each in bank order.
#[derive(Debug, Clone, PartialEq)]
pub struct DialogueBank {
    /// The test dialogues: [`TEST_PER_LENGTH`] of each length, shortest first.
    pub test: Vec<Dialogue>,
    /// Paraphrase and value-permutation copies of test dialogues, by base, paraphrase first.
    pub perturbed: Vec<Dialogue>,
    /// The development dialogues: [`DEV_PER_LENGTH`] of each length, shortest first.
    pub dev: Vec<Dialogue>,
    /// The bank's provenance, the bank file's SHA-256 included.
    pub provenance: DialogueProvenance,
}

impl DialogueBank {
    /// Every dialogue in file order: test, perturbed copies, development.
    pub fn dialogues(&self) -> impl Iterator<Item = &Dialogue> {
        self.test.iter().chain(&self.perturbed).chain(&self.dev)
    }

    /// The bank file's text: one dialogue JSON per line.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for d in self.dialogues() {
            // Dialogues are plain data; serialization cannot fail.
            out.push_str(&serde_json::to_string(d).unwrap_or_default());
            out.push('\n');
        }
        out
    }
}

/// A generated base dialogue with the plan it came from.
struct Generated {
    dialogue: Dialogue,
    plan: Vec<PlannedTurn>,
    slots: Vec<usize>,
    service: usize,
}

fn stream(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

fn turns_of(plan: &[PlannedTurn], pieces: Option<&[Vec<Piece>]>) -> Vec<DialogueTurn> {
    plan.iter()
        .enumerate()
        .map(|(t, p)| DialogueTurn {
            system: p.system.clone(),
            user: compose(pieces.map_or(&p.pieces, |ps| &ps[t])),
            state: p.state.clone(),
        })
        .collect()
}

fn origin_of(seed: u64, head: &str, plan: &[PlannedTurn], pieces: Option<&[Vec<Piece>]>) -> String {
    let turns: Vec<String> = plan
        .iter()
        .enumerate()
        .map(|(t, p)| {
            let ids = match pieces {
                Some(ps) => ps[t].iter().map(Piece::id).collect::<Vec<_>>().join("+"),
                None => p.template_ids(),
            };
            format!("t{} {}[{ids}]", t + 1, p.kind())
        })
        .collect();
    format!(
        "{DIALOGUE_GENERATOR_VERSION}; seed {seed}; {head}; turns: {}",
        turns.join(" | ")
    )
}

/// Draw one base dialogue of `turns` user turns over service `service` with `slot_count`
/// slots from its own stream, redrawing until the selection rules hold and its user
/// utterances are new to the bank (`seen`).
#[allow(clippy::too_many_arguments)]
fn generate(
    seed: u64,
    stream_id: u64,
    split: DialogueSplit,
    number: usize,
    service: usize,
    slot_count: usize,
    turns: usize,
    seen: &mut BTreeSet<Vec<String>>,
) -> Result<Generated, DialogueBankError> {
    let spec = &SERVICES[service];
    let mut rng = stream(seed, stream_id);
    let mut slots: Vec<usize> = rand::seq::index::sample(&mut rng, spec.slots.len(), slot_count)
        .into_iter()
        .collect();
    slots.sort_unstable();
    let slot_specs: Vec<&SlotSpec> = slots.iter().map(|&i| &spec.slots[i]).collect();
    let names: Vec<&str> = slot_specs.iter().map(|s| s.name).collect();
    let ctx = Ctx {
        spec,
        slots: &slot_specs,
    };
    let id = format!(
        "{DIALOGUE_ID_PREFIX}:{}:{}:{number:03}",
        split.as_str(),
        spec.name.to_lowercase()
    );
    for attempt in 1..=MAX_ATTEMPTS {
        let plan = plan_dialogue(&ctx, turns, &mut rng);
        if !selection_rules_hold(&names, &plan) {
            continue;
        }
        let turns = turns_of(&plan, None);
        let users: Vec<String> = turns.iter().map(|t| t.user.clone()).collect();
        if !seen.insert(users) {
            continue;
        }
        let head = format!(
            "{} stream {stream_id}, draw {attempt}; slots {}",
            split.as_str(),
            names.join(",")
        );
        let dialogue = Dialogue {
            dialogue_id: id,
            split,
            service: service_schema(spec, &slots),
            field_order: Vec::new(),
            turns,
            perturbation: None,
            perturbation_of: None,
            origin: origin_of(seed, &head, &plan, None),
        };
        return Ok(Generated {
            dialogue,
            plan,
            slots,
            service,
        });
    }
    Err(DialogueBankError::Build(format!(
        "{id}: no draw in {MAX_ATTEMPTS} met the selection rules"
    )))
}

/// Another paraphrase alternative of every clause of every user turn.
fn paraphrase_pieces(plan: &[PlannedTurn], rng: &mut ChaCha8Rng) -> Vec<Vec<Piece>> {
    plan.iter()
        .map(|p| {
            p.pieces
                .iter()
                .map(|piece| {
                    let n = piece.alts.len();
                    let mut q = piece.clone();
                    if n > 1 {
                        q.idx = (piece.idx + 1 + rng.random_range(0..n - 1)) % n;
                    }
                    q
                })
                .collect()
        })
        .collect()
}

/// Shuffle until the order differs from the original (for two or more elements).
fn shuffle_different<T: Clone + PartialEq>(v: &mut [T], rng: &mut ChaCha8Rng) {
    if v.len() < 2 {
        return;
    }
    let original = v.to_vec();
    while v == original.as_slice() {
        v.shuffle(rng);
    }
}

/// The schema with the intents and each slot's values in a new seeded order.
fn permute_values(service: &DialogueService, rng: &mut ChaCha8Rng) -> DialogueService {
    let mut s = service.clone();
    shuffle_different(&mut s.intents, rng);
    for slot in &mut s.slots {
        shuffle_different(&mut slot.values, rng);
    }
    s
}

/// Everything the builder makes, with the plans of the base dialogues (tests read them).
struct Built {
    bank: DialogueBank,
    /// Plans of the test then the development dialogues, in bank order.
    #[cfg_attr(not(test), allow(dead_code))]
    plans: Vec<Vec<PlannedTurn>>,
}

fn build(seed: u64) -> Result<Built, DialogueBankError> {
    let mut layout = stream(seed, STREAM_LAYOUT);
    let mut order: Vec<usize> = (0..SERVICES.len()).collect();
    order.shuffle(&mut layout);
    let mut dev_order = order.clone();
    dev_order.shuffle(&mut layout);

    let mut seen = BTreeSet::new();
    let mut numbers: BTreeMap<(DialogueSplit, usize), usize> = BTreeMap::new();
    let mut next_number = |split: DialogueSplit, service: usize| {
        let n = numbers.entry((split, service)).or_default();
        *n += 1;
        *n
    };
    let mut generated: Vec<Generated> = Vec::new();
    // Test: 32 per length; services cycle through a seeded order, so each appears 9 or 10
    // times; the slot counts of each length are a seeded arrangement of TEST_SLOT_COUNTS.
    for (g, &turns) in DIALOGUE_LENGTHS.iter().enumerate() {
        let mut counts: Vec<usize> = TEST_SLOT_COUNTS[g]
            .iter()
            .enumerate()
            .flat_map(|(k, &m)| std::iter::repeat_n(k + 1, m))
            .collect();
        counts.shuffle(&mut layout);
        for (i, &slot_count) in counts.iter().enumerate() {
            let p = g * TEST_PER_LENGTH + i;
            let service = order[p % SERVICES.len()];
            let number = next_number(DialogueSplit::Test, service);
            generated.push(generate(
                seed,
                STREAM_TEST + p as u64,
                DialogueSplit::Test,
                number,
                service,
                slot_count,
                turns,
                &mut seen,
            )?);
        }
    }
    for (g, &turns) in DIALOGUE_LENGTHS.iter().enumerate() {
        let mut counts = DEV_SLOT_COUNTS.to_vec();
        counts.shuffle(&mut layout);
        for (i, &slot_count) in counts.iter().enumerate() {
            let p = g * DEV_PER_LENGTH + i;
            let service = dev_order[p % SERVICES.len()];
            let number = next_number(DialogueSplit::Dev, service);
            generated.push(generate(
                seed,
                STREAM_DEV + p as u64,
                DialogueSplit::Dev,
                number,
                service,
                slot_count,
                turns,
                &mut seen,
            )?);
        }
    }

    // Field order: one stream from 20261009, one shuffle per dialogue in bank order.
    let mut field_rng = ChaCha8Rng::seed_from_u64(FIELD_ORDER_SEED);
    for g in &mut generated {
        let mut fields = g.dialogue.service.fields();
        fields.shuffle(&mut field_rng);
        g.dialogue.field_order = fields;
    }

    // Perturbations: four test dialogues per length paraphrased, two of them also permuted.
    let mut choice = stream(seed, STREAM_PERTURBATION_CHOICE);
    let mut paraphrased = Vec::new();
    let mut permuted = BTreeSet::new();
    for g in 0..DIALOGUE_LENGTHS.len() {
        let per_length = PARAPHRASED / DIALOGUE_LENGTHS.len();
        let mut picks: Vec<usize> =
            rand::seq::index::sample(&mut choice, TEST_PER_LENGTH, per_length)
                .into_iter()
                .map(|i| g * TEST_PER_LENGTH + i)
                .collect();
        picks.sort_unstable();
        let chosen = picks
            .choose_multiple(&mut choice, PERMUTED / DIALOGUE_LENGTHS.len())
            .copied()
            .collect::<Vec<_>>();
        permuted.extend(chosen);
        paraphrased.extend(picks);
    }
    let mut perturbed = Vec::new();
    let mut records = Vec::new();
    for &i in &paraphrased {
        let base = &generated[i];
        let d = &base.dialogue;
        let mut rng = stream(seed, STREAM_PARAPHRASE + i as u64);
        let pieces = paraphrase_pieces(&base.plan, &mut rng);
        let mut copy = d.clone();
        copy.dialogue_id = format!("{}:{}", d.dialogue_id, Perturbation::Paraphrase.as_str());
        copy.perturbation = Some(Perturbation::Paraphrase);
        copy.perturbation_of = Some(d.dialogue_id.clone());
        copy.turns = turns_of(&base.plan, Some(&pieces));
        copy.origin = origin_of(
            seed,
            &format!(
                "paraphrase of {} (stream {})",
                d.dialogue_id,
                STREAM_PARAPHRASE + i as u64
            ),
            &base.plan,
            Some(&pieces),
        );
        perturbed.push(copy);
        records.push(PerturbationRecord {
            dialogue_id: format!("{}:{}", d.dialogue_id, Perturbation::Paraphrase.as_str()),
            perturbation: Perturbation::Paraphrase,
            perturbation_of: d.dialogue_id.clone(),
        });
        if permuted.contains(&i) {
            let mut rng = stream(seed, STREAM_PERMUTATION + i as u64);
            let mut copy = d.clone();
            let tag = Perturbation::ValuePermutation.as_str();
            copy.dialogue_id = format!("{}:{tag}", d.dialogue_id);
            copy.perturbation = Some(Perturbation::ValuePermutation);
            copy.perturbation_of = Some(d.dialogue_id.clone());
            copy.service = permute_values(&d.service, &mut rng);
            copy.origin = format!(
                "{}; value permutation of {} (stream {})",
                d.origin,
                d.dialogue_id,
                STREAM_PERMUTATION + i as u64
            );
            records.push(PerturbationRecord {
                dialogue_id: copy.dialogue_id.clone(),
                perturbation: Perturbation::ValuePermutation,
                perturbation_of: d.dialogue_id.clone(),
            });
            perturbed.push(copy);
        }
    }

    let n_test = DIALOGUE_LENGTHS.len() * TEST_PER_LENGTH;
    let plans: Vec<Vec<PlannedTurn>> = generated.iter().map(|g| g.plan.clone()).collect();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for g in &generated {
        let d = &g.dialogue;
        let split = d.split.as_str();
        let mut bump = |k: String, n: usize| *counts.entry(k).or_default() += n;
        bump(format!("{split}/dialogues"), 1);
        bump(format!("{split}/turns/{}", d.turns.len()), 1);
        bump(format!("{split}/service/{}", SERVICES[g.service].name), 1);
        bump(format!("{split}/slots/{}", g.slots.len()), 1);
        bump(format!("{split}/user_turns"), d.turns.len());
        bump(
            format!("{split}/field_turns"),
            d.turns.len() * d.field_order.len(),
        );
        for p in &g.plan {
            bump(format!("{split}/act/{}", p.kind()), 1);
        }
    }
    for d in &perturbed {
        if let Some(p) = d.perturbation {
            *counts
                .entry(format!("perturbation/{}", p.as_str()))
                .or_default() += 1;
        }
    }
    let dev: Vec<Dialogue> = generated[n_test..]
        .iter()
        .map(|g| g.dialogue.clone())
        .collect();
    let test: Vec<Dialogue> = generated[..n_test]
        .iter()
        .map(|g| g.dialogue.clone())
        .collect();
    counts.insert(
        "lines".to_string(),
        test.len() + perturbed.len() + dev.len(),
    );

    let rules: BTreeMap<String, String> = [
        ("prefixes", "C.1: \"The 96 test prefixes contain four, six or eight user turns (32 each), cover ten services (at most twelve dialogues per service), and have one to three categorical slots plus active intent.\" Services cycle through a seeded order (9 or 10 test dialogues each); slot counts per length 1/2/3 = 8/16/8, 10/14/8, 8/16/8, so the test bank has C.2's 576 user turns and 1,716 field turns."),
        ("service", "C.1: \"A service persists throughout each prefix.\" One service per dialogue; its schema holds all the service's intents and the dialogue's one to three slots (drawn, in schema order)."),
        ("selection", "C.1: \"selection requires state changes and a nonempty categorical value\": a draw is kept only if the state changes after the first user turn and some turn holds a slot value other than UNSET and DONTCARE; otherwise the dialogue is redrawn from its own stream."),
        ("initial_state", "C.1: \"Initial intent is NONE, absent slots UNSET and explicit indifference DONTCARE.\""),
        ("gold_state", "E.4: \"Preserve earlier user-provided slot values unless the user changes or cancels them. Ignore SYSTEM suggestions unless accepted by the user. UNSET means no value is held; DONTCARE means the user explicitly has no preference. Select the current active intent, or NONE if no intent is active.\" Acts: greeting (no change), intent, inform, change, cancel (UNSET), dontcare (DONTCARE), suggest_accept (the suggested value), suggest_reject and suggest_ignore (suggested slot unchanged; ignoring defers or acts on another field), confirm and chitchat (no change), switch_intent (slots kept), double (two fields change)."),
        ("dev", "C.1: \"Twelve development prefixes are disjoint by split, identifier and content.\" Four per length, their own ids (sgdsyn:dev:...) and streams; no dialogue's user-utterance sequence equals another's in the bank."),
        ("field_order", "C.2: \"Field order uses seed 20261009.\" E.4: \"The field order is fixed before outcomes.\" One ChaCha8Rng seeded 20261009 shuffles each dialogue's fields (active_intent then its slots), one shuffle per dialogue in bank order: test, then dev. Perturbed copies keep their base's order."),
        ("perturbations", "C.2: \"Twelve test dialogues receive one task-preserving paraphrase; six of these also receive one permutation of displayed semantic values.\" Four test dialogues per length paraphrased (every user utterance re-rendered with another alternative of each of its templates; system texts, schema and gold states unchanged); two of them per length also get a copy whose intents and slot values are displayed in a seeded order differing from the original for every field (texts and gold states unchanged)."),
        ("texts", "Templates with two to four alternatives per act; values appear as the schema spells them; origin records the act and template ids of every turn."),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();

    let mut bank = DialogueBank {
        test,
        perturbed,
        dev,
        provenance: DialogueProvenance {
            generator: "c2s-banks::dialogue (banks/src/dialogue.rs)".to_string(),
            generator_version: DIALOGUE_GENERATOR_VERSION.to_string(),
            seed,
            field_order_seed: FIELD_ORDER_SEED,
            statement: DIALOGUE_STATEMENT.to_string(),
            source_check: DIALOGUE_SOURCE_CHECK.to_string(),
            bank_order: "96 test dialogues (4, 6, 8 user turns, 32 each), then the perturbed copies (by base in bank order, paraphrase before value_permutation), then 12 dev dialogues (4 per length)".to_string(),
            rules,
            counts,
            perturbations: records,
            files: BTreeMap::new(),
        },
    };
    for d in bank.dialogues() {
        d.validate()?;
    }
    let sha = crate::bank::sha256_hex(bank.to_jsonl().as_bytes());
    bank.provenance.files.insert(DIALOGUE_FILE.to_string(), sha);
    Ok(Built { bank, plans })
}

/// Build the dialogue bank from `seed` (deterministic: the same seed gives the same bytes).
/// Every dialogue is validated with [`Dialogue::validate`]; the provenance holds the bank
/// file's SHA-256.
pub fn build_dialogue_bank(seed: u64) -> Result<DialogueBank, DialogueBankError> {
    build(seed).map(|b| b.bank)
}

fn write_file(path: &Path, text: &str) -> Result<(), DialogueBankError> {
    std::fs::write(path, text).map_err(|e| DialogueBankError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// Write `dialogue-synthetic.jsonl` and `dialogue-provenance.json` into `dir`.
pub fn write_dialogue_bank(bank: &DialogueBank, dir: &Path) -> Result<(), DialogueBankError> {
    std::fs::create_dir_all(dir).map_err(|e| DialogueBankError::Io {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    write_file(&dir.join(DIALOGUE_FILE), &bank.to_jsonl())?;
    let mut text = serde_json::to_string_pretty(&bank.provenance).unwrap_or_default();
    text.push('\n');
    write_file(&dir.join(DIALOGUE_PROVENANCE), &text)
}

/// Read a dialogue bank file (JSONL), validating every dialogue.
pub fn read_dialogue_bank(path: &Path) -> Result<Vec<Dialogue>, DialogueBankError> {
    let text = std::fs::read_to_string(path).map_err(|e| DialogueBankError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let d = c2s_records::parse_dialogue(line).map_err(|e| DialogueBankError::Parse {
            path: path.display().to_string(),
            line: i + 1,
            message: e.to_string(),
        })?;
        d.validate()?;
        out.push(d);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
