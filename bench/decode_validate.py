#!/usr/bin/env python3
"""The decode and metadata-validation stages of a write, alone: the typed decoding and strict field checks of
k8sbench's bodies (decode_object: a ConfigMap create, the same ConfigMap as an update sends it back with its
managedFields, a Pod create), and ObjectMeta's validation on create and update (validate_object_meta,
validate_object_meta_update) and a Pod's (validate_pod). Prints µs per call (median of the rounds).

Runs the tree it is in, or another one: PYTHONPATH=/tmp/before/src python3 bench/decode_validate.py

    python3 bench/decode_validate.py [-n 3000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from kube_apiserver.api import schemas
from kube_apiserver.api.core.pod.validation import validate_pod
from kube_apiserver.api.core.podspec import PodValidationOptions
from kube_apiserver.api.core.podspec.defaults import default_pod
from kube_apiserver.apimachinery import validation
from kube_apiserver.apimachinery.openapischema import SchemaSource
from kube_apiserver.endpoints.handlers import decode
from kube_apiserver.endpoints.handlers.decode import _decoded
from kube_apiserver.endpoints.handlers.scope import RequestScope
from kube_apiserver.endpoints.http import Request
from kube_apiserver.registry.rest import ResourceInfo

SOURCE = SchemaSource(schemas.definitions, schemas.schema_name)
MANAGED = [
    {
        "manager": "k8sbench",
        "operation": "Update",
        "apiVersion": "v1",
        "time": "2024-01-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:data": {".": {}, **{f"f:k{j}": {} for j in range(4)}},
            "f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:shard": {}}},
        },
    }
]


def _scope(resource: str, kind: str) -> RequestScope:
    info = ResourceInfo(
        group="", version="v1", resource=resource, kind=kind, namespaced=True, singular=kind.lower()
    )
    return RequestScope(info, storage=None, schema=SOURCE.for_kind("", "v1", kind))


def _configmap(update: bool) -> dict[str, Any]:
    rnd = random.Random(1)
    meta: dict[str, Any] = {"name": "cm-1", "labels": {"app": "k8sbench", "shard": "1"}}
    if update:
        meta.update(
            namespace="bench",
            uid="0b6c6a0e-1f1e-4f5e-9a53-2f0a3c2f6b1a",
            resourceVersion="12",
            creationTimestamp="2024-01-01T00:00:00Z",
            managedFields=MANAGED,
        )
    data = {f"k{j}": base64.b64encode(rnd.randbytes(189)).decode() for j in range(4)}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p-1", "labels": {"app": "k8sbench"}},
    "spec": {
        "automountServiceAccountToken": False,
        "containers": [{"name": "main", "image": "busybox:1.36"}],
    },
}


def _decoding(resource: str, kind: str, obj: dict[str, Any]) -> Callable[[], Any]:
    scope, body = _scope(resource, kind), json.dumps(obj).encode()
    path = f"/api/v1/namespaces/bench/{resource}"

    def run() -> Any:
        req = Request("POST", path, b"", {"content-type": "application/json"}, body=body)
        return _decoded(req, scope, body, kind)  # decode_object's work once the body is read, without a loop

    return run


def _cases() -> dict[str, Callable[[], Any]]:
    created = _configmap(True)
    pod = copy.deepcopy(POD)
    pod["metadata"].update(
        namespace="bench", uid="u-1", creationTimestamp="2024-01-01T00:00:00Z", managedFields=MANAGED
    )
    default_pod(pod)
    opts = PodValidationOptions(resource_is_pod=True)
    return {
        "decode ConfigMap create": _decoding("configmaps", "ConfigMap", _configmap(False)),
        "decode ConfigMap update": _decoding("configmaps", "ConfigMap", created),
        "decode Pod create": _decoding("pods", "Pod", POD),
        "validate_object_meta": lambda: validation.validate_object_meta(
            created["metadata"], True, validation.name_is_dns_subdomain
        ),
        "validate_object_meta_update": lambda: validation.validate_object_meta_update(
            created["metadata"], created["metadata"]
        ),
        "validate_pod": lambda: validate_pod(pod, opts, True),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", "--count", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"tree: {decode.__file__.rsplit('/kube_apiserver/', 1)[0]}")
    cases = _cases()
    for run in cases.values():
        run()  # schemas loaded, plans derived
    figures: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, run in cases.items():
            start = time.thread_time()
            for _ in range(args.count):
                run()
            figures[name].append((time.thread_time() - start) / args.count * 1e6)
    for name, values in figures.items():
        print(f"{name:30s} {statistics.median(values):8.1f} µs")


if __name__ == "__main__":
    main()
