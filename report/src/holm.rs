//! The report's "Holm families" section: every family this run corrected (McNemar families of
//! `[[stats.families]]`, sign-flip families of `[[stats.contrasts]]`), each test with its raw
//! and Holm-adjusted p-value, and beside it the paper's size of that family
//! (`[[stats.paper_families]]`). A family whose size differs from the paper's is flagged, and
//! so is a paper family this run has no test of.
//!
//! Membership is the statistics' own: [`c2s_stats::holm_cell`] for McNemar tests and
//! [`ContrastRow::holm_group`] for contrasts.

use std::collections::BTreeMap;

use c2s_config::PaperFamilyEntry;
use c2s_records::Metric;
use c2s_stats::{families_in_force, holm_cell, ContrastRow, HolmFamily, HolmGroup, MetricRow};

use super::doc::{Doc, Table};
use super::tables::p_value;

/// Which test a family corrects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestKind {
    /// Exact two-sided McNemar on the paired table.
    McNemar,
    /// Exact two-sided sign-flip test of unit differences.
    SignFlip,
}

impl TestKind {
    fn as_str(self) -> &'static str {
        match self {
            TestKind::McNemar => "McNemar",
            TestKind::SignFlip => "sign-flip",
        }
    }
}

/// One test of a family.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyTest {
    /// The model the test was run on.
    pub model: String,
    /// Empty for a contrast (its sides name their own domains).
    pub domain: String,
    /// The comparison or contrast name.
    pub test: String,
    /// The raw p-value; `None` when the statistics left it undefined.
    pub p: Option<f64>,
    /// The Holm-adjusted p-value within this family; `None` when undefined.
    pub p_holm: Option<f64>,
}

/// One Holm correction as computed: a family within one scope cell.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyInstance {
    /// The family's declared name (a contrast without a family: `CONTRAST (alone)`).
    pub name: String,
    /// Whether the family corrects McNemar or sign-flip tests.
    pub kind: TestKind,
    /// Which cell of the family's scope (`model · domain`, `model`, `domain`, or `all`).
    pub cell: String,
    /// The tests corrected together, each with its raw and adjusted p.
    pub tests: Vec<FamilyTest>,
}

/// The McNemar families of the metric rows (all-length `mcnemar_p` rows).
pub fn mcnemar_families(families: &[HolmFamily], rows: &[MetricRow]) -> Vec<FamilyInstance> {
    let declared = families_in_force(families);
    let holm: BTreeMap<(&str, &str, &str), Option<f64>> = rows
        .iter()
        .filter(|r| r.length.is_none() && r.metric == Metric::McnemarPHolm)
        .map(|r| {
            (
                (r.model.as_str(), r.domain_str(), r.comparison.as_str()),
                r.value,
            )
        })
        .collect();
    type Cell<'a> = (usize, Option<String>, Option<&'a str>);
    let mut cells: BTreeMap<Cell<'_>, Vec<FamilyTest>> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| r.length.is_none() && r.metric == Metric::McnemarP)
    {
        let Some(cell) = holm_cell(&declared, &r.comparison, &r.model, r.domain_str()) else {
            continue;
        };
        cells.entry(cell).or_default().push(FamilyTest {
            model: r.model.clone(),
            domain: r.domain_str().to_string(),
            test: r.comparison.clone(),
            p: r.value,
            p_holm: holm
                .get(&(r.model.as_str(), r.domain_str(), r.comparison.as_str()))
                .copied()
                .flatten(),
        });
    }
    cells
        .into_iter()
        .map(|((fi, model, domain), tests)| FamilyInstance {
            name: declared[fi].name.clone(),
            kind: TestKind::McNemar,
            cell: match (model, domain) {
                (Some(m), Some(d)) => format!("{m} · {d}"),
                (Some(m), None) => m,
                (None, Some(d)) => d.to_string(),
                (None, None) => "all".into(),
            },
            tests,
        })
        .collect()
}

/// The sign-flip families of the contrast rows (a contrast without a family is its own, per
/// model).
pub fn contrast_families(rows: &[ContrastRow]) -> Vec<FamilyInstance> {
    let mut families: BTreeMap<HolmGroup, Vec<FamilyTest>> = BTreeMap::new();
    for r in rows {
        families
            .entry(r.holm_group())
            .or_default()
            .push(FamilyTest {
                model: r.model.clone(),
                domain: String::new(),
                test: r.contrast.clone(),
                p: r.estimate.sign_p,
                p_holm: r.sign_p_holm,
            });
    }
    families
        .into_iter()
        .map(|(group, tests)| {
            let (name, cell) = match group {
                HolmGroup::Family(f) => (f, "all".to_string()),
                HolmGroup::Alone { model, contrast } => (format!("{contrast} (alone)"), model),
            };
            FamilyInstance {
                name,
                kind: TestKind::SignFlip,
                cell,
                tests,
            }
        })
        .collect()
}

/// How a family's size compares with the paper's.
pub fn size_check(ours: usize, paper: Option<&PaperFamilyEntry>) -> String {
    match paper {
        None => "not declared by the paper".into(),
        Some(p) if p.tests as usize == ours => "as the paper".into(),
        Some(p) => format!("⚠ differs: {ours} here, {} in the paper", p.tests),
    }
}

/// The section: a summary table of families, then one table of tests per family.
pub fn section(doc: &mut Doc, instances: &[FamilyInstance], paper: &[PaperFamilyEntry]) {
    doc.h(2, "Holm families");
    doc.p(
        "Every family of tests this run corrected together, with the paper's size of the same \
         family where the panel declares it ([[stats.paper_families]]). A family that differs \
         from the paper's size is flagged: Holm's correction depends on the family, so its \
         adjusted p-values are not the paper's (a run of one model holds one third of a \
         family the paper spans over three models).",
    );
    let paper_of = |name: &str| paper.iter().find(|p| p.name == name);
    let mut summary = Table {
        text_columns: 4,
        header: [
            "family",
            "test",
            "scope cell",
            "check",
            "tests",
            "paper's tests",
        ]
        .map(String::from)
        .to_vec(),
        ..Table::default()
    };
    for f in instances {
        let p = paper_of(&f.name);
        summary.rows.push(vec![
            f.name.clone(),
            f.kind.as_str().into(),
            f.cell.clone(),
            size_check(f.tests.len(), p),
            f.tests.len().to_string(),
            p.map(|p| p.tests.to_string()).unwrap_or_else(|| "–".into()),
        ]);
    }
    for p in paper {
        if !instances.iter().any(|f| f.name == p.name) {
            summary.rows.push(vec![
                p.name.clone(),
                "–".into(),
                "–".into(),
                "⚠ no test of this family in the run".into(),
                "0".into(),
                p.tests.to_string(),
            ]);
        }
    }
    for p in paper {
        summary.notes.push(format!("{}: {}", p.name, p.passage));
    }
    doc.table(summary);
    for f in instances {
        doc.h(3, format!("{} · {}", f.name, f.cell));
        let mut t = Table {
            text_columns: 3,
            header: ["model", "domain", "test", "p", "p (Holm)"]
                .map(String::from)
                .to_vec(),
            ..Table::default()
        };
        for x in &f.tests {
            t.rows.push(vec![
                x.model.clone(),
                if x.domain.is_empty() {
                    "–".into()
                } else {
                    x.domain.clone()
                },
                x.test.clone(),
                p_value(x.p),
                p_value(x.p_holm),
            ]);
        }
        doc.table(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_stats::FamilyScope;

    fn row(model: &str, domain: &str, comparison: &str, metric: &str, p: f64) -> MetricRow {
        MetricRow {
            value: Some(p),
            ..MetricRow::empty(
                0,
                model,
                c2s_records::Domain::parse(domain),
                None,
                comparison,
                c2s_records::Metric::parse(metric).unwrap(),
            )
        }
    }

    /// D.5: "Six Full/Union McNemar tests share Holm correction" — a global family over
    /// models and domains; a run of one model holds two of the six tests and is flagged.
    #[test]
    fn a_family_smaller_than_the_papers_is_flagged_with_its_tests() {
        let c = "Serial/Full/code vs Serial/UnionFill/code";
        let rows = vec![
            row("m", "arithmetic", c, "mcnemar_p", 0.01),
            row("m", "arithmetic", c, "mcnemar_p_holm", 0.02),
            row("m", "lexical", c, "mcnemar_p", 0.2),
            row("m", "lexical", c, "mcnemar_p_holm", 0.2),
            row(
                "m",
                "lexical",
                "Native/code vs Serial/Full/code",
                "mcnemar_p",
                0.5,
            ),
        ];
        let families = vec![HolmFamily {
            name: "D.5 full-union".into(),
            comparisons: vec![c.into()],
            scope: FamilyScope::Global,
        }];
        let found = mcnemar_families(&families, &rows);
        assert_eq!(found.len(), 1, "a comparison outside every family has none");
        assert_eq!(found[0].tests.len(), 2);
        assert_eq!(found[0].tests[0].p_holm, Some(0.02));
        let paper = PaperFamilyEntry {
            name: "D.5 full-union".into(),
            tests: 6,
            passage: "D.5: \"Six Full/Union McNemar tests share Holm correction\"".into(),
        };
        assert_eq!(
            size_check(2, Some(&paper)),
            "⚠ differs: 2 here, 6 in the paper"
        );
        assert_eq!(size_check(6, Some(&paper)), "as the paper");

        let mut doc = Doc::new("t");
        section(
            &mut doc,
            &found,
            &[
                paper,
                PaperFamilyEntry {
                    name: "D.6 trie".into(),
                    tests: 8,
                    passage: "D.6".into(),
                },
            ],
        );
        let md = doc.markdown();
        assert!(md.contains("⚠ differs: 2 here, 6 in the paper"), "{md}");
        assert!(md.contains("⚠ no test of this family in the run"), "{md}");
        assert!(md.contains("0.020"), "{md}");
    }

    /// Per-(model, domain) scope: one correction per cell.
    #[test]
    fn scoped_families_split_by_their_cells() {
        let c = "Native/code vs Serial/Full/code";
        let rows = vec![
            row("m", "arithmetic", c, "mcnemar_p", 0.01),
            row("m", "lexical", c, "mcnemar_p", 0.2),
        ];
        let families = vec![HolmFamily {
            name: "f".into(),
            comparisons: vec![c.into()],
            scope: FamilyScope::PerModelDomain,
        }];
        let found = mcnemar_families(&families, &rows);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].cell, "m · arithmetic");
    }
}
