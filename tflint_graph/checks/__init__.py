"""The rule registry.  To add a rule: copy a module here, give it a new code, list it below,
and write its page in ``rules/``."""

from __future__ import annotations

from tflint_graph.checks.base import ModuleRule, Rule
from tflint_graph.checks.benchmark_includes_tracing import BenchmarkIncludesTracing
from tflint_graph.checks.frozen_clock_or_env import FrozenClockOrEnv
from tflint_graph.checks.function_recreated import FunctionRecreated
from tflint_graph.checks.global_write import GlobalWrite
from tflint_graph.checks.graph_error_caught_in_python import GraphErrorCaughtInPython
from tflint_graph.checks.large_unrolled_loop import LargeUnrolledLoop
from tflint_graph.checks.logging_in_traced import LoggingInTraced
from tflint_graph.checks.no_tensor_work import NoTensorWork
from tflint_graph.checks.numpy_on_tensor import NumpyOnTensor
from tflint_graph.checks.outer_container_mutation import OuterContainerMutation
from tflint_graph.checks.print_in_traced import PrintInTraced
from tflint_graph.checks.python_io_in_traced import PythonIoInTraced
from tflint_graph.checks.python_list_in_graph_loop import PythonListInGraphLoop
from tflint_graph.checks.python_random import PythonRandom
from tflint_graph.checks.python_state_mutation import PythonStateMutation
from tflint_graph.checks.python_value_argument import PythonValueArgument
from tflint_graph.checks.run_functions_eagerly_enabled import RunFunctionsEagerlyEnabled
from tflint_graph.checks.serving_without_input_signature import ServingWithoutInputSignature
from tflint_graph.checks.stale_python_global import StalePythonGlobal
from tflint_graph.checks.tensor_as_bool import TensorAsBool
from tflint_graph.checks.tensor_as_python_value import TensorAsPythonValue
from tflint_graph.checks.tensor_numpy import TensorNumpy
from tflint_graph.checks.tensorarray_write_discarded import TensorArrayWriteDiscarded
from tflint_graph.checks.tiny_helper_decorated import TinyHelperDecorated
from tflint_graph.checks.variable_created_per_trace import VariableCreatedPerTrace
from tflint_graph.checks.variable_owner_created_per_trace import VariableOwnerCreatedPerTrace
from tflint_graph.checks.xla_dynamic_shape import XlaDynamicShape
from tflint_graph.core.finding import TOOL_CODES, Severity

ALL_RULES: tuple[type[Rule], ...] = (
    PrintInTraced,
    OuterContainerMutation,
    PythonRandom,
    FrozenClockOrEnv,
    GlobalWrite,
    PythonStateMutation,
    LoggingInTraced,
    PythonIoInTraced,
    StalePythonGlobal,
    TensorNumpy,
    NumpyOnTensor,
    GraphErrorCaughtInPython,
    TensorAsBool,
    TensorAsPythonValue,
    VariableCreatedPerTrace,
    VariableOwnerCreatedPerTrace,
    TensorArrayWriteDiscarded,
    PythonListInGraphLoop,
    RunFunctionsEagerlyEnabled,
    NoTensorWork,
    ServingWithoutInputSignature,
    LargeUnrolledLoop,
    TinyHelperDecorated,
    FunctionRecreated,
    PythonValueArgument,
    XlaDynamicShape,
    BenchmarkIncludesTracing,
)


def rule_table() -> list[tuple[str, str, Severity, str]]:
    """(code, name, severity, summary) for every shipped code, in code order."""
    rows = [(code, name, Severity.ERROR, summary) for code, (name, summary) in TOOL_CODES.items()]
    rows += [(r.code, r.name, r.severity, r.summary()) for r in ALL_RULES]
    return sorted(rows)


__all__ = ["ALL_RULES", "TOOL_CODES", "ModuleRule", "Rule", "rule_table"]
