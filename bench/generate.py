"""Generate a deterministic synthetic Python tree that looks like a TensorFlow 2 project.

    python bench/generate.py --lines 200000 --out /tmp/tree [--seed 0]

About 35% of the modules use TensorFlow (``tf.function``s, Keras ``Layer``/``Model``
subclasses with ``call``/``train_step``, ``tf.data`` pipelines with ``map`` callbacks, helpers
imported across modules and called from traced code, and a few real trace-time bugs); the
rest is plain Python (utilities, configuration dataclasses, CLIs, I/O, tests).  Module sizes
follow a log-normal law clipped to 50..1500 lines with a median near 200.  Every template is
written here for the benchmark; the same ``--seed`` and ``--lines`` give byte-identical trees.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "synth"
TF_SHARE = 0.35
# Chance that one traced block carries a real trace-time bug: "a few" per tree.
BUG_RATE = 0.03
MODULES_PER_PACKAGE = 12
MARKER = ".generated"

VERBS = (
    "compute",
    "build",
    "load",
    "parse",
    "normalize",
    "project",
    "merge",
    "split",
    "scale",
    "filter",
    "collect",
    "resolve",
    "update",
    "render",
    "encode",
    "decode",
    "gather",
    "pool",
    "align",
    "blend",
)
NOUNS = (
    "encoder",
    "decoder",
    "feature",
    "token",
    "batch",
    "sample",
    "image",
    "label",
    "score",
    "weight",
    "signal",
    "record",
    "vocab",
    "anchor",
    "patch",
    "frame",
    "mask",
    "query",
    "window",
    "bucket",
)
WORDS = ("alpha", "beta", "gamma", "delta", "sigma", "omega", "kappa", "lambda", "theta", "zeta")
TF_KINDS = ("layers", "models", "data", "training", "ops")
PLAIN_KINDS = ("utils", "config", "cli", "io", "tests")
PLAIN_WEIGHTS = (0.34, 0.18, 0.08, 0.14, 0.26)


@dataclass
class Helper:
    """A function another module can import: ``from module import name``."""

    module: str
    name: str


@dataclass
class Module:
    """One module being written: its body blocks and the imports they need."""

    dotted: str
    kind: str
    rng: random.Random
    blocks: list[list[str]] = field(default_factory=list)
    imports: set[str] = field(default_factory=set)
    from_imports: dict[str, set[str]] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)
    exported: list[str] = field(default_factory=list)
    module_lists: list[str] = field(default_factory=list)
    force_bug: bool = False

    @property
    def lines(self) -> int:
        return sum(len(b) + 2 for b in self.blocks)

    def fresh(self, make: str) -> str:
        """A name unique in this module (templates reuse the same word lists)."""
        base = make
        n = 2
        while make in self.names:
            make = f"{base}_{n}"
            n += 1
        self.names.add(make)
        return make

    def func_name(self) -> str:
        return self.fresh(f"{self.rng.choice(VERBS)}_{self.rng.choice(NOUNS)}")

    def class_name(self, suffix: str) -> str:
        a, b = self.rng.choice(NOUNS), self.rng.choice(WORDS)
        return self.fresh(f"{b.capitalize()}{a.capitalize()}{suffix}")

    def use(self, helper: Helper) -> str:
        if helper.module != self.dotted:
            self.from_imports.setdefault(helper.module, set()).add(helper.name)
        return helper.name


def _tf_ops(rng: random.Random, count: int, indent: str) -> list[str]:
    """A few shape-preserving TensorFlow statements on ``x``."""
    ops = [
        "x = tf.nn.relu(x)",
        "x = tf.clip_by_value(x, -{f}, {f})",
        "mean = tf.reduce_mean(x, axis=-1, keepdims=True)",
        "x = x - tf.reduce_mean(x, axis=-1, keepdims=True)",
        "x = x * tf.math.rsqrt(tf.reduce_mean(tf.square(x), axis=-1, keepdims=True) + 1e-6)",
        "x = tf.where(tf.math.is_finite(x), x, tf.zeros_like(x))",
        "x = tf.nn.gelu(x) * {f}",
        "x = tf.cast(x, tf.float32) + tf.constant({f}, dtype=tf.float32)",
        "x = tf.math.tanh(x / {f})",
        "x = tf.identity(x, name='{w}')",
    ]
    out = []
    for _ in range(count):
        op = rng.choice(ops).format(f=round(rng.uniform(0.5, 8.0), 2), w=rng.choice(WORDS))
        out.append(indent + op)
    return out


def _bug(mod: Module, indent: str) -> list[str]:
    """One real trace-time bug for traced code operating on ``x``."""
    kind = mod.rng.randrange(6)
    if kind == 0:
        return [f'{indent}print("{mod.rng.choice(NOUNS)}:", x)']
    if kind == 1:
        mod.imports.add("random")
        return [f"{indent}x = x * random.uniform(0.9, 1.1)"]
    if kind == 2:
        mod.imports.add("time")
        return [f"{indent}started = time.time()", f"{indent}x = x + started * 0.0"]
    if kind == 3:
        seen = mod.fresh(f"_SEEN_{mod.rng.choice(NOUNS).upper()}")
        mod.module_lists.append(seen)
        return [f"{indent}{seen}.append(x)"]
    if kind == 4:
        return [f"{indent}host_copy = x.numpy()", f"{indent}x = x + float(host_copy.mean())"]
    return [f"{indent}offset = tf.Variable(tf.zeros([1]))", f"{indent}x = x + offset"]


def _maybe_bug(mod: Module, indent: str, traced: bool = True) -> list[str]:
    """A bug at ``BUG_RATE``; the first traced site of a module with ``force_bug`` always has
    one, so that even a small tree holds a finding."""
    if traced and mod.force_bug:
        mod.force_bug = False
        return _bug(mod, indent)
    return _bug(mod, indent) if mod.rng.random() < BUG_RATE else []


def _docstring(rng: random.Random, indent: str, what: str) -> list[str]:
    verb, noun = rng.choice(VERBS), rng.choice(NOUNS)
    if rng.random() < 0.5:
        return [f'{indent}"""{verb.capitalize()} the {noun} {what}."""']
    return [
        f'{indent}"""{verb.capitalize()} the {noun} {what}.',
        "",
        f"{indent}The {rng.choice(NOUNS)} is expected to be {rng.choice(WORDS)}-aligned; callers",
        f"{indent}own the returned value.",
        f'{indent}"""',
    ]


# --- TensorFlow blocks ------------------------------------------------------------------------


def tf_helper(mod: Module, tf_helpers: list[Helper]) -> None:
    rng = mod.rng
    name = mod.func_name()
    body = [
        f"def {name}(x: tf.Tensor, scale: float = {round(rng.uniform(0.1, 3.0), 2)}) -> tf.Tensor:",
        *_docstring(rng, "    ", "tensor"),
        *_tf_ops(rng, rng.randint(2, 6), "    "),
        *_maybe_bug(mod, "    ", traced=False),
        "    return x * scale",
    ]
    mod.blocks.append(body)
    tf_helpers.append(Helper(mod.dotted, name))
    mod.exported.append(name)


def _call_helpers(mod: Module, tf_helpers: list[Helper], indent: str) -> list[str]:
    out = []
    for _ in range(mod.rng.randint(0, 2)):
        if tf_helpers:
            out.append(f"{indent}x = {mod.use(mod.rng.choice(tf_helpers))}(x)")
    return out


def tf_function(mod: Module, tf_helpers: list[Helper]) -> None:
    rng = mod.rng
    name = mod.func_name()
    dim = rng.choice((16, 32, 64, 128, 256))
    decorator = rng.choice(
        (
            "@tf.function",
            f"@tf.function(input_signature=[tf.TensorSpec([None, {dim}], tf.float32)])",
            "@tf.function(jit_compile=True)",
            "@tf.function(reduce_retracing=True)",
        )
    )
    body = [
        decorator,
        f"def {name}(x: tf.Tensor) -> tf.Tensor:",
        *_docstring(rng, "    ", "batch in graph mode"),
        *_tf_ops(rng, rng.randint(2, 5), "    "),
        *_call_helpers(mod, tf_helpers, "    "),
        *_maybe_bug(mod, "    "),
    ]
    if rng.random() < 0.4:
        body += [
            "    total = tf.zeros_like(x)",
            f"    for i in tf.range({rng.randint(2, 9)}):",
            "        total += x * tf.cast(i, x.dtype)",
            "    x = total",
        ]
    body.append("    return x")
    mod.blocks.append(body)
    mod.exported.append(name)


def keras_layer(mod: Module, tf_helpers: list[Helper]) -> None:
    rng = mod.rng
    cls = mod.class_name("Layer")
    call = [
        "        x = tf.matmul(inputs, self.kernel) + self.bias",
        *_tf_ops(rng, rng.randint(1, 4), "        "),
        *_call_helpers(mod, tf_helpers, "        "),
        *_maybe_bug(mod, "        "),
    ]
    body = [
        f"class {cls}(tf.keras.layers.Layer):",
        *_docstring(rng, "    ", "projection"),
        "",
        f"    def __init__(self, units: int = {rng.choice((32, 64, 128))}, "
        'activation: str = "relu", **kwargs) -> None:',
        "        super().__init__(**kwargs)",
        "        self.units = units",
        "        self.activation = tf.keras.activations.get(activation)",
        "",
        "    def build(self, input_shape: tf.TensorShape) -> None:",
        "        self.kernel = self.add_weight(",
        '            name="kernel",',
        "            shape=(int(input_shape[-1]), self.units),",
        '            initializer="glorot_uniform",',
        "        )",
        "        self.bias = self.add_weight(",
        '            name="bias", shape=(self.units,), initializer="zeros"',
        "        )",
        "        super().build(input_shape)",
        "",
        "    def call(self, inputs: tf.Tensor, training: bool = False) -> tf.Tensor:",
        *call,
        "        if training:",
        f"            x = tf.nn.dropout(x, rate={round(rng.uniform(0.05, 0.5), 2)})",
        "        return self.activation(x)",
        "",
        "    def get_config(self) -> dict[str, object]:",
        "        config = super().get_config()",
        '        config.update({"units": self.units})',
        "        return config",
    ]
    mod.blocks.append(body)
    mod.exported.append(cls)


def keras_model(mod: Module, tf_helpers: list[Helper]) -> None:
    rng = mod.rng
    cls = mod.class_name("Model")
    widths = ", ".join(str(rng.choice((64, 128, 256, 512))) for _ in range(rng.randint(1, 3)))
    body = [
        f"class {cls}(tf.keras.Model):",
        *_docstring(rng, "    ", "classifier"),
        "",
        f"    def __init__(self, num_classes: int = {rng.choice((2, 10, 100))}, **kwargs) -> None:",
        "        super().__init__(**kwargs)",
        "        self.hidden = [",
        f'            tf.keras.layers.Dense(n, activation="relu") for n in ({widths},)',
        "        ]",
        "        self.head = tf.keras.layers.Dense(num_classes)",
        '        self.loss_tracker = tf.keras.metrics.Mean(name="loss")',
        "",
        "    def call(self, inputs: tf.Tensor, training: bool = False) -> tf.Tensor:",
        "        x = inputs",
        "        for layer in self.hidden:",
        "            x = layer(x, training=training)",
        *_call_helpers(mod, tf_helpers, "        "),
        "        return self.head(x)",
        "",
        "    def train_step(self, data: tuple[tf.Tensor, tf.Tensor]) -> dict[str, tf.Tensor]:",
        "        x, y = data",
        *_maybe_bug(mod, "        "),
        "        with tf.GradientTape() as tape:",
        "            logits = self(x, training=True)",
        "            loss = self.compiled_loss(y, logits, regularization_losses=self.losses)",
        "        grads = tape.gradient(loss, self.trainable_variables)",
        "        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))",
        "        self.loss_tracker.update_state(loss)",
        '        return {"loss": self.loss_tracker.result()}',
        "",
        "    @property",
        "    def metrics(self) -> list[tf.keras.metrics.Metric]:",
        "        return [self.loss_tracker]",
    ]
    mod.blocks.append(body)
    mod.exported.append(cls)


def data_pipeline(mod: Module, tf_helpers: list[Helper]) -> None:
    rng = mod.rng
    noun = mod.fresh(rng.choice(NOUNS))
    dim = rng.choice((8, 16, 32, 64))
    parse = [
        f"def _parse_{noun}(record: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:",
        "    features = tf.io.parse_single_example(",
        "        record,",
        "        {",
        f'            "x": tf.io.FixedLenFeature([{dim}], tf.float32),',
        '            "y": tf.io.FixedLenFeature([], tf.int64),',
        "        },",
        "    )",
        '    x = features["x"]',
        *_tf_ops(rng, rng.randint(1, 4), "    "),
        *_maybe_bug(mod, "    "),
        '    return x, tf.cast(features["y"], tf.int32)',
    ]
    extra = []
    if tf_helpers:
        helper = mod.use(rng.choice(tf_helpers))
        extra = [f"    ds = ds.map(lambda x, y: ({helper}(x), y))"]
    make = [
        f"def make_{noun}_dataset(",
        "    pattern: str, batch_size: int = 32, shuffle: bool = True",
        ") -> tf.data.Dataset:",
        *_docstring(rng, "    ", "input pipeline"),
        "    files = tf.data.Dataset.list_files(pattern, shuffle=shuffle)",
        "    ds = files.interleave(",
        "        tf.data.TFRecordDataset, cycle_length=4, num_parallel_calls=tf.data.AUTOTUNE",
        "    )",
        "    if shuffle:",
        f"        ds = ds.shuffle(10_000, seed={rng.randint(0, 9999)})",
        f"    ds = ds.map(_parse_{noun}, num_parallel_calls=tf.data.AUTOTUNE)",
        *extra,
        "    return ds.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)",
    ]
    mod.blocks += [parse, make]
    mod.exported.append(f"make_{noun}_dataset")


def trainer(mod: Module, tf_helpers: list[Helper]) -> None:
    rng = mod.rng
    cls = mod.class_name("Trainer")
    mod.imports.add("logging")
    step = [
        "    @tf.function",
        "    def train_step(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:",
        *_call_helpers(mod, tf_helpers, "        "),
        *_maybe_bug(mod, "        "),
        "        with tf.GradientTape() as tape:",
        "            logits = self.model(x, training=True)",
        "            loss = tf.reduce_mean(",
        "                tf.keras.losses.sparse_categorical_crossentropy(",
        "                    y, logits, from_logits=True",
        "                )",
        "            )",
        "        grads = tape.gradient(loss, self.model.trainable_variables)",
        "        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))",
        "        self.step.assign_add(1)",
        "        return loss",
    ]
    body = [
        f"class {cls}:",
        *_docstring(rng, "    ", "training loop"),
        "",
        "    def __init__(self, model: tf.keras.Model, learning_rate: float = "
        f"{rng.choice(('1e-3', '3e-4', '1e-4'))}) -> None:",
        "        self.model = model",
        "        self.optimizer = tf.keras.optimizers.Adam(learning_rate)",
        "        self.step = tf.Variable(0, dtype=tf.int64, trainable=False)",
        "",
        *step,
        "",
        "    def fit(self, dataset: tf.data.Dataset, epochs: int = 1) -> list[float]:",
        "        history: list[float] = []",
        "        for epoch in range(epochs):",
        "            total = 0.0",
        "            for x, y in dataset:",
        "                total += float(self.train_step(x, y))",
        "            history.append(total)",
        '            logger.info(f"epoch {epoch}: loss={total:.4f}")',
        "        return history",
    ]
    mod.blocks.append(body)
    mod.exported.append(cls)


# --- plain Python blocks ------------------------------------------------------------------------


def util_function(mod: Module, plain_helpers: list[Helper]) -> None:
    rng = mod.rng
    name = mod.func_name()
    body = [
        f"def {name}(items: list[str], *, limit: int = {rng.randint(10, 500)}, "
        "strict: bool = False) -> dict[str, int]:",
        *_docstring(rng, "    ", "items"),
        "    counts: dict[str, int] = {}",
        "    for item in items[:limit]:",
        "        key = item.strip().lower()",
        "        if not key:",
        "            if strict:",
        f'                raise ValueError(f"empty item in {name}: {{item!r}}")',
        "            continue",
        "        counts[key] = counts.get(key, 0) + 1",
        f"    return {{k: v for k, v in sorted(counts.items()) if v >= {rng.randint(1, 3)}}}",
    ]
    mod.blocks.append(body)
    plain_helpers.append(Helper(mod.dotted, name))
    mod.exported.append(name)


def util_class(mod: Module, plain_helpers: list[Helper]) -> None:
    rng = mod.rng
    cls = mod.class_name("Registry")
    calls = []
    if plain_helpers:
        helper = mod.use(rng.choice(plain_helpers))
        calls = [
            "    def summary(self) -> dict[str, int]:",
            f"        return {helper}(list(self._items))",
            "",
        ]
    body = [
        f"class {cls}:",
        *_docstring(rng, "    ", "registry"),
        "",
        "    def __init__(self) -> None:",
        "        self._items: dict[str, Callable[..., object]] = {}",
        "",
        "    def register(self, name: str) -> Callable[[F], F]:",
        "        def decorator(fn: F) -> F:",
        "            if name in self._items:",
        f'                raise KeyError(f"{{name!r}} is already registered in {cls}")',
        "            self._items[name] = fn",
        "            return fn",
        "",
        "        return decorator",
        "",
        "    def __contains__(self, name: object) -> bool:",
        "        return name in self._items",
        "",
        "    def __len__(self) -> int:",
        "        return len(self._items)",
        "",
        *calls,
        "    @property",
        "    def names(self) -> list[str]:",
        "        return sorted(self._items)",
    ]
    mod.from_imports.setdefault("collections.abc", set()).add("Callable")
    mod.from_imports.setdefault("typing", set()).add("TypeVar")
    if "F" not in mod.names:
        mod.names.add("F")
        mod.blocks.insert(0, ['F = TypeVar("F", bound=Callable[..., object])'])
    mod.blocks.append(body)
    mod.exported.append(cls)


def config_class(mod: Module, plain_helpers: list[Helper]) -> None:
    rng = mod.rng
    cls = mod.class_name("Config")
    mod.imports.add("dataclasses")
    fields = [
        f'    name: str = "{rng.choice(WORDS)}"',
        f"    batch_size: int = {rng.choice((16, 32, 64, 128))}",
        f"    learning_rate: float = {rng.choice(('1e-3', '3e-4', '0.01'))}",
        f"    layers: tuple[int, ...] = ({rng.randint(8, 512)}, {rng.randint(8, 512)})",
        "    tags: list[str] = dataclasses.field(default_factory=list)",
    ]
    for _ in range(rng.randint(0, 6)):
        fields.append(f"    {mod.fresh(rng.choice(NOUNS) + '_size')}: int = {rng.randint(1, 99)}")
    body = [
        "@dataclasses.dataclass(frozen=True)",
        f"class {cls}:",
        *_docstring(rng, "    ", "settings"),
        "",
        *fields,
        "",
        "    def to_dict(self) -> dict[str, object]:",
        "        return dataclasses.asdict(self)",
        "",
        "    @classmethod",
        f'    def from_dict(cls, data: dict[str, object]) -> "{cls}":',
        "        known = {f.name for f in dataclasses.fields(cls)}",
        "        return cls(**{k: v for k, v in data.items() if k in known})",
        "",
        "    def validate(self) -> None:",
        "        if self.batch_size <= 0:",
        '            raise ValueError(f"batch_size must be positive, got {self.batch_size}")',
        "        if not 0 < self.learning_rate < 1:",
        '            raise ValueError(f"learning_rate out of range: {self.learning_rate}")',
    ]
    mod.blocks.append(body)
    mod.exported.append(cls)


def io_function(mod: Module, plain_helpers: list[Helper]) -> None:
    rng = mod.rng
    name = mod.func_name()
    mod.imports.update({"json", "os"})
    mod.from_imports.setdefault("pathlib", set()).add("Path")
    body = [
        f"def {name}(root: str | os.PathLike[str], pattern: str = "
        f'"*.{rng.choice(("json", "txt", "csv"))}") -> list[dict[str, object]]:',
        *_docstring(rng, "    ", "files"),
        "    records: list[dict[str, object]] = []",
        "    for path in sorted(Path(root).rglob(pattern)):",
        "        try:",
        '            text = path.read_text(encoding="utf-8")',
        "        except OSError as exc:",
        f'            raise RuntimeError(f"cannot read {{path}} in {name}") from exc',
        "        if not text.strip():",
        "            continue",
        "        try:",
        "            data = json.loads(text)",
        "        except json.JSONDecodeError:",
        '            data = {"path": str(path), "lines": text.count("\\n")}',
        '        records.append(data if isinstance(data, dict) else {"value": data})',
        "    return records",
    ]
    mod.blocks.append(body)
    plain_helpers.append(Helper(mod.dotted, name))
    mod.exported.append(name)


def cli_main(mod: Module, plain_helpers: list[Helper]) -> None:
    rng = mod.rng
    if "main" in mod.names:
        util_function(mod, plain_helpers)
        return
    mod.names.add("main")
    mod.imports.update({"argparse", "sys"})
    helper = mod.use(rng.choice(plain_helpers)) if plain_helpers else "sorted"
    options = []
    for _ in range(rng.randint(2, 6)):
        opt = mod.fresh(rng.choice(NOUNS))
        options.append(
            f'    parser.add_argument("--{opt}", type=int, default={rng.randint(1, 64)}, '
            f'help="number of {opt}s")'
        )
    body = [
        "def main(argv: list[str] | None = None) -> int:",
        *_docstring(rng, "    ", "command line"),
        "    parser = argparse.ArgumentParser(description=__doc__)",
        '    parser.add_argument("inputs", nargs="*", help="input names")',
        '    parser.add_argument("--verbose", action="store_true")',
        *options,
        "    args = parser.parse_args(argv)",
        f"    result = {helper}(args.inputs)",
        "    if args.verbose:",
        "        for key in result:",
        '            print(f"{key}\\t{result[key] if isinstance(result, dict) else key}")',
        "    return 0 if result else 1",
    ]
    mod.blocks.append(body)
    mod.blocks.append(['if __name__ == "__main__":', "    sys.exit(main())"])


def test_functions(mod: Module, plain_helpers: list[Helper]) -> None:
    rng = mod.rng
    if not plain_helpers:
        util_function(mod, plain_helpers)
        return
    helper = mod.use(rng.choice(plain_helpers))
    mod.imports.add("pytest")
    name = mod.fresh(f"test_{helper}")
    body = [
        "@pytest.mark.parametrize(",
        '    "items",',
        f'    [["a", "b", "a"], [], ["{rng.choice(WORDS)}"] * {rng.randint(1, 9)}],',
        ")",
        f"def {name}(items: list[str]) -> None:",
        f"    result = {helper}(items)",
        "    assert result is not None",
        "    assert isinstance(result, (dict, list))",
        "",
        "",
        f"def {mod.fresh(name + '_empty')}(tmp_path) -> None:",
        '    (tmp_path / "empty.txt").write_text("")',
        f"    assert not {helper}([])",
    ]
    mod.blocks.append(body)


TF_BLOCKS = {
    "layers": (keras_layer, keras_layer, tf_helper, tf_function),
    "models": (keras_model, keras_layer, tf_function),
    "data": (data_pipeline, data_pipeline, tf_helper),
    "training": (trainer, tf_function, tf_function, tf_helper),
    "ops": (tf_helper, tf_helper, tf_helper, tf_function),
}
PLAIN_BLOCKS = {
    "utils": (util_function, util_function, util_class),
    "config": (config_class, config_class, util_function),
    "cli": (cli_main, util_function, util_function),
    "io": (io_function, io_function, util_function),
    "tests": (test_functions,),
}


def render(mod: Module) -> str:
    """The module's text: docstring, sorted imports, module state, then the blocks."""
    head = [f'"""{mod.kind.capitalize()} for the {mod.dotted.split(".")[-2]} package."""', ""]
    head.append("from __future__ import annotations")
    head.append("")
    for name in sorted(mod.imports - {"tensorflow", "numpy"}):
        head.append(f"import {name}")
    # Import groups as isort would have them: standard library, third party, first party.
    stdlib = sorted(m for m in mod.from_imports if not m.startswith(PACKAGE))
    for module in stdlib:
        head.append(f"from {module} import {', '.join(sorted(mod.from_imports[module]))}")
    if "tensorflow" in mod.imports:
        head += ["", "import tensorflow as tf"]
    local = sorted(m for m in mod.from_imports if m.startswith(PACKAGE))
    if local:
        head.append("")
    for module in local:
        names = sorted(mod.from_imports[module])
        line = f"from {module} import {', '.join(names)}"
        if len(line) > 99:
            line = "\n".join([f"from {module} import (", *(f"    {n}," for n in names), ")"])
        head.append(line)
    head.append("")
    if "logging" in mod.imports:
        head.append("logger = logging.getLogger(__name__)")
    for name in mod.module_lists:
        head.append(f"{name}: list[object] = []")
    if mod.exported and mod.kind != "tests":
        exported = f"__all__ = {sorted(mod.exported)!r}"
        if len(exported) > 99:
            exported = "\n".join(
                ["__all__ = [", *(f'    "{n}",' for n in sorted(mod.exported)), "]"]
            )
        head.append(exported)
    parts = ["\n".join(head).rstrip() + "\n"]
    parts += ["\n".join(block) + "\n" for block in mod.blocks]
    return "\n\n".join(parts)


def _module_size(rng: random.Random) -> int:
    return max(50, min(1500, round(math.exp(rng.gauss(math.log(200), 0.8)))))


def generate(out: Path, lines: int = 200_000, seed: int = 0) -> dict[str, int]:
    """Write the tree under ``out`` (replaced if it exists); return counts of what it holds."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rng = random.Random(seed)
    tf_helpers: list[Helper] = []
    plain_helpers: list[Helper] = []
    stats = {"modules": 0, "tf_modules": 0, "plain_modules": 0, "lines": 0}
    package_index = 0
    package: Path | None = None
    in_package: list[str] = []

    def close_package() -> None:
        if package is not None:
            init = f'"""The {package.name} package."""\n\n__all__ = {sorted(in_package)!r}\n'
            (package / "__init__.py").write_text(init, encoding="utf-8")
            stats["lines"] += init.count("\n")

    (out / PACKAGE).mkdir()
    (out / PACKAGE / "__init__.py").write_text('"""Synthetic benchmark project."""\n')
    stats["lines"] += 1
    while stats["lines"] < lines:
        if package is None or len(in_package) >= MODULES_PER_PACKAGE:
            close_package()
            area = rng.choice(("vision", "text", "audio", "tabular", "core", "serving"))
            package = out / PACKAGE / f"{area}_{package_index:03d}"
            package.mkdir()
            package_index += 1
            in_package = []
        use_tf = rng.random() < TF_SHARE
        kind = rng.choice(TF_KINDS) if use_tf else rng.choices(PLAIN_KINDS, PLAIN_WEIGHTS)[0]
        stem = f"{'test' if kind == 'tests' else kind}_{rng.choice(NOUNS)}_{len(in_package)}"
        dotted = f"{PACKAGE}.{package.name}.{stem}"
        mod = Module(dotted, kind, random.Random(rng.random()))
        if use_tf:
            mod.imports.add("tensorflow")
            mod.force_bug = stats["tf_modules"] == 0
        target = min(_module_size(rng), lines - stats["lines"] + 40)
        templates = TF_BLOCKS[kind] if use_tf else PLAIN_BLOCKS[kind]
        while mod.lines < target:
            # Larger modules are mostly of their kind's blocks; a share of plain utilities too.
            if use_tf and mod.rng.random() < 0.25:
                util_function(mod, plain_helpers)
            elif use_tf:
                mod.rng.choice(templates)(mod, tf_helpers)
            else:
                mod.rng.choice(templates)(mod, plain_helpers)
        text = render(mod)
        (package / f"{stem}.py").write_text(text, encoding="utf-8")
        in_package.append(stem)
        stats["modules"] += 1
        stats["tf_modules" if use_tf else "plain_modules"] += 1
        stats["lines"] += text.count("\n")
    close_package()
    # A project's root has a marker (here as in any checked-out project): the cache then
    # lives there whichever files a run is given, as it does where a pre-commit hook runs.
    (out / "pyproject.toml").write_text(f'[project]\nname = "{PACKAGE}"\nversion = "0"\n')
    (out / MARKER).write_text(_stamp(lines, seed))
    return stats


def _stamp(lines: int, seed: int) -> str:
    # The generator's own hash too: an edited template must not reuse an old tree.
    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
    return f"lines={lines} seed={seed} generator={digest}\n"


def tf_module(lines: int = 1000, seed: int = 0) -> str:
    """One TensorFlow module of about ``lines`` lines with at least one real finding, for
    the editor-latency measurement (its helpers are its own: no cross-module imports)."""
    rng = random.Random(seed)
    mod = Module(f"{PACKAGE}.editor.model", "models", rng)
    mod.imports.add("tensorflow")
    helpers: list[Helper] = []
    blocks = (tf_helper, tf_helper, tf_function, keras_layer, keras_model, data_pipeline, trainer)
    debug = [
        "@tf.function",
        "def debug_step(x: tf.Tensor) -> tf.Tensor:",
        '    print("x:", x)',
        "    return x * 2.0",
    ]
    # A block is at most about 50 lines: stop short of the size and top up below.
    while render(mod).count("\n") + len(debug) + 60 < lines:
        rng.choice(blocks)(mod, helpers)
    mod.blocks.append(debug)
    text = render(mod)
    pad = lines - text.count("\n")
    if pad > 0:  # top up with a constant table so the size is exact
        rows = [f"    {rng.randint(0, 999)}," for _ in range(max(pad - 4, 1))]
        text += "\n\nLOOKUP = (\n" + "\n".join(rows) + "\n)\n"
    return text


def ensure(out: Path, lines: int, seed: int = 0) -> Path:
    """Generate the tree unless ``out`` already holds the one these parameters produce."""
    marker = out / MARKER
    if not (marker.is_file() and marker.read_text() == _stamp(lines, seed)):
        generate(out, lines, seed)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000, help="approximate total lines")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="directory to (re)create")
    args = parser.parse_args(argv)
    stats = generate(args.out, args.lines, args.seed)
    print(
        f"{args.out}: {stats['lines']} lines in {stats['modules']} modules "
        f"({stats['tf_modules']} TensorFlow, {stats['plain_modules']} plain)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
