"""Compare tflint-graph's findings with the labels of a corpus directory.

Usage: .venv/bin/python scripts/evaluate_corpus.py [DIR] [--codes PREFIX[,PREFIX...]]

DIR defaults to tests/fixtures/corpus. ``--codes`` keeps only the rule codes starting with one
of the given prefixes (default ``TFG1``: TFG101-TFG109); e.g. ``--codes TFG2`` or
``--codes TFG1,TFG2``.

A label is a trailing comment such as ``# TFG101`` or ``# TFG102, TFG106`` at the end of the
line where the finding is expected. Always exits 0: this is a report.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from tflint_graph import Config, lint_paths

# The rule catalog of SPEC.md section 2 (and the TFG0xx codes of the tool itself).
ALL_CODES = (
    tuple(f"TFG0{n:02d}" for n in range(1, 3))
    + tuple(f"TFG1{n:02d}" for n in range(1, 10))
    + tuple(f"TFG2{n:02d}" for n in range(1, 10))
    + tuple(f"TFG3{n:02d}" for n in range(1, 6))
    + tuple(f"TFG4{n:02d}" for n in range(1, 5))
)
DEFAULT_CODES = "TFG1"
LABEL_RE = re.compile(r"#\s*(TFG\d{3}(?:\s*,\s*TFG\d{3})*)\s*$")

Key = tuple[str, int, str]


def select_codes(prefixes: str) -> tuple[str, ...]:
    """The catalog codes starting with one of the comma-separated ``prefixes``."""
    wanted = tuple(p.strip().upper() for p in prefixes.split(",") if p.strip())
    return tuple(code for code in ALL_CODES if code.startswith(wanted))


def read_labels(root: Path, codes: tuple[str, ...]) -> set[Key]:
    labels: set[Key] = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), start=1):
            match = LABEL_RE.search(line)
            if not match:
                continue
            for code in re.split(r"\s*,\s*", match.group(1)):
                if code in codes:
                    labels.add((rel, lineno, code))
    return labels


def _relative(path: str | Path, root: Path) -> str:
    p = Path(path)
    if not p.is_absolute():
        p = Path.cwd() / p
    try:
        return p.resolve().relative_to(root).as_posix()
    except ValueError:
        return p.as_posix()


def run_tool(root: Path, codes: tuple[str, ...]) -> set[Key]:
    found: set[Key] = set()
    for finding in lint_paths([root], Config()):
        code = str(finding.code)
        if code in codes:
            found.add((_relative(finding.path, root), int(finding.line), code))
    return found


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.3f}" if den else "  n/a"


def report(labels: set[Key], found: set[Key], codes: tuple[str, ...]) -> None:
    tp_all = labels & found
    fp_all = found - labels
    fn_all = labels - found
    print(f"{'code':<8}{'TP':>5}{'FP':>5}{'FN':>5}{'precision':>11}{'recall':>8}")
    for code in codes:
        tp = sum(1 for k in tp_all if k[2] == code)
        fp = sum(1 for k in fp_all if k[2] == code)
        fn = sum(1 for k in fn_all if k[2] == code)
        print(f"{code:<8}{tp:>5}{fp:>5}{fn:>5}{_ratio(tp, tp + fp):>11}{_ratio(tp, tp + fn):>8}")
    tp, fp, fn = len(tp_all), len(fp_all), len(fn_all)
    print(f"{'overall':<8}{tp:>5}{fp:>5}{fn:>5}{_ratio(tp, tp + fp):>11}{_ratio(tp, tp + fn):>8}")
    print(f"\nfalse positives ({fp}):")
    for f, line, code in sorted(fp_all):
        print(f"  {f}:{line} {code}")
    print(f"false negatives ({fn}):")
    for f, line, code in sorted(fn_all):
        print(f"  {f}:{line} {code}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog=Path(argv[0]).name, description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", default="tests/fixtures/corpus", help="corpus directory")
    parser.add_argument(
        "--codes",
        default=DEFAULT_CODES,
        help="comma-separated code prefixes to evaluate (default: %(default)s)",
    )
    args = parser.parse_args(argv[1:])
    codes = select_codes(args.codes)
    if not codes:
        print(f"no rule code starts with {args.codes!r}")
        return 0
    root = Path(args.dir).resolve()
    if not root.is_dir():
        print(f"not a directory: {root}")
        return 0
    labels = read_labels(root, codes)
    try:
        found = run_tool(root, codes)
    except Exception as exc:  # a report, never a failing exit
        print(f"tflint-graph failed on {root}: {exc!r}")
        return 0
    files = len(list(root.rglob("*.py")))
    print(f"corpus: {root} ({files} files, {len(labels)} labels, {len(found)} findings)\n")
    report(labels, found, codes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
