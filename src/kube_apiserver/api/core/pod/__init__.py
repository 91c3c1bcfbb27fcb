"""pods and their subresources (pkg/registry/core/pod): status, binding, eviction, ephemeralcontainers,
resize, and the kubelet-backed ones (log, exec, attach, portforward, proxy), plus the legacy
`bindings` resource."""

from __future__ import annotations

from typing import Any

from ....registry.store import Store
from ....registry.strategy import Strategy
from ....storage.factory import StorageFactory
from ..kubelet import NODES, NODES_KEY
from .binding import BindingREST
from .connect import ConnectREST, LogREST
from .eviction import EvictionREST
from .strategy import INFO, PodStrategy
from .subresources import ephemeral_containers_rest, resize_rest, status_rest
from .table import TABLE


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, PodStrategy(INFO), storage, "/registry/pods", TABLE, return_deleted_object=True)
    nodes = Store(NODES, Strategy(NODES), storage, NODES_KEY)  # where the kubelets are (read only)
    status = status_rest(store)
    routes: dict[str, Any] = {
        "pods": store,
        "pods/status": status,
        "pods/binding": BindingREST(store, "binding"),
        "pods/eviction": EvictionREST(store, storage, status),
        "pods/ephemeralcontainers": ephemeral_containers_rest(store),
        "pods/resize": resize_rest(store),
        "pods/log": LogREST(store, nodes),
        "bindings": BindingREST(store, ""),
    }
    for subresource, kind in (("exec", "PodExecOptions"), ("attach", "PodAttachOptions"),
                              ("portforward", "PodPortForwardOptions"), ("proxy", "PodProxyOptions")):
        routes[f"pods/{subresource}"] = ConnectREST(store, nodes, subresource, kind)
    return routes
