//! Vocabulary: the eligible words (rule 1), screened as targets (rule 2), grouped by length
//! and initial letter.

use std::collections::{BTreeMap, BTreeSet};

use crate::wordfreq::ZipfTable;
use crate::wordnet::WordNet;

use super::rules::{bump, cell_of, target_exclusion, word_exclusion, word_forms, Target};
use super::{Cell, PER_GROUP};

/// One eligible word with its precomputed screening.
#[derive(Debug, Clone)]
pub struct Word {
    /// The index.noun lemma, passing rule 1.
    pub word: String,
    /// Zipf frequency from wordfreq, in hundredths (rounded).
    pub zipf_cents: i32,
    /// Its [`word_forms`], for the cue and conflict checks.
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
    pub(super) groups: BTreeMap<usize, Vec<Vec<usize>>>,
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
