"""nodes and their subresources (pkg/registry/core/node): status, and proxy, which a server without
kubelets answers with a clear error."""

from __future__ import annotations

from typing import Any

from ....registry.store import Store
from ....storage.factory import StorageFactory
from ..kubelet import NODES_KEY
from .proxy import NodeProxyREST
from .strategy import INFO, NodeStrategy, status_rest
from .table import TABLE


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, NodeStrategy(INFO), storage, NODES_KEY, TABLE)
    return {"nodes": store, "nodes/status": status_rest(store), "nodes/proxy": NodeProxyREST(store)}
