//! Figure 2's numbers: "High Native accuracy does not guarantee Serial retention. Across 64
//! paired items per domain and length, (a,c) show near-ceiling Native accuracy for Jev and
//! direct-output Qwen3.5-27B. In (b,d), Jev's arithmetic retention declines with length while
//! lexical retention remains near zero … SCR conditions on Native-correct items; bands
//! indicate 95% item-bootstrap intervals."
//!
//! Panels (a, b) arithmetic and (c, d) lexical: Native accuracy and SCR per target length for
//! each model / interface of Table 1 (`table1-code`, `table1-direct`). The paper plots these
//! and prints no numbers; ours are the per-length rows of the runs' metrics with their
//! intervals († an exact interval of a zero-success SCR cell, as in Table 1).

use super::table1::Interface;
use super::{paper_domain, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{estimate, ratio, scr_cell, MetricIndex, UNDEFINED};
use c2s_stats::MetricRow;

/// One row: a series (model / interface) at one length.
#[derive(Debug, Clone, PartialEq)]
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

/// Figure 2's numbers, one table per domain (the figure's two rows of panels).
pub fn layout(ours: &[LengthRow]) -> Doc {
    let mut doc = Doc::new("Figure 2: Native accuracy and SCR by target length (numbers)");
    doc.p(
        "Native accuracy (a, c) and SCR (b, d) per target length for each model and interface; \
         SCR conditions on Native-correct items. The paper plots these with 95% \
         item-bootstrap bands and prints no numbers.",
    );
    for (panels, domain) in [("(a, b)", "math"), ("(c, d)", "lexical")] {
        let mut rows: Vec<&LengthRow> = ours.iter().filter(|r| r.domain == domain).collect();
        if rows.is_empty() {
            continue;
        }
        rows.sort_by(|a, b| (&a.series, a.length).cmp(&(&b.series, b.length)));
        doc.h(2, format!("{panels} {domain}"));
        doc.table(Table {
            text_columns: 2,
            header: [
                "Model / interface",
                "Length",
                "Items",
                "Native EM [95% CI]",
                "SCR count",
                "SCR [95% CI]",
            ]
            .map(String::from)
            .to_vec(),
            rows: rows
                .iter()
                .map(|r| {
                    let mut row = vec![r.series.clone(), r.length.to_string()];
                    row.extend(r.cells.iter().cloned());
                    row
                })
                .collect(),
            notes: vec![
                "Intervals: the run's length-stratified item bootstrap; † an exact two-sided \
                 interval of a zero-success SCR cell; – an empty denominator."
                    .into(),
            ],
        });
    }
    doc
}

/// Read Table 1's panels and lay out Figure 2's numbers.
pub fn document(runs: &[PanelRun]) -> anyhow::Result<Doc> {
    let mut ours = Vec::new();
    for run in runs {
        ours.extend(our_rows(
            &run.load()?.metric_rows()?,
            Interface::of_panel(run.panel)?,
        ));
    }
    Ok(layout(&ours))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::testing::paired_rows;

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
        let md = layout(&ours).markdown();
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
