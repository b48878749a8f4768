//! Shared records of the Choice2Seq protocol: items and their geometry, arms, requests,
//! responses, step records, trajectories and paired outcomes. Every stage of the pipeline
//! speaks these types; serde gives the JSON forms used by bank files and Kafka messages.

#![deny(missing_docs)]

pub mod arm;
pub mod coverage;
pub mod dialogue;
pub mod dtype;
pub mod engine_modes;
pub mod geometry;
pub mod item;
pub mod metric;
pub mod plan;
pub mod request;
pub mod trajectory;
pub mod validate;

pub use arm::{
    validate_spec, Arm, ArmSpec, Contract, CopyControl, Draft, Evidence, FillRule,
    InterventionReadout, LabelError, LabeledArm, LocalAlphabet, OptionNames, OptionOrder,
    PromptVariant, QueryPositions, RequestLayout, SpecError, Support, SupportSet, Template,
};
pub use coverage::{
    parse_case, CandidateSets, CaseParseError, CoverageCase, CoverageCatalogue, CoverageLabel,
    CoverageSize, CoverageSplit, Decision, DecisionSpec, NameVariant, ScoringRule, SetKind,
    NONE_LABEL,
};
pub use dialogue::{
    parse_dialogue, CategoricalSlot, Dialogue, DialogueArm, DialogueContract, DialogueError,
    DialogueParseError, DialogueService, DialogueSpec, DialogueSplit, DialogueState, DialogueTurn,
    FieldFailure, FieldTurn, Perturbation, PriorMode, SchemaValue, DONTCARE, FIELD_ORDER_SEED,
    INTENT_FIELD, NONE_INTENT, UNSET,
};
pub use dtype::WeightDtype;
pub use engine_modes::{GenerationEndpoint, MistralRsMode};
pub use geometry::{geometry, k_vector, position_union, Geometry};
pub use item::{
    ArithmeticMeta, CarryClass, CarryStats, Domain, FrequencyStratum, Item, LexicalMeta, Operation,
    Placement, SemanticMeta, Structure, SymbolicMeta, SymbolicPanel, BINARY, DIGITS, ETAOIN,
    LETTERS, NO_YES,
};
pub use metric::{
    comparison_arms, comparison_label, comparison_of, AsMetric, FamilyScope, Metric,
    MetricNameError, MetricRow, ScoreKind, ScoreStat, COMPARISON_SEPARATOR,
};
pub use plan::{
    parse_plan_file, write_plan_file, PlanFileError, PlanOrigin, PlanSource, SuppliedPlan,
};
pub use request::{
    Answer, Decoding, FinishReason, OptionLogprobs, Outage, Request, RequestOption, Response,
    BUDGET_CHARACTER, BUDGET_DIALOGUE, BUDGET_STRING,
};
pub use trajectory::{
    Confidence, Endpoint, Membership, PairedOutcome, ResponseClass, StepRecord, StopCategory,
    StopOutcome, Trajectory, END, INVALID_MARKER,
};
pub use validate::{
    parse_item, parse_item_value, validate_item, DuplicateIdGuard, ItemError, ItemPolicy, ItemRule,
    CANDIDATE_COUNT,
};
