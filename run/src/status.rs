//! Whether a run did its job: the early stop while it runs, and its final status — the exit
//! code, the banner's account of what the model answered, and the status in `manifest.json`.
//!
//! Exit codes: 0 the run completed (or was stopped by Ctrl-C/SIGTERM after finishing the items
//! in flight); 1 the run broke (a worker failed, outputs could not be written, or a remote
//! server could not be reached within `[inference] max_outage_seconds`); 2 a bad
//! config or model, found before any work; 3 the model could not do the job — the engine
//! rejected trajectories and none completed, more than `[run] max_failed_share` of the model
//! requests failed, or the run stopped early because its first
//! `[run] stop_after_identical_failures` requests all failed with the same error.

use std::process::ExitCode;
use std::sync::atomic::Ordering;

use c2s_config::RunKind;
use c2s_model::TallyCounts;
use c2s_sinks::{RunState, RunStatus};

use super::shared::{Shared, StopCause};

/// How the run ended, decided from what it counted.
pub struct Outcome {
    pub status: RunStatus,
    pub exit: ExitCode,
}

impl Outcome {
    /// The run's outputs are complete but its manifest could not record the status.
    pub fn unrecorded(mut status: RunStatus, error: String) -> Outcome {
        status.state = RunState::Failed;
        status.exit_code = Some(1);
        status.reason = Some(format!("manifest.json could not be updated: {error}"));
        Outcome {
            status,
            exit: ExitCode::FAILURE,
        }
    }
}

/// The final status of this process's run. `failures` are workers that ended with an error.
pub fn outcome(shared: &Shared, failures: &[String]) -> Outcome {
    let counts = shared.tally.counts();
    let completed = shared.counters.trajectories.load(Ordering::Relaxed);
    let rejected = shared.counters.rejects.load(Ordering::Relaxed);
    let cause = shared
        .stop_cause
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let max_share = shared.cfg.run.max_failed_share;
    let (state, code, reason) = if !failures.is_empty() {
        (RunState::Failed, 1, Some(failures.join("; ")))
    } else if let Some(StopCause::EngineOutage(why)) = &cause {
        // The server, not the model: the run broke and resumes.
        (
            RunState::Failed,
            1,
            Some(format!("{why}; resume with the same command")),
        )
    } else if shared.writes.failed() {
        let why = shared
            .writes
            .given_up()
            .unwrap_or_else(|| "some records could not be buffered (see the log)".into());
        (
            RunState::Failed,
            1,
            Some(format!("outputs could not be written: {why}")),
        )
    } else if let Some(StopCause::IdenticalFailures { message, count }) = &cause {
        (
            RunState::Failed,
            3,
            Some(format!(
                "stopped early: the first {count} model requests all failed with: {message}"
            )),
        )
    } else if counts.failed > 0 && completed == 0 {
        (
            RunState::Failed,
            3,
            Some(format!(
                "the engine failed {} requests and no {} completed",
                counts.failed,
                unit_one(shared)
            )),
        )
    } else if counts.failed_share() > max_share {
        (
            RunState::Failed,
            3,
            Some(format!(
                "{:.1}% of the model requests failed ({} of {}), more than max_failed_share \
                 {max_share}",
                100.0 * counts.failed_share(),
                counts.failed,
                counts.answered + counts.failed
            )),
        )
    } else if let Some(StopCause::Signal(signal)) = &cause {
        (
            RunState::Stopped,
            0,
            Some(format!("stopped by {signal}; resume with the same command")),
        )
    } else {
        (RunState::Completed, 0, None)
    };
    let (most_common_error, most_common_error_count) = match counts.most_common() {
        Some((m, n)) => (Some(m.to_string()), n),
        None => (None, 0),
    };
    Outcome {
        status: RunStatus {
            state,
            exit_code: Some(code),
            reason,
            requests_answered: counts.answered,
            requests_failed: counts.failed,
            rejected,
            completed,
            most_common_error,
            most_common_error_count,
            outages: shared
                .outages
                .as_ref()
                .map(|w| w.outages())
                .unwrap_or_default(),
            at_ms: c2s_sinks::now_ms(),
        },
        exit: ExitCode::from(code),
    }
}

/// What the banner says about the model's answers and the run's status (empty for a clean
/// run).
pub fn banner(status: &RunStatus, counts: &TallyCounts) -> Vec<String> {
    let mut lines = Vec::new();
    if counts.failed > 0 || status.rejected > 0 || status.state == RunState::Failed {
        lines.push(format!(
            "model requests: {} answered, {} failed; {} rejected records (rejects/)",
            counts.answered, counts.failed, status.rejected
        ));
    }
    if let Some(m) = &status.most_common_error {
        lines.push(format!(
            "most common error ({}×): {m}",
            status.most_common_error_count
        ));
    }
    match (status.state, &status.reason, status.exit_code) {
        (RunState::Failed, Some(reason), Some(code)) => {
            lines.push(format!("FAILED (exit {code}): {reason}"))
        }
        (RunState::Stopped, Some(reason), _) => lines.push(reason.clone()),
        _ => {}
    }
    lines
}

fn unit_one(shared: &Shared) -> &'static str {
    match shared.cfg.kind() {
        RunKind::Coverage(_) => "decision",
        RunKind::Dialogue(_) => "dialogue run",
        RunKind::Items => "trajectory",
    }
}
