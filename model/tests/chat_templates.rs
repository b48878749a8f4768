//! The official chat templates of the families people evaluate, rendered by our renderer
//! ([`c2s_model::ChatTemplate`]) byte for byte as transformers' own `apply_chat_template`
//! renders them, for every message shape the project sends.
//!
//! Fixtures: `fixtures/chat_templates/*.jinja` (each template's source in `sources.json`) and
//! `expected.json`, made by `scripts/make-template-fixtures.py` with transformers (versions
//! recorded in the file), `strftime_now` fixed at the file's date. A case whose template
//! refuses its input (`raise_exception`) must be refused here too. Every case renders with
//! `enable_thinking=False`, as the paper runs its models (A.7: "Thinking is disabled.").

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use c2s_model::tokenizer::template::TemplateKwargs;
use c2s_model::tokenizer::ChatMessage;
use c2s_model::{ChatTemplate, TemplateTime};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chat_templates")
}

#[derive(serde::Deserialize)]
struct Expected {
    #[serde(rename = "fixed_now")]
    date: String,
    cases: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    family: String,
    template: String,
    bos_token: Option<String>,
    eos_token: Option<String>,
    shape: String,
    messages: Vec<Message>,
    add_generation_prompt: bool,
    enable_thinking: bool,
    rendered: Option<String>,
    error: Option<String>,
}

#[derive(serde::Deserialize)]
struct Message {
    role: String,
    content: String,
}

fn load() -> Expected {
    let text = std::fs::read_to_string(fixtures().join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn official_templates_render_byte_for_byte_as_transformers_renders_them() {
    let expected = load();
    let time = TemplateTime::naive(&expected.date).unwrap();
    let mut failures = Vec::new();
    let mut families = std::collections::BTreeSet::new();
    for case in &expected.cases {
        families.insert(case.family.clone());
        let source = std::fs::read_to_string(fixtures().join(&case.template)).unwrap();
        let template = match ChatTemplate::compile(
            &source,
            case.bos_token.clone(),
            case.eos_token.clone(),
            time,
        ) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{}: does not compile: {e}", case.family));
                continue;
            }
        };
        let messages: Vec<ChatMessage> = case
            .messages
            .iter()
            .map(|m| ChatMessage {
                role: m.role.clone(),
                content: m.content.clone(),
            })
            .collect();
        let mut kwargs = TemplateKwargs::new();
        kwargs.insert(
            "enable_thinking".into(),
            minijinja::Value::from(case.enable_thinking),
        );
        let got = template.render(&messages, case.add_generation_prompt, &kwargs);
        match (&case.rendered, &case.error, got) {
            (Some(want), _, Ok(got)) if *want == got => {}
            (Some(want), _, Ok(got)) => failures.push(format!(
                "{} / {}: rendered\n{got:?}\ntransformers:\n{want:?}",
                case.family, case.shape
            )),
            (Some(_), _, Err(e)) => failures.push(format!(
                "{} / {}: failed ({e}) where transformers renders",
                case.family, case.shape
            )),
            (None, Some(msg), Err(e)) => {
                let e = e.to_string();
                if !e.contains(msg.as_str()) {
                    failures.push(format!(
                        "{} / {}: refused with {e:?}, transformers with {msg:?}",
                        case.family, case.shape
                    ));
                }
            }
            (None, _, Ok(got)) => failures.push(format!(
                "{} / {}: rendered {got:?} where transformers refuses ({:?})",
                case.family, case.shape, case.error
            )),
            (None, None, Err(e)) => failures.push(format!(
                "{} / {}: a case with neither rendering nor error ({e})",
                case.family, case.shape
            )),
        }
    }
    assert!(
        families.len() >= 10,
        "the corpus covers {} families",
        families.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        expected.cases.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_template_records_its_source() {
    let sources: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("sources.json")).unwrap())
            .unwrap();
    let text = serde_json::to_string(&sources).unwrap();
    for case in load().cases {
        assert!(
            text.contains(&case.family),
            "{} has no entry in sources.json",
            case.family
        );
    }
}
