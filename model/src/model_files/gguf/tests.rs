use super::*;

/// [`crate::model_files::read_gguf_bytes`], its error as the message it prints (what the
/// assertions below read).
fn read_gguf_bytes(bytes: &[u8]) -> Result<candle_core::quantized::gguf_file::Content, String> {
    crate::model_files::read_gguf_bytes(bytes).map_err(|e| e.to_string())
}

/// A GGUF v3 file built byte by byte, so that tests can write what no writer would.
struct Gguf {
    meta: Vec<u8>,
    n_meta: u64,
    infos: Vec<u8>,
    n_tensors: u64,
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend(s.as_bytes());
}

impl Gguf {
    fn new() -> Gguf {
        Gguf {
            meta: Vec::new(),
            n_meta: 0,
            infos: Vec::new(),
            n_tensors: 0,
        }
    }

    /// A metadata entry of `value_type` whose value is `raw`.
    fn meta(mut self, key: &str, value_type: u32, raw: &[u8]) -> Gguf {
        put_str(&mut self.meta, key);
        self.meta.extend(value_type.to_le_bytes());
        self.meta.extend(raw);
        self.n_meta += 1;
        self
    }

    fn tensor(mut self, name: &str, dims: &[u64], ggml_type: u32, offset: u64) -> Gguf {
        put_str(&mut self.infos, name);
        self.infos.extend((dims.len() as u32).to_le_bytes());
        for d in dims {
            self.infos.extend(d.to_le_bytes());
        }
        self.infos.extend(ggml_type.to_le_bytes());
        self.infos.extend(offset.to_le_bytes());
        self.n_tensors += 1;
        self
    }

    /// The header, padded to 32 bytes, then `data_len` zero bytes.
    fn bytes(&self, data_len: usize) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(3u32.to_le_bytes());
        out.extend(self.n_tensors.to_le_bytes());
        out.extend(self.n_meta.to_le_bytes());
        out.extend(&self.meta);
        out.extend(&self.infos);
        out.resize(out.len().div_ceil(32) * 32, 0);
        out.resize(out.len() + data_len, 0);
        out
    }
}

/// [`scan_gguf`] over `bytes`, its error as the message it prints.
fn scan(bytes: &[u8]) -> Result<GgufLayout, String> {
    scan_gguf(&mut std::io::Cursor::new(bytes), bytes.len() as u64).map_err(|e| e.to_string())
}

/// Two tensors: 4 f32 (16 bytes) at 0 and a 32×2 Q4_1 (two 20-byte blocks) at 32.
fn two_tensors() -> Gguf {
    let mut name = Vec::new();
    put_str(&mut name, "llama");
    Gguf::new()
        .meta("general.architecture", 8, &name)
        .tensor("a.weight", &[4], 0, 0)
        .tensor("blk.0.ffn_up.weight", &[32, 2], 3, 32)
}

#[test]
fn a_consistent_file_passes_and_candle_reads_the_same_layout() {
    let bytes = two_tensors().bytes(72);
    let layout = scan(&bytes).unwrap();
    assert_eq!(layout.tensors.len(), 2);
    assert_eq!(layout.data_offset % 32, 0);
    let ct = read_gguf_bytes(&bytes).unwrap();
    assert_eq!(ct.tensor_data_offset, layout.data_offset);
    assert_eq!(ct.tensor_infos.len(), 2);
}

#[test]
fn a_truncated_file_names_the_tensor_and_its_bytes() {
    let bytes = two_tensors().bytes(72);
    let e = scan(&bytes[..bytes.len() - 1]).unwrap_err();
    let layout = scan(&bytes).unwrap();
    let start = layout.data_offset + 32;
    assert_eq!(
        e,
        format!(
            "tensor `blk.0.ffn_up.weight` (Q4_1, 32x2) needs bytes {start}..{} but the file has \
             {} bytes",
            start + 40,
            bytes.len() - 1
        )
    );
    // Cut inside the header: the field that does not fit is named.
    let e = scan(&bytes[..40]).unwrap_err();
    assert!(
        e.contains("needs") && e.contains("the file has 40 bytes"),
        "{e}"
    );
}

#[test]
fn offsets_past_the_end_overlaps_and_misalignment_are_refused() {
    let past = Gguf::new().tensor("t", &[4], 0, u64::MAX - 31).bytes(16);
    assert!(scan(&past).unwrap_err().contains("tensor `t` (F32, 4)"));
    let overlap = Gguf::new()
        .tensor("a", &[16], 0, 0)
        .tensor("b", &[4], 0, 32)
        .bytes(64);
    let e = scan(&overlap).unwrap_err();
    assert!(
        e.contains("tensor `b`") && e.contains("overlaps tensor `a`"),
        "{e}"
    );
    let misaligned = Gguf::new().tensor("a", &[4], 0, 16).bytes(64);
    let e = scan(&misaligned).unwrap_err();
    assert!(e.contains("not a multiple of the alignment 32"), "{e}");
}

#[test]
fn sizes_that_are_not_whole_blocks_and_unknown_types_are_refused() {
    let partial = Gguf::new().tensor("q", &[33, 2], 3, 0).bytes(64);
    let e = scan(&partial).unwrap_err();
    assert!(e.contains("not whole blocks of 32"), "{e}");
    let iq = Gguf::new().tensor("q", &[256], 16, 0).bytes(256);
    assert!(scan(&iq).unwrap_err().contains("ggml type 16"));
    let overflow = Gguf::new()
        .tensor("q", &[1 << 32, 1 << 32, 1 << 32], 0, 0)
        .bytes(0);
    assert!(scan(&overflow)
        .unwrap_err()
        .contains("more elements than a file can hold"));
    let dims = Gguf::new().tensor("q", &[1, 1, 1, 1, 1], 0, 0).bytes(4);
    assert!(scan(&dims).unwrap_err().contains("5 dimensions"));
}

/// Headers on which candle's own reader would allocate without bound, overflow its stack or
/// divide by zero are refused before it reads them.
#[test]
fn hostile_headers_are_refused_before_candle_reads_them() {
    let huge_string = Gguf::new().meta("k", 8, &u64::MAX.to_le_bytes()).bytes(0);
    assert!(read_gguf_bytes(&huge_string)
        .unwrap_err()
        .contains("the value of metadata `k` needs"));
    let mut array = 0u32.to_le_bytes().to_vec();
    array.extend((1u64 << 60).to_le_bytes());
    let huge_array = Gguf::new().meta("k", 9, &array).bytes(0);
    assert!(read_gguf_bytes(&huge_array).is_err());
    let zero_alignment = two_tensors()
        .meta("general.alignment", 4, &0u32.to_le_bytes())
        .bytes(72);
    assert!(read_gguf_bytes(&zero_alignment)
        .unwrap_err()
        .contains("must be a power of two"));
    let mut nested = Vec::new();
    for _ in 0..64 {
        nested.extend(9u32.to_le_bytes());
        nested.extend(1u64.to_le_bytes());
    }
    nested.extend(4u32.to_le_bytes());
    nested.extend(0u64.to_le_bytes());
    let deep = Gguf::new().meta("k", 9, &nested).bytes(0);
    assert!(read_gguf_bytes(&deep).unwrap_err().contains("nests arrays"));
    let mut many = b"GGUF".to_vec();
    many.extend(3u32.to_le_bytes());
    many.extend(u64::MAX.to_le_bytes());
    many.extend(0u64.to_le_bytes());
    assert!(read_gguf_bytes(&many)
        .unwrap_err()
        .contains("claims 18446744073709551615 tensors"));
    let long_key = Gguf::new().meta(&"k".repeat(70_000), 4, &[0; 4]).bytes(0);
    assert!(read_gguf_bytes(&long_key)
        .unwrap_err()
        .contains("at most 65536"));
}

/// The errors carry what they name (tensor, byte ranges), and print the messages callers
/// prefix with the file.
#[test]
fn errors_carry_the_tensor_and_its_bytes() {
    let overlap = Gguf::new()
        .tensor("a", &[16], 0, 0)
        .tensor("b", &[4], 0, 32)
        .bytes(64);
    // The same header with `b` after `a`: where the data section starts.
    let apart = Gguf::new()
        .tensor("a", &[16], 0, 0)
        .tensor("b", &[4], 0, 64)
        .bytes(80);
    let s = scan(&apart).unwrap().data_offset;
    let e = scan_gguf(&mut std::io::Cursor::new(&overlap), overlap.len() as u64).unwrap_err();
    let GgufError::Overlap {
        tensor,
        start,
        previous,
        previous_end,
        ..
    } = &e
    else {
        panic!("not an overlap: {e}");
    };
    assert_eq!(
        (
            tensor.name.as_str(),
            tensor.dims.as_slice(),
            previous.as_str()
        ),
        ("b", &[4u64][..], "a")
    );
    assert_eq!((*start, *previous_end), (s + 32, s + 64));
    assert_eq!(
        e.to_string(),
        format!(
            "tensor `b` (F32, 4) at bytes {}..{} overlaps tensor `a` at bytes {s}..{}",
            s + 32,
            s + 48,
            s + 64
        )
    );
    let dims = Gguf::new().tensor("q", &[1, 1, 1, 1, 1], 0, 0).bytes(4);
    assert_eq!(
        scan(&dims).unwrap_err(),
        "tensor `q` has 5 dimensions (ggml allows at most 4)"
    );
    let mut bad_magic = two_tensors().bytes(72);
    bad_magic[..4].copy_from_slice(b"GGML");
    assert_eq!(
        scan(&bad_magic).unwrap_err(),
        "not a GGUF file (magic 0x4c4d4747)"
    );
}
