//! `[coverage]`: a candidate-coverage run (the second protocol), its checks, and its
//! catalogues read at load.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::yes;

/// `[coverage]`: a candidate-coverage run (`candidate-coverage-typed-decisions.txt`). Every
/// case of the sources runs under each requested decision: the full label set (when
/// `full_set`) and the present/absent pair of every size in `ks`, each under every name
/// variant in `names` and every choice in `none` (with or without the none option, last).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoverageSection {
    /// Task catalogues (`data/banks/coverage-<task>.catalogue.json`): labels, their natural
    /// and neutral names, descriptions and the none option.
    pub catalogues: Vec<PathBuf>,
    /// Ordinary set sizes to run (each case holds one seeded pair per size of its bank): a
    /// number, or `"all_but_reference"` (L − 1 for a task of L labels).
    #[serde(default = "default_coverage_ks")]
    pub ks: Vec<c2s_records::CoverageSize>,
    /// Name variants: `natural`, `neutral`.
    #[serde(default = "default_coverage_names")]
    pub names: Vec<c2s_records::NameVariant>,
    /// Offer the none option: `false` (the k ordinary options), `true` (none last).
    #[serde(default = "default_coverage_none")]
    pub none: Vec<bool>,
    /// Also classify over the task's full label set (the full-set-correct subsets need it).
    #[serde(default = "yes")]
    pub full_set: bool,
    /// The calibration constraint: thresholds keep the calibration false-rejection rate at or
    /// below this.
    #[serde(default = "default_max_false_rejection")]
    pub max_false_rejection: f64,
    /// Decimals of the quantization audit ("quantizes Laya scores to two decimals").
    #[serde(default = "default_quantize_decimals")]
    pub quantize_decimals: u32,
    /// How an option's token log-probabilities become its score: `summed` (the whole name,
    /// the default), `mean_per_token` or `first_token`.
    #[serde(default)]
    pub scoring: c2s_records::ScoringRule,
    /// The catalogues, read.
    #[serde(skip)]
    pub loaded: Vec<c2s_records::CoverageCatalogue>,
}

fn default_coverage_ks() -> Vec<c2s_records::CoverageSize> {
    [2, 4, 8, 16]
        .into_iter()
        .map(c2s_records::CoverageSize::Fixed)
        .collect()
}
fn default_coverage_names() -> Vec<c2s_records::NameVariant> {
    vec![
        c2s_records::NameVariant::Natural,
        c2s_records::NameVariant::Neutral,
    ]
}
fn default_coverage_none() -> Vec<bool> {
    vec![false, true]
}
fn default_max_false_rejection() -> f64 {
    0.05
}
fn default_quantize_decimals() -> u32 {
    2
}

impl CoverageSection {
    /// The catalogue of `task`.
    pub fn catalogue(&self, task: &str) -> Option<&c2s_records::CoverageCatalogue> {
        self.loaded.iter().find(|c| c.task == task)
    }
}

/// Check `[coverage]` and read its catalogues; errors are (field, message).
pub(crate) fn resolve_coverage(
    c: &mut CoverageSection,
    base: &Path,
) -> Result<(), (String, String)> {
    if c.catalogues.is_empty() {
        return Err(("catalogues".into(), "names no catalogue".into()));
    }
    for path in &c.catalogues {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(base.join(path)).map_err(|e| {
            (
                "catalogues".to_string(),
                format!("cannot read {shown}: {e}"),
            )
        })?;
        let cat: c2s_records::CoverageCatalogue = serde_json::from_str(&text)
            .map_err(|e| ("catalogues".to_string(), format!("{shown}: {e}")))?;
        cat.validate()
            .map_err(|e| ("catalogues".to_string(), format!("{shown}: {e}")))?;
        if c.loaded.iter().any(|x| x.task == cat.task) {
            return Err((
                "catalogues".into(),
                format!("{shown}: task `{}` has two catalogues", cat.task),
            ));
        }
        c.loaded.push(cat);
    }
    if c.ks
        .iter()
        .any(|k| matches!(k, c2s_records::CoverageSize::Fixed(k) if *k < 2))
    {
        return Err(("ks".into(), "every size must be at least 2".into()));
    }
    let mut ks = c.ks.clone();
    ks.sort_unstable();
    ks.dedup();
    if ks.len() != c.ks.len() {
        return Err(("ks".into(), "a size is listed twice".into()));
    }
    // `all_but_reference` must not be a listed number for any task (the same decisions
    // twice), nor below 2.
    for cat in &c.loaded {
        let mut resolved: Vec<usize> = c.ks.iter().map(|k| k.resolve(cat.labels.len())).collect();
        resolved.sort_unstable();
        resolved.dedup();
        if resolved.len() != c.ks.len() {
            return Err((
                "ks".into(),
                format!(
                    "all_but_reference is {} for task `{}`, a size listed too",
                    cat.labels.len().saturating_sub(1),
                    cat.task
                ),
            ));
        }
    }
    if c.names.is_empty() {
        return Err(("names".into(), "names no variant".into()));
    }
    let mut names = c.names.clone();
    names.sort();
    names.dedup();
    if names.len() != c.names.len() {
        return Err(("names".into(), "a variant is listed twice".into()));
    }
    if c.none.len() == 2 && c.none[0] == c.none[1] || c.none.len() > 2 {
        return Err(("none".into(), "a choice is listed twice".into()));
    }
    if c.none.is_empty() {
        return Err(("none".into(), "names no choice (false, true)".into()));
    }
    if c.ks.is_empty() && !c.full_set {
        return Err((
            "ks".into(),
            "no decision to make: empty ks and full_set = false".into(),
        ));
    }
    if !(c.max_false_rejection > 0.0 && c.max_false_rejection < 1.0) {
        return Err((
            "max_false_rejection".into(),
            format!("{} is not in (0, 1)", c.max_false_rejection),
        ));
    }
    if c.quantize_decimals > 6 {
        return Err(("quantize_decimals".into(), "at most 6".into()));
    }
    Ok(())
}
