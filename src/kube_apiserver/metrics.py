"""Labelled counters and histograms in Prometheus' text format (component-base/metrics, the little of it this
server needs). A component keeps its own, per server, and adds its `lines` to the server's /metrics. Each
metric has a lock: storage transformations record from worker threads while /metrics reads."""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Iterable

Labels = tuple[str, ...]


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    return tuple(start * factor**i for i in range(count))


def escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(names: Labels, values: Labels) -> str:
    return ",".join(f'{name}="{escape(value)}"' for name, value in zip(names, values, strict=True))


class Counter:
    def __init__(self, name: str, help_text: str, labels: Labels, stability: str = "ALPHA"):
        self.name, self.labels = name, labels
        self.header = [f"# HELP {name} [{stability}] {help_text}", f"# TYPE {name} counter"]
        self.values: dict[Labels, float] = {}
        self._lock = threading.Lock()

    def inc(self, *labels: str, amount: float = 1) -> None:
        with self._lock:
            self.values[labels] = self.values.get(labels, 0) + amount

    def lines(self) -> list[str]:
        with self._lock:
            values = sorted(self.values.items())
        if not values:
            return []
        return [*self.header, *(f"{self.name}{{{_labels(self.labels, key)}}} {_number(value)}"
                                for key, value in values)]


class Histogram:
    def __init__(self, name: str, help_text: str, labels: Labels, buckets: Iterable[float], stability: str = "ALPHA"):
        self.name, self.labels, self.buckets = name, labels, tuple(buckets)
        self.header = [f"# HELP {name} [{stability}] {help_text}", f"# TYPE {name} histogram"]
        self.values: dict[Labels, list[float]] = {}  # a count per bucket, then the sum and the count
        self._lock = threading.Lock()

    def observe(self, *labels: str, value: float) -> None:
        index = bisect.bisect_left(self.buckets, value)
        with self._lock:
            counts = self.values.get(labels)
            if counts is None:
                counts = self.values[labels] = [0.0] * (len(self.buckets) + 2)
            if index < len(self.buckets):
                counts[index] += 1
            counts[-2] += value
            counts[-1] += 1

    def lines(self) -> list[str]:
        with self._lock:
            values = sorted((key, list(counts)) for key, counts in self.values.items())
        if not values:
            return []
        out = list(self.header)
        for key, counts in values:
            labels = _labels(self.labels, key)
            sep = "," if labels else ""
            cumulative = 0.0
            for bound, count in zip(self.buckets, counts, strict=False):
                cumulative += count
                out.append(f'{self.name}_bucket{{{labels}{sep}le="{bound!r}"}} {int(cumulative)}')
            out.append(f'{self.name}_bucket{{{labels}{sep}le="+Inf"}} {int(counts[-1])}')
            out.append(f"{self.name}_sum{{{labels}}} {counts[-2]}")
            out.append(f"{self.name}_count{{{labels}}} {int(counts[-1])}")
        return out


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def collector(*metrics: Counter | Histogram) -> Callable[[], list[str]]:
    """The exposition lines of several metrics, for the server registry's collectors."""
    return lambda: [line for metric in metrics for line in metric.lines()]


def merge(expositions: Iterable[str], once: frozenset[str] = frozenset()) -> str:
    """Several processes' expositions as one server's (--workers): each sample's values summed (counters,
    histograms, and gauges of what each process holds: requests in flight, seats), except in the families
    of `once`, gauges of state every process sees alike (stored object counts), whose greatest value is
    taken. Families and samples keep the order they first came in."""
    families: dict[str, tuple[list[str], dict[str, float]]] = {}
    for text in expositions:
        family = ""
        headers, samples = families.setdefault(family, ([], {}))
        for line in text.splitlines():
            if line.startswith("#"):
                parts = line.split(" ", 3)
                if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                    if parts[2] != family:
                        family = parts[2]
                        headers, samples = families.setdefault(family, ([], {}))
                    if line not in headers:
                        headers.append(line)
            elif line:
                key, _, value = line.rpartition(" ")
                number = float(value)
                if key not in samples:
                    samples[key] = number
                elif family in once:
                    samples[key] = max(samples[key], number)
                else:
                    samples[key] += number
    out: list[str] = []
    for headers, samples in families.values():
        out += headers
        out += [f"{key} {_number(value)}" for key, value in samples.items()]
    return "\n".join(out) + "\n"
