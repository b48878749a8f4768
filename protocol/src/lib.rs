//! The Choice2Seq protocol core, free of models and I/O: option binding and display orders,
//! verbatim prompts (Appendix E) rendered from canonical JSON state, controllers for every arm
//! (Algorithm 1), strict response scoring and trajectory outcomes.

#![deny(missing_docs)]

pub mod canonical;
pub mod controller;
pub mod coverage;
pub mod coverage_audit;
pub mod dialogue;
pub mod intervention;
pub mod options;
pub mod outcome;
pub mod padding;
pub mod prompts;
pub mod scoring;

pub use controller::{
    query_position, validate_spec, Controller, ControllerConfig, ControllerError, LexiconRef,
    LocalController, StopController, WholeAnswerController,
};
pub use options::{
    candidate_binding, code_for, local_binding, local_binding_over, stop_alphabet, stop_binding,
    OptionBinding,
};
pub use outcome::{membership, recombination, stop_outcome, Lexicon};
pub use padding::{
    token_matched_request, PromptTokenCounter, PromptTokensError, TokenCounterRef, TokenMatch,
    TokenMatchError,
};
pub use scoring::{argmax_first, parse_answer, ParsedAnswer, ScoringError};
