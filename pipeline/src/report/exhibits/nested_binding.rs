//! Table D10 (D.11): "Literal names improve Qwen raw readout; indexed readout is correct under
//! both bindings. Each domain has 48 parents. Differences are percentage points with paired 95%
//! intervals and twelve-test Holm correction." Columns as printed: Model, Domain, Evidence,
//! Literal, Opaque, Difference [95% CI], Holm p. The paper's text prints the six raw rows.
//!
//! Ours come from `config/panels/nested-binding.toml`: each evidence level's pairing opaque vs
//! literal (readable aligned) names gives the counts and the Holm-corrected exact McNemar p
//! (family "D.11 binding"), and the `literal - opaque` unit contrast the difference with its
//! item interval.

use c2s_stats::{ContrastRow, MetricRow};

use super::engine::sig3;
use super::paper::PaperTable;
use super::{differences, paper_domain, percent_interval, pp_diff, run_of, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::MetricIndex;

/// A row of Table D10 as printed: model, domain, evidence, literal and opaque correct of 48,
/// difference [CI], Holm p.
pub type PaperRow = (String, String, String, u64, u64, (f64, f64, f64), f64, u64);

/// Table D10's six printed raw rows (exhibits/tableD10.tsv).
pub static PAPER: PaperTable<PaperRow> = PaperTable::new("tableD10");

/// One of our rows.
#[derive(Debug, Clone, PartialEq)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The evidence level of the pairing (`raw`, `indexed`), as the arm label spells it.
    pub evidence: String,
    /// Literal (readable aligned) names: (correct, parents); (0, 0) when missing.
    pub literal: (u64, u64),
    /// Opaque names: (correct, parents); (0, 0) when missing.
    pub opaque: (u64, u64),
    /// The `literal - opaque` contrast as a fraction with its item interval; `None` without
    /// the contrast.
    pub difference: Option<(f64, Option<f64>, Option<f64>)>,
    /// The pairing's exact McNemar p, Holm-corrected in the family "D.11 binding".
    pub holm_p: Option<f64>,
}

/// The evidence level of a pairing `GoldCopy/Full/code/T0/EVIDENCE vs …/names-readable_aligned`.
fn evidence_of(comparison: &str) -> Option<&str> {
    let (opaque, literal) = comparison.split_once(" vs ")?;
    literal
        .ends_with("/names-readable_aligned")
        .then(|| opaque.rsplit('/').next())
        .flatten()
}

/// Our rows: one per opaque-vs-literal pairing (model, domain, evidence), raw rows first.
pub fn our_rows(rows: &[MetricRow], contrasts: &[ContrastRow]) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    let mut out: Vec<OurRow> = index
        .paired_groups()
        .into_iter()
        .filter_map(|g| {
            let evidence = evidence_of(&g.comparison)?.to_string();
            let count = |m: &str| {
                index
                    .get(&g, None, m)
                    .and_then(|r| Some((r.numerator?, r.denominator?)))
                    .unwrap_or((0, 0))
            };
            let name = format!("literal - opaque, {evidence}, {}", g.domain);
            let contrast = contrasts
                .iter()
                .find(|c| c.model == g.model && c.contrast == name);
            Some(OurRow {
                model: g.model.clone(),
                domain: paper_domain(&g.domain).to_string(),
                literal: count("serial_em"),
                opaque: count("native_em"),
                difference: contrast.and_then(|c| {
                    c.estimate
                        .difference
                        .map(|d| (d, c.estimate.ci_low, c.estimate.ci_high))
                }),
                holm_p: index.value(&g, None, "mcnemar_p_holm"),
                evidence,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        (&a.model, a.evidence != "raw", &a.domain).cmp(&(&b.model, b.evidence != "raw", &b.domain))
    });
    out
}

fn header() -> Vec<String> {
    [
        "Model",
        "Domain",
        "Evidence",
        "Literal",
        "Opaque",
        "Difference [95% CI]",
        "Holm p",
    ]
    .map(String::from)
    .to_vec()
}

/// Table D10's document: our rows, the paper's raw rows as printed, and ours minus the paper
/// model's (`against`, else every printed model).
pub fn layout(ours: &[OurRow], against: &str) -> anyhow::Result<Doc> {
    let paper_rows = PAPER.rows()?;
    let mut doc =
        Doc::new("Table D10: Literal names against opaque names at one preselected position");
    doc.p(
        "Differences are percentage points with paired 95% intervals and twelve-test Holm \
         correction.",
    );
    doc.h(2, "This run");
    doc.table(Table {
        text_columns: 3,
        header: header(),
        rows: ours
            .iter()
            .map(|r| {
                vec![
                    r.model.clone(),
                    r.domain.clone(),
                    r.evidence.clone(),
                    format!("{}/{}", r.literal.0, r.literal.1),
                    format!("{}/{}", r.opaque.0, r.opaque.1),
                    percent_interval(r.difference),
                    sig3(r.holm_p),
                ]
            })
            .collect(),
        notes: vec![
            "Literal: readable aligned names (`digit_5`, `letter_a`); Holm p: exact McNemar in \
             the family D.11 binding."
                .into(),
        ],
    });
    doc.h(2, "The paper (Table D10, raw rows as printed)");
    doc.table(Table {
        text_columns: 3,
        header: header(),
        rows: paper_rows
            .iter()
            .map(|(m, d, e, lit, opq, diff, p, parents)| {
                vec![
                    m.to_string(),
                    d.to_string(),
                    e.to_string(),
                    format!("{lit}/{parents}"),
                    format!("{opq}/{parents}"),
                    percent_interval(Some((
                        diff.0 / 100.0,
                        Some(diff.1 / 100.0),
                        Some(diff.2 / 100.0),
                    ))),
                    sig3(Some(*p)),
                ]
            })
            .collect(),
        notes: vec![
            "Each domain has 48 parents; indexed readout is correct under both bindings.".into(),
        ],
    });
    let (models, mut diff) = differences(
        &mut doc,
        paper_rows.iter().map(|p| p.0.as_str()),
        against,
        4,
        &[
            "Model",
            "Domain",
            "Evidence",
            "Paper row",
            "Δ Literal",
            "Δ Opaque",
            "Δ Difference",
        ],
    );
    for r in ours {
        for p in paper_rows
            .iter()
            .filter(|p| models.contains(&p.0.as_str()) && p.1 == r.domain && p.2 == r.evidence)
        {
            let rate = |(k, n): (u64, u64)| (n > 0).then(|| k as f64 / n as f64);
            let paper = |k: u64| 100.0 * k as f64 / p.7 as f64;
            diff.rows.push(vec![
                r.model.clone(),
                r.domain.clone(),
                r.evidence.clone(),
                format!("{} {} {}", p.0, p.1, p.2),
                pp_diff(rate(r.literal), paper(p.3)),
                pp_diff(rate(r.opaque), paper(p.4)),
                pp_diff(r.difference.map(|d| d.0), p.5 .0),
            ]);
        }
    }
    diff.notes
        .push("Percentage points (ours over our parents, the paper's over 48).".into());
    doc.table(diff);
    Ok(doc)
}

/// Table D10 from the `nested-binding` panel's run.
pub fn document(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, "nested-binding")?.load()?;
    let (contrasts, _) = run.contrast_tables()?;
    layout(&our_rows(&run.metric_rows()?, &contrasts), against)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::testing::paired_rows;

    /// "twelve-test Holm correction" of exact McNemar p-values: Qwen3.5-27B math raw (41 vs
    /// 14, 27 discordant) ranks first, × 12; lexical raw (37 vs 11, 26) second, × 11.
    #[test]
    fn the_papers_p_values_are_holm_stepped_mcnemar() {
        let mcnemar = |b: i32| 2.0 * 0.5f64.powi(b);
        assert!((12.0 * mcnemar(27) / 1.8e-07 - 1.0).abs() < 0.01);
        assert!((11.0 * mcnemar(26) / 3.3e-07 - 1.0).abs() < 0.01);
        assert_eq!(
            evidence_of(
                "GoldCopy/Full/code/T0/raw vs GoldCopy/Full/code/T0/raw/names-readable_aligned"
            ),
            Some("raw")
        );
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let rows: Vec<MetricRow> = paired_rows("m", "arithmetic", [10, 2, 20, 16], (0.0, 1.0))
            .into_iter()
            .map(|r| MetricRow {
                comparison:
                    "GoldCopy/Full/code/T0/raw vs GoldCopy/Full/code/T0/raw/names-readable_aligned"
                        .into(),
                ..r
            })
            .collect();
        let md = layout(&our_rows(&rows, &[]), "Qwen3.5-27B")
            .unwrap()
            .markdown();
        for want in [
            "| Model | Domain | Evidence | Literal | Opaque | Difference [95% CI] | Holm p |",
            "| m | math | raw | 30/48 | 12/48 | – | – |",
            "| Qwen3.5-27B | math | raw | 41/48 | 14/48 | 56.2 [41.7, 68.8] | 1.80e-7 |",
            "| m | math | raw | Qwen3.5-27B math raw | −22.9 | −4.2 | – |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
