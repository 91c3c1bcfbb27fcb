"""A port range flag value, like k8s.io/apimachinery/pkg/util/net.PortRange ("30000-32767", "30000+767")."""

from __future__ import annotations

from dataclasses import dataclass

from kube_apiserver.apimachinery.gostrconv import atoi


@dataclass(frozen=True)
class PortRange:
    """Ports base..base+size-1 inclusive; size 0 means unset."""

    base: int = 0
    size: int = 0

    @property
    def first(self) -> int:
        return self.base

    @property
    def last(self) -> int:
        return self.base + self.size - 1

    def contains(self, port: int) -> bool:
        return self.base <= port < self.base + self.size

    def __str__(self) -> str:
        return "" if self.size == 0 else f"{self.first}-{self.last}"

    @classmethod
    def parse(cls, value: str) -> PortRange:
        """Parses "low-high", "low+offset" or a single port; raises ValueError with k8s' messages."""
        value = value.strip()
        if not value:
            return cls()
        low, high = _bounds(value)
        if low > 65535 or high > 65535:
            raise ValueError(f"the port range cannot be greater than 65535: {value}")
        if high < low:
            raise ValueError(f"end port cannot be less than start port: {value}")
        return cls(low, 1 + high - low)


def _bounds(value: str) -> tuple[int, int]:
    has_hyphen, has_plus = "-" in value, "+" in value
    if has_hyphen and has_plus:
        raise ValueError(f"unable to parse port range: {value}")
    if has_hyphen:
        low, _, high = value.partition("-")
        return atoi(low), atoi(high)
    if has_plus:
        low, _, offset = value.partition("+")
        return atoi(low), atoi(low) + atoi(offset)
    port = atoi(value)
    return port, port
