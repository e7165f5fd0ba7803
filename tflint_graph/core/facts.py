"""What crosses between the modules of one run (SPEC §1.6): small, picklable facts.

A run lints each file on its own first.  What one module learns about another travels as
a :class:`ModuleSummary` out and a :class:`ProjectView` in, never as parsed trees, so memory
stays per file and files can be analysed in parallel and cached:

* a traced function that calls ``helpers.normalize`` makes ``normalize`` a traced root of
  ``helpers.py`` (with the chain so far), which may reach further modules in turn;
* a module that calls ``step`` imported from ``model.py`` learns that ``step`` is a
  ``tf.function`` (and with which options), for the call-site rules TFG302/TFG303/TFG403.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

# Canonical prefixes of libraries, not code of the analysed project: unless a module of the
# run has that top-level name (``ProjectView.first_party``: a package ``tensorflow_examples``
# of the run is first-party; ``tensorflow_probability``, not in the run, stays foreign).
FOREIGN_PREFIXES = (
    "tensorflow.",
    "keras.",
    "builtins.",
    "numpy.",
    "functools.",
    "tensorflow_",
)


class TraceKind(str, Enum):
    DECORATED = "decorated"
    WRAPPED = "wrapped"
    KERAS = "keras"
    DATASET = "dataset"
    CONTROL_FLOW = "control-flow"
    CALLEE = "callee"


@dataclass(frozen=True, slots=True)
class TfFunction:
    """A ``tf.function`` object that calls can reach, and the options that matter at call
    sites.  ``qualname`` is ``step`` / ``Trainer.step`` inside its module."""

    qualname: str
    display: str  # "step()"
    signature: bool  # input_signature given
    jit_compile: bool = False
    reduce_retracing: bool = False
    origin: str | None = None  # the file that defines it
    line: int = 0  # the def (or assignment) line in that file
    # TFG208 across modules: the positional parameters, and each parameter the body applies
    # gradients with ("optimizer") or mentions while applying them ("model").
    params: tuple[str, ...] = ()
    roles: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ExternalRoot:
    """Traced code of another module calls (or hands to TensorFlow) ``qualname`` here."""

    qualname: str
    kind: TraceKind
    reason: str  # "called from step() in train.py"
    chain: tuple[str, ...]  # the chain up to and excluding this function
    autograph: bool = True
    unconverted: str = ""  # why AutoGraph does not convert it, when Keras decides that
    # For each such call, the arguments it passes a value that is not None ("pos:0",
    # "kw:decoder"), for ``traced.arguments``; None when some call's arguments are unknown.
    passed: tuple[frozenset[str], ...] | None = None
    # Every such call is one-time setup where it is made (under `if not self.built:`, in
    # a helper of such a block): so is this function, on those traces (``model.setup``).
    setup: bool = False
    # Every such call reaches this method through an object its caller constructs
    # (``aug = Augmenter(); aug.apply(x)``): ``self`` is new on each trace.
    fresh: bool = False


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A traced call from this module into a name imported from elsewhere (absolute)."""

    target: str
    kind: TraceKind
    reason: str
    chain: tuple[str, ...]
    autograph: bool = True
    unconverted: str = ""  # ``TracedFunction.unconverted`` of the caller
    passed: frozenset[str] | None = None  # one item of ``ExternalRoot.passed``: this call
    setup: bool = False  # the call is one-time setup where it is made
    fresh: bool = False  # through an object the calling function constructs


@dataclass(frozen=True, slots=True)
class ExportFact:
    """Another module exports something defined here (TFG301 reports at the def).

    ``kind`` is ``function`` (passed in ``signatures=`` or to ``add_endpoint``) or ``object``
    (an instance of class ``target`` saved with ``tf.saved_model.save``).  ``target`` is an
    absolute name in the exporting module and becomes a qualname here."""

    target: str
    kind: str
    why: str
    signatures: bool = False  # object saved with signatures=
    # Attributes the exporting module touches on the saved object (`m.rank` in signatures=,
    # `m.rank.get_concrete_function(spec)`, a warm-up call): judged there, not here.
    touched: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RemoteFinding:
    """A finding about a function of another module, judged from this module's calls (an
    XLA function called here with varying shapes): SPEC puts it on that function's def.
    ``target`` is absolute in the judging module and becomes a qualname where it lands."""

    target: str
    code: str
    name: str
    severity: str
    message: str
    fix: str | None = None


@dataclass(slots=True)
class ModuleSummary:
    """What other modules may need to know about one module after it was analysed."""

    module: str | None
    exports: dict[str, TfFunction] = field(default_factory=dict)
    reexports: dict[str, str] = field(default_factory=dict)  # name -> absolute import
    outgoing: list[Outgoing] = field(default_factory=list)
    # Absolute names imported from elsewhere that this module calls (call-site candidates);
    # for a module summarised from its syntax alone, every name it may call.
    called_imports: set[str] = field(default_factory=set)
    # Module-level classes -> their bases: absolute names, or "<local>Name" for a class here.
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # What this module exports that other modules define.
    exports_elsewhere: list[ExportFact] = field(default_factory=list)
    # Findings this module's code makes about functions defined elsewhere.
    remote: list[RemoteFinding] = field(default_factory=list)
    # Functions and methods (qualnames) whose value while tracing is known: True for
    # `in_tf_function()`, False for an `is_eager()` helper (``model.eager``); those its
    # classes inherit from other modules' classes the run adds (``guard_classes``).
    tracing_values: dict[str, bool] = field(default_factory=dict)
    # Module-level classes with bases other modules may define: (name, the bases' absolute
    # names, the methods it defines).  The run works out what they inherit.
    guard_classes: tuple[tuple[str, tuple[str, ...], frozenset[str]], ...] = ()
    # The names of other modules' functions and methods this analysis looked up in
    # ``ProjectView.tracing_values``: a change to others does not change the analysis.
    asked_tracing: frozenset[str] = frozenset()
    # Methods called with no arguments (``loss.report_stats()``), by name: True when some
    # call runs in eager code, False when every one is in traced code or in a step function
    # (``train_step``, ``step_fn``) beside the call of the object.  Test modules tell nothing.
    accessor_calls: dict[str, bool] = field(default_factory=dict)
    # Module-level functions -> the module globals (absolute names) they return a test of
    # (``is_custom_kernel_disabled()``), and those they set, with what they call
    # (``disable_custom_kernel()``): one-time setup guards across modules (``model.setup``).
    global_reads: dict[str, frozenset[str]] = field(default_factory=dict)
    global_writes: dict[str, frozenset[str]] = field(default_factory=dict)
    # Module-level classes -> the attributes their ``__call__`` rebinds to a fresh container
    # before Keras runs ``call`` (per-call scratch for subclasses elsewhere, TFG102).
    call_resets: dict[str, frozenset[str]] = field(default_factory=dict)
    # Accessors of this module's classes whose callers elsewhere decide whether they read
    # state eagerly (``model.state``): the run answers in ``ProjectView.accessor_calls``.
    asked_accessors: frozenset[str] = frozenset()
    # Module-level decorators that run what they decorate at most once (``@once``): what
    # they decorate is one-time setup (``prefilter.run_once_decorators``).
    once_decorators: frozenset[str] = frozenset()
    # Functions and methods (qualnames) that hand what some parameters get to an escape hatch
    # only: (positional parameter names as callers fill them, those parameters)
    # (``prefilter.escape_params``).
    escape_params: dict[str, tuple[tuple[str, ...], frozenset[str]]] = field(default_factory=dict)
    # A script's module-level Keras classes (``if __name__ == "__main__":``, command-line
    # parsing at import) when its own code hands Keras nothing to trace: called only eagerly
    # there, unless another module of the run uses them (``ProjectView.eager_classes``).
    eager_script: frozenset[str] = frozenset()
    # Project classes (absolute names, ``LOCAL`` + name for this module's) this module makes
    # and uses only from eager code (-> the module's Keras classes whose methods hold some of
    # those uses, eager only if they are), and those it uses any other way
    # (``source.eager_use``): the run tells a Keras class's module when the project only
    # ever uses it eagerly.
    eager_made: dict[str, frozenset[str]] = field(default_factory=dict)
    used_otherwise: frozenset[str] = frozenset()
    # Attribute names the module reads on objects other than `self` (`trainer.model`): an
    # instance held in a public attribute of that name may be handed on from there.
    foreign_attributes: frozenset[str] = frozenset()
    # Other modules' tf.functions (absolute names) this module calls with an evident tensor
    # or NumPy array (`step(x, tf.constant(3))`, eager code included) -> the arguments that
    # get one ("pos:1", "kw:steps"): evidence there that those parameters are tensors.
    tensor_args: dict[str, frozenset[str]] = field(default_factory=dict)


STEP_SUFFIXES = ("step", "step_fn")


def is_step_name(name: str) -> bool:
    """A step function by its name (``train_step``, ``validation_step``, ``step_fn``): a
    trainer calls it once per batch, traced or not, and whatever it reads from an object it
    reads in the same call as the object's own work."""
    return name.lstrip("_").endswith(STEP_SUFFIXES)


@dataclass(slots=True)
class ProjectView:
    """What a module is told about the rest of the run before it is analysed."""

    module: str | None = None  # dotted name, when the file lies in an analysed root
    is_package: bool = False  # an ``__init__.py``: relative imports start at the module
    roots: tuple[ExternalRoot, ...] = ()
    tf_functions: dict[str, TfFunction] = field(default_factory=dict)  # absolute name -> fn
    # Keras kinds ("model", "layer", ...) of base classes defined in other modules.
    keras_classes: dict[str, frozenset[str]] = field(default_factory=dict)
    # Functions and classes of this module that other modules export (targets are qualnames).
    exported: tuple[ExportFact, ...] = ()
    # Findings other modules make about this module's functions (targets are qualnames).
    remote: tuple[RemoteFinding, ...] = ()
    # Absolute names of other modules' functions and methods this module calls whose value
    # while tracing is known (``ModuleSummary.tracing_values``).
    tracing_values: dict[str, bool] = field(default_factory=dict)
    # Names of other modules of the run that are a foreign module re-exported
    # (`pkg.utils.tf` -> `tensorflow` for `from pkg.utils import tf`).
    aliases: dict[str, str] = field(default_factory=dict)
    # Top-level names of the run's modules that FOREIGN_PREFIXES would take for libraries.
    first_party: frozenset[str] = frozenset()
    # Functions of other modules this module calls (absolute names) -> their
    # ``ModuleSummary.global_reads`` / ``global_writes``.
    global_reads: dict[str, frozenset[str]] = field(default_factory=dict)
    global_writes: dict[str, frozenset[str]] = field(default_factory=dict)
    # Base classes of other modules (absolute names) -> ``ModuleSummary.call_resets``.
    call_resets: dict[str, frozenset[str]] = field(default_factory=dict)
    # For this module's asked accessors that the run calls: whether any call is eager.
    accessor_calls: dict[str, bool] = field(default_factory=dict)
    # Other modules' run-once decorators (absolute names) this module may use
    # (``ModuleSummary.once_decorators``).
    once_decorators: frozenset[str] = frozenset()
    # Other modules' functions this module calls (absolute names) ->
    # ``ModuleSummary.escape_params``.
    escape_params: dict[str, tuple[tuple[str, ...], frozenset[str]]] = field(default_factory=dict)
    # Those of ``ModuleSummary.eager_script`` that no other module of the run constructs,
    # calls or subclasses, and Keras classes the run only uses eagerly
    # (``ModuleSummary.eager_made``): their ``call`` and steps run eagerly only, never traced.
    eager_classes: frozenset[str] = frozenset()
    # This module's tf.functions (qualnames) that other modules call with an evident tensor:
    # the arguments that get one (``ModuleSummary.tensor_args``).
    tensor_args: dict[str, frozenset[str]] = field(default_factory=dict)

    def tells_anything(self) -> bool:
        """Whether the run told the module anything that its own code cannot show: then it
        gets the full analysis whatever the prefilter says (``run.module``)."""
        return bool(
            self.roots
            or self.keras_classes
            or self.tf_functions
            or self.remote
            or self.exported
            or self.tracing_values
            or self.accessor_calls
            or self.call_resets
            or self.global_reads
            or self.global_writes
            or self.aliases
            or self.tensor_args
        )

    def may_be_project(self, name: str) -> bool:
        """``name`` (absolute) could be code of the analysed project (see ``may_be_project``)."""
        return may_be_project(name, self.first_party)

    def absolute(self, name: str) -> str:
        """``.helpers.f`` seen from ``pkg.train`` is ``pkg.helpers.f``."""
        if not name.startswith("."):
            return name
        dots = len(name) - len(name.lstrip("."))
        rest = name[dots:]
        if self.module is None:
            return rest
        parts = self.module.split(".")
        if not self.is_package:
            parts = parts[:-1]
        drop = dots - 1
        if drop > len(parts):
            return rest
        base = parts[: len(parts) - drop]
        return ".".join([*base, rest]) if rest else ".".join(base)


def may_be_project(name: str, first_party: frozenset[str] = frozenset()) -> bool:
    """``name`` (absolute) could be code of the analysed project, not a library we know:
    a dotted name outside ``FOREIGN_PREFIXES``, or under a top-level name of the run's own
    modules (``first_party``), whatever that name is."""
    if "." not in name:
        return False
    return not name.startswith(FOREIGN_PREFIXES) or name.partition(".")[0] in first_party


# Marks a base class defined in the same module: "<local>Name".
LOCAL = "<local>"
