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

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use c2s_records::{Item, PlanOrigin, SuppliedPlan};

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

/// One incorrect plan per item of `items`: the observed wrong selection when `observed` holds
/// a valid one different from gold, else the constructed candidate of the seeded rule.
pub fn incorrect_plans(
    items: &[Item],
    observed: &BTreeMap<String, ObservedSelection>,
    seed: u64,
) -> BTreeMap<String, SuppliedPlan> {
    let mut plans = BTreeMap::new();
    for item in items {
        let wrong_selection = observed
            .get(&item.item_id)
            .filter(|o| o.valid && o.output != item.target && item.candidates.contains(&o.output));
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
        let plans = incorrect_plans(&items, &observed, 20261008);
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
        assert_eq!(incorrect_plans(&items, &observed, 20261008), plans);
        let choices: std::collections::BTreeSet<String> = (0..16)
            .map(|s| {
                incorrect_plans(&items[3..], &BTreeMap::new(), s)["d"]
                    .plan
                    .clone()
            })
            .collect();
        assert!(
            choices.len() > 1,
            "the seed decides the constructed candidate"
        );
    }
}
