//! Python's Jinja2 on minijinja: the semantics transformers' chat-template environment has
//! where minijinja's defaults differ.
//!
//! - **Printing** is Python's `str()` ([`values::py_str`]): `None`, `True`, `1e+16`, and
//!   lists, dicts and tuples as their `repr` (`['a', 1]`, `('k', 'v')`).
//! - **Python types minijinja lacks**: tuples (what `dict.items()`, `|items` and `|dictsort`
//!   yield), dict views (`dict_keys([…])`, not indexable) and `range` objects.
//! - **Methods** ([`methods`]): `str`'s with offsets in characters and CPython's whitespace
//!   and case rules; `dict.get/keys/values/items`; `list.count/index`.
//! - **Filters and tests** ([`filters`]): `title`, `capitalize`, `escape` (MarkupSafe's
//!   entities), `trim`, `center`, `wordcount`, `int`/`float` (Python's parsing and
//!   fallbacks), `join`/`string` (Python's `str`), `items`/`dictsort`; the tests
//!   `iterable`, `sequence`, `mapping`, `number`, `integer`, `float`, `boolean`, `lower`,
//!   `upper` as Jinja2 defines them (None is not iterable; strings and dicts are
//!   sequences); and minijinja's own names that Jinja2 lacks (`|split`, `is safe`, …)
//!   removed, so a template using one fails as it fails in transformers.
//! - **`tojson`** ([`json`]): transformers' `json.dumps(…, ensure_ascii=False)`.
//! - **Operators** ([`rewrite`], [`operators`], [`compare`]): what minijinja's grammar
//!   decides differently (`'%s' % x`, `~`, `+`, `/`, `//`, `**`, `*`, comparisons, `in`,
//!   slices, tuple literals, string escapes) is rewritten in the source into calls of
//!   Python's semantics.
//! - **`wordwrap`** ([`wordwrap`]): CPython's `textwrap`.
//!
//! `model/tests/jinja_probes.rs` checks 700 one-line probes byte for byte against Jinja2
//! (`scripts/make-jinja-probes.py`). What is left is refused, never rendered differently:
//! unary `+` (minijinja's grammar has none) and macros called with undeclared arguments.

pub mod compare;
pub mod filters;
pub mod format;
pub mod json;
pub mod methods;
pub mod operators;
pub mod rewrite;
pub mod sequences;
pub mod strings;
pub mod values;
pub mod wordwrap;

use minijinja::value::{Kwargs, Value};
use minijinja::{Environment, Error, ErrorKind};

/// Give `env` Jinja2's semantics (above).
pub fn install(env: &mut Environment<'static>) {
    env.set_unknown_method_callback(methods::unknown_method_callback);
    env.set_formatter(|out, _state, value| {
        // Strings (the common case) are written as they are, without a copy.
        match value.as_str() {
            Some(text) => out.write_str(text),
            None => out.write_str(&values::py_str(value)),
        }
        .map_err(|_| Error::new(ErrorKind::WriteFailure, "cannot write the rendered prompt"))
    });
    filters::install(env);
    operators::install(env);
    compare::install(env);
}

/// A call's positional arguments and its keyword arguments, in call order.
pub type PyArgs = (Vec<Value>, Vec<(String, Value)>);

/// A call's positional arguments and its keyword arguments (minijinja passes them as a last
/// `Kwargs` value), for functions with Python's `*args, **kwargs`.
pub fn split_args(args: &[Value]) -> Result<PyArgs, Error> {
    match args.split_last() {
        Some((last, rest)) if last.is_kwargs() => {
            let kwargs = Kwargs::try_from(last.clone())?;
            let named = kwargs
                .args()
                .map(|k| Ok((k.to_string(), kwargs.get::<Value>(k)?)))
                .collect::<Result<Vec<_>, Error>>()?;
            Ok((rest.to_vec(), named))
        }
        _ => Ok((args.to_vec(), Vec::new())),
    }
}

/// Bind a Python-style call's arguments to the parameters `names` (positionally, then by
/// name), as `def f(x, a=None, b=None)` binds them; `function` names the callee in errors.
pub fn bind_args<const N: usize>(
    function: &str,
    args: &[Value],
    names: [&str; N],
) -> Result<[Option<Value>; N], Error> {
    let (positional, named) = split_args(args)?;
    if positional.len() > N {
        return Err(Error::new(
            ErrorKind::TooManyArguments,
            format!("{function} takes at most {N} arguments"),
        ));
    }
    let mut slots: [Option<Value>; N] = std::array::from_fn(|_| None);
    for (slot, v) in slots.iter_mut().zip(positional) {
        *slot = Some(v);
    }
    for (name, v) in named {
        let i = names.iter().position(|n| *n == name).ok_or_else(|| {
            Error::new(
                ErrorKind::TooManyArguments,
                format!("{function} got an unexpected keyword argument '{name}'"),
            )
        })?;
        slots[i] = Some(v);
    }
    Ok(slots)
}
