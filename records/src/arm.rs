//! Arms (interfaces and controls), local supports, response contracts and prompt
//! variants. An [`ArmSpec`] is everything that decides how an item is turned into requests.

use serde::{Deserialize, Serialize};

mod label;
mod spec_check;

pub use label::{LabelError, LabeledArm};
pub use spec_check::{validate_spec, SpecError};

/// The interface or control an item is run under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Arm {
    /// One request: problem, the eight candidates and the length.
    Native,
    /// One request: candidates and length only (no problem).
    NativeControl,
    /// L requests: absolute position, no prefix.
    Independent,
    /// L sequential requests, each with the model's own prefix.
    Serial,
    /// L requests with the gold prefix.
    TeacherForced,
    /// L requests copying the gold target (`copy_target`), no candidates.
    GoldCopy,
    /// L requests copying a supplied incorrect target (D.12), no candidates; the plan comes
    /// from the run's `[copy_plans]` table.
    IncorrectCopy,
    /// L requests copying the model's own Native choice (candidates kept).
    SelfPlanSpell,
    /// Serial with the 51-option alphabet including END, at most L+3 requests.
    SerialStop,
    /// One generated response holding the complete answer.
    WholeGenerate,
    /// L requests; the prefix is appended after the assistant boundary.
    PrefixContinue,
    /// One request at a preselected position with a supplied correct or error draft as the
    /// prefix, read out as the local character or the whole answer (A.4).
    PrefixIntervention,
}

impl Arm {
    /// Every arm, in declaration order.
    pub const ALL: [Arm; 12] = [
        Arm::Native,
        Arm::NativeControl,
        Arm::Independent,
        Arm::Serial,
        Arm::TeacherForced,
        Arm::GoldCopy,
        Arm::IncorrectCopy,
        Arm::SelfPlanSpell,
        Arm::SerialStop,
        Arm::WholeGenerate,
        Arm::PrefixContinue,
        Arm::PrefixIntervention,
    ];

    /// The arm's name (`Native`, `SerialStop`, …): the first part of an arm label, and
    /// what `Display` prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Native => "Native",
            Arm::NativeControl => "NativeControl",
            Arm::Independent => "Independent",
            Arm::Serial => "Serial",
            Arm::TeacherForced => "TeacherForced",
            Arm::GoldCopy => "GoldCopy",
            Arm::IncorrectCopy => "IncorrectCopy",
            Arm::SelfPlanSpell => "SelfPlanSpell",
            Arm::SerialStop => "SerialStop",
            Arm::WholeGenerate => "WholeGenerate",
            Arm::PrefixContinue => "PrefixContinue",
            Arm::PrefixIntervention => "PrefixIntervention",
        }
    }

    /// Arms that select a complete candidate (the left side of a paired comparison).
    pub fn is_whole_answer(self) -> bool {
        matches!(self, Arm::Native | Arm::NativeControl | Arm::WholeGenerate)
    }

    /// Arms that construct the answer one position at a time.
    pub fn is_local(self) -> bool {
        !self.is_whole_answer()
    }

    /// Copy arms: every step copies a supplied plan (`copy_target`), scored by fidelity.
    pub fn is_copy(self) -> bool {
        matches!(
            self,
            Arm::GoldCopy | Arm::IncorrectCopy | Arm::SelfPlanSpell
        )
    }

    /// Copy arms that withhold the candidates (only the plan is shown).
    pub fn withholds_candidates(self) -> bool {
        matches!(self, Arm::GoldCopy | Arm::IncorrectCopy)
    }

    /// Arms whose requests carry a prefix (so that Trie support is defined).
    pub fn has_prefix(self) -> bool {
        matches!(
            self,
            Arm::Serial
                | Arm::TeacherForced
                | Arm::GoldCopy
                | Arm::IncorrectCopy
                | Arm::SelfPlanSpell
                | Arm::SerialStop
                | Arm::PrefixContinue
                | Arm::PrefixIntervention
        )
    }
}

impl std::fmt::Display for Arm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which characters a local step may choose from (Algorithm 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SupportSet {
    /// The whole domain alphabet.
    Full,
    /// Characters occurring at this position in any candidate.
    Union,
    /// Continuations of the current prefix that stay inside the candidate set.
    Trie,
}

/// Whether singleton supports are still queried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FillRule {
    /// Query every position, singletons too.
    Call,
    /// Supply a singleton without a request (no probability is recorded).
    Fill,
}

/// A local support: Full / Union / Trie × Call / Fill. `Full` + `Fill` is FullFill: singletons
/// of the position union are filled and the full alphabet is used elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Support {
    /// Which characters a step may choose from.
    pub set: SupportSet,
    /// Whether a singleton support is still queried.
    pub fill: FillRule,
}

impl Support {
    /// Full: the whole alphabet at every position, every position queried.
    pub const FULL: Support = Support {
        set: SupportSet::Full,
        fill: FillRule::Call,
    };
    /// FullFill: singletons of the position union filled, the whole alphabet elsewhere.
    pub const FULL_FILL: Support = Support {
        set: SupportSet::Full,
        fill: FillRule::Fill,
    };
    /// UnionCall: the position's candidate characters, every position queried.
    pub const UNION_CALL: Support = Support {
        set: SupportSet::Union,
        fill: FillRule::Call,
    };
    /// UnionFill: the position's candidate characters, singletons filled without a request.
    pub const UNION_FILL: Support = Support {
        set: SupportSet::Union,
        fill: FillRule::Fill,
    };
    /// TrieCall: the prefix's continuations inside the candidate set, every position queried.
    pub const TRIE_CALL: Support = Support {
        set: SupportSet::Trie,
        fill: FillRule::Call,
    };
    /// TrieFill: the prefix's continuations inside the candidate set, singletons filled.
    pub const TRIE_FILL: Support = Support {
        set: SupportSet::Trie,
        fill: FillRule::Fill,
    };

    /// The paper's names: Full, FullFill, UnionCall, UnionFill, TrieCall, TrieFill.
    pub fn name(self) -> &'static str {
        match (self.set, self.fill) {
            (SupportSet::Full, FillRule::Call) => "Full",
            (SupportSet::Full, FillRule::Fill) => "FullFill",
            (SupportSet::Union, FillRule::Call) => "UnionCall",
            (SupportSet::Union, FillRule::Fill) => "UnionFill",
            (SupportSet::Trie, FillRule::Call) => "TrieCall",
            (SupportSet::Trie, FillRule::Fill) => "TrieFill",
        }
    }

    /// The support whose [`Support::name`] is `name`, in any ASCII case; `None` for any other
    /// name.
    pub fn parse(name: &str) -> Option<Support> {
        [
            Support::FULL,
            Support::FULL_FILL,
            Support::UNION_CALL,
            Support::UNION_FILL,
            Support::TRIE_CALL,
            Support::TRIE_FILL,
        ]
        .into_iter()
        .find(|s| s.name().eq_ignore_ascii_case(name))
    }
}

impl std::fmt::Display for Support {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the model answers a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Contract {
    /// Typed decision: a probability distribution over the legal option codes at the prompt
    /// boundary; the choice is the argmax.
    ScoredCode,
    /// Greedy text that must be exactly one listed option code.
    GeneratedCode,
    /// Greedy text that must be exactly one listed character (local) or candidate (whole).
    GeneratedCharacter,
    /// Greedy text that must be exactly a complete string (whole-answer arms).
    GeneratedString,
}

impl Contract {
    /// Whether the choice is read from a scored distribution rather than generated text (only
    /// [`Contract::ScoredCode`]).
    pub fn is_scored(self) -> bool {
        matches!(self, Contract::ScoredCode)
    }
}

/// Natural paraphrases of the instruction (Appendix E.2).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
pub enum PromptVariant {
    /// Paraphrase v1, the default (unmarked in the arm label).
    #[default]
    V1,
    /// Paraphrase v2 (`/v2` in the arm label).
    V2,
    /// Paraphrase v3 (`/v3` in the arm label).
    V3,
}

/// Readout templates of the crossed readout grid (Appendix E.5): a system message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Template {
    /// T0: "Return exactly ONE listed choice code …" (code contracts) or "… ONE character
    /// described by the correct criterion …" (character contracts).
    T0,
    /// T1: "Your entire response must be exactly one uppercase letter …" (code contracts) or
    /// "… exactly one character …" (character contracts).
    T1,
    /// T2: "Choose the option whose criterion answers the question. Reply with its single
    /// uppercase choice code alone …" (code contracts), or with the character (character
    /// contracts).
    T2,
}

/// Option names of the readout grid's choices (B.5, D.11's binding probe): "Opaque, opaque
/// remapped, readable aligned and readable conflicting names retain the character
/// descriptions. A permutation with no fixed points rebinds names. Gold follows
/// descriptions. Extra conflict loss is (aligned−conflicting)−(opaque−remapped)."
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum OptionNames {
    /// `o_` and hex digits of a hash of the criterion (E.5, E.6).
    #[default]
    Opaque,
    /// The opaque names rebound by a permutation with no fixed points.
    OpaqueRemapped,
    /// A readable name that states the criterion's character (`digit_5`, `letter_a`).
    ReadableAligned,
    /// Readable names rebound by a permutation with no fixed points: the name states another
    /// character than the criterion (gold still follows the criterion).
    ReadableConflicting,
}

impl OptionNames {
    /// The four binding conditions, in declaration order.
    pub const ALL: [OptionNames; 4] = [
        OptionNames::Opaque,
        OptionNames::OpaqueRemapped,
        OptionNames::ReadableAligned,
        OptionNames::ReadableConflicting,
    ];

    /// Config name: `opaque`, `opaque_remapped`, `readable_aligned`, `readable_conflicting`.
    pub fn as_str(self) -> &'static str {
        match self {
            OptionNames::Opaque => "opaque",
            OptionNames::OpaqueRemapped => "opaque_remapped",
            OptionNames::ReadableAligned => "readable_aligned",
            OptionNames::ReadableConflicting => "readable_conflicting",
        }
    }

    /// The condition whose config name ([`OptionNames::as_str`]) is `name`.
    pub fn parse(name: &str) -> Option<OptionNames> {
        OptionNames::ALL.into_iter().find(|n| n.as_str() == name)
    }

    /// Names are rebound by a derangement.
    pub fn remapped(self) -> bool {
        matches!(
            self,
            OptionNames::OpaqueRemapped | OptionNames::ReadableConflicting
        )
    }
}

/// Copy evidence for GoldCopy / SelfPlanSpell (paper §3.3, A.5).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
pub enum Evidence {
    /// `copy_target` as a string.
    #[default]
    Raw,
    /// Plus the one-based position table `indexed_characters`.
    Indexed,
    /// Plus `query_character`, the character at the queried position.
    Direct,
    /// D.9's length control: the raw string plus nonindexed punctuation (`padding`) whose
    /// length makes the serialized state as long, in characters and UTF-8 bytes, as Indexed's
    /// at the same prefix ("Nonindexed punctuation matches Indexed's serialized-state character
    /// and UTF-8 byte length at the same prefix").
    Padded,
    /// D.9's token control: the raw string plus nonindexed punctuation whose length makes the
    /// full rendered request as long, in the run's pinned tokenizer's tokens, as the Indexed
    /// request at the same prefix ("Punctuation, excluding answer symbols and index numbers,
    /// matches the pinned tokenizer's full rendered Indexed request at the same prefix").
    PaddedTokens,
}

/// The step schedule of copy arms: positions queried independently or serially.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
pub enum CopyControl {
    /// One request per position, none with a prefix.
    Independent,
    /// One request per position in order, each with the prefix built so far (the default).
    #[default]
    Serial,
    /// One bundled request for all L positions (D.11: "Batch bundles these questions: native
    /// multi-field decisions for Jev/StartLux, strict JSON for Qwen"): a scored contract decides
    /// the fields in order inside one answer, a generated one returns one strict JSON object.
    Batch,
}

impl CopyControl {
    /// The controller as the paper prints it (Figure 15): `Independent`, `Serial`, `Batch`
    /// (the arm label's part is lowercase).
    pub fn name(self) -> &'static str {
        match self {
            CopyControl::Independent => "Independent",
            CopyControl::Serial => "Serial",
            CopyControl::Batch => "Batch",
        }
    }
}

/// Displayed option order: the frozen reference order or a seeded permutation of it (O1, O2…).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
pub enum OptionOrder {
    /// The frozen reference order (config `order` absent or 0; unmarked in the arm label).
    #[default]
    Reference,
    /// Seeded permutation number k of the reference order (config `order = k`, k ≥ 1; `/Ok` in
    /// the arm label); the codes stay bound to the same values.
    Permuted(u32),
}

/// Key order of the user JSON object of every request.
///
/// The paper lists `state` first: "a single user message contains JSON keys state, question,
/// allowed_values, and response_format" (E.2), "User JSON has exactly state, question,
/// choices, and response_format" (E.5), "one user message JSON object with state,
/// field_queries, and response_format" (E.4). That is the default for every arm.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum RequestLayout {
    /// The paper's order: `state`, `question`, `choices` / `allowed_values`,
    /// `response_format`.
    #[default]
    Paper,
    /// Not the paper's: `question`, `choices` / `allowed_values`, `response_format`, `state`.
    /// Invariant parts first, so the requests of one item share a longer token prefix (cheaper
    /// with a prefix cache). Labelled `/state-last` in arm labels.
    StateLast,
}

impl RequestLayout {
    /// Both layouts, the paper's first.
    pub const ALL: [RequestLayout; 2] = [RequestLayout::Paper, RequestLayout::StateLast];

    /// Config and manifest name: `paper` or `state_last`.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestLayout::Paper => "paper",
            RequestLayout::StateLast => "state_last",
        }
    }

    /// What this layout appends to an arm label: nothing for the paper's layout, so that
    /// only non-paper rows carry a mark.
    pub fn label_suffix(self) -> &'static str {
        match self {
            RequestLayout::Paper => "",
            RequestLayout::StateLast => "/state-last",
        }
    }

    /// The layout whose config name ([`RequestLayout::as_str`]) is `name`.
    pub fn parse(name: &str) -> Option<RequestLayout> {
        RequestLayout::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

/// The alphabet of Full support: the item's domain alphabet, or all 26 lowercase letters.
///
/// D.7 crosses "The local alphabet (a–j or a–z)" over sources whose symbols are a–j: the
/// `Lowercase` arms offer 26 choices at every queried step of those items.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum LocalAlphabet {
    /// The item domain's alphabet (ten digits, 26 letters, or a–j / etaoinshrd for the
    /// symbolic letter encodings).
    #[default]
    Domain,
    /// The 26 lowercase letters, whatever the domain (meant for letter domains: on digit items
    /// every letter is a legal but never-correct answer).
    Lowercase,
}

impl LocalAlphabet {
    /// Config name: `domain` or `lowercase`.
    pub fn as_str(self) -> &'static str {
        match self {
            LocalAlphabet::Domain => "domain",
            LocalAlphabet::Lowercase => "lowercase",
        }
    }

    /// The alphabet whose config name ([`LocalAlphabet::as_str`]) is `name`.
    pub fn parse(name: &str) -> Option<LocalAlphabet> {
        [LocalAlphabet::Domain, LocalAlphabet::Lowercase]
            .into_iter()
            .find(|a| a.as_str() == name)
    }
}

/// Positions (one-based, 1..=64) that a Fill controller queries even where its fill rule
/// would supply a singleton. D.7: "Both branch positions are always queried; six-query
/// controllers also query positions 1,4,8,12. Other positions are filled only from singleton
/// candidate unions." A bit set, so that [`ArmSpec`] stays `Copy`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
pub struct QueryPositions(pub u64);

impl QueryPositions {
    /// The largest position a set can hold.
    pub const MAX: u32 = 64;

    /// The set of `positions`; `None` if one is 0 or above [`QueryPositions::MAX`].
    pub fn from_positions(positions: &[u32]) -> Option<QueryPositions> {
        let mut bits = 0u64;
        for &p in positions {
            if p == 0 || p > Self::MAX {
                return None;
            }
            bits |= 1 << (p - 1);
        }
        Some(QueryPositions(bits))
    }

    /// Whether the set holds one-based `position` (never 0 or a position past
    /// [`QueryPositions::MAX`]).
    pub fn contains(self, position: usize) -> bool {
        position >= 1 && position <= Self::MAX as usize && self.0 & (1 << (position - 1)) != 0
    }

    /// Whether the set holds no position (a Fill rule then fills every singleton).
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The positions in ascending order.
    pub fn positions(self) -> Vec<u32> {
        (1..=Self::MAX)
            .filter(|&p| self.contains(p as usize))
            .collect()
    }
}

/// The draft a PrefixIntervention request shows as `current_prefix` (A.4: "crosses
/// correct/error drafts … An error draft flips one preceding character").
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Draft {
    /// The gold prefix.
    #[default]
    Correct,
    /// The gold prefix with one character replaced.
    Error,
}

/// What a PrefixIntervention request asks for (A.4: "with readout of the whole answer or a
/// local character").
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum InterventionReadout {
    /// The character at the preselected position (the Serial question, local options).
    #[default]
    Character,
    /// The complete answer (the Native question, the eight candidates).
    Whole,
}

/// Everything that decides how an item becomes requests under one arm; [`validate_spec`]
/// says which combinations can run, [`ArmSpec::label`] names one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ArmSpec {
    /// The interface or control.
    pub arm: Arm,
    /// Local support (local arms only; `Full` for whole-answer arms).
    pub support: Support,
    /// How the model answers each request.
    pub contract: Contract,
    /// Instruction paraphrase (E.2); only Native, NativeControl, Independent, Serial,
    /// TeacherForced and PrefixIntervention have more than one instruction.
    #[serde(default)]
    pub variant: PromptVariant,
    /// Optional readout system message (T0–T2).
    #[serde(default)]
    pub template: Option<Template>,
    /// What the state shows beside `copy_target` (copy arms only: no other arm has a copy
    /// target).
    #[serde(default)]
    pub evidence: Evidence,
    /// Step schedule of a copy arm (a readout asks its one position whatever this says).
    #[serde(default)]
    pub copy_control: CopyControl,
    /// Displayed option order.
    #[serde(default)]
    pub order: OptionOrder,
    /// Key order of the user JSON (the paper's unless a run names another).
    #[serde(default)]
    pub layout: RequestLayout,
    /// Greedy budget in new tokens of a generated contract; `None`: the SPEC budget (8 per
    /// character, 32 per complete string). Panels set the paper's value where it differs, e.g.
    /// 64 for Qwen3-8B's whole-answer generation (B.3: "with thinking disabled and 64 new
    /// tokens") against 32 for Table 3 (E.3: "Both allow 32 new tokens").
    #[serde(default)]
    pub max_new_tokens: Option<u32>,
    /// Option names of the readout grid (opaque unless a binding condition names another).
    #[serde(default)]
    pub names: OptionNames,
    /// Full support's alphabet (D.7's a–j / a–z factor).
    #[serde(default)]
    pub alphabet: LocalAlphabet,
    /// Positions queried although the fill rule would fill them (D.7's six-query
    /// controllers).
    #[serde(default)]
    pub also_query: QueryPositions,
    /// PrefixIntervention: the supplied draft.
    #[serde(default)]
    pub draft: Draft,
    /// PrefixIntervention: character or whole-answer readout.
    #[serde(default)]
    pub readout: InterventionReadout,
    /// D.2's repeated observations ("Seventy-two parents … receive three identical Native
    /// requests and three Serial trajectories"): 0 is a setting's first request, k > 0 its
    /// k-th identical repeat. The prompt is unchanged; the label (`/r1`) and so the request
    /// ids and rows are the repeat's own.
    #[serde(default)]
    pub repeat: u8,
}

impl ArmSpec {
    /// A.4's whole-answer readout: one complete string, chosen among the candidates.
    pub fn asks_whole(&self) -> bool {
        self.arm == Arm::PrefixIntervention && self.readout == InterventionReadout::Whole
    }

    /// A readout-template copy arm (E.5's readout grid): a template on a copy arm.
    pub fn is_readout(&self) -> bool {
        self.template.is_some() && self.arm.is_copy()
    }

    /// A default spec for `arm`: Full support, scored codes, v1, reference order.
    pub fn new(arm: Arm) -> ArmSpec {
        ArmSpec {
            arm,
            support: Support::FULL,
            contract: Contract::ScoredCode,
            variant: PromptVariant::V1,
            template: None,
            evidence: Evidence::Raw,
            copy_control: CopyControl::Serial,
            order: OptionOrder::Reference,
            layout: RequestLayout::Paper,
            max_new_tokens: None,
            names: OptionNames::Opaque,
            alphabet: LocalAlphabet::Domain,
            also_query: QueryPositions(0),
            draft: Draft::Correct,
            readout: InterventionReadout::Character,
            repeat: 0,
        }
    }

    /// This spec with `support` in place of its own.
    pub fn with_support(mut self, support: Support) -> ArmSpec {
        self.support = support;
        self
    }

    /// This spec with `contract` in place of its own.
    pub fn with_contract(mut self, contract: Contract) -> ArmSpec {
        self.contract = contract;
        self
    }

    /// A short stable label, e.g. `Serial/UnionFill/code`, used as the `arm` column key and in
    /// request ids; [`ArmSpec::from_label`] reads it back.
    pub fn label(&self) -> String {
        let mut s = self.arm.as_str().to_string();
        if self.arm == Arm::PrefixIntervention && self.readout == InterventionReadout::Whole {
            s.push_str("/whole");
        } else if self.arm.is_local() && self.arm != Arm::PrefixContinue {
            s.push('/');
            s.push_str(self.support.name());
        }
        s.push('/');
        s.push_str(label::contract_name(self.contract));
        s.push_str(match self.variant {
            PromptVariant::V1 => "",
            PromptVariant::V2 => "/v2",
            PromptVariant::V3 => "/v3",
        });
        if let Some(t) = self.template {
            s.push('/');
            s.push_str(label::template_name(t));
        }
        if self.arm.is_copy() {
            s.push('/');
            s.push_str(label::evidence_part(self.evidence));
            // A readout (template) asks one position: no independent/serial schedule.
            if self.template.is_none() {
                s.push('/');
                s.push_str(label::copy_control_part(self.copy_control));
            }
        }
        if self.names != OptionNames::Opaque {
            s.push_str("/names-");
            s.push_str(self.names.as_str());
        }
        if self.arm == Arm::PrefixIntervention {
            s.push_str(match self.draft {
                Draft::Correct => "/draft-correct",
                Draft::Error => "/draft-error",
            });
        }
        if self.alphabet == LocalAlphabet::Lowercase {
            s.push_str("/a-z");
        }
        if !self.also_query.is_empty() {
            let p: Vec<String> = self
                .also_query
                .positions()
                .iter()
                .map(u32::to_string)
                .collect();
            s.push_str(&format!("/query{}", p.join(",")));
        }
        if let OptionOrder::Permuted(k) = self.order {
            s.push_str(&format!("/O{k}"));
        }
        if let Some(n) = self.max_new_tokens {
            s.push_str(&format!("/max{n}"));
        }
        if self.repeat > 0 {
            s.push_str(&format!("/r{}", self.repeat));
        }
        // The paper layout is unmarked; any other layout is named so that its rows can never be
        // mistaken for paper-layout rows.
        s.push_str(self.layout.label_suffix());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn support_names_round_trip() {
        for name in [
            "Full",
            "FullFill",
            "UnionCall",
            "UnionFill",
            "TrieCall",
            "TrieFill",
        ] {
            assert_eq!(Support::parse(name).unwrap().name(), name);
        }
        assert!(Support::parse("Bogus").is_none());
    }

    #[test]
    fn copy_controls_have_printed_names() {
        let names = [
            CopyControl::Independent,
            CopyControl::Serial,
            CopyControl::Batch,
        ]
        .map(CopyControl::name);
        assert_eq!(names, ["Independent", "Serial", "Batch"]);
    }

    #[test]
    fn labels_are_stable() {
        assert_eq!(ArmSpec::new(Arm::Native).label(), "Native/code");
        assert_eq!(
            ArmSpec::new(Arm::Serial)
                .with_support(Support::TRIE_FILL)
                .label(),
            "Serial/TrieFill/code"
        );
        let mut state_last = ArmSpec::new(Arm::Serial);
        state_last.layout = RequestLayout::StateLast;
        assert_eq!(state_last.label(), "Serial/Full/code/state-last");
        assert_eq!(ArmSpec::new(Arm::Serial).layout, RequestLayout::Paper);
        let mut whole = ArmSpec::new(Arm::WholeGenerate).with_contract(Contract::GeneratedString);
        whole.max_new_tokens = Some(64);
        assert_eq!(whole.label(), "WholeGenerate/string/max64");
        for l in RequestLayout::ALL {
            assert_eq!(RequestLayout::parse(l.as_str()), Some(l));
        }
    }

    /// D.7: "The local alphabet (a–j or a–z) and number of queried positions (two or six) are
    /// crossed"; the four local arms of the panel have four distinct labels.
    #[test]
    fn alphabet_and_query_positions_are_in_the_label() {
        let mut six = ArmSpec::new(Arm::Serial).with_support(Support::FULL_FILL);
        six.also_query = QueryPositions::from_positions(&[1, 4, 8, 12]).unwrap();
        assert_eq!(six.label(), "Serial/FullFill/code/query1,4,8,12");
        six.alphabet = LocalAlphabet::Lowercase;
        assert_eq!(six.label(), "Serial/FullFill/code/a-z/query1,4,8,12");
        assert!(six.also_query.contains(12) && !six.also_query.contains(2));
        assert_eq!(six.also_query.positions(), vec![1, 4, 8, 12]);
        assert!(QueryPositions::from_positions(&[0]).is_none());
        assert!(QueryPositions::from_positions(&[65]).is_none());
        assert_eq!(
            LocalAlphabet::parse("lowercase"),
            Some(LocalAlphabet::Lowercase)
        );
    }
}
