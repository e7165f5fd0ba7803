"""Shared pieces of the export rule (TFG301): where a module exports functions, which
parameters an ``input_signature`` must cover, and a ready signature skeleton.

Export sites are ``tf.saved_model.save(obj, path, signatures=...)`` (and ``model.save`` /
``model.export`` / ``save_model`` with ``signatures=``) and ``ExportArchive.add_endpoint``.
Each hands over functions (a value, a dict's values, ``f.get_concrete_function()``), or,
without ``signatures=``, a whole object whose tf.functions are saved.

The skeleton is a starting point, never a claim: the rank comes from how the body indexes a
parameter (``x[:, 0]`` needs at least two dimensions), the dtype from calls that only accept
one kind of input (``tf.strings.*``/``tf.io.decode_*`` take strings, ``tf.gather`` indices
are integers).  A cast *from* a parameter says nothing certain about its dtype, so it is
ignored; without evidence the shape is ``None`` (any rank) and the dtype ``tf.float32``.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tflint_graph.core.facts import ExportFact
from tflint_graph.model import walk
from tflint_graph.model.calls import argument
from tflint_graph.model.context import FunctionNode, ModuleContext
from tflint_graph.model.values import assigned_value, int_literal, loads_of
from tflint_graph.traced.callsites import imported_names, instance_classes
from tflint_graph.traced.code import TracedCode, traced_of

_SAVE = ("tensorflow.saved_model.save",)
_KERAS_SAVE = ("keras.models.save_model", "keras.saving.save_model")
_EXPORT_ARCHIVE = ("keras.export.ExportArchive",)
GCF = "get_concrete_function"


@dataclass(frozen=True)
class Exported:
    """A function expression handed to an export call."""

    expr: cst.BaseExpression
    at: FunctionNode | None  # the function holding the export call
    endpoint: bool  # ExportArchive.add_endpoint (else signatures=)
    where: str  # "tf.saved_model.save() (line 12)"
    archive: bool = False  # add_endpoint on a value surely built by ExportArchive()


@dataclass(frozen=True)
class Saved:
    """``tf.saved_model.save(obj, path)``: the object whose tf.functions are saved."""

    obj: cst.BaseExpression
    at: FunctionNode | None
    line: int
    signatures: bool = False  # saved with signatures=: its other tf.functions ride along


def single_value(ctx: ModuleContext, name: cst.Name) -> cst.BaseExpression | None:
    """``value`` when ``name`` is bound exactly once, by ``name = value``."""
    found = ctx.bindings(name)
    if len(found) != 1 or not isinstance(found[0].node, cst.Name):
        return None
    return assigned_value(ctx, found[0].node, with_items=False)


def is_gcf(expr: cst.BaseExpression) -> bool:
    """``f.get_concrete_function(...)``."""
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == GCF
    )


def export_sites(ctx: ModuleContext) -> tuple[list[Exported], list[Saved]]:
    """Every function handed to an export call in the module, and every object saved
    without signatures."""
    return ctx.memo("export-sites", ctx.module, lambda: _export_sites(ctx))


def _export_sites(ctx: ModuleContext) -> tuple[list[Exported], list[Saved]]:
    traced = traced_of(ctx)
    exported: list[Exported] = []
    saved: list[Saved] = []
    for at, call in traced.facts.calls:
        func = call.func
        res = traced.resolve(func)
        if res.is_(*_SAVE):
            signatures = argument(call, 2, "signatures")
            if isinstance(signatures, cst.Name) and signatures.value == "None":
                signatures = None  # the same as not passing it
            if signatures is not None:
                where = f"tf.saved_model.save() (line {ctx.line(call)})"
                exported += [Exported(v, at, False, where) for v in _values(ctx, signatures)]
            if (obj := argument(call, 0, "obj")) is not None:
                saved.append(Saved(obj, at, ctx.line(call), signatures is not None))
        elif res.is_(*_KERAS_SAVE) or (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("save", "export")
            and _is_object(ctx, func.value)
        ):
            signatures = argument(call, -1, "signatures")
            if signatures is not None:
                label = func.attr.value if isinstance(func, cst.Attribute) else "save_model"
                where = f"{label}() (line {ctx.line(call)})"
                exported += [Exported(v, at, False, where) for v in _values(ctx, signatures)]
        elif (
            isinstance(func, cst.Attribute)
            and func.attr.value == "add_endpoint"
            and argument(call, 2, "input_signature") is None
            and not any(a.star for a in call.args)
            and (fn := argument(call, 1, "fn")) is not None
        ):
            archive = _is_export_archive(ctx, traced, func.value)
            where = f"add_endpoint() (line {ctx.line(call)})"
            exported.append(Exported(fn, at, True, where, archive))
    return exported, saved


def _values(ctx: ModuleContext, expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The functions a ``signatures=`` value holds: the value, or a dict's values (also
    through a name bound once to a dict literal)."""
    if isinstance(expr, cst.Name):
        value = single_value(ctx, expr)
        if isinstance(value, cst.Dict):
            expr = value
    if isinstance(expr, cst.Dict):
        return [el.value for el in expr.elements if isinstance(el, cst.DictElement)]
    return [expr]


def _is_object(ctx: ModuleContext, expr: cst.BaseExpression) -> bool:
    """``model`` or ``self.model``: a variable of the program, not a module path such as
    ``tf.saved_model`` (with ``tf`` shadowed, or a module we do not know)."""
    if isinstance(expr, cst.Attribute):
        if not (isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return False
        expr = expr.value
    return isinstance(expr, cst.Name) and not ctx.resolve(expr).imported


def _is_export_archive(ctx: ModuleContext, traced: TracedCode, expr: cst.BaseExpression) -> bool:
    if not isinstance(expr, cst.Name):
        return False
    value = single_value(ctx, expr)
    return isinstance(value, cst.Call) and traced.resolve(value.func).is_(*_EXPORT_ARCHIVE)


def export_references(ctx: ModuleContext) -> set[str]:
    """Absolute names of other modules' functions that this module exports
    (``signatures={"embed": embed}`` with ``embed`` imported): the project looks them up
    as it does for called names, so that TFG301 learns whether they are tf.functions."""
    found: set[str] = set()
    for item in export_sites(ctx)[0]:
        expr = item.expr
        if isinstance(expr, cst.Name):
            value = single_value(ctx, expr)
            if value is not None and is_gcf(value):
                expr = value  # `cf = embed.get_concrete_function()`, then `signatures=cf`
        if is_gcf(expr):
            assert isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
            expr = expr.func.value
        res = ctx.resolve(expr)
        if res.local:
            continue
        for name in res.imported:
            absolute = ctx.view.absolute(name)
            if ctx.view.may_be_project(absolute):
                found.add(absolute)
    return found


_MAX_RANK = 8
_STRING_CALL_PREFIXES = (
    "tensorflow.strings.",
    "tensorflow.io.decode_",
    "tensorflow.io.parse_",
    "tensorflow.image.decode_",
)
# tf.strings functions whose first argument is not a string tensor.
_NOT_STRING_INPUT = frozenset(
    {
        "tensorflow.strings.as_string",
        "tensorflow.strings.format",
        "tensorflow.strings.unicode_encode",
        "tensorflow.strings.join",
        "tensorflow.strings.reduce_join",
    }
)
# (canonical call, positional index, keyword) whose argument holds integer indices.
_INT_ARGS = (
    ("tensorflow.gather", 1, "indices"),
    ("tensorflow.nn.embedding_lookup", 1, "ids"),
    ("tensorflow.one_hot", 0, "indices"),
)


def _is_staticmethod(ctx: ModuleContext, fn: cst.FunctionDef) -> bool:
    return any(ctx.resolve(d.decorator).is_builtin("staticmethod") for d in fn.decorators)


def input_params(ctx: ModuleContext, fn: FunctionNode) -> list[cst.Param]:
    """The parameters an ``input_signature`` must describe: the leading positional ones
    without a default (``self``/``cls`` of a method dropped).  TensorFlow accepts a
    signature shorter than the parameter list when the rest have defaults."""
    params = [*fn.params.posonly_params, *fn.params.params]
    if (
        isinstance(fn, cst.FunctionDef)
        and ctx.enclosing_class(fn) is not None
        and not _is_staticmethod(ctx, fn)
        and params
    ):
        params = params[1:]
    out: list[cst.Param] = []
    for p in params:
        if p.default is not None:
            break
        out.append(p)
    return out


def needs_inputs(ctx: ModuleContext, fn: FunctionNode) -> bool:
    """Calling ``fn`` needs arguments.  A tf.function without any is traced by
    ``tf.saved_model.save`` itself and is a valid signature as it is."""
    if input_params(ctx, fn):
        return True
    return any(p.default is None for p in fn.params.kwonly_params)


class _Evidence(walk.Visitor):
    """What the body of a function reveals about its parameters."""

    def __init__(self, ctx: ModuleContext, params: list[cst.Param]) -> None:
        self.ctx = ctx
        self.params = {p.name.value: p for p in params}
        self.rank: dict[str, int] = {}
        self.dtype: dict[str, str] = {}

    def _param(self, expr: cst.BaseExpression, items: bool = False) -> str | None:
        """The parameter ``expr`` names, when every binding it sees is that parameter (with
        ``items``, also ``x[...]``: indexing keeps the dtype)."""
        while items and isinstance(expr, cst.Subscript):
            expr = expr.value
        if not isinstance(expr, cst.Name) or expr.value not in self.params:
            return None
        found = self.ctx.bindings(expr)
        if len(found) == 1 and found[0].node is self.params[expr.value]:
            return expr.value
        return None

    def _at_least(self, name: str, rank: int) -> None:
        if rank > 0:
            self.rank[name] = min(max(self.rank.get(name, 0), rank), _MAX_RANK)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        name = self._param(node.value)
        if name is not None:
            dims = 0
            for element in node.slice:
                inner = element.slice
                if isinstance(inner, cst.Index):
                    value = inner.value
                    if isinstance(value, cst.Ellipsis) or (
                        isinstance(value, cst.Name) and value.value == "None"
                    ):
                        continue
                    if self.ctx.resolve(value).is_("tensorflow.newaxis"):
                        continue
                dims += 1
            self._at_least(name, dims)
            return
        # x.shape[k] and tf.shape(x)[k]: x has more than k dimensions.
        base = node.value
        target: str | None = None
        if isinstance(base, cst.Attribute) and base.attr.value == "shape":
            target = self._param(base.value)
        elif (
            isinstance(base, cst.Call)
            and base.args
            and self.ctx.resolve(base.func).is_("tensorflow.shape")
        ):
            target = self._param(base.args[0].value)
        if target is None or len(node.slice) != 1:
            return
        index = node.slice[0].slice
        if isinstance(index, cst.Index):
            k = int_literal(index.value)
            if k is not None:
                self._at_least(target, k + 1 if k >= 0 else -k)

    def visit_Call(self, node: cst.Call) -> None:
        names = self.ctx.resolve(node.func).imported
        if not names:
            return
        if any(n.startswith(_STRING_CALL_PREFIXES) for n in names) and not (
            names & _NOT_STRING_INPUT
        ):
            first = argument(node, 0)
            name = self._param(first, items=True) if first is not None else None
            if name is not None:
                self.dtype.setdefault(name, "string")
            return
        for call, index, keyword in _INT_ARGS:
            if call in names:
                arg = argument(node, index, *((keyword,) if keyword else ()))
                name = self._param(arg, items=True) if arg is not None else None
                if name is not None:
                    self.dtype.setdefault(name, "int32")


def tf_alias(ctx: ModuleContext) -> str:
    """How the module spells ``tensorflow`` (``tf``, ``tf2``...), for the skeleton."""
    for stmt in ctx.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if alias.evaluated_name == "tensorflow":
                        return alias.evaluated_alias or "tensorflow"
    return "tf"


GENERIC_SKELETON = "input_signature=[tf.TensorSpec(shape=[None, ...], dtype=...)]"


def signature_skeleton(ctx: ModuleContext, fn: FunctionNode | None, tf: str = "tf") -> str:
    """``input_signature=[tf.TensorSpec(shape=..., dtype=..., name="x"), ...]`` for ``fn``."""
    if fn is None:
        return GENERIC_SKELETON.replace("tf.", f"{tf}.")
    params = input_params(ctx, fn)
    evidence = _Evidence(ctx, params)
    evidence.walk(fn.body)
    specs = []
    for p in params:
        name = p.name.value
        rank = evidence.rank.get(name)
        shape = "None" if rank is None else "[" + ", ".join(["None"] * rank) + "]"
        dtype = evidence.dtype.get(name, "float32")
        specs.append(f'{tf}.TensorSpec(shape={shape}, dtype={tf}.{dtype}, name="{name}")')
    return f"input_signature=[{', '.join(specs)}]"


def foreign_exports(ctx: ModuleContext) -> list[ExportFact]:
    """What this module exports that another module of the run defines: a function passed
    in ``signatures=``/``add_endpoint`` (``signatures={"rank": module.rank}`` with
    ``module = RankerModule(...)`` imported), or an instance of an imported ``tf.Module``
    class saved here.  The defining module reports them at their def (SPEC: TFG301 goes on
    the def line)."""
    exported, saved = export_sites(ctx)
    facts: list[ExportFact] = []
    for item in exported:
        expr = item.expr
        if isinstance(expr, cst.Name):
            value = single_value(ctx, expr)
            if value is not None and is_gcf(value):
                expr = value
        if is_gcf(expr):
            assert isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
            if expr.args:
                continue  # specs given here
            expr = expr.func.value
        verb = "registered with" if item.endpoint else "passed in signatures= to"
        for target in imported_names(ctx, expr):
            why = f"{verb} {item.where} in {ctx.path} without an input_signature"
            facts.append(ExportFact(target, "function", why))
    for obj in saved:
        for target in instance_classes(ctx, obj.obj):
            where = f"tf.saved_model.save() in {ctx.path} (line {obj.line})"
            touched = _touched(ctx, obj.obj) if isinstance(obj.obj, cst.Name) else ()
            facts.append(ExportFact(target, "object", where, obj.signatures, touched))
    return facts


class _Attributes(walk.Visitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.found: set[str] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == self.name:
            self.found.add(node.attr.value)


def _touched(ctx: ModuleContext, obj: cst.Name) -> tuple[str, ...]:
    visitor = _Attributes(obj.value)
    visitor.walk(ctx.module)
    return tuple(sorted(visitor.found))


def exported_only(ctx: ModuleContext, node: FunctionNode) -> bool:
    """``node`` (a ``tf.function`` with an ``input_signature``) is traced for an export and
    never called from Python: every reference to it hands it to an export call
    (``signatures={"serve": serve}``, ``serve.get_concrete_function()``), or returns it from
    a factory whose every call is so handed (``signatures={"serving_default":
    _get_serve_fn(model)}``).  Its Python body runs once, when the model is saved."""
    return ctx.memo("exported-only", node, lambda: _exported_only(ctx, node))


def _exported_only(ctx: ModuleContext, node: FunctionNode) -> bool:
    if not isinstance(node, cst.FunctionDef):
        return False
    exported = {id(item.expr) for item in export_sites(ctx)[0]}
    if not exported:
        return False
    refs = loads_of(ctx, node.name, node)
    if not refs:
        return False
    for ref in refs:
        if _handed_to_export(ctx, ref, exported):
            continue
        ret = ctx.parent(ref)
        factory = ctx.enclosing_function(ref)
        if not (
            isinstance(ret, cst.Return)
            and ret.value is ref
            and isinstance(factory, cst.FunctionDef)
            and factory is not node
        ):
            return False
        calls = loads_of(ctx, factory.name, factory)
        if not calls or not all(
            isinstance(call := ctx.parent(c), cst.Call)
            and call.func is c
            and _handed_to_export(ctx, call, exported)
            for c in calls
        ):
            return False
    return True


def _handed_to_export(ctx: ModuleContext, expr: cst.CSTNode, exported: set[int]) -> bool:
    """``expr`` is an export call's function value, or ``expr.get_concrete_function(...)``
    is."""
    if id(expr) in exported:
        return True
    attr = ctx.parent(expr)
    call = ctx.parent(attr) if isinstance(attr, cst.Attribute) else None
    return (
        isinstance(call, cst.Call) and call.func is attr and is_gcf(call) and id(call) in exported
    )
