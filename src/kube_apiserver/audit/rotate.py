"""The audit log file, rotated as kube-apiserver's (gopkg.in/natefinch/lumberjack.v2) rotates it: once a
write would take it past --audit-log-maxsize megabytes it is renamed to <name>-<UTC time><ext> and a new one
started; then backups beyond --audit-log-maxbackup, or older than --audit-log-maxage days, are removed
(0: no limit), and with --audit-log-compress the rest are gzipped. maxsize 0: never rotated."""

from __future__ import annotations

import gzip
import os
import shutil
import time
from datetime import UTC, datetime

MEGABYTE = 1024 * 1024
BACKUP_TIME_FORMAT = "%Y-%m-%dT%H-%M-%S"


class RotatingFile:
    def __init__(self, path: str, max_size_mb: int = 100, max_backups: int = 100, max_age_days: int = 0,
                 compress: bool = False):
        self.path = path
        self.max_size = max_size_mb * MEGABYTE
        self.max_backups = max_backups
        self.max_age_days = max_age_days
        self.compress = compress
        ensure_log_file(path)
        self.file = open(path, "ab")  # noqa: SIM115 - kept open for the server's life
        self.size = self.file.tell()

    def write(self, data: bytes) -> None:
        if self.max_size and self.size + len(data) > self.max_size and self.size:
            self.rotate()
        self.file.write(data)
        self.file.flush()  # one line at a time reaches the file, as with Go's unbuffered writes
        self.size += len(data)

    def rotate(self) -> None:
        self.file.close()
        os.rename(self.path, backup_name(self.path, time.time()))
        self.file = open(self.path, "ab")  # noqa: SIM115
        os.chmod(self.path, 0o600)
        self.size = 0
        self.mill()

    def backups(self) -> list[str]:
        """The rotated files of this log, newest first (their names sort by time)."""
        folder = os.path.dirname(self.path) or "."
        prefix, ext = _prefix_ext(self.path)
        names = [n for n in os.listdir(folder) if n.startswith(prefix) and _backup_time(self.path, n) is not None]
        return [os.path.join(folder, n) for n in sorted(names, reverse=True)]

    def mill(self) -> None:
        files = self.backups()
        if self.max_backups > 0:
            for stale in files[self.max_backups:]:
                _remove(stale)
            files = files[:self.max_backups]
        if self.max_age_days > 0:
            cutoff = time.time() - self.max_age_days * 86400
            for name in [f for f in files if (_backup_time(self.path, f) or cutoff) < cutoff]:
                _remove(name)
                files.remove(name)
        if self.compress:
            for name in [f for f in files if not f.endswith(".gz")]:
                with open(name, "rb") as src, gzip.open(name + ".gz", "wb") as dst:
                    shutil.copyfileobj(src, dst)
                _remove(name)

    def close(self) -> None:
        self.file.close()


def ensure_log_file(path: str) -> None:
    """ensureLogFile: the folder (0700) and the file (0600) exist before the first event."""
    os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    os.close(os.open(path, os.O_CREAT | os.O_APPEND | os.O_RDWR, 0o600))


def _prefix_ext(path: str) -> tuple[str, str]:
    base, ext = os.path.splitext(os.path.basename(path))
    return base + "-", ext


def backup_name(path: str, now: float) -> str:
    stamp = datetime.fromtimestamp(now, UTC)
    prefix, ext = _prefix_ext(path)
    when = stamp.strftime(BACKUP_TIME_FORMAT) + f".{stamp.microsecond // 1000:03d}"
    return os.path.join(os.path.dirname(path), f"{prefix}{when}{ext}")


def _backup_time(path: str, backup: str) -> float | None:
    """When a backup was rotated, from its name; None for a file that is not one of this log's backups."""
    prefix, ext = _prefix_ext(path)
    name = os.path.basename(backup).removesuffix(".gz")
    if not (name.startswith(prefix) and name.endswith(ext)):
        return None
    stamp = name[len(prefix):len(name) - len(ext)]
    try:
        return datetime.strptime(stamp, BACKUP_TIME_FORMAT + ".%f").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def _remove(name: str) -> None:
    try:
        os.remove(name)
    except FileNotFoundError:
        pass
