//! `choice2seq coverage RUN_DIR...`: the candidate-coverage metrics of one or more coverage
//! runs (one per model over the same cases), recomputed from `decisions/` — ordinary accuracy,
//! the native rule's detection, false rejection, acceptance and error among accepted choices,
//! present/absent discrimination of each coverage score, calibrated thresholds with their
//! tested rates, the full-set-correct and shared-correct subsets, and the precision audits
//! (`c2s_stats::coverage`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use c2s_records::Decision;
use c2s_sinks::{read_decisions, read_manifest};
use c2s_stats::coverage::{coverage_summary, CoverageStatsConfig, CoverageSummary, Rate, Subset};

#[derive(Debug, Args)]
pub struct CoverageArgs {
    /// Coverage run directories (each needs decisions/); several (one per model) are read
    /// together: the shared-correct subset is the texts every model classifies correctly.
    #[arg(required = true)]
    pub run_dirs: Vec<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Bootstrap draws (default: the run's [stats] bootstrap_draws).
    #[arg(long)]
    pub draws: Option<u32>,
    /// Bootstrap seed (default: the run's [stats] seed).
    #[arg(long)]
    pub seed: Option<u64>,
}

/// The coverage statistics settings a run recorded: [stats] draws, seed and level, and
/// [coverage] max_false_rejection and quantize_decimals.
pub fn run_coverage_config(run_dir: &Path) -> anyhow::Result<CoverageStatsConfig> {
    let mut cfg = CoverageStatsConfig::default();
    let manifest = read_manifest(run_dir)
        .with_context(|| format!("reading {}/manifest.json", run_dir.display()))?;
    let Some(m) = manifest else {
        return Ok(cfg);
    };
    let stats = &m.config["stats"];
    if let Some(d) = stats["bootstrap_draws"].as_u64() {
        cfg.draws = d as u32;
    }
    if let Some(s) = stats["seed"].as_u64() {
        cfg.seed = s;
    }
    if let Some(l) = stats["level"].as_f64() {
        cfg.level = l;
    }
    let cov = &m.config["coverage"];
    if let Some(x) = cov["max_false_rejection"].as_f64() {
        cfg.max_false_rejection = x;
    }
    if let Some(x) = cov["quantize_decimals"].as_u64() {
        cfg.quantize_decimals = x as u32;
    }
    Ok(cfg)
}

/// Whether a run directory holds a coverage run (its config has a [coverage] section).
pub fn is_coverage_run(run_dir: &Path) -> bool {
    matches!(read_manifest(run_dir), Ok(Some(m)) if !m.config["coverage"].is_null())
}

/// Every decision of the run directories.
pub fn read_all_decisions(run_dirs: &[PathBuf]) -> anyhow::Result<Vec<Decision>> {
    let mut all = Vec::new();
    for dir in run_dirs {
        all.extend(
            read_decisions(&dir.join("decisions"))
                .with_context(|| format!("reading {}/decisions", dir.display()))?,
        );
    }
    Ok(all)
}

/// The coverage summary of `run_dirs` under the first run's settings (overridden by `draws`
/// and `seed` when given).
pub fn summary_of(
    run_dirs: &[PathBuf],
    draws: Option<u32>,
    seed: Option<u64>,
) -> anyhow::Result<CoverageSummary> {
    let Some(first) = run_dirs.first() else {
        anyhow::bail!("no run directory given");
    };
    let mut cfg = run_coverage_config(first)?;
    if let Some(d) = draws {
        cfg.draws = d;
    }
    if let Some(s) = seed {
        cfg.seed = s;
    }
    let decisions = read_all_decisions(run_dirs)?;
    if decisions.is_empty() {
        anyhow::bail!(
            "no decisions in {} (is it a coverage run?)",
            run_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(coverage_summary(&decisions, &cfg)?)
}

/// `12/40 30.0% [16.6, 46.5]`, or `-` when undefined.
pub fn rate(r: &Rate) -> String {
    match r.estimate.value {
        None => format!("{}/{} -", r.successes, r.n),
        Some(v) => match &r.estimate.interval {
            Some(i) => format!(
                "{}/{} {:.1}% [{:.1}, {:.1}]",
                r.successes,
                r.n,
                100.0 * v,
                100.0 * i.low,
                100.0 * i.high
            ),
            None => format!("{}/{} {:.1}%", r.successes, r.n, 100.0 * v),
        },
    }
}

fn est(e: &c2s_stats::Estimate) -> String {
    match (e.value, &e.interval) {
        (None, _) => "-".into(),
        (Some(v), Some(i)) => format!("{v:.3} [{:.3}, {:.3}]", i.low, i.high),
        (Some(v), None) => format!("{v:.3}"),
    }
}

/// The summary as plain-text tables (what `choice2seq coverage` prints).
pub fn text(s: &CoverageSummary) -> String {
    let mut out = String::new();
    let level = 100.0 * s.config.level;
    out.push_str(&format!(
        "candidate coverage: {} bootstrap draws over texts, {level:.0}% percentile intervals\n\n",
        s.config.draws
    ));
    out.push_str("full-set classification (test texts, no none option):\n");
    for r in &s.full_set {
        out.push_str(&format!(
            "  {} {} {}: accuracy {}; full-set-correct {}, shared-correct {}, missing {}\n",
            r.model,
            r.task,
            r.names.as_str(),
            rate(&r.accuracy),
            r.full_set_correct,
            r.shared_correct,
            r.missing
        ));
    }
    for subset in Subset::ALL {
        let cells: Vec<_> = s.cells.iter().filter(|c| c.subset == subset).collect();
        if cells.is_empty() {
            continue;
        }
        out.push_str(&format!("\ntest texts: {}\n", subset.as_str()));
        for c in cells {
            out.push_str(&format!(
                "  {} {} k={} {} ({} texts, {} missing)\n",
                c.model,
                c.task,
                c.k,
                c.names.as_str(),
                c.texts,
                c.missing
            ));
            out.push_str(&format!(
                "    accuracy (present)        {}\n",
                rate(&c.accuracy)
            ));
            out.push_str(&format!(
                "    accuracy (present, none)  {}\n",
                rate(&c.accuracy_with_none)
            ));
            out.push_str(&format!(
                "    detection D (absent)      {}\n",
                rate(&c.detection)
            ));
            out.push_str(&format!(
                "    false rejection (present) {}\n",
                rate(&c.false_rejection)
            ));
            out.push_str(&format!(
                "    acceptance                {}\n",
                rate(&c.acceptance)
            ));
            out.push_str(&format!(
                "    error among accepted      {}\n",
                rate(&c.error_among_accepted)
            ));
            for d in &c.discrimination {
                out.push_str(&format!(
                    "    {:<12} AUROC {}  AP(absent) {}  ({} pairs)\n",
                    d.score.as_str(),
                    est(&d.auroc),
                    est(&d.average_precision),
                    d.pairs
                ));
            }
        }
    }
    out.push_str(&format!(
        "\ncalibrated thresholds (calibration false rejection <= {:.1}%), tested on test texts:\n",
        100.0 * s.config.max_false_rejection
    ));
    for t in &s.thresholds {
        out.push_str(&format!(
            "  {} {} k={} {} {:<12} t={}: calibration FR {}, D {}; test D {}, FR {}\n",
            t.model,
            t.task,
            t.k,
            t.names.as_str(),
            t.rule,
            t.threshold
                .map(|x| format!("{x:.4}"))
                .unwrap_or_else(|| "-".into()),
            rate(&t.calibration_false_rejection),
            rate(&t.calibration_detection),
            rate(&t.test_detection),
            rate(&t.test_false_rejection)
        ));
    }
    out.push_str("\nprecision audit:\n");
    for p in &s.audit.prob_sums {
        out.push_str(&format!(
            "  {}: {} of {} distributions deviate from 1 by more than 0.001 (max deviation {:.2e})\n",
            p.model, p.deviating, p.decisions, p.max_deviation
        ));
    }
    if let Some(q) = &s.audit.largest_change {
        out.push_str(&format!(
            "  scores rounded to {} decimals: largest AUROC change {} ({} {} k={} {} {}: {} -> {})\n",
            s.audit.quantize_decimals,
            q.change.map(|c| format!("{c:+.4}")).unwrap_or_else(|| "-".into()),
            q.model,
            q.task,
            q.k,
            q.names.as_str(),
            q.score.as_str(),
            q.auroc.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into()),
            q.quantized_auroc
                .map(|v| format!("{v:.4}"))
                .unwrap_or_else(|| "-".into()),
        ));
    }
    for m in &s.missing {
        out.push_str(&format!(
            "  missing: {} {} {} x{}: {}\n",
            m.model,
            m.task,
            m.split.as_str(),
            m.count,
            m.error
        ));
    }
    out
}

pub fn execute(args: CoverageArgs) -> anyhow::Result<ExitCode> {
    let s = summary_of(&args.run_dirs, args.draws, args.seed)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        print!("{}", text(&s));
    }
    Ok(ExitCode::SUCCESS)
}
