//! The Prometheus exposition: families of counters, gauges and histograms gathered at each
//! scrape and written by `prometheus-client` in the text format 0.0.4 (names, `_total`
//! suffixes, label escaping and number formats are the crate's).
//!
//! Naming: every name starts with `c2s_`, counters end in `_total`, units end the names
//! (`_seconds`, `_ratio`, `_messages`, `_tokens`), and labels take bounded values only (model,
//! domain, comparison, dataset, outcome, topic and partition — never an item id or an error
//! message).

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use c2s_records::Metric;
use c2s_stats::MetricRow;

/// The `Content-Type` of the exposition.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Label pairs of one sample.
pub type Labels = Vec<(&'static str, String)>;

/// A sample's value: counts stay integers.
#[derive(Debug, Clone, Copy)]
pub enum Num {
    /// A count, written without a decimal point.
    Int(u64),
    /// A measured or derived value (seconds, ratios, rates).
    Float(f64),
}

#[derive(Debug)]
enum Samples {
    Counter(Vec<(Labels, Num)>),
    Gauge(Vec<(Labels, Num)>),
    Histogram(Vec<HistogramSample>),
}

/// One histogram sample: labels, sum, count, and each bucket's count (not cumulative) with its
/// upper bound.
pub type HistogramSample = (Labels, f64, u64, Vec<(f64, u64)>);

#[derive(Debug)]
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Samples,
}

/// The families of one scrape.
#[derive(Debug, Default)]
pub struct Families(Vec<Family>);

impl Families {
    /// A counter family; `name` without `_total` (the encoder appends it).
    pub fn counter(&mut self, name: &'static str, help: &'static str, samples: Vec<(Labels, Num)>) {
        self.0.push(Family {
            name,
            help,
            samples: Samples::Counter(samples),
        });
    }

    /// A gauge family: each sample is a current value, not a running total.
    pub fn gauge(&mut self, name: &'static str, help: &'static str, samples: Vec<(Labels, Num)>) {
        self.0.push(Family {
            name,
            help,
            samples: Samples::Gauge(samples),
        });
    }

    /// A histogram family: per sample the sum, the count and the count of each bucket (not
    /// cumulative) with its upper bound; the encoder adds `+Inf`.
    pub fn histogram(
        &mut self,
        name: &'static str,
        help: &'static str,
        samples: Vec<HistogramSample>,
    ) {
        self.0.push(Family {
            name,
            help,
            samples: Samples::Histogram(samples),
        });
    }

    /// The text exposition of these families.
    pub fn encode(self) -> String {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(self));
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::prometheus_text::encode(&mut out, &registry) {
            tracing::error!("live monitor: encoding the metrics: {e}");
        }
        out
    }
}

impl Collector for Families {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for f in &self.0 {
            let kind = match f.samples {
                Samples::Counter(_) => MetricType::Counter,
                Samples::Gauge(_) => MetricType::Gauge,
                Samples::Histogram(_) => MetricType::Histogram,
            };
            let mut metric = encoder.encode_descriptor(f.name, f.help, None, kind)?;
            match &f.samples {
                Samples::Counter(samples) => {
                    for (labels, v) in samples {
                        let mut e = metric.encode_family(labels)?;
                        match *v {
                            Num::Int(n) => e.encode_counter::<NoLabelSet, _, u64>(&n, None)?,
                            Num::Float(x) => e.encode_counter::<NoLabelSet, _, f64>(&x, None)?,
                        }
                    }
                }
                Samples::Gauge(samples) => {
                    for (labels, v) in samples {
                        let mut e = metric.encode_family(labels)?;
                        match *v {
                            Num::Int(n) => e.encode_gauge(&n)?,
                            Num::Float(x) => e.encode_gauge(&x)?,
                        }
                    }
                }
                Samples::Histogram(samples) => {
                    for (labels, sum, count, buckets) in samples {
                        metric
                            .encode_family(labels)?
                            .encode_histogram::<NoLabelSet>(*sum, *count, buckets, None)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The headline rows of a snapshot (all lengths) as gauges with their interval bounds: SCR,
/// Native EM and Serial EM per model × domain × comparison, and the items counted. An
/// undefined value (an empty denominator) has no sample.
pub fn snapshot_gauges(f: &mut Families, rows: &[MetricRow]) {
    type Family = (&'static str, &'static str, &'static str, &'static str);
    const FAMILIES: [(Metric, Family); 3] = [
        (
            Metric::Scr,
            (
                "c2s_scr_ratio",
                "Sequence Composition Rate (both correct / Native correct), all lengths, latest snapshot",
                "c2s_scr_ci_lower_ratio",
                "c2s_scr_ci_upper_ratio",
            ),
        ),
        (
            Metric::NativeEm,
            (
                "c2s_native_em_ratio",
                "Native exact match, all lengths, latest snapshot",
                "c2s_native_em_ci_lower_ratio",
                "c2s_native_em_ci_upper_ratio",
            ),
        ),
        (
            Metric::SerialEm,
            (
                "c2s_serial_em_ratio",
                "Serial exact match, all lengths, latest snapshot",
                "c2s_serial_em_ci_lower_ratio",
                "c2s_serial_em_ci_upper_ratio",
            ),
        ),
    ];
    let labels = |r: &MetricRow| -> Labels {
        vec![
            ("model", r.model.clone()),
            ("domain", r.domain_str().to_string()),
            ("comparison", r.comparison.clone()),
        ]
    };
    let all_lengths = |metric: Metric| {
        rows.iter()
            .filter(move |r| r.length.is_none() && r.metric == metric)
    };
    for (metric, (name, help, low, high)) in FAMILIES {
        let pick = |get: fn(&MetricRow) -> Option<f64>| -> Vec<(Labels, Num)> {
            all_lengths(metric)
                .filter_map(|r| get(r).map(|v| (labels(r), Num::Float(v))))
                .collect()
        };
        f.gauge(name, help, pick(|r| r.value));
        f.gauge(
            low,
            "Lower bound of the interval of the gauge without _ci_lower (the run's level)",
            pick(|r| r.ci_low),
        );
        f.gauge(
            high,
            "Upper bound of the interval of the gauge without _ci_upper (the run's level)",
            pick(|r| r.ci_high),
        );
    }
    f.gauge(
        "c2s_paired_items",
        "Items paired per model, domain and comparison in the latest snapshot",
        all_lengths(Metric::Both)
            .filter_map(|r| r.denominator.map(|d| (labels(r), Num::Int(d))))
            .collect(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_written_by_the_crate_in_the_text_format() {
        let mut f = Families::default();
        f.counter(
            "c2s_things",
            "Things",
            vec![(vec![("kind", "a\"b".into())], Num::Int(3))],
        );
        f.gauge("c2s_level_ratio", "Level", vec![(vec![], Num::Float(0.5))]);
        f.histogram(
            "c2s_wait_seconds",
            "Waits",
            vec![(vec![], 1.5, 3, vec![(0.1, 1), (1.0, 2)])],
        );
        let text = f.encode();
        assert!(text.contains("# TYPE c2s_things_total counter\n"), "{text}");
        assert!(
            text.contains("c2s_things_total{kind=\"a\\\"b\"} 3\n"),
            "{text}"
        );
        assert!(text.contains("c2s_level_ratio 0.5\n"), "{text}");
        assert!(
            text.contains("c2s_wait_seconds_bucket{le=\"1\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("c2s_wait_seconds_bucket{le=\"+Inf\"} 3\n"),
            "{text}"
        );
        assert!(text.contains("c2s_wait_seconds_count 3\n"), "{text}");
    }
}
