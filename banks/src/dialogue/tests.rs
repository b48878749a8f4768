//! Tests of the dialogue bank: the catalogue, the counts and schedule of C.1–C.2, the
//! gold-state rules of E.4, determinism and the committed bank.

use std::collections::BTreeMap;

use c2s_records::{DialogueState, DONTCARE, INTENT_FIELD, NONE_INTENT, UNSET};

use super::acts::{gold_after, kind, Act, Ctx, SystemAct, UserAct};
use super::catalogue::{SlotSpec, SERVICES};
use super::plan::is_concrete;
use super::render::{compose, system_text, user_pieces};
use super::templates::{
    slug, T_ACCEPT, T_CANCEL, T_CHANGE, T_CHITCHAT, T_CONFIRM_YES, T_CONNECTOR, T_DEFER,
    T_DONTCARE, T_GREETING, T_INFORM, T_REJECT,
};
use super::*;

fn built() -> Built {
    build(DEFAULT_DIALOGUE_SEED).unwrap()
}

fn values(s: &DialogueService, field: &str) -> Vec<String> {
    s.legal_values(field)
        .unwrap()
        .into_iter()
        .map(|v| v.value)
        .collect()
}

/// Ten services modelled on SGD's domains: two or three intents, three or four
/// categorical slots of two to five values, stable ids and one-sentence descriptions;
/// every act has at least two paraphrase alternatives.
#[test]
fn catalogue_has_ten_services_with_described_values() {
    let catalogue = service_catalogue();
    assert_eq!(catalogue.len(), 10);
    let names: BTreeSet<&str> = catalogue.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), 10);
    for (s, spec) in catalogue.iter().zip(&SERVICES) {
        assert!((2..=3).contains(&s.intents.len()), "{}", s.name);
        assert!((3..=4).contains(&s.slots.len()), "{}", s.name);
        assert!(s.description.ends_with('.'));
        for i in &s.intents {
            assert_eq!(i.id, format!("intent:{}", i.value));
            assert!(i.value.chars().next().unwrap().is_ascii_uppercase());
            assert!(!i.value.contains(' ') && !i.value.contains('_'));
            assert!(i.description.ends_with('.'));
        }
        for i in spec.intents {
            assert!(i.requests.len() >= 2, "{}", i.name);
        }
        for slot in &s.slots {
            assert!((2..=5).contains(&slot.values.len()), "{}", slot.name);
            assert!(slot
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '_'));
            assert!(slot.description.ends_with('.'));
            for v in &slot.values {
                assert_eq!(v.id, format!("{}:{}", slot.name, slug(&v.value)));
                assert!(v.description.ends_with('.'), "{}", v.id);
            }
        }
        // The full schema passes the record's own checks.
        let mut st = s.initial_state();
        st.insert(INTENT_FIELD.into(), s.intents[0].value.clone());
        let d = Dialogue {
            dialogue_id: "x".into(),
            split: DialogueSplit::Test,
            service: s.clone(),
            field_order: s.fields(),
            turns: vec![DialogueTurn {
                system: String::new(),
                user: "hi".into(),
                state: st,
            }],
            perturbation: None,
            perturbation_of: None,
            origin: String::new(),
        };
        d.validate().unwrap();
    }
    for t in [
        T_GREETING,
        T_INFORM,
        T_CHANGE,
        T_CANCEL,
        T_DONTCARE,
        T_ACCEPT,
        T_REJECT,
        T_DEFER,
        T_CHITCHAT,
        T_CONFIRM_YES,
        T_CONNECTOR,
    ] {
        assert!(t.len() >= 2);
        assert_eq!(t.iter().collect::<BTreeSet<_>>().len(), t.len());
        assert!(t.iter().all(|s| !s.starts_with('{')));
    }
}

/// C.1: "The 96 test prefixes contain four, six or eight user turns (32 each), cover ten
/// services (at most twelve dialogues per service), and have one to three categorical
/// slots plus active intent." "Twelve development prefixes". C.2: "96 dialogues, 576
/// user turns and 1,716 field turns".
#[test]
fn counts_follow_the_paper() {
    let bank = built().bank;
    assert_eq!(bank.test.len(), 96);
    assert_eq!(bank.dev.len(), 12);
    assert_eq!(bank.perturbed.len(), 18);
    for (split, dialogues, per_length) in [
        (DialogueSplit::Test, &bank.test, 32),
        (DialogueSplit::Dev, &bank.dev, 4),
    ] {
        let mut by_length: BTreeMap<usize, usize> = BTreeMap::new();
        for d in dialogues.iter() {
            assert_eq!(d.split, split);
            *by_length.entry(d.turns.len()).or_default() += 1;
            let slots = d.service.slots.len();
            assert!((1..=3).contains(&slots), "{}", d.dialogue_id);
            let mut fields = vec![INTENT_FIELD.to_string()];
            fields.extend(d.service.slots.iter().map(|s| s.name.clone()));
            assert_eq!(d.service.fields(), fields);
        }
        assert_eq!(
            by_length,
            [(4, per_length), (6, per_length), (8, per_length)].into()
        );
    }
    let mut per_service: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &bank.test {
        *per_service.entry(d.service.name.as_str()).or_default() += 1;
    }
    assert_eq!(per_service.len(), 10, "ten services");
    assert!(per_service.values().all(|&n| n <= MAX_PER_SERVICE));
    let user_turns: usize = bank.test.iter().map(|d| d.turns.len()).sum();
    let field_turns: usize = bank
        .test
        .iter()
        .map(|d| d.turns.len() * d.field_order.len())
        .sum();
    assert_eq!((user_turns, field_turns), (576, 1716));
    let c = &bank.provenance.counts;
    assert_eq!(c["test/dialogues"], 96);
    assert_eq!(c["dev/dialogues"], 12);
    assert_eq!(c["test/field_turns"], 1716);
    assert_eq!(c["lines"], 126);
    assert_eq!(bank.to_jsonl().lines().count(), 126);
}

/// Every dialogue validates; ids are unique and shaped `sgdsyn:<split>:<service>:<nnn>`;
/// "A service persists throughout each prefix" (one service per dialogue, its fields in
/// every state); the first state comes from "Initial intent is NONE, absent slots UNSET".
#[test]
fn every_dialogue_validates_with_unique_ids() {
    let b = built();
    let mut ids = BTreeSet::new();
    for d in b.bank.dialogues() {
        d.validate().unwrap();
        assert!(ids.insert(d.dialogue_id.clone()), "{}", d.dialogue_id);
        let parts: Vec<&str> = d.dialogue_id.split(':').collect();
        assert_eq!(parts[0], "sgdsyn");
        assert_eq!(parts[1], d.split.as_str());
        assert_eq!(parts[2], d.service.name.to_lowercase());
        assert_eq!(parts[3].len(), 3);
        assert_eq!(parts.len(), if d.perturbation.is_some() { 5 } else { 4 });
        assert!(
            d.turns[0].system.is_empty(),
            "no SYSTEM turn before the first"
        );
        assert!(d.turns[1..].iter().all(|t| !t.system.is_empty()));
        assert!(d.origin.starts_with(DIALOGUE_GENERATOR_VERSION));
        assert!(d.origin.contains("seed 20261201"));
    }
    for (d, plan) in b.bank.test.iter().chain(&b.bank.dev).zip(&b.plans) {
        // Turn 1 starts from the initial state: only the fields it touches differ.
        let init = d.service.initial_state();
        let first = &plan[0];
        let touched: BTreeSet<String> = match &first.user_act {
            UserAct::Acts(acts) => acts
                .iter()
                .map(|a| match a {
                    Act::Intent { .. } => INTENT_FIELD.to_string(),
                    Act::Inform { slot, .. }
                    | Act::Change { slot, .. }
                    | Act::Cancel { slot }
                    | Act::DontCare { slot } => d.service.slots[*slot].name.clone(),
                })
                .collect(),
            _ => BTreeSet::new(),
        };
        for (f, v) in &d.turns[0].state {
            if !touched.contains(f) {
                assert_eq!(v, &init[f], "{} {f}", d.dialogue_id);
            }
        }
    }
}

/// C.1: "selection requires state changes and a nonempty categorical value".
#[test]
fn every_dialogue_changes_state_and_holds_a_value() {
    let bank = built().bank;
    for d in bank.dialogues() {
        let changes = d.turns.windows(2).any(|w| w[0].state != w[1].state);
        assert!(changes, "{}: no state change after turn 1", d.dialogue_id);
        let nonempty = d.turns.iter().any(|t| {
            d.service
                .slots
                .iter()
                .any(|s| is_concrete(&t.state[&s.name]))
        });
        assert!(nonempty, "{}: no categorical value", d.dialogue_id);
    }
}

/// C.1: "Twelve development prefixes are disjoint by split, identifier and content."
#[test]
fn dev_is_disjoint_from_test() {
    let bank = built().bank;
    let test_ids: BTreeSet<&str> = bank
        .test
        .iter()
        .chain(&bank.perturbed)
        .map(|d| d.dialogue_id.as_str())
        .collect();
    let test_users: BTreeSet<Vec<&str>> = bank
        .test
        .iter()
        .chain(&bank.perturbed)
        .map(|d| d.turns.iter().map(|t| t.user.as_str()).collect())
        .collect();
    for d in &bank.dev {
        assert_eq!(d.split, DialogueSplit::Dev);
        assert!(d.dialogue_id.starts_with("sgdsyn:dev:"));
        assert!(!test_ids.contains(d.dialogue_id.as_str()));
        let users: Vec<&str> = d.turns.iter().map(|t| t.user.as_str()).collect();
        assert!(!test_users.contains(&users), "{}", d.dialogue_id);
    }
    assert!(bank
        .test
        .iter()
        .chain(&bank.perturbed)
        .all(|d| d.split == DialogueSplit::Test && d.dialogue_id.starts_with("sgdsyn:test:")));
    // Within the bank's base dialogues too, no two share their user utterances.
    let all: BTreeSet<Vec<&str>> = bank
        .test
        .iter()
        .chain(&bank.dev)
        .map(|d| d.turns.iter().map(|t| t.user.as_str()).collect())
        .collect();
    assert_eq!(all.len(), 108);
}

/// C.2: "Field order uses seed 20261009"; E.4: "The field order is fixed before
/// outcomes." One ChaCha8Rng from 20261009 shuffles each base dialogue's fields in bank
/// order (test, then dev); perturbed copies keep their base's order.
#[test]
fn field_order_comes_from_seed_20261009_in_bank_order() {
    let bank = built().bank;
    let mut rng = ChaCha8Rng::seed_from_u64(20_261_009);
    let mut shuffled = 0;
    for d in bank.test.iter().chain(&bank.dev) {
        let mut fields = d.service.fields();
        fields.shuffle(&mut rng);
        assert_eq!(d.field_order, fields, "{}", d.dialogue_id);
        if d.field_order != d.service.fields() {
            shuffled += 1;
        }
    }
    assert!(shuffled > 40, "{shuffled}");
    let by_id: BTreeMap<&str, &Dialogue> = bank
        .test
        .iter()
        .map(|d| (d.dialogue_id.as_str(), d))
        .collect();
    for p in &bank.perturbed {
        let base = by_id[p.perturbation_of.as_deref().unwrap()];
        assert_eq!(p.field_order, base.field_order);
    }
}

/// C.2: "Twelve test dialogues receive one task-preserving paraphrase; six of these also
/// receive one permutation of displayed semantic values."
#[test]
fn perturbation_schedule() {
    let bank = built().bank;
    let by_id: BTreeMap<&str, &Dialogue> = bank
        .test
        .iter()
        .map(|d| (d.dialogue_id.as_str(), d))
        .collect();
    let of = |p: Perturbation| -> Vec<&Dialogue> {
        bank.perturbed
            .iter()
            .filter(|d| d.perturbation == Some(p))
            .collect()
    };
    let para = of(Perturbation::Paraphrase);
    let perm = of(Perturbation::ValuePermutation);
    assert_eq!((para.len(), perm.len()), (PARAPHRASED, PERMUTED));
    let para_bases: BTreeSet<&str> = para
        .iter()
        .map(|d| d.perturbation_of.as_deref().unwrap())
        .collect();
    let perm_bases: BTreeSet<&str> = perm
        .iter()
        .map(|d| d.perturbation_of.as_deref().unwrap())
        .collect();
    assert_eq!(para_bases.len(), 12);
    assert!(perm_bases.is_subset(&para_bases), "six of these");
    for (bases, per_length) in [(&para_bases, 4), (&perm_bases, 2)] {
        let mut by_length: BTreeMap<usize, usize> = BTreeMap::new();
        for b in bases.iter() {
            *by_length.entry(by_id[b].turns.len()).or_default() += 1;
        }
        assert_eq!(
            by_length,
            [(4, per_length), (6, per_length), (8, per_length)].into()
        );
    }
    for d in &bank.perturbed {
        let base = by_id[d.perturbation_of.as_deref().unwrap()];
        assert_eq!(d.split, DialogueSplit::Test);
        assert_eq!(
            d.dialogue_id,
            format!("{}:{}", base.dialogue_id, d.perturbation.unwrap().as_str())
        );
        assert_eq!(d.base_id(), base.dialogue_id);
        assert_eq!(d.turns.len(), base.turns.len());
        for (t, b) in d.turns.iter().zip(&base.turns) {
            assert_eq!(t.state, b.state, "gold states identical");
            assert_eq!(t.system, b.system);
        }
        match d.perturbation.unwrap() {
            Perturbation::Paraphrase => {
                assert_eq!(d.service, base.service);
                for (t, b) in d.turns.iter().zip(&base.turns) {
                    assert_ne!(t.user, b.user, "{}: every user utterance", d.dialogue_id);
                }
            }
            Perturbation::ValuePermutation => {
                for (t, b) in d.turns.iter().zip(&base.turns) {
                    assert_eq!(t.user, b.user);
                }
                assert_eq!(d.service.name, base.service.name);
                assert_eq!(d.service.fields(), base.service.fields());
                for f in base.service.fields() {
                    let (a, b) = (values(&d.service, &f), values(&base.service, &f));
                    assert_ne!(a, b, "{}: {f} order must differ", d.dialogue_id);
                    let sa: BTreeSet<_> = d
                        .service
                        .legal_values(&f)
                        .unwrap()
                        .into_iter()
                        .map(|v| (v.id, v.value, v.description))
                        .collect();
                    let sb: BTreeSet<_> = base
                        .service
                        .legal_values(&f)
                        .unwrap()
                        .into_iter()
                        .map(|v| (v.id, v.value, v.description))
                        .collect();
                    assert_eq!(sa, sb, "same values, ids and descriptions");
                }
            }
        }
    }
    assert_eq!(bank.provenance.perturbations.len(), 18);
    // A paraphrase copy precedes the value permutation of the same base.
    for w in bank.perturbed.windows(2) {
        if w[1].perturbation == Some(Perturbation::ValuePermutation) {
            assert_eq!(w[0].perturbation, Some(Perturbation::Paraphrase));
            assert_eq!(w[0].perturbation_of, w[1].perturbation_of);
        }
    }
}

fn restaurant_slots() -> Vec<&'static SlotSpec> {
    vec![&SERVICES[0].slots[0], &SERVICES[0].slots[1]]
}

fn state(intent: &str, price: &str, cuisine: &str) -> DialogueState {
    [
        (INTENT_FIELD, intent),
        ("price_range", price),
        ("cuisine", cuisine),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// E.4: "Ignore SYSTEM suggestions unless accepted by the user." Hand-checked: the
/// suggestion holds after an acceptance; after a rejection, a deferral or an answer about
/// another slot the earlier value is preserved.
#[test]
fn suggestions_hold_only_when_accepted() {
    let slots = restaurant_slots();
    let ctx = Ctx {
        spec: &SERVICES[0],
        slots: &slots,
    };
    let prior = state("FindRestaurants", "moderate", UNSET);
    // "How about expensive for the price range?"
    let suggest = SystemAct::Suggest { slot: 0, value: 2 };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let said = system_text(&ctx, &prior, &suggest, &mut rng);
    assert!(
        said.contains("expensive") && said.contains("price range"),
        "{said}"
    );
    assert_eq!(
        gold_after(&ctx, &prior, &suggest, &UserAct::Accept),
        state("FindRestaurants", "expensive", UNSET)
    );
    for ignored in [UserAct::Reject, UserAct::Defer, UserAct::ChitChat] {
        assert_eq!(
            gold_after(&ctx, &prior, &suggest, &ignored),
            prior,
            "{ignored:?}"
        );
    }
    // Ignored by answering about another slot: that slot changes, the price does not.
    let other = UserAct::Acts(vec![Act::Inform { slot: 1, value: 0 }]);
    assert_eq!(
        gold_after(&ctx, &prior, &suggest, &other),
        state("FindRestaurants", "moderate", "Italian")
    );
    assert_eq!(kind(&suggest, &other), "suggest_ignore");
    let text = compose(&user_pieces(&ctx, &prior, &suggest, &other, &mut rng));
    assert!(
        text.contains("Italian") && !text.contains("expensive"),
        "{text}"
    );
    // A suggestion for an unset slot, accepted.
    let prior = state("FindRestaurants", UNSET, UNSET);
    let suggest = SystemAct::Suggest { slot: 1, value: 3 };
    assert_eq!(
        gold_after(&ctx, &prior, &suggest, &UserAct::Accept)["cuisine"],
        "Chinese"
    );
    assert_eq!(gold_after(&ctx, &prior, &suggest, &UserAct::Reject), prior);
}

/// E.4: "UNSET means no value is held; DONTCARE means the user explicitly has no
/// preference", "Preserve earlier user-provided slot values unless the user changes or
/// cancels them", "Select the current active intent, or NONE if no intent is active."
#[test]
fn cancel_unsets_no_preference_is_dontcare_and_values_persist() {
    let slots = restaurant_slots();
    let ctx = Ctx {
        spec: &SERVICES[0],
        slots: &slots,
    };
    let sys = SystemAct::Generic;
    let prior = state("FindRestaurants", "moderate", "Indian");
    let cancel = UserAct::Acts(vec![Act::Cancel { slot: 0 }]);
    assert_eq!(
        gold_after(&ctx, &prior, &sys, &cancel),
        state("FindRestaurants", UNSET, "Indian")
    );
    let dontcare = UserAct::Acts(vec![Act::DontCare { slot: 1 }]);
    assert_eq!(
        gold_after(&ctx, &prior, &sys, &dontcare),
        state("FindRestaurants", "moderate", DONTCARE)
    );
    let change = UserAct::Acts(vec![Act::Change { slot: 0, value: 0 }]);
    assert_eq!(
        gold_after(&ctx, &prior, &sys, &change),
        state("FindRestaurants", "inexpensive", "Indian")
    );
    // Switching intent keeps the slots; a double turn changes two fields.
    let switch = UserAct::Acts(vec![
        Act::Intent {
            intent: 1,
            switch: true,
        },
        Act::DontCare { slot: 0 },
    ]);
    assert_eq!(
        gold_after(&ctx, &prior, &sys, &switch),
        state("ReserveRestaurant", DONTCARE, "Indian")
    );
    // Chit-chat, a confirmation and a greeting change nothing.
    for user in [UserAct::ChitChat, UserAct::ConfirmYes, UserAct::Greeting] {
        assert_eq!(gold_after(&ctx, &prior, &sys, &user), prior);
    }
    let init = ctx.initial_state();
    assert_eq!(init, state(NONE_INTENT, UNSET, UNSET));
    // The texts say what the acts do.
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for (user, words) in [
        (&cancel, ["price range", "later"].as_slice()),
        (&change, ["inexpensive", "price range"].as_slice()),
    ] {
        let text = compose(&user_pieces(&ctx, &prior, &sys, user, &mut rng));
        assert!(
            words.iter().any(|w| text.contains(w)) && text.contains("price range"),
            "{text}"
        );
    }
    let text = compose(&user_pieces(&ctx, &prior, &sys, &switch, &mut rng));
    assert!(text.contains("price range"), "{text}");
    assert!(
        T_CONNECTOR.iter().any(|c| text.contains(&format!(" {c} "))),
        "{text}"
    );
}

/// Every turn of the bank follows the gold-state rules of its act, every act kind
/// occurs, and a slot's new value appears in the exchange as the schema spells it.
#[test]
fn bank_turns_follow_the_rules_of_their_acts() {
    let b = built();
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for (d, plan) in b.bank.test.iter().chain(&b.bank.dev).zip(&b.plans) {
        let mut prior = d.service.initial_state();
        for (t, (turn, p)) in d.turns.iter().zip(plan).enumerate() {
            let k = p.kind();
            *kinds.entry(k).or_default() += 1;
            assert!(d.origin.contains(&format!("t{} {k}[", t + 1)));
            let changed: Vec<&String> = turn
                .state
                .iter()
                .filter(|(f, v)| prior[*f] != **v)
                .map(|(f, _)| f)
                .collect();
            match (&p.system_act, &p.user_act) {
                (SystemAct::Suggest { slot, value }, UserAct::Accept) => {
                    let name = &d.service.slots[*slot].name;
                    assert_eq!(
                        turn.state[name],
                        d.service.slots[*slot].values[*value].value
                    );
                    assert!(turn.system.contains(&turn.state[name]));
                }
                (SystemAct::Suggest { slot, .. }, _) => {
                    let name = &d.service.slots[*slot].name;
                    assert_eq!(turn.state[name], prior[name], "{} t{t}", d.dialogue_id);
                }
                _ => {}
            }
            match k {
                "greeting" | "confirm" | "chitchat" | "suggest_reject" => {
                    assert!(changed.is_empty())
                }
                "double" => assert_eq!(changed.len(), 2, "{} t{t}", d.dialogue_id),
                "cancel" => {
                    assert_eq!(changed.len(), 1);
                    assert_eq!(turn.state[changed[0]], UNSET);
                }
                "dontcare" => {
                    assert_eq!(changed.len(), 1);
                    assert_eq!(turn.state[changed[0]], DONTCARE);
                }
                "switch_intent" | "intent" => {
                    assert_eq!(changed, [INTENT_FIELD]);
                }
                _ => assert!(changed.len() <= 1),
            }
            for f in &changed {
                let v = &turn.state[*f];
                if f.as_str() != INTENT_FIELD && is_concrete(v) {
                    assert!(
                        turn.user.contains(v.as_str()) || turn.system.contains(v.as_str()),
                        "{} t{t}: `{v}` not in {:?} / {:?}",
                        d.dialogue_id,
                        turn.system,
                        turn.user
                    );
                }
            }
            let spec = SERVICES.iter().find(|s| s.name == d.service.name).unwrap();
            let slots: Vec<&SlotSpec> = d
                .service
                .slots
                .iter()
                .map(|s| spec.slots.iter().find(|x| x.name == s.name).unwrap())
                .collect();
            let ctx = Ctx {
                spec,
                slots: &slots,
            };
            assert_eq!(
                turn.state,
                gold_after(&ctx, &prior, &p.system_act, &p.user_act)
            );
            prior = turn.state.clone();
        }
    }
    for k in [
        "greeting",
        "intent",
        "inform",
        "change",
        "cancel",
        "dontcare",
        "suggest_accept",
        "suggest_reject",
        "suggest_ignore",
        "confirm",
        "chitchat",
        "switch_intent",
        "double",
    ] {
        assert!(
            kinds.get(k).copied().unwrap_or(0) >= 3,
            "act {k}: {kinds:?}"
        );
    }
}

/// Same seed, same bytes; another seed, another bank.
#[test]
fn generation_is_deterministic() {
    let a = build_dialogue_bank(DEFAULT_DIALOGUE_SEED).unwrap();
    let b = build_dialogue_bank(DEFAULT_DIALOGUE_SEED).unwrap();
    assert_eq!(a.to_jsonl(), b.to_jsonl());
    assert_eq!(a.provenance, b.provenance);
    let c = build_dialogue_bank(DEFAULT_DIALOGUE_SEED + 1).unwrap();
    assert_ne!(a.to_jsonl(), c.to_jsonl());
    c.dialogues().for_each(|d| d.validate().unwrap());
    assert_eq!(c.test.len(), 96);
}

/// The committed bank is the generator's output, byte for byte.
/// `C2S_WRITE_DIALOGUE=1 cargo test -p c2s-banks committed_dialogue_bank` rewrites it
/// (or `choice2seq bank dialogue --out data/banks`).
#[test]
fn committed_dialogue_bank_equals_the_generator() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/banks");
    let bank = build_dialogue_bank(DEFAULT_DIALOGUE_SEED).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    write_dialogue_bank(&bank, tmp.path()).unwrap();
    if std::env::var_os("C2S_WRITE_DIALOGUE").is_some() {
        write_dialogue_bank(&bank, &dir).unwrap();
    }
    for name in [DIALOGUE_FILE, DIALOGUE_PROVENANCE] {
        let built = std::fs::read(tmp.path().join(name)).unwrap();
        let committed = std::fs::read(dir.join(name))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()));
        assert!(
            built == committed,
            "{name} differs from the generator's output"
        );
    }
    let text = std::fs::read(dir.join(DIALOGUE_FILE)).unwrap();
    assert_eq!(
        bank.provenance.files[DIALOGUE_FILE],
        crate::bank::sha256_hex(&text)
    );
    let read = read_dialogue_bank(&dir.join(DIALOGUE_FILE)).unwrap();
    assert_eq!(read, bank.dialogues().cloned().collect::<Vec<_>>());
    let prov: DialogueProvenance =
        serde_json::from_slice(&std::fs::read(dir.join(DIALOGUE_PROVENANCE)).unwrap()).unwrap();
    assert!(prov.statement.contains("not SGD: no SGD text is used"));
}

#[test]
fn reading_rejects_bad_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.jsonl");
    std::fs::write(&path, "{\n").unwrap();
    let e = read_dialogue_bank(&path).unwrap_err();
    assert!(e.to_string().contains(":1:"), "{e}");
    let bank = build_dialogue_bank(DEFAULT_DIALOGUE_SEED).unwrap();
    let mut d = bank.test[0].clone();
    d.field_order.pop();
    std::fs::write(&path, serde_json::to_string(&d).unwrap()).unwrap();
    assert!(matches!(
        read_dialogue_bank(&path),
        Err(DialogueBankError::Invalid(_))
    ));
}
