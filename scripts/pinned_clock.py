"""The fixed clock of the template fixtures: transformers' `strftime_now` reports FIXED_NOW.

Shared by make-template-fixtures.py and make-jinja-probes.py (imported from this folder).
"""

import datetime as _dt
import sys

FIXED_NOW = _dt.datetime(2026, 7, 26, 10, 30, 0)


class _FixedDatetime(_dt.datetime):
    """A datetime whose now() is FIXED_NOW; everything else is the real class."""

    @classmethod
    def now(cls, tz=None):
        if tz is not None:
            return FIXED_NOW.replace(tzinfo=tz)
        return FIXED_NOW


def pin_clock(ctu):
    """Make `ctu` (transformers.utils.chat_template_utils) report FIXED_NOW; returns its
    `_compile_jinja_template`, its cache cleared."""
    # chat_template_utils does `from datetime import datetime` and strftime_now calls
    # `datetime.now()`, which resolves the module global at call time.
    if not hasattr(ctu, "datetime"):
        sys.exit("transformers.utils.chat_template_utils has no module-level `datetime` to patch")
    ctu.datetime = _FixedDatetime
    # The compiler is lru_cached; clear it so no template compiled before the patch survives.
    compile_fn = getattr(ctu, "_compile_jinja_template", None)
    if compile_fn is None:
        sys.exit("transformers.utils.chat_template_utils has no _compile_jinja_template")
    if hasattr(compile_fn, "cache_clear"):
        compile_fn.cache_clear()
    return compile_fn
