//! Frozen bank files: building all four banks from the sources, writing them as JSONL with a
//! provenance file, reading them back, and summarizing them (`choice2seq bank stats`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;

use c2s_records::{parse_item, Domain, Item, ItemError, ItemPolicy};

use crate::arithmetic::{build_paired_items, select_operands, ArithmeticError, ArithmeticQuota};
use crate::lexical::build_lexical;
use crate::wordfreq::ZipfTable;
use crate::wordnet::WordNet;

/// Version of the generators; bump when any output byte changes.
/// 2: operands may be 1 (A.2 "Positive operands") and problems use Figure 1's surface
/// "a × b = ?" (1: operands ≥ 2, "What is a * b?").
pub const GENERATOR_VERSION: &str = "choice2seq-banks/2";

/// Default bank seed.
pub const DEFAULT_SEED: u64 = 20261005;

/// File names under the bank directory.
pub const ARITHMETIC_TEST: &str = "arithmetic-test.jsonl";
/// The lexical test bank: the K-vector partners of [`ARITHMETIC_TEST`].
pub const LEXICAL_TEST: &str = "lexical-test.jsonl";
/// The arithmetic dev bank, disjoint from test.
pub const ARITHMETIC_DEV: &str = "arithmetic-dev.jsonl";
/// The lexical dev bank: the K-vector partners of [`ARITHMETIC_DEV`].
pub const LEXICAL_DEV: &str = "lexical-dev.jsonl";
/// The [`Provenance`] of the four banks.
pub const PROVENANCE: &str = "provenance.json";

/// A failure building, writing or reading bank files.
#[derive(Debug, Error)]
pub enum BankFileError {
    /// A file or directory could not be created, written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory that failed.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// A line of a bank file is not a valid item, or repeats an id.
    #[error("{path}:{line}: {error}")]
    Item {
        /// The bank file.
        path: PathBuf,
        /// 1-based line number, blank lines counted.
        line: usize,
        /// The rule the item breaks.
        error: ItemError,
    },
    /// A source did not load, or the lexical generator could not meet its quotas.
    #[error("{0}")]
    Build(String),
    /// The arithmetic operands could not be selected or paired with the lexical items.
    #[error(transparent)]
    Arithmetic(#[from] ArithmeticError),
}

/// Where the sources of the lexical bank live.
#[derive(Debug, Clone)]
pub struct Sources {
    /// WordNet 3.0 database directory (Debian: /usr/share/wordnet).
    pub wordnet_dir: PathBuf,
    /// wordfreq's `large_en.msgpack.gz`.
    pub wordfreq_file: PathBuf,
}

/// All four banks and their provenance.
#[derive(Debug, Clone)]
pub struct Banks {
    /// Items of [`ARITHMETIC_TEST`], each naming its lexical partner.
    pub arithmetic_test: Vec<Item>,
    /// Items of [`LEXICAL_TEST`], each naming its arithmetic partner.
    pub lexical_test: Vec<Item>,
    /// Items of [`ARITHMETIC_DEV`].
    pub arithmetic_dev: Vec<Item>,
    /// Items of [`LEXICAL_DEV`].
    pub lexical_dev: Vec<Item>,
    /// The provenance; its `files` stay empty until [`write_banks`] fills them.
    pub provenance: Provenance,
}

/// Provenance written beside the banks. Holds no timestamps, so rebuilding is byte-identical.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Provenance {
    /// [`GENERATOR_VERSION`] of the build.
    pub generator_version: String,
    /// Bank seed every generator's stream derives from.
    pub seed: u64,
    /// WordNet 3.0 and the digests of `data.noun`, `index.noun` and `noun.exc`.
    pub wordnet: SourceRecord,
    /// wordfreq 3.1.1's `large_en` list and the digest of its file.
    pub wordfreq: SourceRecord,
    /// Lexical screening: how many words, senses or distractors each rule excluded.
    pub lexical_exclusions: BTreeMap<String, u64>,
    /// Lexical quotas and attempt bounds.
    pub lexical_config: serde_json::Value,
    /// Lexical items per (split, length, frequency stratum, repeated letters) cell: quota,
    /// accepted ranks available, ranks selected.
    pub lexical_cells: serde_json::Value,
    /// Attempts and acceptances of each lexical construction stream.
    pub lexical_streams: serde_json::Value,
    /// Arithmetic pool medians of total carries per "L<length>/<structure>".
    pub arithmetic_carry_medians: BTreeMap<String, f64>,
    /// Operand pairs drawn per (length, structure) pool.
    pub arithmetic_pool_size: usize,
    /// The arithmetic rules the bank was built with: problem surface, smallest operand, which
    /// carries are counted (each with the paper passage it follows).
    #[serde(default)]
    pub arithmetic_rules: BTreeMap<String, String>,
    /// SHA-256 of each bank file.
    pub files: BTreeMap<String, String>,
}

/// A source file's identity.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SourceRecord {
    /// Source name (`WordNet`, `wordfreq large_en`).
    pub name: String,
    /// Source release (`3.0`, `3.1.1`); recorded, not read from the files.
    pub version: String,
    /// SHA-256 of the files read, by file name.
    pub sha256: BTreeMap<String, String>,
}

fn sha256_file(path: &Path) -> Result<String, BankFileError> {
    let bytes = std::fs::read(path).map_err(|source| BankFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(sha256_hex(&bytes))
}

/// Lowercase hex SHA-256 of `bytes`, as recorded for bank files and sources.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Build every bank from the sources: lexical first, then arithmetic items paired to lexical
/// items of the same length, taking their K vectors.
pub fn build_banks(sources: &Sources, seed: u64) -> Result<Banks, BankFileError> {
    let wn =
        WordNet::load(&sources.wordnet_dir).map_err(|e| BankFileError::Build(e.to_string()))?;
    let zipf =
        ZipfTable::load(&sources.wordfreq_file).map_err(|e| BankFileError::Build(e.to_string()))?;
    let lexical =
        build_lexical(&wn, &zipf, seed).map_err(|e| BankFileError::Build(e.to_string()))?;
    let quota = ArithmeticQuota::default();
    let selection = select_operands(seed, quota)?;
    let mut lexical_test = lexical.test;
    let mut lexical_dev = lexical.dev;
    let arithmetic_test = build_paired_items("test", &selection.test, &mut lexical_test, seed)?;
    let arithmetic_dev = build_paired_items("dev", &selection.dev, &mut lexical_dev, seed ^ 0xDE5)?;
    let mut wn_files = BTreeMap::new();
    for f in ["data.noun", "index.noun", "noun.exc"] {
        wn_files.insert(f.to_string(), sha256_file(&sources.wordnet_dir.join(f))?);
    }
    let mut wf_files = BTreeMap::new();
    wf_files.insert(
        "large_en.msgpack.gz".to_string(),
        sha256_file(&sources.wordfreq_file)?,
    );
    let provenance = Provenance {
        generator_version: GENERATOR_VERSION.into(),
        seed,
        wordnet: SourceRecord {
            name: "WordNet".into(),
            version: "3.0".into(),
            sha256: wn_files,
        },
        wordfreq: SourceRecord {
            name: "wordfreq large_en".into(),
            version: "3.1.1".into(),
            sha256: wf_files,
        },
        lexical_exclusions: lexical.exclusions,
        lexical_config: serde_json::to_value(&lexical.provenance.config).unwrap_or_default(),
        lexical_cells: serde_json::to_value(&lexical.cell_counts).unwrap_or_default(),
        lexical_streams: serde_json::to_value(&lexical.streams).unwrap_or_default(),
        arithmetic_carry_medians: selection
            .medians
            .iter()
            .map(|((l, s), m)| (format!("L{l}/{s:?}").to_lowercase(), *m))
            .collect(),
        arithmetic_pool_size: quota.pool_size,
        arithmetic_rules: arithmetic_rules(),
        files: BTreeMap::new(),
    };
    Ok(Banks {
        arithmetic_test,
        lexical_test,
        arithmetic_dev,
        lexical_dev,
        provenance,
    })
}

/// The arithmetic rules recorded in the provenance.
pub fn arithmetic_rules() -> BTreeMap<String, String> {
    [
        (
            "problem_surface",
            format!(
                "{} (Figure 1: \"39 × 15 = ?\"; the prompts of Appendix E give no surface)",
                crate::arithmetic::PROBLEM_SURFACE
            ),
        ),
        (
            "operand_minimum",
            "1 (A.2: \"Positive operands have products of exactly L digits\")".to_string(),
        ),
        (
            "counted_carries",
            "positive outgoing carries passed to a further column within a row multiplication \
             or the partial-product summation; the carry out of the last column is written \
             down as the leading digit and kept in the traces only (A.2: \"positive outgoing \
             carries within each multiplication row and the final partial product summation\")"
                .to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// JSONL text of `items`: one compact JSON object per line.
pub fn to_jsonl(items: &[Item]) -> String {
    let mut out = String::new();
    for it in items {
        // Items are plain data; serialization cannot fail.
        out.push_str(&serde_json::to_string(it).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// Write the four banks and `provenance.json` into `dir`.
pub fn write_banks(banks: &mut Banks, dir: &Path) -> Result<(), BankFileError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BankFileError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    for (name, items) in [
        (ARITHMETIC_TEST, &banks.arithmetic_test),
        (LEXICAL_TEST, &banks.lexical_test),
        (ARITHMETIC_DEV, &banks.arithmetic_dev),
        (LEXICAL_DEV, &banks.lexical_dev),
    ] {
        let text = to_jsonl(items);
        banks
            .provenance
            .files
            .insert(name.to_string(), sha256_hex(text.as_bytes()));
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(io(&path))?;
    }
    let path = dir.join(PROVENANCE);
    let mut text = serde_json::to_string_pretty(&banks.provenance).unwrap_or_default();
    text.push('\n');
    std::fs::write(&path, text).map_err(io(&path))?;
    Ok(())
}

/// Read and validate a JSONL bank. Errors name the file and line.
pub fn read_bank(path: &Path, policy: &ItemPolicy) -> Result<Vec<Item>, BankFileError> {
    let file = std::fs::File::open(path).map_err(|source| BankFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut items = Vec::new();
    let mut guard = c2s_records::DuplicateIdGuard::default();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|source| BankFileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let item_err = |error| BankFileError::Item {
            path: path.to_path_buf(),
            line: i + 1,
            error,
        };
        let item = parse_item(&line, policy).map_err(item_err)?;
        guard.admit(&item).map_err(item_err)?;
        items.push(item);
    }
    Ok(items)
}

/// Human-readable summary of a bank: per-length counts, strata and geometry.
pub fn bank_stats(items: &[Item]) -> String {
    let mut out = String::new();
    let domains: BTreeMap<Domain, usize> = items.iter().fold(BTreeMap::new(), |mut m, it| {
        *m.entry(it.domain).or_default() += 1;
        m
    });
    let _ = writeln!(out, "items: {}", items.len());
    for (d, n) in &domains {
        let _ = writeln!(out, "domain {d}: {n}");
    }
    let mut by_len: BTreeMap<usize, Vec<&Item>> = BTreeMap::new();
    for it in items {
        by_len.entry(it.length).or_default().push(it);
    }
    let _ = writeln!(out, "\nper length:");
    let _ = writeln!(
        out,
        "{:>3} {:>5} {:>8} {:>8} {:>10} {:>12}",
        "L", "items", "K(0)=8", "K(1)=2", "partnered", "mean H(bits)"
    );
    for (l, its) in &by_len {
        let k0 = its
            .iter()
            .filter(|i| i.k_vector.first() == Some(&8))
            .count();
        let k1 = its.iter().filter(|i| i.k_vector.get(1) == Some(&2)).count();
        let partnered = its.iter().filter(|i| i.partner_id.is_some()).count();
        let mean_h: f64 = its
            .iter()
            .filter_map(|i| i.geometry.as_ref().map(|g| g.mean_entropy))
            .sum::<f64>()
            / its.len().max(1) as f64;
        let _ = writeln!(
            out,
            "{l:>3} {:>5} {k0:>8} {k1:>8} {partnered:>10} {mean_h:>12.3}",
            its.len()
        );
    }
    // Strata.
    let mut strata: BTreeMap<(usize, String), usize> = BTreeMap::new();
    for it in items {
        let cell = if let Some(a) = &it.arithmetic {
            format!("{:?}/{:?}", a.structure, a.carry_class).to_lowercase()
        } else if let Some(x) = &it.lexical {
            format!(
                "zipf-{:?}/{}",
                x.frequency_stratum,
                if x.repeated_letters {
                    "repeated"
                } else {
                    "distinct"
                }
            )
            .to_lowercase()
        } else {
            "unstratified".into()
        };
        *strata.entry((it.length, cell)).or_default() += 1;
    }
    let cells: std::collections::BTreeSet<&String> = strata.keys().map(|(_, c)| c).collect();
    let _ = writeln!(out, "\nstrata (items per length and cell):");
    let _ = write!(out, "{:>3}", "L");
    for c in &cells {
        let _ = write!(out, " {c:>22}");
    }
    let _ = writeln!(out);
    for l in by_len.keys() {
        let _ = write!(out, "{l:>3}");
        for c in &cells {
            let n = strata.get(&(*l, (*c).clone())).copied().unwrap_or(0);
            let _ = write!(out, " {n:>22}");
        }
        let _ = writeln!(out);
    }
    let mut totals: BTreeMap<String, usize> = BTreeMap::new();
    for it in items {
        if let Some(a) = &it.arithmetic {
            *totals
                .entry(format!("{:?}", a.structure).to_lowercase())
                .or_default() += 1;
        }
    }
    if !totals.is_empty() {
        let shown: Vec<String> = totals.iter().map(|(k, v)| format!("{v} {k}")).collect();
        let _ = writeln!(out, "structure totals: {}", shown.join(" / "));
    }
    // Geometry along the gold path.
    let mut first_unique: BTreeMap<usize, usize> = BTreeMap::new();
    for it in items {
        if let Some(g) = &it.geometry {
            *first_unique.entry(g.first_unique_prefix).or_default() += 1;
        }
    }
    let shown: Vec<String> = first_unique
        .iter()
        .map(|(k, v)| format!("{k}:{v}"))
        .collect();
    let _ = writeln!(out, "\nfirst unique prefix (k:items): {}", shown.join(" "));
    let mut kvecs: BTreeMap<String, usize> = BTreeMap::new();
    for it in items {
        *kvecs.entry(format!("{:?}", it.k_vector)).or_default() += 1;
    }
    let _ = writeln!(out, "K vectors: {} distinct", kvecs.len());
    for (k, n) in kvecs.iter().take(12) {
        let _ = writeln!(out, "  {k}: {n}");
    }
    out
}
