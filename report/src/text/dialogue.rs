//! The dialogue-state summary as text tables: what `choice2seq dialogue` prints and `view`'s
//! page shows.

use c2s_stats::dialogue::{DialogueSummary, Stat};

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}", 100.0 * v))
        .unwrap_or_else(|| "–".into())
}

/// `value [low, high]` in percent (the dialogue interval), with the component interval when
/// asked.
fn stat(s: &Stat, component: bool) -> String {
    let ci = |i: &Option<c2s_stats::Interval>| {
        i.as_ref()
            .map(|i| format!(" [{:.1}, {:.1}]", 100.0 * i.low, 100.0 * i.high))
            .unwrap_or_default()
    };
    let mut out = format!("{}{}", pct(s.value), ci(&s.dialogue_ci));
    if component {
        out.push_str(&ci(&s.component_ci));
    }
    out
}

/// The summary as text tables (percent; intervals are 95% dialogue bootstrap unless said).
pub fn summary_text(s: &DialogueSummary) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let o = &s.options;
    let _ = writeln!(
        out,
        "Dialogue-state fields (Appendix C): percent; [dialogue bootstrap {:.0}% interval], {} draws, seed {}; dialogues weigh equally in mean-turn and mean-field EM",
        100.0 * o.level,
        o.draws,
        o.seed
    );
    for m in &s.models {
        let _ = writeln!(
            out,
            "model {}: {} test dialogues (+{} perturbed), {} logical requests, {} physical responses ({} shared by identical wire inputs), {} response-sharing components",
            m.model,
            m.primary_dialogues,
            m.perturbed_dialogues,
            m.logical_requests,
            m.physical_responses,
            m.shared_requests,
            m.components
        );
    }
    for l in &s.left_out {
        let _ = writeln!(
            out,
            "{} {}: {} runs left out as incomplete (interrupted or still running), {} with engine errors (asked again on resume)",
            short(&l.model),
            l.spec.label(),
            l.incomplete,
            l.engine_errors
        );
    }
    if s.excluded_dev_rows > 0 {
        let _ = writeln!(
            out,
            "{} dev-split rows left out of every endpoint",
            s.excluded_dev_rows
        );
    }
    let _ = writeln!(
        out,
        "\nEndpoints per arm and prior-state mode (Tables C1, C4, C5)"
    );
    let w = s
        .specs
        .iter()
        .map(|r| short(&r.model).len() + 1 + r.label.len())
        .max()
        .unwrap_or(0)
        .max(29);
    let _ = writeln!(
        out,
        "{:<w$} {:>9} {:>20} {:>20} {:>20} {:>20} {:>7} {:>7} {:>10}",
        "model arm/mode/contract",
        "dialogues",
        "trajectory EM",
        "mean turn EM",
        "final EM",
        "mean field EM",
        "valid",
        "calls",
        "input tok"
    );
    for r in &s.specs {
        let _ = writeln!(
            out,
            "{:<w$} {:>9} {:>20} {:>20} {:>20} {:>20} {:>7} {:>7} {:>10}",
            format!("{} {}", short(&r.model), r.label),
            r.counts.dialogues,
            stat(&r.trajectory, false),
            stat(&r.mean_turn, false),
            stat(&r.final_state, false),
            stat(&r.mean_field, false),
            pct(r.counts.valid_format),
            r.counts.calls,
            r.counts.input_tokens
        );
        if r.counts.missing_requests > 0 {
            let _ = writeln!(
                out,
                "    {} requests missing (engine errors)",
                r.counts.missing_requests
            );
        }
        if !r.counts.failures.is_empty() {
            let f: Vec<String> = r
                .counts
                .failures
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            let _ = writeln!(out, "    failed requests: {}", f.join(", "));
        }
    }
    let _ = writeln!(
        out,
        "\nRecoveries of failed trajectories (Table C3): failed / any recovery / final recovery"
    );
    for r in &s.specs {
        let _ = writeln!(
            out,
            "{:<w$} {:>4} / {:>4} / {:>4}",
            format!("{} {}", short(&r.model), r.label),
            r.recoveries.failed,
            r.recoveries.any_recovery,
            r.recoveries.final_recovery
        );
    }
    let _ = writeln!(
        out,
        "\nPaired differences, percentage points (Table C2, Figures 8-9): difference [dialogue interval] [response-component interval]"
    );
    for c in &s.contrasts {
        let _ = writeln!(
            out,
            "{} {} − {} ({} dialogues, {} components{})",
            short(&c.model),
            c.compared.label(),
            c.reference.label(),
            c.dialogues,
            c.components,
            if c.unpaired_dialogues > 0 {
                format!(", {} unpaired left out", c.unpaired_dialogues)
            } else {
                String::new()
            }
        );
        for (name, e) in [
            ("trajectory", &c.trajectory),
            ("mean turn", &c.mean_turn),
            ("final", &c.final_state),
            ("mean field", &c.mean_field),
        ] {
            let _ = writeln!(out, "    {:<11} {}", name, stat(&e.difference, true));
        }
    }
    let _ = writeln!(
        out,
        "\nState retention (Table C5): local/Joint jointly-correct mass over Joint-correct mass, dialogue-weighted"
    );
    for r in &s.retention {
        let _ = writeln!(
            out,
            "{} {} vs {}: retained turns {}/{}, retention {}",
            short(&r.model),
            r.local.label(),
            r.joint.label(),
            r.retained_turns,
            r.joint_correct_turns,
            stat(&r.retention, true)
        );
    }
    if !s.sign_tests.is_empty() {
        let _ = writeln!(
            out,
            "\nSerial − Joint sign tests on dialogue mean-turn EM (two-sided sign flips, plus-one correction, Holm across the family)"
        );
        for t in &s.sign_tests {
            let _ = writeln!(
                out,
                "{} {} − {}: {} dialogues ({} nonzero), mean difference {} pp, p = {:.5} ({} draws; exact {}), Holm p = {:.5} (family of {})",
                short(&t.model),
                t.compared.label(),
                t.reference.label(),
                t.test.n,
                t.test.nonzero,
                t.test
                    .mean_difference
                    .map(|d| format!("{:+.1}", 100.0 * d))
                    .unwrap_or_else(|| "–".into()),
                t.test.p_value,
                t.test.draws,
                t.p_exact
                    .map(|p| format!("{p:.5}"))
                    .unwrap_or_else(|| "not enumerated".into()),
                t.p_holm,
                t.family_size
            );
        }
    }
    if !s.perturbation_summary.is_empty() {
        let _ = writeln!(
            out,
            "\nPerturbation schedule (C.2): turn-EM agreement with the unperturbed dialogue; mean turn EM base → perturbed"
        );
        for p in &s.perturbation_summary {
            let _ = writeln!(
                out,
                "{} {} {}: {} dialogues, {}/{} turns agree ({}), {} → {}",
                short(&p.model),
                p.spec.label(),
                p.kind.as_str(),
                p.dialogues,
                p.agreeing_turns,
                p.turns,
                pct(p.agreement),
                pct(Some(p.base_mean_turn)),
                pct(Some(p.perturbed_mean_turn))
            );
        }
    }
    out
}

/// The model label without its hash when one model is shown at a time is not enough: keep
/// the name and the first 6 hash digits.
fn short(model: &str) -> String {
    match model.split_once('@') {
        Some((name, sha)) => format!("{name}@{}", &sha[..sha.len().min(6)]),
        None => model.to_string(),
    }
}
