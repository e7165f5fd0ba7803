"""TFG109: a rebinding harms only a traced function that something uses after it."""

from __future__ import annotations

import pytest

from tests.helpers import dedent, expected, found, notebook
from tflint_graph import lint_notebook, lint_source


def tfg109(source: str, path: str = "example.py") -> set[tuple[int, str]]:
    return {(line, code) for line, code in found(source, path) if code == "TFG109"}


# Each source marks its expected findings; everything unmarked must stay silent.
CASES = {
    "a factory building two models before either runs": """
        import tensorflow as tf

        class Scale(tf.keras.layers.Layer):
            def call(self, x):
                return tf.cast(x, DTYPE) * 2.0  # TFG109

        def build_model(dtype):
            global DTYPE
            DTYPE = dtype
            return tf.keras.Sequential([Scale()])

        models = {d: build_model(d) for d in ("float32", "float16")}
    """,
    "a callback function run only when training ends, after every change": """
        import tensorflow as tf

        class Averager(tf.keras.callbacks.Callback):
            def __init__(self):
                super().__init__()
                self.count = 0

            def on_epoch_end(self, epoch, logs=None):
                self.count = self.count + 1

            @tf.function
            def swap_in(self):
                for v in self.model.weights:
                    v.assign(v / self.count)

            def on_train_end(self, logs=None):
                self.swap_in()
    """,
    "a callback that wraps its function again, into an attribute, every epoch": """
        import tensorflow as tf

        class Ema(tf.keras.callbacks.Callback):
            def __init__(self):
                super().__init__()
                self.decay = 0.5

            def _step(self):
                for v in self.model.weights:
                    v.assign(v * self.decay)

            def on_epoch_begin(self, epoch, logs=None):
                self.update = tf.function(self._step)

            def on_epoch_end(self, epoch, logs=None):
                self.decay = min(0.999, self.decay + 0.25)

            def on_train_batch_end(self, batch, logs=None):
                self.update()
    """,
    "a configuration global the factory sets before it builds the model": """
        import tensorflow as tf

        def attention(q, k):
            return q / tf.sqrt(tf.cast(tf.shape(k)[-1], DTYPE))

        class Attention(tf.keras.layers.Layer):
            def call(self, x):
                return attention(x, x)

        class Encoder(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.attention = Attention()

            def call(self, x):
                return self.attention(x)

        def get_model(dtype):
            global DTYPE
            DTYPE = dtype
            inputs = tf.keras.Input([4])
            return tf.keras.Model(inputs, Encoder()(inputs))
    """,
    "a configuration global the builder sets before it maps the callback": """
        import tensorflow as tf

        def decode(x):
            return x * CFG["scale"]

        def build(config, files):
            global CFG
            CFG = config
            return tf.data.Dataset.from_tensor_slices(files).map(lambda x: decode(x))
    """,
    "a global a setter rebinds while the built model keeps running": """
        import tensorflow as tf

        class Scale(tf.keras.layers.Layer):
            def call(self, x):
                return x * FACTOR  # TFG109

        def set_factor(value):
            global FACTOR
            FACTOR = value

        def get_model():
            set_factor(1.0)
            inputs = tf.keras.Input([4])
            return tf.keras.Model(inputs, Scale()(inputs))
    """,
    "a pipeline a function extends step by step and returns, made again after the change": """
        import tensorflow as tf

        SIZES = [1, 2, 2, 1]

        def patches(x):
            return tf.image.extract_patches(x, SIZES, SIZES, [1, 1, 1, 1], "VALID")

        def get_dataset(images, shuffle=True):
            ds = tf.data.Dataset.from_tensor_slices(images)
            if shuffle:
                ds = ds.shuffle(8)
            ds = ds.map(patches)
            ds = ds.batch(2)
            return ds.prefetch(2)

        unused = get_dataset(tf.zeros([4, 1, 8, 8, 1]))
        train = get_dataset(tf.zeros([4, 1, 8, 8, 1]))
        for x in train:
            print(x.shape)

        SIZES = [1, 4, 4, 1]
        train = get_dataset(tf.zeros([4, 1, 8, 8, 1]))
        for x in train:
            print(x.shape)
    """,
    "a pipeline a function extends and returns, made before the change and read after": """
        import tensorflow as tf

        SIZES = [1, 2, 2, 1]

        def patches(x):
            return tf.image.extract_patches(x, SIZES, SIZES, [1, 1, 1, 1], "VALID")  # TFG109

        def get_dataset(images):
            ds = tf.data.Dataset.from_tensor_slices(images)
            ds = ds.map(patches)
            return ds.batch(2)

        train = get_dataset(tf.zeros([4, 1, 8, 8, 1]))
        SIZES = [1, 4, 4, 1]
        for x in train:
            print(x.shape)
    """,
    "a callback hook that wraps its function anew after each change": """
        import tensorflow as tf

        class Annealer(tf.keras.callbacks.Callback):
            def __init__(self, logits):
                super().__init__()
                self.tau = 1.0
                self.logits = logits
                self.kept = tf.function(self._kept)

            def _soft(self):
                return tf.reduce_max(tf.nn.softmax(self.logits / self.tau))

            def _kept(self):
                return tf.reduce_max(self.logits / self.tau)  # TFG109

            def on_epoch_end(self, epoch, logs=None):
                self.tau = max(0.1, self.tau * 0.5)
                soft = tf.function(self._soft)  # a new trace per epoch, TFG302's finding
                print(float(soft()), float(self.kept()))
    """,
    "a private setter that only the constructor calls is setup": """
        import tensorflow as tf

        class Synth(tf.keras.Model):
            def __init__(self, rate):
                super().__init__()
                self._configure(rate)

            def _configure(self, rate):
                self.hop = rate // 250
                self._frames()

            def _frames(self):
                self.frames = self.hop * 4

            @tf.function
            def call(self, x):
                return tf.signal.frame(x, self.frames, self.hop)

        class Preview(tf.keras.Model):
            def __init__(self, rate):
                super().__init__()
                self._configure(rate)

            def _configure(self, rate):
                self.hop = rate // 100

            @tf.function
            def call(self, x):
                return tf.signal.frame(x, 4, self.hop)

        class Resampler(tf.keras.Model):
            def __init__(self, rate):
                super().__init__()
                self._set_rate(rate)

            def _set_rate(self, rate):
                self.hop = rate // 250

            @tf.function
            def call(self, x):
                return tf.signal.frame(x, 4, self.hop)  # TFG109

        r = Resampler(16000)
        r(tf.zeros([1, 16000]))
        r._set_rate(8000)

        class Framer(tf.keras.Model):
            def __init__(self, rate):
                super().__init__()
                self.set_rate(rate)

            def set_rate(self, rate):  # public: another module may call it after a trace
                self.step = rate // 250

            @tf.function
            def call(self, x):
                return tf.signal.frame(x, 4, self.step)  # TFG109

        class Aliased(tf.keras.Model):
            def __init__(self, rate):
                super().__init__()
                self._set_size(rate)

            def _set_size(self, rate):
                self.size = rate // 250

            resize = _set_size  # the public name of the same method

            @tf.function
            def call(self, x):
                return tf.signal.frame(x, 4, self.size)  # TFG109
    """,
    "a pipeline made again after the change traces with the new value": """
        import tensorflow as tf

        SIZES = [1, 2, 2, 1]

        def patches(x):
            return tf.image.extract_patches(x, SIZES, SIZES, [1, 1, 1, 1], "VALID")

        def get_dataset(images):
            return tf.data.Dataset.from_tensor_slices(images).map(patches).batch(2)

        train = get_dataset(tf.zeros([4, 1, 8, 8, 1]))
        for x in train:
            print(x.shape)

        SIZES = [1, 4, 4, 1]
        train = get_dataset(tf.zeros([4, 1, 8, 8, 1]))
        for x in train:
            print(x.shape)
    """,
    "a pipeline made before the change and read after it": """
        import tensorflow as tf

        SIZES = [1, 2, 2, 1]

        def patches(x):
            return tf.image.extract_patches(x, SIZES, SIZES, [1, 1, 1, 1], "VALID")  # TFG109

        def get_dataset(images):
            return tf.data.Dataset.from_tensor_slices(images).map(patches)

        train = get_dataset(tf.zeros([4, 1, 8, 8, 1]))
        SIZES = [1, 4, 4, 1]
        for x in train:
            print(x.shape)
    """,
    "a pipeline made in a loop before the change the loop repeats": """
        import tensorflow as tf

        scale = 1.0

        def scaled(x):
            return x * scale  # TFG109

        def get_dataset(values):
            return tf.data.Dataset.from_tensor_slices(values).map(scaled)

        train = get_dataset([1.0, 2.0])
        for epoch in range(3):
            for x in train:
                print(x)
            scale = scale * 2
    """,
    "a Keras callback hook reassigning what its tf.function method reads": """
        import math

        import tensorflow as tf

        class MomentumUpdate(tf.keras.callbacks.Callback):
            def __init__(self, steps, start=0.99):
                super().__init__()
                self.steps, self.start, self.done = steps, start, 0
                self.tau = start

            def on_train_batch_end(self, batch, logs=None):
                self.update()
                self.tau = self.schedule()
                self.done += 1

            def schedule(self):
                turn = math.cos(math.pi * self.done / self.steps)
                return 1.0 - (1.0 - self.start) * (turn + 1) / 2

            @tf.function
            def update(self):
                for a, b in zip(self.model.weights, self.model.weights):
                    a.assign(self.tau * a + (1 - self.tau) * b)  # TFG109
    """,
    "a hook of a class that is no Keras callback, nothing calling it": """
        import tensorflow as tf

        class Momentum:
            def __init__(self):
                self.tau = 0.5

            def on_train_batch_end(self, batch, logs=None):
                self.tau = self.tau * 0.9

            @tf.function
            def update(self, v):
                v.assign(v * self.tau)
    """,
    "a callback hook storing what a method returns that is no number": """
        import tensorflow as tf

        class Momentum(tf.keras.callbacks.Callback):
            def __init__(self):
                super().__init__()
                self.tau = 0.5

            def on_epoch_end(self, epoch, logs=None):
                self.tau = self.pick(logs)

            def pick(self, logs):
                return logs

            @tf.function
            def update(self, v):
                v.assign(v * self.tau)
    """,
    "an attribute decayed under a threshold test in an eager loop": """
        import tensorflow as tf

        class Trainer:
            def __init__(self, weight):
                self.ds_weight = weight

            @tf.function
            def step(self, x):
                return -self.ds_weight * x  # TFG109

            def train(self, data, iterations):
                start = self.ds_weight
                for i, x in enumerate(data):
                    if self.ds_weight > 0:
                        self.ds_weight = start - (start / iterations) * i
                    self.step(x)

        Trainer(1.0).train([], 10)
    """,
    "an attribute a setter gives the numbers its callers pass": """
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self.w = 1.0
                self.model = None

            @tf.function
            def step(self, x):
                return self.w * x  # TFG109

            @tf.function
            def predict(self, x):
                return self.model(x)

            def set_w(self, w):
                self.w = w

            def set_model(self, model):
                self.model = model

        t = Trainer()
        t.step(tf.constant(1.0))
        t.set_w(0.5)
        t.set_model(tf.keras.Sequential())
    """,
    "a fresh tf.function made in the block that rebinds the global": """
        import tensorflow as tf

        scale = None
        offset = None
        step_fn = None

        def train_step(x):
            return x * scale + offset

        def train(stages, data):
            global scale, offset, step_fn
            scale = 1.0
            offset = 0.0
            step_fn = tf.function(train_step)
            for stage in stages:
                for x in data:
                    step_fn(x)
                if stage > 0:
                    scale = float(stage)
                    step_fn = tf.function(train_step, jit_compile=False)
                    offset = stage * 0.5
    """,
    "a fresh wrapper of a function that is a tf.function itself": """
        import tensorflow as tf

        generator = tf.keras.Sequential([tf.keras.layers.Dense(2)])

        @tf.function
        def train_step(z):
            return generator(z)  # TFG109

        def grow(units):
            global generator
            generator = tf.keras.Sequential([tf.keras.layers.Dense(units)])
            step_fn = tf.function(train_step)
            return step_fn
    """,
    "a helper another traced function also reads, which nothing wraps anew": """
        import tensorflow as tf

        noise_scale = 1.0

        def sample(z):
            return z * noise_scale  # TFG109

        def train_step(z):
            return sample(z) + 1.0

        @tf.function
        def eval_step(z):
            return sample(z)

        def set_stage(scale):
            global noise_scale
            noise_scale = scale
            step_fn = tf.function(train_step)
            return step_fn
    """,
    "the old wrapper called between the rebinding and the fresh one": """
        import tensorflow as tf

        scale = 1.0

        def train_step(x):
            return x * scale  # TFG109

        def train(stages, data):
            global scale
            step_fn = tf.function(train_step)
            for stage in stages:
                step_fn(data)
                scale = float(stage)
                step_fn(data)
                step_fn = tf.function(train_step)
    """,
    "method_of_a_class_first_constructed_by_the_rebinding": """
        import tensorflow as tf

        class Base(tf.keras.Model):
            def call(self, x):
                return x

        model = Base()

        class Trainer(Base):
            @tf.function
            def train_step(self, data):
                x, y = data
                return tape_free(model.trainable_variables, x)

        def tape_free(variables, x):
            return x

        model = Trainer()  # builds the only instance: the first trace sees this model
        model.compile(loss="mse")
        model.fit(tf.ones([2, 2]), tf.ones([2, 2]))
        """,
    "method_of_a_class_used_before_the_rebinding": """
        import tensorflow as tf

        class Base(tf.keras.Model):
            def call(self, x):
                return x

        model = Base()

        class Trainer(Base):
            @tf.function
            def train_step(self, data):
                x, y = data
                return {"n": len(model.trainable_variables) + 0 * x}  # TFG109

        trainer = Trainer()
        trainer.compile(loss="mse")
        trainer.fit(tf.ones([2, 2]), tf.ones([2, 2]))
        model = Trainer()
        trainer.fit(tf.ones([2, 2]), tf.ones([2, 2]))
        """,
    "strategy_run_before_the_rebinding": """
        import tensorflow as tf

        strategy = tf.distribute.MirroredStrategy()
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

        @tf.function
        def train_step(x):
            return model(x)

        for _ in range(10):
            strategy.run(train_step, args=(tf.ones([1, 2]),))

        model = tf.keras.models.load_model("phase1.keras")

        @tf.function
        def train_step(x):
            return model(x) * 2

        strategy.run(train_step, args=(tf.ones([1, 2]),))
        """,
    "strategy_run_after_the_rebinding": """
        import tensorflow as tf

        strategy = tf.distribute.MirroredStrategy()
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

        @tf.function
        def train_step(x):
            return model(x)  # TFG109

        strategy.run(train_step, args=(tf.ones([1, 2]),))
        model = tf.keras.models.load_model("phase1.keras")
        strategy.run(train_step, args=(tf.ones([1, 2]),))
        """,
    "a_call_earlier_in_the_loop_that_rebinds": """
        import tensorflow as tf

        scale = 1.0

        @tf.function
        def step(x):
            return x * scale  # TFG109

        for epoch in range(3):
            step(tf.ones([2]))
            scale = scale * 0.5
        """,
    "used_through_a_wrapper_called_before_the_rebinding": """
        import numpy as np
        import tensorflow as tf

        dtype = tf.float64

        def pricer_fn(x):
            return tf.cast(x, dtype) * 2

        @tf.function
        def vectorized_pricer(xs):
            return tf.vectorized_map(pricer_fn, xs)

        prices = vectorized_pricer(tf.ones([3]))

        for _ in range(100):
            dtype = np.float32
            other = tf.ones([3], dtype=dtype)
        """,
    "used_through_a_wrapper_called_after_the_rebinding": """
        import tensorflow as tf

        factor = 2.0

        def scaled(x):
            return x * factor  # TFG109

        @tf.function
        def batch(xs):
            return tf.vectorized_map(scaled, xs)

        batch(tf.ones([3]))
        factor = 3.0
        batch(tf.ones([3]))
        """,
    "used_from_a_method": """
        import tensorflow as tf

        factor = 2.0

        @tf.function
        def scaled(x):
            return x * factor  # TFG109

        class Runner:
            def run(self, x):
                return scaled(x)

        scaled(tf.ones([3]))
        factor = 3.0
        """,
    "a_stored_tf_function_called_after_the_rebinding": """
        import tensorflow as tf

        factor = 2.0

        def scaled(x):
            return x * factor  # TFG109

        fast = tf.function(scaled)
        fast(tf.ones([3]))
        factor = 3.0
        fast(tf.ones([3]))
        """,
    "closures_traced_at_once_before_the_local_changes": """
        import tensorflow as tf

        def surface(grid, times):
            grid = tf.expand_dims(grid, 0)

            def map_times(ts):
                def at(t):
                    return tf.transpose(grid) * t

                return tf.vectorized_map(at, ts)

            def map_grad(ts):
                def at(t):
                    return tf.transpose(grid) * t

                fn_grad = lambda t: tf.math.square(at(t))
                return tf.vectorized_map(fn_grad, ts)

            values = map_times(times)
            grads = map_grad(times)
            grid = tf.squeeze(grid)
            return values, grads, grid
        """,
    "a_closure_used_again_after_the_local_changes": """
        import tensorflow as tf

        def surface(grid, times):
            grid = tf.expand_dims(grid, 0)

            def map_times(ts):
                def at(t):
                    return grid * t  # TFG109

                return tf.vectorized_map(at, ts)

            first = map_times(times)
            grid = grid * 2
            return first, map_times(times)
        """,
    "a_closure_in_a_loop_that_changes_the_local": """
        import tensorflow as tf

        def train(xs):
            rate = 0.1
            step = tf.function(lambda x: x * rate)  # TFG109
            for x in xs:
                step(x)
                rate = rate / 2
        """,
    "set_again_to_the_same_constant": """
        import tensorflow as tf

        num_samples = 200000

        @tf.function
        def sample(seed):
            return tf.random.stateless_normal([num_samples], seed)

        sample(tf.constant([1, 2]))
        num_samples = 200000
        sample(tf.constant([1, 2]))
        """,
    "set_again_to_the_same_list_of_constants": """
        import tensorflow as tf

        KEPT = [0, 29, 99]

        @tf.function
        def keep(labels):
            return tf.reduce_any(labels[:, None] == tf.constant(KEPT), axis=1)

        keep(tf.constant([1, 29]))
        KEPT = [0, 29, 99]
        keep(tf.constant([1, 29]))
        """,
    "set_again_to_another_list": """
        import tensorflow as tf

        KEPT = [0, 29, 99]

        @tf.function
        def keep(labels):
            return tf.reduce_any(labels[:, None] == tf.constant(KEPT), axis=1)  # TFG109

        keep(tf.constant([1, 29]))
        KEPT = [0, 29]
        keep(tf.constant([1, 29]))
        """,
    "set_again_to_another_constant": """
        import tensorflow as tf

        num_samples = 200000

        @tf.function
        def sample(seed):
            return tf.random.stateless_normal([num_samples], seed)  # TFG109

        sample(tf.constant([1, 2]))
        num_samples = 1000
        sample(tf.constant([1, 2]))
        """,
    # A rebinding before anything can run the function is setup; one between two uses is not.
    "rebound_before_the_loss_is_compiled": """
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        image_loss = tf.keras.losses.MeanSquaredError()
        atlas_loss = lambda _, y_pred: image_loss(model.atlas, y_pred)
        losses = [image_loss, atlas_loss]
        if n_devices > 1:
            model = wrap_for_devices(model)
        model.compile(optimizer="adam", loss=losses)
        model.fit(data, epochs=3)
        """,
    "rebound_after_the_loss_is_compiled": """
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        image_loss = tf.keras.losses.MeanSquaredError()
        atlas_loss = lambda _, y_pred: image_loss(model.atlas, y_pred)  # TFG109
        model.compile(optimizer="adam", loss=[image_loss, atlas_loss])
        model.fit(data, epochs=3)
        model = wrap_for_devices(model)
        model.fit(data, epochs=3)
        """,
    "set_before_the_first_call_and_after_the_last": """
        import tensorflow as tf

        @tf.function
        def step(x):
            return x * scale

        scale = 2.0
        for _ in range(3):
            step(tf.ones([2]))
        scale = 5.0
        """,
    "set_in_a_loop_that_ends_before_the_first_call": """
        import tensorflow as tf

        @tf.function
        def step(x):
            return x * scale

        for scale in (1.0, 2.0):
            print(scale)
        step(tf.ones([2]))
        """,
    "set_between_two_calls": """
        import tensorflow as tf

        @tf.function
        def step(x):
            return x * scale  # TFG109

        scale = 2.0
        step(tf.ones([2]))
        scale = 5.0
        step(tf.ones([2]))
        """,
    "never_used_and_defined_again": """
        import tensorflow as tf

        loss_fn = tf.keras.losses.MeanSquaredError()

        @tf.function
        def train_step(x, y):
            return loss_fn(y, x)

        @tf.function
        def train_step(x, y):
            return loss_fn(y, x) * 2

        for x in range(3):
            train_step(tf.ones([2]), tf.ones([2]))
        loss_fn = tf.keras.losses.BinaryCrossentropy()
        """,
    "loss_minimized_by_a_step_used_only_before_the_change": """
        import tensorflow as tf

        opt = tf.keras.optimizers.Adam()
        w = tf.Variable(1.0)
        last = tf.Variable(0.0)

        @tf.function
        def loss():
            value = w * w
            last.assign(value)
            return value

        @tf.function
        def step():
            opt.minimize(loss, [w])

        for _ in range(10):
            step()
        last = tf.Variable(0.0)
        """,
    "loss_minimized_by_a_step_used_after_the_change": """
        import tensorflow as tf

        opt = tf.keras.optimizers.Adam()
        w = tf.Variable(1.0)
        last = tf.Variable(0.0)

        @tf.function
        def loss():
            value = w * w
            last.assign(value)  # TFG109
            return value

        @tf.function
        def step():
            opt.minimize(loss, [w])

        step()
        last = tf.Variable(0.0)
        step()
        """,
    "handed_on_before_the_change": """
        import tensorflow as tf

        @tf.function
        def step(x):
            return x * scale  # TFG109

        scale = 2.0
        trainer = Trainer(step)
        scale = 5.0
        trainer.run()
        """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name: str) -> None:
    source = dedent(CASES[name])
    assert tfg109(source) == expected(source)


def test_notebook_cells_in_order() -> None:
    # Phase 1 trains with `train_step`, a later cell reloads the model and defines the
    # phase-2 step: nothing runs the phase-1 graph with the new model.  The evaluation step
    # is run again after its metric is replaced, and is reported.
    source = notebook(
        "import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
        "generator = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
        "metric = tf.keras.metrics.Mean()",
        "@tf.function\ndef train_step(x):\n    return generator(x)\n\n"
        "@tf.function\ndef eval_step(x):\n    metric(x)\n    return x",
        "for _ in range(3):\n    strategy.run(train_step, args=(tf.ones([1, 2]),))\n"
        "    strategy.run(eval_step, args=(tf.ones([1, 2]),))",
        "generator = tf.keras.models.load_model('phase1.keras')\nmetric = tf.keras.metrics.Mean()",
        "@tf.function\ndef train_step(x):\n    return generator(x) * 2",
        "strategy.run(train_step, args=(tf.ones([1, 2]),))\n"
        "strategy.run(eval_step, args=(tf.ones([1, 2]),))",
    )
    got = [
        (f.cell, f.line, f.message.split()[0])
        for f in lint_notebook(source, "train.ipynb")
        if f.code == "TFG109"
    ]
    assert got == [(2, 7, "metric")]


def test_a_lambda_closing_over_its_loop_variable_is_told_late_binding() -> None:
    # Keras calls the Lambda's function after the loops ran: the last `k`, traced or eager.
    source = dedent(
        """
        from tensorflow.keras.layers import Input, Lambda


        def split(n, m):
            x = Input(shape=(4, n))
            outs = []
            for k in range(n):
                outs.append(Lambda(lambda z: z[..., k])(x))  # TFG109
            for k in range(m):
                outs.append(Lambda(lambda z, k=k: z[..., k] * 2)(x))
            return outs
        """
    )
    got = [f for f in lint_source(source, "split.py") if f.code == "TFG109"]
    assert [f.line for f in got] == [8]
    assert "loop around this function (line 7)" in got[0].message
    assert "k=k" in got[0].message
    assert "tf.Variable" not in got[0].message


@pytest.mark.parametrize(
    ("update", "reported"),
    [
        ("self.pl_mean = 0.99 * self.pl_mean + 0.01 * np.mean(d)", True),
        ("self.pl_mean = np.mean(d) if self.pl_mean == 0 else self.pl_mean", True),
        ("self.pl_mean = np.mean(d)", True),
        # a container of the results: not a number the graph took in
        ("self.pl_mean = list(d)", False),
    ],
)
def test_an_eager_running_mean_read_by_the_step_is_stale(update: str, reported: bool) -> None:
    # The step is traced while `pl_mean` is 0: the penalty never moves afterwards.
    source = dedent(
        f"""
        import numpy as np
        import tensorflow as tf


        class Trainer:
            def __init__(self):
                self.pl_mean = 0

            def train(self, batch):
                d = self.train_step(batch)
                {update}

            @tf.function
            def train_step(self, batch):
                return tf.reduce_mean(batch) - self.pl_mean


        trainer = Trainer()
        trainer.train(tf.ones([2]))
        """
    )
    got = [f for f in lint_source(source, "gan.py") if f.code == "TFG109"]
    assert bool(got) is reported
