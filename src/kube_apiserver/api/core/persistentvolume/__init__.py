"""persistentvolumes and persistentvolumes/status (pkg/registry/core/persistentvolume)."""

from __future__ import annotations

from typing import Any

from ....registry.store import Store
from ....storage.factory import StorageFactory
from .strategy import INFO, PersistentVolumeStrategy, status_rest
from .table import TABLE


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, PersistentVolumeStrategy(INFO), storage, "/registry/persistentvolumes", TABLE)
    return {"persistentvolumes": store, "persistentvolumes/status": status_rest(store)}
