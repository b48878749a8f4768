//! Tables D3 and D4, direct-output prompt robustness (D.4), from
//! `config/panels/prompt-variants-direct.toml`: "Qwen3.5-27B uses 96 parents per domain, 16
//! per length selected before outcomes, under three interleaved templates. Each has its own
//! Native request and Full Serial trajectory."
//!
//! Table D3: "Prompt wording changes Qwen content accuracy under valid character output. SCR
//! uses template-specific Native successes. Changes from v1 have paired 95% intervals and
//! four-test Holm correction." Columns: Domain, Prompt, Serial EM, Retained, SCR [95% CI],
//! EM change [95% CI], Holm p. Ours: each template's pairing Native/string/vN vs
//! Serial/Full/char/vN; the change is the panel's `vN - v1, Serial` unit contrast; its Holm p
//! the exact McNemar of Serial v1 vs vN in the D.4 family.
//!
//! Table D4: "Worst-template retention remains well below Native accuracy. Direct Qwen3.5-27B
//! SCR (%) has 95% whole-item bootstrap intervals. Each domain resamples 96 parents and
//! recomputes its worst setting." Columns: Domain, Mean [95% CI], Worst [95% CI]
//! ([`c2s_stats::template_scr`]).

use std::collections::BTreeMap;

use c2s_records::Trajectory;
use c2s_stats::{ContrastRow, Estimate, MetricRow, StatsConfig, TemplateOutcomes};

use super::paper::PaperTable;
use super::{distinct, paper_domain, pp_diff, printed_interval, run_of, signed1, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{pct, ratio, scr_cell, MetricIndex, UNDEFINED};

/// The three templates; v1 arms carry no suffix, v2 and v3 end in `/v2`, `/v3`.
pub const VARIANTS: [&str; 3] = ["v1", "v2", "v3"];
/// The model Tables D3 and D4 print.
pub const PAPER_MODEL: &str = "Qwen3.5-27B";

/// A row of Table D3 as printed: domain, prompt, Serial EM, retained / Native correct,
/// SCR [CI], EM change [CI] and Holm p (empty for the reference v1).
pub type D3Row = (
    String,
    String,
    f64,
    (u64, u64),
    (f64, f64, f64),
    [Option<f64>; 3],
    Option<String>,
);

/// Table D3's six printed rows (exhibits/tableD3.tsv).
pub static PAPER_D3: PaperTable<D3Row> = PaperTable::new("tableD3");

/// A printed value with its interval.
pub type Printed = (f64, f64, f64);

/// Table D4 as printed: domain, mean [CI], worst [CI].
pub static PAPER_D4: PaperTable<(String, Printed, Printed)> = PaperTable::new("tableD4");

/// The template of an arm label (`Serial/Full/char/v2` → 1); v1 labels carry no suffix.
fn variant_of(arm: &str) -> usize {
    VARIANTS
        .iter()
        .position(|v| arm.ends_with(&format!("/{v}")))
        .unwrap_or(0)
}

/// One of our Table D3 rows.
#[derive(Debug, Clone, PartialEq)]
pub struct OurD3Row {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The template's index in [`VARIANTS`].
    pub variant: usize,
    /// Serial EM as a fraction; `None` when undefined.
    pub serial_em: Option<f64>,
    /// Retained / template-specific Native correct, as printed.
    pub retained: String,
    /// SCR with its interval in percent, as printed.
    pub scr: String,
    /// The `vN - v1, Serial` contrast in points with its interval; `reference` for v1.
    pub change: String,
    /// Holm-corrected exact McNemar p of Serial v1 vs vN as printed; `N/A` for v1.
    pub holm_p: String,
}

/// Our Table D3 rows: each template's Native/Serial pairing with its change from v1,
/// lexical first then v1–v3.
pub fn d3_rows(rows: &[MetricRow], contrasts: &[ContrastRow]) -> Vec<OurD3Row> {
    let index = MetricIndex::new(rows);
    let groups = index.paired_groups();
    let mut out = Vec::new();
    for g in &groups {
        let Some((native, serial)) = g.comparison.split_once(" vs ") else {
            continue;
        };
        if !(native.starts_with("Native/") && serial.starts_with("Serial/")) {
            continue;
        }
        let variant = variant_of(serial);
        let (change, holm_p) = if variant == 0 {
            ("reference".to_string(), "N/A".to_string())
        } else {
            let v = VARIANTS[variant];
            let contrast = contrasts.iter().find(|c| {
                c.model == g.model && c.contrast == format!("{v} - v1, Serial, {}", g.domain)
            });
            let change = contrast.map_or(UNDEFINED.to_string(), |c| {
                match (c.estimate.difference, c.estimate.ci_low, c.estimate.ci_high) {
                    (Some(d), Some(lo), Some(hi)) => {
                        printed_interval((100.0 * d, 100.0 * lo, 100.0 * hi))
                    }
                    (Some(d), _, _) => signed1(100.0 * d),
                    _ => UNDEFINED.to_string(),
                }
            });
            let test = groups.iter().find(|t| {
                t.model == g.model
                    && t.domain == g.domain
                    && t.comparison == format!("Serial/Full/char vs Serial/Full/char/{v}")
            });
            let p = test.and_then(|t| index.value(t, None, "mcnemar_p_holm"));
            let p = p.map_or(UNDEFINED.to_string(), |p| {
                if p < 0.001 {
                    "<0.001".to_string()
                } else {
                    format!("{p:.3}")
                }
            });
            (change, p)
        };
        out.push(OurD3Row {
            model: g.model.clone(),
            domain: paper_domain(&g.domain).to_string(),
            variant,
            serial_em: index.value(g, None, "serial_em"),
            retained: ratio(index.get(g, None, "scr")),
            scr: scr_cell(&index, g, None),
            change,
            holm_p,
        });
    }
    // The paper's order: lexical before math, then v1–v3.
    out.sort_by(|a, b| {
        (&a.model, a.domain != "lexical", &a.domain, a.variant).cmp(&(
            &b.model,
            b.domain != "lexical",
            &b.domain,
            b.variant,
        ))
    });
    out
}

/// Per (model, domain): each parent's (Native, Serial) correctness under v1–v3.
pub fn template_outcomes(
    trajectories: &[Trajectory],
) -> BTreeMap<(String, String), Vec<TemplateOutcomes>> {
    // (model, domain, parent) → (length, (Native, Serial) correct per template).
    type Parent = (String, String, String);
    let mut parents: BTreeMap<Parent, (u32, [(bool, bool); 3])> = BTreeMap::new();
    for t in trajectories {
        let kind = t.arm.split('/').next().unwrap_or("");
        let native = match kind {
            "Native" => true,
            "Serial" => false,
            _ => continue,
        };
        let v = variant_of(&t.arm);
        let e = parents
            .entry((
                t.model.clone(),
                t.domain.as_str().to_string(),
                t.item_id.clone(),
            ))
            .or_insert((t.length as u32, [(false, false); 3]));
        if native {
            e.1[v].0 = t.correct;
        } else {
            e.1[v].1 = t.correct;
        }
    }
    let mut out: BTreeMap<(String, String), Vec<TemplateOutcomes>> = BTreeMap::new();
    for ((model, domain, item), (length, outcomes)) in parents {
        out.entry((model, domain))
            .or_default()
            .push(TemplateOutcomes {
                item_id: item,
                stratum: length,
                outcomes: outcomes.to_vec(),
            });
    }
    out
}

/// One of our Table D4 rows.
#[derive(Debug, Clone, PartialEq)]
pub struct OurD4Row {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// Mean SCR over the three templates (fraction) with its interval; `None` when undefined.
    pub mean: Option<Estimate>,
    /// Worst-template SCR (fraction), recomputed in every draw; `None` when undefined.
    pub worst: Option<Estimate>,
}

/// Our Table D4 rows: mean and worst-template SCR per (model, domain), with a parent
/// bootstrap within length.
pub fn d4_rows(trajectories: &[Trajectory], stats: &StatsConfig) -> anyhow::Result<Vec<OurD4Row>> {
    let mut out = Vec::new();
    for ((model, domain), items) in template_outcomes(trajectories) {
        let r = c2s_stats::template_scr(&items, &stats.bootstrap(), stats.level)?;
        out.push(OurD4Row {
            model,
            domain: paper_domain(&domain).to_string(),
            mean: r.as_ref().map(|r| r.mean),
            worst: r.as_ref().map(|r| r.worst),
        });
    }
    Ok(out)
}

fn estimate_cell(e: Option<Estimate>) -> String {
    match e {
        Some(Estimate {
            value: Some(v),
            interval: Some(i),
            ..
        }) => printed_interval((100.0 * v, 100.0 * i.low, 100.0 * i.high)),
        Some(Estimate { value: Some(v), .. }) => signed1(100.0 * v),
        _ => UNDEFINED.to_string(),
    }
}

fn d3_header() -> Vec<String> {
    [
        "Domain",
        "Prompt",
        "Serial EM",
        "Retained",
        "SCR [95% CI]",
        "EM change [95% CI]",
        "Holm p",
    ]
    .map(String::from)
    .to_vec()
}

/// Table D3's document: our rows per model, the paper's rows as printed, and our Serial EM
/// minus the paper's.
pub fn d3_layout(ours: &[OurD3Row]) -> anyhow::Result<Doc> {
    let paper_rows = PAPER_D3.rows()?;
    let mut doc =
        Doc::new("Table D3: Prompt wording changes content accuracy under character output");
    doc.p(
        "SCR uses template-specific Native successes. Changes from v1 have paired 95% intervals \
         and four-test Holm correction.",
    );
    let models = distinct(ours.iter().map(|r| r.model.as_str()));
    for model in models {
        doc.h(2, format!("This run: {model}"));
        doc.table(Table {
            text_columns: 2,
            header: d3_header(),
            rows: ours
                .iter()
                .filter(|r| r.model == model)
                .map(|r| {
                    vec![
                        r.domain.clone(),
                        VARIANTS[r.variant].to_string(),
                        pct(r.serial_em),
                        r.retained.clone(),
                        r.scr.clone(),
                        r.change.clone(),
                        r.holm_p.clone(),
                    ]
                })
                .collect(),
            notes: vec![
                "EM change: the panel's vN − v1 Serial unit contrast; Holm p: exact McNemar of \
                 Serial v1 vs vN in the D.4 family."
                    .into(),
            ],
        });
    }
    doc.h(2, format!("The paper (Table D3, {PAPER_MODEL})"));
    doc.table(Table {
        text_columns: 2,
        header: d3_header(),
        rows: paper_rows
            .iter()
            .map(|(d, v, em, (k, n), scr, change, holm_p)| {
                let (c, p) = match (change, holm_p) {
                    ([Some(c), Some(lo), Some(hi)], Some(p)) => {
                        (printed_interval((*c, *lo, *hi)), p.clone())
                    }
                    _ => ("reference".to_string(), "N/A".to_string()),
                };
                vec![
                    d.to_string(),
                    v.to_string(),
                    format!("{em:.1}"),
                    format!("{k}/{n}"),
                    printed_interval(*scr),
                    c,
                    p,
                ]
            })
            .collect(),
        notes: vec![],
    });
    doc.h(2, format!("This run minus {PAPER_MODEL}"));
    let mut diff = Table {
        text_columns: 3,
        header: ["Model", "Domain", "Prompt", "Δ Serial EM"]
            .map(String::from)
            .to_vec(),
        ..Table::default()
    };
    for r in ours {
        let Some(p) = paper_rows
            .iter()
            .find(|p| p.0 == r.domain && p.1 == VARIANTS[r.variant])
        else {
            continue;
        };
        diff.rows.push(vec![
            r.model.clone(),
            r.domain.clone(),
            VARIANTS[r.variant].to_string(),
            pp_diff(r.serial_em, p.2),
        ]);
    }
    diff.notes.push("Percentage points.".into());
    doc.table(diff);
    Ok(doc)
}

/// Table D4's document: our mean and worst SCR per model, the paper's rows, and ours minus
/// the paper's.
pub fn d4_layout(ours: &[OurD4Row]) -> anyhow::Result<Doc> {
    let paper_rows = PAPER_D4.rows()?;
    let header: Vec<String> = ["Domain", "Mean [95% CI]", "Worst [95% CI]"]
        .map(String::from)
        .to_vec();
    let mut doc = Doc::new("Table D4: Worst-template retention remains well below Native accuracy");
    doc.p(
        "SCR (%) with 95% whole-item bootstrap intervals. Each domain resamples its parents \
         within length and recomputes its worst setting.",
    );
    let capital = |d: &str| match d {
        "math" => "Arithmetic".to_string(),
        "lexical" => "Lexical".to_string(),
        other => other.to_string(),
    };
    let models = distinct(ours.iter().map(|r| r.model.as_str()));
    for model in models {
        doc.h(2, format!("This run: {model}"));
        doc.table(Table {
            text_columns: 1,
            header: header.clone(),
            rows: ours
                .iter()
                .filter(|r| r.model == model)
                .map(|r| {
                    vec![
                        capital(&r.domain),
                        estimate_cell(r.mean),
                        estimate_cell(r.worst),
                    ]
                })
                .collect(),
            notes: vec![
                "Mean: the three templates' SCRs averaged; worst: their minimum; a draw without \
                 a Native success under some template is dropped."
                    .into(),
            ],
        });
    }
    doc.h(2, format!("The paper (Table D4, {PAPER_MODEL})"));
    doc.table(Table {
        text_columns: 1,
        header,
        rows: paper_rows
            .iter()
            .map(|(d, m, w)| vec![d.to_string(), printed_interval(*m), printed_interval(*w)])
            .collect(),
        notes: vec![],
    });
    doc.h(2, format!("This run minus {PAPER_MODEL}"));
    let mut diff = Table {
        text_columns: 2,
        header: ["Model", "Domain", "Δ Mean", "Δ Worst"]
            .map(String::from)
            .to_vec(),
        ..Table::default()
    };
    for r in ours {
        let Some((_, m, w)) = paper_rows.iter().find(|p| p.0 == capital(&r.domain)) else {
            continue;
        };
        diff.rows.push(vec![
            r.model.clone(),
            capital(&r.domain),
            pp_diff(r.mean.and_then(|e| e.value), m.0),
            pp_diff(r.worst.and_then(|e| e.value), w.0),
        ]);
    }
    diff.notes.push("Percentage points.".into());
    doc.table(diff);
    Ok(doc)
}

/// Table D3 from the `prompt-variants-direct` panel's run.
pub fn table_d3(runs: &[PanelRun]) -> anyhow::Result<Doc> {
    let run = run_of(runs, "prompt-variants-direct")?.load()?;
    let (contrasts, _) = run.contrast_tables()?;
    d3_layout(&d3_rows(&run.metric_rows()?, &contrasts))
}

/// Table D4 from the `prompt-variants-direct` panel's trajectories.
pub fn table_d4(runs: &[PanelRun]) -> anyhow::Result<Doc> {
    let run = run_of(runs, "prompt-variants-direct")?.load()?;
    d4_layout(&d4_rows(&run.trajectories, &run.stats)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::testing::paired_rows;

    /// Table D4's point values are the means and minima of Table D3's SCRs.
    #[test]
    fn table_d4_is_table_d3_averaged_and_minimized() {
        for (domain, mean, worst) in PAPER_D4.rows().unwrap() {
            let d = if domain == "Arithmetic" {
                "math"
            } else {
                "lexical"
            };
            let scrs: Vec<f64> = PAPER_D3
                .rows()
                .unwrap()
                .iter()
                .filter(|r| r.0 == d)
                .map(|r| r.4 .0)
                .collect();
            let m = scrs.iter().sum::<f64>() / 3.0;
            assert!((m - mean.0).abs() < 0.06, "{domain}: {m}");
            let w = scrs.iter().copied().fold(f64::INFINITY, f64::min);
            assert_eq!(w, worst.0, "{domain}");
        }
        assert_eq!(variant_of("Serial/Full/char/v3"), 2);
        assert_eq!(variant_of("Native/string"), 0);
    }

    #[test]
    fn table_d3_has_the_papers_columns_rows_and_differences() {
        let relabel = |rows: Vec<MetricRow>, comparison: &str| -> Vec<MetricRow> {
            rows.into_iter()
                .map(|r| MetricRow {
                    comparison: comparison.into(),
                    ..r
                })
                .collect()
        };
        let mut rows = relabel(
            paired_rows("m", "arithmetic", [4, 4, 0, 8], (0.2, 0.8)),
            "Native/string vs Serial/Full/char",
        );
        rows.extend(relabel(
            paired_rows("m", "arithmetic", [6, 2, 2, 6], (0.5, 1.0)),
            "Native/string/v2 vs Serial/Full/char/v2",
        ));
        let md = d3_layout(&d3_rows(&rows, &[])).unwrap().markdown();
        for want in [
            "| Domain | Prompt | Serial EM | Retained | SCR [95% CI] | EM change [95% CI] | Holm p |",
            "| math | v1 | 25.0 | 4/8 | 50.0 [20.0, 80.0] | reference | N/A |",
            "| math | v2 | 50.0 | 6/8 | 75.0 [50.0, 100.0] | – | – |",
            "| math | v2 | 28.1 | 27/94 | 28.7 [21.5, 35.8] | 20.8 [13.5, 28.1] | <0.001 |",
            "| m | math | v2 | +21.9 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    #[test]
    fn table_d4_lays_out_mean_and_worst() {
        let e = |v: f64, lo: f64, hi: f64| Estimate {
            value: Some(v),
            interval: Some(c2s_stats::Interval { low: lo, high: hi }),
            defined_draws: 99,
            dropped_draws: 0,
        };
        let ours = [OurD4Row {
            model: "m".into(),
            domain: "math".into(),
            mean: Some(e(0.2, 0.1, 0.3)),
            worst: Some(e(0.05, 0.0, 0.1)),
        }];
        let md = d4_layout(&ours).unwrap().markdown();
        for want in [
            "| Domain | Mean [95% CI] | Worst [95% CI] |",
            "| Arithmetic | 20.0 [10.0, 30.0] | 5.0 [0.0, 10.0] |",
            "| Lexical | 48.6 [40.3, 56.9] | 40.0 [30.5, 49.5] |",
            "| m | Arithmetic | +3.8 | −2.4 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
