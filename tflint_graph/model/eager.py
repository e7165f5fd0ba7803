"""Guards whose value is known while TensorFlow traces (SPEC §1, "Not traced, though inside
a traced body"): the branch they exclude never runs during a trace, so no rule looks at it
and traced-code discovery does not follow its calls.

While tracing, ``tf.executing_eagerly()`` is False and ``tf.inside_function()`` True;
a symbolic tensor has no ``numpy`` attribute (``hasattr(x, "numpy")`` is False), has a
``graph`` (``hasattr(x, "graph")`` is True, and False for an eager tensor or variable: the
test asks "am I being traced?", verified with TensorFlow 2.21) and is no
other framework's array (``isinstance(x, np.ndarray)``, ``torch.Tensor``, ``jax.Array``);
``keras.config.backend()`` is ``"tensorflow"``; a Keras model's ``self.run_eagerly`` is
False (Keras traces its steps and ``call`` only then); a parameter of a ``@tf.function`` without a
default is a tensor (``tf.is_tensor(x)``) where a call in the module passes it a tensor or
a NumPy array and none a Python literal or a loop's element.  A function of the
module that only returns such a test (``def in_tf_function(): return not
tf.executing_eagerly()``) has its value.  ``not``/``and``/``or`` combine them; anything
else is unknown.  The body of ``with tf.init_scope():`` runs eagerly too.
"""

from __future__ import annotations

import libcst as cst

from tflint_graph.core.vocabulary import KERAS_METHODS
from tflint_graph.model.calls import passed_for
from tflint_graph.model.certain import calls_of, passed_a_tensor
from tflint_graph.model.collect import FunctionNode
from tflint_graph.model.context import ModuleContext
from tflint_graph.model.definitions import Definitions
from tflint_graph.model.names import Resolution
from tflint_graph.model.scopes import GlobalScope
from tflint_graph.model.values import assigned_value, ends_in_exit, is_init_scope

_EAGER = (
    "tensorflow.executing_eagerly",
    "tensorflow.python.eager.context.executing_eagerly",
)
_INSIDE = (
    "tensorflow.inside_function",
    "tensorflow.python.framework.ops.inside_function",
)
_BACKEND = ("keras.config.backend", "keras.backend.backend", "keras.src.backend.backend")
# Array types a symbolic tensor never is.
_FOREIGN_ARRAYS = (
    "numpy.ndarray",
    "numpy.generic",
    "torch.Tensor",
    "jax.Array",
    "jax.numpy.ndarray",
    "jaxlib.xla_extension.ArrayImpl",
)
_EXITS = (cst.Raise, cst.Return, cst.Break, cst.Continue)
_IS_TENSOR = ("tensorflow.is_tensor", "tensorflow.debugging.is_tensor")
# Attributes of the graph a symbolic tensor belongs to (`hasattr(t.graph, "as_graph_def")`).
_GRAPH_ATTRIBUTES = frozenset({"as_graph_def", "get_operations", "as_default", "building_function"})
# Framework names in the type of another framework's array (`"torch" in str(type(x))`).
_FOREIGN_FRAMEWORKS = ("torch", "jax", "numpy", "ndarray")
_MAX_DEPTH = 3


class TracingGuards:
    """The value of ``if`` tests while tracing, for one module (memoised per test)."""

    def __init__(self, definitions: Definitions) -> None:
        self.definitions = definitions
        self.ctx: ModuleContext = definitions.ctx
        self._values: dict[cst.CSTNode, bool | None] = {}
        self._functions: dict[FunctionNode, bool | None] = {}
        self._receivers: frozenset[str] | None = None

    def value(self, test: cst.BaseExpression) -> bool | None:
        """True or False when ``test`` has that value in every trace; None when unknown."""
        if test not in self._values:
            self._values[test] = self._value(test, 0)
        return self._values[test]

    def _value(self, test: cst.BaseExpression, depth: int) -> bool | None:
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._value(test.expression, depth)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            left, right = self._value(test.left, depth), self._value(test.right, depth)
            if isinstance(test.operator, cst.And):
                if left is False or right is False:
                    return False
                return True if left is True and right is True else None
            if left is True or right is True:
                return True
            return False if left is False and right is False else None
        if isinstance(test, cst.Comparison):
            return self._comparison(test)
        if isinstance(test, cst.Call):
            return self._call_value(test, depth)
        if self._model_runs_eagerly(test):
            return False
        if isinstance(test, cst.Name) and depth < _MAX_DEPTH:
            # `use_tf = self._use_tf_workflow() or ...; if use_tf:` — a local set once.
            found = self.ctx.bindings(test)
            if len(found) == 1 and isinstance(found[0].node, cst.Name):
                value = assigned_value(self.ctx, found[0].node, with_items=False)
                if value is not None and not isinstance(found[0].scope, GlobalScope):
                    return self._value(value, depth + 1)
        return None

    def _model_runs_eagerly(self, test: cst.BaseExpression) -> bool:
        """``self.run_eagerly`` in a Keras model's own ``call`` or step (undecorated): Keras
        traces them only where it is False, and runs them eagerly where it is True."""
        if not (
            isinstance(test, cst.Attribute)
            and test.attr.value == "run_eagerly"
            and isinstance(test.value, cst.Name)
            and test.value.value == "self"
        ):
            return False
        method = self.ctx.enclosing_function(test)
        if not (
            isinstance(method, cst.FunctionDef)
            and method.name.value in KERAS_METHODS["model"]
            and not method.decorators  # a user's @tf.function traces whatever Keras runs
        ):
            return False
        cls = self.ctx.enclosing_class(method)
        return cls is not None and "model" in self.definitions.keras_kinds(cls)

    def _call_value(self, call: cst.Call, depth: int) -> bool | None:
        ctx = self.ctx
        res = ctx.resolve(call.func)
        if res.is_(*_EAGER) or self._tf_method(call, res, "executing_eagerly"):
            return False
        if res.is_(*_INSIDE) or self._tf_method(call, res, "inside_function"):
            return True
        if res.is_builtin("hasattr") and len(call.args) >= 2:
            attr = call.args[1].value
            name = attr.evaluated_value if isinstance(attr, cst.SimpleString) else None
            if name == "numpy":
                return False
            owner = call.args[0].value
            if name == "graph" or (
                isinstance(owner, cst.Attribute)
                and owner.attr.value == "graph"
                and name in _GRAPH_ATTRIBUTES
            ):
                return True  # `hasattr(t, "graph")`: asks whether `t` is symbolic
            return None
        if res.is_(*_IS_TENSOR) and call.args:
            return True if self._tensor_parameter(call.args[0].value) else None
        if res.is_builtin("isinstance") and len(call.args) >= 2:
            kinds = call.args[1].value
            types = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
            if all(ctx.resolve(t).is_(*_FOREIGN_ARRAYS) for t in types):
                return False
            return None
        if depth >= _MAX_DEPTH:
            return None
        # A helper that only returns a known test: of this module, or of another module of
        # the run (``ProjectView.tracing_values``), directly or inherited.  Its arguments do
        # not change the answer (``def is_eager(x): return hasattr(x, "numpy")``): the tests
        # known here have the same value for whatever traced code passes.
        at = ctx.enclosing_function(call)
        values = {
            self._function_value(fn, depth + 1)
            for fn, _ in self.definitions.callables(call.func, at)
        }
        if not values:
            known = ctx.view.tracing_values
            names = set(res.imported)
            if isinstance(at, cst.FunctionDef):
                names.update(self.definitions.inherited(call.func, at))
            # The run analyses the module again when one of these changes, and only then
            # (the names it can tell are the project's).
            ctx.asked_tracing.update(n for n in names if ctx.view.may_be_project(n))
            values = {known[n] for n in names if n in known}
        return values.pop() if len(values) == 1 else None

    def _tensor_parameter(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is a parameter without a default of a ``@tf.function`` (not ``self``),
        read before anything rebinds it: ``tf.function`` hands the body a symbolic tensor
        for every tensor or NumPy array argument, the inputs the analysis assumes there
        (``model.tensors``); a Python value would retrace per value."""
        if not isinstance(expr, cst.Name):
            return False
        found = self.ctx.bindings(expr)
        param = next((a.node for a in found if isinstance(a.node, cst.Param)), None)
        if param is None:
            return False
        fn = self.ctx.enclosing_function(expr)
        if not isinstance(fn, cst.FunctionDef) or param.default is not None or param.star:
            return False
        params = [*fn.params.posonly_params, *fn.params.params]
        if param not in params and param not in fn.params.kwonly_params:
            return False  # a parameter of a function around `fn`
        if self.ctx.enclosing_class(fn) is not None and params and params[0] is param:
            return False
        if any(
            a.node is not param and self.ctx.source_order(a.node) < self.ctx.source_order(expr)
            for a in found
        ):
            return False
        if not any(
            self.definitions.tf_function_options(d.decorator) is not None for d in fn.decorators
        ):
            return False
        # A call of the module shows a tensor or array going in, and none a Python value.
        return passed_a_tensor(self.ctx, self.definitions, fn, param) and not self._passed_python(
            fn, param
        )

    def _passed_python(self, fn: cst.FunctionDef, param: cst.Param) -> bool:
        """A call in the module gives ``param`` what ``tf.function`` hands in as it is: a
        literal number, string, list, tuple or dict (or a name bound to one), or an element
        of a loop (a dataset batch may be a tuple)."""
        for site in calls_of(self.ctx, self.definitions).get(fn, ()):
            if site.concrete:
                continue  # `f.get_concrete_function(spec)`: specs, not calls
            value = passed_for(site.call, fn.params, param, bound=site.bound)
            if value is None or _python_literal(value):
                return True
            if isinstance(value, cst.Name):
                for a in self.ctx.bindings(value):
                    bound = assigned_value(self.ctx, a.node, with_items=False)
                    if (bound is not None and _python_literal(bound)) or isinstance(
                        self.ctx.parent(a.node), cst.For | cst.CompFor
                    ):
                        return True
        return False

    def _tf_method(self, call: cst.Call, res: Resolution, name: str) -> bool:
        """``tf.executing_eagerly()`` where ``tf`` is a module-level variable the import
        resolution cannot follow (``tf = try_import_tensorflow()``): the name is TensorFlow's."""
        func = call.func
        return (
            isinstance(func, cst.Attribute)
            and func.attr.value == name
            and isinstance(func.value, cst.Name)
            and all(self.ctx.view.may_be_project(n) for n in res.imported)
            and (bool(res.imported) or func.value.value in self._tf_receivers())
        )

    def _tf_receivers(self) -> frozenset[str]:
        """Module-level names whose ``executing_eagerly``/``inside_function`` the module
        calls: TensorFlow, however the module obtained it."""
        if self._receivers is None:
            found = set()
            for _, call in self.definitions.facts.calls:
                func = call.func
                if (
                    isinstance(func, cst.Attribute)
                    and func.attr.value in ("executing_eagerly", "inside_function")
                    and isinstance(func.value, cst.Name)
                    and any(isinstance(a.scope, GlobalScope) for a in self.ctx.bindings(func.value))
                ):
                    found.add(func.value.value)
            self._receivers = frozenset(found)
        return self._receivers

    def _function_value(self, fn: FunctionNode, depth: int) -> bool | None:
        """What ``fn`` returns while tracing, when its body is only ``if <test>: return
        <value>`` statements and a final ``return <value>`` whose outcome is known."""
        if fn in self._functions:
            return self._functions[fn]
        self._functions[fn] = None  # recursion knows nothing
        result = self._body_value(fn, depth)
        self._functions[fn] = result
        return result

    def _body_value(self, fn: FunctionNode, depth: int) -> bool | None:
        if isinstance(fn, cst.Lambda):
            return self._returned_value(fn.body, depth)
        outcomes: set[bool | None] = set()
        for stmt in fn.body.body:
            if isinstance(stmt, cst.If) and stmt.orelse is None:
                returned = _only_return(stmt.body)
                if returned is None:
                    return None
                test = self._value(stmt.test, depth)
                if test is False:
                    continue
                outcomes.add(self._returned_value(returned, depth))
                if test is True:
                    break
                continue
            if isinstance(stmt, cst.SimpleStatementLine):
                small = stmt.body[0] if len(stmt.body) == 1 else None
                if isinstance(small, cst.Return):
                    outcomes.add(self._returned_value(small.value, depth))
                    break
                if isinstance(small, cst.Expr | cst.Assert | cst.Pass):
                    continue  # a docstring, a check, a call for its effect
            return None
        else:
            return None  # falls off the end: returns None
        return outcomes.pop() if len(outcomes) == 1 else None

    def _returned_value(self, value: cst.BaseExpression | None, depth: int) -> bool | None:
        if isinstance(value, cst.Name) and value.value in ("True", "False"):
            return value.value == "True"
        return self._value(value, depth) if value is not None else None

    def exported(self) -> dict[str, bool]:
        """Functions (``in_tf_function``, ``is_eager(x)``) and no-argument methods
        (``Layer._use_tf_workflow``) of this module whose value while tracing is known, for the
        other modules of the run.  What a class inherits from another module's class the run
        adds (``inheritance``): a chain of subclasses across modules is then resolved at
        once, not one re-analysis per module along it."""
        found: dict[str, bool] = {}
        for stmt in self.ctx.module.body:
            if isinstance(stmt, cst.FunctionDef):
                # Whatever its arguments: the value is known for any of them.
                value = self._function_value(stmt, 0)
                if value is not None:
                    found[stmt.name.value] = value
            elif isinstance(stmt, cst.ClassDef):
                name = stmt.name.value
                for item in stmt.body.body:
                    if isinstance(item, cst.FunctionDef) and _no_arguments(item, method=True):
                        value = self._function_value(item, 0)
                        if value is not None:
                            found[f"{name}.{item.name.value}"] = value
        return found

    def inheritance(self) -> tuple[tuple[str, tuple[str, ...], frozenset[str]], ...]:
        """``ModuleSummary.guard_classes``: per module-level class with bases other modules
        of the run may define, (name, those bases' absolute names in order, the names of
        the methods it defines, which hide what it inherits)."""
        found = []
        for stmt in self.ctx.module.body:
            if isinstance(stmt, cst.ClassDef):
                refs = tuple(
                    ref for base in stmt.bases for ref in self.definitions.foreign(base.value)
                )
                if refs:
                    own = frozenset(
                        item.name.value
                        for item in stmt.body.body
                        if isinstance(item, cst.FunctionDef)
                    )
                    found.append((stmt.name.value, refs, own))
        return tuple(found)

    def _comparison(self, test: cst.Comparison) -> bool | None:
        if len(test.comparisons) != 1:
            return None
        target = test.comparisons[0]
        op = target.operator
        left, right = test.left, target.comparator
        if (
            isinstance(op, cst.Is | cst.IsNot)
            and isinstance(right, cst.Name)
            and right.value == "None"
            and isinstance(left, cst.Name)
            and (self.ctx.resolve(left).is_("tensorflow") or left.value in self._tf_receivers())
        ):
            # `if tf is None:` after an optional import: TensorFlow is there while it traces.
            return isinstance(op, cst.IsNot)
        if (
            isinstance(op, cst.In | cst.NotIn)
            and isinstance(left, cst.SimpleString)
            and _is_type_name(self.ctx, right)
        ):
            # `"torch" in str(type(x))`: a symbolic tensor's type is TensorFlow's.
            text = left.evaluated_value
            if isinstance(text, str) and any(f in text for f in _FOREIGN_FRAMEWORKS):
                return isinstance(op, cst.NotIn)
            return None
        if isinstance(left, cst.SimpleString):
            left, right = right, left
        if not (
            isinstance(left, cst.Call)
            and self.ctx.resolve(left.func).is_(*_BACKEND)
            and isinstance(right, cst.SimpleString)
        ):
            return None
        same = right.evaluated_value == "tensorflow"
        if isinstance(op, cst.Equal | cst.Is):
            return same
        if isinstance(op, cst.NotEqual | cst.IsNot):
            return not same
        return None

    # -- regions ----------------------------------------------------------------------
    def skipped_branch(self, node: cst.If | cst.IfExp) -> cst.CSTNode | None:
        """The part of ``node`` that never runs while tracing (its body or else), if any."""
        value = self.value(node.test)
        if value is False:
            return node.body
        if value is True:
            return node.orelse
        return None

    def exits_while_tracing(self, stmt: cst.BaseStatement) -> bool:
        """``if tf.inside_function(): return ...`` (no else): the statements after it in the
        block run eagerly only; after a ``raise``, ``return``, ``break`` or ``continue`` of
        the block itself, they never run."""
        if isinstance(stmt, cst.SimpleStatementLine):
            return any(isinstance(small, _EXITS) for small in stmt.body)
        if not isinstance(stmt, cst.If) or stmt.orelse is not None:
            return False
        return self.value(stmt.test) is True and ends_in_exit(stmt.body)

    def untraced(self, node: cst.CSTNode, fn: FunctionNode) -> bool:
        """``node`` (inside ``fn``) never runs while ``fn`` is traced, or runs eagerly."""
        ctx = self.ctx
        child = node
        for anc in ctx.ancestors(node):
            if anc is fn:
                return False
            if isinstance(anc, cst.If | cst.IfExp) and child is not anc.test:
                skipped = self.skipped_branch(anc)
                if skipped is not None and skipped is child:
                    return True
            elif isinstance(anc, cst.With) and child is anc.body and is_init_scope(ctx, anc):
                return True
            elif isinstance(anc, cst.IndentedBlock):
                for stmt in anc.body:
                    if stmt is child:
                        break
                    if self.exits_while_tracing(stmt):
                        return True
            child = anc
        return False


def _only_return(body: cst.BaseSuite) -> cst.BaseExpression | None:
    """The value of a block that is a single ``return <value>``; None otherwise."""
    stmts = body.body
    if len(stmts) != 1:
        return None
    line = stmts[0]
    small: cst.CSTNode
    if isinstance(body, cst.SimpleStatementSuite):
        small = line
    elif isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
        small = line.body[0]
    else:
        return None
    return small.value if isinstance(small, cst.Return) else None


def _no_arguments(fn: cst.FunctionDef, *, method: bool) -> bool:
    """Callable with no arguments (besides ``self``/``cls`` for a method)."""
    params = list(fn.params.posonly_params) + list(fn.params.params)
    if method:
        static = any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
            for d in fn.decorators
        )
        if static or not params:
            return False
        params = params[1:]
    required = [p for p in params if p.default is None]
    required += [p for p in fn.params.kwonly_params if p.default is None]
    return not required


def _is_type_name(ctx: ModuleContext, expr: cst.BaseExpression) -> bool:
    """``str(type(x))``."""
    return (
        isinstance(expr, cst.Call)
        and ctx.resolve(expr.func).is_builtin("str")
        and len(expr.args) == 1
        and isinstance(inner := expr.args[0].value, cst.Call)
        and ctx.resolve(inner.func).is_builtin("type")
    )


def _python_literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None")
    if isinstance(expr, cst.UnaryOperation):
        return _python_literal(expr.expression)
    return isinstance(
        expr, cst.BaseNumber | cst.BaseString | cst.List | cst.Tuple | cst.Dict | cst.Set
    )
