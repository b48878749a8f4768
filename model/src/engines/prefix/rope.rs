//! Rotary position embeddings: the inverse frequency of each rotated pair and the scale of
//! the cosine/sine tables, for the RoPE types current checkpoints use.
//!
//! Each type follows transformers' `modeling_rope_utils.py` (5.x; the functions named
//! below), which Hugging Face checkpoints are run with; a type not listed here is refused by
//! name ([`RopeScaling::from_hf`]), never approximated.

use crate::error::EngineError;

/// How a checkpoint scales RoPE beyond its pretraining context.
#[derive(Debug, Clone, PartialEq)]
pub enum RopeScaling {
    /// `rope_type = "default"`: `1 / theta^(2i/d)` (`_compute_default_rope_parameters`).
    Default,
    /// `rope_type = "linear"`: every frequency divided by `factor`
    /// (`_compute_linear_scaling_rope_parameters`).
    Linear {
        /// The divisor of every inverse frequency: positions are compressed so that a context
        /// `factor` times the pretraining one turns through the trained angles.
        factor: f32,
    },
    /// `rope_type = "llama3"` (Llama-3.1 and later): long wavelengths divided by `factor`,
    /// short ones kept, a smooth blend between (`_compute_llama3_parameters`).
    Llama3 {
        /// The divisor of the long-wavelength frequencies (how many times the pretraining
        /// context is extended).
        factor: f32,
        /// Wavelengths (in positions) above `original_max_position_embeddings /
        /// low_freq_factor` are divided by `factor` in full.
        low_freq_factor: f32,
        /// Wavelengths below `original_max_position_embeddings / high_freq_factor` are kept;
        /// between the two bounds the frequency blends linearly, in `original / wavelength`,
        /// from divided to kept.
        high_freq_factor: f32,
        /// The pretraining context, in positions, that the wavelength bounds are measured
        /// against (the config's `max_position_embeddings` when the dict lacks it).
        original_max_position_embeddings: f32,
    },
    /// `rope_type = "yarn"`: NTK-by-parts interpolation with a ramp between the correction
    /// dimensions, and cos/sin scaled by the attention factor (`_compute_yarn_parameters`).
    Yarn {
        /// The extended context over the pretraining one: the interpolated frequencies are
        /// divided by it (absent: `max_position_embeddings / original_max_position_embeddings`).
        factor: f32,
        /// The pretraining context, in positions, over which the correction range counts
        /// rotations (the config's `max_position_embeddings` when the dict lacks it).
        original_max_position_embeddings: f32,
        /// Rotations over the pretraining context above which a pair keeps its frequency
        /// (extrapolated): the low end of the ramp; 32 when absent or 0.
        beta_fast: f32,
        /// Rotations over the pretraining context below which a pair is fully interpolated
        /// (divided by `factor`): the high end of the ramp; 1 when absent or 0.
        beta_slow: f32,
        /// `attention_factor`, given or derived from `factor`, `mscale`, `mscale_all_dim`.
        attention_factor: f32,
        /// Whether the ramp's ends are rounded outward to whole dimensions (low floored, high
        /// ceiled) before clamping; absent is `true`, `null` is `false`.
        truncate: bool,
    },
}

/// A RoPE field of a checkpoint's configuration, for error messages.
fn field_error(field: &str, problem: impl std::fmt::Display) -> EngineError {
    EngineError::Model(format!("`{field}`: {problem}"))
}

impl RopeScaling {
    /// From a Hugging Face RoPE parameter dict: transformers 5's `rope_parameters` or
    /// transformers 4's `rope_scaling` (both name the type `rope_type`, or `type` in older
    /// files). `field` names the dict in errors; `max_position_embeddings` is the config's,
    /// which yarn and llama3 fall back to for `original_max_position_embeddings`
    /// (`standardize_rope_params`).
    pub fn from_hf(
        params: &serde_json::Map<String, serde_json::Value>,
        field: &str,
        max_position_embeddings: usize,
    ) -> Result<RopeScaling, EngineError> {
        let kind = params
            .get("rope_type")
            .or_else(|| params.get("type"))
            .and_then(|v| v.as_str())
            .unwrap_or("default");
        let number = |key: &str| -> Result<Option<f32>, EngineError> {
            match params.get(key) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(v) => v
                    .as_f64()
                    .map(|x| Some(x as f32))
                    .ok_or_else(|| field_error(&format!("{field}.{key}"), "not a number")),
            }
        };
        let required = |key: &str| -> Result<f32, EngineError> {
            number(key)?.ok_or_else(|| {
                field_error(
                    &format!("{field}.{key}"),
                    format!("missing (rope type `{kind}` needs it)"),
                )
            })
        };
        let original = || -> Result<f32, EngineError> {
            Ok(number("original_max_position_embeddings")?
                .unwrap_or(max_position_embeddings as f32))
        };
        Ok(match kind {
            "default" => RopeScaling::Default,
            "linear" => RopeScaling::Linear {
                factor: required("factor")?,
            },
            "llama3" => RopeScaling::Llama3 {
                factor: required("factor")?,
                low_freq_factor: required("low_freq_factor")?,
                high_freq_factor: required("high_freq_factor")?,
                original_max_position_embeddings: original()?,
            },
            "yarn" => {
                let original_max_position_embeddings = original()?;
                let factor = match number("factor")? {
                    Some(f) => f,
                    None => max_position_embeddings as f32 / original_max_position_embeddings,
                };
                // `get_mscale(scale, mscale) = 0.1 · mscale · ln(scale) + 1` (1 when scale ≤ 1),
                // in Python floats.
                let get_mscale = |scale: f64, m: f64| {
                    if scale <= 1.0 {
                        1.0
                    } else {
                        0.1 * m * scale.ln() + 1.0
                    }
                };
                let f = factor as f64;
                let attention_factor = match number("attention_factor")? {
                    Some(a) => a,
                    None => match (number("mscale")?, number("mscale_all_dim")?) {
                        (Some(m), Some(all)) if m != 0.0 && all != 0.0 => {
                            (get_mscale(f, m as f64) / get_mscale(f, all as f64)) as f32
                        }
                        _ => get_mscale(f, 1.0) as f32,
                    },
                };
                // `rope_parameters.get("truncate", True)`: absent is True, null is falsy.
                let truncate = match params.get("truncate") {
                    None => true,
                    Some(serde_json::Value::Null) => false,
                    Some(v) => v.as_bool().ok_or_else(|| {
                        field_error(&format!("{field}.truncate"), "not a boolean")
                    })?,
                };
                RopeScaling::Yarn {
                    factor,
                    original_max_position_embeddings,
                    // `beta_fast or 32`, `beta_slow or 1`: a zero also takes the default.
                    beta_fast: number("beta_fast")?.filter(|b| *b != 0.0).unwrap_or(32.0),
                    beta_slow: number("beta_slow")?.filter(|b| *b != 0.0).unwrap_or(1.0),
                    attention_factor,
                    truncate,
                }
            }
            "dynamic" => {
                return Err(field_error(
                    &format!("{field}.rope_type"),
                    "`dynamic` NTK scaling recomputes the frequencies from the length of each \
                     forward pass, so a cached prefix would carry other angles than a full \
                     recomputation; the prefix engine does not run it",
                ))
            }
            other => {
                return Err(field_error(
                    &format!("{field}.rope_type"),
                    format!(
                        "RoPE type `{other}` is not supported by the prefix engine (default, \
                         linear, llama3, yarn)"
                    ),
                ))
            }
        })
    }

    /// The inverse frequency of each of the `head_dim / 2` rotated pairs, and the factor
    /// applied to the cosine and sine tables (yarn's attention factor; 1 otherwise). Computed
    /// in f32, as transformers computes them.
    pub fn inverse_frequencies(&self, theta: f32, head_dim: usize) -> (Vec<f32>, f32) {
        let half = head_dim / 2;
        let dim = head_dim as f32;
        // `base ** (arange(0, dim, 2) / dim)`, in f32.
        let pos_freqs: Vec<f32> = (0..half)
            .map(|i| theta.powf((2 * i) as f32 / dim))
            .collect();
        let default: Vec<f32> = pos_freqs.iter().map(|p| 1.0 / p).collect();
        match *self {
            RopeScaling::Default => (default, 1.0),
            RopeScaling::Linear { factor } => (default.iter().map(|f| f / factor).collect(), 1.0),
            RopeScaling::Llama3 {
                factor,
                low_freq_factor,
                high_freq_factor,
                original_max_position_embeddings: old,
            } => {
                let low_freq_wavelen = old / low_freq_factor;
                let high_freq_wavelen = old / high_freq_factor;
                let inv = default
                    .iter()
                    .map(|&f| {
                        let wavelen = 2.0 * std::f32::consts::PI / f;
                        // Long wavelengths: divided by the factor; short: kept; between
                        // (transformers' `~(w < high) * ~(w > low)`, the wavelengths being
                        // finite): blended.
                        let scaled = if wavelen > low_freq_wavelen {
                            f / factor
                        } else {
                            f
                        };
                        let medium = wavelen >= high_freq_wavelen && wavelen <= low_freq_wavelen;
                        if medium {
                            let smooth = (old / wavelen - low_freq_factor)
                                / (high_freq_factor - low_freq_factor);
                            (1.0 - smooth) * scaled / factor + smooth * scaled
                        } else {
                            scaled
                        }
                    })
                    .collect();
                (inv, 1.0)
            }
            RopeScaling::Yarn {
                factor,
                original_max_position_embeddings,
                beta_fast,
                beta_slow,
                attention_factor,
                truncate,
            } => {
                // `find_correction_dim` / `find_correction_range`, in Python floats (f64).
                let base = theta as f64;
                let d = head_dim as f64;
                let correction_dim = |rotations: f64| {
                    d * (original_max_position_embeddings as f64
                        / (rotations * 2.0 * std::f64::consts::PI))
                        .ln()
                        / (2.0 * base.ln())
                };
                let (mut low, mut high) = (
                    correction_dim(beta_fast as f64),
                    correction_dim(beta_slow as f64),
                );
                if truncate {
                    low = low.floor();
                    high = high.ceil();
                }
                let low = low.max(0.0) as f32;
                let mut high = high.min(d - 1.0) as f32;
                if low == high {
                    high += 0.001; // transformers' guard against a zero-width ramp
                }
                let inv = pos_freqs
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| {
                        let extrapolation = 1.0 / p;
                        let interpolation = 1.0 / (factor * p);
                        let ramp = ((i as f32 - low) / (high - low)).clamp(0.0, 1.0);
                        let extrapolation_factor = 1.0 - ramp;
                        interpolation * (1.0 - extrapolation_factor)
                            + extrapolation * extrapolation_factor
                    })
                    .collect();
                (inv, attention_factor)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(json: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        json.as_object().cloned().unwrap()
    }

    #[test]
    fn llama3_keeps_short_wavelengths_divides_long_ones_and_blends_between() {
        let s = RopeScaling::from_hf(
            &params(serde_json::json!({"rope_type": "llama3", "factor": 8.0,
                "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192})),
            "rope_scaling",
            131072,
        )
        .unwrap();
        let (inv, scale) = s.inverse_frequencies(500000.0, 128);
        let (plain, _) = RopeScaling::Default.inverse_frequencies(500000.0, 128);
        assert_eq!(scale, 1.0);
        assert_eq!(inv[0], plain[0]);
        assert_eq!(inv[63], plain[63] / 8.0);
        let blended = inv
            .iter()
            .zip(&plain)
            .filter(|(a, b)| *a != *b && **a != **b / 8.0)
            .count();
        assert!(blended > 0);
    }

    #[test]
    fn yarn_derives_its_attention_factor_and_defaults() {
        let s = RopeScaling::from_hf(
            &params(serde_json::json!({"rope_type": "yarn", "factor": 4.0,
                "original_max_position_embeddings": 32768})),
            "rope_parameters",
            131072,
        )
        .unwrap();
        match s {
            RopeScaling::Yarn {
                attention_factor,
                beta_fast,
                beta_slow,
                truncate,
                ..
            } => {
                assert_eq!(attention_factor, (0.1 * 4f64.ln() + 1.0) as f32);
                assert_eq!((beta_fast, beta_slow, truncate), (32.0, 1.0, true));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_and_dynamic_types_are_refused_by_name() {
        for (kind, words) in [("longrope", "`longrope`"), ("dynamic", "`dynamic`")] {
            let e = RopeScaling::from_hf(
                &params(serde_json::json!({"rope_type": kind, "factor": 2.0})),
                "rope_scaling",
                4096,
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("rope_scaling.rope_type") && e.contains(words),
                "{e}"
            );
        }
        let e = RopeScaling::from_hf(
            &params(serde_json::json!({"type": "linear"})),
            "rope_scaling",
            4096,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("rope_scaling.factor"), "{e}");
    }
}
