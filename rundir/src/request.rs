//! One request of a run directory, as `choice2seq show RUN REQUEST_ID` and the live page's
//! `/request/ID` show it: its row in `requests/`, the text the model read from `prompts/`
//! (joined on `prompt_sha256`), and its options' token ids under the run's model tokenizer.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use serde_json::{json, Value};

use c2s_config::EngineKind;
use c2s_model::EngineError;
use c2s_sinks::{find_prompt, find_request, PromptRow, Rendering, RequestRow};

/// What a run directory records of one request.
#[derive(Debug, Clone)]
pub struct RequestView {
    /// The run directory that holds the request (the first of several that has it).
    pub run_dir: PathBuf,
    /// Its row of `requests/`: options, probabilities or generated text, answer, cost.
    pub request: RequestRow,
    /// Its row of `prompts/`; `None` when the run has none (the simulated engine, a run from
    /// before the dataset existed, a prompt the template could not render).
    pub prompt: Option<PromptRow>,
    /// Token ids of each option code as the engine scores it
    /// (`ModelTokenizer::option_tokens`), or why they are unknown.
    pub option_tokens: Result<Vec<Vec<u32>>, TokensUnknown>,
}

/// Why a request cannot be shown.
#[derive(Debug)]
pub enum LookupError {
    /// Not a run directory (a user error: exit 2).
    NoRun(PathBuf),
    /// No such request in the run (a user error: exit 2).
    NoRequest {
        /// The run directory searched (the last one, when several were).
        dir: PathBuf,
        /// The request id asked for.
        id: String,
    },
    /// The run directory could not be read.
    Read(anyhow::Error),
}

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LookupError::NoRun(dir) => write!(
                f,
                "{}: not a run directory (no manifest.json and no requests/)",
                dir.display()
            ),
            LookupError::NoRequest { dir, id } => {
                write!(f, "{}: no request `{id}` in requests/", dir.display())
            }
            LookupError::Read(e) => write!(f, "{e:#}"),
        }
    }
}

impl std::error::Error for LookupError {}

impl From<anyhow::Error> for LookupError {
    fn from(e: anyhow::Error) -> LookupError {
        LookupError::Read(e)
    }
}

/// Whether `dir` looks like a run directory.
pub fn is_run_dir(dir: &Path) -> bool {
    dir.join(c2s_sinks::MANIFEST_FILE).is_file() || dir.join("requests").is_dir()
}

/// Request `id` of `run_dir`.
pub fn request_view(run_dir: &Path, id: &str) -> Result<RequestView, LookupError> {
    if !is_run_dir(run_dir) {
        return Err(LookupError::NoRun(run_dir.to_path_buf()));
    }
    let request = find_request(&run_dir.join("requests"), id)
        .with_context(|| format!("reading {}/requests", run_dir.display()))?
        .ok_or_else(|| LookupError::NoRequest {
            dir: run_dir.to_path_buf(),
            id: id.to_string(),
        })?;
    let prompt = find_prompt(&run_dir.join("prompts"), &request.prompt_sha256)
        .with_context(|| format!("reading {}/prompts", run_dir.display()))?;
    let option_tokens = option_tokens(run_dir, &request);
    Ok(RequestView {
        run_dir: run_dir.to_path_buf(),
        request,
        prompt,
        option_tokens,
    })
}

/// Request `id` in the first of `dirs` that holds it (the live page over several runs).
pub fn find_in(dirs: &[PathBuf], id: &str) -> Result<RequestView, LookupError> {
    let mut last = None;
    for dir in dirs {
        match request_view(dir, id) {
            Err(e @ (LookupError::NoRequest { .. } | LookupError::NoRun(_))) => last = Some(e),
            other => return other,
        }
    }
    Err(last.unwrap_or_else(|| LookupError::Read(anyhow::anyhow!("no run directory"))))
}

/// The option codes' token ids under the model the run recorded (`[model] path`).
fn option_tokens(run_dir: &Path, request: &RequestRow) -> Result<Vec<Vec<u32>>, TokensUnknown> {
    let config = super::recorded_config(run_dir).map_err(|e| TokensUnknown::Config {
        source: Arc::new(e),
    })?;
    let model = config.model.ok_or(TokensUnknown::NoModel)?;
    if !model.reads_model_path() {
        return Err(TokensUnknown::NoTokenizer {
            engine: model.engine,
        });
    }
    let tok =
        c2s_model::load_tokenizer(&model.path).map_err(|source| TokensUnknown::Tokenizer {
            path: model.path.clone(),
            source,
        })?;
    tok.option_tokens(&request.option_codes)
        .map_err(|source| TokensUnknown::Encode { source })
}

/// Why a request's option token ids are unknown ([`RequestView::option_tokens`]): the view
/// shows the request without them and prints this text in their place.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TokensUnknown {
    /// The run's recorded config could not be read (`manifest.json`); the text has its
    /// causes.
    #[error("{source:#}")]
    Config {
        /// The read error (shared: the view is cloned).
        #[source]
        source: Arc<anyhow::Error>,
    },
    /// The recorded config has no `[model]` section.
    #[error("the manifest records no [model] section")]
    NoModel,
    /// The run's engine loads no model file here (the simulated engine, a served model
    /// without `[model] path`), so there is no tokenizer to read.
    #[error("the {} engine reads no tokenizer here", engine.as_str())]
    NoTokenizer {
        /// The engine the config records.
        engine: EngineKind,
    },
    /// The tokenizer at the recorded `[model] path` could not be loaded.
    #[error("{}: {source}", path.display())]
    Tokenizer {
        /// The recorded model path.
        path: PathBuf,
        /// The loader's error.
        #[source]
        source: EngineError,
    },
    /// The option codes do not tokenize as the engine scores them (for example two that
    /// share their tokens).
    #[error("{source}")]
    Encode {
        /// The tokenizer's error.
        #[source]
        source: EngineError,
    },
}

/// The view as JSON: the request row's columns, the prompt and the options with their tokens.
pub fn view_json(v: &RequestView) -> Value {
    let r = &v.request;
    let tokens = v.option_tokens.as_ref().ok();
    let options: Vec<Value> = r
        .option_codes
        .iter()
        .zip(&r.option_values)
        .enumerate()
        .map(|(i, (code, value))| {
            json!({
                "code": code,
                "value": value,
                "token_ids": tokens.and_then(|t| t.get(i)),
                "probability": r.probabilities.as_ref().and_then(|p| p.get(i)),
                "logprob": r.option_logprobs.as_ref().and_then(|p| p.get(i)),
            })
        })
        .collect();
    json!({
        "run_dir": v.run_dir.display().to_string(),
        "request_id": r.request_id,
        "item_id": r.item_id,
        "arm": r.arm,
        "step": r.step,
        "model": r.model,
        "decoding": r.decoding,
        "contract": r.contract,
        "prompt_sha256": r.prompt_sha256,
        "system": r.system,
        "user": r.user,
        "assistant_prefix": r.assistant_prefix,
        "prompt": v.prompt.as_ref().map(|p| json!({
            "rendering": p.rendering.as_str(),
            "text": p.prompt,
            "text_sha256": p.text_sha256,
            "n_tokens": p.n_tokens,
        })),
        "options": options,
        "option_tokens_error": v.option_tokens.as_ref().err().map(ToString::to_string),
        "choice": r.choice,
        "validity": r.validity,
        "response_text": r.response_text,
        "finish_reason": r.finish_reason,
        "truncated": r.truncated,
        "prompt_tokens": r.prompt_tokens,
        "completion_tokens": r.completion_tokens,
        "latency_ms": r.latency_ms,
        "cached": r.cached,
        "error": r.error,
    })
}

/// The view as text: the prompt verbatim between marker lines, then options and answer.
pub fn view_text(v: &RequestView) -> String {
    use std::fmt::Write;
    let r = &v.request;
    let mut s = String::new();
    let _ = writeln!(s, "request   {}", r.request_id);
    let _ = writeln!(s, "run       {}", v.run_dir.display());
    let _ = writeln!(s, "item      {}  arm {}  step {}", r.item_id, r.arm, r.step);
    let _ = writeln!(s, "model     {}", r.model);
    let _ = writeln!(s, "decoding  {}  contract {}", r.decoding, r.contract);
    let _ = writeln!(s, "prompt    sha256 {}", r.prompt_sha256);
    match &v.prompt {
        Some(p) if p.prompt.is_some() => {
            let text = p.prompt.as_deref().unwrap_or_default();
            let _ = writeln!(
                s,
                "          rendered with the chat template: {} tokens, text sha256 {}",
                p.n_tokens.map_or("?".into(), |n| n.to_string()),
                p.text_sha256.as_deref().unwrap_or("?")
            );
            let _ = writeln!(s, "----- prompt (verbatim) -----");
            s.push_str(text);
            if !text.ends_with('\n') {
                s.push('\n');
            }
            let _ = writeln!(s, "----- end of prompt -----");
        }
        other => {
            let why = match other.as_ref().map(|p| p.rendering) {
                Some(Rendering::Server) => {
                    "the server rendered these messages with its own chat template"
                }
                _ => {
                    "not in prompts/ (a simulated run, a run from before prompts/ existed, or a \
                     prompt the chat template could not render); the messages"
                }
            };
            let _ = writeln!(s, "          {why}:");
            if let Some(system) = &r.system {
                let _ = writeln!(s, "----- system -----\n{system}");
            }
            let _ = writeln!(s, "----- user -----\n{}", r.user);
            if let Some(prefix) = &r.assistant_prefix {
                let _ = writeln!(s, "----- assistant prefix -----\n{prefix}");
            }
            let _ = writeln!(s, "----- end of messages -----");
        }
    }
    let _ = writeln!(s, "options:");
    let _ = writeln!(
        s,
        "  {:<6} {:<12} {:<20} {:>11}",
        "code", "value", "token ids", "probability"
    );
    let tokens = v.option_tokens.as_ref().ok();
    for (i, (code, value)) in r.option_codes.iter().zip(&r.option_values).enumerate() {
        let ids = tokens
            .and_then(|t| t.get(i))
            .map_or("?".to_string(), |t| format!("{t:?}"));
        let p = r
            .probabilities
            .as_ref()
            .and_then(|p| p.get(i))
            .map_or(String::new(), |p| format!("{p:.6}"));
        let _ = writeln!(s, "  {code:<6} {value:<12} {ids:<20} {p:>11}");
    }
    if let Err(e) = &v.option_tokens {
        let _ = writeln!(s, "  (token ids unknown: {e})");
    }
    let _ = writeln!(
        s,
        "answer    {}{}",
        r.choice.as_deref().unwrap_or("(no listed option)"),
        r.validity
            .as_deref()
            .map(|c| format!("  ({c})"))
            .unwrap_or_default()
    );
    if let Some(text) = &r.response_text {
        let _ = writeln!(
            s,
            "generated {text:?}  (finish {}, truncated {})",
            r.finish_reason.as_deref().unwrap_or("?"),
            r.truncated.map_or("?".into(), |t| t.to_string())
        );
    }
    let _ = writeln!(
        s,
        "cost      {} prompt tokens, {} completion tokens, {:.1} ms{}",
        r.prompt_tokens,
        r.completion_tokens,
        r.latency_ms,
        if r.cached { ", cached" } else { "" }
    );
    if let Some(e) = &r.error {
        let _ = writeln!(s, "error     {e}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text `show` prints where the token ids would be.
    #[test]
    fn tokens_unknown_messages() {
        let config = TokensUnknown::Config {
            source: Arc::new(anyhow::anyhow!("bad json").context("reading runs/a/manifest.json")),
        };
        assert_eq!(config.to_string(), "reading runs/a/manifest.json: bad json");
        assert_eq!(
            TokensUnknown::NoModel.to_string(),
            "the manifest records no [model] section"
        );
        let engine = TokensUnknown::NoTokenizer {
            engine: EngineKind::Simulated,
        };
        assert_eq!(
            engine.to_string(),
            "the simulated engine reads no tokenizer here"
        );
        let tokenizer = TokensUnknown::Tokenizer {
            path: PathBuf::from("models/m.gguf"),
            source: EngineError::Tokenizer("no vocabulary".into()),
        };
        assert_eq!(
            tokenizer.to_string(),
            "models/m.gguf: tokenizer: no vocabulary"
        );
        let encode = TokensUnknown::Encode {
            source: EngineError::Request("options share tokens".into()),
        };
        assert_eq!(encode.to_string(), "request: options share tokens");
    }
}
