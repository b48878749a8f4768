//! The paper's exhibits, each in the paper's own layout with the paper's published numbers
//! beside ours (`choice2seq reproduce EXHIBIT`). An exhibit names the panels it needs
//! (`config/panels/*.toml`) and writes its table from their run directories.
//!
//! Implemented: Table 1 ([`table1`]). Every other exhibit's status is in the README's
//! exhibit table.

pub mod table1;

use std::path::{Path, PathBuf};

use clap::ValueEnum;

use super::doc::Doc;

/// An exhibit of the paper that `reproduce` can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Exhibit {
    /// Table 1: paired correctness on 384 items per domain, code and direct interfaces.
    #[value(name = "table1")]
    Table1,
}

/// One panel run an exhibit reads: the panel's config stem and its run directory.
#[derive(Debug, Clone)]
pub struct PanelRun {
    pub panel: &'static str,
    pub run_dir: PathBuf,
}

impl Exhibit {
    pub fn name(self) -> &'static str {
        match self {
            Exhibit::Table1 => "table1",
        }
    }

    /// The panels (`config/panels/NAME.toml`) the exhibit is computed from.
    pub fn panels(self) -> &'static [&'static str] {
        match self {
            Exhibit::Table1 => &["table1-code", "table1-direct"],
        }
    }

    /// The exhibit's document from its panels' run directories.
    pub fn document(self, runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
        match self {
            Exhibit::Table1 => table1::document(runs, against),
        }
    }
}

/// Write `doc` as `out/NAME.md` and `out/NAME.html`; returns both paths.
pub fn write(doc: &Doc, out: &Path, name: &str) -> anyhow::Result<(PathBuf, PathBuf)> {
    use anyhow::Context;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let md = out.join(format!("{name}.md"));
    let html = out.join(format!("{name}.html"));
    std::fs::write(&md, doc.markdown()).with_context(|| format!("writing {}", md.display()))?;
    std::fs::write(&html, doc.html()).with_context(|| format!("writing {}", html.display()))?;
    Ok((md, html))
}
