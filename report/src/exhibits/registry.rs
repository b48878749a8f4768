//! The exhibit registry: every exhibit `reproduce` writes is declared once, as a spec file
//! `exhibits/NAME.toml` at the repository root (embedded at build time by `build.rs`):
//!
//! ```toml
//! title = "Table 1"                           # how the paper (and the docs) name it
//! panels = ["table1-code", "table1-direct"]   # config/panels/NAME.toml, each run once per model
//! shows = "paired correctness, …"             # what our exhibit shows
//! paper = "all ten rows; Δ Native EM, …"      # what of the paper's is printed beside ours
//!
//! [document]                                  # its layout (super::engine)
//! title = "Table 1: Paired correctness"
//! [[document.sections]]
//! …
//! [[checks]]                                  # what the printed numbers satisfy (super::checks)
//! why = "every row holds 384 items"
//! each = "both + native_only + serial_only + neither == 384"
//! ```
//!
//! An exhibit computed without a model call names no panel and says where its numbers come
//! from instead (`inputs = "…"`). The CLI's exhibit names and `all` (in the paper's order:
//! its tables, then its figures, then the rest), the panels each exhibit runs, and the docs'
//! exhibit table ([`markdown_table`], docs/exhibits.md) derive from these files; the paper's
//! printed numbers are the tables beside them ([`super::paper`]). The code that computes each
//! exhibit is found by its name ([`super::CODE`]).

use std::sync::OnceLock;

use anyhow::Context;
use serde::Deserialize;

mod files {
    include!(concat!(env!("OUT_DIR"), "/exhibit_files.rs"));
}

pub(super) use files::PAPER_TABLES;

/// One exhibit's spec: `exhibits/NAME.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExhibitSpec {
    /// The file stem: `reproduce NAME`, `NAME.md`.
    #[serde(skip)]
    pub name: String,
    /// As the paper names it ("Table 1", "Figure 2 (numbers)").
    pub title: String,
    /// The panels it is computed from (`config/panels/NAME.toml`).
    #[serde(default)]
    pub panels: Vec<String>,
    /// Where its numbers come from when it runs no panel.
    pub inputs: Option<String>,
    /// What the exhibit shows.
    pub shows: String,
    /// What of the paper's is printed beside ours.
    pub paper: String,
    /// The row sets it reads from its panels' runs without code ([`super::sources`]).
    #[serde(default)]
    pub sources: Vec<super::sources::SourceSpec>,
    /// How the exhibit's document is laid out ([`super::engine`]).
    pub document: super::engine::DocumentSpec,
    /// What the paper's printed numbers must satisfy ([`super::checks`]).
    #[serde(default)]
    pub checks: Vec<super::checks::CheckSpec>,
}

impl ExhibitSpec {
    fn parse(name: &str, text: &str) -> anyhow::Result<ExhibitSpec> {
        let mut spec: ExhibitSpec =
            toml::from_str(text).with_context(|| format!("exhibits/{name}.toml"))?;
        spec.name = name.to_string();
        match (spec.panels.is_empty(), &spec.inputs) {
            (true, None) => anyhow::bail!(
                "exhibits/{name}.toml: no panels and no `inputs`: say where its numbers come from"
            ),
            (false, Some(_)) => {
                anyhow::bail!("exhibits/{name}.toml: `inputs` is for an exhibit without panels")
            }
            _ => {}
        }
        for source in &spec.sources {
            source
                .validate(&spec.panels)
                .with_context(|| format!("exhibits/{name}.toml"))?;
        }
        Ok(spec)
    }

    /// Where the exhibit sorts in `all`: the paper's tables (main text, then appendices B–E,
    /// each by number), then its figures by number, then the rest by name.
    fn order(&self) -> (u8, String, u32, String) {
        let numbered = |rest: &str| {
            let letter: String = rest.chars().take_while(char::is_ascii_uppercase).collect();
            let digits: String = (rest[letter.len()..].chars())
                .take_while(char::is_ascii_digit)
                .collect();
            (letter, digits.parse().ok())
        };
        let (kind, rest) = match self.title.split_once(' ') {
            Some(("Table", rest)) => (0, rest),
            Some(("Figure", rest)) => (1, rest),
            _ => (2, ""),
        };
        match numbered(rest) {
            (letter, Some(number)) if kind < 2 => (kind, letter, number, self.name.clone()),
            _ => (2, String::new(), 0, self.name.clone()),
        }
    }
}

/// Every registered exhibit, in `all`'s order.
pub fn specs() -> anyhow::Result<&'static [ExhibitSpec]> {
    static SPECS: OnceLock<Result<Vec<ExhibitSpec>, String>> = OnceLock::new();
    let parsed = SPECS.get_or_init(|| {
        let mut specs = (files::SPECS.iter())
            .map(|(name, text)| ExhibitSpec::parse(name, text))
            .collect::<anyhow::Result<Vec<_>>>()
            .map_err(|e| format!("{e:#}"))?;
        specs.sort_by_key(ExhibitSpec::order);
        Ok(specs)
    });
    parsed.as_deref().map_err(|e| anyhow::anyhow!("{e}"))
}

/// The exhibit table of docs/exhibits.md: one row per registered exhibit, and `all`.
pub fn markdown_table() -> anyhow::Result<String> {
    let mut out = String::from(
        "| exhibit | command | panels | what it shows | paper numbers beside ours |\n\
         |---|---|---|---|---|\n",
    );
    for spec in specs()? {
        let panels = match &spec.inputs {
            Some(inputs) => format!("none: {inputs}"),
            None => (spec.panels.iter())
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        out.push_str(&format!(
            "| {} | `choice2seq reproduce {}` | {panels} | {} | {} |\n",
            spec.title, spec.name, spec.shows, spec.paper
        ));
    }
    out.push_str(
        "| all of the above | `choice2seq reproduce all` | every panel above, each run once \
         | every exhibit | as above |\n",
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workspace root (panel configs and docs are relative to it).
    fn root() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    #[test]
    fn every_spec_parses_and_names_panels_that_exist() {
        let specs = specs().unwrap();
        assert_eq!(specs.len(), files::SPECS.len());
        for spec in specs {
            for panel in &spec.panels {
                let config = root().join(format!("config/panels/{panel}.toml"));
                assert!(config.is_file(), "{}: no {}", spec.name, config.display());
            }
        }
    }

    /// `all` follows the paper: main-text tables, appendix tables by letter and number, then
    /// figures by number, then the exhibits the paper does not number.
    #[test]
    fn all_is_in_the_papers_order() {
        let names: Vec<&str> = specs().unwrap().iter().map(|s| s.name.as_str()).collect();
        let at = |n: &str| names.iter().position(|m| *m == n).unwrap();
        assert_eq!(&names[..4], ["table1", "table2", "table3", "table4"]);
        assert!(at("tableB2") < at("tableC1") && at("tableC5") < at("tableD1"));
        assert!(at("tableD9") < at("tableD10") && at("tableD17") < at("tableE1"));
        assert!(at("tableE3") < at("figure2") && at("figure9") < at("figure10"));
        assert_eq!(&names[names.len() - 2..], ["native-control", "projection"]);
    }

    #[test]
    fn a_spec_without_panels_says_where_its_numbers_come_from() {
        let err = ExhibitSpec::parse(
            "x",
            "title = \"Table X\"\nshows = \"s\"\npaper = \"p\"\n[document]\ntitle = \"T\"\n",
        )
        .unwrap_err();
        assert!(
            format!("{err:#}").contains("no panels and no `inputs`"),
            "{err:#}"
        );
        let err =
            ExhibitSpec::parse("x", "title = \"T\"\nshow = \"s\"\npaper = \"p\"\n").unwrap_err();
        assert!(format!("{err:#}").contains("exhibits/x.toml"), "{err:#}");
    }

    /// docs/exhibits.md's exhibit table is generated from the registry: this test fails when
    /// they differ, and rewrites the table with `C2S_BLESS=1`.
    #[test]
    fn the_docs_exhibit_table_is_the_registrys() {
        const BEGIN: &str = "<!-- exhibit table: generated from exhibits/*.toml -->\n";
        const END: &str = "<!-- end of the exhibit table -->\n";
        let path = root().join("docs/exhibits.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let start = doc.find(BEGIN).expect("the table's begin marker") + BEGIN.len();
        let end = doc.find(END).expect("the table's end marker");
        let table = markdown_table().unwrap();
        if std::env::var_os("C2S_BLESS").is_some() {
            std::fs::write(&path, format!("{}{table}{}", &doc[..start], &doc[end..])).unwrap();
        } else {
            assert_eq!(
                doc[start..end],
                table,
                "docs/exhibits.md's exhibit table differs from exhibits/*.toml: run this test \
                 with C2S_BLESS=1"
            );
        }
    }
}
