//! Tables D5 and D6, candidate support (D.5), from the `support-union` panel: Serial under
//! Full support and under the position union, singletons filled without a call (UnionFill).
//! D5: the joint counts of the paired comparison Full vs UnionFill; D6: calls, forced
//! positions and candidate membership summed over the two arms' trajectories.

use std::collections::BTreeMap;

use c2s_records::{Membership, Trajectory};
use c2s_stats::MetricRow;
use serde::Serialize;

use super::engine::Frame;
use super::{paper_domain, run_of, PanelRun};
use crate::tables::MetricIndex;

/// Serial under Full support: every position queried over the full option set.
pub const FULL_ARM: &str = "Serial/Full/code";
/// Serial under the position union, singleton unions filled without a call.
pub const UNION_ARM: &str = "Serial/UnionFill/code";

/// One of our D5 rows: the four joint counts over `n` items.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct D5Row {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// Both wrong, recovered (Full wrong, Union correct), lost (Full correct, Union wrong),
    /// both correct; `None` when a joint count is missing.
    pub counts: Option<[u64; 4]>,
    /// Paired items the counts are over (0 when unknown).
    pub n: u64,
}

/// Our D5 rows: the joint counts of each (model, domain) pairing Full vs UnionFill.
pub fn d5_rows(rows: &[MetricRow]) -> Vec<D5Row> {
    let index = MetricIndex::new(rows);
    index
        .paired_groups()
        .into_iter()
        .filter(|g| g.comparison == format!("{FULL_ARM} vs {UNION_ARM}"))
        .map(|g| {
            let n = |m: &str| index.get(&g, None, m).and_then(|r| r.numerator);
            let joint = ["neither", "serial_only", "native_only", "both"].map(n);
            let counts =
                (joint.iter().all(Option::is_some)).then(|| joint.map(Option::unwrap_or_default));
            D5Row {
                model: g.model.clone(),
                domain: paper_domain(&g.domain).to_string(),
                counts,
                n: index
                    .get(&g, None, "both")
                    .and_then(|r| r.denominator)
                    .unwrap_or(0),
            }
        })
        .collect()
}

/// One of our D6 rows.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct D6Row {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// Recorded model requests of the Full arm, summed over its trajectories.
    pub full_calls: u64,
    /// Recorded model requests of the UnionFill arm, summed over its trajectories.
    pub union_calls: u64,
    /// Positions the UnionFill arm filled without a call (singleton unions).
    pub forced: u64,
    /// (candidate outputs, trajectories) of each arm.
    pub full_member: (u64, u64),
    /// UnionFill's outputs that are one of the eight candidates, of its trajectories.
    pub union_member: (u64, u64),
}

/// Our D6 rows: calls, forced positions and candidate membership summed from the Full and
/// UnionFill trajectories, per (model, domain).
pub fn d6_rows(trajectories: &[Trajectory]) -> Vec<D6Row> {
    let mut rows: BTreeMap<(String, String), D6Row> = BTreeMap::new();
    for t in trajectories {
        let full = t.arm == FULL_ARM;
        if !full && t.arm != UNION_ARM {
            continue;
        }
        let domain = paper_domain(t.domain.as_str()).to_string();
        let row = rows
            .entry((t.model.clone(), domain.clone()))
            .or_insert_with(|| D6Row {
                model: t.model.clone(),
                domain,
                ..D6Row::default()
            });
        let candidate = matches!(t.membership, Membership::Gold | Membership::OtherCandidate);
        let member = u64::from(candidate);
        if full {
            row.full_calls += u64::from(t.calls);
            row.full_member.0 += member;
            row.full_member.1 += 1;
        } else {
            row.union_calls += u64::from(t.calls);
            row.forced += u64::from(t.fills);
            row.union_member.0 += member;
            row.union_member.1 += 1;
        }
    }
    rows.into_values().collect()
}

/// Table D5 from the `support-union` panel's metric rows.
pub fn table_d5(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let rows = run_of(runs, "support-union")?.load()?.metric_rows()?;
    Ok(Frame::new().rows("ours", &d5_rows(&rows)))
}

/// Table D6 from the `support-union` panel's trajectories.
pub fn table_d6(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "support-union")?.load()?;
    Ok(Frame::new().rows("ours", &d6_rows(&run.trajectories)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{laid_out, paired_rows};

    #[test]
    fn the_layouts_have_the_papers_columns_rows_and_differences() {
        let rows: Vec<MetricRow> = paired_rows("m", "lexical", [2, 1, 3, 10], (0.0, 1.0))
            .into_iter()
            .map(|r| MetricRow {
                comparison: format!("{FULL_ARM} vs {UNION_ARM}"),
                ..r
            })
            .collect();
        let frame = Frame::new().rows("ours", &d5_rows(&rows));
        let md = laid_out("tableD5", frame, "Qwen3.5-27B");
        for want in [
            "| Model | Domain | Both wrong | Recovered | Lost | Both correct |",
            "| m | lexical | 10 | 3 | 1 | 2 |",
            "| StartLux | math | 274 | 103 | 3 | 4 |",
            "| m | lexical | Qwen3.5-27B lexical | +19.3 | −3.9 | −1.6 | −13.8 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        let ours = [D6Row {
            model: "m".into(),
            domain: "math".into(),
            full_calls: 44,
            union_calls: 16,
            forced: 28,
            full_member: (2, 8),
            union_member: (8, 8),
        }];
        let md = laid_out("tableD6", Frame::new().rows("ours", &ours), "Jev");
        for want in [
            "| Model | Domain | Full calls | Union calls | Forced | Full member | Union member |",
            "| m | math | 44 | 16 | 28 | 25.0 | 100.0 |",
            "| Jev | math | 2112 | 768 | 1344 | 33.9 | 100.0 |",
            "| m | math | Jev math | +0.00 | +0.00 | −8.9 | +0.0 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
