//! The configuration error, and where in the file a field is (line numbers for messages).

use std::path::{Path, PathBuf};

use thiserror::Error;

/// A configuration error: file, line (1-based, when known), field path and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}{}: {field}: {message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    /// The config file, as it was named.
    pub file: PathBuf,
    /// 1-based line of the field; `None` where no line applies (a section left out, so
    /// defaulted; a file that cannot be read).
    pub line: Option<usize>,
    /// Dotted path of the field (`model.openai.base_url`, `sources[0].path`); `-` when none
    /// applies.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// The line where `key` is assigned in the table whose header starts at `span` (toml spans a
/// table of an array of tables by its header only), or `span` itself.
pub(crate) fn key_span(
    text: &str,
    span: &std::ops::Range<usize>,
    key: &str,
) -> std::ops::Range<usize> {
    let start = span.start.min(text.len());
    let mut offset = start;
    for (n, line) in text[start..].split_inclusive('\n').enumerate() {
        let trimmed = line.trim_start();
        if n > 0 && trimmed.starts_with('[') {
            break;
        }
        if let Some(rest) = trimmed.strip_prefix(key) {
            if rest.trim_start().starts_with('=') {
                return offset..offset + line.len();
            }
        }
        offset += line.len();
    }
    span.clone()
}

/// The file being checked, for errors that point into it.
#[derive(Clone, Copy)]
pub(crate) struct ConfigText<'a> {
    pub text: &'a str,
    pub file: &'a Path,
}

/// A byte range of the config text.
pub(crate) type Span = std::ops::Range<usize>;

impl ConfigText<'_> {
    /// An error at `span` (its line; none for a section left out, so defaulted).
    pub(crate) fn error(
        &self,
        span: Option<Span>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> ConfigError {
        ConfigError {
            file: self.file.to_path_buf(),
            line: span.map(|s| line_of(self.text, s.start)),
            field: field.into(),
            message: message.into(),
        }
    }

    /// The span of `key`'s line in the table at `span` (see [`key_span`]).
    pub(crate) fn key(&self, span: &Option<Span>, key: &str) -> Option<Span> {
        span.as_ref().map(|s| key_span(self.text, s, key))
    }

    /// A TOML or serde error of the whole file: its line, and as field the first name the
    /// message quotes (a missing or unknown field), or for an unknown enum value the dotted
    /// path of its key (`model.openai.scoring` for a bad value in `[model.openai]`).
    pub(crate) fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        let message = e.message().to_string();
        // A bad enum value quotes the value, not its key: find the key at the span.
        let field = e
            .span()
            .filter(|_| message.starts_with("unknown variant"))
            .and_then(|s| field_at(self.text, s.start))
            .or_else(|| message.split('`').nth(1).map(str::to_string))
            .unwrap_or_else(|| "-".into());
        self.error(e.span(), field, message)
    }
}

/// The dotted path of the key assigned on the line at `offset`: the nearest table header
/// above it (`[a.b]`; `[[a]]` as `a[i]`, the i-th of its kind) and the key. `None` when the
/// line assigns no key (a header, a continued array).
fn field_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let (key, _) = line.split_once('=')?;
    let key = key.trim().trim_matches('"');
    if key.is_empty() || key.starts_with('[') || key.contains(char::is_whitespace) {
        return None;
    }
    let above = &text[..line_start];
    let header = above.lines().rev().find_map(|l| {
        let l = l.trim();
        if let Some(name) = l.strip_prefix("[[").and_then(|r| r.split_once("]]")) {
            let name = name.0.trim();
            let index = above
                .lines()
                .filter(|x| {
                    x.trim()
                        .strip_prefix("[[")
                        .and_then(|r| r.split_once("]]"))
                        .map(|n| n.0.trim())
                        == Some(name)
                })
                .count()
                - 1;
            Some(format!("{name}[{index}]"))
        } else {
            l.strip_prefix('[')
                .and_then(|r| r.split_once(']'))
                .map(|n| n.0.trim().to_string())
        }
    });
    Some(match header {
        Some(h) => format!("{h}.{key}"),
        None => key.to_string(),
    })
}
