//! The GGUF header walked as candle's reader walks it (`gguf_file::Content::read`), with every
//! length, count and offset checked against the file's length before anything is allocated,
//! then every tensor's byte range (from its ggml type and shape) checked against the file:
//! what llama.cpp's loader refuses, refused here naming the tensor.

use std::collections::HashSet;
use std::io::{Read, Seek};

use candle_core::quantized::GgmlDType;

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

/// A tensor as the header describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufTensor {
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
    pub version: u32,
    pub alignment: u64,
    /// Where the data section starts: the end of the header, aligned.
    pub data_offset: u64,
    pub tensors: Vec<GgufTensor>,
}

/// Walk a GGUF header from the start of `reader` (a file of `file_len` bytes) and check every
/// tensor's range. On success candle's reader can read the same header without allocating
/// more than the header's own size calls for and without panicking, and every tensor's bytes
/// are in the file.
pub fn scan_gguf<R: Read + Seek>(reader: &mut R, file_len: u64) -> Result<GgufLayout, String> {
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
    fn header(&mut self) -> Result<GgufLayout, String> {
        if self.len < 8 {
            return Err(format!(
                "not a GGUF file: {} bytes, too short for a header",
                self.len
            ));
        }
        let magic = self.u32("the magic number")?;
        // candle accepts both byte orders of "GGUF".
        if magic != 0x4655_4747 && magic != 0x4747_5546 {
            return Err(format!("not a GGUF file (magic 0x{magic:08x})"));
        }
        let version = self.u32("the version")?;
        if !(1..=3).contains(&version) {
            return Err(format!("GGUF version {version} is not supported (1, 2, 3)"));
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
                return Err(format!(
                    "tensor `{name}` has {n_dims} dimensions (ggml allows at most {GGML_MAX_DIMS})"
                ));
            }
            let mut dims = Vec::with_capacity(n_dims as usize);
            for _ in 0..n_dims {
                dims.push(self.count(wide, &format!("a dimension of tensor `{name}`"))?);
            }
            let ggml_type = self.u32(&format!("the type of tensor `{name}`"))?;
            let offset = self.u64(&format!("the offset of tensor `{name}`"))?;
            if !names.insert(name.clone()) {
                return Err(format!("tensor `{name}` is described twice"));
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
            return Err(format!(
                "metadata `general.alignment` = {alignment}: the alignment must be a power of two"
            ));
        }
        let data_offset = self
            .pos
            .div_ceil(alignment)
            .checked_mul(alignment)
            .ok_or_else(|| format!("metadata `general.alignment` = {alignment} is too large"))?;
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
    ) -> Result<AlignmentValue, String> {
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
                    return Err(format!(
                        "metadata `{key}` nests arrays deeper than {MAX_ARRAY_DEPTH} levels"
                    ));
                }
                let element_type = self.u32(&what())?;
                let n = self.count(wide, &what())?;
                self.values = self.values.saturating_add(n);
                if self.values > MAX_METADATA_VALUES {
                    return Err(format!(
                        "metadata `{key}`: the header holds more than {MAX_METADATA_VALUES} \
                         array elements"
                    ));
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
                            let bytes = n.checked_mul(size).ok_or_else(|| {
                                format!("metadata `{key}`: an array of {n} elements")
                            })?;
                            self.skip(bytes, &what())?;
                        }
                        None => {
                            return Err(format!(
                                "metadata `{key}` is an array of unknown value type {t}"
                            ))
                        }
                    },
                }
                None
            }
            t => return Err(format!("metadata `{key}` has unknown value type {t}")),
        })
    }

    /// Refuse a count of items of at least `min_size` bytes each that the rest of the file
    /// cannot hold.
    fn claim(&self, count: u64, min_size: u64, what: &str) -> Result<(), String> {
        let rest = self.len - self.pos;
        if count.checked_mul(min_size).is_none_or(|n| n > rest) {
            return Err(format!(
                "the header claims {count} {what} at byte {} but the file has {} bytes",
                self.pos, self.len
            ));
        }
        Ok(())
    }

    fn need(&self, n: u64, what: &str) -> Result<(), String> {
        if n > self.len - self.pos {
            return Err(format!(
                "{what} needs {n} bytes at byte {} but the file has {} bytes",
                self.pos, self.len
            ));
        }
        Ok(())
    }

    fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        self.need(N as u64, what)?;
        let mut buf = [0u8; N];
        self.reader
            .read_exact(&mut buf)
            .map_err(|e| format!("reading {what} at byte {}: {e}", self.pos))?;
        self.pos += N as u64;
        Ok(buf)
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        self.bytes::<4>(what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        self.bytes::<8>(what).map(u64::from_le_bytes)
    }

    /// A count or length: u32 in GGUF v1, u64 later.
    fn count(&mut self, wide: bool, what: &str) -> Result<u64, String> {
        if wide {
            self.u64(what)
        } else {
            self.u32(what).map(u64::from)
        }
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<(), String> {
        self.need(n, what)?;
        // n is at most the file's length, which a seek offset holds.
        let offset = i64::try_from(n).map_err(|_| format!("{what}: {n} bytes"))?;
        self.reader
            .seek_relative(offset)
            .map_err(|e| format!("reading {what} at byte {}: {e}", self.pos))?;
        self.pos += n;
        Ok(())
    }

    /// A key or tensor name (as candle reads it: trailing NULs dropped, lossy UTF-8).
    fn string(&mut self, wide: bool, what: &str) -> Result<String, String> {
        let n = self.count(wide, what)?;
        if n > MAX_NAME_BYTES {
            return Err(format!(
                "{what} at byte {} is {n} bytes long (at most {MAX_NAME_BYTES})",
                self.pos
            ));
        }
        self.need(n, what)?;
        let mut buf = vec![0u8; n as usize];
        self.reader
            .read_exact(&mut buf)
            .map_err(|e| format!("reading {what} at byte {}: {e}", self.pos))?;
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
fn check_ranges(layout: &GgufLayout, file_len: u64) -> Result<(), String> {
    let mut ranges: Vec<(u64, u64, String)> = Vec::with_capacity(layout.tensors.len());
    let mut by_offset: Vec<&GgufTensor> = layout.tensors.iter().collect();
    by_offset.sort_by_key(|t| t.offset);
    for t in by_offset {
        let name = &t.name;
        let dtype = ggml_dtype(t.ggml_type).ok_or_else(|| {
            format!(
                "tensor `{name}` has ggml type {}, which this build cannot read",
                t.ggml_type
            )
        })?;
        let described = format!("tensor `{name}` ({dtype:?}, {})", shape(&t.dims));
        let elements = t
            .dims
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d))
            .ok_or_else(|| format!("{described} has more elements than a file can hold"))?;
        let block = dtype.block_size() as u64;
        let row = t.dims.first().copied().unwrap_or(1);
        if row % block != 0 {
            return Err(format!(
                "{described}: its rows of {row} elements are not whole blocks of {block}"
            ));
        }
        let size = (elements / block)
            .checked_mul(dtype.type_size() as u64)
            .ok_or_else(|| format!("{described} has more bytes than a file can hold"))?;
        if t.offset % layout.alignment != 0 {
            return Err(format!(
                "{described} starts at data offset {}, not a multiple of the alignment {}",
                t.offset, layout.alignment
            ));
        }
        let start = layout.data_offset.checked_add(t.offset);
        let end = start.and_then(|s| s.checked_add(size));
        let (Some(start), Some(end)) = (start, end) else {
            return Err(format!(
                "{described} starts at data offset {}, past any file",
                t.offset
            ));
        };
        if end > file_len {
            return Err(format!(
                "{described} needs bytes {start}..{end} but the file has {file_len} bytes"
            ));
        }
        if let Some((prev_start, prev_end, prev)) = ranges.last() {
            if start < *prev_end {
                return Err(format!(
                    "{described} at bytes {start}..{end} overlaps tensor `{prev}` at bytes \
                     {prev_start}..{prev_end}"
                ));
            }
        }
        ranges.push((start, end, name.clone()));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
