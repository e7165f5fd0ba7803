"""The trees this process remembers, so that a module analysed again is not parsed again.

Modules another module reaches are analysed again with what the run learnt (``run/project``):
the store keeps the libcst trees (and CPython's verdict) of the latest sources, and with each
tree what its last analysis prepared from it (index, scopes: ``model.context.Prepared``).
Trees are never mutated.  Sizes and measurements: ``bench/README.md`` (tree store).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tflint_graph.source.syntax import SyntaxVerdict

if TYPE_CHECKING:
    import libcst as cst


class KeptAnalysis(Protocol):
    """What an analysis prepared from a tree (the store only keeps and releases it)."""

    @property
    def tree(self) -> cst.Module: ...

    def release(self) -> None: ...


# A libcst tree takes about 40 bytes per source character, CPython's about 10: the bound
# keeps the trees under ~50 MB.  Every remembered tree keeps what was prepared from it.
MAX_CHARS = 1_000_000
PREPARED_MAX_CHARS = 1_000_000


class TreeStore:
    """Trees by source text, least recently used first out; thread-safe (the library may be
    called from several threads).

    Files the run expects to analyse again (``Project.likely_reached``, by display path) are
    the last to go (``keeping_first``): without that, on a 200k-line tree most modules other
    modules reach had been given up by the time the run knew their roots.  A tree is kept
    first until it serves its second analysis: a file parsed again is kept like any other, or
    re-parses would evict each other in turn.
    """

    def __init__(self, max_chars: int = MAX_CHARS, prepared_max_chars: int = PREPARED_MAX_CHARS):
        self.max_chars = max_chars
        self.prepared_max_chars = prepared_max_chars
        self._trees: OrderedDict[str, tuple[cst.Module, SyntaxVerdict]] = OrderedDict()
        self._chars = 0
        # Taken out while an analysis uses it, so that no two threads share one.
        self._prepared: OrderedDict[str, KeptAnalysis] = OrderedDict()
        self._prepared_chars = 0
        self.keep_first: frozenset[str] = frozenset()
        self._first: set[str] = set()  # remembered sources of such files
        self._kept_before: set[int] = set()  # hashes of the sources kept first so far
        self._lock = threading.Lock()

    # -- trees --------------------------------------------------------------------------
    def remembered(self, source: str) -> tuple[cst.Module, SyntaxVerdict] | None:
        with self._lock:
            found = self._trees.get(source)
            if found is not None:
                self._trees.move_to_end(source)
                self._first.discard(source)
            return found

    def remember(self, source: str, module: cst.Module, verdict: SyntaxVerdict, path: str) -> None:
        """Keep ``module`` (and CPython's ``verdict``) of ``source``, the file ``path``'s."""
        if len(source) > self.max_chars // 4:
            return
        first = path in self.keep_first
        evicted: list[KeptAnalysis] = []
        with self._lock:
            if source in self._trees:
                return
            self._trees[source] = (module, verdict)
            self._chars += len(source)
            if first and hash(source) not in self._kept_before:
                self._first.add(source)
                self._kept_before.add(hash(source))
            while self._chars > self.max_chars:
                old = self._evictable(self._trees)
                del self._trees[old]
                self._first.discard(old)
                self._chars -= len(old)
                prepared = self._drop_prepared(old)
                if prepared is not None:
                    evicted.append(prepared)
        for prepared in evicted:
            prepared.release()

    def __contains__(self, source: str) -> bool:
        return source in self._trees

    def first_sources(self) -> frozenset[str]:
        """The remembered sources kept first (of files the run expects to analyse again)."""
        with self._lock:
            return frozenset(self._first)

    def _evictable(self, store: OrderedDict[str, Any]) -> str:
        """The least recently used source of ``store`` that the run does not expect to
        analyse again, else the least recently used one (the caller holds the lock)."""
        return next((s for s in store if s not in self._first), next(iter(store)))

    # -- what analyses prepared ---------------------------------------------------------
    def _drop_prepared(self, source: str) -> KeptAnalysis | None:
        """Take ``source``'s prepared analysis out (the caller holds the lock)."""
        prepared = self._prepared.pop(source, None)
        if prepared is not None:
            self._prepared_chars -= len(source)
        return prepared

    def take_prepared(self, source: str) -> KeptAnalysis | None:
        with self._lock:
            return self._drop_prepared(source)

    def keep_prepared(self, source: str, prepared: KeptAnalysis | None) -> None:
        """Keep ``prepared`` with the remembered tree it was prepared from; release it
        when there is no such tree (two threads may have parsed the same source)."""
        if prepared is None:
            return
        evicted: list[KeptAnalysis] = []
        kept: KeptAnalysis | None = prepared
        with self._lock:
            entry = self._trees.get(source)
            if entry is not None and entry[0] is prepared.tree and source not in self._prepared:
                self._prepared[source] = prepared
                self._prepared_chars += len(source)
                kept = None
                while self._prepared_chars > self.prepared_max_chars and len(self._prepared) > 1:
                    oldest = self._evictable(self._prepared)
                    evicted.append(self._prepared.pop(oldest))
                    self._prepared_chars -= len(oldest)
        for old in ([kept] if kept is not None else []) + evicted:
            old.release()

    def prepared_sources(self) -> list[str]:
        with self._lock:
            return list(self._prepared)

    # -- forgetting ---------------------------------------------------------------------
    def forget(self, source: str) -> None:
        """Drop the tree remembered for ``source`` (and what was prepared from it)."""
        with self._lock:
            if self._trees.pop(source, None) is not None:
                self._chars -= len(source)
                self._first.discard(source)
            prepared = self._drop_prepared(source)
        if prepared is not None:
            prepared.release()

    def clear(self) -> None:
        """Drop every tree (and release what was prepared from them)."""
        with self._lock:
            prepared = list(self._prepared.values())
            self._prepared.clear()
            self._trees.clear()
            self._first.clear()
            self._kept_before.clear()
            self._chars = self._prepared_chars = 0
        for p in prepared:
            p.release()

    # -- a run's hint -------------------------------------------------------------------
    @contextlib.contextmanager
    def keeping_first(self, paths: Iterable[str]) -> Iterator[None]:
        """Inside, the trees of ``paths`` (as displayed) are the last the store gives up.
        Set before the pool forks: workers inherit it."""
        before, self.keep_first = self.keep_first, frozenset(paths)
        try:
            yield
        finally:
            self.keep_first = before
            with self._lock:  # what stays remembered is kept like any other tree
                self._first.clear()
                self._kept_before.clear()

    def may_outgrow(self, files: list[Path], processes: int) -> bool:
        """Whether the run's sources may be more than its processes' stores keep (else
        every tree stays anyway, and which to keep first need not be worked out)."""
        total = 0
        for file in files:
            with contextlib.suppress(OSError):
                total += os.stat(file).st_size
            if total > processes * self.max_chars:
                return True
        return False


# The process's store: every analysis in this process (and each worker, after the fork)
# parses through it.
STORE = TreeStore()
