"""The default format, in ruff's style: ``path:line:col: CODE [*] severity: message``
(``path:cell N:line:col`` in a notebook), which editors and terminals make clickable.
``[*]`` marks a finding that ``--fix`` would fix with the flags given (its
``Finding.fix_safety``, decided while linting: nothing is parsed again for it); a closing
summary counts the findings and the fixes.  ``--show-source`` adds the line and a caret,
``--statistics`` replaces the findings with a count per code, ``--show-fixes`` lists the
fixes applied or available per file.  On a terminal the lines are coloured and long messages
wrap under their first line."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterable, Sequence

import click

from tflint_graph.core.finding import Finding, Severity
from tflint_graph.output.format import RunInfo, SourceLines, cell_of, statistics

_COLOUR = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}
# How far a wrapped message's later lines are indented.
_INDENT = "    "


def render(findings: Sequence[Finding], run: RunInfo) -> str:
    if run.statistics:  # a table to read, so no summary line
        return _statistics(findings)
    paint = _Paint(run.color)
    out = _findings(findings, run, paint)
    if run.summary:
        out.append(_found(len(findings)))
        if run.fixed is not None and not (run.show_fixes and run.applied):
            out.append(f"Fixed {run.fixed} finding{'s' if run.fixed != 1 else ''}.")
        fixable = _fixable_line(findings, run, paint)
        if fixable:
            out.append(fixable)
    if run.show_fixes:
        out += _fix_listing(findings, run)
    return "\n".join(out)


class _Paint:
    """ANSI styles when colour is on, plain text otherwise."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, text: str, **style: object) -> str:
        return click.style(text, **style) if self.on else text  # type: ignore[arg-type]


def _applies(safety: str | None, run: RunInfo) -> bool:
    """Whether ``--fix`` with this run's flags applies a fix of that safety."""
    return safety == "safe" or (safety == "unsafe" and run.unsafe_fixes)


def _findings(findings: Sequence[Finding], run: RunInfo, paint: _Paint) -> list[str]:
    source: SourceLines | None = run.lines if run.show_source else None
    out: list[str] = []
    for f in findings:
        colour = _COLOUR[f.severity]
        fixable_now = run.show_fixable and _applies(f.fix_safety, run)
        marker = "[*] " if fixable_now else ""
        where = f.location
        head = f"{where}: {f.code} {marker}{f.severity.value}:"
        painted = (
            f"{paint(f.path, bold=True)}{where[len(f.path) :]}: "
            f"{paint(f.code, fg=colour, bold=True)} "
            f"{paint('[*]', fg='cyan') + ' ' if fixable_now else ''}"
            f"{paint(f.severity.value + ':', fg=colour)}"
        )
        message = f"{f.message} {f.dynamic}" if f.dynamic is not None else f.message
        out += _wrapped(head, painted, message, run.width)
        if source is not None and (line := source.line(f.path, f.line, *cell_of(f))) is not None:
            out.append(f"    {line.expandtabs(1)}")
            out.append("    " + " " * (f.column - 1) + paint("^", fg=colour, bold=True))
    return out


def _wrapped(head: str, painted: str, message: str, width: int | None) -> list[str]:
    """The finding's line, or on a terminal (``width``) its message wrapped at word
    boundaries, the later lines indented, the first one keeping ``path:line:col:``."""
    if width is None or len(head) + 1 + len(message) <= width:
        return [f"{painted} {message}"]
    lines = textwrap.wrap(
        message,
        width=width,
        initial_indent=" " * (len(head) + 1),
        subsequent_indent=_INDENT,
        break_long_words=False,
        break_on_hyphens=False,
    )
    if not lines:
        return [f"{painted} {message}"]
    return [f"{painted} {lines[0].lstrip(' ')}", *lines[1:]]


def _fixable_line(findings: Sequence[Finding], run: RunInfo, paint: _Paint) -> str:
    """``[*] 2 fixable with --fix (1 more with --unsafe-fixes).`` as ruff counts them; empty
    when no fix exists."""
    if not run.show_fixable:
        return ""
    safeties = [f.fix_safety for f in findings if f.fix_safety is not None]
    applicable = sum(_applies(s, run) for s in safeties)
    hidden = sum(s == "unsafe" for s in safeties) if not run.unsafe_fixes else 0
    more = f" ({hidden} more with --unsafe-fixes)" if hidden else ""
    if applicable:
        flags = "--fix --unsafe-fixes" if run.unsafe_fixes and "unsafe" in safeties else "--fix"
        return f"{paint('[*]', fg='cyan')} {applicable} fixable with {flags}{more}."
    if hidden:
        fixes = "fix" if hidden == 1 else "fixes"
        return f"No safe fixes available ({hidden} unsafe {fixes} with --fix --unsafe-fixes)."
    return ""


def _fix_listing(findings: Sequence[Finding], run: RunInfo) -> list[str]:
    """``--show-fixes``: per file, how many findings of each code were fixed (after
    ``--fix``) and can be fixed, with the flags that fix them."""
    out: list[str] = []
    if run.applied is not None:
        out += _listing("Fixed {}:", run.applied)
    if run.show_fixable:
        offered: dict[str, list[tuple[str, str, str]]] = {"safe": [], "unsafe": []}
        for f in findings:
            if f.fix_safety is not None:
                offered[f.fix_safety].append((f.path, f.code, f.name))
        if run.unsafe_fixes:
            both = offered["safe"] + offered["unsafe"]
            out += _listing("Fixable with --fix --unsafe-fixes, {}:", both)
        else:
            out += _listing("Fixable with --fix, {}:", offered["safe"])
            out += _listing("Fixable only with --fix --unsafe-fixes, {}:", offered["unsafe"])
    return out or ["No fixes available."]


def _listing(title: str, fixes: Iterable[tuple[str, str, str]]) -> list[str]:
    """``title`` (``{}``: the number of findings) and a count per file and code."""
    counts = Counter(fixes)
    if not counts:
        return []
    total = sum(counts.values())
    out = [title.format(f"{total} finding{'s' if total != 1 else ''}")]
    for path in sorted({p for p, _, _ in counts}):
        out.append(f"- {path}:")
        for (_, code, name), n in sorted(c for c in counts.items() if c[0][0] == path):
            out.append(f"    {n} x {code} ({name})")
    return out


def _statistics(findings: Sequence[Finding]) -> str:
    rows = statistics(findings)
    width = max((len(str(n)) for _, _, n in rows), default=1)
    return "\n".join(f"{n:>{width}}  {code}  {name}" for code, name, n in rows)


def _found(count: int) -> str:
    if count == 0:
        return "All checks passed!"
    return f"Found {count} finding{'s' if count != 1 else ''}."
