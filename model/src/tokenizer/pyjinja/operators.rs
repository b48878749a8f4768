//! Python's binary operators, called where the template wrote `%`, `~`, `+`, `/`, `//` and
//! `**` ([`rewrite`](super::rewrite)), and what a `for` loop iterates (`__py_iter`): integers stay integers (`7 // -2` is -4, `-7 % 3` is
//! 2, `2 ** -1` is 0.5), division by zero fails, `'%s' % x` is printf formatting, `~` joins
//! `str()`s, a tuple adds only to a tuple, and a safe string (MarkupSafe's `Markup`) escapes
//! the plain text added to it. Comparisons, `in`, slices and `*` are in
//! [`compare`](super::compare).

use minijinja::value::{Rest, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind};

use super::format::percent_format;
use super::strings::markup_escape;
use super::values::{py_str, tuple, Num, Tuple};

/// Register the operator functions the rewritten source calls.
pub fn install(env: &mut Environment<'static>) {
    env.add_function("__py_mod", py_mod);
    env.add_function("__py_concat", |a: Value, b: Value| {
        Value::from(format!("{}{}", py_str(&a), py_str(&b)))
    });
    env.add_function("__py_add", py_add);
    env.add_function("__py_div", py_div);
    env.add_function("__py_floordiv", py_floordiv);
    env.add_function("__py_pow", py_pow);
    env.add_function("__py_tuple", |items: Rest<Value>| tuple(items.to_vec()));
    env.add_function("__py_iter", py_iter);
    env.add_function("__py_getattr", super::methods::py_getattr);
    // What the rewriter wraps around a value minijinja must not fold while compiling.
    env.add_function("__py_value", |v: Value| v);
    env.add_function(
        "__py_refuse_underscore_attr",
        |name: String, _value: Value| {
            Err::<Value, _>(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "Chat templates cannot store underscore-prefixed attributes on a namespace, \
                 but got '{name}'. Please rename the attribute."
                ),
            ))
        },
    );
}

/// What `for x in v` iterates (the rewritten loops call it): Python raises for None and for
/// numbers; a string is its characters, as a list, so the loop knows its length (minijinja's
/// own string iteration has none); everything else is iterated as it is.
fn py_iter(v: Value) -> Result<Value, Error> {
    match v.kind() {
        ValueKind::None | ValueKind::Bool | ValueKind::Number => Err(type_error(format!(
            "'{}' object is not iterable",
            type_name(&v)
        ))),
        ValueKind::String if !v.is_safe() => Ok(Value::from(
            v.as_str()
                .unwrap_or_default()
                .chars()
                .map(|c| Value::from(c.to_string()))
                .collect::<Vec<_>>(),
        )),
        _ => Ok(v),
    }
}

pub(super) fn type_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

fn unsupported(op: &str, a: &Value, b: &Value) -> Error {
    type_error(format!(
        "unsupported operand type(s) for {op}: {} and {}",
        type_name(a),
        type_name(b)
    ))
}

pub(super) fn type_name(v: &Value) -> &'static str {
    match v.kind() {
        ValueKind::Undefined => "Undefined",
        ValueKind::None => "NoneType",
        ValueKind::Bool => "bool",
        ValueKind::Number if v.is_integer() => "int",
        ValueKind::Number => "float",
        ValueKind::String => "str",
        ValueKind::Seq if is_tuple(v) => "tuple",
        ValueKind::Seq => "list",
        ValueKind::Map => "dict",
        _ => "object",
    }
}

fn is_tuple(v: &Value) -> bool {
    v.downcast_object_ref::<Tuple>().is_some()
}

fn overflow() -> Error {
    type_error("integer overflow")
}

/// Arithmetic of two numbers: `int_op` when both are integers (None: overflow), else
/// `float_op`.
pub(super) fn arith(
    a: Num,
    b: Num,
    int_op: impl Fn(i128, i128) -> Option<i128>,
    float_op: impl Fn(f64, f64) -> f64,
) -> Result<Value, Error> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => int_op(x, y).map(Value::from).ok_or_else(overflow),
        _ => Ok(Value::from(float_op(a.as_f64(), b.as_f64()))),
    }
}

fn concat_seq(a: &Value, b: &Value) -> Result<Vec<Value>, Error> {
    Ok(a.try_iter()?.chain(b.try_iter()?).collect())
}

/// `a + b`.
pub fn py_add(a: Value, b: Value) -> Result<Value, Error> {
    if let (Some(x), Some(y)) = (Num::of(&a), Num::of(&b)) {
        return arith(x, y, i128::checked_add, |x, y| x + y);
    }
    match (a.kind(), b.kind()) {
        (ValueKind::String, ValueKind::String) => {
            let (x, y) = (
                a.as_str().unwrap_or_default(),
                b.as_str().unwrap_or_default(),
            );
            // Markup + str escapes the str; str + Markup escapes the left str.
            Ok(match (a.is_safe(), b.is_safe()) {
                (true, false) => Value::from_safe_string(format!("{x}{}", markup_escape(y))),
                (false, true) => Value::from_safe_string(format!("{}{y}", markup_escape(x))),
                (true, true) => Value::from_safe_string(format!("{x}{y}")),
                (false, false) => Value::from(format!("{x}{y}")),
            })
        }
        (ValueKind::Seq, ValueKind::Seq) if is_tuple(&a) == is_tuple(&b) => {
            let items = concat_seq(&a, &b)?;
            Ok(if is_tuple(&a) {
                tuple(items)
            } else {
                Value::from(items)
            })
        }
        (ValueKind::Seq, ValueKind::Seq) => Err(type_error(format!(
            "can only concatenate {} (not \"{}\") to {}",
            type_name(&a),
            type_name(&b),
            type_name(&a)
        ))),
        _ => Err(unsupported("+", &a, &b)),
    }
}

fn numbers(op: &str, a: &Value, b: &Value) -> Result<(Num, Num), Error> {
    match (Num::of(a), Num::of(b)) {
        (Some(x), Some(y)) => Ok((x, y)),
        _ => Err(unsupported(op, a, b)),
    }
}

fn is_zero(n: Num) -> bool {
    n.as_f64() == 0.0
}

/// `a / b`: always a float.
fn py_div(a: Value, b: Value) -> Result<Value, Error> {
    let (x, y) = numbers("/", &a, &b)?;
    if is_zero(y) {
        return Err(type_error("division by zero"));
    }
    Ok(Value::from(x.as_f64() / y.as_f64()))
}

/// `a // b`: floored.
fn py_floordiv(a: Value, b: Value) -> Result<Value, Error> {
    let (x, y) = numbers("//", &a, &b)?;
    if is_zero(y) {
        return Err(type_error("integer division or modulo by zero"));
    }
    arith(
        x,
        y,
        |x, y| Some(x.div_euclid(y) - i128::from(y < 0 && x.rem_euclid(y) != 0)),
        |x, y| (x / y).floor(),
    )
}

/// `a % b`: printf formatting when `a` is a string, else the modulo with the divisor's sign.
fn py_mod(a: Value, b: Value) -> Result<Value, Error> {
    if a.kind() == ValueKind::String {
        let template = a.as_str().unwrap_or_default();
        // A safe format string escapes the text it is given (Markup.__mod__).
        let b = if a.is_safe() { escape_args(&b)? } else { b };
        let text = percent_format(template, &b)?;
        return Ok(if a.is_safe() {
            Value::from_safe_string(text)
        } else {
            Value::from(text)
        });
    }
    let (x, y) = numbers("%", &a, &b)?;
    if is_zero(y) {
        return Err(type_error("integer division or modulo by zero"));
    }
    arith(
        x,
        y,
        |x, y| {
            let r = x.rem_euclid(y);
            Some(if y < 0 && r != 0 { r + y } else { r })
        },
        |x, y| {
            let r = x % y;
            if r != 0.0 && (r < 0.0) != (y < 0.0) {
                r + y
            } else {
                r
            }
        },
    )
}

fn escape_args(b: &Value) -> Result<Value, Error> {
    let escape = |v: Value| {
        if v.kind() == ValueKind::String && !v.is_safe() {
            Value::from_safe_string(markup_escape(v.as_str().unwrap_or_default()))
        } else {
            v
        }
    };
    if is_tuple(b) {
        return Ok(tuple(b.try_iter()?.map(escape).collect()));
    }
    Ok(escape(b.clone()))
}

/// `a ** b`: an integer for a non-negative integer exponent, else a float.
fn py_pow(a: Value, b: Value) -> Result<Value, Error> {
    let (x, y) = numbers("**", &a, &b)?;
    match (x, y) {
        (Num::Int(base), Num::Int(exp)) if exp >= 0 => {
            let exp = u32::try_from(exp).map_err(|_| overflow())?;
            base.checked_pow(exp).map(Value::from).ok_or_else(overflow)
        }
        _ => {
            if is_zero(x) && y.as_f64() < 0.0 {
                return Err(type_error("0.0 cannot be raised to a negative power"));
            }
            Ok(Value::from(x.as_f64().powf(y.as_f64())))
        }
    }
}
