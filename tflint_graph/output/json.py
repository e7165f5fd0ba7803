"""Versioned JSON for scripts: ``{"schema_version", "tool", "findings", "statistics"}``, plus
``"keras"`` (the Keras version the analysis assumed, and why) and ``"dynamic"`` (device and
counts per status) after ``--dynamic``.  The schema ships in
``tflint_graph/schemas/findings-v1.json``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tflint_graph.core.finding import Finding
from tflint_graph.core.version import __version__
from tflint_graph.output.format import RunInfo, statistics

JSON_SCHEMA_VERSION = 1


def render(findings: Sequence[Finding], run: RunInfo) -> str:
    doc: dict[str, Any] = {
        "schema_version": JSON_SCHEMA_VERSION,
        "tool": {"name": "tflint-graph", "version": __version__},
        "findings": [f.to_dict() for f in findings],
        "statistics": {code: n for code, _, n in statistics(findings)},
    }
    if run.keras is not None:
        doc["keras"] = {"version": run.keras[0], "reason": run.keras[1]}
        if run.keras_folders:
            doc["keras"]["folders"] = [
                {"path": path, "version": version, "reason": reason}
                for path, version, reason in run.keras_folders
            ]
    if run.dynamic is not None:
        doc["dynamic"] = dict(run.dynamic)
    return json.dumps(doc, indent=2)
