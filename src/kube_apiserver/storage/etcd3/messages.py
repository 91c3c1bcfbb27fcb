"""etcd v3 API messages on the protobuf wire, encoded and decoded by hand (no generated code).

Field numbers are etcd's (api/etcdserverpb/rpc.proto, api/mvccpb/kv.proto); only the fields this
backend sends or reads are here. Methods are called by their gRPC paths with raw bytes."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...apimachinery.protowire import bytes_field, fields_of, varint_field

RANGE = "/etcdserverpb.KV/Range"
TXN = "/etcdserverpb.KV/Txn"
COMPACT = "/etcdserverpb.KV/Compact"
PUT_METHOD = "/etcdserverpb.KV/Put"
WATCH = "/etcdserverpb.Watch/Watch"
LEASE_GRANT = "/etcdserverpb.Lease/LeaseGrant"
STATUS = "/etcdserverpb.Maintenance/Status"  # StatusRequest is empty

# Compare.CompareResult and Compare.CompareTarget
EQUAL, GREATER, LESS, NOT_EQUAL = 0, 1, 2, 3
TARGET_VERSION, TARGET_CREATE, TARGET_MOD, TARGET_VALUE = 0, 1, 2, 3
EVENT_DELETE = 1  # mvccpb.Event.EventType (PUT is 0)


def _int64(value: int) -> int:
    """A varint read as a signed int64 (negative numbers arrive as their two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value


# ---- requests ----


def range_request(
    key: bytes, range_end: bytes = b"", limit: int = 0, revision: int = 0, count_only: bool = False
) -> bytes:
    out = bytes_field(1, key)
    if range_end:
        out += bytes_field(2, range_end)
    if limit:
        out += varint_field(3, limit)
    if revision:
        out += varint_field(4, revision)
    if count_only:
        out += varint_field(9, 1)
    return out


def put_request(key: bytes, value: bytes, lease: int = 0) -> bytes:
    out = bytes_field(1, key) + bytes_field(2, value)
    return out + varint_field(3, lease) if lease else out


def delete_request(key: bytes) -> bytes:
    return bytes_field(1, key)


def compare(key: bytes, target: int, result: int, number: int) -> bytes:
    """A Compare of the key's version (4), create_revision (5) or mod_revision (6) with `number`."""
    target_field = {TARGET_VERSION: 4, TARGET_CREATE: 5, TARGET_MOD: 6}[target]
    out = varint_field(1, result) if result else b""
    out += varint_field(2, target) if target else b""
    return out + bytes_field(3, key) + varint_field(target_field, number)


def op_range(request: bytes) -> bytes:
    return bytes_field(1, request)


def op_put(request: bytes) -> bytes:
    return bytes_field(2, request)


def op_delete(request: bytes) -> bytes:
    return bytes_field(3, request)


def txn_request(compares: list[bytes], success: list[bytes], failure: list[bytes]) -> bytes:
    return (
        b"".join(bytes_field(1, c) for c in compares)
        + b"".join(bytes_field(2, s) for s in success)
        + b"".join(bytes_field(3, f) for f in failure)
    )


def compaction_request(revision: int) -> bytes:
    return varint_field(1, revision)


def lease_grant_request(ttl: int) -> bytes:
    return varint_field(1, ttl)


def watch_create_request(key: bytes, range_end: bytes, start_revision: int) -> bytes:
    """A WatchRequest creating a watch with prev_kv and periodic progress notifications."""
    create = bytes_field(1, key) + bytes_field(2, range_end) + varint_field(3, start_revision)
    create += varint_field(4, 1) + varint_field(6, 1)
    return bytes_field(1, create)


WATCH_PROGRESS_REQUEST = bytes_field(3, b"")  # WatchRequest{progress_request: {}}


# ---- responses ----


@dataclass(slots=True)
class KeyValue:
    key: bytes = b""
    create_revision: int = 0
    mod_revision: int = 0
    version: int = 0
    value: bytes = b""
    lease: int = 0


def key_value(data: bytes) -> KeyValue:
    kv = KeyValue()
    for number, _, value in fields_of(data):
        if number == 1:
            kv.key = value
        elif number == 2:
            kv.create_revision = _int64(value)
        elif number == 3:
            kv.mod_revision = _int64(value)
        elif number == 4:
            kv.version = _int64(value)
        elif number == 5:
            kv.value = value
        elif number == 6:
            kv.lease = _int64(value)
    return kv


def header_revision(data: bytes) -> int:
    for number, _, value in fields_of(data):
        if number == 3:
            return _int64(value)
    return 0


@dataclass(slots=True)
class RangeResponse:
    revision: int = 0
    kvs: list[KeyValue] = field(default_factory=list)
    more: bool = False
    count: int = 0


def range_response(data: bytes) -> RangeResponse:
    resp = RangeResponse()
    for number, _, value in fields_of(data):
        if number == 1:
            resp.revision = header_revision(value)
        elif number == 2:
            resp.kvs.append(key_value(value))
        elif number == 3:
            resp.more = bool(value)
        elif number == 4:
            resp.count = _int64(value)
    return resp


@dataclass(slots=True)
class TxnResponse:
    revision: int = 0
    succeeded: bool = False
    ranges: list[RangeResponse] = field(default_factory=list)  # the range results among the responses


def txn_response(data: bytes) -> TxnResponse:
    resp = TxnResponse()
    for number, _, value in fields_of(data):
        if number == 1:
            resp.revision = header_revision(value)
        elif number == 2:
            resp.succeeded = bool(value)
        elif number == 3:
            for op_number, _, op in fields_of(value):
                if op_number == 1:  # ResponseOp.response_range
                    resp.ranges.append(range_response(op))
    return resp


def status_version(data: bytes) -> str:
    """StatusResponse.version: the etcd release the member runs."""
    for number, _, value in fields_of(data):
        if number == 2:
            return value.decode(errors="replace")
    return ""


def lease_grant_response(data: bytes) -> tuple[int, str]:
    """(lease ID, error)."""
    lease, error = 0, ""
    for number, _, value in fields_of(data):
        if number == 2:
            lease = _int64(value)
        elif number == 4:
            error = value.decode(errors="replace")
    return lease, error


@dataclass(slots=True)
class Event:
    deleted: bool
    kv: KeyValue
    prev_kv: KeyValue | None


def event(data: bytes) -> Event:
    deleted, kv, prev = False, KeyValue(), None
    for number, _, value in fields_of(data):
        if number == 1:
            deleted = value == EVENT_DELETE
        elif number == 2:
            kv = key_value(value)
        elif number == 3:
            prev = key_value(value)
    return Event(deleted, kv, prev)


@dataclass(slots=True)
class WatchResponse:
    revision: int = 0
    watch_id: int = 0
    created: bool = False
    canceled: bool = False
    compact_revision: int = 0
    cancel_reason: str = ""
    events: list[Event] = field(default_factory=list)


def watch_response(data: bytes) -> WatchResponse:
    resp = WatchResponse()
    for number, _, value in fields_of(data):
        if number == 1:
            resp.revision = header_revision(value)
        elif number == 2:
            resp.watch_id = _int64(value)
        elif number == 3:
            resp.created = bool(value)
        elif number == 4:
            resp.canceled = bool(value)
        elif number == 5:
            resp.compact_revision = _int64(value)
        elif number == 6:
            resp.cancel_reason = value.decode(errors="replace")
        elif number == 11:
            resp.events.append(event(value))
    return resp
