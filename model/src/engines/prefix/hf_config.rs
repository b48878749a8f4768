//! A Hugging Face `config.json`, read as transformers reads it for the architectures the
//! prefix engine runs.
//!
//! Every field the forward pass depends on is either read from the file or, when the file
//! leaves it out, taken from the default of transformers' own config class (5.x:
//! `LlamaConfig`, `Qwen2Config`, `Qwen3Config`; `RotaryEmbeddingConfigMixin.default_theta`),
//! which is what transformers itself would run with. A setting the prefix engine does not
//! implement (biases llama does not have, sliding windows, partial rotary, another
//! activation, an unknown RoPE type) is refused naming the field.

use std::path::Path;

use thiserror::Error;

use super::rope::RopeScaling;
use super::transformer::{Arch, TransformerConfig};
use crate::error::EngineError;

/// Why a `config.json` cannot configure the prefix engine: a field of the wrong type or
/// missing, an architecture it does not run, or a setting it does not implement. Each names
/// the field.
#[derive(Debug, Error)]
pub enum HfConfigError {
    /// An integer field holds something else (a float, a string, a negative number).
    #[error("`{key}` is not a whole number")]
    NotWholeNumber {
        /// The field's name.
        key: String,
    },
    /// A float field holds something other than a number.
    #[error("`{key}` is not a number")]
    NotNumber {
        /// The field's name.
        key: String,
    },
    /// A flag holds something other than `true` or `false`.
    #[error("`{key}` is not a boolean")]
    NotBoolean {
        /// The field's name.
        key: String,
    },
    /// A field without a class default is absent or null.
    #[error("`{key}` is missing")]
    Missing {
        /// The field's name.
        key: String,
    },
    /// Neither `model_type` nor `architectures` names llama, qwen2 or qwen3.
    #[error(
        "model type {model_type:?} / architectures {architectures:?} are not supported by the \
         prefix engine (llama, qwen2, qwen3)"
    )]
    UnsupportedArchitecture {
        /// `model_type` (`None`: absent or not a string).
        model_type: Option<String>,
        /// The string entries of `architectures` (empty: absent).
        architectures: Vec<String>,
    },
    /// `hidden_act` is not `silu`.
    #[error("`hidden_act` = `{activation}`: the prefix engine implements silu")]
    Activation {
        /// The configured activation.
        activation: String,
    },
    /// `attention_bias` or `mlp_bias` is true for an architecture that has no such biases
    /// (qwen2's attention biases are implemented).
    #[error("`{key}` = true: the prefix engine has no such biases for {arch}")]
    Bias {
        /// `attention_bias` or `mlp_bias`.
        key: String,
        /// The architecture's name (`llama`, `qwen3`).
        arch: &'static str,
    },
    /// `use_sliding_window` is true.
    #[error("`use_sliding_window` = true: the prefix engine attends to every position")]
    SlidingWindow,
    /// The RoPE dict holds one dict per layer type.
    #[error(
        "`{field}` holds per-layer-type RoPE settings; the prefix engine runs one RoPE \
         for every layer"
    )]
    PerLayerRope {
        /// `rope_scaling` or `rope_parameters`.
        field: &'static str,
    },
    /// `partial_rotary_factor` is set to something other than 1.
    #[error("`partial_rotary_factor` = {factor}: the prefix engine rotates whole heads")]
    PartialRotary {
        /// The configured fraction of each head that is rotated.
        factor: f64,
    },
    /// The RoPE dict is malformed or names a RoPE type the engine does not implement
    /// ([`RopeScaling::from_hf`]'s error, printed as it is).
    #[error(transparent)]
    Rope(EngineError),
}

/// What transformers' config class supplies for a field the file leaves out.
struct ClassDefaults {
    rms_norm_eps: f64,
    /// `num_key_value_heads` (None: num_attention_heads).
    num_key_value_heads: Option<usize>,
    max_position_embeddings: usize,
    /// `head_dim` (None: hidden_size / num_attention_heads).
    head_dim: Option<usize>,
}

impl Arch {
    fn hf_defaults(self) -> ClassDefaults {
        match self {
            // LlamaConfig: rms_norm_eps 1e-6, max_position_embeddings 2048, head_dim None.
            Arch::Llama => ClassDefaults {
                rms_norm_eps: 1e-6,
                num_key_value_heads: None,
                max_position_embeddings: 2048,
                head_dim: None,
            },
            // Qwen2Config: 1e-6, 32768, 32 KV heads; attention uses
            // getattr(config, "head_dim", h / n).
            Arch::Qwen2 => ClassDefaults {
                rms_norm_eps: 1e-6,
                num_key_value_heads: Some(32),
                max_position_embeddings: 32768,
                head_dim: None,
            },
            // Qwen3Config: 1e-6, 32768, 32 KV heads, head_dim 128.
            Arch::Qwen3 => ClassDefaults {
                rms_norm_eps: 1e-6,
                num_key_value_heads: Some(32),
                max_position_embeddings: 32768,
                head_dim: Some(128),
            },
        }
    }
}

/// `RotaryEmbeddingConfigMixin.default_theta`.
const DEFAULT_THETA: f64 = 10_000.0;

/// The model configuration and whether the output head is tied to the embedding.
pub struct HfModelConfig {
    /// The forward pass's configuration (`vocab` 0: the weights give it).
    pub config: TransformerConfig,
    /// `tie_word_embeddings`: the output head reuses the embedding matrix (default false,
    /// as in every one of these config classes).
    pub tie_word_embeddings: bool,
}

/// Read `dir/config.json`.
pub fn read(dir: &Path) -> Result<HfModelConfig, EngineError> {
    let path = dir.join("config.json");
    let text = std::fs::read_to_string(&path).map_err(|e| EngineError::model_file(&path, e))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| EngineError::model_file(&path, format!("not valid JSON: {e}")))?;
    let obj = json
        .as_object()
        .ok_or_else(|| EngineError::model_file(&path, "not a JSON object"))?;
    parse(obj).map_err(|e| EngineError::model_file(&path, e))
}

type Obj = serde_json::Map<String, serde_json::Value>;

/// A field that is absent or null.
fn absent(obj: &Obj, key: &str) -> bool {
    obj.get(key).is_none_or(serde_json::Value::is_null)
}

fn usize_field(obj: &Obj, key: &str) -> Result<Option<usize>, HfConfigError> {
    if absent(obj, key) {
        return Ok(None);
    }
    obj[key]
        .as_u64()
        .map(|v| Some(v as usize))
        .ok_or_else(|| HfConfigError::NotWholeNumber { key: key.into() })
}

fn f64_field(obj: &Obj, key: &str) -> Result<Option<f64>, HfConfigError> {
    if absent(obj, key) {
        return Ok(None);
    }
    obj[key]
        .as_f64()
        .map(Some)
        .ok_or_else(|| HfConfigError::NotNumber { key: key.into() })
}

fn bool_field(obj: &Obj, key: &str) -> Result<Option<bool>, HfConfigError> {
    if absent(obj, key) {
        return Ok(None);
    }
    obj[key]
        .as_bool()
        .map(Some)
        .ok_or_else(|| HfConfigError::NotBoolean { key: key.into() })
}

fn required(obj: &Obj, key: &str) -> Result<usize, HfConfigError> {
    usize_field(obj, key)?.ok_or_else(|| HfConfigError::Missing { key: key.into() })
}

/// The architecture from `model_type`, else from `architectures`.
fn arch_of(obj: &Obj) -> Result<Arch, HfConfigError> {
    let model_type = obj.get("model_type").and_then(|v| v.as_str());
    let classes: Vec<&str> = obj
        .get("architectures")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let by_class = classes.iter().find_map(|a| match *a {
        "LlamaForCausalLM" => Some(Arch::Llama),
        "Qwen2ForCausalLM" => Some(Arch::Qwen2),
        "Qwen3ForCausalLM" => Some(Arch::Qwen3),
        _ => None,
    });
    model_type
        .and_then(Arch::from_name)
        .or(by_class)
        .ok_or_else(|| HfConfigError::UnsupportedArchitecture {
            model_type: model_type.map(str::to_string),
            architectures: classes.iter().map(|c| c.to_string()).collect(),
        })
}

/// The configuration in `obj` (a parsed `config.json`).
pub fn parse(obj: &Obj) -> Result<HfModelConfig, HfConfigError> {
    let arch = arch_of(obj)?;
    let defaults = arch.hf_defaults();
    // Settings of these classes that change the forward pass and are not implemented.
    let act = obj
        .get("hidden_act")
        .and_then(|v| v.as_str())
        .unwrap_or("silu");
    if act != "silu" {
        return Err(HfConfigError::Activation {
            activation: act.to_string(),
        });
    }
    for key in ["attention_bias", "mlp_bias"] {
        if arch != Arch::Qwen2 && bool_field(obj, key)? == Some(true) {
            return Err(HfConfigError::Bias {
                key: key.to_string(),
                arch: arch.name(),
            });
        }
    }
    if bool_field(obj, "use_sliding_window")? == Some(true) {
        return Err(HfConfigError::SlidingWindow);
    }
    let hidden = required(obj, "hidden_size")?;
    let n_heads = required(obj, "num_attention_heads")?;
    let head_dim = match usize_field(obj, "head_dim")? {
        Some(d) => d,
        None => defaults
            .head_dim
            .unwrap_or(hidden.checked_div(n_heads).unwrap_or(0)),
    };
    let max_position_embeddings =
        usize_field(obj, "max_position_embeddings")?.unwrap_or(defaults.max_position_embeddings);
    // RoPE: transformers 5 writes `rope_parameters` (with `rope_theta` inside), transformers
    // 4 `rope_theta` and `rope_scaling` at the top level; transformers 5 takes
    // `rope_scaling or rope_parameters` (`RotaryEmbeddingConfigMixin`), then
    // `standardize_rope_params`.
    let non_empty = |key: &str| match obj.get(key) {
        Some(serde_json::Value::Object(p)) if !p.is_empty() => Some(p),
        _ => None,
    };
    let (params, field) = match (non_empty("rope_scaling"), non_empty("rope_parameters")) {
        (Some(p), _) => (Some(p), "rope_scaling"),
        (None, Some(p)) => (Some(p), "rope_parameters"),
        (None, None) => (None, "rope_scaling"),
    };
    if let Some(p) = params {
        if p.values().any(|v| v.is_object()) {
            return Err(HfConfigError::PerLayerRope { field });
        }
    }
    let theta = match params
        .and_then(|p| p.get("rope_theta"))
        .and_then(|v| v.as_f64())
    {
        Some(t) => t,
        None => f64_field(obj, "rope_theta")?.unwrap_or(DEFAULT_THETA),
    };
    let partial = match params
        .and_then(|p| p.get("partial_rotary_factor"))
        .and_then(|v| v.as_f64())
    {
        Some(f) => Some(f),
        None => f64_field(obj, "partial_rotary_factor")?,
    };
    if let Some(factor) = partial.filter(|&f| f != 1.0) {
        return Err(HfConfigError::PartialRotary { factor });
    }
    let rope_scaling = match params {
        Some(p) => {
            RopeScaling::from_hf(p, field, max_position_embeddings).map_err(HfConfigError::Rope)?
        }
        None => RopeScaling::Default,
    };
    let config = TransformerConfig {
        arch,
        n_layers: required(obj, "num_hidden_layers")?,
        hidden,
        ffn: required(obj, "intermediate_size")?,
        n_heads,
        n_kv_heads: usize_field(obj, "num_key_value_heads")?
            .or(defaults.num_key_value_heads)
            .unwrap_or(n_heads),
        head_dim,
        rope_theta: theta as f32,
        rope_scaling,
        rms_eps: f64_field(obj, "rms_norm_eps")?.unwrap_or(defaults.rms_norm_eps) as f32,
        vocab: 0,
        context: max_position_embeddings,
    };
    Ok(HfModelConfig {
        config,
        // Every one of these classes defaults to untied embeddings.
        tie_word_embeddings: bool_field(obj, "tie_word_embeddings")?.unwrap_or(false),
    })
}

/// The same configuration in transformers 4's layout: `rope_theta` and `rope_scaling` at the
/// top level (from `rope_parameters` when the file has them), and every field that the file
/// leaves to transformers' class defaults written out (`num_key_value_heads`,
/// `rms_norm_eps`, `max_position_embeddings`, `head_dim`, `tie_word_embeddings`). Readers
/// that know only that layout and have other defaults (mistral.rs 0.8.1 requires
/// `rope_theta`; its Qwen3 takes `head_dim` as hidden / heads) then run the same model.
pub fn transformers4_layout(obj: &Obj) -> Result<Obj, HfConfigError> {
    let parsed = parse(obj)?;
    let c = &parsed.config;
    let mut out = obj.clone();
    let params = match out.remove("rope_parameters") {
        Some(serde_json::Value::Object(p)) => Some(p),
        _ => None,
    };
    if let Some(mut p) = params {
        if let Some(theta) = p.remove("rope_theta") {
            out.insert("rope_theta".into(), theta);
        }
        p.remove("partial_rotary_factor");
        let kind = p
            .get("rope_type")
            .and_then(|v| v.as_str())
            .unwrap_or("default");
        if kind == "default" {
            out.insert("rope_scaling".into(), serde_json::Value::Null);
        } else {
            out.insert("rope_scaling".into(), serde_json::Value::Object(p));
        }
    }
    // mistral.rs reads the type as `rope_type` only, and llama3's original context from the
    // dict only.
    if let Some(serde_json::Value::Object(p)) = out.get_mut("rope_scaling") {
        if let Some(kind) = p.remove("type") {
            p.entry("rope_type").or_insert(kind);
        }
        if let super::rope::RopeScaling::Llama3 {
            original_max_position_embeddings,
            ..
        } = c.rope_scaling
        {
            p.insert(
                "original_max_position_embeddings".into(),
                serde_json::json!(original_max_position_embeddings as u64),
            );
        }
    }
    let mut fill = |key: &str, value: serde_json::Value| {
        if absent(&out, key) {
            out.insert(key.into(), value);
        }
    };
    fill("rope_theta", serde_json::json!(c.rope_theta));
    fill("num_key_value_heads", serde_json::json!(c.n_kv_heads));
    fill(
        "rms_norm_eps",
        serde_json::json!(c.arch.hf_defaults().rms_norm_eps),
    );
    fill("max_position_embeddings", serde_json::json!(c.context));
    fill("head_dim", serde_json::json!(c.head_dim));
    fill(
        "tie_word_embeddings",
        serde_json::json!(parsed.tie_word_embeddings),
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: serde_json::Value) -> Result<HfModelConfig, HfConfigError> {
        parse(json.as_object().unwrap())
    }

    fn base(model_type: &str) -> serde_json::Value {
        serde_json::json!({"model_type": model_type, "hidden_size": 64, "intermediate_size": 128,
            "num_attention_heads": 4, "num_hidden_layers": 2})
    }

    #[test]
    fn missing_fields_take_the_config_class_defaults() {
        let q3 = cfg(base("qwen3")).unwrap().config;
        assert_eq!(
            (q3.head_dim, q3.rms_eps, q3.rope_theta),
            (128, 1e-6, 10000.0)
        );
        assert_eq!(q3.context, 32768);
        let l = cfg(base("llama")).unwrap();
        assert_eq!(
            (l.config.head_dim, l.config.n_kv_heads, l.config.context),
            (16, 4, 2048)
        );
        assert!(!l.tie_word_embeddings);
    }

    #[test]
    fn rope_theta_is_read_from_either_place() {
        let mut v5 = base("llama");
        v5["rope_parameters"] = serde_json::json!({"rope_type": "default", "rope_theta": 500000.0});
        assert_eq!(cfg(v5).unwrap().config.rope_theta, 500000.0);
        let mut v4 = base("llama");
        v4["rope_theta"] = serde_json::json!(250000.0);
        v4["rope_scaling"] = serde_json::json!({"rope_type": "linear", "factor": 2.0});
        let c = cfg(v4).unwrap().config;
        assert_eq!(c.rope_theta, 250000.0);
        assert_eq!(c.rope_scaling, RopeScaling::Linear { factor: 2.0 });
    }

    #[test]
    fn transformers4_layout_moves_rope_parameters_and_writes_the_defaults() {
        let mut v5 = base("qwen3");
        v5["rope_parameters"] = serde_json::json!({"rope_type": "yarn", "rope_theta": 1000000.0,
            "factor": 4.0, "original_max_position_embeddings": 32});
        let out = transformers4_layout(v5.as_object().unwrap()).unwrap();
        assert!(!out.contains_key("rope_parameters"));
        assert_eq!(out["rope_theta"], serde_json::json!(1000000.0));
        assert_eq!(out["rope_scaling"]["rope_type"], "yarn");
        assert_eq!(out["head_dim"], 128);
        assert_eq!(out["num_key_value_heads"], 32, "Qwen3Config's default");
        // Both layouts describe one model.
        let back = parse(&out).unwrap().config;
        assert_eq!(back, parse(v5.as_object().unwrap()).unwrap().config);
    }

    #[test]
    fn settings_the_forward_does_not_implement_are_refused_by_field() {
        for (key, value, words) in [
            ("hidden_act", serde_json::json!("gelu"), "hidden_act"),
            ("attention_bias", serde_json::json!(true), "attention_bias"),
            (
                "use_sliding_window",
                serde_json::json!(true),
                "use_sliding_window",
            ),
            (
                "partial_rotary_factor",
                serde_json::json!(0.5),
                "partial_rotary_factor",
            ),
            (
                "rope_scaling",
                serde_json::json!({"rope_type": "longrope", "factor": 2.0}),
                "rope_scaling.rope_type",
            ),
        ] {
            let mut c = base("llama");
            c[key] = value;
            let e = cfg(c).err().unwrap().to_string();
            assert!(e.contains(words), "{key}: {e}");
        }
    }

    /// The messages name the field exactly as before the error type existed (callers
    /// prefix them with the file).
    #[test]
    fn error_messages_name_the_field() {
        let mut c = base("llama");
        c["hidden_size"] = serde_json::json!(64.5);
        assert_eq!(
            cfg(c).err().unwrap().to_string(),
            "`hidden_size` is not a whole number"
        );
        let mut c = base("llama");
        c.as_object_mut().unwrap().remove("num_hidden_layers");
        assert_eq!(
            cfg(c).err().unwrap().to_string(),
            "`num_hidden_layers` is missing"
        );
        let mut c = base("gemma");
        c["architectures"] = serde_json::json!(["GemmaForCausalLM"]);
        assert_eq!(
            cfg(c).err().unwrap().to_string(),
            "model type Some(\"gemma\") / architectures [\"GemmaForCausalLM\"] are not \
             supported by the prefix engine (llama, qwen2, qwen3)"
        );
        let mut c = base("qwen3");
        c["mlp_bias"] = serde_json::json!(true);
        assert_eq!(
            cfg(c).err().unwrap().to_string(),
            "`mlp_bias` = true: the prefix engine has no such biases for qwen3"
        );
        let mut c = base("llama");
        c["partial_rotary_factor"] = serde_json::json!(0.5);
        assert_eq!(
            cfg(c).err().unwrap().to_string(),
            "`partial_rotary_factor` = 0.5: the prefix engine rotates whole heads"
        );
        let mut c = base("llama");
        c["rope_parameters"] = serde_json::json!({"full_attention": {"rope_type": "default"}});
        assert_eq!(
            cfg(c).err().unwrap().to_string(),
            "`rope_parameters` holds per-layer-type RoPE settings; the prefix engine runs one \
             RoPE for every layer"
        );
    }
}
