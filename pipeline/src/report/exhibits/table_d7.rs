//! Table D7: "Matching gold-prefix ambiguity leaves much larger lexical Cartesian output
//! spaces. Mean U averages union sizes within items; Forced counts deterministic positions;
//! Cartesian support multiplies position-wise sizes."
//!
//! Computed from the banks themselves (Table 1's `data/banks/arithmetic-test.jsonl` and
//! `lexical-test.jsonl`), no model call: per domain and target length, the items, the mean
//! over items of the mean position-wise union size U (the distinct characters the eight
//! candidates have at a position, [`c2s_records::geometry::position_union`]), the mean number
//! of forced positions (U = 1), and the minimum, median and maximum over items of the
//! Cartesian support ∏ U. The paper prints arithmetic as one row over lengths 3 to 8
//! ("1+4/L", "L−2", 8/8/8); ours prints every length and checks it against those formulas.

use std::path::{Path, PathBuf};

use c2s_records::{position_union, Domain, Item, ItemPolicy};
use serde::{Deserialize, Serialize};

use super::paper::PaperTable;
use super::signed2;
use crate::report::doc::{Doc, Table};

/// The banks Table D7 describes (relative to the repository root, as the panels' sources).
pub const BANKS: [&str; 2] = [
    "data/banks/arithmetic-test.jsonl",
    "data/banks/lexical-test.jsonl",
];

/// One (domain, length) row.
#[derive(Debug, Clone, PartialEq)]
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

/// One lexical row of Table D7 as printed (arithmetic is the formula row).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
pub struct PaperRow {
    /// Target length L.
    pub length: usize,
    /// Items at this length (64).
    pub items: usize,
    /// Mean U: the mean position-wise union size, averaged within items then over items.
    pub mean_u: f64,
    /// Mean forced positions (U = 1) per item.
    pub forced: f64,
    /// Cartesian support ∏ U over items: minimum, median, maximum, as printed.
    pub cartesian: (u64, u64, u64),
}

/// Table D7's lexical rows as printed.
pub static PAPER_LEXICAL: PaperTable<PaperRow> = PaperTable::new("tableD7");

/// The paper's arithmetic row: "3 to 8, 384, 1+4/L, L−2, 8, 8, 8" (Mean U and Forced at
/// length L).
pub fn paper_arithmetic(length: usize) -> (f64, f64, u64) {
    let l = length as f64;
    (1.0 + 4.0 / l, l - 2.0, 8)
}

/// A count with thousands separators, as the paper prints Cartesian sizes (`1,128,960`).
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn median_cell(m: f64) -> String {
    if m.fract() == 0.0 {
        grouped(m as u64)
    } else {
        format!("{}.5", grouped(m.trunc() as u64))
    }
}

fn domain_cell(d: Domain) -> &'static str {
    super::paper_domain(d.as_str())
}

const HEADER: [&str; 8] = [
    "Domain", "Length", "Items", "Mean U", "Forced", "Min size", "Median", "Max",
];

/// Table D7's document: ours per length, the paper's, and ours minus the paper's.
pub fn layout(ours: &[LengthRow]) -> anyhow::Result<Doc> {
    let printed = PAPER_LEXICAL.rows()?;
    let mut doc = Doc::new("Table D7: Position-wise union sizes and Cartesian output spaces");
    doc.p(
        "Matching gold-prefix ambiguity leaves much larger lexical Cartesian output spaces. \
         Mean U averages union sizes within items; Forced counts deterministic positions; \
         Cartesian support multiplies position-wise sizes.",
    );
    doc.h(2, "These banks");
    doc.table(Table {
        text_columns: 1,
        header: HEADER.map(String::from).to_vec(),
        rows: ours
            .iter()
            .map(|r| {
                vec![
                    domain_cell(r.domain).to_string(),
                    r.length.to_string(),
                    r.items.to_string(),
                    format!("{:.2}", r.mean_u),
                    format!("{:.1}", r.forced),
                    grouped(r.cartesian.0),
                    median_cell(r.cartesian.1),
                    grouped(r.cartesian.2),
                ]
            })
            .collect(),
        notes: vec![format!(
            "Banks: {}. Mean U and Forced are item means; the median of an even count is the \
             midpoint of the two middle items.",
            BANKS.join(", ")
        )],
    });
    doc.h(2, "The paper (Table D7)");
    let mut paper_rows = vec![vec![
        "math".to_string(),
        "3 to 8".into(),
        "384".into(),
        "1+4/L".into(),
        "L−2".into(),
        "8".into(),
        "8".into(),
        "8".into(),
    ]];
    paper_rows.extend(printed.iter().map(|p| {
        vec![
            "lexical".to_string(),
            p.length.to_string(),
            p.items.to_string(),
            format!("{:.2}", p.mean_u),
            format!("{:.1}", p.forced),
            grouped(p.cartesian.0),
            grouped(p.cartesian.1),
            grouped(p.cartesian.2),
        ]
    }));
    doc.table(Table {
        text_columns: 1,
        header: HEADER.map(String::from).to_vec(),
        rows: paper_rows,
        notes: vec![],
    });
    doc.h(2, "These banks minus the paper");
    let mut diff = Table {
        text_columns: 2,
        header: [
            "Domain",
            "Length",
            "Δ items",
            "Δ Mean U",
            "Δ Forced",
            "Δ min",
            "Δ median",
            "Δ max",
        ]
        .map(String::from)
        .to_vec(),
        ..Table::default()
    };
    for r in ours {
        let paper = match r.domain {
            Domain::Arithmetic => {
                let (u, forced, size) = paper_arithmetic(r.length);
                Some((64, u, forced, (size, size as f64, size)))
            }
            Domain::Lexical => printed.iter().find(|p| p.length == r.length).map(|p| {
                (
                    p.items,
                    p.mean_u,
                    p.forced,
                    (p.cartesian.0, p.cartesian.1 as f64, p.cartesian.2),
                )
            }),
            _ => None,
        };
        let Some((items, u, forced, (min, median, max))) = paper else {
            continue;
        };
        let signed_int = |a: f64, b: f64| {
            let d = a - b;
            if d < 0.0 {
                format!("−{}", median_cell(-d))
            } else {
                format!("+{}", median_cell(d))
            }
        };
        diff.rows.push(vec![
            domain_cell(r.domain).to_string(),
            r.length.to_string(),
            signed_int(r.items as f64, items as f64),
            signed2(r.mean_u - u),
            signed2(r.forced - forced),
            signed_int(r.cartesian.0 as f64, min as f64),
            signed_int(r.cartesian.1, median),
            signed_int(r.cartesian.2 as f64, max as f64),
        ]);
    }
    diff.notes.push(
        "Arithmetic against the paper's formula row at each length (1 + 4/L, L − 2, 8; 384 \
         items over six lengths, 64 per length as in the lexical rows)."
            .into(),
    );
    doc.table(diff);
    Ok(doc)
}

/// Read the banks (relative to `root`) and lay out the table.
pub fn document_at(root: &Path) -> anyhow::Result<Doc> {
    let mut items = Vec::new();
    for bank in BANKS {
        let path: PathBuf = root.join(bank);
        items.extend(c2s_banks::bank::read_bank(&path, &ItemPolicy::default())?);
    }
    layout(&rows(&items))
}

/// The banks from the current directory (the repository root, as `reproduce` runs).
pub fn document() -> anyhow::Result<Doc> {
    document_at(Path::new("."))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let md = layout(&r).unwrap().markdown();
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
