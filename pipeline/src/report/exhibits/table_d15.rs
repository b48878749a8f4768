//! Table D15, from Table 1's panels (`table1-code`, `table1-direct`) and the semantic bridge
//! (`semantic-bridge`, its named and binary fields): each paired group's joint counts, SCR,
//! ∆ = SCR − Serial EM ("Jev math … 33.0 +0.9": 123/373 − 123/384) and the gain rate, Serial
//! only / (Serial only + neither).

use c2s_stats::MetricRow;
use serde::Serialize;

use super::engine::Frame;
use super::{paper_domain, PanelRun};
use crate::report::tables::MetricIndex;

/// The source of a panel's rows as exhibits/tableD15.tsv names it: Table 1's `code` or
/// `direct` panel, or the semantic `bridge`.
fn source_of(panel: &str) -> anyhow::Result<&'static str> {
    match panel {
        "table1-code" => Ok("code"),
        "table1-direct" => Ok("direct"),
        "semantic-bridge" => Ok("bridge"),
        other => anyhow::bail!("`{other}` is not a panel of Table D15"),
    }
}

/// The "Task" cell of a group of `source` (`None`: not one of the table's tasks).
fn task(source: &str, domain: &str) -> Option<String> {
    match (source, domain) {
        ("bridge", "semantic_named") => Some("named fields".into()),
        ("bridge", "semantic_binary") => Some("binary fields".into()),
        ("bridge", _) => None,
        (_, d) => Some(paper_domain(d).to_string()),
    }
}

/// One of our rows: a paired (model, task) group of one source.
#[derive(Debug, Clone, Serialize)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The panel the row is from: `code`, `direct` or `bridge`.
    pub source: &'static str,
    /// The "Task" cell: `math`, `lexical`, `named fields` or `binary fields`.
    pub task: String,
    /// Paired items; `None` without the joint table.
    pub items: Option<u64>,
    /// Joint counts: both / Native only / Serial only / neither (`None` where missing).
    pub joint: [Option<u64>; 4],
    /// SCR as a fraction (both / Native correct); `None` with no Native-correct item.
    pub scr: Option<f64>,
    /// Serial EM as a fraction over all paired items.
    pub serial_em: Option<f64>,
    /// Serial success on Native-wrong items, as a fraction; `None` when Native is never wrong.
    pub gain_rate: Option<f64>,
}

/// Our rows of one panel's metric rows.
pub fn our_rows(rows: &[MetricRow], source: &'static str) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    (index.paired_groups().into_iter())
        .filter_map(|g| {
            let numerator = |m: &str| index.get(&g, None, m).and_then(|r| r.numerator);
            Some(OurRow {
                model: g.model.clone(),
                source,
                task: task(source, &g.domain)?,
                items: index.get(&g, None, "both").and_then(|r| r.denominator),
                joint: ["both", "native_only", "serial_only", "neither"].map(numerator),
                scr: index.value(&g, None, "scr"),
                serial_em: index.value(&g, None, "serial_em"),
                gain_rate: index.value(&g, None, "gain_rate"),
            })
        })
        .collect()
}

/// Read the three panels' runs: our rows.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let mut ours = Vec::new();
    for run in runs {
        ours.extend(our_rows(&run.load()?.metric_rows()?, source_of(run.panel)?));
    }
    Ok(Frame::new().rows("ours", &ours))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::testing::{laid_out, paired_rows};

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let mut rows = paired_rows("m", "arithmetic", [2, 3, 1, 2], (0.1, 0.7));
        rows.push(MetricRow {
            value: Some(1.0 / 3.0),
            numerator: Some(1),
            denominator: Some(3),
            ..MetricRow::empty(
                0,
                "m",
                Some(c2s_records::Domain::Arithmetic),
                None,
                "Native/code vs Serial/Full/code",
                c2s_records::Metric::GainRate,
            )
        });
        let ours = our_rows(&rows, "code");
        assert_eq!(ours.len(), 1);
        // SCR 2/5 = 40.0; Serial EM 3/8 = 37.5; ∆ +2.5; gain 1/3.
        let md = laid_out("tableD15", Frame::new().rows("ours", &ours), "Jev");
        for want in [
            "| Model / interface | Task | Items | Joint counts | SCR (%) | ∆ | Gain rate (%) |",
            "| m / code | math | 8 | 2/3/1/2 | 40.0 | +2.5 | 33.3 |",
            "| Jev | math | 384 | 123/250/0/11 | 33.0 | +0.9 | 0.0 |",
            "| Qwen3-8B | binary fields | 128 | 1/18/19/90 | 5.3 | −10.4 | 17.4 |",
            "| m / code | math | Jev / math | +7.0 | +1.6 | +33.3 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        // The bridge's rows keep only its two representations.
        let bridge = paired_rows("m", "semantic_named", [1, 1, 1, 1], (0.0, 1.0));
        let ours = our_rows(&bridge, "bridge");
        assert_eq!(ours[0].task, "named fields");
        assert!(our_rows(
            &paired_rows("m", "arithmetic", [1, 1, 1, 1], (0.0, 1.0)),
            "bridge"
        )
        .is_empty());
    }
}
