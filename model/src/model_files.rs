//! Model files checked before any work: a GGUF file's header, or a Hugging Face directory's
//! `*.safetensors` headers, against the file's length. Only headers are read (the files can be
//! many GB): every tensor's dtype and shape give its size, which must fit the file where its
//! offset puts it, without overlapping another tensor.
//!
//! The GGUF header is walked here before candle's reader sees it ([`read_gguf`]): candle
//! allocates whatever lengths and counts a header claims and divides by its alignment
//! unchecked, so a hostile or corrupt header could abort the process instead of failing.

mod gguf;
mod safetensors;

use std::io::{BufReader, Seek, SeekFrom};
use std::path::Path;

use candle_core::quantized::gguf_file;

use crate::error::EngineError;

pub use self::gguf::{scan_gguf, GgufError, GgufLayout, GgufTensor, TensorDescription};
pub use self::safetensors::{
    check_safetensors, read_safetensors_header, SafetensorsError, SafetensorsHeader,
};

/// Check the model at `path` before any work: a GGUF file (header, metadata and every
/// tensor's byte range), or a Hugging Face directory (every `*.safetensors` file's header and
/// tensor ranges). Errors name the file and the tensor.
pub fn check_model_files(path: &Path) -> Result<(), EngineError> {
    if !path.is_dir() {
        let mut file = open(path)?;
        let len = file_len(&file, path)?;
        scan_gguf(&mut BufReader::new(&mut file), len)
            .map_err(|e| EngineError::model_file(path, e))?;
        return Ok(());
    }
    let mut shards: Vec<std::path::PathBuf> = std::fs::read_dir(path)
        .map_err(|e| EngineError::model_file(path, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "safetensors"))
        .collect();
    shards.sort();
    for shard in &shards {
        let mut file = open(shard)?;
        let len = file_len(&file, shard)?;
        check_safetensors(&mut BufReader::new(&mut file), len)
            .map_err(|e| EngineError::model_file(shard, e))?;
    }
    Ok(())
}

/// Read a GGUF file's header and metadata with candle, after [`scan_gguf`] has checked that
/// every length, count and tensor range in it fits the file. `file` may be at any position.
pub fn read_gguf(file: &mut std::fs::File, path: &Path) -> Result<gguf_file::Content, EngineError> {
    let len = file_len(file, path)?;
    let rewind = |file: &mut std::fs::File| {
        file.seek(SeekFrom::Start(0))
            .map_err(|e| EngineError::model_file(path, e))
    };
    rewind(file)?;
    scan_gguf(&mut BufReader::new(&mut *file), len)
        .map_err(|e| EngineError::model_file(path, e))?;
    rewind(file)?;
    gguf_file::Content::read(&mut BufReader::new(&mut *file))
        .map_err(|e| EngineError::model_file(path, GgufError::Unreadable(e)))
}

/// [`read_gguf`] over bytes in memory (tests and fuzzing).
pub fn read_gguf_bytes(bytes: &[u8]) -> Result<gguf_file::Content, GgufError> {
    let mut cursor = std::io::Cursor::new(bytes);
    scan_gguf(&mut cursor, bytes.len() as u64)?;
    cursor.set_position(0);
    gguf_file::Content::read(&mut cursor).map_err(GgufError::Unreadable)
}

fn open(path: &Path) -> Result<std::fs::File, EngineError> {
    std::fs::File::open(path).map_err(|e| EngineError::model_file(path, e))
}

fn file_len(file: &std::fs::File, path: &Path) -> Result<u64, EngineError> {
    Ok(file
        .metadata()
        .map_err(|e| EngineError::model_file(path, e))?
        .len())
}
