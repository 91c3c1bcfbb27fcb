"""The key-value backend interface, shaped like etcd v3: one global revision, compare-and-swap
writes on a key's mod revision, ranges at a past revision, and a watch from any revision still
in history. Both backends (sqlite, etcd3) implement it; `ObjectStore` builds Kubernetes'
storage.Interface on top of it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol


@dataclass(slots=True, frozen=True)
class KeyValue:
    key: str
    value: bytes
    create_revision: int
    mod_revision: int


@dataclass(slots=True, frozen=True)
class KVEvent:
    """A change at `revision`. For a delete, `value` is empty and `prev_value` the last state."""

    type: str  # "PUT" or "DELETE"
    key: str
    value: bytes
    revision: int
    create_revision: int
    prev_value: bytes | None


PUT = "PUT"
DELETE = "DELETE"


@dataclass(slots=True, frozen=True)
class KVBatch:
    """What a watch yields: the matching events of one commit, in order, and the revision the stream
    is complete up to. A batch without events is a progress notification (etcd's ProgressNotify)."""

    events: list[KVEvent]
    revision: int


@dataclass(slots=True)
class RangeResult:
    kvs: list[KeyValue]
    revision: int  # the store's revision the range was read at
    more: bool


@dataclass(slots=True)
class TxnResult:
    """The result of a compare-and-swap: on failure `current` is what the key holds now."""

    succeeded: bool
    revision: int
    current: KeyValue | None


@dataclass(slots=True, frozen=True)
class Write:
    """One compare-and-swap write of a `write_many` (the optional batch form of create, update and delete):
    `kind` is CREATE, UPDATE or DELETE_KEY; expected_mod_revision as update's and delete's."""

    kind: str
    key: str
    value: bytes = b""
    expected_mod_revision: int = 0
    ttl: float = 0.0


CREATE, UPDATE, DELETE_KEY = "create", "update", "delete"


class StorageUnavailableError(ConnectionError):
    """The store cannot be reached (the storage process is gone, no etcd member answers): what fails with it is
    a fact of operation, logged in one line, not a bug's traceback."""


class CompactedError(Exception):
    def __init__(self, requested: int, compacted: int):
        super().__init__(f"required revision {requested} has been compacted (compacted at {compacted})")
        self.requested = requested
        self.compacted = compacted


class FutureRevisionError(Exception):
    def __init__(self, requested: int, current: int):
        super().__init__(f"required revision {requested} is a future revision (current {current})")
        self.requested = requested
        self.current = current


class KV(Protocol):
    async def get(self, key: str) -> KeyValue | None: ...

    async def range(self, start: str, end: str, revision: int = 0, limit: int = 0) -> RangeResult:
        """Keys in [start, end) as of `revision` (0: the latest), in key order."""
        ...

    async def count(self, start: str, end: str, revision: int = 0) -> int:
        """The keys in [start, end) at `revision` (0: now)."""
        ...

    async def create(self, key: str, value: bytes, ttl: float = 0) -> TxnResult:
        """ttl > 0: the key is under a lease and deleted when it expires (every write renews it)."""
        ...

    async def update(self, key: str, value: bytes, expected_mod_revision: int, ttl: float = 0) -> TxnResult: ...

    async def delete(self, key: str, expected_mod_revision: int) -> TxnResult: ...

    def watch(self, start: str, end: str, start_revision: int) -> AsyncIterator[KVBatch]:
        """Every event with revision >= start_revision on keys in [start, end), in order.
        Raises CompactedError when start_revision is older than the compacted history."""
        ...

    def request_progress(self) -> None:
        """Every open watch soon yields a progress notification with the current revision."""
        ...

    @property
    def progress_requests_supported(self) -> bool:
        """Whether the notification request_progress brings comes after every event up to its revision, so a
        watch cache may trust it to serve consistent reads (etcd before 3.4.31 / 3.5.13: not always)."""
        ...

    async def current_revision(self) -> int: ...

    async def compacted_revision(self) -> int: ...

    async def compact(self, revision: int) -> None: ...

    async def close(self) -> None: ...


def prefix_end(prefix: str) -> str:
    """The first key after every key starting with `prefix` (etcd's GetPrefixRangeEnd)."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)
