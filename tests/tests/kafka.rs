//! Kafka mode against a real broker (tansu): items produced by a separate client, consumed by
//! the pipeline with the real model; malformed messages go to rejects with their position;
//! offsets are committed once outputs are durable, so a second run of the same group finds
//! nothing new; `[output.kafka]` publishes outcomes and metric snapshots.

use std::collections::BTreeSet;
use std::time::Duration;

use c2s_e2e::{assert_live_final_equals_offline, model_path, repo_root, run_config, run_ok, write};
use c2s_sinks::{read_outcomes, read_rejects, read_trajectories};
use c2s_sources::testing::{read_topic, Broker};
use c2s_sources::{create_topic, produce};

#[test]
fn items_from_a_topic_run_and_offsets_are_committed() {
    let broker = Broker::start();
    let b = broker.addr.as_str();
    create_topic(b, "items", 2).expect("topic");
    let bank =
        std::fs::read_to_string(repo_root().join("data/banks/arithmetic-dev.jsonl")).unwrap();
    let mut payloads: Vec<(Option<String>, Vec<u8>)> = bank
        .lines()
        .take(3)
        .map(|l| (None, l.as_bytes().to_vec()))
        .collect();
    payloads.push((
        Some("bad".into()),
        b"{\"item_id\": \"x\", \"domain\": ".to_vec(),
    ));
    payloads.push((Some("binary".into()), vec![0xff, 0xfe, 0x00]));
    produce(b, "items", &payloads).expect("produce");

    let dir = tempfile::tempdir().unwrap();
    let cfg_text = format!(
        "[model]\npath = {:?}\n\n[[sources]]\nkind = \"kafka\"\nbrokers = \"{b}\"\ntopic = \"items\"\ngroup = \"e2e\"\ncontinuous = false\n\n[[arms]]\narm = \"Native\"\n\n[stats]\nbootstrap_draws = 99\n",
        model_path().display().to_string()
    );
    let cfg = write(dir.path(), "kafka.toml", &cfg_text);
    let run_dir = dir.path().join("run");
    run_ok(&cfg, &run_dir);
    let ids: BTreeSet<String> = read_trajectories(&run_dir.join("trajectories"))
        .unwrap()
        .into_iter()
        .map(|t| t.item_id)
        .collect();
    let expected: BTreeSet<String> = bank
        .lines()
        .take(3)
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["item_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ids, expected);
    let rejects = read_rejects(&run_dir.join("rejects")).unwrap();
    assert_eq!(rejects.len(), 2, "{rejects:?}");
    for r in &rejects {
        assert!(
            r.location.starts_with("items/"),
            "topic/partition@offset: {}",
            r.location
        );
        assert!(r.location.contains('@'), "{}", r.location);
    }
    assert!(rejects.iter().any(|r| r.reason.contains("not valid JSON")));
    assert!(rejects.iter().any(|r| r.reason.contains("UTF-8")));

    // Same group again: every offset was committed, nothing is consumed.
    let run2 = dir.path().join("run2");
    let out = run_config(&cfg, &run2);
    assert!(out.status.success());
    assert!(read_trajectories(&run2.join("trajectories"))
        .unwrap()
        .is_empty());

    // New items on the topic are picked up after the committed offsets.
    let more: Vec<(Option<String>, String)> = bank
        .lines()
        .skip(3)
        .take(1)
        .map(|l| (None, l.to_string()))
        .collect();
    produce(b, "items", &more).expect("produce");
    let run3 = dir.path().join("run3");
    let out = run_config(&cfg, &run3);
    assert!(out.status.success());
    assert_eq!(
        read_trajectories(&run3.join("trajectories")).unwrap().len(),
        1
    );
}

/// A continuous Kafka run resumed in the same run directory: the statistics are seeded from
/// what the first run recorded, so the final snapshot covers every item and equals `choice2seq
/// stats` on the directory.
#[test]
fn resumed_topic_run_seeds_its_statistics() {
    let broker = Broker::start();
    let b = broker.addr.as_str();
    create_topic(b, "items", 1).expect("topic");
    let bank =
        std::fs::read_to_string(repo_root().join("data/banks/arithmetic-dev.jsonl")).unwrap();
    let lines: Vec<(Option<String>, String)> = bank
        .lines()
        .take(4)
        .map(|l| (None, l.to_string()))
        .collect();
    produce(b, "items", &lines[..3]).expect("produce");
    let dir = tempfile::tempdir().unwrap();
    let cfg_text = format!(
        "[model]\npath = {:?}\nengine = \"simulated\"\n\n[[sources]]\nkind = \"kafka\"\nbrokers = \"{b}\"\ntopic = \"items\"\ngroup = \"seed\"\ncontinuous = false\n\n\
         [[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n[stats]\nbootstrap_draws = 99\n",
        model_path().display().to_string()
    );
    let cfg = write(dir.path(), "kafka.toml", &cfg_text);
    let run_dir = dir.path().join("run");
    run_ok(&cfg, &run_dir);
    assert_eq!(read_outcomes(&run_dir.join("outcomes")).unwrap().len(), 3);
    produce(b, "items", &lines[3..]).expect("produce");
    let out = run_config(&cfg, &run_dir);
    assert!(out.status.success());
    assert_eq!(read_outcomes(&run_dir.join("outcomes")).unwrap().len(), 4);
    assert_live_final_equals_offline(&run_dir);
    let live = c2s_e2e::live_final_snapshot(&run_dir);
    assert!(
        live.iter().any(|k| {
            let f: Vec<&str> = k.split('|').collect();
            f[2] == "null" && f[4] == "\"native_em\"" && f[7] == "4"
        }),
        "the final snapshot counts all 4 items: {live:#?}"
    );
}

/// `[output.kafka]`: every outcome and metric row of the run directory also reaches its topic,
/// as JSON with the dataset's columns, keyed by item id (outcomes) and snapshot (metrics).
#[test]
fn outcomes_and_metric_snapshots_are_published_to_topics() {
    let broker = Broker::start();
    let b = broker.addr.as_str();
    let dir = tempfile::tempdir().unwrap();
    let items = c2s_e2e::bank_head(dir.path(), "arithmetic-dev.jsonl", 6);
    let cfg_text = format!(
        "[model]\npath = {:?}\nengine = \"simulated\"\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n[[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n[stats]\nbootstrap_draws = 99\nsnapshot_every = 3\n\n[output]\npart_rows = 4\n\n[output.kafka]\nbrokers = \"{b}\"\noutcomes_topic = \"c2s-outcomes\"\nmetrics_topic = \"c2s-metrics\"\n",
        model_path().display().to_string(),
        items.display().to_string()
    );
    let cfg = write(dir.path(), "publish.toml", &cfg_text);
    let run_dir = dir.path().join("run");
    run_ok(&cfg, &run_dir);

    let outcomes = c2s_sinks::read_outcomes(&run_dir.join("outcomes")).unwrap();
    assert_eq!(outcomes.len(), 6);
    let published = read_topic(b, "c2s-outcomes", outcomes.len(), Duration::from_secs(10));
    assert_eq!(published.len(), outcomes.len());
    let mut seen = BTreeSet::new();
    for (key, value) in &published {
        let v: serde_json::Value = serde_json::from_slice(value).unwrap();
        let id = v["item_id"].as_str().unwrap().to_string();
        assert_eq!(key.as_deref(), Some(id.as_str()));
        let row = outcomes.iter().find(|o| o.item_id == id).unwrap();
        assert_eq!(v["native_correct"], row.native_correct);
        assert_eq!(v["serial_correct"], row.serial_correct);
        assert_eq!(v["comparison"], row.comparison.as_str());
        seen.insert(id);
    }
    assert_eq!(seen.len(), 6, "every outcome once");

    let metrics = c2s_sinks::read_metrics(&run_dir.join("metrics")).unwrap();
    assert!(!metrics.is_empty());
    let published = read_topic(b, "c2s-metrics", metrics.len(), Duration::from_secs(10));
    assert_eq!(published.len(), metrics.len());
    let snapshots: BTreeSet<u64> = metrics.iter().map(|m| m.metric.snapshot).collect();
    assert!(snapshots.len() >= 2, "snapshots {snapshots:?}");
    for (key, value) in &published {
        let v: serde_json::Value = serde_json::from_slice(value).unwrap();
        let snapshot = v["snapshot"].as_u64().unwrap();
        assert_eq!(key.as_deref(), Some(snapshot.to_string().as_str()));
        assert!(snapshots.contains(&snapshot));
        for column in [
            "model",
            "domain",
            "comparison",
            "metric",
            "value",
            "ci_method",
        ] {
            assert!(v.get(column).is_some(), "{column} missing from {v}");
        }
    }
}
