"""A storage write that fails on purpose (fault injection, --enable-testing-endpoints): FaultingKV wraps a
KV and fails the commit of a request marked with `failing_writes`, after admission and validation have run,
as an etcd that times out would. Nothing is written. Installed only when testing endpoints are enabled."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from typing import Any

from ..apimachinery import errors
from .kv import KV, TxnResult

# etcd's answer to a write it could not commit in time (rpctypes.ErrTimeout).
ETCD_TIMEOUT_MESSAGE = "etcdserver: request timed out"


class WriteFault:
    """One request's pending failure: the first write it commits fails, later ones (none, usually) pass."""

    def __init__(self, message: str = ETCD_TIMEOUT_MESSAGE, on_fail: Callable[[str], None] | None = None):
        self.message = message
        self.on_fail = on_fail  # told the key whose write failed (for the fault's log line)
        self.failed = False

    def fail(self, key: str) -> None:
        self.failed = True
        if self.on_fail is not None:
            self.on_fail(key)
        # Not a metav1.Status from the storage: Kubernetes answers such an error with a 500 whose reason is
        # unknown and whose message is the error's text (ErrorToAPIStatus).
        raise errors.StatusError(500, "", self.message)


# The request being served (its task) and the fault its writes meet; unset for every other request.
_pending: ContextVar[WriteFault | None] = ContextVar("storage_write_fault", default=None)


@contextlib.contextmanager
def failing_writes(fault: WriteFault) -> Iterator[WriteFault]:
    token = _pending.set(fault)
    try:
        yield fault
    finally:
        _pending.reset(token)


def _check(key: str) -> None:
    fault = _pending.get()
    if fault is not None and not fault.failed:
        fault.fail(key)


class FaultingKV:
    """A KV whose writes fail for a request under `failing_writes`; everything else goes to the inner KV."""

    def __init__(self, inner: KV):
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def create(self, key: str, value: bytes, ttl: float = 0) -> TxnResult:
        _check(key)
        return await self.inner.create(key, value, ttl)

    async def update(self, key: str, value: bytes, expected_mod_revision: int, ttl: float = 0) -> TxnResult:
        _check(key)
        return await self.inner.update(key, value, expected_mod_revision, ttl)

    async def delete(self, key: str, expected_mod_revision: int) -> TxnResult:
        _check(key)
        return await self.inner.delete(key, expected_mod_revision)

    def watch(self, start: str, end: str, start_revision: int) -> AsyncIterator[Any]:
        return self.inner.watch(start, end, start_revision)


def install_write_faults(stores: list[Any]) -> None:
    """Wraps each ObjectStore's KV once (the stores are shared by every registry and watch cache)."""
    for store in stores:
        if not isinstance(store.kv, FaultingKV):
            store.kv = FaultingKV(store.kv)
