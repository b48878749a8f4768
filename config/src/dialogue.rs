//! `[dialogue]`: a dialogue-state run (Appendix C) and its checks.

use serde::{Deserialize, Serialize};

use c2s_records::{DialogueArm, DialogueContract, DialogueSpec, PriorMode};

/// `[dialogue]`: a dialogue-state run (Appendix C). Every dialogue of the sources runs under
/// every arm × prior-state mode, answered under one contract.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DialogueSection {
    /// `joint`, `independent`, `serial` (C.2).
    #[serde(default = "default_dialogue_arms")]
    pub arms: Vec<DialogueArm>,
    /// `history_recompute`, `oracle`, `rollout` (C.1).
    #[serde(default = "default_dialogue_modes")]
    pub modes: Vec<PriorMode>,
    /// `scored` (typed decisions over each field's legal values; a Joint request read once
    /// per field), `scored_sequential` (named alternative: a Joint answer decides its fields
    /// one after another) or `generated` (strict JSON, 256 new tokens, greedy: E.4).
    #[serde(default = "default_dialogue_contract")]
    pub contract: DialogueContract,
    /// Draws of the Serial − Joint sign tests ("99,999 draws, plus-one correction", C.2).
    #[serde(default = "default_sign_test_draws")]
    pub sign_test_draws: u32,
    /// The prior-state mode of the Serial − Joint sign tests (default: history_recompute
    /// when the run has it, else its first mode; resolved at load).
    #[serde(default)]
    pub sign_test_mode: Option<PriorMode>,
}

fn default_dialogue_arms() -> Vec<DialogueArm> {
    vec![
        DialogueArm::Joint,
        DialogueArm::Independent,
        DialogueArm::Serial,
    ]
}
fn default_dialogue_modes() -> Vec<PriorMode> {
    vec![
        PriorMode::HistoryRecompute,
        PriorMode::Oracle,
        PriorMode::Rollout,
    ]
}
fn default_dialogue_contract() -> DialogueContract {
    DialogueContract::Scored
}
fn default_sign_test_draws() -> u32 {
    99_999
}

impl DialogueSection {
    /// The specs of the run, arms outer, modes inner.
    pub fn specs(&self) -> Vec<DialogueSpec> {
        let mut out = Vec::new();
        for &arm in &self.arms {
            for &mode in &self.modes {
                out.push(DialogueSpec {
                    arm,
                    mode,
                    contract: self.contract,
                });
            }
        }
        out
    }

    /// The prior-state mode of the Serial − Joint sign tests.
    pub fn sign_test_mode(&self) -> PriorMode {
        self.sign_test_mode.unwrap_or(PriorMode::HistoryRecompute)
    }
}

/// Check `[dialogue]` and resolve its sign-test mode; errors are (field, message).
pub(crate) fn resolve_dialogue(d: &mut DialogueSection) -> Result<(), (String, String)> {
    fn distinct<T: PartialEq>(
        field: &str,
        values: &[T],
        name: fn(&T) -> &'static str,
    ) -> Result<(), (String, String)> {
        if values.is_empty() {
            return Err((field.into(), "names none".into()));
        }
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                return Err((field.into(), format!("`{}` is listed twice", name(v))));
            }
        }
        Ok(())
    }
    distinct("arms", &d.arms, |a| a.as_str())?;
    distinct("modes", &d.modes, |m| m.as_str())?;
    let mode = match d.sign_test_mode {
        Some(m) => m,
        None if d.modes.contains(&PriorMode::HistoryRecompute) => PriorMode::HistoryRecompute,
        None => d.modes[0],
    };
    if d.sign_test_draws == 0 {
        return Err(("sign_test_draws".into(), "must be positive".into()));
    }
    let tested = d.arms.contains(&DialogueArm::Serial) && d.arms.contains(&DialogueArm::Joint);
    if tested && !d.modes.contains(&mode) {
        let modes: Vec<&str> = d.modes.iter().map(|m| m.as_str()).collect();
        return Err((
            "sign_test_mode".into(),
            format!(
                "`{}` is not among the run's modes ({}): the Serial − Joint sign test would have no pairs",
                mode.as_str(),
                modes.join(", ")
            ),
        ));
    }
    d.sign_test_mode = Some(mode);
    Ok(())
}
