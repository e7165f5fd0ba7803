"""Keras classes whose instances only eager code uses (``ModuleSummary.eager_made``).

SPEC §1 item 3 makes ``call``, the steps and ``Metric.update_state`` traced because Keras
runs them inside a compiled step.  A project that makes an instance and only ever calls it
from plain Python (an evaluator feeding a metric between graph steps, a model driven by an
eager loop) never lets Keras trace it: those methods run as Python on eager tensors, on
every call.  Each module tells the run which project classes it makes and uses that way, and
which it uses any other way (hands on, compiles, fits, calls from traced code, wraps in
``tf.function``); the run stops treating a Keras class's methods as roots only when the
project shows an eager use and no other (``Project._used_eagerly``).  A class the project
never makes (a library's layer) stays traced: its users are elsewhere.

Read from CPython's tree, so that modules the prefilter summarises without libcst tell the
same as analysed ones; an analysed module names the lines of its traced functions.
"""

from __future__ import annotations

import ast

from tflint_graph.core.facts import LOCAL, ProjectView, is_step_name
from tflint_graph.core.paths import is_test_file
from tflint_graph.core.vocabulary import (
    CALLBACK_ENTRIES,
    KERAS_DRIVERS,
    KERAS_METHODS,
    TRACING_ENTRIES,
    canonical,
    keras_kinds_of,
)
from tflint_graph.source.prefilter import LEAVES, dotted, is_main_guard

# Where an instance (or a bound method of it) is handed on, out of this module's sight.
_HANDED_ON = (ast.Call, ast.keyword, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Return)
_HANDED_ON += (ast.Yield, ast.YieldFrom, ast.Lambda, ast.Starred)
_NONE: frozenset[str] = frozenset()
# A condition of ``eager_made``: the instance sits in this public attribute of `self`, which
# no code of the run may read on another object (``ModuleSummary.foreign_attributes``).
PUBLIC = "attr:"
# The methods Keras traces, and `__call__`, which runs `call`.
_ROOT_METHODS = frozenset(m for names in KERAS_METHODS.values() for m in names) | {"__call__"}
_KEPT = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)
_ACCESSORS = ("setter", "getter", "deleter")
_PLAIN_DECORATORS = frozenset({"property", "staticmethod", "classmethod"})

# (classes made here whose every use is eager -> the module's Keras classes in whose
# methods some of those uses run, which must be eager too, and the public attributes of
# `self` that hold them; classes used any other way; attribute names the module reads on
# objects other than `self`)
EagerUse = tuple[dict[str, frozenset[str]], frozenset[str], frozenset[str]]


def eager_instances(
    tree: ast.Module,
    path: str,
    view: ProjectView,
    imports: dict[str, set[str]],
    calls: list[ast.Call],
    attributes: frozenset[str],
    traced_lines: frozenset[int] = frozenset(),
) -> EagerUse:
    """(project classes made here whose every use is eager, project classes used here some
    other way), as absolute names (``LOCAL`` + name for the module's own classes).  A use
    in a method of one of the module's Keras classes is eager when that class is: each made
    class comes with those classes, which the run must find eager too.

    ``imports`` are the module's import bindings in any scope (bound name -> absolute
    names), ``calls`` every call in it, ``attributes`` every attribute name it reads,
    ``traced_lines`` the ``def`` lines of its traced functions.  Base-class references are
    left to the run (``ModuleSummary.classes``); a test module or test function makes
    nothing that counts (tests drive library classes eagerly, their users may not)."""
    own = {c.name for c in tree.body if isinstance(c, ast.ClassDef)}
    if not own and not any(view.may_be_project(n) for names in imports.values() for n in names):
        return {}, frozenset(), frozenset(attributes)
    use = _Uses(tree, path, view, imports, calls, traced_lines)
    spellings, escaped = use.class_spellings(own)
    escaped |= use.self_escapes()
    if not spellings:
        return {}, frozenset(escaped), use.foreign
    holders: dict[str, set[str]] = {}  # holder spelling -> the classes it may hold
    made: set[str] = set()
    for node, text in use.references(set(spellings)):
        bound = use.class_reference(node)
        if bound is None:
            continue
        if bound:
            if not use.in_test(node):
                made.add(spellings[text])
            for holder in bound:
                holders.setdefault(holder, set()).add(spellings[text])
        else:
            escaped.add(spellings[text])
    within: dict[str, set[str]] = {}
    for holder, classes in holders.items():
        if holder.startswith("self.") and not holder.startswith("self._"):
            for cls in classes:
                within.setdefault(cls, set()).add(PUBLIC + holder[len("self.") :])
    eager_holders = use.run_eagerly_holders() if holders else frozenset()
    for node, text in use.references(set(holders)) if holders else ():
        owners = use.holder_use(node, text in eager_holders)
        if owners is None:
            escaped |= holders[text]
        for cls in holders[text] if owners else ():
            within.setdefault(cls, set()).update(LOCAL + o for o in owners)
    if is_test_file(path):
        return {}, frozenset(escaped), use.foreign
    made_here = {c: frozenset(within.get(c, ())) for c in made - escaped}
    return made_here, frozenset(escaped), use.foreign


# What a model compiled with `run_eagerly=True` runs as Python when asked (not `save`,
# `export`: those trace `call` for the saved signatures).
_EAGER_WHEN_ASKED = KERAS_DRIVERS


def _is_true(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is True


# Runners of a script's `main` (`app.run(main)`): they call it as Python.
_MAIN_RUNNERS = frozenset({"absl.app.run", "tensorflow.app.run"})
# Calls only eager code makes on what a model returns or is fed.
_VALUE_CALLS = frozenset({"numpy", "from_tensor_slices"})


class _Uses:
    """The module's tree with parent links, read for references and their contexts."""

    def __init__(
        self,
        tree: ast.Module,
        path: str,
        view: ProjectView,
        imports: dict[str, set[str]],
        calls: list[ast.Call],
        traced_lines: frozenset[int],
    ) -> None:
        parents: dict[ast.AST, ast.AST] = {}
        names: list[ast.Name] = []
        classes: list[ast.ClassDef] = []
        foreign: set[str] = set()
        # One walk over the fields, as ``prefilter.Scan`` does: exact type tests, leaves
        # (contexts, operators) never stacked.
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.Name:
                names.append(node)  # type: ignore[arg-type]
                continue
            if kind is ast.Constant:
                continue
            if kind is ast.ClassDef:
                classes.append(node)  # type: ignore[arg-type]
            elif kind is ast.Attribute:
                receiver = node.value  # type: ignore[attr-defined]
                if not (type(receiver) is ast.Name and receiver.id in ("self", "cls")):
                    foreign.add(node.attr)  # type: ignore[attr-defined]
            for field in node._fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, ast.AST) and type(item) not in LEAVES:
                            parents[item] = node
                            stack.append(item)
                elif isinstance(value, ast.AST) and type(value) not in LEAVES:
                    parents[value] = node
                    stack.append(value)
        self.parents = parents
        self.names = names
        self.foreign = frozenset(foreign)  # attribute names read on objects other than self
        self.view = view
        self.imports = imports
        self.traced_lines = traced_lines
        self.keras = self._keras_classes(classes)
        # Names handed to calls that trace what they get (`tf.function(step)`, `ds.map(f)`);
        # the `Input(...)` calls of the functional API, whose symbolic tensors layers get.
        self.handed: set[str] = set()
        inputs: list[ast.Call] = []
        for call in calls:
            last = dotted(call.func).rpartition(".")[2]
            if last == "Input":
                inputs.append(call)
            if last in TRACING_ENTRIES | CALLBACK_ENTRIES and not self._runs_main(call):
                # Keras calls `fit(callbacks=[...])` hooks as Python between steps.
                kept = [k.value for k in call.keywords if k.arg != "callbacks"]
                for arg in [*call.args, *kept]:
                    for n in ast.walk(arg):
                        if isinstance(n, ast.Name):
                            self.handed.add(n.id)
                        elif isinstance(n, ast.Attribute):
                            self.handed.add(n.attr)  # `ds.map(self.preprocess)`
        # Some `Input(...)` goes where this module cannot follow (returned by a helper,
        # appended to a list, handed on): every call in the module may get a symbolic tensor.
        self.functional = not all(
            isinstance(self._statement(c), ast.Assign | ast.AnnAssign) for c in inputs
        )
        self.symbolic = set() if self.functional else self._symbolic_names(inputs)
        # A program: a notebook or a file no import statement can name: its module-level
        # instances are its own.  So are those a loop at module level calls (a training
        # loop that runs on import: no library module does that).
        stem, _, suffix = path.replace("\\", "/").rpartition("/")[2].rpartition(".")
        self.program = suffix == "ipynb" or not stem.isidentifier()
        self.loop_called = {
            n.id
            for n in names
            if isinstance(call := parents.get(n), ast.Call)
            and call.func is n
            and self._method(n) is None
            and not self._in_class(n)
            and self._in_module_loop(n)
        }

    def _in_module_loop(self, node: ast.AST) -> bool:
        seen = self.parents.get(node)
        while seen is not None:
            if isinstance(seen, ast.For | ast.While | ast.AsyncFor):
                return True
            seen = self.parents.get(seen)
        return False

    def _runs_main(self, call: ast.Call) -> bool:
        """``app.run(main)`` (absl, ``tf.compat.v1.app``): a script's entry point, run as
        Python, not a ``strategy.run`` that traces what it gets."""
        head, _, tail = dotted(call.func).partition(".")
        names = {f"{f}.{tail}" if tail else f for f in self.imports.get(head, ())}
        return any(canonical(n) in _MAIN_RUNNERS for n in names)

    def _symbolic_names(self, inputs: list[ast.Call]) -> set[str]:
        """Names and ``self`` attributes that may hold a functional model's symbolic tensors:
        those bound to an ``Input(...)`` and, in turn, to any value computed from one
        (``x = self.backbone(inputs)``).  Module-wide, spelling by spelling: a name symbolic
        in one function stays so in the others (fewer eager conclusions, never more)."""
        found: set[str] = set()
        if not inputs:
            return found
        assigns = [n for n in self.parents if isinstance(n, ast.Assign | ast.AnnAssign)]
        made = set(map(id, inputs))
        changed = True
        while changed:
            changed = False
            for node in assigns:
                value = node.value
                if value is None or not any(
                    id(part) in made
                    or (type(part) in (ast.Name, ast.Attribute) and dotted(part) in found)
                    for part in ast.walk(value)
                ):
                    continue
                targets = list(node.targets if isinstance(node, ast.Assign) else [node.target])
                while targets:
                    target = targets.pop()
                    if isinstance(target, ast.Tuple | ast.List):
                        targets.extend(target.elts)
                    elif isinstance(target, ast.Starred):
                        targets.append(target.value)
                    elif type(target) in (ast.Name, ast.Attribute):
                        text = dotted(target)  # `self.inputs`, never its `self`
                        if text and text not in found:
                            found.add(text)
                            changed = True
        return found

    def _statement(self, node: ast.AST) -> ast.AST | None:
        seen = self.parents.get(node)
        while seen is not None and not isinstance(seen, ast.stmt):
            seen = self.parents.get(seen)
        return seen

    def _symbolic_call(self, call: ast.Call) -> bool:
        """``call`` gets a functional model's symbolic tensor (``Input(...)`` or a name
        bound from one): the holder called builds a graph, it does not run eagerly."""
        if self.functional:
            return True
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            for part in ast.walk(arg):
                if isinstance(part, ast.Call) and dotted(part.func).rpartition(".")[2] == "Input":
                    return True
                if type(part) in (ast.Name, ast.Attribute) and dotted(part) in self.symbolic:
                    return True
        return False

    def _keras_classes(self, classes: list[ast.ClassDef]) -> set[ast.ClassDef]:
        """Those of ``classes`` with a Keras base, here or in the run."""
        found: set[ast.ClassDef] = set()
        local: dict[str, ast.ClassDef] = {c.name: c for c in classes}
        changed = True
        while changed:
            changed = False
            for cls in classes:
                if cls in found:
                    continue
                for base in cls.bases:
                    text = dotted(base)
                    head, _, tail = text.partition(".")
                    absolute = {f"{f}.{tail}" if tail else f for f in self.imports.get(head, ())}
                    if (
                        keras_kinds_of(canonical(n) for n in absolute)
                        or any(n in self.view.keras_classes for n in absolute)
                        or (text in local and local[text] in found)
                    ):
                        found.add(cls)
                        changed = True
                        break
        return found

    def class_spellings(self, own: set[str]) -> tuple[dict[str, str], set[str]]:
        """How the module names project classes (``Policy``, ``models.Policy``, a class of
        its own) -> their absolute names, and the project names a spelling may denote
        several of (a ``try``/``except ImportError`` fallback): those count as used."""
        found: dict[str, str] = {}
        ambiguous: set[str] = set()
        for name in self.names:
            node: ast.expr = name
            text = name.id
            while True:
                if text not in found and text.rpartition(".")[2][:1].isupper():
                    head, _, tail = text.partition(".")
                    if head in self.imports:
                        names = {f"{f}.{tail}" if tail else f for f in self.imports[head]}
                        names = {n for n in names if self.view.may_be_project(n)}
                        if len(names) == 1:
                            found[text] = names.pop()
                        else:
                            ambiguous |= names
                    elif text in own:
                        found[text] = LOCAL + text
                parent = self.parents.get(node)
                if not (isinstance(parent, ast.Attribute) and parent.value is node):
                    break
                node = parent
                text = f"{text}.{parent.attr}"
        return found, ambiguous

    def self_escapes(self) -> set[str]:
        """The module's own Keras classes that trace themselves: a method hands ``self`` on
        (``tf.saved_model.save(self, path)``), fits or compiles it (``self.fit(data)``),
        hands on one of its traced methods, or calls it in a decorated or traced method
        other than Keras's own (``@tf.function def serve(self, x): return self(x)``)."""
        found: set[str] = set()
        if not self.keras:
            return found
        for node in self.names:
            if node.id != "self":
                continue
            seen = self.parents.get(node)
            while seen is not None and not isinstance(seen, ast.ClassDef):
                seen = self.parents.get(seen)
            if not (seen in self.keras and isinstance(self.parents.get(seen), ast.Module)):
                continue
            assert isinstance(seen, ast.ClassDef)
            own = {
                s.name for s in seen.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            if self._traces_self(node, own):
                found.add(LOCAL + seen.name)
        return found

    def _traces_self(self, node: ast.Name, own: set[str]) -> bool:
        """What ``self`` at ``node`` does may trace the object (``self_escapes``); ``own``
        are the methods its class defines (a metric's own ``evaluate`` is no Keras fit)."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            outer = self.parents.get(parent)
            called = isinstance(outer, ast.Call) and outer.func is parent
            keras_entry = parent.attr in TRACING_ENTRIES and parent.attr not in own
            return keras_entry or (not called and parent.attr in _ROOT_METHODS)
        if isinstance(parent, ast.Call) and parent.func is node:
            method = self._method(node)
            return (
                method is not None
                and method.name not in _ROOT_METHODS
                and (
                    method.lineno in self.traced_lines
                    or not all(map(self._plain, method.decorator_list))
                )
            )
        if isinstance(parent, ast.Call) and node in parent.args:
            func = parent.func
            return not (isinstance(func, ast.Name) and func.id in ("super", "isinstance"))
        return isinstance(parent, (*_HANDED_ON, *_KEPT, ast.keyword)) and not isinstance(
            parent, ast.Call
        )

    def _method(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        seen = self.parents.get(node)
        while seen is not None and not isinstance(seen, ast.FunctionDef | ast.AsyncFunctionDef):
            seen = self.parents.get(seen)
        return seen

    def references(self, spellings: set[str]) -> list[tuple[ast.expr, str]]:
        """The names and attribute chains spelt as one of ``spellings`` (``self.metric``)."""
        heads = {s.partition(".")[0] for s in spellings}
        found: list[tuple[ast.expr, str]] = []
        for name in self.names:
            if name.id not in heads:
                continue
            node: ast.expr = name
            text = name.id
            while True:
                if text in spellings:
                    found.append((node, text))
                    break
                parent = self.parents.get(node)
                if not (isinstance(parent, ast.Attribute) and parent.value is node):
                    break
                node = parent
                text = f"{text}.{parent.attr}"
        return found

    def class_reference(self, node: ast.expr) -> set[str] | bool | None:
        """A reference to a class: None when it tells nothing (a base, an annotation,
        ``super(Cls, self)``), the holders it is bound to when it makes an instance bound to
        names or attributes, False otherwise."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.ClassDef):
            # A base: the run follows the subclasses of module-level classes; a class made
            # inside a function (a factory's) is out of its sight.
            return None if isinstance(self.parents.get(parent), ast.Module) else False
        if self._in_annotation(node):
            return None
        if isinstance(parent, ast.Call) and node in parent.args:
            func = parent.func
            tests = ("super", "isinstance", "issubclass")
            return None if isinstance(func, ast.Name) and func.id in tests else False
        if not (isinstance(parent, ast.Call) and parent.func is node):
            return False
        bound = self.parents.get(parent)
        if not isinstance(bound, ast.Assign):
            return False  # handed on
        if self._method(bound) is None and not (
            self.program
            or self._in_main_guard(bound)
            or any(isinstance(t, ast.Name) and t.id in self.loop_called for t in bound.targets)
        ):
            return False  # a module-level instance others may import
        holders = {dotted(t) for t in bound.targets}
        # A local name, or an attribute of `self` (`self._eval_metric`); a public one
        # (`self.model`) only while no code of the run reads it on another object
        # (`trainer.model.fit()`): the run checks (``PUBLIC``).
        if "" not in holders and all(
            "." not in h or (h.startswith("self.") and h.count(".") == 1) for h in holders
        ):
            return holders
        return False

    def _in_class(self, node: ast.AST) -> bool:
        seen = self.parents.get(node)
        while seen is not None and not isinstance(seen, ast.ClassDef):
            seen = self.parents.get(seen)
        return seen is not None

    def _in_main_guard(self, node: ast.AST) -> bool:
        """``node`` is under the module's ``if __name__ == "__main__":``, which importing it
        never runs."""
        seen = self.parents.get(node)
        while seen is not None:
            if isinstance(seen, ast.If) and isinstance(self.parents.get(seen), ast.Module):
                return is_main_guard(seen)
            seen = self.parents.get(seen)
        return False

    def in_test(self, node: ast.AST) -> bool:
        """``node`` is in a test function or a test class: a layer library's smoke test
        (``def _test_pooling(): m = Pool(); m(x)``) calls its classes eagerly, while the
        library's users fit them."""
        seen = self.parents.get(node)
        while seen is not None:
            if isinstance(seen, ast.FunctionDef | ast.AsyncFunctionDef):
                if seen.name.lstrip("_").startswith("test"):
                    return True
            elif isinstance(seen, ast.ClassDef) and "Test" in seen.name:
                return True
            seen = self.parents.get(seen)
        return False

    def _in_annotation(self, node: ast.AST) -> bool:
        child: ast.AST = node
        parent = self.parents.get(child)
        while parent is not None and not isinstance(parent, ast.stmt):
            if isinstance(parent, ast.arg) and parent.annotation is child:
                return True
            child, parent = parent, self.parents.get(parent)
        if isinstance(parent, ast.AnnAssign) and parent.annotation is child:
            return True
        function = isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef)
        return function and parent.returns is child  # type: ignore[union-attr]

    def run_eagerly_holders(self) -> frozenset[str]:
        """Holders the module always runs eagerly: compiled with ``run_eagerly=True`` (or
        given ``.run_eagerly = True``) by a statement no condition or loop guards, never
        compiled or switched any other way, and fitted, evaluated or predicted on only after
        the switch.  Keras runs their steps, and the ``call`` they make, as plain Python."""
        switches: dict[str, list[ast.AST]] = {}
        spoilt: set[str] = set()
        drivers: list[tuple[str, ast.Call]] = []
        for node in self.parents:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                holder = dotted(node.func.value)
                if node.func.attr == "compile":
                    eager = any(k.arg == "run_eagerly" and _is_true(k.value) for k in node.keywords)
                    if eager and self._unconditional(node):
                        switches.setdefault(holder, []).append(node)
                    else:
                        spoilt.add(holder)  # compiled for graphs, or only on some runs
                elif node.func.attr in _EAGER_WHEN_ASKED:
                    drivers.append((holder, node))
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if not (isinstance(t, ast.Attribute) and t.attr == "run_eagerly"):
                        continue
                    holder = dotted(t.value)
                    if _is_true(node.value) and self._unconditional(node):
                        switches.setdefault(holder, []).append(node)
                    else:
                        spoilt.add(holder)
        for holder, call in drivers:
            where = self._scope_of(call)
            if any(
                self._scope_of(switch) is where and call.lineno < switch.lineno  # type: ignore[attr-defined]
                for switch in switches.get(holder, ())
            ):
                spoilt.add(holder)  # fitted (traced) before the switch
        return frozenset(h for h in switches if h and h not in spoilt)

    def _scope_of(self, node: ast.AST) -> ast.AST | None:
        seen = self.parents.get(node)
        while seen is not None and not isinstance(
            seen, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module
        ):
            seen = self.parents.get(seen)
        return seen

    def _unconditional(self, node: ast.AST) -> bool:
        """``node`` runs whenever the code around it does: no ``if``, loop or ``try`` between
        it and its function (or the module)."""
        seen = self.parents.get(node)
        while seen is not None and not isinstance(
            seen, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module
        ):
            if isinstance(seen, ast.If | ast.IfExp | ast.For | ast.While | ast.Try | ast.BoolOp):
                return False
            seen = self.parents.get(seen)
        return True

    def holder_use(self, node: ast.expr, run_eagerly: bool = False) -> frozenset[str] | None:
        """None unless ``node`` (a holder) is rebound, called or asked for a method by eager
        code, or read an attribute of; else the module's Keras classes whose methods that
        code is in (eager only if those are).  A holder compiled with ``run_eagerly=True``
        (``run_eagerly``) is also fitted, evaluated and handed to the project's functions
        eagerly: Keras runs it as Python wherever it goes, short of a call that traces."""
        parent = self.parents.get(node)
        if run_eagerly and self._handed_to_plain_call(node):
            return self._eager(node, closures=True)  # `train(args, model)`, `evaluate(model=model)`
        if isinstance(node.ctx, ast.Store | ast.Del):  # type: ignore[attr-defined]
            return _NONE
        if isinstance(parent, ast.Call) and parent.func is node:
            if self._symbolic_call(parent) or (
                any(self._parameter(a) for a in parent.args)
                and not self._works_on_values(node)
                and not self._in_keras_root(node)
            ):
                # `gate(x)` with `x` a parameter: maybe a symbolic input (functional API);
                # in a Keras class's own `call`, `x` is as eager as that class (the owner
                # ``_eager`` names)
                return None
            return self._eager(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            if parent.attr in TRACING_ENTRIES:
                if run_eagerly and parent.attr in _EAGER_WHEN_ASKED:
                    return self._eager(node, closures=True)
                return None  # `model.fit(...)`, `model.save(...)`
            outer = self.parents.get(parent)
            if isinstance(outer, ast.Call) and outer.func is parent:
                # `metric.update_state(...)`: runs where it is
                return self._eager(node, closures=run_eagerly)
            # A plain read (`metric.name`, `model.optimizer.lr`) runs none of its methods,
            # in traced code too; a traced method handed on or kept may be traced elsewhere.
            handed = isinstance(outer, (*_HANDED_ON, *_KEPT))
            return None if handed and parent.attr in _ROOT_METHODS else _NONE
        return None

    def _eager(self, node: ast.AST, closures: bool = False) -> frozenset[str] | None:
        """The module-level Keras classes ``node`` is in the methods of, when it runs in
        eager code once those are eager: at module level or in plain functions that are not
        traced, handed to a tracing call, decorated, or step functions (a trainer may wrap
        those in ``tf.function`` out of sight); None otherwise.  Closures count only with
        ``closures`` (a model compiled with ``run_eagerly=True``, in an epoch-end hook)."""
        owners: set[str] = set()
        traced = False
        functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        seen = self.parents.get(node)
        while seen is not None:
            if isinstance(seen, ast.Lambda):
                return None
            if isinstance(seen, ast.FunctionDef | ast.AsyncFunctionDef):
                if seen.name in self.handed or is_step_name(seen.name):
                    return None
                if not all(map(self._plain, seen.decorator_list)):
                    return None
                if (
                    functions
                    and not closures
                    and not isinstance(self.parents.get(functions[-1]), ast.ClassDef)
                ):
                    return None  # a closure: it may be returned and traced elsewhere
                functions.append(seen)
                traced |= seen.lineno in self.traced_lines
            elif isinstance(seen, ast.ClassDef) and seen in self.keras:
                if not isinstance(self.parents.get(seen), ast.Module):
                    return None  # a nested Keras class: the run cannot name it
                owners.add(seen.name)
            seen = self.parents.get(seen)
        # A Keras class's method is traced because the class's own methods are roots, which
        # the class being eager undoes; anything else that traces it uses the instance in
        # traced code or hands the method on, which keeps the class from being eager.
        if traced and (not owners or functions[-1].name not in _ROOT_METHODS):
            return None
        return frozenset(owners)

    def _handed_to_plain_call(self, node: ast.expr) -> bool:
        """``node`` is an argument of a call of the module's own function that traces
        nothing it gets (not ``tf.function(model)``, ``tf.saved_model.save(model, path)``,
        ``ds.map(model)``, nor any function of another module)."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.keyword):
            parent = self.parents.get(parent)
        elif not (isinstance(parent, ast.Call) and node in parent.args):
            return False
        if not isinstance(parent, ast.Call) or parent.func is node:
            return False
        if isinstance(parent.func, ast.Name) and parent.func.id not in self.imports:
            # the module's own function (`fit(model, data)`), or a builtin
            return self._plain_function(parent.func.id)
        # A function of another module may trace it (`tf.function(lambda x: model(x))`,
        # `ds.map(...)`, a functional model around it, an export): out of sight here.
        return False

    def _plain_function(self, name: str) -> bool:
        """The module's function ``name`` (a builtin when it has none) traces nothing it
        gets: it is no traced function and is not decorated, and it neither wraps a function
        of its own nor hands one to a call that traces (`tf.function(lambda x: m(x))`, a
        nested `@tf.function def serve(x): return m(x)`), fitting and predicting aside."""
        found = [
            n
            for n in self.parents
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            and n.name == name
            and isinstance(self.parents.get(n), ast.Module)
        ]
        if not found:
            return not any(
                isinstance(n, ast.ClassDef | ast.Lambda | ast.Assign) for n in self._named(name)
            )
        for fn in found:
            if fn.lineno in self.traced_lines or not all(map(self._plain, fn.decorator_list)):
                return False
            for part in ast.walk(fn):
                if part is not fn and isinstance(part, ast.FunctionDef | ast.AsyncFunctionDef):
                    if part.lineno in self.traced_lines or not all(
                        map(self._plain, part.decorator_list)
                    ):
                        return False
                elif isinstance(part, ast.Call):
                    last = dotted(part.func).rpartition(".")[2]
                    if last in (TRACING_ENTRIES | CALLBACK_ENTRIES) - _EAGER_WHEN_ASKED:
                        return False
        return True

    def _named(self, name: str) -> list[ast.AST]:
        """Module-level statements binding ``name`` (other than a ``def``)."""
        return [
            n
            for n in self.parents
            if isinstance(self.parents.get(n), ast.Module)
            and (
                (isinstance(n, ast.ClassDef) and n.name == name)
                or (
                    isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
                )
            )
        ]

    def _parameter(self, expr: ast.expr) -> bool:
        """``expr`` is a bare parameter of a function around it."""
        if not isinstance(expr, ast.Name):
            return False
        seen = self.parents.get(expr)
        while seen is not None:
            if isinstance(seen, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                args = seen.args
                every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
                every += [a for a in (args.vararg, args.kwarg) if a is not None]
                if any(a.arg == expr.id for a in every):
                    return True
            seen = self.parents.get(seen)
        return False

    def _in_keras_root(self, node: ast.AST) -> bool:
        """``node`` is in a method Keras runs (``call``, a step) of a module-level Keras class
        of this module."""
        method = self._method(node)
        if method is None or method.name not in _ROOT_METHODS:
            return False
        cls = self.parents.get(method)
        return cls in self.keras and isinstance(self.parents.get(cls), ast.Module)

    def _works_on_values(self, node: ast.AST) -> bool:
        """The function around ``node`` handles concrete values, which building a functional
        model never does, nor a step a trainer may trace: it calls ``.numpy()`` or makes a
        dataset from tensors (``Dataset.from_tensor_slices``)."""
        method = self._method(node)
        if method is None:
            return False
        for part in ast.walk(method):
            func = part.func if isinstance(part, ast.Call) else None
            if isinstance(func, ast.Attribute) and func.attr in _VALUE_CALLS:
                return True
        return False

    def _plain(self, decorator: ast.expr) -> bool:
        """``@property`` and its setters, ``@staticmethod``, ``@classmethod``, ``functools``
        and ``abc`` decorators: none hands the function to TensorFlow."""
        if isinstance(decorator, ast.Call):
            decorator = decorator.func
        if isinstance(decorator, ast.Attribute) and decorator.attr in _ACCESSORS:
            return True
        text = dotted(decorator)
        head = text.partition(".")[0]
        if head not in self.imports:
            return text in _PLAIN_DECORATORS
        return all(f.startswith(("functools", "abc")) for f in self.imports[head])
