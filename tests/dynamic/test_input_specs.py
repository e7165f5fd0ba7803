"""The input-spec language of dynamic mode (SPEC §4): the ``[tool.tflint-graph.dynamic]
examples`` grammar, ``input_signature`` source, and the config table, loaded through the same
path the CLI uses."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.cli_support import PRINT_STEP, invoke, write_tree
from tests.helpers import dedent
from tflint_graph.core import examples as inputs_module
from tflint_graph.core.config import Config, ConfigError, DynamicConfig, load_file, parse_table
from tflint_graph.core.examples import (
    DTYPES,
    Example,
    PyValue,
    TensorSpecLite,
    concrete_shape,
    from_signature_source,
    parse_arg,
    parse_example,
    validate_target,
)

# -- specs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("float32[2,3]", TensorSpecLite("float32", (2, 3))),
        ("int32[]", TensorSpecLite("int32", ())),
        ("string[4]", TensorSpecLite("string", (4,))),
        ("bool[2]", TensorSpecLite("bool", (2,))),
        ("float32[None,28]", TensorSpecLite("float32", (None, 28))),
        (" bfloat16 [ None , 0 ] ", TensorSpecLite("bfloat16", (None, 0))),
        ("complex128[1]", TensorSpecLite("complex128", (1,))),
        ("py:3", PyValue(3)),
        ("py:0.5", PyValue(0.5)),
        ('py:"train"', PyValue("train")),
        ("py:True", PyValue(True)),
        ("py:None", PyValue(None)),
        ("py: (1, 2)", PyValue((1, 2))),
        ('py:{"a": [1, 2]}', PyValue({"a": [1, 2]})),
        ("py:-1", PyValue(-1)),
    ],
)
def test_one_spec(text: str, expected: object) -> None:
    assert parse_arg(text) == expected


def test_every_tensorflow_dtype_name_is_accepted() -> None:
    assert {
        "float16",
        "float32",
        "float64",
        "bfloat16",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "bool",
        "string",
        "complex64",
        "complex128",
    } == DTYPES
    for dtype in DTYPES:
        assert parse_arg(f"{dtype}[2]") == TensorSpecLite(dtype, (2,))


def test_a_whole_example_with_keywords_and_literals_holding_commas() -> None:
    example = parse_example(
        "pkg.mod:Model.call",
        'float32[None,28], py:"a,b", py:[1, (2, 3)], training=py:True, mask = bool[2, 5],',
    )
    assert example == Example(
        "pkg.mod:Model.call",
        (TensorSpecLite("float32", (None, 28)), PyValue("a,b"), PyValue([1, (2, 3)])),
        {"training": PyValue(True), "mask": TensorSpecLite("bool", (2, 5))},
    )
    assert (example.module, example.qualname) == ("pkg.mod", "Model.call")
    assert str(example) == (
        "float32[None,28], py:'a,b', py:[1, (2, 3)], training=py:True, mask=bool[2,5]"
    )
    # The text form parses back to the same example.
    assert parse_example(example.target, str(example)) == example


def test_an_equals_sign_inside_a_literal_is_not_a_keyword() -> None:
    example = parse_example("m:f", 'py:"a=b", k=py:"c=d"')
    assert example.args == (PyValue("a=b"),)
    assert example.kwargs == {"k": PyValue("c=d")}


def test_empty_value_means_no_arguments() -> None:
    assert parse_example("m:f", "") == Example("m:f")
    assert parse_example("m:f", "   ") == Example("m:f")


def test_concrete_shape_fills_unknown_dims() -> None:
    assert concrete_shape(TensorSpecLite("float32", (None, 28))) == (2, 28)
    assert concrete_shape(TensorSpecLite("float32", (None, None)), unknown=5) == (5, 5)
    assert concrete_shape(TensorSpecLite("int32", ())) == ()
    # An unknown rank (only from input_signature source) becomes a small vector.
    assert concrete_shape(TensorSpecLite("float32", None), unknown=3) == (3,)


@pytest.mark.parametrize("key", ["pkg.mod:fn", "m:f", "a.b.c:Class.method", " m:f "])
def test_valid_targets(key: str) -> None:
    assert validate_target(key) == key.strip()


@pytest.mark.parametrize(
    ("key", "fragment"),
    [
        ("pkg.mod.fn", "no ':'"),
        (":fn", "dotted module name"),
        ("pkg..mod:fn", "dotted module name"),
        ("pkg.mod:", "function name"),
        ("pkg.mod:A.b.c", "function name"),
        ("pkg.mod:1fn", "function name"),
        ("pkg.class:fn", "dotted module name"),
    ],
)
def test_bad_targets(key: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment) as info:
        validate_target(key)
    assert repr(key) in str(info.value)


@pytest.mark.parametrize(
    ("value", "fragments"),
    [
        ("flot32[2]", ["argument 1 (column 1)", "unknown dtype 'flot32'", "float32"]),
        ("int32[], float32", ["argument 2 (column 10)", "DTYPE[dims]"]),
        ("int32[], train", ["argument 2", "py: prefix"]),
        ("float32[2,3", ["unclosed bracket"]),
        ("float32[2]]", ["unbalanced ']' at column 11"]),
        ("float32[-1]", ["argument 1", "'-1'", "non-negative integer or None"]),
        ("float32[2.5]", ["'2.5'"]),
        ("float32[2,,3]", ["empty dimension"]),
        ("float32[x]", ["'x'"]),
        ("float32[2](3)", ["closing ']'"]),
        ("py:foo", ["argument 1", "not a Python literal", 'py:"foo"']),
        ("py:__import__('os')", ["not a Python literal"]),
        ("py:", ["needs a Python literal"]),
        ('py:"abc', ["unterminated string"]),
        ("x=float32[2], int32[]", ["argument 2 (column 15)", "positional argument after keyword"]),
        ("a=int32[], a=int32[]", ["argument 2", "'a' given twice"]),
        ("1a=int32[]", ["'1a' is not a valid keyword"]),
        ("int32[], , int32[]", ["argument 2", "empty argument"]),
        ("float32[100000,100000]", ["above the limit"]),
        ("float32[" + ",".join(["1"] * 40) + "]", ["rank 40"]),
    ],
)
def test_bad_values_name_the_key_and_the_position(value: str, fragments: list[str]) -> None:
    with pytest.raises(ValueError) as info:
        parse_example("pkg.mod:fn", value)
    message = str(info.value)
    assert "'pkg.mod:fn'" in message
    for fragment in fragments:
        assert fragment in message, message


def test_literals_are_never_evaluated(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_eval(*_: object) -> None:
        raise AssertionError("eval called")

    monkeypatch.setattr("builtins.eval", no_eval)
    monkeypatch.setattr("builtins.exec", no_eval)
    assert parse_arg("py:(1, 'x')") == PyValue((1, "x"))
    with pytest.raises(ValueError):
        parse_arg("py:print('x')")


def test_the_module_does_not_import_tensorflow() -> None:
    source = Path(inputs_module.__file__).read_text()
    names = {
        alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    modules = {
        node.module
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert not any(n.startswith(("tensorflow", "keras")) for n in names | modules)
    assert "eval(" not in source.replace("literal_eval(", "")


# -- input_signature source -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[tf.TensorSpec(shape=[None, 28], dtype=tf.float32),"
            ' tf.TensorSpec([None], tf.int32, name="x")]',
            [
                TensorSpecLite("float32", (None, 28)),
                TensorSpecLite("int32", (None,), "x"),
            ],
        ),
        (
            "input_signature=(tensorflow.TensorSpec(tf.TensorShape([2, 3]), tensorflow.string),)",
            [TensorSpecLite("string", (2, 3))],
        ),
        ("[TensorSpec([])]", [TensorSpecLite("float32", ())]),
        ("[tf.TensorSpec(shape=None, dtype=tf.dtypes.int64)]", [TensorSpecLite("int64", None)]),
        ("[tf.TensorSpec(tf.TensorShape(None), tf.bool)]", [TensorSpecLite("bool", None)]),
        ("[tf2.TensorSpec((4,), 'uint8')]", [TensorSpecLite("uint8", (4,))]),
        ("[tf.TensorSpec(dtype=tf.double, shape=[1])]", [TensorSpecLite("float64", (1,))]),
        ("[tf.TensorSpec([None], tf.string, None)]", [TensorSpecLite("string", (None,))]),
        ("[]", []),
        (
            dedent(
                """
                [
                    tf.TensorSpec(shape=[None, 224, 224, 3], dtype=tf.float32, name="images"),
                ]
                """
            ),
            [TensorSpecLite("float32", (None, 224, 224, 3), "images")],
        ),
    ],
)
def test_signature_source(text: str, expected: list[TensorSpecLite]) -> None:
    assert from_signature_source(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "[tf.TensorSpec(shape=[n, 28])]",  # a variable dim
        "[tf.TensorSpec(shape=SHAPE)]",
        "[tf.TensorSpec([2], dtype=DTYPE)]",
        "[tf.TensorSpec([2], tf.float8)]",  # not a dtype we know
        "[tf.TensorSpec([-1])]",
        "[tf.TensorSpec([2], name=prefix + 'x')]",
        "[tf.RaggedTensorSpec([None, None], tf.int32)]",
        "[{'x': tf.TensorSpec([2])}]",  # a nested structure
        "[tf.TensorSpec(*shape)]",
        "[tf.TensorSpec([2], tf.float32, 'x', extra)]",
        "[tf.TensorSpec(shape=[2], shape=[3])]",
        "[tf.TensorSpec()]",
        "SIGNATURE",
        "make_signature()",
        "[tf.TensorSpec([2]",  # a syntax error
        "input_signature=[tf.TensorSpec([2])], jit_compile=True",
        "",
        "[" * 500 + "]" * 500,
    ],
)
def test_signature_source_that_is_not_literal_is_none(text: str) -> None:
    assert from_signature_source(text) is None


# -- config ---------------------------------------------------------------------------


def pyproject(body: str) -> str:
    return "[project]\nname = 'demo'\n\n[tool.tflint-graph]\n" + dedent(body)


def test_dynamic_table_is_parsed_at_load_time(tmp_path: Path) -> None:
    body = dedent(
        """
        select = ["TFG101"]

        [tool.tflint-graph.dynamic]
        unknown-dim = 3

        [tool.tflint-graph.dynamic.examples]
        "pkg.mod:step" = "float32[None,28], int32[]"
        "pkg.mod:Model.call" = "float32[2], training=py:False"
        "pkg.other:noargs" = ""
        """
    )
    write_tree(tmp_path, {"pyproject.toml": pyproject(body), "m.py": PRINT_STEP})
    config = load_file(tmp_path / "pyproject.toml")
    assert config.dynamic.unknown_dim == 3
    assert config.dynamic.examples == {
        "pkg.mod:step": Example(
            "pkg.mod:step", (TensorSpecLite("float32", (None, 28)), TensorSpecLite("int32", ()))
        ),
        "pkg.mod:Model.call": Example(
            "pkg.mod:Model.call", (TensorSpecLite("float32", (2,)),), {"training": PyValue(False)}
        ),
        "pkg.other:noargs": Example("pkg.other:noargs"),
    }
    # The CLI loads the same file without complaint.
    assert invoke(["m.py"], tmp_path).exit_code == 1


def test_defaults_without_a_dynamic_table() -> None:
    assert Config().dynamic == DynamicConfig()
    assert Config().dynamic.unknown_dim == 2
    assert dict(Config().dynamic.examples) == {}
    assert parse_table({"dynamic": {}}).dynamic == DynamicConfig()


def test_inline_examples_table(tmp_path: Path) -> None:
    body = '[tool.tflint-graph.dynamic]\nexamples = { "m:f" = "py:3" }\n'
    write_tree(tmp_path, {"pyproject.toml": pyproject(body)})
    config = load_file(tmp_path / "pyproject.toml")
    assert config.dynamic.examples == {"m:f": Example("m:f", (PyValue(3),))}


@pytest.mark.parametrize(
    ("body", "fragments"),
    [
        ("unknown-dims = 2", ["unknown key `dynamic.unknown-dims`", "examples, unknown-dim"]),
        ("unknown-dim = 0", ["`dynamic.unknown-dim`", "1 to 1024"]),
        ("unknown-dim = -2", ["`dynamic.unknown-dim`"]),
        ("unknown-dim = true", ["`dynamic.unknown-dim`"]),
        ('unknown-dim = "2"', ["`dynamic.unknown-dim`"]),
        ("unknown-dim = 100000", ["`dynamic.unknown-dim`"]),
        ('examples = ["m:f"]', ["`dynamic.examples` must be a table"]),
        ('examples = { "m:f" = 3 }', ["`dynamic.examples`", "'m:f'", "must be a string"]),
        ('examples = { "m:f" = ["float32[2]"] }', ["`dynamic.examples`", "must be a string"]),
        ('examples = { "m.f" = "float32[2]" }', ["`dynamic.examples`", "'m.f'", "no ':'"]),
        (
            'examples = { "pkg.mod:fn" = "float32[2], flot32[3]" }',
            ["`dynamic.examples`", "'pkg.mod:fn'", "argument 2 (column 13)", "'flot32'"],
        ),
        ('examples = { "m:f" = "tf.zeros([2])" }', ["`dynamic.examples`", "'m:f'", "argument 1"]),
        (
            'examples = { "m:f" = "float32[2]", " m:f" = "int32[]" }',
            ["`dynamic.examples`", "'m:f' is given twice"],
        ),
    ],
)
def test_bad_dynamic_config_is_exit_2_with_one_clear_line(
    tmp_path: Path, body: str, fragments: list[str]
) -> None:
    text = pyproject("") + "\n[tool.tflint-graph.dynamic]\n" + body + "\n"
    write_tree(tmp_path, {"pyproject.toml": text, "m.py": PRINT_STEP})
    with pytest.raises(ConfigError) as info:
        load_file(tmp_path / "pyproject.toml")
    assert "pyproject.toml" in str(info.value)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)
    result = invoke(["m.py"], tmp_path)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "`dynamic" in lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_bad_dynamic_config_through_explicit_config_file(tmp_path: Path) -> None:
    text = pyproject("") + '\n[tool.tflint-graph.dynamic]\nexamples = { "m:f" = "int32[" }\n'
    write_tree(tmp_path, {"conf/pyproject.toml": text, "m.py": PRINT_STEP})
    result = invoke(["--config", "conf/pyproject.toml", "m.py"], tmp_path)
    assert result.exit_code == 2
    assert "unclosed bracket" in result.stderr
