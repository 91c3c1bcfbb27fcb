"""apiserver_storage_transformation_operations_total and apiserver_storage_transformation_duration_seconds
(k8s.io/apiserver/pkg/storage/value/metrics.go): one set per server, rendered into its /metrics."""

from __future__ import annotations

import bisect
import threading
from typing import Any

# metrics.ExponentialBuckets(5e-6, 2, 25): in-process ciphers take microseconds, a KMS hundreds of ms.
BUCKETS = tuple(5e-6 * 2**i for i in range(25))
OPERATIONS_HELP = (
    "# HELP apiserver_storage_transformation_operations_total [ALPHA] Total number of transformations. "
    "Successful transformation will have a status 'OK' and a varied status string when the transformation "
    "fails. The status, resource, and transformation_type fields can be used for alerting purposes. For "
    "example, you can monitor for encryption/decryption failures using the transformation_type (e.g., "
    "from_storage for decryption and to_storage for encryption). Additionally, these fields can be used to "
    "ensure that the correct transformers are applied to each resource."
)
DURATION_HELP = (
    "# HELP apiserver_storage_transformation_duration_seconds [ALPHA] Latencies in seconds of value "
    "transformation operations."
)
NON_GRPC = "unknown-non-grpc"  # a failure before any KMS call: not a gRPC status


class TransformationMetrics:
    """Counts every transformation by (resource, type, prefix, status) and times the successful ones by
    (type, prefix). Transformations run on the event loop and in worker threads alike: a lock guards it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.operations: dict[tuple[str, str, str, str], int] = {}
        self.durations: dict[tuple[str, str], list[float]] = {}  # bucket counts, then sum and count

    def record(self, resource: str, kind: str, prefix: str, seconds: float, err: Any = None) -> None:
        status = "OK" if err is None else (getattr(err, "code", "") or NON_GRPC)
        with self._lock:
            key = (resource, kind, prefix, status)
            self.operations[key] = self.operations.get(key, 0) + 1
            if err is not None:
                return
            hist = self.durations.get((kind, prefix))
            if hist is None:
                hist = self.durations[(kind, prefix)] = [0.0] * (len(BUCKETS) + 2)
            index = bisect.bisect_left(BUCKETS, seconds)
            if index < len(BUCKETS):
                hist[index] += 1
            hist[-2] += seconds
            hist[-1] += 1

    def exposition(self) -> list[str]:
        with self._lock:
            operations = sorted(self.operations.items())
            durations = sorted((k, list(v)) for k, v in self.durations.items())
        if not operations:
            return []
        out = [OPERATIONS_HELP, "# TYPE apiserver_storage_transformation_operations_total counter"]
        for (resource, kind, prefix, status), count in operations:
            out.append(
                "apiserver_storage_transformation_operations_total{"
                f'resource="{_escape(resource)}",status="{status}",transformation_type="{kind}",'
                f'transformer_prefix="{_escape(prefix)}"}} {count}'
            )
        if durations:
            out += [DURATION_HELP, "# TYPE apiserver_storage_transformation_duration_seconds histogram"]
        for (kind, prefix), hist in durations:
            labels = f'transformation_type="{kind}",transformer_prefix="{_escape(prefix)}"'
            cumulative = 0.0
            for bound, count in zip(BUCKETS, hist, strict=False):
                cumulative += count
                out.append(
                    f'apiserver_storage_transformation_duration_seconds_bucket{{{labels},le="{bound!r}"}} '
                    f"{int(cumulative)}"
                )
            out.append(
                f'apiserver_storage_transformation_duration_seconds_bucket{{{labels},le="+Inf"}} {int(hist[-1])}'
            )
            out.append(f"apiserver_storage_transformation_duration_seconds_sum{{{labels}}} {hist[-2]}")
            out.append(f"apiserver_storage_transformation_duration_seconds_count{{{labels}}} {int(hist[-1])}")
        return out


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
