//! `[model] hf`: a model on the Hugging Face Hub, named by its repository id. Two spellings,
//! one meaning:
//!
//! ```toml
//! [model]
//! hf = "Qwen/Qwen3-0.6B"          # a safetensors repository
//! revision = "main"               # branch, tag or commit (default "main")
//! # hf_file = "qwen3-0.6b-q4_0.gguf"   # or one GGUF file of the repository
//! ```
//!
//! or `path = "hf:OWNER/NAME[/FILE.gguf][@REVISION]"` (`hf:Qwen/Qwen3-0.6B@main`,
//! `hf:unsloth/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q4_0.gguf@v1`): everything after the first `@` is
//! the revision (which may hold `/`, as in `refs/pr/1`), the first two path segments are the
//! repository and the rest is the file. The config crate only reads and checks the names; the
//! model crate's `hub` module downloads, and a run replaces `path` with the snapshot.

use thiserror::Error;

use crate::model::{EngineKind, ModelSection};

/// The prefix of `[model] path` that names a Hub model.
pub const HF_PATH_PREFIX: &str = "hf:";

/// The revision used when none is given.
pub const DEFAULT_REVISION: &str = "main";

/// A model on the Hugging Face Hub, as the config names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubModelRef {
    /// `OWNER/NAME`.
    pub repo: String,
    /// Branch, tag or commit.
    pub revision: String,
    /// One GGUF file (its path in the repository); `None`: a safetensors directory.
    pub file: Option<String>,
}

impl std::fmt::Display for HubModelRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.repo)?;
        if let Some(file) = &self.file {
            write!(f, "/{file}")?;
        }
        write!(f, "@{}", self.revision)
    }
}

/// A Hub repository segment (owner or name): letters, digits, `-`, `_`, `.`; neither `--` nor
/// `..`; not starting or ending with `-` or `.`; at most 96 characters.
fn valid_segment(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 96
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !s.contains("--")
        && !s.contains("..")
        && !s.starts_with(['-', '.'])
        && !s.ends_with(['-', '.'])
}

/// Why a Hub name (`[model] hf`, `revision`, `hf_file`, or a part of an `hf:` path) is
/// refused; the config error names the field, this the value.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HubNameError {
    /// Not `OWNER/NAME` with each a valid segment: letters, digits, `-`, `_`, `.`; no `--` or
    /// `..`; not starting or ending with `-` or `.`; at most 96 characters.
    #[error("`{repo}` is not a Hub repository id `OWNER/NAME` (letters, digits, `-`, `_`, `.`)")]
    RepoId {
        /// The repository id as written.
        repo: String,
    },
    /// Empty, or holding whitespace, a control character, `..`, or a leading or trailing `/`.
    #[error("`{revision}` is not a branch, tag or commit")]
    Revision {
        /// The revision as written.
        revision: String,
    },
    /// Not a relative `/`-separated path: an empty, `.` or `..` segment, a backslash or a
    /// control character.
    #[error("`{file}` is not a file path inside a repository")]
    FilePath {
        /// The file as written.
        file: String,
    },
    /// A path inside the repository, but not ending in `.gguf`.
    #[error("`{file}` is not a GGUF file (leave hf_file out for a safetensors repository)")]
    NotGguf {
        /// The file as written.
        file: String,
    },
}

/// `OWNER/NAME`, or why not.
pub fn check_repo_id(repo: &str) -> Result<(), HubNameError> {
    match repo.split_once('/') {
        Some((owner, name)) if valid_segment(owner) && valid_segment(name) => Ok(()),
        _ => Err(HubNameError::RepoId {
            repo: repo.to_string(),
        }),
    }
}

/// A branch, tag or commit: no whitespace, no `..`, no leading or trailing `/`.
pub fn check_revision(revision: &str) -> Result<(), HubNameError> {
    if revision.is_empty()
        || revision
            .chars()
            .any(|c| c.is_whitespace() || c.is_control())
        || revision.contains("..")
        || revision.starts_with('/')
        || revision.ends_with('/')
    {
        return Err(HubNameError::Revision {
            revision: revision.to_string(),
        });
    }
    Ok(())
}

/// A GGUF file's path in a repository: relative, `/`-separated, no `.` or `..` segment.
pub fn check_repo_file(file: &str) -> Result<(), HubNameError> {
    let segments_ok = file
        .split('/')
        .all(|s| !s.is_empty() && s != "." && s != ".." && !s.contains('\\'));
    if !segments_ok || file.chars().any(|c| c.is_control()) {
        return Err(HubNameError::FilePath {
            file: file.to_string(),
        });
    }
    if !file.to_ascii_lowercase().ends_with(".gguf") {
        return Err(HubNameError::NotGguf {
            file: file.to_string(),
        });
    }
    Ok(())
}

/// `hf:OWNER/NAME[/FILE][@REVISION]` (without its prefix) as a [`HubModelRef`].
pub fn parse_hf_path(rest: &str) -> Result<HubModelRef, HubNameError> {
    let (locator, revision) = match rest.split_once('@') {
        Some((l, r)) => (l, r),
        None => (rest, DEFAULT_REVISION),
    };
    let mut parts = locator.splitn(3, '/');
    let owner = parts.next().unwrap_or_default();
    let name = parts.next().unwrap_or_default();
    let repo = format!("{owner}/{name}");
    check_repo_id(&repo)?;
    check_revision(revision)?;
    let file = parts.next().map(str::to_string);
    if let Some(f) = &file {
        check_repo_file(f)?;
    }
    Ok(HubModelRef {
        repo,
        revision: revision.to_string(),
        file,
    })
}

impl ModelSection {
    /// The Hub model the section names, if any (after [`ModelSection::check`] has read a
    /// `path = "hf:…"` into `hf`, `hf_file` and `revision`).
    pub fn hub(&self) -> Option<HubModelRef> {
        Some(HubModelRef {
            repo: self.hf.clone()?,
            revision: self
                .revision
                .clone()
                .unwrap_or_else(|| DEFAULT_REVISION.to_string()),
            file: self.hf_file.clone(),
        })
    }

    /// Read `path = "hf:…"` into `hf`, `hf_file`, `revision`, and check the Hub fields; errors
    /// are (field, message).
    pub(crate) fn check_hub(&mut self) -> Result<(), (String, String)> {
        let path = self.path.to_string_lossy().to_string();
        if let Some(rest) = path.strip_prefix(HF_PATH_PREFIX) {
            if self.hf.is_some() || self.revision.is_some() || self.hf_file.is_some() {
                return Err((
                    "model.path".into(),
                    "an `hf:` path names the repository, file and revision itself: leave hf, \
                     hf_file and revision out"
                        .into(),
                ));
            }
            let r = parse_hf_path(rest).map_err(|e| ("model.path".to_string(), e.to_string()))?;
            self.hf = Some(r.repo);
            self.revision = Some(r.revision);
            self.hf_file = r.file;
            self.path = Default::default();
        } else if self.hf.is_some() && !self.path.as_os_str().is_empty() {
            return Err((
                "model.hf".into(),
                "set either hf (a Hub model) or path (a local file), not both".into(),
            ));
        }
        let Some(repo) = &self.hf else {
            for (field, set) in [
                ("model.revision", self.revision.is_some()),
                ("model.hf_file", self.hf_file.is_some()),
            ] {
                if set {
                    return Err((field.into(), "is only read with hf (a Hub model)".into()));
                }
            }
            return Ok(());
        };
        check_repo_id(repo).map_err(|e| ("model.hf".to_string(), e.to_string()))?;
        if let Some(r) = &self.revision {
            check_revision(r).map_err(|e| ("model.revision".to_string(), e.to_string()))?;
        }
        if let Some(f) = &self.hf_file {
            check_repo_file(f).map_err(|e| ("model.hf_file".to_string(), e.to_string()))?;
        }
        if matches!(self.engine, EngineKind::Openai | EngineKind::Simulated) {
            return Err((
                "model.hf".into(),
                format!(
                    "the {} engine loads no model files: give the served model's tokenizer as a \
                     local path",
                    self.engine
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_in, ConfigError, RunConfig};
    use std::path::Path;

    fn parse_model(model: &str) -> Result<RunConfig, ConfigError> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = format!(
            "[model]\n{model}\n\n[[sources]]\nkind = \"jsonl\"\npath = \"data/banks/arithmetic-dev.jsonl\"\n\n[[arms]]\narm = \"Native\"\n"
        );
        parse_in(&text, Path::new("test.toml"), &root)
    }

    fn hub_of(model: &str) -> HubModelRef {
        let cfg = parse_model(model).unwrap_or_else(|e| panic!("{model}: {e}"));
        assert!(
            cfg.model.path.as_os_str().is_empty(),
            "path is left for the run"
        );
        cfg.model.hub().expect("a Hub model")
    }

    fn error_of(model: &str) -> ConfigError {
        match parse_model(model) {
            Ok(_) => panic!("{model}: accepted"),
            Err(e) => e,
        }
    }

    #[test]
    fn both_spellings_name_the_same_model() {
        let main = HubModelRef {
            repo: "Qwen/Qwen3-0.6B".into(),
            revision: "main".into(),
            file: None,
        };
        assert_eq!(hub_of("hf = \"Qwen/Qwen3-0.6B\""), main);
        assert_eq!(hub_of("path = \"hf:Qwen/Qwen3-0.6B\""), main);
        let pinned = HubModelRef {
            revision: "refs/pr/1".into(),
            ..main.clone()
        };
        assert_eq!(
            hub_of("hf = \"Qwen/Qwen3-0.6B\"\nrevision = \"refs/pr/1\""),
            pinned
        );
        assert_eq!(hub_of("path = \"hf:Qwen/Qwen3-0.6B@refs/pr/1\""), pinned);
        let gguf = HubModelRef {
            repo: "unsloth/Qwen3-0.6B-GGUF".into(),
            revision: "v1".into(),
            file: Some("q4/Qwen3-0.6B-Q4_0.gguf".into()),
        };
        assert_eq!(
            hub_of("hf = \"unsloth/Qwen3-0.6B-GGUF\"\nhf_file = \"q4/Qwen3-0.6B-Q4_0.gguf\"\nrevision = \"v1\""),
            gguf
        );
        assert_eq!(
            hub_of("path = \"hf:unsloth/Qwen3-0.6B-GGUF/q4/Qwen3-0.6B-Q4_0.gguf@v1\""),
            gguf
        );
        assert_eq!(
            gguf.to_string(),
            "unsloth/Qwen3-0.6B-GGUF/q4/Qwen3-0.6B-Q4_0.gguf@v1"
        );
        // The mistral.rs engine loads Hub models too.
        let cfg = parse_model("hf = \"o/n\"\nengine = \"mistralrs\"").unwrap();
        assert!(cfg.model.reads_model_path());
    }

    #[test]
    fn bad_hub_names_are_config_errors_naming_the_field() {
        for (model, field, says) in [
            ("hf = \"Qwen3-0.6B\"", "model.hf", "OWNER/NAME"),
            ("hf = \"a/b/c\"", "model.hf", "OWNER/NAME"),
            ("hf = \"o/../n\"", "model.hf", "OWNER/NAME"),
            ("path = \"hf:Qwen3\"", "model.path", "OWNER/NAME"),
            (
                "hf = \"o/n\"\nrevision = \"\"",
                "model.revision",
                "branch, tag or commit",
            ),
            (
                "hf = \"o/n\"\nrevision = \"a b\"",
                "model.revision",
                "branch, tag or commit",
            ),
            (
                "hf = \"o/n\"\nhf_file = \"../x.gguf\"",
                "model.hf_file",
                "inside a repository",
            ),
            (
                "hf = \"o/n\"\nhf_file = \"model.safetensors\"",
                "model.hf_file",
                "GGUF",
            ),
            ("path = \"hf:o/n/x.bin\"", "model.path", "GGUF"),
            ("hf = \"o/n\"\npath = \"x.gguf\"", "model.hf", "either"),
            (
                "path = \"hf:o/n\"\nrevision = \"v1\"",
                "model.path",
                "leave hf",
            ),
            (
                "path = \"x.gguf\"\nrevision = \"v1\"",
                "model.revision",
                "only read with hf",
            ),
            (
                "path = \"x.gguf\"\nhf_file = \"a.gguf\"",
                "model.hf_file",
                "only read with hf",
            ),
            (
                "hf = \"o/n\"\nengine = \"simulated\"",
                "model.hf",
                "loads no model files",
            ),
        ] {
            let e = error_of(model);
            assert_eq!(e.field, field, "{model}: {e}");
            assert!(e.message.contains(says), "{model}: {e}");
        }
    }
}
