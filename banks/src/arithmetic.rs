//! The arithmetic generator (paper A.2): exact-L-digit products, balanced/unbalanced operand
//! lengths, a grade-school column simulator for carries, frozen bounded pools with a low/high
//! carry split at the pool median, and four-by-two candidates whose gold-path K vector equals
//! that of a paired lexical item.

use std::collections::{BTreeMap, BTreeSet};

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use c2s_records::{ArithmeticMeta, CarryClass, CarryStats, Domain, Item, ItemError, Structure};

/// Lengths of the main panels.
pub const LENGTHS: std::ops::RangeInclusive<usize> = 3..=8;

/// Why the arithmetic operands could not be selected or paired with lexical items.
#[derive(Debug, thiserror::Error)]
pub enum ArithmeticError {
    /// A (length, structure, carry class) cell of a pool has too few pairs whose product and
    /// operand pair no earlier selection used.
    #[error(
        "pool L={length} {structure:?}/{class:?} holds only {found} usable pairs, {needed} needed"
    )]
    PoolShortfall {
        /// Product length of the pool, in digits.
        length: usize,
        /// Operand structure of the pool.
        structure: Structure,
        /// Carry class of the cell.
        class: CarryClass,
        /// Usable pairs the cell held.
        found: usize,
        /// Pairs the quota asks for.
        needed: usize,
    },
    /// A length has a different number of arithmetic draws and lexical items to pair them with.
    #[error("{split} L={length}: {arithmetic} arithmetic items but {lexical} lexical partners")]
    PartnerCount {
        /// The split being built (`test`, `dev`).
        split: String,
        /// The product length, in digits.
        length: usize,
        /// Arithmetic draws of that length.
        arithmetic: usize,
        /// Lexical items of that length.
        lexical: usize,
    },
    /// A lexical partner's K vector is not a four-by-two one, so it gives no branch position.
    #[error("lexical item {item_id} has no four-by-two K vector: {k_vector:?}")]
    NotFourByTwo {
        /// The lexical item.
        item_id: String,
        /// Its K vector.
        k_vector: Vec<u32>,
    },
    /// A generated arithmetic item failed [`c2s_records::validate_item`].
    #[error(transparent)]
    Item(#[from] ItemError),
    /// A generated arithmetic item's K vector is not its lexical partner's.
    #[error(
        "{item_id}: K vector {k_vector:?} differs from partner {partner_id}'s {partner_k_vector:?}"
    )]
    KVectorMismatch {
        /// The arithmetic item.
        item_id: String,
        /// Its K vector.
        k_vector: Vec<u32>,
        /// The lexical partner.
        partner_id: String,
        /// The partner's K vector.
        partner_k_vector: Vec<u32>,
    },
}

/// Result of simulating `a × b` in columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simulation {
    /// Counted carries, chain length, operand digit counts and the full carry traces.
    pub stats: CarryStats,
    /// The partial products (row j is `a × b_j`, unshifted), least significant row first.
    pub partial_products: Vec<u64>,
    /// The product obtained by summing the shifted partial products column by column.
    pub product: u64,
}

fn digits_lsd(mut n: u64) -> Vec<u32> {
    if n == 0 {
        return vec![0];
    }
    let mut d = Vec::new();
    while n > 0 {
        d.push((n % 10) as u32);
        n /= 10;
    }
    d
}

fn max_run(trace: &[u32]) -> u32 {
    let mut best = 0;
    let mut run = 0;
    for &c in trace {
        if c > 0 {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// Grade-school multiplication of `a` (top) by `b` (bottom): one row per digit of `b`, then a
/// column-wise sum of the shifted rows.
///
/// Counted carries are the positive outgoing carries that are added into a further column
/// operation of the same row (or of the summation). A.2: "The grade school simulator records
/// positive outgoing carries within each multiplication row and the final partial product
/// summation. Carry chain length counts consecutive carry events within a row or summation,
/// resetting between them." The carry out of a row's last column (and of the summation's last
/// column) leaves the row: it is written down as the leading digit, not carried within the row,
/// so the traces keep it and the counts do not. This reading is also the only one under which
/// A.2's "Final selection takes 16 items from each structure/carry cell per length" can hold:
/// counting that carry makes almost every L = 4 unbalanced pair reach the pool's maximum (every
/// 3-digit × 1-digit pair with a 4-digit product carries out of its last column), the pool's
/// median equals its maximum and "high carry above it" is empty (pinned by
/// `counting_the_written_down_carry_empties_a_cell`).
pub fn simulate(a: u64, b: u64) -> Simulation {
    let da = digits_lsd(a);
    let db = digits_lsd(b);
    let mut row_carry_trace = Vec::with_capacity(db.len());
    // Each row as digits (LSD first), built only from single-digit products and carries.
    let mut rows: Vec<Vec<u32>> = Vec::with_capacity(db.len());
    for &bj in &db {
        let mut carry = 0;
        let mut trace = Vec::with_capacity(da.len());
        let mut row = Vec::with_capacity(da.len() + 1);
        for &ai in &da {
            let p = ai * bj + carry;
            row.push(p % 10);
            carry = p / 10;
            trace.push(carry);
        }
        if carry > 0 {
            row.push(carry);
        }
        row_carry_trace.push(trace);
        rows.push(row);
    }
    let partial_products = rows
        .iter()
        .map(|r| r.iter().rev().fold(0u64, |acc, &d| acc * 10 + u64::from(d)))
        .collect();
    // Column summation of the shifted rows (only when there is more than one row).
    let mut sum_carry_trace = Vec::new();
    let product_digits: Vec<u32> = if rows.len() == 1 {
        rows[0].clone()
    } else {
        let width = rows
            .iter()
            .enumerate()
            .map(|(j, r)| r.len() + j)
            .max()
            .unwrap_or(0);
        let mut out = Vec::with_capacity(width + 1);
        let mut carry = 0;
        for col in 0..width {
            let mut s = carry;
            for (j, r) in rows.iter().enumerate() {
                if col >= j {
                    s += r.get(col - j).copied().unwrap_or(0);
                }
            }
            out.push(s % 10);
            carry = s / 10;
            sum_carry_trace.push(carry);
        }
        let mut c = carry;
        while c > 0 {
            out.push(c % 10);
            c /= 10;
        }
        while out.len() > 1 && out.last() == Some(&0) {
            out.pop();
        }
        out
    };
    let product = product_digits
        .iter()
        .rev()
        .fold(0u64, |acc, &d| acc * 10 + u64::from(d));
    // The last entry of each trace is the written-down leading carry (see above).
    let counted = |t: &[u32]| -> Vec<u32> { t[..t.len().saturating_sub(1)].to_vec() };
    let row_carries: u32 = row_carry_trace
        .iter()
        .map(|t| counted(t).iter().filter(|&&c| c > 0).count() as u32)
        .sum();
    let sum_carries = counted(&sum_carry_trace).iter().filter(|&&c| c > 0).count() as u32;
    let max_carry_chain = row_carry_trace
        .iter()
        .map(|t| max_run(&counted(t)))
        .chain(std::iter::once(max_run(&counted(&sum_carry_trace))))
        .max()
        .unwrap_or(0);
    let concat = format!("{a}{b}");
    let zero_digits = concat.bytes().filter(|&c| c == b'0').count() as u32;
    let distinct: BTreeSet<u8> = concat.bytes().collect();
    let repeated_digits = (concat.len() - distinct.len()) as u32;
    Simulation {
        stats: CarryStats {
            operand_lengths: [da.len() as u32, db.len() as u32],
            row_carries,
            sum_carries,
            total_carries: row_carries + sum_carries,
            max_carry_chain,
            elementary_products: (da.len() * db.len()) as u32,
            zero_digits,
            repeated_digits,
            row_carry_trace,
            sum_carry_trace,
        },
        partial_products,
        product,
    }
}

/// Number of decimal digits of `n`.
pub fn num_digits(n: u64) -> usize {
    digits_lsd(n).len()
}

/// Operand-length pairs `(len_a, len_b)`, `len_a ≥ len_b`, that can give an L-digit product.
pub fn operand_lengths(length: usize, structure: Structure) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for la in 1..=length {
        for lb in 1..=la {
            if la + lb != length && la + lb != length + 1 {
                continue;
            }
            let balanced = la - lb <= 1;
            if balanced == (structure == Structure::Balanced) {
                out.push((la, lb));
            }
        }
    }
    out
}

/// One operand pair drawn into a pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draw {
    /// Top operand, the one with more (or as many) digits.
    pub a: u64,
    /// Bottom operand: one multiplication row per digit.
    pub b: u64,
    /// L, digits of the product `a × b`.
    pub length: usize,
    /// Balanced when the operands' digit counts differ by at most one.
    pub structure: Structure,
    /// Carry statistics of [`simulate`]`(a, b)`.
    pub stats: CarryStats,
}

impl Draw {
    /// The gold target `a × b`.
    pub fn product(&self) -> u64 {
        self.a * self.b
    }

    /// The unordered operand pair.
    pub fn pair(&self) -> (u64, u64) {
        (self.a.min(self.b), self.a.max(self.b))
    }
}

/// Frozen bounded pool for one (length, structure): `size` distinct operand pairs drawn with a
/// seeded generator, in draw order, plus the median of their total carries.
#[derive(Debug, Clone)]
pub struct Pool {
    /// L, digits of every product in the pool.
    pub length: usize,
    /// Structure shared by every draw.
    pub structure: Structure,
    /// Distinct unordered pairs in draw order; fewer than `size` only if the attempts ran out.
    pub draws: Vec<Draw>,
    /// Median of the draws' total carries (mean of the middle two for an even count; 0 if empty).
    pub median_carries: f64,
}

impl Pool {
    /// Low when `d`'s total carries are at most the pool median, High above it.
    pub fn carry_class(&self, d: &Draw) -> CarryClass {
        if f64::from(d.stats.total_carries) <= self.median_carries {
            CarryClass::Low
        } else {
            CarryClass::High
        }
    }
}

fn pow10(e: usize) -> u64 {
    10u64.pow(e as u32)
}

/// Draw a pool of `size` distinct unordered operand pairs with exactly `length`-digit products.
/// A.2: "Positive operands have products of exactly L digits": any positive operand, 1
/// included (no rule of the paper excludes it).
pub fn draw_pool(length: usize, structure: Structure, size: usize, rng: &mut ChaCha8Rng) -> Pool {
    let shapes = operand_lengths(length, structure);
    let mut seen = BTreeSet::new();
    let mut draws = Vec::with_capacity(size);
    let mut attempts = 0usize;
    while draws.len() < size && attempts < size * 1000 {
        attempts += 1;
        let (la, lb) = shapes[rng.random_range(0..shapes.len())];
        let a = rng.random_range(pow10(la - 1)..pow10(la));
        let b = rng.random_range(pow10(lb - 1)..pow10(lb));
        let product = a * b;
        if num_digits(product) != length {
            continue;
        }
        if !seen.insert((a.min(b), a.max(b))) {
            continue;
        }
        let stats = simulate(a, b).stats;
        draws.push(Draw {
            a,
            b,
            length,
            structure,
            stats,
        });
    }
    let mut carries: Vec<u32> = draws.iter().map(|d| d.stats.total_carries).collect();
    carries.sort_unstable();
    let n = carries.len();
    let median_carries = if n == 0 {
        0.0
    } else if n % 2 == 1 {
        f64::from(carries[n / 2])
    } else {
        (f64::from(carries[n / 2 - 1]) + f64::from(carries[n / 2])) / 2.0
    };
    Pool {
        length,
        structure,
        draws,
        median_carries,
    }
}

/// Four-by-two candidates for the gold `product`: four distinct nonzero first digits (the
/// gold's and three others), and at 0-based `branch` (1 ≤ branch < L) the gold digit or one
/// alternative; every other position copies the gold. Returned in a seeded display order.
pub fn four_by_two_candidates(product: u64, branch: usize, rng: &mut ChaCha8Rng) -> Vec<String> {
    let gold: Vec<u8> = product.to_string().into_bytes();
    assert!(
        branch >= 1 && branch < gold.len(),
        "branch position out of range"
    );
    let mut firsts: Vec<u8> = (b'1'..=b'9').filter(|&d| d != gold[0]).collect();
    firsts.shuffle(rng);
    let mut first_digits = vec![gold[0]];
    first_digits.extend_from_slice(&firsts[..3]);
    let alternatives: Vec<u8> = (b'0'..=b'9').filter(|&d| d != gold[branch]).collect();
    let alt = alternatives[rng.random_range(0..alternatives.len())];
    let mut out = Vec::with_capacity(8);
    for &f in &first_digits {
        for &d in &[gold[branch], alt] {
            let mut c = gold.clone();
            c[0] = f;
            c[branch] = d;
            out.push(c.iter().map(|&digit| char::from(digit)).collect());
        }
    }
    out.shuffle(rng);
    out
}

/// Arithmetic operands selected for the frozen banks.
#[derive(Debug, Clone)]
pub struct ArithmeticSelection {
    /// Per length, in cell order (balanced-low, balanced-high, unbalanced-low, unbalanced-high).
    pub dev: BTreeMap<usize, Vec<(Draw, CarryClass)>>,
    /// As `dev`, for the test bank; shares no product and no unordered pair with dev.
    pub test: BTreeMap<usize, Vec<(Draw, CarryClass)>>,
    /// Pool medians per (length, structure).
    pub medians: BTreeMap<(usize, Structure), f64>,
}

/// Sizes of the arithmetic selection.
#[derive(Debug, Clone, Copy)]
pub struct ArithmeticQuota {
    /// Operand pairs drawn per (length, structure) pool.
    pub pool_size: usize,
    /// Items per structure × carry cell per length in the test bank (16 → 64 per length).
    pub test_per_cell: usize,
    /// Items per cell per length in the dev bank (2 → 8 per length).
    pub dev_per_cell: usize,
}

impl Default for ArithmeticQuota {
    fn default() -> Self {
        ArithmeticQuota {
            pool_size: 2000,
            test_per_cell: 16,
            dev_per_cell: 2,
        }
    }
}

/// Select dev then test operands from frozen pools. Products are unique across both banks;
/// test shares no product and no unordered operand pair with dev.
pub fn select_operands(
    seed: u64,
    quota: ArithmeticQuota,
) -> Result<ArithmeticSelection, ArithmeticError> {
    let mut used_products = BTreeSet::new();
    let mut used_pairs = BTreeSet::new();
    let mut dev = BTreeMap::new();
    let mut test = BTreeMap::new();
    let mut medians = BTreeMap::new();
    for length in LENGTHS {
        let mut dev_items = Vec::new();
        let mut test_items = Vec::new();
        for (si, structure) in [Structure::Balanced, Structure::Unbalanced]
            .into_iter()
            .enumerate()
        {
            let mut rng =
                ChaCha8Rng::seed_from_u64(seed ^ ((length as u64) << 8) ^ (si as u64 + 1));
            let pool = draw_pool(length, structure, quota.pool_size, &mut rng);
            medians.insert((length, structure), pool.median_carries);
            for class in [CarryClass::Low, CarryClass::High] {
                let cell: Vec<&Draw> = pool
                    .draws
                    .iter()
                    .filter(|d| pool.carry_class(d) == class)
                    .collect();
                let mut take = |n: usize,
                                out: &mut Vec<(Draw, CarryClass)>|
                 -> Result<(), ArithmeticError> {
                    let mut got = 0;
                    for d in &cell {
                        if got == n {
                            break;
                        }
                        if used_products.contains(&d.product()) || used_pairs.contains(&d.pair()) {
                            continue;
                        }
                        used_products.insert(d.product());
                        used_pairs.insert(d.pair());
                        out.push(((*d).clone(), class));
                        got += 1;
                    }
                    if got < n {
                        return Err(ArithmeticError::PoolShortfall {
                            length,
                            structure,
                            class,
                            found: got,
                            needed: n,
                        });
                    }
                    Ok(())
                };
                take(quota.dev_per_cell, &mut dev_items)?;
                take(quota.test_per_cell, &mut test_items)?;
            }
        }
        dev.insert(length, dev_items);
        test.insert(length, test_items);
    }
    Ok(ArithmeticSelection { dev, test, medians })
}

/// The problem surface of Figure 1 ("39 × 15 = ?"); the paper's prompts give no other: E.1
/// says only that "Every state contains problem and target_length".
pub const PROBLEM_SURFACE: &str = "{a} × {b} = ?";

/// The problem text of `a × b`, in the surface [`PROBLEM_SURFACE`].
pub fn problem_text(a: u64, b: u64) -> String {
    format!("{a} × {b} = ?")
}

/// Length of the common prefix of the gold and its first-letter partner in a four-by-two set:
/// the largest k ≥ 1 with K(k) = 2. This is the 0-based branch position of arithmetic partners.
pub fn branch_from_k_vector(k_vector: &[u32]) -> Option<usize> {
    if k_vector.len() < 3 || k_vector[0] != 8 || k_vector[1] != 2 {
        return None;
    }
    let last_two = k_vector.iter().rposition(|&k| k == 2)?;
    if k_vector[1..=last_two].iter().all(|&k| k == 2)
        && k_vector[last_two + 1..].iter().all(|&k| k == 1)
    {
        Some(last_two)
    } else {
        None
    }
}

/// Build arithmetic items for one split, pairing each with a lexical item of the same length
/// and taking its K vector: within a length, lexical partners are assigned by a seeded
/// permutation. Sets `partner_id` on both sides.
pub fn build_paired_items(
    split: &str,
    selection: &BTreeMap<usize, Vec<(Draw, CarryClass)>>,
    lexical: &mut [Item],
    seed: u64,
) -> Result<Vec<Item>, ArithmeticError> {
    let mut out = Vec::new();
    for (&length, draws) in selection {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xA11CE ^ ((length as u64) << 16));
        let mut partners: Vec<usize> = lexical
            .iter()
            .enumerate()
            .filter(|(_, it)| it.length == length)
            .map(|(i, _)| i)
            .collect();
        if partners.len() != draws.len() {
            return Err(ArithmeticError::PartnerCount {
                split: split.to_string(),
                length,
                arithmetic: draws.len(),
                lexical: partners.len(),
            });
        }
        partners.shuffle(&mut rng);
        for (n, ((draw, class), &li)) in draws.iter().zip(&partners).enumerate() {
            let partner = &mut lexical[li];
            let branch = branch_from_k_vector(&partner.k_vector).ok_or_else(|| {
                ArithmeticError::NotFourByTwo {
                    item_id: partner.item_id.clone(),
                    k_vector: partner.k_vector.clone(),
                }
            })?;
            let product = draw.product();
            let candidates = four_by_two_candidates(product, branch, &mut rng);
            let item_id = format!("arith-{split}-{length}-{:02}", n + 1);
            partner.partner_id = Some(item_id.clone());
            let mut item = Item {
                item_id,
                domain: Domain::Arithmetic,
                problem: problem_text(draw.a, draw.b),
                target: product.to_string(),
                length,
                candidates,
                k_vector: vec![],
                partner_id: Some(partner.item_id.clone()),
                geometry: None,
                arithmetic: Some(ArithmeticMeta {
                    operands: [draw.a, draw.b],
                    structure: draw.structure,
                    carry_class: *class,
                    carry: draw.stats.clone(),
                }),
                lexical: None,
                symbolic: None,
                semantic: None,
            };
            c2s_records::validate_item(&mut item, &c2s_records::ItemPolicy::default(), false)?;
            if item.k_vector != partner.k_vector {
                return Err(ArithmeticError::KVectorMismatch {
                    item_id: item.item_id.clone(),
                    k_vector: item.k_vector.clone(),
                    partner_id: partner.item_id.clone(),
                    partner_k_vector: partner.k_vector.clone(),
                });
            }
            out.push(item);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Figure 1: "39 × 15 = ? 585 589 385 389 485 489 685 689".
    #[test]
    fn problem_surface_follows_figure_one() {
        assert_eq!(problem_text(39, 15), "39 × 15 = ?");
        assert_eq!(
            PROBLEM_SURFACE.replace("{a}", "39").replace("{b}", "15"),
            "39 × 15 = ?"
        );
    }

    /// A.2: "Positive operands have products of exactly L digits." A factor 1 is positive and
    /// no stated rule excludes it, so pools hold pairs with a 1.
    #[test]
    fn pools_admit_operand_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let pool = draw_pool(3, Structure::Unbalanced, 2000, &mut rng);
        assert!(pool.draws.iter().any(|d| d.a == 1 || d.b == 1));
        assert!(pool.draws.iter().all(|d| d.a >= 1 && d.b >= 1));
    }

    /// A.2: "records positive outgoing carries within each multiplication row … For each
    /// length and structure, a frozen bounded pool defines low carry at or below its median
    /// and high carry above it. Final selection takes 16 items from each structure/carry cell
    /// per length." Counting the carry written down as a row's leading digit would leave the
    /// L = 4 unbalanced high cell empty (median = maximum); the counted carries fill it.
    #[test]
    fn counting_the_written_down_carry_empties_a_cell() {
        let mut rng = ChaCha8Rng::seed_from_u64(20261005);
        let pool = draw_pool(4, Structure::Unbalanced, 2000, &mut rng);
        let inclusive: Vec<u32> = pool
            .draws
            .iter()
            .map(|d| {
                let rows: usize = d
                    .stats
                    .row_carry_trace
                    .iter()
                    .map(|t| t.iter().filter(|&&c| c > 0).count())
                    .sum();
                let sum = d.stats.sum_carry_trace.iter().filter(|&&c| c > 0).count();
                (rows + sum) as u32
            })
            .collect();
        let mut sorted = inclusive.clone();
        sorted.sort_unstable();
        let median = f64::from(sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2]) / 2.0;
        let max = sorted.last().copied().unwrap_or(0);
        assert_eq!(median, f64::from(max), "inclusive count: median = maximum");
        assert_eq!(
            inclusive.iter().filter(|&&c| f64::from(c) > median).count(),
            0
        );
        let high = pool
            .draws
            .iter()
            .filter(|d| pool.carry_class(d) == CarryClass::High)
            .count();
        assert!(high >= 16 + 2, "the counted rule fills the cell: {high}");
    }

    #[test]
    fn simulator_counts_known_example() {
        // 39 × 15: row 5: 9*5=45 (carry 4), 3*5+4=19 (carry 1) → 195; row 1: 39 (no carries).
        // Sum: col0 5, col1 9+9=18 (carry 1), col2 1+3+1=5 → 585.
        let c = simulate(999, 99);
        assert_eq!(c.product, 98901);
        assert_eq!(c.stats.row_carry_trace, vec![vec![8, 8, 8], vec![8, 8, 8]]);
        assert_eq!(c.stats.row_carries, 4);
        // Summing 8991 + 89910: carries out of columns 1, 2 and 3 form a chain of three.
        assert_eq!(c.stats.sum_carry_trace, vec![0, 1, 1, 1, 0]);
        assert_eq!(c.stats.sum_carries, 3);
        assert_eq!(c.stats.max_carry_chain, 3);
        let s = simulate(39, 15);
        assert_eq!(s.product, 585);
        assert_eq!(s.partial_products, vec![195, 39]);
        assert_eq!(s.stats.row_carry_trace, vec![vec![4, 1], vec![0, 0]]);
        // The row's final carry (1, written as the leading digit of 195) is not counted.
        assert_eq!(s.stats.row_carries, 1);
        assert_eq!(s.stats.sum_carry_trace, vec![0, 1, 0]);
        assert_eq!(s.stats.sum_carries, 1);
        assert_eq!(s.stats.total_carries, 2);
        assert_eq!(s.stats.max_carry_chain, 1);
        assert_eq!(s.stats.elementary_products, 4);
        assert_eq!(s.stats.operand_lengths, [2, 2]);
        assert_eq!(s.stats.zero_digits, 0);
        assert_eq!(s.stats.repeated_digits, 0);
        let t = simulate(101, 7);
        assert_eq!(t.product, 707);
        assert_eq!(t.stats.sum_carry_trace, Vec::<u32>::new());
        assert_eq!(t.stats.zero_digits, 1);
        assert_eq!(t.stats.repeated_digits, 1);
    }

    proptest! {
        #[test]
        fn simulator_equals_integer_product(a in 1u64..100_000_000, b in 1u64..100_000) {
            let s = simulate(a, b);
            prop_assert_eq!(s.product, a * b);
            // Each partial product is a × (digit of b).
            for (j, p) in s.partial_products.iter().enumerate() {
                let digit = (b / 10u64.pow(j as u32)) % 10;
                prop_assert_eq!(*p, a * digit);
            }
            prop_assert_eq!(s.stats.total_carries, s.stats.row_carries + s.stats.sum_carries);
            prop_assert!(s.stats.max_carry_chain <= s.stats.total_carries);
        }

        #[test]
        fn candidates_have_four_by_two_geometry(product in 100u64..100_000_000, seed in any::<u64>(), pick in 0usize..100) {
            let l = num_digits(product);
            let branch = 1 + pick % (l - 1);
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let c = four_by_two_candidates(product, branch, &mut rng);
            let gold = product.to_string();
            prop_assert_eq!(c.len(), 8);
            prop_assert!(c.contains(&gold));
            prop_assert_eq!(c.iter().collect::<BTreeSet<_>>().len(), 8);
            prop_assert!(c.iter().all(|s| s.len() == l && !s.starts_with('0')));
            let cands: Vec<Vec<char>> = c.iter().map(|s| s.chars().collect()).collect();
            let target: Vec<char> = gold.chars().collect();
            let k = c2s_records::k_vector(&target, &cands);
            prop_assert_eq!(branch_from_k_vector(&k), Some(branch));
            // Only the first position and the branch position vary.
            for pos in 0..l {
                let u = c2s_records::position_union(&cands, pos);
                let expected = if pos == 0 { 4 } else if pos == branch { 2 } else { 1 };
                prop_assert_eq!(u.len(), expected);
            }
        }
    }

    #[test]
    fn structures_partition_operand_lengths() {
        assert_eq!(
            operand_lengths(3, Structure::Balanced),
            vec![(2, 1), (2, 2)]
        );
        assert_eq!(operand_lengths(3, Structure::Unbalanced), vec![(3, 1)]);
        for l in LENGTHS {
            for (la, lb) in operand_lengths(l, Structure::Unbalanced) {
                assert!(la - lb >= 2);
            }
            assert!(!operand_lengths(l, Structure::Balanced).is_empty());
            assert!(!operand_lengths(l, Structure::Unbalanced).is_empty());
        }
    }

    #[test]
    fn selection_fills_every_cell_with_unique_products() {
        let sel = select_operands(7, ArithmeticQuota::default()).unwrap();
        let mut products = BTreeSet::new();
        let mut dev_pairs = BTreeSet::new();
        for (l, items) in &sel.dev {
            assert_eq!(items.len(), 8, "dev L={l}");
            for (d, _) in items {
                assert!(products.insert(d.product()));
                dev_pairs.insert(d.pair());
            }
        }
        for (l, items) in &sel.test {
            assert_eq!(items.len(), 64, "test L={l}");
            let mut cells: BTreeMap<(Structure, CarryClass), usize> = BTreeMap::new();
            for (d, c) in items {
                assert_eq!(num_digits(d.product()), *l);
                assert!(products.insert(d.product()), "product reused");
                assert!(!dev_pairs.contains(&d.pair()));
                let med = sel.medians[&(*l, d.structure)];
                assert_eq!(
                    *c == CarryClass::High,
                    f64::from(d.stats.total_carries) > med
                );
                let (la, lb) = (num_digits(d.a), num_digits(d.b));
                match d.structure {
                    Structure::Balanced => assert!(la.abs_diff(lb) <= 1),
                    Structure::Unbalanced => assert!(la.abs_diff(lb) >= 2),
                }
                *cells.entry((d.structure, *c)).or_default() += 1;
            }
            assert_eq!(cells.len(), 4);
            assert!(cells.values().all(|&n| n == 16));
        }
    }

    #[test]
    fn branch_is_read_from_k_vector() {
        assert_eq!(branch_from_k_vector(&[8, 2, 2, 1]), Some(2));
        assert_eq!(branch_from_k_vector(&[8, 2, 1, 1, 1]), Some(1));
        assert_eq!(branch_from_k_vector(&[8, 4, 1, 1]), None);
        assert_eq!(branch_from_k_vector(&[8, 2, 1, 2]), None);
    }

    #[test]
    fn arithmetic_errors_keep_their_messages() {
        let shortfall = ArithmeticError::PoolShortfall {
            length: 3,
            structure: Structure::Balanced,
            class: CarryClass::High,
            found: 1,
            needed: 16,
        };
        assert_eq!(
            shortfall.to_string(),
            "pool L=3 Balanced/High holds only 1 usable pairs, 16 needed"
        );
        let draw = draw_pool(3, Structure::Balanced, 1, &mut ChaCha8Rng::seed_from_u64(7))
            .draws
            .remove(0);
        let selection = BTreeMap::from([(3, vec![(draw, CarryClass::Low)])]);
        let err = build_paired_items("dev", &selection, &mut [], 7).unwrap_err();
        assert!(matches!(
            err,
            ArithmeticError::PartnerCount { length: 3, .. }
        ));
        assert_eq!(
            err.to_string(),
            "dev L=3: 1 arithmetic items but 0 lexical partners"
        );
        let not_four_by_two = ArithmeticError::NotFourByTwo {
            item_id: "lex-dev-3-01".into(),
            k_vector: vec![8, 4, 1],
        };
        assert_eq!(
            not_four_by_two.to_string(),
            "lexical item lex-dev-3-01 has no four-by-two K vector: [8, 4, 1]"
        );
        let mismatch = ArithmeticError::KVectorMismatch {
            item_id: "arith-dev-3-01".into(),
            k_vector: vec![8, 2, 1],
            partner_id: "lex-dev-3-01".into(),
            partner_k_vector: vec![8, 2, 2],
        };
        assert_eq!(
            mismatch.to_string(),
            "arith-dev-3-01: K vector [8, 2, 1] differs from partner lex-dev-3-01's [8, 2, 2]"
        );
    }
}
