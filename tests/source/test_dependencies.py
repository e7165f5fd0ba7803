"""`keras-version = "auto"`: which Keras a project's declared dependencies mean (SPEC §1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tflint_graph import lint_paths, lint_source
from tflint_graph.core.config import Config
from tflint_graph.source.dependencies import declared_keras, with_keras_version


def project(tmp_path: Path, **files: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / ".git").mkdir()  # the walk up stops here, whatever lies above tmp_path
    for name, text in files.items():
        path = tmp_path / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("requirements.txt", "numpy\ntensorflow==2.15.1  # pinned for the TPU image\n"),
        ("requirements-gpu.txt", "tensorflow-gpu>=2.10,<2.16\n"),
        ("requirements__base.txt", "tensorflow~=2.13.0\n"),
        ("requirements.txt", "keras<3\ntensorflow\n"),
        ("pyproject.toml", '[project]\nname = "p"\ndependencies = ["tensorflow<=2.15"]\n'),
        (
            "pyproject.toml",
            '[project]\nname = "p"\n[project.optional-dependencies]\ntf = ["keras==2.15.0"]\n',
        ),
        ("pyproject.toml", '[tool.poetry.dependencies]\ntensorflow = "~2.15"\n'),
        ("setup.cfg", "[options]\ninstall_requires =\n    numpy\n    tensorflow>=2.4,<2.16\n"),
        (
            "setup.py",
            "from setuptools import setup\nsetup(install_requires=['tensorflow==2.12'])\n",
        ),
        ("environment.yml", "dependencies:\n  - python=3.10\n  - tensorflow=2.15\n"),
        # A conda environment under another name, pinning a Python no Keras 3 TensorFlow runs
        # on (its pip part installs the project itself).
        ("conda_env.yaml", "dependencies:\n  - python==3.8\n  - pip:\n      - -e .\n"),
        ("environment-gpu.yml", "dependencies:\n  - python=3.8\n  - cudatoolkit=11.2\n"),
        ("requirements.txt", "tensorflow>=2.16\ntf-keras\n# export TF_USE_LEGACY_KERAS=1\n"),
        # Python versions that no TensorFlow with Keras 3 supports (2.16 needs Python 3.9)
        ("setup.py", "setup(python_requires='>=3.6.0, <3.9.0', install_requires=['tensorflow'])\n"),
        ("setup.cfg", "[options]\npython_requires = >=3.7,<3.9\ninstall_requires = tensorflow\n"),
        ("pyproject.toml", '[project]\nname = "p"\nrequires-python = "<3.9"\n'),
        # A package that never supported Keras 3.
        ("requirements.txt", "tensorflow\ntensorflow-addons\n"),
        ("requirements.txt", "numpy\ntensorflow-gpu\n"),  # ended with TensorFlow 2.11
        ("setup.py", "setup(install_requires=['tensorflow>=2.1', 'tensorflow_addons'])\n"),
        # The TensorFlow of a Docker image the project builds on, or that it pip-installs.
        ("Dockerfile", "FROM tensorflow/tensorflow:2.3.1-gpu\nRUN pip install tqdm\n"),
        ("docker__Dockerfile", "FROM python:3.8\nRUN pip install tensorflow-gpu==2.4.1 numpy\n"),
        # An install script the README tells users to run.
        ("setup.sh", "pip install -r requirements.txt\npip install tensorflow==2.3.1\n"),
    ],
)
def test_a_pin_that_excludes_keras3_means_keras2(tmp_path: Path, name: str, text: str) -> None:
    found = declared_keras(project(tmp_path, **{name: text}))
    assert found.version == "2", found.reason
    assert name.replace("__", "/").rsplit("/", 1)[-1] in found.reason


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("requirements.txt", "tensorflow\n"),
        ("requirements.txt", "tensorflow>=2.16\nkeras>=3\n"),
        ("requirements.txt", "tensorflow>=2.12,<3\n"),  # admits 2.16 and later
        # exact pins of releases with Keras 3, which no probe version equals
        ("requirements.txt", "tensorflow==2.18.1\nkeras==3.12.0\n"),
        ("requirements.txt", "tensorflow==2.17.*\n"),
        ("setup.py", "setup(python_requires='>=3.9', install_requires=['tensorflow'])\n"),
        ("pyproject.toml", '[project]\nname = "p"\nrequires-python = ">=3.8"\n'),
        ("requirements.txt", "tensorflow>=2.16\ntf-keras\n"),  # tf-keras alone switches nothing
        ("conda.yml", "dependencies:\n  - python=3.11\n  - pip:\n      - tensorflow\n"),
        # a comment that names the switch without turning it on
        (
            "requirements.txt",
            "tensorflow>=2.16\ntf-keras  # old checkpoints; no TF_USE_LEGACY_KERAS\n",
        ),
        ("pyproject.toml", '[tool.poetry.dependencies]\ntensorflow = "^2.12"\n'),
        ("pyproject.toml", '[project]\nname = "p"\ndependencies = ["numpy"]\n'),
        ("setup.py", "setup(install_requires=['tensorflow>=2.16', 'keras_hub'])\n"),
        ("requirements.txt", "tensorflowjs==3.0\nkeras-hub<0.20\n"),  # other packages
        ("Dockerfile", "FROM tensorflow/tensorflow:2.17.0-gpu\n"),
        ("Dockerfile", "FROM tensorflow/tensorflow:latest-gpu\nRUN pip install tensorflow\n"),
    ],
)
def test_anything_else_means_keras3(tmp_path: Path, name: str, text: str) -> None:
    assert declared_keras(project(tmp_path, **{name: text})).version == "3"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig"])
def test_a_requirements_file_with_a_byte_order_mark_is_read(tmp_path: Path, encoding: str) -> None:
    # `pip freeze > requirements.txt` in Windows PowerShell writes UTF-16 with a BOM.
    (tmp_path / "requirements.txt").write_bytes("tensorflow==2.3.1\n".encode(encoding))
    found = declared_keras(tmp_path)
    assert found.version == "2", found.reason


def test_no_declaration_means_keras3(tmp_path: Path) -> None:
    found = declared_keras(project(tmp_path, **{"pkg__mod.py": "import keras\n"}) / "pkg")
    assert (found.version, found.reason) == ("3", "no dependency declaration found")


def test_the_declaring_folder_is_found_from_a_file_below_it(tmp_path: Path) -> None:
    root = project(tmp_path, **{"requirements.txt": "tensorflow==2.15\n", "src__pkg__m.py": ""})
    assert declared_keras(root / "src" / "pkg" / "m.py").version == "2"


def test_broken_declarations_are_skipped(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        **{"pyproject.toml": "[project\n", "requirements.txt": "tensorflow >=> 2\n-e .\n"},
    )
    assert declared_keras(root).version == "3"


def test_an_explicit_setting_is_kept_and_auto_is_resolved_once(tmp_path: Path) -> None:
    root = project(tmp_path, **{"requirements.txt": "tensorflow==2.15\n"})
    explicit = with_keras_version(Config(keras_version="3"), [root])
    assert (explicit.keras_version, explicit.keras_reason) == ("3", "set in the configuration")
    auto = with_keras_version(Config(), [root])
    assert auto.keras_version == "2"
    assert auto.keras_reason.startswith("auto: requirements.txt: tensorflow==2.15")
    assert with_keras_version(auto, [tmp_path / "elsewhere"]) is auto


def test_the_metadata_of_a_built_package_is_a_declaration(tmp_path: Path) -> None:
    """An unpacked wheel or sdist declares its requirements in its metadata."""
    metadata = (
        "Metadata-Version: 2.1\nName: p\nRequires-Dist: numpy\n"
        "Requires-Dist: tensorflow<2.16.0,>=2.13.0 ; sys_platform != 'darwin'\n\n"
        "Requires-Dist: tensorflow>=2.16 (the description, not a header)\n"
    )
    wheel = project(tmp_path / "wheel", **{"p-1.0.dist-info__METADATA": metadata, "p__m.py": ""})
    assert declared_keras(wheel / "p" / "m.py").version == "2"
    sdist = project(tmp_path / "sdist", **{"PKG-INFO": metadata.replace("<2.16.0", "<3")})
    assert declared_keras(sdist).version == "3"


def test_tf_keras_with_the_switch_in_the_projects_code_means_keras2(tmp_path: Path) -> None:
    switch = 'import os\nos.environ.setdefault("TF_USE_LEGACY_KERAS", "1")\n'
    root = project(tmp_path, **{"requirements.txt": "tf-keras\ntensorflow\n", "pkg__mod.py": ""})
    assert declared_keras(root).version == "3"
    (root / "pkg" / "mod.py").write_text(switch, encoding="utf-8")
    found = declared_keras(root)
    assert found.version == "2"
    assert found.reason == "requirements.txt: tf-keras with TF_USE_LEGACY_KERAS"


# A Keras layer whose `call` tests a tensor in Python: raises under Keras 3 (call is not
# converted), converted under Keras 2.
LAYER = """\
import tensorflow as tf


class Gate(tf.keras.layers.Layer):
    def call(self, x):
        if tf.reduce_sum(x) > 0:
            return x
        return -x
"""


def _tfg201(paths: list[Path]) -> set[str]:
    found = lint_paths([str(p) for p in paths], Config(select=("TFG201",)))
    return {Path(f.path).parent.name for f in found}


def test_a_sub_project_pinning_keras2_is_analysed_as_keras2(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        **{
            "det/requirements.txt": "numpy\ntensorflow>=2.10,<2.16\n",
            "det/layers.py": LAYER,
            "cls/layers.py": LAYER,
        },
    )
    assert _tfg201([root]) == {"cls"}
    # The editor's one-file run agrees with the run over the tree.
    for folder, expected in (("det", 0), ("cls", 1)):
        path = root / folder / "layers.py"
        assert len(lint_source(LAYER, str(path), Config(select=("TFG201",)))) == expected


def test_the_nearest_declaration_that_names_tensorflow_decides(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        **{
            "requirements.txt": "tensorflow==2.15.1\n",
            # Names no TensorFlow: the root's pin still holds below it.
            "docs/requirements.txt": "sphinx\n",
            "docs/layers.py": LAYER,
            # Declares Keras 3 for itself.
            "new/pyproject.toml": '[project]\nname = "n"\ndependencies = ["keras>=3"]\n',
            "new/layers.py": LAYER,
        },
    )
    assert _tfg201([root]) == {"new"}
    assert _tfg201([root / "docs" / "layers.py"]) == set()


def test_a_folder_importing_tensorflow_addons_runs_keras2(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        **{
            "net/model.py": LAYER,
            "net/utils.py": "import tensorflow as tf\nimport tensorflow_addons as tfa\n",
            # A mention that imports nothing is no signal.
            "plain/model.py": LAYER,
            "plain/notes.py": '"""Once ported from tensorflow_addons."""\n',
        },
    )
    assert _tfg201([root]) == {"plain"}
    assert _tfg201([root / "net" / "model.py"]) == set()
    # A declared Keras 3 is not overruled by the import.
    (root / "net" / "requirements.txt").write_text("tensorflow>=2.16\n", encoding="utf-8")
    assert _tfg201([root]) == {"net", "plain"}


def test_a_notebook_importing_tensorflow_addons_runs_keras2(tmp_path: Path) -> None:
    def notebook(*lines: str) -> str:
        cell = {"cell_type": "code", "metadata": {}, "outputs": [], "source": list(lines)}
        return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})

    root = project(
        tmp_path,
        **{
            "kaggle/model.py": LAYER,
            "kaggle/solution.ipynb": notebook(
                "import numpy as np\n", "import tensorflow_addons as tfa\n"
            ),
            # in a string of the notebook, not an import
            "other/model.py": LAYER,
            "other/notes.ipynb": notebook("print('import tensorflow_addons')\n"),
        },
    )
    assert _tfg201([root]) == {"other"}


def test_an_explicit_keras_version_is_not_overruled_by_a_sub_project(tmp_path: Path) -> None:
    root = project(
        tmp_path, **{"det/requirements.txt": "tensorflow<2.16\n", "det/layers.py": LAYER}
    )
    found = lint_paths([str(root)], Config(select=("TFG201",), keras_version="3"))
    assert len(list(found)) == 1


def test_a_folder_that_names_no_tensorflow_does_not_hide_the_pin_above(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        **{
            "requirements.txt": "tensorflow<2.16\n",
            "scripts/run.sh": "python train.py --epochs 3\n",
            "scripts/train.py": "",
        },
    )
    assert declared_keras(root / "scripts" / "train.py").version == "2"


@pytest.mark.parametrize(
    "line",
    [
        "from tensorflow.keras.layers.experimental import preprocessing",
        "from tensorflow.keras.mixed_precision import experimental as mixed_precision",
        "    from keras.engine.base_layer import Layer",
        "from keras.layers.core import Dense",
        "import tensorflow_addons as tfa",
    ],
)
def test_imports_that_keras3_removed_mean_keras2(tmp_path: Path, line: str) -> None:
    root = project(tmp_path, **{"net/model.py": LAYER, "net/compat.py": line + "\n"})
    assert _tfg201([root]) == set()


@pytest.mark.parametrize(
    "use",
    [
        "from tensorflow.python.keras.applications import imagenet_utils\n",
        "import tensorflow as tf\n\n"
        "policy = tf.keras.mixed_precision.experimental.Policy('mixed_float16')\n",
    ],
)
def test_an_api_tensorflow_dropped_before_keras3_pins_the_whole_project(
    tmp_path: Path, use: str
) -> None:
    # No declaration anywhere; another folder of the repository uses what only a TensorFlow
    # before 2.16 has: the project runs Keras 2, in a tree run and in a one-file run alike.
    root = project(tmp_path, **{"core/layers/model.py": LAYER, "trainers/setup.py": use})
    assert _tfg201([root]) == set()
    assert _tfg201([root / "core" / "layers" / "model.py"]) == set()
    # Without it, the layer's folder runs Keras 3 again.
    (root / "trainers" / "setup.py").write_text("import tensorflow as tf\n", encoding="utf-8")
    assert _tfg201([root]) == {"layers"}
