"""The one result type every part of tflint-graph produces and consumes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, Literal

# How far an automatic fix can be trusted, as ruff has it: "safe" keeps what the code does
# (``--fix`` applies it), "unsafe" may change it (applied only when asked for unsafe fixes).
FixSafety = Literal["safe", "unsafe"]


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, slots=True)
class DynamicStatus:
    """What ``--dynamic`` made of a finding (SPEC §4): ``status`` is ``confirmed``,
    ``not-reproduced`` or ``unverified``; ``evidence`` says what happened, or why not."""

    status: str
    evidence: str
    # The device the calls ran on and the inputs they used (``float32[2,3]``), when known.
    device: str | None = None
    inputs: str | None = None

    def __str__(self) -> str:
        return f"[dynamic: {self.status}: {self.evidence}]"


@dataclass(frozen=True, slots=True)
class Finding:
    """One reported problem.

    ``line`` is 1-based; ``column`` is 1-based as in flake8's and ruff's text output.
    ``context`` says why the code is traced ("decorated with @tf.function", "called from
    step()"); ``chain`` is the call path from the traced entry point to the function that
    holds the finding; ``fix`` is a human-readable suggested fix where one exists;
    ``fix_safety`` is set when the rule can rewrite this very finding automatically, and says
    how safe that rewrite is (None: no automatic fix).  In a Jupyter notebook ``cell`` is the
    cell (1-based, every cell counted) and the lines and columns are the cell's own; it is
    None in a Python file.
    """

    path: str
    line: int
    column: int
    code: str
    name: str
    message: str
    severity: Severity
    context: str | None = None
    chain: tuple[str, ...] = field(default=())
    fix: str | None = None
    end_line: int | None = None
    end_column: int | None = None
    fix_safety: FixSafety | None = None
    dynamic: DynamicStatus | None = None
    cell: int | None = None

    @property
    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.cell or 0, self.line, self.column, self.code)

    @property
    def location(self) -> str:
        """``path:line:col``, or ``path:cell N:line:col`` in a notebook (as ruff prints it)."""
        cell = f":cell {self.cell}" if self.cell is not None else ""
        return f"{self.path}{cell}:{self.line}:{self.column}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = self.severity.value
        data["chain"] = list(self.chain)
        return data


# The codes the tool itself emits about a file it cannot analyse (they have pages in
# ``rules/`` but no rule class): code -> (name, one-line summary).
TOOL_CODES: dict[str, tuple[str, str]] = {
    "TFG001": ("syntax-error", "The file could not be parsed."),
    "TFG002": ("unreadable-file", "The file could not be read or decoded."),
}


def tool_finding(path: str, code: str, message: str, line: int = 1, column: int = 1) -> Finding:
    """A TFG001 (cannot parse) or TFG002 (cannot read or decode) finding."""
    return Finding(path, line, column, code, TOOL_CODES[code][0], message, Severity.ERROR)
