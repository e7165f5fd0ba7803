"""Rewriting a linted file safely, for ``--fix``, ``--diff`` and ``--add-noqa``: read it
back as the linter decoded it, and write a new text only in the same encoding, BOM and
bytes elsewhere."""

from __future__ import annotations

import codecs
import difflib
import io
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class FileFix:
    """The planned rewrite of one file: texts are decoded, bytes are what goes to disk."""

    path: str
    original: str
    fixed: str
    data: bytes
    new_data: bytes
    codes: tuple[str, ...]  # the code of each finding fixed
    # In a notebook: (cell, old text, new text) of each changed cell.
    cells: tuple[tuple[int, str, str], ...] = ()

    @property
    def count(self) -> int:
        """How many findings the rewrite fixes."""
        return len(self.codes)

    def diff(self) -> str:
        """A unified diff with ``a/`` and ``b/`` paths, as git and ruff print them; one per
        changed cell of a notebook (``a/nb.ipynb:cell 3``)."""
        name = self.path.replace("\\", "/").lstrip("/")
        parts = [(f":cell {n}", old, new) for n, old, new in self.cells] or [
            ("", self.original, self.fixed)
        ]
        return "".join(
            "".join(
                difflib.unified_diff(
                    _diff_lines(old), _diff_lines(new), f"a/{name}{cell}", f"b/{name}{cell}"
                )
            )
            for cell, old, new in parts
        )

    def write(self) -> None:
        Path(self.path).write_bytes(self.new_data)


def _diff_lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def read_back(path: str) -> tuple[str, Callable[[str], bytes], bytes] | None:
    """(the decoded text of ``path``, how to encode a new text as it was, its bytes); None
    when it cannot be read or would not be written back byte for byte."""
    try:
        data = Path(path).read_bytes()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        bom = data.startswith(codecs.BOM_UTF8)
        if encoding == "utf-8-sig":
            encoding = "utf-8"
        text = data.decode(encoding).removeprefix("\ufeff")

        def encode(source: str) -> bytes:
            return ("\ufeff" + source if bom else source).encode(encoding)

        if encode(text) != data:  # would not round-trip: never risk rewriting it
            return None
    except (OSError, SyntaxError, UnicodeError, LookupError):
        return None
    return text, encode, data
