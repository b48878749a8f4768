//! A GGUF's model configuration, read as llama.cpp reads its metadata: every key the forward
//! depends on is read, taken at llama.cpp's default, or refused naming the key.

use std::path::Path;

use candle_core::quantized::gguf_file;

use super::rope::RopeScaling;
use super::transformer::{Arch, TransformerConfig};
use crate::error::EngineError;

fn meta_u32(ct: &gguf_file::Content, key: &str) -> Result<u32, EngineError> {
    ct.metadata
        .get(key)
        .ok_or_else(|| EngineError::Model(format!("GGUF metadata `{key}` missing")))?
        .to_u32()
        .map_err(|e| EngineError::Model(format!("GGUF metadata `{key}`: {e}")))
}

/// An f32 GGUF key; `default` is what llama.cpp uses when the key is absent (None: llama.cpp
/// requires the key, and so does this).
fn meta_f32(ct: &gguf_file::Content, key: &str, default: Option<f32>) -> Result<f32, EngineError> {
    match ct.metadata.get(key) {
        Some(v) => v
            .to_f32()
            .map_err(|e| EngineError::Model(format!("GGUF metadata `{key}`: {e}"))),
        None => default.ok_or_else(|| EngineError::Model(format!("GGUF metadata `{key}` missing"))),
    }
}

/// The model configuration in a GGUF's metadata, read as llama.cpp reads it (see
/// [`gguf_rope_scaling`]); what cannot be honoured is refused naming the key.
pub(super) fn gguf_config(
    ct: &gguf_file::Content,
    path: &Path,
) -> Result<TransformerConfig, EngineError> {
    let arch_name = ct
        .metadata
        .get("general.architecture")
        .and_then(|v| v.to_string().ok())
        .cloned()
        .unwrap_or_default();
    let arch = Arch::from_name(&arch_name).ok_or_else(|| {
        EngineError::model_file(
            path,
            format!(
                "architecture `{arch_name}` is not supported by the prefix engine \
         (llama, qwen2, qwen3)"
            ),
        )
    })?;
    let key = |k: &str| format!("{arch_name}.{k}");
    let n_heads = meta_u32(ct, &key("attention.head_count"))? as usize;
    let head_dim = meta_u32(ct, &key("attention.key_length"))
        .map(|v| v as usize)
        .unwrap_or(0);
    let config = TransformerConfig {
        arch,
        n_layers: meta_u32(ct, &key("block_count"))? as usize,
        hidden: meta_u32(ct, &key("embedding_length"))? as usize,
        ffn: meta_u32(ct, &key("feed_forward_length"))? as usize,
        n_heads,
        n_kv_heads: meta_u32(ct, &key("attention.head_count_kv"))
            .map(|v| v as usize)
            .unwrap_or(n_heads),
        head_dim,
        rope_theta: meta_f32(ct, &key("rope.freq_base"), Some(10000.0))?,
        rope_scaling: gguf_rope_scaling(ct, &arch_name)
            .map_err(|e| EngineError::model_file(path, e))?,
        rms_eps: meta_f32(ct, &key("attention.layer_norm_rms_epsilon"), None)
            .map_err(|e| EngineError::model_file(path, e))?,
        vocab: 0,
        context: meta_u32(ct, &key("context_length"))
            .map_err(|e| EngineError::model_file(path, e))? as usize,
    };
    // llama.cpp rotates `rope.dimension_count` dimensions of each head (all by default).
    if let Ok(n_rot) = meta_u32(ct, &key("rope.dimension_count")) {
        let width = if head_dim > 0 {
            head_dim
        } else {
            config.hidden / n_heads.max(1)
        };
        if n_rot as usize != width {
            return Err(EngineError::model_file(
                path,
                format!(
                    "GGUF metadata `{}` = {n_rot}: the prefix engine rotates whole heads \
         ({width} dimensions)",
                    key("rope.dimension_count")
                ),
            ));
        }
    }
    Ok(config)
}

/// RoPE scaling as llama.cpp reads it from GGUF metadata: `rope.scaling.type` (`none`,
/// `linear` — the default —, `yarn`, `longrope`) with `rope.scaling.factor`, or the older
/// `rope.scale_linear`. Llama-3.1-style scaling needs no key: it is stored as the
/// `rope_freqs.weight` divisors. yarn and longrope, whose llama.cpp kernels differ from
/// transformers', are refused by name.
fn gguf_rope_scaling(ct: &gguf_file::Content, arch: &str) -> Result<RopeScaling, EngineError> {
    let key = |k: &str| format!("{arch}.{k}");
    let kind = ct
        .metadata
        .get(&key("rope.scaling.type"))
        .and_then(|v| v.to_string().ok())
        .cloned();
    let factor = |k: &str| -> Result<Option<f32>, EngineError> {
        ct.metadata
            .get(&key(k))
            .map(|v| {
                v.to_f32()
                    .map_err(|e| EngineError::Model(format!("GGUF metadata `{}`: {e}", key(k))))
            })
            .transpose()
    };
    // llama.cpp: the type defaults to `linear`, the factor is `rope.scaling.factor` or else the
    // older `rope.scale_linear` (0 or absent: no scaling), and type `none` never scales.
    let linear_factor = match factor("rope.scaling.factor")? {
        Some(f) => Some(f),
        None => factor("rope.scale_linear")?,
    };
    match kind.as_deref().unwrap_or("linear") {
        "none" => Ok(RopeScaling::Default),
        "linear" => match linear_factor {
            Some(f) if f != 0.0 && f != 1.0 => Ok(RopeScaling::Linear { factor: f }),
            _ => Ok(RopeScaling::Default),
        },
        other => Err(EngineError::Model(format!(
            "GGUF metadata `{}` = `{other}`: RoPE scaling `{other}` is not supported by the \
             prefix engine (none, linear, and Llama-3.1's rope_freqs)",
            key("rope.scaling.type")
        ))),
    }
}
