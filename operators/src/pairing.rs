//! Stage 6a, Native/Serial pairing per item: trajectories become a differential collection
//! keyed by (arm, item); every configured comparison joins its whole-answer arm with its local
//! arm on the item id, giving one paired outcome per item and comparison as soon as both
//! trajectories exist.

use differential_dataflow::AsCollection;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::StreamVec;

use c2s_records::{Domain, PairedOutcome, Trajectory};

/// (domain, length, model, correct, fidelity): what pairing needs of a trajectory.
type Summary = (Domain, usize, String, bool, Option<bool>);

/// One configured comparison: its reference and compared arm labels, and what it pairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairSpec {
    pub reference: String,
    pub compared: String,
    /// Pair fidelity to the supplied plan instead of gold correctness: the rule for two copy
    /// arms, whose outcome is fidelity (Figure 1 C, "Fidelity (matches plan)" against
    /// "Correctness"; D.12 compares wrong-plan and correct-plan copying by fidelity — a
    /// faithfully copied incorrect plan is never gold-correct).
    pub by_fidelity: bool,
}

pub fn pair<'s>(
    trajectories: StreamVec<'s, u64, Trajectory>,
    comparisons: Vec<PairSpec>,
) -> StreamVec<'s, u64, PairedOutcome> {
    let updates = trajectories.unary::<CapacityContainerBuilder<
        Vec<(((String, String), Summary), u64, isize)>,
    >, _, _, _>(Pipeline, "TrajectoryUpdates", |_, _| {
        move |input, output| {
            input.for_each(|cap, data| {
                let Some(&time) = cap.least() else { return };
                let mut session = output.session(&cap);
                for t in data.drain(..) {
                    session.give((
                        (
                            (t.arm.clone(), t.item_id.clone()),
                            (t.domain, t.length, t.model.clone(), t.correct, t.fidelity),
                        ),
                        time,
                        1isize,
                    ));
                }
            });
        }
    });
    let collection = updates.as_collection();
    let mut paired: Option<differential_dataflow::VecCollection<'s, u64, PairedOutcome, isize>> =
        None;
    for PairSpec {
        reference: native,
        compared: serial,
        by_fidelity,
    } in comparisons
    {
        let (n_label, s_label) = (native.clone(), serial.clone());
        let natives = collection
            .clone()
            .filter(move |((arm, _), _)| arm == &n_label)
            .map(|((_, item), v)| (item, v));
        let serials = collection
            .clone()
            .filter(move |((arm, _), _)| arm == &s_label)
            .map(|((_, item), v)| (item, v));
        let (na, sa) = (native.clone(), serial.clone());
        let joined = natives.join(serials).map(move |(item_id, (n, s))| {
            let success = |v: &Summary| if by_fidelity { v.4 == Some(true) } else { v.3 };
            PairedOutcome {
                item_id,
                native_correct: success(&n),
                serial_correct: success(&s),
                domain: n.0,
                length: n.1,
                model: n.2,
                native_arm: na.clone(),
                serial_arm: sa.clone(),
            }
        });
        paired = Some(match paired {
            None => joined,
            Some(p) => p.concat(joined),
        });
    }
    let Some(paired) = paired else {
        // No comparison configured: an empty stream at the same times.
        return collection
            .inner
            .unary::<CapacityContainerBuilder<Vec<PairedOutcome>>, _, _, _>(
                Pipeline,
                "NoPairs",
                |_, _| |input, _output| input.for_each(|_, _| {}),
            );
    };
    paired
        .inner
        .unary::<CapacityContainerBuilder<Vec<PairedOutcome>>, _, _, _>(
            Pipeline,
            "PairedOutcomes",
            |_, _| {
                move |input, output| {
                    input.for_each(|cap, data| {
                        let mut session = output.session(&cap);
                        for (o, _, diff) in data.drain(..) {
                            // Trajectories are only ever added, so every join output is an addition.
                            for _ in 0..diff.max(0) {
                                session.give(o.clone());
                            }
                        }
                    });
                }
            },
        )
}
