#!/usr/bin/env python3
"""Replay scored requests through llama.cpp (llama-cpp-python, the venv of
scripts/fetch-llamacpp.sh): the loop `choice2seq bench inference --against llamacpp` measures.

    llamacpp-replay.py MODEL.gguf REQUESTS.jsonl OUT.json THREADS

Each input line is one request as the pipeline scored it: {"id": ..., "prompt": [token ids],
"options": [[token ids], ...]} (the prompt rendered and tokenized by the pipeline's own
tokenizer, so both sides see the same tokens). The loop is the plain one a user would write:
one request at a time, keeping the keys/values of the prefix the prompt shares with the previous
request and computing the rest; an option's probability is the product of its tokens'
probabilities after the prompt, and the request's distribution is their softmax over the
options (every other continuation masked), as the pipeline's scored contract.

Writes {"requests", "computed_tokens", "seconds" (the loop), "load_seconds", "threads",
"llama_cpp", "probabilities": {id: [...]}}.
"""
import json
import math
import sys
import time

import numpy as np
import llama_cpp
from llama_cpp import Llama


def main() -> None:
    model, source, out, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with open(source, encoding="utf-8") as f:
        requests = [json.loads(line) for line in f if line.strip()]
    longest = max(len(r["prompt"]) + max(len(o) for o in r["options"]) for r in requests)
    started = time.perf_counter()
    llm = Llama(
        model_path=model,
        n_ctx=longest + 8,
        n_batch=512,
        n_ubatch=512,
        n_threads=threads,
        n_threads_batch=threads,
        logits_all=False,
        verbose=False,
    )
    load_seconds = time.perf_counter() - started
    n_vocab = llm.n_vocab()

    def last_logprobs() -> np.ndarray:
        # The logits of the last token evaluated (llama.cpp keeps the last row of a batch).
        logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,)).astype(np.float64)
        top = logits.max()
        return logits - top - math.log(np.exp(logits - top).sum())

    computed = 0
    probabilities = {}
    started = time.perf_counter()
    for r in requests:
        prompt = r["prompt"]
        cached = llm.input_ids[: llm.n_tokens].tolist()
        # Keep the shared prefix, but always compute the prompt's last token (its logits).
        keep = 0
        limit = min(len(cached), len(prompt) - 1)
        while keep < limit and cached[keep] == prompt[keep]:
            keep += 1
        llm.n_tokens = keep
        llm.eval(prompt[keep:])
        computed += len(prompt) - keep
        after_prompt = last_logprobs()
        logprobs = []
        for option in r["options"]:
            lp = float(after_prompt[option[0]])
            for i, token in enumerate(option[:-1]):
                llm.eval([token])
                computed += 1
                lp += float(last_logprobs()[option[i + 1]])
            llm.n_tokens = len(prompt)
            logprobs.append(lp)
        top = max(logprobs)
        z = sum(math.exp(x - top) for x in logprobs)
        probabilities[r["id"]] = [math.exp(x - top) / z for x in logprobs]
    seconds = time.perf_counter() - started
    with open(out, "w", encoding="utf-8") as f:
        json.dump(
            {
                "requests": len(requests),
                "computed_tokens": computed,
                "seconds": seconds,
                "load_seconds": load_seconds,
                "threads": threads,
                "llama_cpp": llama_cpp.__version__,
                "probabilities": probabilities,
            },
            f,
        )


if __name__ == "__main__":
    main()
