//! Weight formats of the prefix engine: a GGUF or safetensors tensor as a row-major f32
//! matrix, the Hugging Face name of a GGUF tensor, and llama.cpp's query/key row permutation
//! (so that one forward pass serves both formats).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::PathBuf;

use candle_core::DType;

use crate::error::EngineError;
use crate::model_files::read_safetensors_header;

fn cerr(e: candle_core::Error) -> EngineError {
    EngineError::Compute(e.to_string())
}

/// A tensor of 1 or 2 dimensions as a row-major f32 matrix (rows, cols).
pub(super) fn dense(
    name: &str,
    t: &candle_core::Tensor,
) -> Result<(Vec<f32>, usize, usize), EngineError> {
    let (rows, cols) = matrix_shape(name, t.dims())?;
    let data = t
        .to_dtype(DType::F32)
        .and_then(|t| t.flatten_all())
        .and_then(|t| t.to_vec1())
        .map_err(cerr)?;
    Ok((data, rows, cols))
}

/// A tensor of 1 or 2 dimensions as (rows, cols) of a row-major matrix.
fn matrix_shape(name: &str, dims: &[usize]) -> Result<(usize, usize), EngineError> {
    match *dims {
        [n] => Ok((1, n)),
        [r, c] => Ok((r, c)),
        _ => Err(EngineError::Model(format!(
            "tensor `{name}` has shape {dims:?}, expected 1 or 2 dimensions"
        ))),
    }
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

/// The tensors of a checkpoint's `*.safetensors` files, read one at a time from disk (no
/// mapping, no whole-file read), so loading holds one tensor in f32 beside the model being
/// built: what lets a bf16 model of 16 GB load within its own size.
pub(super) struct SafetensorsFiles {
    /// Each tensor's file, dtype, shape and absolute byte range.
    tensors: HashMap<String, StoredTensor>,
}

struct StoredTensor {
    file: PathBuf,
    dtype: safetensors::Dtype,
    shape: Vec<usize>,
    start: u64,
    len: usize,
}

impl SafetensorsFiles {
    /// Read the headers of `shards`, each checked as before any work
    /// ([`read_safetensors_header`]: sizes from dtype × shape, ranges inside the file).
    pub(super) fn open(shards: &[PathBuf]) -> Result<SafetensorsFiles, EngineError> {
        let mut tensors = HashMap::new();
        for shard in shards {
            let mut file = File::open(shard).map_err(|e| EngineError::model_file(shard, e))?;
            let file_len = file
                .metadata()
                .map_err(|e| EngineError::model_file(shard, e))?
                .len();
            let header = read_safetensors_header(&mut BufReader::new(&mut file), file_len)
                .map_err(|e| EngineError::model_file(shard, e))?;
            for (name, info) in header.tensors {
                let (a, b) = info.data_offsets;
                tensors.insert(
                    name,
                    StoredTensor {
                        file: shard.clone(),
                        dtype: info.dtype,
                        shape: info.shape,
                        start: header.data_start + a as u64,
                        len: b - a,
                    },
                );
            }
        }
        Ok(SafetensorsFiles { tensors })
    }

    pub(super) fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name)
    }

    /// Tensor `name` (1 or 2 dimensions) as a row-major f32 matrix: f32 as stored, bf16 and
    /// f16 widened exactly, f64 rounded; another dtype (an integer) is refused, naming it.
    pub(super) fn get(&self, name: &str) -> Result<(Vec<f32>, usize, usize), EngineError> {
        let t = self.tensors.get(name).ok_or_else(|| {
            EngineError::Model(format!(
                "tensor `{name}` missing from the safetensors files"
            ))
        })?;
        let (rows, cols) = matrix_shape(name, &t.shape)?;
        if !matches!(
            t.dtype,
            safetensors::Dtype::F32
                | safetensors::Dtype::F64
                | safetensors::Dtype::BF16
                | safetensors::Dtype::F16
        ) {
            return Err(EngineError::model_file(
                &t.file,
                format!(
                    "tensor `{name}` is {:?}; weights must be F32, F64, BF16 or F16",
                    t.dtype
                ),
            ));
        }
        let mut bytes = vec![0u8; t.len];
        let mut file = File::open(&t.file).map_err(|e| EngineError::model_file(&t.file, e))?;
        file.seek(SeekFrom::Start(t.start))
            .and_then(|_| file.read_exact(&mut bytes))
            .map_err(|e| EngineError::model_file(&t.file, format!("tensor `{name}`: {e}")))?;
        let two = |c: &[u8]| u16::from_le_bytes([c[0], c[1]]);
        let data: Vec<f32> = match t.dtype {
            safetensors::Dtype::F32 => bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            safetensors::Dtype::BF16 => bytes
                .chunks_exact(2)
                .map(|c| half::bf16::from_bits(two(c)).to_f32())
                .collect(),
            safetensors::Dtype::F16 => bytes
                .chunks_exact(2)
                .map(|c| half::f16::from_bits(two(c)).to_f32())
                .collect(),
            // Rounded to f32, as candle's `to_dtype(F32)` did.
            _ => bytes
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f32)
                .collect(),
        };
        Ok((data, rows, cols))
    }
}
