//! Figure 16's numbers: fidelity to supplied correct and incorrect targets (D.12).
//!
//! Figure 16: "Faithful copying can preserve errors. On 48 parents per domain with paired
//! correct/incorrect targets, (a,b) indexing raises fidelity; Jev copies every indexed
//! incorrect target. Gains cover (c) single/multiple arithmetic character differences and (d)
//! observed/constructed lexical errors. Intervals use 95% item bootstrap." Ours come from the
//! `copy-incorrect` panel (Serial control): (a, b) the fidelity counts of
//! `GoldCopy/Full/code/{raw,indexed}/serial` (correct target) and
//! `IncorrectCopy/Full/code/{raw,indexed}/serial` (wrong target); (c, d) the wrong-target arms
//! grouped as printed, arithmetic by `plan_differences` (one substitution or multiple),
//! lexical by `plan_origin` (observed or constructed); and the two declared comparisons,
//! wrong-plan indexing (`IncorrectCopy` raw vs indexed) and indexed wrong minus correct
//! (indexed `GoldCopy` vs `IncorrectCopy`): the paired difference and its exact McNemar p,
//! Holm-corrected within its family.
//!
//! Intervals: the caption's "Intervals use 95% item bootstrap". Every bar of (a–d) is a rate
//! with its whole-item interval, and every paired difference (the two tests, and each group's
//! indexed − raw gain of (c, d)) a paired whole-item interval: items resampled within length,
//! each draw scoring both sides on the same resample (D.12: "Whole-parent bootstrap preserves
//! target/evidence pairs (99,999 draws, seed 20261008)", the panel's `[stats]`).
//!
//! The printed counts are read in the annotations' order, as Figure 15's ([`super::copy_fidelity`]
//! gives the evidence).

use std::collections::BTreeMap;

use c2s_records::Trajectory;
use c2s_stats::{MetricRow, StatsConfig};

use super::copy_fidelity::{
    columns, copy_arm, difference_differences, domain_rank, fidelity_differences, sorted, table,
    DifferenceRow, FidelityRow, Layout, DIFFERENCE_NOTE, GOLD_COPY, INCORRECT_COPY,
};
use super::item_intervals::Interval;
use super::paper::PaperTable;
use super::{differences, item_intervals, paper_domain, percent_interval, pp_diff, run_of};
use super::{Count, PanelRun};
use crate::report::doc::Doc;
use crate::report::tables::MetricIndex;

/// Figure 16 (a, b) as printed: model, domain and fidelity of 48 to the correct target (raw,
/// indexed) and the wrong target (raw, indexed).
pub type PaperTargetRow = (String, String, [u64; 4], u64);

/// Figure 16 (a, b) as printed, read in annotation order (see the module note).
pub static PAPER_FIGURE16: PaperTable<PaperTargetRow> = PaperTable::new("figure16");

/// The groups of incorrect targets: arithmetic by differences from gold, lexical by origin.
pub const ONE_SUBSTITUTION: &str = "one substitution";
/// Arithmetic incorrect targets that differ from gold in more than one character.
pub const MULTIPLE_DIFFERENCES: &str = "multiple differences";
/// Lexical incorrect targets taken from an observing run's wrong selections
/// (`plan_origin` `observed`).
pub const OBSERVED_ERROR: &str = "observed error";
/// Lexical incorrect targets constructed for the bank rather than observed
/// (`plan_origin` `constructed`).
pub const CONSTRUCTED: &str = "constructed";
const GROUP_ORDER: [&str; 4] = [
    ONE_SUBSTITUTION,
    MULTIPLE_DIFFERENCES,
    OBSERVED_ERROR,
    CONSTRUCTED,
];

/// Figure 16 (c, d) as printed: model, domain, group, and fidelity to the incorrect target
/// raw → indexed of the group's n.
pub type PaperGroupRow = (String, String, String, u64, u64, u64);

/// Figure 16 (c, d) as printed, read in annotation order (see the module note).
pub static PAPER_GROUPS: PaperTable<PaperGroupRow> = PaperTable::new("figure16.groups");

/// The copy-incorrect panel's declared comparisons: (as printed, `REFERENCE vs COMPARED`).
pub const TARGET_TESTS: [(&str, &str); 2] = [
    (
        "Wrong target: indexed − raw",
        "IncorrectCopy/Full/code/raw/serial vs IncorrectCopy/Full/code/indexed/serial",
    ),
    (
        "Indexed: wrong − correct target",
        "GoldCopy/Full/code/indexed/serial vs IncorrectCopy/Full/code/indexed/serial",
    ),
];

const TARGET_TABLE: Layout = (
    2,
    "Model | Domain | Correct target / raw | Correct target / indexed | Wrong target / raw | \
     Wrong target / indexed",
);
const GROUP_TABLE: Layout = (
    3,
    "Model | Domain | Incorrect targets | Raw | Indexed | Indexed − raw [95% CI]",
);
const PRINTED_GROUP_TABLE: Layout = (3, "Model | Domain | Incorrect targets | Raw | Indexed");
const TEST_TABLE: Layout = (3, "Model | Domain | Test | Difference [95% CI] | Holm p");
const TARGET_DIFFERENCES: Layout = (
    3,
    "Model | Domain | Paper row | Δ Correct / raw | Δ Correct / indexed | Δ Wrong / raw | \
     Δ Wrong / indexed",
);
const GROUP_DIFFERENCES: Layout = (
    4,
    "Model | Domain | Incorrect targets | Paper row | Δ Raw | Δ Indexed",
);
const TEST_DIFFERENCES: Layout = (4, "Model | Domain | Test | Paper row | Δ Difference");

/// A Figure 16 (a, b) row: fidelity to the correct target (raw, indexed) and the wrong target
/// (raw, indexed), with the wrong-target arms' gold EM.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetRow {
    /// The model (ours: the records' label; the paper's: as printed).
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// Faithful copies of the parents: correct target raw, indexed; wrong target raw,
    /// indexed.
    pub counts: [Count; 4],
    /// Each count's rate with its whole-item interval (ours; `None` on the printed rows).
    pub intervals: [Option<Interval>; 4],
    /// Gold-correct outputs of the two wrong-target arms together (empty on printed rows).
    pub wrong_gold_em: Count,
}

impl TargetRow {
    fn cells(&self) -> Vec<String> {
        let mut cells = vec![self.model.clone(), self.domain.clone()];
        cells.extend(
            self.counts
                .iter()
                .zip(self.intervals)
                .map(|(c, i)| bar_cell(c, i)),
        );
        cells
    }
}

/// A bar: its count, and where there is one its rate with the interval (`28/48: 58.3 [43.8,
/// 72.9]`).
fn bar_cell(count: &Count, interval: Option<Interval>) -> String {
    match interval {
        Some(i) => format!("{}: {}", count.cell(), percent_interval(Some(i))),
        None => count.cell(),
    }
}

/// A Figure 16 (c, d) row of ours: the group's raw and indexed fidelity counts, each rate's
/// interval, and the paired indexed − raw gain on the group's parents.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupRow {
    /// The group's raw and indexed fidelity counts, labelled by its group.
    pub counts: FidelityRow,
    /// Raw fidelity rate (fraction) with its whole-item interval; `None` without parents.
    pub raw: Option<Interval>,
    /// Indexed fidelity rate (fraction) with its whole-item interval; `None` without parents.
    pub indexed: Option<Interval>,
    /// Indexed − raw on the group's parents with its paired interval; `None` when undefined.
    pub gain: Option<Interval>,
}

impl GroupRow {
    fn cells(&self) -> Vec<String> {
        let c = &self.counts;
        vec![
            c.model.clone(),
            c.domain.clone(),
            c.label.clone(),
            bar_cell(&c.raw, self.raw),
            bar_cell(&c.indexed, self.indexed),
            percent_interval(self.gain),
        ]
    }
}

/// Whether a copy trajectory reproduced its supplied target.
fn faithful(t: &Trajectory) -> bool {
    t.fidelity == Some(true)
}

/// The group of a wrong-target trajectory: arithmetic by the plan's differences from gold,
/// other domains by the plan's origin (as Figure 16 (c, d)).
pub fn target_group(t: &Trajectory) -> String {
    if paper_domain(t.domain.as_str()) == "math" {
        match t.plan_differences {
            Some(1) => ONE_SUBSTITUTION.to_string(),
            Some(d) if d > 1 => MULTIPLE_DIFFERENCES.to_string(),
            Some(d) => format!("{d} differences"),
            None => "differences not recorded".to_string(),
        }
    } else {
        match t.plan_origin.as_deref() {
            Some("observed") => OBSERVED_ERROR.to_string(),
            Some("constructed") => CONSTRUCTED.to_string(),
            Some(origin) => origin.to_string(),
            None => "origin not recorded".to_string(),
        }
    }
}

/// A model and domain (math first) of the panel.
type DomainKey = (String, usize, String);

/// The copy-incorrect panel's Serial trajectories: per model and domain the four arms
/// (correct raw, correct indexed, wrong raw, wrong indexed), per group of incorrect targets its
/// raw and indexed arms.
#[derive(Default)]
struct Arms<'a> {
    targets: BTreeMap<DomainKey, [Vec<&'a Trajectory>; 4]>,
    groups: BTreeMap<(DomainKey, usize, String), [Vec<&'a Trajectory>; 2]>,
}

fn arms(trajectories: &[Trajectory]) -> Arms<'_> {
    let mut arms = Arms::default();
    for t in trajectories {
        let (wrong, arm) = match copy_arm(&t.arm, GOLD_COPY) {
            Some(arm) => (false, arm),
            None => match copy_arm(&t.arm, INCORRECT_COPY) {
                Some(arm) => (true, arm),
                None => continue,
            },
        };
        let indexed = match arm {
            ("raw", "serial") => false,
            ("indexed", "serial") => true,
            _ => continue,
        };
        let domain = paper_domain(t.domain.as_str()).to_string();
        let key = (t.model.clone(), domain_rank(&domain), domain);
        let slot = 2 * usize::from(wrong) + usize::from(indexed);
        arms.targets.entry(key.clone()).or_default()[slot].push(t);
        if wrong {
            let group = target_group(t);
            let rank = GROUP_ORDER.iter().position(|g| *g == group);
            let entry = arms
                .groups
                .entry((key, rank.unwrap_or(GROUP_ORDER.len()), group));
            entry.or_default()[usize::from(indexed)].push(t);
        }
    }
    arms
}

/// The fidelity count of a side.
fn count(side: &[&Trajectory]) -> Count {
    let mut c = Count::default();
    for t in side {
        c.add(faithful(t));
    }
    c
}

/// Our Figure 16 (a, b) and (c, d) rows from the copy-incorrect panel's trajectories, with the
/// run's whole-item intervals.
pub fn target_rows(
    trajectories: &[Trajectory],
    stats: &StatsConfig,
) -> anyhow::Result<(Vec<TargetRow>, Vec<GroupRow>)> {
    let arms = arms(trajectories);
    let mut targets = Vec::new();
    for ((model, _, domain), sides) in &arms.targets {
        let mut row = TargetRow {
            model: model.clone(),
            domain: domain.clone(),
            ..TargetRow::default()
        };
        for (slot, side) in sides.iter().enumerate() {
            row.counts[slot] = count(side);
            row.intervals[slot] = item_intervals::rate(side.iter().copied(), faithful, stats)?;
        }
        for t in sides[2..].iter().flatten() {
            row.wrong_gold_em.add(t.correct);
        }
        targets.push(row);
    }
    let mut groups = Vec::new();
    for (((model, _, domain), _, label), [raw, indexed]) in &arms.groups {
        groups.push(GroupRow {
            counts: FidelityRow {
                model: model.clone(),
                domain: domain.clone(),
                label: label.clone(),
                raw: count(raw),
                indexed: count(indexed),
            },
            raw: item_intervals::rate(raw.iter().copied(), faithful, stats)?,
            indexed: item_intervals::rate(indexed.iter().copied(), faithful, stats)?,
            gain: item_intervals::paired_difference(
                indexed.iter().copied(),
                raw.iter().copied(),
                faithful,
                stats,
            )?,
        });
    }
    Ok((targets, groups))
}

/// Our declared comparisons ([`TARGET_TESTS`]): compared − reference fidelity on the parents
/// both arms hold, with its paired whole-item interval, and the Holm-adjusted exact McNemar p
/// of the panel's comparison (its metric rows).
pub fn target_tests(
    rows: &[MetricRow],
    trajectories: &[Trajectory],
    stats: &StatsConfig,
) -> anyhow::Result<Vec<DifferenceRow>> {
    let index = MetricIndex::new(rows);
    let mut tests = Vec::new();
    for g in index.paired_groups() {
        let Some(&(label, comparison)) = TARGET_TESTS.iter().find(|(_, c)| *c == g.comparison)
        else {
            continue;
        };
        let Some((reference, compared)) = comparison.split_once(" vs ") else {
            continue;
        };
        let (model, domain) = (g.model.as_str(), paper_domain(&g.domain));
        let side = |arm: &'static str| {
            trajectories.iter().filter(move |t| {
                t.model == model && t.arm == arm && paper_domain(t.domain.as_str()) == domain
            })
        };
        tests.push(DifferenceRow {
            model: g.model.clone(),
            domain: domain.to_string(),
            label,
            difference: item_intervals::paired_difference(
                side(compared),
                side(reference),
                faithful,
                stats,
            )?,
            holm_p: index.value(&g, None, "mcnemar_p_holm"),
        });
    }
    Ok(sorted(tests, &TARGET_TESTS))
}

/// Figure 16 (a, b) as printed, as rows.
pub fn printed_targets() -> anyhow::Result<Vec<TargetRow>> {
    Ok(PAPER_FIGURE16
        .rows()?
        .iter()
        .map(|(model, domain, counts, parents)| TargetRow {
            model: model.to_string(),
            domain: domain.to_string(),
            counts: counts.map(|k| Count { k, n: *parents }),
            intervals: [None; 4],
            wrong_gold_em: Count::default(),
        })
        .collect())
}

/// Figure 16 (c, d) as printed, as rows.
pub fn printed_groups() -> anyhow::Result<Vec<FidelityRow>> {
    Ok(PAPER_GROUPS
        .rows()?
        .iter()
        .map(|(model, domain, group, raw, indexed, n)| FidelityRow {
            model: model.to_string(),
            domain: domain.to_string(),
            label: group.to_string(),
            raw: Count { k: *raw, n: *n },
            indexed: Count { k: *indexed, n: *n },
        })
        .collect())
}

/// The paper's tests derived from its printed counts: wrong target indexed − raw, and indexed
/// wrong − correct target.
pub fn printed_tests() -> anyhow::Result<Vec<DifferenceRow>> {
    Ok(PAPER_FIGURE16
        .rows()?
        .iter()
        .flat_map(
            |(model, domain, [_, correct_indexed, wrong_raw, wrong_indexed], parents)| {
                [(0, wrong_raw), (1, correct_indexed)].map(|(rank, reference)| DifferenceRow {
                    model: model.to_string(),
                    domain: domain.to_string(),
                    label: TARGET_TESTS[rank].0,
                    difference: Some((
                        (*wrong_indexed as f64 - *reference as f64) / *parents as f64,
                        None,
                        None,
                    )),
                    holm_p: None,
                })
            },
        )
        .collect())
}

/// Figure 16's numbers: ours, the paper's printed counts, the differences.
pub fn figure16_layout(
    targets: &[TargetRow],
    groups: &[GroupRow],
    tests: &[DifferenceRow],
    against: &str,
) -> anyhow::Result<Doc> {
    let paper_rows = PAPER_FIGURE16.rows()?;
    let mut doc = Doc::new("Figure 16: Faithful copying can preserve errors (numbers)");
    doc.p(
        "Fidelity to a supplied target under Serial control, raw and indexed evidence, with \
         matched correct and incorrect targets per parent, and the incorrect targets' groups \
         (arithmetic: differences from gold; lexical: observed error or constructed).",
    );
    doc.h(2, "This run");
    doc.h(3, "(a, b) Correct and wrong targets");
    let mut ours = table(
        TARGET_TABLE,
        targets.iter().map(TargetRow::cells).collect(),
        &format!(
            "Fidelity of {GOLD_COPY}raw/serial, {GOLD_COPY}indexed/serial, \
             {INCORRECT_COPY}raw/serial and {INCORRECT_COPY}indexed/serial (panel \
             copy-incorrect)."
        ),
    );
    let (gold_k, gold_n) = targets.iter().fold((0, 0), |(k, n), r| {
        (k + r.wrong_gold_em.k, n + r.wrong_gold_em.n)
    });
    ours.notes.push(format!(
        "Gold EM of the wrong-target arms: {gold_k} of {gold_n} trajectories (the paper: 0 for \
         every arm with an incorrect target)."
    ));
    doc.table(ours);
    doc.h(3, "(c, d) Groups of incorrect targets");
    doc.table(table(
        GROUP_TABLE,
        groups.iter().map(GroupRow::cells).collect(),
        "Fidelity to the incorrect target, each rate with its 95% whole-item bootstrap interval; \
         arithmetic grouped by the plan's positions differing from gold, lexical by the plan's \
         origin. Indexed − raw: percentage points on the group's parents, paired whole-item \
         interval.",
    ));
    doc.h(3, "Paired tests");
    doc.table(table(
        TEST_TABLE,
        tests.iter().map(DifferenceRow::cells).collect(),
        "Percentage points, compared − reference fidelity on paired parents; Holm p: exact \
         McNemar of the declared comparison, Holm-corrected within its family (wrong-plan \
         indexing; indexed wrong minus correct); the paired 95% whole-item bootstrap interval.",
    ));
    doc.h(2, "The paper (Figure 16)");
    doc.h(3, "(a, b) Correct and wrong targets (count / 48)");
    let targets_printed = printed_targets()?;
    doc.table(table(
        TARGET_TABLE,
        targets_printed.iter().map(TargetRow::cells).collect(),
        "48 parents per domain; \"Gold EM = 0 for every arm with an incorrect target\". Read in \
         the annotations' order (the module documentation gives the evidence).",
    ));
    doc.h(3, "(c, d) Groups of incorrect targets, raw → indexed / n");
    let groups_printed = printed_groups()?;
    doc.table(table(
        PRINTED_GROUP_TABLE,
        groups_printed.iter().map(FidelityRow::cells).collect(),
        "Arithmetic: 48 observed selections; lexical: 28 observed, 20 constructed (D.12).",
    ));
    doc.h(3, "Paired tests, derived from the printed counts");
    let tests_printed = printed_tests()?;
    doc.table(table(
        TEST_TABLE,
        tests_printed.iter().map(DifferenceRow::cells).collect(),
        "The figure prints no test: each difference is the printed counts' difference over 48 \
         (D.12: \"Six wrong-plan indexing and six indexed wrong-minus-correct tests use separate \
         Holm families\").",
    ));
    let (models, mut diff) = differences(
        &mut doc,
        paper_rows.iter().map(|p| p.0.as_str()),
        against,
        TARGET_DIFFERENCES.0,
        &columns(TARGET_DIFFERENCES),
    );
    for r in targets {
        for p in targets_printed
            .iter()
            .filter(|p| models.contains(&p.model.as_str()) && p.domain == r.domain)
        {
            let mut cells = vec![r.model.clone(), r.domain.clone()];
            cells.push(format!("{} {}", p.model, p.domain));
            cells.extend(r.counts.iter().zip(&p.counts).map(|(ours, printed)| {
                pp_diff(ours.rate(), 100.0 * printed.rate().unwrap_or_default())
            }));
            diff.rows.push(cells);
        }
    }
    diff.notes.push(DIFFERENCE_NOTE.into());
    doc.table(diff);
    doc.table(table(
        GROUP_DIFFERENCES,
        fidelity_differences(
            &groups.iter().map(|g| g.counts.clone()).collect::<Vec<_>>(),
            &groups_printed,
            &models,
        ),
        "Percentage points (ours over our group's targets, the paper's over its group's n).",
    ));
    doc.table(table(
        TEST_DIFFERENCES,
        difference_differences(tests, &tests_printed, &models),
        "Percentage points, against the difference derived from the printed counts.",
    ));
    Ok(doc)
}

/// Read the copy-incorrect panel's run and lay out Figure 16's numbers.
pub fn figure16(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, "copy-incorrect")?.load()?;
    let (targets, groups) = target_rows(&run.trajectories, &run.stats)?;
    let tests = target_tests(&run.metric_rows()?, &run.trajectories, &run.stats)?;
    figure16_layout(&targets, &groups, &tests, against)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::testing::{paired_rows, trajectory};

    /// A copy trajectory of model `m` for `item` on `arm`: faithful or not, with its plan's
    /// origin and differences from gold.
    fn copy(item: &str, arm: &str, domain: &str, faithful: bool, plan: (&str, u32)) -> Trajectory {
        let mut t = trajectory(item, domain, 3, arm, false);
        t.fidelity = Some(faithful);
        t.plan_origin = Some(plan.0.to_string());
        t.plan_differences = Some(plan.1);
        t
    }

    /// The transcribed counts agree with each other and with the text: every count is of its
    /// group, the groups partition each model's 48 wrong targets (28 observed and 20
    /// constructed lexical ones, D.12) and add up to its wrong-target counts, and the caption's
    /// claim holds.
    #[test]
    fn the_printed_numbers_are_consistent() {
        let (targets, all_groups) = (PAPER_FIGURE16.rows().unwrap(), PAPER_GROUPS.rows().unwrap());
        for (model, domain, counts, parents) in targets {
            assert!(counts.iter().all(|k| k <= parents));
            let groups: Vec<&PaperGroupRow> = all_groups
                .iter()
                .filter(|g| g.0 == *model && g.1 == *domain)
                .collect();
            assert_eq!(groups.len(), 2);
            assert!(groups.iter().all(|g| g.3 <= g.5 && g.4 <= g.5));
            assert_eq!(groups.iter().map(|g| g.5).sum::<u64>(), *parents);
            assert_eq!(groups.iter().map(|g| g.3).sum::<u64>(), counts[2]);
            assert_eq!(groups.iter().map(|g| g.4).sum::<u64>(), counts[3]);
        }
        // D.12: "28 observed lexical selections and 20 constructed lexical candidates".
        for g in all_groups.iter().filter(|g| g.1 == "lexical") {
            assert_eq!(g.5, if g.2 == OBSERVED_ERROR { 28 } else { 20 }, "{g:?}");
        }
        // "Jev copies every indexed incorrect target."
        for p in targets.iter().filter(|p| p.0 == "Jev") {
            assert_eq!(p.2[3], p.3);
        }
        assert_eq!(printed_tests().unwrap().len(), 12);
    }

    /// Correct- and wrong-target arms fill (a, b); wrong targets are grouped by differences
    /// (arithmetic) or origin (lexical); the declared comparisons give the paired tests. The
    /// caption: "Intervals use 95% item bootstrap": every bar, gain and test of ours carries
    /// its interval.
    #[test]
    fn figure16_has_the_papers_columns_rows_intervals_and_differences() {
        let wrong = "IncorrectCopy/Full/code/indexed/serial";
        let wrong_raw = "IncorrectCopy/Full/code/raw/serial";
        let gold = ("gold", 0);
        let ts = vec![
            copy(
                "a1",
                "GoldCopy/Full/code/raw/serial",
                "arithmetic",
                false,
                gold,
            ),
            copy(
                "a1",
                "GoldCopy/Full/code/indexed/serial",
                "arithmetic",
                true,
                gold,
            ),
            copy("a1", wrong, "arithmetic", true, ("observed", 1)),
            copy("a2", wrong, "arithmetic", false, ("constructed", 3)),
            copy("a1", wrong_raw, "arithmetic", false, ("observed", 1)),
            copy("l1", wrong, "lexical", true, ("constructed", 4)),
            copy(
                "a1",
                "GoldCopy/Full/code/raw/independent",
                "arithmetic",
                true,
                gold,
            ),
        ];
        let stats = StatsConfig::default();
        let (targets, groups) = target_rows(&ts, &stats).unwrap();
        assert_eq!(targets.len(), 2);
        let count = |k, n| Count { k, n };
        assert_eq!(
            targets[0].counts,
            [count(0, 1), count(1, 1), count(0, 1), count(1, 2)]
        );
        assert_eq!(targets[0].wrong_gold_em, count(0, 3));
        let names: Vec<&str> = groups.iter().map(|g| g.counts.label.as_str()).collect();
        assert_eq!(names, [ONE_SUBSTITUTION, MULTIPLE_DIFFERENCES, CONSTRUCTED]);
        let rows: Vec<MetricRow> = paired_rows("m", "arithmetic", [20, 2, 20, 6], (0.0, 1.0))
            .into_iter()
            .chain([MetricRow {
                value: Some(0.0016),
                ..MetricRow::empty(0, "m", "arithmetic", None, "", "mcnemar_p_holm")
            }])
            .map(|r| MetricRow {
                comparison: TARGET_TESTS[0].1.into(),
                ..r
            })
            .collect();
        let tests = target_tests(&rows, &ts, &stats).unwrap();
        assert_eq!(tests.len(), 1);
        let md = figure16_layout(&targets, &groups, &tests, "StartLux")
            .unwrap()
            .markdown();
        for want in [
            "| Model | Domain | Correct target / raw | Correct target / indexed | Wrong target / raw \
             | Wrong target / indexed |",
            "| m | math | 0/1: 0.0 [0.0, 0.0] | 1/1: 100.0 [100.0, 100.0] | 0/1: 0.0 [0.0, 0.0] \
             | 1/2: 50.0 [0.0, 100.0] |",
            "| Jev | lexical | 11/48 | 48/48 | 10/48 | 48/48 |",
            "| Model | Domain | Incorrect targets | Raw | Indexed | Indexed − raw [95% CI] |",
            "| m | math | one substitution | 0/1: 0.0 [0.0, 0.0] | 1/1: 100.0 [100.0, 100.0] \
             | 100.0 [100.0, 100.0] |",
            "| m | math | multiple differences | – | 0/1: 0.0 [0.0, 0.0] | – |",
            "| Model | Domain | Incorrect targets | Raw | Indexed |",
            "| StartLux | math | multiple differences | 3/18 | 17/18 |",
            "| Qwen3.5-27B | lexical | observed error | 4/28 | 26/28 |",
            "| Model | Domain | Test | Difference [95% CI] | Holm p |",
            // Paired on the one parent both wrong-target arms hold (a1: raw 0, indexed 1).
            "| m | math | Wrong target: indexed − raw | 100.0 [100.0, 100.0] | 0.00160 |",
            "| Jev | math | Wrong target: indexed − raw | 29.2 | – |",
            "| StartLux | lexical | Indexed: wrong − correct target | 0.0 | – |",
            "Gold EM of the wrong-target arms: 0 of 4 trajectories",
            "## This run minus the paper (StartLux)",
            "| m | math | StartLux math | −25.0 | +0.0 | −20.8 | −47.9 |",
            "| m | math | one substitution | StartLux math one substitution | −23.3 | +0.0 |",
            "| m | lexical | constructed | StartLux lexical constructed | – | +10.0 |",
            "| m | math | Wrong target: indexed − raw | StartLux math | +22.9 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    /// A wrong-target arm's bar interval resamples its parents within length: 3 of 6
    /// faithful parents in two lengths give an interval strictly inside [0, 1] around 0.5.
    #[test]
    fn bar_intervals_resample_parents() {
        let ts: Vec<Trajectory> = (0..6)
            .map(|i| {
                let mut t = copy(
                    &format!("a{i}"),
                    "IncorrectCopy/Full/code/indexed/serial",
                    "arithmetic",
                    i % 2 == 0,
                    ("observed", 1),
                );
                t.length = 3 + i % 3;
                t
            })
            .collect();
        let (targets, _) = target_rows(&ts, &StatsConfig::default()).unwrap();
        let (d, lo, hi) = targets[0].intervals[3].expect("an interval");
        assert_eq!(d, 0.5);
        let (lo, hi) = (lo.unwrap(), hi.unwrap());
        assert!(
            0.0 < lo + 1e-12 && lo < 0.5 && 0.5 < hi && hi <= 1.0,
            "[{lo}, {hi}]"
        );
    }
}
