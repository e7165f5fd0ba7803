#!/usr/bin/env bash
# Dynamic-mode checks on a GPU machine that has no network: the runtime wheels travel in .whl/
# (see the closing notes of issue 6). TensorFlow itself is too large to carry, so the tests that
# need it skip there; what runs is everything around it (isolation, planning, inputs, the CLI's
# one-line error without TensorFlow) on that machine's Python.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD"
nvidia-smi -L
python3 --version
python3 -c "import tensorflow" 2>&1 | tail -1
python3 -c "from tflint_graph.dynamic.session import _gpu_possible; print('GPU visible to dynamic mode:', _gpu_possible())"
python3 -m pytest -q -p no:cacheprovider -n 8 tests/dynamic/ 2>&1 \
    | tee "${OUT:-/tmp}/pytest.log" | tail -15
(cd fixtures/dynamic && python3 -m tflint_graph . --dynamic --no-cache; echo "exit status $?")
