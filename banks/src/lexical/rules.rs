//! Rules 1–3 of the module documentation, each a small function, and the set-level helpers
//! of construction (Zipf range, cells, seeded draws).

use std::collections::{BTreeMap, BTreeSet};

use c2s_records::FrequencyStratum;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::wordnet::{Synset, WordNet};

use super::{
    Cell, Split, HIGH_ZIPF_CENTS, MAX_LENGTH, MIN_DEFINITION_WORDS, MIN_LENGTH, MIN_ZIPF_CENTS,
};

// ---------------------------------------------------------------------------------------
// Rule 1: eligible words.

/// A single word: no space, underscore, hyphen or digit.
pub fn is_single_word(word: &str) -> bool {
    !word
        .chars()
        .any(|c| c == ' ' || c == '_' || c == '-' || c.is_ascii_digit())
}

/// Only ASCII lowercase letters a–z (and not empty).
pub fn is_ascii_lowercase_word(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase())
}

/// Length within the main panels' 3..=8.
pub fn length_in_range(word: &str) -> bool {
    (MIN_LENGTH..=MAX_LENGTH).contains(&word.len())
}

/// Zipf at least 2.5 (hundredths; absent words have 0).
pub fn zipf_sufficient(zipf_cents: i32) -> bool {
    zipf_cents >= MIN_ZIPF_CENTS
}

/// Proper-name sense: the synset is an instance (`@i`) or names `word` capitalized.
pub fn is_proper_name_sense(synset: &Synset, word: &str) -> bool {
    synset.is_instance()
        || synset
            .lemmas
            .iter()
            .any(|l| l.eq_ignore_ascii_case(word) && l.bytes().any(|b| b.is_ascii_uppercase()))
}

/// Whether `word` has a noun sense that is not a proper-name sense.
pub fn has_common_noun_sense(word: &str, wn: &WordNet) -> bool {
    wn.senses(word)
        .iter()
        .any(|&o| wn.synset(o).is_some_and(|s| !is_proper_name_sense(s, word)))
}

/// Rule 1: why `word` is not an eligible noun, or `None` when it is.
pub fn word_exclusion(word: &str, zipf_cents: i32, wn: &WordNet) -> Option<&'static str> {
    if !is_single_word(word) {
        Some("not_single_word")
    } else if !is_ascii_lowercase_word(word) {
        Some("not_ascii_lowercase")
    } else if !length_in_range(word) {
        Some("length_out_of_range")
    } else if !zipf_sufficient(zipf_cents) {
        Some("zipf_below_2.5")
    } else if !has_common_noun_sense(word, wn) {
        Some("only_proper_name_senses")
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------
// Rule 2: target screening.

/// Forms of a noun used for cue and conflict checks: the word, +s, +es, +'s, y→ies, its
/// irregular plurals (noun.exc), and, when it is itself an irregular plural, its bases.
pub fn word_forms(word: &str, wn: &WordNet) -> BTreeSet<String> {
    let mut forms = BTreeSet::new();
    forms.insert(word.to_string());
    forms.insert(format!("{word}s"));
    forms.insert(format!("{word}es"));
    forms.insert(format!("{word}'s"));
    if let Some(stem) = word.strip_suffix('y') {
        forms.insert(format!("{stem}ies"));
    }
    for p in wn.irregular_plurals(word) {
        forms.insert(p.clone());
    }
    for b in wn.irregular_bases(word) {
        forms.insert(b.clone());
    }
    forms
}

/// Lowercase tokens of a definition: runs of ASCII letters, digits and apostrophes, with
/// leading/trailing apostrophes removed (so `dogs'` reads as `dogs`).
pub fn definition_tokens(definition: &str) -> Vec<String> {
    definition
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '\''))
        .map(|t| t.trim_matches('\'').to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Whether the definition cues `word`: a token is one of `forms`, or (for words of four or
/// more letters) a token starts with the word.
pub fn definition_cues_word(definition: &str, word: &str, forms: &BTreeSet<String>) -> bool {
    definition_tokens(definition)
        .iter()
        .any(|t| forms.contains(t) || (word.len() >= 4 && t.starts_with(word)))
}

/// Too short to serve as a problem: fewer than [`MIN_DEFINITION_WORDS`] words.
pub fn definition_too_short(definition: &str) -> bool {
    definition_tokens(definition).len() < MIN_DEFINITION_WORDS
}

/// Lemmas of `synset` other than `word` that are eligible words themselves.
pub fn other_eligible_lemmas<'a>(
    synset: &'a Synset,
    word: &str,
    is_eligible: impl Fn(&str) -> bool,
) -> Vec<&'a str> {
    synset
        .lemmas
        .iter()
        .map(String::as_str)
        .filter(|l| *l != word && is_eligible(l))
        .collect()
}

/// A screened target: its sense and everything the distractor checks need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Offset of the target synset in data.noun: the word's first index.noun sense.
    pub offset: u32,
    /// The synset's gloss, the item's problem text: ASCII, at least three words, no cue of
    /// the word.
    pub definition: String,
    /// Raw lemmas of the target synset.
    pub synset_lemmas: Vec<String>,
    /// Lowercased lemmas of the target synset.
    pub synset_lower: BTreeSet<String>,
    /// Lowercased lemmas of direct hypernym/hyponym synsets (instance ones included).
    pub adjacent_lower: BTreeSet<String>,
    /// Tokens of the definition.
    pub definition_tokens: BTreeSet<String>,
}

/// Rule 2: screen `word` as a target. `forms` are its [`word_forms`]; `is_eligible` tells
/// whether a raw lemma is an eligible word (rule 1).
pub fn target_exclusion(
    word: &str,
    forms: &BTreeSet<String>,
    wn: &WordNet,
    is_eligible: impl Fn(&str) -> bool,
) -> Result<Target, &'static str> {
    let offset = *wn.senses(word).first().ok_or("no_noun_sense")?;
    let synset = wn.synset(offset).ok_or("no_noun_sense")?;
    if is_proper_name_sense(synset, word) {
        return Err("proper_name_sense");
    }
    if !other_eligible_lemmas(synset, word, is_eligible).is_empty() {
        return Err("multiple_eligible_lemmas");
    }
    let definition = synset.definition.as_str();
    if !definition.is_ascii() {
        return Err("definition_not_ascii");
    }
    if definition_too_short(definition) {
        return Err("definition_too_short");
    }
    if definition_cues_word(definition, word, forms) {
        return Err("definition_contains_target");
    }
    let adjacent_lower = synset
        .taxonomic_neighbours()
        .filter_map(|o| wn.synset(o))
        .flat_map(|s| s.lemmas.iter().map(|l| l.to_ascii_lowercase()))
        .collect();
    Ok(Target {
        offset,
        definition: definition.to_string(),
        synset_lemmas: synset.lemmas.clone(),
        synset_lower: synset
            .lemmas
            .iter()
            .map(|l| l.to_ascii_lowercase())
            .collect(),
        adjacent_lower,
        definition_tokens: definition_tokens(definition).into_iter().collect(),
    })
}

// ---------------------------------------------------------------------------------------
// Rule 3: distractor conflicts.

/// Rule 3: why `distractor` (with its `forms`) conflicts with the screened `target` word
/// (with `target_forms`), or `None`.
pub fn distractor_conflict(
    distractor: &str,
    distractor_forms: &BTreeSet<String>,
    target_word: &str,
    target_forms: &BTreeSet<String>,
    target: &Target,
    wn: &WordNet,
) -> Option<&'static str> {
    if target.synset_lower.contains(distractor) {
        Some("same_synset")
    } else if wn.senses(distractor).contains(&target.offset) {
        Some("sense_is_target_synset")
    } else if target.adjacent_lower.contains(distractor) {
        Some("adjacent_taxonomic")
    } else if target_forms.contains(distractor) || distractor_forms.contains(target_word) {
        Some("morphological_form")
    } else if distractor_forms
        .iter()
        .any(|f| target.definition_tokens.contains(f))
    {
        Some("distractor_in_definition")
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------
// Set-level helpers.

/// Zipf range (max − min) in hundredths.
pub fn zipf_range_cents(zipfs: &[i32]) -> i32 {
    let max = zipfs.iter().copied().max().unwrap_or(0);
    let min = zipfs.iter().copied().min().unwrap_or(0);
    max - min
}

/// Whether some letter occurs more than once.
pub fn has_repeated_letter(word: &str) -> bool {
    let mut seen = [false; 256];
    for b in word.bytes() {
        if seen[usize::from(b)] {
            return true;
        }
        seen[usize::from(b)] = true;
    }
    false
}

/// Frequency stratum: High at Zipf ≥ 4.0.
pub fn frequency_stratum(zipf_cents: i32) -> FrequencyStratum {
    if zipf_cents >= HIGH_ZIPF_CENTS {
        FrequencyStratum::High
    } else {
        FrequencyStratum::Low
    }
}

/// Cell of a gold word.
pub fn cell_of(word: &str, zipf_cents: i32) -> Cell {
    Cell {
        frequency_stratum: frequency_stratum(zipf_cents),
        repeated_letters: has_repeated_letter(word),
    }
}

/// `k` distinct indices below `n` (Floyd's algorithm; the set is uniform, the order is not
/// used). Requires `k <= n`.
pub(super) fn sample_distinct<const K: usize>(rng: &mut ChaCha8Rng, n: usize) -> [usize; K] {
    debug_assert!(K <= n);
    let mut out = [0usize; K];
    for (i, j) in ((n - K)..n).enumerate() {
        let t = rng.random_range(0..=j);
        out[i] = if out[..i].contains(&t) { j } else { t };
    }
    out
}

/// Fisher–Yates shuffle with `random_range` draws (stable across rand's slice helpers).
pub(super) fn shuffle<T>(rng: &mut ChaCha8Rng, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = rng.random_range(0..=i);
        v.swap(i, j);
    }
}

pub(super) fn rng_for(seed: u64, split: Split, length: usize, purpose: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(split.code() * 10_000 + purpose * 100 + length as u64);
    rng
}

pub(super) fn bump(map: &mut BTreeMap<String, u64>, key: &str) {
    *map.entry(key.to_string()).or_default() += 1;
}
