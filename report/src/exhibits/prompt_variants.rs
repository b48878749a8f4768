//! Tables D3 and D4 (D.4): direct-output prompt robustness on
//! `config/panels/prompt-variants-direct.toml`, three interleaved templates v1–v3, each with
//! its own Native request and Full Serial trajectory.
//!
//! Table D3: each template's pairing Native/string/vN vs Serial/Full/char/vN; the EM change is
//! the panel's `vN - v1, Serial` unit contrast, its Holm p the exact McNemar of Serial v1 vs
//! vN in the D.4 family. Table D4: the mean and worst template's SCR per domain, the worst
//! recomputed in every parent draw ([`c2s_stats::template_scr`]).

use std::collections::BTreeMap;

use c2s_records::{
    comparison_arms, comparison_of, Arm, ArmSpec, Contract, PromptVariant, Trajectory,
};
use c2s_stats::{ContrastRow, MetricRow, StatsConfig, TemplateOutcomes};
use serde::Serialize;

use super::engine::Frame;
use super::item_intervals::triple;
use super::item_intervals::Interval;
use super::{capitalized, kind_of};
use super::{paper_domain, run_of, PanelRun};
use crate::tables::MetricIndex;

/// The three templates; v1 arms carry no suffix, v2 and v3 end in `/v2`, `/v3`.
pub const VARIANTS: [&str; 3] = ["v1", "v2", "v3"];

/// The prompt variant of each of [`VARIANTS`].
const PROMPT_VARIANTS: [PromptVariant; 3] =
    [PromptVariant::V1, PromptVariant::V2, PromptVariant::V3];

/// The panel's Full Serial arm with generated characters under `variant`
/// (`Serial/Full/char`, `Serial/Full/char/v2`, …).
fn serial_char(variant: PromptVariant) -> ArmSpec {
    let mut spec = ArmSpec::new(Arm::Serial).with_contract(Contract::GeneratedCharacter);
    spec.variant = variant;
    spec
}

/// The template of an arm label (`Serial/Full/char/v2` → 1); v1 labels carry no suffix.
fn variant_of(arm: &str) -> usize {
    VARIANTS
        .iter()
        .position(|v| arm.ends_with(&format!("/{v}")))
        .unwrap_or(0)
}

/// One of our Table D3 rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OurD3Row {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The template as printed ([`VARIANTS`]).
    pub prompt: &'static str,
    /// Serial EM; `None` when undefined.
    pub serial_em: Option<MetricRow>,
    /// SCR (retained / template-specific Native correct) with its interval.
    pub scr: Option<MetricRow>,
    /// The share of bootstrap draws dropped for SCR (the ‡ of its cell).
    pub scr_bootstrap_dropped: Option<MetricRow>,
    /// The `vN - v1, Serial` contrast (a fraction) with its interval; `None` for v1 or without.
    pub change: Option<Interval>,
    /// Holm-corrected exact McNemar p of Serial v1 vs vN; `None` for v1 or without the test.
    pub holm_p: Option<f64>,
}

/// Our Table D3 rows in the paper's order (lexical first, then v1–v3).
pub fn d3_rows(rows: &[MetricRow], contrasts: &[ContrastRow]) -> Vec<OurD3Row> {
    let index = MetricIndex::new(rows);
    let groups = index.paired_groups();
    let mut out = Vec::new();
    for g in &groups {
        let Some((native, serial)) = comparison_arms(&g.comparison) else {
            continue;
        };
        if !(kind_of(native) == Some(Arm::Native) && kind_of(serial) == Some(Arm::Serial)) {
            continue;
        }
        let variant = variant_of(serial);
        let v = VARIANTS[variant];
        let change = (contrasts.iter())
            .filter(|_| v != "v1")
            .find(|c| c.model == g.model && c.contrast == format!("{v} - v1, Serial, {}", g.domain))
            .and_then(|c| {
                (c.estimate.difference).map(|d| (d, c.estimate.ci_low, c.estimate.ci_high))
            });
        let test = comparison_of(
            &serial_char(PromptVariant::V1),
            &serial_char(PROMPT_VARIANTS[variant]),
        );
        let holm_p = (groups.iter())
            .filter(|_| variant > 0)
            .find(|t| t.model == g.model && t.domain == g.domain && t.comparison == test)
            .and_then(|t| index.value(t, None, "mcnemar_p_holm"));
        out.push(OurD3Row {
            model: g.model.clone(),
            domain: paper_domain(&g.domain).to_string(),
            prompt: v,
            serial_em: index.get(g, None, "serial_em").cloned(),
            scr: index.get(g, None, "scr").cloned(),
            scr_bootstrap_dropped: index.get(g, None, "scr_bootstrap_dropped").cloned(),
            change,
            holm_p,
        });
    }
    // The paper's order: lexical before math, then v1–v3.
    out.sort_by_cached_key(|r| {
        let domain = (r.domain != "lexical", r.domain.clone());
        (r.model.clone(), domain, r.prompt)
    });
    out
}

/// Per (model, domain): each parent's (Native, Serial) correctness under v1–v3.
pub fn template_outcomes(
    trajectories: &[Trajectory],
) -> BTreeMap<(String, String), Vec<TemplateOutcomes>> {
    // (model, domain, parent) → (length, (Native, Serial) correct per template).
    type Parents = BTreeMap<(String, String, String), (u32, [(bool, bool); 3])>;
    let mut parents = Parents::new();
    for t in trajectories {
        let native = match t.arm.kind() {
            Arm::Native => true,
            Arm::Serial => false,
            _ => continue,
        };
        let key = (t.model.clone(), t.domain.as_str().into(), t.item_id.clone());
        let (_, outcomes) = (parents.entry(key)).or_insert((t.length as u32, [(false, false); 3]));
        let (native_correct, serial_correct) = &mut outcomes[variant_of(&t.arm)];
        let slot = if native {
            native_correct
        } else {
            serial_correct
        };
        *slot = t.correct;
    }
    let mut out: BTreeMap<(String, String), Vec<TemplateOutcomes>> = BTreeMap::new();
    for ((model, domain, item_id), (stratum, outcomes)) in parents {
        out.entry((model, domain))
            .or_default()
            .push(TemplateOutcomes {
                item_id,
                stratum,
                outcomes: outcomes.to_vec(),
            });
    }
    out
}

/// One of our Table D4 rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OurD4Row {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as Table D4 prints it (`Arithmetic`, `Lexical`).
    pub domain: String,
    /// Mean SCR over the three templates (fraction) with its interval; `None` when undefined.
    pub mean: Option<Interval>,
    /// Worst-template SCR (fraction), recomputed in every draw; `None` when undefined.
    pub worst: Option<Interval>,
}

/// Our Table D4 rows: mean and worst-template SCR per (model, domain).
pub fn d4_rows(trajectories: &[Trajectory], stats: &StatsConfig) -> anyhow::Result<Vec<OurD4Row>> {
    let mut out = Vec::new();
    for ((model, domain), items) in template_outcomes(trajectories) {
        let r = c2s_stats::template_scr(&items, &stats.bootstrap(), stats.level)?;
        out.push(OurD4Row {
            model,
            domain: capitalized(&domain),
            mean: r.as_ref().and_then(|r| triple(&r.mean)),
            worst: r.as_ref().and_then(|r| triple(&r.worst)),
        });
    }
    Ok(out)
}

/// Table D3's rows from the `prompt-variants-direct` panel's run.
pub fn table_d3(runs: &[PanelRun]) -> anyhow::Result<Frame> {
    let run = run_of(runs, "prompt-variants-direct")?.load()?;
    let (contrasts, _) = run.contrast_tables()?;
    let ours = d3_rows(&run.metric_rows()?, &contrasts);
    Ok(Frame::new().rows("ours", &ours))
}

/// Table D4's rows from the `prompt-variants-direct` panel's trajectories.
pub fn table_d4(runs: &[PanelRun]) -> anyhow::Result<Frame> {
    let run = run_of(runs, "prompt-variants-direct")?.load()?;
    let ours = d4_rows(&run.trajectories, &run.stats)?;
    Ok(Frame::new().rows("ours", &ours))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{laid_out, paired_rows};

    #[test]
    fn arms_map_to_their_templates() {
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
        let ours = d3_rows(&rows, &[]);
        let md = laid_out("tableD3", Frame::new().rows("ours", &ours), "Qwen3.5-27B");
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
        let e = |v: f64, lo: f64, hi: f64| (v, Some(lo), Some(hi));
        let ours = [OurD4Row {
            model: "m".into(),
            domain: "Arithmetic".into(),
            mean: Some(e(0.2, 0.1, 0.3)),
            worst: Some(e(0.05, 0.0, 0.1)),
        }];
        let md = laid_out("tableD4", Frame::new().rows("ours", &ours), "Qwen3.5-27B");
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
