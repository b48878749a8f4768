//! Shared helpers of the source tests: test items (the broker is `c2s_sources::testing`).

#![allow(dead_code)]

/// A valid arithmetic item (as JSON text) with the given id.
pub fn item_json(id: &str) -> String {
    serde_json::json!({
        "item_id": id,
        "domain": "arithmetic",
        "problem": "What is 39 x 15?",
        "target": "585",
        "candidates": ["585", "589", "385", "389", "485", "489", "685", "689"],
    })
    .to_string()
}
