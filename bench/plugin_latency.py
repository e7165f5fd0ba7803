"""Editor latency: what the TFG flake8 plugin adds to flake8 on one 1,000-line TF module.

    python bench/plugin_latency.py [--reps 30] [--lines 1000]

In this process, alternating per repetition, after a warm-up: (a) flake8 on the file with
its default plugins only (pycodestyle, pyflakes, mccabe), (b) the same with the TFG plugin,
(c) ``libcst.parse_module`` of the file's text, and with ``--alone`` (d) the plugin's own
``run()`` on flake8's inputs, without flake8 around it.  Reports medians; the plugin's cost
is (b) - (a), the issue 7 target is that cost ≤ 2x (c).
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import libcst
from flake8.api import legacy
from flake8.main.options import JobsArgument
from flake8.plugins import finder

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # a sibling script, not a package

from tflint_graph.flake8_plugin import Plugin

DEFAULT_CODES = ["E", "F", "W", "C90"]


def style_guide(with_tfg: bool) -> legacy.StyleGuide:
    """A flake8 style guide with or without our plugin *loaded* (not merely deselected)."""
    find = finder._find_importlib_plugins
    if not with_tfg:
        finder._find_importlib_plugins = lambda: (p for p in find() if p.package != "tflint-graph")
    try:
        return legacy.get_style_guide(
            select=[*DEFAULT_CODES, "TFG"] if with_tfg else DEFAULT_CODES,
            jobs=JobsArgument("1"),
            quiet=2,  # the quiet-nothing formatter: no output, statistics still kept
        )
    finally:
        finder._find_importlib_plugins = find


def tfg_count(guide: legacy.StyleGuide, path: str) -> int:
    report = guide.check_files([path])
    return sum(int(line.split()[0]) for line in report.get_statistics("TFG"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alone", action="store_true", help="also time (d), the plugin alone")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        # flake8 reads its configuration and our plugin its pyproject.toml from around here:
        # an empty folder keeps both at their defaults.
        os.chdir(tmp)
        path = os.path.join(tmp, "model.py")
        text = generate.tf_module(args.lines, args.seed)
        Path(path).write_text(text, encoding="utf-8")
        plain, with_tfg = style_guide(False), style_guide(True)
        assert tfg_count(plain, path) == 0, "the TFG plugin ran in the plain flake8 run"
        assert tfg_count(with_tfg, path) > 0, "the TFG plugin reported nothing: is it active?"

        def plugin_only() -> None:
            lines = edited[0].splitlines(keepends=True)
            list(Plugin(ast.parse(edited[0]), lines, path).run())

        measures: dict[str, Callable[[], object]] = {
            "(a) flake8, default plugins": lambda: plain.check_files([path]),
            "(b) flake8 + TFG plugin": lambda: with_tfg.check_files([path]),
            "(c) libcst.parse_module": lambda: libcst.parse_module(edited[0]),
        }
        if args.alone:
            measures["(d) TFG plugin run() alone"] = plugin_only
        times: dict[str, list[float]] = {name: [] for name in measures}
        # CPU time of this process as well: it stays meaningful when the machine is shared.
        cpu: dict[str, list[float]] = {name: [] for name in measures}
        edited = [text]
        for rep in range(args.warmup + args.reps):
            # As in an editor, every lint is of a new text (one comment line differs): the
            # analysis cannot reuse a tree it parsed for an earlier repetition.
            edited[0] = f"{text}# edit {rep}\n"
            Path(path).write_text(edited[0], encoding="utf-8")
            for name, fn in measures.items():
                start, start_cpu = time.perf_counter(), time.process_time()
                fn()
                if rep >= args.warmup:
                    times[name].append(time.perf_counter() - start)
                    cpu[name].append(time.process_time() - start_cpu)
        os.chdir("/")

    med = {name: statistics.median(t) * 1000 for name, t in times.items()}
    med_cpu = {name: statistics.median(t) * 1000 for name, t in cpu.items()}
    added = med["(b) flake8 + TFG plugin"] - med["(a) flake8, default plugins"]
    parse = med["(c) libcst.parse_module"]
    print(f"{text.count(chr(10))}-line TensorFlow module, median of {args.reps} after warm-up:\n")
    print("| measure | median ms | min ms | median CPU ms |")
    print("|---|---:|---:|---:|")
    for name, t in times.items():
        print(f"| {name} | {med[name]:.1f} | {min(t) * 1000:.1f} | {med_cpu[name]:.1f} |")
    added_cpu = med_cpu["(b) flake8 + TFG plugin"] - med_cpu["(a) flake8, default plugins"]
    parse_cpu = med_cpu["(c) libcst.parse_module"]
    ok = added <= 2 * parse
    print(
        f"\nPlugin adds {added:.1f} ms to flake8 (= (b) - (a)), {added / parse:.2f}x the libcst "
        f"parse of the file ({parse:.1f} ms); in CPU time {added_cpu:.1f} ms, "
        f"{added_cpu / parse_cpu:.2f}x ({parse_cpu:.1f} ms)."
    )
    if args.alone:
        alone = med["(d) TFG plugin run() alone"]
        print(f"The plugin's run() alone: {alone:.1f} ms, {alone / parse:.2f}x the parse.")
    print(f"- {'PASS' if ok else 'FAIL'}: plugin latency ≤ 2x libcst parse: {added / parse:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
