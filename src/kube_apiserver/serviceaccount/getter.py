"""Reading the objects tokens name straight from storage (pkg/controller/serviceaccount/tokengetter.go's
getter from storage): service accounts, and the pods, secrets and nodes tokens are bound to."""

from __future__ import annotations

from typing import Any

from ..storage import interface as storage
from .claims import ObjectGetter

# resource -> its storage key prefix (nodes are stored as minions, as Kubernetes does)
KEY_PREFIXES = {"serviceaccounts": "/registry/serviceaccounts", "pods": "/registry/pods",
                "secrets": "/registry/secrets", "nodes": "/registry/minions"}


def storage_getter(store: storage.Interface) -> ObjectGetter:
    async def get(resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        if not name:
            return None
        prefix = KEY_PREFIXES[resource]
        key = f"{prefix}/{namespace}/{name}" if namespace else f"{prefix}/{name}"
        try:
            return await store.get(key)
        except storage.KeyNotFoundError:
            return None
    return get
