//! Greedy generation as a sequence of steps that jobs join and leave at any time: the prefix
//! engine's [`ContinuousEngine`].
//!
//! A step prefills the generations begun since the last one (their first token comes from the
//! prompt's last logits), then decodes one token for every live generation in one ragged
//! forward pass; a generation that reaches a stop token or its budget is answered at once and
//! leaves the batch, so the batching service can put the next request in its place at the next
//! step. Scoring jobs are answered at the step after they begin (they are one prefill).
//! [`Engine::generate`](crate::Engine::generate) runs the same steps on its own jobs until
//! all are answered, so both ways of running produce the same tokens (the forward pass is
//! batch-invariant: a row's result does not depend on the other rows).

use std::time::Instant;

use c2s_records::FinishReason;

use super::transformer::{LayerKv, SeqInput};
use super::{argmax, PrefixEngine};
use crate::engine::{
    ContinuousEngine, EngineAnswer, EngineJob, GenerateJob, GenerateOutput, ScoreJob,
};
use crate::error::EngineError;

/// A generation being decoded.
struct Live {
    ticket: u64,
    budget: u32,
    kv: Vec<LayerKv>,
    len: usize,
    generated: Vec<u32>,
    finish: Option<FinishReason>,
    reused: usize,
    prompt_tokens: usize,
    started: Instant,
}

/// Jobs in flight.
#[derive(Default)]
pub(super) struct Running {
    /// Scoring jobs begun since the last step.
    scores: Vec<(u64, ScoreJob)>,
    /// Generations begun since the last step (not yet prefilled), with their start.
    begun: Vec<(u64, GenerateJob, Instant)>,
    live: Vec<Live>,
}

impl Running {
    /// Generations to run from the start, numbered by position.
    pub(super) fn generations(jobs: &[GenerateJob]) -> Running {
        let now = Instant::now();
        Running {
            begun: jobs
                .iter()
                .enumerate()
                .map(|(i, j)| (i as u64, j.clone(), now))
                .collect(),
            ..Default::default()
        }
    }

    pub(super) fn len(&self) -> usize {
        self.scores.len() + self.begun.len() + self.live.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Append `tok` to a generation, or end it at a stop token or at its budget.
fn push_token(l: &mut Live, tok: u32, stops: &[u32]) {
    if stops.contains(&tok) {
        l.finish = Some(FinishReason::Stop);
        return;
    }
    l.generated.push(tok);
    if l.generated.len() as u32 >= l.budget {
        l.finish = Some(FinishReason::Length);
    }
}

impl PrefixEngine {
    /// One step of the generations in `run`: prefill the begun ones, decode one token for
    /// every unfinished one, and answer (and remove) the finished ones.
    pub(super) fn generation_step(
        &mut self,
        run: &mut Running,
    ) -> Vec<(u64, Result<GenerateOutput, EngineError>)> {
        let mut answers = Vec::new();
        let begun = std::mem::take(&mut run.begun);
        if !begun.is_empty() {
            let (prepared, errors) = self.prepare(begun.iter().map(|(_, j, _)| &j.prompt));
            let prefilled = self.prefill(&prepared);
            for (((ticket, job, started), (p, error)), tokens) in begun
                .into_iter()
                .zip(prefilled.into_iter().zip(errors))
                .zip(&prepared)
            {
                match (error, p) {
                    (Some(e), _) | (None, Err(e)) => answers.push((ticket, Err(e))),
                    (None, Ok(p)) => {
                        let mut l = Live {
                            ticket,
                            budget: job.max_new_tokens,
                            kv: p.kv,
                            len: tokens.tokens.len(),
                            generated: vec![],
                            finish: None,
                            reused: p.reused,
                            prompt_tokens: tokens.tokens.len(),
                            started,
                        };
                        push_token(&mut l, argmax(&p.last_logits), &self.tokenizer.stop_ids);
                        run.live.push(l);
                    }
                }
            }
        }
        // A generation whose next position is past the model's context ends alone with that
        // error (the forward pass would refuse the whole batch for it).
        let context = self.model.config.context;
        let mut i = 0;
        while i < run.live.len() {
            if run.live[i].finish.is_none() && run.live[i].len + 1 > context {
                let l = run.live.remove(i);
                answers.push((
                    l.ticket,
                    Err(EngineError::Model(format!(
                        "sequence of {} tokens exceeds the model context of {context}",
                        l.len + 1
                    ))),
                ));
            } else {
                i += 1;
            }
        }
        // One token for every unfinished generation, in one forward pass.
        let active: Vec<usize> = (0..run.live.len())
            .filter(|&i| run.live[i].finish.is_none())
            .collect();
        if !active.is_empty() {
            let last: Vec<[u32; 1]> = active
                .iter()
                .map(|&i| [*run.live[i].generated.last().unwrap_or(&0)])
                .collect();
            let rows = [0usize];
            let seqs: Vec<SeqInput<'_>> = active
                .iter()
                .zip(&last)
                .map(|(&i, tok)| SeqInput {
                    prefix: None,
                    prefix_len: run.live[i].len,
                    tokens: tok,
                    logit_rows: &rows,
                })
                .collect();
            // Each generation lends its cache to the step, which appends the token's row in
            // place and hands it back (no copy of the cache per token).
            let caches: Vec<Vec<LayerKv>> = active
                .iter()
                .map(|&i| std::mem::take(&mut run.live[i].kv))
                .collect();
            let t0 = Instant::now();
            let out = self.model.forward_extending(&seqs, caches);
            self.stats.forwards += 1;
            self.stats.forward_seconds += t0.elapsed().as_secs_f64();
            drop(seqs);
            match out {
                Ok(outs) => {
                    for (&i, o) in active.iter().zip(outs) {
                        let l = &mut run.live[i];
                        l.kv = o.kv;
                        l.len += 1;
                        let tok = argmax(o.logits.first().map(Vec::as_slice).unwrap_or(&[]));
                        push_token(l, tok, &self.tokenizer.stop_ids);
                    }
                }
                Err(e) => {
                    // The step failed for every generation in it.
                    for &i in active.iter().rev() {
                        let l = run.live.remove(i);
                        answers.push((l.ticket, Err(e.clone())));
                    }
                }
            }
        }
        let (finished, live): (Vec<Live>, Vec<Live>) =
            run.live.drain(..).partition(|l| l.finish.is_some());
        run.live = live;
        for l in finished {
            answers.push((l.ticket, self.generation_output(l)));
        }
        answers
    }

    fn generation_output(&mut self, l: Live) -> Result<GenerateOutput, EngineError> {
        self.stats.generated_tokens += l.generated.len() as u64;
        let finish = l.finish.unwrap_or(FinishReason::Length);
        Ok(GenerateOutput {
            text: self.tokenizer.decode(&l.generated)?,
            completion_tokens: l.generated.len() as u32 + u32::from(finish == FinishReason::Stop),
            tokens: l.generated,
            finish_reason: finish,
            truncated: finish == FinishReason::Length,
            prompt_tokens: l.prompt_tokens as u32,
            reused_tokens: l.reused as u32,
            latency_ms: l.started.elapsed().as_secs_f64() * 1e3,
        })
    }
}

impl ContinuousEngine for PrefixEngine {
    fn begin(&mut self, ticket: u64, job: EngineJob) {
        match job {
            EngineJob::Score(j) => self.running.scores.push((ticket, j)),
            EngineJob::Generate(j) => self.running.begun.push((ticket, j, Instant::now())),
        }
    }

    fn in_flight(&self) -> usize {
        self.running.len()
    }

    fn step(&mut self) -> Vec<(u64, EngineAnswer)> {
        let mut run = std::mem::take(&mut self.running);
        let mut answers = Vec::new();
        if !run.scores.is_empty() {
            let (tickets, jobs): (Vec<u64>, Vec<ScoreJob>) = run.scores.drain(..).unzip();
            let outputs = crate::Engine::score(self, &jobs);
            answers.extend(
                tickets
                    .into_iter()
                    .zip(outputs)
                    .map(|(t, o)| (t, EngineAnswer::Score(o))),
            );
        }
        answers.extend(
            self.generation_step(&mut run)
                .into_iter()
                .map(|(t, o)| (t, EngineAnswer::Generate(o))),
        );
        self.running = run;
        answers
    }
}
