"""What a run hands users: output formats, the fixes applied, the rule reference pages.

A format is one module here whose ``render(findings, run) -> str`` (``base.Format``) returns
the text to print, and one row in ``FORMATS``; ``--output-format`` offers the rows.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from tflint_graph.output.format import Format, RunInfo, SourceLines


class _Formats(Mapping[str, Format]):
    """Each format's ``render`` by name; its module is imported when the format is asked
    for, so a run that prints text never imports the JSON, SARIF or GitHub writers."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self._names = names

    def __getitem__(self, name: str) -> Format:
        if name not in self._names:
            raise KeyError(name)
        render: Format = importlib.import_module(f"{__name__}.{name}").render
        return render

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


# By name, in the order ``--help`` lists them.
FORMATS: Mapping[str, Format] = _Formats(("text", "json", "sarif", "github"))

__all__ = ["FORMATS", "Format", "RunInfo", "SourceLines"]
