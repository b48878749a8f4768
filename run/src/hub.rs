//! `[model] hf`: a model named by its Hugging Face Hub id is resolved (downloaded into the
//! Hugging Face cache, or found there) before any work, and `[model] path` becomes its
//! snapshot, which the engines load as they load a local model. The settings come from the
//! environment here, at the edge: `HF_ENDPOINT`, `HF_HOME` / `HF_HUB_CACHE`, `HF_TOKEN`,
//! `HF_HUB_OFFLINE`.

use c2s_config::RunConfig;
use c2s_model::{HubIdentity, ModelIdentity};

/// A Hub model as resolved for this run: what the manifest records, and its short name.
#[derive(Debug, Clone)]
pub struct ResolvedHub {
    /// Repository, requested revision, the commit it resolved to and the GGUF file, as the
    /// manifest records them (a resume must resolve to the same commit: [`same_hub`]).
    pub identity: HubIdentity,
    /// The model's short name in the outputs (`ModelIdentity::name`): the GGUF file's stem,
    /// or the repository's name for a safetensors model.
    pub name: String,
}

/// Resolve `cfg`'s Hub model, if it names one, and point `[model] path` at its snapshot. An
/// error (a gated, missing or corrupted download, a wrong revision, a model not cached in
/// offline mode) names the repository, revision and file.
#[cfg(feature = "hub")]
pub fn resolve_hub_model(cfg: &mut RunConfig, quiet: bool) -> anyhow::Result<Option<ResolvedHub>> {
    use anyhow::Context;
    use c2s_model::hub::{resolve, HubModel, HubSettings};
    let Some(named) = cfg.model.hub() else {
        return Ok(None);
    };
    let settings = HubSettings::from_env();
    let model = HubModel {
        repo: named.repo,
        revision: named.revision,
        file: named.file,
    };
    let snapshot = resolve(&model, &settings)
        .with_context(|| format!("resolving {model} on the Hugging Face Hub"))?;
    if !quiet {
        let how = match (&snapshot.cache_only, snapshot.downloaded.len()) {
            (Some(why), _) => format!("from the cache ({why})"),
            (None, 0) => "cached".to_string(),
            (None, n) => format!(
                "downloaded {n} file{} ({:.1} MB)",
                if n == 1 { "" } else { "s" },
                snapshot.downloaded_bytes as f64 / 1e6
            ),
        };
        eprintln!(
            "model: {} is commit {}: {how}: {}",
            model,
            snapshot.commit,
            snapshot.path.display()
        );
    }
    cfg.model.path = snapshot.path.clone();
    Ok(Some(ResolvedHub {
        identity: snapshot.identity(),
        name: snapshot.name(),
    }))
}

/// Without the `hub` feature a Hub model is refused before any work.
#[cfg(not(feature = "hub"))]
pub fn resolve_hub_model(cfg: &mut RunConfig, _quiet: bool) -> anyhow::Result<Option<ResolvedHub>> {
    match cfg.model.hub() {
        None => Ok(None),
        Some(named) => anyhow::bail!(
            "{named}: models by Hugging Face Hub id are not compiled into this binary (build \
             with the `hub` feature)"
        ),
    }
}

/// `identity` with the Hub model's origin and name.
pub fn with_hub(mut identity: ModelIdentity, hub: Option<ResolvedHub>) -> ModelIdentity {
    if let Some(hub) = hub {
        identity.name = hub.name;
        identity.hub = Some(hub.identity);
    }
    identity
}

/// A resumed run's Hub model must be the one it started with: same repository, file and
/// commit (a branch that moved since is refused). `Err` says what differs. Models that are
/// not both from the Hub are compared by their files' hashes alone.
pub fn same_hub(
    recorded: Option<&HubIdentity>,
    now: Option<&HubIdentity>,
) -> Result<(), HubMismatch> {
    let (Some(was), Some(now)) = (recorded, now) else {
        return Ok(());
    };
    let mismatch = HubMismatch {
        was: Box::new(was.clone()),
        now: Box::new(now.clone()),
    };
    if mismatch.differences().is_empty() {
        Ok(())
    } else {
        Err(mismatch)
    }
}

/// A resumed run's Hub model is not the one it started with ([`same_hub`]): another
/// repository or file, or a revision that now resolves to another commit. Its text lists
/// what differs, comma-separated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.differences().join(", "))]
pub struct HubMismatch {
    /// The Hub model the run directory's manifest records (boxed, as is `now`: the error
    /// stays small).
    pub was: Box<HubIdentity>,
    /// The Hub model the config resolves to now.
    pub now: Box<HubIdentity>,
}

impl HubMismatch {
    /// What differs, one phrase each: the repository or file, then the commit.
    fn differences(&self) -> Vec<String> {
        let (was, now) = (&self.was, &self.now);
        let mut differs = Vec::new();
        if was.repo != now.repo || was.file != now.file {
            differs.push(format!(
                "the Hub model was {}{} and is now {}{}",
                was.repo,
                was.file
                    .as_deref()
                    .map(|f| format!("/{f}"))
                    .unwrap_or_default(),
                now.repo,
                now.file
                    .as_deref()
                    .map(|f| format!("/{f}"))
                    .unwrap_or_default(),
            ));
        }
        if was.commit != now.commit {
            differs.push(format!(
                "revision {} was commit {} and {} is now commit {}",
                was.revision, was.commit, now.revision, now.commit
            ));
        }
        differs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hub(repo: &str, commit: &str) -> HubIdentity {
        HubIdentity {
            repo: repo.into(),
            revision: "main".into(),
            commit: commit.into(),
            file: None,
        }
    }

    #[test]
    fn a_resume_needs_the_same_repository_and_commit() {
        let a = hub("o/n", "aaa");
        assert!(same_hub(Some(&a), Some(&a)).is_ok());
        assert!(same_hub(None, Some(&a)).is_ok());
        let moved = same_hub(Some(&a), Some(&hub("o/n", "bbb")))
            .unwrap_err()
            .to_string();
        assert!(moved.contains("aaa") && moved.contains("bbb"), "{moved}");
        let other = same_hub(Some(&a), Some(&hub("o/m", "aaa")))
            .unwrap_err()
            .to_string();
        assert!(other.contains("o/m"), "{other}");
    }

    /// The mismatch's text: each difference, in order, comma-separated.
    #[test]
    fn hub_mismatch_message() {
        let mut now = hub("o/m", "bbb");
        now.file = Some("m.gguf".into());
        let e = same_hub(Some(&hub("o/n", "aaa")), Some(&now)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the Hub model was o/n and is now o/m/m.gguf, \
             revision main was commit aaa and main is now commit bbb"
        );
        let e = same_hub(Some(&hub("o/n", "aaa")), Some(&hub("o/n", "ccc"))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "revision main was commit aaa and main is now commit ccc"
        );
    }
}
