//! The live monitor of a running process: what `choice2seq run --serve` shows.
//!
//! It reads what the run already keeps for its console and status — the progress counters
//! (atomics), the engines' tally and load, the sinks' write health, the Kafka feeders'
//! offsets — and the latest snapshot, which the snapshot thread hands to it through a
//! [`SnapshotObserver`] (rows, their JSON and the reliability diagrams' counts are prepared
//! there, off the timely threads). Every lock it takes is held only to copy a small value.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use c2s_config::RunKind;
use c2s_model::service::{ServiceLoad, LATENCY_BUCKETS_SECONDS};
use c2s_operators::live_stats::SnapshotObserver;
use c2s_sinks::{RunState, RunStatus};
use c2s_stats::MetricRow;

use c2s_serve::figures::{figures, reliability_panels, FigureSvg, ReliabilityPanels};
use c2s_serve::metrics::{snapshot_gauges, Families, Labels, Num};
use c2s_serve::state::{headline, paired_table};
use c2s_serve::{Backend, Unavailable};

use crate::Shared;

/// The latest successful snapshot, as the snapshot thread handed it over.
struct Latest {
    number: u64,
    rows: Vec<MetricRow>,
    /// `rows` as `choice2seq stats --json` prints them.
    json: String,
    reliability: Vec<ReliabilityPanels>,
}

/// Upper bounds of the batch-size buckets (requests).
const BATCH_BUCKETS: [f64; 9] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

/// The [`Backend`] of a running run (`choice2seq run --serve`): it reads the process's
/// counters, the snapshot thread's latest metrics and the final status once the workers end.
pub struct LiveMonitor {
    shared: Arc<Shared>,
    latest: Arc<Mutex<Option<Arc<Latest>>>>,
    /// Figures drawn for a snapshot number.
    figures: Mutex<Option<(u64, Arc<Vec<FigureSvg>>)>>,
    /// The final status, once the workers have ended.
    finished: Mutex<Option<RunStatus>>,
    started: SystemTime,
    first_snapshot: u64,
}

fn unix_seconds(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl LiveMonitor {
    /// A monitor of `shared`, registered with its snapshot thread (call before the workers
    /// start).
    pub fn new(shared: Arc<Shared>) -> Arc<LiveMonitor> {
        let latest: Arc<Mutex<Option<Arc<Latest>>>> = Arc::new(Mutex::new(None));
        let slot = latest.clone();
        let calibration = shared.cfg.stats.calibration;
        let observer = SnapshotObserver(Arc::new(move |counts, number, rows| {
            let latest = Latest {
                number,
                rows: rows.to_vec(),
                json: serde_json::to_string(rows).unwrap_or_else(|_| "[]".into()),
                reliability: if calibration {
                    reliability_panels(counts)
                } else {
                    Vec::new()
                },
            };
            *lock(&slot) = Some(Arc::new(latest));
        }));
        lock(&shared.live).observer = Some(observer);
        Arc::new(LiveMonitor {
            first_snapshot: shared.resume.next_snapshot,
            shared,
            latest,
            figures: Mutex::new(None),
            finished: Mutex::new(None),
            started: SystemTime::now(),
        })
    }

    /// The workers have ended with `status`.
    pub fn finish(&self, status: RunStatus) {
        *lock(&self.finished) = Some(status);
    }

    fn latest(&self) -> Option<Arc<Latest>> {
        lock(&self.latest).clone()
    }

    /// `running`, `stopping` (after Ctrl-C, SIGTERM or an early stop), or the final state.
    fn state_name(&self) -> String {
        if let Some(s) = lock(&self.finished).as_ref() {
            return match serde_json::to_value(s.state) {
                Ok(Value::String(name)) => name,
                _ => format!("{:?}", s.state).to_lowercase(),
            };
        }
        if self.shared.stop.load(Ordering::SeqCst) {
            "stopping".into()
        } else {
            "running".into()
        }
    }

    fn kind(&self) -> (&'static str, &'static str) {
        match self.shared.cfg.kind() {
            RunKind::Coverage(_) => ("coverage", "decision"),
            RunKind::Dialogue(_) => ("dialogue", "dialogue_run"),
            RunKind::Items => ("items", "trajectory"),
        }
    }

    fn loads(&self) -> ServiceLoad {
        let mut sum = ServiceLoad::default();
        for l in self.shared.tally.loads() {
            sum.stats.add(&l.stats);
            sum.in_flight += l.in_flight;
            for (size, n) in l.batch_sizes {
                *sum.batch_sizes.entry(size).or_default() += n;
            }
            if sum.latency.counts.len() < l.latency.counts.len() {
                sum.latency.counts.resize(l.latency.counts.len(), 0);
            }
            for (a, b) in sum.latency.counts.iter_mut().zip(&l.latency.counts) {
                *a += b;
            }
            sum.latency.sum += l.latency.sum;
        }
        sum
    }

    /// Items done and fed, the rate since feeding began (items/s) and the seconds left.
    fn progress(&self) -> (u64, u64, Option<f64>, Option<f64>) {
        let done = self.shared.items_done.load(Ordering::Relaxed);
        let fed = self.shared.counters.items_in.load(Ordering::Relaxed);
        let rate = self
            .shared
            .feeding_since
            .get()
            .map(|t| done as f64 / t.elapsed().as_secs_f64().max(1e-3));
        let eta = match (self.shared.total_items, rate) {
            (Some(total), Some(r)) if r > 0.0 => Some(total.saturating_sub(done) as f64 / r),
            _ => None,
        };
        (done, fed, rate, eta)
    }
}

impl Backend for LiveMonitor {
    fn metrics(&self) -> String {
        let s = &self.shared;
        let c = &s.counters;
        let (kind, unit) = self.kind();
        let mut f = Families::default();
        let none = Labels::new;
        let int = |n: u64| vec![(none(), Num::Int(n))];
        f.gauge(
            "c2s_run_info",
            "The run: its name, kind, model and engine (value 1)",
            vec![(
                vec![
                    ("run", s.cfg.run.name.clone()),
                    ("kind", kind.to_string()),
                    ("model", s.identity.label()),
                    ("engine", s.identity.engine.clone()),
                ],
                Num::Int(1),
            )],
        );
        let state = self.state_name();
        f.gauge(
            "c2s_run_state",
            "1 for the run's current state (running, stopping, completed, stopped, failed)",
            ["running", "stopping", "completed", "stopped", "failed"]
                .iter()
                .map(|name| {
                    (
                        vec![("state", name.to_string())],
                        Num::Int(u64::from(state == *name)),
                    )
                })
                .collect(),
        );
        f.gauge(
            "c2s_run_start_time_seconds",
            "When this process's run started (Unix time)",
            vec![(none(), Num::Float(unix_seconds(self.started)))],
        );
        let (done, fed, _, _) = self.progress();
        f.counter(
            "c2s_items_fed",
            "Records handed to the dataflow (items, and records that are then rejected)",
            int(fed),
        );
        f.counter(
            "c2s_items_finished",
            "Items (coverage: cases; dialogue: dialogues) whose every arm has completed",
            int(done),
        );
        if let Some(total) = s.total_items {
            f.gauge(
                "c2s_items",
                "Records in the run's bounded sources (absent for Kafka)",
                int(total),
            );
        }
        f.counter(
            "c2s_completed",
            "Units completed: trajectories, coverage decisions or dialogue runs",
            vec![(
                vec![("unit", unit.to_string())],
                Num::Int(c.trajectories.load(Ordering::Relaxed)),
            )],
        );
        f.counter(
            "c2s_records_rejected",
            "Records written to rejects/ (bad input, engine and controller failures)",
            int(c.rejects.load(Ordering::Relaxed)),
        );
        let tally = s.tally.counts();
        let load = self.loads();
        f.counter(
            "c2s_engine_requests",
            "Model requests by outcome: computed and answered, answered from a copy \
             (identical request or recorded answer), or failed",
            vec![
                (
                    vec![("outcome", "answered".into())],
                    Num::Int(tally.answered),
                ),
                (
                    vec![("outcome", "cached".into())],
                    Num::Int(load.stats.deduplicated),
                ),
                (vec![("outcome", "failed".into())], Num::Int(tally.failed)),
            ],
        );
        f.gauge(
            "c2s_engine_requests_in_flight",
            "Distinct requests handed to the engines and not answered yet",
            int(load.in_flight as u64),
        );
        let e = load.stats.engine;
        f.counter(
            "c2s_engine_prompt_tokens",
            "Prompt tokens: computed by the engine, or reused from its prefix cache",
            vec![
                (
                    vec![("kind", "computed".into())],
                    Num::Int(e.computed_tokens),
                ),
                (
                    vec![("kind", "reused".into())],
                    Num::Int(e.prompt_tokens.saturating_sub(e.computed_tokens)),
                ),
            ],
        );
        f.counter(
            "c2s_engine_generated_tokens",
            "Tokens generated by the engines",
            int(e.generated_tokens),
        );
        f.counter(
            "c2s_engine_forward_passes",
            "Batched forward passes of the engines",
            int(e.forwards),
        );
        f.counter(
            "c2s_engine_forward_seconds",
            "Seconds the engines spent in forward passes",
            vec![(none(), Num::Float(e.forward_seconds))],
        );
        let mut bounds = LATENCY_BUCKETS_SECONDS.iter().copied();
        let latency: Vec<(f64, u64)> = load
            .latency
            .counts
            .iter()
            .map(|&n| (bounds.next().unwrap_or(f64::INFINITY), n))
            .collect();
        f.histogram(
            "c2s_engine_latency_seconds",
            "The engine's latency of each computed answer",
            vec![(none(), load.latency.sum, load.latency.count(), latency)],
        );
        let mut batches: Vec<(f64, u64)> = BATCH_BUCKETS.iter().map(|&b| (b, 0)).collect();
        let (mut batch_sum, mut batch_count) = (0.0, 0);
        for (&size, &n) in &load.batch_sizes {
            let i = BATCH_BUCKETS.partition_point(|&b| b < size as f64);
            // Sizes past the last bound share one overflow bucket (one `+Inf` line).
            if i == batches.len() {
                batches.push((f64::INFINITY, 0));
            }
            let last = batches.len() - 1;
            batches[i.min(last)].1 += n;
            batch_sum += (size as u64 * n) as f64;
            batch_count += n;
        }
        f.histogram(
            "c2s_engine_batch_size_requests",
            "Requests per engine batch (a continuous engine: in the engine at each step)",
            vec![(none(), batch_sum, batch_count, batches)],
        );
        let closed = s.writes.closed_parts();
        f.counter(
            "c2s_parquet_parts_closed",
            "Parquet part files closed (complete and renamed into place), per dataset",
            closed
                .iter()
                .map(|(d, c)| (vec![("dataset", d.clone())], Num::Int(c.parts)))
                .collect(),
        );
        f.counter(
            "c2s_parquet_rows_written",
            "Rows in the closed Parquet parts, per dataset",
            closed
                .iter()
                .map(|(d, c)| (vec![("dataset", d.clone())], Num::Int(c.rows)))
                .collect(),
        );
        f.gauge(
            "c2s_outputs_blocked",
            "1 while a sink cannot write (feeding pauses)",
            int(u64::from(s.writes.blocked())),
        );
        f.gauge(
            "c2s_outputs_held_bytes",
            "Bytes of rows held by sinks that cannot write (over [output] max_buffered_mb, model requests wait)",
            int(s.writes.held_bytes() as u64),
        );
        f.gauge(
            "c2s_outputs_failed",
            "1 once records were lost (a sink gave up writing)",
            int(u64::from(s.writes.failed())),
        );
        if let Some(watch) = &s.outages {
            f.gauge(
                "c2s_engine_outage",
                "1 while the remote server cannot be reached (feeding pauses)",
                int(u64::from(watch.active())),
            );
            f.counter(
                "c2s_engine_outages",
                "Outages of the remote server so far",
                int(watch.outages().len() as u64),
            );
            f.counter(
                "c2s_engine_outage_seconds",
                "Seconds the remote server could not be reached, the outage on included",
                vec![(none(), Num::Float(watch.total_seconds()))],
            );
        }
        let kafka_used = s.cfg.output.kafka.is_some()
            || s.cfg
                .sources
                .iter()
                .any(|c| matches!(c, c2s_config::SourceConfig::Kafka { .. }));
        if kafka_used {
            let k = c2s_sources::kafka_outages();
            f.gauge(
                "c2s_kafka_outage",
                "1 while a Kafka broker cannot be reached (positions kept, commits and \
                 publications wait)",
                int(u64::from(k.active())),
            );
            f.counter(
                "c2s_kafka_outages",
                "Outages of the Kafka brokers so far",
                int(k.count()),
            );
            f.counter(
                "c2s_kafka_outage_seconds",
                "Seconds the Kafka brokers could not be reached, the outage on included",
                vec![(none(), Num::Float(k.total_seconds()))],
            );
        }
        let kafka = lock(&s.kafka).clone();
        let partition = |(t, p): &(String, i32)| -> Labels {
            vec![("topic", t.clone()), ("partition", p.to_string())]
        };
        let offsets = |get: fn(&crate::PartitionProgress) -> i64| -> Vec<(Labels, Num)> {
            kafka
                .iter()
                .map(|(k, v)| (partition(k), Num::Int(get(v).max(0) as u64)))
                .collect()
        };
        f.gauge(
            "c2s_kafka_consumer_lag_messages",
            "Messages after the group's committed offset (high watermark − committed)",
            offsets(|v| v.high_watermark - v.committed),
        );
        f.gauge(
            "c2s_kafka_committed_offset",
            "The group's committed offset (outputs of the records before it are durable)",
            offsets(|v| v.committed),
        );
        f.gauge(
            "c2s_kafka_next_offset",
            "The next offset the run will read (one past the last record fed)",
            offsets(|v| v.next_offset),
        );
        f.gauge(
            "c2s_kafka_high_watermark_offset",
            "The partition's latest known high watermark",
            offsets(|v| v.high_watermark),
        );
        let table = lock(&s.live).clone();
        let taken = table.snapshots.saturating_sub(self.first_snapshot);
        f.counter(
            "c2s_metric_snapshots",
            "Metric snapshots taken by this process (failed ones included)",
            int(taken),
        );
        f.counter(
            "c2s_metric_snapshots_failed",
            "Metric snapshots that failed (a snapshot_error row in metrics/)",
            int(table.failed_snapshots),
        );
        if let Some(at) = table.last_snapshot_at {
            f.gauge(
                "c2s_metric_snapshot_number",
                "Number of the latest metric snapshot (the snapshot column of metrics/)",
                int(table.snapshots.saturating_sub(1)),
            );
            f.gauge(
                "c2s_metric_snapshot_timestamp_seconds",
                "When the latest metric snapshot was taken (Unix time)",
                vec![(none(), Num::Float(unix_seconds(at)))],
            );
            f.gauge(
                "c2s_metric_snapshot_age_seconds",
                "Seconds since the latest metric snapshot",
                vec![(
                    none(),
                    Num::Float(at.elapsed().map(|d| d.as_secs_f64()).unwrap_or(0.0)),
                )],
            );
        }
        f.gauge(
            "c2s_stats_outcomes",
            "Paired outcomes the live statistics count (a resumed run's included)",
            int(table.outcomes),
        );
        if let Some(latest) = self.latest() {
            snapshot_gauges(&mut f, &latest.rows);
        }
        f.encode()
    }

    fn state(&self) -> Value {
        let s = &self.shared;
        let (kind, unit) = self.kind();
        let (done, fed, rate, eta) = self.progress();
        let tally = s.tally.counts();
        let load = self.loads();
        let table = lock(&s.live).clone();
        let latest = self.latest();
        let mut errors: Vec<(&String, &u64)> = tally.errors.iter().collect();
        errors.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let rejects: Vec<Value> = lock(&s.counters.recent_rejects)
            .iter()
            .rev()
            .map(|r| {
                json!({"source": r.source, "location": r.location, "item_id": r.item_id, "reason": r.reason})
            })
            .collect();
        let live_counts: Vec<Value> = table
            .tables
            .iter()
            .map(|((model, domain, comparison), jt)| {
                json!({
                    "model": model, "domain": domain.to_string(), "comparison": comparison,
                    "n": jt.n(), "both": jt.both, "native_only": jt.native_only,
                    "serial_only": jt.serial_only, "neither": jt.neither,
                    "scr": jt.scr().value(),
                })
            })
            .collect();
        let kafka: Vec<Value> = lock(&s.kafka)
            .iter()
            .map(|((topic, partition), p)| {
                json!({
                    "topic": topic, "partition": partition, "next_offset": p.next_offset,
                    "committed": p.committed, "high_watermark": p.high_watermark,
                    "lag": (p.high_watermark - p.committed).max(0),
                })
            })
            .collect();
        let finished = lock(&self.finished).clone();
        let e = load.stats.engine;
        json!({
            "mode": "live",
            "kind": kind,
            "state": self.state_name(),
            "status": finished,
            "identity": {
                "run": s.cfg.run.name,
                "config": s.cfg.file.display().to_string(),
                "run_dirs": [s.run_dir.display().to_string()],
                "models": [s.identity.label()],
                "engine": s.identity.engine,
                "arms": s.cfg.arms.iter().map(c2s_records::ArmSpec::label).collect::<Vec<_>>(),
                "sources": s.cfg.sources.len(),
                "started_at": unix_seconds(self.started),
            },
            "progress": {
                "unit": unit,
                "items_done": done,
                "items_fed": fed,
                "items_total": s.total_items,
                "completed": s.counters.trajectories.load(Ordering::Relaxed),
                "requests": s.counters.requests.load(Ordering::Relaxed),
                "rate_per_s": rate,
                "eta_s": eta,
                "elapsed_s": self.started.elapsed().map(|d| d.as_secs_f64()).unwrap_or(0.0),
            },
            "snapshot": {
                "number": latest.as_ref().map(|l| l.number),
                "age_s": table.last_snapshot_at.and_then(|t| t.elapsed().ok()).map(|d| d.as_secs_f64()),
                "outcomes": table.outcomes,
                "error": table.last_error,
                "failed": table.failed_snapshots,
            },
            "paired": latest.as_ref().map_or(Value::Null, |l| paired_table(&l.rows, s.cfg.stats.level)),
            "headline": latest.as_ref().map_or(Value::Array(Vec::new()), |l| headline(&l.rows)),
            "live_counts": live_counts,
            "figures_version": latest.as_ref().map(|l| l.number),
            "engine": {
                "answered": tally.answered,
                "cached": load.stats.deduplicated,
                "failed": tally.failed,
                "in_flight": load.in_flight,
                "prompt_tokens": e.prompt_tokens,
                "computed_tokens": e.computed_tokens,
                "generated_tokens": e.generated_tokens,
            },
            "errors": errors.iter().take(20).map(|(m, n)| json!({"message": m, "count": n})).collect::<Vec<_>>(),
            "rejects": {"count": s.counters.rejects.load(Ordering::Relaxed), "recent": rejects},
            "writes": {
                "blocked": s.writes.blocked(),
                "held_bytes": s.writes.held_bytes(),
                "requests_held": s.writes.over_budget(),
                "failed": s.writes.failed(),
                "error": s.writes.given_up(),
                "parts": s.writes.closed_parts().into_iter().map(|(d, c)| (d, json!({"parts": c.parts, "rows": c.rows}))).collect::<BTreeMap<_, _>>(),
            },
            "kafka": kafka,
            "outages": s.outages.as_ref().map(|w| json!({
                "active": w.active(),
                "max_outage_seconds": w.max_outage().as_secs_f64(),
                "list": w.outages(),
            })),
            "summary_text": Value::Null,
        })
    }

    fn snapshot_json(&self) -> Option<String> {
        self.latest().map(|l| l.json.clone())
    }

    fn figures(&self) -> Vec<FigureSvg> {
        let Some(latest) = self.latest() else {
            return Vec::new();
        };
        if let Some((n, figs)) = lock(&self.figures).as_ref() {
            if *n == latest.number {
                return figs.as_ref().clone();
            }
        }
        let figs = Arc::new(figures(&latest.rows, &latest.reliability));
        *lock(&self.figures) = Some((latest.number, figs.clone()));
        figs.as_ref().clone()
    }

    fn healthy(&self) -> Result<(), Unavailable> {
        if self.shared.writes.failed() {
            return Err(Unavailable::WritesFailed {
                given_up: self.shared.writes.given_up().unwrap_or_default(),
            });
        }
        match lock(&self.finished).as_ref() {
            Some(s) if s.state == RunState::Failed => Err(Unavailable::RunFailed {
                reason: s.reason.clone(),
            }),
            _ => Ok(()),
        }
    }

    fn ready(&self) -> Result<(), Unavailable> {
        if self.shared.feeding_since.get().is_some() || lock(&self.finished).is_some() {
            Ok(())
        } else {
            Err(Unavailable::Loading)
        }
    }

    fn run_dirs(&self) -> Vec<std::path::PathBuf> {
        vec![self.shared.run_dir.clone()]
    }
}
