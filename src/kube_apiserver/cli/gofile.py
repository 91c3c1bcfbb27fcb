"""File helpers: reads failing with Go's os error wording ("open /x: no such file or directory") and
atomic writes with explicit permissions."""

from __future__ import annotations

import os
import tempfile

from kube_apiserver.apimachinery.goos import os_error_text


def read_bytes(path: str) -> bytes:
    """Reads a whole file; raises OSError whose str() is Go's os.ReadFile error text."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"read {path}: is a directory")
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        raise OSError(os_error_text("open", path, err)) from None


def read_error(path: str) -> str | None:
    """None when `path` is a readable file, else Go's error text."""
    try:
        read_bytes(path)
    except OSError as err:
        return str(err)
    return None


def write_file_atomic(path: str, data: bytes, mode: int) -> None:
    """Writes `data` to `path` with permissions `mode` via a temporary file and rename."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-" + os.path.basename(path))
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
