//! Fuzzing of the parsers that read untrusted input, as ordinary tests (docs/testing.md, "Fuzzing"):
//! run configs, item / case / dialogue lines (a JSONL file through the JSONL source, and a
//! Kafka payload's bytes), GGUF headers and metadata (with the tokenizer and model
//! configuration read from them), safetensors headers, `tokenizer.json` files and chat
//! templates. Each target runs over its committed corpus (`tests/fuzz_corpus/<target>/`, plus
//! the repository's own configs, templates and tokenizers) and then mutants of it for
//! `C2S_FUZZ_SECONDS` seconds (default 10): `C2S_FUZZ_SECONDS=600 cargo test --release
//! --workspace --test fuzz` runs each for ten minutes. See [`harness`] for what counts as a
//! finding.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "fuzz/harness.rs"]
mod harness;

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use c2s_model::tokenizer::template::TemplateKwargs;
use c2s_model::tokenizer::{ChatMessage, ModelTokenizer};
use c2s_model::{ChatTemplate, PromptSpec, TemplateTime};
use c2s_records::ItemPolicy;

use harness::{fuzz, repo_root, FuzzAlloc, Target};

/// The pipeline's allocator (the chat-template memory budget), with live memory counted.
#[global_allocator]
static ALLOCATOR: FuzzAlloc<c2s_model::RenderBudgetAlloc> =
    FuzzAlloc(c2s_model::RenderBudgetAlloc::system());

const JSON_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\\u0000",
    "\\ud800",
    "null",
    "true",
    "false",
    "-0",
    "1e999",
    "\"item_id\"",
    "\"candidates\"",
    "\"target\"",
    "\"domain\"",
    "\"length\"",
    "\"geometry\"",
    "\"k_vector\"",
    "\"case_id\"",
    "\"task\"",
    "\"sets\"",
    "\"dialogue_id\"",
    "\"turns\"",
    "\"service\"",
    "\"slots\"",
    "\n",
    "\r\n",
    "é",
    "\u{202e}",
    "\u{ffff}",
];

/// One scratch directory per executor, for targets that read files.
fn scratch_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a scratch directory"))
        .path()
}

/// `bytes` as the scratch file `name`.
fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch_dir().join(name);
    std::fs::write(&path, bytes).expect("writing a scratch file");
    path
}

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(repo_root().join(dir))
        .expect("a seed directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .filter_map(|p| p.strip_prefix(repo_root()).ok().map(Path::to_path_buf))
        .collect();
    out.sort();
    out
}

// --- targets ---------------------------------------------------------------------------

/// A run config, with the repository as the base of its relative paths.
fn config(input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    if let Ok(cfg) = c2s_config::parse_in(&text, Path::new("fuzz.toml"), &repo_root()) {
        let _ = cfg.item_policy();
        if let Some(d) = &cfg.dialogue {
            let _ = d.specs();
        }
    }
}

/// A JSONL bank file through the JSONL source, each line parsed as an item under the default
/// policy and a wide one.
fn item_lines(input: &[u8]) {
    let path = scratch("items.jsonl", input);
    let wide = ItemPolicy {
        min_length: 1,
        max_length: 64,
    };
    for record in c2s_sources::read_jsonl(&path, None).expect("opening the scratch file") {
        if let Ok(text) = record.payload {
            let _ = c2s_records::parse_item(&text, &ItemPolicy::default());
            let _ = c2s_records::parse_item(&text, &wide);
        }
    }
}

/// The catalogues of the three coverage banks, as a config reads them.
fn catalogues() -> &'static c2s_config::RunConfig {
    static CFG: OnceLock<c2s_config::RunConfig> = OnceLock::new();
    CFG.get_or_init(|| {
        let text = "[model]\nengine = \"simulated\"\n\n[[sources]]\nkind = \"jsonl\"\n\
            path = \"data/banks/coverage-banking77.jsonl\"\n\n[coverage]\ncatalogues = [\
            \"data/banks/coverage-banking77.catalogue.json\", \
            \"data/banks/coverage-clinc150.catalogue.json\", \
            \"data/banks/coverage-dbpedia219.catalogue.json\"]\n";
        c2s_config::parse_in(text, Path::new("catalogues.toml"), &repo_root())
            .expect("the coverage catalogues")
    })
}

/// A coverage case line: parsed, then validated against its task's catalogue.
fn case_line(text: &str) {
    let _ = serde_json::from_str::<serde_json::Value>(text);
    if let Ok(case) = c2s_records::parse_case(text) {
        let coverage = catalogues().coverage.as_ref().expect("[coverage]");
        if let Some(catalogue) = coverage.catalogue(&case.task) {
            let _ = case.validate(catalogue);
        }
    }
}

fn case_lines(input: &[u8]) {
    String::from_utf8_lossy(input).lines().for_each(case_line);
}

/// A dialogue line: parsed, then validated.
fn dialogue_line(text: &str) {
    let _ = serde_json::from_str::<serde_json::Value>(text);
    if let Ok(d) = c2s_records::parse_dialogue(text) {
        let _ = d.validate();
    }
}

fn dialogue_lines(input: &[u8]) {
    String::from_utf8_lossy(input)
        .lines()
        .for_each(dialogue_line);
}

/// A Kafka message's payload as the Kafka source and the validation stage read it: UTF-8 or
/// a reject, then the item, case or dialogue parse, whichever the run consumes.
fn kafka_payload(input: &[u8]) {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let _ = c2s_records::parse_item(text, &ItemPolicy::default());
    case_line(text);
    dialogue_line(text);
}

/// A GGUF file: the header walk, candle's reader after it, every tensor's bytes (which the
/// walk promised are in the file), the tokenizer and chat template from the metadata, and
/// the file-level checks the pipeline runs before work.
fn gguf(input: &[u8]) {
    let walked = c2s_model::model_files::scan_gguf(&mut Cursor::new(input), input.len() as u64);
    if let Ok(ct) = c2s_model::model_files::read_gguf_bytes(input) {
        assert!(walked.is_ok(), "candle read a header the walk refused");
        for name in ct.tensor_infos.keys() {
            if let Err(e) = ct.tensor(&mut Cursor::new(input), name, &candle_core::Device::Cpu) {
                let e = e.to_string();
                assert!(
                    !e.contains("fill whole buffer"),
                    "tensor `{name}` passed the check but is not in the file: {e}"
                );
            }
        }
        if let Ok(tokenizer) = ModelTokenizer::from_gguf(&ct) {
            use_tokenizer(&tokenizer);
        }
    }
    let path = scratch("model.gguf", input);
    let _ = c2s_model::check_model_files(&path);
    let _ = c2s_model::engines::prefix::transformer::Transformer::check_config(&path);
}

/// What the pipeline does with a tokenizer: render prompts, encode, decode, option tokens.
fn use_tokenizer(tokenizer: &ModelTokenizer) {
    let spec = PromptSpec {
        system: Some("You answer with one option.".into()),
        user: "Which option is next? 81 × 9 = ? A: 729 B: 259".into(),
        assistant_prefix: Some("7".into()),
    };
    let _ = tokenizer.render_prompt(&spec);
    let _ = tokenizer.prompt_tokens(&spec);
    if let Ok(ids) = tokenizer.encode("héllo 123 <|im_end|> ▁a\n\t") {
        let _ = tokenizer.decode(&ids);
    }
    let _ = tokenizer.decode(&[0, 1, 2, u32::MAX]);
    let _ = tokenizer.option_tokens(&["729".into(), "A".into(), String::new()]);
}

/// A safetensors file: the header check, which must agree with the `safetensors` crate that
/// candle loads weights with (accepting exactly what it accepts), and the directory check.
fn safetensors(input: &[u8]) {
    let ours =
        c2s_model::model_files::check_safetensors(&mut Cursor::new(input), input.len() as u64);
    let theirs = ::safetensors::SafeTensors::deserialize(input);
    assert_eq!(
        ours.is_ok(),
        theirs.is_ok(),
        "the check says {ours:?}, the safetensors crate {:?}",
        theirs.err()
    );
}

/// A `tokenizer.json` in a Hugging Face directory (with a fixed `tokenizer_config.json`).
fn tokenizer_json(input: &[u8]) {
    let dir = scratch_dir().join("hf");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    std::fs::write(dir.join("tokenizer.json"), input).expect("writing tokenizer.json");
    std::fs::write(
        dir.join("tokenizer_config.json"),
        r#"{"bos_token": null, "eos_token": "<|im_end|>", "chat_template": "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"}"#,
    )
    .expect("writing tokenizer_config.json");
    if let Ok(tokenizer) = ModelTokenizer::from_hf_dir(&dir) {
        use_tokenizer(&tokenizer);
    }
}

/// A chat template's source, compiled and rendered on fixed conversations. A panic inside
/// the renderer, which rendering turns into an error, is still a finding.
fn chat_template(input: &[u8]) {
    let source = String::from_utf8_lossy(input);
    let time = TemplateTime::naive("2026-07-26T10:30:00").expect("a fixed time");
    let Ok(template) =
        ChatTemplate::compile(&source, Some("<s>".into()), Some("</s>".into()), time)
    else {
        return;
    };
    let message = |role: &str, content: &str| ChatMessage {
        role: role.into(),
        content: content.into(),
    };
    let conversations = [
        vec![message("user", "Which option is next?")],
        vec![
            message("system", "Answer with one letter."),
            message("user", "81 × 9 = ?"),
            message("assistant", "7"),
        ],
    ];
    for messages in &conversations {
        for add_generation_prompt in [true, false] {
            if let Err(e) = template.render(messages, add_generation_prompt, &TemplateKwargs::new())
            {
                let e = e.to_string();
                assert!(!e.contains("renderer panicked"), "{e}");
            }
        }
    }
}

/// [`chat_template`] while another thread holds std's stderr lock for good (as a progress
/// bar writing to a terminal nobody reads would): the budget's message must come out anyway.
fn chat_template_stderr_held(input: &[u8]) {
    static HELD: OnceLock<()> = OnceLock::new();
    HELD.get_or_init(|| {
        let (held, taken) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _lock = std::io::stderr().lock();
            let _ = held.send(());
            loop {
                std::thread::park();
            }
        });
        let _ = taken.recv();
    });
    chat_template(input);
}

// --- the tests -------------------------------------------------------------------------

fn target(name: &'static str) -> Target {
    let target = |run: fn(&[u8]),
                  seed_files: Vec<PathBuf>,
                  dictionary: &'static [&'static str],
                  max_len: usize| Target {
        name,
        run,
        seed_files,
        dictionary,
        max_len,
    };
    match name {
        "config" => target(
            config,
            files("config", "toml"),
            &[
                "[run]\n",
                "[model]\n",
                "[[sources]]\n",
                "[[arms]]\n",
                "[inference]\n",
                "[stats]\n",
                "[output]\n",
                "[coverage]\n",
                "[dialogue]\n",
                "[[comparisons]]\n",
                "engine = \"simulated\"\n",
                "kind = \"kafka\"\n",
                "kind = \"parquet\"\n",
                " = ",
                "\"",
                "'''",
                "[",
                "]",
                "{",
                "}",
                ",",
                "=",
                "true",
                "false",
                "-1",
                "inf",
                "nan",
                "1979-05-27T07:32:00Z",
                "#",
                "\n",
            ],
            64 << 10,
        ),
        "item_lines" => target(item_lines, Vec::new(), JSON_TOKENS, 32 << 10),
        "case_lines" => target(case_lines, Vec::new(), JSON_TOKENS, 32 << 10),
        "dialogue_lines" => target(dialogue_lines, Vec::new(), JSON_TOKENS, 32 << 10),
        "kafka_payload" => target(kafka_payload, Vec::new(), JSON_TOKENS, 32 << 10),
        "gguf" => target(
            gguf,
            Vec::new(),
            &[
                "GGUF",
                "general.alignment",
                "tokenizer.ggml.",
                "llama.",
                "\u{0}",
            ],
            64 << 10,
        ),
        "safetensors" => target(
            safetensors,
            Vec::new(),
            &[
                "{",
                "}",
                "[",
                "]",
                ",",
                ":",
                "\"",
                "\"dtype\"",
                "\"shape\"",
                "\"data_offsets\"",
                "\"__metadata__\"",
                "\"F32\"",
                "\"BF16\"",
                "\"F4\"",
                "\"I64\"",
                "\"BOOL\"",
                "0",
                "18446744073709551615",
            ],
            16 << 10,
        ),
        "tokenizer_json" => target(
            tokenizer_json,
            vec![
                PathBuf::from("model/tests/fixtures/hf/llama/tokenizer.json"),
                PathBuf::from("model/tests/fixtures/hf/qwen3/tokenizer.json"),
            ],
            JSON_TOKENS,
            64 << 10,
        ),
        "chat_template" => target(
            chat_template,
            files("model/tests/fixtures/chat_templates", "jinja"),
            &[
                "{{",
                "}}",
                "{%",
                "%}",
                "{#",
                "#}",
                "{%-",
                "-%}",
                " for x in messages ",
                " endfor ",
                " if ",
                " endif ",
                " else ",
                " set ns = namespace(a=0) ",
                " macro m(x) ",
                " endmacro ",
                "m(x)",
                "loop.index",
                "messages",
                "[0]",
                "['content']",
                ".role",
                "|tojson",
                "|length",
                "|join(', ')",
                "|trim",
                "|indent(4)",
                "|list",
                "~",
                "+",
                "*",
                "**",
                "range(",
                ")",
                "raise_exception(",
                "strftime_now('%d %b %Y')",
                ".startswith(",
                ".split(",
                ".strip()",
                "none",
                "true",
                "add_generation_prompt",
                "bos_token",
                "eos_token",
                " is defined",
                " break ",
                " continue ",
                " generation ",
                " endgeneration ",
                "'",
            ],
            32 << 10,
        ),
        "chat_template_stderr_held" => target(chat_template_stderr_held, Vec::new(), &[], 1 << 10),
        other => panic!("unknown fuzz target {other}"),
    }
}

/// The executor's entry: run by the harness in a child process (see [`harness`]).
#[test]
#[ignore = "the fuzz harness runs it in a child process"]
fn executor() {
    if let Ok(name) = std::env::var(harness::EXECUTOR_ENV) {
        let name: &'static str = Box::leak(name.into_boxed_str());
        harness::executor(&target(name));
    }
}

#[test]
fn fuzz_config() {
    fuzz(target("config"));
}

#[test]
fn fuzz_item_lines() {
    fuzz(target("item_lines"));
}

#[test]
fn fuzz_case_lines() {
    fuzz(target("case_lines"));
}

#[test]
fn fuzz_dialogue_lines() {
    fuzz(target("dialogue_lines"));
}

#[test]
fn fuzz_kafka_payload() {
    fuzz(target("kafka_payload"));
}

#[test]
fn fuzz_gguf() {
    fuzz(target("gguf"));
}

#[test]
fn fuzz_safetensors() {
    fuzz(target("safetensors"));
}

#[test]
fn fuzz_tokenizer_json() {
    fuzz(target("tokenizer_json"));
}

#[test]
fn fuzz_chat_template() {
    fuzz(target("chat_template"));
}

/// The finding of a chat-template mutant whose executor exited 2 with an empty stderr: a
/// child the budget stops must say so. Two hostile templates (a string that doubles, and a
/// product of constants that minijinja once folded while compiling and Python's `*` now
/// evaluates while rendering) around a plain one, with std's stderr lock free and held by
/// another thread; the harness itself fails on a stop without the message.
#[test]
fn templates_stopped_by_the_memory_budget_say_so_on_stderr() {
    let doubling: &[u8] = b"{% set ns = namespace(s='ab') %}{% for i in range(64) %}\
        {% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}";
    let plain: &[u8] = b"{% for m in messages %}{{ m.content }}{% endfor %}";
    let product = format!("{{{{ 'a' {} }}}}", "* 10".repeat(8));
    for target in ["chat_template", "chat_template_stderr_held"] {
        let (stops, last) = harness::run_inputs(target, &[doubling, plain, product.as_bytes()]);
        assert_eq!(stops, 2, "{target}: {last}");
        assert!(
            last.contains("error: model: the chat template allocated more than")
                && last.contains("rendering one prompt"),
            "{target}: {last}"
        );
    }
}
