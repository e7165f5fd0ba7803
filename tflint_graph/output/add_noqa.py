"""``--add-noqa``: silence every reported finding where it is, with ``# noqa: CODE``.

Each finding's line gets a ``# noqa`` comment naming its code; a line with ``# noqa: OTHER``
gets the code added to that list.  The comment goes where ``core.noqa`` will find it: for a
line inside a multi-line string or a backslash-continued line, at the end of that unit's last
line.  In a Jupyter notebook the comments go into the module its code cells make, and only
the changed cells' ``source`` is written back.  A file is rewritten only when the new text
parses to the same syntax tree as the old one (only comments changed) and every finding is
then silenced; it keeps its encoding, BOM and line breaks.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tflint_graph.core.finding import Finding
from tflint_graph.core.noqa import comment_places, is_suppressed, source_lines, with_noqa
from tflint_graph.output.rewrite import FileFix, read_back
from tflint_graph.source.notebook import Notebook, is_notebook, read_notebook

# The codes the tool emits about a file it cannot parse or read: nothing to annotate.
_TOOL_CODES = frozenset({"TFG001", "TFG002"})
_LINE_BREAK = re.compile(r"(\r\n|\r|\n)")


def plan_noqa(
    findings: Iterable[Finding], sources: Mapping[str, str] | None = None
) -> list[FileFix]:
    """The rewrites that add a ``# noqa`` for each of ``findings``, one per changed file,
    sorted by path (``codes``: each code added).  ``sources`` gives the text of paths that
    are not files (standard input)."""
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        if f.code not in _TOOL_CODES:
            by_path.setdefault(f.path, []).append(f)
    plans: list[FileFix] = []
    for path, found in sorted(by_path.items()):
        text = sources.get(path) if sources else None
        if is_notebook(path):
            plan = _plan_notebook(path, text, found)
            if plan is not None:
                plans.append(plan)
            continue
        if text is not None:
            new = add_noqa(text, found)
            if new is not None:
                plans.append(FileFix(path, text, new[0], text.encode(), new[0].encode(), new[1]))
            continue
        read = read_back(path)
        if read is None:
            continue
        original, encode, data = read
        new = add_noqa(original, found)
        if new is None:
            continue
        try:
            new_data = encode(new[0])
        except UnicodeError:  # a code cannot be spelled in the file's encoding: never
            continue
        plans.append(FileFix(path, original, new[0], data, new_data, new[1]))
    return plans


def _plan_notebook(path: str, text: str | None, findings: Sequence[Finding]) -> FileFix | None:
    """A notebook's directives: added to the module its code cells make (where the linter
    reads them), and written back into the changed cells only."""
    if text is not None:
        data = text.encode("utf-8")
    else:
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None
    notebook = read_notebook(data, path)
    if not isinstance(notebook, Notebook):
        return None
    new = add_noqa(notebook.source, [m for f in findings if (m := notebook.to_module(f))])
    if new is None:
        return None
    written = notebook.with_module(new[0])
    if written is None:
        return None
    new_data, cells = written
    return FileFix(path, notebook.source, new[0], data, new_data, new[1], tuple(cells))


def add_noqa(source: str, findings: Sequence[Finding]) -> tuple[str, tuple[str, ...]] | None:
    """``source`` with a ``# noqa`` for each of ``findings`` (findings of this exact text),
    and the code of each directive added; None when nothing would change or the result
    would not be the same program with every finding silenced."""
    lines = source_lines(source)
    places = comment_places(lines)
    if places is None:
        return None
    units, comments = places
    wanted: dict[int, set[str]] = {}
    for f in findings:
        if 1 <= f.line <= len(lines) and not is_suppressed(lines, f.line, f.code):
            wanted.setdefault(units.get(f.line, f.line), set()).add(f.code)
    if not wanted:
        return None
    # Physical lines with their breaks, numbered as core.noqa numbers them.
    pieces = _LINE_BREAK.split(source)
    texts, breaks = pieces[0::2], pieces[1::2]
    added: list[str] = []
    for number, codes in sorted(wanted.items()):
        old = texts[number - 1]
        new = with_noqa(old, comments.get(number), codes)
        if new != old:
            texts[number - 1] = new
            added += sorted(codes)
    if not added:
        return None
    fixed = "".join(t + b for t, b in zip(texts, [*breaks, ""], strict=True))
    if not _same_program(source, fixed):
        return None
    new_lines = source_lines(fixed)
    if not all(is_suppressed(new_lines, f.line, f.code) for f in findings if f.line <= len(lines)):
        return None
    return fixed, tuple(added)


def _same_program(old: str, new: str) -> bool:
    """Whether ``new`` parses to the syntax tree ``old`` parses to (comments are not in it)."""
    try:
        return ast.dump(ast.parse(old)) == ast.dump(ast.parse(new))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
