//! Python's `str` methods as CPython computes them (offsets in characters, its whitespace set,
//! its case rules), for the methods and filters of chat templates.

/// `str.isspace()` of one character: Rust's Unicode White_Space plus the four ASCII
/// information separators `\x1c`–`\x1f`, which CPython counts as whitespace (they split
/// `str.split()` and are stripped by `str.strip()`).
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// A cased character (CPython's `Py_UNICODE_ISLOWER || ISUPPER || ISTITLE`).
fn is_cased(c: char) -> bool {
    c.is_lowercase() || c.is_uppercase() || is_titlecase(c)
}

/// The titlecase letters (Unicode category Lt).
fn is_titlecase(c: char) -> bool {
    matches!(
        c,
        '\u{01C5}' | '\u{01C8}' | '\u{01CB}' | '\u{01F2}'
            | '\u{1F88}'..='\u{1F8F}'
            | '\u{1F98}'..='\u{1F9F}'
            | '\u{1FA8}'..='\u{1FAF}'
            | '\u{1FBC}' | '\u{1FCC}' | '\u{1FFC}'
    )
}

/// The title case of one character (`ǆ` → `ǅ`; otherwise its upper case).
fn to_title(c: char, out: &mut String) {
    match c {
        '\u{01C4}'..='\u{01C6}' => out.push('\u{01C5}'),
        '\u{01C7}'..='\u{01C9}' => out.push('\u{01C8}'),
        '\u{01CA}'..='\u{01CC}' => out.push('\u{01CB}'),
        '\u{01F1}'..='\u{01F3}' => out.push('\u{01F2}'),
        c if is_titlecase(c) => out.push(c),
        c => out.extend(c.to_uppercase()),
    }
}

/// `str.strip(chars)`, `lstrip`, `rstrip`: `None` strips whitespace ([`is_space`]).
pub fn strip<'a>(s: &'a str, chars: Option<&str>, left: bool, right: bool) -> &'a str {
    let matches = |c: char| match chars {
        None => is_space(c),
        Some(set) => set.contains(c),
    };
    let mut out = s;
    if left {
        out = out.trim_start_matches(matches);
    }
    if right {
        out = out.trim_end_matches(matches);
    }
    out
}

/// `str.split(sep, maxsplit)` (`rsplit` with `from_right`). `maxsplit < 0`: no limit.
/// `sep == None` splits on runs of whitespace and drops empty pieces; an empty `sep` is
/// Python's `ValueError: empty separator` (None here).
pub fn split(s: &str, sep: Option<&str>, maxsplit: i64, from_right: bool) -> Option<Vec<String>> {
    let limit = if maxsplit < 0 {
        usize::MAX
    } else {
        maxsplit as usize
    };
    match sep {
        Some("") => None,
        Some(sep) => {
            let pieces: Vec<String> = if from_right {
                let mut v: Vec<String> = s
                    .rsplitn(limit.saturating_add(1), sep)
                    .map(str::to_string)
                    .collect();
                v.reverse();
                v
            } else {
                s.splitn(limit.saturating_add(1), sep)
                    .map(str::to_string)
                    .collect()
            };
            Some(pieces)
        }
        None => {
            let chars: Vec<char> = s.chars().collect();
            let mut pieces: Vec<String> = Vec::new();
            if from_right {
                let mut end = chars.len();
                loop {
                    while end > 0 && is_space(chars[end - 1]) {
                        end -= 1;
                    }
                    if end == 0 {
                        break;
                    }
                    if pieces.len() == limit {
                        pieces.push(chars[..end].iter().collect());
                        break;
                    }
                    let mut start = end;
                    while start > 0 && !is_space(chars[start - 1]) {
                        start -= 1;
                    }
                    pieces.push(chars[start..end].iter().collect());
                    end = start;
                }
                pieces.reverse();
            } else {
                let mut start = 0;
                loop {
                    while start < chars.len() && is_space(chars[start]) {
                        start += 1;
                    }
                    if start == chars.len() {
                        break;
                    }
                    if pieces.len() == limit {
                        pieces.push(chars[start..].iter().collect());
                        break;
                    }
                    let mut end = start;
                    while end < chars.len() && !is_space(chars[end]) {
                        end += 1;
                    }
                    pieces.push(chars[start..end].iter().collect());
                    start = end;
                }
            }
            Some(pieces)
        }
    }
}

/// `str.splitlines(keepends)`: CPython's line boundaries (`\n`, `\r`, `\r\n`, `\v`, `\f`,
/// `\x1c`–`\x1e`, `\x85`, `\u2028`, `\u2029`).
pub fn splitlines(s: &str, keepends: bool) -> Vec<String> {
    let is_break = |c: char| {
        matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        )
    };
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        if is_break(chars[i]) {
            let mut end = i + 1;
            if chars[i] == '\r' && chars.get(i + 1) == Some(&'\n') {
                end += 1;
            }
            let line_end = if keepends { end } else { i };
            out.push(chars[start..line_end].iter().collect());
            start = end;
            i = end;
        } else {
            i += 1;
        }
    }
    if start < chars.len() {
        out.push(chars[start..].iter().collect());
    }
    out
}

/// Python's slice bounds `[start:end]` of a length-`len` sequence, clamped.
fn bounds(len: usize, start: Option<i64>, end: Option<i64>) -> (usize, usize) {
    let clamp = |i: i64| -> usize {
        if i < 0 {
            (len as i64 + i).max(0) as usize
        } else {
            (i as usize).min(len)
        }
    };
    (start.map_or(0, clamp), end.map_or(len, clamp))
}

/// `str.find(sub, start, end)` / `rfind`: the offset in characters, or -1.
pub fn find(s: &str, sub: &str, start: Option<i64>, end: Option<i64>, from_right: bool) -> i64 {
    let chars: Vec<char> = s.chars().collect();
    let needle: Vec<char> = sub.chars().collect();
    let (lo, hi) = bounds(chars.len(), start, end);
    if hi < lo || hi - lo < needle.len() {
        return -1;
    }
    let last = hi - needle.len();
    let hit = |i: &usize| chars[*i..*i + needle.len()] == needle[..];
    let found = if from_right {
        (lo..=last).rev().find(hit)
    } else {
        (lo..=last).find(hit)
    };
    found.map_or(-1, |i| i as i64)
}

/// `str.count(sub, start, end)`: non-overlapping occurrences (an empty `sub` counts the
/// positions between characters, `len + 1`).
pub fn count(s: &str, sub: &str, start: Option<i64>, end: Option<i64>) -> i64 {
    let chars: Vec<char> = s.chars().collect();
    let (lo, hi) = bounds(chars.len(), start, end);
    if hi < lo {
        return 0;
    }
    let hay: String = chars[lo..hi].iter().collect();
    if sub.is_empty() {
        return (hi - lo + 1) as i64;
    }
    hay.matches(sub).count() as i64
}

/// `str.title()`: the first cased character after an uncased one in title case, every
/// other cased character in lower case (`they're` → `They'Re`, `1st` → `1St`).
pub fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut previous_cased = false;
    for c in s.chars() {
        if previous_cased {
            out.extend(c.to_lowercase());
        } else {
            to_title(c, &mut out);
        }
        previous_cased = is_cased(c);
    }
    out
}

/// `str.capitalize()`: the first character in title case, the rest in lower case.
pub fn capitalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    if let Some(first) = chars.next() {
        to_title(first, &mut out);
    }
    for c in chars {
        out.extend(c.to_lowercase());
    }
    out
}

/// `str.swapcase()`.
pub fn swapcase(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_uppercase() {
            out.extend(c.to_lowercase());
        } else if c.is_lowercase() {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `str.islower()` / `str.isupper()`: some cased character, and no cased character of the
/// other case.
pub fn is_lower(s: &str) -> bool {
    s.chars().any(is_cased) && !s.chars().any(|c| c.is_uppercase() || is_titlecase(c))
}

/// See [`is_lower`].
pub fn is_upper(s: &str) -> bool {
    s.chars().any(is_cased) && !s.chars().any(|c| c.is_lowercase() || is_titlecase(c))
}

/// `str.istitle()`: cased runs each start upper/title case, followed by lower case only.
pub fn is_title(s: &str) -> bool {
    let mut previous_cased = false;
    let mut any = false;
    for c in s.chars() {
        if c.is_uppercase() || is_titlecase(c) {
            if previous_cased {
                return false;
            }
            previous_cased = true;
            any = true;
        } else if c.is_lowercase() {
            if !previous_cased {
                return false;
            }
            previous_cased = true;
            any = true;
        } else {
            previous_cased = false;
        }
    }
    any
}

/// `str.isX()` of a non-empty string whose every character passes `test` (Python's
/// `isdigit`, `isalpha`, `isalnum`, `isspace`, … are all False for "").
pub fn all_nonempty(s: &str, test: impl Fn(char) -> bool) -> bool {
    !s.is_empty() && s.chars().all(test)
}

/// `str.isdecimal()`: the decimal digits of any script (Nd); Rust has no Nd table, so
/// numeric characters that are not digit-like (`²`, `½`, `Ⅻ`, circled numbers) are excluded.
pub fn is_decimal(c: char) -> bool {
    c.is_ascii_digit() || (c.is_numeric() && !is_special_digit(c) && !is_non_digit_numeric(c))
}

/// `str.isdigit()`: decimals and the digits Unicode gives Numeric_Type=Digit
/// (superscripts, subscripts, circled and parenthesized digits).
pub fn is_digit(c: char) -> bool {
    is_decimal(c) || is_special_digit(c)
}

fn is_special_digit(c: char) -> bool {
    matches!(c,
        '\u{00B2}' | '\u{00B3}' | '\u{00B9}' | '\u{2070}' | '\u{2074}'..='\u{2079}'
        | '\u{2080}'..='\u{2089}' | '\u{2460}'..='\u{2468}' | '\u{2474}'..='\u{247C}'
        | '\u{2488}'..='\u{2490}' | '\u{24EA}' | '\u{24F5}'..='\u{24FD}' | '\u{24FF}'
        | '\u{2776}'..='\u{277E}' | '\u{2780}'..='\u{2788}' | '\u{278A}'..='\u{2792}')
}

/// Numeric characters that are neither decimal nor digit (fractions, Roman numerals,
/// circled numbers past 9, CJK numerals).
fn is_non_digit_numeric(c: char) -> bool {
    matches!(c,
        '\u{00BC}'..='\u{00BE}' | '\u{2150}'..='\u{218B}' | '\u{2469}'..='\u{2473}'
        | '\u{247D}'..='\u{2487}' | '\u{2491}'..='\u{249B}' | '\u{24EB}'..='\u{24F4}'
        | '\u{24FE}' | '\u{277F}' | '\u{2789}' | '\u{2793}' | '\u{3007}' | '\u{4E00}'..='\u{9FFF}'
        | '\u{3021}'..='\u{3029}' | '\u{3038}'..='\u{303A}')
}

/// `str.expandtabs(tabsize)`: each tab to the next multiple of `tabsize` columns (columns
/// restart after `\n` and `\r`).
pub fn expandtabs(s: &str, tabsize: i64) -> String {
    let mut out = String::with_capacity(s.len());
    let mut column: i64 = 0;
    for c in s.chars() {
        match c {
            '\t' => {
                if tabsize > 0 {
                    let n = tabsize - column % tabsize;
                    out.extend(std::iter::repeat_n(' ', n as usize));
                    column += n;
                }
            }
            '\n' | '\r' => {
                out.push(c);
                column = 0;
            }
            c => {
                out.push(c);
                column += 1;
            }
        }
    }
    out
}

/// `str.center(width, fill)`, `ljust`, `rjust`, as CPython pads (`center` puts the odd
/// space on the left when the width is odd).
pub fn pad(s: &str, width: i64, fill: char, align: Align) -> String {
    let len = s.chars().count() as i64;
    if width <= len {
        return s.to_string();
    }
    let marg = width - len;
    let left = match align {
        Align::Left => 0,
        Align::Right => marg,
        Align::Center => marg / 2 + (marg & width & 1),
    };
    let mut out = String::new();
    out.extend(std::iter::repeat_n(fill, left as usize));
    out.push_str(s);
    out.extend(std::iter::repeat_n(fill, (marg - left) as usize));
    out
}

/// Where [`pad`] puts the text.
#[derive(Debug, Clone, Copy)]
pub enum Align {
    /// `ljust`: the text first, the fill after it.
    Left,
    /// `rjust`: the fill first, the text after it.
    Right,
    /// `center`: the fill split around the text.
    Center,
}

/// `str.zfill(width)`: zeros after the sign.
pub fn zfill(s: &str, width: i64) -> String {
    let len = s.chars().count() as i64;
    if width <= len {
        return s.to_string();
    }
    let zeros = "0".repeat((width - len) as usize);
    match s.chars().next() {
        Some(sign @ ('+' | '-')) => format!("{sign}{zeros}{}", &s[1..]),
        _ => format!("{zeros}{s}"),
    }
}

/// Jinja2's `title` filter (not `str.title`): the string split before and after each run of
/// `-`, whitespace, `(`, `{`, `[` or `<` (`re.split(r"([-\s({\[<]+)")`), every piece with
/// its first character upper-cased and the rest lower-cased (`"it's"` → `"It's"`, `'x'` →
/// `'x'`).
pub fn jinja_title(s: &str) -> String {
    let is_sep =
        |c: char| c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || is_re_space(c);
    let mut out = String::with_capacity(s.len());
    let mut piece_start = true;
    let mut in_sep: Option<bool> = None;
    for c in s.chars() {
        let sep = is_sep(c);
        if in_sep != Some(sep) {
            piece_start = true;
            in_sep = Some(sep);
        }
        if piece_start {
            out.extend(c.to_uppercase());
            piece_start = false;
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Python `re`'s `\s` for str patterns: `str.isspace()`.
fn is_re_space(c: char) -> bool {
    is_space(c)
}

/// Jinja2's `wordcount`: the matches of `\w+` (Unicode letters, digits and `_`).
pub fn wordcount(s: &str) -> usize {
    let mut n = 0;
    let mut in_word = false;
    for c in s.chars() {
        let w = c.is_alphanumeric() || c == '_';
        if w && !in_word {
            n += 1;
        }
        in_word = w;
    }
    n
}

/// MarkupSafe's `escape`: `&`, `<`, `>`, `"`, `'` as `&amp;`, `&lt;`, `&gt;`, `&#34;`,
/// `&#39;`.
pub fn markup_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_is_pythons() {
        assert_eq!(strip("\x1c a \x1f", None, true, true), "a");
        assert_eq!(strip("xxaxx", Some("x"), true, false), "axx");
        assert_eq!(
            split(" a\x1db  c ", None, -1, false).unwrap(),
            ["a", "b", "c"]
        );
        assert_eq!(split("a b c", None, 1, true).unwrap(), ["a b", "c"]);
        assert_eq!(split("a,b,c", Some(","), 1, true).unwrap(), ["a,b", "c"]);
        assert_eq!(split("a,b,c", Some(","), 1, false).unwrap(), ["a", "b,c"]);
        assert!(split("a", Some(""), -1, false).is_none());
    }

    #[test]
    fn offsets_are_characters() {
        assert_eq!(find("日本語abc", "a", None, None, false), 3);
        assert_eq!(find("aéa", "a", None, None, true), 2);
        assert_eq!(find("abc", "", None, None, true), 3);
        assert_eq!(find("abc", "z", None, None, false), -1);
        assert_eq!(count("aaa", "a", Some(1), None), 2);
        assert_eq!(count("ab", "", None, None), 3);
    }

    #[test]
    fn case_rules() {
        assert_eq!(title("they're 1st"), "They'Re 1St");
        assert_eq!(capitalize("hELLO"), "Hello");
        assert_eq!(
            jinja_title("it's a 'quoted' (x)-y"),
            "It's A 'quoted' (X)-Y"
        );
        assert!(is_lower("a1") && !is_lower("1") && !is_lower(""));
        assert!(is_title("Hello World") && !is_title("Hello world"));
    }

    #[test]
    fn padding_and_escaping() {
        assert_eq!(pad("ab", 5, ' ', Align::Center), "  ab ");
        assert_eq!(pad("abc", 6, '*', Align::Center), "*abc**");
        assert_eq!(zfill("-42", 5), "-0042");
        assert_eq!(
            markup_escape("<a href=\"x\">'&'"),
            "&lt;a href=&#34;x&#34;&gt;&#39;&amp;&#39;"
        );
        assert_eq!(wordcount("hello, wörld_1 !"), 2);
        assert_eq!(splitlines("a\r\nb\x1cc\n", true), ["a\r\n", "b\x1c", "c\n"]);
    }
}
