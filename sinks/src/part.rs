//! Rolling part files: [`PartWriter`] buffers the rows of one dataset for one writer (worker)
//! and writes them as complete Parquet files `RUN/<dataset>/part-w<worker>-<seq:06>.parquet`.
//!
//! A part is written under a hidden temporary name in the same directory
//! (`.part-w<worker>-<seq>.parquet.tmp`, which `*.parquet` globs of DuckDB, pyarrow and polars
//! do not match), synced, atomically renamed to its final name, and the directory is synced.
//! A reader listing the directory at any moment therefore sees only complete parts. Sequence
//! numbers continue after the parts already present, so a resumed run never overwrites one.

use std::fs::{self, File, OpenOptions};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::error::SinkError;
use crate::fsutil::{sync_dir, temp_path};
use crate::row::{Row, SCHEMA_VERSION};

/// When parts roll and how they are compressed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartConfig {
    /// Roll once this many rows are buffered (at least 1).
    pub part_rows: usize,
    /// Roll once this many seconds have passed since the first buffered row.
    pub part_seconds: f64,
    /// Zstd level (1–22).
    pub zstd_level: i32,
}

impl Default for PartConfig {
    fn default() -> PartConfig {
        PartConfig {
            part_rows: 10_000,
            part_seconds: 30.0,
            zstd_level: 3,
        }
    }
}

/// `part-w<worker>-<seq:06>.parquet`.
pub fn part_file_name(worker: usize, seq: u64) -> String {
    format!("part-w{worker}-{seq:06}.parquet")
}

/// Parses [`part_file_name`] into `(worker, seq)`.
pub fn parse_part_file_name(name: &str) -> Option<(usize, u64)> {
    let rest = name.strip_prefix("part-w")?.strip_suffix(".parquet")?;
    let (worker, seq) = rest.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(worker) || !digits(seq) {
        return None;
    }
    Some((worker.parse().ok()?, seq.parse().ok()?))
}

/// Whether a directory entry name is a complete part (`*.parquet`, not hidden).
pub fn is_part_name(name: &str) -> bool {
    name.ends_with(".parquet") && !name.starts_with('.')
}

/// Buffers rows of dataset `R` for one worker and writes them as rolling part files.
///
/// Rows left buffered when the writer is dropped are lost (a warning is logged): call
/// [`PartWriter::finish`] at the end of a run.
pub struct PartWriter<R: Row> {
    dir: PathBuf,
    worker: usize,
    next_seq: u64,
    part_rows: usize,
    part_interval: Duration,
    props: WriterProperties,
    rows: Vec<R>,
    first_at: Option<Instant>,
    parts_written: u64,
    rows_written: u64,
    _row: PhantomData<fn(R)>,
}

impl<R: Row> std::fmt::Debug for PartWriter<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartWriter")
            .field("dir", &self.dir)
            .field("worker", &self.worker)
            .field("next_seq", &self.next_seq)
            .field("buffered", &self.rows.len())
            .finish()
    }
}

impl<R: Row> PartWriter<R> {
    /// A writer of `run_dir/<R::DATASET>/` for `worker`. Creates the directory, removes this
    /// worker's stale temporary files (parts a killed run did not finish), and continues the
    /// sequence after this worker's existing parts.
    pub fn open(
        run_dir: &Path,
        worker: usize,
        cfg: PartConfig,
    ) -> Result<PartWriter<R>, SinkError> {
        let dir = run_dir.join(R::DATASET);
        let invalid = |message: String| SinkError::Invalid {
            path: dir.clone(),
            message,
        };
        if cfg.part_rows == 0 {
            return Err(invalid("part_rows must be at least 1".into()));
        }
        let part_interval = Duration::try_from_secs_f64(cfg.part_seconds).map_err(|_| {
            invalid(format!(
                "part_seconds must be a finite, non-negative number of seconds, got {}",
                cfg.part_seconds
            ))
        })?;
        let level = ZstdLevel::try_new(cfg.zstd_level)
            .map_err(|e| invalid(format!("zstd_level {}: {e}", cfg.zstd_level)))?;
        let created = !dir.is_dir();
        fs::create_dir_all(&dir).map_err(|e| SinkError::io(&dir, e))?;
        if created {
            sync_dir(run_dir)?;
        }
        let mut max_seq: Option<u64> = None;
        let tmp_prefix = format!(".part-w{worker}-");
        for entry in fs::read_dir(&dir).map_err(|e| SinkError::io(&dir, e))? {
            let entry = entry.map_err(|e| SinkError::io(&dir, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some((w, seq)) = parse_part_file_name(name) {
                if w == worker {
                    max_seq = Some(max_seq.map_or(seq, |m| m.max(seq)));
                }
            } else if name.starts_with(&tmp_prefix) && name.ends_with(".parquet.tmp") {
                let path = entry.path();
                tracing::warn!(path = %path.display(), "removing an unfinished part of an earlier run");
                fs::remove_file(&path).map_err(|e| SinkError::io(&path, e))?;
            }
        }
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_key_value_metadata(Some(vec![
                KeyValue::new("c2s.dataset".to_string(), R::DATASET.to_string()),
                KeyValue::new("c2s.schema_version".to_string(), SCHEMA_VERSION.to_string()),
            ]))
            .build();
        Ok(PartWriter {
            dir,
            worker,
            next_seq: max_seq.map_or(0, |m| m + 1),
            part_rows: cfg.part_rows,
            part_interval,
            props,
            rows: Vec::new(),
            first_at: None,
            parts_written: 0,
            rows_written: 0,
            _row: PhantomData,
        })
    }

    /// The dataset directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The worker whose parts this writer writes (`w<worker>` in their names).
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// The sequence number the next part gets.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The path the next part gets.
    pub fn next_path(&self) -> PathBuf {
        self.dir.join(part_file_name(self.worker, self.next_seq))
    }

    /// Rows buffered and not yet written.
    pub fn buffered(&self) -> usize {
        self.rows.len()
    }

    /// Memory of the buffered rows as Arrow arrays (what a part of them would hold; built
    /// on each call, so for occasional use).
    pub fn buffered_bytes(&self) -> usize {
        if self.rows.is_empty() {
            return 0;
        }
        R::to_batch(&self.rows).map_or(0, |b| b.get_array_memory_size())
    }

    /// Parts and rows written by this writer.
    pub fn written(&self) -> (u64, u64) {
        (self.parts_written, self.rows_written)
    }

    /// Buffers a row (the roll timer starts at the first buffered row).
    pub fn push(&mut self, row: R) {
        self.push_at(row, Instant::now());
    }

    /// Buffers a row received at `now`.
    pub fn push_at(&mut self, row: R, now: Instant) {
        if self.rows.is_empty() {
            self.first_at = Some(now);
        }
        self.rows.push(row);
    }

    /// Buffers rows.
    pub fn extend(&mut self, rows: impl IntoIterator<Item = R>) {
        let now = Instant::now();
        for row in rows {
            self.push_at(row, now);
        }
    }

    /// Whether a roll is due at `now`: `part_rows` rows buffered, or `part_seconds` passed
    /// since the first buffered row.
    pub fn due(&self, now: Instant) -> bool {
        if self.rows.is_empty() {
            return false;
        }
        self.rows.len() >= self.part_rows
            || self
                .first_at
                .is_some_and(|t| now.saturating_duration_since(t) >= self.part_interval)
    }

    /// Rolls when [`PartWriter::due`]; returns the part written.
    pub fn maybe_roll(&mut self, now: Instant) -> Result<Option<PathBuf>, SinkError> {
        if self.due(now) {
            self.roll()
        } else {
            Ok(None)
        }
    }

    /// Writes every buffered row as one part; `None` when nothing is buffered. On error the
    /// rows stay buffered and no part appears.
    pub fn roll(&mut self) -> Result<Option<PathBuf>, SinkError> {
        if self.rows.is_empty() {
            return Ok(None);
        }
        let path = self.next_path();
        write_part(&path, &self.rows, &self.props)?;
        tracing::debug!(path = %path.display(), rows = self.rows.len(), "part written");
        self.next_seq += 1;
        self.parts_written += 1;
        self.rows_written += self.rows.len() as u64;
        self.rows.clear();
        self.first_at = None;
        Ok(Some(path))
    }

    /// Drops the buffered rows unwritten (after giving up on writing them).
    pub fn discard(&mut self) {
        self.rows.clear();
        self.first_at = None;
    }

    /// Rolls whatever is left (call at the end of a run).
    pub fn finish(&mut self) -> Result<Option<PathBuf>, SinkError> {
        self.roll()
    }
}

impl<R: Row> Drop for PartWriter<R> {
    fn drop(&mut self) {
        if !self.rows.is_empty() {
            tracing::warn!(
                dir = %self.dir.display(),
                worker = self.worker,
                rows = self.rows.len(),
                "part writer dropped with unwritten rows"
            );
        }
    }
}

/// Writes `rows` as one complete Parquet file at `path` (temp file, sync, rename, dir sync).
/// Fails without touching `path` if it already exists.
pub(crate) fn write_part<R: Row>(
    path: &Path,
    rows: &[R],
    props: &WriterProperties,
) -> Result<(), SinkError> {
    if path.exists() {
        return Err(SinkError::Invalid {
            path: path.to_path_buf(),
            message: "part already exists; refusing to overwrite it".into(),
        });
    }
    let batch = R::to_batch(rows).map_err(|e| SinkError::arrow(path, e))?;
    let tmp = temp_path(path);
    let result = (|| {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| SinkError::io(&tmp, e))?;
        let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props.clone()))
            .map_err(|e| SinkError::parquet(&tmp, e))?;
        writer
            .write(&batch)
            .map_err(|e| SinkError::parquet(&tmp, e))?;
        let file: File = writer
            .into_inner()
            .map_err(|e| SinkError::parquet(&tmp, e))?;
        file.sync_all().map_err(|e| SinkError::io(&tmp, e))?;
        drop(file);
        fs::rename(&tmp, path).map_err(|e| SinkError::io(path, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    sync_dir(&crate::fsutil::parent_dir(path))
}
