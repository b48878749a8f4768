//! Records that flow between the dataflow stages. Everything here is serde so that timely can
//! exchange it between workers and processes.

use serde::{Deserialize, Serialize};

use c2s_records::{ArmSpec, Item, Request, Response, StepRecord, SuppliedPlan};

/// A raw record from a source, before validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Incoming {
    /// Which source (e.g. `jsonl:data/banks/x.jsonl`, `kafka:items`).
    pub source: String,
    /// Where in it (`file:line`, `topic/partition@offset`).
    pub location: String,
    /// The text of the item, or why it could not be read.
    pub payload: Result<String, String>,
}

/// Something that cannot be run, with where it came from and why (the `rejects` dataset).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reject {
    /// Which source the record came from (as in [`Incoming::source`]).
    pub source: String,
    /// Where in that source (as in [`Incoming::location`]).
    pub location: String,
    /// The record's id, when it could be read.
    pub item_id: Option<String>,
    /// Why it cannot run (the rule it breaks, or the error that stopped it).
    pub reason: String,
}

/// One trajectory to run: an item under one arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// The item to run.
    pub item: Item,
    /// The arm it runs under.
    pub spec: ArmSpec,
    /// Label of the arm whose output is this task's plan (SelfPlanSpell copies the item's own
    /// Native choice); the task starts once that trajectory is complete.
    pub plan_from: Option<String>,
    /// The supplied plan of an IncorrectCopy task (from the run's `[copy_plans]`).
    #[serde(default)]
    pub supplied_plan: Option<SuppliedPlan>,
}

/// A model answer on its way back into the feedback loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answered {
    /// The item the request belongs to.
    pub item_id: String,
    /// Id of the request answered (its [`Request::request_id`]).
    pub request_id: String,
    /// The engine's response, or its error as text (a failed request is data, recorded with
    /// its trajectory).
    pub reply: Result<Response, String>,
}

/// A request, its response and the step it produced (the `requests` dataset).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// The request as sent.
    pub request: Request,
    /// The engine's answer to it.
    pub response: Response,
    /// The trajectory step the answer produced (none outside the item loop).
    pub step: Option<StepRecord>,
}

/// A stable 64-bit hash (FNV-1a) for routing records by key across workers.
pub fn route(key: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in key.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// The ids seen on this worker, to refuse duplicates: every id (`window` = 0) or the last
/// `window` ids (bounded memory on an endless stream).
#[derive(Debug, Default)]
pub struct RecentIds {
    seen: std::collections::HashSet<String>,
    order: std::collections::VecDeque<String>,
    window: usize,
}

impl RecentIds {
    /// Refuse duplicates among the last `window` ids, or among all of them when `window` is 0.
    pub fn new(window: usize) -> RecentIds {
        RecentIds {
            window,
            ..Default::default()
        }
    }

    /// Record `id`; `false` when it was seen already (a duplicate).
    pub fn admit(&mut self, id: &str) -> bool {
        if !self.seen.insert(id.to_string()) {
            return false;
        }
        if self.window > 0 {
            self.order.push_back(id.to_string());
            while self.order.len() > self.window {
                if let Some(old) = self.order.pop_front() {
                    self.seen.remove(&old);
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::RecentIds;

    #[test]
    fn recent_ids_refuse_duplicates_within_the_window() {
        let mut all = RecentIds::new(0);
        assert!(all.admit("a") && all.admit("b") && !all.admit("a"));
        let mut last2 = RecentIds::new(2);
        assert!(last2.admit("a") && last2.admit("b") && !last2.admit("b"));
        assert!(last2.admit("c")); // `a` leaves the window
        assert!(last2.admit("a"));
        assert!(!last2.admit("c"));
    }
}
