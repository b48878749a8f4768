//! Figures 5 and 6's numbers (B.4, B.5; the paper plots them and prints none).
//!
//! - 5 (a), panel `copy-reverse`: its declared contrasts `letter - digit` (Serial EM, the bar,
//!   and Native EM; Holm within that family over every model) and its four declared cells, the
//!   rows declared in exhibits/figure5.toml (`[[sources]]`).
//! - 5 (b), panel `binding`: B.5's extra conflict loss (aligned − conflicting) − (opaque −
//!   remapped), declared per evidence level over all records (family `B.5 extra conflict
//!   loss`) and computed here within each figure domain too ([`per_domain`]; Holm per evidence
//!   level over every model and both domains), with the four name conditions' accuracies.
//! - 6, panel `binding`: the opaque-name arm's accuracy per evidence level, parents' repeats
//!   averaged first, with the whole-parent interval.
//!
//! Repeats: B.5's "Cross-model estimates average two shared repeats within parent" — `r0` and
//! `r1` count everywhere, a third repeat nowhere ([`CROSS_MODEL_REPEATS`]).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Context;
use c2s_records::Trajectory;
use c2s_stats::{contrast_tables, ContrastRow, ContrastSpec, Selector, StatsConfig};
use serde::Serialize;

use super::engine::Frame;
use super::item_intervals::{self, Interval};
use super::{paper_domain, run_of, LoadedRun, PanelRun};

/// The evidence levels, from Raw to Direct.
pub const EVIDENCE: [&str; 3] = ["raw", "indexed", "direct"];

/// The arm suffixes of the four name conditions, opaque, remapped, aligned, conflicting.
pub const NAMES: [&str; 4] = [
    "",
    "/names-opaque_remapped",
    "/names-readable_aligned",
    "/names-readable_conflicting",
];

/// Figure 5 (b)'s and Figure 6's domains (the panel's symbolic records are not drawn).
pub const FIGURE_DOMAINS: [&str; 2] = ["arithmetic", "lexical"];

/// The domain key of the declared contrasts over every record of the panel.
pub const ALL_RECORDS: &str = "all";

/// The stem of the binding panel's declared contrasts (`extra conflict loss, EVIDENCE`).
pub const CONFLICT_LOSS: &str = "extra conflict loss";

/// The arm of an evidence level and name condition (an index into [`NAMES`]).
pub fn arm(evidence: &str, names: usize) -> String {
    format!("GoldCopy/Full/code/T0/{evidence}{}", NAMES[names])
}

/// The declared extra-conflict-loss contrasts split by the figure's domains: every selector
/// restricted to one domain, one Holm family per evidence level over every model and both
/// domains.
pub fn per_domain(declared: &[ContrastSpec]) -> Vec<ContrastSpec> {
    let mut out = Vec::new();
    for spec in declared
        .iter()
        .filter(|c| c.difference_of_differences && c.name.starts_with(CONFLICT_LOSS))
    {
        for domain in FIGURE_DOMAINS {
            let side = |selectors: &[Selector]| -> Vec<Selector> {
                selectors
                    .iter()
                    .map(|s| Selector {
                        domain: Some(domain.to_string()),
                        ..s.clone()
                    })
                    .collect()
            };
            out.push(ContrastSpec {
                name: format!("{}, {domain}", spec.name),
                compared: side(&spec.compared),
                reference: side(&spec.reference),
                family: Some(format!("{} per domain", spec.name)),
                ..spec.clone()
            });
        }
    }
    out
}

/// Correct and all trajectories of one arm.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Trajectories correct at the queried position.
    pub correct: u64,
    /// Trajectories of the arm (both cross-model repeats).
    pub n: u64,
}

/// Per (model, domain or [`ALL_RECORDS`], evidence index): the four name conditions' counts.
pub type Conditions = BTreeMap<(String, String, usize), [Counts; 4]>;

/// B.5: "Cross-model estimates average two shared repeats within parent; Jev's three-repeat
/// estimate is separate": the repeats the figures average, `r0` and `r1`.
pub const CROSS_MODEL_REPEATS: usize = 2;

/// The evidence level and name condition of a binding arm label among the cross-model repeats
/// ([`CROSS_MODEL_REPEATS`]): `…/T0/EVIDENCE[/names-…][/rK]`.
fn binding_arm(label: &str) -> Option<(usize, usize)> {
    let repeat = super::repeats::repeat_of(label);
    if repeat >= CROSS_MODEL_REPEATS {
        return None;
    }
    let base = match repeat {
        0 => label,
        k => label.strip_suffix(&format!("/r{k}"))?,
    };
    EVIDENCE.iter().enumerate().find_map(|(e, evidence)| {
        let names = (0..NAMES.len()).find(|&k| base == arm(evidence, k))?;
        Some((e, names))
    })
}

/// The four name conditions' counts of the binding panel's trajectories, over both
/// cross-model repeats (every parent has each repeat once, so the share is the within-parent
/// average averaged over parents).
pub fn conditions(trajectories: &[Trajectory]) -> Conditions {
    let mut out = Conditions::new();
    for t in trajectories {
        let Some((e, names)) = binding_arm(&t.arm) else {
            continue;
        };
        for domain in [t.domain.as_str(), ALL_RECORDS] {
            let counts = &mut out
                .entry((t.model.clone(), domain.to_string(), e))
                .or_default()[names];
            counts.n += 1;
            counts.correct += u64::from(t.correct);
        }
    }
    out
}

/// One bar of Figure 5 (b): a model's extra conflict loss at one evidence level in one domain
/// (or over all records), with the four conditions' counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConflictRow {
    /// The model label of the run's records.
    pub model: String,
    /// The evidence level, one of [`EVIDENCE`].
    pub evidence: &'static str,
    /// The domain as the paper prints it (`math`, `lexical`), or [`ALL_RECORDS`] for all 144
    /// records.
    pub domain: String,
    /// The four name conditions' counts, in [`NAMES`] order (opaque, remapped, aligned,
    /// conflicting).
    pub conditions: [Counts; 4],
    /// The extra-conflict-loss contrast with its interval and Holm p; `None` when not computed.
    pub contrast: Option<ContrastRow>,
}

/// Our rows of Figure 5 (b): per model, evidence level, the figure's domains then all records.
pub fn conflict_rows(conditions: &Conditions, contrasts: &[ContrastRow]) -> Vec<ConflictRow> {
    let models: BTreeSet<&str> = (contrasts.iter().map(|c| c.model.as_str()))
        .chain(conditions.keys().map(|k| k.0.as_str()))
        .collect();
    let mut out = Vec::new();
    for model in models {
        for (e, evidence) in EVIDENCE.iter().enumerate() {
            for domain in FIGURE_DOMAINS.into_iter().chain([ALL_RECORDS]) {
                let name = match domain {
                    ALL_RECORDS => format!("{CONFLICT_LOSS}, {evidence}"),
                    d => format!("{CONFLICT_LOSS}, {evidence}, {d}"),
                };
                let contrast = contrasts
                    .iter()
                    .find(|c| c.model == model && c.contrast == name);
                let counts = conditions.get(&(model.to_string(), domain.to_string(), e));
                if contrast.is_none() && counts.is_none() {
                    continue;
                }
                out.push(ConflictRow {
                    model: model.to_string(),
                    evidence,
                    domain: paper_domain(domain).to_string(),
                    conditions: counts.copied().unwrap_or_default(),
                    contrast: contrast.cloned(),
                });
            }
        }
    }
    out
}

/// Figure 5 (b)'s rows (`conflict`) with the copy-reverse run's confidence `level` (its cells'
/// note); (a)'s rows are declared.
pub fn figure5_frame(conflict: &[ConflictRow], level: f64) -> Frame {
    Frame::new().var("level", level).rows("conflict", conflict)
}

/// Contrasts `specs` built here (not declared by the panel) over `run`'s trajectories, with
/// its draws, seed and level.
pub(super) fn built_contrasts(
    run: &LoadedRun,
    specs: &[ContrastSpec],
) -> anyhow::Result<Vec<ContrastRow>> {
    let s = &run.stats;
    let (rows, _) = contrast_tables(
        &run.trajectories,
        specs,
        &[],
        s.bootstrap_draws,
        s.seed,
        s.level,
    )
    .with_context(|| format!("contrasts of {}", run.display()))?;
    Ok(rows)
}

/// Figure 5's rows from the copy-reverse and binding panels.
pub fn figure5(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let symbols = run_of(runs, "copy-reverse")?;
    let level = c2s_rundir::runs_stats_config(&symbols.run_dirs)?.level;
    let binding = run_of(runs, "binding")?.load()?;
    let Some(first) = binding.run_dirs.first() else {
        anyhow::bail!("the binding panel has no run directory");
    };
    let (declared, _) = c2s_rundir::declared(first)?;
    let (mut contrasts, _) = binding.contrast_tables()?;
    contrasts.extend(built_contrasts(&binding, &per_domain(&declared))?);
    let rows = conflict_rows(&conditions(&binding.trajectories), &contrasts);
    Ok(figure5_frame(&rows, level))
}

/// One (model, domain) of Figure 6: parents and the opaque-name accuracy per evidence level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadoutRow {
    /// The model label of the run's records.
    pub model: String,
    /// The bank's domain name (`arithmetic`, `lexical`, or the symbolic records').
    pub domain: String,
    /// Parents averaged over (the first evidence level's); `None` with no trajectory.
    pub parents: Option<u64>,
    /// Raw, Indexed and Direct accuracy (a fraction) with the whole-parent interval; `None`
    /// without trajectories.
    pub accuracy: [Option<Interval>; 3],
}

/// Figure 6's rows, the figure's domains first: the opaque-name arm's accuracy averaged over
/// each parent's repeats, then over parents, with the whole-parent interval within length.
pub fn readout_rows(
    trajectories: &[Trajectory],
    stats: &StatsConfig,
) -> anyhow::Result<Vec<ReadoutRow>> {
    let mut arms: BTreeMap<(usize, String, String), [Vec<&Trajectory>; 3]> = BTreeMap::new();
    for t in trajectories {
        let Some((e, 0)) = binding_arm(&t.arm) else {
            continue;
        };
        let domain = t.domain.as_str();
        let rank = FIGURE_DOMAINS
            .iter()
            .position(|d| *d == domain)
            .unwrap_or(FIGURE_DOMAINS.len());
        arms.entry((rank, domain.to_string(), t.model.clone()))
            .or_default()[e]
            .push(t);
    }
    let mut out = Vec::new();
    for ((_, domain, model), by_evidence) in arms {
        let mut row = ReadoutRow {
            model,
            domain,
            parents: None,
            accuracy: [None; 3],
        };
        for (e, side) in by_evidence.iter().enumerate() {
            if side.is_empty() {
                continue;
            }
            let (parents, mean) =
                item_intervals::within_item_mean(side.iter().copied(), |t| t.correct, stats)?;
            row.parents = row.parents.or(Some(parents));
            row.accuracy[e] = mean;
        }
        out.push(row);
    }
    Ok(out)
}

/// Figure 6's rows from the binding panel.
pub fn figure6(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "binding")?.load()?;
    let rows = readout_rows(&run.trajectories, &run.stats)?;
    Ok(Frame::new().rows("ours", &rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_records::{Domain, Endpoint};
    use c2s_stats::{CellRow, ContrastEstimate};

    use crate::exhibits::sources::PanelTables;
    use crate::exhibits::testing::laid_out;

    fn contrast(model: &str, name: &str, d: f64, ci: (f64, f64), holm: f64) -> ContrastRow {
        ContrastRow {
            model: model.into(),
            contrast: name.into(),
            family: None,
            estimate: ContrastEstimate {
                units: 60,
                incomplete_units: 0,
                compared_mean: None,
                reference_mean: None,
                difference: Some(d),
                ci_low: Some(ci.0),
                ci_high: Some(ci.1),
                sign_p: Some(holm / 2.0),
            },
            sign_p_holm: Some(holm),
        }
    }

    /// Figure 5 laid out against `against`, its declared sets read from the copy-reverse
    /// panel's `tables`.
    fn figure5_with(frame: Frame, tables: PanelTables, against: &str) -> String {
        crate::exhibits::testing::declared_with_tables("figure5", &[], &[tables], frame, against)
    }

    fn trajectory(item: &str, domain: Domain, arm: &str, correct: bool) -> Trajectory {
        crate::exhibits::testing::trajectory(item, domain.as_str(), 3, arm, correct)
    }

    /// An arm's evidence level and name condition, among the cross-model repeats only.
    #[test]
    fn the_binding_arms_are_read_from_their_labels() {
        assert_eq!(arm("raw", 0), "GoldCopy/Full/code/T0/raw");
        assert_eq!(binding_arm("GoldCopy/Full/code/T0/direct"), Some((2, 0)));
        assert_eq!(
            binding_arm("GoldCopy/Full/code/T0/raw/names-readable_aligned/r1"),
            Some((0, 2))
        );
        // "Jev's three-repeat estimate is separate": r2 is not a cross-model repeat.
        assert_eq!(binding_arm("GoldCopy/Full/code/T0/raw/r2"), None);
    }

    /// A declared loss split by domain: arithmetic parents lose only under conflicting names
    /// (a loss of 1 each), lexical parents lose under conflict and remapping alike (0).
    #[test]
    fn the_declared_loss_splits_by_domain_and_counts_the_four_conditions() {
        let selector = |k: usize| Selector {
            arm: arm("raw", k),
            domain: None,
            placement: None,
            operation: None,
        };
        let declared = ContrastSpec {
            name: "extra conflict loss, raw".into(),
            compared: vec![selector(2), selector(1)],
            reference: vec![selector(3), selector(0)],
            family: Some("B.5 extra conflict loss".into()),
            difference_of_differences: true,
            endpoint: Endpoint::Correct,
        };
        let specs = per_domain(&[declared]);
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[1].name, "extra conflict loss, raw, lexical");
        assert_eq!(
            specs[1].family.as_deref(),
            Some("extra conflict loss, raw per domain")
        );
        assert!(specs[0]
            .compared
            .iter()
            .chain(&specs[0].reference)
            .all(|s| s.domain.as_deref() == Some("arithmetic")));
        let mut ts = Vec::new();
        for i in 0..6 {
            let item = format!("a{i}");
            // opaque, remapped, aligned right; conflicting wrong.
            for (k, correct) in [true, true, true, false].into_iter().enumerate() {
                ts.push(trajectory(
                    &item,
                    Domain::Arithmetic,
                    &arm("raw", k),
                    correct,
                ));
            }
            let item = format!("l{i}");
            // opaque and aligned right; remapped and conflicting wrong.
            for (k, correct) in [true, false, true, false].into_iter().enumerate() {
                ts.push(trajectory(&item, Domain::Lexical, &arm("raw", k), correct));
            }
        }
        let (rows, _) = contrast_tables(&ts, &specs, &[], 99, 1, 0.95).expect("contrasts");
        assert_eq!(rows[0].estimate.difference, Some(1.0));
        assert_eq!(rows[1].estimate.difference, Some(0.0));
        let conds = conditions(&ts);
        assert_eq!(
            conds[&("m".to_string(), ALL_RECORDS.to_string(), 0)][1],
            Counts { correct: 6, n: 12 }
        );
        let frame = figure5_frame(&conflict_rows(&conds, &rows), 0.95);
        let md = figure5_with(frame, PanelTables::default(), "Jev");
        for want in [
            "| Model | Evidence | Domain | Opaque | Remapped | Aligned | Conflicting | Units | Extra conflict loss, pp [95% CI] | Holm p |",
            "| m | raw | math | 100.0 | 100.0 | 100.0 | 0.0 | 6 | 100.0 [100.0, 100.0] | 0.062 |",
            "| m | raw | lexical | 100.0 | 0.0 | 100.0 | 0.0 | 6 | 0.0 [0.0, 0.0] | 1.000 |",
            "| m | raw | all records | 100.0 | 50.0 | 100.0 | 0.0 | – | – | – |",
            "## This run's asterisks beside the paper's (Jev)",
            "| m | raw | math | Jev math | no | no | yes |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    #[test]
    fn figure5_has_the_letter_digit_bars_and_the_papers_marks() {
        let letter_digit = vec![
            contrast("m", "letter - digit, Native EM", 0.01, (-0.02, 0.04), 0.5),
            contrast(
                "m",
                "letter - digit, Serial EM",
                -0.025,
                (-0.075, 0.025),
                0.8,
            ),
        ];
        let cells = vec![CellRow {
            model: "m".into(),
            cell: "letters copy".into(),
            arm: "Serial/Full/code".into(),
            n: 120,
            correct: 30,
            native_correct: Some(60),
            both: Some(20),
            scr: Some(1.0 / 3.0),
            scr_upper_zero: None,
        }];
        let conflict = vec![ConflictRow {
            model: "m".into(),
            evidence: "indexed",
            domain: "lexical".into(),
            conditions: [Counts { correct: 3, n: 4 }; 4],
            contrast: Some(contrast(
                "m",
                "extra conflict loss, indexed, lexical",
                0.2,
                (0.05, 0.35),
                0.01,
            )),
        }];
        let tables = PanelTables {
            panel: "copy-reverse".into(),
            contrasts: letter_digit,
            cells,
        };
        let md = figure5_with(figure5_frame(&conflict, 0.95), tables, "Qwen3.5-27B");
        for want in [
            "| Model | Endpoint | Bases | Letter − digit, pp [95% CI] | Sign-flip p | Holm p |",
            "| m | Serial EM | 60 | −2.5 [−7.5, 2.5] | 0.400 | 0.800 |",
            "| m | Native EM | 60 | 1.0 [−2.0, 4.0] | 0.250 | 0.500 |",
            "| m | letters copy | Serial/Full/code | 30/120 | 20/60 | 33.3% |",
            "| m | indexed | lexical | 75.0 | 75.0 | 75.0 | 75.0 | 60 | 20.0 [5.0, 35.0] | 0.010 * |",
            "| StartLux | math | * |",
            "## This run's asterisks beside the paper's (Qwen3-8B, StartLux, Jev)",
            "| m | indexed | lexical | Qwen3-8B lexical | * | * | yes |",
            "| m | indexed | lexical | StartLux lexical | * | no | no |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        let serial = md.find("| m | Serial EM |").expect("serial row");
        assert!(serial < md.find("| m | Native EM |").expect("native row"));
    }

    /// B.5: "Cross-model estimates average two shared repeats within parent": each parent's
    /// r0 and r1 are averaged before the parents are.
    #[test]
    fn figure6_has_one_panel_per_domain_with_the_opaque_accuracy() {
        let mut ts = Vec::new();
        let repeats = |ts: &mut Vec<Trajectory>, item: &str, domain, evidence, both: [bool; 2]| {
            ts.push(trajectory(item, domain, &arm(evidence, 0), both[0]));
            let r1 = format!("{}/r1", arm(evidence, 0));
            ts.push(trajectory(item, domain, &r1, both[1]));
        };
        for i in 0..4 {
            let item = format!("l{i}");
            // Raw: right in both repeats on l0, in one repeat on l1 and l2, never on l3.
            let raw = [[true, true], [true, false], [false, true], [false, false]][i];
            repeats(&mut ts, &item, Domain::Lexical, "raw", raw);
            repeats(&mut ts, &item, Domain::Lexical, "indexed", [true, true]);
            repeats(
                &mut ts,
                &format!("a{i}"),
                Domain::Arithmetic,
                "direct",
                [true, true],
            );
        }
        repeats(
            &mut ts,
            "s0",
            Domain::SymbolicLetters,
            "raw",
            [false, false],
        );
        // A third repeat and other name conditions are not Figure 6's.
        ts.push(trajectory(
            "l3",
            Domain::Lexical,
            "GoldCopy/Full/code/T0/raw/r2",
            true,
        ));
        ts.push(trajectory("l3", Domain::Lexical, &arm("raw", 1), true));
        let stats = StatsConfig {
            bootstrap_draws: 999,
            ..StatsConfig::default()
        };
        let ours = readout_rows(&ts, &stats).unwrap();
        assert_eq!(ours.len(), 3, "{ours:?}");
        let md = laid_out("figure6", Frame::new().rows("ours", &ours), "Jev");
        for want in [
            "## (a) Arithmetic",
            "| Model | Parents | Raw | Indexed | Direct |",
            "| m | 4 | – | – | 100.0 [100.0, 100.0] |",
            "## (b) Lexical",
            "| m | 4 | 50.0 [",
            "| 100.0 [100.0, 100.0] | – |",
            "## symbolic_letters (symbolic COPY bases of the panel; not drawn)",
            "| m | 1 | 0.0 [0.0, 0.0] | – | – |",
            "prints no numbers",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert!(md.find("(a) Arithmetic") < md.find("(b) Lexical"));
    }
}
