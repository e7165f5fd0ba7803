"""Inputs dynamic mode finds for code whose arguments are not plain float batches (SPEC §4,
"trace before running"): a step fed one tensor, features read by key, integer indices, CSV
lines, a log file in a folder that does not exist, a script importing its project's package.

One ``--dynamic`` run over a small project serves every test (each module costs a child
process that imports TensorFlow).  Every labelled line is a real bug that must come back
``confirmed``.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tests.dynamic.support import dynamic_findings, write

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process isolation")

MODULES = {
    "pyproject.toml": "[project]\nname = 'guesses'\nversion = '0'\n",
    # A GAN-style step: `data` is a batch of real images, shaped by the discriminator.
    "gan.py": """
        import keras
        import tensorflow as tf


        class TinyGAN(keras.Model):
            def __init__(self):
                super().__init__()
                self.discriminator = keras.Sequential(
                    [keras.Input((6,)), keras.layers.Dense(1)]
                )
                self.seen = 0

            def train_step(self, real):
                fake = tf.random.normal(tf.shape(real))
                both = tf.concat([fake, real], axis=0)
                score = tf.reduce_mean(self.discriminator(both))
                self.seen += 1  # TFG106
                return {"score": score}
        """,
    # A variable the body assigns to, and a step the loop passes as a Python int.
    "ema.py": """
        import tensorflow as tf


        @tf.function
        def update_ema(ema, value, step):
            decay = tf.minimum(0.9, (1.0 + step) / (10.0 + step))
            ema.assign(decay * ema + (1.0 - decay) * value)
            return ema.read_value()


        def track(values):
            ema = tf.Variable(tf.zeros([3]))
            for step, value in enumerate(values):
                update_ema(ema, value, step)  # TFG303
            return ema
        """,
    # A serving function the module calls with a NumPy batch: new batch sizes of it.
    "serve_np.py": """
        import numpy as np
        import tensorflow as tf

        W = tf.ones([3, 1])


        @tf.function
        def serve(features):  # TFG301
            return tf.matmul(features, W)


        def main():
            return serve(np.ones((4, 3), dtype="float32"))
        """,
    # A path the body opens: a Python string, which no tensor guess can stand for.
    "report.py": """
        from pathlib import Path

        import tensorflow as tf


        @tf.function
        def log_batch(x, log_path):
            Path(log_path).write_text("seen")  # TFG108
            return x * 2.0
        """,
    # A Dataset.map callback whose element is a dict of named features.
    "features.py": """
        import tensorflow as tf

        STATS = {"rows": 0}


        def featurize(row):
            STATS["rows"] += 1  # TFG102
            return tf.stack([row["age"] / 100.0, row["income"] / 1e5])


        def make(ds):
            return ds.map(featurize)
        """,
    # An op that needs integers: which argument, the error does not say.
    "lookup.py": """
        import tensorflow as tf


        @tf.function
        def pick(table, which):
            print("picking", which)  # TFG101
            return tf.gather(table, which)
        """,
    # CSV lines parsed while tracing a map callback.
    "csvlines.py": """
        import tensorflow as tf

        SEEN = []


        def parse(line):
            label, value = tf.io.decode_csv(line, record_defaults=[[0], [0.0]])
            SEEN.append(label)  # TFG102
            return value, label


        def make(lines):
            return tf.data.TextLineDataset(lines).map(parse)
        """,
    # A trace-time log written into a folder that does not exist here.
    "audit.py": """
        import json
        import tensorflow as tf


        @tf.function
        def serve(x):
            with open("/nonexistent-tflint-graph-logs/requests.jsonl", "a") as f:  # TFG108
                json.dump({"served": 1}, f)  # TFG108
            return x * 2.0
        """,
    # A count the body loops over: a scalar, which the op's error asks for.
    "unroll.py": """
        import tensorflow as tf


        @tf.function
        def repeat_add(x, steps):
            print("repeating", x)  # TFG101
            total = tf.zeros_like(x)
            for _ in tf.range(steps):
                total += x
            return total
        """,
    # An agent whose constructor wants built parts, made by the module's own factory.
    "factory_owner.py": """
        import tensorflow as tf


        class Agent:
            def __init__(self, net, optimizer, gamma):
                self.net = net
                self.optimizer = optimizer
                self.gamma = gamma
                self.updates = 0

            @tf.function
            def update(self, states):
                self.updates += 1  # TFG106
                return self.net(states) * self.gamma


        def build_agent(gamma=0.99):
            parts = (tf.keras.layers.Dense(2), tf.keras.optimizers.SGD(), gamma)
            agent = Agent(*parts)  # no call dynamic mode can repeat on its own
            return agent
        """,
    # A convolutional model fed (x, y): Keras says how many dimensions it wants.
    "segment.py": """
        import keras


        class Segmenter(keras.Model):
            def __init__(self):
                super().__init__()
                self.conv = keras.layers.Conv2D(3, 3, padding="same")
                self.steps_seen = 0

            def call(self, x):
                return self.conv(x)

            def train_step(self, data):
                x, y = data
                loss = keras.ops.mean((self(x) - y) ** 2)
                self.steps_seen += 1  # TFG106
                return {"loss": loss}

            def test_step(self, data):
                # Keras 3 does not AutoGraph-convert its steps: the tensor `if` raises
                x, y = data
                loss = keras.ops.mean((self(x) - y) ** 2)
                if loss > 1.0:  # TFG201
                    loss = loss * 0.5
                return {"loss": loss}
        """,
    # Eager code that makes a tf.function on every call, and debug switches.
    "eager_code.py": """
        import tensorflow as tf


        def per_size(sizes=(2, 3)):
            out = []
            for size in sizes:
                step = tf.function(lambda x: x * 2.0)  # TFG302
                out.append(step(tf.ones([size])))
            return out


        def enable_debugging():
            tf.config.run_functions_eagerly(True)  # TFG402


        def compare(x):
            tf.config.run_functions_eagerly(True)  # TFG402
            eager = tf.reduce_sum(x)
            tf.config.run_functions_eagerly(False)
            return eager
        """,
    # A factory that builds the training step and returns it (with a closure of its own).
    "factory.py": """
        import tensorflow as tf


        def make_step(scale):
            count = 0

            @tf.function
            def step(inputs, target):
                nonlocal count
                count += 1  # TFG105
                return tf.reduce_mean(inputs * scale - target)

            return step, (lambda: count)


        if __name__ == "__main__":
            step, done = make_step(2.0)
        """,
    # A mutable default shared by every call that does not pass one, filled while tracing;
    # and a mask the body returns early without.
    "defaults.py": """
        import keras
        import tensorflow as tf


        def remember(name, value, registry={}):
            registry.setdefault(name, []).append(value)  # TFG102
            return registry


        @tf.function
        def step(x):
            remember("x", x)
            return x * 2.0


        class MaskedPool(keras.layers.Layer):
            def call(self, x, mask=None):
                if mask is None:
                    return tf.reduce_mean(x, axis=1)
                count = tf.reduce_sum(tf.cast(mask, x.dtype))
                if count > 0:  # TFG201
                    return tf.reduce_sum(x, axis=1) / count
                return tf.reduce_mean(x, axis=1)
        """,
    # Sizes the body slices with (through arithmetic) are ints; one listed in a static
    # shape is a Python int (a tensor there raises while tracing).
    "chunks.py": """
        import tensorflow as tf


        @tf.function
        def chunked(wave, size, hop):
            count = 1 + (tf.shape(wave)[0] - size) // hop
            parts = tf.TensorArray(tf.float32, size=count, element_shape=[size])
            for i in tf.range(count):
                parts.write(i, wave[i * hop : i * hop + size])  # TFG209
            return parts.stack()
        """,
    # A parameter whose items the body reads is a dict.
    "summary.py": """
        import tensorflow as tf


        @tf.function
        def summarize(values):
            text = ", ".join(f"{key}={value}" for key, value in values.items())
            print(text)  # TFG101
            return tf.constant(len(text))
        """,
    # Targets read by key, shaped like the dict the held model returns: class ids where the
    # output has classes on its last axis, the output's shape otherwise.
    "keyed_targets.py": """
        import keras
        import tensorflow as tf


        class SegNet(keras.Model):
            def __init__(self):
                super().__init__()
                self.conv = keras.layers.Conv2D(3, 1)
                self.dense = keras.layers.Dense(1)

            def call(self, images, training=False):
                logits = self.conv(images)
                return {"mask": logits, "count": self.dense(tf.reduce_mean(logits, axis=[1, 2]))}


        class Trainer:
            def __init__(self, model):
                self.model = model

            @tf.function
            def step(self, images, targets):
                out = self.model(images, training=True)
                seg = keras.losses.sparse_categorical_crossentropy(
                    targets["mask"], out["mask"], from_logits=True
                )
                error = tf.square(targets["count"] - out["count"])
                loss = tf.reduce_mean(seg) + tf.reduce_mean(error)
                print("loss", loss)  # TFG101
                return loss
        """,
    # A Keras step whose targets only a helper method reads by key, on an unbuilt model
    # with dict outputs: images for `images`, the targets shaped like the outputs.
    "keyed_step.py": """
        import keras
        import tensorflow as tf


        class Counter(keras.Model):
            def __init__(self):
                super().__init__()
                self.conv = keras.layers.Conv2D(3, 1)
                self.dense = keras.layers.Dense(1)
                self.steps = 0

            def call(self, images, training=False):
                logits = self.conv(images)
                return {"mask": logits, "count": self.dense(tf.reduce_mean(logits, axis=[1, 2]))}

            def _loss(self, targets, out):
                seg = keras.losses.sparse_categorical_crossentropy(
                    targets["mask"], out["mask"], from_logits=True
                )
                return tf.reduce_mean(seg) + tf.reduce_mean(tf.abs(targets["count"] - out["count"]))

            def train_step(self, data):
                images, targets = data
                loss = self._loss(targets, self(images, training=True))
                self.steps += 1  # TFG106
                return {"loss": loss}
        """,
    # A function that loops over a dataset of (images, targets) batches; and one that
    # reduces its argument over axes a vector does not have.
    "loops.py": """
        import tensorflow as tf


        @tf.function
        def mean_error(dataset):
            total = tf.Variable(0.0)  # TFG205
            for images, targets in dataset:
                total.assign_add(tf.reduce_sum(tf.abs(tf.reduce_mean(images) - targets["count"])))
            return total


        @tf.function
        def areas(labels):
            sizes = []
            for index in range(150):  # TFG305
                sizes.append(tf.reduce_sum(tf.cast(labels == index, tf.int32), axis=[1, 2]))
            return tf.stack(sizes, axis=1)
        """,
    # A model whose `call` reads its input by key: the step's `x` is that dict (a missing key
    # is added as Keras's KeyError names it); and a parser whose first argument is one encoded
    # image, which only the line of the error names.
    "dict_inputs.py": """
        import keras
        import tensorflow as tf


        class Fusion(keras.Model):
            def __init__(self):
                super().__init__()
                self.conv = keras.layers.Conv2D(2, 1)
                self.dense = keras.layers.Dense(1)
                self.seen = 0

            def call(self, inputs):
                pooled = tf.reduce_mean(self.conv(inputs["image"]), axis=[1, 2])
                return self.dense(tf.concat([pooled, inputs["weather"]], axis=-1))

            def train_step(self, data):
                x, y = data
                loss = tf.reduce_mean(tf.square(self(x) - y))
                self.seen += 1  # TFG106
                return {"loss": loss}


        def parse(raw, cloud):
            image = tf.io.decode_png(raw, channels=3)
            print("parsing", raw)  # TFG101
            return tf.cast(image, tf.float32) * tf.reduce_mean(cloud)


        def make(ds):
            return ds.map(parse)
        """,
    # Map callbacks that decode images: .map() traces them on specs, but the staged TFG109
    # check runs elements, which must be images the decoder reads (a guessed string is none).
    "images.py": """
        import tensorflow as tf

        BRIGHTNESS = 0.1
        THRESHOLD = 0.5


        def load_photo(raw):
            image = tf.image.convert_image_dtype(tf.io.decode_jpeg(raw, channels=3), tf.float32)
            return image + BRIGHTNESS  # TFG109


        def load_mask(raw):
            mask = tf.cast(tf.io.decode_png(raw, channels=1), tf.float32) / 255.0
            return tf.cast(mask > THRESHOLD, tf.float32)  # TFG109


        def configure(brightness, threshold):
            global BRIGHTNESS, THRESHOLD
            BRIGHTNESS, THRESHOLD = brightness, threshold


        def make(photos, masks):
            photos = tf.data.Dataset.from_tensor_slices(photos).map(load_photo)
            return photos, tf.data.Dataset.from_tensor_slices(masks).map(load_mask)
        """,
    # The project's settings, with a default for every field.
    "settings.py": """
        import dataclasses


        @dataclasses.dataclass
        class ScorerConfig:
            units: int = 3
        """,
    # A scorer built from a model that only a builder taking those settings makes, and the
    # statistics it normalises with; steps whose bodies say the batch has three axes.
    "scorer.py": """
        import keras
        import tensorflow as tf


        def build_net(cfg):
            return keras.Sequential([keras.layers.Dense(cfg.units)])


        class Scorer(tf.Module):
            def __init__(self, model, mean, std):
                super().__init__()
                self.model = model
                self.mean = tf.constant(mean, tf.float32)
                self.std = tf.constant(std, tf.float32)

            @tf.function
            def score(self, x):
                print("scoring", x)  # TFG101
                return self.model((x - self.mean) / self.std)


        @tf.function
        def per_step(x):
            batch, steps, width = x.shape
            print("per step", x)  # TFG101
            return tf.reshape(x, [-1, steps * width])


        @tf.function
        def first_channel(x):
            print("first channel", x)  # TFG101
            return x[:, :, 0]
        """,
    # A list held in a module dict, filled while tracing: the dict is watched, its lists by
    # their items.
    "keyed_history.py": """
        import tensorflow as tf

        HISTORY = {"loss": []}


        @tf.function
        def step(x):
            loss = tf.reduce_mean(x)
            HISTORY["loss"].append(loss)  # TFG102
            return loss
        """,
    # A loop that unpacks rows of a tensor the module passes: the tensor guess comes first
    # (a dataset would unpack fine and hide the error); and a dtype error on a line that
    # reaches the culprit through a local, naming another parameter.
    "rows.py": """
        import random

        import tensorflow as tf


        @tf.function
        def weighted(rows):
            total = tf.zeros([])
            for value, weight in rows:  # TFG203
                total += value * weight
            return total


        def demo(n):
            return weighted(tf.random.normal([n, 2]))


        @tf.function
        def to_numbers(line, label):
            noise = random.gauss(0.0, 1.0)  # TFG103
            parts = tf.strings.split(line)
            return tf.strings.to_number(parts) + noise, label
        """,
    # A global a Dataset.map callback reads: the mapped dataset keeps the value it was
    # traced with, staged as for a tf.function.
    "map_global.py": """
        import tensorflow as tf

        THRESHOLD = 0.5


        def set_threshold(value):
            global THRESHOLD
            THRESHOLD = value


        def clip(x):
            return tf.minimum(x, THRESHOLD)  # TFG109


        def make(values):
            return tf.data.Dataset.from_tensor_slices(values).map(clip)
        """,
    # A step given the module's own (built) model and an optimizer with slots, whose first
    # guess (integer labels for a float loss) fails before any variable is made: the retry
    # runs on the module as the import left it, not on a tf.function already called once,
    # which may no longer make the new optimizer's variables.
    "reranker.py": """
        import keras
        import tensorflow as tf

        STEPS = 0


        def build_head():
            return keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])


        @tf.function
        def train_step(model, optimizer, x, labels, lr):
            global STEPS
            with tf.GradientTape() as tape:
                logits = tf.squeeze(model(x, training=True), axis=-1)
                loss = tf.reduce_mean(
                    tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
                )
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            STEPS += 1  # TFG105
            return loss


        def fit(dataset, lr=0.02):
            model = build_head()
            opt = keras.optimizers.SGD(lr, momentum=0.9)
            for x, labels in dataset:
                train_step(model, opt, x, labels, lr)
        """,
    # Scores against as many candidates as the guessed batch: top_k wants k of them.
    "topk.py": """
        import tensorflow as tf


        @tf.function(input_signature=[tf.TensorSpec([None, 8]), tf.TensorSpec([None, 8])])
        def score_all(queries, candidates):
            return tf.matmul(queries, candidates, transpose_b=True)


        @tf.function
        def retrieve(queries, candidates):
            print("retrieving", queries)  # TFG101
            return tf.math.top_k(score_all(queries, candidates), k=5)
        """,
    # Features read by names a loop sweeps; ids one per row and token ids as sequences, as
    # their names say.
    "towers.py": """
        import keras
        import tensorflow as tf


        class Titles(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.embed = keras.layers.Embedding(10, 4)
                self.dense = keras.layers.Dense(4)

            def call(self, tokens):
                return self.dense(tf.reduce_mean(self.embed(tokens), axis=1))


        class Tower(keras.Model):
            def __init__(self):
                super().__init__()
                self.ids = {"item_idx": keras.layers.Embedding(10, 4)}
                self.shop = keras.layers.Embedding(5, 2)
                self.titles = Titles()
                self.seen = []

            def call(self, features):
                parts = [self.titles(features["title_tokens"])]
                for name in ("item_idx",):
                    parts.append(self.ids[name](features[name]))
                parts.append(self.shop(features["shop_idx"]))
                x = tf.concat(parts, axis=-1)
                self.seen.append(x)  # TFG102
                return x


        class Query(keras.Model):
            def __init__(self):
                super().__init__()
                self.titles = Titles()
                self.last = None

            def call(self, features):
                x = self.titles(features["query_tokens"])
                self.last = x  # TFG106
                return x

            def last_query(self):
                return self.last
        """,
    # One tf.function given a second optimizer with slots: staged on a fresh copy.
    "two_phase.py": """
        import keras
        import tensorflow as tf


        def build_model():
            return keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])


        @tf.function
        def train_step(model, optimizer, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss


        def two_phase(model, data):
            warmup = keras.optimizers.SGD(0.1, momentum=0.9)
            for x, y in data.take(2):
                train_step(model, warmup, x, y)
            adam = keras.optimizers.Adam(1e-3)
            for x, y in data:
                train_step(model, adam, x, y)  # TFG208
        """,
    # A script beside the package, importing it as it does when run from the checkout.
    "tools/__init__.py": "",
    "mypkg/__init__.py": "",
    "mypkg/scale.py": """
        FACTOR = 2.0
        """,
    "scripts/run_scale.py": """
        import tensorflow as tf

        from mypkg.scale import FACTOR


        @tf.function
        def scaled(x):
            print("scaling", x)  # TFG101
            return x * FACTOR
        """,
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int, str], dict]:
    pytest.importorskip("tensorflow")
    root = tmp_path_factory.mktemp("guesses")
    write(root, MODULES)
    return dynamic_findings(root, ".")


def labelled() -> list[tuple[str, int, str]]:
    out = []
    for name, text in MODULES.items():
        for number, line in enumerate(textwrap.dedent(text).lstrip().splitlines(), start=1):
            if "# TFG" in line:
                out.append((name, number, line.rsplit("# ", 1)[1].strip()))
    return out


@pytest.mark.parametrize("key", labelled(), ids=lambda k: f"{k[0]}:{k[1]}:{k[2]}")
def test_the_bug_is_found_and_confirmed(run: dict, key: tuple[str, int, str]) -> None:
    assert key in run, sorted(run)
    dynamic = run[key]["dynamic"]
    assert dynamic["status"] == "confirmed", dynamic


def test_a_decoder_s_strings_become_images_of_the_format_it_reads(run: dict) -> None:
    photo = run[("images.py", 9, "TFG109")]["dynamic"]
    mask = run[("images.py", 14, "TFG109")]["dynamic"]
    assert "JPEG-encoded images" in photo["inputs"], photo
    assert "PNG-encoded images" in mask["inputs"], mask


def test_an_object_is_constructed_from_a_builder_given_the_project_s_settings(run: dict) -> None:
    evidence = run[("scorer.py", 18, "TFG101")]["dynamic"]["evidence"]
    assert (
        "constructed as Scorer(model=scorer.build_net(settings.ScorerConfig()), mean=0.0, std=1.0)"
        in (evidence)
    )


def test_the_rank_a_body_unpacks_or_indexes_is_given(run: dict) -> None:
    assert "float32[2,4,3]" in run[("scorer.py", 25, "TFG101")]["dynamic"]["inputs"]
    assert "float32[2,4,3]" in run[("scorer.py", 31, "TFG101")]["dynamic"]["inputs"]


def test_a_list_held_in_a_dict_is_watched_through_the_dict(run: dict) -> None:
    evidence = run[("keyed_history.py", 9, "TFG102")]["dynamic"]["evidence"]
    assert "HISTORY changed while tracing with symbolic inputs ({'loss': len 0} -> " in evidence


def test_the_step_ran_on_the_shape_its_model_takes(run: dict) -> None:
    dynamic = run[("gan.py", 17, "TFG106")]["dynamic"]
    assert "float32[2,6]" in dynamic["inputs"], dynamic


def test_the_named_features_are_a_dict(run: dict) -> None:
    dynamic = run[("features.py", 7, "TFG102")]["dynamic"]
    assert "age:" in dynamic["inputs"] and "income:" in dynamic["inputs"], dynamic


def test_only_the_indices_became_integers(run: dict) -> None:
    dynamic = run[("lookup.py", 6, "TFG101")]["dynamic"]
    assert dynamic["inputs"].startswith("float32[") and "int32[" in dynamic["inputs"], dynamic


def test_nothing_is_written_outside_the_scratch_folder(run: dict) -> None:
    assert not Path("/nonexistent-tflint-graph-logs").exists()


def test_a_factory_is_called_with_the_module_s_own_arguments(run: dict) -> None:
    dynamic = run[("factory.py", 10, "TFG105")]["dynamic"]
    assert "make_step(2.0)" in dynamic["evidence"], dynamic


def test_an_owner_the_module_builds_in_a_factory(run: dict) -> None:
    evidence = run[("factory_owner.py", 13, "TFG106")]["dynamic"]["evidence"]
    assert "Agent built by the module's build_agent()" in evidence


def test_sizes_are_ints_and_a_static_one_a_python_int(run: dict) -> None:
    dynamic = run[("chunks.py", 9, "TFG209")]["dynamic"]
    assert ", py:2, int32[]" in dynamic["inputs"], dynamic


def test_targets_read_by_key_are_shaped_like_the_models_outputs(run: dict) -> None:
    dynamic = run[("keyed_targets.py", 28, "TFG101")]["dynamic"]
    assert "{mask: int32[2,4,4], count: float32[2,1]}" in dynamic["inputs"], dynamic


def test_a_step_s_keyed_targets_follow_its_helper_and_its_model(run: dict) -> None:
    dynamic = run[("keyed_step.py", 25, "TFG106")]["dynamic"]
    assert "(float32[2,4,4,3], {mask: int32[2,4,4], count: float32[2,1]})" in dynamic["inputs"]


def test_a_loop_over_a_parameter_gets_a_dataset_of_batches(run: dict) -> None:
    dynamic = run[("loops.py", 6, "TFG205")]["dynamic"]
    assert dynamic["inputs"].startswith("Dataset of (float32[2,4,4,3], {count:"), dynamic


def test_a_reduction_s_axes_are_added_to_the_guess(run: dict) -> None:
    dynamic = run[("loops.py", 15, "TFG305")]["dynamic"]
    assert "int32[2,4,4]" in dynamic["inputs"], dynamic


def test_a_retry_after_a_failed_step_starts_from_the_module_as_imported(run: dict) -> None:
    dynamic = run[("reranker.py", 21, "TFG105")]["dynamic"]
    assert "float32[2]" in dynamic["inputs"], dynamic


def test_scores_get_at_least_k_candidates(run: dict) -> None:
    dynamic = run[("topk.py", 11, "TFG101")]["dynamic"]
    assert "float32[5,8]" in dynamic["inputs"], dynamic


def test_features_get_the_ids_and_sequences_their_names_say(run: dict) -> None:
    tower = run[("towers.py", 29, "TFG102")]["dynamic"]["inputs"]
    for shown in ("title_tokens: int32[2,3]", "item_idx: int32[2]", "shop_idx: int32[2]"):
        assert shown in tower, tower


def test_a_second_optimizer_is_staged_on_a_fresh_copy(run: dict) -> None:
    evidence = run[("two_phase.py", 24, "TFG208")]["dynamic"]["evidence"]
    assert "then again with a new keras.optimizers.Adam() for optimizer" in evidence, evidence
    assert "ValueError: Creating variables on a non-first call" in evidence, evidence
