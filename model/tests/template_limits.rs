//! Chat templates render within limits (`tokenizer/template.rs`): the official templates stay
//! far below every one of them, and each hostile shape — a loop that does not end, macros
//! that recurse, huge repetitions and ranges, an output without end, strings and lists that
//! grow without bound — fails with a clear error, or (memory) stops the process with exit
//! status 2 and a message, never hangs or takes the machine's memory.
//!
//! This binary installs the pipeline's allocator ([`RenderBudgetAlloc`]), as `choice2seq`
//! does; the shapes that end the process run in a child process (this binary again).

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use c2s_model::tokenizer::render_budget::last_allocated;
use c2s_model::tokenizer::template::{TemplateKwargs, RENDER_FUEL, RENDER_MEMORY_BASE};
use c2s_model::tokenizer::ChatMessage;
use c2s_model::{ChatTemplate, RenderBudgetAlloc, TemplateTime};

#[global_allocator]
static ALLOCATOR: RenderBudgetAlloc = RenderBudgetAlloc::system();

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chat_templates")
}

fn compile(source: &str) -> ChatTemplate {
    ChatTemplate::compile(
        source,
        Some("<s>".into()),
        Some("</s>".into()),
        TemplateTime::naive("2026-07-26T10:30:00").unwrap(),
    )
    .unwrap()
}

fn user(content: &str) -> Vec<ChatMessage> {
    vec![ChatMessage {
        role: "user".into(),
        content: content.into(),
    }]
}

/// Render `source` on one user message; the error's text.
fn refusal(source: &str) -> String {
    compile(source)
        .render(&user("hi"), true, &TemplateKwargs::new())
        .unwrap_err()
        .to_string()
}

#[derive(serde::Deserialize)]
struct Case {
    family: String,
    template: String,
    bos_token: Option<String>,
    eos_token: Option<String>,
    messages: Vec<Message>,
    add_generation_prompt: bool,
    enable_thinking: bool,
}

#[derive(serde::Deserialize)]
struct Message {
    role: String,
    content: String,
}

/// The official templates on every message shape of the corpus, and on a long prompt, use at
/// most a tenth of the fuel and a tenth of the memory budget.
#[test]
fn official_templates_stay_far_below_the_limits() {
    #[derive(serde::Deserialize)]
    struct Expected {
        cases: Vec<Case>,
    }
    let text = std::fs::read_to_string(fixtures().join("expected.json")).unwrap();
    let expected: Expected = serde_json::from_str(&text).unwrap();
    let (mut max_fuel, mut max_bytes, mut max_compile) = (0u64, 0usize, 0usize);
    let long = "Which option is next? ".repeat(2_000);
    for case in expected.cases {
        let mut messages: Vec<ChatMessage> = case
            .messages
            .iter()
            .map(|m| ChatMessage {
                role: m.role.clone(),
                content: m.content.clone(),
            })
            .collect();
        let source = std::fs::read_to_string(fixtures().join(&case.template)).unwrap();
        let template = ChatTemplate::compile(
            &source,
            case.bos_token.clone(),
            case.eos_token.clone(),
            TemplateTime::naive("2026-07-26T10:30:00").unwrap(),
        )
        .unwrap();
        max_compile = max_compile.max(last_allocated());
        assert!(
            last_allocated() <= RENDER_MEMORY_BASE / 10,
            "{}: compiling took {} bytes",
            case.family,
            last_allocated()
        );
        let mut kwargs = TemplateKwargs::new();
        kwargs.insert(
            "enable_thinking".into(),
            minijinja::Value::from(case.enable_thinking),
        );
        for round in 0..2 {
            if round == 1 {
                // The same shape with a long prompt (padding evidence makes prompts long).
                for m in messages.iter_mut().filter(|m| m.role == "user") {
                    m.content = long.clone();
                }
            }
            if let Ok((_, fuel)) =
                template.render_metered(&messages, case.add_generation_prompt, &kwargs)
            {
                max_fuel = max_fuel.max(fuel);
                max_bytes = max_bytes.max(last_allocated());
                assert!(
                    fuel <= RENDER_FUEL / 10,
                    "{}: {fuel} instructions",
                    case.family
                );
                assert!(
                    last_allocated() <= RENDER_MEMORY_BASE / 10,
                    "{}: {} bytes",
                    case.family,
                    last_allocated()
                );
            }
        }
    }
    assert!(max_fuel > 0 && max_bytes > 0, "nothing was measured");
    eprintln!(
        "official templates: compiled in at most {max_compile} bytes, rendered in at most \
         {max_fuel} instructions and {max_bytes} bytes"
    );
}

#[test]
fn a_loop_that_does_not_end_runs_out_of_fuel() {
    let e = refusal(
        "{% for i in range(100000) %}{% for j in range(100000) %}{{ '' }}{% endfor %}{% endfor %}",
    );
    assert!(
        e.contains(&format!("budget of {RENDER_FUEL} instructions")),
        "{e}"
    );
}

#[test]
fn deep_recursion_stops_at_the_recursion_limit_on_a_worker_thread() {
    // On a thread with the default stack, as the pipeline's worker threads render.
    let e =
        std::thread::spawn(|| refusal("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"))
            .join()
            .unwrap();
    assert!(e.contains("recursion limit exceeded"), "{e}");
}

#[test]
fn huge_repetitions_and_ranges_are_refused() {
    let e = refusal("{{ 'a' * 10**9 }}");
    assert!(e.contains("repeated string is too large"), "{e}");
    let e = refusal("{% for i in range(10**9) %}{% endfor %}");
    assert!(e.contains("Range too big"), "{e}");
    // A repeated list is held to the repeated string's bytes.
    let e = refusal("{% for x in [1] * 10**12 %}{% endfor %}");
    assert!(e.contains("repeated sequence is too large"), "{e}");
}

#[test]
fn an_output_without_end_is_refused() {
    let e = refusal("{{ 'x' * 3000000 }}{{ 'y' * 3000000 }}");
    assert!(e.contains("the output exceeds 4 MiB"), "{e}");
}

#[test]
fn a_huge_json_indent_is_refused() {
    let e = refusal("{{ messages|tojson(indent=1000000000000) }}");
    assert!(
        e.contains("tojson: an indent of 1000000000000 is wider than 64"),
        "{e}"
    );
    let e = refusal("{{ messages|tojson(indent=' ' * 100) }}");
    assert!(e.contains("wider than 64"), "{e}");
}

#[test]
fn deeply_nested_lists_print_without_overflowing_a_worker_threads_stack() {
    // As deep as the fuel allows, then printed and serialized (recursive walks) and dropped.
    let deepest = std::thread::spawn(|| {
        [3000, 2500, 2000, 1500, 1000].into_iter().find(|depth| {
            let source = format!(
                "{{% set ns = namespace(l=[]) %}}{{% for i in range({depth}) %}}\
                 {{% set ns.l = [ns.l] %}}{{% endfor %}}{{{{ ns.l }}}}{{{{ ns.l|tojson }}}}"
            );
            compile(&source)
                .render(&user("hi"), true, &TemplateKwargs::new())
                .is_ok()
        })
    })
    .join()
    .unwrap();
    eprintln!("nested lists printed at depth {deepest:?}");
    assert!(deepest.is_some());
}

#[test]
fn deeply_nested_lists_do_not_overflow_a_worker_threads_stack() {
    let source = "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l|length }}";
    let e = std::thread::spawn(move || refusal(source)).join().unwrap();
    assert!(e.contains("instructions"), "{e}");
}

/// The environment variable that makes [`render_child`] render a template.
const CHILD_TEMPLATE: &str = "C2S_TEMPLATE_LIMITS_CHILD";

/// Renders the template in [`CHILD_TEMPLATE`] (run by the test below in a child process).
#[test]
#[ignore = "run in a child process by templates_that_grow_without_bound_stop_the_process"]
fn render_child() {
    if let Ok(source) = std::env::var(CHILD_TEMPLATE) {
        let result = compile(&source).render(&user("hi"), true, &TemplateKwargs::new());
        println!("rendered: {:?}", result.map(|t| t.len()));
    }
}

#[test]
fn templates_that_grow_without_bound_stop_the_process_with_exit_2() {
    for (source, doing) in [
        // A string that doubles: 2^64 bytes in 64 steps.
        ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}", "rendering one prompt"),
        // A list that doubles, then materialized.
        ("{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|list|length }}", "rendering one prompt"),
        // One huge allocation inside a filter.
        ("{{ 'x'|indent(1000000000000) }}", "rendering one prompt"),
        // A fuzzing finding: minijinja folded `'a' * 10 * 10 …` while compiling, building the
        // string again for each `* 10`. `*` is Python's now, evaluated when rendering.
        ("{{ 'a' * 10 * 10 * 10 * 10 * 10 * 10 * 10 * 10 }}", "rendering one prompt"),
    ] {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["render_child", "--exact", "--ignored", "--nocapture"])
            .env(CHILD_TEMPLATE, source)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{source}\n{stderr}");
        assert!(
            stderr.contains(&format!(
                "the chat template allocated more than {} MiB {doing}",
                RENDER_MEMORY_BASE >> 20
            )),
            "{source}\n{stderr}"
        );
    }
}
