//! The model's tokenizer and chat template, read from the GGUF file (no network, no
//! tokenizer.json), or from a local Hugging Face directory's `tokenizer.json` and
//! `tokenizer_config.json`.
//!
//! From a GGUF, [`gguf::build_tokenizer`] builds the exact tokenizer that the file's
//! `tokenizer.ggml.model` and `tokenizer.ggml.pre` name, or refuses a name it does not know.
//! Control tokens (`token_type = 3`, e.g. `<|im_start|>`) are special tokens matched in raw
//! text, so a rendered chat prompt tokenizes exactly as the template means.

pub mod gguf;
pub mod pyjinja;
pub mod render_budget;
pub mod template;

use candle_core::quantized::gguf_file;
use serde::Serialize;
use tokenizers::Tokenizer;

use self::gguf::{build_tokenizer, GgufVocab};
use self::template::{ChatTemplate, TemplateKwargs, TemplateTime};

use crate::error::EngineError;

/// A chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`, as the chat template reads `message.role`.
    pub role: String,
    /// The message text, verbatim.
    pub content: String,
}

/// Tokenizer, chat template and special token ids of a GGUF model.
pub struct ModelTokenizer {
    tokenizer: Tokenizer,
    template: Option<String>,
    /// The chat template compiled as transformers compiles it ([`template`]).
    chat: Option<ChatTemplate>,
    /// What the template's `strftime_now` reports (the run's start; now by default).
    template_time: TemplateTime,
    /// The BOS token as the model declares it (None: the template sees no `bos_token`).
    declared_bos: Option<String>,
    /// The BOS token ("" when the model declares none).
    pub bos_token: String,
    /// The EOS token's text (GGUF `tokenizer.ggml.eos_token_id`, or `tokenizer_config.json`'s
    /// `eos_token`); the chat template sees it as `eos_token`.
    pub eos_token: String,
    /// Token ids that end generation (EOS, and `<|im_end|>` / `<|endoftext|>` when present).
    pub stop_ids: Vec<u32>,
    /// The EOS token's id: it closes scored options when one option's tokens are a prefix of
    /// another's.
    pub eos_id: u32,
    /// What the tokenizer is (`gguf gpt2-bpe pre=smollm`, `gguf llama`, `hf tokenizer.json`).
    pub kind: String,
}

fn meta_str(ct: &gguf_file::Content, key: &str) -> Option<String> {
    ct.metadata
        .get(key)
        .and_then(|v| v.to_string().ok())
        .cloned()
}

fn meta_strings(ct: &gguf_file::Content, key: &str) -> Result<Vec<String>, EngineError> {
    let v = ct
        .metadata
        .get(key)
        .ok_or_else(|| EngineError::Model(format!("GGUF metadata `{key}` missing")))?
        .to_vec()
        .map_err(|e| EngineError::Model(format!("GGUF metadata `{key}`: {e}")))?;
    v.iter()
        .map(|x| {
            x.to_string()
                .cloned()
                .map_err(|e| EngineError::Model(format!("GGUF metadata `{key}`: {e}")))
        })
        .collect()
}

impl ModelTokenizer {
    /// The vocabulary described by GGUF metadata.
    pub fn gguf_vocab(ct: &gguf_file::Content) -> Result<GgufVocab, EngineError> {
        let model = meta_str(ct, "tokenizer.ggml.model").ok_or_else(|| {
            EngineError::Model("GGUF metadata `tokenizer.ggml.model` is missing".into())
        })?;
        let numbers = |key: &str| -> Result<Vec<gguf_file::Value>, EngineError> {
            match ct.metadata.get(key) {
                Some(v) => v
                    .to_vec()
                    .cloned()
                    .map_err(|e| EngineError::Model(format!("GGUF metadata `{key}`: {e}"))),
                None => Ok(vec![]),
            }
        };
        let token_types = numbers("tokenizer.ggml.token_type")?
            .iter()
            .map(|x| x.to_i32().unwrap_or(gguf::TOKEN_TYPE_NORMAL))
            .collect();
        let scores = numbers("tokenizer.ggml.scores")?
            .iter()
            .map(|x| x.to_f32().unwrap_or(0.0))
            .collect();
        let merges = if ct.metadata.contains_key("tokenizer.ggml.merges") {
            meta_strings(ct, "tokenizer.ggml.merges")?
        } else {
            vec![]
        };
        Ok(GgufVocab {
            pre: meta_str(ct, "tokenizer.ggml.pre"),
            tokens: meta_strings(ct, "tokenizer.ggml.tokens")?,
            token_types,
            scores,
            merges,
            add_space_prefix: ct
                .metadata
                .get("tokenizer.ggml.add_space_prefix")
                .and_then(|v| v.to_bool().ok())
                .unwrap_or(true),
            unk_id: ct
                .metadata
                .get("tokenizer.ggml.unknown_token_id")
                .and_then(|v| v.to_u32().ok()),
            model,
        })
    }

    /// Build from GGUF metadata.
    pub fn from_gguf(ct: &gguf_file::Content) -> Result<ModelTokenizer, EngineError> {
        let vocab = Self::gguf_vocab(ct)?;
        let token_at = |key: &str| -> Option<(u32, String)> {
            let id = ct.metadata.get(key)?.to_u32().ok()?;
            vocab.tokens.get(id as usize).map(|t| (id, t.clone()))
        };
        let (eos_id, eos_token) = token_at("tokenizer.ggml.eos_token_id")
            .ok_or_else(|| EngineError::Model("GGUF has no EOS token".into()))?;
        let bos_token = token_at("tokenizer.ggml.bos_token_id").map(|(_, t)| t);
        let template = meta_str(ct, "tokenizer.chat_template");
        Self::from_vocab(
            &vocab,
            template,
            bos_token.unwrap_or_default(),
            eos_token,
            eos_id,
        )
    }

    /// Build from a GGUF vocabulary and the special tokens (tests swap parts of a real
    /// vocabulary, e.g. its pre-tokenizer name); an empty `bos_token` is no BOS token.
    pub fn from_vocab(
        vocab: &GgufVocab,
        template: Option<String>,
        bos_token: String,
        eos_token: String,
        eos_id: u32,
    ) -> Result<ModelTokenizer, EngineError> {
        let tokenizer = build_tokenizer(vocab)?;
        Self::assemble(
            tokenizer,
            template,
            Some(bos_token).filter(|t| !t.is_empty()),
            eos_token,
            eos_id,
            vocab.describe(),
        )
    }

    /// A local Hugging Face directory: `tokenizer.json`, and `tokenizer_config.json` for the
    /// chat template and the BOS/EOS tokens (a `chat_template.jinja` file also serves).
    pub fn from_hf_dir(dir: &std::path::Path) -> Result<ModelTokenizer, EngineError> {
        let tok_path = dir.join("tokenizer.json");
        // tokenizers 0.21 panics on some malformed files (a `decoder` it cannot read:
        // `expect("Helper")`): that is a bad model file too, not a crash.
        let tokenizer = std::panic::catch_unwind(|| Tokenizer::from_file(&tok_path))
            .map_err(|p| {
                let message = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                format!("the tokenizers library panicked reading it: {message}")
            })
            .and_then(|r| r.map_err(|e| e.to_string()))
            .map_err(|e| {
                EngineError::model_file(&tok_path, format!("not a readable tokenizer.json: {e}"))
            })?;
        let cfg_path = dir.join("tokenizer_config.json");
        let cfg: serde_json::Value = match std::fs::read_to_string(&cfg_path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| EngineError::model_file(&cfg_path, format!("not valid JSON: {e}")))?,
            Err(e) => return Err(EngineError::model_file(&cfg_path, e.to_string())),
        };
        // A token is a string or an AddedToken object with `content`.
        let token = |key: &str| -> Option<String> {
            match cfg.get(key)? {
                serde_json::Value::String(s) => Some(s.clone()),
                v => v.get("content")?.as_str().map(str::to_string),
            }
        };
        let eos_token = token("eos_token")
            .ok_or_else(|| EngineError::model_file(&cfg_path, "no `eos_token`"))?;
        let eos_id = tokenizer.token_to_id(&eos_token).ok_or_else(|| {
            EngineError::model_file(
                &tok_path,
                format!("EOS token `{eos_token}` is not in the vocabulary"),
            )
        })?;
        let bos_token = token("bos_token");
        // `chat_template`: a string, or a list of named templates (the `default` one).
        let template = match cfg.get("chat_template") {
            Some(serde_json::Value::String(t)) => Some(t.clone()),
            Some(serde_json::Value::Array(list)) => list
                .iter()
                .find(|t| t.get("name").and_then(|n| n.as_str()) == Some("default"))
                .and_then(|t| t.get("template")?.as_str().map(str::to_string)),
            _ => std::fs::read_to_string(dir.join("chat_template.jinja")).ok(),
        };
        Self::assemble(
            tokenizer,
            template,
            bos_token,
            eos_token,
            eos_id,
            "hf tokenizer.json".into(),
        )
    }

    /// The parts every source shares: stop ids and the compiled chat template.
    fn assemble(
        tokenizer: Tokenizer,
        template: Option<String>,
        bos_token: Option<String>,
        eos_token: String,
        eos_id: u32,
        kind: String,
    ) -> Result<ModelTokenizer, EngineError> {
        let mut stop_ids = vec![eos_id];
        for name in ["<|im_end|>", "<|endoftext|>", "<|eot_id|>"] {
            if let Some(i) = tokenizer.token_to_id(name) {
                if !stop_ids.contains(&i) {
                    stop_ids.push(i);
                }
            }
        }
        let mut tok = ModelTokenizer {
            tokenizer,
            chat: None,
            template,
            template_time: TemplateTime::now(),
            bos_token: bos_token.clone().unwrap_or_default(),
            declared_bos: bos_token,
            eos_token,
            stop_ids,
            eos_id,
            kind,
        };
        tok.compile_template()?;
        Ok(tok)
    }

    fn compile_template(&mut self) -> Result<(), EngineError> {
        self.chat = match &self.template {
            Some(source) => Some(ChatTemplate::compile(
                source,
                self.declared_bos.clone(),
                Some(self.eos_token.clone()),
                self.template_time,
            )?),
            None => None,
        };
        Ok(())
    }

    /// Render chat templates with `strftime_now` reporting `time` (a run's recorded start).
    pub fn set_template_time(&mut self, time: TemplateTime) -> Result<(), EngineError> {
        self.template_time = time;
        self.compile_template()
    }

    /// What the chat template's `strftime_now` reports.
    pub fn template_time(&self) -> TemplateTime {
        self.template_time
    }

    /// The tokenizer as a Hugging Face `tokenizer.json` document.
    pub fn tokenizer_json(&self) -> Result<String, EngineError> {
        self.tokenizer
            .to_string(true)
            .map_err(|e| EngineError::Tokenizer(e.to_string()))
    }

    /// Token ids of `text` (special tokens in the text are recognized; nothing is added).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, EngineError> {
        self.tokenizer
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| EngineError::Tokenizer(e.to_string()))
    }

    /// Text of `ids`, special tokens included.
    pub fn decode(&self, ids: &[u32]) -> Result<String, EngineError> {
        self.tokenizer
            .decode(ids, false)
            .map_err(|e| EngineError::Tokenizer(e.to_string()))
    }

    /// The vocabulary piece of token `id` as the vocabulary spells it (e.g. `Ġthe` for a
    /// byte-level BPE token, `<|im_start|>` for a control token); `None` outside the
    /// vocabulary.
    pub fn token_piece(&self, id: u32) -> Option<String> {
        self.tokenizer.id_to_token(id)
    }

    /// Tokens in the vocabulary, added (special) tokens included.
    pub fn vocab_size(&self) -> usize {
        self.tokenizer.get_vocab_size(true)
    }

    /// The text of a chat prompt: the system and user messages rendered with the chat
    /// template, then the assistant prefix after the generation boundary.
    pub fn render_prompt(&self, p: &crate::engine::PromptSpec) -> Result<String, EngineError> {
        self.render_chat(&p.messages(), p.assistant_prefix.as_deref())
    }

    /// Token ids of a chat prompt ([`ModelTokenizer::render_prompt`] encoded).
    pub fn prompt_tokens(&self, p: &crate::engine::PromptSpec) -> Result<Vec<u32>, EngineError> {
        self.encode(&self.render_prompt(p)?)
    }

    /// Token sequences of scored options, as the model would emit them after the generation
    /// boundary. When one option's sequence is a prefix of another's, every option is closed
    /// with the end-of-turn token so that the options are disjoint events.
    pub fn option_tokens(&self, options: &[String]) -> Result<Vec<Vec<u32>>, EngineError> {
        let mut seqs = Vec::with_capacity(options.len());
        for o in options {
            let t = self.encode(o)?;
            if t.is_empty() {
                return Err(EngineError::Request(format!("option `{o}` has no tokens")));
            }
            seqs.push(t);
        }
        let prefix_conflict = seqs.iter().enumerate().any(|(i, a)| {
            seqs.iter()
                .enumerate()
                .any(|(j, b)| i != j && b.len() >= a.len() && b[..a.len()] == a[..])
        });
        if prefix_conflict {
            for s in &mut seqs {
                s.push(self.eos_id);
            }
            let distinct: std::collections::HashSet<&Vec<u32>> = seqs.iter().collect();
            if distinct.len() != seqs.len() {
                return Err(EngineError::Request(
                    "two options have the same tokens".into(),
                ));
            }
        }
        Ok(seqs)
    }

    /// The GGUF's chat template source.
    pub fn chat_template(&self) -> Option<&str> {
        self.template.as_deref()
    }

    /// Render `messages` with the model's chat template as transformers'
    /// `apply_chat_template(messages, add_generation_prompt=True, enable_thinking=False)`
    /// renders it ([`template`]), then append `assistant_prefix` after the generation
    /// boundary. Thinking is disabled for templates that know the switch (the paper, A.7:
    /// "Thinking is disabled.").
    pub fn render_chat(
        &self,
        messages: &[ChatMessage],
        assistant_prefix: Option<&str>,
    ) -> Result<String, EngineError> {
        let chat = self
            .chat
            .as_ref()
            .ok_or_else(|| EngineError::Model("the model has no chat template".into()))?;
        let mut kwargs = TemplateKwargs::new();
        kwargs.insert("enable_thinking".into(), minijinja::Value::from(false));
        let mut text = chat.render(messages, true, &kwargs)?;
        if let Some(p) = assistant_prefix {
            text.push_str(p);
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fuzzing finding: tokenizers 0.21 panics (`expect("Helper")`) on a `decoder` it cannot
    /// read; the directory is refused with an error instead.
    #[test]
    fn a_tokenizer_json_that_makes_the_library_panic_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("tokenizer.json"),
            r#"{"version":"1.0","decoder":{"type":"Metaspace","repl"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("tokenizer_config.json"),
            r#"{"eos_token": "</s>"}"#,
        )
        .unwrap();
        let e = match ModelTokenizer::from_hf_dir(dir.path()) {
            Ok(_) => panic!("a truncated tokenizer.json was read"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains("tokenizer.json") && e.contains("not a readable tokenizer.json"),
            "{e}"
        );
    }
}
