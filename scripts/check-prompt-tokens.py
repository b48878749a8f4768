#!/usr/bin/env python3
"""Prompt texts and token counts of a run against the Hugging Face tokenizer of its model.

For every answered request in RUN_DIR/requests/*.parquet, renders its messages with
transformers' `apply_chat_template(messages, add_generation_prompt=True,
enable_thinking=False, tokenize=False)` from the model directory's tokenizer, appends the
assistant prefix, encodes without added special tokens (the rendered template carries them),
and compares the count with the request's recorded `prompt_tokens`; where the run has a
`prompts/` dataset, also the rendered text with the run's recorded prompt (byte for byte) and
its `n_tokens`. Prints one JSON object: requests checked, how many differ, and the first
differences.

A GGUF model's tokenizer and chat template: `choice2seq model export-tokenizer MODEL.gguf DIR`
writes the directory this script reads.

    /tmp/hfx/bin/pip install transformers pyarrow
    /tmp/hfx/bin/python scripts/check-prompt-tokens.py --run RUN_DIR --model HF_DIR
"""

import argparse
import glob
import json
import os

import pyarrow.parquet as pq
import transformers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--model", required=True)
    a = ap.parse_args()
    tok = transformers.AutoTokenizer.from_pretrained(a.model)
    parts = sorted(glob.glob(os.path.join(a.run, "requests", "*.parquet")))
    prompts = {}
    for part in sorted(glob.glob(os.path.join(a.run, "prompts", "*.parquet"))):
        for p in pq.read_table(part).to_pylist():
            prompts[p["prompt_sha256"]] = p
    checked, differ, examples = 0, 0, []
    texts_checked, texts_differ = 0, 0
    for part in parts:
        for r in pq.read_table(part).to_pylist():
            if r.get("error"):
                continue
            messages = []
            if r.get("system") is not None:
                messages.append({"role": "system", "content": r["system"]})
            messages.append({"role": "user", "content": r["user"]})
            text = tok.apply_chat_template(
                messages, add_generation_prompt=True, enable_thinking=False, tokenize=False
            )
            text += r.get("assistant_prefix") or ""
            n = len(tok(text, add_special_tokens=False)["input_ids"])
            checked += 1
            recorded = prompts.get(r["prompt_sha256"])
            if recorded is not None and recorded.get("prompt") is not None:
                texts_checked += 1
                if recorded["prompt"] != text or recorded["n_tokens"] != n:
                    texts_differ += 1
                    if len(examples) < 5:
                        examples.append({"request_id": r["request_id"], "text_equal": recorded["prompt"] == text,
                                         "n_tokens": recorded["n_tokens"], "hf": n})
            if n != r["prompt_tokens"]:
                differ += 1
                if len(examples) < 5:
                    examples.append({"request_id": r["request_id"], "ours": r["prompt_tokens"], "hf": n})
    print(json.dumps({"run": a.run, "model": a.model, "transformers": transformers.__version__,
                      "checked": checked, "differ": differ,
                      "prompt_texts_checked": texts_checked, "prompt_texts_differ": texts_differ,
                      "examples": examples}))


if __name__ == "__main__":
    main()
