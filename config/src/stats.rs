//! `[stats]`: bootstrap and snapshot settings, Holm families, unit contrasts and cells, and
//! the checks that they name configured arms.

use serde::{Deserialize, Serialize};

use c2s_records::{comparison_label, Arm, ArmSpec, FamilyScope};

use crate::error::{ConfigError, ConfigText, Span};
use crate::paper_families::PaperFamilyEntry;

/// A Holm family: comparisons corrected together.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FamilyEntry {
    /// The family's name (as `[[stats.paper_families]]` names it).
    pub name: String,
    /// Comparison labels `"<native> vs <serial>"`.
    pub comparisons: Vec<String>,
    /// `per_model_domain` (default), `per_model`, `per_domain` or `global`.
    #[serde(default)]
    pub scope: FamilyScope,
}

/// The paper's primary Holm family: "The primary six Native/Serial exact McNemar tests share a
/// Holm correction at 0.05" (A.6) — Native against Serial under the code contract (Table 1's
/// code rows), across models and domains. `None` when `comparisons` lacks that comparison.
pub fn primary_family(comparison_labels: &[String]) -> Option<FamilyEntry> {
    let primary = comparison_label(
        &ArmSpec::new(Arm::Native).label(),
        &ArmSpec::new(Arm::Serial).label(),
    );
    comparison_labels
        .iter()
        .find(|c| **c == primary)
        .map(|c| FamilyEntry {
            name: "primary".into(),
            comparisons: vec![c.clone()],
            scope: FamilyScope::Global,
        })
}

/// `[stats]`: statistics and snapshots.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct StatsSection {
    /// Bootstrap draws per snapshot (9,999; 99,999 for final tables).
    pub bootstrap_draws: u32,
    /// Bootstrap seed.
    pub seed: u64,
    /// Interval level.
    pub level: f64,
    /// Write a metric snapshot every this many new outcomes…
    pub snapshot_every: u64,
    /// …or every this many seconds (and always at the end).
    pub snapshot_seconds: f64,
    /// Confidence-calibration metrics (default true). `false`: no calibration rows, and a live
    /// run keeps no per-string confidence keys (bounded statistics state for endless streams).
    pub calibration: bool,
    /// Holm families. Default: the paper's primary family (A.6), Native/code vs
    /// Serial/Full/code across models and domains, when the run has that comparison; the
    /// resolved families are what the manifest records.
    pub families: Vec<FamilyEntry>,
    /// Unit contrasts (`choice2seq contrasts`, the report): mean within-unit differences
    /// between two sets of cells, e.g. B.4's letter-minus-digit Serial EM or D.7's factor
    /// contrasts.
    pub contrasts: Vec<ContrastEntry>,
    /// Cell summaries beside the contrasts: one arm's correct count on the selected items,
    /// and with `native` its joint/Native counts (D.7's Table D8).
    pub cells: Vec<CellEntry>,
    /// The Holm families the paper declares for this panel, with the paper's number of tests
    /// (`paper_families.rs`); the report sets each beside the family this run computed.
    pub paper_families: Vec<PaperFamilyEntry>,
}

/// Which trajectories a side of a contrast (or a cell) holds: one arm, optionally only on
/// items of one domain, placement or operation.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SelectorEntry {
    /// A configured arm label.
    pub arm: String,
    /// Only items of this domain (a known domain name).
    #[serde(default)]
    pub domain: Option<String>,
    /// `early` or `late` (symbolic items).
    #[serde(default)]
    pub placement: Option<String>,
    /// `copy` or `reverse` (symbolic items).
    #[serde(default)]
    pub operation: Option<String>,
}

/// `[[stats.contrasts]]`: compared − reference, averaged within each unit (a symbolic item's
/// base or source, else the item) and then over units.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ContrastEntry {
    /// The contrast's name, unique among `[[stats.contrasts]]`; its rows carry it.
    pub name: String,
    /// The cells on the minuend side (at least one).
    pub compared: Vec<SelectorEntry>,
    /// The cells subtracted (at least one).
    pub reference: Vec<SelectorEntry>,
    /// Contrasts naming the same family share a Holm correction over every model; without a
    /// family a contrast is corrected alone.
    #[serde(default)]
    pub family: Option<String>,
    /// A difference of differences `(a − b) − (c − d)`, written as `compared = [a, d]`,
    /// `reference = [b, c]` with one trajectory per arm in each unit: the sides' mean
    /// difference is half of it, so the estimate and interval are doubled (the sign test is
    /// unchanged). B.5's extra conflict loss, D.13's template interactions.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub difference_of_differences: bool,
    /// What each trajectory is scored on: `correct` (gold EM, the default) or `fidelity` (the
    /// output equals the supplied plan; copy arms only, A.5's fresh-plan indexing contrasts).
    #[serde(default, skip_serializing_if = "c2s_records::Endpoint::is_correct")]
    pub endpoint: c2s_records::Endpoint,
}

/// `[[stats.cells]]`: one arm's correct count on selected items, with `native` also the items
/// both arms got right over those the Native arm got right.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CellEntry {
    /// The cell's name, unique among `[[stats.cells]]`; its rows carry it.
    pub name: String,
    /// The configured arm label whose correct count the cell holds.
    pub arm: String,
    /// A second configured arm label, the Native side: with it the cell also holds that arm's
    /// correct count and SCR, the items both arms got right over those it got right.
    #[serde(default)]
    pub native: Option<String>,
    /// Only items of this domain (a known domain name).
    #[serde(default)]
    pub domain: Option<String>,
    /// `early` or `late` (symbolic items).
    #[serde(default)]
    pub placement: Option<String>,
    /// `copy` or `reverse` (symbolic items).
    #[serde(default)]
    pub operation: Option<String>,
}

impl Default for StatsSection {
    fn default() -> Self {
        StatsSection {
            bootstrap_draws: 9999,
            seed: 20261005,
            level: 0.95,
            snapshot_every: 100,
            snapshot_seconds: 30.0,
            calibration: true,
            families: vec![],
            contrasts: vec![],
            cells: vec![],
            paper_families: vec![],
        }
    }
}

/// `[[stats.contrasts]]` and `[[stats.cells]]` name configured arms, known domains,
/// placements and operations, and distinct names; a fidelity contrast names copy arms only
/// (`copy_labels`: the arms with a supplied plan to be faithful to).
pub(crate) fn check_contrasts(
    stats: &StatsSection,
    labels: &[String],
    copy_labels: &[String],
) -> Result<(), (String, String)> {
    let check = |field: String,
                 arm: &str,
                 domain: &Option<String>,
                 placement: &Option<String>,
                 operation: &Option<String>|
     -> Result<(), (String, String)> {
        if !labels.iter().any(|l| l == arm) {
            return Err((
                format!("{field}.arm"),
                format!("`{arm}` is not a configured arm ({})", labels.join(", ")),
            ));
        }
        if let Some(d) = domain {
            if c2s_records::Domain::parse(d).is_none() {
                return Err((format!("{field}.domain"), format!("unknown domain `{d}`")));
            }
        }
        if let Some(p) = placement {
            if !["early", "late"].contains(&p.as_str()) {
                return Err((
                    format!("{field}.placement"),
                    format!("unknown placement `{p}` (early, late)"),
                ));
            }
        }
        if let Some(o) = operation {
            if !["copy", "reverse"].contains(&o.as_str()) {
                return Err((
                    format!("{field}.operation"),
                    format!("unknown operation `{o}` (copy, reverse)"),
                ));
            }
        }
        Ok(())
    };
    let mut names = std::collections::BTreeSet::new();
    for (i, c) in stats.contrasts.iter().enumerate() {
        if !names.insert(c.name.as_str()) {
            return Err((
                format!("stats.contrasts[{i}].name"),
                format!("contrast `{}` is declared twice", c.name),
            ));
        }
        for (side, sels) in [("compared", &c.compared), ("reference", &c.reference)] {
            if sels.is_empty() {
                return Err((
                    format!("stats.contrasts[{i}].{side}"),
                    "needs at least one selector".into(),
                ));
            }
            for (j, s) in sels.iter().enumerate() {
                let field = format!("stats.contrasts[{i}].{side}[{j}]");
                check(field.clone(), &s.arm, &s.domain, &s.placement, &s.operation)?;
                if c.endpoint == c2s_records::Endpoint::Fidelity && !copy_labels.contains(&s.arm) {
                    return Err((
                        format!("{field}.arm"),
                        format!(
                            "`{}` has no supplied plan, so a contrast with endpoint = \
                             \"fidelity\" cannot score it (copy arms: {})",
                            s.arm,
                            copy_labels.join(", ")
                        ),
                    ));
                }
            }
        }
    }
    let mut names = std::collections::BTreeSet::new();
    for (i, c) in stats.cells.iter().enumerate() {
        if !names.insert(c.name.as_str()) {
            return Err((
                format!("stats.cells[{i}].name"),
                format!("cell `{}` is declared twice", c.name),
            ));
        }
        let field = format!("stats.cells[{i}]");
        check(field.clone(), &c.arm, &c.domain, &c.placement, &c.operation)?;
        if let Some(n) = &c.native {
            check(format!("{field}.native"), n, &None, &None, &None)?;
        }
    }
    Ok(())
}

/// Check `[stats]`: its settings, that families name configured comparisons (`comparisons`,
/// paper-layout labels) and contrasts and cells configured arms, and the paper families it
/// declares.
pub(crate) fn check_stats(
    at: &ConfigText<'_>,
    stats: &StatsSection,
    span: &Option<Span>,
    comparisons: &[(String, String)],
    arms: &[ArmSpec],
) -> Result<(), ConfigError> {
    if !(stats.level > 0.0 && stats.level < 1.0) {
        return Err(at.error(
            span.clone(),
            "stats.level",
            format!("{} is not in (0, 1)", stats.level),
        ));
    }
    if stats.bootstrap_draws == 0 {
        return Err(at.error(span.clone(), "stats.bootstrap_draws", "must be at least 1"));
    }
    if stats.snapshot_every == 0 || stats.snapshot_seconds.is_nan() || stats.snapshot_seconds <= 0.0
    {
        return Err(at.error(
            span.clone(),
            "stats.snapshot_every",
            "snapshot_every and snapshot_seconds must be positive",
        ));
    }
    let comparison_labels: Vec<String> = comparisons
        .iter()
        .map(|(a, b)| comparison_label(a, b))
        .collect();
    for (i, f) in stats.families.iter().enumerate() {
        for c in &f.comparisons {
            if !comparison_labels.contains(c) {
                return Err(at.error(
                    span.clone(),
                    format!("stats.families[{i}].comparisons"),
                    format!(
                        "`{c}` is not a configured comparison ({})",
                        comparison_labels.join("; ")
                    ),
                ));
            }
        }
    }
    let labels: Vec<String> = arms.iter().map(ArmSpec::label).collect();
    let copy_labels: Vec<String> = arms
        .iter()
        .filter(|a| a.arm.is_copy())
        .map(ArmSpec::label)
        .collect();
    check_contrasts(stats, &labels, &copy_labels)
        .map_err(|(field, message)| at.error(span.clone(), field, message))?;
    crate::paper_families::check_paper_families(stats)
        .map_err(|(field, message)| at.error(span.clone(), field, message))?;
    Ok(())
}
