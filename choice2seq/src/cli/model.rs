//! `choice2seq model`: what the pipeline reads from a model, for inspection and export.

use std::path::{Path, PathBuf};
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
    /// Print the exact prompt text the pipeline sends for these messages (the chat template
    /// rendered with add_generation_prompt=true and enable_thinking=false, then the assistant
    /// prefix), its token ids and its tokens.
    Render {
        /// GGUF file or local Hugging Face directory.
        model: PathBuf,
        /// The system message (none by default).
        #[arg(long)]
        system: Option<String>,
        /// The user message.
        #[arg(long)]
        user: String,
        /// Text placed after the assistant generation boundary.
        #[arg(long)]
        assistant_prefix: Option<String>,
        /// Print one JSON object {prompt, token_ids, tokens} (tokens: vocabulary pieces).
        #[arg(long)]
        json: bool,
        /// What the template's `strftime_now` reports, as RFC 3339 (`2026-07-26T10:30:00+02:00`);
        /// default: now. Templates that print the date (Llama 3.x, Mistral Small, gpt-oss,
        /// Granite) then render as a run started at that time did.
        #[arg(long, conflicts_with = "run")]
        time: Option<String>,
        /// Render with the template time a run recorded (its manifest's `chat_template_time`),
        /// so the text equals that run's `prompts/` row.
        #[arg(long)]
        run: Option<PathBuf>,
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
        ModelCommand::Render {
            model,
            system,
            user,
            assistant_prefix,
            json,
            time,
            run,
        } => {
            let time = match template_time(time.as_deref(), run.as_deref()) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: {e:#}");
                    return Ok(ExitCode::from(2));
                }
            };
            render(
                &model,
                &c2s_model::PromptSpec {
                    system,
                    user,
                    assistant_prefix,
                },
                time,
                json,
            )
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

/// A prompt as the pipeline renders and tokenizes it.
#[derive(Debug, serde::Serialize)]
pub struct RenderedPrompt {
    pub prompt: String,
    pub token_ids: Vec<u32>,
    /// The vocabulary piece of each token.
    pub tokens: Vec<String>,
}

/// Render `spec` with `tok` as the engines do ([`ModelTokenizer::render_prompt`]) and tokenize
/// it.
///
/// [`ModelTokenizer::render_prompt`]: c2s_model::tokenizer::ModelTokenizer::render_prompt
pub fn rendered_prompt(
    tok: &c2s_model::tokenizer::ModelTokenizer,
    spec: &c2s_model::PromptSpec,
) -> Result<RenderedPrompt, c2s_model::EngineError> {
    let prompt = tok.render_prompt(spec)?;
    let token_ids = tok.encode(&prompt)?;
    let tokens = token_ids
        .iter()
        .map(|&id| tok.token_piece(id).unwrap_or_default())
        .collect();
    Ok(RenderedPrompt {
        prompt,
        token_ids,
        tokens,
    })
}

/// The template time `model render` uses: `--time`, else `--run`'s recorded one, else now.
fn template_time(
    time: Option<&str>,
    run: Option<&Path>,
) -> anyhow::Result<c2s_model::TemplateTime> {
    if let Some(text) = time {
        return c2s_model::TemplateTime::parse(text).map_err(|e| anyhow::anyhow!("--time: {e}"));
    }
    let Some(run) = run else {
        return Ok(c2s_model::TemplateTime::now());
    };
    let manifest = c2s_sinks::read_manifest(run)
        .with_context(|| format!("--run {}", run.display()))?
        .with_context(|| {
            format!(
                "--run {}: no manifest.json (not a run directory)",
                run.display()
            )
        })?;
    c2s_run::template_time(&c2s_run::ResumeState {
        manifest: Some(manifest),
        ..Default::default()
    })
    .with_context(|| format!("--run {}", run.display()))
}

/// `choice2seq model render`: exit 2 for a model that cannot be read, has no chat template or
/// whose template cannot render the messages.
fn render(
    model: &Path,
    spec: &c2s_model::PromptSpec,
    time: c2s_model::TemplateTime,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mut tok = match c2s_model::load_tokenizer(model) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: {e}", model.display());
            return Ok(ExitCode::from(2));
        }
    };
    if let Err(e) = tok.set_template_time(time) {
        eprintln!("error: {}: {e}", model.display());
        return Ok(ExitCode::from(2));
    }
    if tok.chat_template().is_none() {
        eprintln!(
            "error: {}: the model has no chat template (the pipeline renders every prompt \
             with one)",
            model.display()
        );
        return Ok(ExitCode::from(2));
    }
    let r = match rendered_prompt(&tok, spec) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {}: {e}", model.display());
            return Ok(ExitCode::from(2));
        }
    };
    if json {
        super::print_out(&(serde_json::to_string(&r)? + "\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    use std::fmt::Write;
    let mut s = String::new();
    writeln!(s, "prompt ({} bytes):", r.prompt.len())?;
    writeln!(s, "{}", r.prompt)?;
    writeln!(s, "{} tokens: {:?}", r.token_ids.len(), r.token_ids)?;
    writeln!(s, "{:>5}  {:>7}  {:<24}  text", "index", "id", "token")?;
    for (i, (&id, piece)) in r.token_ids.iter().zip(&r.tokens).enumerate() {
        let text = tok.decode(&[id]).unwrap_or_default();
        writeln!(s, "{i:>5}  {id:>7}  {:<24}  {text:?}", format!("{piece:?}"))?;
    }
    super::print_out(&s)?;
    Ok(ExitCode::SUCCESS)
}
