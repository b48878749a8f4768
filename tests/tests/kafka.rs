//! Kafka mode against a real broker (tansu): items produced by a separate client, consumed by
//! the pipeline with the real model; malformed messages go to rejects with their position;
//! offsets are committed once outputs are durable, so a second run of the same group finds
//! nothing new.

use std::collections::BTreeSet;

use c2s_e2e::{model_path, repo_root, run, text, write};
use c2s_sinks::{read_rejects, read_trajectories};
use c2s_sources::testing::Broker;
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
    let out = run(&[
        "run",
        cfg.to_str().unwrap(),
        "--run-dir",
        run_dir.to_str().unwrap(),
        "--quiet",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
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
    let out = run(&[
        "run",
        cfg.to_str().unwrap(),
        "--run-dir",
        run2.to_str().unwrap(),
        "--quiet",
    ]);
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
    let out = run(&[
        "run",
        cfg.to_str().unwrap(),
        "--run-dir",
        run3.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(out.status.success());
    assert_eq!(
        read_trajectories(&run3.join("trajectories")).unwrap().len(),
        1
    );
}
