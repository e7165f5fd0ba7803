"""tflint-graph: find Python that silently stops working when TensorFlow traces it.

Library API::

    from tflint_graph import lint_source, lint_paths, Config

    for finding in lint_source(code, path="train.py"):
        print(finding.line, finding.code, finding.message)
"""

from tflint_graph.config import Config, ConfigError
from tflint_graph.engine import lint_file, lint_paths, lint_source
from tflint_graph.finding import Finding, Severity

__version__ = "0.1.0"

__all__ = [
    "Config",
    "ConfigError",
    "Finding",
    "Severity",
    "__version__",
    "lint_file",
    "lint_paths",
    "lint_source",
]
