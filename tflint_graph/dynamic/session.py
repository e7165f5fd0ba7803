"""``--dynamic``: confirm the static findings of a run by tracing the real code (SPEC §4).

Static analysis runs first.  Then, one module at a time, :mod:`~tflint_graph.dynamic.plan`
works out what to call and with which inputs, and :func:`~tflint_graph.dynamic.verdicts.
confirm_module` runs it in an isolated child (timeout, memory limit, scratch working
directory).  Every finding comes back with a :class:`~tflint_graph.core.finding.DynamicStatus`;
nothing a module does in its child can stop the run.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed, wait
from dataclasses import dataclass, field
from pathlib import Path

from tflint_graph.core.config import Config
from tflint_graph.core.finding import TOOL_CODES, DynamicStatus, Finding
from tflint_graph.dynamic.isolation import module_name_for, stop_children
from tflint_graph.dynamic.plan import plan_module
from tflint_graph.dynamic.verdicts import (
    CONFIRMED,
    NOT_REPRODUCED,
    UNVERIFIED,
    Verdict,
    confirm_module,
)
from tflint_graph.source.modules import package_root

__all__ = ["DynamicSummary", "DynamicUnavailable", "confirm_findings", "require_tensorflow"]

INSTALL_HINT = "pip install 'tflint-graph[dynamic]'"

# Address-space limit of a CPU-only child; TensorFlow maps far more than it uses, and CUDA
# needs more still, so no limit is set when a GPU may be used.
CPU_MEMORY_MB = 32 * 1024


class DynamicUnavailable(Exception):
    """TensorFlow is not installed where the children would run."""


def require_tensorflow() -> None:
    if importlib.util.find_spec("tensorflow") is None:
        raise DynamicUnavailable(
            f"--dynamic needs TensorFlow, which is not installed: {INSTALL_HINT}"
        )


@dataclass
class DynamicSummary:
    device: str | None = None
    counts: dict[str, int] = field(
        default_factory=lambda: {CONFIRMED: 0, NOT_REPRODUCED: 0, UNVERIFIED: 0}
    )
    seconds: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {"device": self.device, **self.counts, "seconds": round(self.seconds, 2)}

    def line(self) -> str:
        c = self.counts
        return (
            f"Dynamic mode: {c[CONFIRMED]} confirmed, {c[NOT_REPRODUCED]} not reproduced, "
            f"{c[UNVERIFIED]} unverified on {self.device or 'no device'} ({self.seconds:.1f} s)"
        )


Progress = Callable[[int, int, str], None]


def _gpu_possible() -> bool:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return False
    return Path("/dev/nvidia0").exists() or Path("/dev/nvidiactl").exists()


def confirm_findings(
    findings: Sequence[Finding],
    config: Config,
    *,
    timeout: float = 60.0,
    device: str | None = None,
    jobs: int = 1,
    progress: Progress | None = None,
) -> tuple[list[Finding], DynamicSummary]:
    """The findings with their dynamic status, in the same order, and the run's summary;
    ``jobs`` modules run in parallel, each in its own child process."""
    start = time.monotonic()
    summary = DynamicSummary()
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        # A file that was not analysed has nothing to trace; a notebook is no module to import.
        if f.code not in TOOL_CODES and f.cell is None:
            by_path.setdefault(f.path, []).append(f)
    verdicts: dict[tuple[str, int, str], Verdict] = {}
    cpu_only = (device or "").lower().startswith("cpu") or not _gpu_possible()
    env = {"CUDA_VISIBLE_DEVICES": "-1"} if (device or "").lower().startswith("cpu") else None
    work = sorted(by_path.items())

    def one(item: tuple[str, list[Finding]]) -> dict[tuple[int, str], Verdict]:
        path, found = item
        return _confirm_file(Path(path), found, config, timeout, device, cpu_only, env, summary)

    # Children are separate processes: threads only wait for them.
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(work) or 1))) as pool:
        futures = {pool.submit(one, item): item[0] for item in work}
        try:
            for done, future in enumerate(as_completed(futures), start=1):
                path = futures[future]
                for (line, code), verdict in future.result().items():
                    verdicts[(path, line, code)] = verdict
                if progress is not None:
                    progress(done, len(work), path)
        except BaseException:
            # Ctrl-C: the pool would otherwise run every queued module before letting go; a
            # worker still planning may start its child after the first stop, hence the loop.
            pool.shutdown(wait=False, cancel_futures=True)
            while not all(f.done() for f in futures):
                stop_children()
                wait(futures, timeout=0.1)
            raise
    out = []
    for f in findings:
        if f.code in TOOL_CODES:
            out.append(f)
            continue
        verdict = (
            Verdict(UNVERIFIED, "a notebook is not imported; run its cells to see the effect")
            if f.cell is not None
            else verdicts.get((f.path, f.line, f.code), Verdict(UNVERIFIED, "not reached"))
        )
        summary.counts[verdict.status] += 1
        status = DynamicStatus(
            verdict.status, verdict.evidence, verdict.device or None, verdict.inputs or None
        )
        out.append(dataclasses.replace(f, dynamic=status))
    summary.seconds = time.monotonic() - start
    return out, summary


def _confirm_file(
    path: Path,
    findings: list[Finding],
    config: Config,
    timeout: float,
    device: str | None,
    cpu_only: bool,
    env: dict[str, str] | None,
    summary: DynamicSummary,
) -> dict[tuple[int, str], Verdict]:
    try:
        source = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        return {
            (f.line, f.code): Verdict(UNVERIFIED, f"cannot read the file: {exc}") for f in findings
        }
    root, _ = package_root(path)
    name, _ = module_name_for(path.resolve(), root)
    plan = plan_module(str(path), source, findings, config, name, config.dynamic.examples)
    verdicts = dict(plan.verdicts)
    if plan.targets:
        run = confirm_module(
            path,
            root,
            plan.targets,
            timeout=timeout,
            device=device,
            unknown=config.dynamic.unknown_dim,
            memory_mb=CPU_MEMORY_MB if cpu_only else None,
            env=env,
        )
        if run.device:
            summary.device = summary.device or run.device
        verdicts.update(run.verdicts)
    return verdicts
