//! `choice2seq dialogue RUN_DIR...`: the dialogue-state endpoints of one or more dialogue runs
//! (one per model over the same dialogues), recomputed from `dialogue_turns/`
//! (`c2s_stats::dialogue`): per arm and prior-state mode the dialogue-weighted mean-turn EM,
//! final-state and trajectory EM, mean field EM, format validity and request costs (Tables C1,
//! C4, C5), recoveries (Table C3), Oracle − Rollout and local − Joint paired differences with
//! dialogue and response-component intervals (Table C2, Figures 8–9), state retention (Table
//! C5), the Holm-corrected Serial − Joint sign tests, and the perturbation schedule.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use c2s_records::{DialogueArm, FieldTurn};
use c2s_sinks::{read_field_turns, read_manifest};
use c2s_stats::dialogue::{
    summarize_dialogues, DialogueStatsOptions, DialogueSummary, SignTestSpec, Stat,
};

#[derive(Debug, Args)]
pub struct DialogueArgs {
    /// Dialogue run directories (each needs dialogue_turns/); several (one per model) share
    /// one Holm family of sign tests.
    #[arg(required = true)]
    pub run_dirs: Vec<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Bootstrap draws (default: the run's [stats] bootstrap_draws).
    #[arg(long)]
    pub draws: Option<u32>,
    /// Seed (default: the run's [stats] seed).
    #[arg(long)]
    pub seed: Option<u64>,
}

/// Whether a run directory holds a dialogue run (its config has a [dialogue] section).
pub fn is_dialogue_run(run_dir: &Path) -> bool {
    matches!(read_manifest(run_dir), Ok(Some(m)) if !m.config["dialogue"].is_null())
}

/// The statistics settings a run recorded: [stats] draws, seed and level; [dialogue]
/// sign_test_draws and sign_test_mode.
pub fn run_dialogue_options(run_dir: &Path) -> anyhow::Result<DialogueStatsOptions> {
    let mut o = DialogueStatsOptions::default();
    let Some(r) = super::coverage::recorded_stats(run_dir)? else {
        return Ok(o);
    };
    o.draws = r.draws.unwrap_or(o.draws);
    o.seed = r.seed.unwrap_or(o.seed);
    o.level = r.level.unwrap_or(o.level);
    let d = &r.config["dialogue"];
    if let Some(x) = d["sign_test_draws"].as_u64() {
        o.sign_draws = x as u32;
    }
    if let Some(mode) = d["sign_test_mode"]
        .as_str()
        .and_then(c2s_records::PriorMode::parse)
    {
        o.sign_tests = vec![SignTestSpec {
            compared: DialogueArm::Serial,
            reference: DialogueArm::Joint,
            mode,
        }];
    }
    Ok(o)
}

/// Each dialogue run's rows from its latest attempt (a resumed run writes a run that was not
/// complete and error-free again, in full).
pub fn latest_attempts(rows: Vec<FieldTurn>) -> Vec<FieldTurn> {
    let mut latest: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for t in &rows {
        let e = latest
            .entry((t.model.clone(), t.dialogue_id.clone(), t.spec.label()))
            .or_insert(t.attempt);
        *e = (*e).max(t.attempt);
    }
    rows.into_iter()
        .filter(|t| {
            latest.get(&(t.model.clone(), t.dialogue_id.clone(), t.spec.label()))
                == Some(&t.attempt)
        })
        .collect()
}

/// The dialogue runs whose latest attempt is complete (every turn and field) and free of
/// engine errors: what a resumed run leaves as it is.
pub fn complete_runs(rows: &[FieldTurn]) -> BTreeSet<(String, String, String)> {
    let rows = latest_attempts(rows.to_vec());
    match c2s_stats::dialogue::score_dialogues(&rows) {
        Ok(scores) => scores
            .into_iter()
            .filter(|s| s.is_scored())
            .map(|s| (s.model, s.dialogue_id, s.spec.label()))
            .collect(),
        // A repeated row inside one attempt: write everything again.
        Err(_) => BTreeSet::new(),
    }
}

/// Every row of the run directories, each run's latest attempt. The same run (model,
/// dialogue, spec) in two directories is refused: two runs of one model are read one at a
/// time, not blended.
pub fn read_all_field_turns(run_dirs: &[PathBuf]) -> anyhow::Result<Vec<FieldTurn>> {
    let mut owner: BTreeMap<(String, String, String), &Path> = BTreeMap::new();
    let mut all = Vec::new();
    for dir in run_dirs {
        let rows = read_field_turns(&dir.join("dialogue_turns"))
            .with_context(|| format!("reading {}/dialogue_turns", dir.display()))?;
        let rows = latest_attempts(rows);
        for t in &rows {
            let key = (t.model.clone(), t.dialogue_id.clone(), t.spec.label());
            match owner.get(&key) {
                Some(other) if *other != dir.as_path() => anyhow::bail!(
                    "{} and {} both hold dialogue `{}` under {} for model {}: give one run directory per model",
                    other.display(),
                    dir.display(),
                    key.1,
                    key.2,
                    key.0
                ),
                Some(_) => {}
                None => {
                    owner.insert(key, dir.as_path());
                }
            }
        }
        all.extend(rows);
    }
    Ok(all)
}

/// The summary of `run_dirs` with the first run's recorded settings (overridden by `draws`,
/// `seed`).
pub fn summary_of(
    run_dirs: &[PathBuf],
    draws: Option<u32>,
    seed: Option<u64>,
) -> anyhow::Result<DialogueSummary> {
    let rows = read_all_field_turns(run_dirs)?;
    if rows.is_empty() {
        anyhow::bail!(
            "no dialogue rows in {}: is this a dialogue run ([dialogue] config)?",
            run_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut options = run_dialogue_options(&run_dirs[0])?;
    if let Some(d) = draws {
        options.draws = d;
    }
    if let Some(s) = seed {
        options.seed = s;
    }
    Ok(summarize_dialogues(&rows, &options)?)
}

pub fn execute(args: DialogueArgs) -> anyhow::Result<ExitCode> {
    let summary = summary_of(&args.run_dirs, args.draws, args.seed)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", summary_text(&summary));
    }
    Ok(ExitCode::SUCCESS)
}

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}", 100.0 * v))
        .unwrap_or_else(|| "–".into())
}

/// `value [low, high]` in percent (the dialogue interval), with the component interval when
/// asked.
fn stat(s: &Stat, component: bool) -> String {
    let ci = |i: &Option<c2s_stats::Interval>| {
        i.as_ref()
            .map(|i| format!(" [{:.1}, {:.1}]", 100.0 * i.low, 100.0 * i.high))
            .unwrap_or_default()
    };
    let mut out = format!("{}{}", pct(s.value), ci(&s.dialogue_ci));
    if component {
        out.push_str(&ci(&s.component_ci));
    }
    out
}

/// The summary as text tables (percent; intervals are 95% dialogue bootstrap unless said).
pub fn summary_text(s: &DialogueSummary) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let o = &s.options;
    let _ = writeln!(
        out,
        "Dialogue-state fields (Appendix C): percent; [dialogue bootstrap {:.0}% interval], {} draws, seed {}; dialogues weigh equally in mean-turn and mean-field EM",
        100.0 * o.level,
        o.draws,
        o.seed
    );
    for m in &s.models {
        let _ = writeln!(
            out,
            "model {}: {} test dialogues (+{} perturbed), {} logical requests, {} physical responses ({} shared by identical wire inputs), {} response-sharing components",
            m.model,
            m.primary_dialogues,
            m.perturbed_dialogues,
            m.logical_requests,
            m.physical_responses,
            m.shared_requests,
            m.components
        );
    }
    for l in &s.left_out {
        let _ = writeln!(
            out,
            "{} {}: {} runs left out as incomplete (interrupted or still running), {} with engine errors (asked again on resume)",
            short(&l.model),
            l.spec.label(),
            l.incomplete,
            l.engine_errors
        );
    }
    if s.excluded_dev_rows > 0 {
        let _ = writeln!(
            out,
            "{} dev-split rows left out of every endpoint",
            s.excluded_dev_rows
        );
    }
    let _ = writeln!(
        out,
        "\nEndpoints per arm and prior-state mode (Tables C1, C4, C5)"
    );
    let w = s
        .specs
        .iter()
        .map(|r| short(&r.model).len() + 1 + r.label.len())
        .max()
        .unwrap_or(0)
        .max(29);
    let _ = writeln!(
        out,
        "{:<w$} {:>9} {:>20} {:>20} {:>20} {:>20} {:>7} {:>7} {:>10}",
        "model arm/mode/contract",
        "dialogues",
        "trajectory EM",
        "mean turn EM",
        "final EM",
        "mean field EM",
        "valid",
        "calls",
        "input tok"
    );
    for r in &s.specs {
        let _ = writeln!(
            out,
            "{:<w$} {:>9} {:>20} {:>20} {:>20} {:>20} {:>7} {:>7} {:>10}",
            format!("{} {}", short(&r.model), r.label),
            r.counts.dialogues,
            stat(&r.trajectory, false),
            stat(&r.mean_turn, false),
            stat(&r.final_state, false),
            stat(&r.mean_field, false),
            pct(r.counts.valid_format),
            r.counts.calls,
            r.counts.input_tokens
        );
        if r.counts.missing_requests > 0 {
            let _ = writeln!(
                out,
                "    {} requests missing (engine errors)",
                r.counts.missing_requests
            );
        }
        if !r.counts.failures.is_empty() {
            let f: Vec<String> = r
                .counts
                .failures
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            let _ = writeln!(out, "    failed requests: {}", f.join(", "));
        }
    }
    let _ = writeln!(
        out,
        "\nRecoveries of failed trajectories (Table C3): failed / any recovery / final recovery"
    );
    for r in &s.specs {
        let _ = writeln!(
            out,
            "{:<w$} {:>4} / {:>4} / {:>4}",
            format!("{} {}", short(&r.model), r.label),
            r.recoveries.failed,
            r.recoveries.any_recovery,
            r.recoveries.final_recovery
        );
    }
    let _ = writeln!(
        out,
        "\nPaired differences, percentage points (Table C2, Figures 8-9): difference [dialogue interval] [response-component interval]"
    );
    for c in &s.contrasts {
        let _ = writeln!(
            out,
            "{} {} − {} ({} dialogues, {} components{})",
            short(&c.model),
            c.compared.label(),
            c.reference.label(),
            c.dialogues,
            c.components,
            if c.unpaired_dialogues > 0 {
                format!(", {} unpaired left out", c.unpaired_dialogues)
            } else {
                String::new()
            }
        );
        for (name, e) in [
            ("trajectory", &c.trajectory),
            ("mean turn", &c.mean_turn),
            ("final", &c.final_state),
            ("mean field", &c.mean_field),
        ] {
            let _ = writeln!(out, "    {:<11} {}", name, stat(&e.difference, true));
        }
    }
    let _ = writeln!(
        out,
        "\nState retention (Table C5): local/Joint jointly-correct mass over Joint-correct mass, dialogue-weighted"
    );
    for r in &s.retention {
        let _ = writeln!(
            out,
            "{} {} vs {}: retained turns {}/{}, retention {}",
            short(&r.model),
            r.local.label(),
            r.joint.label(),
            r.retained_turns,
            r.joint_correct_turns,
            stat(&r.retention, true)
        );
    }
    if !s.sign_tests.is_empty() {
        let _ = writeln!(
            out,
            "\nSerial − Joint sign tests on dialogue mean-turn EM (two-sided sign flips, plus-one correction, Holm across the family)"
        );
        for t in &s.sign_tests {
            let _ = writeln!(
                out,
                "{} {} − {}: {} dialogues ({} nonzero), mean difference {} pp, p = {:.5} ({} draws; exact {}), Holm p = {:.5} (family of {})",
                short(&t.model),
                t.compared.label(),
                t.reference.label(),
                t.test.n,
                t.test.nonzero,
                t.test
                    .mean_difference
                    .map(|d| format!("{:+.1}", 100.0 * d))
                    .unwrap_or_else(|| "–".into()),
                t.test.p_value,
                t.test.draws,
                t.p_exact
                    .map(|p| format!("{p:.5}"))
                    .unwrap_or_else(|| "not enumerated".into()),
                t.p_holm,
                t.family_size
            );
        }
    }
    if !s.perturbation_summary.is_empty() {
        let _ = writeln!(
            out,
            "\nPerturbation schedule (C.2): turn-EM agreement with the unperturbed dialogue; mean turn EM base → perturbed"
        );
        for p in &s.perturbation_summary {
            let _ = writeln!(
                out,
                "{} {} {}: {} dialogues, {}/{} turns agree ({}), {} → {}",
                short(&p.model),
                p.spec.label(),
                p.kind.as_str(),
                p.dialogues,
                p.agreeing_turns,
                p.turns,
                pct(p.agreement),
                pct(Some(p.base_mean_turn)),
                pct(Some(p.perturbed_mean_turn))
            );
        }
    }
    out
}

/// The model label without its hash when one model is shown at a time is not enough: keep
/// the name and the first 6 hash digits.
fn short(model: &str) -> String {
    match model.split_once('@') {
        Some((name, sha)) => format!("{name}@{}", &sha[..sha.len().min(6)]),
        None => model.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_records::{DialogueContract, DialogueSpec, DialogueSplit, FieldFailure, PriorMode};

    fn row(dialogue: &str, turn: u32, field: &str, attempt: u64) -> FieldTurn {
        FieldTurn {
            dialogue_id: dialogue.into(),
            base_dialogue_id: dialogue.into(),
            perturbation: None,
            split: DialogueSplit::Test,
            service: "s".into(),
            spec: DialogueSpec {
                arm: DialogueArm::Serial,
                mode: PriorMode::Rollout,
                contract: DialogueContract::Scored,
            },
            turn,
            turns: 2,
            field: field.into(),
            field_index: 0,
            gold: "x".into(),
            predicted: Some("x".into()),
            correct: true,
            failure: None,
            request_id: format!("{dialogue}:{turn}:{field}:{attempt}"),
            prompt_key: format!("{dialogue}:{turn}:{field}"),
            probabilities: vec![1.0],
            legal_values: vec!["x".into()],
            model: "m".into(),
            prompt_tokens: 1,
            completion_tokens: 0,
            latency_ms: 0.0,
            response: None,
            error: None,
            attempt,
        }
    }

    /// A run interrupted in attempt 1 and written again in full in attempt 2 is read from
    /// attempt 2 only and counts as complete; a run with an engine error or a missing turn is
    /// not complete (a resume writes it again).
    #[test]
    fn resumes_keep_the_latest_attempt_of_each_run() {
        let mut rows = vec![
            row("a", 1, "f", 1),
            row("a", 1, "g", 1),
            row("a", 1, "f", 2),
            row("a", 1, "g", 2),
            row("a", 2, "f", 2),
            row("a", 2, "g", 2),
            row("b", 1, "f", 1),
            row("b", 1, "g", 1),
            row("c", 1, "f", 1),
            row("c", 1, "g", 1),
            row("c", 2, "f", 1),
            row("c", 2, "g", 1),
        ];
        rows[11].failure = Some(FieldFailure::EngineError);
        rows[11].error = Some("engine down".into());
        let latest = latest_attempts(rows.clone());
        assert_eq!(latest.iter().filter(|r| r.dialogue_id == "a").count(), 4);
        assert!(latest
            .iter()
            .filter(|r| r.dialogue_id == "a")
            .all(|r| r.attempt == 2));
        let done = complete_runs(&rows);
        let ids: Vec<&str> = done.iter().map(|k| k.1.as_str()).collect();
        assert_eq!(ids, ["a"], "b lacks turn 2; c has an engine error");
    }
}
