//! Stage 3a, controller expansion: every valid item becomes one task per configured arm.
//! SelfPlanSpell tasks name the arm whose choice they copy (the item's own Native), so the
//! feedback loop starts them when that trajectory completes. IncorrectCopy tasks carry their
//! supplied plan from the run's plan table (an item without one is rejected by its controller).

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::StreamVec;

use std::collections::BTreeMap;
use std::sync::Arc;

use c2s_records::{Arm, ArmSpec, SuppliedPlan};

use crate::messages::Task;
use crate::validate::Located;

/// The plan source of SelfPlanSpell: the first Native arm of the configuration.
pub fn plan_source(specs: &[ArmSpec]) -> Option<String> {
    specs
        .iter()
        .find(|s| s.arm == Arm::Native)
        .map(ArmSpec::label)
}

/// One [`Task`] per item and arm of `specs`, on the item's worker; a SelfPlanSpell task names
/// its plan source, an IncorrectCopy task carries the item's plan from `plans` (by item id).
pub fn expand<'s>(
    items: StreamVec<'s, u64, Located>,
    specs: Vec<ArmSpec>,
    plans: Arc<BTreeMap<String, SuppliedPlan>>,
) -> StreamVec<'s, u64, Task> {
    let plan = plan_source(&specs);
    items.unary::<CapacityContainerBuilder<Vec<Task>>, _, _, _>(
        Pipeline,
        "ExpandArms",
        move |_, _| {
            move |input, output| {
                input.for_each(|cap, data| {
                    let mut session = output.session(&cap);
                    for l in data.drain(..) {
                        for spec in &specs {
                            session.give(Task {
                                item: l.item.clone(),
                                spec: *spec,
                                plan_from: (spec.arm == Arm::SelfPlanSpell)
                                    .then(|| plan.clone())
                                    .flatten(),
                                supplied_plan: (spec.arm == Arm::IncorrectCopy)
                                    .then(|| plans.get(&l.item.item_id).cloned())
                                    .flatten(),
                            });
                        }
                    }
                });
            }
        },
    )
}
