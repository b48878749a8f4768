//! `choice2seq model`: what the pipeline reads from a model, for inspection and export.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Print the model's identity (hashes, tokenizer, chat template) and how it tokenizes TEXT.
    Show {
        /// GGUF file or local Hugging Face directory.
        model: PathBuf,
        /// Text to tokenize (special tokens such as `<|im_start|>` are recognized).
        #[arg(long)]
        text: Option<String>,
    },
    /// Write the model's tokenizer as a Hugging Face directory's `tokenizer.json` and
    /// `tokenizer_config.json` (chat template, BOS/EOS), e.g. to pair a GGUF's exact tokenizer
    /// with safetensors weights.
    ExportTokenizer {
        /// GGUF file or local Hugging Face directory.
        model: PathBuf,
        /// Directory to write into (created).
        out: PathBuf,
    },
}

pub fn run(cmd: ModelCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ModelCommand::Show { model, text } => {
            let tok = match c2s_model::load_tokenizer(&model) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: {}: {e}", model.display());
                    return Ok(ExitCode::from(2));
                }
            };
            let id = c2s_model::model_identity(&model, &tok, "-")?;
            println!("{}", serde_json::to_string_pretty(&id)?);
            if let Some(text) = text {
                let ids = tok.encode(&text)?;
                println!("{} tokens: {ids:?}", ids.len());
            }
            Ok(ExitCode::SUCCESS)
        }
        ModelCommand::ExportTokenizer { model, out } => {
            let tok = match c2s_model::load_tokenizer(&model) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: {}: {e}", model.display());
                    return Ok(ExitCode::from(2));
                }
            };
            std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
            std::fs::write(out.join("tokenizer.json"), tok.tokenizer_json()?)?;
            let config = serde_json::json!({
                "bos_token": tok.bos_token,
                "eos_token": tok.eos_token,
                "chat_template": tok.chat_template(),
                "tokenizer_class": "PreTrainedTokenizerFast",
            });
            std::fs::write(
                out.join("tokenizer_config.json"),
                serde_json::to_string_pretty(&config)?,
            )?;
            println!(
                "wrote {}/tokenizer.json and tokenizer_config.json",
                out.display()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
