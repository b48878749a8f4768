//! [`InferenceService`]: the batcher between the dataflow and an engine.
//!
//! The engine runs on its own thread. Callers submit requests asynchronously; the thread takes
//! everything queued (up to a batch limit) and runs it as one engine batch, so requests from
//! many items and steps share forward passes. Identical requests (same prompt, options and
//! decoding; the model is fixed per service) are computed once: later copies wait for the
//! first or read its stored answer. A semaphore bounds the requests in flight, so a fast
//! producer waits instead of queueing without limit.
//!
//! An engine with a continuous-batching interface ([`crate::ContinuousEngine`]: the prefix
//! engine, mistral.rs) is driven step by step instead: a request that arrives while others compute joins
//! at the next step, and an answered one leaves at once, so its place is refilled without
//! waiting for the rest of its batch (a batch of generations used to last as long as its
//! longest one).

use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, Semaphore};

use c2s_records::{Answer, Decoding, Request, Response};

use crate::engine::{
    Engine, EngineAnswer, EngineJob, EngineStats, GenerateJob, GenerateOutput, ModelIdentity,
    PromptSpec, ScoreJob, ScoreOutput,
};
use crate::error::EngineError;

mod load;
pub use load::{Buckets, ServiceLoad, ServiceProbe, LATENCY_BUCKETS_SECONDS};

/// Batching and flow-control settings.
#[derive(Debug, Clone, Copy)]
pub struct ServiceConfig {
    /// Most requests in one engine batch.
    pub max_batch: usize,
    /// Most distinct requests queued or computing at once (backpressure).
    pub max_in_flight: usize,
    /// How long the engine thread waits for more requests after the first one of a batch.
    pub linger: Duration,
    /// Answer identical requests once (off only for baseline measurements).
    pub dedup: bool,
    /// Drive an engine that offers [`crate::ContinuousEngine`] step by step (off: a batch at a
    /// time, the baseline of measurements).
    pub continuous: bool,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            max_batch: 32,
            max_in_flight: 256,
            linger: Duration::from_millis(2),
            dedup: true,
            continuous: true,
        }
    }
}

static NEXT_CALL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What the service answered (the engine's answer or a stored copy).
pub type Reply = Result<Response, EngineError>;

struct Job {
    key: String,
    request: Request,
}

#[derive(Default)]
struct Shared {
    /// Waiters per prompt key of requests being computed.
    waiting: HashMap<String, Vec<(String, oneshot::Sender<Reply>)>>,
    /// Answers of completed requests, for in-run de-duplication. An answer is kept while an
    /// item that asked for it is in progress (and a resumed run's recorded answers until an
    /// item asks for them): identical prompts arise within an item (arms sharing steps), so
    /// forgetting finished items' answers bounds the cache by the items in flight without
    /// changing what any item is answered.
    done: HashMap<String, Response>,
    /// Prompt keys each item in progress has asked for.
    item_keys: HashMap<String, Vec<String>>,
    /// Items in progress per prompt key.
    key_items: HashMap<String, u32>,
    stats: EngineStats,
    /// Requests answered by de-duplication instead of the engine, batch sizes and latencies
    /// (what a [`ServiceProbe`] reads).
    load: Arc<load::LoadShared>,
    tally: Arc<AnswerTally>,
}

/// Counters of the service.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServiceStats {
    /// The engine's own counters, as of its latest batch.
    pub engine: EngineStats,
    /// Requests answered with the answer of an identical prompt (already answered, preloaded
    /// from an earlier run, or in flight) instead of by the engine.
    pub deduplicated: u64,
}

impl ServiceStats {
    /// Add another service's counters (the workers of one process).
    pub fn add(&mut self, other: &ServiceStats) {
        self.engine.add(&other.engine);
        self.deduplicated += other.deduplicated;
    }
}

/// Distinct error messages an [`AnswerTally`] counts apart; further ones are counted together.
const TALLY_MESSAGES: usize = 256;

/// What the engine answered, counted once per computed request (copies answered by
/// de-duplication are not counted): shared by the services of a process, so that the run can
/// tell whether its model did its job — the final status, and the early stop when every call
/// from the start fails the same way.
#[derive(Debug, Default)]
pub struct AnswerTally {
    inner: Mutex<TallyCounts>,
    /// The services counting here, for a live monitor's view of their load.
    services: Mutex<Vec<ServiceProbe>>,
}

/// The counts of an [`AnswerTally`].
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TallyCounts {
    /// Computed requests the engine answered.
    pub answered: u64,
    /// Computed requests that failed (an outage past the limit counts in neither).
    pub failed: u64,
    /// Failures by error message (at most [`TALLY_MESSAGES`] messages; the rest under
    /// `other errors`).
    pub errors: HashMap<String, u64>,
    /// While nothing has been answered: the error of the latest failures and how many
    /// consecutive failures had exactly it.
    pub leading: Option<(String, u64)>,
}

impl TallyCounts {
    /// The most common error and its count (ties: the smaller message, for stable output).
    pub fn most_common(&self) -> Option<(&str, u64)> {
        self.errors
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
            .map(|(m, &n)| (m.as_str(), n))
    }

    /// Failed share of the computed requests (0 when none was computed).
    pub fn failed_share(&self) -> f64 {
        let total = self.answered + self.failed;
        if total == 0 {
            0.0
        } else {
            self.failed as f64 / total as f64
        }
    }
}

impl AnswerTally {
    /// Count one computed reply: an answer, or a failure under its message. A call that gave
    /// up on an outage counts as neither (the run stops and asks it again on resume).
    pub fn record(&self, reply: &Reply) {
        if let Err(EngineError::Outage(_)) = reply {
            // The server was out past the limit: no answer and no failure of the model (the
            // run stops, and resumes the request).
            return;
        }
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match reply {
            Ok(_) => {
                t.answered += 1;
                t.leading = None;
            }
            Err(e) => {
                t.failed += 1;
                let message = e.to_string();
                if t.answered == 0 {
                    t.leading = match t.leading.take() {
                        Some((m, n)) if m == message => Some((m, n + 1)),
                        _ => Some((message.clone(), 1)),
                    };
                }
                let known = t.errors.contains_key(&message);
                let key = if known || t.errors.len() < TALLY_MESSAGES {
                    message
                } else {
                    "other errors".to_string()
                };
                *t.errors.entry(key).or_default() += 1;
            }
        }
    }

    /// While nothing has been answered: the error of the latest failures and how many
    /// consecutive failures had exactly it.
    pub fn leading(&self) -> Option<(String, u64)> {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .leading
            .clone()
    }

    /// A snapshot of the counts so far.
    pub fn counts(&self) -> TallyCounts {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The load of every service counting here (ended ones with their final counters).
    pub fn loads(&self) -> Vec<ServiceLoad> {
        let probes = self
            .services
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        probes.iter().map(ServiceProbe::load).collect()
    }
}

/// An engine behind an async, batching, de-duplicating interface.
#[derive(Clone)]
pub struct InferenceService {
    tx: mpsc::Sender<Job>,
    shared: Arc<Mutex<Shared>>,
    permits: Arc<Semaphore>,
    identity: ModelIdentity,
    dedup: bool,
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    // A panic while holding the lock leaves plain maps behind; keep going with them.
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

impl InferenceService {
    /// Start the engine thread.
    pub fn start(engine: Box<dyn Engine>, config: ServiceConfig) -> InferenceService {
        Self::start_counted(engine, config, Arc::new(AnswerTally::default()))
    }

    /// Start the engine thread; every computed answer is counted in `tally`.
    pub fn start_counted(
        engine: Box<dyn Engine>,
        config: ServiceConfig,
        tally: Arc<AnswerTally>,
    ) -> InferenceService {
        let identity = engine.identity().clone();
        let (tx, rx) = mpsc::channel::<Job>();
        let load = Arc::new(load::LoadShared::default());
        let permits = Arc::new(Semaphore::new(config.max_in_flight.max(1)));
        tally
            .services
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(ServiceProbe {
                load: load.clone(),
                permits: permits.clone(),
                capacity: config.max_in_flight.max(1),
            });
        let shared = Arc::new(Mutex::new(Shared {
            tally,
            load,
            ..Shared::default()
        }));
        let thread_shared = shared.clone();
        // A thread the OS cannot give at start-up leaves no service to run: not an input error.
        #[allow(clippy::expect_used)]
        thread::Builder::new()
            .name("c2s-engine".into())
            .spawn(move || engine_loop(engine, rx, thread_shared, config))
            .expect("spawning the engine thread");
        InferenceService {
            tx,
            shared,
            permits,
            identity,
            dedup: config.dedup,
        }
    }

    /// The identity of the engine's model (read once when the service started).
    pub fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    /// The counters so far: the engine's as of its latest batch, and the requests answered
    /// by de-duplication.
    pub fn stats(&self) -> ServiceStats {
        let s = lock(&self.shared);
        ServiceStats {
            engine: s.stats,
            deduplicated: s.load.deduplicated(),
        }
    }

    /// Record answers known from an earlier run (resume): later identical requests are answered
    /// from them instead of the model.
    pub fn preload(&self, answers: impl IntoIterator<Item = (String, Response)>) {
        let mut s = lock(&self.shared);
        for (key, resp) in answers {
            s.done.insert(key, resp);
        }
    }

    /// An item is finished: forget the answers no item in progress asked for.
    pub fn finish_item(&self, item_id: &str) {
        let mut s = lock(&self.shared);
        let Some(keys) = s.item_keys.remove(item_id) else {
            return;
        };
        for key in keys {
            let left = match s.key_items.get_mut(&key) {
                Some(n) => {
                    *n = n.saturating_sub(1);
                    *n
                }
                None => 0,
            };
            if left == 0 {
                s.key_items.remove(&key);
                s.done.remove(&key);
            }
        }
    }

    /// Answer one request.
    pub async fn call(&self, request: Request) -> Reply {
        let key = if self.dedup {
            request.prompt_key()
        } else {
            // Without de-duplication every call is its own key.
            format!(
                "{}#{}",
                request.prompt_key(),
                NEXT_CALL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            )
        };
        enum Route {
            Done(Box<Response>),
            Wait(oneshot::Receiver<Reply>),
            Compute(oneshot::Receiver<Reply>),
        }
        let route = {
            let mut s = lock(&self.shared);
            let keys = s.item_keys.entry(request.item_id.clone()).or_default();
            if !keys.contains(&key) {
                keys.push(key.clone());
                *s.key_items.entry(key.clone()).or_default() += 1;
            }
            if let Some(done) = s.done.get(&key) {
                let mut r = done.clone();
                r.request_id = request.request_id.clone();
                r.cached = true;
                r.latency_ms = 0.0;
                s.load
                    .deduplicated
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Route::Done(Box::new(r))
            } else {
                let (tx, rx) = oneshot::channel();
                if let Some(waiters) = s.waiting.get_mut(&key) {
                    waiters.push((request.request_id.clone(), tx));
                    s.load
                        .deduplicated
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    Route::Wait(rx)
                } else {
                    s.waiting
                        .insert(key.clone(), vec![(request.request_id.clone(), tx)]);
                    Route::Compute(rx)
                }
            }
        };
        let rx = match route {
            Route::Done(r) => return Ok(*r),
            Route::Wait(rx) => return rx.await.unwrap_or(Err(EngineError::Stopped)),
            Route::Compute(rx) => rx,
        };
        let permit = self.permits.clone().acquire_owned().await;
        if self.tx.send(Job { key, request }).is_err() {
            return Err(EngineError::Stopped);
        }
        let reply = rx.await.unwrap_or(Err(EngineError::Stopped));
        drop(permit);
        reply
    }

    /// Answer many requests concurrently (benchmarks, tests).
    pub async fn call_all(&self, requests: Vec<Request>) -> Vec<Reply> {
        let handles: Vec<_> = requests
            .into_iter()
            .map(|r| {
                let s = self.clone();
                tokio::spawn(async move { s.call(r).await })
            })
            .collect();
        let mut out = Vec::with_capacity(handles.len());
        for h in handles {
            out.push(h.await.unwrap_or(Err(EngineError::Stopped)));
        }
        out
    }
}

fn engine_loop(
    mut engine: Box<dyn Engine>,
    rx: mpsc::Receiver<Job>,
    shared: Arc<Mutex<Shared>>,
    config: ServiceConfig,
) {
    if config.continuous && engine.continuous().is_some() {
        continuous_loop(engine.as_mut(), &rx, &shared, config);
    } else {
        batch_loop(engine.as_mut(), &rx, &shared, config);
    }
}

/// The first job and whatever else arrives within the linger, up to `max_batch`.
fn gather(first: Job, rx: &mpsc::Receiver<Job>, config: ServiceConfig) -> Vec<Job> {
    let mut batch = vec![first];
    let deadline = Instant::now() + config.linger;
    while batch.len() < config.max_batch {
        match rx.try_recv() {
            Ok(j) => batch.push(j),
            Err(mpsc::TryRecvError::Empty) => {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                match rx.recv_timeout(deadline - now) {
                    Ok(j) => batch.push(j),
                    Err(_) => break,
                }
            }
            Err(mpsc::TryRecvError::Disconnected) => break,
        }
    }
    batch
}

/// The engine scores the request's options followed by its closing context: the context's
/// names take part in the end-token closing rule and are dropped from the answer ([`scored`]).
fn score_job(r: &Request) -> ScoreJob {
    ScoreJob {
        prompt: PromptSpec::from_request(r),
        options: r
            .options
            .iter()
            .map(|o| o.code.clone())
            .chain(r.closing_context.iter().cloned())
            .collect(),
    }
}

fn generate_job(r: &Request) -> GenerateJob {
    GenerateJob {
        prompt: PromptSpec::from_request(r),
        max_new_tokens: match r.decoding {
            Decoding::Greedy { max_new_tokens } => max_new_tokens,
            Decoding::Score => 1,
        },
    }
}

/// The answer over the request's own options: a closing context's scores are dropped and the
/// rest renormalized (the same softmax over the offered options' log-likelihoods).
fn scored(r: &Request, o: ScoreOutput) -> Response {
    let n = r.options.len();
    let mut raw = o.raw();
    let probabilities = if r.closing_context.is_empty() {
        o.probabilities
    } else {
        if let Some(raw) = &mut raw {
            raw.logprobs.truncate(n);
            raw.token_logprobs.truncate(n);
        }
        crate::engine::normalize_logprobs(&o.logprobs[..n.min(o.logprobs.len())])
    };
    Response {
        request_id: r.request_id.clone(),
        answer: Answer::Scored { probabilities, raw },
        prompt_tokens: o.prompt_tokens,
        completion_tokens: 0,
        latency_ms: o.latency_ms,
        cached: false,
    }
}

fn generated(r: &Request, o: GenerateOutput) -> Response {
    Response {
        request_id: r.request_id.clone(),
        answer: Answer::Generated {
            text: o.text,
            finish_reason: o.finish_reason,
            truncated: o.truncated,
        },
        prompt_tokens: o.prompt_tokens,
        completion_tokens: o.completion_tokens,
        latency_ms: o.latency_ms,
        cached: false,
    }
}

/// Batch at a time: everything queued (up to `max_batch`) runs as one engine call, and the
/// next batch starts when that call returns.
fn batch_loop(
    engine: &mut dyn Engine,
    rx: &mpsc::Receiver<Job>,
    shared: &Mutex<Shared>,
    config: ServiceConfig,
) {
    while let Ok(first) = rx.recv() {
        let batch = gather(first, rx, config);
        let size = batch.len();
        let (score, generate): (Vec<Job>, Vec<Job>) = batch
            .into_iter()
            .partition(|j| j.request.decoding == Decoding::Score);
        let mut replies: Vec<(String, Reply)> = Vec::new();
        if !score.is_empty() {
            let jobs: Vec<ScoreJob> = score.iter().map(|j| score_job(&j.request)).collect();
            for (j, out) in score.iter().zip(engine.score(&jobs)) {
                replies.push((j.key.clone(), out.map(|o| scored(&j.request, o))));
            }
        }
        if !generate.is_empty() {
            let jobs: Vec<GenerateJob> =
                generate.iter().map(|j| generate_job(&j.request)).collect();
            for (j, out) in generate.iter().zip(engine.generate(&jobs)) {
                replies.push((j.key.clone(), out.map(|o| generated(&j.request, o))));
            }
        }
        deliver(shared, engine.stats(), replies, size);
    }
}

/// Continuous batching ([`ContinuousEngine`]): up to `max_batch` requests are in the engine at
/// once; after every step, requests that arrived take the places of those answered, so no
/// request waits for a whole batch to end.
fn continuous_loop(
    engine: &mut dyn Engine,
    rx: &mpsc::Receiver<Job>,
    shared: &Mutex<Shared>,
    config: ServiceConfig,
) {
    let mut in_flight: HashMap<u64, Job> = HashMap::new();
    let mut next_ticket = 0u64;
    loop {
        let arrivals = if in_flight.is_empty() {
            match rx.recv() {
                Ok(first) => gather(first, rx, config),
                Err(_) => return,
            }
        } else {
            let mut arrivals = Vec::new();
            while in_flight.len() + arrivals.len() < config.max_batch.max(1) {
                match rx.try_recv() {
                    Ok(j) => arrivals.push(j),
                    Err(_) => break,
                }
            }
            arrivals
        };
        let Some(c) = engine.continuous() else {
            return;
        };
        for j in arrivals {
            let job = match j.request.decoding {
                Decoding::Score => EngineJob::Score(score_job(&j.request)),
                Decoding::Greedy { .. } => EngineJob::Generate(generate_job(&j.request)),
            };
            c.begin(next_ticket, job);
            in_flight.insert(next_ticket, j);
            next_ticket += 1;
        }
        let size = in_flight.len();
        let answers = c.step();
        let engine_empty = c.in_flight() == 0;
        let mut replies: Vec<(String, Reply)> = answers
            .into_iter()
            .filter_map(|(ticket, answer)| {
                let j = in_flight.remove(&ticket)?;
                let reply = match answer {
                    EngineAnswer::Score(o) => o.map(|o| scored(&j.request, o)),
                    EngineAnswer::Generate(o) => o.map(|o| generated(&j.request, o)),
                };
                Some((j.key, reply))
            })
            .collect();
        // An engine holding nothing answers nothing more: what it did not answer is lost.
        if engine_empty {
            replies.extend(in_flight.drain().map(|(_, j)| {
                (
                    j.key,
                    Err(EngineError::Compute("the engine lost the request".into())),
                )
            }));
        }
        deliver(shared, engine.stats(), replies, size);
    }
}

/// Hand each reply to every caller waiting on its key, and keep successful answers for
/// de-duplication.
/// `batch`: the requests in the engine batch (or step) that ended.
fn deliver(
    shared: &Mutex<Shared>,
    stats: EngineStats,
    replies: Vec<(String, Reply)>,
    batch: usize,
) {
    let mut s = lock(shared);
    s.stats = stats;
    s.load.batch(
        stats,
        batch,
        replies
            .iter()
            .filter_map(|(_, r)| r.as_ref().ok().map(|r| r.latency_ms)),
    );
    for (key, reply) in replies {
        s.tally.record(&reply);
        if let Ok(r) = &reply {
            s.done.insert(key.clone(), r.clone());
        }
        for (i, (request_id, tx)) in s
            .waiting
            .remove(&key)
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            let mut r = reply.clone();
            if let Ok(resp) = r.as_mut() {
                resp.request_id = request_id;
                if i > 0 {
                    resp.cached = true;
                }
            }
            let _ = tx.send(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{ContinuousEngine, GenerateOutput, ScoreOutput};
    use c2s_records::{Contract, FinishReason};

    /// Generations that take `max_new_tokens` steps of 20 ms; records when each begins and
    /// ends.
    struct Stepper {
        identity: ModelIdentity,
        running: Vec<(u64, String, u32)>,
        steps: u32,
        log: Arc<Mutex<Vec<String>>>,
    }

    impl Engine for Stepper {
        fn identity(&self) -> &ModelIdentity {
            &self.identity
        }
        fn score(&mut self, _: &[ScoreJob]) -> Vec<Result<ScoreOutput, EngineError>> {
            unreachable!("generation only")
        }
        fn generate(&mut self, _: &[GenerateJob]) -> Vec<Result<GenerateOutput, EngineError>> {
            unreachable!("driven continuously")
        }
        fn continuous(&mut self) -> Option<&mut dyn ContinuousEngine> {
            Some(self)
        }
    }

    impl ContinuousEngine for Stepper {
        fn begin(&mut self, ticket: u64, job: EngineJob) {
            let EngineJob::Generate(j) = job else {
                unreachable!()
            };
            self.log
                .lock()
                .unwrap()
                .push(format!("{} begins {}", self.steps, j.prompt.user));
            self.running.push((ticket, j.prompt.user, j.max_new_tokens));
        }
        fn in_flight(&self) -> usize {
            self.running.len()
        }
        fn step(&mut self) -> Vec<(u64, EngineAnswer)> {
            std::thread::sleep(Duration::from_millis(20));
            self.steps += 1;
            let mut done = Vec::new();
            for r in &mut self.running {
                r.2 -= 1;
                if r.2 == 0 {
                    self.log
                        .lock()
                        .unwrap()
                        .push(format!("{} ends {}", self.steps, r.1));
                    done.push((
                        r.0,
                        EngineAnswer::Generate(Ok(GenerateOutput {
                            text: r.1.clone(),
                            tokens: vec![],
                            finish_reason: FinishReason::Stop,
                            truncated: false,
                            prompt_tokens: 1,
                            completion_tokens: 1,
                            reused_tokens: 0,
                            latency_ms: 0.0,
                        })),
                    ));
                }
            }
            self.running.retain(|r| r.2 > 0);
            done
        }
    }

    fn request(user: &str, steps: u32) -> Request {
        Request {
            request_id: user.into(),
            item_id: user.into(),
            arm: "Native".into(),
            step: 0,
            system: None,
            user: user.into(),
            assistant_prefix: None,
            state: String::new(),
            instruction: String::new(),
            options: vec![],
            contract: Contract::GeneratedCode,
            decoding: Decoding::Greedy {
                max_new_tokens: steps,
            },
            closing_context: Vec::new(),
        }
    }

    /// A long generation does not hold back the requests behind it: with two slots, the
    /// requests that arrive while it runs take the free slot one after the other and are
    /// answered long before it ends (a batch-at-a-time service answered them after it).
    #[test]
    fn a_freed_slot_is_refilled_at_the_next_step() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let service = InferenceService::start(
            Box::new(Stepper {
                identity: crate::SimulatedEngine::new(0).identity().clone(),
                running: vec![],
                steps: 0,
                log: log.clone(),
            }),
            ServiceConfig {
                max_batch: 2,
                linger: Duration::ZERO,
                ..Default::default()
            },
        );
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let long = {
                let s = service.clone();
                tokio::spawn(async move { s.call(request("long", 12)).await })
            };
            while !log
                .lock()
                .unwrap()
                .iter()
                .any(|l| l.ends_with("begins long"))
            {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            let short = service
                .call_all(vec![request("b", 1), request("c", 1), request("d", 2)])
                .await;
            assert!(short.iter().all(Result::is_ok));
            assert!(long.await.unwrap().is_ok());
        });
        let log = log.lock().unwrap().clone();
        let step_of = |what: &str| -> u32 {
            log.iter()
                .find(|l| l.ends_with(what))
                .and_then(|l| l.split(' ').next()?.parse().ok())
                .unwrap_or_else(|| panic!("{what} not in {log:?}"))
        };
        let long_ends = step_of("ends long");
        assert_eq!(long_ends, 12, "{log:?}");
        for short in ["b", "c", "d"] {
            assert!(step_of(&format!("ends {short}")) < long_ends, "{log:?}");
        }
        // Never more than two at once: each short one began after the one before it ended.
        let mut begun: Vec<u32> = ["b", "c", "d"]
            .iter()
            .map(|s| step_of(&format!("begins {s}")))
            .collect();
        begun.sort();
        assert!(begun.windows(2).all(|w| w[0] < w[1]), "{log:?}");
    }

    fn reply(error: Option<&str>) -> Reply {
        match error {
            None => Ok(Response {
                request_id: "r".into(),
                answer: c2s_records::Answer::Scored {
                    probabilities: vec![1.0],
                    raw: None,
                },
                prompt_tokens: 1,
                completion_tokens: 0,
                latency_ms: 0.0,
                cached: false,
            }),
            Some(e) => Err(EngineError::Compute(e.into())),
        }
    }

    /// The tally counts answers and failures, the most common error, and the run of identical
    /// failures from the start — which ends for good at the first answer.
    #[test]
    fn the_tally_counts_failures_and_the_identical_ones_from_the_start() {
        let tally = AnswerTally::default();
        tally.record(&reply(Some("a")));
        tally.record(&reply(Some("b")));
        tally.record(&reply(Some("b")));
        assert_eq!(tally.leading(), Some(("compute: b".to_string(), 2)));
        tally.record(&reply(None));
        assert_eq!(tally.leading(), None);
        tally.record(&reply(Some("b")));
        assert_eq!(
            tally.leading(),
            None,
            "only failures before any answer count"
        );
        let c = tally.counts();
        assert_eq!((c.answered, c.failed), (1, 4));
        assert_eq!(c.most_common(), Some(("compute: b", 3)));
        assert!((c.failed_share() - 0.8).abs() < 1e-12);
        assert_eq!(TallyCounts::default().failed_share(), 0.0);
    }

    /// Errors with ever new messages do not grow the tally without bound.
    #[test]
    fn the_tally_keeps_a_bounded_number_of_messages() {
        let tally = AnswerTally::default();
        for i in 0..2 * TALLY_MESSAGES {
            tally.record(&reply(Some(&format!("error {i}"))));
        }
        let c = tally.counts();
        assert_eq!(c.errors.len(), TALLY_MESSAGES + 1);
        assert_eq!(c.errors["other errors"], TALLY_MESSAGES as u64);
        assert_eq!(c.failed, 2 * TALLY_MESSAGES as u64);
    }
}
