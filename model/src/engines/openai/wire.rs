//! The OpenAI-compatible wire format: exactly the fields the remote engine sends and reads.
//!
//! Requests serialize their fields in declaration order, the order the engine has always sent
//! them in (`serde_json` keeps insertion order in this workspace: feature `preserve_order`);
//! optional fields are left out when unset. Responses keep only what is read; every field a
//! server may leave out (or send as `null`) is an `Option` or defaults to empty, and the
//! engine names the field and the URL when one it needs is missing. Unknown fields are
//! ignored.

use std::collections::HashMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// `POST /completions`: a raw prompt (rendered on our side), greedy.
#[derive(Debug, Serialize)]
pub struct CompletionRequest<'a> {
    pub model: &'a str,
    pub prompt: &'a str,
    pub max_tokens: u32,
    pub temperature: f64,
    /// Return the prompt's tokens and log-probabilities before the generated ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub echo: Option<bool>,
    /// How many top log-probabilities to return per token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<u32>,
    /// llama.cpp's server only: raise some tokens and read the probabilities after sampling.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub biased: Option<BiasedSampling>,
}

/// The fields of a llama.cpp server request that read the probabilities of chosen tokens
/// relative to one another: `logit_bias` raises them above every other token, the sampler
/// chain keeps only the top `top_k` (them), and `post_sampling_probs` returns the
/// probabilities after that chain (their softmax), not the raw distribution's top entries.
#[derive(Debug, Serialize)]
pub struct BiasedSampling {
    /// Token id (as a string key, the OpenAI form) → bias added to its logit.
    pub logit_bias: Map<String, Value>,
    /// The sampler chain: `["top_k"]` (then llama.cpp's final `dist`, which normalizes).
    pub samplers: [&'static str; 1],
    pub top_k: u32,
    pub post_sampling_probs: bool,
}

/// `POST /chat/completions`: the server applies its chat template, greedy.
#[derive(Debug, Serialize)]
pub struct ChatRequest<'a> {
    pub model: &'a str,
    pub messages: Vec<ChatMessage<'a>>,
    pub max_tokens: u32,
    pub temperature: f64,
    /// Passed through to the server's chat template (vLLM, SGLang).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_template_kwargs: Option<&'a Value>,
}

/// One message of a [`ChatRequest`].
#[derive(Debug, Serialize)]
pub struct ChatMessage<'a> {
    pub role: &'a str,
    pub content: &'a str,
}

/// `GET /models`.
#[derive(Debug, Deserialize)]
pub struct ModelList {
    #[serde(default, deserialize_with = "null_as_default")]
    pub data: Vec<ModelEntry>,
}

/// One served model, kept whole: its stable fields (whichever the server sends, in its order)
/// identify the model in the manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct ModelEntry {
    pub fields: Map<String, Value>,
}

impl ModelEntry {
    /// The fields that identify a served model: vLLM, for one, returns a fresh `created` and a
    /// new random permission id at every call.
    pub const STABLE_FIELDS: [&'static str; 6] = [
        "id",
        "object",
        "owned_by",
        "root",
        "parent",
        "max_model_len",
    ];

    /// The served name (`id`), when it is a string.
    pub fn id(&self) -> Option<&str> {
        self.fields.get("id").and_then(Value::as_str)
    }

    /// The entry with its stable fields only, in the server's order.
    pub fn stable(mut self) -> Value {
        self.fields
            .retain(|k, _| Self::STABLE_FIELDS.contains(&k.as_str()));
        Value::Object(self.fields)
    }
}

/// Answer of `POST /completions`.
#[derive(Debug, Deserialize)]
pub struct CompletionResponse {
    #[serde(default, deserialize_with = "null_as_default")]
    pub choices: Vec<CompletionChoice>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
pub struct CompletionChoice {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub logprobs: Option<Logprobs>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// The log-probabilities of a `/completions` answer, in either of two shapes:
/// - the legacy OpenAI one (vLLM, SGLang): one entry per token, the prompt's first with
///   `echo`, the first prompt token without a log-probability (`null`), and the top entries as
///   a map from token text to log-probability;
/// - llama.cpp's server: `content`, one object per generated token whose `top_logprobs` (or,
///   with `post_sampling_probs`, `top_probs`) list token ids, texts and values.
#[derive(Debug, Deserialize)]
pub struct Logprobs {
    #[serde(default, deserialize_with = "null_as_default")]
    pub tokens: Vec<String>,
    #[serde(default)]
    pub token_logprobs: Option<Vec<Option<f64>>>,
    #[serde(default)]
    pub top_logprobs: Option<Vec<Option<HashMap<String, f64>>>>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub content: Vec<TokenEntry>,
}

/// One generated token of llama.cpp's `content` log-probabilities.
#[derive(Debug, Deserialize)]
pub struct TokenEntry {
    #[serde(default, deserialize_with = "null_as_default")]
    pub top_logprobs: Vec<TopEntry>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub top_probs: Vec<TopEntry>,
}

/// One top entry of llama.cpp's server: a log-probability, or with `post_sampling_probs` a
/// probability.
#[derive(Debug, Deserialize)]
pub struct TopEntry {
    #[serde(default)]
    pub id: Option<u32>,
    #[serde(default)]
    pub token: Option<String>,
    #[serde(default)]
    pub logprob: Option<f64>,
    #[serde(default)]
    pub prob: Option<f64>,
}

/// A top entry of either shape, its value a natural-log probability.
#[derive(Debug, Clone, PartialEq)]
pub struct TopToken {
    /// The token id, where the server sends it (llama.cpp's server).
    pub id: Option<u32>,
    pub text: String,
    pub logprob: f64,
}

impl CompletionResponse {
    /// The first choice's log-probabilities.
    pub fn logprobs(&self) -> Option<&Logprobs> {
        self.choices.first()?.logprobs.as_ref()
    }

    /// The top entries of the first token that has them, in either shape, most probable
    /// first; `None` when there are none. Post-sampling probabilities (llama.cpp's
    /// `top_probs`) are read as their logarithms; an entry without a value is left out.
    pub fn first_top_logprobs(&self) -> Option<Vec<TopToken>> {
        let lp = self.logprobs()?;
        let mut top: Vec<TopToken> = match lp.top_logprobs.as_ref().and_then(|t| t.first()) {
            Some(map) => map
                .as_ref()?
                .iter()
                .map(|(text, &logprob)| TopToken {
                    id: None,
                    text: text.clone(),
                    logprob,
                })
                .collect(),
            None => {
                let first = lp.content.first()?;
                let from_probs = first.top_logprobs.is_empty();
                let entries = if from_probs {
                    &first.top_probs
                } else {
                    &first.top_logprobs
                };
                entries
                    .iter()
                    .filter_map(|e| {
                        let logprob = if from_probs { e.prob?.ln() } else { e.logprob? };
                        Some(TopToken {
                            id: e.id,
                            text: e.token.clone().unwrap_or_default(),
                            logprob,
                        })
                    })
                    .collect()
            }
        };
        top.sort_by(|a, b| b.logprob.total_cmp(&a.logprob));
        (!top.is_empty()).then_some(top)
    }
}

/// Answer of `POST /chat/completions`.
#[derive(Debug, Deserialize)]
pub struct ChatResponse {
    #[serde(default, deserialize_with = "null_as_default")]
    pub choices: Vec<ChatChoice>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
pub struct ChatChoice {
    #[serde(default)]
    pub message: Option<ChatAnswer>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// The message of a [`ChatChoice`]; `content` is `null` when the model wrote none.
#[derive(Debug, Deserialize)]
pub struct ChatAnswer {
    #[serde(default)]
    pub content: Option<String>,
}

/// Token counts of an answer.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
}

/// A list (or any defaulted value) that a server may send as `null`.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[cfg(test)]
mod tests;
