"""Helpers for tests that run the command line: in-process (click's CliRunner) or as a real
subprocess, on small file trees written under ``tmp_path``."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from click.testing import CliRunner, Result

from tests.helpers import dedent
from tflint_graph.cli import main

# TFG101 at line 5, column 5.
PRINT_STEP = dedent(
    """
    import tensorflow as tf

    @tf.function
    def step(x):
        print(x)
        return x
    """
)

# TFG101 at 8:5, TFG103 at 9:13, TFG104 at 10:9.
THREE_CODES = dedent(
    """
    import random
    import time
    import tensorflow as tf


    @tf.function
    def step(x):
        print(x)
        noise = random.random()
        t = time.time()
        return x + noise + t
    """
)

CLEAN = dedent(
    """
    import tensorflow as tf

    @tf.function
    def step(x):
        tf.print(x)
        return x * 2
    """
)

VENV_SCRIPT = Path(sys.executable).parent / "tflint-graph"


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write ``{relative path: text or bytes}`` under ``root``; returns ``root``."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@contextlib.contextmanager
def chdir(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def invoke(args: Sequence[str], cwd: Path) -> Result:
    """Run ``tflint-graph ARGS`` in-process from ``cwd``; an unexpected exception fails."""
    with chdir(cwd):
        result = CliRunner().invoke(main, list(args), catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"CLI raised {result.exception!r}\n{result.output}")
    assert "Traceback" not in result.output
    return result


def run_process(
    args: Sequence[str], cwd: Path, *, script: bool = False, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the real program (``python -m tflint_graph`` or the console script) from ``cwd``.

    Fails if anything on stderr looks like a traceback.
    """
    command = [str(VENV_SCRIPT)] if script else [sys.executable, "-m", "tflint_graph"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [*command, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout
    return proc


def finding_lines(output: str) -> list[str]:
    """The ``path:line:col: CODE message`` lines of text output."""
    return [ln for ln in output.splitlines() if ln.count(":") >= 3 and " TFG" in ln]


def codes_in(output: str) -> list[tuple[str, int, int, str]]:
    """(path, line, column, code) of every finding line of text output."""
    out = []
    for ln in finding_lines(output):
        path, line, col, rest = ln.split(":", 3)
        out.append((path, int(line), int(col), rest.split()[0]))
    return out


# The machine may be busy: the default 60 s per module is not what these tests are about.
_JSON = ("--output-format", "json", "--jobs", "2", "--dynamic-timeout", "400")


def dynamic_findings(
    root: Path, modules: Mapping[str, str], *args: str
) -> dict[tuple[str, int], dict]:
    """Write ``modules`` (dedented) under ``root``, run ``tflint-graph . --dynamic`` on them
    in a subprocess (JSON, two jobs, a timeout generous for a busy machine) and return each
    finding's dynamic result with its code, by (file name, line)."""
    for name, source in modules.items():
        (root / name).write_text(textwrap.dedent(source), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "tflint_graph", ".", "--dynamic", "--no-cache", *args, *_JSON],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    return {
        (Path(f["path"]).name, f["line"]): f["dynamic"] | {"code": f["code"]}
        for f in json.loads(proc.stdout)["findings"]
    }


def finding_at(
    found: dict[tuple[str, int], dict], modules: Mapping[str, str], module: str, text: str
) -> dict:
    """The dynamic result of the finding on the first line of ``module`` holding ``text``."""
    lines = textwrap.dedent(modules[module]).splitlines()
    number = next(i for i, line in enumerate(lines, start=1) if text in line)
    return found[(module, number)]
