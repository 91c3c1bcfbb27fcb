"""The data directory shared by replicas. On etcd it holds only credentials (the generated CA and serving
certificate, the service account signing key, the admin token), so replicas on one machine or on a shared
volume may use one directory: the first to start generates them while the others wait on a lock, and
then all read the same ones (a token one replica issues is accepted by every other)."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

CREDENTIALS_LOCK = "credentials.lock"


@contextlib.contextmanager
def credentials_lock(data_dir: str) -> Iterator[None]:
    """Held while credentials are read or generated; without a writable directory there is nothing to
    share, and the generation itself reports why."""
    try:
        os.makedirs(data_dir, mode=0o700, exist_ok=True)
        fd = os.open(os.path.join(data_dir, CREDENTIALS_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
