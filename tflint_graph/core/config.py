"""``[tool.tflint-graph]`` configuration: discovery, validation and rule selection."""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from tflint_graph.core.codes import closest_code, is_known_selector

if TYPE_CHECKING:
    from tflint_graph.core.examples import Example

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    ".bzr",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".eggs",
    "*.egg-info",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tflint-graph-cache",
    ".ipynb_checkpoints",
    "build",
    "dist",
    "node_modules",
    "site-packages",
)

_CODE_PREFIX = re.compile(r"^(ALL|TFG\d{0,3})$")

TABLE = "tflint-graph"


class ConfigError(Exception):
    """A configuration problem; the message names the offending key.  ``hint`` (a
    suggestion such as "; did you mean `TFG101`?") closes the message, after the file's
    name when one is added."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message + hint)
        self.message = message
        self.hint = hint

    def located(self, where: str) -> ConfigError:
        """The same error, naming where it was found (" in path/pyproject.toml")."""
        return ConfigError(self.message + where, self.hint)


@dataclass(frozen=True)
class DynamicConfig:
    """``[tool.tflint-graph.dynamic]``: inputs for ``--dynamic`` (grammar in
    :mod:`tflint_graph.core.examples`)."""

    # "pkg.mod:fn" -> parsed Example.
    examples: Mapping[str, Example] = field(default_factory=dict)
    # Size given to unknown (None) dimensions.
    unknown_dim: int = 2


@dataclass(frozen=True)
class Config:
    """Effective settings of a run (defaults, then pyproject.toml, then the command line)."""

    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    tiny_helper_max_ops: int = 2
    unroll_max: int = 100
    serving_name_patterns: tuple[str, ...] = ("serve", "serving*", "serving_default")
    extra_function_decorators: tuple[str, ...] = ()
    # Which Keras `keras`/`tf.keras` bases are (SPEC §1): "auto" (the project's declared
    # dependencies decide, ``source.dependencies``), "2" or "3".  A run resolves "auto"
    # before analysing, and keeps why in ``keras_reason``.
    keras_version: str = "auto"
    keras_reason: str = ""
    # Sub-projects that run another Keras than ``keras_version`` (their own declarations,
    # ``source.dependencies.with_folder_versions``): (absolute folder, "2"/"3", why),
    # the deepest folder first.
    keras_folders: tuple[tuple[str, str, str], ...] = ()
    dynamic: DynamicConfig = field(default_factory=DynamicConfig)
    # Directory that relative patterns (exclude, per-file-ignores) are anchored to.
    root: Path | None = None

    def is_enabled(self, code: str, path: str | None = None) -> bool:
        """Whether ``code`` is reported, ruff-style: the longest matching prefix wins."""
        selected = _best_match(code, (*self.select, *self.extend_select))
        ignored = _best_match(code, self.ignore)
        # As in flake8 and ruff, an ignore as specific as the select wins.
        if selected < 0 or ignored >= selected:
            return False
        if path is not None:
            for pattern, codes in self.per_file_ignores.items():
                if _path_matches(path, pattern, self.root) and _best_match(code, codes) >= 0:
                    return False
        return True

    @classmethod
    def discover(cls, path: str | os.PathLike[str] = ".") -> Config:
        """The configuration the command line uses for ``path`` (a file or directory, which
        need not exist yet): ``[tool.tflint-graph]`` of the nearest pyproject.toml above it
        that has the table, else the defaults.  Raises :class:`ConfigError` for a mistake in
        that file, as the command line stops with exit 2."""
        found = find_config([Path(path)])
        return load_file(found) if found is not None else cls()

    def keras_of(self, path: str) -> str:
        """The Keras (``"2"``/``"3"``) of the module at ``path``: its sub-project's, else
        the run's."""
        if self.keras_folders:
            where = os.path.abspath(path)
            for folder, version, _ in self.keras_folders:
                if where.startswith(folder + os.sep):
                    return version
        return self.keras_version

    def is_excluded(self, path: Path) -> bool:
        """Whether a user pattern (``exclude``/``extend-exclude``) matches ``path``."""
        return any(
            _path_matches(str(path), p, self.root) for p in (*self.exclude, *self.extend_exclude)
        )


def _best_match(code: str, prefixes: Iterable[str]) -> int:
    """Length of the longest prefix in ``prefixes`` that selects ``code``; -1 if none."""
    best = -1
    for prefix in prefixes:
        if prefix == "ALL":
            best = max(best, 0)
        elif code.startswith(prefix):
            best = max(best, len(prefix))
    return best


def _relative_forms(path: str, root: Path | None) -> tuple[str, ...]:
    """``path`` relative to the config file's directory and to the working directory, where
    it lies below them (symlinks resolved and not)."""
    return _relative_forms_cached(path, root, os.getcwd())


@functools.lru_cache(maxsize=8192)
def _relative_forms_cached(path: str, root: Path | None, cwd: str) -> tuple[str, ...]:
    bases = [str(root), cwd] if root is not None else [cwd]
    out: list[str] = []
    for base in bases:
        for here, there in (
            (os.path.abspath(path), os.path.abspath(base)),
            (os.path.realpath(path), os.path.realpath(base)),
        ):
            with contextlib.suppress(ValueError, OSError):
                rel = Path(here).relative_to(there).as_posix()
                if rel not in out:
                    out.append(rel)
    return tuple(out)


def _path_matches(path: str, pattern: str, root: Path | None) -> bool:
    """Glob match against the path relative to ``root`` (the config file's directory) or to
    the working directory, or, for a bare name, against any of its parts below them
    (``generated`` excludes ``src/generated/x.py``, but a project that lives under
    ``/home/me/generated/`` is not excluded as a whole).  A path outside both is matched as
    given."""
    forms = _relative_forms(path, root)
    if forms:
        relative = [r for r in forms if r != "."]
        candidates = {*relative, *(PurePath(r).name for r in relative)}
        parts = {part for rel in relative for part in PurePath(rel).parts}
    else:
        pure = PurePath(path)
        candidates = {path, pure.as_posix(), pure.name}
        parts = set(pure.parts)
    pattern = pattern.rstrip("/") or pattern
    if any(fnmatch.fnmatch(c, pattern) for c in candidates):
        return True
    if "/" not in pattern:
        # A bare directory or file name ("generated", "*_pb2.py") matches at any depth.
        return any(fnmatch.fnmatch(part, pattern) for part in parts)
    return any(fnmatch.fnmatch(c, pattern + "/*") for c in candidates)


def _codes(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f'`{key}` must be a list of rule codes such as ["TFG101"]')
    for code in value:
        check_selector(key, code.strip())
    return tuple(v.strip() for v in value)


def check_selector(where: str, selector: str) -> None:
    """Raise a ConfigError unless ``selector`` is ``ALL``, a code or a prefix of one."""
    if _CODE_PREFIX.match(selector) and is_known_selector(selector):
        return
    hint = closest_code(selector)
    suggestion = f"; did you mean `{hint}`?" if hint else " (expected e.g. TFG101 or TFG1)"
    shown = where if where.startswith("--") else f"`{where}`"
    raise ConfigError(f"unknown rule selector `{selector}` in {shown}", suggestion)


def validate_codes(key: str, values: Sequence[str]) -> tuple[str, ...]:
    """Check codes given on the command line the way config values are checked."""
    return _codes(key, list(values))


def _strings(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"`{key}` must be a list of strings")
    return tuple(value)


def _positive_int(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"`{key}` must be a non-negative integer, got {value!r}")
    return value


def _per_file_ignores(key: str, value: Any) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise ConfigError(f"`{key}` must be a table of glob = [codes]")
    return {str(k): _codes(f"{key}.{k}", v) for k, v in value.items()}


KERAS_VERSIONS = ("auto", "2", "3")


def _keras_version(key: str, value: Any) -> str:
    text = str(value) if isinstance(value, int | str) and not isinstance(value, bool) else ""
    if text not in KERAS_VERSIONS:
        raise ConfigError(f'`{key}` must be "auto", "2" or "3", got {value!r}')
    return text


def _dynamic(key: str, value: Any) -> DynamicConfig:
    """``[tool.tflint-graph.dynamic]``: ``examples`` (table of "pkg.mod:fn" = "spec, ...")
    and ``unknown-dim``; the specs are parsed here, so a bad one fails at load time."""
    # Imported here: the dynamic package must not be loaded by (or loop back into) config.
    from tflint_graph.core.examples import MAX_UNKNOWN_DIM, parse_example

    if not isinstance(value, dict):
        raise ConfigError(f"`{key}` must be a table")
    known = ("examples", "unknown-dim")
    for sub in value:
        if sub not in known:
            raise ConfigError(
                f"unknown key `{key}.{sub}` in [tool.tflint-graph.{key}]; known: {', '.join(known)}"
            )
    unknown_dim = value.get("unknown-dim", 2)
    if (
        isinstance(unknown_dim, bool)
        or not isinstance(unknown_dim, int)
        or not 1 <= unknown_dim <= MAX_UNKNOWN_DIM
    ):
        raise ConfigError(
            f"`{key}.unknown-dim` must be an integer from 1 to {MAX_UNKNOWN_DIM}, "
            f"got {unknown_dim!r}"
        )
    table = value.get("examples", {})
    if not isinstance(table, dict):
        raise ConfigError(f'`{key}.examples` must be a table of "pkg.mod:fn" = "float32[2,3], ..."')
    examples: dict[str, Any] = {}
    for target, spec in table.items():
        if not isinstance(spec, str):
            raise ConfigError(
                f"`{key}.examples`: example {target!r}: the value must be a string "
                'such as "float32[2,3], int32[]"'
            )
        try:
            example = parse_example(target, spec)
        except ValueError as exc:
            raise ConfigError(f"`{key}.examples`: {exc}") from None
        if example.target in examples:
            raise ConfigError(f"`{key}.examples`: {example.target!r} is given twice")
        examples[example.target] = example
    return DynamicConfig(examples=examples, unknown_dim=unknown_dim)


_KEYS = {
    "select": ("select", _codes),
    "ignore": ("ignore", _codes),
    "extend-select": ("extend_select", _codes),
    "per-file-ignores": ("per_file_ignores", _per_file_ignores),
    "exclude": ("exclude", _strings),
    "extend-exclude": ("extend_exclude", _strings),
    "tiny-helper-max-ops": ("tiny_helper_max_ops", _positive_int),
    "unroll-max": ("unroll_max", _positive_int),
    "serving-name-patterns": ("serving_name_patterns", _strings),
    "extra-function-decorators": ("extra_function_decorators", _strings),
    "keras-version": ("keras_version", _keras_version),
    "dynamic": ("dynamic", _dynamic),
}


def parse_table(table: Mapping[str, Any], root: Path | None = None, source: str = "") -> Config:
    """Validate a ``[tool.tflint-graph]`` table and turn it into a Config."""
    where = f" in {source}" if source else ""
    values: dict[str, Any] = {}
    for key, raw in table.items():
        if key not in _KEYS:
            known = ", ".join(sorted(_KEYS))
            raise ConfigError(f"unknown key `{key}` in [tool.tflint-graph]{where}; known: {known}")
        attr, convert = _KEYS[key]
        try:
            values[attr] = convert(key, raw)
        except ConfigError as exc:
            raise exc.located(where) from None
    return Config(root=root, **values)


def _normalised(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "").replace(".", "")


def near_miss_tables(tool: Mapping[str, Any]) -> list[str]:
    """Names under ``[tool]`` that look like a misspelt ``tflint-graph`` (``tflint_graph``,
    ``TFLintGraph``, ``tflint-grpah``, ``tflint-graph-x``); ``tflint-graph`` itself is not
    one."""
    target = _normalised(TABLE)
    out = []
    for name in tool:
        if name == TABLE:
            continue
        import difflib  # only when [tool] has other tables: not at start-up

        norm = _normalised(name)
        if norm == target or difflib.SequenceMatcher(None, norm, target).ratio() >= 0.8:
            out.append(name)
    return out


def load_file(path: Path, *, require_table: bool = False) -> Config:
    """Load ``[tool.tflint-graph]`` from a pyproject.toml (an empty table if absent, unless
    ``require_table``: then that is an error, as for ``--config FILE``).

    A table under ``[tool]`` whose name is a near miss of ``tflint-graph`` is an error: its
    settings would otherwise be ignored without a word.
    """
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        tool = {}
    for name in near_miss_tables(tool):
        raise ConfigError(
            f"unknown table `[tool.{name}]` in {path}; did you mean `[tool.{TABLE}]`?"
        )
    if require_table and TABLE not in tool:
        raise ConfigError(f"{path} has no [tool.{TABLE}] table")
    table = tool.get(TABLE, {})
    if not isinstance(table, dict):
        raise ConfigError(f"[tool.tflint-graph] in {path} must be a table")
    return parse_table(table, root=path.parent, source=str(path))


def find_config(paths: Sequence[Path]) -> Path | None:
    """The nearest pyproject.toml with a ``[tool.tflint-graph]`` table, walking up from the
    first path (or the working directory; a path that does not exist, from the nearest
    folder above it that does).

    A pyproject.toml that mentions tflint but is not valid TOML is returned too, and
    so is one with a near miss of the table's name (``[tool.tflint_graph]``), so that
    loading it reports the error instead of silently using another file or none.
    """
    start = Path(paths[0]) if paths else Path.cwd()
    try:
        start = Path(os.path.realpath(start))  # never raises on a symlink loop
        # A path not (yet) on disk (an editor's unsaved buffer) is governed from the
        # nearest folder above it that exists.
        while not start.is_dir() and start != start.parent:
            start = start.parent
    except (OSError, ValueError):
        start = Path.cwd().resolve()
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        try:
            if not candidate.is_file():
                continue
            data = candidate.read_bytes()
        except OSError:
            continue
        lowered = data.lower()
        if b"tflint" not in lowered and b"graph" not in lowered:
            continue
        try:
            doc = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            if b"tflint" in lowered:
                return candidate
            continue
        tool = doc.get("tool")
        if isinstance(tool, dict) and (TABLE in tool or near_miss_tables(tool)):
            return candidate
    return None


def _covers(prefix: str, code: str) -> bool:
    """``prefix`` selects everything ``code`` selects (``TFG1`` covers ``TFG101``)."""
    return prefix == "ALL" or code.startswith(prefix)


def with_rule_selection(
    config: Config,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    extend_select: Sequence[str] | None = None,
) -> Config:
    """Apply command-line ``--select``/``--ignore``/``--extend-select`` on top of the
    configuration the way ruff does.

    ``--select`` replaces the configured selection entirely (configured ``select``,
    ``extend-select`` and ``ignore`` no longer apply).  Otherwise the command-line
    ``--extend-select`` and ``--ignore`` take precedence over the configuration: a configured
    ``select``/``extend-select`` entry that a command-line ``--ignore`` covers is dropped, as
    is a configured ``ignore`` entry that a command-line ``--extend-select`` covers.  Within
    the command line the more specific code wins, and ``--ignore`` wins a tie.
    """
    cli_ignore = tuple(ignore or ())
    cli_extend = tuple(extend_select or ())
    if select is not None:
        return replace(config, select=tuple(select), extend_select=cli_extend, ignore=cli_ignore)
    if not cli_ignore and not cli_extend:
        return config
    kept_select = tuple(s for s in config.select if not any(_covers(i, s) for i in cli_ignore))
    kept_extend = tuple(
        s for s in config.extend_select if not any(_covers(i, s) for i in cli_ignore)
    )
    kept_ignore = tuple(g for g in config.ignore if not any(_covers(e, g) for e in cli_extend))
    return replace(
        config,
        select=kept_select,
        extend_select=(*kept_extend, *cli_extend),
        ignore=(*kept_ignore, *cli_ignore),
    )


def with_overrides(config: Config, **overrides: Any) -> Config:
    """Apply command-line values; ``None`` means "not given"."""
    given = {k: v for k, v in overrides.items() if v is not None}
    return replace(config, **given)
