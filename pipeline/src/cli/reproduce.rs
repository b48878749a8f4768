//! `choice2seq reproduce EXHIBIT|all [--model PATH] [--runs DIR] [--limit N] [--draws N]`: run
//! the panels an exhibit of the paper needs (reusing complete run directories), then write the
//! exhibit in the paper's layout with the paper's numbers beside ours. `all` writes every
//! exhibit, each panel run once however many exhibits read it.
//!
//! Each panel runs from its config (`config/panels/NAME.toml`, Appendix C's from
//! `config/dialogue.toml`; relative to the current directory, the repository root) with `[model] path` set to `--model`, as a child `choice2seq run`, into
//! `RUNS/NAME`. A run directory whose manifest says `completed` is reused as it is; any other
//! is resumed. The derived configs are kept in `RUNS/configs/`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};

use crate::report::exhibits::{self, table1, Exhibit, PanelRun};

/// What `reproduce` writes: one exhibit, or every one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Targets(pub Vec<Exhibit>);

fn parse_targets(s: &str) -> Result<Targets, String> {
    if s == "all" {
        return Ok(Targets(Exhibit::ALL.to_vec()));
    }
    Exhibit::from_str(s, false)
        .map(|e| Targets(vec![e]))
        .map_err(|_| {
            let names: Vec<&str> = Exhibit::ALL.iter().map(|e| e.name()).collect();
            format!(
                "`{s}` is not an exhibit: one of {}, or all",
                names.join(", ")
            )
        })
}

/// Reproduce one exhibit of the paper, or all of them.
#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// The exhibit (table1–table4, tableB1–B2, tableC1–C5, tableD1–D17, tableE1–E3,
    /// figure2–figure21, projection, native-control; the README's exhibit table lists each) or
    /// `all`.
    #[arg(value_parser = parse_targets)]
    pub exhibit: Targets,
    /// The model every panel runs (GGUF file or Hugging Face directory).
    #[arg(long, default_value = "models/SmolLM2-135M-Instruct.Q4_1.gguf")]
    pub model: PathBuf,
    /// Where the panels' run directories go (default: runs/reproduce/MODEL, MODEL the file
    /// stem; with --limit, MODEL-limitN).
    #[arg(long)]
    pub runs: Option<PathBuf>,
    /// Only the first N items of each source (a quick look; not the paper's panel).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Bootstrap draws instead of each panel's own (the paper's 99,999 take a while).
    #[arg(long)]
    pub draws: Option<u32>,
    /// The paper model whose rows the differences are taken against.
    #[arg(long, default_value = "Qwen3.5-27B")]
    pub against: String,
    /// Run every panel on the seeded test double instead of a model (`[model] engine =
    /// "simulated"`): the exhibits' layout end to end in seconds, numbers meaningless.
    #[arg(long, hide = true)]
    pub simulated: bool,
}

pub fn execute(args: ReproduceArgs) -> anyhow::Result<ExitCode> {
    if !table1::paper_models().contains(&args.against.as_str()) {
        bail!(
            "--against {}: not a model of the paper ({})",
            args.against,
            table1::paper_models().join(", ")
        );
    }
    let runs = args.runs.clone().unwrap_or_else(|| {
        let stem = args
            .model
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        let stem = if args.simulated {
            "simulated".to_string()
        } else {
            stem
        };
        let name = match args.limit {
            Some(n) => format!("{stem}-limit{n}"),
            None => stem,
        };
        PathBuf::from("runs/reproduce").join(name)
    });
    let mut ready: Vec<PanelRun> = Vec::new();
    for exhibit in &args.exhibit.0 {
        let mut panel_runs = Vec::new();
        for &panel in exhibit.panels() {
            if let Some(run) = ready.iter().find(|r| r.panel == panel) {
                panel_runs.push(run.clone());
                continue;
            }
            let run_dir = runs.join(panel);
            if is_complete(&run_dir)? {
                eprintln!("{panel}: reusing the complete run {}", run_dir.display());
            } else {
                let config = derive_config(panel, &args, &runs)?;
                eprintln!(
                    "{panel}: running {} into {}",
                    config.display(),
                    run_dir.display()
                );
                run_panel(&config, &run_dir)?;
            }
            let run = PanelRun { panel, run_dir };
            ready.push(run.clone());
            panel_runs.push(run);
        }
        let doc = exhibit
            .document(&panel_runs, &args.against)
            .with_context(|| format!("writing {}", exhibit.name()))?;
        let (md, html) = exhibits::write(&doc, &runs, exhibit.name())?;
        println!("{}", md.display());
        println!("{}", html.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether `run_dir` holds a run whose latest process completed it.
fn is_complete(run_dir: &Path) -> anyhow::Result<bool> {
    let manifest = c2s_sinks::read_manifest(run_dir)
        .with_context(|| format!("reading {}/manifest.json", run_dir.display()))?;
    Ok(manifest
        .and_then(|m| m.status)
        .is_some_and(|s| s.state == c2s_sinks::RunState::Completed))
}

/// The panel's config with this model (and limit and draws), written under `runs/configs/`.
fn derive_config(panel: &str, args: &ReproduceArgs, runs: &Path) -> anyhow::Result<PathBuf> {
    let source = Exhibit::panel_config(panel);
    let text = std::fs::read_to_string(&source).with_context(|| {
        format!(
            "reading {} (run reproduce from the repository root)",
            source.display()
        )
    })?;
    let mut doc: toml::Table =
        toml::from_str(&text).with_context(|| format!("parsing {}", source.display()))?;
    let model = doc
        .entry("model")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let toml::Value::Table(model) = model else {
        bail!("{}: [model] is not a table", source.display());
    };
    if args.simulated {
        model.clear();
        model.insert("engine".into(), toml::Value::String("simulated".into()));
    } else {
        model.insert(
            "path".into(),
            toml::Value::String(args.model.display().to_string()),
        );
    }
    if let Some(n) = args.limit {
        if let Some(toml::Value::Array(sources)) = doc.get_mut("sources") {
            for s in sources.iter_mut() {
                if let toml::Value::Table(t) = s {
                    t.insert("limit".into(), toml::Value::Integer(n as i64));
                }
            }
        }
    }
    if let Some(d) = args.draws {
        let stats = doc
            .entry("stats")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if let toml::Value::Table(stats) = stats {
            stats.insert("bootstrap_draws".into(), toml::Value::Integer(i64::from(d)));
        }
    }
    let dir = runs.join("configs");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let out = dir.join(format!("{panel}.toml"));
    let mut body = toml::to_string(&doc).context("writing the derived config")?;
    if args.simulated {
        // The test double has no tokenizer to match D.9's token control against: it runs the
        // byte-matched control under the token panel's labels' place.
        body = body
            .replace("\"padded-tokens\"", "\"padded\"")
            .replace("/padded-tokens/", "/padded/");
    }
    std::fs::write(
        &out,
        format!(
            "# Derived from {} by `choice2seq reproduce`.\n{body}",
            source.display()
        ),
    )
    .with_context(|| format!("writing {}", out.display()))?;
    Ok(out)
}

/// `choice2seq run CONFIG --run-dir DIR` as a child process (its own signal handling, exit
/// codes and progress); a failed run stops the exhibit with the run's exit code.
fn run_panel(config: &Path, run_dir: &Path) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("locating the choice2seq binary")?;
    let status = Command::new(exe)
        .arg("run")
        .arg(config)
        .arg("--run-dir")
        .arg(run_dir)
        .status()
        .context("starting choice2seq run")?;
    if !status.success() {
        bail!(
            "choice2seq run {} --run-dir {} ended with {status}",
            config.display(),
            run_dir.display()
        );
    }
    Ok(())
}
