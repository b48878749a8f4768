//! Table B1 (B.1): Native against whole-answer generation, per model and domain, from
//! `config/panels/whole-answer.toml`'s pairing Native/code vs WholeGenerate/string/max64:
//! Joint = both correct, Lost = Native only, Gained = whole generation only (the rows declared
//! in exhibits/tableB1.toml, `[[sources]]`); Serial legal-code EM (the Native vs Serial
//! pairing) goes in a note, with each domain's items, per model.

use std::collections::BTreeMap;

use c2s_records::{comparison_arms, Arm, ArmSpec};
use c2s_stats::MetricRow;
use serde::Serialize;

use super::engine::Frame;
use super::{paper_domain, run_of, PanelRun};
use crate::tables::MetricIndex;

/// One domain of a model's note: its paired items and Serial's EM.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoteEntry {
    /// The domain as Table B1 prints it ([`capitalized`]).
    pub domain: String,
    /// Paired items of the WholeGenerate pairing (0 when unknown).
    pub n: u64,
    /// Serial legal-code EM (a fraction); `None` without a Serial pairing.
    pub serial_em: Option<f64>,
}

/// The kind of an arm label (`Serial/Full/code` → Serial); `None` for a string that is not
/// an arm label.
pub(super) fn kind_of(label: &str) -> Option<Arm> {
    ArmSpec::from_label(label).ok().map(|spec| spec.arm)
}

/// Whether a pairing's second arm is of `kind` (Serial, WholeGenerate).
pub(super) fn pairs_with(comparison: &str, kind: Arm) -> bool {
    comparison_arms(comparison).is_some_and(|(_, s)| kind_of(s) == Some(kind))
}

/// A bank's domain as Tables B1 and D4 print it (`Arithmetic`, `Lexical`).
pub(super) fn capitalized(domain: &str) -> String {
    match paper_domain(domain) {
        "math" => "Arithmetic".into(),
        "lexical" => "Lexical".into(),
        other => other.into(),
    }
}

/// Table B1's notes (`by_model`): each model's WholeGenerate pairings, their items and the
/// Serial EM of the same (model, domain).
pub fn notes(rows: &[MetricRow]) -> Frame {
    let index = MetricIndex::new(rows);
    let groups = index.paired_groups();
    let mut by_model: BTreeMap<&str, Vec<NoteEntry>> = BTreeMap::new();
    for g in (groups.iter()).filter(|g| pairs_with(&g.comparison, Arm::WholeGenerate)) {
        let serial = (groups.iter()).find(|s| {
            s.model == g.model && s.domain == g.domain && pairs_with(&s.comparison, Arm::Serial)
        });
        by_model.entry(&g.model).or_default().push(NoteEntry {
            domain: capitalized(&g.domain),
            n: (index.get(g, None, "both"))
                .and_then(|r| r.denominator)
                .unwrap_or(0),
            serial_em: serial.and_then(|s| index.value(s, None, "serial_em")),
        });
    }
    Frame::new().var("by_model", by_model)
}

/// Table B1's notes from the `whole-answer` panel's run.
pub fn document(runs: &[PanelRun]) -> anyhow::Result<Frame> {
    Ok(notes(&run_of(runs, "whole-answer")?.load()?.metric_rows()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{declared, paired_rows, panel_metrics};

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let mut rows: Vec<MetricRow> = paired_rows("m", "arithmetic", [4, 2, 6, 4], (0.0, 1.0))
            .into_iter()
            .map(|r| MetricRow {
                comparison: "Native/code vs WholeGenerate/string/max64".into(),
                ..r
            })
            .collect();
        rows.extend(paired_rows("m", "arithmetic", [0, 6, 0, 10], (0.0, 0.0)));
        let frame = notes(&rows);
        let md = declared(
            "tableB1",
            &[panel_metrics("whole-answer", rows)],
            frame,
            "Qwen3-8B",
        );
        for want in [
            "| Domain | Native | Whole | Joint | Lost | Gained |",
            "| Arithmetic | 6 | 10 | 4 | 2 | 6 |",
            "| Arithmetic | 59 | 181 | 41 | 18 | 140 |",
            "Items per domain: Arithmetic 16. Serial legal-code EM: Arithmetic 0.0%.",
            "| m | Arithmetic | +22.1 | +15.4 | +7.8 | +1.0 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
