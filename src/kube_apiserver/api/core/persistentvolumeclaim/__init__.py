"""persistentvolumeclaims and persistentvolumeclaims/status (pkg/registry/core/persistentvolumeclaim)."""

from __future__ import annotations

from typing import Any

from ....registry.store import Store
from ....storage.factory import StorageFactory
from .strategy import INFO, PersistentVolumeClaimStrategy, status_rest
from .table import TABLE


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, PersistentVolumeClaimStrategy(INFO), storage, "/registry/persistentvolumeclaims", TABLE)
    return {"persistentvolumeclaims": store, "persistentvolumeclaims/status": status_rest(store)}
