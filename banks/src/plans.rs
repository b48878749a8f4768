//! Supplied incorrect copy targets (paper D.12): one incorrect plan per parent of the copy
//! panel, observed where a model's recorded selection was wrong, constructed otherwise.
//!
//! D.12: "Incorrect plans comprise 48 observed arithmetic selections, 28 observed lexical
//! selections and 20 constructed lexical candidates; observed errors can come from another
//! model, and two lexical plans are Jev's own errors. This error-enriched population measures
//! conditional fidelity, separate from fresh-plan success prevalence. Records retain
//! difference counts and distinguish observed from constructed plans."
//!
//! The paper names where its plans came from but not how a constructed candidate was chosen.
//! The rule here: an observed plan is the recorded wrong Native selection of the given run
//! (any model; the plan records which); a constructed plan is the item's own non-gold
//! candidate that ranks first by SHA-256 of (seed, "incorrect-plan", item id, candidate), so
//! it is a well-formed string of the right length that no model chose.
//!
//! The mix. [`PlanMix::Paper`] (the default) aims at the paper's counts on the 96-parent panel:
//! every arithmetic plan observed (48 of 48) and 28 observed lexical plans beside 20
//! constructed ones. A domain's observed errors beyond its quota are left unused (the quota's
//! plans are the wrong selections ranked first by SHA-256 of (seed, "observed-quota", item
//! id)); a domain with fewer wrong selections than its quota uses all it has and constructs
//! the rest, so the mix reached depends on how often the observing model was wrong.
//! [`PlanMix::EveryObserved`] takes every wrong selection. To draw the paper's mix from a
//! model's own run: run `config/panels/copy-incorrect-plans.toml` (Native on the panel), then
//! `choice2seq bank incorrect-plans --observed-run runs/copy-incorrect-plans`; it prints the
//! mix it reached beside the paper's.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use c2s_records::{Domain, Item, PlanOrigin, SuppliedPlan};

/// Which wrong selections become observed plans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlanMix {
    /// The paper's counts: at most [`paper_observed_quota`] observed plans per domain.
    #[default]
    Paper,
    /// Every valid wrong selection.
    EveryObserved,
}

/// The paper's observed plans per domain (D.12: "48 observed arithmetic selections, 28 observed
/// lexical selections and 20 constructed lexical candidates"); `None`: no quota.
pub fn paper_observed_quota(domain: Domain) -> Option<usize> {
    match domain {
        Domain::Arithmetic => Some(48),
        Domain::Lexical => Some(28),
        _ => None,
    }
}

/// A recorded selection that may become an observed plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedSelection {
    /// The selected string.
    pub output: String,
    /// The selection was valid (a listed candidate, nothing malformed).
    pub valid: bool,
    /// Where it was recorded (model, arm, run).
    pub source: String,
}

fn rank(seed: u64, item_id: &str, candidate: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    for part in ["incorrect-plan", item_id, candidate] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().into()
}

/// The item's recorded selection, when it is a valid listed candidate other than gold.
fn wrong_selection<'a>(
    item: &Item,
    observed: &'a BTreeMap<String, ObservedSelection>,
) -> Option<&'a ObservedSelection> {
    observed
        .get(&item.item_id)
        .filter(|o| o.valid && o.output != item.target && item.candidates.contains(&o.output))
}

/// One incorrect plan per item of `items`: the observed wrong selection when `observed` holds
/// a valid one different from gold and the mix takes it, else the constructed candidate of
/// the seeded rule.
pub fn incorrect_plans(
    items: &[Item],
    observed: &BTreeMap<String, ObservedSelection>,
    seed: u64,
    mix: PlanMix,
) -> BTreeMap<String, SuppliedPlan> {
    // Under the paper's mix, each domain's wrong selections beyond its quota are not taken.
    let mut taken: std::collections::BTreeSet<&str> = items
        .iter()
        .filter(|i| wrong_selection(i, observed).is_some())
        .map(|i| i.item_id.as_str())
        .collect();
    if mix == PlanMix::Paper {
        let mut by_domain: BTreeMap<Domain, Vec<&Item>> = BTreeMap::new();
        for item in items.iter().filter(|i| taken.contains(i.item_id.as_str())) {
            by_domain.entry(item.domain).or_default().push(item);
        }
        for (domain, mut wrong) in by_domain {
            let Some(quota) = paper_observed_quota(domain) else {
                continue;
            };
            wrong.sort_by_key(|i| rank(seed, &i.item_id, "observed-quota"));
            for item in wrong.into_iter().skip(quota) {
                taken.remove(item.item_id.as_str());
            }
        }
    }
    let mut plans = BTreeMap::new();
    for item in items {
        let wrong_selection =
            wrong_selection(item, observed).filter(|_| taken.contains(item.item_id.as_str()));
        let plan = match wrong_selection {
            Some(o) => SuppliedPlan {
                item_id: item.item_id.clone(),
                plan: o.output.clone(),
                origin: PlanOrigin::Observed,
                source: Some(o.source.clone()),
            },
            None => {
                let Some(candidate) = item
                    .candidates
                    .iter()
                    .filter(|c| **c != item.target)
                    .min_by_key(|c| rank(seed, &item.item_id, c))
                else {
                    continue;
                };
                SuppliedPlan {
                    item_id: item.item_id.clone(),
                    plan: candidate.clone(),
                    origin: PlanOrigin::Constructed,
                    source: Some(format!(
                        "non-gold candidate ranked first by SHA-256(seed {seed}, incorrect-plan, item, candidate)"
                    )),
                }
            }
        };
        plans.insert(item.item_id.clone(), plan);
    }
    plans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str) -> Item {
        c2s_records::parse_item(
            &format!(
                r#"{{"item_id":"{id}","domain":"arithmetic","problem":"What is 39 * 15?","target":"585",
                   "candidates":["585","589","385","389","485","489","685","689"]}}"#
            ),
            &Default::default(),
        )
        .unwrap()
    }

    #[test]
    fn observed_wrong_selections_first_constructed_otherwise() {
        let items = [item("a"), item("b"), item("c"), item("d")];
        let sel = |output: &str, valid: bool| ObservedSelection {
            output: output.into(),
            valid,
            source: "m Native/code".into(),
        };
        let observed = BTreeMap::from([
            ("a".to_string(), sel("389", true)),  // wrong and valid: observed
            ("b".to_string(), sel("585", true)),  // correct: constructed
            ("c".to_string(), sel("3#9", false)), // malformed: constructed
        ]);
        let plans = incorrect_plans(&items, &observed, 20261008, PlanMix::EveryObserved);
        assert_eq!(plans.len(), 4);
        assert_eq!(plans["a"].plan, "389");
        assert_eq!(plans["a"].origin, PlanOrigin::Observed);
        for id in ["b", "c", "d"] {
            let p = &plans[id];
            assert_eq!(p.origin, PlanOrigin::Constructed);
            assert_ne!(p.plan, "585", "never the gold target");
            assert!(items[0].candidates.contains(&p.plan), "a candidate");
        }
        // Deterministic in the seed and item; another seed may choose another candidate.
        assert_eq!(
            incorrect_plans(&items, &observed, 20261008, PlanMix::EveryObserved),
            plans
        );
        let choices: std::collections::BTreeSet<String> = (0..16)
            .map(|s| {
                incorrect_plans(&items[3..], &BTreeMap::new(), s, PlanMix::Paper)["d"]
                    .plan
                    .clone()
            })
            .collect();
        assert!(
            choices.len() > 1,
            "the seed decides the constructed candidate"
        );
    }

    /// D.12: "Incorrect plans comprise 48 observed arithmetic selections, 28 observed lexical
    /// selections and 20 constructed lexical candidates": a run with more wrong lexical
    /// selections than 28 gives 28 observed and constructs the rest; fewer arithmetic errors
    /// than 48 are all used.
    #[test]
    fn the_papers_mix_caps_observed_plans_per_domain() {
        let lexical = |i: usize| {
            c2s_records::parse_item(
                &format!(
                    r#"{{"item_id":"lex-{i}","domain":"lexical","problem":"Which word?","target":"cat",
                       "candidates":["cat","car","cab","can","cap","caw","cay","cam"]}}"#
                ),
                &Default::default(),
            )
            .unwrap()
        };
        let mut items: Vec<Item> = (0..48).map(lexical).collect();
        items.extend((0..3).map(|i| item(&format!("ar-{i}"))));
        let mut observed = BTreeMap::new();
        for i in items.iter().take(45).chain(items.iter().skip(48).take(2)) {
            let wrong = i
                .candidates
                .iter()
                .find(|c| **c != i.target)
                .unwrap()
                .clone();
            observed.insert(
                i.item_id.clone(),
                ObservedSelection {
                    output: wrong,
                    valid: true,
                    source: "m".into(),
                },
            );
        }
        let count = |plans: &BTreeMap<String, SuppliedPlan>, d: Domain, o: PlanOrigin| {
            items
                .iter()
                .filter(|i| i.domain == d && plans[&i.item_id].origin == o)
                .count()
        };
        let paper = incorrect_plans(&items, &observed, 7, PlanMix::Paper);
        assert_eq!(count(&paper, Domain::Lexical, PlanOrigin::Observed), 28);
        assert_eq!(count(&paper, Domain::Lexical, PlanOrigin::Constructed), 20);
        assert_eq!(count(&paper, Domain::Arithmetic, PlanOrigin::Observed), 2);
        let every = incorrect_plans(&items, &observed, 7, PlanMix::EveryObserved);
        assert_eq!(count(&every, Domain::Lexical, PlanOrigin::Observed), 45);
    }
}
