//! The `dialogue_turns` dataset of a dialogue-state run (Appendix C): one row per field of
//! every user turn of a dialogue under one arm, prior-state mode and contract. Turn EM,
//! trajectory EM and the other endpoints are computed from these rows by the statistics.

use std::sync::Arc;

use arrow::datatypes::{DataType, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;

use c2s_records::{
    DialogueArm, DialogueContract, DialogueSpec, DialogueSplit, FieldFailure, FieldTurn,
    Perturbation, PriorMode,
};

use crate::columns::{self as col, field, list_field, next, Cols};
use crate::error::RowError;
use crate::row::Row;

/// One row of `dialogue_turns/`.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldTurnRow(pub FieldTurn);

fn bad(column: &str, value: &str) -> RowError {
    RowError::new(column, format!("unknown value `{value}`"))
}

impl Row for FieldTurnRow {
    const DATASET: &'static str = "dialogue_turns";

    fn schema() -> SchemaRef {
        use DataType::{Boolean, Float64, UInt32, UInt64, Utf8};
        Arc::new(Schema::new(vec![
            field("model", Utf8, false),
            field("dialogue_id", Utf8, false),
            field("base_dialogue_id", Utf8, false),
            field("perturbation", Utf8, true),
            field("split", Utf8, false),
            field("service", Utf8, false),
            field("arm", Utf8, false),
            field("mode", Utf8, false),
            field("contract", Utf8, false),
            field("turn", UInt32, false),
            field("turns", UInt32, false),
            field("field", Utf8, false),
            field("field_index", UInt32, false),
            field("gold", Utf8, false),
            field("predicted", Utf8, true),
            field("correct", Boolean, false),
            field("failure", Utf8, true),
            field("request_id", Utf8, false),
            field("prompt_key", Utf8, false),
            list_field("legal_values", Utf8, false),
            list_field("probabilities", Float64, true),
            field("prompt_tokens", UInt32, false),
            field("completion_tokens", UInt32, false),
            field("latency_ms", Float64, false),
            field("response", Utf8, true),
            field("error", Utf8, true),
            field("attempt", UInt64, false),
        ]))
    }

    fn to_batch(rows: &[Self]) -> Result<RecordBatch, ArrowError> {
        let d: Vec<&FieldTurn> = rows.iter().map(|r| &r.0).collect();
        RecordBatch::try_new(
            Self::schema(),
            vec![
                col::utf8(d.iter().map(|x| x.model.as_str())),
                col::utf8(d.iter().map(|x| x.dialogue_id.as_str())),
                col::utf8(d.iter().map(|x| x.base_dialogue_id.as_str())),
                col::opt_utf8(d.iter().map(|x| x.perturbation.map(|p| p.as_str()))),
                col::utf8(d.iter().map(|x| x.split.as_str())),
                col::utf8(d.iter().map(|x| x.service.as_str())),
                col::utf8(d.iter().map(|x| x.spec.arm.as_str())),
                col::utf8(d.iter().map(|x| x.spec.mode.as_str())),
                col::utf8(d.iter().map(|x| x.spec.contract.as_str())),
                col::u32s(d.iter().map(|x| x.turn)),
                col::u32s(d.iter().map(|x| x.turns)),
                col::utf8(d.iter().map(|x| x.field.as_str())),
                col::u32s(d.iter().map(|x| x.field_index)),
                col::utf8(d.iter().map(|x| x.gold.as_str())),
                col::opt_utf8(d.iter().map(|x| x.predicted.as_deref())),
                col::bools(d.iter().map(|x| x.correct)),
                col::opt_utf8(d.iter().map(|x| x.failure.map(|f| f.as_str()))),
                col::utf8(d.iter().map(|x| x.request_id.as_str())),
                col::utf8(d.iter().map(|x| x.prompt_key.as_str())),
                col::list_utf8(d.iter().map(|x| x.legal_values.as_slice())),
                col::opt_list_f64(
                    d.iter().map(|x| {
                        (!x.probabilities.is_empty()).then_some(x.probabilities.as_slice())
                    }),
                ),
                col::u32s(d.iter().map(|x| x.prompt_tokens)),
                col::u32s(d.iter().map(|x| x.completion_tokens)),
                col::f64s(d.iter().map(|x| x.latency_ms)),
                col::opt_utf8(d.iter().map(|x| x.response.as_deref())),
                col::opt_utf8(d.iter().map(|x| x.error.as_deref())),
                col::u64s(d.iter().map(|x| x.attempt)),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, RowError> {
        let c = Cols::new(batch, Self::schema());
        let mut model = c.utf8("model")?.into_iter();
        let mut dialogue_id = c.utf8("dialogue_id")?.into_iter();
        let mut base = c.utf8("base_dialogue_id")?.into_iter();
        let mut perturbation = c.opt_utf8("perturbation")?.into_iter();
        let mut split = c.utf8("split")?.into_iter();
        let mut service = c.utf8("service")?.into_iter();
        let mut arm = c.utf8("arm")?.into_iter();
        let mut mode = c.utf8("mode")?.into_iter();
        let mut contract = c.utf8("contract")?.into_iter();
        let mut turn = c.u32("turn")?.into_iter();
        let mut turns = c.u32("turns")?.into_iter();
        let mut fld = c.utf8("field")?.into_iter();
        let mut field_index = c.u32("field_index")?.into_iter();
        let mut gold = c.utf8("gold")?.into_iter();
        let mut predicted = c.opt_utf8("predicted")?.into_iter();
        let mut correct = c.bool("correct")?.into_iter();
        let mut failure = c.opt_utf8("failure")?.into_iter();
        let mut request_id = c.utf8("request_id")?.into_iter();
        let mut prompt_key = c.utf8("prompt_key")?.into_iter();
        let mut legal = c.list_utf8("legal_values")?.into_iter();
        let mut probabilities = c.opt_list_f64("probabilities")?.into_iter();
        let mut prompt_tokens = c.u32("prompt_tokens")?.into_iter();
        let mut completion_tokens = c.u32("completion_tokens")?.into_iter();
        let mut latency_ms = c.f64("latency_ms")?.into_iter();
        let mut response = c.opt_utf8("response")?.into_iter();
        let mut error = c.opt_utf8("error")?.into_iter();
        let mut attempt = c.u64("attempt")?.into_iter();
        let mut out = Vec::with_capacity(c.len());
        for _ in 0..c.len() {
            let (a, m, k, sp): (String, String, String, String) = (
                next(&mut arm),
                next(&mut mode),
                next(&mut contract),
                next(&mut split),
            );
            let pert: Option<String> = next(&mut perturbation);
            let fail: Option<String> = next(&mut failure);
            out.push(FieldTurnRow(FieldTurn {
                model: next(&mut model),
                dialogue_id: next(&mut dialogue_id),
                base_dialogue_id: next(&mut base),
                perturbation: match pert {
                    None => None,
                    Some(p) => {
                        Some(Perturbation::parse(&p).ok_or_else(|| bad("perturbation", &p))?)
                    }
                },
                split: DialogueSplit::parse(&sp).ok_or_else(|| bad("split", &sp))?,
                service: next(&mut service),
                spec: DialogueSpec {
                    arm: DialogueArm::parse(&a).ok_or_else(|| bad("arm", &a))?,
                    mode: PriorMode::parse(&m).ok_or_else(|| bad("mode", &m))?,
                    contract: DialogueContract::parse(&k).ok_or_else(|| bad("contract", &k))?,
                },
                turn: next(&mut turn),
                turns: next(&mut turns),
                field: next(&mut fld),
                field_index: next(&mut field_index),
                gold: next(&mut gold),
                predicted: next(&mut predicted),
                correct: next(&mut correct),
                failure: match fail {
                    None => None,
                    Some(f) => Some(FieldFailure::parse(&f).ok_or_else(|| bad("failure", &f))?),
                },
                request_id: next(&mut request_id),
                prompt_key: next(&mut prompt_key),
                legal_values: next(&mut legal),
                probabilities: next::<Option<Vec<f64>>>(&mut probabilities).unwrap_or_default(),
                prompt_tokens: next(&mut prompt_tokens),
                completion_tokens: next(&mut completion_tokens),
                latency_ms: next(&mut latency_ms),
                response: next(&mut response),
                error: next(&mut error),
                attempt: next(&mut attempt),
            }));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_through_arrow() {
        let row = FieldTurn {
            dialogue_id: "d:paraphrase".into(),
            base_dialogue_id: "d".into(),
            perturbation: Some(Perturbation::Paraphrase),
            split: DialogueSplit::Test,
            service: "Restaurants".into(),
            spec: DialogueSpec {
                arm: DialogueArm::Serial,
                mode: PriorMode::Rollout,
                contract: DialogueContract::Generated,
            },
            turn: 2,
            turns: 4,
            field: "price_range".into(),
            field_index: 1,
            gold: "cheap".into(),
            predicted: None,
            correct: false,
            failure: Some(FieldFailure::ExtraKeys),
            request_id: "r".into(),
            prompt_key: "k".into(),
            probabilities: vec![],
            legal_values: vec!["UNSET".into(), "cheap".into()],
            model: "m".into(),
            prompt_tokens: 10,
            completion_tokens: 3,
            latency_ms: 1.5,
            response: Some("{}".into()),
            error: None,
            attempt: 1_764_000_000_000,
        };
        let mut scored = row.clone();
        scored.spec.contract = DialogueContract::Scored;
        scored.probabilities = vec![0.25, 0.75];
        scored.predicted = Some("cheap".into());
        scored.correct = true;
        scored.failure = None;
        scored.perturbation = None;
        let rows = vec![FieldTurnRow(row), FieldTurnRow(scored)];
        let batch = FieldTurnRow::to_batch(&rows).unwrap();
        assert_eq!(FieldTurnRow::from_batch(&batch).unwrap(), rows);
    }
}
