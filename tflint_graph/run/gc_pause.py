"""Cyclic garbage collection off while modules are analysed.

It cost about a quarter of a run: the ~200k objects of each libcst tree and its analysis
trigger many collections, each traversing the trees still alive.  The analysis breaks its
own reference cycles, so its memory comes back by reference counting
(``tests/robustness/test_memory.py``); whatever else is left in a cycle is collected at the first
collection after, or here after every 64 MB of analysed source (a safety net: each forced
collection traverses everything allocated since the one before; see ``bench/README.md``).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_COLLECT_EVERY_CHARS = 64_000_000


class _Pause:
    """Nesting and threads allowed: collections come back when the last user leaves."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.was_enabled = False
        self.debt = 0  # characters analysed since the last forced collection


_PAUSE = _Pause()


@contextlib.contextmanager
def gc_paused(chars: int = 0) -> Iterator[None]:
    """Cyclic GC off inside; ``chars`` of source analysed inside count towards the next
    forced collection while an outer pause holds."""
    pause = _PAUSE
    with pause.lock:
        if pause.users == 0:
            pause.was_enabled = gc.isenabled()
            gc.disable()
        pause.users += 1
    try:
        yield
    finally:
        with pause.lock:
            pause.users -= 1
            pause.debt += chars
            if pause.users == 0:
                pause.debt = 0
                if pause.was_enabled:
                    gc.enable()
            elif pause.debt > _COLLECT_EVERY_CHARS:
                # With collections off every object is young: collecting generation 0
                # traverses only what was allocated since the last one.
                pause.debt = 0
                gc.collect(0)
