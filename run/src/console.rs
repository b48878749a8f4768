//! The terminal view of a run: a progress bar with rate and ETA, a live table of EM and SCR per
//! domain and comparison (published by the snapshot thread from the differential counts), and
//! the summary.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use c2s_config::RunKind;
use c2s_operators::live_stats::LiveTable;

use super::shared::Shared;

/// Progress display of worker 0.
pub struct Console {
    bar: Option<ProgressBar>,
    last: Instant,
    last_snapshots: u64,
    started: Instant,
}

fn fmt_rate(x: Option<f64>) -> String {
    x.map(|v| format!("{:5.1}%", 100.0 * v))
        .unwrap_or_else(|| "    -".into())
}

/// The live table as text: one line per (model, domain, comparison), and the last failed
/// snapshot's error.
pub fn table_text(t: &LiveTable) -> String {
    let mut out = String::new();
    if let Some(e) = &t.last_error {
        out.push_str(&format!("  ERROR {e}\n"));
    }
    for ((model, domain, comparison), jt) in &t.tables {
        let n = jt.n();
        out.push_str(&format!(
            "  {domain:<10} {comparison:<40} n={n:<4} Native EM {} Serial EM {} SCR {} ({}/{})  [{model}]\n",
            fmt_rate(jt.native_em().value()),
            fmt_rate(jt.serial_em().value()),
            fmt_rate(jt.scr().value()),
            jt.both,
            jt.both + jt.native_only,
        ));
    }
    out
}

impl Console {
    pub fn new(shared: &Shared) -> Console {
        let bar = (!shared.quiet).then(|| {
            let bar = match shared.total_items {
                Some(n) => ProgressBar::new(n),
                None => ProgressBar::new_spinner(),
            };
            let style = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} items  {msg}  ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        Console {
            bar,
            last: Instant::now(),
            last_snapshots: 0,
            started: Instant::now(),
        }
    }

    /// Refresh at most a few times per second.
    pub fn tick(&mut self, shared: &Shared, items_done: u64) {
        if self.last.elapsed() < Duration::from_millis(200) {
            return;
        }
        self.last = Instant::now();
        let c = &shared.counters;
        let requests = c.requests.load(Ordering::Relaxed);
        let trajectories = c.trajectories.load(Ordering::Relaxed);
        let secs = self.started.elapsed().as_secs_f64().max(1e-9);
        let msg = format!(
            "{trajectories} {}, {requests} requests ({:.1}/s)",
            unit(shared),
            requests as f64 / secs
        );
        let table = shared.live.lock().map(|t| t.clone()).unwrap_or_default();
        if let Some(bar) = &self.bar {
            bar.set_position(items_done);
            bar.set_message(msg);
            if table.snapshots > self.last_snapshots {
                self.last_snapshots = table.snapshots;
                bar.println(format!(
                    "metric snapshot {}:\n{}",
                    table.snapshots - 1,
                    table_text(&table)
                ));
            }
        } else if table.snapshots > self.last_snapshots {
            self.last_snapshots = table.snapshots;
            tracing::info!(
                "metric snapshot {}:\n{}",
                table.snapshots - 1,
                table_text(&table)
            );
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The final summary: counts, rate, where the outputs are.
pub fn summary(shared: &Shared, elapsed: f64) {
    let c = &shared.counters;
    let requests = c.requests.load(Ordering::Relaxed);
    let trajectories = c.trajectories.load(Ordering::Relaxed);
    let table = shared.live.lock().map(|t| t.clone()).unwrap_or_default();
    println!(
        "done in {elapsed:.1} s: {trajectories} {}, {requests} requests ({:.2} requests/s)",
        unit(shared),
        requests as f64 / elapsed.max(1e-9)
    );
    if !table.tables.is_empty() || table.last_error.is_some() {
        print!("{}", table_text(&table));
    }
    if table.failed_snapshots > 0 {
        println!(
            "{} metric snapshot(s) failed: see the `snapshot_error` rows of metrics/",
            table.failed_snapshots
        );
    }
    let dir = shared.run_dir.display();
    println!("outputs (Parquet, readable while a run goes on):");
    let datasets: &[&str] = match shared.cfg.kind() {
        RunKind::Coverage(_) => &["decisions", "requests", "rejects"],
        RunKind::Dialogue(_) => &["dialogue_turns", "requests", "rejects"],
        RunKind::Items => &["trajectories", "outcomes", "metrics", "requests", "rejects"],
    };
    for d in datasets {
        println!("  {dir}/{d}/*.parquet");
    }
    if shared.prompts.is_some() {
        println!("  {dir}/prompts/*.parquet   (the text of each prompt, once; key prompt_sha256)");
    }
    println!("  {dir}/manifest.json");
}

/// What the completed-unit counter counts: trajectories, coverage decisions, or dialogue
/// runs (a dialogue under one arm and mode).
fn unit(shared: &Shared) -> &'static str {
    match shared.cfg.kind() {
        RunKind::Coverage(_) => "decisions",
        RunKind::Dialogue(_) => "dialogue runs",
        RunKind::Items => "trajectories",
    }
}
