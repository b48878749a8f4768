//! JSONL bank files: one item object per line.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::{SourceError, SourceRecord};

/// Open a JSONL bank file and iterate over its records.
///
/// Blank (whitespace-only) lines are skipped but still counted, so locations are the line
/// numbers an editor shows (1-based). A line that is not valid UTF-8 becomes a record whose
/// payload is an error naming the line; a read error ends the iteration with one such record.
/// `limit` caps the number of records delivered (error records included).
pub fn read_jsonl(
    path: impl AsRef<Path>,
    limit: Option<usize>,
) -> Result<JsonlRecords, SourceError> {
    let path = path.as_ref().to_path_buf();
    let file = File::open(&path).map_err(|source| SourceError::Open {
        path: path.clone(),
        source,
    })?;
    Ok(JsonlRecords {
        source: format!("jsonl:{}", path.display()),
        display: path.display().to_string(),
        path,
        reader: BufReader::new(file),
        line: 0,
        delivered: 0,
        limit,
        done: false,
        buf: Vec::new(),
    })
}

/// Records of a JSONL file; see [`read_jsonl`].
#[derive(Debug)]
pub struct JsonlRecords {
    path: PathBuf,
    source: String,
    display: String,
    reader: BufReader<File>,
    line: usize,
    delivered: usize,
    limit: Option<usize>,
    done: bool,
    buf: Vec<u8>,
}

impl JsonlRecords {
    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn record(&mut self, payload: Result<String, String>) -> SourceRecord {
        self.delivered += 1;
        SourceRecord {
            source: self.source.clone(),
            location: format!("{}:{}", self.display, self.line),
            payload,
            kafka: None,
        }
    }
}

impl Iterator for JsonlRecords {
    type Item = SourceRecord;

    fn next(&mut self) -> Option<SourceRecord> {
        loop {
            if self.done || self.limit.is_some_and(|l| self.delivered >= l) {
                return None;
            }
            self.buf.clear();
            self.line += 1;
            match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => {
                    self.done = true;
                    return None;
                }
                Ok(_) => {}
                Err(e) => {
                    self.done = true;
                    let msg = format!("{}:{}: read error: {e}", self.display, self.line);
                    return Some(self.record(Err(msg)));
                }
            }
            let mut bytes = self.buf.as_slice();
            if let Some(rest) = bytes.strip_suffix(b"\n") {
                bytes = rest;
            }
            if let Some(rest) = bytes.strip_suffix(b"\r") {
                bytes = rest;
            }
            if self.line == 1 {
                if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
                    bytes = rest; // UTF-8 byte-order mark
                }
            }
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let payload = match std::str::from_utf8(bytes) {
                Ok(text) => Ok(text.to_owned()),
                Err(e) => Err(format!(
                    "{}:{}: line is not valid UTF-8 (invalid byte at column {})",
                    self.display,
                    self.line,
                    e.valid_up_to() + 1
                )),
            };
            return Some(self.record(payload));
        }
    }
}
