//! Stage 6a, Native/Serial pairing per item: every configured comparison pairs its reference
//! arm's trajectory with its compared arm's on the item id, giving one paired outcome per item
//! and comparison as soon as both trajectories exist.
//!
//! State is bounded by the items in flight: all trajectories of an item carry the time (feed
//! epoch) of the item, and an item's trajectories all arise on its owner worker (items are
//! routed by id at validation and never leave it), so once the input frontier has passed a
//! time no trajectory of that time can still come, and what was kept for it is dropped. In a
//! continuous run the operator therefore holds only the epochs still in processing, not the
//! history.

use std::collections::{BTreeMap, HashMap};

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::StreamVec;

use c2s_records::{Domain, PairedOutcome, Trajectory};

/// (domain, length, model, correct, fidelity, semantic pattern): what pairing needs of a
/// trajectory.
type Summary = (Domain, usize, String, bool, Option<bool>, Option<String>);

/// One configured comparison: its reference and compared arm labels, and what it pairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairSpec {
    /// Label of the reference arm (the outcome's `native` side).
    pub reference: String,
    /// Label of the compared arm (the outcome's `serial` side).
    pub compared: String,
    /// Pair fidelity to the supplied plan instead of gold correctness: the rule for two copy
    /// arms, whose outcome is fidelity (Figure 1 C, "Fidelity (matches plan)" against
    /// "Correctness"; D.12 compares wrong-plan and correct-plan copying by fidelity — a
    /// faithfully copied incorrect plan is never gold-correct).
    pub by_fidelity: bool,
}

impl PairSpec {
    fn outcome(&self, item_id: &str, reference: &Summary, compared: &Summary) -> PairedOutcome {
        let success = |v: &Summary| {
            if self.by_fidelity {
                v.4 == Some(true)
            } else {
                v.3
            }
        };
        PairedOutcome {
            item_id: item_id.to_string(),
            native_correct: success(reference),
            serial_correct: success(compared),
            domain: reference.0,
            length: reference.1,
            model: reference.2.clone(),
            native_arm: self.reference.clone(),
            serial_arm: self.compared.clone(),
            pattern: reference.5.clone(),
        }
    }
}

/// Summaries of the arms seen so far, per item, per time.
type Pending = BTreeMap<u64, HashMap<String, HashMap<String, Summary>>>;

/// Pair the trajectories of each item under every comparison of `comparisons`: one outcome
/// per item and comparison, given when its second trajectory arrives.
pub fn pair<'s>(
    trajectories: StreamVec<'s, u64, Trajectory>,
    comparisons: Vec<PairSpec>,
) -> StreamVec<'s, u64, PairedOutcome> {
    trajectories.unary_frontier::<CapacityContainerBuilder<Vec<PairedOutcome>>, _, _, _>(
        Pipeline,
        "Pairing",
        move |_, _| {
            let mut pending: Pending = BTreeMap::new();
            move |(input, frontier), output| {
                input.for_each(|cap, data| {
                    let Some(&time) = cap.least() else { return };
                    let mut session = output.session(&cap);
                    let items = pending.entry(time).or_default();
                    for t in data.drain(..) {
                        let arms = items.entry(t.item_id.clone()).or_default();
                        let summary: Summary = (
                            t.domain,
                            t.length,
                            t.model.clone(),
                            t.correct,
                            t.fidelity,
                            t.pattern.clone(),
                        );
                        // Every comparison this trajectory completes.
                        for spec in &comparisons {
                            if spec.reference == t.arm {
                                if let Some(other) = arms.get(&spec.compared) {
                                    session.give(spec.outcome(&t.item_id, &summary, other));
                                }
                            }
                            if spec.compared == t.arm {
                                if let Some(other) = arms.get(&spec.reference) {
                                    session.give(spec.outcome(&t.item_id, other, &summary));
                                }
                            }
                        }
                        arms.insert(t.arm.to_string(), summary);
                    }
                });
                // Times the frontier has passed can receive nothing more.
                let lower = frontier.frontier().iter().min().copied();
                match lower {
                    Some(t) => pending.retain(|&time, _| time >= t),
                    None => pending.clear(),
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_uses_the_reference_arm_as_native() {
        let spec = PairSpec {
            reference: "Native/code".into(),
            compared: "Serial/Full/code".into(),
            by_fidelity: false,
        };
        let n: Summary = (Domain::Lexical, 5, "m".into(), true, None, None);
        let s: Summary = (Domain::Lexical, 5, "m".into(), false, None, None);
        let o = spec.outcome("x", &n, &s);
        assert!(o.native_correct && !o.serial_correct);
        assert_eq!((o.native_arm.as_str(), o.length), ("Native/code", 5));
        let copy = PairSpec {
            by_fidelity: true,
            ..spec
        };
        let f: Summary = (Domain::Lexical, 5, "m".into(), false, Some(true), None);
        assert!(copy.outcome("x", &f, &s).native_correct);
    }
}
