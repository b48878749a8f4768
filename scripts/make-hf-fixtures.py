#!/usr/bin/env python3
"""Regenerates the Hugging Face checkpoint fixtures of the prefix engine's tests: tiny
random-weight checkpoints written by transformers' own `save_pretrained`, and the f32
log-probabilities transformers computes on them.

    python3 -m venv /tmp/hfx && /tmp/hfx/bin/pip install torch transformers safetensors tokenizers
    /tmp/hfx/bin/python scripts/make-hf-fixtures.py

It writes, in model/tests/fixtures/hf/:

- <name>/          config.json, generation_config.json and model.safetensors (float32) from
                   `model.save_pretrained(dir, safe_serialization=True)`, plus tokenizer.json (a
                   byte-level BPE learnt with the `tokenizers` library from the small English text
                   below, as many tokens as the model's vocabulary, specials <|endoftext|>,
                   <|im_start|>, <|im_end|> at ids 0, 1, 2) and tokenizer_config.json (eos
                   <|im_end|>, no bos, pad <|endoftext|>, a ChatML chat_template), for:
    llama           LlamaForCausalLM, rope_theta 10000, no scaling, untied lm_head
    llama-tied      as llama with tie_word_embeddings (like Llama-3.2-1B)
    llama3-scaling  rope type llama3 (factor 8, low/high_freq_factor 1/4, rope_theta 500000,
                    original_max_position_embeddings 40: with head_dim 16 this puts rotary
                    frequencies in each of the three regimes, unchanged, divided by the factor and
                    interpolated; the script prints which dims fall where and asserts all occur)
    llama-linear    rope type linear, factor 4
    qwen2           Qwen2ForCausalLM (q/k/v biases)
    qwen3           Qwen3ForCausalLM (q_norm/k_norm, head_dim 32 != hidden 64 / 4 heads)
    qwen3-yarn      qwen3 with rope type yarn (factor 4, original_max_position_embeddings 32;
                    max_position_embeddings 128 = 4 x 32, so transformers 4's yarn, which took
                    the factor as max_position_embeddings / original_max_position_embeddings,
                    agrees with transformers 5's, which takes `factor`)
- logprobs.json    {"torch", "transformers", "python", "dtype": "float32", "models": {name:
                   {"vocab_size", "legacy_config_fields", "f32_error", "cases": [{"tokens", "logprobs"}]}}}:
                   per model 3 fixed token sequences (lengths 7, 19, 45, ids drawn with a fixed
                   seed from the non-special ids) and, per position, the full-vocabulary
                   log_softmax of the logits there (eager attention, one forward over the whole
                   sequence, no cache, float32). Floats are written with 9 significant digits, so
                   they round-trip f32. `legacy_config_fields` holds the `rope_theta` and
                   `rope_scaling` a transformers-4 config.json has for the same model (transformers
                   5 writes `rope_parameters` instead), so a test can rewrite config.json to the
                   old form.

Weights are drawn with torch.manual_seed, larger than transformers' defaults (linear and
embedding weights normal std 0.2, RMSNorm weights 1 + 0.1 randn, Qwen2's biases normal std 0.2),
so the log-probabilities are far from uniform. The output is deterministic: rerunning rewrites
identical files (config.json records the transformers version).

Checks: every directory is reloaded with from_pretrained and must reproduce the log-probs
exactly, again with its config.json rewritten to the transformers-4 form, and the tokenizer
must load with AutoTokenizer and render the chat template; the JSON values must parse back to
the same f32 values. Each directory's size is printed.
"""

import copy
import json
import math
import os
import platform
import re
import shutil
import sys
import tempfile

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
import transformers  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers  # noqa: E402

torch.set_num_threads(1)
transformers.utils.logging.disable_progress_bar()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "model", "tests", "fixtures", "hf")

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
LENGTHS = [7, 19, 45]
MAX_POS = 128

TEXT = """\
The quick brown fox jumps over the lazy dog. The dog does not mind; it is a very lazy dog.
A small model can still tell a story, if the story is short and the words are common.
Once upon a time there was a little town by the sea. In the town there lived a baker,
a teacher, a doctor and a fisherman. Every morning the baker made bread, the teacher went
to the school, the doctor opened the door of the clinic and the fisherman took his boat out
onto the water. The people of the town liked to talk about the weather, the price of bread
and the fish that the fisherman brought back in the evening.
Question: What is the capital of France? Answer: The capital of France is Paris.
Question: How many legs does a spider have? Answer: A spider has eight legs.
Question: Which is heavier, a kilogram of iron or a kilogram of feathers? Answer: They weigh the same.
It was the best of times, it was the worst of times, it was the age of wisdom, it was the age
of foolishness, it was the epoch of belief, it was the epoch of incredulity.
To be, or not to be, that is the question: whether it is nobler in the mind to suffer the
slings and arrows of outrageous fortune, or to take arms against a sea of troubles.
The numbers one, two, three, four, five, six, seven, eight, nine and ten are written 1, 2, 3,
4, 5, 6, 7, 8, 9 and 10. There are 365 days in a year and 24 hours in a day.
She sells sea shells on the sea shore, and the shells that she sells are sea shells for sure.
"""


# name -> (class, vocab size, config kwargs, legacy (transformers 4) rope fields)
def specs():
    common = dict(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=MAX_POS,
        rms_norm_eps=1e-6,
        bos_token_id=None,
        eos_token_id=2,
        pad_token_id=0,
    )
    llama3 = {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 40,
    }
    yarn = {"factor": 4.0, "original_max_position_embeddings": 32}
    return {
        "llama": (
            "LlamaForCausalLM",
            288,
            dict(common, head_dim=16, tie_word_embeddings=False, rope={"rope_type": "default", "rope_theta": 10000.0}),
        ),
        "llama-tied": (
            "LlamaForCausalLM",
            272,
            dict(common, head_dim=16, tie_word_embeddings=True, rope={"rope_type": "default", "rope_theta": 10000.0}),
        ),
        "llama3-scaling": (
            "LlamaForCausalLM",
            288,
            dict(
                common,
                head_dim=16,
                tie_word_embeddings=False,
                rope=dict({"rope_type": "llama3", "rope_theta": 500000.0}, **llama3),
            ),
        ),
        "llama-linear": (
            "LlamaForCausalLM",
            280,
            dict(
                common,
                head_dim=16,
                tie_word_embeddings=False,
                rope={"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0},
            ),
        ),
        "qwen2": (
            "Qwen2ForCausalLM",
            296,
            dict(common, tie_word_embeddings=False, rope={"rope_type": "default", "rope_theta": 1000000.0}),
        ),
        "qwen3": (
            "Qwen3ForCausalLM",
            264,
            dict(common, head_dim=32, tie_word_embeddings=False, rope={"rope_type": "default", "rope_theta": 1000000.0}),
        ),
        "qwen3-yarn": (
            "Qwen3ForCausalLM",
            288,
            dict(
                common,
                head_dim=32,
                tie_word_embeddings=False,
                rope=dict({"rope_type": "yarn", "rope_theta": 1000000.0}, **yarn),
            ),
        ),
    }


def legacy_fields(rope):
    """The rope_theta and rope_scaling a transformers-4 config.json holds for these parameters."""
    scaling = {k: v for k, v in rope.items() if k != "rope_theta"}
    if scaling.get("rope_type") == "default":
        scaling = None
    return {"rope_theta": rope["rope_theta"], "rope_scaling": scaling}


def make_config(cls_name, vocab, kw):
    kw = dict(kw)
    rope = kw.pop("rope")
    cfg_cls = {"LlamaForCausalLM": transformers.LlamaConfig, "Qwen2ForCausalLM": transformers.Qwen2Config,
               "Qwen3ForCausalLM": transformers.Qwen3Config}[cls_name]
    major = int(transformers.__version__.split(".")[0])
    if major >= 5:
        cfg = cfg_cls(vocab_size=vocab, rope_parameters=dict(rope), **kw)
    else:
        legacy = legacy_fields(rope)
        cfg = cfg_cls(vocab_size=vocab, rope_theta=legacy["rope_theta"], rope_scaling=legacy["rope_scaling"], **kw)
    return cfg


def init_weights(model, seed):
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            elif name.endswith(".bias"):
                p.copy_(0.2 * torch.randn_like(p))
            elif p.dim() == 2:
                p.copy_(0.2 * torch.randn_like(p))
            else:
                raise SystemExit(f"unexpected parameter {name} {tuple(p.shape)}")


def llama3_regimes(rope, head_dim):
    """Per rotary dim pair: 'unchanged', 'divided' or 'interpolated', as in transformers'
    _compute_llama3_parameters."""
    base = rope["rope_theta"]
    old = rope["original_max_position_embeddings"]
    low_wl = old / rope["low_freq_factor"]
    high_wl = old / rope["high_freq_factor"]
    out = []
    for i in range(head_dim // 2):
        inv = 1.0 / base ** (2 * i / head_dim)
        wl = 2 * math.pi / inv
        if wl < high_wl:
            regime = "unchanged"
        elif wl > low_wl:
            regime = "divided"
        else:
            regime = "interpolated"
        out.append((i, wl, regime))
    return out, high_wl, low_wl


def make_tokenizer(vocab, d):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        min_frequency=1,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(TEXT.splitlines(keepends=True), trainer)
    if tok.get_vocab_size() != vocab:
        raise SystemExit(f"tokenizer has {tok.get_vocab_size()} tokens, wanted {vocab}: lengthen TEXT")
    for i, s in enumerate(SPECIALS):
        assert tok.token_to_id(s) == i, s
    tok.save(os.path.join(d, "tokenizer.json"))
    tc = {
        "added_tokens_decoder": {
            str(i): {"content": s, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False, "special": True}
            for i, s in enumerate(SPECIALS)
        },
        "bos_token": None,
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": MAX_POS,
        "pad_token": "<|endoftext|>",
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": None,
    }
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump(tc, f, indent=2)
        f.write("\n")


def logprobs_of(model, tokens):
    with torch.no_grad():
        out = model(input_ids=torch.tensor([tokens]), use_cache=False)
    return torch.log_softmax(out.logits[0].float(), -1)


def load(d):
    try:
        m = transformers.AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32, attn_implementation="eager")
    except TypeError:
        m = transformers.AutoModelForCausalLM.from_pretrained(d, torch_dtype=torch.float32, attn_implementation="eager")
    return m.eval()


def f9(x):
    return float(f"{x:.9g}")


def dir_size(d):
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))


def main():
    os.makedirs(OUT, exist_ok=True)
    result = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "dtype": "float32",
        "models": {},
    }
    tensors = {}
    for seed, (name, (cls_name, vocab, kw)) in enumerate(specs().items()):
        d = os.path.join(OUT, name)
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        cfg = make_config(cls_name, vocab, kw)
        cfg._attn_implementation = "eager"
        cls = getattr(transformers, cls_name)
        model = cls(cfg).to(torch.float32).eval()
        init_weights(model, 1000 + seed)
        if cfg.tie_word_embeddings:
            assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
        rope = kw["rope"]
        head_dim = kw.get("head_dim", kw["hidden_size"] // kw["num_attention_heads"])
        if rope["rope_type"] == "llama3":
            regimes, high_wl, low_wl = llama3_regimes(rope, head_dim)
            print(f"{name}: llama3 regimes (high_freq_wavelen {high_wl}, low_freq_wavelen {low_wl}):")
            for i, wl, r in regimes:
                print(f"  dim pair {i}: wavelength {wl:.2f} -> {r}")
            assert {r for _, _, r in regimes} == {"unchanged", "divided", "interpolated"}
            # The same, as the model's own rotary embedding computed it.
            inv = model.model.rotary_emb.inv_freq
            for i, _, r in regimes:
                plain = 1.0 / rope["rope_theta"] ** (2 * i / head_dim)
                ratio = plain / float(inv[i])
                want = {"unchanged": (1.0, 1.0), "divided": (8.0, 8.0), "interpolated": (1.0 + 1e-3, 8.0 - 1e-3)}[r]
                lo, hi = want
                assert lo * (1 - 1e-5) <= ratio <= hi * (1 + 1e-5), (i, r, ratio)
        gen = torch.Generator().manual_seed(2000 + seed)
        cases = []
        tensors[name] = []
        # The reference's own rounding: the same model in float64, against the float32 rows.
        model64 = copy.deepcopy(model).double()
        f32_error = 0.0
        for n in LENGTHS:
            toks = torch.randint(len(SPECIALS), vocab, (n,), generator=gen).tolist()
            lp = logprobs_of(model, toks)
            with torch.no_grad():
                lp64 = torch.log_softmax(model64(input_ids=torch.tensor([toks]), use_cache=False).logits[0], -1)
            f32_error = max(f32_error, float((lp64 - lp.double()).abs().max()))
            tensors[name].append((toks, lp))
            cases.append({"tokens": toks, "logprobs": [[f9(x) for x in row] for row in lp.tolist()]})
        top = max(float(lp.exp().max(-1).values.mean()) for _, lp in tensors[name])
        print(f"{name}: mean top probability {top:.3f}, logprob std {float(tensors[name][-1][1].std()):.2f}")
        model.save_pretrained(d, safe_serialization=True)
        make_tokenizer(vocab, d)
        print(f"{name}: float32 vs float64 forward, max |d log p| {f32_error:.2e}")
        result["models"][name] = {"vocab_size": vocab, "legacy_config_fields": legacy_fields(rope),
                                  "f32_error": f9(f32_error), "cases": cases}

    # Checks.
    for name, (cls_name, vocab, kw) in specs().items():
        d = os.path.join(OUT, name)
        files = sorted(os.listdir(d))
        assert "model.safetensors" in files and "config.json" in files, files
        m = load(d)
        assert type(m).__name__ == cls_name
        for toks, lp in tensors[name]:
            assert torch.equal(logprobs_of(m, toks), lp), f"{name}: reload differs"
        # The transformers-4 form of config.json.
        legacy = result["models"][name]["legacy_config_fields"]
        with tempfile.TemporaryDirectory() as t:
            for f in files:
                shutil.copy(os.path.join(d, f), t)
            cfg = json.load(open(os.path.join(d, "config.json")))
            cfg.pop("rope_parameters", None)
            cfg.update(legacy)
            json.dump(cfg, open(os.path.join(t, "config.json"), "w"), indent=2)
            m2 = load(t)
            for toks, lp in tensors[name]:
                assert torch.equal(logprobs_of(m2, toks), lp), f"{name}: legacy config differs"
            # The scaling matters on every case: without it the log-probs move.
            if legacy["rope_scaling"] is not None:
                cfg["rope_scaling"] = None
                json.dump(cfg, open(os.path.join(t, "config.json"), "w"), indent=2)
                m3 = load(t)
                for toks, lp in tensors[name]:
                    delta = float((logprobs_of(m3, toks) - lp).abs().max())
                    assert delta > 1e-2, f"{name}: rope scaling changes nothing on {len(toks)} tokens"
                    print(f"{name}: {len(toks)} tokens, max |dlogprob| without the scaling {delta:.3f}")
        tk = transformers.AutoTokenizer.from_pretrained(d)
        assert len(tk) == vocab and tk.eos_token == "<|im_end|>" and tk.pad_token == "<|endoftext|>" and tk.bos_token is None
        chat = tk.apply_chat_template([{"role": "user", "content": "Hi"}], tokenize=False, add_generation_prompt=True)
        assert chat == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", repr(chat)
        ids = tk("The quick brown fox.")["input_ids"]
        assert tk.decode(ids) == "The quick brown fox."
        size = dir_size(d)
        assert size < 1_000_000, (name, size)
        print(f"{name}: {size} bytes ({', '.join(files)})")
    for name, entry in result["models"].items():
        for case, (_, lp) in zip(entry["cases"], tensors[name]):
            assert torch.equal(torch.tensor(case["logprobs"], dtype=torch.float32), lp)

    # Each logprob row on one line.
    rows = {}

    def placeholder(row):
        key = f"@@ROW{len(rows)}@@"
        rows[key] = json.dumps(row, separators=(",", ":"))
        return key

    shaped = json.loads(json.dumps(result))
    for entry in shaped["models"].values():
        for case in entry["cases"]:
            case["tokens"] = placeholder(case["tokens"])
            case["logprobs"] = [placeholder(r) for r in case["logprobs"]]
    text = json.dumps(shaped, indent=1)
    text = re.sub(r'"(@@ROW[0-9]+@@)"', lambda m: rows[m.group(1)], text)
    assert json.loads(text) == result
    path = os.path.join(OUT, "logprobs.json")
    with open(path, "w") as f:
        f.write(text + "\n")
    print(f"logprobs.json: {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    sys.exit(main())
