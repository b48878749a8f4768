//! Tables D12 and D14, confidence of completed strings (D.14, D.15), from Table 1's code panel
//! (`config/panels/table1-code.toml`): "The original confidence population has 384 Serial
//! items per domain" — the Serial/Full/code trajectories with their three confidence scores.
//!
//! Table D12: "Product ranks arithmetic outcomes better than target length; independent
//! source-mixture lexical gains remain uncertain. Differences compare Product with
//! negative-length ranking, with paired 95% item intervals." Columns: Population / mixture,
//! AUROC difference, AP difference.
//!
//! Table D14: "Lexical calibration and ranking vary with score and length mixture. Intervals
//! are paired 95% item bootstrap. Equal assigns weight 1/6 to each length. Geom. denotes
//! geometric mean." Columns: Population, Mixture, Score, Brier, ECE, AUROC, AP.
//!
//! Figure 19 ([`figure19`]): "High local confidence can coexist with incorrect strings. On 384
//! Jev items per domain, (a–c) arithmetic scores track correctness but remain miscalibrated;
//! (d–f) lexical successes are sparse … Bin counts give each estimate's support. Whole items
//! are resampled within length." Its numbers: per domain and score, the ten reliability bins'
//! items, correct strings, mean score and observed correctness with its interval
//! ([`c2s_stats::reliability_intervals`]); the paper plots them and prints no numbers.
//!
//! Figure 21 ([`figure21`]): "Screening precision varies by task and length. (a) Arithmetic
//! precision is high at low coverage; (b) original lexical estimates are imprecise. … Paired
//! 95% item bootstrap intervals use uniform expected inclusion for cutoff ties." Its numbers
//! for panels (a, b): precision at selected coverages for Product, geometric mean, minimum top
//! choice and the length ranking ([`c2s_stats::screening_intervals`]); panels (c, d) are on
//! D.15's independent cohort (not built). The paper plots them and prints no numbers.
//!
//! Both tables are computed by [`c2s_stats::calibration_intervals`] (items resampled within length,
//! the panel's draws and seed). The paper's "New lexical" rows come from D.15's independent
//! cohort of 2,347 targets ("All 2,347 retained independent targets use the original
//! Native/Serial prompts and pinned Jev. Source quotas and review exclusions precede
//! outcomes"), a second bank the paper does not publish and this project does not build;
//! they are printed as the paper's, with no row of ours. Our rows weigh items as sampled: on
//! the original population (64 per length) that is also the equal-length mixture, and the
//! table says which.

use std::collections::BTreeMap;

use c2s_records::Trajectory;
use c2s_stats::{
    calibration_intervals, BootstrapConfig, CalibrationIntervals, Estimate, ScoredItem,
};

use super::paper::PaperTable;
use super::{differences, percent_interval, run_of, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::UNDEFINED;

/// The arm whose completed strings the original population holds.
pub const SERIAL_ARM: &str = "Serial/Full/code";

/// A printed value with its interval.
type Printed = (f64, f64, f64);

/// Table D12 as printed: population / mixture, AUROC difference, AP difference.
pub static PAPER_D12: PaperTable<(String, Printed, Printed)> = PaperTable::new("tableD12");

/// Table D14 as printed: population, mixture, score, Brier, ECE, AUROC, AP.
pub static PAPER_D14: PaperTable<(String, String, String, [Printed; 4])> =
    PaperTable::new("tableD14");

/// The paper's score labels, in [`c2s_stats::ScoreKind::ALL`]'s order.
pub const SCORE_LABELS: [&str; 3] = ["Product", "Geom.", "Minimum"];

/// The paper models these tables print (Jev: "pinned Jev", D.15).
pub const PAPER_MODEL: &str = "Jev";

/// One (model, domain) population of ours.
#[derive(Debug, Clone, PartialEq)]
pub struct Population {
    /// The model label of the run's records.
    pub model: String,
    /// The bank's domain name (`arithmetic`, `lexical`).
    pub domain: String,
    /// Every length present holds the same number of items (source = equal-length mixture).
    pub balanced: bool,
    /// Items, correct items, and each confidence score's Brier, ECE, AUROC and AP (and AUROC
    /// and AP minus the negative-length ranking's), with intervals resampled within length.
    pub estimates: CalibrationIntervals,
}

impl Population {
    fn mixture(&self) -> &'static str {
        if self.balanced {
            "Equal (= source)"
        } else {
            "Source"
        }
    }

    /// Table D12's population label: "Arithmetic" or "Original lexical".
    fn d12_label(&self) -> String {
        match self.domain.as_str() {
            "arithmetic" => "Arithmetic".to_string(),
            "lexical" => "Original lexical".to_string(),
            d => d.to_string(),
        }
    }
}

/// The scored strings of the original population per (model, domain): Serial/Full/code
/// trajectories with a confidence composite.
fn scored_items(
    trajectories: &[Trajectory],
) -> anyhow::Result<BTreeMap<(String, String), Vec<ScoredItem>>> {
    let mut groups: BTreeMap<(String, String), Vec<ScoredItem>> = BTreeMap::new();
    for t in trajectories.iter().filter(|t| t.arm == SERIAL_ARM) {
        let Some(c) = &t.confidence else { continue };
        groups
            .entry((t.model.clone(), t.domain.as_str().to_string()))
            .or_default()
            .push(ScoredItem {
                item_id: t.item_id.clone(),
                length: u32::try_from(t.length)?,
                scores: [c.product, c.geometric_mean, c.min_top],
                correct: t.correct,
            });
    }
    Ok(groups)
}

/// The original populations of the run: Serial/Full/code strings with a confidence composite,
/// per model and domain.
pub fn populations(
    trajectories: &[Trajectory],
    cfg: &BootstrapConfig,
    level: f64,
) -> anyhow::Result<Vec<Population>> {
    let mut out = Vec::new();
    for ((model, domain), items) in scored_items(trajectories)? {
        let mut per_length: BTreeMap<u32, usize> = BTreeMap::new();
        for i in &items {
            *per_length.entry(i.length).or_default() += 1;
        }
        let balanced = per_length.values().min() == per_length.values().max();
        let Some(estimates) = calibration_intervals(&items, cfg, level)? else {
            continue;
        };
        out.push(Population {
            model,
            domain,
            balanced,
            estimates,
        });
    }
    Ok(out)
}

fn cell(e: &Estimate) -> String {
    match (e.value, e.interval) {
        (None, _) => UNDEFINED.to_string(),
        (Some(v), Some(i)) => format!("{v:.3} [{:.3}, {:.3}]", i.low, i.high),
        (Some(v), None) => format!("{v:.3}"),
    }
}

fn printed((v, lo, hi): Printed) -> String {
    format!("{v:.3} [{lo:.3}, {hi:.3}]")
}

fn diff(e: &Estimate, paper: f64) -> String {
    e.value
        .map_or_else(|| UNDEFINED.to_string(), |v| format!("{:+.3}", v - paper))
}

/// Table D12's document.
pub fn table_d12_layout(ours: &[Population], level: f64) -> anyhow::Result<Doc> {
    let paper_rows = PAPER_D12.rows()?;
    let mut doc = Doc::new("Table D12: Product against the negative-length ranking");
    doc.p(
        "Differences compare Product with negative-length ranking, with paired 95% item \
         intervals.",
    );
    let header: Vec<String> = [
        "Model",
        "Population / mixture",
        "AUROC difference",
        "AP difference",
    ]
    .map(String::from)
    .to_vec();
    doc.h(2, "This run");
    doc.table(Table {
        text_columns: 2,
        header: header.clone(),
        rows: ours
            .iter()
            .map(|p| {
                let product = &p.estimates.scores[0];
                vec![
                    p.model.clone(),
                    format!("{} / {}", p.d12_label(), p.mixture().to_lowercase()),
                    cell(&product.auroc_minus_length),
                    cell(&product.ap_minus_length),
                ]
            })
            .collect(),
        notes: vec![format!(
            "Product's AUROC and AP minus those of the negative-length ranking on the same \
             resampled items; {:.0}% item-bootstrap intervals within length.",
            100.0 * level
        )],
    });
    doc.h(2, "The paper (Table D12, Jev)");
    doc.table(Table {
        text_columns: 2,
        header: header.clone(),
        rows: paper_rows
            .iter()
            .map(|(label, auroc, ap)| {
                vec![
                    PAPER_MODEL.to_string(),
                    label.to_string(),
                    printed(*auroc),
                    printed(*ap),
                ]
            })
            .collect(),
        notes: vec![
            "New lexical: D.15's independent cohort of 2,347 targets, not built here.".into(),
        ],
    });
    let (_, mut table) = differences(
        &mut doc,
        [PAPER_MODEL],
        PAPER_MODEL,
        3,
        &[
            "Model",
            "Population",
            "Paper row",
            "Δ AUROC difference",
            "Δ AP difference",
        ],
    );
    for p in ours {
        let label = p.d12_label();
        let Some((paper_label, auroc, ap)) = paper_rows.iter().find(|(l, _, _)| *l == label) else {
            continue;
        };
        let product = &p.estimates.scores[0];
        table.rows.push(vec![
            p.model.clone(),
            label,
            paper_label.to_string(),
            diff(&product.auroc_minus_length, auroc.0),
            diff(&product.ap_minus_length, ap.0),
        ]);
    }
    doc.table(table);
    Ok(doc)
}

/// Table D14's document (lexical populations).
pub fn table_d14_layout(ours: &[Population], level: f64) -> anyhow::Result<Doc> {
    let paper_rows = PAPER_D14.rows()?;
    let mut doc = Doc::new("Table D14: Lexical calibration and ranking");
    doc.p(
        "Intervals are paired 95% item bootstrap. Equal assigns weight 1/6 to each length. \
         Geom. denotes geometric mean.",
    );
    let header: Vec<String> = [
        "Model",
        "Population",
        "Mixture",
        "Score",
        "Brier",
        "ECE",
        "AUROC",
        "AP",
    ]
    .map(String::from)
    .to_vec();
    let lexical: Vec<&Population> = ours.iter().filter(|p| p.domain == "lexical").collect();
    doc.h(2, "This run");
    let mut rows = Vec::new();
    for p in &lexical {
        for (s, label) in p.estimates.scores.iter().zip(SCORE_LABELS) {
            rows.push(vec![
                p.model.clone(),
                "Original".to_string(),
                p.mixture().to_string(),
                label.to_string(),
                cell(&s.brier),
                cell(&s.ece),
                cell(&s.auroc),
                cell(&s.average_precision),
            ]);
        }
    }
    doc.table(Table {
        text_columns: 4,
        header: header.clone(),
        rows,
        notes: vec![format!(
            "Serial/Full/code strings of the code panel; ECE with ten fixed-width bins; {:.0}% \
             item-bootstrap intervals within length; one-class draws leave AUROC/AP undefined \
             and are dropped.",
            100.0 * level
        )],
    });
    doc.h(2, "The paper (Table D14, Jev)");
    doc.table(Table {
        text_columns: 4,
        header: header.clone(),
        rows: paper_rows
            .iter()
            .map(|(population, mixture, score, values)| {
                let mut row = vec![
                    PAPER_MODEL.to_string(),
                    population.to_string(),
                    mixture.to_string(),
                    score.to_string(),
                ];
                row.extend(values.iter().map(|v| printed(*v)));
                row
            })
            .collect(),
        notes: vec!["New: D.15's independent cohort of 2,347 targets, not built here.".into()],
    });
    let (_, mut table) = differences(
        &mut doc,
        [PAPER_MODEL],
        PAPER_MODEL,
        2,
        &["Model", "Score", "Δ Brier", "Δ ECE", "Δ AUROC", "Δ AP"],
    );
    for p in &lexical {
        for (s, label) in p.estimates.scores.iter().zip(SCORE_LABELS) {
            let Some((_, _, _, v)) = paper_rows.iter().find(|(pop, mix, score, _)| {
                *pop == "Original" && *mix == "Equal" && *score == label
            }) else {
                continue;
            };
            table.rows.push(vec![
                p.model.clone(),
                label.to_string(),
                diff(&s.brier, v[0].0),
                diff(&s.ece, v[1].0),
                diff(&s.auroc, v[2].0),
                diff(&s.average_precision, v[3].0),
            ]);
        }
    }
    table
        .notes
        .push("This run's original population minus the paper's Original / Equal row.".into());
    doc.table(table);
    Ok(doc)
}

/// Figure 19's numbers: one table per (model, domain) and score.
pub fn figure19_layout(
    trajectories: &[Trajectory],
    cfg: &BootstrapConfig,
    level: f64,
) -> anyhow::Result<Doc> {
    let mut doc = Doc::new("Figure 19: Reliability of the three confidence scores (numbers)");
    doc.p(
        "High local confidence can coexist with incorrect strings. Gray: all items; color: \
         correct strings; whiskers: 95% intervals. Bin counts give each estimate's support. \
         The paper plots these and prints no numbers.",
    );
    for ((model, domain), items) in scored_items(trajectories)? {
        for (s, (label, kind)) in SCORE_LABELS
            .iter()
            .zip(c2s_stats::ScoreKind::ALL)
            .enumerate()
        {
            let bins = c2s_stats::reliability_intervals(&items, kind, cfg, level)?;
            doc.h(2, format!("{model} · {domain} · {label}"));
            doc.table(Table {
                text_columns: 1,
                header: [
                    "Composed score",
                    "Items",
                    "Correct",
                    "Mean score",
                    "Observed correctness [CI]",
                ]
                .map(String::from)
                .to_vec(),
                rows: bins
                    .iter()
                    .map(|b| {
                        vec![
                            format!("[{:.1}, {:.1})", b.low, b.high),
                            b.count.to_string(),
                            b.correct.to_string(),
                            b.mean_score
                                .map_or_else(|| UNDEFINED.to_string(), |m| format!("{m:.3}")),
                            cell(&b.accuracy),
                        ]
                    })
                    .collect(),
                notes: if s == 0 {
                    vec![format!(
                        "Serial/Full/code strings; ten fixed-width bins (the last includes 1.0); \
                         {:.0}% intervals from items resampled within length; “–” an empty bin.",
                        100.0 * level
                    )]
                } else {
                    Vec::new()
                },
            });
        }
    }
    Ok(doc)
}

/// Figure 19's numbers from the `table1-code` panel's trajectories.
pub fn figure19(runs: &[PanelRun]) -> anyhow::Result<Doc> {
    let run = run_of(runs, "table1-code")?.load()?;
    let cfg = run.stats.bootstrap();
    figure19_layout(&run.trajectories, &cfg, run.stats.level)
}

/// The coverages Figure 21's numbers are read at.
pub const COVERAGES: [f64; 5] = [0.10, 0.25, 0.50, 0.75, 1.00];

/// Figure 21's rankers, in [`c2s_stats::screening_intervals`]'s order.
pub const RANKERS: [&str; c2s_stats::SCREENING_RANKERS] =
    ["Product", "Geometric mean", "Minimum top choice", "Length"];

/// Figure 21's numbers: precision at each coverage per (model, domain) and ranker.
pub fn figure21_layout(
    trajectories: &[Trajectory],
    cfg: &BootstrapConfig,
    level: f64,
) -> anyhow::Result<Doc> {
    let mut doc = Doc::new("Figure 21: Screening precision at selected coverage (numbers)");
    doc.p(
        "Precision (%) of the strings answered when a share of them is selected, highest \
         score first (Length: shortest target first); ties at the cutoff enter with uniform \
         expected inclusion. The paper plots these and prints no numbers; its panels (c, d) \
         use D.15's independent cohort, not built here.",
    );
    let mut header = vec!["Ranker".to_string()];
    header.extend(
        COVERAGES
            .iter()
            .map(|c| format!("{:.0}% coverage", 100.0 * c)),
    );
    for ((model, domain), items) in scored_items(trajectories)? {
        let precision = c2s_stats::screening_intervals(&items, &COVERAGES, cfg, level)?;
        doc.h(2, format!("{model} · {domain}"));
        doc.table(Table {
            text_columns: 1,
            header: header.clone(),
            rows: RANKERS
                .iter()
                .zip(&precision)
                .map(|(ranker, estimates)| {
                    let mut row = vec![ranker.to_string()];
                    row.extend(estimates.iter().map(|e| {
                        percent_interval(
                            e.value.map(|v| {
                                (v, e.interval.map(|i| i.low), e.interval.map(|i| i.high))
                            }),
                        )
                    }));
                    row
                })
                .collect(),
            notes: vec![format!(
                "{} Serial/Full/code strings; {:.0}% intervals from items resampled within \
                 length, the rankers paired in each draw.",
                items.len(),
                100.0 * level
            )],
        });
    }
    Ok(doc)
}

/// Figure 21's numbers (panels a, b) from the `table1-code` panel's trajectories.
pub fn figure21(runs: &[PanelRun]) -> anyhow::Result<Doc> {
    let run = run_of(runs, "table1-code")?.load()?;
    let cfg = run.stats.bootstrap();
    figure21_layout(&run.trajectories, &cfg, run.stats.level)
}

fn load(runs: &[PanelRun]) -> anyhow::Result<(Vec<Population>, f64)> {
    let run = run_of(runs, "table1-code")?.load()?;
    let cfg = run.stats.bootstrap();
    Ok((
        populations(&run.trajectories, &cfg, run.stats.level)?,
        run.stats.level,
    ))
}

/// Table D12 from the `table1-code` panel's Serial/Full/code populations.
pub fn table_d12(runs: &[PanelRun]) -> anyhow::Result<Doc> {
    let (populations, level) = load(runs)?;
    table_d12_layout(&populations, level)
}

/// Table D14 from the `table1-code` panel's Serial/Full/code populations.
pub fn table_d14(runs: &[PanelRun]) -> anyhow::Result<Doc> {
    let (populations, level) = load(runs)?;
    table_d14_layout(&populations, level)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trajectory(
        item: usize,
        domain: &str,
        length: usize,
        score: f64,
        correct: bool,
    ) -> Trajectory {
        serde_json::from_value(serde_json::json!({
            "item_id": format!("{domain}-{item}"), "domain": domain, "length": length,
            "model": "m", "arm": SERIAL_ARM, "support": "Full", "output": "x",
            "correct": correct, "valid": true, "membership": "Gold", "aborted": false,
            "calls": length, "fills": 0, "prompt_tokens": 0, "completion_tokens": 0,
            "latency_ms": 0.0, "steps": [], "position_correct": [],
            "confidence": {
                "product": score, "geometric_mean": score.sqrt(), "min_top": score, "steps": length,
            },
        }))
        .expect("a test trajectory")
    }

    fn sample() -> Vec<Trajectory> {
        let mut ts = Vec::new();
        for (i, (length, score, correct)) in [
            (3, 0.9, true),
            (3, 0.2, false),
            (4, 0.7, true),
            (4, 0.4, false),
        ]
        .into_iter()
        .enumerate()
        {
            ts.push(trajectory(i, "lexical", length, score, correct));
            ts.push(trajectory(i, "arithmetic", length, score, correct));
        }
        // Another arm, or no confidence: not in the population.
        let mut native = trajectory(9, "lexical", 3, 0.5, true);
        native.arm = "Native/code".into();
        ts.push(native);
        let mut blind = trajectory(8, "lexical", 3, 0.5, true);
        blind.confidence = None;
        ts.push(blind);
        ts
    }

    fn cfg() -> BootstrapConfig {
        BootstrapConfig {
            draws: 199,
            seed: 3,
            threads: 1,
        }
    }

    #[test]
    fn the_populations_are_the_serial_strings_with_a_confidence() {
        let p = populations(&sample(), &cfg(), 0.95).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[1].domain, "lexical");
        assert_eq!(p[1].estimates.items, 4);
        assert!(p[1].balanced);
        // Perfect separation by Product: AUROC 1.
        assert_eq!(p[1].estimates.scores[0].auroc.value, Some(1.0));
    }

    #[test]
    fn the_layouts_have_the_papers_columns_rows_and_differences() {
        let p = populations(&sample(), &cfg(), 0.95).unwrap();
        let d12 = table_d12_layout(&p, 0.95).unwrap().markdown();
        for want in [
            "| Model | Population / mixture | AUROC difference | AP difference |",
            "| m | Original lexical / equal (= source) |",
            "| Jev | Arithmetic | 0.068 [0.051, 0.086] | 0.175 [0.135, 0.216] |",
            "| Jev | New lexical / source | 0.011 [-0.043, 0.064] | 0.055 [-0.012, 0.249] |",
            "| m | Arithmetic | Arithmetic |",
        ] {
            assert!(d12.contains(want), "missing {want:?} in\n{d12}");
        }
        let d14 = table_d14_layout(&p, 0.95).unwrap().markdown();
        for want in [
            "| Model | Population | Mixture | Score | Brier | ECE | AUROC | AP |",
            "| m | Original | Equal (= source) | Product |",
            "| Jev | New | Equal | Minimum | 0.056 [0.051, 0.063] | 0.181 [0.168, 0.194] | 0.859 [0.763, 0.933] | 0.161 [0.043, 0.437] |",
            "| m | Product |",
        ] {
            assert!(d14.contains(want), "missing {want:?} in\n{d14}");
        }
        // Differences: AUROC 1.000 − 0.936.
        assert!(d14.contains("+0.064 |"), "{d14}");
    }

    #[test]
    fn figure21_has_every_ranker_at_every_coverage() {
        let md = figure21_layout(&sample(), &cfg(), 0.95).unwrap().markdown();
        for want in [
            "## m · lexical",
            "| Ranker | 10% coverage | 25% coverage | 50% coverage | 75% coverage | 100% coverage |",
            // Product ranks both correct strings first: 100% precision at half coverage, the
            // prevalence (50%) at full coverage.
            "| Product | 100.0 [",
            "| 50.0 [",
            "| Length |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    #[test]
    fn figure19_has_ten_bins_per_domain_and_score() {
        let md = figure19_layout(&sample(), &cfg(), 0.95).unwrap().markdown();
        for want in [
            "## m · lexical · Product",
            "## m · arithmetic · Minimum",
            "| Composed score | Items | Correct | Mean score | Observed correctness [CI] |",
            "| [0.9, 1.0) | 1 | 1 | 0.900 | 1.000 [1.000, 1.000] |",
            "| [0.0, 0.1) | 0 | 0 | – | – |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
