//! Figure 14's numbers (B.1, D.10): "Local error rates already imply few correct lexical
//! strings under an independence reference." The empirical reference of a model, domain and
//! length is R = Π_t c_t, the product of the observed position accuracies; "Independent uses
//! 384 parents per domain and TeacherForced 60". The paper draws these as a figure and prints
//! no numbers ("The figure shows Jev; all original models are included in the accompanying
//! numerical results"), so there is nothing to set beside ours.
//!
//! Panels: `independent-384` (Native, Independent and Serial on Table 1's 384 items per domain,
//! 9,999 draws within length) and `teacher-forced` (60 per domain). Each arm with a reference
//! gets the run report's independence table: per length, its string EM, Π c_t and EM − Π c_t
//! with paired bootstrap intervals.

use super::PanelRun;
use crate::report::doc::{Doc, Table};
use crate::report::tables::{count, estimate, estimate_pp, Group, MetricIndex, UNDEFINED};

/// The panels in the figure's order: the panel, the reference arm it plots and its heading.
const PANELS: [(&str, &str, &str); 2] = [
    (
        "independent-384",
        "Independent",
        "(a, b) Independent, 384 items per domain",
    ),
    (
        "teacher-forced",
        "TeacherForced",
        "(c, d) TeacherForced, 60 items per domain",
    ),
];

/// The figure's three lines per length for one (model, domain) reference arm: the
/// position-rate product, the reference arm's string EM and Serial's string EM (from the
/// panel's Native vs Serial pairing), with the reference's EM − product.
pub fn figure_table(index: &MetricIndex<'_>, g: &Group, level: f64) -> Table {
    let serial = index.paired_groups().into_iter().find(|p| {
        p.model == g.model
            && p.domain == g.domain
            && p.comparison
                .split_once(" vs ")
                .is_some_and(|(_, s)| s.starts_with("Serial/"))
    });
    let rows = index
        .lengths(g, "independence_reference")
        .into_iter()
        .map(|l| {
            let l = Some(l);
            vec![
                l.map_or_else(String::new, |l| l.to_string()),
                count(index.get(g, l, "items")),
                estimate(index.get(g, l, "independence_reference"), None),
                estimate(index.get(g, l, "string_em"), None),
                serial.as_ref().map_or_else(
                    || UNDEFINED.to_string(),
                    |s| estimate(index.get(s, l, "serial_em"), None),
                ),
                estimate_pp(index.get(g, l, "em_minus_reference")),
            ]
        })
        .collect();
    Table {
        text_columns: 1,
        header: [
            "Target length",
            "n",
            "Position-rate product [CI]",
            "Reference string EM [CI]",
            "Serial string EM [CI]",
            "Reference EM − product [CI]",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec![format!(
            "Percentages. The product multiplies the reference arm's per-position accuracies at \
             that length; intervals are {:.0}% whole-item bootstrap intervals within the length. \
             Serial string EM is the panel's Native vs Serial pairing at the same length.",
            100.0 * level
        )],
    }
}

pub fn layout(panels: &[(&str, Vec<c2s_stats::MetricRow>)], level: f64) -> Doc {
    let mut doc = Doc::new("Figure 14: String EM against the independence reference");
    doc.p(
        "For each model/domain/length, the reference is the product of the observed position \
         accuracies (D.10: \"The empirical independence reference is R = Π_t c_t, using binary \
         observed outcomes, not reported model probabilities\"). The paper plots these and \
         prints no numbers.",
    );
    for (name, arm, heading) in PANELS {
        let Some((_, rows)) = panels.iter().find(|(p, _)| *p == name) else {
            continue;
        };
        doc.h(2, format!("{heading} ({name})"));
        let index = MetricIndex::new(rows);
        for g in index
            .independence_groups()
            .into_iter()
            .filter(|g| g.comparison.split('/').next() == Some(arm))
        {
            doc.h(3, format!("{} · {} · {}", g.model, g.domain, g.comparison));
            doc.table(figure_table(&index, &g, level));
        }
    }
    doc
}

pub fn document(runs: &[PanelRun]) -> anyhow::Result<Doc> {
    let mut panels = Vec::new();
    let mut level = 0.95;
    for run in runs {
        let loaded = run.load()?;
        level = loaded.stats.level;
        panels.push((run.panel, loaded.metric_rows()?));
    }
    Ok(layout(&panels, level))
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_stats::MetricRow;

    fn at(comparison: &str, metric: &str, value: f64, ci: (f64, f64)) -> MetricRow {
        MetricRow {
            value: Some(value),
            numerator: Some(2),
            denominator: Some(4),
            ci_low: Some(ci.0),
            ci_high: Some(ci.1),
            ..MetricRow::empty(0, "m", "lexical", Some(3), comparison, metric)
        }
    }

    /// Per length: the product, the reference arm's EM, Serial's EM and EM − product, under
    /// the figure's panel headings; TeacherForced's panel shows only TeacherForced.
    #[test]
    fn the_layout_has_the_figures_three_lines_per_length() {
        let independent = "Independent/Full/code";
        let rows = vec![
            at(independent, "items", 4.0, (4.0, 4.0)),
            at(independent, "string_em", 0.25, (0.0, 0.5)),
            at(independent, "independence_reference", 0.125, (0.05, 0.3)),
            at(independent, "em_minus_reference", -0.125, (-0.25, 0.0)),
            at("Native/code vs Serial/Full/code", "both", 0.5, (0.5, 0.5)),
            at(
                "Native/code vs Serial/Full/code",
                "serial_em",
                0.5,
                (0.25, 0.75),
            ),
        ];
        let md = layout(
            &[("independent-384", rows.clone()), ("teacher-forced", rows)],
            0.95,
        )
        .markdown();
        for want in [
            "## (a, b) Independent, 384 items per domain (independent-384)",
            "### m · lexical · Independent/Full/code",
            "| Target length | n | Position-rate product [CI] | Reference string EM [CI] | Serial string EM [CI] | Reference EM − product [CI] |",
            "| 3 | 2 | 12.5 [5.0, 30.0] | 25.0 [0.0, 50.0] | 50.0 [25.0, 75.0] | −12.5 [−25.0, 0.0] |",
            "## (c, d) TeacherForced, 60 items per domain (teacher-forced)",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert_eq!(
            md.matches("### m · lexical · Independent/Full/code")
                .count(),
            1,
            "{md}"
        );
    }
}
