//! Durable file operations: fsync of directories and atomic replacement of small files.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::SinkError;

/// Makes a rename or file creation inside `dir` durable (fsync of the directory). A no-op
/// where directories cannot be opened as files (Windows).
pub(crate) fn sync_dir(dir: &Path) -> Result<(), SinkError> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| SinkError::io(dir, e))?;
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
    }
    Ok(())
}

/// The directory holding `path` (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The hidden temporary name a file is written under before its rename: `.<name>.tmp` in
/// the same directory.
pub(crate) fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    parent_dir(path).join(format!(".{name}.tmp"))
}

/// Writes `bytes` to `path` atomically: a hidden temporary file in the same directory,
/// `sync_all`, `rename`, then fsync of the directory. Readers see the old or the new file,
/// never a partial one.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), SinkError> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = File::create(&tmp).map_err(|e| SinkError::io(&tmp, e))?;
        f.write_all(bytes).map_err(|e| SinkError::io(&tmp, e))?;
        f.sync_all().map_err(|e| SinkError::io(&tmp, e))?;
        drop(f);
        fs::rename(&tmp, path).map_err(|e| SinkError::io(path, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    sync_dir(&parent_dir(path))
}
