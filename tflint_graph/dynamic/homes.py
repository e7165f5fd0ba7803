"""The modules of the project a module imports its tf.functions from (SPEC §4).

A TFG303 or TFG403 finding sits at a call; the tf.function it calls may be defined in another
module of the project (``from pkg.model import train_step``, ``from pkg import model as m;
m.step(x, i)``).  The static run knew it from the project's facts; the plan, which reads one
module again, finds it here: the project modules the module imports are located as the child
will import them (the module's root, then the checkout folders above it), parsed, and their
module-level tf.functions listed.  The child then calls the imported object through the
calling module's own name for it, with inputs planned from the defining module's source.

Parses only; never imports TensorFlow or the user's code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from tflint_graph.core.config import Config
from tflint_graph.core.facts import ProjectView
from tflint_graph.dynamic.calls import ModuleCalls
from tflint_graph.dynamic.isolation import fallback_path
from tflint_graph.model.context import ModuleContext
from tflint_graph.source.modules import package_root
from tflint_graph.traced import find_traced
from tflint_graph.traced.callsites import TfFunctionRef, decorated, wrapped

# At most this many imported modules are read for one module (each is parsed and analysed).
MAX_HOMES = 16


@dataclass
class Home:
    """One imported module of the project: its dotted name, its analysis, the calls its own
    code makes (arguments for the planned inputs) and its module-level tf.functions."""

    module: str
    ctx: ModuleContext
    calls: ModuleCalls | None
    refs: dict[str, TfFunctionRef] = field(default_factory=dict)


def imported_homes(
    path: str, tree: ast.Module | None, module_name: str, config: Config
) -> list[Home]:
    """The project modules ``tree`` imports that define module-level tf.functions."""
    if tree is None:
        return []
    here = Path(path).resolve()
    view = ProjectView(module=module_name, is_package=here.name == "__init__.py")
    root, _ = package_root(here)
    roots = [root, *(Path(p) for p in fallback_path(root))]
    homes: list[Home] = []
    seen: set[Path] = {here}
    for name in _imported_modules(tree, view):
        if len(homes) >= MAX_HOMES:
            break
        file = _module_file(name, roots)
        if file is None or file in seen:
            continue
        seen.add(file)
        home = _read(file, name, config)
        if home is not None and home.refs:
            homes.append(home)
    return homes


def view_with(module_name: str, path: str, homes: list[Home]) -> ProjectView:
    """The view a module's analysis needs to see calls of the homes' tf.functions."""
    return ProjectView(
        module=module_name,
        is_package=Path(path).name == "__init__.py",
        tf_functions={
            f"{home.module}.{qualname}": ref.info
            for home in homes
            for qualname, ref in home.refs.items()
        },
    )


def home_of(ref: TfFunctionRef, homes: list[Home]) -> tuple[Home, TfFunctionRef] | None:
    """The home defining the imported tf.function ``ref`` names, and its full ref there."""
    for home in homes:
        if home.ctx.path == ref.info.origin and ref.info.qualname in home.refs:
            return home, home.refs[ref.info.qualname]
    return None


def _imported_modules(tree: ast.Module, view: ProjectView) -> Iterator[str]:
    """Absolute names of what the module's imports may name as modules: ``import a.b`` (and
    ``a``), ``from a import b`` (``a``, and ``a.b`` in case ``b`` is a module)."""
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = view.absolute("." * node.level + (node.module or ""))
            if not base:
                continue
            out.append(base)
            out += [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
    yield from dict.fromkeys(out)


def _module_file(name: str, roots: list[Path]) -> Path | None:
    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        return None
    for root in roots:
        for candidate in (
            root.joinpath(*parts).with_suffix(".py"),
            root.joinpath(*parts, "__init__.py"),
        ):
            if candidate.is_file():
                return candidate.resolve()
    return None


def _read(file: Path, name: str, config: Config) -> Home | None:
    try:
        source = file.read_text(encoding="utf-8-sig")
        module = cst.parse_module(source)
        view = ProjectView(module=name, is_package=file.name == "__init__.py")
        ctx = ModuleContext(str(file), source, module, config, view)
        ctx.traced = find_traced(ctx)
        tree = ast.parse(source)
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError, SyntaxError, ValueError):
        return None
    except RecursionError:
        return None
    try:
        calls: ModuleCalls | None = ModuleCalls(tree)
    except RecursionError:
        calls = None
    home = Home(name, ctx, calls)
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            ref = decorated(ctx, stmt)
            if ref is not None and ref.node is not None:
                home.refs[stmt.name.value] = ref
        elif isinstance(stmt, cst.ClassDef):
            # Decorated methods: the call is seen, and told apart from a function.
            for item in stmt.body.body:
                if isinstance(item, cst.FunctionDef):
                    ref = decorated(ctx, item)
                    if ref is not None and ref.node is not None:
                        home.refs[f"{stmt.name.value}.{item.name.value}"] = ref
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                ):
                    target = small.targets[0].target.value
                    ref = wrapped(ctx, small.value, target, None)
                    if ref is not None and ref.node is not None:
                        home.refs[target] = ref
    return home
