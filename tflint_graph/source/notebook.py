"""Jupyter notebooks (``.ipynb``) as one Python module, and back (SPEC §3).

A notebook's code cells, in order, are one module, as in the kernel that runs them: a name
defined in cell 1 is visible in cell 3.  IPython syntax that is not Python (line magics
``%time``, shell escapes ``!ls``, help ``obj?``, ``/autocall``, automagics such as ``pip
install x``, and whole cells under a cell magic whose body is not Python, ``%%bash``) becomes
a placeholder line, so that module line numbers stay the cells' own; a cell indented as a
whole is dedented, as IPython does, and its columns are shifted back.

``Notebook`` maps positions both ways: findings leave the analysis with the cell they are in
(``Finding.cell``, counted among all the notebook's cells, markdown included, as Jupyter and
VS Code number them) and lines and columns inside it; ``--fix`` turns the fixed module back
into the notebook, rewriting only the ``source`` of the cells that changed and leaving every
other byte of the file as it was.

The stdlib ``json`` reads the file.  A file that is not a notebook is a TFG001 finding, one
that is not UTF-8 a TFG002 finding; neither raises.
"""

from __future__ import annotations

import bisect
import dataclasses
import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from tflint_graph.core.finding import Finding, tool_finding
from tflint_graph.source.reading import NOTEBOOK_SUFFIX, decode
from tflint_graph.source.reading import is_notebook as is_notebook  # its former home

SUFFIX = NOTEBOOK_SUFFIX

# Cell magics whose body is Python that runs in the kernel (``%%time`` times the cell);
# every other cell magic (``%%bash``, ``%%writefile``, ``%%html``) makes the cell not Python.
PYTHON_CELL_MAGICS = frozenset(
    {"time", "timeit", "capture", "debug", "prun", "python", "python3", "pypy"}
)

# A logical line that starts with one of these is IPython syntax: ``%magic``, ``!shell``,
# ``?help``, ``/autocall``, ``,autoquote``, ``;autoquote`` (none can start a Python line).
_ESCAPES = ("%", "!", "?", "/", ",", ";")
# ``files = !ls``, ``t = %timeit -o f()``: the assignment is kept, its value is opaque.
_MAGIC_ASSIGNMENT = re.compile(
    r"(?P<target>[ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*)[ \t]*=[ \t]*[%!]"
)
# Magics IPython runs without their ``%`` (automagic) and the shell aliases it defines,
# written as commands: ``pip install x``, ``cd data``, ``ls -la`` (never Python).
AUTOMAGICS = frozenset(
    {
        "alias", "autoreload", "bookmark", "cat", "cd", "conda", "cp", "env", "history",
        "load_ext", "ls", "matplotlib", "mkdir", "mv", "pip", "pwd", "reload_ext", "rm",
        "rmdir", "run", "set_env", "store", "time", "timeit", "unalias", "who", "whos",
    }
)  # fmt: skip
# ``name arg``: an argument that cannot continue a Python expression (nor ``-la`` or
# ``./data``, in practice: Python spells a subtraction with spaces).  A bare ``ls`` is Python.
_AUTOMAGIC = re.compile(
    r"([A-Za-z_]\w*)(?![ \t]+(?:if|else|and|or|not|in|is|for)\b)"
    r"[ \t]+(?:[^\s=(\[{.,:;)\]}+\-*/%&|^<>!~@#]|-[-\w]|\.\.?(?:/|[ \t]*$))"
)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# What changes the scanner's state: in code, and inside each kind of string.
_CODE_STOPS = re.compile(r"[#'\"()\[\]{}]")
_STRING_STOPS = {q: re.compile(r"\\|" + q) for q in ("'", '"', "'''", '"""')}
_LINE_REF = re.compile(r"\b(lines?) (\d+)(?:-(\d+))?\b")


@dataclass(frozen=True)
class Cell:
    """One code cell: where it is in the notebook and in the module."""

    number: int  # 1-based, among all the notebook's cells
    raw: str | list[str]  # its ``source`` as the file holds it
    lines: tuple[str, ...]  # its text's lines, without line endings
    python: tuple[str, ...]  # the module's lines for it (IPython syntax replaced)
    first: int  # the module line of its first line (1-based)
    placeholders: frozenset[int] = frozenset()  # indexes of the lines that are IPython syntax
    indent: str = ""  # indentation IPython removes from its lines (the module lacks it)

    @property
    def text(self) -> str:
        return "".join(self.raw)

    def shift(self, line: int) -> int:
        """How many columns line ``line`` (1-based) lost in the module."""
        if not self.indent or not 0 < line <= len(self.lines):
            return 0
        return len(self.indent) if self.lines[line - 1].startswith(self.indent) else 0


@dataclass
class Notebook:
    """A parsed notebook: its code cells and the module they make."""

    text: str  # the file's text (BOM stripped)
    doc: dict[str, Any]
    cells: tuple[Cell, ...]
    bom: bool = False
    key: str = "source"  # where a cell's code is: ``input`` in nbformat 3
    _firsts: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._firsts = [c.first for c in self.cells]

    @cached_property
    def source(self) -> str:
        """The module: every code cell's lines, in order, IPython syntax replaced."""
        return "".join(line + "\n" for cell in self.cells for line in cell.python)

    def cell(self, number: int) -> Cell | None:
        return next((c for c in self.cells if c.number == number), None)

    def _at(self, module_line: int) -> tuple[Cell, int] | None:
        """(cell, line in it) of a module line; a line past the end is in the last cell."""
        k = bisect.bisect_right(self._firsts, module_line) - 1
        # An empty cell shares its first line with the next one: only a trailing empty cell
        # is found here, and what lies past the end belongs to the last cell with lines.
        while k > 0 and not self.cells[k].python:
            k -= 1
        if k < 0:
            return None
        cell = self.cells[k]
        return cell, module_line - cell.first + 1

    def to_cells(self, finding: Finding) -> Finding:
        """``finding`` (module positions) with its cell, and lines and columns in it; line
        numbers its message names are translated too."""
        if finding.cell is not None:
            return finding
        at = self._at(finding.line)
        if at is None:
            return finding
        cell, line = at
        end_line, end_column = finding.end_line, finding.end_column
        if end_line is not None:
            end = self._at(end_line)
            if end is not None and end[0] is cell:
                end_line = end[1]
                if end_column is not None:
                    end_column += cell.shift(end_line)
            else:  # a range across cells (only unparsable code gives one): no end
                end_line = end_column = None
        return dataclasses.replace(
            finding,
            line=line,
            column=finding.column + cell.shift(line),
            end_line=end_line,
            end_column=end_column,
            cell=cell.number,
            message=self._lines_named(finding.message),
            fix=self._lines_named(finding.fix) if finding.fix is not None else None,
        )

    def to_module(self, finding: Finding) -> Finding | None:
        """The inverse of :meth:`to_cells` for positions (what ``--fix`` locates)."""
        cell = self.cell(finding.cell) if finding.cell is not None else None
        if cell is None:
            return None
        end_line, end_column = finding.end_line, finding.end_column
        if end_line is not None and end_column is not None:
            end_column -= cell.shift(end_line)
            end_line += cell.first - 1
        return dataclasses.replace(
            finding,
            line=cell.first + finding.line - 1,
            column=finding.column - cell.shift(finding.line),
            end_line=end_line,
            end_column=end_column,
            cell=None,
        )

    def _lines_named(self, text: str) -> str:
        """``the loop at line 40`` -> ``the loop at cell 5, line 3``."""

        def replace(match: re.Match[str]) -> str:
            first, last = int(match.group(2)), match.group(3)
            start = self._at(first)
            if start is None:
                return match.group(0)
            if last is None:
                return f"cell {start[0].number}, line {start[1]}"
            end = self._at(int(last))
            if end is None:
                return match.group(0)
            if end[0] is start[0]:
                return f"cell {start[0].number}, lines {start[1]}-{end[1]}"
            return f"cell {start[0].number}, line {start[1]} to cell {end[0].number}, line {end[1]}"

        return _LINE_REF.sub(replace, text)

    def cell_line(self, cell: int, line: int) -> str | None:
        """Line ``line`` (1-based) of cell ``cell``, as the notebook shows it."""
        found = self.cell(cell)
        if found is None or not 0 < line <= len(found.lines):
            return None
        return found.lines[line - 1]

    # -- where a cell position is in the file's own text (SARIF and GitHub annotations) ----

    @cached_property
    def _spans(self) -> dict[int, tuple[int, int]] | None:
        """Each code cell's ``source`` value as a (start, end) slice of ``text``; None when
        they cannot all be found (the file is laid out in a way this does not follow)."""
        key = re.compile(r'"' + self.key + r'"\s*:\s*')
        decoder = json.JSONDecoder()
        spans: dict[int, tuple[int, int]] = {}
        at = 0
        for cell in self.cells:
            while True:
                match = key.search(self.text, at)
                if match is None:
                    return None
                try:
                    value, end = decoder.raw_decode(self.text, match.end())
                except ValueError:
                    at = match.end()
                    continue
                at = end
                if value == cell.raw:
                    spans[cell.number] = (match.end(), end)
                    break
        return spans

    def _pieces(self, cell: Cell) -> list[tuple[int, int]] | None:
        """(offset in ``text`` of each string of the cell's source, offset of its first
        character in the cell's text)."""
        spans = self._spans
        if spans is None or cell.number not in spans:
            return None
        start, end = spans[cell.number]
        if isinstance(cell.raw, str):
            return [(start, 0)]
        decoder = json.JSONDecoder()
        pieces: list[tuple[int, int]] = []
        at, done = start + 1, 0
        for piece in cell.raw:
            at = self._after_space(at)
            pieces.append((at, done))
            _, at = decoder.raw_decode(self.text, at)
            done += len(piece)
            at = self._after_space(at) + 1  # past the comma
        return pieces if at <= end + 1 else None

    def _after_space(self, at: int) -> int:
        while at < len(self.text) and self.text[at] in " \t\r\n":
            at += 1
        return at

    @cached_property
    def _text_lines(self) -> list[int]:
        return [0, *(m.end() for m in _LINE_BREAK.finditer(self.text))]

    def file_position(self, cell: int, line: int, column: int) -> tuple[int, int] | None:
        """The (line, column), 1-based, in the file's text of column ``column`` of line
        ``line`` of cell ``cell``: where the character sits inside the JSON string."""
        found = self.cell(cell)
        pieces = self._pieces(found) if found is not None else None
        if found is None or pieces is None or not 0 < line <= max(len(found.lines), 1):
            return None
        text = found.text
        starts = [0, *(m.end() for m in _LINE_BREAK.finditer(text))]
        offset = min(starts[line - 1] + column - 1, len(text))
        k = bisect.bisect_right([done for _, done in pieces], offset) - 1
        if k < 0:
            return None
        at, done = pieces[k]
        at += 1  # the opening quote
        for _ in range(offset - done):  # JSON escapes are several characters of the file
            if self.text.startswith("\\u", at):
                pair = 0xD800 <= int(self.text[at + 2 : at + 6], 16) < 0xDC00
                at += 12 if pair and self.text.startswith("\\u", at + 6) else 6
            else:
                at += 2 if self.text[at] == "\\" else 1
        row = bisect.bisect_right(self._text_lines, at)
        return row, at - self._text_lines[row - 1] + 1

    # -- back to the notebook (--fix) -------------------------------------------------------

    def with_module(self, fixed: str) -> tuple[bytes, list[tuple[int, str, str]]] | None:
        """The file's new bytes when the module becomes ``fixed``, and (cell, old text, new
        text) of each changed cell; None when a change cannot be put back (it touches a
        placeholder or spans cells) or the result would not read back as this notebook with
        only those cells' sources changed."""
        old = [line for cell in self.cells for line in cell.python]
        new = _LINE_BREAK.split(fixed)
        if new and new[-1] == "":
            new.pop()
        owner: list[int] = [k for k, cell in enumerate(self.cells) for _ in cell.python]
        if not owner:
            return None
        placeholder = {cell.first - 1 + i for cell in self.cells for i in cell.placeholders}
        lines: list[list[str]] = [[] for _ in self.cells]
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                for i in range(i1, i2):
                    k = owner[i]
                    lines[k].append(self.cells[k].lines[i - self.cells[k].first + 1])
                continue
            # Lines inserted between two cells go to the later one (to the last at the end).
            touched = {owner[i] for i in range(i1, i2)} or {owner[min(i1, len(owner) - 1)]}
            if len(touched) != 1 or placeholder.intersection(range(i1, i2)):
                return None
            k = touched.pop()
            indent = self.cells[k].indent  # what IPython removes, the cell keeps
            lines[k].extend(indent + line if line else line for line in new[j1:j2])
        changed: dict[int, str | list[str]] = {}
        report: list[tuple[int, str, str]] = []
        for cell, kept in zip(self.cells, lines, strict=True):
            if tuple(kept) == cell.lines:
                continue
            text = _joined(kept, cell.text)
            changed[cell.number] = _as_raw(text, cell.raw)
            report.append((cell.number, cell.text, text))
        if not changed:
            return None
        data = self._spliced(changed)
        return (data, report) if data is not None else None

    def _spliced(self, changed: dict[int, str | list[str]]) -> bytes | None:
        ascii_only = self.text.isascii()  # a file that escapes non-ASCII keeps doing so
        text = self.text
        spans = self._spans
        if spans is not None:
            for number in sorted(changed, key=lambda n: -spans[n][0]):
                start, end = spans[number]
                value = _dumped(changed[number], text[start:end], ascii_only)
                text = text[:start] + value + text[end:]
        else:  # written again as a whole, indented as the file was
            doc = _with_sources(self.doc, changed, self.key)
            text = json.dumps(doc, indent=_indent(self.text), ensure_ascii=ascii_only)
            text += "\n" if self.text.endswith("\n") else ""
        try:
            if json.loads(text) != _with_sources(self.doc, changed, self.key):
                return None
        except ValueError:
            return None
        return ("\ufeff" + text if self.bom else text).encode("utf-8")


def _joined(lines: Sequence[str], old: str) -> str:
    """The cell text of ``lines``, with the old text's line ending and final newline."""
    found = _LINE_BREAK.search(old)
    newline = found.group(0) if found else "\n"
    text = newline.join(lines)
    return text + newline if lines and old.endswith(("\n", "\r")) else text


def _as_raw(text: str, like: str | list[str]) -> str | list[str]:
    """``text`` stored as the cell stored its source: one string, or a list of lines."""
    if isinstance(like, str):
        return text
    # Lines as nbformat stores them: each with its ending (form feeds do not break lines).
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", text)


def _dumped(value: str | list[str], old: str, ascii_only: bool) -> str:
    """``value`` as JSON, laid out as the ``old`` JSON text of the source was."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=ascii_only)
    items = [json.dumps(v, ensure_ascii=ascii_only) for v in value]
    if "\n" not in old or not items:
        return "[" + ", ".join(items) + "]"
    newline = "\r\n" if "\r\n" in old else "\n"
    inner = re.match(r"\[\r?\n([ \t]*)", old)
    outer = re.search(r"\n([ \t]*)\]\Z", old)
    item_indent = inner.group(1) if inner else " "
    close_indent = outer.group(1) if outer else ""
    joined = ("," + newline + item_indent).join(items)
    return "[" + newline + item_indent + joined + newline + close_indent + "]"


def _with_sources(doc: dict[str, Any], changed: dict[int, str | list[str]], key: str) -> Any:
    """A copy of ``doc`` with the sources of the ``changed`` cells (by number) replaced."""
    copy = json.loads(json.dumps(doc))
    for number, cell in enumerate(_all_cells(copy), start=1):
        if number in changed:
            cell[key] = changed[number]
    return copy


def _indent(text: str) -> int | str | None:
    match = re.search(r"\n([ \t]+)\S", text)
    if match is None:
        return None
    found = match.group(1)
    return found if "\t" in found else len(found)


def _all_cells(doc: dict[str, Any]) -> list[Any]:
    if isinstance(doc.get("cells"), list):
        return list(doc["cells"])
    cells: list[Any] = []
    for sheet in doc.get("worksheets") or []:
        if isinstance(sheet, dict) and isinstance(sheet.get("cells"), list):
            cells.extend(sheet["cells"])
    return cells


# -- reading ------------------------------------------------------------------------------


def read_notebook(data: bytes, path: str) -> Notebook | Finding:
    """The notebook in ``data``, or the TFG002 (not UTF-8 text) or TFG001 (not a notebook)
    finding that says why it cannot be linted."""
    decoded = decode(data, path)
    if isinstance(decoded, Finding):
        return decoded
    notebook = parse_notebook(decoded, path)
    if isinstance(notebook, Notebook):
        notebook.bom = data.startswith(b"\xef\xbb\xbf")
    return notebook


def parse_notebook(text: str, path: str) -> Notebook | Finding:
    """The notebook whose JSON text is ``text``, or a TFG001 finding."""
    text = text.removeprefix("\ufeff")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        return tool_finding(
            path, "TFG001", f"not a valid notebook: invalid JSON: {exc.msg}", exc.lineno, exc.colno
        )
    except RecursionError:
        return tool_finding(path, "TFG001", "not a valid notebook: JSON nested too deeply")
    except ValueError as exc:
        return tool_finding(path, "TFG001", f"not a valid notebook: {exc}")
    if not isinstance(doc, dict) or not (
        isinstance(doc.get("cells"), list) or isinstance(doc.get("worksheets"), list)
    ):
        return tool_finding(path, "TFG001", 'not a Jupyter notebook: no "cells" list')
    major = doc.get("nbformat")
    if isinstance(major, int) and major < 3:
        return tool_finding(
            path, "TFG001", f"unsupported notebook format: nbformat {major} (3 and 4 are read)"
        )
    key = "source" if isinstance(doc.get("cells"), list) else "input"
    if not _is_python(doc):
        return Notebook(text, doc, (), key=key)
    cells: list[Cell] = []
    first = 1
    for number, cell in enumerate(_all_cells(doc), start=1):
        if not isinstance(cell, dict):
            return tool_finding(path, "TFG001", f"not a valid notebook: cell {number} is no object")
        if cell.get("cell_type") != "code":
            continue
        if key == "input" and cell.get("language", "python") != "python":
            continue
        raw = cell.get(key, "")
        if not (
            isinstance(raw, str) or (isinstance(raw, list) and all(isinstance(s, str) for s in raw))
        ):
            return tool_finding(
                path, "TFG001", f"not a valid notebook: the source of cell {number} is not text"
            )
        lines = _LINE_BREAK.split("".join(raw))
        if lines[-1] == "":
            lines.pop()
        python = python_lines(lines)
        cells.append(
            Cell(
                number,
                raw,
                tuple(lines),
                python.lines,
                first,
                python.placeholders,
                python.indent,
            )
        )
        first += len(python.lines)
    return Notebook(text, doc, tuple(cells), key=key)


def _is_python(doc: dict[str, Any]) -> bool:
    """Whether the notebook's kernel runs Python (an R or Julia notebook is not linted)."""
    metadata = doc.get("metadata")
    if not isinstance(metadata, dict):
        return True
    for section, name in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(section)
        language = value.get(name) if isinstance(value, dict) else None
        if isinstance(language, str):
            return language.lower().startswith("python")
    # No language given: a kernel named after another language (Swift for TensorFlow's
    # `swift`, `ir`, `julia-1.9`); any other name may be a Python environment's.
    kernel = metadata.get("kernelspec")
    for key in ("name", "display_name") if isinstance(kernel, dict) else ():
        name = kernel.get(key)
        if isinstance(name, str) and re.split(r"[-\s_.0-9]", name.lower())[0] in _OTHER_KERNELS:
            return False
    return True


_OTHER_KERNELS = frozenset(
    {
        "swift",
        "ir",
        "r",
        "julia",
        "scala",
        "kotlin",
        "javascript",
        "typescript",
        "deno",
        "bash",
        "rust",
        "evcxr",
        "go",
        "gophernotes",
        "java",
        "xcpp",
        "sas",
        "sql",
        "octave",
        "matlab",
        "ruby",
        "haskell",
        "ocaml",
        "lua",
        "dotnet",
        "csharp",
        "fsharp",
    }
)


# -- IPython syntax -----------------------------------------------------------------------


@dataclass(frozen=True)
class CellPython:
    """What the module holds for one cell's lines."""

    lines: tuple[str, ...]
    placeholders: frozenset[int]  # indexes of lines that were IPython syntax
    indent: str  # the leading indentation IPython removes from the cell's lines ("" if none)


def python_lines(lines: Sequence[str]) -> CellPython:
    """``lines`` (one cell) as the kernel runs them, in Python of the same line count.

    As IPython does: a cell whose first non-blank line is indented loses that indentation
    on every line that has it; a cell magic (``%%name``) on that line makes the cell's body
    no Python unless it is ``%%time`` and its kin.  IPython syntax becomes ``pass`` (indented
    as the line was), ``x = ...`` for ``x = !ls``, an empty line for a magic's continuation
    lines and for the body of a cell magic that is not Python.  Lines inside strings and
    brackets are never IPython syntax."""
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    head = lines[first] if first < len(lines) else ""
    indent = head[: len(head) - len(head.lstrip(" \t"))]
    out = [line[len(indent) :] if indent and line.startswith(indent) else line for line in lines]
    placeholders: set[int] = set()
    start = first
    if first < len(out) and out[first].startswith("%%"):
        name = out[first][2:].split(maxsplit=1)[0] if out[first][2:].strip() else ""
        placeholders.add(first)
        out[first] = "pass"
        if name not in PYTHON_CELL_MAGICS:
            placeholders.update(range(first + 1, len(out)))
            out[first + 1 :] = ["" for _ in out[first + 1 :]]
            return CellPython(tuple(out), frozenset(placeholders), indent)
        start = first + 1
    scanner = _Scanner()
    continuing = False  # the previous line was a magic ending in a backslash
    for i in range(start, len(out)):
        line = out[i]
        if continuing:
            placeholders.add(i)
            out[i] = ""
            continuing = line.endswith("\\")
            continue
        if scanner.at_statement_start:
            replaced = _placeholder(line)
            if replaced is not None:
                placeholders.add(i)
                out[i] = replaced
                continuing = line.endswith("\\")
                continue
        scanner.feed(line)
    return CellPython(tuple(out), frozenset(placeholders), indent)


_EXPORTED = re.compile(
    r"!\s*[\w./~-]|%%?[A-Za-z_]\w*|[A-Za-z_][\w.]*\s*=\s*[!%]|(?:"
    + "|".join(sorted(AUTOMAGICS))
    + r")\b"
)


def ipython_script(source: str) -> str | None:
    """``source``, a ``.py`` file that Python rejects, as the IPython it is: a notebook
    exported as a script (Colab's *Download .py* keeps ``!pip install x``, ``%matplotlib
    inline`` and ``pip install y``) with those lines as placeholders, as in a notebook's cell
    (same line count, same columns); None when it has no IPython line or still does not
    parse."""
    from tflint_graph.source.syntax import judge_source  # CPython's parser, cheaply

    lines = source.splitlines()
    cell = python_lines(lines)
    if not cell.placeholders or cell.indent:
        return None
    # Only what an export keeps: a shell escape, a named magic, `x = !cmd`, an automagic
    # (`% (loss, step)` continuing a statement is a syntax error, not a magic).
    for i in cell.placeholders:
        continued = i > 0 and lines[i - 1].endswith("\\")  # a magic's continuation line
        if lines[i].strip() and not continued and not _EXPORTED.match(lines[i].lstrip()):
            return None
    text = "".join(line + "\n" for line in cell.lines)
    verdict = judge_source(text)
    return text if verdict.error is None and verdict.too_deep is None else None


def _placeholder(line: str) -> str | None:
    """The Python that stands for ``line`` (the start of a statement) when it is IPython
    syntax, else None."""
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    if stripped.startswith(_ESCAPES) or _is_help(line):
        return indent + "pass"
    assignment = _MAGIC_ASSIGNMENT.match(line)
    if assignment is not None:
        return assignment.group("target") + " = ..."
    automagic = _AUTOMAGIC.match(stripped)
    if automagic is not None and automagic.group(1) in AUTOMAGICS:
        return indent + "pass"
    return None


def _is_help(line: str) -> bool:
    """``obj?`` / ``obj.method??``: a statement whose code (outside strings and comments)
    ends with a question mark, which Python never allows."""
    if "?" not in line:
        return False
    scanner = _Scanner()
    code = scanner.feed(line)
    return scanner.at_statement_start and code.rstrip().endswith("?")


class _Scanner:
    """Just enough of Python's tokenizer to tell whether a line starts a statement: open
    brackets, strings (triple-quoted ones span lines) and backslash continuations."""

    def __init__(self) -> None:
        self.quote: str | None = None  # the open string's quote, if one is open
        self.depth = 0
        self.continued = False

    @property
    def at_statement_start(self) -> bool:
        return self.quote is None and self.depth == 0 and not self.continued

    def feed(self, line: str) -> str:
        """Advance over ``line``; its code outside strings and comments."""
        code: list[str] = []
        i, n = 0, len(line)
        comment = False
        while i < n:
            if self.quote is not None:  # jump to the next backslash or closing quote
                found = _STRING_STOPS[self.quote].search(line, i)
                if found is None:
                    i = n
                elif found.group(0) == "\\":
                    i = found.end() + 1
                else:
                    i, self.quote = found.end(), None
                continue
            found = _CODE_STOPS.search(line, i)
            if found is None:
                code.append(line[i:])
                break
            c = found.group(0)
            code.append(line[i : found.start()])
            i = found.end()
            if c == "#":
                comment = True
                break
            if c in "'\"":
                self.quote = c * 3 if line.startswith(c * 3, i - 1) else c
                i += len(self.quote) - 1
                code.append(" ")
                continue
            self.depth = self.depth + 1 if c in "([{" else max(0, self.depth - 1)
            code.append(c)
        ends_escaped = line.endswith("\\") and not comment
        self.continued = ends_escaped and (self.quote is None or len(self.quote) == 1)
        if self.quote is not None and len(self.quote) == 1 and not self.continued:
            self.quote = None  # an unterminated one-line string ends with its line
        return "".join(code)
