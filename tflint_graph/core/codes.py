"""Every code tflint-graph can report, without loading the rules (which need libcst).

``select``/``ignore``/``per-file-ignores`` and ``--select``/``--ignore``/``--extend-select``
are checked against this list at start-up; a test keeps it equal to the rule registry
(``tflint_graph.checks.rule_table``).
"""

from __future__ import annotations

from tflint_graph.core.finding import TOOL_CODES

# The codes of the rules in ``tflint_graph.checks.ALL_RULES``, in code order.
RULE_CODES: tuple[str, ...] = (
    *(f"TFG10{n}" for n in range(1, 10)),
    *(f"TFG20{n}" for n in range(1, 10)),
    *(f"TFG30{n}" for n in range(1, 6)),
    *(f"TFG40{n}" for n in range(1, 5)),
)

# The tool's own codes (TFG001, TFG002) and the rules' codes.
KNOWN_CODES: tuple[str, ...] = (*TOOL_CODES, *RULE_CODES)


def is_known_selector(selector: str) -> bool:
    """``ALL``, a code, or a prefix of at least one code (``TFG``, ``TFG1``, ``TFG10``)."""
    return selector == "ALL" or (
        bool(selector) and any(code.startswith(selector) for code in KNOWN_CODES)
    )


def closest_code(selector: str) -> str | None:
    """The known code that ``selector`` most likely misspells, if one is close."""
    import difflib  # only for an error message: not at start-up

    found = difflib.get_close_matches(selector.upper(), KNOWN_CODES, n=1, cutoff=0.8)
    return found[0] if found else None
