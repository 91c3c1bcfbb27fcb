"""The log backend (plugin/pkg/audit/log): one line per event, JSON (audit.k8s.io/v1, as the API encodes it)
or the legacy one-line text, written to a file (rotated as lumberjack rotates it) or to stdout.

Modes (--audit-log-mode): blocking writes each event before the request goes on and ignores write errors;
blocking-strict also writes at once but fails a request whose RequestReceived event could not be written;
batch queues events and writes them together once the event loop is free (upstream's buffered backend with
the log defaults, minus its separate goroutine: writes still run on the loop, only later and grouped)."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol

from ..apimachinery import deepjson
from ..apimachinery.gostrconv import quote as go_quote
from .rotate import RotatingFile

log = logging.getLogger("kube_apiserver.audit")

FORMAT_JSON = "json"
FORMAT_LEGACY = "legacy"
FORMATS = (FORMAT_LEGACY, FORMAT_JSON)
MODE_BATCH = "batch"
MODE_BLOCKING = "blocking"
MODE_BLOCKING_STRICT = "blocking-strict"
MODES = (MODE_BATCH, MODE_BLOCKING, MODE_BLOCKING_STRICT)


class Writer(Protocol):
    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class StreamWriter:
    """--audit-log-path=-: standard out, flushed per write so a reader sees whole lines at once."""

    def __init__(self, stream: BinaryIO | None = None):
        self.stream = stream or sys.stdout.buffer

    def write(self, data: bytes) -> None:
        self.stream.write(data)
        self.stream.flush()

    def close(self) -> None:
        self.stream.flush()


def json_line(ev: dict[str, Any]) -> bytes:
    return deepjson.dumps(ev) + b"\n"


def legacy_line(ev: dict[str, Any]) -> bytes:
    """audit.EventString: the one-line text of the legacy format."""
    user, imp, ref = ev.get("user") or {}, ev.get("impersonatedUser"), ev.get("objectRef") or {}
    username, groups = "<none>", "<none>"
    if user.get("username"):
        username = user["username"]
        groups = _quoted_list(user.get("groups")) if user.get("groups") else "<none>"
    as_user, as_groups = "<self>", "<lookup>"
    if imp is not None:
        as_user = imp.get("username", "")
        as_groups = _quoted_list(imp["groups"]) if imp.get("groups") is not None else "<lookup>"
    status = ev.get("responseStatus")
    response = str(status.get("code", 0)) if status is not None else "<deferred>"
    ip = (ev.get("sourceIPs") or ["<unknown>"])[0]
    fields = [("id", ev["auditID"]), ("stage", ev["stage"]), ("ip", ip), ("method", ev["verb"]),
              ("user", username), ("groups", groups), ("as", as_user), ("asgroups", as_groups),
              ("user-agent", ev.get("userAgent", "")), ("namespace", ref.get("namespace") or "<none>"),
              ("uri", ev["requestURI"])]
    text = " ".join(f"{name}={go_quote(value)}" for name, value in fields)
    return f'{_rfc3339_nano(ev["requestReceivedTimestamp"])} AUDIT: {text} response="{response}"\n'.encode()


def _quoted_list(values: list[str]) -> str:
    return ",".join(go_quote(v) for v in values)


def _rfc3339_nano(micro: str) -> str:
    """time.RFC3339Nano: trailing zeros of the fraction dropped (and the dot, if nothing is left)."""
    head, _, frac = micro.rstrip("Z").partition(".")
    frac = frac.rstrip("0")
    return f"{head}.{frac}Z" if frac else f"{head}Z"


class LogBackend:
    def __init__(self, out: Writer, fmt: str = FORMAT_JSON):
        self.out = out
        self.encode: Callable[[dict[str, Any]], bytes] = legacy_line if fmt == FORMAT_LEGACY else json_line

    def process_event(self, ev: dict[str, Any]) -> bool:
        try:
            self.out.write(self.encode(ev))
        except (OSError, ValueError) as err:  # ValueError: written after close
            log.error("Error in audit plugin 'log' affecting 1 audit events: %s\nImpacted events:\n%s",
                      err, legacy_line(ev).decode().rstrip())
            return False
        return True

    async def shutdown(self) -> None:
        self.out.close()

    def __str__(self) -> str:
        return "log"


class IgnoreErrors:
    """blocking: a failed write is logged and the request goes on."""

    def __init__(self, delegate: LogBackend):
        self.delegate = delegate

    def process_event(self, ev: dict[str, Any]) -> bool:
        self.delegate.process_event(ev)
        return True

    async def shutdown(self) -> None:
        await self.delegate.shutdown()

    def __str__(self) -> str:
        return f"ignoreErrors<{self.delegate}>"


class Buffered:
    """batch: events queue up (at most buffer_size; more are dropped, as upstream drops them) and are
    written max_batch_size at a time when the loop next runs callbacks."""

    def __init__(self, delegate: LogBackend, buffer_size: int = 10000, max_batch_size: int = 1):
        self.delegate = delegate
        self.buffer_size = buffer_size
        self.max_batch_size = max(1, max_batch_size)
        self.pending: list[dict[str, Any]] = []
        self.scheduled = False

    def process_event(self, ev: dict[str, Any]) -> bool:
        if len(self.pending) >= self.buffer_size:
            log.error("audit buffer queue blocked, dropping the event %s", ev.get("auditID"))
            return False
        self.pending.append(ev)
        if not self.scheduled:
            try:
                asyncio.get_running_loop().call_soon(self.flush)
                self.scheduled = True
            except RuntimeError:  # no loop (shutting down): write now
                self.flush()
        return True

    def flush(self) -> None:
        self.scheduled = False
        pending, self.pending = self.pending, []
        for start in range(0, len(pending), self.max_batch_size):
            for ev in pending[start:start + self.max_batch_size]:
                self.delegate.process_event(ev)

    async def shutdown(self) -> None:
        self.flush()
        await self.delegate.shutdown()

    def __str__(self) -> str:
        return f"buffered<{self.delegate}>"


def new_log_backend(path: str, fmt: str, mode: str, max_size_mb: int = 100, max_backups: int = 100,
                    max_age_days: int = 366, compress: bool = False, buffer_size: int = 10000,
                    max_batch_size: int = 1) -> Any:
    """getWriter + newBackend + wrapBackend: the writer for the path, the format, then the mode."""
    out: Writer = StreamWriter() if path == "-" else RotatingFile(path, max_size_mb, max_backups, max_age_days,
                                                                   compress)
    backend = LogBackend(out, fmt)
    if mode == MODE_BLOCKING_STRICT:
        return backend
    if mode == MODE_BLOCKING:
        return IgnoreErrors(backend)
    return Buffered(backend, buffer_size, max_batch_size)

