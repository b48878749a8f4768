//! A run directory's `manifest.json`, read back with types. The sinks crate stores the
//! resolved config and the model identity as JSON (it knows neither type); they deserialize
//! here with the config and model crates' own types, which serialized them (`run/src/outputs.rs`,
//! `write_manifest_for`). Readers ask these fields, never JSON keys. (The model identity reads
//! back with `c2s_model::ModelIdentity` where it is compared or shown: resume, the monitor.)

use std::path::Path;

use anyhow::Context;
use serde::Deserialize;

use c2s_config::{CoverageSection, DialogueSection, ModelSection, StatsSection};
use c2s_sinks::{read_manifest, Manifest};

/// The sections of a recorded config that readers of run directories use, each with its
/// config type. A section the run did not have is `None`; the other sections (arms, sources,
/// inference, …) are the config's business and not read back.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RecordedConfig {
    /// `[model]`: the engine and model file the run used (the token replays read its
    /// tokenizer).
    #[serde(default)]
    pub model: Option<ModelSection>,
    /// `[stats]`: the run's bootstrap draws, seed, contrasts and cells, which offline
    /// recomputation starts from.
    #[serde(default)]
    pub stats: Option<StatsSection>,
    /// `[coverage]`: a candidate-coverage run.
    #[serde(default)]
    pub coverage: Option<CoverageSection>,
    /// `[dialogue]`: a dialogue-state run.
    #[serde(default)]
    pub dialogue: Option<DialogueSection>,
}

impl RecordedConfig {
    /// The config of `manifest`; `file` names the manifest in the error.
    pub fn of(manifest: &Manifest, file: &Path) -> anyhow::Result<RecordedConfig> {
        RecordedConfig::deserialize(&manifest.config)
            .with_context(|| format!("{}: config", file.display()))
    }
}

/// A run directory's manifest with its recorded config typed.
#[derive(Debug, Clone)]
pub struct RecordedRun {
    /// The manifest as written (status, sources, model identity, config as JSON).
    pub manifest: Manifest,
    /// Its `config`, deserialized.
    pub config: RecordedConfig,
}

/// The manifest of `run_dir` with its config typed; `None` when there is no manifest (a run
/// that never started). Errors name the file and the section that does not read.
pub fn recorded(run_dir: &Path) -> anyhow::Result<Option<RecordedRun>> {
    let file = run_dir.join(c2s_sinks::MANIFEST_FILE);
    let Some(manifest) =
        read_manifest(run_dir).with_context(|| format!("reading {}", file.display()))?
    else {
        return Ok(None);
    };
    let config = RecordedConfig::of(&manifest, &file)?;
    Ok(Some(RecordedRun { manifest, config }))
}

/// The recorded config of `run_dir` (empty without a manifest).
pub fn recorded_config(run_dir: &Path) -> anyhow::Result<RecordedConfig> {
    Ok(recorded(run_dir)?.map(|r| r.config).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `choice2seq run` writes reads back: the item, coverage and dialogue smoke configs
    /// serialized as the manifest records them.
    #[test]
    fn every_protocols_resolved_config_reads_back_typed() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for (name, coverage, dialogue) in [
            ("quickstart.toml", false, false),
            ("coverage-smoke.toml", true, false),
            ("dialogue-smoke.toml", false, true),
        ] {
            let path = root.join("config").join(name);
            let text = std::fs::read_to_string(&path).unwrap();
            let cfg = c2s_config::parse_in(&text, &path, &root).unwrap();
            let manifest = Manifest::new("r", serde_json::to_value(&cfg).unwrap(), "m".into());
            let back = RecordedConfig::of(&manifest, Path::new("manifest.json")).unwrap();
            assert_eq!(back.coverage.is_some(), coverage, "{name}");
            assert_eq!(back.dialogue.is_some(), dialogue, "{name}");
            let stats = back.stats.unwrap();
            assert_eq!(stats.bootstrap_draws, cfg.stats.bootstrap_draws, "{name}");
            assert_eq!(stats.seed, cfg.stats.seed, "{name}");
            assert_eq!(back.model.unwrap().path, cfg.model.path, "{name}");
        }
    }

    #[test]
    fn a_section_that_does_not_read_is_an_error_naming_it() {
        let manifest = Manifest::new(
            "r",
            serde_json::json!({"stats": {"bootstrap_draws": "many"}}),
            "m".into(),
        );
        let err = RecordedConfig::of(&manifest, Path::new("run/manifest.json")).unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("run/manifest.json: config"), "{msg}");
        assert!(
            msg.contains("bootstrap_draws") || msg.contains("invalid type"),
            "{msg}"
        );
    }
}
