//! The symbolic panels: the isomorphic COPY/REVERSE panel (A.5, B.4) and the twelve-character
//! crossed-factor panel (D.7). Both are generated from a seed, frozen as JSONL under
//! `data/banks/` with their own provenance file, and need no external source.
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
//! Where the paper is silent (README, "Protocol choices where the paper is silent"): the
//! problem wording (it names the operations, not their text), that symbolic strings may start
//! with any symbol (they are not numbers), and the COPY/REVERSE seed (the bank seed 20261005;
//! A.6 gives 20261005 as the inference seed, and D.7 its own 20261011).

use std::collections::{BTreeMap, BTreeSet};

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use c2s_records::{
    validate_item, Domain, Item, ItemPolicy, Operation, Placement, SymbolicMeta, SymbolicPanel,
};

/// Version of the symbolic generators; bump when any output byte changes.
pub const SYMBOLIC_GENERATOR_VERSION: &str = "choice2seq-symbolic/1";
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

/// File names under the bank directory.
pub const COPY_REVERSE_FILE: &str = "copy-reverse.jsonl";
pub const TWELVE_FILE: &str = "twelve-character.jsonl";
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
) -> Result<Item, String> {
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
    };
    let policy = ItemPolicy {
        min_length: 1,
        max_length: 64,
    };
    validate_item(&mut it, &policy, false).map_err(|e| e.to_string())?;
    Ok(it)
}

/// The 480 COPY/REVERSE items (120 bases × COPY/REVERSE × digits/letters), base by base.
pub fn copy_reverse_items(seed: u64, per_stratum: usize) -> Result<Vec<Item>, String> {
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
                        return Err(format!(
                            "COPY/REVERSE L{length}: no more bases for repeated={repeated}"
                        ));
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
pub fn twelve_character_items(seed: u64, sources: usize) -> Result<Vec<Item>, String> {
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

/// Provenance of the symbolic banks. Holds no timestamps, so rebuilding is byte-identical.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SymbolicProvenance {
    pub generator_version: String,
    pub copy_reverse_seed: u64,
    pub twelve_character_seed: u64,
    /// The construction rules, each with the passage it follows.
    pub rules: BTreeMap<String, String>,
    /// Items per panel and stratum.
    pub counts: BTreeMap<String, usize>,
    /// SHA-256 of each bank file.
    pub files: BTreeMap<String, String>,
}

/// Both symbolic banks and their provenance (file hashes filled by [`write_symbolic_banks`]).
pub fn build_symbolic_banks() -> Result<(Vec<Item>, Vec<Item>, SymbolicProvenance), String> {
    let cr = copy_reverse_items(COPY_REVERSE_SEED, COPY_REVERSE_PER_STRATUM)?;
    let tc = twelve_character_items(TWELVE_SEED, TWELVE_SOURCES)?;
    let mut counts = BTreeMap::new();
    for it in cr.iter().chain(&tc) {
        let Some(m) = &it.symbolic else { continue };
        let panel = match m.panel {
            SymbolicPanel::CopyReverse => "copy_reverse",
            SymbolicPanel::TwelveCharacter => "twelve_character",
        };
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
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let provenance = SymbolicProvenance {
        generator_version: SYMBOLIC_GENERATOR_VERSION.to_string(),
        copy_reverse_seed: COPY_REVERSE_SEED,
        twelve_character_seed: TWELVE_SEED,
        rules,
        counts,
        files: BTreeMap::new(),
    };
    Ok((cr, tc, provenance))
}

/// Write both symbolic banks and `symbolic-provenance.json` into `dir`.
pub fn write_symbolic_banks(dir: &std::path::Path) -> Result<SymbolicProvenance, String> {
    let (cr, tc, mut provenance) = build_symbolic_banks()?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (name, items) in [(COPY_REVERSE_FILE, &cr), (TWELVE_FILE, &tc)] {
        let text = crate::bank::to_jsonl(items);
        provenance
            .files
            .insert(name.to_string(), crate::bank::sha256_hex(text.as_bytes()));
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let path = dir.join(SYMBOLIC_PROVENANCE);
    let mut text = serde_json::to_string_pretty(&provenance).unwrap_or_default();
    text.push('\n');
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
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

    /// The committed banks are the generator's output, byte for byte.
    #[test]
    fn committed_banks_equal_the_generator() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/banks");
        let tmp = tempfile::tempdir().unwrap();
        let provenance = write_symbolic_banks(tmp.path()).unwrap();
        for name in [COPY_REVERSE_FILE, TWELVE_FILE, SYMBOLIC_PROVENANCE] {
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
    }
}
