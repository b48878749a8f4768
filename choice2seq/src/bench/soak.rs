//! `choice2seq bench soak`: a continuous Kafka run with the simulated engine fed N items (the
//! dev and test banks cycled under fresh ids), printing items/s and the run's RSS every
//! `--every` items, to show whether memory levels off in an endless stream.
//!
//! The run is the real binary (`choice2seq run`, Native + Serial/Full, a Kafka source with
//! `continuous = true`) against a real broker (tansu, in-memory storage); progress is the
//! group's committed offsets (items whose outputs are durable), RSS is `VmRSS` of the run's
//! process. The items are produced while the run consumes, at most `--ahead` beyond what is
//! committed. When N items are committed the run is stopped with SIGINT (its Ctrl-C path).
//!
//! The run uses the two named options for endless streams — `[run] duplicate_id_window =
//! 100000` and `[stats] calibration = false` — whose exact defaults keep one entry per item
//! (every id seen; every distinct confidence key); everything else is as by default.

use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use c2s_sources::local_broker::LocalBroker;
use c2s_sources::{create_topic, produce, KafkaItemSource};

/// Settings of `bench soak`.
#[derive(Debug, clap::Args)]
pub struct SoakBench {
    /// Items fed through the run.
    #[arg(long, default_value_t = 1_000_000)]
    items: u64,
    /// Print a line every this many committed items.
    #[arg(long, default_value_t = 100_000)]
    every: u64,
    /// Produce at most this many items beyond the committed ones.
    #[arg(long, default_value_t = 50_000)]
    ahead: u64,
    /// Keep the exact defaults (every item id for the duplicate check, calibration on):
    /// measures how fast those grow.
    #[arg(long)]
    exact: bool,
    /// Run directory (default: a temporary directory, removed at the end).
    #[arg(long)]
    run_dir: Option<PathBuf>,
}

/// The bank items, as JSON objects.
fn bank_items() -> anyhow::Result<Vec<serde_json::Map<String, serde_json::Value>>> {
    let mut out = Vec::new();
    for bank in [
        "arithmetic-dev",
        "lexical-dev",
        "arithmetic-test",
        "lexical-test",
    ] {
        let path = PathBuf::from("data/banks").join(format!("{bank}.jsonl"));
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            if let serde_json::Value::Object(m) = serde_json::from_str(line)? {
                out.push(m);
            }
        }
    }
    anyhow::ensure!(!out.is_empty(), "no bank items under data/banks");
    Ok(out)
}

/// Resident set size of a process, in MiB.
fn rss_mib(pid: u32) -> Option<f64> {
    super::status_kib(Some(pid), "VmRSS:").map(|kb| kb as f64 / 1024.0)
}

pub fn run(args: SoakBench) -> anyhow::Result<ExitCode> {
    let items = bank_items()?;
    // scripts/fetch-broker.sh installs the broker under .tools/ (run from the repository).
    let tansu = PathBuf::from(".tools/tansu/tansu");
    anyhow::ensure!(
        tansu.is_file(),
        "{} not found: run scripts/fetch-broker.sh from the repository root",
        tansu.display()
    );
    let broker = LocalBroker::start(&tansu, &[], None).context("starting the broker")?;
    let b = broker.addr.clone();
    let topic = "soak-items";
    create_topic(&b, topic, 1).context("creating the items topic")?;
    let tmp = tempfile::tempdir()?;
    let run_dir = args
        .run_dir
        .clone()
        .unwrap_or_else(|| tmp.path().join("run"));
    let config = tmp.path().join("soak.toml");
    std::fs::write(
        &config,
        format!(
            "[run]\nname = \"soak\"\nduplicate_id_window = {}\n\n[model]\npath = \"models/SmolLM2-135M-Instruct.Q4_1.gguf\"\nengine = \"simulated\"\n\n\
             [[sources]]\nkind = \"kafka\"\nbrokers = \"{b}\"\ntopic = \"{topic}\"\ngroup = \"soak\"\ncontinuous = true\n\n\
             [[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n\
             [stats]\nbootstrap_draws = 999\ncalibration = {}\nsnapshot_every = {}\nsnapshot_seconds = 60.0\n",
            if args.exact { 0 } else { 100_000 },
            args.exact,
            args.every
        ),
    )?;
    let exe = std::env::current_exe().context("locating the choice2seq binary")?;
    let log_path = tmp.path().join("run.log");
    let log = std::fs::File::create(&log_path)?;
    let mut child = Command::new(&exe)
        .args(["run", &config.display().to_string(), "--run-dir"])
        .arg(&run_dir)
        .arg("--quiet")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .context("starting the run")?;
    let pid = child.id();
    println!(
        "soak: {} items through a continuous Kafka run (simulated engine, Native + Serial/Full; {}), run pid {pid}",
        args.items,
        if args.exact {
            "exact defaults: every id kept, calibration on"
        } else {
            "duplicate_id_window = 100000, calibration off"
        }
    );
    println!(
        "{:>10} {:>10} {:>12} {:>12} {:>10}",
        "items", "seconds", "items/s", "interval/s", "RSS MiB"
    );
    let started = Instant::now();
    let (mut produced, mut next_print) = (0u64, args.every);
    let (mut last_items, mut last_t) = (0u64, 0.0f64);
    let mut peak_rss = 0.0f64;
    let committed = |b: &str| -> u64 {
        KafkaItemSource::connect(b, topic, "soak", 0, 1)
            .map(|s| s.positions().values().map(|&o| o.max(0) as u64).sum())
            .unwrap_or(0)
    };
    loop {
        let done = committed(&b);
        while produced < args.items && produced < done + args.ahead {
            let n = 10_000.min(args.items - produced);
            let batch: Vec<(Option<String>, String)> = (produced..produced + n)
                .map(|i| {
                    let mut m = items[(i % items.len() as u64) as usize].clone();
                    let id = m
                        .get("item_id")
                        .and_then(|v| v.as_str())
                        .unwrap_or("item")
                        .to_string();
                    m.insert("item_id".into(), format!("{id}~{i}").into());
                    m.insert("partner_id".into(), serde_json::Value::Null);
                    (None, serde_json::Value::Object(m).to_string())
                })
                .collect();
            produce(&b, topic, &batch).context("producing items")?;
            produced += n;
        }
        if let Some(r) = rss_mib(pid) {
            peak_rss = peak_rss.max(r);
        }
        if done >= next_print || done >= args.items {
            let t = started.elapsed().as_secs_f64();
            println!(
                "{:>10} {:>10.1} {:>12.0} {:>12.0} {:>10.1}",
                done,
                t,
                done as f64 / t,
                (done - last_items) as f64 / (t - last_t).max(1e-9),
                rss_mib(pid).unwrap_or(f64::NAN)
            );
            (last_items, last_t) = (done, t);
            while next_print <= done {
                next_print += args.every;
            }
        }
        if done >= args.items {
            break;
        }
        if let Some(status) = child.try_wait()? {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            anyhow::bail!("the run ended early ({status}) after {done} items:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    // The run's Ctrl-C: stop feeding, finish in-flight items, close parts.
    let _ = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status();
    let status = child.wait()?;
    println!(
        "peak RSS {peak_rss:.1} MiB; run exit {status}; {:.1} s in all",
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
