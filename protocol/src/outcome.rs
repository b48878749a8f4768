//! Trajectory outcomes: exact match, validity, fidelity, membership, stopping
//! categories, confidence composites and costs, computed from step records.

use c2s_records::{
    position_union, Confidence, Domain, Item, Membership, StepRecord, StopCategory, StopOutcome,
};

/// WordNet's lemma index, consulted for the lexical classes of [`membership`]. Implemented by
/// `c2s_banks::wordnet::WordIndex` over the WordNet 3.0 index files.
pub trait Lexicon: Send + Sync {
    /// `word` is a lemma of WordNet's noun index.
    fn is_noun(&self, word: &str) -> bool;
    /// `word` is a lemma of any WordNet index (noun, verb, adjective, adverb).
    fn is_word(&self, word: &str) -> bool;
}

/// Where `output` falls, in D.17's order (see [`Membership`]): gold, another candidate,
/// malformed, then for lexical items another gold-synset lemma, and with a `lexicon` an indexed
/// noun, an indexed word or unindexed; any other well-formed string is `Outside`.
pub fn membership(item: &Item, output: &str, lexicon: Option<&dyn Lexicon>) -> Membership {
    if output == item.target {
        return Membership::Gold;
    }
    if item.candidates.iter().any(|c| c == output) {
        return Membership::OtherCandidate;
    }
    let alphabet = item.domain.output_alphabet();
    if output.chars().count() != item.length || !output.chars().all(|c| alphabet.contains(&c)) {
        return Membership::Malformed;
    }
    if item.domain != Domain::Lexical {
        return Membership::Outside;
    }
    if item
        .lexical
        .as_ref()
        .is_some_and(|m| m.synset_lemmas.iter().any(|l| l == output))
    {
        return Membership::GoldSynsetLemma;
    }
    match lexicon {
        None => Membership::Outside,
        Some(l) if l.is_noun(output) => Membership::IndexedNoun,
        Some(l) if l.is_word(output) => Membership::IndexedWord,
        Some(_) => Membership::Unindexed,
    }
}

/// Whether `output` is a recombination: not a candidate, of the item's length, and every
/// character in the candidates' union at its position (Table D16).
pub fn recombination(item: &Item, output: &str) -> bool {
    let chars: Vec<char> = output.chars().collect();
    if chars.len() != item.length || item.candidates.iter().any(|c| c == output) {
        return false;
    }
    let cands = item.candidate_chars();
    chars
        .iter()
        .enumerate()
        .all(|(i, ch)| position_union(&cands, i).contains(ch))
}

/// Confidence composites over the steps the model chose (called, scored steps). Fills carry no
/// probability and do not enter. None when no step has a probability.
pub fn confidence(steps: &[StepRecord]) -> Option<Confidence> {
    let scored: Vec<&StepRecord> = steps
        .iter()
        .filter(|s| s.is_call() && s.chosen_probability.is_some())
        .collect();
    if scored.is_empty() {
        return None;
    }
    let mut log_sum = 0.0;
    let mut min_top = f64::INFINITY;
    for s in &scored {
        let p = s.chosen_probability.unwrap_or(0.0);
        log_sum += p.ln();
        min_top = min_top.min(s.top_probability.unwrap_or(p));
    }
    let n = scored.len() as f64;
    Some(Confidence {
        product: log_sum.exp(),
        geometric_mean: (log_sum / n).exp(),
        min_top,
        steps: scored.len() as u32,
    })
}

/// Stopping-track outcome of `content` (characters before END) for gold `target`.
/// `ended`: END was selected; `steps`: steps taken; `cap`: the step cap (L+3).
pub fn stop_outcome(target: &str, content: &str, ended: bool, steps: u32, cap: u32) -> StopOutcome {
    let gold: Vec<char> = target.chars().collect();
    let got: Vec<char> = content.chars().collect();
    let l = gold.len();
    let content_em = got == gold;
    let exact_completion = ended && content_em;
    let premature_end = ended && got.len() < l;
    let first_l_correct = got.len() >= l && got[..l] == gold[..];
    let cap_exhausted = !ended && steps >= cap;
    let content_error = !first_l_correct;
    let category = if exact_completion {
        StopCategory::ExactCompletion
    } else if premature_end {
        StopCategory::PrematureEnd
    } else if first_l_correct {
        StopCategory::CorrectContentWithoutEnd
    } else if cap_exhausted {
        StopCategory::CapExhaustion
    } else {
        StopCategory::WrongContent
    };
    StopOutcome {
        category,
        exact_completion,
        content_em,
        first_l_correct,
        cap_exhausted,
        content_error,
        steps,
    }
}

/// Per-position correctness of `output` against `target` (shorter outputs count as wrong).
pub fn position_correct(target: &str, output: &str) -> Vec<bool> {
    let out: Vec<char> = output.chars().collect();
    target
        .chars()
        .enumerate()
        .map(|(i, g)| out.get(i) == Some(&g))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item() -> Item {
        c2s_records::parse_item(
            r#"{"item_id":"x","domain":"arithmetic","problem":"What is 39 * 15?","target":"589",
               "candidates":["585","589","385","389","485","489","685","689"]}"#,
            &Default::default(),
        )
        .unwrap()
    }

    struct TestLexicon;

    impl Lexicon for TestLexicon {
        fn is_noun(&self, word: &str) -> bool {
            ["cable", "fable"].contains(&word)
        }
        fn is_word(&self, word: &str) -> bool {
            self.is_noun(word) || word == "ample"
        }
    }

    /// D.17: "In order, categories are gold, another candidate, malformed (wrong length or
    /// outside lowercase ASCII), another gold-synset lemma, another indexed noun, another
    /// indexed word, and unindexed string. … Position-wise candidate recombination is recorded
    /// separately from semantic classification." Table D16: "Recombinations are noncandidate
    /// strings compatible with every position-wise union; they can overlap the resource
    /// categories."
    #[test]
    fn membership_follows_the_d17_taxonomy() {
        let it = item();
        assert_eq!(membership(&it, "589", None), Membership::Gold);
        assert_eq!(membership(&it, "385", None), Membership::OtherCandidate);
        assert_eq!(membership(&it, "58#", None), Membership::Malformed);
        assert_eq!(membership(&it, "58", None), Membership::Malformed);
        assert_eq!(membership(&it, "58a", None), Membership::Malformed);
        assert_eq!(membership(&it, "579", None), Membership::Outside);
        assert!(!recombination(&it, "579"));
        assert!(
            !recombination(&it, "589"),
            "a candidate is no recombination"
        );
        let lex = c2s_records::parse_item(
            r#"{"item_id":"y","domain":"lexical","problem":"p","target":"apple",
               "candidates":["apple","angle","cable","crown","river","ratio","table","token"],
               "lexical":{"synset":"1-n","zipf":3.0,"candidate_zipf":[3,3,3,3,3,3,3,3],
                          "frequency_stratum":"low","repeated_letters":true,
                          "synset_lemmas":["apple","malus"]}}"#,
            &Default::default(),
        )
        .unwrap();
        let l: &dyn Lexicon = &TestLexicon;
        assert_eq!(membership(&lex, "apple", Some(l)), Membership::Gold);
        assert_eq!(
            membership(&lex, "cable", Some(l)),
            Membership::OtherCandidate
        );
        assert_eq!(membership(&lex, "Apple", Some(l)), Membership::Malformed);
        assert_eq!(
            membership(&lex, "malus", Some(l)),
            Membership::GoldSynsetLemma
        );
        assert_eq!(membership(&lex, "fable", Some(l)), Membership::IndexedNoun);
        assert_eq!(membership(&lex, "ample", Some(l)), Membership::IndexedWord);
        assert_eq!(membership(&lex, "apble", Some(l)), Membership::Unindexed);
        assert_eq!(membership(&lex, "apble", None), Membership::Outside);
        // Recombination overlaps the resource classes: "aable" is in every position union and
        // unindexed; "table" is a candidate, never a recombination.
        assert!(recombination(&lex, "apble"));
        assert!(!recombination(&lex, "table"));
        assert!(!recombination(&lex, "zzzzz"));
    }

    #[test]
    fn stop_categories_follow_priority() {
        let c = |content: &str, ended: bool, steps: u32| {
            stop_outcome("589", content, ended, steps, 6).category
        };
        assert_eq!(c("589", true, 4), StopCategory::ExactCompletion);
        assert_eq!(c("58", true, 3), StopCategory::PrematureEnd);
        assert_eq!(
            c("12", true, 3),
            StopCategory::PrematureEnd,
            "premature END outranks wrong content"
        );
        assert_eq!(c("5891", true, 5), StopCategory::CorrectContentWithoutEnd);
        assert_eq!(
            c("589123", false, 6),
            StopCategory::CorrectContentWithoutEnd,
            "outranks cap exhaustion"
        );
        assert_eq!(c("123456", false, 6), StopCategory::CapExhaustion);
        assert_eq!(c("123", true, 4), StopCategory::WrongContent);
        let o = stop_outcome("589", "589123", false, 6, 6);
        assert!(o.cap_exhausted && o.first_l_correct && !o.content_em && !o.exact_completion);
    }

    #[test]
    fn confidence_uses_called_scored_steps_only() {
        let step = |p: Option<f64>, top: Option<f64>, call: bool| StepRecord {
            position: 1,
            support: vec![],
            filled: !call,
            aborted: false,
            request_id: call.then(|| "r".to_string()),
            emitted: "5".into(),
            required: "5".into(),
            class: None,
            probabilities: None,
            chosen_probability: p,
            top_probability: top,
            prompt_tokens: 0,
            completion_tokens: 0,
            latency_ms: 0.0,
            matched_prompt_tokens: None,
        };
        let c = confidence(&[
            step(Some(0.5), Some(0.5), true),
            step(Some(0.2), Some(0.7), true),
            step(None, None, false),
        ])
        .unwrap();
        assert!((c.product - 0.1).abs() < 1e-12);
        assert!((c.geometric_mean - 0.1f64.sqrt()).abs() < 1e-12);
        assert!((c.min_top - 0.5).abs() < 1e-12);
        assert_eq!(c.steps, 2);
        assert!(confidence(&[step(None, None, false)]).is_none());
    }
}
