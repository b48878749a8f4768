//! Model requests and responses. A request is rebuilt from state at every step: it
//! carries the prompt's messages (the engine renders them with the model's chat template),
//! the displayed options and the decoding budget.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::arm::Contract;

/// One displayed option: its response code and the criterion (value) it is bound to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RequestOption {
    /// The code shown to the model (`A`, `B`, …, `AA`, …).
    pub code: String,
    /// The value the code stands for: one character, a complete candidate, or `END`.
    pub value: String,
}

/// How the answer is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Decoding {
    /// Exact conditional distribution over the legal option codes at the prompt boundary.
    Score,
    /// Greedy decoding with a budget of new tokens, thinking disabled.
    Greedy {
        /// Most new tokens the model may generate.
        max_new_tokens: u32,
    },
}

/// Greedy budget (new tokens) of a generated code or character ("eight new tokens per
/// character", A.7).
pub const BUDGET_CHARACTER: u32 = 8;
/// Greedy budget (new tokens) of a generated whole string ("32 per string", A.7).
pub const BUDGET_STRING: u32 = 32;
/// Greedy budget (new tokens) of a dialogue request's generated answer.
pub const BUDGET_DIALOGUE: u32 = 256;

/// A model request, complete enough to be replayed without its controller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Deterministic id: item, arm, step and prompt hash (see [`Request::derive_id`]).
    pub request_id: String,
    /// The item asked about (a dialogue's id for dialogue requests).
    pub item_id: String,
    /// Arm label (see `ArmSpec::label`).
    pub arm: String,
    /// One-based position for local arms; 0 for whole-answer arms.
    pub step: u32,
    /// Optional system message (readout templates T0–T2).
    pub system: Option<String>,
    /// The user message: a JSON object holding question, options, response format and state.
    pub user: String,
    /// Text placed after the assistant generation boundary (PrefixContinue).
    pub assistant_prefix: Option<String>,
    /// Canonical JSON of the state (also embedded in `user`).
    pub state: String,
    /// The instruction (question) text.
    pub instruction: String,
    /// Displayed options in display order.
    pub options: Vec<RequestOption>,
    /// How the answer is given: a scored code, or a generated code, character or string.
    pub contract: Contract,
    /// Scoring, or greedy decoding with its new-token budget.
    pub decoding: Decoding,
    /// Names that are not offered but count in the end-token closing rule of the scored
    /// options as if they were (see `ModelTokenizer::option_tokens`): a candidate-coverage
    /// request lists its pair's other set's differing name here, so that a present set and
    /// its absent twin are closed, or not, together. Empty for every other request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub closing_context: Vec<String>,
}

impl Request {
    /// SHA-256 (hex) of everything the model sees and how it answers: system, user, assistant
    /// prefix, options and decoding. Two requests with equal keys get equal answers from the
    /// same model, so the key also serves in-run de-duplication and resume.
    pub fn prompt_key(&self) -> String {
        let mut h = Sha256::new();
        for part in [
            self.system.as_deref().unwrap_or("\u{0}"),
            "\u{1}",
            &self.user,
            "\u{1}",
            self.assistant_prefix.as_deref().unwrap_or("\u{0}"),
            "\u{1}",
        ] {
            h.update(part.as_bytes());
        }
        for o in &self.options {
            h.update(o.code.as_bytes());
            h.update(b"\x02");
            h.update(o.value.as_bytes());
            h.update(b"\x03");
        }
        h.update(format!("{:?}|{:?}", self.contract, self.decoding).as_bytes());
        // Only requests that have a closing context hash it: every other key is unchanged.
        if !self.closing_context.is_empty() {
            h.update(b"\x04closing");
            for name in &self.closing_context {
                h.update(b"\x02");
                h.update(name.as_bytes());
            }
        }
        hex::encode(h.finalize())
    }

    /// SHA-256 (hex) of the prompt's parts: system message, user message and assistant
    /// prefix (options, contract and decoding left out; see [`Request::prompt_key`]). It is not
    /// a hash of the rendered text, but for one model (tokenizer, chat template) and one run
    /// (the template time its manifest records) the parts determine that text: the run's
    /// `prompts/` dataset keeps each rendered text once under this key.
    pub fn prompt_sha256(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.system.as_deref().unwrap_or("").as_bytes());
        h.update(b"\x01");
        h.update(self.user.as_bytes());
        h.update(b"\x01");
        h.update(self.assistant_prefix.as_deref().unwrap_or("").as_bytes());
        hex::encode(h.finalize())
    }

    /// `item:arm:step:<first 12 hex of prompt_key>`: stable across runs and resumes.
    pub fn derive_id(&self) -> String {
        let key = self.prompt_key();
        format!("{}:{}:{}:{}", self.item_id, self.arm, self.step, &key[..12])
    }

    /// Option values in display order.
    pub fn values(&self) -> Vec<&str> {
        self.options.iter().map(|o| o.value.as_str()).collect()
    }
}

/// Why generation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FinishReason {
    /// End-of-turn / end-of-sequence token.
    Stop,
    /// The new-token budget ran out.
    Length,
}

/// What the model returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Answer {
    /// Probabilities aligned with the request's options (sum 1), natural-log based, and the
    /// engine's raw log-likelihoods behind them (`None` in answers recorded before they were
    /// kept).
    Scored {
        /// One per option, in display order; they sum to 1.
        probabilities: Vec<f64>,
        /// The engine's per-option log-probabilities before normalizing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw: Option<OptionLogprobs>,
    },
    /// Greedy text.
    Generated {
        /// The generated text, unparsed.
        text: String,
        /// End of turn or an exhausted budget.
        finish_reason: FinishReason,
        /// The new-token budget ran out before the answer ended.
        truncated: bool,
    },
}

/// The raw scores of a scored answer, aligned with the request's options: what the engine
/// computed before normalizing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptionLogprobs {
    /// Natural-log probability of each option's token sequence (summed over its tokens).
    pub logprobs: Vec<f64>,
    /// Natural-log probability of each token of each option, in order (an end-of-turn token
    /// closing the option included): `logprobs[i]` is the sum of `token_logprobs[i]`.
    pub token_logprobs: Vec<Vec<f64>>,
}

impl OptionLogprobs {
    /// Tokens of each option (the closing end token included).
    pub fn token_counts(&self) -> Vec<u32> {
        self.token_logprobs.iter().map(|t| t.len() as u32).collect()
    }

    /// Whether the two lists align with `options` options.
    pub fn aligned(&self, options: usize) -> bool {
        self.logprobs.len() == options && self.token_logprobs.len() == options
    }
}

/// A model response with its costs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// The request answered ([`Request::request_id`]).
    pub request_id: String,
    /// Scored probabilities or generated text.
    pub answer: Answer,
    /// Tokens of the rendered prompt.
    pub prompt_tokens: u32,
    /// Tokens generated (0 for scored answers).
    pub completion_tokens: u32,
    /// Wall time of the model call (0 when answered from a cache).
    pub latency_ms: f64,
    /// Whether the answer came from de-duplication or a resumed run rather than the model.
    #[serde(default)]
    pub cached: bool,
}

/// An outage of a remote server that a run waited for (`[inference] max_outage_seconds`),
/// from the first fault to the first answer after it: recorded in the run's status, never
/// counted as failed requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outage {
    /// When the first fault was met (ms since the Unix epoch).
    pub started_ms: u64,
    /// How long the server could not be reached (so far, for one still on).
    pub seconds: f64,
    /// The first fault, e.g. `http://…/v1/completions: cannot connect: …`.
    pub cause: String,
    /// Attempts that met a fault while it lasted.
    pub faults: u64,
    /// The server answered again (false: still on, or the run gave up).
    pub recovered: bool,
}
