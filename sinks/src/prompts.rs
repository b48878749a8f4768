//! The `prompts` dataset: the text each distinct prompt of a run was rendered to, once per
//! run. A request row names its prompt by [`Request::prompt_sha256`](c2s_records::Request)
//! (system, user and assistant prefix), which for one model and one run determines the text;
//! join `requests.prompt_sha256 = prompts.prompt_sha256`.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use arrow::datatypes::{DataType, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::columns::{self as col, field, next, Cols};
use crate::error::{RowError, SinkError};
use crate::row::Row;

/// Who turned a prompt's messages into the text the model read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rendering {
    /// This process, with the model's chat template (`ModelTokenizer::render_prompt`):
    /// `prompt` is the exact text the engine tokenized.
    #[default]
    ChatTemplate,
    /// A served model's server (the `openai` engine's chat endpoint): the messages were sent
    /// and the server applied its own template; the text is unknown here.
    Server,
}

impl Rendering {
    /// The column value: `chat_template` or `server`.
    pub fn as_str(self) -> &'static str {
        match self {
            Rendering::ChatTemplate => "chat_template",
            Rendering::Server => "server",
        }
    }

    /// The rendering a column value names; `None` for any other text.
    pub fn parse(s: &str) -> Option<Rendering> {
        [Rendering::ChatTemplate, Rendering::Server]
            .into_iter()
            .find(|r| r.as_str() == s)
    }
}

/// One row of `prompts/`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PromptRow {
    /// [`Request::prompt_sha256`](c2s_records::Request::prompt_sha256): the key, shared with
    /// the request rows of this prompt.
    pub prompt_sha256: String,
    /// Who rendered it (the column holds [`Rendering::as_str`]).
    pub rendering: Rendering,
    /// The rendered text (chat template output, then the assistant prefix); null when the
    /// server rendered it.
    pub prompt: Option<String>,
    /// SHA-256 (hex) of `prompt`'s UTF-8 bytes; null with it.
    pub text_sha256: Option<String>,
    /// Tokens of `prompt` under the model's tokenizer (what the engine is sent); null with it.
    pub n_tokens: Option<u32>,
}

impl PromptRow {
    /// A prompt rendered here: `text` and its `n_tokens` tokens.
    pub fn rendered(prompt_sha256: impl Into<String>, text: String, n_tokens: u32) -> PromptRow {
        PromptRow {
            prompt_sha256: prompt_sha256.into(),
            rendering: Rendering::ChatTemplate,
            text_sha256: Some(text_sha256(&text)),
            prompt: Some(text),
            n_tokens: Some(n_tokens),
        }
    }

    /// A prompt whose messages a server rendered (no text is known here).
    pub fn by_server(prompt_sha256: impl Into<String>) -> PromptRow {
        PromptRow {
            prompt_sha256: prompt_sha256.into(),
            rendering: Rendering::Server,
            ..PromptRow::default()
        }
    }
}

/// SHA-256 (hex) of a rendered prompt's UTF-8 bytes (the `text_sha256` column).
pub fn text_sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

impl Row for PromptRow {
    const DATASET: &'static str = "prompts";

    fn schema() -> SchemaRef {
        use DataType::{UInt32, Utf8};
        Arc::new(Schema::new(vec![
            field("prompt_sha256", Utf8, false),
            field("rendering", Utf8, false),
            field("prompt", Utf8, true),
            field("text_sha256", Utf8, true),
            field("n_tokens", UInt32, true),
        ]))
    }

    fn to_batch(rows: &[Self]) -> Result<RecordBatch, ArrowError> {
        RecordBatch::try_new(
            Self::schema(),
            vec![
                col::utf8(rows.iter().map(|r| r.prompt_sha256.as_str())),
                col::utf8(rows.iter().map(|r| r.rendering.as_str())),
                col::opt_utf8(rows.iter().map(|r| r.prompt.as_deref())),
                col::opt_utf8(rows.iter().map(|r| r.text_sha256.as_deref())),
                col::opt_u32s(rows.iter().map(|r| r.n_tokens)),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, RowError> {
        let c = Cols::new(batch, Self::schema());
        let mut prompt_sha256 = c.utf8("prompt_sha256")?.into_iter();
        let mut rendering = c.utf8("rendering")?.into_iter();
        let mut prompt = c.opt_utf8("prompt")?.into_iter();
        let mut text_sha256 = c.opt_utf8("text_sha256")?.into_iter();
        let mut n_tokens = c.opt_u32("n_tokens")?.into_iter();
        (0..c.len())
            .map(|_| {
                let name: String = next(&mut rendering);
                Ok(PromptRow {
                    prompt_sha256: next(&mut prompt_sha256),
                    rendering: Rendering::parse(&name).ok_or_else(|| {
                        RowError::new("rendering", format!("unknown value `{name}`"))
                    })?,
                    prompt: next(&mut prompt),
                    text_sha256: next(&mut text_sha256),
                    n_tokens: next(&mut n_tokens),
                })
            })
            .collect()
    }
}

/// Every prompt row (a run without `prompts/`, e.g. one from before the dataset existed,
/// reads as empty).
pub fn read_prompts(dir: &Path) -> Result<Vec<PromptRow>, SinkError> {
    crate::read::read_rows(dir)
}

/// `prompt_sha256` of every recorded prompt (what a resumed run does not write again); only
/// that column is read.
pub fn read_prompt_keys(dir: &Path) -> Result<BTreeSet<String>, SinkError> {
    let mut keys = BTreeSet::new();
    crate::read::for_each_batch(dir, &["prompt_sha256"], |path, batch| {
        let c = Cols::new(batch, PromptRow::schema());
        keys.extend(
            c.utf8("prompt_sha256")
                .map_err(crate::read::column_error(path))?,
        );
        Ok(())
    })?;
    Ok(keys)
}

/// The row of the prompt `prompt_sha256`, if recorded: only the key column is read until the
/// part that holds it is found.
pub fn find_prompt(dir: &Path, prompt_sha256: &str) -> Result<Option<PromptRow>, SinkError> {
    crate::read::find_row(dir, "prompt_sha256", prompt_sha256, |r: &PromptRow| {
        r.prompt_sha256 == prompt_sha256
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PartConfig, PartWriter};

    fn rows() -> Vec<PromptRow> {
        vec![
            PromptRow::rendered(
                "k1",
                "<|im_start|>user\nWhich?<|im_end|>\n<|im_start|>assistant\n".into(),
                12,
            ),
            PromptRow::by_server("k2"),
            PromptRow::rendered("k3", "ünïcode ✓\n".into(), 4),
        ]
    }

    #[test]
    fn constructors_fill_the_columns() {
        let r = rows();
        assert_eq!(r[0].rendering, Rendering::ChatTemplate);
        assert_eq!(
            r[0].text_sha256.as_deref(),
            Some(text_sha256(r[0].prompt.as_deref().unwrap()).as_str())
        );
        assert_eq!(
            text_sha256(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(r[1].rendering, Rendering::Server);
        assert_eq!(
            (&r[1].prompt, &r[1].text_sha256, r[1].n_tokens),
            (&None, &None, None)
        );
        assert_eq!(Rendering::parse("server"), Some(Rendering::Server));
        assert_eq!(
            Rendering::parse("chat_template"),
            Some(Rendering::ChatTemplate)
        );
        assert_eq!(Rendering::parse("x"), None);
    }

    #[test]
    fn written_parts_read_back_by_rows_keys_and_lookup() {
        let dir = tempfile::tempdir().unwrap();
        let rows = rows();
        let mut w = PartWriter::<PromptRow>::open(dir.path(), 0, PartConfig::default()).unwrap();
        w.extend(rows[..2].iter().cloned());
        w.roll().unwrap();
        w.extend(rows[2..].iter().cloned());
        w.finish().unwrap();
        // A part another worker is writing at this moment is not read.
        std::fs::write(
            dir.path().join("prompts/.part-w1-000000.parquet.tmp"),
            b"PAR1 incomplete",
        )
        .unwrap();
        let prompts = dir.path().join("prompts");
        assert_eq!(read_prompts(&prompts).unwrap(), rows);
        assert_eq!(
            read_prompt_keys(&prompts).unwrap(),
            BTreeSet::from(["k1", "k2", "k3"].map(String::from))
        );
        assert_eq!(
            find_prompt(&prompts, "k3").unwrap().as_ref(),
            Some(&rows[2])
        );
        assert_eq!(
            find_prompt(&prompts, "k2").unwrap().as_ref(),
            Some(&rows[1])
        );
        assert_eq!(find_prompt(&prompts, "nope").unwrap(), None);
        // A run directory without the dataset reads as empty.
        let none = dir.path().join("absent");
        assert!(read_prompts(&none).unwrap().is_empty());
        assert!(read_prompt_keys(&none).unwrap().is_empty());
        assert_eq!(find_prompt(&none, "k1").unwrap(), None);
    }
}
