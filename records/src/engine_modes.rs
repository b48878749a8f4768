//! How an engine is driven, one definition for the configuration (`[model.openai]
//! generation_endpoint`, `[model.mistralrs] mode`) and the engines that read it (as
//! [`crate::WeightDtype`] for `[model] dtype`).

use serde::{Deserialize, Serialize};

/// `[model.openai] generation_endpoint`: where generated contracts are sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GenerationEndpoint {
    /// `/chat/completions`: the server renders its own chat template (the default).
    #[default]
    Chat,
    /// `/completions` with our rendering of the chat template, as for scoring.
    Completions,
}

/// `[model.mistralrs] mode`: how mistral.rs runs the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MistralRsMode {
    /// Exact f32 weights on the CPU, no caching.
    Reference,
    /// Weights in their own format, PagedAttention and mistral.rs's prefix cache.
    Native,
}
