"""The result cache ``.tflint-graph-cache/``: what it stores, when it is reused, when it is
not, and that a damaged cache never changes a result."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import tflint_graph.run.cache
import tflint_graph.run.module
import tflint_graph.run.project
from tests.cli_support import PRINT_STEP, THREE_CODES, codes_in, invoke, write_tree
from tests.helpers import PROJECTS
from tests.run.test_cross_module import HELPERS, STEP
from tflint_graph import Config, Finding, Severity, lint_paths
from tflint_graph.api import project_view
from tflint_graph.core.facts import (
    ExportFact,
    ExternalRoot,
    ModuleSummary,
    Outgoing,
    RemoteFinding,
    TfFunction,
)
from tflint_graph.core.finding import DynamicStatus
from tflint_graph.model.context import TraceKind
from tflint_graph.run.cache import CACHE_FORMAT, CACHEDIR_TAG, DIR_NAME, Cache, pack, unpack

NO_TF_CALLER = PROJECTS / "no_tf_caller"


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def _roundtrip(value: Any) -> Any:
    return unpack(json.loads(json.dumps(pack(value))))


# -- codec ---------------------------------------------------------------------------------


def test_finding_round_trips_every_field() -> None:
    finding = Finding(
        path="pkg/a.ipynb",
        line=3,
        column=5,
        code="TFG101",
        name="print-in-traced",
        message="print() runs only while tracing",
        severity=Severity.WARNING,
        context="decorated with @tf.function",
        chain=("step()", "helper()"),
        fix="use tf.print()",
        end_line=3,
        end_column=12,
        fix_safety="safe",
        dynamic=DynamicStatus("confirmed", "printed once"),
        cell=4,
    )
    assert all(  # every field set: a new field must be added here
        getattr(finding, f.name) != _default(f) for f in dataclasses.fields(Finding)
    )
    back = _roundtrip(finding)
    assert back == finding
    assert type(back.chain) is tuple and type(back.severity) is Severity
    bare = Finding("a.py", 1, 1, "TFG001", "syntax-error", "bad", Severity.ERROR)
    assert _roundtrip(bare) == bare


def test_module_summary_round_trips_every_nested_fact() -> None:
    fn = TfFunction("Trainer.step", "step()", True, True, True, "pkg/model.py", 12)
    summary = ModuleSummary(
        module="pkg.model",
        exports={"Trainer.step": fn, "plain": TfFunction("plain", "plain()", False)},
        reexports={"normalize": "pkg.helpers.normalize"},
        outgoing=[
            Outgoing("pkg.helpers.f", TraceKind.CALLEE, "called from step()", ("step()",)),
            Outgoing("pkg.data.g", TraceKind.DATASET, "mapped", (), autograph=False),
            Outgoing(
                "pkg.data.h", TraceKind.CALLEE, "called", (), passed=frozenset({"kw:k"}), setup=True
            ),
            Outgoing("pkg.data.C.run", TraceKind.CALLEE, "called", (), fresh=True),
        ],
        called_imports={"pkg.helpers.f", "pkg.data.g", "pkg.x"},
        classes={"Net": ("keras.Model", "<local>Base"), "Base": ()},
        exports_elsewhere=[
            ExportFact("pkg.m.Net", "object", "saved", signatures=True, touched=("rank", "x")),
            ExportFact("pkg.m.serve", "function", "signatures="),
        ],
        remote=[RemoteFinding("pkg.m.f", "TFG303", "retrace", "warning", "msg", fix="pin it")],
        tracing_values={"in_graph": True, "Layer.is_eager": False},
        guard_classes=(("Net", ("pkg.base.Layer",), frozenset({"call"})),),
        asked_tracing=frozenset({"pkg.utils.in_tf_function"}),
        accessor_calls={"report_losses": False, "summary": True},
        asked_accessors=frozenset({"report_losses"}),
        call_resets={"Model": frozenset({"_losses_dict"})},
        global_reads={"is_disabled": frozenset({"pkg.options._DISABLED"})},
        global_writes={"disable": frozenset({"pkg.options._DISABLED"})},
        once_decorators=frozenset({"once"}),
        escape_params={"Resource.wrap": (("fn", "inp"), frozenset({"fn"}))},
        eager_script=frozenset({"Net"}),
        eager_made={"pkg.metrics.AP": frozenset({"<local>Panoptic"}), "<local>Net": frozenset()},
        used_otherwise=frozenset({"pkg.layers.Scale"}),
        foreign_attributes=frozenset({"model", "optimizer"}),
        tensor_args={"pkg.loops.collect": frozenset({"pos:1", "kw:steps"})},
    )
    assert all(getattr(summary, f.name) != _default(f) for f in dataclasses.fields(summary))
    back = _roundtrip(summary)
    assert back == summary
    assert type(back.called_imports) is set
    assert type(back.classes["Net"]) is tuple
    assert type(back.outgoing[0].kind) is TraceKind and type(back.outgoing[0].chain) is tuple
    assert type(back.exports_elsewhere[0].touched) is tuple
    assert type(back.asked_accessors) is frozenset
    assert type(back.eager_script) is frozenset
    assert type(back.eager_made["pkg.metrics.AP"]) is frozenset
    positional, escaping = back.escape_params["Resource.wrap"]
    assert type(positional) is tuple and type(escaping) is frozenset
    assert _roundtrip(ModuleSummary(None)) == ModuleSummary(None)


def test_codec_keeps_frozensets_and_non_string_keys() -> None:
    value = {"kinds": frozenset({"model", "layer"}), 3: (1, [2, {4}]), None: None}
    back = _roundtrip(value)
    assert back == value and type(back["kinds"]) is frozenset
    root = ExternalRoot("f", TraceKind.KERAS, "call() of Net", ("fit()",), autograph=False)
    assert _roundtrip(root) == root
    passed = ExternalRoot(
        "g", TraceKind.CALLEE, "called", (), passed=(frozenset({"pos:0"}),), fresh=True
    )
    back = _roundtrip(passed)
    assert back == passed and type(back.passed) is tuple and type(back.passed[0]) is frozenset


@pytest.mark.parametrize(
    "entry",
    [
        {"c": "Popen", "f": {}},  # not one of our types
        {"e": "Severity", "v": "fatal"},
        {"c": "Finding", "f": {"path": "a.py"}},  # missing fields
        {"x": 1},
        {"__reduce__": ["os.system", ["true"]]},
    ],
)
def test_unpack_rejects_foreign_data(entry: Any) -> None:
    with pytest.raises(ValueError):
        unpack(entry)


def test_pack_refuses_unknown_types() -> None:
    with pytest.raises(TypeError):
        pack(object())
    with pytest.raises(TypeError):
        pack(Config())  # not a cached fact


# -- the CLI and lint_paths ---------------------------------------------------------------


def _cache_entries(root: Path) -> list[Path]:
    return sorted((root / DIR_NAME).glob("??/*.json"))


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files actually analysed (not served from the cache)."""
    seen: list[str] = []
    real = tflint_graph.run.module.analyse_file

    def spy(path: Path, *args: Any, **kwargs: Any) -> Any:
        seen.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(tflint_graph.run.module, "analyse_file", spy)
    return seen


def test_warm_run_reuses_every_result_and_prints_the_same(
    tmp_path: Path, counted: list[str]
) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP, "b.py": THREE_CODES, "ok.py": "x = 1\n"})
    uncached = invoke(["--no-cache", "."], tmp_path)
    assert not (tmp_path / DIR_NAME).exists()  # --no-cache writes nothing
    counted.clear()
    cold = invoke(["."], tmp_path)
    assert sorted(counted) == ["a.py", "b.py", "ok.py"]
    counted.clear()
    warm = invoke(["--output-format", "text", "."], tmp_path)
    assert counted == []
    assert uncached.stdout == cold.stdout == warm.stdout
    assert uncached.exit_code == cold.exit_code == warm.exit_code == 1
    # One per file, the run's record, and each file's part of it.
    assert len(_cache_entries(tmp_path)) == 3 + 1 + 3
    # --no-cache does not read it either.
    counted.clear()
    assert invoke(["--no-cache", "."], tmp_path).stdout == cold.stdout
    assert sorted(counted) == ["a.py", "b.py", "ok.py"]


def test_cache_directory_is_tagged_and_ignored(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": PRINT_STEP})
    invoke(["a.py"], tmp_path)
    cache = tmp_path / DIR_NAME
    assert (cache / "CACHEDIR.TAG").read_text() == CACHEDIR_TAG
    assert CACHEDIR_TAG.startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache / ".gitignore").read_text() == "*\n"
    assert not list(cache.rglob(".tmp-*"))


def test_cache_lives_next_to_the_pyproject(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"pyproject.toml": "[tool.tflint-graph]\n", "src/pkg/a.py": PRINT_STEP},
    )
    invoke(["pkg"], tmp_path / "src")
    assert (tmp_path / DIR_NAME / "CACHEDIR.TAG").is_file()
    assert not (tmp_path / "src" / DIR_NAME).exists()


def test_without_a_configuring_pyproject_the_cache_lives_in_the_project(tmp_path: Path) -> None:
    # The folder the command runs from never decides: a marked project root above the
    # paths does (a pyproject.toml without our table, setup.py/setup.cfg, .git, .hg).
    write_tree(
        tmp_path,
        {
            "repo/setup.cfg": "[metadata]\nname = repo\n",
            "repo/src/pkg/a.py": PRINT_STEP,
            "loose/b.py": PRINT_STEP,
            "elsewhere/.keep": "",
        },
    )
    invoke([str(tmp_path / "repo/src/pkg/a.py")], tmp_path / "elsewhere")
    assert (tmp_path / "repo" / DIR_NAME / "CACHEDIR.TAG").is_file()
    # Without any marker: the folder the paths are in.
    invoke([str(tmp_path / "loose")], tmp_path / "elsewhere")
    assert (tmp_path / "loose" / DIR_NAME / "CACHEDIR.TAG").is_file()
    assert not (tmp_path / "elsewhere" / DIR_NAME).exists()
    assert not (tmp_path / "repo" / "src" / DIR_NAME).exists()


def test_entries_are_plain_json_data(tmp_path: Path) -> None:
    write_tree(tmp_path, {"train.py": STEP, "helpers.py": HELPERS, "b.py": THREE_CODES})
    invoke(["."], tmp_path)
    entries = _cache_entries(tmp_path)
    assert entries
    allowed_tags = {"c", "f", "t", "s", "fs", "d", "e", "v"}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if "c" in value:
                assert value["c"] in {
                    "Finding",
                    "DynamicStatus",
                    "ModuleSummary",
                    "TfFunction",
                    "ExternalRoot",
                    "Outgoing",
                    "ExportFact",
                    "RemoteFinding",
                    "ProjectView",
                }
            for key, item in value.items():
                assert isinstance(key, str)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        else:
            assert value is None or isinstance(value, (str, int, float, bool))

    records, named = 0, set()
    keys = {entry.stem for entry in entries}
    for entry in entries:
        raw = entry.read_bytes()
        assert not raw.startswith(b"\x80")  # no pickle protocol header
        data = json.loads(raw)
        assert data["key"] == entry.stem
        if "files" in data:  # the record of a whole run: its inputs' digests and parts
            records += 1
            assert set(data) == {"format", "key", "began", "files", "outside", "absent"}
            assert all(isinstance(v, str) for v in data["absent"])
            for digest, size, mtime, inode, real, part in data["files"].values():
                assert all(isinstance(v, str) for v in (digest, real, part))
                assert all(isinstance(n, int) for n in (size, mtime, inode))
                named.add(part)
            parts = []
        elif "part" in data:  # one file's findings and analyses
            parts = data["part"]
            assert set(data) == {"format", "key", "part"} and len(parts) == 2
        else:
            assert set(data) == {"format", "key", "findings", "summary"}
            parts = [data["findings"], data["summary"]]
        for part in parts:
            walk(part)
            if isinstance(part, dict):
                assert set(part) <= allowed_tags
    assert records == 1
    assert len(named) == 3 and named <= keys  # every part the record names is there


def test_content_change_invalidates(
    tmp_path: Path, counted: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # cache=True: no pyproject.toml, so in the working directory
    write_tree(tmp_path, {"a.py": PRINT_STEP, "b.py": PRINT_STEP})
    assert [f.code for f in lint_paths([tmp_path], cache=True)] == ["TFG101", "TFG101"]
    (tmp_path / "a.py").write_text(THREE_CODES)
    counted.clear()
    codes = [f.code for f in lint_paths([tmp_path], cache=tmp_path / DIR_NAME)]
    assert codes == ["TFG101", "TFG103", "TFG104", "TFG101"]
    assert counted == ["a.py"]


def test_config_change_invalidates(tmp_path: Path, counted: list[str]) -> None:
    write_tree(tmp_path, {"m.py": THREE_CODES})
    assert len(codes_in(invoke(["m.py"], tmp_path).stdout)) == 3
    counted.clear()
    result = invoke(["--select", "TFG103", "m.py"], tmp_path)
    assert counted == ["m.py"]
    assert [c[3] for c in codes_in(result.stdout)] == ["TFG103"]
    counted.clear()
    assert invoke(["--select", "TFG103", "m.py"], tmp_path).stdout == result.stdout
    assert counted == []


def test_tool_version_change_invalidates(
    tmp_path: Path, counted: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {"m.py": PRINT_STEP})
    first = invoke(["m.py"], tmp_path).stdout
    counted.clear()
    invoke(["m.py"], tmp_path)
    assert counted == []
    # The version the cache keys on, read when a run opens its cache.
    monkeypatch.setattr(tflint_graph.core.version, "__version__", "99.0.0")
    assert invoke(["m.py"], tmp_path).stdout == first
    assert counted == ["m.py"]
    # And the tool's own code: a checkout or an editable install changes it under one version.
    counted.clear()
    monkeypatch.setattr(tflint_graph.run.cache, "_CODE_STAMP", ["another checkout"])
    assert invoke(["m.py"], tmp_path).stdout == first
    assert counted == ["m.py"]
    # An analysis switch in the environment is part of the key too.
    counted.clear()
    monkeypatch.setenv("TFLINT_GRAPH_NO_PREFILTER", "1")
    assert invoke(["m.py"], tmp_path).stdout == first
    assert counted == ["m.py"]


def test_callee_change_reaches_an_unchanged_helper(tmp_path: Path) -> None:
    # train.step (a tf.function) makes helpers.scale traced: the print is reported there.
    write_tree(tmp_path, {"train.py": STEP, "helpers.py": HELPERS})
    cache = tmp_path / "cache"
    assert [(Path(f.path).name, f.code) for f in lint_paths([tmp_path], cache=cache)] == [
        ("helpers.py", "TFG101")
    ]
    # helpers.py is unchanged, but no longer traced once step() is a plain function.
    (tmp_path / "train.py").write_text(STEP.replace("@tf.function\n", ""))
    assert list(lint_paths([tmp_path], cache=cache)) == []
    (tmp_path / "train.py").write_text(STEP)  # and traced again
    assert [Path(f.path).name for f in lint_paths([tmp_path], cache=cache)] == ["helpers.py"]


def test_callee_change_reaches_an_unchanged_caller(tmp_path: Path) -> None:
    # loop.py and bench.py judge calls of model.train_step, a tf.function of model.py.
    project = tmp_path / "proj"
    shutil.copytree(NO_TF_CALLER, project)
    cache = tmp_path / "cache"

    def codes() -> list[tuple[str, str]]:
        return [(Path(f.path).name, f.code) for f in lint_paths([project], cache=cache)]

    traced = codes()
    assert ("loop.py", "TFG303") in traced and ("bench.py", "TFG403") in traced
    model = project / "pk" / "model.py"
    model.write_text(model.read_text().replace("@tf.function\n", ""))
    assert codes() == []
    model.write_text(model.read_text().replace("def train_step", "@tf.function\ndef train_step"))
    assert codes() == traced


def test_corrupt_entries_are_misses(tmp_path: Path) -> None:
    write_tree(tmp_path, {"train.py": STEP, "helpers.py": HELPERS, "b.py": THREE_CODES})
    cold = invoke(["--output-format", "json", "."], tmp_path).stdout
    entries = _cache_entries(tmp_path)
    damage = [
        b"",
        b'{"format": %d, "key": "' % CACHE_FORMAT,  # truncated
        b"\x80\x04\x95 pickled?",
        json.dumps(
            {"format": CACHE_FORMAT, "key": "other", "findings": [], "summary": None}
        ).encode(),
        json.dumps(
            {"format": CACHE_FORMAT, "key": entries[-1].stem, "findings": [{"c": "X"}]}
        ).encode(),
    ]
    for entry, data in zip(entries, damage * len(entries), strict=False):
        entry.write_bytes(data)
    assert invoke(["--output-format", "json", "."], tmp_path).stdout == cold
    # Wrong findings under the right key and format are believed only if they decode:
    # a finding that is not a Finding is not.
    key = entries[0].stem
    entries[0].write_text(
        json.dumps({"format": CACHE_FORMAT, "key": key, "findings": [{"t": [1]}], "summary": None})
    )
    assert invoke(["--output-format", "json", "."], tmp_path).stdout == cold


def test_unwritable_cache_directory_runs_without_cache(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": PRINT_STEP})
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    assert Cache.open(blocker / "cache", Config()) is None
    found = list(lint_paths([tmp_path / "m.py"], cache=blocker / "cache"))
    assert [f.code for f in found] == ["TFG101"]
    (tmp_path / DIR_NAME).write_text("a file where the cache should be")
    result = invoke(["m.py"], tmp_path)
    assert result.exit_code == 1 and result.stderr == ""


def test_cached_and_parallel_runs_agree(tmp_path: Path) -> None:
    files = {f"pkg/m{i}.py": PRINT_STEP if i % 3 else THREE_CODES for i in range(24)}
    write_tree(tmp_path, {**files, "train.py": STEP, "helpers.py": HELPERS, "pkg/__init__.py": ""})
    plain = [f.to_dict() for f in lint_paths([tmp_path])]
    for jobs in (1, 2):
        cache = tmp_path.parent / f"{tmp_path.name}-cache-{jobs}"
        cold = [f.to_dict() for f in lint_paths([tmp_path], jobs=jobs, cache=cache)]
        warm = [f.to_dict() for f in lint_paths([tmp_path], jobs=jobs, cache=cache)]
        assert cold == warm == plain


def test_a_file_outside_the_run_that_changes_invalidates_the_run(
    tmp_path: Path, counted: list[str]
) -> None:
    # Only loop.py is linted; its TFG303 depends on pk/model.py, read but not linted.
    project = tmp_path / "proj"
    shutil.copytree(NO_TF_CALLER, project)
    loop = project / "pk" / "loop.py"
    cache = tmp_path / "cache"

    def codes() -> list[str]:
        return [f.code for f in lint_paths([loop], cache=cache)]

    assert "TFG303" in codes()
    counted.clear()
    assert "TFG303" in codes()
    assert counted == []  # the whole run came from its record
    model = project / "pk" / "model.py"
    model.write_text(model.read_text().replace("@tf.function\n", ""))
    assert "TFG303" not in codes()
    assert "model.py" in counted


def test_a_module_created_where_an_import_looked_invalidates_the_run(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(NO_TF_CALLER, project)
    loop = project / "pk" / "loop.py"
    model = project / "pk" / "model.py"
    text = model.read_text()
    model.unlink()
    cache = tmp_path / "cache"
    assert "TFG303" not in [f.code for f in lint_paths([loop], cache=cache)]
    model.write_text(text)  # the import of pk.model now resolves
    assert "TFG303" in [f.code for f in lint_paths([loop], cache=cache)]


def _record(root: Path) -> Path:
    [found] = [p for p in _cache_entries(root) if "files" in json.loads(p.read_bytes())]
    return found


@pytest.fixture
def fresh_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Runs made afresh (the project's picture built again), not answered from a record."""
    made: list[int] = []
    real = tflint_graph.run.project.Project.run

    def spy(self: tflint_graph.run.project.Project) -> Any:
        made.append(len(self.files))
        return real(self)

    monkeypatch.setattr(tflint_graph.run.project.Project, "run", spy)
    return made


def test_a_damaged_or_missing_part_of_a_run_record_is_a_miss(
    tmp_path: Path, fresh_runs: list[int]
) -> None:
    write_tree(tmp_path, {"train.py": STEP, "helpers.py": HELPERS, "b.py": THREE_CODES})
    cold = invoke(["--output-format", "json", "."], tmp_path).stdout
    parts = [p for p in _cache_entries(tmp_path) if "part" in json.loads(p.read_bytes())]
    assert len(parts) == 3  # one per file of the run
    for damage in ("truncated", "missing", "not findings"):
        if damage == "truncated":
            parts[0].write_bytes(parts[0].read_bytes()[:-9])
        elif damage == "missing":
            parts[1].unlink()
        else:
            entry = json.loads(parts[2].read_bytes())
            entry["part"][0] = [{"t": [1]}]
            parts[2].write_text(json.dumps(entry))
        fresh_runs.clear()
        assert invoke(["--output-format", "json", "."], tmp_path).stdout == cold
        assert fresh_runs == [3]
        # The record was stored whole again: the next run is answered from it.
        fresh_runs.clear()
        assert invoke(["--output-format", "json", "."], tmp_path).stdout == cold
        assert fresh_runs == []


def test_a_record_that_names_a_file_elsewhere_as_a_part_never_touches_it(
    tmp_path: Path, fresh_runs: list[int]
) -> None:
    write_tree(tmp_path, {"train.py": STEP, "helpers.py": HELPERS})
    cold = invoke(["train.py", "helpers.py"], tmp_path).stdout
    victim = tmp_path / "victim.json"
    victim.write_text("not a part")
    record = _record(tmp_path)
    entry = json.loads(record.read_bytes())
    for fields in entry["files"].values():
        fields[5] = str(tmp_path / "victim")  # where the part of that key would be
    record.write_text(json.dumps(entry))
    assert project_view(str(tmp_path / "helpers.py"), Config()) is None
    fresh_runs.clear()
    assert invoke(["train.py", "helpers.py"], tmp_path).stdout == cold
    assert fresh_runs == [2]
    assert victim.read_text() == "not a part"


@pytest.mark.parametrize("recorded_format", [4, CACHE_FORMAT])
def test_a_run_record_in_an_earlier_layout_is_ignored(
    tmp_path: Path, fresh_runs: list[int], recorded_format: int
) -> None:
    # Format 4 kept every file's findings and analyses in the record itself.
    write_tree(tmp_path, {"train.py": STEP, "helpers.py": HELPERS})
    cold = invoke(["train.py", "helpers.py"], tmp_path).stdout
    record = _record(tmp_path)
    new = json.loads(record.read_bytes())
    old = {
        "format": recorded_format,
        "key": new["key"],
        "began": new["began"],
        "files": {name: fields[0] for name, fields in new["files"].items()},
        "stamps": {name: fields[1:4] for name, fields in new["files"].items()},
        "reals": {name: fields[4] for name, fields in new["files"].items()},
        "outside": {},
        "absent": [],
        "entries": {name: ["[]", "[]"] for name in new["files"]},
    }
    record.write_text(json.dumps(old))
    # Neither the plugin's view nor a run takes anything from it.
    assert project_view(str(tmp_path / "helpers.py"), Config()) is None
    fresh_runs.clear()
    assert invoke(["train.py", "helpers.py"], tmp_path).stdout == cold
    assert fresh_runs == [2]
    # It is written again in the current layout, which answers the next run.
    rewritten = json.loads(record.read_bytes())
    assert rewritten | {"began": new["began"]} == new
    fresh_runs.clear()
    assert invoke(["train.py", "helpers.py"], tmp_path).stdout == cold
    assert fresh_runs == []
