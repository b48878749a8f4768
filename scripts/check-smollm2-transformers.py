#!/usr/bin/env python3
"""Option distributions of the shipped SmolLM2 GGUF computed by transformers, as a reference for
the engines.

Loads models/SmolLM2-135M-Instruct.Q4_1.gguf (scripts/fetch-model.sh) through transformers' GGUF
loader, which dequantizes every tensor to float32:

    AutoModelForCausalLM.from_pretrained(dir, gguf_file=name, dtype=torch.float32)

and, for each line of the input, a JSON object {"id", "tokens": [prompt ids], "options":
[[option token ids], ...]}, writes the JSON line {"id", "probs": [...]}: the softmax over the
options of each option's summed token log-probabilities after the prompt. An option's are read
from one forward over prompt + option (causal, so the logits at the prompt's last position and
at each of the option's but its last are those of the prefixes), unpadded, no cache, eager
attention, log_softmax in float32, the softmax over options in float64.

    python3 -m venv /tmp/hfx && /tmp/hfx/bin/pip install torch transformers gguf accelerate
    /tmp/hfx/bin/python scripts/check-smollm2-transformers.py --input REQS.jsonl [--out FILE]
        [--model models/SmolLM2-135M-Instruct.Q4_1.gguf] [--threads 1] [--device cpu]

Without --out the lines go to standard output. An option that is empty gets log-probability 0.

With --scores FILE (the output of `choice2seq bench engine --scores-out FILE`, one row per
request with prompt_ids, option_ids and the engine's probabilities) it computes the same
transformers distributions for every row and prints the agreement with the engine as one JSON
object (max and mean |dp| over every option, argmax agreement):

    choice2seq bench engine --engine prefix --per-domain 24 --rounds 1 --scores-out S.jsonl
    /tmp/hfx/bin/python scripts/check-smollm2-transformers.py --scores S.jsonl
"""

import argparse
import json
import math
import os
import sys
import time

import torch
import transformers

transformers.utils.logging.disable_progress_bar()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path, device):
    d, name = os.path.split(os.path.abspath(path))
    kw = dict(gguf_file=name, attn_implementation="eager")
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32, **kw)
    except TypeError:  # transformers < 4.56 names it torch_dtype
        model = transformers.AutoModelForCausalLM.from_pretrained(d, torch_dtype=torch.float32, **kw)
    return model.to(device).eval()


def option_logprobs(model, device, prompt, options):
    """The summed log-probability of each option's tokens after the prompt."""
    if not prompt:
        raise ValueError("empty prompt")
    out = []
    for o in options:
        if not o:
            out.append(0.0)
            continue
        ids = torch.tensor([prompt + o], device=device)
        with torch.no_grad():
            logits = model(input_ids=ids, use_cache=False).logits[0]
        lp = torch.log_softmax(logits[len(prompt) - 1 : -1].float(), -1).cpu()
        out.append(sum(float(lp[k, t]) for k, t in enumerate(o)))
    return out


def softmax(xs):
    m = max(xs)
    e = [math.exp(x - m) for x in xs]
    s = sum(e)
    return [x / s for x in e]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--input")
    ap.add_argument("--scores", help="a bench engine scores file: print the agreement with it")
    ap.add_argument("--out")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if not os.path.exists(a.model):
        sys.exit(f"{a.model} is missing: run scripts/fetch-model.sh")
    t = time.time()
    model = load(a.model, a.device)
    vocab = model.config.vocab_size
    print(f"loaded {a.model} in {time.time() - t:.1f}s (torch {torch.__version__}, transformers "
          f"{transformers.__version__}, vocab {vocab})", file=sys.stderr)
    if a.scores:
        agreement(model, a, vocab)
        return
    if not a.input:
        sys.exit("give --input or --scores")
    sink = open(a.out, "w") if a.out else sys.stdout
    n = 0
    t = time.time()
    for line in open(a.input):
        if not line.strip():
            continue
        r = json.loads(line)
        toks = r["tokens"] + [x for o in r["options"] for x in o]
        bad = [x for x in toks if not 0 <= x < vocab]
        if bad:
            raise SystemExit(f"request {r['id']}: token ids out of range: {bad[:5]}")
        lps = option_logprobs(model, a.device, r["tokens"], r["options"])
        sink.write(json.dumps({"id": r["id"], "probs": softmax(lps)}) + "\n")
        sink.flush()
        n += 1
    print(f"{n} requests in {time.time() - t:.1f}s", file=sys.stderr)


def agreement(model, a, vocab):
    rows = [json.loads(l) for l in open(a.scores) if l.strip()]
    failed = [r for r in rows if "error" in r]
    rows = [r for r in rows if "error" not in r]
    max_d, sum_d, n_d, agree = 0.0, 0.0, 0, 0
    t = time.time()
    for r in rows:
        ref = softmax(option_logprobs(model, a.device, r["prompt_ids"], r["option_ids"]))
        eng = r["probabilities"]
        d = [abs(x - y) for x, y in zip(ref, eng)]
        max_d = max(max_d, max(d))
        sum_d += sum(d)
        n_d += len(d)
        agree += int(max(range(len(ref)), key=ref.__getitem__) == max(range(len(eng)), key=eng.__getitem__))
    print(json.dumps({
        "scores": a.scores,
        "requests": len(rows),
        "engine_errors": len(failed),
        "max_abs_dp": max_d,
        "mean_abs_dp": sum_d / max(n_d, 1),
        "argmax_agreement": agree / max(len(rows), 1),
        "seconds": round(time.time() - t, 1),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }))


if __name__ == "__main__":
    main()
