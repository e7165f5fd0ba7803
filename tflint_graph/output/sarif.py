"""SARIF 2.1.0, the format code-scanning services (GitHub's among them) import: one run, the
rule table with each rule's page as its help, and a line-hash fingerprint per result."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tflint_graph.core.finding import Finding, Severity
from tflint_graph.core.version import __version__
from tflint_graph.output.format import Fingerprints, RunInfo, cell_of, relative_to_root
from tflint_graph.output.pages import read_page, section

SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SARIF_VERSION = "2.1.0"
INFORMATION_URI = "https://pypi.org/project/tflint-graph/"
SRCROOT = "%SRCROOT%"
# The key under ``partialFingerprints``; bump the suffix if ``Fingerprints``' recipe changes.
FINGERPRINT_KEY = "tflintGraphLineHash/v1"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render(findings: Sequence[Finding], run: RunInfo) -> str:
    return json.dumps(sarif_log(findings, run), indent=2)


def sarif_log(findings: Sequence[Finding], run: RunInfo) -> dict[str, Any]:
    """The log as a document; URIs are relative to ``run.root``."""
    root = run.root.resolve()
    rules = _rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    fingerprint = Fingerprints()
    results: list[dict[str, Any]] = []
    for f in findings:
        location = _artifact_location(f.path, root)
        text = run.lines.line(f.path, f.line, *cell_of(f)) or ""
        region = _region(f, run)
        where: dict[str, Any] = {
            "physicalLocation": {"artifactLocation": location, "region": region}
        }
        if f.cell is not None:
            # The region is in the notebook's JSON text; the cell and the position in it are
            # what a notebook viewer shows.
            where["logicalLocations"] = [{"name": f"cell {f.cell}", "kind": "notebookCell"}]
            cell_region = _cell_region(f)
            where["properties"] = {"cell": f.cell, "cellRegion": cell_region}
        result: dict[str, Any] = {
            "ruleId": f.code,
            "level": _LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [where],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint(location["uri"], f.code, text)},
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        properties: dict[str, Any] = {
            k: v for k, v in (("context", f.context), ("chain", list(f.chain)), ("fix", f.fix)) if v
        }
        if f.dynamic is not None:
            properties["dynamic"] = {
                "status": f.dynamic.status,
                "evidence": f.dynamic.evidence,
                "device": f.dynamic.device,
                "inputs": f.dynamic.inputs,
            }
        if properties:
            result["properties"] = properties
        results.append(result)
    run_properties = {"dynamic": dict(run.dynamic)} if run.dynamic is not None else None
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [
            {
                **({"properties": run_properties} if run_properties else {}),
                "tool": {
                    "driver": {
                        "name": "tflint-graph",
                        "informationUri": INFORMATION_URI,
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri().rstrip("/") + "/"}},
                # libcst counts columns in code points; SARIF's default is UTF-16 units.
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def _cell_region(f: Finding) -> dict[str, int]:
    region = {"startLine": max(f.line, 1), "startColumn": max(f.column, 1)}
    if f.end_line is not None and f.end_column is not None:
        region["endLine"] = f.end_line
        region["endColumn"] = f.end_column  # exclusive, as SARIF counts it
    return region


def _region(f: Finding, run: RunInfo) -> dict[str, int]:
    """The finding's region in the file's text: a notebook finding's cell position is
    translated to where it sits in the JSON (line 1 when that cannot be found)."""
    if f.cell is None:
        return _cell_region(f)
    start = run.lines.file_position(f)
    if start is None:
        return {"startLine": 1}
    region = {"startLine": start[0], "startColumn": start[1]}
    end = run.lines.file_position(f, end=True)
    if end is not None and end >= start:
        region["endLine"], region["endColumn"] = end
    return region


def _rules() -> list[dict[str, Any]]:
    from tflint_graph.checks import rule_table  # the rules need libcst: loaded only here

    rules: list[dict[str, Any]] = []
    for code, name, severity, summary in rule_table():
        page = read_page(code) or ""
        what = " ".join(section(page, "What it does").split())
        rule: dict[str, Any] = {
            "id": code,
            "name": name,
            "shortDescription": {"text": summary},
            "fullDescription": {"text": what or summary},
            "defaultConfiguration": {"level": _LEVEL[severity]},
            "properties": {"tags": ["tensorflow"], "severity": severity.value},
        }
        if page:
            # The page is Markdown that reads fine as plain text too.
            rule["help"] = {"text": page, "markdown": page}
        rules.append(rule)
    return rules


def _artifact_location(path: str, root: Path) -> dict[str, str]:
    """A URI relative to ``root`` (``%SRCROOT%``), as code scanning needs; a file outside
    ``root`` keeps an absolute ``file:`` URI."""
    relative = relative_to_root(path, root)
    if relative is None:
        return {"uri": Path(path).resolve().as_uri()}
    return {"uri": quote(relative), "uriBaseId": SRCROOT}
