"""The modules of one run, and what they learn from each other (SPEC §1.6).

1. Every file is analysed on its own (findings and a summary: ``core.facts``).
2. tf.functions exported by modules are looked up for the names each module calls.
3. Traced calls into other modules become traced roots there; those modules are analysed
   again with their new roots, which may reach further modules, until nothing changes.
   Modules outside the run that imports resolve to are parsed only when traced code or a
   call site reaches them; their findings are not reported.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tflint_graph.core.config import Config
from tflint_graph.core.facts import (
    LOCAL,
    ExportFact,
    ExternalRoot,
    ModuleSummary,
    Outgoing,
    ProjectView,
    RemoteFinding,
    TfFunction,
    may_be_project,
)
from tflint_graph.core.finding import Finding
from tflint_graph.core.vocabulary import KERAS2_MARK, canonical, keras2_only, keras_kinds_of
from tflint_graph.run.cache import Analyses
from tflint_graph.run.parallel import AnalysisPool
from tflint_graph.source.eager_use import PUBLIC
from tflint_graph.source.modules import (
    FIRST_CODE,
    HEAD_BYTES,
    ModuleIndex,
    forget_paths,
    imported_modules,
    real_path,
)
from tflint_graph.source.reading import read_regular

# Cross-module propagation stops after this many rounds (a chain this long through
# different modules is already beyond what a reader follows).
_MAX_ROUNDS = 12


class Project:
    """Lints the files of one run, then lets them learn from each other.

    1. Every file is analysed on its own (findings and a summary).
    2. tf.functions exported by modules are looked up for the names each module calls.
    3. Traced calls into other modules become traced roots there; those modules are analysed
       again with their new roots, which may reach further modules, until nothing changes.
       Modules outside the run that imports resolve to are parsed only when traced code or a
       call site reaches them; their findings are not reported.
    """

    def __init__(self, files: Sequence[Path], config: Config, pool: AnalysisPool) -> None:
        forget_paths()
        self.files = list(files)
        self.config = config
        self.pool = pool  # analyses batches of files; closed when the run ends
        self.index = ModuleIndex(self.files)
        self.findings: dict[Path, list[Finding]] = {}
        self.summaries: dict[Path, ModuleSummary | None] = {}
        self.in_run: dict[Path, list[Path]] = {}
        for file in self.files:
            self.in_run.setdefault(real_path(file), []).append(file)
        self.roots: dict[Path, dict[str, ExternalRoot]] = {}
        self.tables: dict[Path, dict[str, TfFunction]] = {}
        self.keras_classes: dict[Path, dict[str, frozenset[str]]] = {}
        self.exported: dict[Path, list[ExportFact]] = {}
        self.remote: dict[Path, list[RemoteFinding]] = {}
        self.tracing_values: dict[Path, dict[str, bool]] = {}
        self.accessor_calls: dict[Path, dict[str, bool]] = {}
        self.call_resets: dict[Path, dict[str, frozenset[str]]] = {}
        self.global_state: dict[Path, tuple[dict[str, frozenset[str]], ...]] = {}
        self.aliases: dict[Path, dict[str, str]] = {}
        self.once_decorators: dict[Path, frozenset[str]] = {}
        self.escape_params: dict[Path, dict[str, tuple[tuple[str, ...], frozenset[str]]]] = {}
        self.eager_classes: dict[Path, frozenset[str]] = {}
        self.tensor_args: dict[Path, dict[str, frozenset[str]]] = {}
        # Each file of the run: the (view, summary) of every analysis, in order.  The run's
        # course depends on nothing else, so a later run can tell from them whether an
        # edited file changes it (``recheck``).
        self.analyses: dict[Path, Analyses] = {}

    def _view(self, resolved: Path) -> ProjectView:
        return ProjectView(
            module=self.index.module_of(resolved),
            is_package=resolved.name == "__init__.py",
            roots=tuple(self.roots.get(resolved, {}).values()),
            tf_functions=self.tables.get(resolved, {}),
            keras_classes=self.keras_classes.get(resolved, {}),
            tracing_values=self.tracing_values.get(resolved, {}),
            aliases=self.aliases.get(resolved, {}),
            exported=tuple(self.exported.get(resolved, ())),
            remote=tuple(self.remote.get(resolved, ())),
            first_party=self.index.first_party,
            accessor_calls=self.accessor_calls.get(resolved, {}),
            call_resets=self.call_resets.get(resolved, {}),
            global_reads=self.global_state.get(resolved, ({}, {}))[0],
            global_writes=self.global_state.get(resolved, ({}, {}))[1],
            once_decorators=self.once_decorators.get(resolved, frozenset()),
            escape_params=self.escape_params.get(resolved, {}),
            eager_classes=self.eager_classes.get(resolved, frozenset()),
            tensor_args=self.tensor_args.get(resolved, {}),
        )

    def _may_be_project(self, name: str) -> bool:
        return may_be_project(name, self.index.first_party)

    def _analyse(self, *files: Path) -> None:
        """Analyse ``files`` (resolved) with what the run knows now.  They are independent
        of each other, so they go to the pool as one batch (possibly in parallel)."""
        # Two paths of the run may be one file (a symlink): each is reported as given.
        tasks = [
            (shown, self._view(resolved))
            for resolved in files
            for shown in self.in_run.get(resolved, [resolved])
        ]
        results = iter(zip(tasks, self.pool.run(tasks), strict=True))
        for resolved in files:
            summary = None
            for shown in self.in_run.get(resolved, [resolved]):
                (_, view), (self.findings[shown], summary) = next(results)
                if resolved in self.in_run:
                    self.analyses.setdefault(shown, []).append((view, summary))
            self.summaries[resolved] = summary

    def summary(self, resolved: Path) -> ModuleSummary | None:
        """A module's summary; files outside the run are read now, the first time."""
        if resolved not in self.summaries:
            self._analyse(resolved)
        return self.summaries[resolved]

    def locate(self, name: str, importer: Path, depth: int = 0) -> tuple[Path, str] | None:
        """(file, qualname in it) that the absolute ``name`` denotes, following re-exports
        (``from .helpers import normalize`` in a package's ``__init__.py``)."""
        split = self.index.split(name, importer) if depth <= 4 else None
        if split is None:
            return None
        module, rest = split
        file = self.index.file_of(module, importer)
        assert file is not None
        summary = self.summary(file)
        if summary is not None:
            head, _, tail = rest.partition(".")
            target = summary.reexports.get(head)
            further = (f"{target}.{tail}" if tail else target) if target else None
            if further is not None and further != name:
                found = self.locate(further, file, depth + 1)
                if found is not None:
                    return found
        return file, rest

    def likely_reached(self) -> set[Path]:
        """Files of the run that TensorFlow modules of the run import, as their import lines
        say: the modules other modules' traced code reaches, which are analysed again once
        the run knows their roots.  Only a hint for which parsed trees to keep (a wrong guess
        costs time, never a result)."""
        # The run's files are resolved already: their module names need no realpath.
        names = {f: self.index.module_of(f, resolved=True) for f in sorted(self.in_run)}
        by_module = {m: f for f, m in names.items() if m}
        found: set[Path] = set()
        for resolved, module in names.items():
            read = read_regular(resolved, HEAD_BYTES)
            head = read[0] if read is not None else b""
            if b"tensorflow" not in head and b"keras" not in head:
                continue
            ends = [at for word in FIRST_CODE if (at := head.find(word)) >= 0]
            package = resolved.name == "__init__.py"
            view = ProjectView(module, package)
            # Inside a package, its own folder is a root too (``ModuleIndex.file_of``).
            top = module.partition(".")[0] + "." if module and ("." in module or package) else ""
            for name in imported_modules(head[: min(ends, default=len(head))]):
                absolute = view.absolute(name)
                target = by_module.get(absolute)
                if target is None and top and not name.startswith("."):
                    target = by_module.get(top + absolute)
                if target is not None and target != resolved:
                    found.add(target)
        return found

    def consulted(self) -> tuple[list[Path], list[Path]]:
        """Files outside the run that were read, and candidate files looked for and not
        found: with the run's own files, everything its results depend on."""
        outside = sorted(f for f in self.summaries if f not in self.in_run)
        return outside, sorted(self.index.absent)

    def run(self) -> dict[Path, list[Finding]]:
        try:
            self._analyse(*self.in_run)
            # Modules that learnt about other modules' tf.functions, Keras bases or exports
            # are analysed again first: what they now trace (a subclass's steps) reaches
            # further.
            self._analyse(*sorted(self._link_tf_functions()))
            # Guard helpers of other modules (`in_tf_function()`), through as many modules
            # as the values travel (a base class's `_use_tf_workflow()` that calls one).
            for _ in range(_MAX_ROUNDS):
                stale = self._link_tracing_values()
                if not stale:
                    break
                self._analyse(*sorted(stale))
            self._propagate()
            eager = self._link_eager_uses()
            if eager:
                # Those classes' methods reached other modules as roots: start again.
                reached = set(self.roots)
                self.roots = {}
                self._analyse(*sorted(eager | reached))
                self._propagate()
            self._analyse(*sorted(self._link_accessors()))
            self._analyse(*sorted(self._route_remote() | self._route_tensor_args()))
        finally:
            self.pool.close()
        return {f: self.findings[f] for f in self.files}

    def _route_remote(self) -> set[Path]:
        """Hand findings about other modules' functions to the modules that define them."""
        stale: set[Path] = set()
        for resolved in sorted(self.in_run):
            summary = self.summaries.get(resolved)
            for fact in summary.remote if summary is not None else ():
                found = self.locate(fact.target, resolved)
                if found is None or found[0] == resolved or found[0] not in self.in_run:
                    continue
                local = RemoteFinding(
                    found[1], fact.code, fact.name, fact.severity, fact.message, fact.fix
                )
                known = self.remote.setdefault(found[0], [])
                if local not in known:
                    known.append(local)
                    stale.add(found[0])
        return stale

    def _route_tensor_args(self) -> set[Path]:
        """Tell the modules that define tf.functions which of their parameters other
        modules' calls give an evident tensor (``ModuleSummary.tensor_args``)."""
        stale: set[Path] = set()
        for resolved in sorted(self.in_run):
            summary = self.summaries.get(resolved)
            for target, keys in summary.tensor_args.items() if summary is not None else ():
                found = self.locate(target, resolved)
                if found is None or found[0] == resolved or found[0] not in self.in_run:
                    continue
                known = self.tensor_args.setdefault(found[0], {})
                if not keys <= known.get(found[1], frozenset()):
                    known[found[1]] = known.get(found[1], frozenset()) | keys
                    stale.add(found[0])
        return stale

    def _link_tf_functions(self) -> set[Path]:
        """Tell each module which names it calls are tf.functions of other modules, and
        which base classes of its classes are Keras classes defined elsewhere."""
        stale: set[Path] = set()
        once = self._once_decorators()
        referenced: set[tuple[Path, str]] = set()  # (file, top-level name) others use
        for resolved in self.in_run:
            summary = self.summaries.get(resolved)
            if summary is None:
                continue
            imported = set(summary.reexports.values())
            used = frozenset(
                o for o in once if any(o == b or o.startswith(b + ".") for b in imported)
            ) | self._once_imported(resolved, imported)
            if used:
                self.once_decorators[resolved] = used
                stale.add(resolved)
            table: dict[str, TfFunction] = {}
            escapes: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}
            for name in sorted(summary.called_imports):
                found = self.locate(name, resolved)
                if found is None or found[0] == resolved:
                    continue
                referenced.add((found[0], found[1].partition(".")[0]))
                target = self.summary(found[0])
                if target is not None and found[1] in target.exports:
                    table[name] = target.exports[found[1]]
                if target is not None and found[1] in target.escape_params:
                    escapes[name] = target.escape_params[found[1]]
            if escapes:
                self.escape_params[resolved] = escapes
                stale.add(resolved)
            classes: dict[str, frozenset[str]] = {}
            resets: dict[str, frozenset[str]] = {}
            for bases in summary.classes.values():
                for ref in bases:
                    if ref.startswith(LOCAL) or not self._may_be_project(ref):
                        continue
                    found = self.locate(ref, resolved)
                    if found is not None and found[0] != resolved:
                        referenced.add((found[0], found[1].partition(".")[0]))
                        kinds = self.class_kinds(*found)
                        if kinds:
                            classes[ref] = kinds
                        target = self.summary(found[0])
                        attrs = target.call_resets.get(found[1]) if target is not None else None
                        if attrs:
                            resets[ref] = attrs
            aliases: dict[str, str] = {}
            for name in sorted(set(summary.reexports.values())):
                found = self.locate(name, resolved) if self._may_be_project(name) else None
                if found is None or found[0] == resolved:
                    continue
                target = self.summary(found[0])
                module = target.reexports.get(found[1]) if target is not None else None
                if module is not None and not self._may_be_project(module):
                    aliases[name] = module  # `from pkg.utils import tf`: TensorFlow itself
            if table:
                self.tables[resolved] = table
            if classes:
                self.keras_classes[resolved] = classes
            if resets:
                self.call_resets[resolved] = resets
            if aliases:
                self.aliases[resolved] = aliases
            if table or classes or aliases or resets:
                stale.add(resolved)
            for fact in summary.exports_elsewhere:
                found = self.locate(fact.target, resolved)
                if found is not None and found[0] != resolved:
                    local = ExportFact(found[1], fact.kind, fact.why, fact.signatures, fact.touched)
                    known = self.exported.setdefault(found[0], [])
                    if local not in known:
                        known.append(local)
                        stale.add(found[0])
        stale |= self._eager_classes(referenced)
        return stale

    def _eager_classes(self, referenced: set[tuple[Path, str]]) -> set[Path]:
        """Scripts whose Keras classes (``ModuleSummary.eager_script``) no other module of the
        run uses: told so, they are analysed again with those classes called eagerly only."""
        stale: set[Path] = set()
        for resolved in self.in_run:
            summary = self.summaries.get(resolved)
            if summary is None or not summary.eager_script:
                continue
            eager = frozenset(n for n in summary.eager_script if (resolved, n) not in referenced)
            if eager:
                self.eager_classes[resolved] = eager
                stale.add(resolved)
        return stale

    def _link_eager_uses(self) -> set[Path]:
        """Modules whose Keras classes the run only ever uses eagerly (``_used_eagerly``):
        told so, they are analysed again with those classes' methods no longer roots.  Asked
        once the run knows every module's roots, so that a use in code other modules trace
        counts as traced."""
        stale: set[Path] = set()
        for file, name in sorted(self._used_eagerly()):
            known = self.eager_classes.get(file, frozenset())
            if name not in known:
                self.eager_classes[file] = known | {name}
                stale.add(file)
        return stale

    def _used_eagerly(self) -> set[tuple[Path, str]]:
        """Module-level Keras classes of the run that another module makes and uses only in
        eager code (or their own module, in methods of classes that are themselves such
        classes), that no module uses any other way, and whose subclasses in the run are
        all such classes too (a subclass the run never makes may be fitted by its users);
        not what a package re-exports (public API)."""
        made: dict[tuple[Path, str], set[tuple[Path, str]]] = {}
        public: dict[tuple[Path, str], set[str]] = {}  # public attributes holding instances
        foreign: set[str] = set()
        other: set[tuple[Path, str]] = set()
        needs: dict[tuple[Path, str], set[tuple[Path, str]]] = {}  # subclasses, owners
        for resolved in sorted(self.in_run):
            summary = self.summaries.get(resolved)
            if summary is None:
                continue
            foreign |= summary.foreign_attributes
            for name, owners in summary.eager_made.items():
                at = self._class_at(name, resolved)
                classes = {o for o in owners if not o.startswith(PUBLIC)}
                if at is None or (at[0] == resolved and not classes):
                    # The class's own module using it eagerly at import or in a function
                    # (a demo) tells nothing: others may import the class and fit it.
                    continue
                made.setdefault(at, set()).update(
                    o for o in (self._class_at(n, resolved) for n in classes) if o is not None
                )
                public.setdefault(at, set()).update(
                    o[len(PUBLIC) :] for o in owners if o.startswith(PUBLIC)
                )
            for name in summary.used_otherwise:
                at = self._class_at(name, resolved)
                if at is not None:
                    other.add(at)
            for cls, bases in summary.classes.items():
                for ref in bases:
                    at = self._class_at(ref, resolved)
                    if at is not None:
                        needs.setdefault(at, set()).add((resolved, cls))
        candidates = set(made) - other
        if not candidates:
            return candidates  # the common case: spare the packages' re-exports
        for at, owners in made.items():
            needs.setdefault(at, set()).update(owners)
        eager = {
            at
            for at in candidates - self._package_exports()
            if at[0] in self.in_run
            and "." not in at[1]
            and not public.get(at, set()) & foreign
            and self.class_kinds(*at)
        }
        while True:
            kept = {at for at in eager if needs.get(at, set()) <= eager}
            if kept == eager:
                return eager
            eager = kept

    def _package_exports(self) -> set[tuple[Path, str]]:
        """What the run's packages re-export in their ``__init__.py``: public API, which the
        package's users may fit whatever the project's own scripts do with it."""
        found: set[tuple[Path, str]] = set()
        for resolved in sorted(self.in_run):
            summary = self.summaries.get(resolved)
            if resolved.name != "__init__.py" or summary is None:
                continue
            for name in summary.reexports.values():
                at = self.locate(name, resolved) if self._may_be_project(name) else None
                if at is not None and at[0] != resolved:
                    found.add(at)
        return found

    def _class_at(self, name: str, importer: Path) -> tuple[Path, str] | None:
        """(file, qualname) of a class named in ``importer``'s summary."""
        if name.startswith(LOCAL):
            return importer, name[len(LOCAL) :]
        return self.locate(name, importer) if self._may_be_project(name) else None

    def _once_decorators(self) -> set[str]:
        """Absolute names of the run's run-once decorators (``ModuleSummary.once_decorators``),
        also as packages re-export them (``from .src.once import once`` in ``__init__.py``)."""
        found = {
            f"{summary.module}.{name}"
            for summary in self.summaries.values()
            if summary is not None and summary.module
            for name in summary.once_decorators
        }
        for _ in range(3) if found else ():
            more = {
                f"{summary.module}.{name}"
                for summary in self.summaries.values()
                if summary is not None and summary.module
                for name, target in summary.reexports.items()
                if target in found
            }
            if more <= found:
                break
            found |= more
        return found

    def _once_imported(self, importer: Path, imported: set[str]) -> frozenset[str]:
        """Run-once decorators ``importer`` reaches by the names it imports, spelt as it
        imports them: a file's dotted name depends on where the run meets its package (a
        folder with no ``__init__.py`` inside one: ``from pkg.src import once``), the file a
        name leads to does not."""
        decorators = {
            file: summary.once_decorators
            for file, summary in self.summaries.items()
            if summary is not None and summary.once_decorators
        }
        if not decorators:
            return frozenset()
        found: set[str] = set()
        for name in sorted(imported):
            if not self._may_be_project(name):
                continue
            for file, names in decorators.items():
                for decorator in names:
                    for spelt in (name, f"{name}.{decorator}"):
                        if self.locate(spelt, importer) == (file, decorator):
                            found.add(spelt)
        return frozenset(found)

    def _link_tracing_values(self) -> set[Path]:
        """Tell each module the value while tracing of the guard helpers it calls or
        inherits from other modules, and the state other modules' functions read and write;
        the modules whose analysis that changes.

        What a class inherits through a chain of subclasses in several modules is worked
        out here at once (``_inherited_values``); a module is analysed again only where a
        value it looked up changed (``ModuleSummary.asked_tracing``), or where being told
        anything at all now decides whether it gets the full analysis.
        """
        stale: set[Path] = set()
        tables: dict[Path, dict[str, bool]] = {}
        for resolved in sorted(self.in_run):
            summary = self.summaries.get(resolved)
            if summary is None:
                continue
            reads: dict[str, frozenset[str]] = {}
            writes: dict[str, frozenset[str]] = {}
            for name in sorted(summary.called_imports):
                found = self.locate(name, resolved)
                if found is None or found[0] == resolved:
                    continue
                target = self.summary(found[0])
                if target is None:
                    continue
                if found[1] in target.global_reads:
                    reads[name] = target.global_reads[found[1]]
                if found[1] in target.global_writes:
                    writes[name] = target.global_writes[found[1]]
            if (reads, writes) != self.global_state.get(resolved, ({}, {})):
                self.global_state[resolved] = (reads, writes)
                stale.add(resolved)
            table = self._tracing_table(resolved, tables, set())
            known = self.tracing_values.get(resolved, {})
            if table != known:
                changed = {k for k in table.keys() | known.keys() if table.get(k) != known.get(k)}
                told = self._view(resolved).tells_anything()
                self.tracing_values[resolved] = table
                if (
                    not changed.isdisjoint(summary.asked_tracing)
                    or told != self._view(resolved).tells_anything()
                ):
                    stale.add(resolved)
        return stale

    def _tracing_table(
        self, resolved: Path, tables: dict[Path, dict[str, bool]], visiting: set[Path]
    ) -> dict[str, bool]:
        """``ProjectView.tracing_values`` of a file of the run, from what the run knows now
        (``tables`` keeps those worked out in this pass; ``visiting`` breaks cycles)."""
        if resolved in tables:
            return tables[resolved]
        summary = self.summaries.get(resolved)
        if summary is None or resolved not in self.in_run or resolved in visiting:
            return {}
        visiting.add(resolved)
        table: dict[str, bool] = {}
        for name in sorted(summary.called_imports):
            found = self.locate(name, resolved)
            if found is None or found[0] == resolved or self.summary(found[0]) is None:
                continue
            values = self._values_of(found[0], tables, visiting)
            if found[1] in values:
                table[name] = values[found[1]]
        for bases in summary.classes.values():
            for ref in bases:
                if ref.startswith(LOCAL) or not self._may_be_project(ref):
                    continue
                found = self.locate(ref, resolved)
                if found is None or self.summary(found[0]) is None or found[0] == resolved:
                    continue
                prefix = found[1] + "."
                for key, value in self._values_of(found[0], tables, visiting).items():
                    if key.startswith(prefix):
                        table[f"{ref}.{key[len(prefix) :]}"] = value
        visiting.discard(resolved)
        tables[resolved] = table
        return table

    def _values_of(
        self, file: Path, tables: dict[Path, dict[str, bool]], visiting: set[Path]
    ) -> dict[str, bool]:
        """A module's ``ModuleSummary.tracing_values`` with what its classes inherit from
        other modules' classes (``guard_classes``): methods they do not define, from the
        module's own table (a later base's value replacing an earlier one's)."""
        summary = self.summary(file)
        if summary is None:
            return {}
        if not summary.guard_classes:
            return summary.tracing_values
        values = dict(summary.tracing_values)
        known = self._tracing_table(file, tables, visiting)
        for name, refs, own in summary.guard_classes:
            for ref in refs:
                for key, value in known.items():
                    head, _, method = key.rpartition(".")
                    if head == ref and method not in own:
                        values[f"{name}.{method}"] = value
        return values

    def _link_accessors(self) -> set[Path]:
        """Tell each module that asked how the run calls its classes' accessors: whether
        any call of each is eager (``ModuleSummary.accessor_calls``); the modules told
        something new."""
        asked = {
            resolved: summary.asked_accessors
            for resolved in sorted(self.in_run)
            if (summary := self.summaries.get(resolved)) is not None and summary.asked_accessors
        }
        if not asked:
            return set()
        calls: dict[str, bool] = {}
        for summary in self.summaries.values():
            for name, eager in summary.accessor_calls.items() if summary is not None else ():
                calls[name] = calls.get(name, False) or eager
        stale: set[Path] = set()
        for resolved, names in asked.items():
            table = {n: calls[n] for n in sorted(names) if n in calls}
            if table and table != self.accessor_calls.get(resolved, {}):
                self.accessor_calls[resolved] = table
                stale.add(resolved)
        return stale

    def class_kinds(self, file: Path, qualname: str, depth: int = 0) -> frozenset[str]:
        """Keras kinds of class ``qualname`` of ``file``, through bases in any module."""
        summary = self.summary(file)
        bases = summary.classes.get(qualname) if summary is not None else None
        if not bases or depth > 8:
            return frozenset()
        kinds: set[str] = set()
        for ref in bases:
            if ref.startswith(LOCAL):
                kinds |= self.class_kinds(file, ref[len(LOCAL) :], depth + 1)
                continue
            direct = keras_kinds_of([canonical(ref)])
            if direct:
                kinds |= direct
                if keras2_only(ref):
                    kinds.add(KERAS2_MARK)
            elif self._may_be_project(ref):
                found = self.locate(ref, file)
                if found is not None and found != (file, qualname):
                    kinds |= self.class_kinds(*found, depth + 1)
        return frozenset(kinds)

    def _propagate(self) -> None:
        seen: set[tuple[Path, Outgoing]] = set()
        pending = self._outgoing(sorted(self.summaries), seen)
        for _ in range(_MAX_ROUNDS):
            if not pending:
                break
            changed: set[Path] = set()
            # Shortest chains first, so each function keeps the shortest way it is reached.
            for source, out in sorted(
                pending, key=lambda p: (len(p[1].chain), p[1].target, p[1].chain, str(p[0]))
            ):
                found = self.locate(out.target, source)
                if found is None or found[0] == source:
                    continue
                file, qualname = found
                known = self.roots.setdefault(file, {})
                if qualname not in known:
                    known[qualname] = ExternalRoot(
                        qualname,
                        out.kind,
                        out.reason,
                        out.chain,
                        out.autograph,
                        out.unconverted,
                        None if out.passed is None else (out.passed,),
                        out.setup,
                        out.fresh,
                    )
                    changed.add(file)
                else:
                    # Another caller: what it passes counts too, and it may not be setup.
                    before = known[qualname]
                    merged = dataclasses.replace(
                        before,
                        passed=_common(before.passed, out.passed),
                        setup=before.setup and out.setup,
                        fresh=before.fresh and out.fresh,
                    )
                    if before.autograph and not out.autograph:
                        # Reached from code AutoGraph leaves alone too: its tensor `if`s
                        # raise there, so that is the chain to show.
                        merged = dataclasses.replace(
                            merged,
                            kind=out.kind,
                            reason=out.reason,
                            chain=out.chain,
                            autograph=False,
                            unconverted=out.unconverted,
                        )
                    if merged != before:
                        known[qualname] = merged
                        changed.add(file)
            self._analyse(*sorted(changed))
            pending = self._outgoing(sorted(changed), seen)

    def _outgoing(
        self, files: Iterable[Path], seen: set[tuple[Path, Outgoing]]
    ) -> list[tuple[Path, Outgoing]]:
        found = []
        for file in files:
            summary = self.summaries.get(file)
            for out in summary.outgoing if summary is not None else ():
                if (file, out) not in seen:
                    seen.add((file, out))
                    found.append((file, out))
        return found


def _common(
    known: tuple[frozenset[str], ...] | None, passed: frozenset[str] | None
) -> tuple[frozenset[str], ...] | None:
    """``ExternalRoot.passed`` with one more call's arguments; None once one is unknown."""
    if known is None or passed is None:
        return None
    return known if passed in known else (*known, passed)


def recheck(
    pool: AnalysisPool, changed: Sequence[Path], recorded: Mapping[Path, Analyses]
) -> dict[Path, list[Finding]] | None:
    """The findings of the files ``changed`` since a recorded run, or ``None`` when that run
    would now take another course.

    A run is a function of what its analyses return (``Project``): the views it builds and
    the files it analyses follow from the summaries alone.  So when each changed file,
    analysed again with each view it was analysed with (``recorded``), gives the summary it
    gave then, the run would make the same analyses with the same views, and only the
    changed files' findings differ: those of their last view.  An edit inside a helper
    (a new ``print``) keeps its summary; a new call into another module or a new
    tf.function does not, and the run is made afresh.
    """
    tasks = [(file, view) for file in changed for view, _ in recorded[file]]
    results = iter(pool.run(tasks))
    found: dict[Path, list[Finding]] = {}
    for file in changed:
        for _, summary in recorded[file]:
            found[file], now = next(results)
            if now != summary:
                return None
    return found
