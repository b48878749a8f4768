//! [`validate_spec`]: the combinations of arm, support, contract and readout settings the
//! protocol can run, and [`SpecError`], the rule a refused spec breaks.

use super::{
    Arm, ArmSpec, Contract, CopyControl, Draft, Evidence, FillRule, InterventionReadout,
    LocalAlphabet, OptionNames, Support, SupportSet,
};

/// The rule an [`ArmSpec`] breaks, so that the protocol cannot run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Trie support walks the answer's prefix, which this arm does not build.
    #[error("Trie support needs a prefix, but {arm} has none")]
    TrieWithoutPrefix {
        /// The arm.
        arm: Arm,
    },
    /// Trie support on a copy arm whose copy control asks each position on its own.
    #[error("Trie support needs a prefix; independent copy control has none")]
    TrieIndependentCopy {
        /// The copy arm.
        arm: Arm,
    },
    /// An arm that shows no candidates asked with a support derived from them.
    #[error("{arm} withholds the candidates, so only Full support is defined")]
    WithheldCandidates {
        /// The arm.
        arm: Arm,
        /// The support asked for.
        support: Support,
    },
    /// SerialStop with a support other than Full.
    #[error("SerialStop uses the full 51-option alphabet (support Full)")]
    SerialStopSupport {
        /// The support asked for.
        support: Support,
    },
    /// SerialStop with a string or character contract.
    #[error(
        "SerialStop needs a code contract: space, newline and tab cannot survive outer-whitespace removal"
    )]
    SerialStopContract {
        /// The contract asked for.
        contract: Contract,
    },
    /// PrefixContinue with a code contract.
    #[error("PrefixContinue consumes generated text; use a generated contract")]
    PrefixContinueContract {
        /// The contract asked for.
        contract: Contract,
    },
    /// WholeGenerate with a contract other than the generated string.
    #[error("WholeGenerate emits the complete answer; use the generated string contract")]
    WholeGenerateContract {
        /// The contract asked for.
        contract: Contract,
    },
    /// Native or NativeControl with the generated character contract.
    #[error("Native selects a complete string; use a code or string contract")]
    NativeCharacterContract {
        /// The arm.
        arm: Arm,
    },
    /// A local arm asking one position with the generated string contract.
    #[error("local steps answer one character; use a character or code contract")]
    LocalStringContract {
        /// The local arm.
        arm: Arm,
    },
    /// IncorrectCopy with a Fill rule, which would replace its plan's characters.
    #[error(
        "IncorrectCopy copies its supplied plan at every position: a Fill rule would supply the candidates' character instead"
    )]
    IncorrectCopyFill {
        /// The support asked for.
        support: Support,
    },
    /// IncorrectCopy with a readout template.
    #[error("the readout grid (T0-T2) reads gold targets; IncorrectCopy has no readout")]
    IncorrectCopyReadout,
    /// A readout template on an arm that is not a copy arm.
    #[error(
        "readout templates T0-T2 apply to the copy arms (GoldCopy, IncorrectCopy, SelfPlanSpell)"
    )]
    TemplateWithoutCopy {
        /// The arm.
        arm: Arm,
    },
    /// A readout template with padded evidence.
    #[error(
        "a readout template (T0-T2) takes raw, indexed or direct evidence (B.5); padded evidence is D.9's length control of the Copy arms"
    )]
    ReadoutPaddedEvidence {
        /// The evidence asked for.
        evidence: Evidence,
    },
    /// Option names other than opaque without a readout template.
    #[error(
        "option names (B.5's binding conditions) apply to the readout grid: set a template T0-T2"
    )]
    NamesWithoutReadout {
        /// The option names asked for.
        names: OptionNames,
    },
    /// A token limit on the scored code contract.
    #[error("max_new_tokens applies to generated contracts; a scored code generates nothing")]
    MaxTokensScored {
        /// The limit asked for.
        max_new_tokens: u32,
    },
    /// A token limit of zero.
    #[error("max_new_tokens must be at least 1")]
    ZeroMaxTokens,
    /// A readout template with a support other than Full.
    #[error("the readout grid (T0-T2) shows every character: use support Full")]
    ReadoutSupport {
        /// The support asked for.
        support: Support,
    },
    /// The a–z alphabet on an arm that is not local, or with a support other than Full or
    /// FullFill.
    #[error(
        "alphabet = \"lowercase\" widens Full support (D.7's a-z factor): use a local arm with support Full or FullFill"
    )]
    LowercaseAlphabet {
        /// The arm.
        arm: Arm,
        /// The support asked for.
        support: Support,
    },
    /// Extra query positions with a support that has no Fill rule.
    #[error(
        "also_query names positions a Fill rule would fill (D.7's six-query controllers); a Call support already queries every position"
    )]
    AlsoQueryWithoutFill {
        /// The support asked for.
        support: Support,
    },
    /// A draft or readout other than the default on an arm other than PrefixIntervention.
    #[error("draft and readout are PrefixIntervention's settings (A.4)")]
    InterventionSettings {
        /// The arm.
        arm: Arm,
        /// The draft asked for.
        draft: Draft,
        /// The readout asked for.
        readout: InterventionReadout,
    },
    /// PrefixIntervention with a support other than Full.
    #[error(
        "PrefixIntervention asks one preselected position with every character: use support Full"
    )]
    InterventionSupport {
        /// The support asked for.
        support: Support,
    },
    /// PrefixIntervention's whole-answer readout with the generated character contract.
    #[error("the whole-answer readout selects a complete string; use a code or string contract")]
    InterventionWholeCharacter,
    /// A copy arm under Batch copy control with a readout template.
    #[error("the readout grid asks one position; Batch bundles every position")]
    BatchReadout,
    /// A copy arm under Batch copy control with a support other than Full.
    #[error(
        "Batch asks every position with the same options (D.11: \"the same supplied target, absolute-position question and option order\"): use support Full"
    )]
    BatchSupport {
        /// The support asked for.
        support: Support,
    },
    /// Padded evidence on an arm that is not a copy arm, or with a readout template.
    #[error(
        "padded evidence is D.9's length control for copy arms (GoldCopy, IncorrectCopy, SelfPlanSpell) without a readout template"
    )]
    PaddedEvidence {
        /// The arm.
        arm: Arm,
        /// The evidence asked for.
        evidence: Evidence,
    },
    /// SerialStop with the a–z alphabet.
    #[error("SerialStop has its own 51-option alphabet")]
    SerialStopLowercase,
}

/// Check that `spec` is an arm the protocol can run (the config runs it on every `[[arms]]`
/// entry; a controller refuses a spec that fails it).
pub fn validate_spec(spec: &ArmSpec) -> Result<(), SpecError> {
    let arm = spec.arm;
    let support = spec.support;
    if spec.support.set == SupportSet::Trie && !arm.has_prefix() {
        return Err(SpecError::TrieWithoutPrefix { arm });
    }
    if arm.is_copy()
        && spec.copy_control == CopyControl::Independent
        && spec.support.set == SupportSet::Trie
    {
        return Err(SpecError::TrieIndependentCopy { arm });
    }
    if arm.withholds_candidates() && spec.support.set != SupportSet::Full {
        return Err(SpecError::WithheldCandidates { arm, support });
    }
    if arm == Arm::SerialStop {
        if spec.support != Support::FULL {
            return Err(SpecError::SerialStopSupport { support });
        }
        if !matches!(
            spec.contract,
            Contract::ScoredCode | Contract::GeneratedCode
        ) {
            return Err(SpecError::SerialStopContract {
                contract: spec.contract,
            });
        }
    }
    if arm == Arm::PrefixContinue
        && !matches!(
            spec.contract,
            Contract::GeneratedString | Contract::GeneratedCharacter
        )
    {
        return Err(SpecError::PrefixContinueContract {
            contract: spec.contract,
        });
    }
    if arm == Arm::WholeGenerate && spec.contract != Contract::GeneratedString {
        return Err(SpecError::WholeGenerateContract {
            contract: spec.contract,
        });
    }
    if matches!(arm, Arm::Native | Arm::NativeControl)
        && spec.contract == Contract::GeneratedCharacter
    {
        return Err(SpecError::NativeCharacterContract { arm });
    }
    if arm.is_local()
        && !matches!(arm, Arm::PrefixContinue)
        && !spec.asks_whole()
        && spec.contract == Contract::GeneratedString
    {
        return Err(SpecError::LocalStringContract { arm });
    }
    if arm == Arm::IncorrectCopy && spec.support.fill == FillRule::Fill {
        return Err(SpecError::IncorrectCopyFill { support });
    }
    if arm == Arm::IncorrectCopy && spec.template.is_some() {
        return Err(SpecError::IncorrectCopyReadout);
    }
    if spec.template.is_some() && !arm.is_copy() {
        return Err(SpecError::TemplateWithoutCopy { arm });
    }
    if spec.is_readout() && matches!(spec.evidence, Evidence::Padded | Evidence::PaddedTokens) {
        return Err(SpecError::ReadoutPaddedEvidence {
            evidence: spec.evidence,
        });
    }
    if spec.names != OptionNames::Opaque && !spec.is_readout() {
        return Err(SpecError::NamesWithoutReadout { names: spec.names });
    }
    if let (Some(max_new_tokens), Contract::ScoredCode) = (spec.max_new_tokens, spec.contract) {
        return Err(SpecError::MaxTokensScored { max_new_tokens });
    }
    if spec.max_new_tokens == Some(0) {
        return Err(SpecError::ZeroMaxTokens);
    }
    // E.5: the readout criteria are the whole local alphabet ("Each criterion description
    // specifies an output character"; E.6 lists all ten digits), asked at one position.
    if spec.is_readout() && spec.support != Support::FULL {
        return Err(SpecError::ReadoutSupport { support });
    }
    if spec.alphabet == LocalAlphabet::Lowercase
        && (!arm.is_local() || spec.support.set != SupportSet::Full)
    {
        return Err(SpecError::LowercaseAlphabet { arm, support });
    }
    if !spec.also_query.is_empty() && spec.support.fill != FillRule::Fill {
        return Err(SpecError::AlsoQueryWithoutFill { support });
    }
    if arm != Arm::PrefixIntervention
        && (spec.draft != Draft::Correct || spec.readout != InterventionReadout::Character)
    {
        return Err(SpecError::InterventionSettings {
            arm,
            draft: spec.draft,
            readout: spec.readout,
        });
    }
    if arm == Arm::PrefixIntervention {
        if spec.support != Support::FULL {
            return Err(SpecError::InterventionSupport { support });
        }
        if spec.asks_whole() && spec.contract == Contract::GeneratedCharacter {
            return Err(SpecError::InterventionWholeCharacter);
        }
    }
    if arm.is_copy() && spec.copy_control == CopyControl::Batch {
        if spec.template.is_some() {
            return Err(SpecError::BatchReadout);
        }
        if spec.support != Support::FULL {
            return Err(SpecError::BatchSupport { support });
        }
    }
    if matches!(spec.evidence, Evidence::Padded | Evidence::PaddedTokens)
        && (!arm.is_copy() || spec.template.is_some())
    {
        return Err(SpecError::PaddedEvidence {
            arm,
            evidence: spec.evidence,
        });
    }
    if spec.alphabet == LocalAlphabet::Lowercase && arm == Arm::SerialStop {
        return Err(SpecError::SerialStopLowercase);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_errors_keep_their_messages() {
        let mut trie = ArmSpec::new(Arm::Native);
        trie.support = Support::TRIE_FILL;
        let err = validate_spec(&trie).unwrap_err();
        assert_eq!(err, SpecError::TrieWithoutPrefix { arm: Arm::Native });
        assert_eq!(
            err.to_string(),
            format!("Trie support needs a prefix, but {} has none", Arm::Native)
        );
        let mut zero = ArmSpec::new(Arm::WholeGenerate).with_contract(Contract::GeneratedString);
        zero.max_new_tokens = Some(0);
        assert_eq!(
            validate_spec(&zero).unwrap_err().to_string(),
            "max_new_tokens must be at least 1"
        );
        let mut scored = ArmSpec::new(Arm::Native);
        scored.max_new_tokens = Some(8);
        assert_eq!(
            validate_spec(&scored),
            Err(SpecError::MaxTokensScored { max_new_tokens: 8 })
        );
        assert_eq!(
            validate_spec(&scored).unwrap_err().to_string(),
            "max_new_tokens applies to generated contracts; a scored code generates nothing"
        );
        let whole = ArmSpec::new(Arm::WholeGenerate);
        assert_eq!(
            validate_spec(&whole).unwrap_err().to_string(),
            "WholeGenerate emits the complete answer; use the generated string contract"
        );
        assert_eq!(
            SpecError::SerialStopLowercase.to_string(),
            "SerialStop has its own 51-option alphabet"
        );
        assert_eq!(
            SpecError::WithheldCandidates {
                arm: Arm::Native,
                support: Support::FULL_FILL,
            }
            .to_string(),
            format!(
                "{} withholds the candidates, so only Full support is defined",
                Arm::Native
            )
        );
        assert_eq!(validate_spec(&ArmSpec::new(Arm::Native)), Ok(()));
    }
}
