//! [`WeightDtype`]: how the prefix engine holds a model's linear weights (`[model] dtype`),
//! one definition for the configuration and the engine.

use serde::{Deserialize, Serialize};

/// How the prefix engine holds and multiplies the linear weights.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WeightDtype {
    /// f32 (the default): GGUF weights dequantized exactly, safetensors as stored or widened.
    #[default]
    F32,
    /// bf16, a named mode: every linear weight and the embedding rounded once to bfloat16 at
    /// load, products on the CPU's bf16 units with f32 accumulation. Half the memory; not
    /// exact (the engine's own bound against transformers' bf16 forward is in its tests).
    Bf16,
}

impl WeightDtype {
    /// `f32` or `bf16`: the `[model] dtype` value (the serde form).
    pub fn name(self) -> &'static str {
        match self {
            WeightDtype::F32 => "f32",
            WeightDtype::Bf16 => "bf16",
        }
    }
}
