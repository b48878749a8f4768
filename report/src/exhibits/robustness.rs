//! Figure 10's numbers (D.3), from the 72-parent robustness panel
//! (`data/panels/robustness-72.txt`): seven settings per model and domain, each paired within
//! itself (its own Native conditioning), read from three panels ([`SETTINGS`]); the Reference
//! is `repeats`' unsuffixed pairing (Table D2's Serial 0), and the other panels' own
//! unsuffixed pairings are compared with it in notes.
//!
//! SCR: the pairing's `scr` row (retained / setting-specific Native correct, length-stratified
//! item bootstrap). Serial EM change: the setting's Serial arm minus its own panel's reference
//! Serial arm on the items both hold, with D.3's "whole-item paired intervals"
//! ([`item_intervals::paired_difference`], the panel's draws, seed and level). Our rows are
//! declared in exhibits/figure10.toml (`[[sources]]`: the settings' pairings); this module adds
//! the changes and the notes on the panels' own references.

use std::collections::BTreeMap;

use c2s_records::{comparison_label, Arm, ArmSpec, Trajectory};
use c2s_stats::{MetricRow, StatsConfig};
use serde::Serialize;

use super::engine::Frame;
use super::item_intervals::Interval;
use super::repeats::counts;
use super::{item_intervals, paper_domain, run_of, PanelRun};
use crate::tables::{MetricIndex, UNDEFINED};

/// One of Figure 10's settings: its label, the panel it is read from and the suffix of its
/// arms' labels (`Native/code{suffix} vs Serial/Full/code{suffix}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// The setting as the figure prints it (`Reference`, `Order 1`, …).
    pub label: &'static str,
    /// The panel whose run holds the setting's arms.
    pub panel: &'static str,
    /// The arm-label suffix (`""`, `/O1`, `/v2`, `/r1`, …).
    pub suffix: &'static str,
}

impl Setting {
    const fn new(label: &'static str, panel: &'static str, suffix: &'static str) -> Setting {
        Setting {
            label,
            panel,
            suffix,
        }
    }
}

/// Figure 10's settings, in the order its counts are printed (drawn bottom to top).
pub const SETTINGS: [Setting; 7] = [
    Setting::new("Reference", "repeats", ""),
    Setting::new("Order 1", "option-orders", "/O1"),
    Setting::new("Order 2", "option-orders", "/O2"),
    Setting::new("Prompt v2", "prompt-variants", "/v2"),
    Setting::new("Prompt v3", "prompt-variants", "/v3"),
    Setting::new("Repeat 1", "repeats", "/r1"),
    Setting::new("Repeat 2", "repeats", "/r2"),
];

/// The panels Figure 10 reads, each with its own reference pairing.
pub const PANELS: [&str; 3] = ["prompt-variants", "option-orders", "repeats"];

/// The arm of kind `arm` (Full support, scored codes) with a setting's label suffix.
fn setting_arm(arm: Arm, suffix: &str) -> String {
    format!("{}{suffix}", ArmSpec::new(arm).label())
}

/// The Serial arm of a setting (`Serial/Full/code{suffix}`).
fn serial_arm(suffix: &str) -> String {
    setting_arm(Arm::Serial, suffix)
}

/// The paired comparison of a setting (`Native/code{suffix} vs Serial/Full/code{suffix}`).
fn pairing(suffix: &str) -> String {
    comparison_label(&setting_arm(Arm::Native, suffix), &serial_arm(suffix))
}

/// Each non-reference setting's paired Serial EM change, by (model, domain as the paper prints
/// it, index into [`SETTINGS`]) ([`serial_changes`]).
pub type Changes = BTreeMap<(String, String, usize), Option<Interval>>;

/// Per (model, domain), each panel's own unsuffixed pairing: (panel, retained / Native correct,
/// `None` without its SCR row).
pub type References = BTreeMap<(String, String), Vec<(String, Option<(u64, u64)>)>>;

/// The paired Serial EM change of every non-reference setting `panel` holds, per model and
/// domain, from the panel's trajectories.
pub fn serial_changes(
    panel: &str,
    trajectories: &[Trajectory],
    stats: &StatsConfig,
) -> anyhow::Result<Changes> {
    let mut by_arm: BTreeMap<(&str, &str, &str), Vec<&Trajectory>> = BTreeMap::new();
    for t in trajectories {
        let domain = paper_domain(t.domain.as_str());
        by_arm
            .entry((t.model.as_str(), domain, t.arm.as_str()))
            .or_default()
            .push(t);
    }
    let mut changes = BTreeMap::new();
    let reference_arm = serial_arm("");
    for (setting, s) in SETTINGS.iter().enumerate().skip(1) {
        if s.panel != panel {
            continue;
        }
        let arm = serial_arm(s.suffix);
        for (&(model, domain, _), compared) in by_arm.iter().filter(|((_, _, a), _)| *a == arm) {
            let Some(reference) = by_arm.get(&(model, domain, reference_arm.as_str())) else {
                continue;
            };
            let change = item_intervals::paired_difference(
                compared.iter().copied(),
                reference.iter().copied(),
                |t| t.correct,
                stats,
            )?;
            changes.insert((model.to_string(), domain.to_string(), setting), change);
        }
    }
    Ok(changes)
}

/// Every panel's own unsuffixed pairing per model and domain, from each panel's metric rows.
pub fn references(panels: &[(&str, Vec<MetricRow>)]) -> References {
    let mut out = References::new();
    for (panel, rows) in panels {
        let index = MetricIndex::new(rows);
        for g in index.paired_groups() {
            if g.comparison == pairing("") {
                let cell = (g.model.clone(), paper_domain(&g.domain).to_string());
                let retained = counts(index.get(&g, None, "scr"));
                (out.entry(cell).or_default()).push((panel.to_string(), retained));
            }
        }
    }
    out
}

/// Notes on the panels' own references where they disagree on a (model, domain), or one that
/// they agree.
fn reference_notes(references: &References) -> Vec<String> {
    let disagreeing: Vec<String> = (references.iter())
        .filter(|(_, refs)| refs.iter().any(|r| r.1 != refs[0].1))
        .map(|((model, domain), refs)| {
            let listed: Vec<String> = (refs.iter())
                .map(|(panel, retained)| match retained {
                    Some((k, n)) => format!("{panel} {k}/{n}"),
                    None => format!("{panel} {UNDEFINED}"),
                })
                .collect();
            format!(
                "{model} / {domain}: the panels' own references differ ({}); each change is \
                 taken from its own panel's reference.",
                listed.join(", ")
            )
        })
        .collect();
    if disagreeing.is_empty() && !references.is_empty() {
        vec!["The panels' own references agree on every model and domain.".to_string()]
    } else {
        disagreeing
    }
}

/// A note on the panels' own references (one per disagreeing model and domain, or one that
/// they agree).
#[derive(Serialize)]
struct ReferenceNote {
    note: String,
}

/// Figure 10's rows besides ours and the paper's (declared in exhibits/figure10.toml): the
/// notes on the panels' own references (`reference_notes`), the settings' labels and the
/// Serial EM changes (`changes`, by `MODEL|DOMAIN|PAIRING`).
pub fn frame(references: &References, changes: &Changes) -> Frame {
    let notes: Vec<ReferenceNote> = (reference_notes(references).into_iter())
        .map(|note| ReferenceNote { note })
        .collect();
    let labels: Vec<&str> = SETTINGS.iter().map(|s| s.label).collect();
    let changes: BTreeMap<String, Option<Interval>> = (changes.iter())
        .map(|((model, domain, setting), change)| {
            let pairing = pairing(SETTINGS[*setting].suffix);
            (format!("{model}|{domain}|{pairing}"), *change)
        })
        .collect();
    (Frame::new().rows("reference_notes", &notes))
        .var("settings", labels)
        .var("changes", changes)
}

/// Read the three panels' runs: the references and Serial EM changes (our rows are declared in
/// exhibits/figure10.toml).
pub fn figure10(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let (mut own, mut changes) = (Vec::new(), Changes::new());
    for panel in PANELS {
        let run = run_of(runs, panel)?.load()?;
        own.push((panel, run.metric_rows()?));
        changes.extend(serial_changes(panel, &run.trajectories, &run.stats)?);
    }
    Ok(frame(&references(&own), &changes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::sources::PanelRecords;
    use crate::exhibits::testing::{declared, paired_rows, panel_metrics, trajectory};

    /// One (model, domain) panel of Figure 10 as printed: retained / Native correct per
    /// setting, in [`SETTINGS`]' order.
    #[derive(Debug, serde::Deserialize, Serialize)]
    struct PaperPanel {
        model: String,
        domain: String,
        retained: [(u64, u64); 7],
    }

    static PAPER: crate::exhibits::paper::PaperTable<PaperPanel> =
        crate::exhibits::paper::PaperTable::new("figure10");

    fn setting(label: &str) -> usize {
        SETTINGS
            .iter()
            .position(|s| s.label == label)
            .expect("a setting of Figure 10")
    }

    fn paper(model: &str, domain: &str) -> &'static PaperPanel {
        PAPER
            .rows()
            .unwrap()
            .iter()
            .find(|p| p.model == model && p.domain == domain)
            .expect("a panel of Figure 10")
    }

    /// D.3's text: "Jev leads all seven arithmetic settings and five lexical settings; two
    /// lexical settings have no successes."
    #[test]
    fn the_transcription_agrees_with_the_text() {
        let scr = |(k, n): (u64, u64)| k as f64 / n as f64;
        for (domain, leads) in [("math", 7), ("lexical", 5)] {
            let jev = paper("Jev", domain);
            let led = (0..SETTINGS.len())
                .filter(|&s| {
                    PAPER
                        .rows()
                        .unwrap()
                        .iter()
                        .filter(|p| p.domain == domain && p.model != "Jev")
                        .all(|p| scr(jev.retained[s]) > scr(p.retained[s]))
                })
                .count();
            assert_eq!(led, leads, "{domain}");
        }
        let empty = paper("Jev", "lexical")
            .retained
            .iter()
            .filter(|(k, _)| *k == 0)
            .count();
        assert_eq!(empty, 2);
    }

    fn relabel(rows: Vec<MetricRow>, suffix: &str) -> Vec<MetricRow> {
        rows.into_iter()
            .map(|r| MetricRow {
                comparison: pairing(suffix),
                ..r
            })
            .collect()
    }

    fn panel(name: &str, settings: &[(&str, [u64; 4])]) -> PanelRecords {
        let rows = (settings.iter())
            .flat_map(|(suffix, joint)| {
                relabel(paired_rows("m", "arithmetic", *joint, (0.4, 1.0)), suffix)
            })
            .collect();
        panel_metrics(name, rows)
    }

    /// Figure 10 laid out from `panels` (in [`PANELS`]' order) and the Serial EM `changes`.
    fn figure(panels: &[PanelRecords], changes: &Changes, against: &str) -> String {
        let own: Vec<(&str, Vec<MetricRow>)> = (panels.iter())
            .map(|p| (p.panel.as_str(), p.metric_rows.clone()))
            .collect();
        let frame = frame(&references(&own), changes);
        declared("figure10", panels, frame, against)
    }

    #[test]
    fn the_layout_has_the_papers_settings_counts_and_differences() {
        let changes = Changes::from([(
            ("m".to_string(), "math".to_string(), setting("Prompt v2")),
            Some((0.125, Some(-0.1), Some(0.3))),
        )]);
        let prompts = panel(
            "prompt-variants",
            &[("", [3, 1, 0, 4]), ("/v2", [3, 1, 1, 3])],
        );
        let orders = panel(
            "option-orders",
            &[("", [4, 0, 0, 4]), ("/O1", [2, 2, 1, 3])],
        );
        let repeated = panel("repeats", &[("", [3, 1, 0, 4]), ("/r1", [3, 1, 0, 4])]);
        let md = figure(&[prompts, orders, repeated], &changes, "Jev");
        let labels: Vec<&str> = (md.lines())
            .filter_map(|l| l.strip_prefix("| m | math | "))
            .take(4)
            .map(|l| l.split(" | ").next().unwrap())
            .collect();
        assert_eq!(labels, ["Reference", "Order 1", "Prompt v2", "Repeat 1"]);
        for want in [
            "| Model | Domain | Setting | Retained / Native correct | SCR [95% CI] | Serial EM | Serial EM change [95% CI] |",
            "| m | math | Reference | 3/4 | 75.0 [40.0, 100.0] | 37.5 | reference |",
            "| m | math | Order 1 | 2/4 | 50.0 [40.0, 100.0] | 37.5 | – |",
            "| m | math | Prompt v2 | 3/4 | 75.0 [40.0, 100.0] | 50.0 | 12.5 [−10.0, 30.0] |",
            "| m | math | Repeat 1 | 3/4 | 75.0 [40.0, 100.0] | 37.5 | – |",
            "| Jev | math | Reference | 12/35 | 34.3 | not printed | not printed |",
            "| Qwen3-8B | lexical | Repeat 2 | 0/34 | 0.0 | not printed | not printed |",
            "## This run minus the paper (Jev)",
            "| Model | Domain | Setting | Paper panel | Δ Retained | Δ Native correct | Δ SCR |",
            "| m | math | Reference | Jev / math | −9 | −31 | +40.7 |",
            "m / math: the panels' own references differ (prompt-variants 3/4, option-orders 4/4, repeats 3/4)",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    #[test]
    fn every_printed_model_is_compared_when_against_is_not_printed() {
        let repeats = panel("repeats", &[("", [1, 1, 0, 2])]);
        let md = figure(&[repeats], &Changes::new(), "Qwen3.5-27B");
        for want in [
            "## This run minus the paper (Jev, StartLux, Qwen3-8B)",
            "| m | math | Reference | StartLux / math | +0 | −18 | +45.0 |",
            "| m | math | Reference | Qwen3-8B / math | +1 | −3 | +50.0 |",
            "The panels' own references agree on every model and domain.",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    /// The notes on the panels' own references are printed one each, in order, also under a
    /// table without rows (a panel holding only its reference pairing).
    #[test]
    fn the_reference_notes_are_printed_also_without_rows() {
        let orders = panel("option-orders", &[("", [4, 0, 0, 4])]);
        let prompts = panel("prompt-variants", &[("", [3, 1, 0, 4])]);
        let md = figure(&[prompts, orders], &Changes::new(), "Jev");
        assert!(!md.contains("| m | math |"), "{md}");
        let want = "m / math: the panels' own references differ (prompt-variants 3/4, \
                    option-orders 4/4); each change is taken from its own panel's reference.";
        assert_eq!(md.matches(want).count(), 1, "missing {want:?} in\n{md}");
    }

    /// D.3: "Complete trajectories use actual prefixes and whole-item paired intervals." Each
    /// setting's change is its Serial arm minus its panel's reference Serial arm on the same
    /// items, with a paired interval; settings of other panels are left to their panels.
    #[test]
    fn serial_em_changes_are_whole_item_paired_differences() {
        let (reference, order1) = (serial_arm(""), serial_arm("/O1"));
        let mut trajectories = Vec::new();
        for i in 0..24 {
            let (item, length) = (format!("a{i}"), 3 + i % 4);
            // Reference correct on items 0..12, Order 1 on 0..6 and 12..14: −4 items of 24.
            let o1 = i < 6 || (12..14).contains(&i);
            trajectories.push(trajectory(&item, "arithmetic", length, &reference, i < 12));
            trajectories.push(trajectory(&item, "arithmetic", length, &order1, o1));
        }
        // An item only the compared arm holds is not paired.
        trajectories.push(trajectory("extra", "arithmetic", 3, &order1, true));
        let stats = StatsConfig {
            bootstrap_draws: 999,
            ..StatsConfig::default()
        };
        let changes = serial_changes("option-orders", &trajectories, &stats).unwrap();
        assert_eq!(changes.len(), 1, "{changes:?}");
        let (d, lo, hi) =
            changes[&("m".to_string(), "math".to_string(), setting("Order 1"))].expect("a change");
        assert!((d - (-4.0 / 24.0)).abs() < 1e-12, "{d}");
        let (lo, hi) = (lo.unwrap(), hi.unwrap());
        assert!(lo < d && d < hi, "[{lo}, {hi}]");
        // The repeats panel holds no Order 1 arm.
        assert!(serial_changes("repeats", &trajectories, &stats)
            .unwrap()
            .is_empty());
    }
}
