from __future__ import annotations

from typing import ClassVar

import libcst as cst

from tflint_graph.checks.base import Rule
from tflint_graph.checks.variable_creation import (
    Creation,
    created_once,
    creator_decides,
    keras_creation,
    optimizer_has_slots,
)
from tflint_graph.core.finding import Finding
from tflint_graph.model.context import FunctionNode, ModuleContext, TracedFunction, TraceKind
from tflint_graph.model.names import dotted
from tflint_graph.model.values import assigned_value, calls_in
from tflint_graph.traced import traced_of
from tflint_graph.traced.callsites import imported_names, variable_roles

_MODEL_NAMES = ("keras.Model", "keras.Sequential", "keras.models.Model")
# A tf.function's positional parameters, and (parameter, "optimizer" | "model") pairs.
Roles = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]


class VariableOwnerCreatedPerTrace(Rule):
    """A Keras layer, model, optimizer or metric built in traced code creates variables."""

    code = "TFG208"
    name = "variable-owner-created-per-trace"
    QUIET_IN_TESTS = True
    RAISES_WHILE_TRACING = True
    traced_only: ClassVar[bool] = False  # also checks eager calls of a tf.function

    VALID = [
        """
import tensorflow as tf

class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.flatten = tf.keras.layers.Flatten()
        self.dense = tf.keras.layers.Dense(10)

    def call(self, x):
        x = tf.keras.layers.Flatten()(x)  # no variables: fine
        return self.dense(x)
""",
        """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()
loss_metric = tf.keras.metrics.Mean()

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    loss_metric.update_state(loss)
    return loss
""",
        """
import tensorflow as tf

class Head(tf.Module):
    def __init__(self):
        self.dense = None

    @tf.function
    def __call__(self, x):
        if self.dense is None:
            self.dense = tf.keras.layers.Dense(4)
        return self.dense(x)
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def predict(x):
    return tf.keras.layers.Dense(4)(x)  # TFG208
""",
        """
import tensorflow as tf

class Model(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        tracker = tf.keras.metrics.Mean()  # TFG208
        tracker.update_state(self.compute_loss(x, y, self(x)))
        return {"loss": tracker.result()}
""",
        """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
opt_a = tf.keras.optimizers.Adam()
opt_b = tf.keras.optimizers.Adam(learning_rate=1e-4)

@tf.function
def train_step(model, optimizer, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

x = tf.ones([2, 3])
train_step(model, opt_a, x)
train_step(model, opt_b, x)  # TFG208
""",
    ]

    def __init__(self, ctx: ModuleContext, sink: list[Finding]) -> None:
        super().__init__(ctx, sink)
        # (scope, tf.function, parameter) -> the objects passed so far, by identity key
        self._seen: dict[tuple[object, object, str], list[object]] = {}
        self._first_calls: dict[tuple[object, object, str], cst.Call] = {}

    # -- constructions in traced code ---------------------------------------------------
    def _creation(self, call: cst.Call) -> Creation | None:
        return self.ctx.memo("keras-creation", call, lambda: keras_creation(self.ctx, call))

    def _fails(self, call: cst.Call, fn: TracedFunction) -> Creation | None:
        """The construction ``call`` creates variables on this trace."""
        found = self._creation(call)
        if found is None:
            return None
        if found.when == "call" and not self._called(call, fn):
            return None
        if found.when == "apply" and not self._called(call, fn, ("apply",)):
            return None
        if created_once(self.ctx, call, fn) or creator_decides(self.ctx, call, fn):
            return None
        return found

    def _called(
        self,
        call: cst.Call,
        fn: TracedFunction,
        methods: tuple[str, ...] = ("__call__", "build", "predict_on_batch"),
    ) -> bool:
        """``Dense(4)(x)``, or ``layer = Dense(4)`` then ``layer(x)`` in the same function;
        with other ``methods`` (``ema.apply(v)``), a call of one of those on it."""
        plain = "__call__" in methods
        parent = self.ctx.parent(call)
        if plain and isinstance(parent, cst.Call) and parent.func is call:
            return True
        if isinstance(parent, cst.Attribute) and parent.attr.value in methods:
            outer = self.ctx.parent(parent)
            if isinstance(outer, cst.Call) and outer.func is parent and (plain or outer.args):
                return True
        targets: set[str] = set()
        if isinstance(parent, cst.Assign) and parent.value is call:
            for t in parent.targets:
                text = dotted(t.target)
                if text is not None:
                    targets.add(text)
        elif isinstance(parent, cst.AnnAssign) and parent.value is call:
            text = dotted(parent.target)
            if text is not None:
                targets.add(text)
        if not targets:
            return False
        for used in calls_in(fn.node):
            text = dotted(used.func)
            if plain and text in targets:
                return True
            if (
                isinstance(used.func, cst.Attribute)
                and used.func.attr.value in methods
                and dotted(used.func.value) in targets
                and (plain or used.args)  # `ema.apply()` with no list makes nothing in TF2
            ):
                return True
        return False

    def _inside_reported(self, call: cst.Call, fn: TracedFunction) -> bool:
        """An enclosing construction (``Sequential([Dropout(0.5)])``) is reported instead."""
        for anc in self.ctx.ancestors(call):
            if isinstance(anc, cst.BaseStatement) or anc is fn.node:
                return False
            if isinstance(anc, cst.Call) and self._fails(anc, fn) is not None:
                return True
        return False

    def visit_Call(self, node: cst.Call, fn: TracedFunction | None) -> None:
        if fn is None:
            self._check_eager_call(node)
            return
        found = self._fails(node, fn)
        if found is None or self._inside_reported(node, fn):
            return
        shown = self.ctx.code(node.func)
        when = {
            "construct": "when it is constructed",
            "apply": "when its .apply() runs",
        }.get(found.when, "when it is first called")
        self.report(
            node,
            f"{shown}(...) built in {fn.where} creates new variables on every trace ({when}): "
            "tf.function raises ValueError (it only supports singleton tf.Variables created on "
            f"the first call); create the {found.kind} once outside the traced code (in "
            "__init__ or at module level) and reuse it",
            fn,
        )

    # -- one tf.function, several optimizers or models ----------------------------------
    def _check_eager_call(self, call: cst.Call) -> None:
        ctx = self.ctx
        if not ctx.traced and not ctx.view.tf_functions:
            return
        if not isinstance(call.func, cst.Name | cst.Attribute):
            return
        scope = ctx.enclosing_function(call)
        for target, (params, roles) in self._tf_functions(call.func):
            held = {}
            for name, role in roles:
                held.setdefault(name, set()).add(role)
            for index, arg in enumerate(call.args):
                if arg.star:
                    break
                if arg.keyword is not None:
                    param = arg.keyword.value
                elif index < len(params):
                    param = params[index]
                else:
                    continue
                if param in held:
                    self._check_argument(call, scope, target, param, held[param], arg.value)

    def _name(self, call: cst.Call) -> str:
        return self.ctx.code(call.func)

    def _tf_functions(self, func: cst.Name | cst.Attribute) -> list[tuple[object, Roles]]:
        """The module-level tf.functions a name calls (this module's, or one another
        module of the run defines and this one imports), each with its parameters' roles."""
        ctx = self.ctx
        traced = traced_of(ctx)
        found: list[cst.FunctionDef] = []
        for a in ctx.bindings(func) if isinstance(func, cst.Name) else ():
            node = a.node
            if isinstance(node, cst.FunctionDef):
                info = ctx.traced.get(node)
                if info is not None and info.kind is TraceKind.DECORATED and info.parent is None:
                    found.append(node)
            elif isinstance(node, cst.Name):
                value = assigned_value(ctx, node)
                if (
                    isinstance(value, cst.Call)
                    and traced.tf_function_options(value.func) is not None
                ):
                    for fn, _ in traced.callables(value, None):
                        if isinstance(fn, cst.FunctionDef) and fn in ctx.traced:
                            found.append(fn)
        local: list[tuple[object, Roles]] = [
            (f, variable_roles(f)) for f in found if ctx.enclosing_class(f) is None
        ]
        if local or not ctx.view.tf_functions:
            return local
        for name in imported_names(ctx, func):
            imported = ctx.view.tf_functions.get(name)
            if imported is not None and imported.roles and "." not in imported.qualname:
                local.append((name, (imported.params, imported.roles)))
        return local

    def _check_argument(
        self,
        call: cst.Call,
        scope: FunctionNode | None,
        target: object,
        param: str,
        roles: set[str],
        value: cst.BaseExpression,
    ) -> None:
        obj = self._object(value)
        if obj is None:
            return
        key, kind, construction = obj
        if kind not in roles:
            return
        slot = (scope, target, param)
        seen = self._seen.setdefault(slot, [])
        fresh_each_time = isinstance(value, cst.Call) and self._in_loop(call, scope)
        if key in seen and not fresh_each_time:
            return
        first = seen[0] if seen else None
        earlier = self._first_calls.setdefault(slot, call)
        if first is not None and _exclusive(self.ctx, earlier, call):
            return  # `if use_adam: step(m, adam) else: step(m, sgd)`: one runs per call
        seen.append(key)
        if first is None and not fresh_each_time:
            return
        if kind == "optimizer" and not optimizer_has_slots(self.ctx, construction):
            return
        shown = self.ctx.code(value)
        name = self._name(call)
        if kind == "optimizer":
            why = (
                f"{self.ctx.code(construction.func)} creates its slot variables while this "
                "call retraces"
            )
            instead = "one tf.function per optimizer (build it in a factory) or reuse one optimizer"
        else:
            why = "the optimizer meets the new model's variables while this call retraces"
            instead = "one tf.function per model (build the step in a factory)"
        earlier = (
            "every iteration passes a new one"
            if first is None
            else f"an earlier call passed {self._display(first)}"
        )
        self.report(
            call,
            f"{name}() is called with another {kind} {shown} ({earlier}): {why}, and "
            f"tf.function raises ValueError for variables created on a non-first call; use "
            f"{instead}",
            None,
        )

    def _display(self, key: object) -> str:
        if isinstance(key, cst.Call):
            return self.ctx.code(key)
        if isinstance(key, tuple) and key and isinstance(key[0], str):
            return key[0]
        return "another object"

    def _in_loop(self, call: cst.Call, scope: FunctionNode | None) -> bool:
        for anc in self.ctx.ancestors(call):
            if anc is scope:
                return False
            if isinstance(anc, cst.For | cst.While):
                return True
        return False

    def _object(self, value: cst.BaseExpression) -> tuple[object, str, cst.Call] | None:
        """(identity key, "optimizer"/"model", its construction) for an argument."""
        if isinstance(value, cst.Call):
            kind = self._object_kind(value)
            return (value, kind, value) if kind is not None else None
        if not isinstance(value, cst.Name):
            return None
        bindings = self.ctx.bindings(value)
        if len(bindings) != 1:
            return None
        node = bindings[0].node
        if not isinstance(node, cst.Name):
            return None
        bound = assigned_value(self.ctx, node)
        if not isinstance(bound, cst.Call):
            return None
        kind = self._object_kind(bound)
        if kind is None:
            return None
        return (value.value, node), kind, bound

    def _object_kind(self, call: cst.Call) -> str | None:
        if self.ctx.resolve(call.func).is_(*_MODEL_NAMES):
            return "model"
        found = self._creation(call)
        if found is not None and found.kind in ("optimizer", "model"):
            return found.kind
        return None


def _exclusive(ctx: ModuleContext, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """``a`` and ``b`` sit in different branches of one ``if`` (the body and the ``else``
    or an ``elif``): no run of the function takes both."""
    inside_a = set(map(id, ctx.ancestors(a)))
    for node in ctx.ancestors(b):
        if isinstance(node, cst.If) and id(node) in inside_a:
            in_body_a = _within(ctx, a, node.body)
            in_body_b = _within(ctx, b, node.body)
            if in_body_a != in_body_b:
                return True
    return False


def _within(ctx: ModuleContext, node: cst.CSTNode, block: cst.CSTNode) -> bool:
    return any(anc is block for anc in ctx.ancestors(node))
