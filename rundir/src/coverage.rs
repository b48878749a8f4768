//! Candidate-coverage runs (`[coverage]`): their decisions, plan audit, token audit, the
//! settings they recorded, and their summary.

use std::path::{Path, PathBuf};

use anyhow::Context;

use std::collections::{BTreeMap, BTreeSet};

use c2s_protocol::coverage_audit::{PlanAudit, PLAN_AUDIT_FILE};
use c2s_records::{CoverageSplit, Decision, ScoringRule};
use c2s_sinks::read_decisions;
use c2s_stats::coverage::{coverage_summary, CoverageStatsConfig, CoverageSummary};

/// The tokenization replay of one run directory's requests.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TokenAudit {
    /// The run directory audited, as given.
    pub run_dir: String,
    /// The model file whose tokenizer replayed the requests (the manifest's `[model] path`).
    pub model_path: String,
    /// Rows of `requests/` replayed.
    pub requests: u64,
    /// Longest replayed prompt, in tokens (chat template and assistant prefix included).
    pub max_prompt_tokens: u32,
    /// Replayed prompt length differs from the recorded one.
    pub length_mismatches: u64,
    /// The user message (instruction, every option, the text) is not intact in the decoded
    /// prompt tokens: shortening or truncation.
    pub not_intact: u64,
    /// Option capping: a request whose scored options are not all shown in full (fewer
    /// options shown than scored, a name shown otherwise than scored, an option missing from
    /// the decoded prompt) or a name whose tokens do not decode back to it.
    pub options_capped: u64,
    /// Two offered names with identical token sequences (a span collision: the request
    /// cannot tell them apart).
    pub collisions: u64,
    /// Requests whose names were closed with the end-of-turn token because one name of the
    /// pair (the request's and its twin's differing one) prefixes another.
    pub closed_with_end_token: u64,
    /// Of those, requests that the per-request rule would have left open (only the pair's
    /// other name prefixes, or is prefixed by, one of theirs).
    pub closed_by_the_pair_only: u64,
    /// Requests whose recorded option token counts differ from the replayed ones.
    pub token_count_mismatches: u64,
}

/// Replay the tokenization of every request of `run_dir` with its manifest's model file.
pub fn token_audit(run_dir: &Path) -> anyhow::Result<TokenAudit> {
    let run = super::recorded(run_dir)?
        .with_context(|| format!("{} has no manifest.json", run_dir.display()))?;
    let manifest = &run.manifest;
    let model_path = run
        .config
        .model
        .as_ref()
        .map(|m| m.path.display().to_string())
        .filter(|p| !p.is_empty())
        .with_context(|| format!("{}: the run names no model file", run_dir.display()))?;
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
    // The pair's twin of a present/absent request: the closing context it was scored with.
    let by_arm: std::collections::HashMap<(&str, &str), &c2s_sinks::RequestRow> = requests
        .iter()
        .map(|r| ((r.item_id.as_str(), r.arm.as_str()), r))
        .collect();
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
        let decoded = tok.decode(&ids)?;
        if !decoded.contains(&r.user) {
            a.not_intact += 1;
        }
        if options_capped(&tok, r, &decoded)? {
            a.options_capped += 1;
        }
        let twin_arm = r
            .arm
            .strip_prefix("present/")
            .map(|rest| format!("absent/{rest}"))
            .or_else(|| {
                r.arm
                    .strip_prefix("absent/")
                    .map(|rest| format!("present/{rest}"))
            });
        let context: Vec<String> = twin_arm
            .and_then(|arm| by_arm.get(&(r.item_id.as_str(), arm.as_str())).copied())
            .map(|t| {
                t.option_codes
                    .iter()
                    .filter(|c| !r.option_codes.contains(c))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let mut seqs = Vec::with_capacity(r.option_codes.len());
        for code in &r.option_codes {
            seqs.push(tok.encode(code)?);
        }
        let distinct: std::collections::HashSet<&Vec<u32>> = seqs.iter().collect();
        if distinct.len() != seqs.len() {
            a.collisions += 1;
            continue;
        }
        let alone = tok.option_tokens(&r.option_codes)?;
        let mut with_pair = r.option_codes.clone();
        with_pair.extend(context);
        let Ok(scored) = tok.option_tokens(&with_pair) else {
            a.collisions += 1;
            continue;
        };
        let closed = |s: &[Vec<u32>]| s.iter().zip(&seqs).any(|(x, y)| x.len() != y.len());
        if closed(&scored[..]) {
            a.closed_with_end_token += 1;
            if !closed(&alone[..]) {
                a.closed_by_the_pair_only += 1;
            }
        }
        if let Some(counts) = &r.option_token_counts {
            let replayed: Vec<u32> = scored
                .iter()
                .take(r.option_codes.len())
                .map(|s| s.len() as u32)
                .collect();
            if *counts != replayed {
                a.token_count_mismatches += 1;
            }
        }
    }
    Ok(a)
}

/// Option capping: the options shown are not every scored option, in full.
fn options_capped(
    tok: &c2s_model::tokenizer::ModelTokenizer,
    r: &c2s_sinks::RequestRow,
    decoded: &str,
) -> anyhow::Result<bool> {
    let shown: Vec<serde_json::Value> = serde_json::from_str::<serde_json::Value>(&r.user)
        .ok()
        .and_then(|v| v["options"].as_array().cloned())
        .unwrap_or_default();
    if shown.len() != r.option_codes.len() {
        return Ok(true);
    }
    for (o, code) in shown.iter().zip(&r.option_codes) {
        if o["name"].as_str() != Some(code.as_str()) {
            return Ok(true);
        }
        if !decoded.contains(&serde_json::to_string(o)?) {
            return Ok(true);
        }
        if tok.decode(&tok.encode(code)?)? != *code {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The coverage statistics settings a run recorded: [stats] draws, seed and level, and
/// [coverage] max_false_rejection and quantize_decimals (the defaults without a manifest).
pub fn run_coverage_config(run_dir: &Path) -> anyhow::Result<CoverageStatsConfig> {
    let mut cfg = CoverageStatsConfig::default();
    let recorded = super::recorded_config(run_dir)?;
    if let Some(stats) = &recorded.stats {
        cfg.draws = stats.bootstrap_draws;
        cfg.seed = stats.seed;
        cfg.level = stats.level;
    }
    if let Some(cov) = &recorded.coverage {
        cfg.max_false_rejection = cov.max_false_rejection;
        cfg.quantize_decimals = cov.quantize_decimals;
    }
    Ok(cfg)
}

/// Whether a run directory holds a coverage run (its config has a [coverage] section).
pub fn is_coverage_run(run_dir: &Path) -> bool {
    super::recorded_config(run_dir).is_ok_and(|c| c.coverage.is_some())
}

/// The decisions of one run directory: one per (model, case, spec). A resumed run asks a
/// failed request again, so an answered row replaces a failed one (and a later failure an
/// earlier one); two answered rows of one decision are a duplicate prediction, an error
/// naming the case and the cell.
pub fn read_run_decisions(dir: &Path) -> anyhow::Result<Vec<Decision>> {
    let rows = read_decisions(&dir.join("decisions"))
        .with_context(|| format!("reading {}/decisions", dir.display()))?;
    let mut kept: BTreeMap<(String, String, String), Decision> = BTreeMap::new();
    for d in rows {
        let key = (d.model.clone(), d.case_id.clone(), d.spec.label());
        match kept.get(&key) {
            Some(old) if old.error.is_none() && d.error.is_none() => anyhow::bail!(
                "{}: duplicate decision: case {} cell {} {} (model {}) is answered twice ({} and {}); \
                 \"Validation rejects incomplete collections and duplicate predictions\"",
                dir.display(),
                d.case_id,
                d.task,
                d.spec.label(),
                d.model,
                old.request_id,
                d.request_id
            ),
            Some(old) if old.error.is_none() => {}
            _ => {
                kept.insert(key, d);
            }
        }
    }
    Ok(kept.into_values().collect())
}

/// What a run directory's `coverage_plan_audit.json` holds.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunPlan {
    /// The run directory, as given.
    pub run_dir: String,
    /// The audit; `None` when the file is absent (an older run) or says why there is none.
    pub audit: Option<PlanAudit>,
    /// Why there is no audit.
    pub note: Option<String>,
}

/// Read `coverage_plan_audit.json` of a run directory.
pub fn read_plan(dir: &Path) -> anyhow::Result<RunPlan> {
    let path = dir.join(PLAN_AUDIT_FILE);
    let run_dir = dir.display().to_string();
    if !path.exists() {
        return Ok(RunPlan {
            run_dir,
            audit: None,
            note: Some(format!(
                "no {PLAN_AUDIT_FILE} (a run written before the plan audit): completeness is judged against the decisions other cases have"
            )),
        });
    }
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    if let Some(why) = v["unavailable"].as_str() {
        return Ok(RunPlan {
            run_dir,
            audit: None,
            note: Some(format!("no plan audit: {why}")),
        });
    }
    let audit: PlanAudit = serde_json::from_value(v)
        .with_context(|| format!("{}: not a plan audit", path.display()))?;
    Ok(RunPlan {
        run_dir,
        audit: Some(audit),
        note: None,
    })
}

/// Why a collection is incomplete: every planned decision that is missing or failed, named
/// by case and cell. Against the run's plan audit when it has one, else against the
/// decisions other cases of the same model, task and split have.
pub fn incompleteness(decisions: &[Decision], plan: &RunPlan) -> Vec<String> {
    let mut out = Vec::new();
    let have: BTreeMap<(&str, String), &Decision> = decisions
        .iter()
        .map(|d| ((d.case_id.as_str(), d.spec.label()), d))
        .collect();
    let cell = |d: &Decision| format!("{} {}", d.task, d.spec.label());
    for d in decisions {
        if let Some(e) = &d.error {
            out.push(format!(
                "case {} cell {}: the request failed ({e})",
                d.case_id,
                cell(d)
            ));
        }
    }
    match &plan.audit {
        Some(audit) => {
            for g in &audit.planned {
                for case in &g.cases {
                    for spec in &g.specs {
                        if !have.contains_key(&(case.as_str(), spec.clone())) {
                            out.push(format!(
                                "case {case} cell {} {spec}: no decision (planned)",
                                g.task
                            ));
                        }
                    }
                }
            }
        }
        None => {
            type Group<'a> = (&'a str, &'a str, CoverageSplit);
            let mut expected: BTreeMap<Group<'_>, BTreeSet<String>> = BTreeMap::new();
            let mut per_case: BTreeMap<(Group<'_>, &str), BTreeSet<String>> = BTreeMap::new();
            for d in decisions {
                let g = (d.model.as_str(), d.task.as_str(), d.split);
                expected.entry(g).or_default().insert(d.spec.label());
                per_case
                    .entry((g, d.case_id.as_str()))
                    .or_default()
                    .insert(d.spec.label());
            }
            for ((g, case), specs) in &per_case {
                for spec in expected[g].difference(specs) {
                    out.push(format!(
                        "case {case} cell {} {spec}: no decision (other cases of {} {} have it)",
                        g.1,
                        g.1,
                        g.2.as_str()
                    ));
                }
            }
        }
    }
    out
}

/// The decisions of several run directories with their plans and what makes the collection
/// incomplete.
pub struct Collection {
    /// The coverage metrics over every run's decisions.
    pub summary: CoverageSummary,
    /// Each run directory's plan audit, in the order given.
    pub plans: Vec<RunPlan>,
    /// Missing and failed planned decisions (empty for a complete collection).
    pub incomplete: Vec<String>,
}

impl Collection {
    /// Figures of an incomplete collection, read with `--allow-incomplete`.
    pub fn partial(&self) -> bool {
        !self.incomplete.is_empty()
    }
}

/// How many of a long list of problems a message names.
const LISTED: usize = 20;

/// The collection as `choice2seq coverage --json` prints it (without the token audit): the
/// summary with its completeness and plan audit; `choice2seq view` serves the same object.
pub fn summary_json(c: &Collection) -> anyhow::Result<serde_json::Value> {
    let mut v = serde_json::to_value(&c.summary)?;
    v["partial"] = serde_json::Value::Bool(c.partial());
    v["incomplete"] = serde_json::to_value(&c.incomplete)?;
    v["plan_audit"] = serde_json::to_value(&c.plans)?;
    Ok(v)
}

/// The coverage summary of `run_dirs` under the first run's settings (overridden by `draws`
/// and `seed` when given), refusing duplicate decisions always and incomplete collections
/// unless `allow_incomplete`; `scoring` recomputes every decision under another rule.
pub fn summary_of(
    run_dirs: &[PathBuf],
    draws: Option<u32>,
    seed: Option<u64>,
    allow_incomplete: bool,
    scoring: Option<ScoringRule>,
) -> anyhow::Result<Collection> {
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
    let mut decisions = Vec::new();
    let mut plans = Vec::new();
    let mut incomplete = Vec::new();
    let mut seen: BTreeMap<(String, String, String), String> = BTreeMap::new();
    for dir in run_dirs {
        let run = read_run_decisions(dir)?;
        for d in &run {
            let key = (d.model.clone(), d.case_id.clone(), d.spec.label());
            if let Some(other) = seen.insert(key, dir.display().to_string()) {
                anyhow::bail!(
                    "duplicate decision: case {} cell {} {} (model {}) is in both {other} and {} (the same run given twice?)",
                    d.case_id,
                    d.task,
                    d.spec.label(),
                    d.model,
                    dir.display()
                );
            }
        }
        let plan = read_plan(dir)?;
        incomplete.extend(
            incompleteness(&run, &plan)
                .into_iter()
                .map(|m| format!("{}: {m}", dir.display())),
        );
        plans.push(plan);
        decisions.extend(run);
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
    if !incomplete.is_empty() && !allow_incomplete {
        let listed: Vec<&str> = incomplete.iter().take(LISTED).map(String::as_str).collect();
        let more = incomplete.len().saturating_sub(LISTED);
        let list = format!(
            "{}{}",
            listed.join("\n  "),
            if more > 0 {
                format!("\n  … and {more} more")
            } else {
                String::new()
            }
        );
        anyhow::bail!(
            "incomplete collection: {} planned decision(s) missing or failed (\"Validation rejects incomplete collections\"); resume the run, or read it as it is with --allow-incomplete:\n  {list}",
            incomplete.len()
        );
    }
    if let Some(rule) = scoring {
        let mut rescored = Vec::with_capacity(decisions.len());
        for d in decisions {
            if d.error.is_some() || d.scoring == rule {
                rescored.push(d);
                continue;
            }
            let r = d.rescored(rule).with_context(|| {
                format!(
                    "case {} cell {} {}: no stored token log-probabilities to read under `{}` (a run written before they were kept)",
                    d.case_id,
                    d.task,
                    d.spec.label(),
                    rule.as_str()
                )
            })?;
            rescored.push(r);
        }
        decisions = rescored;
    }
    Ok(Collection {
        summary: coverage_summary(&decisions, &cfg)?,
        plans,
        incomplete,
    })
}
