//! Figure 15's numbers: complete copy fidelity to a supplied gold target (D.11), and the
//! copy tables shared with Figure 16 ([`super::copy_incorrect`], D.12).
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
use c2s_stats::ContrastRow;

use super::engine::sig3;
use super::paper::PaperTable;
use super::{differences, paper_domain, percent_interval, pp_diff, run_of, Count, PanelRun};
use crate::report::doc::{Doc, Table};

/// The copy controllers of Figure 15, in its order: (as printed, arm label suffix).
pub const CONTROLLERS: [(&str, &str); 3] = [
    ("Independent", "independent"),
    ("Serial", "serial"),
    ("Batch", "batch"),
];

/// The prefix of the gold-target arms (`…/EVIDENCE/CONTROL`).
pub(super) const GOLD_COPY: &str = "GoldCopy/Full/code/";
/// The prefix of the copy-incorrect panel's wrong-target arms (`…/EVIDENCE/serial`).
pub(super) const INCORRECT_COPY: &str = "IncorrectCopy/Full/code/";

/// Math before lexical, as both figures' panels.
pub(super) fn domain_rank(domain: &str) -> usize {
    usize::from(domain != "math")
}

/// The copy arm of a trajectory: (evidence, control) of `PREFIX/EVIDENCE/CONTROL`.
pub(super) fn copy_arm<'a>(arm: &'a str, prefix: &str) -> Option<(&'a str, &'a str)> {
    arm.strip_prefix(prefix)?.split_once('/')
}

/// A table's leading text columns and its header row, columns separated by ` | `.
pub(super) type Layout = (usize, &'static str);

/// The columns of a layout's header row.
pub(super) fn columns((_, header): Layout) -> Vec<&'static str> {
    header.split(" | ").collect()
}

/// A table of `rows` in `layout`, with one note.
pub(super) fn table(layout: Layout, rows: Vec<Vec<String>>, note: &str) -> Table {
    Table {
        text_columns: layout.0,
        header: columns(layout).into_iter().map(String::from).collect(),
        rows,
        notes: vec![note.to_string()],
    }
}

pub(super) const DIFFERENCE_NOTE: &str =
    "Percentage points (ours over our parents, the paper's over 48).";

/// A row of raw and indexed fidelity under one label: a controller of Figure 15 (a, b) or a
/// group of incorrect targets of Figure 16 (c, d).
#[derive(Debug, Clone, PartialEq)]
pub struct FidelityRow {
    /// The model (ours: the records' label; the paper's: as printed).
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The controller (`Independent`, `Serial`, `Batch`) or the incorrect-target group.
    pub label: String,
    /// Complete copies faithful to the supplied target under raw evidence, of the parents.
    pub raw: Count,
    /// Complete copies faithful to the supplied target under indexed evidence, of the parents.
    pub indexed: Count,
}

impl FidelityRow {
    pub(super) fn cells(&self) -> Vec<String> {
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
    /// The model (ours: the records' label; the paper's: as printed).
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The gain or test as the table prints it (e.g. `Indexed − raw, Serial`).
    pub label: &'static str,
    /// Compared minus reference as a fraction, with its 95% interval where there is one
    /// (the paper's, derived from printed counts, has none); `None` when undefined.
    pub difference: Option<(f64, Option<f64>, Option<f64>)>,
    /// The Holm-corrected p of the test; `None` where no test was run or none is printed.
    pub holm_p: Option<f64>,
}

impl DifferenceRow {
    pub(super) fn cells(&self) -> Vec<String> {
        let text = [&self.model, &self.domain, self.label].map(|s| s.to_string());
        let mut cells = text.to_vec();
        cells.extend([percent_interval(self.difference), sig3(self.holm_p)]);
        cells
    }
}

/// Ours minus each compared paper model's row of the same domain and label: raw, indexed.
pub(super) fn fidelity_differences(
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
pub(super) fn difference_differences(
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
pub(super) fn sorted(mut rows: Vec<DifferenceRow>, labels: &[(&str, &str)]) -> Vec<DifferenceRow> {
    rows.sort_by_cached_key(|r| {
        let rank = labels.iter().position(|(label, _)| *label == r.label);
        (r.model.clone(), domain_rank(&r.domain), rank)
    });
    rows
}

/// Figure 15 (a, b) as printed: model, domain, and raw → indexed fidelity of 48 under each of
/// [`CONTROLLERS`] (I, S, B).
pub type PaperCopyRow = (String, String, [(u64, u64); 3], u64);

/// Figure 15 (a, b) as printed, read in annotation order (see the module note).
pub static PAPER_FIGURE15: PaperTable<PaperCopyRow> = PaperTable::new("figure15");

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
pub fn printed_copies(rows: &[PaperCopyRow]) -> Vec<FidelityRow> {
    rows.iter()
        .flat_map(|(model, domain, counts, parents)| {
            CONTROLLERS
                .iter()
                .zip(counts)
                .map(move |((controller, _), (raw, indexed))| FidelityRow {
                    model: model.to_string(),
                    domain: domain.to_string(),
                    label: controller.to_string(),
                    raw: Count {
                        k: *raw,
                        n: *parents,
                    },
                    indexed: Count {
                        k: *indexed,
                        n: *parents,
                    },
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
fn paper_copy(
    rows: &[PaperCopyRow],
    model: &str,
    domain: &str,
    controller: &str,
) -> Option<(u64, u64)> {
    let (_, _, counts, _) = rows.iter().find(|p| p.0 == model && p.1 == domain)?;
    let rank = CONTROLLERS.iter().position(|(c, _)| *c == controller)?;
    Some(counts[rank])
}

/// The paper's gain of (model, domain) as a fraction, derived from its printed counts: Serial
/// indexed − raw, or raw Batch − Independent.
pub fn paper_gain(rows: &[PaperCopyRow], model: &str, domain: &str, gain: &str) -> Option<f64> {
    let (compared, reference) = if gain == GAINS[0].0 {
        let (raw, indexed) = paper_copy(rows, model, domain, "Serial")?;
        (indexed, raw)
    } else {
        let (batch, _) = paper_copy(rows, model, domain, "Batch")?;
        let (independent, _) = paper_copy(rows, model, domain, "Independent")?;
        (batch, independent)
    };
    let (_, _, _, parents) = rows.iter().find(|p| p.0 == model && p.1 == domain)?;
    Some((compared as f64 - reference as f64) / *parents as f64)
}

/// Figure 15's gains derived from the printed counts, as rows.
pub fn printed_gains(rows: &[PaperCopyRow]) -> Vec<DifferenceRow> {
    rows.iter()
        .flat_map(|(model, domain, _, _)| {
            GAINS.iter().map(move |&(gain, _)| DifferenceRow {
                model: model.to_string(),
                domain: domain.to_string(),
                label: gain,
                difference: paper_gain(rows, model, domain, gain).map(|d| (d, None, None)),
                holm_p: None,
            })
        })
        .collect()
}

/// Figure 15's numbers: ours, the paper's printed counts and derived gains, the differences.
pub fn figure15_layout(
    copies: &[FidelityRow],
    gains: &[DifferenceRow],
    against: &str,
) -> anyhow::Result<Doc> {
    let paper_rows = PAPER_FIGURE15.rows()?;
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
    let copies_printed = printed_copies(paper_rows);
    doc.table(table(
        COPY_TABLE,
        copies_printed.iter().map(FidelityRow::cells).collect(),
        "Supplied gold targets, 48 parents per domain; read in the annotations' order (the \
         module documentation gives the evidence).",
    ));
    doc.h(3, "(c, d) Paired gains, derived from the printed counts");
    let gains_printed = printed_gains(paper_rows);
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
        paper_rows.iter().map(|p| p.0.as_str()),
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
    Ok(doc)
}

/// Read the copy panel's run and lay out Figure 15's numbers.
pub fn figure15(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, "copy")?.load()?;
    let (contrasts, _) = run.contrast_tables()?;
    figure15_layout(
        &copy_rows(&run.trajectories),
        &gain_rows(&contrasts),
        against,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::signed1;

    /// A gold-copy trajectory of model `m` on `arm`, faithful or not.
    fn gold(arm: &str, domain: &str, faithful: bool) -> Trajectory {
        let mut t = crate::report::exhibits::testing::trajectory("i", domain, 3, arm, false);
        t.fidelity = Some(faithful);
        t
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

    /// The transcribed counts agree with the captions' claims.
    #[test]
    fn the_printed_numbers_are_consistent() {
        let rows = PAPER_FIGURE15.rows().unwrap();
        for (_, _, counts, parents) in rows {
            for (raw, indexed) in counts {
                assert!((raw < indexed && indexed <= parents) || raw == parents);
            }
        }
        for model in ["Jev", "StartLux", "Qwen3.5-27B"] {
            for domain in ["math", "lexical"] {
                for (controller, _) in CONTROLLERS {
                    assert!(paper_copy(rows, model, domain, controller).is_some());
                }
                // "(c,d) Serial indexing gains are positive for every model/domain."
                assert!(paper_gain(rows, model, domain, GAINS[0].0).is_some_and(|g| g > 0.0));
                // "raw Batch helps Qwen3.5-27B": only Qwen's raw Batch exceeds Independent.
                let batch = paper_gain(rows, model, domain, GAINS[1].0).expect("printed");
                assert_eq!(batch > 0.2, model == "Qwen3.5-27B", "{model} {domain}");
            }
        }
        let serial_gain = paper_gain(rows, "Jev", "lexical", GAINS[0].0).expect("printed");
        assert_eq!(signed1(100.0 * serial_gain), "81.2");
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
        let md = figure15_layout(&copies, &gains, "Jev").unwrap().markdown();
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
}
