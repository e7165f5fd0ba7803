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

A comment line ``# tflint-graph: noqa`` anywhere in the file silences the whole file, and
``# tflint-graph: noqa: TFG101,TFG103`` the listed codes (and what they prefix) in the whole
file, as ruff's ``# ruff: noqa``.  It must be a comment on a line of its own, so the text in a
string literal is never taken for it.
"""

from __future__ import annotations

import io
import re
import threading
import tokenize
from collections.abc import Iterable, Sequence

# flake8's NOQA_INLINE_REGEX, with ``#\s*`` as older flake8 and ruff accept.
_NOQA = re.compile(
    r"#\s*noqa"
    r"(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"[,\s]+")
# The file-level directive: a comment line of its own (checked with the tokenizer).
_FILE_NOQA = re.compile(
    r"^[ \t\f]*#[ \t]*tflint-graph:[ \t]*noqa"
    r"(?::[ \t]*(?P<codes>[A-Z]+[0-9]+(?:[ \t]*,[ \t]*[A-Z]+[0-9]+)*))?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
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


def _scan(lines: Sequence[str]) -> tuple[list[tuple[int, int]], dict[int, int], bool]:
    """One tokenizer pass over ``lines``: the multi-line logical units (a multi-line token or
    backslash-continued lines) as (first, last) line, the column of each line's comment, and
    whether the whole source tokenized (the units and comments found before an error are
    kept)."""
    units: list[tuple[int, int]] = []
    comments: dict[int, int] = {}
    text = "\n".join(lines) + "\n"
    first, last = len(lines) + 2, -1
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            if tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = tok.start[1]
            first = min(first, tok.start[0])
            last = max(last, tok.end[0])
            if tok.type in (tokenize.NL, tokenize.NEWLINE):
                if last > first:
                    units.append((first, last))
                first, last = len(lines) + 2, -1
    except (tokenize.TokenError, SyntaxError, ValueError):
        return units, comments, False
    return units, comments, True


def _joined_lines(lines: Sequence[str]) -> dict[int, str]:
    """flake8's noqa line mapping: every line of a multi-line token or backslash-continued
    line maps to the text of all of them.  Lines not in the mapping stand for themselves;
    unparsable source (TFG001) keeps the units found before the error."""
    mapping: dict[int, str] = {}
    for first, last in _scan(lines)[0]:
        mapping.update(dict.fromkeys(range(first, last + 1), "\n".join(lines[first - 1 : last])))
    return mapping


def file_noqa_codes(lines: Sequence[str]) -> frozenset[str] | None:
    """The file-level ``# tflint-graph: noqa`` of ``lines``: None when there is none, an
    empty set when it silences every code, otherwise the codes it names (several directives
    add up; a blanket one wins)."""
    candidates = [
        (number, match)
        for number, text in enumerate(lines, 1)
        if "tflint-graph" in text.lower() and (match := _FILE_NOQA.match(text)) is not None
    ]
    if not candidates:
        return None
    comments = _comment_lines(lines)
    codes: set[str] = set()
    found = False
    for number, match in candidates:
        if comments is not None and number not in comments:
            continue  # text inside a string literal, not a comment
        found = True
        listed = match.group("codes")
        if not listed:
            return frozenset()
        codes.update(c.upper() for c in _SPLIT.split(listed.strip()) if c)
    return frozenset(codes) if found else None


def _comment_lines(lines: Sequence[str]) -> set[int] | None:
    """The lines holding a comment token; None when the source does not tokenize (the
    directive is then taken at its word: a syntax error is reported, and can be silenced)."""
    _, comments, whole = _scan(lines)
    return set(comments) if whole else None


def comment_places(lines: Sequence[str]) -> tuple[dict[int, int], dict[int, int]] | None:
    """Where ``--add-noqa`` writes: (each line of a multi-line token or backslash-continued
    line -> the last line of that unit, where a comment can go and covers them all; other
    lines stand for themselves), (line -> the column its comment starts at).  None when
    ``lines`` do not tokenize."""
    units, comments, whole = _scan(lines)
    if not whole:
        return None
    places: dict[int, int] = {}
    for first, last in units:
        places.update(dict.fromkeys(range(first, last + 1), last))
    return places, comments


def with_noqa(line: str, comment_at: int | None, codes: Iterable[str]) -> str:
    """``line`` (without its line break) with a ``# noqa`` comment that also names
    ``codes``.  ``comment_at`` is the column where the line's comment starts (the
    tokenizer's word, so a ``#`` inside a string is never taken for one), None when it has
    none.  New codes join an existing ``# noqa: CODES`` list; a line with another comment
    gets ``  # noqa: CODES`` after it; a blanket ``# noqa`` is left as it is."""
    wanted = sorted(set(c.upper() for c in codes))
    if comment_at is not None:
        match = _NOQA.search(line, comment_at)
        if match is not None:
            present = match.group("codes")
            if not present:
                return line  # a blanket noqa silences everything already
            have = {c.upper() for c in _SPLIT.split(present.strip()) if c}
            missing = [c for c in wanted if not c.startswith(tuple(have))]
            if not missing:
                return line
            end = match.end("codes")
            return f"{line[:end]}, {', '.join(missing)}{line[end:]}"
    return f"{line.rstrip()}  # noqa: {', '.join(wanted)}"


class _Noqa:
    """What ``is_suppressed`` needs of one file, worked out on first use."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.file = file_noqa_codes(lines)
        self._mapping: dict[int, str] | None = None

    @property
    def mapping(self) -> dict[int, str]:
        if self._mapping is None:
            lines = self.lines
            self._mapping = (
                _joined_lines(lines) if any("noqa" in ln.lower() for ln in lines) else {}
            )
        return self._mapping


_cache = threading.local()


def _noqa_for(lines: Sequence[str]) -> _Noqa:
    cached: _Noqa | None = getattr(_cache, "entry", None)
    if cached is not None and cached.lines is lines:
        return cached
    entry = _cache.entry = _Noqa(lines)
    return entry


def is_suppressed(lines: Sequence[str], line: int, code: str) -> bool:
    """Whether a ``# noqa`` on 1-based ``line`` of ``lines``, or the file's
    ``# tflint-graph: noqa``, silences ``code`` reported there."""
    info = _noqa_for(lines)
    if info.file is not None and (not info.file or code.upper().startswith(tuple(info.file))):
        return True
    if not 1 <= line <= len(lines):
        return False
    if "noqa" not in lines[line - 1].lower():
        text = info.mapping.get(line)
        if text is None:
            return False
    else:
        text = info.mapping.get(line, lines[line - 1])
    codes = noqa_codes(text)
    if codes is None:
        return False
    return not codes or code.upper().startswith(tuple(codes))
