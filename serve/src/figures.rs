//! The page's figures, drawn by the report's figure code ([`c2s_report::figures`]) as SVG:
//! Native EM and SCR by length per (model, domain), and reliability diagrams per (model,
//! domain, arm) from the confidence counts.

use std::collections::BTreeMap;

use serde::Serialize;

use c2s_records::Domain;
use c2s_stats::{
    calibration_report_counts, ConfidenceKey, MetricRow, Reliability, ScoreKind, StatsCounts,
    StatsKey,
};

use c2s_report::figures::{svg_string, ReliabilityFigure};
use c2s_report::tables::{Group, MetricIndex};

/// One figure of the page.
#[derive(Debug, Clone, Serialize)]
pub struct FigureSvg {
    /// The caption the page shows above it (model, domain and, for reliability, arm).
    pub title: String,
    /// The figure as a complete SVG document.
    pub svg: String,
}

/// The reliability diagrams of one (model, domain, arm): (score, reliability, strings) per
/// score kind.
#[derive(Debug, Clone)]
pub struct ReliabilityPanels {
    /// The model label of the counts.
    pub model: String,
    /// The item domain, as its config name.
    pub domain: String,
    /// The arm whose trajectories carry the confidence scores.
    pub arm: String,
    /// One panel per score kind, in [`ScoreKind::ALL`] order: the kind, its ten-bin
    /// reliability diagram, and the trajectories with a confidence composite it counts.
    pub panels: Vec<(ScoreKind, Reliability, u64)>,
}

/// The reliability diagrams of every arm with confidence counts (what the report draws from
/// the trajectories, here from their counts).
pub fn reliability_panels(counts: &StatsCounts) -> Vec<ReliabilityPanels> {
    let mut groups: BTreeMap<(String, Domain, String), BTreeMap<ConfidenceKey, u64>> =
        BTreeMap::new();
    for (key, n) in counts.cells() {
        if let StatsKey::Confidence {
            model,
            domain,
            arm,
            key,
        } = key
        {
            *groups
                .entry((model, domain, arm))
                .or_default()
                .entry(key)
                .or_default() += n;
        }
    }
    groups
        .into_iter()
        .filter_map(|((model, domain, arm), keys)| {
            let mut panels = Vec::new();
            for kind in ScoreKind::ALL {
                match calibration_report_counts(&keys, kind) {
                    Ok(r) => panels.push((kind, r.reliability, r.n)),
                    Err(e) => {
                        tracing::warn!("live monitor: confidence of {model}/{domain}/{arm}: {e}");
                        return None;
                    }
                }
            }
            Some(ReliabilityPanels {
                model,
                domain: domain.to_string(),
                arm,
                panels,
            })
        })
        .collect()
}

/// The figures of a snapshot: EM and SCR by length, then the reliability diagrams. A figure
/// that cannot be drawn is left out with a warning.
pub fn figures(rows: &[MetricRow], reliability: &[ReliabilityPanels]) -> Vec<FigureSvg> {
    let index = MetricIndex::new(rows);
    let mut by_md: BTreeMap<(String, String), Vec<Group>> = BTreeMap::new();
    for g in index.paired_groups() {
        by_md
            .entry((g.model.clone(), g.domain.clone()))
            .or_default()
            .push(g);
    }
    let mut out = Vec::new();
    for ((model, domain), groups) in &by_md {
        let fig = c2s_report::by_length_figure(&index, model, domain, groups);
        push(
            &mut out,
            format!("Native accuracy and SCR by length — {model} · {domain}"),
            svg_string(&fig),
        );
    }
    for r in reliability {
        let title = format!("Reliability — {} · {} · {}", r.model, r.domain, r.arm);
        let fig = ReliabilityFigure {
            title: title.clone(),
            panels: r.panels.clone(),
        };
        push(&mut out, title, svg_string(&fig));
    }
    out
}

fn push(out: &mut Vec<FigureSvg>, title: String, svg: anyhow::Result<String>) {
    match svg {
        Ok(svg) => out.push(FigureSvg { title, svg }),
        Err(e) => tracing::warn!("live monitor: drawing {title}: {e:#}"),
    }
}
