"""Running a batch of independent file analyses: from the cache, in-process, or over a
process pool (``--jobs``).

Every analysis is a pure function of (file bytes, config, view), so a batch's results do
not depend on where or in which order they were computed; they are handed back in task
order, and warnings the analyses log are re-logged in that order, so the output is the
same for every ``--jobs``.  A worker that dies (a C stack overflow, the OOM killer) costs
only a retry: the files it held are analysed again one by one in fresh processes, and a
file that kills its process again is reported as TFG001 instead of taking the run down.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from tflint_graph.core.config import Config
from tflint_graph.core.facts import ModuleSummary, ProjectView
from tflint_graph.core.finding import Finding, tool_finding
from tflint_graph.run.cache import Cache, Result, Ticket
from tflint_graph.source import prefilter
from tflint_graph.source.reading import read_regular

if TYPE_CHECKING:  # imported when a pool starts: warm runs never need them
    import multiprocessing.context
    from concurrent.futures import Future, ProcessPoolExecutor

_log = logging.getLogger("tflint_graph")

# How one file is analysed: (path, config, display, view) -> (findings, summary).
Analyse = Callable[
    [Path, Config, "str | None", "ProjectView | None"],
    tuple[list[Finding], "ModuleSummary | None"],
]

# Starting a pool costs about 100 ms: smaller batches are analysed in-process.  Once the
# pool runs, every batch goes to it, even of one file: a file analysed again goes back to
# the worker that holds its tree, where the main process would parse it again.
MIN_POOL_TASKS = 16
# Chunks per worker: enough to balance uneven files, few enough to amortise pickling.
CHUNKS_PER_WORKER = 6


@dataclass(frozen=True, slots=True)
class Job:
    index: int
    path: Path
    view: ProjectView
    ticket: Ticket | None


# (index, findings, summary, (level, message) of each warning logged while analysing)
Outcome = tuple[int, list[Finding], ModuleSummary | None, list[tuple[int, str]]]


class _LogCapture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.levelno, record.getMessage()))


def analyse_jobs(
    analyse: Analyse, config: Config, cache: Cache | None, jobs: Sequence[Job]
) -> list[Outcome]:
    """Analyse ``jobs`` here (in a worker or in the main process) and store what is
    cacheable.  Log records are captured, not emitted: the main process re-logs them."""
    handler = _LogCapture()
    handlers, propagate = _log.handlers[:], _log.propagate
    _log.handlers, _log.propagate = [handler], False
    outcomes: list[Outcome] = []
    try:
        for job in jobs:
            handler.records = []
            findings, summary = analyse(job.path, config, None, job.view)
            # An analysis that logged (an internal error) is redone next time, so that
            # the warning is not lost on warm runs.
            if cache is not None and job.ticket is not None and not handler.records:
                cache.store(job.ticket, job.path, (findings, summary))
            outcomes.append((job.index, findings, summary, handler.records))
    finally:
        _log.handlers, _log.propagate = handlers, propagate
    return outcomes


def _crashed(job: Job, config: Config) -> Outcome:
    shown = str(job.path)
    findings = []
    if config.is_enabled("TFG001", shown):
        message = "cannot analyse: the process analysing this file crashed; not linted"
        findings.append(tool_finding(shown, "TFG001", message))
    return (job.index, findings, None, [])


def _chunks(todo: list[Job], count: int, costs: dict[int, int]) -> list[list[Job]]:
    """About ``count`` chunks of similar estimated cost (``costs`` by job index), the
    costliest first (so that no worker is left with a large TensorFlow module at the end
    while the other idles).  Outcomes are put back in task order by the caller, so this
    order is free."""
    ordered = sorted(todo, key=lambda job: -costs[job.index])
    budget = max(1, sum(costs.values()) // max(1, count))
    chunks: list[list[Job]] = []
    current: list[Job] = []
    spent = 0
    for job in ordered:
        current.append(job)
        spent += costs[job.index]
        if spent >= budget:
            chunks.append(current)
            current, spent = [], 0
    if current:
        chunks.append(current)
    return chunks


def _cost(path: Path) -> int:
    """A file's estimated analysis cost: its size, and ten times that when it mentions
    TensorFlow and a word that may make code traced (such files likely get the full libcst
    analysis: ``run.module.analyse_source``); read from its first 64 kB.  A FIFO or other
    special file (reported as TFG002 later) costs 1."""
    read = read_regular(path, 65536)
    if read is None:
        return 1
    head, info = read
    full = (b"tensorflow" in head or b"keras" in head) and _trace_bytes().search(head) is not None
    return max(1, info.st_size * (10 if full else 1))


@functools.lru_cache(maxsize=1)
def _trace_bytes() -> re.Pattern[bytes]:
    """The prefilter's words with every rule enabled, as bytes (an estimate needs no more)."""
    # Only once a pool runs: dispatch imports libcst and the rules (the pool preloads them).
    from tflint_graph.run.dispatch import ALL_RULES, trigger_words

    return re.compile(prefilter.triggers(trigger_words(ALL_RULES)).text.pattern.encode())


def _preload() -> None:
    """Import the analysis before forking, so workers share it instead of each importing
    libcst and the rules (warm runs never get here)."""
    import tflint_graph.run.dispatch  # noqa: F401


def _pool_context() -> multiprocessing.context.BaseContext:
    import multiprocessing

    # fork: workers start in milliseconds with every module already imported.
    if "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


class AnalysisPool:
    """Analyses batches for one :class:`~tflint_graph.run.project.Project` run; owns its workers.

    Each worker is a one-process pool, so that work can be sent to a chosen process: a file
    analysed again (another module reached it) goes back to the process that analysed it
    first, which still holds its parsed trees (``source.store.STORE``).  Workers take chunks as
    they finish the previous one; an idle worker takes any waiting chunk.
    """

    def __init__(
        self, analyse: Analyse, config: Config, jobs: int = 1, cache: Cache | None = None
    ) -> None:
        self.analyse = analyse
        self.config = config
        self.cache = cache
        self.jobs = max(1, jobs)
        if self.jobs > 1:
            try:  # a pool needs the analysis and the cache by reference or value
                import pickle

                pickle.dumps((analyse, cache, config))
            except Exception:
                self.jobs = 1
        self._workers: list[ProcessPoolExecutor | None] = []
        self._home: dict[Path, int] = {}  # file -> the worker that analysed it last
        self._costs: dict[Path, int] = {}  # estimated once per run (read from the file)

    def run(self, tasks: Sequence[tuple[Path, ProjectView]]) -> list[Result]:
        """(findings, summary) of each (path, view), in task order."""
        results: list[Result | None] = [None] * len(tasks)
        todo: list[Job] = []
        for index, (path, view) in enumerate(tasks):
            ticket = self.cache.ticket(path, str(path), view) if self.cache else None
            hit = self.cache.load(ticket) if self.cache and ticket else None
            if hit is not None:
                results[index] = hit
            else:
                todo.append(Job(index, path, view, ticket))
        pooled = len(todo) >= MIN_POOL_TASKS or (bool(self._workers) and bool(todo))
        if self.jobs > 1 and pooled:
            outcomes = self._pooled(todo)
        else:
            outcomes = analyse_jobs(self.analyse, self.config, self.cache, todo)
        for index, findings, summary, records in sorted(outcomes, key=lambda o: o[0]):
            for level, message in records:
                _log.log(level, "%s", message)
            results[index] = (findings, summary)
        return [r for r in results if r is not None]

    def _work(self) -> partial[list[Outcome]]:
        return partial(analyse_jobs, self.analyse, self.config, self.cache)

    def _worker(self, k: int) -> ProcessPoolExecutor:
        from concurrent.futures import ProcessPoolExecutor

        worker = self._workers[k]
        if worker is None:
            worker = self._workers[k] = ProcessPoolExecutor(1, mp_context=_pool_context())
        return worker

    def _queues(self, todo: list[Job]) -> list[list[list[Job]]]:
        """Chunks waiting for each worker: files go home where they have one; the others
        are dealt out, costliest first, each to the worker with the least work so far."""
        homes: list[list[Job]] = [[] for _ in range(self.jobs)]
        homeless: list[Job] = []
        for job in todo:
            k = self._home.get(job.path)
            (homes[k] if k is not None else homeless).append(job)
        for job in todo:
            if job.path not in self._costs:
                self._costs[job.path] = _cost(job.path)
        costs = {job.index: self._costs[job.path] for job in todo}
        queues: list[list[list[Job]]] = [[] for _ in range(self.jobs)]
        load = [0] * self.jobs
        for k, jobs in enumerate(homes):
            for chunk in _chunks(jobs, CHUNKS_PER_WORKER, costs) if jobs else []:
                queues[k].append(chunk)
                load[k] += sum(costs[job.index] for job in chunk)
        for chunk in _chunks(homeless, self.jobs * CHUNKS_PER_WORKER, costs) if homeless else []:
            k = min(range(self.jobs), key=lambda i: (load[i], i))
            queues[k].append(chunk)
            load[k] += sum(costs[job.index] for job in chunk)
        return queues

    def _next(self, queues: list[list[list[Job]]], k: int) -> list[Job] | None:
        """Worker ``k``'s next chunk: its own first, else the last of the longest queue."""
        if queues[k]:
            return queues[k].pop(0)
        other = max(range(len(queues)), key=lambda i: len(queues[i]))
        return queues[other].pop() if queues[other] else None

    def _pooled(self, todo: list[Job]) -> list[Outcome]:
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        if not self._workers:
            _preload()
            self._workers = [None] * self.jobs
        queues = self._queues(todo)
        running: dict[Future[list[Outcome]], tuple[int, list[Job]]] = {}
        outcomes: list[Outcome] = []
        failed: list[Job] = []
        broken: set[int] = set()

        def feed(k: int) -> None:
            # Two chunks in flight per worker, so it never waits for the next one.
            while k not in broken and sum(1 for w, _ in running.values() if w == k) < 2:
                chunk = self._next(queues, k)
                if chunk is None:
                    return
                try:
                    running[self._worker(k).submit(self._work(), chunk)] = (k, chunk)
                except BrokenProcessPool:
                    failed.extend(chunk)
                    broken.add(k)

        for k in range(self.jobs):
            feed(k)
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                k, chunk = running.pop(future)
                try:
                    outcomes += future.result()
                    for job in chunk:
                        self._home[job.path] = k
                except BrokenProcessPool:
                    failed.extend(chunk)
                    broken.add(k)
            for k in range(self.jobs):
                feed(k)
        # Left waiting only when every worker broke.
        failed += [job for queue in queues for chunk in queue for job in chunk]
        for k in broken:  # the next batch starts a fresh process there
            worker, self._workers[k] = self._workers[k], None
            if worker is not None:
                worker.shutdown(wait=True, cancel_futures=True)
            self._home = {p: w for p, w in self._home.items() if w != k}
        if failed:
            outcomes += [self._isolated(job) for job in failed]
        return outcomes

    def _isolated(self, job: Job) -> Outcome:
        """``job`` alone in a fresh process: a file that crashes it again is TFG001."""
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        with ProcessPoolExecutor(1, mp_context=_pool_context()) as pool:
            try:
                [outcome] = pool.submit(self._work(), [job]).result()
            except BrokenProcessPool:
                return _crashed(job, self.config)
        return outcome

    def close(self) -> None:
        workers, self._workers = self._workers, []
        for worker in workers:
            if worker is not None:
                worker.shutdown(wait=True, cancel_futures=True)
