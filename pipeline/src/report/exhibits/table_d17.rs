//! Table D17: "Position-query failure occurs without hitting the output cap. Budgets and
//! observed maxima are new tokens, including special tokens; truncated counts use recorded
//! request flags." D.18: "Raw successful request records retain generated token IDs and the
//! truncation flag. All 1,056 position-query requests stop within two tokens, below the
//! eight-token cap."
//!
//! Columns as printed: Task, Interface, Requests, Cap, Max, Truncated; rows per domain:
//! Position (Serial's generated character), PrefixContinue, WholeGenerate, from Table 3's
//! panel (`config/panels/table3.toml`). Ours count the run's successful requests (no error):
//! the cap is the request's greedy budget, the maximum its recorded completion tokens (the
//! engines count the end token they stop on), truncated the requests whose recorded flag says
//! the budget ran out.

use std::collections::BTreeMap;

use c2s_records::Decoding;
use c2s_sinks::RequestRow;
use serde::{Deserialize, Serialize};

use super::paper::PaperTable;
use super::{paper_domain, run_of, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::UNDEFINED;

/// Table D17's interfaces, in its order, with the arm each is run as.
pub const INTERFACES: [(&str, &str); 3] = [
    ("Position", "Serial"),
    ("PrefixContinue", "PrefixContinue"),
    ("WholeGenerate", "WholeGenerate"),
];

/// One row of Table D17 as printed (Qwen3.5-27B).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct PaperRow {
    /// The task (domain) as printed: `lexical` or `math`.
    pub task: String,
    /// One of [`INTERFACES`]' printed names.
    pub interface: String,
    /// Successful requests.
    pub requests: u64,
    /// The greedy budget of new tokens.
    pub cap: u32,
    /// The largest observed completion, in new tokens (special tokens included).
    pub max: u32,
    /// Requests whose recorded flag says the budget ran out.
    pub truncated: u64,
}

/// Table D17 as printed.
pub static PAPER: PaperTable<PaperRow> = PaperTable::new("tableD17");

/// One of our rows' tallies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budget {
    /// Successful requests (no error) counted.
    pub requests: u64,
    /// The smallest and largest greedy budget among the requests.
    pub cap: Option<(u32, u32)>,
    /// The largest recorded completion tokens (the end token included).
    pub max: u32,
    /// Requests whose recorded truncation flag says the budget ran out.
    pub truncated: u64,
}

/// Tallies per (model, task as printed, interface), from the run's requests; `domain_of` maps
/// an item id to its domain (the requests do not carry it).
pub fn budgets(
    requests: &[RequestRow],
    domain_of: &BTreeMap<String, String>,
) -> BTreeMap<(String, String, &'static str), Budget> {
    let mut out: BTreeMap<(String, String, &'static str), Budget> = BTreeMap::new();
    for r in requests.iter().filter(|r| r.error.is_none()) {
        let kind = r.arm.split('/').next().unwrap_or(&r.arm);
        let Some(&(interface, _)) = INTERFACES.iter().find(|(_, arm)| *arm == kind) else {
            continue;
        };
        let Some(Decoding::Greedy { max_new_tokens }) =
            c2s_sinks::codes::parse_decoding(&r.decoding)
        else {
            continue;
        };
        let task = domain_of
            .get(&r.item_id)
            .map_or(UNDEFINED, |d| paper_domain(d))
            .to_string();
        let b = out.entry((r.model.clone(), task, interface)).or_default();
        b.requests += 1;
        b.cap = Some(match b.cap {
            None => (max_new_tokens, max_new_tokens),
            Some((lo, hi)) => (lo.min(max_new_tokens), hi.max(max_new_tokens)),
        });
        b.max = b.max.max(r.completion_tokens);
        b.truncated += u64::from(r.truncated == Some(true));
    }
    out
}

const HEADER: [&str; 6] = ["Task", "Interface", "Requests", "Cap", "Max", "Truncated"];

fn interface_rank(interface: &str) -> usize {
    INTERFACES
        .iter()
        .position(|(i, _)| *i == interface)
        .unwrap_or(INTERFACES.len())
}

/// Table D17's document: ours per model, the paper's rows, and ours beside the paper's row.
pub fn layout(ours: &BTreeMap<(String, String, &'static str), Budget>) -> anyhow::Result<Doc> {
    let printed = PAPER.rows()?;
    let mut doc = Doc::new("Table D17: Observed generation budgets");
    doc.p(
        "Position-query failure occurs without hitting the output cap. Budgets and observed \
         maxima are new tokens, including special tokens; truncated counts use recorded \
         request flags.",
    );
    let mut by_model: BTreeMap<&str, Vec<(&str, &str, &Budget)>> = BTreeMap::new();
    for ((model, task, interface), b) in ours {
        by_model
            .entry(model.as_str())
            .or_default()
            .push((task.as_str(), interface, b));
    }
    for (model, mut rows) in by_model {
        rows.sort_by_key(|(task, interface, _)| (*task, interface_rank(interface)));
        doc.h(2, format!("This run: {model}"));
        doc.table(Table {
            text_columns: 2,
            header: HEADER.map(String::from).to_vec(),
            rows: rows
                .iter()
                .map(|(task, interface, b)| {
                    vec![
                        task.to_string(),
                        interface.to_string(),
                        b.requests.to_string(),
                        match b.cap {
                            None => UNDEFINED.to_string(),
                            Some((lo, hi)) if lo == hi => lo.to_string(),
                            Some((lo, hi)) => format!("{lo}–{hi}"),
                        },
                        b.max.to_string(),
                        b.truncated.to_string(),
                    ]
                })
                .collect(),
            notes: vec![
                "Successful requests of table3 (no error). Max: the largest recorded completion \
                 tokens, the end token included; truncated: the budget ran out."
                    .into(),
            ],
        });
    }
    doc.h(2, "The paper (Table D17, Qwen3.5-27B)");
    doc.table(Table {
        text_columns: 2,
        header: HEADER.map(String::from).to_vec(),
        rows: printed
            .iter()
            .map(|p| {
                vec![
                    p.task.to_string(),
                    p.interface.to_string(),
                    p.requests.to_string(),
                    p.cap.to_string(),
                    p.max.to_string(),
                    p.truncated.to_string(),
                ]
            })
            .collect(),
        notes: vec![
            "The paper's 528 position queries per domain are 96 items × 5.50 calls (Table 3)."
                .into(),
        ],
    });
    Ok(doc)
}

/// Read Table 3's run and lay out the table.
pub fn document(runs: &[PanelRun]) -> anyhow::Result<Doc> {
    let run = run_of(runs, "table3")?;
    let loaded = run.load()?;
    let domain_of: BTreeMap<String, String> = loaded
        .trajectories
        .iter()
        .map(|t| (t.item_id.clone(), t.domain.as_str().to_string()))
        .collect();
    let mut requests = Vec::new();
    for dir in &run.run_dirs {
        requests.extend(c2s_sinks::read_requests(&dir.join("requests"))?);
    }
    layout(&budgets(&requests, &domain_of))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's position-query count is Table 3's calls per item over its 96 items.
    #[test]
    fn the_papers_position_queries_are_table3s_calls() {
        let calls = super::super::table3::PAPER
            .rows()
            .unwrap()
            .iter()
            .find(|p| p.interface == "Position query")
            .map(|p| p.calls)
            .unwrap();
        for p in PAPER
            .rows()
            .unwrap()
            .iter()
            .filter(|p| p.interface == "Position")
        {
            assert_eq!(p.requests as f64, calls * 96.0);
            assert!(p.max <= p.cap);
        }
    }

    fn request(arm: &str, item: &str, decoding: &str, tokens: u32, truncated: bool) -> RequestRow {
        RequestRow {
            arm: arm.into(),
            item_id: item.into(),
            model: "m".into(),
            decoding: decoding.into(),
            completion_tokens: tokens,
            truncated: Some(truncated),
            ..RequestRow::default()
        }
    }

    /// Requests per task and interface with their cap, observed maximum and truncations;
    /// failed requests and scored ones are not counted.
    #[test]
    fn budgets_tally_successful_generated_requests() {
        let domains: BTreeMap<String, String> = [
            ("a".to_string(), "arithmetic".to_string()),
            ("l".to_string(), "lexical".to_string()),
        ]
        .into_iter()
        .collect();
        let mut failed = request("Serial/Full/char", "a", "greedy:8", 8, true);
        failed.error = Some("timeout".into());
        let rows = vec![
            request("Serial/Full/char", "a", "greedy:8", 2, false),
            request("Serial/Full/char", "a", "greedy:8", 1, false),
            failed,
            request("PrefixContinue/string/max32", "l", "greedy:32", 32, true),
            request("WholeGenerate/string/max32", "l", "greedy:32", 4, false),
            request("Native/code", "l", "score", 0, false),
        ];
        let b = budgets(&rows, &domains);
        assert_eq!(b.len(), 3);
        let pos = b[&("m".to_string(), "math".to_string(), "Position")];
        assert_eq!(
            pos,
            Budget {
                requests: 2,
                cap: Some((8, 8)),
                max: 2,
                truncated: 0
            }
        );
        let md = layout(&b).unwrap().markdown();
        for want in [
            "## This run: m",
            "| Task | Interface | Requests | Cap | Max | Truncated |",
            "| lexical | PrefixContinue | 1 | 32 | 32 | 1 |",
            "| lexical | WholeGenerate | 1 | 32 | 4 | 0 |",
            "| math | Position | 2 | 8 | 2 | 0 |",
            "| math | PrefixContinue | 528 | 32 | 9 | 0 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        // Paper order within a task: Position, PrefixContinue, WholeGenerate.
        let lex = md.find("| lexical | PrefixContinue | 1 |").unwrap();
        let whole = md.find("| lexical | WholeGenerate | 1 |").unwrap();
        assert!(lex < whole);
    }
}
