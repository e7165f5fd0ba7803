"""TFG301 (serving-without-input-signature): which tf.functions count as serving endpoints,
and what its finding proposes."""

from __future__ import annotations

import pytest

from tests.helpers import dedent
from tflint_graph import Config, lint_source

SERVING = """
import tensorflow as tf

@tf.function
def predict_fn(x):
    return x * 2.0

@tf.function
def serve(x):
    return x * 2.0
"""


def test_serving_name_patterns_are_configurable() -> None:
    default = {(f.line, f.code) for f in lint_source(SERVING, "m.py")}
    assert default == {(9, "TFG301")}
    config = Config(serving_name_patterns=("predict_*",))
    custom = {(f.line, f.code) for f in lint_source(SERVING, "m.py", config)}
    assert custom == {(5, "TFG301")}


def test_message_and_fix_carry_the_skeleton() -> None:
    (finding,) = [f for f in lint_source(SERVING, "m.py") if f.code == "TFG301"]
    skeleton = 'input_signature=[tf.TensorSpec(shape=None, dtype=tf.float32, name="x")]'
    assert finding.fix == skeleton
    assert skeleton in finding.message
    assert finding.message.startswith("serve(): named like a serving endpoint")
    assert "\n" not in finding.message


EXPORTED_THROUGH_A_PARAMETER = """
    import tensorflow as tf

    class Serving(tf.keras.Model):
        @tf.function
        def serve(self, input_ids, input_mask=None):
            return {"outputs": self(input_ids)}

        @classmethod
        def export(cls, model, export_dir):
            signatures = {
                "serving_default": model.SERVE.get_concrete_function(
                    input_ids=tf.TensorSpec([None, None], tf.int32)
                ),
            }
            tf.saved_model.save(model, export_dir, signatures=signatures)
"""


@pytest.mark.parametrize(("method", "reported"), [("serve", False), ("other", True)])
def test_specs_given_by_keyword_through_an_instance_parameter(method: str, reported: bool) -> None:
    # `model` is a parameter: the module's method of that name gets its specs there.
    source = dedent(EXPORTED_THROUGH_A_PARAMETER).replace("SERVE", method)
    assert bool([f for f in lint_source(source) if f.code == "TFG301"]) is reported
