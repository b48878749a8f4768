//! Table D13: "Equal-length weighting narrows the lexical SCR difference between cohorts.
//! Accuracy and SCR (%) have 95% item bootstrap intervals. Equal length weights preserve each
//! cohort's vocabulary and candidate difficulty." Columns: Population, Mixture, Native EM,
//! Serial EM, SCR.
//!
//! The original lexical row is Table 1's code panel (`config/panels/table1-code.toml`, Native
//! against Serial/Full/code on 384 lexical items) under D.15's equal-length mixture ("each
//! length weight 1/6 and each item 1/(6 n_L)"): the run's `*_equal_length` metric rows. The
//! paper's "New lexical" rows come from D.15's independent cohort of 2,347 targets, which the
//! paper does not publish and this project does not build; they are printed as the paper's,
//! with no row of ours.

use c2s_stats::MetricRow;

use super::paper::PaperTable;
use super::{differences, pp_diff, run_of, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{estimate, MetricIndex};

type Printed = (f64, f64, f64);

/// Table D13 as printed: population, mixture, Native EM, Serial EM, SCR (%).
pub static PAPER: PaperTable<(String, String, [Printed; 3])> = PaperTable::new("tableD13");

/// The metrics of one row, in the table's column order.
const METRICS: [&str; 3] = [
    "native_em_equal_length",
    "serial_em_equal_length",
    "scr_equal_length",
];

/// One of our rows: a model's original lexical population under equal-length weights.
#[derive(Debug, Clone, PartialEq)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// Native EM, Serial EM and SCR under equal-length weights, each `value [low, high]` in
    /// percent.
    pub cells: Vec<String>,
    /// The same three estimates as fractions, for the differences; `None` when undefined.
    pub values: [Option<f64>; 3],
}

/// Our rows from the code panel's metric rows: its lexical paired groups.
pub fn our_rows(rows: &[MetricRow]) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    index
        .paired_groups()
        .into_iter()
        .filter(|g| g.domain == "lexical")
        .map(|g| OurRow {
            model: g.model.clone(),
            cells: METRICS
                .iter()
                .map(|m| estimate(index.get(&g, None, m), None))
                .collect(),
            values: METRICS.map(|m| index.value(&g, None, m)),
        })
        .collect()
}

fn header() -> Vec<String> {
    [
        "Model",
        "Population",
        "Mixture",
        "Native EM",
        "Serial EM",
        "SCR",
    ]
    .map(String::from)
    .to_vec()
}

/// Table D13's document: our Original lexical, equal-length rows, the paper's rows as
/// printed, and ours minus the paper's Original lexical row.
pub fn layout(ours: &[OurRow]) -> anyhow::Result<Doc> {
    let paper_rows = PAPER.rows()?;
    let mut doc = Doc::new("Table D13: Lexical cohorts under equal-length weighting");
    doc.p(
        "Accuracy and SCR (%) have 95% item bootstrap intervals. Equal length weights \
         preserve each cohort's vocabulary and candidate difficulty.",
    );
    doc.h(2, "This run");
    doc.table(Table {
        text_columns: 3,
        header: header(),
        rows: ours
            .iter()
            .map(|r| {
                let mut row = vec![
                    r.model.clone(),
                    "Original lexical".to_string(),
                    "Equal length".to_string(),
                ];
                row.extend(r.cells.iter().cloned());
                row
            })
            .collect(),
        notes: vec![
            "Native against Serial/Full/code on the lexical items of table1-code, each length \
             weighted equally."
                .into(),
        ],
    });
    doc.h(2, "The paper (Table D13, Jev)");
    doc.table(Table {
        text_columns: 3,
        header: header(),
        rows: paper_rows
            .iter()
            .map(|(population, mixture, values)| {
                let mut row = vec![
                    "Jev".to_string(),
                    population.to_string(),
                    mixture.to_string(),
                ];
                row.extend(
                    values
                        .iter()
                        .map(|(v, lo, hi)| format!("{v:.1} [{lo:.1}, {hi:.1}]")),
                );
                row
            })
            .collect(),
        notes: vec![
            "New lexical: D.15's independent cohort of 2,347 targets, not built here.".into(),
        ],
    });
    let (_, mut diff) = differences(
        &mut doc,
        ["Jev"],
        "Jev",
        2,
        &["Model", "Paper row", "Δ Native EM", "Δ Serial EM", "Δ SCR"],
    );
    let Some((_, _, printed)) = paper_rows.iter().find(|(p, _, _)| p == "Original lexical") else {
        anyhow::bail!("exhibits/tableD13.tsv: no Original lexical row")
    };
    for r in ours {
        let mut row = vec![r.model.clone(), "Jev original lexical, equal".to_string()];
        row.extend(
            r.values
                .iter()
                .zip(printed.iter())
                .map(|(v, p)| pp_diff(*v, p.0)),
        );
        diff.rows.push(row);
    }
    doc.table(diff);
    Ok(doc)
}

/// Table D13 from the `table1-code` panel's run.
pub fn document(runs: &[PanelRun]) -> anyhow::Result<Doc> {
    let run = run_of(runs, "table1-code")?.load()?;
    layout(&our_rows(&run.metric_rows()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(metric: &str, value: f64) -> MetricRow {
        MetricRow {
            value: Some(value),
            ci_low: Some(value - 0.01),
            ci_high: Some(value + 0.01),
            ..MetricRow::empty(
                0,
                "m",
                "lexical",
                None,
                "Native/code vs Serial/Full/code",
                metric,
            )
        }
    }

    /// Table D13's original row is Table 1's Jev lexical row reweighted: the original
    /// population holds 64 items per length, so the equal-length SCR equals Table 1's 2.1.
    #[test]
    fn the_original_row_matches_table1s_jev_lexical_row() {
        let jev = super::super::table1::PAPER
            .rows()
            .unwrap()
            .iter()
            .find(|r| r.model == "Jev" && r.domain == "lexical")
            .expect("Jev lexical");
        assert_eq!(jev.scr.0, PAPER.rows().unwrap()[0].2[2].0);
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let rows = vec![
            row("both", 0.1),
            row("native_em_equal_length", 0.9),
            row("serial_em_equal_length", 0.1),
            row("scr_equal_length", 0.11),
        ];
        let ours = our_rows(&rows);
        assert_eq!(ours.len(), 1);
        let md = layout(&ours).unwrap().markdown();
        for want in [
            "| Model | Population | Mixture | Native EM | Serial EM | SCR |",
            "| m | Original lexical | Equal length | 90.0 [89.0, 91.0] | 10.0 [9.0, 11.0] | 11.0 [10.0, 12.0] |",
            "| Jev | New lexical | Source | 99.2 [98.8, 99.5] | 0.6 [0.3, 0.9] | 0.6 [0.3, 0.9] |",
            "| m | Jev original lexical, equal | −9.5 | +7.9 | +8.9 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
