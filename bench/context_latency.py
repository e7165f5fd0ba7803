"""Pre-commit latency with project context: ``tflint-graph A B C`` on a few files of a large
project, whose other modules are read as context (SPEC §3), and the flake8 plugin on one.

    python bench/context_latency.py --generate --lines 500000 [--files 3] [--reps 5]
    python bench/context_latency.py --wheel tensorflow-probability==0.24.0
    python bench/context_latency.py path/to/project

Every command is a subprocess run from the tree's root, as a pre-commit hook runs.  The
files are TensorFlow modules of the tree (evenly spread over its sorted paths).  Rows:

- cold: no ``.tflint-graph-cache/`` (the whole project is analysed once, as context);
- warm, files unchanged: the cache holds the run (a commit retried after a failed hook);
- warm, files edited: a comment line appended to each file before each run (staged edits:
  the files themselves are analysed again, the rest of the project comes from the cache);
- the same two with ``--no-context`` (the given files alone), for comparison;
- flake8 (``--isolated --select TFG``, its default plugins included) on the first file, with
  the cache of the runs above and with the cache moved away.

The edited files are restored at the end.  Medians and minima over ``--reps`` runs; on a
machine shared with other jobs single runs vary a lot, so compare medians.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # sibling scripts, not a package
import run as bench_run

from tflint_graph.run.cache import default_root

PY = sys.executable
CACHE = ".tflint-graph-cache"


def pick_files(root: Path, count: int) -> list[Path]:
    """``count`` TensorFlow modules with a tf.function, evenly spread over the sorted paths."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if CACHE in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if "tf.function" in text:
            found.append(path.relative_to(root))
    if len(found) < count:
        raise SystemExit(f"only {len(found)} modules with a tf.function under {root}")
    step = len(found) / count
    return [found[int(i * step)] for i in range(count)]


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=3600)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1) or "Traceback" in proc.stderr:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path, help="project to use")
    parser.add_argument("--generate", action="store_true", help="use a generated tree")
    parser.add_argument("--lines", type=int, default=500_000, help="size of the generated tree")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--wheel", help="use a package from the registry, e.g. NAME==VERSION")
    parser.add_argument("--out", type=Path, help="where to generate or unpack the tree")
    parser.add_argument("--files", type=int, default=3, help="files given to each run")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--skip-cold", action="store_true", help="keep an existing cache")
    args = parser.parse_args(argv)
    if sum([args.dir is not None, args.generate, args.wheel is not None]) != 1:
        parser.error("give one of DIR, --generate, --wheel")
    if args.wheel is not None:
        root = bench_run.unpack_wheel(args.wheel, args.out)
    elif args.generate:
        out = args.out or Path(tempfile.gettempdir()) / (
            f"tflint-graph-bench-{args.lines}-{args.seed}"
        )
        root = generate.ensure(out, args.lines, args.seed)
    else:
        root = args.dir.resolve()
    bench_run.compile_package()
    files = pick_files(root, args.files)
    names = [str(f) for f in files]
    lines = sum(1 for p in root.rglob("*.py") for _ in p.open("rb"))
    print(f"{root}: {lines:,} lines; files: {' '.join(names)}", file=sys.stderr)
    # Where the CLI keeps the cache for these files, and where the plugin looks for one file's.
    cache_dir = default_root([root / f for f in files])
    if default_root([root / files[0]]) != cache_dir:
        print(
            f"note: no project marker above the files: the plugin does not see {cache_dir}",
            file=sys.stderr,
        )
    cli = [PY, "-m", "tflint_graph", "-q", "--exit-zero"]
    originals = {f: (root / f).read_bytes() for f in files}
    rows: list[tuple[str, list[float]]] = []
    counter = 0

    def repeated(argv: list[str]) -> list[float]:
        return [timed(argv, root) for _ in range(args.reps)]

    def edit() -> None:
        nonlocal counter
        counter += 1
        for f in files:
            with (root / f).open("a", encoding="utf-8") as handle:
                # Unique across invocations: an edit seen before would be a cache hit.
                handle.write(f"# edited {counter} at {time.time_ns()}\n")

    try:
        if not args.skip_cold:
            shutil.rmtree(cache_dir, ignore_errors=True)
            rows.append(("cold (no cache: the project is read once)", [timed(cli + names, root)]))
        else:
            timed(cli + names, root)
        rows.append(("warm, files unchanged", repeated(cli + names)))
        edited = []
        for _ in range(args.reps):
            edit()
            edited.append(timed(cli + names, root))
        rows.append(("warm, files edited", edited))
        alone = [PY, "-m", "tflint_graph", "-q", "--exit-zero", "--no-context"]
        timed(alone + names, root)
        rows.append(
            (
                "--no-context, files unchanged",
                repeated(alone + names),
            )
        )
        edited = []
        for _ in range(args.reps):
            edit()
            edited.append(timed(alone + names, root))
        rows.append(("--no-context, files edited", edited))
        for f, data in originals.items():
            (root / f).write_bytes(data)
        timed(cli + names, root)  # the cache records the files as they are
        flake8 = [PY, "-m", "flake8", "--isolated", "--select", "TFG", names[0]]
        rows.append(("flake8 on one file, cache present", repeated(flake8)))
        aside = root.parent / f"{root.name}-cache-aside"
        shutil.rmtree(aside, ignore_errors=True)
        cache_dir.rename(aside)
        try:
            rows.append(("flake8 on one file, no cache", repeated(flake8)))
        finally:
            aside.rename(cache_dir)
    finally:
        for f, data in originals.items():
            (root / f).write_bytes(data)
    print(f"| run ({len(files)} files) | median s | min s | runs |")
    print("|---|---:|---:|---:|")
    for label, times in rows:
        print(f"| {label} | {statistics.median(times):.2f} | {min(times):.2f} | {len(times)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
