//! Templates: `{noun}` is the slot's noun phrase, `{v}` the value, `{old}` the value held
//! before. No template starts with a placeholder, so lowercasing the first letter of a second
//! clause never touches a value.

pub(super) const T_GREETING: &[&str] = &[
    "Hi, I need some help.",
    "Hello, can you help me with something?",
    "Hi there, I have a request.",
];
pub(super) const T_INFORM: &[&str] = &[
    "I'd like {v} for the {noun}.",
    "For the {noun}, {v} would be great.",
    "Let's go with {v} for the {noun}.",
    "Please make the {noun} {v}.",
];
pub(super) const T_CHANGE: &[&str] = &[
    "Change the {noun} to {v} instead.",
    "I'd prefer {v} for the {noun} instead of {old}.",
    "Make that {v} for the {noun}, not {old}.",
];
pub(super) const T_CANCEL: &[&str] = &[
    "Please drop the {noun} I gave you; I'll decide on it later.",
    "Forget the {noun} for now, I haven't decided on it.",
    "Remove the {noun} I mentioned; I'll choose it later.",
];
pub(super) const T_DONTCARE: &[&str] = &[
    "I don't have a preference for the {noun}.",
    "Any {noun} is fine with me.",
    "The {noun} doesn't matter to me.",
];
pub(super) const T_ACCEPT: &[&str] = &[
    "Yes, {v} works for me.",
    "Sure, let's do that.",
    "That sounds good, let's go with {v}.",
];
pub(super) const T_REJECT: &[&str] = &[
    "No, I don't want {v}.",
    "No thanks, not that.",
    "I'd rather not, thanks.",
];
/// Ignoring a suggestion without acting on it: no acceptance, no value.
pub(super) const T_DEFER: &[&str] = &[
    "Hmm, let me think about that for a moment.",
    "I'm not sure yet, give me a minute.",
    "Let me check with my friend first.",
];
pub(super) const T_CHITCHAT: &[&str] =
    &["Okay, thanks.", "Great, thank you.", "Thanks, that helps."];
pub(super) const T_CONFIRM_YES: &[&str] =
    &["Yes, that's right.", "Correct, thank you.", "Yes, exactly."];
/// Put before an intent request when the user switches intent (alternative i uses prefix
/// i mod 3 and request i).
pub(super) const T_SWITCH_PREFIX: &[&str] = &["That looks good. ", "Perfect. ", "Okay, great. "];
/// Joins the two clauses of a two-change turn.
pub(super) const T_CONNECTOR: &[&str] = &["Also,", "And", "Oh, and"];

pub(super) const S_OPEN: &[&str] = &[
    "Hello! What can I do for you?",
    "Hi, how can I help you today?",
];
pub(super) const S_GENERIC: &[&str] = &[
    "Sure, I can help with that.",
    "Okay, noted. Is there anything else?",
    "Got it. What else would you like?",
    "Let me check what is available.",
];
pub(super) const S_REQUEST: &[&str] = &[
    "Do you have a preference for the {noun}?",
    "What {noun} would you like?",
    "Any preference on the {noun}?",
];
pub(super) const S_SUGGEST: &[&str] = &[
    "How about {v} for the {noun}?",
    "Would {v} work for the {noun}?",
    "I can suggest {v} for the {noun}. Would you like that?",
];
pub(super) const S_CONFIRM: &[&str] = &[
    "Just to confirm, you want {v} for the {noun}?",
    "So that's {v} for the {noun}, right?",
];

pub(super) fn fill(template: &str, noun: &str, v: &str, old: &str) -> String {
    template
        .replace("{noun}", noun)
        .replace("{v}", v)
        .replace("{old}", old)
}

/// Lowercase the first letter of a clause that follows a connector, except the pronoun I.
pub(super) fn lower_first(s: &str) -> String {
    if s.starts_with("I ") || s.starts_with("I'") {
        return s.to_string();
    }
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A stable id part: lowercase ASCII alphanumerics, everything else `_`.
pub(super) fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}
