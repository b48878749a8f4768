//! Drive controllers against an [`InferenceService`] without a dataflow: every trajectory of
//! every (item, arm) runs concurrently, each step submitted as soon as its controller allows.
//! The benchmark and the engine tests use it; the pipeline runs the same controllers inside
//! its timely feedback loop.

use std::collections::HashMap;

use tokio::task::JoinSet;

use c2s_protocol::{Controller, ControllerConfig, ControllerError};
use c2s_records::{ArmSpec, Item, Request, Response, Trajectory};

use super::error::EngineError;
use super::service::InferenceService;

/// A failure while driving one trajectory.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error(transparent)]
    Controller(#[from] ControllerError),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// Everything one trajectory asked and got.
#[derive(Debug, Clone)]
pub struct DrivenTrajectory {
    pub trajectory: Trajectory,
    pub exchanges: Vec<(Request, Response)>,
}

/// Run one controller to completion.
pub async fn drive(
    service: &InferenceService,
    mut controller: Controller,
    model: &str,
) -> Result<DrivenTrajectory, DriveError> {
    let mut exchanges = Vec::new();
    let mut pending: JoinSet<(Request, Result<Response, EngineError>)> = JoinSet::new();
    for r in controller.start() {
        let s = service.clone();
        pending.spawn(async move { (r.clone(), s.call(r).await) });
    }
    while let Some(joined) = pending.join_next().await {
        let (request, reply) = joined.map_err(|e| EngineError::Compute(format!("task: {e}")))?;
        let response = reply?;
        for next in controller.on_response(&response)? {
            let s = service.clone();
            pending.spawn(async move { (next.clone(), s.call(next).await) });
        }
        exchanges.push((request, response));
    }
    let trajectory = controller
        .trajectory(model)
        .ok_or_else(|| EngineError::Compute("controller did not complete".into()))?;
    Ok(DrivenTrajectory {
        trajectory,
        exchanges,
    })
}

/// Run every (item, spec) trajectory concurrently. SelfPlanSpell arms start once the item's
/// Native trajectory has chosen its plan. Results are in (item, spec) order.
pub async fn drive_all(
    service: &InferenceService,
    items: &[Item],
    specs: &[ArmSpec],
    cfg: &ControllerConfig,
) -> Vec<Result<DrivenTrajectory, DriveError>> {
    let model = service.identity().label();
    let mut set: JoinSet<(usize, Result<DrivenTrajectory, DriveError>)> = JoinSet::new();
    let mut index = 0;
    let mut plan_waiters: HashMap<usize, Vec<(usize, Item, ArmSpec)>> = HashMap::new();
    let native_slot = |item_index: usize| {
        specs
            .iter()
            .position(|s| s.arm == c2s_records::Arm::Native)
            .map(|k| item_index * specs.len() + k)
    };
    for (ii, item) in items.iter().enumerate() {
        for spec in specs {
            let slot = index;
            index += 1;
            if spec.arm == c2s_records::Arm::SelfPlanSpell {
                if let Some(native) = native_slot(ii) {
                    plan_waiters
                        .entry(native)
                        .or_default()
                        .push((slot, item.clone(), *spec));
                    continue;
                }
            }
            let controller = Controller::new(item, *spec, None, cfg);
            let s = service.clone();
            let m = model.clone();
            set.spawn(async move {
                let r = match controller {
                    Ok(c) => drive(&s, c, &m).await,
                    Err(e) => Err(e.into()),
                };
                (slot, r)
            });
        }
    }
    let mut results: Vec<Option<Result<DrivenTrajectory, DriveError>>> =
        (0..index).map(|_| None).collect();
    while let Some(joined) = set.join_next().await {
        let Ok((slot, result)) = joined else { continue };
        if let Some(waiters) = plan_waiters.remove(&slot) {
            let plan = result.as_ref().ok().map(|d| d.trajectory.output.clone());
            for (wslot, item, spec) in waiters {
                let controller = Controller::new(&item, spec, plan.clone(), cfg);
                let s = service.clone();
                let m = model.clone();
                set.spawn(async move {
                    let r = match controller {
                        Ok(c) => drive(&s, c, &m).await,
                        Err(e) => Err(e.into()),
                    };
                    (wslot, r)
                });
            }
        }
        results[slot] = Some(result);
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or(Err(DriveError::Engine(EngineError::Stopped))))
        .collect()
}
