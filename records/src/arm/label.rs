//! [`ArmSpec::from_label`], the inverse of [`ArmSpec::label`], and [`LabeledArm`], a canonical
//! spec with its label: a trajectory's arm, whose serde form is the label (as JSON fixtures and
//! exhibit templates read it).

use super::{
    Arm, ArmSpec, Contract, CopyControl, Draft, Evidence, InterventionReadout, LocalAlphabet,
    OptionNames, OptionOrder, PromptVariant, QueryPositions, RequestLayout, Support, Template,
};

/// A string that is not an arm label ([`ArmSpec::label`]), with the part that does not fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("arm label `{label}`: {problem} at `{part}`")]
pub struct LabelError {
    /// The whole label read.
    pub label: String,
    /// The `/`-separated part that does not fit (empty where a part is missing).
    pub part: String,
    /// What was expected there.
    pub problem: String,
}

/// The label's parts, read front to back.
struct Parts<'a> {
    label: &'a str,
    parts: Vec<&'a str>,
    at: usize,
}

impl<'a> Parts<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.parts.get(self.at).copied()
    }

    fn error(&self, problem: &str) -> LabelError {
        LabelError {
            label: self.label.to_string(),
            part: self.peek().unwrap_or_default().to_string(),
            problem: problem.to_string(),
        }
    }

    /// The next part, which must be there.
    fn required(&mut self, what: &str) -> Result<&'a str, LabelError> {
        match self.peek() {
            Some(p) => {
                self.at += 1;
                Ok(p)
            }
            None => Err(self.error(&format!("missing {what}"))),
        }
    }

    /// The next part read by `read`, if it reads it (else the part stays for the next field).
    fn optional<T>(&mut self, read: impl Fn(&str) -> Option<T>) -> Option<T> {
        let value = self.peek().and_then(read)?;
        self.at += 1;
        Some(value)
    }
}

pub(super) fn contract_name(c: Contract) -> &'static str {
    match c {
        Contract::ScoredCode => "code",
        Contract::GeneratedCode => "gencode",
        Contract::GeneratedCharacter => "char",
        Contract::GeneratedString => "string",
    }
}

pub(super) fn template_name(t: Template) -> &'static str {
    match t {
        Template::T0 => "T0",
        Template::T1 => "T1",
        Template::T2 => "T2",
    }
}

pub(super) fn evidence_part(e: Evidence) -> &'static str {
    match e {
        Evidence::Raw => "raw",
        Evidence::Indexed => "indexed",
        Evidence::Direct => "direct",
        Evidence::Padded => "padded",
        Evidence::PaddedTokens => "padded-tokens",
    }
}

pub(super) fn copy_control_part(c: CopyControl) -> &'static str {
    match c {
        CopyControl::Independent => "independent",
        CopyControl::Serial => "serial",
        CopyControl::Batch => "batch",
    }
}

const CONTRACTS: [Contract; 4] = [
    Contract::ScoredCode,
    Contract::GeneratedCode,
    Contract::GeneratedCharacter,
    Contract::GeneratedString,
];
const TEMPLATES: [Template; 3] = [Template::T0, Template::T1, Template::T2];
const EVIDENCE: [Evidence; 5] = [
    Evidence::Raw,
    Evidence::Indexed,
    Evidence::Direct,
    Evidence::Padded,
    Evidence::PaddedTokens,
];
const COPY_CONTROLS: [CopyControl; 3] = [
    CopyControl::Independent,
    CopyControl::Serial,
    CopyControl::Batch,
];

/// The number after `prefix` in `part` (`O3` → 3), digits only.
fn number_after<T: std::str::FromStr>(part: &str, prefix: &str) -> Option<T> {
    let digits = part.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn query_positions(part: &str) -> Option<QueryPositions> {
    let list = part.strip_prefix("query")?;
    let positions: Option<Vec<u32>> = list
        .split(',')
        .map(|p| {
            (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse().ok())
                .flatten()
        })
        .collect();
    QueryPositions::from_positions(&positions?).filter(|q| !q.is_empty())
}

impl ArmSpec {
    /// The spec whose [`ArmSpec::label`] is `label`. What a label does not show takes the
    /// default of [`ArmSpec::new`] (a whole-answer arm's support, a non-copy arm's evidence),
    /// so `from_label(s.label())` has the label of `s` and equals `s` where `s` is canonical.
    pub fn from_label(label: &str) -> Result<ArmSpec, LabelError> {
        let mut p = Parts {
            label,
            parts: label.split('/').collect(),
            at: 0,
        };
        let name = p.required("the arm")?;
        let arm = Arm::ALL
            .into_iter()
            .find(|a| a.as_str() == name)
            .ok_or_else(|| LabelError {
                label: label.to_string(),
                part: name.to_string(),
                problem: "not an arm".to_string(),
            })?;
        let mut spec = ArmSpec::new(arm);
        if arm == Arm::PrefixIntervention && p.peek() == Some("whole") {
            p.at += 1;
            spec.readout = InterventionReadout::Whole;
        } else if arm.is_local() && arm != Arm::PrefixContinue {
            let part = p.peek();
            spec.support = part
                .and_then(|s| Support::parse(s).filter(|x| x.name() == s))
                .ok_or_else(|| p.error("not a support (Full, UnionFill, …)"))?;
            p.at += 1;
        }
        let part = p.peek();
        spec.contract = CONTRACTS
            .into_iter()
            .find(|c| Some(contract_name(*c)) == part)
            .ok_or_else(|| p.error("not a contract (code, gencode, char, string)"))?;
        p.at += 1;
        if let Some(v) = p.optional(|s| match s {
            "v2" => Some(PromptVariant::V2),
            "v3" => Some(PromptVariant::V3),
            _ => None,
        }) {
            spec.variant = v;
        }
        spec.template = p.optional(|s| TEMPLATES.into_iter().find(|t| template_name(*t) == s));
        if arm.is_copy() {
            let part = p.peek();
            spec.evidence = EVIDENCE
                .into_iter()
                .find(|e| Some(evidence_part(*e)) == part)
                .ok_or_else(|| p.error("not a copy evidence (raw, indexed, …)"))?;
            p.at += 1;
            if spec.template.is_none() {
                let part = p.peek();
                spec.copy_control = COPY_CONTROLS
                    .into_iter()
                    .find(|c| Some(copy_control_part(*c)) == part)
                    .ok_or_else(|| p.error("not a copy control (independent, serial, batch)"))?;
                p.at += 1;
            }
        }
        if let Some(n) = p.optional(|s| {
            OptionNames::parse(s.strip_prefix("names-")?).filter(|n| *n != OptionNames::Opaque)
        }) {
            spec.names = n;
        }
        if arm == Arm::PrefixIntervention {
            spec.draft = match p.peek() {
                Some("draft-correct") => Draft::Correct,
                Some("draft-error") => Draft::Error,
                _ => return Err(p.error("not a draft (draft-correct, draft-error)")),
            };
            p.at += 1;
        }
        if p.optional(|s| (s == "a-z").then_some(())).is_some() {
            spec.alphabet = LocalAlphabet::Lowercase;
        }
        if let Some(q) = p.optional(query_positions) {
            spec.also_query = q;
        }
        if let Some(k) = p.optional(|s| number_after::<u32>(s, "O")) {
            spec.order = OptionOrder::Permuted(k);
        }
        spec.max_new_tokens = p.optional(|s| number_after::<u32>(s, "max"));
        if let Some(r) = p.optional(|s| number_after::<u8>(s, "r").filter(|r| *r > 0)) {
            spec.repeat = r;
        }
        if p.optional(|s| (s == "state-last").then_some(())).is_some() {
            spec.layout = RequestLayout::StateLast;
        }
        if p.peek().is_some() {
            return Err(p.error("unexpected part"));
        }
        // A number written with leading zeros (`O01`) reads, but is not this spec's label.
        if spec.label() != label {
            return Err(LabelError {
                label: label.to_string(),
                part: String::new(),
                problem: format!("not canonical (the spec's label is `{}`)", spec.label()),
            });
        }
        Ok(spec)
    }

    /// This spec as its label reads it back: the settings the label does not show reset to
    /// their defaults (what a trajectory written and read again holds).
    pub fn canonical(&self) -> ArmSpec {
        ArmSpec::from_label(&self.label()).unwrap_or(*self)
    }
}

impl std::fmt::Display for ArmSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

impl std::str::FromStr for ArmSpec {
    type Err = LabelError;

    fn from_str(s: &str) -> Result<ArmSpec, LabelError> {
        ArmSpec::from_label(s)
    }
}

/// A canonical [`ArmSpec`] with its label: a trajectory's arm. Read as a string (`Deref` to
/// `str`, comparisons with strings, `Ord` and `Hash`) it is the label, so that maps keyed by
/// arms keep the label order the datasets are written in; [`LabeledArm::spec`] is the typed
/// spec. Its serde form is the label.
#[derive(Debug, Clone)]
pub struct LabeledArm {
    spec: ArmSpec,
    label: String,
}

impl LabeledArm {
    /// `spec` canonicalised through its label (the settings the label does not show reset),
    /// so that an arm written and read back compares equal.
    pub fn new(spec: ArmSpec) -> LabeledArm {
        let label = spec.label();
        LabeledArm {
            spec: ArmSpec::from_label(&label).unwrap_or(spec),
            label,
        }
    }

    /// The arm whose label is `label`.
    pub fn parse(label: &str) -> Result<LabeledArm, LabelError> {
        Ok(LabeledArm {
            spec: ArmSpec::from_label(label)?,
            label: label.to_string(),
        })
    }

    /// The canonical spec.
    pub fn spec(&self) -> &ArmSpec {
        &self.spec
    }

    /// The label (`ArmSpec::label`).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The label.
    pub fn as_str(&self) -> &str {
        &self.label
    }

    /// The arm kind (`spec().arm`).
    pub fn kind(&self) -> Arm {
        self.spec.arm
    }
}

impl From<ArmSpec> for LabeledArm {
    fn from(spec: ArmSpec) -> LabeledArm {
        LabeledArm::new(spec)
    }
}

impl std::ops::Deref for LabeledArm {
    type Target = str;

    fn deref(&self) -> &str {
        &self.label
    }
}

impl AsRef<str> for LabeledArm {
    fn as_ref(&self) -> &str {
        &self.label
    }
}

impl std::borrow::Borrow<str> for LabeledArm {
    fn borrow(&self) -> &str {
        &self.label
    }
}

impl std::fmt::Display for LabeledArm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label)
    }
}

impl std::str::FromStr for LabeledArm {
    type Err = LabelError;

    fn from_str(s: &str) -> Result<LabeledArm, LabelError> {
        LabeledArm::parse(s)
    }
}

impl PartialEq for LabeledArm {
    fn eq(&self, other: &LabeledArm) -> bool {
        self.label == other.label
    }
}

impl Eq for LabeledArm {}

impl std::hash::Hash for LabeledArm {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.label.hash(state);
    }
}

impl PartialOrd for LabeledArm {
    fn partial_cmp(&self, other: &LabeledArm) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for LabeledArm {
    fn cmp(&self, other: &LabeledArm) -> std::cmp::Ordering {
        self.label.cmp(&other.label)
    }
}

impl PartialEq<str> for LabeledArm {
    fn eq(&self, other: &str) -> bool {
        self.label == other
    }
}

impl PartialEq<&str> for LabeledArm {
    fn eq(&self, other: &&str) -> bool {
        self.label == *other
    }
}

impl PartialEq<String> for LabeledArm {
    fn eq(&self, other: &String) -> bool {
        self.label == *other
    }
}

impl PartialEq<LabeledArm> for str {
    fn eq(&self, other: &LabeledArm) -> bool {
        self == other.label
    }
}

impl PartialEq<LabeledArm> for &str {
    fn eq(&self, other: &LabeledArm) -> bool {
        *self == other.label
    }
}

impl PartialEq<LabeledArm> for String {
    fn eq(&self, other: &LabeledArm) -> bool {
        *self == other.label
    }
}

impl serde::Serialize for LabeledArm {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.label)
    }
}

impl<'de> serde::Deserialize<'de> for LabeledArm {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<LabeledArm, D::Error> {
        let label = <String as serde::Deserialize>::deserialize(d)?;
        LabeledArm::parse(&label).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{validate_spec, FillRule, SupportSet};
    use super::*;

    const SUPPORTS: [Support; 6] = [
        Support::FULL,
        Support::FULL_FILL,
        Support::UNION_CALL,
        Support::UNION_FILL,
        Support::TRIE_CALL,
        Support::TRIE_FILL,
    ];

    /// Every combination of the enums a config can name (with a few numeric settings), valid
    /// or not: the label of its canonical spec reads back to the same label.
    #[test]
    fn every_label_reads_back() {
        let mut n = 0usize;
        for arm in Arm::ALL {
            for support in SUPPORTS {
                for contract in CONTRACTS {
                    for variant in [PromptVariant::V1, PromptVariant::V2, PromptVariant::V3] {
                        for template in [None, Some(Template::T0), Some(Template::T2)] {
                            for evidence in EVIDENCE {
                                for copy_control in COPY_CONTROLS {
                                    let mut s = ArmSpec::new(arm)
                                        .with_support(support)
                                        .with_contract(contract);
                                    s.variant = variant;
                                    s.template = template;
                                    s.evidence = evidence;
                                    s.copy_control = copy_control;
                                    check(s);
                                    n += 1;
                                }
                            }
                        }
                    }
                }
            }
            for names in OptionNames::ALL {
                for draft in [Draft::Correct, Draft::Error] {
                    for readout in [InterventionReadout::Character, InterventionReadout::Whole] {
                        for layout in RequestLayout::ALL {
                            for alphabet in [LocalAlphabet::Domain, LocalAlphabet::Lowercase] {
                                let mut s = ArmSpec::new(arm);
                                s.names = names;
                                s.draft = draft;
                                s.readout = readout;
                                s.layout = layout;
                                s.alphabet = alphabet;
                                check(s);
                                s.also_query = QueryPositions::from_positions(&[1, 4, 8, 12])
                                    .unwrap_or_default();
                                s.order = OptionOrder::Permuted(3);
                                s.max_new_tokens = Some(64);
                                s.repeat = 2;
                                check(s);
                                n += 2;
                            }
                        }
                    }
                }
            }
        }
        assert!(n > 10_000);
    }

    fn check(s: ArmSpec) {
        let label = s.label();
        let back = ArmSpec::from_label(&label).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(back.label(), label);
        assert_eq!(back, s.canonical());
        assert_eq!(back.canonical(), back);
        // A valid spec stays valid through its label.
        if validate_spec(&s).is_ok() {
            assert!(validate_spec(&back).is_ok(), "{label}");
        }
    }

    #[test]
    fn known_labels_read() {
        let s = ArmSpec::from_label("Serial/UnionFill/code").unwrap();
        assert_eq!(s.arm, Arm::Serial);
        assert_eq!(s.support.set, SupportSet::Union);
        assert_eq!(s.support.fill, FillRule::Fill);
        assert_eq!(
            ArmSpec::from_label("Native/code").unwrap(),
            ArmSpec::new(Arm::Native)
        );
        let w = ArmSpec::from_label("WholeGenerate/string/max64").unwrap();
        assert_eq!(w.max_new_tokens, Some(64));
        let g = ArmSpec::from_label("GoldCopy/Full/code/raw/serial").unwrap();
        assert_eq!((g.arm, g.evidence), (Arm::GoldCopy, Evidence::Raw));
        assert!(LabeledArm::new(ArmSpec::new(Arm::Native)) == "Native/code");
    }

    #[test]
    fn junk_is_an_error_naming_the_part() {
        for (junk, part) in [
            ("", ""),
            ("Bogus/code", "Bogus"),
            ("Serial/code", "code"),
            ("Serial/Full", ""),
            ("Native/code/v9", "v9"),
            ("Native/code/extra", "extra"),
            ("GoldCopy/Full/code/raw", ""),
            ("Native/code/O01", ""),
            ("Native/Full/code", "Full"),
            ("Serial/full/code", "full"),
            ("Native/code/r0", "r0"),
        ] {
            let e = ArmSpec::from_label(junk).unwrap_err();
            assert_eq!(e.label, junk);
            assert_eq!(e.part, part, "{junk}: {e}");
        }
    }

    #[test]
    fn serde_form_is_the_label() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct T {
            arm: LabeledArm,
        }
        let mut spec = ArmSpec::new(Arm::Serial).with_support(Support::TRIE_FILL);
        spec.evidence = Evidence::Indexed; // not in a Serial label: canonicalised away
        let t = T {
            arm: LabeledArm::new(spec),
        };
        assert_eq!(t.arm.spec().evidence, Evidence::Raw);
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, r#"{"arm":"Serial/TrieFill/code"}"#);
        let back: T = serde_json::from_str(&json).unwrap();
        assert_eq!(back.arm, t.arm);
        assert_eq!(back.arm.spec(), t.arm.spec());
        assert!(serde_json::from_str::<T>(r#"{"arm":"Nope"}"#).is_err());
    }
}
