//! The `metrics/` dataset's row, the scope of a Holm family and the label of a paired
//! comparison: what statistics computes, the sinks write and the config names.

use serde::{Deserialize, Serialize};

use crate::arm::ArmSpec;
use crate::item::Domain;

mod name;

pub use name::{AsMetric, Metric, MetricNameError, ScoreKind, ScoreStat};

/// One row of the `metrics/` dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRow {
    /// Snapshot number: increasing over the run, continued on resume.
    pub snapshot: u64,
    /// Model name; empty in a `snapshot_error` row.
    pub model: String,
    /// The domain; `None` in a `snapshot_error` row (an empty string in JSON and in the
    /// Parquet column, as before the domain was typed).
    #[serde(with = "domain_or_empty")]
    pub domain: Option<Domain>,
    /// `None` = all lengths.
    pub length: Option<u32>,
    /// E.g. `Native/code vs Serial/Full/code` ([`comparison_label`]); an arm label for
    /// single-arm metrics; the message in a `snapshot_error` row.
    pub comparison: String,
    /// The metric (its snake_case name in JSON and Parquet).
    pub metric: Metric,
    /// Point value; `None` when undefined (e.g. an empty denominator).
    pub value: Option<f64>,
    /// Count numerator, when the metric is a ratio or a count.
    pub numerator: Option<u64>,
    /// Count denominator, with `numerator`.
    pub denominator: Option<u64>,
    /// Lower bound of the interval; `None` without one.
    pub ci_low: Option<f64>,
    /// Upper bound of the interval; `None` without one.
    pub ci_high: Option<f64>,
    /// `bootstrap_percentile` or `clopper_pearson`.
    pub ci_method: Option<String>,
}

impl MetricRow {
    /// The domain's name; empty in a `snapshot_error` row (the Parquet column's value).
    pub fn domain_str(&self) -> &'static str {
        self.domain.map_or("", Domain::as_str)
    }

    /// A row of `metric` with no value, counts or interval yet.
    pub fn empty(
        snapshot: u64,
        model: &str,
        domain: Option<Domain>,
        length: Option<u32>,
        comparison: &str,
        metric: Metric,
    ) -> MetricRow {
        MetricRow {
            snapshot,
            model: model.to_string(),
            domain,
            length,
            comparison: comparison.to_string(),
            metric,
            value: None,
            numerator: None,
            denominator: None,
            ci_low: None,
            ci_high: None,
            ci_method: None,
        }
    }
}

/// Which tests share a Holm family beyond their comparison labels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FamilyScope {
    /// One family per (model, domain).
    #[default]
    PerModelDomain,
    /// One family per model, across domains.
    PerModel,
    /// One family per domain, across models.
    PerDomain,
    /// One family over every model and domain (e.g. the paper's primary Native/Serial tests).
    Global,
}

impl FamilyScope {
    /// Every scope, in declaration order (the order [`FamilyScope::parse`] searches).
    pub const ALL: [FamilyScope; 4] = [
        FamilyScope::PerModelDomain,
        FamilyScope::PerModel,
        FamilyScope::PerDomain,
        FamilyScope::Global,
    ];

    /// Config and manifest name.
    pub fn as_str(self) -> &'static str {
        match self {
            FamilyScope::PerModelDomain => "per_model_domain",
            FamilyScope::PerModel => "per_model",
            FamilyScope::PerDomain => "per_domain",
            FamilyScope::Global => "global",
        }
    }

    /// The scope named `name`; `None` for any other string (never a silent default).
    pub fn parse(name: &str) -> Option<FamilyScope> {
        FamilyScope::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// The comparison label of a Native/Serial pairing, from the two arms' labels.
pub fn comparison_label(native_arm: &str, serial_arm: &str) -> String {
    format!("{native_arm}{COMPARISON_SEPARATOR}{serial_arm}")
}

/// The two arm labels of a comparison label ([`comparison_label`]'s inverse); `None` for a
/// label without ` vs ` (a single arm's rows).
pub fn comparison_arms(comparison: &str) -> Option<(&str, &str)> {
    comparison.split_once(COMPARISON_SEPARATOR)
}

/// What joins the two arm labels of a comparison label.
pub const COMPARISON_SEPARATOR: &str = " vs ";

/// The comparison label of the pairing of two specs (`Native/code vs Serial/Full/code`).
pub fn comparison_of(native: &ArmSpec, serial: &ArmSpec) -> String {
    comparison_label(&native.label(), &serial.label())
}

/// The serde form of a metric row's domain: its name, or the empty string where there is none.
mod domain_or_empty {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::item::Domain;

    pub fn serialize<S: Serializer>(domain: &Option<Domain>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(domain.map_or("", Domain::as_str))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Domain>, D::Error> {
        let name = String::deserialize(d)?;
        if name.is_empty() {
            return Ok(None);
        }
        Domain::parse(&name)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("`{name}` is not a domain")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON form is the strings written before the row was typed.
    #[test]
    fn json_form_keeps_the_strings() {
        let error = MetricRow::empty(2, "", None, None, "boom", Metric::SnapshotError);
        let json = serde_json::to_value(&error).unwrap();
        assert_eq!(json["domain"], "");
        assert_eq!(json["metric"], "snapshot_error");
        let row = MetricRow::empty(
            2,
            "m",
            Some(Domain::SymbolicDigits),
            Some(3),
            "Native/code vs Serial/Full/code",
            Metric::PositionAccuracy(2),
        );
        let json = serde_json::to_value(&row).unwrap();
        assert_eq!(json["domain"], Domain::SymbolicDigits.as_str());
        assert_eq!(json["metric"], "position_accuracy_2");
        for r in [error, row] {
            let back: MetricRow =
                serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
            assert_eq!(back, r);
        }
    }
}
