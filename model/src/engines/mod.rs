//! One module per engine, all behind [`crate::Engine`].
//!
//! - [`prefix`]: the fast CPU path — our own ragged-batch transformer forward over the model's
//!   weights (llama, qwen2, qwen3) with a prefix cache.
//! - [`mistralrs`]: the model run by mistral.rs — on the CPU an exact f32 reference, on a CUDA
//!   host (feature `cuda`) the GPU path with its own quantized kernels, PagedAttention and
//!   prefix cache.
//! - [`openai`]: a model served behind an OpenAI-compatible API (vLLM, SGLang, llama.cpp's
//!   server, hosted APIs), scored by prompt log-probabilities.
//! - [`simulated`]: a seeded test double.

#[cfg(feature = "mistralrs")]
pub mod mistralrs;
#[cfg(feature = "openai")]
pub mod openai;
pub mod prefix;
pub mod simulated;
