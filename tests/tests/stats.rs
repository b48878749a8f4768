//! `choice2seq stats RUN_DIR` recomputes the live final snapshot exactly, also from a directory
//! holding only outcomes/ and trajectories/.

use c2s_e2e::{bank_head, copy_datasets, model_path, run, run_ok, text, write};
use c2s_sinks::read_metrics;

/// The fields of a metric row that a recomputation must reproduce (the snapshot number and
/// write time left out), as a sorted list of strings.
fn keyed(rows: impl IntoIterator<Item = serde_json::Value>) -> Vec<String> {
    let mut keys: Vec<String> = rows
        .into_iter()
        .map(|v| {
            format!(
                "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
                v["model"],
                v["domain"],
                v["length"],
                v["comparison"],
                v["metric"],
                v["value"],
                v["numerator"],
                v["denominator"],
                v["ci_low"],
                v["ci_high"],
                v["ci_method"]
            )
        })
        .collect();
    keys.sort();
    keys
}

#[test]
fn offline_stats_equal_the_live_final_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let a = bank_head(dir.path(), "arithmetic-dev.jsonl", 48);
    let l = bank_head(dir.path(), "lexical-dev.jsonl", 48);
    let cfg = format!(
        "[model]\npath = {:?}\nengine = \"simulated\"\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n\
         [[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"UnionFill\"\n\n\
         [[arms]]\narm = \"TeacherForced\"\n\n[stats]\nbootstrap_draws = 999\nsnapshot_every = 25\n",
        model_path().display().to_string(),
        a.display().to_string(),
        l.display().to_string()
    );
    let cfg = write(dir.path(), "run.toml", &cfg);
    let run_dir = dir.path().join("run");
    run_ok(&cfg, &run_dir);
    let metrics = read_metrics(&run_dir.join("metrics")).unwrap();
    let last = metrics.iter().map(|m| m.metric.snapshot).max().unwrap();
    assert!(
        last >= 1,
        "several snapshots were taken while the run went on"
    );
    let live = keyed(
        metrics
            .into_iter()
            .filter(|m| m.metric.snapshot == last)
            .map(|m| serde_json::to_value(&m.metric).unwrap()),
    );
    assert!(live.iter().any(|k| k.contains("\"scr\"")));
    assert!(
        live.iter().any(|k| k.contains("independence_reference")),
        "TeacherForced gives the reference"
    );
    // Only outcomes/ and trajectories/ (and the manifest for the settings).
    let copy = dir.path().join("copy");
    copy_datasets(&run_dir, &copy, &["outcomes", "trajectories"]);
    std::fs::copy(run_dir.join("manifest.json"), copy.join("manifest.json")).unwrap();
    let out = run(&["stats", copy.to_str().unwrap(), "--json"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let offline: Vec<serde_json::Value> = serde_json::from_str(&stdout).unwrap();
    let offline = keyed(offline);
    let only_live: Vec<&String> = live.iter().filter(|k| !offline.contains(k)).collect();
    let only_offline: Vec<&String> = offline.iter().filter(|k| !live.contains(k)).collect();
    assert!(
        only_live.is_empty() && only_offline.is_empty(),
        "live only: {only_live:#?}\noffline only: {only_offline:#?}"
    );
    assert_eq!(live.len(), offline.len());
    // The table form names the metrics too.
    let out = run(&["stats", copy.to_str().unwrap()]);
    assert!(text(&out).0.contains("scr"));
}
