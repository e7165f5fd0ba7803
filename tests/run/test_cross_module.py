"""Callees and tf.functions across the modules of one run (SPEC §1.6)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli_support import write_tree
from tests.helpers import dedent
from tflint_graph import Config, lint_paths
from tflint_graph.core.facts import ProjectView
from tflint_graph.source.modules import ModuleIndex, package_root

STEP = dedent(
    """
    import tensorflow as tf
    import helpers

    @tf.function
    def step(x):
        return helpers.scale(x)
    """
)
HELPERS = dedent(
    """
    def scale(x):
        print("scaling")
        return x * 2
    """
)


def _run(paths: list[Path], root: Path) -> list[tuple[str, int, str, tuple[str, ...]]]:
    return [
        (Path(f.path).relative_to(root).as_posix(), f.line, f.code, f.chain)
        for f in lint_paths(paths, Config())
    ]


def test_script_imports_sibling_module(tmp_path: Path) -> None:
    write_tree(tmp_path, {"train.py": STEP, "helpers.py": HELPERS})
    assert _run([tmp_path], tmp_path) == [("helpers.py", 2, "TFG101", ("step()", "scale()"))]


def test_each_script_directory_resolves_its_own_sibling(tmp_path: Path) -> None:
    # Two script folders each with a helpers.py: Python imports the one next to the script.
    clean = "def scale(x):\n    return x * 2\n"
    write_tree(
        tmp_path,
        {
            "a/train.py": STEP,
            "a/helpers.py": clean,
            "b/other.py": "x = 1\n",
            "b/helpers.py": HELPERS,
        },
    )
    assert _run([tmp_path], tmp_path) == []


def test_module_outside_the_run_is_followed_but_not_reported(tmp_path: Path) -> None:
    # train -> helpers (not linted) -> deep (linted): only deep.py's finding is shown.
    write_tree(
        tmp_path,
        {
            "train.py": STEP,
            "helpers.py": "import deep\n\ndef scale(x):\n    print(x)\n    return deep.f(x)\n",
            "deep.py": "import time\n\ndef f(x):\n    return x + time.time()\n",
        },
    )
    found = _run([tmp_path / "train.py", tmp_path / "deep.py"], tmp_path)
    assert found == [("deep.py", 4, "TFG104", ("step()", "scale()", "f()"))]


def test_import_cycles_terminate(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "a.py": "import tensorflow as tf\nimport b\n\n@tf.function\ndef step(x):\n"
            "    return b.g(x)\n\ndef f(x):\n    print(x)\n    return b.g(x)\n",
            "b.py": "import a\n\ndef g(x):\n    return a.f(x)\n",
        },
    )
    assert _run([tmp_path], tmp_path) == [("a.py", 9, "TFG101", ("step()", "g()", "f()"))]


def test_package_reexports_and_relative_imports(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "from .core import scale\n",
            "pkg/core.py": HELPERS,
            "pkg/sub/__init__.py": "",
            "pkg/sub/train.py": "import tensorflow as tf\nfrom .. import scale\n\n"
            "@tf.function\ndef step(x):\n    return scale(x)\n",
        },
    )
    assert _run([tmp_path], tmp_path) == [("pkg/core.py", 2, "TFG101", ("step()", "scale()"))]


def test_dataset_callback_imported_from_another_module(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pipe.py": "import tensorflow as tf\nfrom aug import augment\n\n"
            "def make(ds):\n    return ds.map(augment)\n",
            "aug.py": "import random\n\ndef augment(x):\n    return x * random.random()\n",
        },
    )
    [finding] = lint_paths([tmp_path], Config())
    assert (finding.code, finding.line) == ("TFG103", 4)
    assert finding.context == "Dataset.map callback in " + str(tmp_path / "pipe.py")


def test_escape_hatch_across_modules_is_not_traced(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "train.py": "import tensorflow as tf\nimport helpers\n\n@tf.function\ndef step(x):\n"
            "    return tf.py_function(helpers.scale, [x], tf.float32)\n",
            "helpers.py": HELPERS,
        },
    )
    assert _run([tmp_path], tmp_path) == []


def test_broken_neighbour_does_not_lose_findings(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "train.py": STEP + "\n@tf.function\ndef other(x):\n    print(x)\n    return x\n",
            "helpers.py": "def scale(x:\n",
        },
    )
    found = {(p, line, code) for p, line, code, _ in _run([tmp_path], tmp_path)}
    assert ("train.py", 10, "TFG101") in found
    assert any(p == "helpers.py" and code == "TFG001" for p, _, code in found)


@pytest.mark.parametrize("order", [0, 1])
def test_output_does_not_depend_on_argument_order(tmp_path: Path, order: int) -> None:
    write_tree(tmp_path, {"train.py": STEP, "helpers.py": HELPERS, "other.py": STEP})
    paths = [tmp_path / "train.py", tmp_path / "helpers.py", tmp_path / "other.py"]
    if order:
        paths.reverse()
    assert _run(paths, tmp_path) == [("helpers.py", 2, "TFG101", ("step()", "scale()"))]


def test_symlinked_duplicate_is_reported_under_each_name(tmp_path: Path) -> None:
    write_tree(tmp_path, {"train.py": STEP, "helpers.py": HELPERS})
    (tmp_path / "alias.py").symlink_to(tmp_path / "helpers.py")
    paths = [tmp_path / "alias.py", tmp_path / "helpers.py", tmp_path / "train.py"]
    assert [(p, code) for p, _, code, _ in _run(paths, tmp_path)] == [
        ("alias.py", "TFG101"),
        ("helpers.py", "TFG101"),
    ]


def test_package_root_and_module_names(tmp_path: Path) -> None:
    write_tree(
        tmp_path, {"src/pkg/__init__.py": "", "src/pkg/sub/__init__.py": "", "src/pkg/sub/m.py": ""}
    )
    assert package_root(tmp_path / "src/pkg/sub/m.py") == (tmp_path / "src", "pkg.sub.m")
    assert package_root(tmp_path / "src/pkg/__init__.py") == (tmp_path / "src", "pkg")
    index = ModuleIndex([tmp_path / "src/pkg/sub/m.py"])
    assert index.split("pkg.sub.m.f.g") == ("pkg.sub.m", "f.g")
    assert index.split("numpy.mean") is None


@pytest.mark.parametrize(
    "module, package, name, absolute",
    [
        ("pkg.train", False, ".helpers.f", "pkg.helpers.f"),
        ("pkg.sub.train", False, "..helpers.f", "pkg.helpers.f"),
        ("pkg", True, ".core.f", "pkg.core.f"),
        ("pkg.sub", True, "..f", "pkg.f"),
        ("pkg.train", False, "numpy.mean", "numpy.mean"),
    ],
)
def test_relative_names(module: str, package: bool, name: str, absolute: str) -> None:
    assert ProjectView(module=module, is_package=package).absolute(name) == absolute


TRAINER = dedent(
    """
    import tensorflow as tf

    class Trainer:
        @tf.function
        def step(self, x):
            return x * 2
    """
)


@pytest.mark.parametrize(
    "caller",
    [
        # No TensorFlow in the caller: its calls are all the run knows of it.
        "from model import Trainer\n\nt = Trainer()\nfor i in range(10):\n    t.step(i)\n",
        # The import inside a function, a local name bound once to an instance.
        "def main():\n    from model import Trainer\n    t = Trainer()\n"
        "    for i in range(10):\n        t.step(i)\n",
        # TensorFlow, but nothing traced or exported of its own.
        "import tensorflow as tf\nfrom model import Trainer\n\nt: Trainer = Trainer()\n"
        "for i in range(10):\n    t.step(i)\n",
    ],
)
def test_method_of_an_imported_class_is_judged_at_the_call_site(
    tmp_path: Path, caller: str
) -> None:
    # TFG303 needs to know that Trainer.step is a tf.function; a module that never
    # mentions tf.function learns it from the run only if its calls reach the run.
    write_tree(tmp_path, {"model.py": TRAINER, "run.py": caller})
    assert [(p, code) for p, _, code, _ in _run([tmp_path], tmp_path)] == [("run.py", "TFG303")]


def test_plain_function_exported_elsewhere_is_reported_at_its_def(tmp_path: Path) -> None:
    # embeddings.py names nothing traceable: only the exporting module makes it a signature.
    write_tree(
        tmp_path,
        {
            "embeddings.py": "import tensorflow as tf\n\ndef embed(x):\n    return tf.add(x, 1)\n",
            "export.py": dedent(
                """
                import tensorflow as tf
                from embeddings import embed

                m = tf.Module()
                tf.saved_model.save(m, "/tmp/m", signatures={"embed": embed})
                """
            ),
        },
    )
    assert [(p, line, code) for p, line, code, _ in _run([tmp_path], tmp_path)] == [
        ("embeddings.py", 3, "TFG301")
    ]


def test_canonical_paths_match_realpath(tmp_path: Path) -> None:
    from tflint_graph.source.modules import real_path as _real

    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "m.py").write_text("x = 1\n")
    (tmp_path / "linked").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "real" / "alias.py").symlink_to(tmp_path / "real" / "sub" / "m.py")
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing.py")
    for text in (
        "real/sub/m.py",
        "linked/sub/m.py",
        "linked/sub/../sub/m.py",
        "linked/../real/alias.py",
        "real/alias.py",
        "loop.py",
        "dangling.py",
        "real/sub/.",
        "real/sub/..",
    ):
        path = tmp_path / text
        assert _real(path) == Path(os.path.realpath(path)), text


def test_a_package_made_between_runs_is_seen(tmp_path: Path) -> None:
    from tflint_graph.run.module import analyse_file
    from tflint_graph.run.parallel import AnalysisPool
    from tflint_graph.run.project import Project

    write_tree(tmp_path, {"pkg/mod.py": "x = 1\n"})
    files = [tmp_path / "pkg" / "mod.py"]
    resolved = Path(os.path.realpath(files[0]))
    pool = AnalysisPool(analyse_file, Config())
    assert Project(files, Config(), pool).index.module_of(resolved) == "mod"
    (tmp_path / "pkg" / "__init__.py").write_text("")
    assert Project(files, Config(), pool).index.module_of(resolved) == "pkg.mod"


GUARD_HELPER = dedent(
    """
    try:
        import tensorflow as tf
    except ImportError:
        tf = None


    def in_tf_function():
        if tf is None:
            return False
        return not tf.executing_eagerly()
    """
)
GUARD_BASE = dedent(
    """
    import keras

    from pkg.utils import in_tf_function


    class Preprocessing(keras.layers.Layer):
        def _use_tf(self):
            if in_tf_function():
                return True
            if self.allow_python:
                return False
            return True
    """
)
GUARD_LAYER = dedent(
    """
    import random

    import tensorflow as tf

    from pkg.base import Preprocessing
    from pkg.utils import in_tf_function


    class Masker(Preprocessing):
        def call(self, x):
            if self._use_tf():
                return self._call_tf(x)
            return self._call_python(x)

        def _call_tf(self, x):
            print("tf path")
            return tf.identity(x)

        def _call_python(self, x):
            return x if random.random() < 0.5 else None


    @tf.function
    def step(x):
        if not in_tf_function():
            print(x.numpy())
        return x
    """
)


def test_guard_helpers_of_other_modules_decide_what_is_traced(tmp_path: Path) -> None:
    # `in_tf_function()` in one module, a base class method returning it in another, the
    # layer in a third: the Python path is never traced, the TensorFlow path is.
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/utils.py": GUARD_HELPER,
            "pkg/base.py": GUARD_BASE,
            "pkg/layer.py": GUARD_LAYER,
        },
    )
    assert [(path, code) for path, _, code, _ in _run([tmp_path], tmp_path)] == [
        ("pkg/layer.py", "TFG101")
    ]


def test_tensorflow_re_exported_by_a_project_module_is_tensorflow(tmp_path: Path) -> None:
    # `from pkg.utils import tf`, where pkg/utils.py imports TensorFlow optionally: its
    # tf.function, tf.py_function and control flow are TensorFlow's.
    layer = dedent(
        """
        import keras

        from pkg.utils import tf


        class Layer(keras.layers.Layer):
            def call(self, inputs):
                def to_python(token):
                    return token.numpy()

                return tf.map_fn(lambda x: tf.py_function(to_python, [x], "bool"), inputs)


        @tf.function
        def step(x):
            print("step")
            return x
        """
    )
    utils = "try:\n    import tensorflow as tf\nexcept ImportError:\n    tf = None\n"
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": utils, "pkg/layer.py": layer})
    assert [(path, line, code) for path, line, code, _ in _run([tmp_path], tmp_path)] == [
        ("pkg/layer.py", 16, "TFG101")
    ]


def test_tensorflow_from_an_import_helper_is_tensorflow(tmp_path: Path) -> None:
    # `tf = try_import_tensorflow()` where the helper returns the imported module or None.
    utils = dedent(
        """
        def try_import_tensorflow():
            try:
                import tensorflow as _tf
            except ImportError:
                return None
            return _tf


        tf = try_import_tensorflow()
        """
    )
    layer = dedent(
        """
        import warnings

        from pkg.utils import tf


        @tf.function
        def check(audio):
            def warn():
                warnings.warn("audio too long")
                return audio

            return tf.cond(tf.shape(audio)[0] > 100, warn, lambda: audio)
        """
    )
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": utils, "pkg/layer.py": layer})
    assert [(path, line, code) for path, line, code, _ in _run([tmp_path], tmp_path)] == [
        ("pkg/layer.py", 9, "TFG107")
    ]


TRAIN_STEP = dedent(
    """
    import tensorflow as tf

    @tf.function
    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    """
)


@pytest.mark.parametrize(
    ("spelling", "call"),
    [
        ("from steps import train_step", "train_step"),
        ("from steps import train_step as step", "step"),
        ("import steps", "steps.train_step"),
    ],
)
def test_an_imported_tf_function_given_a_second_optimizer(
    tmp_path: Path, spelling: str, call: str
) -> None:
    # The second Adam creates its slot variables while the tf.function retraces: ValueError.
    write_tree(
        tmp_path,
        {
            "steps.py": TRAIN_STEP,
            "finetune.py": dedent(
                f"""
                import keras
                {spelling}

                def finetune(model, source, target):
                    pre = keras.optimizers.Adam(1e-3)
                    for x, y in source:
                        {call}(model, pre, x, y)
                    fine = keras.optimizers.Adam(1e-4)
                    for x, y in target:
                        {call}(model, fine, x, y)
                    again = keras.optimizers.SGD(0.1)
                    for x, y in target:
                        {call}(model, optimizer=again, x=x, y=y)
                """
            ),
        },
    )
    found = [(path, line, code) for path, line, code, _ in _run([tmp_path], tmp_path)]
    # Not the plain SGD: it has no slot variables to create.
    assert found == [("finetune.py", 10, "TFG208")]


def test_an_imported_tf_function_given_the_same_optimizer_each_time(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "steps.py": TRAIN_STEP,
            "train.py": dedent(
                """
                import keras
                from steps import train_step

                def fit(model, source, target):
                    opt = keras.optimizers.Adam(1e-3)
                    for x, y in source:
                        train_step(model, opt, x, y)
                    for x, y in target:
                        train_step(model, opt, x, y)
                """
            ),
        },
    )
    assert _run([tmp_path], tmp_path) == []


def test_an_imported_tf_function_given_one_optimizer_per_branch(tmp_path: Path) -> None:
    # The two calls sit in the two branches of one `if`: no run makes both.
    write_tree(
        tmp_path,
        {
            "steps.py": TRAIN_STEP,
            "train.py": dedent(
                """
                import keras
                from steps import train_step

                def fit(model, data, use_adam):
                    x, y = next(iter(data))
                    if use_adam:
                        train_step(model, keras.optimizers.Adam(), x, y)
                    else:
                        train_step(model, keras.optimizers.SGD(momentum=0.9), x, y)
                """
            ),
        },
    )
    assert _run([tmp_path], tmp_path) == []


METRICS = dedent(
    """
    import numpy as np

    def recall_at(labels, scores, k=3):
        order = np.argsort(-np.asarray(scores))[:k]
        return float(np.asarray(labels)[order].sum())
    """
)


RANKER = """
import keras
import tensorflow as tf
from metrics import recall_at

class Ranker(keras.Model):
    def test_step(self, data):
        x, y = data
        labels = tf.cast(y, tf.float32)
        scores = tf.squeeze(self(x), -1)
        {extra}return {{"recall": recall_at(labels, scores)}}
"""


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        # The step passes tensors to both parameters: NumPy on them raises while tracing.
        ("", [("metrics.py", 4, "TFG204"), ("metrics.py", 5, "TFG204")]),
        # Another traced call passes Python lists: the parameters are not known tensors.
        ("recall_at([1, 0, 1], [0.2, 0.9, 0.4])\n        ", []),
    ],
)
def test_a_helper_of_another_module_takes_what_every_traced_call_passes(
    tmp_path: Path, extra: str, expected: list[tuple[str, int, str]]
) -> None:
    write_tree(tmp_path, {"metrics.py": METRICS, "model.py": RANKER.format(extra=extra)})
    found = [(path, line, code) for path, line, code, _ in _run([tmp_path], tmp_path)]
    assert found == expected


def test_a_staticmethod_of_another_module_given_a_python_value(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "ops.py": dedent(
                """
                import numpy as np

                class Ops:
                    @staticmethod
                    def scale(x, factor):
                        return x * np.sqrt(factor)
                """
            ),
            "train.py": dedent(
                """
                import tensorflow as tf
                from ops import Ops

                @tf.function
                def step(x):
                    return Ops.scale(tf.square(x), 3.0)
                """
            ),
        },
    )
    # np.sqrt gets the Python 3.0, not the tensor.
    assert _run([tmp_path], tmp_path) == []


def test_an_imported_input_signature_keeps_the_parameters_tensors(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "specs.py": "import tensorflow as tf\nSIG = [tf.TensorSpec([2]), tf.TensorSpec([])]\n",
            "model.py": dedent(
                """
                import tensorflow as tf
                from specs import SIG

                @tf.function(input_signature=SIG)
                def unpack(x, n):
                    lo, hi = x
                    return lo + hi
                """
            ),
        },
    )
    assert [(p, line, code) for p, line, code, _ in _run([tmp_path], tmp_path)] == [
        ("model.py", 6, "TFG203")
    ]


LOOPS = dedent(
    """
    import tensorflow as tf

    @tf.function
    def collect(x, steps):
        out = []
        for i in range(steps):
            out.append(x * tf.cast(i, x.dtype))
        return tf.stack(out)
    """
)


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        # A script elsewhere passes a tensor: the loop is a graph loop (TFG207).
        ("tf.constant(3)", [("loops.py", 7, "TFG207")]),
        # It passes a Python int: the loop unrolls, the list grows as meant.
        ("3", []),
    ],
)
def test_evidence_of_a_tensor_argument_from_another_module_s_eager_call(
    tmp_path: Path, steps: str, expected: list[tuple[str, int, str]]
) -> None:
    script = f"import tensorflow as tf\nfrom loops import collect\ncollect(tf.ones([2]), {steps})\n"
    write_tree(tmp_path, {"loops.py": LOOPS, "run.py": script})
    assert [(p, line, code) for p, line, code, _ in _run([tmp_path], tmp_path)] == expected


AUGMENTER = dedent(
    """
    import random

    import tensorflow as tf

    class Augmenter:
        def __call__(self, image):
            if random.random() < 0.5:
                image = tf.image.flip_left_right(image)
            return image
    """
)


@pytest.mark.parametrize(
    "pipeline",
    [
        "def make(ds):\n    return ds.map(Augmenter())\n",
        "def make(ds, aug=None):\n    aug = aug or Augmenter()\n    return ds.map(aug)\n",
    ],
)
@pytest.mark.parametrize("split", [False, True])
def test_an_object_handed_to_dataset_map_has_its_call_traced(
    tmp_path: Path, pipeline: str, split: bool
) -> None:
    # Python's random in __call__ is drawn once, when tf.data traces it (TFG103).
    if split:
        data = f"import tensorflow as tf\nfrom aug import Augmenter\n\n{pipeline}"
        files = {"aug.py": AUGMENTER, "data.py": data}
    else:
        files = {"aug.py": AUGMENTER + "\n\n" + pipeline}
    write_tree(tmp_path, files)
    found = [(p, line, code) for p, line, code, _ in _run([tmp_path], tmp_path)]
    assert found == [("aug.py", 7, "TFG103")]
