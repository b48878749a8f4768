//! Pieces of the page's state shared by a live run and `choice2seq view`: the paired table of
//! the report, and the headline values per model × domain × comparison.

use serde_json::{json, Value};

use c2s_records::Metric;
use c2s_stats::MetricRow;

use c2s_report::doc::Table;
use c2s_report::tables::{paired_summary, MetricIndex};

fn table_json(t: &Table) -> Value {
    json!({
        "text_columns": t.text_columns,
        "header": t.header,
        "rows": t.rows,
        "notes": t.notes,
    })
}

/// The report's paired table (joint cells, EMs and SCR with intervals, McNemar) of `rows`
/// (`null` without paired groups).
pub fn paired_table(rows: &[MetricRow], level: f64) -> Value {
    let index = MetricIndex::new(rows);
    let groups = index.paired_groups();
    if groups.is_empty() {
        return Value::Null;
    }
    table_json(&paired_summary(&index, &groups, level))
}

/// The all-lengths SCR, Native EM and Serial EM of each paired group, with exact values
/// (the page marks them up for checks against `choice2seq stats --json`).
pub fn headline(rows: &[MetricRow]) -> Value {
    let index = MetricIndex::new(rows);
    let value = |r: Option<&MetricRow>| match r {
        None => Value::Null,
        Some(r) => json!({
            "value": r.value,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "numerator": r.numerator,
            "denominator": r.denominator,
        }),
    };
    Value::Array(
        index
            .paired_groups()
            .iter()
            .map(|g| {
                json!({
                    "model": g.model,
                    "domain": g.domain,
                    "comparison": g.comparison,
                    "scr": value(index.get(g, None, Metric::Scr)),
                    "native_em": value(index.get(g, None, Metric::NativeEm)),
                    "serial_em": value(index.get(g, None, Metric::SerialEm)),
                })
            })
            .collect(),
    )
}
