"""The frames between a worker and the storage process: a 4-byte big-endian length, then a marshalled tuple.

marshal is the interpreter's own encoding of plain values (tuples, bytes, str, int, float, None): the
fastest codec the standard library has, and safe here because both ends are this program, connected by a
socket pair the storage process created and handed to its own children (nothing else can reach it).

Requests are (id, op, *args); answers (id, OK or ERROR, result); watch frames (0, WATCH, watch_id, batch)."""

from __future__ import annotations

import asyncio
import marshal
import struct
from collections.abc import Iterator

from ..kv import CompactedError, FutureRevisionError, KeyValue, KVBatch, KVEvent, RangeResult, TxnResult

HEADER = struct.Struct(">I")
MAX_FRAME = 1 << 30  # a corrupt length is a broken connection, not an allocation of 4 GiB
OK, ERROR, WATCH = 1, 2, 3
# watch frames: a batch, the end of the stream, or its error
BATCH, END = 0, 1


class FrameTooLargeError(ValueError):
    """A message over MAX_FRAME: the other end would take its length for a broken connection."""


def frame(message: tuple) -> bytes:
    body = marshal.dumps(message, 4)
    if len(body) > MAX_FRAME:
        raise FrameTooLargeError(f"a message of {len(body)} bytes is over the {MAX_FRAME}-byte frame bound")
    return HEADER.pack(len(body)) + body


class Outbox:
    """The frames sent during one turn of the event loop leave in one write at its end: one system call and
    one wake-up of the other process for what many requests (or watch batches) sent together."""

    def __init__(self, transport: asyncio.Transport):
        self.transport = transport
        self.frames: list[bytes] = []

    def send(self, message: tuple) -> None:
        if not self.frames:
            asyncio.get_running_loop().call_soon(self.flush)
        self.frames.append(frame(message))

    def flush(self) -> None:
        frames, self.frames = self.frames, []
        if frames and not self.transport.is_closing():
            self.transport.write(b"".join(frames) if len(frames) > 1 else frames[0])


class Decoder:
    """Splits a byte stream into messages."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> Iterator[tuple]:
        buffer = self._buffer
        buffer += data
        offset = 0
        while len(buffer) - offset >= 4:
            (size,) = HEADER.unpack_from(buffer, offset)
            if size > MAX_FRAME:
                raise ValueError(f"frame of {size} bytes")
            end = offset + 4 + size
            if len(buffer) < end:
                break
            yield marshal.loads(memoryview(buffer)[offset + 4:end])
            offset = end
        if offset:
            del buffer[:offset]


def kv_out(kv: KeyValue | None) -> tuple | None:
    return None if kv is None else (kv.key, kv.value, kv.create_revision, kv.mod_revision)


def kv_in(row: tuple | None) -> KeyValue | None:
    return None if row is None else KeyValue(*row)


def txn_out(result: TxnResult) -> tuple:
    return (result.succeeded, result.revision, kv_out(result.current))


def txn_in(row: tuple) -> TxnResult:
    return TxnResult(row[0], row[1], kv_in(row[2]))


def range_out(result: RangeResult) -> tuple:
    return [kv_out(kv) for kv in result.kvs], result.revision, result.more


def range_in(row: tuple) -> RangeResult:
    return RangeResult([KeyValue(*kv) for kv in row[0]], row[1], row[2])


def batch_out(batch: KVBatch) -> tuple:
    return ([(e.type, e.key, e.value, e.revision, e.create_revision, e.prev_value) for e in batch.events],
            batch.revision)


def batch_in(row: tuple) -> KVBatch:
    return KVBatch([KVEvent(*e) for e in row[0]], row[1])


def error_out(err: Exception) -> tuple:
    if isinstance(err, CompactedError):
        return ("compacted", err.requested, err.compacted)
    if isinstance(err, FutureRevisionError):
        return ("future", err.requested, err.current)
    return ("error", type(err).__name__, str(err))


class RemoteError(Exception):
    """The storage process failed a request: the type and message of its error."""


def error_in(row: tuple) -> Exception:
    kind, first, second = row
    if kind == "compacted":
        return CompactedError(first, second)
    if kind == "future":
        return FutureRevisionError(first, second)
    return RemoteError(f"{first}: {second}")
