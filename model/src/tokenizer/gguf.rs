//! A Hugging Face `tokenizers` tokenizer built from GGUF metadata, exactly as the model's own
//! tokenizer works — or a refusal that names what is not supported. Never a fallback: a
//! pre-tokenizer we do not know would split text differently and silently change every score.
//!
//! | `tokenizer.ggml.model` | `tokenizer.ggml.pre` | tokenizer |
//! |---|---|---|
//! | `gpt2` | `gpt-2` | byte-level BPE, the GPT-2 split regex |
//! | `gpt2` | `smollm` | digits split one by one, then the GPT-2 regex (SmolLM/SmolLM2) |
//! | `gpt2` | `llama-bpe`, `llama3`, `llama-v3` | the Llama-3 regex (numbers in groups of up to three); a pre-token that is a token is taken whole |
//! | `gpt2` | `qwen2`, `deepseek-r1-qwen` | the Qwen2 regex (single digits), NFC normalization |
//! | `llama` | — | SentencePiece BPE (Llama-2, Mistral, Gemma GGUFs): `▁` for spaces, a `▁` prefix, merges by piece score, byte fallback |
//!
//! The regexes are llama.cpp's (`llama-vocab.cpp`), which equal the ones in the models'
//! `tokenizer.json` files (case-insensitive contractions written out, as llama.cpp does).
//! Token types follow GGUF: 2 = unknown and 3 = control (special tokens, matched in rendered
//! prompts), 4 =
//! user-defined (also matched as whole tokens), 5 = unused (never matched), 6 = byte
//! (`<0xXX>`, SentencePiece fallback). No normalization is applied except Qwen2's NFC (its
//! `tokenizer.json` has it; llama.cpp has none, so the two differ only on text not in NFC).

use tokenizers::decoders::byte_fallback::ByteFallback;
use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::decoders::fuse::Fuse;
use tokenizers::decoders::sequence::Sequence as DecoderSequence;
use tokenizers::decoders::strip::Strip;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::normalizers::{Prepend, Replace, Sequence as NormalizerSequence, NFC};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::Tokenizer;
use tokenizers::{AddedToken, NormalizerWrapper, PreTokenizerWrapper, SplitDelimiterBehavior};

use crate::error::EngineError;

// GGUF token types (`tokenizer.ggml.token_type`, llama.cpp's `llama_token_type`).

/// A token type: an ordinary piece, produced from text and by merges (the type of a token
/// whose type the file leaves out).
pub const TOKEN_TYPE_NORMAL: i32 = 1;
/// A token type: the unknown token; matched in raw text as a special token, as llama.cpp
/// parses it.
pub const TOKEN_TYPE_UNKNOWN: i32 = 2;
/// A token type: a control token (e.g. `<|im_start|>`), a special token matched in raw text
/// and never produced by merges.
pub const TOKEN_TYPE_CONTROL: i32 = 3;
/// A token type: a user-defined token, matched whole in any text (not special).
pub const TOKEN_TYPE_USER_DEFINED: i32 = 4;
/// A token type: a byte-fallback token (`<0x0A>`), never produced by merges.
pub const TOKEN_TYPE_BYTE: i32 = 6;

/// llama.cpp's Llama-3 pre-tokenizer regex (`LLAMA_VOCAB_PRE_TYPE_LLAMA3`).
pub const LLAMA3_REGEX: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// llama.cpp's Qwen2 pre-tokenizer regex (`LLAMA_VOCAB_PRE_TYPE_QWEN2`).
pub const QWEN2_REGEX: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// The pre-tokenizer names accepted for byte-level BPE vocabularies.
pub const SUPPORTED_BPE_PRE: &[&str] = &[
    "gpt-2",
    "smollm",
    "llama-bpe",
    "llama3",
    "llama-v3",
    "qwen2",
    "deepseek-r1-qwen",
];

/// The vocabulary part of a GGUF's metadata.
#[derive(Debug, Clone)]
pub struct GgufVocab {
    /// `tokenizer.ggml.model`: `gpt2` or `llama`.
    pub model: String,
    /// `tokenizer.ggml.pre` (byte-level BPE only).
    pub pre: Option<String>,
    /// `tokenizer.ggml.tokens`: every token's piece, indexed by token id.
    pub tokens: Vec<String>,
    /// Per token (empty: all normal).
    pub token_types: Vec<i32>,
    /// SentencePiece piece scores.
    pub scores: Vec<f32>,
    /// Byte-level BPE merges, `"a b"`.
    pub merges: Vec<String>,
    /// `tokenizer.ggml.add_space_prefix` (SentencePiece; default true).
    pub add_space_prefix: bool,
    /// `tokenizer.ggml.unknown_token_id` (SentencePiece's unknown token; `None`: the file
    /// names none).
    pub unk_id: Option<u32>,
}

impl GgufVocab {
    fn token_type(&self, i: usize) -> i32 {
        self.token_types
            .get(i)
            .copied()
            .unwrap_or(TOKEN_TYPE_NORMAL)
    }

    /// Describes the tokenizer for model identities, e.g. `gguf gpt2-bpe pre=qwen2`.
    pub fn describe(&self) -> String {
        match &self.pre {
            Some(p) if self.model == "gpt2" => format!("gguf gpt2-bpe pre={p}"),
            _ => format!("gguf {}", self.model),
        }
    }
}

/// Build the tokenizer the vocabulary describes, or refuse with the unsupported name.
pub fn build_tokenizer(v: &GgufVocab) -> Result<Tokenizer, EngineError> {
    let mut tokenizer = match v.model.as_str() {
        "gpt2" => byte_level_bpe(v)?,
        "llama" => sentencepiece_bpe(v)?,
        other => {
            return Err(EngineError::Model(format!(
                "tokenizer model `{other}` (GGUF `tokenizer.ggml.model`) is not supported: \
                 supported are `gpt2` (byte-level BPE) and `llama` (SentencePiece)"
            )))
        }
    };
    // Control tokens (and the unknown token, as llama.cpp parses it) are special: rendered chat
    // prompts contain them; user-defined tokens are matched whole in any text, as llama.cpp
    // and Hugging Face do.
    let mut added = Vec::new();
    for (i, t) in v.tokens.iter().enumerate() {
        match v.token_type(i) {
            TOKEN_TYPE_CONTROL | TOKEN_TYPE_UNKNOWN => {
                added.push(AddedToken::from(t.clone(), true))
            }
            TOKEN_TYPE_USER_DEFINED => added.push(AddedToken::from(t.clone(), false)),
            _ => {}
        }
    }
    let (special, plain): (Vec<_>, Vec<_>) = added.into_iter().partition(|t| t.special);
    tokenizer.add_special_tokens(&special);
    tokenizer.add_tokens(&plain);
    Ok(tokenizer)
}

fn bpe_error(e: impl std::fmt::Display) -> EngineError {
    EngineError::Model(format!("building the BPE tokenizer: {e}"))
}

/// Byte-level BPE (`tokenizer.ggml.model = gpt2`) with the pre-tokenizer `pre` names.
fn byte_level_bpe(v: &GgufVocab) -> Result<Tokenizer, EngineError> {
    let pre = v.pre.as_deref().ok_or_else(|| {
        EngineError::Model(
            "GGUF metadata `tokenizer.ggml.pre` is missing: the pre-tokenizer of this byte-level \
             BPE vocabulary is unknown, so its prompts cannot be tokenized exactly"
                .into(),
        )
    })?;
    let regex_split = |pattern: &str| -> Result<PreTokenizerWrapper, EngineError> {
        let split = Split::new(
            SplitPattern::Regex(pattern.to_string()),
            SplitDelimiterBehavior::Isolated,
            false,
        )
        .map_err(bpe_error)?;
        Ok(Sequence::new(vec![
            split.into(),
            ByteLevel::new(false, true, false).into(),
        ])
        .into())
    };
    let mut normalizer: Option<NormalizerWrapper> = None;
    // Llama-3 vocabularies take a pre-token that is itself a token whole, before any merge
    // (llama.cpp's `tokenizer_ignore_merges`, Hugging Face's `ignore_merges`).
    let ignore_merges = matches!(pre, "llama-bpe" | "llama3" | "llama-v3");
    let pre_tokenizer: PreTokenizerWrapper = match pre {
        "gpt-2" => ByteLevel::new(false, true, true).into(),
        "smollm" => Sequence::new(vec![
            Digits::new(true).into(),
            ByteLevel::new(false, true, true).into(),
        ])
        .into(),
        "llama-bpe" | "llama3" | "llama-v3" => regex_split(LLAMA3_REGEX)?,
        "qwen2" | "deepseek-r1-qwen" => {
            // Qwen2's tokenizer.json normalizes to NFC first.
            normalizer = Some(NFC.into());
            regex_split(QWEN2_REGEX)?
        }
        other => {
            return Err(EngineError::Model(format!(
                "pre-tokenizer `{other}` (GGUF `tokenizer.ggml.pre`) is not supported; \
                 supported: {}",
                SUPPORTED_BPE_PRE.join(", ")
            )))
        }
    };
    let mut vocab = Vocab::default();
    for (i, t) in v.tokens.iter().enumerate() {
        vocab.insert(t.clone(), i as u32);
    }
    let mut merges = Vec::with_capacity(v.merges.len());
    for (k, m) in v.merges.iter().enumerate() {
        let (a, b) = m.split_once(' ').ok_or_else(|| {
            EngineError::Model(format!(
                "GGUF metadata `tokenizer.ggml.merges`[{k}] = {m:?} is not two tokens"
            ))
        })?;
        merges.push((a.to_string(), b.to_string()));
    }
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .ignore_merges(ignore_merges)
        .build()
        .map_err(bpe_error)?;
    let mut tokenizer = Tokenizer::new(bpe);
    tokenizer.with_normalizer(normalizer);
    tokenizer.with_pre_tokenizer(Some(pre_tokenizer));
    tokenizer.with_decoder(Some(ByteLevelDecoder::default()));
    Ok(tokenizer)
}

/// SentencePiece BPE (`tokenizer.ggml.model = llama`), as llama.cpp's SPM tokenizer: spaces
/// become `▁`, every text segment (the start, and after each special token) gets a `▁` prefix
/// when `add_space_prefix`, adjacent symbols merge greedily by the score of the merged piece,
/// and characters outside the vocabulary fall back to byte tokens `<0xXX>`. The merges are the
/// pairs of pieces whose concatenation is a piece, ranked by that piece's score (Hugging Face's
/// SentencePiece conversion).
fn sentencepiece_bpe(v: &GgufVocab) -> Result<Tokenizer, EngineError> {
    if v.scores.len() != v.tokens.len() {
        return Err(EngineError::Model(format!(
            "GGUF metadata `tokenizer.ggml.scores` has {} entries for {} tokens",
            v.scores.len(),
            v.tokens.len()
        )));
    }
    let mut vocab = Vocab::default();
    for (i, t) in v.tokens.iter().enumerate() {
        vocab.insert(t.clone(), i as u32);
    }
    // Only normal (and user-defined) pieces take part in merges: control, unknown and byte
    // tokens are never produced by merging text.
    let mergeable =
        |i: usize| matches!(v.token_type(i), TOKEN_TYPE_NORMAL | TOKEN_TYPE_USER_DEFINED);
    let mut ranked: Vec<(f32, u32, String, String)> = Vec::new();
    for (i, piece) in v.tokens.iter().enumerate() {
        if !mergeable(i) || piece.chars().count() < 2 {
            continue;
        }
        for (cut, _) in piece.char_indices().skip(1) {
            let (l, r) = piece.split_at(cut);
            let known = |s: &str| vocab.get(s).is_some_and(|&id| mergeable(id as usize));
            if known(l) && known(r) {
                ranked.push((v.scores[i], i as u32, l.to_string(), r.to_string()));
            }
        }
    }
    // Higher score first; the merged piece's id, then the split point, break ties.
    ranked.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(a.1.cmp(&b.1))
            .then(a.2.len().cmp(&b.2.len()))
    });
    let merges = ranked.into_iter().map(|(_, _, l, r)| (l, r)).collect();
    let mut builder = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .byte_fallback(true)
        .fuse_unk(true);
    if let Some(unk) = v.unk_id.and_then(|i| v.tokens.get(i as usize)) {
        builder = builder.unk_token(unk.clone());
    }
    let bpe = builder.build().map_err(bpe_error)?;
    let mut tokenizer = Tokenizer::new(bpe);
    let mut steps: Vec<NormalizerWrapper> = Vec::new();
    if v.add_space_prefix {
        steps.push(Prepend::new("▁".into()).into());
    }
    steps.push(Replace::new(" ", "▁").map_err(bpe_error)?.into());
    tokenizer.with_normalizer(Some(NormalizerSequence::new(steps)));
    let mut decoders: Vec<DecoderWrapper> = vec![
        tokenizers::decoders::DecoderWrapper::Replace(
            tokenizers::normalizers::Replace::new("▁", " ").map_err(bpe_error)?,
        ),
        ByteFallback::new().into(),
        Fuse::new().into(),
    ];
    if v.add_space_prefix {
        decoders.push(Strip::new(' ', 1, 0).into());
    }
    tokenizer.with_decoder(Some(DecoderSequence::new(decoders)));
    Ok(tokenizer)
}
