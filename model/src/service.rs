//! [`InferenceService`]: the batcher between the dataflow and an engine.
//!
//! The engine runs on its own thread. Callers submit requests asynchronously; the thread takes
//! everything queued (up to a batch limit) and runs it as one engine batch, so requests from
//! many items and steps share forward passes. Identical requests (same prompt, options and
//! decoding; the model is fixed per service) are computed once: later copies wait for the
//! first or read its stored answer. A semaphore bounds the requests in flight, so a fast
//! producer waits instead of queueing without limit.

use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, Semaphore};

use c2s_records::{Answer, Decoding, Request, Response};

use crate::engine::{Engine, EngineStats, GenerateJob, ModelIdentity, PromptSpec, ScoreJob};
use crate::error::EngineError;

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
}

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            max_batch: 32,
            max_in_flight: 256,
            linger: Duration::from_millis(2),
            dedup: true,
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
    /// Requests answered by de-duplication instead of the engine.
    deduplicated: u64,
}

/// Counters of the service.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServiceStats {
    pub engine: EngineStats,
    pub deduplicated: u64,
}

impl ServiceStats {
    /// Add another service's counters (the workers of one process).
    pub fn add(&mut self, other: &ServiceStats) {
        self.engine.add(&other.engine);
        self.deduplicated += other.deduplicated;
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
        let identity = engine.identity().clone();
        let (tx, rx) = mpsc::channel::<Job>();
        let shared = Arc::new(Mutex::new(Shared::default()));
        let thread_shared = shared.clone();
        thread::Builder::new()
            .name("c2s-engine".into())
            .spawn(move || engine_loop(engine, rx, thread_shared, config))
            .expect("spawning the engine thread");
        InferenceService {
            tx,
            shared,
            permits: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
            identity,
            dedup: config.dedup,
        }
    }

    pub fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    pub fn stats(&self) -> ServiceStats {
        let s = lock(&self.shared);
        ServiceStats {
            engine: s.stats,
            deduplicated: s.deduplicated,
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
                s.deduplicated += 1;
                Route::Done(Box::new(r))
            } else {
                let (tx, rx) = oneshot::channel();
                if let Some(waiters) = s.waiting.get_mut(&key) {
                    waiters.push((request.request_id.clone(), tx));
                    s.deduplicated += 1;
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
    while let Ok(first) = rx.recv() {
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
        let (score, generate): (Vec<Job>, Vec<Job>) = batch
            .into_iter()
            .partition(|j| j.request.decoding == Decoding::Score);
        let mut replies: Vec<(String, Reply)> = Vec::new();
        if !score.is_empty() {
            let jobs: Vec<ScoreJob> = score
                .iter()
                .map(|j| ScoreJob {
                    prompt: PromptSpec::from_request(&j.request),
                    options: j.request.options.iter().map(|o| o.code.clone()).collect(),
                })
                .collect();
            for (j, out) in score.iter().zip(engine.score(&jobs)) {
                replies.push((
                    j.key.clone(),
                    out.map(|o| Response {
                        request_id: j.request.request_id.clone(),
                        answer: Answer::Scored {
                            probabilities: o.probabilities,
                        },
                        prompt_tokens: o.prompt_tokens,
                        completion_tokens: 0,
                        latency_ms: o.latency_ms,
                        cached: false,
                    }),
                ));
            }
        }
        if !generate.is_empty() {
            let jobs: Vec<GenerateJob> = generate
                .iter()
                .map(|j| GenerateJob {
                    prompt: PromptSpec::from_request(&j.request),
                    max_new_tokens: match j.request.decoding {
                        Decoding::Greedy { max_new_tokens } => max_new_tokens,
                        Decoding::Score => 1,
                    },
                })
                .collect();
            for (j, out) in generate.iter().zip(engine.generate(&jobs)) {
                replies.push((
                    j.key.clone(),
                    out.map(|o| Response {
                        request_id: j.request.request_id.clone(),
                        answer: Answer::Generated {
                            text: o.text,
                            finish_reason: o.finish_reason,
                            truncated: o.truncated,
                        },
                        prompt_tokens: o.prompt_tokens,
                        completion_tokens: o.completion_tokens,
                        latency_ms: o.latency_ms,
                        cached: false,
                    }),
                ));
            }
        }
        let mut s = lock(&shared);
        s.stats = engine.stats();
        for (key, reply) in replies {
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
}
