"""One walk of a module that gathers what traced-code discovery and the rules ask about its
functions: every def and class, every call with the function that makes it, each body's
lambdas and returned values, and the ``self.x = value`` assignments of each class."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

import libcst as cst

from tflint_graph.model import walk

FunctionNode: TypeAlias = cst.FunctionDef | cst.Lambda


@dataclass
class FunctionFacts:
    """What one function body contains, gathered in a single walk of the module."""

    calls: list[cst.Call] = field(default_factory=list)
    lambdas: list[cst.Lambda] = field(default_factory=list)
    returns: list[cst.BaseExpression] = field(default_factory=list)


class ModuleFacts(walk.Visitor):
    """Walk a module once (``ModuleFacts(module)``) and read the lists."""

    def __init__(self, module: cst.Module) -> None:
        self.stack: list[FunctionNode | None] = [None]
        self.bodies: dict[FunctionNode | None, FunctionFacts] = {None: FunctionFacts()}
        self.functions: list[cst.FunctionDef] = []
        self.classes: list[cst.ClassDef] = []
        self.calls: list[tuple[FunctionNode | None, cst.Call]] = []
        self.class_stack: list[cst.ClassDef] = []
        # `self.x = value` per class (in its methods, and functions nested in them), with the
        # function that assigns it.
        self.self_values: dict[
            cst.ClassDef, dict[str, list[tuple[cst.BaseExpression, FunctionNode | None]]]
        ] = {}
        self.walk(module)

    def _here(self) -> FunctionFacts:
        return self.bodies[self.stack[-1]]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.functions.append(node)
        # Decorators, defaults and annotations belong to the enclosing scope.
        for dec in node.decorators:
            self.walk(dec)
        self.walk(node.params)
        if node.returns is not None:
            self.walk(node.returns)
        self.stack.append(node)
        self.bodies[node] = FunctionFacts()
        self.walk(node.body)
        self.stack.pop()
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self._here().lambdas.append(node)
        self.walk(node.params)
        self.stack.append(node)
        self.bodies[node] = FunctionFacts()
        self.walk(node.body)
        self.stack.pop()
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node)
        self.class_stack.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.class_stack.pop()

    def _record_self(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if (
            value is not None
            and self.class_stack
            and isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
        ):
            values = self.self_values.setdefault(self.class_stack[-1], {})
            values.setdefault(target.attr.value, []).append((value, self.stack[-1]))

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._record_self(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._record_self(node.target, node.value)

    def visit_Call(self, node: cst.Call) -> None:
        self._here().calls.append(node)
        self.calls.append((self.stack[-1], node))

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._here().returns.append(node.value)
