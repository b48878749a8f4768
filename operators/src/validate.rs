//! Stage 2, candidate checks: parse and validate every incoming record as an item (eight
//! distinct equal-length candidates containing the target, domain alphabet, length range…,
//! geometry derived), route valid items to their owner worker by id, and reject duplicates
//! there. Nothing is lost: every failure becomes a [`Reject`] naming source, location, item and
//! rule.

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::{Exchange as ExchangePact, Pipeline};
use timely::dataflow::operators::core::OkErr;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::Concat;
use timely::dataflow::StreamVec;

use c2s_records::{parse_item, Item, ItemPolicy};

use crate::messages::{route, Incoming, RecentIds, Reject};

/// An item with its provenance, routed to its owner.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Located {
    /// Crosses processes as its JSON line: `Item` skips empty optional fields in JSON (the
    /// bank format), which a non-self-describing format such as timely's bincode cannot read
    /// back.
    #[serde(with = "item_as_json")]
    pub item: Item,
    /// The source it was read from (as in [`Incoming::source`]).
    pub source: String,
    /// Where in that source (as in [`Incoming::location`]).
    pub location: String,
}

mod item_as_json {
    use c2s_records::Item;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(item: &Item, s: S) -> Result<S::Ok, S::Error> {
        serde_json::to_string(item)
            .map_err(serde::ser::Error::custom)?
            .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Item, D::Error> {
        let text = String::deserialize(d)?;
        serde_json::from_str(&text).map_err(serde::de::Error::custom)
    }
}

/// Validate `incoming`; returns (valid items on their owner worker, rejects).
/// Duplicate ids are checked against every id seen (`duplicate_window` = 0) or the last
/// `duplicate_window` ids.
pub fn validate<'s>(
    incoming: StreamVec<'s, u64, Incoming>,
    policy: ItemPolicy,
    duplicate_window: usize,
) -> (StreamVec<'s, u64, Located>, StreamVec<'s, u64, Reject>) {
    let parsed = incoming.unary::<CapacityContainerBuilder<Vec<Result<Located, Reject>>>, _, _, _>(
        Pipeline,
        "ParseItems",
        move |_, _| {
            move |input, output| {
                input.for_each(|cap, data| {
                    let mut session = output.session(&cap);
                    for rec in data.drain(..) {
                        let result = match rec.payload {
                            Err(reason) => Err(Reject {
                                source: rec.source,
                                location: rec.location,
                                item_id: None,
                                reason,
                            }),
                            Ok(text) => match parse_item(&text, &policy) {
                                Ok(item) => Ok(Located {
                                    item,
                                    source: rec.source,
                                    location: rec.location,
                                }),
                                Err(e) => Err(Reject {
                                    source: rec.source,
                                    location: rec.location,
                                    item_id: e.item_id.clone(),
                                    reason: e.rule.to_string(),
                                }),
                            },
                        };
                        session.give(result);
                    }
                });
            }
        },
    );
    let (ok, bad) = parsed.ok_err(|r| r);
    let (items, dups) = reject_duplicates(ok, duplicate_window, "item_id");
    (items, bad.concat(dups))
}

/// A validated record with an id and provenance, whose duplicates are rejected.
pub(crate) trait Identified {
    fn id(&self) -> &str;
    /// The reject of a duplicate: its provenance, its id and `reason`.
    fn into_reject(self, reason: String) -> Reject;
}

impl Identified for Located {
    fn id(&self) -> &str {
        &self.item.item_id
    }
    fn into_reject(self, reason: String) -> Reject {
        Reject {
            source: self.source,
            location: self.location,
            item_id: Some(self.item.item_id),
            reason,
        }
    }
}

/// Parse every incoming line of a record kind that is not an item (coverage cases,
/// dialogues): `parse` gives the record or the reject's (id, reason); `locate` attaches the
/// record's provenance. Duplicate ids are then rejected ([`reject_duplicates`]).
pub(crate) fn parse_records<'s, T, L>(
    incoming: StreamVec<'s, u64, Incoming>,
    name: &'static str,
    parse: impl Fn(&str) -> Result<T, (Option<String>, String)> + 'static,
    locate: impl Fn(T, String, String) -> L + 'static,
    duplicate_window: usize,
    id_field: &'static str,
) -> (StreamVec<'s, u64, L>, StreamVec<'s, u64, Reject>)
where
    L: Identified + timely::ExchangeData,
{
    let parsed = incoming.unary::<CapacityContainerBuilder<Vec<Result<L, Reject>>>, _, _, _>(
        Pipeline,
        name,
        move |_, _| {
            move |input, output| {
                input.for_each(|cap, data| {
                    let mut session = output.session(&cap);
                    for rec in data.drain(..) {
                        let result = match &rec.payload {
                            Err(reason) => Err((None, reason.clone())),
                            Ok(text) => parse(text),
                        };
                        session.give(match result {
                            Ok(t) => Ok(locate(t, rec.source, rec.location)),
                            Err((item_id, reason)) => Err(Reject {
                                source: rec.source,
                                location: rec.location,
                                item_id,
                                reason,
                            }),
                        });
                    }
                });
            }
        },
    );
    let (ok, bad) = parsed.ok_err(|r| r);
    let (records, dups) = reject_duplicates(ok, duplicate_window, id_field);
    (records, bad.concat(dups))
}

/// The `key` string of a JSON object line, for the reject of a line that is JSON but not a
/// valid record.
pub(crate) fn json_id(text: &str, key: &str) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()?
        .get(key)?
        .as_str()
        .map(str::to_string)
}

/// Route records to their owner worker by id and reject repeated ids there (every copy of an
/// id arrives at its owner); `field` names the id in the reject's reason.
pub(crate) fn reject_duplicates<'s, D>(
    records: StreamVec<'s, u64, D>,
    duplicate_window: usize,
    field: &'static str,
) -> (StreamVec<'s, u64, D>, StreamVec<'s, u64, Reject>)
where
    D: Identified + timely::ExchangeData,
{
    let owned = records.unary::<CapacityContainerBuilder<Vec<Result<D, Reject>>>, _, _, _>(
        ExchangePact::new(|d: &D| route(d.id())),
        "RejectDuplicateIds",
        move |_, _| {
            let mut ids = RecentIds::new(duplicate_window);
            move |input, output| {
                input.for_each(|cap, data| {
                    let mut session = output.session(&cap);
                    for d in data.drain(..) {
                        if ids.admit(d.id()) {
                            session.give(Ok(d));
                        } else {
                            session.give(Err(d.into_reject(format!(
                                "duplicate {field} (already seen in this run)"
                            ))));
                        }
                    }
                });
            }
        },
    );
    owned.ok_err(|r| r)
}
