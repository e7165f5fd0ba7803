"""What one analysed module tells the rest of the run (see ``project.py``)."""

from __future__ import annotations

from tflint_graph.callsites import module_tf_functions
from tflint_graph.checks._export import export_references, foreign_exports
from tflint_graph.context import ModuleContext
from tflint_graph.project import ModuleSummary, may_be_project, module_classes, module_imports


def summarize(ctx: ModuleContext) -> ModuleSummary:
    finder = ctx.trace_finder
    called: set[str] = set()
    outgoing = []
    if finder is not None:
        outgoing = list(finder.outgoing)
        for _, call in finder.collector.calls:
            res = ctx.resolve(call.func)
            if res.local:
                continue
            for name in res.imported:
                absolute = ctx.view.absolute(name)
                if may_be_project(absolute):
                    called.add(absolute)
        # Exported without being called (`signatures={"embed": embed}`): TFG301 needs to know.
        called |= export_references(ctx)
    imports = module_imports(ctx.module, ctx.view)
    return ModuleSummary(
        module=ctx.view.module,
        exports=module_tf_functions(ctx),
        reexports=imports,
        outgoing=outgoing,
        called_imports=called,
        classes=module_classes(ctx.module, imports),
        exports_elsewhere=foreign_exports(ctx) if finder is not None else [],
    )
