//! Table 3 (E.3, D.8): Native, WholeGenerate, Position query (Serial, one character per
//! request) and PrefixContinue on `config/panels/table3.toml`, counted from the run's
//! trajectories per model: correct (strict string EM), valid and items per domain, and model
//! calls.

use std::collections::BTreeMap;

use c2s_records::{Domain, Trajectory};
use serde::Serialize;

use super::engine::Frame;
use super::{run_of, PanelRun};

/// Table 3's interfaces, in its order, with the arm each is run as.
pub const INTERFACES: [(&str, &str); 4] = [
    ("Native", "Native"),
    ("WholeGenerate", "WholeGenerate"),
    ("Position query", "Serial"),
    ("PrefixContinue", "PrefixContinue"),
];

/// Counts of one (interface, domain) cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Counts {
    /// Trajectories (items) of the interface in the domain.
    pub items: u64,
    /// Trajectories whose content is correct (EM).
    pub correct: u64,
    /// Trajectories with a valid output.
    pub valid: u64,
    /// Model calls summed over the trajectories.
    pub calls: u64,
}

/// One of our rows: a model's interface with its arithmetic and lexical counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The interface as Table 3 prints it (one of [`INTERFACES`]' names).
    pub interface: &'static str,
    /// The arithmetic items' counts.
    pub arithmetic: Counts,
    /// The lexical items' counts.
    pub lexical: Counts,
}

/// The index in [`INTERFACES`] of an arm label's interface (`Serial/Full/char` → Position
/// query); `None` for an arm Table 3 has no row for.
fn interface_of(arm: &str) -> Option<usize> {
    let kind = arm.split('/').next();
    INTERFACES.iter().position(|(_, a)| Some(*a) == kind)
}

/// Our rows from the panel's trajectories, per model in Table 3's interface order.
pub fn our_rows(trajectories: &[Trajectory]) -> Vec<OurRow> {
    let mut cells: BTreeMap<(String, usize), OurRow> = BTreeMap::new();
    for t in trajectories {
        let Some(order) = interface_of(&t.arm) else {
            continue;
        };
        let row = cells
            .entry((t.model.clone(), order))
            .or_insert_with(|| OurRow {
                model: t.model.clone(),
                interface: INTERFACES[order].0,
                arithmetic: Counts::default(),
                lexical: Counts::default(),
            });
        let counts = match t.domain {
            Domain::Arithmetic => &mut row.arithmetic,
            Domain::Lexical => &mut row.lexical,
            _ => continue,
        };
        counts.items += 1;
        counts.correct += u64::from(t.correct);
        counts.valid += u64::from(t.valid);
        counts.calls += u64::from(t.calls);
    }
    cells.into_values().collect()
}

/// Table 3's rows from the `table3` panel's trajectories.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "table3")?.load()?;
    Ok(Frame::new().rows("ours", &our_rows(&run.trajectories)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::laid_out;

    fn counts(items: u64, correct: u64, valid: u64, calls: u64) -> Counts {
        Counts {
            items,
            correct,
            valid,
            calls,
        }
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let ours = vec![
            OurRow {
                model: "m".into(),
                interface: "Native",
                arithmetic: counts(8, 6, 8, 8),
                lexical: counts(8, 2, 8, 8),
            },
            OurRow {
                model: "m".into(),
                interface: "PrefixContinue",
                arithmetic: counts(8, 4, 8, 44),
                lexical: counts(8, 0, 1, 44),
            },
        ];
        let md = laid_out("table3", Frame::new().rows("ours", &ours), "Qwen3.5-27B");
        for want in [
            "| Interface | Arithmetic | Lexical | Valid | Calls |",
            "| Native | 6/8 | 2/8 | 100/100 | 1.00 |",
            "| PrefixContinue | 4/8 | 0/8 | 100/12.5 | 5.50 |",
            "| PrefixContinue | 94/96 | 0/96 | 100/9.4 | 5.50 |",
            "| Position query | 14/96 | 27/96 | 100/100 | 5.50 |",
            "| m | Native | −22.9 | −75.0 | +0.0 | +0.0 | +0.00 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    #[test]
    fn arms_map_to_the_tables_interfaces() {
        let name = |arm| interface_of(arm).map(|i| INTERFACES[i].0);
        assert_eq!(name("Serial/Full/char"), Some("Position query"));
        assert_eq!(name("WholeGenerate/string/max32"), Some("WholeGenerate"));
        assert_eq!(name("Independent/Full/char"), None);
    }
}
