//! Item validation: every malformed item yields a typed error naming the item and the rule.

use std::collections::HashSet;

use serde_json::Value;
use thiserror::Error;

use crate::geometry::geometry;
use crate::item::{Domain, Item};

/// Number of candidates every item must carry.
pub const CANDIDATE_COUNT: usize = 8;

/// Which rule of the item contract an item broke.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ItemRule {
    /// Not JSON, or not a JSON object; holds the reason.
    #[error("not valid JSON: {0}")]
    BadJson(String),
    /// A field is missing or of the wrong type.
    #[error("missing or mistyped field `{field}`: {detail}")]
    BadField {
        /// The field (`item` when serde's message names none).
        field: String,
        /// What was expected, or serde's message.
        detail: String,
    },
    /// `item_id` is blank.
    #[error("empty item_id")]
    EmptyId,
    /// `domain` is no [`Domain`] name; holds the name given.
    #[error("unknown domain `{0}` (expected `arithmetic`, `lexical`, `symbolic_digits`, `symbolic_letters`, `symbolic_etaoin`, `semantic_binary` or `semantic_named`)")]
    UnknownDomain(String),
    /// `problem` is blank.
    #[error("empty problem")]
    EmptyProblem,
    /// Not [`CANDIDATE_COUNT`] candidates; holds the number found.
    #[error("expected {CANDIDATE_COUNT} candidates, found {0}")]
    CandidateCount(usize),
    /// Candidates of different lengths; holds every candidate's length, comma-separated.
    #[error("candidates have unequal lengths ({0})")]
    UnequalLengths(String),
    /// A candidate listed twice; holds it.
    #[error("duplicate candidate `{0}`")]
    DuplicateCandidate(String),
    /// The target is none of the candidates; holds the target.
    #[error("target `{0}` is not among the candidates")]
    GoldMissing(String),
    /// Non-ASCII id, target or candidate (the problem may be any text); holds which.
    #[error("non-ASCII text in {0}")]
    NonAscii(String),
    /// A candidate has a character outside its domain's [`Domain::alphabet`].
    #[error("candidate `{candidate}` has character {ch:?} outside the {domain} alphabet")]
    OutsideAlphabet {
        /// The offending candidate.
        candidate: String,
        /// Its first character outside the alphabet.
        ch: char,
        /// The item's domain.
        domain: Domain,
    },
    /// The target length is outside the [`ItemPolicy`] range.
    #[error("length {length} out of range {min}..={max}")]
    LengthOutOfRange {
        /// Characters of the target.
        length: usize,
        /// [`ItemPolicy::min_length`].
        min: usize,
        /// [`ItemPolicy::max_length`].
        max: usize,
    },
    /// The declared `length` differs from the target's.
    #[error("declared length {declared} differs from target length {actual}")]
    LengthMismatch {
        /// The item's `length` field.
        declared: usize,
        /// Characters of the target.
        actual: usize,
    },
    /// A declared `k_vector` differs from the one derived from the candidates.
    #[error("declared k_vector {declared:?} differs from the candidates' {actual:?}")]
    KVectorMismatch {
        /// The item's `k_vector` field.
        declared: Vec<u32>,
        /// K(0..=L) derived from the target and candidates.
        actual: Vec<u32>,
    },
    /// The id was already admitted in this run ([`DuplicateIdGuard`]).
    #[error("duplicate item_id (already seen in this run)")]
    DuplicateId,
}

/// A rejected item: its id (when it could be read) and the rule it broke.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("item {}: {rule}", item_id.as_deref().unwrap_or("<unknown id>"))]
pub struct ItemError {
    /// The item's id (a numeric id in decimal); `None` when it could not be read.
    pub item_id: Option<String>,
    /// Which rule of the item contract the item broke.
    pub rule: ItemRule,
}

impl ItemError {
    fn new(item_id: Option<&str>, rule: ItemRule) -> Self {
        ItemError {
            item_id: item_id.map(str::to_owned),
            rule,
        }
    }
}

/// Limits that an item must respect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemPolicy {
    /// Shortest target allowed (characters, inclusive).
    pub min_length: usize,
    /// Longest target allowed (characters, inclusive).
    pub max_length: usize,
}

impl Default for ItemPolicy {
    /// The main panels use L = 3..8.
    fn default() -> Self {
        ItemPolicy {
            min_length: 3,
            max_length: 8,
        }
    }
}

/// Parse one JSON item (a bank line or a message) and validate it.
///
/// Fields `length`, `k_vector` and `geometry` may be omitted: they are derived from the
/// candidates. When present they must agree with the candidates.
pub fn parse_item(text: &str, policy: &ItemPolicy) -> Result<Item, ItemError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| ItemError::new(None, ItemRule::BadJson(e.to_string())))?;
    parse_item_value(value, policy)
}

/// Validate an already-parsed JSON value as an item.
pub fn parse_item_value(mut value: Value, policy: &ItemPolicy) -> Result<Item, ItemError> {
    let Some(obj) = value.as_object_mut() else {
        return Err(ItemError::new(
            None,
            ItemRule::BadJson("an item must be a JSON object".into()),
        ));
    };
    let id = match obj.get("item_id") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let id_ref = id.as_deref();
    let bad = |field: &str, detail: &str| {
        ItemError::new(
            id_ref,
            ItemRule::BadField {
                field: field.into(),
                detail: detail.into(),
            },
        )
    };
    if id.is_none() {
        return Err(bad("item_id", "expected a string"));
    }
    match obj.get("domain") {
        Some(Value::String(d)) => {
            if Domain::parse(d).is_none() {
                return Err(ItemError::new(id_ref, ItemRule::UnknownDomain(d.clone())));
            }
        }
        _ => return Err(bad("domain", "expected a string")),
    }
    for field in ["problem", "target"] {
        if !matches!(obj.get(field), Some(Value::String(_))) {
            return Err(bad(field, "expected a string"));
        }
    }
    match obj.get("candidates") {
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => {}
        _ => return Err(bad("candidates", "expected an array of strings")),
    }
    // Derived fields: fill them in when absent so users may send minimal items.
    let target_len = obj["target"]
        .as_str()
        .map(|t| t.chars().count())
        .unwrap_or(0);
    obj.entry("length")
        .or_insert_with(|| Value::from(target_len));
    let declared_k = obj.remove("k_vector");
    obj.remove("geometry");
    obj.insert("k_vector".into(), Value::Array(vec![]));
    let mut item: Item = serde_json::from_value(value).map_err(|e| {
        let msg = e.to_string();
        let field = msg.split('`').nth(1).unwrap_or("item").to_string();
        ItemError::new(id_ref, ItemRule::BadField { field, detail: msg })
    })?;
    if let Some(k) = declared_k {
        let declared: Vec<u32> = serde_json::from_value(k)
            .map_err(|e| bad("k_vector", &format!("expected an array of counts: {e}")))?;
        item.k_vector = declared;
        validate_item(&mut item, policy, true)?;
    } else {
        validate_item(&mut item, policy, false)?;
    }
    Ok(item)
}

/// Check every rule of the item contract and (re)derive `k_vector` and `geometry`.
///
/// With `check_k_vector`, the item's declared `k_vector` must equal the derived one.
pub fn validate_item(
    item: &mut Item,
    policy: &ItemPolicy,
    check_k_vector: bool,
) -> Result<(), ItemError> {
    let id = Some(item.item_id.as_str());
    let err = |rule| ItemError::new(id, rule);
    if item.item_id.trim().is_empty() {
        return Err(err(ItemRule::EmptyId));
    }
    if item.problem.trim().is_empty() {
        return Err(err(ItemRule::EmptyProblem));
    }
    // The problem is free text (Figure 1's arithmetic surface "39 × 15 = ?" is not ASCII);
    // ids, targets and candidates are ASCII (A.3: "Targets are ASCII lowercase single words").
    for (what, text) in [
        ("item_id", item.item_id.as_str()),
        ("target", item.target.as_str()),
    ] {
        if !text.is_ascii() {
            return Err(err(ItemRule::NonAscii(what.into())));
        }
    }
    if let Some(c) = item.candidates.iter().find(|c| !c.is_ascii()) {
        return Err(err(ItemRule::NonAscii(format!("candidate `{c}`"))));
    }
    if item.candidates.len() != CANDIDATE_COUNT {
        return Err(err(ItemRule::CandidateCount(item.candidates.len())));
    }
    let lengths: Vec<usize> = item.candidates.iter().map(String::len).collect();
    if lengths.iter().any(|&l| l != lengths[0]) {
        let shown: Vec<String> = lengths.iter().map(usize::to_string).collect();
        return Err(err(ItemRule::UnequalLengths(shown.join(", "))));
    }
    let mut seen = HashSet::new();
    for c in &item.candidates {
        if !seen.insert(c.as_str()) {
            return Err(err(ItemRule::DuplicateCandidate(c.clone())));
        }
    }
    if item.gold_index().is_none() {
        return Err(err(ItemRule::GoldMissing(item.target.clone())));
    }
    let alphabet = item.domain.alphabet();
    for c in &item.candidates {
        if let Some(ch) = c.chars().find(|ch| !alphabet.contains(ch)) {
            return Err(err(ItemRule::OutsideAlphabet {
                candidate: c.clone(),
                ch,
                domain: item.domain,
            }));
        }
    }
    let actual = item.target.len();
    if actual < policy.min_length || actual > policy.max_length {
        return Err(err(ItemRule::LengthOutOfRange {
            length: actual,
            min: policy.min_length,
            max: policy.max_length,
        }));
    }
    if item.length != actual {
        return Err(err(ItemRule::LengthMismatch {
            declared: item.length,
            actual,
        }));
    }
    let geo = geometry(&item.target_chars(), &item.candidate_chars());
    if check_k_vector && item.k_vector != geo.k_vector {
        return Err(err(ItemRule::KVectorMismatch {
            declared: item.k_vector.clone(),
            actual: geo.k_vector,
        }));
    }
    item.k_vector = geo.k_vector.clone();
    item.geometry = Some(geo);
    Ok(())
}

/// Rejects items whose id was already accepted in this run.
#[derive(Debug, Default, Clone)]
pub struct DuplicateIdGuard {
    seen: HashSet<String>,
}

impl DuplicateIdGuard {
    /// Record `item`'s id; an id seen before is an error.
    pub fn admit(&mut self, item: &Item) -> Result<(), ItemError> {
        if self.seen.insert(item.item_id.clone()) {
            Ok(())
        } else {
            Err(ItemError::new(Some(&item.item_id), ItemRule::DuplicateId))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({
            "item_id": "a-1",
            "domain": "arithmetic",
            "problem": "What is 39 × 15?",
            "target": "585",
            "candidates": ["585", "589", "385", "389", "485", "489", "685", "689"],
        })
    }

    fn rule_of(v: Value) -> ItemRule {
        parse_item(&v.to_string(), &ItemPolicy::default())
            .unwrap_err()
            .rule
    }

    #[test]
    fn minimal_item_gets_derived_fields() {
        let mut v = base();
        v["problem"] = json!("What is 39 x 15?");
        let item = parse_item(&v.to_string(), &ItemPolicy::default()).unwrap();
        assert_eq!(item.length, 3);
        assert_eq!(item.k_vector, vec![8, 2, 2, 1]);
        assert_eq!(item.geometry.unwrap().first_unique_prefix, 3);
    }

    #[test]
    fn every_rule_is_named() {
        assert!(matches!(
            parse_item("{not json", &ItemPolicy::default())
                .unwrap_err()
                .rule,
            ItemRule::BadJson(_)
        ));
        let fix = |f: &dyn Fn(&mut Value)| {
            let mut v = base();
            v["problem"] = json!("What is 39 x 15?");
            f(&mut v);
            v
        };
        assert!(
            parse_item(&base().to_string(), &ItemPolicy::default()).is_ok(),
            "a non-ASCII problem (Figure 1: 39 × 15 = ?) is accepted"
        );
        assert_eq!(
            rule_of(fix(&|v| v["item_id"] = json!("a-×"))),
            ItemRule::NonAscii("item_id".into())
        );
        assert_eq!(
            rule_of(fix(&|v| v["candidates"]
                .as_array_mut()
                .unwrap()
                .pop()
                .map(drop)
                .unwrap())),
            ItemRule::CandidateCount(7)
        );
        assert_eq!(
            rule_of(fix(&|v| v["candidates"][7] = json!("6890"))),
            ItemRule::UnequalLengths("3, 3, 3, 3, 3, 3, 3, 4".into())
        );
        assert_eq!(
            rule_of(fix(&|v| v["candidates"][7] = json!("685"))),
            ItemRule::DuplicateCandidate("685".into())
        );
        assert_eq!(
            rule_of(fix(&|v| v["target"] = json!("111"))),
            ItemRule::GoldMissing("111".into())
        );
        assert_eq!(
            rule_of(fix(&|v| v["problem"] = json!("  "))),
            ItemRule::EmptyProblem
        );
        assert_eq!(
            rule_of(fix(&|v| v["domain"] = json!("chemistry"))),
            ItemRule::UnknownDomain("chemistry".into())
        );
        assert!(matches!(
            rule_of(fix(&|v| v["domain"] = json!("lexical"))),
            ItemRule::OutsideAlphabet { ch: '5', .. }
        ));
        assert_eq!(
            rule_of(fix(&|v| v["length"] = json!(4))),
            ItemRule::LengthMismatch {
                declared: 4,
                actual: 3
            }
        );
        assert!(matches!(
            rule_of(fix(&|v| v["k_vector"] = json!([8, 1, 1, 1]))),
            ItemRule::KVectorMismatch { .. }
        ));
        assert!(matches!(
            rule_of(fix(&|v| v["candidates"] = json!("585"))),
            ItemRule::BadField { .. }
        ));
        let short = fix(&|v| {
            v["target"] = json!("58");
            v["candidates"] = json!(["58", "59", "38", "39", "48", "49", "68", "69"]);
        });
        assert_eq!(
            rule_of(short),
            ItemRule::LengthOutOfRange {
                length: 2,
                min: 3,
                max: 8
            }
        );
        let err = parse_item(
            &fix(&|v| v["target"] = json!("111")).to_string(),
            &ItemPolicy::default(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "item a-1: target `111` is not among the candidates"
        );
    }

    #[test]
    fn duplicate_ids_are_rejected() {
        let mut v = base();
        v["problem"] = json!("What is 39 x 15?");
        let item = parse_item(&v.to_string(), &ItemPolicy::default()).unwrap();
        let mut guard = DuplicateIdGuard::default();
        guard.admit(&item).unwrap();
        assert_eq!(guard.admit(&item).unwrap_err().rule, ItemRule::DuplicateId);
    }
}
