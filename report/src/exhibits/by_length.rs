//! Figure 2's numbers (the paper plots them and prints none): per domain ((a, b) math, (c, d)
//! lexical), model / interface of Table 1's panels (`table1-code`, `table1-direct`) and target
//! length, the runs' per-length Native EM and SCR rows with their intervals.

use c2s_stats::MetricRow;
use serde::Serialize;

use super::engine::Frame;
use super::table1::{domain_rank, Interface};
use super::{paper_domain, PanelRun};
use crate::tables::{estimate, ratio, scr_cell, MetricIndex, UNDEFINED};

/// One row: a series (model / interface) at one length.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LengthRow {
    /// The domain as the paper prints it (`math`: panels a, b; `lexical`: panels c, d).
    pub domain: String,
    /// `MODEL (code)` or `MODEL (direct)`, the figure's series.
    pub series: String,
    /// Target length L.
    pub length: u32,
    /// Items, Native EM [95% CI], SCR count and SCR [95% CI] (percent), as printed.
    pub cells: Vec<String>,
}

/// Our rows of one Table 1 panel's metric rows.
pub fn our_rows(rows: &[MetricRow], interface: Interface) -> Vec<LengthRow> {
    let index = MetricIndex::new(rows);
    let mut out = Vec::new();
    for g in index.paired_groups() {
        let series = format!("{} ({})", g.model, interface.label());
        for length in index.lengths(&g, "both") {
            let l = Some(length);
            out.push(LengthRow {
                domain: paper_domain(&g.domain).to_string(),
                series: series.clone(),
                length,
                cells: vec![
                    index
                        .get(&g, l, "both")
                        .and_then(|r| r.denominator)
                        .map_or_else(|| UNDEFINED.to_string(), |n| n.to_string()),
                    estimate(index.get(&g, l, "native_em"), None),
                    ratio(index.get(&g, l, "scr")),
                    scr_cell(&index, &g, l),
                ],
            });
        }
    }
    out
}

/// Figure 2's rows in its order: the math panels' (a, b), then the lexical ones' (c, d), each
/// by series and length.
pub fn frame(mut ours: Vec<LengthRow>) -> Frame {
    ours.retain(|r| domain_rank(&r.domain) < 2);
    let key = |r: &LengthRow| (domain_rank(&r.domain), r.series.clone(), r.length);
    ours.sort_by_cached_key(key);
    Frame::new().rows("ours", &ours)
}

/// Figure 2's rows from Table 1's panels.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    Ok(frame(super::table1::per_interface(runs, our_rows)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{laid_out, paired_rows};

    #[test]
    fn the_layout_has_one_row_per_series_and_length() {
        let mut rows = Vec::new();
        for (length, joint) in [(3, [3, 1, 0, 0]), (4, [0, 2, 0, 2])] {
            rows.extend(
                paired_rows("m", "arithmetic", joint, (0.2, 0.9))
                    .into_iter()
                    .map(|r| MetricRow {
                        length: Some(length),
                        ..r
                    }),
            );
        }
        rows.extend(paired_rows("m", "arithmetic", [3, 3, 0, 2], (0.1, 0.8)));
        let ours = our_rows(&rows, Interface::Direct);
        assert_eq!(ours.len(), 2, "{ours:?}");
        let md = laid_out("figure2", frame(ours), "Jev");
        for want in [
            "## (a, b) math",
            "| Model / interface | Length | Items | Native EM [95% CI] | SCR count | SCR [95% CI] |",
            "| m (direct) | 3 | 4 | 100.0 | 3/4 | 75.0 [20.0, 90.0] |",
            "| m (direct) | 4 | 4 | 50.0 | 0/2 | 0.0 [20.0, 90.0] |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert!(!md.contains("(c, d)"), "{md}");
    }
}
