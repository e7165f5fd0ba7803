"""Per-trace scratch and who observes state (SPEC §2, ``model.state``): TFG102/TFG106 report
a write only when something sees it across calls — accumulation, a read earlier in the same
call, eager code reading it later — and say what is wrong with the value held."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import dedent, expected, found
from tflint_graph import lint_paths, lint_source

_CODES = ("TFG102", "TFG106")

CASES = {
    "scratch dict reset at the top of call": """
        import tensorflow as tf

        class Backbone(tf.keras.Model):
            def call(self, x):
                self.endpoints = {}
                for i in range(3):
                    x = x * 2
                    self.endpoints["block_%d" % i] = x
                self.endpoints.update({"features": x})
                return self.endpoints["features"]
    """,
    "a mode flag the step sets on a model it is handed": """
        import tensorflow as tf

        @tf.function
        def train_step(model, optimizer, x):
            model.trainable = True
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        @tf.function
        def gan_step(generator, discriminator, z):
            discriminator.trainable = False
            return discriminator(generator(z))

        class Settings:
            verbose = True

        SETTINGS = Settings()

        @tf.function
        def quiet_step(x):
            SETTINGS.verbose = False  # every call would store the same literal
            return x * 2.0

        @tf.function
        def frozen_features_step(x, extractor, head):
            features = extractor(x)  # another object may hold head (a model, its backbone)
            head.trainable = False  # TFG106
            return head(features)

        @tf.function
        def wrapped_step(x, run, head):
            y = run(head, x)  # handed the object: it may read the flag a trace left
            head.trainable = False  # TFG106
            return y
    """,
    "a handed object's flag read before it is set, or set in a branch, or counted": """
        import tensorflow as tf

        @tf.function
        def step(state, x):
            if state.first:
                x = x * 2.0
            state.first = False  # TFG106
            return x

        @tf.function
        def branch(state, x):
            if tf.reduce_sum(x) > 0:
                state.positive = True  # TFG106
            else:
                state.positive = False  # TFG106
            return x

        @tf.function
        def count(state, x):
            state.calls += 1  # TFG106
            state.last = x  # TFG106
            return x

        @tf.function
        def decode_step(decoder, x):
            y = decoder(x)  # its call may read the flag a trace left
            decoder.first_step = False  # TFG106
            return y
    """,
    "a flag eager code sets back between the calls": """
        import tensorflow as tf

        discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])

        @tf.function
        def train_generator(noise):
            discriminator.trainable = False  # TFG106
            return discriminator(noise)

        for step in range(3):
            discriminator.trainable = True
            train_generator(tf.ones([2, 2]))
    """,
    "scratch read by the loss hook Keras's step calls after the model": """
        import keras

        class Tagger(keras.Model):
            def call(self, x):
                self._last = self.dense(x)
                self._lengths = keras.ops.sum(x, axis=1)  # TFG106
                return self._last

            def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
                base = super().compute_loss(x, y, y_pred, sample_weight)
                return base + keras.ops.mean((self._last - y) ** 2)

            def compute_metrics(self, x, y, y_pred, sample_weight=None):
                return {"length": keras.ops.mean(self._lengths)}

            def decoded(self):
                return self._lengths.numpy()
    """,
    "a loss hook reading what only the training trace stored, or called eagerly": """
        import keras
        import tensorflow as tf

        class VAE(keras.Model):
            def call(self, x, training=False):
                h = self.encoder(x)
                if training:
                    self.kl = tf.reduce_mean(tf.square(h))  # TFG106
                return self.decoder(h)

            def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
                return keras.ops.mean((y_pred - y) ** 2) + 0.1 * self.kl

        class Tagger(keras.Model):
            def call(self, x):
                self.potentials = self.dense(x)  # TFG106
                return self.potentials

            def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
                return keras.ops.mean((self.potentials - y) ** 2)

        tagger = Tagger()
        print(tagger.compute_loss(None, 1.0, tagger(tf.ones([1, 2]))))
    """,
    "a default filled in by a conditional expression, then kept": """
        import tensorflow as tf

        class Block(tf.keras.layers.Layer):
            def __init__(self, w=None):
                super().__init__()
                self.w = w
                self.k = 0

            def call(self, x):
                self.w = 8 if self.w is None else self.w
                self.k = self.k + 1 if self.k < 5 else self.k  # TFG106
                return x * self.w

            def width(self):
                return self.w

        class Gate(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.t = 1.0
                self.scale = None

            def call(self, x):
                self.t = 0.5 if tf.reduce_max(x) > self.t else self.t  # TFG106
                self.scale = 2.0 if self.scale is None else self.scale  # TFG106
                return x * self.scale

            def reset(self):
                self.scale = None

            def describe(self):
                return f"{self.t} {self.scale}"
    """,
    "a list emptied and filled per trace and read eagerly: reported where it is filled": """
        import tensorflow as tf

        class TabNet(tf.keras.Model):
            def call(self, x):
                self._masks = []
                self._by_step = {}
                for i in range(3):
                    m = tf.nn.softmax(x)
                    self._masks.append(m)  # TFG102
                    self._by_step[i] = m  # TFG102
                self._total = tf.add_n(self._masks)  # TFG106
                return x

            @property
            def masks(self):
                return self._masks, self._by_step, self._total
    """,
    "scratch read by a custom-gradient function nested in a traced helper": """
        import tensorflow as tf

        class Attention(tf.keras.layers.Layer):
            def _forward(self, x):
                @tf.custom_gradient
                def forward(x):
                    y = tf.reshape(x, [self.batch, self.seq_len, -1])

                    def grad_fn(upstream):
                        return tf.reshape(upstream, [self.batch * self.seq_len, -1])

                    return y, grad_fn

                return forward(x)

            def call(self, inputs):
                shape = tf.shape(inputs)
                self.batch = shape[0]
                self.seq_len = shape[1]
                return self._forward(inputs)
    """,
    "scratch attribute read by a traced helper": """
        import tensorflow as tf

        class Decoder(tf.keras.layers.Layer):
            def _pad(self, x):
                return tf.pad(x, [[0, 0], [0, self.cur_len]])

            def call(self, x, training=None):
                self.cur_len = x.shape[1]
                self.training = training
                return self._pad(x)
    """,
    "Keras's build flag": """
        import tensorflow as tf

        class Attention(tf.keras.layers.Layer):
            def call(self, inputs, setup_memory=False):
                if setup_memory:
                    self.built = False  # build again once the query arrives
                return inputs

            def build(self, shape):
                if not self.built:
                    self.scale = self.add_weight(shape=())
    """,
    "a value derived from what this call stored": """
        import tensorflow as tf

        class Actor(tf.keras.layers.Layer):
            def call(self, s):
                self.mu, self.sigma = self.net(s)
                self.mu, self.sigma = self.mu * 2.0, self.sigma + 1e-5
                return self.mu + self.sigma
    """,
    "derived in a branch from a value set before it": """
        import tensorflow as tf

        class Head(tf.keras.layers.Layer):
            def call(self, x, training=None):
                self.logits = self.dense(x)
                if training:
                    self.logits = self.logits * 0.9
                return self.logits
    """,
    "set only in a branch, then derived: carried over": """
        import tensorflow as tf

        class Head(tf.keras.layers.Layer):
            def call(self, x, training=None):
                if training:
                    self.logits = self.dense(x)
                self.logits = self.logits * 0.9  # TFG106
                return self.logits
    """,
    "an eager method that stores its own value before reading": """
        import tensorflow as tf

        class Worker:
            @tf.function
            def update(self, s):
                self.mu = self.actor(s)
                return tf.reduce_sum(self.mu)

            def act(self, s):
                self.mu = self.actor(s)
                return self.mu.numpy()
    """,
    "an eager method that reads before storing": """
        import tensorflow as tf

        class Worker:
            @tf.function
            def update(self, s):
                self.mu = self.actor(s)  # TFG106
                return tf.reduce_sum(self.mu)

            def act(self, s):
                previous = self.mu.numpy()
                self.mu = self.actor(s)
                return previous
    """,
    "a library object's attribute of the same name": """
        import argparse
        import tensorflow as tf

        parser = argparse.ArgumentParser()
        args = parser.parse_args()

        class Worker:
            @tf.function
            def update(self, s):
                self.test = s[0]
                return self.test * 2

        if args.test:
            Worker().update(tf.ones([2]))
    """,
    "an instance of the class read at module level": """
        import tensorflow as tf

        class Worker:
            @tf.function
            def update(self, s):
                self.test = s[0]  # TFG106
                return self.test * 2

        worker = Worker()
        worker.update(tf.ones([2]))
        print(worker.test)
    """,
    "a list filled in call and emptied at its end": """
        import tensorflow as tf

        class DenseBlock(tf.keras.layers.Layer):
            def __init__(self, layers):
                super().__init__()
                self.blocks = layers
                self.features = []

            def call(self, x):
                self.features.append(x)
                for block in self.blocks:
                    self.features.append(block(x))
                    x = tf.concat(self.features, axis=-1)
                self.features.clear()
                return x
    """,
    "emptied at the end, but an early return skips it": """
        import tensorflow as tf

        class DenseBlock(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.features = []

            def call(self, x, training=None):
                self.features.append(x)  # TFG102
                if training:
                    return x
                self.features.clear()  # TFG102
                return x
    """,
    "which inputs a trace was given, read by eager code": """
        import tensorflow as tf

        class Forest(tf.keras.Model):
            def call(self, inputs, weights=None):
                self._weighted = weights is not None
                self._feature_keys = sorted(list(inputs.keys()))
                return tf.add_n([inputs[k] for k in self._feature_keys])

            def describe(self):
                return self._weighted, self._feature_keys
    """,
    "a tensor comparison stored for eager code is still reported": """
        import tensorflow as tf

        class Forest(tf.keras.Model):
            def call(self, inputs):
                self._positive = inputs > 0  # TFG106
                return inputs

            def describe(self):
                return self._positive
    """,
    "a dead write": """
        import tensorflow as tf

        class Augment(tf.Module):
            @tf.function
            def __call__(self, image):
                size = tf.shape(image)[0]
                self.mask_size = size
                return image
    """,
    "a method of the same name called elsewhere is no read": """
        import tensorflow as tf

        class Mechanism(tf.keras.layers.Layer):
            def call(self, memory):
                self.values = memory * 2
                return self.values

        def total(stats):
            return sum(stats.values())
    """,
    "read before the write carries state between calls": """
        import tensorflow as tf

        class Smoother(tf.keras.layers.Layer):
            def call(self, x):
                prev = self.prev
                self.prev = x  # TFG106
                return (x + prev) / 2
    """,
    "accumulating assignment": """
        import tensorflow as tf

        class Model(tf.keras.Model):
            def train_step(self, data):
                self.total = self.total + tf.reduce_sum(data)  # TFG106
                self.count += 1  # TFG106
                return {}
    """,
    "a tensor that eager code reads": """
        import tensorflow as tf

        class Model(tf.keras.Model):
            def train_step(self, data):
                self.last_loss = tf.reduce_mean(data)  # TFG106
                return {}

        class Logger(tf.keras.callbacks.Callback):
            def on_epoch_end(self, epoch, logs=None):
                print(self.model.last_loss)
    """,
    "scratch dict that eager code reads": """
        import tensorflow as tf

        class Backbone(tf.keras.Model):
            def call(self, x):
                self.endpoints = {}  # empty: the leak is reported where it is filled
                self.endpoints["stem"] = x  # TFG102
                return x

            def feature_names(self):
                return list(self.endpoints)
    """,
    "a dict of tensors stored at once, read eagerly": """
        import tensorflow as tf

        class Backbone(tf.keras.Model):
            def call(self, x):
                self.endpoints = {"stem": x, "out": x * 2}  # TFG106
                return x

            def feature_names(self):
                return list(self.endpoints)
    """,
    "named slots overwritten by every trace": """
        import tensorflow as tf

        class Head(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.endpoints = {}

            def call(self, x):
                self.endpoints["head"] = x
                for i in range(2):
                    self.endpoints["block_%s" % i] = x
                    self.endpoints[f"out_{i}"] = x
                return x

        class Model(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.head = Head()

            def call(self, x):
                y = self.head(x)
                return y + self.head.endpoints["head"]
    """,
    "a slot per call is a cache filled per call": """
        import tensorflow as tf

        class Trainer(tf.Module):
            def __init__(self):
                self.cache = {}

            @tf.function
            def run(self, key, x):
                self.cache[key] = x  # TFG102
                self.cache["total"] += x  # TFG102
                return x
    """,
    "a container created outside the call": """
        import tensorflow as tf

        class Trainer(tf.Module):
            def __init__(self):
                self.history = []

            @tf.function
            def step(self, x):
                self.history.append(x)  # TFG102
                return x
    """,
    "a one-way flag stores the same literal on every call": """
        import tensorflow as tf

        class Wrapper(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self._memory_ready = False

            def call(self, memory):
                self._memory_ready = True
                return memory

            @property
            def memory_ready(self):
                return self._memory_ready
    """,
    "a flag that eager code puts back": """
        import tensorflow as tf

        class Wrapper(tf.keras.layers.Layer):
            def call(self, memory):
                self._fresh = False  # TFG106
                return memory

            def reset(self):
                self._fresh = True

            def is_fresh(self):
                return self._fresh
    """,
    "eager code reads only the static shape": """
        import tensorflow as tf

        class Mechanism(tf.keras.layers.Layer):
            def call(self, memory):
                self.values = tf.nn.relu(memory)
                return self.values

            def depth(self):
                return self.values.shape[-1]
    """,
    "static shapes kept for an eager reader": """
        import tensorflow as tf

        class Backbone(tf.keras.Model):
            def call(self, x):
                endpoints = {"2": x, "3": tf.nn.avg_pool2d(x, 2, 2, "VALID")}
                self._output_specs = {k: v.get_shape() for k, v in endpoints.items()}
                self._last = endpoints["3"]  # TFG106
                return endpoints

            @property
            def output_specs(self):
                return self._output_specs, self._last
    """,
    "static shapes made by a helper of the module": """
        import tensorflow as tf

        def _shape_tuple(t):
            if hasattr(t, "shape"):
                shape = t.shape
                if shape.rank is not None:
                    return tuple(shape.as_list())
                return None
            return None

        def _doubled(t):
            return t * 2

        class Seq(tf.keras.Model):
            def call(self, inputs):
                self._input_shape = tf.nest.map_structure(_shape_tuple, inputs)
                self._first_shape = _shape_tuple(inputs)
                self._doubled = tf.nest.map_structure(_doubled, inputs)  # TFG106
                return inputs

            def get_config(self):
                return {"shapes": (self._input_shape, self._first_shape, self._doubled)}
    """,
    "metadata set on a symbolic tensor of the trace": """
        import tensorflow as tf

        class Functional(tf.keras.Model):
            def _conform(self, tensor, ref):
                if isinstance(tensor, tf.Tensor):
                    history = getattr(tensor, "_keras_history", None)
                    if tensor.shape.rank == ref.shape.rank + 1:
                        tensor = tf.squeeze(tensor, axis=-1)
                    if history is not None:
                        tensor._keras_history = history
                return tensor

            def _tag(self, x: tf.Tensor, holder):
                x._origin = "input"
                holder.last = x  # TFG106
                return x

            def call(self, x):
                return self._tag(self._conform(x, x), self)
    """,
    "a helper computing with the attribute, for subclasses' hooks": """
        import tensorflow as tf

        class MessagePassing(tf.keras.layers.Layer):
            def call(self, x, edges):
                self.targets = edges[:, 1]
                return self.message(x)

            def message(self, x):
                return x

            def get_targets(self, x):
                return tf.gather(x, self.targets)
    """,
    "an accessor with an argument reads the tensor eagerly": """
        import tensorflow as tf

        class MessagePassing(tf.keras.layers.Layer):
            def call(self, x, edges):
                self.targets = edges[:, 1]  # TFG106
                return x

            def target_at(self, i):
                return self.targets[i].numpy()
    """,
    "a helper that eager code calls": """
        import tensorflow as tf

        class MessagePassing(tf.keras.layers.Layer):
            def call(self, x, edges):
                self.targets = edges[:, 1]  # TFG106
                return x

            def get_targets(self, x):
                return tf.gather(x, self.targets)

        def inspect(layer, x):
            return layer.get_targets(x)
    """,
    "a module object's attribute": """
        import tensorflow as tf

        class Stats:
            count = 0

        stats = Stats()

        @tf.function
        def step(x):
            stats.count = x.shape[0]  # TFG106
            return x
    """,
    "a container the traced caller makes and a helper fills": """
        import tensorflow as tf

        SEEN = []

        def fill(x, out):
            out.append(x * 2)

        def fill_twice(x, out):
            fill(x, out)
            fill(x + 1, out)

        class Collector:
            def collect(self, x, out):
                out.append(x)

        collector = Collector()

        def keep(x, out):
            out.append(x)  # TFG102

        @tf.function
        def step(x):
            parts = []
            fill_twice(x, parts)
            collector.collect(x, parts)
            keep(x, SEEN)
            return tf.stack(parts)
    """,
    "an object a helper makes when none is given": """
        import tensorflow as tf

        class Program:
            pass

        def serialize(x, msg=None):
            if msg is None:
                msg = Program()
            msg.name = "program"
            _fill_circuit(x, msg.circuit)
            return msg

        def _fill_circuit(x, circuit):
            circuit.strategy = 1

        def annotate(x, msg=None):
            msg.name = x.name  # TFG106

        CONFIG = Program()

        @tf.function
        def step(x):
            serialize(x)
            annotate(x, CONFIG)
            return x
    """,
    "object of the enclosing trace set in a cond branch": """
        import tensorflow as tf

        class Box:
            pass

        SHARED = Box()

        @tf.function
        def run(it):
            empty = tf.experimental.Optional.empty(None)
            box = Box()

            def has_next():
                nxt = tf.experimental.Optional.from_value(next(it))
                empty._element_spec = nxt.element_spec
                box.last = nxt
                SHARED.last = nxt  # TFG106
                return nxt

            return tf.cond(tf.constant(True), has_next, lambda: empty)
    """,
    "loop variable of a while_loop body set in a helper": """
        import tensorflow as tf

        @tf.function
        def run(n):
            empty = tf.experimental.Optional.empty(None)

            def step(i, opt):
                opt._element_spec = empty.element_spec
                return i + 1, opt

            def body(i, opt):
                return step(i, opt)

            return tf.while_loop(lambda i, o: i < n, body, [0, empty])
    """,
    "object strategy.run hands on as given": """
        import tensorflow as tf

        strategy = tf.distribute.get_strategy()

        @tf.function
        def distributed(model, x):
            def step(m, batch):
                m.last_batch = batch  # TFG106
                return m(batch)

            return strategy.run(step, args=(model, x))
    """,
    "count of the inputs read by compute_output_shape": """
        import keras

        class Merge(keras.layers.Layer):
            def call(self, args):
                if not isinstance(args, (list, tuple)):
                    args = [args]
                self.n_inputs = len(args)
                return args[0]

            def compute_output_shape(self, input_shape):
                return input_shape if self.n_inputs == 1 else input_shape[0]
    """,
    "scores read after an eager call of the model": """
        import tensorflow as tf

        class Attention(tf.keras.layers.Layer):
            def call(self, x):
                self.last_scores = tf.nn.softmax(x)
                return x * self.last_scores

        class Captioner(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.blocks = [Attention(), Attention()]

            def call(self, x):
                for block in self.blocks:
                    x = block(x)
                return x

            def generate(self, x):
                return self(x)

        model = Captioner()
        model.compile(loss="mse")
        model.fit(tf.ones([4, 3]), tf.ones([4, 3]))
        model(tf.ones([1, 3]))  # runs call eagerly: the attribute holds this call's tensor
        first = model.blocks[0].last_scores
        model.generate(tf.ones([1, 3]))  # a method of the module: eager too
        maps = [block.last_scores for block in model.blocks]
    """,
    "scores read after fit traced the model": """
        import tensorflow as tf

        class Attention(tf.keras.layers.Layer):
            def call(self, x):
                self.last_scores = tf.nn.softmax(x)  # TFG106
                return x * self.last_scores

        layer = Attention()
        model = tf.keras.Sequential([layer])
        model.compile(loss="mse")
        model(tf.ones([1, 3]))
        model.fit(tf.ones([4, 3]), tf.ones([4, 3]))  # the last use traced call
        maps = model.layers[0].last_scores
    """,
    "list argument of a Keras 3 call": """
        import keras

        class Block(keras.layers.Layer):
            def call(self, x, skips, cache=None):
                skips.append(x)  # Keras 3 hands call a rebuilt list: nothing leaks
                if cache is not None:
                    cache["last"] = x
                return x
    """,
    "list argument of a Keras 2 call": """
        import tf_keras

        class Block(tf_keras.layers.Layer):
            def call(self, x, skips):
                skips.append(x)  # TFG102
                return x
    """,
    "a dict made fresh by a reset method the traced call runs first": """
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self.losses = {}
                self.seen = {}
                self.history = []

            def reset_losses(self):
                self.losses = {"pixel": 0.0, "smooth": 0.0}

            def maybe_reset(self, full):
                if full:
                    self.seen = {}

            def compute(self, x):
                self.reset_losses()
                self.maybe_reset(False)
                for s in range(2):
                    self.losses["pixel"] += tf.reduce_mean(x) * (s + 1)
                self.losses["total"] = self.losses["pixel"] + self.losses["smooth"]
                self.seen[len(self.seen)] = x  # TFG102
                return self.losses

            @tf.function
            def grad(self, x):
                losses = self.compute(x)
                self.history.append(losses["total"])  # TFG102
                return losses

            @tf.function
            def late(self, x):
                self.losses.update(late=x)  # TFG102
                self.reset_losses()
                return x

        class Running:
            def __init__(self):
                self.totals = {}
                self.sums = {}

            def maybe_reset(self):
                if self.totals:
                    return
                self.totals = {"loss": 0.0}

            def reset_sums(self):
                self.sums = {"loss": 0.0}

            @tf.function
            def step(self, x):
                self.maybe_reset()
                self.totals["loss"] += tf.reduce_sum(x)  # TFG102
                self.reset_sums()
                self.sums["loss"] += tf.reduce_sum(x)  # TFG102
                return x

        class Keeping(Running):
            def reset_sums(self):
                pass
    """,
    "a state output wired from the layer's own keras.Input": """
        import tensorflow as tf

        class Delay(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.input_state = tf.keras.Input(shape=input_shape[1:], batch_size=1)
                self.output_state = None

            def call(self, x):
                memory = tf.concat([self.input_state, x], 1)
                out, self.output_state = memory[:, :1], memory[:, -1:]
                self.last_input = x  # TFG106
                self.peak = tf.reduce_max(memory)
                return out

            def get_output_state(self):
                return [self.output_state]

            def get_last(self):
                return self.last_input

        class Stream(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.input_state = tf.keras.layers.Input(shape=input_shape[1:])

            def call(self, x):
                self.output_state = self._step(x, self.input_state)
                return x

            def _step(self, x, state):
                return tf.concat([state, x], 1)

            def get_output_state(self):
                return [self.output_state]

        class Plain(tf.keras.layers.Layer):
            def call(self, x):
                self.output_state = x * 2  # TFG106
                return x

            def get_output_state(self):
                return [self.output_state]

        class TwoModes(tf.keras.layers.Layer):
            def build(self, input_shape):
                if self.external:
                    self.input_state = tf.keras.Input(shape=input_shape[1:])
                else:
                    self.states = tf.Variable(tf.zeros(input_shape))

            def call(self, x):
                if self.external:
                    memory = tf.concat([self.input_state, x], 1)
                else:
                    memory = tf.concat([self.states, x], 1)
                self.output_state = memory[:, -1:]  # TFG106
                return x

            def get_output_state(self):
                return [self.output_state]
    """,
    "a layer's own loss and metric, given to compile, read what call stored": """
        import tensorflow as tf

        def likelihood(y_pred, y_true, lengths):
            return tf.reduce_sum(y_pred) * tf.cast(tf.reduce_sum(lengths), tf.float32)

        class CRF(tf.keras.layers.Layer):
            def call(self, inputs, mask=None):
                if mask is not None:
                    self.lengths = tf.reduce_sum(tf.cast(mask, tf.int32), -1)
                    self.mask = mask  # TFG106
                else:
                    self.lengths = tf.reduce_sum(tf.ones_like(inputs[:, :, 0], tf.int32), -1)
                self.peak = tf.reduce_max(inputs)  # TFG106
                return inputs

            def loss(self, y_true, y_pred):
                return -likelihood(y_pred, y_true, self.lengths)

            def accuracy(self, y_true, y_pred):
                return likelihood(y_pred, y_true, self.mask)

            def report(self):
                return self.peak

        class Scorer:
            @tf.function
            def predict(self, x):
                self.top = tf.reduce_max(x)  # TFG106
                return x

            def confidence(self, y_true, y_pred):  # no Keras layer's loss: eager
                return likelihood(y_pred, y_true, self.top)
    """,
    "a value computed afresh and then added to is no accumulation": """
        import keras

        class Conv(keras.layers.Layer):
            def __init__(self, use_bias=True):
                super().__init__()
                self.use_bias = use_bias
                self.total = 0

            def call(self, x):
                self.params = 9 * x.shape[-1]
                if self.use_bias:
                    self.params += x.shape[-1]
                if self.use_bias:
                    self.total = 0
                self.total += 1  # TFG106
                return x


        class Counter(keras.layers.Layer):
            def call(self, x):
                self.calls = getattr(self, "calls", 0)  # the old value, carried on
                self.calls += 1  # TFG106
                return x
    """,
    "getattr on another object reads its settings": """
        import tensorflow as tf

        class Encoder(tf.Module):
            @tf.function
            def __call__(self, x):
                self.seq_len = tf.shape(x)[1]  # per-trace scratch its own helper reads
                return self._mean(x)

            def _mean(self, x):
                return tf.reduce_sum(x, axis=1) / tf.cast(self.seq_len, x.dtype)

        def make_encoder(config):
            length = getattr(config, "seq_len", 128)  # an optional setting of the config
            return Encoder(), length
    """,
    "getattr with a literal name reads the attribute": """
        import keras
        import tensorflow as tf

        class Counter(keras.layers.Layer):
            def call(self, x):
                self.calls = getattr(self, "calls", 0) + 1  # TFG106
                return x


        class Scaled(keras.layers.Layer):
            def call(self, x):
                self.scale = getattr(self, "scale", 2.0)  # a default filled in once
                return x * self.scale


        class Probe(tf.Module):
            @tf.function
            def __call__(self, x):
                self.last = tf.reduce_sum(x)  # TFG106
                return x

            def report(self):
                return getattr(self, "last", None)


        class Quiet(tf.Module):
            @tf.function
            def __call__(self, x):
                self.seen = tf.reduce_sum(x)  # read by no eager code, not even by name
                return x

            def report(self):
                return getattr(self, "other", None)
    """,
    "a variable rebound to what its own assign returns": """
        import tensorflow as tf

        class Totals(tf.Module):
            def __init__(self):
                self.total = tf.Variable(0.0)

            @tf.function
            def add(self, x):
                self.total = self.total.assign_add(tf.reduce_sum(x))
                return self.total

            def report(self):
                return self.total.numpy()
    """,
    "autograph len of a tensor read eagerly": """
        import tensorflow as tf

        class Counter(tf.Module):
            @tf.function
            def __call__(self, x):
                self.rows = len(x)  # TFG106
                return x

            def report(self):
                return self.rows
    """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_state_observed_across_calls(name: str) -> None:
    source = dedent(CASES[name])
    got = {(line, code) for line, code in found(source) if code in _CODES}
    assert got == expected(source)


def test_a_leaked_tensor_is_named_as_such() -> None:
    source = dedent(CASES["a tensor that eager code reads"])
    (finding,) = [f for f in lint_source(source) if f.code == "TFG106"]
    assert "symbolic tensor" in finding.message
    assert "on_epoch_end()" in finding.message


def test_advice_fits_a_dict_of_tensors() -> None:
    source = dedent(CASES["a dict of tensors stored at once, read eagerly"])
    (finding,) = [f for f in lint_source(source) if f.code == "TFG106"]
    assert "feature_names()" in finding.message
    assert "tf.Variable" not in finding.message
    assert "__init__() or build()" in finding.message


RECORDING_DOUBLE = """
    import tensorflow as tf

    class Recorder(tf.keras.layers.Layer):
        def call(self, x, mask=None):
            self.mask = mask  # TFG106 outside a test module
            return x

    def READER():
        layer = Recorder()
        model = tf.keras.Sequential([layer])
        model.predict(tf.ones([1, 2]))  # traces call
        assert layer.mask is None
"""


@pytest.mark.parametrize(
    ("path", "reader", "reported"),
    [
        ("layers_test.py", "test_records_the_mask", False),  # a test reading what it saw
        ("test_layers.py", "test_records_the_mask", False),
        ("layers_test.py", "check_mask", False),  # a helper of a test module: test code
        ("layers.py", "test_records_the_mask", True),  # not a test module
    ],
)
def test_a_test_reading_what_a_layer_recorded_is_no_eager_observer(
    path: str, reader: str, reported: bool
) -> None:
    source = dedent(RECORDING_DOUBLE).replace("READER", reader)
    got = {code for _, code in found(source, path) if code == "TFG106"}
    assert bool(got) is reported


def test_state_of_an_object_the_layer_holds_is_scratch_like_its_own() -> None:
    source = dedent(
        """
        import tensorflow as tf

        class WeightNorm(tf.keras.layers.Wrapper):
            def build(self, input_shape):
                self.layer.build(input_shape)
                self.v = self.layer.kernel  # build runs before any trace
                self.g = self.add_weight(name="g", shape=(self.v.shape[-1],))

            def call(self, x):
                self.layer.kernel = tf.nn.l2_normalize(self.v, axis=0) * self.g
                return self.layer(x)

            def __call__(self, x):
                print(self.layer.kernel)  # where the wrapper is called: in the same trace
                return super().__call__(x)

        class Leaky(tf.keras.layers.Wrapper):
            def call(self, x):
                self.layer.kernel = tf.nn.l2_normalize(self.layer.kernel, axis=0)  # TFG106
                return self.layer(x)
        """
    )
    got = {(line, code) for line, code in found(source) if code in _CODES}
    assert got == expected(source)


def test_state_of_a_held_object_that_eager_code_reads_is_reported() -> None:
    source = dedent(
        """
        import tensorflow as tf

        class Exported(tf.keras.layers.Wrapper):
            def call(self, x):
                self.layer.kernel = tf.nn.l2_normalize(self.v, axis=0)  # TFG106
                return self.layer(x)

            def export_kernel(self):
                return self.layer.kernel.numpy()  # eager code reads the graph tensor
        """
    )
    (finding,) = [f for f in lint_source(source) if f.code == "TFG106"]
    assert finding.line == 5
    assert "export_kernel()" in finding.message and "symbolic tensor" in finding.message


def test_state_of_an_object_the_traced_caller_constructs_is_its_own() -> None:
    source = dedent(
        """
        import tensorflow as tf

        class Registry:
            def __init__(self):
                self._items = {}
                self.count = 0

            def insert(self, key, fn):
                self._items[key] = fn
                self.count += 1

        class Tally:
            def __init__(self):
                self.seen = []

            def add(self, x):
                self.seen.append(x)  # TFG102

        TALLY = Tally()

        def make_registry():
            registry = Registry()
            registry.insert("dense", tf.nn.relu)
            return registry

        @tf.function
        def step(x):
            registry = make_registry()
            TALLY.add(x)
            return registry._items["dense"](x)
        """
    )
    got = {(line, code) for line, code in found(source) if code in _CODES}
    assert got == expected(source)


def test_a_context_manager_that_restores_the_state_is_a_scoped_override() -> None:
    source = dedent(
        """
        import contextlib
        import threading
        import tensorflow as tf

        _scope = threading.local()
        _scope.quantize = False
        MODE = "float"

        @contextlib.contextmanager
        def quantized(flag):
            global MODE
            backup, old_mode = _scope.quantize, MODE
            _scope.quantize = flag
            MODE = "int8"
            try:
                yield flag
            finally:
                _scope.quantize = backup
                MODE = old_mode

        @contextlib.contextmanager
        def leaky(flag):
            global MODE
            _scope.quantize = flag  # TFG106
            MODE = "int8"  # TFG105
            yield flag

        class Binary(tf.keras.layers.Layer):
            def call(self, x):
                with quantized(True):
                    y = tf.sign(x)
                with leaky(True):
                    y = y * 2
                return y
        """
    )
    got = {(line, code) for line, code in found(source) if code in ("TFG105", "TFG106")}
    assert got == expected(source)


def test_an_attribute_put_back_before_the_call_returns_is_a_scoped_override() -> None:
    source = dedent(
        """
        import tensorflow as tf

        class CausalConv(tf.keras.layers.Conv1D):
            def call(self, x):
                causal = self.padding == "causal"
                if causal:
                    x = tf.pad(x, [[0, 0], [2, 0], [0, 0]])
                    self.padding = "valid"
                y = super().call(x)
                if causal:
                    self.padding = "causal"
                return y

        class Saved(tf.keras.layers.Dense):
            def call(self, x):
                saved = self.activation
                self.activation = tf.nn.relu
                y = super().call(x)
                self.activation = saved
                return y

        class Switched(tf.keras.layers.Conv1D):
            def call(self, x):
                if self.padding == "causal":
                    self.padding = "valid"
                y = super().call(x)
                self.padding = "same"  # TFG106
                return y
        """
    )
    got = {(line, code) for line, code in found(source) if code == "TFG106"}
    assert got == expected(source)


def test_a_container_reset_by_call_wrapper_is_per_call_scratch() -> None:
    source = dedent(
        """
        import tensorflow as tf

        class Base(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self._losses = {}
                self._history = []

            def __call__(self, *args, return_losses=False, **kwargs):
                self._losses = {}  # fresh before Keras runs call()
                outputs = super().__call__(*args, **kwargs)
                return (outputs, self._losses) if return_losses else outputs

        class Net(Base):
            def call(self, x):
                self._losses["l2"] = tf.reduce_sum(x * x)
                self._history.append(x)  # TFG102
                return x
        """
    )
    got = {(line, code) for line, code in found(source) if code in _CODES}
    assert got == expected(source)


def test_a_container_reset_by_a_base_call_wrapper_in_another_module(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "base.py").write_text(
        dedent(
            """
            import tensorflow as tf

            class Base(tf.keras.Model):
                def __call__(self, *args, **kwargs):
                    self._losses = {}  # fresh before Keras runs call()
                    outputs = super().__call__(*args, **kwargs)
                    return outputs, self._losses
            """
        )
    )
    (tmp_path / "pkg" / "net.py").write_text(
        dedent(
            """
            import tensorflow as tf

            from pkg.base import Base

            class Net(Base):
                def __init__(self):
                    super().__init__()
                    self._history = []

                def call(self, x):
                    self._losses["l2"] = tf.reduce_sum(x * x)
                    self._history.append(x)  # TFG102
                    return x
            """
        )
    )
    got = [(Path(f.path).name, f.line) for f in lint_paths([tmp_path]) if f.code in _CODES]
    assert got == [("net.py", 12)]


LOSS_MODULE = """
    import tensorflow as tf

    class DetectionLoss(tf.keras.losses.Loss):
        def call(self, y_true, y_pred):
            box_loss = tf.reduce_mean(tf.abs(y_true - y_pred))
            self._box_loss = tf.stop_gradient(box_loss)  # TFG106 when read eagerly
            return box_loss

        def report_losses(self):
            return {"box_loss": self._box_loss}
"""

TASK_MODULE = """
    import tensorflow as tf

    from losses import DetectionLoss

    class Task:
        def __init__(self):
            self.loss_fn = DetectionLoss()

        def prepare(self, model):
            model.compile(loss=self.loss_fn)  # Keras traces the loss

        def CALLER(self, model, metric, x, y):
            loss = self.loss_fn(y, model(x))
            metric.update_state(self.loss_fn.report_losses())
            return loss
"""


@pytest.mark.parametrize(
    ("caller", "reported"),
    [
        # A trainer's step reads the losses of the call it just made, traced or not.
        ("train_step", False),
        ("validation_step", False),
        ("step_fn", False),
        # Eager code reads what the last trace left: a symbolic tensor.
        ("log_losses", True),
        (None, True),  # nobody in the run calls it: public API, for users' eager code
    ],
)
def test_an_accessor_read_by_step_functions_elsewhere_is_same_call_state(
    tmp_path: Path, caller: str | None, reported: bool
) -> None:
    (tmp_path / "losses.py").write_text(dedent(LOSS_MODULE))
    if caller is not None:
        (tmp_path / "task.py").write_text(dedent(TASK_MODULE).replace("CALLER", caller))
    got = [f for f in lint_paths([tmp_path]) if f.code == "TFG106"]
    assert bool(got) is reported
    if reported:
        assert "report_losses()" in got[0].message


def test_a_metric_result_is_eager_whoever_else_calls_it(tmp_path: Path) -> None:
    # Keras calls `result()` itself at the end of each epoch, eagerly.
    (tmp_path / "metrics.py").write_text(
        dedent(
            """
            import tensorflow as tf

            class Gap(tf.keras.metrics.Metric):
                def update_state(self, y_true, y_pred, sample_weight=None):
                    self.gap = tf.reduce_max(y_pred) - tf.reduce_min(y_pred)  # TFG106

                def result(self):
                    return self.gap
            """
        )
    )
    (tmp_path / "model.py").write_text(
        dedent(
            """
            import tensorflow as tf

            class Model(tf.keras.Model):
                def train_step(self, data):
                    return {m.name: m.result() for m in self.metrics}
            """
        )
    )
    got = [f for f in lint_paths([tmp_path]) if f.code == "TFG106"]
    assert [f.line for f in got] == [5]


def test_objects_made_per_trace_cross_modules(tmp_path: Path) -> None:
    # What a traced caller of another module passes decides: a list it made in the same
    # trace (or nothing, where the helper makes its own object) is that trace's scratch.
    (tmp_path / "helpers.py").write_text(
        dedent(
            """
            class Program:
                pass

            def fill(x, out):
                out.append(x)

            def serialize(x, msg=None):
                if msg is None:
                    msg = Program()
                msg.name = "program"
                return msg
            """
        )
    )
    (tmp_path / "train.py").write_text(
        dedent(
            """
            import tensorflow as tf

            from helpers import fill, serialize

            HISTORY = []

            @tf.function
            def step(x):
                parts = []
                fill(x, parts)
                serialize(x)
                return tf.stack(parts)

            @tf.function
            def record(x):
                fill(x, HISTORY)
                return x
            """
        )
    )
    got = [(Path(f.path).name, f.line) for f in lint_paths([tmp_path]) if f.code in _CODES]
    assert got == [("helpers.py", 5)]  # `fill` also fills HISTORY, which outlives `record`


def test_a_mutable_default_is_no_object_made_per_trace() -> None:
    source = dedent(
        """
        import tensorflow as tf

        def remember(name, value, registry={}):
            registry.setdefault(name, []).append(value)  # TFG102
            return registry

        @tf.function
        def step(x):
            remember("x", x)
            return x
        """
    )
    assert {(line, code) for line, code in found(source) if code in _CODES} == expected(source)


CONTAINERS_IN_A_RECORD = """
    import collections
    import tensorflow as tf

    Maps = collections.namedtuple("Maps", ["dense", "sparse"])

    def register(name, value, maps):
        maps.dense[name] = value
        maps.sparse[name] = tf.sparse.from_dense(value)

    @tf.function
    def pack(features):
        maps = Maps(dense={}, sparse={})
        for name, value in features.items():
            register(name, value, maps)
        return tf.stack(list(maps.dense.values()))
"""


def test_containers_inside_an_object_the_traced_caller_makes() -> None:
    # A helper fills the dicts of a record its traced caller built in the same call: that
    # call's scratch, filled anew by every trace.
    assert not [c for _, c in found(dedent(CONTAINERS_IN_A_RECORD)) if c in _CODES]


def test_containers_inside_an_object_a_traced_root_is_given() -> None:
    # A `tf.function` root is handed its record by eager code: the dicts outlive the call.
    source = dedent(CONTAINERS_IN_A_RECORD) + dedent(
        """
        @tf.function
        def pack_into(features, maps):
            register("x", features["x"], maps)
            return features["x"]
        """
    )
    assert {line for line, code in found(source) if code == "TFG102"} == {7, 8}


DECODER_MODULE = """
    import tensorflow as tf

    class Sampler:
        def initialize(self):
            return (tf.zeros([1]),)

    class Decoder:
        def __init__(self):
            self.sampler = Sampler()

        def setup(self, state):
            self.initial_state = state * 2.0

        def initialize(self):
            return self.sampler.initialize() + (self.initial_state,)

    class Speaker(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.decoder = Decoder()

        def call(self, x):
            self.decoder.setup(x)
            return run_decoder(self.decoder)
"""


@pytest.mark.parametrize(
    ("driver", "reported"),
    [
        # The reader runs in the same trace, through a library routine of the project.
        ("def run_decoder(decoder):\n    return decoder.initialize()[-1]\n", False),
        # Eager code of the project reads what the last trace left.
        (
            "def run_decoder(decoder):\n    return decoder.initialize()[-1]\n\n\n"
            "def debug(model):\n    return model.decoder.initialize()\n",
            True,
        ),
    ],
)
def test_a_delegating_accessor_is_no_eager_call_of_its_own(
    tmp_path: Path, driver: str, reported: bool
) -> None:
    # `initialize()` calls a held object's `initialize()`: that call runs wherever the outer
    # one does, so it is no evidence of eager use.  Nothing in the run calls it eagerly.
    (tmp_path / "decoders.py").write_text(
        dedent(DECODER_MODULE) + "\n\nfrom decode import run_decoder\n"
    )
    (tmp_path / "decode.py").write_text(driver)
    got = [(Path(f.path).name, f.line) for f in lint_paths([tmp_path]) if f.code in _CODES]
    assert got == ([("decoders.py", 12)] if reported else [])


def test_an_idempotent_update_from_python_settings_is_no_accumulation() -> None:
    # Applying `flag and setting` (or min/max with settings) again changes nothing: the value
    # one trace stores is what every call would store.  A tensor operand or a sum still
    # changes per call.
    source = dedent(
        """
        import tensorflow as tf

        class Activation(tf.keras.layers.Layer):
            def call(self, x):
                self.will_freeze = self.will_freeze and self.trainable
                self.lowest = min(self.lowest, 3)
                self.seen = self.seen or x  # TFG106
                self.calls = self.calls + 1  # TFG106
                self.peak = max(self.peak, self.lowest, self.limit)
                return x
        """
    )
    assert {(line, c) for line, c in found(source) if c in _CODES} == expected(source)


def test_a_flag_every_method_sets_to_one_literal_is_stored_alike_per_trace() -> None:
    # `self._first_call = False` after the one-time build: every call stores the same
    # literal and no method stores another, so one store per trace leaves what one per call
    # would.  A flag another method sets back (or a value that differs) is still state.
    source = dedent(
        """
        import tensorflow as tf

        class Block(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self._first_call = True
                self._warm = True
                self._mode = "a"

            def call(self, x):
                if self._first_call:
                    x = x * 1.0
                self._first_call = False
                if self._warm:
                    x = x + 1.0
                self._warm = False  # TFG106
                self._mode = "b" if self._mode == "a" else "a"  # TFG106
                return x

            def reset(self):
                self._warm = True
        """
    )
    assert {(line, c) for line, c in found(source) if c in _CODES} == expected(source)


def test_writes_to_a_copy_the_call_makes_first_are_its_own() -> None:
    # `state = dataclasses.replace(state, ...)` as the body's first statement: the writes go
    # to this call's copy, which it returns.  A shallow copy shares the containers it was
    # not given anew, and a copy made on one path only leaves the other path's writes.
    source = dedent(
        """
        import copy
        import dataclasses

        import tensorflow as tf

        @dataclasses.dataclass
        class State:
            counters: dict
            history: list
            round: int = 0

        @tf.function
        def update(state, n):
            state = dataclasses.replace(state, counters=dict(state.counters))
            state.counters["seen"] += n
            state.history.append(n)  # TFG102
            state.round = n
            return state

        @tf.function
        def update_deep(state, n):
            state = copy.deepcopy(state)
            state.history.append(n)
            state.round = n
            return state

        @tf.function
        def update_sometimes(state, n, fresh=True):
            if fresh:
                state = copy.copy(state)
            state.round = n  # TFG106
            return state
        """
    )
    assert {(line, c) for line, c in found(source) if c in _CODES} == expected(source)


def test_scratch_set_on_every_branch_then_updated_in_the_same_call() -> None:
    # Both branches of the `if` set `self.w` before any read: the updates after it work on
    # this call's value.  With a branch that does not set it, a read may see another call's.
    source = dedent(
        """
        import tensorflow as tf

        class Routing(tf.keras.layers.Layer):
            def __init__(self, mode, **kwargs):
                super().__init__(**kwargs)
                self.mode = mode

            def call(self, x):
                if self.mode == 0:
                    self.w = tf.zeros_like(x)
                elif self.mode == 1:
                    self.w = tf.ones_like(x)
                else:
                    self.w = x
                for _ in range(3):
                    self.w = self.w + x
                if self.mode == 0:
                    self.v = tf.zeros_like(x)
                self.v = self.v + x  # TFG106
                return self.w + self.v
        """
    )
    assert {(line, c) for line, c in found(source) if c in _CODES} == expected(source)


def test_keras_reads_in_compute_mask_and_mask_metadata_are_same_trace() -> None:
    # Keras's `__call__` calls `compute_mask` right after `call`, in the same trace: it is
    # no eager reader.  `x._keras_mask = m` is metadata of a tensor of this trace.  A method
    # Keras does not call from `__call__` still is an eager reader.
    source = dedent(
        """
        import tensorflow as tf

        class Masked(tf.keras.layers.Layer):
            def call(self, inputs, training=False):
                self.inference_mode = not training
                self.last_training = training  # TFG106
                outputs = inputs * 2.0
                outputs._keras_mask = tf.ones_like(inputs, tf.bool)
                return self._unmasked(outputs)

            def _unmasked(self, prediction):
                prediction._keras_mask = None
                return prediction

            def compute_mask(self, inputs, mask=None):
                return None if self.inference_mode else mask

            def summary_line(self):
                return f"trained: {self.last_training}"
        """
    )
    assert {(line, c) for line, c in found(source) if c in _CODES} == expected(source)


def test_rebinding_a_variable_to_a_tensor_says_what_breaks() -> None:
    source = dedent(
        """
        import tensorflow as tf


        class Encoder(tf.keras.layers.Layer):
            def __init__(self, learnable):
                super().__init__()
                if learnable:
                    self.pos = self.add_weight(name="pos", shape=(1, 4, 3))
                else:
                    self.pos = tf.zeros((1, 4, 3))

            def call(self, x):
                kept = self.pos.dtype
                x = x + tf.cast(self.pos, x.dtype)
                self.pos = tf.cast(self.pos, kept)
                return x
        """
    )
    got = [f for f in lint_source(source, "encoder.py") if f.code == "TFG106"]
    assert [f.line for f in got] == [15]
    assert "holds a tf.Variable (line 8)" in got[0].message
    assert "InaccessibleTensorError" in got[0].message
    assert "local name" in got[0].message


@pytest.mark.parametrize(
    ("loop", "reported"),
    [
        ("for i in range(3):\n        add(x[i])", False),
        ("add(x)\n    add(x * 2)", False),
        # a graph loop runs the helper's Python once, while tracing
        ("for row in tf.unstack(x):\n        add(row)", False),
        ("for i in tf.range(3):\n        add(x[i])", True),
        ("for batch in tf.data.Dataset.range(4):\n        add(x)", True),
        # handed on: whoever calls it decides
        ("tf.map_fn(add, x)", True),
    ],
)
def test_a_nonlocal_accumulator_of_a_traced_function(loop: str, reported: bool) -> None:
    source = dedent(
        """
        import tensorflow as tf


        @tf.function
        def penalty(x):
            total = 0.0

            def add(v):
                nonlocal total
                total += tf.reduce_sum(v)

            LOOP
            return total
        """
    ).replace("LOOP", loop)
    got = [f for f in lint_source(source, "penalty.py") if f.code == "TFG105"]
    assert bool(got) is reported
    assert all("write to nonlocal total" in f.message for f in got)


@pytest.mark.parametrize(
    ("infer", "reported"),
    [
        # the only caller stores both attributes itself first: eager scratch
        (
            "self.inputs = x\n        self.latent, self.fake = self.net(x)\n"
            "        return self.loss_infer()",
            False,
        ),
        # it stores one of them only: the other is what a trace left
        ("self.inputs = x\n        return self.loss_infer()", True),
        # it stores them after the call
        (
            "out = self.loss_infer()\n        self.inputs = x\n"
            "        self.latent, self.fake = self.net(x)\n        return out",
            True,
        ),
        # a traced step between the store and the read stores the trace's tensors again
        (
            "self.inputs = x\n        self.latent, self.fake = self.net(x)\n"
            "        self.step(x)\n        return self.loss_infer()",
            True,
        ),
        # stored only on some calls
        (
            "if x is not None:\n            self.inputs = x\n"
            "            self.latent, self.fake = self.net(x)\n        return self.loss_infer()",
            True,
        ),
    ],
)
def test_an_eager_reader_whose_callers_store_the_state_first(infer: str, reported: bool) -> None:
    source = dedent(
        """
        import tensorflow as tf


        class Trainer:
            def __init__(self, net):
                self.net = net

            @tf.function
            def step(self, x):
                self.inputs = x
                self.latent, self.fake = self.net(self.inputs)
                return tf.reduce_mean(self.fake - self.inputs)

            def loss_infer(self):
                return tf.reduce_mean(self.fake - self.inputs) + tf.reduce_mean(self.latent)

            def infer(self, x):
                INFER
        """
    ).replace("INFER", infer)
    got = [f for f in lint_source(source, "trainer.py") if f.code == "TFG106"]
    assert bool(got) is reported


def test_a_recursive_nonlocal_visitor_of_a_python_structure_is_scratch() -> None:
    source = dedent(
        """
        import tensorflow as tf


        class Net(tf.keras.Model):
            def regulariser(self):
                total = 0.0

                def visit(layer):
                    nonlocal total
                    if isinstance(layer, tf.keras.layers.BatchNormalization):
                        total += tf.reduce_max(tf.abs(layer.gamma))
                    for sub in getattr(layer, "layers", []):
                        visit(sub)

                for layer in self.layers:
                    visit(layer)
                return total

            def train_step(self, data):
                return {"reg": self.regulariser()}
        """
    )
    assert [f for f in lint_source(source, "net.py") if f.code == "TFG105"] == []
