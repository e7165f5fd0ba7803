"""One-time setup (SPEC §2, ``model.setup``): code that runs on the first trace only by
design is silent for TFG102, TFG103, TFG105, TFG106, TFG108, TFG205 and TFG208; a guard
about something else is no excuse.  Each source marks exactly the findings it must give
(``# TFGnnn``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import dedent, expected, found
from tflint_graph import lint_paths

_CODES = ("TFG102", "TFG103", "TFG105", "TFG106", "TFG108", "TFG205", "TFG208")

CASES = {
    "a counter stepped on every call, tested for its first value": """
        import tensorflow as tf

        class Head(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.step = -1

            def call(self, x):
                self.step += 1  # TFG106
                if self.step == 0:
                    self.w = self.add_weight(shape=(x.shape[-1], 1))
                    self.dense = tf.keras.layers.Dense(1)
                return self.dense(x) + x @ self.w

        class Rewound(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.calls = -1

            def rewind(self):
                self.calls = -1

            def call(self, x):
                self.calls += 1  # TFG106
                if self.calls == 0:
                    self.dense = tf.keras.layers.Dense(1)  # TFG208
                return self.dense(x)
    """,
    "a cache grown to the input's static size": """
        import numpy as np
        import tensorflow as tf

        _MASK = np.ones((0, 0), dtype="float32")

        def causal_mask(n):
            global _MASK
            if _MASK.shape[0] < n:
                _MASK = np.tril(np.ones((n, n), dtype="float32"))
            return _MASK[:n, :n]

        class Rotary(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.table = None

            def call(self, x):
                n = x.shape[1]
                if self.table is None:
                    self.table = np.arange(n)
                elif len(self.table) < n:
                    self.table = np.arange(n)
                return x * causal_mask(n)[0, 0]
    """,
    "the branch that runs once the state exists runs on every call": """
        import tensorflow as tf

        class WeightedLoss(tf.keras.layers.Layer):
            def __init__(self, class_weights=None):
                super().__init__()
                self.class_weights = class_weights
                self._pending = None
                self.table = None

            def call(self, x):
                if self.class_weights is not None:
                    self.class_weights /= tf.reduce_sum(self.class_weights)  # TFG106
                if self._pending is not None:
                    x = x + self._pending
                    self._pending = None  # used up: runs once per value
                if self.table is None:
                    self.table = tf.lookup.StaticHashTable(
                        tf.lookup.KeyValueTensorInitializer([1], [2]), -1
                    )
                else:
                    self.lookups += 1  # TFG106
                return x
    """,
    "a memo on an object the caller hands in": """
        import tensorflow as tf

        def solve(cosmo, x):
            if "ode" in cosmo.workspace:
                cache = cosmo.workspace["ode"]
            else:
                cache = tf.exp(x)
                cosmo.workspace["ode"] = cache
            return cache

        def growth(cosmo, x):
            if "growth" not in cosmo.workspace:
                cosmo.workspace["growth"] = tf.math.log(x)
            cosmo.calls.append(x)  # TFG102
            return cosmo.workspace["growth"]

        @tf.function
        def step(cosmo, x):
            return solve(cosmo, x) + growth(cosmo, x)
    """,
    "a threshold test is no one-time guard": """
        import tensorflow as tf

        class Agent(tf.Module):
            def __init__(self):
                self.epsilon = 1.0
                self.epsilon_min = 0.01
                self.warmup = 100
                self.steps = None

            @tf.function
            def replay(self, x):
                if self.epsilon > self.epsilon_min:
                    self.epsilon *= 0.995  # TFG106
                if not self.warmup <= 0:
                    self.warmup -= 1  # TFG106
                if self.steps is None:
                    self.steps = tf.Variable(0)
                return x
    """,
    "helper called under a getattr guard": """
        import tensorflow as tf

        class Tokenizer(tf.keras.layers.Layer):
            def _init_tables(self, keys):
                init = tf.lookup.KeyValueTensorInitializer(keys, tf.range(3))
                self.table = tf.lookup.StaticHashTable(init, -1)
                self.lookups = {}
                self.lookups["ids"] = self.table

            def call(self, x):
                if getattr(self, "table", None) is None:
                    self._init_tables(tf.constant(["a", "b", "c"]))
                return self.table.lookup(x)

            def vocabulary(self):
                return self.lookups
    """,
    "an entry created once per key, through a local": """
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self._counters = {}

            def _count(self, name, n):
                counter = self._counters.get(name)
                if counter is None:
                    counter = tf.Variable(tf.constant(0, tf.int64), trainable=False)
                    self._counters[name] = counter
                counter.assign_add(n)

            @tf.function
            def step(self, x):
                self._count("words", tf.size(x, out_type=tf.int64))
                return x
    """,
    "an entry created once per key in a store the caller passes": """
        import tensorflow as tf
        from tensorflow.python.framework import ops

        def _shadow_of(params, name):
            with ops.init_scope():
                shadow = params._store.get(name, None)
                if shadow is None:
                    shadow = tf.Variable(tf.zeros([2]), trainable=False)
                    params._store[name] = shadow
            return shadow

        @tf.function
        def lookup(params, ids):
            return tf.gather(_shadow_of(params, "emb"), ids)
    """,
    "a lookup in a dict made in the same call guards nothing": """
        import tensorflow as tf

        @tf.function
        def step(x, name):
            store = {}
            counter = store.get(name)
            if counter is None:
                counter = tf.Variable(0.0)  # TFG205
                store[name] = counter
            return x
    """,
    "a lookup whose entry is never stored creates a variable per trace": """
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self._counters = {}

            @tf.function
            def step(self, x, name):
                counter = self._counters.get(name)
                if counter is None:
                    counter = tf.Variable(0.0)  # TFG205
                counter.assign_add(tf.reduce_sum(x))
                return x
    """,
    "guard inside the helper the traced code calls": """
        import tensorflow as tf

        class Layer(tf.keras.layers.Layer):
            def _maybe_build(self):
                if self.cache is None:
                    self.cache = {}
                    self.cache["scale"] = 2.0

            def call(self, x):
                self._maybe_build()
                return x * self.cache["scale"]

            def summary_of(self):
                return dict(self.cache)
    """,
    "early exit once the state exists": """
        import tensorflow as tf

        class Masker(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self._selector = None

            def _maybe_init(self):
                if self._selector is not None:
                    return
                self._selector = make_selector()
                self.rate = 0.15

            def call(self, x):
                self._maybe_init()
                return x

            def get_config(self):
                return {"rate": self.rate, "selector": self._selector}

        def make_selector():
            return object()
    """,
    "flag the library base sets, through super()": """
        import tensorflow as tf

        class KernelAttention(tf.keras.layers.MultiHeadAttention):
            def _build_from_signature(self, query, value, key=None):
                super()._build_from_signature(query=query, value=value, key=key)
                self._dropout_softmax = tf.keras.layers.Dropout(rate=0.1)

            def call(self, query, value):
                if not self._built_from_signature:
                    self._build_from_signature(query=query, value=value)
                return self._dropout_softmax(query)
    """,
    "a flag the base sets does not cover unrelated code": """
        import tensorflow as tf

        class Attention(tf.keras.layers.MultiHeadAttention):
            def call(self, query, value):
                if not self._use_bias:
                    self._extra = tf.keras.layers.Dropout(rate=0.1)  # TFG208
                return query
    """,
    "flag set by the helper": """
        import tensorflow as tf

        class Update(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self._is_initialized = False

            def _init_from_spec(self, spec):
                self._models = {}
                for name in ("a", "b"):
                    self._models[name] = name
                self._is_initialized = True

            def call(self, graph):
                if not self._is_initialized:
                    self._init_from_spec(graph)
                return graph

            def get_config(self):
                return {"models": self._models}
    """,
    "a method that returns the test": """
        import tensorflow as tf

        class Update(tf.keras.layers.Layer):
            def _needs_init(self):
                return not self._receivers

            def _do_init(self, spec):
                self._receivers = {"a"}
                self._senders = {"b"}

            def call(self, graph):
                if self._needs_init():
                    self._do_init(graph)
                return graph

            def get_config(self):
                return {"receivers": self._receivers, "senders": self._senders}
    """,
    "hasattr guard around a setter": """
        import tensorflow as tf

        class Scheduler(tf.keras.layers.Layer):
            def set_sigmas(self, n):
                self.sigmas = tf.linspace(0.0, 1.0, n)

            def call(self, x, n):
                if not hasattr(self, "sigmas"):
                    self.set_sigmas(n)
                return x * self.sigmas[0]

            def schedule(self):
                return self.sigmas
    """,
    "Keras build called from call": """
        import tensorflow as tf

        class Preprocessor(tf.keras.layers.Layer):
            def build(self, shape):
                self.packer = make_packer()
                self.ids = set([0, 1])
                self.ids.add(2)
                self.built = True

            def call(self, x):
                if not self.built:
                    self.build(None)
                return x

            def get_config(self):
                return {"ids": sorted(self.ids), "packer": self.packer}

        def make_packer():
            return object()
    """,
    "global set up once": """
        import tensorflow as tf

        _table = None

        @tf.function
        def lookup(x):
            global _table
            if _table is None:
                _table = tf.Variable(tf.zeros([3]))
            return tf.gather(_table, x)
    """,
    "init_scope": """
        import tensorflow as tf

        class Model(tf.keras.Model):
            def train_step(self, data):
                with tf.init_scope():
                    self.started = True
                return {}

            def was_started(self):
                return self.started
    """,
    # -- guards about something else: still reported -----------------------------------
    "a config flag is no one-time guard": """
        import tensorflow as tf

        class Model(tf.keras.Model):
            def _count(self):
                self.steps += 1  # TFG106

            def train_step(self, data):
                if self.config.count_steps:
                    self._count()
                return {}
    """,
    "a guard on a local is evaluated on every trace": """
        import tensorflow as tf

        @tf.function
        def step(x, training=True):
            if training:
                w = tf.Variable(1.0)  # TFG205
                x = x * w
            return x
    """,
    "a variable-creating helper under a config guard": """
        import tensorflow as tf

        class Model(tf.keras.Model):
            def _make_scale(self):
                return tf.Variable(1.0)  # TFG205

            def train_step(self, data):
                if self.use_scale:
                    data = data * self._make_scale()
                return {}
    """,
    "a guard that the helper never sets": """
        import tensorflow as tf

        history = []

        class Model(tf.keras.Model):
            def _record(self, loss):
                history.append(loss)  # TFG102

            def train_step(self, data):
                loss = tf.reduce_sum(data)
                if self.optimizer is not None:
                    self._record(loss)
                return {"loss": loss}
    """,
    "an accumulation after the guarded block": """
        import tensorflow as tf

        class Model(tf.keras.Model):
            def train_step(self, data):
                if getattr(self, "seen", None) is None:
                    self.seen = 0
                self.seen += 1  # TFG106
                return {}
    """,
    "guard on a setting the block only reads": """
        import tensorflow as tf

        class Server(tf.Module):
            def __init__(self, log_path=None, mode="dn"):
                self.log_path = log_path
                self.mode = mode
                self.seen = []

            @tf.function
            def __call__(self, x):
                if self.log_path:
                    with open(self.log_path, "a") as log:  # TFG108
                        log.write("served")  # TFG108
                if self.mode == "dn":
                    self.seen.append(x)  # TFG102
                elif self.mode == "up":
                    x = x * 2
                return x
    """,
    "file read by a cached loader or under a lazy guard": """
        import tensorflow as tf

        _cache = {}
        _vocab = None


        def get_plugin(path):
            if path in _cache:
                return _cache[path]
            with open(path, "rb") as f:
                plugin = f.read()
            _cache[path] = plugin
            return plugin


        def vocab():
            global _vocab
            if _vocab is None:
                _vocab = open("vocab.txt").read().split()
            return _vocab


        @tf.function
        def step(x):
            get_plugin("op.cu")
            words = vocab()
            with open("log.txt", "a") as f:  # TFG108
                f.write("step")  # TFG108
            return x * len(words)
    """,
    "a sample drawn once and kept on disk": """
        import os
        from pathlib import Path

        import numpy as np
        import tensorflow as tf

        SUPPORT = "support_idx.npy"


        def support_indices(n):
            if not os.path.exists(SUPPORT):
                idx = np.random.choice(n, 10, replace=False)
                np.save(SUPPORT, idx)
            else:
                idx = np.load(SUPPORT)
            return idx


        def split(n, out):
            if not Path(out).exists():
                with open(out, "w") as f:
                    f.write(str(np.random.permutation(n)))
            return np.loadtxt(out)


        def noisy(x, path):
            if not os.path.exists(path):
                np.random.seed(0)  # seeding draws nothing
            return x + np.random.normal()  # TFG103


        def cached(path):
            if os.path.isfile(path):  # a test that the block only reads: no setup
                return np.load(path) * np.random.rand()  # TFG103
            return np.zeros(3)


        @tf.function
        def step(x):
            idx = support_indices(100)
            order = split(100, "order.txt")
            return noisy(x, "seed.npy") + cached("c.npy") + idx[0] + order[0]
    """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_time_setup(name: str) -> None:
    source = dedent(CASES[name])
    got = {(line, code) for line, code in found(source) if code in _CODES}
    assert got == expected(source)


def test_a_global_initialised_lazily_is_not_stale() -> None:
    # TFG109: `if _TABLE is None: _TABLE = ...` in a loader sets the global up once; a
    # setter that can run between calls still makes the traced read stale.
    source = dedent(
        """
        import tensorflow as tf

        _TABLE = None
        _RATE = 0.1


        def _maybe_load():
            global _TABLE
            if _TABLE is None:
                _TABLE = tf.constant([1, 2, 3])
            return _TABLE


        def set_rate(value):
            global _RATE
            _RATE = value


        def decode(x):
            return tf.gather(_TABLE, x) * _RATE  # TFG109


        ds = tf.data.Dataset.range(3).map(decode)
        """
    )
    got = {(line, code) for line, code in found(source) if code == "TFG109"}
    assert got == expected(source)


OPTIONS = """
    import warnings

    _PY_OPS = False


    def warn_fallback(op_name):
        warnings.warn(f"the custom kernel of {op_name} failed to load, using Python ops")
        disable_custom_kernel()


    def disable_custom_kernel():
        global _PY_OPS
        _PY_OPS = True


    def is_custom_kernel_disabled():
        return _PY_OPS
"""

OPS = """
    import tensorflow as tf

    from pkg import options

    @tf.function
    def adjust(image):
        GUARD
            try:
                return tf.raw_ops.Identity(input=image)
            except tf.errors.NotFoundError:
                options.warn_fallback("adjust")
        return image * 1.0
"""


@pytest.mark.parametrize(
    ("guard", "reported"),
    [
        # The fallback switches the flag the guard tests, in the other module: setup.
        ("if not options.is_custom_kernel_disabled():", set()),
        # No guard: the warning and the switch run on every trace.
        ("if True:", {("options.py", "TFG107"), ("options.py", "TFG105")}),
    ],
)
def test_setup_across_modules(tmp_path: Path, guard: str, reported: set[tuple[str, str]]) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "options.py").write_text(dedent(OPTIONS))
    (tmp_path / "pkg" / "ops.py").write_text(dedent(OPS).replace("GUARD", guard))
    got = {
        (Path(f.path).name, f.code)
        for f in lint_paths([tmp_path])
        if f.code in ("TFG105", "TFG107")
    }
    assert got == reported
