//! Unit tests of the dialogue statistics' private pieces: recovery definitions, whole-unit
//! resampling and the sign-flip test's edge cases.

use super::bootstrap::resample_units;
use super::summary::spec_of;
use super::*;
use crate::bootstrap::BootstrapConfig;
use c2s_records::dialogue::DialogueContract;

fn score(turns: &[bool]) -> DialogueScore {
    DialogueScore {
        model: "m".into(),
        spec: SignTestSpec::SERIAL_MINUS_JOINT.spec(),
        dialogue_id: "d".into(),
        base_dialogue_id: "d".into(),
        perturbation: None,
        split: DialogueSplit::Test,
        service: "s".into(),
        declared_turns: turns.len() as u32,
        turns: turns
            .iter()
            .enumerate()
            .map(|(i, &c)| TurnScore {
                turn: i as u32 + 1,
                fields: 2,
                correct_fields: if c { 2 } else { 1 },
                correct: c,
            })
            .collect(),
        engine_errors: 0,
    }
}

impl SignTestSpec {
    fn spec(&self) -> DialogueSpec {
        spec_of(self.compared, self.mode, DialogueContract::Scored)
    }
}

#[test]
fn recovery_definitions() {
    let s = score(&[true, false, true, false]);
    assert!(s.failed() && s.any_recovery() && !s.final_recovery());
    let s = score(&[false, false, true]);
    assert!(s.failed() && s.any_recovery() && s.final_recovery());
    let s = score(&[true, true, false]);
    assert!(s.failed() && !s.any_recovery() && !s.final_recovery());
    let s = score(&[true, true]);
    assert!(!s.failed() && !s.any_recovery() && s.trajectory_correct());
    assert_eq!(score(&[true, false, true, true]).mean_turn(), 0.75);
    assert_eq!(score(&[true, false]).mean_field(), 0.75);
    assert!(score(&[true, false]).is_complete());
    let mut s = score(&[true, false]);
    s.turns[1].turn = 3;
    assert!(!s.is_complete());
}

#[test]
fn units_resample_as_whole_units() {
    // Three units with values 0, 1, 2: every draw's multiplicities sum to 3.
    let cfg = BootstrapConfig {
        draws: 500,
        seed: 1,
        threads: 1,
    };
    let d = resample_units(3, &cfg, 1, |w, out| {
        out[0] = Some(f64::from(w.iter().sum::<u32>()));
    })
    .unwrap();
    assert_eq!(d[0].observed, Some(3.0));
    assert!(d[0].values.iter().all(|&x| x == 3.0));
    let none = resample_units(0, &cfg, 2, |_, _| unreachable!()).unwrap();
    assert_eq!(none.len(), 2);
    assert_eq!(none[0].observed, None);
}

#[test]
fn sign_flip_edges() {
    assert_eq!(sign_flip_test(&[], 10, 1).unwrap().p_value, 1.0);
    assert_eq!(sign_flip_test(&[0.5], 0, 1), Err(StatsError::ZeroDraws));
    assert!(sign_flip_test(&[f64::NAN], 10, 1).is_err());
}
