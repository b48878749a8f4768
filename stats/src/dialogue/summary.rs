//! The summary: counts, endpoints, paired contrasts, retention, perturbations and the
//! Holm-corrected sign tests of every model and spec, assembled by [`summarize_dialogues`].

use std::collections::{BTreeMap, BTreeSet};

use c2s_records::dialogue::{
    DialogueArm, DialogueContract, DialogueSpec, DialogueSplit, FieldFailure, FieldTurn,
    Perturbation, PriorMode,
};

use super::bootstrap::{local_components, ratio_stats, Series};
use super::{
    response_components, score_dialogues, sign_flip_test, ContrastKind, DialogueContrast,
    DialogueScore, DialogueStatsOptions, DialogueSummary, LeftOutRuns, ModelResponses,
    PairedEndpoint, PerturbationRow, PerturbationSummary, Recoveries, ResponseComponents,
    RetentionRow, SignTestRow, SpecCounts, SpecSummary,
};
use crate::bootstrap::BootstrapConfig;
use crate::contrasts::{sign_flip_p, UnitCounts};
use crate::error::StatsError;
use crate::hypothesis::holm;
use crate::intervals::check_level;

fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (s, n) = values
        .into_iter()
        .fold((0.0, 0u64), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

fn bit(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

type Runs<'a> = BTreeMap<&'a str, &'a DialogueScore>;

fn spec_counts(rows: &[&FieldTurn], runs: &Runs<'_>) -> SpecCounts {
    #[derive(Default)]
    struct Req {
        engine: bool,
        failed: bool,
    }
    let mut requests: BTreeMap<&str, Req> = BTreeMap::new();
    let mut failures: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    let mut keys: BTreeSet<&str> = BTreeSet::new();
    let mut tokens = 0u64;
    for r in rows {
        let q = requests.entry(r.request_id.as_str()).or_default();
        if let Some(f) = r.failure {
            if f == FieldFailure::EngineError {
                q.engine = true;
            } else {
                q.failed = true;
            }
            failures
                .entry(f.as_str().to_string())
                .or_default()
                .insert(r.request_id.as_str());
        }
        keys.insert(r.prompt_key.as_str());
        tokens += u64::from(r.prompt_tokens);
    }
    let missing = requests.values().filter(|q| q.engine).count() as u64;
    let invalid = requests.values().filter(|q| !q.engine && q.failed).count() as u64;
    let valid = requests.len() as u64 - missing - invalid;
    SpecCounts {
        dialogues: runs.len() as u64,
        user_turns: runs.values().map(|s| s.turns.len() as u64).sum(),
        field_turns: runs.values().map(|s| s.field_turns()).sum(),
        incomplete_dialogues: 0,
        engine_error_dialogues: 0,
        calls: requests.len() as u64,
        input_tokens: tokens,
        physical_responses: keys.len() as u64,
        valid_requests: valid,
        invalid_requests: invalid,
        missing_requests: missing,
        valid_format: (valid + invalid > 0).then(|| valid as f64 / (valid + invalid) as f64),
        failures: failures
            .into_iter()
            .map(|(k, v)| (k, v.len() as u64))
            .collect(),
    }
}

/// The four endpoints of each dialogue, in the order trajectory, mean turn, final, field.
fn endpoint_values(s: &DialogueScore) -> [f64; 4] {
    [
        bit(s.trajectory_correct()),
        s.mean_turn(),
        bit(s.final_correct()),
        s.mean_field(),
    ]
}

fn spec_summary(
    model: &str,
    spec: DialogueSpec,
    rows: &[&FieldTurn],
    runs: &Runs<'_>,
    components: &ResponseComponents,
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<SpecSummary, StatsError> {
    let ids: Vec<&str> = runs.keys().copied().collect();
    let (component, n_components) = local_components(&ids, components);
    let values: Vec<[f64; 4]> = runs.values().map(|s| endpoint_values(s)).collect();
    let series: Vec<Series> = (0..4)
        .map(|k| Series::mean(values.iter().map(|v| v[k]).collect()))
        .collect();
    let stats = ratio_stats(&series, &component, n_components, cfg, level)?;
    let count = |f: fn(&DialogueScore) -> bool| runs.values().filter(|s| f(s)).count() as u64;
    Ok(SpecSummary {
        model: model.to_string(),
        spec,
        label: spec.label(),
        counts: spec_counts(rows, runs),
        components: n_components as u64,
        trajectory: stats[0],
        mean_turn: stats[1],
        final_state: stats[2],
        mean_field: stats[3],
        recoveries: Recoveries {
            dialogues: runs.len() as u64,
            failed: count(DialogueScore::failed),
            any_recovery: count(DialogueScore::any_recovery),
            final_recovery: count(DialogueScore::final_recovery),
        },
    })
}

/// The dialogues of both runs, in id order.
fn paired<'a>(
    compared: &Runs<'a>,
    reference: &Runs<'a>,
) -> (Vec<(&'a str, &'a DialogueScore, &'a DialogueScore)>, u64) {
    let both: Vec<_> = compared
        .iter()
        .filter_map(|(id, c)| reference.get(id).map(|r| (*id, *c, *r)))
        .collect();
    let unpaired = (compared.len() + reference.len() - 2 * both.len()) as u64;
    (both, unpaired)
}

#[allow(clippy::too_many_arguments)]
fn contrast(
    model: &str,
    kind: ContrastKind,
    compared: DialogueSpec,
    reference: DialogueSpec,
    c_runs: &Runs<'_>,
    r_runs: &Runs<'_>,
    components: &ResponseComponents,
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<DialogueContrast, StatsError> {
    let (pairs, unpaired) = paired(c_runs, r_runs);
    let ids: Vec<&str> = pairs.iter().map(|p| p.0).collect();
    let (component, n_components) = local_components(&ids, components);
    let cv: Vec<[f64; 4]> = pairs.iter().map(|p| endpoint_values(p.1)).collect();
    let rv: Vec<[f64; 4]> = pairs.iter().map(|p| endpoint_values(p.2)).collect();
    let series: Vec<Series> = (0..4)
        .map(|k| Series::mean(cv.iter().zip(&rv).map(|(c, r)| c[k] - r[k]).collect()))
        .collect();
    let stats = ratio_stats(&series, &component, n_components, cfg, level)?;
    let endpoint = |k: usize| PairedEndpoint {
        compared: mean(cv.iter().map(|v| v[k])),
        reference: mean(rv.iter().map(|v| v[k])),
        difference: stats[k],
    };
    Ok(DialogueContrast {
        model: model.to_string(),
        kind,
        compared,
        reference,
        dialogues: pairs.len() as u64,
        unpaired_dialogues: unpaired,
        components: n_components as u64,
        trajectory: endpoint(0),
        mean_turn: endpoint(1),
        final_state: endpoint(2),
        mean_field: endpoint(3),
    })
}

#[allow(clippy::too_many_arguments)]
fn retention(
    model: &str,
    local: DialogueSpec,
    joint: DialogueSpec,
    l_runs: &Runs<'_>,
    j_runs: &Runs<'_>,
    components: &ResponseComponents,
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<RetentionRow, StatsError> {
    let (pairs, _) = paired(l_runs, j_runs);
    let ids: Vec<&str> = pairs.iter().map(|p| p.0).collect();
    let (component, n_components) = local_components(&ids, components);
    let (mut num, mut den) = (Vec::new(), Vec::new());
    let (mut retained, mut joint_correct) = (0u64, 0u64);
    for (_, l, j) in &pairs {
        let local_turns: BTreeMap<u32, bool> =
            l.turns.iter().map(|t| (t.turn, t.correct)).collect();
        let (mut n, mut a, mut b) = (0u64, 0u64, 0u64);
        for t in &j.turns {
            if let Some(&lc) = local_turns.get(&t.turn) {
                n += 1;
                b += u64::from(t.correct);
                a += u64::from(t.correct && lc);
            }
        }
        let n = n.max(1) as f64;
        num.push(a as f64 / n);
        den.push(b as f64 / n);
        retained += a;
        joint_correct += b;
    }
    let stats = ratio_stats(&[Series { num, den }], &component, n_components, cfg, level)?;
    Ok(RetentionRow {
        model: model.to_string(),
        local,
        joint,
        dialogues: pairs.len() as u64,
        components: n_components as u64,
        retained_turns: retained,
        joint_correct_turns: joint_correct,
        retention: stats[0],
    })
}

fn perturbation_rows(
    model: &str,
    spec: DialogueSpec,
    perturbed: &[&DialogueScore],
    primary: Option<&Runs<'_>>,
) -> Vec<PerturbationRow> {
    let mut out = Vec::new();
    for p in perturbed {
        let (Some(kind), Some(base)) = (
            p.perturbation,
            primary.and_then(|r| r.get(p.base_dialogue_id.as_str())),
        ) else {
            continue;
        };
        let base_turns: BTreeMap<u32, bool> =
            base.turns.iter().map(|t| (t.turn, t.correct)).collect();
        let (mut turns, mut agreeing) = (0u64, 0u64);
        for t in &p.turns {
            if let Some(&b) = base_turns.get(&t.turn) {
                turns += 1;
                agreeing += u64::from(b == t.correct);
            }
        }
        out.push(PerturbationRow {
            model: model.to_string(),
            spec,
            dialogue_id: p.dialogue_id.clone(),
            base_dialogue_id: p.base_dialogue_id.clone(),
            kind,
            turns,
            agreeing_turns: agreeing,
            agreement: (turns > 0).then(|| agreeing as f64 / turns as f64),
            base_mean_turn: base.mean_turn(),
            perturbed_mean_turn: p.mean_turn(),
        });
    }
    out
}

fn perturbation_summary(rows: &[PerturbationRow]) -> Vec<PerturbationSummary> {
    let mut groups: BTreeMap<(&str, DialogueSpec, Perturbation), Vec<&PerturbationRow>> =
        BTreeMap::new();
    for r in rows {
        groups
            .entry((r.model.as_str(), r.spec, r.kind))
            .or_default()
            .push(r);
    }
    groups
        .into_iter()
        .map(|((model, spec, kind), rs)| PerturbationSummary {
            model: model.to_string(),
            spec,
            kind,
            dialogues: rs.len() as u64,
            turns: rs.iter().map(|r| r.turns).sum(),
            agreeing_turns: rs.iter().map(|r| r.agreeing_turns).sum(),
            agreement: mean(rs.iter().filter_map(|r| r.agreement)),
            base_mean_turn: mean(rs.iter().map(|r| r.base_mean_turn)).unwrap_or(0.0),
            perturbed_mean_turn: mean(rs.iter().map(|r| r.perturbed_mean_turn)).unwrap_or(0.0),
        })
        .collect()
}

pub(super) fn spec_of(
    arm: DialogueArm,
    mode: PriorMode,
    contract: DialogueContract,
) -> DialogueSpec {
    DialogueSpec {
        arm,
        mode,
        contract,
    }
}

/// Every statistic of Appendix C from `rows` (any number of models and specs); see the
/// module docs for the definitions. Errors on bad options or a repeated row.
pub fn summarize_dialogues(
    rows: &[FieldTurn],
    options: &DialogueStatsOptions,
) -> Result<DialogueSummary, StatsError> {
    check_level(options.level)?;
    if options.draws == 0 || options.sign_draws == 0 {
        return Err(StatsError::ZeroDraws);
    }
    let cfg = BootstrapConfig {
        draws: options.draws,
        seed: options.seed,
        threads: options.threads,
    };
    let level = options.level;
    let scores = score_dialogues(rows)?;
    let excluded_dev_rows = rows
        .iter()
        .filter(|r| r.split == DialogueSplit::Dev)
        .count() as u64;

    // Per model: test rows, primary rows per spec, and runs.
    let mut test_rows: BTreeMap<&str, Vec<&FieldTurn>> = BTreeMap::new();
    let mut primary_rows: BTreeMap<(&str, DialogueSpec), Vec<&FieldTurn>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.split == DialogueSplit::Test) {
        test_rows.entry(r.model.as_str()).or_default().push(r);
        if r.perturbation.is_none() {
            primary_rows
                .entry((r.model.as_str(), r.spec))
                .or_default()
                .push(r);
        }
    }
    let mut primary: BTreeMap<&str, BTreeMap<DialogueSpec, Runs<'_>>> = BTreeMap::new();
    let mut perturbed: BTreeMap<(&str, DialogueSpec), Vec<&DialogueScore>> = BTreeMap::new();
    // Left-out runs per (model, spec): (incomplete, engine errors).
    let mut left_out: BTreeMap<(&str, DialogueSpec), (u64, u64)> = BTreeMap::new();
    for s in &scores {
        if !s.is_scored() {
            if s.is_primary() {
                let e = left_out.entry((s.model.as_str(), s.spec)).or_default();
                if s.is_complete() {
                    e.1 += 1;
                } else {
                    e.0 += 1;
                }
            }
            continue;
        }
        if s.is_primary() {
            primary
                .entry(s.model.as_str())
                .or_default()
                .entry(s.spec)
                .or_default()
                .insert(s.dialogue_id.as_str(), s);
        } else if s.split == DialogueSplit::Test {
            perturbed
                .entry((s.model.as_str(), s.spec))
                .or_default()
                .push(s);
        }
    }

    let mut models = Vec::new();
    let mut components_of: BTreeMap<&str, ResponseComponents> = BTreeMap::new();
    for (model, rs) in &test_rows {
        let comps = response_components(rs.iter().copied());
        let requests: BTreeSet<&str> = rs.iter().map(|r| r.request_id.as_str()).collect();
        let keys: BTreeSet<&str> = rs.iter().map(|r| r.prompt_key.as_str()).collect();
        let base: BTreeSet<&str> = rs
            .iter()
            .filter(|r| r.perturbation.is_none())
            .map(|r| r.dialogue_id.as_str())
            .collect();
        let pert: BTreeSet<&str> = rs
            .iter()
            .filter(|r| r.perturbation.is_some())
            .map(|r| r.dialogue_id.as_str())
            .collect();
        let base_components: BTreeSet<usize> = base
            .iter()
            .filter_map(|id| comps.component_of.get(*id).copied())
            .collect();
        models.push(ModelResponses {
            model: model.to_string(),
            logical_requests: requests.len() as u64,
            physical_responses: keys.len() as u64,
            shared_requests: {
                let sent: BTreeSet<(&str, &str)> = rs
                    .iter()
                    .map(|r| (r.request_id.as_str(), r.prompt_key.as_str()))
                    .collect();
                (sent.len() - keys.len().min(sent.len())) as u64
            },
            receiving_requests: comps.receiving_requests,
            primary_dialogues: base.len() as u64,
            components: base_components.len() as u64,
            perturbed_dialogues: pert.len() as u64,
        });
        components_of.insert(model, comps);
    }

    let empty = ResponseComponents {
        component_of: BTreeMap::new(),
        components: 0,
        receiving_requests: 0,
    };
    let mut specs = Vec::new();
    let mut contrasts = Vec::new();
    let mut retention_rows = Vec::new();
    let mut perturbations = Vec::new();
    // (model, compared, reference, per-dialogue unit counts) of every sign test.
    let mut tests: Vec<(&str, DialogueSpec, DialogueSpec, Vec<UnitCounts>)> = Vec::new();
    for (model, by_spec) in &primary {
        let comps = components_of.get(model).unwrap_or(&empty);
        for (spec, runs) in by_spec {
            let rs = primary_rows
                .get(&(*model, *spec))
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let mut summary = spec_summary(model, *spec, rs, runs, comps, &cfg, level)?;
            if let Some((incomplete, engine)) = left_out.get(&(*model, *spec)) {
                summary.counts.incomplete_dialogues = *incomplete;
                summary.counts.engine_error_dialogues = *engine;
            }
            specs.push(summary);
        }
        let contracts: BTreeSet<DialogueContract> = by_spec.keys().map(|s| s.contract).collect();
        let mut pairs: Vec<(ContrastKind, DialogueSpec, DialogueSpec)> = Vec::new();
        for &contract in &contracts {
            for arm in DialogueArm::ALL {
                pairs.push((
                    ContrastKind::OracleMinusRollout,
                    spec_of(arm, PriorMode::Oracle, contract),
                    spec_of(arm, PriorMode::Rollout, contract),
                ));
            }
            for mode in PriorMode::ALL {
                for (kind, arm) in [
                    (ContrastKind::SerialMinusJoint, DialogueArm::Serial),
                    (
                        ContrastKind::IndependentMinusJoint,
                        DialogueArm::Independent,
                    ),
                ] {
                    pairs.push((
                        kind,
                        spec_of(arm, mode, contract),
                        spec_of(DialogueArm::Joint, mode, contract),
                    ));
                }
            }
        }
        pairs.sort();
        for (kind, c, r) in pairs {
            let (Some(cr), Some(rr)) = (by_spec.get(&c), by_spec.get(&r)) else {
                continue;
            };
            contrasts.push(contrast(model, kind, c, r, cr, rr, comps, &cfg, level)?);
            if kind != ContrastKind::OracleMinusRollout {
                retention_rows.push(retention(model, c, r, cr, rr, comps, &cfg, level)?);
            }
        }
        for &contract in &contracts {
            for t in &options.sign_tests {
                let c = spec_of(t.compared, t.mode, contract);
                let r = spec_of(t.reference, t.mode, contract);
                let (Some(cr), Some(rr)) = (by_spec.get(&c), by_spec.get(&r)) else {
                    continue;
                };
                let (pairs, _) = paired(cr, rr);
                if pairs.is_empty() {
                    continue;
                }
                let units = pairs
                    .iter()
                    .map(|(id, cs, rs)| UnitCounts {
                        unit: id.to_string(),
                        stratum: String::new(),
                        compared_correct: u64::from(cs.correct_turns()),
                        compared_n: cs.turns.len() as u64,
                        reference_correct: u64::from(rs.correct_turns()),
                        reference_n: rs.turns.len() as u64,
                    })
                    .collect();
                tests.push((model, c, r, units));
            }
        }
    }
    for ((model, spec), ps) in &perturbed {
        let runs = primary.get(model).and_then(|m| m.get(spec));
        perturbations.extend(perturbation_rows(model, *spec, ps, runs));
    }
    retention_rows.sort_by(|a, b| (&a.model, a.local).cmp(&(&b.model, b.local)));

    let mut sign_tests = Vec::new();
    for (model, c, r, units) in &tests {
        let diffs: Vec<f64> = units.iter().filter_map(UnitCounts::difference).collect();
        let key = format!("{model}\0{}\0{}", c.label(), r.label());
        let test = sign_flip_test(&diffs, options.sign_draws, options.seed ^ fnv1a(&key))?;
        let complete: Vec<&UnitCounts> =
            units.iter().filter(|u| u.difference().is_some()).collect();
        sign_tests.push(SignTestRow {
            model: model.to_string(),
            compared: *c,
            reference: *r,
            dialogues: diffs.len() as u64,
            test,
            p_exact: sign_flip_p(&complete),
            p_holm: test.p_value,
            family_size: tests.len() as u64,
        });
    }
    let ps: Vec<f64> = sign_tests.iter().map(|t| t.test.p_value).collect();
    for (t, p) in sign_tests.iter_mut().zip(holm(&ps)?) {
        t.p_holm = p;
    }

    let perturbation_summary = perturbation_summary(&perturbations);
    Ok(DialogueSummary {
        options: options.clone(),
        excluded_dev_rows,
        models,
        specs,
        contrasts,
        retention: retention_rows,
        sign_tests,
        perturbations,
        perturbation_summary,
        left_out: left_out
            .into_iter()
            .map(|((model, spec), (incomplete, engine_errors))| LeftOutRuns {
                model: model.to_string(),
                spec,
                incomplete,
                engine_errors,
            })
            .collect(),
    })
}
