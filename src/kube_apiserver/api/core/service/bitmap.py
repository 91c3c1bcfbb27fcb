"""The allocation bitmap of a range (pkg/registry/core/service/allocator/bitmap.go): bit i set when offset
i of the range is allocated. Its snapshot is the bitmap as Go's big.Int.Bytes() (big-endian, no leading
zero bytes, empty when nothing is allocated), the `data` of the stored core/v1 RangeAllocation, so
kube-apiserver and this server read each other's allocations. Python's int is the big integer."""

from __future__ import annotations

import random
from collections.abc import Iterator

from .ipallocator import AllocationError

MISMATCHED_RANGE = "the provided range does not match the current range"


class RangeMismatchError(AllocationError):
    def __init__(self) -> None:
        super().__init__(MISMATCHED_RANGE)


def to_bytes(bits: int) -> bytes:
    """big.Int.Bytes(): the absolute value, big-endian, in as few bytes as it takes."""
    return bits.to_bytes((bits.bit_length() + 7) // 8, "big")


def from_bytes(data: bytes) -> int:
    """big.Int.SetBytes()."""
    return int.from_bytes(data, "big")


class AllocationBitmap:
    """`size` items; dynamic allocations pick a random free item of the upper part, items `offset` and
    above, before the lower part (randomScanStrategyWithOffset: KEP-3070 and KEP-3668)."""

    def __init__(self, size: int, range_spec: str, offset: int = 0):
        self.size = size
        self.range_spec = range_spec
        self.offset = offset if 0 < offset < size else 0
        self.bits = 0
        self.count = 0

    def allocate(self, item: int) -> bool:
        """False when the item is allocated already."""
        if not 0 <= item < self.size:
            raise ValueError(f"offset {item} out of range [0,{self.size}]")
        if self.has(item):
            return False
        self.bits |= 1 << item
        self.count += 1
        return True

    def allocate_next(self) -> int | None:
        """A free item, or None when the range is full."""
        if self.count >= self.size:
            return None
        for item in (*self._scan(self.offset, self.size), *self._scan(0, self.offset)):
            if not self.has(item):
                self.allocate(item)
                return item
        return None

    @staticmethod
    def _scan(low: int, high: int) -> Iterator[int]:
        """low..high-1 from a random start, wrapping around."""
        if high <= low:
            return
        start = random.randrange(high - low)
        for step in range(high - low):
            yield low + (start + step) % (high - low)

    def release(self, item: int) -> None:
        if self.has(item):
            self.bits &= ~(1 << item)
            self.count -= 1

    def has(self, item: int) -> bool:
        return 0 <= item < self.size and bool(self.bits >> item & 1)

    def items(self) -> list[int]:
        """The allocated items, lowest first (ForEach)."""
        bits, found, item = self.bits, [], 0
        while bits:
            if bits & 1:
                found.append(item)
            bits >>= 1
            item += 1
        return found

    def free(self) -> int:
        return self.size - self.count

    def snapshot(self) -> tuple[str, bytes]:
        return self.range_spec, to_bytes(self.bits)

    def restore(self, range_spec: str, data: bytes) -> None:
        if range_spec != self.range_spec:
            raise RangeMismatchError()
        self.bits = from_bytes(data)
        self.count = self.bits.bit_count()
