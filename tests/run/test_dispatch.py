"""How the rules run over one module: visitor rules in one traversal, then each whole-module
rule (``ModuleRule``) once, with the traversal's results complete."""

from __future__ import annotations

from typing import ClassVar

import libcst as cst
import pytest

from tflint_graph.checks import ALL_RULES, ModuleRule, Rule
from tflint_graph.core.config import Config
from tflint_graph.core.facts import ProjectView
from tflint_graph.core.finding import Severity
from tflint_graph.model.context import TracedFunction
from tflint_graph.run import dispatch

SOURCE = (
    "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    print(x)\n    print(x)\n    return x\n"
)


class CountPrints(Rule):
    """Test rule: counts print calls in traced code."""

    code = "TFG998"
    name = "count-prints"
    severity = Severity.INFO
    seen: ClassVar[list[str]] = []

    def visit_Call(self, node: cst.Call, fn: TracedFunction) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "print":
            CountPrints.seen.append(fn.display)


class ReportPrintCount(ModuleRule):
    """Test rule: reports, once per module, what the visitor rule counted."""

    code = "TFG999"
    name = "report-print-count"
    severity = Severity.INFO
    checked: ClassVar[int] = 0

    def check(self) -> None:
        ReportPrintCount.checked += 1
        count = len(CountPrints.seen)
        self.report(self.ctx.module.body[0], f"{count} prints", None)


@pytest.fixture
def rules(monkeypatch: pytest.MonkeyPatch) -> None:
    CountPrints.seen.clear()
    ReportPrintCount.checked = 0
    monkeypatch.setattr(dispatch, "ALL_RULES", (ReportPrintCount, CountPrints))


@pytest.mark.usefixtures("rules")
def test_a_module_rule_runs_once_after_the_traversal() -> None:
    module = cst.parse_module(SOURCE)
    findings, _, _ = dispatch.run_rules(module, SOURCE, "m.py", Config(), ProjectView())
    assert ReportPrintCount.checked == 1
    assert [(f.code, f.message) for f in findings] == [("TFG999", "2 prints")]


@pytest.mark.usefixtures("rules")
def test_a_disabled_module_rule_does_not_run() -> None:
    module = cst.parse_module(SOURCE)
    dispatch.run_rules(module, SOURCE, "m.py", Config(ignore=("TFG999",)), ProjectView())
    assert ReportPrintCount.checked == 0


def test_whole_module_rules_are_module_rules() -> None:
    # TFG301/303/304/401/403 judge the module as a whole; none of them visits nodes.
    whole = {r.code for r in ALL_RULES if issubclass(r, ModuleRule)}
    assert whole == {"TFG301", "TFG303", "TFG304", "TFG401", "TFG403"}
    for rule in ALL_RULES:
        if issubclass(rule, ModuleRule):
            assert not [a for a in dir(rule) if a.startswith("visit_")], rule.code
