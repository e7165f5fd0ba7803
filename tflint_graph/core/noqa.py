"""``# noqa`` comments with flake8's semantics.

``# noqa`` alone silences every finding on its line; ``# noqa: TFG101,TFG103`` silences the
listed codes (and, as in flake8, anything they prefix: ``# noqa: TFG1`` silences TFG101).
As in flake8:

* the comment is searched for in the text of the line, so ``"# noqa"`` inside a string literal
  on the finding's line counts too;
* a line that is part of a multi-line token (a triple-quoted string) or of a
  backslash-continued line is one unit: a ``# noqa`` anywhere on it applies to all its lines;
* ``# noqa:TFG101`` and ``# noqa: TFG101`` name codes; anything else after ``# noqa`` (``# noqa
  : TFG101``, ``# noqa - reason``) makes it a blanket ``# noqa``;
* ``#noqa`` without the space and any letter case (``# NOQA``) are accepted.
"""

from __future__ import annotations

import io
import re
import threading
import tokenize
from collections.abc import Sequence

# flake8's NOQA_INLINE_REGEX, with ``#\s*`` as older flake8 and ruff accept.
_NOQA = re.compile(
    r"#\s*noqa"
    r"(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"[,\s]+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def source_lines(source: str) -> list[str]:
    """The physical lines of ``source`` as Python (and libcst) count them.

    Unlike ``str.splitlines()`` this does not break at form feeds or other Unicode line
    separators, so index ``n - 1`` is the line a finding on line ``n`` points at.
    """
    lines = _LINE_BREAK.split(source)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def noqa_codes(line: str) -> frozenset[str] | None:
    """None: no noqa. Empty set: blanket noqa. Otherwise the listed codes (upper-case)."""
    match = _NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return frozenset()
    return frozenset(c.upper() for c in _SPLIT.split(codes.strip()) if c)


def _joined_lines(lines: Sequence[str]) -> dict[int, str]:
    """flake8's noqa line mapping: every line of a multi-line token or backslash-continued
    line maps to the text of all of them.  Lines not in the mapping stand for themselves."""
    mapping: dict[int, str] = {}
    text = "\n".join(lines) + "\n"
    first, last = len(lines) + 2, -1
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            first = min(first, tok.start[0])
            last = max(last, tok.end[0])
            if tok.type in (tokenize.NL, tokenize.NEWLINE):
                if last > first:
                    joined = "\n".join(lines[first - 1 : last])
                    mapping.update(dict.fromkeys(range(first, last + 1), joined))
                first, last = len(lines) + 2, -1
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass  # unparsable source (TFG001): physical lines only
    return mapping


_cache = threading.local()


def _mapping_for(lines: Sequence[str]) -> dict[int, str]:
    cached = getattr(_cache, "entry", None)
    if cached is not None and cached[0] is lines:
        mapping: dict[int, str] = cached[1]
        return mapping
    mapping = _joined_lines(lines) if any("noqa" in ln.lower() for ln in lines) else {}
    _cache.entry = (lines, mapping)
    return mapping


def is_suppressed(lines: Sequence[str], line: int, code: str) -> bool:
    """Whether a ``# noqa`` silences ``code`` reported on 1-based ``line`` of ``lines``."""
    if not 1 <= line <= len(lines):
        return False
    if "noqa" not in lines[line - 1].lower():
        text = _mapping_for(lines).get(line)
        if text is None:
            return False
    else:
        text = _mapping_for(lines).get(line, lines[line - 1])
    codes = noqa_codes(text)
    if codes is None:
        return False
    return not codes or code.upper().startswith(tuple(codes))
