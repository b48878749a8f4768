//! `[run]`: the run's identity, seeds, accepted lengths and failure policy.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use c2s_records::RequestLayout;

/// `[run]`: identity and seeds of the run.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Free-form name, recorded in the manifest.
    pub name: String,
    /// Seed of option display orders and code bindings.
    pub option_seed: u64,
    /// Shortest accepted target length (default 3); shorter items go to `rejects/`.
    pub min_length: usize,
    /// Longest accepted target length (default 8); longer items go to `rejects/`.
    pub max_length: usize,
    /// Key order of the user JSON of every request: `paper` (state first, E.2/E.5; the
    /// default) or `state_last` (not the paper's; labelled `/state-last` in every arm label).
    pub request_layout: RequestLayout,
    /// WordNet 3.0 `dict` directory whose index files classify lexical outputs (D.17: indexed
    /// noun / indexed word / unindexed). Without it those outputs are `outside` (a warning
    /// says so).
    pub wordnet_dir: PathBuf,
    /// Duplicate item ids are rejected against every id of the run (0, the default, exact)
    /// or, with N > 0, against the last N ids only (bounded memory for endless streams). A
    /// duplicate further apart is not rejected: it runs again, and its rows repeat the item
    /// (`choice2seq stats` then refuses the directory as holding a repeated item).
    pub duplicate_id_window: usize,
    /// The run fails (exit 3) when more than this share of its computed model requests
    /// failed (0 to 1; 1 never fails on the share alone).
    pub max_failed_share: f64,
    /// Stop early (exit 3) once this many model requests in a row failed with the same error
    /// before any request was answered (0: never stop early).
    pub stop_after_identical_failures: u64,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            name: "run".into(),
            option_seed: 20261005,
            min_length: 3,
            max_length: 8,
            request_layout: RequestLayout::Paper,
            wordnet_dir: PathBuf::from("/usr/share/wordnet"),
            duplicate_id_window: 0,
            max_failed_share: 0.5,
            stop_after_identical_failures: 32,
        }
    }
}

impl RunSection {
    /// Check the lengths and the failure share; errors are (field, message).
    pub(crate) fn check(&self) -> Result<(), (String, String)> {
        if self.min_length == 0 || self.min_length > self.max_length {
            return Err((
                "run.min_length".into(),
                format!(
                    "min_length {} must be at least 1 and at most max_length {}",
                    self.min_length, self.max_length
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.max_failed_share) {
            return Err((
                "run.max_failed_share".into(),
                format!(
                    "max_failed_share {} must be between 0 and 1",
                    self.max_failed_share
                ),
            ));
        }
        Ok(())
    }
}
