//! `choice2seq bench serve`: what the live monitor costs a run. The panel of `bench inference`
//! runs through the configured path (its (b)) in rounds, once unserved and once with
//! `--serve` while a client polls `/metrics` and `/api/state` as the live page does (the order
//! alternates by round, so a drift of the machine falls on both). Prints each run's wall time
//! and the ratio of the medians; a ratio near 1 is the goal.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{free_address, loopback_get, prepare, run_mode, BenchWork, InferenceBench};

/// Settings of `bench serve`.
#[derive(Debug, clap::Args)]
pub struct ServeBench {
    #[command(flatten)]
    panel: InferenceBench,
    /// Rounds; each runs the panel once unserved and once served.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// How often the client polls `/metrics` and `/api/state`, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    poll_ms: u64,
}

/// One `GET path`; whether it answered 200.
fn get_ok(addr: SocketAddr, path: &str) -> bool {
    loopback_get(addr, path).is_some_and(|(code, _)| code == 200)
}

/// Poll `addr` every `every` until `stop`; the number of answered polls.
fn poll(addr: SocketAddr, every: Duration, stop: Arc<AtomicBool>) -> u64 {
    let mut answered = 0;
    while !stop.load(Ordering::Relaxed) {
        if get_ok(addr, "/metrics") && get_ok(addr, "/api/state") {
            answered += 1;
        }
        std::thread::sleep(every);
    }
    answered
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

pub fn run(bench: ServeBench) -> anyhow::Result<ExitCode> {
    let BenchWork { _tmp, work, config } = prepare(&bench.panel)?;
    let every = Duration::from_millis(bench.poll_ms.max(10));
    println!();
    println!("| round | served | wall s | requests/s | polls answered |");
    println!("|---|---|---|---|---|");
    let (mut plain, mut served) = (Vec::new(), Vec::new());
    for round in 0..bench.rounds.max(1) {
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for serve in order {
            let run_dir = work.join(if serve { "run-served" } else { "run-plain" });
            let (result, polls) = if serve {
                let addr = free_address()?;
                let stop = Arc::new(AtomicBool::new(false));
                let poller = {
                    let stop = stop.clone();
                    std::thread::spawn(move || poll(addr, every, stop))
                };
                let result = run_mode(&bench.panel, &config, run_dir, false, Some(addr));
                stop.store(true, Ordering::Relaxed);
                let polls = poller.join().unwrap_or(0);
                (result?, Some(polls))
            } else {
                (run_mode(&bench.panel, &config, run_dir, false, None)?, None)
            };
            let r = &result.report;
            println!(
                "| {round} | {} | {:.1} | {:.2} | {} |",
                if serve { "yes" } else { "no" },
                r.elapsed,
                r.requests as f64 / r.elapsed.max(1e-9),
                polls.map_or("-".to_string(), |p| p.to_string())
            );
            if serve {
                served.push(r.elapsed);
            } else {
                plain.push(r.elapsed);
            }
        }
    }
    let (m_plain, m_served) = (median(plain), median(served));
    println!();
    println!(
        "median wall s: unserved {m_plain:.1}, served {m_served:.1}; served / unserved = {:.3}",
        m_served / m_plain.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}
