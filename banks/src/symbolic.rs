//! The symbolic panels: the isomorphic COPY/REVERSE panel (A.5, B.4), the twelve-character
//! crossed-factor panel (D.7) and the symbolic bases of the single-position readout panel
//! (A.5, B.5). All are generated from a seed, frozen as JSONL under `data/banks/` with their
//! own provenance file, and need no external source.
//!
//! COPY/REVERSE (A.5): "The isomorphic panel uses 20 bases per length, stratified by
//! repetition and early/late uniqueness. COPY/REVERSE and digit/letter encodings create four
//! presentations per base, with shared geometry and matched order. The main bijection maps
//! digits 0 through 9 to letters a through j." B.4: "COPY/REVERSE uses 120 shared source bases.
//! Mapping digits 0–9 to letters a–j preserves strings, candidate geometry and ten local
//! choices."
//!
//! A base is a gold digit string T of length L with a four-by-two candidate set (K(0) = 8,
//! K(1) = 2, as the main panels). The COPY presentation shows T and asks for T; the REVERSE
//! presentation shows T reversed and asks for its reversal, T again: the two operations share
//! the target, the candidates and their display order, so geometry and order match exactly.
//! The letter presentations are the images of the digit ones under 0–9 → a–j. Strata:
//! repetition (T repeats a symbol or not) × uniqueness (the gold's first-symbol partner
//! differs at position 2, "early", or only at position L, "late"), five bases per stratum and
//! length.
//!
//! Twelve characters (D.7): "Thirty-two previously unused twelve-character sources over a–j
//! are reversed. Each source has two eight-candidate presentations with the same four-by-two
//! branching and Hamming geometry: branches occur at positions 2/3 or 10/11. Distractor
//! symbols are sampled from a–j; all remaining positions agree across candidates. … Seed
//! 20261011 freezes items".
//!
//! The readout panel's symbolic bases (A.5, B.5): "A second mapping to etaoinshrd uses twelve
//! fixed bases" (A.5, in the isomorphic panel's paragraph, after "The main bijection maps
//! digits 0 through 9 to letters a through j"), and "The single position panel has 120 natural
//! parents and twelve symbolic COPY bases with two encodings: 144 records, 132 independent
//! clusters." Read here as twelve fixed bases *of the isomorphic panel* (the paragraph's bases;
//! nothing calls them new, where D.7 says "previously unused"), two per length, one early and
//! one late, the early one repeating a symbol at even L and the late one at odd L (three bases
//! per repetition × uniqueness stratum), each the first of its cell by the rank of
//! [`crate::panels`] (SHA-256 of (seed 20261005, "binding-symbolic", base id)), each presented
//! under COPY in the two
//! letter encodings: the main mapping's a–j and the second mapping's etaoinshrd
//! (0 → e, 1 → t, 2 → a, 3 → o, 4 → i, 5 → n, 6 → s, 7 → h, 8 → r, 9 → d). Both presentations
//! of a base keep its target geometry, its candidates (under the mapping), their display
//! order and its `base_id`, the unit of clustering: 24 records, 12 clusters, beside the 120
//! natural parents.
//!
//! Where the paper is silent (docs/protocol-choices.md): the
//! problem wording (it names the operations, not their text), that symbolic strings may start
//! with any symbol (they are not numbers), the COPY/REVERSE seed (the bank seed 20261005;
//! A.6 gives 20261005 as the inference seed, and D.7 its own 20261011), and how the twelve
//! readout bases were chosen.

use std::collections::{BTreeMap, BTreeSet};

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use c2s_records::{
    validate_item, Domain, Item, ItemError, ItemPolicy, Operation, Placement, SymbolicMeta,
    SymbolicPanel,
};

/// Why the symbolic banks could not be built or written.
#[derive(Debug, thiserror::Error)]
pub enum SymbolicError {
    /// A COPY/REVERSE stratum found no new base in 100,000 draws.
    #[error("COPY/REVERSE L{length}: no more bases for repeated={repeated}")]
    NoMoreBases {
        /// The gold length.
        length: usize,
        /// Whether the stratum's golds repeat a symbol.
        repeated: bool,
        /// The stratum's uniqueness placement.
        placement: Placement,
    },
    /// No COPY/REVERSE base falls in a (length, repetition, uniqueness) cell of the readout panel.
    #[error("binding: no base of length {length}, repeated={repeated}, {}", placement.as_str())]
    NoBindingBase {
        /// The gold length.
        length: usize,
        /// Whether the cell's golds repeat a symbol.
        repeated: bool,
        /// The cell's uniqueness placement.
        placement: Placement,
    },
    /// A readout base has no COPY presentation in digits among the COPY/REVERSE items.
    #[error("binding: no digit COPY presentation of base {base_id}")]
    NoCopyPresentation {
        /// The base id.
        base_id: String,
    },
    /// A generated item failed [`c2s_records::validate_item`].
    #[error(transparent)]
    Item(#[from] ItemError),
    /// A bank directory or file could not be created or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The directory or file.
        path: std::path::PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Version of the symbolic generators; bump when any output byte changes.
pub const SYMBOLIC_GENERATOR_VERSION: &str = "choice2seq-symbolic/2";
/// COPY/REVERSE seed (the bank seed; the paper states none for this panel).
pub const COPY_REVERSE_SEED: u64 = 20261005;
/// D.7: "Seed 20261011 freezes items".
pub const TWELVE_SEED: u64 = 20261011;
/// Bases per (length, repetition, uniqueness) stratum: 20 per length over four strata.
pub const COPY_REVERSE_PER_STRATUM: usize = 5;
/// D.7: thirty-two sources.
pub const TWELVE_SOURCES: usize = 32;
/// D.7: twelve characters.
pub const TWELVE_LENGTH: usize = 12;

/// Seed of the draw of the readout panel's twelve bases: the panel seed of
/// [`crate::panels::PANEL_SEED`] (the paper states none).
pub const BINDING_SEED: u64 = crate::panels::PANEL_SEED;
/// The panel name in the rank key of that draw.
pub const BINDING_PANEL_NAME: &str = "binding-symbolic";
/// Twelve bases over L = 3..8: two per length ([`binding_strata`]).
pub const BINDING_BASES_PER_LENGTH: usize = 2;
/// A.5 / B.5: the two encodings of each readout base.
pub const BINDING_ENCODINGS: [Domain; 2] = [Domain::SymbolicLetters, Domain::SymbolicEtaoin];

/// File names under the bank directory.
pub const COPY_REVERSE_FILE: &str = "copy-reverse.jsonl";
/// The twelve-character panel's file (D.7).
pub const TWELVE_FILE: &str = "twelve-character.jsonl";
/// The readout panel's symbolic bases (A.5, B.5).
pub const BINDING_FILE: &str = "binding-symbolic.jsonl";
/// The provenance file shared by the three symbolic banks.
pub const SYMBOLIC_PROVENANCE: &str = "symbolic-provenance.json";

/// The main bijection: digit `d` ↦ the `d`-th letter (0 → a, …, 9 → j).
pub fn digit_to_letter(c: char) -> char {
    match c.to_digit(10) {
        Some(d) => (b'a' + d as u8) as char,
        None => c,
    }
}

/// A string's image under [`digit_to_letter`].
pub fn encode_letters(s: &str) -> String {
    s.chars().map(digit_to_letter).collect()
}

/// A string of digits in the encoding of `domain`: digit `d` ↦ the `d`-th symbol of the
/// domain alphabet (identity for digits; a–j under the main bijection; e, t, a, o, i, n, s,
/// h, r, d under A.5's second mapping). Other characters are kept.
pub fn encode(domain: Domain, s: &str) -> String {
    let alphabet = domain.alphabet();
    s.chars()
        .map(|c| match c.to_digit(10) {
            Some(d) if alphabet.len() == 10 => alphabet[d as usize],
            _ => c,
        })
        .collect()
}

/// The item-id suffix of an encoding.
fn encoding_name(domain: Domain) -> &'static str {
    match domain {
        Domain::SymbolicLetters => "letters",
        Domain::SymbolicEtaoin => "etaoin",
        _ => "digits",
    }
}

/// The problem text of `operation` on `source`.
pub fn problem_text(operation: Operation, source: &str) -> String {
    match operation {
        Operation::Copy => format!("Copy this string exactly: {source}"),
        Operation::Reverse => format!("Reverse this string: {source}"),
    }
}

fn has_repeat(s: &[u8]) -> bool {
    let mut seen = BTreeSet::new();
    s.iter().any(|c| !seen.insert(*c))
}

/// Eight candidates around `gold` over `symbols`: four distinct symbols at 0-based position
/// `first` (the gold's and three distractors), and at `second` the gold's symbol or one
/// alternative; every other position copies the gold. Returned in a seeded display order.
pub fn branching_candidates(
    gold: &[u8],
    first: usize,
    second: usize,
    symbols: &[u8],
    rng: &mut ChaCha8Rng,
) -> Vec<String> {
    let mut others: Vec<u8> = symbols
        .iter()
        .copied()
        .filter(|&s| s != gold[first])
        .collect();
    others.shuffle(rng);
    let mut firsts = vec![gold[first]];
    firsts.extend_from_slice(&others[..3]);
    let alternatives: Vec<u8> = symbols
        .iter()
        .copied()
        .filter(|&s| s != gold[second])
        .collect();
    let alt = alternatives[rng.random_range(0..alternatives.len())];
    let mut out = Vec::with_capacity(8);
    for &f in &firsts {
        for &x in &[gold[second], alt] {
            let mut c = gold.to_vec();
            c[first] = f;
            c[second] = x;
            out.push(String::from_utf8(c).unwrap_or_default());
        }
    }
    out.shuffle(rng);
    out
}

fn item(
    id: String,
    domain: Domain,
    operation: Operation,
    source: String,
    candidates: Vec<String>,
    meta: SymbolicMeta,
) -> Result<Item, SymbolicError> {
    let target = operation.apply(&source);
    let mut it = Item {
        item_id: id,
        domain,
        problem: problem_text(operation, &source),
        length: target.len(),
        target,
        candidates,
        k_vector: vec![],
        partner_id: None,
        geometry: None,
        arithmetic: None,
        lexical: None,
        symbolic: Some(meta),
        semantic: None,
    };
    let policy = ItemPolicy {
        min_length: 1,
        max_length: 64,
    };
    validate_item(&mut it, &policy, false)?;
    Ok(it)
}

/// The 480 COPY/REVERSE items (120 bases × COPY/REVERSE × digits/letters), base by base.
pub fn copy_reverse_items(seed: u64, per_stratum: usize) -> Result<Vec<Item>, SymbolicError> {
    let digits: Vec<u8> = (b'0'..=b'9').collect();
    let mut out = Vec::new();
    let mut used: BTreeSet<Vec<u8>> = BTreeSet::new();
    for length in 3..=8usize {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (length as u64).wrapping_mul(0x9E37_79B9));
        let mut n = 0;
        for repeated in [false, true] {
            for placement in [Placement::Early, Placement::Late] {
                let mut made = 0;
                let mut attempts = 0;
                while made < per_stratum {
                    attempts += 1;
                    if attempts > 100_000 {
                        return Err(SymbolicError::NoMoreBases {
                            length,
                            repeated,
                            placement,
                        });
                    }
                    let gold: Vec<u8> = (0..length)
                        .map(|_| digits[rng.random_range(0..digits.len())])
                        .collect();
                    if has_repeat(&gold) != repeated || used.contains(&gold) {
                        continue;
                    }
                    used.insert(gold.clone());
                    // Early: the first-symbol partner differs at position 2 (unique prefix 2);
                    // late: only at position L (unique prefix L).
                    let second = match placement {
                        Placement::Early => 1,
                        Placement::Late => length - 1,
                    };
                    let candidates = branching_candidates(&gold, 0, second, &digits, &mut rng);
                    n += 1;
                    made += 1;
                    let base_id = format!("cr-L{length}-{n:02}");
                    let gold_text = String::from_utf8(gold.clone()).unwrap_or_default();
                    for operation in [Operation::Copy, Operation::Reverse] {
                        let source = operation.apply(&gold_text);
                        for domain in [Domain::SymbolicDigits, Domain::SymbolicLetters] {
                            let letters = domain == Domain::SymbolicLetters;
                            let enc = |s: &str| {
                                if letters {
                                    encode_letters(s)
                                } else {
                                    s.to_string()
                                }
                            };
                            let id = format!(
                                "{base_id}-{}-{}",
                                operation.as_str(),
                                if letters { "letters" } else { "digits" }
                            );
                            let meta = SymbolicMeta {
                                panel: SymbolicPanel::CopyReverse,
                                base_id: base_id.clone(),
                                operation,
                                source: enc(&source),
                                placement,
                                repeated,
                            };
                            out.push(item(
                                id,
                                domain,
                                operation,
                                enc(&source),
                                candidates.iter().map(|c| enc(c)).collect(),
                                meta,
                            )?);
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The 64 twelve-character items: 32 sources over a–j, reversed, each presented with early
/// (positions 2/3) and late (10/11) branches.
pub fn twelve_character_items(seed: u64, sources: usize) -> Result<Vec<Item>, SymbolicError> {
    let letters: Vec<u8> = (b'a'..=b'j').collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut used = BTreeSet::new();
    let mut out = Vec::new();
    let mut n = 0;
    while n < sources {
        let source: Vec<u8> = (0..TWELVE_LENGTH)
            .map(|_| letters[rng.random_range(0..letters.len())])
            .collect();
        if !used.insert(source.clone()) {
            continue;
        }
        n += 1;
        let source_text = String::from_utf8(source).unwrap_or_default();
        let gold = Operation::Reverse.apply(&source_text).into_bytes();
        let base_id = format!("tc-{n:02}");
        for (placement, first) in [(Placement::Early, 1), (Placement::Late, 9)] {
            let candidates = branching_candidates(&gold, first, first + 1, &letters, &mut rng);
            let meta = SymbolicMeta {
                panel: SymbolicPanel::TwelveCharacter,
                base_id: base_id.clone(),
                operation: Operation::Reverse,
                source: source_text.clone(),
                placement,
                repeated: has_repeat(&gold),
            };
            out.push(item(
                format!("{base_id}-{}", placement.as_str()),
                Domain::SymbolicLetters,
                Operation::Reverse,
                source_text.clone(),
                candidates,
                meta,
            )?);
        }
    }
    Ok(out)
}

/// The two (repetition, uniqueness) strata a length contributes to the readout panel: one
/// early and one late base, the early one repeating a symbol at even L and the late one at odd
/// L, so that the twelve bases hold three of each of the COPY/REVERSE panel's four strata
/// (A.5: "stratified by repetition and early/late uniqueness").
pub fn binding_strata(length: usize) -> [(bool, Placement); BINDING_BASES_PER_LENGTH] {
    [
        (length.is_multiple_of(2), Placement::Early),
        (!length.is_multiple_of(2), Placement::Late),
    ]
}

/// The readout panel's twelve symbolic bases (A.5, B.5), chosen from the COPY/REVERSE bases
/// `copy_reverse`: for each length and each of its two [`binding_strata`], the stratum's bases
/// ranked by SHA-256 of (`seed`, "binding-symbolic", base id) and the first taken; returned by
/// length, early before late.
pub fn binding_bases(copy_reverse: &[Item], seed: u64) -> Result<Vec<String>, SymbolicError> {
    let mut cells: BTreeMap<(usize, bool, Placement), BTreeSet<String>> = BTreeMap::new();
    for it in copy_reverse {
        if let Some(m) = &it.symbolic {
            cells
                .entry((it.length, m.repeated, m.placement))
                .or_default()
                .insert(m.base_id.clone());
        }
    }
    let lengths: BTreeSet<usize> = cells.keys().map(|k| k.0).collect();
    let mut out = Vec::new();
    for length in lengths {
        for (repeated, placement) in binding_strata(length) {
            let chosen = cells
                .get(&(length, repeated, placement))
                .and_then(|bases| {
                    bases
                        .iter()
                        .min_by_key(|b| crate::panels::rank(seed, BINDING_PANEL_NAME, b))
                })
                .ok_or(SymbolicError::NoBindingBase {
                    length,
                    repeated,
                    placement,
                })?;
            out.push(chosen.clone());
        }
    }
    Ok(out)
}

/// The readout panel's symbolic records: each of `bases` (COPY/REVERSE base ids) under COPY in
/// the two letter encodings, a–j and etaoinshrd, base by base. A base's presentations share
/// its target geometry, its candidates (the images of the digit presentation's) in the same
/// display order, its strata and its `base_id`; ids are `bind-<base>-copy-<encoding>`.
pub fn binding_items(copy_reverse: &[Item], bases: &[String]) -> Result<Vec<Item>, SymbolicError> {
    let mut out = Vec::new();
    for base in bases {
        let (digits, m) = copy_reverse
            .iter()
            .filter(|it| it.domain == Domain::SymbolicDigits)
            .find_map(|it| {
                it.symbolic
                    .as_ref()
                    .filter(|m| &m.base_id == base && m.operation == Operation::Copy)
                    .map(|m| (it, m))
            })
            .ok_or_else(|| SymbolicError::NoCopyPresentation {
                base_id: base.clone(),
            })?;
        for domain in BINDING_ENCODINGS {
            let source = encode(domain, &m.source);
            let meta = SymbolicMeta {
                panel: SymbolicPanel::Binding,
                base_id: base.clone(),
                operation: Operation::Copy,
                source: source.clone(),
                placement: m.placement,
                repeated: m.repeated,
            };
            out.push(item(
                format!("bind-{base}-copy-{}", encoding_name(domain)),
                domain,
                Operation::Copy,
                source,
                digits
                    .candidates
                    .iter()
                    .map(|c| encode(domain, c))
                    .collect(),
                meta,
            )?);
        }
    }
    Ok(out)
}

/// Provenance of the symbolic banks. Holds no timestamps, so rebuilding is byte-identical.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SymbolicProvenance {
    /// [`SYMBOLIC_GENERATOR_VERSION`] of the build.
    pub generator_version: String,
    /// Seed of the COPY/REVERSE panel ([`COPY_REVERSE_SEED`]).
    pub copy_reverse_seed: u64,
    /// Seed of the twelve-character panel ([`TWELVE_SEED`], D.7).
    pub twelve_character_seed: u64,
    /// Seed of the draw of the readout panel's twelve bases (A.5, B.5).
    #[serde(default)]
    pub binding_seed: u64,
    /// The readout panel's twelve bases (COPY/REVERSE base ids), by length.
    #[serde(default)]
    pub binding_bases: Vec<String>,
    /// The construction rules, each with the passage it follows.
    pub rules: BTreeMap<String, String>,
    /// Items per panel and stratum.
    pub counts: BTreeMap<String, usize>,
    /// SHA-256 of each bank file.
    pub files: BTreeMap<String, String>,
}

/// The symbolic banks and their provenance.
#[derive(Debug, Clone, PartialEq)]
pub struct SymbolicBanks {
    /// `copy-reverse.jsonl`: 480 items (A.5, B.4).
    pub copy_reverse: Vec<Item>,
    /// `twelve-character.jsonl`: 64 items (D.7).
    pub twelve_character: Vec<Item>,
    /// `binding-symbolic.jsonl`: 24 items (A.5, B.5).
    pub binding: Vec<Item>,
    /// File hashes filled by [`write_symbolic_banks`].
    pub provenance: SymbolicProvenance,
}

impl SymbolicBanks {
    /// Each bank with its file name, in the order they are written.
    pub fn files(&self) -> [(&'static str, &[Item]); 3] {
        [
            (COPY_REVERSE_FILE, &self.copy_reverse),
            (TWELVE_FILE, &self.twelve_character),
            (BINDING_FILE, &self.binding),
        ]
    }
}

/// The symbolic banks and their provenance (file hashes filled by [`write_symbolic_banks`]).
pub fn build_symbolic_banks() -> Result<SymbolicBanks, SymbolicError> {
    let cr = copy_reverse_items(COPY_REVERSE_SEED, COPY_REVERSE_PER_STRATUM)?;
    let tc = twelve_character_items(TWELVE_SEED, TWELVE_SOURCES)?;
    let bases = binding_bases(&cr, BINDING_SEED)?;
    let binding = binding_items(&cr, &bases)?;
    let mut counts = BTreeMap::new();
    for it in cr.iter().chain(&tc).chain(&binding) {
        let Some(m) = &it.symbolic else { continue };
        let panel = m.panel.as_str();
        *counts.entry(format!("{panel}/items")).or_default() += 1;
        *counts
            .entry(format!(
                "{panel}/L{}/{}/{}",
                it.length,
                if m.repeated { "repeated" } else { "distinct" },
                m.placement.as_str()
            ))
            .or_default() += 1;
    }
    let rules: BTreeMap<String, String> = [
        ("copy_reverse.bases", "A.5: \"The isomorphic panel uses 20 bases per length, stratified by repetition and early/late uniqueness\"; B.4: \"COPY/REVERSE uses 120 shared source bases\". Five bases per length × repetition × uniqueness stratum, L = 3..8; gold digit strings drawn uniformly, distinct over the panel."),
        ("copy_reverse.presentations", "A.5: \"COPY/REVERSE and digit/letter encodings create four presentations per base, with shared geometry and matched order.\" COPY shows the gold string, REVERSE shows it reversed; both ask for the gold, so target, candidates and display order are shared; letters are the image under 0-9 -> a-j."),
        ("copy_reverse.candidates", "Four-by-two (K(0) = 8, K(1) = 2): four distinct first symbols, and the gold's first-symbol partner differs at position 2 (early uniqueness) or only at position L (late); distractor symbols from all ten."),
        ("twelve_character.sources", "D.7: \"Thirty-two previously unused twelve-character sources over a-j are reversed.\" Sources drawn uniformly over a-j with seed 20261011, distinct."),
        ("twelve_character.candidates", "D.7: \"two eight-candidate presentations with the same four-by-two branching and Hamming geometry: branches occur at positions 2/3 or 10/11. Distractor symbols are sampled from a-j; all remaining positions agree across candidates.\""),
        ("problem_text", "The paper names the operations, not their wording: \"Copy this string exactly: <source>\" and \"Reverse this string: <source>\"."),
        ("binding.bases", "A.5: \"The main bijection maps digits 0 through 9 to letters a through j. A second mapping to etaoinshrd uses twelve fixed bases.\" (the isomorphic panel's paragraph, so twelve of its bases); \"The single position panel has 120 natural parents and twelve symbolic COPY bases with two encodings: 144 records, 132 independent clusters.\" Two COPY/REVERSE bases per length L = 3..8, one early and one late (the early one repeats a symbol at even L, the late one at odd L: three bases per repetition x uniqueness stratum); in each cell the base first by SHA-256 of (seed 20261005, \"binding-symbolic\", base id)."),
        ("binding.presentations", "B.5: \"Sixty parents per domain and twelve symbolic bases each supply a target and one preselected position.\" Each base under COPY in the two letter encodings, a-j (symbolic_letters, the main bijection) and etaoinshrd (symbolic_etaoin, 0-9 -> e t a o i n s h r d); both share the base's target geometry, candidates under the mapping, display order, strata and base_id (the cluster: 12 bases + 120 natural parents = 132)."),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let provenance = SymbolicProvenance {
        generator_version: SYMBOLIC_GENERATOR_VERSION.to_string(),
        copy_reverse_seed: COPY_REVERSE_SEED,
        twelve_character_seed: TWELVE_SEED,
        binding_seed: BINDING_SEED,
        binding_bases: bases,
        rules,
        counts,
        files: BTreeMap::new(),
    };
    Ok(SymbolicBanks {
        copy_reverse: cr,
        twelve_character: tc,
        binding,
        provenance,
    })
}

/// Write the three symbolic banks and `symbolic-provenance.json` into `dir`.
pub fn write_symbolic_banks(dir: &std::path::Path) -> Result<SymbolicProvenance, SymbolicError> {
    let banks = build_symbolic_banks()?;
    let mut provenance = banks.provenance.clone();
    std::fs::create_dir_all(dir).map_err(|source| SymbolicError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for (name, items) in banks.files() {
        let text = crate::bank::to_jsonl(items);
        provenance
            .files
            .insert(name.to_string(), crate::bank::sha256_hex(text.as_bytes()));
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| SymbolicError::Io {
            path: path.clone(),
            source,
        })?;
    }
    let path = dir.join(SYMBOLIC_PROVENANCE);
    let mut text = serde_json::to_string_pretty(&provenance).unwrap_or_default();
    text.push('\n');
    std::fs::write(&path, text).map_err(|source| SymbolicError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(provenance)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn cr() -> Vec<Item> {
        copy_reverse_items(COPY_REVERSE_SEED, COPY_REVERSE_PER_STRATUM).unwrap()
    }

    /// A.5 / B.4: 20 bases per length, 120 bases, four presentations each, strata balanced.
    #[test]
    fn copy_reverse_has_120_bases_of_four_presentations() {
        let items = cr();
        assert_eq!(items.len(), 480);
        let mut by_base: BTreeMap<String, Vec<&Item>> = BTreeMap::new();
        for it in &items {
            by_base
                .entry(it.symbolic.as_ref().unwrap().base_id.clone())
                .or_default()
                .push(it);
        }
        assert_eq!(by_base.len(), 120);
        let mut strata: BTreeMap<(usize, bool, Placement), usize> = BTreeMap::new();
        for group in by_base.values() {
            assert_eq!(group.len(), 4);
            let m = group[0].symbolic.as_ref().unwrap();
            *strata
                .entry((group[0].length, m.repeated, m.placement))
                .or_default() += 1;
        }
        assert_eq!(strata.len(), 6 * 4);
        assert!(strata.values().all(|&n| n == 5));
    }

    /// "shared geometry and matched order" (A.5); "Mapping digits 0–9 to letters a–j preserves
    /// strings, candidate geometry and ten local choices" (B.4).
    #[test]
    fn presentations_share_geometry_and_order_under_the_bijection() {
        let items = cr();
        for group in items.chunks(4) {
            let digits_copy = &group[0];
            assert_eq!(digits_copy.domain, Domain::SymbolicDigits);
            for it in group {
                assert_eq!(it.k_vector, digits_copy.k_vector);
                assert_eq!(it.gold_index(), digits_copy.gold_index());
                let expected: Vec<String> = if it.domain == Domain::SymbolicLetters {
                    digits_copy
                        .candidates
                        .iter()
                        .map(|c| encode_letters(c))
                        .collect()
                } else {
                    digits_copy.candidates.clone()
                };
                assert_eq!(it.candidates, expected, "{}", it.item_id);
                let m = it.symbolic.as_ref().unwrap();
                assert_eq!(m.operation.apply(&m.source), it.target);
                assert!(it.problem.ends_with(&m.source));
            }
            let m = digits_copy.symbolic.as_ref().unwrap();
            assert_eq!(digits_copy.k_vector[0], 8);
            assert_eq!(digits_copy.k_vector[1], 2);
            let unique = digits_copy.geometry.as_ref().unwrap().first_unique_prefix;
            match m.placement {
                Placement::Early => assert_eq!(unique, 2),
                Placement::Late => assert_eq!(unique, digits_copy.length),
            }
            let t = digits_copy.target.as_bytes();
            assert_eq!(has_repeat(t), m.repeated);
        }
    }

    /// D.7: 32 sources over a–j, reversed, two presentations with branches at 2/3 or 10/11,
    /// all other positions agreeing across candidates.
    #[test]
    fn twelve_character_presentations_branch_at_two_places() {
        let items = twelve_character_items(TWELVE_SEED, TWELVE_SOURCES).unwrap();
        assert_eq!(items.len(), 64);
        for pair in items.chunks(2) {
            let (early, late) = (&pair[0], &pair[1]);
            let m = early.symbolic.as_ref().unwrap();
            assert_eq!(m.source, late.symbolic.as_ref().unwrap().source);
            assert_eq!(early.target, m.source.chars().rev().collect::<String>());
            assert_eq!(early.target, late.target);
            for (it, branch) in [(early, [2usize, 3]), (late, [10, 11])] {
                assert_eq!(it.length, 12);
                assert!(it.target.bytes().all(|b| (b'a'..=b'j').contains(&b)));
                let cands = it.candidate_chars();
                for p in 1..=12usize {
                    let union: BTreeSet<char> = cands.iter().map(|c| c[p - 1]).collect();
                    let expected = if p == branch[0] {
                        4
                    } else if p == branch[1] {
                        2
                    } else {
                        1
                    };
                    assert_eq!(union.len(), expected, "{} position {p}", it.item_id);
                }
                // Four-by-two: K drops 8 → 2 → 1 across the two branch positions.
                let k = &it.k_vector;
                assert_eq!(k[branch[0] - 1], 8);
                assert_eq!(k[branch[0]], 2);
                assert_eq!(k[branch[1]], 1);
            }
        }
    }

    #[test]
    fn generation_is_deterministic() {
        assert_eq!(cr(), cr());
        assert_eq!(
            twelve_character_items(TWELVE_SEED, 4).unwrap(),
            twelve_character_items(TWELVE_SEED, 4).unwrap()
        );
    }

    fn binding() -> (Vec<String>, Vec<Item>) {
        let cr = cr();
        let bases = binding_bases(&cr, BINDING_SEED).unwrap();
        let items = binding_items(&cr, &bases).unwrap();
        (bases, items)
    }

    /// A.5: "A second mapping to etaoinshrd uses twelve fixed bases." B.5 / A.5: "The single
    /// position panel has 120 natural parents and twelve symbolic COPY bases with two
    /// encodings: 144 records, 132 independent clusters." Twelve COPY/REVERSE bases, two per
    /// length L = 3..8, each under COPY in a–j and etaoinshrd: 24 records, 12 clusters.
    #[test]
    fn binding_panel_has_twelve_bases_two_per_length_in_two_encodings() {
        let (bases, items) = binding();
        assert_eq!(bases.len(), 12);
        assert_eq!(items.len(), 24);
        let cr_bases: BTreeSet<String> = cr()
            .iter()
            .map(|it| it.symbolic.as_ref().unwrap().base_id.clone())
            .collect();
        let mut per_length: BTreeMap<usize, usize> = BTreeMap::new();
        for b in &bases {
            assert!(cr_bases.contains(b), "{b} is a COPY/REVERSE base");
            let length: usize = b["cr-L".len()..]
                .split('-')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            *per_length.entry(length).or_default() += 1;
        }
        assert_eq!(per_length, (3..=8).map(|l| (l, 2)).collect());
        // One early and one late base per length; three bases in each of the four
        // repetition × uniqueness strata.
        let mut strata: BTreeMap<(bool, Placement), usize> = BTreeMap::new();
        for pair in items.chunks(2) {
            let m = pair[0].symbolic.as_ref().unwrap();
            *strata.entry((m.repeated, m.placement)).or_default() += 1;
            assert_eq!(has_repeat(pair[0].target.as_bytes()), m.repeated);
        }
        assert_eq!(strata.len(), 4);
        assert!(strata.values().all(|&n| n == 3), "{strata:?}");
        for length in 3..=8 {
            let placements: Vec<Placement> = items
                .chunks(2)
                .filter(|p| p[0].length == length)
                .map(|p| p[0].symbolic.as_ref().unwrap().placement)
                .collect();
            assert_eq!(placements, [Placement::Early, Placement::Late]);
        }
        let clusters: BTreeSet<&str> = items
            .iter()
            .map(|it| it.symbolic.as_ref().unwrap().base_id.as_str())
            .collect();
        assert_eq!(clusters.len(), 12, "132 = 120 natural parents + 12 bases");
        assert_eq!(clusters, bases.iter().map(String::as_str).collect());
        let ids: BTreeSet<&str> = items.iter().map(|it| it.item_id.as_str()).collect();
        assert_eq!(ids.len(), 24);
        for pair in items.chunks(2) {
            let (letters, etaoin) = (&pair[0], &pair[1]);
            assert_eq!(letters.domain, Domain::SymbolicLetters);
            assert_eq!(etaoin.domain, Domain::SymbolicEtaoin);
            let base = &letters.symbolic.as_ref().unwrap().base_id;
            assert_eq!(letters.item_id, format!("bind-{base}-copy-letters"));
            assert_eq!(etaoin.item_id, format!("bind-{base}-copy-etaoin"));
            for it in pair {
                let m = it.symbolic.as_ref().unwrap();
                assert_eq!(m.panel, SymbolicPanel::Binding);
                assert_eq!(m.operation, Operation::Copy, "COPY only");
                assert_eq!(&m.base_id, base, "one cluster per base");
                assert_eq!(m.source, it.target);
                assert_eq!(
                    it.problem,
                    format!("Copy this string exactly: {}", it.target)
                );
                assert!((3..=8).contains(&it.length));
            }
        }
        // The same rule with another seed draws other bases.
        let other = binding_bases(&cr(), BINDING_SEED + 1).unwrap();
        assert_ne!(other, bases);
    }

    /// A.5: "COPY/REVERSE and digit/letter encodings create four presentations per base, with
    /// shared geometry and matched order. The main bijection maps digits 0 through 9 to letters
    /// a through j. A second mapping to etaoinshrd uses twelve fixed bases." Each binding
    /// presentation is the image, position by position, of its base's digit COPY presentation
    /// under its mapping (0 → a … 9 → j, or 0 → e, 1 → t, 2 → a, 3 → o, 4 → i, 5 → n, 6 → s,
    /// 7 → h, 8 → r, 9 → d), so both encodings share target geometry, candidates under the
    /// mapping, display order, strata and base id; the a–j one is the COPY/REVERSE bank's own
    /// letter COPY presentation of the base.
    #[test]
    fn binding_encodings_share_geometry_and_order_under_the_mappings() {
        let cr = cr();
        let (_, items) = binding();
        let etaoin: Vec<char> = "etaoinshrd".chars().collect();
        for it in &items {
            let m = it.symbolic.as_ref().unwrap();
            let find = |domain: Domain| {
                cr.iter()
                    .find(|c| {
                        c.domain == domain
                            && c.symbolic.as_ref().is_some_and(|cm| {
                                cm.base_id == m.base_id && cm.operation == Operation::Copy
                            })
                    })
                    .unwrap()
            };
            let digits = find(Domain::SymbolicDigits);
            let dm = digits.symbolic.as_ref().unwrap();
            let map = |c: char| {
                let d = c.to_digit(10).unwrap() as usize;
                match it.domain {
                    Domain::SymbolicLetters => (b'a' + d as u8) as char,
                    Domain::SymbolicEtaoin => etaoin[d],
                    other => panic!("{other}"),
                }
            };
            // The bijection, position by position, on the target and every candidate in
            // display order.
            let image = |s: &str| s.chars().map(map).collect::<String>();
            assert_eq!(it.target, image(&digits.target), "{}", it.item_id);
            assert_eq!(
                it.candidates,
                digits
                    .candidates
                    .iter()
                    .map(|c| image(c))
                    .collect::<Vec<_>>()
            );
            for (a, b) in it.target.chars().zip(digits.target.chars()) {
                assert_eq!(a, map(b));
            }
            assert_eq!(it.gold_index(), digits.gold_index());
            assert_eq!(it.k_vector, digits.k_vector);
            assert_eq!(it.geometry, digits.geometry);
            assert_eq!((m.placement, m.repeated), (dm.placement, dm.repeated));
            assert!(it.target.chars().all(|c| it.domain.alphabet().contains(&c)));
            assert_eq!(encode(it.domain, &digits.target), it.target);
            if it.domain == Domain::SymbolicLetters {
                let letters = find(Domain::SymbolicLetters);
                assert_eq!(it.target, letters.target);
                assert_eq!(it.candidates, letters.candidates);
                assert_eq!(it.problem, letters.problem);
            }
        }
        // The two encodings of a base differ (etaoinshrd is not a–j) but are one another's
        // image under a–j → etaoinshrd.
        for pair in items.chunks(2) {
            let to_etaoin = |s: &str| {
                s.chars()
                    .map(|c| etaoin[(c as u8 - b'a') as usize])
                    .collect::<String>()
            };
            assert_eq!(to_etaoin(&pair[0].target), pair[1].target);
            assert_ne!(pair[0].target, pair[1].target);
        }
    }

    #[test]
    fn binding_generation_is_deterministic() {
        assert_eq!(binding(), binding());
        assert_eq!(
            build_symbolic_banks().unwrap(),
            build_symbolic_banks().unwrap()
        );
    }

    /// The committed banks are the generator's output, byte for byte (the COPY/REVERSE and
    /// twelve-character banks unchanged by the readout bases added beside them).
    /// `C2S_WRITE_SYMBOLIC=1` rewrites the readout bank and the provenance only, so the two
    /// older banks are always checked against the generator.
    #[test]
    fn committed_banks_equal_the_generator() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/banks");
        let tmp = tempfile::tempdir().unwrap();
        let provenance = write_symbolic_banks(tmp.path()).unwrap();
        if std::env::var_os("C2S_WRITE_SYMBOLIC").is_some() {
            for name in [BINDING_FILE, SYMBOLIC_PROVENANCE] {
                std::fs::copy(tmp.path().join(name), dir.join(name)).unwrap();
            }
        }
        for name in [
            COPY_REVERSE_FILE,
            TWELVE_FILE,
            BINDING_FILE,
            SYMBOLIC_PROVENANCE,
        ] {
            let built = std::fs::read(tmp.path().join(name)).unwrap();
            let committed = std::fs::read(dir.join(name))
                .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()));
            assert!(
                built == committed,
                "{name} differs from the generator's output"
            );
        }
        assert_eq!(provenance.counts["copy_reverse/items"], 480);
        assert_eq!(provenance.counts["twelve_character/items"], 64);
        assert_eq!(provenance.counts["binding/items"], 24);
        assert_eq!(provenance.binding_bases.len(), 12);
        assert_eq!(provenance.files.len(), 3);
    }

    #[test]
    fn symbolic_errors_keep_their_messages() {
        let cases = [
            (
                SymbolicError::NoMoreBases {
                    length: 3,
                    repeated: true,
                    placement: Placement::Late,
                },
                "COPY/REVERSE L3: no more bases for repeated=true",
            ),
            (
                SymbolicError::NoBindingBase {
                    length: 4,
                    repeated: false,
                    placement: Placement::Early,
                },
                "binding: no base of length 4, repeated=false, early",
            ),
            (
                SymbolicError::NoCopyPresentation {
                    base_id: "cr-L3-01".into(),
                },
                "binding: no digit COPY presentation of base cr-L3-01",
            ),
        ];
        for (err, message) in cases {
            assert_eq!(err.to_string(), message);
        }
        let err = binding_items(&[], &["cr-L3-01".to_string()]).unwrap_err();
        assert!(
            matches!(err, SymbolicError::NoCopyPresentation { .. }),
            "{err}"
        );
        let file = tempfile::NamedTempFile::new().unwrap();
        let err = write_symbolic_banks(&file.path().join("banks")).unwrap_err();
        assert!(matches!(err, SymbolicError::Io { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with(&format!("{}: ", file.path().join("banks").display())),
            "{err}"
        );
    }
}
