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
    /// Also replay every request's tokenization with the run's model file (the document's
    /// "Exact ... tokenizer/sequence replay ... finds no option capping, span collisions,
    /// instruction shortening, or state truncation").
    #[arg(long)]
    pub tokens: bool,
}

/// The tokenization replay of one run directory's requests.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TokenAudit {
    pub run_dir: String,
    pub model_path: String,
    pub requests: u64,
    pub max_prompt_tokens: u32,
    /// Replayed prompt length differs from the recorded one.
    pub length_mismatches: u64,
    /// The user message (instruction, every option, the text) is not intact in the decoded
    /// prompt tokens: shortening or truncation.
    pub not_intact: u64,
    /// Two offered names with identical token sequences (a span collision: the request
    /// cannot tell them apart).
    pub collisions: u64,
    /// Requests where one name's tokens prefix another's, so every name was closed with the
    /// end-of-turn token to keep the options disjoint.
    pub closed_with_end_token: u64,
}

/// Replay the tokenization of every request of `run_dir` with its manifest's model file.
pub fn token_audit(run_dir: &Path) -> anyhow::Result<TokenAudit> {
    let manifest = read_manifest(run_dir)
        .with_context(|| format!("reading {}/manifest.json", run_dir.display()))?
        .with_context(|| format!("{} has no manifest.json", run_dir.display()))?;
    let model_path = manifest.config["model"]["path"]
        .as_str()
        .filter(|p| !p.is_empty())
        .with_context(|| format!("{}: the run names no model file", run_dir.display()))?
        .to_string();
    let mut tok = c2s_model::load_tokenizer(Path::new(&model_path))
        .with_context(|| format!("reading the tokenizer of {model_path}"))?;
    // The date the run's templates saw (`strftime_now`), so the replay renders its prompts.
    if let Some(time) = manifest.chat_template_time.as_deref() {
        tok.set_template_time(
            c2s_model::TemplateTime::parse(time)
                .map_err(|e| anyhow::anyhow!("manifest.json: chat_template_time: {e}"))?,
        )?;
    }
    let requests = c2s_sinks::read_requests(&run_dir.join("requests"))
        .with_context(|| format!("reading {}/requests", run_dir.display()))?;
    let mut a = TokenAudit {
        run_dir: run_dir.display().to_string(),
        model_path,
        ..Default::default()
    };
    // Requests the engine refused never reach requests/: their decisions carry the reason.
    for d in read_decisions(&run_dir.join("decisions"))
        .with_context(|| format!("reading {}/decisions", run_dir.display()))?
    {
        match d.error.as_deref() {
            Some(e) if e.contains("same tokens") => a.collisions += 1,
            Some(e) if e.contains("exceeds the model context") => a.not_intact += 1,
            _ => {}
        }
    }
    for r in &requests {
        a.requests += 1;
        let prompt = c2s_model::PromptSpec {
            system: r.system.clone(),
            user: r.user.clone(),
            assistant_prefix: r.assistant_prefix.clone(),
        };
        let ids = tok.prompt_tokens(&prompt)?;
        a.max_prompt_tokens = a.max_prompt_tokens.max(ids.len() as u32);
        if r.error.is_none() && r.prompt_tokens != ids.len() as u32 {
            a.length_mismatches += 1;
        }
        if !tok.decode(&ids)?.contains(&r.user) {
            a.not_intact += 1;
        }
        let mut seqs = Vec::with_capacity(r.option_codes.len());
        for code in &r.option_codes {
            seqs.push(tok.encode(code)?);
        }
        let distinct: std::collections::HashSet<&Vec<u32>> = seqs.iter().collect();
        if distinct.len() != seqs.len() {
            a.collisions += 1;
        } else if seqs.iter().enumerate().any(|(i, x)| {
            seqs.iter()
                .enumerate()
                .any(|(j, y)| i != j && y.len() >= x.len() && y[..x.len()] == x[..])
        }) {
            a.closed_with_end_token += 1;
        }
    }
    Ok(a)
}

/// The replay as text.
pub fn token_audit_text(a: &TokenAudit) -> String {
    format!(
        "token replay of {} ({}): {} requests, longest prompt {} tokens; {} length mismatches, {} prompts not intact, {} option collisions, {} requests with names closed by the end token\n",
        a.run_dir,
        a.model_path,
        a.requests,
        a.max_prompt_tokens,
        a.length_mismatches,
        a.not_intact,
        a.collisions,
        a.closed_with_end_token
    )
}

/// What a run's manifest recorded of its statistics settings: [stats] draws, seed and level,
/// and the resolved config (for its protocol section); none without a manifest.
pub struct RecordedStats {
    pub draws: Option<u32>,
    pub seed: Option<u64>,
    pub level: Option<f64>,
    pub config: serde_json::Value,
}

pub fn recorded_stats(run_dir: &Path) -> anyhow::Result<Option<RecordedStats>> {
    let manifest = read_manifest(run_dir)
        .with_context(|| format!("reading {}/manifest.json", run_dir.display()))?;
    Ok(manifest.map(|m| {
        let stats = &m.config["stats"];
        RecordedStats {
            draws: stats["bootstrap_draws"].as_u64().map(|d| d as u32),
            seed: stats["seed"].as_u64(),
            level: stats["level"].as_f64(),
            config: m.config.clone(),
        }
    }))
}

/// The coverage statistics settings a run recorded: [stats] draws, seed and level, and
/// [coverage] max_false_rejection and quantize_decimals.
pub fn run_coverage_config(run_dir: &Path) -> anyhow::Result<CoverageStatsConfig> {
    let mut cfg = CoverageStatsConfig::default();
    let Some(r) = recorded_stats(run_dir)? else {
        return Ok(cfg);
    };
    cfg.draws = r.draws.unwrap_or(cfg.draws);
    cfg.seed = r.seed.unwrap_or(cfg.seed);
    cfg.level = r.level.unwrap_or(cfg.level);
    let cov = &r.config["coverage"];
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

/// Every decision of the run directories: one per (model, case, spec), an answered row over a
/// failed one (a resumed run asks failed requests again), else the later row.
pub fn read_all_decisions(run_dirs: &[PathBuf]) -> anyhow::Result<Vec<Decision>> {
    let mut kept: std::collections::BTreeMap<(String, String, String), Decision> =
        Default::default();
    for dir in run_dirs {
        let rows = read_decisions(&dir.join("decisions"))
            .with_context(|| format!("reading {}/decisions", dir.display()))?;
        for d in rows {
            let key = (d.model.clone(), d.case_id.clone(), d.spec.label());
            match kept.get(&key) {
                Some(old) if old.error.is_none() && d.error.is_some() => {}
                _ => {
                    kept.insert(key, d);
                }
            }
        }
    }
    Ok(kept.into_values().collect())
}

/// Cases that lack decisions others of their model, task and split have (an interrupted run,
/// a case without one of the configured sizes): (model, task, split, cases, missing decisions).
pub fn incomplete_cases(decisions: &[Decision]) -> Vec<(String, String, String, u64, u64)> {
    use std::collections::{BTreeMap, BTreeSet};
    type Group = (String, String, String);
    let mut expected: BTreeMap<Group, BTreeSet<String>> = BTreeMap::new();
    let mut per_case: BTreeMap<(Group, String), BTreeSet<String>> = BTreeMap::new();
    for d in decisions {
        let g = (
            d.model.clone(),
            d.task.clone(),
            d.split.as_str().to_string(),
        );
        expected
            .entry(g.clone())
            .or_default()
            .insert(d.spec.label());
        per_case
            .entry((g, d.case_id.clone()))
            .or_default()
            .insert(d.spec.label());
    }
    let mut out: BTreeMap<Group, (u64, u64)> = BTreeMap::new();
    for ((g, _), have) in &per_case {
        let lacking = expected[g].len() - have.len();
        if lacking > 0 {
            let e = out.entry(g.clone()).or_default();
            e.0 += 1;
            e.1 += lacking as u64;
        }
    }
    out.into_iter()
        .map(|((m, t, s), (c, n))| (m, t, s, c, n))
        .collect()
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
    for (model, task, split, cases, lacking) in incomplete_cases(&decisions) {
        eprintln!(
            "warning: {model} {task} {split}: {cases} case(s) lack {lacking} decision(s) that other cases have (an interrupted run?); they count with what they have"
        );
    }
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
    let audits = if args.tokens {
        args.run_dirs
            .iter()
            .map(|d| token_audit(d))
            .collect::<anyhow::Result<Vec<_>>>()?
    } else {
        Vec::new()
    };
    if args.json {
        let mut v = serde_json::to_value(&s)?;
        if args.tokens {
            v["token_audit"] = serde_json::to_value(&audits)?;
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", text(&s));
        for a in &audits {
            print!("  {}", token_audit_text(a));
        }
    }
    Ok(ExitCode::SUCCESS)
}
