"""EtcdKV: the KV interface over etcd's v3 API (what k8s.io/apiserver/pkg/storage/etcd3 asks of etcd).

Writes are one Txn each: a create compares the key's create_revision with 0, an update or delete its
mod_revision with the one read; the failure branch reads the key back so a conflict returns what it
holds now. Keys arrive as `/registry/...` and are stored under --etcd-prefix."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
from collections.abc import AsyncIterator

import grpc
import grpc.aio

from .. import kv
from ..kv import DELETE, PUT, KeyValue, KVBatch, KVEvent, RangeResult, TxnResult
from . import messages as m
from .client import RETRYABLE, WATCH_RETRYABLE, Client, TLSConfig
from .lease import LeaseManager

log = logging.getLogger("kube_apiserver.storage.etcd3")

INTERNAL_PREFIX = "/registry"  # how ObjectStore names keys; stored under the configured prefix instead
COMPACTED_TEXT = "required revision has been compacted"
FUTURE_TEXT = "required revision is a future revision"
LEASE_NOT_FOUND = "requested lease not found"
# A watch whose endpoint failed is reopened after WATCH_RETRY_SECONDS, doubling while no endpoint answers, up to
# the channel's own reconnect backoff.
WATCH_RETRY_SECONDS = 0.2
WATCH_RETRY_MAX_SECONDS = 2.0
MAX_INT64 = (1 << 63) - 1
STATUS_TIMEOUT = 2.0  # one member's answer to "which version" at open
# A member that cannot say its version is asked again in the background, as kube-apiserver's feature
# checker does: from 10 ms, doubling, at most 15 s apart, 11 times.
STATUS_RETRY_FIRST, STATUS_RETRY_CAP, STATUS_RETRIES = 0.01, 15.0, 11
_SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")


class EtcdError(Exception):
    """etcd refused or could not serve a request (its message is kept)."""


class EtcdUnavailableError(EtcdError, kv.StorageUnavailableError):
    """No member answered within the client's failover window."""


def _rpc_error(err: grpc.aio.AioRpcError) -> EtcdError:
    cls = EtcdUnavailableError if err.code() in RETRYABLE else EtcdError
    return cls(f"etcd: {err.details() or err.code().name}")


class EtcdKV:
    def __init__(self, endpoints: list[str], prefix: str = INTERNAL_PREFIX, tls: TLSConfig | None = None):
        self.client = Client(endpoints, tls)
        self.prefix = prefix.rstrip("/") if prefix != "/" else ""
        self._leases = LeaseManager(self._grant)
        self._compacted = 0
        self._watch_calls: set[grpc.aio.StreamStreamCall] = set()
        self._progress_asked: set[grpc.aio.StreamStreamCall] = set()  # a progress request is being written
        self._closed = False
        self._progress_support: dict[int, bool] = {}  # endpoint index -> its version answers progress safely
        self._status_checks: set[asyncio.Task[None]] = set()

    @classmethod
    async def open(
        cls,
        endpoints: list[str],
        prefix: str = INTERNAL_PREFIX,
        tls: TLSConfig | None = None,
    ) -> EtcdKV:
        """Connects and learns how far history is compacted (a watch from revision 1 tells)."""
        store = cls(endpoints, prefix, tls)
        try:
            await store.current_revision()
            store._compacted = await store._probe_compacted()
            await store._check_progress_support()
        except BaseException:
            await store.close()
            raise
        return store

    # ---- what the members support ----

    @property
    def progress_requests_supported(self) -> bool:
        """Whether a progress notification etcd sends on request can be trusted to follow every event up to
        its revision (kube-apiserver's RequestWatchProgress feature): known once a member has said its
        version, and false as soon as one runs a release with etcd#15220 or #17507."""
        return bool(self._progress_support) and all(self._progress_support.values())

    async def _check_progress_support(self) -> None:
        """Every member's version; one that does not answer now is asked again in the background."""
        indexes = range(len(self.client.endpoints))
        answered = await asyncio.gather(*(self._ask_version(i) for i in indexes))
        for index, ok in zip(indexes, answered, strict=True):
            if not ok:
                task = asyncio.ensure_future(self._ask_version_until_answered(index))
                self._status_checks.add(task)
                task.add_done_callback(self._status_checks.discard)

    async def _ask_version(self, index: int) -> bool:
        try:
            data = await self.client.unary_on(index, m.STATUS, b"", STATUS_TIMEOUT)
        except grpc.aio.AioRpcError:
            return False
        version = m.status_version(data)
        supported = version_supports_progress_requests(version)
        if not supported:
            log.info(
                "RequestWatchProgress feature is not supported by %r endpoint (etcd %s): consistent "
                "reads are served by etcd, not the watch cache",
                self.client.endpoints[index],
                version,
            )
        self._progress_support[index] = supported
        return True

    async def _ask_version_until_answered(self, index: int) -> None:
        delay = STATUS_RETRY_FIRST
        for _ in range(STATUS_RETRIES):
            await asyncio.sleep(delay)
            if self._closed or await self._ask_version(index):
                return
            delay = min(delay * 2, STATUS_RETRY_CAP)
        log.error(
            "Failed to check if RequestWatchProgress is supported by etcd %r after retrying",
            self.client.endpoints[index],
        )

    # ---- keys ----

    def _key(self, key: str) -> bytes:
        if key.startswith(INTERNAL_PREFIX) and self.prefix != INTERNAL_PREFIX:
            key = self.prefix + key[len(INTERNAL_PREFIX) :]
        return key.encode()

    def _name(self, key: bytes) -> str:
        name = key.decode(errors="surrogateescape")
        if self.prefix != INTERNAL_PREFIX and name.startswith(self.prefix):
            return INTERNAL_PREFIX + name[len(self.prefix) :]
        return name

    def _kv(self, item: m.KeyValue) -> KeyValue:
        return KeyValue(self._name(item.key), item.value, item.create_revision, item.mod_revision)

    # ---- reads ----

    async def _range(self, request: bytes, revision: int = 0) -> m.RangeResponse:
        try:
            return m.range_response(await self.client.unary(m.RANGE, request))
        except grpc.aio.AioRpcError as err:
            raise await self._revision_error(err, revision) from None

    async def _revision_error(self, err: grpc.aio.AioRpcError, revision: int) -> Exception:
        details = err.details() or ""
        if COMPACTED_TEXT in details:
            self._compacted = max(self._compacted, await self._probe_compacted())
            return kv.CompactedError(revision, self._compacted)
        if FUTURE_TEXT in details:
            return kv.FutureRevisionError(revision, await self.current_revision())
        return _rpc_error(err)

    async def get(self, key: str) -> KeyValue | None:
        resp = await self._range(m.range_request(self._key(key)))
        return self._kv(resp.kvs[0]) if resp.kvs else None

    async def range(self, start: str, end: str, revision: int = 0, limit: int = 0) -> RangeResult:
        limit = 0 if limit >= MAX_INT64 else limit
        request = m.range_request(self._key(start), self._key(end), limit, max(revision, 0))
        resp = await self._range(request, revision)
        return RangeResult(
            [self._kv(item) for item in resp.kvs], revision if revision > 0 else resp.revision, resp.more
        )

    async def count(self, start: str, end: str, revision: int = 0) -> int:
        resp = await self._range(m.range_request(self._key(start), self._key(end), revision=revision,
                                                 count_only=True))
        return resp.count

    async def current_revision(self) -> int:
        """The store's revision now (a count-only range on one key: the cheapest read with a header)."""
        resp = await self._range(m.range_request(b"compact_rev_key", count_only=True))
        return resp.revision

    async def compacted_revision(self) -> int:
        """The newest compaction this client knows of (its own, or one etcd reported)."""
        return self._compacted

    # ---- writes ----

    async def _grant(self, ttl: int) -> int:
        try:
            data = await self.client.unary(m.LEASE_GRANT, m.lease_grant_request(ttl))
        except grpc.aio.AioRpcError as err:
            raise _rpc_error(err) from None
        lease, error = m.lease_grant_response(data)
        if error:
            raise EtcdError(f"etcd: {error}")
        return lease

    async def _txn(self, key: bytes, condition: bytes, success: bytes, value: bytes | None) -> TxnResult:
        """The compare-and-swap; `value` is what a success writes (None: a delete)."""
        request = m.txn_request([condition], [success], [m.op_range(m.range_request(key))])
        try:
            data, maybe_applied = await self.client.unary_write(m.TXN, request)
        except grpc.aio.AioRpcError as err:
            raise _rpc_error(err) from None
        resp = m.txn_response(data)
        if resp.succeeded:
            return TxnResult(True, resp.revision, None)
        found = resp.ranges[0].kvs if resp.ranges else []
        current = self._kv(found[0]) if found else None
        if maybe_applied:
            # A retry after an attempt that may have gone through: finding our own write means it did.
            if value is None and current is None:
                return TxnResult(True, resp.revision, None)
            if value is not None and current is not None and current.value == value:
                return TxnResult(True, current.mod_revision, None)
        return TxnResult(False, resp.revision, current)

    async def _write(
        self, key: str, value: bytes, ttl: float, expected_mod_revision: int | None
    ) -> TxnResult:
        """A put under compare-and-swap: a create (expected None) or an update; a TTL attaches a lease."""
        name = self._key(key)
        condition = (
            m.compare(name, m.TARGET_CREATE, m.EQUAL, 0)
            if expected_mod_revision is None
            else self._expect(name, expected_mod_revision)
        )
        lease = await self._leases.get_lease(ttl) if ttl > 0 else 0
        try:
            return await self._txn(name, condition, m.op_put(m.put_request(name, value, lease)), value)
        except EtcdError as err:
            if not lease or LEASE_NOT_FOUND not in str(err):
                raise
        self._leases.forget(lease)  # a reused lease etcd no longer has: once more with a new one
        lease = await self._leases.get_lease(ttl)
        return await self._txn(name, condition, m.op_put(m.put_request(name, value, lease)), value)

    async def create(self, key: str, value: bytes, ttl: float = 0) -> TxnResult:
        return await self._write(key, value, ttl, None)

    async def update(self, key: str, value: bytes, expected_mod_revision: int, ttl: float = 0) -> TxnResult:
        return await self._write(key, value, ttl, expected_mod_revision)

    async def delete(self, key: str, expected_mod_revision: int) -> TxnResult:
        name = self._key(key)
        return await self._txn(
            name, self._expect(name, expected_mod_revision), m.op_delete(m.delete_request(name)), None
        )

    @staticmethod
    def _expect(key: bytes, mod_revision: int) -> bytes:
        """The key is at `mod_revision`; with 0, only that it exists."""
        if mod_revision:
            return m.compare(key, m.TARGET_MOD, m.EQUAL, mod_revision)
        return m.compare(key, m.TARGET_CREATE, m.GREATER, 0)

    # ---- watch ----

    async def watch(self, start: str, end: str, start_revision: int) -> AsyncIterator[KVBatch]:
        """One gRPC watch stream per watch; when its endpoint fails it is reopened on the next one from
        the revision after the last delivered, so no event is lost or repeated."""
        key, range_end = self._key(start), self._key(end)
        next_revision = start_revision
        delay = WATCH_RETRY_SECONDS
        while not self._closed:
            channel = self.client.channel
            opened = asyncio.get_running_loop().time()
            call = channel.stream_stream(m.WATCH)()
            try:
                await call.write(m.watch_create_request(key, range_end, next_revision))
                self._watch_calls.add(call)  # open to progress requests once its own request is written
                while True:
                    data = await call.read()
                    if data is grpc.aio.EOF:
                        break
                    delay = WATCH_RETRY_SECONDS
                    self.client.answered(opened)
                    resp = m.watch_response(data)
                    if resp.canceled:
                        if resp.compact_revision:
                            self._compacted = max(self._compacted, resp.compact_revision)
                            raise kv.CompactedError(next_revision, resp.compact_revision)
                        raise EtcdError(f"etcd: watch canceled: {resp.cancel_reason}")
                    batch = self._batch(resp)
                    if batch is None:
                        continue
                    next_revision = max(next_revision, batch.revision + 1)
                    yield batch
            except grpc.aio.AioRpcError as err:
                if self._closed or err.code() == grpc.StatusCode.CANCELLED:
                    return
                if err.code() not in WATCH_RETRYABLE:
                    raise _rpc_error(err) from None
                self.client.failover(channel)
            except asyncio.CancelledError:
                if self._closed:
                    return
                raise
            finally:
                self._watch_calls.discard(call)
                self._progress_asked.discard(call)
                call.cancel()
            await asyncio.sleep(delay)
            delay = min(delay * 2, WATCH_RETRY_MAX_SECONDS)

    def _batch(self, resp: m.WatchResponse) -> KVBatch | None:
        if resp.created:
            return None
        if not resp.events:  # a progress notification: everything up to the header's revision was sent
            return KVBatch([], resp.revision)
        events = [self._event(e) for e in resp.events]
        return KVBatch(events, events[-1].revision)

    def _event(self, event: m.Event) -> KVEvent:
        item, prev = event.kv, event.prev_kv
        if event.deleted:
            return KVEvent(
                DELETE,
                self._name(item.key),
                b"",
                item.mod_revision,
                prev.create_revision if prev else 0,
                prev.value if prev else None,
            )
        # A put with a previous value is an update; the first put (version 1) is a create.
        prev_value = prev.value if prev is not None and item.version > 1 else None
        return KVEvent(
            PUT, self._name(item.key), item.value, item.mod_revision, item.create_revision, prev_value
        )

    def request_progress(self) -> None:
        """A progress request on every open watch stream. grpc.aio fails a stream written by two writers at
        once ("Internal error from Core"), so a stream whose last request is still being written is not
        asked again: etcd answers that one after this call, with a revision at least as new."""
        for call in list(self._watch_calls):
            if call in self._progress_asked:
                continue
            self._progress_asked.add(call)
            task = asyncio.ensure_future(call.write(m.WATCH_PROGRESS_REQUEST))
            task.add_done_callback(functools.partial(self._progress_written, call))

    def _progress_written(self, call: grpc.aio.StreamStreamCall, task: asyncio.Future) -> None:
        self._progress_asked.discard(call)
        _ignore_result(task)

    async def _probe_compacted(self) -> int:
        """etcd does not report its compacted revision, but a watch from revision 1 is refused with it."""
        call = self.client.channel.stream_stream(m.WATCH)()
        try:
            await call.write(m.watch_create_request(b"compact_rev_key", b"", 1))
            while True:
                data = await asyncio.wait_for(call.read(), 10)
                if data is grpc.aio.EOF:
                    return 0
                resp = m.watch_response(data)
                if resp.canceled:
                    return resp.compact_revision
                if resp.created:
                    # created: nothing compacted refused it, but a canceled response may still follow
                    with contextlib.suppress(asyncio.TimeoutError):
                        data = await asyncio.wait_for(call.read(), 0.2)
                        if data is not grpc.aio.EOF:
                            follow = m.watch_response(data)
                            return follow.compact_revision if follow.canceled else 0
                    return 0
        finally:
            call.cancel()

    # ---- maintenance ----

    async def compact(self, revision: int) -> None:
        if revision <= self._compacted:
            return
        try:
            await self.client.unary(m.COMPACT, m.compaction_request(revision))
        except grpc.aio.AioRpcError as err:
            details = err.details() or ""
            if FUTURE_TEXT in details:
                return await self.compact(await self.current_revision())
            if COMPACTED_TEXT not in details:
                raise _rpc_error(err) from None
            revision = max(revision, await self._probe_compacted())
        self._compacted = max(self._compacted, revision)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for task in list(self._status_checks):
            task.cancel()
        for call in list(self._watch_calls):
            call.cancel()
        await self.client.close()


def version_supports_progress_requests(version: str) -> bool:
    """kube-apiserver's rule (endpointSupportsRequestWatchProgress): etcd answers a progress request with a
    revision that may overtake events still on their way to the watcher before 3.4.31 and, in 3.5, before
    3.5.13 (etcd-io/etcd#15220 and #17507). A version that does not parse is not trusted."""
    match = _SEMVER.match(version.strip())
    if match is None:
        return False
    release = (int(match[1]), int(match[2]), int(match[3]))
    prerelease = match[4] is not None  # 3.4.31-rc.0 comes before 3.4.31

    def before(threshold: tuple[int, int, int]) -> bool:
        return release < threshold or (release == threshold and prerelease)

    return not (before((3, 4, 31)) or (not before((3, 5, 0)) and before((3, 5, 13))))


def _ignore_result(task: asyncio.Future) -> None:
    if not task.cancelled():
        task.exception()  # a stream that just ended cannot take the request: nothing to do
