"""SPEC §5: no input crashes the run or loses other files' findings.  Every subprocess run
also asserts that nothing resembling a traceback reaches stdout or stderr."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from tests.cli_support import CLEAN, PRINT_STEP, codes_in, invoke, run_process, write_tree
from tests.helpers import found
from tflint_graph import Config, lint_file, lint_paths, lint_source
from tflint_graph.source.reading import decode

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")


def deep_sources() -> dict[str, str]:
    head = "import tensorflow as tf\n\n@tf.function\ndef step(a):\n    return "
    return {
        "deep_parens.py": "x = " + "(" * 900 + "1" + ")" * 900 + "\n",
        "deep_lists.py": "x = " + "[" * 900 + "]" * 900 + "\n",
        "deep_unary.py": head + "-" * 5000 + "a\n",
        "deep_sum.py": head + "a" + " + a" * 20000 + "\n",
        # flat in Python's AST, 20000 levels deep in libcst (which used to segfault on it)
        "deep_and.py": head + "a" + " and a" * 20000 + "\n",
        "deep_attr.py": head + "a" + ".b" * 2900 + "\n",
    }


# -- the whole run survives everything at once ---------------------------------------------


@needs_symlinks
def test_real_run_over_a_folder_of_bad_files(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "good.py": PRINT_STEP,
            "clean.py": CLEAN,
            "bad_syntax.py": "def broken(:\n    pass\n",
            "py2.py": 'print "hello"\n',
            "latin.py": b"import tensorflow as tf\nname = '\xe9t\xe9'\n",
            "binary.py": b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)),
            "empty.py": "",
            "bom_crlf.py": b"\xef\xbb\xbf" + PRINT_STEP.replace("\n", "\r\n").encode(),
            **deep_sources(),
        },
    )
    os.symlink("loop_b.py", tmp_path / "loop_a.py")
    os.symlink("loop_a.py", tmp_path / "loop_b.py")
    os.symlink("nowhere.py", tmp_path / "dangling.py")
    os.symlink(".", tmp_path / "again")  # a directory loop: not followed inside a walk
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.py")  # reading it would block forever
    start = time.monotonic()
    proc = run_process(["."], tmp_path, timeout=120)
    elapsed = time.monotonic() - start
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    got = {(path, code) for path, _, _, code in codes_in(proc.stdout)}
    expected = {
        ("good.py", "TFG101"),
        ("bom_crlf.py", "TFG101"),
        ("bad_syntax.py", "TFG001"),
        ("py2.py", "TFG001"),
        ("latin.py", "TFG002"),
        ("binary.py", "TFG002"),
        ("loop_a.py", "TFG002"),
        ("loop_b.py", "TFG002"),
        ("dangling.py", "TFG002"),
        *((name, "TFG001") for name in deep_sources()),
    }
    if hasattr(os, "mkfifo"):
        expected.add(("fifo.py", "TFG002"))
    assert got == expected
    assert ("bom_crlf.py", 5, 5, "TFG101") in codes_in(proc.stdout)
    assert elapsed < 30


def test_syntax_error_among_good_files_keeps_their_findings(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"a.py": PRINT_STEP, "b.py": "x = (\n", "c.py": CLEAN, "d/e.py": PRINT_STEP},
    )
    result = invoke(["."], tmp_path)
    assert result.exit_code == 1
    assert codes_in(result.stdout) == [
        ("a.py", 5, 5, "TFG101"),
        ("b.py", 1, 5, "TFG001"),
        ("d/e.py", 5, 5, "TFG101"),
    ]
    assert "was never closed" in result.stdout


# -- syntax errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "line", "column", "words"),
    [
        ("def f(:\n    pass\n", 1, 7, "invalid syntax"),
        ("x = 1\nif x\n    pass\n", 2, 5, "expected ':'"),
        ("def f():\nreturn 1\n", 2, 1, "indented block"),
        ('x = "abc\n', 1, 5, "unterminated string"),
        ("x = 0777\n", 1, 5, "leading zeros"),
    ],
)
def test_syntax_error_position_and_message(source: str, line: int, column: int, words: str) -> None:
    [finding] = lint_source(source, "m.py")
    assert (finding.code, finding.line, finding.column) == ("TFG001", line, column)
    assert words in finding.message
    assert finding.name == "syntax-error"


@pytest.mark.parametrize(
    "source",
    [
        'print "hello"\n',
        'exec "x = 1"\n',
        "def f():\n    raise ValueError, 'bad'\n",
        "x = 0777L\n",
        "class A:\n    def f(self):\n\tpass\n        pass\n",
    ],
)
def test_python_2_files_are_tfg001(source: str) -> None:
    findings = lint_source(source, "legacy.py")
    assert [f.code for f in findings] == ["TFG001"]


def test_python_2_print_gets_pythons_hint() -> None:
    [finding] = lint_source('import tensorflow as tf\nprint "hello"\n', "legacy.py")
    assert finding.line == 2
    assert "Missing parentheses in call to 'print'" in finding.message


def test_syntax_newer_than_this_python_is_still_analysed() -> None:
    # PEP 701 f-strings (3.12) parse with libcst even where CPython's parser is older.
    source = PRINT_STEP.replace("print(x)", 'print(f"{"step"}: {x}")')
    assert found(source) == {(5, "TFG101")}


# -- decoding --------------------------------------------------------------------------------


def test_non_utf8_bytes_are_tfg002_at_their_line() -> None:
    data = b"import tensorflow as tf\n\nname = '\xff\xfe'\n"
    result = decode(data, "m.py")
    assert not isinstance(result, str)
    assert (result.code, result.line, result.column) == ("TFG002", 3, 9)
    assert "UTF-8" in result.message
    assert "0xff" in result.message


def test_non_utf8_on_the_first_line() -> None:
    result = decode(b"\xff\xfe import x\n", "m.py")
    assert not isinstance(result, str)
    assert result.code == "TFG002"
    assert "UTF-8" in result.message


def test_declared_encoding_is_honoured(tmp_path: Path) -> None:
    source = "# -*- coding: latin-1 -*-\n" + PRINT_STEP.replace("print(x)", "print('\xe9', x)")
    (tmp_path / "m.py").write_bytes(source.encode("latin-1"))
    assert [(f.line, f.code) for f in lint_file(tmp_path / "m.py")] == [(6, "TFG101")]


def test_unknown_declared_encoding_is_tfg002() -> None:
    result = decode(b"# coding: no-such-codec\nx = 1\n", "m.py")
    assert not isinstance(result, str)
    assert result.code == "TFG002"
    assert "no-such-codec" in result.message


@pytest.mark.parametrize(
    "data",
    [b"\x00", b"import tensorflow as tf\x00\n", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"],
)
def test_binary_and_nul_bytes_are_tfg002(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "m.py").write_bytes(data)
    [finding] = lint_file(tmp_path / "m.py")
    assert finding.code == "TFG002"
    assert finding.name == "unreadable-file"


def test_tfg002_can_be_ignored(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_bytes(b"\x00\x01")
    assert lint_file(tmp_path / "m.py", Config(ignore=("TFG002",))) == []
    result = invoke(["--ignore", "TFG002", "m.py"], tmp_path)
    assert result.exit_code == 0


@pytest.mark.parametrize(
    "data",
    [b"", b"\n", b"  \n\t\n", b"# a comment\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf# c\r\n", b"\x0c"],
    ids=["empty", "newline", "whitespace", "comment", "bom-only", "bom-comment", "form-feed"],
)
def test_files_without_code_are_clean(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "m.py").write_bytes(data)
    assert lint_file(tmp_path / "m.py") == []


# -- line endings, BOM, form feeds, tabs ----------------------------------------------------


@pytest.mark.parametrize(
    "encode",
    [
        lambda s: s.encode(),
        lambda s: s.replace("\n", "\r\n").encode(),
        lambda s: s.replace("\n", "\r").encode(),
        lambda s: b"\xef\xbb\xbf" + s.replace("\n", "\r\n").encode(),
    ],
    ids=["lf", "crlf", "cr", "bom-crlf"],
)
def test_line_endings_and_bom_keep_positions(tmp_path: Path, encode) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "m.py").write_bytes(encode(PRINT_STEP))
    assert [(f.line, f.column, f.code) for f in lint_file(tmp_path / "m.py")] == [(5, 5, "TFG101")]


def test_bom_crlf_show_source_caret(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_bytes(b"\xef\xbb\xbf" + PRINT_STEP.replace("\n", "\r\n").encode())
    out = invoke(["--show-source", "m.py"], tmp_path).stdout.splitlines()
    assert out[1] == "        print(x)"
    assert out[2] == "        ^"


def test_form_feeds_and_tabs(tmp_path: Path) -> None:
    source = "import tensorflow as tf\n\x0c\n\n@tf.function\ndef step(x):\n\tprint(x)\n\treturn x\n"
    assert [(f.line, f.column) for f in lint_source(source)] == [(6, 2)]
    (tmp_path / "m.py").write_text(source)
    out = invoke(["--show-source", "m.py"], tmp_path).stdout.splitlines()
    assert out[0].startswith("m.py:6:2: TFG101")
    assert out[1].strip() == "print(x)"
    assert out[1].index("p") == out[2].index("^")


def test_tabs_beside_spaces_that_python_accepts_are_analysed() -> None:
    # CPython counts a tab to the next multiple of eight columns: " \t" and "\t" open the
    # same block, which libcst's tokenizer rejects.  Valid Python is no syntax error.
    source = (
        "import tensorflow as tf\n\n\n@tf.function\ndef step(x):\n"
        "\tif x is None:\n \t\treturn x\n\tprint(x)\n\treturn x\n"
    ).replace("\n", "\r\n")  # (with CRLF line ends libcst parses it itself)
    compile(source, "m.py", "exec")
    found = [(f.line, f.code) for f in lint_source(source, "m.py")]
    assert found == [(8, "TFG101")]


def test_a_notebook_exported_as_a_script_is_analysed_as_the_notebook(tmp_path: Path) -> None:
    # Colab's "Download .py" keeps shell escapes, magics and automagics: IPython, not Python.
    source = (
        '"""Training.ipynb\n\nAutomatically generated by Colaboratory.\n"""\n\n'
        "!pip install -q tensorflow-datasets\npip install konlpy\n%matplotlib inline\n"
        "import tensorflow as tf\n\n\n@tf.function\ndef step(x):\n    print(x)\n"
        "    return x\n\n\nfiles = !ls data\n"
    )
    (tmp_path / "train.py").write_text(source)
    found = lint_source(source, "train.py")
    assert [(f.line, f.column, f.code) for f in found] == [(14, 5, "TFG101")]
    assert found[0].fix_safety is None  # the file itself does not parse: nothing to rewrite
    result = invoke(["--fix", "train.py"], tmp_path)
    assert (tmp_path / "train.py").read_text() == source
    assert "train.py:14:5: TFG101" in result.stdout
    # Python syntax errors beside the IPython lines are still reported, at their place.
    broken = "!pip install x\nimport tensorflow as tf\nprint 'hello'\n"
    assert [(f.line, f.code) for f in lint_source(broken, "m.py")] == [(1, "TFG001")]
    assert [(f.line, f.code) for f in lint_source(broken.replace("!", "# "), "m.py")] == [
        (3, "TFG001")
    ]
    # A line that only looks like IPython (`% (loss, step)` continuing a statement) is no
    # export's: the file stays a syntax error.
    wrapped = 'def describe(loss, step):\n    message = "%.3f %d"\n    % (loss, step)\n'
    assert [(f.line, f.code) for f in lint_source(wrapped, "m.py")] == [(3, "TFG001")]


# -- deep nesting and size -------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(deep_sources()))
def test_deeply_nested_code_is_a_finding_not_a_crash(name: str) -> None:
    start = time.monotonic()
    findings = lint_source(deep_sources()[name], name)
    assert [f.code for f in findings] == ["TFG001"]
    assert "nested" in findings[0].message
    assert time.monotonic() - start < 5


def test_moderately_nested_code_is_analysed() -> None:
    source = PRINT_STEP.replace("print(x)", "print(" + "[" * 40 + "x" + "]" * 40 + ")")
    assert found(source) == {(5, "TFG101")}
    chain = PRINT_STEP.replace("print(x)", "print(x" + " + x" * 150 + ")")
    assert found(chain) == {(5, "TFG101")}


def test_a_long_flat_file_is_fine() -> None:
    source = PRINT_STEP + "".join(f"v{i} = {i}\n" for i in range(800))
    assert found(source) == {(5, "TFG101")}


# -- the file system -------------------------------------------------------------------------


@needs_symlinks
def test_symlink_loop_given_explicitly_and_in_a_walk(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/a.py": PRINT_STEP})
    os.symlink("loop2.py", tmp_path / "pkg" / "loop1.py")
    os.symlink("loop1.py", tmp_path / "pkg" / "loop2.py")
    os.symlink("..", tmp_path / "pkg" / "up")  # directory loop
    os.symlink("selfloop", tmp_path / "selfloop")
    walked = invoke(["pkg"], tmp_path)
    assert walked.exit_code == 1
    assert [(f[0], f[3]) for f in codes_in(walked.stdout)] == [
        ("pkg/a.py", "TFG101"),
        ("pkg/loop1.py", "TFG002"),
        ("pkg/loop2.py", "TFG002"),
    ]
    assert "symbolic link loop" in walked.stdout
    explicit = invoke(["pkg/loop1.py", "selfloop"], tmp_path)
    assert explicit.exit_code == 1
    assert [(f[0], f[3]) for f in codes_in(explicit.stdout)] == [
        ("pkg/loop1.py", "TFG002"),
        ("selfloop", "TFG002"),
    ]


@needs_symlinks
def test_symlinked_directory_named_explicitly_is_walked_once(tmp_path: Path) -> None:
    write_tree(tmp_path, {"real/a.py": PRINT_STEP})
    os.symlink("real", tmp_path / "alias")
    os.symlink("..", tmp_path / "real" / "parent")
    result = invoke(["alias"], tmp_path)
    assert [f[0] for f in codes_in(result.stdout)] == ["alias/a.py"]


@needs_symlinks
def test_dangling_symlink(tmp_path: Path) -> None:
    os.symlink("gone.py", tmp_path / "m.py")
    [finding] = lint_file(tmp_path / "m.py")
    assert finding.code == "TFG002"
    assert "dangling symbolic link" in finding.message
    result = invoke(["m.py"], tmp_path)  # it exists as a link: not a usage error
    assert result.exit_code == 1


def test_file_that_vanished(tmp_path: Path) -> None:
    [finding] = lint_file(tmp_path / "gone.py")
    assert finding.code == "TFG002"
    assert "vanished" in finding.message


def test_directory_given_to_lint_file(tmp_path: Path) -> None:
    [finding] = lint_file(tmp_path)
    assert finding.code == "TFG002"
    assert "directory" in finding.message


def test_unreadable_file_is_tfg002(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Meaningful as root too: the read itself is made to fail.
    write_tree(tmp_path, {"a.py": PRINT_STEP, "secret.py": PRINT_STEP})
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "secret.py":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    result = invoke(["."], tmp_path)
    assert result.exit_code == 1
    assert codes_in(result.stdout) == [("a.py", 5, 5, "TFG101"), ("secret.py", 1, 1, "TFG002")]
    assert "Permission denied" in result.stdout


def test_unreadable_directory_is_reported_and_the_rest_linted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root ignores directory permissions, so the listing itself is made to fail.
    write_tree(tmp_path, {"a.py": PRINT_STEP, "locked/b.py": PRINT_STEP, "z.py": PRINT_STEP})
    real = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = invoke(["."], tmp_path)
    assert result.exit_code == 1
    assert codes_in(result.stdout) == [
        ("a.py", 5, 5, "TFG101"),
        ("locked", 1, 1, "TFG002"),
        ("z.py", 5, 5, "TFG101"),
    ]
    assert "cannot read directory: Permission denied" in result.stdout
    assert [f.code for f in lint_paths([tmp_path / "locked"])] == ["TFG002"]


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() == 0,
    reason="chmod does not restrict root (covered by the monkeypatched tests above)",
)
def test_chmod_000_directory_and_file(tmp_path: Path) -> None:  # pragma: no cover - non-root
    write_tree(tmp_path, {"a.py": PRINT_STEP, "locked/b.py": PRINT_STEP, "c.py": PRINT_STEP})
    (tmp_path / "locked").chmod(0)
    (tmp_path / "c.py").chmod(0)
    try:
        result = invoke(["."], tmp_path)
    finally:
        (tmp_path / "locked").chmod(0o755)
        (tmp_path / "c.py").chmod(0o644)
    assert result.exit_code == 1
    assert [(f[0], f[3]) for f in codes_in(result.stdout)] == [
        ("a.py", "TFG101"),
        ("c.py", "TFG002"),
        ("locked", "TFG002"),
    ]


def test_missing_path_is_exit_2_with_a_clear_message(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": CLEAN})
    proc = run_process(["a.py", "no/such/dir"], tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip() == "tflint-graph: error: path does not exist: no/such/dir"
    with pytest.raises(FileNotFoundError):
        list(lint_paths([tmp_path / "missing.py"]))


# -- lint_source never raises ---------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "\x00",
        "x = '\x00'",
        "\ud800",
        "\r",
        "\\",
        "\t\t",
        "if True:\n\tx = 1\n        y = 2\n",
        "\U0001f642 = 1",
        "\u2028x = 1\n",
        "\x85",
        '"""',
        "import tensorflow as tf\n@tf.function\ndef f(x):\n  print(x",
        "import tensorflow as tf\n\\\n",
        "lambda: (yield)",
        "return 1\n",
        "@tf.function\n",
        "import tensorflow as tf\n@tf.function\nasync def f(x):\n    print(x)\n",
        "import tensorflow as tf\ntf.function(lambda: print(1))\n",
        "import tensorflow as tf\nclass M(tf.keras.Model):\n    def train_step(self):\n",
    ],
)
def test_lint_source_never_raises(source: str) -> None:
    for finding in lint_source(source, "m.py"):
        assert finding.line >= 1
        assert finding.column >= 1
