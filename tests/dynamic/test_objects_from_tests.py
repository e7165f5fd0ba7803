"""Inputs dynamic mode finds where guesses alone fail: objects only the project's tests
build (from their fixtures), constructor flags a flagged branch needs, named features one
value per row, datasets a parameter is annotated as, and a second call of eager code whose
first call failed on a guessed value after the flagged line ran."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from tests.dynamic.support import dynamic_findings, write
from tflint_graph.core.config import Config
from tflint_graph.core.examples import PyValue, TensorSpecLite
from tflint_graph.dynamic import plan, project
from tflint_graph.dynamic.verdicts import DatasetSpec, DictSpec, TupleSpec
from tflint_graph.model.context import ModuleContext

PROJECT = {
    "store/__init__.py": "",
    "store/vocab.py": """
        import tensorflow as tf


        class Vocab:
            def __init__(self, words):
                self.lookup = tf.keras.layers.StringLookup(vocabulary=list(words))

            def ids(self, text):
                return self.lookup(text)
    """,
    "store/encode.py": """
        import tensorflow as tf


        class Encoder:
            def __init__(self, vocab):
                self.vocab = vocab

            def encode(self, record):
                print("encoding", record)  # TFG101
                return {"word": self.vocab.ids(record["word"])}


        def make_dataset(words, vocab):
            encoder = Encoder(vocab)
            ds = tf.data.Dataset.from_tensor_slices({"word": list(words)})
            return ds.map(encoder.encode)
    """,
    "store/serve.py": """
        import tensorflow as tf


        class Server(tf.Module):
            def __init__(self, vocab, scale):
                super().__init__()
                self.vocab = vocab
                self.scale = scale

            @tf.function
            def lookup(self, text):
                print("serving", text)  # TFG101
                return tf.cast(self.vocab.ids(text), tf.float32) * self.scale
    """,
    "store/layers.py": """
        import keras
        import tensorflow as tf


        class Pool(keras.layers.Layer):
            def __init__(self, units: int, use_steps: bool = False):
                super().__init__()
                self.units = units
                self.use_steps = use_steps

            def call(self, x):
                if self.use_steps:
                    steps = int(tf.shape(x)[1])  # TFG203
                    x = x / steps
                return tf.reduce_sum(x, axis=1)
    """,
    "store/audit.py": """
        import tensorflow as tf


        class Audited(tf.Module):
            def __init__(self, audit_path=None, tag=None):
                self.audit_path = audit_path
                self.tag = tag

            @tf.function
            def score(self, x):
                out = tf.reduce_sum(x)
                if self.audit_path is not None:
                    open(self.audit_path, "a").write("scored")  # TFG108
                if self.tag is not None:
                    out = out + 1.0
                return out
    """,
    "store/gate.py": """
        import keras
        import tensorflow as tf


        class Settings:
            rescale = False


        class Gate(keras.layers.Layer):
            def __init__(self, skip_empty: bool = False):
                super().__init__()
                self.skip_empty = skip_empty
                self.settings = Settings()

            def call(self, x):
                if self.skip_empty and tf.reduce_sum(x) == 0:  # TFG201
                    return x
                return x * 2.0


        class Rescale(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.settings = Settings()

            def call(self, x):
                if self.settings.rescale and tf.reduce_max(x) > 1.0:  # TFG201
                    x = x / 255.0
                return x
    """,
    "store/ranking.py": """
        import keras
        import tensorflow as tf


        class Ranker(keras.Model):
            def __init__(self):
                super().__init__()
                self.head = keras.layers.Dense(1)
                self.last = None

            def call(self, features):
                price = features["price"]
                band = tf.one_hot(tf.cast(price > 10.0, tf.int32), 2)
                return self.head(tf.concat([tf.math.log1p(price)[:, tf.newaxis], band], -1))

            def train_step(self, data):
                features, labels = data
                logits = self(features)
                self.last = logits  # TFG106
                return {"n": tf.reduce_sum(logits) + tf.reduce_sum(labels)}

            def last_logits(self):
                return self.last


        def build_ranker():
            model = Ranker()
            model.compile(optimizer="sgd")
            return model
    """,
    "store/scoring.py": """
        import keras
        import numpy as np
        import tensorflow as tf


        def build_scorer():
            return keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])


        def to_inputs(features):
            return tf.stack([features["price"], features["age"]], axis=1)


        def score_all(model, dataset: tf.data.Dataset):
            predict = tf.function(lambda x: model(x))  # TFG302
            out = []
            for features, _ in dataset:
                out.append(predict(to_inputs(features)).numpy())
            return np.concatenate(out)


        def score_splits(model, splits):
            return [score_all(model, split) for split in splits]
    """,
    "store/monitor.py": """
        import keras
        import tensorflow as tf


        class Monitor(keras.callbacks.Callback):
            def __init__(self, probe):
                super().__init__()
                self.probe = tf.convert_to_tensor(probe, tf.float32)
                self.seen = []

            def on_epoch_end(self, epoch, logs=None):
                score = tf.function(self.model.call)  # TFG302
                self.seen.append(float(tf.reduce_sum(score(self.probe))))
    """,
    "tests/test_monitor.py": """
        import keras
        import numpy as np

        from store.monitor import Monitor


        def test_monitor_records_each_epoch():
            model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            monitor = Monitor(np.ones((2, 3)))
            model.fit(np.ones((4, 3)), np.ones((4, 1)), epochs=2, verbose=0, callbacks=[monitor])
            assert len(monitor.seen) == 2
    """,
    "tests/conftest.py": """
        import pytest

        from store.vocab import Vocab


        @pytest.fixture
        def vocab():
            return Vocab(["a", "b", "c"])
    """,
    "tests/test_store.py": """
        import tensorflow as tf

        from store.encode import make_dataset
        from store.serve import Server


        def test_server(vocab):
            # Debugging left in: what it switches must not outlive the test in dynamic mode.
            tf.config.run_functions_eagerly(True)
            try:
                server = Server(vocab, 2.0)
            except Exception:  # must not swallow dynamic mode's stop
                server = None
            assert server.lookup(tf.constant(["a"])).shape == (1,)


        def test_dataset(vocab):
            assert len(list(make_dataset(["a", "b"], vocab))) == 2
    """,
}


def _ctx(source: str) -> ModuleContext:
    text = textwrap.dedent(source).lstrip()
    return ModuleContext("m.py", text, cst.parse_module(text), Config())


def test_tests_that_build_an_object_directly_or_through_a_module_function(
    tmp_path: Path,
) -> None:
    write(tmp_path, PROJECT)
    assert project.tests_building(tmp_path, "store.serve", "Server") == (
        "tests/test_store.py::test_server",
    )
    # make_dataset() builds the Encoder: the test calling it builds one too.
    assert project.tests_building(tmp_path, "store.encode", "Encoder") == (
        "tests/test_store.py::test_dataset",
    )
    assert project.tests_building(tmp_path, "store.layers", "Pool") == ()


def test_a_finding_under_a_flag_the_constructor_turns_off_asks_for_it() -> None:
    ctx = _ctx(PROJECT["store/layers.py"])
    (cls,) = [s for s in ctx.module.body if isinstance(s, cst.ClassDef)]
    call = next(
        f for f in cls.body.body if isinstance(f, cst.FunctionDef) and f.name.value == "call"
    )
    # Line 13 (`steps = int(...)`) sits under `if self.use_steps:`; the return does not.
    assert plan._branch_flags(ctx, "Pool", call, {13}) == {"use_steps": (1, PyValue(True))}
    assert plan._branch_flags(ctx, "Pool", call, {15}) == {}


def test_a_finding_writing_to_an_optional_log_file_gets_one() -> None:
    ctx = _ctx(PROJECT["store/audit.py"])
    (cls,) = [s for s in ctx.module.body if isinstance(s, cst.ClassDef)]
    score = next(
        f for f in cls.body.body if isinstance(f, cst.FunctionDef) and f.name.value == "score"
    )
    # `if self.audit_path is not None:` opens it: a file in the scratch folder.
    assert plan._branch_flags(ctx, "Audited", score, {13}) == {"audit_path": (0, plan._SAMPLE_FILE)}
    # `if self.tag is not None:` with no file in its body: no value to guess.
    assert plan._branch_flags(ctx, "Audited", score, {15}) == {}


def test_named_model_inputs_are_also_tried_one_value_per_row() -> None:
    ctx = _ctx(PROJECT["store/ranking.py"])
    (cls,) = [s for s in ctx.module.body if isinstance(s, cst.ClassDef)]
    step = next(
        f for f in cls.body.body if isinstance(f, cst.FunctionDef) and f.name.value == "train_step"
    )
    attempts = plan._step_attempts(ctx, step)
    features = [a.args[0].items[0] for a in attempts if isinstance(a.args[0], TupleSpec)]
    assert all(isinstance(f, DictSpec) for f in features)
    shapes = [dict(f.items)["price"] for f in features]
    # A batch of vectors first (as before), a column last.
    assert shapes[0] == TensorSpecLite("float32", (2, 3))
    assert shapes[-1] == TensorSpecLite("float32", (2,))


def test_a_parameter_annotated_as_a_dataset_gets_datasets_first() -> None:
    ctx = _ctx(PROJECT["store/scoring.py"])
    fn = next(
        f for f in ctx.module.body if isinstance(f, cst.FunctionDef) and f.name.value == "score_all"
    )
    entry = plan._Entry(fn, "caller", "score_all")
    attempts, _ = plan._attempts(ctx, entry, "store.scoring:score_all", {})
    first = attempts[0].args[1]
    assert isinstance(first, DatasetSpec), attempts[0]
    element = first.element
    assert isinstance(element, TupleSpec)
    # The keys come from to_inputs(), which the loop hands each batch's features to.
    assert isinstance(element.items[0], DictSpec)
    assert [k for k, _ in element.items[0].items] == ["price", "age"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int, str], dict]:
    pytest.importorskip("tensorflow")
    root = tmp_path_factory.mktemp("store")
    write(root, PROJECT)
    return dynamic_findings(root, "store")


def _confirmed(store: dict, key: tuple[str, int, str]) -> str:
    dynamic = store[key]["dynamic"]
    assert dynamic["status"] == "confirmed", dynamic
    return dynamic["evidence"]


def test_an_object_only_a_test_builds_is_built_by_running_that_test(store: dict) -> None:
    # The test switched tf.functions to eager first: undone, the print still runs at trace
    # time only.
    evidence = _confirmed(store, ("store/serve.py", 12, "TFG101"))
    assert "built as the test tests/test_store.py::test_server builds it" in evidence


def test_an_object_a_module_function_builds_for_a_test(store: dict) -> None:
    evidence = _confirmed(store, ("store/encode.py", 9, "TFG101"))
    assert "tests/test_store.py::test_dataset" in evidence


def test_the_flag_a_branch_needs_is_staged_and_said(store: dict) -> None:
    evidence = _confirmed(store, ("store/layers.py", 13, "TFG203"))
    assert "staged: built with use_steps=True" in evidence


def test_an_optional_log_file_a_branch_writes_is_staged(store: dict) -> None:
    evidence = _confirmed(store, ("store/audit.py", 13, "TFG108"))
    assert "staged: built with audit_path='tflint_graph_sample.txt'" in evidence


def test_a_feature_one_value_per_row(store: dict) -> None:
    evidence = _confirmed(store, ("store/ranking.py", 19, "TFG106"))
    assert "price: float32[2]" in evidence


def test_eager_code_called_again_after_a_corrected_guess(store: dict) -> None:
    evidence = _confirmed(store, ("store/scoring.py", 15, "TFG302"))
    assert evidence.startswith("2 calls of score_all()"), evidence


def test_a_keras_callback_is_taken_once_fit_gave_it_its_model(store: dict) -> None:
    # Stopped at its constructor, the callback would have no model yet (`self.model`).
    evidence = _confirmed(store, ("store/monitor.py", 12, "TFG302"))
    assert "tests/test_monitor.py::test_monitor_records_each_epoch" in evidence


def test_a_tensor_test_after_a_constructor_flag_is_checked_with_the_flag_on(store: dict) -> None:
    evidence = _confirmed(store, ("store/gate.py", 16, "TFG201"))
    assert "staged: built with skip_empty=True" in evidence


def test_a_tensor_test_a_setting_short_circuits_is_never_not_reproduced(store: dict) -> None:
    # `self.settings.rescale` is off and no constructor flag turns it on: the `and` never
    # evaluates the tensor, which proves nothing either way.
    dynamic = store[("store/gate.py", 27, "TFG201")]["dynamic"]
    assert dynamic["status"] == "unverified", dynamic
    assert "may have left the flagged part unevaluated" in dynamic["evidence"]
