//! The tests of the exhibits whose rows their specs declare whole (`[[sources]]`, no code):
//! each section lays out one exhibit (or two read from one panel) from small records and
//! checks its columns, rows and differences against the paper's.

/// Figure 2's numbers (the paper plots them and prints none): per domain ((a, b) math, (c, d)
/// lexical), model / interface of Table 1's panels (`table1-code`, `table1-direct`) and target
/// length, the runs' per-length Native EM and SCR rows with their intervals. Its rows are
/// declared in exhibits/figure2.toml (`[[sources]]`: each panel's paired groups by length).
mod figure2 {
    use c2s_stats::MetricRow;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::testing::{declared, paired_rows, panel_metrics};

    #[test]
    fn the_layout_has_one_row_per_series_and_length() {
        let mut rows = Vec::new();
        for (length, joint) in [(3, [3, 1, 0, 0]), (4, [0, 2, 0, 2])] {
            rows.extend(
                paired_rows("m", "arithmetic", joint, (0.2, 0.9))
                    .into_iter()
                    .map(|r| MetricRow {
                        length: Some(length),
                        ..r
                    }),
            );
        }
        rows.extend(paired_rows("m", "arithmetic", [3, 3, 0, 2], (0.1, 0.8)));
        let panel = panel_metrics("table1-direct", rows);
        let md = declared("figure2", &[panel], Frame::new(), "Jev");
        assert_eq!(md.matches("| m (direct) |").count(), 2, "{md}");
        for want in [
            "## (a, b) math",
            "| Model / interface | Length | Items | Native EM [95% CI] | SCR count | SCR [95% CI] |",
            "| m (direct) | 3 | 4 | 100.0 | 3/4 | 75.0 [20.0, 90.0] |",
            "| m (direct) | 4 | 4 | 50.0 | 0/2 | 0.0 [20.0, 90.0] |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert!(!md.contains("(c, d)"), "{md}");
    }
}

/// Table D13: the original lexical population (Table 1's code panel, `table1-code`) under D.15's
/// equal-length mixture ("each length weight 1/6 and each item 1/(6 n_L)"): the run's
/// `*_equal_length` metric rows, declared in exhibits/tableD13.toml (`[[sources]]`). The
/// paper's "New lexical" cohort of 2,347 targets is not published nor built here, so its rows
/// have none of ours.
mod table_d13 {
    use c2s_stats::MetricRow;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::testing::{declared, panel_metrics};

    fn row(metric: &str, value: f64) -> MetricRow {
        MetricRow {
            value: Some(value),
            ci_low: Some(value - 0.01),
            ci_high: Some(value + 0.01),
            ..MetricRow::empty(
                0,
                "m",
                Some(c2s_records::Domain::Lexical),
                None,
                "Native/code vs Serial/Full/code",
                c2s_records::Metric::parse(metric).unwrap(),
            )
        }
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let rows = vec![
            row("both", 0.1),
            row("native_em_equal_length", 0.9),
            row("serial_em_equal_length", 0.1),
            row("scr_equal_length", 0.11),
        ];
        let panel = panel_metrics("table1-code", rows);
        let md = declared("tableD13", &[panel], Frame::new(), "Jev");
        assert_eq!(md.matches("| m | Original lexical |").count(), 1, "{md}");
        for want in [
            "| Model | Population | Mixture | Native EM | Serial EM | SCR |",
            "| m | Original lexical | Equal length | 90.0 [89.0, 91.0] | 10.0 [9.0, 11.0] | 11.0 [10.0, 12.0] |",
            "| Jev | New lexical | Source | 99.2 [98.8, 99.5] | 0.6 [0.3, 0.9] | 0.6 [0.3, 0.9] |",
            "| m | Jev original lexical, equal | −9.5 | +7.9 | +8.9 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}

/// Table D15, from Table 1's panels (`table1-code`, `table1-direct`) and the semantic bridge
/// (`semantic-bridge`, its named and binary fields): each paired group's joint counts, SCR,
/// ∆ = SCR − Serial EM ("Jev math … 33.0 +0.9": 123/373 − 123/384) and the gain rate, Serial
/// only / (Serial only + neither). Its rows are declared in exhibits/tableD15.toml
/// (`[[sources]]`: each panel's paired groups).
mod table_d15 {
    use c2s_stats::MetricRow;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::testing::{declared, paired_rows, panel_metrics};

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let mut rows = paired_rows("m", "arithmetic", [2, 3, 1, 2], (0.1, 0.7));
        rows.push(MetricRow {
            value: Some(1.0 / 3.0),
            numerator: Some(1),
            denominator: Some(3),
            ..MetricRow::empty(
                0,
                "m",
                Some(c2s_records::Domain::Arithmetic),
                None,
                "Native/code vs Serial/Full/code",
                c2s_records::Metric::GainRate,
            )
        });
        // SCR 2/5 = 40.0; Serial EM 3/8 = 37.5; ∆ +2.5; gain 1/3.
        let md = declared(
            "tableD15",
            &[panel_metrics("table1-code", rows)],
            Frame::new(),
            "Jev",
        );
        assert_eq!(md.matches("| m / code | math | 8 |").count(), 1, "{md}");
        for want in [
            "| Model / interface | Task | Items | Joint counts | SCR (%) | ∆ | Gain rate (%) |",
            "| m / code | math | 8 | 2/3/1/2 | 40.0 | +2.5 | 33.3 |",
            "| Jev | math | 384 | 123/250/0/11 | 33.0 | +0.9 | 0.0 |",
            "| Qwen3-8B | binary fields | 128 | 1/18/19/90 | 5.3 | −10.4 | 17.4 |",
            "| m / code | math | Jev / math | +7.0 | +1.6 | +33.3 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        // The bridge's rows keep only its two representations.
        let mut bridge = paired_rows("m", "semantic_named", [1, 1, 1, 1], (0.0, 1.0));
        bridge.extend(paired_rows("m", "arithmetic", [1, 1, 1, 1], (0.0, 1.0)));
        let md = declared(
            "tableD15",
            &[panel_metrics("semantic-bridge", bridge)],
            Frame::new(),
            "Jev",
        );
        assert!(md.contains("| m | named fields | 4 | 1/1/1/1 |"), "{md}");
        assert!(!md.contains("| m | math |"), "{md}");
    }
}

/// Table 3 (E.3, D.8): Native, WholeGenerate, Position query (Serial, one character per
/// request) and PrefixContinue on `config/panels/table3.toml`, counted from the run's
/// trajectories per model: correct (strict string EM), valid and items per domain, and model
/// calls. Its rows are declared in exhibits/table3.toml (`[[sources]]`: the panel's
/// trajectories summed per model and interface); this module holds its tests.
mod table3 {
    use c2s_records::Trajectory;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::sources::PanelRecords;
    use crate::exhibits::testing::{declared, trajectory};

    /// `items` trajectories of `arm` in `domain`: the first `correct` correct, the first
    /// `valid` valid, `calls` model calls in all.
    fn cell(
        arm: &str,
        domain: &str,
        items: usize,
        correct: usize,
        valid: usize,
        calls: u32,
    ) -> Vec<Trajectory> {
        (0..items)
            .map(|i| {
                let mut t = trajectory(&format!("{domain}-{i}"), domain, 3, arm, i < correct);
                t.valid = i < valid;
                t.calls = calls / items as u32 + u32::from(i < calls as usize % items);
                t
            })
            .collect()
    }

    fn laid_out(trajectories: Vec<Trajectory>) -> String {
        let panel = PanelRecords {
            panel: "table3".into(),
            metric_rows: vec![],
            trajectories,
        };
        declared("table3", &[panel], Frame::new(), "Qwen3.5-27B")
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let ours = [
            cell("PrefixContinue/string/max32", "arithmetic", 8, 4, 8, 44),
            cell("PrefixContinue/string/max32", "lexical", 8, 0, 1, 44),
            cell("Native/string", "arithmetic", 8, 6, 8, 8),
            cell("Native/string", "lexical", 8, 2, 8, 8),
        ];
        let md = laid_out(ours.concat());
        for want in [
            "| Interface | Arithmetic | Lexical | Valid | Calls |",
            "| Native | 6/8 | 2/8 | 100/100 | 1.00 |",
            "| PrefixContinue | 4/8 | 0/8 | 100/12.5 | 5.50 |",
            "| PrefixContinue | 94/96 | 0/96 | 100/9.4 | 5.50 |",
            "| Position query | 14/96 | 27/96 | 100/100 | 5.50 |",
            "| m | Native | −22.9 | −75.0 | +0.0 | +0.0 | +0.00 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        // Table 3's order: Native before PrefixContinue.
        assert!(md.find("| Native | 6/8").unwrap() < md.find("| PrefixContinue | 4/8").unwrap());
    }

    #[test]
    fn arms_map_to_the_tables_interfaces() {
        let ours = [
            cell("Serial/Full/char", "lexical", 1, 1, 1, 1),
            cell("WholeGenerate/string/max32", "lexical", 1, 1, 1, 1),
            cell("Independent/Full/char", "lexical", 1, 1, 1, 1),
        ];
        let md = laid_out(ours.concat());
        assert!(md.contains("| Position query | 0/0 | 1/1 |"), "{md}");
        assert!(md.contains("| WholeGenerate | 0/0 | 1/1 |"), "{md}");
        assert!(!md.contains("Independent"), "{md}");
    }
}

/// Table 4 and Figure 4's numbers from `config/panels/fresh-plan.toml`: SelfPlanSpell copying
/// the model's own fresh Native choice with raw and with indexed evidence, per model and domain:
/// raw fidelity, indexed fidelity and the indexed outputs' gold EM. Table 4 is the Serial
/// control; Figure 4 adds the Independent control. Both are counts over the panel's
/// trajectories, declared in exhibits/table4.toml and exhibits/figure4.toml (`[[sources]]`);
/// no code computes them.
mod table4_and_figure4 {
    use c2s_records::Trajectory;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::sources::PanelRecords;
    use crate::exhibits::testing::declared;

    fn trajectory(arm: &str, fidelity: bool, correct: bool) -> Trajectory {
        serde_json::from_value(serde_json::json!({
            "item_id": "i", "domain": "arithmetic", "length": 3, "model": "m", "arm": arm,
            "support": "Full", "output": "123", "correct": correct, "valid": true,
            "fidelity": fidelity, "membership": "Gold", "aborted": false, "calls": 3,
            "fills": 0, "prompt_tokens": 0, "completion_tokens": 0, "latency_ms": 0.0,
            "steps": [], "position_correct": [],
        }))
        .expect("a test trajectory")
    }

    fn panel(trajectories: Vec<Trajectory>) -> PanelRecords {
        PanelRecords {
            panel: "fresh-plan".into(),
            metric_rows: vec![],
            trajectories,
        }
    }

    #[test]
    fn figure4_has_both_controls_and_the_papers_bars() {
        let ts = vec![
            trajectory("SelfPlanSpell/Full/code/raw/independent", false, false),
            trajectory("SelfPlanSpell/Full/code/indexed/independent", true, true),
            trajectory("SelfPlanSpell/Full/code/raw/serial", true, true),
            trajectory("SelfPlanSpell/Full/code/indexed/serial", true, false),
        ];
        let md = declared("figure4", &[panel(ts)], Frame::new(), "Jev");
        for want in [
            "| Model | Domain | Control | Raw | Indexed | Indexed gold EM |",
            "| m | math | Independent | 0/1 | 1/1 | 1/1 |",
            "| m | math | Serial | 1/1 | 1/1 | 0/1 |",
            "| StartLux | lexical | Independent | 0/30 | 29/30 | marker, not printed |",
            "| m | math | Independent | Jev math Independent | −43.3 | +0.0 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        // 30 plans: raw faithful on 3, indexed faithful on 27 and gold-correct on 12.
        let mut ts = Vec::new();
        for i in 0..30 {
            ts.push(trajectory(
                "SelfPlanSpell/Full/code/raw/serial",
                i < 3,
                false,
            ));
            ts.push(trajectory(
                "SelfPlanSpell/Full/code/indexed/serial",
                i < 27,
                i < 12,
            ));
        }
        let md = declared("table4", &[panel(ts)], Frame::new(), "Qwen3.5-27B");
        for want in [
            "| Model | Domain | Raw | Indexed | Gold EM |",
            "| m | math | 3/30 | 27/30 | 12/30 |",
            "| StartLux | lexical | 1/30 | 29/30 | 28/30 |",
            "| m | math | Jev math | −46.7 | −10.0 | −53.3 |",
            "| m | math | StartLux math | −16.7 | +6.7 | −13.3 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}

/// Table D16 (lexical output resource audit) from the support panel
/// (`config/panels/support.toml`): the lexical Serial trajectories of Full, TrieCall, TrieFill
/// and UnionCall counted by their `membership` class and `recombination` flag. Gold-synset
/// lemmas and outputs classed without a WordNet index (`outside`) are counted apart, in a note.
/// Counted on every item and on the qwen-192 subset, the paper's Qwen rows' parents (D.6,
/// [`super::support_controllers::Parents`]). Its rows are declared in exhibits/tableD16.toml
/// (`[[sources]]`: the panel's trajectories summed per model and controller on each subset);
/// this module holds its tests.
mod table_d16 {
    use c2s_records::{Domain, Membership, Trajectory};
    use minijinja::Value;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::filters::environment;
    use crate::exhibits::sources::PanelRecords;
    use crate::exhibits::testing::laid_out;
    use crate::exhibits::Exhibit;

    fn trajectory(arm: &str, domain: Domain, membership: Membership, recomb: bool) -> Trajectory {
        serde_json::from_value(serde_json::json!({
            "item_id": "i", "domain": domain, "length": 3, "model": "m", "arm": arm,
            "support": "Full", "output": "abc", "correct": false, "valid": true,
            "membership": membership, "recombination": recomb, "aborted": false, "calls": 3,
            "fills": 0, "prompt_tokens": 0, "completion_tokens": 0, "latency_ms": 0.0,
            "steps": [], "position_correct": [],
        }))
        .expect("a test trajectory")
    }

    /// Each lexical Serial trajectory lands in one class of its controller's row; a
    /// recombination is counted beside its class; other arms and domains are not counted.
    #[test]
    fn audits_count_each_class_and_recombinations() {
        use Membership::*;
        let ts = vec![
            trajectory("Serial/Full/code", Domain::Lexical, Gold, false),
            trajectory("Serial/Full/code", Domain::Lexical, Unindexed, true),
            trajectory("Serial/Full/code", Domain::Lexical, Unindexed, false),
            trajectory("Serial/Full/code", Domain::Lexical, GoldSynsetLemma, false),
            trajectory("Serial/UnionCall/code", Domain::Lexical, IndexedNoun, true),
            trajectory("Serial/Full/code", Domain::Arithmetic, Outside, false),
            trajectory("Native/code", Domain::Lexical, Gold, false),
            trajectory("Serial/UnionFill/code", Domain::Lexical, Gold, false),
        ];
        let panel = || {
            vec![PanelRecords {
                panel: "support".into(),
                metric_rows: vec![],
                trajectories: ts.clone(),
            }]
        };
        let subsets = [
            ("all".to_string(), panel()),
            ("qwen-192".to_string(), panel()),
        ];
        let exhibit = Exhibit::named("tableD16").expect("a registered exhibit");
        let source = &exhibit.spec.sources[0];
        let ours = (source.rows_of_subsets(&subsets, &environment())).expect("the rows");
        assert_eq!(ours.len(), 4);
        let full = &ours[0];
        let at = |key: &str| full.get_attr(key).unwrap();
        assert_eq!(at("controller"), Value::from("Full"));
        assert_eq!(at("n"), Value::from(4));
        let counts = [
            "gold",
            "other_candidate",
            "malformed",
            "other_noun",
            "other_word",
        ];
        let counts: Vec<Value> = (counts.iter().chain(&["unindexed"]))
            .map(|k| at(k))
            .collect();
        assert_eq!(counts, [1, 0, 0, 0, 0, 2].map(Value::from));
        assert_eq!(at("gold_synset_lemma"), Value::from(1));
        assert_eq!(at("recombinations"), Value::from(1));
        let md = laid_out("tableD16", Frame::new().values("ours", ours), "Jev");
        for want in [
            "| Model | Parents | Controller | Items | Output counts | Recombinations |",
            "| m | all | Full | 4 | 1/0/0/0/0/2 | 1 |",
            "| m | all | UnionCall | 1 | 0/0/0/1/0/0 | 1 |",
            "| m | qwen-192 | UnionCall | 1 | 0/0/0/1/0/0 | 1 |",
            "| Model | Controller | Items | Output counts | Recombinations |",
            "| Jev | UnionCall | 384 | 92/9/0/11/1/271 | 283 |",
            "m Full (all): 1 gold-synset lemma(s)",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}

/// Table D9 from `config/panels/padded.toml` (byte match) and `padded-tokens.toml` (token
/// match): per panel the pairing Padded vs Indexed gives the counts and the exact McNemar p,
/// Holm-corrected within the panel's family (the rows declared in exhibits/tableD9.toml,
/// `[[sources]]`); the panel's Indexed − Padded unit contrast of the domain gives the
/// difference with its item-bootstrap interval (a declared contrasts set, `index_by`).
mod table_d9 {
    use c2s_stats::{ContrastRow, MetricRow};

    use crate::exhibits::engine::Frame;
    use crate::exhibits::filters::sig3;
    use crate::exhibits::sources::PanelTables;
    use crate::exhibits::testing::{declared_with_tables, paired_rows, panel_metrics};

    /// Holm p-values print with three significant digits, as Table D9 prints them.
    #[test]
    fn holm_p_prints_with_three_significant_digits() {
        assert_eq!(sig3(Some(8.94e-08)), "8.94e-8");
        assert_eq!(sig3(Some(0.00146)), "0.00146");
        assert_eq!(sig3(Some(0.105)), "0.105");
        assert_eq!(sig3(Some(1.0)), "1.00");
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let rows: Vec<MetricRow> = paired_rows("m", "lexical", [10, 2, 30, 6], (0.0, 1.0))
            .into_iter()
            .chain([MetricRow {
                value: Some(1e-7),
                ..MetricRow::empty(
                    0,
                    "m",
                    Some(c2s_records::Domain::Lexical),
                    None,
                    "Native/code vs Serial/Full/code",
                    c2s_records::Metric::McnemarPHolm,
                )
            }])
            .collect();
        let contrast = ContrastRow {
            model: "m".into(),
            contrast: "indexed - padded, lexical".into(),
            family: None,
            estimate: c2s_stats::ContrastEstimate {
                units: 48,
                incomplete_units: 0,
                compared_mean: Some(40.0 / 48.0),
                reference_mean: Some(12.0 / 48.0),
                difference: Some(28.0 / 48.0),
                ci_low: Some(0.45),
                ci_high: Some(0.7),
                sign_p: Some(1e-8),
            },
            sign_p_holm: Some(1e-8),
        };
        let tables = PanelTables {
            panel: "padded".into(),
            contrasts: vec![contrast],
            cells: vec![],
        };
        let panels = [panel_metrics("padded", rows)];
        let md = declared_with_tables("tableD9", &panels, &[tables], Frame::new(), "Jev");
        for want in [
            "| Model | Domain | Match | Indexed | Padded | Difference [95% CI] | Holm p |",
            "| m | lexical | bytes | 40/48 | 12/48 | 58.3 [45.0, 70.0] | 1.00e-7 |",
            "| Qwen3.5-27B | lexical | tokens | 47/48 | 34/48 | 27.1 [16.7, 37.5] | 4.88e-4 |",
            "| m | lexical | bytes | Jev lexical bytes | −14.6 | +8.3 | −22.9 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}

/// Table D10 (D.11) from `config/panels/nested-binding.toml`: per evidence level the pairing
/// opaque vs literal (readable aligned) names gives the counts and the exact McNemar p,
/// Holm-corrected in the family "D.11 binding" (the rows declared in exhibits/tableD10.toml,
/// `[[sources]]`); the `literal - opaque` unit contrast gives the difference with its item
/// interval (a declared contrasts set, `index_by`).
mod table_d10 {
    use c2s_stats::MetricRow;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::testing::{declared, paired_rows, panel_metrics};

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        // The evidence is the opaque arm's last part; a pairing without literal names is no row.
        let mut rows: Vec<MetricRow> = paired_rows("m", "arithmetic", [10, 2, 20, 16], (0.0, 1.0))
            .into_iter()
            .map(|r| MetricRow {
                comparison:
                    "GoldCopy/Full/code/T0/raw vs GoldCopy/Full/code/T0/raw/names-readable_aligned"
                        .into(),
                ..r
            })
            .collect();
        rows.extend(paired_rows("m", "lexical", [1, 1, 1, 1], (0.0, 1.0)));
        let panel = panel_metrics("nested-binding", rows);
        let md = declared("tableD10", &[panel], Frame::new(), "Qwen3.5-27B");
        for want in [
            "| Model | Domain | Evidence | Literal | Opaque | Difference [95% CI] | Holm p |",
            "| m | math | raw | 30/48 | 12/48 | – | – |",
            "| Qwen3.5-27B | math | raw | 41/48 | 14/48 | 56.2 [41.7, 68.8] | 1.80e-7 |",
            "| m | math | raw | Qwen3.5-27B math raw | −22.9 | −4.2 | – |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert!(!md.contains("| m | lexical |"), "{md}");
    }
}

/// Figure 7's numbers (B.6) from `config/panels/matched-contracts.toml`: per model, domain and
/// evidence (Raw, Indexed, Direct) the accuracy and validity of the code and the character
/// contract's arms, and the panel's `character - code` unit contrast (no Holm family). The
/// paper's (a, b) labels are read as three code bars then three character bars, evidence from
/// Raw to Direct: of the six groupings that satisfy the caption's claims, the only one with
/// every code cell 100% valid, accuracy rising Raw < Indexed < Direct and the legend's order.
/// The counts are declared in exhibits/figure7.toml (`[[sources]]`: sums over the six arms'
/// trajectories), joined with the panel's contrasts (a declared contrasts set).
mod figure7 {
    use c2s_records::Trajectory;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::sources::PanelRecords;
    use crate::exhibits::testing::{declared, trajectory};

    /// `n` trajectories of `arm` on lexical items, the first `correct` correct and the first
    /// `valid` valid.
    fn arm(arm: &str, correct: usize, valid: usize, n: usize) -> Vec<Trajectory> {
        (0..n)
            .map(|i| Trajectory {
                valid: i < valid,
                ..trajectory(&format!("i{i}"), "lexical", 3, arm, i < correct)
            })
            .collect()
    }

    #[test]
    fn the_layout_has_the_figures_numbers_and_differences() {
        let trajectories = [
            arm("GoldCopy/Full/gencode/T0/indexed", 30, 60, 60),
            arm("GoldCopy/Full/char/T0/indexed", 45, 57, 60),
        ]
        .concat();
        let panel = PanelRecords {
            panel: "matched-contracts".into(),
            metric_rows: vec![],
            trajectories,
        };
        let md = declared("figure7", &[panel], Frame::new(), "Jev");
        for want in [
            "| Model | Domain | Evidence | Code | Character | Character − code, pp [95% CI] | sign p |",
            "| m | lexical | indexed | 50.0 / 100.0 | 75.0 / 95.0 | – | – |",
            "| lexical | direct | 98.3 / 100.0 | 85.0 / 96.7 |",
            "| m | lexical | indexed | +8.3 | −5.0 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}

/// Figure 15 (D.11) from the `copy` panel: (a, b) the fidelity counts of
/// `GoldCopy/Full/code/{raw,indexed}/C` per controller C (the Direct arms are not drawn), (c, d)
/// the declared unit contrasts `indexed - raw, serial, DOMAIN` and `batch - independent, raw,
/// DOMAIN` Holm-corrected together; the paper's rows one per controller and its gains its
/// printed counts' differences (all declared in exhibits/figure15.toml).
mod figure15 {
    use c2s_records::Trajectory;
    use c2s_stats::ContrastRow;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::sources::{PanelRecords, PanelTables};
    use crate::exhibits::testing::{declared_with_tables, trajectory};

    /// A gold-copy trajectory of model `m` on `arm`, faithful or not.
    fn gold(arm: &str, domain: &str, faithful: bool) -> Trajectory {
        let mut t = trajectory("i", domain, 3, arm, false);
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

    /// Each gold-copy arm counts into its controller's raw or indexed cell; the Direct arms and
    /// other arms are not counted; the declared gains are read by name, in the paper's order.
    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let ts = vec![
            gold("GoldCopy/Full/code/raw/serial", "arithmetic", true),
            gold("GoldCopy/Full/code/raw/serial", "arithmetic", false),
            gold("GoldCopy/Full/code/indexed/serial", "arithmetic", true),
            gold("GoldCopy/Full/code/indexed/serial", "arithmetic", true),
            gold("GoldCopy/Full/code/raw/batch", "lexical", true),
            gold("GoldCopy/Full/code/direct/serial", "arithmetic", true),
            gold("Native/code", "arithmetic", true),
        ];
        let contrasts = vec![
            contrast("batch - independent, raw, lexical", -0.25, (-0.5, 0.0), 1.0),
            contrast("indexed - raw, serial, arithmetic", 0.5, (0.0, 1.0), 0.5),
            contrast(
                "serial - independent, raw, arithmetic",
                0.1,
                (0.0, 0.2),
                1.0,
            ),
        ];
        let panel = PanelRecords {
            panel: "copy".into(),
            metric_rows: vec![],
            trajectories: ts,
        };
        let tables = PanelTables {
            panel: "copy".into(),
            contrasts,
            cells: vec![],
        };
        let md = declared_with_tables("figure15", &[panel], &[tables], Frame::new(), "Jev");
        for want in [
            "| Model | Domain | Controller | Raw | Indexed |",
            "| m | math | Serial | 1/2 | 2/2 |",
            "| m | lexical | Batch | 1/1 | – |",
            "| Qwen3.5-27B | math | Batch | 48/48 | 48/48 |",
            "| Model | Domain | Gain | Difference [95% CI] | Holm p |",
            "| m | math | Indexed − raw, Serial | 50.0 [0.0, 100.0] | 0.500 |\n\
             | m | lexical | Raw Batch − Independent | −25.0 [−50.0, 0.0] | 1.00 |",
            "| Jev | math | Indexed − raw, Serial | 39.6 | – |",
            "## This run minus the paper (Jev)",
            "| m | math | Serial | Jev math Serial | −10.4 | +0.0 |",
            "| m | lexical | Batch | Jev lexical Batch | +83.3 | – |",
            "| m | math | Indexed − raw, Serial | Jev math | +10.4 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        // Only the two gains of the family: the third contrast is not a row.
        let ours = md
            .split("### (c, d) Paired gains")
            .nth(1)
            .expect("our gains");
        let ours = ours.split("## ").next().unwrap_or_default();
        assert_eq!(
            ours.lines().filter(|l| l.starts_with("| m |")).count(),
            2,
            "{ours}"
        );
    }
}

/// Table B1 (B.1) from `config/panels/whole-answer.toml`: per model and domain the pairing
/// Native/code vs WholeGenerate/string/max64 gives Joint = both correct, Lost = Native only,
/// Gained = whole generation only; each model's note gives its domains' items and the Serial
/// legal-code EM of the Native vs Serial pairing (all declared in exhibits/tableB1.toml).
mod table_b1 {
    use c2s_stats::MetricRow;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::testing::{declared, paired_rows, panel_metrics};

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let whole = |model: &str, domain: &str, joint| {
            paired_rows(model, domain, joint, (0.0, 1.0))
                .into_iter()
                .map(|r| MetricRow {
                    comparison: "Native/code vs WholeGenerate/string/max64".into(),
                    ..r
                })
        };
        let mut rows: Vec<MetricRow> = whole("m", "arithmetic", [4, 2, 6, 4]).collect();
        rows.extend(paired_rows("m", "arithmetic", [0, 6, 0, 10], (0.0, 0.0)));
        // A second model and domain: each model's note lists its own domains, in order.
        rows.extend(whole("m2", "lexical", [1, 1, 1, 1]));
        rows.extend(whole("m2", "arithmetic", [2, 0, 0, 2]));
        rows.extend(paired_rows("m2", "lexical", [1, 1, 1, 1], (0.0, 1.0)));
        let md = declared(
            "tableB1",
            &[panel_metrics("whole-answer", rows)],
            Frame::new(),
            "Qwen3-8B",
        );
        for want in [
            "| Domain | Native | Whole | Joint | Lost | Gained |",
            "| Arithmetic | 6 | 10 | 4 | 2 | 6 |",
            "| Arithmetic | 59 | 181 | 41 | 18 | 140 |",
            "Items per domain: Arithmetic 16. Serial legal-code EM: Arithmetic 0.0%.",
            "Items per domain: Arithmetic 4, Lexical 4. Serial legal-code EM: Arithmetic –%, \
             Lexical 50.0%.",
            "| m | Arithmetic | +22.1 | +15.4 | +7.8 | +1.0 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
