//! A safetensors file's header checked against the file's length: an 8-byte little-endian
//! header length, a JSON header naming each tensor's dtype, shape and `data_offsets` in the
//! data region after it. Each tensor's size must be its dtype × shape, and the tensors must
//! tile the data region exactly (what the `safetensors` crate, which candle loads weights
//! with, requires), so a truncated or inconsistent file is refused naming the tensor.

use std::collections::HashMap;
use std::io::Read;

use safetensors::tensor::TensorInfo;

/// The `safetensors` crate's own limit on a header's length.
const MAX_HEADER_BYTES: u64 = 100_000_000;

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
    pub data_start: u64,
    pub tensors: HashMap<String, TensorInfo>,
}

/// Check the safetensors file read by `reader` (from its start; `file_len` bytes long): only
/// the header is read.
pub fn check_safetensors<R: Read>(reader: &mut R, file_len: u64) -> Result<(), String> {
    read_safetensors_header(reader, file_len).map(|_| ())
}

/// [`check_safetensors`], returning the header it checked (what a loader reads tensors by).
pub fn read_safetensors_header<R: Read>(
    reader: &mut R,
    file_len: u64,
) -> Result<SafetensorsHeader, String> {
    if file_len < 8 {
        return Err(format!(
            "not a safetensors file: {file_len} bytes, too short for a header"
        ));
    }
    let mut len_bytes = [0u8; 8];
    reader
        .read_exact(&mut len_bytes)
        .map_err(|e| format!("reading the header length: {e}"))?;
    let header_len = u64::from_le_bytes(len_bytes);
    if header_len > MAX_HEADER_BYTES {
        return Err(format!(
            "the header length is {header_len} bytes (at most {MAX_HEADER_BYTES})"
        ));
    }
    if 8 + header_len > file_len {
        return Err(format!(
            "the header needs bytes 8..{} but the file has {file_len} bytes",
            8 + header_len
        ));
    }
    let mut text = vec![0u8; header_len as usize];
    reader
        .read_exact(&mut text)
        .map_err(|e| format!("reading the header: {e}"))?;
    let text = std::str::from_utf8(&text).map_err(|e| format!("the header is not UTF-8: {e}"))?;
    let header: Header =
        serde_json::from_str(text).map_err(|e| format!("the header is not valid: {e}"))?;
    let data_start = 8 + header_len;
    let data_len = file_len - data_start;
    let mut tensors: Vec<(&String, &TensorInfo)> = header.tensors.iter().collect();
    tensors.sort_by(|a, b| a.1.data_offsets.cmp(&b.1.data_offsets).then(a.0.cmp(b.0)));
    let mut covered = 0u64;
    let mut previous: Option<&str> = None;
    for (name, info) in tensors {
        let described = format!("tensor `{name}` ({:?}, {:?})", info.dtype, info.shape);
        let (start, end) = (info.data_offsets.0 as u64, info.data_offsets.1 as u64);
        if end < start {
            return Err(format!(
                "{described} has data_offsets [{start}, {end}], which end before they start"
            ));
        }
        let bits = info
            .shape
            .iter()
            .try_fold(info.dtype.bitsize() as u64, |n, &d| n.checked_mul(d as u64))
            .ok_or_else(|| format!("{described} has more bytes than a file can hold"))?;
        if bits % 8 != 0 {
            return Err(format!("{described} is not a whole number of bytes"));
        }
        let size = bits / 8;
        if end - start != size {
            return Err(format!(
                "{described} has data_offsets [{start}, {end}] ({} bytes) but its dtype and \
                 shape make {size} bytes",
                end - start
            ));
        }
        if end > data_len {
            return Err(format!(
                "{described} needs bytes {}..{} but the file has {file_len} bytes",
                data_start + start,
                data_start + end
            ));
        }
        if start != covered {
            let what = if start < covered {
                "overlaps"
            } else {
                "leaves a gap after"
            };
            return Err(match previous {
                Some(prev) => format!(
                    "{described} at data_offsets [{start}, {end}] {what} tensor `{prev}`, \
                     which ends at {covered}"
                ),
                None => format!(
                    "{described} starts at data offset {start}: the data region must start \
                     with a tensor"
                ),
            });
        }
        covered = end;
        previous = Some(name);
    }
    if covered != data_len {
        return Err(format!(
            "the tensors end at data offset {covered} but the file holds {data_len} bytes of \
             data after its header: {} bytes belong to no tensor",
            data_len - covered
        ));
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

    fn check(bytes: &[u8]) -> Result<(), String> {
        check_safetensors(&mut std::io::Cursor::new(bytes), bytes.len() as u64)
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
}
