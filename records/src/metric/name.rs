//! [`Metric`]: the names of the `metrics/` dataset's `metric` column, and [`ScoreKind`], the
//! confidence composites that name the calibration metrics.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::trajectory::Confidence;

/// Which confidence composite scores a completed string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ScoreKind {
    /// Product of the chosen probabilities.
    Product,
    /// exp(mean log chosen probability).
    GeometricMean,
    /// Smallest per-step top-choice probability.
    MinTop,
}

impl ScoreKind {
    /// The three composites, in the order of a confidence key's scores.
    pub const ALL: [ScoreKind; 3] = [
        ScoreKind::Product,
        ScoreKind::GeometricMean,
        ScoreKind::MinTop,
    ];

    /// This composite's value in a string's `Confidence` record.
    pub fn of(self, c: &Confidence) -> f64 {
        match self {
            ScoreKind::Product => c.product,
            ScoreKind::GeometricMean => c.geometric_mean,
            ScoreKind::MinTop => c.min_top,
        }
    }

    /// snake_case name, as in `Confidence`'s fields.
    pub fn as_str(self) -> &'static str {
        match self {
            ScoreKind::Product => "product",
            ScoreKind::GeometricMean => "geometric_mean",
            ScoreKind::MinTop => "min_top",
        }
    }
}

/// A calibration or ranking statistic of one confidence composite (`brier_product`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScoreStat {
    /// Brier score.
    Brier,
    /// Expected calibration error (ten bins).
    Ece,
    /// Area under the ROC curve.
    Auroc,
    /// Average precision.
    Ap,
}

impl ScoreStat {
    /// The four statistics, in the order statistics writes them.
    pub const ALL: [ScoreStat; 4] = [
        ScoreStat::Brier,
        ScoreStat::Ece,
        ScoreStat::Auroc,
        ScoreStat::Ap,
    ];

    /// The metric name's stem: `brier`, `ece`, `auroc`, `ap`.
    pub fn as_str(self) -> &'static str {
        match self {
            ScoreStat::Brier => "brier",
            ScoreStat::Ece => "ece",
            ScoreStat::Auroc => "auroc",
            ScoreStat::Ap => "ap",
        }
    }
}

macro_rules! fixed_metrics {
    ($($variant:ident => $name:literal, $doc:literal;)*) => {
        /// A metric of the `metrics/` dataset. Its name (`Display`, `FromStr`, the serde form
        /// and the Parquet column) is snake_case: the fixed names of [`Metric::ORDER`], then
        /// the parametric `position_accuracy_N` and `{brier,ece,auroc,ap}_{score}`, and
        /// `snapshot_error` for a snapshot that failed.
        ///
        /// `Ord` is the declaration order (for keys), not the row order ([`Metric::rank`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Metric {
            $(#[doc = $doc] $variant,)*
            /// Accuracy at one-based position N (`position_accuracy_N`).
            PositionAccuracy(u32),
            /// A calibration or ranking statistic of a confidence composite (`brier_product`).
            Score(ScoreStat, ScoreKind),
            /// A snapshot whose statistics failed (the row's comparison holds the message).
            SnapshotError,
        }

        impl Metric {
            /// The fixed metrics in the documented row order (the statistics crate's
            /// `METRIC_ORDER`); position accuracies and score metrics follow, by name.
            pub const ORDER: &'static [Metric] = &[$(Metric::$variant,)*];

            fn fixed_name(self) -> Option<&'static str> {
                match self {
                    $(Metric::$variant => Some($name),)*
                    _ => None,
                }
            }
        }
    };
}

fixed_metrics! {
    Both => "both", "Both arms correct (count).";
    NativeOnly => "native_only", "Only the reference arm correct (count).";
    SerialOnly => "serial_only", "Only the compared arm correct (count).";
    Neither => "neither", "Neither arm correct (count).";
    NativeEm => "native_em", "The reference arm's exact match.";
    SerialEm => "serial_em", "The compared arm's exact match.";
    Scr => "scr", "Selection-construction retention.";
    ScrBootstrapDropped => "scr_bootstrap_dropped", "SCR's undefined bootstrap draws.";
    GainRate => "gain_rate", "Gain rate.";
    GainRateBootstrapDropped => "gain_rate_bootstrap_dropped", "Gain rate's undefined bootstrap draws.";
    LossMass => "loss_mass", "Loss mass.";
    ScrLowerBound => "scr_lower_bound", "SCR's lower bound from the margins.";
    ScrUpperBound => "scr_upper_bound", "SCR's upper bound from the margins.";
    NativeEmEqualLength => "native_em_equal_length", "Reference EM, lengths weighted equally.";
    SerialEmEqualLength => "serial_em_equal_length", "Compared EM, lengths weighted equally.";
    ScrEqualLength => "scr_equal_length", "SCR, lengths weighted equally.";
    ScrEqualLengthBootstrapDropped => "scr_equal_length_bootstrap_dropped", "Equal-length SCR's undefined bootstrap draws.";
    McnemarP => "mcnemar_p", "Exact McNemar p-value.";
    McnemarPHolm => "mcnemar_p_holm", "Holm-adjusted McNemar p-value.";
    Items => "items", "Items in the cell.";
    StringEm => "string_em", "String exact match (independence).";
    IndependenceReference => "independence_reference", "Product of the position accuracies.";
    EmMinusReference => "em_minus_reference", "String EM minus the independence reference.";
    Prevalence => "prevalence", "Share of correct strings.";
    BrierPrevalence => "brier_prevalence", "Brier score of the prevalence baseline.";
    ApPrevalence => "ap_prevalence", "Average precision of the prevalence baseline.";
    AurocNegativeLength => "auroc_negative_length", "AUROC of the negative-length baseline.";
    ApNegativeLength => "ap_negative_length", "Average precision of the negative-length baseline.";
}

/// A string that is no metric name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a metric name")]
pub struct MetricNameError(pub String);

impl Metric {
    /// The metric with `_bootstrap_dropped` appended, where there is one.
    pub fn bootstrap_dropped(self) -> Option<Metric> {
        match self {
            Metric::Scr => Some(Metric::ScrBootstrapDropped),
            Metric::GainRate => Some(Metric::GainRateBootstrapDropped),
            Metric::ScrEqualLength => Some(Metric::ScrEqualLengthBootstrapDropped),
            _ => None,
        }
    }

    /// The snake_case name.
    pub fn name(self) -> Cow<'static, str> {
        match self {
            Metric::PositionAccuracy(n) => Cow::Owned(format!("position_accuracy_{n}")),
            Metric::Score(stat, kind) => Cow::Owned(format!("{}_{}", stat.as_str(), kind.as_str())),
            Metric::SnapshotError => Cow::Borrowed("snapshot_error"),
            m => Cow::Borrowed(m.fixed_name().unwrap_or_default()),
        }
    }

    /// The metric named `name`.
    pub fn parse(name: &str) -> Result<Metric, MetricNameError> {
        let err = || MetricNameError(name.to_string());
        if let Some(m) = Metric::ORDER.iter().find(|m| m.fixed_name() == Some(name)) {
            return Ok(*m);
        }
        if name == "snapshot_error" {
            return Ok(Metric::SnapshotError);
        }
        if let Some(n) = name.strip_prefix("position_accuracy_") {
            if n.is_empty()
                || !n.bytes().all(|b| b.is_ascii_digit())
                || (n.len() > 1 && n.starts_with('0'))
            {
                return Err(err());
            }
            return n.parse().map(Metric::PositionAccuracy).map_err(|_| err());
        }
        for stat in ScoreStat::ALL {
            if let Some(kind) = name
                .strip_prefix(stat.as_str())
                .and_then(|r| r.strip_prefix('_'))
            {
                if let Some(k) = ScoreKind::ALL.into_iter().find(|k| k.as_str() == kind) {
                    return Ok(Metric::Score(stat, k));
                }
            }
        }
        Err(err())
    }

    /// The documented row order: fixed metrics by [`Metric::ORDER`], then the others by name
    /// with a numeric suffix in numeric order (`position_accuracy_2` before
    /// `position_accuracy_10`).
    pub fn rank(self) -> (usize, Cow<'static, str>, u64) {
        match Metric::ORDER.iter().position(|m| *m == self) {
            Some(i) => (i, Cow::Borrowed(""), 0),
            None => match self {
                Metric::PositionAccuracy(n) => (
                    Metric::ORDER.len(),
                    Cow::Borrowed("position_accuracy"),
                    u64::from(n),
                ),
                m => (Metric::ORDER.len(), m.name(), 0),
            },
        }
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl std::str::FromStr for Metric {
    type Err = MetricNameError;

    fn from_str(s: &str) -> Result<Metric, MetricNameError> {
        Metric::parse(s)
    }
}

impl Serialize for Metric {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for Metric {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Metric, D::Error> {
        let name = String::deserialize(d)?;
        Metric::parse(&name).map_err(serde::de::Error::custom)
    }
}

/// A metric given by value or by name, for look-ups that accept either (a name that is no
/// metric finds nothing).
pub trait AsMetric {
    /// The metric, if this names one.
    fn as_metric(&self) -> Option<Metric>;
}

impl AsMetric for Metric {
    fn as_metric(&self) -> Option<Metric> {
        Some(*self)
    }
}

impl AsMetric for &str {
    fn as_metric(&self) -> Option<Metric> {
        Metric::parse(self).ok()
    }
}

impl AsMetric for String {
    fn as_metric(&self) -> Option<Metric> {
        Metric::parse(self).ok()
    }
}

impl<T: AsMetric + ?Sized> AsMetric for &T {
    fn as_metric(&self) -> Option<Metric> {
        (**self).as_metric()
    }
}

/// Comparisons with a name: `r.metric == "scr"` compares the metric's name.
impl PartialEq<str> for Metric {
    fn eq(&self, other: &str) -> bool {
        self.name() == other
    }
}

impl PartialEq<&str> for Metric {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        let mut all: Vec<Metric> = Metric::ORDER.to_vec();
        all.extend([Metric::PositionAccuracy(1), Metric::PositionAccuracy(12)]);
        for stat in ScoreStat::ALL {
            for kind in ScoreKind::ALL {
                all.push(Metric::Score(stat, kind));
            }
        }
        all.push(Metric::SnapshotError);
        for m in all {
            assert_eq!(Metric::parse(&m.name()), Ok(m));
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{m}\""));
            assert_eq!(serde_json::from_str::<Metric>(&json).unwrap(), m);
        }
        assert_eq!(Metric::Scr.to_string(), "scr");
        assert_eq!(
            Metric::Score(ScoreStat::Ap, ScoreKind::MinTop).to_string(),
            "ap_min_top"
        );
        for junk in [
            "",
            "scr_",
            "position_accuracy_",
            "position_accuracy_x",
            "position_accuracy_01",
            "brier_",
            "brier_bogus",
            "Scr",
        ] {
            assert!(Metric::parse(junk).is_err(), "{junk}");
        }
        assert!(Metric::Scr == "scr");
    }

    #[test]
    fn rank_orders_position_accuracies_numerically() {
        let mut ms = vec![
            Metric::PositionAccuracy(10),
            Metric::Score(ScoreStat::Brier, ScoreKind::Product),
            Metric::PositionAccuracy(2),
            Metric::Scr,
            Metric::Both,
        ];
        ms.sort_by_key(|m| m.rank());
        assert_eq!(
            ms,
            [
                Metric::Both,
                Metric::Scr,
                Metric::Score(ScoreStat::Brier, ScoreKind::Product),
                Metric::PositionAccuracy(2),
                Metric::PositionAccuracy(10),
            ]
        );
    }
}
