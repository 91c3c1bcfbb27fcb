"""Whether a configuration file changed (its inode, size and modification time), looked at no more often
than an interval: the files kube-apiserver reads again on change (CA bundles, authorization and
authentication configurations) are checked by the requests that use them, with nothing in the background."""

from __future__ import annotations

import os
import time

CHECK_SECONDS = 1.0


class FileWatch:
    def __init__(self, path: str, interval: float = CHECK_SECONDS):
        self.path = path
        self.interval = interval
        self._stamp = stamp(path)
        self._next_look = time.monotonic() + interval

    def changed(self) -> bool:
        """True once after each change seen (a file that went missing counts as one)."""
        now = time.monotonic()
        if now < self._next_look:
            return False
        self._next_look = now + self.interval
        current = stamp(self.path)
        if current == self._stamp:
            return False
        self._stamp = current
        return True


def stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns
