//! Planning: each user turn's SYSTEM and user acts drawn from the state before it, and the
//! selection rules a planned dialogue must meet.

use rand::seq::{IndexedRandom, SliceRandom};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use c2s_records::{DialogueState, DONTCARE, INTENT_FIELD, NONE_INTENT, UNSET};

use super::acts::{gold_after, kind, Act, Ctx, SystemAct, UserAct};
use super::render::{system_text, user_pieces, Piece};

/// One planned user turn: the acts, their texts and the gold state after it.
#[derive(Debug, Clone)]
pub(super) struct PlannedTurn {
    pub(super) system_act: SystemAct,
    pub(super) user_act: UserAct,
    pub(super) system: String,
    pub(super) pieces: Vec<Piece>,
    pub(super) state: DialogueState,
}

impl PlannedTurn {
    pub(super) fn kind(&self) -> &'static str {
        kind(&self.system_act, &self.user_act)
    }
    pub(super) fn template_ids(&self) -> String {
        self.pieces
            .iter()
            .map(Piece::id)
            .collect::<Vec<_>>()
            .join("+")
    }
}

pub(super) fn is_concrete(v: &str) -> bool {
    v != UNSET && v != DONTCARE
}

/// A value of `slot` other than the one it holds.
fn other_value(ctx: &Ctx, state: &DialogueState, slot: usize, rng: &mut ChaCha8Rng) -> usize {
    let held = ctx.value_index(slot, ctx.held(state, slot));
    let n = ctx.slots[slot].values.len();
    let choices: Vec<usize> = (0..n).filter(|&v| Some(v) != held).collect();
    *choices.choose(rng).unwrap_or(&0)
}

/// An intent to state: the service's first (search) intent three times in four.
fn first_intent(ctx: &Ctx, rng: &mut ChaCha8Rng) -> usize {
    if rng.random_range(0..4) < 3 {
        0
    } else {
        rng.random_range(0..ctx.spec.intents.len())
    }
}

/// An intent other than the active one.
fn switch_intent(ctx: &Ctx, state: &DialogueState, rng: &mut ChaCha8Rng) -> usize {
    let others: Vec<usize> = (0..ctx.spec.intents.len())
        .filter(|&i| ctx.spec.intents[i].name != state[INTENT_FIELD])
        .collect();
    *others.choose(rng).unwrap_or(&0)
}

/// One act on `slot` that its state allows: a value for UNSET (or no preference), a change,
/// a cancellation or no preference for a held value, a value or a cancellation for DONTCARE.
fn slot_act(ctx: &Ctx, state: &DialogueState, slot: usize, rng: &mut ChaCha8Rng) -> Act {
    let held = ctx.held(state, slot);
    let r = rng.random_range(0..4);
    let value = other_value(ctx, state, slot, rng);
    if held == UNSET {
        if r < 3 {
            Act::Inform { slot, value }
        } else {
            Act::DontCare { slot }
        }
    } else if held == DONTCARE {
        if r < 3 {
            Act::Inform { slot, value }
        } else {
            Act::Cancel { slot }
        }
    } else {
        match r {
            0 | 1 => Act::Change { slot, value },
            2 => Act::Cancel { slot },
            _ => Act::DontCare { slot },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Greeting,
    Intent,
    IntentInform,
    Inform,
    Change,
    Cancel,
    DontCare,
    SuggestAccept,
    SuggestReject,
    SuggestIgnore,
    Confirm,
    ChitChat,
    Switch,
    Double,
}

/// Draw the SYSTEM and USER acts of turn `t` (zero-based) from the state before it.
fn plan_turn(
    ctx: &Ctx,
    state: &DialogueState,
    t: usize,
    rng: &mut ChaCha8Rng,
) -> (SystemAct, UserAct) {
    let n = ctx.slots.len();
    let slots_where = |f: &dyn Fn(&str) -> bool| -> Vec<usize> {
        (0..n).filter(|&s| f(ctx.held(state, s))).collect()
    };
    let informable = slots_where(&|v| v == UNSET || v == DONTCARE);
    let concrete = slots_where(&|v| is_concrete(v));
    let cancellable = slots_where(&|v| v != UNSET);
    let indifferent_ok = slots_where(&|v| v != DONTCARE);
    let no_intent = state[INTENT_FIELD] == NONE_INTENT;

    let mut options: Vec<(u32, Choice)> = Vec::new();
    if t == 0 {
        options.extend([
            (1, Choice::Greeting),
            (6, Choice::Intent),
            (3, Choice::IntentInform),
        ]);
    } else if no_intent {
        options.extend([(2, Choice::Intent), (1, Choice::IntentInform)]);
    } else {
        let mut add = |ok: bool, w: u32, c: Choice| {
            if ok {
                options.push((w, c));
            }
        };
        add(!informable.is_empty(), 10, Choice::Inform);
        add(!concrete.is_empty(), 4, Choice::Change);
        add(!cancellable.is_empty(), 3, Choice::Cancel);
        add(!indifferent_ok.is_empty(), 3, Choice::DontCare);
        add(true, 4, Choice::SuggestAccept);
        add(true, 2, Choice::SuggestReject);
        add(true, 3, Choice::SuggestIgnore);
        add(!concrete.is_empty(), 2, Choice::Confirm);
        add(true, 2, Choice::ChitChat);
        add(ctx.spec.intents.len() > 1, 2, Choice::Switch);
        add(true, 3, Choice::Double);
    }
    let total: u32 = options.iter().map(|(w, _)| w).sum();
    let mut r = rng.random_range(0..total);
    let mut choice = options[0].1;
    for (w, c) in &options {
        if r < *w {
            choice = *c;
            break;
        }
        r -= w;
    }
    let system = if t == 0 {
        SystemAct::Opening
    } else {
        SystemAct::Generic
    };
    let pick = |v: &[usize], rng: &mut ChaCha8Rng| *v.choose(rng).unwrap_or(&0);
    let any_slot = |rng: &mut ChaCha8Rng| rng.random_range(0..n);
    let maybe_request = |slot: usize, rng: &mut ChaCha8Rng| {
        if t > 0 && rng.random_range(0..2) == 0 {
            SystemAct::Request { slot }
        } else {
            system.clone()
        }
    };
    match choice {
        Choice::Greeting => (system, UserAct::Greeting),
        Choice::Intent => {
            let intent = first_intent(ctx, rng);
            (
                system,
                UserAct::Acts(vec![Act::Intent {
                    intent,
                    switch: false,
                }]),
            )
        }
        Choice::IntentInform => {
            let intent = first_intent(ctx, rng);
            let slot = pick(&informable, rng);
            let value = other_value(ctx, state, slot, rng);
            (
                system,
                UserAct::Acts(vec![
                    Act::Intent {
                        intent,
                        switch: false,
                    },
                    Act::Inform { slot, value },
                ]),
            )
        }
        Choice::Inform => {
            let slot = pick(&informable, rng);
            let value = other_value(ctx, state, slot, rng);
            (
                maybe_request(slot, rng),
                UserAct::Acts(vec![Act::Inform { slot, value }]),
            )
        }
        Choice::Change => {
            let slot = pick(&concrete, rng);
            let value = other_value(ctx, state, slot, rng);
            (system, UserAct::Acts(vec![Act::Change { slot, value }]))
        }
        Choice::Cancel => {
            let slot = pick(&cancellable, rng);
            (system, UserAct::Acts(vec![Act::Cancel { slot }]))
        }
        Choice::DontCare => {
            let slot = pick(&indifferent_ok, rng);
            (
                maybe_request(slot, rng),
                UserAct::Acts(vec![Act::DontCare { slot }]),
            )
        }
        Choice::SuggestAccept | Choice::SuggestReject => {
            let slot = any_slot(rng);
            let value = other_value(ctx, state, slot, rng);
            let user = if choice == Choice::SuggestAccept {
                UserAct::Accept
            } else {
                UserAct::Reject
            };
            (SystemAct::Suggest { slot, value }, user)
        }
        Choice::SuggestIgnore => {
            let slot = any_slot(rng);
            let value = other_value(ctx, state, slot, rng);
            let others: Vec<usize> = (0..n).filter(|&s| s != slot).collect();
            let user = if others.is_empty() || rng.random_range(0..2) == 0 {
                UserAct::Defer
            } else {
                let other = pick(&others, rng);
                UserAct::Acts(vec![slot_act(ctx, state, other, rng)])
            };
            (SystemAct::Suggest { slot, value }, user)
        }
        Choice::Confirm => {
            let slot = pick(&concrete, rng);
            (SystemAct::Confirm { slot }, UserAct::ConfirmYes)
        }
        Choice::ChitChat => (system, UserAct::ChitChat),
        Choice::Switch => {
            let intent = switch_intent(ctx, state, rng);
            (
                system,
                UserAct::Acts(vec![Act::Intent {
                    intent,
                    switch: true,
                }]),
            )
        }
        Choice::Double => {
            // The intent change (if any) comes first, then a slot; or two distinct slots.
            let with_intent = n < 2 || rng.random_range(0..2) == 0;
            let mut acts = Vec::new();
            let mut slots: Vec<usize> = (0..n).collect();
            slots.shuffle(rng);
            if with_intent {
                let intent = switch_intent(ctx, state, rng);
                acts.push(Act::Intent {
                    intent,
                    switch: true,
                });
                acts.push(slot_act(ctx, state, slots[0], rng));
            } else {
                let (a, b) = (slots[0].min(slots[1]), slots[0].max(slots[1]));
                acts.push(slot_act(ctx, state, a, rng));
                acts.push(slot_act(ctx, state, b, rng));
            }
            (system, UserAct::Acts(acts))
        }
    }
}

/// C.1: "selection requires state changes and a nonempty categorical value": the state
/// changes after the first user turn, and some turn holds a slot value other than UNSET and
/// DONTCARE.
pub(super) fn selection_rules_hold(slot_names: &[&str], turns: &[PlannedTurn]) -> bool {
    let changes = turns.windows(2).any(|w| w[0].state != w[1].state);
    let nonempty = turns.iter().any(|t| {
        slot_names
            .iter()
            .any(|s| t.state.get(*s).is_some_and(|v| is_concrete(v)))
    });
    changes && nonempty
}

/// Plan and render `turns` user turns.
pub(super) fn plan_dialogue(ctx: &Ctx, turns: usize, rng: &mut ChaCha8Rng) -> Vec<PlannedTurn> {
    let mut state = ctx.initial_state();
    let mut out = Vec::with_capacity(turns);
    for t in 0..turns {
        let (system_act, user_act) = plan_turn(ctx, &state, t, rng);
        let system = system_text(ctx, &state, &system_act, rng);
        let pieces = user_pieces(ctx, &state, &system_act, &user_act, rng);
        let next = gold_after(ctx, &state, &system_act, &user_act);
        out.push(PlannedTurn {
            system_act,
            user_act,
            system,
            pieces,
            state: next.clone(),
        });
        state = next;
    }
    out
}
