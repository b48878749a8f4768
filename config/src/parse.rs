//! Reading a config file: the file as written (`RawConfig`), each section checked by its own
//! module, the checks that join sections, and the validated [`RunConfig`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use c2s_records::{comparison_label, Arm, ArmSpec, Contract, ItemPolicy, RequestLayout};

use crate::arms::{check_arms, check_comparisons, ArmEntry, ComparisonEntry};
use crate::coverage::{resolve_coverage, CoverageSection};
use crate::dialogue::{resolve_dialogue, DialogueSection};
use crate::error::{ConfigError, ConfigText, Span};
use crate::inference::InferenceSection;
use crate::model::{GenerationEndpoint, ModelSection};
use crate::output::{CopyPlansSection, OutputSection};
use crate::paper_families;
use crate::run::RunSection;
use crate::serve::ServeSection;
use crate::source::{check_sources, item_selector_source, SourceConfig};
use crate::stats::{check_stats, primary_family, StatsSection};

/// The file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    run: RunSection,
    model: Spanned<ModelSection>,
    #[serde(default)]
    sources: Vec<Spanned<SourceConfig>>,
    #[serde(default)]
    arms: Vec<Spanned<ArmEntry>>,
    #[serde(default)]
    coverage: Option<Spanned<CoverageSection>>,
    #[serde(default)]
    dialogue: Option<Spanned<DialogueSection>>,
    #[serde(default)]
    comparisons: Vec<Spanned<ComparisonEntry>>,
    #[serde(default)]
    inference: Option<Spanned<InferenceSection>>,
    #[serde(default)]
    stats: Option<Spanned<StatsSection>>,
    #[serde(default)]
    output: Option<Spanned<OutputSection>>,
    #[serde(default)]
    copy_plans: Option<Spanned<CopyPlansSection>>,
    #[serde(default)]
    serve: Option<ServeSection>,
}

/// A validated configuration.
#[derive(Debug, Clone, Serialize)]
pub struct RunConfig {
    /// `[run]`: identity, seeds, accepted lengths, failure policy.
    pub run: RunSection,
    /// `[model]`: the model and its engine (a Hub model's `path` is set by the run).
    pub model: ModelSection,
    /// `[[sources]]`, in file order (at least one); file paths exist, ids files are read.
    pub sources: Vec<SourceConfig>,
    /// Arms in file order, parsed.
    pub arms: Vec<ArmSpec>,
    /// Comparisons as (whole-answer label, local label).
    pub comparisons: Vec<(String, String)>,
    /// `[inference]`: batching and backpressure (defaults when left out).
    pub inference: InferenceSection,
    /// `[stats]`: bootstrap, snapshots, families, contrasts and cells (defaults when left
    /// out).
    pub stats: StatsSection,
    /// `[output]`: Parquet parts and the optional Kafka publication (defaults when left out).
    pub output: OutputSection,
    /// Supplied copy plans (IncorrectCopy arms).
    pub copy_plans: Option<CopyPlansSection>,
    /// A candidate-coverage run (the second protocol): its cases replace items and arms.
    pub coverage: Option<CoverageSection>,
    /// A dialogue-state run (Appendix C): its dialogues replace items and arms.
    pub dialogue: Option<DialogueSection>,
    /// `[serve]`: the live monitor (`--serve` overrides it).
    pub serve: Option<ServeSection>,
    /// Where the config was read from.
    pub file: PathBuf,
}

/// What a run runs: items through arms (the main protocol), candidate-coverage cases
/// (`[coverage]`) or dialogues (`[dialogue]`). The config keeps the two sections as written
/// (the manifest records them so); [`RunConfig::kind`] is the one place that reads them.
#[derive(Debug, Clone, Copy)]
pub enum RunKind<'c> {
    /// Items through `[[arms]]` (neither section set).
    Items,
    /// Candidate-coverage cases, with their section.
    Coverage(&'c CoverageSection),
    /// Dialogue states, with their section.
    Dialogue(&'c DialogueSection),
}

impl RunConfig {
    /// The run's protocol (validation allows at most one of `[coverage]` and `[dialogue]`).
    pub fn kind(&self) -> RunKind<'_> {
        match (&self.coverage, &self.dialogue) {
            (Some(c), _) => RunKind::Coverage(c),
            (None, Some(d)) => RunKind::Dialogue(d),
            (None, None) => RunKind::Items,
        }
    }

    /// The target lengths an item must have (`[run] min_length`, `max_length`).
    pub fn item_policy(&self) -> ItemPolicy {
        ItemPolicy {
            min_length: self.run.min_length,
            max_length: self.run.max_length,
        }
    }
}

/// Read and validate a config file.
pub fn load(path: &Path) -> Result<RunConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        line: None,
        field: "-".into(),
        message: format!("cannot read: {e}"),
    })?;
    parse(&text, path)
}

/// Validate config `text` (read from `file`, for messages); relative paths resolve against the
/// current directory.
pub fn parse(text: &str, file: &Path) -> Result<RunConfig, ConfigError> {
    parse_in(text, file, Path::new("."))
}

/// Validate config `text`, resolving relative paths against `base` for existence checks.
pub fn parse_in(text: &str, file: &Path, base: &Path) -> Result<RunConfig, ConfigError> {
    parse_with_env(text, file, base, &|var| std::env::var_os(var))
}

/// [`parse_in`], with `env` looking up environment variables (the Kafka sections'
/// `sasl_password_env`).
///
/// Each section checks its own fields (`RunSection::check`, `ModelSection::check`,
/// `check_sources`, …); what joins sections is checked here: a run is items with arms, or a
/// `[coverage]` or `[dialogue]` run without them; comparisons and families are written with
/// the paper-layout labels and then relabelled for the run's layout; scored contracts on a
/// served model need its tokenizer; IncorrectCopy arms need supplied plans.
pub fn parse_with_env(
    text: &str,
    file: &Path,
    base: &Path,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<RunConfig, ConfigError> {
    let at = ConfigText { text, file };
    let raw: RawConfig = toml::from_str(text).map_err(|e| at.toml_error(&e))?;
    // A section left out (so defaulted) has no span, and its errors no line.
    fn split<T: Default>(s: Option<Spanned<T>>) -> (T, Option<Span>) {
        match s {
            Some(s) => {
                let span = s.span();
                (s.into_inner(), Some(span))
            }
            None => (T::default(), None),
        }
    }
    raw.run
        .check()
        .map_err(|(field, message)| at.error(None, field, message))?;
    let model_span = Some(raw.model.span());
    let mut model = raw.model.into_inner();
    model
        .check(base)
        .map_err(|(field, message)| at.error(model_span.clone(), field, message))?;
    let sources = check_sources(&at, raw.sources, base, env)?;
    let coverage = match raw.coverage {
        None => None,
        Some(section) => {
            let span = Some(section.span());
            let mut section = section.into_inner();
            resolve_coverage(&mut section, base).map_err(|(field, message)| {
                at.error(span.clone(), format!("coverage.{field}"), message)
            })?;
            if !raw.arms.is_empty() {
                return Err(at.error(
                    span,
                    "arms",
                    "a [coverage] run has no [[arms]]: its decisions are set in [coverage]",
                ));
            }
            if let Some(i) = item_selector_source(&sources) {
                return Err(at.error(
                    None,
                    format!("sources[{i}].select"),
                    "coverage cases are selected by ids or ids_file only",
                ));
            }
            Some(section)
        }
    };
    let dialogue = match raw.dialogue {
        None => None,
        Some(section) => {
            let span = Some(section.span());
            let mut section = section.into_inner();
            resolve_dialogue(&mut section).map_err(|(field, message)| {
                at.error(span.clone(), format!("dialogue.{field}"), message)
            })?;
            if !raw.arms.is_empty() || coverage.is_some() {
                return Err(at.error(
                    span,
                    "dialogue",
                    "a [dialogue] run has no [[arms]] and no [coverage]: its arms are set in [dialogue]",
                ));
            }
            if let Some(i) = item_selector_source(&sources) {
                return Err(at.error(
                    None,
                    format!("sources[{i}].select"),
                    "dialogues are selected by ids or ids_file only",
                ));
            }
            Some(section)
        }
    };
    if raw.arms.is_empty() && coverage.is_none() && dialogue.is_none() {
        return Err(at.error(
            None,
            "arms",
            "at least one [[arms]] entry is needed (or a [coverage] or [dialogue] section)",
        ));
    }
    let mut arms = check_arms(&at, &raw.arms, &model)?;
    let comparisons = check_comparisons(&at, &raw.comparisons, &arms)?;
    let (inference, inference_span) = split(raw.inference);
    inference
        .check()
        .map_err(|(field, message)| at.error(inference_span, field, message))?;
    let (mut stats, stats_span) = split(raw.stats);
    check_stats(&at, &stats, &stats_span, &comparisons, &arms)?;
    let comparisons = apply_layout(raw.run.request_layout, &mut arms, comparisons, &mut stats);
    let (mut output, output_span) = split(raw.output);
    output.check(&at, &output_span, base, env)?;
    let copy_plans = match raw.copy_plans {
        None => None,
        Some(section) => {
            let span = Some(section.span());
            Some(section.into_inner().read(&at, span, base)?)
        }
    };
    if let Some(o) = &model.openai {
        // Scoring and our own rendering need the served model's tokenizer and template.
        let needs_template = arms.iter().find(|a| {
            a.contract == Contract::ScoredCode
                || a.arm == Arm::PrefixContinue
                || o.generation_endpoint == GenerationEndpoint::Completions
        });
        if let (Some(a), true) = (needs_template, model.path.as_os_str().is_empty()) {
            return Err(at.error(
                model_span,
                "model.path",
                format!(
                    "arm {} renders the chat template on our side (scored options, an assistant prefix or generation_endpoint = \"completions\"): set path to the served model's GGUF or tokenizer directory",
                    a.label()
                ),
            ));
        }
    }
    let copies_supplied = arms.iter().any(|a| a.arm == Arm::IncorrectCopy);
    if let Some(serve) = &raw.serve {
        serve
            .check()
            .map_err(|(field, message)| at.error(None, field, message))?;
    }
    if copies_supplied && copy_plans.is_none() {
        return Err(at.error(
            None,
            "copy_plans",
            "IncorrectCopy arms copy supplied plans: name a plan file in [copy_plans] path",
        ));
    }
    if !copies_supplied && copy_plans.is_some() {
        return Err(at.error(
            None,
            "copy_plans",
            "[copy_plans] is set but no IncorrectCopy arm uses it",
        ));
    }
    Ok(RunConfig {
        run: raw.run,
        model,
        sources,
        arms,
        comparisons,
        inference,
        stats,
        output,
        copy_plans,
        coverage,
        dialogue,
        serve: raw.serve,
        file: file.to_path_buf(),
    })
}

/// Arms, comparisons and families are written and checked with the paper-layout labels; a
/// non-paper layout then applies to every arm and its label suffix to every name. Without
/// declared families the run gets the paper's primary family (A.6) when it has that
/// comparison. Returns the relabelled comparisons.
fn apply_layout(
    layout: RequestLayout,
    arms: &mut [ArmSpec],
    comparisons: Vec<(String, String)>,
    stats: &mut StatsSection,
) -> Vec<(String, String)> {
    let comparison_labels: Vec<String> = comparisons
        .iter()
        .map(|(a, b)| comparison_label(a, b))
        .collect();
    let relabel = |label: &str| format!("{label}{}", layout.label_suffix());
    for spec in arms.iter_mut() {
        spec.layout = layout;
    }
    let comparisons: Vec<(String, String)> = comparisons
        .iter()
        .map(|(a, b)| (relabel(a), relabel(b)))
        .collect();
    for f in &mut stats.families {
        f.comparisons = f
            .comparisons
            .iter()
            .map(|c| {
                comparisons
                    .iter()
                    .zip(&comparison_labels)
                    .find(|(_, plain)| *plain == c)
                    .map(|((a, b), _)| comparison_label(a, b))
                    .unwrap_or_else(|| c.clone())
            })
            .collect();
    }
    for c in &mut stats.contrasts {
        for sel in c.compared.iter_mut().chain(c.reference.iter_mut()) {
            sel.arm = relabel(&sel.arm);
        }
    }
    for c in &mut stats.cells {
        c.arm = relabel(&c.arm);
        c.native = c.native.as_deref().map(relabel);
    }
    if stats.families.is_empty() {
        let labels: Vec<String> = comparisons
            .iter()
            .map(|(a, b)| comparison_label(a, b))
            .collect();
        if let Some(mut family) = primary_family(&comparison_labels) {
            // The primary comparison under this run's layout.
            if let Some(k) = comparison_labels
                .iter()
                .position(|l| family.comparisons.contains(l))
            {
                family.comparisons = vec![labels[k].clone()];
            }
            stats.families.push(family);
        }
    }
    paper_families::add_primary_size(&stats.families, &mut stats.paper_families);
    comparisons
}
