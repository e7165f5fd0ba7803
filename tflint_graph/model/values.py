"""Small questions several rules ask about values and bindings in traced code."""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum

import libcst as cst

from tflint_graph.model import walk
from tflint_graph.model.calls import passed_for
from tflint_graph.model.context import FunctionNode, ModuleContext, TracedFunction
from tflint_graph.model.names import dotted, last_name, root_name
from tflint_graph.model.scopes import Assignment, FunctionScope, GlobalScope

_CONTAINER_CALLS = (
    "builtins.list",
    "builtins.dict",
    "builtins.set",
    "collections.defaultdict",
    "collections.OrderedDict",
    "collections.deque",
    "collections.Counter",
)


class Owner(str, Enum):
    """Where a name bound outside the traced call lives."""

    MODULE = "module-level"
    CLOSURE = "closure"
    PARAMETER = "parameter"


def assigned_value(
    ctx: ModuleContext, target: cst.CSTNode, *, with_items: bool = True
) -> cst.BaseExpression | None:
    """``value`` for ``target = value`` / ``target: T = value`` (and, with ``with_items``,
    the context manager of ``with value as target``); None otherwise."""
    parent = ctx.parent(target)
    if isinstance(parent, cst.AssignTarget):
        stmt = ctx.parent(parent)
        if isinstance(stmt, cst.Assign):
            return stmt.value
    if isinstance(parent, cst.AnnAssign) and parent.target is target:
        return parent.value
    if with_items and isinstance(parent, cst.AsName):
        item = ctx.parent(parent)
        if isinstance(item, cst.WithItem):
            return item.item  # `with open(p) as f`: f is what the context manager gives
    return None


def name_values(ctx: ModuleContext, name: cst.Name) -> Iterator[cst.BaseExpression]:
    """Every value bound to ``name`` where it is used (assignments and parameter defaults)."""
    for a in ctx.bindings(name):
        if isinstance(a.node, cst.Param):
            if a.node.default is not None:
                yield a.node.default
        else:
            value = assigned_value(ctx, a.node)
            if value is not None:
                yield value


def passed_values(ctx: ModuleContext, name: cst.Name) -> list[cst.BaseExpression]:
    """What the module's own calls of a plain function give its parameter ``name`` (names
    followed to their assignments): empty when some call cannot tell, or nothing calls it."""
    params = [a.node for a in ctx.bindings(name) if isinstance(a.node, cst.Param)]
    if len(params) != 1:
        return []
    param = params[0]
    fn = next(
        (a for a in ctx.ancestors(param) if isinstance(a, cst.FunctionDef | cst.Lambda)), None
    )
    if not isinstance(fn, cst.FunctionDef) or ctx.enclosing_class(fn) is not None:
        return []
    calls = ctx.memo("calls-by-name", ctx.module, lambda: _calls_by_name(ctx.module))
    found: list[cst.BaseExpression] = []
    for call in calls.get(fn.name.value, ()):
        value = passed_for(call, fn.params, param, bound=False)
        if value is None:
            return []
        if isinstance(value, cst.Name):
            assigned = list(name_values(ctx, value))
            if not assigned:
                return []
            found.extend(assigned)
        else:
            found.append(value)
    return found


def _calls_by_name(module: cst.Module) -> dict[str, list[cst.Call]]:
    calls: dict[str, list[cst.Call]] = {}
    for node in walk.descendants(module):
        if type(node) is cst.Call and type(node.func) is cst.Name:
            calls.setdefault(node.func.value, []).append(node)
    return calls


def attribute_values(
    ctx: ModuleContext, attr: cst.Attribute, fn: TracedFunction
) -> Iterator[cst.BaseExpression]:
    """Values assigned to ``self.x`` anywhere in the class that owns method ``fn``."""
    if not (isinstance(attr.value, cst.Name) and attr.value.value in ("self", "cls")):
        return
    node = fn.node
    if not isinstance(node, cst.FunctionDef):
        return
    cls = ctx.enclosing_class(node)
    if cls is None:
        return
    wanted = attr.attr.value
    for target in ctx.memo("attribute-targets", cls, lambda: _attribute_targets(cls)):
        if target.attr.value == wanted:
            value = assigned_value(ctx, target)
            if value is not None:
                yield value
    for stmt in cls.body.body:  # class-level `x = []`
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        if isinstance(t.target, cst.Name) and t.target.value == wanted:
                            yield small.value


# Walkers are module-level classes: a class made per call costs its creation, a cold handler
# table, and a reference cycle (class <-> its MRO) that keeps the walked tree alive until a
# cyclic garbage collection.
class _Targets(walk.Visitor):
    def __init__(self) -> None:
        self.found: list[cst.Attribute] = []

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Attribute):
            self.found.append(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Attribute):
            self.found.append(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Attribute):
            self.found.append(node.asname.name)


def _attribute_targets(cls: cst.ClassDef) -> list[cst.Attribute]:
    targets = _Targets()
    targets.walk(cls)
    return targets.found


def values_of(
    ctx: ModuleContext, expr: cst.BaseExpression, fn: TracedFunction
) -> Iterator[cst.BaseExpression]:
    """What a name or ``self.attr`` may hold, as far as this module shows."""
    if isinstance(expr, cst.Name):
        yield from name_values(ctx, expr)
    elif isinstance(expr, cst.Attribute):
        yield from attribute_values(ctx, expr, fn)


def names_a_class(func: cst.BaseExpression) -> bool:
    """``func`` is spelt as a class by Python's convention (``ReplayBuffer``, ``pb.Program``;
    not ``CONSTANT`` or ``make_buffer``): calling it constructs an object."""
    name = last_name(func).lstrip("_")
    return bool(name) and name[0].isupper() and not name.isupper()


def is_container_literal(ctx: ModuleContext, value: cst.BaseExpression) -> bool:
    """A list/dict/set display, comprehension, or list()/dict()/set()/collections call."""
    if isinstance(value, cst.List | cst.Dict | cst.Set | cst.ListComp | cst.DictComp | cst.SetComp):
        return True
    if isinstance(value, cst.Call):
        return ctx.resolve(value.func).is_(*_CONTAINER_CALLS)
    return False


def owner_of(ctx: ModuleContext, name: cst.Name, fn: TracedFunction) -> Owner | None:
    """Where ``name`` lives if it outlives one call of ``fn``; None for locals and imports.

    A variable of an enclosing function that is itself traced is created anew on every
    trace, so it does not count as outliving the call.
    """
    found = ctx.bindings(name)
    if not found or any(type(a) is not Assignment for a in found):
        return None  # unbound, builtin or an import
    own = ctx.function_scope(fn.node)
    owner: Owner | None = None
    for a in found:
        if a.scope is own:
            if isinstance(a.node, cst.Param):
                owner = Owner.PARAMETER
            else:
                return None
        elif isinstance(a.scope, GlobalScope):
            owner = owner or Owner.MODULE
        elif isinstance(a.scope, FunctionScope):
            enclosing = (
                ctx.enclosing_function(a.node)
                if not isinstance(a.node, cst.Param)
                else (_function_of_param(ctx, a.node))
            )
            if enclosing is not None and enclosing in ctx.traced:
                return None
            owner = owner or Owner.CLOSURE
        else:
            return None
    return owner


def _function_of_param(ctx: ModuleContext, param: cst.Param) -> FunctionNode | None:
    for anc in ctx.ancestors(param):
        if isinstance(anc, cst.FunctionDef | cst.Lambda):
            return anc
    return None


def receiver_is_outer(
    ctx: ModuleContext, receiver: cst.BaseExpression, fn: TracedFunction
) -> str | None:
    """Describe ``receiver`` if it outlives the traced call (for messages), else None."""
    if isinstance(receiver, cst.Name):
        owner = owner_of(ctx, receiver, fn)
        return f"{owner.value} {receiver.value}" if owner is not None else None
    if isinstance(receiver, cst.Attribute):
        root = root_name(receiver)
        if root is None:
            return None
        found = ctx.bindings(root)
        if found and ctx.is_local_to(root, fn.node):
            return None  # an attribute of an object created in this call
        if found and all(type(a) is not Assignment for a in found):
            return None  # module state such as sys.path or os.environ: other rules' concern
        return f"attribute {dotted(receiver) or ctx.code(receiver)}"
    return None


def declared_outer_names(ctx: ModuleContext, fn: FunctionNode) -> set[str]:
    """Names a function declares ``global`` or ``nonlocal`` in its own body (not in
    functions or classes nested in it)."""
    if not isinstance(fn, cst.FunctionDef):
        return set()
    scope = ctx.function_scope(fn)
    return scope.declared_outer() if scope is not None else set()


def target_names(target: cst.BaseExpression) -> Iterator[cst.Name]:
    """Names bound by an assignment target (through tuples, lists and starred items)."""
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, cst.Tuple | cst.List):
        for el in target.elements:
            yield from target_names(el.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_names(target.value)


def ends_in_exit(body: cst.BaseSuite) -> bool:
    """The block's last statement is a ``return`` or ``raise`` (``if ...: return`` on one
    line too): nothing after the block runs when it does."""
    stmts = body.body
    last = stmts[-1] if stmts else None
    if isinstance(body, cst.SimpleStatementSuite):
        return isinstance(last, cst.Return | cst.Raise)
    if isinstance(last, cst.SimpleStatementLine) and last.body:
        return isinstance(last.body[-1], cst.Return | cst.Raise)
    return False


# The public spelling and the one TensorFlow's own libraries use.
_INIT_SCOPES = ("tensorflow.init_scope", "tensorflow.python.framework.ops.init_scope")


def is_init_scope(ctx: ModuleContext, with_node: cst.With) -> bool:
    """``with tf.init_scope():`` — its body runs eagerly, once, outside the graph."""
    return any(
        isinstance(item.item, cst.Call) and ctx.resolve(item.item.func).is_(*_INIT_SCOPES)
        for item in with_node.items
    )


def single_assignments(
    body: cst.BaseSuite,
) -> Iterator[tuple[cst.SimpleStatementLine, cst.Assign]]:
    """The one-target assignments that are statements of ``body`` itself (not inside a
    branch or loop), in order, each with its line."""
    for stmt in body.body if isinstance(body, cst.IndentedBlock) else ():
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    yield stmt, small


def call_mode(call: cst.Call) -> cst.BaseExpression | None:
    """The mode an ``open``-like call passes, second positionally or as ``mode=``."""
    return next(
        (a.value for a in call.args[1:2] if a.keyword is None),
        next((a.value for a in call.args if a.keyword and a.keyword.value == "mode"), None),
    )


def mode_writes(mode: cst.BaseExpression) -> bool:
    """A file mode that writes or appends (``"w"``, ``"ab"``, ``"r+"``); one not written as
    a string literal may, and counts as writing."""
    text = mode.evaluated_value if isinstance(mode, cst.SimpleString) else None
    return not isinstance(text, str) or any(c in text for c in "wax+")


def statement_of(ctx: ModuleContext, node: cst.CSTNode) -> cst.CSTNode:
    """The innermost statement holding ``node`` (a small one, ``x = ...``, or a compound
    one), or ``node`` itself outside any."""
    for anc in ctx.ancestors(node):
        if isinstance(anc, cst.BaseSmallStatement | cst.BaseCompoundStatement):
            return anc
    return node


def calls_in(node: cst.CSTNode) -> list[cst.Call]:
    """Every call inside ``node`` (nested functions included), in source order."""
    below = walk.descendants(node)
    return [n for n in (node, *below) if type(n) is cst.Call]  # type: ignore[misc]


def module_constant(ctx: ModuleContext, name: cst.Name) -> cst.BaseExpression | None:
    """The value of a module-level name bound exactly once, by ``NAME = value`` or by
    unpacking a literal tuple (``BATCH, SEQ = 32, 128``); None otherwise."""
    found = ctx.bindings(name)
    if len(found) != 1 or not isinstance(found[0].node, cst.Name):
        return None
    target = found[0].node
    if ctx.enclosing_function(target) is not None:
        return None
    value = assigned_value(ctx, target, with_items=False)
    if value is not None:
        return value
    element = ctx.parent(target)
    pack = ctx.parent(element) if isinstance(element, cst.Element) else None
    holder = ctx.parent(pack) if isinstance(pack, cst.Tuple | cst.List) else None
    stmt = ctx.parent(holder) if isinstance(holder, cst.AssignTarget) else None
    if not (isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.Tuple | cst.List)):
        return None
    assert isinstance(pack, cst.Tuple | cst.List)
    targets, values = pack.elements, stmt.value.elements
    if len(targets) != len(values) or any(isinstance(v, cst.StarredElement) for v in values):
        return None
    index = next(i for i, el in enumerate(targets) if el is element)
    return values[index].value


def int_literal(expr: cst.BaseExpression) -> int | None:
    """``3`` or ``-3`` written as a literal."""
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if (
        isinstance(expr, cst.UnaryOperation)
        and isinstance(expr.operator, cst.Minus)
        and isinstance(expr.expression, cst.Integer)
    ):
        return -int(expr.expression.evaluated_value)
    return None


def conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of a chain of ``and`` (the test itself otherwise)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return [*conjuncts(test.left), *conjuncts(test.right)]
    return [test]


def narrowing_types(
    ctx: ModuleContext, name: cst.Name, stop: cst.CSTNode
) -> list[list[cst.BaseExpression]]:
    """For each ``if isinstance(<name>, T):`` (alone or in an ``and``) whose body holds
    ``name``, and each ``isinstance(<name>, T) and ...`` whose later operands hold it,
    below ``stop``: the type expressions ``T`` names."""
    found: list[list[cst.BaseExpression]] = []
    child: cst.CSTNode = name
    for anc in ctx.ancestors(name):
        if anc is stop:
            break
        tests: list[cst.BaseExpression] = []
        if isinstance(anc, cst.If) and child is anc.body and not _bound_within(ctx, name, anc.body):
            # (`if isinstance(f, int): f = tf.constant(f)`: the name no longer holds it)
            tests = conjuncts(anc.test)
        elif (
            isinstance(anc, cst.BooleanOperation)
            and isinstance(anc.operator, cst.And)
            and child is anc.right
        ):
            tests = conjuncts(anc.left)  # `isinstance(x, list) and len(x) == 2`
        if tests:
            for test in tests:
                if (
                    isinstance(test, cst.Call)
                    and ctx.resolve(test.func).is_builtin("isinstance")
                    and len(test.args) == 2
                    and isinstance(test.args[0].value, cst.Name)
                    and test.args[0].value.value == name.value
                ):
                    kinds = test.args[1].value
                    tuple_ = isinstance(kinds, cst.Tuple)
                    found.append([e.value for e in kinds.elements] if tuple_ else [kinds])
        child = anc
    return found


def _bound_within(ctx: ModuleContext, name: cst.Name, block: cst.CSTNode) -> bool:
    """Some binding of ``name`` lies inside ``block``."""
    return any(ctx.inside(a.node, block) for a in ctx.bindings(name))


def names_by_text(ctx: ModuleContext) -> dict[str, list[cst.Name]]:
    """Every name of the module, by its text (indexed once, on first use)."""
    return ctx.memo("names-by-text", ctx.module, lambda: _by_text(ctx, cst.Name))


def attributes_by_name(ctx: ModuleContext) -> dict[str, list[cst.Attribute]]:
    """Every ``<anything>.<name>`` of the module, by the attribute's name."""
    return ctx.memo("attributes-by-name", ctx.module, lambda: _by_text(ctx, cst.Attribute))


def _by_text(ctx: ModuleContext, kind: type) -> dict:  # type: ignore[type-arg]
    found: dict[str, list[cst.CSTNode]] = {}
    for node in ctx.nodes_in_order():
        if type(node) is kind:
            text = node.value if kind is cst.Name else node.attr.value  # type: ignore[attr-defined]
            found.setdefault(text, []).append(node)
    return found


def mentions(ctx: ModuleContext, fn: cst.FunctionDef | cst.ClassDef) -> list[cst.Name]:
    """The names of the module that denote ``fn`` (calls of it, and it handed on as a
    value), its own ``def`` (or ``class``) name left out."""
    return [
        use
        for use in names_by_text(ctx).get(fn.name.value, [])
        if use is not fn.name and any(a.node is fn for a in ctx.bindings(use))
    ]


def is_main_guard(test: cst.BaseExpression) -> bool:
    """``__name__ == "__main__"`` (either way round): a script's own entry."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    sides = [test.left, test.comparisons[0].comparator]
    names = [s for s in sides if isinstance(s, cst.Name) and s.value == "__name__"]
    strings = [s for s in sides if isinstance(s, cst.SimpleString)]
    return isinstance(test.comparisons[0].operator, cst.Equal) and len(names) == len(strings) == 1


def loads_of(
    ctx: ModuleContext, name: cst.Name, bound: cst.CSTNode | None = None
) -> list[cst.CSTNode]:
    """The loads of the binding of ``name`` that ``bound`` makes (the ``def``, or the name
    itself as an assignment target when ``bound`` is None)."""
    node = name if bound is None else bound
    return [
        access.node
        for binding in ctx.bindings(name)
        if binding.node is node
        for access in binding.references
    ]


def sole_parameter(ctx: ModuleContext, name: cst.BaseExpression) -> cst.Param | None:
    """The parameter ``name`` is, when that is its only binding (nothing rebinds it)."""
    found = ctx.bindings(name) if isinstance(name, cst.Name) else []
    if len(found) != 1 or not isinstance(found[0].node, cst.Param):
        return None
    return found[0].node


def sole_name_target(node: cst.Assign) -> cst.Name | None:
    """The name ``node`` binds when it is ``name = value`` (one target, a plain name)."""
    if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
        return node.targets[0].target
    return None
