"""What the engine learns from CPython's ``ast`` before deciding whether a file needs libcst.

Most files of a real tree hold no traced code: the engine checks their syntax with
``ast.parse`` (which it runs anyway), asks ``may_hold_traced`` whether a TensorFlow module
names anything that could make code traced, and summarizes the others from that tree,
never paying for a libcst parse.  The summary functions are twins of the libcst ones in
``summary.py`` and give the same result (``tests/source/test_prefilter.py`` compares them on every
fixture, and whole runs with and without this shortcut).
"""

from __future__ import annotations

import ast
import functools
import os
import re
import threading

from tflint_graph.core.facts import LOCAL, ProjectView, is_step_name, may_be_project
from tflint_graph.core.paths import is_test_file
from tflint_graph.core.vocabulary import (
    DATASET_CALLBACK_METHODS,
    DATASET_EXPERIMENTAL,
    GUARD_WORDS,
    TRACE_WORDS,
    canonical,
    keras_kinds_of,
)

# A module that never mentions TensorFlow or Keras cannot contain code SPEC §1 calls traced,
# nor anything a rule reports (every root, call-site and export rule needs a TensorFlow or
# Keras name; cross-module facts arrive through the view), so it skips libcst entirely.  A
# plain substring search: 1000 files cost well under a millisecond each.
MAY_TRACE = re.compile(r"tensorflow|keras")  # `tf_keras` contains `keras`


def enabled() -> bool:
    """Whether modules that cannot hold traced code skip libcst (the default).

    ``TFLINT_GRAPH_NO_PREFILTER=1`` in the environment restores the old path (libcst parse and
    libcst summary for every module) to compare results and timings side by side.  Results
    are the same (``tests/source/test_prefilter.py``) except for a file that CPython accepts
    but libcst cannot parse: without TensorFlow in it, it is no longer a TFG001.
    """
    return os.environ.get("TFLINT_GRAPH_NO_PREFILTER", "") != "1"


# CPython 3.11 keeps the depth of the tree it is building in state that threads share: two
# ``ast.parse`` calls at once can fail with "SystemError: AST constructor recursion depth
# mismatch" (python/cpython#106905).  The library may be called from several threads.
_parse_lock = threading.Lock()


def parse_python(source: str) -> ast.Module:
    """``ast.parse(source)``, one thread at a time (it runs under the GIL: nothing is lost)."""
    with _parse_lock:
        return ast.parse(source)


def dotted(node: ast.expr) -> str:
    """``a.b.c`` for a chain of attributes on a name; ``""`` where libcst's twin gives it."""
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def module_imports(tree: ast.Module, view: ProjectView) -> dict[str, str]:
    """Twin of ``summary.module_imports``: module-level import bindings, absolute."""
    found: dict[str, str] = {}
    statements = list(tree.body)
    for stmt in tree.body:
        if isinstance(stmt, ast.Try):
            statements += stmt.body
    loaders = _import_helpers(tree, view)
    for stmt in statements:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            found.update(_bindings(stmt, view))
        elif (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name)
            and stmt.value.func.id in loaders
        ):
            found[stmt.targets[0].id] = loaders[stmt.value.func.id]
    return found


def _import_helpers(tree: ast.Module, view: ProjectView) -> dict[str, str]:
    """Twin of ``summary._import_helpers``: functions that import a module and return it."""
    found: dict[str, str] = {}
    for stmt in tree.body:
        if not isinstance(stmt, ast.FunctionDef):
            continue
        imports: dict[str, str] = {}
        returned: set[str] = set()
        for node in ast.walk(stmt):
            if isinstance(node, ast.Import | ast.ImportFrom) and node is not stmt:
                imports.update(_bindings(node, view))
            elif isinstance(node, ast.Return) and node.value is not None:
                value = node.value
                if isinstance(value, ast.Name):
                    returned.add(value.id)
                elif not (isinstance(value, ast.Constant) and value.value is None):
                    returned.add("")
        modules = {imports.get(name) for name in returned}
        if len(modules) == 1 and None not in modules:
            found[stmt.name] = modules.pop()  # type: ignore[assignment]
    return found


def _bindings(stmt: ast.Import | ast.ImportFrom, view: ProjectView) -> list[tuple[str, str]]:
    """(bound name, absolute name) for each name an import statement binds."""
    found: list[tuple[str, str]] = []
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname is not None:
                found.append((alias.asname, alias.name))
            else:  # `import a.b` binds `a`
                head = alias.name.partition(".")[0]
                found.append((head, head))
    elif not any(alias.name == "*" for alias in stmt.names):
        base = "." * stmt.level + (stmt.module or "")
        sep = "" if not base or base.endswith(".") else "."
        for alias in stmt.names:
            bound = alias.asname if alias.asname is not None else alias.name
            found.append((bound, view.absolute(f"{base}{sep}{alias.name}")))
    return found


def module_classes(tree: ast.Module, imports: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Twin of ``summary.module_classes``: module-level classes and their bases."""
    classes = [s for s in tree.body if isinstance(s, ast.ClassDef)]
    names = {c.name for c in classes}
    found: dict[str, tuple[str, ...]] = {}
    for cls in classes:
        refs: list[str] = []
        for base in cls.bases:
            # libcst keeps `*bases` as an argument whose value is the name after the star.
            text = dotted(base.value if isinstance(base, ast.Starred) else base)
            head, _, tail = text.partition(".")
            if head in imports:
                refs.append(f"{imports[head]}.{tail}" if tail else imports[head])
            elif head in names and not tail:
                refs.append(LOCAL + head)
        found[cls.name] = tuple(refs)
    return found


def called_imports(tree: ast.Module, view: ProjectView) -> set[str]:
    """Twin of ``summary.called_imports``: the project names the module may call."""
    return Scan(tree, view).called_imports()


def project_calls(
    imports: dict[str, set[str]],
    instances: list[tuple[str, str]],
    calls: list[tuple[str, str | None, str | None]],
    first_party: frozenset[str] = frozenset(),
) -> set[str]:
    """The project names a module may call, given every import binding in it (any scope),
    every ``name = <call of a dotted name>`` and every call (its dotted callee, and for
    ``name.method(...)`` the method and the name).

    A superset of what the full analysis finds (which follows scopes): an imported name
    called anywhere, and ``Cls.method`` for ``obj.method(...)`` wherever ``obj = Cls(...)``.
    The run uses it to tell the module which calls are tf.functions of other modules; an
    extra name only costs a lookup, a missing one loses a finding (TFG303 at a call site).
    """

    def absolute(text: str) -> set[str]:
        head, _, tail = text.partition(".")
        return {f"{full}.{tail}" if tail else full for full in imports.get(head, ())}

    classes: dict[str, set[str]] = {}
    for name, callee in instances:
        classes.setdefault(name, set()).update(absolute(callee))
    found: set[str] = set()
    for callee, method, receiver in calls:
        found.update(absolute(callee))
        if method is not None and receiver in classes:
            found.update(f"{cls}.{method}" for cls in classes[receiver])
    return {name for name in found if may_be_project(name, first_party)}


def accessor_calls(path: str, scan: Scan) -> dict[str, bool]:
    """``ModuleSummary.accessor_calls`` of a module with no traced code: an ``x.name()``
    call is eager unless it lies in a step function (``train_step``)."""
    if is_test_file(path):
        return {}
    steps = scan.step_spans
    found: dict[str, bool] = {}
    for call in scan._calls:
        func = call.func
        if not isinstance(func, ast.Attribute) or call.args or call.keywords:
            continue
        in_step = any(first <= call.lineno <= last for first, last in steps)
        found[func.attr] = found.get(func.attr, False) or not in_step
    return found


def global_state(
    tree: ast.Module, module: str | None, source: str
) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """``ModuleSummary.global_reads`` / ``global_writes`` of a module with no traced code
    (``model.setup`` gives them for the others): functions that only return a module
    global (or ``not`` it), and functions that set module globals (``global`` statements),
    with the module's functions they call."""
    reads: dict[str, frozenset[str]] = {}
    writes: dict[str, frozenset[str]] = {}
    if module is None:
        return reads, writes
    names: set[str] = set()
    for stmt in tree.body:
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, ast.AnnAssign):
            targets = [stmt.target]
        elif isinstance(stmt, ast.Try | ast.If):
            for inner in ast.walk(stmt):
                if isinstance(inner, ast.Assign):
                    targets += inner.targets
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    functions = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
    own: dict[str, set[str]] = {}
    calls: dict[str, set[str]] = {}
    writers = "global " in source  # no `global` statement: no function sets a global
    for name, fn in functions.items():
        declared = (
            {n for node in ast.walk(fn) if isinstance(node, ast.Global) for n in node.names}
            if writers
            else set()
        )
        own[name] = (
            {
                t.id
                for node in ast.walk(fn)
                if isinstance(node, ast.Assign | ast.AugAssign)
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(t, ast.Name) and t.id in declared and t.id in names
            }
            if declared
            else set()
        )
        calls[name] = (
            {
                node.func.id
                for node in ast.walk(fn)
                if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in functions
            }
            if writers
            else set()
        )
        body = [s for s in fn.body if not _is_docstring(s)]
        if (
            not (fn.args.args or fn.args.posonlyargs or fn.args.kwonlyargs)
            and len(body) == 1
            and isinstance(body[0], ast.Return)
            and (value := _unnegated(body[0].value)) is not None
            and isinstance(value, ast.Name)
            and value.id in names
        ):
            reads[name] = frozenset({f"{module}.{value.id}"})
    for name in functions:
        seen, todo, found = {name}, [name], set()
        while todo:
            current = todo.pop()
            found |= own[current]
            for callee in calls[current] - seen:
                seen.add(callee)
                todo.append(callee)
        if found:
            writes[name] = frozenset(f"{module}.{g}" for g in found)
    return reads, writes


def tracing_values(tree: ast.Module, imports: dict[str, str]) -> dict[str, bool]:
    """``ModuleSummary.tracing_values`` of a module the prefilter keeps out of full analysis:
    its module-level functions that only return a test whose value while tracing is known
    (``model.eager``): ``hasattr(x, "numpy")`` (False), ``hasattr(x, "graph")`` (True),
    ``tf.executing_eagerly()`` (False), ``tf.inside_function()`` (True), and ``not`` of one.
    The libcst analysis knows more forms; these are the ones a helper module without traced
    code holds (``def is_eager(x): return hasattr(x, "numpy")``)."""
    found: dict[str, bool] = {}
    for stmt in tree.body:
        if not isinstance(stmt, ast.FunctionDef):
            continue
        body = stmt.body[1:] if stmt.body and _is_docstring(stmt.body[0]) else stmt.body
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            value = _tracing_value(body[0].value, imports)
            if value is not None:
                found[stmt.name] = value
    return found


def _tracing_value(expr: ast.expr, imports: dict[str, str]) -> bool | None:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        inner = _tracing_value(expr.operand, imports)
        return None if inner is None else not inner
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    if isinstance(func, ast.Name) and func.id == "hasattr" and len(expr.args) >= 2:
        attr = expr.args[1]
        if isinstance(attr, ast.Constant) and attr.value == "numpy":
            return False
        if isinstance(attr, ast.Constant) and attr.value == "graph":
            return True
        return None
    name = dotted(func)
    head, _, rest = name.partition(".")
    absolute = imports.get(head, head) + ("." + rest if rest else "")
    if canonical(absolute) == "tensorflow.executing_eagerly" and not expr.args:
        return False
    if canonical(absolute) == "tensorflow.inside_function" and not expr.args:
        return True
    return None


def run_once_decorators(tree: ast.Module) -> frozenset[str]:
    """Module-level functions that run what they decorate at most once (per object, per
    key): every call of a parameter in their body or their nested functions (the decorated
    function ``f``, a wrapper's ``wrapped``) sits in a branch of an ``if`` that also records
    the run, writing or mutating something its test reads (``if key not in seen: f();
    seen.add(key)``, ``if not w.done: f(); w.done = True``).  What such a decorator wraps
    is one-time setup (``model.setup``)."""
    found: set[str] = set()
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.FunctionDef)
            and stmt.args.args
            # The wrapper it returns is defined in its body.
            and any(isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) for s in stmt.body)
            and _runs_once(stmt)
        ):
            found.add(stmt.name)
    return frozenset(found)


# Escape hatches by their last name (`tf.py_function`, `tf.compat.v1.py_func`): the names are
# TensorFlow's alone, and a fact about plain Python needs no import resolution.
_ESCAPE_LAST = frozenset({"py_function", "numpy_function", "py_func"})

EscapeParams = dict[str, tuple[tuple[str, ...], frozenset[str]]]


def escape_params(tree: ast.Module, source: str) -> EscapeParams:
    """Module-level functions and methods (by qualname) with parameters that only ever reach
    an escape hatch as its function: handed to ``tf.py_function``/``tf.numpy_function``, or
    called only in nested functions handed to one.  Each with its positional parameter names
    as callers fill them (``self``/``cls`` left out).  What callers pass there runs eagerly
    on every call, never while tracing (``ModuleSummary.escape_params``)."""
    found: EscapeParams = {}
    if not any(name in source for name in _ESCAPE_LAST):
        return found
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            _escape_entry(found, stmt.name, stmt, bound=False)
        elif isinstance(stmt, ast.ClassDef):
            for inner in stmt.body:
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    static = any(dotted(d) == "staticmethod" for d in inner.decorator_list)
                    _escape_entry(found, f"{stmt.name}.{inner.name}", inner, bound=not static)
    return found


def _escape_entry(
    found: EscapeParams, qualname: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, bound: bool
) -> None:
    args = fn.args
    positional = tuple(a.arg for a in [*args.posonlyargs, *args.args])[1 if bound else 0 :]
    names = {*positional, *(a.arg for a in args.kwonlyargs)}
    parents = {c: n for n in ast.walk(fn) for c in ast.iter_child_nodes(n)}
    escaping = frozenset(n for n in names if _only_escapes(fn, n, parents))
    if escaping:
        found[qualname] = (positional, escaping)


def _escape_call(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """``node`` is given to an escape hatch as its function (``func=node`` included)."""
    parent = parents.get(node)
    if isinstance(parent, ast.keyword):
        parent = parents.get(parent)
    return _hands_to_escape(parent, node)


def _hands_to_escape(call: ast.AST | None, node: ast.AST) -> bool:
    """``call`` gives ``node`` to an escape hatch as its function."""
    if not isinstance(call, ast.Call) or dotted(call.func).rpartition(".")[2] not in _ESCAPE_LAST:
        return False
    return (bool(call.args) and call.args[0] is node) or any(
        k.arg == "func" and k.value is node for k in call.keywords
    )


def _only_escapes(fn: ast.AST, name: str, parents: dict[ast.AST, ast.AST]) -> bool:
    uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name]
    if not uses:
        return False
    for use in uses:
        parent = parents.get(use)
        if _escape_call(use, parents):
            continue
        if isinstance(parent, ast.Call) and parent.func is use:
            inner = parents.get(parent)
            while inner is not None and not isinstance(
                inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            ):
                inner = parents.get(inner)
            if inner is not None and inner is not fn and _handed_to_escape(inner, fn, parents):
                continue
        return False
    return True


def _handed_to_escape(inner: ast.AST, fn: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Nested ``inner`` is only ever the function of an escape hatch in ``fn``."""
    if isinstance(inner, ast.Lambda):
        return _escape_call(inner, parents)
    name = getattr(inner, "name", "")
    refs = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name]
    return bool(refs) and all(_escape_call(r, parents) for r in refs)


def _runs_once(fn: ast.FunctionDef) -> bool:
    params: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args
            params.update(a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs])
    called = False
    todo: list[tuple[ast.AST, tuple[tuple[ast.If, list[ast.stmt]], ...]]] = [(fn, ())]
    while todo:
        node, branches = todo.pop()
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in params
        ):
            called = True
            if not any(_records_run(test.test, body) for test, body in branches):
                return False
        if isinstance(node, ast.If):
            todo.append((node.test, branches))
            for body in (node.body, node.orelse):
                todo += [(stmt, (*branches, (node, body))) for stmt in body]
            continue
        todo += [(child, branches) for child in child_nodes(node)]
    return called


def _records_run(test: ast.expr, body: list[ast.stmt]) -> bool:
    """``body`` writes or mutates a name or attribute chain that ``test`` reads (or a part
    of it: ``seen[key] = True`` for ``key in seen``)."""
    inner = {id(n.value) for n in ast.walk(test) if isinstance(n, ast.Attribute)}
    read = {
        text
        for node in ast.walk(test)
        if isinstance(node, ast.Name | ast.Attribute) and id(node) not in inner
        if (text := dotted(node)) and not text.startswith(".")
    }
    for stmt in body:
        for node in ast.walk(stmt):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                targets = [node.func.value]  # `seen.add(key)`
            for target in targets:
                while isinstance(target, ast.Subscript):
                    target = target.value
                written = dotted(target)
                if written and any(written == r or written.startswith(r + ".") for r in read):
                    return True
    return False


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _unnegated(expr: ast.expr | None) -> ast.expr | None:
    while isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        expr = expr.operand
    return expr


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes`` as a list, without its generators (about twice as fast:
    every file's tree is walked once, by the engine's nesting guard)."""
    found: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if type(value) is list:
            found += [v for v in value if isinstance(v, ast.AST)]
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


class Triggers:
    """The names without which a TensorFlow module, told nothing by the rest of the run,
    has no traced code and nothing an enabled rule checks (SPEC §1): the words of traced
    code (``TRACE_WORDS``: tf.function in any spelling, Keras compile() and Lambda,
    vectorized_map), tf.data's callbacks, and the ``TRIGGERS`` of the enabled rules
    (``run.dispatch.rule_triggers``).  Matched against whole identifiers and the parts of
    dotted import paths: ``reduce_sum`` is not ``reduce``, and words in strings, comments
    and docstrings do not count.  Keras classes are judged by their bases."""

    def __init__(self, rule_words: frozenset[str]) -> None:
        self.names = TRACE_WORDS | GUARD_WORDS | rule_words
        # ``function`` is a common name (``common.function``, ``inspect.isfunction``): it
        # counts only where it resolves to tf.function, as the analysis resolves it.
        self.unresolved = self.names - {"function"}
        # The raw text first: a module with none of these words (nor a Keras base) needs no walk.
        words = self.names | DATASET_CALLBACK_METHODS | DATASET_EXPERIMENTAL | {"keras"}
        self.text = re.compile("|".join(sorted(words)))


@functools.lru_cache(maxsize=64)
def triggers(rule_words: frozenset[str]) -> Triggers:
    """The prefilter's words for a set of enabled rules' trigger words (one per selection)."""
    return Triggers(rule_words)


def may_hold_traced(scan: Scan, words: Triggers) -> bool:
    """Whether the scanned code names anything in ``words``, calls a method or
    function of tf.data that takes a callback, or has a class with a Keras model, layer,
    loss or metric among its bases.

    ``tf.function`` and the bases are read as the analysis reads them (an imported name, in
    any spelling ``canonical`` knows), with every import of the module in any scope; a base
    defined in another module of the run reaches the module through the view later.
    """
    names, attributes, imports = scan.names, scan.attributes, scan.imports
    if not names.isdisjoint(words.unresolved):
        return True
    if not attributes.isdisjoint(DATASET_CALLBACK_METHODS):
        return True
    if "function" in names and (
        any(canonical(full) == _TF_FUNCTION for fulls in imports.values() for full in fulls)
        or any(_TF_FUNCTION in scan.absolute(ref) for ref in scan.function_refs)
    ):
        return True
    imported = {full.rpartition(".")[2] for fulls in imports.values() for full in fulls}
    if not DATASET_EXPERIMENTAL.isdisjoint(attributes | imported):
        return True
    return any(keras_kinds_of(scan.absolute(base)) for base in scan.bases)


_TF_FUNCTION = "tensorflow.function"


# Nodes ``Scan`` takes something from (besides names, attributes and calls).
_NOTED = frozenset(
    {
        ast.keyword,
        ast.arg,
        ast.Assign,
        ast.AnnAssign,
        ast.Import,
        ast.ImportFrom,
        ast.ClassDef,
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.Global,
        ast.Nonlocal,
    }
)
# Nodes without children: contexts (Load, Store, Del) and operators.
LEAVES = frozenset(
    leaf
    for base in (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
    for leaf in base.__subclasses__()
)


class Scan:
    """What one walk of a module's CPython tree tells without libcst: every identifier the
    code uses or binds (with the parts of dotted import paths), the attribute names among
    them, every import binding in any scope (absolute), the dotted bases of every class,
    the dotted ``x.function`` references, every call and every ``name = <call>``."""

    def __init__(self, tree: ast.AST, view: ProjectView) -> None:
        names: set[str] = set()
        attributes: set[str] = set()
        imports: dict[str, set[str]] = {}
        self.bases: list[str] = []
        self.function_refs: list[str] = []
        self._calls: list[ast.Call] = []
        self.step_spans: list[tuple[int, int]] = []  # the lines of `train_step`-like defs
        self._instances: list[tuple[str, ast.expr]] = []
        # Every TensorFlow module's tree is walked: exact type tests (no subclasses exist) and
        # children read in place, leaves such as Load or Add never stacked.
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.Name:
                names.add(node.id)  # type: ignore[attr-defined]
                continue
            if kind is ast.Attribute:
                attributes.add(node.attr)  # type: ignore[attr-defined]
                if node.attr == "function":  # type: ignore[attr-defined]
                    self.function_refs.append(dotted(node))  # type: ignore[arg-type]
                stack.append(node.value)  # type: ignore[attr-defined]  # not its Load/Store
                continue
            if kind is ast.Constant:
                continue
            if kind is ast.Call:
                self._calls.append(node)  # type: ignore[arg-type]
            elif kind in _NOTED:
                if isinstance(node, ast.keyword | ast.arg):
                    if node.arg is not None:
                        names.add(node.arg)
                elif isinstance(node, ast.Assign):
                    self._instances += [
                        (t.id, node.value) for t in node.targets if isinstance(t, ast.Name)
                    ]
                elif isinstance(node, ast.AnnAssign):
                    if isinstance(node.target, ast.Name) and node.value is not None:
                        self._instances.append((node.target.id, node.value))
                elif isinstance(node, ast.Import | ast.ImportFrom):
                    for bound, full in _bindings(node, view):
                        imports.setdefault(bound, set()).add(full)
                    if isinstance(node, ast.ImportFrom) and node.module is not None:
                        names.update(node.module.split("."))
                    for alias in node.names:
                        names.update(alias.name.split("."))
                        if alias.asname is not None:
                            names.add(alias.asname)
                    continue
                elif isinstance(node, ast.ClassDef):
                    names.add(node.name)
                    self.bases += [dotted(b) for b in node.bases]
                elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(node.name)
                    if is_step_name(node.name):
                        self.step_spans.append((node.lineno, node.end_lineno or node.lineno))
                elif isinstance(node, ast.Global | ast.Nonlocal):
                    names.update(node.names)
            for field in node._fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, ast.AST) and type(item) not in LEAVES:
                            stack.append(item)
                elif isinstance(value, ast.AST) and type(value) not in LEAVES:
                    stack.append(value)
        self.names = names | attributes
        self.attributes = attributes
        self.imports = imports
        self.first_party = view.first_party

    @property
    def calls(self) -> list[ast.Call]:
        """Every call of the module."""
        return self._calls

    def absolute(self, text: str) -> list[str]:
        """The canonical names dotted ``text`` may denote through the module's imports."""
        head, _, tail = text.partition(".")
        return [canonical(f"{f}.{tail}" if tail else f) for f in self.imports.get(head, ())]

    def called_imports(self) -> set[str]:
        """Twin of ``summary.called_imports`` (see ``project_calls``)."""
        calls = [
            (dotted(c.func), c.func.attr, c.func.value.id)
            if isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name)
            else (dotted(c.func), None, None)
            for c in self._calls
        ]
        instances = [(n, dotted(v.func)) for n, v in self._instances if isinstance(v, ast.Call)]
        return project_calls(self.imports, instances, calls, self.first_party)


def is_main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either side first)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    sides = [test.left, *test.comparators]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )
