"""Jupyter notebooks (SPEC §3): code cells in order are one module, IPython syntax skipped,
findings name their cell in every output format, ``noqa`` per line, ``--fix``/``--diff``
rewrite only the changed cells."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli_support import invoke, write_tree
from tests.helpers import DATA, REPO, dedent, notebook
from tflint_graph import Config, lint_file, lint_notebook, lint_paths

IMPORTS = "import random\nimport tensorflow as tf\n"
# Cell 3 (after a markdown cell) uses `tf` and `random` from cell 1.
STEP = dedent(
    """
    @tf.function
    def step(x):
        print(x)
        noise = random.random()
        return x + noise
    """
)
# A loop calling step() with a Python int: TFG303, whose message names the loop's line.
LOOP = "for i in range(3):\n    step(i)\n"
NOTEBOOK = notebook(IMPORTS, ("markdown", "# Training\n"), STEP, LOOP)


def where(findings: list) -> list[tuple[int | None, int, int, str]]:
    return [(f.cell, f.line, f.column, f.code) for f in findings]


# -- the cells are one module -----------------------------------------------------------


def test_names_of_earlier_cells_are_visible_and_positions_are_the_cells_own() -> None:
    findings = lint_notebook(NOTEBOOK, "train.ipynb")
    assert where(findings) == [
        (3, 3, 5, "TFG101"),
        (3, 4, 13, "TFG103"),
        (4, 2, 5, "TFG303"),
    ]
    assert all(f.path == "train.ipynb" for f in findings)


def test_a_cell_that_does_not_parse_hides_none_of_the_others() -> None:
    # An exercise's blank (`model = # YOUR CODE HERE`): TFG001 in its cell, and the other
    # cells are still analysed, as one module without it.
    blank = "x = 1\nmodel = # YOUR CODE HERE\n"
    findings = lint_notebook(
        notebook(IMPORTS, ("markdown", "# Training\n"), blank, STEP, LOOP), "ex.ipynb"
    )
    assert where(findings) == [
        (3, 2, 9, "TFG001"),
        (4, 3, 5, "TFG101"),
        (4, 4, 13, "TFG103"),
        (5, 2, 5, "TFG303"),
    ]
    # Two blanks: the first one's TFG001 only, as a .py file gives its first error.
    twice = notebook(IMPORTS, blank, STEP, "y = # YOUR CODE HERE\n")
    assert where(lint_notebook(twice, "ex.ipynb")) == [
        (2, 2, 9, "TFG001"),
        (3, 3, 5, "TFG101"),
        (3, 4, 13, "TFG103"),
    ]
    # A notebook whose every code cell fails is one TFG001, as before.
    only = notebook(("markdown", "# Exercise\n"), blank)
    assert where(lint_notebook(only, "only.ipynb")) == [(2, 2, 9, "TFG001")]


def test_findings_equal_those_of_the_py_file_made_of_its_code_cells(tmp_path: Path) -> None:
    """The same code as a .py file gives the same codes and messages; positions map to
    cells by the cells' lengths (line numbers in messages too)."""
    code_cells = [IMPORTS, STEP, LOOP]
    numbers = [1, 3, 4]  # the markdown cell is cell 2
    starts = [1 + sum(c.count("\n") for c in code_cells[:k]) for k in range(len(code_cells))]

    def cell_of(line: int) -> tuple[int, int]:
        k = max(i for i, start in enumerate(starts) if start <= line)
        return numbers[k], line - starts[k] + 1

    def named(message: str) -> str:
        return re.sub(
            r"\bline (\d+)",
            lambda m: "cell {}, line {}".format(*cell_of(int(m.group(1)))),
            message,
        )

    write_tree(tmp_path, {"train.py": "".join(code_cells), "train.ipynb": NOTEBOOK})
    as_py = [
        (*cell_of(f.line), f.column, f.code, named(f.message), f.end_column)
        for f in lint_paths([tmp_path / "train.py"])
    ]
    as_notebook = [
        (f.cell, f.line, f.column, f.code, f.message, f.end_column)
        for f in lint_paths([tmp_path / "train.ipynb"])
    ]
    assert as_notebook == as_py
    assert len(as_py) == 3
    assert "the loop at cell 4, line 1" in as_notebook[-1][4]


def test_a_notebook_calls_into_a_module_next_to_it(tmp_path: Path) -> None:
    helpers = "def normalize(x):\n    print(x)\n    return x\n"
    cell = "import tensorflow as tf\nfrom helpers import normalize\n\n@tf.function\n"
    cell += "def step(x):\n    return normalize(x)\n"
    write_tree(tmp_path, {"helpers.py": helpers, "explore.ipynb": notebook(cell)})
    findings = list(lint_paths([tmp_path]))
    assert [(Path(f.path).name, f.line, f.code) for f in findings] == [("helpers.py", 2, "TFG101")]
    assert findings[0].chain == ("step()", "normalize()")


# -- IPython syntax ---------------------------------------------------------------------

TRACED = "@tf.function\ndef step(x):\n    print(x)\n    return x\n"


@pytest.mark.parametrize(
    "ipython",
    [
        "%matplotlib inline\n",
        "!pip install tensorflow\n",
        "files = !ls\n",
        "t = %timeit -o sum(range(3))\n",
        "tf.function?\n",
        "?tf.function\n",
        "tf.function??\n",
        "%load_ext autoreload\n%autoreload 2\n",
        "pip install -q tensorflow-datasets\n",
        "ls ./data/train/\n",
        "cd data\n",
        "!wget https://example.com/a.tar.gz \\\n  -P ./data\n",
        "for i in range(2):\n    !echo $i\n    %time sum([i])\n",
    ],
)
def test_magics_and_shell_escapes_are_skipped(ipython: str) -> None:
    """A cell of IPython syntax before the traced function: no TFG001, and the finding
    keeps its place in the cell."""
    cell = "import tensorflow as tf\n" + ipython + TRACED
    line = cell.splitlines().index("    print(x)") + 1
    assert where(lint_notebook(notebook(cell))) == [(1, line, 5, "TFG101")]


def test_cell_magics_with_a_python_body_are_linted_others_are_not() -> None:
    source = notebook(
        "import tensorflow as tf\n",
        "%%time\n" + TRACED,
        "%%bash\necho 'print(x) for {'\n",
        "%%writefile helper.py\n" + TRACED,
        "\n%%capture\n" + TRACED,
    )
    assert where(lint_notebook(source)) == [(2, 4, 5, "TFG101"), (5, 5, 5, "TFG101")]


def test_lines_inside_brackets_and_strings_are_python_not_magics() -> None:
    cell = dedent(
        '''
        import tensorflow as tf

        @tf.function
        def step(x):
            """Doc.
        %d is not a magic here
            """
            sizes = [1
                     , 2]
            print(x, sizes)
            return x
        '''
    )
    # Skipped as a `,autoquote` escape, the `, 2]` line would be a syntax error.
    assert where(lint_notebook(notebook(cell))) == [(1, 10, 5, "TFG101")]


def test_a_cell_indented_as_a_whole_is_dedented_as_ipython_does() -> None:
    cell = "  import tensorflow as tf\n  @tf.function\n  def step(x):\n      print(x)\n"
    assert where(lint_notebook(notebook(cell))) == [(1, 4, 7, "TFG101")]


# -- notebook formats -------------------------------------------------------------------


def test_source_as_one_string_reads_like_a_list_of_lines() -> None:
    doc = json.loads(NOTEBOOK)
    for cell in doc["cells"]:
        cell["source"] = "".join(cell["source"])
    assert where(lint_notebook(json.dumps(doc))) == where(lint_notebook(NOTEBOOK))


def test_nbformat_3_worksheets_are_read() -> None:
    cells = [
        {"cell_type": "code", "input": IMPORTS, "language": "python", "outputs": []},
        {"cell_type": "heading", "level": 1, "source": "Training"},
        {"cell_type": "code", "input": STEP.splitlines(keepends=True), "outputs": []},
    ]
    doc = {"metadata": {}, "nbformat": 3, "nbformat_minor": 0, "worksheets": [{"cells": cells}]}
    assert where(lint_notebook(json.dumps(doc))) == [(3, 3, 5, "TFG101"), (3, 4, 13, "TFG103")]


def test_a_notebook_of_another_language_is_not_linted() -> None:
    r_kernel = {"kernelspec": {"language": "R", "name": "ir"}, "language_info": {"name": "R"}}
    assert lint_notebook(notebook(IMPORTS, STEP, metadata=r_kernel)) == []


@pytest.mark.parametrize(
    ("kernel", "linted"),
    [
        ({"name": "swift", "display_name": "Swift"}, False),  # Swift for TensorFlow
        ({"name": "julia-1.9", "display_name": "Julia 1.9"}, False),
        ({"name": "tf2-gpu", "display_name": "TF 2 (GPU)"}, True),  # a Python environment
        ({"name": "python3", "display_name": "Python 3"}, True),
    ],
)
def test_a_kernel_named_after_another_language_is_not_linted(
    kernel: dict[str, str], linted: bool
) -> None:
    found = lint_notebook(notebook(IMPORTS, STEP, metadata={"kernelspec": kernel}))
    assert bool(found) is linted


# -- noqa -------------------------------------------------------------------------------


def test_noqa_works_per_line() -> None:
    silenced = STEP.replace("print(x)", "print(x)  # noqa: TFG101")
    assert where(lint_notebook(notebook(IMPORTS, silenced))) == [(2, 4, 13, "TFG103")]
    blanket = STEP.replace("random.random()", "random.random()  # noqa")
    assert where(lint_notebook(notebook(IMPORTS, blanket))) == [(2, 3, 5, "TFG101")]
    assert len(lint_notebook(notebook(IMPORTS, silenced), noqa=False)) == 2


# -- the command line and its output formats --------------------------------------------


def test_text_output_names_the_cell(tmp_path: Path) -> None:
    write_tree(tmp_path, {"nb.ipynb": NOTEBOOK})
    result = invoke(["nb.ipynb", "--no-cache", "--show-source"], tmp_path)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].startswith(
        "nb.ipynb:cell 3:3:5: TFG101 [*] warning: print() runs only while tracing"
    )
    assert lines[1:3] == ["        print(x)", "        ^"]
    assert "nb.ipynb:cell 4:2:5: TFG303" in result.output


def test_json_output_has_the_cell_and_matches_its_schema(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    write_tree(tmp_path, {"nb.ipynb": NOTEBOOK, "plain.py": IMPORTS + STEP})
    result = invoke([".", "--no-cache", "--output-format", "json"], tmp_path)
    doc = json.loads(result.output)
    schema = json.loads((REPO / "tflint_graph" / "schemas" / "findings-v1.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    located = [(f["path"], f["cell"], f["line"], f["column"]) for f in doc["findings"]]
    assert located[:2] == [("nb.ipynb", 3, 3, 5), ("nb.ipynb", 3, 4, 13)]
    assert ("plain.py", None, 5, 5) in located


def _file_text_at(path: Path, line: int, column: int) -> str:
    return path.read_text(encoding="utf-8").splitlines()[line - 1][column - 1 :]


def test_sarif_points_into_the_notebook_file_and_names_the_cell(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    write_tree(tmp_path, {"nb.ipynb": NOTEBOOK})
    result = invoke(["nb.ipynb", "--no-cache", "--output-format", "sarif"], tmp_path)
    log = json.loads(result.output)
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(log)
    first = log["runs"][0]["results"][0]
    location = first["locations"][0]
    region = location["physicalLocation"]["region"]
    # The region is where the code sits in the file's JSON text: a code scanner shows it.
    assert _file_text_at(tmp_path / "nb.ipynb", region["startLine"], region["startColumn"]) == (
        'print(x)\\n",'
    )
    assert region["endColumn"] - region["startColumn"] == len("print(x)")
    assert location["properties"]["cell"] == 3
    assert location["properties"]["cellRegion"]["startLine"] == 3
    assert location["logicalLocations"] == [{"name": "cell 3", "kind": "notebookCell"}]


def test_github_annotations_point_into_the_notebook_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"nb.ipynb": NOTEBOOK})
    result = invoke(["nb.ipynb", "--no-cache", "--output-format", "github"], tmp_path)
    first = result.output.splitlines()[0]
    line = int(re.search(r",line=(\d+)", first).group(1))  # type: ignore[union-attr]
    col = int(re.search(r",col=(\d+)", first).group(1))  # type: ignore[union-attr]
    assert _file_text_at(tmp_path / "nb.ipynb", line, col).startswith("print(x)")
    assert "title=TFG101 print-in-traced (cell 3%2C line 3%2C column 5)" in first


def test_directories_include_notebooks_and_honour_excludes(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "a.ipynb": NOTEBOOK,
            "skipped/b.ipynb": NOTEBOOK,
            ".ipynb_checkpoints/a-checkpoint.ipynb": NOTEBOOK,
            "notes.txt": NOTEBOOK,
        },
    )
    found: list[Path] = []
    config = Config(exclude=("skipped",))
    paths = {f.path for f in lint_paths([tmp_path], config, files_found=found)}
    assert paths == {str(tmp_path / "a.ipynb")}
    assert found == [tmp_path / "a.ipynb"]


def test_lint_file_reads_a_notebook(tmp_path: Path) -> None:
    write_tree(tmp_path, {"nb.ipynb": NOTEBOOK})
    assert where(lint_file(tmp_path / "nb.ipynb")) == where(lint_notebook(NOTEBOOK))


def test_a_notebook_is_cached_by_its_bytes(tmp_path: Path) -> None:
    write_tree(tmp_path, {"nb.ipynb": NOTEBOOK})
    cold = invoke(["nb.ipynb"], tmp_path).output
    assert (tmp_path / ".tflint-graph-cache").is_dir()
    assert invoke(["nb.ipynb"], tmp_path).output == cold
    (tmp_path / "nb.ipynb").write_text(notebook(IMPORTS, STEP.replace("print(x)", "x")))
    assert (
        invoke(["nb.ipynb"], tmp_path)
        .output.splitlines()[0]
        .startswith("nb.ipynb:cell 2:4:13: TFG103")
    )


# -- --fix and --diff -------------------------------------------------------------------


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


@pytest.mark.parametrize("indent", [1, 2, None])
def test_fix_rewrites_only_the_changed_cells_source(tmp_path: Path, indent: int | None) -> None:
    magic = "%time step(tf.constant(1.0))\n"
    source = notebook(IMPORTS, ("markdown", "# Training\n"), STEP, magic, indent=indent)
    write_tree(tmp_path, {"nb.ipynb": source})
    result = invoke(["nb.ipynb", "--no-cache", "--fix"], tmp_path)
    assert "Fixed 1 finding." in result.output
    after = (tmp_path / "nb.ipynb").read_text(encoding="utf-8")
    assert after == source.replace('"    print(x)\\n"', '"    tf.print(x)\\n"')
    assert _cells(tmp_path / "nb.ipynb")[3]["source"] == [magic]
    assert invoke(["nb.ipynb", "--no-cache", "--fix"], tmp_path).output.count("Fixed 0") == 1
    assert (tmp_path / "nb.ipynb").read_text(encoding="utf-8") == after


def test_fix_changes_the_cells_as_it_changes_the_same_py_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"train.py": IMPORTS + STEP + LOOP, "train.ipynb": NOTEBOOK})
    invoke(["train.py", "train.ipynb", "--no-cache", "--fix"], tmp_path)
    cells = [c for c in _cells(tmp_path / "train.ipynb") if c["cell_type"] == "code"]
    fixed_cells = "".join("".join(c["source"]) for c in cells)
    assert fixed_cells == (tmp_path / "train.py").read_text(encoding="utf-8")
    assert "tf.print(x)" in fixed_cells


def test_fix_keeps_a_cells_own_indentation_and_string_source(tmp_path: Path) -> None:
    doc = json.loads(notebook("  import tensorflow as tf\n  @tf.function\n  def f(x):\n"))
    doc["cells"][0]["source"] = "".join(doc["cells"][0]["source"]) + "      print(x)"
    write_tree(tmp_path, {"nb.ipynb": json.dumps(doc, indent=1)})
    invoke(["nb.ipynb", "--no-cache", "--fix"], tmp_path)
    assert _cells(tmp_path / "nb.ipynb")[0]["source"] == (
        "  import tensorflow as tf\n  @tf.function\n  def f(x):\n      tf.print(x)"
    )


def test_diff_shows_each_changed_cell_and_writes_nothing(tmp_path: Path) -> None:
    write_tree(tmp_path, {"nb.ipynb": NOTEBOOK})
    result = invoke(["nb.ipynb", "--no-cache", "--diff"], tmp_path)
    assert result.exit_code == 1
    assert result.output.startswith("--- a/nb.ipynb:cell 3\n+++ b/nb.ipynb:cell 3\n@@ ")
    assert "-    print(x)\n+    tf.print(x)\n" in result.output
    assert (tmp_path / "nb.ipynb").read_text(encoding="utf-8") == NOTEBOOK


def test_pre_commit_hook_is_given_python_files_and_notebooks() -> None:
    """pre-commit passes a file to a hook when its identify tags meet the hook's types."""
    identify = pytest.importorskip("identify.identify")
    yaml = pytest.importorskip("yaml")
    [hook] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert "types" not in hook  # it would narrow types_or to files that are both
    wanted = set(hook["types_or"])
    for name in ("train.py", "explore.ipynb"):
        assert wanted & identify.tags_from_filename(name), name
    assert not wanted & identify.tags_from_filename("data.json")


def test_dynamic_mode_leaves_notebook_findings_unverified() -> None:
    """--dynamic imports modules; a notebook is none, and nothing of it is run."""
    from tflint_graph.dynamic.session import confirm_findings

    findings = lint_notebook(NOTEBOOK, "nb.ipynb")
    confirmed, summary = confirm_findings(findings, Config())
    assert [f.dynamic.status for f in confirmed if f.dynamic] == ["unverified"] * len(findings)
    assert all("a notebook is not imported" in f.dynamic.evidence for f in confirmed if f.dynamic)
    assert summary.counts["unverified"] == len(findings) == 3
