//! Handing a model to mistral.rs: a private staging directory of links, so mistral.rs sees
//! only the model's own files, and a Hugging Face `config.json` in the layout mistral.rs 0.8.1
//! reads.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::EngineError;

/// A Hugging Face directory's `config.json` as mistral.rs 0.8.1 must be given it: in
/// transformers 4's layout
/// ([`transformers4_layout`](crate::engines::prefix::hf_config::transformers4_layout)), since
/// mistral.rs requires a top-level `rope_theta` (transformers 5 keeps it in
/// `rope_parameters`) and its defaults for omitted fields are not transformers'. What its
/// models would silently ignore is refused naming it: RoPE scaling other than llama3/linear
/// on llama, any RoPE scaling on Qwen (its Qwen configs have no `rope_scaling`), and a llama
/// head width other than hidden / heads. The pipeline calls this before any work.
pub fn hf_config_for_mistralrs(
    dir: &Path,
) -> Result<serde_json::Map<String, serde_json::Value>, EngineError> {
    use crate::engines::prefix::hf_config;
    let config_path = dir.join("config.json");
    let text = std::fs::read_to_string(&config_path)
        .map_err(|e| EngineError::model_file(&config_path, e))?;
    let obj: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
        .map_err(|e| EngineError::model_file(&config_path, format!("not a JSON object: {e}")))?;
    let parsed = hf_config::parse(&obj).map_err(|e| EngineError::model_file(&config_path, e))?;
    let c = &parsed.config;
    let refuse = |why: String| Err(EngineError::model_file(&config_path, why));
    use crate::engines::prefix::rope::RopeScaling;
    use crate::engines::prefix::transformer::Arch;
    match (&c.rope_scaling, c.arch) {
        (RopeScaling::Default, _) => {}
        (RopeScaling::Linear { .. } | RopeScaling::Llama3 { .. }, Arch::Llama) => {}
        (other, arch) => {
            return refuse(format!(
                "RoPE scaling {other:?}: mistral.rs 0.8.1's {} model would ignore it \
                 (use the prefix engine)",
                arch.name()
            ))
        }
    }
    if c.arch == Arch::Llama && c.head_dim * c.n_heads != c.hidden {
        return refuse(format!(
            "`head_dim` = {}: mistral.rs 0.8.1's llama model uses hidden / heads = {}",
            c.head_dim,
            c.hidden / c.n_heads.max(1)
        ));
    }
    hf_config::transformers4_layout(&obj).map_err(|e| EngineError::model_file(&config_path, e))
}

/// A directory holding only links to the model's files (and any file written in their place),
/// removed on drop.
pub(super) struct Staging {
    pub(super) dir: PathBuf,
}

impl Staging {
    /// A directory with one link, `file_name`, to `model`.
    pub(super) fn new(model: &Path, file_name: &str) -> Result<Staging, EngineError> {
        let staging = Staging::empty()?;
        staging.link(model, file_name)?;
        Ok(staging)
    }

    fn empty() -> Result<Staging, EngineError> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "c2s-mistralrs-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let staging = Staging { dir };
        let _ = std::fs::remove_dir_all(&staging.dir);
        std::fs::create_dir_all(&staging.dir).map_err(|e| staging.error(e))?;
        Ok(staging)
    }

    fn error(&self, e: std::io::Error) -> EngineError {
        EngineError::Model(format!("staging directory {}: {e}", self.dir.display()))
    }

    fn link(&self, target: &Path, file_name: &str) -> Result<(), EngineError> {
        let link = self.dir.join(file_name);
        #[cfg(unix)]
        std::os::unix::fs::symlink(target, &link).map_err(|e| self.error(e))?;
        #[cfg(not(unix))]
        std::fs::hard_link(target, &link)
            .or_else(|_| std::fs::copy(target, &link).map(|_| ()))
            .map_err(|e| self.error(e))?;
        Ok(())
    }

    /// A Hugging Face directory as mistral.rs 0.8.1 reads it: every file linked, and
    /// `config.json` replaced by [`hf_config_for_mistralrs`]'s.
    pub(super) fn hf_dir(dir: &Path) -> Result<Staging, EngineError> {
        let layout = hf_config_for_mistralrs(dir)?;
        let staging = Staging::empty()?;
        for entry in std::fs::read_dir(dir).map_err(|e| EngineError::model_file(dir, e))? {
            let entry = entry.map_err(|e| EngineError::model_file(dir, e))?;
            let name = entry.file_name().to_string_lossy().to_string();
            if name != "config.json" {
                let target = std::fs::canonicalize(entry.path())
                    .map_err(|e| EngineError::model_file(&entry.path(), e))?;
                staging.link(&target, &name)?;
            }
        }
        let json = serde_json::to_string_pretty(&layout)
            .map_err(|e| EngineError::Model(format!("config.json: {e}")))?;
        std::fs::write(staging.dir.join("config.json"), json).map_err(|e| staging.error(e))?;
        Ok(staging)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
