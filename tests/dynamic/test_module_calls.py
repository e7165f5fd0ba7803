"""The arguments dynamic mode takes from the module's own calls (constructors, compile())."""

from __future__ import annotations

import ast
import textwrap

from tflint_graph.dynamic.calls import ModuleCalls


def _calls(source: str) -> ModuleCalls:
    return ModuleCalls(ast.parse(textwrap.dedent(source)))


def test_constructor_under_the_main_guard_uses_module_level_builders() -> None:
    calls = _calls(
        """
        def make_d(): ...
        def make_g(): ...
        class GAN: ...
        if __name__ == "__main__":
            gan = GAN(make_d(), make_g(), latent_dim=8)
        """
    )
    found = calls.constructor("GAN")
    assert found is not None
    assert found.args == ("make_d()", "make_g()")
    assert found.kwargs == (("latent_dim", "8"),)
    assert found.line == 6


def test_names_of_the_main_block_are_replaced_by_their_values() -> None:
    # `vocab` exists only while the script runs: the child must evaluate its value instead.
    calls = _calls(
        """
        class Ranker: ...
        if __name__ == "__main__":
            vocab = [f"item_{i}" for i in range(10)]
            ranker = Ranker(vocab)
        """
    )
    found = calls.constructor("Ranker")
    assert found is not None and found.args == ("[f'item_{i}' for i in range(10)]",)


def test_parameters_are_followed_to_a_call_site_of_their_function() -> None:
    calls = _calls(
        """
        def build(n): ...
        class Ranker: ...
        def export(model, vocabulary, size=3):
            return Ranker(model, vocabulary, size)
        if __name__ == "__main__":
            words = ["a", "b"]
            export(build(len(words)), words)
        """
    )
    found = calls.constructor("Ranker")
    assert found is not None
    assert found.args == ("build(len(['a', 'b']))", "['a', 'b']", "3")


def test_a_name_nothing_defines_gives_no_call() -> None:
    calls = _calls(
        """
        class Agent: ...
        def run(env):
            agent = Agent(env.action_space.n)
        """
    )
    # `env` comes from nowhere in the module (run() is never called): no guess is made.
    assert calls.constructor("Agent") is None


def test_a_name_assigned_twice_is_not_guessed() -> None:
    calls = _calls(
        """
        class Agent: ...
        if __name__ == "__main__":
            n = 2
            n = int(input())
            Agent(n)
        """
    )
    assert calls.constructor("Agent") is None


def test_the_later_call_that_can_be_rewritten_is_taken() -> None:
    calls = _calls(
        """
        class Agent: ...
        def run(env):
            Agent(env)
        if __name__ == "__main__":
            Agent(4)
        """
    )
    found = calls.constructor("Agent")
    assert found is not None and found.args == ("4",) and found.line == 6


def test_compile_on_the_constructed_object() -> None:
    calls = _calls(
        """
        import keras
        class GAN: ...
        class Other: ...
        if __name__ == "__main__":
            other = Other()
            other.compile(optimizer="adam")
            gan = GAN()
            gan.compile(d_optimizer=keras.optimizers.Adam(2e-4), loss_fn=keras.losses.MSE)
        """
    )
    found = calls.method_call("GAN", "compile")
    assert found is not None
    assert dict(found.kwargs) == {
        "d_optimizer": "keras.optimizers.Adam(0.0002)",
        "loss_fn": "keras.losses.MSE",
    }
    assert calls.method_call("Missing", "compile") is None


def test_python_literals_the_module_passes_a_function() -> None:
    calls = _calls(
        """
        def augment(image, strength, mode):
            ...
        class Aug:
            def run(self, image, strength): ...
        if __name__ == "__main__":
            augment(load(), 0.5, mode="flip")
            augment(load(), 0.9, mode="crop")
            Aug().run(load(), 3)
        """
    )
    assert calls.literals("augment", ["image", "strength", "mode"], method=False) == {
        "strength": 0.5,
        "mode": "flip",
    }
    assert calls.literals("run", ["image", "strength"], method=True) == {"strength": 3}
    assert calls.literals("run", ["image", "strength"], method=False) == {}


def test_objects_the_module_builds_for_a_function() -> None:
    calls = _calls(
        """
        import keras
        def build(): ...
        def step(model, optimizer, features, labels): ...
        if __name__ == "__main__":
            model = build()
            optimizer = keras.optimizers.Adam(1e-3)
            for features, labels in load():
                step(model, optimizer, features, labels)
        """
    )
    # The loop's batches come from nowhere the child can rebuild: they stay guesses.
    assert calls.arguments("step", ["model", "optimizer", "features", "labels"], False) == {
        "model": "build()",
        "optimizer": "keras.optimizers.Adam(0.001)",
    }
