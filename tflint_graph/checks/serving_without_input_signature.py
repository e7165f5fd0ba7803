from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatch

import libcst as cst

from tflint_graph.checks.base import ModuleRule
from tflint_graph.checks.fixing import Site
from tflint_graph.core.facts import ExportFact
from tflint_graph.core.finding import Severity
from tflint_graph.model.context import FunctionNode, ModuleContext
from tflint_graph.traced import traced_of
from tflint_graph.traced.callsites import TfFunctionRef, decorated, tf_function_of, wrapped
from tflint_graph.traced.exports import (
    GCF,
    Exported,
    Saved,
    export_sites,
    is_gcf,
    needs_inputs,
    signature_skeleton,
    single_value,
    tf_alias,
)

_TF_MODULE = ("tensorflow.Module",)


@dataclass(frozen=True)
class _Case:
    """One function to report, and why (lower ``rank`` wins when several reasons meet)."""

    rank: int
    node: cst.CSTNode  # the def (or lambda, or the tf.function(...) call) to report at
    fn: FunctionNode | None  # the Python function, for the skeleton
    display: str
    why: str  # what makes it exported, and what goes wrong
    plain: bool = False  # a plain Python function, not a tf.function


class ServingWithoutInputSignature(ModuleRule):
    """An exported or served `tf.function` without `input_signature` serves only traced shapes."""

    code = "TFG301"
    name = "serving-without-input-signature"
    severity = Severity.WARNING
    QUIET_IN_TESTS = True
    # Export sites: a module that only saves another module's functions has no traced code.
    TRIGGERS = frozenset({"saved_model", "save_model", "signatures", "add_endpoint"})
    # The signature is guessed from the body (ranks, dtypes, float32 by default): a wrong
    # guess makes calls with other inputs raise, and Python arguments are no longer taken.
    FIX_SAFETY = "unsafe"

    VALID = [
        """
import tensorflow as tf

class Scaler(tf.Module):
    def __init__(self):
        self.w = tf.Variable(2.0)

    @tf.function(input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)])
    def serve(self, x):
        return x * self.w

    @tf.function
    def reset(self):  # no inputs: tf.saved_model.save traces it itself
        self.w.assign(2.0)
        return self.w

m = Scaler()
tf.saved_model.save(m, "/tmp/scaler", signatures=m.serve)
""",
        """
import tensorflow as tf

class Scaler(tf.Module):
    @tf.function
    def __call__(self, x):
        return x * 2.0

m = Scaler()
spec = tf.TensorSpec(shape=[None], dtype=tf.float32)
tf.saved_model.save(m, "/tmp/scaler", signatures=m.__call__.get_concrete_function(spec))

def serve(x):  # a plain function nobody exports
    return x

@tf.function
def step(x):  # a tf.function called eagerly only
    return x * 2.0

step(tf.constant([1.0]))
""",
    ]
    INVALID = [
        """
import tensorflow as tf

@tf.function
def serving_fn(x):  # TFG301
    return tf.strings.upper(x)

class Scaler(tf.Module):
    @tf.function
    def scale(self, x):  # TFG301
        return x[:, 0] * 2.0

tf.saved_model.save(Scaler(), "/tmp/scaler")
""",
        """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

@tf.function
def predict(x):  # TFG301
    return model(x)

tf.saved_model.save(model, "/tmp/model", signatures={"predict": predict})
""",
    ]

    def check(self) -> None:
        ctx = self.ctx
        self.traced = traced_of(ctx)
        self.tf = tf_alias(ctx)
        self.cases: dict[cst.CSTNode, _Case] = {}
        self.concretized = self._concretized()
        exported, saved = export_sites(ctx)
        for item in exported:
            if item.endpoint:
                self._endpoint(item)
            else:
                self._signature(item)
        for obj in saved:
            self._saved_module(obj)
        for fact in ctx.view.exported:
            self._exported_elsewhere(fact)
        self._name_patterns()
        for case in self.cases.values():
            self._emit(case)

    # -- what a tf.function reference is --------------------------------------------------
    def _add(self, case: _Case) -> None:
        known = self.cases.get(case.node)
        if known is None or case.rank < known.rank:
            self.cases[case.node] = case

    def _given(self, ref: TfFunctionRef) -> bool:
        """The tf.function has an input_signature (or options we cannot read)."""
        if ref.info.signature:
            return True
        for call in ref.options:
            if any(a.star == "**" for a in call.args):
                return True
            # tf.function(fn, [spec, ...]): the second positional argument is the signature.
            positional = [a for a in call.args if a.keyword is None]
            if len(positional) >= 2 and self.traced.is_tf_function(call.func):
                return True
        return False

    def _anchor(self, ref: TfFunctionRef) -> cst.CSTNode | None:
        """Where a tf.function of this module is reported: its def, else its lambda, else
        the ``tf.function(...)`` call that makes it; None for another module's."""
        if ref.node is not None:
            return ref.node
        if ref.info.origin == self.ctx.path and ref.options:
            return ref.options[0]
        return None

    def _unspecified(self, ref: TfFunctionRef | None) -> bool:
        """``ref`` is a tf.function that has no input_signature and needs inputs."""
        if ref is None or self._given(ref):
            return False
        return ref.node is None or needs_inputs(self.ctx, ref.node)

    def _concretized(self) -> set[cst.CSTNode]:
        """tf.functions given specs elsewhere: ``f.get_concrete_function(spec, ...)``."""
        found: set[cst.CSTNode] = set()
        for at, call in self.traced.facts.calls:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == GCF and call.args:
                ref = tf_function_of(self.ctx, func.value, at)
                anchor = self._anchor(ref) if ref is not None else None
                if anchor is not None:
                    found.add(anchor)
                # `make_serve(model).get_concrete_function(spec)`: what the factory returns.
                found.update(f for f, _ in self.traced.callables(func.value, at))
                if ref is None and isinstance(func.value, cst.Attribute):
                    # `model.serve.get_concrete_function(input_ids=spec)` on an instance
                    # the analysis cannot follow (a parameter): the module's methods of
                    # that name get their specs there.
                    found.update(self._methods_named(func.value.attr.value))
        return found

    def _methods_named(self, name: str) -> list[cst.FunctionDef]:
        return [
            item
            for cls in self.ctx.module.body
            if isinstance(cls, cst.ClassDef)
            for item in cls.body.body
            if isinstance(item, cst.FunctionDef) and item.name.value == name
        ]

    # -- export sites -------------------------------------------------------------------
    def _signature(self, item: Exported) -> None:
        expr, at, where = item.expr, item.at, item.where
        if isinstance(expr, cst.Name):
            value = single_value(self.ctx, expr)
            if value is not None and is_gcf(value):
                expr = value  # `cf = f.get_concrete_function()`, then `signatures=cf`
        if isinstance(expr, cst.Call):
            if not is_gcf(expr) or expr.args:
                return  # a concrete function with specs, or something we cannot read
            assert isinstance(expr.func, cst.Attribute)
            ref = tf_function_of(self.ctx, expr.func.value, at)
            if self._unspecified(ref):
                assert ref is not None
                why = (
                    f"get_concrete_function() without specs, for signatures= of {where}, "
                    "raises TypeError on a tf.function without input_signature"
                )
                self._tf_function(ref, expr, 0, why)
            return
        ref = tf_function_of(self.ctx, expr, at)
        if ref is not None:
            if self._unspecified(ref):
                if where.startswith("export("):
                    why = (
                        f"passed in signatures= to {where} without an input_signature: Keras "
                        "3's export ignores signatures= (it is not exported at all); register "
                        "it with ExportArchive.add_endpoint() and specs"
                    )
                else:
                    why = (
                        f"passed in signatures= to {where} without an input_signature: saving "
                        "raises ValueError (a signature needs an input_signature or a "
                        "concrete function)"
                    )
                self._tf_function(ref, expr, 0, why)
            return
        plain = self._plain_function(expr, at)
        if plain is not None and needs_inputs(self.ctx, plain):
            why = (
                f"passed in signatures= to {where} but not a tf.function: saving raises "
                "ValueError (a signature needs a tf.function with an input_signature or a "
                "concrete function)"
            )
            self._add(_Case(0, plain, plain, _display(self.ctx, plain), why, plain=True))

    def _endpoint(self, item: Exported) -> None:
        ref = tf_function_of(self.ctx, item.expr, item.at)
        if ref is not None:
            if self._unspecified(ref):
                why = (
                    f"registered with {item.where} without specs: that raises ValueError "
                    "unless it was called before, and then exports only the shapes traced "
                    "so far"
                )
                self._tf_function(ref, item.expr, 1, why)
            return
        plain = self._plain_function(item.expr, item.at) if item.archive else None
        if plain is not None and needs_inputs(self.ctx, plain):
            why = (
                f"registered with ExportArchive.{item.where} without input_signature= and "
                "not a tf.function: add_endpoint raises ValueError"
            )
            self._add(_Case(1, plain, plain, _display(self.ctx, plain), why, plain=True))

    def _saved_module(self, item: Saved) -> None:
        """``tf.saved_model.save(obj, path)``: every tf.function of a tf.Module subclass is
        saved with only its traced concrete functions."""
        cls = self._instance_class(item.obj, item.at)
        if cls is not None:
            self._saved_class(cls, f"tf.saved_model.save() (line {item.line})", item.signatures)

    def _exported_elsewhere(self, fact: ExportFact) -> None:
        """Another module of the run exports a function or saves an instance of a class
        defined here: reported here, at the def."""
        head, _, rest = fact.target.partition(".")
        if fact.kind == "object":
            cls = self._module_class(head) if not rest else None
            if cls is not None:
                self._saved_class(cls, fact.why, fact.signatures, frozenset(fact.touched))
            return
        for fn, _ in self.traced.defined(fact.target):
            if not isinstance(fn, cst.FunctionDef):
                continue
            ref = decorated(self.ctx, fn)
            if ref is None and not rest:
                ref = self._module_wrapped(head)
            if ref is not None:
                if self._unspecified(ref) and fn not in self.concretized:
                    why = fact.why
                    if "signatures=" in why:
                        why += (
                            ": saving raises ValueError (a signature needs an input_signature "
                            "or a concrete function)"
                        )
                    else:
                        why += ": that raises ValueError unless it was called before"
                    self._tf_function(ref, fn, 0, why)
            elif not fn.decorators and needs_inputs(self.ctx, fn):
                why = f"{fact.why}, but not a tf.function: that raises ValueError"
                self._add(_Case(0, fn, fn, _display(self.ctx, fn), why, plain=True))

    def _module_wrapped(self, name: str) -> TfFunctionRef | None:
        """``name = tf.function(fn, ...)`` at module level."""
        for stmt in self.ctx.module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if (
                        isinstance(small, cst.Assign)
                        and len(small.targets) == 1
                        and isinstance(small.targets[0].target, cst.Name)
                        and small.targets[0].target.value == name
                    ):
                        return wrapped(self.ctx, small.value, name, None)
        return None

    def _module_class(self, name: str) -> cst.ClassDef | None:
        for stmt in self.ctx.module.body:
            if isinstance(stmt, cst.ClassDef) and stmt.name.value == name:
                return stmt
        return None

    def _saved_class(
        self,
        cls: cst.ClassDef,
        where: str,
        signatures: bool,
        touched: frozenset[str] = frozenset(),
    ) -> None:
        if not self._is_tf_module(cls, frozenset()):
            return
        if self.traced.keras_kinds(cls):
            return  # Keras decides what a model saves
        why = (
            f"a tf.function of {cls.name.value}, saved by {where} without signatures= or "
            "input_signature: the SavedModel gets no serving signature and keeps only the "
            "input shapes traced before saving"
        )
        # With signatures=, the object's other tf.functions are still saved (and callable
        # after loading), but only with the shapes traced before saving.  Helpers the
        # exported signatures call get their shapes from them: not reported.
        skip = self._helpers() if signatures else set()
        if signatures:
            why = (
                f"a tf.function of {cls.name.value}, saved by {where} outside its "
                "signatures= and without input_signature: the SavedModel keeps only the "
                "input shapes traced before saving, and calling it after loading with any "
                "other shape fails"
            )
        for owner in self._class_chain(cls):
            for stmt in owner.body.body:
                if (
                    isinstance(stmt, cst.FunctionDef)
                    and stmt not in skip
                    and stmt.name.value not in touched
                ):
                    ref = decorated(self.ctx, stmt)
                    if stmt not in self.concretized and self._unspecified(ref):
                        assert ref is not None
                        self._tf_function(ref, stmt, 3, why)
            for attr, values in self.traced.facts.self_values.get(owner, {}).items():
                if len(values) != 1 or attr in touched:
                    continue
                value, where = values[0]
                ref = wrapped(self.ctx, value, f"self.{attr}", where)
                if ref is not None and self._unspecified(ref):
                    anchor = self._anchor(ref)
                    if anchor is not None and anchor not in self.concretized | skip:
                        self._tf_function(ref, anchor, 3, why)

    # -- serving names ------------------------------------------------------------------
    def _name_patterns(self) -> None:
        why = (
            "named like a serving endpoint but without input_signature: a SavedModel keeps "
            "only the input shapes traced before export, with no serving signature, and each "
            "new request shape retraces it"
        )
        for fn in self.traced.facts.functions:
            ref = decorated(self.ctx, fn)
            if (
                ref is not None
                and self._serving(fn.name.value)
                and fn not in self.concretized
                and fn not in self._helpers()
                and self._unspecified(ref)
            ):
                self._tf_function(ref, fn, 2, why)
        for at, call in self.traced.facts.calls:
            target = self._assigned_to(call)
            if target is None:
                continue
            ref = wrapped(self.ctx, call, target, at)
            if ref is None or not self._unspecified(ref):
                continue
            inner = ref.node.name.value if isinstance(ref.node, cst.FunctionDef) else ""
            if not (self._serving(target.rpartition(".")[2]) or self._serving(inner)):
                continue
            anchor = self._anchor(ref)
            if (
                anchor is not None
                and anchor not in self.concretized
                and anchor not in self._helpers()
            ):
                shown = None if ref.node is not None else f"{target} = {self.quote(call, 50)}"
                self._tf_function(ref, call, 2, why, shown)

    def _helpers(self) -> set[cst.CSTNode]:
        """Functions called by a traced function that has specs: a serving-named helper of
        another endpoint (``serve_text``, exported with specs, calling ``self.serve``) gets
        its shapes from that caller, so its name alone says nothing."""
        return self.ctx.memo("tfg301-helpers", self.ctx.module, self._called_with_specs)

    def _called_with_specs(self) -> set[cst.CSTNode]:
        found: set[cst.CSTNode] = set()
        for node, info in self.ctx.traced.items():
            if info.input_signature is None and node not in self.concretized:
                continue
            facts = self.traced.facts.bodies.get(node)
            for call in facts.calls if facts is not None else ():
                found.update(f for f, _ in self.traced.callables(call.func, node) if f is not node)
        return found

    def _serving(self, name: str) -> bool:
        return bool(name) and any(fnmatch(name, p) for p in self.ctx.config.serving_name_patterns)

    def _assigned_to(self, call: cst.Call) -> str | None:
        """``serve`` / ``self.serve`` for ``serve = tf.function(...)``."""
        parent = self.ctx.parent(call)
        if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
            return None
        target = parent.targets[0].target
        if isinstance(target, cst.Name):
            return target.value
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            return f"{target.value.value}.{target.attr.value}"
        return None

    # -- resolution helpers -------------------------------------------------------------
    def _tf_function(
        self,
        ref: TfFunctionRef,
        site: cst.CSTNode,
        rank: int,
        why: str,
        shown: str | None = None,
    ) -> None:
        anchor = self._anchor(ref)
        if anchor is None:
            # Defined in another module of the run: that module reports it at its def (the
            # project hands it this module's export as an ExportFact).
            return
        elif isinstance(ref.node, cst.FunctionDef) and ref.info.display != (
            own := f"{ref.node.name.value}()"
        ):
            display = f"{own} (as {ref.info.display.removesuffix('()')})"
        else:
            display = shown or ref.info.display
        self._add(_Case(rank, anchor, ref.node, display, why))

    def _plain_function(
        self, expr: cst.BaseExpression, at: FunctionNode | None
    ) -> FunctionNode | None:
        """A function of this module without any decorator (surely no tf.function)."""
        if isinstance(expr, cst.Lambda):
            return expr
        if isinstance(expr, cst.Name):
            found = self.ctx.bindings(expr)
            if len(found) == 1 and isinstance(found[0].node, cst.FunctionDef):
                node = found[0].node
                return node if not node.decorators else None
        if isinstance(expr, cst.Attribute):
            methods = self.traced.methods_of(expr, at)
            if (
                len(methods) == 1
                and not methods[0].decorators
                and not self.traced.attribute_values(expr, at)
            ):
                return methods[0]
        return None

    def _instance_class(
        self, expr: cst.BaseExpression, at: FunctionNode | None
    ) -> cst.ClassDef | None:
        """The class of this module that ``expr`` is surely an instance of."""
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            found = self.ctx.bindings(expr.func)
            if len(found) == 1 and isinstance(found[0].node, cst.ClassDef):
                return found[0].node
            return None
        if isinstance(expr, cst.Name):
            if expr.value == "self" and isinstance(at, cst.FunctionDef):
                params = at.params.params
                if params and params[0].name.value == "self":
                    return self.ctx.enclosing_class(at)
                return None
            value = single_value(self.ctx, expr)
            if isinstance(value, cst.Call):
                return self._instance_class(value, at)
        return None

    def _is_tf_module(self, cls: cst.ClassDef, seen: frozenset[cst.ClassDef]) -> bool:
        for arg in cls.bases:
            if arg.keyword is None and self.traced.resolve(arg.value).is_(*_TF_MODULE):
                return True
        return any(
            self._is_tf_module(base, seen | {cls})
            for base in self.traced.module_bases(cls)
            if base not in seen
        )

    def _class_chain(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        chain: list[cst.ClassDef] = []
        todo = [cls]
        while todo:
            current = todo.pop()
            if current not in chain:
                chain.append(current)
                todo += self.traced.module_bases(current)
        return chain

    # -- reporting ----------------------------------------------------------------------
    def _emit(self, case: _Case) -> None:
        skeleton = signature_skeleton(self.ctx, case.fn, self.tf)
        if case.plain:
            name = case.display.removesuffix("()") if case.display.endswith("()") else "fn"
            fix = f"{self.tf}.function({name}, {skeleton})"
            todo = f"wrap it as {fix}"
        else:
            fix = skeleton
            todo = f"add {skeleton} to its tf.function"
        if case.fn is not None:
            todo += " (guessed from the body: adjust)"
        traced = self.ctx.traced.get(case.fn) if case.fn is not None else None
        self.report(case.node, f"{case.display}: {case.why}; {todo}", traced, fix=fix)

    @classmethod
    def fix(
        cls,
        node: cst.CSTNode,
        updated: cst.CSTNode,
        site: Site,
        suggestion: str | None = None,
    ) -> cst.CSTNode | None:
        """The guessed signature (``suggestion``, the finding's ``input_signature=[...]``)
        added to the def's ``@tf.function`` decorator.  None for a function made a
        tf.function otherwise (``tf.function(fn)``, a lambda) or not at all (it needs
        wrapping), a signature not guessed (``shape=[None, ...]``), a function with
        ``*args`` or keyword-only parameters, or a skeleton not written with the module's
        own TensorFlow binding."""
        signature = _signature_arg(suggestion, site.tensorflow_alias(node))
        if signature is None:
            return None
        if not isinstance(node, cst.FunctionDef) or not isinstance(updated, cst.FunctionDef):
            return None
        params = node.params
        if isinstance(params.star_arg, cst.Param) or any(
            p.default is None for p in params.kwonly_params
        ):
            return None
        found = [i for i, d in enumerate(node.decorators) if _is_tf_function(d.decorator, site)]
        if len(found) != 1:
            return None
        decorator = updated.decorators[found[0]]
        call = decorator.decorator
        if not isinstance(call, cst.Call):
            call = cst.Call(call)
        elif any(a.keyword is None for a in call.args):
            return None  # tf.function(fn) as a decorator: not what it looks like
        with_signature = _with_signature(call, signature)
        if with_signature is None:
            return None
        rewritten = decorator.with_changes(decorator=with_signature)
        decorators = list(updated.decorators)
        decorators[found[0]] = rewritten
        return updated.with_changes(decorators=decorators)


def _is_tf_function(expr: cst.BaseExpression, site: Site) -> bool:
    """``expr`` is ``tf.function`` or a call of it (``tf.function(jit_compile=True)``)."""
    func = expr.func if isinstance(expr, cst.Call) else expr
    return site.is_(func, "tensorflow.function")


def _signature_arg(suggestion: str | None, alias: str | None) -> cst.Arg | None:
    """``input_signature=[...]`` as an argument, when ``suggestion`` is a complete guess
    written with ``alias``, the module's binding of tensorflow."""
    if suggestion is None or alias is None or "..." in suggestion:
        return None
    prefix = "input_signature="
    if not suggestion.startswith(f"{prefix}[{alias}.TensorSpec(") and suggestion != f"{prefix}[]":
        return None
    try:
        value = cst.parse_expression(suggestion.removeprefix(prefix))
    except cst.ParserSyntaxError:
        return None
    if not isinstance(value, cst.List):
        return None
    return cst.Arg(
        value,
        keyword=cst.Name("input_signature"),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )


def _with_signature(call: cst.Call, signature: cst.Arg) -> cst.Call | None:
    if any(a.keyword is not None and a.keyword.value == "input_signature" for a in call.args):
        return None
    args = list(call.args)
    if args and args[-1].comma == cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        )
    elif args:  # a trailing comma, maybe before a line break: the new argument follows it
        signature = signature.with_changes(comma=args[-1].comma)
        args[-1] = args[-1].with_changes(
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        )
    return call.with_changes(args=[*args, signature])


def _display(ctx: ModuleContext, fn: FunctionNode) -> str:
    if isinstance(fn, cst.FunctionDef):
        return f"{fn.name.value}()"
    return f"lambda (line {ctx.position(fn).start.line})"
