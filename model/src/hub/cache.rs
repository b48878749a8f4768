//! The Hugging Face cache layout of one repository, which files a safetensors snapshot needs,
//! and resolving a revision from the cache alone (offline mode, an unreachable endpoint).

use std::path::{Path, PathBuf};

use super::{HubError, HubModel, HubSnapshot};

/// Files every safetensors snapshot needs.
const REQUIRED: [&str; 3] = ["config.json", "tokenizer.json", "tokenizer_config.json"];
/// Files taken when the repository has them.
const OPTIONAL: [&str; 2] = ["generation_config.json", "chat_template.jinja"];
/// The index of sharded safetensors weights.
const INDEX: &str = "model.safetensors.index.json";
/// Unsharded weights.
const SINGLE: &str = "model.safetensors";

/// One repository in the hub cache: `CACHE/models--OWNER--NAME`.
#[derive(Debug, Clone)]
pub struct RepoCache {
    root: PathBuf,
}

/// A 40-hex-digit git commit id.
fn is_commit(revision: &str) -> bool {
    revision.len() == 40 && revision.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A file name directly in the snapshot directory (no `/`), ending in `.safetensors`.
fn is_top_level_safetensors(name: &str) -> bool {
    !name.contains('/') && name.ends_with(".safetensors")
}

impl RepoCache {
    /// The cache of `repo` (`OWNER/NAME`) under the hub cache directory `cache_dir`.
    pub fn new(cache_dir: &Path, repo: &str) -> RepoCache {
        RepoCache {
            root: cache_dir.join(format!("models--{}", repo.replace('/', "--"))),
        }
    }

    /// `models--OWNER--NAME`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `snapshots/<commit>`.
    pub fn snapshot_dir(&self, commit: &str) -> PathBuf {
        self.root.join("snapshots").join(commit)
    }

    /// `blobs/<etag>`.
    pub fn blob_path(&self, etag: &str) -> PathBuf {
        self.root.join("blobs").join(etag)
    }

    /// The snapshot of `commit` holds `file` (its link resolves).
    pub fn has_file(&self, commit: &str, file: &str) -> bool {
        self.snapshot_dir(commit).join(file).is_file()
    }

    /// The commit `refs/<revision>` records.
    pub fn read_ref(&self, revision: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.root.join("refs").join(revision)).ok()?;
        Some(text.trim().to_string()).filter(|c| !c.is_empty())
    }

    /// Record that `revision` is `commit` (`refs/<revision>`), replacing the file atomically.
    pub fn write_ref(&self, revision: &str, commit: &str) -> Result<(), HubError> {
        let path = self.root.join("refs").join(revision);
        let dir = path.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(dir).map_err(|e| HubError::io(dir, e))?;
        let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
        std::fs::write(&tmp, commit).map_err(|e| HubError::io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| HubError::io(&path, e))
    }

    /// Link `snapshots/<commit>/<file>` to `blobs/<etag>` (relative, as huggingface_hub
    /// does), replacing a dangling link.
    pub fn link(&self, commit: &str, file: &str, etag: &str) -> Result<(), HubError> {
        let pointer = self.snapshot_dir(commit).join(file);
        if pointer.is_file() {
            return Ok(());
        }
        let dir = pointer.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(dir).map_err(|e| HubError::io(dir, e))?;
        if pointer.symlink_metadata().is_ok() {
            std::fs::remove_file(&pointer).map_err(|e| HubError::io(&pointer, e))?;
        }
        let target = format!(
            "{}blobs/{etag}",
            "../".repeat(file.matches('/').count() + 2)
        );
        #[cfg(unix)]
        let linked = std::os::unix::fs::symlink(&target, &pointer);
        #[cfg(not(unix))]
        let linked = std::fs::copy(self.blob_path(etag), &pointer).map(|_| ());
        match linked {
            // Another process linked it first.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && pointer.is_file() => Ok(()),
            other => other.map_err(|e| HubError::io(&pointer, e)),
        }
    }

    /// The shard files that the weight index `index` of `commit` names.
    pub fn index_shards(
        &self,
        commit: &str,
        index: &str,
        model: &HubModel,
    ) -> Result<Vec<String>, HubError> {
        let path = self.snapshot_dir(commit).join(index);
        let text = std::fs::read_to_string(&path).map_err(|e| HubError::io(&path, e))?;
        let bad = |message: String| HubError::NotACheckpoint {
            repo: model.repo.clone(),
            revision: model.revision.clone(),
            problem: format!("{index}: {message}"),
        };
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
        let map = json
            .get("weight_map")
            .and_then(|m| m.as_object())
            .ok_or_else(|| bad("no `weight_map` object".into()))?;
        let mut shards: Vec<String> = Vec::new();
        for shard in map.values() {
            let shard = shard
                .as_str()
                .ok_or_else(|| bad("a `weight_map` value is not a file name".into()))?;
            if !is_top_level_safetensors(shard) || shard.starts_with('.') {
                return Err(bad(format!(
                    "`{shard}` is not a .safetensors file beside the index"
                )));
            }
            if !shards.iter().any(|s| s == shard) {
                shards.push(shard.to_string());
            }
        }
        if shards.is_empty() {
            return Err(bad("an empty `weight_map`".into()));
        }
        shards.sort();
        Ok(shards)
    }

    /// Resolve `model` from the cache alone; `why` says why the Hub is not asked (it ends
    /// the error when the cache cannot serve).
    pub fn resolve_offline(&self, model: &HubModel, why: &str) -> Result<HubSnapshot, HubError> {
        let missing = |problem: String| HubError::NotCached {
            repo: model.repo.clone(),
            revision: model.revision.clone(),
            cache: self.root.clone(),
            problem,
            why: why.to_string(),
        };
        let commit = if is_commit(&model.revision) && self.snapshot_dir(&model.revision).is_dir() {
            model.revision.clone()
        } else {
            self.read_ref(&model.revision)
                .ok_or_else(|| missing(format!("no refs/{}: never downloaded", model.revision)))?
        };
        let dir = self.snapshot_dir(&commit);
        if !dir.is_dir() {
            return Err(missing(format!("no snapshot {commit}")));
        }
        let lacks = |file: &str| missing(format!("snapshot {commit} has no {file}"));
        let path = match &model.file {
            Some(file) => {
                if !self.has_file(&commit, file) {
                    return Err(lacks(file));
                }
                dir.join(file)
            }
            None => {
                for file in REQUIRED {
                    if !self.has_file(&commit, file) {
                        return Err(lacks(file));
                    }
                }
                if self.has_file(&commit, INDEX) {
                    for shard in self.index_shards(&commit, INDEX, model)? {
                        if !self.has_file(&commit, &shard) {
                            return Err(lacks(&shard));
                        }
                    }
                } else if !self.has_file(&commit, SINGLE) && !self.any_safetensors(&dir) {
                    return Err(lacks("*.safetensors"));
                }
                dir
            }
        };
        Ok(HubSnapshot {
            path,
            model: model.clone(),
            commit,
            downloaded: Vec::new(),
            downloaded_bytes: 0,
            cache_only: Some(why.to_string()),
        })
    }

    fn any_safetensors(&self, dir: &Path) -> bool {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.filter_map(Result::ok).any(|e| {
                e.path().is_file() && is_top_level_safetensors(&e.file_name().to_string_lossy())
            })
        })
    }
}

/// What a safetensors snapshot downloads, from the repository's file list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DirectoryPlan {
    /// Config, tokenizer and template files, and unsharded weights.
    pub files: Vec<String>,
    /// `model.safetensors.index.json` when the weights are sharded (its shards follow).
    pub index: Option<String>,
}

impl DirectoryPlan {
    pub fn from_siblings(model: &HubModel, siblings: &[String]) -> Result<DirectoryPlan, HubError> {
        let has = |name: &str| siblings.iter().any(|s| s == name);
        let not_checkpoint = |problem: String| HubError::NotACheckpoint {
            repo: model.repo.clone(),
            revision: model.revision.clone(),
            problem,
        };
        let mut files: Vec<String> = Vec::new();
        for name in REQUIRED {
            if !has(name) {
                return Err(not_checkpoint(format!("no {name}")));
            }
            files.push(name.to_string());
        }
        files.extend(OPTIONAL.iter().filter(|n| has(n)).map(|n| n.to_string()));
        let index = has(INDEX).then(|| INDEX.to_string());
        if index.is_none() {
            if has(SINGLE) {
                files.push(SINGLE.to_string());
            } else {
                let weights: Vec<&String> = siblings
                    .iter()
                    .filter(|s| is_top_level_safetensors(s))
                    .collect();
                if weights.is_empty() {
                    return Err(not_checkpoint("no *.safetensors weights".into()));
                }
                files.extend(weights.into_iter().cloned());
            }
        }
        Ok(DirectoryPlan { files, index })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> HubModel {
        HubModel {
            repo: "o/n".into(),
            revision: "main".into(),
            file: None,
        }
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_plan_takes_the_loader_files_and_the_weights() {
        let siblings = names(&[
            ".gitattributes",
            "README.md",
            "config.json",
            "generation_config.json",
            "model.safetensors",
            "onnx/model.safetensors",
            "tokenizer.json",
            "tokenizer_config.json",
            "vocab.json",
        ]);
        let plan = DirectoryPlan::from_siblings(&model(), &siblings).unwrap();
        assert_eq!(
            plan.files,
            names(&[
                "config.json",
                "tokenizer.json",
                "tokenizer_config.json",
                "generation_config.json",
                "model.safetensors"
            ])
        );
        assert_eq!(plan.index, None);
        let sharded = names(&[
            "config.json",
            "tokenizer.json",
            "tokenizer_config.json",
            "model.safetensors.index.json",
            "model-00001-of-00002.safetensors",
            "model-00002-of-00002.safetensors",
        ]);
        let plan = DirectoryPlan::from_siblings(&model(), &sharded).unwrap();
        assert_eq!(plan.index.as_deref(), Some(INDEX));
        assert_eq!(plan.files.len(), 3, "the shards come from the index");
        let gguf_only = names(&[
            "config.json",
            "tokenizer.json",
            "tokenizer_config.json",
            "m.gguf",
        ]);
        let e = DirectoryPlan::from_siblings(&model(), &gguf_only).unwrap_err();
        assert!(e.to_string().contains("no *.safetensors"), "{e}");
        assert!(e.to_string().contains("hf_file"), "{e}");
    }

    #[test]
    fn the_layout_is_huggingface_hubs() {
        let c = RepoCache::new(Path::new("/c"), "Qwen/Qwen3-0.6B");
        assert_eq!(c.root(), Path::new("/c/models--Qwen--Qwen3-0.6B"));
        assert_eq!(
            c.snapshot_dir("abc"),
            Path::new("/c/models--Qwen--Qwen3-0.6B/snapshots/abc")
        );
        assert!(is_commit(&"a".repeat(40)));
        assert!(!is_commit("main"));
    }
}
