//! A safetensors file's header checked against the file's length: an 8-byte little-endian
//! header length, a JSON header naming each tensor's dtype, shape and `data_offsets` in the
//! data region after it. Each tensor's size must be its dtype × shape, and the tensors must
//! tile the data region exactly (what the `safetensors` crate, which candle loads weights
//! with, requires), so a truncated or inconsistent file is refused naming the tensor.

use std::collections::HashMap;
use std::fmt;
use std::io::Read;

use safetensors::tensor::TensorInfo;
use safetensors::Dtype;
use thiserror::Error;

/// The `safetensors` crate's own limit on a header's length.
const MAX_HEADER_BYTES: u64 = 100_000_000;

/// Why a safetensors file is refused: a header that does not fit or does not parse, or a
/// tensor whose `data_offsets` do not match its dtype and shape or do not tile the data
/// region. Each names the tensor and the offsets involved.
#[derive(Debug, Error)]
pub enum SafetensorsError {
    /// The file cannot hold the 8-byte header length.
    #[error("not a safetensors file: {file_len} bytes, too short for a header")]
    TooShort {
        /// The file's length in bytes.
        file_len: u64,
    },
    /// Reading the header length or the header failed.
    #[error("reading {what}: {source}")]
    Read {
        /// `the header length` or `the header`.
        what: &'static str,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A header length above the `safetensors` crate's limit.
    #[error("the header length is {header_len} bytes (at most {max})", max = MAX_HEADER_BYTES)]
    HeaderTooLong {
        /// The header length the file claims.
        header_len: u64,
    },
    /// A header that runs past the end of the file.
    #[error("the header needs bytes 8..{header_end} but the file has {file_len} bytes")]
    HeaderPastEnd {
        /// The byte after the header's last (8 + its length).
        header_end: u64,
        /// The file's length in bytes.
        file_len: u64,
    },
    /// The header's bytes are not UTF-8.
    #[error("the header is not UTF-8: {0}")]
    NotUtf8(#[source] std::str::Utf8Error),
    /// The header is not the JSON object of tensor entries the format defines.
    #[error("the header is not valid: {0}")]
    InvalidHeader(#[source] serde_json::Error),
    /// `data_offsets` whose end is before their start.
    #[error("{tensor} has data_offsets [{start}, {end}], which end before they start")]
    ReversedOffsets {
        /// The tensor.
        tensor: TensorDescription,
        /// `data_offsets[0]`.
        start: u64,
        /// `data_offsets[1]`.
        end: u64,
    },
    /// A shape whose size in bits overflows u64.
    #[error("{tensor} has more bytes than a file can hold")]
    TooManyBytes {
        /// The tensor.
        tensor: TensorDescription,
    },
    /// A sub-byte dtype whose elements do not fill whole bytes.
    #[error("{tensor} is not a whole number of bytes")]
    PartialByte {
        /// The tensor.
        tensor: TensorDescription,
    },
    /// `data_offsets` that span another size than dtype × shape.
    #[error(
        "{tensor} has data_offsets [{start}, {end}] ({} bytes) but its dtype and shape make \
         {size} bytes",
        end - start
    )]
    SizeMismatch {
        /// The tensor.
        tensor: TensorDescription,
        /// `data_offsets[0]`.
        start: u64,
        /// `data_offsets[1]`.
        end: u64,
        /// The bytes its dtype and shape make.
        size: u64,
    },
    /// A tensor whose bytes run past the end of the file.
    #[error("{tensor} needs bytes {start}..{end} but the file has {file_len} bytes")]
    PastEnd {
        /// The tensor.
        tensor: TensorDescription,
        /// Its first byte in the file.
        start: u64,
        /// The byte after its last, in the file.
        end: u64,
        /// The file's length in bytes.
        file_len: u64,
    },
    /// A tensor that starts before the previous one ends, or after a gap.
    #[error(
        "{tensor} at data_offsets [{start}, {end}] {} tensor `{previous}`, which ends at \
         {covered}",
        if *start < *covered { "overlaps" } else { "leaves a gap after" }
    )]
    NotTiled {
        /// The tensor.
        tensor: TensorDescription,
        /// `data_offsets[0]`.
        start: u64,
        /// `data_offsets[1]`.
        end: u64,
        /// The tensor before it in offset order.
        previous: String,
        /// Where that tensor ends (the data offset this one should start at).
        covered: u64,
    },
    /// The first tensor does not start at data offset 0.
    #[error("{tensor} starts at data offset {start}: the data region must start with a tensor")]
    LeadingGap {
        /// The tensor.
        tensor: TensorDescription,
        /// Its `data_offsets[0]`.
        start: u64,
    },
    /// Bytes after the last tensor that belong to none.
    #[error(
        "the tensors end at data offset {covered} but the file holds {data_len} bytes of \
         data after its header: {} bytes belong to no tensor",
        data_len - covered
    )]
    TrailingBytes {
        /// Where the last tensor ends.
        covered: u64,
        /// The data region's length.
        data_len: u64,
    },
}

/// A tensor as errors name it: `tensor \`name\` (F32, [2, 3])`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorDescription {
    /// The tensor's name.
    pub name: String,
    /// Its dtype.
    pub dtype: Dtype,
    /// Its shape.
    pub shape: Vec<usize>,
}

impl fmt::Display for TensorDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tensor `{}` ({:?}, {:?})",
            self.name, self.dtype, self.shape
        )
    }
}

/// The header: `__metadata__` (free-form strings) and the tensors.
#[derive(serde::Deserialize)]
struct Header {
    #[serde(rename = "__metadata__")]
    _metadata: Option<HashMap<String, String>>,
    #[serde(flatten)]
    tensors: HashMap<String, TensorInfo>,
}

/// A checked header: where the data region starts in the file, and each tensor's dtype, shape
/// and `data_offsets` (relative to the data region).
pub struct SafetensorsHeader {
    /// The file offset of the data region: 8 + the header's length.
    pub data_start: u64,
    /// Every tensor by name; `data_offsets` are relative to `data_start`.
    pub tensors: HashMap<String, TensorInfo>,
}

/// Check the safetensors file read by `reader` (from its start; `file_len` bytes long): only
/// the header is read.
pub fn check_safetensors<R: Read>(reader: &mut R, file_len: u64) -> Result<(), SafetensorsError> {
    read_safetensors_header(reader, file_len).map(|_| ())
}

/// [`check_safetensors`], returning the header it checked (what a loader reads tensors by).
pub fn read_safetensors_header<R: Read>(
    reader: &mut R,
    file_len: u64,
) -> Result<SafetensorsHeader, SafetensorsError> {
    if file_len < 8 {
        return Err(SafetensorsError::TooShort { file_len });
    }
    let mut len_bytes = [0u8; 8];
    reader
        .read_exact(&mut len_bytes)
        .map_err(|source| SafetensorsError::Read {
            what: "the header length",
            source,
        })?;
    let header_len = u64::from_le_bytes(len_bytes);
    if header_len > MAX_HEADER_BYTES {
        return Err(SafetensorsError::HeaderTooLong { header_len });
    }
    if 8 + header_len > file_len {
        return Err(SafetensorsError::HeaderPastEnd {
            header_end: 8 + header_len,
            file_len,
        });
    }
    let mut text = vec![0u8; header_len as usize];
    reader
        .read_exact(&mut text)
        .map_err(|source| SafetensorsError::Read {
            what: "the header",
            source,
        })?;
    let text = std::str::from_utf8(&text).map_err(SafetensorsError::NotUtf8)?;
    let header: Header = serde_json::from_str(text).map_err(SafetensorsError::InvalidHeader)?;
    let data_start = 8 + header_len;
    let data_len = file_len - data_start;
    let mut tensors: Vec<(&String, &TensorInfo)> = header.tensors.iter().collect();
    tensors.sort_by(|a, b| a.1.data_offsets.cmp(&b.1.data_offsets).then(a.0.cmp(b.0)));
    let mut covered = 0u64;
    let mut previous: Option<&str> = None;
    for (name, info) in tensors {
        let described = || TensorDescription {
            name: name.clone(),
            dtype: info.dtype,
            shape: info.shape.clone(),
        };
        let (start, end) = (info.data_offsets.0 as u64, info.data_offsets.1 as u64);
        if end < start {
            return Err(SafetensorsError::ReversedOffsets {
                tensor: described(),
                start,
                end,
            });
        }
        let bits = info
            .shape
            .iter()
            .try_fold(info.dtype.bitsize() as u64, |n, &d| n.checked_mul(d as u64))
            .ok_or_else(|| SafetensorsError::TooManyBytes {
                tensor: described(),
            })?;
        if bits % 8 != 0 {
            return Err(SafetensorsError::PartialByte {
                tensor: described(),
            });
        }
        let size = bits / 8;
        if end - start != size {
            return Err(SafetensorsError::SizeMismatch {
                tensor: described(),
                start,
                end,
                size,
            });
        }
        if end > data_len {
            return Err(SafetensorsError::PastEnd {
                tensor: described(),
                start: data_start + start,
                end: data_start + end,
                file_len,
            });
        }
        if start != covered {
            return Err(match previous {
                Some(prev) => SafetensorsError::NotTiled {
                    tensor: described(),
                    start,
                    end,
                    previous: prev.to_string(),
                    covered,
                },
                None => SafetensorsError::LeadingGap {
                    tensor: described(),
                    start,
                },
            });
        }
        covered = end;
        previous = Some(name);
    }
    if covered != data_len {
        return Err(SafetensorsError::TrailingBytes { covered, data_len });
    }
    Ok(SafetensorsHeader {
        data_start,
        tensors: header.tensors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A safetensors file: `header` as JSON, then `data_len` zero bytes.
    fn file(header: &str, data_len: usize) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend(std::iter::repeat_n(0u8, data_len));
        out
    }

    /// [`check_safetensors`] over `bytes`, its error as the message it prints.
    fn check(bytes: &[u8]) -> Result<(), String> {
        check_safetensors(&mut std::io::Cursor::new(bytes), bytes.len() as u64)
            .map_err(|e| e.to_string())
    }

    const TWO: &str = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"BF16","shape":[4],"data_offsets":[24,32]}}"#;

    #[test]
    fn a_consistent_file_passes() {
        check(&file(TWO, 32)).unwrap();
        check(&file("{}", 0)).unwrap();
    }

    #[test]
    fn a_truncated_file_names_the_tensor_past_its_end() {
        let bytes = file(TWO, 32);
        let e = check(&bytes[..bytes.len() - 5]).unwrap_err();
        assert!(
            e.contains("tensor `b` (BF16, [4]) needs bytes") && e.contains("but the file has"),
            "{e}"
        );
        let e = check(&bytes[..20]).unwrap_err();
        assert!(e.contains("the header needs bytes 8.."), "{e}");
    }

    #[test]
    fn a_size_that_is_not_dtype_times_shape_is_refused() {
        let h = r#"{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}}"#;
        let e = check(&file(h, 20)).unwrap_err();
        assert!(
            e.contains("tensor `a`") && e.contains("(20 bytes)") && e.contains("make 24 bytes"),
            "{e}"
        );
    }

    #[test]
    fn overlapping_tensors_and_gaps_are_refused() {
        let h = r#"{"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[8],"data_offsets":[4,12]}}"#;
        let e = check(&file(h, 12)).unwrap_err();
        assert!(
            e.contains("tensor `b`") && e.contains("overlaps tensor `a`"),
            "{e}"
        );
        let h = r#"{"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[8],"data_offsets":[10,18]}}"#;
        let e = check(&file(h, 18)).unwrap_err();
        assert!(e.contains("leaves a gap after tensor `a`"), "{e}");
        let e = check(&file(TWO, 40)).unwrap_err();
        assert!(e.contains("8 bytes belong to no tensor"), "{e}");
    }

    #[test]
    fn offsets_past_the_end_and_overflowing_shapes_are_refused() {
        let h = r#"{"a":{"dtype":"U8","shape":[8],"data_offsets":[18446744073709551608,18446744073709551615]}}"#;
        assert!(check(&file(h, 8)).is_err());
        let h = r#"{"a":{"dtype":"F64","shape":[4294967296,4294967296,16],"data_offsets":[0,8]}}"#;
        let e = check(&file(h, 8)).unwrap_err();
        assert!(e.contains("more bytes than a file can hold"), "{e}");
        let h = r#"{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}"#;
        let e = check(&file(h, 1)).unwrap_err();
        assert!(e.contains("not a whole number of bytes"), "{e}");
        let mut huge = file("{}", 0);
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(check(&huge).unwrap_err().contains("header length"));
    }

    /// The errors carry the tensor and its offsets, and print the messages callers prefix
    /// with the file.
    #[test]
    fn errors_carry_the_tensor_and_its_offsets() {
        let h = r#"{"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[8],"data_offsets":[10,18]}}"#;
        let bytes = file(h, 18);
        let e =
            check_safetensors(&mut std::io::Cursor::new(&bytes), bytes.len() as u64).unwrap_err();
        let SafetensorsError::NotTiled {
            tensor,
            start,
            previous,
            covered,
            ..
        } = &e
        else {
            panic!("not a tiling error: {e}");
        };
        assert_eq!(
            (tensor.name.as_str(), *start, previous.as_str(), *covered),
            ("b", 10, "a", 8)
        );
        assert_eq!(
            e.to_string(),
            "tensor `b` (U8, [8]) at data_offsets [10, 18] leaves a gap after tensor `a`, \
             which ends at 8"
        );
        let h = r#"{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}}"#;
        assert_eq!(
            check(&file(h, 20)).unwrap_err(),
            "tensor `a` (F32, [2, 3]) has data_offsets [0, 20] (20 bytes) but its dtype and \
             shape make 24 bytes"
        );
        assert_eq!(
            check(&file(TWO, 40)).unwrap_err(),
            "the tensors end at data offset 32 but the file holds 40 bytes of data after its \
             header: 8 bytes belong to no tensor"
        );
        assert_eq!(
            check(&[0; 4]).unwrap_err(),
            "not a safetensors file: 4 bytes, too short for a header"
        );
    }
}
