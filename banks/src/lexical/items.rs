//! Items (rule 5): the items of each split built from its streams, and the bank build.

use std::collections::{BTreeMap, BTreeSet};

use c2s_records::{geometry, validate_item, Domain, Item, ItemPolicy, LexicalMeta};
use rand_chacha::ChaCha8Rng;

use crate::wordfreq::ZipfTable;
use crate::wordnet::WordNet;

use super::rules::{rng_for, shuffle};
use super::streams::{run_stream, select_quota, Accepted};
use super::vocabulary::Vocabulary;
use super::{
    BankError, Cell, CellCount, LexicalBuild, LexicalConfig, LexicalProvenance, Split, StreamStats,
    CELLS, GENERATOR_VERSION, MAX_LENGTH, MIN_LENGTH,
};

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
