//! How Python prints template values (`str()` and `repr()`), and the Python types that
//! minijinja has no value for: tuples, dict views and `range`.
//!
//! Jinja2 prints `{{ x }}` as `str(x)`: `None`, `True`, `1.0`, `1e+16`, and lists and dicts
//! as their `repr` (`['a', 1]`, `{'k': None}`), where minijinja writes JSON-like text
//! (`["a", 1]`). [`py_str`] is that `str`, used by the environment's formatter and by the
//! filters that convert to text (`string`, `join`, `format`, `escape`).

use std::fmt;
use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Value, ValueKind};

/// A Python tuple: what `dict.items()`, `dictsort` and `items` yield. Indexed and iterated
/// like a list; printed `(1, 'a')`, `(1,)`. A named tuple (`groupby`'s `(grouper, list)`)
/// also answers its field names.
#[derive(Debug, Clone)]
pub struct Tuple {
    /// The elements, in order.
    pub items: Vec<Value>,
    /// Field names of a named tuple, one per leading element (`get_value` maps a name to
    /// its position); empty for a plain tuple.
    pub names: &'static [&'static str],
}

impl Object for Tuple {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let index = match key.as_str() {
            Some(name) => self.names.iter().position(|n| *n == name)?,
            None => key.as_usize()?,
        };
        self.items.get(index).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(self.items.len())
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let close = if self.items.len() == 1 { ",)" } else { ")" };
        f.write_str(&repr_items("(", self.items.iter(), close))
    }
}

/// A tuple value.
pub fn tuple(items: Vec<Value>) -> Value {
    Value::from_object(Tuple { items, names: &[] })
}

/// Jinja2's `groupby` item: the named tuple `(grouper, list)`.
pub fn group_tuple(grouper: Value, list: Value) -> Value {
    Value::from_object(Tuple {
        items: vec![grouper, list],
        names: &["grouper", "list"],
    })
}

/// Which view of a dict `keys()`, `values()` or `items()` returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DictViewKind {
    /// `dict.keys()`: the keys, in the dict's order.
    Keys,
    /// `dict.values()`: the values, in the dict's order.
    Values,
    /// `dict.items()`: `(key, value)` tuples, in the dict's order.
    Items,
}

/// `dict.keys()` / `values()` / `items()`: iterable and sized, not indexable (Jinja2's
/// `d.keys()[0]` is undefined), printed `dict_items([('a', 1)])`.
#[derive(Debug, Clone)]
pub struct DictView {
    /// Which view it is (it decides the printed name).
    pub kind: DictViewKind,
    /// The view's elements, copied from the dict when the view was taken.
    pub items: Vec<Value>,
}

impl DictView {
    /// The view `kind` of the mapping `map`.
    pub fn of(map: &Value, kind: DictViewKind) -> Result<Value, minijinja::Error> {
        let mut items = Vec::new();
        for key in map.try_iter()? {
            let value = || map.get_item(&key);
            items.push(match kind {
                DictViewKind::Keys => key.clone(),
                DictViewKind::Values => value()?,
                DictViewKind::Items => tuple(vec![key.clone(), value()?]),
            });
        }
        Ok(Value::from_object(DictView { kind, items }))
    }
}

impl Object for DictView {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Iterable
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.items.clone())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.items.len())
    }

    fn is_true(self: &Arc<Self>) -> bool {
        !self.items.is_empty()
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.kind {
            DictViewKind::Keys => "dict_keys",
            DictViewKind::Values => "dict_values",
            DictViewKind::Items => "dict_items",
        };
        write!(f, "{name}({})", repr_items("[", self.items.iter(), "]"))
    }
}

/// Python's `range(start, stop, step)`: a sized sequence printed `range(0, 3)`.
#[derive(Debug, Clone)]
pub struct PyRange {
    /// The first value.
    pub start: i64,
    /// The bound, excluded: values stop before reaching it.
    pub stop: i64,
    /// The difference between consecutive values; never 0 (`range()` refuses it).
    pub step: i64,
}

impl PyRange {
    /// Whether the range yields no value (`stop` not beyond `start` in `step`'s direction).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many values the range yields: Python's `len(range(...))`.
    pub fn len(&self) -> usize {
        let span = if self.step > 0 {
            self.stop - self.start
        } else {
            self.start - self.stop
        };
        if span <= 0 {
            0
        } else {
            ((span - 1) / self.step.abs() + 1) as usize
        }
    }
}

impl Object for PyRange {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let i = key.as_usize()?;
        (i < self.len()).then(|| Value::from(self.start + i as i64 * self.step))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(self.len())
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.step == 1 {
            write!(f, "range({}, {})", self.start, self.stop)
        } else {
            write!(f, "range({}, {}, {})", self.start, self.stop, self.step)
        }
    }
}

fn repr_items<'a>(open: &str, items: impl Iterator<Item = &'a Value>, close: &str) -> String {
    let mut out = String::from(open);
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&py_repr(item));
    }
    out.push_str(close);
    out
}

/// minijinja's own dict (what literals, `dict()` and the messages are), as opposed to the
/// namespace and macro objects that also present themselves as maps.
pub fn is_dict(value: &Value) -> bool {
    value
        .downcast_object_ref::<indexmap::IndexMap<Value, Value>>()
        .is_some()
}

/// A macro: a map-like object with the `name`, `arguments` and `caller` that minijinja's
/// macros expose.
pub fn is_macro(value: &Value) -> bool {
    value.kind() == ValueKind::Map
        && !is_dict(value)
        && ["name", "arguments", "caller"]
            .iter()
            .all(|k| value.get_attr(k).is_ok_and(|v| !v.is_undefined()))
}

/// `pprint`: `pprint.pformat`, which sorts dict keys (the one-line form; values wider than
/// 80 columns are not wrapped as pformat wraps them).
pub fn py_repr_sorted(value: &Value) -> String {
    repr_with(value, true)
}

/// A Python number: an int (booleans are 0 and 1) or a float.
#[derive(Debug, Clone, Copy)]
pub enum Num {
    /// A Python int (a boolean as 0 or 1).
    Int(i128),
    /// A Python float.
    Float(f64),
}

impl Num {
    /// The number `v` is, if it is one.
    pub fn of(v: &Value) -> Option<Num> {
        match v.kind() {
            ValueKind::Bool => Some(Num::Int(i128::from(v.is_true()))),
            ValueKind::Number if v.is_integer() => i128::try_from(v.clone()).ok().map(Num::Int),
            ValueKind::Number => f64::try_from(v.clone()).ok().map(Num::Float),
            _ => None,
        }
    }

    /// As a float (Python's `float(n)`).
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(x) => x,
        }
    }
}

/// Python's `str(value)`: what `{{ value }}`, `|string` and `|join` write.
pub fn py_str(value: &Value) -> String {
    match value.kind() {
        ValueKind::Undefined => String::new(),
        ValueKind::String => value.as_str().unwrap_or_default().to_string(),
        _ => py_repr(value),
    }
}

/// Python's `repr(value)`.
pub fn py_repr(value: &Value) -> String {
    repr_with(value, false)
}

fn repr_with(value: &Value, sort_keys: bool) -> String {
    let repr = |v: &Value| repr_with(v, sort_keys);
    match value.kind() {
        ValueKind::Undefined => "Undefined".into(),
        ValueKind::None => "None".into(),
        ValueKind::Bool => if value.is_true() { "True" } else { "False" }.into(),
        ValueKind::Number => py_number(value),
        ValueKind::String => py_str_repr(value.as_str().unwrap_or_default()),
        ValueKind::Bytes => format!(
            "b{}",
            py_str_repr(&String::from_utf8_lossy(
                value.as_bytes().unwrap_or_default()
            ))
        ),
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable
            if value.as_object().is_some_and(|o| {
                o.downcast_ref::<Tuple>().is_some()
                    || o.downcast_ref::<DictView>().is_some()
                    || o.downcast_ref::<PyRange>().is_some()
            }) =>
        {
            value.to_string()
        }
        ValueKind::Map if is_macro(value) => {
            format!(
                "<Macro {}>",
                py_str_repr(&py_str(&value.get_attr("name").unwrap_or_default()))
            )
        }
        ValueKind::Map => {
            let mut keys: Vec<Value> = value.try_iter().map(|k| k.collect()).unwrap_or_default();
            if sort_keys {
                keys.sort();
            }
            let mut out = String::from("{");
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&repr(key));
                out.push_str(": ");
                out.push_str(&repr(&value.get_item(key).unwrap_or_default()));
            }
            out.push('}');
            if is_dict(value) {
                out
            } else {
                format!("<Namespace {out}>")
            }
        }
        ValueKind::Seq | ValueKind::Iterable => match value.try_iter() {
            Ok(items) => {
                let items: Vec<String> = items.map(|v| repr(&v)).collect();
                format!("[{}]", items.join(", "))
            }
            Err(_) => value.to_string(),
        },
        _ => value.to_string(),
    }
}

/// An integer's digits, or a float as Python's `repr(float)` writes it.
fn py_number(value: &Value) -> String {
    if value.is_integer() {
        return value.to_string();
    }
    match f64::try_from(value.clone()) {
        Ok(x) => py_float(x),
        Err(_) => value.to_string(),
    }
}

/// Python's `repr(float)`: the shortest digits that round-trip, positional for
/// `1e-4 <= |x| < 1e16` (`1.0`, `0.0001`), else scientific with a signed exponent of at
/// least two digits (`1e-05`, `1e+16`); `inf`, `-inf`, `nan`.
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let abs = x.abs();
    if abs != 0.0 && !(1e-4..1e16).contains(&abs) {
        let s = format!("{x:e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        let s = format!("{x}");
        if s.contains('.') {
            s
        } else {
            format!("{s}.0")
        }
    }
}

/// Python's `repr(str)`: single quotes unless the text has `'` and no `"`; `\\`, the quote,
/// `\t`, `\n`, `\r` escaped, other non-printable characters as `\xNN`, `\uNNNN`, `\UNNNNNNNN`.
pub fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            c if c == quote || c == '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if !is_printable(c) => {
                let n = c as u32;
                if n < 0x100 {
                    out.push_str(&format!("\\x{n:02x}"));
                } else if n < 0x10000 {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `str.isprintable()` of one character: not a control, format, surrogate, private-use or
/// separator character other than the space (the common ones; unassigned code points are
/// taken as printable).
fn is_printable(c: char) -> bool {
    !matches!(c,
        '\0'..='\x1f' | '\x7f'..='\u{a0}' | '\u{ad}'
        | '\u{600}'..='\u{605}' | '\u{61c}' | '\u{6dd}' | '\u{70f}' | '\u{180e}'
        | '\u{1680}' | '\u{2000}'..='\u{200f}' | '\u{2028}'..='\u{202f}'
        | '\u{205f}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{3000}'
        | '\u{e000}'..='\u{f8ff}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}'
        | '\u{fffe}' | '\u{ffff}'
        | '\u{e0001}' | '\u{e0020}'..='\u{e007f}' | '\u{f0000}'..='\u{10ffff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_print_as_python_prints_them() {
        let v = Value::from_serialize(serde_json::json!({"a": [1, "x'y", null, true, 2.5e-7]}));
        assert_eq!(py_str(&v), "{'a': [1, \"x'y\", None, True, 2.5e-07]}");
        assert_eq!(py_str(&tuple(vec![Value::from(1)])), "(1,)");
        assert_eq!(py_str(&Value::from(1e16)), "1e+16");
        assert_eq!(py_str(&Value::from(3.0)), "3.0");
        assert_eq!(
            py_str_repr("a\n\x1b\u{2028}é'\""),
            "'a\\n\\x1b\\u2028é\\'\"'"
        );
        let r = PyRange {
            start: 0,
            stop: 10,
            step: 3,
        };
        assert_eq!(r.len(), 4);
        assert_eq!(py_str(&Value::from_object(r)), "range(0, 10, 3)");
    }
}
