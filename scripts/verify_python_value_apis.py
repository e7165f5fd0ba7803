"""Verify, against the installed TensorFlow, what each API in the model's table returns while
a ``tf.function`` traces (SPEC §2, TFG2xx: "a table verified against TensorFlow").

    python scripts/verify_python_value_apis.py [--markdown]

Every case calls one API inside a ``tf.function(autograph=False)`` traced with symbolic
inputs, and records the Python type of the result:

* ``bool`` / ``int`` / ``float`` / ``str`` / ``none``: a plain Python value;
* ``object``: any other Python value that holds no tensor made by the call (a list of
  devices, a strategy, a NumPy array, a ``TensorShape``, a dtype);
* ``nest``: a Python structure whose leaves are the very objects the caller passed in (or
  its own function returned): ``tf.nest.*``;
* ``sequence``: a Python tuple, list or namedtuple whose items are tensors (``tf.split``,
  ``tf.nn.moments``): unpacking, ``len()`` and Python iteration are fine, the items are not;
* ``structure``: a tensor or a nest of tensors, as the arguments decide (``tf.cond``,
  ``tf.while_loop``, ``tf.map_fn``); each such case is traced twice, with a single tensor
  and with a pair, and must give a tensor and a sequence;
* ``dict``: a dict of tensors (``tf.io.parse_single_example``);
* ``tensor``: a ``tf.Tensor``, ``tf.SparseTensor``, ``tf.RaggedTensor`` or variable.

It also probes the result the way Python would while tracing (``bool()``, unpacking,
``len()``) and prints one line per API.  Each observed kind is compared with the table in
``tflint_graph/model/tf_returns.py``; any difference is printed and the exit status is 1.

TensorFlow is imported here only: neither the package nor the test suite imports this
script.  The table's comment names the TensorFlow/Keras versions last verified.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tflint_graph.core.vocabulary import canonical
from tflint_graph.model.tf_returns import returned_kind


@dataclass(frozen=True)
class Case:
    api: str  # the public spelling (``tf.`` / ``keras.`` prefix)
    call: Callable[[SimpleNamespace], Any]
    probe: str = "single"  # "single", "structure" or "nest" (see _observe)
    flag: bool | None = None  # the value given to the API's result-shaping flag, if any
    expect: str = ""  # what this call gives, where the table's kind covers more than one
    raises_here: str = ""  # why the call cannot run on this machine (no check then)
    note: str = ""


class _Cell:
    """The smallest RNN cell ``tf.compat.v1.nn.dynamic_rnn`` accepts (Keras 3 has none of
    TensorFlow 1's cells)."""

    output_size = 2
    state_size = 2

    def __init__(self, tf: Any) -> None:
        self.tf = tf

    def zero_state(self, batch: Any, dtype: Any) -> Any:
        return self.tf.zeros([batch, 2], dtype)

    def __call__(self, x: Any, state: Any) -> tuple[Any, Any]:
        out = self.tf.tanh(x + state)
        return out, out


def _cases() -> list[Case]:
    c: list[Case] = []

    def add(api: str, call: Callable[[SimpleNamespace], Any], **kw: Any) -> None:
        c.append(Case(api, call, **kw))

    # -- Python values: what the program runs under ------------------------------------
    add("tf.executing_eagerly", lambda a: a.tf.executing_eagerly())
    add("tf.inside_function", lambda a: a.tf.inside_function())
    add(
        "tf.compat.v1.executing_eagerly_outside_functions",
        lambda a: a.tf.compat.v1.executing_eagerly_outside_functions(),
        note="True inside a tf.function called eagerly",
    )
    add(
        "tf.compat.v1.resource_variables_enabled",
        lambda a: a.tf.compat.v1.resource_variables_enabled(),
    )
    add("tf.compat.v1.control_flow_v2_enabled", lambda a: a.tf.compat.v1.control_flow_v2_enabled())
    add("tf.compat.v1.get_default_graph", lambda a: a.tf.compat.v1.get_default_graph())
    add("tf.compat.v1.get_seed", lambda a: a.tf.compat.v1.get_seed(None))
    add("tf.compat.v1.get_collection", lambda a: a.tf.compat.v1.get_collection("losses"))
    add("tf.compat.v1.trainable_variables", lambda a: a.tf.compat.v1.trainable_variables())
    add("tf.compat.v1.global_variables", lambda a: a.tf.compat.v1.global_variables())
    add("tf.compat.v1.dimension_value", lambda a: a.tf.compat.v1.dimension_value(a.x.shape[0]))
    add("tf.compat.dimension_value", lambda a: a.tf.compat.dimension_value(a.x.shape[0]))
    add("tf.compat.forward_compatible", lambda a: a.tf.compat.forward_compatible(2020, 1, 1))
    add("tf.get_current_name_scope", lambda a: a.tf.get_current_name_scope())
    add("tf.get_logger", lambda a: a.tf.get_logger())
    add("tf.is_tensor", lambda a: a.tf.is_tensor(a.x))
    add("tf.is_symbolic_tensor", lambda a: a.tf.is_symbolic_tensor(a.x))
    add("tf.get_static_value", lambda a: a.tf.get_static_value(a.x), expect="none")
    add("tf.get_static_value", lambda a: a.tf.get_static_value(a.tf.constant(3)))
    add("tf.make_tensor_proto", lambda a: a.tf.make_tensor_proto([1, 2]))
    add("tf.as_dtype", lambda a: a.tf.as_dtype("float32"))
    add("tf.TensorShape", lambda a: a.tf.TensorShape([2, None]))
    add("tf.type_spec_from_value", lambda a: a.tf.type_spec_from_value(a.x))
    add("tf.config.list_physical_devices", lambda a: a.tf.config.list_physical_devices())
    add("tf.config.list_logical_devices", lambda a: a.tf.config.list_logical_devices())
    add("tf.config.get_visible_devices", lambda a: a.tf.config.get_visible_devices())
    add("tf.config.functions_run_eagerly", lambda a: a.tf.config.functions_run_eagerly())
    add("tf.config.get_soft_device_placement", lambda a: a.tf.config.get_soft_device_placement())
    add(
        "tf.config.experimental.get_memory_info",
        lambda a: a.tf.config.experimental.get_memory_info("CPU:0"),
        raises_here="ValueError for a CPU device: run on a machine with a GPU",
        note="a dict of Python ints",
    )
    add(
        "tf.config.experimental.tensor_float_32_execution_enabled",
        lambda a: a.tf.config.experimental.tensor_float_32_execution_enabled(),
    )
    add(
        "tf.config.threading.get_inter_op_parallelism_threads",
        lambda a: a.tf.config.threading.get_inter_op_parallelism_threads(),
    )
    add("tf.test.is_gpu_available", lambda a: a.tf.test.is_gpu_available())
    add("tf.test.is_built_with_cuda", lambda a: a.tf.test.is_built_with_cuda())
    add("tf.test.is_built_with_gpu_support", lambda a: a.tf.test.is_built_with_gpu_support())
    add("tf.test.gpu_device_name", lambda a: a.tf.test.gpu_device_name())
    add("tf.distribute.has_strategy", lambda a: a.tf.distribute.has_strategy())
    add("tf.distribute.get_strategy", lambda a: a.tf.distribute.get_strategy())
    add(
        "tf.distribute.in_cross_replica_context",
        lambda a: a.tf.distribute.in_cross_replica_context(),
    )
    add("tf.distribute.get_replica_context", lambda a: a.tf.distribute.get_replica_context())
    add("tf.debugging.is_numeric_tensor", lambda a: a.tf.debugging.is_numeric_tensor(a.x))
    add("tf.sysconfig.get_build_info", lambda a: a.tf.sysconfig.get_build_info())
    add("tf.random.get_global_generator", lambda a: a.tf.random.get_global_generator())
    add("tf.test.is_built_with_rocm", lambda a: a.tf.test.is_built_with_rocm())
    add("tf.test.is_built_with_xla", lambda a: a.tf.test.is_built_with_xla())
    add(
        "tf.compat.v1.get_default_session",
        lambda a: a.tf.compat.v1.get_default_session(),
        expect="none",
    )
    add("tf.compat.v1.get_variable_scope", lambda a: a.tf.compat.v1.get_variable_scope())
    add("tf.compat.v1.get_collection_ref", lambda a: a.tf.compat.v1.get_collection_ref("losses"))
    add("tf.compat.v1.local_variables", lambda a: a.tf.compat.v1.local_variables())
    add("tf.compat.v1.model_variables", lambda a: a.tf.compat.v1.model_variables())
    add(
        "tf.compat.v1.moving_average_variables", lambda a: a.tf.compat.v1.moving_average_variables()
    )
    add("tf.broadcast_static_shape", lambda a: a.tf.broadcast_static_shape(a.x.shape, a.v.shape))
    add("tf.make_ndarray", lambda a: a.tf.make_ndarray(a.tf.make_tensor_proto([1, 2])))
    for check in ("assert_equal", "assert_greater", "assert_less"):
        add(
            f"tf.{check}",
            lambda a, check=check: getattr(a.tf, check)(a.x, a.x),
            note="an Operation",
        )
    add("tf.assert_rank", lambda a: a.tf.assert_rank(a.x, 2), note="an Operation")
    add(
        "tf.random.experimental.create_rng_state",
        lambda a: a.tf.random.experimental.create_rng_state(1, "philox"),
    )
    # -- the caller's own values, restructured -----------------------------------------
    add("tf.nest.flatten", lambda a: (a.tf.nest.flatten((a.x, 3)), (a.x, 3)), probe="nest")
    add(
        "tf.nest.map_structure",
        lambda a: (a.tf.nest.map_structure(lambda t: t, (a.x, 3)), (a.x, 3)),
        probe="nest",
    )
    add(
        "tf.nest.pack_sequence_as",
        lambda a: (a.tf.nest.pack_sequence_as((0, 0), [a.x, 3]), (a.x, 3)),
        probe="nest",
    )
    add("tf.nest.is_nested", lambda a: a.tf.nest.is_nested((a.x,)))
    # -- Python tuples, lists and namedtuples of tensors -------------------------------
    add("tf.split", lambda a: a.tf.split(a.x, 2))
    add("tf.unstack", lambda a: a.tf.unstack(a.x))
    add("tf.meshgrid", lambda a: a.tf.meshgrid(a.v, a.v))
    add("tf.shape_n", lambda a: a.tf.shape_n([a.x, a.v]))
    add("tf.identity_n", lambda a: a.tf.identity_n([a.x, a.v]))
    add("tf.tuple", lambda a: a.tf.tuple([a.x, a.v]))
    add(
        "tf.xla.experimental.compile",
        lambda a: a.tf.xla.experimental.compile(lambda t: t * 2.0, inputs=[a.x]),
        note="a one-item tuple or list for a single output",
    )
    add(
        "tf.compiler.xla.compile",
        lambda a: __import__("tensorflow.compiler.xla", fromlist=["xla"]).compile(
            lambda t: t * 2.0, inputs=[a.x]
        ),
        raises_here="removed from TensorFlow 2.21 (tensorflow.compiler.xla has no compile): "
        "the same function as tf.xla.experimental.compile in TF 2.0-2.15",
    )
    add("tf.dynamic_partition", lambda a: a.tf.dynamic_partition(a.v, a.i, 2))
    add("tf.unique", lambda a: a.tf.unique(a.i))
    add("tf.unique_with_counts", lambda a: a.tf.unique_with_counts(a.i))
    add("tf.nn.moments", lambda a: a.tf.nn.moments(a.x, [0]))
    add("tf.nn.weighted_moments", lambda a: a.tf.nn.weighted_moments(a.x, [0], a.x))
    add("tf.nn.normalize_moments", lambda a: a.tf.nn.normalize_moments(a.v[0], a.v, a.v, None))
    # TF 1 recurrent helpers, still in tf.compat.v1.nn: (outputs, state) as a Python tuple.
    add(
        "tf.nn.dynamic_rnn",
        lambda a: a.tf.compat.v1.nn.dynamic_rnn(
            _Cell(a.tf), a.tf.ones([1, 3, 2]), dtype=a.tf.float32
        ),
    )
    add(
        "tf.nn.bidirectional_dynamic_rnn",
        lambda a: a.tf.compat.v1.nn.bidirectional_dynamic_rnn(
            _Cell(a.tf), _Cell(a.tf), a.tf.ones([1, 3, 2]), dtype=a.tf.float32
        ),
    )
    add(
        "tf.nn.fused_batch_norm",
        lambda a: a.tf.compat.v1.nn.fused_batch_norm(
            a.tf.ones([1, 2, 2, 3]), a.tf.ones([3]), a.tf.zeros([3])
        ),
    )
    add("tf.nn.top_k", lambda a: a.tf.nn.top_k(a.x, 2))
    add("tf.math.top_k", lambda a: a.tf.math.top_k(a.x, 2))
    add("tf.math.approx_max_k", lambda a: a.tf.math.approx_max_k(a.x, 2))
    add("tf.math.approx_min_k", lambda a: a.tf.math.approx_min_k(a.x, 2))
    add("tf.linalg.normalize", lambda a: a.tf.linalg.normalize(a.v))
    add("tf.approx_top_k", lambda a: a.tf.approx_top_k(a.x, 2))
    add("tf.eig", lambda a: a.tf.eig(a.m))
    add(
        "tf.required_space_to_batch_paddings",
        lambda a: a.tf.required_space_to_batch_paddings([4, 6], [2, 2]),
    )
    add(
        "tf.ragged_fill_empty_rows",
        lambda a: a.tf.ragged_fill_empty_rows(
            a.tf.zeros([2], a.tf.int64), a.v[:2], a.tf.constant(3, a.tf.int64), 0.0
        ),
    )
    add(
        "tf.linalg.experimental.conjugate_gradient",
        lambda a: a.tf.linalg.experimental.conjugate_gradient(
            a.tf.linalg.LinearOperatorFullMatrix(
                a.m, is_self_adjoint=True, is_positive_definite=True
            ),
            a.m[0],
        ),
    )
    add("tf.sparse.split", lambda a: a.tf.sparse.split(a.tf.sparse.from_dense(a.x), 2, axis=0))
    add("tf.linalg.eigh", lambda a: a.tf.linalg.eigh(a.m))
    add("tf.linalg.eig", lambda a: a.tf.linalg.eig(a.m))
    add("tf.linalg.qr", lambda a: a.tf.linalg.qr(a.m))
    add("tf.linalg.svd", lambda a: a.tf.linalg.svd(a.m), flag=True)
    add("tf.linalg.svd", lambda a: a.tf.linalg.svd(a.m, compute_uv=False), flag=False)
    add("tf.linalg.lu", lambda a: a.tf.linalg.lu(a.m))
    add("tf.linalg.slogdet", lambda a: a.tf.linalg.slogdet(a.m))
    add(
        "tf.linalg.eigh_tridiagonal",
        lambda a: a.tf.linalg.eigh_tridiagonal(a.v, a.v[:5]),
        flag=True,
    )
    add(
        "tf.linalg.eigh_tridiagonal",
        lambda a: a.tf.linalg.eigh_tridiagonal(a.v, a.v[:5], eigvals_only=False),
        flag=False,
    )
    add("tf.nn.max_pool_with_argmax", lambda a: a.tf.nn.max_pool_with_argmax(a.img4, 2, 2, "VALID"))
    add(
        "tf.nn.fractional_max_pool",
        lambda a: a.tf.nn.fractional_max_pool(a.img4, [1.0, 1.5, 1.5, 1.0]),
    )
    add(
        "tf.nn.fractional_avg_pool",
        lambda a: a.tf.nn.fractional_avg_pool(a.img4, [1.0, 1.5, 1.5, 1.0]),
    )
    add(
        "tf.nn.compute_accidental_hits",
        lambda a: a.tf.nn.compute_accidental_hits(a.labels, a.sampled, 1),
    )
    for sampler in (
        "fixed_unigram_candidate_sampler",
        "learned_unigram_candidate_sampler",
        "log_uniform_candidate_sampler",
        "uniform_candidate_sampler",
    ):
        # tf.nn has the first two; tf.compat.v1.nn has all four (canonically tf.nn.*).
        for space in ("random", "compat.v1.nn"):
            extra = {"unigrams": [1.0] * 10} if sampler.startswith("fixed") else {}
            add(
                f"tf.{space}.{sampler}",
                lambda a, space=space, sampler=sampler, extra=extra: _attr(a.tf, space, sampler)(
                    a.labels, 1, 3, True, 10, **extra
                ),
            )
    add(
        "tf.random.all_candidate_sampler",
        lambda a: a.tf.random.all_candidate_sampler(a.labels, 1, 3, True),
    )
    add("tf.nn.collapse_repeated", lambda a: a.tf.nn.collapse_repeated(a.ilabels, a.seq_len))
    add("tf.nn.ctc_unique_labels", lambda a: a.tf.nn.ctc_unique_labels(a.ilabels))
    add(
        "tf.image.sample_distorted_bounding_box",
        lambda a: a.tf.image.sample_distorted_bounding_box([8, 8, 3], a.boxes, seed=1),
    )
    add(
        "tf.image.stateless_sample_distorted_bounding_box",
        lambda a: a.tf.image.stateless_sample_distorted_bounding_box([8, 8, 3], a.boxes, [1, 2]),
    )
    add(
        "tf.image.non_max_suppression_padded",
        lambda a: a.tf.image.non_max_suppression_padded(a.boxes[0], a.scores, 2),
    )
    add(
        "tf.image.non_max_suppression_with_scores",
        lambda a: a.tf.image.non_max_suppression_with_scores(a.boxes[0], a.scores, 2),
    )
    add(
        "tf.image.combined_non_max_suppression",
        lambda a: a.tf.image.combined_non_max_suppression(a.boxes4, a.scores3, 2, 2),
    )
    add(
        "tf.strings.unicode_decode_with_offsets",
        lambda a: a.tf.strings.unicode_decode_with_offsets(a.s, "UTF-8"),
    )
    add(
        "tf.strings.unicode_split_with_offsets",
        lambda a: a.tf.strings.unicode_split_with_offsets(a.s, "UTF-8"),
    )
    add("tf.io.decode_csv", lambda a: a.tf.io.decode_csv(a.s, [[0.0], [""]]))
    add("tf.decode_csv", lambda a: a.tf.compat.v1.decode_csv(a.s, [[0.0], [""]]))
    add("tf.audio.decode_wav", lambda a: a.tf.audio.decode_wav(a.s[0]))
    add(
        "tf.quantization.quantize", lambda a: a.tf.quantization.quantize(a.x, 0.0, 1.0, a.tf.quint8)
    )
    add(
        "tf.sparse.fill_empty_rows",
        lambda a: a.tf.sparse.fill_empty_rows(a.tf.sparse.from_dense(a.x), 0.0),
    )
    # -- nests of tensors shaped by the arguments --------------------------------------
    tf_pairs = {
        "tf.cond": lambda a, o: a.tf.cond(a.b, lambda: o, lambda: o),
        # Keras layers' `training` switch: a tensor predicate builds a tf.cond.
        "tf.__internal__.smart_cond.smart_cond": lambda a, o: (
            a.tf.__internal__.smart_cond.smart_cond(a.b, lambda: o, lambda: o)
        ),
        "tf.case": lambda a, o: a.tf.case([(a.b, lambda: o)], default=lambda: o),
        "tf.switch_case": lambda a, o: a.tf.switch_case(a.n, [lambda: o, lambda: o]),
        "tf.map_fn": lambda a, o: a.tf.map_fn(lambda t: t, o),
        "tf.scan": lambda a, o: a.tf.scan(lambda acc, t: t, o),
        "tf.foldl": lambda a, o: a.tf.foldl(lambda acc, t: t, o),
        "tf.foldr": lambda a, o: a.tf.foldr(lambda acc, t: t, o),
        "tf.vectorized_map": lambda a, o: a.tf.vectorized_map(lambda t: t, o),
        "tf.__internal__.execute_fn_for_device": lambda a, o: (
            a.tf.__internal__.execute_fn_for_device({"CPU": lambda: o}, lambda: o)
        ),
    }
    for api, build in tf_pairs.items():
        add(api, _mirror(build), probe="structure")
    # A Python function's results: one tensor for one dtype, a list for a list of dtypes.
    eager_calls = {
        "tf.py_function": lambda a, f, tout: a.tf.py_function(f, [a.x], tout),
        "tf.numpy_function": lambda a, f, tout: a.tf.numpy_function(f, [a.x], tout),
        "tf.compat.v1.py_func": lambda a, f, tout: a.tf.compat.v1.py_func(f, [a.x], tout),
    }
    for api, call in eager_calls.items():
        add(
            api,
            _mirror(
                lambda a, o, call=call: call(
                    a,
                    lambda t: t if not isinstance(o, tuple) else [t, t],
                    a.x.dtype if not isinstance(o, tuple) else [a.x.dtype, a.x.dtype],
                ),
                lambda a: [a.x, (a.x, a.x)],
            ),
            probe="structure",
        )
    # loop_vars must be a list or tuple (a bare tensor raises TypeError in TF 2.21).
    add(
        "tf.while_loop",
        _mirror(
            lambda a, o: a.tf.while_loop(lambda *_: a.b, lambda *t: t, o),
            lambda a: [[a.x], (a.x, (a.x, a.x))],
        ),
        probe="structure",
    )
    add(
        "tf.gradients",
        lambda a: a.tf.gradients(a.tf.reduce_sum(a.x), [a.x, a.v]),
        note="None for an unconnected input",
    )
    add("tf.clip_by_global_norm", lambda a: a.tf.clip_by_global_norm([a.x, a.v], 1.0))
    add(
        "tf.nn.sufficient_statistics",
        lambda a: a.tf.nn.sufficient_statistics(a.x, [0]),
        note="shift is None by default",
    )
    add("tf.nn.ctc_greedy_decoder", lambda a: a.tf.nn.ctc_greedy_decoder(a.logits, a.seq_len))
    add(
        "tf.nn.ctc_beam_search_decoder",
        lambda a: a.tf.nn.ctc_beam_search_decoder(a.logits, a.seq_len),
    )
    add(
        "tf.io.decode_proto",
        lambda a: a.tf.io.decode_proto(a.s, "tensorflow.Example", ["features"], [a.tf.string]),
    )
    add(
        "tf.io.parse_sequence_example",
        lambda a: a.tf.io.parse_sequence_example(
            a.s, {"a": a.tf.io.FixedLenFeature([], a.tf.int64)}
        ),
    )
    add(
        "tf.io.parse_single_sequence_example",
        lambda a: a.tf.io.parse_single_sequence_example(
            a.s[0], {"a": a.tf.io.FixedLenFeature([], a.tf.int64)}
        ),
    )
    # -- dicts of tensors --------------------------------------------------------------
    add(
        "tf.io.parse_example",
        lambda a: a.tf.io.parse_example(a.s, {"a": a.tf.io.FixedLenFeature([], a.tf.int64)}),
    )
    add(
        "tf.io.parse_single_example",
        lambda a: a.tf.io.parse_single_example(
            a.s[0], {"a": a.tf.io.FixedLenFeature([], a.tf.int64)}
        ),
    )
    # -- tensors (controls, and namespaces the model otherwise treats as Python) -------
    add("tf.shape", lambda a: a.tf.shape(a.x))
    add("tf.math.reduce_std", lambda a: a.tf.math.reduce_std(a.x))
    add("tf.math.unsorted_segment_max", lambda a: a.tf.math.unsorted_segment_max(a.v, a.i, 3))
    add(
        "tf.random.experimental.stateless_split",
        lambda a: a.tf.random.experimental.stateless_split([1, 2]),
    )
    add(
        "tf.random.experimental.stateless_fold_in",
        lambda a: a.tf.random.experimental.stateless_fold_in([1, 2], 3),
    )
    add(
        "tf.random.experimental.index_shuffle",
        lambda a: a.tf.random.experimental.index_shuffle(a.n, [1, 2], 9),
    )
    add("tf.strings.split", lambda a: a.tf.strings.split(a.s), note="a RaggedTensor")
    add("tf.sparse.from_dense", lambda a: a.tf.sparse.from_dense(a.x), note="a SparseTensor")
    add(
        "tf.sparse.reorder",
        lambda a: a.tf.sparse.reorder(a.tf.sparse.from_dense(a.x)),
        note="a SparseTensor",
    )
    # -- Keras 3 (TensorFlow backend) --------------------------------------------------
    add("keras.ops.shape", lambda a: a.keras.ops.shape(a.x))
    add(
        "keras.ops.shape",
        lambda a: a.keras.ops.shape(a.xu),
        expect="structure",
        note="a scalar tensor for an unknown dimension",
    )
    # tf.keras.backend under Keras 3 (canonically keras.backend.*) keeps the legacy functions.
    add("tf.keras.backend.int_shape", lambda a: a.tf.keras.backend.int_shape(a.xu))
    add("tf.keras.backend.ndim", lambda a: a.tf.keras.backend.ndim(a.x))
    add("tf.keras.backend.dtype", lambda a: a.tf.keras.backend.dtype(a.x))
    add("tf.keras.backend.is_sparse", lambda a: a.tf.keras.backend.is_sparse(a.x))
    add("tf.keras.backend.shape", lambda a: a.tf.keras.backend.shape(a.x))
    add("keras.ops.is_tensor", lambda a: a.keras.ops.is_tensor(a.x))
    add("keras.ops.dtype", lambda a: a.keras.ops.dtype(a.x))
    add("keras.ops.ndim", lambda a: a.keras.ops.ndim(a.x))
    add("keras.config.floatx", lambda a: a.keras.config.floatx())
    add("keras.config.epsilon", lambda a: a.keras.config.epsilon())
    add("keras.config.image_data_format", lambda a: a.keras.config.image_data_format())
    add("keras.backend.standardize_dtype", lambda a: a.keras.backend.standardize_dtype("float32"))
    add("keras.backend.backend", lambda a: a.keras.backend.backend())
    add("keras.config.backend", lambda a: a.keras.config.backend())
    add("keras.backend.floatx", lambda a: a.keras.backend.floatx())
    add("keras.backend.epsilon", lambda a: a.keras.backend.epsilon())
    add("keras.backend.image_data_format", lambda a: a.keras.backend.image_data_format())
    add("keras.backend.is_keras_tensor", lambda a: a.keras.backend.is_keras_tensor(a.x))
    add("keras.ops.split", lambda a: a.keras.ops.split(a.x, 2))
    add("keras.ops.unstack", lambda a: a.keras.ops.unstack(a.x))
    add("keras.ops.meshgrid", lambda a: a.keras.ops.meshgrid(a.v, a.v))
    add("keras.ops.top_k", lambda a: a.keras.ops.top_k(a.x, 2))
    add("keras.ops.moments", lambda a: a.keras.ops.moments(a.x, [0]))
    add("keras.ops.svd", lambda a: a.keras.ops.svd(a.m), flag=True)
    add("keras.ops.svd", lambda a: a.keras.ops.svd(a.m, compute_uv=False), flag=False)
    add("keras.ops.qr", lambda a: a.keras.ops.qr(a.m))
    add("keras.ops.eig", lambda a: a.keras.ops.eig(a.m))
    add("keras.ops.eigh", lambda a: a.keras.ops.eigh(a.m))
    add("keras.ops.lu_factor", lambda a: a.keras.ops.lu_factor(a.m))
    add("keras.ops.slogdet", lambda a: a.keras.ops.slogdet(a.m))
    add("keras.ops.fft", lambda a: a.keras.ops.fft((a.x, a.x)))
    add("keras.ops.fft2", lambda a: a.keras.ops.fft2((a.x, a.x)))
    add("keras.ops.ifft2", lambda a: a.keras.ops.ifft2((a.x, a.x)))
    add("keras.ops.rfft", lambda a: a.keras.ops.rfft(a.x))
    add("keras.ops.stft", lambda a: a.keras.ops.stft(a.v, 4, 2, 4))
    keras_pairs = {
        "keras.ops.cond": lambda a, o: a.keras.ops.cond(a.b, lambda: o, lambda: o),
        "keras.ops.switch": lambda a, o: a.keras.ops.switch(a.n, [lambda: o, lambda: o]),
        "keras.ops.while_loop": lambda a, o: a.keras.ops.while_loop(
            lambda *_: a.b, lambda *t: t if isinstance(o, tuple) else t[0], o
        ),
        "keras.ops.fori_loop": lambda a, o: a.keras.ops.fori_loop(0, 2, lambda _, t: t, o),
        "keras.ops.map": lambda a, o: a.keras.ops.map(lambda t: t, o),
        "keras.ops.scan": lambda a, o: a.keras.ops.scan(
            lambda c, t: (t, t), a.tf.nest.map_structure(lambda z: z[0], o), o
        )[1],
        "keras.ops.vectorized_map": lambda a, o: a.keras.ops.vectorized_map(lambda t: t, o),
        "keras.ops.associative_scan": lambda a, o: a.keras.ops.associative_scan(lambda p, q: q, o),
    }
    for api, build in keras_pairs.items():
        add(api, _mirror(build), probe="structure")
    return c


# -- what a result is --------------------------------------------------------------------
def _tensor_like(tf: Any, value: Any) -> bool:
    return isinstance(value, tf.Variable) or tf.is_tensor(value)


def _classify(tf: Any, value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str | bytes):
        return "str"
    if value is None:
        return "none"
    if _tensor_like(tf, value):
        return "tensor"
    if isinstance(value, dict):
        items = list(value.values())
        return "dict" if items and all(_tensor_like(tf, v) for v in items) else "object"
    if isinstance(value, tuple | list):
        if value and all(_tensor_like(tf, v) for v in value):
            return "sequence"
        if any(_tensor_like(tf, leaf) for leaf in tf.nest.flatten(list(value))):
            return "structure"
    return "object"


def _python_type(tf: Any, value: Any) -> str:
    """A short name of the Python type, with its items for a tuple or list."""
    name = type(value).__name__
    if value is None or isinstance(value, bool | int | float | str):
        return f"{name} {value!r}"[:40]
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        name = f"namedtuple {name}"
    if isinstance(value, tuple | list):
        items = sorted({type(v).__name__ for v in value})
        return f"{name}[{', '.join(items)}]"
    if isinstance(value, dict):
        items = sorted({type(v).__name__ for v in value.values()})
        return f"dict[str, {', '.join(items)}]"
    return name


def _mirror(
    build: Callable[[SimpleNamespace, Any], Any],
    arguments: Callable[[SimpleNamespace], list[Any]] | None = None,
) -> Callable[[SimpleNamespace], list[tuple[Any, Any]]]:
    """Call ``build(a, o)`` with a tensor and with a nested tuple of tensors for ``o``."""

    def call(a: SimpleNamespace) -> list[tuple[Any, Any]]:
        given = arguments(a) if arguments else [a.x, (a.x, (a.x, a.x))]
        return [(build(a, o), o) for o in given]

    return call


def _mirrors(tf: Any, out: Any, given: Any) -> bool:
    try:
        tf.nest.assert_same_structure(out, given, check_types=False)
    except (TypeError, ValueError):
        return False
    return all(_tensor_like(tf, leaf) for leaf in tf.nest.flatten(out))


def _probe(action: Callable[[], Any]) -> str:
    try:
        action()
    except Exception as exc:
        return type(exc).__name__
    return "ok"


def _unpack(value: Any) -> str:
    """Iterate ``value`` as unpacking would; a RaggedTensor's ``__getitem__`` never stops."""
    items: list[Any] = []
    outcome = _probe(lambda: items.extend(itertools.islice(iter(value), 64)))
    return "endless" if outcome == "ok" and len(items) == 64 else outcome


@dataclass
class Observed:
    kind: str
    python_type: str
    truth: str = ""
    unpack: str = ""
    length: str = ""
    error: str = ""


def _observe(tf: Any, case: Case, args: SimpleNamespace) -> Observed:
    try:
        result = case.call(args)
    except Exception as exc:
        return Observed(
            "raises", "", error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
        )
    if case.probe == "structure":
        # (result, argument) pairs: each result must mirror its argument's nest, with
        # tensors for leaves, and one argument is a nested tuple.
        mirrored = all(_mirrors(tf, out, given) for out, given in result)
        nested = any(isinstance(given, tuple) for _, given in result)
        types = " | ".join(_python_type(tf, out) for out, _ in result)
        return Observed("structure" if mirrored and nested else "other", types)
    if case.probe == "nest":
        result, given = result
        leaves, expected = tf.nest.flatten(result), tf.nest.flatten(given)
        same = len(leaves) == len(expected) and all(
            a is b for a, b in zip(leaves, expected, strict=True)
        )
        kind = "nest" if same and isinstance(result, tuple | list | dict) else _classify(tf, result)
        return Observed(kind, _python_type(tf, result))
    return Observed(
        _classify(tf, result),
        _python_type(tf, result),
        truth=_probe(lambda: bool(result)),
        unpack=_unpack(result),
        length=_probe(lambda: len(result)),
    )


def _inputs(tf: Any) -> list[tuple[str, Any]]:
    spec = tf.TensorSpec
    return [
        ("x", spec([4, 6], tf.float32)),
        ("xu", spec([None, 6], tf.float32)),
        ("v", spec([6], tf.float32)),
        ("i", spec([6], tf.int32)),
        ("s", spec([3], tf.string)),
        ("m", spec([3, 3], tf.float32)),
        ("b", spec([], tf.bool)),
        ("n", spec([], tf.int32)),
        ("img4", spec([1, 8, 8, 3], tf.float32)),
        ("labels", spec([2, 1], tf.int64)),
        ("sampled", spec([3], tf.int64)),
        ("ilabels", spec([2, 5], tf.int32)),
        ("seq_len", spec([2], tf.int32)),
        ("logits", spec([5, 2, 4], tf.float32)),
        ("boxes", spec([1, 2, 4], tf.float32)),
        ("boxes4", spec([1, 2, 1, 4], tf.float32)),
        ("scores", spec([2], tf.float32)),
        ("scores3", spec([1, 2, 2], tf.float32)),
    ]


def observe_all(
    cases: list[Case], verbose: bool = False
) -> tuple[dict[int, Observed], dict[str, str]]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    names = [n for n, _ in _inputs(tf)]
    specs = [s for _, s in _inputs(tf)]
    observed: dict[int, Observed] = {}

    def body(*tensors: Any) -> Any:
        args = SimpleNamespace(tf=tf, keras=keras, **dict(zip(names, tensors, strict=True)))
        for index, case in enumerate(cases):
            if verbose:
                print(f"... {case.api}", file=sys.stderr, flush=True)
            observed[index] = _observe(tf, case, args)
        return tf.constant(0)

    tf.function(body, autograph=False).get_concrete_function(*specs)
    versions = {"tensorflow": tf.__version__, "keras": keras.__version__}
    return observed, versions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("-v", "--verbose", action="store_true", help="name each case as it runs")
    opts = parser.parse_args(argv)
    cases = _cases()
    observed, versions = observe_all(cases, opts.verbose)
    print(f"TensorFlow {versions['tensorflow']}, Keras {versions['keras']}")
    if opts.markdown:
        print("| API | observed | table | Python type | bool() | unpack | len() |")
        print("|---|---|---|---|---|---|---|")
    mismatches = []
    counts: collections.Counter[str] = collections.Counter()
    for index, case in enumerate(cases):
        obs = observed[index]
        label = case.api if case.flag is None else f"{case.api} (flag={case.flag})"
        expected = returned_kind(canonical(_qualified(case.api)), case.flag)
        seen = obs.kind
        if case.expect:
            ok = seen == case.expect
        else:
            ok = seen == expected or (seen == "raises" and case.raises_here != "")
        counts[expected or "-"] += 1
        if not ok:
            mismatches.append((label, seen, expected, obs.error))
        if opts.markdown:
            print(
                f"| `{label}` | {seen} | {expected} | {obs.python_type} | {obs.truth} | "
                f"{obs.unpack} | {obs.length} |"
            )
        else:
            mark = "  " if ok else "!!"
            detail = obs.error or obs.python_type
            probes = f" bool:{obs.truth} unpack:{obs.unpack} len:{obs.length}" if obs.truth else ""
            note = f"  ({case.note})" if case.note else ""
            print(f"{mark} {label:60} {seen:9} table={expected}  {detail}{probes}{note}")
    print(f"{len(cases)} cases; by table kind: {dict(sorted(counts.items()))}")
    for label, seen, expected, error in mismatches:
        print(f"MISMATCH {label}: observed {seen}, table says {expected} {error}")
    return 1 if mismatches else 0


def _attr(root: Any, dotted: str, name: str) -> Any:
    for part in dotted.split("."):
        root = getattr(root, part)
    return getattr(root, name)


def _qualified(api: str) -> str:
    """``tf.x`` -> ``tensorflow.x``; ``keras.x`` stays."""
    return "tensorflow." + api[3:] if api.startswith("tf.") else api


if __name__ == "__main__":
    sys.exit(main())
