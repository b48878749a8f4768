//! `[[arms]]` and `[[comparisons]]`: the interfaces a run asks every item through, parsed into
//! typed [`ArmSpec`]s, and the paired comparisons between them.

use serde::{Deserialize, Serialize};
use toml::Spanned;

use c2s_records::{
    Arm, ArmSpec, Contract, CopyControl, Draft, Evidence, InterventionReadout, LocalAlphabet,
    OptionNames, OptionOrder, PromptVariant, QueryPositions, Support, Template,
};

use crate::error::{ConfigError, ConfigText};
use crate::model::ModelSection;

/// `[[arms]]`: one interface or control to run on every item.
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ArmEntry {
    /// Native, NativeControl, Independent, Serial, TeacherForced, GoldCopy, IncorrectCopy,
    /// SelfPlanSpell, SerialStop, WholeGenerate, PrefixContinue, PrefixIntervention.
    pub arm: String,
    /// Full, FullFill, UnionCall, UnionFill, TrieCall, TrieFill (local arms; default Full).
    #[serde(default)]
    pub support: Option<String>,
    /// `code` (scored codes, default), `gencode`, `char` or `string` (generated).
    #[serde(default)]
    pub contract: Option<String>,
    /// Prompt variant v1, v2, v3 (default v1).
    #[serde(default)]
    pub variant: Option<String>,
    /// Readout template T0, T1, T2 (copy arms).
    #[serde(default)]
    pub template: Option<String>,
    /// Copy evidence raw, indexed, direct, padded or padded-tokens (copy arms; default raw).
    #[serde(default)]
    pub evidence: Option<String>,
    /// Copy control independent or serial (copy arms; default serial).
    #[serde(default)]
    pub copy_control: Option<String>,
    /// Option order: 0 = reference, k > 0 = seeded permutation Ok.
    #[serde(default)]
    pub order: Option<u32>,
    /// Readout option names (B.5): `opaque` (default), `opaque_remapped`, `readable_aligned`,
    /// `readable_conflicting`.
    #[serde(default)]
    pub names: Option<String>,
    /// Greedy budget in new tokens (generated contracts); default 8 per character, 32 per
    /// complete string. B.3's whole-answer panel uses 64.
    #[serde(default)]
    pub max_new_tokens: Option<u32>,
    /// Full support's alphabet: `domain` (default) or `lowercase` (all 26 letters; D.7's a–z
    /// factor on a–j sources). Local arms with support Full or FullFill.
    #[serde(default)]
    pub alphabet: Option<String>,
    /// One-based positions a Fill support queries all the same (D.7's six-query
    /// controllers: `also_query = [1, 4, 8, 12]`).
    #[serde(default)]
    pub also_query: Option<Vec<u32>>,
    /// PrefixIntervention (A.4): `correct` (default) or `error` draft.
    #[serde(default)]
    pub draft: Option<String>,
    /// PrefixIntervention (A.4): `character` (default) or `whole` readout.
    #[serde(default)]
    pub readout: Option<String>,
    /// D.2's repeated observations: 0 (default) the setting's first request, k > 0 its k-th
    /// identical repeat (label suffix `/rk`).
    #[serde(default)]
    pub repeat: Option<u32>,
}

/// `[[comparisons]]`: a paired comparison of two configured arms (labels), in an explicit
/// direction: `native` is the reference side whose correct items are SCR's denominator,
/// `serial` the side compared with it. Any two distinct arms may be paired — the main tables
/// pair Native with a local arm; Table 3 and B.1 pair Native with WholeGenerate ("The same
/// checkpoint and items are used in Native and legal-code Serial … Joint, lost and gained
/// counts below retain this pairing", B.3).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ComparisonEntry {
    /// Label of the reference arm, e.g. `Native/code`.
    #[serde(alias = "reference")]
    pub native: String,
    /// Label of the compared arm, e.g. `Serial/Full/code` or `WholeGenerate/string/max64`.
    #[serde(alias = "compared")]
    pub serial: String,
}

/// Parse one `[[arms]]` entry; errors are (field, message).
pub fn arm_spec(a: &ArmEntry) -> Result<ArmSpec, (String, String)> {
    let arm = Arm::ALL
        .into_iter()
        .find(|x| x.as_str().eq_ignore_ascii_case(&a.arm))
        .ok_or_else(|| {
            let names: Vec<&str> = Arm::ALL.iter().map(|x| x.as_str()).collect();
            (
                "arm".to_string(),
                format!("unknown arm `{}` ({})", a.arm, names.join(", ")),
            )
        })?;
    let mut spec = ArmSpec::new(arm);
    if let Some(s) = &a.support {
        spec.support = Support::parse(s).ok_or_else(|| {
            (
                "support".to_string(),
                format!("unknown support `{s}` (Full, FullFill, UnionCall, UnionFill, TrieCall, TrieFill)"),
            )
        })?;
        if arm.is_whole_answer() {
            return Err((
                "support".into(),
                format!("{arm} selects a whole answer; it has no local support"),
            ));
        }
    }
    spec.contract = match a.contract.as_deref() {
        None => match arm {
            Arm::WholeGenerate | Arm::PrefixContinue => Contract::GeneratedString,
            _ => Contract::ScoredCode,
        },
        Some("code") => Contract::ScoredCode,
        Some("gencode") => Contract::GeneratedCode,
        Some("char") => Contract::GeneratedCharacter,
        Some("string") => Contract::GeneratedString,
        Some(other) => {
            return Err((
                "contract".into(),
                format!("unknown contract `{other}` (code, gencode, char, string)"),
            ))
        }
    };
    spec.variant = match a.variant.as_deref() {
        None | Some("v1") => PromptVariant::V1,
        Some("v2") => PromptVariant::V2,
        Some("v3") => PromptVariant::V3,
        Some(other) => {
            return Err((
                "variant".into(),
                format!("unknown variant `{other}` (v1, v2, v3)"),
            ))
        }
    };
    spec.template = match a.template.as_deref() {
        None => None,
        Some("T0") => Some(Template::T0),
        Some("T1") => Some(Template::T1),
        Some("T2") => Some(Template::T2),
        Some(other) => {
            return Err((
                "template".into(),
                format!("unknown template `{other}` (T0, T1, T2)"),
            ))
        }
    };
    spec.evidence = match a.evidence.as_deref() {
        None | Some("raw") => Evidence::Raw,
        Some("indexed") => Evidence::Indexed,
        Some("direct") => Evidence::Direct,
        Some("padded") => Evidence::Padded,
        Some("padded-tokens") => Evidence::PaddedTokens,
        Some(other) => {
            return Err((
                "evidence".into(),
                format!("unknown evidence `{other}` (raw, indexed, direct, padded, padded-tokens)"),
            ))
        }
    };
    spec.copy_control = match a.copy_control.as_deref() {
        None | Some("serial") => CopyControl::Serial,
        Some("independent") => CopyControl::Independent,
        Some("batch") => CopyControl::Batch,
        Some(other) => {
            return Err((
                "copy_control".into(),
                format!("unknown copy control `{other}` (independent, serial, batch)"),
            ))
        }
    };
    spec.order = match a.order {
        None | Some(0) => OptionOrder::Reference,
        Some(k) => OptionOrder::Permuted(k),
    };
    spec.max_new_tokens = a.max_new_tokens;
    spec.names = match a.names.as_deref() {
        None => OptionNames::Opaque,
        Some(n) => OptionNames::parse(n).ok_or_else(|| {
            let all: Vec<&str> = OptionNames::ALL.iter().map(|n| n.as_str()).collect();
            (
                "names".to_string(),
                format!("unknown option names `{n}` ({})", all.join(", ")),
            )
        })?,
    };
    spec.alphabet = match a.alphabet.as_deref() {
        None => LocalAlphabet::Domain,
        Some(n) => LocalAlphabet::parse(n).ok_or_else(|| {
            (
                "alphabet".to_string(),
                format!("unknown alphabet `{n}` (domain, lowercase)"),
            )
        })?,
    };
    spec.draft = match a.draft.as_deref() {
        None | Some("correct") => Draft::Correct,
        Some("error") => Draft::Error,
        Some(other) => {
            return Err((
                "draft".into(),
                format!("unknown draft `{other}` (correct, error)"),
            ))
        }
    };
    spec.readout = match a.readout.as_deref() {
        None | Some("character") => InterventionReadout::Character,
        Some("whole") => InterventionReadout::Whole,
        Some(other) => {
            return Err((
                "readout".into(),
                format!("unknown readout `{other}` (character, whole)"),
            ))
        }
    };
    spec.repeat = match a.repeat {
        None => 0,
        Some(k) => u8::try_from(k).map_err(|_| {
            (
                "repeat".to_string(),
                format!("repeat {k} is out of range (0 to 255)"),
            )
        })?,
    };
    if let Some(positions) = &a.also_query {
        spec.also_query = QueryPositions::from_positions(positions).ok_or_else(|| {
            (
                "also_query".to_string(),
                format!(
                    "positions must be between 1 and {}: {positions:?}",
                    QueryPositions::MAX
                ),
            )
        })?;
    }
    Ok(spec)
}

/// Parse and check every `[[arms]]` entry: a known spec, allowed by the protocol, listed
/// once; D.9's token-matched padding needs a model with a tokenizer.
pub(crate) fn check_arms(
    at: &ConfigText<'_>,
    raw: &[Spanned<ArmEntry>],
    model: &ModelSection,
) -> Result<Vec<ArmSpec>, ConfigError> {
    let mut arms: Vec<ArmSpec> = Vec::new();
    for (i, a) in raw.iter().enumerate() {
        let span = Some(a.span());
        let spec = arm_spec(a.get_ref()).map_err(|(field, message)| {
            at.error(at.key(&span, &field), format!("arms[{i}].{field}"), message)
        })?;
        c2s_records::validate_spec(&spec)
            .map_err(|e| at.error(span.clone(), format!("arms[{i}]"), e.to_string()))?;
        // D.9's token control matches "the pinned tokenizer's full rendered Indexed request":
        // the run's model must bring its tokenizer and chat template.
        if spec.evidence == Evidence::PaddedTokens && !model.reads_model_path() {
            return Err(at.error(
                at.key(&span, "evidence"),
                format!("arms[{i}].evidence"),
                format!(
                    "padded-tokens matches the model's tokenizer, but the `{}` engine has none (set [model] path to the model's GGUF or tokenizer directory)",
                    model.engine
                ),
            ));
        }
        if arms.contains(&spec) {
            return Err(at.error(
                span,
                format!("arms[{i}]"),
                format!("arm {} is listed twice", spec.label()),
            ));
        }
        arms.push(spec);
    }
    Ok(arms)
}

/// Check `[[comparisons]]` against the arms' labels; without any, every whole-answer arm is
/// paired with every local arm. Returns (reference label, compared label) pairs.
pub(crate) fn check_comparisons(
    at: &ConfigText<'_>,
    raw: &[Spanned<ComparisonEntry>],
    arms: &[ArmSpec],
) -> Result<Vec<(String, String)>, ConfigError> {
    let labels: Vec<String> = arms.iter().map(ArmSpec::label).collect();
    let mut comparisons = Vec::new();
    for (i, c) in raw.iter().enumerate() {
        let span = Some(c.span());
        let c = c.get_ref();
        for (field, label) in [("native", &c.native), ("serial", &c.serial)] {
            if !labels.contains(label) {
                return Err(at.error(
                    at.key(&span, field),
                    format!("comparisons[{i}].{field}"),
                    format!(
                        "`{label}` is not one of the configured arms ({})",
                        labels.join(", ")
                    ),
                ));
            }
        }
        if c.native == c.serial {
            return Err(at.error(
                at.key(&span, "serial"),
                format!("comparisons[{i}].serial"),
                format!("`{}` cannot be paired with itself", c.serial),
            ));
        }
        comparisons.push((c.native.clone(), c.serial.clone()));
    }
    if raw.is_empty() {
        for w in arms.iter().filter(|a| a.arm.is_whole_answer()) {
            for l in arms.iter().filter(|a| a.arm.is_local()) {
                comparisons.push((w.label(), l.label()));
            }
        }
    }
    Ok(comparisons)
}
