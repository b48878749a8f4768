#!/usr/bin/env python3
"""Regenerates the bfloat16 reference fixtures of the prefix engine's bf16 mode: transformers'
own bf16 CPU forward (`from_pretrained(..., dtype=torch.bfloat16)`, eager attention) on the
Hugging Face fixture checkpoints and on the shipped SmolLM2 GGUF, with the float32 forward
beside it and the distance between the two, from which the tests' agreement bound is set.

    python3 -m venv /root/.cache/c2s/venv-torch
    /root/.cache/c2s/venv-torch/bin/pip install torch==2.15.0 transformers==5.24.0 safetensors \
        tokenizers numpy gguf accelerate
    bash scripts/fetch-model.sh          # models/SmolLM2-135M-Instruct.Q4_1.gguf
    /root/.cache/c2s/venv-torch/bin/python scripts/make-bf16-reference.py [--threads 1]

(Without `kernels` installed, as here, transformers' GGUF loader dequantizes every tensor into
plain nn.Linear / nn.Embedding weights; the script checks that it did.) It takes about 100
seconds on one thread, 5 of them for the fixture checkpoints.

It writes:

- model/tests/fixtures/hf/logprobs-bf16.json
                   {"torch", "transformers", "python", "cpu_capability", "dtype": "bfloat16",
                   "models": {name: {the errors below, "cases": [{"tokens", "logprobs"}]}}}:
                   for every checkpoint of model/tests/fixtures/hf/ (scripts/make-hf-fixtures.py)
                   and each of the token sequences of its logprobs.json (the same tokens, in the
                   same order), the full-vocabulary log-probabilities at every position of
                   transformers' bf16 forward: one forward over the whole sequence, no cache,
                   the bf16 logits widened to float32 before log_softmax
                   (`logits.float().log_softmax(-1)`). Floats have 9 significant digits, so they
                   round-trip f32.
- model/tests/fixtures/smollm2-bf16.json
                   {"torch", "transformers", "python", "cpu_capability", "model" (file, SHA-256,
                   vocab_size, how it is loaded), "top_k", "summary" (the maximum over the
                   prompts of each error below), "prompts": [{"name", "messages", "text",
                   "tokens", "top_ids", "logprobs_bf16", "logprobs_f32",
                   "logprobs_ours_emulated", the errors below, "argmax_agrees"}]}: 6 fixed chat
                   prompts (184 to 314 tokens) in the layout of protocol/src/prompts.rs (a user
                   message holding the JSON state / question / choices (8, codes A-H) /
                   response_format, some with a readout system message, one with a second
                   turn), rendered with the GGUF's own chat template and generation prompt
                   (`text`) and tokenized by the GGUF's tokenizer (add_special_tokens=False);
                   at the last position, the log-probabilities of the top_k (64) tokens of
                   highest float32 probability (`top_ids`, in that order) under transformers'
                   bf16 forward, its float32 forward and the emulation below.

The errors. Maxima of absolute differences over every position and the whole vocabulary (for
SmolLM2: over the whole vocabulary at the last position; `*_top_error` over the stored top_k ids
only); `*_mean_error` is the mean |d log p| over the same entries:

    bf16_error, bf16_prob_error, bf16_mean_error (bf16_top_error)
        transformers bf16 against transformers float32, in log-probability / probability
    ours_emulated_error, _prob_error, _mean_error (_top_error)
        our engine's bf16 scheme, emulated, against float32
    ours_vs_bf16_error, _prob_error, _mean_error (_top_error)
        the emulation against transformers bf16: what a test of our bf16 mode against these
        fixtures sees
    ours_emulated_order_error (ours_emulated_order_top_error)
        the emulation with each linear summed in float64 against the emulation summed in f32:
        what the summation order alone moves a forward of our scheme, since a change in the last
        f32 bit of an activation can flip its rounding to bf16 (one bf16 step is 2^-8 of the
        value). SmolLM2's residual stream reaches |h| ~ 1e4, and the flips grow through its 30
        layers: the order alone moves its last-position log-probs by up to ~0.2, so an engine
        of our scheme cannot be held to the emulation much tighter than to transformers' bf16.

The emulation of our bf16 mode: the float32 model with every nn.Linear weight (q/k/v/o,
gate/up/down, lm_head) and the embedding rounded once to bf16 (torch's round-to-nearest-even)
and every nn.Linear input rounded to bf16 before the product (f32 accumulation, f32 output);
biases (qwen2's q/k/v), norms, RoPE, attention and softmax stay float32. transformers' bf16
forward instead keeps every activation in bf16: each linear's output, the residual stream, the
norms' outputs, q·k and the attention output are rounded to bf16, and so are the logits.

Checks: the float32 forward reproduces logprobs.json (exactly, or within 1e-5 on another
CPU's kernels; the largest difference is printed); the bf16 model's weights are exactly the
float32 weights rounded to bf16 (for the GGUF too: its Q4_1 blocks dequantized in float32, then
rounded), and its linears are plain nn.Linear; the bf16 forward is deterministic (a second
forward is identical); the emulation calls its rounding hook once per nn.Linear per forward, and
with the rounding switched off reproduces the float32 forward exactly; the JSON values parse back
to the same f32 values; every SmolLM2 prompt decodes back to its text; the SmolLM2 file stays
under 300 KB.

The output is deterministic on one machine with one --threads: rerunning rewrites identical
files. bf16 matmuls go through oneDNN, whose kernels differ with the CPU (avx512_bf16 / AMX or
not), and so do MKL's f32 summation orders: on another CPU the numbers may move, by amounts of
the order of ours_emulated_order_error.
"""

import argparse
import copy
import hashlib
import json
import os
import platform
import re
import sys
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TQDM_DISABLE", "1")

import torch  # noqa: E402
import transformers  # noqa: E402

transformers.utils.logging.disable_progress_bar()
transformers.utils.logging.set_verbosity_error()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HF = os.path.join(ROOT, "model", "tests", "fixtures", "hf")
SMOL_OUT = os.path.join(ROOT, "model", "tests", "fixtures", "smollm2-bf16.json")
GGUF = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
TOP_K = 64

# Texts of protocol/src/prompts.rs (E.1, E.2, E.5).
NATIVE_V1 = "Select the complete correct answer from the provided candidates."
NATIVE_V2 = "Which listed full answer correctly solves the problem?"
SERIAL_V1 = (
    "Solve the original problem. Select its true answer character at the specified position. The "
    "current prefix is a draft and may contain errors; it does not change the original answer."
)
INDEPENDENT_V1 = (
    "Solve the original problem. Select its true answer character at the specified one-based "
    "position, independently of other positions."
)
CODE_RESPONSE_FORMAT = "Select one choice and output only its single-character code."
READOUT_QUESTION = (
    "Select the character of copy_target at the one-based query_position. Auxiliary "
    "representations, when present, encode the same target. Each criterion description specifies "
    "an output character. Select by the criterion description; option names identify criteria."
)
T0_CODE = (
    "Return exactly ONE listed choice code, as a single uppercase letter. Do not output the option "
    "name or criterion value. Do not explain, reason aloud, add whitespace, punctuation, or any "
    "other text."
)
T2_CODE = (
    "Choose the option whose criterion answers the question. Reply with its single uppercase "
    "choice code alone. Your response must contain no other characters, explanation, or formatting."
)
CODES = "ABCDEFGH"


def canonical(obj):
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def user_json(state, question, choices):
    body = {
        "state": canonical(state),
        "question": question,
        "choices": dict(zip(CODES, choices)),
        "response_format": CODE_RESPONSE_FORMAT,
    }
    return json.dumps(body, ensure_ascii=False)


def smol_prompts():
    """6 fixed chats: name -> messages. Items from data/banks (arithmetic-dev, lexical-dev)."""
    arith = ["729", "259", "359", "959", "759", "229", "929", "329"]
    lex = ["dot", "chi", "ala", "yin", "cob", "yen", "ark", "dak"]
    ape = ["jab", "jak", "ant", "ump", "nit", "nap", "urn", "ape"]
    mul = ["925", "225", "205", "905", "305", "325", "705", "725"]
    # B.5's readable aligned option names.
    readout = [{"option_name": f"digit_{v}", "criterion": v} for v in "58923071"]
    digits = ["5", "8", "9", "2", "3", "0", "7", "1"]
    return [
        ("native-arithmetic", [
            {"role": "user", "content": user_json(
                {"problem": "81 × 9 = ?", "candidates": arith, "target_length": 3}, NATIVE_V1, arith)},
        ]),
        ("native-lexical", [
            {"role": "user", "content": user_json(
                {"problem": "a yearning for something or to do something", "candidates": lex,
                 "target_length": 3}, NATIVE_V2, lex)},
        ]),
        ("serial-arithmetic", [
            {"role": "user", "content": user_json(
                {"problem": "65 × 5 = ?", "candidates": mul, "target_length": 3, "position": 2,
                 "current_prefix": "3"}, SERIAL_V1, ["0", "2", "5", "7", "9", "1", "4", "6"])},
        ]),
        ("independent-lexical-system", [
            {"role": "system", "content": T2_CODE},
            {"role": "user", "content": user_json(
                {"problem": "any of various primates with short tails or no tail at all", "candidates": ape,
                 "target_length": 3, "position": 1}, INDEPENDENT_V1, ["j", "a", "u", "n", "b", "c", "d", "e"])},
        ]),
        ("readout-t0", [
            {"role": "system", "content": T0_CODE},
            {"role": "user", "content": json.dumps({
                "state": canonical({"copy_target": "589", "query_position": 2}),
                "question": READOUT_QUESTION,
                "choices": {c: o for c, o in zip(CODES, readout)},
                "response_format": CODE_RESPONSE_FORMAT,
            }, ensure_ascii=False)},
        ]),
        ("native-arithmetic-multiturn", [
            {"role": "system", "content": T2_CODE},
            {"role": "user", "content": user_json(
                {"problem": "What is 39 * 15?", "candidates": ["585", "589", "385", "389", "485", "489", "685", "689"],
                 "target_length": 3},
                NATIVE_V1, ["585", "589", "385", "389", "485", "489", "685", "689"])},
            {"role": "assistant", "content": "C"},
            {"role": "user", "content": "Check again: " + " ".join(f"{c}={v}" for c, v in zip(CODES, digits))
             + ". " + CODE_RESPONSE_FORMAT},
        ]),
    ]


def f9(x):
    return float(f"{x:.9g}")


def rne_bf16(t):
    return t.to(torch.bfloat16).to(torch.float32)


def load(d, dtype, **kw):
    try:
        m = transformers.AutoModelForCausalLM.from_pretrained(d, dtype=dtype, attn_implementation="eager", **kw)
    except TypeError:  # transformers < 4.56 names it torch_dtype
        m = transformers.AutoModelForCausalLM.from_pretrained(d, torch_dtype=dtype, attn_implementation="eager", **kw)
    return m.eval()


def logprobs_of(model, tokens):
    with torch.no_grad():
        out = model(input_ids=torch.tensor([tokens]), use_cache=False)
    return out.logits[0].float().log_softmax(-1)


def check_bf16_weights(f32, bf16, name):
    """The bf16 model holds exactly the float32 weights rounded to bf16, in plain nn.Linear."""
    pf = dict(f32.named_parameters())
    for n, p in bf16.named_parameters():
        assert p.dtype == torch.bfloat16, (name, n, p.dtype)
        assert torch.equal(p.detach(), pf[n].detach().to(torch.bfloat16)), f"{name}: {n} is not RNE(f32)"
    for n, mod in bf16.named_modules():
        if "Linear" in type(mod).__name__:
            assert type(mod) is torch.nn.Linear, (name, n, type(mod))


def emulate_ours(f32, round_inputs=True, round_weights=True, f64_products=False):
    """A copy of the float32 model with our bf16 scheme: linear and embedding weights rounded once
    to bf16, every linear input rounded to bf16 before the product (f32 accumulation). With
    f64_products, each linear's product is summed in float64 and rounded to f32 once: the same
    scheme with another summation, whose distance from the f32 one measures how far any engine
    of this scheme may stand from the emulation through its summation order alone."""
    m = copy.deepcopy(f32)
    calls = [0]

    def hook(_mod, args):
        calls[0] += 1
        x = args[0]
        return (rne_bf16(x),) + tuple(args[1:]) if round_inputs else None

    def product64(mod, args, _out):
        b = None if mod.bias is None else mod.bias.double()
        return torch.nn.functional.linear(args[0].double(), mod.weight.double(), b).float()

    n_linear = 0
    with torch.no_grad():
        for mod in m.modules():
            if type(mod) is torch.nn.Linear:
                n_linear += 1
                if round_weights:
                    mod.weight.copy_(rne_bf16(mod.weight))
                mod.register_forward_pre_hook(hook)
                if f64_products:
                    mod.register_forward_hook(product64)
            elif type(mod) is torch.nn.Embedding:
                if round_weights:
                    mod.weight.copy_(rne_bf16(mod.weight))
            elif "Linear" in type(mod).__name__ or (
                "Embedding" in type(mod).__name__ and "Rotary" not in type(mod).__name__
            ):
                raise SystemExit(f"unexpected module {type(mod).__name__}")
    m.linear_calls = calls
    m.n_linear = n_linear
    return m


def errors(a, b):
    """max |d log p|, max |d p| and the sum and count of |d log p| of two log-probability tensors."""
    d = (a.double() - b.double()).abs()
    return float((a - b).abs().max()), float((a.exp() - b.exp()).abs().max()), float(d.sum()), d.numel()


def fixtures(threads):
    ref = json.load(open(os.path.join(HF, "logprobs.json")))
    result = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "dtype": "bfloat16",
        "models": {},
    }
    rows = {}
    for name, entry in ref["models"].items():
        d = os.path.join(HF, name)
        f32 = load(d, torch.float32)
        bf16 = load(d, torch.bfloat16)
        check_bf16_weights(f32, bf16, name)
        ours = emulate_ours(f32)
        ours64 = emulate_ours(f32, f64_products=True)
        plain = emulate_ours(f32, round_inputs=False, round_weights=False)
        order = 0.0
        errs = dict.fromkeys(["bf16", "bf16_prob", "ours", "ours_prob", "ovb", "ovb_prob"], 0.0)
        sums = dict.fromkeys(["bf16", "ours", "ovb"], 0.0)
        count = 0
        repro = 0.0
        cases = []
        rows[name] = []
        for case in entry["cases"]:
            toks = case["tokens"]
            lp32_ref = torch.tensor(case["logprobs"], dtype=torch.float32)
            lp32 = logprobs_of(f32, toks)
            repro = max(repro, float((lp32 - lp32_ref).abs().max()))
            lpb = logprobs_of(bf16, toks)
            assert torch.equal(lpb, logprobs_of(bf16, toks)), f"{name}: bf16 forward not deterministic"
            before = ours.linear_calls[0]
            lpo = logprobs_of(ours, toks)
            assert ours.linear_calls[0] - before == ours.n_linear, (name, ours.linear_calls[0] - before, ours.n_linear)
            assert torch.equal(logprobs_of(plain, toks), lp32), f"{name}: hooks alone change the forward"
            order = max(order, float((logprobs_of(ours64, toks) - lpo).abs().max()))
            for key, (a, b) in {"bf16": (lpb, lp32_ref), "ours": (lpo, lp32_ref), "ovb": (lpo, lpb)}.items():
                e, ep, s, n = errors(a, b)
                errs[key] = max(errs[key], e)
                errs[key + "_prob"] = max(errs[key + "_prob"], ep)
                sums[key] += s
            count += n
            rows[name].append(lpb)
            cases.append({"tokens": toks, "logprobs": [[f9(x) for x in r] for r in lpb.tolist()]})
        assert repro <= 1e-5, f"{name}: float32 forward differs from logprobs.json by {repro}"
        print(f"{name}: f32 vs logprobs.json {repro:.1e}{' (exact)' if repro == 0 else ''}; "
              f"bf16 vs f32 {errs['bf16']:.4f} (p {errs['bf16_prob']:.4f}, mean {sums['bf16'] / count:.4f}); "
              f"ours emulated vs f32 {errs['ours']:.4f} (p {errs['ours_prob']:.4f}, mean {sums['ours'] / count:.4f}); "
              f"ours vs bf16 {errs['ovb']:.4f} (p {errs['ovb_prob']:.4f}, mean {sums['ovb'] / count:.4f}); "
              f"f64 vs f32 summation of ours {order:.1e}",
              flush=True)
        result["models"][name] = {
            "bf16_error": f9(errs["bf16"]),
            "bf16_prob_error": f9(errs["bf16_prob"]),
            "bf16_mean_error": f9(sums["bf16"] / count),
            "ours_emulated_error": f9(errs["ours"]),
            "ours_emulated_prob_error": f9(errs["ours_prob"]),
            "ours_emulated_mean_error": f9(sums["ours"] / count),
            "ours_emulated_order_error": f9(order),
            "ours_vs_bf16_error": f9(errs["ovb"]),
            "ours_vs_bf16_prob_error": f9(errs["ovb_prob"]),
            "ours_vs_bf16_mean_error": f9(sums["ovb"] / count),
            "cases": cases,
        }
    for name, entry in result["models"].items():
        for case, lp in zip(entry["cases"], rows[name]):
            assert torch.equal(torch.tensor(case["logprobs"], dtype=torch.float32), lp)
    return result


def write_rows_json(path, result, row_paths):
    """JSON with indent 1, and each list named by row_paths on one line."""
    rows = {}

    def placeholder(row):
        key = f"@@ROW{len(rows)}@@"
        rows[key] = json.dumps(row, separators=(",", ":"), ensure_ascii=False)
        return key

    shaped = json.loads(json.dumps(result))
    row_paths(shaped, placeholder)
    text = json.dumps(shaped, indent=1, ensure_ascii=False)
    text = re.sub(r'"(@@ROW[0-9]+@@)"', lambda m: rows[m.group(1)], text)
    assert json.loads(text) == result
    with open(path, "w") as f:
        f.write(text + "\n")
    print(f"{os.path.relpath(path, ROOT)}: {os.path.getsize(path)} bytes")


def fixture_rows(shaped, ph):
    for entry in shaped["models"].values():
        for case in entry["cases"]:
            case["tokens"] = ph(case["tokens"])
            case["logprobs"] = [ph(r) for r in case["logprobs"]]


def smollm2():
    if not os.path.exists(GGUF):
        raise SystemExit(f"{GGUF} is missing: run scripts/fetch-model.sh")
    d, fname = os.path.split(GGUF)
    sha = hashlib.sha256(open(GGUF, "rb").read()).hexdigest()
    tk = transformers.AutoTokenizer.from_pretrained(d, gguf_file=fname)
    f32 = load(d, torch.float32, gguf_file=fname)
    bf16 = load(d, torch.bfloat16, gguf_file=fname)
    check_bf16_weights(f32, bf16, "smollm2")
    ours = emulate_ours(f32)
    ours64 = emulate_ours(f32, f64_products=True)
    plain = emulate_ours(f32, round_inputs=False, round_weights=False)
    vocab = f32.config.vocab_size
    out = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "model": {"file": fname, "sha256": sha, "vocab_size": vocab,
                  "load": "AutoModelForCausalLM.from_pretrained(dir, gguf_file=file, dtype=torch.bfloat16 "
                          "(and torch.float32), attn_implementation='eager')"},
        "top_k": TOP_K,
        "summary": {},
        "prompts": [],
    }
    keys = ["bf16", "ours_emulated", "ours_vs_bf16"]
    summary = {f"{k}_{s}": 0.0 for k in keys for s in ("error", "prob_error", "mean_error", "top_error")}
    summary["ours_emulated_order_error"] = summary["ours_emulated_order_top_error"] = 0.0
    checks = []
    for name, messages in smol_prompts():
        text = tk.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        toks = tk(text, add_special_tokens=False)["input_ids"]
        assert 100 <= len(toks) <= 320, (name, len(toks))
        assert tk.decode(toks) == text, name
        lp32 = logprobs_of(f32, toks)[-1]
        lpb_all = logprobs_of(bf16, toks)
        assert torch.equal(lpb_all, logprobs_of(bf16, toks)), f"{name}: bf16 forward not deterministic"
        lpb = lpb_all[-1]
        lpo = logprobs_of(ours, toks)[-1]
        assert torch.equal(logprobs_of(plain, toks)[-1], lp32), f"{name}: hooks alone change the forward"
        lpo64 = logprobs_of(ours64, toks)[-1]
        order = float((lpo64 - lpo).abs().max())
        summary["ours_emulated_order_error"] = max(summary["ours_emulated_order_error"], order)
        top = torch.argsort(lp32, descending=True, stable=True)[:TOP_K]
        entry = {"name": name, "messages": messages, "text": text, "tokens": toks, "top_ids": top.tolist(),
                 "logprobs_bf16": [f9(x) for x in lpb[top].tolist()],
                 "logprobs_f32": [f9(x) for x in lp32[top].tolist()],
                 "logprobs_ours_emulated": [f9(x) for x in lpo[top].tolist()]}
        for k, (a, b) in {"bf16": (lpb, lp32), "ours_emulated": (lpo, lp32), "ours_vs_bf16": (lpo, lpb)}.items():
            e, ep, s, n = errors(a, b)
            et = float((a[top] - b[top]).abs().max())
            entry[f"{k}_error"], entry[f"{k}_prob_error"], entry[f"{k}_top_error"] = f9(e), f9(ep), f9(et)
            entry[f"{k}_mean_error"] = f9(s / n)
            summary[f"{k}_mean_error"] = max(summary[f"{k}_mean_error"], s / n)
            summary[f"{k}_error"] = max(summary[f"{k}_error"], e)
            summary[f"{k}_prob_error"] = max(summary[f"{k}_prob_error"], ep)
            summary[f"{k}_top_error"] = max(summary[f"{k}_top_error"], et)
        entry["ours_emulated_order_error"] = f9(order)
        order_top = float((lpo64[top] - lpo[top]).abs().max())
        entry["ours_emulated_order_top_error"] = f9(order_top)
        summary["ours_emulated_order_top_error"] = max(summary["ours_emulated_order_top_error"], order_top)
        agree = int(lpb.argmax()) == int(lp32.argmax()) == int(lpo.argmax())
        entry["argmax_agrees"] = agree
        print(f"smollm2 {name}: {len(toks)} tokens, argmax {tk.decode([int(lp32.argmax())])!r} "
              f"p={float(lp32.exp().max()):.3f} (all agree: {agree}); bf16 vs f32 {entry['bf16_error']:.4f} "
              f"(p {entry['bf16_prob_error']:.4f}, top {entry['bf16_top_error']:.4f}); ours vs f32 "
              f"{entry['ours_emulated_error']:.4f} (p {entry['ours_emulated_prob_error']:.4f}, top "
              f"{entry['ours_emulated_top_error']:.4f}); ours vs bf16 {entry['ours_vs_bf16_error']:.4f} "
              f"(p {entry['ours_vs_bf16_prob_error']:.4f}, top {entry['ours_vs_bf16_top_error']:.4f}); "
              f"f64 vs f32 summation of ours {order:.1e} (top {order_top:.1e})", flush=True)
        out["prompts"].append(entry)
        checks.append((lpb[top], lp32[top], lpo[top]))
    out["summary"] = {k: f9(v) for k, v in summary.items()}
    for entry, (b, f, o) in zip(out["prompts"], checks):
        assert torch.equal(torch.tensor(entry["logprobs_bf16"], dtype=torch.float32), b)
        assert torch.equal(torch.tensor(entry["logprobs_f32"], dtype=torch.float32), f)
        assert torch.equal(torch.tensor(entry["logprobs_ours_emulated"], dtype=torch.float32), o)
    return out


def smol_rows(shaped, ph):
    for p in shaped["prompts"]:
        for k in ("tokens", "top_ids", "logprobs_bf16", "logprobs_f32", "logprobs_ours_emulated"):
            p[k] = ph(p[k])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--skip-smollm2", action="store_true")
    ap.add_argument("--skip-fixtures", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    t0 = time.time()
    if not a.skip_fixtures:
        result = fixtures(a.threads)
        write_rows_json(os.path.join(HF, "logprobs-bf16.json"), result, fixture_rows)
        print(f"fixtures: {time.time() - t0:.1f}s", flush=True)
    if not a.skip_smollm2:
        t1 = time.time()
        out = smollm2()
        write_rows_json(SMOL_OUT, out, smol_rows)
        size = os.path.getsize(SMOL_OUT)
        assert size < 300_000, size
        print(f"smollm2: {time.time() - t1:.1f}s; summary {json.dumps(out['summary'])}")
    print(f"total {time.time() - t0:.1f}s")


if __name__ == "__main__":
    sys.exit(main())
