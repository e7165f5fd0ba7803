"""Which findings a fix exists for, and how safe it is: the ``[*]`` marker and the fix
counts of text output.

Working it out parses the file again with libcst, its positions and scopes (seconds for a few
large files), so the answer is kept in the run's cache folder, per file text and findings:
an unchanged tree is answered from there without loading libcst or the rules.  An entry is
laid out as the cache's own (``<2 hex>/<key>.json``, JSON data with ``format`` and ``key``),
written atomically; a missing or damaged one is worked out again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tflint_graph.core.finding import Finding
from tflint_graph.core.version import __version__
from tflint_graph.output.format import FixSafety
from tflint_graph.output.rewrite import read_back

_Key = tuple[int, int, int, int, str]  # line, column, end line, end column, code
# Bump when an entry's layout or meaning changes.
_FORMAT = 1


def available_fixes(
    findings: Iterable[Finding],
    sources: Mapping[str, str] | None = None,
    memo: Path | None = None,
) -> dict[Finding, FixSafety]:
    """The findings a fix exists for, with its safety.  Files are read as ``--fix`` reads
    them; ``sources`` gives the text of paths that are not files (standard input), which is
    never remembered; ``memo`` is the cache folder answers are kept in (None: none)."""
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        if f.end_line is not None and f.end_column is not None:
            by_path.setdefault(f.path, []).append(f)
    out: dict[Finding, FixSafety] = {}
    for path, found in sorted(by_path.items()):
        given = sources.get(path) if sources else None
        store: Path | None = None
        if given is not None:
            text = given
        else:
            read = read_back(path)
            if read is None:
                continue  # --fix would not rewrite it either
            text, store = read[0], memo
        key = _memo_key(text, found) if store is not None else ""
        known = _memo_load(store, key) if store is not None else None
        if known is None:
            # libcst and the rules: only when the answer is not known yet.
            from tflint_graph.output.fix import offered_fixes

            known = {_key(f): s for f, s in offered_fixes(text, found).items()}
            if store is not None:
                _memo_store(store, key, known)
        out.update({f: known[k] for f in found if (k := _key(f)) in known})
    return out


def _key(f: Finding) -> _Key:
    return (f.line, f.column, f.end_line or f.line, f.end_column or f.column, f.code)


def _memo_key(text: str, findings: Sequence[Finding]) -> str:
    recipe = json.dumps([__version__, text, sorted({_key(f) for f in findings})])
    return hashlib.sha256(recipe.encode("utf-8", "surrogatepass")).hexdigest()


def _memo_entry(memo: Path, key: str) -> Path:
    return memo / key[:2] / f"{key}.json"


def _memo_load(memo: Path, key: str) -> dict[_Key, FixSafety] | None:
    try:
        entry = json.loads(_memo_entry(memo, key).read_text(encoding="utf-8"))
        if entry.get("format") != _FORMAT or entry.get("key") != key:
            return None
        known: dict[_Key, FixSafety] = {}
        for line, column, end_line, end_column, code, safety in entry["fixes"]:
            if safety not in ("safe", "unsafe"):
                return None
            known[(int(line), int(column), int(end_line), int(end_column), str(code))] = safety
        return known
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # missing or damaged: worked out again


def _memo_store(memo: Path, key: str, known: Mapping[_Key, FixSafety]) -> None:
    rows = [[*k, safety] for k, safety in sorted(known.items())]
    target = _memo_entry(memo, key)
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"format": _FORMAT, "key": key, "fixes": rows}, handle)
            os.replace(temp, target)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)
