"""What one analysed module tells the rest of the run (see ``project.py``)."""

from __future__ import annotations

from tflint_graph.callsites import imported_names, module_tf_functions
from tflint_graph.checks._export import export_references, foreign_exports
from tflint_graph.context import ModuleContext
from tflint_graph.project import ModuleSummary, module_classes, module_imports


def summarize(ctx: ModuleContext) -> ModuleSummary:
    finder = ctx.trace_finder
    called: set[str] = set()
    outgoing = []
    if finder is not None:
        outgoing = list(finder.outgoing)
        for _, call in finder.collector.calls:
            called.update(imported_names(ctx, call.func))
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
        remote=list(ctx.remote),
    )
