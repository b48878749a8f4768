//! The lexical item-bank generator (SPEC §3, paper §3.2 and A.3).
//!
//! Targets are English nouns from WordNet 3.0 retrieved from their definition; candidates are
//! eight equal-length eligible nouns in four initial-letter groups of two. The generator is
//! deterministic from its seed and sources: every random draw comes from a ChaCha8 stream
//! chosen by (split, length, purpose), and nothing that affects output iterates a hash map.
//!
//! Rules, as implemented (each is a small function below with a unit test):
//!
//! 1. **Eligible word** ([`word_exclusion`]): an index.noun lemma that is a single word of ASCII
//!    lowercase letters `a`–`z`, length 3..=8, Zipf ≥ 2.5 (wordfreq `large_en`), with at least
//!    one noun sense that is not a proper-name sense ([`is_proper_name_sense`]: the synset has
//!    an `@i` instance-hypernym pointer, or the word appears capitalized among its lemmas).
//! 2. **Target** ([`target_exclusion`]): the target sense is the word's first (most frequent)
//!    index.noun sense. The word is excluded as a target when that sense is a proper-name sense;
//!    when another lemma of the synset is also an eligible word (one eligible lemma per sense);
//!    when the definition is not ASCII (items must be ASCII), is empty or has fewer than three
//!    words; or when the definition cues the target ([`definition_cues_word`]: a token equal to
//!    one of its [`word_forms`], or, for words of four or more letters, a token starting with
//!    the word).
//! 3. **Distractor conflicts** ([`distractor_conflict`], checked in this order): a lemma of the
//!    target synset; a noun sense of the distractor is the target synset; a lemma of a direct
//!    hypernym/hyponym synset of the target sense (instance pointers included); a morphological
//!    form of the target or vice versa (same forms as rule 2); and one added rule,
//!    `distractor_in_definition`: the target's definition mentions the distractor (a token
//!    equal to one of its forms), since a listed word named by the gloss competes with the
//!    target.
//! 4. **Construction** ([`run_stream`]): per split and length, sample four distinct initial
//!    letters (among letters with at least two eligible words of that length), two eligible
//!    words per letter, require the Zipf range over the eight ≤ 1.5, then draw the gold
//!    uniformly among the eight, screen it (rule 2) and the other seven against it (rule 3),
//!    then reject duplicate golds (already accepted in this stream, or selected in the other
//!    split). A conflicting distractor rejects the whole set (so the accepted distribution is
//!    the construction conditioned on all rules); each conflicting distractor is counted.
//!    Accepted sets form a ranked stream; cells are frequency stratum (Zipf ≥ 4.0) × repeated
//!    letters; quotas take the first ranks of each cell. Dev streams run first; test streams
//!    exclude the golds selected for dev. A stream stops when every cell is full or after
//!    `max_attempts_per_stream` attempts; a short cell then borrows, in a fixed order (same
//!    stratum other repetition class, other stratum same class, other stratum other class),
//!    the next unused ranks of the other cells of the same length ([`select_quota`]).
//! 5. **Items**: `lex-{split}-{L}-{NN}`, numbered in stream-rank order within a length; the
//!    eight candidates in a seeded display order; `synset_lemmas` holds all raw lemmas of the
//!    target synset (the target included).

use std::collections::{BTreeMap, BTreeSet};

use c2s_records::{
    geometry, validate_item, Domain, FrequencyStratum, Item, ItemError, ItemPolicy, LexicalMeta,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use thiserror::Error;

use crate::wordfreq::ZipfTable;
use crate::wordnet::{SourceError, Synset, WordNet};

/// Version of this generator, recorded in bank provenance. Bump on any output change.
pub const GENERATOR_VERSION: &str = "c2s-lexical/1";
pub const MIN_LENGTH: usize = 3;
pub const MAX_LENGTH: usize = 8;
/// Minimum Zipf frequency of every candidate, in hundredths.
pub const MIN_ZIPF_CENTS: i32 = 250;
/// Maximum Zipf range (max − min) over the eight candidates, in hundredths.
pub const MAX_ZIPF_RANGE_CENTS: i32 = 150;
/// Zipf split between the low and high frequency strata, in hundredths.
pub const HIGH_ZIPF_CENTS: i32 = 400;
/// Minimum number of words in a definition.
pub const MIN_DEFINITION_WORDS: usize = 3;
/// Candidates per item and initial-letter groups per candidate set.
pub const GROUPS: usize = 4;
pub const PER_GROUP: usize = 2;

/// Problems building a lexical bank.
#[derive(Debug, Error)]
pub enum BankError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("generated item failed validation: {0}")]
    Item(#[from] ItemError),
    #[error(
        "lexical {split} bank, length {length}: only {found} of {needed} items after \
         {attempts} attempts (cells: {cells})"
    )]
    Shortfall {
        split: Split,
        length: usize,
        needed: usize,
        found: usize,
        attempts: u64,
        cells: String,
    },
    #[error("invalid lexical configuration: {0}")]
    Config(String),
}

/// Development or formal test bank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    Dev,
    Test,
}

impl Split {
    pub fn as_str(self) -> &'static str {
        match self {
            Split::Dev => "dev",
            Split::Test => "test",
        }
    }

    fn code(self) -> u64 {
        match self {
            Split::Dev => 1,
            Split::Test => 2,
        }
    }
}

impl std::fmt::Display for Split {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stratum cell: frequency stratum of the gold × whether it repeats a letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Cell {
    pub frequency_stratum: FrequencyStratum,
    pub repeated_letters: bool,
}

/// The four cells in their fixed order.
pub const CELLS: [Cell; 4] = [
    Cell {
        frequency_stratum: FrequencyStratum::High,
        repeated_letters: false,
    },
    Cell {
        frequency_stratum: FrequencyStratum::High,
        repeated_letters: true,
    },
    Cell {
        frequency_stratum: FrequencyStratum::Low,
        repeated_letters: false,
    },
    Cell {
        frequency_stratum: FrequencyStratum::Low,
        repeated_letters: true,
    },
];

impl Cell {
    /// Cells that lend ranks to this one when it falls short, in the fixed order: same
    /// stratum with the other repetition class, other stratum with the same class, then the
    /// other stratum with the other class.
    pub fn donors(self) -> [Cell; 3] {
        let other = match self.frequency_stratum {
            FrequencyStratum::High => FrequencyStratum::Low,
            FrequencyStratum::Low => FrequencyStratum::High,
        };
        [
            Cell {
                frequency_stratum: self.frequency_stratum,
                repeated_letters: !self.repeated_letters,
            },
            Cell {
                frequency_stratum: other,
                repeated_letters: self.repeated_letters,
            },
            Cell {
                frequency_stratum: other,
                repeated_letters: !self.repeated_letters,
            },
        ]
    }

    fn label(self) -> String {
        format!(
            "{}/{}",
            match self.frequency_stratum {
                FrequencyStratum::High => "high",
                FrequencyStratum::Low => "low",
            },
            if self.repeated_letters {
                "repeated"
            } else {
                "distinct"
            }
        )
    }
}

/// Quotas and bounds of a build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LexicalConfig {
    pub min_length: usize,
    pub max_length: usize,
    /// Items per stratum cell per length in the test bank.
    pub test_per_cell: usize,
    /// Items per stratum cell per length in the dev bank.
    pub dev_per_cell: usize,
    /// Bound on construction attempts per (split, length) stream.
    pub max_attempts_per_stream: u64,
}

impl Default for LexicalConfig {
    /// The frozen protocol: lengths 3..8, 16 test and 2 dev items per cell and length.
    fn default() -> Self {
        LexicalConfig {
            min_length: MIN_LENGTH,
            max_length: MAX_LENGTH,
            test_per_cell: 16,
            dev_per_cell: 2,
            max_attempts_per_stream: 1_000_000,
        }
    }
}

/// Items per cell in one (split, length): quota, ranks available, ranks selected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CellCount {
    pub split: Split,
    pub length: usize,
    pub frequency_stratum: FrequencyStratum,
    pub repeated_letters: bool,
    pub quota: usize,
    /// Accepted sets of this cell in the stream (ranks available).
    pub available: usize,
    /// Items of this cell in the bank (differs from `quota` only after redistribution).
    pub selected: usize,
}

/// Attempts and acceptances of one (split, length) construction stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StreamStats {
    pub split: Split,
    pub length: usize,
    pub attempts: u64,
    pub accepted: usize,
    /// Accepted ranks not selected by the quotas.
    pub unused: usize,
    /// Whether the stream stopped at the attempt cap (some cell could not be filled).
    pub hit_attempt_cap: bool,
}

/// Sources and generator identity, for bank provenance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LexicalProvenance {
    pub generator_version: String,
    pub seed: u64,
    pub wordnet_version: String,
    pub wordnet_sha256: String,
    pub wordfreq_version: String,
    pub config: LexicalConfig,
}

/// Result of a lexical build.
#[derive(Debug, Clone, Serialize)]
pub struct LexicalBuild {
    pub test: Vec<Item>,
    pub dev: Vec<Item>,
    /// Exclusion counts by reason. `word.*`: index lemmas failing rule 1 (once per lemma);
    /// `target.*`: eligible words failing rule 2 (once per word); `set.*`: rejected
    /// construction attempts (per attempt; `set.distractor.*` per conflicting distractor).
    pub exclusions: BTreeMap<String, u64>,
    pub cell_counts: Vec<CellCount>,
    pub streams: Vec<StreamStats>,
    pub provenance: LexicalProvenance,
}

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
    pub offset: u32,
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
fn sample_distinct<const K: usize>(rng: &mut ChaCha8Rng, n: usize) -> [usize; K] {
    debug_assert!(K <= n);
    let mut out = [0usize; K];
    for (i, j) in ((n - K)..n).enumerate() {
        let t = rng.random_range(0..=j);
        out[i] = if out[..i].contains(&t) { j } else { t };
    }
    out
}

/// Fisher–Yates shuffle with `random_range` draws (stable across rand's slice helpers).
fn shuffle<T>(rng: &mut ChaCha8Rng, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = rng.random_range(0..=i);
        v.swap(i, j);
    }
}

fn rng_for(seed: u64, split: Split, length: usize, purpose: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(split.code() * 10_000 + purpose * 100 + length as u64);
    rng
}

fn bump(map: &mut BTreeMap<String, u64>, key: &str) {
    *map.entry(key.to_string()).or_default() += 1;
}

// ---------------------------------------------------------------------------------------
// Vocabulary.

/// One eligible word with its precomputed screening.
#[derive(Debug, Clone)]
pub struct Word {
    pub word: String,
    pub zipf_cents: i32,
    pub forms: BTreeSet<String>,
    /// Rule 2 outcome for this word as a target.
    pub target: Result<Target, &'static str>,
}

/// Eligible words (rule 1), screened as targets (rule 2), grouped by length and initial.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    /// Sorted by word.
    pub words: Vec<Word>,
    by_word: BTreeMap<String, usize>,
    /// length → initial-letter groups with at least two words (indices into `words`).
    groups: BTreeMap<usize, Vec<Vec<usize>>>,
}

impl Vocabulary {
    /// Apply rules 1 and 2 to every index.noun lemma; counts go to `exclusions`.
    pub fn build(
        wn: &WordNet,
        zipf: &ZipfTable,
        exclusions: &mut BTreeMap<String, u64>,
    ) -> Vocabulary {
        let mut eligible: BTreeMap<String, i32> = BTreeMap::new();
        for lemma in wn.lemmas() {
            let cents = (zipf.zipf(lemma) * 100.0).round() as i32;
            match word_exclusion(lemma, cents, wn) {
                Some(reason) => bump(exclusions, &format!("word.{reason}")),
                None => {
                    eligible.insert(lemma.to_string(), cents);
                }
            }
        }
        let mut words = Vec::with_capacity(eligible.len());
        for (word, &cents) in &eligible {
            let forms = word_forms(word, wn);
            let target = target_exclusion(word, &forms, wn, |l| eligible.contains_key(l));
            if let Err(reason) = &target {
                bump(exclusions, &format!("target.{reason}"));
            }
            words.push(Word {
                word: word.clone(),
                zipf_cents: cents,
                forms,
                target,
            });
        }
        let by_word = words
            .iter()
            .enumerate()
            .map(|(i, w)| (w.word.clone(), i))
            .collect();
        let mut by_letter: BTreeMap<(usize, u8), Vec<usize>> = BTreeMap::new();
        for (i, w) in words.iter().enumerate() {
            by_letter
                .entry((w.word.len(), w.word.as_bytes()[0]))
                .or_default()
                .push(i);
        }
        let mut groups: BTreeMap<usize, Vec<Vec<usize>>> = BTreeMap::new();
        for ((len, _), idx) in by_letter {
            if idx.len() >= PER_GROUP {
                groups.entry(len).or_default().push(idx);
            }
        }
        Vocabulary {
            words,
            by_word,
            groups,
        }
    }

    /// Whether `word` is eligible (rule 1).
    pub fn contains(&self, word: &str) -> bool {
        self.by_word.contains_key(word)
    }

    /// Index of an eligible word.
    pub fn index_of(&self, word: &str) -> Option<usize> {
        self.by_word.get(word).copied()
    }

    /// Eligible words of length `len` that pass rule 2, per cell.
    pub fn target_counts(&self, len: usize) -> BTreeMap<Cell, usize> {
        let mut out = BTreeMap::new();
        for w in self.words.iter().filter(|w| w.word.len() == len) {
            if w.target.is_ok() {
                *out.entry(cell_of(&w.word, w.zipf_cents)).or_default() += 1;
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------
// Construction streams.

/// One accepted candidate set: eight word indices (letter groups in sampling order) and
/// the position of the gold among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    pub words: [usize; GROUPS * PER_GROUP],
    pub gold: usize,
    pub cell: Cell,
}

impl Accepted {
    pub fn gold_word(&self) -> usize {
        self.words[self.gold]
    }
}

/// Outcome of one (split, length) stream.
#[derive(Debug, Clone)]
pub struct Stream {
    pub accepted: Vec<Accepted>,
    pub attempts: u64,
    pub hit_attempt_cap: bool,
}

/// Screen one constructed set with its sampled gold (rules 2 and 3); on rejection, return the
/// reasons to count.
pub fn screen_set(
    vocab: &Vocabulary,
    wn: &WordNet,
    words: &[usize],
    gold: usize,
) -> Result<(), Vec<String>> {
    let g = &vocab.words[words[gold]];
    let target = match &g.target {
        Ok(t) => t,
        Err(reason) => return Err(vec![format!("set.gold.{reason}")]),
    };
    let mut reasons = Vec::new();
    for (i, &d) in words.iter().enumerate() {
        if i == gold {
            continue;
        }
        let d = &vocab.words[d];
        if let Some(r) = distractor_conflict(&d.word, &d.forms, &g.word, &g.forms, target, wn) {
            reasons.push(format!("set.distractor.{r}"));
        }
    }
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(reasons)
    }
}

/// Run the construction stream of one (split, length) until every cell holds `per_cell`
/// accepted sets or `max_attempts` attempts were made. `taken` holds golds (word indices)
/// selected in the other split.
#[allow(clippy::too_many_arguments)]
pub fn run_stream(
    vocab: &Vocabulary,
    wn: &WordNet,
    seed: u64,
    split: Split,
    length: usize,
    per_cell: usize,
    max_attempts: u64,
    taken: &BTreeSet<usize>,
    exclusions: &mut BTreeMap<String, u64>,
) -> Stream {
    let mut rng = rng_for(seed, split, length, 0);
    let empty = Vec::new();
    let groups = vocab.groups.get(&length).unwrap_or(&empty);
    let mut accepted = Vec::new();
    let mut used: BTreeSet<usize> = BTreeSet::new();
    let mut filled: BTreeMap<Cell, usize> = BTreeMap::new();
    let full = |filled: &BTreeMap<Cell, usize>| {
        CELLS
            .iter()
            .all(|c| filled.get(c).copied().unwrap_or(0) >= per_cell)
    };
    let mut attempts = 0;
    if groups.len() < GROUPS {
        bump(exclusions, "set.too_few_letter_groups");
        return Stream {
            accepted,
            attempts,
            hit_attempt_cap: per_cell > 0,
        };
    }
    // Hot rejection counters stay local (no allocation per attempt).
    let (mut not_distinct, mut zipf_range) = (0u64, 0u64);
    let mut done = full(&filled);
    while !done && attempts < max_attempts {
        attempts += 1;
        let mut words = [0usize; GROUPS * PER_GROUP];
        let letters: [usize; GROUPS] = sample_distinct(&mut rng, groups.len());
        for (g, &letter) in letters.iter().enumerate() {
            let group = &groups[letter];
            let members: [usize; PER_GROUP] = sample_distinct(&mut rng, group.len());
            for (m, &w) in members.iter().enumerate() {
                words[g * PER_GROUP + m] = group[w];
            }
        }
        if (1..words.len()).any(|i| words[..i].contains(&words[i])) {
            not_distinct += 1;
            continue;
        }
        let zipfs = words.map(|w| vocab.words[w].zipf_cents);
        if zipf_range_cents(&zipfs) > MAX_ZIPF_RANGE_CENTS {
            zipf_range += 1;
            continue;
        }
        let gold = rng.random_range(0..words.len());
        if let Err(reasons) = screen_set(vocab, wn, &words, gold) {
            for r in reasons {
                bump(exclusions, &r);
            }
            continue;
        }
        let gw = words[gold];
        if used.contains(&gw) {
            bump(exclusions, "set.duplicate_gold");
            continue;
        }
        if taken.contains(&gw) {
            bump(exclusions, "set.gold_in_other_split");
            continue;
        }
        used.insert(gw);
        let w = &vocab.words[gw];
        let cell = cell_of(&w.word, w.zipf_cents);
        *filled.entry(cell).or_default() += 1;
        done = full(&filled);
        accepted.push(Accepted { words, gold, cell });
    }
    for (key, n) in [
        ("set.not_distinct", not_distinct),
        ("set.zipf_range", zipf_range),
    ] {
        if n > 0 {
            *exclusions.entry(key.to_string()).or_default() += n;
        }
    }
    Stream {
        accepted,
        attempts,
        hit_attempt_cap: !done,
    }
}

/// Frozen quota selection over a ranked stream: each cell takes its first `per_cell` ranks;
/// a short cell borrows the next unused ranks of its donors ([`Cell::donors`]). Returns the
/// selected ranks (ascending) and the selected count per cell.
pub fn select_quota(cells: &[Cell], per_cell: usize) -> (Vec<usize>, BTreeMap<Cell, usize>) {
    let mut ranks: BTreeMap<Cell, Vec<usize>> = BTreeMap::new();
    for (r, c) in cells.iter().enumerate() {
        ranks.entry(*c).or_default().push(r);
    }
    let mut next: BTreeMap<Cell, usize> = BTreeMap::new();
    let mut counts: BTreeMap<Cell, usize> = BTreeMap::new();
    let mut selected = Vec::new();
    for c in CELLS {
        let avail = ranks.get(&c).map_or(0, Vec::len);
        let take = avail.min(per_cell);
        selected.extend_from_slice(ranks.get(&c).map_or(&[][..], |v| &v[..take]));
        next.insert(c, take);
        counts.insert(c, take);
    }
    for c in CELLS {
        let mut short = per_cell.saturating_sub(counts[&c]);
        for d in c.donors() {
            while short > 0 {
                let Some(&r) = ranks.get(&d).and_then(|v| v.get(next[&d])) else {
                    break;
                };
                selected.push(r);
                *next.get_mut(&d).expect("every cell has a cursor") += 1;
                *counts.get_mut(&d).expect("every cell has a count") += 1;
                short -= 1;
            }
        }
    }
    selected.sort_unstable();
    (selected, counts)
}

// ---------------------------------------------------------------------------------------
// Items.

fn make_item(
    vocab: &Vocabulary,
    set: &Accepted,
    item_id: String,
    rng: &mut ChaCha8Rng,
) -> Result<Item, BankError> {
    let gold = &vocab.words[set.gold_word()];
    let target = gold.target.as_ref().map_err(|r| {
        BankError::Config(format!("accepted gold `{}` fails rule 2: {r}", gold.word))
    })?;
    let mut order: Vec<usize> = set.words.to_vec();
    shuffle(rng, &mut order);
    let candidates: Vec<String> = order.iter().map(|&w| vocab.words[w].word.clone()).collect();
    let candidate_zipf = order
        .iter()
        .map(|&w| f64::from(vocab.words[w].zipf_cents) / 100.0)
        .collect();
    let target_chars: Vec<char> = gold.word.chars().collect();
    let cand_chars: Vec<Vec<char>> = candidates.iter().map(|c| c.chars().collect()).collect();
    let geo = geometry(&target_chars, &cand_chars);
    let mut item = Item {
        item_id,
        domain: Domain::Lexical,
        problem: target.definition.clone(),
        target: gold.word.clone(),
        length: gold.word.len(),
        candidates,
        k_vector: geo.k_vector.clone(),
        partner_id: None,
        geometry: Some(geo),
        arithmetic: None,
        lexical: Some(LexicalMeta {
            synset: format!("{:08}-n", target.offset),
            zipf: f64::from(gold.zipf_cents) / 100.0,
            candidate_zipf,
            frequency_stratum: set.cell.frequency_stratum,
            repeated_letters: set.cell.repeated_letters,
            synset_lemmas: target.synset_lemmas.clone(),
        }),
        symbolic: None,
        semantic: None,
    };
    validate_item(&mut item, &ItemPolicy::default(), true)?;
    Ok(item)
}

/// Build one split over all lengths. Returns the items and the golds selected.
#[allow(clippy::too_many_arguments)]
fn build_split(
    vocab: &Vocabulary,
    wn: &WordNet,
    seed: u64,
    split: Split,
    per_cell: usize,
    config: &LexicalConfig,
    taken: &BTreeSet<usize>,
    build: &mut LexicalBuild,
) -> Result<BTreeSet<usize>, BankError> {
    let mut golds = BTreeSet::new();
    let mut items = Vec::new();
    for length in config.min_length..=config.max_length {
        let stream = run_stream(
            vocab,
            wn,
            seed,
            split,
            length,
            per_cell,
            config.max_attempts_per_stream,
            taken,
            &mut build.exclusions,
        );
        let cells: Vec<Cell> = stream.accepted.iter().map(|a| a.cell).collect();
        let (selected, counts) = select_quota(&cells, per_cell);
        let needed = per_cell * CELLS.len();
        for c in CELLS {
            build.cell_counts.push(CellCount {
                split,
                length,
                frequency_stratum: c.frequency_stratum,
                repeated_letters: c.repeated_letters,
                quota: per_cell,
                available: cells.iter().filter(|&&x| x == c).count(),
                selected: counts.get(&c).copied().unwrap_or(0),
            });
        }
        build.streams.push(StreamStats {
            split,
            length,
            attempts: stream.attempts,
            accepted: stream.accepted.len(),
            unused: stream.accepted.len() - selected.len(),
            hit_attempt_cap: stream.hit_attempt_cap,
        });
        if selected.len() < needed {
            let cells = CELLS
                .iter()
                .map(|c| {
                    format!(
                        "{} {}",
                        c.label(),
                        cells.iter().filter(|&&x| x == *c).count()
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            return Err(BankError::Shortfall {
                split,
                length,
                needed,
                found: selected.len(),
                attempts: stream.attempts,
                cells,
            });
        }
        let mut rng = rng_for(seed, split, length, 1);
        for (n, &r) in selected.iter().enumerate() {
            let set = &stream.accepted[r];
            golds.insert(set.gold_word());
            let id = format!("lex-{split}-{length}-{:02}", n + 1);
            items.push(make_item(vocab, set, id, &mut rng)?);
        }
    }
    match split {
        Split::Dev => build.dev = items,
        Split::Test => build.test = items,
    }
    Ok(golds)
}

/// Build the frozen lexical dev and test banks with the default protocol quotas.
pub fn build_lexical(wn: &WordNet, zipf: &ZipfTable, seed: u64) -> Result<LexicalBuild, BankError> {
    build_lexical_with(wn, zipf, seed, &LexicalConfig::default())
}

/// Build lexical banks with explicit quotas and bounds (tests use small ones).
pub fn build_lexical_with(
    wn: &WordNet,
    zipf: &ZipfTable,
    seed: u64,
    config: &LexicalConfig,
) -> Result<LexicalBuild, BankError> {
    if config.min_length < MIN_LENGTH
        || config.max_length > MAX_LENGTH
        || config.min_length > config.max_length
    {
        return Err(BankError::Config(format!(
            "lengths {}..={} outside {MIN_LENGTH}..={MAX_LENGTH}",
            config.min_length, config.max_length
        )));
    }
    let mut build = LexicalBuild {
        test: Vec::new(),
        dev: Vec::new(),
        exclusions: BTreeMap::new(),
        cell_counts: Vec::new(),
        streams: Vec::new(),
        provenance: LexicalProvenance {
            generator_version: GENERATOR_VERSION.into(),
            seed,
            wordnet_version: wn.version.clone(),
            wordnet_sha256: wn.sha256.clone(),
            wordfreq_version: zipf.version(),
            config: config.clone(),
        },
    };
    let vocab = Vocabulary::build(wn, zipf, &mut build.exclusions);
    let dev_golds = build_split(
        &vocab,
        wn,
        seed,
        Split::Dev,
        config.dev_per_cell,
        config,
        &BTreeSet::new(),
        &mut build,
    )?;
    build_split(
        &vocab,
        wn,
        seed,
        Split::Test,
        config.test_per_cell,
        config,
        &dev_golds,
        &mut build,
    )?;
    Ok(build)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    /// A tiny WordNet written in the real file format.
    #[derive(Default)]
    struct Fixture {
        data: String,
        index: BTreeMap<String, Vec<u32>>,
        exc: String,
        next: u32,
    }

    impl Fixture {
        fn synset(&mut self, lemmas: &[&str], pointers: &[(&str, u32)], gloss: &str) -> u32 {
            self.next += 1;
            let offset = self.next;
            let mut line = format!("{offset:08} 03 n {:02x}", lemmas.len());
            for l in lemmas {
                write!(line, " {l} 0").unwrap();
            }
            write!(line, " {:03}", pointers.len()).unwrap();
            for (sym, off) in pointers {
                write!(line, " {sym} {off:08} n 0000").unwrap();
            }
            writeln!(line, " | {gloss}  ").unwrap();
            self.data.push_str(&line);
            for l in lemmas {
                self.index
                    .entry(l.to_ascii_lowercase())
                    .or_default()
                    .push(offset);
            }
            offset
        }

        fn wn(&self) -> WordNet {
            let mut index = String::new();
            for (lemma, offs) in &self.index {
                write!(index, "{lemma} n {} 0 {} 0", offs.len(), offs.len()).unwrap();
                for o in offs {
                    write!(index, " {o:08}").unwrap();
                }
                index.push_str("  \n");
            }
            WordNet::from_texts(&self.data, &index, &self.exc).unwrap()
        }
    }

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn screen(wn: &WordNet, word: &str, eligible: &[&str]) -> Result<Target, &'static str> {
        target_exclusion(word, &word_forms(word, wn), wn, |l| eligible.contains(&l))
    }

    #[test]
    fn rule1_word_shape() {
        assert!(is_single_word("dog"));
        for w in ["hot_dog", "hot dog", "x-ray", "b52"] {
            assert!(!is_single_word(w), "{w}");
        }
        assert!(is_ascii_lowercase_word("dog"));
        for w in ["Dog", "caf\u{e9}", "o'clock", "a.m", ""] {
            assert!(!is_ascii_lowercase_word(w), "{w}");
        }
        assert!(!length_in_range("ox"));
        assert!(length_in_range("ant"));
        assert!(length_in_range("aardvark"));
        assert!(!length_in_range("aardvarks"));
        assert!(zipf_sufficient(250));
        assert!(!zipf_sufficient(249));
    }

    #[test]
    fn rule1_proper_name_senses_and_exclusion_reasons() {
        let mut fx = Fixture::default();
        let planet = fx.synset(&["planet"], &[], "a celestial body orbiting a star");
        let mars = fx.synset(
            &["Mars", "Red_Planet"],
            &[("@i", planet)],
            "a reddish planet",
        );
        let month = fx.synset(&["March", "Mar"], &[], "the month following February");
        let walk = fx.synset(&["march"], &[], "a steady walk of soldiers");
        let wn = fx.wn();
        assert!(is_proper_name_sense(wn.synset(mars).unwrap(), "mars"));
        assert!(is_proper_name_sense(wn.synset(month).unwrap(), "march"));
        assert!(!is_proper_name_sense(wn.synset(walk).unwrap(), "march"));
        assert!(has_common_noun_sense("march", &wn));
        assert!(!has_common_noun_sense("mars", &wn));
        assert_eq!(word_exclusion("march", 300, &wn), None);
        assert_eq!(
            word_exclusion("mars", 300, &wn),
            Some("only_proper_name_senses")
        );
        assert_eq!(word_exclusion("planet", 249, &wn), Some("zipf_below_2.5"));
        assert_eq!(
            word_exclusion("red_planet", 300, &wn),
            Some("not_single_word")
        );
        assert_eq!(
            word_exclusion("planetoids", 300, &wn),
            Some("length_out_of_range")
        );
        assert_eq!(word_exclusion("pl.", 300, &wn), Some("not_ascii_lowercase"));
    }

    #[test]
    fn rule2_target_sense_is_first_and_not_proper() {
        let mut fx = Fixture::default();
        fx.synset(&["March", "Mar"], &[], "the month following February");
        fx.synset(&["march"], &[], "a steady walk of soldiers");
        fx.synset(&["kettle"], &[], "a metal pot for stewing or boiling");
        fx.synset(&["kettle"], &[], "a large hemispherical brass drum");
        let wn = fx.wn();
        assert_eq!(screen(&wn, "march", &["march"]), Err("proper_name_sense"));
        let t = screen(&wn, "kettle", &["kettle"]).unwrap();
        assert_eq!(t.definition, "a metal pot for stewing or boiling");
        assert_eq!(t.offset, 3);
    }

    #[test]
    fn rule2_one_eligible_lemma_per_sense() {
        let mut fx = Fixture::default();
        let car = fx.synset(
            &["car", "auto", "automobile", "motorcar"],
            &[],
            "a motor vehicle with four wheels",
        );
        let wn = fx.wn();
        // `automobile` is too long, so only `auto` competes with `car`.
        let s = wn.synset(car).unwrap();
        let eligible = |l: &str| ["car", "auto", "motorcar"].contains(&l);
        assert_eq!(
            other_eligible_lemmas(s, "car", eligible),
            vec!["auto", "motorcar"]
        );
        assert_eq!(
            screen(&wn, "car", &["car", "auto"]),
            Err("multiple_eligible_lemmas")
        );
        assert!(screen(&wn, "car", &["car"]).is_ok());
    }

    #[test]
    fn rule2_forms_and_definition_cues() {
        let mut fx = Fixture {
            exc: "mice mouse\nmen man\n".into(),
            ..Default::default()
        };
        fx.synset(&["mouse"], &[], "a small rodent; \"the mouse ran\"");
        let wn = fx.wn();
        assert_eq!(
            word_forms("mouse", &wn),
            set(&["mice", "mouse", "mouse's", "mousees", "mouses"])
        );
        assert!(word_forms("berry", &wn).contains("berries"));
        assert!(word_forms("men", &wn).contains("man"));
        assert_eq!(
            definition_tokens("Dogs' bones, a dog's-life (x-ray)"),
            vec!["dogs", "bones", "a", "dog's", "life", "x", "ray"]
        );
        let cues = |def: &str, w: &str| definition_cues_word(def, w, &word_forms(w, &wn));
        assert!(cues("a young Dog", "dog"));
        assert!(cues("a pack of dogs", "dog"));
        assert!(cues("the dog's tail", "dog"));
        assert!(cues("dogs' tails", "dog"));
        assert!(cues("boxes of things", "box"));
        assert!(cues("fruit of the berries", "berry"));
        assert!(cues("small mice", "mouse"));
        assert!(cues("a household item", "house"));
        // Prefix matching only for words of four letters or more.
        assert!(!cues("a category", "cat"));
        assert!(!cues("a feline pet", "dog"));
        assert!(definition_too_short("a rodent"));
        assert!(definition_too_short(""));
        assert!(!definition_too_short("a small rodent"));
    }

    #[test]
    fn rule2_screening_reasons() {
        let mut fx = Fixture::default();
        fx.synset(&["rodent"], &[], "rodent");
        fx.synset(
            &["cattle"],
            &[],
            "domesticated bovine animals kept as cattle",
        );
        fx.synset(&["kettle"], &[], "a metal pot for boiling");
        let wn = fx.wn();
        assert_eq!(screen(&wn, "rodent", &[]), Err("definition_too_short"));
        assert_eq!(
            screen(&wn, "cattle", &[]),
            Err("definition_contains_target")
        );
        assert!(screen(&wn, "kettle", &[]).is_ok());
    }

    #[test]
    fn rule3_distractor_conflicts() {
        let mut fx = Fixture {
            exc: "geese goose\n".into(),
            ..Default::default()
        };
        // Offsets: 1 bird, 2 goose, 3 gander (pointers may refer forward).
        let bird = fx.synset(
            &["bird"],
            &[("~", 2)],
            "a warm-blooded egg-laying vertebrate",
        );
        let goose = fx.synset(
            &["goose"],
            &[("@", bird), ("~", 3)],
            "web-footed aquatic bird with a long neck",
        );
        fx.synset(&["gander"], &[("@", goose)], "mature male goose");
        fx.synset(&["honker", "goose"], &[], "a slang word for a nose");
        fx.synset(
            &["swan"],
            &[],
            "stately heavy-bodied aquatic bird with long neck",
        );
        fx.synset(&["geese"], &[], "an unrelated sense invented for this test");
        fx.synset(&["pencil"], &[], "a writing implement with graphite");
        fx.synset(
            &["neck"],
            &[],
            "the part of an organism connecting head and body",
        );
        let wn = fx.wn();
        let t = screen(&wn, "goose", &["goose"]).unwrap();
        let check = |d: &str| {
            distractor_conflict(
                d,
                &word_forms(d, &wn),
                "goose",
                &word_forms("goose", &wn),
                &t,
                &wn,
            )
        };
        // Synthetic synset that lists a distractor among the target's lemmas.
        let mut t2 = t.clone();
        t2.synset_lower.insert("swan".into());
        assert_eq!(
            distractor_conflict(
                "swan",
                &word_forms("swan", &wn),
                "goose",
                &word_forms("goose", &wn),
                &t2,
                &wn
            ),
            Some("same_synset")
        );
        assert_eq!(check("bird"), Some("adjacent_taxonomic"));
        assert_eq!(check("gander"), Some("adjacent_taxonomic"));
        assert_eq!(check("geese"), Some("morphological_form"));
        assert_eq!(check("neck"), Some("distractor_in_definition"));
        assert_eq!(check("swan"), None);
        assert_eq!(check("pencil"), None);
        // `honker` has no sense in the goose synset; a word with one does.
        assert_eq!(check("honker"), None);
        let mut t3 = t.clone();
        t3.synset_lower.clear();
        let d = "goose";
        assert_eq!(
            distractor_conflict(d, &BTreeSet::new(), "x", &BTreeSet::new(), &t3, &wn),
            Some("sense_is_target_synset")
        );
    }

    #[test]
    fn set_helpers() {
        assert_eq!(zipf_range_cents(&[250, 400, 300]), 150);
        assert!(has_repeated_letter("apple"));
        assert!(!has_repeated_letter("chair"));
        assert_eq!(frequency_stratum(400), FrequencyStratum::High);
        assert_eq!(frequency_stratum(399), FrequencyStratum::Low);
        let c = cell_of("egg", 450);
        assert_eq!(c.frequency_stratum, FrequencyStratum::High);
        assert!(c.repeated_letters);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..200 {
            let s: [usize; 4] = sample_distinct(&mut rng, 5);
            assert_eq!(s.iter().collect::<BTreeSet<_>>().len(), 4);
            assert!(s.iter().all(|&i| i < 5));
        }
    }

    #[test]
    fn quota_takes_first_ranks_and_redistributes() {
        let [hd, hr, ld, lr] = CELLS;
        let stream = vec![ld, hd, ld, hr, ld, hd, lr, ld, hd, lr, lr];
        let (sel, counts) = select_quota(&stream, 2);
        assert_eq!(sel, vec![0, 1, 2, 3, 5, 6, 8, 9]);
        assert_eq!(counts[&hr], 1);
        assert_eq!(counts[&hd], 3);
        assert_eq!(counts[&ld], 2);
        assert_eq!(counts[&lr], 2);
        assert_eq!(hd.donors(), [hr, ld, lr]);
        assert_eq!(lr.donors(), [ld, hr, hd]);
    }

    /// A synthetic vocabulary large enough for a small two-length build.
    fn synthetic() -> (WordNet, ZipfTable) {
        let mut fx = Fixture::default();
        let mut zipf = Vec::new();
        let tails = "qrstuvwxyz".as_bytes();
        for len in 3..=4usize {
            for first in b'a'..=b'h' {
                // Eight words with distinct letters (consecutive tail letters) and four
                // with a doubled letter; even indices are high-frequency, odd ones low.
                for n in 0..12usize {
                    let mut w = String::from(first as char);
                    for j in 0..len - 1 {
                        let k = if n < 8 {
                            n + j
                        } else {
                            (n - 8) + j.saturating_sub(1)
                        };
                        w.push(tails[k % 10] as char);
                    }
                    let gloss = format!("a synthetic thing of kind {len}{first}{n}");
                    fx.synset(&[&w], &[], &gloss);
                    zipf.push((w, if n % 2 == 0 { 4.5 } else { 3.5 }));
                }
            }
        }
        // Noise that rule 1 must exclude.
        fx.synset(&["Paris"], &[], "the capital of France");
        fx.synset(&["hot_dog"], &[], "a sausage in a bun");
        zipf.push(("paris".into(), 5.0));
        let z = ZipfTable::from_pairs(zipf.iter().map(|(w, z)| (w.as_str(), *z)));
        (fx.wn(), z)
    }

    fn small() -> LexicalConfig {
        LexicalConfig {
            min_length: 3,
            max_length: 4,
            test_per_cell: 2,
            dev_per_cell: 1,
            max_attempts_per_stream: 200_000,
        }
    }

    #[test]
    fn synthetic_build_is_valid_balanced_and_deterministic() {
        let (wn, z) = synthetic();
        let b = build_lexical_with(&wn, &z, 7, &small()).unwrap();
        assert_eq!(b.test.len(), 16);
        assert_eq!(b.dev.len(), 8);
        assert_eq!(b.exclusions["word.only_proper_name_senses"], 1);
        assert_eq!(b.exclusions["word.not_single_word"], 1);
        let test_golds: BTreeSet<&str> = b.test.iter().map(|i| i.target.as_str()).collect();
        let dev_golds: BTreeSet<&str> = b.dev.iter().map(|i| i.target.as_str()).collect();
        assert_eq!(test_golds.len(), 16);
        assert_eq!(dev_golds.len(), 8);
        assert!(test_golds.is_disjoint(&dev_golds));
        for item in b.test.iter().chain(&b.dev) {
            let mut copy = item.clone();
            validate_item(&mut copy, &ItemPolicy::default(), true).unwrap();
            assert_eq!(copy, *item);
            assert_eq!(item.k_vector[0], 8);
            assert_eq!(item.k_vector[1], 2);
            let meta = item.lexical.as_ref().unwrap();
            assert_eq!(meta.candidate_zipf.len(), 8);
            assert_eq!(meta.synset_lemmas, vec![item.target.clone()]);
            assert!(item.problem.starts_with("a synthetic thing"));
        }
        assert_eq!(b.test[0].item_id, "lex-test-3-01");
        assert_eq!(b.dev[7].item_id, "lex-dev-4-04");
        for c in &b.cell_counts {
            assert_eq!(c.selected, c.quota, "{c:?}");
        }
        let again = build_lexical_with(&wn, &z, 7, &small()).unwrap();
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            serde_json::to_string(&again).unwrap()
        );
        let other = build_lexical_with(&wn, &z, 8, &small()).unwrap();
        assert_ne!(
            serde_json::to_string(&b.test).unwrap(),
            serde_json::to_string(&other.test).unwrap()
        );
    }

    #[test]
    fn impossible_quota_is_a_clear_error() {
        let (wn, z) = synthetic();
        let mut cfg = small();
        cfg.test_per_cell = 50;
        cfg.max_attempts_per_stream = 20_000;
        let err = build_lexical_with(&wn, &z, 7, &cfg).unwrap_err();
        assert!(
            matches!(
                err,
                BankError::Shortfall {
                    split: Split::Test,
                    length: 3,
                    ..
                }
            ),
            "{err}"
        );
        cfg.min_length = 2;
        assert!(matches!(
            build_lexical_with(&wn, &z, 7, &cfg),
            Err(BankError::Config(_))
        ));
    }

    #[test]
    fn real_sources_build() {
        let wn_dir = std::path::Path::new("/usr/share/wordnet");
        let wf = std::path::PathBuf::from(
            // Cargo's runtime value first: a target directory shared with a checkout at another
            // path may hold this build with that path compiled in.
            std::env::var_os("CARGO_MANIFEST_DIR")
                .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
        )
        .join("../.tools/wordfreq/large_en.msgpack.gz");
        if !wn_dir.join("data.noun").exists() || !wf.exists() {
            eprintln!(
                "skipping real_sources_build: need {} and {}",
                wn_dir.display(),
                wf.display()
            );
            return;
        }
        let t0 = std::time::Instant::now();
        let wn = WordNet::load(wn_dir).unwrap();
        let z = ZipfTable::load(&wf).unwrap();
        let t_load = t0.elapsed();
        let b = build_lexical(&wn, &z, 20_261_016).unwrap();
        let t_build = t0.elapsed() - t_load;
        eprintln!("load {t_load:?}, build {t_build:?}");
        eprintln!("exclusions: {:#?}", b.exclusions);
        for c in &b.cell_counts {
            eprintln!(
                "{} L{} {:?}/{} quota {} available {} selected {}",
                c.split,
                c.length,
                c.frequency_stratum,
                if c.repeated_letters { "rep" } else { "dist" },
                c.quota,
                c.available,
                c.selected
            );
        }
        for s in &b.streams {
            eprintln!("{s:?}");
        }
        assert_eq!(b.test.len(), 384);
        assert_eq!(b.dev.len(), 48);
        for len in 3..=8 {
            assert_eq!(b.test.iter().filter(|i| i.length == len).count(), 64);
            assert_eq!(b.dev.iter().filter(|i| i.length == len).count(), 8);
        }
        let test_golds: BTreeSet<&str> = b.test.iter().map(|i| i.target.as_str()).collect();
        let dev_golds: BTreeSet<&str> = b.dev.iter().map(|i| i.target.as_str()).collect();
        assert_eq!(test_golds.len(), 384);
        assert_eq!(dev_golds.len(), 48);
        assert!(test_golds.is_disjoint(&dev_golds));
        for item in b.test.iter().chain(&b.dev) {
            let mut copy = item.clone();
            validate_item(&mut copy, &ItemPolicy::default(), true).unwrap();
            assert_eq!(item.k_vector[0], 8);
            assert_eq!(item.k_vector[1], 2);
        }
        let again = build_lexical(&wn, &z, 20_261_016).unwrap();
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            serde_json::to_string(&again).unwrap()
        );
    }
}
