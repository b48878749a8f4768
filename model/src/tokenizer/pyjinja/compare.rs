//! Python's comparisons, `in`, slicing and `*`, called where the template wrote them
//! ([`rewrite`](super::rewrite)) and by the tests `==`, `<`, `in`, … (`select('in', …)`).
//!
//! Where minijinja's own operators differ from Python's:
//! - `==` tells a tuple from a list (`(1, 2) == [1, 2]` is False), item by item;
//! - `<`, `<=`, `>`, `>=` order only what Python orders (numbers, strings, lists with lists,
//!   tuples with tuples) and raise Python's `TypeError` for the rest (`1 < 'a'`, None);
//! - `in` raises for an unhashable key of a dict (`['a'] in {…}`) and for a non-string in a
//!   string, and finds items with Python's `==`;
//! - a chain `a < b < c` is Python's `a < b and b < c` (the first false link ends it);
//! - slices follow `slice.indices` (`[3:0:-1]` stops before index 0), keep the type (a
//!   tuple's slice is a tuple, a range's a range) and give Undefined where Jinja2's
//!   `getitem` swallows a `TypeError` (`none[1:]`);
//! - `*` repeats a string, list or tuple zero times for a negative count.

use std::cmp::Ordering;

use minijinja::value::{Rest, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind};

use super::operators::{arith, type_error, type_name};
use super::values::{is_dict, tuple, Num, PyRange, Tuple};

/// minijinja's limit on a repeated string (`ops::mul`), kept for `*`; a repeated list or
/// tuple is held to the same number of bytes.
const MAX_REPEATED_STRING_LEN: usize = 100_000_000;
const MAX_REPEATED_ITEMS: usize = MAX_REPEATED_STRING_LEN / std::mem::size_of::<Value>();

/// Register the functions the rewritten source calls, and the comparison tests.
pub fn install(env: &mut Environment<'static>) {
    env.add_function("__py_compare", py_compare_chain);
    env.add_function("__py_slice", py_slice);
    env.add_function("__py_mul", py_mul);
    // Jinja2's comparison tests are its operators (`select('==', x)`, `selectattr('a', 'in', xs)`).
    for (names, op) in [
        (&["eq", "equalto", "=="][..], CompareOp::Eq),
        (&["ne", "!="][..], CompareOp::Ne),
        (&["lt", "lessthan", "<"][..], CompareOp::Lt),
        (&["le", "<="][..], CompareOp::Le),
        (&["gt", "greaterthan", ">"][..], CompareOp::Gt),
        (&["ge", ">="][..], CompareOp::Ge),
        (&["in"][..], CompareOp::In),
    ] {
        for name in names {
            env.add_test(*name, move |a: Value, b: Value| compare(&a, op, &b));
        }
    }
}

/// A comparison operator as the template wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    /// `==`: Python equality (`1 == 1.0`, `True == 1`).
    Eq,
    /// `!=`: the negation of [`CompareOp::Eq`].
    Ne,
    /// `<`: Python ordering (numbers by value, strings by code point, two lists or two
    /// tuples item by item; other pairs are a `TypeError`).
    Lt,
    /// `<=`, ordered as [`CompareOp::Lt`].
    Le,
    /// `>`, ordered as [`CompareOp::Lt`].
    Gt,
    /// `>=`, ordered as [`CompareOp::Lt`].
    Ge,
    /// `a in b`: a substring of a string, an element of a sequence, a key of a dict.
    In,
    /// `a not in b`: the negation of [`CompareOp::In`].
    NotIn,
}

impl CompareOp {
    /// The operator's text in a template (what the rewritten chain passes).
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Eq => "==",
            CompareOp::Ne => "!=",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
            CompareOp::In => "in",
            CompareOp::NotIn => "not in",
        }
    }

    fn parse(symbol: &str) -> Option<CompareOp> {
        [
            CompareOp::Eq,
            CompareOp::Ne,
            CompareOp::Lt,
            CompareOp::Le,
            CompareOp::Gt,
            CompareOp::Ge,
            CompareOp::In,
            CompareOp::NotIn,
        ]
        .into_iter()
        .find(|op| op.symbol() == symbol)
    }
}

/// `a OP1 b OP2 c …`: the arguments alternate operands and operator symbols.
fn py_compare_chain(args: Rest<Value>) -> Result<bool, Error> {
    let args: &[Value] = &args;
    if args.len() < 3 || args.len().is_multiple_of(2) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "a comparison chain needs operands around each operator",
        ));
    }
    for link in args.windows(3).step_by(2) {
        let op = link[1]
            .as_str()
            .and_then(CompareOp::parse)
            .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "unknown comparison"))?;
        if !compare(&link[0], op, &link[2])? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `a OP b`, as Python evaluates it.
pub fn compare(a: &Value, op: CompareOp, b: &Value) -> Result<bool, Error> {
    let ordered = |test: fn(Ordering) -> bool| -> Result<bool, Error> {
        Ok(py_order(a, b, op.symbol())?.is_some_and(test))
    };
    match op {
        CompareOp::Eq => Ok(py_eq(a, b)),
        CompareOp::Ne => Ok(!py_eq(a, b)),
        CompareOp::Lt => ordered(Ordering::is_lt),
        CompareOp::Le => ordered(Ordering::is_le),
        CompareOp::Gt => ordered(Ordering::is_gt),
        CompareOp::Ge => ordered(Ordering::is_ge),
        CompareOp::In => py_contains(b, a),
        CompareOp::NotIn => py_contains(b, a).map(|found| !found),
    }
}

/// Which Python sequence type a sequence value is: only equal types compare equal or order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SeqType {
    List,
    Tuple,
    Range,
}

fn seq_type(v: &Value) -> Option<SeqType> {
    if v.kind() != ValueKind::Seq {
        return None;
    }
    Some(if v.downcast_object_ref::<Tuple>().is_some() {
        SeqType::Tuple
    } else if v.downcast_object_ref::<PyRange>().is_some() {
        SeqType::Range
    } else {
        SeqType::List
    })
}

fn items(v: &Value) -> Vec<Value> {
    v.try_iter().map(|it| it.collect()).unwrap_or_default()
}

/// Python's `a == b`: numbers by value (True is 1), a tuple never equals a list, sequences
/// and dicts item by item; Jinja2's Undefined equals only Undefined.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    if a.is_undefined() || b.is_undefined() {
        return a.is_undefined() && b.is_undefined();
    }
    if let (Some(x), Some(y)) = (Num::of(a), Num::of(b)) {
        return match (x, y) {
            (Num::Int(x), Num::Int(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        };
    }
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        return x == y;
    }
    match (seq_type(a), seq_type(b)) {
        (Some(x), Some(y)) => {
            let (xs, ys) = (items(a), items(b));
            return x == y && xs.len() == ys.len() && xs.iter().zip(&ys).all(|(x, y)| py_eq(x, y));
        }
        (None, None) => {}
        _ => return false,
    }
    if is_dict(a) && is_dict(b) {
        let keys = items(a);
        return keys.len() == items(b).len()
            && keys.iter().all(|k| match (a.get_item(k), b.get_item(k)) {
                (Ok(x), Ok(y)) => !y.is_undefined() && py_eq(&x, &y),
                _ => false,
            });
    }
    a == b
}

/// Python's ordering of `a` and `b` (None where floats are unordered, NaN), or its
/// `TypeError` for `op` between types it does not order.
pub fn py_order(a: &Value, b: &Value, op: &str) -> Result<Option<Ordering>, Error> {
    if let (Some(x), Some(y)) = (Num::of(a), Num::of(b)) {
        return Ok(match (x, y) {
            (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
            _ => x.as_f64().partial_cmp(&y.as_f64()),
        });
    }
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        // UTF-8 orders as code points do.
        return Ok(Some(x.cmp(y)));
    }
    match (seq_type(a), seq_type(b)) {
        (Some(x), Some(y)) if x == y && x != SeqType::Range => {
            let (xs, ys) = (items(a), items(b));
            // Python's rule: the first pair of unequal items decides, else the lengths.
            match xs.iter().zip(&ys).find(|(x, y)| !py_eq(x, y)) {
                Some((x, y)) => py_order(x, y, op),
                None => Ok(Some(xs.len().cmp(&ys.len()))),
            }
        }
        _ => Err(type_error(format!(
            "'{op}' not supported between instances of '{}' and '{}'",
            type_name(a),
            type_name(b)
        ))),
    }
}

/// Whether Python could hash `v` (a dict key): not a list or dict, nor a tuple holding one.
fn hashable(v: &Value) -> bool {
    match seq_type(v) {
        Some(SeqType::List) => false,
        Some(SeqType::Tuple) => items(v).iter().all(hashable),
        _ => v.kind() != ValueKind::Map,
    }
}

/// Python's `needle in haystack`.
pub fn py_contains(haystack: &Value, needle: &Value) -> Result<bool, Error> {
    match haystack.kind() {
        // Jinja2's Undefined iterates as empty.
        ValueKind::Undefined => Ok(false),
        ValueKind::String => match needle.as_str() {
            Some(sub) => Ok(haystack.as_str().unwrap_or_default().contains(sub)),
            None => Err(type_error(format!(
                "'in <string>' requires string as left operand, not {}",
                type_name(needle)
            ))),
        },
        ValueKind::None | ValueKind::Bool | ValueKind::Number => Err(type_error(format!(
            "argument of type '{}' is not iterable",
            type_name(haystack)
        ))),
        ValueKind::Map if !hashable(needle) => Err(type_error(format!(
            "unhashable type: '{}'",
            type_name(needle)
        ))),
        _ => Ok(haystack.try_iter()?.any(|item| py_eq(needle, &item))),
    }
}

/// A slice bound: None, or an integer (True is 1); anything else is Python's `TypeError`.
fn bound(v: &Value) -> Result<Option<i64>, ()> {
    match v.kind() {
        ValueKind::None => Ok(None),
        ValueKind::Bool => Ok(Some(i64::from(v.is_true()))),
        ValueKind::Number if v.is_integer() => Ok(Some(
            i128::try_from(v.clone())
                .map_err(|_| ())?
                .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
        )),
        _ => Err(()),
    }
}

/// `slice(start, stop, step).indices(len)`: the first index and the index the slice stops
/// before, clamped as Python clamps them.
fn slice_indices(len: usize, start: Option<i64>, stop: Option<i64>, step: i64) -> (i64, i64) {
    let len = len as i64;
    let (low, high) = if step > 0 { (0, len) } else { (-1, len - 1) };
    let clamp = |i: i64| {
        if i < 0 {
            (i + len).max(low)
        } else {
            i.min(high)
        }
    };
    let (first, end) = if step > 0 { (0, len) } else { (len - 1, -1) };
    (start.map_or(first, clamp), stop.map_or(end, clamp))
}

/// The indices a slice takes, in order.
fn slice_positions(len: usize, start: Option<i64>, stop: Option<i64>, step: i64) -> Vec<usize> {
    let (mut i, end) = slice_indices(len, start, stop, step);
    let mut out = Vec::new();
    while (step > 0 && i < end) || (step < 0 && i > end) {
        out.push(i as usize);
        i += step;
    }
    out
}

/// `seq[start:stop:step]` (an absent part is None).
fn py_slice(seq: Value, start: Value, stop: Value, step: Value) -> Result<Value, Error> {
    if seq.is_undefined() {
        return Err(Error::new(
            ErrorKind::UndefinedError,
            "cannot slice an undefined value",
        ));
    }
    let (Ok(start), Ok(stop), Ok(step)) = (bound(&start), bound(&stop), bound(&step)) else {
        // Jinja2's getitem turns the TypeError into Undefined.
        return Ok(Value::UNDEFINED);
    };
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(type_error("slice step cannot be zero"));
    }
    if let Some(text) = seq.as_str() {
        let chars: Vec<char> = text.chars().collect();
        let sliced: String = slice_positions(chars.len(), start, stop, step)
            .into_iter()
            .map(|i| chars[i])
            .collect();
        return Ok(if seq.is_safe() {
            Value::from_safe_string(sliced)
        } else {
            Value::from(sliced)
        });
    }
    if let Some(range) = seq.downcast_object_ref::<PyRange>() {
        // Python's range slice is a range: its bounds are the range's values at the indices.
        let (first, end) = slice_indices(range.len(), start, stop, step);
        return Ok(Value::from_object(PyRange {
            start: range.start + first * range.step,
            stop: range.start + end * range.step,
            step: range.step * step,
        }));
    }
    let Some(kind) = seq_type(&seq) else {
        return Ok(Value::UNDEFINED);
    };
    let all = items(&seq);
    let sliced: Vec<Value> = slice_positions(all.len(), start, stop, step)
        .into_iter()
        .map(|i| all[i].clone())
        .collect();
    Ok(match kind {
        SeqType::Tuple => tuple(sliced),
        _ => Value::from(sliced),
    })
}

/// `a * b`: numbers multiply; a string, list or tuple repeats (a count below one gives an
/// empty one).
fn py_mul(a: Value, b: Value) -> Result<Value, Error> {
    if let (Some(x), Some(y)) = (Num::of(&a), Num::of(&b)) {
        return arith(x, y, i128::checked_mul, |x, y| x * y);
    }
    let (seq, count) = if Num::of(&b).is_some() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    let count = match Num::of(count) {
        Some(Num::Int(n)) => usize::try_from(n.max(0)).unwrap_or(usize::MAX),
        Some(Num::Float(_)) if seq.as_str().is_some() || seq_type(seq).is_some() => {
            return Err(type_error(
                "can't multiply sequence by non-int of type 'float'",
            ))
        }
        _ => {
            return Err(type_error(format!(
                "unsupported operand type(s) for *: '{}' and '{}'",
                type_name(&a),
                type_name(&b)
            )))
        }
    };
    if let Some(text) = seq.as_str() {
        if !matches!(text.len().checked_mul(count), Some(n) if n <= MAX_REPEATED_STRING_LEN) {
            return Err(type_error("repeated string is too large"));
        }
        let repeated = text.repeat(count);
        return Ok(if seq.is_safe() {
            Value::from_safe_string(repeated)
        } else {
            Value::from(repeated)
        });
    }
    match seq_type(seq) {
        Some(kind @ (SeqType::List | SeqType::Tuple)) => {
            let all = items(seq);
            if !matches!(all.len().checked_mul(count), Some(n) if n <= MAX_REPEATED_ITEMS) {
                return Err(type_error("repeated sequence is too large"));
            }
            let repeated: Vec<Value> = (0..count).flat_map(|_| all.iter().cloned()).collect();
            Ok(match kind {
                SeqType::Tuple => tuple(repeated),
                _ => Value::from(repeated),
            })
        }
        _ => Err(type_error(format!(
            "unsupported operand type(s) for *: '{}' and '{}'",
            type_name(&a),
            type_name(&b)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_positions_follow_slice_indices() {
        assert_eq!(slice_positions(4, Some(3), Some(0), -1), [3, 2, 1]);
        assert_eq!(slice_positions(3, Some(-2), None, 1), [1, 2]);
        assert_eq!(slice_positions(3, None, Some(-1), 1), [0, 1]);
        assert_eq!(slice_positions(3, None, None, -1), [2, 1, 0]);
        assert_eq!(slice_positions(3, Some(10), None, -2), [2, 0]);
        assert_eq!(slice_positions(3, Some(-10), Some(10), 1), [0, 1, 2]);
        assert!(slice_positions(0, None, None, -1).is_empty());
    }

    #[test]
    fn tuples_and_lists_differ_and_orders_refuse_mixed_types() {
        let list = Value::from(vec![1, 2]);
        let tup = tuple(vec![Value::from(1), Value::from(2)]);
        assert!(!py_eq(&tup, &list));
        assert!(py_eq(&Value::from(true), &Value::from(1.0)));
        assert!(py_order(&Value::from(1), &Value::from("a"), "<").is_err());
        assert!(py_order(&list, &tup, "<").is_err());
        assert!(py_contains(&Value::from_serialize(serde_json::json!({"a": 1})), &list).is_err());
        assert!(py_contains(&Value::from(vec![list.clone()]), &list).unwrap());
        assert!(!py_contains(&Value::from(vec![list]), &tup).unwrap());
    }
}
