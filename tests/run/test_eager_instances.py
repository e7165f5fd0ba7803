"""Keras classes the project makes and only ever uses from eager code are not traced (SPEC §1
item 3 traces `call`, the steps and `Metric.update_state` because Keras runs them inside a
compiled step): an evaluator that feeds a NumPy-backed metric between graph steps, a model
that a plain GradientTape loop calls.  Any other use anywhere in the run (compiled, fitted,
called from traced code, a bound method handed on), a subclass the run never makes, or
evidence only from tests keeps the methods traced."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_support import write_tree
from tests.helpers import dedent
from tflint_graph import Config, lint_paths

METRICS = dedent(
    """
    import tensorflow as tf


    class CocoAP(tf.keras.metrics.Metric):
        def __init__(self, name="coco_ap", **kwargs):
            super().__init__(name=name, **kwargs)
            self.detections = []

        def update_state(self, boxes, scores):
            self.detections.extend(zip(boxes.numpy(), scores.numpy()))  # line 10

        def result(self):
            return float(len(self.detections))
    """
)

# An evaluator of the kind training frameworks drive: the graph step returns tensors, the
# metric is fed eagerly between steps.  It does not mention TensorFlow: the engine summarises
# it without libcst, which must tell the run the same.
EVALUATOR = dedent(
    """
    from pkg.metrics import CocoAP


    class Evaluator:
        def __init__(self):
            self._ap = CocoAP()

        def reduce(self, outputs):
            for boxes, scores in outputs:
                self._ap.update_state(boxes, scores)
            return {self._ap.name: self._ap.result()}
    """
)


def _findings(tmp_path: Path, files: dict[str, str]) -> set[tuple[str, int, str]]:
    write_tree(tmp_path, {"pkg/__init__.py": "", **files})
    return {(Path(f.path).name, f.line, f.code) for f in lint_paths([tmp_path], Config())}


def _in_metric(found: set[tuple[str, int, str]]) -> set[tuple[int, str]]:
    return {(line, code) for name, line, code in found if name == "metrics.py"}


def test_a_metric_only_eager_code_feeds_is_not_traced(tmp_path: Path) -> None:
    found = _findings(tmp_path, {"pkg/metrics.py": METRICS, "pkg/evaluator.py": EVALUATOR})
    assert _in_metric(found) == set()


def test_without_the_evaluator_the_metric_is_traced(tmp_path: Path) -> None:
    # Nothing in the run makes it: a library metric, for users to compile.
    found = _findings(tmp_path, {"pkg/metrics.py": METRICS})
    assert {(10, "TFG102"), (10, "TFG202")} <= _in_metric(found)


@pytest.mark.parametrize(
    "other_use",
    [
        # compiled: Keras runs update_state inside the compiled step
        "def prepare(model):\n    model.compile(metrics=[CocoAP()])\n",
        # a holder handed on
        "def prepare(model):\n    ap = CocoAP()\n    model.compile(metrics=[ap])\n",
        # a bound method handed to tf.function
        "import tensorflow as tf\n\ndef prepare():\n    ap = CocoAP()\n"
        "    return tf.function(ap.update_state)\n",
        # called from traced code
        "import tensorflow as tf\n\nap = CocoAP()\n\n@tf.function\ndef step(b, s):\n"
        "    ap.update_state(b, s)\n",
        # called from a step function, which a trainer may wrap in tf.function
        "class Trainer:\n    def __init__(self):\n        self._ap = CocoAP()\n\n"
        "    def eval_step(self, b, s):\n        self._ap.update_state(b, s)\n",
        # a subclass the run never makes
        "class Tuned(CocoAP):\n    pass\n",
        # named without being made here: a registry, a factory's product
        "REGISTRY = {'ap': CocoAP}\n",
        # a module-level instance: other modules may import it
        "AP = CocoAP()\n",
        # a public attribute that code reads on another object (`holder.ap`) and compiles
        "class Holder:\n    def __init__(self):\n        self.ap = CocoAP()\n\n"
        "    def report(self, b, s):\n        self.ap.update_state(b, s)\n\n\n"
        "def prepare(model, holder):\n    model.compile(metrics=[holder.ap])\n",
        # a closure, which may be returned and traced elsewhere
        "def make():\n    ap = CocoAP()\n\n    def feed(b, s):\n        ap.update_state(b, s)\n\n"
        "    return feed\n",
    ],
)
def test_any_other_use_in_the_run_keeps_it_traced(tmp_path: Path, other_use: str) -> None:
    other = "from pkg.metrics import CocoAP\n\n" + other_use
    found = _findings(
        tmp_path,
        {"pkg/metrics.py": METRICS, "pkg/evaluator.py": EVALUATOR, "pkg/other.py": other},
    )
    assert (10, "TFG202") in _in_metric(found)


@pytest.mark.parametrize(
    ("path", "code"),
    [
        # a test module drives it eagerly; users may not
        (
            "pkg/metrics_test.py",
            "from pkg.metrics import CocoAP\n\ndef test_ap():\n"
            "    ap = CocoAP()\n    ap.update_state(1, 2)\n",
        ),
        # a layer library's smoke test under its main guard
        (
            "pkg/demo.py",
            "from pkg.metrics import CocoAP\n\ndef _test_ap():\n"
            "    ap = CocoAP()\n    ap.update_state(1, 2)\n\nif __name__ == '__main__':\n"
            "    _test_ap()\n",
        ),
    ],
)
def test_tests_are_no_evidence_of_eager_use(tmp_path: Path, path: str, code: str) -> None:
    found = _findings(tmp_path, {"pkg/metrics.py": METRICS, path: code})
    assert (10, "TFG202") in _in_metric(found)


HELD = dedent(
    """
    import tensorflow as tf

    from pkg.metrics import CocoAP


    class PanopticAP(tf.keras.metrics.Metric):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self._inner = CocoAP()

        def update_state(self, boxes, scores):
            self._inner.update_state(boxes, scores)
            self.seen = boxes.numpy()  # line 13

        def result(self):
            return self._inner.result()
    """
)


def test_a_metric_held_by_an_eager_metric_is_eager_too(tmp_path: Path) -> None:
    evaluator = EVALUATOR.replace("pkg.metrics import CocoAP", "pkg.held import PanopticAP")
    evaluator = evaluator.replace("CocoAP()", "PanopticAP()")
    found = _findings(
        tmp_path, {"pkg/metrics.py": METRICS, "pkg/held.py": HELD, "pkg/evaluator.py": evaluator}
    )
    assert _in_metric(found) == set()
    assert not any(name == "held.py" for name, _, _ in found)


def test_a_metric_held_by_a_compiled_metric_is_traced(tmp_path: Path) -> None:
    compiled = "from pkg.held import PanopticAP\n\ndef prepare(model):\n"
    compiled += "    model.compile(metrics=[PanopticAP()])\n"
    found = _findings(
        tmp_path, {"pkg/metrics.py": METRICS, "pkg/held.py": HELD, "pkg/train.py": compiled}
    )
    assert (10, "TFG202") in _in_metric(found)
    assert ("held.py", 13, "TFG202") in found


MODEL = dedent(
    """
    import tensorflow as tf


    class Policy(tf.keras.Model):
        steps = 0

        def __init__(self):
            super().__init__()
            self.head = tf.keras.layers.Dense(4)

        def call(self, x):
            self.steps += 1  # line 11
            return tf.nn.softmax(self.head(x))
    """
)

LOOP = dedent(
    """
    import tensorflow as tf

    from pkg.model import Policy


    def train(batches):
        func = Policy()
        optimizer = tf.keras.optimizers.Adam()
        for x in batches:
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(func(x))
            grads = tape.gradient(loss, func.trainable_variables)
            optimizer.apply_gradients(zip(grads, func.trainable_variables))
        print(func.steps)
    """
)


def test_a_model_an_eager_loop_drives_is_not_traced(tmp_path: Path) -> None:
    found = _findings(tmp_path, {"pkg/model.py": MODEL, "pkg/loop.py": LOOP})
    assert ("model.py", 12, "TFG106") not in found


def test_a_model_a_traced_step_calls_is_traced(tmp_path: Path) -> None:
    traced = LOOP.replace("def train(batches):", "@tf.function\ndef train(batches):")
    found = _findings(tmp_path, {"pkg/model.py": MODEL, "pkg/loop.py": traced})
    assert ("model.py", 12, "TFG106") in found


def test_a_class_that_traces_itself_stays_traced(tmp_path: Path) -> None:
    exported = METRICS + (
        "\n    def export(self, path):\n        tf.saved_model.save(self, path)\n"
    )
    found = _findings(tmp_path, {"pkg/metrics.py": exported, "pkg/evaluator.py": EVALUATOR})
    assert (10, "TFG202") in _in_metric(found)


def test_a_class_its_package_exports_stays_traced(tmp_path: Path) -> None:
    # Public API: the package's users may compile it, whatever the project's scripts do.
    found = _findings(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.metrics import CocoAP\n",
            "pkg/metrics.py": METRICS,
            "pkg/evaluator.py": EVALUATOR,
        },
    )
    assert (10, "TFG202") in _in_metric(found)


def test_a_public_attribute_no_other_object_reads_holds_an_eager_instance(tmp_path: Path) -> None:
    public = EVALUATOR.replace("self._ap", "self.ap")
    found = _findings(tmp_path, {"pkg/metrics.py": METRICS, "pkg/evaluator.py": public})
    assert _in_metric(found) == set()
    # ... until some code reads it on another object
    reader = "def report(evaluator):\n    return evaluator.ap\n"
    found = _findings(
        tmp_path,
        {"pkg/metrics.py": METRICS, "pkg/evaluator.py": public, "pkg/report.py": reader},
    )
    assert (10, "TFG202") in _in_metric(found)


SCRIPT = dedent(
    """
    import argparse

    import tensorflow as tf


    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.head = tf.keras.layers.Dense(2)
            self.calls = 0

        def call(self, x):
            self.calls += 1  # line 13
            return self.head(x)


    def evaluate(model, features):
        logits = model(features, training=False)
        return float(tf.reduce_mean(logits))


    def main(args):
        model = Net()
        for _ in range(args.epochs):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(tf.ones([2, 3])))
            tape.gradient(loss, model.trainable_variables)
        print(evaluate(model, tf.ones([2, 3])))


    if __name__ == "__main__":
        main(argparse.ArgumentParser().parse_args())
    """
)


def test_a_script_s_own_function_named_like_a_keras_entry_is_no_keras_entry(
    tmp_path: Path,
) -> None:
    # `evaluate(model, x)` is the script's function, not `Model.evaluate`: the script's model
    # only ever runs eagerly.  A real `model.evaluate(...)` traces it.
    found = _findings(tmp_path, {"pkg/train.py": SCRIPT})
    assert ("train.py", 13, "TFG106") not in found
    keras_evaluate = SCRIPT.replace(
        "print(evaluate(model, tf.ones([2, 3])))", "print(model.evaluate(tf.ones([2, 3])))"
    )
    found = _findings(tmp_path, {"pkg/train.py": keras_evaluate})
    assert ("train.py", 13, "TFG106") in found


ENCODER = dedent(
    """
    import tensorflow as tf


    class Encoder(tf.keras.layers.Layer):
        columns = ("age", "income")

        def call(self, frame):
            print("encoding", frame)  # line 8
            return {k: tf.constant(frame[k]) for k in self.columns}
    """
)

DATA = dedent(
    """
    import tensorflow as tf

    from pkg.encoder import Encoder


    class DataModule:
        def __init__(self):
            self._encoder = Encoder()

        def transform(self, frame):
            encoded = self._encoder(frame)
            return tf.data.Dataset.from_tensor_slices(dict(encoded))
    """
)


def test_a_layer_called_with_a_parameter_where_a_dataset_is_made_is_an_eager_use(
    tmp_path: Path,
) -> None:
    # The function that calls it with its parameter makes a dataset of the result: no
    # functional model is being built there.
    found = _findings(tmp_path, {"pkg/encoder.py": ENCODER, "pkg/data.py": DATA})
    assert ("encoder.py", 8, "TFG101") not in found
    builder = DATA.replace(
        "return tf.data.Dataset.from_tensor_slices(dict(encoded))", "return encoded"
    )
    found = _findings(tmp_path, {"pkg/encoder.py": ENCODER, "pkg/data.py": builder})
    assert ("encoder.py", 8, "TFG101") in found  # maybe a symbolic input: stays traced


NET = dedent(
    """
    import tensorflow as tf


    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(1)

        def call(self, x):
            print("batch mean", tf.reduce_mean(x))  # line 10
            return self.dense(x)
    """
)

TRAINER = dedent(
    """
    import tensorflow as tf

    from pkg.net import Net


    class Trainer:
        def __init__(self):
            self._model = Net()
            self._opt = tf.keras.optimizers.SGD(0.1)

        def train_batch(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self._model(x) - y))
            grads = tape.gradient(loss, self._model.trainable_variables)
            self._opt.apply_gradients(zip(grads, self._model.trainable_variables))
            return loss
    """
)


def test_a_tape_step_another_module_may_trace_keeps_its_model_traced(tmp_path: Path) -> None:
    # A GradientTape is no sign of eager code: trainers wrap such steps in tf.function.
    main = "import tensorflow as tf\n\nfrom pkg.trainer import Trainer\n\n"
    main += "step = tf.function(Trainer().train_batch)\n"
    found = _findings(tmp_path, {"pkg/net.py": NET, "pkg/trainer.py": TRAINER, "pkg/main.py": main})
    assert ("net.py", 10, "TFG101") in found


STEPPED = dedent(
    """
    import tensorflow as tf


    class Counting(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(1)
            self.steps = 0

        def train_step(self, data):
            self.steps += 1  # line 11
            return {"loss": tf.reduce_mean(self.dense(data))}
    """
)

TRAIN = dedent(
    """
    import tensorflow as tf

    from pkg.model import Counting
    from pkg.tools import export_model


    def fit(model, data):
        def on_epoch_end(epoch, logs=None):
            report(model, epoch)

        model.fit(data, callbacks=[tf.keras.callbacks.LambdaCallback(on_epoch_end=on_epoch_end)])


    def report(model, epoch):
        print(epoch, model.steps)


    def main(data):
        model = Counting()
        model.compile(optimizer="sgd", run_eagerly=True)
        fit(model, data)
    """
)


@pytest.mark.parametrize(
    ("change", "reported"),
    [
        ((), False),
        # compiled to run in graphs: fit traces the step
        (("run_eagerly=True", "run_eagerly=False"), True),
        # handed to a call that traces it
        (("fit(model, data)", "fit(model, data)\n    tf.function(model.train_step)(data)"), True),
        # run eagerly only on some runs
        (
            (
                'model.compile(optimizer="sgd", run_eagerly=True)',
                'model.compile(optimizer="sgd")\n'
                "    if data is None:\n        model.run_eagerly = True",
            ),
            True,
        ),
        # compiled again for graphs
        (
            (
                "fit(model, data)",
                'fit(model, data)\n    model.compile(optimizer="adam")\n    model.fit(data)',
            ),
            True,
        ),
        # fitted before the switch
        (
            (
                'model.compile(optimizer="sgd", run_eagerly=True)',
                'model.compile(optimizer="sgd")\n    model.fit(data)\n    model.run_eagerly = True',
            ),
            True,
        ),
        # handed to a function of another module, which may trace it out of sight
        (("    fit(model, data)", "    fit(model, data)\n    export_model(model)"), True),
        # called by the module's own tf.function
        (
            (
                "    fit(model, data)",
                "    fit(model, data)\n\n    @tf.function\n"
                "    def serve(x):\n        return model(x)\n\n    serve(data)",
            ),
            True,
        ),
    ],
)
def test_a_model_compiled_to_run_eagerly_is_not_traced_where_it_goes(
    tmp_path: Path, change: tuple[str, ...], reported: bool
) -> None:
    # Keras runs a model compiled with run_eagerly=True as Python, in the functions and the
    # epoch-end hooks it is handed to: its step counts every batch.
    train = TRAIN.replace(*change) if change else TRAIN
    found = _findings(tmp_path, {"pkg/model.py": STEPPED, "pkg/train.py": train})
    assert (("model.py", 11, "TFG106") in found) is reported


NETWORKS = dedent(
    """
    import tensorflow as tf


    class Actor(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(2)

        def call(self, state):
            out = self.dense(state)
            print("actor", out.numpy())  # line 11
            return out


    class Critic(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(1)

        def call(self, state):
            out = self.dense(state)
            print("critic", out.numpy())  # line 22
            return out
    """
)

# An agent that builds one network on a functional `Input` and drives the other from an
# eager tape (it reads the loss's value): only the first is ever traced.
AGENT = dedent(
    """
    import tensorflow as tf

    from pkg.networks import Actor, Critic


    class Agent:
        def __init__(self):
            self.actor = Actor()
            self.critic = Critic()
            probe = tf.keras.Input(shape=(3,))
            self.critic(probe)

        def learn(self, states):
            with tf.GradientTape() as tape:
                actions = self.actor(states)
                loss = tf.reduce_mean(actions)
            print("loss", loss.numpy())
            return tape.gradient(loss, self.actor.trainable_variables)
    """
)


@pytest.mark.parametrize(
    ("change", "actor_traced"),
    [
        ((), False),
        # the actor gets a tensor computed from the functional input: built symbolically
        (("self.critic(probe)", "built = self.critic(probe)\n        self.actor(built)"), True),
        # or the `Input(...)` itself
        (
            ("self.critic(probe)", "self.critic(probe)\n        self.actor(tf.keras.Input((3,)))"),
            True,
        ),
        # an `Input` that goes where the module cannot follow (appended to a list, returned
        # by a helper): every call in the module may get a symbolic tensor
        (
            (
                "probe = tf.keras.Input(shape=(3,))",
                "probes = []\n        probes.append(tf.keras.Input((3,)))\n"
                "        probe = probes[0]",
            ),
            True,
        ),
    ],
)
def test_only_the_instances_called_on_a_functional_input_are_traced_there(
    tmp_path: Path, change: tuple[str, ...], actor_traced: bool
) -> None:
    agent = AGENT.replace(*change) if change else AGENT
    found = _findings(tmp_path, {"pkg/networks.py": NETWORKS, "pkg/agent.py": agent})
    assert ("networks.py", 22, "TFG202") in found  # the critic is called on an `Input`
    assert (("networks.py", 11, "TFG202") in found) is actor_traced


BLOCKS = dedent(
    """
    import tensorflow as tf


    class Block(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(4)

        def call(self, x):
            print("block input", x.numpy().mean())  # line 10
            return self.dense(x)


    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self._block = Block()

        def call(self, x):
            return self._block(x)
    """
)

# A script's entry point run by absl: its loop calls the model eagerly, and the model hands
# its own input to the layer it holds.
ABSL_MAIN = dedent(
    """
    import tensorflow as tf
    from absl import app

    from pkg.blocks import Net


    def main(argv):
        net = Net()
        opt = tf.keras.optimizers.SGD(0.1)
        for _ in range(3):
            batch = tf.random.normal([2, 4])
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(net(batch))
            grads = tape.gradient(loss, net.trainable_variables)
            opt.apply_gradients(zip(grads, net.trainable_variables))


    if __name__ == "__main__":
        app.run(main)
    """
)


@pytest.mark.parametrize(
    ("change", "traced"),
    [
        ((), False),
        # Keras fits it: `call`, and the layer's with it, are traced
        (("    for _ in range(3):", "    net.compile('sgd', 'mse')\n    for _ in range(3):"), True),
        # handed to tf.function instead of absl's runner
        (("    app.run(main)", "    tf.function(main)(None)"), True),
    ],
)
def test_a_layer_an_eager_model_hands_its_input_to_is_eager_too(
    tmp_path: Path, change: tuple[str, ...], traced: bool
) -> None:
    main = ABSL_MAIN.replace(*change) if change else ABSL_MAIN
    found = _findings(tmp_path, {"pkg/blocks.py": BLOCKS, "pkg/train.py": main})
    assert (("blocks.py", 10, "TFG202") in found) is traced


# A training script that runs at import: its module-level model is its own.
TOP_LEVEL = dedent(
    """
    import tensorflow as tf

    from pkg.blocks import Net

    net = Net()
    opt = tf.keras.optimizers.SGD(0.1)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(net(tf.random.normal([2, 4])))
        grads = tape.gradient(loss, net.trainable_variables)
        opt.apply_gradients(zip(grads, net.trainable_variables))
    """
)


@pytest.mark.parametrize(
    ("name", "source", "traced"),
    [
        ("train.py", TOP_LEVEL, False),
        # called at import, outside a loop: a library may build its weights so
        ("inspect.py", "from pkg.blocks import Net\n\nnet = Net()\nout = net(1.0)\n", True),
        # a loop at module level that does not use it (a GPU set-up loop)
        (
            "setup.py",
            "import tensorflow as tf\n\nfrom pkg.blocks import Net\n\n"
            "for gpu in tf.config.list_physical_devices('GPU'):\n"
            "    tf.config.experimental.set_memory_growth(gpu, True)\n"
            "net = Net()\n",
            True,
        ),
        # a module-level instance others may import and trace
        (
            "shared.py",
            "from pkg.blocks import Net\n\nnet = Net()\n\n\ndef predict(x):\n    return net(x)\n",
            True,
        ),
    ],
)
def test_a_program_s_module_level_model_is_its_own(
    tmp_path: Path, name: str, source: str, traced: bool
) -> None:
    found = _findings(tmp_path, {"pkg/blocks.py": BLOCKS, f"pkg/{name}": source})
    assert (("blocks.py", 10, "TFG202") in found) is traced
