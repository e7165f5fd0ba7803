"""Callees reached through instances, constructors, ``super()`` and base classes across the
modules of one run (SPEC §1, item 6): a class defined in ``helpers.py``, used by the traced
code of ``train.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_support import write_tree
from tests.helpers import dedent
from tflint_graph import Config, lint_paths

HELPERS = dedent(
    """
    import random


    class Augmenter:
        def __init__(self):
            self.p = random.random()  # line 6

        def apply(self, x):
            return x * random.random()  # line 9

        @classmethod
        def make(cls, x):
            return x * random.random()  # line 13

        @staticmethod
        def static(x):
            return x * random.random()  # line 17

        def __call__(self, x):
            return x * random.random()  # line 20


    class Base:
        def __init__(self):
            self.p = random.random()  # line 25

        def call(self, x):
            return x * random.random()  # line 28

        def shared(self, x):
            return x * random.random()  # line 31
    """
)

INIT, APPLY, MAKE, STATIC, CALL_, BASE_INIT, BASE_CALL, SHARED = 6, 9, 13, 17, 20, 25, 28, 31


def _run(root: Path, train: str, **more: str) -> list[tuple[str, int, str, tuple[str, ...]]]:
    write_tree(root, {"helpers.py": HELPERS, "train.py": dedent(train), **more})
    found = []
    for f in lint_paths([root], Config()):
        if len(f.chain) > 1:
            assert f"(traced via {' -> '.join(f.chain)})" in f.message, f.message
        found.append((Path(f.path).relative_to(root).as_posix(), f.line, f.code, f.chain))
    return found


FOUND = {
    "constructor imported by name": (
        """
        import tensorflow as tf
        from helpers import Augmenter

        @tf.function
        def f(x):
            Augmenter()
            return x
        """,
        [(INIT, ("f()", "Augmenter.__init__()"))],
    ),
    "constructor through the module": (
        """
        import tensorflow as tf
        import helpers

        @tf.function
        def f(x):
            helpers.Augmenter()
            return x
        """,
        [(INIT, ("f()", "Augmenter.__init__()"))],
    ),
    "method of an instance name": (
        """
        import tensorflow as tf
        from helpers import Augmenter

        AUG = Augmenter()

        @tf.function
        def f(x):
            return AUG.apply(x)
        """,
        [(APPLY, ("f()", "apply()"))],
    ),
    "method of a construction": (
        """
        import tensorflow as tf
        import helpers

        @tf.function
        def f(x):
            return helpers.Augmenter().apply(x)
        """,
        [(INIT, ("f()", "Augmenter.__init__()")), (APPLY, ("f()", "apply()"))],
    ),
    "attribute constructed in __init__": (
        """
        import tensorflow as tf
        from helpers import Augmenter

        class Holder:
            def __init__(self):
                self.aug = Augmenter()

            @tf.function
            def step(self, x):
                return self.aug.apply(x) + self.aug(x)
        """,
        [(APPLY, ("step()", "apply()")), (CALL_, ("step()", "Augmenter.__call__()"))],
    ),
    "classmethod and staticmethod through the class": (
        """
        import tensorflow as tf
        import helpers
        from helpers import Augmenter

        @tf.function
        def f(x):
            return Augmenter.make(x) + helpers.Augmenter.static(x)
        """,
        [(MAKE, ("f()", "make()")), (STATIC, ("f()", "static()"))],
    ),
    "super() and inherited methods of a base class": (
        """
        import tensorflow as tf
        from helpers import Base

        class Child(Base):
            def call(self, x):
                return x

            @tf.function
            def go(self, x):
                return super().call(x) + self.shared(x)
        """,
        [(BASE_CALL, ("go()", "call()")), (SHARED, ("go()", "shared()"))],
    ),
    "__init__ of a base class for a class defined here": (
        """
        import tensorflow as tf
        import helpers

        class Plain(helpers.Base):
            pass

        class Own(helpers.Base):
            def __init__(self):
                super().__init__()

        @tf.function
        def f(x):
            Plain()
            return x

        @tf.function
        def g(x):
            Own()
            return x
        """,
        [(BASE_INIT, ("f()", "Base.__init__()"))],
    ),
}


@pytest.mark.parametrize("case", list(FOUND), ids=list(FOUND))
def test_method_of_another_module_reached_through_an_object(tmp_path: Path, case: str) -> None:
    train, expected = FOUND[case]
    found = _run(tmp_path, train)
    assert found == [("helpers.py", line, "TFG103", chain) for line, chain in expected]


def test_methods_inherited_from_a_third_module(tmp_path: Path) -> None:
    # train.py -> helpers.Child, whose __init__ and run() come from base.py.
    base = dedent(
        """
        import time

        class Root:
            def __init__(self):
                self.t = time.time()

            def run(self, x):
                return x * time.time()
        """
    )
    helpers = "from base import Root\n\n\nclass Child(Root):\n    pass\n"
    train = """
        import tensorflow as tf
        from helpers import Child

        @tf.function
        def f(x):
            return Child().run(x)
        """
    write_tree(tmp_path, {"base.py": base, "helpers.py": helpers, "train.py": dedent(train)})
    found = [(Path(f.path).name, f.line, f.code, f.chain) for f in lint_paths([tmp_path], Config())]
    assert found == [
        ("base.py", 5, "TFG104", ("f()", "Root.__init__()")),
        ("base.py", 8, "TFG104", ("f()", "run()")),
    ]


NOT_TRACED = {
    "constructed at module level": """
        import tensorflow as tf
        from helpers import Base

        BASE = Base()

        @tf.function
        def f(x):
            return x
        """,
    "constructed in an eager function": """
        import tensorflow as tf
        import helpers

        @tf.function
        def f(x, aug):
            return x

        def main(x):
            return f(x, helpers.Augmenter())
        """,
    "constructed in tf.py_function's callable": """
        import tensorflow as tf
        import helpers

        def eager(v):
            return helpers.Augmenter().apply(v)

        @tf.function
        def f(x):
            y = tf.py_function(lambda v: helpers.Base().call(v), [x], tf.float32)
            return tf.py_function(eager, [y], tf.float32)
        """,
    "constructed under tf.executing_eagerly()": """
        import tensorflow as tf
        from helpers import Augmenter

        @tf.function
        def f(x):
            if tf.executing_eagerly():
                x = Augmenter().apply(x)
            return x
        """,
    "attribute reassigned to another class": """
        import tensorflow as tf
        from helpers import Augmenter, Base

        class Holder:
            def __init__(self):
                self.helper = Base()

            def swap(self):
                self.helper = Augmenter()

            @tf.function
            def step(self, x):
                return self.helper.apply(x)
        """,
    "instance of a package outside the run": """
        import tensorflow as tf
        from widgets import Widget

        @tf.function
        def f(x):
            return Widget().apply(x)
        """,
    "instance the name does not surely hold": """
        import tensorflow as tf
        from helpers import Augmenter

        @tf.function
        def f(x, aug=None):
            if aug is None:
                aug = x
            return aug.apply(x)
        """,
}


@pytest.mark.parametrize("case", list(NOT_TRACED), ids=list(NOT_TRACED))
def test_object_of_another_module_not_followed(tmp_path: Path, case: str) -> None:
    assert _run(tmp_path, NOT_TRACED[case]) == []


def test_warm_run_gives_what_a_cold_one_gives(tmp_path: Path) -> None:
    train, _ = FOUND["attribute constructed in __init__"]
    write_tree(tmp_path / "p", {"helpers.py": HELPERS, "train.py": dedent(train)})
    cache = tmp_path / "cache"
    runs = [
        [(f.path, f.line, f.chain) for f in lint_paths([tmp_path / "p"], Config(), cache=cache)]
        for _ in range(2)
    ]
    assert runs[0] == runs[1] != []


COUNTER = dedent(
    """
    class Counter:
        def bump(self, x):
            self.n += 1
            return x

        def __call__(self, x):
            self.n += 1
            return x
    """
)


def test_state_of_an_object_constructed_per_trace_elsewhere_is_not_reported(
    tmp_path: Path,
) -> None:
    fresh = dedent(
        """
        import tensorflow as tf
        from counter import Counter

        @tf.function
        def f(x):
            c = Counter()
            return c.bump(x) + Counter().bump(x) + c(x)
        """
    )
    assert _run(tmp_path / "a", fresh, **{"counter.py": COUNTER}) == []
    shared = (
        fresh + "\n\nSHARED = Counter()\n\n\n@tf.function\ndef g(x):\n    return SHARED.bump(x)\n"
    )
    assert _run(tmp_path / "b", shared, **{"counter.py": COUNTER}) == [
        ("counter.py", 3, "TFG106", ("f()", "bump()"))
    ]


def test_run_once_decorator_of_another_module(tmp_path: Path) -> None:
    # The decorator's module imports no TensorFlow (summarised from CPython's tree).
    once = dedent(
        """
        def once(f):
            seen = set()

            def wrapper(self, *args):
                if id(self) not in seen:
                    f(self, *args)
                    seen.add(id(self))

            return wrapper
        """
    )
    layers = dedent(
        """
        import tensorflow as tf

        from utils import once


        class Linear:
            @once.once
            def _initialize(self, x):
                self.w = tf.Variable(tf.ones_like(x))

            def _plain(self, x):
                self.v = tf.Variable(tf.ones_like(x))

            def __call__(self, x):
                self._initialize(x)
                self._plain(x)
                return x * self.w
        """
    )
    train = """
        import tensorflow as tf
        from layers import Linear

        LAYER = Linear()

        @tf.function
        def f(x):
            return LAYER(x)
        """
    found = _run(
        tmp_path, train, **{"utils/__init__.py": "", "utils/once.py": once, "layers.py": layers}
    )
    assert found == [("layers.py", 12, "TFG205", ("f()", "Linear.__call__()", "_plain()"))]

    # The decorator and the layer sit in a folder with no `__init__.py` inside a package
    # (a namespace portion: `pkg.src.once`), imported by the package's dotted path.
    nested = layers.replace("from utils import once", "from pkg.src import once")
    train_nested = train.replace("from layers import", "from pkg.src.layers import")
    found = _run(
        tmp_path / "ns",
        train_nested,
        **{"pkg/__init__.py": "", "pkg/src/once.py": once, "pkg/src/layers.py": nested},
    )
    assert found == [("pkg/src/layers.py", 12, "TFG205", ("f()", "Linear.__call__()", "_plain()"))]


def test_attribute_of_an_object_constructed_per_trace_elsewhere_is_fresh(tmp_path: Path) -> None:
    owner = dedent(
        """
        from counter import Counter


        class Owner:
            def __init__(self):
                self.counter = Counter()

            def run(self, x):
                return self.counter.bump(x)
        """
    )
    fresh = """
        import tensorflow as tf
        from owner import Owner

        @tf.function
        def f(x):
            return Owner().run(x)
        """
    files = {"counter.py": COUNTER, "owner.py": owner}
    assert _run(tmp_path / "a", fresh, **files) == []
    shared = """
        import tensorflow as tf
        from owner import Owner

        OWNER = Owner()

        @tf.function
        def f(x):
            return OWNER.run(x)
        """
    assert _run(tmp_path / "b", shared, **files) == [
        ("counter.py", 3, "TFG106", ("f()", "run()", "bump()"))
    ]


def test_a_function_handed_to_an_escape_hatch_in_another_module_is_not_traced(
    tmp_path: Path,
) -> None:
    eager_ops = dedent(
        """
        import tensorflow as tf


        class Resource:
            @classmethod
            def from_py_function(cls, make_table, inputs):
                def wrapped(value):
                    return make_table(value)

                return tf.py_function(func=wrapped, inp=inputs, Tout=tf.float32)

            @classmethod
            def apply(cls, fn, x):
                return fn(x)
        """
    )
    train = """
        import tensorflow as tf
        from eager_ops import Resource

        def read_table(name):
            return float(name.numpy())  # runs eagerly, inside tf.py_function

        def read_now(name):
            return name.numpy()  # line 8: called while tracing

        @tf.function
        def f(x):
            return Resource.from_py_function(read_table, [x]) + Resource.apply(read_now, x)
        """
    found = _run(tmp_path, train, **{"eager_ops.py": eager_ops})
    assert found == [("train.py", 8, "TFG202", ("f()", "read_now()"))]
