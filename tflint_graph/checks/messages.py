"""How rules quote code in a message: one helper, so every message shortens alike."""

from __future__ import annotations


def shorten(text: str, limit: int = 40, *, one_line: bool = True) -> str:
    """``text`` cut to ``limit`` characters with ``...``; with ``one_line`` its whitespace
    (newlines included) is first collapsed to single spaces."""
    if one_line:
        text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
