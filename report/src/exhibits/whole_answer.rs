//! Table B1 (B.1): Native against whole-answer generation, per model and domain, from
//! `config/panels/whole-answer.toml`'s pairing Native/code vs WholeGenerate/string/max64:
//! Joint = both correct, Lost = Native only, Gained = whole generation only; Serial
//! legal-code EM (the Native vs Serial pairing) goes in a note.

use std::collections::BTreeMap;

use c2s_stats::MetricRow;
use serde::Serialize;

use super::engine::Frame;
use super::{paper_domain, run_of, PanelRun};
use crate::tables::MetricIndex;

/// One of our rows: a model and domain's five counts over `n` items, and Serial's EM.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as Table B1 prints it ([`capitalized`]).
    pub domain: String,
    /// Native, Whole, Joint, Lost, Gained; `None` when a joint count is missing.
    pub counts: Option<[u64; 5]>,
    /// Paired items the counts are over (0 when unknown).
    pub n: u64,
    /// Serial legal-code EM (a fraction), for the note; `None` without a Serial pairing.
    pub serial_em: Option<f64>,
}

/// Whether a pairing's second arm starts with `prefix` (`Serial/`, `WholeGenerate/`).
pub(super) fn pairs_with(comparison: &str, prefix: &str) -> bool {
    (comparison.split_once(" vs ")).is_some_and(|(_, s)| s.starts_with(prefix))
}

/// Our rows: one per (model, domain) pairing of Native with WholeGenerate.
pub fn our_rows(rows: &[MetricRow]) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    let groups = index.paired_groups();
    groups
        .iter()
        .filter(|g| pairs_with(&g.comparison, "WholeGenerate/"))
        .map(|g| {
            let n = |m: &str| index.get(g, None, m).and_then(|r| r.numerator);
            let counts = match (n("both"), n("native_only"), n("serial_only")) {
                (Some(both), Some(lost), Some(gained)) => {
                    Some([both + lost, both + gained, both, lost, gained])
                }
                _ => None,
            };
            let serial = (groups.iter()).find(|s| {
                s.model == g.model && s.domain == g.domain && pairs_with(&s.comparison, "Serial/")
            });
            OurRow {
                model: g.model.clone(),
                domain: capitalized(&g.domain),
                counts,
                n: index
                    .get(g, None, "both")
                    .and_then(|r| r.denominator)
                    .unwrap_or(0),
                serial_em: serial.and_then(|s| index.value(s, None, "serial_em")),
            }
        })
        .collect()
}

/// A bank's domain as Tables B1 and D4 print it (`Arithmetic`, `Lexical`).
pub(super) fn capitalized(domain: &str) -> String {
    match paper_domain(domain) {
        "math" => "Arithmetic".into(),
        "lexical" => "Lexical".into(),
        other => other.into(),
    }
}

/// Table B1's rows: ours (`ours`) and, for each model's note, its rows (`by_model`).
pub fn frame(ours: &[OurRow]) -> Frame {
    let mut by_model: BTreeMap<&str, Vec<&OurRow>> = BTreeMap::new();
    for r in ours {
        by_model.entry(&r.model).or_default().push(r);
    }
    Frame::new().rows("ours", ours).var("by_model", by_model)
}

/// Table B1's rows from the `whole-answer` panel's run.
pub fn document(runs: &[PanelRun]) -> anyhow::Result<Frame> {
    let rows = run_of(runs, "whole-answer")?.load()?.metric_rows()?;
    Ok(frame(&our_rows(&rows)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{laid_out, paired_rows};

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
        let md = laid_out("tableB1", frame(&our_rows(&rows)), "Qwen3-8B");
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
