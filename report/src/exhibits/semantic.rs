//! Tables 2 and B2, the semantic bridge (A.5, B.4), from `config/panels/semantic-bridge.toml`:
//! 128 fact records rendered as named yes/no fields (`semantic_named`; Table 2 and B2) and as
//! binary strings (`semantic_binary`; B2 only), Native against Serial/Full on each. Our rows
//! are declared in exhibits/table2.toml and tableB2.toml (`[[sources]]`); Table 2 prints Table
//! B2's named rows in its own order, which this module selects.

use minijinja::Value;

use super::engine::Frame;
use super::{paper, PanelRun};

/// Table 2 prints its models in this order (Jev, Qwen3-8B, StartLux).
const TABLE2_ORDER: [&str; 3] = ["Jev", "Qwen3-8B", "StartLux"];

/// Table 2's printed rows (`printed`): Table B2's named rows in Table 2's order.
pub fn table2(_runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let printed = paper::records("tableB2")?;
    let is = |p: &Value, key: &str, value: &str| {
        p.get_attr(key).is_ok_and(|v| v.as_str() == Some(value))
    };
    let table2: Vec<&Value> = (TABLE2_ORDER.iter())
        .filter_map(|m| {
            (printed.iter()).find(|p| is(p, "model", m) && is(p, "representation", "named"))
        })
        .collect();
    Ok(Frame::new().rows("printed", &table2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{declared, paired_rows, panel_metrics};

    #[test]
    fn tables_2_and_b2_have_the_papers_columns_rows_and_differences() {
        let mut rows = paired_rows("m", "semantic_named", [60, 20, 10, 38], (0.5, 0.9));
        rows.extend(paired_rows(
            "m",
            "semantic_binary",
            [40, 20, 30, 38],
            (0.5, 0.8),
        ));
        let panels = [panel_metrics("semantic-bridge", rows)];
        let md = declared(
            "table2",
            &panels,
            table2(&[], "Qwen3.5-27B").unwrap(),
            "Qwen3.5-27B",
        );
        for want in [
            "| Model | Native/Serial EM | Joint counts | SCR |",
            "| m | 62.5/54.7 | 60/20/10/38 | 75.0 |",
            "| Jev | 89.8/90.6 | 111/4/5/8 | 96.5 |",
            "| Qwen3-8B | 21.9/28.9 | 6/22/31/69 | 21.4 |",
            "| m | named | Jev named | −27.3 | −35.9 | −21.5 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        let md = declared("tableB2", &panels, Frame::new(), "StartLux");
        assert!(md.contains("| m | named | 62.5 | 54.7 | 60/80 |"), "{md}");
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
