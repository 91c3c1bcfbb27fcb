"""ObjectStore: storage.Interface over an etcd-shaped KV (k8s.io/apiserver/pkg/storage/etcd3/store.go).

An object's resourceVersion is the revision of its last modification; it is not stored in the
value but set on decode, so a value never disagrees with its key's revision."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..apimachinery import errors
from ..apimachinery.patch import copy_json
from . import continue_token
from .codec import DEFAULT_MEDIA_TYPE, StorageCodec
from .interface import (
    ADDED,
    BOOKMARK,
    DELETED,
    INITIAL_EVENTS_END,
    MODIFIED,
    ConflictError,
    DeleteValidation,
    ExpiredError,
    KeyExistsError,
    KeyNotFoundError,
    ListOptions,
    ListResult,
    Object,
    Preconditions,
    Predicate,
    RequestTooLargeError,
    TooLargeResourceVersionError,
    TTLFunc,
    UpdateFunc,
    WatchEvent,
)
from .kv import DELETE, KV, CompactedError, FutureRevisionError, KeyValue, KVBatch, KVEvent, prefix_end
from .value.transformer import TransformError

if TYPE_CHECKING:
    from .value.keys import KeyTransformers

YIELD_EVERY = 256  # initial objects served before handing the event loop back
TURN_WAIT = 2.0  # seconds a conflicting update waits for its key's earlier retries before it goes on anyway
EXPIRED_LIST = "The resourceVersion for the provided list is too old."
INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new "
    "list without the continue parameter, or use the continue token in this response to retrieve the "
    "remainder of the results. Continuing with the provided token results in an inconsistent list - objects "
    "that were created, modified, or deleted between the time the first chunk was returned and now may show "
    "up in the list.")


# etcd's default --max-request-bytes (embed.DefaultMaxRequestBytes): no write of a larger object is accepted.
MAX_REQUEST_BYTES = 1536 * 1024


def check_request_size(key: str, value: bytes) -> None:
    """The bound etcd puts on one write (key and value; its few bytes of framing are left out)."""
    if len(value) + len(key) > MAX_REQUEST_BYTES:
        raise RequestTooLargeError()


def _rv_set(value: object) -> bool:
    """APIObjectVersioner.ObjectResourceVersion: a resourceVersion that parses as a non-zero uint64."""
    return isinstance(value, str) and value.isascii() and value.isdigit() and 0 < int(value) < 1 << 64


def _rv(value: str) -> int:
    return int(value) if value else 0


Decode = Callable[[str, bytes, int], Object]  # key, stored value, revision -> object
# A deleted key's last state as the watch's reader holds it (a watch cache), with resourceVersion set to the
# delete's revision; None: not held, the stored value is decoded.
Deleted = Callable[[str, int], Object | None]


@dataclass(slots=True)
class _Conflict:
    """An update attempt that lost to another write of its key: the key's state now."""

    current: KeyValue | None


class UpdateTurns:
    """Per key, the retries of conflicting updates, one at a time in arrival order. A retry that has waited
    TURN_WAIT seconds goes on without its turn: a write that another update of the same key waits on (a
    webhook writing the object it is called for) is not held up longer than that."""

    def __init__(self) -> None:
        self._keys: dict[str, tuple[asyncio.Lock, list[int]]] = {}  # key -> its lock, how many use it

    @contextlib.asynccontextmanager
    async def turn(self, key: str) -> AsyncIterator[None]:
        lock, users = self._keys.get(key) or self._keys.setdefault(key, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            try:
                async with asyncio.timeout(TURN_WAIT):
                    await lock.acquire()
            except TimeoutError:
                yield
                return
            try:
                yield
            finally:
                lock.release()
        finally:
            users[0] -= 1
            if not users[0]:
                del self._keys[key]


class ObjectStore:
    """`media_type` (--storage-media-type) is what values are written as; values of any are read.
    `transformers` (--encryption-provider-config) transform values between the codec and the KV, never keys."""

    def __init__(self, kv: KV, media_type: str = DEFAULT_MEDIA_TYPE):
        self.kv = kv
        self.codec = StorageCodec(media_type)
        self.transformers: KeyTransformers | None = None
        self._turns = UpdateTurns()

    # ---- values: codec, then transformer ----

    def _to_storage(self, key: str, plain: bytes) -> bytes:
        if self.transformers is None:
            return plain
        transformer, context = self.transformers.for_key(key)
        return transformer.transform_to_storage(plain, context)

    def _from_storage(self, key: str, value: bytes) -> tuple[bytes, bool]:
        """The codec's bytes of a stored value, and whether it is stale (to be written again with the
        first provider)."""
        if self.transformers is None:
            return value, False
        transformer, context = self.transformers.for_key(key)
        return transformer.transform_from_storage(value, context)

    def _decode(self, key: str, value: bytes, revision: int) -> Object:
        if self.transformers is not None:
            value = self._from_storage(key, value)[0]
        return self.codec.decode(value, revision)

    async def create(self, key: str, obj: Object, ttl: float = 0) -> Object:
        meta = obj.get("metadata") or {}
        if _rv_set(meta.get("resourceVersion")):
            # storage.ErrResourceVersionSetOnCreate, which kube-apiserver answers with a 500 too.
            raise errors.StatusError(500, "", "resourceVersion should not be set on objects to be created")
        meta.pop("resourceVersion", None)  # one that is not a number is cleared, as Kubernetes' versioner does
        plain = self.codec.encode(obj)
        value = self._to_storage(key, plain)
        check_request_size(key, value)
        result = await self.kv.create(key, value, ttl)
        if not result.succeeded:
            raise KeyExistsError(key)
        return self.codec.decode(plain, result.revision)

    async def get(self, key: str) -> Object:
        kv = await self.kv.get(key)
        if kv is None:
            raise KeyNotFoundError(key)
        return self._decode(key, kv.value, kv.mod_revision)

    async def count(self, key_prefix: str) -> int:
        return await self.kv.count(key_prefix, prefix_end(key_prefix))

    async def current_revision(self) -> int:
        return await self.kv.current_revision()

    async def compacted_revision(self) -> int:
        """The newest compaction known here (k8s store.CompactRevision): history before it is gone."""
        return await self.kv.compacted_revision()

    async def guaranteed_update(self, key: str, try_update: UpdateFunc,
                                preconditions: Preconditions | None = None,
                                ignore_not_found: bool = False, ttl: TTLFunc | None = None,
                                suggestion: Object | None = None) -> Object:
        """etcd3 store's GuaranteedUpdate: `try_update` of the current object, written if the key has not
        changed meanwhile, else tried again from the newer state. After a first conflict, the key's retries
        take turns (UpdateTurns): concurrent writers of one key all start from the same state, so all but one
        would conflict again on every round (about n²/2 attempts of admission and validation for n writers).
        Only on a store this process alone writes: replicas sharing etcd mostly conflict with each other,
        which a turn in one process does not order.

        `suggestion`: the watch cache's copy of the object (upstream's cachedExistingObject), tried first
        without reading the key; storage is read when it proves stale or the update changes nothing on it."""
        outcome = None
        if suggestion is not None:
            outcome = await self._try_suggestion(key, suggestion, try_update, preconditions, ttl)
        if outcome is None:
            outcome = await self._try_update(key, await self.kv.get(key), try_update, preconditions,
                                             ignore_not_found, ttl)
        if not isinstance(outcome, _Conflict):
            return outcome
        exclusive = getattr(self.kv, "exclusive", False)
        async with self._turns.turn(key) if exclusive else contextlib.nullcontext():
            # After a turn, what the turns before it left; without one, the state the conflict answered.
            current = await self.kv.get(key) if exclusive else outcome.current
            while True:
                outcome = await self._try_update(key, current, try_update, preconditions, ignore_not_found, ttl)
                if not isinstance(outcome, _Conflict):
                    return outcome
                current = outcome.current

    async def _try_suggestion(self, key: str, cached: Object, try_update: UpdateFunc,
                              preconditions: Preconditions | None, ttl: TTLFunc | None) -> Object | _Conflict | None:
        """One attempt from the cached object, as etcd3's GuaranteedUpdate from a state not known to be current:
        a failed precondition or update is the caller's error only when storage still holds that revision
        (else tried again from what it holds); an update that changes nothing is decided on storage's state
        (None: read it)."""
        revision = int(cached["metadata"]["resourceVersion"])
        existing = copy_json(cached)  # the cache's object is shared: the update may change its copy
        try:
            if preconditions is not None:
                preconditions.check(key, existing)
            updated = await try_update(existing)
        except Exception:
            current = await self.kv.get(key)
            if current is not None and current.mod_revision == revision:
                raise
            return _Conflict(current)
        plain = self.codec.encode(updated)
        if plain == self.codec.encode(cached):
            return None
        return await self._compare_and_swap(key, revision, updated, plain, ttl)

    async def _try_update(self, key: str, current: KeyValue | None, try_update: UpdateFunc,
                          preconditions: Preconditions | None, ignore_not_found: bool,
                          ttl: TTLFunc | None) -> Object | _Conflict:
        """One attempt from `current`: the object written (or the existing one, unchanged), or the conflict
        with the key's newer state."""
        if current is None and not ignore_not_found:
            raise KeyNotFoundError(key)
        existing: Object = {}
        current_plain, stale = b"", False
        if current is not None:
            current_plain, stale = self._from_storage(key, current.value)
            existing = self.codec.decode(current_plain, current.mod_revision)
        if preconditions is not None and current is not None:
            preconditions.check(key, existing)
        updated = await try_update(existing)
        plain = self.codec.encode(updated)
        if current is not None and not stale and plain == current_plain:
            # Nothing changed: no new revision, as in Kubernetes. A value read with another provider
            # than the first (stale) is written again all the same, so that a rewrite re-encrypts it.
            return existing
        expected = current.mod_revision if current is not None else None
        return await self._compare_and_swap(key, expected, updated, plain, ttl)

    async def _compare_and_swap(self, key: str, expected: int | None, updated: Object, plain: bytes,
                                ttl: TTLFunc | None) -> Object | _Conflict:
        """An attempt's compare-and-swap: created when `expected` is None, else updated over that mod revision;
        the object written, or the conflict with the key's newer state."""
        value = self._to_storage(key, plain)
        check_request_size(key, value)
        seconds = ttl(updated) if ttl is not None else 0
        if expected is None:
            result = await self.kv.create(key, value, seconds)
        else:
            result = await self.kv.update(key, value, expected, seconds)
        if result.succeeded:
            return self.codec.decode(plain, result.revision)
        return _Conflict(result.current if result.current is not None else await self.kv.get(key))

    async def delete(self, key: str, preconditions: Preconditions | None = None,
                     validate_deletion: DeleteValidation | None = None) -> Object:
        current = await self.kv.get(key)
        while True:
            if current is None:
                raise KeyNotFoundError(key)
            existing = self._decode(key, current.value, current.mod_revision)
            if preconditions is not None:
                preconditions.check(key, existing)
            if validate_deletion is not None:
                await validate_deletion(existing)
            result = await self.kv.delete(key, current.mod_revision)
            if result.succeeded:
                return existing
            current = result.current

    # ---- list ----

    async def get_list(self, key_prefix: str, opts: ListOptions) -> ListResult:
        end = prefix_end(key_prefix)
        start, revision = key_prefix, 0
        requested = _rv(opts.resource_version)
        if opts.continue_token:
            start, revision = continue_token.decode(opts.continue_token, key_prefix)
            revision = max(revision, 0)
        elif requested and (opts.resource_version_match == "Exact"
                            or (not opts.resource_version_match and opts.limit > 0)):
            revision = requested
        current = await self.kv.current_revision()
        if not revision and requested > current:
            raise TooLargeResourceVersionError(requested, current)
        items, next_key, read_at = await self._read_pages(key_prefix, start, end, revision, opts)
        result = ListResult(items, read_at)
        if next_key is not None:
            result.continue_token = continue_token.encode(next_key, key_prefix, read_at)
            if opts.predicate_empty:
                remaining = await self._count_left(next_key, end, read_at)
                result.remaining_item_count = remaining
        return result

    async def _count_left(self, start: str, end: str, revision: int) -> int:
        """The keys left after a page, at its revision, as etcd counts them in the same range answer."""
        try:
            return await self.kv.count(start, end, revision)
        except CompactedError:  # compacted since the page was read: the count now is the closest left
            return await self.kv.count(start, end)

    async def _read_pages(self, key_prefix: str, start: str, end: str, revision: int, opts: ListOptions,
                          ) -> tuple[list[Object], str | None, int]:
        """Reads until `limit` objects matched or the range is done; returns the next key if not done."""
        items: list[Object] = []
        predicate = opts.predicate
        limit = opts.limit
        while True:
            try:
                page = await self.kv.range(start, end, revision, limit)
            except CompactedError:
                if opts.continue_token:
                    token = continue_token.encode(start, key_prefix, -1)
                    raise ExpiredError(INCONSISTENT_CONTINUE, token) from None
                raise ExpiredError(EXPIRED_LIST) from None
            except FutureRevisionError as err:
                raise TooLargeResourceVersionError(err.requested, err.current) from None
            revision = page.revision
            for kv in page.kvs:
                if limit and len(items) >= limit:  # a later page filled up what filtering left short
                    return items, kv.key, revision
                try:
                    obj = self._decode(kv.key, kv.value, kv.mod_revision)
                except TransformError as err:
                    raise TransformError(f'unable to transform key "{kv.key}": {err}', err.code) from None
                if predicate is None or predicate(obj):
                    items.append(obj)
            if not page.more:
                return items, None, revision
            start = page.kvs[-1].key + "\x00"
            if len(items) >= limit:
                return items, start, revision

    # ---- watch ----

    def request_watch_progress(self) -> None:
        self.kv.request_progress()

    @property
    def progress_requests_supported(self) -> bool:
        return self.kv.progress_requests_supported

    async def watch(self, key_prefix: str, resource_version: str, predicate: Predicate | None = None,
                    send_initial_events: bool | None = None, allow_bookmarks: bool = False,
                    progress_notify: bool = False, deleted: Deleted | None = None) -> ObjectWatcher:
        """`deleted`: for a reader that keeps every object it was given (a watch cache) and is done with each
        event before it asks for the next: asked for a deleted key's last state instead of decoding it."""
        requested = _rv(resource_version)
        compacted = await self.kv.compacted_revision()
        if requested and requested < compacted:
            raise ExpiredError(f"too old resource version: {requested} ({compacted})")
        end = prefix_end(key_prefix)
        initial: list[KeyValue] = []
        end_bookmark = None
        if send_initial_events if send_initial_events is not None else not requested:
            # Unset or "0": the current state as ADDED events, then every change after it. The values
            # are decoded as the reader takes them, never queued as events.
            page = await self.kv.range(key_prefix, end)
            requested = max(page.revision, requested)
            initial = page.kvs
            if send_initial_events is True and allow_bookmarks:  # a watch-list's: ends with the marked bookmark
                end_bookmark = _bookmark(requested, {INITIAL_EVENTS_END: "true"})
        stream = self.kv.watch(key_prefix, end, requested + 1)
        return ObjectWatcher(stream, initial, predicate, progress_notify, end_bookmark, requested, self._decode,
                             deleted)


def _bookmark(revision: int, annotations: dict[str, str] | None = None) -> WatchEvent:
    meta: dict[str, object] = {"resourceVersion": str(revision)}
    if annotations:
        meta["annotations"] = annotations
    return WatchEvent(BOOKMARK, {"metadata": meta}, revision)


def _transform(event: KVEvent, predicate: Predicate | None, decode: Decode, deleted: Deleted | None = None,
               ) -> WatchEvent | None:
    """One KV event as the watcher sees it, with selector transitions (k8s etcd3 watcher.transform)."""
    key = event.key
    if event.type == DELETE:
        old = deleted(key, event.revision) if deleted is not None else None
        if old is None:
            old = decode(key, event.prev_value, event.revision) if event.prev_value else _deleted_unknown(event.revision)
        if predicate is None or predicate(old):
            return WatchEvent(DELETED, old, event.revision)
        return None
    obj = decode(key, event.value, event.revision)
    if event.prev_value is None:
        return WatchEvent(ADDED, obj, event.revision) if predicate is None or predicate(obj) else None
    if predicate is None:
        return WatchEvent(MODIFIED, obj, event.revision)
    old = decode(key, event.prev_value, event.revision)
    now_passes, old_passes = predicate(obj), predicate(old)
    if now_passes and old_passes:
        return WatchEvent(MODIFIED, obj, event.revision)
    if now_passes:
        return WatchEvent(ADDED, obj, event.revision)
    if old_passes:
        return WatchEvent(DELETED, old, event.revision)
    return None


class ObjectWatcher:
    """An async iterator of WatchEvents: the initial objects (if any), then the stream's; stop() ends it."""

    def __init__(self, stream: AsyncIterator[KVBatch], initial: list[KeyValue], predicate: Predicate | None,
                 progress_notify: bool = False, end_bookmark: WatchEvent | None = None, revision: int = 0,
                 decode: Decode | None = None, deleted: Deleted | None = None):
        self._stream = stream
        self._decode = decode or _plain_decode
        self._deleted = deleted
        self._initial = iter(initial)
        self._end_bookmark = end_bookmark
        self._pending: deque[WatchEvent] = deque()
        self._predicate = predicate
        self._progress_notify = progress_notify
        self._stopped = asyncio.Event()
        self._revision = revision if initial or end_bookmark else 0
        self._steps = 0

    def __aiter__(self) -> ObjectWatcher:
        return self

    async def __anext__(self) -> WatchEvent:
        if self._initial is not None:
            event = await self._next_initial()
            if event is not None:
                return event
        while not self._pending:
            if self._stopped.is_set():
                raise StopAsyncIteration
            try:
                batch = await self._stream.__anext__()
            except CompactedError as err:
                raise ExpiredError(f"too old resource version: {err.requested - 1} ({err.compacted})") from None
            if not batch.events:
                self._revision = max(self._revision, batch.revision)
                if self._progress_notify:
                    return _bookmark(batch.revision)
                continue
            self._pending.extend(e for e in self._transform_batch(batch.events) if e is not None)
        event = self._pending.popleft()
        self._revision = max(self._revision, event.revision)
        return event

    def _transform_batch(self, events: list[KVEvent]) -> Iterator[WatchEvent | None]:
        """The batch's events, transformed before the reader takes the first: a key written earlier in the
        same batch is not in the reader's hands yet, so its delete is decoded."""
        deleted, predicate, decode = self._deleted, self._predicate, self._decode
        if deleted is None or len(events) == 1:
            for event in events:
                yield _transform(event, predicate, decode, deleted)
            return
        written: set[str] = set()
        for event in events:
            yield _transform(event, predicate, decode, None if event.key in written else deleted)
            written.add(event.key)

    async def _next_initial(self) -> WatchEvent | None:
        """The next initial object as ADDED (then the end bookmark), or None once they are all out."""
        predicate = self._predicate
        for kv in self._initial:  # type: ignore[union-attr]
            self._steps += 1
            if self._steps % YIELD_EVERY == 0:
                await asyncio.sleep(0)  # served without waiting: hand the loop back now and then
            if self._stopped.is_set():
                self._initial = None
                raise StopAsyncIteration
            obj = self._decode(kv.key, kv.value, kv.mod_revision)
            if predicate is None or predicate(obj):
                return WatchEvent(ADDED, obj, kv.mod_revision)
        self._initial = None
        end, self._end_bookmark = self._end_bookmark, None
        return end

    def request_bookmark(self) -> None:
        self._pending.append(_bookmark(self._revision))

    async def stop(self) -> None:
        self._stopped.set()
        try:
            await self._stream.aclose()  # type: ignore[attr-defined]
        except RuntimeError:
            pass  # still running in a task being cancelled: it closes itself


_PLAIN_CODEC = StorageCodec()


def _plain_decode(key: str, value: bytes, revision: int) -> Object:
    return _PLAIN_CODEC.decode(value, revision)


def _deleted_unknown(revision: int) -> Object:
    """A delete whose last state the KV did not keep."""
    return _PLAIN_CODEC.decode(b"{}", revision)


__all__ = ["ObjectStore", "ObjectWatcher", "ConflictError", "KeyValue"]
