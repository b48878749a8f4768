//! Acts and the gold-state rules: a dialogue's service and slots, the user and SYSTEM acts,
//! and the state after each user turn (E.4's instruction).

use c2s_records::{DialogueState, DONTCARE, INTENT_FIELD, NONE_INTENT, UNSET};

use super::catalogue::{ServiceSpec, SlotSpec};

/// A dialogue's service and slots: `slots[k]` is the dialogue's k-th slot.
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    pub(super) spec: &'a ServiceSpec,
    pub(super) slots: &'a [&'a SlotSpec],
}

impl Ctx<'_> {
    pub(super) fn value(&self, slot: usize, value: usize) -> &'static str {
        self.slots[slot].values[value].0
    }
    pub(super) fn value_index(&self, slot: usize, value: &str) -> Option<usize> {
        self.slots[slot]
            .values
            .iter()
            .position(|(v, _)| *v == value)
    }
    pub(super) fn held<'s>(&self, state: &'s DialogueState, slot: usize) -> &'s str {
        state
            .get(self.slots[slot].name)
            .map(String::as_str)
            .unwrap_or(UNSET)
    }
    pub(super) fn initial_state(&self) -> DialogueState {
        let mut s = DialogueState::new();
        s.insert(INTENT_FIELD.to_string(), NONE_INTENT.to_string());
        for slot in self.slots {
            s.insert(slot.name.to_string(), UNSET.to_string());
        }
        s
    }
}

/// One change a user makes to one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Act {
    /// States intent `intent` (`switch`: while another intent is active).
    Intent { intent: usize, switch: bool },
    /// Gives a value for a slot that holds none (UNSET) or DONTCARE.
    Inform { slot: usize, value: usize },
    /// Replaces the value a slot holds.
    Change { slot: usize, value: usize },
    /// Withdraws the slot's value or indifference: UNSET.
    Cancel { slot: usize },
    /// "DONTCARE means the user explicitly has no preference."
    DontCare { slot: usize },
}

impl Act {
    fn field<'a>(&self, ctx: &Ctx<'a>) -> &'a str {
        match self {
            Act::Intent { .. } => INTENT_FIELD,
            Act::Inform { slot, .. }
            | Act::Change { slot, .. }
            | Act::Cancel { slot }
            | Act::DontCare { slot } => ctx.slots[*slot].name,
        }
    }
}

/// What the SYSTEM says before a user turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SystemAct {
    /// Before the first user turn: the empty utterance.
    Opening,
    /// A generic acknowledgement.
    Generic,
    /// Asks for a slot's value.
    Request { slot: usize },
    /// Suggests a value: it holds only if the user accepts it.
    Suggest { slot: usize, value: usize },
    /// Repeats a held value.
    Confirm { slot: usize },
}

/// What the USER does in a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum UserAct {
    Greeting,
    /// One change, or two on two fields.
    Acts(Vec<Act>),
    /// Accepts the SYSTEM suggestion.
    Accept,
    /// Rejects the SYSTEM suggestion.
    Reject,
    /// Neither accepts nor rejects the suggestion, and changes nothing.
    Defer,
    ChitChat,
    /// Confirms the SYSTEM confirmation.
    ConfirmYes,
}

/// The act name recorded in `origin` and counted in the provenance.
pub(super) fn kind(system: &SystemAct, user: &UserAct) -> &'static str {
    match (system, user) {
        (_, UserAct::Greeting) => "greeting",
        (SystemAct::Suggest { .. }, UserAct::Accept) => "suggest_accept",
        (SystemAct::Suggest { .. }, UserAct::Reject) => "suggest_reject",
        (SystemAct::Suggest { .. }, UserAct::Defer | UserAct::Acts(_)) => "suggest_ignore",
        (_, UserAct::ConfirmYes) => "confirm",
        (_, UserAct::ChitChat | UserAct::Defer | UserAct::Accept | UserAct::Reject) => "chitchat",
        (_, UserAct::Acts(acts)) if acts.len() > 1 => "double",
        (_, UserAct::Acts(acts)) => match acts.first() {
            Some(Act::Intent { switch: false, .. }) => "intent",
            Some(Act::Intent { switch: true, .. }) => "switch_intent",
            Some(Act::Inform { .. }) => "inform",
            Some(Act::Change { .. }) => "change",
            Some(Act::Cancel { .. }) => "cancel",
            Some(Act::DontCare { .. }) | None => "dontcare",
        },
    }
}

/// The gold state after a user turn, by E.4's instruction: "Preserve earlier user-provided
/// slot values unless the user changes or cancels them. Ignore SYSTEM suggestions unless
/// accepted by the user. UNSET means no value is held; DONTCARE means the user explicitly has
/// no preference. Select the current active intent, or NONE if no intent is active."
pub(super) fn gold_after(
    ctx: &Ctx,
    prior: &DialogueState,
    system: &SystemAct,
    user: &UserAct,
) -> DialogueState {
    let mut state = prior.clone();
    let mut set = |field: &str, value: &str| {
        state.insert(field.to_string(), value.to_string());
    };
    match user {
        UserAct::Acts(acts) => {
            for act in acts {
                let field = act.field(ctx);
                match act {
                    Act::Intent { intent, .. } => set(field, ctx.spec.intents[*intent].name),
                    Act::Inform { slot, value } | Act::Change { slot, value } => {
                        set(field, ctx.value(*slot, *value))
                    }
                    Act::Cancel { .. } => set(field, UNSET),
                    Act::DontCare { .. } => set(field, DONTCARE),
                }
            }
        }
        // Accepted: the suggestion becomes the user's value.
        UserAct::Accept => {
            if let SystemAct::Suggest { slot, value } = system {
                set(ctx.slots[*slot].name, ctx.value(*slot, *value));
            }
        }
        // Rejected, deferred or never about a value: everything is preserved.
        UserAct::Greeting
        | UserAct::Reject
        | UserAct::Defer
        | UserAct::ChitChat
        | UserAct::ConfirmYes => {}
    }
    state
}
