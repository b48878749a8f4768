//! Typed run configuration (TOML), validated before any work. Every error names the file, the
//! line and the field; the CLI exits with status 2 on them.
//!
//! The reference of every field is `config/reference.toml`; `config/quickstart.toml` and
//! `config/paper-main.toml` are runnable examples.
//!
//! One file per section of the TOML file (`run`, `source`, `model`, `arms`, `inference`,
//! `stats`, `output`, `coverage`, `dialogue`, `serve`, the Kafka settings), each with the
//! checks of its own fields; `parse` reads the file and runs the checks that join sections
//! (comparisons name arms, families name comparisons, the layout relabels all of them);
//! `error` is the error every check returns.

#![deny(missing_docs)]

mod arms;
mod coverage;
mod dialogue;
mod error;
mod hub;
mod inference;
mod kafka;
mod model;
mod output;
mod paper_families;
mod parse;
mod run;
mod serve;
mod source;
mod stats;

pub use arms::{arm_spec, ArmEntry, ComparisonEntry};
pub use c2s_records::{comparison_label, FamilyScope};
pub use coverage::CoverageSection;
pub use dialogue::DialogueSection;
pub use error::ConfigError;
pub use hub::{HubModelRef, DEFAULT_REVISION, HF_PATH_PREFIX};
pub use inference::{Batching, InferenceSection};
pub use kafka::{
    is_secret_property, KafkaClientSettings, KafkaSaslMechanism, KafkaSecret,
    KafkaSecurityProtocol, REDACTED,
};
pub use model::{
    EngineKind, GenerationEndpoint, MistralRsDtype, MistralRsMode, MistralRsSection, ModelSection,
    OpenAiScoring, OpenAiSection, UnknownEngine,
};
pub use output::{CopyPlansSection, KafkaSink, OutputSection};
pub use paper_families::{primary_paper_family, PaperFamilyEntry};
pub use parse::{load, parse, parse_in, parse_with_env, RunConfig, RunKind};
pub use run::RunSection;
pub use serve::{
    parse_serve_address, ServeAccess, ServeAddressError, ServeAuth, ServeError, ServeSection,
    ServeToken,
};
pub use source::{read_id_list, Selection, SourceConfig};
pub use stats::{
    primary_family, CellEntry, ContrastEntry, FamilyEntry, SelectorEntry, StatsSection,
};

/// serde's default for the flags that are on unless switched off.
fn yes() -> bool {
    true
}

#[cfg(test)]
mod tests;
