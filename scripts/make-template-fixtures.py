#!/usr/bin/env python3
"""Regenerate model/tests/fixtures/chat_templates/expected.json.

Every case renders one official chat template (a .jinja file listed in sources.json) for one
message shape with Hugging Face transformers' own renderer,
`transformers.utils.chat_template_utils.render_jinja_template`, passing what
`tokenizer.apply_chat_template(messages, add_generation_prompt=True, enable_thinking=False)`
passes: the special tokens (bos_token / eos_token from sources.json, left out when null) and
enable_thinking=False. `strftime_now` is pinned to 2026-07-26 10:30:00 (local, naive) by
replacing the `datetime` that the module calls.

Usage (no torch needed):
    python3 -m venv /tmp/tfx && /tmp/tfx/bin/pip install transformers jinja2
    /tmp/tfx/bin/python scripts/make-template-fixtures.py [--check]

--check renders everything and compares it with the expected.json on disk instead of writing.
"""

import argparse
import hashlib
import inspect
import json
import platform
import sys
from pathlib import Path

import jinja2
import transformers
import transformers.utils.chat_template_utils as ctu
from pinned_clock import FIXED_NOW, pin_clock

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "model" / "tests" / "fixtures" / "chat_templates"
USER_UNICODE = (
    " \n  café – naïve “quotes” 日本語\t(tab)\n"
    'He said "hello" and wrote C:\\temp\\new and a \\n that is not a newline.\n'
    "\n"
    "\n"
    "After two blank lines: Ünïcödé ✓ done.  \n "
)

USER_JSON = (
    "{\n"
    '  "state": "ab",\n'
    '  "question": "Which character comes next?",\n'
    '  "options": {"A": "x", "B": "y"},\n'
    '  "response_format": "Answer with one option code."\n'
    "}"
)

USER_THINK_TAGS = (
    "<tool_response>The draft said <think>maybe c</think> and then </think> again; "
    "ignore <think> blocks.\nWhich character comes next?</tool_response>"
)

# The benchmark's real requests (protocol/src/prompts.rs) are compact serde_json text whose
# "state" is itself canonical JSON text, so the content is full of escaped quotes.
USER_JSON_COMPACT = json.dumps(
    {
        "state": json.dumps({"prefix": "ab", "target_length": 3}, separators=(",", ":")),
        "question": "Which character comes next?",
        "choices": {"A": "x", "B": "y"},
        "response_format": "Select one choice and output only its code.",
    },
    separators=(",", ":"),
    ensure_ascii=False,
)

SHAPES = [
    ("user", [{"role": "user", "content": "What is 2 + 2?"}]),
    (
        "system_user",
        [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "What is 2 + 2?"},
        ],
    ),
    ("user_unicode", [{"role": "user", "content": USER_UNICODE}]),
    (
        "system_user_json",
        [
            {"role": "system", "content": "You are a careful assistant."},
            {"role": "user", "content": USER_JSON},
        ],
    ),
    ("user_think_tags", [{"role": "user", "content": USER_THINK_TAGS}]),
    ("user_json_compact", [{"role": "user", "content": USER_JSON_COMPACT}]),
]


def render(template, messages, kwargs):
    rendered, _ = ctu.render_jinja_template(
        conversations=[messages],
        chat_template=template,
        add_generation_prompt=True,
        **kwargs,
    )
    return rendered[0]


def build():
    pin_clock(ctu)
    sig = inspect.signature(ctu.render_jinja_template)
    for name in ("conversations", "chat_template", "add_generation_prompt"):
        if name not in sig.parameters:
            sys.exit(f"render_jinja_template{sig} has no parameter {name!r}")

    sources = json.loads((FIXTURES / "sources.json").read_text(encoding="utf-8"))
    cases = []
    for fam in sources["families"]:
        raw = (FIXTURES / fam["template"]).read_bytes()
        digest = hashlib.sha256(raw).hexdigest()
        if digest != fam["sha256"]:
            sys.exit(f"{fam['template']}: sha256 {digest} does not match sources.json {fam['sha256']}")
        template = raw.decode("utf-8")
        kwargs = {}
        for key in ("bos_token", "eos_token"):
            if fam.get(key) is not None:
                kwargs[key] = fam[key]
        kwargs["enable_thinking"] = False
        for shape, messages in SHAPES:
            case = {
                "family": fam["family"],
                "template": fam["template"],
                "bos_token": fam.get("bos_token"),
                "eos_token": fam.get("eos_token"),
                "shape": shape,
                "messages": messages,
                "add_generation_prompt": True,
                "enable_thinking": False,
                "rendered": None,
                "error": None,
            }
            try:
                case["rendered"] = render(template, messages, kwargs)
            except Exception as exc:  # record the exception, keep the case
                case["error"] = str(exc)
            cases.append(case)

    return {
        "generator": "scripts/make-template-fixtures.py",
        "renderer": f"transformers.utils.chat_template_utils.render_jinja_template{sig}",
        "transformers_version": transformers.__version__,
        "jinja2_version": jinja2.__version__,
        "python_version": platform.python_version(),
        "fixed_now": FIXED_NOW.isoformat(),
        "template_kwargs": "bos_token/eos_token as in sources.json (omitted when null), enable_thinking=false",
        "cases": cases,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="compare with expected.json instead of writing it")
    args = ap.parse_args()
    out = build()
    path = FIXTURES / "expected.json"
    text = json.dumps(out, indent=2, ensure_ascii=False) + "\n"
    if args.check:
        old = json.loads(path.read_text(encoding="utf-8"))
        if old["cases"] != out["cases"]:
            sys.exit("expected.json is out of date")
        print(f"expected.json is up to date ({len(out['cases'])} cases)")
        return
    path.write_text(text, encoding="utf-8")
    errors = sum(1 for c in out["cases"] if c["error"] is not None)
    print(f"wrote {path.relative_to(ROOT)}: {len(out['cases'])} cases, {errors} errors")


if __name__ == "__main__":
    main()
