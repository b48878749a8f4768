//! Figures 15 and 16's numbers: complete copy fidelity to a supplied target (D.11, D.12).
//!
//! Figure 15: "Indexing improves complete copying under fixed position questions. With
//! supplied gold targets and 48 parents per domain, (a,b) indexed fidelity is high across
//! controllers, while raw Batch helps Qwen3.5-27B. (c,d) Serial indexing gains are positive for
//! every model/domain. I/S/B denote Independent/Serial/Batch; paired 95% item bootstrap
//! intervals preserve all conditions within each parent." (a, b) print "raw → indexed" counts
//! of 48 per model and controller; (c, d) draw the gains and print no number. Ours come from
//! the `copy` panel: (a, b) the fidelity counts of `GoldCopy/Full/code/{raw,indexed}/C`, C in
//! independent, serial, batch (the Direct arms are not drawn); (c, d) the declared unit
//! contrasts `indexed - raw, serial, DOMAIN` and, beside them, `batch - independent, raw,
//! DOMAIN` ("Six Serial indexing and six raw Batch-minus-Independent tests share Holm
//! correction", D.11): mean paired difference, length-stratified item-bootstrap interval, exact
//! sign-flip p Holm-corrected in the family "serial indexing and raw batch". The paper's gains
//! beside ours are its printed counts' differences over 48.
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
//! Holm-corrected within its family (the panel declares no unit contrast, so no interval).
//!
//! Reading the extracted figures: the PDF text lists the tick labels from the bottom
//! (`Qwen3.5-27B B`, …, `Jev I`) and the bar annotations from the top, so the annotations
//! belong to the labels in reverse: Jev, StartLux, Qwen3.5-27B, and I, S, B within a model.
//! Three printed facts fix this reading: Figure 16 (d)'s group sizes are then 28 observed and
//! 20 constructed lexical targets as D.12 states (label order gives 20 and 28); "Jev copies
//! every indexed incorrect target" holds for the first model's 48/48 in both domains (the last
//! model's lexical count is 46/48); "raw Batch helps Qwen3.5-27B" holds for raw Batch 48 against
//! Independent 13 (math) and 9 (lexical), where label order gives 28 against 26 and 8 against
//! 8. Figure 16's wrong-target counts are then the sums of its groups (checked in the tests).

use std::collections::BTreeMap;

use c2s_records::Trajectory;
use c2s_stats::{ContrastRow, MetricRow};

use super::padded::sig3;
use super::{differences, paper_domain, percent_interval, pp_diff, run_of, Count, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::MetricIndex;

/// Parents per model and domain in both figures.
pub const PAPER_PARENTS: u64 = 48;

/// The copy controllers of Figure 15, in its order: (as printed, arm label suffix).
pub const CONTROLLERS: [(&str, &str); 3] = [
    ("Independent", "independent"),
    ("Serial", "serial"),
    ("Batch", "batch"),
];

/// The prefix of the gold-target arms (`…/EVIDENCE/CONTROL`).
const GOLD_COPY: &str = "GoldCopy/Full/code/";
/// The prefix of the copy-incorrect panel's wrong-target arms (`…/EVIDENCE/serial`).
const INCORRECT_COPY: &str = "IncorrectCopy/Full/code/";

/// A printed count of the paper's 48 parents.
fn printed(k: u64) -> Count {
    Count {
        k,
        n: PAPER_PARENTS,
    }
}

/// Math before lexical, as both figures' panels.
fn domain_rank(domain: &str) -> usize {
    usize::from(domain != "math")
}

/// The copy arm of a trajectory: (evidence, control) of `PREFIX/EVIDENCE/CONTROL`.
fn copy_arm<'a>(arm: &'a str, prefix: &str) -> Option<(&'a str, &'a str)> {
    arm.strip_prefix(prefix)?.split_once('/')
}

/// A table's leading text columns and its header row, columns separated by ` | `.
type Layout = (usize, &'static str);

/// The columns of a layout's header row.
fn columns((_, header): Layout) -> Vec<&'static str> {
    header.split(" | ").collect()
}

/// A table of `rows` in `layout`, with one note.
fn table(layout: Layout, rows: Vec<Vec<String>>, note: &str) -> Table {
    Table {
        text_columns: layout.0,
        header: columns(layout).into_iter().map(String::from).collect(),
        rows,
        notes: vec![note.to_string()],
    }
}

const DIFFERENCE_NOTE: &str = "Percentage points (ours over our parents, the paper's over 48).";

/// A row of raw and indexed fidelity under one label: a controller of Figure 15 (a, b) or a
/// group of incorrect targets of Figure 16 (c, d).
#[derive(Debug, Clone, PartialEq)]
pub struct FidelityRow {
    pub model: String,
    pub domain: String,
    pub label: String,
    pub raw: Count,
    pub indexed: Count,
}

impl FidelityRow {
    fn cells(&self) -> Vec<String> {
        let text = [&self.model, &self.domain, &self.label].map(|s| s.to_string());
        let mut cells = text.to_vec();
        cells.extend([self.raw.cell(), self.indexed.cell()]);
        cells
    }
}

/// Fidelity rows by model, domain (math first) and label (ranked).
type FidelityRows = BTreeMap<(String, usize, String, usize, String), FidelityRow>;

/// Count `t`'s fidelity into the raw or indexed cell of its model, domain and ranked label.
fn tally(rows: &mut FidelityRows, t: &Trajectory, (rank, label): (usize, String), indexed: bool) {
    let domain = paper_domain(t.domain.as_str()).to_string();
    let key = (
        t.model.clone(),
        domain_rank(&domain),
        domain.clone(),
        rank,
        label.clone(),
    );
    let row = rows.entry(key).or_insert_with(|| FidelityRow {
        model: t.model.clone(),
        domain,
        label,
        raw: Count::default(),
        indexed: Count::default(),
    });
    let count = if indexed {
        &mut row.indexed
    } else {
        &mut row.raw
    };
    count.add(t.fidelity == Some(true));
}

/// A paired difference of one model and domain: a gain of Figure 15 (c, d) or a test of
/// Figure 16, with its interval and Holm p where there are.
#[derive(Debug, Clone, PartialEq)]
pub struct DifferenceRow {
    pub model: String,
    pub domain: String,
    pub label: &'static str,
    pub difference: Option<(f64, Option<f64>, Option<f64>)>,
    pub holm_p: Option<f64>,
}

impl DifferenceRow {
    fn cells(&self) -> Vec<String> {
        let text = [&self.model, &self.domain, self.label].map(|s| s.to_string());
        let mut cells = text.to_vec();
        cells.extend([percent_interval(self.difference), sig3(self.holm_p)]);
        cells
    }
}

/// Ours minus each compared paper model's row of the same domain and label: raw, indexed.
fn fidelity_differences(
    ours: &[FidelityRow],
    printed: &[FidelityRow],
    models: &[&str],
) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for r in ours {
        for p in printed.iter().filter(|p| {
            models.contains(&p.model.as_str()) && p.domain == r.domain && p.label == r.label
        }) {
            let percent = |c: Count| 100.0 * c.rate().unwrap_or_default();
            rows.push(vec![
                r.model.clone(),
                r.domain.clone(),
                r.label.clone(),
                format!("{} {} {}", p.model, p.domain, p.label),
                pp_diff(r.raw.rate(), percent(p.raw)),
                pp_diff(r.indexed.rate(), percent(p.indexed)),
            ]);
        }
    }
    rows
}

/// Ours minus each compared paper model's difference of the same domain and label.
fn difference_differences(
    ours: &[DifferenceRow],
    printed: &[DifferenceRow],
    models: &[&str],
) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for r in ours {
        for p in printed.iter().filter(|p| {
            models.contains(&p.model.as_str()) && p.domain == r.domain && p.label == r.label
        }) {
            let Some((paper, _, _)) = p.difference else {
                continue;
            };
            rows.push(vec![
                r.model.clone(),
                r.domain.clone(),
                r.label.to_string(),
                format!("{} {}", p.model, p.domain),
                pp_diff(r.difference.map(|d| d.0), 100.0 * paper),
            ]);
        }
    }
    rows
}

/// `rows` by model, domain (math first) and the order of their labels in `labels`.
fn sorted(mut rows: Vec<DifferenceRow>, labels: &[(&str, &str)]) -> Vec<DifferenceRow> {
    rows.sort_by_cached_key(|r| {
        let rank = labels.iter().position(|(label, _)| *label == r.label);
        (r.model.clone(), domain_rank(&r.domain), rank)
    });
    rows
}

/// Figure 15 (a, b) as printed: model, domain, and raw → indexed fidelity of 48 under each of
/// [`CONTROLLERS`] (I, S, B).
pub type PaperCopyRow = (&'static str, &'static str, [(u64, u64); 3]);

/// Figure 15 (a, b) as printed, read in annotation order (see the module note).
pub const PAPER_FIGURE15: [PaperCopyRow; 6] = [
    ("Jev", "math", [(28, 48), (29, 48), (26, 48)]),
    ("StartLux", "math", [(5, 48), (10, 48), (5, 48)]),
    ("Qwen3.5-27B", "math", [(13, 46), (13, 47), (48, 48)]),
    ("Jev", "lexical", [(8, 48), (9, 48), (8, 48)]),
    ("StartLux", "lexical", [(0, 47), (0, 43), (0, 47)]),
    ("Qwen3.5-27B", "lexical", [(9, 48), (11, 48), (48, 48)]),
];

/// The gains of Figure 15's Holm family: (as printed, the declared contrast's name before
/// `, DOMAIN`).
pub const GAINS: [(&str, &str); 2] = [
    ("Indexed − raw, Serial", "indexed - raw, serial"),
    ("Raw Batch − Independent", "batch - independent, raw"),
];

const COPY_TABLE: Layout = (3, "Model | Domain | Controller | Raw | Indexed");
const GAIN_TABLE: Layout = (3, "Model | Domain | Gain | Difference [95% CI] | Holm p");
const COPY_DIFFERENCES: Layout = (
    4,
    "Model | Domain | Controller | Paper row | Δ Raw | Δ Indexed",
);
const GAIN_DIFFERENCES: Layout = (4, "Model | Domain | Gain | Paper row | Δ Difference");

/// Our fidelity counts per model, domain and controller from the copy panel's trajectories.
pub fn copy_rows(trajectories: &[Trajectory]) -> Vec<FidelityRow> {
    let mut rows = BTreeMap::new();
    for t in trajectories {
        let Some((evidence, control)) = copy_arm(&t.arm, GOLD_COPY) else {
            continue;
        };
        let Some(rank) = CONTROLLERS.iter().position(|(_, c)| *c == control) else {
            continue;
        };
        if matches!(evidence, "raw" | "indexed") {
            let label = (rank, CONTROLLERS[rank].0.to_string());
            tally(&mut rows, t, label, evidence == "indexed");
        }
    }
    rows.into_values().collect()
}

/// Figure 15 (a, b) as printed, as rows.
pub fn printed_copies() -> Vec<FidelityRow> {
    PAPER_FIGURE15
        .iter()
        .flat_map(|&(model, domain, counts)| {
            CONTROLLERS
                .iter()
                .zip(counts)
                .map(move |((controller, _), (raw, indexed))| FidelityRow {
                    model: model.to_string(),
                    domain: domain.to_string(),
                    label: controller.to_string(),
                    raw: printed(raw),
                    indexed: printed(indexed),
                })
        })
        .collect()
}

/// Our gains from the copy panel's declared contrasts ([`GAINS`]).
pub fn gain_rows(contrasts: &[ContrastRow]) -> Vec<DifferenceRow> {
    let rows = contrasts.iter().filter_map(|c| {
        let (label, domain) = GAINS.iter().find_map(|(label, name)| {
            let domain = c.contrast.strip_prefix(name)?.strip_prefix(", ")?;
            Some((*label, paper_domain(domain).to_string()))
        })?;
        let difference = c.estimate.difference;
        Some(DifferenceRow {
            model: c.model.clone(),
            domain,
            label,
            difference: difference.map(|d| (d, c.estimate.ci_low, c.estimate.ci_high)),
            holm_p: c.sign_p_holm,
        })
    });
    sorted(rows.collect(), &GAINS)
}

/// The paper's count of (model, domain, controller): raw and indexed.
fn paper_copy(model: &str, domain: &str, controller: &str) -> Option<(u64, u64)> {
    let (_, _, counts) = PAPER_FIGURE15
        .iter()
        .find(|p| p.0 == model && p.1 == domain)?;
    let rank = CONTROLLERS.iter().position(|(c, _)| *c == controller)?;
    Some(counts[rank])
}

/// The paper's gain of (model, domain) as a fraction, derived from its printed counts: Serial
/// indexed − raw, or raw Batch − Independent.
pub fn paper_gain(model: &str, domain: &str, gain: &str) -> Option<f64> {
    let (compared, reference) = if gain == GAINS[0].0 {
        let (raw, indexed) = paper_copy(model, domain, "Serial")?;
        (indexed, raw)
    } else {
        let (batch, _) = paper_copy(model, domain, "Batch")?;
        let (independent, _) = paper_copy(model, domain, "Independent")?;
        (batch, independent)
    };
    Some((compared as f64 - reference as f64) / PAPER_PARENTS as f64)
}

/// Figure 15's gains derived from the printed counts, as rows.
pub fn printed_gains() -> Vec<DifferenceRow> {
    PAPER_FIGURE15
        .iter()
        .flat_map(|&(model, domain, _)| {
            GAINS.iter().map(move |&(gain, _)| DifferenceRow {
                model: model.to_string(),
                domain: domain.to_string(),
                label: gain,
                difference: paper_gain(model, domain, gain).map(|d| (d, None, None)),
                holm_p: None,
            })
        })
        .collect()
}

/// Figure 15's numbers: ours, the paper's printed counts and derived gains, the differences.
pub fn figure15_layout(copies: &[FidelityRow], gains: &[DifferenceRow], against: &str) -> Doc {
    let mut doc = Doc::new("Figure 15: Indexing improves complete copying (numbers)");
    doc.p(
        "Complete copy fidelity to a supplied gold target under fixed position questions, raw \
         and indexed evidence, per copy controller (Independent / Serial / Batch), and the \
         paired Indexed − raw Serial gain.",
    );
    doc.h(2, "This run");
    doc.h(3, "(a, b) Complete copy fidelity");
    doc.table(table(
        COPY_TABLE,
        copies.iter().map(FidelityRow::cells).collect(),
        &format!(
            "Fidelity of {GOLD_COPY}raw/C and {GOLD_COPY}indexed/C, C the controller (panel \
             copy; its Direct arms are not drawn)."
        ),
    ));
    doc.h(3, "(c, d) Paired gains");
    doc.table(table(
        GAIN_TABLE,
        gains.iter().map(DifferenceRow::cells).collect(),
        "Percentage points: the declared unit contrasts (indexed - raw, serial and batch - \
         independent, raw, per domain) with their length-stratified item-bootstrap intervals; \
         Holm p: exact sign-flip, Holm-corrected over the family serial indexing and raw batch.",
    ));
    doc.h(2, "The paper (Figure 15)");
    doc.h(3, "(a, b) Complete copy fidelity, raw → indexed");
    let copies_printed = printed_copies();
    doc.table(table(
        COPY_TABLE,
        copies_printed.iter().map(FidelityRow::cells).collect(),
        "Supplied gold targets, 48 parents per domain; read in the annotations' order (the \
         module documentation gives the evidence).",
    ));
    doc.h(3, "(c, d) Paired gains, derived from the printed counts");
    let gains_printed = printed_gains();
    doc.table(table(
        GAIN_TABLE,
        gains_printed.iter().map(DifferenceRow::cells).collect(),
        "The figure draws the Serial gains as bars with paired 95% item-bootstrap intervals and \
         prints no number: each difference here is the printed counts' difference over 48. The \
         raw Batch − Independent gains are not drawn (D.11 tests them in the same twelve-test \
         Holm family).",
    ));
    let (models, mut diff) = differences(
        &mut doc,
        PAPER_FIGURE15.iter().map(|p| p.0),
        against,
        COPY_DIFFERENCES.0,
        &columns(COPY_DIFFERENCES),
    );
    diff.rows = fidelity_differences(copies, &copies_printed, &models);
    diff.notes.push(DIFFERENCE_NOTE.into());
    doc.table(diff);
    doc.table(table(
        GAIN_DIFFERENCES,
        difference_differences(gains, &gains_printed, &models),
        "Percentage points, against the gain derived from the printed counts.",
    ));
    doc
}

/// Read the copy panel's run and lay out Figure 15's numbers.
pub fn figure15(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, "copy")?.load()?;
    let (contrasts, _) = run.contrast_tables()?;
    Ok(figure15_layout(
        &copy_rows(&run.trajectories),
        &gain_rows(&contrasts),
        against,
    ))
}

/// Figure 16 (a, b) as printed: model, domain and fidelity of 48 to the correct target (raw,
/// indexed) and the wrong target (raw, indexed).
pub type PaperTargetRow = (&'static str, &'static str, [u64; 4]);

/// Figure 16 (a, b) as printed, read in annotation order (see the module note).
pub const PAPER_FIGURE16: [PaperTargetRow; 6] = [
    ("Jev", "math", [28, 48, 34, 48]),
    ("StartLux", "math", [12, 48, 10, 47]),
    ("Qwen3.5-27B", "math", [17, 48, 15, 48]),
    ("Jev", "lexical", [11, 48, 10, 48]),
    ("StartLux", "lexical", [3, 45, 3, 45]),
    ("Qwen3.5-27B", "lexical", [11, 47, 5, 46]),
];

/// The groups of incorrect targets: arithmetic by differences from gold, lexical by origin.
pub const ONE_SUBSTITUTION: &str = "one substitution";
pub const MULTIPLE_DIFFERENCES: &str = "multiple differences";
pub const OBSERVED_ERROR: &str = "observed error";
pub const CONSTRUCTED: &str = "constructed";
const GROUP_ORDER: [&str; 4] = [
    ONE_SUBSTITUTION,
    MULTIPLE_DIFFERENCES,
    OBSERVED_ERROR,
    CONSTRUCTED,
];

/// Figure 16 (c, d) as printed: model, domain, group, and fidelity to the incorrect target
/// raw → indexed of the group's n.
pub type PaperGroupRow = (&'static str, &'static str, &'static str, u64, u64, u64);

/// Figure 16 (c, d) as printed, read in annotation order (see the module note).
pub const PAPER_GROUPS: [PaperGroupRow; 12] = [
    ("Jev", "math", ONE_SUBSTITUTION, 24, 30, 30),
    ("Jev", "math", MULTIPLE_DIFFERENCES, 10, 18, 18),
    ("StartLux", "math", ONE_SUBSTITUTION, 7, 30, 30),
    ("StartLux", "math", MULTIPLE_DIFFERENCES, 3, 17, 18),
    ("Qwen3.5-27B", "math", ONE_SUBSTITUTION, 10, 30, 30),
    ("Qwen3.5-27B", "math", MULTIPLE_DIFFERENCES, 5, 18, 18),
    ("Jev", "lexical", OBSERVED_ERROR, 9, 28, 28),
    ("Jev", "lexical", CONSTRUCTED, 1, 20, 20),
    ("StartLux", "lexical", OBSERVED_ERROR, 3, 27, 28),
    ("StartLux", "lexical", CONSTRUCTED, 0, 18, 20),
    ("Qwen3.5-27B", "lexical", OBSERVED_ERROR, 4, 26, 28),
    ("Qwen3.5-27B", "lexical", CONSTRUCTED, 1, 20, 20),
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

const TARGET_TABLE: Layout = (
    2,
    "Model | Domain | Correct target / raw | Correct target / indexed | Wrong target / raw | \
     Wrong target / indexed",
);
const GROUP_TABLE: Layout = (3, "Model | Domain | Incorrect targets | Raw | Indexed");
const TEST_TABLE: Layout = (3, "Model | Domain | Test | Difference | Holm p");
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
    pub model: String,
    pub domain: String,
    pub counts: [Count; 4],
    pub wrong_gold_em: Count,
}

impl TargetRow {
    fn cells(&self) -> Vec<String> {
        let mut cells = vec![self.model.clone(), self.domain.clone()];
        cells.extend(self.counts.iter().map(Count::cell));
        cells
    }
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

/// Our Figure 16 (a, b) and (c, d) rows from the copy-incorrect panel's trajectories.
pub fn target_rows(trajectories: &[Trajectory]) -> (Vec<TargetRow>, Vec<FidelityRow>) {
    let mut targets: BTreeMap<(String, usize, String), TargetRow> = BTreeMap::new();
    let mut groups = BTreeMap::new();
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
        let row = targets
            .entry((t.model.clone(), domain_rank(&domain), domain.clone()))
            .or_insert_with(|| TargetRow {
                model: t.model.clone(),
                domain,
                ..TargetRow::default()
            });
        row.counts[2 * usize::from(wrong) + usize::from(indexed)].add(t.fidelity == Some(true));
        if !wrong {
            continue;
        }
        row.wrong_gold_em.add(t.correct);
        let group = target_group(t);
        let group_rank = GROUP_ORDER.iter().position(|g| *g == group);
        tally(
            &mut groups,
            t,
            (group_rank.unwrap_or(GROUP_ORDER.len()), group),
            indexed,
        );
    }
    (
        targets.into_values().collect(),
        groups.into_values().collect(),
    )
}

/// Our declared comparisons ([`TARGET_TESTS`]) from the copy-incorrect panel's metric rows:
/// the pairing's `serial_em` (compared arm's fidelity) − `native_em` (reference arm's), and its
/// Holm-adjusted exact McNemar p.
pub fn target_tests(rows: &[MetricRow]) -> Vec<DifferenceRow> {
    let index = MetricIndex::new(rows);
    let tests = index.paired_groups().into_iter().filter_map(|g| {
        let &(label, _) = TARGET_TESTS.iter().find(|(_, c)| *c == g.comparison)?;
        let difference = index.value(&g, None, "serial_em").and_then(|compared| {
            Some((compared - index.value(&g, None, "native_em")?, None, None))
        });
        Some(DifferenceRow {
            model: g.model.clone(),
            domain: paper_domain(&g.domain).to_string(),
            label,
            difference,
            holm_p: index.value(&g, None, "mcnemar_p_holm"),
        })
    });
    sorted(tests.collect(), &TARGET_TESTS)
}

/// Figure 16 (a, b) as printed, as rows.
pub fn printed_targets() -> Vec<TargetRow> {
    PAPER_FIGURE16
        .iter()
        .map(|&(model, domain, counts)| TargetRow {
            model: model.to_string(),
            domain: domain.to_string(),
            counts: counts.map(printed),
            wrong_gold_em: Count::default(),
        })
        .collect()
}

/// Figure 16 (c, d) as printed, as rows.
pub fn printed_groups() -> Vec<FidelityRow> {
    PAPER_GROUPS
        .iter()
        .map(|&(model, domain, group, raw, indexed, n)| FidelityRow {
            model: model.to_string(),
            domain: domain.to_string(),
            label: group.to_string(),
            raw: Count { k: raw, n },
            indexed: Count { k: indexed, n },
        })
        .collect()
}

/// The paper's tests derived from its printed counts: wrong target indexed − raw, and indexed
/// wrong − correct target.
pub fn printed_tests() -> Vec<DifferenceRow> {
    PAPER_FIGURE16
        .iter()
        .flat_map(
            |&(model, domain, [_, correct_indexed, wrong_raw, wrong_indexed])| {
                [(0, wrong_raw), (1, correct_indexed)].map(|(rank, reference)| DifferenceRow {
                    model: model.to_string(),
                    domain: domain.to_string(),
                    label: TARGET_TESTS[rank].0,
                    difference: Some((
                        (wrong_indexed as f64 - reference as f64) / PAPER_PARENTS as f64,
                        None,
                        None,
                    )),
                    holm_p: None,
                })
            },
        )
        .collect()
}

/// Figure 16's numbers: ours, the paper's printed counts, the differences.
pub fn figure16_layout(
    targets: &[TargetRow],
    groups: &[FidelityRow],
    tests: &[DifferenceRow],
    against: &str,
) -> Doc {
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
        groups.iter().map(FidelityRow::cells).collect(),
        "Fidelity to the incorrect target; arithmetic grouped by the plan's positions differing \
         from gold, lexical by the plan's origin.",
    ));
    doc.h(3, "Paired tests");
    doc.table(table(
        TEST_TABLE,
        tests.iter().map(DifferenceRow::cells).collect(),
        "Percentage points, compared − reference fidelity on paired parents; Holm p: exact \
         McNemar of the declared comparison, Holm-corrected within its family (wrong-plan \
         indexing; indexed wrong minus correct). The panel declares no unit contrast, so no \
         interval.",
    ));
    doc.h(2, "The paper (Figure 16)");
    doc.h(3, "(a, b) Correct and wrong targets (count / 48)");
    let targets_printed = printed_targets();
    doc.table(table(
        TARGET_TABLE,
        targets_printed.iter().map(TargetRow::cells).collect(),
        "48 parents per domain; \"Gold EM = 0 for every arm with an incorrect target\". Read in \
         the annotations' order (the module documentation gives the evidence).",
    ));
    doc.h(3, "(c, d) Groups of incorrect targets, raw → indexed / n");
    let groups_printed = printed_groups();
    doc.table(table(
        GROUP_TABLE,
        groups_printed.iter().map(FidelityRow::cells).collect(),
        "Arithmetic: 48 observed selections; lexical: 28 observed, 20 constructed (D.12).",
    ));
    doc.h(3, "Paired tests, derived from the printed counts");
    let tests_printed = printed_tests();
    doc.table(table(
        TEST_TABLE,
        tests_printed.iter().map(DifferenceRow::cells).collect(),
        "The figure prints no test: each difference is the printed counts' difference over 48 \
         (D.12: \"Six wrong-plan indexing and six indexed wrong-minus-correct tests use separate \
         Holm families\").",
    ));
    let (models, mut diff) = differences(
        &mut doc,
        PAPER_FIGURE16.iter().map(|p| p.0),
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
        fidelity_differences(groups, &groups_printed, &models),
        "Percentage points (ours over our group's targets, the paper's over its group's n).",
    ));
    doc.table(table(
        TEST_DIFFERENCES,
        difference_differences(tests, &tests_printed, &models),
        "Percentage points, against the difference derived from the printed counts.",
    ));
    doc
}

/// Read the copy-incorrect panel's run and lay out Figure 16's numbers.
pub fn figure16(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, "copy-incorrect")?.load()?;
    let (targets, groups) = target_rows(&run.trajectories);
    let tests = target_tests(&run.metric_rows()?);
    Ok(figure16_layout(&targets, &groups, &tests, against))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::signed1;
    use crate::report::exhibits::testing::paired_rows;

    /// A copy trajectory of model `m` on `arm`: faithful or not, with its plan's record.
    fn trajectory(
        arm: &str,
        domain: &str,
        faithful: bool,
        plan: (Option<&str>, Option<u32>),
    ) -> Trajectory {
        serde_json::from_value(serde_json::json!({
            "item_id": "i", "domain": domain, "length": 3, "model": "m", "arm": arm,
            "support": "Full", "output": "abc", "correct": false, "valid": true,
            "fidelity": faithful, "plan_origin": plan.0, "plan_differences": plan.1,
            "membership": "Gold", "aborted": false, "calls": 3, "fills": 0,
            "prompt_tokens": 0, "completion_tokens": 0, "latency_ms": 0.0,
            "position_correct": [], "steps": [],
        }))
        .expect("a test trajectory")
    }

    fn gold(arm: &str, domain: &str, faithful: bool) -> Trajectory {
        trajectory(arm, domain, faithful, (Some("gold"), Some(0)))
    }

    /// A contrast row of model `m`: difference, interval and Holm p.
    fn contrast(name: &str, difference: f64, ci: (f64, f64), holm_p: f64) -> ContrastRow {
        serde_json::from_value(serde_json::json!({
            "model": "m", "contrast": name, "family": "serial indexing and raw batch",
            "units": 2, "incomplete_units": 0, "compared_mean": null, "reference_mean": null,
            "difference": difference, "ci_low": ci.0, "ci_high": ci.1, "sign_p": holm_p,
            "sign_p_holm": holm_p,
        }))
        .expect("a test contrast")
    }

    /// The transcribed counts agree with each other and with the text: every count is of its
    /// group, Figure 16's groups partition each model's 48 wrong targets (28 observed and 20
    /// constructed lexical ones, D.12) and add up to its wrong-target counts, and the captions'
    /// claims hold.
    #[test]
    fn the_printed_numbers_are_consistent() {
        for (raw, indexed) in PAPER_FIGURE15.iter().flat_map(|p| p.2) {
            assert!((raw < indexed && indexed <= PAPER_PARENTS) || raw == PAPER_PARENTS);
        }
        for model in ["Jev", "StartLux", "Qwen3.5-27B"] {
            for domain in ["math", "lexical"] {
                for (controller, _) in CONTROLLERS {
                    assert!(paper_copy(model, domain, controller).is_some());
                }
                // "(c,d) Serial indexing gains are positive for every model/domain."
                assert!(paper_gain(model, domain, GAINS[0].0).is_some_and(|g| g > 0.0));
                // "raw Batch helps Qwen3.5-27B": only Qwen's raw Batch exceeds Independent.
                let batch = paper_gain(model, domain, GAINS[1].0).expect("printed");
                assert_eq!(batch > 0.2, model == "Qwen3.5-27B", "{model} {domain}");
                let (_, _, counts) = PAPER_FIGURE16
                    .iter()
                    .find(|p| p.0 == model && p.1 == domain)
                    .expect("a printed row");
                assert!(counts.iter().all(|k| *k <= PAPER_PARENTS));
                let groups: Vec<&PaperGroupRow> = PAPER_GROUPS
                    .iter()
                    .filter(|g| g.0 == model && g.1 == domain)
                    .collect();
                assert_eq!(groups.len(), 2);
                assert!(groups.iter().all(|g| g.3 <= g.5 && g.4 <= g.5));
                assert_eq!(groups.iter().map(|g| g.5).sum::<u64>(), PAPER_PARENTS);
                assert_eq!(groups.iter().map(|g| g.3).sum::<u64>(), counts[2]);
                assert_eq!(groups.iter().map(|g| g.4).sum::<u64>(), counts[3]);
            }
        }
        // D.12: "28 observed lexical selections and 20 constructed lexical candidates".
        for g in PAPER_GROUPS.iter().filter(|g| g.1 == "lexical") {
            assert_eq!(g.5, if g.2 == OBSERVED_ERROR { 28 } else { 20 }, "{g:?}");
        }
        // "Jev copies every indexed incorrect target."
        for p in PAPER_FIGURE16.iter().filter(|p| p.0 == "Jev") {
            assert_eq!(p.2[3], PAPER_PARENTS);
        }
        let serial_gain = paper_gain("Jev", "lexical", GAINS[0].0).expect("printed");
        assert_eq!(signed1(100.0 * serial_gain), "81.2");
        assert_eq!(printed_tests().len(), 12);
    }

    /// Each gold-copy arm counts into its controller's raw or indexed cell; the Direct arms and
    /// other arms are not counted; the declared gains are read by name.
    #[test]
    fn figure15_has_the_papers_columns_rows_and_differences() {
        let ts = vec![
            gold("GoldCopy/Full/code/raw/serial", "arithmetic", true),
            gold("GoldCopy/Full/code/raw/serial", "arithmetic", false),
            gold("GoldCopy/Full/code/indexed/serial", "arithmetic", true),
            gold("GoldCopy/Full/code/indexed/serial", "arithmetic", true),
            gold("GoldCopy/Full/code/raw/batch", "lexical", true),
            gold("GoldCopy/Full/code/direct/serial", "arithmetic", true),
            gold("Native/code", "arithmetic", true),
        ];
        let copies = copy_rows(&ts);
        assert_eq!(copies.len(), 2);
        assert_eq!(copies[0].raw, Count { k: 1, n: 2 });
        assert_eq!(copies[1].indexed, Count::default());
        let gains = gain_rows(&[
            contrast("batch - independent, raw, lexical", -0.25, (-0.5, 0.0), 1.0),
            contrast("indexed - raw, serial, arithmetic", 0.5, (0.0, 1.0), 0.5),
            contrast(
                "serial - independent, raw, arithmetic",
                0.1,
                (0.0, 0.2),
                1.0,
            ),
        ]);
        assert_eq!(gains.len(), 2);
        assert_eq!(gains[0].label, GAINS[0].0);
        let md = figure15_layout(&copies, &gains, "Jev").markdown();
        for want in [
            "| Model | Domain | Controller | Raw | Indexed |",
            "| m | math | Serial | 1/2 | 2/2 |",
            "| m | lexical | Batch | 1/1 | – |",
            "| Qwen3.5-27B | math | Batch | 48/48 | 48/48 |",
            "| Model | Domain | Gain | Difference [95% CI] | Holm p |",
            "| m | math | Indexed − raw, Serial | 50.0 [0.0, 100.0] | 0.500 |",
            "| m | lexical | Raw Batch − Independent | −25.0 [−50.0, 0.0] | 1.00 |",
            "| Jev | math | Indexed − raw, Serial | 39.6 | – |",
            "## This run minus the paper (Jev)",
            "| m | math | Serial | Jev math Serial | −10.4 | +0.0 |",
            "| m | lexical | Batch | Jev lexical Batch | +83.3 | – |",
            "| m | math | Indexed − raw, Serial | Jev math | +10.4 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    /// Correct- and wrong-target arms fill (a, b); wrong targets are grouped by differences
    /// (arithmetic) or origin (lexical); the declared comparisons give the paired tests.
    #[test]
    fn figure16_has_the_papers_columns_rows_and_differences() {
        let wrong = "IncorrectCopy/Full/code/indexed/serial";
        let wrong_raw = "IncorrectCopy/Full/code/raw/serial";
        let ts = vec![
            gold("GoldCopy/Full/code/raw/serial", "arithmetic", false),
            gold("GoldCopy/Full/code/indexed/serial", "arithmetic", true),
            trajectory(wrong, "arithmetic", true, (Some("observed"), Some(1))),
            trajectory(wrong, "arithmetic", false, (Some("constructed"), Some(3))),
            trajectory(wrong_raw, "arithmetic", false, (Some("observed"), Some(1))),
            trajectory(wrong, "lexical", true, (Some("constructed"), Some(4))),
            gold("GoldCopy/Full/code/raw/independent", "arithmetic", true),
        ];
        let (targets, groups) = target_rows(&ts);
        assert_eq!(targets.len(), 2);
        let count = |k, n| Count { k, n };
        assert_eq!(
            targets[0].counts,
            [count(0, 1), count(1, 1), count(0, 1), count(1, 2)]
        );
        assert_eq!(targets[0].wrong_gold_em, count(0, 3));
        let names: Vec<&str> = groups.iter().map(|g| g.label.as_str()).collect();
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
        let tests = target_tests(&rows);
        assert_eq!(tests.len(), 1);
        let md = figure16_layout(&targets, &groups, &tests, "StartLux").markdown();
        for want in [
            "| Model | Domain | Correct target / raw | Correct target / indexed | Wrong target / raw \
             | Wrong target / indexed |",
            "| m | math | 0/1 | 1/1 | 0/1 | 1/2 |",
            "| Jev | lexical | 11/48 | 48/48 | 10/48 | 48/48 |",
            "| Model | Domain | Incorrect targets | Raw | Indexed |",
            "| m | math | one substitution | 0/1 | 1/1 |",
            "| m | math | multiple differences | – | 0/1 |",
            "| StartLux | math | multiple differences | 3/18 | 17/18 |",
            "| Qwen3.5-27B | lexical | observed error | 4/28 | 26/28 |",
            "| Model | Domain | Test | Difference | Holm p |",
            "| m | math | Wrong target: indexed − raw | 37.5 | 0.00160 |",
            "| Jev | math | Wrong target: indexed − raw | 29.2 | – |",
            "| StartLux | lexical | Indexed: wrong − correct target | 0.0 | – |",
            "Gold EM of the wrong-target arms: 0 of 4 trajectories",
            "## This run minus the paper (StartLux)",
            "| m | math | StartLux math | −25.0 | +0.0 | −20.8 | −47.9 |",
            "| m | math | one substitution | StartLux math one substitution | −23.3 | +0.0 |",
            "| m | lexical | constructed | StartLux lexical constructed | – | +10.0 |",
            "| m | math | Wrong target: indexed − raw | StartLux math | −39.6 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
