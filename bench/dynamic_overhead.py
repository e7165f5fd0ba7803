"""Wall time of dynamic mode per module against importing it and tracing its functions once.

Usage: python bench/dynamic_overhead.py PROJECT [--rounds 3] [--timeout 300] [--verbose]

For every module of PROJECT with findings dynamic mode would check, two child processes
(the same isolation as ``--dynamic``: ``run_isolated``), alternating round by round:

- *baseline*: import the module, build each planned target and trace it once
  (``get_concrete_function``) with its first planned input, the module's own arguments built
  as dynamic mode builds them (a model its builder makes), nothing else.  Targets whose first
  input does not trace are counted (``--verbose`` says why): for those the baseline stops
  early, where dynamic mode goes on with other guesses;
- *dynamic*: the full ``confirm_module`` run (probes, symbolic trace, three calls,
  experiments, retries with other guesses).

Prints per module the median wall time of each and their ratio; the target (issue 21) is a
ratio of at most 2.  Interpreter start-up and the TensorFlow import count in both.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from tflint_graph.api import lint_paths
from tflint_graph.core.config import Config, find_config, load_file
from tflint_graph.dynamic.isolation import module_name_for, run_isolated
from tflint_graph.dynamic.plan import plan_module
from tflint_graph.dynamic.verdicts import confirm_module, params_for
from tflint_graph.source.modules import package_root

_CHILD = Path(__file__).resolve().parent.parent / "tflint_graph" / "dynamic" / "child.py"

# Import the module (the isolation does), then trace each target once with its first planned
# input, the module's own arguments built as dynamic mode builds them (a model its builder
# makes): no retries with other guesses, which are dynamic mode's own cost.
_BASELINE = """
import importlib.util as _util, json
_spec = _util.spec_from_file_location("_child", {child!r})
_child = _util.module_from_spec(_spec)
_spec.loader.exec_module(_child)
_P = json.loads({params!r})
traced, errors = 0, []
for target in _P["targets"]:
    try:
        runner = _child._runner(module, target)
        attempt = target["attempts"][0]
        concrete = [_child.make_input(s, 1, module=module) for s in attempt["args"]]
        runner.sets = [concrete]
        runner.prepare(concrete)
        args = [_child.symbolic_input(s, module) for s in attempt["args"]]
        kwargs = {{k: _child.symbolic_input(s, module) for k, s in attempt["kwargs"].items()}}
        if runner.traces_symbolically():
            runner.trace(args, kwargs)
        else:
            runner.call(concrete, {{}}, 0)
        traced += 1
    except Exception as exc:
        errors.append(f"{{target.get('path', '?')}}: {{type(exc).__name__}}: {{exc}}"[:300])
report({{"traced": traced, "errors": errors}})
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--verbose", action="store_true", help="why a target was not traced")
    args = parser.parse_args()
    project = args.project.resolve()
    found_config = find_config([project])
    config = load_file(found_config) if found_config is not None else Config()
    findings = list(lint_paths([project], config))
    by_path: dict[str, list] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    rows = []
    for path, found in sorted(by_path.items()):
        file = Path(path)
        root, _ = package_root(file)
        name, _ = module_name_for(file.resolve(), root)
        plan = plan_module(
            path, file.read_text(encoding="utf-8"), found, config, name, config.dynamic.examples
        )
        if not plan.targets:
            continue
        params = json.dumps(params_for(plan.targets, unknown=config.dynamic.unknown_dim))
        payload = _BASELINE.format(child=str(_CHILD), params=params)
        base, full = [], []
        traced, errors = None, []
        for _ in range(args.rounds):
            start = time.monotonic()
            child = run_isolated(
                file, root, payload, timeout=args.timeout, memory_mb=None, output_limit=65536
            )
            base.append(time.monotonic() - start)
            if isinstance(child.data, dict):
                traced = child.data.get("traced", traced)
                errors = child.data.get("errors", [])
            start = time.monotonic()
            confirm_module(file, root, plan.targets, timeout=args.timeout)
            full.append(time.monotonic() - start)
        b, d = statistics.median(base), statistics.median(full)
        rows.append((file.relative_to(project), len(plan.targets), b, d))
        for error in errors if args.verbose else ():
            print(f"  baseline could not trace {error}")
        print(
            f"{file.relative_to(project)}: baseline {b:.1f} s ({traced} of {len(plan.targets)} "
            f"targets traced), dynamic {d:.1f} s, {d / b:.2f}x"
        )
    if rows:
        worst = max(d / b for _, _, b, d in rows)
        total = sum(d for *_, d in rows) / sum(b for _, _, b, _ in rows)
        print(f"{len(rows)} modules; worst ratio {worst:.2f}x, overall {total:.2f}x (target 2x)")


if __name__ == "__main__":
    main()
