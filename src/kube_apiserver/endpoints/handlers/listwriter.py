"""Writing a large list without holding the event loop: the items are converted and encoded a slice at a time,
yielding to the loop whenever a slice has taken a few milliseconds, so health checks and small requests are
answered while a list of tens of thousands of objects is written. The bytes are exactly those the one-shot
encoders write (kube-apiserver's streaming list encoders write the same bytes as its plain ones)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from ...apimachinery import serializer

Object = dict[str, Any]

# Items converted or encoded between two looks at the clock, so that one slice stays near the yield budget:
# orjson writes a 1 KiB object in microseconds, the protobuf encoder (Python) in about 0.3 ms, PyYAML in about 2.
SLICE_ITEMS = 64
PROTOBUF_SLICE_ITEMS = 16
YAML_SLICE_ITEMS = 2
# How long the writer keeps the loop before letting others run.
YIELD_AFTER_SECONDS = 0.005
# Below this many items the one-shot encoders are used: a list this short cannot hold the loop for long.
CHUNKED_FROM_ITEMS = 256


class Yielder:
    """Yields to the event loop once YIELD_AFTER_SECONDS have passed since it last did."""

    def __init__(self) -> None:
        self._since = time.perf_counter()

    async def maybe_yield(self) -> None:
        now = time.perf_counter()
        if now - self._since >= YIELD_AFTER_SECONDS:
            await asyncio.sleep(0)
            self._since = time.perf_counter()


def is_large(obj: Object, key: str = "items") -> bool:
    items = obj.get(key)
    return isinstance(items, list) and len(items) >= CHUNKED_FROM_ITEMS


async def map_sliced(items: list[Any], convert: Callable[[list[Any]], list[Any]], yielder: Yielder) -> list[Any]:
    """convert applied to consecutive slices of items, the results concatenated, yielding between slices."""
    out: list[Any] = []
    for start in range(0, len(items), SLICE_ITEMS):
        out.extend(convert(items[start:start + SLICE_ITEMS]))
        await yielder.maybe_yield()
    return out


def _last_key(obj: Object, key: str) -> bool:
    return bool(obj) and next(reversed(obj)) == key


async def encode_json(obj: Object, key: str, yielder: Yielder) -> bytes | None:
    """Compact JSON of obj whose last member `key` is a long list, encoded a slice at a time; None when obj
    is not laid out so (the caller encodes it in one go)."""
    if not _last_key(obj, key):
        return None
    head = serializer.encode_json({k: v for k, v in obj.items() if k != key})  # "{...}\n"
    parts = [head[:-2] + b"," if len(head) > 3 else b"{", b'"' + key.encode() + b'":[']
    items = obj[key]
    for start in range(0, len(items), SLICE_ITEMS):
        encoded = serializer.encode_json(items[start:start + SLICE_ITEMS])  # "[a,b]\n"
        parts.append(encoded[1:-2] if start == 0 else b"," + encoded[1:-2])
        await yielder.maybe_yield()
    parts.append(b"]}\n")
    return b"".join(parts)


async def encode_yaml(obj: Object, key: str, yielder: Yielder) -> bytes | None:
    """YAML of obj with the long list `key`, as serializer.encode_yaml writes it (keys sorted, the sequence
    not indented under its key), a slice at a time; None when the list is empty."""
    items = obj[key]
    if not items:
        return None
    before = {k: v for k, v in obj.items() if k < key}
    after = {k: v for k, v in obj.items() if k > key}
    parts = [serializer.encode_yaml(before)] if before else []
    marker = (key + ":\n").encode()
    for start in range(0, len(items), YAML_SLICE_ITEMS):
        encoded = serializer.encode_yaml({key: items[start:start + YAML_SLICE_ITEMS]})
        if not encoded.startswith(marker):
            return None  # a key PyYAML quotes: written in one go
        parts.append(encoded if start == 0 else encoded[len(marker):])
        await yielder.maybe_yield()
    if after:
        parts.append(serializer.encode_yaml(after))
    return b"".join(parts)


async def encode_protobuf(obj: Object, yielder: Yielder) -> bytes | None:
    """A list in protobuf (envelope, ListMeta, then the items as field 2), its items encoded a slice at a
    time; None when its kind has no protobuf form or its fields are not laid out so."""
    from ...apimachinery import protobuf  # loaded by the first protobuf client

    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    message = protobuf.message_of(api_version, kind)
    if message is None:
        return None
    rest = {k: v for k, v in obj.items() if k != "items"}
    prefix = protobuf.encode_message(message, rest)  # every field but the items, which come last
    parts = [prefix]
    items = obj["items"]
    for start in range(0, len(items), PROTOBUF_SLICE_ITEMS):
        encoded = protobuf.encode_message(message, {**rest, "items": items[start:start + PROTOBUF_SLICE_ITEMS]})
        if not encoded.startswith(prefix):
            return None
        parts.append(encoded[len(prefix):])
        await yielder.maybe_yield()
    return protobuf.envelope(api_version, kind, b"".join(parts))
