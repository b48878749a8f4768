//! Errors of the statistics library. Bad input is reported, never unwrapped.

use thiserror::Error;

/// Everything that can be wrong with the input of a statistic.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StatsError {
    /// A confidence level outside the open interval (0, 1).
    #[error("confidence level {0} is not in (0, 1)")]
    InvalidLevel(f64),
    /// A success count larger than its trial count.
    #[error("success count {k} exceeds trial count {n}")]
    InvalidCount {
        /// The number of successes given.
        k: u64,
        /// The number of trials given, smaller than `k`.
        n: u64,
    },
    /// A bootstrap asked for zero draws.
    #[error("the bootstrap needs at least one draw")]
    ZeroDraws,
    /// A p-value that is NaN or outside [0, 1].
    #[error("p-value {0} is not in [0, 1]")]
    InvalidPValue(f64),
    /// A probability score (Brier, ECE) that is NaN or outside [0, 1].
    #[error("score {0} is not a probability in [0, 1]")]
    InvalidScore(f64),
    /// A ranking score that is NaN or infinite.
    #[error("score {0} is not finite")]
    NonFiniteScore(f64),
    /// An item's share of correct observations with no observation or more correct than
    /// observed.
    #[error("item {item_id}: {correct} correct of {n} observations is not a share")]
    BadShare {
        /// The offending item's id.
        item_id: String,
        /// Its number of correct observations.
        correct: u32,
        /// Its number of observations (zero, or below `correct`).
        n: u32,
    },
    /// The same item twice in one group.
    #[error("item {item_id} occurs more than once in group {group}")]
    DuplicateItem {
        /// A label of the group (model, domain, comparison, arm or spec) the item was seen in.
        group: String,
        /// The id of the repeated item (for dialogues: dialogue, turn and field).
        item_id: String,
    },
    /// A target length that does not fit the metric row (`u32`).
    #[error("length {0} does not fit in u32")]
    LengthOutOfRange(usize),
    /// A bootstrap code outside the declared code alphabet.
    #[error("bootstrap code {code} is not below the code count {k}")]
    CodeOutOfRange {
        /// The offending item code.
        code: u8,
        /// The size of the code alphabet; valid codes are `0..k`.
        k: usize,
    },
    /// A code alphabet that is empty, too large for per-item codes (at most 256), or a count
    /// vector of another length than the alphabet.
    #[error("code count {0} does not fit the bootstrap's code alphabet")]
    InvalidCodeCount(usize),
    /// The same stratum key twice in one sample.
    #[error("stratum {0} occurs more than once")]
    DuplicateStratum(u32),
    /// A stratum with more items than a bootstrap count holds.
    #[error("stratum {key} holds {items} items, more than 2^32 - 1")]
    StratumTooLarge {
        /// The stratum's key (the target length in the length-stratified bootstrap).
        key: u32,
        /// The number of items it holds.
        items: u64,
    },
    /// A count that would become negative (a retraction of something never counted).
    #[error("count of {0} would become negative")]
    NegativeCount(String),
    /// A trajectory whose per-position correctness does not have one entry per position.
    #[error("item {item_id}: {found} position outcomes for length {expected}")]
    PositionCount {
        /// The offending trajectory's item id.
        item_id: String,
        /// The trajectory's target length: the number of positions it should report.
        expected: usize,
        /// The number of per-position outcomes it does report.
        found: usize,
    },
    /// A parent with outcomes under another number of templates than the first parent.
    #[error("item {item_id}: outcomes under {found} templates, expected {expected}")]
    TemplateCount {
        /// The offending parent item's id.
        item_id: String,
        /// The number of templates of the first parent, which every parent must match.
        expected: usize,
        /// The number of templates this parent has outcomes under.
        found: usize,
    },
    /// More templates than one item code holds, or none.
    #[error("{0} templates: the template bootstrap takes 1 to 4")]
    TemplatesOutOfRange(usize),
    /// A trajectory given to a group of another model, domain, arm or length.
    #[error("item {item_id} does not belong to group {group}")]
    MixedGroup {
        /// The label of the group (model, domain, arm, length) being estimated.
        group: String,
        /// The id of the trajectory's item, which belongs elsewhere.
        item_id: String,
    },
    /// A comparison label declared in more than one Holm family.
    #[error("comparison {0:?} is declared in more than one Holm family")]
    FamilyOverlap(String),
    /// A Holm family without members.
    #[error("Holm family {0:?} has no comparisons")]
    EmptyFamily(String),
    /// Statrs refused the parameters of a distribution.
    #[error("distribution parameters rejected: {0}")]
    Distribution(String),
}
