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

/// The legacy (`/completions`) log-probabilities: one entry per token, the prompt's first
/// with `echo`. The first prompt token has no log-probability (`null`).
#[derive(Debug, Deserialize)]
pub struct Logprobs {
    #[serde(default, deserialize_with = "null_as_default")]
    pub tokens: Vec<String>,
    #[serde(default)]
    pub token_logprobs: Option<Vec<Option<f64>>>,
    #[serde(default)]
    pub top_logprobs: Option<Vec<Option<HashMap<String, f64>>>>,
}

impl CompletionResponse {
    /// The first choice's log-probabilities.
    pub fn logprobs(&self) -> Option<&Logprobs> {
        self.choices.first()?.logprobs.as_ref()
    }

    /// The top log-probabilities of the first token that has them.
    pub fn first_top_logprobs(&self) -> Option<&HashMap<String, f64>> {
        self.logprobs()?.top_logprobs.as_ref()?.first()?.as_ref()
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
