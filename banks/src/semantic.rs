//! The semantic bridge (Table 2, Table B2; A.5, B.4): 128 fact records, each three Boolean
//! facts about one subject, rendered twice — as three named yes/no fields and as a
//! three-bit binary string. "The semantic panel has 128 source facts, 16 per Boolean pattern,
//! rendered as named fields or binary encodings. Three two option decisions construct each
//! output. Field and binary representations use different wording and labels" (A.5); "SCR
//! conditions on representation-specific Native successes; all-item EM scores the full
//! population of 128 fact records" (B.4).
//!
//! The paper does not publish its fact records, nor what they are about. Ours are a
//! synthetic stand-in whose truth is computed, not looked up: the subject is a three-digit
//! number, the facts are "it is even", "it is a multiple of 3" and "it is greater than 500"
//! (independent, so every pattern has many subjects). Per pattern, 16 distinct numbers are
//! drawn with a seeded generator. The eight candidates of a record are all eight Boolean
//! patterns — the only outputs three two-option decisions can construct — in one seeded
//! display order shared by both encodings (the named encoding is the image of the binary one
//! under 0 → n, 1 → y), so the two presentations have the same geometry and matched order.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use sha2::{Digest, Sha256};

use c2s_records::{validate_item, Domain, Item, ItemError, ItemPolicy, SemanticMeta};

/// Seed of the committed bank.
pub const SEMANTIC_SEED: u64 = 20_261_201;
/// "16 per Boolean pattern" × 2³ patterns.
pub const FACTS_PER_PATTERN: usize = 16;
/// Fact records in the bank (128), one item of each encoding per record.
pub const FACT_COUNT: usize = 8 * FACTS_PER_PATTERN;
/// The committed files under `data/banks/`.
pub const SEMANTIC_FILE: &str = "semantic-bridge.jsonl";
/// The provenance file written beside [`SEMANTIC_FILE`].
pub const SEMANTIC_PROVENANCE: &str = "semantic-provenance.json";

/// The three facts: named field, the statement it answers, and its truth for a number.
pub const FIELDS: [(&str, &str); 3] = [
    ("even", "is even"),
    ("multiple_of_three", "is a multiple of 3"),
    ("above_500", "is greater than 500"),
];

fn facts_of(n: u32) -> [bool; 3] {
    [n.is_multiple_of(2), n.is_multiple_of(3), n > 500]
}

fn bits(p: [bool; 3]) -> String {
    p.iter().map(|&b| if b { '1' } else { '0' }).collect()
}

fn named(bits: &str) -> String {
    bits.chars()
        .map(|c| if c == '1' { 'y' } else { 'n' })
        .collect()
}

/// The binary encoding's problem text.
pub fn binary_problem(n: u32) -> String {
    format!(
        "Encode three facts about the number {n} as a binary string of three digits. Digit 1: {n} {}. Digit 2: {n} {}. Digit 3: {n} {}. Write 1 where the statement is true and 0 where it is false.",
        FIELDS[0].1, FIELDS[1].1, FIELDS[2].1
    )
}

/// The named-field encoding's problem text (different wording and labels).
pub fn named_problem(n: u32) -> String {
    format!(
        "Fill in three named yes/no fields about the number {n}, in this order: {} (does {n} {}?), {} (is {n} {}?), {} (is {n} {}?). Answer each field with y for yes or n for no, one letter per field.",
        FIELDS[0].0,
        "divide evenly by 2",
        FIELDS[1].0,
        FIELDS[1].1.trim_start_matches("is "),
        FIELDS[2].0,
        FIELDS[2].1.trim_start_matches("is "),
    )
}

/// One fact record: its number and gold pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FactRecord {
    /// `sem-001` … `sem-128`, in pattern then number order; the resampling unit.
    pub fact_id: String,
    /// The subject, a three-digit number (100..=999).
    pub number: u32,
    /// Gold bits over `0`/`1`, one per entry of [`FIELDS`] in order (1: the fact holds).
    pub pattern: String,
}

/// Why the semantic bank could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SemanticError {
    /// Fewer than [`FACTS_PER_PATTERN`] three-digit numbers have a Boolean pattern.
    #[error("pattern {pattern} has too few numbers")]
    TooFewNumbers {
        /// The pattern, as its three-bit string.
        pattern: String,
    },
    /// A generated item failed [`c2s_records::validate_item`].
    #[error("{item_id}: {source}")]
    Item {
        /// The item's id.
        item_id: String,
        /// The rule it broke.
        #[source]
        source: ItemError,
    },
}

/// The bank: records and their two items each (binary first), and provenance.
#[derive(Debug, Clone)]
pub struct SemanticBank {
    /// The [`FACT_COUNT`] records, in `fact_id` order.
    pub facts: Vec<FactRecord>,
    /// Two validated items per record, in record order: `-bin` then `-named`.
    pub items: Vec<Item>,
}

/// Build the bank from `seed`: per pattern in binary order (000, 001, …, 111), 16 numbers
/// drawn without replacement from 100..=999 among those with that pattern, sorted; then each
/// record's candidate order, a seeded shuffle of the eight patterns.
pub fn build_semantic_bank(seed: u64) -> Result<SemanticBank, SemanticError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut facts = Vec::with_capacity(FACT_COUNT);
    let patterns: Vec<String> = (0..8u32)
        .map(|p| bits([p & 4 != 0, p & 2 != 0, p & 1 != 0]))
        .collect();
    for p in &patterns {
        let mut pool: Vec<u32> = (100..=999).filter(|&n| &bits(facts_of(n)) == p).collect();
        pool.shuffle(&mut rng);
        let mut chosen: Vec<u32> = pool.into_iter().take(FACTS_PER_PATTERN).collect();
        if chosen.len() != FACTS_PER_PATTERN {
            return Err(SemanticError::TooFewNumbers { pattern: p.clone() });
        }
        chosen.sort_unstable();
        for n in chosen {
            facts.push(FactRecord {
                fact_id: format!("sem-{:03}", facts.len() + 1),
                number: n,
                pattern: p.clone(),
            });
        }
    }
    let mut items = Vec::with_capacity(2 * FACT_COUNT);
    for f in &facts {
        let mut order = patterns.clone();
        order.shuffle(&mut rng);
        for domain in [Domain::SemanticBinary, Domain::SemanticNamed] {
            let (target, candidates, problem, tag) = match domain {
                Domain::SemanticBinary => (
                    f.pattern.clone(),
                    order.clone(),
                    binary_problem(f.number),
                    "bin",
                ),
                _ => (
                    named(&f.pattern),
                    order.iter().map(|c| named(c)).collect(),
                    named_problem(f.number),
                    "named",
                ),
            };
            let mut item = Item {
                item_id: format!("{}-{tag}", f.fact_id),
                domain,
                problem,
                length: 3,
                target,
                candidates,
                k_vector: Vec::new(),
                partner_id: None,
                geometry: None,
                arithmetic: None,
                lexical: None,
                symbolic: None,
                semantic: Some(SemanticMeta {
                    fact_id: f.fact_id.clone(),
                    subject: f.number.to_string(),
                    fields: FIELDS.iter().map(|(n, _)| n.to_string()).collect(),
                    pattern: f.pattern.clone(),
                }),
            };
            validate_item(&mut item, &ItemPolicy::default(), false).map_err(|source| {
                SemanticError::Item {
                    item_id: item.item_id.clone(),
                    source,
                }
            })?;
            items.push(item);
        }
    }
    Ok(SemanticBank { facts, items })
}

impl SemanticBank {
    /// One item per line (the bank file).
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for it in &self.items {
            out.push_str(&serde_json::to_string(it).unwrap_or_default());
            out.push('\n');
        }
        out
    }

    /// The provenance file, given the bank file's text.
    pub fn provenance(&self, jsonl: &str, seed: u64) -> serde_json::Value {
        let sha = hex::encode(Sha256::digest(jsonl.as_bytes()));
        serde_json::json!({
            "generator": "c2s-banks::semantic (banks/src/semantic.rs)",
            "seed": seed,
            "statement": "Synthetic stand-in for the paper's semantic fact records, which are not published: 128 three-digit numbers, 16 per Boolean pattern of the facts (even, multiple of 3, greater than 500), truth computed. Each record is rendered twice: semantic_binary (a three-digit 0/1 string) and semantic_named (three named yes/no fields, n/y), with one shared candidate order (all eight patterns).",
            "rules": {
                "records": "A.5: \"The semantic panel has 128 source facts, 16 per Boolean pattern, rendered as named fields or binary encodings.\" Per pattern (000..111 in bit order), 16 numbers drawn without replacement from 100..=999 with a ChaCha8 stream of the seed, sorted; ids sem-001..sem-128 in that order.",
                "decisions": "A.5: \"Three two option decisions construct each output.\" Targets have three characters over 0/1 or n/y; the candidates are the eight patterns.",
                "wording": "A.5: \"Field and binary representations use different wording and labels.\" Binary: digits, 1 = true, 0 = false; named: field names even / multiple_of_three / above_500, y = yes, n = no.",
                "unit": "A.1: the independent unit is the semantic fact record (semantic.fact_id, the trajectories' base_id); both encodings share their option orders (A.5's \"matched order\")."
            },
            "files": { SEMANTIC_FILE: sha },
            "counts": { "facts": self.facts.len(), "items": self.items.len(), "per_pattern": FACTS_PER_PATTERN },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn bank() -> SemanticBank {
        build_semantic_bank(SEMANTIC_SEED).unwrap()
    }

    #[test]
    fn semantic_errors_keep_their_messages() {
        let few = SemanticError::TooFewNumbers {
            pattern: "101".into(),
        };
        assert_eq!(few.to_string(), "pattern 101 has too few numbers");
        let item = SemanticError::Item {
            item_id: "sem-001-bin".into(),
            source: ItemError {
                item_id: Some("sem-001-bin".into()),
                rule: c2s_records::ItemRule::EmptyProblem,
            },
        };
        assert_eq!(
            item.to_string(),
            "sem-001-bin: item sem-001-bin: empty problem"
        );
        assert!(std::error::Error::source(&item).is_some());
    }

    /// "128 source facts, 16 per Boolean pattern" and "Three two option decisions construct
    /// each output" (A.5).
    #[test]
    fn sixteen_records_per_pattern_with_true_facts() {
        let b = bank();
        assert_eq!(b.facts.len(), 128);
        assert_eq!(b.items.len(), 256);
        let mut per: BTreeMap<&str, usize> = BTreeMap::new();
        for f in &b.facts {
            *per.entry(f.pattern.as_str()).or_default() += 1;
            assert_eq!(bits(facts_of(f.number)), f.pattern, "{}", f.number);
            assert!((100..=999).contains(&f.number));
        }
        assert_eq!(per.len(), 8);
        assert!(per.values().all(|&n| n == 16));
        let numbers: std::collections::BTreeSet<u32> = b.facts.iter().map(|f| f.number).collect();
        assert_eq!(numbers.len(), 128, "distinct subjects");
        for it in &b.items {
            assert_eq!(it.length, 3);
            let mut cands = it.candidates.clone();
            cands.sort();
            let alphabet = it.domain.alphabet();
            assert_eq!(alphabet.len(), 2, "two options per decision");
            let all: Vec<String> = (0..8u32)
                .map(|p| {
                    [4, 2, 1]
                        .iter()
                        .map(|m| alphabet[usize::from(p & m != 0)])
                        .collect()
                })
                .collect();
            assert_eq!(cands, all, "every pattern is a candidate");
            assert_eq!(it.k_vector, vec![8, 4, 2, 1]);
        }
    }

    /// Both encodings of a record share the candidate order (named = binary under 0 → n,
    /// 1 → y) and differ in wording and labels.
    #[test]
    fn encodings_share_order_and_differ_in_wording() {
        let b = bank();
        for pair in b.items.chunks(2) {
            let (bin, nam) = (&pair[0], &pair[1]);
            assert_eq!(bin.domain, Domain::SemanticBinary);
            assert_eq!(nam.domain, Domain::SemanticNamed);
            let mapped: Vec<String> = bin.candidates.iter().map(|c| named(c)).collect();
            assert_eq!(mapped, nam.candidates);
            assert_eq!(named(&bin.target), nam.target);
            assert_eq!(
                bin.semantic.as_ref().unwrap().fact_id,
                nam.semantic.as_ref().unwrap().fact_id
            );
            assert!(bin.problem.contains("binary") && bin.problem.contains("1 where"));
            assert!(nam.problem.contains("multiple_of_three") && nam.problem.contains("y for yes"));
        }
    }

    /// The committed bank is the generator's output, byte for byte (set C2S_WRITE_SEMANTIC=1
    /// to write it).
    #[test]
    fn committed_semantic_bank_is_the_generator_output() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/banks");
        let b = bank();
        let jsonl = b.to_jsonl();
        let provenance =
            serde_json::to_string_pretty(&b.provenance(&jsonl, SEMANTIC_SEED)).unwrap() + "\n";
        if std::env::var_os("C2S_WRITE_SEMANTIC").is_some() {
            std::fs::write(dir.join(SEMANTIC_FILE), &jsonl).unwrap();
            std::fs::write(dir.join(SEMANTIC_PROVENANCE), &provenance).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(dir.join(SEMANTIC_FILE)).unwrap(),
            jsonl
        );
        assert_eq!(
            std::fs::read_to_string(dir.join(SEMANTIC_PROVENANCE)).unwrap(),
            provenance
        );
        // Every committed line parses and validates as an item.
        for line in jsonl.lines() {
            c2s_records::parse_item(line, &ItemPolicy::default()).unwrap();
        }
    }
}
