//! Reader for wordfreq's packed frequency lists (`large_en.msgpack.gz`, wordfreq 3.1.1).
//!
//! The file is a gzip-compressed msgpack array. Its first element is a header map
//! `{"format": "cB", "version": 1}`; every further element `i` (counting from 0 after the
//! header) is an array of the words whose frequency rounds to −i centibels, so their Zipf
//! frequency is `9 − i/100` (wordfreq's `zipf_frequency`, rounded to two decimals).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use flate2::read::GzDecoder;
use rmpv::Value;
use sha2::{Digest, Sha256};

use crate::wordnet::SourceError;

/// Why a decoded msgpack value is not a wordfreq `cB` list ([`ZipfTable::from_value`]);
/// [`SourceError::Format`] adds the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZipfFormatError {
    /// The value is not an array.
    #[error("top level is not an array")]
    NotArray,
    /// The array is empty, so it has no header.
    #[error("empty array: no header")]
    NoHeader,
    /// The array's first element is not a map.
    #[error("first element is not the header map")]
    HeaderNotMap,
    /// The header has no `format` string.
    #[error("header has no string `format`")]
    NoFormat,
    /// The header's `format` is not `cB`.
    #[error("unsupported format `{format}` (expected `cB`)")]
    UnsupportedFormat {
        /// The format named.
        format: String,
    },
    /// The header has no integer `version`.
    #[error("header has no integer `version`")]
    NoVersion,
    /// The header's `version` is not 1.
    #[error("unsupported cB version {version} (expected 1)")]
    UnsupportedVersion {
        /// The version named.
        version: i64,
    },
    /// A bucket after the header is not an array of words.
    #[error("bucket {bucket} is not an array")]
    BucketNotArray {
        /// The bucket's index (centibels below 0).
        bucket: usize,
    },
    /// More buckets than a `u32` counts.
    #[error("too many buckets")]
    TooManyBuckets,
    /// A bucket holds something other than a string.
    #[error("bucket {bucket} holds a non-string entry")]
    NonStringEntry {
        /// The bucket's index (centibels below 0).
        bucket: u32,
    },
}

/// Zipf frequencies of one wordfreq list. Lookups only: iteration order never matters.
#[derive(Debug, Clone)]
pub struct ZipfTable {
    /// word → bucket index (centibels below 0).
    buckets: HashMap<String, u32>,
    format: String,
    format_version: i64,
    sha256: String,
    path: PathBuf,
}

/// Zipf frequency of bucket `i`, rounded to two decimals as wordfreq does.
pub fn bucket_to_zipf(i: u32) -> f64 {
    round2(9.0 - f64::from(i) / 100.0)
}

/// Round to two decimals (wordfreq's `round(zipf, 2)`).
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

impl ZipfTable {
    /// Load a `*.msgpack.gz` wordfreq list.
    pub fn load(path: impl AsRef<Path>) -> Result<ZipfTable, SourceError> {
        let path = path.as_ref();
        let compressed = std::fs::read(path).map_err(|e| SourceError::io(path, e))?;
        let sha256 = hex::encode(Sha256::digest(&compressed));
        let mut raw = Vec::new();
        GzDecoder::new(compressed.as_slice())
            .read_to_end(&mut raw)
            .map_err(|e| SourceError::format(path, format!("not a gzip stream: {e}")))?;
        let value = rmpv::decode::read_value(&mut raw.as_slice())
            .map_err(|e| SourceError::format(path, format!("not a msgpack value: {e}")))?;
        let mut table =
            ZipfTable::from_value(&value).map_err(|e| SourceError::format(path, e.to_string()))?;
        table.sha256 = sha256;
        table.path = path.to_path_buf();
        Ok(table)
    }

    /// Build from an already-decoded msgpack value (header + buckets).
    pub fn from_value(value: &Value) -> Result<ZipfTable, ZipfFormatError> {
        let Value::Array(items) = value else {
            return Err(ZipfFormatError::NotArray);
        };
        let Some((header, buckets)) = items.split_first() else {
            return Err(ZipfFormatError::NoHeader);
        };
        let Value::Map(entries) = header else {
            return Err(ZipfFormatError::HeaderNotMap);
        };
        let field = |name: &str| {
            entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(name))
                .map(|(_, v)| v)
        };
        let format = field("format")
            .and_then(Value::as_str)
            .ok_or(ZipfFormatError::NoFormat)?
            .to_string();
        if format != "cB" {
            return Err(ZipfFormatError::UnsupportedFormat { format });
        }
        let format_version = field("version")
            .and_then(Value::as_i64)
            .ok_or(ZipfFormatError::NoVersion)?;
        if format_version != 1 {
            return Err(ZipfFormatError::UnsupportedVersion {
                version: format_version,
            });
        }
        let mut map = HashMap::new();
        for (i, bucket) in buckets.iter().enumerate() {
            let Value::Array(words) = bucket else {
                return Err(ZipfFormatError::BucketNotArray { bucket: i });
            };
            let i = u32::try_from(i).map_err(|_| ZipfFormatError::TooManyBuckets)?;
            for w in words {
                let word = w
                    .as_str()
                    .ok_or(ZipfFormatError::NonStringEntry { bucket: i })?;
                // wordfreq builds its dict bucket by bucket, so a later bucket wins.
                map.insert(word.to_string(), i);
            }
        }
        Ok(ZipfTable {
            buckets: map,
            format,
            format_version,
            sha256: String::new(),
            path: PathBuf::new(),
        })
    }

    /// Build from (word, Zipf) pairs; for tests and fixtures. Zipf is snapped to a bucket.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, f64)>) -> ZipfTable {
        let buckets = pairs
            .into_iter()
            .map(|(w, z)| (w.to_string(), ((9.0 - z) * 100.0).round().max(0.0) as u32))
            .collect();
        ZipfTable {
            buckets,
            format: "cB".into(),
            format_version: 1,
            sha256: String::new(),
            path: PathBuf::new(),
        }
    }

    /// Zipf frequency of `word` (exact lookup, rounded to two decimals); 0.0 when absent.
    pub fn zipf(&self, word: &str) -> f64 {
        self.buckets.get(word).map_or(0.0, |&i| bucket_to_zipf(i))
    }

    /// Number of words in the list.
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    /// Whether the list holds no words (every lookup then gives 0.0).
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Version string for provenance: the list's format and its content digest.
    pub fn version(&self) -> String {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "<in-memory>".into());
        format!(
            "wordfreq {name} (format {} v{}, sha256 {})",
            self.format,
            self.format_version,
            if self.sha256.is_empty() {
                "-"
            } else {
                &self.sha256
            }
        )
    }

    /// SHA-256 of the compressed file (empty for in-memory tables).
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use std::io::Write;

    fn pack(header: Value, buckets: Vec<Vec<&str>>) -> Value {
        let mut items = vec![header];
        for b in buckets {
            items.push(Value::Array(b.into_iter().map(Value::from).collect()));
        }
        Value::Array(items)
    }

    fn header() -> Value {
        Value::Map(vec![
            (Value::from("format"), Value::from("cB")),
            (Value::from("version"), Value::from(1)),
        ])
    }

    #[test]
    fn zipf_is_nine_minus_bucket_over_hundred() {
        let mut buckets = vec![vec![]; 300];
        buckets[0] = vec!["the"];
        buckets[163] = vec!["dog", "cat"];
        buckets[299] = vec!["aardvark"];
        let t = ZipfTable::from_value(&pack(header(), buckets)).unwrap();
        assert_eq!(t.zipf("the"), 9.0);
        assert_eq!(t.zipf("dog"), 7.37);
        assert_eq!(t.zipf("cat"), 7.37);
        assert_eq!(t.zipf("aardvark"), 6.01);
        assert_eq!(t.zipf("zzzz"), 0.0);
        assert_eq!(t.len(), 4);
    }

    #[test]
    fn rejects_bad_header() {
        let bad = Value::Map(vec![(Value::from("format"), Value::from("xx"))]);
        assert!(ZipfTable::from_value(&pack(bad, vec![])).is_err());
        assert!(ZipfTable::from_value(&Value::from(3)).is_err());
    }

    #[test]
    fn format_errors_keep_their_messages() {
        let err = |value: &Value| ZipfTable::from_value(value).unwrap_err().to_string();
        assert_eq!(err(&Value::from(3)), "top level is not an array");
        assert_eq!(err(&Value::Array(vec![])), "empty array: no header");
        assert_eq!(
            err(&Value::Array(vec![Value::from(1)])),
            "first element is not the header map"
        );
        assert_eq!(
            err(&pack(Value::Map(vec![]), vec![])),
            "header has no string `format`"
        );
        let bad = Value::Map(vec![(Value::from("format"), Value::from("xx"))]);
        assert_eq!(
            ZipfTable::from_value(&pack(bad, vec![])).unwrap_err(),
            ZipfFormatError::UnsupportedFormat {
                format: "xx".into()
            }
        );
        let no_version = Value::Map(vec![(Value::from("format"), Value::from("cB"))]);
        assert_eq!(
            err(&pack(no_version, vec![])),
            "header has no integer `version`"
        );
        let v2 = Value::Map(vec![
            (Value::from("format"), Value::from("cB")),
            (Value::from("version"), Value::from(2)),
        ]);
        assert_eq!(
            err(&pack(v2, vec![])),
            "unsupported cB version 2 (expected 1)"
        );
        let not_array = Value::Array(vec![header(), Value::Array(vec![]), Value::from(1)]);
        assert_eq!(err(&not_array), "bucket 1 is not an array");
        let non_string = Value::Array(vec![header(), Value::Array(vec![Value::from(1)])]);
        assert_eq!(err(&non_string), "bucket 0 holds a non-string entry");
        assert_eq!(
            ZipfFormatError::TooManyBuckets.to_string(),
            "too many buckets"
        );
    }

    #[test]
    fn loads_gzip_file_and_reports_errors_with_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mini.msgpack.gz");
        let mut buf = Vec::new();
        rmpv::encode::write_value(&mut buf, &pack(header(), vec![vec![], vec!["word"]])).unwrap();
        let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&buf).unwrap();
        std::fs::write(&path, gz.finish().unwrap()).unwrap();
        let t = ZipfTable::load(&path).unwrap();
        assert_eq!(t.zipf("word"), 8.99);
        assert!(t.version().contains("mini.msgpack.gz"));
        assert_eq!(t.sha256().len(), 64);

        let missing = ZipfTable::load(dir.path().join("nope.gz")).unwrap_err();
        assert!(missing.to_string().contains("nope.gz"), "{missing}");
        std::fs::write(&path, b"plain text").unwrap();
        let err = ZipfTable::load(&path).unwrap_err();
        assert!(err.to_string().contains("gzip"), "{err}");
    }
}
