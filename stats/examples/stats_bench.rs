//! Benchmark of the statistics library (no timing assertions anywhere):
//! - joint-table updates: outcomes/s for plain `JointTable::add` and for grouped updates
//!   keyed by (model, domain, comparison, length);
//! - a full snapshot: `paired_metrics` with 9,999 draws over 384 items × 2 domains × 6
//!   lengths × 4 (Native, Serial) comparisons, on 1 and 2 threads.
//!
//! Run: `cargo run --release -p c2s-stats --example stats_bench [draws]`

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

use c2s_records::{Arm, ArmSpec, Domain, PairedOutcome, Support};
use c2s_stats::{
    bootstrap_joint, paired_metrics, BootstrapConfig, JointCell, JointTable, StatsConfig,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The compared arms: Serial under four supports.
const SERIAL_SUPPORTS: [Support; 4] = [
    Support::FULL,
    Support::UNION_CALL,
    Support::TRIE_CALL,
    Support::TRIE_FILL,
];

fn outcomes() -> Vec<PairedOutcome> {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut v = Vec::new();
    for domain in Domain::NATURAL {
        for length in 3..=8usize {
            for i in 0..64 {
                let native = rng.random_bool(0.95);
                for (a, support) in SERIAL_SUPPORTS.into_iter().enumerate() {
                    let p = 0.2 + 0.2 * a as f64 - 0.02 * length as f64;
                    v.push(PairedOutcome {
                        item_id: format!("{}-{length}-{i:02}", domain.as_str()),
                        domain,
                        length,
                        model: "bench-model".into(),
                        native_arm: ArmSpec::new(Arm::Native).label(),
                        serial_arm: ArmSpec::new(Arm::Serial).with_support(support).label(),
                        native_correct: native,
                        serial_correct: rng.random_bool(p.clamp(0.0, 1.0)),
                        pattern: None,
                    });
                }
            }
        }
    }
    v
}

fn main() {
    let draws: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(9_999);
    let v = outcomes();
    println!("outcomes in the snapshot: {}", v.len());

    // Plain table updates.
    let reps = 20_000usize;
    let start = Instant::now();
    let mut t = JointTable::default();
    for _ in 0..reps {
        for o in &v {
            t.add(black_box(o.native_correct), black_box(o.serial_correct));
        }
    }
    black_box(t);
    let secs = start.elapsed().as_secs_f64();
    println!(
        "JointTable::add: {:.3e} outcomes/s",
        (reps * v.len()) as f64 / secs
    );

    // Grouped updates, as the dataflow's per-group reduce would do them.
    let reps = 200usize;
    let start = Instant::now();
    for _ in 0..reps {
        let mut groups: HashMap<(&str, Domain, &str, usize), JointTable> = HashMap::new();
        for o in &v {
            groups
                .entry((o.model.as_str(), o.domain, o.serial_arm.as_str(), o.length))
                .or_default()
                .add(o.native_correct, o.serial_correct);
        }
        black_box(groups);
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "grouped JointTable updates: {:.3e} outcomes/s",
        (reps * v.len()) as f64 / secs
    );

    // One group alone: 384 items over 6 lengths, one thread.
    let full = ArmSpec::new(Arm::Serial).label();
    let group: Vec<(u32, &str, JointCell)> = v
        .iter()
        .filter(|o| o.domain == Domain::Arithmetic && o.serial_arm == full)
        .map(|o| {
            (
                o.length as u32,
                o.item_id.as_str(),
                JointCell::of(o.native_correct, o.serial_correct),
            )
        })
        .collect();
    let boot = BootstrapConfig {
        draws,
        threads: 1,
        ..BootstrapConfig::default()
    };
    let mut best = f64::INFINITY;
    for _ in 0..4 {
        let start = Instant::now();
        black_box(bootstrap_joint(group.clone(), &boot, 0.95).expect("valid group"));
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "one group ({} items, {draws} draws, 1 thread): {:.1} ms, {:.2} ns per resampled item",
        group.len(),
        best * 1e3,
        best * 1e9 / (f64::from(draws) * group.len() as f64)
    );

    for threads in [1usize, 2] {
        let cfg = StatsConfig {
            bootstrap_draws: draws,
            threads,
            ..StatsConfig::default()
        };
        // One warm-up, then the best of three.
        let mut best = f64::INFINITY;
        let mut rows = Vec::new();
        for _ in 0..4 {
            let start = Instant::now();
            rows = paired_metrics(&v, &cfg, 1).expect("valid synthetic snapshot");
            best = best.min(start.elapsed().as_secs_f64());
        }
        println!(
            "snapshot ({draws} draws, {threads} thread(s)): {:.1} ms, {} rows",
            best * 1e3,
            rows.len()
        );
    }
}
