//! Building the configured engine and its batching service.

use std::time::Duration;

use anyhow::Context;

use c2s_config::RunConfig;
use c2s_operators::inference::{
    Engine, InferenceService, MistralRsEngine, ModelIdentity, PrefixEngine, PrefixEngineConfig,
    ServiceConfig, SimulatedEngine,
};

/// Load the configured engine (each timely worker owns one). `identity` is the model's
/// identity as computed once for the manifest, so no worker hashes the model again.
pub fn load_engine(cfg: &RunConfig, identity: &ModelIdentity) -> anyhow::Result<Box<dyn Engine>> {
    let path = &cfg.model.path;
    Ok(match cfg.model.engine.as_str() {
        "prefix" => Box::new(
            PrefixEngine::load_with_identity(
                path,
                PrefixEngineConfig {
                    cache_bytes: cfg.model.cache_mb << 20,
                    ..Default::default()
                },
                Some(identity.clone()),
            )
            .with_context(|| format!("loading {}", path.display()))?,
        ),
        "mistralrs" => Box::new(
            MistralRsEngine::load_with_identity(path, Some(identity.clone()))
                .with_context(|| format!("loading {} with mistral.rs", path.display()))?,
        ),
        "simulated" => Box::new(SimulatedEngine::new(cfg.run.option_seed)),
        other => anyhow::bail!("unknown engine `{other}`"),
    })
}

/// The batching service over the configured engine.
pub fn start_service(
    cfg: &RunConfig,
    identity: &ModelIdentity,
) -> anyhow::Result<InferenceService> {
    let engine = load_engine(cfg, identity)?;
    Ok(InferenceService::start(
        engine,
        ServiceConfig {
            max_batch: cfg.inference.max_batch,
            max_in_flight: cfg.inference.max_in_flight,
            linger: Duration::from_millis(cfg.inference.linger_ms),
            dedup: true,
        },
    ))
}
