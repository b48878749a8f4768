//! Python's methods on template values (`content.strip()`, `m.get('x', 0)`,
//! `tools.items()`): minijinja calls [`unknown_method_callback`] for any method its values do
//! not have. Offsets are characters, whitespace is CPython's, `items()` yields tuples.
//! Mutating methods (`append`, `update`, `pop`) are refused, as transformers' immutable
//! sandbox refuses them.

use std::fmt;
use std::sync::Arc;

use minijinja::value::{from_args, Kwargs, Object, ObjectRepr, Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

use super::strings::{self, Align};
use super::values::{py_str, tuple, DictView, DictViewKind};

/// The public methods of each Python type a template value can be (CPython 3.11's `dir()`):
/// what Jinja2's `getattr` finds on the value before its items, all of them callable.
const STR_METHODS: &[&str] = &[
    "capitalize",
    "casefold",
    "center",
    "count",
    "encode",
    "endswith",
    "expandtabs",
    "find",
    "format",
    "format_map",
    "index",
    "isalnum",
    "isalpha",
    "isascii",
    "isdecimal",
    "isdigit",
    "isidentifier",
    "islower",
    "isnumeric",
    "isprintable",
    "isspace",
    "istitle",
    "isupper",
    "join",
    "ljust",
    "lower",
    "lstrip",
    "maketrans",
    "partition",
    "removeprefix",
    "removesuffix",
    "replace",
    "rfind",
    "rindex",
    "rjust",
    "rpartition",
    "rsplit",
    "rstrip",
    "split",
    "splitlines",
    "startswith",
    "strip",
    "swapcase",
    "title",
    "translate",
    "upper",
    "zfill",
];
const DICT_METHODS: &[&str] = &[
    "clear",
    "copy",
    "fromkeys",
    "get",
    "items",
    "keys",
    "pop",
    "popitem",
    "setdefault",
    "update",
    "values",
];
const LIST_METHODS: &[&str] = &[
    "append", "clear", "copy", "count", "extend", "index", "insert", "pop", "remove", "reverse",
    "sort",
];
const TUPLE_METHODS: &[&str] = &["count", "index"];
const INT_METHODS: &[&str] = &[
    "as_integer_ratio",
    "bit_count",
    "bit_length",
    "conjugate",
    "from_bytes",
    "to_bytes",
];
const FLOAT_METHODS: &[&str] = &[
    "as_integer_ratio",
    "conjugate",
    "fromhex",
    "hex",
    "is_integer",
];

/// Whether Python's type of `value` has the method `name`.
fn has_method(value: &Value, name: &str) -> bool {
    let methods = match value.kind() {
        ValueKind::String => STR_METHODS,
        ValueKind::Map if super::values::is_dict(value) => DICT_METHODS,
        ValueKind::Seq
            if value
                .downcast_object_ref::<super::values::Tuple>()
                .is_some() =>
        {
            TUPLE_METHODS
        }
        ValueKind::Seq => LIST_METHODS,
        ValueKind::Bool => INT_METHODS,
        ValueKind::Number if value.is_integer() => INT_METHODS,
        ValueKind::Number => FLOAT_METHODS,
        _ => &[],
    };
    methods.contains(&name)
}

/// A method taken from a value without calling it (`'a'.upper`, `d|attr('get')`): callable,
/// and calling it calls the method.
#[derive(Debug)]
pub struct BoundMethod {
    receiver: Value,
    name: String,
}

impl Object for BoundMethod {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn call(self: &Arc<Self>, state: &State, args: &[Value]) -> Result<Value, Error> {
        unknown_method_callback(state, &self.receiver, &self.name, args)
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Python also prints the object's address, which no renderer can reproduce.
        write!(f, "<built-in method {}>", self.name)
    }
}

/// The method `name` of Python's type of `value`, bound to it, if the type has one.
pub fn bound_method(value: &Value, name: &str) -> Option<Value> {
    has_method(value, name).then(|| {
        Value::from_object(BoundMethod {
            receiver: value.clone(),
            name: name.to_string(),
        })
    })
}

/// Jinja2's `getattr(value, name)`: the method of Python's type if it has one, else what
/// minijinja finds (an attribute, or the item of that name); an undefined value's
/// attribute fails, as Jinja2's Undefined does.
pub fn py_getattr(value: Value, name: String) -> Result<Value, Error> {
    if value.is_undefined() {
        return Err(Error::new(
            ErrorKind::UndefinedError,
            format!("cannot read the attribute '{name}' of an undefined value"),
        ));
    }
    match bound_method(&value, &name) {
        Some(method) => Ok(method),
        None => value.get_attr(&name),
    }
}

/// minijinja's hook for methods its values lack.
pub fn unknown_method_callback(
    state: &State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    match value.kind() {
        ValueKind::String => string_method(state, value, method, args),
        ValueKind::Map => map_method(value, method, args),
        ValueKind::Seq => seq_method(value, method, args),
        _ => Err(Error::from(ErrorKind::UnknownMethod)),
    }
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

/// A `str.startswith`/`endswith` argument: one string or a tuple of strings.
fn affixes(arg: &Value, method: &str) -> Result<Vec<String>, Error> {
    if let Some(s) = arg.as_str() {
        return Ok(vec![s.to_string()]);
    }
    // Python takes a tuple, not a list.
    if arg.downcast_object_ref::<super::values::Tuple>().is_some() {
        return arg
            .try_iter()?
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    invalid(format!(
                        "tuple for {method} must only contain str, not {}",
                        v.kind()
                    ))
                })
            })
            .collect();
    }
    Err(invalid(format!(
        "{method} first arg must be str or a tuple of str, not {}",
        arg.kind()
    )))
}

/// An optional integer slice bound (None or an int).
type Bound = Option<Value>;

fn bound(v: &Bound) -> Result<Option<i64>, Error> {
    match v {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => i64::try_from(v.clone()).map(Some),
    }
}

fn string_method(
    state: &State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    let s = value.as_str().unwrap_or_default();
    let chars_arg = |args: &[Value]| -> Result<Option<String>, Error> {
        let (chars,): (Option<Value>,) = from_args(args)?;
        Ok(match chars {
            Some(c) if !c.is_none() => Some(
                c.as_str()
                    .ok_or_else(|| invalid("strip arg must be None or str"))?
                    .to_string(),
            ),
            _ => None,
        })
    };
    let flag = |test: fn(&str) -> bool| -> Result<Value, Error> {
        let () = from_args(args)?;
        Ok(Value::from(test(s)))
    };
    Ok(match method {
        "upper" => {
            let () = from_args(args)?;
            Value::from(s.to_uppercase())
        }
        "lower" => {
            let () = from_args(args)?;
            Value::from(s.to_lowercase())
        }
        "casefold" => {
            let () = from_args(args)?;
            Value::from(s.to_lowercase().replace('ß', "ss"))
        }
        "expandtabs" => {
            let (tabsize,): (Option<i64>,) = from_args(args)?;
            Value::from(strings::expandtabs(s, tabsize.unwrap_or(8)))
        }
        "title" => {
            let () = from_args(args)?;
            Value::from(strings::title(s))
        }
        "capitalize" => {
            let () = from_args(args)?;
            Value::from(strings::capitalize(s))
        }
        "swapcase" => {
            let () = from_args(args)?;
            Value::from(strings::swapcase(s))
        }
        "strip" | "lstrip" | "rstrip" => {
            let chars = chars_arg(args)?;
            let left = method != "rstrip";
            let right = method != "lstrip";
            Value::from(strings::strip(s, chars.as_deref(), left, right))
        }
        "split" | "rsplit" => {
            let (sep, maxsplit, kwargs): (Option<Value>, Option<i64>, Kwargs) = from_args(args)?;
            let sep = kwargs.get::<Option<Value>>("sep")?.or(sep);
            let maxsplit = kwargs.get::<Option<i64>>("maxsplit")?.or(maxsplit);
            kwargs.assert_all_used()?;
            let sep = match &sep {
                Some(v) if !v.is_none() => Some(
                    v.as_str()
                        .ok_or_else(|| invalid("must be str or None"))?
                        .to_string(),
                ),
                _ => None,
            };
            let pieces = strings::split(
                s,
                sep.as_deref(),
                maxsplit.unwrap_or(-1),
                method == "rsplit",
            )
            .ok_or_else(|| invalid("empty separator"))?;
            Value::from(pieces)
        }
        "splitlines" => {
            let (keepends,): (Option<bool>,) = from_args(args)?;
            Value::from(strings::splitlines(s, keepends.unwrap_or(false)))
        }
        "find" | "rfind" | "index" | "rindex" => {
            let (sub, start, end): (String, Bound, Bound) = from_args(args)?;
            let right = method.starts_with('r');
            let at = strings::find(s, &sub, bound(&start)?, bound(&end)?, right);
            if at < 0 && method.ends_with("index") {
                return Err(invalid("substring not found"));
            }
            Value::from(at)
        }
        "count" => {
            let (sub, start, end): (String, Bound, Bound) = from_args(args)?;
            Value::from(strings::count(s, &sub, bound(&start)?, bound(&end)?))
        }
        "startswith" | "endswith" => {
            let (arg, start, end): (Value, Bound, Bound) = from_args(args)?;
            let chars: Vec<char> = s.chars().collect();
            let len = chars.len() as i64;
            let clamp = |i: i64| if i < 0 { (len + i).max(0) } else { i.min(len) };
            let lo = bound(&start)?.map_or(0, clamp) as usize;
            let hi = bound(&end)?.map_or(len, clamp) as usize;
            if lo > hi {
                Value::from(false)
            } else {
                let window: String = chars[lo..hi].iter().collect();
                let hit = affixes(&arg, method)?.iter().any(|a| {
                    if method == "startswith" {
                        window.starts_with(a.as_str())
                    } else {
                        window.ends_with(a.as_str())
                    }
                });
                Value::from(hit)
            }
        }
        "replace" => {
            let (old, new, count): (String, String, Option<i64>) = from_args(args)?;
            Value::from(match count {
                Some(n) if n >= 0 => s.replacen(&old, &new, n as usize),
                _ => s.replace(&old, &new),
            })
        }
        "removeprefix" => {
            let (p,): (String,) = from_args(args)?;
            Value::from(s.strip_prefix(p.as_str()).unwrap_or(s))
        }
        "removesuffix" => {
            let (p,): (String,) = from_args(args)?;
            Value::from(s.strip_suffix(p.as_str()).unwrap_or(s))
        }
        "partition" | "rpartition" => {
            let (sep,): (String,) = from_args(args)?;
            if sep.is_empty() {
                return Err(invalid("empty separator"));
            }
            let hit = if method == "partition" {
                s.find(&sep)
            } else {
                s.rfind(&sep)
            };
            let parts = match hit {
                Some(i) => vec![&s[..i], sep.as_str(), &s[i + sep.len()..]],
                None if method == "partition" => vec![s, "", ""],
                None => vec!["", "", s],
            };
            tuple(parts.into_iter().map(Value::from).collect())
        }
        "join" => {
            let (items,): (Value,) = from_args(args)?;
            let mut out = String::new();
            for (i, item) in items.try_iter()?.enumerate() {
                if i > 0 {
                    out.push_str(s);
                }
                out.push_str(item.as_str().ok_or_else(|| {
                    invalid(format!(
                        "sequence item {i}: expected str instance, {} found",
                        item.kind()
                    ))
                })?);
            }
            Value::from(out)
        }
        "center" | "ljust" | "rjust" => {
            let (width, fill): (i64, Option<String>) = from_args(args)?;
            let fill = fill.unwrap_or_else(|| " ".into());
            let mut it = fill.chars();
            let (Some(fill), None) = (it.next(), it.next()) else {
                return Err(invalid(
                    "The fill character must be exactly one character long",
                ));
            };
            let align = match method {
                "center" => Align::Center,
                "ljust" => Align::Left,
                _ => Align::Right,
            };
            Value::from(strings::pad(s, width, fill, align))
        }
        "zfill" => {
            let (width,): (i64,) = from_args(args)?;
            Value::from(strings::zfill(s, width))
        }
        "format" => {
            let (positional, named) = super::split_args(args)?;
            Value::from(super::format::str_format(s, &positional, &named)?)
        }
        "isspace" => flag(|s| strings::all_nonempty(s, strings::is_space))?,
        "isdecimal" => flag(|s| strings::all_nonempty(s, strings::is_decimal))?,
        "isdigit" => flag(|s| strings::all_nonempty(s, strings::is_digit))?,
        "isnumeric" => flag(|s| strings::all_nonempty(s, char::is_numeric))?,
        "isalpha" => flag(|s| strings::all_nonempty(s, char::is_alphabetic))?,
        "isalnum" => flag(|s| strings::all_nonempty(s, char::is_alphanumeric))?,
        "isascii" => flag(|s| s.is_ascii())?,
        "islower" => flag(strings::is_lower)?,
        "isupper" => flag(strings::is_upper)?,
        "istitle" => flag(strings::is_title)?,
        "isidentifier" => flag(|s| {
            let mut c = s.chars();
            c.next().is_some_and(|f| f == '_' || f.is_alphabetic())
                && c.all(|x| x == '_' || x.is_alphanumeric())
        })?,
        "encode" | "decode" | "__class__" => return Err(Error::from(ErrorKind::UnknownMethod)),
        _ => {
            let _ = state;
            return Err(Error::from(ErrorKind::UnknownMethod));
        }
    })
}

fn map_method(value: &Value, method: &str, args: &[Value]) -> Result<Value, Error> {
    let view = |kind| -> Result<Value, Error> {
        let () = from_args(args)?;
        DictView::of(value, kind)
    };
    match method {
        "keys" => view(DictViewKind::Keys),
        "values" => view(DictViewKind::Values),
        "items" => view(DictViewKind::Items),
        "get" => {
            let (key, default): (Value, Option<Value>) = from_args(args)?;
            let hit = value
                .as_object()
                .and_then(|o| o.get_value(&key))
                .filter(|v| !v.is_undefined());
            Ok(hit.unwrap_or_else(|| default.unwrap_or(Value::from(()))))
        }
        "copy" => {
            let () = from_args(args)?;
            Ok(value.clone())
        }
        _ => Err(Error::from(ErrorKind::UnknownMethod)),
    }
}

fn seq_method(value: &Value, method: &str, args: &[Value]) -> Result<Value, Error> {
    match method {
        "count" => {
            let (what,): (Value,) = from_args(args)?;
            Ok(Value::from(
                value.try_iter()?.filter(|x| *x == what).count(),
            ))
        }
        "index" => {
            let (what,): (Value,) = from_args(args)?;
            value
                .try_iter()?
                .position(|x| x == what)
                .map(Value::from)
                .ok_or_else(|| invalid(format!("{} is not in list", py_str(&what))))
        }
        "copy" => {
            let () = from_args(args)?;
            Ok(Value::from(value.try_iter()?.collect::<Vec<_>>()))
        }
        _ => Err(Error::from(ErrorKind::UnknownMethod)),
    }
}
