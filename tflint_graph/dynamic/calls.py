"""Arguments the module's own code passes: constructor calls and ``compile()`` (SPEC §4).

A class whose ``__init__`` takes objects (``GAN(make_discriminator(), make_generator())``)
cannot be built from guesses, but the module usually builds it somewhere itself, often under
``if __name__ == "__main__":`` or in an ``export(model, vocabulary)`` helper.  This module
finds such a call and rewrites each argument so that it uses only names the imported module
defines: a name assigned once in the same scope is replaced by its value, a parameter of the
enclosing function by the argument one of its own call sites passes (a few levels deep).
The result is source text the child evaluates in the module's namespace, as the module itself
would have.  Pure ``ast``; nothing is evaluated here.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator
from dataclasses import dataclass

from tflint_graph.source.prefilter import is_main_guard

__all__ = ["CallSources", "ModuleCalls", "is_main_guard"]

_BUILTINS = frozenset(dir(builtins))
_DEPTH = 4

Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.If | ast.Module


@dataclass(frozen=True)
class CallSources:
    """A call's arguments as source text over module-level names, and where it was."""

    args: tuple[str, ...]
    kwargs: tuple[tuple[str, str], ...]
    line: int

    def shown(self, callee: str) -> str:
        parts = [*self.args, *(f"{k}={v}" for k, v in self.kwargs)]
        text = f"{callee}({', '.join(parts)})"
        return text if len(text) <= 100 else text[:97] + "..."


def _bound_by(stmt: ast.stmt) -> Iterator[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield stmt.name
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:
            yield (alias.asname or alias.name).split(".")[0]
    elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    yield node.id
    elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                yield from _bound_by(child)
            elif isinstance(child, ast.ExceptHandler):
                for inner in child.body:
                    yield from _bound_by(inner)


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.expr]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return self.values[node.id]
        return node


class ModuleCalls:
    """Calls in one module's source, and their arguments rewritten over module-level names."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        # What exists once the module is imported: a main-guard block never ran.
        self.globals: set[str] = set()
        for stmt in tree.body:
            if not is_main_guard(stmt):
                self.globals.update(_bound_by(stmt))
        self.functions = {
            s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.scope_of: dict[int, Scope] = {}
        self._index(tree, tree)

    def _index(self, node: ast.AST, scope: Scope) -> None:
        for child in ast.iter_child_nodes(node):
            inner: Scope = scope
            function = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            main = isinstance(child, ast.stmt) and scope is self.tree and is_main_guard(child)
            if function or main:
                inner = child  # type: ignore[assignment]
            self.scope_of[id(child)] = inner
            self._index(child, inner)

    def calls_of(self, name: str) -> Iterator[ast.Call]:
        """Calls of ``name(...)`` or ``something.name(...)``, in source order."""
        found = [
            n
            for n in ast.walk(self.tree)
            if isinstance(n, ast.Call)
            and (
                (isinstance(n.func, ast.Name) and n.func.id == name)
                or (isinstance(n.func, ast.Attribute) and n.func.attr == name)
            )
        ]
        yield from sorted(found, key=lambda n: (n.lineno, n.col_offset))

    def sources(self, call: ast.Call) -> CallSources | None:
        """The call's arguments over module-level names, or None when one cannot be."""
        scope = self.scope_of.get(id(call), self.tree)
        args = []
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                return None
            text = self._resolve(arg, scope, 0)
            if text is None:
                return None
            args.append(text)
        kwargs = []
        for kw in call.keywords:
            if kw.arg is None:
                return None
            text = self._resolve(kw.value, scope, 0)
            if text is None:
                return None
            kwargs.append((kw.arg, text))
        return CallSources(tuple(args), tuple(kwargs), call.lineno)

    def _passed(
        self, name: str, params: list[str], method: bool
    ) -> Iterator[tuple[str, ast.expr, Scope]]:
        """(parameter, argument, scope of the call) for the module's own calls of ``name``,
        in source order: ``obj.name(...)`` for a method, a plain ``name(...)`` else."""
        for call in self.calls_of(name):
            if isinstance(call.func, ast.Attribute) != method:
                continue
            scope = self.scope_of.get(id(call), self.tree)
            given = list(zip(params, call.args, strict=False))
            given += [(k.arg, k.value) for k in call.keywords if k.arg in params]
            for param, expr in given:
                if not isinstance(expr, ast.Starred):
                    yield param, expr, scope

    def literals(self, name: str, params: list[str], method: bool) -> dict[str, object]:
        """Python literals the module's own calls of ``name`` pass for ``params`` (the first
        call that passes one wins): ``augment(image, 0.5)`` makes ``strength`` 0.5."""
        found: dict[str, object] = {}
        for param, expr, _ in self._passed(name, params, method):
            if param in found:
                continue
            try:
                found[param] = ast.literal_eval(expr)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
        return found

    def arguments(self, name: str, params: list[str], method: bool) -> dict[str, str]:
        """Source text over module-level names that the module's own calls of ``name`` pass
        for ``params`` (the first call that can give one wins): ``optimizer_step(model,
        optimizer, x, y)`` under the main guard gives ``model`` as ``build_model()``."""
        found: dict[str, str] = {}
        for param, expr, scope in self._passed(name, params, method):
            if param in found:
                continue
            text = self._resolve(expr, scope, 0)
            if text is not None:
                found[param] = text
        return found

    def constructor(self, class_name: str) -> CallSources | None:
        """The first call of ``class_name(...)`` whose arguments can all be rewritten."""
        for call in self.calls_of(class_name):
            if isinstance(call.func, ast.Name) and (call.args or call.keywords):
                found = self.sources(call)
                if found is not None:
                    return found
        return None

    def method_call(self, class_name: str, method: str) -> CallSources | None:
        """``x.method(...)`` on a name the same scope binds to ``class_name(...)``."""
        for call in self.calls_of(method):
            func = call.func
            if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
                continue
            scope = self.scope_of.get(id(call), self.tree)
            value = self._single_value(func.value.id, scope)
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == class_name
            ):
                found = self.sources(call)
                if found is not None:
                    return found
        return None

    # -- rewriting

    def _resolve(self, expr: ast.expr, scope: Scope, depth: int) -> str | None:
        if depth > _DEPTH:
            return None
        values: dict[str, ast.expr] = {}
        for name in sorted(self._free_names(expr)):
            if self._local(name, scope):
                value = self._single_value(name, scope)
                if value is None:
                    value_text = self._parameter_value(name, scope, depth)
                else:
                    value_text = self._resolve(value, scope, depth + 1)
                if value_text is None:
                    return None
                values[name] = ast.parse(value_text, mode="eval").body
            elif name not in self.globals and name not in _BUILTINS:
                return None
        rewritten = _Substitute(values).visit(ast.parse(ast.unparse(expr), mode="eval"))
        return ast.unparse(rewritten)

    def _free_names(self, expr: ast.expr) -> set[str]:
        loaded = {
            n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        bound = set()
        for node in ast.walk(expr):
            if isinstance(node, ast.comprehension):
                bound |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
            elif isinstance(node, ast.Lambda):
                bound |= {a.arg for a in [*node.args.posonlyargs, *node.args.args]}
        return loaded - bound

    def _local(self, name: str, scope: Scope) -> bool:
        """Whether ``name`` is bound in ``scope`` rather than at module level."""
        if scope is self.tree:
            return False
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = scope.args
            every = [*params.posonlyargs, *params.args, *params.kwonlyargs]
            if any(a.arg == name for a in every):
                return True
        return self._assigned(name, scope) > 0

    def _assigned(self, name: str, scope: Scope) -> int:
        count = 0
        for node in ast.walk(scope):
            if self.scope_of.get(id(node)) is not scope and node is not scope:
                continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == name:
                count += 1
        return count

    def _single_value(self, name: str, scope: Scope) -> ast.expr | None:
        """The value of the one plain assignment ``name = value`` in ``scope``."""
        if scope is self.tree or self._assigned(name, scope) != 1:
            return None
        for node in ast.walk(scope):
            if (
                isinstance(node, ast.Assign)
                and self.scope_of.get(id(node)) is scope
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == name
            ):
                return node.value
        return None

    def _parameter_value(self, name: str, scope: Scope, depth: int) -> str | None:
        """A parameter's argument at the first call site of its function that can give it."""
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if self.functions.get(scope.name) is not scope:
            return None
        params = [*scope.args.posonlyargs, *scope.args.args]
        index = next((i for i, a in enumerate(params) if a.arg == name), None)
        defaults = dict(
            zip(
                [a.arg for a in params[len(params) - len(scope.args.defaults) :]],
                scope.args.defaults,
                strict=True,
            )
        )
        for call in self.calls_of(scope.name):
            if not isinstance(call.func, ast.Name) or self.scope_of.get(id(call)) is scope:
                continue
            caller = self.scope_of.get(id(call), self.tree)
            given = next((k.value for k in call.keywords if k.arg == name), None)
            if given is None and index is not None and index < len(call.args):
                given = call.args[index]
                if isinstance(given, ast.Starred):
                    given = None
            if given is None:
                continue
            text = self._resolve(given, caller, depth + 1)
            if text is not None:
                return text
        if name in defaults:
            return self._resolve(defaults[name], self.tree, depth + 1)
        return None
