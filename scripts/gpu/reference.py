"""A plain transformers loop on the same tokens as an engine's scores file, and the agreement.

Reads the JSON lines `choice2seq bench engine --scores-out` wrote (prompt token ids, option
token ids, the engine's option distribution), computes each option distribution with
transformers (the model's logits at the prompt boundary, log-softmax in f32, an option's token
log-probabilities summed, softmax over the options), and prints max |Δp|, mean |Δp|, argmax
agreement, and the loop's requests/s (batched, left-padded).

    python3 reference.py --model DIR --scores FILE [--device cuda] [--batch 16] [--out FILE]
"""

import argparse
import json
import time

import torch
import transformers


def option_logprobs(model, device, prompts, options, batch):
    """Per request, the summed log-probability of each option's tokens after its prompt."""
    # Every context whose next-token distribution is needed: the prompt, and the prompt
    # extended by each proper prefix of a multi-token option.
    contexts = {}
    for p, opts in zip(prompts, options):
        for o in opts:
            for k in range(len(o)):
                contexts.setdefault(tuple(p + o[:k]), None)
    keys = list(contexts)
    keys.sort(key=len)
    for i in range(0, len(keys), batch):
        chunk = keys[i : i + batch]
        width = max(len(c) for c in chunk)
        ids = torch.zeros((len(chunk), width), dtype=torch.long)
        mask = torch.zeros((len(chunk), width), dtype=torch.long)
        for r, c in enumerate(chunk):
            ids[r, width - len(c) :] = torch.tensor(c)
            mask[r, width - len(c) :] = 1
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.no_grad():
            out = model(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                position_ids=pos.to(device),
            )
        last = out.logits[:, -1, :].float().log_softmax(-1).cpu()
        for r, c in enumerate(chunk):
            contexts[c] = last[r]
    result = []
    for p, opts in zip(prompts, options):
        lps = []
        for o in opts:
            lps.append(sum(float(contexts[tuple(p + o[:k])][o[k]]) for k in range(len(o))))
        result.append(lps)
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--scores", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = [json.loads(l) for l in open(a.scores)]
    bad = [r for r in rows if "error" in r]
    rows = [r for r in rows if "error" not in r]
    dtype = getattr(torch, a.dtype)
    t = time.time()
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(a.model, dtype=dtype)
    except TypeError:  # transformers < 4.56 names it torch_dtype
        model = transformers.AutoModelForCausalLM.from_pretrained(a.model, torch_dtype=dtype)
    model = model.to(a.device)
    model.eval()
    load_s = time.time() - t
    prompts = [r["prompt_ids"] for r in rows]
    options = [r["option_ids"] for r in rows]
    option_logprobs(model, a.device, prompts[:4], options[:4], a.batch)  # warm-up
    if a.device == "cuda":
        torch.cuda.synchronize()
    t = time.time()
    lps = option_logprobs(model, a.device, prompts, options, a.batch)
    if a.device == "cuda":
        torch.cuda.synchronize()
    secs = time.time() - t
    max_d = 0.0
    sum_d = 0.0
    n_d = 0
    agree = 0
    top = []
    for r, lp in zip(rows, lps):
        ref = torch.tensor(lp, dtype=torch.float64).softmax(-1).tolist()
        eng = r["probabilities"]
        d = [abs(x - y) for x, y in zip(ref, eng)]
        max_d = max(max_d, max(d))
        sum_d += sum(d)
        n_d += len(d)
        agree += int(max(range(len(ref)), key=ref.__getitem__) == max(range(len(eng)), key=eng.__getitem__))
        top.append(max(ref))
    tokens = sum(len(p) for p in prompts)
    summary = {
        "model": a.model,
        "requests": len(rows),
        "engine_errors": len(bad),
        "max_abs_dp": max_d,
        "mean_abs_dp": sum_d / max(n_d, 1),
        "argmax_agreement": agree / max(len(rows), 1),
        "mean_top_probability": sum(top) / max(len(top), 1),
        "transformers_load_s": round(load_s, 1),
        "transformers_requests_per_s": len(rows) / secs,
        "transformers_prompt_tokens_per_s": tokens / secs,
        "transformers_batch": a.batch,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }
    print(json.dumps(summary, indent=1))
    if a.out:
        json.dump(summary, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
