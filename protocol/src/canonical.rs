//! Canonical JSON: object keys sorted at every depth, compact separators, no trailing
//! whitespace. Every request state is serialized this way so that equal states give equal text
//! (and equal prompt hashes) on every run and platform.

use serde_json::{Map, Value};

/// Recursively sort object keys.
pub fn canonicalize(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), canonicalize(&map[k]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonicalize).collect()),
        other => other.clone(),
    }
}

/// Canonical JSON text of `value`.
pub fn to_canonical_string(value: &Value) -> String {
    // Serializing a `Value` cannot fail: keys are strings and numbers are finite.
    serde_json::to_string(&canonicalize(value)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_depth() {
        let v = json!({"problem": "p", "candidates": ["b", "a"], "z": {"y": 1, "x": [{"b": 2, "a": 1}]}});
        assert_eq!(
            to_canonical_string(&v),
            r#"{"candidates":["b","a"],"problem":"p","z":{"x":[{"a":1,"b":2}],"y":1}}"#
        );
    }
}
