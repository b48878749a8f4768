//! Weight formats of the prefix engine: a GGUF or safetensors tensor as a row-major f32
//! matrix, the Hugging Face name of a GGUF tensor, and llama.cpp's query/key row permutation
//! (so that one forward pass serves both formats).

use candle_core::DType;

use crate::error::EngineError;

fn cerr(e: candle_core::Error) -> EngineError {
    EngineError::Compute(e.to_string())
}

/// A tensor of 1 or 2 dimensions as a row-major f32 matrix (rows, cols).
pub(super) fn dense(
    name: &str,
    t: &candle_core::Tensor,
) -> Result<(Vec<f32>, usize, usize), EngineError> {
    let (rows, cols) = match t.dims() {
        [n] => (1, *n),
        [r, c] => (*r, *c),
        d => {
            return Err(EngineError::Model(format!(
                "tensor `{name}` has shape {d:?}, expected 1 or 2 dimensions"
            )))
        }
    };
    let data = t
        .to_dtype(DType::F32)
        .and_then(|t| t.flatten_all())
        .and_then(|t| t.to_vec1())
        .map_err(cerr)?;
    Ok((data, rows, cols))
}

/// The Hugging Face name of a weight named as in GGUF files.
pub(super) fn hf_tensor_name(gguf: &str) -> String {
    let fixed = match gguf {
        "token_embd.weight" => Some("model.embed_tokens.weight"),
        "output.weight" => Some("lm_head.weight"),
        "output_norm.weight" => Some("model.norm.weight"),
        _ => None,
    };
    if let Some(f) = fixed {
        return f.to_string();
    }
    let Some((layer, rest)) = gguf.strip_prefix("blk.").and_then(|r| r.split_once('.')) else {
        return gguf.to_string();
    };
    let part = match rest {
        "attn_q.weight" => "self_attn.q_proj.weight",
        "attn_k.weight" => "self_attn.k_proj.weight",
        "attn_v.weight" => "self_attn.v_proj.weight",
        "attn_output.weight" => "self_attn.o_proj.weight",
        "attn_q.bias" => "self_attn.q_proj.bias",
        "attn_k.bias" => "self_attn.k_proj.bias",
        "attn_v.bias" => "self_attn.v_proj.bias",
        "attn_q_norm.weight" => "self_attn.q_norm.weight",
        "attn_k_norm.weight" => "self_attn.k_norm.weight",
        "attn_norm.weight" => "input_layernorm.weight",
        "ffn_norm.weight" => "post_attention_layernorm.weight",
        "ffn_gate.weight" => "mlp.gate_proj.weight",
        "ffn_up.weight" => "mlp.up_proj.weight",
        "ffn_down.weight" => "mlp.down_proj.weight",
        other => other,
    };
    format!("model.layers.{layer}.{part}")
}

/// llama.cpp's `permute` of query/key rows (convert_hf_to_gguf.py): per head, the rows of the
/// first and second halves are interleaved, so that row `2i + j` of a head is row
/// `j · head_dim/2 + i` of the Hugging Face weight. `rotate_half` on the original rows equals
/// the interleaved-pair rotation on the permuted ones.
pub fn interleave_rotary_rows(w: &[f32], rows: usize, cols: usize, heads: usize) -> Vec<f32> {
    let d = rows / heads.max(1);
    let half = d / 2;
    let mut out = vec![0f32; w.len()];
    for h in 0..heads {
        for i in 0..half {
            for j in 0..2 {
                let dst = h * d + 2 * i + j;
                let src = h * d + j * half + i;
                out[dst * cols..(dst + 1) * cols].copy_from_slice(&w[src * cols..(src + 1) * cols]);
            }
        }
    }
    out
}
