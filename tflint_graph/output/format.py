"""What every output format shares: its signature, what it is handed, and the helpers more
than one format needs (source lines, counts per code, paths relative to the root,
fingerprints)."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tflint_graph.core.finding import Finding
from tflint_graph.core.noqa import source_lines
from tflint_graph.source.reading import decode, is_notebook

if TYPE_CHECKING:
    from tflint_graph.source.notebook import Notebook


class SourceLines:
    """The physical lines of the linted files, decoded as the linter decoded them, each file
    read once.  Formats ask it instead of reading files themselves, so a caller decides where
    source comes from."""

    def __init__(self, texts: Mapping[str, str] | None = None) -> None:
        # ``texts``: sources that are no file on disk (standard input), by path; a notebook's
        # is its JSON text.
        self._texts = dict(texts or {})
        self._files: dict[str, list[str]] = {
            path: source_lines(text) for path, text in self._texts.items() if not is_notebook(path)
        }
        self._notebooks: dict[str, Notebook | None] = {}

    def line(self, path: str, number: int, cell: int | None = None) -> str | None:
        """Line ``number`` (1-based) of ``path`` (of its cell ``cell``, in a notebook); None
        when the file has no such line or cannot be read or decoded."""
        if cell is not None:
            notebook = self.notebook(path)
            return notebook.cell_line(cell, number) if notebook is not None else None
        lines = self._files.get(path)
        if lines is None:
            lines = self._files[path] = _read_lines(path)
        return lines[number - 1] if 0 < number <= len(lines) else None

    def notebook(self, path: str) -> Notebook | None:
        """The notebook ``path`` as the linter read it; None when it is none."""
        if path not in self._notebooks:
            self._notebooks[path] = (
                _read_notebook(path, self._texts.get(path)) if is_notebook(path) else None
            )
        return self._notebooks[path]

    def file_position(self, finding: Finding, end: bool = False) -> tuple[int, int] | None:
        """Where a notebook finding's start (or end) is in the file's own text, which is
        what annotations on the file point at; None outside notebooks."""
        notebook = self.notebook(finding.path) if finding.cell is not None else None
        if notebook is None or finding.cell is None:
            return None
        line, column = (
            (finding.end_line, finding.end_column) if end else (finding.line, finding.column)
        )
        if line is None or column is None:
            return None
        return notebook.file_position(finding.cell, line, column)


def cell_of(finding: Finding) -> tuple[int, ...]:
    """The extra argument of ``SourceLines.line`` for ``finding``: its cell, if it has one
    (a ``SourceLines`` of a caller that knows no notebooks is asked as before)."""
    return () if finding.cell is None else (finding.cell,)


def _read_notebook(path: str, text: str | None = None) -> Notebook | None:
    # Only for notebooks: a run over Python files starts without the notebook reader.
    from tflint_graph.source.notebook import Notebook, parse_notebook, read_notebook

    if text is not None:
        found = parse_notebook(text, path)
        return found if isinstance(found, Notebook) else None
    try:
        found = read_notebook(Path(path).read_bytes(), path)
    except OSError:
        return None
    return found if isinstance(found, Notebook) else None


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
    # text: [*] on the findings --fix would fix with the flags given and the summary's counts
    # of fixes, both read from each Finding.fix_safety (the command line's text output; off
    # with --statistics).
    show_fixable: bool = False
    unsafe_fixes: bool = False  # text: --unsafe-fixes was given (unsafe fixes apply too)
    show_fixes: bool = False  # text: list the fixes per file and code
    applied: Sequence[tuple[str, str, str]] | None = None  # (path, code, name) per fix made
    color: bool = False  # text: ANSI colours
    width: int | None = None  # text: wrap long messages at this width (a terminal's)
    dynamic: Mapping[str, Any] | None = None  # device and counts per status after --dynamic
    # json: the Keras the analysis assumed ("2"/"3") and why (``Config.keras_reason``).
    keras: tuple[str, str] | None = None
    # json: sub-projects analysed with another Keras (``Config.keras_folders``).
    keras_folders: Sequence[tuple[str, str, str]] = ()


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
