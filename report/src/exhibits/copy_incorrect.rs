//! Figure 16's numbers (D.12), from the `copy-incorrect` panel under Serial control: (a, b)
//! fidelity to the correct target (`GoldCopy/Full/code/{raw,indexed}/serial`) and the wrong one
//! (`IncorrectCopy/…`); (c, d) the wrong-target arms grouped as printed, arithmetic by
//! `plan_differences`, lexical by `plan_origin`; and the two declared comparisons, wrong-plan
//! indexing and indexed wrong minus correct, each with its exact McNemar p Holm-corrected
//! within its family.
//!
//! Every bar is a rate with its whole-item interval and every paired difference (the tests, each
//! group's indexed − raw gain) a paired whole-item interval, items resampled within length
//! (the caption: "Intervals use 95% item bootstrap"; D.12: "Whole-parent bootstrap preserves
//! target/evidence pairs", the panel's `[stats]`). The printed counts are read in the
//! annotations' order, as Figure 15's (exhibits/figure15.toml gives the evidence); the tests
//! the paper's counts imply are declared in exhibits/figure16.toml.

use std::collections::BTreeMap;

use c2s_records::Trajectory;
use c2s_stats::{MetricRow, StatsConfig};
use serde::{Serialize, Serializer};

use super::engine::Frame;
use super::item_intervals::Interval;
use super::table1::domain_rank;
use super::{item_intervals, paper_domain, run_of, Count, PanelRun};
use crate::tables::MetricIndex;

/// The prefix of the gold-target arms (`…/EVIDENCE/CONTROL`).
const GOLD_COPY: &str = "GoldCopy/Full/code/";
/// The prefix of the wrong-target arms (`…/EVIDENCE/serial`).
const INCORRECT_COPY: &str = "IncorrectCopy/Full/code/";

/// The copy arm of a trajectory: (evidence, control) of `PREFIX/EVIDENCE/CONTROL`.
fn copy_arm<'a>(arm: &'a str, prefix: &str) -> Option<(&'a str, &'a str)> {
    arm.strip_prefix(prefix)?.split_once('/')
}

/// Whether a copy trajectory reproduced its supplied target.
fn faithful(t: &Trajectory) -> bool {
    t.fidelity == Some(true)
}

/// A count as the engine's `[k, n]` pair.
fn count_pair<S: Serializer>(count: &Count, s: S) -> Result<S::Ok, S::Error> {
    [count.k, count.n].serialize(s)
}

/// Counts as the engine's `[k, n]` pairs.
fn count_pairs<S: Serializer>(counts: &[Count], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(counts.iter().map(|c| [c.k, c.n]))
}

/// The groups of incorrect targets as printed, in order: arithmetic by differences from gold,
/// lexical by origin (`observed`: an observing run's wrong selection; `constructed` for the bank).
pub const GROUPS: [&str; 4] = [
    "one substitution",
    "multiple differences",
    "observed error",
    "constructed",
];

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

/// A Figure 16 (a, b) row: fidelity to the correct target (raw, indexed) and the wrong target
/// (raw, indexed), with the wrong-target arms' gold EM.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TargetRow {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// Faithful copies of the parents: correct target raw, indexed; wrong target raw,
    /// indexed.
    #[serde(serialize_with = "count_pairs")]
    pub counts: [Count; 4],
    /// Each count's rate with its whole-item interval; `None` without parents.
    pub intervals: [Option<Interval>; 4],
    /// Gold-correct outputs of the two wrong-target arms together.
    #[serde(skip)]
    pub wrong_gold_em: Count,
}

/// A paired test of one model and domain, with its interval and Holm p.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DifferenceRow {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The test as the figure prints it ([`TARGET_TESTS`]).
    pub label: &'static str,
    /// Compared minus reference as a fraction, with its 95% interval; `None` when undefined.
    pub difference: Option<(f64, Option<f64>, Option<f64>)>,
    /// The Holm-corrected p of the test; `None` where none was run.
    pub holm_p: Option<f64>,
}

/// A Figure 16 (c, d) row of ours: a group's raw and indexed fidelity counts with each rate's
/// interval, and the paired indexed − raw gain on the group's parents.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupRow {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The group of incorrect targets ([`GROUPS`], or how an unprinted one reads).
    pub group: String,
    /// Faithful copies of the group's targets under raw evidence.
    #[serde(serialize_with = "count_pair")]
    pub raw: Count,
    /// Faithful copies of the group's targets under indexed evidence.
    #[serde(serialize_with = "count_pair")]
    pub indexed: Count,
    /// The raw rate (fraction) with its whole-item interval; `None` without parents.
    pub raw_interval: Option<Interval>,
    /// The indexed rate (fraction) with its whole-item interval; `None` without parents.
    pub indexed_interval: Option<Interval>,
    /// Indexed − raw on the group's parents with its paired interval; `None` when undefined.
    pub gain: Option<Interval>,
}

/// The group of a wrong-target trajectory: arithmetic by the plan's differences from gold,
/// other domains by the plan's origin (as Figure 16 (c, d)).
pub fn target_group(t: &Trajectory) -> String {
    if paper_domain(t.domain.as_str()) == "math" {
        match t.plan_differences {
            Some(1) => GROUPS[0].to_string(),
            Some(d) if d > 1 => GROUPS[1].to_string(),
            Some(d) => format!("{d} differences"),
            None => "differences not recorded".to_string(),
        }
    } else {
        match t.plan_origin.map(|o| o.as_str()) {
            Some("observed") => GROUPS[2].to_string(),
            Some("constructed") => GROUPS[3].to_string(),
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
            let rank = GROUPS.iter().position(|g| *g == group);
            let entry = (arms.groups).entry((key, rank.unwrap_or(GROUPS.len()), group));
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
    for (((model, _, domain), _, group), [raw, indexed]) in &arms.groups {
        groups.push(GroupRow {
            model: model.clone(),
            domain: domain.clone(),
            group: group.clone(),
            raw: count(raw),
            indexed: count(indexed),
            raw_interval: item_intervals::rate(raw.iter().copied(), faithful, stats)?,
            indexed_interval: item_intervals::rate(indexed.iter().copied(), faithful, stats)?,
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
    tests.sort_by_cached_key(|r| {
        let rank = TARGET_TESTS.iter().position(|(label, _)| *label == r.label);
        (r.model.clone(), domain_rank(&r.domain), rank)
    });
    Ok(tests)
}

/// Figure 16's rows of ours and the wrong-target arms' gold EM (`[k, n]`) over every row.
pub fn figure16_frame(
    targets: &[TargetRow],
    groups: &[GroupRow],
    tests: &[DifferenceRow],
) -> anyhow::Result<Frame> {
    let gold = (targets.iter()).fold([0, 0], |[k, n], r| {
        [k + r.wrong_gold_em.k, n + r.wrong_gold_em.n]
    });
    Ok(
        (Frame::new().rows("targets", targets).rows("groups", groups))
            .rows("tests", tests)
            .var("wrong_gold_em", gold),
    )
}

/// Read the copy-incorrect panel's run: Figure 16's rows.
pub fn figure16(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "copy-incorrect")?.load()?;
    let (targets, groups) = target_rows(&run.trajectories, &run.stats)?;
    let tests = target_tests(&run.metric_rows()?, &run.trajectories, &run.stats)?;
    figure16_frame(&targets, &groups, &tests)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{declared, paired_rows, trajectory};

    /// A copy trajectory of model `m` for `item` on `arm`: faithful or not, with its plan's
    /// origin and differences from gold.
    fn copy(item: &str, arm: &str, domain: &str, faithful: bool, plan: (&str, u32)) -> Trajectory {
        let mut t = trajectory(item, domain, 3, arm, false);
        t.fidelity = Some(faithful);
        t.plan_origin = c2s_records::PlanSource::parse(plan.0);
        t.plan_differences = Some(plan.1);
        t
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
        let (gold_raw, gold_indexed) = (
            "GoldCopy/Full/code/raw/serial",
            "GoldCopy/Full/code/indexed/serial",
        );
        let ts = vec![
            copy("a1", gold_raw, "arithmetic", false, gold),
            copy("a1", gold_indexed, "arithmetic", true, gold),
            copy("a1", wrong, "arithmetic", true, ("observed", 1)),
            copy("a2", wrong, "arithmetic", false, ("constructed", 3)),
            copy("a1", wrong_raw, "arithmetic", false, ("observed", 1)),
            copy("l1", wrong, "lexical", true, ("constructed", 4)),
            // Not a Serial arm: not counted.
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
        let names: Vec<&str> = groups.iter().map(|g| g.group.as_str()).collect();
        assert_eq!(names, [GROUPS[0], GROUPS[1], GROUPS[3]]);
        let rows: Vec<MetricRow> = paired_rows("m", "arithmetic", [20, 2, 20, 6], (0.0, 1.0))
            .into_iter()
            .chain([MetricRow {
                value: Some(0.0016),
                ..MetricRow::empty(
                    0,
                    "m",
                    Some(c2s_records::Domain::Arithmetic),
                    None,
                    "",
                    c2s_records::Metric::McnemarPHolm,
                )
            }])
            .map(|r| MetricRow {
                comparison: TARGET_TESTS[0].1.into(),
                ..r
            })
            .collect();
        let tests = target_tests(&rows, &ts, &stats).unwrap();
        assert_eq!(tests.len(), 1);
        let frame = figure16_frame(&targets, &groups, &tests).unwrap();
        // The paper's tests are its declared source's: two per printed row.
        let md = declared("figure16", &[], frame, "StartLux");
        for test in [TARGET_TESTS[0].0, TARGET_TESTS[1].0] {
            let printed = (md.lines())
                .filter(|l| !l.starts_with("| m |") && l.contains(&format!("| {test} |")));
            assert_eq!(printed.count(), 6, "{test} of each of the six printed rows");
        }
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
