//! Jinja2's sequence filters (`sort`, `min`, `max`, `sum`, `groupby`, `first`, `last`,
//! `length`, `list`, `attr`) with Python's ordering: strings compared case-insensitively
//! unless asked, equal keys kept in order, and values Python cannot order (a number and a
//! string, None and anything) refused as Python's `TypeError`.

use std::cell::RefCell;
use std::cmp::Ordering;

use minijinja::value::{Kwargs, Value, ValueKind};
use minijinja::{Error, ErrorKind};

use super::compare::py_order;
use super::values::{group_tuple, DictView};

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

/// Python's `<` between two values ([`py_order`]): numbers (booleans are numbers), strings
/// by code point, lists and tuples item by item; anything else is a `TypeError`.
pub fn py_cmp(a: &Value, b: &Value) -> Result<Ordering, Error> {
    Ok(py_order(a, b, "<")?.unwrap_or(Ordering::Equal))
}

/// Jinja2's `ignore_case`: strings lower-cased, everything else as it is.
fn fold(v: Value, case_sensitive: bool) -> Value {
    match (case_sensitive, v.as_str()) {
        (false, Some(s)) => Value::from(s.to_lowercase()),
        _ => v,
    }
}

/// Jinja2's `environment.getitem` along a dotted path (`"a.b.0"`: integer parts index).
fn get_path(item: &Value, path: &str) -> Result<Value, Error> {
    let mut v = item.clone();
    for part in path.split('.') {
        v = match part.parse::<i64>() {
            Ok(i) => v.get_item(&Value::from(i))?,
            Err(_) => v.get_item(&Value::from(part))?,
        };
    }
    Ok(v)
}

/// The key an `attribute=` argument extracts (comma-separated paths give a list of keys).
fn key_of(item: &Value, attribute: &Option<Value>, case_sensitive: bool) -> Result<Value, Error> {
    let Some(attribute) = attribute else {
        return Ok(fold(item.clone(), case_sensitive));
    };
    if let Some(spec) = attribute.as_str() {
        let parts: Vec<&str> = spec.split(',').collect();
        let keys = parts
            .iter()
            .map(|p| get_path(item, p).map(|v| fold(v, case_sensitive)))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(if keys.len() == 1 {
            keys.into_iter().next().unwrap_or_default()
        } else {
            Value::from(keys)
        });
    }
    Ok(fold(item.get_item(attribute)?, case_sensitive))
}

/// A stable sort of `items` by `keys` with Python's ordering (the first `TypeError` wins).
fn sort_by_keys(items: Vec<Value>, keys: Vec<Value>, reverse: bool) -> Result<Vec<Value>, Error> {
    let failure: RefCell<Option<Error>> = RefCell::new(None);
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&i, &j| {
        let (x, y) = if reverse {
            (&keys[j], &keys[i])
        } else {
            (&keys[i], &keys[j])
        };
        py_cmp(x, y).unwrap_or_else(|e| {
            failure.borrow_mut().get_or_insert(e);
            Ordering::Equal
        })
    });
    if let Some(e) = failure.into_inner() {
        return Err(e);
    }
    Ok(order.into_iter().map(|i| items[i].clone()).collect())
}

fn items_of(value: &Value) -> Result<Vec<Value>, Error> {
    if value.is_undefined() {
        return Ok(Vec::new());
    }
    if value.is_none() {
        return Err(invalid("'NoneType' object is not iterable"));
    }
    Ok(value.try_iter()?.collect())
}

/// `sort(reverse=False, case_sensitive=False, attribute=None)`.
pub fn sort(
    value: Value,
    reverse: Option<bool>,
    case_sensitive: Option<bool>,
    attribute: Option<Value>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let reverse = kwargs
        .get::<Option<bool>>("reverse")?
        .or(reverse)
        .unwrap_or(false);
    let case_sensitive = kwargs
        .get::<Option<bool>>("case_sensitive")?
        .or(case_sensitive)
        .unwrap_or(false);
    let attribute = kwargs.get::<Option<Value>>("attribute")?.or(attribute);
    kwargs.assert_all_used()?;
    let items = items_of(&value)?;
    let keys = items
        .iter()
        .map(|i| key_of(i, &attribute, case_sensitive))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Value::from(sort_by_keys(items, keys, reverse)?))
}

fn min_or_max(
    value: Value,
    args: (Option<bool>, Option<Value>),
    kwargs: Kwargs,
    max: bool,
) -> Result<Value, Error> {
    let case_sensitive = kwargs
        .get::<Option<bool>>("case_sensitive")?
        .or(args.0)
        .unwrap_or(false);
    let attribute = kwargs.get::<Option<Value>>("attribute")?.or(args.1);
    kwargs.assert_all_used()?;
    let items = items_of(&value)?;
    let mut best: Option<(Value, Value)> = None;
    for item in items {
        let key = key_of(&item, &attribute, case_sensitive)?;
        let better = match &best {
            None => true,
            Some((_, k)) => {
                let o = py_cmp(&key, k)?;
                if max {
                    o == Ordering::Greater
                } else {
                    o == Ordering::Less
                }
            }
        };
        if better {
            best = Some((item, key));
        }
    }
    Ok(best.map(|(item, _)| item).unwrap_or(Value::UNDEFINED))
}

/// `min(case_sensitive=False, attribute=None)`; an empty sequence gives undefined.
pub fn min(
    value: Value,
    case_sensitive: Option<bool>,
    attribute: Option<Value>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    min_or_max(value, (case_sensitive, attribute), kwargs, false)
}

/// `max(case_sensitive=False, attribute=None)`.
pub fn max(
    value: Value,
    case_sensitive: Option<bool>,
    attribute: Option<Value>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    min_or_max(value, (case_sensitive, attribute), kwargs, true)
}

/// `sum(attribute=None, start=0)`: Python's `sum`, `start + item + …` with Python's `+`.
pub fn sum(
    value: Value,
    attribute: Option<Value>,
    start: Option<Value>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let attribute = kwargs.get::<Option<Value>>("attribute")?.or(attribute);
    let start = kwargs
        .get::<Option<Value>>("start")?
        .or(start)
        .unwrap_or(Value::from(0));
    kwargs.assert_all_used()?;
    let mut total = start;
    for item in items_of(&value)? {
        let v = match &attribute {
            Some(a) => key_of(&item, &Some(a.clone()), true)?,
            None => item,
        };
        if total.kind() == ValueKind::String {
            return Err(invalid("sum() can't sum strings"));
        }
        total = super::operators::py_add(total, v)?;
    }
    Ok(total)
}

/// `groupby(attribute, default=None, case_sensitive=False)`: `(grouper, list)` tuples of
/// the items sorted by the attribute; an item without it is an error unless `default`.
pub fn groupby(
    value: Value,
    attribute: Value,
    default: Option<Value>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let default = kwargs.get::<Option<Value>>("default")?.or(default);
    let case_sensitive = kwargs
        .get::<Option<bool>>("case_sensitive")?
        .unwrap_or(false);
    kwargs.assert_all_used()?;
    let items = items_of(&value)?;
    let mut groupers = Vec::with_capacity(items.len());
    for item in &items {
        let g = match attribute.as_str() {
            Some(path) => get_path(item, path)?,
            None => item.get_item(&attribute)?,
        };
        let g = match (g.is_undefined(), &default) {
            (true, Some(d)) => d.clone(),
            (true, None) => {
                return Err(invalid(format!(
                    "groupby: an item has no attribute {}",
                    super::values::py_repr(&attribute)
                )))
            }
            (false, _) => g,
        };
        groupers.push(g);
    }
    let keys: Vec<Value> = groupers
        .iter()
        .map(|g| fold(g.clone(), case_sensitive))
        .collect();
    let mut order: Vec<usize> = (0..items.len()).collect();
    let sorted_keys = sort_by_keys(
        order.iter().map(|&i| Value::from(i)).collect(),
        keys.clone(),
        false,
    )?;
    order = sorted_keys.iter().filter_map(Value::as_usize).collect();
    let mut groups: Vec<(Value, Value, Vec<Value>)> = Vec::new();
    for i in order {
        match groups.last_mut() {
            Some((key, _, list)) if *key == keys[i] => list.push(items[i].clone()),
            _ => groups.push((keys[i].clone(), groupers[i].clone(), vec![items[i].clone()])),
        }
    }
    Ok(Value::from(
        groups
            .into_iter()
            // The grouper is the first item's own value, not its case-folded key.
            .map(|(_, grouper, list)| group_tuple(grouper, Value::from(list)))
            .collect::<Vec<_>>(),
    ))
}

/// `length`/`count`: `len(value)`; Undefined has length 0, None and numbers none.
pub fn length(value: Value) -> Result<Value, Error> {
    if value.is_undefined() {
        return Ok(Value::from(0));
    }
    if let Some(view) = value.downcast_object_ref::<DictView>() {
        return Ok(Value::from(view.items.len()));
    }
    value
        .len()
        .map(Value::from)
        .ok_or_else(|| invalid(format!("object of type {} has no len()", value.kind())))
}

/// `list`: `list(value)` (a string's characters, a dict's keys).
pub fn list(value: Value) -> Result<Value, Error> {
    Ok(Value::from(items_of(&value)?))
}

/// `first`: the first item (a dict's first key); undefined when empty.
pub fn first(value: Value) -> Result<Value, Error> {
    Ok(items_of(&value)?
        .into_iter()
        .next()
        .unwrap_or(Value::UNDEFINED))
}

/// `last`: the last item (a dict's last key); undefined when empty.
pub fn last(value: Value) -> Result<Value, Error> {
    Ok(items_of(&value)?.pop().unwrap_or(Value::UNDEFINED))
}

/// `attr(name)`: an attribute only, never a dict key (`{'a': 1}|attr('a')` is undefined); a
/// method is bound (`('a'|attr('upper'))()`).
pub fn attr(value: Value, name: String) -> Result<Value, Error> {
    if let Some(method) = super::methods::bound_method(&value, &name) {
        return Ok(method);
    }
    // A dict's keys are not attributes; a namespace's and a macro's values are.
    if super::values::is_dict(&value) {
        return Ok(Value::UNDEFINED);
    }
    Ok(value.get_attr(&name).unwrap_or(Value::UNDEFINED))
}
