"""Static mode never runs user code; the cache holds data only.

The project below writes a marker file (outside the project) from every place Python would
run it: module top level, a package ``__init__.py``, ``conftest.py``, ``setup.py``, an
``if __name__ == "__main__":`` block, a class body, a decorator, a default argument,
``sitecustomize.py``/``usercustomize.py`` and ``.pth`` files (which only run if a directory
is added as a site directory).  The linter reads all of it, follows imports between the
modules, and must never write a marker: not through the library, nor the CLI (one process
or a ``--jobs`` pool, cache on), nor the console script, nor the flake8 plugin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_support import VENV_SCRIPT, codes_in, write_tree
from tflint_graph import Config, lint_paths
from tflint_graph.run.cache import CACHEDIR_TAG, DIR_NAME


def _payload(markers: Path, name: str) -> str:
    return f"open({str(markers / name)!r}, 'w').write('ran')"


def evil_project(root: Path, markers: Path) -> Path:
    """The project (in ``root/proj``); markers go to ``markers``."""
    markers.mkdir(exist_ok=True)
    proj = root / "proj"

    def p(name: str) -> str:
        return _payload(markers, name)

    files = {
        "pyproject.toml": "[tool.tflint-graph]\n",
        "pkg/__init__.py": (
            f"import tensorflow as tf\n{p('pkg_init')}\nfrom pkg.model import step\n"
        ),
        "pkg/model.py": (
            "import tensorflow as tf\n"
            f"{p('model_top')}\n"
            "\n"
            f"def register(fn, _=({p('decorator_factory')})):\n"
            "    return fn\n"
            "\n"
            "@register\n"
            "@tf.function\n"
            "def step(x):\n"
            "    print(x)\n"
            "    return x\n"
            "\n"
            "class Model(tf.keras.Model):\n"
            f"    {p('class_body')}\n"
            "\n"
            "    def call(self, x):\n"
            "        print(x)\n"
            "        return x\n"
        ),
        "train.py": (
            "import tensorflow as tf\n"
            "from pkg.model import step, Model\n"
            "\n"
            "def main():\n"
            f"    {p('main_function')}\n"
            "    for i in range(3):\n"
            "        step(i)\n"
            "\n"
            'if __name__ == "__main__":\n'
            f"    {p('dunder_main')}\n"
            "    main()\n"
        ),
        "conftest.py": f"import tensorflow as tf\n{p('conftest')}\n",
        "setup.py": f"import setuptools\n{p('setup_py')}\nsetuptools.setup(name='x')\n",
        "sitecustomize.py": p("sitecustomize") + "\n",
        "usercustomize.py": p("usercustomize") + "\n",
        "tests/__init__.py": "",
        "tests/conftest.py": p("tests_conftest") + "\n",
        "tests/test_model.py": f"from pkg.model import step\n{p('test_module')}\n",
        # .pth files run only in site directories: a linter must never make one of these.
        "zz_evil.pth": f"import os; {p('pth_root')}\n",
        "pkg/zz_evil.pth": f"import os; {p('pth_pkg')}\n",
        # __main__.py runs on `python -m pkg`; a namespace package, imports through strings
        "pkg/__main__.py": p("pkg_main") + "\n",
        "ns/mod.py": f"import importlib\n{p('ns_mod')}\nimportlib.import_module('pkg.model')\n",
    }
    write_tree(proj, files)
    return proj


def _markers(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


def _pycache(proj: Path) -> list[str]:
    return sorted(str(p.relative_to(proj)) for p in proj.rglob("__pycache__"))


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # Bytecode writing is left on: a __pycache__ in the project would betray an import.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=300, env=env, check=False
    )
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def test_the_payloads_work_when_run(tmp_path: Path) -> None:
    """The control: actually importing the project does write markers."""
    markers = tmp_path / "markers"
    proj = evil_project(tmp_path, markers)
    code = "import sys; sys.modules['tensorflow'] = type(sys)('tensorflow'); import conftest"
    subprocess.run([sys.executable, "-c", code], cwd=proj, check=True)
    assert _markers(markers) == ["conftest"]


def test_lint_paths_runs_nothing(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    proj = evil_project(tmp_path, markers)
    for jobs in (1, 2):
        found = list(lint_paths([proj], Config(), jobs=jobs, cache=tmp_path / "cache"))
        assert {(Path(f.path).name, f.code) for f in found} >= {
            ("model.py", "TFG101"),
            ("train.py", "TFG303"),
        }
    assert _markers(markers) == []
    assert _pycache(proj) == []


@pytest.mark.parametrize(
    "args",
    [["--jobs", "1"], ["--jobs", "2"], ["--jobs", "2", "--output-format", "json"]],
    ids=["jobs1", "jobs2", "jobs2-json"],
)
def test_cli_runs_nothing_and_its_cache_is_data(tmp_path: Path, args: list[str]) -> None:
    markers = tmp_path / "markers"
    proj = evil_project(tmp_path, markers)
    # Enough files for the --jobs pool (parallel.MIN_POOL_TASKS) to start.
    write_tree(
        proj,
        {
            f"more/m{i:02}.py": f"import tensorflow as tf\n{_payload(markers, f'm{i}')}\n"
            for i in range(20)
        },
    )
    outputs = []
    for _ in ("cold", "warm"):
        proc = _run([sys.executable, "-m", "tflint_graph", *args, "."], proj)
        assert proc.returncode == 1, proc.stderr
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    if "json" not in args:
        found = {(path, code) for path, _, _, code in codes_in(outputs[0])}
        assert ("pkg/model.py", "TFG101") in found
    assert _markers(markers) == []
    assert _pycache(proj) == []
    check_cache_is_data(proj / DIR_NAME)


def test_console_script_runs_nothing_even_with_shadowing_modules(tmp_path: Path) -> None:
    """Modules named like ones the linter imports lazily (json, tokenize, difflib, libcst,
    click, ...) sit in the project, which is also the working directory: the console script
    does not put the working directory on ``sys.path``, so none of them is imported."""
    markers = tmp_path / "markers"
    proj = evil_project(tmp_path, markers)
    shadows = [
        "json",
        "tokenize",
        "difflib",
        "ast",
        "fnmatch",
        "hashlib",
        "tempfile",
        "libcst",
        "click",
        "tflint_graph_extra",
        "concurrent",
        "multiprocessing",
    ]
    write_tree(proj, {f"{name}.py": _payload(markers, f"shadow_{name}") + "\n" for name in shadows})
    proc = _run([str(VENV_SCRIPT), "--jobs", "2", "."], proj)
    assert proc.returncode == 1, proc.stderr
    assert _markers(markers) == []
    check_cache_is_data(proj / DIR_NAME)


def test_flake8_plugin_runs_nothing(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    proj = evil_project(tmp_path, markers)
    for extra in ([], ["--jobs", "2"]):
        proc = _run([sys.executable, "-m", "flake8", "--select", "TFG", *extra, "."], proj)
        assert proc.returncode == 1, proc.stderr
        assert "TFG101" in proc.stdout
    # stdin too
    source = (proj / "pkg" / "model.py").read_text()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TFG", "-"],
        input=source,
        cwd=proj,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert "TFG101" in proc.stdout
    assert _markers(markers) == []
    assert _pycache(proj) == []


def check_cache_is_data(cache: Path) -> None:
    """Every file of the cache is its tag, its .gitignore, or a JSON entry (read as JSON,
    never unpickled)."""
    assert cache.is_dir()
    entries = 0
    for path in sorted(cache.rglob("*")):
        if path.is_dir():
            assert path.parent == cache and (len(path.name) == 2 or path.name == "projects"), path
            continue
        data = path.read_bytes()
        assert not data.startswith(b"\x80"), f"{path} looks like a pickle"
        rel = path.relative_to(cache).as_posix()
        if rel == "CACHEDIR.TAG":
            assert data.decode() == CACHEDIR_TAG
        elif rel == ".gitignore":
            assert data == b"*\n"
        else:
            assert path.suffix == ".json", path
            assert not path.name.startswith(".tmp-"), f"leftover temporary file {path}"
            entry = json.loads(data)
            assert isinstance(entry, dict)
            assert path.stem == entry["key"]
            if path.parent.name == "projects":  # a project's latest record, by its key
                assert set(entry) == {"format", "key", "root", "record"}
                continue
            # One entry per analysed file, one record per run (its inputs' digests), and
            # one part of a record per file of the run.
            assert (
                {"format", "key", "findings", "summary"} <= set(entry)
                or {"format", "key", "began", "files", "outside", "absent"} == set(entry)
                or {"format", "key", "part"} == set(entry)
            )
            assert path.parent.name == entry["key"][:2]
            entries += 1
    assert entries > 0
