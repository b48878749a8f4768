//! Construction streams (rule 4): sampling, screening and ranking candidate sets per split
//! and length, and the quotas taken from them.

use std::collections::{BTreeMap, BTreeSet};

use rand::Rng;

use crate::wordnet::WordNet;

use super::rules::{
    bump, cell_of, distractor_conflict, rng_for, sample_distinct, zipf_range_cents,
};
use super::vocabulary::Vocabulary;
use super::{Cell, Split, CELLS, GROUPS, MAX_ZIPF_RANGE_CENTS, PER_GROUP};

/// One accepted candidate set: eight word indices (letter groups in sampling order) and
/// the position of the gold among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// Indices into [`Vocabulary::words`], distinct, `PER_GROUP` per letter group.
    pub words: [usize; GROUPS * PER_GROUP],
    /// Position of the gold in `words`.
    pub gold: usize,
    /// The gold's stratum cell.
    pub cell: Cell,
}

impl Accepted {
    /// The gold's index into [`Vocabulary::words`].
    pub fn gold_word(&self) -> usize {
        self.words[self.gold]
    }
}

/// Outcome of one (split, length) stream.
#[derive(Debug, Clone)]
pub struct Stream {
    /// Accepted sets in acceptance order; a set's position is its rank.
    pub accepted: Vec<Accepted>,
    /// Construction attempts made, rejected ones included.
    pub attempts: u64,
    /// Whether the stream stopped with some cell short of `per_cell`: at the attempt cap, or
    /// at once when the length has fewer than `GROUPS` letter groups.
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
                *next.entry(d).or_default() += 1;
                *counts.entry(d).or_default() += 1;
                short -= 1;
            }
        }
    }
    selected.sort_unstable();
    (selected, counts)
}
