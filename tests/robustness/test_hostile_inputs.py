"""Hostile inputs of SPEC §5 that ``test_bad_input.py`` does not cover.

Every hostile file is linted next to a known-bad file (``good.py``: a ``print`` in a
``tf.function``, TFG101 at 5:5) whose finding must survive; the hostile file itself must give
a clear TFG001/TFG002 (or its own findings when it is valid Python), the exit code is 1 (or 2
for a usage error), and no traceback reaches the output.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import tflint_graph.run.parallel as parallel
import tflint_graph.source.reading as reading
from tests.cli_support import PRINT_STEP, codes_in, invoke, run_process, write_tree
from tflint_graph import lint_paths

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")

GOOD = ("good.py", 5, 5, "TFG101")
HEAD = "import tensorflow as tf\n\n@tf.function\ndef step(a, b):\n"  # a body follows at line 5


def _nested_ifs(depth: int) -> str:
    body = "".join("    " * (i + 1) + f"if a > {i}:\n" for i in range(depth))
    return HEAD + body + "    " * (depth + 1) + "print(a)\n"


def _mixed_brackets(depth: int) -> str:
    # ( [ f( {0: ... } ) ] ) : four bracket kinds, `depth` levels in all
    opens, closes = "", ""
    for i in range(depth):
        kind = i % 4
        opens += ["(", "[", "f(", "{0: "][kind]
        closes = [")", "]", ")", "}"][kind] + closes
    return HEAD + "    print(a)\n    return " + opens + "a" + closes + "\n"


# name -> (content, code expected on the hostile file, (line, column) or None, words)
HOSTILE: dict[str, tuple[str | bytes, str, tuple[int, int] | None, str]] = {
    # -- 900-deep nesting: parentheses, lists, calls, nested `if` blocks, and the rest ------
    "deep_parens.py": (
        HEAD + "    print(a)\n    return " + "(" * 900 + "a" + ")" * 900 + "\n",
        "TFG001",
        None,
        "nested",
    ),
    "deep_lists.py": (
        HEAD + "    print(a)\n    return " + "[" * 900 + "a" + "]" * 900 + "\n",
        "TFG001",
        None,
        "nested",
    ),
    "deep_calls.py": (
        HEAD + "    print(a)\n    return " + "f(" * 900 + "a" + ")" * 900 + "\n",
        "TFG001",
        None,
        "nested",
    ),
    "deep_mixed.py": (_mixed_brackets(900), "TFG001", None, "nested"),
    "deep_ifs.py": (_nested_ifs(900), "TFG001", None, "indentation"),
    "deep_elif.py": (
        HEAD
        + "    if a:\n        print(a)\n"
        + "".join(f"    elif b == {i}:\n        b += 1\n" for i in range(900)),
        "TFG001",
        None,
        "nested",
    ),
    "deep_ternary.py": (
        HEAD + "    print(a)\n    return " + "a if b else " * 900 + "b\n",
        "TFG001",
        None,
        "nested",
    ),
    "deep_lambda.py": (
        HEAD + "    print(a)\n    return " + "lambda: " * 900 + "a\n",
        "TFG001",
        None,
        "nested",
    ),
    "deep_subscript.py": (
        HEAD + "    print(a)\n    return a" + "[0]" * 900 + "\n",
        "TFG001",
        None,
        "nested",
    ),
    # -- a 1 MB single line ------------------------------------------------------------------
    "mb_string.py": (
        PRINT_STEP + "BLOB = '" + "x" * 1_000_000 + "'\n",
        "TFG101",  # valid Python: analysed, the print inside is found
        (5, 5),
        "print",
    ),
    "mb_expression.py": (
        HEAD + "    return " + " + ".join(["a"] * 250_000) + "\n",
        "TFG001",
        (1, 1),
        "nested",
    ),
    "mb_comment.py": (PRINT_STEP + "# " + "#" * 1_000_000 + "\n", "TFG101", (5, 5), "print"),
    # -- Python 2 ----------------------------------------------------------------------------
    "py2_module.py": (
        "import tensorflow as tf\n"
        "\n"
        "def load(path):\n"
        "    try:\n"
        "        f = open(path)\n"
        "    except IOError, e:\n"
        "        print 'cannot open', path\n"
        "    return f.read()\n",
        "TFG001",
        None,  # CPython stops at line 6; libcst (which reads 6 as 3.14 syntax) at line 7
        "syntax error",
    ),
    "py2_backticks.py": ("import tensorflow as tf\nx = `1`\n", "TFG001", (2, 5), "syntax error"),
    "py2_ne.py": ("import tensorflow as tf\nif 1 <> 2:\n    pass\n", "TFG001", (2, 6), "syntax"),
    "py2_ur_string.py": ("import tensorflow as tf\nx = ur'abc'\n", "TFG001", (2, 7), "syntax"),
    "py2_octal_long.py": ("import tensorflow as tf\nx = 0777L\n", "TFG001", (2, 5), "syntax"),
    # -- NUL bytes anywhere ------------------------------------------------------------------
    "nul_in_string.py": (
        PRINT_STEP.encode() + b"x = '\x00'\n",
        "TFG002",
        (1, 1),
        "NUL",
    ),
    "nul_in_comment.py": (PRINT_STEP.encode() + b"# \x00\n", "TFG002", (1, 1), "NUL"),
    "nul_at_end.py": (PRINT_STEP.encode() + b"\x00", "TFG002", (1, 1), "NUL"),
    "nul_utf16.py": ("import tensorflow as tf\n".encode("utf-16"), "TFG002", (1, 1), "NUL"),
    # -- BOM + CRLF --------------------------------------------------------------------------
    "bom_crlf_cookie.py": (
        b"\xef\xbb\xbf# -*- coding: utf-8 -*-\r\n" + PRINT_STEP.replace("\n", "\r\n").encode(),
        "TFG101",
        (6, 5),
        "print",
    ),
    "bom_crlf_syntax.py": (
        b"\xef\xbb\xbfimport tensorflow as tf\r\nx = (\r\ny = 1\r\n",
        "TFG001",
        (2, 5),
        "never closed",
    ),
    "bom_latin1_cookie.py": (
        b"\xef\xbb\xbf# coding: latin-1\r\n" + PRINT_STEP.replace("\n", "\r\n").encode(),
        "TFG002",
        (1, 1),
        "encoding",
    ),
    "mixed_endings.py": (
        b"import tensorflow as tf\r\n\r@tf.function\ndef step(x):\r\n    print(x)\r    return x\n",
        "TFG101",
        (5, 5),
        "print",
    ),
    "bom_crlf_no_final_newline.py": (
        b"\xef\xbb\xbf" + PRINT_STEP.replace("\n", "\r\n").encode().rstrip(b"\r\n"),
        "TFG101",
        (5, 5),
        "print",
    ),
}


def hostile_files() -> dict[str, str | bytes]:
    return {name: content for name, (content, *_) in HOSTILE.items()}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_file_next_to_a_bad_one(tmp_path: Path, name: str) -> None:
    content, code, where, words = HOSTILE[name]
    write_tree(tmp_path, {"good.py": PRINT_STEP, name: content})
    result = invoke(["--no-cache", "--jobs", "1", "."], tmp_path)
    assert result.exit_code == 1, result.output
    found = codes_in(result.stdout)
    assert GOOD in found
    mine = [f for f in found if f[0] == name]
    assert [f[3] for f in mine] == [code], result.stdout
    if where is not None:
        assert mine[0][1:3] == where, result.stdout
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith(name + ":"))
    assert words.lower() in line.lower()
    assert len(found) == 2


# -- a file of 40,000 small functions: must finish (no timing asserted) --------------------


def test_forty_thousand_functions(tmp_path: Path) -> None:
    many = (
        "import tensorflow as tf\n\n"
        + "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(40_000))
        + "@tf.function\ndef step(x):\n    print(x)\n    return f39999(x)\n"
    )
    last = many.count("\n") - 1  # the print
    write_tree(tmp_path, {"good.py": PRINT_STEP, "many.py": many})
    proc = run_process(["--no-cache", "--jobs", "1", "."], tmp_path, timeout=900)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    assert codes_in(proc.stdout) == [GOOD, ("many.py", last, 5, "TFG101")]


# -- files that vanish or become unreadable mid-run ----------------------------------------


def _finding_tuples(root: Path, **kwargs: object) -> list[tuple[str, int, str, str]]:
    return [
        (Path(f.path).relative_to(root).as_posix(), f.line, f.code, f.message)
        for f in lint_paths([root], **kwargs)  # type: ignore[arg-type]
    ]


def test_file_deleted_while_another_is_analysed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The walk lists z.py; it is deleted while a.py is being decoded, before it is read.
    write_tree(tmp_path, {"a.py": PRINT_STEP, "m.py": PRINT_STEP, "z.py": PRINT_STEP})
    real = reading.decode

    def decode(data: bytes, path: str):  # type: ignore[no-untyped-def]
        if Path(path).name == "a.py":
            (tmp_path / "z.py").unlink(missing_ok=True)
        return real(data, path)

    monkeypatch.setattr(reading, "decode", decode)
    got = _finding_tuples(tmp_path, jobs=1)
    assert [g[:3] for g in got] == [
        ("a.py", 5, "TFG101"),
        ("m.py", 5, "TFG101"),
        ("z.py", 1, "TFG002"),
    ]
    assert "vanished" in got[2][3]


# b.py exports a tf.function that a.py calls: a.py is analysed a second time once the run
# has linked the two, i.e. its file is read twice.
CROSS = {
    "pkg/__init__.py": "",
    "pkg/b.py": PRINT_STEP,
    "pkg/a.py": "import tensorflow as tf\nfrom pkg.b import step\n\nfor i in range(3):\n"
    "    step(i)\n",
}


def _reads(monkeypatch: pytest.MonkeyPatch, name: str, exc: OSError) -> list[int]:
    """Make ``Path.read_bytes`` of ``name`` fail from its second read on; returns the
    running count of its reads."""
    count = [0]
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == name:
            count[0] += 1
            if count[0] >= 2:
                raise exc
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    return count


@pytest.mark.parametrize(
    ("exc", "words"),
    [
        (PermissionError(13, "Permission denied"), "Permission denied"),
        (FileNotFoundError(2, "No such file or directory"), "vanished"),
    ],
    ids=["unreadable", "vanished"],
)
def test_file_fails_on_its_second_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: OSError, words: str
) -> None:
    write_tree(tmp_path, {**CROSS, "good.py": PRINT_STEP})
    clean = _finding_tuples(tmp_path, jobs=1)
    assert ("pkg/a.py", 5, "TFG303") in [g[:3] for g in clean]  # the second pass found it
    count = _reads(monkeypatch, "a.py", exc)
    got = _finding_tuples(tmp_path, jobs=1)
    assert count[0] >= 2, "a.py was read only once: the test no longer covers a second read"
    by_file = {}
    for path, line, code, message in got:
        by_file.setdefault(path, []).append((line, code, message))
    assert [(ln, c) for ln, c, _ in by_file["good.py"]] == [(5, "TFG101")]
    assert [(ln, c) for ln, c, _ in by_file["pkg/b.py"]] == [(5, "TFG101")]
    [(line, code, message)] = by_file["pkg/a.py"]
    assert (line, code) == (1, "TFG002")
    assert words in message


def _many_good(n: int = 20) -> dict[str, str]:
    # --jobs uses a pool from parallel.MIN_POOL_TASKS files on.
    assert n >= parallel.MIN_POOL_TASKS
    return {f"g{i:02}.py": PRINT_STEP for i in range(n)}


def _first_batch_hook(monkeypatch: pytest.MonkeyPatch, action) -> None:  # type: ignore[no-untyped-def]
    """Run ``action`` once, in the main process, just before the first batch is analysed
    (after the walk listed the files)."""
    real = parallel.AnalysisPool.run
    done = [False]

    def run(self, tasks):  # type: ignore[no-untyped-def]
        if not done[0]:
            done[0] = True
            action()
        return real(self, tasks)

    monkeypatch.setattr(parallel.AnalysisPool, "run", run)


@pytest.mark.parametrize("jobs", [1, 2])
def test_file_deleted_after_the_walk_with_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    write_tree(tmp_path, {**_many_good(), "doomed.py": PRINT_STEP})
    _first_batch_hook(monkeypatch, lambda: (tmp_path / "doomed.py").unlink())
    got = _finding_tuples(tmp_path, jobs=jobs, cache=tmp_path / "cache")
    doomed = [g for g in got if g[0] == "doomed.py"]
    assert [g[1:3] for g in doomed] == [(1, "TFG002")]
    assert "vanished" in doomed[0][3]
    assert [g[:3] for g in got if g[0] != "doomed.py"] == [
        (name, 5, "TFG101") for name in sorted(_many_good())
    ]


@pytest.mark.parametrize("jobs", [1, 2])
def test_file_unreadable_in_pool_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    """A file that becomes unreadable after the walk.  As a normal user chmod does it; root
    ignores permissions, so there the read is made to fail (pool workers are forked from this
    process and inherit the patch)."""
    write_tree(tmp_path, {**_many_good(), "secret.py": PRINT_STEP})
    secret = tmp_path / "secret.py"
    if os.geteuid() != 0:
        _first_batch_hook(monkeypatch, lambda: secret.chmod(0))
    else:
        real = Path.read_bytes

        def read_bytes(self: Path) -> bytes:
            if self.name == "secret.py":
                raise PermissionError(13, "Permission denied", str(self))
            return real(self)

        _first_batch_hook(monkeypatch, lambda: monkeypatch.setattr(Path, "read_bytes", read_bytes))
    try:
        got = _finding_tuples(tmp_path, jobs=jobs, cache=False)
    finally:
        secret.chmod(0o644)
    mine = [g for g in got if g[0] == "secret.py"]
    assert [g[1:3] for g in mine] == [(1, "TFG002")]
    assert "Permission denied" in mine[0][3]
    assert len(got) == len(_many_good()) + 1


# -- symlink loops and dangling links under --jobs 2 ---------------------------------------


def _links(root: Path) -> None:
    os.symlink("loop_b.py", root / "loop_a.py")
    os.symlink("loop_a.py", root / "loop_b.py")
    os.symlink("self.py", root / "self.py")
    os.symlink("nowhere.py", root / "dangling.py")
    os.symlink("missing_dir/x.py", root / "dangling2.py")
    os.symlink(".", root / "here")  # a directory loop, not followed in a walk
    (root / "sub").mkdir()
    os.symlink("..", root / "sub" / "up")
    os.symlink("../g00.py", root / "sub" / "alias.py")  # a good file under a second name


@needs_symlinks
def test_symlink_loops_and_dangling_links_with_jobs_2(tmp_path: Path) -> None:
    write_tree(tmp_path, _many_good())
    _links(tmp_path)
    outputs = {}
    for jobs in ("1", "2"):
        proc = run_process(["--no-cache", "--jobs", jobs, "."], tmp_path, timeout=300)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr == ""
        outputs[jobs] = proc.stdout
    assert outputs["1"] == outputs["2"]
    found = codes_in(outputs["2"])
    links = [(f[0], f[3]) for f in found if not f[0].startswith("g")]
    assert links == [
        ("dangling.py", "TFG002"),
        ("dangling2.py", "TFG002"),
        ("loop_a.py", "TFG002"),
        ("loop_b.py", "TFG002"),
        ("self.py", "TFG002"),
        ("sub/alias.py", "TFG101"),
    ]
    assert [f for f in found if f[0].startswith("g")] == [
        (name, 5, 5, "TFG101") for name in sorted(_many_good())
    ]
    assert "symbolic link loop" in outputs["2"]
    assert "dangling symbolic link" in outputs["2"]


@needs_symlinks
def test_symlink_loops_named_explicitly_with_jobs_2(tmp_path: Path) -> None:
    write_tree(tmp_path, _many_good())
    _links(tmp_path)
    names = [*sorted(_many_good()), "loop_a.py", "self.py", "dangling.py", "here/g01.py"]
    proc = run_process(["--no-cache", "--jobs", "2", *names], tmp_path, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    found = [(f[0], f[3]) for f in codes_in(proc.stdout)]
    assert ("loop_a.py", "TFG002") in found
    assert ("self.py", "TFG002") in found
    assert ("dangling.py", "TFG002") in found
    assert ("here/g01.py", "TFG101") in found
    assert len(found) == len(names)


# -- a path that does not exist, among good ones -------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["--jobs", "2", "good.py", "pkg", "missing.py"],
        ["--jobs", "2", "missing dir/é.py", "good.py", "pkg"],
        ["--output-format", "json", "good.py", "pkg/nope"],
        ["--fix", "good.py", "missing.py"],
    ],
    ids=["last", "first-unicode", "json", "fix"],
)
def test_missing_path_among_good_ones(tmp_path: Path, args: list[str]) -> None:
    write_tree(
        tmp_path, {"good.py": PRINT_STEP, **{f"pkg/{k}": v for k, v in _many_good().items()}}
    )
    before = (tmp_path / "good.py").read_bytes()
    proc = run_process(args, tmp_path)
    missing = next(a for a in args if "miss" in a or "nope" in a)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert missing in lines[0]
    assert "does not exist" in lines[0]
    assert (tmp_path / "good.py").read_bytes() == before  # --fix wrote nothing
    with pytest.raises(FileNotFoundError, match=re.escape(missing)):
        list(lint_paths([tmp_path / "good.py", tmp_path / missing]))


# -- the whole hostile folder: --jobs 1 and --jobs 2 print the same JSON -------------------


@pytest.fixture
def hostile_folder(tmp_path: Path) -> Iterator[Path]:
    write_tree(tmp_path, {"good.py": PRINT_STEP, **_many_good(), **hostile_files()})
    if hasattr(os, "symlink"):
        _links(tmp_path)
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.py")
    yield tmp_path


def test_jobs_1_and_2_print_identical_json_on_the_hostile_folder(hostile_folder: Path) -> None:
    outputs = {}
    for jobs in ("1", "2"):
        proc = run_process(
            ["--no-cache", "--output-format", "json", "--jobs", jobs, "."],
            hostile_folder,
            timeout=600,
        )
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr == ""
        outputs[jobs] = proc.stdout
    assert outputs["1"] == outputs["2"]
    doc = json.loads(outputs["2"])
    found = {(f["path"], f["code"]) for f in doc["findings"]}
    for name, (_, code, _, _) in HOSTILE.items():
        assert (name, code) in found
    assert ("good.py", "TFG101") in found
    keys = [(f["path"], f["line"], f["column"], f["code"]) for f in doc["findings"]]
    assert keys == sorted(keys)


def test_cache_warm_run_matches_cold_on_the_hostile_folder(hostile_folder: Path) -> None:
    args = ["--output-format", "json", "--jobs", "2", "."]
    cold = run_process(args, hostile_folder, timeout=600)
    warm = run_process(args, hostile_folder, timeout=600)
    assert (cold.returncode, warm.returncode) == (1, 1)
    assert cold.stderr == warm.stderr == ""
    assert cold.stdout == warm.stdout


# -- a 1 MB single line of data (a literal list) -------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        # A data module: TensorFlow imported, nothing that could be traced (CPython's tree).
        "import tensorflow as tf\nX = [" + "1, " * 350_000 + "]\n",
        # The same literal next to a tf.function: the whole libcst analysis runs on it.
        "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    return x\n\n"
        "X = [" + "1, " * 100_000 + "]\n",
    ],
    ids=["data-module-1MB", "with-tf-function-300kB"],
)
def test_one_line_list_literal_finishes(tmp_path: Path, data: str) -> None:
    # This took minutes once (analysis time grew quadratically with the elements); the
    # timeout only guards against that coming back, it is not a speed target.
    write_tree(tmp_path, {"good.py": PRINT_STEP, "data.py": data})
    proc = subprocess.run(
        [sys.executable, "-m", "tflint_graph", "--no-cache", "--jobs", "1", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert codes_in(proc.stdout) == [GOOD]


# -- CRLF files: a syntax error at the end of the file stays on a line of the file ---------


@pytest.mark.parametrize(
    "source",
    [
        "import tensorflow as tf\nif x:\n",
        "import tensorflow as tf\nclass A:\n    def f(self):\n",
        "import tensorflow as tf\n@tf.function\ndef f(x):\n    print(x)\n    if x:\n",
    ],
    ids=["if", "def-in-class", "if-in-tf-function"],
)
def test_crlf_syntax_error_at_end_of_file_is_inside_the_file(tmp_path: Path, source: str) -> None:
    (tmp_path / "lf.py").write_bytes(source.encode())
    (tmp_path / "crlf.py").write_bytes(source.replace("\n", "\r\n").encode())
    [lf] = lint_paths([tmp_path / "lf.py"])
    [crlf] = lint_paths([tmp_path / "crlf.py"])
    assert lf.code == crlf.code == "TFG001"
    assert crlf.line <= source.count("\n")
    assert (crlf.line, crlf.column) == (lf.line, lf.column)


@pytest.mark.parametrize(
    "source",
    [
        "x = " + " + ".join(["a"] * 60) + "\n",
        "x = (\n" + " and\n".join(["a"] * 40) + ")\n",
        "def f():\n    if a:\n        return " + "f(" * 30 + ")" * 30 + "\n",
        "y = [" + ", ".join("-" * i + "x" for i in range(40)) + "]\n",
        "class A:\n    def g(self):\n        try:\n            pass\n        except E:\n"
        "            z = " + ".".join(["a"] * 50) + "\n",
        "match p:\n    case [a, *b] if " + " or ".join(["c"] * 30) + ":\n        pass\n",
        'print(f"{x:{y}}" + ' + " + ".join(['f"{a}"'] * 20) + ")\n",
    ],
)
def test_nesting_scan_skips_only_expressions_too_short_to_matter(source: str) -> None:
    # syntax.scan_tree walks only statements and long expressions; at every limit it
    # must agree with the full walk of every node.
    from tflint_graph.source.syntax import scan_tree as _scan_tree

    tree = ast.parse(source)
    verdicts = {_scan_tree(tree, limit)[0] for limit in range(1, 120)}
    assert verdicts == {True, False}  # the limits straddle this source's depth
    for limit in range(1, 120):
        assert _scan_tree(tree, limit, source) == _scan_tree(tree, limit), limit
