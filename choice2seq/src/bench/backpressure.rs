//! `choice2seq bench backpressure`: memory while outputs cannot be written. The same config
//! (by default the quickstart) runs twice through the real binary, side by side in one
//! invocation: (a) on the ordinary disk, (b) with its run directory on a tmpfs too small for
//! the first Parquet parts, so every sink is blocked from its first write; after
//! `--blocked-seconds` of that the tmpfs is grown and the run finishes. Prints each run's wall
//! time and peak RSS (`VmHWM`, sampled every 0.1 s), the RSS while blocked (it must level
//! off: feeding is paused and only the items already in flight complete), and checks that
//! (b) wrote exactly (a)'s trajectories and requests, none twice.
//!
//! The tmpfs needs root (as the full-disk tests of `tests/lifecycle.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::status_kib;

/// Settings of `bench backpressure`.
#[derive(Debug, clap::Args)]
pub struct BackpressureBench {
    /// The run's config.
    #[arg(long, default_value = "config/quickstart.toml")]
    config: PathBuf,
    /// How long (b)'s outputs stay blocked, in seconds.
    #[arg(long, default_value_t = 60.0)]
    blocked_seconds: f64,
    /// Size of (b)'s tmpfs while blocked, in KiB (room for the manifest, not for a part).
    #[arg(long, default_value_t = 96)]
    disk_kib: u64,
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// A running `choice2seq run`, its stderr in a file.
struct Run {
    child: Child,
    log: PathBuf,
    peak_kib: u64,
}

impl Run {
    fn start(config: &Path, run_dir: &Path, log: PathBuf) -> anyhow::Result<Run> {
        let exe = std::env::current_exe().context("locating the choice2seq binary")?;
        let child = Command::new(exe)
            .args(["run", &config.display().to_string(), "--run-dir"])
            .arg(run_dir)
            .arg("--quiet")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .spawn()
            .context("starting the run")?;
        Ok(Run {
            child,
            log,
            peak_kib: 0,
        })
    }

    /// Samples the peak; the exit status once the run ended.
    fn poll(&mut self) -> anyhow::Result<Option<std::process::ExitStatus>> {
        if let Some(hwm) = status_kib(Some(self.child.id()), "VmHWM:") {
            self.peak_kib = self.peak_kib.max(hwm);
        }
        Ok(self.child.try_wait()?)
    }

    fn rss_kib(&self) -> Option<u64> {
        status_kib(Some(self.child.id()), "VmRSS:")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits for the exit, sampling; a failed run is an error with its log.
    fn finish(mut self) -> anyhow::Result<u64> {
        loop {
            if let Some(status) = self.poll()? {
                anyhow::ensure!(
                    status.success(),
                    "the run failed ({status}):\n{}",
                    self.log()
                );
                return Ok(self.peak_kib);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// `mount -t tmpfs -o size=KIBk` (or a remount to a new size).
fn mount_tmpfs(path: &Path, kib: u64, remount: bool) -> anyhow::Result<()> {
    let mut cmd = Command::new("mount");
    if remount {
        cmd.args(["-o", &format!("remount,size={kib}k")]);
    } else {
        cmd.args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"]);
    }
    let out = cmd.arg(path).output().context("running mount")?;
    anyhow::ensure!(
        out.status.success(),
        "mounting a tmpfs at {} (this bench needs root): {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(())
}

/// Unmounts on drop.
struct Tmpfs(PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Trajectory outcomes by (item, arm), and request ids; an error on a duplicate.
type Written = (BTreeMap<(String, String), (String, bool)>, usize);

fn written(run_dir: &Path) -> anyhow::Result<Written> {
    let rows = c2s_sinks::read_trajectories(&run_dir.join("trajectories"))?;
    let outcomes: BTreeMap<_, _> = rows
        .iter()
        .map(|t| {
            (
                (t.item_id.clone(), t.arm.clone()),
                (t.output.clone(), t.correct),
            )
        })
        .collect();
    anyhow::ensure!(
        outcomes.len() == rows.len(),
        "{}: a trajectory written twice",
        run_dir.display()
    );
    let requests = c2s_sinks::read_requests(&run_dir.join("requests"))?;
    let ids: std::collections::BTreeSet<_> = requests.iter().map(|r| &r.request_id).collect();
    anyhow::ensure!(
        ids.len() == requests.len(),
        "{}: a request written twice",
        run_dir.display()
    );
    Ok((outcomes, requests.len()))
}

pub fn run(args: BackpressureBench) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.config.is_file(),
        "{} not found (run from the repository root)",
        args.config.display()
    );
    let tmp = tempfile::tempdir()?;
    println!(
        "backpressure: {} twice, (a) on disk, (b) with its outputs blocked (a {} KiB tmpfs) for {:.0} s",
        args.config.display(),
        args.disk_kib,
        args.blocked_seconds
    );

    let clean_dir = tmp.path().join("clean");
    let began = Instant::now();
    let clean = Run::start(&args.config, &clean_dir, tmp.path().join("clean.log"))?;
    let clean_peak = clean.finish()?;
    let clean_s = began.elapsed().as_secs_f64();

    let disk = tmp.path().join("disk");
    std::fs::create_dir_all(&disk)?;
    mount_tmpfs(&disk, args.disk_kib, false)?;
    let _unmount = Tmpfs(disk.clone());
    let blocked_dir = disk.join("run");
    let began = Instant::now();
    let mut run = Run::start(&args.config, &blocked_dir, tmp.path().join("blocked.log"))?;
    // Blocked from the first part on: wait for the sinks to say so.
    while !run.log().contains("retrying with backoff") {
        if let Some(status) = run.poll()? {
            anyhow::bail!(
                "the run ended ({status}) before its outputs were blocked: is {} KiB too much?\n{}",
                args.disk_kib,
                run.log()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let blocked_at = Instant::now();
    println!("{:>10} {:>10}", "blocked s", "RSS MiB");
    let mut next_print = 0.0;
    let mut blocked_rss = Vec::new();
    while blocked_at.elapsed().as_secs_f64() < args.blocked_seconds {
        if let Some(status) = run.poll()? {
            anyhow::bail!("the run ended ({status}) while blocked:\n{}", run.log());
        }
        let t = blocked_at.elapsed().as_secs_f64();
        if t >= next_print {
            let rss = run.rss_kib().unwrap_or(0);
            blocked_rss.push(rss);
            println!("{t:>10.0} {:>10.1}", mib(rss));
            next_print += (args.blocked_seconds / 10.0).max(1.0);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    mount_tmpfs(&disk, 4 << 20, true)?;
    let blocked_peak = run.finish()?;
    let blocked_s = began.elapsed().as_secs_f64();

    let (clean_out, clean_requests) = written(&clean_dir)?;
    let (blocked_out, blocked_requests) = written(&blocked_dir)?;
    println!("| run | wall s | peak RSS MiB | trajectories | requests |");
    println!("|---|---|---|---|---|");
    println!(
        "| (a) clean | {clean_s:.1} | {:.1} | {} | {clean_requests} |",
        mib(clean_peak),
        clean_out.len()
    );
    println!(
        "| (b) outputs blocked {:.0} s | {blocked_s:.1} | {:.1} | {} | {blocked_requests} |",
        args.blocked_seconds,
        mib(blocked_peak),
        blocked_out.len()
    );
    let first_half = blocked_rss.get(blocked_rss.len() / 2).copied().unwrap_or(0);
    let last = blocked_rss.last().copied().unwrap_or(0);
    println!(
        "peak RSS (b)/(a) = {:.3}; RSS while blocked from mid-way to the end: {:.1} → {:.1} MiB",
        blocked_peak as f64 / clean_peak.max(1) as f64,
        mib(first_half),
        mib(last)
    );
    let same = clean_out == blocked_out && clean_requests == blocked_requests;
    println!(
        "(b) wrote {}: {} trajectories and {} requests, none twice",
        if same {
            "exactly (a)'s outcomes"
        } else {
            "OTHER outcomes than (a)"
        },
        blocked_out.len(),
        blocked_requests
    );
    Ok(if same {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
