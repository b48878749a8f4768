//! mistral.rs driven continuously: the [`ContinuousEngine`] of [`MistralRsEngine`].
//!
//! mistral.rs batches continuously itself: its engine thread schedules every sequence it holds
//! at each of its steps, and a finished sequence leaves at once. So a job is handed to
//! mistral.rs as soon as it begins, as one mistral.rs request per context (a scoring job needs
//! its prompt, and its prompt extended by each proper prefix of a multi-token option; a
//! generation needs its prompt), and [`ContinuousEngine::step`] waits for whichever requests
//! mistral.rs answers next. A job is answered when its last request is; nothing waits for the
//! rest of a batch. Scoring contexts that are in flight are shared: a job that needs a context
//! another job already asked for waits for the same request.
//!
//! On the CPU, mistral.rs 0.8.1 decodes several sequences in one step wrongly (module notes of
//! [`super`]): a generation, and a prompt of one token (prefilled through the faulty one-row
//! kernel), is handed over only when mistral.rs holds nothing else, and nothing joins it until
//! it is answered. Requests wait in arrival order, so a generation is not overtaken by the
//! scoring requests behind it. On CUDA every request is handed over at once.
//!
//! [`Engine::score`](crate::Engine::score) and [`Engine::generate`](crate::Engine::generate)
//! run their jobs through the same path until all are answered.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use c2s_records::FinishReason;

use super::{collect, submit, Finished, MistralRsEngine, Pending, Policy, RECORD_MAX_LEN};
use crate::engine::{
    log_softmax, normalize_logprobs, ContinuousEngine, EngineAnswer, EngineJob, GenerateJob,
    GenerateOutput, ScoreJob, ScoreOutput,
};
use crate::error::EngineError;

/// How long a step waits for mistral.rs's next answer before it returns empty-handed, so that
/// requests that arrived meanwhile are handed over without waiting for an answer.
const STEP_WAIT: Duration = Duration::from_millis(5);

/// The natural-log next-token distribution at one context, shared by the jobs that read it.
type Distribution = Result<Arc<Vec<f64>>, EngineError>;

/// What a job waits for.
enum Waiting {
    /// A scoring job: per option, each token with the index (into `dists`) of the context it is
    /// read at.
    Score {
        prompt_len: usize,
        reads: Vec<Vec<(u32, usize)>>,
        dists: Vec<Option<Distribution>>,
        missing: usize,
    },
    Generate {
        prompt_len: usize,
    },
    /// The whole next-token distribution after some tokens (reference checks).
    Distribution,
}

struct Job {
    started: Instant,
    waiting: Waiting,
}

/// A finished job.
enum Done {
    Answer(EngineAnswer),
    Distribution(Distribution),
}

/// What a mistral.rs request is for.
enum Purpose {
    /// A scoring context (keyed by its tokens while in flight, so that jobs share it).
    Context(Arc<Vec<u32>>),
    Generation,
}

/// Jobs and mistral.rs requests in flight.
pub(super) struct Flight {
    answers_tx: UnboundedSender<(u64, Result<Finished, EngineError>)>,
    answers_rx: UnboundedReceiver<(u64, Result<Finished, EngineError>)>,
    next_request: u64,
    /// Tickets of jobs run by [`Engine::score`](crate::Engine::score) and friends (from the
    /// top of the ticket space, apart from the batching service's).
    next_private_ticket: u64,
    /// Requests not yet handed to mistral.rs, in arrival order.
    queued: VecDeque<(u64, Pending)>,
    /// Requests mistral.rs holds, and whether each must be alone there.
    submitted: HashMap<u64, bool>,
    purposes: HashMap<u64, Purpose>,
    /// In-flight scoring contexts by their tokens.
    contexts: HashMap<Arc<Vec<u32>>, u64>,
    /// The jobs waiting for each request: (ticket, index of the job's context).
    waiters: HashMap<u64, Vec<(u64, usize)>>,
    jobs: HashMap<u64, Job>,
    /// Jobs finished but not yet returned by a step.
    ready: Vec<(u64, Done)>,
}

impl Default for Flight {
    fn default() -> Self {
        let (answers_tx, answers_rx) = unbounded_channel();
        Flight {
            answers_tx,
            answers_rx,
            next_request: 0,
            next_private_ticket: u64::MAX,
            queued: VecDeque::new(),
            submitted: HashMap::new(),
            purposes: HashMap::new(),
            contexts: HashMap::new(),
            waiters: HashMap::new(),
            jobs: HashMap::new(),
            ready: Vec::new(),
        }
    }
}

impl MistralRsEngine {
    /// Queue one mistral.rs request for `ticket`'s context `index`.
    fn request(&mut self, ticket: u64, index: usize, pending: Pending, purpose: Purpose) {
        let f = &mut self.flight;
        let key = f.next_request;
        f.next_request += 1;
        if let Purpose::Context(tokens) = &purpose {
            f.contexts.insert(tokens.clone(), key);
        }
        f.purposes.insert(key, purpose);
        f.waiters.insert(key, vec![(ticket, index)]);
        f.queued.push_back((key, pending));
    }

    /// Wait for the next-token distribution after `tokens`, sharing a request in flight.
    fn read_context(&mut self, ticket: u64, index: usize, tokens: Vec<u32>) {
        let tokens = Arc::new(tokens);
        if let Some(key) = self.flight.contexts.get(&tokens) {
            if let Some(w) = self.flight.waiters.get_mut(key) {
                w.push((ticket, index));
                return;
            }
        }
        let pending = Pending {
            prompt: tokens.clone(),
            policy: Policy::Record,
            max_len: RECORD_MAX_LEN,
            stop: None,
        };
        self.request(ticket, index, pending, Purpose::Context(tokens));
    }

    fn begin_score(&mut self, ticket: u64, job: ScoreJob) -> Result<(), EngineError> {
        let tokens = self.prompt_tokens(&job.prompt)?;
        let options = self.tokenizer.option_tokens(&job.options)?;
        if options.is_empty() {
            return Err(EngineError::Request("no options to score".into()));
        }
        self.stats.prompt_tokens += tokens.len() as u64;
        // Every distinct context whose next-token distribution is needed: the prompt, and the
        // prompt extended by each proper prefix of a multi-token option.
        let mut contexts: Vec<Vec<u32>> = Vec::new();
        let reads = options
            .iter()
            .map(|o| {
                (0..o.len())
                    .map(|k| {
                        let mut c = tokens.clone();
                        c.extend_from_slice(&o[..k]);
                        let at = match contexts.iter().position(|x| *x == c) {
                            Some(i) => i,
                            None => {
                                contexts.push(c);
                                contexts.len() - 1
                            }
                        };
                        (o[k], at)
                    })
                    .collect()
            })
            .collect();
        self.flight.jobs.insert(
            ticket,
            Job {
                started: Instant::now(),
                waiting: Waiting::Score {
                    prompt_len: tokens.len(),
                    reads,
                    dists: vec![None; contexts.len()],
                    missing: contexts.len(),
                },
            },
        );
        for (i, c) in contexts.into_iter().enumerate() {
            self.read_context(ticket, i, c);
        }
        Ok(())
    }

    fn begin_generate(&mut self, ticket: u64, job: GenerateJob) -> Result<(), EngineError> {
        if job.max_new_tokens == 0 {
            return Err(EngineError::Request(
                "max_new_tokens must be at least 1".into(),
            ));
        }
        let tokens = self.prompt_tokens(&job.prompt)?;
        self.stats.prompt_tokens += tokens.len() as u64;
        let budget = job.max_new_tokens as usize;
        let stops = Arc::new(self.tokenizer.stop_ids.clone());
        let pending = Pending {
            prompt: Arc::new(tokens),
            policy: Policy::Greedy {
                budget,
                stops: stops.clone(),
            },
            // The processor ends the request with a stop token at the latest one step after
            // the budget; the length limit is only a backstop.
            max_len: budget + 1,
            stop: Some(stops.to_vec()),
        };
        self.flight.jobs.insert(
            ticket,
            Job {
                started: Instant::now(),
                waiting: Waiting::Generate {
                    prompt_len: pending.prompt.len(),
                },
            },
        );
        self.request(ticket, 0, pending, Purpose::Generation);
        Ok(())
    }

    /// Whether a request must be alone in mistral.rs (see the module notes).
    fn must_be_alone(&self, pending: &Pending) -> bool {
        self.decode_alone
            && (matches!(pending.policy, Policy::Greedy { .. }) || pending.prompt.len() < 2)
    }

    /// Hand queued requests to mistral.rs, in order, as far as the CPU rule allows.
    fn submit_queued(&mut self) {
        let mut handed = false;
        while let Some((_, next)) = self.flight.queued.front() {
            let alone = self.must_be_alone(next);
            let busy = !self.flight.submitted.is_empty();
            if busy && (alone || self.flight.submitted.values().any(|&a| a)) {
                break;
            }
            let Some((key, pending)) = self.flight.queued.pop_front() else {
                break;
            };
            self.flight.submitted.insert(key, alone);
            self.stats.computed_tokens += pending.prompt.len() as u64;
            let runner = self.runner.clone();
            let answers = self.flight.answers_tx.clone();
            self.runtime.spawn(async move {
                let answer = match runner.get_sender(None) {
                    Ok(sender) => collect(submit(&runner, &sender, pending).await).await,
                    Err(e) => Err(EngineError::Compute(format!(
                        "mistral.rs engine unavailable: {e}"
                    ))),
                };
                // The receiver lives as long as the engine.
                let _ = answers.send((key, answer));
            });
            handed = true;
        }
        if handed {
            self.stats.forwards += 1;
        }
    }

    /// Hand over what can go, then wait up to `wait` for mistral.rs's next answer and take
    /// every answer that has come.
    fn pump(&mut self, wait: Duration) {
        self.submit_queued();
        let started = Instant::now();
        let rx = &mut self.flight.answers_rx;
        let mut answers = Vec::new();
        // The requests' tasks run on this runtime: they make progress only inside block_on.
        self.runtime.block_on(async {
            if let Ok(Some(a)) = tokio::time::timeout(wait, rx.recv()).await {
                answers.push(a);
            }
            while let Ok(a) = rx.try_recv() {
                answers.push(a);
            }
        });
        self.stats.forward_seconds += started.elapsed().as_secs_f64();
        for (key, answer) in answers {
            self.answered(key, answer);
        }
    }

    /// mistral.rs answered request `key`: hand the answer to the jobs waiting for it.
    fn answered(&mut self, key: u64, answer: Result<Finished, EngineError>) {
        let f = &mut self.flight;
        f.submitted.remove(&key);
        let purpose = f.purposes.remove(&key);
        if let Some(Purpose::Context(tokens)) = &purpose {
            f.contexts.remove(tokens);
        }
        let waiters = f.waiters.remove(&key).unwrap_or_default();
        match purpose {
            Some(Purpose::Context(_)) => {
                let dist: Distribution = answer.and_then(|f| {
                    f.trace
                        .first_logits
                        .map(|l| Arc::new(log_softmax(&l)))
                        .ok_or_else(|| {
                            EngineError::Compute("mistral.rs ran no decoding step".into())
                        })
                });
                for (ticket, index) in waiters {
                    self.context_read(ticket, index, dist.clone());
                }
            }
            Some(Purpose::Generation) => {
                // A generation has one job waiting for it.
                let Some((ticket, _)) = waiters.into_iter().next() else {
                    return;
                };
                let Some(job) = self.flight.jobs.remove(&ticket) else {
                    return;
                };
                let out = match job.waiting {
                    Waiting::Generate { prompt_len } => {
                        answer.and_then(|f| self.generate_output(f, prompt_len, job.started))
                    }
                    _ => Err(EngineError::Compute("not a generation job".into())),
                };
                self.flight
                    .ready
                    .push((ticket, Done::Answer(EngineAnswer::Generate(out))));
            }
            None => {}
        }
    }

    /// A scoring job's context `index` is read; answer the job once all are.
    fn context_read(&mut self, ticket: u64, index: usize, dist: Distribution) {
        let Some(job) = self.flight.jobs.get_mut(&ticket) else {
            return;
        };
        match &mut job.waiting {
            Waiting::Distribution => {
                self.flight.jobs.remove(&ticket);
                self.flight.ready.push((ticket, Done::Distribution(dist)));
            }
            Waiting::Score { dists, missing, .. } => {
                if let Some(slot) = dists.get_mut(index) {
                    if slot.is_none() {
                        *missing -= 1;
                    }
                    *slot = Some(dist);
                }
                if *missing == 0 {
                    if let Some(job) = self.flight.jobs.remove(&ticket) {
                        let out = score_output(job);
                        self.flight
                            .ready
                            .push((ticket, Done::Answer(EngineAnswer::Score(out))));
                    }
                }
            }
            Waiting::Generate { .. } => {}
        }
    }

    fn generate_output(
        &mut self,
        f: Finished,
        prompt_len: usize,
        started: Instant,
    ) -> Result<GenerateOutput, EngineError> {
        let finish = match (f.finish_reason.as_str(), f.trace.finish) {
            ("stop", Some(finish)) => finish,
            (reason, _) => {
                return Err(EngineError::Compute(format!(
                    "mistral.rs finished with `{reason}` after {} steps, before the forced \
                     stop token",
                    f.trace.steps
                )))
            }
        };
        let tokens = f.trace.generated;
        let completion_tokens = tokens.len() as u32 + u32::from(finish == FinishReason::Stop);
        self.stats.generated_tokens += u64::from(completion_tokens);
        Ok(GenerateOutput {
            text: self.tokenizer.decode(&tokens)?,
            tokens,
            finish_reason: finish,
            truncated: finish == FinishReason::Length,
            prompt_tokens: prompt_len as u32,
            completion_tokens,
            reused_tokens: 0,
            latency_ms: started.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// A job that ends at its beginning (a request error).
    fn refused(&mut self, ticket: u64, job: &EngineJob, e: EngineError) {
        let answer = match job {
            EngineJob::Score(_) => EngineAnswer::Score(Err(e)),
            EngineJob::Generate(_) => EngineAnswer::Generate(Err(e)),
        };
        self.flight.ready.push((ticket, Done::Answer(answer)));
    }

    /// Run `jobs` (with tickets of their own) until each is answered; answers in job order.
    /// Jobs of the batching service in flight meanwhile keep their answers for its next step.
    fn run_to_end(&mut self, jobs: Vec<Private>) -> Vec<Done> {
        let mut tickets = Vec::with_capacity(jobs.len());
        for job in jobs {
            let ticket = self.flight.next_private_ticket;
            self.flight.next_private_ticket -= 1;
            tickets.push(ticket);
            match job {
                Private::Job(job) => ContinuousEngine::begin(self, ticket, job),
                Private::Distribution(tokens) => {
                    self.flight.jobs.insert(
                        ticket,
                        Job {
                            started: Instant::now(),
                            waiting: Waiting::Distribution,
                        },
                    );
                    self.read_context(ticket, 0, tokens);
                }
            }
        }
        let mut done: HashMap<u64, Done> = HashMap::new();
        while done.len() < tickets.len() {
            let wait = if self.flight.ready.is_empty() {
                STEP_WAIT
            } else {
                Duration::ZERO
            };
            self.pump(wait);
            let mut foreign = Vec::new();
            for (ticket, d) in std::mem::take(&mut self.flight.ready) {
                if tickets.contains(&ticket) {
                    done.insert(ticket, d);
                } else {
                    foreign.push((ticket, d));
                }
            }
            self.flight.ready = foreign;
            // A job neither running nor answered is lost (it cannot be answered any more).
            let lost = tickets
                .iter()
                .any(|t| !done.contains_key(t) && !self.flight.jobs.contains_key(t));
            if lost {
                break;
            }
        }
        tickets
            .iter()
            .map(|t| {
                done.remove(t)
                    .unwrap_or(Done::Distribution(Err(EngineError::Compute(
                        "request lost".into(),
                    ))))
            })
            .collect()
    }

    /// Score jobs until all are answered (the [`Engine`](crate::Engine) batch interface).
    pub(super) fn score_all(&mut self, jobs: &[ScoreJob]) -> Vec<Result<ScoreOutput, EngineError>> {
        let work = jobs
            .iter()
            .map(|j| Private::Job(EngineJob::Score(j.clone())))
            .collect();
        self.run_to_end(work)
            .into_iter()
            .map(|d| match d {
                Done::Answer(EngineAnswer::Score(out)) => out,
                _ => Err(EngineError::Compute("request lost".into())),
            })
            .collect()
    }

    /// Generate for jobs until all are answered (the [`Engine`](crate::Engine) batch interface).
    pub(super) fn generate_all(
        &mut self,
        jobs: &[GenerateJob],
    ) -> Vec<Result<GenerateOutput, EngineError>> {
        let work = jobs
            .iter()
            .map(|j| Private::Job(EngineJob::Generate(j.clone())))
            .collect();
        self.run_to_end(work)
            .into_iter()
            .map(|d| match d {
                Done::Answer(EngineAnswer::Generate(out)) => out,
                _ => Err(EngineError::Compute("request lost".into())),
            })
            .collect()
    }

    /// The natural-log next-token distribution after the token ids `tokens`.
    pub(super) fn distribution_after(&mut self, tokens: Vec<u32>) -> Distribution {
        match self.run_to_end(vec![Private::Distribution(tokens)]).pop() {
            Some(Done::Distribution(d)) => d,
            _ => Err(EngineError::Compute("request lost".into())),
        }
    }
}

/// Work of the batch interface.
enum Private {
    Job(EngineJob),
    Distribution(Vec<u32>),
}

/// A scoring job's answer from the distributions of its contexts.
fn score_output(job: Job) -> Result<ScoreOutput, EngineError> {
    let Waiting::Score {
        prompt_len,
        reads,
        dists,
        ..
    } = job.waiting
    else {
        return Err(EngineError::Compute("not a scoring job".into()));
    };
    let mut logprobs = Vec::with_capacity(reads.len());
    let mut token_logprobs = Vec::with_capacity(reads.len());
    for option in reads {
        let mut lp = 0.0;
        let mut tokens = Vec::with_capacity(option.len());
        for (token, at) in option {
            let dist = match dists.get(at) {
                Some(Some(d)) => d.as_ref().map_err(Clone::clone)?,
                _ => return Err(EngineError::Compute("a context was not read".into())),
            };
            let token_lp = *dist.get(token as usize).ok_or_else(|| {
                EngineError::Compute(format!(
                    "token {token} is outside the vocabulary of {} logits",
                    dist.len()
                ))
            })?;
            lp += token_lp;
            tokens.push(token_lp);
        }
        logprobs.push(lp);
        token_logprobs.push(tokens);
    }
    Ok(ScoreOutput {
        probabilities: normalize_logprobs(&logprobs),
        logprobs,
        token_logprobs,
        prompt_tokens: prompt_len as u32,
        reused_tokens: 0,
        latency_ms: job.started.elapsed().as_secs_f64() * 1e3,
    })
}

impl ContinuousEngine for MistralRsEngine {
    fn begin(&mut self, ticket: u64, job: EngineJob) {
        let begun = match &job {
            EngineJob::Score(j) => self.begin_score(ticket, j.clone()),
            EngineJob::Generate(j) => self.begin_generate(ticket, j.clone()),
        };
        if let Err(e) = begun {
            self.refused(ticket, &job, e);
        }
    }

    fn in_flight(&self) -> usize {
        self.flight.jobs.len() + self.flight.ready.len()
    }

    fn step(&mut self) -> Vec<(u64, EngineAnswer)> {
        let wait = if self.flight.ready.is_empty() {
            STEP_WAIT
        } else {
            Duration::ZERO
        };
        self.pump(wait);
        std::mem::take(&mut self.flight.ready)
            .into_iter()
            .filter_map(|(t, d)| match d {
                Done::Answer(a) => Some((t, a)),
                // Only the batch interface asks for distributions, and it takes its own.
                Done::Distribution(_) => None,
            })
            .collect()
    }
}
