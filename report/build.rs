//! Embeds the exhibit registry: every `exhibits/*.toml` spec and `exhibits/*.tsv` table of the
//! paper's printed numbers (at the workspace root) becomes an entry of `SPECS` or
//! `PAPER_TABLES` in `$OUT_DIR/exhibit_files.rs`, keyed by its file stem, so that adding an
//! exhibit is adding its files (`exhibits::registry` reads them).

use std::error::Error;
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let dir = manifest.join("../exhibits").canonicalize()?;
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.sort();
    let (mut specs, mut tables) = (String::new(), String::new());
    for path in files {
        let (Some(stem), Some(ext)) = (path.file_stem(), path.extension()) else {
            return Err(format!("{}: not NAME.toml or NAME.tsv", path.display()).into());
        };
        let entry = format!("    ({:?}, include_str!({:?})),\n", stem, path);
        match ext.to_str() {
            Some("toml") => specs.push_str(&entry),
            Some("tsv") => tables.push_str(&entry),
            _ => return Err(format!("{}: not NAME.toml or NAME.tsv", path.display()).into()),
        }
    }
    let mut out = String::new();
    writeln!(out, "/// Every exhibit spec, `(name, text)`, by name.")?;
    writeln!(out, "pub const SPECS: &[(&str, &str)] = &[\n{specs}];")?;
    writeln!(
        out,
        "/// Every table of the paper's printed numbers, `(name, text)`, by name."
    )?;
    writeln!(
        out,
        "pub const PAPER_TABLES: &[(&str, &str)] = &[\n{tables}];"
    )?;
    let target = PathBuf::from(std::env::var("OUT_DIR")?).join("exhibit_files.rs");
    std::fs::write(target, out)?;
    Ok(())
}
