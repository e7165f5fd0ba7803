"""Objects a target needs, built the way the rest of the project builds them: model builders
and constructor calls in other modules, and dtypes read from how a parameter is used."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from tests.dynamic.support import dynamic_findings, write
from tflint_graph.core.config import Config
from tflint_graph.core.examples import PyValue, TensorSpecLite
from tflint_graph.dynamic import plan, project
from tflint_graph.dynamic.verdicts import SourceExpr
from tflint_graph.model.context import ModuleContext

MODELS = """
    import keras

    class Forecaster(keras.Model):
        def call(self, x):
            return x

    def build_forecaster(units=4):
        model = Forecaster()
        model.build((None, 8, 2))
        return model

    def build_small():
        return keras.Sequential([keras.layers.Dense(2)])

    def _private():
        return keras.Sequential([])

    def build_with_args(units):
        return keras.Sequential([keras.layers.Dense(units)])
"""


def test_model_builders_of_other_modules_most_called_first(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/models.py": MODELS,
            "train.py": """
                from pkg import models

                def main():
                    return models.build_forecaster()

                if __name__ == "__main__":
                    main()
            """,
        },
    )
    found = project.model_builders(tmp_path, exclude="pkg.training")
    # Called by the training script: the project's main model.  Builders that need an
    # argument, and private helpers, are not builders; a model class that needs none comes
    # after the functions (which may build or compile it).
    assert found == [
        ("pkg.models", "build_forecaster", ""),
        ("pkg.models", "build_small", ""),
        ("pkg.models", "Forecaster", ""),
    ]
    assert project.model_builders(tmp_path, exclude="pkg.models") == []


def test_a_model_class_that_needs_no_argument_builds_one(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "nets.py": """
                import keras

                class SegNet(keras.Model):
                    def __init__(self, filters=8, **kwargs):
                        super().__init__(**kwargs)
                        self.conv = keras.layers.Conv2D(filters, 3)

                    def call(self, x):
                        return self.conv(x)

                class Sized(keras.Model):
                    def __init__(self, units):
                        super().__init__()

                    def call(self, x):
                        return x

                class _Private(keras.Model):
                    def call(self, x):
                        return x

                class NoCall(keras.Model):
                    pass

                class BaseNet(keras.Model):
                    def call(self, x):
                        "Subclasses compute."
                        raise NotImplementedError
            """,
        },
    )
    assert project.model_builders(tmp_path) == [("nets", "SegNet", "")]


SETTINGS = {
    "dataclass": """
        import dataclasses

        @dataclasses.dataclass
        class TrainConfig:
            units: int = 8
            rate: float = 0.1
    """,
    "init": """
        class ModelSettings:
            def __init__(self, units=8, *, rate=0.1):
                self.units, self.rate = units, rate
    """,
    "attributes": """
        class HParams:
            units = 8
    """,
}


@pytest.mark.parametrize("kind", sorted(SETTINGS))
def test_a_builder_taking_the_project_s_settings_gets_their_defaults(
    tmp_path: Path, kind: str
) -> None:
    write(
        tmp_path,
        {
            "settings.py": SETTINGS[kind],
            "models.py": """
                import keras

                def build_model(cfg):
                    return keras.Sequential([keras.layers.Dense(cfg.units)])

                def build_head(units, cfg):
                    return keras.Sequential([keras.layers.Dense(units)])
            """,
        },
    )
    name = re.search(r"class (\w+)", SETTINGS[kind]).group(1)  # type: ignore[union-attr]
    config = f"__import__('importlib').import_module('settings').{name}()"
    assert project.default_config(tmp_path) == config
    # A builder with another required parameter is none.
    assert project.model_builders(tmp_path) == [("models", "build_model", config)]
    assert project.builder_source(*project.model_builders(tmp_path)[0]).endswith(
        f".build_model({config})"
    )


@pytest.mark.parametrize(
    "source",
    [
        # a field without a default
        "import dataclasses\n\n@dataclasses.dataclass\nclass TrainConfig:\n    units: int\n",
        # a base whose constructor is out of sight
        "from base import Base\n\nclass TrainConfig(Base):\n    units = 8\n",
        # named like no settings
        "class Trainer:\n    units = 8\n",
    ],
)
def test_settings_that_need_arguments_make_no_builder(tmp_path: Path, source: str) -> None:
    write(
        tmp_path,
        {
            "settings.py": source,
            "models.py": """
                import keras

                def build_model(cfg):
                    return keras.Sequential([keras.layers.Dense(cfg.units)])
            """,
        },
    )
    assert project.default_config(tmp_path) == ""
    assert project.model_builders(tmp_path) == []


def test_a_module_that_runs_a_script_at_import_is_never_used(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "script.py": """
                import keras

                def build_model():
                    return keras.Sequential([keras.layers.Dense(2)])

                model = build_model()
                model.fit([[1.0]], [[1.0]])
            """,
            "defs.py": """
                import keras
                import tensorflow as tf

                tf.random.set_seed(0)

                def build_model():
                    return keras.Sequential([keras.layers.Dense(2)])
            """,
        },
    )
    assert project.model_builders(tmp_path) == [("defs", "build_model", "")]


def test_a_constructor_call_in_a_script_with_its_arguments(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/serve.py": """
                class Server:
                    def __init__(self, model, mean):
                        self.model = model
            """,
            "other.py": """
                class Server:
                    pass

                def make():
                    return Server(1, 2)
            """,
            "run.py": """
                from pkg import serve, models

                def main(argv):
                    model = models.build()
                    server = serve.Server(model, mean=0.5)
                    return server
            """,
        },
    )
    found = project.constructor_elsewhere(tmp_path, "pkg.serve", "Server")
    assert found is not None
    module, path, call = found
    # The local `model` is replaced by its value; `other.Server` is another class.
    assert module == "run" and path == tmp_path / "run.py"
    assert call.args == ("models.build()",) and call.kwargs == (("mean", "0.5"),)
    assert project.constructor_elsewhere(tmp_path, "pkg.serve", "Missing") is None


def _function(source: str) -> cst.FunctionDef:
    module = cst.parse_module(textwrap.dedent(source))
    node = module.body[0]
    assert isinstance(node, cst.FunctionDef)
    return node


def test_uses_say_counts_indices_and_regression_targets() -> None:
    node = _function(
        """
        def f(x, y, labels, horizon, idx, depth, n, scale):
            a = tf.reduce_mean(x[:, :horizon] - y[:, :horizon])
            b = tf.gather(x, idx)
            c = tf.one_hot(idx, depth)
            d = labels - 1
            e = x * scale
            return a, b, c, d, e
        """
    )
    uses = plan._uses(node, ["x", "y", "labels", "horizon", "idx", "depth", "n", "scale"])
    # `labels - 1` is integer arithmetic on ids, no regression target; `x * scale` says nothing.
    assert uses == {"horizon": "count", "y": "target", "idx": "ids", "depth": "count"}


def _ctx(tmp_path: Path, source: str) -> ModuleContext:
    path = tmp_path / "mod.py"
    text = textwrap.dedent(source).lstrip()
    path.write_text(text, encoding="utf-8")
    return ModuleContext(str(path), text, cst.parse_module(text), Config())


def test_constructor_guesses_from_uses_and_the_project(tmp_path: Path) -> None:
    write(tmp_path, {"models.py": MODELS})
    ctx = _ctx(
        tmp_path,
        """
        import keras

        class Head(keras.layers.Layer):
            def __init__(self, horizon, **kwargs):
                super().__init__(**kwargs)
                self.horizon = horizon

            def call(self, h):
                return keras.layers.Dense(self.horizon)(h)

        class Evaluator:
            def __init__(self, model, optimizer):
                self.model = model

        class Unknown:
            def __init__(self, thing):
                self.thing = thing
        """,
    )
    assert plan._ctor_guess(ctx, "Head", "mod") == {"horizon": PyValue(4)}
    guessed = plan._ctor_guess(ctx, "Evaluator", "mod")
    assert guessed is not None
    assert guessed["model"] == SourceExpr(
        "__import__('importlib').import_module('models').build_forecaster()"
    )
    assert plan._shown_guess(guessed["model"]) == "models.build_forecaster()"
    assert guessed["optimizer"] is plan._DEFAULT_OPTIMIZER
    assert plan._ctor_guess(ctx, "Unknown", "mod") is None


def test_a_parameter_used_as_a_bound_is_an_int_scalar(tmp_path: Path) -> None:
    ctx = _ctx(
        tmp_path,
        """
        import tensorflow as tf

        @tf.function
        def loss(x, y, horizon):
            return tf.reduce_mean(x[:, :horizon] - y[:, :horizon])
        """,
    )
    ctx.traced = plan.find_traced(ctx)
    node = next(s for s in ctx.module.body if isinstance(s, cst.FunctionDef))
    entry = plan._Entry(node, "function", "loss", None, True)
    attempts, roles = plan._attempts(ctx, entry, "mod:loss", {})
    first = attempts[0].args
    assert first[2] == TensorSpecLite("int32", (), values=(2, 4))
    assert first[1] == TensorSpecLite("float32", (2, 3))  # a target like the prediction
    assert roles == ("tensor", "target", "fixed")


def test_a_python_float_into_an_int_guess_makes_it_float() -> None:
    pytest.importorskip("tensorflow")
    from tflint_graph.dynamic import child

    fix = child._fix_for(
        "Expected int32 passed to parameter 'y' of op 'Mul', got 1.5 of type 'float' instead."
    )
    assert fix is not None
    label = {"kind": "tensor", "dtype": "int32", "shape": [2], "values": [0, 2]}
    assert fix(label) == {"kind": "tensor", "dtype": "float32", "shape": [2]}
    x = {"kind": "tensor", "dtype": "float32", "shape": [2, 3]}
    assert fix(x) == x


def test_a_bound_compared_with_a_counter_becomes_an_int_scalar_last_first() -> None:
    pytest.importorskip("tensorflow")
    from tflint_graph.dynamic import child

    obs = {"kind": "tensor", "dtype": "float32", "shape": [2, 6]}
    attempt = {"source": "guessed", "shown": "", "args": [obs, dict(obs)], "kwargs": {}}
    message = (
        "Input 'y' of 'Less' Op has type float32 that does not match type int32 of argument 'x'."
    )
    result = {"calls": [{"exception": {"message": message}}]}
    again = child._adapted(attempt, result, {"names": ["obs", "horizon"]})
    assert again is not None
    assert again["args"][0] == obs
    assert again["args"][1]["dtype"] == "int32" and again["args"][1]["shape"] == []
    # With an int guess already there, the int one becomes float instead (a label).
    label = {"kind": "tensor", "dtype": "int32", "shape": [2]}
    attempt = {"source": "guessed", "shown": "", "args": [obs, label], "kwargs": {}}
    again = child._adapted(attempt, result, {"names": ["x", "y"]})
    assert again is not None and again["args"][1]["dtype"] == "float32"


PROJECT = {
    "shop/__init__.py": "",
    "shop/models.py": """
        import keras

        def build_model():
            return keras.Sequential([keras.Input((5,)), keras.layers.Dense(3)])
    """,
    "shop/evaluation.py": """
        import tensorflow as tf

        HISTORY = []


        class Evaluator:
            def __init__(self, model):
                self.model = model

            @tf.function
            def score(self, x, y_true):
                err = tf.abs(self.model(x) - y_true)
                HISTORY.append(err)  # TFG102
                return tf.reduce_mean(err)
    """,
    "shop/serve.py": """
        import tensorflow as tf


        class Server(tf.Module):
            def __init__(self, model, scale):
                self.model = model
                self.scale = scale

            @tf.function
            def predict(self, x):
                print("serving", x)  # TFG101
                return self.model(x) * self.scale
    """,
    "shop/steps.py": """
        import tensorflow as tf


        def make_step(model, optimizer):
            calls = 0

            @tf.function
            def step(x, y):
                nonlocal calls
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                calls = calls + 1  # TFG105
                return loss

            return step
    """,
    "main.py": """
        from absl import app, flags

        from shop import models, serve

        flags.DEFINE_float("scale", 2.0, "Output scale.")
        FLAGS = flags.FLAGS


        def main(argv):
            model = models.build_model()
            server = serve.Server(model, FLAGS.scale)
            return server


        if __name__ == "__main__":
            app.run(main)
    """,
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int, str], dict]:
    pytest.importorskip("tensorflow")
    root = tmp_path_factory.mktemp("shop")
    write(root, PROJECT)
    return dynamic_findings(root, "shop")


def test_an_object_built_from_the_project_s_model_builder(shop: dict) -> None:
    dynamic = shop[("shop/evaluation.py", 13, "TFG102")]["dynamic"]
    assert dynamic["status"] == "confirmed", dynamic
    assert "shop.models.build_model()" in dynamic["evidence"], dynamic
    assert "float32[2,5]" in dynamic["inputs"], dynamic


def test_an_object_constructed_as_the_training_script_does(shop: dict) -> None:
    # main() reads an absl flag app.run never parsed: its default.
    dynamic = shop[("shop/serve.py", 11, "TFG101")]["dynamic"]
    assert dynamic["status"] == "confirmed", dynamic
    assert "as the main does" in dynamic["evidence"], dynamic


def test_a_factory_nothing_calls_gets_a_model_and_an_optimizer(shop: dict) -> None:
    dynamic = shop[("shop/steps.py", 14, "TFG105")]["dynamic"]
    assert dynamic["status"] == "confirmed", dynamic
    assert "<Adam>" in dynamic["evidence"], dynamic


_LOAD = """
import importlib.util, sys
sys.path[:0] = [sys.argv[2], sys.argv[3]]  # the project first, as in the child
spec = importlib.util.spec_from_file_location("_child", sys.argv[1])
child = importlib.util.module_from_spec(spec)
spec.loader.exec_module(child)
module = child._project_module("tests.test_model", sys.argv[4])
print(module.UNITS)
"""


def test_a_project_module_behind_an_installed_package_of_its_name_is_loaded_from_its_file(
    tmp_path: Path,
) -> None:
    """The constructor arguments a project's test passes: its `tests/` folder has no
    `__init__.py`, and an installed regular package `tests` wins the name."""
    pytest.importorskip("tensorflow")
    installed = tmp_path / "site" / "tests"
    installed.mkdir(parents=True)
    (installed / "__init__.py").write_text("", encoding="utf-8")
    own = tmp_path / "project" / "tests" / "test_model.py"
    own.parent.mkdir(parents=True)
    own.write_text("UNITS = 7\n", encoding="utf-8")
    child = Path(project.__file__).with_name("child.py")
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            _LOAD,
            str(child),
            str(tmp_path / "project"),
            str(tmp_path / "site"),
            str(own),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "7"


def test_a_sparse_loss_s_labels_become_class_ids_for_the_named_parameter(
    tmp_path: Path,
) -> None:
    pytest.importorskip("tensorflow")
    from tflint_graph.dynamic import child

    module = tmp_path / "speakers_mod.py"
    module.write_text(
        "def step(feats, speakers):\n"
        "    logits = model(feats)\n"
        "    return loss_fn(speakers, logits)\n"
    )
    sys.modules["speakers_mod"] = type(sys)("speakers_mod")
    sys.modules["speakers_mod"].__file__ = str(module)
    try:
        feats = {"kind": "tensor", "dtype": "float32", "shape": [2, 2, 120]}
        attempt = {"source": "guessed", "shown": "", "args": [feats, dict(feats)], "kwargs": {}}
        message = (
            "Argument `output` must have rank (ndim) `target.ndim - 1`. Received: "
            "target.shape=(2, 2, 120), output.shape=(2, 4)"
        )
        result = {"calls": [{"exception": {"message": message, "line": 3}}]}
        target = {"names": ["feats", "speakers"], "module": "speakers_mod"}
        again = child._adapted(attempt, result, target)
    finally:
        del sys.modules["speakers_mod"]
    assert again is not None
    # Only `speakers`, which the failing line hands the loss, becomes one id per row.
    assert again["args"][0] == feats
    assert again["args"][1]["dtype"] == "int32" and again["args"][1]["shape"] == [2]
    assert again["args"][1]["values"] == [0, 4]


@pytest.mark.parametrize(
    ("name", "per_element", "shape"),
    [("waves", False, (2, 4000)), ("audio", True, (4000,)), ("speech", False, (2, 4000))],
)
def test_audio_named_inputs_are_waveforms(name: str, per_element: bool, shape: tuple) -> None:
    assert plan._guess(name, (2, 3), per_element=per_element) == TensorSpecLite("float32", shape)


def test_a_distillation_step_s_student_and_teacher_are_models(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/models.py": MODELS,
            "pkg/distill.py": """
                import tensorflow as tf

                @tf.function
                def distill(student, teacher, x):
                    return student(x) - teacher(x)
            """,
        },
    )
    path = tmp_path / "pkg" / "distill.py"
    text = path.read_text(encoding="utf-8")
    ctx = ModuleContext(str(path), text, cst.parse_module(text), Config())
    node = next(s for s in ctx.module.body if isinstance(s, cst.FunctionDef))
    entry = plan._Entry(node, "function", "distill", None, True)
    attempts, roles = plan._attempts(ctx, entry, "pkg.distill:distill", {})
    assert roles[:2] == ("model", "model")
    assert all(isinstance(a, SourceExpr) for a in attempts[0].args[:2])


def test_a_decay_is_a_rate_a_python_number() -> None:
    assert plan._guess("ema_decay", (2, 3), per_element=False) == PyValue(0.01)


def test_masks_beside_images_a_model_maps_to_images_are_shaped_like_its_output() -> None:
    keras = pytest.importorskip("keras")
    from tflint_graph.dynamic import child

    inp = keras.Input((8, 8, 1))
    net = keras.Model(inp, keras.layers.Conv2D(1, 3, padding="same")(inp))
    module = type(sys)("seg")
    module.net = net
    image = {"kind": "tensor", "dtype": "float32", "shape": [2, 4, 4, 3]}
    mask = {"kind": "tensor", "dtype": "bool", "shape": [2, 4]}
    first = {"source": "guessed", "shown": "", "args": [image, mask], "kwargs": {}}
    target = {"roles": ["image", "mask"], "kind": "module-function"}
    (attempt,) = child._model_attempts(module, target, first)
    assert attempt["args"][0]["shape"] == [2, 8, 8, 1]
    # Not a sequence's padding mask: the segmentation target, like the model's output.
    assert attempt["args"][1] == {"kind": "tensor", "dtype": "float32", "shape": [2, 8, 8, 1]}
