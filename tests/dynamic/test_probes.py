"""The child's probes against the names the rules flag: every API a trace-time-effect rule
reports has a probe of the kind its code is confirmed by (``PROBE_KINDS``).

``child.py`` runs in the child without the package, so it keeps its own lists; this test
reads both sides.  The probes are installed in a subprocess (they replace ``print``, ``open``
and friends process-wide).
"""

from __future__ import annotations

import json
import random
import secrets
import subprocess
import sys
import textwrap

import pytest

from tests.helpers import REPO
from tflint_graph.checks import frozen_clock_or_env, python_io_in_traced, python_random
from tflint_graph.dynamic.verdicts import PROBE_KINDS

_INSTALL = textwrap.dedent(
    """
    import importlib.util, json, sys, types
    spec = importlib.util.spec_from_file_location("_child", sys.argv[1])
    child = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(child)
    module = types.ModuleType("user")
    module.__file__ = sys.argv[2]
    probe = child.Probe(module)
    probe.install_probes()
    sys.stdout.write(json.dumps(probe.probed))
    """
)

# Flagged names no probe can stand for, and why.
_UNPROBED = {
    # The child's standard streams belong to the isolation harness, which reads them.
    "sys.stdout.write": "the harness owns the child's stdout",
    "sys.stderr.write": "the harness owns the child's stderr",
    # TensorFlow 1 names: absent from TensorFlow 2, nothing to patch.
    "tensorflow.gfile.GFile": "TF1 only",
    "tensorflow.gfile.Open": "TF1 only",
}


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    pytest.importorskip("tensorflow")
    user = tmp_path_factory.mktemp("probes") / "user.py"
    user.write_text("", encoding="utf-8")
    child = REPO / "tflint_graph" / "dynamic" / "child.py"
    proc = subprocess.run(
        [sys.executable, "-c", _INSTALL, str(child), str(user)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _missing(names: set[str], probed: dict[str, str], code: str) -> set[str]:
    kind = PROBE_KINDS[code]
    return {n for n in names if probed.get(n) != kind}


def test_every_clock_and_environment_read_tfg104_flags_is_probed(probed: dict[str, str]) -> None:
    flagged = set(frozen_clock_or_env._CLOCKS) | set(frozen_clock_or_env._ENV_CALLS)
    flagged.add("os.environ")
    assert not _missing(flagged, probed, "TFG104")


def test_every_io_call_tfg108_flags_is_probed(probed: dict[str, str]) -> None:
    flagged = set(python_io_in_traced._IO_CALLS) - set(_UNPROBED)
    flagged |= {"open", "input"}
    flagged |= {"Path." + m for m in python_io_in_traced._PATH_WRITES}
    # Methods of the file objects the factories return (the rule's write/writelines/flush).
    flagged |= {"file.write", "file.writelines", "file.flush"}
    assert not _missing(flagged, probed, "TFG108")


def _public_functions(module: object, not_draws: set[str]) -> set[str]:
    return {
        n
        for n in dir(module)
        if not n.startswith("_")
        and callable(getattr(module, n))
        and not isinstance(getattr(module, n), type)
        and n not in not_draws
    }


def test_every_draw_tfg103_flags_is_probed(probed: dict[str, str]) -> None:
    np = pytest.importorskip("numpy")
    # TFG103 flags every random.*, numpy.random.* and secrets.* call: every public function
    # that draws needs a probe (seeding, state and constructors of generators do not draw;
    # numpy.random.test is NumPy's test runner).
    assert python_random._MODULES == ("random.", "numpy.random.", "secrets.")
    flagged = {"random." + n for n in _public_functions(random, {"seed", "getstate", "setstate"})}
    flagged |= {
        "numpy.random." + n
        for n in _public_functions(
            np.random,
            {"seed", "get_state", "set_state", "get_bit_generator", "set_bit_generator", "test"},
        )
    }
    flagged |= {"secrets." + n for n in _public_functions(secrets, {"compare_digest"})}
    flagged |= set(python_random._EXACT)
    # Methods of the generators it flags (default_rng() / RandomState() / Random() results).
    flagged |= {
        f"numpy.random.Generator.{n}"
        for n in _public_functions(np.random.Generator, {"spawn", "bit_generator"})
    }
    flagged |= {
        f"random.Random.{n}" for n in _public_functions(random.Random, {"seed", "getstate"})
    } - {"random.Random.setstate"}
    assert {"random.betavariate", "random.vonmisesvariate", "numpy.random.zipf"} <= flagged
    assert not _missing(flagged, probed, "TFG103")


def test_probes_are_only_of_the_kinds_verdicts_know(probed: dict[str, str]) -> None:
    assert set(probed.values()) <= set(PROBE_KINDS.values())


def test_a_probe_keeps_the_identity_of_what_it_replaces() -> None:
    # Other tools name a function by module and name (pytest-benchmark looks up its timer,
    # "time.perf_counter", from the patched function itself): the probe must lead back there.
    pytest.importorskip("tensorflow")
    import time

    from tflint_graph.dynamic import child

    def probe(*args: object) -> float:
        return time.perf_counter()

    child._looks_like(probe, time.perf_counter, "perf_counter")
    assert (probe.__module__, probe.__name__, probe.__qualname__) == (
        "time",
        "perf_counter",
        "perf_counter",
    )
