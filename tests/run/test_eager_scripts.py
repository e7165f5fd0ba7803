"""A script's Keras classes that only the script calls, eagerly, are not traced (SPEC §1,
item 3: Keras traces `call` inside fit/predict or a tf.function): a research script that
calls its model in a plain GradientTape loop runs `call` as Python on every call.  Another
module of the run constructing the class, or the script handing Keras anything to trace,
brings the methods back."""

from __future__ import annotations

from pathlib import Path

from tests.cli_support import write_tree
from tests.helpers import dedent
from tflint_graph import Config, lint_paths

SCRIPT = dedent(
    """
    import argparse

    import numpy as np
    import tensorflow as tf


    class ODEFunc(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(4)
            self.nfe = 0

        def call(self, x):
            self.nfe += 1  # line 14
            return self.dense(x)

        @property
        def evaluations(self):
            return self.nfe


    def main():
        func = ODEFunc()
        optimizer = tf.keras.optimizers.Adam()
        ckpt = tf.train.Checkpoint(func=func)
        for _ in range(10):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(func(tf.ones([2, 4])))
            grads = tape.gradient(loss, func.trainable_variables)
            optimizer.apply_gradients(zip(grads, func.trainable_variables))
            print(func.evaluations)
        ckpt.save("ckpt")
        np.save("losses.npy", np.zeros(3))
    """
)


def _tfg106(tmp_path: Path, files: dict[str, str]) -> set[tuple[str, int]]:
    write_tree(tmp_path, files)
    return {
        (Path(f.path).name, f.line) for f in lint_paths([tmp_path], Config()) if f.code == "TFG106"
    }


MAIN = (
    '\n\nif __name__ == "__main__":\n'
    "    args = argparse.ArgumentParser().parse_args()\n"
    "    main()\n"
)


def test_a_script_calling_its_model_eagerly_only(tmp_path: Path) -> None:
    assert _tfg106(tmp_path, {"ode.py": SCRIPT + MAIN}) == set()


def test_a_script_that_parses_its_command_line_at_import(tmp_path: Path) -> None:
    parsed = SCRIPT + "\n\nargs = argparse.ArgumentParser().parse_args()\nmain()\n"
    assert _tfg106(tmp_path, {"ode.py": parsed}) == set()


def test_a_module_without_a_script_entry_stays_traced(tmp_path: Path) -> None:
    # A library module, also one whose guard only runs smoke tests of its classes: whoever
    # imports it may fit the model.
    smoke = SCRIPT + '\n\nif __name__ == "__main__":\n    main()\n'
    for source in (SCRIPT, smoke):
        assert _tfg106(tmp_path, {"ode.py": source}) == {("ode.py", 14)}


def test_another_module_using_the_class_brings_it_back(tmp_path: Path) -> None:
    files = {
        "ode.py": SCRIPT + MAIN,
        "train.py": dedent(
            """
            from ode import ODEFunc

            model = ODEFunc()
            model.compile(optimizer="adam", loss="mse")
            """
        ),
    }
    assert _tfg106(tmp_path, files) == {("ode.py", 14)}


def test_a_script_that_fits_or_wraps_in_tf_function_stays_traced(tmp_path: Path) -> None:
    fits = SCRIPT.replace('ckpt.save("ckpt")', 'func.compile("adam", "mse")')
    made = "    func = ODEFunc()\n"
    wrapped = SCRIPT.replace(made, made + "    f = tf.function(func)\n")
    for source in (fits, wrapped):
        files = {"ode.py": source + MAIN}
        assert _tfg106(tmp_path, files) == {("ode.py", 14)}
