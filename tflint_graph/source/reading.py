"""Bytes to source text: reading files without blocking, decoding as Python does.

Whatever cannot be read or decoded becomes a TFG002 finding, never an exception.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import tokenize
from pathlib import Path

from tflint_graph.core.finding import Finding, tool_finding

# Jupyter notebooks are told by their name; here, not in ``source.notebook``, so that a run
# that reads no notebook never imports their reader.
NOTEBOOK_SUFFIX = ".ipynb"


def is_notebook(path: str) -> bool:
    return path.lower().endswith(NOTEBOOK_SUFFIX)


def read_regular(path: Path, size: int = -1) -> tuple[bytes, os.stat_result] | None:
    """The bytes (the first ``size`` if given) and ``stat`` of ``path`` if it is a regular
    file, else None.  Never blocks: opening a FIFO would (the analysis reports such files)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None
            return handle.read(size), info
    except (OSError, ValueError):
        return None


def read_source(path: Path, shown: str) -> str | Finding:
    """The source text of the file ``path`` (reported as ``shown``), or the TFG002 finding
    that says why it is not Python source: not a regular file, unreadable, undecodable."""
    data = read_regular_file(path, shown)
    return data if isinstance(data, Finding) else decode(data, shown)


def read_regular_file(path: Path, shown: str) -> bytes | Finding:
    """The bytes of the file ``path``, or the TFG002 finding that says why there are none:
    not a regular file, unreadable."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            what = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            return tool_finding(shown, "TFG002", f"{what}; not linted")
        return Path(path).read_bytes()
    except OSError as exc:
        return tool_finding(shown, "TFG002", f"cannot read file: {_os_reason(Path(path), exc)}")


def decode(data: bytes, path: str) -> str | Finding:
    """Source text, or a TFG002 finding explaining why the bytes are not Python source.

    Honours a PEP 263 coding cookie and a UTF-8 BOM (which is stripped); undecodable bytes
    are reported at the line that holds them.
    """
    if b"\x00" in data:
        return tool_finding(path, "TFG002", "binary file (contains NUL bytes); not linted")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as utf8_error:
            return _undecodable(data, path, "utf-8", utf8_error)
        return tool_finding(path, "TFG002", f"cannot determine encoding: {exc.msg}; not linted")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        return _undecodable(data, path, encoding, exc)
    except LookupError as exc:
        return tool_finding(path, "TFG002", f"unknown encoding: {exc}; not linted")
    return text.removeprefix("\ufeff")


def _undecodable(data: bytes, path: str, encoding: str, exc: UnicodeDecodeError) -> Finding:
    line = data.count(b"\n", 0, exc.start) + 1
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    byte = data[exc.start : exc.start + 1].hex()
    name = "UTF-8" if encoding.lower().replace("_", "-") in ("utf-8", "utf-8-sig") else encoding
    return tool_finding(
        path,
        "TFG002",
        f"not valid {name} text (byte 0x{byte}: {exc.reason}); not linted",
        line,
        column,
    )


def _os_reason(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symbolic link loop"
    if exc.errno == errno.ENOENT and path.is_symlink():
        return "dangling symbolic link (its target does not exist)"
    if exc.errno == errno.ENOENT:
        return "file vanished during the run"
    return exc.strerror or str(exc)
