"""Output formats.  Text is ``path:line:col: CODE message``, clickable in editors."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tflint_graph.core.finding import Finding, Severity
from tflint_graph.core.noqa import source_lines
from tflint_graph.output.pages import read_page
from tflint_graph.source.reading import decode

JSON_SCHEMA_VERSION = 1


def _source_line(path: str, line: int, cache: dict[str, list[str]]) -> str | None:
    """Physical line ``line`` of ``path``, decoded as the linter decoded it."""
    if path not in cache:
        try:
            decoded = decode(Path(path).read_bytes(), path)
        except OSError:
            decoded = ""
        cache[path] = source_lines(decoded) if isinstance(decoded, str) else []
    lines = cache[path]
    return lines[line - 1] if 0 < line <= len(lines) else None


def format_text(findings: Sequence[Finding], show_source: bool = False) -> str:
    out: list[str] = []
    cache: dict[str, list[str]] = {}
    for f in findings:
        dynamic = f" {f.dynamic}" if f.dynamic is not None else ""
        out.append(f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}{dynamic}")
        if show_source:
            src = _source_line(f.path, f.line, cache)
            if src is not None:
                expanded = src.expandtabs(1)
                out.append(f"    {expanded}")
                out.append("    " + " " * (f.column - 1) + "^")
    return "\n".join(out)


def statistics(findings: Sequence[Finding]) -> list[tuple[str, str, int]]:
    counts = Counter((f.code, f.name) for f in findings)
    return [(code, name, n) for (code, name), n in sorted(counts.items())]


def format_statistics(findings: Sequence[Finding]) -> str:
    rows = statistics(findings)
    width = max((len(str(n)) for _, _, n in rows), default=1)
    return "\n".join(f"{n:>{width}}  {code}  {name}" for code, name, n in rows)


def format_json(
    findings: Sequence[Finding], version: str, dynamic: Mapping[str, Any] | None = None
) -> str:
    """Versioned JSON: ``{"schema_version", "tool", "findings", "statistics"}``, plus
    ``"dynamic"`` (device and counts per status) after ``--dynamic``."""
    doc: dict[str, Any] = {
        "schema_version": JSON_SCHEMA_VERSION,
        "tool": {"name": "tflint-graph", "version": version},
        "findings": [f.to_dict() for f in findings],
        "statistics": {code: n for code, _, n in statistics(findings)},
    }
    if dynamic is not None:
        doc["dynamic"] = dict(dynamic)
    return json.dumps(doc, indent=2)


# --- SARIF 2.1.0 ----------------------------------------------------------------------

SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SARIF_VERSION = "2.1.0"
INFORMATION_URI = "https://pypi.org/project/tflint-graph/"
SRCROOT = "%SRCROOT%"
# The key under ``partialFingerprints``; bump the suffix if the hash recipe ever changes.
FINGERPRINT_KEY = "tflintGraphLineHash/v1"

_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _page_section(page: str, heading: str) -> str:
    """The prose under ``## heading``, up to the next ``## `` (empty when absent)."""
    match = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", page, re.M | re.S)
    return match.group(1).strip() if match else ""


def _sarif_rules() -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    from tflint_graph.checks import rule_table  # the rules themselves need libcst

    for code, name, severity, summary in rule_table():
        page = read_page(code) or ""
        what = " ".join(_page_section(page, "What it does").split())
        rule: dict[str, Any] = {
            "id": code,
            "name": name,
            "shortDescription": {"text": summary},
            "fullDescription": {"text": what or summary},
            "defaultConfiguration": {"level": _SARIF_LEVEL[severity]},
            "properties": {"tags": ["tensorflow"], "severity": severity.value},
        }
        if page:
            # The page is Markdown that reads fine as plain text too.
            rule["help"] = {"text": page, "markdown": page}
        rules.append(rule)
    return rules


def _artifact_location(path: str, root: Path) -> dict[str, str]:
    """A URI relative to ``root`` (``%SRCROOT%``) with forward slashes, as code scanning
    needs; a file outside ``root`` keeps an absolute ``file:`` URI."""
    resolved = Path(path).resolve()
    try:
        relative = resolved.relative_to(root)
    except ValueError:
        return {"uri": resolved.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": SRCROOT}


def _fingerprint(path_uri: str, code: str, text: str, occurrence: int) -> str:
    """Hash of path, code and the offending line's text (whitespace-trimmed), not its line
    number, so an alert survives edits elsewhere in the file.  ``occurrence`` separates
    identical lines in one file, counted top to bottom."""
    key = "\0".join((path_uri, code, text.strip(), str(occurrence)))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def sarif_log(
    findings: Sequence[Finding],
    version: str,
    root: Path | None = None,
    dynamic: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run; URIs are relative to ``root`` (default: the current
    directory, which in CI is the repository checkout)."""
    root = (root or Path.cwd()).resolve()
    rules = _sarif_rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    cache: dict[str, list[str]] = {}
    seen: Counter[tuple[str, str, str]] = Counter()
    results: list[dict[str, Any]] = []
    for f in findings:
        location = _artifact_location(f.path, root)
        text = _source_line(f.path, f.line, cache) or ""
        occurrence = seen[(location["uri"], f.code, text.strip())]
        seen[(location["uri"], f.code, text.strip())] += 1
        region: dict[str, int] = {"startLine": max(f.line, 1), "startColumn": max(f.column, 1)}
        if f.end_line is not None and f.end_column is not None:
            region["endLine"] = f.end_line
            region["endColumn"] = f.end_column  # exclusive, as SARIF counts it
        result: dict[str, Any] = {
            "ruleId": f.code,
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {"artifactLocation": location, "region": region}}],
            "partialFingerprints": {
                FINGERPRINT_KEY: _fingerprint(location["uri"], f.code, text, occurrence)
            },
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        properties: dict[str, Any] = {
            k: v for k, v in (("context", f.context), ("chain", list(f.chain)), ("fix", f.fix)) if v
        }
        if f.dynamic is not None:
            properties["dynamic"] = {"status": f.dynamic.status, "evidence": f.dynamic.evidence}
        if properties:
            result["properties"] = properties
        results.append(result)
    run_properties = {"dynamic": dict(dynamic)} if dynamic is not None else None
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
                        "version": version,
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


def format_sarif(
    findings: Sequence[Finding],
    version: str,
    root: Path | None = None,
    dynamic: Mapping[str, Any] | None = None,
) -> str:
    return json.dumps(sarif_log(findings, version, root, dynamic), indent=2)


# --- GitHub Actions workflow commands ---------------------------------------------------

_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def format_github(findings: Sequence[Finding], root: Path | None = None) -> str:
    """One ``::error``/``::warning``/``::notice`` command per finding: GitHub Actions turns
    each into an annotation on the pull request's diff.  Paths are relative to ``root``
    (default: the current directory, the checkout in CI) with forward slashes."""
    root = (root or Path.cwd()).resolve()
    out: list[str] = []
    for f in findings:
        resolved = Path(f.path).resolve()
        try:
            file = resolved.relative_to(root).as_posix()
        except ValueError:
            file = resolved.as_posix()
        props = [
            ("file", file),
            ("line", str(f.line)),
            ("col", str(f.column)),
        ]
        if f.end_line is not None and f.end_column is not None:
            props += [("endLine", str(f.end_line)), ("endColumn", str(f.end_column))]
        props.append(("title", f"{f.code} {f.name}"))
        rendered = ",".join(f"{k}={_escape_property(v)}" for k, v in props)
        message = f"{f.message} {f.dynamic}" if f.dynamic is not None else f.message
        out.append(f"::{_GITHUB_LEVEL[f.severity]} {rendered}::{_escape_data(message)}")
    return "\n".join(out)
