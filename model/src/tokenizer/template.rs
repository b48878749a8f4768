//! Chat templates rendered as Hugging Face transformers renders them.
//!
//! transformers compiles a model's `chat_template` in
//! `transformers/utils/chat_template_utils.py` (`_compile_jinja_template`): a Jinja2
//! `ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
//! extensions=[AssistantTracker, loopcontrols])` whose `tojson` filter is replaced by
//! `json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
//! sort_keys=sort_keys)`, with the globals `raise_exception(message)` and
//! `strftime_now(format)` (`datetime.now().strftime(format)`). It renders with `messages`,
//! `tools=None`, `documents=None`, `add_generation_prompt` and the tokenizer's special
//! tokens map plus the caller's keyword arguments.
//!
//! [`ChatTemplate`] is that environment in minijinja:
//! - Jinja2's semantics where minijinja's differ (printing as Python's `str()`, tuples, Python's
//!   string, dict and list methods, Jinja2's filters and tests, `tojson` as transformers'
//!   `json.dumps`) come from [`pyjinja`](super::pyjinja); dicts keep insertion order
//!   (minijinja's `preserve_order`), `{% break %}`/`{% continue %}` are on (`loop_controls`);
//! - `raise_exception` fails the render with the template's
//!   message, `strftime_now` formats one fixed [`TemplateTime`] (the run's start, recorded in
//!   the run's manifest, so a resumed run renders the same prompts);
//! - AssistantTracker's `{% generation %}…{% endgeneration %}` (SmolLM3) only marks the
//!   assistant's tokens for a mask; its body renders as is, so the tags become a block that
//!   always renders (`{% if true %}…{% endif %}`), with their whitespace control kept.
//!
//! `model/tests/chat_templates.rs` checks the renderings of the official templates of many
//! families byte for byte against transformers' own (`scripts/make-template-fixtures.py`).
//!
//! A chat template is code shipped inside a model file, so it compiles and renders within
//! limits that the official templates stay far below (`model/tests/template_limits.rs` checks
//! both): [`RENDER_FUEL`] instructions per render (minijinja's fuel: a loop that does not
//! end), a recursion depth of [`RENDER_RECURSION_LIMIT`] (macros calling themselves),
//! [`MAX_RENDERED_BYTES`] of output, and a memory budget per compile and per render
//! ([`render_budget`](super::render_budget)) for strings and lists that grow without bound. A
//! panic inside minijinja is an error, not a crash.

use std::collections::BTreeMap;
use std::fmt;

use chrono::format::{Item, StrftimeItems};
use minijinja::value::Value;
use minijinja::{Environment, Error, ErrorKind};

use super::render_budget::{Budgeted, RenderBudget};
use super::ChatMessage;
use crate::error::EngineError;

/// The instructions one render may execute. The official templates in
/// `model/tests/fixtures/chat_templates/` use at most ~150 on the run's prompts.
pub const RENDER_FUEL: u64 = 20_000;

/// minijinja's recursion depth (its own default and ceiling is 500; a macro call counts
/// several levels). Deep enough for templates that render nested tool schemas recursively,
/// shallow enough for the 2 MiB stacks of worker threads.
pub const RENDER_RECURSION_LIMIT: usize = 200;

/// The longest rendered prompt (far beyond any model's context).
pub const MAX_RENDERED_BYTES: usize = 4 << 20;

/// Bytes compiling a template or one render may allocate (gross, see
/// [`render_budget`](super::render_budget)) besides [`RENDER_MEMORY_PER_INPUT_BYTE`] per byte
/// of the template's source or of the render's messages.
pub const RENDER_MEMORY_BASE: usize = 16 << 20;

/// What a compile or render may allocate per byte of its input (each is copied a few times).
pub const RENDER_MEMORY_PER_INPUT_BYTE: usize = 64;

/// Why a [`TemplateTime`] cannot be read, or cannot format a `strftime_now` call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateTimeError {
    /// [`TemplateTime::parse`]: the text is not an RFC 3339 timestamp.
    #[error("`{text}` is not an RFC 3339 timestamp: {source}")]
    NotRfc3339 {
        /// The text as given.
        text: String,
        /// chrono's reason.
        #[source]
        source: chrono::ParseError,
    },
    /// [`TemplateTime::naive`]: the text is not `YYYY-MM-DDTHH:MM:SS`.
    #[error("`{text}` is not a date and time YYYY-MM-DDTHH:MM:SS: {source}")]
    NotNaive {
        /// The text as given.
        text: String,
        /// chrono's reason.
        #[source]
        source: chrono::ParseError,
    },
    /// [`TemplateTime::strftime`]: the format holds a directive chrono does not know.
    #[error("strftime_now: unsupported format `{format}`")]
    UnsupportedFormat {
        /// The template's format string.
        format: String,
    },
    /// [`TemplateTime::strftime`]: chrono could not write the time in the format.
    #[error("strftime_now: cannot format `{format}` for a local time")]
    Unformattable {
        /// The template's format string.
        format: String,
        /// The formatter's failure (it carries no detail).
        #[source]
        source: fmt::Error,
    },
}

/// The moment `strftime_now` reports: the local wall-clock time at which a run started (as
/// transformers' `datetime.now()`, naive local time), with its UTC offset for the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TemplateTime(pub chrono::DateTime<chrono::FixedOffset>);

impl TemplateTime {
    /// The local time now.
    pub fn now() -> TemplateTime {
        TemplateTime(chrono::Local::now().fixed_offset())
    }

    /// The local time at `ms` milliseconds since the Unix epoch.
    pub fn from_unix_ms(ms: u64) -> Option<TemplateTime> {
        let utc = chrono::DateTime::from_timestamp_millis(i64::try_from(ms).ok()?)?;
        Some(TemplateTime(
            utc.with_timezone(&chrono::Local).fixed_offset(),
        ))
    }

    /// From an RFC 3339 timestamp (what [`TemplateTime`]'s `Display` writes).
    pub fn parse(text: &str) -> Result<TemplateTime, TemplateTimeError> {
        chrono::DateTime::parse_from_rfc3339(text)
            .map(TemplateTime)
            .map_err(|source| TemplateTimeError::NotRfc3339 {
                text: text.to_string(),
                source,
            })
    }

    /// A naive local date and time (the fixtures' `2026-07-26T10:30:00`), at UTC+0.
    pub fn naive(text: &str) -> Result<TemplateTime, TemplateTimeError> {
        chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S")
            .map(|t| TemplateTime(t.and_utc().fixed_offset()))
            .map_err(|source| TemplateTimeError::NotNaive {
                text: text.to_string(),
                source,
            })
    }

    /// Python's `strftime(format)` of the local wall-clock time. A format with a directive
    /// chrono does not know is an error (Python would keep it literally on some platforms and
    /// fail on others; a prompt must not depend on that).
    pub fn strftime(&self, format: &str) -> Result<String, TemplateTimeError> {
        use chrono::format::Fixed;
        use std::fmt::Write;
        let mut items: Vec<Item<'_>> = Vec::new();
        for item in StrftimeItems::new(format) {
            match item {
                Item::Error => {
                    return Err(TemplateTimeError::UnsupportedFormat {
                        format: format.to_string(),
                    })
                }
                // transformers formats a naive `datetime.now()`: `%z` and `%Z` print nothing.
                Item::Fixed(
                    Fixed::TimezoneName
                    | Fixed::TimezoneOffset
                    | Fixed::TimezoneOffsetColon
                    | Fixed::TimezoneOffsetDoubleColon
                    | Fixed::TimezoneOffsetTripleColon
                    | Fixed::TimezoneOffsetColonZ
                    | Fixed::TimezoneOffsetZ,
                ) => {}
                other => items.push(other),
            }
        }
        let mut out = String::new();
        write!(
            out,
            "{}",
            self.0.naive_local().format_with_items(items.into_iter())
        )
        .map_err(|source| TemplateTimeError::Unformattable {
            format: format.to_string(),
            source,
        })?;
        Ok(out)
    }
}

impl fmt::Display for TemplateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339())
    }
}

/// A compiled chat template and the special tokens it is rendered with.
pub struct ChatTemplate {
    env: Environment<'static>,
    /// `bos_token` / `eos_token` as the tokenizer's special tokens map holds them (a token the
    /// model does not declare is left undefined, as transformers leaves it out of the map).
    bos_token: Option<String>,
    eos_token: Option<String>,
}

/// Extra variables of a render (transformers' `**kwargs` of `apply_chat_template`).
pub type TemplateKwargs = BTreeMap<String, Value>;

impl ChatTemplate {
    /// Compile `source` as transformers compiles a chat template; `time` is what
    /// `strftime_now` reports.
    pub fn compile(
        source: &str,
        bos_token: Option<String>,
        eos_token: Option<String>,
        time: TemplateTime,
    ) -> Result<ChatTemplate, EngineError> {
        let mut env = Environment::new();
        env.set_fuel(Some(RENDER_FUEL));
        env.set_recursion_limit(RENDER_RECURSION_LIMIT);
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        super::pyjinja::install(&mut env);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", move |format: String| {
            time.strftime(&format)
                .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))
        });
        // minijinja folds constant expressions while it compiles: that runs on the memory
        // budget too, and a panic in its parser is a refusal.
        let compiled = {
            let budget = RENDER_MEMORY_BASE
                .saturating_add(source.len().saturating_mul(RENDER_MEMORY_PER_INPUT_BYTE));
            let _budget = RenderBudget::start(Budgeted::Compiling, budget);
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let source = super::pyjinja::rewrite::rewrite(&without_generation_tags(source));
                env.add_template_owned("chat", source)
                    .map_err(|e| describe(&e))
            }))
            .unwrap_or_else(|p| {
                Err(format!(
                    "the compiler panicked: {}",
                    panic_message(p.as_ref())
                ))
            })
        };
        compiled.map_err(|e| EngineError::Model(format!("chat template: {e}")))?;
        Ok(ChatTemplate {
            env,
            bos_token,
            eos_token,
        })
    }

    /// Render `messages`, ending with the generation prompt when `add_generation_prompt`.
    /// `kwargs` are further variables (e.g. `enable_thinking`).
    pub fn render(
        &self,
        messages: &[ChatMessage],
        add_generation_prompt: bool,
        kwargs: &TemplateKwargs,
    ) -> Result<String, EngineError> {
        self.render_metered(messages, add_generation_prompt, kwargs)
            .map(|(text, _)| text)
    }

    /// [`render`](Self::render), and the fuel (instructions) the render consumed.
    pub fn render_metered(
        &self,
        messages: &[ChatMessage],
        add_generation_prompt: bool,
        kwargs: &TemplateKwargs,
    ) -> Result<(String, u64), EngineError> {
        let mut ctx: BTreeMap<String, Value> = BTreeMap::new();
        if let Some(t) = &self.bos_token {
            ctx.insert("bos_token".into(), Value::from(t.clone()));
        }
        if let Some(t) = &self.eos_token {
            ctx.insert("eos_token".into(), Value::from(t.clone()));
        }
        for (k, v) in kwargs {
            ctx.insert(k.clone(), v.clone());
        }
        ctx.insert("messages".into(), Value::from_serialize(messages));
        // transformers passes these explicitly (as None when absent): `tools is none` holds.
        ctx.insert("tools".into(), Value::from(()));
        ctx.insert("documents".into(), Value::from(()));
        ctx.insert(
            "add_generation_prompt".into(),
            Value::from(add_generation_prompt),
        );
        let input_bytes: usize = messages
            .iter()
            .map(|m| m.role.len() + m.content.len())
            .sum();
        self.render_with(ctx, input_bytes)
    }

    /// Render with exactly the variables `vars` (no special tokens, messages or flags
    /// added): the template as a plain Jinja template, as the differential probes use it.
    pub fn render_vars(&self, vars: &TemplateKwargs) -> Result<String, EngineError> {
        let input_bytes = serde_json::to_string(vars).map_or(0, |s| s.len());
        self.render_with(vars.clone(), input_bytes)
            .map(|(text, _)| text)
    }

    /// Render with the context `ctx` on the budget of `input_bytes` of input.
    fn render_with(
        &self,
        ctx: BTreeMap<String, Value>,
        input_bytes: usize,
    ) -> Result<(String, u64), EngineError> {
        let tmpl = self
            .env
            .get_template("chat")
            .map_err(|e| EngineError::Model(format!("chat template: {}", describe(&e))))?;
        let budget = RENDER_MEMORY_BASE
            .saturating_add(input_bytes.saturating_mul(RENDER_MEMORY_PER_INPUT_BYTE));
        let mut out = BoundedOutput::default();
        let rendered = {
            let _budget = RenderBudget::start(Budgeted::Rendering, budget);
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                tmpl.render_captured_to(ctx, &mut out)
                    .map(|captured| captured.state().fuel_levels().map_or(0, |(used, _)| used))
            }))
        };
        let failed =
            |what: String| EngineError::Model(format!("rendering the chat template: {what}"));
        match rendered {
            Err(panic) => Err(failed(format!(
                "the renderer panicked: {}",
                panic_message(panic.as_ref())
            ))),
            Ok(Err(_)) if out.exceeded => Err(failed(format!(
                "the output exceeds {} MiB",
                MAX_RENDERED_BYTES >> 20
            ))),
            Ok(Err(e)) if e.kind() == ErrorKind::OutOfFuel => Err(failed(format!(
                "the template ran past its budget of {RENDER_FUEL} instructions (a loop that \
                 does not end?): {}",
                describe(&e)
            ))),
            Ok(Err(e)) => Err(failed(describe(&e))),
            Ok(Ok(fuel)) => Ok((String::from_utf8_lossy(&out.bytes).into_owned(), fuel)),
        }
    }
}

/// The rendered prompt, refused past [`MAX_RENDERED_BYTES`].
#[derive(Default)]
struct BoundedOutput {
    bytes: Vec<u8>,
    exceeded: bool,
}

impl std::io::Write for BoundedOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > MAX_RENDERED_BYTES {
            self.exceeded = true;
            return Err(std::io::Error::other("the rendered prompt is too long"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// A minijinja error with its whole chain and the template line (`unknown method: string has
/// no method named startswith (in chat:12)`).
fn describe(e: &Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// `raise_exception(message)`: the template refuses its input.
fn raise_exception(message: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

/// `{% generation %}` / `{% endgeneration %}` (transformers' AssistantTracker) as a block
/// that always renders, keeping each tag's `-` whitespace control.
fn without_generation_tags(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(start) = rest.find("{%") {
        out.push_str(&rest[..start]);
        let tag = &rest[start..];
        // The closing `%}` after the opening `{%` (in `{%}` they share the `%`).
        let Some(end) = tag[2..].find("%}").map(|i| i + 2) else {
            out.push_str(tag);
            return out;
        };
        let inner = &tag[2..end];
        let (lead, body) = match inner.strip_prefix(['-', '+']) {
            Some(b) => (&inner[..1], b),
            None => ("", inner),
        };
        let (body, trail) = match body.strip_suffix(['-', '+']) {
            Some(b) => (b, &body[body.len() - 1..]),
            None => (body, ""),
        };
        match body.trim() {
            "generation" => out.push_str(&format!("{{%{lead} if true {trail}%}}")),
            "endgeneration" => out.push_str(&format!("{{%{lead} endif {trail}%}}")),
            _ => out.push_str(&tag[..end + 2]),
        }
        rest = &tag[end + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(source: &str, messages: &[(&str, &str)]) -> Result<String, EngineError> {
        let t = ChatTemplate::compile(
            source,
            Some("<s>".into()),
            Some("</s>".into()),
            TemplateTime::naive("2026-07-26T10:30:00").unwrap(),
        )?;
        let messages: Vec<ChatMessage> = messages
            .iter()
            .map(|(r, c)| ChatMessage {
                role: r.to_string(),
                content: c.to_string(),
            })
            .collect();
        t.render(&messages, true, &TemplateKwargs::new())
    }

    #[test]
    fn python_string_methods_render() {
        let src = "{% for m in messages %}{% if m.content.startswith('<tool_response>') %}T{% endif %}[{{ m.content.strip().split(' ')|join('|') }}]{{ m.content.lstrip('x').rstrip('y')|length }}{% endfor %}";
        assert_eq!(
            render(src, &[("user", " a b "), ("user", "<tool_response>q")]).unwrap(),
            "[a|b]5T[<tool_response>q]16"
        );
    }

    #[test]
    fn raise_exception_fails_with_the_templates_message() {
        let src = "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}ok";
        let e = render(src, &[("system", "s")]).unwrap_err().to_string();
        assert!(e.contains("System role not supported"), "{e}");
        assert_eq!(render(src, &[("user", "u")]).unwrap(), "ok");
    }

    #[test]
    fn strftime_now_reports_the_template_time() {
        assert_eq!(
            render(
                "{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%B %-d, %Y') }}",
                &[]
            )
            .unwrap(),
            "26 Jul 2026|July 26, 2026"
        );
        let e = render("{{ strftime_now('%Q') }}", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("unsupported format"), "{e}");
    }

    #[test]
    fn template_time_errors_name_the_text_or_format() {
        let e = TemplateTime::parse("yesterday").unwrap_err();
        let TemplateTimeError::NotRfc3339 { text, source } = &e else {
            panic!("not an RFC 3339 error: {e}");
        };
        assert_eq!(text, "yesterday");
        assert_eq!(
            e.to_string(),
            format!("`yesterday` is not an RFC 3339 timestamp: {source}")
        );
        let e = TemplateTime::naive("2026-07-26").unwrap_err();
        let TemplateTimeError::NotNaive { source, .. } = &e else {
            panic!("not a naive-time error: {e}");
        };
        assert_eq!(
            e.to_string(),
            format!("`2026-07-26` is not a date and time YYYY-MM-DDTHH:MM:SS: {source}")
        );
        let time = TemplateTime::naive("2026-07-26T10:30:00").unwrap();
        assert_eq!(
            time.strftime("%Q").unwrap_err().to_string(),
            "strftime_now: unsupported format `%Q`"
        );
    }

    #[test]
    fn tojson_writes_what_python_json_dumps_writes() {
        let src = "{{ messages[0]|tojson }}\n{{ {'b': [1, 2.5], 'a': 'é\"<>'}|tojson(indent=2) }}\n{{ {'b': 1, 'a': none}|tojson(separators=(',', ':'), sort_keys=true) }}";
        assert_eq!(
            render(src, &[("user", "x\ty")]).unwrap(),
            "{\"role\": \"user\", \"content\": \"x\\ty\"}\n{\n  \"b\": [\n    1,\n    2.5\n  ],\n  \"a\": \"é\\\"<>\"\n}\n{\"a\":null,\"b\":1}"
        );
    }

    #[test]
    fn generation_tags_render_their_body_with_their_whitespace_control() {
        assert_eq!(
            without_generation_tags("a {%- generation %}b{% endgeneration -%} c{% if x %}"),
            "a {%- if true %}b{% endif -%} c{% if x %}"
        );
        assert_eq!(
            render(
                "{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}\n{% endfor %}",
                &[("user", "a"), ("user", "b")]
            )
            .unwrap(),
            "ab"
        );
    }

    /// A fuzzing finding: `{%}` made the tag scan slice backwards and panic.
    #[test]
    fn tags_whose_delimiters_overlap_are_left_to_the_parser() {
        assert_eq!(without_generation_tags("{%}{%}a"), "{%}{%}a");
        assert_eq!(without_generation_tags("{%-%}"), "{%-%}");
        assert!(render("{%}", &[]).is_err());
    }

    #[test]
    fn loop_controls_and_negative_slices() {
        let src = "{% for m in messages[::-1] %}{% if loop.index > 2 %}{% break %}{% endif %}{{ m.content }}{% endfor %}";
        assert_eq!(
            render(src, &[("user", "a"), ("user", "b"), ("user", "c")]).unwrap(),
            "cb"
        );
    }

    /// (A boolean prints `True`/`False`, as in Python.)
    #[test]
    fn undeclared_special_tokens_are_undefined() {
        let t = ChatTemplate::compile(
            "{% if bos_token is defined %}B{% endif %}{{ eos_token }}|{{ tools is none }}",
            None,
            Some("E".into()),
            TemplateTime::now(),
        )
        .unwrap();
        assert_eq!(
            t.render(&[], true, &TemplateKwargs::new()).unwrap(),
            "E|True"
        );
    }
}
