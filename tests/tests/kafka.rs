//! Kafka mode against a real broker (tansu): items produced by a separate client, consumed by
//! the pipeline with the real model; malformed messages go to rejects with their position;
//! offsets are committed once outputs are durable, so a second run of the same group finds
//! nothing new; `[output.kafka]` publishes outcomes and metric snapshots.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::time::Duration;

use c2s_e2e::{assert_live_final_equals_offline, model_path, repo_root, run_config, run_ok, write};
use c2s_sinks::{read_outcomes, read_rejects, read_trajectories};
use c2s_sources::{create_topic, produce};
use c2s_testkit::{read_topic, Broker};

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

/// The password of the secured-cluster runs: it must appear in no output.
const KAFKA_PASSWORD: &str = "e2e-kafka-Pw-4d9b1f-never-written";

/// A run whose source and `[output.kafka]` sink reach a cluster that requires SASL over TLS
/// with its own CA (the gateway of `c2s_testkit` in front of tansu), the password
/// from an environment variable: the items are read, the offsets committed, the outcomes
/// published, and the password is in no output — standard output and error at debug level
/// with librdkafka's security debugging on, the manifest, the Parquet datasets, the rejects,
/// the published messages.
#[test]
fn a_sasl_ssl_run_reads_and_publishes_and_writes_the_password_nowhere() {
    use c2s_sources::{create_topic_with, KafkaConnection, KafkaPublisher};
    use c2s_testkit::gateway::GatewayPolicy;
    use c2s_testkit::{read_topic_with, SecuredBroker, TestCa};

    let ca = TestCa::create();
    let cluster = SecuredBroker::start(GatewayPolicy {
        plain_users: Some(vec![("c2s".into(), KAFKA_PASSWORD.into())]),
        tls: Some(ca.server_config()),
    });
    let b = cluster.addr.as_str();
    let ca_pem = ca.ca_pem().display().to_string();
    let connection = KafkaConnection::new(b).with_properties(
        [
            ("security.protocol", "sasl_ssl"),
            ("sasl.mechanism", "PLAIN"),
            ("sasl.username", "c2s"),
            ("sasl.password", KAFKA_PASSWORD),
            ("ssl.ca.location", ca_pem.as_str()),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    create_topic_with(&connection, "items", 1).expect("topic");
    let bank =
        std::fs::read_to_string(repo_root().join("data/banks/arithmetic-dev.jsonl")).unwrap();
    let mut payloads: Vec<(Option<String>, String)> = bank
        .lines()
        .take(3)
        .map(|l| (None, l.to_string()))
        .collect();
    payloads.push((Some("bad".into()), "{\"item_id\": ".into()));
    KafkaPublisher::connect_with(&connection)
        .expect("producer")
        .publish("items", &payloads)
        .expect("produce");

    let security = format!(
        "security_protocol = \"sasl_ssl\"\nsasl_mechanism = \"PLAIN\"\nsasl_username = \"c2s\"\nsasl_password_env = \"C2S_E2E_KAFKA_PASSWORD\"\nssl_ca_location = {ca_pem:?}\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg_text = format!(
        "[model]\npath = {:?}\nengine = \"simulated\"\n\n[[sources]]\nkind = \"kafka\"\nbrokers = \"{b}\"\ntopic = \"items\"\ngroup = \"secure\"\ncontinuous = false\n{security}properties = {{ debug = \"security,broker,conf\" }}\n\n[[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n[stats]\nbootstrap_draws = 99\n\n[output.kafka]\nbrokers = \"{b}\"\noutcomes_topic = \"c2s-outcomes\"\nmetrics_topic = \"c2s-metrics\"\n{security}",
        model_path().display().to_string()
    );
    let cfg = write(dir.path(), "secure.toml", &cfg_text);
    let run_dir = dir.path().join("run");
    let run = |password: Option<&str>, run_dir: &std::path::Path| {
        let mut cmd = std::process::Command::new(c2s_e2e::binary());
        cmd.args(["run", &cfg.display().to_string(), "--run-dir"])
            .arg(run_dir)
            .current_dir(repo_root())
            .env("RUST_LOG", "debug")
            .env_remove("C2S_E2E_KAFKA_PASSWORD");
        if let Some(p) = password {
            cmd.env("C2S_E2E_KAFKA_PASSWORD", p);
        }
        cmd.output().expect("running choice2seq")
    };
    let out = run(Some(KAFKA_PASSWORD), &run_dir);
    let (stdout, stderr) = c2s_e2e::text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("librdkafka"),
        "librdkafka's debug log reaches the run's log"
    );
    assert_eq!(read_outcomes(&run_dir.join("outcomes")).unwrap().len(), 3);
    assert_eq!(read_rejects(&run_dir.join("rejects")).unwrap().len(), 1);
    let published = read_topic_with(&connection, "c2s-outcomes", 3, Duration::from_secs(10));
    assert_eq!(published.len(), 3);
    // The manifest names the variable and shows the password redacted.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("manifest.json")).unwrap())
            .unwrap();
    let source = &manifest["config"]["sources"][0];
    assert_eq!(source["sasl_password_env"], "C2S_E2E_KAFKA_PASSWORD");
    assert_eq!(source["sasl_password"], "[redacted]");
    assert_eq!(source["security_protocol"], "sasl_ssl");
    assert_eq!(
        manifest["config"]["output"]["kafka"]["sasl_password"],
        "[redacted]"
    );
    // Nowhere: the run's output, every file of the run directory, the published messages.
    let mut places: Vec<(String, Vec<u8>)> = vec![
        ("stdout".into(), out.stdout.clone()),
        ("stderr".into(), out.stderr.clone()),
    ];
    for file in files_under(&run_dir) {
        places.push((file.display().to_string(), std::fs::read(&file).unwrap()));
    }
    for (i, (_, value)) in published.iter().enumerate() {
        places.push((format!("published message {i}"), value.clone()));
    }
    assert!(
        places.len() > 6,
        "{:?}",
        places.iter().map(|p| &p.0).collect::<Vec<_>>()
    );
    for (place, bytes) in &places {
        assert!(
            !bytes
                .windows(KAFKA_PASSWORD.len())
                .any(|w| w == KAFKA_PASSWORD.as_bytes()),
            "the password appears in {place}"
        );
    }
    // Offsets were committed: the same group finds nothing new.
    let run2 = dir.path().join("run2");
    let out = run(Some(KAFKA_PASSWORD), &run2);
    assert!(out.status.success(), "{}", c2s_e2e::text(&out).1);
    assert!(read_outcomes(&run2.join("outcomes")).unwrap().is_empty());

    // The variable unset: a config error (exit 2) naming it, before any work.
    let out = run(None, &dir.path().join("run3"));
    let (_, stderr) = c2s_e2e::text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("C2S_E2E_KAFKA_PASSWORD"), "{stderr}");
    assert!(stderr.contains("sources[0].sasl_password_env"), "{stderr}");
    assert!(!dir.path().join("run3").join("manifest.json").exists());

    // A wrong password: the run fails naming the brokers and the refusal (not a hang), and
    // shows neither password.
    let wrong = "wrong-e2e-password-0c1d";
    let out = run(Some(wrong), &dir.path().join("run4"));
    let (stdout, stderr) = c2s_e2e::text(&out);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains(b), "{stderr}");
    assert!(stderr.contains("SASL authentication error"), "{stderr}");
    for shown in [&stdout, &stderr] {
        assert!(!shown.contains(wrong) && !shown.contains(KAFKA_PASSWORD));
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}
