#!/usr/bin/env python3
"""Prompt token counts of a run against the Hugging Face tokenizer of its model.

For every answered request in RUN_DIR/requests/*.parquet, renders its messages with
transformers' `apply_chat_template(messages, add_generation_prompt=True,
enable_thinking=False, tokenize=False)` from the model directory's tokenizer, appends the
assistant prefix, encodes without added special tokens (the rendered template carries them),
and compares the count with the request's recorded `prompt_tokens`. Prints one JSON object:
requests checked, how many differ, and the first differences.

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
    checked, differ, examples = 0, 0, []
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
            if n != r["prompt_tokens"]:
                differ += 1
                if len(examples) < 5:
                    examples.append({"request_id": r["request_id"], "ours": r["prompt_tokens"], "hf": n})
    print(json.dumps({"run": a.run, "model": a.model, "transformers": transformers.__version__,
                      "checked": checked, "differ": differ, "examples": examples}))


if __name__ == "__main__":
    main()
