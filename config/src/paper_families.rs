//! `[[stats.paper_families]]`: the Holm families the paper declares for a panel, each with the
//! number of tests the paper corrects together and the passage that says so. The report lists
//! every family a run has beside the paper's size and flags a family whose size differs (a
//! run of one model holds a third of a family the paper spans over three models, say).
//!
//! A paper family names either a McNemar family of the run (`[[stats.families]]`, or the
//! default primary family) or the `family` of the run's unit contrasts (`[[stats.contrasts]]`).

use serde::{Deserialize, Serialize};

use crate::{FamilyEntry, StatsSection};

/// One Holm family as the paper declares it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PaperFamilyEntry {
    /// The family's name in this config: a `[[stats.families]]` name or a contrast `family`.
    pub name: String,
    /// How many tests the paper corrects together in this family.
    pub tests: u32,
    /// The paper's words (section and quote).
    pub passage: String,
}

/// The paper's size of the primary family (A.6: "The primary six Native/Serial exact McNemar
/// tests share a Holm correction at 0.05"), added when a run uses that default family and
/// declares no size for it.
pub fn primary_paper_family() -> PaperFamilyEntry {
    PaperFamilyEntry {
        name: "primary".into(),
        tests: 6,
        passage: "A.6: \"The primary six Native/Serial exact McNemar tests share a Holm \
                  correction at 0.05\""
            .into(),
    }
}

/// Check `[[stats.paper_families]]` against the run's families and contrasts; errors are
/// (field, message).
pub(crate) fn check_paper_families(stats: &StatsSection) -> Result<(), (String, String)> {
    let mcnemar: Vec<&str> = stats.families.iter().map(|f| f.name.as_str()).collect();
    let contrast: Vec<&str> = stats
        .contrasts
        .iter()
        .filter_map(|c| c.family.as_deref())
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    for (i, f) in stats.paper_families.iter().enumerate() {
        let field = |k: &str| format!("stats.paper_families[{i}].{k}");
        if !seen.insert(f.name.as_str()) {
            return Err((field("name"), format!("`{}` is declared twice", f.name)));
        }
        if f.tests == 0 {
            return Err((field("tests"), "a family holds at least one test".into()));
        }
        if f.passage.trim().is_empty() {
            return Err((
                field("passage"),
                "quote the paper's passage that declares the family".into(),
            ));
        }
        let is_primary = f.name == "primary" && stats.families.is_empty();
        if !is_primary
            && !mcnemar.contains(&f.name.as_str())
            && !contrast.contains(&f.name.as_str())
        {
            return Err((
                field("name"),
                format!(
                    "`{}` names no Holm family of this config (families: {}; contrast \
                     families: {})",
                    f.name,
                    none_if_empty(&mcnemar),
                    none_if_empty(&contrast),
                ),
            ));
        }
    }
    Ok(())
}

fn none_if_empty(names: &[&str]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        let mut v = names.to_vec();
        v.sort();
        v.dedup();
        v.join(", ")
    }
}

/// After defaults are resolved: the primary family's paper size when the run uses it and
/// declares none.
pub(crate) fn add_primary_size(families: &[FamilyEntry], paper: &mut Vec<PaperFamilyEntry>) {
    let primary = families.iter().any(|f| f.name == "primary");
    if primary && !paper.iter().any(|p| p.name == "primary") {
        paper.push(primary_paper_family());
    }
}
