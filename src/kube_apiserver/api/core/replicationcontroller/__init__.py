"""replicationcontrollers with their status and scale subresources (pkg/registry/core/replicationcontroller).
No controller runs them here: status is whatever a client writes through /status."""

from __future__ import annotations

from typing import Any

from ....registry.store import Store
from ....storage.factory import StorageFactory
from .scale import ScaleREST
from .strategy import INFO, ReplicationControllerStrategy, status_rest
from .table import TABLE


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, ReplicationControllerStrategy(INFO), storage, "/registry/controllers", TABLE)
    return {"replicationcontrollers": store, "replicationcontrollers/status": status_rest(store),
            "replicationcontrollers/scale": ScaleREST(store)}
