//! Supplied copy plans: the targets that IncorrectCopy copies (paper D.12, "Copying supplied
//! incorrect targets": "Incorrect plans comprise 48 observed arithmetic selections, 28 observed
//! lexical selections and 20 constructed lexical candidates; observed errors can come from
//! another model … Records retain difference counts and distinguish observed from constructed
//! plans").
//!
//! A plan file has one JSON object per line:
//! `{"item_id": "arith-test-5-07", "plan": "58721", "origin": "observed", "source": "…"}`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Where a supplied plan comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanOrigin {
    /// A model's observed wrong selection (its Native choice), possibly another model's.
    Observed,
    /// A constructed incorrect candidate (no model chose it).
    Constructed,
}

impl PlanOrigin {
    /// `observed` or `constructed`: the serde form, and the trajectories' `plan_origin`.
    pub fn as_str(self) -> &'static str {
        match self {
            PlanOrigin::Observed => "observed",
            PlanOrigin::Constructed => "constructed",
        }
    }
}

/// Where a trajectory's copied plan came from: the trajectories' `plan_origin`. A supplied
/// plan declares its [`PlanOrigin`]; the other copy arms copy the gold target or the model's
/// own Native choice. (A separate enum from [`PlanOrigin`], so that a plan file cannot declare
/// `gold` or `self`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanSource {
    /// GoldCopy: the gold target.
    Gold,
    /// SelfPlanSpell: the model's own Native choice.
    #[serde(rename = "self")]
    OwnChoice,
    /// IncorrectCopy before its plan's origin is known.
    Supplied,
    /// A supplied plan that a model selected.
    Observed,
    /// A supplied plan that was constructed.
    Constructed,
}

impl PlanSource {
    /// Every source, in declaration order.
    pub const ALL: [PlanSource; 5] = [
        PlanSource::Gold,
        PlanSource::OwnChoice,
        PlanSource::Supplied,
        PlanSource::Observed,
        PlanSource::Constructed,
    ];

    /// `gold`, `self`, `supplied`, `observed` or `constructed`: the serde form and the
    /// `plan_origin` column.
    pub fn as_str(self) -> &'static str {
        match self {
            PlanSource::Gold => "gold",
            PlanSource::OwnChoice => "self",
            PlanSource::Supplied => "supplied",
            PlanSource::Observed => "observed",
            PlanSource::Constructed => "constructed",
        }
    }

    /// The source named `name` ([`PlanSource::as_str`]).
    pub fn parse(name: &str) -> Option<PlanSource> {
        PlanSource::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

impl From<PlanOrigin> for PlanSource {
    fn from(o: PlanOrigin) -> PlanSource {
        match o {
            PlanOrigin::Observed => PlanSource::Observed,
            PlanOrigin::Constructed => PlanSource::Constructed,
        }
    }
}

impl std::fmt::Display for PlanSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One supplied plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuppliedPlan {
    /// The item whose IncorrectCopy arm copies this plan.
    pub item_id: String,
    /// The string to copy (same length as the item's target, different from it).
    pub plan: String,
    /// Whether a model selected the plan or it was constructed.
    pub origin: PlanOrigin,
    /// Free text: which model and run selected it, or how it was constructed.
    #[serde(default)]
    pub source: Option<String>,
}

/// A problem in a plan file, with its one-based line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct PlanFileError {
    /// One-based line of the file.
    pub line: usize,
    /// What is wrong with it (naming the item where one was read).
    pub message: String,
}

/// Parse a plan file's text: one plan per item id. Blank lines are skipped; anything else that
/// is not a plan, or a second plan for one item, is an error naming its line.
pub fn parse_plan_file(text: &str) -> Result<BTreeMap<String, SuppliedPlan>, PlanFileError> {
    let mut plans = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let plan: SuppliedPlan = serde_json::from_str(line).map_err(|e| PlanFileError {
            line: line_no,
            message: format!("not a plan ({{item_id, plan, origin, source}}): {e}"),
        })?;
        if plan.plan.is_empty() {
            return Err(PlanFileError {
                line: line_no,
                message: format!("item {}: empty plan", plan.item_id),
            });
        }
        if let Some(old) = plans.insert(plan.item_id.clone(), plan) {
            return Err(PlanFileError {
                line: line_no,
                message: format!("item {} has a second plan", old.item_id),
            });
        }
    }
    Ok(plans)
}

/// The file form of `plans` (one JSON line each, in item-id order).
pub fn write_plan_file(plans: &BTreeMap<String, SuppliedPlan>) -> String {
    let mut out = String::new();
    for p in plans.values() {
        // A plan of strings and an enum always serializes.
        out.push_str(&serde_json::to_string(p).unwrap_or_default());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_files_round_trip_and_name_bad_lines() {
        let text = "{\"item_id\":\"a\",\"plan\":\"123\",\"origin\":\"observed\",\"source\":\"m\"}\n\n{\"item_id\":\"b\",\"plan\":\"xyz\",\"origin\":\"constructed\"}\n";
        let plans = parse_plan_file(text).unwrap();
        assert_eq!(plans.len(), 2);
        assert_eq!(plans["b"].origin, PlanOrigin::Constructed);
        assert_eq!(parse_plan_file(&write_plan_file(&plans)).unwrap(), plans);
        let dup = format!("{text}{{\"item_id\":\"a\",\"plan\":\"124\",\"origin\":\"observed\"}}\n");
        let e = parse_plan_file(&dup).unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.message.contains("second plan"), "{e}");
        let e = parse_plan_file("{\"item_id\":\"a\",\"plan\":\"1\",\"origin\":\"guessed\"}")
            .unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("guessed"), "{e}");
    }
}
