#!/usr/bin/env python3
"""Regenerate model/tests/fixtures/jinja_probes/expected.json.

A differential corpus for the chat-template engine: every probe in
model/tests/fixtures/jinja_probes/probes.json (hand-written; a list of
{"id", "template", "vars"?}) is compiled with Hugging Face transformers' own compiler,
`transformers.utils.chat_template_utils._compile_jinja_template` (so the Jinja2 environment is
exactly theirs: an ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks, the
AssistantTracker and loopcontrols extensions, their `tojson` filter and their `raise_exception`,
`strftime_now`, `dict` and `namespace` globals) and rendered with `compiled.render(**vars)`.
`strftime_now` is pinned to 2026-07-26 10:30:00 (local, naive) by replacing the `datetime` that
the module calls, as scripts/make-template-fixtures.py does.

Each case records either `rendered` (the output string) or `error` ({"type": the exception's
class name, "message": str(exception)}); any Exception counts, including a TemplateSyntaxError
raised while compiling. The Rust side must render the same string, or refuse where Jinja2 raised
(the messages differ between engines and are for reading only).

Usage (no torch needed):
    python3 -m venv /tmp/tfx && /tmp/tfx/bin/pip install transformers jinja2
    /tmp/tfx/bin/python scripts/make-jinja-probes.py [--check]

--check renders everything and compares it with the expected.json on disk instead of writing.
"""

import argparse
import json
import platform
import sys
from importlib.metadata import version
from pathlib import Path

import jinja2
import transformers
import transformers.utils.chat_template_utils as ctu
from pinned_clock import FIXED_NOW, pin_clock

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "model" / "tests" / "fixtures" / "jinja_probes"
def load_probes():
    probes = json.loads((FIXTURES / "probes.json").read_text(encoding="utf-8"))
    seen = set()
    for probe in probes:
        unknown = set(probe) - {"id", "template", "vars"}
        if unknown or not isinstance(probe.get("id"), str) or not isinstance(probe.get("template"), str):
            sys.exit(f"malformed probe {probe!r}")
        if probe["id"] in seen:
            sys.exit(f"duplicate probe id {probe['id']!r}")
        seen.add(probe["id"])
        if not isinstance(probe.get("vars", {}), dict):
            sys.exit(f"{probe['id']}: vars must be an object")
    return probes


def tag_big_ints(value):
    """`value` with every integer outside 64 bits written as {"$bigint": "digits"}: JSON readers
    without arbitrary precision (serde_json's default) would read it as a float."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and not -(2**63) <= value < 2**64:
        return {"$bigint": str(value)}
    if isinstance(value, list):
        return [tag_big_ints(v) for v in value]
    if isinstance(value, dict):
        return {k: tag_big_ints(v) for k, v in value.items()}
    return value


def run_probe(compile_fn, probe):
    variables = probe.get("vars", {})
    case = {
        "id": probe["id"],
        "template": probe["template"],
        "vars": tag_big_ints(variables),
        "rendered": None,
        "error": None,
    }
    try:
        compiled = compile_fn(probe["template"])
        case["rendered"] = compiled.render(**variables)
    except Exception as exc:  # record the exception, keep the case
        case["error"] = {"type": type(exc).__name__, "message": str(exc)}
    return case


def build():
    compile_fn = pin_clock(ctu)
    cases = [run_probe(compile_fn, probe) for probe in load_probes()]
    return {
        "generator": "scripts/make-jinja-probes.py",
        "environment": "transformers.utils.chat_template_utils._compile_jinja_template(template).render(**vars)",
        "transformers_version": transformers.__version__,
        "jinja2_version": jinja2.__version__,
        "markupsafe_version": version("markupsafe"),
        "python_version": platform.python_version(),
        "fixed_now": FIXED_NOW.isoformat(),
        "cases": cases,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="compare with expected.json instead of writing it")
    args = ap.parse_args()
    out = build()
    path = FIXTURES / "expected.json"
    errors = sum(1 for c in out["cases"] if c["error"] is not None)
    if args.check:
        old = json.loads(path.read_text(encoding="utf-8"))
        if old["cases"] != out["cases"]:
            old_by_id = {c["id"]: c for c in old["cases"]}
            stale = [c["id"] for c in out["cases"] if old_by_id.get(c["id"]) != c]
            gone = sorted(set(old_by_id) - {c["id"] for c in out["cases"]})
            sys.exit(f"expected.json is out of date: {len(stale)} changed or new, {len(gone)} removed "
                     f"(first: {(stale + gone)[:5]})")
        print(f"expected.json is up to date ({len(out['cases'])} cases, {errors} errors)")
        return
    path.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}: {len(out['cases'])} cases, {errors} errors")


if __name__ == "__main__":
    main()
