//! Dialogue runs (`[dialogue]`): their field turns (the latest attempt of each), which
//! (dialogue, arm, mode) runs are complete, the settings they recorded, and their summary.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context;

use c2s_records::{DialogueArm, FieldTurn};
use c2s_sinks::read_field_turns;
use c2s_stats::dialogue::{
    summarize_dialogues, DialogueStatsOptions, DialogueSummary, SignTestSpec,
};

/// Whether a run directory holds a dialogue run (its config has a [dialogue] section).
pub fn is_dialogue_run(run_dir: &Path) -> bool {
    super::recorded_config(run_dir).is_ok_and(|c| c.dialogue.is_some())
}

/// The statistics settings a run recorded: [stats] draws, seed and level; [dialogue]
/// sign_test_draws and sign_test_mode (the defaults without a manifest).
pub fn run_dialogue_options(run_dir: &Path) -> anyhow::Result<DialogueStatsOptions> {
    let mut o = DialogueStatsOptions::default();
    let recorded = super::recorded_config(run_dir)?;
    if let Some(stats) = &recorded.stats {
        o.draws = stats.bootstrap_draws;
        o.seed = stats.seed;
        o.level = stats.level;
    }
    if let Some(d) = &recorded.dialogue {
        o.sign_draws = d.sign_test_draws;
        if let Some(mode) = d.sign_test_mode {
            o.sign_tests = vec![SignTestSpec {
                compared: DialogueArm::Serial,
                reference: DialogueArm::Joint,
                mode,
            }];
        }
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
