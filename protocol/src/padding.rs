//! D.9's length controls for indexed copying. A Padded copy state is the Raw state plus one
//! key, `padding`, holding nonindexed punctuation (a run of [`PADDING_CHAR`]) as long as makes
//! the Padded request match the Indexed request at the same step and prefix:
//!
//! - in serialized-state characters and UTF-8 bytes (`evidence = "padded"`): "Nonindexed
//!   punctuation matches Indexed's serialized-state character and UTF-8 byte length at the same
//!   prefix";
//! - in tokens of the full rendered request under the run's pinned tokenizer
//!   (`evidence = "padded-tokens"`): "Punctuation, excluding answer symbols and index numbers,
//!   matches the pinned tokenizer's full rendered Indexed request at the same prefix. Every
//!   realized match is verified; generated prefixes remain arm-specific."
//!
//! The byte match is arithmetic on the canonical state. The token match cannot be: a run of
//! punctuation merges into tokens unevenly (eight dots can be fewer tokens than seven), so the
//! padding is searched with the tokenizer itself, and the engine's own prompt count of the
//! answered request is checked against it ([`crate::controller::ControllerError::TokenMatch`]).

use std::sync::Arc;

use thiserror::Error;

use c2s_records::{ArmSpec, Evidence, Item, Request};

use crate::canonical::to_canonical_string;
use crate::prompts::{state_value, StepState};

/// The state key of D.9's padding.
pub const PADDING_KEY: &str = "padding";
/// The padding character: punctuation that is neither an answer symbol (digit or letter) nor
/// an index number, and that canonical JSON writes as one byte ("Punctuation, excluding answer
/// symbols and index numbers", D.9).
pub const PADDING_CHAR: char = '.';

/// The byte-matched padding of a Padded copy state: as many [`PADDING_CHAR`]s as make the
/// canonical state exactly as long as the Indexed state at the same step and prefix
/// (characters and UTF-8 bytes alike: both states are ASCII).
pub fn padding_for(item: &Item, spec: &ArmSpec, step: &StepState<'_>) -> String {
    let mut indexed = *spec;
    indexed.evidence = Evidence::Indexed;
    let mut raw = *spec;
    raw.evidence = Evidence::Raw;
    let indexed_len = to_canonical_string(&state_value(item, &indexed, step)).len();
    let raw_len = to_canonical_string(&state_value(item, &raw, step)).len();
    // Adding `"padding":"<n chars>",` (or with the comma before it) adds 13 + n characters.
    let overhead = PADDING_KEY.len() + 6;
    let n = indexed_len.saturating_sub(raw_len + overhead);
    dots(n)
}

fn dots(n: usize) -> String {
    std::iter::repeat_n(PADDING_CHAR, n).collect()
}

/// Counts the tokens of a request's full rendered prompt under the run's pinned tokenizer:
/// its messages through the model's chat template with the generation prompt, then the
/// assistant prefix — exactly the prompt the engine is sent.
pub trait PromptTokenCounter: Send + Sync {
    /// Tokens of `request`'s full rendered prompt, or the tokenizer's own error.
    fn prompt_tokens(&self, request: &Request) -> Result<u32, PromptTokensError>;
}

/// A tokenizer's failure to count a prompt, kept whole: it prints as the tokenizer's own
/// message and its source chain is the tokenizer's.
#[derive(Debug, Error)]
#[error(transparent)]
pub struct PromptTokensError(pub Box<dyn std::error::Error + Send + Sync>);

impl PromptTokensError {
    /// Wrap the tokenizer's error.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        PromptTokensError(Box::new(error))
    }
}

/// Why [`token_matched_request`] found no token-matched padding.
#[derive(Debug, Error)]
pub enum TokenMatchError {
    /// The tokenizer could not count one of the rendered requests.
    #[error(transparent)]
    Count(#[from] PromptTokensError),
    /// Without padding the control is already more tokens than Indexed, so no padding helps.
    #[error(
        "no token-matched padding: the request without indices has {empty} tokens with empty padding, more than Indexed's {target}"
    )]
    EmptyTooLong {
        /// Tokens of the control with empty padding.
        empty: u32,
        /// Tokens of the Indexed request.
        target: u32,
    },
    /// [`MAX_TOKEN_PADDING`] characters of padding still count fewer tokens than Indexed.
    #[error(
        "no token-matched padding: {max} padding characters stay below Indexed's {target} tokens",
        max = MAX_TOKEN_PADDING
    )]
    StaysBelow {
        /// Tokens of the Indexed request.
        target: u32,
    },
    /// No run of [`PADDING_CHAR`] near the boundary counts exactly Indexed's tokens.
    #[error(
        "no token-matched padding: Indexed has {target} tokens; the nearest run of `{pad}` ({padding} characters) gives {tokens}",
        pad = PADDING_CHAR
    )]
    NoExactMatch {
        /// Tokens of the Indexed request.
        target: u32,
        /// Characters of the nearest run tried.
        padding: usize,
        /// Tokens of the control with that run.
        tokens: u32,
    },
}

/// A shared [`PromptTokenCounter`] (one tokenizer serves every controller of a run).
#[derive(Clone)]
pub struct TokenCounterRef(pub Arc<dyn PromptTokenCounter>);

impl std::fmt::Debug for TokenCounterRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenCounterRef")
    }
}

impl PartialEq for TokenCounterRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for TokenCounterRef {}

/// The largest padding searched (characters). Indexed's position table of a twelve-character
/// target is about two hundred tokens; a run of punctuation is at least one token per eight
/// characters in the tokenizers we know, so this bound is far above any realized match.
pub const MAX_TOKEN_PADDING: usize = 1 << 14;

/// Half-width of the exact-match scan around the boundary the bisection finds (characters):
/// token counts of a growing run are nearly, not strictly, monotone.
const EXACT_SCAN: usize = 64;

/// A token-matched request and what it matched.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenMatch {
    /// The Padded request, whose full rendered prompt has `target` tokens.
    pub request: Request,
    /// Tokens of the Indexed request at the same step and prefix.
    pub target: u32,
    /// Characters of padding.
    pub padding: usize,
}

/// D.9's token-matched Padded request. `render(evidence, padding)` renders the request of the
/// step being asked with `evidence` (Indexed for the reference, PaddedTokens for the control)
/// and, for the control, `padding` as the state's `padding`; everything else — question,
/// options and their order, prefix, assistant prefix — is the step's own.
///
/// Returns the request whose token count equals the Indexed request's, with the padding found:
/// the shortest run at the boundary where the count reaches the target, else any exact match
/// within [`EXACT_SCAN`] characters of it. Fails when the empty padding is already longer than
/// Indexed, or when no run of [`PADDING_CHAR`] up to [`MAX_TOKEN_PADDING`] matches exactly.
pub fn token_matched_request(
    counter: &dyn PromptTokenCounter,
    render: impl Fn(Evidence, &str) -> Request,
) -> Result<TokenMatch, TokenMatchError> {
    let target = counter.prompt_tokens(&render(Evidence::Indexed, ""))?;
    let count = |n: usize| -> Result<(u32, Request), PromptTokensError> {
        let r = render(Evidence::PaddedTokens, &dots(n));
        Ok((counter.prompt_tokens(&r)?, r))
    };
    let found = |request: Request, padding: usize| TokenMatch {
        request,
        target,
        padding,
    };
    let (empty, r0) = count(0)?;
    if empty == target {
        return Ok(found(r0, 0));
    }
    if empty > target {
        return Err(TokenMatchError::EmptyTooLong { empty, target });
    }
    // Gallop to a run at or above the target, then bisect for the boundary.
    let (mut lo, mut hi) = (0usize, 1usize);
    loop {
        if count(hi)?.0 >= target {
            break;
        }
        lo = hi;
        hi *= 2;
        if hi > MAX_TOKEN_PADDING {
            return Err(TokenMatchError::StaysBelow { target });
        }
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if count(mid)?.0 >= target {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let (at, r) = count(hi)?;
    if at == target {
        return Ok(found(r, hi));
    }
    let mut nearest = (at, hi);
    for n in hi.saturating_sub(EXACT_SCAN)..=hi + EXACT_SCAN {
        let (c, r) = count(n)?;
        if c == target {
            return Ok(found(r, n));
        }
        if c.abs_diff(target) < nearest.0.abs_diff(target) {
            nearest = (c, n);
        }
    }
    Err(TokenMatchError::NoExactMatch {
        target,
        padding: nearest.1,
        tokens: nearest.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use c2s_records::{Contract, Decoding};

    /// A stand-in tokenizer whose runs of dots merge like a BPE vocabulary holding `.`, `..`,
    /// `...`, `....` and an eight-dot token: greedy longest match, so eight dots are one token
    /// and seven are two — a count that is not monotone in the padding length.
    struct MergingCounter;

    fn merged_run(n: usize) -> u32 {
        let eights = n / 8;
        let rest = n % 8;
        (eights + rest / 4 + usize::from(!rest.is_multiple_of(4))) as u32
    }

    impl PromptTokenCounter for MergingCounter {
        fn prompt_tokens(&self, r: &Request) -> Result<u32, PromptTokensError> {
            // Every non-dot character is a token; each run of dots merges.
            let mut tokens = 0u32;
            let mut run = 0usize;
            for c in r.user.chars() {
                if c == '.' {
                    run += 1;
                } else {
                    tokens += merged_run(run) + 1;
                    run = 0;
                }
            }
            Ok(tokens + merged_run(run))
        }
    }

    fn request(user: String) -> Request {
        Request {
            request_id: String::new(),
            item_id: "x".into(),
            arm: "GoldCopy".into(),
            step: 1,
            system: None,
            user,
            assistant_prefix: None,
            state: String::new(),
            instruction: String::new(),
            options: vec![],
            contract: Contract::ScoredCode,
            decoding: Decoding::Score,
            closing_context: Vec::new(),
        }
    }

    /// D.9: "Punctuation, excluding answer symbols and index numbers, matches the pinned
    /// tokenizer's full rendered Indexed request at the same prefix. Every realized match is
    /// verified". The search finds an exact match wherever one exists, although the count of
    /// a growing run of dots falls back at every multiple of eight.
    #[test]
    fn finds_the_exact_token_match_through_merging_runs() {
        for indexed_len in [5usize, 9, 17, 40, 123] {
            let render = |e: Evidence, pad: &str| match e {
                Evidence::Indexed => request(format!("{{{}}}", "i".repeat(indexed_len))),
                _ => request(format!("{{ab\"{pad}\"}}")),
            };
            let m = token_matched_request(&MergingCounter, render).unwrap();
            let target = MergingCounter
                .prompt_tokens(&render(Evidence::Indexed, ""))
                .unwrap();
            assert_eq!(m.target, target);
            assert_eq!(MergingCounter.prompt_tokens(&m.request).unwrap(), target);
            assert_eq!(
                m.request.user,
                render(Evidence::PaddedTokens, &dots(m.padding)).user
            );
        }
    }

    /// A control that cannot be matched is refused with the numbers, never approximated.
    #[test]
    fn refuses_what_no_padding_can_match() {
        // Without indices the request is already longer than Indexed.
        let render = |e: Evidence, pad: &str| match e {
            Evidence::Indexed => request("{i}".into()),
            _ => request(format!("{{abcdef\"{pad}\"}}")),
        };
        let err = token_matched_request(&MergingCounter, render)
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than Indexed's 3"), "{err}");
        // Every added dot adds two tokens, so odd gaps are unreachable.
        struct Doubling;
        impl PromptTokenCounter for Doubling {
            fn prompt_tokens(&self, r: &Request) -> Result<u32, PromptTokensError> {
                Ok(r.user.chars().map(|c| if c == '.' { 2 } else { 1 }).sum())
            }
        }
        let render = |e: Evidence, pad: &str| match e {
            Evidence::Indexed => request("abcdefg".into()),
            _ => request(format!("ab{pad}")),
        };
        let err = token_matched_request(&Doubling, render)
            .unwrap_err()
            .to_string();
        assert!(err.contains("Indexed has 7 tokens"), "{err}");
    }

    /// The errors print the numbers of the failed search, and a tokenizer's failure prints as
    /// the tokenizer's own message with that error as its source.
    #[test]
    fn errors_print_their_numbers_and_keep_the_tokenizers_error() {
        assert_eq!(
            TokenMatchError::StaysBelow { target: 9 }.to_string(),
            format!("no token-matched padding: {MAX_TOKEN_PADDING} padding characters stay below Indexed's 9 tokens")
        );
        let err = TokenMatchError::from(PromptTokensError::new(std::io::Error::other(
            "no chat template",
        )));
        assert_eq!(err.to_string(), "no chat template");
        let PromptTokensError(inner) = match err {
            TokenMatchError::Count(e) => e,
            other => panic!("{other}"),
        };
        assert!(inner.downcast_ref::<std::io::Error>().is_some());
    }
}
