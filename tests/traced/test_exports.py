"""Export analysis (``traced.exports``): the ``input_signature`` skeleton guessed from a
function's body, and the functions a module hands to ``tf.saved_model.save`` or an
``ExportArchive``."""

from __future__ import annotations

import libcst as cst
import pytest

from tests.helpers import dedent
from tflint_graph import Config
from tflint_graph.core.facts import ProjectView
from tflint_graph.model.context import ModuleContext
from tflint_graph.traced import find_traced
from tflint_graph.traced.exports import export_references, signature_skeleton, tf_alias


def _skeleton(source: str, name: str = "f") -> str:
    source = dedent(source)
    ctx = ModuleContext("m.py", source, cst.parse_module(source), Config())

    class _Find(cst.CSTVisitor):
        found: cst.FunctionDef | None = None

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if node.name.value == name:
                _Find.found = node

    ctx.module.visit(_Find())
    assert _Find.found is not None
    return signature_skeleton(ctx, _Find.found, tf_alias(ctx))


def _spec(shape: str, dtype: str, name: str, tf: str = "tf") -> str:
    return f'{tf}.TensorSpec(shape={shape}, dtype={tf}.{dtype}, name="{name}")'


@pytest.mark.parametrize(
    ("body", "shape"),
    [
        ("return x[:, 0]", "[None, None]"),
        ("return x[0]", "[None]"),
        ("return x[..., 0]", "[None]"),
        ("return x[tf.newaxis, :, 1]", "[None, None]"),
        ("return x[None]", "None"),
        ("return tf.zeros([x.shape[2]])", "[None, None, None]"),
        ("return tf.shape(x)[-2]", "[None, None]"),
        ("return tf.reduce_sum(x)", "None"),
        ("x = tf.reshape(x, [-1])\n    return x[:, 0]", "None"),  # rebound: no evidence
    ],
)
def test_rank_from_indexing(body: str, shape: str) -> None:
    source = f"import tensorflow as tf\n\ndef f(x):\n    {body}\n"
    assert _skeleton(source) == f"input_signature=[{_spec(shape, 'float32', 'x')}]"


@pytest.mark.parametrize(
    ("body", "dtype"),
    [
        ("return tf.strings.split(x)", "string"),
        ("return tf.strings.length(x[0])", "string"),
        ("return tf.io.decode_png(x, channels=3)", "string"),
        ("return tf.io.parse_example(x, {})", "string"),
        ("return tf.strings.as_string(x)", "float32"),  # takes numbers
        ("return tf.gather(table, x)", "int32"),
        ("return tf.nn.embedding_lookup(table, ids=x)", "int32"),
        ("return tf.one_hot(x, 10)", "int32"),
        ("return tf.gather(x, idx)", "float32"),  # x is the params, not the indices
        ("return tf.cast(x, tf.int32)", "float32"),  # a cast says nothing about x
    ],
)
def test_dtype_from_calls(body: str, dtype: str) -> None:
    source = f"import tensorflow as tf\n\ntable = idx = None\n\ndef f(x):\n    {body}\n"
    shape = "[None]" if "x[0]" in body else "None"
    assert _skeleton(source) == f"input_signature=[{_spec(shape, dtype, 'x')}]"


def test_method_parameters_skip_self_and_defaults() -> None:
    source = """
        import tensorflow as tf2

        class M(tf2.Module):
            def f(self, images, labels, training=False, *, scale=1.0):
                return images[:, :, 0], labels
    """
    specs = [_spec("[None, None, None]", "float32", "images", "tf2")]
    specs.append(_spec("None", "float32", "labels", "tf2"))
    assert _skeleton(source) == f"input_signature=[{', '.join(specs)}]"


def test_staticmethod_keeps_its_first_parameter() -> None:
    source = """
        import tensorflow as tf

        class M:
            @staticmethod
            def f(x):
                return x
    """
    assert _skeleton(source) == f"input_signature=[{_spec('None', 'float32', 'x')}]"


def test_export_references_name_the_imported_functions_exported() -> None:
    source = dedent(
        """
        import tensorflow as tf
        from pkg import model as mod
        from pkg.model import Servable, classify, embed

        from .local import helper

        servable = Servable()
        concrete = mod.scores.get_concrete_function()
        tf.saved_model.save(servable, "/tmp/a", signatures={"a": embed, "b": classify})
        tf.saved_model.save(servable, "/tmp/b", signatures=concrete)
        tf.saved_model.save(servable, "/tmp/c", signatures=tf.constant)
        archive = tf.keras.export.ExportArchive()
        archive.add_endpoint("h", helper)
        """
    )
    view = ProjectView(module="pkg.export")
    ctx = ModuleContext("pkg/export.py", source, cst.parse_module(source), Config(), view)
    ctx.traced = find_traced(ctx)
    assert export_references(ctx) == {
        "pkg.model.embed",
        "pkg.model.classify",
        "pkg.model.scores",
        "pkg.local.helper",
    }
