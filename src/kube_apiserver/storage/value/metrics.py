"""apiserver_storage_transformation_operations_total and apiserver_storage_transformation_duration_seconds
(k8s.io/apiserver/pkg/storage/value/metrics.go): one set per server, rendered into its /metrics."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from ... import metrics

# metrics.ExponentialBuckets(5e-6, 2, 25): in-process ciphers take microseconds, a KMS hundreds of ms.
BUCKETS = tuple(5e-6 * 2**i for i in range(25))
OPERATIONS_HELP = (
    "Total number of transformations. "
    "Successful transformation will have a status 'OK' and a varied status string when the transformation "
    "fails. The status, resource, and transformation_type fields can be used for alerting purposes. For "
    "example, you can monitor for encryption/decryption failures using the transformation_type (e.g., "
    "from_storage for decryption and to_storage for encryption). Additionally, these fields can be used to "
    "ensure that the correct transformers are applied to each resource."
)
DURATION_HELP = "Latencies in seconds of value transformation operations."
NON_GRPC = "unknown-non-grpc"  # a failure before any KMS call: not a gRPC status


class TransformationMetrics:
    """Counts every transformation by (resource, type, prefix, status) and times the successful ones by
    (type, prefix)."""

    def __init__(self) -> None:
        self.operations = metrics.Counter("apiserver_storage_transformation_operations_total", OPERATIONS_HELP,
                                          ("resource", "status", "transformation_type", "transformer_prefix"))
        self.durations = metrics.Histogram("apiserver_storage_transformation_duration_seconds", DURATION_HELP,
                                           ("transformation_type", "transformer_prefix"), BUCKETS)
        self.exposition = metrics.collector(self.operations, self.durations)

    def record(self, resource: str, kind: str, prefix: str, seconds: float, err: Any = None) -> None:
        status = "OK" if err is None else (getattr(err, "code", "") or NON_GRPC)
        self.operations.inc(resource, status, kind, prefix)
        if err is None:
            self.durations.observe(kind, prefix, value=seconds)


RELOADS_HELP = (
    "# HELP apiserver_encryption_config_controller_automatic_reloads_total [ALPHA] Total number of reload "
    "successes and failures of encryption configuration split by apiserver identity."
)
RELOAD_TIMESTAMP_HELP = (
    "# HELP apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds [ALPHA] Timestamp of "
    "the last successful or failed automatic reload of encryption configuration split by apiserver identity."
)
CONFIG_INFO_HELP = (
    "# HELP apiserver_encryption_config_controller_last_config_info [ALPHA] Information about the last applied "
    "encryption configuration with hash as label, split by apiserver identity."
)


class ConfigMetrics:
    """The encryption configuration's metrics (encryptionconfig/metrics): the configuration in force (its
    content hash) and the automatic reloads, labelled with the hash of the apiserver's ID."""

    def __init__(self, apiserver_id: str):
        self.id_hash = "sha256:" + hashlib.sha256(apiserver_id.encode()).hexdigest() if apiserver_id else ""
        self.config_hash = ""
        self.reloads: dict[str, int] = {}
        self.last_reload: dict[str, float] = {}

    def config_loaded(self, content_hash: str) -> None:
        self.config_hash = content_hash

    def reloaded(self, ok: bool, content_hash: str = "") -> None:
        status = "success" if ok else "failure"
        self.reloads[status] = self.reloads.get(status, 0) + 1
        self.last_reload[status] = time.time()
        if ok:
            self.config_hash = content_hash

    def exposition(self) -> list[str]:
        out = []
        if self.config_hash:
            out += [
                CONFIG_INFO_HELP,
                "# TYPE apiserver_encryption_config_controller_last_config_info gauge",
                "apiserver_encryption_config_controller_last_config_info"
                f'{{apiserver_id_hash="{self.id_hash}",hash="{self.config_hash}"}} 1',
            ]
        if self.reloads:
            out += [
                RELOADS_HELP,
                "# TYPE apiserver_encryption_config_controller_automatic_reloads_total counter",
            ]
            out += [
                f'apiserver_encryption_config_controller_automatic_reloads_total{{apiserver_id_hash="{self.id_hash}",'
                f'status="{status}"}} {count}'
                for status, count in sorted(self.reloads.items())
            ]
            out += [
                RELOAD_TIMESTAMP_HELP,
                "# TYPE apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds gauge",
            ]
            out += [
                "apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds"
                f'{{apiserver_id_hash="{self.id_hash}",status="{status}"}} {stamp}'
                for status, stamp in sorted(self.last_reload.items())
            ]
        return out
