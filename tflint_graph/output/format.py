"""What every output format shares: its signature, what it is handed, and the helpers more
than one format needs (source lines, counts per code, paths relative to the root,
fingerprints)."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tflint_graph.core.finding import Finding
from tflint_graph.core.noqa import source_lines
from tflint_graph.source.reading import decode


class SourceLines:
    """The physical lines of the linted files, decoded as the linter decoded them, each file
    read once.  Formats ask it instead of reading files themselves, so a caller decides where
    source comes from."""

    def __init__(self, texts: Mapping[str, str] | None = None) -> None:
        # ``texts``: sources that are no file on disk (standard input), by path.
        self._files: dict[str, list[str]] = {
            path: source_lines(text) for path, text in (texts or {}).items()
        }

    def line(self, path: str, number: int) -> str | None:
        """Line ``number`` (1-based) of ``path``; None when the file has no such line or
        cannot be read or decoded."""
        lines = self._files.get(path)
        if lines is None:
            lines = self._files[path] = _read_lines(path)
        return lines[number - 1] if 0 < number <= len(lines) else None


def _read_lines(path: str) -> list[str]:
    try:
        decoded = decode(Path(path).read_bytes(), path)
    except OSError:
        return []
    return source_lines(decoded) if isinstance(decoded, str) else []


@dataclass(frozen=True)
class RunInfo:
    """What a format is handed besides the findings; each format reads the fields it needs."""

    lines: SourceLines
    # Paths are shown relative to it (SARIF, GitHub); in CI, the repository checkout.
    root: Path = field(default_factory=Path.cwd)
    show_source: bool = False  # text: the offending line under each finding
    statistics: bool = False  # text: a count per code instead of the findings
    summary: bool = False  # text: a closing "Found N findings." line
    fixed: int | None = None  # text, with the summary: how many findings --fix fixed
    # text: the findings a fix exists for, with its safety ([*] and the summary's counts);
    # None when not worked out.
    fixable: Mapping[Finding, FixSafety] | None = None
    unsafe_fixes: bool = False  # text: --unsafe-fixes was given (unsafe fixes apply too)
    show_fixes: bool = False  # text: list the fixes per file and code
    applied: Sequence[tuple[str, str, str]] | None = None  # (path, code, name) per fix made
    color: bool = False  # text: ANSI colours
    width: int | None = None  # text: wrap long messages at this width (a terminal's)
    dynamic: Mapping[str, Any] | None = None  # device and counts per status after --dynamic


# As ``checks.fixing.FixSafety``, which is not imported here: it loads libcst, and a run
# answered from the cache never needs it.
FixSafety = Literal["safe", "unsafe"]

# One output format: the whole text to print (empty: print nothing).
Format = Callable[[Sequence[Finding], RunInfo], str]


def statistics(findings: Sequence[Finding]) -> list[tuple[str, str, int]]:
    """(code, name, count) per code present, in code order."""
    counts = Counter((f.code, f.name) for f in findings)
    return [(code, name, n) for (code, name), n in sorted(counts.items())]


def relative_to_root(path: str, root: Path) -> str | None:
    """``path`` relative to ``root`` (an already resolved directory) with forward slashes;
    None when it lies outside."""
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return None


class Fingerprints:
    """Ids that let a code-scanning service follow a finding across commits: a hash of path,
    code and the offending line's text (whitespace-trimmed), not its line number, so an alert
    survives edits elsewhere in the file.  Identical lines in one file are told apart by
    their occurrence, counted top to bottom, so ask in the findings' order."""

    def __init__(self) -> None:
        self._seen: Counter[tuple[str, str, str]] = Counter()

    def __call__(self, path_uri: str, code: str, text: str) -> str:
        key = (path_uri, code, text.strip())
        occurrence = self._seen[key]
        self._seen[key] += 1
        recipe = "\0".join((*key, str(occurrence)))
        return hashlib.sha256(recipe.encode("utf-8")).hexdigest()[:32]
