//! Schemas: catalogue services as [`DialogueService`] schemas, every intent and value with a
//! stable id.

use c2s_records::{CategoricalSlot, DialogueService, SchemaValue};

use super::catalogue::{IntentSpec, ServiceSpec, SlotSpec, SERVICES};
use super::templates::slug;

fn intent_value(i: &IntentSpec) -> SchemaValue {
    SchemaValue {
        id: format!("intent:{}", i.name),
        value: i.name.to_string(),
        description: i.description.to_string(),
    }
}

fn slot_schema(s: &SlotSpec) -> CategoricalSlot {
    CategoricalSlot {
        name: s.name.to_string(),
        description: s.description.to_string(),
        values: s
            .values
            .iter()
            .map(|(v, d)| SchemaValue {
                id: format!("{}:{}", s.name, slug(v)),
                value: v.to_string(),
                description: d.to_string(),
            })
            .collect(),
    }
}

/// The schema of catalogue service `spec` restricted to the slots `slots` (catalogue indices
/// in schema order).
pub(super) fn service_schema(spec: &ServiceSpec, slots: &[usize]) -> DialogueService {
    DialogueService {
        name: spec.name.to_string(),
        description: spec.description.to_string(),
        intents: spec.intents.iter().map(intent_value).collect(),
        slots: slots.iter().map(|&i| slot_schema(&spec.slots[i])).collect(),
    }
}

/// The ten services with every slot, in catalogue order.
pub fn service_catalogue() -> Vec<DialogueService> {
    SERVICES
        .iter()
        .map(|s| service_schema(s, &(0..s.slots.len()).collect::<Vec<_>>()))
        .collect()
}
