"""tflint-graph: find Python that silently stops working when TensorFlow traces it.

Library API::

    from tflint_graph import lint_source, lint_paths, Config

    for finding in lint_source(code, path="train.py"):
        print(finding.line, finding.code, finding.message)
"""

from tflint_graph.api import lint_file, lint_notebook, lint_paths, lint_source
from tflint_graph.core.config import Config, ConfigError
from tflint_graph.core.finding import Finding, Severity
from tflint_graph.core.version import __version__

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
