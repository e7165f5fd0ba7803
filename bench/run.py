"""Time tflint-graph against flake8, Python's own parser and libcst's on one tree, side by side.

    python bench/run.py DIR [--rounds 3]
    python bench/run.py --generate --lines 200000 [--rounds 3]
    python bench/run.py --wheel keras-hub==0.32.0 [--rounds 3]

Every tool runs as a subprocess, once per round, and the rounds alternate (round 1 of every
tool, then round 2 of every tool, ...) so that a slow phase of a shared machine hits all of
them alike.  flake8 runs in a virtual environment of its own with only flake8 installed
(SPEC §6; created once, see ``flake8_env``).  Prints a Markdown table of medians and ratios,
then the targets (issue 23, and issue 7's) as PASS/FAIL.  See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # a sibling script, not a package

from tflint_graph.core.config import find_config

CACHE_DIR = ".tflint-graph-cache"
PY = sys.executable

# The floor (SPEC §6): read and CPython-parse every file, nothing else.
AST_PARSE = """
import ast, sys
from pathlib import Path
for path in sorted(Path(sys.argv[1]).rglob("*.py")):
    ast.parse(path.read_bytes())
"""

# What the parse alone costs: read and libcst-parse every file, nothing else.
LIBCST_PARSE = """
import sys, libcst
from pathlib import Path
for path in sorted(Path(sys.argv[1]).rglob("*.py")):
    libcst.parse_module(path.read_text(encoding="utf-8"))
"""

# Peak resident memory of the largest process below this one (the CLI or one of its workers).
MAX_RSS = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)
"""


@dataclass
class Tool:
    """One benchmarked command; ``before`` runs untimed ahead of each timing."""

    name: str
    argv: list[str]
    before: Callable[[], None] = lambda: None
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def cli_options() -> set[str]:
    """The long options ``tflint-graph check`` accepts (--jobs and --no-cache may be missing)."""
    out = subprocess.run(
        [PY, "-m", "tflint_graph", "check", "--help"], capture_output=True, text=True, check=True
    ).stdout
    return set(re.findall(r"(--[a-z][a-z-]*)", out))


def tree_size(root: Path) -> tuple[int, int]:
    files = lines = 0
    for path in root.rglob("*.py"):
        files += 1
        with open(path, "rb") as fh:
            lines += fh.read().count(b"\n")
    return files, lines


def timed(tool: Tool, cwd: Path, timeout: float) -> None:
    """Run ``tool`` once; record its wall time and the CPU time of it and all its children."""
    tool.before()
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(tool.argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        deadline = start + timeout
        # wait4 reports the rusage of the child including every descendant it waited for
        # (its workers): CPU seconds stay comparable when other jobs share the machine.
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                raise SystemExit(f"{tool.name} ran over --timeout {timeout:.0f} s")
            time.sleep(0.005)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            text = err.read().decode(errors="replace")[-2000:]
            raise SystemExit(f"{tool.name} failed (exit {proc.returncode}):\n{text}")
    tool.times.append(elapsed)
    tool.cpu.append(usage.ru_utime + usage.ru_stime)


def _tree_rss(root_pid: int) -> int:
    """Sum of the resident sets of ``root_pid`` and all its descendants, in bytes."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    stat = fh.read()
            except OSError:
                continue
            # Fields after the parenthesised command name: state, ppid, ...
            parents[int(entry.name)] = int(stat.rsplit(b")", 1)[1].split()[1])
    family = {root_pid}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in family and pid not in family:
                family.add(pid)
                grew = True
    total = 0
    for pid in family:
        try:
            with open(f"/proc/{pid}/statm", "rb") as fh:
                total += int(fh.read().split()[1]) * resource.getpagesize()
        except OSError:
            pass
    return total


def peak_memory(argv: list[str], cwd: Path, timeout: float) -> tuple[float, float | None]:
    """(largest single process' peak RSS, sampled peak of the whole process tree) in MB."""
    proc = subprocess.Popen([PY, "-c", MAX_RSS, *argv], cwd=cwd, stdout=subprocess.PIPE, text=True)
    peak = 0
    sampling = os.path.isdir("/proc/self")

    def sample() -> None:
        nonlocal peak
        while proc.poll() is None:
            peak = max(peak, _tree_rss(proc.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    if sampling:
        sampler.start()
    out, _ = proc.communicate(timeout=timeout)
    if sampling:
        sampler.join()
    kib, code = (int(x) for x in out.split())
    if code != 0:
        raise SystemExit(f"the peak-memory run failed (exit {code})")
    return kib / 1024, (peak / 2**20 if sampling else None)


def check(label: str, ok: bool, figures: str) -> str:
    return f"- {'PASS' if ok else 'FAIL'}: {label}: {figures}"


def compile_package() -> None:
    """Write tflint_graph's bytecode before timing anything.

    flake8 and libcst are installed with their ``.pyc`` files; an editable install of this
    project (or a checkout) has none, or stale ones, and with ``PYTHONDONTWRITEBYTECODE``
    set every run would compile the package from source again (~0.1 s), which a user's
    installed tool never does."""
    import compileall

    import tflint_graph

    compileall.compile_dir(str(Path(tflint_graph.__file__).parent), quiet=1)


def flake8_env(where: Path | None = None) -> Path:
    """The Python of a throwaway virtual environment that holds flake8 and its default
    plugins (pycodestyle, pyflakes, mccabe) only: SPEC §6's baseline, never with our plugin.
    Created once under the temp dir (``$TMPDIR/tflint-graph-bench-flake8``) and reused."""
    env = where or Path(tempfile.gettempdir()) / "tflint-graph-bench-flake8"
    python = env / "bin" / "python"
    if not python.exists():
        print(f"creating a flake8-only environment in {env} ...", file=sys.stderr)
        subprocess.run([PY, "-m", "venv", "--clear", str(env)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "flake8"], check=True)
    plugins = subprocess.run(
        [str(python), "-m", "flake8", "--version"], capture_output=True, text=True, check=True
    ).stdout
    if "tflint" in plugins.lower():
        raise SystemExit(f"{env} has the tflint-graph plugin installed: {plugins.strip()}")
    return python


def unpack_wheel(requirement: str, out: Path | None) -> Path:
    """The unpacked wheel of ``requirement`` (downloaded once, without dependencies): the
    sources of a real TensorFlow project, as published."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", requirement)
    root = out or Path(tempfile.gettempdir()) / f"tflint-graph-bench-wheel-{slug}"
    if root.is_dir() and any(root.iterdir()):
        return root
    with tempfile.TemporaryDirectory() as tmp:
        download = [PY, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:"]
        subprocess.run([*download, "--dest", tmp, requirement], check=True)
        [wheel] = Path(tmp).glob("*.whl")
        print(f"unpacking {wheel.name} in {root} ...", file=sys.stderr)
        shutil.unpack_archive(wheel, root, format="zip")
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path, help="tree to lint (default: generate one)")
    parser.add_argument("--generate", action="store_true", help="lint a generated tree")
    parser.add_argument("--lines", type=int, default=200_000, help="size of the generated tree")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--wheel",
        metavar="REQUIREMENT",
        help="lint the Python sources of a package from the registry (pip download, unpacked)",
    )
    parser.add_argument(
        "--out", type=Path, help="where to generate (default: a reused folder in the temp dir)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per command")
    parser.add_argument("--json", type=Path, help="also write the raw timings here")
    parser.add_argument(
        "--skip-no-cache", action="store_true", help="leave out the --no-cache row (saves time)"
    )
    parser.add_argument(
        "--libcst-parse",
        action="store_true",
        help="add the libcst parse of every file (issue 7's floor; slow on large trees)",
    )
    parser.add_argument(
        "--skip-flake8", action="store_true", help="leave out the flake8 rows (saves time)"
    )
    parser.add_argument(
        "--flake8-env",
        type=Path,
        help="flake8-only virtual environment (default: created once in the temp dir)",
    )
    parser.add_argument(
        "--memory-only",
        action="store_true",
        help="only the peak-memory cold run (the 300 MB target is for a 500k-line tree)",
    )
    args = parser.parse_args(argv)

    if sum([args.dir is not None, args.generate, args.wheel is not None]) > 1:
        parser.error("give one of DIR, --generate, --wheel")
    if args.wheel is not None:
        root = unpack_wheel(args.wheel, args.out)
    elif args.dir is None:
        out = (
            args.out or Path(tempfile.gettempdir()) / f"tflint-graph-bench-{args.lines}-{args.seed}"
        )
        print(f"generating {args.lines} lines (seed {args.seed}) in {out} ...", file=sys.stderr)
        root = generate.ensure(out, args.lines, args.seed)
    else:
        root = args.dir
    root = root.resolve()
    files, lines = tree_size(root)
    compile_package()
    options = cli_options()
    jobs = "--jobs" in options
    cores = os.cpu_count() or 1
    # Where the CLI run from ``root`` keeps its cache: next to the pyproject.toml it finds for
    # ".", else in its working directory (``root``).
    found = find_config([root])
    cache = (found.parent if found is not None else root) / CACHE_DIR

    def drop_cache() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    cache_seen: list[bool] = []
    tfg = [PY, "-m", "tflint_graph", "check", "--exit-zero", "-q", "."]
    # Two jobs, as on the 2-core reference machine (SPEC §6), whatever this machine has.
    parallel = [*tfg, "--jobs", "2"] if jobs else tfg
    cold_name = "tflint-graph cold --jobs 2" if jobs else "tflint-graph cold (no --jobs yet)"
    tools = [Tool("ast.parse of every file", [PY, "-c", AST_PARSE, "."])]
    if jobs:
        tools.append(Tool("tflint-graph cold --jobs 1", [*tfg, "--jobs", "1"], drop_cache))
    tools += [
        Tool(cold_name, parallel, drop_cache),
        # Straight after the cold run above: the cache it wrote is kept, the tree is unchanged.
        Tool("tflint-graph warm", parallel, lambda: cache_seen.append(cache.is_dir())),
    ]
    if "--no-cache" in options and not args.skip_no_cache:
        tools.append(Tool("tflint-graph --no-cache", [*parallel, "--no-cache"]))
    if not args.skip_flake8:
        # flake8's default plugins only, in their own environment; --isolated keeps any
        # flake8 configuration out.
        flake8 = [str(flake8_env(args.flake8_env)), "-m", "flake8", "--isolated", "--exit-zero"]
        tools += [
            Tool("flake8 -j1", [*flake8, "-j1", "."]),
            Tool("flake8 -j2", [*flake8, "-j2", "."]),
        ]
    if args.libcst_parse:
        tools.append(Tool("libcst parse of every file", [PY, "-c", LIBCST_PARSE, "."]))
    print(
        f"tree: {root} ({files} files, {lines} lines); {args.rounds} rounds; {cores} cores; "
        f"CLI options detected: --jobs {'yes' if jobs else 'no'}, "
        f"--no-cache {'yes' if '--no-cache' in options else 'no'}",
        file=sys.stderr,
    )
    if args.memory_only:
        drop_cache()
        max_rss, tree_rss = peak_memory(parallel, root, args.timeout)
        drop_cache()
        print(f"\nTree: {files} files, {lines} lines; {cores} cores.")
        tree_note = f", whole process tree {tree_rss:.0f} MB (sampled)" if tree_rss else ""
        print(f"Peak RSS of a cold default run: largest process {max_rss:.0f} MB{tree_note}.")
        print(check("peak ≤ 300 MB", max_rss <= 300, f"{max_rss:.0f} MB on {lines} lines"))
        return 0
    for r in range(args.rounds):
        for tool in tools:
            timed(tool, root, args.timeout)
            print(
                f"  round {r + 1}: {tool.name}: {tool.times[-1]:.2f} s (CPU {tool.cpu[-1]:.2f} s)",
                file=sys.stderr,
            )
    drop_cache()
    # Per process (issue 23): one process holds the whole analysis with --jobs 1; with two
    # jobs the largest is the CLI or one of its workers.
    rss_one, _ = peak_memory([*tfg, "--jobs", "1"], root, args.timeout) if jobs else (0.0, None)
    drop_cache()
    max_rss, tree_rss = peak_memory(parallel, root, args.timeout)
    drop_cache()

    by_name = {t.name: t for t in tools}
    floor = by_name["ast.parse of every file"].median
    base = by_name["flake8 -j1"].median if "flake8 -j1" in by_name else None
    print(
        f"\nTree: {files} files, {lines} lines; {args.rounds} rounds, alternating; {cores} cores.\n"
    )
    header = "| tool | median s | min s | ratio to ast.parse |"
    rule = "|---|---:|---:|---:|"
    if base is not None:
        header += " ratio to flake8 -j1 |"
        rule += "---:|"
    print(f"{header} median CPU s | CPU ratio to ast.parse |")
    print(f"{rule}---:|---:|")
    floor_cpu = statistics.median(by_name["ast.parse of every file"].cpu)
    for t in tools:
        cpu = statistics.median(t.cpu)
        row = f"| {t.name} | {t.median:.2f} | {min(t.times):.2f} | {t.median / floor:.2f} |"
        if base is not None:
            row += f" {t.median / base:.2f} |"
        print(f"{row} {cpu:.2f} | {cpu / floor_cpu:.2f} |")
    tree_note = f", whole process tree {tree_rss:.0f} MB (sampled)" if tree_rss else ""
    print(
        f"\nPeak RSS of a cold run, largest process: --jobs 1 {rss_one:.0f} MB, "
        f"--jobs 2 {max_rss:.0f} MB{tree_note}."
    )
    if not all(cache_seen):
        print(f"No {CACHE_DIR}/ was written: the warm run had no cache to use.")

    cold = by_name[cold_name].median
    warm = by_name["tflint-graph warm"].median
    print("\nTargets (issue 23):")
    if jobs:
        one = by_name["tflint-graph cold --jobs 1"].median
        print(
            check(
                "cold --jobs 1 ≤ 4x ast.parse of every file",
                one <= 4 * floor,
                f"{one:.2f} s vs {floor:.2f} s = {one / floor:.2f}x",
            )
        )
        print(
            check(
                "--jobs 2 ≥ 1.7x faster than --jobs 1",
                one >= 1.7 * cold,
                f"{one:.2f} s / {cold:.2f} s = {one / cold:.2f}x",
            )
        )
    else:
        print("- FAIL: cold --jobs 1 and --jobs 2: the CLI has no --jobs option yet")
    print(
        check(
            "warm ≤ 0.05x cold",
            warm <= 0.05 * cold,
            f"{warm:.2f} s vs {cold:.2f} s = {warm / cold:.3f}x",
        )
    )
    peak = max(rss_one, max_rss)
    print(check("peak ≤ 300 MB per process", peak <= 300, f"{peak:.0f} MB"))
    print("Targets (issue 7):")
    if base is not None:
        print(
            check(
                "cold ≤ 0.5x flake8 -j1",
                cold <= 0.5 * base,
                f"{cold:.2f} s vs {base:.2f} s = {cold / base:.2f}x",
            )
        )
    if "libcst parse of every file" in by_name:
        parse = by_name["libcst parse of every file"].median
        print(
            check(
                "cold ≤ 0.5x libcst parse",
                cold <= 0.5 * parse,
                f"{cold:.2f} s vs {parse:.2f} s = {cold / parse:.2f}x",
            )
        )

    if args.json:
        raw = {
            "tree": str(root),
            "files": files,
            "lines": lines,
            "cores": cores,
            "times": {t.name: t.times for t in tools},
            "cpu": {t.name: t.cpu for t in tools},
            "peak_rss_mb": max_rss,
            "peak_rss_jobs1_mb": rss_one,
            "tree_rss_mb": tree_rss,
        }
        args.json.write_text(json.dumps(raw, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
