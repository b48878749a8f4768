//! The prefix intervention (A.4): "The prefix intervention preselects one position per item
//! and crosses correct/error drafts with readout of the whole answer or a local character. An
//! error draft flips one preceding character. It need not remain compatible with a complete
//! candidate. Schedules retain the supplied states and are independent of observed outcomes."
//!
//! The schedule is a pure function of the item and the option seed: the position, which
//! preceding character an error draft flips and what it becomes. Every readout and draft arm
//! of an item uses the same position, and both readouts of the error draft the same flip.

use rand::Rng;

use c2s_records::{Draft, Item};

use crate::options::{binding_unit, labelled_rng};

/// The preselected position (1-based), uniform over 2..=L so that a preceding character
/// exists to flip; keyed by the option seed and the item's unit, never by an outcome.
pub fn intervention_position(item: &Item, option_seed: u64) -> u32 {
    let mut rng = labelled_rng(option_seed, &["intervention_position", binding_unit(item)]);
    let length = item.length.max(2) as u32;
    rng.random_range(2..=length)
}

/// The flip of an error draft before `position`: the 0-based index of the flipped character
/// (uniform over the preceding ones) and its replacement (uniform over the domain alphabet
/// without the gold character).
pub fn error_flip(item: &Item, option_seed: u64, position: u32) -> (usize, char) {
    let gold: Vec<char> = item.target.chars().collect();
    let mut rng = labelled_rng(option_seed, &["intervention_flip", &item.item_id]);
    let index = rng.random_range(0..(position as usize - 1).max(1));
    let others: Vec<char> = item
        .domain
        .alphabet()
        .iter()
        .copied()
        .filter(|&c| Some(c) != gold.get(index).copied())
        .collect();
    (index, others[rng.random_range(0..others.len())])
}

/// The draft shown before `position`: the gold prefix, or that prefix with the error flip.
pub fn draft_prefix(item: &Item, option_seed: u64, position: u32, draft: Draft) -> String {
    let mut prefix: Vec<char> = item.target.chars().take(position as usize - 1).collect();
    if draft == Draft::Error {
        let (index, with) = error_flip(item, option_seed, position);
        if let Some(c) = prefix.get_mut(index) {
            *c = with;
        }
    }
    prefix.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(target: &str) -> Item {
        let c: Vec<String> = (0..8)
            .map(|i| {
                let mut s: Vec<char> = target.chars().collect();
                s[0] = char::from(b'1' + (i / 2) as u8);
                if i % 2 == 1 {
                    let last = s.len() - 1;
                    s[last] = if s[last] == '0' { '1' } else { '0' };
                }
                s.into_iter().collect()
            })
            .collect();
        let mut candidates = c.clone();
        candidates[0] = target.to_string();
        c2s_records::parse_item(
            &serde_json::json!({"item_id": format!("i{target}"), "domain": "arithmetic",
                "problem": "p", "target": target, "candidates": candidates})
            .to_string(),
            &Default::default(),
        )
        .unwrap()
    }

    /// "An error draft flips one preceding character": exactly one position before the queried
    /// one differs from gold, and the schedule depends only on the item and the seed.
    #[test]
    fn error_drafts_flip_exactly_one_preceding_character() {
        for target in ["123", "1234", "12345678", "10000"] {
            let it = item(target);
            for seed in 0..50u64 {
                let t = intervention_position(&it, seed);
                assert!((2..=it.length as u32).contains(&t));
                let correct = draft_prefix(&it, seed, t, Draft::Correct);
                let error = draft_prefix(&it, seed, t, Draft::Error);
                assert_eq!(correct, target[..t as usize - 1]);
                assert_eq!(error.len(), correct.len());
                let diffs = correct
                    .chars()
                    .zip(error.chars())
                    .filter(|(a, b)| a != b)
                    .count();
                assert_eq!(diffs, 1, "{target} seed {seed}: {correct} vs {error}");
                assert!(error.chars().all(|c| c.is_ascii_digit()));
                assert_eq!(error, draft_prefix(&it, seed, t, Draft::Error));
            }
        }
    }
}
