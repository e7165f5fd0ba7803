"""Callees reached through instances, constructors, ``super()`` and base classes, within one
module (SPEC §1, item 6): each finding at its line, with the chain in the message; and the
near misses where the analysis cannot know what the object is, or the code runs eagerly."""

from __future__ import annotations

import pytest

from tests.helpers import dedent
from tflint_graph import Config, lint_source

HEAD = "import random\nimport tensorflow as tf\n\n"


def reported(body: str) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, code, chain) of every finding of ``HEAD + body``; each chain is also checked
    to be what the message says (``traced via f() -> apply()``)."""
    source = HEAD + dedent(body)
    found = []
    for f in lint_source(source, "m.py", Config()):
        if len(f.chain) > 1:
            assert f"(traced via {' -> '.join(f.chain)})" in f.message, f.message
        found.append((f.line, f.code, f.chain))
    return found


# Line numbers below count HEAD's three lines.
FOUND = {
    "local instance name": (
        """
        class Augmenter:
            def apply(self, x):
                return x * random.random()

        @tf.function
        def f(x):
            aug = Augmenter()
            return aug.apply(x)
        """,
        [(6, "TFG103", ("f()", "apply()"))],
    ),
    "method of a construction": (
        """
        class Augmenter:
            def apply(self, x):
                return x * random.random()

        @tf.function
        def f(x):
            return Augmenter().apply(x)
        """,
        [(6, "TFG103", ("f()", "apply()"))],
    ),
    "__init__ of a class constructed in traced code": (
        """
        class Augmenter:
            def __init__(self):
                self.p = random.random()

        @tf.function
        def f(x):
            aug = Augmenter()
            return x
        """,
        [(6, "TFG103", ("f()", "Augmenter.__init__()"))],
    ),
    "__init__ inherited from a base class": (
        """
        class Base:
            def __init__(self):
                self.p = random.random()

        class Augmenter(Base):
            pass

        @tf.function
        def f(x):
            Augmenter()
            return x
        """,
        [(6, "TFG103", ("f()", "Base.__init__()"))],
    ),
    "attribute constructed in __init__": (
        """
        class Helper:
            def run(self, x):
                return x * random.random()

        class Holder:
            def __init__(self):
                self.helper = Helper()

            @tf.function
            def step(self, x):
                return self.helper.run(x)
        """,
        [(6, "TFG103", ("step()", "run()"))],
    ),
    "attribute None first, built lazily": (
        """
        class Helper:
            def run(self, x):
                return x * random.random()

        class Holder:
            def __init__(self):
                self.helper = None

            def build(self):
                self.helper = Helper()

            @tf.function
            def step(self, x):
                return self.helper.run(x)
        """,
        [(6, "TFG103", ("step()", "run()"))],
    ),
    "attribute of an attribute": (
        """
        class Helper:
            def run(self, x):
                return x * random.random()

        class Inner:
            def __init__(self):
                self.helper = Helper()

        class Holder:
            def __init__(self):
                self.inner = Inner()

            @tf.function
            def step(self, x):
                return self.inner.helper.run(x)
        """,
        [(6, "TFG103", ("step()", "run()"))],
    ),
    "super() into the base class's method": (
        """
        class Base:
            def call(self, x):
                return x * random.random()

        class Child(Base):
            def call(self, x):
                return x

            @tf.function
            def go(self, x):
                return super().call(x)
        """,
        [(6, "TFG103", ("go()", "call()"))],
    ),
    "method defined on a base class only": (
        """
        class Base:
            def shared(self, x):
                return x * random.random()

        class Child(Base):
            @tf.function
            def go(self, x):
                return self.shared(x)
        """,
        [(6, "TFG103", ("go()", "shared()"))],
    ),
    "classmethod and staticmethod through the class": (
        """
        class Augmenter:
            @classmethod
            def make(cls, x):
                return x * random.random()

            @staticmethod
            def helper(x):
                return x * random.random()

        @tf.function
        def f(x):
            return Augmenter.make(x) + Augmenter.helper(x)
        """,
        [(7, "TFG103", ("f()", "make()")), (11, "TFG103", ("f()", "helper()"))],
    ),
    "cls() in a classmethod constructs the class": (
        """
        class Augmenter:
            def __init__(self):
                self.p = random.random()

            @classmethod
            def make(cls):
                return cls()

        @tf.function
        def f(x):
            Augmenter.make()
            return x
        """,
        [(6, "TFG103", ("f()", "make()", "Augmenter.__init__()"))],
    ),
    "calling an instance runs __call__": (
        """
        class Augmenter:
            def __call__(self, x):
                return x * random.random()

        @tf.function
        def f(x):
            aug = Augmenter()
            return aug(x)
        """,
        [(6, "TFG103", ("f()", "Augmenter.__call__()"))],
    ),
    "the example of the issue": (
        """
        class Augmenter:
            def __init__(self):
                self.p = random.random()
            def apply(self, x):
                print("x", x)
                return x

        class Holder:
            def __init__(self):
                self.helper = Augmenter()
            @tf.function
            def run(self, x):
                return self.helper.apply(x)

        @tf.function
        def f(x):
            aug = Augmenter()
            y = aug.apply(x)
            return Augmenter().apply(y)
        """,
        [
            (6, "TFG103", ("f()", "Augmenter.__init__()")),
            # Two chains as short: the first root in the file gives its own.
            (8, "TFG101", ("run()", "apply()")),
        ],
    ),
    "a parameter that defaults to a construction": (
        """
        class Augmenter:
            def apply(self, x):
                return x * random.random()

        def pipeline(ds, augmenter=None):
            augmenter = augmenter or Augmenter()
            return ds.map(augmenter.apply)
        """,
        [(6, "TFG103", ("apply()",))],
    ),
}


@pytest.mark.parametrize("case", list(FOUND), ids=list(FOUND))
def test_callee_reached_through_an_object_is_reported(case: str) -> None:
    body, expected = FOUND[case]
    assert reported(body) == expected


NOT_TRACED = {
    "constructed at module level": """
        class Augmenter:
            def __init__(self):
                self.p = random.random()

            def apply(self, x):
                return x * self.p

        AUG = Augmenter()

        @tf.function
        def f(x):
            return AUG.apply(x)
        """,
    "constructed in an eager function": """
        class Augmenter:
            def __init__(self):
                self.p = random.random()

            def apply(self, x):
                return x * self.p

        def make():
            return Augmenter()

        @tf.function
        def f(x, aug):
            return aug.apply(x)

        def main(x):
            return f(x, make())
        """,
    "instance of a class from another package": """
        from sklearn.preprocessing import StandardScaler

        class Unrelated:
            def transform(self, x):
                return x * random.random()

        @tf.function
        def f(x):
            scaler = StandardScaler()
            return scaler.transform(x)
        """,
    "same method name on an unrelated class": """
        class Augmenter:
            def apply(self, x):
                return x

        class Unrelated:
            def apply(self, x):
                return x * random.random()

        @tf.function
        def f(x):
            aug = Augmenter()
            return aug.apply(x)
        """,
    "constructed in tf.py_function's callable": """
        class Augmenter:
            def __init__(self):
                self.p = random.random()

            def apply(self, x):
                return x * random.random()

        def eager(v):
            return Augmenter().apply(v)

        @tf.function
        def f(x):
            y = tf.py_function(lambda v: Augmenter().apply(v), [x], tf.float32)
            return tf.py_function(eager, [y], tf.float32)
        """,
    "constructed under tf.executing_eagerly()": """
        class Augmenter:
            def __init__(self):
                self.p = random.random()

        @tf.function
        def f(x):
            if tf.executing_eagerly():
                Augmenter()
            return x
        """,
    "attribute reassigned to another class in another method": """
        class Helper:
            def run(self, x):
                return x

        class Other:
            def run(self, x):
                return x * random.random()

        class Holder:
            def __init__(self):
                self.helper = Helper()

            def swap(self):
                self.helper = Other()

            @tf.function
            def step(self, x):
                return self.helper.run(x)
        """,
    "attribute reassigned to another class in a subclass": """
        class Helper:
            def run(self, x):
                return x * random.random()

        class Other:
            def run(self, x):
                return x

        class Holder:
            def __init__(self):
                self.helper = Helper()

            @tf.function
            def step(self, x):
                return self.helper.run(x)

        class Special(Holder):
            def __init__(self):
                self.helper = Other()
        """,
    "attribute written through another object": """
        class Helper:
            def run(self, x):
                return x * random.random()

        class Holder:
            def __init__(self):
                self.helper = Helper()

            @tf.function
            def step(self, x):
                return self.helper.run(x)

        def configure(holder, other):
            holder.helper = other
        """,
    "attribute also written by unpacking": """
        class Helper:
            def run(self, x):
                return x * random.random()

        class Holder:
            def __init__(self, pair):
                self.helper = Helper()
                self.helper, self.other = pair

            @tf.function
            def step(self, x):
                return self.helper.run(x)
        """,
    "attribute from a parameter": """
        class Helper:
            def run(self, x):
                return x * random.random()

        class Holder:
            def __init__(self, helper):
                self.helper = helper

            @tf.function
            def step(self, x):
                return self.helper.run(x)
        """,
    "name bound to two classes": """
        class Augmenter:
            def apply(self, x):
                return x

        class Unrelated:
            def apply(self, x):
                return x * random.random()

        @tf.function
        def f(x, flag: bool = False):
            aug = Augmenter()
            if flag:
                aug = Unrelated()
            return aug.apply(x)
        """,
}


@pytest.mark.parametrize("case", list(NOT_TRACED), ids=list(NOT_TRACED))
def test_object_the_analysis_cannot_know_or_eager_code_is_not_followed(case: str) -> None:
    assert reported(NOT_TRACED[case]) == []


def test_constructor_arguments_decide_the_branches_of_init() -> None:
    # Every traced construction passes `seed`: the `if seed is None:` fallback never runs.
    assert (
        reported(
            """
            class Augmenter:
                def __init__(self, rate, seed=None):
                    if seed is None:
                        seed = random.randint(0, 9)
                    self.seed = seed

            @tf.function
            def f(x):
                Augmenter(0.5, seed=3)
                Augmenter(0.1, 4)
                return x
            """
        )
        == []
    )
    assert reported(
        """
        class Augmenter:
            def __init__(self, rate, seed=None):
                if seed is None:
                    seed = random.randint(0, 9)
                self.seed = seed

        @tf.function
        def f(x):
            Augmenter(0.5)
            return x
        """
    ) == [(7, "TFG103", ("f()", "Augmenter.__init__()"))]


STATE = """
    class Counter:
        def __init__(self):
            self.n = 0

        def bump(self, x):
            self.n += 1
            return x

        def __call__(self, x):
            self.n += 1
            return x
    """


def test_state_of_an_object_constructed_per_trace_is_not_reported() -> None:
    # `self` is a new object on each trace: nothing is carried across calls.
    fresh = """
    @tf.function
    def f(x):
        c = Counter()
        c.bump(x)
        c(x)
        return Counter().bump(x)
    """
    assert reported(STATE + fresh) == []
    shared = """
    COUNTER = Counter()

    @tf.function
    def f(x):
        return COUNTER.bump(x)
    """
    assert reported(STATE + shared) == [(9, "TFG106", ("f()", "bump()"))]


ONCE = """
    def once(f):
        def wrapper(self, *args):
            if not getattr(self, "_done", False):
                f(self, *args)
                self._done = True
        return wrapper

    def when_enabled(f):
        def wrapper(self, *args):
            if self.enabled:
                f(self, *args)
                self.log(args)
        return wrapper

    class Linear:
        def __init__(self):
            self.enabled = True

        @once
        def _initialize(self, x):
            self.w = tf.Variable(tf.ones_like(x))

        @when_enabled
        def _other(self, x):
            self.v = tf.Variable(tf.ones_like(x))

        def log(self, args):
            return args

        def __call__(self, x):
            self._initialize(x)
            self._other(x)
            return x * self.w

    layer = Linear()

    @tf.function
    def f(x):
        return layer(x)
    """


def test_variables_of_a_method_decorated_to_run_once_are_setup() -> None:
    # `@once` calls `_initialize` only under a test of what the call records: the
    # variables are made on the first trace only.  `@when_enabled` records nothing.
    assert reported(ONCE) == [(28, "TFG205", ("f()", "Linear.__call__()", "_other()"))]


OWNER = """
    class Owner:
        def __init__(self):
            self.counter = Counter()

        def run(self, x):
            return self.counter.bump(x)
    """


def test_state_of_an_attribute_of_an_object_constructed_per_trace_is_not_reported() -> None:
    fresh = """
    @tf.function
    def f(x):
        return Owner().run(x)
    """
    assert reported(STATE + OWNER + fresh) == []
    shared = """
    OWNER = Owner()

    @tf.function
    def f(x):
        return OWNER.run(x)
    """
    assert reported(STATE + OWNER + shared) == [(9, "TFG106", ("f()", "run()", "bump()"))]


def test_a_demo_copy_under_the_main_guard_is_not_what_traced_code_calls() -> None:
    # Imported, the module has only the first `decode`; its traced caller calls that one.
    # Inside the main block the copy is what the block's own code calls.
    found = reported(
        """
        def decode(x):
            return x * 2.0

        @tf.function
        def step(x):
            return decode(x)

        if __name__ == "__main__":
            def decode(x):
                print("demo", x)
                return x

            @tf.function
            def demo(x):
                return decode(x) + random.random()
        """
    )
    assert found == [(13, "TFG101", ("demo()", "decode()")), (18, "TFG103", ("demo()",))]
