//! Option binding: response codes bound to criteria once per item ("parent"), a seeded
//! deterministic display order, and support filtering that keeps identities and relative
//! order (paper §3.3, E.1, E.2, E.5).

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

use c2s_records::{Domain, Item, OptionOrder, RequestOption, END};

/// The eleven punctuation symbols of the stopping track (paper A.4, E.1): period, comma,
/// exclamation mark, question mark, semicolon, colon, apostrophe, quotation mark, hyphen, left
/// and right parenthesis.
pub const STOP_PUNCTUATION: [char; 11] = ['.', ',', '!', '?', ';', ':', '\'', '"', '-', '(', ')'];

/// The 51 values of the stopping track before shuffling: a–z, 0–9, the punctuation, space,
/// newline, tab and END.
pub fn stop_alphabet() -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(51);
    out.extend(Domain::Lexical.alphabet().iter().map(|c| c.to_string()));
    out.extend(Domain::Arithmetic.alphabet().iter().map(|c| c.to_string()));
    out.extend(STOP_PUNCTUATION.iter().map(|c| c.to_string()));
    out.extend([" ", "\n", "\t"].map(str::to_string));
    out.push(END.to_string());
    out
}

/// Response code of the option at binding index `i`: `A`…`Z`, then `AA`, `AB`, ….
pub fn code_for(i: usize) -> String {
    if i < 26 {
        ((b'A' + i as u8) as char).to_string()
    } else {
        let j = i - 26;
        format!(
            "{}{}",
            (b'A' + (j / 26) as u8) as char,
            (b'A' + (j % 26) as u8) as char
        )
    }
}

/// A deterministic RNG from a seed and labels (SHA-256 of both).
pub fn labelled_rng(seed: u64, labels: &[&str]) -> ChaCha8Rng {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    for l in labels {
        h.update((l.len() as u64).to_le_bytes());
        h.update(l.as_bytes());
    }
    let digest = h.finalize();
    let mut bytes = [0u8; 32];
    bytes.copy_from_slice(&digest);
    ChaCha8Rng::from_seed(bytes)
}

/// Codes bound to values, in display order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionBinding {
    /// Display order of the bound options.
    pub options: Vec<RequestOption>,
}

impl OptionBinding {
    /// Bind codes to `values` in the given order: the i-th value gets `code_for(i)`.
    pub fn in_order(values: &[String]) -> OptionBinding {
        OptionBinding {
            options: values
                .iter()
                .enumerate()
                .map(|(i, v)| RequestOption {
                    code: code_for(i),
                    value: v.clone(),
                })
                .collect(),
        }
    }

    /// Reorder the display with a seeded permutation (O1, O2, …), keeping the bindings.
    pub fn permuted(mut self, order: OptionOrder, seed: u64, labels: &[&str]) -> OptionBinding {
        if let OptionOrder::Permuted(k) = order {
            let k = k.to_string();
            let mut all: Vec<&str> = labels.to_vec();
            all.push("order");
            all.push(&k);
            let mut rng = labelled_rng(seed, &all);
            self.options.shuffle(&mut rng);
        }
        self
    }

    /// The bound options whose values are in `support`, in display order.
    pub fn filter(&self, support: &[String]) -> Vec<RequestOption> {
        self.options
            .iter()
            .filter(|o| support.contains(&o.value))
            .cloned()
            .collect()
    }

    /// Values in display order.
    pub fn values(&self) -> Vec<String> {
        self.options.iter().map(|o| o.value.clone()).collect()
    }
}

/// The local alphabet of the content track for `item`, shuffled with a seed bound to the item
/// (codes bind once per parent), then reordered for `order`.
pub fn local_binding(item: &Item, seed: u64, order: OptionOrder) -> OptionBinding {
    local_binding_over(item, item.domain.alphabet(), seed, order)
}

/// [`local_binding`] over another `alphabet` (an arm's widened Full support, D.7's a–z).
pub fn local_binding_over(
    item: &Item,
    alphabet: &[char],
    seed: u64,
    order: OptionOrder,
) -> OptionBinding {
    let mut values: Vec<String> = alphabet.iter().map(|c| c.to_string()).collect();
    let unit = binding_unit(item);
    let mut rng = labelled_rng(seed, &["local", unit]);
    values.shuffle(&mut rng);
    OptionBinding::in_order(&values).permuted(order, seed, &["local", unit])
}

/// The 51-value stopping alphabet for `item`, shuffled per item.
pub fn stop_binding(item: &Item, seed: u64, order: OptionOrder) -> OptionBinding {
    let mut values = stop_alphabet();
    let unit = binding_unit(item);
    let mut rng = labelled_rng(seed, &["stop", unit]);
    values.shuffle(&mut rng);
    OptionBinding::in_order(&values).permuted(order, seed, &["stop", unit])
}

/// The eight candidates bound to A–H in the item's frozen display order.
pub fn candidate_binding(item: &Item, seed: u64, order: OptionOrder) -> OptionBinding {
    OptionBinding::in_order(&item.candidates).permuted(order, seed, &["native", binding_unit(item)])
}

/// What option orders are seeded by: the item, or for a symbolic item its shared base, so
/// that the presentations of one base have matched orders ("COPY/REVERSE and digit/letter
/// encodings create four presentations per base, with shared geometry and matched order",
/// A.5). Shuffling the canonical digits and the canonical letters a–j with the same stream
/// applies one permutation to both, so the letter order is the image of the digit order.
pub fn binding_unit(item: &Item) -> &str {
    match (&item.symbolic, &item.semantic) {
        (Some(m), _) => &m.base_id,
        // The semantic bridge's two encodings of one fact record share their orders.
        (None, Some(m)) => &m.fact_id,
        (None, None) => &item.item_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item() -> Item {
        c2s_records::parse_item(
            r#"{"item_id":"x","domain":"arithmetic","problem":"What is 39 * 15?","target":"585",
               "candidates":["585","589","385","389","485","489","685","689"]}"#,
            &Default::default(),
        )
        .unwrap()
    }

    #[test]
    fn codes_continue_past_z() {
        assert_eq!(code_for(0), "A");
        assert_eq!(code_for(25), "Z");
        assert_eq!(code_for(26), "AA");
        assert_eq!(code_for(50), "AY");
    }

    #[test]
    fn stop_alphabet_has_51_distinct_values() {
        let a = stop_alphabet();
        assert_eq!(a.len(), 51);
        let set: std::collections::BTreeSet<_> = a.iter().collect();
        assert_eq!(set.len(), 51);
        assert_eq!(a.last().map(String::as_str), Some("END"));
    }

    #[test]
    fn binding_is_seeded_per_item_and_filter_keeps_identity_and_order() {
        let it = item();
        let b1 = local_binding(&it, 1, OptionOrder::Reference);
        assert_eq!(b1, local_binding(&it, 1, OptionOrder::Reference));
        assert_ne!(b1, local_binding(&it, 2, OptionOrder::Reference));
        let mut sorted = b1.values();
        sorted.sort();
        assert_eq!(
            sorted,
            Domain::Arithmetic
                .alphabet()
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
        );
        // Codes are A..J in reference display order.
        let codes: Vec<_> = b1.options.iter().map(|o| o.code.clone()).collect();
        assert_eq!(codes, (0..10).map(code_for).collect::<Vec<_>>());
        let support: Vec<String> = vec!["9".into(), "5".into()];
        let f = b1.filter(&support);
        assert_eq!(f.len(), 2);
        for o in &f {
            assert!(b1.options.contains(o), "identity kept");
        }
        let pos = |v: &str| b1.options.iter().position(|o| o.value == v).unwrap();
        assert!(pos(&f[0].value) < pos(&f[1].value), "relative order kept");
    }

    #[test]
    fn permuted_orders_keep_bindings() {
        let it = item();
        let o0 = candidate_binding(&it, 3, OptionOrder::Reference);
        let o1 = candidate_binding(&it, 3, OptionOrder::Permuted(1));
        assert_eq!(o0.options[0].value, it.candidates[0]);
        assert_eq!(o0.options[0].code, "A");
        assert_ne!(o0.options, o1.options);
        let mut a = o0.options.clone();
        let mut b = o1.options.clone();
        a.sort_by(|x, y| x.code.cmp(&y.code));
        b.sort_by(|x, y| x.code.cmp(&y.code));
        assert_eq!(a, b);
    }
}
