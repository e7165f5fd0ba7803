"""The rule reference: one Markdown page per code, in ``rules/`` (shipped in the wheel)."""

from __future__ import annotations

import re
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]  # tflint_graph/


def pages_dir() -> Path:
    """``tflint_graph/_rule_pages`` in an installed wheel, ``rules/`` in a source checkout."""
    bundled = _PACKAGE / "_rule_pages"
    if bundled.is_dir():
        return bundled
    return _PACKAGE.parent / "rules"


def page_path(code: str) -> Path | None:
    directory = pages_dir()
    candidate = directory / f"{code.upper()}.md"
    return candidate if candidate.is_file() else None


def read_page(code: str) -> str | None:
    path = page_path(code)
    return path.read_text(encoding="utf-8") if path is not None else None


_FENCE = re.compile(r"```python\n(.*?)```", re.DOTALL)


def section(page: str, heading: str) -> str:
    """The text under ``## heading``, up to the next ``## `` (empty when absent)."""
    match = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", page, re.M | re.S)
    return match.group(1).strip() if match else ""


def section_code(page: str, heading: str) -> list[str]:
    """The ```python blocks under ``## heading``."""
    return _FENCE.findall(section(page, heading))
