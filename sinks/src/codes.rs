//! The snake_case string forms of record enums stored in Parquet columns, and their parsers.
//! These strings are part of the on-disk schema (see `SCHEMAS.md`): change them only with a
//! schema version bump.

use c2s_records::{Contract, Decoding, FinishReason, Membership, ResponseClass, StopCategory};

macro_rules! string_codes {
    ($ty:ty, $to:ident, $parse:ident, { $($variant:path => $s:literal),+ $(,)? }) => {
        #[doc = concat!("The column string of a `", stringify!($ty), "`.")]
        pub fn $to(v: $ty) -> &'static str {
            match v {
                $($variant => $s),+
            }
        }

        #[doc = concat!("Parses the column string of a `", stringify!($ty), "`.")]
        pub fn $parse(s: &str) -> Option<$ty> {
            match s {
                $($s => Some($variant),)+
                _ => None,
            }
        }
    };
}

string_codes!(ResponseClass, response_class_str, parse_response_class, {
    ResponseClass::StrictCorrect => "strict_correct",
    ResponseClass::FormatValidWrong => "format_valid_wrong",
    ResponseClass::Truncated => "truncated",
    ResponseClass::Empty => "empty",
    ResponseClass::CorrectBoundCode => "correct_bound_code",
    ResponseClass::OtherListedCode => "other_listed_code",
    ResponseClass::ExtraText => "extra_text",
    ResponseClass::OtherInvalid => "other_invalid",
});

string_codes!(Membership, membership_str, parse_membership, {
    Membership::Gold => "gold",
    Membership::OtherCandidate => "other_candidate",
    Membership::Malformed => "malformed",
    Membership::GoldSynsetLemma => "gold_synset_lemma",
    Membership::IndexedNoun => "indexed_noun",
    Membership::IndexedWord => "indexed_word",
    Membership::Unindexed => "unindexed",
    Membership::Outside => "outside",
});

string_codes!(StopCategory, stop_category_str, parse_stop_category, {
    StopCategory::ExactCompletion => "exact_completion",
    StopCategory::PrematureEnd => "premature_end",
    StopCategory::CorrectContentWithoutEnd => "correct_content_without_end",
    StopCategory::CapExhaustion => "cap_exhaustion",
    StopCategory::WrongContent => "wrong_content",
});

string_codes!(Contract, contract_str, parse_contract, {
    Contract::ScoredCode => "scored_code",
    Contract::GeneratedCode => "generated_code",
    Contract::GeneratedCharacter => "generated_character",
    Contract::GeneratedString => "generated_string",
});

string_codes!(FinishReason, finish_reason_str, parse_finish_reason, {
    FinishReason::Stop => "stop",
    FinishReason::Length => "length",
});

/// `score` or `greedy:<max_new_tokens>`.
pub fn decoding_string(d: Decoding) -> String {
    match d {
        Decoding::Score => "score".to_string(),
        Decoding::Greedy { max_new_tokens } => format!("greedy:{max_new_tokens}"),
    }
}

/// Parses [`decoding_string`].
pub fn parse_decoding(s: &str) -> Option<Decoding> {
    if s == "score" {
        return Some(Decoding::Score);
    }
    let n = s.strip_prefix("greedy:")?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse()
        .ok()
        .map(|max_new_tokens| Decoding::Greedy { max_new_tokens })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for c in [
            ResponseClass::StrictCorrect,
            ResponseClass::FormatValidWrong,
            ResponseClass::Truncated,
            ResponseClass::Empty,
            ResponseClass::CorrectBoundCode,
            ResponseClass::OtherListedCode,
            ResponseClass::ExtraText,
            ResponseClass::OtherInvalid,
        ] {
            assert_eq!(parse_response_class(response_class_str(c)), Some(c));
        }
        for d in [Decoding::Score, Decoding::Greedy { max_new_tokens: 32 }] {
            assert_eq!(parse_decoding(&decoding_string(d)), Some(d));
        }
        assert_eq!(parse_decoding("greedy:"), None);
        assert_eq!(parse_decoding("greedy:+3"), None);
        assert_eq!(parse_contract("ScoredCode"), None);
    }
}
