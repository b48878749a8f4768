//! Appendix C's dialogue exhibits, from the runs' dialogue statistics (`choice2seq dialogue`,
//! [`c2s_stats::dialogue`]) on 96 test dialogues and 18 perturbed copies:
//! - C.1's prior-state replay (panel `dialogue-prior`, Joint × HistoryRecompute / Oracle /
//!   Rollout): Tables C1–C3 and Figure 8, the Joint rows per mode and their Oracle − Rollout
//!   differences;
//! - C.2's matched construction (panel `dialogue-matched`, Joint / Independent / Serial):
//!   Tables C4, C5 and Figure 9, every arm under the sign tests' mode (HistoryRecompute), with
//!   each local arm's retention against Joint and the Serial − Joint sign tests, Holm-corrected
//!   as one family over every model.
//!
//! The panels are separate runs, as the paper's (§3.3: "A separate replay"). A deterministic
//! engine answers both panels' HistoryRecompute Joint requests alike, so its C1
//! HistoryRecompute row is its C4 Joint row; the paper's, a served model's answering each
//! request anew (C.2), differ.

use c2s_records::{DialogueArm, PriorMode};
use c2s_stats::dialogue::{ContrastKind, DialogueSummary, RetentionRow, SpecSummary, Stat};
use serde::Serialize;

use super::engine::Frame;
use super::{run_of, PanelRun};

/// One arm and mode of the run: its summary with the paper's names and its retention.
#[derive(Debug, Serialize)]
pub struct SpecRow<'a> {
    /// The spec's summary (model, counts, endpoints, recoveries).
    #[serde(flatten)]
    pub summary: &'a SpecSummary,
    /// The arm as the paper names it (`Joint`, its variant's name).
    pub arm: String,
    /// The prior-state mode as the paper names it (`HistoryRecompute`).
    pub mode: String,
    /// Retained turns and retention against Joint; none for Joint, the reference.
    pub retention: Option<&'a RetentionRow>,
}

fn spec_rows<'a>(s: &'a DialogueSummary, keep: impl Fn(&SpecSummary) -> bool) -> Vec<SpecRow<'a>> {
    (s.specs.iter().filter(|r| keep(r)))
        .map(|r| SpecRow {
            summary: r,
            arm: format!("{:?}", r.spec.arm),
            mode: format!("{:?}", r.spec.mode),
            retention: (s.retention.iter()).find(|x| x.model == r.model && x.local == r.spec),
        })
        .collect()
}

/// One endpoint of a Joint Oracle − Rollout contrast (Table C2, Figure 8).
#[derive(Debug, Serialize)]
pub struct EndpointRow<'a> {
    /// The model label of the run's records.
    pub model: &'a str,
    /// The endpoint as the table names it (`trajectory`, `mean turn`, `final`, `mean field`).
    pub endpoint: &'static str,
    /// Oracle − Rollout (fraction) with its dialogue and component intervals.
    pub difference: &'a Stat,
}

/// C.1's prior-state replay (Tables C1–C3, Figure 8).
const PRIOR_PANEL: &str = "dialogue-prior";
/// C.2's matched construction (Tables C4, C5, Figure 9).
const MATCHED_PANEL: &str = "dialogue-matched";

fn summary(runs: &[PanelRun], panel: &str) -> anyhow::Result<DialogueSummary> {
    let run = run_of(runs, panel)?;
    c2s_rundir::dialogue::summary_of(&run.run_dirs, None, None)
}

/// C.1's rows: the Joint arm per mode (`joint`), its Oracle − Rollout differences per endpoint
/// (`contrasts`) and its contract (`contract`).
pub fn prior(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let s = summary(runs, PRIOR_PANEL)?;
    let joint = spec_rows(&s, |r| r.spec.arm == DialogueArm::Joint);
    let contrasts: Vec<EndpointRow> = (s.contrasts.iter())
        .filter(|c| {
            c.kind == ContrastKind::OracleMinusRollout && c.compared.arm == DialogueArm::Joint
        })
        .flat_map(|c| {
            [
                ("trajectory", &c.trajectory),
                ("mean turn", &c.mean_turn),
                ("final", &c.final_state),
                ("mean field", &c.mean_field),
            ]
            .map(|(endpoint, e)| EndpointRow {
                model: &c.model,
                endpoint,
                difference: &e.difference,
            })
        })
        .collect();
    let contract = joint.first().map(|r| r.summary.spec.contract.as_str());
    Ok(Frame::new()
        .rows("joint", &joint)
        .rows("contrasts", &contrasts)
        .var("contract", contract))
}

/// C.2's rows: every arm under the sign tests' mode (`local`), the run's sign tests in order
/// (`sign_tests`), their mode (`mode`; the paper's HistoryRecompute where the run made none)
/// and draws (`sign_draws`).
pub fn matched(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let s = summary(runs, MATCHED_PANEL)?;
    let mode = (s.options.sign_tests.first()).map_or(PriorMode::HistoryRecompute, |t| t.mode);
    let local = spec_rows(&s, |r| r.spec.mode == mode);
    Ok(Frame::new()
        .rows("local", &local)
        .rows("sign_tests", &s.sign_tests)
        .var("mode", format!("{mode:?}"))
        .var("sign_draws", s.options.sign_draws))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::Exhibit;

    /// §3.3: "A separate replay compares transcript recomputation with predicted or gold prior
    /// state"; C.2: "Each request receives a separate response". C.1's tables and C.2's read
    /// separate runs, so C1's HistoryRecompute row is not C4's Joint row by construction.
    #[test]
    fn the_prior_state_replay_and_the_matched_panel_are_separate_runs() {
        for e in ["tableC1", "tableC2", "tableC3", "figure8"] {
            assert_eq!(Exhibit::named(e).unwrap().panels(), [PRIOR_PANEL]);
        }
        for e in ["tableC4", "tableC5", "figure9"] {
            assert_eq!(Exhibit::named(e).unwrap().panels(), [MATCHED_PANEL]);
        }
    }
}
