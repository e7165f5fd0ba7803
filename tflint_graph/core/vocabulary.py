"""One spelling for every TensorFlow/Keras name (plain strings: no parsing needed).

Kept apart from ``names.py`` so that modules that only handle the run's facts (project,
cache) do not import libcst.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# Prefix rewrites applied in order; the first match wins.  Keras is reachable as `keras`,
# `tf_keras`, `tensorflow.keras` and several private paths, and the compat namespaces of
# TensorFlow expose the same symbols as the top level for everything rules care about.
_PREFIXES: tuple[tuple[str, str], ...] = (
    ("tensorflow.compat.v2.keras.", "keras."),
    ("tensorflow.compat.v1.keras.", "keras."),
    ("tensorflow.compat.v2.", "tensorflow."),
    ("tensorflow.compat.v1.", "tensorflow."),
    ("tensorflow._api.v2.", "tensorflow."),
    ("tensorflow.python.keras.", "keras."),
    ("tensorflow.keras.", "keras."),
    ("tf_keras.", "keras."),
    ("keras.api._v2.keras.", "keras."),
    ("keras.api.", "keras."),
    ("keras.src.", "keras."),
    ("tensorflow.python.eager.def_function.", "tensorflow."),
    ("tensorflow.python.eager.polymorphic_function.polymorphic_function.", "tensorflow."),
)
_EXACT: Mapping[str, str] = {
    "tensorflow.compat.v2": "tensorflow",
    "tensorflow.compat.v1": "tensorflow",
    "tensorflow.keras": "keras",
    "tf_keras": "keras",
    "keras.models.Model": "keras.Model",
    "keras.models.Sequential": "keras.Sequential",
    "keras.engine.training.Model": "keras.Model",
    "keras.engine.sequential.Sequential": "keras.Sequential",
    "keras.engine.functional.Functional": "keras.Model",
    "keras.Layer": "keras.layers.Layer",
    "keras.engine.base_layer.Layer": "keras.layers.Layer",
    "keras.Loss": "keras.losses.Loss",
    "keras.Metric": "keras.metrics.Metric",
}


def canonical(name: str) -> str:
    """Map one fully qualified name onto the spelling rules match against."""
    # Private paths nest (``tf_keras.src.engine.training.Model`` needs two rewrites), so
    # rewrite until nothing changes; a few rounds always suffice.
    for _ in range(4):
        before = name
        for old, new in _PREFIXES:
            if name.startswith(old):
                name = new + name[len(old) :]
                break
        name = _EXACT.get(name, name)
        if name == before:
            break
    return name


def keras_kinds_of(names: Iterable[str]) -> frozenset[str]:
    """Which Keras base classes (``model``, ``layer``, ``loss``, ``metric``) the canonical
    ``names`` of a class's base are."""
    kinds: set[str] = set()
    for name in names:
        if name in ("keras.Model", "keras.Sequential") or name.startswith("keras.models."):
            kinds |= {"model", "layer"}
        elif name.startswith("keras.layers."):
            kinds.add("layer")
        elif name.startswith("keras.losses."):
            kinds.add("loss")
        elif name.startswith("keras.metrics."):
            kinds.add("metric")
    return frozenset(kinds)
