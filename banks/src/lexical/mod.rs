//! The lexical item-bank generator (paper §3.2 and A.3).
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

use std::collections::BTreeMap;

use c2s_records::{FrequencyStratum, Item, ItemError};
use serde::Serialize;
use thiserror::Error;

mod items;
mod rules;
mod streams;
mod vocabulary;

pub use items::{build_lexical, build_lexical_with};
pub use rules::{
    cell_of, definition_cues_word, definition_tokens, definition_too_short, distractor_conflict,
    frequency_stratum, has_common_noun_sense, has_repeated_letter, is_ascii_lowercase_word,
    is_proper_name_sense, is_single_word, length_in_range, other_eligible_lemmas, target_exclusion,
    word_exclusion, word_forms, zipf_range_cents, zipf_sufficient, Target,
};
pub use streams::{run_stream, screen_set, select_quota, Accepted, Stream};
pub use vocabulary::{Vocabulary, Word};

/// Version of this generator, recorded in bank provenance. Bump on any output change.
pub const GENERATOR_VERSION: &str = "c2s-lexical/1";
/// Shortest eligible word, in letters (rule 1); a build may not start below it.
pub const MIN_LENGTH: usize = 3;
/// Longest eligible word, in letters (rule 1); a build may not go above it.
pub const MAX_LENGTH: usize = 8;
/// Minimum Zipf frequency of every candidate, in hundredths.
pub const MIN_ZIPF_CENTS: i32 = 250;
/// Maximum Zipf range (max − min) over the eight candidates, in hundredths.
pub const MAX_ZIPF_RANGE_CENTS: i32 = 150;
/// Zipf split between the low and high frequency strata, in hundredths.
pub const HIGH_ZIPF_CENTS: i32 = 400;
/// Minimum number of words in a definition.
pub const MIN_DEFINITION_WORDS: usize = 3;
/// Initial-letter groups per candidate set, each of a distinct letter.
pub const GROUPS: usize = 4;
/// Candidates per initial-letter group; an item has `GROUPS * PER_GROUP` = 8 candidates.
pub const PER_GROUP: usize = 2;

/// Problems building a lexical bank.
#[derive(Debug, Error)]
pub enum BankError {
    /// A generated item failed [`c2s_records::validate_item`].
    #[error("generated item failed validation: {0}")]
    Item(#[from] ItemError),
    /// A (split, length) stream yielded fewer sets than its quotas need, borrowing included.
    #[error(
        "lexical {split} bank, length {length}: only {found} of {needed} items after \
         {attempts} attempts (cells: {cells})"
    )]
    Shortfall {
        /// The split being built.
        split: Split,
        /// Word length of the stream, in letters.
        length: usize,
        /// Items the quotas ask for: per-cell quota × the four cells.
        needed: usize,
        /// Items the quota selection found.
        found: usize,
        /// Construction attempts the stream made.
        attempts: u64,
        /// Accepted sets per cell, `<stratum>/<repetition> <count>` joined by commas.
        cells: String,
    },
    /// Lengths outside `MIN_LENGTH..=MAX_LENGTH` or reversed, or an accepted gold that fails
    /// rule 2.
    #[error("invalid lexical configuration: {0}")]
    Config(String),
}

/// Development or formal test bank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// The development bank, built first.
    Dev,
    /// The formal test bank; its golds exclude those selected for dev.
    Test,
}

impl Split {
    /// The lowercase name used in item ids and serialization (`dev`, `test`).
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
    /// Stratum of the gold's Zipf frequency: High at Zipf ≥ 4.0.
    pub frequency_stratum: FrequencyStratum,
    /// Whether some letter occurs more than once in the gold.
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
    /// Shortest word length built, in letters; at least [`MIN_LENGTH`].
    pub min_length: usize,
    /// Longest word length built, in letters; at most [`MAX_LENGTH`].
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
    /// The split of the stream.
    pub split: Split,
    /// Word length of the stream, in letters.
    pub length: usize,
    /// The cell's frequency stratum.
    pub frequency_stratum: FrequencyStratum,
    /// The cell's repetition class.
    pub repeated_letters: bool,
    /// Items the cell asks for: the split's per-cell quota.
    pub quota: usize,
    /// Accepted sets of this cell in the stream (ranks available).
    pub available: usize,
    /// Items of this cell in the bank (differs from `quota` only after redistribution).
    pub selected: usize,
}

/// Attempts and acceptances of one (split, length) construction stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StreamStats {
    /// The split of the stream.
    pub split: Split,
    /// Word length of the stream, in letters.
    pub length: usize,
    /// Construction attempts made, rejected ones included.
    pub attempts: u64,
    /// Candidate sets accepted (the stream's ranks).
    pub accepted: usize,
    /// Accepted ranks not selected by the quotas.
    pub unused: usize,
    /// Whether the stream stopped at the attempt cap (some cell could not be filled).
    pub hit_attempt_cap: bool,
}

/// Sources and generator identity, for bank provenance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LexicalProvenance {
    /// [`GENERATOR_VERSION`] of the generator that built the banks.
    pub generator_version: String,
    /// Seed of every construction and display-order stream.
    pub seed: u64,
    /// WordNet version from the license header (`3.0`), or `unknown`.
    pub wordnet_version: String,
    /// SHA-256 over data.noun, index.noun and noun.exc, in that order.
    pub wordnet_sha256: String,
    /// The wordfreq list: file name, format, format version and SHA-256.
    pub wordfreq_version: String,
    /// Quotas and bounds of the build.
    pub config: LexicalConfig,
}

/// Result of a lexical build.
#[derive(Debug, Clone, Serialize)]
pub struct LexicalBuild {
    /// Test items, by length, each length in stream-rank order.
    pub test: Vec<Item>,
    /// Development items, by length, each length in stream-rank order.
    pub dev: Vec<Item>,
    /// Exclusion counts by reason. `word.*`: index lemmas failing rule 1 (once per lemma);
    /// `target.*`: eligible words failing rule 2 (once per word); `set.*`: rejected
    /// construction attempts (per attempt; `set.distractor.*` per conflicting distractor).
    pub exclusions: BTreeMap<String, u64>,
    /// The four cells (in [`CELLS`] order) of every (split, length), dev first.
    pub cell_counts: Vec<CellCount>,
    /// One entry per (split, length) stream, dev first, lengths ascending.
    pub streams: Vec<StreamStats>,
    /// Sources and generator identity.
    pub provenance: LexicalProvenance,
}

#[cfg(test)]
mod tests;
