//! `choice2seq bench`: benchmarks that print measured figures (`engine.rs`, `serve.rs`,
//! `soak.rs`, `backpressure.rs`; for `--against`, `llamacpp.rs` replays a run through
//! llama-cpp-python, `llama_server.rs` runs it through llama.cpp's own server, `bf16.rs` with
//! the prefix engine's bf16 weights).
//!
//! `bench inference`: the inference benchmark of a fixed dev panel (Native and
//! Serial/Full, both domains) through the pipeline's own path — `choice2seq run`'s dataflow
//! with its inference stage — twice: (a) one request at a time with every prompt computed in
//! full, against (b) the configured path: batching, prefix reuse and de-duplication. Prints a
//! table with the b/a ratio, engine prompt tokens per second and peak RSS, and checks from the
//! two runs' Parquet outputs that (b) answered exactly what (a) answered.

mod backpressure;
mod bf16;
mod engine;
mod llama_server;
mod llamacpp;
mod serve;
mod soak;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Subcommand;

use c2s_config::Batching;
use c2s_records::{Answer, ItemPolicy, RequestLayout};

/// The benchmarks of `choice2seq bench`.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Inference throughput on a fixed dev panel through the pipeline: one-at-a-time full
    /// prompts vs the batched, prefix-reusing, de-duplicating path.
    Inference(InferenceBench),
    /// One engine on a fixed panel of real requests, batched, without the dataflow: requests/s,
    /// prompt tokens/s, and optionally every request's tokens and scores (the GPU check's input).
    Engine(engine::EngineCheck),
    /// The live monitor's overhead: the same panel as `inference` (b), run with and without
    /// `--serve` alternately while a client polls `/metrics` and `/api/state`.
    Serve(serve::ServeBench),
    /// A continuous Kafka run fed N items with the simulated engine: items/s and RSS every
    /// 100,000 items.
    Soak(soak::SoakBench),
    /// Memory while outputs cannot be written: the quickstart on disk and with its run
    /// directory on a full tmpfs for a while (root), peak RSS of both side by side.
    Backpressure(backpressure::BackpressureBench),
    /// Statistics: incremental joint-count updates (outcomes/s through the differential
    /// dataflow) and the time of a full metric snapshot.
    Stats {
        /// Outcomes fed through the incremental joint counts.
        #[arg(long, default_value_t = 1_000_000)]
        outcomes: u64,
        /// Bootstrap draws of the snapshot.
        #[arg(long, default_value_t = 9999)]
        draws: u32,
    },
}

/// Run one benchmark and print its figures.
pub fn run(cmd: BenchCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCommand::Inference(bench) => inference(bench),
        BenchCommand::Engine(check) => engine::run(check),
        BenchCommand::Stats { outcomes, draws } => stats(outcomes, draws),
        BenchCommand::Soak(bench) => soak::run(bench),
        BenchCommand::Serve(bench) => serve::run(bench),
        BenchCommand::Backpressure(bench) => backpressure::run(bench),
    }
}

/// Settings of `bench inference`.
#[derive(Debug, clap::Args)]
pub struct InferenceBench {
    /// Model: GGUF file or local Hugging Face directory.
    #[arg(long, default_value = "models/SmolLM2-135M-Instruct.Q4_1.gguf")]
    model: PathBuf,
    /// Engine: `prefix` or `mistralrs`.
    #[arg(long, default_value = "prefix")]
    engine: c2s_config::EngineKind,
    /// Items per domain from the dev banks (the panel has twice as many).
    #[arg(long, default_value_t = 24)]
    per_domain: usize,
    /// Bank directory.
    #[arg(long, default_value = "data/banks")]
    banks: PathBuf,
    /// Requests per engine batch in (b).
    #[arg(long, default_value_t = 32)]
    max_batch: usize,
    /// Only run (b), the pipeline's configured path (no baseline, no agreement check).
    #[arg(long)]
    only_batched: bool,
    /// Keep the two run directories here instead of a temporary directory.
    #[arg(long)]
    keep: Option<PathBuf>,
    /// Request layout: `paper` (state first, E.2/E.5; the default) or `state_last`.
    #[arg(long, default_value = "paper", value_parser = crate::cli::config_name::<RequestLayout>)]
    layout: RequestLayout,
    /// How (b) drives the engine: `continuous` (the default) or `batch` (a batch at a time).
    #[arg(long, default_value = "continuous", value_parser = crate::cli::config_name::<Batching>)]
    batching: Batching,
    /// Run this config's panel instead of the fixed dev panel (e.g. `config/quickstart.toml`);
    /// its `[inference]` batch size is replaced by `--max-batch`.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Run (b)'s scored requests through another engine after it, on the same cores, and
    /// print both speeds and their agreement (`llamacpp`: `scripts/fetch-llamacpp.sh`'s venv;
    /// `llama-server`: llama.cpp's server from `scripts/fetch-llama-server.sh`, driven by the
    /// pipeline's openai engine; `prefix-bf16`: the prefix engine with bf16 weights). Repeat
    /// for several.
    #[arg(long, value_enum)]
    against: Vec<Reference>,
    /// `--against llama-server`: the server's parallel slots, and the openai engine's
    /// requests in flight.
    #[arg(long, default_value_t = 4)]
    server_slots: usize,
}

/// The engines `bench inference` can be set beside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Reference {
    /// llama.cpp through llama-cpp-python (`scripts/fetch-llamacpp.sh`; `bench/llamacpp.rs`).
    Llamacpp,
    /// llama.cpp's own server with parallel slots and its prompt cache, through the openai
    /// engine (`scripts/fetch-llama-server.sh`; `bench/llama_server.rs`).
    LlamaServer,
    /// The prefix engine itself with bf16 weights (`[model] dtype = "bf16"`): the same panel
    /// again, side by side with (b)'s f32 (`bench/bf16.rs`).
    PrefixBf16,
}

/// A tool a reference needs, built by a fetch script: the path in `$env_var`, else `default`
/// (relative to the repository root); an error naming the script when it is not there.
pub(super) fn fetched_tool(env_var: &str, default: &str, script: &str) -> anyhow::Result<PathBuf> {
    let path = std::env::var_os(env_var)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(default));
    if !path.exists() {
        anyhow::bail!(
            "{}: missing; run `bash {script}` (or set {env_var}) first",
            path.display()
        );
    }
    Ok(path)
}

/// A free loopback address (released at once; the server started next binds it).
pub(super) fn free_address() -> anyhow::Result<std::net::SocketAddr> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    listener.local_addr().context("the free port")
}

/// One plain `GET path` on a loopback server: the status code and the body, `None` when
/// nothing answered (connect within 1 s, read within 10 s).
pub(super) fn loopback_get(addr: std::net::SocketAddr, path: &str) -> Option<(u16, String)> {
    use std::io::Read;
    let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(head.as_bytes()).ok()?;
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    let code = answer.split_whitespace().nth(1)?.parse().ok()?;
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    Some((code, body.to_string()))
}

/// A memory field of `/proc/PID/status` (`VmRSS:`, `VmHWM:`, …) in KiB; `pid` None: this
/// process.
pub(super) fn status_kib(pid: Option<u32>, field: &str) -> Option<u64> {
    let path = pid.map_or("/proc/self/status".to_string(), |p| {
        format!("/proc/{p}/status")
    });
    std::fs::read_to_string(path)
        .ok()?
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Peak resident set size (kB) since the last reset.
fn peak_rss_kb() -> u64 {
    status_kib(None, "VmHWM:").unwrap_or(0)
}

/// Reset the peak RSS counter (Linux: writing 5 to clear_refs), after returning to the OS the
/// memory the prefix engine keeps between forward passes, so that a path's peak is its own and
/// not the previous path's freed heap.
fn reset_peak_rss() {
    c2s_model::engines::prefix::return_freed_memory();
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// What one pass through the pipeline measured.
pub(super) struct ModeResult {
    pub(super) report: c2s_run::RunReport,
    run_dir: PathBuf,
    model_calls: usize,
    peak_rss_kb: u64,
}

/// The panel: the first `per_domain` items of each dev bank, stratified by length.
fn write_panel(banks: &Path, per_domain: usize, out: &Path) -> anyhow::Result<(usize, usize)> {
    let policy = ItemPolicy::default();
    let mut counts = Vec::new();
    let mut f =
        std::fs::File::create(out).with_context(|| format!("creating {}", out.display()))?;
    for name in ["arithmetic-dev.jsonl", "lexical-dev.jsonl"] {
        let bank = c2s_banks::bank::read_bank(&banks.join(name), &policy)?;
        let per_length = per_domain.div_ceil(6);
        let mut taken: HashMap<usize, usize> = HashMap::new();
        let mut n = 0;
        for it in bank {
            let k = taken.entry(it.length).or_default();
            if *k < per_length && n < per_domain {
                *k += 1;
                n += 1;
                writeln!(f, "{}", serde_json::to_string(&it)?)?;
            }
        }
        counts.push(n);
    }
    Ok((counts[0], counts[1]))
}

/// One pass of the panel through `choice2seq run`'s lifecycle (a fresh run directory),
/// served by the live monitor at `serve` when given.
pub(super) fn run_mode(
    bench: &InferenceBench,
    config: &Path,
    run_dir: PathBuf,
    one_at_a_time: bool,
    serve: Option<std::net::SocketAddr>,
) -> anyhow::Result<ModeResult> {
    run_mode_with(bench, config, run_dir, one_at_a_time, serve, &|_| {})
}

/// [`run_mode`] with the config changed by `adjust` first (another dtype, another engine).
pub(super) fn run_mode_with(
    bench: &InferenceBench,
    config: &Path,
    run_dir: PathBuf,
    one_at_a_time: bool,
    serve: Option<std::net::SocketAddr>,
    adjust: &dyn Fn(&mut c2s_config::RunConfig),
) -> anyhow::Result<ModeResult> {
    let mut cfg = c2s_config::load(config).map_err(|e| anyhow::anyhow!("{e}"))?;
    adjust(&mut cfg);
    cfg.serve = serve.map(|address| c2s_config::ServeSection {
        address,
        linger_seconds: 0.0,
        token_env: None,
    });
    if one_at_a_time {
        cfg.model.prefix_reuse = false;
        cfg.inference.max_batch = 1;
        cfg.inference.max_in_flight = 1;
        cfg.inference.dedup = false;
    } else {
        cfg.inference.max_batch = bench.max_batch;
    }
    let _ = std::fs::remove_dir_all(&run_dir);
    reset_peak_rss();
    let report = c2s_run::execute(cfg, run_dir.clone(), timely::Config::thread(), true)?;
    if report.exit != ExitCode::SUCCESS {
        anyhow::bail!("the run into {} failed", run_dir.display());
    }
    let requests = c2s_sinks::read::read_requests(&run_dir.join("requests"))?;
    Ok(ModeResult {
        model_calls: requests.iter().filter(|r| !r.cached).count(),
        report,
        run_dir,
        peak_rss_kb: peak_rss_kb(),
    })
}

/// Where a benchmark works: its panel, its config and its run directories.
pub(super) struct BenchWork {
    /// Removed on drop unless `--keep` named a directory.
    pub(super) _tmp: tempfile::TempDir,
    pub(super) work: PathBuf,
    pub(super) config: PathBuf,
}

/// Write the panel and its config into a work directory (`--keep` or a temporary one).
pub(super) fn prepare(bench: &InferenceBench) -> anyhow::Result<BenchWork> {
    let tmp = tempfile::tempdir().context("creating a temporary directory")?;
    let work = bench
        .keep
        .clone()
        .unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&work)?;
    if let Some(config) = &bench.config {
        println!(
            "panel: {}'s sources and arms, through the pipeline (one worker)",
            config.display()
        );
        return Ok(BenchWork {
            _tmp: tmp,
            work,
            config: config.clone(),
        });
    }
    let panel = work.join("panel.jsonl");
    let (n_arith, n_lex) = write_panel(&bench.banks, bench.per_domain, &panel)?;
    let model = std::fs::canonicalize(&bench.model)
        .with_context(|| format!("model {}", bench.model.display()))?;
    let config = work.join("bench.toml");
    std::fs::write(
        &config,
        format!(
            "[run]\nname = \"bench-inference\"\nrequest_layout = {layout:?}\n\n[model]\npath = {model:?}\nengine = {engine:?}\n\n\
             [inference]\nbatching = {batching:?}\n\n\
             [[sources]]\nkind = \"jsonl\"\npath = {panel:?}\n\n\
             [[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n\
             [stats]\nbootstrap_draws = 199\n",
            model = model.display().to_string(),
            engine = bench.engine.as_str(),
            layout = bench.layout.as_str(),
            batching = bench.batching.as_str(),
            panel = panel.display().to_string(),
        ),
    )?;
    println!(
        "panel: {} items ({n_arith} arithmetic + {n_lex} lexical dev), arms Native/code and Serial/Full/code, request layout {}, model {}, engine {}, {} batching, through the pipeline (one worker)",
        n_arith + n_lex,
        bench.layout.as_str(),
        bench.model.display(),
        bench.engine,
        bench.batching.as_str()
    );
    Ok(BenchWork {
        _tmp: tmp,
        work,
        config,
    })
}

/// The header of the table [`print_row`] fills.
fn print_header() {
    println!("| path | trajectories | requests | model calls | wall s | requests/s | prompt tokens | computed tokens | engine prompt tok/s | effective prompt tok/s | peak RSS MiB |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
}

/// One pass as a row of the table.
fn print_row(name: &str, m: &ModeResult) {
    let r = &m.report;
    let e = &r.engine.engine;
    println!(
        "| {name} | {} | {} | {} | {:.1} | {:.2} | {} | {} | {:.0} | {:.0} | {:.0} |",
        r.trajectories,
        r.requests,
        m.model_calls,
        r.elapsed,
        r.requests as f64 / r.elapsed.max(1e-9),
        e.prompt_tokens,
        e.computed_tokens,
        e.computed_tokens as f64 / e.forward_seconds.max(1e-9),
        e.prompt_tokens as f64 / r.elapsed.max(1e-9),
        m.peak_rss_kb as f64 / 1024.0
    );
}

fn inference(bench: InferenceBench) -> anyhow::Result<ExitCode> {
    let BenchWork { _tmp, work, config } = prepare(&bench)?;
    if bench.against.contains(&Reference::PrefixBf16) {
        // Checked before any pass: a wrong setting would otherwise surface after (a) and (b).
        bf16::check(&config)?;
    }
    // The model (b) runs: the config's when one was given.
    let model = match &bench.config {
        Some(c) => c2s_config::load(c)
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .model
            .path
            .clone(),
        None => bench.model.clone(),
    };
    if bench.against.contains(&Reference::LlamaServer) {
        llama_server::check(&model)?;
    }
    let a = if bench.only_batched {
        None
    } else {
        eprintln!("(a) one request at a time, every prompt computed in full …");
        Some(run_mode(&bench, &config, work.join("run-a"), true, None)?)
    };
    eprintln!("(b) batching, prefix reuse, de-duplication …");
    let b = run_mode(&bench, &config, work.join("run-b"), false, None)?;
    println!();
    print_header();
    if let Some(a) = &a {
        print_row("(a) one at a time, full prompts", a);
    }
    print_row("(b) batched, prefix reuse, dedup", &b);
    println!();
    println!("wall s includes model loading; engine prompt tok/s = computed tokens / seconds in forward passes");
    if bench.engine == c2s_config::EngineKind::Prefix {
        print_f32_limit(&bench.model, &b)?;
    }
    let c = if bench.against.contains(&Reference::PrefixBf16) {
        Some(bf16::compare(&bench, &config, &work, &b)?)
    } else {
        None
    };
    if bench.against.contains(&Reference::LlamaServer) {
        let mut ours = vec![("(b) f32", &b)];
        if let Some(c) = &c {
            ours.push(("(c) bf16", c));
        }
        llama_server::compare(&bench, &config, &model, &work, &ours)?;
    }
    if bench.against.contains(&Reference::Llamacpp) {
        llamacpp::compare(
            &model,
            &work,
            &b.run_dir,
            b.report.elapsed,
            b.report.engine.engine.computed_tokens,
        )?;
    }
    let Some(a) = a else {
        return Ok(ExitCode::SUCCESS);
    };
    println!(
        "b/a speed-up (wall time a / wall time b): {:.2}x",
        a.report.elapsed / b.report.elapsed.max(1e-9)
    );
    let agreement = compare_runs(&a.run_dir, &b.run_dir)?;
    println!(
        "agreement: {} scored requests compared, max |p_b - p_a| = {:.2e}, {} requests of (b) absent from (a), {} of {} trajectories with a different output",
        agreement.compared, agreement.max_diff, agreement.missing, agreement.outputs_differ, agreement.trajectories
    );
    Ok(
        if agreement.missing == 0 && agreement.outputs_differ == 0 && agreement.max_diff <= 1e-4 {
            ExitCode::SUCCESS
        } else {
            eprintln!("(b) did not reproduce (a)");
            ExitCode::FAILURE
        },
    )
}

/// The distance to the machine's f32 limit: the gemm kernels' own speed, measured here on the
/// model's widest product (hidden → 2·ffn, the fused gate/up, at 512 and at 4,096 rows, the
/// engine's largest forward) and on a square one,
/// against the FLOPs (b)'s forward passes did per second in the linear layers.
fn print_f32_limit(model: &Path, b: &ModeResult) -> anyhow::Result<()> {
    use c2s_model::engines::prefix::kernels::{product_gflops, product_threads, KernelFamily};
    use c2s_model::engines::prefix::transformer::Transformer;
    let cfg = Transformer::check_config(model).map_err(|e| anyhow::anyhow!("{e}"))?;
    let family = KernelFamily::from_env()?;
    let flops = cfg.linear_flops_per_token();
    let e = &b.report.engine.engine;
    let engine_tps = e.computed_tokens as f64 / e.forward_seconds.max(1e-9);
    println!();
    println!(
        "f32 limit: {} kernels, {} threads; linear layers {:.1} MFLOP per prompt token",
        family.name(),
        product_threads(),
        flops / 1e6
    );
    println!("| product | GFLOP/s | prompt tok/s at that speed | (b) engine tok/s | share |");
    println!("|---|---|---|---|---|");
    for (name, m, k, n) in [
        (
            "model, 512 rows: hidden → 2·ffn",
            512,
            cfg.hidden,
            2 * cfg.ffn,
        ),
        (
            "model, 4096 rows: hidden → 2·ffn",
            4096,
            cfg.hidden,
            2 * cfg.ffn,
        ),
        ("square 1024³", 1024, 1024, 1024),
    ] {
        let gflops = product_gflops(family, m, k, n, 2.0);
        let ceiling = gflops * 1e9 / flops;
        println!(
            "| {name} ({m}×{k}×{n}) | {gflops:.1} | {ceiling:.0} | {engine_tps:.0} | {:.0}% |",
            100.0 * engine_tps / ceiling
        );
    }
    println!(
        "share = (b)'s computed prompt tokens per second in forward passes / what the kernels' \
         measured speed allows for the linear layers alone (attention, norms and the output \
         head are extra work, so 100% is out of reach)"
    );
    Ok(())
}

struct Agreement {
    compared: usize,
    max_diff: f64,
    missing: usize,
    outputs_differ: usize,
    trajectories: usize,
}

/// Compare two runs of the same panel from their Parquet outputs: the probabilities of every
/// scored request, and every trajectory's output.
fn compare_runs(a: &Path, b: &Path) -> anyhow::Result<Agreement> {
    use c2s_sinks::read::{read_request_answers, read_trajectory_records};
    let answers_a = scored_probabilities(a)?;
    let mut out = Agreement {
        compared: 0,
        max_diff: 0.0,
        missing: 0,
        outputs_differ: 0,
        trajectories: 0,
    };
    for (_, r) in read_request_answers(&b.join("requests"))? {
        if let Answer::Scored { probabilities, .. } = &r.answer {
            match answers_a.get(&r.request_id) {
                Some(pa) => {
                    out.compared += 1;
                    for (x, y) in pa.iter().zip(probabilities) {
                        out.max_diff = out.max_diff.max((x - y).abs());
                    }
                }
                None => out.missing += 1,
            }
        }
    }
    let outputs = |dir: &Path| -> anyhow::Result<HashMap<(String, String), String>> {
        Ok(read_trajectory_records(&dir.join("trajectories"))?
            .into_iter()
            .map(|t| ((t.item_id.clone(), t.arm.to_string()), t.output.clone()))
            .collect())
    };
    let (ta, tb) = (outputs(a)?, outputs(b)?);
    out.trajectories = tb.len();
    out.outputs_differ = tb.iter().filter(|(k, v)| ta.get(*k) != Some(*v)).count()
        + ta.keys().filter(|k| !tb.contains_key(*k)).count();
    Ok(out)
}

/// The option probabilities of every scored request of a run directory, by request id.
fn scored_probabilities(run_dir: &Path) -> anyhow::Result<HashMap<String, Vec<f64>>> {
    Ok(
        c2s_sinks::read::read_request_answers(&run_dir.join("requests"))?
            .into_iter()
            .filter_map(|(_, r)| match r.answer {
                Answer::Scored { probabilities, .. } => Some((r.request_id, probabilities)),
                _ => None,
            })
            .collect(),
    )
}

/// The reference arm of the synthetic comparisons.
fn synthetic_native() -> c2s_records::ArmSpec {
    c2s_records::ArmSpec::new(c2s_records::Arm::Native)
}

/// The compared arm of synthetic comparison `c` (0..4): Serial under one of four supports.
fn synthetic_serial(c: usize) -> c2s_records::ArmSpec {
    use c2s_records::Support;
    let supports = [
        Support::FULL,
        Support::FULL_FILL,
        Support::UNION_FILL,
        Support::TRIE_FILL,
    ];
    c2s_records::ArmSpec::new(c2s_records::Arm::Serial).with_support(supports[c % supports.len()])
}

/// A synthetic outcome: item `i` of a panel (64 items per length, lengths 3..8).
fn synthetic_outcome(
    i: u64,
    domain: c2s_records::Domain,
    comparison: usize,
) -> c2s_records::PairedOutcome {
    let h = c2s_operators::messages::route(&format!("{i}/{comparison}/{domain}"));
    c2s_records::PairedOutcome {
        item_id: format!("{domain}-{i}"),
        domain,
        length: 3 + (i as usize / 64) % 6,
        model: "bench".into(),
        native_arm: synthetic_native().label(),
        serial_arm: synthetic_serial(comparison).label(),
        native_correct: h % 10 < 8,
        serial_correct: (h >> 8) % 10 < 3,
        pattern: None,
    }
}

/// Synthetic counts of `n` outcomes: 2 domains × 4 comparisons × 6 lengths, cells split in
/// fixed proportions (Native 80%, Serial 30%, independent), as a live run would hold them.
fn synthetic_counts(n: u64) -> anyhow::Result<c2s_stats::StatsCounts> {
    use c2s_records::Domain;
    let mut counts = c2s_stats::StatsCounts::new();
    let groups = 2 * 4 * 6;
    let per = n / groups;
    let mut left = n;
    for domain in [Domain::Arithmetic, Domain::Lexical] {
        for c in 0..4 {
            for length in 3..9u32 {
                let m = if left <= per { left } else { per };
                left -= m;
                let both = m * 24 / 100;
                let native_only = m * 56 / 100;
                let serial_only = m * 6 / 100;
                let neither = m - both - native_only - serial_only;
                for (cell, k) in [both, native_only, serial_only, neither]
                    .into_iter()
                    .enumerate()
                {
                    let key = c2s_stats::StatsKey::Paired {
                        model: "bench".into(),
                        domain,
                        comparison: c2s_records::comparison_of(
                            &synthetic_native(),
                            &synthetic_serial(c),
                        ),
                        length,
                        pattern: None,
                        cell: cell as u8,
                    };
                    counts.update(&key, k as i64)?;
                }
            }
        }
    }
    Ok(counts)
}

fn stats(n_outcomes: u64, draws: u32) -> anyhow::Result<ExitCode> {
    use c2s_operators::live_stats::{count_changes, stats_keys, LiveTable, StatsSeed};
    use c2s_records::Domain;
    use timely::dataflow::operators::{Input, Inspect, Probe};
    use timely::dataflow::{InputHandle, ProbeHandle};

    // 1. Incremental updates: outcomes through the live path — keys, differential counts,
    //    the changes applied to the counts (what the snapshot thread does) — in epochs.
    let counts = std::sync::Arc::new(std::sync::Mutex::new(c2s_stats::StatsCounts::new()));
    let sink = counts.clone();
    let busy_total = std::sync::Arc::new(std::sync::Mutex::new(Duration::ZERO));
    let busy_worker = busy_total.clone();
    let started = Instant::now();
    let epoch_size = 10_000u64;
    timely::execute(timely::Config::thread(), move |worker| {
        let mut input: InputHandle<
            u64,
            timely::container::CapacityContainerBuilder<Vec<c2s_records::PairedOutcome>>,
        > = InputHandle::new();
        let mut no_trajectories: InputHandle<
            u64,
            timely::container::CapacityContainerBuilder<Vec<c2s_records::Trajectory>>,
        > = InputHandle::new();
        let probe = ProbeHandle::new();
        let sink = sink.clone();
        let busy_total = busy_worker.clone();
        worker.dataflow::<u64, _, _>(|scope| {
            let live = std::sync::Arc::new(std::sync::Mutex::new(LiveTable::default()));
            let keys = stats_keys(
                scope.input_from(&mut input),
                scope.input_from(&mut no_trajectories),
                &StatsSeed::default(),
                true,
                live,
            );
            count_changes(keys)
                .inspect(move |(k, d)| {
                    if let Err(e) = sink.lock().map(|mut c| c.update(k, *d)) {
                        eprintln!("{e}");
                    }
                })
                .probe_with(&probe);
        });
        let mut sent = 0u64;
        let mut epoch = 0u64;
        let mut busy = Duration::ZERO;
        while sent < n_outcomes {
            // The epoch's outcomes are made outside the timed part.
            let batch: Vec<c2s_records::PairedOutcome> = (sent..n_outcomes.min(sent + epoch_size))
                .map(|i| {
                    // Distinct items, 2 domains × 4 comparisons, so counts move in many cells.
                    let domain = if i.is_multiple_of(2) {
                        Domain::Arithmetic
                    } else {
                        Domain::Lexical
                    };
                    synthetic_outcome(i / 2, domain, (i % 8) as usize / 2)
                })
                .collect();
            sent += batch.len() as u64;
            let t = Instant::now();
            for o in batch {
                input.send(o);
            }
            epoch += 1;
            input.advance_to(epoch);
            no_trajectories.advance_to(epoch);
            while probe.less_than(&epoch) {
                worker.step();
            }
            busy += t.elapsed();
        }
        *busy_total.lock().unwrap_or_else(|p| p.into_inner()) = busy;
    })
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let secs = busy_total
        .lock()
        .map(|b| b.as_secs_f64())
        .unwrap_or_else(|_| started.elapsed().as_secs_f64());
    let (total, cells) = counts
        .lock()
        .map(|c| (c.outcomes(), c.cell_count()))
        .unwrap_or((0, 0));
    println!(
        "incremental updates (keys → differential count → counts): {n_outcomes} outcomes in {secs:.2} s of dataflow time = {:.0} outcomes/s (epochs of {epoch_size}; {total} counted in {cells} cells; making the outcomes not timed)",
        n_outcomes as f64 / secs
    );

    // 2. Snapshot time against the number of outcomes: counts (the live and offline path)
    //    and, where it is affordable, the per-item resampling the counts replaced.
    let cfg = c2s_stats::StatsConfig {
        bootstrap_draws: draws,
        ..Default::default()
    };
    println!("snapshot of 2 domains × 4 comparisons × 6 lengths, {draws} bootstrap draws:");
    let mut first = None;
    for n in [1_000u64, 100_000, 10_000_000] {
        let counts = synthetic_counts(n)?;
        let t = Instant::now();
        let rows = counts.snapshot(&cfg, 0)?;
        let snap = t.elapsed().as_secs_f64();
        let base = *first.get_or_insert(snap);
        print!(
            "  {n:>10} outcomes: counts {snap:.3} s ({:.2}× the 10^3 snapshot), {} rows",
            snap / base,
            rows.len()
        );
        if n <= 100_000 {
            // The per-item bootstrap of the same groups (9,999 draws resample every item).
            let boot = cfg.bootstrap();
            let t = Instant::now();
            for tables in counts.paired().values() {
                let (sample, _) = c2s_stats::paired_sample(tables)?;
                c2s_stats::bootstrap_per_item(&sample, &boot, 1, |c, out| {
                    out[0] = Some(c.pooled(0) as f64);
                })?;
            }
            let per_item = t.elapsed().as_secs_f64();
            print!(
                "; per-item resampling of the same groups {per_item:.3} s ({:.1}× counts)",
                per_item / snap
            );
        }
        println!();
    }
    Ok(ExitCode::SUCCESS)
}
