//! Strict response scoring (paper A.7, E.2, E.6).
//!
//! Scored answers: the choice is the argmax of the probabilities over the legal options, ties
//! broken by display order. Generated answers: after removing outer whitespace only (natural
//! contracts, E.2) or nothing at all (copy and readout contracts, D.11, E.6), the text must
//! equal a listed value exactly; anything else fails without repair and is classified.

use thiserror::Error;

use c2s_records::{Answer, Contract, FinishReason, Request, ResponseClass};

/// A response read against its request.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedAnswer {
    /// The listed value the response selects, if it is a valid response.
    pub value: Option<String>,
    /// The response's class against the required value (correct, wrong, or why invalid).
    pub class: ResponseClass,
    /// Scored answers: probabilities aligned with the request's options.
    pub probabilities: Option<Vec<f64>>,
    /// Probability of the selected option (scored answers).
    pub chosen_probability: Option<f64>,
    /// Largest probability (scored answers).
    pub top_probability: Option<f64>,
}

/// A response that does not fit its request (a backend bug, never a model failure).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ScoringError {
    /// A scored answer whose probabilities are not one per option.
    #[error("scored answer has {got} probabilities for {expected} options")]
    ProbabilityCount {
        /// Probabilities in the answer.
        got: usize,
        /// Options of the request.
        expected: usize,
    },
    /// A scored answer with a NaN, infinite or negative probability.
    #[error("scored answer has a non-finite or negative probability")]
    BadProbability,
    /// A scored answer to a generated contract, or a generated one to a scored contract.
    #[error("a {contract:?} request got a {got} answer")]
    WrongAnswerKind {
        /// The request's contract.
        contract: Contract,
        /// The kind of answer received (`scored` or `generated`).
        got: &'static str,
    },
}

/// Index of the largest probability; the first in display order wins ties.
pub fn argmax_first(p: &[f64]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, &x) in p.iter().enumerate() {
        match best {
            Some(b) if p[b] >= x => {}
            _ => best = Some(i),
        }
    }
    best
}

/// Whether `text`, split at non-alphanumeric characters, contains `value` as a whole token.
fn contains_token(text: &str, value: &str) -> bool {
    if value.is_empty() {
        return false;
    }
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|tok| tok == value)
}

/// Read `answer` for `request`. `required` is the value the step should produce (used only to
/// classify); `codes_shown` says whether option codes were displayed to the model;
/// `strip_outer_whitespace` whether generated text loses its outer whitespace before matching
/// ([`crate::prompts::strips_outer_whitespace`]). No other repair is ever made (no case
/// folding, no code mapping for character contracts).
pub fn parse_answer(
    request: &Request,
    answer: &Answer,
    required: &str,
    codes_shown: bool,
    strip_outer_whitespace: bool,
) -> Result<ParsedAnswer, ScoringError> {
    let options = &request.options;
    match (request.contract, answer) {
        (Contract::ScoredCode, Answer::Scored { probabilities, .. }) => {
            if probabilities.len() != options.len() {
                return Err(ScoringError::ProbabilityCount {
                    got: probabilities.len(),
                    expected: options.len(),
                });
            }
            if probabilities.iter().any(|p| !p.is_finite() || *p < 0.0) {
                return Err(ScoringError::BadProbability);
            }
            let i = argmax_first(probabilities).ok_or(ScoringError::ProbabilityCount {
                got: 0,
                expected: options.len(),
            })?;
            let value = options[i].value.clone();
            let class = if value == required {
                ResponseClass::StrictCorrect
            } else {
                ResponseClass::FormatValidWrong
            };
            Ok(ParsedAnswer {
                value: Some(value),
                class,
                probabilities: Some(probabilities.clone()),
                chosen_probability: Some(probabilities[i]),
                top_probability: Some(probabilities[i]),
            })
        }
        (Contract::ScoredCode, Answer::Generated { .. }) => Err(ScoringError::WrongAnswerKind {
            contract: request.contract,
            got: "generated",
        }),
        (_, Answer::Scored { .. }) => Err(ScoringError::WrongAnswerKind {
            contract: request.contract,
            got: "scored",
        }),
        (
            contract,
            Answer::Generated {
                text,
                finish_reason,
                truncated,
            },
        ) => {
            let stripped = if strip_outer_whitespace {
                text.trim()
            } else {
                text.as_str()
            };
            let by_code = contract == Contract::GeneratedCode;
            let class_and_value = if *truncated || *finish_reason == FinishReason::Length {
                (ResponseClass::Truncated, None)
            } else if stripped.is_empty() {
                (ResponseClass::Empty, None)
            } else if let Some(o) = options.iter().find(|o| {
                if by_code {
                    o.code == stripped
                } else {
                    o.value == stripped
                }
            }) {
                let class = if o.value == required {
                    ResponseClass::StrictCorrect
                } else {
                    ResponseClass::FormatValidWrong
                };
                (class, Some(o.value.clone()))
            } else if !by_code && codes_shown && options.iter().any(|o| o.code == stripped) {
                let bound_to_required = options
                    .iter()
                    .any(|o| o.code == stripped && o.value == required);
                if bound_to_required {
                    (ResponseClass::CorrectBoundCode, None)
                } else {
                    (ResponseClass::OtherListedCode, None)
                }
            } else if options.iter().any(|o| {
                let listed = if by_code { &o.code } else { &o.value };
                contains_token(stripped, listed)
            }) {
                (ResponseClass::ExtraText, None)
            } else {
                (ResponseClass::OtherInvalid, None)
            };
            Ok(ParsedAnswer {
                value: class_and_value.1,
                class: class_and_value.0,
                probabilities: None,
                chosen_probability: None,
                top_probability: None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_records::{Decoding, RequestOption};

    fn request(contract: Contract) -> Request {
        Request {
            request_id: "r".into(),
            item_id: "x".into(),
            arm: "a".into(),
            step: 1,
            system: None,
            user: "{}".into(),
            assistant_prefix: None,
            state: "{}".into(),
            instruction: "i".into(),
            options: vec![
                RequestOption {
                    code: "A".into(),
                    value: "7".into(),
                },
                RequestOption {
                    code: "B".into(),
                    value: "5".into(),
                },
                RequestOption {
                    code: "C".into(),
                    value: "9".into(),
                },
            ],
            contract,
            decoding: Decoding::Greedy { max_new_tokens: 8 },
            closing_context: Vec::new(),
        }
    }

    fn gen(text: &str) -> Answer {
        Answer::Generated {
            text: text.into(),
            finish_reason: FinishReason::Stop,
            truncated: false,
        }
    }

    #[test]
    fn scored_argmax_breaks_ties_by_display_order() {
        let r = request(Contract::ScoredCode);
        let p = parse_answer(
            &r,
            &Answer::Scored {
                probabilities: vec![0.2, 0.4, 0.4],
                raw: None,
            },
            "9",
            true,
            true,
        )
        .unwrap();
        assert_eq!(p.value.as_deref(), Some("5"));
        assert_eq!(p.class, ResponseClass::FormatValidWrong);
        assert_eq!(p.chosen_probability, Some(0.4));
        let q = parse_answer(
            &r,
            &Answer::Scored {
                probabilities: vec![0.1, 0.1, 0.8],
                raw: None,
            },
            "9",
            true,
            true,
        )
        .unwrap();
        assert_eq!(q.class, ResponseClass::StrictCorrect);
        assert!(parse_answer(
            &r,
            &Answer::Scored {
                probabilities: vec![0.5, 0.5],
                raw: None,
            },
            "9",
            true,
            true
        )
        .is_err());
        assert!(parse_answer(&r, &gen("A"), "9", true, true).is_err());
    }

    #[test]
    fn generated_character_taxonomy() {
        let r = request(Contract::GeneratedCharacter);
        let class =
            |t: &str, codes: bool| parse_answer(&r, &gen(t), "9", codes, true).unwrap().class;
        assert_eq!(class("9", false), ResponseClass::StrictCorrect);
        assert_eq!(
            class(" 9\n", false),
            ResponseClass::StrictCorrect,
            "outer whitespace only is removed"
        );
        assert_eq!(class("5", false), ResponseClass::FormatValidWrong);
        assert_eq!(class("", false), ResponseClass::Empty);
        assert_eq!(class("  ", false), ResponseClass::Empty);
        assert_eq!(class("C", true), ResponseClass::CorrectBoundCode);
        assert_eq!(class("A", true), ResponseClass::OtherListedCode);
        assert_eq!(
            class("C", false),
            ResponseClass::OtherInvalid,
            "codes not shown"
        );
        assert_eq!(class("The answer is 9.", false), ResponseClass::ExtraText);
        assert_eq!(class("9.", false), ResponseClass::ExtraText);
        assert_eq!(class("x", false), ResponseClass::OtherInvalid);
        assert_eq!(class("'9'", false), ResponseClass::ExtraText);
        let t = parse_answer(
            &r,
            &Answer::Generated {
                text: "9 is".into(),
                finish_reason: FinishReason::Length,
                truncated: true,
            },
            "9",
            false,
            true,
        )
        .unwrap();
        assert_eq!(t.class, ResponseClass::Truncated);
        assert!(t.value.is_none());
    }

    #[test]
    fn generated_code_maps_code_to_value() {
        let r = request(Contract::GeneratedCode);
        let p = parse_answer(&r, &gen("C"), "9", true, true).unwrap();
        assert_eq!(p.value.as_deref(), Some("9"));
        assert_eq!(p.class, ResponseClass::StrictCorrect);
        assert_eq!(
            parse_answer(&r, &gen("c"), "9", true, true).unwrap().class,
            ResponseClass::OtherInvalid,
            "no case repair"
        );
        assert_eq!(
            parse_answer(&r, &gen("9"), "9", true, true).unwrap().class,
            ResponseClass::OtherInvalid
        );
        assert_eq!(
            parse_answer(&r, &gen("C)"), "9", true, true).unwrap().class,
            ResponseClass::ExtraText
        );
    }

    /// E.6: "Decoded responses are scored without case repair, whitespace trimming or code
    /// mapping"; D.11: "malformed output fails without trimming". E.2 keeps its rule: "After
    /// outer whitespace removal, scoring requires an exact listed value".
    #[test]
    fn copy_and_readout_responses_are_not_trimmed() {
        let r = request(Contract::GeneratedCharacter);
        let untrimmed = |t: &str| parse_answer(&r, &gen(t), "9", true, false).unwrap().class;
        assert_eq!(untrimmed("9"), ResponseClass::StrictCorrect);
        assert_eq!(untrimmed(" 9"), ResponseClass::ExtraText);
        assert_eq!(untrimmed("9\n"), ResponseClass::ExtraText);
        assert_eq!(untrimmed(""), ResponseClass::Empty);
        assert_eq!(
            untrimmed("C"),
            ResponseClass::CorrectBoundCode,
            "no code mapping"
        );
        let natural = |t: &str| parse_answer(&r, &gen(t), "9", false, true).unwrap().class;
        assert_eq!(natural(" 9\n"), ResponseClass::StrictCorrect);
        let code = request(Contract::GeneratedCode);
        let c = |t: &str| {
            parse_answer(&code, &gen(t), "9", true, false)
                .unwrap()
                .class
        };
        assert_eq!(c("C"), ResponseClass::StrictCorrect);
        assert_eq!(c("c"), ResponseClass::OtherInvalid, "no case repair");
        assert_eq!(c("C "), ResponseClass::ExtraText);
    }
}
