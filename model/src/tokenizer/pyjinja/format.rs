//! Python's string formatting: `str.format` (`'{:>5}'.format(x)`) and printf-style `%`
//! (`'%s=%05.2f' % (k, v)`, Jinja2's `|format` filter), with Python's conversions of
//! values (`str()`, `repr()`) and its format-spec mini-language.

use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind};

use super::values::{py_float, py_repr, py_str, Num, Tuple};

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

/// A parsed format spec: `[[fill]align][sign][#][0][width][,|_][.precision][type]`.
#[derive(Debug, Default, Clone)]
struct Spec {
    fill: Option<char>,
    align: Option<char>,
    sign: Option<char>,
    alternate: bool,
    zero: bool,
    width: Option<usize>,
    grouping: Option<char>,
    precision: Option<usize>,
    kind: Option<char>,
}

fn parse_spec(spec: &str) -> Result<Spec, Error> {
    let chars: Vec<char> = spec.chars().collect();
    let mut i = 0;
    let mut s = Spec::default();
    let is_align = |c: char| matches!(c, '<' | '>' | '^' | '=');
    if chars.len() >= 2 && is_align(chars[1]) {
        s.fill = Some(chars[0]);
        s.align = Some(chars[1]);
        i = 2;
    } else if !chars.is_empty() && is_align(chars[0]) {
        s.align = Some(chars[0]);
        i = 1;
    }
    if i < chars.len() && matches!(chars[i], '+' | '-' | ' ') {
        s.sign = Some(chars[i]);
        i += 1;
    }
    if i < chars.len() && chars[i] == '#' {
        s.alternate = true;
        i += 1;
    }
    if i < chars.len() && chars[i] == '0' {
        s.zero = true;
        i += 1;
    }
    let digits = |i: &mut usize| -> Option<usize> {
        let start = *i;
        while *i < chars.len() && chars[*i].is_ascii_digit() {
            *i += 1;
        }
        chars[start..*i].iter().collect::<String>().parse().ok()
    };
    s.width = digits(&mut i);
    if i < chars.len() && matches!(chars[i], ',' | '_') {
        s.grouping = Some(chars[i]);
        i += 1;
    }
    if i < chars.len() && chars[i] == '.' {
        i += 1;
        s.precision =
            Some(digits(&mut i).ok_or_else(|| invalid("Format specifier missing precision"))?);
    }
    if i < chars.len() {
        s.kind = Some(chars[i]);
        i += 1;
    }
    if i != chars.len() {
        return Err(invalid(format!("Invalid format specifier '{spec}'")));
    }
    Ok(s)
}

fn group_digits(int_digits: &str, sep: char) -> String {
    let n = int_digits.len();
    let mut out = String::new();
    for (i, c) in int_digits.chars().enumerate() {
        if i > 0 && (n - i).is_multiple_of(3) {
            out.push(sep);
        }
        out.push(c);
    }
    out
}

/// Python's `%e`-style text with a two-digit exponent (`1.235e+04`).
fn exp_text(x: f64, precision: usize, upper: bool) -> String {
    let s = format!("{x:.precision$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let text = format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    if upper {
        text.to_uppercase()
    } else {
        text
    }
}

/// Python's `%g`: precision significant digits, trailing zeros dropped unless `alternate`.
fn general_text(x: f64, precision: usize, upper: bool, alternate: bool) -> String {
    let p = precision.max(1);
    if x == 0.0 {
        return if alternate {
            format!("{:.*}", p - 1, 0.0)
        } else {
            "0".into()
        };
    }
    let exp = x.abs().log10().floor() as i32;
    // Rounding can move the exponent (9.99 at p=2 is 10): take it from the %e text.
    let e_text = exp_text(x, p - 1, false);
    let exp = e_text
        .split_once('e')
        .and_then(|(_, e)| e.parse::<i32>().ok())
        .unwrap_or(exp);
    let strip = |t: String| -> String {
        if alternate || !t.contains('.') {
            t
        } else {
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    };
    let text = if exp < -4 || exp >= p as i32 {
        let (m, e) = e_text.split_once('e').unwrap_or((&e_text, "+00"));
        format!("{}e{e}", strip(m.to_string()))
    } else {
        strip(format!("{:.*}", (p as i32 - 1 - exp).max(0) as usize, x))
    };
    if upper {
        text.to_uppercase()
    } else {
        text
    }
}

/// Apply `spec` to `value` as Python's `format(value, spec)` does.
fn format_value(value: &Value, spec: &Spec, printf: bool) -> Result<String, Error> {
    let num = Num::of(value);
    let kind = spec.kind;
    let (sign_src, body): (bool, String) = match (kind, &num) {
        (None | Some('s'), _)
            if num.is_none() || kind == Some('s') || value.kind() == ValueKind::Bool =>
        {
            let mut text = py_str(value);
            if let Some(p) = spec.precision {
                text = text.chars().take(p).collect();
            }
            return Ok(pad(&text, spec, '<'));
        }
        (Some('r'), _) => return Ok(pad(&py_repr(value), spec, '<')),
        (None, Some(Num::Int(n))) => (*n < 0, n.unsigned_abs().to_string()),
        (None, Some(Num::Float(x))) => {
            let text = match spec.precision {
                Some(p) => general_text(x.abs(), p, false, spec.alternate),
                None => py_float(x.abs()),
            };
            (x.is_sign_negative() && !x.is_nan(), text)
        }
        (Some('d' | 'i' | 'u'), Some(n)) => {
            let i = match n {
                Num::Int(i) => *i,
                Num::Float(x) if printf => x.trunc() as i128,
                Num::Float(_) => {
                    return Err(invalid(
                        "Unknown format code 'd' for object of type 'float'",
                    ))
                }
            };
            (i < 0, i.unsigned_abs().to_string())
        }
        (Some(k @ ('x' | 'X' | 'o' | 'b')), Some(Num::Int(i))) => {
            let a = i.unsigned_abs();
            let digits = match k {
                'x' => format!("{a:x}"),
                'X' => format!("{a:X}"),
                'o' => format!("{a:o}"),
                _ => format!("{a:b}"),
            };
            let prefix = if spec.alternate {
                match k {
                    'x' => "0x",
                    'X' => "0X",
                    'o' => "0o",
                    _ => "0b",
                }
            } else {
                ""
            };
            (*i < 0, format!("{prefix}{digits}"))
        }
        (Some(k @ ('f' | 'F' | 'e' | 'E' | 'g' | 'G' | '%')), Some(n)) => {
            let x = n.as_f64();
            let p = spec.precision.unwrap_or(6);
            let a = x.abs();
            let text = if !a.is_finite() {
                let t = if a.is_nan() { "nan" } else { "inf" };
                if k.is_ascii_uppercase() {
                    t.to_uppercase()
                } else {
                    t.to_string()
                }
            } else {
                match k {
                    'f' | 'F' => format!("{a:.p$}"),
                    'e' | 'E' => exp_text(a, p, k == 'E'),
                    '%' => format!("{:.p$}%", a * 100.0),
                    _ => general_text(a, p, k == 'G', spec.alternate),
                }
            };
            (x.is_sign_negative() && !x.is_nan(), text)
        }
        (Some('c'), Some(Num::Int(i))) => {
            let c = u32::try_from(*i)
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| invalid("%c arg not in range(0x110000)"))?;
            return Ok(pad(&c.to_string(), spec, '<'));
        }
        (Some(k), _) => {
            return Err(invalid(format!(
                "Unknown format code '{k}' for object of type {}",
                value.kind()
            )))
        }
        (None, None) => unreachable_kind(),
    };
    let body = match spec.grouping {
        Some(sep) => {
            let (int_part, rest) = match body.find(|c: char| !c.is_ascii_digit()) {
                Some(i) => body.split_at(i),
                None => (body.as_str(), ""),
            };
            format!("{}{rest}", group_digits(int_part, sep))
        }
        None => body,
    };
    let sign = match (sign_src, spec.sign) {
        (true, _) => "-",
        (false, Some('+')) => "+",
        (false, Some(' ')) => " ",
        _ => "",
    };
    let width = spec.width.unwrap_or(0);
    let len = sign.chars().count() + body.chars().count();
    if (spec.zero && spec.align.is_none()) || spec.align == Some('=') {
        let fill = if spec.zero && spec.fill.is_none() {
            '0'
        } else {
            spec.fill.unwrap_or(' ')
        };
        let pad_n = width.saturating_sub(len);
        return Ok(format!("{sign}{}{body}", fill.to_string().repeat(pad_n)));
    }
    Ok(pad(&format!("{sign}{body}"), spec, '>'))
}

fn unreachable_kind() -> (bool, String) {
    (false, String::new())
}

/// Pad `text` to the spec's width (`default_align` when the spec names none).
fn pad(text: &str, spec: &Spec, default_align: char) -> String {
    let width = spec.width.unwrap_or(0);
    let len = text.chars().count();
    if len >= width {
        return text.to_string();
    }
    let fill = spec.fill.unwrap_or(' ').to_string();
    let n = width - len;
    match spec.align.unwrap_or(default_align) {
        '<' => format!("{text}{}", fill.repeat(n)),
        '^' => format!("{}{text}{}", fill.repeat(n / 2), fill.repeat(n - n / 2)),
        _ => format!("{}{text}", fill.repeat(n)),
    }
}

/// `str.format(*args, **kwargs)`.
pub fn str_format(
    template: &str,
    args: &[Value],
    kwargs: &[(String, Value)],
) -> Result<String, Error> {
    let chars: Vec<char> = template.chars().collect();
    let mut out = String::new();
    let mut auto = 0usize;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '{' if chars.get(i + 1) == Some(&'{') => {
                out.push('{');
                i += 2;
            }
            '}' if chars.get(i + 1) == Some(&'}') => {
                out.push('}');
                i += 2;
            }
            '}' => return Err(invalid("Single '}' encountered in format string")),
            '{' => {
                let start = i + 1;
                let mut depth = 1;
                let mut j = start;
                while j < chars.len() && depth > 0 {
                    match chars[j] {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    j += 1;
                }
                if depth != 0 {
                    return Err(invalid("expected '}' before end of string"));
                }
                let field: String = chars[start..j - 1].iter().collect();
                let (head, spec) = match field.find(':') {
                    Some(p) => (&field[..p], &field[p + 1..]),
                    None => (field.as_str(), ""),
                };
                let (name, conversion) = match head.find('!') {
                    Some(p) => (&head[..p], Some(&head[p + 1..])),
                    None => (head, None),
                };
                let (base, path) = match name.find(['.', '[']) {
                    Some(p) => (&name[..p], &name[p..]),
                    None => (name, ""),
                };
                let mut value = if base.is_empty() {
                    let v = args
                        .get(auto)
                        .cloned()
                        .ok_or_else(|| invalid("Replacement index out of range"))?;
                    auto += 1;
                    v
                } else if let Ok(n) = base.parse::<usize>() {
                    args.get(n)
                        .cloned()
                        .ok_or_else(|| invalid(format!("Replacement index {n} out of range")))?
                } else {
                    kwargs
                        .iter()
                        .find(|(k, _)| k == base)
                        .map(|(_, v)| v.clone())
                        .ok_or_else(|| invalid(format!("KeyError: '{base}'")))?
                };
                let mut rest = path;
                while !rest.is_empty() {
                    if let Some(r) = rest.strip_prefix('.') {
                        let end = r.find(['.', '[']).unwrap_or(r.len());
                        value = value.get_attr(&r[..end])?;
                        rest = &r[end..];
                    } else if let Some(r) = rest.strip_prefix('[') {
                        let end = r
                            .find(']')
                            .ok_or_else(|| invalid("Missing ']' in format string"))?;
                        let key = &r[..end];
                        value = match key.parse::<i64>() {
                            Ok(n) => value.get_item(&Value::from(n))?,
                            Err(_) => value.get_item(&Value::from(key))?,
                        };
                        rest = &r[end + 1..];
                    } else {
                        return Err(invalid(
                            "Only '.' or '[' may follow ']' in format field specifier",
                        ));
                    }
                }
                let value = match conversion {
                    None => value,
                    Some("s") => Value::from(py_str(&value)),
                    Some("r") | Some("a") => Value::from(py_repr(&value)),
                    Some(c) => return Err(invalid(format!("Unknown conversion specifier {c}"))),
                };
                // A nested field in the spec (`{:{w}}`) is formatted first.
                let spec = if spec.contains('{') {
                    str_format(spec, args, kwargs)?
                } else {
                    spec.to_string()
                };
                out.push_str(&format_value(&value, &parse_spec(&spec)?, false)?);
                i = j;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// Printf-style `template % values`: `values` is a tuple (one value each), a mapping (for
/// `%(name)s`) or any single value.
pub fn percent_format(template: &str, values: &Value) -> Result<String, Error> {
    let is_tuple = values.downcast_object_ref::<Tuple>().is_some();
    let args: Vec<Value> = if is_tuple {
        values.try_iter()?.collect()
    } else {
        vec![values.clone()]
    };
    let mapping = values.kind() == ValueKind::Map;
    let chars: Vec<char> = template.chars().collect();
    let mut out = String::new();
    let mut next = 0usize;
    let mut used_mapping = false;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '%' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        i += 1;
        let mut key: Option<String> = None;
        if chars.get(i) == Some(&'(') {
            let end = chars[i..]
                .iter()
                .position(|c| *c == ')')
                .ok_or_else(|| invalid("incomplete format key"))?;
            key = Some(chars[i + 1..i + end].iter().collect());
            i += end + 1;
        }
        let mut spec = Spec::default();
        while let Some(&c) = chars.get(i) {
            match c {
                '-' => spec.align = Some('<'),
                '+' => spec.sign = Some('+'),
                ' ' => {
                    if spec.sign.is_none() {
                        spec.sign = Some(' ')
                    }
                }
                '#' => spec.alternate = true,
                '0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        let mut take_star = |i: &mut usize| -> Result<Option<usize>, Error> {
            if chars.get(*i) == Some(&'*') {
                *i += 1;
                let v = args
                    .get(next)
                    .ok_or_else(|| invalid("not enough arguments for format string"))?;
                next += 1;
                return Ok(Some(
                    usize::try_from(v.clone()).map_err(|_| invalid("* wants int"))?,
                ));
            }
            let start = *i;
            while chars.get(*i).is_some_and(char::is_ascii_digit) {
                *i += 1;
            }
            Ok(chars[start..*i].iter().collect::<String>().parse().ok())
        };
        spec.width = take_star(&mut i)?;
        if chars.get(i) == Some(&'.') {
            i += 1;
            spec.precision = Some(take_star(&mut i)?.unwrap_or(0));
        }
        while matches!(chars.get(i), Some('h' | 'l' | 'L')) {
            i += 1;
        }
        let kind = *chars.get(i).ok_or_else(|| invalid("incomplete format"))?;
        i += 1;
        if kind == '%' {
            out.push('%');
            continue;
        }
        let value = match &key {
            Some(k) => {
                if !mapping {
                    return Err(invalid("format requires a mapping"));
                }
                used_mapping = true;
                values.get_item(&Value::from(k.as_str()))?
            }
            None => {
                let v = args
                    .get(next)
                    .cloned()
                    .ok_or_else(|| invalid("not enough arguments for format string"))?;
                next += 1;
                v
            }
        };
        if spec.zero && spec.align.is_none() && !matches!(kind, 's' | 'r' | 'a' | 'c') {
            spec.align = None;
        } else {
            spec.zero = false;
            if spec.align.is_none() {
                spec.align = Some('>');
            }
        }
        spec.kind = Some(match kind {
            'a' => 'r',
            'u' | 'i' => 'd',
            k => k,
        });
        if matches!(
            kind,
            'd' | 'i' | 'u' | 'x' | 'X' | 'o' | 'e' | 'E' | 'f' | 'F' | 'g' | 'G'
        ) && Num::of(&value).is_none()
        {
            return Err(invalid(format!(
                "%{kind} format: a real number is required, not {}",
                value.kind()
            )));
        }
        let value = if matches!(kind, 'x' | 'X' | 'o') {
            match Num::of(&value) {
                Some(Num::Float(_)) => {
                    return Err(invalid(format!(
                        "%{kind} format: an integer is required, not float"
                    )))
                }
                _ => value,
            }
        } else {
            value
        };
        out.push_str(&format_value(&value, &spec, true)?);
    }
    if !mapping && !used_mapping && next < args.len() {
        return Err(invalid(
            "not all arguments converted during string formatting",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::pyjinja::values::tuple;

    #[test]
    fn str_format_as_python() {
        let f = |t: &str, args: Vec<Value>| str_format(t, &args, &[]).unwrap();
        assert_eq!(
            f(
                "[{:>5}][{:.2f}][{!r}][{:05d}]",
                vec![
                    Value::from("ab"),
                    Value::from(2.71946),
                    Value::from("a"),
                    Value::from(42)
                ]
            ),
            "[   ab][2.72]['a'][00042]"
        );
        assert_eq!(
            f("{}|{}", vec![Value::from(()), Value::from(1.0)]),
            "None|1.0"
        );
        assert_eq!(f("{:,}", vec![Value::from(1234567)]), "1,234,567");
        assert_eq!(f("{0}{0}", vec![Value::from("x")]), "xx");
    }

    #[test]
    fn percent_format_as_python() {
        let p = |t: &str, v: Value| percent_format(t, &v).unwrap();
        assert_eq!(p("%05.2f|", Value::from(2.71946)), "02.72|");
        assert_eq!(p("%8.1f|", Value::from(-1.25)), "    -1.2|");
        assert_eq!(
            p("%s=%d", tuple(vec![Value::from("n"), Value::from(7)])),
            "n=7"
        );
        assert_eq!(
            p(
                "%x|%X|%o|%.3e|%g",
                tuple(vec![
                    Value::from(255),
                    Value::from(255),
                    Value::from(8),
                    Value::from(12345.678),
                    Value::from(0.00001)
                ])
            ),
            "ff|FF|10|1.235e+04|1e-05"
        );
        assert_eq!(
            p(
                "[%-5s][%5s][%+d]",
                tuple(vec![Value::from("ab"), Value::from("ab"), Value::from(3)])
            ),
            "[ab   ][   ab][+3]"
        );
        assert_eq!(p("%d%%", Value::from(50)), "50%");
        assert_eq!(p("%d", Value::from(-3.7)), "-3");
        assert!(percent_format("%s", &tuple(vec![Value::from(1), Value::from(2)])).is_err());
    }
}
