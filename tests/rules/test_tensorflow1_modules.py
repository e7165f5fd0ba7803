"""A module that imports ``tensorflow.contrib`` unconditionally is TensorFlow 1 code: it
cannot be imported under TensorFlow 2, so nothing in it is traced (SPEC §1 is about TF2)."""

from __future__ import annotations

from tests.helpers import dedent, found


def test_a_tensorflow_1_module_has_no_traced_code() -> None:
    body = dedent(
        """
        import tensorflow as tf
        IMPORT

        def augment(image):
            print("augmenting")
            return image

        ds = tf.data.Dataset.from_tensor_slices([1.0]).map(augment)
        """
    )
    tf1 = body.replace("IMPORT", "from tensorflow.contrib import image as contrib_image")
    guarded = body.replace(
        "IMPORT", "try:\n    from tensorflow.contrib import image\nexcept ImportError:\n    pass"
    )
    assert found(tf1) == set()  # cannot be imported under TensorFlow 2
    assert {code for _, code in found(guarded)} == {"TFG101"}
