"""How the rest of the project builds what a target needs (SPEC §4).

A class whose constructor takes objects made elsewhere (``Evaluator(model)``,
``ForecastServer(model, mean, std)``) or a training step taking a ``model`` is rarely given
one by its own module: the model comes from a builder in another module of the project
(``models.build_forecaster()``), the object from the training script
(``export.ForecastServer(model, features.FEATURE_MEAN, ...)`` in ``main()``).  This module
reads the project's other modules (the ones the child can import: those under the module's
``sys.path`` root) and finds

- **model builders**: module-level functions callable without arguments that return a Keras
  model (``keras.Sequential([...])``, ``keras.Model(inputs, outputs)``, an instance of a class
  of that module derived from ``Model``), most-called first: the project's main model;
- **constructor calls** of a class in other modules, by whatever name their imports give
  it, with each argument rewritten over that module's own names (see
  :mod:`~tflint_graph.dynamic.calls`).

Each result is an expression and the module to evaluate it in.  A module whose import would
run more than definitions (a loop, a call as a statement) is never used: importing it in the
child would run the script.  Pure ``ast``; nothing is imported here.
"""

from __future__ import annotations

import ast
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tflint_graph.core.vocabulary import SETTINGS_CLASS
from tflint_graph.dynamic.calls import CallSources, ModuleCalls, is_main_guard

__all__ = [
    "CONFIG_PARAM",
    "ProjectModule",
    "constructor_elsewhere",
    "default_config",
    "model_builders",
    "project_modules",
]

# At most this many files are read per project root; deeper folders are not looked in.
MAX_FILES = 300
MAX_DEPTH = 5
_SKIPPED_DIRS = frozenset(
    {"node_modules", "site-packages", "build", "dist", "venv", "env", "__pycache__"}
)
# What a Keras model is made by, as the call's last name says.
_MODEL_CALLS = frozenset({"Sequential", "Model", "Functional"})


@dataclass
class ProjectModule:
    """One module of the project: its dotted name, its tree, whether importing it runs
    only definitions, and (lazily) its calls."""

    name: str
    path: Path
    tree: ast.Module
    importable: bool
    _calls: ModuleCalls | None = None

    @property
    def calls(self) -> ModuleCalls | None:
        if self._calls is None:
            try:
                self._calls = ModuleCalls(self.tree)
            except RecursionError:
                return None
        return self._calls


_CACHE: dict[Path, list[ProjectModule]] = {}
_LOCK = threading.Lock()


def project_modules(root: Path) -> list[ProjectModule]:
    """The modules under ``root`` (parsed once per run; plans run in threads)."""
    root = root.resolve()
    with _LOCK:
        if root not in _CACHE:
            _CACHE[root] = list(_read_all(root))
        return _CACHE[root]


def _read_all(root: Path) -> Iterator[ProjectModule]:
    count = 0
    for file in sorted(_python_files(root, 0)):
        if count >= MAX_FILES:
            return
        parts = file.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not parts or not all(p.isidentifier() for p in parts):
            continue
        try:
            tree = ast.parse(file.read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
            continue
        count += 1
        yield ProjectModule(".".join(parts), file, tree, _only_definitions(tree))


def _python_files(folder: Path, depth: int) -> Iterator[Path]:
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            if depth < MAX_DEPTH and entry.name not in _SKIPPED_DIRS and not entry.is_symlink():
                yield from _python_files(entry, depth + 1)
        elif entry.suffix == ".py":
            yield entry


def _only_definitions(tree: ast.Module) -> bool:
    """Importing the module runs definitions only: imports, defs, classes, assignments,
    a docstring, set-up calls of imported modules (``flags.DEFINE_integer(...)``), a main
    guard, and ``if``/``try`` blocks of those; nothing that trains or runs a script."""
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return all(_definition(s, imported) for s in tree.body)


# Calls that run the program rather than define it.
_RUNS = frozenset(
    {"run", "main", "fit", "fit_generator", "train", "evaluate", "predict", "train_and_evaluate"}
)


def _harmless(value: ast.expr | None, imported: set[str], statement: bool) -> bool:
    """No call in ``value`` runs the program; a call made as a statement must be one of an
    imported module (``tf.random.set_seed(0)``), not the script's own ``main()``."""
    for node in ast.walk(value) if value is not None else ():
        if isinstance(node, ast.Call) and _last_name(node.func) in _RUNS:
            return False
    if statement and isinstance(value, ast.Call):
        base = value.func
        while isinstance(base, ast.Attribute):
            base = base.value
        return (
            isinstance(value.func, ast.Attribute)
            and isinstance(base, ast.Name)
            and (base.id in imported)
        )
    return True


def _definition(stmt: ast.stmt, imported: set[str]) -> bool:
    if isinstance(
        stmt,
        (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass),
    ):
        return True
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return _harmless(stmt.value, imported, statement=False)
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Constant) or _harmless(
            stmt.value, imported, statement=True
        )
    if isinstance(stmt, ast.If):
        return is_main_guard(stmt) or all(
            _definition(s, imported) for s in [*stmt.body, *stmt.orelse]
        )
    if isinstance(stmt, ast.Try):
        inner = [*stmt.body, *stmt.orelse, *stmt.finalbody]
        inner += [s for h in stmt.handlers for s in h.body]
        return all(_definition(s, imported) for s in inner)
    return False


# -- model builders


def model_builders(root: Path, exclude: str = "", param: str = "") -> list[tuple[str, str, str]]:
    """(module, function, its arguments' source) for the project's model builders,
    most-called across the project first (a name holding ``param`` first among equals);
    ``exclude`` is the module asking, whose own builders its plan found already.  A builder
    that takes the project's settings (``build_forecaster(cfg)``) gets them with their
    defaults (:func:`default_config`)."""
    modules = project_modules(root)
    config = default_config(root)
    found: list[tuple[str, str, str]] = []
    classes: set[tuple[str, str]] = set()
    for module in modules:
        if module.name == exclude or not module.importable:
            continue
        functions, models = _builders_of(module.tree, configured=bool(config))
        found += [(module.name, name, config if needs else "") for name, needs in functions]
        found += [(module.name, name, "") for name in models]
        classes.update((module.name, name) for name in models)
    if not found:
        return []
    calls = _call_counts(modules, {name for _, name, _ in found})
    return sorted(
        found,
        key=lambda mf: (
            (mf[0], mf[1]) in classes,
            bool(mf[2]),  # one that needs no argument before one given the settings
            -calls.get(mf[1], 0),
            not (param and param in mf[1]),
            mf,
        ),
    )


# A parameter that takes the project's settings object, and the classes that hold them.
# (Not `hp`, `params`: keras-tuner's and Estimator's objects of their own.)
CONFIG_PARAM = re.compile(r"^(cfg|config|conf|hparams|settings)$")


def default_config(root: Path) -> str:
    """An expression, valid in any namespace, that makes the project's settings with their
    defaults (``DetectorConfig()``): the first public class named like settings, in a module
    whose import runs only definitions, that needs no constructor argument (a dataclass whose
    fields all have defaults, an ``__init__`` with a default for every parameter, or class
    attributes only); "" for none."""
    for module in project_modules(root):
        if not module.importable:
            continue
        for stmt in module.tree.body:
            if (
                isinstance(stmt, ast.ClassDef)
                and not stmt.name.startswith("_")
                and SETTINGS_CLASS.search(stmt.name)
                and _made_without_arguments(stmt)
            ):
                return f"__import__('importlib').import_module({module.name!r}).{stmt.name}()"
    return ""


def _made_without_arguments(cls: ast.ClassDef) -> bool:
    if any(_last_name(b) not in ("object", "Generic") for b in cls.bases) or cls.keywords:
        return False  # a base's constructor is out of sight
    init = next(
        (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )
    if init is not None:
        args = init.args
        positional = [*args.posonlyargs, *args.args][1:]
        return len(args.defaults) >= len(positional) and None not in args.kw_defaults
    if any(
        _last_name(d.func if isinstance(d, ast.Call) else d) == "dataclass"
        for d in cls.decorator_list
    ):
        # Every field needs a default (a `ClassVar` is no field, but is harmless to require).
        return all(s.value is not None for s in cls.body if isinstance(s, ast.AnnAssign))
    return True


def _builders_of(
    tree: ast.Module, configured: bool = False
) -> tuple[list[tuple[str, bool]], list[str]]:
    """The module's builder functions (with whether they take the project's settings, which
    ``configured`` says exist), and its model classes that need no argument."""
    classes = {
        s.name for s in tree.body if isinstance(s, ast.ClassDef) and any(map(_model_base, s.bases))
    }
    out: list[tuple[str, bool]] = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.FunctionDef) or stmt.name.startswith(("test", "_")):
            continue
        args = stmt.args
        if args.posonlyargs or any(d is None for d in args.kw_defaults):
            continue
        required = args.args[: len(args.args) - len(args.defaults)]
        needs = bool(required)
        if needs and not (
            configured and len(required) == 1 and CONFIG_PARAM.match(required[0].arg)
        ):
            continue
        if any(_builds_model(stmt, r.value, classes) for r in _returns(stmt)):
            out.append((stmt.name, needs))
    # A model class that needs no argument builds one itself (`SegNet()`), where the
    # project has no function for it: after the builder functions, which set it up.
    models = [
        s.name
        for s in tree.body
        if isinstance(s, ast.ClassDef) and s.name in classes and _no_arguments(s)
    ]
    return out, models


def _abstract(fn: ast.FunctionDef) -> bool:
    """``fn`` only raises ``NotImplementedError`` (a base class's placeholder), after its
    docstring if any."""
    body = [
        s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc
    return _last_name(exc.func if isinstance(exc, ast.Call) else exc) == "NotImplementedError"


def _no_arguments(cls: ast.ClassDef) -> bool:
    """``cls()`` works and the result computes: the class is public, defines ``call``, and
    its own ``__init__`` (if any) has a default for every parameter."""
    call = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "call"), None)
    if cls.name.startswith("_") or call is None or _abstract(call):
        return False
    init = next(
        (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )
    if init is None:
        return True
    args = init.args
    positional = [*args.posonlyargs, *args.args][1:]  # past `self`
    return len(args.defaults) >= len(positional) and all(d is not None for d in args.kw_defaults)


def _returns(fn: ast.FunctionDef) -> Iterator[ast.Return]:
    """The function's own ``return`` statements (not those of nested functions)."""
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def _last_name(expr: ast.expr) -> str:
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else ""


def _model_base(base: ast.expr) -> bool:
    return _last_name(base) in _MODEL_CALLS


def _builds_model(fn: ast.FunctionDef, value: ast.expr | None, classes: set[str]) -> bool:
    if isinstance(value, ast.Name):
        bound = [
            n.value
            for n in ast.walk(fn)
            if isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == value.id for t in n.targets)
        ]
        stored = [
            n
            for n in ast.walk(fn)
            if isinstance(n, ast.Name) and n.id == value.id and isinstance(n.ctx, ast.Store)
        ]
        return len(bound) == 1 and len(stored) == 1 and _builds_model(fn, bound[0], classes)
    if not isinstance(value, ast.Call):
        return False
    name = _last_name(value.func)
    return name in _MODEL_CALLS or (isinstance(value.func, ast.Name) and name in classes)


def _call_counts(modules: list[ProjectModule], names: set[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for module in modules:
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call):
                name = _last_name(node.func)
                if name in names:
                    counts[name] = counts.get(name, 0) + 1
    return counts


def builder_source(module: str, function: str, arguments: str = "") -> str:
    """An expression, valid in any namespace, that calls ``module.function(arguments)``."""
    return f"__import__('importlib').import_module({module!r}).{function}({arguments})"


# -- constructor calls


def constructor_elsewhere(
    root: Path, module_name: str, class_name: str
) -> tuple[str, Path, CallSources] | None:
    """(the calling module, its file, the call's arguments over its names) for the first call of
    ``module_name.class_name(...)`` in another importable module of the project whose
    arguments can all be rewritten over that module's names."""
    for module in project_modules(root):
        if module.name == module_name or not module.importable:
            continue
        local = _names_for(module.tree, module_name, class_name)
        if not local or module.calls is None:
            continue
        for call in ast.walk(module.tree):
            if (
                isinstance(call, ast.Call)
                and (call.args or call.keywords)
                and _dotted(call.func) in local
            ):
                found = module.calls.sources(call)
                if found is not None:
                    return module.name, module.path, found
    return None


def tests_building(
    root: Path, module_name: str, class_name: str, limit: int = 2
) -> tuple[str, ...]:
    """pytest node ids (``tests/test_x.py::test_y``, relative to ``root``) of the project's
    test functions whose body calls ``module_name.class_name(...)``, or a function of that
    module that does: the object as the tests build it, from their fixtures, when nothing
    else can build it."""
    found: list[str] = []
    modules = project_modules(root)
    home = next((m for m in modules if m.name == module_name), None)
    # The module's functions that build one (`make_dataset()` making a `RecordEncoder`).
    makers = {
        stmt.name
        for stmt in (home.tree.body if home is not None else ())
        if isinstance(stmt, ast.FunctionDef)
        and any(
            isinstance(call, ast.Call) and _dotted(call.func) == class_name
            for call in ast.walk(stmt)
        )
    }
    for module in modules:
        leaf = module.path.name
        if not (leaf.startswith("test_") or leaf.endswith("_test.py")):
            continue
        local = set().union(
            *(_names_for(module.tree, module_name, name) for name in (class_name, *makers))
        )
        if not local:
            continue
        rel = module.path.relative_to(root.resolve()).as_posix()
        for node, name in _test_functions(module.tree):
            if any(
                isinstance(call, ast.Call) and _dotted(call.func) in local
                for call in ast.walk(node)
            ):
                found.append(f"{rel}::{name}")
                if len(found) >= limit:
                    return tuple(found)
    return tuple(found)


def _test_functions(tree: ast.Module) -> Iterator[tuple[ast.AST, str]]:
    """The test functions pytest collects by default: ``test_*`` functions and methods of
    ``Test*`` classes, as (node, node id suffix)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            if stmt.name.startswith("test"):
                yield stmt, stmt.name
        elif isinstance(stmt, ast.ClassDef) and stmt.name.startswith("Test"):
            for inner in stmt.body:
                if isinstance(inner, ast.FunctionDef) and inner.name.startswith("test"):
                    yield inner, f"{stmt.name}::{inner.name}"


def _names_for(tree: ast.Module, module_name: str, class_name: str) -> set[str]:
    """How ``tree`` spells ``module_name.class_name`` after its imports: ``Cls``,
    ``mod.Cls``, ``pkg.mod.Cls``, ``alias.Cls``."""
    out: set[str] = set()
    package, _, leaf = module_name.rpartition(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                local = alias.asname or alias.name
                if node.module == module_name and alias.name == class_name:
                    out.add(local)
                elif node.module == package and alias.name == leaf:
                    out.add(f"{local}.{class_name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == module_name:
                    out.add(f"{alias.asname or alias.name}.{class_name}")
    return out


def _dotted(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        inner = _dotted(expr.value)
        return f"{inner}.{expr.attr}" if inner else ""
    return ""
