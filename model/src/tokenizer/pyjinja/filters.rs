//! Jinja2's filters, tests and globals where minijinja's differ from them, and the names
//! Jinja2 does not have (a template using one fails in transformers, so it fails here).

use std::sync::Arc;

use minijinja::value::{from_args, Kwargs, Object, Rest, Value, ValueKind};
use minijinja::State;
use minijinja::{Environment, Error, ErrorKind};

use super::sequences;
use super::strings::{self, Align};
use super::values::{py_str, tuple, DictView, PyRange};

/// minijinja's filters that Jinja2 lacks.
const NOT_IN_JINJA2_FILTERS: [&str; 5] = ["split", "lines", "bool", "chain", "zip"];
/// minijinja's tests that Jinja2 lacks.
const NOT_IN_JINJA2_TESTS: [&str; 4] = ["safe", "int", "startingwith", "endingwith"];
/// Jinja2's sandbox refuses a `range` longer than this (`MAX_RANGE`).
const MAX_RANGE: usize = 100_000;

/// Replace minijinja's filters, tests and globals with Jinja2's.
pub fn install(env: &mut Environment<'static>) {
    for name in NOT_IN_JINJA2_FILTERS {
        env.remove_filter(name);
    }
    for name in NOT_IN_JINJA2_TESTS {
        env.remove_test(name);
    }
    env.remove_global("debug");
    env.add_global("range", Value::from_function(range));
    env.add_global(
        "cycler",
        Value::from_function(|items: Rest<Value>| {
            minijinja_contrib::globals::cycler(items.to_vec())
        }),
    );
    env.add_global("dict", Value::from_object(TemplateDict));
    env.add_global("namespace", Value::from_function(namespace));
    // Jinja2's `lipsum` writes random text, which no renderer can reproduce: defined, as in
    // Jinja2 (`lipsum is defined`), and refused when called, never rendered differently.
    env.add_global(
        "lipsum",
        Value::from_function(|_: Rest<Value>| -> Result<Value, minijinja::Error> {
            Err(minijinja::Error::new(
                minijinja::ErrorKind::InvalidOperation,
                "lipsum writes random text, which cannot be rendered as Jinja2 renders it",
            ))
        }),
    );
    env.add_global(
        "joiner",
        Value::from_function(minijinja_contrib::globals::joiner),
    );

    env.add_filter("string", |v: Value| keep_safety(&v, py_str(&v)));
    env.add_filter("upper", |v: Value| {
        keep_safety(&v, py_str(&v).to_uppercase())
    });
    env.add_filter("lower", |v: Value| {
        keep_safety(&v, py_str(&v).to_lowercase())
    });
    env.add_filter("title", |v: Value| {
        keep_safety(&v, strings::jinja_title(&py_str(&v)))
    });
    env.add_filter("capitalize", |v: Value| {
        keep_safety(&v, strings::capitalize(&py_str(&v)))
    });
    env.add_filter("trim", |v: Value, chars: Option<Value>| {
        let chars = chars.filter(|c| !c.is_none()).map(|c| py_str(&c));
        keep_safety(
            &v,
            strings::strip(&py_str(&v), chars.as_deref(), true, true).to_string(),
        )
    });
    env.add_filter("center", |v: Value, width: Option<i64>| {
        Value::from(strings::pad(
            &py_str(&v),
            width.unwrap_or(80),
            ' ',
            Align::Center,
        ))
    });
    env.add_filter("wordcount", |v: Value| {
        Value::from(strings::wordcount(&py_str(&v)))
    });
    env.add_filter("escape", escape);
    env.add_filter("e", escape);
    env.add_filter("forceescape", |v: Value| {
        Value::from_safe_string(strings::markup_escape(&py_str(&v)))
    });
    env.add_filter("join", join);
    env.add_filter("int", int);
    env.add_filter("float", float);
    env.add_filter("items", items);
    env.add_filter("dictsort", dictsort);
    env.add_filter("tojson", super::json::tojson);
    env.add_filter("replace", replace);
    env.add_filter("format", format);
    env.add_filter("round", round);
    env.add_filter("indent", indent);
    env.add_filter("wordwrap", super::wordwrap::wordwrap);
    env.add_filter("truncate", truncate);
    env.add_filter("urlencode", urlencode);
    env.add_filter("xmlattr", xmlattr);
    env.add_filter("pprint", |v: Value| {
        Value::from(super::values::py_repr_sorted(&v))
    });
    env.add_filter("sort", sequences::sort);
    env.add_filter("min", sequences::min);
    env.add_filter("max", sequences::max);
    env.add_filter("sum", sequences::sum);
    env.add_filter("groupby", sequences::groupby);
    env.add_filter("length", sequences::length);
    env.add_filter("count", sequences::length);
    env.add_filter("list", sequences::list);
    env.add_filter("first", sequences::first);
    env.add_filter("last", sequences::last);
    env.add_filter("attr", sequences::attr);
    env.add_filter("striptags", minijinja_contrib::filters::striptags);
    env.add_filter("filesizeformat", minijinja_contrib::filters::filesizeformat);

    env.add_test("iterable", is_iterable);
    env.add_test("sequence", is_sequence);
    env.add_test("mapping", |v: Value| super::values::is_dict(&v));
    env.add_test("number", |v: Value| {
        matches!(v.kind(), ValueKind::Number | ValueKind::Bool)
    });
    env.add_test("integer", |v: Value| v.is_integer());
    env.add_test("float", |v: Value| {
        v.kind() == ValueKind::Number && !v.is_integer()
    });
    env.add_test("boolean", |v: Value| v.kind() == ValueKind::Bool);
    env.add_test("true", |v: Value| {
        v.kind() == ValueKind::Bool && v.is_true()
    });
    env.add_test("false", |v: Value| {
        v.kind() == ValueKind::Bool && !v.is_true()
    });
    env.add_test("string", |v: Value| v.kind() == ValueKind::String);
    // Functions, macros, `loop` and joiners are what minijinja makes plain callable objects.
    // Jinja2's Undefined has `__call__` (to fail when called), so Python's `callable()` is
    // true of it: `x.missing is callable`.
    env.add_test("callable", |v: Value| {
        v.kind() == ValueKind::Plain || v.is_undefined() || super::values::is_macro(&v)
    });
    env.add_test("odd", |v: Value| parity(&v, 1));
    env.add_test("even", |v: Value| parity(&v, 0));
    env.add_test("lower", |v: Value| strings::is_lower(&py_str(&v)));
    env.add_test("upper", |v: Value| strings::is_upper(&py_str(&v)));
}

/// A filter's text result, safe when its input was (Jinja2 keeps `Markup` through `upper`,
/// `trim`, …).
fn keep_safety(input: &Value, text: String) -> Value {
    if input.is_safe() {
        Value::from_safe_string(text)
    } else {
        Value::from(text)
    }
}

/// Jinja2's `iterable`: `iter(value)` succeeds. Undefined is iterable (empty), None and
/// numbers are not.
fn is_iterable(v: Value) -> bool {
    matches!(
        v.kind(),
        ValueKind::Undefined
            | ValueKind::String
            | ValueKind::Bytes
            | ValueKind::Seq
            | ValueKind::Map
            | ValueKind::Iterable
    )
}

/// Jinja2's `sequence`: `len(value)` and `value.__getitem__` exist: strings, lists, tuples,
/// dicts and Undefined; not None, numbers, generators or dict views.
fn is_sequence(v: Value) -> bool {
    if v.as_object()
        .is_some_and(|o| o.downcast_ref::<DictView>().is_some())
    {
        return false;
    }
    matches!(
        v.kind(),
        ValueKind::Undefined
            | ValueKind::String
            | ValueKind::Bytes
            | ValueKind::Seq
            | ValueKind::Map
    )
}

/// MarkupSafe's `escape` of `str(value)`; a safe string is left as it is.
fn escape(v: Value) -> Value {
    if v.is_safe() {
        return v;
    }
    Value::from_safe_string(strings::markup_escape(&py_str(&v)))
}

/// Jinja2's attribute getter for `attribute=`: dotted parts, integer parts as indexes.
fn get_path(value: &Value, path: &Value) -> Result<Value, Error> {
    if let Some(p) = path.as_str() {
        let mut v = value.clone();
        for part in p.split('.') {
            v = match part.parse::<i64>() {
                Ok(i) => v.get_item(&Value::from(i))?,
                Err(_) => v.get_attr(part)?,
            };
        }
        Ok(v)
    } else {
        value.get_item(path)
    }
}

/// `join(d='', attribute=None)`: `str(d).join(map(str, value))`.
fn join(value: Value, d: Option<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let attribute: Option<Value> = kwargs.get("attribute")?;
    let d = match kwargs.get::<Option<Value>>("d")? {
        Some(d) => Some(d),
        None => d,
    };
    kwargs.assert_all_used()?;
    let sep = d.map(|d| py_str(&d)).unwrap_or_default();
    if value.is_undefined() {
        return Ok(Value::from(""));
    }
    let mut out = String::new();
    let mut all_safe = value.kind() == ValueKind::String && value.is_safe();
    for (i, item) in value.try_iter()?.enumerate() {
        let item = match &attribute {
            Some(a) => get_path(&item, a)?,
            None => item,
        };
        if i > 0 {
            out.push_str(&sep);
        }
        all_safe &= item.is_safe();
        out.push_str(&py_str(&item));
    }
    Ok(if all_safe {
        Value::from_safe_string(out)
    } else {
        Value::from(out)
    })
}

/// Python's `int(text, base)`: surrounding whitespace, a sign, `_` between digits, and the
/// base's prefix (`0x` for 16) allowed.
fn parse_py_int(text: &str, base: u32) -> Option<i128> {
    let t = strings::strip(text, None, true, true);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = digits.to_ascii_lowercase();
    let prefix = match base {
        16 => "0x",
        8 => "0o",
        2 => "0b",
        _ => "",
    };
    let digits = if !prefix.is_empty() {
        lower
            .strip_prefix(prefix)
            .map_or(lower.as_str(), |d| d.strip_prefix('_').unwrap_or(d))
    } else {
        lower.as_str()
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let clean: String = digits.chars().filter(|c| *c != '_').collect();
    let n = i128::from_str_radix(&clean, base).ok()?;
    Some(if neg { -n } else { n })
}

/// Python's `float(text)`: surrounding whitespace, `_` between digits, `inf`/`nan` in any
/// case.
fn parse_py_float(text: &str) -> Option<f64> {
    let t = strings::strip(text, None, true, true);
    if t.is_empty() {
        return None;
    }
    let b = t.as_bytes();
    for (i, c) in b.iter().enumerate() {
        if *c == b'_' {
            let digit = |j: Option<&u8>| j.is_some_and(u8::is_ascii_digit);
            if !digit(i.checked_sub(1).and_then(|j| b.get(j))) || !digit(b.get(i + 1)) {
                return None;
            }
        }
    }
    let clean: String = t.chars().filter(|c| *c != '_').collect();
    let body = clean.trim_start_matches(['+', '-']);
    let lower = body.to_ascii_lowercase();
    if lower != "inf"
        && lower != "infinity"
        && lower != "nan"
        && !body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return None;
    }
    clean.parse::<f64>().ok()
}

/// Jinja2's `int(default=0, base=10)`: `int(value)` (strings with `base`), else
/// `int(float(value))` (`"42.23"` → 42), else the default.
fn int(
    value: Value,
    default: Option<Value>,
    base: Option<u32>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let base: Option<u32> = kwargs.get::<Option<u32>>("base")?.or(base);
    let default = match kwargs.get::<Option<Value>>("default")? {
        Some(d) => d,
        None => default.unwrap_or(Value::from(0)),
    };
    kwargs.assert_all_used()?;
    let from_float = |x: f64| -> Result<Option<Value>, Error> {
        if x.is_nan() {
            Ok(None)
        } else if x.is_infinite() {
            Err(Error::new(
                ErrorKind::InvalidOperation,
                "int: cannot convert float infinity to integer",
            ))
        } else {
            Ok(Some(Value::from(x.trunc() as i128)))
        }
    };
    let converted = match value.kind() {
        ValueKind::Bool => Some(Value::from(i64::from(value.is_true()))),
        ValueKind::Number if value.is_integer() => Some(value.clone()),
        ValueKind::Number => from_float(f64::try_from(value.clone())?)?,
        ValueKind::String => {
            let s = value.as_str().unwrap_or_default();
            match parse_py_int(s, base.unwrap_or(10)) {
                Some(n) => Some(Value::from(n)),
                None => match parse_py_float(s) {
                    Some(x) => from_float(x)?,
                    None => None,
                },
            }
        }
        _ => None,
    };
    Ok(converted.unwrap_or(default))
}

/// Jinja2's `float(default=0.0)`: `float(value)`, else the default.
fn float(value: Value, default: Option<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let default = match kwargs.get::<Option<Value>>("default")? {
        Some(d) => d,
        None => default.unwrap_or(Value::from(0.0)),
    };
    kwargs.assert_all_used()?;
    let converted = match value.kind() {
        ValueKind::Bool => Some(if value.is_true() { 1.0 } else { 0.0 }),
        ValueKind::Number => f64::try_from(value.clone()).ok(),
        ValueKind::String => parse_py_float(value.as_str().unwrap_or_default()),
        _ => None,
    };
    Ok(converted.map(Value::from).unwrap_or(default))
}

/// Jinja2's `items`: the mapping's `(key, value)` tuples; Undefined gives none.
fn items(value: Value) -> Result<Value, Error> {
    if value.is_undefined() {
        return Ok(Value::from(Vec::<Value>::new()));
    }
    if value.kind() != ValueKind::Map {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "items: can only get item pairs from a mapping, not {}",
                value.kind()
            ),
        ));
    }
    let mut out = Vec::new();
    for key in value.try_iter()? {
        out.push(tuple(vec![key.clone(), value.get_item(&key)?]));
    }
    Ok(Value::from(out))
}

/// Jinja2's `dictsort(case_sensitive=False, by='key', reverse=False)`: the `(key, value)`
/// tuples sorted by key (or value), strings compared case-insensitively by default.
fn dictsort(
    value: Value,
    case_sensitive: Option<bool>,
    by: Option<String>,
    reverse: Option<bool>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let case_sensitive = kwargs
        .get::<Option<bool>>("case_sensitive")?
        .or(case_sensitive);
    let by = kwargs.get::<Option<String>>("by")?.or(by);
    let reverse = kwargs.get::<Option<bool>>("reverse")?.or(reverse);
    kwargs.assert_all_used()?;
    let by_value = match by.as_deref() {
        None | Some("key") => false,
        Some("value") => true,
        Some(_) => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                "dictsort: You can only sort by either \"key\" or \"value\"",
            ))
        }
    };
    let case_sensitive = case_sensitive.unwrap_or(false);
    let mut pairs: Vec<Value> = items(value)?.try_iter()?.collect();
    let key_of = |pair: &Value| -> Value {
        let v = pair
            .get_item_by_index(usize::from(by_value))
            .unwrap_or_default();
        match (case_sensitive, v.as_str()) {
            (false, Some(s)) => Value::from(s.to_lowercase()),
            _ => v,
        }
    };
    // Python's `sorted(reverse=True)` keeps equal keys in their order.
    if reverse.unwrap_or(false) {
        pairs.sort_by_key(|p| std::cmp::Reverse(key_of(p)));
    } else {
        pairs.sort_by_key(key_of);
    }
    Ok(Value::from(pairs))
}

/// Python's `range(stop)` / `range(start, stop[, step])`, refused past Jinja2's sandbox
/// limit.
fn range(lower: i64, upper: Option<i64>, step: Option<i64>) -> Result<Value, Error> {
    let (start, stop) = match upper {
        Some(u) => (lower, u),
        None => (0, lower),
    };
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "range() arg 3 must not be zero",
        ));
    }
    let r = PyRange { start, stop, step };
    if r.len() > MAX_RANGE {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "Range too big. The sandbox blocks ranges larger than MAX_RANGE ({MAX_RANGE})."
            ),
        ));
    }
    Ok(Value::from_object(r))
}

/// `odd`/`even`: `value % 2 == rem` for numbers; Python's `%` refuses a string.
fn parity(v: &Value, rem: i128) -> Result<bool, Error> {
    match v.kind() {
        ValueKind::Bool => Ok(i128::from(v.is_true()) % 2 == rem),
        ValueKind::Number if v.is_integer() => Ok(i128::try_from(v.clone())?.rem_euclid(2) == rem),
        ValueKind::Number => Ok(f64::try_from(v.clone())?.rem_euclid(2.0) == rem as f64),
        other => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("not all arguments converted during string formatting ({other} % 2)"),
        )),
    }
}

/// Jinja2's `format`: `str(value) % (kwargs or args)`; a safe format string escapes the
/// text it is given (MarkupSafe's `Markup.__mod__`).
fn format(value: Value, args: Rest<Value>) -> Result<Value, Error> {
    let (positional, named) = super::split_args(&args)?;
    if !positional.is_empty() && !named.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "can't handle positional and keyword arguments at the same time",
        ));
    }
    let safe = value.is_safe();
    let escape_arg = |v: Value| -> Value {
        if safe && v.kind() == ValueKind::String && !v.is_safe() {
            Value::from(strings::markup_escape(v.as_str().unwrap_or_default()))
        } else {
            v
        }
    };
    let values = if named.is_empty() {
        tuple(positional.into_iter().map(escape_arg).collect())
    } else {
        Value::from_object(
            named
                .into_iter()
                .map(|(k, v)| (Value::from(k), escape_arg(v)))
                .collect::<indexmap::IndexMap<Value, Value>>(),
        )
    };
    let text = super::format::percent_format(&py_str(&value), &values)?;
    Ok(keep_safety(&value, text))
}

/// `replace(old, new, count=None)`: Python's `str.replace`.
fn replace(value: Value, old: String, new: String, count: Option<i64>) -> Value {
    let s = py_str(&value);
    let out = match count {
        Some(n) if n >= 0 => s.replacen(&old, &new, n as usize),
        _ => s.replace(&old, &new),
    };
    keep_safety(&value, out)
}

/// `round(precision=0, method='common')`: Python's `round` (half to even, on the float's
/// exact value) or `math.ceil`/`math.floor` scaled; an integer stays an integer under
/// `common`.
fn round(
    value: Value,
    precision: Option<i32>,
    method: Option<String>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let precision = kwargs
        .get::<Option<i32>>("precision")?
        .or(precision)
        .unwrap_or(0);
    let method = kwargs.get::<Option<String>>("method")?.or(method);
    kwargs.assert_all_used()?;
    let method = method.as_deref().unwrap_or("common");
    if !matches!(method, "common" | "ceil" | "floor") {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "method must be common, ceil or floor",
        ));
    }
    if method == "common" && (value.is_integer() || value.kind() == ValueKind::Bool) {
        let n = if value.kind() == ValueKind::Bool {
            i128::from(value.is_true())
        } else {
            i128::try_from(value.clone())?
        };
        if precision >= 0 {
            return Ok(Value::from(n));
        }
        let scale = 10i128.pow(precision.unsigned_abs());
        let q = n.div_euclid(scale);
        let r = n.rem_euclid(scale);
        let q = match (2 * r).cmp(&scale) {
            std::cmp::Ordering::Greater => q + 1,
            std::cmp::Ordering::Equal if q % 2 != 0 => q + 1,
            _ => q,
        };
        return Ok(Value::from(q * scale));
    }
    let x = if value.kind() == ValueKind::Bool {
        f64::from(u8::from(value.is_true()))
    } else {
        f64::try_from(value.clone())?
    };
    let scale = 10f64.powi(precision);
    Ok(Value::from(match method {
        "ceil" => (x * scale).ceil() / scale,
        "floor" => (x * scale).floor() / scale,
        _ => round_half_even(x, precision),
    }))
}

/// Python's `round(x, n)`: correctly rounded from the float's exact decimal value, ties to
/// even (`2.675` is `2.67499…`, so `2.67`; `2.5` → `2.0`).
fn round_half_even(x: f64, digits: i32) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if digits >= 0 {
        // The float's exact decimal expansion (at most 1074 fractional digits), cut after
        // `digits` places; the digits after the cut decide, ties to even.
        let exact = format!("{:.1100}", x.abs());
        let (int_part, frac) = exact.split_once('.').unwrap_or((&exact, ""));
        let cut = (digits as usize).min(frac.len());
        let (keep, rest) = frac.split_at(cut);
        let mut kept: Vec<u8> = format!("{int_part}{keep}").into_bytes();
        let first = rest.as_bytes().first().copied().unwrap_or(b'0');
        let tail_nonzero = rest.bytes().skip(1).any(|b| b != b'0');
        let last_odd = kept.last().is_some_and(|b| (b - b'0') % 2 == 1);
        if first > b'5' || (first == b'5' && (tail_nonzero || last_odd)) {
            let mut i = kept.len();
            loop {
                if i == 0 {
                    kept.insert(0, b'1');
                    break;
                }
                i -= 1;
                if kept[i] == b'9' {
                    kept[i] = b'0';
                } else {
                    kept[i] += 1;
                    break;
                }
            }
        }
        let split = kept.len() - cut;
        let text = format!(
            "{}.{}",
            String::from_utf8_lossy(&kept[..split]),
            String::from_utf8_lossy(&kept[split..])
        );
        let r: f64 = text.parse().unwrap_or(x.abs());
        if x.is_sign_negative() {
            -r
        } else {
            r
        }
    } else {
        let scale = 10f64.powi(-digits);
        let y = x / scale;
        let r = y.round();
        let r = if (y - y.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
            r - y.signum()
        } else {
            r
        };
        r * scale
    }
}

/// `indent(width=4, first=False, blank=False)` as Jinja2 writes it (a trailing newline is
/// kept; `width` may be a string).
fn indent(
    value: Value,
    width: Option<Value>,
    first: Option<bool>,
    blank: Option<bool>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let width = kwargs.get::<Option<Value>>("width")?.or(width);
    let first = kwargs
        .get::<Option<bool>>("first")?
        .or(first)
        .unwrap_or(false);
    let blank = kwargs
        .get::<Option<bool>>("blank")?
        .or(blank)
        .unwrap_or(false);
    kwargs.assert_all_used()?;
    let indention = match &width {
        None => "    ".to_string(),
        Some(w) if w.kind() == ValueKind::String => py_str(w),
        Some(w) => " ".repeat(usize::try_from(w.clone()).unwrap_or(0)),
    };
    let s = format!("{}\n", py_str(&value));
    let lines = strings::splitlines(&s, false);
    let mut rv = if blank {
        lines.join(&format!("\n{indention}"))
    } else {
        let mut it = lines.into_iter();
        let mut rv = it.next().unwrap_or_default();
        let rest: Vec<String> = it
            .map(|l| {
                if l.is_empty() {
                    l
                } else {
                    format!("{indention}{l}")
                }
            })
            .collect();
        if !rest.is_empty() {
            rv.push('\n');
            rv.push_str(&rest.join("\n"));
        }
        rv
    };
    if first {
        rv = format!("{indention}{rv}");
    }
    Ok(keep_safety(&value, rv))
}

/// `truncate(length=255, killwords=False, end='...', leeway=None)` (Jinja2's default leeway
/// is 5).
fn truncate(value: Value, args: Rest<Value>) -> Result<Value, Error> {
    let slots = super::bind_args("truncate", &args, ["length", "killwords", "end", "leeway"])?;
    let [length, killwords, end, leeway] = slots;
    let int = |v: Option<Value>, default: i64| -> Result<i64, Error> {
        v.filter(|v| !v.is_none())
            .map_or(Ok(default), i64::try_from)
    };
    let length = int(length, 255)?;
    let killwords = killwords.is_some_and(|v| v.is_true());
    let end = end
        .filter(|v| !v.is_none())
        .map_or_else(|| "...".to_string(), |v| py_str(&v));
    let leeway = int(leeway, 5)?;
    let end_len = end.chars().count() as i64;
    if length < end_len || leeway < 0 {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("expected length >= {end_len}, got {length}"),
        ));
    }
    let s = py_str(&value);
    let chars: Vec<char> = s.chars().collect();
    if chars.len() as i64 <= length + leeway {
        return Ok(Value::from(s));
    }
    let cut: String = chars[..(length - end_len) as usize].iter().collect();
    if killwords {
        return Ok(Value::from(format!("{cut}{end}")));
    }
    let head = cut
        .rsplit_once(' ')
        .map_or(cut.as_str(), |(h, _)| h)
        .to_string();
    Ok(Value::from(format!("{head}{end}")))
}

/// Werkzeug's `url_quote` as Jinja2's `urlencode` uses it: UTF-8 bytes percent-encoded
/// except unreserved characters and `safe`; in query strings a space is `+`.
fn url_quote(s: &str, safe: &str, for_qs: bool) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        let c = b as char;
        if b.is_ascii_alphanumeric() || "_.-~".contains(c) || (b.is_ascii() && safe.contains(c)) {
            out.push(c);
        } else if for_qs && b == b' ' {
            out.push('+');
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `urlencode`: a string quoted (`/` kept), a dict or pairs as a query string.
fn urlencode(value: Value) -> Result<Value, Error> {
    let pairs: Vec<(Value, Value)> = match value.kind() {
        ValueKind::String => {
            return Ok(Value::from(url_quote(
                value.as_str().unwrap_or_default(),
                "/",
                false,
            )))
        }
        ValueKind::Map => value
            .try_iter()?
            .map(|k| {
                let v = value.get_item(&k)?;
                Ok((k, v))
            })
            .collect::<Result<_, Error>>()?,
        _ => value
            .try_iter()?
            .map(|pair| Ok((pair.get_item_by_index(0)?, pair.get_item_by_index(1)?)))
            .collect::<Result<_, Error>>()?,
    };
    Ok(Value::from(
        pairs
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    url_quote(&py_str(k), "", true),
                    url_quote(&py_str(v), "", true)
                )
            })
            .collect::<Vec<_>>()
            .join("&"),
    ))
}

/// `xmlattr(autospace=True)`: ` key="value"` for each item whose value is neither None nor
/// undefined, both escaped; a key with a space, `/`, `>` or `=` is refused.
fn xmlattr(value: Value, autospace: Option<bool>) -> Result<Value, Error> {
    let mut parts = Vec::new();
    for key in value.try_iter()? {
        let v = value.get_item(&key)?;
        if v.is_none() || v.is_undefined() {
            continue;
        }
        let k = py_str(&key);
        if k.chars()
            .any(|c| c.is_whitespace() || matches!(c, '/' | '>' | '='))
        {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "Invalid character in attribute name: {}",
                    super::values::py_repr(&key)
                ),
            ));
        }
        parts.push(format!(
            "{}=\"{}\"",
            strings::markup_escape(&k),
            strings::markup_escape(&py_str(&v))
        ));
    }
    let mut out = parts.join(" ");
    if autospace.unwrap_or(true) && !out.is_empty() {
        out.insert(0, ' ');
    }
    Ok(Value::from_safe_string(out))
}

/// transformers' `namespace`: Jinja2's, refusing names that start with `_`.
fn namespace(args: Rest<Value>) -> Result<Value, Error> {
    let (defaults, kwargs): (Option<Value>, Kwargs) = from_args(&args)?;
    let mut attrs: Vec<(Value, Value)> = Vec::new();
    if let Some(d) = defaults {
        for k in d.try_iter()? {
            let v = d.get_item(&k)?;
            attrs.push((k, v));
        }
    }
    for k in kwargs.args() {
        attrs.push((Value::from(k), kwargs.get::<Value>(k)?));
    }
    let mut map = indexmap::IndexMap::new();
    for (k, v) in attrs {
        if k.as_str().is_some_and(|s| s.starts_with('_')) {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "Chat templates cannot store underscore-prefixed attributes on a namespace, but got {}.",
                    super::values::py_repr(&k)
                ),
            ));
        }
        map.insert(k, v);
    }
    minijinja::functions::namespace(Some(Value::from_object(map)))
}

/// transformers' `dict` global: `dict(pairs_or_mapping, **kwargs)` and `dict.fromkeys`.
#[derive(Debug)]
struct TemplateDict;

impl Object for TemplateDict {
    fn call(self: &Arc<Self>, _state: &State<'_, '_>, args: &[Value]) -> Result<Value, Error> {
        let (source, kwargs): (Option<Value>, Kwargs) = from_args(args)?;
        let mut map = indexmap::IndexMap::new();
        if let Some(src) = source {
            if src.kind() == ValueKind::Map {
                for k in src.try_iter()? {
                    let v = src.get_item(&k)?;
                    map.insert(k, v);
                }
            } else {
                for pair in src.try_iter()? {
                    let items: Vec<Value> = pair.try_iter()?.collect();
                    if items.len() != 2 {
                        return Err(Error::new(
                            ErrorKind::InvalidOperation,
                            "dictionary update sequence element has the wrong length; 2 is required",
                        ));
                    }
                    map.insert(items[0].clone(), items[1].clone());
                }
            }
        }
        for k in kwargs.args() {
            map.insert(Value::from(k), kwargs.get::<Value>(k)?);
        }
        Ok(Value::from_object(map))
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        if method != "fromkeys" {
            return Err(Error::from(ErrorKind::UnknownMethod));
        }
        let (keys, value): (Value, Option<Value>) = from_args(args)?;
        let value = value.unwrap_or(Value::from(()));
        let map: indexmap::IndexMap<Value, Value> =
            keys.try_iter()?.map(|k| (k, value.clone())).collect();
        Ok(Value::from_object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_number_parsing() {
        assert_eq!(parse_py_int(" 4_2 ", 10), Some(42));
        assert_eq!(parse_py_int("0x1A", 16), Some(26));
        assert_eq!(parse_py_int("0x1A", 10), None);
        assert_eq!(parse_py_int("4__2", 10), None);
        assert_eq!(parse_py_float(" 42.23 "), Some(42.23));
        assert_eq!(parse_py_float("1_000.5"), Some(1000.5));
        assert!(parse_py_float("-Infinity").is_some_and(|x| x == f64::NEG_INFINITY));
        assert_eq!(parse_py_float("1__0"), None);
        assert_eq!(parse_py_float("x"), None);
    }
}
