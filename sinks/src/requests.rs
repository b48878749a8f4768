//! The `requests` dataset: one row per model request with its response (or error).

use std::sync::Arc;

use arrow::datatypes::{DataType, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use c2s_records::{Answer, Contract, FinishReason, Request, Response, StepRecord, INVALID_MARKER};

use crate::codes::{
    contract_str, decoding_string, finish_reason_str, parse_finish_reason, response_class_str,
};
use crate::columns::{self as col, field, list_field, next, Cols};
use crate::error::RowError;
use crate::row::Row;

/// One row of `requests/`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestRow {
    /// `item:arm:step:<first 12 hex of prompt_key>`; stable across runs.
    pub request_id: String,
    /// The item (or case, or dialogue) the request belongs to.
    pub item_id: String,
    /// Arm label.
    pub arm: String,
    /// One-based position; 0 for whole-answer arms.
    pub step: u32,
    /// Model name or identity (the manifest holds the full identity with file hashes).
    pub model: String,
    /// [`Request::prompt_key`]: the de-duplication and resume key.
    pub prompt_key: String,
    /// [`Request::prompt_sha256`]: hash of the prompt's parts (system, user, assistant
    /// prefix); the key of the rendered text in `prompts/`.
    pub prompt_sha256: String,
    /// System message (readout templates T0–T2); null when none.
    pub system: Option<String>,
    /// User message (JSON: question, options, response format, state).
    pub user: String,
    /// Text after the assistant boundary (PrefixContinue); null when none.
    pub assistant_prefix: Option<String>,
    /// `score` or `greedy:<max_new_tokens>`.
    pub decoding: String,
    /// `scored_code`, `generated_code`, `generated_character` or `generated_string`.
    pub contract: String,
    /// Displayed option codes, in display order.
    pub option_codes: Vec<String>,
    /// The values the codes are bound to, in display order.
    pub option_values: Vec<String>,
    /// Scored answers: probabilities aligned with the options.
    pub probabilities: Option<Vec<f64>>,
    /// The option value chosen; null when the answer is not a listed option (or failed).
    pub choice: Option<String>,
    /// Generated answers: the raw text.
    pub response_text: Option<String>,
    /// Generated answers: `stop` or `length`.
    pub finish_reason: Option<String>,
    /// Generated answers: the token budget ran out.
    pub truncated: Option<bool>,
    /// The step's response class (snake_case), when known.
    pub validity: Option<String>,
    /// Prompt tokens.
    pub prompt_tokens: u32,
    /// Generated tokens (0 for scored answers).
    pub completion_tokens: u32,
    /// Wall time of the model call in ms (0 when answered from a cache).
    pub latency_ms: f64,
    /// Answered from de-duplication or a resumed run rather than the model.
    pub cached: bool,
    /// Failed requests: the error; such rows carry no answer.
    pub error: Option<String>,
    /// Scored answers: the engine's natural-log probability of each option (summed over its
    /// tokens); null for generated answers, failures and rows written before it was kept.
    pub option_logprobs: Option<Vec<f64>>,
    /// Scored answers: each option's tokens (a closing end token included).
    pub option_token_counts: Option<Vec<u32>>,
    /// Scored answers: every option's token log-probabilities, one option after the other
    /// (split by `option_token_counts`).
    pub option_token_logprobs: Option<Vec<f64>>,
}

impl RequestRow {
    /// The row of an answered request. `step` (the step record the response produced, when
    /// the caller has it) supplies the validity class and the chosen value; without it the
    /// choice is the scored argmax (ties by display order) or the generated text when, after
    /// trimming outer whitespace, it is exactly a listed value (or, for the code contract, a
    /// listed code).
    pub fn from_response(
        request: &Request,
        response: &Response,
        step: Option<&StepRecord>,
        model: &str,
    ) -> RequestRow {
        let mut row = RequestRow::base(request, model);
        match &response.answer {
            Answer::Scored { probabilities, raw } => {
                row.probabilities = Some(probabilities.clone());
                let (counts, flat) = crate::decisions::raw_columns(raw.as_ref());
                row.option_logprobs = raw.as_ref().map(|r| r.logprobs.clone());
                row.option_token_counts = counts;
                row.option_token_logprobs = flat;
            }
            Answer::Generated {
                text,
                finish_reason,
                truncated,
            } => {
                row.response_text = Some(text.clone());
                row.finish_reason = Some(finish_reason_str(*finish_reason).to_string());
                row.truncated = Some(*truncated);
            }
        }
        row.choice = match step {
            Some(s) if s.emitted != INVALID_MARKER.to_string() => Some(s.emitted.clone()),
            Some(_) => None,
            None => choice_of(request, &response.answer),
        };
        row.validity = step
            .and_then(|s| s.class)
            .map(|c| response_class_str(c).to_string());
        row.prompt_tokens = response.prompt_tokens;
        row.completion_tokens = response.completion_tokens;
        row.latency_ms = response.latency_ms;
        row.cached = response.cached;
        row
    }

    /// The row of a request that failed with `error` (no answer; not reused on resume).
    pub fn failed(request: &Request, model: &str, error: &str, latency_ms: f64) -> RequestRow {
        let mut row = RequestRow::base(request, model);
        row.error = Some(error.to_string());
        row.latency_ms = latency_ms;
        row
    }

    fn base(request: &Request, model: &str) -> RequestRow {
        RequestRow {
            request_id: request.request_id.clone(),
            item_id: request.item_id.clone(),
            arm: request.arm.clone(),
            step: request.step,
            model: model.to_string(),
            prompt_key: request.prompt_key(),
            prompt_sha256: request.prompt_sha256(),
            system: request.system.clone(),
            user: request.user.clone(),
            assistant_prefix: request.assistant_prefix.clone(),
            decoding: decoding_string(request.decoding),
            contract: contract_str(request.contract).to_string(),
            option_codes: request.options.iter().map(|o| o.code.clone()).collect(),
            option_values: request.options.iter().map(|o| o.value.clone()).collect(),
            probabilities: None,
            choice: None,
            response_text: None,
            finish_reason: None,
            truncated: None,
            validity: None,
            prompt_tokens: 0,
            completion_tokens: 0,
            latency_ms: 0.0,
            cached: false,
            error: None,
            option_logprobs: None,
            option_token_counts: None,
            option_token_logprobs: None,
        }
    }
}

impl From<(&Request, &Response, Option<&StepRecord>, &str)> for RequestRow {
    fn from(
        (request, response, step, model): (&Request, &Response, Option<&StepRecord>, &str),
    ) -> RequestRow {
        RequestRow::from_response(request, response, step, model)
    }
}

fn choice_of(request: &Request, answer: &Answer) -> Option<String> {
    match answer {
        Answer::Scored { probabilities, .. } => {
            let mut best: Option<(usize, f64)> = None;
            for (i, &p) in probabilities.iter().enumerate() {
                if p.is_nan() {
                    continue;
                }
                if best.is_none_or(|(_, b)| p > b) {
                    best = Some((i, p));
                }
            }
            best.and_then(|(i, _)| request.options.get(i))
                .map(|o| o.value.clone())
        }
        Answer::Generated { text, .. } => {
            let t = text.trim();
            let by_code = request.contract == Contract::GeneratedCode;
            request
                .options
                .iter()
                .find(|o| if by_code { o.code == t } else { o.value == t })
                .map(|o| o.value.clone())
        }
    }
}

/// The `(prompt_key, Response)` a `requests` row records, for resume: the answer comes from
/// `probabilities` (scored) or from `response_text`, `finish_reason` and `truncated`
/// (generated). Rows of failed requests (`error` set) and rows without an answer are errors.
/// `cached` is returned as stored; a resumed run marks replayed answers itself.
pub fn response_from_row(row: &RequestRow) -> Result<(String, Response), RowError> {
    if let Some(e) = &row.error {
        return Err(RowError::new("error", format!("the request failed: {e}")));
    }
    let answer = match (&row.probabilities, &row.response_text) {
        (Some(p), None) => Answer::Scored {
            probabilities: p.clone(),
            raw: crate::decisions::raw_from_columns(
                row.option_logprobs.clone(),
                row.option_token_counts.clone(),
                row.option_token_logprobs.clone(),
            )?,
        },
        (None, Some(text)) => {
            let finish_reason: FinishReason = row
                .finish_reason
                .as_deref()
                .ok_or_else(|| RowError::new("finish_reason", "null for a generated answer"))
                .and_then(|s| {
                    parse_finish_reason(s).ok_or_else(|| {
                        RowError::new("finish_reason", format!("unknown value `{s}`"))
                    })
                })?;
            let truncated = row
                .truncated
                .ok_or_else(|| RowError::new("truncated", "null for a generated answer"))?;
            Answer::Generated {
                text: text.clone(),
                finish_reason,
                truncated,
            }
        }
        (Some(_), Some(_)) => {
            return Err(RowError::new(
                "probabilities",
                "both probabilities and response_text are set",
            ))
        }
        (None, None) => {
            return Err(RowError::new(
                "probabilities",
                "neither probabilities nor response_text is set",
            ))
        }
    };
    Ok((
        row.prompt_key.clone(),
        Response {
            request_id: row.request_id.clone(),
            answer,
            prompt_tokens: row.prompt_tokens,
            completion_tokens: row.completion_tokens,
            latency_ms: row.latency_ms,
            cached: row.cached,
        },
    ))
}

impl Row for RequestRow {
    const DATASET: &'static str = "requests";

    fn schema() -> SchemaRef {
        use DataType::{Boolean, Float64, UInt32, Utf8};
        Arc::new(Schema::new(vec![
            field("request_id", Utf8, false),
            field("item_id", Utf8, false),
            field("arm", Utf8, false),
            field("step", UInt32, false),
            field("model", Utf8, false),
            field("prompt_key", Utf8, false),
            field("prompt_sha256", Utf8, false),
            field("system", Utf8, true),
            field("user", Utf8, false),
            field("assistant_prefix", Utf8, true),
            field("decoding", Utf8, false),
            field("contract", Utf8, false),
            list_field("option_codes", Utf8, false),
            list_field("option_values", Utf8, false),
            list_field("probabilities", Float64, true),
            field("choice", Utf8, true),
            field("response_text", Utf8, true),
            field("finish_reason", Utf8, true),
            field("truncated", Boolean, true),
            field("validity", Utf8, true),
            field("prompt_tokens", UInt32, false),
            field("completion_tokens", UInt32, false),
            field("latency_ms", Float64, false),
            field("cached", Boolean, false),
            field("error", Utf8, true),
            list_field("option_logprobs", Float64, true),
            list_field("option_token_counts", UInt32, true),
            list_field("option_token_logprobs", Float64, true),
        ]))
    }

    fn to_batch(rows: &[Self]) -> Result<RecordBatch, ArrowError> {
        RecordBatch::try_new(
            Self::schema(),
            vec![
                col::utf8(rows.iter().map(|r| r.request_id.as_str())),
                col::utf8(rows.iter().map(|r| r.item_id.as_str())),
                col::utf8(rows.iter().map(|r| r.arm.as_str())),
                col::u32s(rows.iter().map(|r| r.step)),
                col::utf8(rows.iter().map(|r| r.model.as_str())),
                col::utf8(rows.iter().map(|r| r.prompt_key.as_str())),
                col::utf8(rows.iter().map(|r| r.prompt_sha256.as_str())),
                col::opt_utf8(rows.iter().map(|r| r.system.as_deref())),
                col::utf8(rows.iter().map(|r| r.user.as_str())),
                col::opt_utf8(rows.iter().map(|r| r.assistant_prefix.as_deref())),
                col::utf8(rows.iter().map(|r| r.decoding.as_str())),
                col::utf8(rows.iter().map(|r| r.contract.as_str())),
                col::list_utf8(rows.iter().map(|r| r.option_codes.as_slice())),
                col::list_utf8(rows.iter().map(|r| r.option_values.as_slice())),
                col::opt_list_f64(rows.iter().map(|r| r.probabilities.as_deref())),
                col::opt_utf8(rows.iter().map(|r| r.choice.as_deref())),
                col::opt_utf8(rows.iter().map(|r| r.response_text.as_deref())),
                col::opt_utf8(rows.iter().map(|r| r.finish_reason.as_deref())),
                col::opt_bools(rows.iter().map(|r| r.truncated)),
                col::opt_utf8(rows.iter().map(|r| r.validity.as_deref())),
                col::u32s(rows.iter().map(|r| r.prompt_tokens)),
                col::u32s(rows.iter().map(|r| r.completion_tokens)),
                col::f64s(rows.iter().map(|r| r.latency_ms)),
                col::bools(rows.iter().map(|r| r.cached)),
                col::opt_utf8(rows.iter().map(|r| r.error.as_deref())),
                col::opt_list_f64(rows.iter().map(|r| r.option_logprobs.as_deref())),
                col::opt_list_u32(rows.iter().map(|r| r.option_token_counts.as_deref())),
                col::opt_list_f64(rows.iter().map(|r| r.option_token_logprobs.as_deref())),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, RowError> {
        let c = Cols::new(batch, Self::schema());
        let mut request_id = c.utf8("request_id")?.into_iter();
        let mut item_id = c.utf8("item_id")?.into_iter();
        let mut arm = c.utf8("arm")?.into_iter();
        let mut step = c.u32("step")?.into_iter();
        let mut model = c.utf8("model")?.into_iter();
        let mut prompt_key = c.utf8("prompt_key")?.into_iter();
        let mut prompt_sha256 = c.utf8("prompt_sha256")?.into_iter();
        let mut system = c.opt_utf8("system")?.into_iter();
        let mut user = c.utf8("user")?.into_iter();
        let mut assistant_prefix = c.opt_utf8("assistant_prefix")?.into_iter();
        let mut decoding = c.utf8("decoding")?.into_iter();
        let mut contract = c.utf8("contract")?.into_iter();
        let mut option_codes = c.list_utf8("option_codes")?.into_iter();
        let mut option_values = c.list_utf8("option_values")?.into_iter();
        let mut probabilities = c.opt_list_f64("probabilities")?.into_iter();
        let mut choice = c.opt_utf8("choice")?.into_iter();
        let mut response_text = c.opt_utf8("response_text")?.into_iter();
        let mut finish_reason = c.opt_utf8("finish_reason")?.into_iter();
        let mut truncated = c.opt_bool("truncated")?.into_iter();
        let mut validity = c.opt_utf8("validity")?.into_iter();
        let mut prompt_tokens = c.u32("prompt_tokens")?.into_iter();
        let mut completion_tokens = c.u32("completion_tokens")?.into_iter();
        let mut latency_ms = c.f64("latency_ms")?.into_iter();
        let mut cached = c.bool("cached")?.into_iter();
        let mut error = c.opt_utf8("error")?.into_iter();
        let mut option_logprobs = c.opt_list_f64("option_logprobs")?.into_iter();
        let mut option_token_counts = c.opt_list_u32("option_token_counts")?.into_iter();
        let mut option_token_logprobs = c.opt_list_f64("option_token_logprobs")?.into_iter();
        Ok((0..c.len())
            .map(|_| RequestRow {
                request_id: next(&mut request_id),
                item_id: next(&mut item_id),
                arm: next(&mut arm),
                step: next(&mut step),
                model: next(&mut model),
                prompt_key: next(&mut prompt_key),
                prompt_sha256: next(&mut prompt_sha256),
                system: next(&mut system),
                user: next(&mut user),
                assistant_prefix: next(&mut assistant_prefix),
                decoding: next(&mut decoding),
                contract: next(&mut contract),
                option_codes: next(&mut option_codes),
                option_values: next(&mut option_values),
                probabilities: next(&mut probabilities),
                choice: next(&mut choice),
                response_text: next(&mut response_text),
                finish_reason: next(&mut finish_reason),
                truncated: next(&mut truncated),
                validity: next(&mut validity),
                prompt_tokens: next(&mut prompt_tokens),
                completion_tokens: next(&mut completion_tokens),
                latency_ms: next(&mut latency_ms),
                cached: next(&mut cached),
                error: next(&mut error),
                option_logprobs: next(&mut option_logprobs),
                option_token_counts: next(&mut option_token_counts),
                option_token_logprobs: next(&mut option_token_logprobs),
            })
            .collect())
    }
}
