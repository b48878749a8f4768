//! The `prompts/` dataset: what the model saw. Each distinct prompt of a run (its system
//! message, user message and assistant prefix, keyed by `Request::prompt_sha256`) is written
//! once with the exact text it was rendered to and its token count.
//!
//! **Where the text comes from.** Every engine that renders a prompt — prefix, mistral.rs, and
//! the `openai` engine for scored requests and its `completions` endpoint — renders it with
//! [`ModelTokenizer::render_prompt`] (the chat template with `add_generation_prompt = true`
//! and `enable_thinking = false`, then the assistant prefix). The run holds that same
//! tokenizer, read from `[model] path` with the template time the manifest records
//! (`chat_template_time`, which the engines render with too), so the sink renders each new
//! key once with it: the text is the engine's by construction. Rendering here rather than
//! carrying the text out of the engine keeps the engine interface and its answers as they are
//! (no kilobytes of text on every response, through the dataflow and the answer cache, only to
//! be dropped for all but the first request of a prompt), costs one render per distinct
//! prompt, and needs no engine to record the prompts of answers a resumed run replays.
//!
//! **Once per run.** Prompt records go to the worker that owns their key
//! (`route(prompt_sha256)`, across processes too), which writes a key once; keys already in
//! `prompts/` (a resumed run, [`ResumeState::prompt_keys`]) are not written again. A resume
//! first writes the prompts of recorded requests that `prompts/` lacks ([`backfill`]: a kill
//! between the two datasets' parts, or a run begun before `prompts/` existed), so every
//! request row of a run finds its prompt.
//!
//! **What cannot be known.** The `openai` engine sends a generated request without an
//! assistant prefix to `/chat/completions` when `[model.openai] generation_endpoint = "chat"`:
//! the server applies its own template, so its row says `rendering = "server"` with a null
//! text ([`PromptRecorder::rendering`] mirrors the engine's choice). The simulated engine
//! renders nothing: its runs have no `prompts/` rows. A prompt the chat template cannot render
//! has no row either (its request failed with that error in `requests/`).

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange as ExchangePact;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::Map;
use timely::dataflow::StreamVec;

use c2s_config::{EngineKind, GenerationEndpoint, RunConfig};
use c2s_model::tokenizer::ModelTokenizer;
use c2s_model::{EngineError, PromptSpec};
use c2s_operators::messages::{route, Exchange};
use c2s_operators::sink_op::{sink, WriteHealth};
use c2s_records::{Decoding, Request};
use c2s_sinks::{PartWriter, PromptRow, Rendering};

use super::outputs::{open, part_config, DatasetSink, ResumeState};
use super::worker::PART_CHECK;

/// A request's prompt on its way to the worker that owns its key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptParts {
    /// `Request::prompt_sha256`.
    pub key: String,
    /// The system message, user message and assistant prefix to render.
    pub spec: PromptSpec,
    /// Who renders it: this process's chat template, or the server (then the row has no
    /// text).
    pub rendering: Rendering,
}

/// Why a prompt has no `prompts/` row: the recorder logs it and writes the run's other
/// prompts.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PromptError {
    /// The run has no tokenizer of its own (a served model without `[model] path`), so only
    /// prompts the server renders can be recorded.
    #[error("no tokenizer and chat template ([model] path) to render with")]
    NoTokenizer,
    /// The chat template could not render the prompt (the request failed with the same
    /// error).
    #[error("{source}")]
    Render {
        /// The tokenizer's error.
        #[source]
        source: EngineError,
    },
    /// The rendered text could not be tokenized to count its tokens.
    #[error("{source}")]
    Encode {
        /// The tokenizer's error.
        #[source]
        source: EngineError,
    },
}

/// How this run's prompts are rendered: the run's tokenizer and chat template, and whether a
/// server renders generated prompts itself.
pub struct PromptRecorder {
    tokenizer: Option<Arc<ModelTokenizer>>,
    server_chat: bool,
}

impl PromptRecorder {
    /// The recorder of a run whose engine renders prompts (`None` for the simulated engine,
    /// which renders none). `tokenizer` is the run's pinned tokenizer (rendering with the
    /// manifest's template time); a served model without `[model] path` has none, and then
    /// only server-rendered prompts are recorded.
    pub fn new(
        cfg: &RunConfig,
        tokenizer: Option<Arc<ModelTokenizer>>,
    ) -> Option<Arc<PromptRecorder>> {
        if cfg.model.engine.is_simulated() {
            return None;
        }
        let server_chat = cfg.model.engine == EngineKind::Openai
            && cfg
                .model
                .openai
                .as_ref()
                .is_some_and(|o| o.generation_endpoint == GenerationEndpoint::Chat);
        Some(Arc::new(PromptRecorder {
            tokenizer,
            server_chat,
        }))
    }

    /// Who renders `request`'s prompt: the server for a generated request without an assistant
    /// prefix on the chat endpoint (as `OpenAiEngine::generate_one` chooses), this process's
    /// chat template otherwise.
    pub fn rendering(&self, request: &Request) -> Rendering {
        let generated = matches!(request.decoding, Decoding::Greedy { .. });
        self.rendering_of(generated, request.assistant_prefix.is_some())
    }

    fn rendering_of(&self, generated: bool, assistant_prefix: bool) -> Rendering {
        if self.server_chat && generated && !assistant_prefix {
            Rendering::Server
        } else {
            Rendering::ChatTemplate
        }
    }

    /// What `request`'s `prompts/` row is made from: its prompt key, its messages and who
    /// renders it.
    pub fn parts(&self, request: &Request) -> PromptParts {
        PromptParts {
            key: request.prompt_sha256(),
            spec: PromptSpec::from_request(request),
            rendering: self.rendering(request),
        }
    }

    /// The row of a prompt: rendered and tokenized here, or marked as the server's.
    pub fn row(&self, parts: &PromptParts) -> Result<PromptRow, PromptError> {
        match parts.rendering {
            Rendering::Server => Ok(PromptRow::by_server(&parts.key)),
            Rendering::ChatTemplate => {
                let tok = self.tokenizer.as_ref().ok_or(PromptError::NoTokenizer)?;
                let text = tok
                    .render_prompt(&parts.spec)
                    .map_err(|source| PromptError::Render { source })?;
                let tokens = tok
                    .encode(&text)
                    .map_err(|source| PromptError::Encode { source })?;
                Ok(PromptRow::rendered(&parts.key, text, tokens.len() as u32))
            }
        }
    }
}

/// The prompts of `exchanges`, each at the worker that owns its key.
fn route_prompts<'s>(
    exchanges: StreamVec<'s, u64, Exchange>,
    recorder: Arc<PromptRecorder>,
) -> StreamVec<'s, u64, PromptParts> {
    exchanges
        .map(move |x: Exchange| recorder.parts(&x.request))
        .unary::<CapacityContainerBuilder<Vec<PromptParts>>, _, _, _>(
            ExchangePact::new(|p: &PromptParts| route(&p.key)),
            "RoutePrompts",
            |_, _| {
                move |input, output| {
                    input.for_each(|cap, data| {
                        output.session(&cap).give_iterator(data.drain(..));
                    });
                }
            },
        )
}

/// One worker's `prompts/` writer and the recorder it renders with.
pub(super) struct PromptOutput {
    sink: DatasetSink<PromptParts, PromptRow>,
    recorder: Arc<PromptRecorder>,
}

/// Write the prompts of `exchanges` to `prompts/` (the returned stream's frontier passes a
/// time once they are written).
pub(super) fn sink_prompts<'s>(
    exchanges: StreamVec<'s, u64, Exchange>,
    out: PromptOutput,
    writes: &Arc<WriteHealth>,
) -> StreamVec<'s, u64, ()> {
    let prompts = route_prompts(exchanges, out.recorder);
    sink(prompts, out.sink, "prompts", PART_CHECK, writes.clone())
}

/// The `prompts/` writer of one worker: each key it owns once, none already recorded.
pub(super) fn prompt_output(
    run_dir: &Path,
    worker: usize,
    cfg: &RunConfig,
    resume: &ResumeState,
    recorder: Arc<PromptRecorder>,
) -> anyhow::Result<PromptOutput> {
    let done = resume.prompt_keys.clone();
    let mut seen: HashSet<String> = HashSet::new();
    let renderer = recorder.clone();
    let sink = open(run_dir, worker, cfg, move |p: PromptParts| {
        if done.contains(&p.key) || !seen.insert(p.key.clone()) {
            return None;
        }
        match renderer.row(&p) {
            Ok(row) => Some(row),
            Err(e) => {
                tracing::warn!("prompts: prompt {} is not recorded: {e}", p.key);
                None
            }
        }
    })?;
    Ok(PromptOutput { sink, recorder })
}

/// Write the prompts of recorded requests that `prompts/` lacks (a run killed after a request
/// part closed but before its prompts' part did, or begun before `prompts/` existed) as one
/// part of worker 0, and count them as recorded, before the workers start. Process 0 writes
/// (`write`); the other processes of a cluster only count them as recorded. Returns the
/// prompts written.
pub fn backfill(
    run_dir: &Path,
    cfg: &RunConfig,
    recorder: &PromptRecorder,
    resume: &mut ResumeState,
    write: bool,
) -> anyhow::Result<usize> {
    let missing = std::mem::take(&mut resume.unrecorded_prompts);
    if missing.is_empty() {
        return Ok(0);
    }
    if !write {
        let mut keys = (*resume.prompt_keys).clone();
        keys.extend(missing.into_iter().map(|p| p.key));
        resume.prompt_keys = Arc::new(keys);
        return Ok(0);
    }
    let mut writer = PartWriter::<PromptRow>::open(run_dir, 0, part_config(cfg))
        .with_context(|| format!("opening {}/prompts", run_dir.display()))?;
    let mut keys = (*resume.prompt_keys).clone();
    for p in missing {
        let parts = PromptParts {
            rendering: recorder.rendering_of(p.greedy, p.spec.assistant_prefix.is_some()),
            key: p.key,
            spec: p.spec,
        };
        match recorder.row(&parts) {
            Ok(row) => {
                keys.insert(row.prompt_sha256.clone());
                writer.push(row);
            }
            Err(e) => tracing::warn!("prompts: prompt {} is not recorded: {e}", parts.key),
        }
    }
    let written = writer.buffered();
    writer
        .finish()
        .with_context(|| format!("writing {}/prompts", run_dir.display()))?;
    resume.prompt_keys = Arc::new(keys);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::{EngineError, PromptError};

    /// What the recorder logs for a prompt it cannot record.
    #[test]
    fn prompt_error_messages() {
        assert_eq!(
            PromptError::NoTokenizer.to_string(),
            "no tokenizer and chat template ([model] path) to render with"
        );
        let render = PromptError::Render {
            source: EngineError::Model("no chat template".into()),
        };
        assert_eq!(render.to_string(), "model: no chat template");
        let encode = PromptError::Encode {
            source: EngineError::Tokenizer("bad text".into()),
        };
        assert_eq!(encode.to_string(), "tokenizer: bad text");
    }
}
