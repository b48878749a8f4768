//! `choice2seq view RUN_DIR... [--serve ADDR]`: the live page over run directories, finished
//! or still running (another process writing them): item runs with their metrics recomputed
//! as `choice2seq stats` does (several directories side by side, like the report), coverage
//! runs with `choice2seq coverage`'s summary, dialogue runs with `choice2seq dialogue`'s.
//!
//! The directories are read by a background thread: once, and again every few seconds while
//! any manifest says `running` (never more often than ten times the last reading took). The
//! server only hands out the latest reading; no request reads a file.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use serde::Deserialize;
use serde_json::{json, Value};

use c2s_model::ModelIdentity;
use c2s_sinks::{read_manifest, Manifest, RunState};
use c2s_stats::{MetricRow, StatsConfig, StatsCounts};

use super::figures::{figures, reliability_panels, FigureSvg, ReliabilityPanels};
use super::metrics::{snapshot_gauges, Families, Num};
use super::state::{headline, paired_table};
use super::{Backend, Unavailable};
use c2s_rundir::{coverage, dialogue, paired as stats};

/// Serve the live page over run directories.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// Run directories of one kind: item runs (several: one per model, side by side),
    /// coverage runs or dialogue runs.
    #[arg(required = true)]
    pub run_dirs: Vec<PathBuf>,
    /// PORT or HOST:PORT to serve on (a port alone binds 127.0.0.1; another address needs
    /// --serve-token-env).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8470",
          value_parser = c2s_config::parse_serve_address)]
    pub serve: std::net::SocketAddr,
    /// `--serve-token-env`: the variable holding the bearer token the page requires.
    #[command(flatten)]
    pub token: super::auth::ServeTokenArg,
}

/// What the directories hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    /// Item runs: paired outcomes and trajectories, several side by side (one per model).
    Items,
    /// Candidate-coverage runs (`[coverage]`): their decisions.
    Coverage,
    /// Dialogue-state runs (`[dialogue]`): their dialogue turns.
    Dialogue,
}

impl RunKind {
    fn of(dir: &std::path::Path) -> RunKind {
        if coverage::is_coverage_run(dir) {
            RunKind::Coverage
        } else if dialogue::is_dialogue_run(dir) {
            RunKind::Dialogue
        } else {
            RunKind::Items
        }
    }

    fn name(self) -> &'static str {
        match self {
            RunKind::Items => "items",
            RunKind::Coverage => "coverage",
            RunKind::Dialogue => "dialogue",
        }
    }
}

/// One reading of the directories.
struct Reading {
    manifests: Vec<Option<Manifest>>,
    rows: Vec<MetricRow>,
    /// `rows` as `choice2seq stats --json` prints them.
    json: String,
    reliability: Vec<ReliabilityPanels>,
    level: f64,
    /// Outcomes and trajectories read (item runs).
    records: (usize, usize),
    /// `choice2seq coverage` / `choice2seq dialogue` as text.
    summary_text: Option<String>,
    number: u64,
    seconds: f64,
}

/// The [`Backend`] of `choice2seq view`: run directories of one kind, read once and read again
/// (every ten times the last read's duration, at least 5 s) while any of them is running.
pub struct DirectoryView {
    dirs: Vec<PathBuf>,
    kind: RunKind,
    reading: Mutex<Arc<Reading>>,
    error: Mutex<Option<String>>,
    figures: Mutex<Option<(u64, Arc<Vec<FigureSvg>>)>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn read(dirs: &[PathBuf], kind: RunKind, number: u64) -> anyhow::Result<Reading> {
    let started = Instant::now();
    let manifests = dirs
        .iter()
        .map(|d| read_manifest(d).with_context(|| format!("reading {}/manifest.json", d.display())))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut reading = Reading {
        manifests,
        rows: Vec::new(),
        json: "[]".into(),
        reliability: Vec::new(),
        level: StatsConfig::default().level,
        records: (0, 0),
        summary_text: None,
        number,
        seconds: 0.0,
    };
    match kind {
        RunKind::Items => {
            let cfg = stats::runs_stats_config(dirs)?;
            let (outcomes, trajectories) = stats::read_runs(dirs)?;
            let counts = StatsCounts::from_records(&outcomes, &trajectories)
                .context("counting the runs (an item repeated across directories?)")?;
            reading.rows = counts.snapshot(&cfg, 0)?;
            reading.json = serde_json::to_string(&reading.rows)?;
            if cfg.calibration {
                reading.reliability = reliability_panels(&counts);
            }
            reading.level = cfg.level;
            reading.records = (outcomes.len(), trajectories.len());
        }
        RunKind::Coverage => {
            // A run in progress is incomplete: its figures are shown, marked partial.
            let c = coverage::summary_of(dirs, None, None, true, None)?;
            reading.json = serde_json::to_string(&coverage::summary_json(&c)?)?;
            let partial = if c.partial() {
                format!(
                    "PARTIAL: {} planned decisions not (yet) answered; the figures cover what is there\n\n",
                    c.incomplete.len()
                )
            } else {
                String::new()
            };
            reading.summary_text = Some(partial + &c2s_report::text::coverage::text(&c.summary));
        }
        RunKind::Dialogue => {
            let s = dialogue::summary_of(dirs, None, None)?;
            reading.json = serde_json::to_string(&s)?;
            reading.summary_text = Some(c2s_report::text::dialogue::summary_text(&s));
        }
    }
    reading.seconds = started.elapsed().as_secs_f64();
    Ok(reading)
}

impl DirectoryView {
    /// Read `dirs` once (an error is returned: nothing to show), then keep reading them in the
    /// background while any of them is running.
    pub fn open(dirs: Vec<PathBuf>) -> anyhow::Result<Arc<DirectoryView>> {
        let kinds: Vec<RunKind> = dirs.iter().map(|d| RunKind::of(d)).collect();
        let Some(&kind) = kinds.first() else {
            anyhow::bail!("no run directory given");
        };
        if let Some((i, k)) = kinds.iter().enumerate().find(|(_, k)| **k != kind) {
            anyhow::bail!(
                "{} is a {} run but {} is a {} run: view directories of one kind together",
                dirs[0].display(),
                kind.name(),
                dirs[i].display(),
                k.name()
            );
        }
        let first = read(&dirs, kind, 0)?;
        let view = Arc::new(DirectoryView {
            dirs,
            kind,
            reading: Mutex::new(Arc::new(first)),
            error: Mutex::new(None),
            figures: Mutex::new(None),
        });
        let weak = Arc::downgrade(&view);
        std::thread::Builder::new()
            .name("c2s-view".into())
            .spawn(move || refresh(weak))
            .context("starting the reader thread")?;
        Ok(view)
    }

    fn reading(&self) -> Arc<Reading> {
        lock(&self.reading).clone()
    }

    fn running(r: &Reading) -> bool {
        r.manifests.iter().any(|m| {
            m.as_ref()
                .and_then(|m| m.status.as_ref())
                .is_some_and(|s| s.state == RunState::Running)
        })
    }

    fn state_name(r: &Reading) -> &'static str {
        if Self::running(r) {
            "running"
        } else if r.manifests.iter().any(|m| {
            m.as_ref()
                .and_then(|m| m.status.as_ref())
                .is_some_and(|s| s.state == RunState::Failed)
        }) {
            "failed"
        } else {
            "finished"
        }
    }
}

/// Read again while a directory is running; stop when the view is gone.
fn refresh(view: std::sync::Weak<DirectoryView>) {
    loop {
        let (wait, dirs, kind, number) = {
            let Some(v) = view.upgrade() else { return };
            let r = v.reading();
            if !DirectoryView::running(&r) {
                return;
            }
            (
                Duration::from_secs_f64((10.0 * r.seconds).max(5.0)),
                v.dirs.clone(),
                v.kind,
                r.number + 1,
            )
        };
        std::thread::sleep(wait);
        let result = read(&dirs, kind, number);
        let Some(v) = view.upgrade() else { return };
        match result {
            Ok(r) => {
                *lock(&v.reading) = Arc::new(r);
                *lock(&v.error) = None;
            }
            Err(e) => *lock(&v.error) = Some(format!("{e:#}")),
        }
    }
}

impl Backend for DirectoryView {
    fn metrics(&self) -> String {
        let r = self.reading();
        let mut f = Families::default();
        f.gauge(
            "c2s_view_runs",
            "Run directories viewed, by state in their manifest",
            ["running", "completed", "stopped", "failed", "unknown"]
                .iter()
                .map(|state| {
                    let n = r
                        .manifests
                        .iter()
                        .filter(|m| {
                            let s = m.as_ref().and_then(|m| m.status.as_ref()).map(|s| s.state);
                            *state
                                == match s {
                                    Some(RunState::Running) => "running",
                                    Some(RunState::Completed) => "completed",
                                    Some(RunState::Stopped) => "stopped",
                                    Some(RunState::Failed) => "failed",
                                    None => "unknown",
                                }
                        })
                        .count();
                    (vec![("state", state.to_string())], Num::Int(n as u64))
                })
                .collect(),
        );
        snapshot_gauges(&mut f, &r.rows);
        f.encode()
    }

    fn state(&self) -> Value {
        let r = self.reading();
        // The model identities the runs recorded (a manifest whose model is not one is left
        // out of both lists).
        let identities: Vec<ModelIdentity> = r
            .manifests
            .iter()
            .filter_map(|m| ModelIdentity::deserialize(&m.as_ref()?.model).ok())
            .collect();
        let models: Vec<String> = identities.iter().map(ModelIdentity::label).collect();
        let engines: Vec<&str> = identities.iter().map(|m| m.engine.as_str()).collect();
        let runs: Vec<&str> = r
            .manifests
            .iter()
            .filter_map(|m| m.as_ref().map(|m| m.run.as_str()))
            .collect();
        let completed: u64 = r
            .manifests
            .iter()
            .filter_map(|m| m.as_ref()?.status.as_ref().map(|s| s.completed))
            .sum();
        let rejected: u64 = r
            .manifests
            .iter()
            .filter_map(|m| m.as_ref()?.status.as_ref().map(|s| s.rejected))
            .sum();
        let errors: Vec<Value> = r
            .manifests
            .iter()
            .filter_map(|m| {
                let s = m.as_ref()?.status.as_ref()?;
                let message = s.most_common_error.as_ref()?;
                Some(json!({"message": message, "count": s.most_common_error_count}))
            })
            .collect();
        json!({
            "mode": "view",
            "kind": self.kind.name(),
            "state": Self::state_name(&r),
            "status": r.manifests.iter().map(|m| m.as_ref().and_then(|m| m.status.clone())).collect::<Vec<_>>(),
            "identity": {
                "run": runs.join(", "),
                "config": Value::Null,
                "run_dirs": self.dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>(),
                "models": models,
                "engine": engines.join(", "),
                "arms": Value::Null,
            },
            "progress": {
                "unit": "record",
                "outcomes": r.records.0,
                "trajectories": r.records.1,
                "completed": completed,
                "read_seconds": r.seconds,
            },
            "snapshot": {
                "number": r.number,
                "error": lock(&self.error).clone(),
            },
            "paired": paired_table(&r.rows, r.level),
            "headline": headline(&r.rows),
            "live_counts": [],
            "figures_version": r.number,
            "errors": errors,
            "rejects": {"count": rejected, "recent": []},
            "summary_text": r.summary_text,
        })
    }

    fn snapshot_json(&self) -> Option<String> {
        Some(self.reading().json.clone())
    }

    fn figures(&self) -> Vec<FigureSvg> {
        let r = self.reading();
        if let Some((n, figs)) = lock(&self.figures).as_ref() {
            if *n == r.number {
                return figs.as_ref().clone();
            }
        }
        let figs = Arc::new(figures(&r.rows, &r.reliability));
        *lock(&self.figures) = Some((r.number, figs.clone()));
        figs.as_ref().clone()
    }

    fn healthy(&self) -> Result<(), Unavailable> {
        match lock(&self.error).as_ref() {
            Some(e) => Err(Unavailable::Unreadable { error: e.clone() }),
            None => Ok(()),
        }
    }

    fn ready(&self) -> Result<(), Unavailable> {
        Ok(())
    }

    fn run_dirs(&self) -> Vec<PathBuf> {
        self.dirs.clone()
    }
}

/// `choice2seq view`: read the run directories and serve the page over them until Ctrl-C. An
/// address that needs a token without one exits 2 before anything is read.
pub fn execute(args: ViewArgs) -> anyhow::Result<ExitCode> {
    // Who may read the page is settled before the directories are read: a non-loopback
    // address without a token, or a token variable that is unset or empty, exits 2 here.
    let section = c2s_config::ServeSection {
        address: args.serve,
        linger_seconds: 0.0,
        token_env: args.token.serve_token_env,
    };
    let access = match section.access(&|var| std::env::var_os(var)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let view = DirectoryView::open(args.run_dirs)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let bound = super::start(super::bind(args.serve)?, view, &access, runtime.handle())?;
    eprintln!(
        "serving http://{bound}/ (metrics: http://{bound}/metrics){}; Ctrl-C to stop",
        super::auth::token_note(&access)
    );
    runtime.block_on(async {
        let _ = tokio::signal::ctrl_c().await;
    });
    Ok(ExitCode::SUCCESS)
}
