//! The bank files: their names and texts, writing them, reading them back.

use std::collections::BTreeMap;
use std::path::Path;

use c2s_records::{CoverageCase, CoverageCatalogue};

use super::build::CoverageBanks;
use super::{io_err, CoverageBankError, CoverageProvenance, COVERAGE_PROVENANCE};

/// File name of a task's catalogue: `coverage-<task>.catalogue.json`.
pub fn catalogue_file(task: &str) -> String {
    format!("coverage-{task}.catalogue.json")
}
/// File name of a task's cases: `coverage-<task>.jsonl`.
pub fn cases_file(task: &str) -> String {
    format!("coverage-{task}.jsonl")
}

/// A catalogue as written (pretty JSON, trailing newline).
pub fn catalogue_text(catalogue: &CoverageCatalogue) -> String {
    let mut t = serde_json::to_string_pretty(catalogue).unwrap_or_default();
    t.push('\n');
    t
}

/// Cases as written (one JSON object a line).
pub fn cases_text(cases: &[CoverageCase]) -> String {
    let mut t = String::new();
    for c in cases {
        t.push_str(&serde_json::to_string(c).unwrap_or_default());
        t.push('\n');
    }
    t
}

/// Write every task's catalogue and cases and `coverage-provenance.json` into `dir`.
pub fn write_coverage_banks(
    banks: &mut CoverageBanks,
    dir: &Path,
) -> Result<CoverageProvenance, CoverageBankError> {
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let mut files = BTreeMap::new();
    for t in &banks.tasks {
        for (name, text) in [
            (
                catalogue_file(&t.catalogue.task),
                catalogue_text(&t.catalogue),
            ),
            (cases_file(&t.catalogue.task), cases_text(&t.cases)),
        ] {
            files.insert(name.clone(), crate::bank::sha256_hex(text.as_bytes()));
            let path = dir.join(&name);
            std::fs::write(&path, text).map_err(|e| io_err(&path, e))?;
        }
    }
    banks.provenance.files = files;
    let path = dir.join(COVERAGE_PROVENANCE);
    let mut text = serde_json::to_string_pretty(&banks.provenance).map_err(|e| io_err(&path, e))?;
    text.push('\n');
    std::fs::write(&path, text).map_err(|e| io_err(&path, e))?;
    Ok(banks.provenance.clone())
}

/// Read a catalogue file.
pub fn read_catalogue(path: &Path) -> Result<CoverageCatalogue, CoverageBankError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_err(path, e))?;
    let c: CoverageCatalogue = serde_json::from_str(&text).map_err(|e| io_err(path, e))?;
    c.validate().map_err(|e| io_err(path, e))?;
    Ok(c)
}

/// Read a cases file (JSONL); errors name the line.
pub fn read_cases(path: &Path) -> Result<Vec<CoverageCase>, CoverageBankError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_err(path, e))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(
            c2s_records::parse_case(line).map_err(|e| CoverageBankError::Tsv {
                file: path.display().to_string(),
                line: i + 1,
                message: e.to_string(),
            })?,
        );
    }
    Ok(out)
}

/// Read `coverage-provenance.json`.
pub fn read_provenance(path: &Path) -> Result<CoverageProvenance, CoverageBankError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_err(path, e))?;
    serde_json::from_str(&text).map_err(|e| io_err(path, e))
}
