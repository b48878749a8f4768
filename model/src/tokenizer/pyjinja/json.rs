//! transformers' `tojson` filter: `json.dumps(x, ensure_ascii=False, indent=indent,
//! separators=separators, sort_keys=sort_keys)`, written from the template's values as
//! CPython's encoder writes them (integers of any size, floats as `repr`, `NaN`/`Infinity`,
//! tuples as arrays, non-string keys converted as Python converts them).

use minijinja::value::{Rest, Value, ValueKind};
use minijinja::{Error, ErrorKind};

use super::values::{py_float, DictView, PyRange};

/// The widest `tojson(indent=…)` (Python has no limit; templates use 2 or 4).
const MAX_JSON_INDENT: usize = 64;

/// The options of Python's `json.dumps` that chat templates pass.
#[derive(Debug, Clone, Default)]
pub struct PythonJsonOptions {
    /// Each level's indentation (`indent=2` is two spaces); None: one line.
    pub indent: Option<String>,
    /// (item separator, key separator); None: `(", ", ": ")` on one line, `(",", ": ")` with
    /// an indent.
    pub separators: Option<(String, String)>,
    /// Write dict keys in sorted order instead of insertion order.
    pub sort_keys: bool,
    /// Escape every non-ASCII character as `\uXXXX` (transformers passes False).
    pub ensure_ascii: bool,
}

/// The `tojson` filter: transformers' `tojson(x, ensure_ascii=False, indent=None,
/// separators=None, sort_keys=False)`, positionally or by name.
pub fn tojson(value: Value, args: Rest<Value>) -> Result<Value, Error> {
    let slots = super::bind_args(
        "tojson",
        &args,
        ["ensure_ascii", "indent", "separators", "sort_keys"],
    )?;
    let [ensure_ascii, indent, separators, sort_keys] = slots;
    let present = |v: Option<Value>| v.filter(|v| !v.is_none());
    let ensure_ascii = present(ensure_ascii).map(|v| v.is_true());
    let sort_keys = present(sort_keys).map(|v| v.is_true());
    let separators: Option<Vec<String>> = match present(separators) {
        None => None,
        Some(v) => Some(
            v.try_iter()?
                .map(|s| {
                    s.as_str().map(str::to_string).ok_or_else(|| {
                        Error::new(
                            ErrorKind::InvalidOperation,
                            "tojson: separators must be strings",
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    let too_wide = |width: String| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("tojson: an indent of {width} is wider than {MAX_JSON_INDENT}"),
        )
    };
    let indent = match indent {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) => Some(if let Some(s) = v.as_str() {
            if s.len() > MAX_JSON_INDENT {
                return Err(too_wide(format!("{} characters", s.len())));
            }
            s.to_string()
        } else {
            let n = i64::try_from(v.clone()).map_err(|_| {
                Error::new(
                    ErrorKind::InvalidOperation,
                    format!("tojson: indent must be an integer or a string, not {v}"),
                )
            })?;
            if n > MAX_JSON_INDENT as i64 {
                return Err(too_wide(n.to_string()));
            }
            " ".repeat(n.max(0) as usize)
        }),
    };
    let separators = match separators {
        None => None,
        Some(s) if s.len() == 2 => Some((s[0].clone(), s[1].clone())),
        Some(s) => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("tojson: separators must be a pair, not {} items", s.len()),
            ))
        }
    };
    let opts = PythonJsonOptions {
        indent,
        separators,
        sort_keys: sort_keys.unwrap_or(false),
        ensure_ascii: ensure_ascii.unwrap_or(false),
    };
    python_json(&value, &opts).map(Value::from)
}

/// `json.dumps(value, …)` as CPython writes it; a value JSON cannot hold (undefined, a
/// generator, a dict view) is Python's `TypeError`.
pub fn python_json(value: &Value, opts: &PythonJsonOptions) -> Result<String, Error> {
    let (item_sep, key_sep) = opts.separators.clone().unwrap_or_else(|| {
        if opts.indent.is_some() {
            (",".into(), ": ".into())
        } else {
            (", ".into(), ": ".into())
        }
    });
    let mut writer = JsonWriter {
        opts,
        item_sep: &item_sep,
        key_sep: &key_sep,
        out: String::new(),
    };
    writer.value(value, 0)?;
    Ok(writer.out)
}

struct JsonWriter<'a> {
    opts: &'a PythonJsonOptions,
    item_sep: &'a str,
    key_sep: &'a str,
    out: String,
}

fn not_serializable(what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("tojson: Object of type {what} is not JSON serializable"),
    )
}

impl JsonWriter<'_> {
    fn newline(&mut self, depth: usize) {
        if let Some(ind) = &self.opts.indent {
            self.out.push('\n');
            for _ in 0..depth {
                self.out.push_str(ind);
            }
        }
    }

    fn value(&mut self, value: &Value, depth: usize) -> Result<(), Error> {
        if let Some(obj) = value.as_object() {
            if obj.downcast_ref::<DictView>().is_some() {
                return Err(not_serializable("dict view"));
            }
            if obj.downcast_ref::<PyRange>().is_some() {
                return Err(not_serializable("range"));
            }
        }
        match value.kind() {
            ValueKind::Undefined => return Err(not_serializable("Undefined")),
            ValueKind::None => self.out.push_str("null"),
            ValueKind::Bool => self
                .out
                .push_str(if value.is_true() { "true" } else { "false" }),
            ValueKind::Number => self.number(value),
            ValueKind::String => write_json_string(
                value.as_str().unwrap_or_default(),
                self.opts.ensure_ascii,
                &mut self.out,
            ),
            ValueKind::Seq => {
                let items: Vec<Value> = value.try_iter()?.collect();
                if items.is_empty() {
                    self.out.push_str("[]");
                    return Ok(());
                }
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(self.item_sep);
                    }
                    self.newline(depth + 1);
                    self.value(item, depth + 1)?;
                }
                self.newline(depth);
                self.out.push(']');
            }
            ValueKind::Map => {
                let mut entries: Vec<(String, Value)> = Vec::new();
                for key in value.try_iter()? {
                    entries.push((self.key(&key)?, value.get_item(&key)?));
                }
                if entries.is_empty() {
                    self.out.push_str("{}");
                    return Ok(());
                }
                if self.opts.sort_keys {
                    entries.sort_by(|a, b| a.0.cmp(&b.0));
                }
                self.out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(self.item_sep);
                    }
                    self.newline(depth + 1);
                    write_json_string(k, self.opts.ensure_ascii, &mut self.out);
                    self.out.push_str(self.key_sep);
                    self.value(v, depth + 1)?;
                }
                self.newline(depth);
                self.out.push('}');
            }
            ValueKind::Iterable => return Err(not_serializable("generator")),
            other => return Err(not_serializable(&other.to_string())),
        }
        Ok(())
    }

    fn number(&mut self, value: &Value) {
        if value.is_integer() {
            self.out.push_str(&value.to_string());
            return;
        }
        let x = f64::try_from(value.clone()).unwrap_or(f64::NAN);
        self.out.push_str(&if x.is_nan() {
            "NaN".to_string()
        } else if x.is_infinite() {
            if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
        } else {
            py_float(x)
        });
    }

    /// A dict key as `json.dumps` converts it: strings as they are, numbers and booleans
    /// as their JSON text, None as `null`; any other key is a `TypeError`.
    fn key(&self, key: &Value) -> Result<String, Error> {
        match key.kind() {
            ValueKind::String => Ok(key.as_str().unwrap_or_default().to_string()),
            ValueKind::None => Ok("null".into()),
            ValueKind::Bool => Ok(if key.is_true() { "true" } else { "false" }.into()),
            ValueKind::Number => {
                let mut w = JsonWriter {
                    opts: self.opts,
                    item_sep: self.item_sep,
                    key_sep: self.key_sep,
                    out: String::new(),
                };
                w.number(key);
                Ok(w.out)
            }
            other => Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("tojson: keys must be str, int, float, bool or None, not {other}"),
            )),
        }
    }
}

/// A JSON string as CPython's encoder writes it (`"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`
/// escaped, other control characters as `\u00XX`).
fn write_json_string(s: &str, ensure_ascii: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if ensure_ascii && !c.is_ascii() => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_keys_as_python_writes_them() {
        let v = Value::from_serialize(serde_json::json!({"b": [1, 2.5, 1e16, 1e-5], "a": "é"}));
        let opts = PythonJsonOptions::default();
        assert_eq!(
            python_json(&v, &opts).unwrap(),
            "{\"b\": [1, 2.5, 1e+16, 1e-05], \"a\": \"é\"}"
        );
        let big = Value::from(1u128 << 70);
        assert_eq!(python_json(&big, &opts).unwrap(), "1180591620717411303424");
        let ascii = PythonJsonOptions {
            ensure_ascii: true,
            ..Default::default()
        };
        assert_eq!(
            python_json(&Value::from("é😀"), &ascii).unwrap(),
            "\"\\u00e9\\ud83d\\ude00\""
        );
        assert!(python_json(&Value::UNDEFINED, &opts).is_err());
    }
}
