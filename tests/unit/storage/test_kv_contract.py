"""The KV contract, run unchanged on both backends (the embedded SQLite one and etcd3 over a real etcd):
ranges at revisions and with limits, compare-and-swap, watch from a revision with deletes and their
previous values, progress notifications, compaction, leases, and the compactor's shared swap."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kv_backends import on_each_backend, open_kv  # noqa: F401 - open_kv: the fixture

from kube_apiserver.storage.compactor import COMPACT_REV_KEY, Compactor
from kube_apiserver.storage.kv import (
    DELETE,
    KV,
    PUT,
    CompactedError,
    FutureRevisionError,
    KVBatch,
    prefix_end,
)

run = on_each_backend("contract")


async def next_batch(stream: AsyncIterator[KVBatch], skip_progress: bool = True) -> KVBatch:
    while True:
        batch = await asyncio.wait_for(stream.__anext__(), 10)
        if batch.events or not skip_progress:
            return batch


async def events_until(stream: AsyncIterator[KVBatch], revision: int) -> list[tuple[str, str, bytes, Any]]:
    """(type, key, value, prev_value) of every event up to `revision`."""
    seen: list[tuple[str, str, bytes, Any]] = []
    while not seen or seen[-1][4] < revision:
        batch = await next_batch(stream)
        seen.extend((e.type, e.key, e.value, e.prev_value, e.revision) for e in batch.events)  # type: ignore[misc]
    return [s[:4] for s in seen]


@run
async def test_ranges_at_revisions_and_limits(kv: KV, p: str) -> None:
    a = await kv.create(p + "a", b"a1")
    b = await kv.create(p + "b", b"b1")
    c = await kv.create(p + "c", b"c1")
    assert a.succeeded and b.revision == a.revision + 1 and c.revision == b.revision + 1
    b2 = await kv.update(p + "b", b"b2", b.revision)
    now = await kv.range(p, prefix_end(p))
    assert [(x.key, x.value) for x in now.kvs] == [(p + "a", b"a1"), (p + "b", b"b2"), (p + "c", b"c1")]
    assert now.revision >= b2.revision and not now.more
    got = await kv.get(p + "b")
    assert got is not None and (got.create_revision, got.mod_revision) == (b.revision, b2.revision)
    past = await kv.range(p, prefix_end(p), b.revision)
    assert [(x.key, x.value) for x in past.kvs] == [(p + "a", b"a1"), (p + "b", b"b1")]
    assert past.revision == b.revision
    page = await kv.range(p, prefix_end(p), 0, 2)
    assert [x.key for x in page.kvs] == [p + "a", p + "b"] and page.more
    rest = await kv.range(p + "b\x00", prefix_end(p), page.revision, 2)
    assert [x.key for x in rest.kvs] == [p + "c"] and not rest.more
    assert await kv.count(p, prefix_end(p)) == 3
    assert await kv.get(p + "zz") is None
    with pytest.raises(FutureRevisionError):
        await kv.range(p, prefix_end(p), await kv.current_revision() + 100)


@run
async def test_compare_and_swap_returns_what_the_key_holds(kv: KV, p: str) -> None:
    created = await kv.create(p + "k", b"v1")
    again = await kv.create(p + "k", b"other")
    assert not again.succeeded and again.current is not None and again.current.value == b"v1"
    updated = await kv.update(p + "k", b"v2", created.revision)
    assert updated.succeeded
    stale = await kv.update(p + "k", b"v3", created.revision)
    assert not stale.succeeded and stale.current is not None
    assert (stale.current.value, stale.current.mod_revision) == (b"v2", updated.revision)
    assert stale.revision >= updated.revision
    stale_delete = await kv.delete(p + "k", created.revision)
    assert not stale_delete.succeeded and stale_delete.current.mod_revision == updated.revision  # type: ignore[union-attr]
    assert (await kv.delete(p + "k", updated.revision)).succeeded
    gone = await kv.update(p + "k", b"v4", updated.revision)
    assert not gone.succeeded and gone.current is None
    assert not (await kv.delete(p + "k", updated.revision)).succeeded
    assert (await kv.create(p + "k", b"again")).succeeded


@run
async def test_watch_from_a_revision_sees_puts_and_deletes_with_previous_values(kv: KV, p: str) -> None:
    first = await kv.create(p + "a", b"a1")
    second = await kv.update(p + "a", b"a2", first.revision)
    await kv.create(prefix_end(p) + "outside", b"x")  # not in the watched range
    deleted = await kv.delete(p + "a", second.revision)
    stream = kv.watch(p, prefix_end(p), first.revision)
    try:
        assert await events_until(stream, deleted.revision) == [
            (PUT, p + "a", b"a1", None),
            (PUT, p + "a", b"a2", b"a1"),
            (DELETE, p + "a", b"", b"a2"),
        ]
        live = await kv.create(p + "b", b"b1")  # and what comes after the history
        assert await events_until(stream, live.revision) == [(PUT, p + "b", b"b1", None)]
    finally:
        await stream.aclose()  # type: ignore[attr-defined]


@run
async def test_progress_notification_reports_the_current_revision(kv: KV, p: str) -> None:
    written = await kv.create(p + "a", b"a1")
    stream = kv.watch(p, prefix_end(p), written.revision + 1)
    pending = asyncio.ensure_future(next_batch(stream, skip_progress=False))
    try:
        for _ in range(100):  # until the watch is open to take the request
            kv.request_progress()
            done, _ = await asyncio.wait({pending}, timeout=0.1)
            if done:
                break
        batch = await pending
        assert batch.events == [] and batch.revision >= written.revision
    finally:
        pending.cancel()
        await stream.aclose()  # type: ignore[attr-defined]


@run
async def test_progress_requests_in_bursts_leave_every_watch_streaming(kv: KV, p: str) -> None:
    """Consistent reads ask for progress whenever they come, several at once (a server's start, a burst of
    lists): the watches just opened and those with a request already on its way keep streaming."""
    first = await kv.create(p + "start", b"s")
    streams = [kv.watch(p, prefix_end(p), first.revision + 1) for _ in range(8)]
    pending = [asyncio.ensure_future(next_batch(stream)) for stream in streams]
    try:
        for _ in range(20):
            for _ in range(10):
                kv.request_progress()
            await asyncio.sleep(0.01)
        written = await kv.create(p + "after", b"a")
        for batch in await asyncio.gather(*pending):
            assert [(e.key, e.revision) for e in batch.events] == [(p + "after", written.revision)]
    finally:
        for task in pending:
            task.cancel()
        for stream in streams:
            await stream.aclose()  # type: ignore[attr-defined]


@run
async def test_compaction_refuses_older_ranges_and_watches(kv: KV, p: str) -> None:
    old = await kv.create(p + "a", b"a1")
    kept = await kv.update(p + "a", b"a2", old.revision)
    await kv.create(p + "b", b"b1")
    await kv.compact(kept.revision)
    assert await kv.compacted_revision() >= kept.revision
    with pytest.raises(CompactedError):
        await kv.range(p, prefix_end(p), old.revision)
    stream = kv.watch(p, prefix_end(p), old.revision)
    with pytest.raises(CompactedError):
        await next_batch(stream)
    after = await kv.range(p, prefix_end(p), kept.revision)  # the compacted revision itself stays readable
    assert [(x.key, x.value) for x in after.kvs] == [(p + "a", b"a2")]
    assert [x.value for x in (await kv.range(p, prefix_end(p))).kvs] == [b"a2", b"b1"]


@run
async def test_a_key_with_a_lease_is_deleted_when_it_expires(kv: KV, p: str) -> None:
    start = await kv.current_revision()
    await kv.create(p + "short", b"s", ttl=1)
    await kv.create(p + "kept", b"k")
    stream = kv.watch(p, prefix_end(p), start + 1)
    try:
        seen: list[tuple[str, str]] = []
        while (DELETE, p + "short") not in seen:
            seen.extend((e.type, e.key) for e in (await next_batch(stream)).events)
        assert await kv.get(p + "short") is None and await kv.get(p + "kept") is not None
    finally:
        await stream.aclose()  # type: ignore[attr-defined]


@run
async def test_compactors_sharing_a_store_compact_once_per_interval(kv: KV, p: str) -> None:
    one, two = Compactor(kv, 0), Compactor(kv, 0)
    await one.compact_once()  # claims the key (nothing to compact yet)
    await two.compact_once()  # lost the swap: learns the key's state instead
    written = await kv.create(p + "a", b"a1")
    await one.compact_once()  # the next interval: compacts to what it saw at the previous one
    compacted = await kv.compacted_revision()
    assert compacted >= written.revision - 1
    marker = await kv.get(COMPACT_REV_KEY)
    assert marker is not None
    await two.compact_once()  # one already took this interval: `two` does not write or compact
    assert (await kv.get(COMPACT_REV_KEY)).mod_revision == marker.mod_revision  # type: ignore[union-attr]
    await two.compact_once()  # the interval after: its turn
    assert (await kv.get(COMPACT_REV_KEY)).mod_revision > marker.mod_revision  # type: ignore[union-attr]


# ---- etcd only: several endpoints, TLS ----


def test_etcd_fails_over_when_a_member_or_the_leader_dies(etcd_cluster: Any) -> None:
    from kube_apiserver.storage.etcd3 import EtcdKV

    p = "/registry/failover/"

    async def main() -> None:
        kv = await EtcdKV.open(etcd_cluster.client_urls)  # talks to the first member
        stream = kv.watch(p, prefix_end(p), await kv.current_revision() + 1)
        try:
            before = await kv.create(p + "a", b"1")
            assert await events_until(stream, before.revision) == [(PUT, p + "a", b"1", None)]
            etcd_cluster.kill(0)
            after = await kv.create(p + "b", b"2")  # on another member
            updated = await kv.update(p + "a", b"3", before.revision)
            assert after.succeeded and updated.succeeded
            # the watch reopens on a live member from where it was: nothing lost, nothing twice
            assert await events_until(stream, updated.revision) == [
                (PUT, p + "b", b"2", None),
                (PUT, p + "a", b"3", b"1"),
            ]
            assert [x.value for x in (await kv.range(p, prefix_end(p))).kvs] == [b"3", b"2"]
            etcd_cluster.start_member(0)  # back, then the leader dies: writes resume after the election
            etcd_cluster.kill(etcd_cluster.leader_index())
            elected = await kv.create(p + "c", b"4")
            assert elected.succeeded
            assert await events_until(stream, elected.revision) == [(PUT, p + "c", b"4", None)]
        finally:
            await stream.aclose()  # type: ignore[attr-defined]
            await kv.close()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_etcd_over_tls_with_a_client_certificate(tmp_path: Any) -> None:
    from etcd import EtcdCluster, make_tls
    from kube_apiserver.storage.etcd3 import EtcdError, EtcdKV, TLSConfig

    tls = make_tls(str(tmp_path / "pki"))

    async def main(urls: list[str]) -> None:
        kv = await EtcdKV.open(urls, tls=TLSConfig(tls.ca_file, tls.client_cert, tls.client_key))
        try:
            assert (await kv.create("/registry/tls/a", b"v")).succeeded
            assert (await kv.get("/registry/tls/a")).value == b"v"  # type: ignore[union-attr]
        finally:
            await kv.close()
        without_certificate = EtcdKV(urls, tls=TLSConfig(tls.ca_file))
        without_certificate.client.failover_window = 0.5  # refused every time: no need to keep trying
        try:
            with pytest.raises(EtcdError):
                await asyncio.wait_for(without_certificate.get("/registry/tls/a"), 30)
        finally:
            await without_certificate.close()

    with EtcdCluster(str(tmp_path / "etcd"), tls=tls) as cluster:
        asyncio.run(main(cluster.client_urls))


def test_etcd_prefix_keeps_keys_under_it(etcd: Any) -> None:
    from kube_apiserver.storage.etcd3 import EtcdKV

    async def main() -> None:
        custom = await EtcdKV.open(etcd.client_urls, prefix="/custom")
        raw = await EtcdKV.open(etcd.client_urls, prefix="/registry")
        try:
            await custom.create("/registry/prefixed/a", b"v")
            assert (await raw.get("/custom/prefixed/a")).value == b"v"  # type: ignore[union-attr]
            assert await raw.get("/registry/prefixed/a") is None
            listed = await custom.range("/registry/prefixed/", "/registry/prefixed0")
            assert [x.key for x in listed.kvs] == ["/registry/prefixed/a"]
        finally:
            await custom.close()
            await raw.close()

    asyncio.run(main())


def test_etcd_writes_within_a_window_share_a_lease_and_survive_its_loss(etcd: Any) -> None:
    from kube_apiserver.apimachinery.protowire import varint_field
    from kube_apiserver.storage.etcd3 import EtcdKV

    p = "/registry/leases/"

    async def main() -> None:
        kv = await EtcdKV.open(etcd.client_urls)
        try:
            first = await kv._leases.get_lease(3600)
            assert await kv._leases.get_lease(3600) == first  # reused within the window (lease_manager.go)
            await kv.client.unary("/etcdserverpb.Lease/LeaseRevoke", varint_field(1, first))
            assert (await kv.create(p + "a", b"v", ttl=3600)).succeeded  # granted anew
            assert await kv._leases.get_lease(3600) != first
        finally:
            await kv.close()

    asyncio.run(main())
