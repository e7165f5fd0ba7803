"""tflint-graph: find Python that silently stops working when TensorFlow traces it.

Library API::

    from tflint_graph import lint_source, lint_paths, Config

    for finding in lint_source(code, path="train.py"):
        print(finding.line, finding.code, finding.message)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tflint_graph.core.version import __version__

if TYPE_CHECKING:
    from tflint_graph.api import lint_file, lint_notebook, lint_paths, lint_source
    from tflint_graph.core.config import Config, ConfigError
    from tflint_graph.core.finding import Finding, Severity

# Loaded on first use: pytest imports this package for its plugin (tflint_graph.pytest_plugin)
# in every session, where nothing of the API is needed unless --tflint-graph is given.
_LAZY = {
    "Config": "tflint_graph.core.config",
    "ConfigError": "tflint_graph.core.config",
    "Finding": "tflint_graph.core.finding",
    "Severity": "tflint_graph.core.finding",
    "lint_file": "tflint_graph.api",
    "lint_notebook": "tflint_graph.api",
    "lint_paths": "tflint_graph.api",
    "lint_source": "tflint_graph.api",
}

__all__ = [
    "Config",
    "ConfigError",
    "Finding",
    "Severity",
    "__version__",
    "lint_file",
    "lint_notebook",
    "lint_paths",
    "lint_source",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tflint_graph' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
