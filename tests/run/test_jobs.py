"""``--jobs N``: a process pool gives the same findings as one process, and a
crashing worker loses no other file's findings."""

from __future__ import annotations

import concurrent.futures
import logging
import os
import shutil
from pathlib import Path

import pytest

import tflint_graph.run.parallel
from tests.cli_support import PRINT_STEP, THREE_CODES, invoke, write_tree
from tests.helpers import CORPUS, DEMO, PROJECTS
from tflint_graph import Config, Finding, lint_paths
from tflint_graph.core.facts import ModuleSummary, ProjectView
from tflint_graph.run.module import analyse_file
from tflint_graph.run.parallel import AnalysisPool
from tflint_graph.run.project import Project

PROJECT_DIRS = sorted(p for p in PROJECTS.iterdir() if p.is_dir())
PARENT = os.getpid()


def _generated_tree(root: Path, copies: int = 1) -> Path:
    """Copies of the demo and of every test project, plus the corpus, as one run."""
    for i in range(copies):
        shutil.copytree(DEMO, root / f"c{i}" / "demo")
        for project in PROJECT_DIRS:
            shutil.copytree(project, root / f"c{i}" / "projects" / project.name)
    shutil.copytree(CORPUS, root / "corpus")
    return root


def _rows(paths: list[Path], jobs: int) -> list[dict[str, object]]:
    return [f.to_dict() for f in lint_paths(paths, Config(), jobs=jobs)]


@pytest.mark.parametrize("target", [DEMO, *PROJECT_DIRS], ids=lambda p: Path(p).name)
def test_same_findings_for_every_job_count(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tflint_graph.run.parallel, "MIN_POOL_TASKS", 1)  # use the pool anyway
    serial = _rows([target], 1)
    assert _rows([target], 2) == serial
    assert _rows([target], 3) == serial


def test_same_findings_for_every_job_count_on_a_generated_tree(tmp_path: Path) -> None:
    tree = _generated_tree(tmp_path)
    assert sum(1 for _ in tree.rglob("*.py")) >= 2 * tflint_graph.run.parallel.MIN_POOL_TASKS
    serial = _rows([tree], 1)
    assert serial
    assert _rows([tree], 2) == serial
    assert _rows([tree], 3) == serial


def test_cli_jobs_option_gives_identical_output(tmp_path: Path) -> None:
    files = {f"m{i}.py": PRINT_STEP if i % 2 else THREE_CODES for i in range(20)}
    write_tree(tmp_path, files)
    one = invoke(["--no-cache", "--jobs", "1", "."], tmp_path)
    two = invoke(["--no-cache", "-j", "2", "."], tmp_path)
    default = invoke(["--no-cache", "."], tmp_path)
    assert one.exit_code == two.exit_code == default.exit_code == 1
    assert one.stdout == two.stdout == default.stdout
    assert "Found 40 findings." in one.stdout


def test_cli_rejects_zero_jobs(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": PRINT_STEP})
    result = invoke(["--no-cache", "--jobs", "0", "m.py"], tmp_path)
    assert result.exit_code == 2
    assert "--jobs" in result.stderr


def test_library_default_and_small_runs_start_no_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("a pool was started")

    # The pool is imported where it starts (warm runs never import multiprocessing).
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    write_tree(tmp_path, {f"m{i}.py": PRINT_STEP for i in range(20)})
    assert len(list(lint_paths([tmp_path]))) == 20  # library default: jobs=1
    small = tmp_path / "small"
    write_tree(small, {"a.py": PRINT_STEP, "b.py": PRINT_STEP})
    assert len(list(lint_paths([small], jobs=4))) == 2  # too few files for a pool


# Module-level (picklable by reference): the forked workers find them as patched here.


def crash_on_boom(
    path: Path, config: Config, display: str | None, view: ProjectView | None
) -> tuple[list[Finding], ModuleSummary | None]:
    if path.name == "boom.py" and os.getpid() != PARENT:
        os._exit(3)  # a worker dying as from a C stack overflow or the OOM killer
    return analyse_file(path, config, display, view)


def warn_on_odd(
    path: Path, config: Config, display: str | None, view: ProjectView | None
) -> tuple[list[Finding], ModuleSummary | None]:
    if path.stem.endswith(("1", "3")):
        logging.getLogger("tflint_graph").warning("internal error while linting %s", path.name)
    return analyse_file(path, config, display, view)


def test_a_crashing_worker_loses_no_other_findings(tmp_path: Path) -> None:
    write_tree(tmp_path, {f"m{i:02}.py": PRINT_STEP for i in range(30)})
    write_tree(tmp_path, {"boom.py": PRINT_STEP})
    files = sorted(tmp_path.glob("*.py"))
    results = Project(files, Config(), AnalysisPool(crash_on_boom, Config(), 2)).run()
    for file in files:
        codes = [f.code for f in results[file]]
        assert codes == (["TFG001"] if file.name == "boom.py" else ["TFG101"]), file
    [crash] = results[tmp_path / "boom.py"]
    assert "crashed" in crash.message
    # In one process nothing crashes: the same findings, boom.py's real one included.
    serial = Project(files, Config(), AnalysisPool(crash_on_boom, Config(), 1)).run()
    assert {f: r for f, r in serial.items() if f.name != "boom.py"} == {
        f: r for f, r in results.items() if f.name != "boom.py"
    }


def test_worker_warnings_reach_the_main_process_in_order(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_tree(tmp_path, {f"m{i:02}.py": PRINT_STEP for i in range(24)})
    files = sorted(tmp_path.glob("*.py"))
    expected = [f"internal error while linting {f.name}" for f in files if f.stem[-1] in "13"]
    messages = []
    for jobs in (1, 2):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="tflint_graph"):
            Project(files, Config(), AnalysisPool(warn_on_odd, Config(), jobs)).run()
        messages.append([r.getMessage() for r in caplog.records])
    assert messages == [expected, expected]


def test_files_analysed_again_go_back_to_their_worker(tmp_path: Path) -> None:
    """A second analysis is sent to the process that holds the file's parsed tree; files
    without one are dealt to the worker with the least work; an idle worker takes work
    queued for another rather than wait."""
    from tflint_graph.run.parallel import Job

    write_tree(tmp_path, {f"m{i}.py": PRINT_STEP * (i + 1) for i in range(6)})
    files = sorted(tmp_path.glob("*.py"))
    runner = AnalysisPool(analyse_file, Config(), jobs=2)
    runner._home = {files[0]: 1, files[1]: 1, files[2]: 0}
    jobs = [Job(i, path, ProjectView(), None) for i, path in enumerate(files)]
    queues = runner._queues(jobs)
    placed = {job.path: k for k, queue in enumerate(queues) for chunk in queue for job in chunk}
    assert sorted(placed) == files
    assert [placed[f] for f in files[:3]] == [1, 1, 0]
    # Worker 0 holds less after the homed files: the largest homeless file goes there.
    assert placed[files[5]] == 0
    assert runner._next([[], [["a"], ["b"]]], 0) == ["b"]  # type: ignore[list-item]
    assert runner._next([[["c"]], [["d"]]], 1) == ["d"]  # type: ignore[list-item]
    assert runner._next([[], []], 0) is None
