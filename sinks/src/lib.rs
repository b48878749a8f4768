//! Rolling Parquet sinks and the run manifest.
//!
//! A run directory holds the Parquet datasets below (which of them depends on the run's kind:
//! items, candidate coverage or dialogue), each a directory of rolling part files
//! `part-w<worker>-<seq:06>.parquet` (every part a complete Parquet file, zstd-compressed),
//! and `manifest.json`:
//!
//! | dataset | row type | one row per |
//! |---|---|---|
//! | `requests/` | [`RequestRow`] | model request (with its response or error) |
//! | `trajectories/` | [`TrajectoryRow`] | completed (item, arm) trajectory |
//! | `outcomes/` | [`OutcomeRow`] | paired Native/Serial outcome of an item |
//! | `metrics/` | [`MetricsRow`] | metric of a statistics snapshot |
//! | `rejects/` | [`RejectRow`] | rejected input |
//! | `prompts/` | [`PromptRow`] | distinct prompt of a run (its rendered text), written once |
//! | `decisions/` | [`DecisionRow`] | scored request of a candidate-coverage case |
//! | `dialogue_turns/` | [`FieldTurnRow`] | field of a user turn of a dialogue run |
//!
//! Column names, types and meanings are documented in `SCHEMAS.md`. [`PartWriter`] buffers
//! rows and rolls parts atomically (hidden temporary name, fsync, rename, directory fsync),
//! so `pyarrow.dataset`, polars and DuckDB (`read_parquet('RUN/metrics/*.parquet')`) can open
//! a dataset at any moment of the run. The readers in [`read`] serve resume and offline
//! statistics.

#![deny(missing_docs)]

pub mod codes;
mod columns;
pub mod decisions;
pub mod dialogue;
pub mod error;
mod fsutil;
pub mod manifest;
pub mod metrics;
pub mod outcomes;
pub mod part;
pub mod prompts;
pub mod read;
pub mod rejects;
pub mod requests;
pub mod row;
pub mod trajectories;

pub use decisions::DecisionRow;
pub use dialogue::FieldTurnRow;
pub use error::{RowError, SinkError};
pub use manifest::{
    file_sha256, now_ms, read_manifest, write_manifest, Manifest, RunState, RunStatus, SourceFile,
    MANIFEST_FILE, MANIFEST_FORMAT,
};
pub use metrics::MetricsRow;
pub use outcomes::OutcomeRow;
pub use part::{is_part_name, parse_part_file_name, part_file_name, PartConfig, PartWriter};
pub use prompts::{find_prompt, read_prompt_keys, read_prompts, text_sha256, PromptRow, Rendering};
pub use read::{
    dataset_dir, find_request, list_parts, max_snapshot, read_decisions, read_field_turns,
    read_metrics, read_outcome_keys, read_outcomes, read_paired_outcomes, read_part, read_rejects,
    read_request_answers, read_requests, read_rows, read_trajectories, read_trajectory_keys,
    read_trajectory_records,
};
pub use rejects::RejectRow;
pub use requests::{response_from_row, RequestRow};
pub use row::{Row, SCHEMA_VERSION};
pub use trajectories::TrajectoryRow;
