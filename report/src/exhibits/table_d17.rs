//! Table D17 (observed generation budgets) from Table 3's panel (`config/panels/table3.toml`):
//! per model, task and interface (Position: Serial's generated character; PrefixContinue;
//! WholeGenerate) the run's successful requests (no error), their greedy budget (the cap), the
//! largest recorded completion tokens (the engines count the end token they stop on) and the
//! requests whose recorded flag says the budget ran out.

use std::collections::BTreeMap;

use c2s_records::{Arm, Decoding};
use c2s_sinks::RequestRow;
use serde::Serialize;

use super::engine::Frame;
use super::{paper_domain, run_of, PanelRun};
use crate::tables::UNDEFINED;

/// Table D17's interfaces, in its order, as the arm each is run as ([`interface_name`] prints
/// them).
pub const INTERFACES: [Arm; 3] = [Arm::Serial, Arm::PrefixContinue, Arm::WholeGenerate];

/// An interface as Table D17 prints it: Serial's generated character is `Position`, the other
/// interfaces are their arms' names.
pub fn interface_name(arm: Arm) -> &'static str {
    match arm {
        Arm::Serial => "Position",
        other => other.as_str(),
    }
}

/// One of our rows: a model's tallies of one task and interface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Budget {
    /// The model label of the run's records.
    pub model: String,
    /// The task as printed (`lexical`, `math`).
    pub task: String,
    /// One of [`INTERFACES`]' printed names ([`interface_name`]).
    pub interface: &'static str,
    /// Successful requests (no error) counted.
    pub requests: u64,
    /// The smallest and largest greedy budget among the requests.
    pub cap: Option<(u32, u32)>,
    /// The largest recorded completion tokens (the end token included).
    pub max: u32,
    /// Requests whose recorded truncation flag says the budget ran out.
    pub truncated: u64,
}

/// Our rows per model and task (as printed), in [`INTERFACES`]' order, from the run's
/// requests; `domain_of` maps an item id to its domain (the requests do not carry it).
pub fn budgets(requests: &[RequestRow], domain_of: &BTreeMap<String, String>) -> Vec<Budget> {
    let mut out: BTreeMap<(String, String, usize), Budget> = BTreeMap::new();
    for r in requests.iter().filter(|r| r.error.is_none()) {
        let kind = r.arm.split('/').next().unwrap_or(&r.arm);
        let Some(rank) = INTERFACES.iter().position(|arm| arm.as_str() == kind) else {
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
        let b = (out.entry((r.model.clone(), task.clone(), rank))).or_insert_with(|| Budget {
            model: r.model.clone(),
            task,
            interface: interface_name(INTERFACES[rank]),
            ..Budget::default()
        });
        b.requests += 1;
        b.cap = Some(match b.cap {
            None => (max_new_tokens, max_new_tokens),
            Some((lo, hi)) => (lo.min(max_new_tokens), hi.max(max_new_tokens)),
        });
        b.max = b.max.max(r.completion_tokens);
        b.truncated += u64::from(r.truncated == Some(true));
    }
    out.into_values().collect()
}

/// Table D17 from Table 3's run.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
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
    Ok(Frame::new().rows("ours", &budgets(&requests, &domain_of)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::laid_out;

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
        let pos = b
            .iter()
            .find(|b| b.task == "math" && b.interface == "Position");
        assert_eq!(
            pos,
            Some(&Budget {
                model: "m".into(),
                task: "math".into(),
                interface: "Position",
                requests: 2,
                cap: Some((8, 8)),
                max: 2,
                truncated: 0
            })
        );
        let md = laid_out("tableD17", Frame::new().rows("ours", &b), "Qwen3.5-27B");
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
