"""``# noqa`` with flake8's semantics (SPEC §3), in the library and through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cli_support import PRINT_STEP, THREE_CODES, codes_in, invoke, write_tree
from tests.helpers import dedent, found
from tflint_graph.cli import main
from tflint_graph.core.noqa import is_suppressed, noqa_codes, source_lines

HEAD = "import random\nimport tensorflow as tf\n\n@tf.function\ndef step(x):\n"


def body(*lines: str) -> str:
    """A traced function whose body starts on line 6."""
    return HEAD + "".join(f"    {ln}\n" for ln in lines) + "    return x\n"


@pytest.mark.parametrize(
    ("line", "codes"),
    [
        ("x = 1", None),
        ("x = 1  # noqa", frozenset()),
        ("x = 1  # NOQA", frozenset()),
        ("x = 1  # NoQa", frozenset()),
        ("x = 1  #noqa", frozenset()),
        ("x = 1  # noqa: TFG101", frozenset({"TFG101"})),
        ("x = 1  # noqa:TFG101", frozenset({"TFG101"})),
        ("x = 1  #noqa:TFG101,TFG103", frozenset({"TFG101", "TFG103"})),
        ("x = 1  # noqa: TFG101, TFG103", frozenset({"TFG101", "TFG103"})),
        ("x = 1  # noqa: TFG101 TFG103", frozenset({"TFG101", "TFG103"})),
        ("x = 1  # NOQA: tfg101", frozenset({"TFG101"})),
        ("x = 1  # noqa: TFG1", frozenset({"TFG1"})),
        ("x = 1  # noqa: TFG101 because tracing is intended", frozenset({"TFG101"})),
        ("x = 1  # noqa:E501", frozenset({"E501"})),
        # flake8: anything but `:CODES` right after `noqa` makes it a blanket noqa.
        ("x = 1  # noqa : TFG101", frozenset()),
        ("x = 1  # noqa - intended", frozenset()),
        ("x = 1  # type: ignore  # noqa: TFG103", frozenset({"TFG103"})),
    ],
)
def test_noqa_codes(line: str, codes: frozenset[str] | None) -> None:
    assert noqa_codes(line) == codes


@pytest.mark.parametrize(
    ("comment", "suppressed"),
    [
        ("", False),
        ("  # noqa", True),
        ("  # NOQA", True),
        ("  #noqa", True),
        ("  # noqa: TFG101", True),
        ("  # noqa:TFG101", True),
        ("  #noqa:TFG103,TFG101", True),
        ("  # noqa: TFG1", True),  # a prefix, as in flake8
        ("  # noqa: TFG10", True),
        ("  # noqa: TFG103", False),  # another code does not suppress
        ("  # noqa: TFG1011", False),  # longer than the code: not a prefix of it
        ("  # noqa: TFG2", False),
        ("  # noqa: E501", False),
    ],
)
def test_noqa_on_the_finding_line(comment: str, suppressed: bool) -> None:
    source = body(f"print(x){comment}")
    assert ((6, "TFG101") not in found(source)) is suppressed


def test_noqa_only_silences_its_own_line() -> None:
    source = body("print(x)  # noqa", "print(x)", "# noqa", "print(x)")
    assert found(source) == {(7, "TFG101"), (9, "TFG101")}


def test_noqa_with_one_code_keeps_the_others_on_the_line() -> None:
    source = body("print(random.random())  # noqa: TFG101")
    assert found(source) == {(6, "TFG103")}
    source = body("print(random.random())  # noqa: TFG103,TFG101")
    assert found(source) == set()


def test_noqa_inside_a_string_literal_counts_as_in_flake8() -> None:
    # flake8 searches the text of the line, so a noqa comment spelled inside a string on the
    # finding's line suppresses it. We do the same, so that the CLI and the flake8 plugin agree.
    assert found(body('print("# noqa")')) == set()
    assert found(body('print("# noqa: TFG103")')) == {(6, "TFG101")}


def test_multi_line_string_and_backslash_continuation_are_one_unit() -> None:
    source = dedent(
        '''
        import tensorflow as tf

        @tf.function
        def step(x):
            print("""several
            lines""")  # noqa: TFG101
            print(x, \\
                  x)  # noqa
            return x
        '''
    )
    assert found(source) == set()


def test_noqa_after_a_multi_line_bracketed_call_does_not_reach_its_first_line() -> None:
    # As in flake8, lines joined only by brackets are separate physical lines.
    source = dedent(
        """
        import tensorflow as tf

        @tf.function
        def step(x):
            print(
                x,
            )  # noqa: TFG101
            return x
        """
    )
    assert found(source) == {(5, "TFG101")}


def test_noqa_with_crlf_line_endings() -> None:
    source = body("print(x)  # noqa: TFG101", "print(x)").replace("\n", "\r\n")
    assert found(source) == {(7, "TFG101")}


def test_noqa_below_a_form_feed() -> None:
    source = "import tensorflow as tf\n\x0c\n@tf.function\ndef step(x):\n"
    source += "    print(x)  # noqa: TFG101\n    return x\n"
    assert found(source) == set()


def test_source_lines_counts_like_python() -> None:
    assert source_lines("a\r\nb\x0cc\rd\ne\x1cf\u2028g\n") == ["a", "b\x0cc", "d", "e\x1cf\u2028g"]
    assert source_lines("") == []
    assert source_lines("x") == ["x"]


def test_is_suppressed_out_of_range() -> None:
    lines = ["x  # noqa"]
    assert is_suppressed(lines, 1, "TFG101")
    assert not is_suppressed(lines, 0, "TFG101")
    assert not is_suppressed(lines, 2, "TFG101")


def test_noqa_through_the_cli(tmp_path: Path) -> None:
    suppressed = THREE_CODES.replace("print(x)", "print(x)  # noqa: TFG101").replace(
        "random.random()", "random.random()  # noqa"
    )
    write_tree(tmp_path, {"m.py": suppressed})
    result = invoke(["m.py"], tmp_path)
    assert codes_in(result.stdout) == [("m.py", 10, 9, "TFG104")]
    write_tree(tmp_path, {"m.py": suppressed.replace("time.time()", "time.time()  # NOQA")})
    result = invoke(["m.py"], tmp_path)
    assert result.exit_code == 0
    assert result.stdout.strip() == "All checks passed!"


# -- the file-level directive, as ruff has one -------------------------------------------

# TFG101 at 8:5, TFG103 at 9:13, TFG104 at 10:9, below a first line for the directive.
DIRECTIVE_FILE = "LINE\n" + THREE_CODES


@pytest.mark.parametrize(
    ("directive", "left"),
    [
        ("# tflint-graph: noqa", set()),
        ("#tflint-graph:noqa", set()),
        ("# TFLINT-GRAPH: NOQA", set()),
        ("# tflint-graph: noqa: TFG101", {(10, "TFG103"), (11, "TFG104")}),
        ("# tflint-graph: noqa: TFG101,TFG103", {(11, "TFG104")}),
        ("# tflint-graph: noqa: TFG101, TFG104", {(10, "TFG103")}),
        ("# tflint-graph: noqa: TFG10", set()),  # a prefix, as in line noqa
        ("# tflint-graph: noqa: TFG2", {(9, "TFG101"), (10, "TFG103"), (11, "TFG104")}),
        # Not the directive: on a code line, misspelled, or codes that do not parse.
        ("x = 1  # tflint-graph: noqa", {(9, "TFG101"), (10, "TFG103"), (11, "TFG104")}),
        ("# tflint_graph: noqa", {(9, "TFG101"), (10, "TFG103"), (11, "TFG104")}),
        ("# tflint-graph: noqa: oops", {(9, "TFG101"), (10, "TFG103"), (11, "TFG104")}),
    ],
)
def test_file_level_noqa_in_the_library(directive: str, left: set[tuple[int, str]]) -> None:
    assert found(DIRECTIVE_FILE.replace("LINE", directive)) == left


def test_file_level_noqa_anywhere_in_the_file_but_not_inside_a_string() -> None:
    assert found(THREE_CODES + "# tflint-graph: noqa\n") == set()
    in_string = 'DOC = """\n# tflint-graph: noqa\n"""\n' + THREE_CODES
    assert {code for _, code in found(in_string)} == {"TFG101", "TFG103", "TFG104"}


def test_file_level_noqa_through_the_cli(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "all.py": DIRECTIVE_FILE.replace("LINE", "# tflint-graph: noqa"),
            "some.py": DIRECTIVE_FILE.replace("LINE", "# tflint-graph: noqa: TFG101,TFG104"),
        },
    )
    result = invoke(["."], tmp_path)
    assert codes_in(result.stdout) == [("some.py", 10, 13, "TFG103")]
    assert result.exit_code == 1


# -- --add-noqa ---------------------------------------------------------------------------


def test_add_noqa_silences_every_finding_and_keeps_the_program(tmp_path: Path) -> None:
    source = dedent(
        '''
        import random
        import time
        import tensorflow as tf


        @tf.function
        def step(x):
            print(x)  # show it
            print(random.random(), time.time())  # noqa: TFG104
            s = """text
            more""" + str(random.random())
            t = random.random() + \\
                1
            return x
        '''
    )
    write_tree(tmp_path, {"m.py": source.replace("\n", "\r\n")})
    before = invoke(["m.py"], tmp_path)
    assert len(codes_in(before.stdout)) == 5
    result = invoke(["--add-noqa", "m.py"], tmp_path)
    assert result.exit_code == 0
    assert result.stderr.strip() == "Added 5 noqa directives."
    assert (tmp_path / "m.py").read_bytes() == source.replace(
        "print(x)  # show it", "print(x)  # show it  # noqa: TFG101"
    ).replace("# noqa: TFG104", "# noqa: TFG104, TFG101, TFG103").replace(
        'more""" + str(random.random())', 'more""" + str(random.random())  # noqa: TFG103'
    ).replace("        1\n", "        1  # noqa: TFG103\n").replace("\n", "\r\n").encode()
    after = invoke(["m.py"], tmp_path)
    assert (after.exit_code, after.stdout.strip()) == (0, "All checks passed!")
    # Nothing left to add: the file is not touched again.
    again = invoke(["--add-noqa", "m.py"], tmp_path)
    assert again.stderr.strip() == "Added 0 noqa directives."


def test_add_noqa_never_touches_a_file_it_cannot_parse_back(tmp_path: Path) -> None:
    broken = PRINT_STEP + "y = (\n"
    # A `#` inside a string is no comment: the directive goes after the string, never in it.
    hashed = PRINT_STEP.replace("print(x)", 'print("# see", x)')
    write_tree(tmp_path, {"broken.py": broken, "hashed.py": hashed})
    result = invoke(["--add-noqa", "."], tmp_path)
    assert result.exit_code == 0
    assert (tmp_path / "broken.py").read_text() == broken
    assert (tmp_path / "hashed.py").read_text() == hashed.replace(
        'print("# see", x)', 'print("# see", x)  # noqa: TFG101'
    )


def test_add_noqa_on_standard_input_prints_the_annotated_source(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--add-noqa", "-"], input=PRINT_STEP)
    assert result.exit_code == 0
    assert result.stdout == PRINT_STEP.replace("print(x)", "print(x)  # noqa: TFG101")
    assert "Added 1 noqa directive." in result.stderr


def test_add_noqa_in_a_notebook_annotates_the_cells_and_keeps_the_json(tmp_path: Path) -> None:
    import json

    from tests.interfaces.test_notebooks import NOTEBOOK

    write_tree(tmp_path, {"nb.ipynb": NOTEBOOK})
    result = invoke(["--add-noqa", "nb.ipynb"], tmp_path)
    assert result.exit_code == 0
    assert result.stderr.strip() == "Added 3 noqa directives."
    before, after = json.loads(NOTEBOOK), json.loads((tmp_path / "nb.ipynb").read_text())
    step = "".join(after["cells"][2]["source"])
    assert "print(x)  # noqa: TFG101\n" in step
    assert "noise = random.random()  # noqa: TFG103\n" in step
    assert "    step(i)  # noqa: TFG303" in "".join(after["cells"][3]["source"])
    assert after["cells"][:2] == before["cells"][:2]  # unchanged cells stay as they were
    clean = invoke(["nb.ipynb"], tmp_path)
    assert (clean.exit_code, clean.stdout.strip()) == (0, "All checks passed!")
    # Standard input named as a notebook: the annotated notebook on stdout.
    piped = CliRunner().invoke(main, ["--add-noqa", "--stdin-filename", "x.ipynb"], input=NOTEBOOK)
    assert piped.exit_code == 0
    assert json.loads(piped.stdout) == after
