//! Model identity: what answered a request — file hash, tokenizer, chat template, engine.
//! A run directory records it in its manifest and resumes only with the same identity.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::engine::ModelIdentity;
use crate::error::EngineError;
use crate::tokenizer::ModelTokenizer;

/// SHA-256 of a file, streamed.
pub fn file_sha256(path: &Path) -> Result<String, EngineError> {
    use std::io::Read;
    let mut f =
        std::fs::File::open(path).map_err(|e| EngineError::model_file(path, e.to_string()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| EngineError::model_file(path, e.to_string()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// SHA-256 of a model: of the GGUF file, or, for a Hugging Face directory, of the list of its
/// weight, config and template files (`name sha256` lines, sorted by name).
pub fn model_sha256(path: &Path) -> Result<String, EngineError> {
    if !path.is_dir() {
        return file_sha256(path);
    }
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(path)
        .map_err(|e| EngineError::model_file(path, e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .is_some_and(|x| x == "safetensors" || x == "json" || x == "jinja")
        })
        .collect();
    files.sort();
    let mut h = Sha256::new();
    for f in &files {
        let name = f.file_name().map(|n| n.to_string_lossy().to_string());
        h.update(format!("{} {}\n", name.unwrap_or_default(), file_sha256(f)?).as_bytes());
    }
    Ok(hex::encode(h.finalize()))
}

/// Model identity of a GGUF file or a Hugging Face directory.
pub fn model_identity(
    path: &Path,
    tokenizer: &ModelTokenizer,
    engine: &str,
) -> Result<ModelIdentity, EngineError> {
    let name = if path.is_dir() {
        path.file_name()
    } else {
        path.file_stem()
    }
    .map(|s| s.to_string_lossy().to_string())
    .unwrap_or_else(|| "model".into());
    let tokenizer_name = format!("{} vocab={}", tokenizer.kind, tokenizer.vocab_size());
    Ok(ModelIdentity {
        name,
        path: path.display().to_string(),
        file_sha256: model_sha256(path)?,
        tokenizer: tokenizer_name,
        chat_template_sha256: hex::encode(Sha256::digest(
            tokenizer.chat_template().unwrap_or("").as_bytes(),
        )),
        engine: engine.to_string(),
        remote: None,
        hub: None,
    })
}

/// A model's tokenizer: from a GGUF file's metadata, or from a Hugging Face directory.
pub fn load_tokenizer(path: &Path) -> Result<ModelTokenizer, EngineError> {
    if path.is_dir() {
        return ModelTokenizer::from_hf_dir(path);
    }
    let mut file =
        std::fs::File::open(path).map_err(|e| EngineError::model_file(path, e.to_string()))?;
    let ct = crate::model_files::read_gguf(&mut file, path)?;
    ModelTokenizer::from_gguf(&ct)
}
