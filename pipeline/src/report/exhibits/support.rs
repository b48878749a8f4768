//! Tables D5 and D6, candidate support (D.5), from `config/panels/support-union.toml`: Serial
//! under Full support and under the position union with singletons filled without a call
//! (UnionFill: "Singleton unions are filled with no call or assigned probability").
//!
//! Table D5: "Union recovers failed items while losing some Full successes (384 items per
//! domain). Recovered means Full wrong/Union correct; lost means Full correct/Union wrong."
//! Columns: Model, Domain, Both wrong, Recovered, Lost, Both correct — the panel's paired
//! comparison Serial/Full vs Serial/UnionFill.
//!
//! Table D6: "Position unions reduce arithmetic calls while permitting noncandidate lexical
//! strings. Membership percentages and recorded model request counts exclude retries."
//! Columns: Model, Domain, Full calls, Union calls, Forced, Full member, Union member — summed
//! from the two arms' trajectories (Forced: positions filled without a call; member: outputs
//! that are one of the eight candidates).

use std::collections::BTreeMap;

use c2s_records::{Membership, Trajectory};
use c2s_stats::MetricRow;

use super::paper::PaperTable;
use super::{differences, paper_domain, pp_diff, run_of, signed2, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{MetricIndex, UNDEFINED};

/// Serial under Full support: every position queried over the full option set.
pub const FULL_ARM: &str = "Serial/Full/code";
/// Serial under the position union, singleton unions filled without a call.
pub const UNION_ARM: &str = "Serial/UnionFill/code";

/// Table D5 as printed: model, domain, both wrong / recovered / lost / both correct.
pub static PAPER_D5: PaperTable<(String, String, [u64; 4])> = PaperTable::new("tableD5");

/// A row of Table D6 as printed: model, domain, Full calls, Union calls, Forced, Full member %,
/// Union member %, items.
pub type PaperD6Row = (String, String, [u64; 3], [f64; 2], u64);

/// Table D6 as printed.
pub static PAPER_D6: PaperTable<PaperD6Row> = PaperTable::new("tableD6");

/// One of our D5 rows: the four joint counts over `n` items.
#[derive(Debug, Clone, PartialEq)]
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
            let counts = match (n("neither"), n("serial_only"), n("native_only"), n("both")) {
                (Some(a), Some(b), Some(c), Some(d)) => Some([a, b, c, d]),
                _ => None,
            };
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
#[derive(Debug, Clone, Default, PartialEq)]
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

fn is_candidate(m: Membership) -> bool {
    matches!(m, Membership::Gold | Membership::OtherCandidate)
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
        let member = u64::from(is_candidate(t.membership));
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

fn share((k, n): (u64, u64)) -> Option<f64> {
    (n > 0).then(|| k as f64 / n as f64)
}

fn pct1(v: Option<f64>) -> String {
    v.map_or(UNDEFINED.to_string(), |v| format!("{:.1}", 100.0 * v))
}

/// Table D5's document: our joint counts, the paper's rows as printed, and each count's
/// share minus the paper's in percentage points.
pub fn d5_layout(ours: &[D5Row], against: &str) -> anyhow::Result<Doc> {
    let printed = PAPER_D5.rows()?;
    let header: Vec<String> = [
        "Model",
        "Domain",
        "Both wrong",
        "Recovered",
        "Lost",
        "Both correct",
    ]
    .map(String::from)
    .to_vec();
    let mut doc =
        Doc::new("Table D5: Union recovers failed items while losing some Full successes");
    doc.p(
        "Recovered means Full wrong/Union correct; lost means Full correct/Union wrong. Counts \
         expose changes hidden by net accuracy.",
    );
    doc.h(2, "This run");
    doc.table(Table {
        text_columns: 2,
        header: header.clone(),
        rows: ours
            .iter()
            .map(|r| {
                let mut cells = vec![r.model.clone(), r.domain.clone()];
                match r.counts {
                    Some(c) => cells.extend(c.map(|x| x.to_string())),
                    None => cells.extend(std::iter::repeat_n(UNDEFINED.to_string(), 4)),
                }
                cells
            })
            .collect(),
        notes: vec![format!("{FULL_ARM} vs {UNION_ARM}.")],
    });
    doc.h(2, "The paper (Table D5)");
    doc.table(Table {
        text_columns: 2,
        header,
        rows: printed
            .iter()
            .map(|(m, d, c)| {
                let mut cells = vec![m.to_string(), d.to_string()];
                cells.extend(c.map(|x| x.to_string()));
                cells
            })
            .collect(),
        notes: vec!["384 items per domain.".into()],
    });
    let (models, mut diff) = differences(
        &mut doc,
        printed.iter().map(|p| p.0.as_str()),
        against,
        3,
        &[
            "Model",
            "Domain",
            "Paper row",
            "Δ Both wrong",
            "Δ Recovered",
            "Δ Lost",
            "Δ Both correct",
        ],
    );
    for r in ours {
        for (m, d, c) in printed
            .iter()
            .filter(|(m, d, _)| models.contains(&m.as_str()) && *d == r.domain)
        {
            let mut cells = vec![r.model.clone(), r.domain.clone(), format!("{m} {d}")];
            let items: u64 = c.iter().sum();
            for (i, paper) in c.iter().enumerate() {
                let ours = r
                    .counts
                    .filter(|_| r.n > 0)
                    .map(|x| x[i] as f64 / r.n as f64);
                cells.push(pp_diff(ours, 100.0 * *paper as f64 / items as f64));
            }
            diff.rows.push(cells);
        }
    }
    diff.notes
        .push("Percentage points of the items (ours over our items, the paper's over 384).".into());
    doc.table(diff);
    Ok(doc)
}

/// Table D6's document: our calls, forced positions and membership, the paper's rows as
/// printed, and ours minus the paper's per item and in membership points.
pub fn d6_layout(ours: &[D6Row], against: &str) -> anyhow::Result<Doc> {
    let printed = PAPER_D6.rows()?;
    let header: Vec<String> = [
        "Model",
        "Domain",
        "Full calls",
        "Union calls",
        "Forced",
        "Full member",
        "Union member",
    ]
    .map(String::from)
    .to_vec();
    let mut doc =
        Doc::new("Table D6: Position unions reduce arithmetic calls while permitting noncandidate lexical strings");
    doc.p("Membership percentages and recorded model request counts exclude retries.");
    doc.h(2, "This run");
    doc.table(Table {
        text_columns: 2,
        header: header.clone(),
        rows: ours
            .iter()
            .map(|r| {
                vec![
                    r.model.clone(),
                    r.domain.clone(),
                    r.full_calls.to_string(),
                    r.union_calls.to_string(),
                    r.forced.to_string(),
                    pct1(share(r.full_member)),
                    pct1(share(r.union_member)),
                ]
            })
            .collect(),
        notes: vec![
            "Calls: model requests of the arm; Forced: positions UnionFill filled without a \
             call; member: percentage of outputs that are one of the eight candidates."
                .into(),
        ],
    });
    doc.h(2, "The paper (Table D6)");
    doc.table(Table {
        text_columns: 2,
        header,
        rows: printed
            .iter()
            .map(|(m, d, c, p, _)| {
                let mut cells = vec![m.to_string(), d.to_string()];
                cells.extend(c.map(|x| x.to_string()));
                cells.extend(p.map(|x| format!("{x:.1}")));
                cells
            })
            .collect(),
        notes: vec!["384 items per domain.".into()],
    });
    let (models, mut diff) = differences(
        &mut doc,
        printed.iter().map(|p| p.0.as_str()),
        against,
        3,
        &[
            "Model",
            "Domain",
            "Paper row",
            "Δ Full calls / item",
            "Δ Union calls / item",
            "Δ Full member",
            "Δ Union member",
        ],
    );
    for r in ours {
        for (m, d, c, p, items) in printed
            .iter()
            .filter(|(m, d, _, _, _)| models.contains(&m.as_str()) && *d == r.domain)
        {
            let per_item = |calls: u64, n: u64, paper: u64| {
                if n == 0 {
                    return UNDEFINED.to_string();
                }
                signed2(calls as f64 / n as f64 - paper as f64 / *items as f64)
            };
            diff.rows.push(vec![
                r.model.clone(),
                r.domain.clone(),
                format!("{m} {d}"),
                per_item(r.full_calls, r.full_member.1, c[0]),
                per_item(r.union_calls, r.union_member.1, c[1]),
                pp_diff(share(r.full_member), p[0]),
                pp_diff(share(r.union_member), p[1]),
            ]);
        }
    }
    diff.notes.push(
        "Calls per item (ours over our items, the paper's over 384); membership in percentage \
         points."
            .into(),
    );
    doc.table(diff);
    Ok(doc)
}

/// Table D5 from the `support-union` panel's metric rows.
pub fn table_d5(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let rows = run_of(runs, "support-union")?.load()?.metric_rows()?;
    d5_layout(&d5_rows(&rows), against)
}

/// Table D6 from the `support-union` panel's trajectories.
pub fn table_d6(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, "support-union")?.load()?;
    d6_layout(&d6_rows(&run.trajectories), against)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::testing::paired_rows;

    #[test]
    fn the_papers_rows_add_up() {
        for (m, d, c) in PAPER_D5.rows().unwrap() {
            assert_eq!(c.iter().sum::<u64>(), 384, "{m} {d}");
        }
        // 384 items × mean length 5.5 queries; the math union forces all but two positions.
        for (m, d, c, _, _) in PAPER_D6.rows().unwrap() {
            assert_eq!(c[0], 2112, "{m} {d}");
            assert_eq!(c[1] + c[2], c[0], "{m} {d}");
        }
        // A correct output is a candidate: each arm's correct share stays within its
        // candidate membership (Full: lost + both correct; Union: recovered + both correct).
        for (m, d, c) in PAPER_D5.rows().unwrap() {
            let (_, _, _, member, _) = PAPER_D6
                .rows()
                .unwrap()
                .iter()
                .find(|p| p.0 == *m && p.1 == *d)
                .unwrap();
            let share = |k: u64| 100.0 * k as f64 / c.iter().sum::<u64>() as f64;
            assert!(share(c[2] + c[3]) <= member[0], "{m} {d} Full");
            assert!(share(c[1] + c[3]) <= member[1], "{m} {d} Union");
        }
    }

    #[test]
    fn the_layouts_have_the_papers_columns_rows_and_differences() {
        let rows: Vec<MetricRow> = paired_rows("m", "lexical", [2, 1, 3, 10], (0.0, 1.0))
            .into_iter()
            .map(|r| MetricRow {
                comparison: format!("{FULL_ARM} vs {UNION_ARM}"),
                ..r
            })
            .collect();
        let md = d5_layout(&d5_rows(&rows), "Qwen3.5-27B")
            .unwrap()
            .markdown();
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
        let md = d6_layout(&ours, "Jev").unwrap().markdown();
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
