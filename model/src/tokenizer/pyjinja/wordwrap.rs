//! Jinja2's `wordwrap` filter: each line of the text wrapped by Python's `textwrap.wrap`
//! (CPython 3.11's `TextWrapper`, with Jinja2's `expand_tabs=False` and
//! `replace_whitespace=False`), the lines joined by `wrapstring` (`\n` by default).
//!
//! `textwrap` splits text into chunks with its `wordsep_re` (words, runs of whitespace,
//! hyphenated parts, em-dashes; lookbehinds, hence fancy-regex), then fills lines greedily,
//! breaking a word longer than the width at the width (at its last hyphen when one fits),
//! and drops whitespace at the ends of lines. Lengths count characters, as Python's do.

use std::sync::OnceLock;

use fancy_regex::Regex;
use minijinja::value::{Rest, Value, ValueKind};
use minijinja::{Error, ErrorKind};

use super::strings;

/// textwrap's whitespace (`_whitespace`), not Unicode's.
const WS: &str = r"[\t\n\x0B\x0C\r ]";
const NOT_WS: &str = r"[^\t\n\x0B\x0C\r ]";
const WORD_PUNCT: &str = r#"[\w!"'&.,?]"#;
const LETTER: &str = r"[^\d\W]";

/// `TextWrapper.wordsep_re` (break_on_hyphens) and `wordsep_simple_re`.
fn separators(break_on_hyphens: bool) -> &'static Regex {
    static HYPHENS: OnceLock<Regex> = OnceLock::new();
    static SIMPLE: OnceLock<Regex> = OnceLock::new();
    // CPython's fixed patterns, compiled by every wordwrap test: not an input.
    #[allow(clippy::expect_used)]
    let build = |pattern: String| Regex::new(&pattern).expect("textwrap's pattern compiles");
    if break_on_hyphens {
        HYPHENS.get_or_init(|| {
            build(format!(
                "({WS}+\
                 |(?<={WORD_PUNCT})-{{2,}}(?=\\w)\
                 |{NOT_WS}+?(?:\
                   -(?:(?<={LETTER}{{2}}-)|(?<={LETTER}-{LETTER}-))(?={LETTER}-?{LETTER})\
                   |(?={WS}|\\z)\
                   |(?<={WORD_PUNCT})(?=-{{2,}}\\w)\
                 ))"
            ))
        })
    } else {
        SIMPLE.get_or_init(|| build(format!("({WS}+)")))
    }
}

/// `re.split` with one capturing group, empty pieces dropped: the text between matches and
/// the matches, in order.
fn chunks(text: &str, break_on_hyphens: bool) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    let mut last = 0;
    for m in separators(break_on_hyphens).find_iter(text) {
        let m = m.map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
        out.push(text[last..m.start()].to_string());
        out.push(m.as_str().to_string());
        last = m.end();
    }
    out.push(text[last..].to_string());
    out.retain(|c| !c.is_empty());
    Ok(out)
}

fn len(s: &str) -> usize {
    s.chars().count()
}

fn is_blank(s: &str) -> bool {
    strings::strip(s, None, true, true).is_empty()
}

/// `TextWrapper._wrap_chunks` (no indents, `drop_whitespace`, no `max_lines`).
fn wrap_chunks(
    mut chunks: Vec<String>,
    width: usize,
    break_long_words: bool,
    break_on_hyphens: bool,
) -> Vec<String> {
    let mut lines = Vec::new();
    chunks.reverse();
    while !chunks.is_empty() {
        let mut line: Vec<String> = Vec::new();
        let mut line_len = 0;
        if !lines.is_empty() && chunks.last().is_some_and(|c| is_blank(c)) {
            chunks.pop();
        }
        while let Some(chunk) = chunks.last() {
            let l = len(chunk);
            if line_len + l > width {
                break;
            }
            line_len += l;
            line.extend(chunks.pop());
        }
        if chunks.last().is_some_and(|c| len(c) > width) {
            // `_handle_long_word`.
            let space_left = if width < 1 { 1 } else { width - line_len };
            if break_long_words {
                let chunk: Vec<char> = chunks
                    .last()
                    .map(|c| c.chars().collect())
                    .unwrap_or_default();
                let mut end = space_left;
                if break_on_hyphens && chunk.len() > space_left {
                    let hyphen = chunk[..space_left.min(chunk.len())]
                        .iter()
                        .rposition(|&c| c == '-');
                    if let Some(h) =
                        hyphen.filter(|&h| h > 0 && chunk[..h].iter().any(|&c| c != '-'))
                    {
                        end = h + 1;
                    }
                }
                let end = end.min(chunk.len());
                line.push(chunk[..end].iter().collect());
                if let Some(rest) = chunks.last_mut() {
                    *rest = chunk[end..].iter().collect();
                }
            } else if line.is_empty() {
                line.extend(chunks.pop());
            }
        }
        if line.last().is_some_and(|c| is_blank(c)) {
            line.pop();
        }
        if !line.is_empty() {
            lines.push(line.concat());
        }
    }
    lines
}

/// `wordwrap(s, width=79, break_long_words=True, wrapstring=None, break_on_hyphens=True)`.
pub fn wordwrap(value: Value, args: Rest<Value>) -> Result<Value, Error> {
    let [width, break_long_words, wrapstring, break_on_hyphens] = super::bind_args(
        "wordwrap",
        &args,
        [
            "width",
            "break_long_words",
            "wrapstring",
            "break_on_hyphens",
        ],
    )?;
    let Some(text) = value.as_str() else {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("'{}' object has no attribute 'splitlines'", value.kind()),
        ));
    };
    let width = match width {
        None => 79,
        Some(w) if w.kind() == ValueKind::Number && w.is_integer() => i64::try_from(w)?,
        Some(w) => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("wordwrap: the width must be an integer, not {}", w.kind()),
            ))
        }
    };
    if width <= 0 && !text.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("invalid width {width} (must be > 0)"),
        ));
    }
    let width = usize::try_from(width).unwrap_or(0);
    let flag = |v: Option<Value>| v.is_none_or(|v| v.is_true());
    let (break_long_words, break_on_hyphens) = (flag(break_long_words), flag(break_on_hyphens));
    let wrapstring = match wrapstring {
        Some(w) if !w.is_none() => super::values::py_str(&w),
        _ => "\n".to_string(),
    };
    let mut paragraphs = Vec::new();
    for line in strings::splitlines(text, false) {
        let wrapped = wrap_chunks(
            chunks(&line, break_on_hyphens)?,
            width,
            break_long_words,
            break_on_hyphens,
        );
        paragraphs.push(wrapped.join(&wrapstring));
    }
    Ok(Value::from(paragraphs.join(&wrapstring)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrap(text: &str, width: usize) -> Vec<String> {
        wrap_chunks(chunks(text, true).unwrap(), width, true, true)
    }

    /// Expected values from CPython 3.11's `textwrap.wrap(text, width, expand_tabs=False,
    /// replace_whitespace=False)`.
    #[test]
    fn wraps_as_textwrap_does() {
        assert_eq!(
            chunks("Hello there -- you goof-ball, use the -b option!", true).unwrap(),
            [
                "Hello", " ", "there", " ", "--", " ", "you", " ", "goof-", "ball,", " ", "use",
                " ", "the", " ", "-b", " ", "option!"
            ]
        );
        assert_eq!(
            wrap("the quick brown fox jumps", 10),
            ["the quick", "brown fox", "jumps"]
        );
        assert_eq!(
            wrap("a supercalifragilistic b", 8),
            ["a superc", "alifragi", "listic b"]
        );
        assert_eq!(
            wrap("this is a well-known long-winded example", 12),
            ["this is a", "well-known", "long-winded", "example"]
        );
        assert_eq!(wrap("aaaa-bbbb-cccc-dddd", 11), ["aaaa-bbbb-", "cccc-dddd"]);
    }
}
