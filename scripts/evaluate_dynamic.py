"""How many findings ``--dynamic`` confirms on a labelled corpus, and that no false one is.

Usage: .venv/bin/python scripts/evaluate_dynamic.py DIR [--codes TFG1,TFG2] [--timeout S]

Labels are trailing comments such as ``# TFG101`` on the line a finding belongs to (see
``scripts/evaluate_corpus.py``).  A finding with a matching label is *true*, one without is
*false*.  Prints, per code and in total: true findings and how many came back confirmed /
not-reproduced / unverified, and false findings with any that were confirmed (there must be
none).  Runs ``tflint-graph DIR --dynamic`` once; always exits 0: this is a report.

``--decoys`` instead reports every static finding again under a wrong code (a print as a
random draw, a bool() as np.array()...) and checks that none of these false findings is
confirmed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from evaluate_corpus import read_labels, select_codes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--codes", default="TFG1,TFG2")
    parser.add_argument("--timeout", default="120")
    parser.add_argument("--jobs", default="2")
    parser.add_argument("--verbose", action="store_true", help="print every unconfirmed finding")
    args = parser.parse_args()
    root = args.root.resolve()
    codes = select_codes(args.codes)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tflint_graph",
            ".",
            "--dynamic",
            "--no-cache",
            "--output-format",
            "json",
            "--dynamic-timeout",
            args.timeout,
            "--jobs",
            args.jobs,
            "--select",
            ",".join(sorted(codes)),
        ],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if proc.returncode not in (0, 1):
        sys.exit(f"tflint-graph failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    doc = json.loads(proc.stdout)
    truth = {(str((root / p).resolve()), line, code) for p, line, code in read_labels(root, codes)}
    per_code: dict[str, Counter[str]] = {}
    false_confirmed = []
    false_total = 0
    for f in doc["findings"]:
        key = (str((root / f["path"]).resolve()), f["line"], f["code"])
        status = f["dynamic"]["status"]
        if key in truth:
            per_code.setdefault(f["code"], Counter())[status] += 1
        else:
            false_total += 1
            if status == "confirmed":
                false_confirmed.append(f"{f['path']}:{f['line']} {f['code']} {f['dynamic']}")
    print(f"{'code':<8}{'true':>6}{'conf':>6}{'not-r':>7}{'unver':>7}")
    total: Counter[str] = Counter()
    for code in sorted(per_code):
        c = per_code[code]
        total.update(c)
        n = sum(c.values())
        print(f"{code:<8}{n:>6}{c['confirmed']:>6}{c['not-reproduced']:>7}{c['unverified']:>7}")
    n = sum(total.values())
    rate = total["confirmed"] / n if n else 0.0
    print(
        f"{'total':<8}{n:>6}{total['confirmed']:>6}{total['not-reproduced']:>7}"
        f"{total['unverified']:>7}   confirmed {rate:.1%} of true findings"
    )
    print(f"false findings: {false_total}, confirmed: {len(false_confirmed)}")
    for line in false_confirmed:
        print("  FALSE CONFIRMED:", line)
    print(f"labels in corpus: {len(truth)}; found statically: {n}")
    print(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "")
    if args.verbose:
        for f in doc["findings"]:
            if f["dynamic"]["status"] != "confirmed":
                print(f"{f['path']}:{f['line']} {f['code']}: {f['dynamic']['evidence']}")


# For --decoys: a code whose evidence a finding of the first code cannot give.
DECOY = {
    "TFG101": "TFG103",
    "TFG102": "TFG105",
    "TFG103": "TFG104",
    "TFG104": "TFG107",
    "TFG105": "TFG102",
    "TFG106": "TFG101",
    "TFG107": "TFG101",
    "TFG108": "TFG101",
    "TFG109": "TFG201",
    "TFG201": "TFG204",
    "TFG202": "TFG205",
    "TFG203": "TFG207",
    "TFG204": "TFG201",
    "TFG205": "TFG209",
    "TFG207": "TFG101",
    "TFG208": "TFG204",
    "TFG209": "TFG201",
}


def decoys(root: Path, codes: tuple[str, ...]) -> None:
    """False findings on purpose: every static finding again under a code whose effect is
    not on that line (a print reported as a random draw...). None may come back confirmed."""
    import dataclasses

    from tflint_graph import Config, lint_paths
    from tflint_graph.dynamic.session import confirm_findings

    found = [f for f in lint_paths([root]) if f.code in codes]
    fake = [
        dataclasses.replace(f, code=DECOY[f.code])
        for f in found
        if f.code in DECOY
        and not any(
            g.line == f.line and g.path == f.path and g.code == DECOY[f.code] for g in found
        )
    ]
    checked, summary = confirm_findings(fake, Config(), timeout=120, jobs=2)
    bad = [f for f in checked if f.dynamic is not None and f.dynamic.status == "confirmed"]
    print(f"decoys: {len(fake)}, confirmed: {len(bad)}  ({summary.line()})")
    for f in bad:
        print(f"  DECOY CONFIRMED: {f.path}:{f.line} {f.code} {f.dynamic}")


if __name__ == "__main__":
    if "--decoys" in sys.argv:
        sys.argv.remove("--decoys")
        decoys(Path(sys.argv[1]).resolve(), select_codes("TFG1,TFG2"))
    else:
        main()
