//! `choice2seq reproduce EXHIBIT|all [--model PATH]… [--runs DIR] [--limit N] [--draws N]`:
//! run the panels an exhibit of the paper needs (reusing complete run directories), then write
//! the exhibit in the paper's layout with the paper's numbers beside ours. `all` writes every
//! exhibit, each panel run once per model however many exhibits read it.
//!
//! Each panel runs from its config (`config/panels/NAME.toml`, relative to the current
//! directory, the repository root) with `[model] path` set to the model, as a child
//! `choice2seq run`, into `MODEL_DIR/NAME`. A run directory whose manifest says `completed` is
//! reused as it is, if it was run with the panel's arms, comparisons and dialogue grid (else
//! `reproduce` stops and says so); any other is resumed. The derived configs are kept in
//! `MODEL_DIR/configs/`.
//!
//! Several models (`--model A --model B`, as the paper's tables compare three to five): each
//! runs every panel in its own directory, and each exhibit is computed from all of their
//! records together: every model's rows beside the paper's, and Holm families and populations
//! that span models (the paper's "global" families, Table D1's shared-correct population)
//! span these models. Where things go:
//!
//! | models | a model's panels (MODEL_DIR) | the exhibits |
//! |---|---|---|
//! | one | `--runs`, default `runs/reproduce/STEM` | the same directory |
//! | several, no `--runs` | `runs/reproduce/STEM` (a model run alone is reused) | `runs/reproduce/STEM1+STEM2…` |
//! | several, `--runs DIR` | `DIR/STEM` | `DIR` |
//!
//! STEM is the model's file stem, with `-limitN` under `--limit N`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context};
use clap::Args;

use c2s_report::exhibits::{self, table1, Exhibit, PanelRun};

/// What `reproduce` writes: one exhibit, or every one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Targets(pub Vec<Exhibit>);

/// An `EXHIBIT` argument that names no exhibit, or exhibits whose specs could not be read
/// (`exhibits/*.toml`). Its text is the error with its causes, which clap prints after the
/// argument.
#[derive(Debug, thiserror::Error)]
#[error("{source:#}")]
pub struct TargetsError {
    /// The argument as given (an exhibit name or `all`).
    pub target: String,
    /// Why it names no exhibits: an unknown name (listing the known ones) or an unreadable
    /// exhibit registry.
    #[source]
    pub source: anyhow::Error,
}

fn parse_targets(s: &str) -> Result<Targets, TargetsError> {
    let exhibits = match s {
        "all" => Exhibit::all(),
        name => Exhibit::named(name).map(|e| vec![e]),
    };
    exhibits.map(Targets).map_err(|source| TargetsError {
        target: s.to_string(),
        source,
    })
}

/// Reproduce one exhibit of the paper, or all of them.
#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// The exhibit (table1–table4, tableB1–B2, tableC1–C5, tableD1–D17, tableE1–E3,
    /// figure2–figure21, projection, native-control: exhibits/*.toml, listed in
    /// docs/exhibits.md) or `all`.
    #[arg(value_parser = parse_targets)]
    pub exhibit: Targets,
    /// A model every panel runs (GGUF file or Hugging Face directory). Repeat it to compare
    /// models: each exhibit then shows every model's rows, with Holm families and populations
    /// spanning them.
    #[arg(
        long = "model",
        default_value = "models/SmolLM2-135M-Instruct.Q4_1.gguf"
    )]
    pub models: Vec<PathBuf>,
    /// Where the run directories and exhibits go (default: runs/reproduce/MODEL, MODEL the
    /// file stem, with --limit MODEL-limitN; several models: runs/reproduce/A+B…, each model's
    /// runs in runs/reproduce/MODEL).
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

/// Where one model's panels run: its directory name (the file stem, `-limitN`) and the
/// directory.
struct ModelRuns {
    model: PathBuf,
    /// Distinguishes the test double's models (`--simulated`): their seed.
    index: usize,
    dir: PathBuf,
}

/// A model's directory name: its file stem (the test double's: `simulated`, `simulated-2`, …),
/// with `-limitN` under `--limit N`.
fn model_stem(args: &ReproduceArgs, model: &Path, index: usize) -> String {
    let stem = if args.simulated {
        match index {
            0 => "simulated".to_string(),
            i => format!("simulated-{}", i + 1),
        }
    } else {
        model
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into())
    };
    match args.limit {
        Some(n) => format!("{stem}-limit{n}"),
        None => stem,
    }
}

/// Each model's run directory and where the exhibits go (the module's table).
fn layout(args: &ReproduceArgs) -> anyhow::Result<(Vec<ModelRuns>, PathBuf)> {
    let stems: Vec<String> = (args.models.iter().enumerate())
        .map(|(i, m)| model_stem(args, m, i))
        .collect();
    for (i, stem) in stems.iter().enumerate() {
        if let Some(j) = stems[..i].iter().position(|s| s == stem) {
            bail!(
                "--model {} and --model {} share the directory name {stem}: give the models \
                 distinct file names",
                args.models[j].display(),
                args.models[i].display()
            );
        }
    }
    let base = PathBuf::from("runs/reproduce");
    let out = match (&args.runs, stems.len()) {
        (Some(dir), _) => dir.clone(),
        (None, 1) => base.join(&stems[0]),
        (None, _) => base.join(stems.join("+")),
    };
    let models = (args.models.iter().zip(&stems).enumerate())
        .map(|(index, (model, stem))| ModelRuns {
            model: model.clone(),
            index,
            dir: match (&args.runs, stems.len()) {
                (_, 1) => out.clone(),
                (Some(dir), _) => dir.join(stem),
                (None, _) => base.join(stem),
            },
        })
        .collect();
    Ok((models, out))
}

pub fn execute(args: ReproduceArgs) -> anyhow::Result<ExitCode> {
    // A bad argument stops before any panel runs, with exit 2.
    let paper_models = table1::paper_models()?;
    if !paper_models.contains(&args.against) {
        eprintln!(
            "error: --against {}: not a model of the paper ({})",
            args.against,
            paper_models.join(", ")
        );
        return Ok(ExitCode::from(2));
    }
    let (models, out) = match layout(&args) {
        Ok(layout) => layout,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut ready: Vec<PanelRun> = Vec::new();
    for exhibit in &args.exhibit.0 {
        let mut panel_runs = Vec::new();
        for panel in exhibit.panels() {
            if let Some(run) = ready.iter().find(|r| r.panel == panel) {
                panel_runs.push(run.clone());
                continue;
            }
            let mut run_dirs = Vec::new();
            for m in &models {
                let run_dir = m.dir.join(panel);
                let config = derive_config(panel, &args, m)?;
                if is_complete(&run_dir)? {
                    check_design(&run_dir, &config)?;
                    eprintln!("{panel}: reusing the complete run {}", run_dir.display());
                } else {
                    eprintln!(
                        "{panel}: running {} into {}",
                        config.display(),
                        run_dir.display()
                    );
                    run_panel(&config, &run_dir)?;
                }
                run_dirs.push(run_dir);
            }
            let run = PanelRun::new(panel, run_dirs);
            ready.push(run.clone());
            panel_runs.push(run);
        }
        let doc = exhibit
            .document(&panel_runs, &args.against)
            .with_context(|| format!("writing {}", exhibit.name()))?;
        let (md, html) = exhibits::write(&doc, &out, exhibit.name())?;
        println!("{}", md.display());
        println!("{}", html.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The parts of a panel's config that decide which records its run holds: the arms, the
/// paired comparisons and the dialogue grid.
const DESIGN: [&str; 3] = ["arms", "comparisons", "dialogue"];

/// A complete run is reused only if it was run with the panel's design as `config` declares it
/// now: a panel changed since (an arm added, a grid split) would otherwise be read from records
/// that are not the panel's.
fn check_design(run_dir: &Path, config: &Path) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(config).with_context(|| format!("reading {}", config.display()))?;
    let derived = c2s_config::parse_in(&text, config, Path::new("."))
        .with_context(|| format!("parsing {}", config.display()))?;
    let derived = serde_json::to_value(&derived).context("serializing the derived config")?;
    let Some(manifest) = c2s_sinks::read_manifest(run_dir)
        .with_context(|| format!("reading {}/manifest.json", run_dir.display()))?
    else {
        return Ok(());
    };
    for key in DESIGN {
        if derived.get(key) != manifest.config.get(key) {
            bail!(
                "{} was run with other {key} than {} declares now (the panel changed since): \
                 remove it, or give another --runs, to run the panel again",
                run_dir.display(),
                config.display()
            );
        }
    }
    Ok(())
}

/// Whether `run_dir` holds a run whose latest process completed it.
fn is_complete(run_dir: &Path) -> anyhow::Result<bool> {
    let manifest = c2s_sinks::read_manifest(run_dir)
        .with_context(|| format!("reading {}/manifest.json", run_dir.display()))?;
    Ok(manifest
        .and_then(|m| m.status)
        .is_some_and(|s| s.state == c2s_sinks::RunState::Completed))
}

/// The panel's config with this model (and limit and draws), written under its
/// `MODEL_DIR/configs/`.
fn derive_config(panel: &str, args: &ReproduceArgs, runs: &ModelRuns) -> anyhow::Result<PathBuf> {
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
        if runs.index > 0 {
            // The test double's one parameter is the run's option seed (its identity and its
            // answers follow it): another seed stands for another model.
            let run = doc
                .entry("run")
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if let toml::Value::Table(run) = run {
                let seed = 20_261_005 + runs.index as i64;
                run.insert("option_seed".into(), toml::Value::Integer(seed));
            }
        }
    } else {
        model.insert(
            "path".into(),
            toml::Value::String(runs.model.display().to_string()),
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
    let dir = runs.dir.join("configs");
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

#[cfg(test)]
mod tests {
    use super::{parse_targets, TargetsError};

    /// The error's text is its source's with the causes, as clap prints it.
    #[test]
    fn targets_error_message() {
        let e = TargetsError {
            target: "table0".into(),
            source: anyhow::anyhow!("no such exhibit").context("reading exhibits"),
        };
        assert_eq!(e.to_string(), "reading exhibits: no such exhibit");
        let err = parse_targets("no-such-exhibit").unwrap_err();
        assert_eq!(err.target, "no-such-exhibit");
        assert!(
            err.to_string()
                .starts_with("`no-such-exhibit` is not an exhibit: one of "),
            "{err}"
        );
    }
}
