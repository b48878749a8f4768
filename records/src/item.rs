//! Items: one problem, its gold target and eight equal-length candidates.

use serde::{Deserialize, Serialize};

use crate::geometry::Geometry;

/// Task domain. The local alphabet of the content track follows from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Domain {
    /// Multiplication `a × b` (paper A.2), answered over the ten digits.
    Arithmetic,
    /// A WordNet noun asked for by its gloss, answered over the 26 lowercase letters (A.3).
    Lexical,
    /// Symbolic strings over the ten digits (the COPY/REVERSE panel's digit encoding, B.4).
    SymbolicDigits,
    /// Symbolic strings over the ten letters a–j: the image of the digits under the bijection
    /// 0–9 → a–j ("Mapping digits 0–9 to letters a–j preserves strings, candidate geometry and
    /// ten local choices", B.4), and the twelve-character sources of D.7 ("sources over a–j").
    SymbolicLetters,
    /// Symbolic strings over the ten letters e, t, a, o, i, n, s, h, r, d: the image of the
    /// digits under A.5's second mapping 0 → e, 1 → t, …, 9 → d ("The main bijection maps
    /// digits 0 through 9 to letters a through j. A second mapping to etaoinshrd uses twelve
    /// fixed bases"), the second encoding of the readout panel's symbolic COPY bases (B.5).
    SymbolicEtaoin,
    /// The semantic bridge's binary encoding (A.5, B.4): three Boolean facts of a record as a
    /// string over 0/1 ("rendered as named fields or binary encodings").
    SemanticBinary,
    /// The semantic bridge's named-field encoding: the same facts as three named yes/no
    /// fields, one character each (n/y; "Field and binary representations use different
    /// wording and labels").
    SemanticNamed,
}

/// The two symbols of the semantic bridge's binary encoding (false, true).
pub const BINARY: [char; 2] = ['0', '1'];
/// The two symbols of its named-field encoding, in the order of the bits they encode (no,
/// yes), so that one option permutation serves both encodings.
pub const NO_YES: [char; 2] = ['n', 'y'];

/// The ten digits, in canonical order.
pub const DIGITS: [char; 10] = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];
/// The 26 lowercase letters, in canonical order.
pub const LETTERS: [char; 26] = [
    'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's',
    't', 'u', 'v', 'w', 'x', 'y', 'z',
];
/// The ten letters of A.5's second mapping, in the order of the digits they encode
/// (0 → e, 1 → t, …, 9 → d): the alphabet of [`Domain::SymbolicEtaoin`].
pub const ETAOIN: [char; 10] = ['e', 't', 'a', 'o', 'i', 'n', 's', 'h', 'r', 'd'];

impl Domain {
    /// The natural task domains of the main panels.
    pub const NATURAL: [Domain; 2] = [Domain::Arithmetic, Domain::Lexical];

    /// Every domain, in declaration order (the order [`Domain::parse`] searches).
    pub const ALL: [Domain; 7] = [
        Domain::Arithmetic,
        Domain::Lexical,
        Domain::SymbolicDigits,
        Domain::SymbolicLetters,
        Domain::SymbolicEtaoin,
        Domain::SemanticBinary,
        Domain::SemanticNamed,
    ];

    /// The content-track alphabet (paper §3.1): ten digits or 26 lowercase letters, in
    /// canonical (unshuffled) order; the symbolic letter encodings have ten letters, a–j or
    /// e, t, a, o, i, n, s, h, r, d, each in the order of the digits it encodes, so that a
    /// letter presentation's options are the image of the digit presentation's.
    pub fn alphabet(self) -> &'static [char] {
        match self {
            Domain::Arithmetic | Domain::SymbolicDigits => &DIGITS,
            Domain::Lexical => &LETTERS,
            Domain::SymbolicLetters => &LETTERS[..10],
            Domain::SymbolicEtaoin => &ETAOIN,
            Domain::SemanticBinary => &BINARY,
            Domain::SemanticNamed => &NO_YES,
        }
    }

    /// The characters an output may be made of without being malformed: the domain alphabet,
    /// except that symbolic letter strings (either encoding) may use any lowercase letter
    /// (D.7 offers a–z at every step in its 26-choice arms; a letter outside the encoding is
    /// well-formed and `outside`, not malformed).
    pub fn output_alphabet(self) -> &'static [char] {
        match self {
            Domain::SymbolicLetters | Domain::SymbolicEtaoin => &LETTERS,
            d => d.alphabet(),
        }
    }

    /// snake_case name, as in bank files, messages and Parquet columns (the serde form).
    pub fn as_str(self) -> &'static str {
        match self {
            Domain::Arithmetic => "arithmetic",
            Domain::Lexical => "lexical",
            Domain::SymbolicDigits => "symbolic_digits",
            Domain::SymbolicLetters => "symbolic_letters",
            Domain::SymbolicEtaoin => "symbolic_etaoin",
            Domain::SemanticBinary => "semantic_binary",
            Domain::SemanticNamed => "semantic_named",
        }
    }

    /// The domain whose [`Domain::as_str`] name is `s`; `None` for any other string.
    pub fn parse(s: &str) -> Option<Domain> {
        Domain::ALL.into_iter().find(|d| d.as_str() == s)
    }

    /// The semantic bridge's two encodings of Boolean fact records.
    pub fn is_semantic(self) -> bool {
        matches!(self, Domain::SemanticBinary | Domain::SemanticNamed)
    }

    /// The symbolic encodings (no natural task: the problem states the operation).
    pub fn is_symbolic(self) -> bool {
        matches!(
            self,
            Domain::SymbolicDigits | Domain::SymbolicLetters | Domain::SymbolicEtaoin
        )
    }
}

impl std::fmt::Display for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Operand-length structure of a multiplication item (paper A.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Structure {
    /// Operand lengths differ by at most one digit.
    Balanced,
    /// Operand lengths differ by at least two digits.
    Unbalanced,
}

/// Carry class relative to the median of the frozen pool of the same length and structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CarryClass {
    /// Total carries at or below the pool median.
    Low,
    /// Total carries above the pool median.
    High,
}

/// Column-arithmetic statistics of a product, as recorded by the carry simulator (paper A.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct CarryStats {
    /// Digits of the top operand `a` and the bottom operand `b`.
    pub operand_lengths: [u32; 2],
    /// Positive outgoing carries inside the row multiplications (one row per digit of `b`).
    pub row_carries: u32,
    /// Positive outgoing carries while summing the partial products.
    pub sum_carries: u32,
    /// `row_carries + sum_carries`; the carry-class criterion.
    pub total_carries: u32,
    /// Longest run of consecutive carry events inside one row or the summation (runs reset
    /// between rows and between the rows and the summation).
    pub max_carry_chain: u32,
    /// Number of single-digit multiplications (len(a) × len(b)).
    pub elementary_products: u32,
    /// Zero digits in the concatenated operands.
    pub zero_digits: u32,
    /// Digits of the concatenated operands that repeat an earlier digit.
    pub repeated_digits: u32,
    /// Outgoing carry of every column of every row, least significant first; one row per digit
    /// of `b`, least significant digit first.
    pub row_carry_trace: Vec<Vec<u32>>,
    /// Outgoing carry of every column of the partial-product summation (empty when `b` has
    /// one digit).
    pub sum_carry_trace: Vec<u32>,
}

/// Metadata of an arithmetic item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArithmeticMeta {
    /// The operands `[a, b]` of `a × b`.
    pub operands: [u64; 2],
    /// Balanced or unbalanced operand lengths.
    pub structure: Structure,
    /// Total carries against the median of the pool of the same length and structure.
    pub carry_class: CarryClass,
    /// The carry simulator's statistics and traces of the product.
    pub carry: CarryStats,
}

/// Zipf-frequency stratum of a lexical target (split at Zipf 4.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FrequencyStratum {
    /// Zipf < 4.0.
    Low,
    /// Zipf ≥ 4.0.
    High,
}

/// Metadata of a lexical item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LexicalMeta {
    /// WordNet 3.0 noun synset of the target sense, as `"<offset>-n"` (8-digit offset).
    pub synset: String,
    /// Zipf frequency of the target (wordfreq `large_en`).
    pub zipf: f64,
    /// Zipf frequency of each candidate, in display order.
    pub candidate_zipf: Vec<f64>,
    /// Stratum of `zipf` (high from Zipf 4.0).
    pub frequency_stratum: FrequencyStratum,
    /// Whether the target contains a letter more than once.
    pub repeated_letters: bool,
    /// All lemmas of the target synset (raw WordNet forms, the target included), for audit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synset_lemmas: Vec<String>,
}

/// The symbolic panel an item belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolicPanel {
    /// The isomorphic COPY/REVERSE panel (A.5, B.4): 20 bases per length L = 3..8, four
    /// presentations per base (operation × encoding).
    CopyReverse,
    /// The twelve-character crossed-factor panel (D.7): 32 reversed sources, two
    /// presentations each (early or late branches).
    TwelveCharacter,
    /// The symbolic parents of the single-position readout / option-binding panel (A.5, B.5):
    /// twelve COPY/REVERSE bases, two per length, under COPY in the two letter encodings
    /// (a–j and etaoinshrd).
    Binding,
}

impl SymbolicPanel {
    /// snake_case name (the serde form).
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolicPanel::CopyReverse => "copy_reverse",
            SymbolicPanel::TwelveCharacter => "twelve_character",
            SymbolicPanel::Binding => "binding",
        }
    }
}

/// The string operation a symbolic problem asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// The answer is the source string.
    Copy,
    /// The answer is the source string reversed.
    Reverse,
}

impl Operation {
    /// `copy` or `reverse` (the serde form, and the trajectories' `operation` column).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Copy => "copy",
            Operation::Reverse => "reverse",
        }
    }

    /// The operation named `name` ([`Operation::as_str`]).
    pub fn parse(name: &str) -> Option<Operation> {
        [Operation::Copy, Operation::Reverse]
            .into_iter()
            .find(|o| o.as_str() == name)
    }

    /// The answer of the operation on `source`.
    pub fn apply(self, source: &str) -> String {
        match self {
            Operation::Copy => source.to_string(),
            Operation::Reverse => source.chars().rev().collect(),
        }
    }
}

/// Early or late: where the gold becomes unique among the candidates (COPY/REVERSE's
/// "early/late uniqueness", A.5) or where the candidates branch (D.7's "branches occur at
/// positions 2/3 or 10/11").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// COPY/REVERSE: the gold is unique from prefix 2; twelve characters: the candidates
    /// branch at positions 2/3.
    Early,
    /// COPY/REVERSE: the gold becomes unique only at prefix L; twelve characters: the
    /// candidates branch at positions 10/11.
    Late,
}

impl Placement {
    /// `early` or `late` (the serde form, and the trajectories' `placement` column).
    pub fn as_str(self) -> &'static str {
        match self {
            Placement::Early => "early",
            Placement::Late => "late",
        }
    }

    /// The placement named `name` ([`Placement::as_str`]).
    pub fn parse(name: &str) -> Option<Placement> {
        [Placement::Early, Placement::Late]
            .into_iter()
            .find(|p| p.as_str() == name)
    }
}

/// Metadata of a symbolic item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolicMeta {
    /// The panel the item was built for.
    pub panel: SymbolicPanel,
    /// The independent unit shared by every presentation of a base or source ("The independent
    /// unit is a natural parent item, shared symbolic source, …", A.1).
    pub base_id: String,
    /// The operation the problem states; the target is its result on `source`.
    pub operation: Operation,
    /// The string the operation is applied to, in this item's encoding.
    pub source: String,
    /// COPY/REVERSE: where the gold becomes unique (first unique prefix 2 or L); twelve
    /// characters: where the candidates branch (positions 2/3 or 10/11).
    pub placement: Placement,
    /// Whether the target repeats a symbol (a COPY/REVERSE stratum, A.5).
    pub repeated: bool,
}

/// Metadata of a semantic-bridge item: the fact record it renders and its Boolean pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SemanticMeta {
    /// The independent unit shared by both encodings ("semantic fact record", A.1).
    pub fact_id: String,
    /// What the facts are about.
    pub subject: String,
    /// The three Boolean fields, in output order.
    pub fields: Vec<String>,
    /// The gold pattern in bits (`101`): the stratum of the record ("Semantic bases use gold
    /// pattern", A.6).
    pub pattern: String,
}

/// One benchmark item. JSON field names are the bank-file format (one object per line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// Stable id (`arith-test-5-07`): ASCII, not blank, unique within a run.
    pub item_id: String,
    /// Task domain; its alphabet bounds the candidates' characters.
    pub domain: Domain,
    /// The problem text shown to the model (`39 × 15 = ?`; a lexical item's WordNet gloss);
    /// free text, not blank.
    pub problem: String,
    /// The gold string: ASCII and one of the candidates.
    pub target: String,
    /// Target length L (characters).
    pub length: usize,
    /// The eight candidates in their frozen display order.
    pub candidates: Vec<String>,
    /// K(k) for k = 0..=L: candidates consistent with the gold prefix of length k.
    pub k_vector: Vec<u32>,
    /// The paired item of the other domain with the same K vector, if any.
    #[serde(default)]
    pub partner_id: Option<String>,
    /// Derived geometry (entropies, first unique prefix); recomputed on validation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geometry: Option<Geometry>,
    /// Arithmetic items' generator metadata, when the item carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arithmetic: Option<ArithmeticMeta>,
    /// Lexical items' generator metadata, when the item carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical: Option<LexicalMeta>,
    /// Symbolic items' panel, base and operation, when the item carries them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbolic: Option<SymbolicMeta>,
    /// Semantic-bridge items' fact record and pattern, when the item carries them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic: Option<SemanticMeta>,
}

impl Item {
    /// Index of the target among the candidates (display order).
    pub fn gold_index(&self) -> Option<usize> {
        self.candidates.iter().position(|c| c == &self.target)
    }

    /// Characters of the target.
    pub fn target_chars(&self) -> Vec<char> {
        self.target.chars().collect()
    }

    /// Candidates as character vectors, in display order.
    pub fn candidate_chars(&self) -> Vec<Vec<char>> {
        self.candidates
            .iter()
            .map(|c| c.chars().collect())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A.5: "The main bijection maps digits 0 through 9 to letters a through j. A second
    /// mapping to etaoinshrd uses twelve fixed bases." Both letter alphabets are the images of
    /// the digits in digit order, ten symbols each ("Mapping digits 0–9 to letters a–j
    /// preserves strings, candidate geometry and ten local choices", B.4).
    #[test]
    fn letter_encodings_are_the_images_of_the_digits_in_digit_order() {
        let digits = Domain::SymbolicDigits.alphabet();
        assert_eq!(digits, &DIGITS);
        let aj: String = Domain::SymbolicLetters.alphabet().iter().collect();
        assert_eq!(aj, "abcdefghij");
        let etaoin: String = Domain::SymbolicEtaoin.alphabet().iter().collect();
        assert_eq!(etaoin, "etaoinshrd");
        for letters in [Domain::SymbolicLetters, Domain::SymbolicEtaoin] {
            let a = letters.alphabet();
            assert_eq!(a.len(), 10);
            let distinct: std::collections::BTreeSet<&char> = a.iter().collect();
            assert_eq!(distinct.len(), 10, "{letters}: a bijection");
            assert!(a.iter().all(|c| c.is_ascii_lowercase()));
        }
        // Either letter encoding may be answered with any lowercase letter without being
        // malformed (the 26-letter arms of D.7); digits stay digits.
        assert_eq!(Domain::SymbolicEtaoin.output_alphabet(), &LETTERS);
        assert_eq!(Domain::SymbolicLetters.output_alphabet(), &LETTERS);
        assert_eq!(Domain::SymbolicDigits.output_alphabet(), &DIGITS);
    }

    #[test]
    fn every_domain_round_trips_and_the_natural_ones_are_unchanged() {
        assert_eq!(Domain::NATURAL, [Domain::Arithmetic, Domain::Lexical]);
        assert_eq!(Domain::ALL.len(), 7);
        for d in Domain::ALL {
            assert_eq!(Domain::parse(d.as_str()), Some(d));
            let json = serde_json::to_string(&d).unwrap();
            assert_eq!(json, format!("\"{}\"", d.as_str()));
            assert_eq!(serde_json::from_str::<Domain>(&json).unwrap(), d);
            assert_eq!(
                d.is_symbolic() || d.is_semantic(),
                !Domain::NATURAL.contains(&d)
            );
        }
        assert_eq!(
            Domain::parse("symbolic_etaoin"),
            Some(Domain::SymbolicEtaoin)
        );
        for p in [
            SymbolicPanel::CopyReverse,
            SymbolicPanel::TwelveCharacter,
            SymbolicPanel::Binding,
        ] {
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.as_str()));
        }
    }

    /// Validation holds an etaoinshrd item to its ten letters.
    #[test]
    fn etaoin_items_validate_against_their_alphabet() {
        let item = |candidates: &str| {
            crate::parse_item(
                &format!(
                    r#"{{"item_id":"x","domain":"symbolic_etaoin","problem":"Copy this string exactly: nhn",
                       "target":"nhn","candidates":{candidates}}}"#
                ),
                &Default::default(),
            )
        };
        let ok = item(r#"["nhn","nhd","ahn","ahd","ihn","ihd","shn","shd"]"#).unwrap();
        assert_eq!(ok.domain, Domain::SymbolicEtaoin);
        assert_eq!(ok.k_vector, vec![8, 2, 2, 1]);
        // `b` is a letter, but not one of the encoding's ten.
        let err = item(r#"["nhn","nhb","ahn","ahd","ihn","ihd","shn","shd"]"#).unwrap_err();
        assert!(err.to_string().contains("symbolic_etaoin"), "{err}");
    }
}
