//! The paired 2×2 joint table of Native and Serial correctness and its point metrics
//! (paper §3.1, A.1).
//!
//! With `p_ab` the proportion of items with Native correctness `a` and Serial correctness `b`:
//! Native EM = p11 + p10, Serial EM = p11 + p01, SCR = p11 / (p11 + p10),
//! gain rate = p01 / (p01 + p00), loss mass = p10, gain mass = p01. Every conditional rate
//! carries its numerator and denominator and is undefined (`None`, never 0) when the
//! denominator is empty.

use serde::{Deserialize, Serialize};

/// One item's cell of the joint table. The discriminant is the item's 2-bit bootstrap code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum JointCell {
    /// Native and Serial correct.
    Both = 0,
    /// Native correct, Serial wrong (a loss).
    NativeOnly = 1,
    /// Native wrong, Serial correct (a gain).
    SerialOnly = 2,
    /// Both wrong.
    Neither = 3,
}

impl JointCell {
    /// The four cells in code order (both, native_only, serial_only, neither), i.e. `ALL[c]` has
    /// code `c`.
    pub const ALL: [JointCell; 4] = [
        JointCell::Both,
        JointCell::NativeOnly,
        JointCell::SerialOnly,
        JointCell::Neither,
    ];

    /// The cell of an item from its Native and Serial correctness.
    pub fn of(native_correct: bool, serial_correct: bool) -> JointCell {
        match (native_correct, serial_correct) {
            (true, true) => JointCell::Both,
            (true, false) => JointCell::NativeOnly,
            (false, true) => JointCell::SerialOnly,
            (false, false) => JointCell::Neither,
        }
    }

    /// The 2-bit code (0..4) used by the bootstrap.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The cell with bootstrap code `code`; `None` for a code of 4 or more.
    pub fn from_code(code: u8) -> Option<JointCell> {
        JointCell::ALL.get(usize::from(code)).copied()
    }

    /// Whether Native is correct in this cell (`Both` or `NativeOnly`).
    pub fn native_correct(self) -> bool {
        matches!(self, JointCell::Both | JointCell::NativeOnly)
    }

    /// Whether Serial is correct in this cell (`Both` or `SerialOnly`).
    pub fn serial_correct(self) -> bool {
        matches!(self, JointCell::Both | JointCell::SerialOnly)
    }
}

/// A count ratio with its parts. `value()` is `None` when the denominator is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ratio {
    /// The count above the fraction bar (e.g. items in the joint cell p11 for SCR).
    pub numerator: u64,
    /// The count below the fraction bar; 0 makes the ratio undefined.
    pub denominator: u64,
}

impl Ratio {
    /// The ratio `numerator / denominator`, kept as counts.
    pub fn new(numerator: u64, denominator: u64) -> Ratio {
        Ratio {
            numerator,
            denominator,
        }
    }

    /// `numerator / denominator`, or `None` for an empty denominator.
    pub fn value(&self) -> Option<f64> {
        ratio(self.numerator as f64, self.denominator as f64)
    }
}

/// The marginal bounds on SCR from Native EM `a` and Serial EM `b` (paper A.1):
/// `max(0, a + b − 1) / a ≤ SCR ≤ min(1, b / a)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScrBounds {
    /// Lower bound `max(0, a + b − 1) / a`, in [0, 1]: SCR when Native and Serial successes overlap
    /// as little as possible.
    pub lower: f64,
    /// Upper bound `min(1, b / a)`, in [0, 1]: SCR when Serial successes fall on Native successes
    /// as much as possible.
    pub upper: f64,
}

/// The paired 2×2 table of one group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct JointTable {
    /// Items with Native and Serial both correct (p11 · n).
    pub both: u64,
    /// Items with Native correct and Serial wrong, the losses (p10 · n, McNemar's b).
    pub native_only: u64,
    /// Items with Native wrong and Serial correct, the gains (p01 · n, McNemar's c).
    pub serial_only: u64,
    /// Items with Native and Serial both wrong (p00 · n).
    pub neither: u64,
}

impl JointTable {
    /// A table from its four cell counts (both, native_only, serial_only, neither).
    pub fn new(both: u64, native_only: u64, serial_only: u64, neither: u64) -> JointTable {
        JointTable {
            both,
            native_only,
            serial_only,
            neither,
        }
    }

    /// Counts one paired item.
    pub fn add(&mut self, native_correct: bool, serial_correct: bool) {
        self.add_cell(JointCell::of(native_correct, serial_correct));
    }

    /// Counts one paired item given its joint cell.
    pub fn add_cell(&mut self, cell: JointCell) {
        match cell {
            JointCell::Both => self.both += 1,
            JointCell::NativeOnly => self.native_only += 1,
            JointCell::SerialOnly => self.serial_only += 1,
            JointCell::Neither => self.neither += 1,
        }
    }

    /// Adds another table's counts (tables of disjoint item sets).
    pub fn merge(&mut self, other: &JointTable) {
        self.both += other.both;
        self.native_only += other.native_only;
        self.serial_only += other.serial_only;
        self.neither += other.neither;
    }

    /// The count of items in `cell`.
    pub fn count(&self, cell: JointCell) -> u64 {
        match cell {
            JointCell::Both => self.both,
            JointCell::NativeOnly => self.native_only,
            JointCell::SerialOnly => self.serial_only,
            JointCell::Neither => self.neither,
        }
    }

    /// Number of items.
    pub fn n(&self) -> u64 {
        self.both + self.native_only + self.serial_only + self.neither
    }

    /// Items with Native correct (both + native_only), the numerator of Native EM and the
    /// denominator of SCR.
    pub fn native_correct(&self) -> u64 {
        self.both + self.native_only
    }

    /// Items with Serial correct (both + serial_only), the numerator of Serial EM.
    pub fn serial_correct(&self) -> u64 {
        self.both + self.serial_only
    }

    /// Discordant pairs (`native_only + serial_only`), the McNemar sample.
    pub fn discordant(&self) -> u64 {
        self.native_only + self.serial_only
    }

    /// Native EM over all items.
    pub fn native_em(&self) -> Ratio {
        Ratio::new(self.native_correct(), self.n())
    }

    /// Serial EM over all items.
    pub fn serial_em(&self) -> Ratio {
        Ratio::new(self.serial_correct(), self.n())
    }

    /// SCR = both / (both + native_only): Serial success among Native successes.
    pub fn scr(&self) -> Ratio {
        Ratio::new(self.both, self.native_correct())
    }

    /// Gain rate = serial_only / (serial_only + neither): Serial success among Native failures.
    pub fn gain_rate(&self) -> Ratio {
        Ratio::new(self.serial_only, self.serial_only + self.neither)
    }

    /// Loss mass = native_only / n.
    pub fn loss_mass(&self) -> Ratio {
        Ratio::new(self.native_only, self.n())
    }

    /// Gain mass = serial_only / n (loss mass − gain mass is the marginal accuracy gap).
    pub fn gain_mass(&self) -> Ratio {
        Ratio::new(self.serial_only, self.n())
    }

    /// The marginal bounds on SCR; `None` when Native has no success (a = 0).
    ///
    /// Computed from counts: with N Native and S Serial successes among n items, the bounds
    /// are `max(0, N + S − n) / N` and `min(N, S) / N`, the same quantities as
    /// `max(0, a + b − 1) / a` and `min(1, b / a)` without rounding.
    pub fn scr_bounds(&self) -> Option<ScrBounds> {
        let native = self.native_correct();
        if native == 0 {
            return None;
        }
        let serial = self.serial_correct();
        let overlap_floor = (native + serial).saturating_sub(self.n());
        Some(ScrBounds {
            lower: overlap_floor as f64 / native as f64,
            upper: native.min(serial) as f64 / native as f64,
        })
    }

    /// The counts as floats in cell-code order (both, native_only, serial_only, neither).
    pub fn as_f64(&self) -> [f64; 4] {
        [
            self.both as f64,
            self.native_only as f64,
            self.serial_only as f64,
            self.neither as f64,
        ]
    }
}

impl std::ops::AddAssign for JointTable {
    fn add_assign(&mut self, rhs: JointTable) {
        self.merge(&rhs);
    }
}

impl std::ops::Add for JointTable {
    type Output = JointTable;
    fn add(mut self, rhs: JointTable) -> JointTable {
        self.merge(&rhs);
        self
    }
}

impl Extend<(bool, bool)> for JointTable {
    fn extend<T: IntoIterator<Item = (bool, bool)>>(&mut self, iter: T) {
        for (native, serial) in iter {
            self.add(native, serial);
        }
    }
}

impl FromIterator<(bool, bool)> for JointTable {
    fn from_iter<T: IntoIterator<Item = (bool, bool)>>(iter: T) -> JointTable {
        let mut table = JointTable::default();
        table.extend(iter);
        table
    }
}

/// The equal-length mixture (paper D.15): every length present gets weight
/// 1 / (number of lengths present) — 1/6 for L = 3..8 — and every item of length L weight
/// 1 / (lengths · n_L). Weighted rates are ratios of weighted proportions, so
/// weighted SCR = Σ_L w_L p11_L / Σ_L w_L (p11_L + p10_L); success classes are not
/// rebalanced.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EqualLengthMixture {
    /// Lengths with at least one item.
    pub lengths: usize,
    /// Native EM of the mixture, Σ_L (p11_L + p10_L) / lengths; `None` with no items.
    pub native_em: Option<f64>,
    /// Serial EM of the mixture, Σ_L (p11_L + p01_L) / lengths; `None` with no items.
    pub serial_em: Option<f64>,
    /// `None` when no length has a Native success.
    pub scr: Option<f64>,
}

/// The equal-length mixture of per-length tables. Tables without items are not "present"
/// and get no weight; with no items at all every rate is `None`.
pub fn equal_length_weighted<'a, I>(tables: I) -> EqualLengthMixture
where
    I: IntoIterator<Item = &'a JointTable>,
{
    let cells: Vec<[f64; 4]> = tables.into_iter().map(JointTable::as_f64).collect();
    let (native_em, serial_em, scr) = equal_length_rates(cells.iter().copied());
    EqualLengthMixture {
        lengths: cells.iter().filter(|c| c.iter().sum::<f64>() > 0.0).count(),
        native_em,
        serial_em,
        scr,
    }
}

/// `num / den`, `None` for an empty denominator.
#[inline]
pub(crate) fn ratio(num: f64, den: f64) -> Option<f64> {
    if den > 0.0 {
        Some(num / den)
    } else {
        None
    }
}

/// (Native EM, Serial EM, SCR, gain rate, loss mass) from cell counts in code order.
/// Shared by the point estimate and every bootstrap draw so that both use the same arithmetic
/// as [`Ratio::value`].
#[inline]
pub(crate) fn joint_rates(cells: [f64; 4]) -> [Option<f64>; 5] {
    let [both, native_only, serial_only, neither] = cells;
    let n = both + native_only + serial_only + neither;
    [
        ratio(both + native_only, n),
        ratio(both + serial_only, n),
        ratio(both, both + native_only),
        ratio(serial_only, serial_only + neither),
        ratio(native_only, n),
    ]
}

/// Equal-length (Native EM, Serial EM, SCR) from per-length cell counts in code order.
/// Shared by the point estimate and every bootstrap draw so that both use the same arithmetic.
#[inline]
pub(crate) fn equal_length_rates<I>(cells: I) -> (Option<f64>, Option<f64>, Option<f64>)
where
    I: IntoIterator<Item = [f64; 4]>,
{
    let mut lengths = 0.0;
    let (mut p11, mut p1x, mut px1) = (0.0, 0.0, 0.0);
    for [both, native_only, serial_only, neither] in cells {
        let n = both + native_only + serial_only + neither;
        if n > 0.0 {
            lengths += 1.0;
            p11 += both / n;
            p1x += (both + native_only) / n;
            px1 += (both + serial_only) / n;
        }
    }
    if lengths == 0.0 {
        return (None, None, None);
    }
    // The common factor 1/lengths cancels in SCR; it is applied to the EMs only.
    (Some(p1x / lengths), Some(px1 / lengths), ratio(p11, p1x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_table1_jev_arithmetic() {
        // Table 1: Jev / math, joint counts 123/250/0/11 on 384 items.
        let t = JointTable::new(123, 250, 0, 11);
        assert_eq!(t.n(), 384);
        assert_eq!(t.native_em(), Ratio::new(373, 384));
        assert!((t.native_em().value().unwrap() - 0.971354).abs() < 1e-6); // 97.1
        assert!((t.serial_em().value().unwrap() - 0.320313).abs() < 1e-6); // 32.0
        assert_eq!(t.scr(), Ratio::new(123, 373));
        assert!((t.scr().value().unwrap() - 0.329759).abs() < 1e-6); // 33.0
        assert_eq!(t.gain_rate(), Ratio::new(0, 11));
        assert_eq!(t.gain_rate().value(), Some(0.0));
        assert_eq!(t.loss_mass(), Ratio::new(250, 384));
        let b = t.scr_bounds().unwrap();
        // max(0, a+b-1)/a = (373+123-384)/373, min(1, b/a) = 123/373.
        assert_eq!(b.lower, 112.0 / 373.0);
        assert_eq!(b.upper, 123.0 / 373.0);
    }

    #[test]
    fn paper_table2_qwen_turnover() {
        // Table 2: Qwen3-8B named fields 6/22/31/69 → Native 21.9, Serial 28.9, SCR 21.4.
        let t = JointTable::new(6, 22, 31, 69);
        assert!((t.native_em().value().unwrap() - 28.0 / 128.0).abs() < 1e-15);
        assert!((t.serial_em().value().unwrap() - 37.0 / 128.0).abs() < 1e-15);
        assert!((t.scr().value().unwrap() - 6.0 / 28.0).abs() < 1e-15);
        assert_eq!(t.discordant(), 53);
        let net = t.gain_mass().value().unwrap() - t.loss_mass().value().unwrap();
        assert!((net - 9.0 / 128.0).abs() < 1e-15);
    }

    #[test]
    fn empty_denominators_are_undefined() {
        let t = JointTable::new(0, 0, 3, 2);
        assert_eq!(t.scr().value(), None);
        assert_eq!(t.scr_bounds(), None);
        assert_eq!(JointTable::default().native_em().value(), None);
        assert_eq!(JointTable::new(4, 1, 0, 0).gain_rate().value(), None);
    }

    #[test]
    fn add_merge_and_collect_agree() {
        let pairs = [
            (true, true),
            (true, false),
            (false, true),
            (false, false),
            (true, true),
        ];
        let collected: JointTable = pairs.iter().copied().collect();
        let mut a: JointTable = pairs[..2].iter().copied().collect();
        let b: JointTable = pairs[2..].iter().copied().collect();
        a.merge(&b);
        assert_eq!(a, collected);
        assert_eq!(collected, JointTable::new(2, 1, 1, 1));
        for cell in JointCell::ALL {
            assert_eq!(JointCell::from_code(cell.code()), Some(cell));
            assert_eq!(
                JointCell::of(cell.native_correct(), cell.serial_correct()),
                cell
            );
        }
        assert_eq!(JointCell::from_code(4), None);
    }

    #[test]
    fn equal_length_weighting_by_hand() {
        // Length 3: 2 items, both correct on both arms; length 4: 4 items, Native 2/4,
        // Serial 1/4 (1 both, 1 native only, 0 serial only, 2 neither).
        let l3 = JointTable::new(2, 0, 0, 0);
        let l4 = JointTable::new(1, 1, 0, 2);
        let m = equal_length_weighted([&l3, &l4, &JointTable::default()]);
        assert_eq!(m.lengths, 2);
        assert_eq!(m.native_em, Some((1.0 + 0.5) / 2.0));
        assert_eq!(m.serial_em, Some((1.0 + 0.25) / 2.0));
        // (1 + 1/4) / (1 + 2/4)
        assert!((m.scr.unwrap() - 1.25 / 1.5).abs() < 1e-15);
        // Pooled SCR differs: 3/4.
        assert_eq!((l3 + l4).scr().value(), Some(0.75));
        let none = equal_length_weighted([&JointTable::new(0, 0, 1, 1)]);
        assert_eq!(none.scr, None);
        assert_eq!(none.native_em, Some(0.0));
    }
}
