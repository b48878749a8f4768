//! One-line Jinja probes rendered by our chat-template environment byte for byte as Jinja2
//! renders them under transformers' settings: every test, filter, method, operator and
//! literal form that official chat templates use, with None, tuples, unicode, numbers and
//! nesting.
//!
//! Fixtures: `fixtures/jinja_probes/expected.json`, made by `scripts/make-jinja-probes.py`
//! from `probes.json` with transformers' own `_compile_jinja_template` (versions recorded in
//! the file). Where Jinja2 raises, we must refuse; where it renders, we must render the same
//! bytes. The few constructs minijinja's grammar decides differently are listed in
//! [`KNOWN_DIVERGENCES`] with the reason; each must still diverge (so the list stays true).

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use c2s_model::{ChatTemplate, TemplateTime};

/// Probes whose Jinja2 output we do not reproduce, and why. Each is checked to still differ.
/// None is met by the official templates of `chat_templates.rs`.
const KNOWN_DIVERGENCES: &[(&str, &str)] = &[
    // What minijinja's parser or virtual machine decides, beneath any filter, test or
    // function an environment can define (both refused, never rendered differently):
    (
        "op.pos",
        "minijinja's grammar has no unary `+` (a syntax error)",
    ),
    (
        "stmt.macro.varargs_kwargs",
        "macros take no undeclared arguments (`varargs`, `kwargs`)",
    ),
];

#[derive(serde::Deserialize)]
struct Expected {
    fixed_now: String,
    cases: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    id: String,
    template: String,
    #[serde(default)]
    vars: BTreeMap<String, serde_json::Value>,
    rendered: Option<String>,
    error: Option<serde_json::Value>,
}

fn load() -> Expected {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jinja_probes/expected.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// A probe variable as a template value. An integer past 64 bits is written
/// `{"$bigint": "digits"}` (serde_json would read it as a float).
fn value_of(v: &serde_json::Value) -> minijinja::Value {
    match v {
        serde_json::Value::Object(map) => match (map.len(), map.get("$bigint")) {
            (1, Some(serde_json::Value::String(digits))) => {
                minijinja::Value::from(digits.parse::<i128>().expect("a $bigint fits i128"))
            }
            _ => minijinja::Value::from_iter(map.iter().map(|(k, v)| (k.clone(), value_of(v)))),
        },
        serde_json::Value::Array(items) => items.iter().map(value_of).collect(),
        other => minijinja::Value::from_serialize(other),
    }
}

/// Our rendering of one probe, or our refusal.
fn render(case: &Case, time: TemplateTime) -> Result<String, String> {
    let template =
        ChatTemplate::compile(&case.template, None, None, time).map_err(|e| e.to_string())?;
    let vars = case
        .vars
        .iter()
        .map(|(k, v)| (k.clone(), value_of(v)))
        .collect();
    template.render_vars(&vars).map_err(|e| e.to_string())
}

#[test]
fn probes_render_as_jinja2_renders_them() {
    let expected = load();
    let time = TemplateTime::naive(&expected.fixed_now).unwrap();
    assert!(
        expected.cases.len() >= 300,
        "{} probes",
        expected.cases.len()
    );
    let known: BTreeMap<&str, &str> = KNOWN_DIVERGENCES.iter().copied().collect();
    let mut failures = Vec::new();
    let mut still_known = Vec::new();
    for case in &expected.cases {
        let ours = render(case, time);
        let agrees = match (&case.rendered, &case.error, &ours) {
            (Some(want), None, Ok(got)) => want == got,
            (None, Some(_), Err(_)) => true,
            _ => false,
        };
        if known.contains_key(case.id.as_str()) {
            if agrees {
                still_known.push(format!(
                    "{}: agrees now; drop it from KNOWN_DIVERGENCES",
                    case.id
                ));
            }
            continue;
        }
        if !agrees {
            failures.push(format!(
                "{}: {}\n    jinja2: {}\n    ours:   {}",
                case.id,
                case.template,
                match (&case.rendered, &case.error) {
                    (Some(r), _) => format!("{r:?}"),
                    (_, Some(e)) => format!("raises {e}"),
                    _ => "?".into(),
                },
                match &ours {
                    Ok(r) => format!("{r:?}"),
                    Err(e) => format!("refuses: {e}"),
                }
            ));
        }
    }
    assert!(
        failures.is_empty() && still_known.is_empty(),
        "{} of {} probes differ from Jinja2:\n{}\n{}",
        failures.len(),
        expected.cases.len(),
        failures.join("\n"),
        still_known.join("\n")
    );
}
