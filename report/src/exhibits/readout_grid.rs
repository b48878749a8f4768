//! Figures 17 and 18's numbers (D.13), from the panel `readout-grid`: GoldCopy readout of one
//! position on the 96 Copy parents, templates T0–T2 × option orders O0–O2 × Indexed/Direct ×
//! code (`gencode`) / character (`char`) output.
//!
//! Figure 17: per domain × evidence panel, a 3 × 3 grid of character − code accuracy. The
//! printed text lists each grid row by row, read as rows T0–T2 and columns O0–O2 (the reading
//! under which Figure 18's caption holds). A cell of ours is the unit contrast character −
//! code of the setting's two arms, built here ([`setting_contrasts`]); its Holm p is the exact
//! McNemar p of the panel's pairing `gencode vs char`, Holm-adjusted in its family `D.13
//! settings` (the paper's 72 tests with two models).
//!
//! Figure 18 needs no code: exhibits/figure18.toml declares its rows (the panel's contrasts
//! `Tk - T0, character - code, EVIDENCE, DOMAIN`, orders averaged within parent, Holm-adjusted
//! in `D.13 template interactions`: sixteen tests with two models) and, beside the figure's
//! asterisks, the change Figure 17's printed cells imply; it prints through [`marked_interval`].

use std::collections::BTreeSet;

use c2s_records::Endpoint;
use c2s_stats::{ContrastRow, ContrastSpec, MetricRow, Selector};
use serde::Serialize;

use super::engine::Frame;
use super::{holm_significant, run_of, signed1, PanelRun};
use crate::tables::{Group, MetricIndex, UNDEFINED};

/// The panel both figures read.
pub const PANEL: &str = "readout-grid";
/// Domains and evidence levels in the paper's panel order: (a) arithmetic indexed, (b)
/// arithmetic direct, (c) lexical indexed, (d) lexical direct.
pub const DOMAINS: [&str; 2] = ["arithmetic", "lexical"];
/// The evidence levels, as arm labels spell them: Indexed then Direct.
pub const EVIDENCE: [&str; 2] = ["indexed", "direct"];
/// The readout templates, the grids' rows.
pub const TEMPLATES: [&str; 3] = ["T0", "T1", "T2"];
/// Option orders O0–O2.
pub const ORDERS: usize = 3;

/// The arm of one setting: `GoldCopy/Full/CONTRACT/T?/EVIDENCE`, with `/O1` or `/O2` for the
/// permuted option orders.
pub fn arm(character: bool, template: usize, evidence: &str, order: usize) -> String {
    let contract = if character { "char" } else { "gencode" };
    let order = match order {
        0 => String::new(),
        o => format!("/O{o}"),
    };
    format!(
        "GoldCopy/Full/{contract}/{}/{evidence}{order}",
        TEMPLATES[template]
    )
}

/// The panel's pairing of a setting (code as the reference, character as the compared arm),
/// as listed in its family `D.13 settings`.
pub fn setting_comparison(template: usize, evidence: &str, order: usize) -> String {
    format!(
        "{} vs {}",
        arm(false, template, evidence, order),
        arm(true, template, evidence, order)
    )
}

/// The name of the unit contrast character − code of a setting (built here, not declared).
pub fn setting_contrast_name(
    domain: &str,
    evidence: &str,
    template: usize,
    order: usize,
) -> String {
    format!(
        "character - code, {}, O{order}, {evidence}, {domain}",
        TEMPLATES[template]
    )
}

/// The 36 setting contrasts character − code per model (2 domains × 2 evidence × 3 templates ×
/// 3 orders): each setting's character arm against its code arm, within parent.
pub fn setting_contrasts() -> Vec<ContrastSpec> {
    let side = |character, template, evidence: &str, order, domain: &str| {
        vec![Selector {
            arm: arm(character, template, evidence, order),
            domain: Some(domain.to_string()),
            placement: None,
            operation: None,
        }]
    };
    let mut out = Vec::new();
    for domain in DOMAINS {
        for evidence in EVIDENCE {
            for template in 0..TEMPLATES.len() {
                for order in 0..ORDERS {
                    out.push(ContrastSpec {
                        name: setting_contrast_name(domain, evidence, template, order),
                        compared: side(true, template, evidence, order, domain),
                        reference: side(false, template, evidence, order, domain),
                        family: None,
                        difference_of_differences: false,
                        endpoint: Endpoint::Correct,
                    });
                }
            }
        }
    }
    out
}

/// A fraction in percentage points with one decimal, a value that rounds to zero as `0.0`
/// (never `−0.0` from a floating-point residue of a difference of means).
fn pp1(fraction: f64) -> String {
    let v = 100.0 * fraction;
    signed1(if v.abs() < 0.05 { 0.0 } else { v })
}

/// An estimate in percentage points with its asterisk (Holm p < 0.05) and interval:
/// `72.9* [60.4, 83.3]` (the engine's filter `marked_interval`).
pub fn marked_interval(d: Option<(f64, Option<f64>, Option<f64>)>, holm_p: Option<f64>) -> String {
    let Some((v, lo, hi)) = d else {
        return UNDEFINED.to_string();
    };
    let star = if holm_significant(holm_p) == Some(true) {
        "*"
    } else {
        ""
    };
    match (lo, hi) {
        (Some(lo), Some(hi)) => format!("{}{star} [{}, {}]", pp1(v), pp1(lo), pp1(hi)),
        _ => format!("{}{star}", pp1(v)),
    }
}

/// The estimate of a contrast row: difference with its interval.
fn estimate_of(c: &ContrastRow) -> Option<(f64, Option<f64>, Option<f64>)> {
    c.estimate
        .difference
        .map(|d| (d, c.estimate.ci_low, c.estimate.ci_high))
}

/// One setting of our run.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct SettingCell {
    /// Character − code (fraction) with its 95% parent-bootstrap interval.
    pub difference: Option<(f64, Option<f64>, Option<f64>)>,
    /// McNemar p, Holm-adjusted in `D.13 settings`.
    pub holm_p: Option<f64>,
    /// The number of tests in that Holm family.
    pub family_tests: Option<u64>,
}

/// One row of our Figure 17 grids: a model's template row of one panel, orders O0–O2.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridRow {
    /// The model label of the run's records.
    pub model: String,
    /// A bank domain of [`DOMAINS`].
    pub domain: &'static str,
    /// An evidence level of [`EVIDENCE`].
    pub evidence: &'static str,
    /// The template's index in [`TEMPLATES`].
    pub template: usize,
    /// The settings at option orders O0, O1, O2.
    pub cells: [SettingCell; ORDERS],
}

/// Our grid rows from the run's metric rows (the pairings' Holm p) and its setting contrasts
/// ([`setting_contrasts`]); a row none of whose orders has a number is left out.
pub fn our_grid(rows: &[MetricRow], settings: &[ContrastRow]) -> Vec<GridRow> {
    let index = MetricIndex::new(rows);
    let models: BTreeSet<&str> = rows
        .iter()
        .map(|r| r.model.as_str())
        .chain(settings.iter().map(|c| c.model.as_str()))
        .collect();
    let mut out = Vec::new();
    for model in models {
        for domain in DOMAINS {
            for evidence in EVIDENCE {
                for template in 0..TEMPLATES.len() {
                    let cells: [SettingCell; ORDERS] = std::array::from_fn(|order| {
                        let name = setting_contrast_name(domain, evidence, template, order);
                        let contrast = settings
                            .iter()
                            .find(|c| c.model == model && c.contrast == name);
                        let group = Group {
                            model: model.to_string(),
                            domain: domain.to_string(),
                            comparison: setting_comparison(template, evidence, order),
                        };
                        let holm = index.get(&group, None, "mcnemar_p_holm");
                        let holm_p = holm.and_then(|r| r.value);
                        SettingCell {
                            difference: contrast.and_then(estimate_of),
                            holm_p,
                            family_tests: holm.and_then(|r| r.denominator),
                        }
                    });
                    if cells.iter().any(|c| *c != SettingCell::default()) {
                        out.push(GridRow {
                            model: model.to_string(),
                            domain,
                            evidence,
                            template,
                            cells,
                        });
                    }
                }
            }
        }
    }
    out
}

/// Figure 17's rows of ours (`ours`) and the Holm family sizes of this run (`family_sizes`);
/// the paper's grids are declared in exhibits/figure17.toml.
pub fn figure17_frame(ours: &[GridRow]) -> Frame {
    let family_sizes: BTreeSet<u64> = (ours.iter())
        .flat_map(|r| r.cells.iter().filter_map(|c| c.family_tests))
        .collect();
    Frame::new()
        .rows("ours", ours)
        .var("family_sizes", family_sizes)
}

/// Figure 17's numbers from the `readout-grid` panel: the 72 setting contrasts built here and
/// the pairings' Holm-adjusted McNemar p.
pub fn figure17(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, PANEL)?.load()?;
    let settings = super::binding::built_contrasts(&run, &setting_contrasts())?;
    Ok(figure17_frame(&our_grid(&run.metric_rows()?, &settings)))
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::sources::PanelTables;
    use crate::exhibits::testing::{declared, declared_with_tables};
    use c2s_stats::ContrastEstimate;

    fn contrast(model: &str, name: &str, d: (f64, f64, f64), holm_p: f64) -> ContrastRow {
        ContrastRow {
            model: model.into(),
            contrast: name.into(),
            family: None,
            estimate: ContrastEstimate {
                units: 48,
                incomplete_units: 0,
                compared_mean: None,
                reference_mean: None,
                difference: Some(d.0),
                ci_low: Some(d.1),
                ci_high: Some(d.2),
                sign_p: Some(holm_p),
            },
            sign_p_holm: Some(holm_p),
        }
    }

    /// Every printed cell is a whole number of the 48 parents of a domain (to the printed
    /// rounding); Figure 17's caption holds under the rows-as-templates reading (a check
    /// would name its nine `Tk/Oj` cells one by one; Figure 18's identities are checks).
    #[test]
    fn the_papers_cells_satisfy_the_captions() {
        let mut qwen3_starred = Vec::new();
        for p in crate::exhibits::paper::records("figure17").unwrap() {
            let model = p.get_attr("model").unwrap().to_string();
            for t in TEMPLATES {
                for o in 0..ORDERS {
                    let cell = |suffix: &str| p.get_attr(&format!("{t}/O{o}{suffix}")).unwrap();
                    let v = f64::try_from(cell("")).unwrap();
                    let k = v * 48.0 / 100.0;
                    assert!((k - k.round()).abs() < 0.03, "{model} {t}/O{o} {v}");
                    if cell("*").is_true() {
                        // (e–h): "Qwen3.5-27B's corrected differences favor codes".
                        assert!(model != "Qwen3.5-27B" || v < 0.0, "{model} {t}/O{o} {v}");
                        if model == "Qwen3-8B" {
                            qwen3_starred.push(v);
                        }
                    }
                }
            }
        }
        // (a–d): "corrected code and character advantages in different settings".
        assert!(qwen3_starred.iter().any(|v| *v > 0.0) && qwen3_starred.iter().any(|v| *v < 0.0));
    }

    #[test]
    fn a_difference_that_rounds_to_zero_prints_without_a_sign() {
        assert_eq!(
            marked_interval(Some((-1e-17, Some(-0.056), Some(0.049))), Some(1.0)),
            "0.0 [−5.6, 4.9]"
        );
        assert_eq!(
            marked_interval(Some((-0.5, None, None)), Some(0.01)),
            "−50.0*"
        );
        assert_eq!(marked_interval(None, Some(0.01)), UNDEFINED);
    }

    #[test]
    fn the_setting_arms_are_the_panels_pairings() {
        assert_eq!(
            setting_comparison(0, "indexed", 0),
            "GoldCopy/Full/gencode/T0/indexed vs GoldCopy/Full/char/T0/indexed"
        );
        assert_eq!(
            setting_comparison(2, "direct", 2),
            "GoldCopy/Full/gencode/T2/direct/O2 vs GoldCopy/Full/char/T2/direct/O2"
        );
        let specs = setting_contrasts();
        assert_eq!(specs.len(), 36);
        let names: BTreeSet<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), 36);
    }

    #[test]
    fn figure17_layout_has_the_grids_and_differences() {
        let settings = vec![
            contrast(
                "m",
                &setting_contrast_name("arithmetic", "indexed", 0, 0),
                (0.75, 0.625, 0.875),
                0.001,
            ),
            contrast(
                "m",
                &setting_contrast_name("arithmetic", "indexed", 0, 1),
                (0.5, 0.375, 0.625),
                0.2,
            ),
        ];
        let holm = MetricRow {
            value: Some(0.001),
            denominator: Some(72),
            ..MetricRow::empty(
                0,
                "m",
                Some(c2s_records::Domain::Arithmetic),
                None,
                &setting_comparison(0, "indexed", 0),
                c2s_records::Metric::McnemarPHolm,
            )
        };
        let frame = figure17_frame(&our_grid(&[holm], &settings));
        let md = declared("figure17", &[], frame, "Qwen3-8B");
        for want in [
            "| Model | Domain | Evidence | Template | O0 | O1 | O2 |",
            "| m | Arithmetic | Indexed | T0 | 75.0* [62.5, 87.5] | 50.0 [37.5, 62.5] | – |",
            "| m | Arithmetic | Indexed | T0 | 0.001 | – | – |",
            "| Model | Panel | Domain | Evidence | Template | O0 | O1 | O2 |",
            "| Qwen3-8B | (a) | Arithmetic | Indexed | T0 | 72.9* | 60.4* | 70.8* |",
            "| Qwen3.5-27B | (h) | Lexical | Direct | T2 | −66.7* | −85.4* | −81.2* |",
            "## This run minus the paper (Qwen3-8B)",
            "| Model | Domain | Evidence | Template | Paper panel | Δ O0 | Δ O1 | Δ O2 | Asterisks agree |",
            "| m | Arithmetic | Indexed | T0 | Qwen3-8B (a) | +2.1 | −10.4 | – | 1/1 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert!(md.contains("family size in this run: 72"));
    }

    #[test]
    fn figure18_layout_has_the_rows_and_differences() {
        let interaction = |name: &str, d, holm_p| ContrastRow {
            family: Some("D.13 template interactions".into()),
            ..contrast("m", name, d, holm_p)
        };
        let panel = PanelTables {
            panel: PANEL.into(),
            contrasts: vec![
                interaction(
                    "T1 - T0, character - code, indexed, arithmetic",
                    (-0.5, -0.625, -0.375),
                    0.0004,
                ),
                interaction(
                    "T2 - T0, character - code, direct, lexical",
                    (-0.75, -0.875, -0.625),
                    0.2,
                ),
                contrast("m", "unrelated", (0.0, 0.0, 0.0), 1.0),
            ],
            cells: Vec::new(),
        };
        let md = declared_with_tables("figure18", &[], &[panel], Frame::new(), "Jev");
        assert!(md.contains("over this run's 2 tests"), "{md}");
        for want in [
            "| Model | Domain / evidence | Contrast | Change in character − code gap, pp [95% CI] | Holm p |",
            "| m | Arithmetic / indexed | T1 − T0 | −50.0* [−62.5, −37.5] | 4.0e-4 |",
            "| Qwen3-8B | Arithmetic / indexed | T1 − T0 | * | −54.8 |",
            "| Qwen3.5-27B | Arithmetic / indexed | T1 − T0 | no | 0.7 |",
            "## This run minus the paper (Qwen3-8B, Qwen3.5-27B)",
            "| m | Arithmetic / indexed | T1 − T0 | Qwen3-8B | +4.8 | yes / yes |",
            "| m | Lexical / direct | T2 − T0 | Qwen3.5-27B | +2.8 | no / yes |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
