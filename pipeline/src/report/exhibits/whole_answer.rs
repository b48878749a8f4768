//! Table B1: "Whole-answer generation improves Qwen3-8B accuracy while changing which items
//! succeed (384 per domain). Serial legal-code EM is zero in both domains. Joint, lost and
//! gained counts compare independent Native and whole-generation outcomes."
//!
//! Columns as printed: Domain, Native, Whole, Joint, Lost, Gained (counts). Ours come from
//! `config/panels/whole-answer.toml`'s pairing Native/code vs WholeGenerate/string/max64:
//! Joint = both correct, Lost = Native only, Gained = whole generation only. The paper's Serial
//! legal-code EM sits in a note beside ours.

use c2s_stats::MetricRow;

use super::paper::PaperTable;
use super::{distinct, paper_domain, pp_diff, run_of, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{pct, Group, MetricIndex, UNDEFINED};

/// Table B1 as printed (Qwen3-8B, 384 items per domain): domain, Native, Whole, Joint, Lost,
/// Gained.
pub static PAPER: PaperTable<(String, [u64; 5], u64)> = PaperTable::new("tableB1");
/// The model Table B1 prints, whose rows ours are differenced against.
pub const PAPER_MODEL: &str = "Qwen3-8B";

/// One of our rows: a model and domain's five counts over `n` items, and Serial's EM.
#[derive(Debug, Clone, PartialEq)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The bank's domain name (`arithmetic`, `lexical`); printed capitalized.
    pub domain: String,
    /// Native, Whole, Joint, Lost, Gained counts (Native correct, whole generation correct,
    /// both, Native only, whole only); `None` when a joint count is missing.
    pub counts: Option<[u64; 5]>,
    /// Paired items the counts are over (0 when unknown).
    pub n: u64,
    /// Serial legal-code EM (a fraction) of the same model and domain, for the note; `None`
    /// without a Serial pairing.
    pub serial_em: Option<f64>,
}

fn whole_arm(comparison: &str) -> bool {
    comparison
        .split_once(" vs ")
        .is_some_and(|(_, s)| s.starts_with("WholeGenerate/"))
}

fn serial_arm(comparison: &str) -> bool {
    comparison
        .split_once(" vs ")
        .is_some_and(|(_, s)| s.starts_with("Serial/"))
}

/// Our rows from the metric rows: one per (model, domain) pairing of Native with
/// WholeGenerate, its counts taken from the joint table.
pub fn our_rows(rows: &[MetricRow]) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    let groups = index.paired_groups();
    groups
        .iter()
        .filter(|g| whole_arm(&g.comparison))
        .map(|g| {
            let n = |m: &str| index.get(g, None, m).and_then(|r| r.numerator);
            let counts = match (n("both"), n("native_only"), n("serial_only")) {
                (Some(both), Some(lost), Some(gained)) => {
                    Some([both + lost, both + gained, both, lost, gained])
                }
                _ => None,
            };
            let serial: Option<&Group> = groups
                .iter()
                .find(|s| s.model == g.model && s.domain == g.domain && serial_arm(&s.comparison));
            OurRow {
                model: g.model.clone(),
                domain: g.domain.clone(),
                counts,
                n: index
                    .get(g, None, "both")
                    .and_then(|r| r.denominator)
                    .unwrap_or(0),
                serial_em: serial.and_then(|s| index.value(s, None, "serial_em")),
            }
        })
        .collect()
}

fn capitalized(domain: &str) -> String {
    let d = paper_domain(domain);
    match d {
        "math" | "arithmetic" => "Arithmetic".into(),
        "lexical" => "Lexical".into(),
        other => other.to_string(),
    }
}

fn header() -> Vec<String> {
    ["Domain", "Native", "Whole", "Joint", "Lost", "Gained"]
        .map(String::from)
        .to_vec()
}

/// Table B1's document: our table per model, the paper's as printed, and ours minus the
/// paper's in percentage points of the items.
pub fn layout(ours: &[OurRow]) -> anyhow::Result<Doc> {
    let printed = PAPER.rows()?;
    let mut doc = Doc::new("Table B1: Whole-answer generation changes which items succeed");
    doc.p(
        "Joint, lost and gained counts compare independent Native and whole-generation \
         outcomes.",
    );
    let models = distinct(ours.iter().map(|r| r.model.as_str()));
    for model in models {
        let rows: Vec<&OurRow> = ours.iter().filter(|r| r.model == model).collect();
        doc.h(2, format!("This run: {model}"));
        doc.table(Table {
            text_columns: 1,
            header: header(),
            rows: rows
                .iter()
                .map(|r| {
                    let mut cells = vec![capitalized(&r.domain)];
                    match r.counts {
                        Some(c) => cells.extend(c.map(|x| x.to_string())),
                        None => cells.extend(std::iter::repeat_n(UNDEFINED.to_string(), 5)),
                    }
                    cells
                })
                .collect(),
            notes: vec![format!(
                "Items per domain: {}. Serial legal-code EM: {}.",
                rows.iter()
                    .map(|r| format!("{} {}", capitalized(&r.domain), r.n))
                    .collect::<Vec<_>>()
                    .join(", "),
                rows.iter()
                    .map(|r| format!("{} {}%", capitalized(&r.domain), pct(r.serial_em)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )],
        });
    }
    doc.h(2, format!("The paper (Table B1, {PAPER_MODEL})"));
    doc.table(Table {
        text_columns: 1,
        header: header(),
        rows: printed
            .iter()
            .map(|(d, c, _)| {
                let mut cells = vec![d.to_string()];
                cells.extend(c.map(|x| x.to_string()));
                cells
            })
            .collect(),
        notes: vec!["384 items per domain; Serial legal-code EM is zero in both domains.".into()],
    });
    doc.h(2, format!("This run minus {PAPER_MODEL}"));
    let mut diff = Table {
        text_columns: 2,
        header: [
            "Model",
            "Domain",
            "Δ Native EM",
            "Δ Whole EM",
            "Δ Lost",
            "Δ Gained",
        ]
        .map(String::from)
        .to_vec(),
        ..Table::default()
    };
    for r in ours {
        let Some((_, p, items)) = printed
            .iter()
            .find(|(d, _, _)| *d == capitalized(&r.domain))
        else {
            continue;
        };
        let ours_rate = |i: usize| {
            r.counts
                .filter(|_| r.n > 0)
                .map(|c| c[i] as f64 / r.n as f64)
        };
        let paper_rate = |i: usize| 100.0 * p[i] as f64 / *items as f64;
        diff.rows.push(vec![
            r.model.clone(),
            capitalized(&r.domain),
            pp_diff(ours_rate(0), paper_rate(0)),
            pp_diff(ours_rate(1), paper_rate(1)),
            pp_diff(ours_rate(3), paper_rate(3)),
            pp_diff(ours_rate(4), paper_rate(4)),
        ]);
    }
    diff.notes
        .push("Percentage points of the items (ours over our items, the paper's over 384).".into());
    doc.table(diff);
    Ok(doc)
}

/// Table B1 from the `whole-answer` panel's run.
pub fn document(runs: &[PanelRun]) -> anyhow::Result<Doc> {
    let rows = run_of(runs, "whole-answer")?.load()?.metric_rows()?;
    layout(&our_rows(&rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::testing::paired_rows;

    #[test]
    fn the_papers_rows_add_up() {
        for (d, [native, whole, joint, lost, gained], _) in PAPER.rows().unwrap() {
            assert_eq!(*native, joint + lost, "{d}");
            assert_eq!(*whole, joint + gained, "{d}");
        }
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let mut rows: Vec<MetricRow> = paired_rows("m", "arithmetic", [4, 2, 6, 4], (0.0, 1.0))
            .into_iter()
            .map(|r| MetricRow {
                comparison: "Native/code vs WholeGenerate/string/max64".into(),
                ..r
            })
            .collect();
        rows.extend(paired_rows("m", "arithmetic", [0, 6, 0, 10], (0.0, 0.0)));
        let md = layout(&our_rows(&rows)).unwrap().markdown();
        for want in [
            "| Domain | Native | Whole | Joint | Lost | Gained |",
            "| Arithmetic | 6 | 10 | 4 | 2 | 6 |",
            "| Arithmetic | 59 | 181 | 41 | 18 | 140 |",
            "Items per domain: Arithmetic 16. Serial legal-code EM: Arithmetic 0.0%.",
            "| m | Arithmetic | +22.1 | +15.4 | +7.8 | +1.0 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
