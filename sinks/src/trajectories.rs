//! The `trajectories` dataset: one row per completed (item, arm) trajectory.

use std::sync::Arc;

use arrow::datatypes::{DataType, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use c2s_records::{
    Confidence, Domain, LabeledArm, Operation, Placement, PlanSource, StepRecord, StopOutcome,
    Support, Trajectory,
};

use crate::codes::{membership_str, parse_membership, parse_stop_category, stop_category_str};
use crate::columns::{self as col, field, list_field, next, Cols};
use crate::error::RowError;
use crate::row::Row;

/// One row of `trajectories/`.
#[derive(Debug, Clone, PartialEq)]
pub struct TrajectoryRow {
    /// The item the trajectory ran.
    pub item_id: String,
    /// `arithmetic` or `lexical`.
    pub domain: String,
    /// Target length L.
    pub length: u32,
    /// Model name.
    pub model: String,
    /// Arm label.
    pub arm: String,
    /// Support name; `-` for whole-answer arms.
    pub support: String,
    /// The completed string (INVALID markers `#` included, END excluded).
    pub output: String,
    /// Strict closed-set exact match with the target.
    pub correct: bool,
    /// Every step answered with a listed value and nothing aborted.
    pub valid: bool,
    /// Model requests made.
    pub calls: u32,
    /// Positions filled without a request.
    pub fills: u32,
    /// Prompt tokens over all requests.
    pub prompt_tokens: u64,
    /// Generated tokens over all requests.
    pub completion_tokens: u64,
    /// Copy arms: the output equals the plan.
    pub fidelity: Option<bool>,
    /// Copy arms: the supplied plan.
    pub plan: Option<String>,
    /// Copy arms: `gold`, `self` (SelfPlanSpell), `observed` or `constructed` (D.12).
    pub plan_origin: Option<String>,
    /// Copy arms: positions where the plan differs from the gold target.
    pub plan_differences: Option<u32>,
    /// Symbolic items: the shared base or source id (the resampling unit).
    pub base_id: Option<String>,
    /// Symbolic items: `copy` or `reverse`.
    pub operation: Option<String>,
    /// Symbolic items: `early` or `late` (uniqueness for COPY/REVERSE, branches for the
    /// twelve-character panel).
    pub placement: Option<String>,
    /// Symbolic items: the target repeats a symbol.
    pub repeated: Option<bool>,
    /// Semantic-bridge items: the gold Boolean pattern (`101`), their bootstrap stratum.
    pub pattern: Option<String>,
    /// D.17's output classes, in order: `gold`, `other_candidate`, `malformed`,
    /// `gold_synset_lemma`, `indexed_noun`, `indexed_word`, `unindexed`; `outside` for any other
    /// well-formed string (arithmetic, or lexical without a WordNet index).
    pub membership: String,
    /// A non-candidate output inside every position-wise candidate union (overlaps
    /// `membership`).
    pub recombination: bool,
    /// SerialStop: `exact_completion`, `premature_end`, `correct_content_without_end`,
    /// `cap_exhaustion` or `wrong_content`.
    pub stop_category: Option<String>,
    /// SerialStop: the gold string immediately followed by END (this and the five below are
    /// null for other arms).
    pub stop_exact_completion: Option<bool>,
    /// SerialStop: the emitted content equals the gold string.
    pub stop_content_em: Option<bool>,
    /// SerialStop: the first L emitted characters equal the gold string.
    pub stop_first_l_correct: Option<bool>,
    /// SerialStop: the L+3 cap was reached without END.
    pub stop_cap_exhausted: Option<bool>,
    /// SerialStop: some content character differs from gold.
    pub stop_content_error: Option<bool>,
    /// SerialStop: steps taken (requests and fills, END included).
    pub stop_steps: Option<u32>,
    /// A Trie prefix left the candidate set (or a support was empty) and the rest was skipped.
    pub aborted: bool,
    /// Summed wall time of the model calls, in ms.
    pub latency_ms: f64,
    /// Product of the chosen probabilities over the called scored steps; null without
    /// composites.
    pub confidence_product: Option<f64>,
    /// exp(mean log chosen probability) over the same steps; null without composites.
    pub confidence_geometric_mean: Option<f64>,
    /// Smallest per-step top-choice probability; null without composites.
    pub confidence_min_top: Option<f64>,
    /// Steps that entered the confidence composites (0 without composites).
    pub confidence_steps: u32,
    /// Per position: the emitted character equals the gold character (local arms).
    pub position_correct: Vec<bool>,
    /// The step records as a JSON array (serde form of `Vec<StepRecord>`).
    pub steps_json: String,
}

fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl From<&Trajectory> for TrajectoryRow {
    fn from(t: &Trajectory) -> TrajectoryRow {
        let stop = t.stop.as_ref();
        TrajectoryRow {
            item_id: t.item_id.clone(),
            domain: t.domain.as_str().to_string(),
            length: saturating_u32(t.length),
            model: t.model.clone(),
            arm: t.arm.to_string(),
            support: t.support.map_or("-", Support::name).to_string(),
            output: t.output.clone(),
            correct: t.correct,
            valid: t.valid,
            calls: t.calls,
            fills: t.fills,
            prompt_tokens: t.prompt_tokens,
            completion_tokens: t.completion_tokens,
            fidelity: t.fidelity,
            plan: t.plan.clone(),
            plan_origin: t.plan_origin.map(|o| o.as_str().to_string()),
            plan_differences: t.plan_differences,
            base_id: t.base_id.clone(),
            operation: t.operation.map(|o| o.as_str().to_string()),
            placement: t.placement.map(|p| p.as_str().to_string()),
            repeated: t.repeated,
            pattern: t.pattern.clone(),
            membership: membership_str(t.membership).to_string(),
            recombination: t.recombination,
            stop_category: stop.map(|s| stop_category_str(s.category).to_string()),
            stop_exact_completion: stop.map(|s| s.exact_completion),
            stop_content_em: stop.map(|s| s.content_em),
            stop_first_l_correct: stop.map(|s| s.first_l_correct),
            stop_cap_exhausted: stop.map(|s| s.cap_exhausted),
            stop_content_error: stop.map(|s| s.content_error),
            stop_steps: stop.map(|s| s.steps),
            aborted: t.aborted,
            latency_ms: t.latency_ms,
            confidence_product: t.confidence.map(|c| c.product),
            confidence_geometric_mean: t.confidence.map(|c| c.geometric_mean),
            confidence_min_top: t.confidence.map(|c| c.min_top),
            confidence_steps: t.confidence.map_or(0, |c| c.steps),
            position_correct: t.position_correct.clone(),
            // Serializing step records cannot fail (no maps, no non-string keys).
            steps_json: serde_json::to_string(&t.steps).unwrap_or_else(|_| "[]".to_string()),
        }
    }
}

impl TrajectoryRow {
    /// The step records decoded from `steps_json`.
    pub fn steps(&self) -> Result<Vec<StepRecord>, RowError> {
        serde_json::from_str(&self.steps_json)
            .map_err(|e| RowError::new("steps_json", e.to_string()))
    }

    /// The trajectory this row records (for offline statistics).
    pub fn to_trajectory(&self) -> Result<Trajectory, RowError> {
        let domain = Domain::parse(&self.domain)
            .ok_or_else(|| RowError::new("domain", format!("unknown domain `{}`", self.domain)))?;
        let membership = parse_membership(&self.membership).ok_or_else(|| {
            RowError::new(
                "membership",
                format!("unknown membership `{}`", self.membership),
            )
        })?;
        let stop = match &self.stop_category {
            None => None,
            Some(s) => {
                let category = parse_stop_category(s).ok_or_else(|| {
                    RowError::new("stop_category", format!("unknown stop category `{s}`"))
                })?;
                let flag = |name: &str, v: Option<bool>| {
                    v.ok_or_else(|| RowError::new(name, "null while stop_category is set"))
                };
                Some(StopOutcome {
                    category,
                    exact_completion: flag("stop_exact_completion", self.stop_exact_completion)?,
                    content_em: flag("stop_content_em", self.stop_content_em)?,
                    first_l_correct: flag("stop_first_l_correct", self.stop_first_l_correct)?,
                    cap_exhausted: flag("stop_cap_exhausted", self.stop_cap_exhausted)?,
                    content_error: flag("stop_content_error", self.stop_content_error)?,
                    steps: self.stop_steps.ok_or_else(|| {
                        RowError::new("stop_steps", "null while stop_category is set")
                    })?,
                })
            }
        };
        let confidence = match (
            self.confidence_product,
            self.confidence_geometric_mean,
            self.confidence_min_top,
        ) {
            (Some(product), Some(geometric_mean), Some(min_top)) => Some(Confidence {
                product,
                geometric_mean,
                min_top,
                steps: self.confidence_steps,
            }),
            (None, None, None) => None,
            _ => {
                return Err(RowError::new(
                    "confidence_product",
                    "confidence composites are partly null",
                ))
            }
        };
        Ok(Trajectory {
            item_id: self.item_id.clone(),
            domain,
            length: self.length as usize,
            model: self.model.clone(),
            arm: LabeledArm::parse(&self.arm).map_err(|e| RowError::new("arm", e.to_string()))?,
            support: match self.support.as_str() {
                "-" => None,
                s => {
                    Some(Support::parse(s).filter(|x| x.name() == s).ok_or_else(|| {
                        RowError::new("support", format!("unknown support `{s}`"))
                    })?)
                }
            },
            output: self.output.clone(),
            correct: self.correct,
            valid: self.valid,
            fidelity: self.fidelity,
            plan: self.plan.clone(),
            plan_origin: self
                .plan_origin
                .as_deref()
                .map(|o| {
                    PlanSource::parse(o).ok_or_else(|| {
                        RowError::new("plan_origin", format!("unknown plan origin `{o}`"))
                    })
                })
                .transpose()?,
            plan_differences: self.plan_differences,
            base_id: self.base_id.clone(),
            operation: self
                .operation
                .as_deref()
                .map(|o| {
                    Operation::parse(o).ok_or_else(|| {
                        RowError::new("operation", format!("unknown operation `{o}`"))
                    })
                })
                .transpose()?,
            placement: self
                .placement
                .as_deref()
                .map(|p| {
                    Placement::parse(p).ok_or_else(|| {
                        RowError::new("placement", format!("unknown placement `{p}`"))
                    })
                })
                .transpose()?,
            repeated: self.repeated,
            pattern: self.pattern.clone(),
            membership,
            recombination: self.recombination,
            stop,
            aborted: self.aborted,
            calls: self.calls,
            fills: self.fills,
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            latency_ms: self.latency_ms,
            confidence,
            position_correct: self.position_correct.clone(),
            steps: self.steps()?,
        })
    }
}

impl Row for TrajectoryRow {
    const DATASET: &'static str = "trajectories";

    fn schema() -> SchemaRef {
        use DataType::{Boolean, Float64, UInt32, UInt64, Utf8};
        Arc::new(Schema::new(vec![
            field("item_id", Utf8, false),
            field("domain", Utf8, false),
            field("length", UInt32, false),
            field("model", Utf8, false),
            field("arm", Utf8, false),
            field("support", Utf8, false),
            field("output", Utf8, false),
            field("correct", Boolean, false),
            field("valid", Boolean, false),
            field("calls", UInt32, false),
            field("fills", UInt32, false),
            field("prompt_tokens", UInt64, false),
            field("completion_tokens", UInt64, false),
            field("fidelity", Boolean, true),
            field("plan", Utf8, true),
            field("plan_origin", Utf8, true),
            field("plan_differences", UInt32, true),
            field("base_id", Utf8, true),
            field("operation", Utf8, true),
            field("placement", Utf8, true),
            field("repeated", Boolean, true),
            field("pattern", Utf8, true),
            field("membership", Utf8, false),
            field("recombination", Boolean, false),
            field("stop_category", Utf8, true),
            field("stop_exact_completion", Boolean, true),
            field("stop_content_em", Boolean, true),
            field("stop_first_l_correct", Boolean, true),
            field("stop_cap_exhausted", Boolean, true),
            field("stop_content_error", Boolean, true),
            field("stop_steps", UInt32, true),
            field("aborted", Boolean, false),
            field("latency_ms", Float64, false),
            field("confidence_product", Float64, true),
            field("confidence_geometric_mean", Float64, true),
            field("confidence_min_top", Float64, true),
            field("confidence_steps", UInt32, false),
            list_field("position_correct", Boolean, false),
            field("steps_json", Utf8, false),
        ]))
    }

    fn to_batch(rows: &[Self]) -> Result<RecordBatch, ArrowError> {
        RecordBatch::try_new(
            Self::schema(),
            vec![
                col::utf8(rows.iter().map(|r| r.item_id.as_str())),
                col::utf8(rows.iter().map(|r| r.domain.as_str())),
                col::u32s(rows.iter().map(|r| r.length)),
                col::utf8(rows.iter().map(|r| r.model.as_str())),
                col::utf8(rows.iter().map(|r| r.arm.as_str())),
                col::utf8(rows.iter().map(|r| r.support.as_str())),
                col::utf8(rows.iter().map(|r| r.output.as_str())),
                col::bools(rows.iter().map(|r| r.correct)),
                col::bools(rows.iter().map(|r| r.valid)),
                col::u32s(rows.iter().map(|r| r.calls)),
                col::u32s(rows.iter().map(|r| r.fills)),
                col::u64s(rows.iter().map(|r| r.prompt_tokens)),
                col::u64s(rows.iter().map(|r| r.completion_tokens)),
                col::opt_bools(rows.iter().map(|r| r.fidelity)),
                col::opt_utf8(rows.iter().map(|r| r.plan.as_deref())),
                col::opt_utf8(rows.iter().map(|r| r.plan_origin.as_deref())),
                col::opt_u32s(rows.iter().map(|r| r.plan_differences)),
                col::opt_utf8(rows.iter().map(|r| r.base_id.as_deref())),
                col::opt_utf8(rows.iter().map(|r| r.operation.as_deref())),
                col::opt_utf8(rows.iter().map(|r| r.placement.as_deref())),
                col::opt_bools(rows.iter().map(|r| r.repeated)),
                col::opt_utf8(rows.iter().map(|r| r.pattern.as_deref())),
                col::utf8(rows.iter().map(|r| r.membership.as_str())),
                col::bools(rows.iter().map(|r| r.recombination)),
                col::opt_utf8(rows.iter().map(|r| r.stop_category.as_deref())),
                col::opt_bools(rows.iter().map(|r| r.stop_exact_completion)),
                col::opt_bools(rows.iter().map(|r| r.stop_content_em)),
                col::opt_bools(rows.iter().map(|r| r.stop_first_l_correct)),
                col::opt_bools(rows.iter().map(|r| r.stop_cap_exhausted)),
                col::opt_bools(rows.iter().map(|r| r.stop_content_error)),
                col::opt_u32s(rows.iter().map(|r| r.stop_steps)),
                col::bools(rows.iter().map(|r| r.aborted)),
                col::f64s(rows.iter().map(|r| r.latency_ms)),
                col::opt_f64s(rows.iter().map(|r| r.confidence_product)),
                col::opt_f64s(rows.iter().map(|r| r.confidence_geometric_mean)),
                col::opt_f64s(rows.iter().map(|r| r.confidence_min_top)),
                col::u32s(rows.iter().map(|r| r.confidence_steps)),
                col::list_bool(rows.iter().map(|r| r.position_correct.as_slice())),
                col::utf8(rows.iter().map(|r| r.steps_json.as_str())),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, RowError> {
        let c = Cols::new(batch, Self::schema());
        let mut item_id = c.utf8("item_id")?.into_iter();
        let mut domain = c.utf8("domain")?.into_iter();
        let mut length = c.u32("length")?.into_iter();
        let mut model = c.utf8("model")?.into_iter();
        let mut arm = c.utf8("arm")?.into_iter();
        let mut support = c.utf8("support")?.into_iter();
        let mut output = c.utf8("output")?.into_iter();
        let mut correct = c.bool("correct")?.into_iter();
        let mut valid = c.bool("valid")?.into_iter();
        let mut calls = c.u32("calls")?.into_iter();
        let mut fills = c.u32("fills")?.into_iter();
        let mut prompt_tokens = c.u64("prompt_tokens")?.into_iter();
        let mut completion_tokens = c.u64("completion_tokens")?.into_iter();
        let mut fidelity = c.opt_bool("fidelity")?.into_iter();
        let mut plan = c.opt_utf8("plan")?.into_iter();
        // Absent in runs written before D.12's plan records: read as null.
        let mut plan_origin = c.opt_utf8("plan_origin")?.into_iter();
        let mut plan_differences = c.opt_u32("plan_differences")?.into_iter();
        // Absent in runs written before the symbolic panels: read as null.
        let mut base_id = c.opt_utf8("base_id")?.into_iter();
        let mut operation = c.opt_utf8("operation")?.into_iter();
        let mut placement = c.opt_utf8("placement")?.into_iter();
        let mut repeated = c.opt_bool("repeated")?.into_iter();
        let mut pattern = c.opt_utf8("pattern")?.into_iter();
        let mut membership = c.utf8("membership")?.into_iter();
        let mut recombination = c.bool("recombination")?.into_iter();
        let mut stop_category = c.opt_utf8("stop_category")?.into_iter();
        let mut stop_exact_completion = c.opt_bool("stop_exact_completion")?.into_iter();
        let mut stop_content_em = c.opt_bool("stop_content_em")?.into_iter();
        let mut stop_first_l_correct = c.opt_bool("stop_first_l_correct")?.into_iter();
        let mut stop_cap_exhausted = c.opt_bool("stop_cap_exhausted")?.into_iter();
        let mut stop_content_error = c.opt_bool("stop_content_error")?.into_iter();
        let mut stop_steps = c.opt_u32("stop_steps")?.into_iter();
        let mut aborted = c.bool("aborted")?.into_iter();
        let mut latency_ms = c.f64("latency_ms")?.into_iter();
        let mut confidence_product = c.opt_f64("confidence_product")?.into_iter();
        let mut confidence_geometric_mean = c.opt_f64("confidence_geometric_mean")?.into_iter();
        let mut confidence_min_top = c.opt_f64("confidence_min_top")?.into_iter();
        let mut confidence_steps = c.u32("confidence_steps")?.into_iter();
        let mut position_correct = c.list_bool("position_correct")?.into_iter();
        let mut steps_json = c.utf8("steps_json")?.into_iter();
        Ok((0..c.len())
            .map(|_| TrajectoryRow {
                item_id: next(&mut item_id),
                domain: next(&mut domain),
                length: next(&mut length),
                model: next(&mut model),
                arm: next(&mut arm),
                support: next(&mut support),
                output: next(&mut output),
                correct: next(&mut correct),
                valid: next(&mut valid),
                calls: next(&mut calls),
                fills: next(&mut fills),
                prompt_tokens: next(&mut prompt_tokens),
                completion_tokens: next(&mut completion_tokens),
                fidelity: next(&mut fidelity),
                plan: next(&mut plan),
                plan_origin: next(&mut plan_origin),
                plan_differences: next(&mut plan_differences),
                base_id: next(&mut base_id),
                operation: next(&mut operation),
                placement: next(&mut placement),
                repeated: next(&mut repeated),
                pattern: next(&mut pattern),
                membership: next(&mut membership),
                recombination: next(&mut recombination),
                stop_category: next(&mut stop_category),
                stop_exact_completion: next(&mut stop_exact_completion),
                stop_content_em: next(&mut stop_content_em),
                stop_first_l_correct: next(&mut stop_first_l_correct),
                stop_cap_exhausted: next(&mut stop_cap_exhausted),
                stop_content_error: next(&mut stop_content_error),
                stop_steps: next(&mut stop_steps),
                aborted: next(&mut aborted),
                latency_ms: next(&mut latency_ms),
                confidence_product: next(&mut confidence_product),
                confidence_geometric_mean: next(&mut confidence_geometric_mean),
                confidence_min_top: next(&mut confidence_min_top),
                confidence_steps: next(&mut confidence_steps),
                position_correct: next(&mut position_correct),
                steps_json: next(&mut steps_json),
            })
            .collect())
    }
}
