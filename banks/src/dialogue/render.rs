//! Rendering: the templated clauses of a user turn, their composition into an utterance, and
//! the SYSTEM utterances.

use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use c2s_records::{DialogueState, INTENT_FIELD, NONE_INTENT};

use super::acts::{Act, Ctx, SystemAct, UserAct};
use super::templates::{
    fill, lower_first, S_CONFIRM, S_GENERIC, S_OPEN, S_REQUEST, S_SUGGEST, T_ACCEPT, T_CANCEL,
    T_CHANGE, T_CHITCHAT, T_CONFIRM_YES, T_CONNECTOR, T_DEFER, T_DONTCARE, T_GREETING, T_INFORM,
    T_REJECT, T_SWITCH_PREFIX,
};

/// One templated clause of a user utterance: its template key, its paraphrase alternatives
/// (already filled) and the one chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Piece {
    key: String,
    pub(super) alts: Vec<String>,
    pub(super) idx: usize,
}

impl Piece {
    fn new(key: impl Into<String>, alts: Vec<String>, rng: &mut ChaCha8Rng) -> Piece {
        let idx = rng.random_range(0..alts.len());
        Piece {
            key: key.into(),
            alts,
            idx,
        }
    }
    fn text(&self) -> &str {
        &self.alts[self.idx]
    }
    pub(super) fn id(&self) -> String {
        format!("{}#{}", self.key, self.idx)
    }
}

const CONNECTOR_KEY: &str = "connector";

fn fills(templates: &[&str], noun: &str, v: &str, old: &str) -> Vec<String> {
    templates.iter().map(|t| fill(t, noun, v, old)).collect()
}

fn act_piece(ctx: &Ctx, state: &DialogueState, act: &Act, rng: &mut ChaCha8Rng) -> Piece {
    match act {
        Act::Intent { intent, switch } => {
            let spec = &ctx.spec.intents[*intent];
            if *switch {
                let alts = spec
                    .requests
                    .iter()
                    .enumerate()
                    .map(|(i, r)| format!("{}{r}", T_SWITCH_PREFIX[i % T_SWITCH_PREFIX.len()]))
                    .collect();
                Piece::new(format!("switch.{}", spec.name), alts, rng)
            } else {
                let alts = spec.requests.iter().map(|r| r.to_string()).collect();
                Piece::new(format!("intent.{}", spec.name), alts, rng)
            }
        }
        Act::Inform { slot, value } => {
            let noun = ctx.slots[*slot].noun;
            Piece::new(
                "inform",
                fills(T_INFORM, noun, ctx.value(*slot, *value), ""),
                rng,
            )
        }
        Act::Change { slot, value } => {
            let noun = ctx.slots[*slot].noun;
            let old = ctx.held(state, *slot);
            Piece::new(
                "change",
                fills(T_CHANGE, noun, ctx.value(*slot, *value), old),
                rng,
            )
        }
        Act::Cancel { slot } => Piece::new(
            "cancel",
            fills(T_CANCEL, ctx.slots[*slot].noun, "", ""),
            rng,
        ),
        Act::DontCare { slot } => Piece::new(
            "dontcare",
            fills(T_DONTCARE, ctx.slots[*slot].noun, "", ""),
            rng,
        ),
    }
}

fn plain(templates: &[&str]) -> Vec<String> {
    templates.iter().map(|t| t.to_string()).collect()
}

/// The clauses of a user turn, rendered against the state before it.
pub(super) fn user_pieces(
    ctx: &Ctx,
    prior: &DialogueState,
    system: &SystemAct,
    user: &UserAct,
    rng: &mut ChaCha8Rng,
) -> Vec<Piece> {
    let suggested = match system {
        SystemAct::Suggest { slot, value } => (ctx.slots[*slot].noun, ctx.value(*slot, *value)),
        _ => ("", ""),
    };
    match user {
        UserAct::Greeting => vec![Piece::new("greeting", plain(T_GREETING), rng)],
        UserAct::Accept => vec![Piece::new(
            "accept",
            fills(T_ACCEPT, suggested.0, suggested.1, ""),
            rng,
        )],
        UserAct::Reject => vec![Piece::new(
            "reject",
            fills(T_REJECT, suggested.0, suggested.1, ""),
            rng,
        )],
        UserAct::Defer => vec![Piece::new("defer", plain(T_DEFER), rng)],
        UserAct::ChitChat => vec![Piece::new("chitchat", plain(T_CHITCHAT), rng)],
        UserAct::ConfirmYes => vec![Piece::new("confirm_yes", plain(T_CONFIRM_YES), rng)],
        UserAct::Acts(acts) => {
            let mut out = Vec::new();
            for (i, act) in acts.iter().enumerate() {
                if i > 0 {
                    out.push(Piece::new(CONNECTOR_KEY, plain(T_CONNECTOR), rng));
                }
                out.push(act_piece(ctx, prior, act, rng));
            }
            out
        }
    }
}

/// The user utterance of a turn's clauses: a clause after a connector starts lowercase.
pub(super) fn compose(pieces: &[Piece]) -> String {
    let mut out = String::new();
    let mut after_connector = false;
    for p in pieces {
        if p.key == CONNECTOR_KEY {
            out.push(' ');
            out.push_str(p.text());
            out.push(' ');
            after_connector = true;
        } else if after_connector {
            out.push_str(&lower_first(p.text()));
            after_connector = false;
        } else {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(p.text());
        }
    }
    out
}

pub(super) fn system_text(
    ctx: &Ctx,
    prior: &DialogueState,
    system: &SystemAct,
    rng: &mut ChaCha8Rng,
) -> String {
    let pick = |templates: &[&str], rng: &mut ChaCha8Rng| -> String {
        templates
            .choose(rng)
            .copied()
            .unwrap_or_default()
            .to_string()
    };
    match system {
        SystemAct::Opening => String::new(),
        SystemAct::Generic if prior[INTENT_FIELD] == NONE_INTENT => pick(S_OPEN, rng),
        SystemAct::Generic => pick(S_GENERIC, rng),
        SystemAct::Request { slot } => fill(&pick(S_REQUEST, rng), ctx.slots[*slot].noun, "", ""),
        SystemAct::Suggest { slot, value } => fill(
            &pick(S_SUGGEST, rng),
            ctx.slots[*slot].noun,
            ctx.value(*slot, *value),
            "",
        ),
        SystemAct::Confirm { slot } => fill(
            &pick(S_CONFIRM, rng),
            ctx.slots[*slot].noun,
            ctx.held(prior, *slot),
            "",
        ),
    }
}
