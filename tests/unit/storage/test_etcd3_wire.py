"""The etcd3 backend without an etcd: its hand-written messages against etcd's field numbers, and a write
retried after an attempt that may have gone through (a leader change) reporting what it finds."""

from __future__ import annotations

import asyncio

from kube_apiserver.apimachinery.protowire import bytes_field, varint_field
from kube_apiserver.storage.etcd3 import EtcdKV
from kube_apiserver.storage.etcd3 import messages as m


def key_value(key: bytes, value: bytes, create: int, mod: int, version: int = 1) -> bytes:
    return (
        bytes_field(1, key)
        + varint_field(2, create)
        + varint_field(3, mod)
        + varint_field(4, version)
        + bytes_field(5, value)
    )


def txn_response(revision: int, succeeded: bool, found: bytes | None) -> bytes:
    header = bytes_field(1, varint_field(3, revision))
    ranged = bytes_field(1, bytes_field(2, found) if found else b"")  # ResponseOp.response_range
    return header + (varint_field(2, 1) if succeeded else b"") + bytes_field(3, ranged)


def test_requests_use_etcds_field_numbers():
    # RangeRequest{key: "a", range_end: "b", limit: 5, revision: 7, count_only: true}
    assert m.range_request(b"a", b"b", 5, 7, True) == b"\x0a\x01a\x12\x01b\x18\x05\x20\x07\x48\x01"
    # Compare{result: EQUAL, target: MOD, key: "k", mod_revision: 9}
    assert m.compare(b"k", m.TARGET_MOD, m.EQUAL, 9) == b"\x10\x02\x1a\x01k\x30\x09"
    # WatchRequest{create_request: {key, range_end, start_revision: 3, progress_notify, prev_kv}}
    assert m.watch_create_request(b"a", b"b", 3) == b"\x0a\x0c\x0a\x01a\x12\x01b\x18\x03\x20\x01\x30\x01"
    assert m.WATCH_PROGRESS_REQUEST == b"\x1a\x00"


def test_watch_response_events_with_previous_values():
    event = varint_field(1, 1) + bytes_field(2, key_value(b"/registry/x", b"", 0, 12, 0))
    event += bytes_field(3, key_value(b"/registry/x", b"old", 4, 11, 2))
    data = bytes_field(1, varint_field(3, 12)) + varint_field(2, 5) + bytes_field(11, event)
    resp = m.watch_response(data)
    assert (resp.revision, resp.watch_id, resp.created, resp.canceled) == (12, 5, False, False)
    [decoded] = resp.events
    assert decoded.deleted and decoded.kv.mod_revision == 12 and decoded.prev_kv.value == b"old"  # type: ignore[union-attr]
    assert m.watch_response(varint_field(2, (1 << 64) - 1)).watch_id == -1  # a progress response's id


class FakeClient:
    """Answers each txn with the given response after an attempt that may have been applied."""

    def __init__(self, response: bytes):
        self.response = response

    async def unary_write(self, method: str, request: bytes, retry: bool = True) -> tuple[bytes, bool]:
        return self.response, True

    async def close(self) -> None:
        pass


def run_with(response: bytes, write):  # noqa: ANN001, ANN201 - a coroutine function on the store
    async def main():
        kv = EtcdKV(["http://127.0.0.1:1"])
        await kv.client.close()
        kv.client = FakeClient(response)  # type: ignore[assignment]
        return await write(kv)

    return asyncio.run(main())


def test_a_retried_write_that_finds_itself_succeeded():
    mine = key_value(b"/registry/a", b"mine", 20, 20)
    created = run_with(txn_response(21, False, mine), lambda kv: kv.create("/registry/a", b"mine"))
    assert (created.succeeded, created.revision) == (True, 20)
    updated = run_with(txn_response(21, False, mine), lambda kv: kv.update("/registry/a", b"mine", 15))
    assert (updated.succeeded, updated.revision) == (True, 20)
    deleted = run_with(txn_response(22, False, None), lambda kv: kv.delete("/registry/a", 20))
    assert (deleted.succeeded, deleted.revision) == (True, 22)


def test_a_retried_write_that_finds_another_value_conflicts():
    theirs = key_value(b"/registry/a", b"theirs", 20, 20)
    created = run_with(txn_response(21, False, theirs), lambda kv: kv.create("/registry/a", b"mine"))
    assert not created.succeeded and created.current.value == b"theirs"  # type: ignore[union-attr]
    deleted = run_with(txn_response(21, False, theirs), lambda kv: kv.delete("/registry/a", 15))
    assert not deleted.succeeded and deleted.current.mod_revision == 20  # type: ignore[union-attr]
