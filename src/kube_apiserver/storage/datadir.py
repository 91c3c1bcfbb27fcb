"""The data directory an embedded store (SQLite, memory) runs in: made if missing, and locked for the life
of the store."""

from __future__ import annotations

import fcntl
import os

from ..apimachinery.goos import os_error_text

LOCK_FILE = "lock"


class StorageOpenError(OSError):
    """The data directory or its database cannot be used; the message is one line naming the path."""


def path_error(op: str, path: str, err: OSError) -> StorageOpenError:
    return StorageOpenError(os_error_text(op, path, err))


def claim(data_dir: str) -> int:
    """Makes the directory if it is missing and locks it (lock_data_dir); returns the lock's descriptor."""
    try:
        os.makedirs(data_dir, mode=0o700, exist_ok=True)
    except OSError as err:
        raise path_error("mkdir", data_dir, err) from None
    return lock_data_dir(data_dir)


def lock_data_dir(data_dir: str) -> int:
    """An exclusive lock on <data-dir>/lock for the life of the store (released when its file is closed,
    or when the process ends): a second server on the same directory would corrupt what the first
    serves from memory. Returns the lock file's descriptor."""
    path = os.path.join(data_dir, LOCK_FILE)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as err:
        raise path_error("open", path, err) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StorageOpenError(f"data directory {data_dir} is in use by another kube-apiserver "
                               f"(it holds {path})") from None
    return fd
