"""Create a random-weight Hugging Face model of a given shape (on the GPU host, with its own
PyTorch and transformers), with a carried tokenizer.json / tokenizer_config.json.

Shapes: `smollm2-135m` (LlamaForCausalLM, SmolLM2-135M's configuration) and `qwen3-8b`
(Qwen3ForCausalLM, Qwen3-8B's configuration; with `--chat-template` Qwen3's official template).
transformers 5 writes `rope_parameters` in config.json (no top-level `rope_theta`): the
binary reads both layouts (mistral.rs is given transformers 4's). Weights are seeded random values in bf16; the
final norm is scaled so that the next-token distributions are far from uniform (a uniform
distribution would agree between any two implementations, right or wrong).

    python3 make_model.py --shape qwen3-8b --tokenizer DIR --out DIR [--device cuda]
"""

import argparse
import json
import os
import shutil
import time

import torch
import transformers

SHAPES = {
    "smollm2-135m": dict(
        cls="LlamaConfig",
        hidden_size=576,
        intermediate_size=1536,
        num_hidden_layers=30,
        num_attention_heads=9,
        num_key_value_heads=3,
        max_position_embeddings=8192,
        rms_norm_eps=1e-5,
        rope_theta=100000.0,
        tie_word_embeddings=True,
        vocab_size=49152,
    ),
    "qwen3-8b": dict(
        cls="Qwen3Config",
        hidden_size=4096,
        intermediate_size=12288,
        num_hidden_layers=36,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        max_position_embeddings=40960,
        rms_norm_eps=1e-6,
        rope_theta=1000000.0,
        tie_word_embeddings=False,
        vocab_size=151936,
    ),
    # Small shapes for a dry run on a CPU.
    "tiny-llama": dict(
        cls="LlamaConfig",
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        rms_norm_eps=1e-5,
        rope_theta=100000.0,
        tie_word_embeddings=True,
        vocab_size=49152,
    ),
    "tiny-qwen3": dict(
        cls="Qwen3Config",
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=4096,
        rms_norm_eps=1e-6,
        rope_theta=1000000.0,
        tie_word_embeddings=False,
        vocab_size=151936,
    ),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", required=True, choices=sorted(SHAPES))
    ap.add_argument("--tokenizer", required=True, help="directory with tokenizer.json and tokenizer_config.json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--norm-scale", type=float, default=8.0)
    ap.add_argument("--chat-template", help="a .jinja file: the chat template written into tokenizer_config.json (e.g. Qwen3's official one)")
    a = ap.parse_args()
    spec = dict(SHAPES[a.shape])
    cls = getattr(transformers, spec.pop("cls"))
    dtype = getattr(torch, a.dtype)
    config = cls(**spec)
    torch.manual_seed(a.seed)
    t = time.time()
    torch.set_default_dtype(dtype)
    with torch.device(a.device):
        model = transformers.AutoModelForCausalLM.from_config(config)
    torch.set_default_dtype(torch.float32)
    model = model.to(dtype)
    with torch.no_grad():
        model.model.norm.weight.fill_(a.norm_scale)
    model.eval()
    os.makedirs(a.out, exist_ok=True)
    model.save_pretrained(a.out, safe_serialization=True, max_shard_size="20GB")
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(a.tokenizer, f), os.path.join(a.out, f))
    if a.chat_template:
        path = os.path.join(a.out, "tokenizer_config.json")
        cfg = json.load(open(path))
        cfg["chat_template"] = open(a.chat_template).read()
        json.dump(cfg, open(path, "w"), ensure_ascii=False, indent=2)
    n = sum(p.numel() for p in model.parameters())
    print(json.dumps({"shape": a.shape, "parameters": n, "dtype": a.dtype, "seconds": round(time.time() - t, 1), "out": a.out}))


if __name__ == "__main__":
    main()
