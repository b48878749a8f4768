//! Tables D5 and D6, candidate support (D.5), from the `support-union` panel: Serial under
//! Full support and under the position union, singletons filled without a call (UnionFill).
//! D5: the joint counts of the paired comparison Full vs UnionFill; D6: calls, forced
//! positions and candidate membership summed over the two arms' trajectories. Both tables'
//! rows are declared in their specs (exhibits/tableD5.toml, tableD6.toml: `[[sources]]`).

use c2s_records::{Arm, ArmSpec, Support};

/// Serial under Full support, every position queried over the full option set
/// (`Serial/Full/code`).
pub fn full_arm() -> ArmSpec {
    ArmSpec::new(Arm::Serial)
}

/// Serial under the position union, singleton unions filled without a call
/// (`Serial/UnionFill/code`).
pub fn union_arm() -> ArmSpec {
    ArmSpec::new(Arm::Serial).with_support(Support::UNION_FILL)
}

#[cfg(test)]
mod tests {
    use c2s_records::{Membership, Trajectory};
    use c2s_stats::MetricRow;

    use super::*;
    use crate::exhibits::engine::Frame;
    use crate::exhibits::sources::PanelRecords;
    use crate::exhibits::testing::{declared, paired_rows, panel_metrics, trajectory};

    #[test]
    fn the_layouts_have_the_papers_columns_rows_and_differences() {
        let rows: Vec<MetricRow> = paired_rows("m", "lexical", [2, 1, 3, 10], (0.0, 1.0))
            .into_iter()
            .map(|r| MetricRow {
                comparison: c2s_records::comparison_of(&full_arm(), &union_arm()),
                ..r
            })
            .collect();
        let panel = panel_metrics("support-union", rows);
        let md = declared("tableD5", &[panel], Frame::new(), "Qwen3.5-27B");
        for want in [
            "| Model | Domain | Both wrong | Recovered | Lost | Both correct |",
            "| m | lexical | 10 | 3 | 1 | 2 |",
            "| StartLux | math | 274 | 103 | 3 | 4 |",
            "| m | lexical | Qwen3.5-27B lexical | +19.3 | −3.9 | −1.6 | −13.8 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        // Full: 44 calls, 2 of 8 outputs candidates; Union: 16 calls, 28 forced, 8 of 8.
        let trajectories: Vec<Trajectory> = (0..8)
            .flat_map(|i| {
                let item = format!("i{i}");
                let full = Trajectory {
                    calls: 5 + u32::from(i % 2 == 0),
                    membership: match i < 2 {
                        true => Membership::Gold,
                        false => Membership::Malformed,
                    },
                    ..trajectory(&item, "arithmetic", 5, &full_arm().label(), i < 2)
                };
                let union = Trajectory {
                    calls: 2,
                    fills: 3 + u32::from(i % 2 == 0),
                    membership: Membership::OtherCandidate,
                    ..trajectory(&item, "arithmetic", 5, &union_arm().label(), false)
                };
                [full, union]
            })
            .collect();
        let panel = PanelRecords {
            panel: "support-union".into(),
            metric_rows: vec![],
            trajectories,
        };
        let md = declared("tableD6", &[panel], Frame::new(), "Jev");
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
