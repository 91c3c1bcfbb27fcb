"""Kubernetes' storage.Interface: objects (plain dicts) under keys, with resourceVersions.

Errors are storage errors; the registry turns them into API Status errors with the resource's name."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..apimachinery import errors

Object = dict[str, Any]

ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"
# The annotation of the bookmark that ends a watch-list's initial events (sendInitialEvents=true).
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class StorageError(Exception):
    pass


class KeyNotFoundError(StorageError):
    def __init__(self, key: str):
        super().__init__(f"key not found: {key}")
        self.key = key


class KeyExistsError(StorageError):
    def __init__(self, key: str):
        super().__init__(f"key exists: {key}")
        self.key = key


class ConflictError(StorageError):
    """A precondition (uid or resourceVersion) does not hold for the stored object."""

    def __init__(self, key: str, detail: str):
        super().__init__(detail)
        self.key = key
        self.detail = detail


class ExpiredError(StorageError):
    """The requested resourceVersion is older than the compacted history (HTTP 410)."""

    def __init__(self, message: str, continue_token: str = ""):
        super().__init__(message)
        self.continue_token = continue_token


class TooLargeResourceVersionError(StorageError):
    def __init__(self, requested: int, current: int):
        super().__init__(f"Too large resource version: {requested}, current: {current}")
        self.requested = requested
        self.current = current


class InvalidError(StorageError):
    pass


class RequestTooLargeError(errors.StatusError):
    """etcd refuses a write over its --max-request-bytes; kube-apiserver answers etcd's error as it is: a 500
    with etcd's message and no reason (ErrorToAPIStatus of an error that is not a Status)."""

    def __init__(self) -> None:
        super().__init__(500, "", "etcdserver: request is too large")


@dataclass(slots=True)
class Preconditions:
    uid: str | None = None
    resource_version: str | None = None

    def check(self, key: str, obj: Object) -> None:
        meta = obj.get("metadata") or {}
        if self.uid is not None and meta.get("uid") != self.uid:
            raise ConflictError(key, f"Precondition failed: UID in precondition: {self.uid}, "
                                     f"UID in object meta: {meta.get('uid', '')}")
        if self.resource_version is not None and meta.get("resourceVersion") != self.resource_version:
            raise ConflictError(key, f"Precondition failed: ResourceVersion in precondition: "
                                     f"{self.resource_version}, ResourceVersion in object meta: "
                                     f"{meta.get('resourceVersion', '')}")


Predicate = Callable[[Object], bool]


@dataclass(slots=True)
class ListOptions:
    resource_version: str = ""
    resource_version_match: str = ""  # "", "NotOlderThan", "Exact"
    limit: int = 0
    continue_token: str = ""
    predicate: Predicate | None = None
    # remainingItemCount is only exact when nothing filters the range.
    predicate_empty: bool = True


@dataclass(slots=True)
class ListResult:
    items: list[Object]
    resource_version: int
    continue_token: str = ""
    remaining_item_count: int | None = None


@dataclass(slots=True)
class WatchEvent:
    type: str
    object: Object
    revision: int
    # The event's JSON line, memoized by the first watcher that writes it (watchers share events).
    encoded: bytes | None = None
    # Its protobuf frame, memoized the same way for protobuf watchers.
    encoded_protobuf: bytes | None = None


UpdateFunc = Callable[[Object], Awaitable[Object]]
TTLFunc = Callable[[Object], float]  # seconds an object lives after a write (0: forever)
DeleteValidation = Callable[[Object], Awaitable[None]]


class Watcher(Protocol):
    def __aiter__(self) -> AsyncIterator[WatchEvent]: ...

    def request_bookmark(self) -> None:
        """Queue a BOOKMARK after the events already queued, at the latest known resourceVersion."""

    async def stop(self) -> None: ...


class Interface(Protocol):
    async def create(self, key: str, obj: Object, ttl: float = 0) -> Object: ...

    async def get(self, key: str) -> Object: ...

    async def get_list(self, key_prefix: str, opts: ListOptions) -> ListResult: ...

    async def guaranteed_update(self, key: str, try_update: UpdateFunc,
                                preconditions: Preconditions | None = None,
                                ignore_not_found: bool = False, ttl: TTLFunc | None = None) -> Object: ...

    async def delete(self, key: str, preconditions: Preconditions | None = None,
                     validate_deletion: DeleteValidation | None = None) -> Object: ...

    async def watch(self, key_prefix: str, resource_version: str, predicate: Predicate | None = None,
                    send_initial_events: bool | None = None, allow_bookmarks: bool = False) -> Watcher: ...

    async def count(self, key_prefix: str) -> int: ...

    async def current_revision(self) -> int: ...
