//! The coverage summary as text: what `choice2seq coverage` prints and `view`'s page shows
//! (rates with their intervals, the plan audits, the token replay).

use c2s_rundir::coverage::{RunPlan, TokenAudit};
use c2s_stats::coverage::{CoverageSummary, Rate, Subset};

/// The replay as text.
pub fn token_audit_text(a: &TokenAudit) -> String {
    format!(
        "token replay of {} ({}): {} requests, longest prompt {} tokens; {} length mismatches, {} prompts not intact, {} with options capped, {} option collisions, {} requests with names closed by the end token ({} of them by the pair's other name only), {} option token counts not reproduced\n",
        a.run_dir,
        a.model_path,
        a.requests,
        a.max_prompt_tokens,
        a.length_mismatches,
        a.not_intact,
        a.options_capped,
        a.collisions,
        a.closed_with_end_token,
        a.closed_by_the_pair_only,
        a.token_count_mismatches
    )
}

/// `12/40 30.0% [16.6, 46.5]`, or `-` when undefined.
fn rate(r: &Rate) -> String {
    match r.estimate.value {
        None => format!("{}/{} -", r.successes, r.n),
        Some(v) => match &r.estimate.interval {
            Some(i) => format!(
                "{}/{} {:.1}% [{:.1}, {:.1}]",
                r.successes,
                r.n,
                100.0 * v,
                100.0 * i.low,
                100.0 * i.high
            ),
            None => format!("{}/{} {:.1}%", r.successes, r.n, 100.0 * v),
        },
    }
}

fn est(e: &c2s_stats::Estimate) -> String {
    match (e.value, &e.interval) {
        (None, _) => "-".into(),
        (Some(v), Some(i)) => format!("{v:.3} [{:.3}, {:.3}]", i.low, i.high),
        (Some(v), None) => format!("{v:.3}"),
    }
}

/// `k=76 (all but reference)` or `k=4`.
fn k_label(k: usize, all_but_reference: bool) -> String {
    if all_but_reference {
        format!("k={k} (all but reference)")
    } else {
        format!("k={k}")
    }
}

/// The plan audits beside the document's totals, as text.
pub fn plan_text(plans: &[RunPlan]) -> String {
    let mut out = String::new();
    for p in plans {
        out.push_str(&format!("plan audit of {}:\n", p.run_dir));
        let Some(a) = &p.audit else {
            out.push_str(&format!("  {}\n", p.note.as_deref().unwrap_or("none")));
            continue;
        };
        let ours = |what: &str| match what {
            "cases" => a.cases,
            "requests" => a.requests,
            "pairs" => a.pairs,
            _ => a.test_requests,
        };
        out.push_str("  total            ours   document (its four tasks and sample)\n");
        for d in &a.document {
            out.push_str(&format!(
                "  {:<14} {:>6}   {:>8}  \"{}\"\n",
                d.what,
                ours(&d.what),
                d.value,
                d.quote
            ));
        }
        for t in &a.tasks {
            out.push_str(&format!(
                "  {}: {} calibration + {} test cases, {} requests ({} test, {} full-set), {} pairs, k = {:?}\n",
                t.task,
                t.calibration_cases,
                t.test_cases,
                t.requests,
                t.test_requests,
                t.full_set_requests,
                t.pairs,
                t.ks
            ));
        }
        let c = &a.checks;
        out.push_str(&format!(
            "  checks: {} name-variant mismatches (descriptions, order), {} pair mismatches, {} none not last, {} requests with catalogue metadata, {} duplicate case ids, {} duplicate texts ({} across splits); {} cases cannot run\n",
            c.name_variant_mismatches,
            c.pair_mismatches,
            c.none_not_last,
            c.metadata_leaks,
            c.duplicate_case_ids,
            c.duplicate_texts,
            c.cross_split_duplicate_texts,
            a.unrunnable.len()
        ));
        for e in &c.examples {
            out.push_str(&format!("    {e}\n"));
        }
    }
    out
}

/// The summary as plain-text tables (what `choice2seq coverage` prints).
pub fn text(s: &CoverageSummary) -> String {
    let mut out = String::new();
    let level = 100.0 * s.config.level;
    out.push_str(&format!(
        "candidate coverage: {} bootstrap draws over texts, {level:.0}% percentile intervals\n\n",
        s.config.draws
    ));
    out.push_str("full-set classification (test texts, no none option):\n");
    for r in &s.full_set {
        out.push_str(&format!(
            "  {} {} {}: accuracy {}; full-set-correct {}, shared-correct {}, missing {}\n",
            r.model,
            r.task,
            r.names.as_str(),
            rate(&r.accuracy),
            r.full_set_correct,
            r.shared_correct,
            r.missing
        ));
    }
    for subset in Subset::ALL {
        let cells: Vec<_> = s.cells.iter().filter(|c| c.subset == subset).collect();
        if cells.is_empty() {
            continue;
        }
        out.push_str(&format!("\ntest texts: {}\n", subset.as_str()));
        for c in cells {
            out.push_str(&format!(
                "  {} {} {} {} ({} texts, {} missing)\n",
                c.model,
                c.task,
                k_label(c.k, c.all_but_reference),
                c.names.as_str(),
                c.texts,
                c.missing
            ));
            for (label, r) in [
                ("accuracy (present)", &c.accuracy),
                ("accuracy (present, none)", &c.accuracy_with_none),
                ("detection D (absent)", &c.detection),
                ("false rejection (present)", &c.false_rejection),
                ("acceptance", &c.acceptance),
                ("error among accepted, pooled", &c.error_among_accepted),
                ("  on present sets (G=1)", &c.error_among_accepted_present),
                ("  on absent sets (G=0)", &c.error_among_accepted_absent),
            ] {
                out.push_str(&format!("    {label:<30}{}\n", rate(r)));
            }
            for d in &c.discrimination {
                out.push_str(&format!(
                    "    {:<12} AUROC {}  AP(absent) {}  ({} pairs)\n",
                    d.score.as_str(),
                    est(&d.auroc),
                    est(&d.average_precision),
                    d.pairs
                ));
            }
        }
    }
    out.push_str(&format!(
        "\ncalibrated thresholds (calibration false rejection <= {:.1}%, all calibration texts), tested on test texts:\n",
        100.0 * s.config.max_false_rejection
    ));
    for subset in Subset::ALL {
        let rows: Vec<_> = s.thresholds.iter().filter(|t| t.subset == subset).collect();
        if rows.is_empty() {
            continue;
        }
        out.push_str(&format!("  tested on {}:\n", subset.as_str()));
        for t in rows {
            out.push_str(&format!(
                "    {} {} {} {} {:<12} t={}: calibration FR {}, D {}; test D {}, FR {}\n",
                t.model,
                t.task,
                k_label(t.k, t.all_but_reference),
                t.names.as_str(),
                t.rule,
                t.threshold
                    .map(|x| format!("{x:.4}"))
                    .unwrap_or_else(|| "-".into()),
                rate(&t.calibration_false_rejection),
                rate(&t.calibration_detection),
                rate(&t.test_detection),
                rate(&t.test_false_rejection)
            ));
        }
    }
    out.push_str("\nprecision audit:\n");
    for p in &s.audit.prob_sums {
        out.push_str(&format!(
            "  {}: {} of {} distributions deviate from 1 by more than 0.001 (max deviation {:.2e}); {} of {} decisions with raw scores choose other than the largest raw score\n",
            p.model,
            p.deviating,
            p.decisions,
            p.max_deviation,
            p.choice_not_raw_argmax,
            p.with_raw_scores
        ));
    }
    let fmt = |v: Option<f64>| v.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into());
    if let Some(q) = &s.audit.largest_change {
        out.push_str(&format!(
            "  scores rounded to {} decimals: largest AUROC change {} ({} {} k={} {} {}: {} -> {})\n",
            s.audit.quantize_decimals,
            q.change.map(|c| format!("{c:+.4}")).unwrap_or_else(|| "-".into()),
            q.model,
            q.task,
            q.k,
            q.names.as_str(),
            q.score.as_str(),
            fmt(q.auroc),
            fmt(q.quantized_auroc),
        ));
    }
    if let Some(q) = &s.audit.largest_renormalization_change {
        out.push_str(&format!(
            "  distributions renormalized to sum 1: largest AUROC change {} ({} {} k={} {} {}: {} -> {})\n",
            q.renormalization_change
                .map(|c| format!("{c:+.6}"))
                .unwrap_or_else(|| "-".into()),
            q.model,
            q.task,
            q.k,
            q.names.as_str(),
            q.score.as_str(),
            fmt(q.auroc),
            fmt(q.renormalized_auroc),
        ));
    }
    for p in &s.audit.pair_closing {
        out.push_str(&format!(
            "  {}: {} of {} present/absent pairs tokenized their shared options differently (scored under different closing rules){}\n",
            p.model,
            p.mismatched,
            p.pairs,
            if p.examples.is_empty() {
                String::new()
            } else {
                format!(": {}", p.examples.join(", "))
            }
        ));
    }
    for r in &s.audit.rule_changes {
        out.push_str(&format!(
            "  {} {}: reading the token log-probabilities as {} instead of {} changes {} of {} choices ({} native rejections); accuracy {} -> {}\n",
            r.model,
            r.task,
            r.other.as_str(),
            r.recorded.as_str(),
            r.choice_changed,
            r.decisions,
            r.rejection_changed,
            rate(&r.accuracy_recorded),
            rate(&r.accuracy_other)
        ));
    }
    for m in &s.missing {
        out.push_str(&format!(
            "  missing: {} {} {} x{}: {}\n",
            m.model,
            m.task,
            m.split.as_str(),
            m.count,
            m.error
        ));
    }
    out
}
