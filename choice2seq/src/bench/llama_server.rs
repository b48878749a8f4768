//! `choice2seq bench inference --against llama-server`: llama.cpp's own server, as a user who
//! wants speed from llama.cpp would run it, beside the pipeline's path. After (b) (and (c)
//! with `--against prefix-bf16`), `llama-server` (`scripts/fetch-llama-server.sh`) starts on
//! the same cores and GGUF with `--server-slots` parallel slots, its prompt cache on (the
//! server's default) and its `/metrics`; (d) runs the same panel through the pipeline's
//! `openai` engine with that many requests in flight, so the server sees the pipeline's
//! concurrency. Scored requests use `scoring = "logit_bias"` (llama.cpp's server refuses
//! `echo`): the top log-probabilities, and for a decision whose options are not all among
//! them a second request on the same (cached) prompt reading them raised by a logit bias, so
//! every option's full-vocabulary log-probability is exact.
//!
//! Printed: both sides' wall time and requests/s, computed prompt tokens (ours: the engine's;
//! the server's: `llamacpp:prompt_tokens_total`, tokens it evaluated, cached ones excluded; a
//! difference over 1% is a warning), peak RSS (the server process's own), the ratio, and the
//! agreement of the option distributions on the requests both made.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use super::llamacpp::agreement;
use super::{
    free_address, loopback_get, run_mode_with, scored_probabilities, status_kib, InferenceBench,
    ModeResult,
};

/// The server binary: `$C2S_LLAMA_SERVER`, else `.tools/llama-server/bin/llama-server`.
fn server_binary() -> anyhow::Result<PathBuf> {
    super::fetched_tool(
        "C2S_LLAMA_SERVER",
        ".tools/llama-server/bin/llama-server",
        "scripts/fetch-llama-server.sh",
    )
}

/// A running `llama-server`, killed when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Context tokens per slot: the longest quickstart or paper prompt with its answer is far
/// below this.
const SLOT_CONTEXT: usize = 4096;

impl Server {
    /// Start the server on `model` with `slots` parallel slots and `threads` threads, and wait
    /// (at most 120 s) until `/health` answers 200.
    fn start(model: &Path, slots: usize, threads: usize, log: PathBuf) -> anyhow::Result<Server> {
        let bin = server_binary()?;
        let addr = free_address()?;
        let out =
            std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let child = Command::new(&bin)
            .arg("--model")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &addr.port().to_string()])
            .args(["--threads", &threads.to_string()])
            .args(["--threads-batch", &threads.to_string()])
            .args(["--parallel", &slots.to_string()])
            .args(["--ctx-size", &(slots * SLOT_CONTEXT).to_string()])
            .args(["--alias", "bench", "--metrics"])
            .stdout(Stdio::from(out.try_clone()?))
            .stderr(Stdio::from(out))
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let mut server = Server { child, addr, log };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Some(status) = server.child.try_wait()? {
                bail!(
                    "llama-server exited ({status}) before it was ready; its log: {}",
                    server.log.display()
                );
            }
            if loopback_get(addr, "/health").is_some_and(|(code, _)| code == 200) {
                return Ok(server);
            }
            if Instant::now() > deadline {
                bail!(
                    "llama-server not ready after 120 s; its log: {}",
                    server.log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// A counter of the server's `/metrics` (`llamacpp:NAME`).
    fn metric(&self, name: &str) -> anyhow::Result<f64> {
        loopback_get(self.addr, "/metrics")
            .and_then(|(_, body)| metric_value(&body, name))
            .with_context(|| format!("llama-server's /metrics has no llamacpp:{name}"))
    }
}

/// The value of `llamacpp:NAME` in a Prometheus text exposition.
fn metric_value(text: &str, name: &str) -> Option<f64> {
    let key = format!("llamacpp:{name}");
    text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok())?
    })
}

/// The `[model.openai]` section of (d): the bench's server, `logit_bias` scoring,
/// `slots` requests in flight.
fn openai_section(port: u16, slots: usize) -> anyhow::Result<c2s_config::OpenAiSection> {
    let text = format!(
        "base_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"bench\"\nscoring = \"logit_bias\"\nconcurrency = {slots}\ntimeout_s = 600\n"
    );
    Ok(toml::from_str(&text)?)
}

/// What (d) needs, checked before any pass: a GGUF model and the server binary.
pub(super) fn check(model: &Path) -> anyhow::Result<()> {
    if model.extension().is_none_or(|e| e != "gguf") {
        bail!(
            "--against llama-server needs a GGUF model ({} is not one)",
            model.display()
        );
    }
    server_binary().map(drop)
}

/// Run (d) through llama-server and print it beside `ours` (label, result); [`check`] has
/// passed before any pass.
pub(super) fn compare(
    bench: &InferenceBench,
    config: &Path,
    model: &Path,
    work: &Path,
    ours: &[(&str, &ModeResult)],
) -> anyhow::Result<()> {
    let slots = bench.server_slots;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    eprintln!(
        "(d) the panel through llama-server ({slots} parallel slots, prompt cache, {threads} threads) and the openai engine …"
    );
    let server = Server::start(model, slots, threads, work.join("llama-server.log"))?;
    let openai = openai_section(server.addr.port(), slots)?;
    let d = run_mode_with(bench, config, work.join("run-d"), false, None, &|cfg| {
        cfg.model.engine = c2s_config::EngineKind::Openai;
        cfg.model.dtype = c2s_model::WeightDtype::F32;
        cfg.model.openai = Some(openai.clone());
    })?;
    let computed = server.metric("prompt_tokens_total")? as u64;
    let server_rss_kb = status_kib(Some(server.child.id()), "VmHWM:").unwrap_or(0);
    let version = loopback_get(server.addr, "/props")
        .and_then(|(_, b)| serde_json::from_str::<serde_json::Value>(&b).ok())
        .and_then(|v| v["build_info"].as_str().map(str::to_string))
        .unwrap_or_else(|| "unknown build".into());
    drop(server);

    let theirs = scored_probabilities(&d.run_dir)?;
    let rate = |m: &ModeResult| m.report.requests as f64 / m.report.elapsed.max(1e-9);
    println!();
    println!("llama.cpp's server ({version}) beside the pipeline, same panel and cores:");
    println!("| path | requests | wall s | requests/s | computed tokens | computed tokens / wall s | peak RSS MiB |");
    println!("|---|---|---|---|---|---|---|");
    for (label, m) in ours {
        let e = &m.report.engine.engine;
        println!(
            "| {label} | {} | {:.1} | {:.2} | {} | {:.0} | {:.0} |",
            m.report.requests,
            m.report.elapsed,
            rate(m),
            e.computed_tokens,
            e.computed_tokens as f64 / m.report.elapsed.max(1e-9),
            m.peak_rss_kb as f64 / 1024.0
        );
    }
    println!(
        "| (d) llama-server, {slots} slots, prompt cache, openai engine (logit_bias) | {} | {:.1} | {:.2} | {computed} | {:.0} | {:.0} (server) |",
        d.report.requests,
        d.report.elapsed,
        rate(&d),
        computed as f64 / d.report.elapsed.max(1e-9),
        server_rss_kb as f64 / 1024.0
    );
    println!();
    println!(
        "wall s of the pipeline's own paths include model loading, (d)'s excludes the server's"
    );
    for (label, m) in ours {
        let ours_computed = m.report.engine.engine.computed_tokens;
        let token_ratio = computed as f64 / (ours_computed as f64).max(1.0);
        let agree = agreement(&scored_probabilities(&m.run_dir)?, &theirs);
        println!(
            "{label} / llama-server (wall time of (d) / of {label}): {:.2}x; computed tokens llama-server {computed} / ours {ours_computed} = {token_ratio:.3}{}; agreement: {} requests both made, same argmax on {}, max |Δp| = {:.3}",
            d.report.elapsed / m.report.elapsed.max(1e-9),
            if (token_ratio - 1.0).abs() > 0.01 {
                " (WARNING: more than 1% apart, so the ratio is not only per-token speed)"
            } else {
                ""
            },
            agree.compared,
            agree.same_argmax,
            agree.max_abs_diff
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_is_read_from_the_exposition() {
        let text = "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed\n\
                    # TYPE llamacpp:prompt_tokens_total counter\n\
                    llamacpp:prompt_tokens_total 113401\n\
                    llamacpp:prompt_tokens_cached_total 192956\n\
                    llamacpp:prompt_seconds_total 340.3\n";
        assert_eq!(metric_value(text, "prompt_tokens_total"), Some(113401.0));
        assert_eq!(metric_value(text, "prompt_seconds_total"), Some(340.3));
        assert_eq!(metric_value(text, "prompt_tokens"), None);
    }

    #[test]
    fn the_openai_section_scores_by_logit_bias_with_the_slots_in_flight() {
        let s = openai_section(8931, 4).expect("section");
        assert_eq!(s.base_url, "http://127.0.0.1:8931/v1");
        assert_eq!(s.scoring, c2s_config::OpenAiScoring::LogitBias);
        assert_eq!(s.concurrency, 4);
    }
}
