//! The run directory: what a resumed run already holds, the manifest, and the writers of the
//! datasets (adapters from dataflow records to `c2s-sinks` rows that also drop what a resumed
//! run already wrote, so nothing is duplicated; `prompts/`'s writer is in `prompts`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use serde::Deserialize;

use c2s_config::{KafkaSink, RunConfig, SourceConfig};
use c2s_model::ModelIdentity;
use c2s_operators::live_stats::StatsSeed;
use c2s_operators::messages::{Exchange, Reject};
use c2s_operators::sink_op::{RowSink, RowSinkError};
use c2s_operators::Counters;
use c2s_records::{PairedOutcome, Response, Trajectory};
use c2s_sinks::{
    read_manifest, read_rejects, read_request_answers, read_requests, Manifest, MetricsRow,
    OutcomeRow, PartConfig, PartWriter, RejectRow, RequestRow, Row, SinkError, SourceFile,
    TrajectoryRow,
};
use c2s_sources::{create_topic_with, KafkaPublisher};
use c2s_stats::{comparison_label, MetricRow, StatsCounts};

use super::hub::HubMismatch;

/// What identifies a recorded reject: source, location, item id, reason.
pub type RejectKey = (String, String, Option<String>, String);

/// What an existing run directory already holds.
#[derive(Debug, Default)]
pub struct ResumeState {
    /// `(item_id, arm)` of every recorded trajectory (shared with the statistics' seed).
    pub trajectory_keys: Arc<BTreeSet<(String, String)>>,
    /// `request_id` of every row of `requests/` (the request sink does not write them
    /// again).
    pub request_ids: BTreeSet<String>,
    /// Answers of completed model calls, by prompt key (replayed instead of the model).
    pub answers: Vec<(String, Response)>,
    /// `(item_id, comparison)` of every recorded outcome (shared with the statistics' seed).
    pub outcome_keys: Arc<BTreeSet<(String, String)>>,
    /// `(source, location, item_id, reason)` of every recorded reject (a resumed run does not
    /// write them again; an engine failure's location names the arm and step, not the item).
    pub reject_keys: BTreeSet<RejectKey>,
    /// Number of the next metric snapshot.
    pub next_snapshot: u64,
    /// The directory's `manifest.json`; `None`: a new run (nothing else is read then).
    pub manifest: Option<Manifest>,
    /// Request ids of every recorded coverage decision (the decisions a resumed run skips).
    pub decision_ids: Arc<BTreeSet<String>>,
    /// `(model, dialogue_id, spec label)` of every dialogue run whose latest attempt is
    /// complete and free of engine errors: a resumed run does not write them again (every
    /// other run is written again in full, so that a Rollout or Serial run after a failed
    /// request is one consistent trajectory).
    pub complete_dialogue_runs: Arc<BTreeSet<DialogueRunKey>>,
    /// `prompt_sha256` of every prompt in `prompts/` (a resumed run does not write them again).
    pub prompt_keys: Arc<BTreeSet<String>>,
    /// The prompts of recorded requests that `prompts/` lacks (a run killed between the two
    /// datasets' parts, or begun before `prompts/` existed): written at the start of the
    /// resume (`prompts::backfill`).
    pub unrecorded_prompts: Vec<UnrecordedPrompt>,
    /// This process's start (ms since the Unix epoch): the `attempt` of the rows it writes.
    pub attempt: u64,
    /// The statistics of what is already recorded: a resumed run's live metrics start from
    /// them, so its final snapshot equals `choice2seq stats` on the directory.
    pub stats: StatsSeed,
}

/// A recorded request's prompt that `prompts/` lacks.
#[derive(Debug, Clone)]
pub struct UnrecordedPrompt {
    /// `prompt_sha256`.
    pub key: String,
    /// The system message, user message and assistant prefix the request row records.
    pub spec: c2s_model::PromptSpec,
    /// The request was generated (not scored).
    pub greedy: bool,
}

impl ResumeState {
    /// Read what `run_dir` already holds. A directory without `manifest.json` is a new run:
    /// an empty state with this process's start as `attempt`.
    pub fn load(run_dir: &Path) -> anyhow::Result<ResumeState> {
        let manifest = read_manifest(run_dir)?;
        if manifest.is_none() {
            return Ok(ResumeState {
                attempt: c2s_sinks::now_ms(),
                ..ResumeState::default()
            });
        }
        let answers = read_request_answers(&run_dir.join("requests"))?
            .into_iter()
            .map(|(k, mut r)| {
                r.cached = true;
                (k, r)
            })
            .collect();
        // Outcomes and trajectories are read once: their keys (what the sinks and the
        // statistics skip) and their counts (what the statistics start from).
        let (outcomes, trajectories) = c2s_rundir::read_run(run_dir)?;
        let trajectory_keys: Arc<BTreeSet<(String, String)>> = Arc::new(
            trajectories
                .iter()
                .map(|t| (t.item_id.clone(), t.arm.to_string()))
                .collect(),
        );
        let outcome_keys: Arc<BTreeSet<(String, String)>> = Arc::new(
            outcomes
                .iter()
                .map(|o| {
                    (
                        o.item_id.clone(),
                        comparison_label(&o.native_arm, &o.serial_arm),
                    )
                })
                .collect(),
        );
        let counts = StatsCounts::from_records(&outcomes, &trajectories)
            .context("seeding the statistics from outcomes/ and trajectories/")?;
        let prompt_keys = c2s_sinks::read_prompt_keys(&run_dir.join("prompts"))?;
        let requests = read_requests(&run_dir.join("requests"))?;
        let mut unrecorded = BTreeSet::new();
        let unrecorded_prompts = requests
            .iter()
            .filter(|r| {
                !prompt_keys.contains(&r.prompt_sha256) && unrecorded.insert(&r.prompt_sha256)
            })
            .map(|r| UnrecordedPrompt {
                key: r.prompt_sha256.clone(),
                spec: c2s_model::PromptSpec {
                    system: r.system.clone(),
                    user: r.user.clone(),
                    assistant_prefix: r.assistant_prefix.clone(),
                },
                greedy: r.decoding.starts_with("greedy"),
            })
            .collect();
        Ok(ResumeState {
            stats: StatsSeed {
                counts,
                outcome_keys: outcome_keys.clone(),
                trajectory_keys: trajectory_keys.clone(),
            },
            trajectory_keys,
            request_ids: requests.into_iter().map(|r| r.request_id).collect(),
            answers,
            outcome_keys,
            reject_keys: read_rejects(&run_dir.join("rejects"))?
                .into_iter()
                .map(|r| (r.source, r.location, r.item_id, r.reason))
                .collect(),
            decision_ids: Arc::new(
                // A failed decision is asked again on resume (its answer was never recorded).
                c2s_sinks::read_decisions(&run_dir.join("decisions"))?
                    .into_iter()
                    .filter(|d| d.error.is_none())
                    .map(|d| d.request_id)
                    .collect(),
            ),
            complete_dialogue_runs: Arc::new(c2s_rundir::complete_runs(
                &c2s_sinks::read_field_turns(&run_dir.join("dialogue_turns"))?,
            )),
            prompt_keys: Arc::new(prompt_keys),
            unrecorded_prompts,
            attempt: c2s_sinks::now_ms(),
            next_snapshot: c2s_sinks::max_snapshot(&run_dir.join("metrics"))?
                .map(|s| s + 1)
                .unwrap_or(0),
            manifest,
        })
    }

    /// Whether the run directory already held a run (it has a manifest).
    pub fn is_resume(&self) -> bool {
        self.manifest.is_some()
    }
}

/// What chat templates' `strftime_now` reports in this run: the time recorded in a resumed
/// run's manifest (a manifest written before it was recorded: the run's first start), else
/// now.
pub fn template_time(resume: &ResumeState) -> anyhow::Result<c2s_model::TemplateTime> {
    let Some(m) = &resume.manifest else {
        return Ok(c2s_model::TemplateTime::now());
    };
    match m.chat_template_time.as_deref() {
        Some(text) => c2s_model::TemplateTime::parse(text)
            .map_err(|e| anyhow::anyhow!("chat_template_time: {e}")),
        None => c2s_model::TemplateTime::from_unix_ms(m.started_at_ms)
            .ok_or_else(|| anyhow::anyhow!("started_at_ms {} is out of range", m.started_at_ms)),
    }
}

/// The template time of process 0, for another process of a new cluster run: read from the
/// manifest process 0 writes before it joins the cluster (so it is there before the cluster
/// can start), waiting up to two minutes for it.
pub fn await_template_time(run_dir: &Path) -> anyhow::Result<c2s_model::TemplateTime> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let resume = ResumeState {
            manifest: c2s_sinks::read_manifest(run_dir).ok().flatten(),
            ..Default::default()
        };
        if resume
            .manifest
            .as_ref()
            .is_some_and(|m| m.chat_template_time.is_some())
        {
            return template_time(&resume);
        }
        if std::time::Instant::now() >= deadline {
            anyhow::bail!(
                "process 0 wrote no manifest with its chat_template_time within 2 minutes"
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Write (or, on resume, update) `manifest.json`: resolved config, seeds, source hashes, model
/// identity and versions.
pub fn write_manifest_for(
    run_dir: &Path,
    cfg: &RunConfig,
    identity: &ModelIdentity,
    resume: &ResumeState,
    template_time: c2s_model::TemplateTime,
) -> anyhow::Result<()> {
    let mut m = match &resume.manifest {
        Some(m) => {
            let mut m = m.clone();
            m.mark_resumed(c2s_sinks::now_ms());
            m
        }
        None => Manifest::new(
            cfg.run.name.clone(),
            serde_json::to_value(cfg)?,
            serde_json::to_value(identity)?,
        ),
    };
    m.config = serde_json::to_value(cfg)?;
    m.model = serde_json::to_value(identity)?;
    m.chat_template_time = Some(template_time.to_string());
    m.status = Some(c2s_sinks::RunStatus::running());
    m.seeds.insert("option_seed".into(), cfg.run.option_seed);
    m.seeds.insert("bootstrap_seed".into(), cfg.stats.seed);
    m.sources.clear();
    for s in &cfg.sources {
        match s {
            SourceConfig::Jsonl { path, .. } | SourceConfig::Parquet { path, .. } => {
                m.sources.push(
                    SourceFile::hash("items", path)
                        .with_context(|| format!("hashing {}", path.display()))?,
                );
            }
            SourceConfig::Kafka { .. } => {}
        }
    }
    if let Some(plans) = &cfg.copy_plans {
        m.sources.push(
            SourceFile::hash(COPY_PLANS_ROLE, &plans.path)
                .with_context(|| format!("hashing {}", plans.path.display()))?,
        );
    }
    if let Some(c) = &cfg.coverage {
        for path in &c.catalogues {
            m.sources.push(
                SourceFile::hash("coverage catalogue", path)
                    .with_context(|| format!("hashing {}", path.display()))?,
            );
        }
        let provenance = Path::new("data/banks/coverage-provenance.json");
        if provenance.exists() {
            m.sources
                .push(SourceFile::hash("coverage bank provenance", provenance)?);
        }
    }
    if cfg.dialogue.is_some() {
        let provenance = Path::new("data/banks/dialogue-provenance.json");
        if provenance.exists() {
            m.sources
                .push(SourceFile::hash("dialogue bank provenance", provenance)?);
        }
    }
    let provenance = Path::new("data/banks/provenance.json");
    if provenance.exists() {
        m.sources
            .push(SourceFile::hash("bank provenance", provenance)?);
    }
    // The identity already holds the model's hash (of the GGUF file, or of a directory's
    // files): hashing a large model again would only repeat it.
    let path = cfg.model.path.display().to_string();
    let model = if identity.path == path {
        SourceFile {
            role: "model".into(),
            bytes: model_bytes(&cfg.model.path),
            path,
            sha256: identity.file_sha256.clone(),
        }
    } else {
        SourceFile::hash("model", &cfg.model.path).unwrap_or(SourceFile {
            role: "model".into(),
            path,
            sha256: identity.file_sha256.clone(),
            bytes: 0,
        })
    };
    m.sources.push(model);
    c2s_sinks::write_manifest(run_dir, &m)?;
    Ok(())
}

/// The manifest role of the `[copy_plans]` file.
pub const COPY_PLANS_ROLE: &str = "copy plans";

/// Why a run directory cannot be resumed with this config ([`same_model`],
/// [`same_copy_plans`]): `choice2seq run` prints it after `cannot resume with another model:`
/// or `cannot resume with other copy plans:` and exits 2.
#[derive(Debug, thiserror::Error)]
pub enum ResumeMismatch {
    /// The manifest's `model` is not a [`ModelIdentity`] (a manifest from another version).
    #[error("the recorded model does not read as a model identity: {source}")]
    UnreadableModel {
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// The recorded model differs from this run's: other weights, tokenizer, chat template,
    /// engine or Hub origin. Its text lists each difference, comma-separated.
    #[error("{}", model_differences(changed, hub.as_ref()))]
    Model {
        /// The identity fields that differ, in the order file, tokenizer, template, engine.
        changed: Vec<ChangedField>,
        /// How the Hub origin differs; `None`: it does not (or a model is not from the Hub).
        hub: Option<HubMismatch>,
    },
    /// The config's `[copy_plans]` file could not be read to hash it.
    #[error("{source}")]
    UnreadableCopyPlans {
        /// The copy plans file.
        path: PathBuf,
        /// The read error, which names the file.
        #[source]
        source: SinkError,
    },
    /// The run started with other copy plans, or with copy plans and now has none (or the
    /// reverse).
    #[error(
        "the copy plans were {} and are now {}",
        before.as_deref().unwrap_or("absent"),
        now.as_deref().unwrap_or("absent")
    )]
    CopyPlans {
        /// SHA-256 of the plans the manifest records; `None`: the run copied no plans.
        before: Option<String>,
        /// SHA-256 of the config's plans file; `None`: the config names none.
        now: Option<String>,
    },
}

/// One field of a [`ModelIdentity`] whose recorded value differs from this run's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedField {
    /// The field's name in the manifest (`file_sha256`, `tokenizer`, …).
    pub field: &'static str,
    /// The value the manifest records.
    pub was: String,
    /// The value of the model loaded now.
    pub now: String,
}

impl std::fmt::Display for ChangedField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} was {:?} and is now {:?}",
            self.field, self.was, self.now
        )
    }
}

/// The text of [`ResumeMismatch::Model`]: the changed fields, then the Hub difference.
fn model_differences(changed: &[ChangedField], hub: Option<&HubMismatch>) -> String {
    let mut differs: Vec<String> = changed.iter().map(ChangedField::to_string).collect();
    differs.extend(hub.map(HubMismatch::to_string));
    differs.join(", ")
}

/// A resumed run must copy the plans it started with: trajectories that copied two different
/// plan files would mix in one run. `Err` names both hashes.
pub fn same_copy_plans(recorded: &Manifest, cfg: &RunConfig) -> Result<(), ResumeMismatch> {
    let before = recorded
        .sources
        .iter()
        .find(|s| s.role == COPY_PLANS_ROLE)
        .map(|s| s.sha256.clone());
    let now = match &cfg.copy_plans {
        None => None,
        Some(p) => Some(
            SourceFile::hash(COPY_PLANS_ROLE, &p.path)
                .map_err(|source| ResumeMismatch::UnreadableCopyPlans {
                    path: p.path.clone(),
                    source,
                })?
                .sha256,
        ),
    };
    if before == now {
        Ok(())
    } else {
        Err(ResumeMismatch::CopyPlans { before, now })
    }
}

/// Whether a run directory's recorded model (its manifest's `model`) is `identity`: same
/// weights, tokenizer, chat template and engine. Returns what differs.
pub fn same_model(
    recorded: &serde_json::Value,
    identity: &ModelIdentity,
) -> Result<(), ResumeMismatch> {
    let recorded = ModelIdentity::deserialize(recorded)
        .map_err(|source| ResumeMismatch::UnreadableModel { source })?;
    let fields: [(&'static str, &String, &String); 4] = [
        ("file_sha256", &recorded.file_sha256, &identity.file_sha256),
        ("tokenizer", &recorded.tokenizer, &identity.tokenizer),
        (
            "chat_template_sha256",
            &recorded.chat_template_sha256,
            &identity.chat_template_sha256,
        ),
        ("engine", &recorded.engine, &identity.engine),
    ];
    let changed: Vec<ChangedField> = fields
        .into_iter()
        .filter(|(_, was, now)| was != now)
        .map(|(field, was, now)| ChangedField {
            field,
            was: was.clone(),
            now: now.clone(),
        })
        .collect();
    let hub = super::hub::same_hub(recorded.hub.as_ref(), identity.hub.as_ref()).err();
    if changed.is_empty() && hub.is_none() {
        Ok(())
    } else {
        Err(ResumeMismatch::Model { changed, hub })
    }
}

/// Size of a model file, or of the files of a model directory (following links: a Hub
/// snapshot links its files to the cache's blobs).
fn model_bytes(path: &Path) -> u64 {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => std::fs::read_dir(path)
            .map(|entries| {
                entries
                    .filter_map(|e| std::fs::metadata(e.ok()?.path()).ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

/// Stamp the manifest's update time at the end of a run.
/// Record how the run ended.
pub fn finish_manifest(run_dir: &Path, status: c2s_sinks::RunStatus) -> anyhow::Result<()> {
    if let Some(mut m) = read_manifest(run_dir)? {
        m.updated_at_ms = c2s_sinks::now_ms();
        m.status = Some(status);
        c2s_sinks::write_manifest(run_dir, &m)?;
    }
    Ok(())
}

pub(super) fn part_config(cfg: &RunConfig) -> PartConfig {
    PartConfig {
        part_rows: cfg.output.part_rows,
        part_seconds: cfg.output.part_seconds,
        ..Default::default()
    }
}

/// A dataset writer fed with dataflow records.
pub struct DatasetSink<D, R: Row> {
    writer: PartWriter<R>,
    convert: Box<dyn FnMut(D) -> Option<R>>,
    publish: Option<Publish<R>>,
}

/// `[output.kafka]`: the rows of each closed part, published as JSON messages once the part is
/// durable (so a topic never holds a row that the run directory lacks).
struct Publish<R> {
    publisher: KafkaPublisher,
    topic: String,
    /// (key, JSON) of the rows buffered for the next part.
    pending: Vec<(Option<String>, String)>,
    encode: fn(&R) -> (Option<String>, String),
}

impl<D: 'static, R: Row + 'static> RowSink<D> for DatasetSink<D, R> {
    fn push(&mut self, record: D) -> Result<(), RowSinkError> {
        if let Some(row) = (self.convert)(record) {
            if let Some(p) = &mut self.publish {
                p.pending.push((p.encode)(&row));
            }
            self.writer.push_at(row, Instant::now());
        }
        Ok(())
    }

    fn buffered(&self) -> usize {
        self.writer.buffered()
    }

    fn buffered_bytes(&self) -> usize {
        let pending = self.publish.as_ref().map_or(0, |p| {
            p.pending
                .iter()
                .map(|(k, v)| k.as_ref().map_or(0, String::len) + v.len())
                .sum()
        });
        self.writer.buffered_bytes() + pending
    }

    fn due(&self, now: Instant) -> bool {
        self.writer.due(now)
    }

    fn discard(&mut self) {
        self.writer.discard();
        if let Some(p) = &mut self.publish {
            p.pending.clear();
        }
    }

    fn roll(&mut self) -> Result<(), RowSinkError> {
        self.writer
            .roll()
            .map_err(|e| RowSinkError::Write { source: e.into() })?;
        if let Some(p) = &mut self.publish {
            let rows = std::mem::take(&mut p.pending);
            p.publisher
                .publish(&p.topic, &rows)
                .map_err(|e| RowSinkError::Publish {
                    dataset: R::DATASET,
                    source: e.into(),
                })?;
        }
        Ok(())
    }
}

impl<D, R: Row> DatasetSink<D, R> {
    /// Also publish every closed part's rows to `topic` of `[output.kafka]`'s brokers.
    fn publishing(
        mut self,
        kafka: Option<&KafkaSink>,
        topic: impl Fn(&KafkaSink) -> &str,
        encode: fn(&R) -> (Option<String>, String),
    ) -> anyhow::Result<Self> {
        if let Some(k) = kafka {
            let topic = topic(k).to_string();
            let connection = super::feed::kafka_connection(k.client());
            // Idempotent: `false` when the topic exists already.
            create_topic_with(&connection, &topic, 1)
                .with_context(|| format!("creating Kafka topic `{topic}`"))?;
            self.publish = Some(Publish {
                publisher: KafkaPublisher::connect_with(&connection)
                    .with_context(|| format!("connecting to Kafka at {}", k.brokers))?,
                topic,
                pending: Vec::new(),
                encode,
            });
        }
        Ok(self)
    }
}

pub(super) fn open<D, R: Row>(
    run_dir: &Path,
    worker: usize,
    cfg: &RunConfig,
    convert: impl FnMut(D) -> Option<R> + 'static,
) -> anyhow::Result<DatasetSink<D, R>> {
    Ok(DatasetSink {
        writer: PartWriter::open(run_dir, worker, part_config(cfg))
            .with_context(|| format!("opening {}/{}", run_dir.display(), R::DATASET))?,
        convert: Box::new(convert),
        publish: None,
    })
}

pub fn trajectory_sink(
    run_dir: &Path,
    worker: usize,
    cfg: &RunConfig,
    resume: &ResumeState,
) -> anyhow::Result<DatasetSink<Trajectory, TrajectoryRow>> {
    let done = resume.trajectory_keys.clone();
    open(run_dir, worker, cfg, move |t: Trajectory| {
        (!done.contains(&(t.item_id.clone(), t.arm.to_string()))).then(|| TrajectoryRow::from(&t))
    })
}

pub fn request_sink(
    run_dir: &Path,
    worker: usize,
    cfg: &RunConfig,
    resume: &ResumeState,
    model: String,
) -> anyhow::Result<DatasetSink<Exchange, RequestRow>> {
    let done = resume.request_ids.clone();
    open(run_dir, worker, cfg, move |x: Exchange| {
        (!done.contains(&x.request.request_id))
            .then(|| RequestRow::from_response(&x.request, &x.response, x.step.as_ref(), &model))
    })
}

pub fn reject_sink(
    run_dir: &Path,
    worker: usize,
    cfg: &RunConfig,
    resume: &ResumeState,
    counters: Arc<Counters>,
) -> anyhow::Result<DatasetSink<Reject, RejectRow>> {
    let done = resume.reject_keys.clone();
    open(run_dir, worker, cfg, move |r: Reject| {
        counters.add_reject(&r);
        tracing::warn!(
            "rejected {} at {}{}: {}",
            r.source,
            r.location,
            r.item_id
                .as_deref()
                .map(|i| format!(" (item {i})"))
                .unwrap_or_default(),
            r.reason
        );
        let key = (
            r.source.clone(),
            r.location.clone(),
            r.item_id.clone(),
            r.reason.clone(),
        );
        (!done.contains(&key)).then(|| RejectRow::new(r.source, r.location, r.item_id, r.reason))
    })
}

pub fn outcome_sink(
    run_dir: &Path,
    worker: usize,
    cfg: &RunConfig,
    resume: &ResumeState,
) -> anyhow::Result<DatasetSink<PairedOutcome, OutcomeRow>> {
    let done = resume.outcome_keys.clone();
    open(run_dir, worker, cfg, move |o: PairedOutcome| {
        let row = OutcomeRow::from(&o);
        (!done.contains(&(row.item_id.clone(), row.comparison.clone()))).then_some(row)
    })?
    .publishing(
        cfg.output.kafka.as_ref(),
        |k| &k.outcomes_topic,
        |row: &OutcomeRow| (Some(row.item_id.clone()), row.to_json().to_string()),
    )
}

pub fn decision_sink(
    run_dir: &Path,
    worker: usize,
    cfg: &RunConfig,
    resume: &ResumeState,
) -> anyhow::Result<DatasetSink<c2s_records::Decision, c2s_sinks::DecisionRow>> {
    let done = resume.decision_ids.clone();
    open(run_dir, worker, cfg, move |d: c2s_records::Decision| {
        (!done.contains(&d.request_id)).then_some(c2s_sinks::DecisionRow(d))
    })
}

/// What identifies a dialogue run (a dialogue under one spec) across a resume.
pub type DialogueRunKey = (String, String, String);

pub fn field_turn_sink(
    run_dir: &Path,
    worker: usize,
    cfg: &RunConfig,
    resume: &ResumeState,
) -> anyhow::Result<DatasetSink<c2s_records::FieldTurn, c2s_sinks::FieldTurnRow>> {
    let done = resume.complete_dialogue_runs.clone();
    let attempt = resume.attempt;
    open(
        run_dir,
        worker,
        cfg,
        move |mut t: c2s_records::FieldTurn| {
            let key = (t.model.clone(), t.dialogue_id.clone(), t.spec.label());
            t.attempt = attempt;
            (!done.contains(&key)).then_some(c2s_sinks::FieldTurnRow(t))
        },
    )
}

pub fn metric_sink(
    run_dir: &Path,
    worker: usize,
    cfg: &RunConfig,
) -> anyhow::Result<DatasetSink<MetricRow, MetricsRow>> {
    open(run_dir, worker, cfg, |m: MetricRow| {
        Some(MetricsRow::new(m, c2s_sinks::now_ms()))
    })?
    .publishing(
        cfg.output.kafka.as_ref(),
        |k| &k.metrics_topic,
        |row: &MetricsRow| {
            (
                Some(row.metric.snapshot.to_string()),
                row.to_json().to_string(),
            )
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `choice2seq run` prints after `cannot resume with …:` for each mismatch.
    #[test]
    fn resume_mismatch_messages() {
        let json = serde_json::from_str::<serde_json::Value>("[1]").unwrap();
        let source = ModelIdentity::deserialize(&json).unwrap_err();
        let text = source.to_string();
        assert_eq!(
            ResumeMismatch::UnreadableModel { source }.to_string(),
            format!("the recorded model does not read as a model identity: {text}")
        );
        let changed = vec![
            ChangedField {
                field: "file_sha256",
                was: "aa".into(),
                now: "bb".into(),
            },
            ChangedField {
                field: "engine",
                was: "prefix/f32".into(),
                now: "openai/x".into(),
            },
        ];
        let model = ResumeMismatch::Model { changed, hub: None };
        assert_eq!(
            model.to_string(),
            "file_sha256 was \"aa\" and is now \"bb\", \
             engine was \"prefix/f32\" and is now \"openai/x\""
        );
        let hub = |commit: &str| c2s_model::HubIdentity {
            repo: "o/n".into(),
            revision: "main".into(),
            commit: commit.into(),
            file: None,
        };
        let moved = ResumeMismatch::Model {
            changed: Vec::new(),
            hub: Some(HubMismatch {
                was: Box::new(hub("aaa")),
                now: Box::new(hub("bbb")),
            }),
        };
        assert_eq!(
            moved.to_string(),
            "revision main was commit aaa and main is now commit bbb"
        );
        let path = PathBuf::from("plans/none.jsonl");
        let source = SinkError::Io {
            path: path.clone(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
        };
        assert_eq!(
            ResumeMismatch::UnreadableCopyPlans { path, source }.to_string(),
            "plans/none.jsonl: gone"
        );
        let plans = ResumeMismatch::CopyPlans {
            before: Some("abc".into()),
            now: None,
        };
        assert_eq!(
            plans.to_string(),
            "the copy plans were abc and are now absent"
        );
    }
}
