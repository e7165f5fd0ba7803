"""What TensorFlow and Keras APIs return while a ``tf.function`` traces (SPEC §2, TFG2xx).

One line per API: its canonical qualified name (``core.vocabulary.canonical``: the
``tf.compat.v1.`` / ``tf.compat.v2.`` spellings are the top-level ones) and the kind of value
it returns.  Verified with TensorFlow 2.21.0 and Keras 3.15.1 (TensorFlow backend) by
``scripts/verify_python_value_apis.py``, which calls each API inside a ``tf.function`` with
symbolic inputs and compares the Python type of the result with this table; rerun it after
editing a line.

Kinds:

* ``bool``, ``int``, ``float``, ``str``, ``none``: a plain Python value;
* ``object``: another Python value that holds no tensor the call made (a list of devices, a
  strategy, a NumPy array or ``None``, a ``TensorShape``, a dtype, a logger);
* ``nest``: a Python structure of the caller's own values (``tf.nest.*``);
* ``sequence``: a Python tuple, list or namedtuple of tensors: unpacking it, ``len()`` and
  Python iteration are fine; its items are tensors;
* ``structure``: a tensor or a nest of tensors, as the arguments decide (``tf.cond``);
* ``dict``: a Python dict of tensors;
* ``tensor``: a ``tf.Tensor``, ``tf.SparseTensor``, ``tf.RaggedTensor`` or variable.

APIs not listed here keep the namespace rules of ``model.tensors``.
"""

from __future__ import annotations

from collections.abc import Mapping

# Kinds whose value is no tensor and holds none the call made.
PYTHON_KINDS = frozenset({"bool", "int", "float", "str", "none", "object", "nest"})

RETURNS: Mapping[str, str] = {
    # -- Python values: what the program runs under ------------------------------------
    "tensorflow.executing_eagerly": "bool",
    "tensorflow.inside_function": "bool",
    "tensorflow.executing_eagerly_outside_functions": "bool",  # True inside a tf.function
    "tensorflow.resource_variables_enabled": "bool",
    "tensorflow.control_flow_v2_enabled": "bool",
    "tensorflow.get_default_graph": "object",
    "tensorflow.get_seed": "object",  # a tuple of Python ints or None
    "tensorflow.get_collection": "object",
    "tensorflow.trainable_variables": "object",
    "tensorflow.global_variables": "object",
    "tensorflow.dimension_value": "int",
    "tensorflow.compat.dimension_value": "int",
    "tensorflow.compat.forward_compatible": "bool",
    "tensorflow.get_current_name_scope": "str",
    "tensorflow.get_logger": "object",
    "tensorflow.is_tensor": "bool",
    "tensorflow.is_symbolic_tensor": "bool",
    "tensorflow.get_static_value": "object",  # a NumPy array, or None when unknown
    "tensorflow.make_tensor_proto": "object",
    "tensorflow.as_dtype": "object",
    "tensorflow.TensorShape": "object",
    "tensorflow.type_spec_from_value": "object",
    "tensorflow.config.list_physical_devices": "object",
    "tensorflow.config.list_logical_devices": "object",
    "tensorflow.config.get_visible_devices": "object",
    "tensorflow.config.functions_run_eagerly": "bool",
    "tensorflow.config.get_soft_device_placement": "bool",
    "tensorflow.config.experimental.get_memory_info": "object",  # a dict of Python ints
    "tensorflow.config.experimental.tensor_float_32_execution_enabled": "bool",
    "tensorflow.config.threading.get_inter_op_parallelism_threads": "int",
    "tensorflow.test.is_gpu_available": "bool",
    "tensorflow.test.is_built_with_cuda": "bool",
    "tensorflow.test.is_built_with_gpu_support": "bool",
    "tensorflow.test.gpu_device_name": "str",
    "tensorflow.distribute.has_strategy": "bool",
    "tensorflow.distribute.get_strategy": "object",
    "tensorflow.distribute.in_cross_replica_context": "bool",
    "tensorflow.distribute.get_replica_context": "object",
    "tensorflow.debugging.is_numeric_tensor": "bool",
    "tensorflow.sysconfig.get_build_info": "object",
    "tensorflow.random.get_global_generator": "object",
    "tensorflow.test.is_built_with_rocm": "bool",
    "tensorflow.test.is_built_with_xla": "bool",
    "tensorflow.get_default_session": "object",  # None in TensorFlow 2
    "tensorflow.get_variable_scope": "object",
    "tensorflow.get_collection_ref": "object",
    "tensorflow.local_variables": "object",
    "tensorflow.model_variables": "object",
    "tensorflow.moving_average_variables": "object",
    "tensorflow.broadcast_static_shape": "object",  # a TensorShape
    "tensorflow.make_ndarray": "object",  # a NumPy array
    # An Operation in a graph (None eagerly): nothing to unpack or truth-test.
    "tensorflow.assert_equal": "object",
    "tensorflow.assert_greater": "object",
    "tensorflow.assert_less": "object",
    "tensorflow.assert_rank": "object",
    # -- the caller's own values, restructured -----------------------------------------
    "tensorflow.nest.flatten": "nest",
    "tensorflow.nest.map_structure": "nest",
    "tensorflow.nest.pack_sequence_as": "nest",
    "tensorflow.nest.is_nested": "bool",
    # -- Python tuples, lists and namedtuples of tensors -------------------------------
    "tensorflow.split": "sequence",
    "tensorflow.unstack": "sequence",
    "tensorflow.meshgrid": "sequence",
    "tensorflow.shape_n": "sequence",
    "tensorflow.identity_n": "sequence",
    "tensorflow.tuple": "sequence",
    # The computation's outputs as a Python tuple or list (a single output too).
    "tensorflow.xla.experimental.compile": "sequence",
    "tensorflow.compiler.xla.compile": "sequence",  # its TF 2.0 spelling, gone in 2.21
    "tensorflow.dynamic_partition": "sequence",
    "tensorflow.unique": "sequence",
    "tensorflow.unique_with_counts": "sequence",
    "tensorflow.nn.moments": "sequence",
    "tensorflow.nn.weighted_moments": "sequence",
    "tensorflow.nn.normalize_moments": "sequence",
    "tensorflow.nn.fused_batch_norm": "sequence",  # tf.compat.v1.nn: (y, mean, variance)
    "tensorflow.nn.dynamic_rnn": "sequence",  # tf.compat.v1.nn: (outputs, state)
    "tensorflow.nn.bidirectional_dynamic_rnn": "structure",  # ((fw, bw), (fw, bw) states)
    "tensorflow.nn.top_k": "sequence",
    "tensorflow.math.top_k": "sequence",
    "tensorflow.math.approx_max_k": "sequence",
    "tensorflow.math.approx_min_k": "sequence",
    "tensorflow.linalg.normalize": "sequence",
    "tensorflow.approx_top_k": "sequence",
    "tensorflow.eig": "sequence",
    "tensorflow.required_space_to_batch_paddings": "sequence",
    "tensorflow.ragged_fill_empty_rows": "sequence",
    "tensorflow.linalg.experimental.conjugate_gradient": "sequence",
    "tensorflow.sparse.split": "sequence",  # a list of SparseTensors
    "tensorflow.linalg.eigh": "sequence",
    "tensorflow.linalg.eig": "sequence",
    "tensorflow.linalg.qr": "sequence",
    "tensorflow.linalg.svd": "sequence",  # a tensor with compute_uv=False (FLAGS)
    "tensorflow.linalg.lu": "sequence",
    "tensorflow.linalg.slogdet": "sequence",
    "tensorflow.linalg.eigh_tridiagonal": "tensor",  # a sequence with eigvals_only=False
    "tensorflow.nn.max_pool_with_argmax": "sequence",
    "tensorflow.nn.fractional_max_pool": "sequence",
    "tensorflow.nn.fractional_avg_pool": "sequence",
    "tensorflow.nn.compute_accidental_hits": "sequence",
    "tensorflow.nn.fixed_unigram_candidate_sampler": "sequence",
    "tensorflow.nn.learned_unigram_candidate_sampler": "sequence",
    "tensorflow.nn.log_uniform_candidate_sampler": "sequence",
    "tensorflow.nn.uniform_candidate_sampler": "sequence",
    "tensorflow.random.fixed_unigram_candidate_sampler": "sequence",
    "tensorflow.random.learned_unigram_candidate_sampler": "sequence",
    "tensorflow.random.log_uniform_candidate_sampler": "sequence",
    "tensorflow.random.uniform_candidate_sampler": "sequence",
    "tensorflow.random.all_candidate_sampler": "sequence",
    "tensorflow.nn.collapse_repeated": "sequence",
    "tensorflow.nn.ctc_unique_labels": "sequence",
    "tensorflow.image.sample_distorted_bounding_box": "sequence",
    "tensorflow.image.stateless_sample_distorted_bounding_box": "sequence",
    "tensorflow.image.non_max_suppression_padded": "sequence",
    "tensorflow.image.non_max_suppression_with_scores": "sequence",
    "tensorflow.image.combined_non_max_suppression": "sequence",
    "tensorflow.strings.unicode_decode_with_offsets": "sequence",
    "tensorflow.strings.unicode_split_with_offsets": "sequence",
    "tensorflow.io.decode_csv": "sequence",
    "tensorflow.decode_csv": "sequence",  # TF 1's spelling, tf.compat.v1.decode_csv
    "tensorflow.audio.decode_wav": "sequence",
    "tensorflow.quantization.quantize": "sequence",
    "tensorflow.sparse.fill_empty_rows": "sequence",
    # -- a tensor or a nest of tensors, as the arguments decide ------------------------
    "tensorflow.cond": "structure",
    "tensorflow.__internal__.smart_cond.smart_cond": "structure",
    "tensorflow.case": "structure",
    "tensorflow.switch_case": "structure",
    "tensorflow.while_loop": "structure",
    "tensorflow.map_fn": "structure",
    "tensorflow.scan": "structure",
    "tensorflow.foldl": "structure",
    "tensorflow.foldr": "structure",
    "tensorflow.vectorized_map": "structure",
    "tensorflow.__internal__.execute_fn_for_device": "structure",  # the branch's result
    # Tuples or lists whose items are not all tensors (None, lists, dicts).
    "tensorflow.gradients": "structure",  # None for an unconnected input
    "tensorflow.clip_by_global_norm": "structure",  # (list of tensors, tensor)
    # The Python function's results: a tensor for one dtype, a list for a list of dtypes.
    "tensorflow.py_function": "structure",
    "tensorflow.numpy_function": "structure",
    "tensorflow.py_func": "structure",
    "tensorflow.nn.sufficient_statistics": "structure",  # shift is None by default
    "tensorflow.nn.ctc_greedy_decoder": "structure",  # (list of SparseTensor, tensor)
    "tensorflow.nn.ctc_beam_search_decoder": "structure",
    "tensorflow.io.decode_proto": "structure",  # (tensor, list of tensors)
    "tensorflow.io.parse_sequence_example": "structure",  # a tuple of dicts
    "tensorflow.io.parse_single_sequence_example": "structure",
    # -- dicts of tensors --------------------------------------------------------------
    "tensorflow.io.parse_example": "dict",
    "tensorflow.io.parse_single_example": "dict",
    # -- tensors (controls, and namespaces the model otherwise treats as Python) -------
    "tensorflow.shape": "tensor",
    "tensorflow.math.reduce_std": "tensor",
    "tensorflow.math.unsorted_segment_max": "tensor",
    "tensorflow.random.experimental.stateless_split": "tensor",
    "tensorflow.random.experimental.stateless_fold_in": "tensor",
    "tensorflow.random.experimental.index_shuffle": "tensor",
    "tensorflow.random.experimental.create_rng_state": "tensor",  # a NumPy array eagerly
    "tensorflow.strings.split": "tensor",  # a RaggedTensor
    "tensorflow.sparse.from_dense": "tensor",  # a SparseTensor
    "tensorflow.sparse.reorder": "tensor",
    # -- Keras 3 -----------------------------------------------------------------------
    # A tuple of ints, with a scalar tensor for each unknown dimension: unpacking it is fine.
    "keras.ops.shape": "object",
    "keras.ops.is_tensor": "bool",
    "keras.ops.dtype": "str",
    "keras.ops.ndim": "int",  # the static rank (None when unknown), as x.ndim
    "keras.config.floatx": "str",
    "keras.config.epsilon": "float",
    "keras.config.image_data_format": "str",
    "keras.backend.standardize_dtype": "str",
    "keras.backend.backend": "str",
    "keras.config.backend": "str",
    "keras.backend.floatx": "str",
    "keras.backend.epsilon": "float",
    "keras.backend.image_data_format": "str",
    "keras.backend.is_keras_tensor": "bool",
    # tf.keras.backend (Keras 3) and tf_keras keep the legacy backend functions.
    "keras.backend.int_shape": "object",  # a tuple of ints and None
    "keras.backend.ndim": "int",
    "keras.backend.dtype": "str",
    "keras.backend.is_sparse": "bool",
    "keras.backend.shape": "tensor",
    "keras.ops.split": "sequence",
    "keras.ops.unstack": "sequence",
    "keras.ops.meshgrid": "sequence",
    "keras.ops.top_k": "sequence",
    "keras.ops.moments": "sequence",
    "keras.ops.svd": "sequence",  # a tensor with compute_uv=False (FLAGS)
    "keras.ops.qr": "sequence",
    "keras.ops.eig": "sequence",
    "keras.ops.eigh": "sequence",
    "keras.ops.lu_factor": "sequence",
    "keras.ops.slogdet": "sequence",
    "keras.ops.fft": "sequence",
    "keras.ops.fft2": "sequence",
    "keras.ops.ifft2": "sequence",
    "keras.ops.rfft": "sequence",
    "keras.ops.stft": "sequence",
    "keras.ops.cond": "structure",
    "keras.ops.switch": "structure",
    "keras.ops.while_loop": "structure",
    "keras.ops.fori_loop": "structure",
    "keras.ops.map": "structure",
    "keras.ops.scan": "structure",
    "keras.ops.vectorized_map": "structure",
    "keras.ops.associative_scan": "structure",
}

# APIs whose result depends on one boolean argument: (keyword, position, default, kind
# when True, kind when False).  An argument that is not a literal leaves the kind unknown.
FLAGS: Mapping[str, tuple[str, int, bool, str, str]] = {
    "tensorflow.linalg.svd": ("compute_uv", 2, True, "sequence", "tensor"),
    "tensorflow.linalg.eigh_tridiagonal": ("eigvals_only", 2, True, "tensor", "sequence"),
    "keras.ops.svd": ("compute_uv", 2, True, "sequence", "tensor"),
}


def returned_kind(name: str, flag: bool | None = None) -> str | None:
    """The kind ``name`` returns (None: not in the table); for an API in ``FLAGS``, with its
    flag given as ``flag`` (None: the default)."""
    if name in FLAGS:
        _, _, default, when_true, when_false = FLAGS[name]
        return when_true if (default if flag is None else flag) else when_false
    return RETURNS.get(name)


# `tf.raw_ops.Unique(x=t)` returns a namedtuple (y, idx), `tf.raw_ops.Relu` a tensor: which,
# only the op's registration tells, so every raw op is taken as a tensor or a nest of them.
RAW_OPS = "tensorflow.raw_ops."
