"""``# noqa`` comments with flake8's semantics.

``# noqa`` alone silences every finding on its line; ``# noqa: TFG101,TFG103`` silences the
listed codes (and, as in flake8, anything they prefix).  The comment is matched on the
physical line the finding is reported on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Same shape flake8 accepts: optional colon, codes separated by commas and/or spaces.
_NOQA = re.compile(
    r"#\s*noqa"
    r"(?::[\s]?(?P<codes>[A-Z][0-9]+(?:[,\s]+[A-Z][0-9]+)*))?",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"[,\s]+")


def noqa_codes(line: str) -> frozenset[str] | None:
    """None: no noqa. Empty set: blanket noqa. Otherwise the listed codes (upper-case)."""
    match = _NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return frozenset()
    return frozenset(c.upper() for c in _SPLIT.split(codes.strip()) if c)


def is_suppressed(lines: Sequence[str], line: int, code: str) -> bool:
    if not 1 <= line <= len(lines):
        return False
    codes = noqa_codes(lines[line - 1])
    if codes is None:
        return False
    return not codes or any(code.startswith(c) for c in codes)
