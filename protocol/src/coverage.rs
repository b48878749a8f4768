//! Requests of the candidate-coverage protocol (`candidate-coverage-typed-decisions.txt`):
//! one scored typed decision per case and [`DecisionSpec`].
//!
//! The document gives no prompt text. What a request holds, in its words: "Typed decision
//! models evaluate a text against caller-defined answer options and return structured
//! decisions and option scores", and "Natural and neutral names retain the same option
//! descriptions and order". So a request shows the text and the options (each option's name
//! and description) and nothing else of the catalogue: no task id, no label id under neutral
//! names, no provenance (the catalogue's `text_kind` and `source` are bookkeeping). The
//! layout is ours and documented in docs/protocol-choices.md: one user message holding a
//! JSON object with `question` (the fixed [`QUESTION`]), `options` (`name` and
//! `description`, in display order, the none option last), `response_format` and the `text`
//! itself, last, so that the long option list of the full set is a prefix shared by every
//! text of a task (the prefix cache computes it once). The answer is the option's name,
//! scored exactly over the offered names at the prompt boundary: "option scores" over
//! "caller-defined answer options". The instruction is the same for every task, with and
//! without the none option; only the offered options differ ("Adding an explicit none option
//! provides a rejection channel").
//!
//! **The pair's closing rule.** A name whose tokens prefix another offered name's is closed
//! with the end-of-turn token (every option of the request then is), so that the options are
//! disjoint events. Decided per request, that rule could close a present set and not its
//! absent twin (only one of them holds the prefixing name), scoring the two sets of a pair
//! differently although "Present/absent candidate sets have the same ordinary count" and
//! differ only by the reference. Each request of a pair therefore names the other set's
//! differing name in its `closing_context`: the closing rule sees the pair's names together,
//! and both sets are closed, or neither.

use serde_json::{json, Map, Value};

use c2s_records::coverage::CaseError;
use c2s_records::{
    Contract, CoverageCase, CoverageCatalogue, CoverageSize, DecisionSpec, Decoding, Request,
    RequestOption, SetKind,
};

/// The instruction, the same for every task and request: nothing of the catalogue but the
/// options' names and descriptions reaches a request.
pub const QUESTION: &str = "Classify the text. Select the option whose description fits the text.";

/// The response format, the same for every request: the answer is an option's name.
pub const RESPONSE_FORMAT: &str = "Output only the name of the selected option.";

/// The decision specs a case runs under: the full set (when asked) and the present/absent
/// pair of every size in `ks` (resolved for the case's task) the case holds, each under every
/// name variant and none choice.
pub fn decision_specs(
    case: &CoverageCase,
    catalogue: &CoverageCatalogue,
    ks: &[CoverageSize],
    names: &[c2s_records::NameVariant],
    none: &[bool],
    full_set: bool,
) -> Vec<DecisionSpec> {
    let mut specs = Vec::new();
    // The full set serves the full-set-correct subsets: test texts classified over every
    // label, without the none option ("the same restricted to full-set-correct texts").
    if full_set && case.split == c2s_records::CoverageSplit::Test {
        for &n in names {
            specs.push(DecisionSpec {
                set: SetKind::Full,
                k: catalogue.labels.len(),
                names: n,
                with_none: false,
            });
        }
    }
    let ks: Vec<usize> = ks
        .iter()
        .map(|k| k.resolve(catalogue.labels.len()))
        .collect();
    for s in &case.sets {
        if !ks.contains(&s.k) {
            continue;
        }
        for set in [SetKind::Present, SetKind::Absent] {
            for &n in names {
                for &with_none in none {
                    specs.push(DecisionSpec {
                        set,
                        k: s.k,
                        names: n,
                        with_none,
                    });
                }
            }
        }
    }
    specs
}

/// Render the scored request of `case` under `spec`. Option codes are the shown names (what
/// the model answers); values are the label ids.
pub fn render_coverage_request(
    case: &CoverageCase,
    catalogue: &CoverageCatalogue,
    spec: &DecisionSpec,
) -> Result<Request, CaseError> {
    let err = |field: &str, message: String| CaseError {
        case_id: case.case_id.clone(),
        field: field.into(),
        message,
    };
    let labels = case
        .offered(catalogue, spec)
        .ok_or_else(|| err("sets", format!("no candidate sets of size {}", spec.k)))?;
    let index = catalogue.index();
    let mut shown = Vec::with_capacity(labels.len());
    let mut options = Vec::with_capacity(labels.len());
    for l in &labels {
        let entry = index
            .get(l.as_str())
            .ok_or_else(|| err("sets", format!("`{l}` is not in the catalogue")))?;
        let name = spec.names.name_of(entry).to_string();
        shown.push(json!({"name": name, "description": entry.description}));
        options.push(RequestOption {
            code: name,
            value: l.clone(),
        });
    }
    // The pair's other set differs in one slot: its label's name joins the closing rule.
    let twin = match spec.set {
        SetKind::Full => None,
        SetKind::Present | SetKind::Absent => {
            let s = case
                .sets
                .iter()
                .find(|s| s.k == spec.k)
                .ok_or_else(|| err("sets", format!("no candidate sets of size {}", spec.k)))?;
            s.present
                .iter()
                .zip(&s.absent)
                .find(|(p, a)| p != a)
                .map(|(p, a)| if spec.set == SetKind::Present { a } else { p })
        }
    };
    let closing_context = match twin {
        Some(l) => {
            let entry = index
                .get(l.as_str())
                .ok_or_else(|| err("sets", format!("`{l}` is not in the catalogue")))?;
            vec![spec.names.name_of(entry).to_string()]
        }
        None => Vec::new(),
    };
    let question = QUESTION.to_string();
    let mut user = Map::new();
    user.insert("question".into(), json!(question));
    user.insert("options".into(), Value::Array(shown));
    user.insert("response_format".into(), json!(RESPONSE_FORMAT));
    user.insert("text".into(), json!(case.text));
    let user = serde_json::to_string(&Value::Object(user))
        .map_err(|e| err("text", format!("cannot render: {e}")))?;
    let mut request = Request {
        request_id: String::new(),
        item_id: case.case_id.clone(),
        arm: spec.label(),
        step: 0,
        system: None,
        user,
        assistant_prefix: None,
        state: serde_json::to_string(&json!({ "text": case.text })).unwrap_or_default(),
        instruction: question,
        options,
        contract: Contract::ScoredCode,
        decoding: Decoding::Score,
        closing_context,
    };
    request.request_id = request.derive_id();
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_records::{CandidateSets, CoverageLabel, CoverageSplit, NameVariant, NONE_LABEL};

    fn catalogue() -> CoverageCatalogue {
        let label = |l: &str, n: usize| CoverageLabel {
            label: l.into(),
            natural: l.into(),
            neutral: format!("class_{n}"),
            description: format!("Texts about: {l}."),
        };
        CoverageCatalogue {
            task: "t".into(),
            text_kind: "questions".into(),
            labels: vec![label("a", 3), label("b", 1), label("c", 4), label("d", 2)],
            none: CoverageLabel {
                label: NONE_LABEL.into(),
                natural: "none".into(),
                neutral: "none".into(),
                description: "None of the other options fits the text.".into(),
            },
            source: String::new(),
        }
    }

    fn case() -> CoverageCase {
        CoverageCase {
            case_id: "t:test:1".into(),
            task: "t".into(),
            split: CoverageSplit::Test,
            text: "what is b?".into(),
            reference: "b".into(),
            sets: vec![CandidateSets {
                k: 2,
                present: vec!["b".into(), "d".into()],
                absent: vec!["c".into(), "d".into()],
            }],
            origin: String::new(),
        }
    }

    fn spec(set: SetKind, names: NameVariant, with_none: bool) -> DecisionSpec {
        DecisionSpec {
            set,
            k: if set == SetKind::Full { 4 } else { 2 },
            names,
            with_none,
        }
    }

    /// "None is always last"; "Natural and neutral names retain the same option descriptions
    /// and order".
    #[test]
    fn names_change_and_descriptions_and_order_do_not() {
        let (cat, c) = (catalogue(), case());
        let nat = render_coverage_request(
            &c,
            &cat,
            &spec(SetKind::Present, NameVariant::Natural, true),
        )
        .unwrap();
        let neu = render_coverage_request(
            &c,
            &cat,
            &spec(SetKind::Present, NameVariant::Neutral, true),
        )
        .unwrap();
        let codes = |r: &Request| r.options.iter().map(|o| o.code.clone()).collect::<Vec<_>>();
        assert_eq!(codes(&nat), ["b", "d", "none"]);
        assert_eq!(codes(&neu), ["class_1", "class_2", "none"]);
        assert_eq!(nat.values(), neu.values());
        let descriptions = |r: &Request| {
            let v: Value = serde_json::from_str(&r.user).unwrap();
            v["options"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["description"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(descriptions(&nat), descriptions(&neu));
        let v: Value = serde_json::from_str(&nat.user).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["question", "options", "response_format", "text"]);
        assert_eq!(nat.arm, "present/k2/natural/none");
        assert!(nat
            .request_id
            .starts_with("t:test:1:present/k2/natural/none:0:"));
    }

    /// "Present/absent candidate sets have the same ordinary count": the absent request
    /// differs from the present one only in the reference's option.
    #[test]
    fn present_and_absent_requests_differ_only_by_the_reference() {
        let (cat, c) = (catalogue(), case());
        let p = render_coverage_request(
            &c,
            &cat,
            &spec(SetKind::Present, NameVariant::Natural, false),
        )
        .unwrap();
        let a = render_coverage_request(
            &c,
            &cat,
            &spec(SetKind::Absent, NameVariant::Natural, false),
        )
        .unwrap();
        assert_eq!(p.options.len(), a.options.len());
        let diff: Vec<usize> = (0..p.options.len())
            .filter(|&i| p.options[i] != a.options[i])
            .collect();
        assert_eq!(diff, [0]);
        assert_eq!(p.options[0].value, "b");
        assert_eq!(p.instruction, a.instruction);
        // Each names the other's differing option for the closing rule: the pair's names
        // are closed together.
        assert_eq!(p.closing_context, ["c"]);
        assert_eq!(a.closing_context, ["b"]);
        let neutral =
            render_coverage_request(&c, &cat, &spec(SetKind::Absent, NameVariant::Neutral, true))
                .unwrap();
        assert_eq!(neutral.closing_context, ["class_1"]);
        assert_ne!(p.request_id, {
            let mut q = p.clone();
            q.closing_context.clear();
            q.derive_id()
        });
    }

    /// No catalogue metadata but option names and descriptions reaches a request: not the
    /// text kind, the source, the task id, nor (under neutral names) the label ids.
    #[test]
    fn a_request_holds_the_text_and_the_options_and_nothing_else_of_the_catalogue() {
        let mut cat = catalogue();
        cat.text_kind = "bookkeeping text kind".into();
        cat.source = "bookkeeping source".into();
        let c = case();
        for set in [SetKind::Full, SetKind::Present, SetKind::Absent] {
            for names in [NameVariant::Natural, NameVariant::Neutral] {
                let r = render_coverage_request(&c, &cat, &spec(set, names, true)).unwrap();
                let v: Value = serde_json::from_str(&r.user).unwrap();
                assert_eq!(v["question"], QUESTION);
                assert_eq!(v["response_format"], RESPONSE_FORMAT);
                assert_eq!(v["text"], c.text);
                for o in v["options"].as_array().unwrap() {
                    let keys: Vec<&String> = o.as_object().unwrap().keys().collect();
                    assert_eq!(keys, ["name", "description"]);
                }
                assert!(!r.user.contains("bookkeeping"), "{}", r.user);
                assert_eq!(r.instruction, QUESTION);
                if names == NameVariant::Neutral {
                    for l in &cat.labels {
                        assert!(!r.user.contains(&format!("\"{}\"", l.label)), "{}", r.user);
                    }
                }
            }
        }
    }

    #[test]
    fn the_full_set_follows_the_catalogue_and_specs_cover_every_variant() {
        let (cat, c) = (catalogue(), case());
        let f = render_coverage_request(&c, &cat, &spec(SetKind::Full, NameVariant::Natural, true))
            .unwrap();
        assert_eq!(f.values(), ["a", "b", "c", "d", "none"]);
        let specs = decision_specs(
            &c,
            &cat,
            &[CoverageSize::Fixed(2)],
            &[NameVariant::Natural, NameVariant::Neutral],
            &[false, true],
            true,
        );
        // Test split: the full set under both names (no none), then the k = 2 pair under
        // both names and both none choices.
        assert_eq!(specs.len(), 2 + 2 * 2 * 2);
        assert!(specs.iter().all(|s| s.set != SetKind::Full || !s.with_none));
        let mut calibration = c.clone();
        calibration.split = CoverageSplit::Calibration;
        let specs = decision_specs(
            &calibration,
            &cat,
            &[CoverageSize::Fixed(2)],
            &[NameVariant::Natural, NameVariant::Neutral],
            &[false, true],
            true,
        );
        assert_eq!(specs.len(), 2 * 2 * 2, "no full set for calibration texts");
        let none = decision_specs(
            &c,
            &cat,
            &[CoverageSize::Fixed(8)],
            &[NameVariant::Natural],
            &[false],
            false,
        );
        assert!(none.is_empty());
        // All but the reference: k = L − 1 = 3 for four labels (the case holds no such pair).
        let mut abr = c.clone();
        abr.sets.push(CandidateSets {
            k: 3,
            present: vec!["a".into(), "b".into(), "d".into()],
            absent: vec!["a".into(), "c".into(), "d".into()],
        });
        let specs = decision_specs(
            &abr,
            &cat,
            &[CoverageSize::AllButReference],
            &[NameVariant::Natural],
            &[false],
            false,
        );
        assert_eq!(specs.len(), 2);
        assert!(specs.iter().all(|s| s.k == 3));
        let e = render_coverage_request(
            &c,
            &cat,
            &DecisionSpec {
                k: 8,
                ..spec(SetKind::Present, NameVariant::Natural, false)
            },
        )
        .unwrap_err();
        assert_eq!(e.field, "sets");
    }
}
