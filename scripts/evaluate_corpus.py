"""Compare tflint-graph's TFG101-TFG109 findings with the labels of a corpus directory.

Usage: .venv/bin/python scripts/evaluate_corpus.py [DIR]   (default: tests/corpus)

A label is a trailing comment such as ``# TFG101`` or ``# TFG102, TFG106`` at the end of the
line where the finding is expected. Always exits 0: this is a report.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tflint_graph import Config, lint_paths

CODES = tuple(f"TFG1{n:02d}" for n in range(1, 10))
LABEL_RE = re.compile(r"#\s*(TFG\d{3}(?:\s*,\s*TFG\d{3})*)\s*$")

Key = tuple[str, int, str]


def read_labels(root: Path) -> set[Key]:
    labels: set[Key] = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), start=1):
            match = LABEL_RE.search(line)
            if not match:
                continue
            for code in re.split(r"\s*,\s*", match.group(1)):
                if code in CODES:
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


def run_tool(root: Path) -> set[Key]:
    found: set[Key] = set()
    for finding in lint_paths([root], Config()):
        code = str(finding.code)
        if code in CODES:
            found.add((_relative(finding.path, root), int(finding.line), code))
    return found


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.3f}" if den else "  n/a"


def report(labels: set[Key], found: set[Key]) -> None:
    tp_all = labels & found
    fp_all = found - labels
    fn_all = labels - found
    print(f"{'code':<8}{'TP':>5}{'FP':>5}{'FN':>5}{'precision':>11}{'recall':>8}")
    for code in CODES:
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
    root = Path(argv[1] if len(argv) > 1 else "tests/corpus").resolve()
    if not root.is_dir():
        print(f"not a directory: {root}")
        return 0
    labels = read_labels(root)
    try:
        found = run_tool(root)
    except Exception as exc:  # a report, never a failing exit
        print(f"tflint-graph failed on {root}: {exc!r}")
        return 0
    files = len(list(root.rglob("*.py")))
    print(f"corpus: {root} ({files} files, {len(labels)} labels, {len(found)} findings)\n")
    report(labels, found)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
