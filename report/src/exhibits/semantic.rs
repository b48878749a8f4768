//! Tables 2 and B2, the semantic bridge (A.5, B.4), from `config/panels/semantic-bridge.toml`:
//! 128 fact records rendered as named yes/no fields (`semantic_named`; Table 2 and B2) and as
//! binary strings (`semantic_binary`; B2 only), Native against Serial/Full on each.

use c2s_stats::MetricRow;
use minijinja::Value;
use serde::Serialize;

use super::engine::Frame;
use super::{paper, run_of, PanelRun};
use crate::tables::{count, ratio, scr_cell, MetricIndex};

/// A representation of the bridge, as the paper names it.
fn representation(domain: &str) -> Option<&'static str> {
    match domain {
        "semantic_named" => Some("named"),
        "semantic_binary" => Some("binary"),
        _ => None,
    }
}

/// Table 2 prints its models in this order (Jev, Qwen3-8B, StartLux).
const TABLE2_ORDER: [&str; 3] = ["Jev", "Qwen3-8B", "StartLux"];

/// One of our rows: a (model, representation) paired group.
#[derive(Debug, Clone, Serialize)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// `named` (`semantic_named`) or `binary` (`semantic_binary`).
    pub representation: &'static str,
    /// Joint counts as printed: both / Native only / Serial only / neither.
    pub joint: String,
    /// SCR count as printed: retained / Native correct.
    pub scr_count: String,
    /// SCR with its interval in percent, as printed († exact, ‡ dropped draws).
    pub scr_ci: String,
    /// Native EM as a fraction over the 128 records; `None` when undefined.
    pub native_em: Option<f64>,
    /// Serial EM as a fraction over the 128 records; `None` when undefined.
    pub serial_em: Option<f64>,
    /// SCR as a fraction; `None` with no Native-correct record.
    pub scr: Option<f64>,
}

/// Our rows: one per paired group of the bridge's two domains.
pub fn our_rows(rows: &[MetricRow]) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    index
        .paired_groups()
        .into_iter()
        .filter_map(|g| {
            let representation = representation(&g.domain)?;
            Some(OurRow {
                model: g.model.clone(),
                representation,
                joint: ["both", "native_only", "serial_only", "neither"]
                    .map(|m| count(index.get(&g, None, m)))
                    .join("/"),
                scr_count: ratio(index.get(&g, None, "scr")),
                scr_ci: scr_cell(&index, &g, None),
                native_em: index.value(&g, None, "native_em"),
                serial_em: index.value(&g, None, "serial_em"),
                scr: index.value(&g, None, "scr"),
            })
        })
        .collect()
}

/// Table 2's rows: our named rows, and Table B2's printed named rows in Table 2's order.
pub fn table2_frame(ours: &[OurRow]) -> anyhow::Result<Frame> {
    let printed = paper::records("tableB2")?;
    let is = |p: &Value, key: &str, value: &str| {
        p.get_attr(key).is_ok_and(|v| v.as_str() == Some(value))
    };
    let table2: Vec<&Value> = (TABLE2_ORDER.iter())
        .filter_map(|m| {
            (printed.iter()).find(|p| is(p, "model", m) && is(p, "representation", "named"))
        })
        .collect();
    let named: Vec<&OurRow> = ours
        .iter()
        .filter(|r| r.representation == "named")
        .collect();
    Ok(Frame::new().rows("ours", &named).rows("printed", &table2))
}

/// Table 2 from the `semantic-bridge` panel's named rows.
pub fn table2(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let rows = run_of(runs, "semantic-bridge")?.load()?.metric_rows()?;
    table2_frame(&our_rows(&rows))
}

/// Table B2 from the `semantic-bridge` panel's named and binary rows.
pub fn table_b2(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let rows = run_of(runs, "semantic-bridge")?.load()?.metric_rows()?;
    Ok(Frame::new().rows("ours", &our_rows(&rows)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{laid_out, paired_rows};

    #[test]
    fn tables_2_and_b2_have_the_papers_columns_rows_and_differences() {
        let mut rows = paired_rows("m", "semantic_named", [60, 20, 10, 38], (0.5, 0.9));
        rows.extend(paired_rows(
            "m",
            "semantic_binary",
            [40, 20, 30, 38],
            (0.5, 0.8),
        ));
        let ours = our_rows(&rows);
        assert_eq!(ours.len(), 2);
        let md = laid_out("table2", table2_frame(&ours).unwrap(), "Qwen3.5-27B");
        for want in [
            "| Model | Native/Serial EM | Joint counts | SCR |",
            "| m | 62.5/54.7 | 60/20/10/38 | 75.0 |",
            "| Jev | 89.8/90.6 | 111/4/5/8 | 96.5 |",
            "| Qwen3-8B | 21.9/28.9 | 6/22/31/69 | 21.4 |",
            "| m | named | Jev named | −27.3 | −35.9 | −21.5 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        let md = laid_out("tableB2", Frame::new().rows("ours", &ours), "StartLux");
        for want in [
            "| Model | Representation | Native EM | Serial EM | SCR count | SCR [95% CI] |",
            "| m | binary | 46.9 | 54.7 | 40/60 | 66.7 [50.0, 80.0] |",
            "| StartLux | binary | 39.1 | 29.7 | 25/50 | 50.0 [40.4, 60.5] |",
            "| m | binary | StartLux binary | +7.8 | +25.0 | +16.7 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert!(!md.contains("Jev named |"), "--against StartLux only\n{md}");
    }
}
