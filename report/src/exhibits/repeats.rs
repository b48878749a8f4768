//! Table D2 (D.2), from the `repeats` panel: three identical Native requests and Serial
//! trajectories per parent (arms without suffix, `/r1`, `/r2`), each repeat paired within
//! itself; beside it, the parents whose three Native choices agree and the largest spread of
//! Native's chosen-option probability ("choice stability and probability stability have
//! distinct endpoints").

use std::collections::BTreeMap;

use c2s_records::{Arm, Trajectory};
use c2s_stats::MetricRow;
use serde::Serialize;

use super::engine::Frame;
use super::table1::domain_rank;
use super::{paper_domain, run_of, PanelRun};
use crate::tables::MetricIndex;

/// Identical requests per parent (D.2's three repeats).
pub const REPEATS: usize = 3;

/// The repeat of an arm label (`…/r2` → 2; no suffix → 0).
pub fn repeat_of(arm: &str) -> usize {
    arm.rsplit_once("/r")
        .and_then(|(_, k)| k.parse::<usize>().ok())
        .unwrap_or(0)
}

/// A metric row's numerator / denominator, where it has both.
pub(super) fn counts(row: Option<&MetricRow>) -> Option<(u64, u64)> {
    row.and_then(|r| Some((r.numerator?, r.denominator?)))
}

/// One of our rows: a (model, domain).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// Native correct / items, per repeat.
    pub native: [Option<(u64, u64)>; REPEATS],
    /// Serial retained / Native correct, per repeat.
    pub retained: [Option<(u64, u64)>; REPEATS],
    /// Parents whose Native outputs agree across every repeat, of the parents with all.
    pub agree: (u64, u64),
    /// The largest spread (max − min) of Native's chosen-option probability across repeats.
    pub probability_spread: Option<f64>,
}

/// Our rows per (model, domain): each repeat's paired counts from the metric rows, and
/// choice agreement and probability spread from the Native trajectories.
pub fn our_rows(rows: &[MetricRow], trajectories: &[Trajectory]) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    let mut out: BTreeMap<(String, String), OurRow> = BTreeMap::new();
    for g in index.paired_groups() {
        let Some((native, _)) = g.comparison.split_once(" vs ") else {
            continue;
        };
        let k = repeat_of(native);
        if k >= REPEATS {
            continue;
        }
        let row = out
            .entry((g.model.clone(), g.domain.clone()))
            .or_insert_with(|| OurRow {
                model: g.model.clone(),
                domain: paper_domain(&g.domain).to_string(),
                ..OurRow::default()
            });
        row.native[k] = counts(index.get(&g, None, "native_em"));
        row.retained[k] = counts(index.get(&g, None, "scr"));
    }
    // Native's choices and chosen probabilities per parent and repeat.
    type Choices = [Option<(String, Option<f64>)>; REPEATS];
    let mut choices: BTreeMap<(String, String, String), Choices> = BTreeMap::new();
    for t in trajectories {
        if t.arm.kind() != Arm::Native {
            continue;
        }
        let k = repeat_of(&t.arm);
        if k >= REPEATS {
            continue;
        }
        let p = t.steps.first().and_then(|s| s.chosen_probability);
        choices
            .entry((
                t.model.clone(),
                t.domain.as_str().to_string(),
                t.item_id.clone(),
            ))
            .or_default()[k] = Some((t.output.clone(), p));
    }
    for ((model, domain, _), c) in choices {
        let Some(row) = out.get_mut(&(model, domain)) else {
            continue;
        };
        let Some(c) = c.into_iter().collect::<Option<Vec<_>>>() else {
            continue;
        };
        row.agree.1 += 1;
        row.agree.0 += u64::from(c.iter().all(|x| x.0 == c[0].0));
        let ps: Vec<f64> = c.iter().filter_map(|x| x.1).collect();
        if ps.len() == REPEATS {
            let spread = ps.iter().copied().fold(f64::MIN, f64::max)
                - ps.iter().copied().fold(f64::MAX, f64::min);
            row.probability_spread = Some(row.probability_spread.map_or(spread, |s| s.max(spread)));
        }
    }
    let mut rows: Vec<OurRow> = out.into_values().collect();
    rows.sort_by_cached_key(|r| (r.model.clone(), domain_rank(&r.domain), r.domain.clone()));
    rows
}

/// Table D2 from the `repeats` panel's run.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "repeats")?.load()?;
    let ours = our_rows(&run.metric_rows()?, &run.trajectories);
    Ok(Frame::new().rows("ours", &ours))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{laid_out, paired_rows};

    #[test]
    fn repeats_are_read_from_labels() {
        assert_eq!(repeat_of("Native/code"), 0);
        assert_eq!(repeat_of("Serial/Full/code/r2"), 2);
        assert_eq!(repeat_of("Native/string"), 0);
    }

    #[test]
    fn the_layout_has_the_papers_columns_and_rows() {
        let mut rows = Vec::new();
        for (k, joint) in [[3, 1, 0, 4], [2, 2, 1, 3], [3, 1, 0, 4]]
            .iter()
            .enumerate()
        {
            let suffix = if k == 0 {
                String::new()
            } else {
                format!("/r{k}")
            };
            rows.extend(
                paired_rows("m", "arithmetic", *joint, (0.0, 1.0))
                    .into_iter()
                    .map(|r| MetricRow {
                        comparison: format!("Native/code{suffix} vs Serial/Full/code{suffix}"),
                        ..r
                    }),
            );
        }
        let md = laid_out(
            "tableD2",
            Frame::new().rows("ours", &our_rows(&rows, &[])),
            "Jev",
        );
        for want in [
            "| Domain | Native correct | Serial 0 | Serial 1 | Serial 2 |",
            "| math | 4/8 | 3/4 | 2/4 | 3/4 |",
            "| math | 35/36 | 12/35 | 13/35 | 12/35 |",
            "Native correct per repeat 4/8, 4/8, 4/8",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
