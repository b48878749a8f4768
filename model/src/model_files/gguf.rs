//! The GGUF header walked as candle's reader walks it (`gguf_file::Content::read`), with every
//! length, count and offset checked against the file's length before anything is allocated,
//! then every tensor's byte range (from its ggml type and shape) checked against the file:
//! what llama.cpp's loader refuses, refused here naming the tensor.

use std::collections::HashSet;
use std::fmt;
use std::io::{Read, Seek};

use candle_core::quantized::GgmlDType;
use thiserror::Error;

/// ggml's limit on a tensor's dimensions.
const GGML_MAX_DIMS: u32 = 4;
/// The longest metadata key or tensor name read (llama.cpp's tensor names are at most 64
/// bytes; keys are short dotted names).
const MAX_NAME_BYTES: u64 = 1 << 16;
/// Arrays nest (candle reads them recursively): deeper nesting is refused before it could
/// exhaust the stack. No GGUF writer nests arrays at all.
const MAX_ARRAY_DEPTH: usize = 4;
/// The most metadata array elements in one header: candle holds each in a 32-byte value, so
/// this bounds what reading a header can allocate (the largest vocabularies, ~260k tokens
/// with their scores, types and merges, hold about a million).
const MAX_METADATA_VALUES: u64 = 1 << 24;
/// `general.alignment` when absent (GGUF's default, candle's `DEFAULT_ALIGNMENT`).
const DEFAULT_ALIGNMENT: u64 = 32;

/// Why a GGUF header is refused: a length, count or offset the file cannot hold, a value
/// candle would misread, or a tensor whose bytes are not (all, or only) its own. Each names
/// what was being read, or the metadata key or tensor, and the byte positions involved.
#[derive(Debug, Error)]
pub enum GgufError {
    /// The file cannot even hold the magic number and version.
    #[error("not a GGUF file: {file_len} bytes, too short for a header")]
    TooShort {
        /// The file's length in bytes.
        file_len: u64,
    },
    /// The first four bytes are not `GGUF` (in either byte order).
    #[error("not a GGUF file (magic 0x{magic:08x})")]
    BadMagic {
        /// The first four bytes, read little-endian.
        magic: u32,
    },
    /// A GGUF version other than 1, 2 or 3.
    #[error("GGUF version {version} is not supported (1, 2, 3)")]
    UnsupportedVersion {
        /// The header's version field.
        version: u32,
    },
    /// A tensor with more dimensions than ggml allows.
    #[error("tensor `{tensor}` has {n_dims} dimensions (ggml allows at most {max})", max = GGML_MAX_DIMS)]
    TooManyDimensions {
        /// The tensor's name.
        tensor: String,
        /// Its dimension count.
        n_dims: u32,
    },
    /// Two tensor descriptions share a name.
    #[error("tensor `{tensor}` is described twice")]
    DuplicateTensor {
        /// The repeated name.
        tensor: String,
    },
    /// `general.alignment` is 0 or not a power of two (candle would divide by it).
    #[error("metadata `general.alignment` = {alignment}: the alignment must be a power of two")]
    AlignmentNotPowerOfTwo {
        /// The alignment read.
        alignment: u64,
    },
    /// `general.alignment` is so large that aligning the data section overflows.
    #[error("metadata `general.alignment` = {alignment} is too large")]
    AlignmentTooLarge {
        /// The alignment read.
        alignment: u64,
    },
    /// Arrays nested deeper than [`MAX_ARRAY_DEPTH`] levels.
    #[error("metadata `{key}` nests arrays deeper than {max} levels", max = MAX_ARRAY_DEPTH)]
    ArraysTooDeep {
        /// The metadata key holding them.
        key: String,
    },
    /// The header's arrays hold more than [`MAX_METADATA_VALUES`] elements in all.
    #[error(
        "metadata `{key}`: the header holds more than {max} array elements",
        max = MAX_METADATA_VALUES
    )]
    TooManyArrayElements {
        /// The key whose array passed the limit.
        key: String,
    },
    /// An array of fixed-size values whose byte length overflows.
    #[error("metadata `{key}`: an array of {elements} elements")]
    ArrayTooLarge {
        /// The metadata key.
        key: String,
        /// The element count claimed.
        elements: u64,
    },
    /// An array whose element type GGUF does not define.
    #[error("metadata `{key}` is an array of unknown value type {value_type}")]
    UnknownArrayType {
        /// The metadata key.
        key: String,
        /// The element type id read.
        value_type: u32,
    },
    /// A metadata value whose type GGUF does not define.
    #[error("metadata `{key}` has unknown value type {value_type}")]
    UnknownValueType {
        /// The metadata key.
        key: String,
        /// The type id read.
        value_type: u32,
    },
    /// A count of entries that the rest of the file could not hold even at their smallest.
    #[error("the header claims {count} {what} at byte {pos} but the file has {file_len} bytes")]
    CountPastEnd {
        /// The count claimed.
        count: u64,
        /// What is counted (`tensors`, `metadata entries`, a key's strings or arrays).
        what: String,
        /// The byte where the entries would start.
        pos: u64,
        /// The file's length in bytes.
        file_len: u64,
    },
    /// A field or value that runs past the end of the file.
    #[error("{what} needs {bytes} bytes at byte {pos} but the file has {file_len} bytes")]
    PastEnd {
        /// What was being read (e.g. `the value of metadata \`k\``).
        what: String,
        /// Its length in bytes.
        bytes: u64,
        /// The byte where it starts.
        pos: u64,
        /// The file's length in bytes.
        file_len: u64,
    },
    /// The reader failed.
    #[error("reading {what} at byte {pos}: {source}")]
    Read {
        /// What was being read.
        what: String,
        /// The byte where it starts.
        pos: u64,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A skip too long for a seek offset (not reachable for a file's real length).
    #[error("{what}: {bytes} bytes")]
    SkipTooLong {
        /// What was being skipped.
        what: String,
        /// Its length in bytes.
        bytes: u64,
    },
    /// A metadata key or tensor name longer than [`MAX_NAME_BYTES`].
    #[error("{what} at byte {pos} is {bytes} bytes long (at most {max})", max = MAX_NAME_BYTES)]
    NameTooLong {
        /// Which key or name.
        what: String,
        /// The byte where its length field ends.
        pos: u64,
        /// The length claimed.
        bytes: u64,
    },
    /// A tensor of a ggml type candle cannot read (or that ggml does not define).
    #[error("tensor `{tensor}` has ggml type {ggml_type}, which this build cannot read")]
    UnknownTensorType {
        /// The tensor's name.
        tensor: String,
        /// The ggml type id.
        ggml_type: u32,
    },
    /// A shape whose element count overflows u64.
    #[error("{tensor} has more elements than a file can hold")]
    TooManyElements {
        /// The tensor.
        tensor: TensorDescription,
    },
    /// Rows that do not divide into whole quantization blocks.
    #[error("{tensor}: its rows of {row} elements are not whole blocks of {block}")]
    PartialBlocks {
        /// The tensor.
        tensor: TensorDescription,
        /// Elements per row (`ne[0]`).
        row: u64,
        /// Elements per block of its type.
        block: u64,
    },
    /// A shape whose byte size overflows u64.
    #[error("{tensor} has more bytes than a file can hold")]
    TooManyBytes {
        /// The tensor.
        tensor: TensorDescription,
    },
    /// A tensor offset that is not a multiple of the alignment.
    #[error(
        "{tensor} starts at data offset {offset}, not a multiple of the alignment {alignment}"
    )]
    Misaligned {
        /// The tensor.
        tensor: TensorDescription,
        /// Its offset from the start of the data section.
        offset: u64,
        /// The file's alignment.
        alignment: u64,
    },
    /// A tensor whose start or end overflows u64.
    #[error("{tensor} starts at data offset {offset}, past any file")]
    OffsetPastAnyFile {
        /// The tensor.
        tensor: TensorDescription,
        /// Its offset from the start of the data section.
        offset: u64,
    },
    /// A tensor whose bytes run past the end of the file.
    #[error("{tensor} needs bytes {start}..{end} but the file has {file_len} bytes")]
    TensorPastEnd {
        /// The tensor.
        tensor: TensorDescription,
        /// Its first byte in the file.
        start: u64,
        /// The byte after its last.
        end: u64,
        /// The file's length in bytes.
        file_len: u64,
    },
    /// A tensor whose bytes overlap those of the tensor before it.
    #[error(
        "{tensor} at bytes {start}..{end} overlaps tensor `{previous}` at bytes \
         {previous_start}..{previous_end}"
    )]
    Overlap {
        /// The tensor.
        tensor: TensorDescription,
        /// Its first byte in the file.
        start: u64,
        /// The byte after its last.
        end: u64,
        /// The name of the tensor it overlaps (the one starting before it).
        previous: String,
        /// That tensor's first byte in the file.
        previous_start: u64,
        /// The byte after that tensor's last.
        previous_end: u64,
    },
    /// The header passed the walk, and candle's reader still refused it
    /// ([`read_gguf_bytes`](super::read_gguf_bytes)).
    #[error("not a readable GGUF file: {0}")]
    Unreadable(#[source] candle_core::Error),
}

/// A tensor as errors name it: `tensor \`name\` (Q4_1, 576x1536)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorDescription {
    /// The tensor's name.
    pub name: String,
    /// Its ggml type.
    pub dtype: GgmlDType,
    /// Its dimensions in GGUF order (`ne[0]` first).
    pub dims: Vec<u64>,
}

impl fmt::Display for TensorDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tensor `{}` ({:?}, {})",
            self.name,
            self.dtype,
            shape(&self.dims)
        )
    }
}

/// A tensor as the header describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufTensor {
    /// The tensor's name (e.g. `blk.0.attn_q.weight`), trailing NULs dropped.
    pub name: String,
    /// The ggml type id (`3` is Q4_1).
    pub ggml_type: u32,
    /// The dimensions in GGUF order (`ne[0]`, the row length, first).
    pub dims: Vec<u64>,
    /// The offset from the start of the data section.
    pub offset: u64,
}

/// What a GGUF header says about where its tensors are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufLayout {
    /// The GGUF version (1, 2 or 3; version 1 has 32-bit counts and lengths).
    pub version: u32,
    /// `general.alignment` (default 32): tensor offsets and the data section are aligned to
    /// it; always a power of two.
    pub alignment: u64,
    /// Where the data section starts: the end of the header, aligned.
    pub data_offset: u64,
    /// The tensors in header order.
    pub tensors: Vec<GgufTensor>,
}

/// Walk a GGUF header from the start of `reader` (a file of `file_len` bytes) and check every
/// tensor's range. On success candle's reader can read the same header without allocating
/// more than the header's own size calls for and without panicking, and every tensor's bytes
/// are in the file.
pub fn scan_gguf<R: Read + Seek>(reader: &mut R, file_len: u64) -> Result<GgufLayout, GgufError> {
    let layout = Walker {
        reader,
        pos: 0,
        len: file_len,
        values: 0,
    }
    .header()?;
    check_ranges(&layout, file_len)?;
    Ok(layout)
}

struct Walker<'r, R> {
    reader: &'r mut R,
    pos: u64,
    len: u64,
    /// Metadata array elements so far.
    values: u64,
}

/// A metadata value's integer, where candle would take it as `general.alignment`.
type AlignmentValue = Option<u64>;

impl<R: Read + Seek> Walker<'_, R> {
    fn header(&mut self) -> Result<GgufLayout, GgufError> {
        if self.len < 8 {
            return Err(GgufError::TooShort { file_len: self.len });
        }
        let magic = self.u32("the magic number")?;
        // candle accepts both byte orders of "GGUF".
        if magic != 0x4655_4747 && magic != 0x4747_5546 {
            return Err(GgufError::BadMagic { magic });
        }
        let version = self.u32("the version")?;
        if !(1..=3).contains(&version) {
            return Err(GgufError::UnsupportedVersion { version });
        }
        let wide = version >= 2;
        let tensor_count = self.count(wide, "the tensor count")?;
        let kv_count = self.count(wide, "the metadata count")?;
        let len_bytes: u64 = if wide { 8 } else { 4 };
        // Each entry takes at least its length field, type and one byte of value.
        self.claim(kv_count, len_bytes + 5, "metadata entries")?;
        let mut alignment: AlignmentValue = None;
        for i in 0..kv_count {
            let key = self.string(wide, &format!("metadata key {i}"))?;
            let value_type = self.u32(&format!("the type of metadata `{key}`"))?;
            let value = self.value(wide, value_type, 0, &key)?;
            if key == "general.alignment" {
                alignment = value;
            }
        }
        // Each tensor takes at least its name's length field, dimension count, type, offset.
        self.claim(tensor_count, len_bytes + 16, "tensors")?;
        let mut tensors = Vec::new();
        let mut names = HashSet::new();
        for i in 0..tensor_count {
            let name = self.string(wide, &format!("the name of tensor {i}"))?;
            let n_dims = self.u32(&format!("the dimension count of tensor `{name}`"))?;
            if n_dims > GGML_MAX_DIMS {
                return Err(GgufError::TooManyDimensions {
                    tensor: name,
                    n_dims,
                });
            }
            let mut dims = Vec::with_capacity(n_dims as usize);
            for _ in 0..n_dims {
                dims.push(self.count(wide, &format!("a dimension of tensor `{name}`"))?);
            }
            let ggml_type = self.u32(&format!("the type of tensor `{name}`"))?;
            let offset = self.u64(&format!("the offset of tensor `{name}`"))?;
            if !names.insert(name.clone()) {
                return Err(GgufError::DuplicateTensor { tensor: name });
            }
            tensors.push(GgufTensor {
                name,
                ggml_type,
                dims,
                offset,
            });
        }
        let alignment = alignment.unwrap_or(DEFAULT_ALIGNMENT);
        if !alignment.is_power_of_two() {
            return Err(GgufError::AlignmentNotPowerOfTwo { alignment });
        }
        let data_offset = self
            .pos
            .div_ceil(alignment)
            .checked_mul(alignment)
            .ok_or(GgufError::AlignmentTooLarge { alignment })?;
        Ok(GgufLayout {
            version,
            alignment,
            data_offset,
            tensors,
        })
    }

    /// One metadata value of `value_type`; `depth` is how deep in arrays it is. Returns the
    /// value where candle would read it as an alignment.
    fn value(
        &mut self,
        wide: bool,
        value_type: u32,
        depth: usize,
        key: &str,
    ) -> Result<AlignmentValue, GgufError> {
        let what = || format!("the value of metadata `{key}`");
        Ok(match value_type {
            0 => Some(u64::from(self.bytes::<1>(&what())?[0])),
            1 => u64::try_from(i8::from_le_bytes(self.bytes::<1>(&what())?)).ok(),
            2 => Some(u64::from(u16::from_le_bytes(self.bytes::<2>(&what())?))),
            3 => u64::try_from(i16::from_le_bytes(self.bytes::<2>(&what())?)).ok(),
            4 => Some(u64::from(self.u32(&what())?)),
            5 => u64::try_from(i32::from_le_bytes(self.bytes::<4>(&what())?)).ok(),
            // f32, bool; u64, i64, f64: candle takes none of them as an alignment.
            6 | 7 | 10 | 11 | 12 => {
                self.skip(scalar_size(value_type).unwrap_or(0), &what())?;
                None
            }
            8 => {
                let n = self.count(wide, &what())?;
                self.skip(n, &what())?;
                None
            }
            9 => {
                if depth >= MAX_ARRAY_DEPTH {
                    return Err(GgufError::ArraysTooDeep { key: key.into() });
                }
                let element_type = self.u32(&what())?;
                let n = self.count(wide, &what())?;
                self.values = self.values.saturating_add(n);
                if self.values > MAX_METADATA_VALUES {
                    return Err(GgufError::TooManyArrayElements { key: key.into() });
                }
                match element_type {
                    8 => {
                        self.claim(n, if wide { 8 } else { 4 }, &format!("`{key}` strings"))?;
                        for _ in 0..n {
                            let len = self.count(wide, &what())?;
                            self.skip(len, &what())?;
                        }
                    }
                    9 => {
                        self.claim(n, 4 + if wide { 8 } else { 4 }, &format!("`{key}` arrays"))?;
                        for _ in 0..n {
                            self.value(wide, 9, depth + 1, key)?;
                        }
                    }
                    t => match scalar_size(t) {
                        Some(size) => {
                            let bytes =
                                n.checked_mul(size)
                                    .ok_or_else(|| GgufError::ArrayTooLarge {
                                        key: key.into(),
                                        elements: n,
                                    })?;
                            self.skip(bytes, &what())?;
                        }
                        None => {
                            return Err(GgufError::UnknownArrayType {
                                key: key.into(),
                                value_type: t,
                            })
                        }
                    },
                }
                None
            }
            t => {
                return Err(GgufError::UnknownValueType {
                    key: key.into(),
                    value_type: t,
                })
            }
        })
    }

    /// Refuse a count of items of at least `min_size` bytes each that the rest of the file
    /// cannot hold.
    fn claim(&self, count: u64, min_size: u64, what: &str) -> Result<(), GgufError> {
        let rest = self.len - self.pos;
        if count.checked_mul(min_size).is_none_or(|n| n > rest) {
            return Err(GgufError::CountPastEnd {
                count,
                what: what.into(),
                pos: self.pos,
                file_len: self.len,
            });
        }
        Ok(())
    }

    fn need(&self, n: u64, what: &str) -> Result<(), GgufError> {
        if n > self.len - self.pos {
            return Err(GgufError::PastEnd {
                what: what.into(),
                bytes: n,
                pos: self.pos,
                file_len: self.len,
            });
        }
        Ok(())
    }

    /// The I/O error of reading `what` at the current position.
    fn read_error(&self, what: &str, source: std::io::Error) -> GgufError {
        GgufError::Read {
            what: what.into(),
            pos: self.pos,
            source,
        }
    }

    fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N], GgufError> {
        self.need(N as u64, what)?;
        let mut buf = [0u8; N];
        self.reader
            .read_exact(&mut buf)
            .map_err(|e| self.read_error(what, e))?;
        self.pos += N as u64;
        Ok(buf)
    }

    fn u32(&mut self, what: &str) -> Result<u32, GgufError> {
        self.bytes::<4>(what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, what: &str) -> Result<u64, GgufError> {
        self.bytes::<8>(what).map(u64::from_le_bytes)
    }

    /// A count or length: u32 in GGUF v1, u64 later.
    fn count(&mut self, wide: bool, what: &str) -> Result<u64, GgufError> {
        if wide {
            self.u64(what)
        } else {
            self.u32(what).map(u64::from)
        }
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<(), GgufError> {
        self.need(n, what)?;
        // n is at most the file's length, which a seek offset holds.
        let offset = i64::try_from(n).map_err(|_| GgufError::SkipTooLong {
            what: what.into(),
            bytes: n,
        })?;
        self.reader
            .seek_relative(offset)
            .map_err(|e| self.read_error(what, e))?;
        self.pos += n;
        Ok(())
    }

    /// A key or tensor name (as candle reads it: trailing NULs dropped, lossy UTF-8).
    fn string(&mut self, wide: bool, what: &str) -> Result<String, GgufError> {
        let n = self.count(wide, what)?;
        if n > MAX_NAME_BYTES {
            return Err(GgufError::NameTooLong {
                what: what.into(),
                pos: self.pos,
                bytes: n,
            });
        }
        self.need(n, what)?;
        let mut buf = vec![0u8; n as usize];
        self.reader
            .read_exact(&mut buf)
            .map_err(|e| self.read_error(what, e))?;
        self.pos += n;
        while buf.last() == Some(&0) {
            buf.pop();
        }
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }
}

/// The size of a fixed-size metadata value type.
fn scalar_size(value_type: u32) -> Option<u64> {
    match value_type {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        _ => None,
    }
}

/// The ggml types candle reads (its `GgmlDType::from_u32`, which it keeps to itself).
fn ggml_dtype(id: u32) -> Option<GgmlDType> {
    Some(match id {
        0 => GgmlDType::F32,
        1 => GgmlDType::F16,
        2 => GgmlDType::Q4_0,
        3 => GgmlDType::Q4_1,
        6 => GgmlDType::Q5_0,
        7 => GgmlDType::Q5_1,
        8 => GgmlDType::Q8_0,
        9 => GgmlDType::Q8_1,
        10 => GgmlDType::Q2K,
        11 => GgmlDType::Q3K,
        12 => GgmlDType::Q4K,
        13 => GgmlDType::Q5K,
        14 => GgmlDType::Q6K,
        15 => GgmlDType::Q8K,
        30 => GgmlDType::BF16,
        _ => return None,
    })
}

/// A tensor's dimensions as llama.cpp prints them (`576x1536`).
fn shape(dims: &[u64]) -> String {
    let dims: Vec<String> = dims.iter().map(u64::to_string).collect();
    dims.join("x")
}

/// Every tensor's bytes in the file, at an aligned offset, overlapping no other tensor.
fn check_ranges(layout: &GgufLayout, file_len: u64) -> Result<(), GgufError> {
    let mut ranges: Vec<(u64, u64, String)> = Vec::with_capacity(layout.tensors.len());
    let mut by_offset: Vec<&GgufTensor> = layout.tensors.iter().collect();
    by_offset.sort_by_key(|t| t.offset);
    for t in by_offset {
        let name = &t.name;
        let dtype = ggml_dtype(t.ggml_type).ok_or_else(|| GgufError::UnknownTensorType {
            tensor: name.clone(),
            ggml_type: t.ggml_type,
        })?;
        let described = || TensorDescription {
            name: name.clone(),
            dtype,
            dims: t.dims.clone(),
        };
        let elements = t
            .dims
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d))
            .ok_or_else(|| GgufError::TooManyElements {
                tensor: described(),
            })?;
        let block = dtype.block_size() as u64;
        let row = t.dims.first().copied().unwrap_or(1);
        if row % block != 0 {
            return Err(GgufError::PartialBlocks {
                tensor: described(),
                row,
                block,
            });
        }
        let size = (elements / block)
            .checked_mul(dtype.type_size() as u64)
            .ok_or_else(|| GgufError::TooManyBytes {
                tensor: described(),
            })?;
        if t.offset % layout.alignment != 0 {
            return Err(GgufError::Misaligned {
                tensor: described(),
                offset: t.offset,
                alignment: layout.alignment,
            });
        }
        let start = layout.data_offset.checked_add(t.offset);
        let end = start.and_then(|s| s.checked_add(size));
        let (Some(start), Some(end)) = (start, end) else {
            return Err(GgufError::OffsetPastAnyFile {
                tensor: described(),
                offset: t.offset,
            });
        };
        if end > file_len {
            return Err(GgufError::TensorPastEnd {
                tensor: described(),
                start,
                end,
                file_len,
            });
        }
        if let Some((prev_start, prev_end, prev)) = ranges.last() {
            if start < *prev_end {
                return Err(GgufError::Overlap {
                    tensor: described(),
                    start,
                    end,
                    previous: prev.clone(),
                    previous_start: *prev_start,
                    previous_end: *prev_end,
                });
            }
        }
        ranges.push((start, end, name.clone()));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
