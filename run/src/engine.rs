//! Building the configured engine and its batching service.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use c2s_config::{EngineKind, RunConfig};
use c2s_model::{
    Engine, InferenceService, ModelIdentity, OutageWatch, PrefixEngine, PrefixEngineConfig,
    ServiceConfig, SimulatedEngine, TemplateTime,
};
use c2s_records::{Evidence, Request};

/// Load the configured engine (each timely worker owns one). `identity` is the model's
/// identity as computed once for the manifest, so no worker hashes the model again;
/// `template_time` is what chat templates' `strftime_now` reports (the run's recorded start);
/// `outages` is the process's watch of a remote server's outages (the openai engine waits
/// for an unreachable server through it).
pub fn load_engine(
    cfg: &RunConfig,
    identity: &ModelIdentity,
    template_time: TemplateTime,
    outages: Option<Arc<OutageWatch>>,
) -> anyhow::Result<Box<dyn Engine>> {
    let path = &cfg.model.path;
    Ok(match cfg.model.engine {
        EngineKind::Prefix => Box::new(
            PrefixEngine::load_with_identity(
                path,
                PrefixEngineConfig {
                    cache_bytes: cfg.model.cache_mb << 20,
                    prefix_reuse: cfg.model.prefix_reuse,
                    template_time: Some(template_time),
                    dtype: cfg.model.dtype,
                    ..Default::default()
                },
                Some(identity.clone()),
            )
            .with_context(|| format!("loading {}", path.display()))?,
        ),
        #[cfg(feature = "mistralrs")]
        EngineKind::Mistralrs => Box::new(
            c2s_model::MistralRsEngine::load_with(
                path,
                &c2s_model::MistralRsSettings {
                    template_time: Some(template_time),
                    ..mistralrs_settings(cfg)
                },
                Some(identity.clone()),
            )
            .with_context(|| format!("loading {} with mistral.rs", path.display()))?,
        ),
        #[cfg(feature = "openai")]
        EngineKind::Openai => {
            let settings = c2s_model::OpenAiSettings {
                outages,
                ..openai_settings(cfg)?
            };
            // The server was probed once, before the workers started (crate::model_identity).
            let info = c2s_model::ServerInfo::from_identity(identity)
                .context("the model identity holds no server probe")?;
            Box::new(c2s_model::OpenAiEngine::new(
                &settings,
                info,
                served_tokenizer(cfg, template_time)?,
                Some(identity.clone()),
            )?)
        }
        EngineKind::Simulated => {
            let _ = outages; // only a remote engine has outages
            Box::new(SimulatedEngine::new(cfg.run.option_seed))
        }
        #[allow(unreachable_patterns)] // every engine is compiled in by default
        other => anyhow::bail!(
            "engine `{other}` is not compiled into this binary (build with its cargo feature)"
        ),
    })
}

/// The mistral.rs engine's settings from `[model.mistralrs]` (the mode defaults to the build's:
/// native in a `cuda` build, the f32 reference otherwise).
#[cfg(feature = "mistralrs")]
pub fn mistralrs_settings(cfg: &RunConfig) -> c2s_model::MistralRsSettings {
    let m = &cfg.model.mistralrs;
    c2s_model::MistralRsSettings {
        mode: mistralrs_mode(m.mode),
        paged_attention: m.paged_attention,
        kv_cache_tokens: m.kv_cache_tokens,
        max_sequences: m.max_sequences,
        prefix_cache: m.prefix_cache,
        dtype: m.dtype.as_str().to_string(),
        template_time: None,
    }
}

/// The mistral.rs mode a config (or `bench engine --mode`) names, or the build's default.
#[cfg(feature = "mistralrs")]
pub fn mistralrs_mode(mode: Option<c2s_config::MistralRsMode>) -> c2s_model::MistralRsMode {
    mode.unwrap_or_else(c2s_model::mistralrs_default_mode)
}

/// The `openai` engine's settings from `[model.openai]`.
#[cfg(feature = "openai")]
pub fn openai_settings(cfg: &RunConfig) -> anyhow::Result<c2s_model::OpenAiSettings> {
    let o = cfg
        .model
        .openai
        .as_ref()
        .context("the openai engine needs [model.openai]")?;
    Ok(c2s_model::OpenAiSettings {
        base_url: o.base_url.clone(),
        model: o.model.clone(),
        api_key_env: o.api_key_env.clone(),
        timeout: Duration::from_secs_f64(o.timeout_s),
        concurrency: o.concurrency,
        max_retries: o.max_retries,
        retry_backoff: Duration::from_millis(o.retry_backoff_ms),
        generation_endpoint: o.generation_endpoint,
        scoring: match o.scoring {
            c2s_config::OpenAiScoring::Echo => c2s_model::ScoringMethod::Echo,
            c2s_config::OpenAiScoring::TopLogprobs => {
                c2s_model::ScoringMethod::TopLogprobs(o.top_logprobs)
            }
            c2s_config::OpenAiScoring::LogitBias => {
                c2s_model::ScoringMethod::LogitBias(o.top_logprobs)
            }
        },
        chat_template_kwargs: o.chat_template_kwargs.clone(),
        max_response_bytes: o.max_response_bytes,
        insecure_skip_verify: o.insecure_skip_verify,
        outages: None,
    })
}

/// The served model's tokenizer and chat template, when `[model] path` names them.
#[cfg(feature = "openai")]
pub fn served_tokenizer(
    cfg: &RunConfig,
    template_time: TemplateTime,
) -> anyhow::Result<Option<c2s_model::tokenizer::ModelTokenizer>> {
    if cfg.model.path.as_os_str().is_empty() {
        return Ok(None);
    }
    Ok(Some(pinned_tokenizer(cfg, template_time)?))
}

/// The tokenizer and chat template at `[model] path`, rendering with `template_time`.
pub fn pinned_tokenizer(
    cfg: &RunConfig,
    template_time: TemplateTime,
) -> anyhow::Result<c2s_model::tokenizer::ModelTokenizer> {
    let mut tokenizer = c2s_model::load_tokenizer(&cfg.model.path)
        .with_context(|| format!("reading {}", cfg.model.path.display()))?;
    tokenizer.set_template_time(template_time)?;
    Ok(tokenizer)
}

/// The run's pinned tokenizer as D.9's token counter, when an arm asks for token-matched
/// padding: the model's own tokenizer and chat template, rendering and encoding a request as
/// the prefix and mistral.rs engines do for the prompt they are sent
/// ([`ModelTokenizer::prompt_tokens`](c2s_model::tokenizer::ModelTokenizer::prompt_tokens)).
/// The config has refused such arms without a model path.
pub fn token_counter(
    cfg: &RunConfig,
    pinned: Option<Arc<c2s_model::tokenizer::ModelTokenizer>>,
) -> anyhow::Result<Option<c2s_protocol::TokenCounterRef>> {
    if !cfg
        .arms
        .iter()
        .any(|a| a.evidence == Evidence::PaddedTokens)
    {
        return Ok(None);
    }
    let tokenizer = pinned.context("token-matched padding needs the model's tokenizer")?;
    Ok(Some(c2s_protocol::TokenCounterRef(Arc::new(
        PinnedTokenizer(tokenizer),
    ))))
}

/// [`token_counter`]'s counter.
struct PinnedTokenizer(Arc<c2s_model::tokenizer::ModelTokenizer>);

impl c2s_protocol::PromptTokenCounter for PinnedTokenizer {
    fn prompt_tokens(&self, request: &Request) -> Result<u32, c2s_protocol::PromptTokensError> {
        self.0
            .prompt_tokens(&c2s_model::PromptSpec::from_request(request))
            .map(|t| t.len() as u32)
            .map_err(c2s_protocol::PromptTokensError::new)
    }
}

/// The batching service over the configured engine.
pub fn start_service(
    cfg: &RunConfig,
    identity: &ModelIdentity,
    template_time: TemplateTime,
    tally: std::sync::Arc<c2s_model::AnswerTally>,
    outages: Option<Arc<OutageWatch>>,
) -> anyhow::Result<InferenceService> {
    let engine = load_engine(cfg, identity, template_time, outages)?;
    Ok(InferenceService::start_counted(
        engine,
        ServiceConfig {
            max_batch: cfg.inference.max_batch,
            max_in_flight: cfg.inference.max_in_flight,
            linger: Duration::from_millis(cfg.inference.linger_ms),
            dedup: cfg.inference.dedup,
            continuous: cfg.inference.batching == c2s_config::Batching::Continuous,
        },
        tally,
    ))
}

/// The tokenizer and chat template this process renders prompts with, read once at start-up
/// for the template probe and the token counter: None where no template is rendered here
/// (the simulated engine; a served model without `[model] path`).
pub fn run_tokenizer(
    cfg: &RunConfig,
    template_time: TemplateTime,
) -> anyhow::Result<Option<c2s_model::tokenizer::ModelTokenizer>> {
    if !cfg.model.reads_model_path() {
        return Ok(None);
    }
    Ok(Some(pinned_tokenizer(cfg, template_time)?))
}

/// Render one probe conversation of each message shape the run sends — a user message, and
/// a system message then a user message where an arm has a system text (the readout
/// templates) — with the chat template the engine will use, so that a template that cannot
/// render them (an unknown filter or method, a `raise_exception` for a role) stops the run
/// before any work instead of failing every request.
pub fn check_chat_template(
    cfg: &RunConfig,
    tokenizer: &c2s_model::tokenizer::ModelTokenizer,
) -> anyhow::Result<()> {
    let user = r#"{"state": "", "question": "Which option is next?", "options": {"A": "a"}}"#;
    let mut shapes: Vec<(String, Option<&str>)> = vec![("a user message".into(), None)];
    for arm in &cfg.arms {
        if let Some(system) = c2s_protocol::prompts::system_message(arm) {
            if !shapes.iter().any(|(_, s)| *s == Some(system)) {
                shapes.push((
                    format!("arm {}: a system message then a user message", arm.label()),
                    Some(system),
                ));
            }
        }
    }
    for (shape, system) in shapes {
        let probe = c2s_model::PromptSpec {
            system: system.map(str::to_string),
            user: user.to_string(),
            assistant_prefix: None,
        };
        tokenizer.render_prompt(&probe).with_context(|| {
            format!(
                "the chat template of {} cannot render {shape}",
                cfg.model.path.display()
            )
        })?;
    }
    Ok(())
}

/// Read the model's configuration as its engine will (without its weights), so that a
/// checkpoint whose settings the engine cannot honour (a RoPE type, a missing field) stops the
/// run before any work, naming the field; and check every tensor's bytes against the model
/// files' lengths (headers only), so that a truncated or inconsistent file stops it too,
/// naming the tensor.
pub fn check_model_config(cfg: &RunConfig) -> anyhow::Result<()> {
    let path = &cfg.model.path;
    // The served (`openai`) engine reads only the tokenizer and chat template at `[model]
    // path`, when it names one.
    if cfg.model.reads_model_path() {
        c2s_model::check_model_files(path)?;
    }
    match cfg.model.engine {
        EngineKind::Prefix => {
            c2s_model::engines::prefix::transformer::Transformer::check_config(path)?;
        }
        #[cfg(feature = "mistralrs")]
        EngineKind::Mistralrs if path.is_dir() => {
            c2s_model::engines::mistralrs::hf_config_for_mistralrs(path)?;
        }
        _ => {}
    }
    Ok(())
}
