"""Editor and pre-commit latency on one module: ``tflint-graph FILE`` and the flake8 plugin
against flake8 with its default plugins (in their own environment) on the same file.

    python bench/one_file.py --wheel keras-hub==0.32.0 \\
        --file keras_hub/src/models/gemma/gemma_attention.py [--reps 7]
    python bench/one_file.py path/to/project --file pkg/layer.py

Every command is a subprocess run from the tree's root, as an editor or a pre-commit hook
runs it; the rows alternate per repetition.  Rows (issue 23):

- flake8, default plugins only, in a flake8-only environment (``run.flake8_env``): the
  baseline;
- ``tflint-graph FILE``, the project's run cached and the file unchanged (a hook retried);
- the same with the file edited before each run (a comment line: the file is analysed
  again, the rest of the project comes from the cache), what an editor asks on every save;
- ``tflint-graph --no-context --no-cache FILE``: the file alone, nothing cached;
- flake8 with the TFG plugin (this environment) on the file, unchanged and edited.

The file is restored at the end.  Medians of wall and CPU time (``wait4`` of the child).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench_run  # a sibling script, not a package

PY = sys.executable


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``argv``, which must succeed."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or "Traceback" in err:
        raise SystemExit(f"{' '.join(argv)} failed ({code}):\n{err[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path, help="project to use")
    parser.add_argument("--wheel", help="use a package from the registry, e.g. NAME==VERSION")
    parser.add_argument("--file", type=Path, required=True, help="the module, from the root")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--flake8-env", type=Path, help="flake8-only virtual environment")
    args = parser.parse_args(argv)
    if (args.dir is None) == (args.wheel is None):
        parser.error("give one of DIR, --wheel")
    root = (bench_run.unpack_wheel(args.wheel, None) if args.wheel else args.dir).resolve()
    bench_run.compile_package()
    name = str(args.file)
    path = root / args.file
    original = path.read_bytes()
    lines = original.count(b"\n")
    plain = [str(bench_run.flake8_env(args.flake8_env)), "-m", "flake8", "--isolated"]
    cli = [PY, "-m", "tflint_graph", "-q", "--exit-zero"]
    with_tfg = [PY, "-m", "flake8", "--isolated", "--exit-zero"]
    counter = 0

    def edit() -> None:
        nonlocal counter
        counter += 1
        # Unique across invocations: an edit seen before would be a cache hit.
        path.write_bytes(original + f"# edited {counter} at {time.time_ns()}\n".encode())

    def restore() -> None:
        path.write_bytes(original)

    rows: list[tuple[str, list[str], object]] = [
        ("flake8, default plugins (own environment)", [*plain, "--exit-zero", name], restore),
        ("tflint-graph FILE, project cached, file unchanged", [*cli, name], restore),
        ("tflint-graph FILE, project cached, file edited", [*cli, name], edit),
        (
            "tflint-graph --no-context --no-cache FILE",
            [*cli, "--no-context", "--no-cache", name],
            edit,
        ),
        ("flake8 + TFG plugin, project cached, file unchanged", [*with_tfg, name], restore),
        ("flake8 + TFG plugin, project cached, file edited", [*with_tfg, name], edit),
    ]
    wall: dict[str, list[float]] = {label: [] for label, _, _ in rows}
    cpu: dict[str, list[float]] = {label: [] for label, _, _ in rows}
    try:
        restore()
        print(f"{root}: {name} ({lines} lines); caching the project's run ...", file=sys.stderr)
        timed([*cli, name], root)
        for rep in range(args.reps + 1):  # the first round warms the OS's caches
            for label, command, before in rows:
                before()  # type: ignore[operator]
                w, c = timed(command, root)
                if rep:
                    wall[label].append(w)
                    cpu[label].append(c)
    finally:
        restore()
    base = statistics.median(wall[rows[0][0]])
    base_cpu = statistics.median(cpu[rows[0][0]])
    print(f"\n{name}, {lines} lines; median of {args.reps} runs, alternating.\n")
    print("| run | median s | min s | ratio to flake8 | median CPU s | CPU ratio to flake8 |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, _, _ in rows:
        med, med_cpu = statistics.median(wall[label]), statistics.median(cpu[label])
        print(
            f"| {label} | {med:.3f} | {min(wall[label]):.3f} | {med / base:.2f} | "
            f"{med_cpu:.3f} | {med_cpu / base_cpu:.2f} |"
        )
    # Wall and CPU: on a machine shared with other jobs the wall-clock medians of runs this
    # short are mostly waiting for a core, and the CPU ratios are the ones to read.
    print("\nTargets (issue 23), within 1.5x of flake8 with its default plugins:")
    for label, _, _ in rows[1:]:
        ratio = statistics.median(wall[label]) / base
        ratio_cpu = statistics.median(cpu[label]) / base_cpu
        print(bench_run.check(label, ratio <= 1.5, f"wall {ratio:.2f}x"))
        print(bench_run.check(label, ratio_cpu <= 1.5, f"CPU {ratio_cpu:.2f}x"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
