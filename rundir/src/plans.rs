//! What `bank incorrect-plans` reads (D.12): the panel's items from the banks, and the
//! selections a model made in a finished run, which the plans copy where they are incorrect.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

use c2s_banks::bank::read_bank;
use c2s_banks::plans::ObservedSelection;
use c2s_records::{Item, ItemPolicy};

/// The items a panel file lists (one id per line), from the banks, in the panel's order.
/// Errors name the panel file and line, or the id that no bank holds.
pub fn panel_items(panel: &Path, banks: &[PathBuf]) -> anyhow::Result<Vec<Item>> {
    let listed =
        std::fs::read_to_string(panel).with_context(|| format!("reading {}", panel.display()))?;
    let ids = c2s_config::read_id_list(&listed)
        .map_err(|(line, m)| anyhow::anyhow!("{}:{line}: {m}", panel.display()))?;
    let mut by_id = BTreeMap::new();
    for bank in banks {
        for item in read_bank(bank, &ItemPolicy::default())? {
            by_id.insert(item.item_id.clone(), item);
        }
    }
    ids.iter()
        .map(|id| {
            by_id
                .get(id)
                .cloned()
                .with_context(|| format!("{}: item {id} is in none of the banks", panel.display()))
        })
        .collect()
}

/// The output of each item's `arm` trajectory in run directory `run`: one model per run, so
/// an item with two such trajectories is an error, as is a run without any.
pub fn observed_selections(
    run: &Path,
    arm: &str,
) -> anyhow::Result<BTreeMap<String, ObservedSelection>> {
    let dir = c2s_sinks::dataset_dir::<c2s_sinks::trajectories::TrajectoryRow>(run);
    let mut observed = BTreeMap::new();
    for t in c2s_sinks::read_trajectories(&dir)
        .with_context(|| format!("reading trajectories of {}", run.display()))?
    {
        if t.arm != arm {
            continue;
        }
        if let Some(other) = observed
            .get(&t.item_id)
            .map(|o: &ObservedSelection| &o.source)
        {
            anyhow::bail!(
                "{}: item {} has two `{arm}` trajectories ({other} and model {}): one model per observed run",
                run.display(),
                t.item_id,
                t.model
            );
        }
        let source = format!("{} {} ({})", t.model, t.arm, run.display());
        observed.insert(
            t.item_id.clone(),
            ObservedSelection {
                output: t.output,
                valid: t.valid,
                source,
            },
        );
    }
    if observed.is_empty() {
        anyhow::bail!(
            "{} has no `{arm}` trajectory to take observed selections from",
            run.display()
        );
    }
    Ok(observed)
}
