//! Table D7 from the banks themselves (Table 1's arithmetic and lexical test banks), no model
//! call: per domain and target length, the mean over items of the mean position-wise union size
//! U ([`c2s_records::geometry::position_union`]), the mean forced positions (U = 1) and the
//! Cartesian support ∏ U over items. The paper's arithmetic row is a formula over lengths 3 to 8
//! ([`paper_arithmetic`]); ours prints every length and is compared with it.

use std::path::Path;

use c2s_records::{position_union, Domain, Item, ItemPolicy};
use serde::Serialize;
use serde_json::Value as Json;

use super::engine::Frame;

/// The banks Table D7 describes (relative to the repository root, as the panels' sources).
pub const BANKS: [&str; 2] = [
    "data/banks/arithmetic-test.jsonl",
    "data/banks/lexical-test.jsonl",
];

/// One (domain, length) row: ours, or the paper's that it is compared with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LengthRow {
    /// The bank's domain.
    pub domain: Domain,
    /// Target length L.
    pub length: usize,
    /// Items of this domain and length in the bank.
    pub items: usize,
    /// Mean over items of the mean union size across positions.
    pub mean_u: f64,
    /// Mean over items of the forced positions (union size 1).
    pub forced: f64,
    /// Cartesian support ∏ U: minimum, median (midpoint of the two middle items when even),
    /// maximum over items.
    pub cartesian: (u64, f64, u64),
}

/// An item's position-wise union sizes.
fn union_sizes(item: &Item) -> Vec<usize> {
    let candidates: Vec<Vec<char>> = item
        .candidates
        .iter()
        .map(|c| c.chars().collect())
        .collect();
    (0..item.length)
        .map(|pos| position_union(&candidates, pos).len())
        .collect()
}

/// The rows of `items`, by domain then length.
pub fn rows(items: &[Item]) -> Vec<LengthRow> {
    let mut groups: std::collections::BTreeMap<(Domain, usize), Vec<Vec<usize>>> =
        Default::default();
    for item in items {
        groups
            .entry((item.domain, item.length))
            .or_default()
            .push(union_sizes(item));
    }
    groups
        .into_iter()
        .map(|((domain, length), sizes)| {
            let n = sizes.len() as f64;
            let mean_u = sizes
                .iter()
                .map(|u| u.iter().sum::<usize>() as f64 / u.len().max(1) as f64)
                .sum::<f64>()
                / n;
            let forced = sizes
                .iter()
                .map(|u| u.iter().filter(|&&s| s == 1).count() as f64)
                .sum::<f64>()
                / n;
            let mut products: Vec<u64> = sizes
                .iter()
                .map(|u| u.iter().map(|&s| s as u64).product())
                .collect();
            products.sort_unstable();
            let mid = products.len() / 2;
            let median = if products.len().is_multiple_of(2) {
                (products[mid - 1] + products[mid]) as f64 / 2.0
            } else {
                products[mid] as f64
            };
            LengthRow {
                domain,
                length,
                items: sizes.len(),
                mean_u,
                forced,
                cartesian: (products[0], median, products[products.len() - 1]),
            }
        })
        .collect()
}

/// The paper's arithmetic formula row at length L: mean U 1 + 4/L, forced L − 2, support 8.
pub fn paper_arithmetic(length: usize) -> (f64, f64, u64) {
    let l = length as f64;
    (1.0 + 4.0 / l, l - 2.0, 8)
}

/// A count with thousands separators, as the paper prints Cartesian sizes (`1,128,960`); a
/// median's half as `.5`, a negative difference with a true minus.
pub fn grouped(v: f64) -> String {
    if v < 0.0 {
        return format!("−{}", grouped(-v));
    }
    let digits = (v.trunc() as u64).to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if v.fract() != 0.0 {
        out.push_str(".5");
    }
    out
}

/// Table D7's rows: ours, the paper's as printed (`printed`: the arithmetic formula row over
/// lengths 3 to 8, then the lexical rows of exhibits/tableD7.tsv), and the paper's row each of
/// ours is compared with (`reference`: the lexical rows, and the formula at each of our
/// arithmetic lengths).
pub fn frame(ours: &[LengthRow]) -> anyhow::Result<Frame> {
    let mut lexical = Vec::new();
    for record in super::paper::records("tableD7")? {
        let mut row = serde_json::to_value(record)?;
        row["domain"] = Domain::Lexical.as_str().into();
        lexical.push(row);
    }
    // An arithmetic row of the paper's formula: support 8 at every length.
    let formula = |length: Json, items: u64, mean_u: Json, forced: Json| {
        serde_json::json!({
            "domain": Domain::Arithmetic.as_str(), "length": length, "items": items,
            "mean_u": mean_u, "forced": forced,
            "cartesian_min": 8, "cartesian_median": 8.0, "cartesian_max": 8,
        })
    };
    let printed = std::iter::once(formula("3 to 8".into(), 384, "1+4/L".into(), "L−2".into()));
    let arithmetic = (ours.iter().filter(|r| r.domain == Domain::Arithmetic)).map(|r| {
        let (mean_u, forced, _) = paper_arithmetic(r.length);
        formula(r.length.into(), 64, mean_u.into(), forced.into())
    });
    let reference: Vec<_> = lexical.iter().cloned().chain(arithmetic).collect();
    Ok(Frame::new()
        .rows("ours", ours)
        .rows("printed", &printed.chain(lexical).collect::<Vec<_>>())
        .rows("reference", &reference)
        .var("banks", BANKS))
}

/// Read the banks (relative to the current directory, the repository root as `reproduce`
/// runs) and compute the table's rows.
pub fn document() -> anyhow::Result<Frame> {
    let mut items = Vec::new();
    for bank in BANKS {
        let bank = c2s_banks::bank::read_bank(Path::new(bank), &ItemPolicy::default())?;
        items.extend(bank);
    }
    frame(&rows(&items))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::laid_out;

    fn item(domain: Domain, candidates: &[&str]) -> Item {
        let target = candidates[0];
        let mut v = serde_json::json!({
            "item_id": format!("{}-{}", domain.as_str(), candidates.join("")),
            "domain": domain.as_str(),
            "problem": "p",
            "target": target,
            "length": target.chars().count(),
            "candidates": candidates,
            "k_vector": [],
        });
        if domain == Domain::Arithmetic {
            v["problem"] = "1+1".into();
        }
        serde_json::from_value(v).expect("a test item")
    }

    /// Union sizes, forced positions and the Cartesian product per item ("Mean U averages
    /// union sizes within items; Forced counts deterministic positions; Cartesian support
    /// multiplies position-wise sizes").
    #[test]
    fn rows_average_union_sizes_and_multiply_them() {
        // Four first digits × two second digits, the rest shared: 1 + 4/L, L − 2, 8 (L = 4).
        let math = item(
            Domain::Arithmetic,
            &[
                "1099", "1199", "2099", "2199", "3099", "3199", "4099", "4199",
            ],
        );
        let lex = item(
            Domain::Lexical,
            &["abc", "abd", "xbc", "ybc", "zbc", "wbe", "vbc", "ubc"],
        );
        let lex2 = item(
            Domain::Lexical,
            &["abc", "dbf", "gbi", "jbl", "mbo", "pbr", "sbu", "vbx"],
        );
        let r = rows(&[math, lex, lex2]);
        assert_eq!(r.len(), 2);
        let m = &r[0];
        assert_eq!((m.domain, m.length, m.items), (Domain::Arithmetic, 4, 1));
        assert!((m.mean_u - paper_arithmetic(4).0).abs() < 1e-12);
        assert_eq!(m.forced, paper_arithmetic(4).1);
        assert_eq!(m.cartesian, (8, 8.0, 8));
        let l = &r[1];
        // abc…: U = 7, 1, 3 (mean 11/3), one forced, ∏ 21; abc, dbf…: U = 8, 1, 8, ∏ 64.
        assert_eq!(l.items, 2);
        assert!((l.mean_u - (11.0 / 3.0 + 17.0 / 3.0) / 2.0).abs() < 1e-12);
        assert_eq!(l.forced, 1.0);
        assert_eq!(l.cartesian, (21, 42.5, 64));
        let md = laid_out("tableD7", frame(&r).unwrap(), "Jev");
        for want in [
            "| Domain | Length | Items | Mean U | Forced | Min size | Median | Max |",
            "| math | 3 to 8 | 384 | 1+4/L | L−2 | 8 | 8 | 8 |",
            "| lexical | 8 | 64 | 5.80 | 0.0 | 201,600 | 1,128,960 | 2,370,816 |",
            "| lexical | 3 | 2 | 4.67 | 1.0 | 21 | 42.5 | 64 |",
            "| lexical | 3 | −62 | −0.55 | +1.00 | −43 | −91.5 | −160 |",
            "| math | 4 | −63 | +0.00 | +0.00 | +0 | +0 | +0 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    /// The shipped banks: 64 items per domain and length; arithmetic follows the paper's
    /// formula row exactly.
    #[test]
    fn the_shipped_arithmetic_bank_follows_the_papers_formula_row() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut items = Vec::new();
        for bank in BANKS {
            items.extend(
                c2s_banks::bank::read_bank(&root.join(bank), &ItemPolicy::default())
                    .expect("the shipped bank"),
            );
        }
        let r = rows(&items);
        assert_eq!(r.len(), 12);
        for row in &r {
            assert_eq!(row.items, 64, "{row:?}");
            if row.domain == Domain::Arithmetic {
                let (u, forced, size) = paper_arithmetic(row.length);
                assert!((row.mean_u - u).abs() < 1e-9, "{row:?}");
                assert_eq!(row.forced, forced, "{row:?}");
                assert_eq!(row.cartesian, (size, size as f64, size), "{row:?}");
            }
        }
    }
}
